/* The cpu reduction kernels, ONNX opset 17 semantics:
 *     ReduceSum-13     axes as input 1 (int64, host memory), keepdims,
 *                      noop_with_empty_axes; float32 float64 int32 int64
 *     ReduceMean-13    axes attribute, keepdims; float32 float64 int32 int64
 *     ReduceMax-13     axes attribute, keepdims; float32 float64 int32 int64 uint8
 *     ArgMax-13        axis, keepdims, select_last_point_index; int64 output
 *                      (float32 float64 int32 int64 uint8)
 *     Softmax-13, LogSoftmax-13   along `axis` (default -1) alone; float32;
 *                      exp from the Exp row, rows split over the pool
 * and tgc_cpu_kernels_reduce[], the list the registry reads.
 *
 * A reduction walks its input with the broadcasting iterator (broadcast.h)
 * and treats the output, seen with keepdims, as an operand broadcast along
 * the reduced axes: each row of the input folds either into one output
 * element (step 0: the innermost axes are reduced) or elementwise into a
 * row of the output (step 1). Each kernel recomputes the output shape from
 * its input and attributes and fails, never writes, when the executor's
 * differs. */
#include "devices/cpu/broadcast.h"
#include "devices/cpu/ew.h"
#include "devices/cpu/row_sum.h"
#include "devices/reduce_axes.h"

#include <math.h>
#include <string.h>

static const void *data_of(const tgc_value *v) { return tgc_buffer_host_ptr(v->buf); }

static tgc_status no_kernel(tgc_kernel_ctx *c, tgc_dtype dtype) {
    return tgc_kernel_fail(c, "%s: the cpu has no kernel for %s", tgc_kernel_op_name(c), tgc_dtype_name(dtype));
}

/* Normalises axis `a` of a rank-`rank` tensor into [0, rank); fails naming `what` otherwise. */
static tgc_status norm_axis(tgc_kernel_ctx *c, const char *what, int64_t a, int rank, int *out) {
    return tgc_reduce_norm_axis(c, tgc_kernel_op_name(c), what, a, rank, out);
}

/* ==== ReduceSum, ReduceMean, ReduceMax ====================================== */

typedef enum reduce_kind { REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX } reduce_kind;

/* Integer sums wrap around (two's complement) through unsigned arithmetic. */
#define ADD_F32(a, b) ((a) + (b))
#define ADD_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
/* Max propagates NaN, as numpy.maximum.reduce in ONNX's reference. */
#define MAX_F32(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define MAX_INT(a, b) ((b) > (a) ? (b) : (a))

/* y = fold of x over the iterator's rows: y starts at INIT everywhere; a
 * row with output step 0 folds into one element through four ACC
 * accumulators (double for float sums; four chains run in parallel), a
 * row with step 1 folds elementwise. */
#define DEF_FOLD(name, T, ACC, INIT, OP)                                                        \
    static void name(tgc_cpu_bcast *it, const void *px, void *py, int64_t ny) {                 \
        const T *x = px;                                                                        \
        T *y = py;                                                                              \
        for (int64_t i = 0; i < ny; i++) y[i] = INIT;                                           \
        if (it->inner == 0) return; /* an empty input: x may be NULL */                         \
        for (int64_t r = 0; r < it->rows; r++, tgc_cpu_bcast_next(it)) {                        \
            const T *xr = x + it->off[0];                                                       \
            T *yr = y + it->off[1];                                                             \
            int64_t n = it->inner, i = 0;                                                       \
            if (it->step[1] == 0) {                                                             \
                ACC a0 = INIT, a1 = INIT, a2 = INIT, a3 = INIT;                                 \
                for (; i + 4 <= n; i += 4) {                                                    \
                    a0 = OP(a0, xr[i]);                                                         \
                    a1 = OP(a1, xr[i + 1]);                                                     \
                    a2 = OP(a2, xr[i + 2]);                                                     \
                    a3 = OP(a3, xr[i + 3]);                                                     \
                }                                                                               \
                for (; i < n; i++) a0 = OP(a0, xr[i]);                                          \
                ACC acc = OP(OP(a0, a1), OP(a2, a3));                                           \
                *yr = (T)OP((ACC)*yr, acc);                                                     \
            } else {                                                                            \
                for (; i < n; i++) yr[i] = OP(yr[i], xr[i]);                                    \
            }                                                                                   \
        }                                                                                       \
    }
DEF_FOLD(sum_f32, float, double, 0.0f, ADD_F32)
DEF_FOLD(sum_f64, double, double, 0.0, ADD_F32)
DEF_FOLD(sum_i32, int32_t, int32_t, 0, ADD_I32)
DEF_FOLD(sum_i64, int64_t, int64_t, 0, ADD_I64)
/* The maximum of nothing is the lowest value of the type, as ONNX states
 * from opset 18 on (-inf for floats); opset 17 leaves it unsaid. */
DEF_FOLD(max_f32, float, float, -INFINITY, MAX_F32)
DEF_FOLD(max_f64, double, double, -INFINITY, MAX_F32)
DEF_FOLD(max_i32, int32_t, int32_t, INT32_MIN, MAX_INT)
DEF_FOLD(max_i64, int64_t, int64_t, INT64_MIN, MAX_INT)
DEF_FOLD(max_u8, uint8_t, uint8_t, 0, MAX_INT)

typedef void (*fold_fn)(tgc_cpu_bcast *it, const void *x, void *y, int64_t ny);

/* Reduces input 0 over `axes` (n_axes of them; none: every axis, or none
 * at all when `noop`, which copies). */
static tgc_status reduce(tgc_kernel_ctx *c, reduce_kind kind, const int64_t *axes, size_t n_axes, bool noop) {
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: output is %s, the input %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(x->dtype));
    fold_fn fold = NULL;
    switch (x->dtype) {
    case TGC_FLOAT32: fold = kind == REDUCE_MAX ? max_f32 : sum_f32; break;
    case TGC_FLOAT64: fold = kind == REDUCE_MAX ? max_f64 : sum_f64; break;
    case TGC_INT32: fold = kind == REDUCE_MAX ? max_i32 : sum_i32; break;
    case TGC_INT64: fold = kind == REDUCE_MAX ? max_i64 : sum_i64; break;
    case TGC_UINT8: fold = kind == REDUCE_MAX ? max_u8 : NULL; break;
    default: break;
    }
    if (fold == NULL) return no_kernel(c, x->dtype);

    int rank = x->rank;
    if (n_axes == 0 && noop) { /* noop_with_empty_axes: the input as it is */
        tgc_status st = tgc_kernel_expect_dims(c, 0, rank, x->dims);
        if (st != TGC_OK) return st;
        size_t nbytes = tgc_value_nbytes(x);
        void *py = tgc_buffer_host_ptr(y->buf);
        if (nbytes > 0 && py != data_of(x)) memmove(py, data_of(x), nbytes);
        return TGC_OK;
    }
    bool reduced[TGC_MAX_RANK];
    int64_t kept[TGC_MAX_RANK], out[TGC_MAX_RANK];
    int out_rank;
    tgc_status st = tgc_reduce_axes_read(c, tgc_kernel_op_name(c), axes, n_axes, rank, x->dims, reduced, out, &out_rank);
    if (st != TGC_OK) return st;
    for (int d = 0; d < rank; d++) kept[d] = reduced[d] ? 1 : x->dims[d];
    st = tgc_kernel_expect_dims(c, 0, out_rank, out);
    if (st != TGC_OK) return st;
    int64_t ny = tgc_value_numel(y), nx = tgc_value_numel(x);
    if (ny == 0) return TGC_OK;

    int64_t count = nx / ny; /* elements folded into each output element */
    if (kind == REDUCE_MEAN && count == 0 && x->dtype != TGC_FLOAT32 && x->dtype != TGC_FLOAT64)
        return tgc_kernel_fail(c, "%s: the mean of an empty %s axis has no value", tgc_kernel_op_name(c),
                               tgc_dtype_name(x->dtype));

    tgc_cpu_bcast it;
    const int ranks[2] = {rank, rank};
    const int64_t *dims[2] = {x->dims, kept};
    if (tgc_cpu_bcast_init(&it, rank, x->dims, 2, ranks, dims) >= 0)
        return tgc_kernel_fail(c, "%s: internal error: the output does not broadcast to the input", tgc_kernel_op_name(c));
    void *py = tgc_buffer_host_ptr(y->buf);
    fold(&it, data_of(x), py, ny);
    if (kind != REDUCE_MEAN) return TGC_OK;
    /* The float mean of nothing is 0 / 0 = NaN, as numpy.mean. An integer
     * mean sums in its type (wrapping) and truncates toward zero, as
     * numpy.mean(x, dtype=x.dtype) in ONNX's reference does. */
    for (int64_t i = 0; i < ny; i++) {
        switch (x->dtype) {
        case TGC_FLOAT32: ((float *)py)[i] = (float)(((float *)py)[i] / (double)count); break;
        case TGC_FLOAT64: ((double *)py)[i] = ((double *)py)[i] / (double)count; break;
        case TGC_INT32: ((int32_t *)py)[i] = (int32_t)(((int32_t *)py)[i] / count); break;
        default: ((int64_t *)py)[i] = ((int64_t *)py)[i] / count; break;
        }
    }
    return TGC_OK;
}

/* ReduceMean-13 and ReduceMax-13: `axes` is an attribute. */
static tgc_status reduce_attr(tgc_kernel_ctx *c, reduce_kind kind) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    size_t n;
    const int64_t *axes = tgc_kernel_attr_ints(c, "axes", &n);
    return reduce(c, kind, axes, n, false);
}

static tgc_status k_reduce_mean(tgc_kernel_ctx *c) { return reduce_attr(c, REDUCE_MEAN); }
static tgc_status k_reduce_max(tgc_kernel_ctx *c) { return reduce_attr(c, REDUCE_MAX); }

/* ReduceSum-13: `axes` is the optional int64 input 1; absent or empty
 * reduces every axis, unless noop_with_empty_axes makes it the identity. */
static tgc_status k_reduce_sum(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const int64_t *axes = NULL;
    size_t n = 0;
    if (tgc_kernel_has_input(c, 1)) {
        const tgc_value *a = &c->inputs[1];
        if (a->dtype != TGC_INT64 || a->rank > 1)
            return tgc_kernel_fail(c, "ReduceSum: axes (input 1) must be a 1-D int64 tensor; it is %s of "
                                   "rank %d", tgc_dtype_name(a->dtype), a->rank);
        n = (size_t)tgc_value_numel(a);
        axes = n ? data_of(a) : NULL;
    }
    return reduce(c, REDUCE_SUM, axes, n, tgc_kernel_attr_int(c, "noop_with_empty_axes", 0) != 0);
}

/* ==== ArgMax ================================================================ */

/* y[o, i] = the index k of the largest x[o, k, i]; the first one on ties,
 * or the last with select_last_point_index. NaN counts as the largest, as
 * in numpy.argmax (ONNX's reference). Scans k outermost so x is read in
 * order, comparing with the best so far through its index in y. */
#define DEF_ARGMAX(s, T, ISNAN)                                                                   \
    static void argmax_##s(const void *px, int64_t *y, int64_t outer, int64_t n, int64_t inner,   \
                           bool last) {                                                           \
        const T *x = px;                                                                          \
        for (int64_t o = 0; o < outer; o++) {                                                     \
            const T *xo = x + o * n * inner;                                                      \
            int64_t *yo = y + o * inner;                                                          \
            for (int64_t i = 0; i < inner; i++) yo[i] = 0;                                        \
            for (int64_t k = 1; k < n; k++) {                                                     \
                const T *xk = xo + k * inner;                                                     \
                for (int64_t i = 0; i < inner; i++) {                                             \
                    T v = xk[i], b = xo[yo[i] * inner + i];                                       \
                    bool take = last ? (v >= b || ISNAN(v)) : (v > b || (ISNAN(v) && !ISNAN(b))); \
                    if (take) yo[i] = k;                                                          \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }
#define NAN_F32(v) ((v) != (v))
#define NAN_INT(v) false
DEF_ARGMAX(f32, float, NAN_F32)
DEF_ARGMAX(f64, double, NAN_F32)
DEF_ARGMAX(i32, int32_t, NAN_INT)
DEF_ARGMAX(i64, int64_t, NAN_INT)
DEF_ARGMAX(u8, uint8_t, NAN_INT)

static tgc_status k_argmax(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int axis;
    int64_t outer, n, inner;
    bool last;
    st = tgc_reduce_argmax_read(c, tgc_kernel_op_name(c), x->rank, x->dims, &axis, &outer, &n, &inner, &last);
    if (st != TGC_OK) return st;
    if (outer * inner == 0) return TGC_OK;
    int64_t *py = tgc_buffer_host_ptr(y->buf);
    switch (x->dtype) {
    case TGC_FLOAT32: argmax_f32(data_of(x), py, outer, n, inner, last); break;
    case TGC_FLOAT64: argmax_f64(data_of(x), py, outer, n, inner, last); break;
    case TGC_INT32: argmax_i32(data_of(x), py, outer, n, inner, last); break;
    case TGC_INT64: argmax_i64(data_of(x), py, outer, n, inner, last); break;
    case TGC_UINT8: argmax_u8(data_of(x), py, outer, n, inner, last); break;
    default: return no_kernel(c, x->dtype);
    }
    return TGC_OK;
}

/* ==== Softmax, LogSoftmax =================================================== */

/* Columns handled at once when the axis is not the innermost. */
#define SOFTMAX_BLOCK 128
/* Elements of a last-axis row exponentiated at once into scratch (LogSoftmax). */
#define SOFTMAX_CHUNK 256
/* The least work worth a piece of its own for tgc_parallel_for, in
 * elements (~30 us on one core, well above a hand-off to a worker). */
#define SOFTMAX_PIECE_ELEMS 16384

/* The largest x[k], k < n > 0, as eight running maxima (scalars, so that
 * gcc keeps them in vector registers) so the loop vectorizes. NaN is
 * skipped here; softmax_rows turns it into a NaN row. */
static float row_max(const float *x, int64_t n) {
    float m0 = -INFINITY, m1 = m0, m2 = m0, m3 = m0, m4 = m0, m5 = m0, m6 = m0, m7 = m0;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        m0 = x[k] > m0 ? x[k] : m0;
        m1 = x[k + 1] > m1 ? x[k + 1] : m1;
        m2 = x[k + 2] > m2 ? x[k + 2] : m2;
        m3 = x[k + 3] > m3 ? x[k + 3] : m3;
        m4 = x[k + 4] > m4 ? x[k + 4] : m4;
        m5 = x[k + 5] > m5 ? x[k + 5] : m5;
        m6 = x[k + 6] > m6 ? x[k + 6] : m6;
        m7 = x[k + 7] > m7 ? x[k + 7] : m7;
    }
    for (; k < n; k++) m0 = x[k] > m0 ? x[k] : m0;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    m4 = m5 > m4 ? m5 : m4;
    m6 = m7 > m6 ? m7 : m6;
    m0 = m2 > m0 ? m2 : m0;
    m4 = m6 > m4 ? m6 : m4;
    return m4 > m0 ? m4 : m0;
}


/* v[k] = exp(v[k]) for k < n, through the Exp row's vector loop. */
static void exp_in_place(float *v, int64_t n) { tgc_cpu_ew_loops()->unary[TGC_EW_Exp][TGC_FLOAT32](n, v, v, NULL); }

/* e[k] = exp(x[k] - m) for k < n (e may be x). */
static void row_exp(const float *x, float m, float *e, int64_t n) {
    for (int64_t k = 0; k < n; k++) e[k] = x[k] - m;
    exp_in_place(e, n);
}

/* One piece of a softmax: rows [lo, hi) of the last axis (inner == 1), or
 * column blocks [lo, hi) numbered across outer (inner > 1). */
typedef struct softmax_job {
    const float *x;
    float *y;
    int64_t n, inner, blocks, per_piece, units;
    bool log_out;
} softmax_job;

static void softmax_rows(const softmax_job *j, int64_t lo, int64_t hi) {
    int64_t n = j->n;
    for (int64_t o = lo; o < hi; o++) {
        const float *xr = j->x + o * n;
        float *yr = j->y + o * n;
        float m = row_max(xr, n);
        if (j->log_out) { /* y may be x: exponentiate into scratch, keep x */
            float e[SOFTMAX_CHUNK];
            double s = 0;
            for (int64_t k = 0; k < n; k += SOFTMAX_CHUNK) {
                int64_t len = n - k < SOFTMAX_CHUNK ? n - k : SOFTMAX_CHUNK;
                row_exp(xr + k, m, e, len);
                s += tgc_cpu_row_sum(e, len);
            }
            float ls = (float)log(s);
            for (int64_t k = 0; k < n; k++) yr[k] = (xr[k] - m) - ls;
        } else {
            row_exp(xr, m, yr, n);
            float inv = (float)(1.0 / tgc_cpu_row_sum(yr, n));
            for (int64_t k = 0; k < n; k++) yr[k] *= inv;
        }
    }
}

static void softmax_blocks(const softmax_job *j, int64_t lo, int64_t hi) {
    int64_t n = j->n, inner = j->inner;
    float m[SOFTMAX_BLOCK];
    double s[SOFTMAX_BLOCK];
    for (int64_t u = lo; u < hi; u++) {
        int64_t o = u / j->blocks, i0 = u % j->blocks * SOFTMAX_BLOCK;
        const float *xo = j->x + o * n * inner + i0;
        float *yo = j->y + o * n * inner + i0;
        int64_t nb = inner - i0 < SOFTMAX_BLOCK ? inner - i0 : SOFTMAX_BLOCK;
        for (int64_t c = 0; c < nb; c++) {
            m[c] = -INFINITY;
            s[c] = 0;
        }
        for (int64_t k = 0; k < n; k++)
            for (int64_t c = 0; c < nb; c++) {
                float v = xo[k * inner + c];
                m[c] = v > m[c] ? v : m[c];
            }
        for (int64_t k = 0; k < n; k++) {
            const float *xk = xo + k * inner;
            float *yk = yo + k * inner, e[SOFTMAX_BLOCK];
            for (int64_t c = 0; c < nb; c++) e[c] = xk[c] - m[c];
            exp_in_place(e, nb);
            for (int64_t c = 0; c < nb; c++) s[c] += e[c];
            if (!j->log_out) /* log: y may be x, keep x */
                memcpy(yk, e, (size_t)nb * sizeof *e);
        }
        if (j->log_out) {
            for (int64_t c = 0; c < nb; c++) s[c] = log(s[c]);
            for (int64_t k = 0; k < n; k++)
                for (int64_t c = 0; c < nb; c++) {
                    int64_t at = k * inner + c;
                    yo[at] = (xo[at] - m[c]) - (float)s[c];
                }
        } else {
            for (int64_t k = 0; k < n; k++)
                for (int64_t c = 0; c < nb; c++) {
                    int64_t at = k * inner + c;
                    yo[at] = (float)(yo[at] / s[c]);
                }
        }
    }
}

static void softmax_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const softmax_job *j = arg;
    int64_t lo = i * j->per_piece, hi = lo + j->per_piece < j->units ? lo + j->per_piece : j->units;
    if (j->inner == 1)
        softmax_rows(j, lo, hi);
    else
        softmax_blocks(j, lo, hi);
}

/* Softmax-13 (log: LogSoftmax-13) of x [outer, n, inner] along n, n > 0:
 *     y = exp(x - max) / sum(exp(x - max))
 *     y = (x - max) - log(sum(exp(x - max)))
 * subtracting the maximum so exp never overflows; exp is the Exp row's
 * (devices/cpu/vmath.h, within 1 ulp of the exact exp), sums in double. In place is safe: x[k]
 * is read before y[k] is written, and the last pass reads only y (softmax)
 * or the same x[k] (log). A row holding NaN becomes NaN. Rows (or blocks of
 * columns) are split over `pool` in pieces of about SOFTMAX_PIECE_ELEMS
 * elements chosen from the sizes alone, and each row's arithmetic is the
 * same in any piece, so any thread count gives the same bits. */
static void softmax_f32(tgc_thread_pool *pool, const float *x, float *y, int64_t outer, int64_t n, int64_t inner,
                        bool log_out) {
    softmax_job j = {.x = x, .y = y, .n = n, .inner = inner, .log_out = log_out};
    int64_t unit_elems; /* elements a unit (a row, or a column block) holds */
    if (inner == 1) {
        j.units = outer;
        unit_elems = n;
    } else {
        j.blocks = (inner + SOFTMAX_BLOCK - 1) / SOFTMAX_BLOCK;
        j.units = outer * j.blocks;
        unit_elems = n * (inner < SOFTMAX_BLOCK ? inner : SOFTMAX_BLOCK);
    }
    j.per_piece = (SOFTMAX_PIECE_ELEMS + unit_elems - 1) / unit_elems;
    tgc_parallel_for(pool, (j.units + j.per_piece - 1) / j.per_piece, softmax_piece, &j);
}

static tgc_status softmax(tgc_kernel_ctx *c, bool log_out) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (x->dtype != TGC_FLOAT32) return no_kernel(c, x->dtype);
    if (y->dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "%s: output is %s, expected float32", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype));
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    int axis;
    if ((st = norm_axis(c, "axis", tgc_kernel_attr_int(c, "axis", -1), x->rank, &axis)) != TGC_OK) return st;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis) outer *= x->dims[d];
        if (d > axis) inner *= x->dims[d];
    }
    if (tgc_value_numel(x) > 0)
        softmax_f32(c->pool, data_of(x), tgc_buffer_host_ptr(y->buf), outer, x->dims[axis], inner, log_out);
    return TGC_OK;
}

static tgc_status k_softmax(tgc_kernel_ctx *c) { return softmax(c, false); }
static tgc_status k_log_softmax(tgc_kernel_ctx *c) { return softmax(c, true); }

/* ==== The list ============================================================== */

#define DTYPES(...) {__VA_ARGS__, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_cpu_kernels_reduce[] = {
    {.op = "ReduceSum", .kind = TGC_DEVICE_CPU, .fn = k_reduce_sum, .host_inputs = 1u << 1, .forward_input = -1,
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT64, TGC_INT32, TGC_INT64)},
    {.op = "ReduceMean", .kind = TGC_DEVICE_CPU, .fn = k_reduce_mean, .forward_input = -1,
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT64, TGC_INT32, TGC_INT64)},
    {.op = "ReduceMax", .kind = TGC_DEVICE_CPU, .fn = k_reduce_max, .forward_input = -1,
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT64, TGC_INT32, TGC_INT64, TGC_UINT8)},
    {.op = "ArgMax", .kind = TGC_DEVICE_CPU, .fn = k_argmax, .forward_input = -1,
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT64, TGC_INT32, TGC_INT64, TGC_UINT8)},
    {.op = "Softmax", .kind = TGC_DEVICE_CPU, .fn = k_softmax, .forward_input = 0,
     .dtypes = DTYPES(TGC_FLOAT32)},
    {.op = "LogSoftmax", .kind = TGC_DEVICE_CPU, .fn = k_log_softmax, .forward_input = 0,
     .dtypes = DTYPES(TGC_FLOAT32)},
    {.op = NULL},
};
