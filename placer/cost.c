/* The cost model (cost.h). This version estimates only: a roofline over
 * each node's FLOPs and bytes against nominal peaks per kind of memory
 * (host memory: a cpu core's; other: a discrete gpu's), scaled by the
 * device's pool width. The figures are stated as estimates. */
#include "placer/cost.h"

#include "devices/backend.h"
#include "support/alloc.h"

#include <stdlib.h>
#include <string.h>

/* Nominal peaks: one AVX2/AVX-512 core (FMA, float32), its share of DRAM
 * bandwidth, and the overhead a node costs the executor; a gpu through
 * OpenCL (a mid-range discrete card) and its launch latency. */
#define CPU_CORE_FLOPS 40e9
#define CPU_CORE_BYTES 10e9
#define CPU_NODE_SECONDS 1e-6
#define GPU_FLOPS 5e12
#define GPU_BYTES 300e9
#define GPU_NODE_SECONDS 10e-6
/* Copies: host memory to host memory (a memcpy), host <-> gpu (PCIe),
 * across processes (a loopback or cluster link). */
#define HOST_COPY_BYTES 8e9
#define HOST_COPY_SECONDS 2e-6
#define GPU_COPY_BYTES 12e9
#define GPU_COPY_SECONDS 20e-6
#define TASK_COPY_BYTES 1e9
#define TASK_COPY_SECONDS 50e-6

struct tgc_cost_model {
    tgc_placer_device devices[TGC_PLACER_MAX_DEVICES];
    int width[TGC_PLACER_MAX_DEVICES];
    int n;
};

/* Device d's pool width from a "cpu0=1,gpu0=2" spec, else its kind's default. */
static int width_of(const tgc_placer_device d, const char *spec) {
    char name[32];
    tgc_device_id_name(d, name, sizeof name);
    size_t len = strlen(name);
    for (const char *p = spec; p != NULL && *p != '\0';) {
        const char *eq = strchr(p, '='), *comma = strchr(p, ',');
        if (eq == NULL) break;
        if ((size_t)(eq - p) == len && strncmp(p, name, len) == 0) {
            int w = (int)strtol(eq + 1, NULL, 10);
            if (w > 0) return w;
        }
        p = comma != NULL ? comma + 1 : NULL;
    }
    const tgc_backend *b = tgc_backend_get(d.kind);
    int w = b != NULL && b->default_threads != NULL ? b->default_threads() : 1;
    return w > 0 ? w : 1;
}

tgc_status tgc_cost_model_create(const tgc_placer_device *devices, int n, const tgc_cost_options *opts,
                                 tgc_diags *diags, tgc_cost_model **out) {
    (void)diags;
    *out = NULL;
    if (n < 1 || n > TGC_PLACER_MAX_DEVICES) return TGC_ERR_INVALID;
    tgc_cost_model *m = tgc_calloc(1, sizeof *m);
    if (m == NULL) return TGC_ERR_NOMEM;
    memcpy(m->devices, devices, (size_t)n * sizeof *devices);
    m->n = n;
    for (int i = 0; i < n; i++) m->width[i] = width_of(devices[i], opts != NULL ? opts->threads : NULL);
    *out = m;
    return TGC_OK;
}

void tgc_cost_model_free(tgc_cost_model *m) { tgc_free(m); }

/* Elements of a value, symbolic dims as 1; 0 when its rank is unknown. */
static double numel(const tgc_tensor_info *t) {
    if (t->shape.rank == TGC_RANK_UNKNOWN) return 0;
    double n = 1;
    for (int i = 0; i < t->shape.rank; i++) n *= tgc_dim_known(t->shape.dims[i]) ? (double)t->shape.dims[i].v : 1.0;
    return n;
}

void tgc_cost_node_work(const tgc_graph *g, int32_t id, double *flops, double *bytes) {
    const tgc_node *n = &g->nodes[id];
    *flops = 0;
    *bytes = 0;
    if (n->kind != TGC_NODE_OP) return;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0) {
            const tgc_tensor_info *t = tgc_graph_ref_info(g, n->inputs[i]);
            *bytes += numel(t) * (double)tgc_dtype_size(t->dtype);
        }
    double out_elems = 0;
    for (int k = 0; k < n->n_outputs; k++) {
        out_elems += numel(&n->outputs[k]);
        *bytes += numel(&n->outputs[k]) * (double)tgc_dtype_size(n->outputs[k].dtype);
    }
    const char *op = n->op_name;
    if ((strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0) && n->n_inputs >= 2) {
        /* W is [M, C/group, k...] (Conv) or [C, M/group, k...] (ConvTranspose): one of W's first-axis slices
         * of multiply-adds for each output element (Conv) or each input element (ConvTranspose) */
        const tgc_tensor_info *w = tgc_graph_ref_info(g, n->inputs[1]);
        double lead = w->shape.rank > 0 && tgc_dim_known(w->shape.dims[0]) ? (double)w->shape.dims[0].v : 1;
        double slice = numel(w) / (lead > 0 ? lead : 1);
        double elems = strcmp(op, "Conv") == 0 ? out_elems : numel(tgc_graph_ref_info(g, n->inputs[0]));
        *flops = 2.0 * elems * slice;
    } else if ((strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0 || strcmp(op, "MatMulInteger") == 0) &&
               n->n_inputs >= 2) {
        /* each output element: K multiply-adds, K the last dim of A (Gemm's transA aside: either way one of A's dims) */
        const tgc_tensor_info *a = tgc_graph_ref_info(g, n->inputs[0]);
        double k = 1;
        if (a->shape.rank >= 1) {
            const tgc_attr *ta = strcmp(op, "Gemm") == 0 ? tgc_node_attr(n, "transA") : NULL;
            int axis = ta != NULL && ta->i != 0 && a->shape.rank >= 2 ? a->shape.rank - 2 : a->shape.rank - 1;
            k = tgc_dim_known(a->shape.dims[axis]) ? (double)a->shape.dims[axis].v : 1;
        }
        *flops = 2.0 * out_elems * k;
    } else {
        *flops = out_elems; /* elementwise, data movement, reductions: about an operation an element */
    }
}

double tgc_cost_node(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, bool *measured) {
    if (measured != NULL) *measured = false;
    if (g->nodes[id].kind != TGC_NODE_OP || d < 0 || d >= m->n) return 0;
    double flops, bytes;
    tgc_cost_node_work(g, id, &flops, &bytes);
    bool host = tgc_kind_host_memory(m->devices[d].kind);
    double w = host ? (double)m->width[d] : 1.0;
    double peak_flops = host ? CPU_CORE_FLOPS * w : GPU_FLOPS, peak_bytes = host ? CPU_CORE_BYTES * w : GPU_BYTES;
    double t = flops / peak_flops, tb = bytes / peak_bytes;
    return (t > tb ? t : tb) + (host ? CPU_NODE_SECONDS : GPU_NODE_SECONDS);
}

double tgc_cost_transfer(const tgc_cost_model *m, int from, int to, int64_t bytes) {
    if (from == to || from < 0 || to < 0 || from >= m->n || to >= m->n) return 0;
    const tgc_placer_device a = m->devices[from], b = m->devices[to];
    if (a.task != b.task) return TASK_COPY_SECONDS + (double)bytes / TASK_COPY_BYTES;
    if (tgc_kind_host_memory(a.kind) && tgc_kind_host_memory(b.kind))
        return HOST_COPY_SECONDS + (double)bytes / HOST_COPY_BYTES;
    return GPU_COPY_SECONDS + (double)bytes / GPU_COPY_BYTES;
}
