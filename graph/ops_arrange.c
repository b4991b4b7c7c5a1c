/* Ops that rearrange or fill a tensor (ONNX opset 17): Tile, Trilu,
 * EyeLike, CumSum, ReverseSequence and TopK. Their shapes follow from the
 * input shapes, and for Tile and TopK from a small host-memory int input
 * (repeats, k) whose value the executor passes at run time. Facts from the
 * ONNX operator docs (Operators.md) and onnx/reference/ops. */
#include "graph/ops.h"
#include "support/checked.h"

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* Fails unless optional input i is absent, a scalar or one element (rank
 * 1), of an int dtype; `what` names it. */
static tgc_status need_int_scalar(tgc_infer_ctx *c, int i, const char *what) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL) return TGC_OK;
    if (!tgc_infer_require_int(c, i)) return TGC_ERR_INVALID;
    const tgc_shape *s = &in->shape;
    if (s->rank > 1 || (s->rank == 1 && tgc_dim_known(s->dims[0]) && s->dims[0].v != 1)) {
        char b[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must hold one value", i,
                              what, SHAPE(c, s, b));
    }
    return TGC_OK;
}

/* ---- Tile ----------------------------------------------------------------------- */

/* Tile-13: input of rank r, int64 repeats of shape [r] with values >= 0:
 * out dim i = dim i * repeats[i] (overflow-checked). Unknown repeats give
 * fresh dims; a symbolic dim keeps its symbol under repeat 1. */
static tgc_status infer_tile(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *rep = tgc_infer_input(c, 1);
    if (!tgc_infer_require_int(c, 1)) return TGC_ERR_INVALID;
    int r = x->shape.rank;
    char sx[TGC_OPS_SHAPE_BUF], sr[TGC_OPS_SHAPE_BUF];
    if (rep->shape.rank >= 0 &&
        (rep->shape.rank != 1 || (r >= 0 && tgc_dim_known(rep->shape.dims[0]) && rep->shape.dims[0].v != r)))
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (repeats) has shape %s; for input %s it must be [%d]",
                              SHAPE(c, &rep->shape, sr), SHAPE(c, &x->shape, sx), r);
    tgc_shape out = x->shape;
    if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    int64_t v[TGC_MAX_RANK];
    int n = 0;
    bool known = tgc_infer_input_concrete_value(c, 1, v, TGC_MAX_RANK, &n);
    if (known && n != r)
        return tgc_infer_fail(c, 1, "bad-input", "input 1 (repeats) has %d values; input %s needs %d", n,
                              SHAPE(c, &x->shape, sx), r);
    for (int i = 0; i < r; i++) {
        if (!known) {
            out.dims[i] = tgc_infer_fresh_dim(c);
            continue;
        }
        if (v[i] < 0)
            return tgc_infer_fail(c, 1, "bad-input", "input 1 (repeats) has %lld at index %d; repeats must be >= 0",
                                  (long long)v[i], i);
        tgc_dim d = x->shape.dims[i];
        int64_t p;
        if (v[i] == 0) out.dims[i] = tgc_dim_of(0);
        else if (!tgc_dim_known(d)) out.dims[i] = v[i] == 1 ? d : tgc_infer_fresh_dim(c);
        else if (tgc_checked_mul_i64(d.v, v[i], &p)) out.dims[i] = tgc_dim_of(p);
        else
            return tgc_infer_fail(c, 1, "size-overflow", "axis %d of input %s repeated %lld times passes 2^63 - 1",
                                  i, SHAPE(c, &x->shape, sx), (long long)v[i]);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

const tgc_op_def tgc_op_Tile = {"Tile", 2, 2, 1, 1, no_attrs, infer_tile};

/* ---- Trilu, EyeLike -------------------------------------------------------------- */

/* Trilu-14: input of rank >= 2, optional int64 scalar k; out like input. */
static tgc_status infer_trilu(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_status st = need_int_scalar(c, 1, "k");
    if (st != TGC_OK) return st;
    if (x->shape.rank >= 0 && x->shape.rank < 2) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; Trilu needs rank >= 2",
                              SHAPE(c, &x->shape, s));
    }
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def trilu_attrs[] = {{"upper", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Trilu = {"Trilu", 1, 2, 1, 1, trilu_attrs, infer_trilu};

/* EyeLike-9: a 2-D input; out has its shape and the dtype `dtype` (an ONNX
 * type code; default the input's). */
static tgc_status infer_eye_like(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (x->shape.rank >= 0 && x->shape.rank != 2) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; EyeLike needs a 2-D input",
                              SHAPE(c, &x->shape, s));
    }
    tgc_dtype t = x->dtype;
    const tgc_attr *a = tgc_infer_attr(c, "dtype");
    if (a != NULL && (t = tgc_dtype_from_onnx(a->i)) == TGC_DTYPE_INVALID)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'dtype' is %lld, not a type tgc has",
                              (long long)a->i);
    return tgc_infer_set_output(c, 0, t, &x->shape);
}

static const tgc_attr_def eye_like_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"k", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_EyeLike = {"EyeLike", 1, 1, 1, 1, eye_like_attrs, infer_eye_like};

/* ---- CumSum, ReverseSequence ------------------------------------------------------- */

/* CumSum-14: float or int input of rank >= 1 (a scalar counts as one
 * element), an int32/int64 scalar axis in [-r, r); out like input. */
static tgc_status infer_cumsum(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_SIGNED)) return TGC_ERR_INVALID;
    tgc_status st = need_int_scalar(c, 1, "axis");
    if (st != TGC_OK) return st;
    int64_t v[1];
    int n = 0, r = x->shape.rank;
    if (r >= 0 && tgc_infer_input_concrete_value(c, 1, v, 1, &n) && n == 1 &&
        (v[0] < -(int64_t)(r > 0 ? r : 1) || v[0] >= (r > 0 ? r : 1)))
        return tgc_infer_fail(c, 1, "bad-input", "input 1 (axis) is %lld, out of range for rank %d",
                              (long long)v[0], r);
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def cumsum_attrs[] = {
    {"exclusive", TGC_ATTR_INT, false}, {"reverse", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_CumSum = {"CumSum", 2, 2, 1, 1, cumsum_attrs, infer_cumsum};

/* ReverseSequence-10: input of rank >= 2, int64 sequence_lens of shape
 * [batch]; batch_axis (default 1) and time_axis (default 0) are 0 and 1 in
 * some order. Out like input. */
static tgc_status infer_reverse_sequence(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *lens = tgc_infer_input(c, 1);
    if (!tgc_infer_require_int(c, 1)) return TGC_ERR_INVALID;
    int64_t b = tgc_infer_attr_int(c, "batch_axis", 1), t = tgc_infer_attr_int(c, "time_axis", 0);
    if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
        return tgc_infer_fail(c, -1, "bad-attribute", "batch_axis %lld and time_axis %lld must be 0 and 1 in "
                              "some order", (long long)b, (long long)t);
    char sx[TGC_OPS_SHAPE_BUF], sl[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; ReverseSequence needs rank >= 2",
                              SHAPE(c, &x->shape, sx));
    tgc_dim m;
    if (lens->shape.rank >= 0 &&
        (lens->shape.rank != 1 ||
         (x->shape.rank >= 2 && !tgc_ops_dim_merge(lens->shape.dims[0], x->shape.dims[b], &m))))
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (sequence_lens) has shape %s; input %s needs "
                              "one length per batch (axis %lld)", SHAPE(c, &lens->shape, sl),
                              SHAPE(c, &x->shape, sx), (long long)b);
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def reverse_sequence_attrs[] = {
    {"batch_axis", TGC_ATTR_INT, false}, {"time_axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_ReverseSequence = {"ReverseSequence", 2, 2, 1, 1, reverse_sequence_attrs,
                                           infer_reverse_sequence};

/* ---- TopK ---------------------------------------------------------------------- */

/* TopK-11: numeric X of rank >= 1, int64 K of one element (0 <= k <= the
 * axis size), axis (default -1), largest, sorted: Values (X's dtype) and
 * Indices (int64) have X's shape with the axis of size k; an unknown k
 * gives a fresh dim. */
static tgc_status infer_top_k(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC)) return TGC_ERR_INVALID;
    tgc_status st = need_int_scalar(c, 1, "K");
    if (st != TGC_OK) return st;
    int r = x->shape.rank, axis;
    char s[TGC_OPS_SHAPE_BUF];
    tgc_shape out = x->shape;
    if (r == 0) return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 is a scalar; TopK needs rank >= 1");
    if (r > 0) {
        if ((st = tgc_ops_axis_attr(c, "axis", -1, r, 0, &axis)) != TGC_OK) return st;
        int64_t v[1];
        int n = 0;
        tgc_dim d = x->shape.dims[axis];
        if (tgc_infer_input_concrete_value(c, 1, v, 1, &n) && n == 1) {
            if (v[0] < 0)
                return tgc_infer_fail(c, 1, "bad-input", "input 1 (K) is %lld; it must be >= 0", (long long)v[0]);
            if (tgc_dim_known(d) && v[0] > d.v)
                return tgc_infer_fail(c, 1, "bad-input", "input 1 (K) is %lld but axis %d of input %s has only "
                                      "%lld elements", (long long)v[0], axis, SHAPE(c, &x->shape, s),
                                      (long long)d.v);
            out.dims[axis] = tgc_dim_of(v[0]);
        } else {
            out.dims[axis] = tgc_infer_fresh_dim(c);
        }
    }
    st = tgc_infer_set_output(c, 0, x->dtype, &out);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 1, TGC_INT64, &out);
    return st;
}

static const tgc_attr_def top_k_attrs[] = {
    {"axis", TGC_ATTR_INT, false}, {"largest", TGC_ATTR_INT, false}, {"sorted", TGC_ATTR_INT, false},
    {NULL, 0, false}};

const tgc_op_def tgc_op_TopK = {"TopK", 2, 2, 2, 2, top_k_attrs, infer_top_k};
