/* SiLU (Swish with beta 1, x * Sigmoid(x): EfficientNet's, YOLO's and
 * many exported PyTorch models' activation) recognized from the two nodes
 * exporters write: a Mul whose operands are x and Sigmoid(x), in either
 * order, the Sigmoid read by nothing else and the Mul not broadcasting,
 * becomes one _Swish(x) (graph/elementwise.def) with the Mul's name. One
 * pass over the tensor instead of two, and a one-input activation, which
 * the kernel before it can apply as it writes (executor/fuse.c: a Conv's
 * rows while in cache), as ONNX Runtime's QuickGelu fusion does for the
 * same pattern. The row computes the Sigmoid and then the product, as the
 * two nodes do: float32 values are bitwise theirs (float16 rounds once,
 * at the product, where the two nodes rounded the Sigmoid too). */
#include "passes/pass.h"

static tgc_ref out0(int32_t id) { return (tgc_ref){id, 0, {0, 0}}; }

/* The x of Mul node `mul` when it computes x * Sigmoid(x) as above; node
 * -1 else. *sig is the Sigmoid. */
static tgc_ref swish_input(const tgc_rewrite *rw, int32_t mul, int32_t *sig) {
    tgc_ref none = {-1, 0, {0, 0}};
    const tgc_node *m = &rw->g->nodes[mul];
    if (m->n_inputs != 2 || m->n_controls > 0 || m->n_colocate > 0) return none;
    for (int side = 0; side < 2; side++) {
        tgc_ref s = m->inputs[side], x = m->inputs[1 - side];
        if (s.node < 0 || s.port != 0 || !tgc_pass_is_op(rw, s.node, "Sigmoid")) continue;
        const tgc_node *sn = &rw->g->nodes[s.node];
        if (sn->n_inputs != 1 || sn->n_controls > 0 || sn->n_colocate > 0 || sn->inputs[0].node != x.node ||
            sn->inputs[0].port != x.port || tgc_pass_only_reader(rw, s) != mul || !tgc_pass_same_device(sn, m))
            continue;
        const tgc_tensor_info *xi = tgc_graph_ref_info(rw->g, x);
        if (xi == NULL || !tgc_shape_eq(&xi->shape, &m->outputs[0].shape) || xi->dtype != m->outputs[0].dtype)
            continue; /* a broadcasting Mul is not the activation */
        *sig = s.node;
        return x;
    }
    return none;
}

tgc_status tgc_pass_fuse_swish(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    for (int32_t i = 0; i < nn; i++) {
        int32_t mul = rw->g->topo[i], sig;
        if (rw->removed[mul] || !tgc_pass_is_op(rw, mul, "Mul")) continue;
        tgc_ref x = swish_input(rw, mul, &sig);
        if (x.node < 0) continue;
        int32_t swish;
        tgc_status s = tgc_rewrite_add_op(rw, "_Swish", mul, &x, 1, 1, &swish);
        if (s != TGC_OK) return s;
        tgc_rewrite_replace_uses(rw, out0(mul), out0(swish));
        tgc_rewrite_remove(rw, sig);
        tgc_rewrite_remove(rw, mul);
        rw->edits++;
    }
    return TGC_OK;
}
