/* Per-channel normalisations of [N, C, ...] tensors (ONNX opset 17):
 * InstanceNormalization-6 (each (n, c) plane to zero mean and unit
 * variance, then scale and bias per channel) and LRN-13 (each element
 * divided by a power of the sum of squares over neighbouring channels).
 * Both keep the input's shape. */
#include "graph/ops.h"

/* Formats a shape into buf for messages. */
#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* InstanceNormalization-6: input [N, C, D1, ...] (rank >= 3 in ONNX; rank 2
 * accepted, its planes of one element), scale [C], B [C], all one float
 * dtype. */
static tgc_status infer_instance_norm(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_infer_require_same_dtype(c, 0, 1) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    char sx[TGC_OPS_SHAPE_BUF], sp[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; InstanceNormalization needs "
                              "[N, C, ...]", SHAPE(c, &x->shape, sx));
    tgc_dim ch = x->shape.rank >= 2 ? x->shape.dims[1] : tgc_dim_of(0);
    for (int i = 1; i < 3; i++) {
        const tgc_tensor_info *p = tgc_infer_input(c, i);
        tgc_dim m;
        if (p->shape.rank < 0) continue;
        if (p->shape.rank != 1 || (x->shape.rank >= 2 && !tgc_ops_dim_merge(p->shape.dims[0], ch, &m)))
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must be [C] for input %s",
                                  i, i == 1 ? "scale" : "B", SHAPE(c, &p->shape, sp), SHAPE(c, &x->shape, sx));
    }
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def instance_norm_attrs[] = {{"epsilon", TGC_ATTR_FLOAT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_InstanceNormalization = {"InstanceNormalization", 3, 3, 1, 1, instance_norm_attrs,
                                                 infer_instance_norm};

/* LRN-13: X [N, C, D1, ...] float; size (required, >= 1), alpha, beta,
 * bias; Y has X's shape. */
static tgc_status infer_lrn(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    int64_t size = tgc_infer_attr_int(c, "size", 0);
    if (size < 1 || size > INT32_MAX)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'size' is %lld; it must be >= 1", (long long)size);
    char sx[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; LRN needs [N, C, ...]",
                              SHAPE(c, &x->shape, sx));
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def lrn_attrs[] = {
    {"alpha", TGC_ATTR_FLOAT, false}, {"beta", TGC_ATTR_FLOAT, false}, {"bias", TGC_ATTR_FLOAT, false},
    {"size", TGC_ATTR_INT, true},     {NULL, 0, false},
};

const tgc_op_def tgc_op_LRN = {"LRN", 1, 1, 1, 1, lrn_attrs, infer_lrn};
