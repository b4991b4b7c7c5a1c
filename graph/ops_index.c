/* Element-indexing ops (ONNX opset 17, opset 18 where named): GatherElements,
 * ScatterElements (reduction none/add/mul/max/min), ScatterND (the same
 * reductions), GatherND (batch_dims) and OneHot. Their output shapes follow
 * from the input shapes (OneHot's from the value of `depth`); the indices'
 * values are the kernels' to check (devices/cpu/kernels_gather.c,
 * kernels_scatter.c). Facts from the ONNX operator docs (Operators.md) and
 * onnx/reference/ops. */
#include "graph/ops.h"
#include "support/checked.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* Fails unless attribute `reduction` (default none) is one opset 18 knows. */
static tgc_status reduction_attr(tgc_infer_ctx *c) {
    const char *r = tgc_infer_attr_string(c, "reduction", "none");
    static const char *const ok[] = {"none", "add", "mul", "max", "min"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(r, ok[i]) == 0) return TGC_OK;
    return tgc_infer_fail(c, -1, "bad-attribute",
                          "attribute 'reduction' is '%s'; it must be none, add, mul, max or min", r);
}

/* Fails unless dims a and b can be equal at run time (`what` says why). */
static tgc_status same_dim(tgc_infer_ctx *c, int input, tgc_dim a, tgc_dim b, const char *what) {
    tgc_dim m;
    if (tgc_ops_dim_merge(a, b, &m)) return TGC_OK;
    return tgc_infer_fail(c, input, "shape-mismatch", "%s (%lld vs %lld)", what, (long long)a.v, (long long)b.v);
}

/* Fails when a known index dim exceeds a known data dim (d != axis). */
static tgc_status index_dims_fit(tgc_infer_ctx *c, int input, const tgc_shape *data, const tgc_shape *idx, int axis) {
    for (int d = 0; d < data->rank; d++) {
        tgc_dim a = data->dims[d], b = idx->dims[d];
        if (d != axis && tgc_dim_known(a) && tgc_dim_known(b) && b.v > a.v) {
            char sd[TGC_OPS_SHAPE_BUF], si[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, input, "shape-mismatch", "input %d has shape %s, larger than data %s on "
                                  "axis %d", input, SHAPE(c, idx, si), SHAPE(c, data, sd), d);
        }
    }
    return TGC_OK;
}

/* ---- GatherElements ----------------------------------------------------------- */

/* GatherElements-13: data of rank r >= 1, int32/int64 indices of the same
 * rank (each dim but `axis` at most data's): out has the indices' shape and
 * data's dtype. */
static tgc_status infer_gather_elements(tgc_infer_ctx *c) {
    const tgc_tensor_info *data = tgc_infer_input(c, 0), *idx = tgc_infer_input(c, 1);
    if (!tgc_infer_require_int(c, 1)) return TGC_ERR_INVALID;
    int r = data->shape.rank, q = idx->shape.rank, axis = 0;
    if (r == 0 || q == 0)
        return tgc_infer_fail(c, r == 0 ? 0 : 1, "shape-mismatch", "input %d is a scalar; %s needs rank >= 1",
                              r == 0 ? 0 : 1, c->node->op->name);
    if (r > 0 && q > 0 && r != q) {
        char sd[TGC_OPS_SHAPE_BUF], si[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch", "indices %s and data %s must have one rank",
                              SHAPE(c, &idx->shape, si), SHAPE(c, &data->shape, sd));
    }
    tgc_status st = tgc_ops_axis_attr(c, "axis", 0, r > 0 ? r : q > 0 ? q : TGC_MAX_RANK, 0, &axis);
    if (st == TGC_OK && r > 0 && q > 0) st = index_dims_fit(c, 1, &data->shape, &idx->shape, axis);
    if (st != TGC_OK) return st;
    return tgc_infer_set_output(c, 0, data->dtype, &idx->shape);
}

static const tgc_attr_def axis_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_GatherElements = {"GatherElements", 2, 2, 1, 1, axis_attrs, infer_gather_elements};

/* ---- ScatterElements ------------------------------------------------------------ */

/* ScatterElements-18: data of rank r >= 1, int32/int64 indices of rank r,
 * updates of data's dtype and the indices' shape; out is data's dtype and
 * shape. */
static tgc_status infer_scatter_elements(tgc_infer_ctx *c) {
    const tgc_tensor_info *data = tgc_infer_input(c, 0), *idx = tgc_infer_input(c, 1), *upd = tgc_infer_input(c, 2);
    if (!tgc_infer_require_int(c, 1) || !tgc_infer_require_same_dtype(c, 0, 2)) return TGC_ERR_INVALID;
    tgc_status st = reduction_attr(c);
    if (st != TGC_OK) return st;
    int r = data->shape.rank, q = idx->shape.rank, u = upd->shape.rank, axis = 0;
    if (r == 0) return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 is a scalar; it needs rank >= 1");
    char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
    if ((r > 0 && q >= 0 && r != q) || (q >= 0 && u >= 0 && q != u))
        return tgc_infer_fail(c, 1, "shape-mismatch", "indices %s must have the rank of data %s and the "
                              "shape of updates", SHAPE(c, &idx->shape, sa), SHAPE(c, &data->shape, sb));
    for (int d = 0; q > 0 && u == q && d < q; d++)
        if ((st = same_dim(c, 2, idx->shape.dims[d], upd->shape.dims[d],
                           "updates must have the shape of indices")) != TGC_OK)
            return st;
    st = tgc_ops_axis_attr(c, "axis", 0, r > 0 ? r : TGC_MAX_RANK, 0, &axis);
    if (st == TGC_OK && r > 0 && q == r) st = index_dims_fit(c, 1, &data->shape, &idx->shape, axis);
    if (st != TGC_OK) return st;
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def scatter_elements_attrs[] = {
    {"axis", TGC_ATTR_INT, false}, {"reduction", TGC_ATTR_STRING, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_ScatterElements = {"ScatterElements", 3, 3, 1, 1, scatter_elements_attrs,
                                           infer_scatter_elements};

/* ---- ScatterND and GatherND ---------------------------------------------------------- */

/* The last dim of the indices (how many leading data axes one index
 * tuple names), or -1 when unknown. */
static int64_t tuple_len(const tgc_shape *idx) {
    return idx->rank > 0 && tgc_dim_known(idx->dims[idx->rank - 1]) ? idx->dims[idx->rank - 1].v : -1;
}

/* ScatterND-18: data of rank r >= 1, int64 indices of rank q >= 1 whose
 * last dim m <= r, updates of shape indices[:-1] + data[m:]; out is data. */
static tgc_status infer_scatter_nd(tgc_infer_ctx *c) {
    const tgc_tensor_info *data = tgc_infer_input(c, 0), *idx = tgc_infer_input(c, 1), *upd = tgc_infer_input(c, 2);
    if (!tgc_infer_require_int(c, 1) || !tgc_infer_require_same_dtype(c, 0, 2)) return TGC_ERR_INVALID;
    tgc_status st = reduction_attr(c);
    if (st != TGC_OK) return st;
    int r = data->shape.rank, q = idx->shape.rank, u = upd->shape.rank;
    char sd[TGC_OPS_SHAPE_BUF], si[TGC_OPS_SHAPE_BUF], su[TGC_OPS_SHAPE_BUF];
    if (r == 0 || q == 0)
        return tgc_infer_fail(c, r == 0 ? 0 : 1, "shape-mismatch", "input %d is a scalar; it needs rank >= 1",
                              r == 0 ? 0 : 1);
    int64_t m = tuple_len(&idx->shape);
    if (m >= 0 && r > 0 && (m < 1 || m > r))
        return tgc_infer_fail(c, 1, "shape-mismatch", "indices %s name %lld axes of data %s; it must be 1..%d",
                              SHAPE(c, &idx->shape, si), (long long)m, SHAPE(c, &data->shape, sd), r);
    if (m >= 0 && r > 0 && q > 0 && u >= 0) {
        bool bad = u != q - 1 + r - (int)m;
        for (int d = 0; !bad && d < u; d++) {
            tgc_dim want = d < q - 1 ? idx->shape.dims[d] : data->shape.dims[m + d - (q - 1)], merged;
            bad = !tgc_ops_dim_merge(want, upd->shape.dims[d], &merged);
        }
        if (bad)
            return tgc_infer_fail(c, 2, "shape-mismatch", "updates %s must have the shape indices[:-1] + "
                                  "data[%lld:] (indices %s, data %s)", SHAPE(c, &upd->shape, su), (long long)m,
                                  SHAPE(c, &idx->shape, si), SHAPE(c, &data->shape, sd));
    }
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def reduction_attrs[] = {{"reduction", TGC_ATTR_STRING, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_ScatterND = {"ScatterND", 3, 3, 1, 1, reduction_attrs, infer_scatter_nd};

/* GatherND-13: data of rank r >= 1, int64 indices of rank q >= 1, batch_dims
 * b in [0, min(q, r)) with the first b dims equal; the indices' last dim m
 * in [1, r - b]; out = indices[:-1] + data[b + m:] (rank q - 1 + r - b - m;
 * unknown while m is). */
static tgc_status infer_gather_nd(tgc_infer_ctx *c) {
    const tgc_tensor_info *data = tgc_infer_input(c, 0), *idx = tgc_infer_input(c, 1);
    if (!tgc_infer_require_int(c, 1)) return TGC_ERR_INVALID;
    int r = data->shape.rank, q = idx->shape.rank;
    int64_t b = tgc_infer_attr_int(c, "batch_dims", 0);
    char sd[TGC_OPS_SHAPE_BUF], si[TGC_OPS_SHAPE_BUF];
    if (r == 0 || q == 0)
        return tgc_infer_fail(c, r == 0 ? 0 : 1, "shape-mismatch", "input %d is a scalar; it needs rank >= 1",
                              r == 0 ? 0 : 1);
    if (b < 0 || (r > 0 && b >= r) || (q > 0 && b >= q))
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'batch_dims' is %lld; it must be in [0, "
                              "min(rank(data), rank(indices)))", (long long)b);
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    int64_t m = tuple_len(&idx->shape);
    if (r < 0 || q < 0 || m < 0) return tgc_infer_set_output(c, 0, data->dtype, &out);
    if (m < 1 || m > r - b)
        return tgc_infer_fail(c, 1, "shape-mismatch", "indices %s name %lld axes of data %s; with batch_dims "
                              "%lld it must be 1..%lld", SHAPE(c, &idx->shape, si), (long long)m,
                              SHAPE(c, &data->shape, sd), (long long)b, (long long)(r - b));
    for (int d = 0; d < b; d++) {
        tgc_status st = same_dim(c, 1, data->shape.dims[d], idx->shape.dims[d],
                                 "the batch dims of data and indices must be equal");
        if (st != TGC_OK) return st;
    }
    if (q - 1 + r - b - m > TGC_MAX_RANK)
        return tgc_infer_fail(c, 1, "shape-mismatch", "the result would have rank %lld; tgc allows at most %d",
                              (long long)(q - 1 + r - b - m), TGC_MAX_RANK);
    out.rank = 0;
    for (int d = 0; d < q - 1; d++) out.dims[out.rank++] = idx->shape.dims[d];
    for (int64_t d = b + m; d < r; d++) out.dims[out.rank++] = data->shape.dims[d];
    return tgc_infer_set_output(c, 0, data->dtype, &out);
}

static const tgc_attr_def gather_nd_attrs[] = {{"batch_dims", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_GatherND = {"GatherND", 2, 2, 1, 1, gather_nd_attrs, infer_gather_nd};

/* ---- OneHot --------------------------------------------------------------------- */

/* OneHot-11: numeric indices of rank r, a numeric scalar (or 1-element)
 * depth, values [off, on] of any dtype: out has values' dtype and the
 * indices' shape with depth inserted at `axis` (in [-r-1, r], default -1).
 * A depth not known here (or not an int / float32 scalar) gives a fresh dim;
 * the kernel sizes its output. */
static tgc_status infer_one_hot(tgc_infer_ctx *c) {
    const tgc_tensor_info *idx = tgc_infer_input(c, 0), *depth = tgc_infer_input(c, 1), *vals = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC) || !tgc_ops_require_dtypes(c, 1, TGC_DT_NUMERIC))
        return TGC_ERR_INVALID;
    char s[TGC_OPS_SHAPE_BUF];
    if (depth->shape.rank > 1 || (depth->shape.rank == 1 && tgc_dim_known(depth->shape.dims[0]) &&
                                  depth->shape.dims[0].v != 1))
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (depth) has shape %s; it must hold one value",
                              SHAPE(c, &depth->shape, s));
    if (vals->shape.rank == 0 || vals->shape.rank > 1 ||
        (vals->shape.rank == 1 && tgc_dim_known(vals->shape.dims[0]) && vals->shape.dims[0].v != 2))
        return tgc_infer_fail(c, 2, "shape-mismatch", "input 2 (values) has shape %s; it must be [2] "
                              "(off, on)", SHAPE(c, &vals->shape, s));
    int r = idx->shape.rank, axis;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (r < 0) return tgc_infer_set_output(c, 0, vals->dtype, &out);
    if (r + 1 > TGC_MAX_RANK)
        return tgc_infer_fail(c, 0, "shape-mismatch", "the result would have rank %d; tgc allows at most %d",
                              r + 1, TGC_MAX_RANK);
    tgc_status st = tgc_ops_axis_attr(c, "axis", -1, r + 1, 0, &axis);
    if (st != TGC_OK) return st;
    int64_t v[1];
    int n = 0;
    bool known = tgc_infer_input_concrete_value(c, 1, v, 1, &n) && n == 1;
    if (!known && depth->has_real && depth->real > -9.2e18 && depth->real < 9.2e18) {
        known = true;
        v[0] = (int64_t)depth->real; /* ONNX: a non-integer depth is cast to int64 */
    }
    if (known && v[0] < 0)
        return tgc_infer_fail(c, 1, "bad-input", "input 1 (depth) is %lld; it must be >= 0", (long long)v[0]);
    tgc_dim d = known ? tgc_dim_of(v[0]) : tgc_infer_fresh_dim(c);
    out.rank = r + 1;
    for (int i = 0, k = 0; i <= r; i++) out.dims[i] = i == axis ? d : idx->shape.dims[k++];
    return tgc_infer_set_output(c, 0, vals->dtype, &out);
}

static const tgc_attr_def one_hot_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_OneHot = {"OneHot", 3, 3, 1, 1, one_hot_attrs, infer_one_hot};
