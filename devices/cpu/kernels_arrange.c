/* CPU kernels that rearrange or fill (ONNX opset 17): Tile, Trilu,
 * EyeLike, OneHot, CumSum and ReverseSequence. Tile, Trilu and
 * ReverseSequence move bytes (any dtype by its size; Trilu's zero is all
 * zero bytes in every dtype); EyeLike, OneHot and CumSum compute in the
 * types of elem_types.h. Facts from the ONNX operator docs and
 * onnx/reference/ops (numpy: tile, triu/tril, eye, cumsum). */
#include "devices/cpu/elem_types.h"
#include "devices/cpu/kernels_indexing.h"
#include "devices/cpu/kernels_shape.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <math.h>
#include <string.h>

/* Reads the optional int scalar (or one-element) host input i into *v
 * (dflt when omitted). */
static tgc_status read_scalar(tgc_kernel_ctx *c, int i, const char *what, int64_t dflt, int64_t *v) {
    *v = dflt;
    if (!tgc_kernel_has_input(c, i)) return TGC_OK;
    int n = 0;
    tgc_status st = tgc_kernel_read_ints(c, i, what, v, 1, &n);
    if (st == TGC_OK && n != 1)
        return tgc_kernel_fail(c, "%s: input %d (%s) must hold one value", tgc_kernel_op_name(c), i, what);
    return st;
}

/* ---- Tile ----------------------------------------------------------------------- */

/* Fills the out block from axis d on with src's block tiled: the first
 * copy along d is built axis by axis, then repeated rep[d] - 1 times.
 * xin/oin: bytes of one step along each axis of x / out. */
static void tile_from(int d, int r, const int64_t *xd, const int64_t *rep, const size_t *xin, const size_t *oin,
                      const char *src, char *dst) {
    size_t first = (size_t)xd[d] * oin[d];
    if (d == r - 1)
        memcpy(dst, src, first);
    else
        for (int64_t i = 0; i < xd[d]; i++)
            tile_from(d + 1, r, xd, rep, xin, oin, src + (size_t)i * xin[d], dst + (size_t)i * oin[d]);
    for (int64_t k = 1; k < rep[d]; k++) memcpy(dst + (size_t)k * first, dst, first);
}

/* Tile-13: out dim i = dim i * repeats[i]; repeats (input 1, host memory)
 * int64 [rank] >= 0. */
tgc_status tgc_cpu_tile(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    int64_t rep[TGC_MAX_RANK], dims[TGC_MAX_RANK];
    int n = 0;
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "repeats", rep, TGC_MAX_RANK, &n);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank;
    if (n != r) return tgc_kernel_fail(c, "Tile: input 1 (repeats) has %d values; input 0 has rank %d", n, r);
    for (int i = 0; i < r; i++) {
        if (rep[i] < 0) return tgc_kernel_fail(c, "Tile: repeats[%d] is %lld; it must be >= 0", i, (long long)rep[i]);
        if (!tgc_checked_mul_i64(x->dims[i], rep[i], &dims[i]))
            return tgc_kernel_fail(c, "Tile: axis %d repeated %lld times is too large", i, (long long)rep[i]);
    }
    if ((st = tgc_kernel_expect_dims(c, 0, r, dims)) != TGC_OK) return st;
    size_t es = tgc_dtype_size(x->dtype), xin[TGC_MAX_RANK], oin[TGC_MAX_RANK];
    if (tgc_value_numel(&c->outputs[0]) == 0) return TGC_OK;
    if (r == 0) {
        memcpy(tgc_kernel_out_ptr(c, 0), tgc_kernel_in_ptr(c, 0), es);
        return TGC_OK;
    }
    xin[r - 1] = oin[r - 1] = es;
    for (int d = r - 2; d >= 0; d--) {
        xin[d] = xin[d + 1] * (size_t)x->dims[d + 1];
        oin[d] = oin[d + 1] * (size_t)dims[d + 1];
    }
    tile_from(0, r, x->dims, rep, xin, oin, tgc_kernel_in_ptr(c, 0), tgc_kernel_out_ptr(c, 0));
    return TGC_OK;
}

/* ---- Trilu ------------------------------------------------------------------------- */

/* Trilu-14: each trailing [N, M] matrix keeps the elements on and above
 * (upper, default 1) or on and below (upper 0) the k-th diagonal (k:
 * optional int64 scalar input 1, default 0; element (i, j) is on it when
 * j - i == k); the rest become 0. */
tgc_status tgc_cpu_trilu(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 1);
    int64_t k = 0;
    if (st == TGC_OK) st = read_scalar(c, 1, "k", 0, &k);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank;
    if (r < 2) return tgc_kernel_fail(c, "Trilu: input 0 has rank %d; it needs rank >= 2", r);
    if ((st = tgc_kernel_expect_dims(c, 0, r, x->dims)) != TGC_OK) return st;
    bool upper = tgc_kernel_attr_int(c, "upper", 1) != 0;
    int64_t rows = x->dims[r - 2], cols = x->dims[r - 1], mats = tgc_cpu_dims_product(x->dims, r - 2);
    size_t es = tgc_dtype_size(x->dtype), row = (size_t)cols * es;
    char *dst = tgc_kernel_out_ptr(c, 0);
    tgc_cpu_copy_bytes(dst, tgc_kernel_in_ptr(c, 0), tgc_value_nbytes(x));
    if (k > cols) k = cols + 1; /* clamped: no i + k can overflow, nothing changes past the edges */
    if (k < -rows) k = -rows - 1;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++, dst += row) {
            /* upper zeroes columns [0, i + k), lower zeroes [i + k + 1, cols) */
            int64_t from = upper ? 0 : i + k + 1, to = upper ? i + k : cols;
            if (from < 0) from = 0;
            if (to > cols) to = cols;
            if (to > from) memset(dst + (size_t)from * es, 0, (size_t)(to - from) * es);
        }
    return TGC_OK;
}

/* ---- EyeLike ----------------------------------------------------------------------- */

/* Writes the value 1 of dtype t into p; false for a dtype not listed. */
static bool store_one(tgc_dtype t, void *p) {
    switch (t) {
#define CASE(dt, ST, CT, tag)                                                                                          \
    case dt: {                                                                                                         \
        ST one = tgc_cpu_st_##tag((CT)1);                                                                              \
        memcpy(p, &one, sizeof one);                                                                                   \
        return true;                                                                                                   \
    }
        TGC_CPU_ALL_TYPES(CASE)
#undef CASE
    default: return false;
    }
}

/* EyeLike-9: out (input 0's 2-D shape, dtype from attribute `dtype` as
 * inferred) is 1 on the k-th diagonal (attribute k, default 0: element
 * (i, i + k)) and 0 elsewhere. Input 0's values are not read. */
tgc_status tgc_cpu_eye_like(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *o = &c->outputs[0];
    if (x->rank != 2) return tgc_kernel_fail(c, "EyeLike: input 0 has rank %d; it must be 2-D", x->rank);
    if ((st = tgc_kernel_expect_dims(c, 0, 2, x->dims)) != TGC_OK) return st;
    int64_t k = tgc_kernel_attr_int(c, "k", 0), rows = x->dims[0], cols = x->dims[1];
    size_t es = tgc_dtype_size(o->dtype);
    char *dst = tgc_kernel_out_ptr(c, 0);
    if (rows == 0 || cols == 0) return TGC_OK;
    memset(dst, 0, tgc_value_nbytes(o));
    if (k >= cols || k <= -rows) return TGC_OK;
    for (int64_t i = k < 0 ? -k : 0; i < rows && i + k < cols; i++)
        if (!store_one(o->dtype, dst + (size_t)(i * cols + i + k) * es))
            return tgc_kernel_fail(c, "EyeLike: no 1 of %s", tgc_dtype_name(o->dtype));
    return TGC_OK;
}

/* ---- OneHot ------------------------------------------------------------------------ */

/* OneHot-11: indices of rank r (any numeric dtype), depth (host input 1,
 * one value of any numeric dtype, cast to int64), values [off, on]: out
 * (values' dtype) has depth inserted into the indices' shape at `axis`
 * (default -1, in [-r-1, r]); out[.., d, ..] is on where the index (plus
 * depth when negative) equals d, else off, so an index outside
 * [-depth, depth) or not an integer gives all off (ONNX's reference). The
 * kernel sizes its output (the depth may be of a dtype inference cannot
 * read). */
tgc_status tgc_cpu_one_hot(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 3, 0);
    if (st != TGC_OK) return st;
    const tgc_value *ind = &c->inputs[0], *dv = &c->inputs[1], *vals = &c->inputs[2];
    if (tgc_value_numel(dv) != 1 || dv->rank > 1)
        return tgc_kernel_fail(c, "OneHot: input 1 (depth) must hold one value");
    if (vals->rank != 1 || vals->dims[0] != 2)
        return tgc_kernel_fail(c, "OneHot: input 2 (values) must be [off, on], of shape [2]");
    if (c->outputs[0].dtype != vals->dtype)
        return tgc_kernel_fail(c, "OneHot: output 0 is %s but values are %s", tgc_dtype_name(c->outputs[0].dtype),
                               tgc_dtype_name(vals->dtype));
    if (!tgc_cpu_dtype_listed(ind->dtype) || !tgc_cpu_dtype_listed(dv->dtype))
        return tgc_kernel_fail(c, "OneHot: indices (%s) and depth (%s) must be numeric", tgc_dtype_name(ind->dtype),
                               tgc_dtype_name(dv->dtype));
    double df = tgc_cpu_elem_f64(dv->dtype, tgc_kernel_in_ptr(c, 1), 0);
    if (!(df >= 0 && df < 9.2e18)) return tgc_kernel_fail(c, "OneHot: input 1 (depth) is %g; it must be >= 0", df);
    int64_t depth = (int64_t)df, axis = tgc_kernel_attr_int(c, "axis", -1);
    int r = ind->rank;
    if (r + 1 > TGC_MAX_RANK) return tgc_kernel_fail(c, "OneHot: the result would have rank %d", r + 1);
    if (axis < -(int64_t)r - 1 || axis > r)
        return tgc_kernel_fail(c, "OneHot: attribute 'axis' is %lld, out of range for rank %d", (long long)axis, r + 1);
    if (axis < 0) axis += r + 1;
    int64_t dims[TGC_MAX_RANK];
    for (int i = 0, j = 0; i <= r; i++) dims[i] = i == axis ? depth : ind->dims[j++];
    if ((st = tgc_kernel_alloc_output(c, 0, r + 1, dims)) != TGC_OK) return st;
    if (tgc_value_numel(&c->outputs[0]) == 0) return TGC_OK; /* (a huge depth with no indices: no loop) */
    int64_t outer = tgc_cpu_dims_product(ind->dims, (int)axis);
    int64_t inner = tgc_cpu_dims_product(ind->dims + axis, r - (int)axis);
    size_t es = tgc_dtype_size(vals->dtype);
    const char *off = tgc_kernel_in_ptr(c, 2), *on = off + es;
    const void *ip = tgc_kernel_in_ptr(c, 0);
    char *dst = tgc_kernel_out_ptr(c, 0);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t d = 0; d < depth; d++)
            for (int64_t i = 0; i < inner; i++, dst += es) {
                double v = tgc_cpu_elem_f64(ind->dtype, ip, o * inner + i);
                if (v < 0) v += (double)depth;
                tgc_cpu_copy_elem(dst, v == (double)d ? on : off, es);
            }
    return TGC_OK;
}

/* ---- CumSum ------------------------------------------------------------------------ */

/* A running sum rounded to the stored type at each step, as numpy's
 * cumsum of float16 rounds (a no-op for the other types). */
#define RUN_ADD(tag, acc, v) tgc_cpu_ld_##tag(tgc_cpu_st_##tag(tgc_cpu_add_##tag((acc), (v))))

/* cumsum_<tag>: running sums along the middle axis of [outer, n, inner].
 * With inner > 1 and a row of inner running sums in memory (acc, may be
 * NULL), the sums of a step are taken across the row, x and y read and
 * written in order (each lane's sums one after another, as before; lane
 * by lane, a [64, 4096, 64] CumSum over axis 1 read x 256 bytes apart and
 * took 2.8x ONNX Runtime's time); else lane by lane. */
#define CUMSUM(dt, ST, CT, tag)                                                                                        \
    static void cumsum_##tag(const ST *x, ST *y, int64_t outer, int64_t n, int64_t inner, bool exclusive,              \
                             bool reverse, CT *acc) {                                                                  \
        if (inner > 1 && acc != NULL) {                                                                                \
            for (int64_t o = 0; o < outer; o++) {                                                                      \
                for (int64_t i = 0; i < inner; i++) acc[i] = (CT)0;                                                    \
                for (int64_t s = 0; s < n; s++) {                                                                      \
                    int64_t at = (o * n + (reverse ? n - 1 - s : s)) * inner;                                          \
                    for (int64_t i = 0; i < inner; i++) {                                                              \
                        CT v = tgc_cpu_ld_##tag(x[at + i]);                                                            \
                        if (!exclusive) acc[i] = RUN_ADD(tag, acc[i], v);                                              \
                        y[at + i] = tgc_cpu_st_##tag(acc[i]);                                                          \
                        if (exclusive) acc[i] = RUN_ADD(tag, acc[i], v);                                               \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
            return;                                                                                                    \
        }                                                                                                              \
        for (int64_t o = 0; o < outer; o++)                                                                            \
            for (int64_t i = 0; i < inner; i++) {                                                                      \
                CT a = (CT)0;                                                                                          \
                for (int64_t s = 0; s < n; s++) {                                                                      \
                    int64_t at = (o * n + (reverse ? n - 1 - s : s)) * inner + i;                                      \
                    CT v = tgc_cpu_ld_##tag(x[at]);                                                                    \
                    if (!exclusive) a = RUN_ADD(tag, a, v);                                                            \
                    y[at] = tgc_cpu_st_##tag(a);                                                                       \
                    if (exclusive) a = RUN_ADD(tag, a, v);                                                             \
                }                                                                                                      \
            }                                                                                                          \
    }
TGC_CPU_SIGNED_TYPES(CUMSUM)
#undef CUMSUM
#undef RUN_ADD

/* CumSum-14: running sums of input 0 (float or int) along the axis given
 * by input 1 (host int scalar, in [-r, r)); exclusive leaves out the
 * element itself (the first sum is 0), reverse runs from the end. */
tgc_status tgc_cpu_cumsum(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    int64_t axis = 0;
    if (st == TGC_OK) st = read_scalar(c, 1, "axis", 0, &axis);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int r = x->rank > 0 ? x->rank : 1;
    if (axis < -r || axis >= r)
        return tgc_kernel_fail(c, "CumSum: input 1 (axis) is %lld, out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0) axis += r;
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    int64_t outer = 1, n = 1, inner = 1;
    if (x->rank > 0) {
        outer = tgc_cpu_dims_product(x->dims, (int)axis);
        n = x->dims[axis];
        inner = tgc_cpu_dims_product(x->dims + axis + 1, x->rank - (int)axis - 1);
    }
    if (outer == 0 || n == 0 || inner == 0) return TGC_OK;
    bool exclusive = tgc_kernel_attr_int(c, "exclusive", 0) != 0, reverse = tgc_kernel_attr_int(c, "reverse", 0) != 0;
    const void *src = tgc_kernel_in_ptr(c, 0);
    void *dst = tgc_kernel_out_ptr(c, 0);
    void *acc = inner > 1 && (size_t)inner <= SIZE_MAX / sizeof(double) ? tgc_malloc((size_t)inner * sizeof(double))
                                                                         : NULL; /* NULL: lane by lane */
    switch (x->dtype) {
#define CASE(dt, ST, CT, tag)                                                                                          \
    case dt:                                                                                                           \
        _Static_assert(sizeof(CT) <= sizeof(double), "a running sum fits a double's place");                         \
        cumsum_##tag(src, dst, outer, n, inner, exclusive, reverse, acc);                                              \
        tgc_free(acc);                                                                                                 \
        return TGC_OK;
        TGC_CPU_SIGNED_TYPES(CASE)
#undef CASE
    default:
        tgc_free(acc);
        return tgc_kernel_fail(c, "CumSum: input 0 is %s; it must be a float or int", tgc_dtype_name(x->dtype));
    }
}

/* ---- ReverseSequence --------------------------------------------------------------- */

/* ReverseSequence-10: for each batch b (along batch_axis, default 1) the
 * first sequence_lens[b] steps along time_axis (default 0) are reversed,
 * the rest copied; the two axes are 0 and 1; sequence_lens (input 1, int)
 * has one length in [0, time size] per batch. */
tgc_status tgc_cpu_reverse_sequence(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    if (st == TGC_OK) st = tgc_cpu_need_indices(c, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *lens = &c->inputs[1];
    int64_t ba = tgc_kernel_attr_int(c, "batch_axis", 1), ta = tgc_kernel_attr_int(c, "time_axis", 0);
    if (x->rank < 2 || !((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return tgc_kernel_fail(c, "ReverseSequence: rank %d, batch_axis %lld, time_axis %lld; it needs rank >= 2 "
                               "and the two axes 0 and 1", x->rank, (long long)ba, (long long)ta);
    int64_t batches = x->dims[ba], steps = x->dims[ta];
    if (lens->rank != 1 || lens->dims[0] != batches)
        return tgc_kernel_fail(c, "ReverseSequence: input 1 (sequence_lens) must hold %lld lengths, one per batch",
                               (long long)batches);
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    const void *lp = tgc_kernel_in_ptr(c, 1);
    for (int64_t b = 0; b < batches; b++) {
        int64_t len = tgc_cpu_shape_int_at(lens->dtype, lp, b);
        if (len < 0 || len > steps)
            return tgc_kernel_fail(c, "ReverseSequence: sequence_lens[%lld] is %lld; it must be in [0, %lld]",
                                   (long long)b, (long long)len, (long long)steps);
    }
    size_t block = (size_t)tgc_cpu_dims_product(x->dims + 2, x->rank - 2) * tgc_dtype_size(x->dtype);
    size_t bstride = ba == 0 ? (size_t)steps * block : block, tstride = ta == 0 ? (size_t)batches * block : block;
    const char *src = tgc_kernel_in_ptr(c, 0);
    char *dst = tgc_kernel_out_ptr(c, 0);
    if (block == 0) return TGC_OK;
    for (int64_t b = 0; b < batches; b++) {
        int64_t len = tgc_cpu_shape_int_at(lens->dtype, lp, b);
        for (int64_t t = 0; t < steps; t++) {
            int64_t from = t < len ? len - 1 - t : t;
            memcpy(dst + (size_t)b * bstride + (size_t)t * tstride, src + (size_t)b * bstride + (size_t)from * tstride,
                   block);
        }
    }
    return TGC_OK;
}
