/* MatMul + Add -> Gemm: a 2-D MatMul whose only reader adds a tensor that
 * broadcasts to the product's shape [M, N] one way (a bias [N], [1, N],
 * [M, 1], a scalar, or [M, N]) is one Gemm, Y = A B + C, with the addition
 * done as the product is written (ONNX Runtime's MatMulAddFusion). The
 * Gemm takes the Add's name. */
#include "passes/pass.h"

#include <string.h>

/* True when c broadcasts to out one way (numpy rules, c's dims 1 or equal). */
static bool broadcasts_to(const tgc_shape *c, const tgc_shape *out) {
    if (c->rank == TGC_RANK_UNKNOWN || c->rank > out->rank) return false;
    for (int d = 0; d < c->rank; d++) {
        tgc_dim cd = c->dims[c->rank - 1 - d], od = out->dims[out->rank - 1 - d];
        if (!tgc_dim_is(cd, 1) && !tgc_dim_eq(cd, od)) return false;
    }
    return true;
}

tgc_status tgc_pass_matmul_add_to_gemm(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    tgc_status s = TGC_OK;
    for (int32_t i = 0; s == TGC_OK && i < nn; i++) {
        int32_t add = rw->g->topo[i];
        const tgc_node *a = &rw->g->nodes[add];
        if (!tgc_pass_is_op(rw, add, "Add") || a->n_inputs != 2 || a->outputs[0].dtype != TGC_FLOAT32) continue;
        for (int side = 0; side < 2; side++) {
            tgc_ref mm = a->inputs[side], c = a->inputs[1 - side];
            if (mm.node < 0 || mm.port != 0 || c.node < 0 || tgc_rewrite_uses(rw, mm) != 1) continue;
            const tgc_node *m = &rw->g->nodes[mm.node];
            if (!tgc_pass_is_op(rw, mm.node, "MatMul") || m->n_inputs != 2) continue;
            const tgc_tensor_info *ai = tgc_graph_ref_info(rw->g, m->inputs[0]);
            const tgc_tensor_info *bi = tgc_graph_ref_info(rw->g, m->inputs[1]);
            const tgc_tensor_info *ci = tgc_graph_ref_info(rw->g, c);
            const tgc_tensor_info *yi = &m->outputs[0];
            if (ai->shape.rank != 2 || bi->shape.rank != 2 || ai->dtype != TGC_FLOAT32 || ci->dtype != TGC_FLOAT32 ||
                !tgc_shape_eq(&yi->shape, &a->outputs[0].shape) || !broadcasts_to(&ci->shape, &yi->shape))
                continue;
            tgc_ref ins[3] = {m->inputs[0], m->inputs[1], c};
            int32_t gemm, matmul = mm.node;
            s = tgc_rewrite_add_op(rw, "Gemm", add, ins, 3, 1, &gemm);
            if (s != TGC_OK) break;
            tgc_rewrite_replace_uses(rw, (tgc_ref){add, 0, {0, 0}}, (tgc_ref){gemm, 0, {0, 0}});
            tgc_rewrite_remove(rw, add);
            tgc_rewrite_remove(rw, matmul);
            rw->edits++;
            break;
        }
    }
    return s;
}
