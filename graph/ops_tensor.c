/* Indexing and joining ops (ONNX opset 17): Gather, Concat, Split and
 * Slice. Besides shapes, these fold the compile-time values of small
 * integer tensors, so shape arithmetic such as
 * Concat(Gather(Shape(x), [0]), [-1]) is known before anything runs. */
#include "graph/ops.h"
#include "support/checked.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* ---- Gather ------------------------------------------------------------------ */

/* Gather-13: data of rank r >= 1, indices of rank q, axis in [-r, r):
 * out = data.shape[:axis] + indices.shape + data.shape[axis+1:], rank
 * r + q - 1. Concrete indices are checked against a concrete axis size
 * (negative ones count from the back) and pick elements of a known 1-D
 * value. */
static tgc_status infer_gather(tgc_infer_ctx *c) {
    const tgc_tensor_info *data = tgc_infer_input(c, 0), *idx = tgc_infer_input(c, 1);
    if (!tgc_infer_require_int(c, 1)) return TGC_ERR_INVALID;
    int r = data->shape.rank, q = idx->shape.rank;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (r == 0)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 is a scalar; Gather needs data of rank >= 1");
    if (r < 0) return tgc_infer_set_output(c, 0, data->dtype, &out);
    int axis;
    tgc_status st = tgc_ops_axis_attr(c, "axis", 0, r, 0, &axis);
    if (st != TGC_OK) return st;
    int64_t iv[TGC_MAX_VALUE_LEN];
    int ni = 0;
    bool known = tgc_infer_input_concrete_value(c, 1, iv, TGC_MAX_VALUE_LEN, &ni);
    tgc_dim size = data->shape.dims[axis];
    for (int i = 0; known && i < ni; i++) {
        if (tgc_dim_known(size) && (iv[i] < -size.v || iv[i] >= size.v)) {
            char sd[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 1, "bad-input", "index %lld is out of range for axis %d of data %s",
                                  (long long)iv[i], axis, SHAPE(c, &data->shape, sd));
        }
        if (tgc_dim_known(size) && iv[i] < 0) iv[i] += size.v;
    }
    if (q < 0) return tgc_infer_set_output(c, 0, data->dtype, &out);
    if (r + q - 1 > TGC_MAX_RANK)
        return tgc_infer_fail(c, 1, "bad-input", "the result would have rank %d; tgc allows at most %d",
                              r + q - 1, TGC_MAX_RANK);
    out.rank = 0;
    for (int i = 0; i < axis; i++) out.dims[out.rank++] = data->shape.dims[i];
    for (int i = 0; i < q; i++) out.dims[out.rank++] = idx->shape.dims[i];
    for (int i = axis + 1; i < r; i++) out.dims[out.rank++] = data->shape.dims[i];
    st = tgc_infer_set_output(c, 0, data->dtype, &out);
    const tgc_dim *dv;
    int nd;
    if (st != TGC_OK || !known || !tgc_ops_input_value(c, 0, &dv, &nd) || r != 1) return st;
    tgc_dim picked[TGC_MAX_VALUE_LEN];
    for (int i = 0; i < ni; i++) {
        if (iv[i] < 0 || iv[i] >= nd) return st;
        picked[i] = dv[iv[i]];
    }
    return tgc_infer_set_value(c, 0, ni, picked);
}

static const tgc_attr_def axis_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Gather = {"Gather", 2, 2, 1, 1, axis_attrs, infer_gather};

/* ---- Concat ------------------------------------------------------------------ */

/* Concat-13: inputs of one type and rank r >= 1 whose dims agree except on
 * `axis`, which adds up. Known 1-D values concatenate. */
static tgc_status infer_concat(tgc_infer_ctx *c) {
    int n = tgc_infer_num_inputs(c);
    const tgc_tensor_info *first = tgc_infer_input(c, 0);
    int r = TGC_RANK_UNKNOWN, r_from = 0;
    bool all_ranked = true;
    for (int i = 0; i < n; i++) {
        const tgc_tensor_info *in = tgc_infer_input(c, i);
        if (in == NULL) return tgc_infer_fail(c, i, "bad-input", "input %d may not be omitted", i);
        if (!tgc_infer_require_same_dtype(c, 0, i)) return TGC_ERR_INVALID;
        if (in->shape.rank < 0) {
            all_ranked = false;
        } else if (r < 0) {
            r = in->shape.rank;
            r_from = i;
        } else if (in->shape.rank != r) {
            char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d has shape %s but input %d has shape "
                                  "%s; Concat needs one rank", i, SHAPE(c, &in->shape, sb), r_from,
                                  SHAPE(c, &tgc_infer_input(c, r_from)->shape, sa));
        }
    }
    tgc_shape out = {.rank = r};
    if (r < 0) return tgc_infer_set_output(c, 0, first->dtype, &out);
    if (r == 0)
        return tgc_infer_fail(c, r_from, "shape-mismatch", "input %d is a scalar; Concat needs rank >= 1",
                              r_from);
    if (tgc_infer_attr(c, "axis") == NULL)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'axis' is required");
    int axis;
    tgc_status st = tgc_ops_axis_attr(c, "axis", 0, r, 0, &axis);
    if (st != TGC_OK) return st;
    out = tgc_infer_input(c, r_from)->shape;
    int64_t sum = 0;
    int n_syms = 0;
    tgc_dim sym = tgc_dim_of(0);
    for (int i = 0; i < n; i++) {
        const tgc_shape *s = &tgc_infer_input(c, i)->shape;
        if (s->rank < 0) continue;
        for (int j = 0; j < r; j++) {
            if (j == axis) continue;
            if (!tgc_ops_dim_merge(out.dims[j], s->dims[j], &out.dims[j])) {
                char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
                return tgc_infer_fail(c, i, "shape-mismatch", "input %d has shape %s but input %d has "
                                      "shape %s; they may differ only on axis %d", i, SHAPE(c, s, sb),
                                      r_from, SHAPE(c, &tgc_infer_input(c, r_from)->shape, sa), axis);
            }
        }
        tgc_dim d = s->dims[axis];
        if (!tgc_dim_known(d)) n_syms++, sym = d;
        else if (d.v < 0 || !tgc_checked_add_i64(sum, d.v, &sum)) {
            char si[1024];
            return tgc_infer_fail(c, i, "size-overflow", "the sizes of axis %d add up past 2^63 - 1 at "
                                  "input %d; the inputs have shapes %s", axis, i,
                                  tgc_infer_input_shapes_str(c, si, sizeof si));
        }
    }
    if (!all_ranked || n_syms > 1 || (n_syms == 1 && sum != 0))
        out.dims[axis] = tgc_infer_fresh_dim(c);
    else out.dims[axis] = n_syms == 1 ? sym : tgc_dim_of(sum);
    st = tgc_infer_set_output(c, 0, first->dtype, &out);
    if (st != TGC_OK || r != 1) return st;
    tgc_dim value[TGC_MAX_VALUE_LEN];
    int len = 0;
    for (int i = 0; i < n; i++) {
        const tgc_dim *v;
        int nv;
        if (!tgc_ops_input_value(c, i, &v, &nv) || len + nv > TGC_MAX_VALUE_LEN) return st;
        if (nv > 0) memcpy(value + len, v, (size_t)nv * sizeof *v);
        len += nv;
    }
    return tgc_infer_set_value(c, 0, len, value);
}

static const tgc_attr_def concat_attrs[] = {{"axis", TGC_ATTR_INT, true}, {NULL, 0, false}};

const tgc_op_def tgc_op_Concat = {"Concat", 1, -1, 1, 1, concat_attrs, infer_concat};

/* ---- Split ------------------------------------------------------------------- */

/* Split-13: the node's outputs split `axis` (default 0) by the optional
 * int64 `split` input, whose length must equal the number of outputs and
 * whose sum must equal the axis size; without it the axis splits evenly
 * (the size must divide; an unknown size gives every output one fresh dim). */
static tgc_status infer_split(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *split = tgc_infer_input(c, 1);
    if (!tgc_infer_require_dtype(c, 1, TGC_INT64)) return TGC_ERR_INVALID;
    int n = tgc_infer_num_outputs(c), r = x->shape.rank;
    char sx[TGC_OPS_SHAPE_BUF];
    tgc_status st = TGC_OK;
    if (r == 0)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 is a scalar; Split needs rank >= 1");
    const tgc_dim *v = NULL;
    int nv = -1;
    bool has_value = false;
    if (split != NULL) {
        if (split->shape.rank >= 0 && split->shape.rank != 1) {
            char ss[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (split) has shape %s; it must be 1-D",
                                  SHAPE(c, &split->shape, ss));
        }
        has_value = tgc_ops_input_value(c, 1, &v, &nv);
        if (!has_value && split->shape.rank == 1 && tgc_dim_known(split->shape.dims[0]))
            nv = (int)split->shape.dims[0].v;
        if (nv >= 0 && nv != n)
            return tgc_infer_fail(c, 1, "bad-input", "input 1 (split) has %d sizes but the node has %d "
                                  "outputs", nv, n);
    }
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (r < 0) {
        for (int i = 0; i < n && st == TGC_OK; i++) st = tgc_infer_set_output(c, i, x->dtype, &out);
        return st;
    }
    int axis;
    st = tgc_ops_axis_attr(c, "axis", 0, r, 0, &axis);
    if (st != TGC_OK) return st;
    tgc_dim d = x->shape.dims[axis], sizes[TGC_MAX_VALUE_LEN] = {{0, 0}};
    if (n > TGC_MAX_VALUE_LEN)
        return tgc_infer_fail(c, -1, "bad-input", "Split has %d outputs; tgc allows at most %d", n,
                              TGC_MAX_VALUE_LEN);
    if (has_value) {
        int64_t sum = 0;
        bool concrete = true;
        for (int i = 0; i < n; i++) {
            if (tgc_dim_known(v[i]) && v[i].v < 0)
                return tgc_infer_fail(c, 1, "bad-input", "input 1 (split) has %lld at index %d; sizes "
                                      "must be >= 0", (long long)v[i].v, i);
            concrete = concrete && tgc_dim_known(v[i]);
            if (tgc_dim_known(v[i]) && !tgc_checked_add_i64(sum, v[i].v, &sum))
                return tgc_infer_fail(c, 1, "size-overflow", "input 1 (split) has sizes that add up "
                                      "past 2^63 - 1 (at index %d)", i);
            sizes[i] = v[i];
        }
        if (concrete && tgc_dim_known(d) && sum != d.v)
            return tgc_infer_fail(c, 1, "shape-mismatch", "the split sizes add up to %lld but axis %d "
                                  "of input %s has %lld", (long long)sum, axis,
                                  SHAPE(c, &x->shape, sx), (long long)d.v);
    } else if (split != NULL) {
        for (int i = 0; i < n; i++) sizes[i] = tgc_infer_fresh_dim(c);
    } else if (tgc_dim_known(d)) {
        if (d.v % n != 0)
            return tgc_infer_fail(c, 0, "shape-mismatch", "axis %d of input %s has size %lld, which does "
                                  "not split evenly into %d outputs", axis, SHAPE(c, &x->shape, sx),
                                  (long long)d.v, n);
        for (int i = 0; i < n; i++) sizes[i] = tgc_dim_of(d.v / n);
    } else {
        tgc_dim part = n == 1 ? d : tgc_infer_fresh_dim(c);
        for (int i = 0; i < n; i++) sizes[i] = part;
    }
    for (int i = 0; i < n && st == TGC_OK; i++) {
        out = x->shape;
        out.dims[axis] = sizes[i];
        st = tgc_infer_set_output(c, i, x->dtype, &out);
    }
    return st;
}

const tgc_op_def tgc_op_Split = {"Split", 1, 2, 1, -1, axis_attrs, infer_split};

/* ---- Slice ------------------------------------------------------------------- */

/* The ONNX clamping of one slice on an axis of concrete size d (Slice-13):
 * negative start/end count from the back; for step > 0 both clamp to
 * [0, d], for step < 0 start clamps to [0, d-1] and end to [-1, d-1];
 * the length is max(0, ceil((end - start) / step)). */
static void slice_bounds(int64_t d, int64_t *start, int64_t *end, int64_t step, int64_t *len) {
    int64_t s = *start, e = *end;
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
    } else {
        s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    }
    /* ceil(span / step) when it is positive, without overflow for huge steps. */
    int64_t span = e - s;
    bool forward = (step > 0 && span > 0) || (step < 0 && span < 0);
    *start = s;
    *end = e;
    *len = forward ? span / step + (span % step != 0) : 0;
}

/* Reads input i of Slice (starts, ends, axes, steps) as concrete ints:
 * 1 known, 0 unknown or omitted; *count gets its length when that is known
 * (from the value or the shape), else stays. */
static bool slice_input(tgc_infer_ctx *c, int i, int64_t *out, int *count) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    int n;
    if (in == NULL) return false;
    if (tgc_infer_input_concrete_value(c, i, out, TGC_MAX_RANK, &n)) {
        *count = n;
        return true;
    }
    if (in->shape.rank == 1 && tgc_dim_known(in->shape.dims[0])) *count = (int)in->shape.dims[0].v;
    return false;
}

/* Slice-13: starts, ends and the optional axes (default 0..k-1) and steps
 * (default 1) are int32/int64 inputs of one length k. Each sliced axis of
 * concrete size gets its clamped length; a symbolic axis keeps its symbol
 * only when the slice takes it whole (start 0, end >= 2^31 - 1, step 1, or
 * the same reversed), else a fresh dim. A known 1-D value is sliced too. */
static tgc_status infer_slice(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    static const char *const names[] = {"data", "starts", "ends", "axes", "steps"};
    for (int i = 1; i < 5; i++)
        if (!tgc_infer_require_int(c, i) || !tgc_infer_require_same_dtype(c, 1, i))
            return TGC_ERR_INVALID;
    int r = x->shape.rank;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    int64_t vals[5][TGC_MAX_RANK];
    bool known[5] = {false};
    int counts[5] = {-1, -1, -1, -1, -1};
    for (int i = 1; i < 5; i++) known[i] = slice_input(c, i, vals[i], &counts[i]);
    int k = counts[1] >= 0 ? counts[1] : counts[2];
    for (int i = 1; i < 5; i++)
        if (counts[i] >= 0 && k >= 0 && counts[i] != k)
            return tgc_infer_fail(c, i, "bad-input", "input %d (%s) has %d elements but input %d "
                                  "(%s) has %d; they must agree", i, names[i], counts[i],
                                  counts[1] >= 0 ? 1 : 2, names[counts[1] >= 0 ? 1 : 2], k);
    if (k > r)
        return tgc_infer_fail(c, 1, "bad-input", "slicing %d axes of a rank-%d input", k, r);
    out = x->shape;
    bool has_axes = tgc_infer_input(c, 3) != NULL, has_steps = tgc_infer_input(c, 4) != NULL;
    if (k < 0 || (has_axes && !known[3])) {
        /* Which axes are sliced is unknown: any dim may change. */
        for (int i = 0; i < r; i++) out.dims[i] = tgc_infer_fresh_dim(c);
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    }
    int64_t axes[TGC_MAX_RANK];
    for (int i = 0; i < k; i++) axes[i] = has_axes ? vals[3][i] : i;
    tgc_status st = tgc_ops_normalize_axes(c, 3, "axes", axes, k, r);
    if (st != TGC_OK) return st;
    bool concrete = known[1] && known[2] && (!has_steps || known[4]);
    int64_t start0 = 0, step0 = 1, len0 = -1;
    for (int i = 0; i < k; i++) {
        int a = (int)axes[i];
        int64_t step = has_steps && known[4] ? vals[4][i] : 1;
        if (step == 0)
            return tgc_infer_fail(c, 4, "bad-input", "input 4 (steps) has 0 at index %d; steps must "
                                  "not be 0", i);
        if (!concrete) {
            out.dims[a] = tgc_infer_fresh_dim(c);
            continue;
        }
        int64_t s = vals[1][i], e = vals[2][i], len;
        tgc_dim d = x->shape.dims[a];
        if (tgc_dim_known(d)) {
            slice_bounds(d.v, &s, &e, step, &len);
            out.dims[a] = tgc_dim_of(len);
            if (a == 0) start0 = s, step0 = step, len0 = len;
        } else {
            bool whole = (step == 1 && (s == 0 || s <= -INT32_MAX) && e >= INT32_MAX) ||
                         (step == -1 && (s == -1 || s >= INT32_MAX) && e <= -INT32_MAX);
            out.dims[a] = whole ? d : tgc_infer_fresh_dim(c);
        }
    }
    st = tgc_infer_set_output(c, 0, x->dtype, &out);
    const tgc_dim *v;
    int nv;
    if (st != TGC_OK || r != 1 || !concrete || !tgc_ops_input_value(c, 0, &v, &nv)) return st;
    if (k == 0) return tgc_infer_set_value(c, 0, nv, v);
    tgc_dim picked[TGC_MAX_VALUE_LEN];
    for (int64_t i = 0; i < len0; i++) {
        int64_t at = start0 + i * step0;
        if (at < 0 || at >= nv) return st;
        picked[i] = v[at];
    }
    return tgc_infer_set_value(c, 0, (int)len0, picked);
}

const tgc_op_def tgc_op_Slice = {"Slice", 3, 5, 1, 1, no_attrs, infer_slice};
