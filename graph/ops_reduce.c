/* Reductions (ONNX opset 17, and the opset 18 form): ReduceSum, ReduceMean,
 * ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp, ReduceSumSquare take `axes` as an attribute (opset 13)
 * or as an optional int64 input 1 (opset 18; ReduceSum since 13) with
 * noop_with_empty_axes; ArgMax and ArgMin reduce one axis to int64
 * indices. Reduced axes become 1 with keepdims (the default) or vanish. */
#include "graph/ops.h"

#define DT_REDUCE (TGC_DT_FLOAT | TGC_DT_INT)

/* Reduces input 0 over `axes` (n of them; axes_known false when they come
 * from an input without a value) into output 0 of `dtype`. Empty axes mean
 * every axis, or none with noop_with_empty_axes. */
static tgc_status reduce_shape(tgc_infer_ctx *c, tgc_dtype dtype, int64_t *axes, int n, bool axes_known,
                               int axes_input) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    bool keepdims = tgc_infer_attr_int(c, "keepdims", 1) != 0;
    bool noop = tgc_infer_attr_int(c, "noop_with_empty_axes", 0) != 0;
    int r = x->shape.rank;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (r < 0) return tgc_infer_set_output(c, 0, dtype, &out);
    if (!axes_known) {
        /* Each dim is either itself or reduced: with keepdims the rank stays. */
        if (keepdims) {
            out.rank = r;
            for (int i = 0; i < r; i++) out.dims[i] = tgc_infer_fresh_dim(c);
        }
        return tgc_infer_set_output(c, 0, dtype, &out);
    }
    tgc_status st = tgc_ops_normalize_axes(c, axes_input, "axes", axes, n, r);
    if (st != TGC_OK) return st;
    bool reduced[TGC_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) reduced[axes[i]] = true;
    for (int i = 0; n == 0 && !noop && i < r; i++) reduced[i] = true;
    out.rank = 0;
    for (int i = 0; i < r; i++) {
        if (!reduced[i]) out.dims[out.rank++] = x->shape.dims[i];
        else if (keepdims) out.dims[out.rank++] = tgc_dim_of(1);
    }
    return tgc_infer_set_output(c, 0, dtype, &out);
}

/* Every ReduceX: input 0 of a dtype in `dtypes`; `axes` is the attribute
 * (opset 13 form; ReduceSum has none since 13) or the optional int64 1-D
 * input 1 (opset 18 form; ReduceSum since 13), never both. Without a known
 * value of input 1 the output keeps the rank with fresh dims (keepdims) or
 * has unknown rank. */
static tgc_status infer_reduce(tgc_infer_ctx *c, unsigned dtypes) {
    if (!tgc_ops_require_dtypes(c, 0, dtypes) || !tgc_infer_require_dtype(c, 1, TGC_INT64))
        return TGC_ERR_INVALID;
    const int64_t *a = NULL;
    size_t n = 0;
    tgc_infer_attr_ints(c, "axes", &a, &n);
    tgc_dtype dt = tgc_infer_input(c, 0)->dtype;
    if (tgc_infer_input(c, 1) != NULL) {
        if (n > 0)
            return tgc_infer_fail(c, 1, "bad-input", "axes are given twice, as the attribute and as input 1");
        int64_t axes[TGC_MAX_VALUE_LEN];
        int na = 0;
        bool known = tgc_infer_input_concrete_value(c, 1, axes, TGC_MAX_VALUE_LEN, &na);
        return reduce_shape(c, dt, axes, na, known, 1);
    }
    if (n > TGC_MAX_RANK)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'axes' has %zu entries; tgc allows at "
                              "most %d axes", n, TGC_MAX_RANK);
    int64_t axes[TGC_MAX_RANK];
    for (size_t i = 0; i < n; i++) axes[i] = a[i];
    return reduce_shape(c, dt, axes, (int)n, true, -1);
}

/* ONNX's type constraints: Max and Min take uint8 too (opset 13's int8 /
 * uint8 rows); the others floats and int32 / int64. */
static tgc_status infer_reduce_numeric(tgc_infer_ctx *c) { return infer_reduce(c, TGC_DT_NUMERIC); }
static tgc_status infer_reduce_signed(tgc_infer_ctx *c) { return infer_reduce(c, DT_REDUCE); }

static const tgc_attr_def reduce_attrs[] = {{"axes", TGC_ATTR_INTS, false},
                                            {"keepdims", TGC_ATTR_INT, false},
                                            {"noop_with_empty_axes", TGC_ATTR_INT, false},
                                            {NULL, 0, false}};
/* ReduceSum's axes are an input since opset 13. */
static const tgc_attr_def reduce_sum_attrs[] = {{"keepdims", TGC_ATTR_INT, false},
                                                {"noop_with_empty_axes", TGC_ATTR_INT, false},
                                                {NULL, 0, false}};

#define REDUCE_OP(name, attrs, infer) {#name, 1, 2, 1, 1, attrs, infer}
const tgc_op_def tgc_op_ReduceSum = REDUCE_OP(ReduceSum, reduce_sum_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceMean = REDUCE_OP(ReduceMean, reduce_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceMax = REDUCE_OP(ReduceMax, reduce_attrs, infer_reduce_numeric);
const tgc_op_def tgc_op_ReduceMin = REDUCE_OP(ReduceMin, reduce_attrs, infer_reduce_numeric);
const tgc_op_def tgc_op_ReduceProd = REDUCE_OP(ReduceProd, reduce_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceL1 = REDUCE_OP(ReduceL1, reduce_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceL2 = REDUCE_OP(ReduceL2, reduce_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceLogSum = REDUCE_OP(ReduceLogSum, reduce_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceLogSumExp = REDUCE_OP(ReduceLogSumExp, reduce_attrs, infer_reduce_signed);
const tgc_op_def tgc_op_ReduceSumSquare = REDUCE_OP(ReduceSumSquare, reduce_attrs, infer_reduce_signed);

/* ArgMax-13, ArgMin-13: axis in [-r, r) (default 0); int64 output of the input's shape
 * with that axis 1 (keepdims, the default) or removed. */
static tgc_status infer_arg_extreme(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC)) return TGC_ERR_INVALID;
    int64_t axis[1] = {0};
    if (x->shape.rank >= 0) {
        int a;
        tgc_status st = tgc_ops_axis_attr(c, "axis", 0, x->shape.rank, 0, &a);
        if (st != TGC_OK) return st;
        axis[0] = a;
    }
    return reduce_shape(c, TGC_INT64, axis, 1, true, -1);
}

static const tgc_attr_def argmax_attrs[] = {{"axis", TGC_ATTR_INT, false},
                                            {"keepdims", TGC_ATTR_INT, false},
                                            {"select_last_point_index", TGC_ATTR_INT, false},
                                            {NULL, 0, false}};

const tgc_op_def tgc_op_ArgMax = {"ArgMax", 1, 1, 1, 1, argmax_attrs, infer_arg_extreme};
const tgc_op_def tgc_op_ArgMin = {"ArgMin", 1, 1, 1, 1, argmax_attrs, infer_arg_extreme};
