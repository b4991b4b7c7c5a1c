/* Conv + Add -> a convolution with Z: a convolution whose only reader adds
 * a tensor of its own shape and dtype (a residual block's skip) takes that
 * tensor as its fourth input, Z, and adds it as each piece of its output
 * is written, before the fused activation: the Relu after a residual Add
 * then fuses into the convolution too (ONNX Runtime's
 * ConvAddActivationFusion, whose FusedConv takes the skip as its Z;
 * TensorFlow grappler's remapper, _FusedConv2D with BiasAdd, Add, Relu).
 *   - _ConvNHWC + Add -> _ConvNHWC with Z (the cpu: oneDNN's sum
 *     post-op). The executor may give Y Z's buffer (the kernel's
 *     forward_input), so Z must not be one of the convolution's own
 *     inputs (y = Conv(x) + x stays as it is).
 *   - Conv + Add -> _ConvAdd (graph/ops_conv.c), where every listed
 *     device kind has a float32 _ConvAdd kernel (the cpu's adds Z in each
 *     of Conv's ways: devices/cpu/kernels_conv.c): ResNet's blocks, whose
 *     last convolution stays NCHW. Y never takes Z's buffer.
 * The sums are Conv's then Add's, each rounded as before: the same bits.
 * The fused node takes the Add's name. */
#include "passes/pass.h"

/* Whether Y (output 0 of a convolution) and Z, Add node a's other input,
 * have one float32 shape, known, which is a's output's. */
static bool same_float_shape(const tgc_rewrite *rw, const tgc_node *a, tgc_ref y, tgc_ref z) {
    const tgc_tensor_info *yi = tgc_graph_ref_info(rw->g, y), *zi = tgc_graph_ref_info(rw->g, z);
    return yi != NULL && zi != NULL && yi->dtype == TGC_FLOAT32 && zi->dtype == TGC_FLOAT32 &&
           tgc_shape_known(&yi->shape) && tgc_shape_eq(&yi->shape, &zi->shape) &&
           tgc_shape_eq(&yi->shape, &a->outputs[0].shape);
}

/* The op the convolution feeding side `side` of Add node add becomes with
 * the Add taken in ("_ConvNHWC" or "_ConvAdd"), with its node id in *conv;
 * NULL when the pass cannot take it (the Add not its only reader, a Z
 * already, shapes or dtypes apart, devices asked apart, no kernel
 * everywhere). */
static const char *fusable_conv(const tgc_rewrite *rw, int32_t add, int side, int32_t *conv) {
    const tgc_node *a = &rw->g->nodes[add];
    tgc_ref y = a->inputs[side], z = a->inputs[1 - side];
    if (y.node < 0 || y.port != 0 || z.node < 0 || z.node == y.node || rw->g->nodes[y.node].n_inputs > 3 ||
        tgc_rewrite_uses(rw, y) != 1 || tgc_rewrite_is_output(rw, y) || !same_float_shape(rw, a, y, z) ||
        !tgc_pass_same_device(a, &rw->g->nodes[y.node]))
        return NULL;
    *conv = y.node;
    if (tgc_pass_is_op(rw, y.node, "Conv"))
        return tgc_pass_kernel_everywhere(rw->kinds, "_ConvAdd") ? "_ConvAdd" : NULL;
    if (!tgc_pass_is_op(rw, y.node, "_ConvNHWC")) return NULL;
    const tgc_node *c = &rw->g->nodes[y.node];
    for (int i = 0; i < c->n_inputs; i++) /* Y may take Z's buffer: none the convolution reads */
        if (c->inputs[i].node == z.node && c->inputs[i].port == z.port) return NULL;
    return "_ConvNHWC";
}

tgc_status tgc_pass_fuse_conv_add(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    tgc_status s = TGC_OK;
    for (int32_t add = 0; s == TGC_OK && add < nn; add++) {
        if (rw->removed[add] || !tgc_pass_is_op(rw, add, "Add") || rw->g->nodes[add].n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            int32_t conv, fused;
            const char *op = fusable_conv(rw, add, side, &conv);
            if (op == NULL) continue;
            const tgc_node *c = &rw->g->nodes[conv];
            tgc_ref ins[4] = {c->inputs[0], c->inputs[1], {-1, 0, {0, 0}}, rw->g->nodes[add].inputs[1 - side]};
            if (c->n_inputs > 2) ins[2] = c->inputs[2];
            if ((s = tgc_rewrite_add_op(rw, op, add, ins, 4, 1, &fused)) != TGC_OK ||
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
