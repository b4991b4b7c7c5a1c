/* Ops whose output sizes depend on the input values (ONNX opset 17):
 * NonZero, Compress and Unique. Inference gives each such dim a fresh
 * symbol; their kernels size the outputs at run time
 * (tgc_kernel_def.sizes_outputs). Facts from the ONNX operator docs
 * (Operators.md) and onnx/reference/ops. */
#include "graph/ops.h"

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* NonZero-13: any input of rank r; out int64 [max(r, 1), n] with n the
 * number of non-zero elements (a scalar reads as one element, as numpy's
 * nonzero does). */
static tgc_status infer_nonzero(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_shape out = {.rank = 2};
    out.dims[0] = x->shape.rank < 0 ? tgc_infer_fresh_dim(c) : tgc_dim_of(x->shape.rank > 0 ? x->shape.rank : 1);
    out.dims[1] = tgc_infer_fresh_dim(c);
    return tgc_infer_set_output(c, 0, TGC_INT64, &out);
}

const tgc_op_def tgc_op_NonZero = {"NonZero", 1, 1, 1, 1, no_attrs, infer_nonzero};

/* Compress-11: input of rank r, a 1-D bool condition; with `axis` (in
 * [-r, r)) out keeps the slices along it whose condition is true (the
 * condition may be shorter than the axis: the rest are dropped), without
 * it out is 1-D, the chosen elements of the flattened input. */
static tgc_status infer_compress(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *cond = tgc_infer_input(c, 1);
    if (!tgc_infer_require_dtype(c, 1, TGC_BOOL)) return TGC_ERR_INVALID;
    char s[TGC_OPS_SHAPE_BUF];
    if (cond->shape.rank >= 0 && cond->shape.rank != 1)
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (condition) has shape %s; it must be 1-D",
                              SHAPE(c, &cond->shape, s));
    tgc_shape out = {.rank = 1};
    if (tgc_infer_attr(c, "axis") != NULL) {
        int r = x->shape.rank, axis;
        if (r == 0) return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 is a scalar; an axis needs rank >= 1");
        out = x->shape;
        if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
        tgc_status st = tgc_ops_axis_attr(c, "axis", 0, r, 0, &axis);
        if (st != TGC_OK) return st;
        out.dims[axis] = tgc_infer_fresh_dim(c);
    } else {
        out.dims[0] = tgc_infer_fresh_dim(c);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def compress_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Compress = {"Compress", 2, 2, 1, 1, compress_attrs, infer_compress};

/* Unique-11: X of any dtype; `sorted` (default 1), optional `axis`. With n
 * unique elements (or slices along axis): Y [n] (X's shape with axis of
 * size n), indices int64 [n], inverse_indices int64 [numel(X)] (or [X's
 * axis size]), counts int64 [n]. Outputs 1-3 are optional. */
static tgc_status infer_unique(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_dim n = tgc_infer_fresh_dim(c);
    tgc_shape y = {.rank = 1, .dims = {n}}, inv = {.rank = 1};
    int r = x->shape.rank;
    if (tgc_infer_attr(c, "axis") != NULL) {
        int axis;
        if (r == 0) return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 is a scalar; an axis needs rank >= 1");
        if (r < 0) {
            y.rank = TGC_RANK_UNKNOWN;
            inv.dims[0] = tgc_infer_fresh_dim(c);
        } else {
            tgc_status st = tgc_ops_axis_attr(c, "axis", 0, r, 0, &axis);
            if (st != TGC_OK) return st;
            y = x->shape;
            y.dims[axis] = n;
            inv.dims[0] = x->shape.dims[axis];
        }
    } else {
        inv.dims[0] = r < 0 ? tgc_infer_fresh_dim(c) : tgc_ops_dims_product(c, x->shape.dims, r);
    }
    tgc_shape one = {.rank = 1, .dims = {n}};
    tgc_status st = tgc_infer_set_output(c, 0, x->dtype, &y);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 1, TGC_INT64, &one);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 2, TGC_INT64, &inv);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 3, TGC_INT64, &one);
    return st;
}

static const tgc_attr_def unique_attrs[] = {
    {"sorted", TGC_ATTR_INT, false}, {"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Unique = {"Unique", 1, 1, 1, 4, unique_attrs, infer_unique};
