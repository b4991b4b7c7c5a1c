/* The optimization driver: runs the passes of a level in order, rebuilding
 * the graph after each, and reports what each did. The order follows ONNX
 * Runtime's levels: basic rewrites that hold on any device first
 * (constants, common subexpressions, dead nodes), then the fusions, then a
 * last sweep for what the fusions left unread. */
#include "passes/pass.h"

#include "support/alloc.h"

#include <inttypes.h>
#include <time.h>

typedef struct pass_entry {
    const char *name;
    tgc_pass_fn run;
    tgc_optimize_level level; /* the lowest level that runs it */
} pass_entry;

static const pass_entry passes[] = {
    {"fold-constants", tgc_pass_fold_constants, TGC_OPTIMIZE_BASIC},
    {"eliminate-common", tgc_pass_eliminate_common, TGC_OPTIMIZE_BASIC},
    {"fold-batch-norm", tgc_pass_fold_batch_norm, TGC_OPTIMIZE_ALL},
    {"matmul-add-to-gemm", tgc_pass_matmul_add_to_gemm, TGC_OPTIMIZE_ALL},
    {"eliminate-dead", tgc_pass_eliminate_dead, TGC_OPTIMIZE_BASIC},
};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Op nodes and initializers: what a pass can remove. */
static int32_t count_nodes(const tgc_graph *g) { return g->n_nodes - g->n_inputs_nodes; }

tgc_status tgc_graph_optimize(const tgc_graph *g, tgc_optimize_level level, tgc_optimize_report *report,
                              tgc_diags *diags, tgc_graph **out) {
    *out = NULL;
    if (report != NULL) report->n_passes = 0;
    if (level == TGC_OPTIMIZE_DEFAULT) level = TGC_OPTIMIZE_ALL;
    tgc_graph *cur = tgc_graph_copy(g);
    if (cur == NULL) return TGC_ERR_NOMEM;
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
        if (level < passes[i].level) continue;
        double t0 = now_ms();
        int32_t before = count_nodes(cur);
        tgc_rewrite rw;
        tgc_status s = tgc_rewrite_begin(&rw, cur);
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
