/* Shape ops (ONNX opset 17): Shape, Size, Reshape, Flatten, Transpose,
 * Unsqueeze, Squeeze and Expand. These are where compile-time values
 * matter: Shape and Size make them, Unsqueeze and Squeeze carry them, and
 * Reshape and Expand read their target shape from one, symbols included
 * (Reshape(x [N, 16, 2, 2], [N, -1]) is [N, 64]). */
#include "graph/ops.h"
#include "support/checked.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* ---- Shape, Size ------------------------------------------------------------ */

/* Shape-15: int64 [end - start] holding dims[start:end], where start and
 * end (default 0 and r) count from the back when negative and are clamped
 * to [0, r]. The value is the dims themselves, symbols included. */
static tgc_status infer_shape(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_shape out = {.rank = 1};
    int r = x->shape.rank;
    if (r < 0) {
        out.dims[0] = tgc_infer_fresh_dim(c);
        return tgc_infer_set_output(c, 0, TGC_INT64, &out);
    }
    int64_t start = tgc_infer_attr_int(c, "start", 0), end = tgc_infer_attr_int(c, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    out.dims[0] = tgc_dim_of(len);
    tgc_status st = tgc_infer_set_output(c, 0, TGC_INT64, &out);
    if (st == TGC_OK) st = tgc_infer_set_value(c, 0, (int)len, x->shape.dims + start);
    return st;
}

static const tgc_attr_def shape_attrs[] = {
    {"end", TGC_ATTR_INT, false}, {"start", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Shape = {"Shape", 1, 1, 1, 1, shape_attrs, infer_shape};

/* Size-13: an int64 scalar, the element count. Its value is known when the
 * dims are concrete (or a single symbol times ones). */
static tgc_status infer_size(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_shape out = {.rank = 0};
    tgc_status st = tgc_infer_set_output(c, 0, TGC_INT64, &out);
    if (st != TGC_OK || x->shape.rank < 0) return st;
    int64_t numel = tgc_shape_numel(&x->shape);
    tgc_dim v = tgc_dim_of(numel);
    if (numel < 0) {
        int syms = 0, at = 0;
        int64_t prod = 1;
        for (int i = 0; i < x->shape.rank; i++) {
            tgc_dim d = x->shape.dims[i];
            if (!tgc_dim_known(d)) {
                syms++;
                at = i;
            } else if (d.v < 0 || !tgc_checked_mul_i64(prod, d.v, &prod)) {
                return st;
            }
        }
        if (prod == 0) v = tgc_dim_of(0);
        else if (syms == 1 && prod == 1) v = x->shape.dims[at];
        else return st;
    }
    return tgc_infer_set_value(c, 0, 1, &v);
}

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

const tgc_op_def tgc_op_Size = {"Size", 1, 1, 1, 1, no_attrs, infer_size};

/* ---- Reshape ---------------------------------------------------------------- */

/* A product of dims, split into its concrete part and its symbols. */
typedef struct sym_product {
    int64_t concrete; /* -1 when it overflowed */
    int32_t syms[TGC_MAX_RANK];
    int n_syms;
} sym_product;

static void product_add(sym_product *p, tgc_dim d) {
    if (!tgc_dim_known(d)) {
        p->syms[p->n_syms++] = d.sym;
    } else if (p->concrete >= 0) {
        if (d.v < 0 || !tgc_checked_mul_i64(p->concrete, d.v, &p->concrete)) p->concrete = -1;
    }
}

/* Removes the symbols the two products share (N / N = 1). */
static void product_cancel(sym_product *a, sym_product *b) {
    for (int i = 0; i < a->n_syms; i++)
        for (int j = 0; j < b->n_syms; j++)
            if (a->syms[i] == b->syms[j]) {
                a->syms[i--] = a->syms[--a->n_syms];
                b->syms[j] = b->syms[--b->n_syms];
                break;
            }
}

/* Reshape-14: the target comes from the `shape` input's value: 0 copies the
 * input dim at that index (unless allowzero = 1, when it is a literal 0),
 * -1 (at most one) is inferred so that the element counts agree. With
 * symbols, the count is compared symbolically: equal symbols cancel and the
 * concrete parts divide, so [N, 16, 2, 2] -> [N, -1] gives [N, 64]. What
 * cannot be told is a fresh dim. An unknown target of known length gives
 * that rank with fresh dims. */
static tgc_status infer_reshape(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *shape = tgc_infer_input(c, 1);
    if (!tgc_infer_require_dtype(c, 1, TGC_INT64)) return TGC_ERR_INVALID;
    char sx[TGC_OPS_SHAPE_BUF], st_buf[TGC_OPS_SHAPE_BUF];
    if (shape->shape.rank >= 0 && shape->shape.rank != 1)
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (shape) has shape %s; it must be 1-D",
                              SHAPE(c, &shape->shape, st_buf));
    int64_t allowzero = tgc_infer_attr_int(c, "allowzero", 0);
    const tgc_dim *v;
    int n;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (!tgc_ops_input_value(c, 1, &v, &n)) {
        if (shape->shape.rank == 1 && tgc_dim_known(shape->shape.dims[0])) {
            if (shape->shape.dims[0].v > TGC_MAX_RANK)
                return tgc_infer_fail(c, 1, "bad-input", "the target shape has %lld dims; tgc allows "
                                      "at most %d", (long long)shape->shape.dims[0].v, TGC_MAX_RANK);
            out.rank = (int)shape->shape.dims[0].v;
            for (int i = 0; i < out.rank; i++) out.dims[i] = tgc_infer_fresh_dim(c);
        }
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    }
    if (n > TGC_MAX_RANK)
        return tgc_infer_fail(c, 1, "bad-input", "the target shape has %d dims; tgc allows at most %d",
                              n, TGC_MAX_RANK);
    int r = x->shape.rank, infer_at = -1;
    bool has_zero = false;
    out.rank = n;
    for (int i = 0; i < n; i++) {
        tgc_dim e = v[i];
        if (!tgc_dim_known(e) || e.v > 0) {
            out.dims[i] = e;
        } else if (e.v == -1) {
            if (infer_at >= 0)
                return tgc_infer_fail(c, 1, "bad-input", "the target shape has more than one -1 "
                                      "(at %d and %d)", infer_at, i);
            infer_at = i;
        } else if (e.v == 0) {
            has_zero = true;
            if (allowzero) out.dims[i] = tgc_dim_of(0);
            else if (r < 0) out.dims[i] = tgc_infer_fresh_dim(c);
            else if (i < r) out.dims[i] = x->shape.dims[i];
            else
                return tgc_infer_fail(c, 1, "bad-input", "the target shape has 0 at index %d, but "
                                      "the input %s has no dim there to copy", i,
                                      SHAPE(c, &x->shape, sx));
        } else {
            return tgc_infer_fail(c, 1, "bad-input", "the target shape has %lld at index %d; dims "
                                  "must be >= -1", (long long)e.v, i);
        }
    }
    if (allowzero && has_zero && infer_at >= 0)
        return tgc_infer_fail(c, 1, "bad-input", "with allowzero = 1 the target shape cannot hold "
                              "both 0 and -1");
    if (r >= 0) {
        sym_product in = {.concrete = 1}, target = {.concrete = 1};
        for (int i = 0; i < r; i++) product_add(&in, x->shape.dims[i]);
        for (int i = 0; i < n; i++)
            if (i != infer_at) product_add(&target, out.dims[i]);
        product_cancel(&in, &target);
        if (in.concrete < 0 || target.concrete < 0) {
            if (infer_at >= 0) out.dims[infer_at] = tgc_dim_of(-1);
            return tgc_infer_fail(c, 1, "size-overflow", "cannot reshape %s to %s: the element count "
                                  "of the %s does not fit in int64", SHAPE(c, &x->shape, sx),
                                  SHAPE(c, &out, st_buf), in.concrete < 0 ? "input" : "target");
        }
        bool concrete = true;
        if (infer_at >= 0) {
            tgc_dim d = tgc_dim_of(0);
            bool told = false;
            if (concrete && target.n_syms == 0 && target.concrete != 0) {
                if (in.n_syms == 0 && in.concrete % target.concrete != 0) {
                    out.dims[infer_at] = tgc_dim_of(-1);
                    return tgc_infer_fail(c, 1, "shape-mismatch", "cannot reshape %s to %s: %lld "
                                          "elements do not divide by %lld", SHAPE(c, &x->shape, sx),
                                          SHAPE(c, &out, st_buf), (long long)in.concrete,
                                          (long long)target.concrete);
                }
                if (in.n_syms == 0) {
                    d = tgc_dim_of(in.concrete / target.concrete);
                    told = true;
                } else if (in.n_syms == 1 && in.concrete == target.concrete) {
                    d = tgc_dim_sym(in.syms[0]);
                    told = true;
                }
            }
            out.dims[infer_at] = told ? d : tgc_infer_fresh_dim(c);
        } else if (concrete && in.n_syms == 0 && target.n_syms == 0 && in.concrete != target.concrete) {
            return tgc_infer_fail(c, 1, "shape-mismatch", "cannot reshape %s (%lld elements) to %s "
                                  "(%lld elements)", SHAPE(c, &x->shape, sx), (long long)in.concrete,
                                  SHAPE(c, &out, st_buf), (long long)target.concrete);
        }
    } else if (infer_at >= 0) {
        out.dims[infer_at] = tgc_infer_fresh_dim(c);
    }
    tgc_status st = tgc_infer_set_output(c, 0, x->dtype, &out);
    if (st == TGC_OK) st = tgc_ops_pass_value(c, 0, 0);
    return st;
}

static const tgc_attr_def reshape_attrs[] = {{"allowzero", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Reshape = {"Reshape", 2, 2, 1, 1, reshape_attrs, infer_reshape};

/* ---- Flatten, Transpose ------------------------------------------------------ */

/* Flatten-13: axis in [-r, r] (default 1) -> 2-D
 * [prod(dims[:axis]), prod(dims[axis:])]; an empty product is 1. */
static tgc_status infer_flatten(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_shape out = {.rank = 2};
    if (x->shape.rank < 0) {
        out.dims[0] = tgc_infer_fresh_dim(c);
        out.dims[1] = tgc_infer_fresh_dim(c);
    } else {
        int axis;
        tgc_status st = tgc_ops_axis_attr(c, "axis", 1, x->shape.rank, 1, &axis);
        if (st != TGC_OK) return st;
        out.dims[0] = tgc_ops_dims_product(c, x->shape.dims, axis);
        out.dims[1] = tgc_ops_dims_product(c, x->shape.dims + axis, x->shape.rank - axis);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def axis_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Flatten = {"Flatten", 1, 1, 1, 1, axis_attrs, infer_flatten};

/* Transpose-13: out.dims[i] = in.dims[perm[i]]; perm defaults to the
 * reversed axes and must be a permutation of 0..r-1. */
static tgc_status infer_transpose(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    const int64_t *perm;
    size_t np;
    bool has_perm = tgc_infer_attr_ints(c, "perm", &perm, &np);
    int r = x->shape.rank;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (has_perm && np > TGC_MAX_RANK)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'perm' has %zu entries; tgc allows "
                              "at most %d axes", np, TGC_MAX_RANK);
    if (has_perm) {
        bool seen[TGC_MAX_RANK] = {false};
        int rank = r >= 0 ? r : (int)np;
        bool ok = np == (size_t)rank;
        for (size_t i = 0; ok && i < np; i++) {
            ok = perm[i] >= 0 && perm[i] < rank && !seen[perm[i]];
            if (ok) seen[perm[i]] = true;
        }
        if (!ok) {
            char sx[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'perm' is not a permutation of "
                                  "the %d axes of input %s", rank, SHAPE(c, &x->shape, sx));
        }
        out.rank = rank;
        for (int i = 0; i < rank; i++)
            out.dims[i] = r >= 0 ? x->shape.dims[perm[i]] : tgc_infer_fresh_dim(c);
    } else if (r >= 0) {
        out.rank = r;
        for (int i = 0; i < r; i++) out.dims[i] = x->shape.dims[r - 1 - i];
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def transpose_attrs[] = {{"perm", TGC_ATTR_INTS, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Transpose = {"Transpose", 1, 1, 1, 1, transpose_attrs, infer_transpose};

/* ---- Unsqueeze, Squeeze ------------------------------------------------------ */

/* Unsqueeze-13: axes (an int64 input, here needed as a compile-time value)
 * index the output of rank r + len(axes), in [-(r+k), r+k); a 1 is inserted
 * at each. Without a known axes value the rank is unknown. */
static tgc_status infer_unsqueeze(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_infer_require_dtype(c, 1, TGC_INT64)) return TGC_ERR_INVALID;
    int64_t axes[TGC_MAX_VALUE_LEN];
    int k;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (x->shape.rank < 0 || !tgc_infer_input_concrete_value(c, 1, axes, TGC_MAX_VALUE_LEN, &k))
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    int rank = x->shape.rank + k;
    if (rank > TGC_MAX_RANK)
        return tgc_infer_fail(c, 1, "bad-input", "unsqueezing %d axes into rank %d gives rank %d; tgc "
                              "allows at most %d", k, x->shape.rank, rank, TGC_MAX_RANK);
    tgc_status st = tgc_ops_normalize_axes(c, 1, "axes", axes, k, rank);
    if (st != TGC_OK) return st;
    bool inserted[TGC_MAX_RANK] = {false};
    for (int i = 0; i < k; i++) inserted[axes[i]] = true;
    out.rank = rank;
    for (int i = 0, j = 0; i < rank; i++) out.dims[i] = inserted[i] ? tgc_dim_of(1) : x->shape.dims[j++];
    st = tgc_infer_set_output(c, 0, x->dtype, &out);
    if (st == TGC_OK) st = tgc_ops_pass_value(c, 0, 0);
    return st;
}

const tgc_op_def tgc_op_Unsqueeze = {"Unsqueeze", 2, 2, 1, 1, no_attrs, infer_unsqueeze};

/* Squeeze-13: removes the listed axes (optional int64 input), each of
 * which must be 1; without axes, every dim that is 1 (which needs every dim
 * concrete, as in ONNX's inference; else the rank is unknown). */
static tgc_status infer_squeeze(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_infer_require_dtype(c, 1, TGC_INT64)) return TGC_ERR_INVALID;
    int r = x->shape.rank;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    bool drop[TGC_MAX_RANK] = {false};
    if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    if (tgc_infer_input(c, 1) != NULL) {
        int64_t axes[TGC_MAX_VALUE_LEN];
        int k;
        if (!tgc_infer_input_concrete_value(c, 1, axes, TGC_MAX_VALUE_LEN, &k))
            return tgc_infer_set_output(c, 0, x->dtype, &out);
        tgc_status st = tgc_ops_normalize_axes(c, 1, "axes", axes, k, r);
        if (st != TGC_OK) return st;
        for (int i = 0; i < k; i++) {
            tgc_dim d = x->shape.dims[axes[i]];
            if (tgc_dim_known(d) && d.v != 1) {
                char sx[TGC_OPS_SHAPE_BUF];
                return tgc_infer_fail(c, 1, "shape-mismatch", "cannot squeeze axis %d of %s: its size "
                                      "is %lld, not 1", (int)axes[i], SHAPE(c, &x->shape, sx),
                                      (long long)d.v);
            }
            drop[axes[i]] = true;
        }
    } else {
        if (!tgc_shape_known(&x->shape)) return tgc_infer_set_output(c, 0, x->dtype, &out);
        for (int i = 0; i < r; i++) drop[i] = x->shape.dims[i].v == 1;
    }
    out.rank = 0;
    for (int i = 0; i < r; i++)
        if (!drop[i]) out.dims[out.rank++] = x->shape.dims[i];
    tgc_status st = tgc_infer_set_output(c, 0, x->dtype, &out);
    if (st == TGC_OK) st = tgc_ops_pass_value(c, 0, 0);
    return st;
}

const tgc_op_def tgc_op_Squeeze = {"Squeeze", 1, 2, 1, 1, no_attrs, infer_squeeze};

/* ---- Expand ------------------------------------------------------------------ */

/* Expand-13: the output is the broadcast of the input's shape with the
 * target in the `shape` input's value (a 1 keeps the input's dim). Without a
 * value but with a known length, the target dims are fresh. */
static tgc_status infer_expand(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *shape = tgc_infer_input(c, 1);
    if (!tgc_infer_require_dtype(c, 1, TGC_INT64)) return TGC_ERR_INVALID;
    char sb[TGC_OPS_SHAPE_BUF];
    if (shape->shape.rank >= 0 && shape->shape.rank != 1)
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (shape) has shape %s; it must be 1-D",
                              SHAPE(c, &shape->shape, sb));
    const tgc_dim *v;
    int n;
    tgc_shape target = {.rank = TGC_RANK_UNKNOWN}, out;
    if (tgc_ops_input_value(c, 1, &v, &n)) {
        if (n > TGC_MAX_RANK)
            return tgc_infer_fail(c, 1, "bad-input", "the target shape has %d dims; tgc allows at "
                                  "most %d", n, TGC_MAX_RANK);
        target.rank = n;
        for (int i = 0; i < n; i++) {
            if (tgc_dim_known(v[i]) && v[i].v < 0)
                return tgc_infer_fail(c, 1, "bad-input", "the target shape has %lld at index %d; dims "
                                      "must be >= 0", (long long)v[i].v, i);
            target.dims[i] = v[i];
        }
    } else if (shape->shape.rank == 1 && tgc_dim_known(shape->shape.dims[0]) &&
               shape->shape.dims[0].v <= TGC_MAX_RANK) {
        target.rank = (int)shape->shape.dims[0].v;
        for (int i = 0; i < target.rank; i++) target.dims[i] = tgc_infer_fresh_dim(c);
    }
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &x->shape, &target, &out);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, x->dtype, &out) : st;
}

const tgc_op_def tgc_op_Expand = {"Expand", 2, 2, 1, 1, no_attrs, infer_expand};
