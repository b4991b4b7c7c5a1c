/* _ConvNHWC + Add -> _ConvNHWC with Z: a channels-last convolution whose
 * only reader adds a tensor of its own shape and dtype (a residual block's
 * skip) takes that tensor as its fourth input, Z, and adds it as each
 * piece of its output is written, before the fused activation (the cpu:
 * oneDNN's sum post-op): the Relu after a residual Add then fuses into the
 * convolution too (ONNX Runtime's ConvAddActivationFusion, whose
 * FusedConv takes the skip as its Z). The sums are Conv's then Add's, each
 * rounded as before: the same bits. The fused node takes the Add's name.
 * The executor may give Y Z's buffer (the kernel's forward_input), so Z
 * must not be one of the convolution's own inputs (y = Conv(x) + x stays
 * as it is). */
#include "passes/pass.h"

/* The _ConvNHWC feeding side `side` of Add node add, when the pass can take
 * the Add into it (the Add its only reader, no Z yet, the other side of
 * its shape and dtype); else -1. */
static int32_t fusable_conv(const tgc_rewrite *rw, int32_t add, int side) {
    const tgc_node *a = &rw->g->nodes[add];
    tgc_ref y = a->inputs[side], z = a->inputs[1 - side];
    if (y.node < 0 || y.port != 0 || z.node < 0 || z.node == y.node || !tgc_pass_is_op(rw, y.node, "_ConvNHWC") ||
        rw->g->nodes[y.node].n_inputs > 3 || tgc_rewrite_uses(rw, y) != 1 || tgc_rewrite_is_output(rw, y))
        return -1;
    const tgc_node *c = &rw->g->nodes[y.node];
    for (int i = 0; i < c->n_inputs; i++) /* Y may take Z's buffer: none the convolution reads */
        if (c->inputs[i].node == z.node && c->inputs[i].port == z.port) return -1;
    const tgc_tensor_info *yi = tgc_graph_ref_info(rw->g, y), *zi = tgc_graph_ref_info(rw->g, z);
    if (yi == NULL || zi == NULL || yi->dtype != TGC_FLOAT32 || zi->dtype != TGC_FLOAT32 ||
        !tgc_shape_known(&yi->shape) || !tgc_shape_eq(&yi->shape, &zi->shape) ||
        !tgc_shape_eq(&yi->shape, &a->outputs[0].shape))
        return -1;
    return y.node;
}

tgc_status tgc_pass_fuse_conv_add(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    tgc_status s = TGC_OK;
    for (int32_t add = 0; s == TGC_OK && add < nn; add++) {
        if (rw->removed[add] || !tgc_pass_is_op(rw, add, "Add") || rw->g->nodes[add].n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            int32_t conv = fusable_conv(rw, add, side), fused;
            if (conv < 0) continue;
            const tgc_node *c = &rw->g->nodes[conv];
            tgc_ref ins[4] = {c->inputs[0], c->inputs[1], {-1, 0, {0, 0}}, rw->g->nodes[add].inputs[1 - side]};
            if (c->n_inputs > 2) ins[2] = c->inputs[2];
            if ((s = tgc_rewrite_add_op(rw, "_ConvNHWC", add, ins, 4, 1, &fused)) != TGC_OK ||
                (s = tgc_rewrite_copy_attrs(rw, conv, fused)) != TGC_OK)
                break;
            tgc_rewrite_replace_uses(rw, (tgc_ref){add, 0, {0, 0}}, (tgc_ref){fused, 0, {0, 0}});
            tgc_rewrite_remove(rw, add);
            tgc_rewrite_remove(rw, conv);
            rw->edits++;
            break;
        }
    }
    return s;
}
