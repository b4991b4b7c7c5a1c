/* Loss ops (ONNX opset 13): NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss. Both take scores X [N, C] or [N, C, d1, ..., dk]
 * (float), integer targets [N] or [N, d1, ..., dk] (int32, int64) and an
 * optional weight [C] of X's dtype; attribute reduction ("none", "sum",
 * "mean"; default "mean") and ignore_index (an int; absent: no target is
 * ignored). The loss is [N, d1, ..., dk] with reduction "none", a scalar
 * otherwise, of X's dtype. SoftmaxCrossEntropyLoss's optional second output
 * log_prob has X's dtype and shape. Opset 12 defined both ops with the same
 * inputs, outputs and attributes (13 only added bfloat16), so models of
 * opset 12 import as they are. Target values are checked by the kernel
 * (devices/cpu/kernels_loss.c). */
#include "graph/ops.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* True when `reduction` is one of the values ONNX defines. */
static bool reduction_known(const char *reduction) {
    return strcmp(reduction, "none") == 0 || strcmp(reduction, "sum") == 0 || strcmp(reduction, "mean") == 0;
}

/* Both ops: X (input 0) float of rank >= 2, target (input 1) int32/int64
 * of shape [N, d1, ..., dk] where X is [N, C, d1, ..., dk], weight (input
 * 2, optional) X's dtype and [C]. Output 0 the loss (see the file comment);
 * output 1, where the node has it (SoftmaxCrossEntropyLoss's log_prob),
 * X's dtype and shape. A known dim and a symbol merge to the known dim; an
 * unknown rank of X takes the target's shape for the loss. */
static tgc_status infer_loss(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *t = tgc_infer_input(c, 1), *w = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_ops_require_dtypes(c, 1, TGC_DT_INT) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    const char *reduction = tgc_infer_attr_string(c, "reduction", "mean");
    if (!reduction_known(reduction))
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'reduction' is '%s'; it must be 'none', "
                              "'sum' or 'mean'", reduction);
    char sx[TGC_OPS_SHAPE_BUF], so[TGC_OPS_SHAPE_BUF], sp[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; %s needs [N, C] or "
                              "[N, C, d1, ..., dk]", SHAPE(c, &x->shape, sx), c->node->op->name);
    if (t->shape.rank == 0)
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (target) is a scalar; it must be [N] or "
                              "[N, d1, ..., dk]");

    /* per_item: [N, d1, ..., dk], from X and the target together. */
    tgc_shape per_item = t->shape;
    if (x->shape.rank >= 2) {
        per_item.rank = x->shape.rank - 1;
        per_item.dims[0] = x->shape.dims[0];
        for (int i = 1; i < per_item.rank; i++) per_item.dims[i] = x->shape.dims[i + 1];
        bool ok = t->shape.rank < 0 || t->shape.rank == per_item.rank;
        for (int i = 0; ok && t->shape.rank >= 0 && i < per_item.rank; i++)
            ok = tgc_ops_dim_merge(per_item.dims[i], t->shape.dims[i], &per_item.dims[i]);
        if (!ok)
            return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (target) has shape %s; for input 0 %s "
                                  "it must be [N, d1, ..., dk] = %s", SHAPE(c, &t->shape, so),
                                  SHAPE(c, &x->shape, sx), SHAPE(c, &per_item, sp));
    }
    if (w != NULL && w->shape.rank >= 0) {
        tgc_dim m;
        if (w->shape.rank != 1 || (x->shape.rank >= 2 && !tgc_ops_dim_merge(w->shape.dims[0], x->shape.dims[1], &m)))
            return tgc_infer_fail(c, 2, "shape-mismatch", "input 2 (weight) has shape %s; for input 0 %s "
                                  "it must be [C]", SHAPE(c, &w->shape, so), SHAPE(c, &x->shape, sx));
    }

    tgc_shape loss = strcmp(reduction, "none") == 0 ? per_item : (tgc_shape){.rank = 0};
    tgc_status st = tgc_infer_set_output(c, 0, x->dtype, &loss);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 1, x->dtype, &x->shape); /* ignored without log_prob */
    return st;
}

static const tgc_attr_def loss_attrs[] = {
    {"reduction", TGC_ATTR_STRING, false},
    {"ignore_index", TGC_ATTR_INT, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_NegativeLogLikelihoodLoss = {"NegativeLogLikelihoodLoss", 2, 3, 1, 1, loss_attrs,
                                                     infer_loss};
const tgc_op_def tgc_op_SoftmaxCrossEntropyLoss = {"SoftmaxCrossEntropyLoss", 2, 3, 1, 2, loss_attrs,
                                                   infer_loss};
