/* The optimization driver: runs the passes of a level in order, rebuilding
 * the graph after each, and reports what each did. The order follows ONNX
 * Runtime's levels: basic rewrites that hold on any device first
 * (constants, common subexpressions, dead nodes), then the fusions, then a
 * last sweep for what the fusions left unread. */
#include "passes/pass.h"

#include "support/alloc.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

typedef struct pass_entry {
    const char *name;
    tgc_pass_fn run;
    tgc_optimize_level level; /* the lowest level that runs it */
    /* NULL, or false when the pass has nothing to do in g: it is then
     * reported with no rewrites and the graph is not rebuilt (at
     * TGC_OPTIMIZE_NONE the result stays node for node the graph given). */
    bool (*applies)(const tgc_graph *g);
    bool on_request; /* runs only when tgc_optimize_options.float16 asks for it */
} pass_entry;

static const pass_entry passes[] = {
    /* before compute-in-float32, which then sees only the float16 nodes a gpu has kernels for */
    {"compute-in-float16", tgc_pass_compute_in_float16, TGC_OPTIMIZE_NONE, NULL, true},
    /* first: fold-constants folds its Casts of weights */
    {"compute-in-float32", tgc_pass_compute_in_float32, TGC_OPTIMIZE_NONE, tgc_pass_has_narrow_nodes, false},
    /* before fold-constants, which would fold the weights' DequantizeLinear */
    {"fuse-qdq", tgc_pass_fuse_qdq, TGC_OPTIMIZE_ALL, tgc_pass_has_quantize, false},
    {"fold-constants", tgc_pass_fold_constants, TGC_OPTIMIZE_BASIC, NULL, false},
    {"eliminate-common", tgc_pass_eliminate_common, TGC_OPTIMIZE_BASIC, NULL, false},
    {"matmul-add-to-gemm", tgc_pass_matmul_add_to_gemm, TGC_OPTIMIZE_ALL, NULL, false},
    /* after: a Gemm it made may take a BN */
    {"fold-batch-norm", tgc_pass_fold_batch_norm, TGC_OPTIMIZE_ALL, NULL, false},
    {"fuse-pad", tgc_pass_fuse_pad, TGC_OPTIMIZE_ALL, NULL, false},
    /* after: the folded weights, fused pads */
    {"trim-conv-taps", tgc_pass_trim_conv_taps, TGC_OPTIMIZE_ALL, NULL, false},
    {"fuse-gelu", tgc_pass_fuse_gelu, TGC_OPTIMIZE_ALL, NULL, false},
    {"fuse-swish", tgc_pass_fuse_swish, TGC_OPTIMIZE_ALL, NULL, false},
    {"fuse-layer-norm", tgc_pass_fuse_layer_norm, TGC_OPTIMIZE_ALL, NULL, false},
    /* before fuse-elementwise takes its scales */
    {"fuse-attention", tgc_pass_fuse_attention, TGC_OPTIMIZE_ALL, NULL, false},
    /* before fuse-elementwise, whose groups the Transposes would not move through */
    {"nhwc-conv", tgc_pass_nhwc_conv, TGC_OPTIMIZE_ALL, tgc_pass_has_conv, false},
    /* the Transposes back to NCHW that nhwc-conv left for the nodes it
     * moved (dead once all their readers moved) read the moved values:
     * gone, so fuse-elementwise sees the values' only readers */
    {"eliminate-dead", tgc_pass_eliminate_dead, TGC_OPTIMIZE_ALL, NULL, false},
    /* before fuse-elementwise would take the Add into a group */
    {"fuse-conv-add", tgc_pass_fuse_conv_add, TGC_OPTIMIZE_ALL, NULL, false},
    /* last: after the patterns it would split */
    {"fuse-elementwise", tgc_pass_fuse_elementwise, TGC_OPTIMIZE_ALL, NULL, false},
    {"eliminate-dead", tgc_pass_eliminate_dead, TGC_OPTIMIZE_BASIC, NULL, false},
};

_Static_assert(sizeof passes / sizeof *passes <= TGC_MAX_PASSES, "tgc_optimize_report has a row for every pass");

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Op nodes and initializers: what a pass can remove. */
static int32_t count_nodes(const tgc_graph *g) { return g->n_nodes - g->n_inputs_nodes; }

/* pass.h */
tgc_status tgc_pass_name_made_weights(tgc_graph *g) {
    for (int32_t id = 0; id < g->n_nodes; id++) {
        tgc_node *n = &g->nodes[id];
        if (n->kind != TGC_NODE_CONST || n->data->file != NULL || n->data->borrowed ||
            tgc_shape_numel(&n->data->shape) <= 16)
            continue;
        char path[300];
        int len = snprintf(path, sizeof path, "optimized/%.200s", n->name);
        for (int i = 10; i < len && i < (int)sizeof path; i++) {
            char c = path[i];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
            if (!ok) path[i] = '_';
        }
        bool clash = false;
        for (int32_t other = 0; other < id && !clash; other++) {
            const tgc_const *c = g->nodes[other].kind == TGC_NODE_CONST ? g->nodes[other].data : NULL;
            clash = c != NULL && c->unsaved && strncmp(c->file, path, strlen(path)) == 0 &&
                    strcmp(c->file + strlen(path), ".npy") == 0;
        }
        if (clash) snprintf(path + strlen(path), sizeof path - strlen(path), "_%" PRId32, id);
        strncat(path, ".npy", sizeof path - strlen(path) - 1);
        if ((n->data->file = tgc_strdup(path)) == NULL) return TGC_ERR_NOMEM;
        n->data->unsaved = true;
    }
    return TGC_OK;
}

tgc_status tgc_graph_optimize(const tgc_graph *g, tgc_optimize_level level, const char *devices,
                              tgc_optimize_report *report, tgc_diags *diags, tgc_graph **out) {
    tgc_optimize_options o = {.level = level, .devices = devices};
    return tgc_graph_optimize_with(g, &o, report, diags, out);
}

tgc_status tgc_graph_optimize_with(const tgc_graph *g, const tgc_optimize_options *o, tgc_optimize_report *report,
                                   tgc_diags *diags, tgc_graph **out) {
    tgc_optimize_level level = o->level;
    const char *devices = o->devices;
    *out = NULL;
    if (report != NULL) report->n_passes = 0;
    if (level == TGC_OPTIMIZE_DEFAULT) level = TGC_OPTIMIZE_ALL;
    if (tgc_graph_check_whole(g, diags) != TGC_OK) return TGC_ERR_INVALID;
    tgc_graph *cur = tgc_graph_copy(g);
    if (cur == NULL) return TGC_ERR_NOMEM;
    uint32_t kinds = tgc_pass_device_kinds(devices);
    bool fuse_groups = tgc_pass_fusion_devices(devices, TGC_FLOAT32);
    bool fuse_groups_half = tgc_pass_fusion_devices(devices, TGC_FLOAT16);
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
        if (level < passes[i].level || (passes[i].on_request && !o->float16)) continue;
        double t0 = now_ms();
        int32_t before = count_nodes(cur);
        if (passes[i].applies != NULL && !passes[i].applies(cur)) {
            if (report != NULL && report->n_passes < TGC_MAX_PASSES)
                report->passes[report->n_passes++] =
                    (tgc_pass_summary){passes[i].name, before, before, 0, now_ms() - t0};
            continue;
        }
        tgc_rewrite rw;
        tgc_status s = tgc_rewrite_begin(&rw, cur);
        rw.kinds = kinds;
        rw.fuse_groups = fuse_groups;
        rw.fuse_groups_half = fuse_groups_half;
        rw.float16 = o->float16 != 0;
        if (s == TGC_OK) s = passes[i].run(&rw);
        int32_t edits = rw.edits;
        if (s == TGC_OK) {
            s = tgc_rewrite_finish(&rw, diags, &cur);
        } else {
            tgc_rewrite_abandon(&rw);
            cur = NULL;
        }
        if (s != TGC_OK) return s;
        if (report != NULL && report->n_passes < TGC_MAX_PASSES)
            report->passes[report->n_passes++] =
                (tgc_pass_summary){passes[i].name, before, count_nodes(cur), edits, now_ms() - t0};
    }
    if (tgc_pass_name_made_weights(cur) != TGC_OK) {
        tgc_graph_free(cur);
        return TGC_ERR_NOMEM;
    }
    *out = cur;
    return TGC_OK;
}

void tgc_optimize_report_print(const tgc_optimize_report *r, FILE *out) {
    for (int i = 0; i < r->n_passes; i++) {
        const tgc_pass_summary *p = &r->passes[i];
        fprintf(out, "pass %-20s %6" PRId32 " -> %6" PRId32 " nodes, %5" PRId32 " rewrites, %8.2f ms\n", p->name,
                p->nodes_before, p->nodes_after, p->rewrites, p->ms);
    }
}
