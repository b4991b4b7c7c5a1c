/* Reductions (ONNX opset 17): ReduceMean and ReduceMax take `axes` as an
 * attribute (it became an input only in opset 18), ReduceSum takes it as an
 * optional int64 input (since opset 13); ArgMax reduces one axis to int64
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

/* ReduceMean-13, ReduceMax-13: axes attribute (default: all axes). */
static tgc_status infer_reduce_attr(tgc_infer_ctx *c, unsigned dtypes) {
    if (!tgc_ops_require_dtypes(c, 0, dtypes)) return TGC_ERR_INVALID;
    const int64_t *a;
    size_t n;
    tgc_infer_attr_ints(c, "axes", &a, &n);
    if (n > TGC_MAX_RANK)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'axes' has %zu entries; tgc allows at "
                              "most %d axes", n, TGC_MAX_RANK);
    int64_t axes[TGC_MAX_RANK];
    for (size_t i = 0; i < n; i++) axes[i] = a[i];
    return reduce_shape(c, tgc_infer_input(c, 0)->dtype, axes, (int)n, true, -1);
}

static tgc_status infer_reduce_mean(tgc_infer_ctx *c) { return infer_reduce_attr(c, DT_REDUCE); }
static tgc_status infer_reduce_max(tgc_infer_ctx *c) { return infer_reduce_attr(c, TGC_DT_NUMERIC); }

static const tgc_attr_def reduce_attrs[] = {
    {"axes", TGC_ATTR_INTS, false}, {"keepdims", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_ReduceMean = {"ReduceMean", 1, 1, 1, 1, reduce_attrs, infer_reduce_mean};
const tgc_op_def tgc_op_ReduceMax = {"ReduceMax", 1, 1, 1, 1, reduce_attrs, infer_reduce_max};

/* ReduceSum-13: axes is an optional int64 1-D input; without a known value
 * the output keeps the rank with fresh dims (keepdims) or has unknown rank. */
static tgc_status infer_reduce_sum(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, DT_REDUCE) || !tgc_infer_require_dtype(c, 1, TGC_INT64))
        return TGC_ERR_INVALID;
    int64_t axes[TGC_MAX_VALUE_LEN];
    int n = 0;
    bool known = tgc_infer_input(c, 1) == NULL ||
                 tgc_infer_input_concrete_value(c, 1, axes, TGC_MAX_VALUE_LEN, &n);
    return reduce_shape(c, tgc_infer_input(c, 0)->dtype, axes, n, known, 1);
}

static const tgc_attr_def reduce_sum_attrs[] = {{"keepdims", TGC_ATTR_INT, false},
                                                {"noop_with_empty_axes", TGC_ATTR_INT, false},
                                                {NULL, 0, false}};

const tgc_op_def tgc_op_ReduceSum = {"ReduceSum", 1, 2, 1, 1, reduce_sum_attrs, infer_reduce_sum};

/* ArgMax-13: axis in [-r, r) (default 0); int64 output of the input's shape
 * with that axis 1 (keepdims, the default) or removed. */
static tgc_status infer_argmax(tgc_infer_ctx *c) {
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

const tgc_op_def tgc_op_ArgMax = {"ArgMax", 1, 1, 1, 1, argmax_attrs, infer_argmax};
