/* A node's work from its shapes (graph/node_work.h). */
#include "graph/node_work.h"

#include <string.h>

static double numel(const tgc_tensor_info *t) { return tgc_shape_numel_estimate(&t->shape); }

void tgc_node_work(const tgc_graph *g, int32_t id, double *flops, double *bytes) {
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
    bool conv = strcmp(op, "Conv") == 0 || strcmp(op, "_ConvAdd") == 0;
    if ((conv || strcmp(op, "ConvTranspose") == 0) && n->n_inputs >= 2) {
        /* W is [M, C/group, k...] (Conv) or [C, M/group, k...] (ConvTranspose): one of W's first-axis slices
         * of multiply-adds for each output element (Conv) or each input element (ConvTranspose) */
        const tgc_tensor_info *w = tgc_graph_ref_info(g, n->inputs[1]);
        double lead = w->shape.rank > 0 && tgc_dim_known(w->shape.dims[0]) ? (double)w->shape.dims[0].v : 1;
        double slice = numel(w) / (lead > 0 ? lead : 1);
        double elems = conv ? out_elems : numel(tgc_graph_ref_info(g, n->inputs[0]));
        *flops = 2.0 * elems * slice;
    } else if ((strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0 || strcmp(op, "MatMulInteger") == 0) &&
               n->n_inputs >= 2) {
        /* each output element: K multiply-adds, K the last dim of A (Gemm's transA aside: either way one of
         * A's dims) */
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

