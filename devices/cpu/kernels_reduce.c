/* The cpu reduction kernels, ONNX opset 17 semantics with the opset 18
 * form of the reductions' axes:
 *     ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 *     ReduceSumSquare                 float32 float16 int32 int64 (Max, Min:
 *                                     uint8 too)
 *     ReduceL2, ReduceLogSum,
 *     ReduceLogSumExp                 float32 float16
 *                      each with axes as the attribute (opset 13) or as
 *                      input 1 (int64, host memory; opset 18, ReduceSum
 *                      since 13), keepdims, noop_with_empty_axes
 *     ArgMax-13, ArgMin-13   axis, keepdims, select_last_point_index
 *                      (ONNX's select_last_index); int64 output
 *     Softmax-13, LogSoftmax-13   along `axis` (default -1) alone; float32
 *                      (exp from the Exp row, rows split over the pool)
 *                      or float64 (serial, libm exp);
 * and tgc_cpu_kernels_reduce[], the list the registry reads. The
 * definitions are ONNX's reference (onnx/reference/ops/op_reduce_*.py):
 * L1 = sum |x|, L2 = sqrt(sum x^2), LogSum = log(sum x), LogSumExp =
 * log(sum exp x) (computed as m + log(sum exp(x - m)), m the largest),
 * SumSquare = sum x^2; over nothing: sum 0, product 1, max -inf (the
 * type's lowest), min +inf (its highest), log of a sum -inf.
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
#include "devices/cpu/target_clones.h"
#include "devices/reduce_axes.h"
#include "support/alloc.h"
#include "support/half.h"

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

/* ==== ReduceSum ... ReduceSumSquare ======================================== */

typedef enum reduce_kind {
    REDUCE_SUM,
    REDUCE_MEAN,
    REDUCE_MAX,
    REDUCE_MIN,
    REDUCE_PROD,
    REDUCE_L1,
    REDUCE_L2,
    REDUCE_LOG_SUM,
    REDUCE_LOG_SUM_EXP,
    REDUCE_SUM_SQUARE,
} reduce_kind;

/* The fold a reduction starts with (what it maps each element to, and how
 * it combines two); the rest is a pass over the output (reduce_finish). */
typedef enum fold_kind { FOLD_SUM, FOLD_MAX, FOLD_MIN, FOLD_PROD, FOLD_ABS_SUM, FOLD_SQUARE_SUM, FOLD_COUNT } fold_kind;

static fold_kind fold_of(reduce_kind k) {
    switch (k) {
    case REDUCE_MAX:
    case REDUCE_LOG_SUM_EXP: return FOLD_MAX; /* the largest first, subtracted before exp */
    case REDUCE_MIN: return FOLD_MIN;
    case REDUCE_PROD: return FOLD_PROD;
    case REDUCE_L1: return FOLD_ABS_SUM;
    case REDUCE_L2:
    case REDUCE_SUM_SQUARE: return FOLD_SQUARE_SUM;
    default: return FOLD_SUM; /* Sum, Mean, LogSum */
    }
}

/* Float folds accumulate in double. Integer sums and products wrap around
 * (two's complement), computed in uint64_t and truncated to the type, as
 * numpy's do in ONNX's reference. */
#define F_ID(x) (x)
#define F_ABS(x) fabs((double)(x))
#define F_SQ(x) ((double)(x) * (double)(x))
#define F_ADD(a, b) ((a) + (b))
#define F_MUL(a, b) ((a) * (b))
/* Max and min propagate NaN, as numpy.maximum.reduce / minimum.reduce. */
#define F_MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define F_MIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define I_ID(x) (x)
#define I_ABS(x) ((x) < 0 ? 0 - (uint64_t)(x) : (uint64_t)(x))
#define I_SQ(x) ((uint64_t)(x) * (uint64_t)(x))
#define I_ADD(a, b) ((uint64_t)(a) + (uint64_t)(b))
#define I_MUL(a, b) ((uint64_t)(a) * (uint64_t)(b))
#define I_MAX(a, b) ((b) > (a) ? (b) : (a))
#define I_MIN(a, b) ((b) < (a) ? (b) : (a))

/* Accumulators a row folding into one element keeps: element i goes to
 * accumulator i % FOLD_LANES (the chains run in parallel, as vectors),
 * which are then folded pairwise in a fixed tree, so the bits do not
 * depend on the vector width the clone runs. */
#define FOLD_LANES 16

/* y = fold of x over the iterator's rows: y starts at INIT everywhere; a
 * row with output step 0 folds into one element through FOLD_LANES ACC
 * accumulators, a row with step 1 folds elementwise. acc = OP(acc,
 * MAP(x)). Compiled for each vector ISA (TGC_CPU_CLONES): a float32
 * ReduceMean of [8192, 1024] over its last axis took 5.2 ms through four
 * scalar chains at the baseline ISA, where ONNX Runtime took 1.7. */
#define DEF_FOLD(name, T, ACC, INIT, MAP, OP)                                                   \
    TGC_CPU_CLONES static void name(tgc_cpu_bcast *it, const void *px, void *py, int64_t ny) {  \
        const T *x = px;                                                                        \
        T *y = py;                                                                              \
        for (int64_t i = 0; i < ny; i++) y[i] = (T)(INIT);                                      \
        if (it->inner == 0) return; /* an empty input: x may be NULL */                         \
        for (int64_t r = 0; r < it->rows; r++, tgc_cpu_bcast_next(it)) {                        \
            const T *xr = x + it->off[0];                                                       \
            T *yr = y + it->off[1];                                                             \
            int64_t n = it->inner, i = 0;                                                       \
            if (it->step[1] == 0) {                                                             \
                ACC a[FOLD_LANES];                                                              \
                for (int t = 0; t < FOLD_LANES; t++) a[t] = (ACC)(INIT);                        \
                for (; i + FOLD_LANES <= n; i += FOLD_LANES)                                    \
                    for (int t = 0; t < FOLD_LANES; t++) a[t] = (ACC)OP(a[t], MAP(xr[i + t]));  \
                for (; i < n; i++) a[0] = (ACC)OP(a[0], MAP(xr[i]));                            \
                for (int w = FOLD_LANES / 2; w > 0; w /= 2)                                     \
                    for (int t = 0; t < w; t++) a[t] = (ACC)OP(a[t], a[t + w]);                 \
                *yr = (T)OP((ACC)*yr, a[0]);                                                    \
            } else {                                                                            \
                for (; i < n; i++) yr[i] = (T)OP((ACC)yr[i], MAP(xr[i]));                       \
            }                                                                                   \
        }                                                                                       \
    }

typedef void (*fold_fn)(tgc_cpu_bcast *it, const void *x, void *y, int64_t ny);

/* The folds of one element type, indexed by fold_kind. The extreme of
 * nothing is the type's extreme (+-inf for floats), as ONNX states from
 * opset 18 on; opset 17 leaves it unsaid. */
#define DEF_FLOAT_FOLDS(s, T)                                                                   \
    DEF_FOLD(sum_##s, T, double, 0.0, F_ID, F_ADD)                                              \
    DEF_FOLD(max_##s, T, T, -INFINITY, F_ID, F_MAX)                                             \
    DEF_FOLD(min_##s, T, T, INFINITY, F_ID, F_MIN)                                              \
    DEF_FOLD(prod_##s, T, double, 1.0, F_ID, F_MUL)                                             \
    DEF_FOLD(abs_sum_##s, T, double, 0.0, F_ABS, F_ADD)                                         \
    DEF_FOLD(sq_sum_##s, T, double, 0.0, F_SQ, F_ADD)                                           \
    static const fold_fn folds_##s[FOLD_COUNT] = {sum_##s, max_##s, min_##s, prod_##s, abs_sum_##s, sq_sum_##s};
#define DEF_INT_FOLDS(s, T, LO, HI, ABS)                                                        \
    DEF_FOLD(sum_##s, T, T, 0, I_ID, I_ADD)                                                     \
    DEF_FOLD(max_##s, T, T, LO, I_ID, I_MAX)                                                    \
    DEF_FOLD(min_##s, T, T, HI, I_ID, I_MIN)                                                    \
    DEF_FOLD(prod_##s, T, T, 1, I_ID, I_MUL)                                                    \
    DEF_FOLD(abs_sum_##s, T, T, 0, ABS, I_ADD)                                                  \
    DEF_FOLD(sq_sum_##s, T, T, 0, I_SQ, I_ADD)                                                  \
    static const fold_fn folds_##s[FOLD_COUNT] = {sum_##s, max_##s, min_##s, prod_##s, abs_sum_##s, sq_sum_##s};

/* One line per element type (float16 is folded as float32: reduce()). */
DEF_FLOAT_FOLDS(f32, float)
DEF_FLOAT_FOLDS(f64, double)
DEF_INT_FOLDS(i32, int32_t, INT32_MIN, INT32_MAX, I_ABS)
DEF_INT_FOLDS(i64, int64_t, INT64_MIN, INT64_MAX, I_ABS)
DEF_INT_FOLDS(u8, uint8_t, 0, UINT8_MAX, I_ID)

static const fold_fn *folds_of(tgc_dtype t) {
    switch (t) {
    case TGC_FLOAT32: return folds_f32;
    case TGC_FLOAT64: return folds_f64;
    case TGC_INT32: return folds_i32;
    case TGC_INT64: return folds_i64;
    case TGC_UINT8: return folds_u8;
    default: return NULL;
    }
}

/* The shift that keeps exp(x - m) finite: the largest element m when it is
 * finite, else 0 (all -inf or empty: the sum is 0 and its log -inf; +inf
 * or NaN: exp gives them back). */
static double lse_shift(double m) { return isfinite(m) ? m : 0.0; }

/* ReduceLogSumExp's second pass, y holding the largest element of each
 * output: y = m + log(sum(exp(x - m))), m = lse_shift(y), summed in
 * double. TGC_ERR_NOMEM when the sums do not fit in memory. */
#define DEF_LOG_SUM_EXP(s, T)                                                                   \
    static tgc_status log_sum_exp_##s(tgc_cpu_bcast *it, const T *x, T *y, int64_t ny) {        \
        double *sum = tgc_calloc((size_t)ny, sizeof *sum);                                      \
        if (sum == NULL) return TGC_ERR_NOMEM;                                                  \
        for (int64_t r = 0; it->inner > 0 && r < it->rows; r++, tgc_cpu_bcast_next(it)) {       \
            const T *xr = x + it->off[0], *mr = y + it->off[1];                                 \
            double *sr = sum + it->off[1];                                                      \
            if (it->step[1] == 0) {                                                             \
                double m = lse_shift(*mr), a = 0;                                               \
                for (int64_t i = 0; i < it->inner; i++) a += exp((double)xr[i] - m);            \
                *sr += a;                                                                       \
            } else {                                                                            \
                for (int64_t i = 0; i < it->inner; i++) sr[i] += exp((double)xr[i] - lse_shift(mr[i])); \
            }                                                                                   \
        }                                                                                       \
        for (int64_t i = 0; i < ny; i++) y[i] = (T)(lse_shift(y[i]) + log(sum[i]));             \
        tgc_free(sum);                                                                          \
        return TGC_OK;                                                                          \
    }
DEF_LOG_SUM_EXP(f32, float)
DEF_LOG_SUM_EXP(f64, double)

/* The pass after the fold over y[0..ny) of float type T, each output
 * element having folded `count` inputs: the mean (the float mean of
 * nothing is 0 / 0 = NaN, as numpy.mean), the root of the sum of squares,
 * the log of the sum (of nothing: -inf). */
#define DEF_FLOAT_FINISH(s, T)                                                                  \
    static void finish_##s(reduce_kind kind, T *y, int64_t ny, int64_t count) {                \
        for (int64_t i = 0; i < ny; i++) {                                                      \
            if (kind == REDUCE_MEAN) y[i] = (T)((double)y[i] / (double)count);                  \
            else if (kind == REDUCE_L2) y[i] = (T)sqrt((double)y[i]);                           \
            else if (kind == REDUCE_LOG_SUM) y[i] = (T)log((double)y[i]);                       \
        }                                                                                       \
    }
DEF_FLOAT_FINISH(f32, float)
DEF_FLOAT_FINISH(f64, double)

/* An integer mean sums in its type (wrapping) and truncates toward zero,
 * as numpy.mean(x, dtype=x.dtype) in ONNX's reference does. */
#define DEF_INT_MEAN(s, T)                                                                      \
    static void mean_##s(T *y, int64_t ny, int64_t count) {                                     \
        for (int64_t i = 0; i < ny; i++) y[i] = (T)(y[i] / count);                              \
    }
DEF_INT_MEAN(i32, int32_t)
DEF_INT_MEAN(i64, int64_t)

static bool is_float_only(reduce_kind k) {
    return k == REDUCE_L2 || k == REDUCE_LOG_SUM || k == REDUCE_LOG_SUM_EXP;
}

static bool is_float_type(tgc_dtype t) { return t == TGC_FLOAT32 || t == TGC_FLOAT64; }

/* Folds x (compute dtype t: float32, float64 or an integer type) over the reduced
 * axes into y: it walks x against y seen with keepdims (dims kept[]). */
static tgc_status reduce_values(tgc_kernel_ctx *c, reduce_kind kind, tgc_dtype t, int rank, const int64_t *xdims,
                                const int64_t *kept, const void *x, void *y, int64_t ny, int64_t count) {
    const fold_fn *folds = folds_of(t);
    if (folds == NULL || (is_float_only(kind) && !is_float_type(t)) ||
        (kind == REDUCE_MEAN && !is_float_type(t) && t != TGC_INT32 && t != TGC_INT64))
        return no_kernel(c, t);
    if (kind == REDUCE_MEAN && count == 0 && !is_float_type(t))
        return tgc_kernel_fail(c, "%s: the mean of an empty %s axis has no value", tgc_kernel_op_name(c),
                               tgc_dtype_name(t));
    tgc_cpu_bcast it;
    const int ranks[2] = {rank, rank};
    const int64_t *dims[2] = {xdims, kept};
    if (tgc_cpu_bcast_init(&it, rank, xdims, 2, ranks, dims) >= 0)
        return tgc_kernel_fail(c, "%s: internal error: the output does not broadcast to the input", tgc_kernel_op_name(c));
    folds[fold_of(kind)](&it, x, y, ny);
    switch (t) {
    case TGC_FLOAT32:
        if (kind == REDUCE_LOG_SUM_EXP) {
            tgc_cpu_bcast_init(&it, rank, xdims, 2, ranks, dims);
            if (log_sum_exp_f32(&it, x, y, ny) != TGC_OK)
                return tgc_kernel_fail(c, "%s: out of memory for %lld sums", tgc_kernel_op_name(c), (long long)ny);
        }
        finish_f32(kind, y, ny, count);
        break;
    case TGC_FLOAT64:
        if (kind == REDUCE_LOG_SUM_EXP) {
            tgc_cpu_bcast_init(&it, rank, xdims, 2, ranks, dims);
            if (log_sum_exp_f64(&it, x, y, ny) != TGC_OK)
                return tgc_kernel_fail(c, "%s: out of memory for %lld sums", tgc_kernel_op_name(c), (long long)ny);
        }
        finish_f64(kind, y, ny, count);
        break;
    case TGC_INT32: if (kind == REDUCE_MEAN) mean_i32(y, ny, count); break;
    case TGC_INT64: if (kind == REDUCE_MEAN) mean_i64(y, ny, count); break;
    default: break;
    }
    return TGC_OK;
}

/* Reduces input 0 over `axes` (n_axes of them; none: every axis, or none
 * at all when `noop`, which copies). float16 is widened to float32 for the
 * fold and rounded back once at the end. */
static tgc_status reduce(tgc_kernel_ctx *c, reduce_kind kind, const int64_t *axes, size_t n_axes, bool noop) {
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: output is %s, the input %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(x->dtype));
    if (x->dtype != TGC_FLOAT16 && folds_of(x->dtype) == NULL) return no_kernel(c, x->dtype);

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
    void *py = tgc_buffer_host_ptr(y->buf);
    if (x->dtype != TGC_FLOAT16)
        return reduce_values(c, kind, x->dtype, rank, x->dims, kept, data_of(x), py, ny, count);

    float *xf = tgc_malloc((size_t)(nx > 0 ? nx : 1) * sizeof *xf), *yf = tgc_malloc((size_t)ny * sizeof *yf);
    if (xf == NULL || yf == NULL) {
        st = tgc_kernel_fail(c, "%s: out of memory widening float16 to float32", tgc_kernel_op_name(c));
    } else {
        const uint16_t *xh = data_of(x);
        uint16_t *yh = py;
        for (int64_t i = 0; i < nx; i++) xf[i] = tgc_half_to_float(xh[i]);
        st = reduce_values(c, kind, TGC_FLOAT32, rank, x->dims, kept, xf, yf, ny, count);
        for (int64_t i = 0; st == TGC_OK && i < ny; i++) yh[i] = tgc_float_to_half(yf[i]);
    }
    tgc_free(xf);
    tgc_free(yf);
    return st;
}

/* Every ReduceX: `axes` is the attribute (opset 13 form; ReduceSum-13 has
 * none) or the optional int64 input 1 (opset 18 form; ReduceSum since 13),
 * never both. Absent or empty reduces every axis, unless
 * noop_with_empty_axes makes it the identity. */
static tgc_status reduce_kernel(tgc_kernel_ctx *c, reduce_kind kind) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    size_t n;
    const int64_t *axes = tgc_kernel_attr_ints(c, "axes", &n);
    if (tgc_kernel_has_input(c, 1)) {
        const tgc_value *a = &c->inputs[1];
        if (n > 0)
            return tgc_kernel_fail(c, "%s: axes are given twice, as the attribute and as input 1",
                                   tgc_kernel_op_name(c));
        if (a->dtype != TGC_INT64 || a->rank > 1)
            return tgc_kernel_fail(c, "%s: axes (input 1) must be a 1-D int64 tensor; it is %s of rank %d",
                                   tgc_kernel_op_name(c), tgc_dtype_name(a->dtype), a->rank);
        n = (size_t)tgc_value_numel(a);
        axes = n ? data_of(a) : NULL;
    }
    return reduce(c, kind, axes, n, tgc_kernel_attr_int(c, "noop_with_empty_axes", 0) != 0);
}

static tgc_status k_reduce_sum(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_SUM); }
static tgc_status k_reduce_mean(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_MEAN); }
static tgc_status k_reduce_max(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_MAX); }
static tgc_status k_reduce_min(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_MIN); }
static tgc_status k_reduce_prod(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_PROD); }
static tgc_status k_reduce_l1(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_L1); }
static tgc_status k_reduce_l2(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_L2); }
static tgc_status k_reduce_log_sum(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_LOG_SUM); }
static tgc_status k_reduce_log_sum_exp(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_LOG_SUM_EXP); }
static tgc_status k_reduce_sum_square(tgc_kernel_ctx *c) { return reduce_kernel(c, REDUCE_SUM_SQUARE); }

/* ==== ArgMax, ArgMin ======================================================== */

/* y[o, i] = the index k of the largest (ArgMax; ArgMin: smallest)
 * x[o, k, i]; the first one on ties, or the last with
 * select_last_point_index. NaN counts as the most extreme, as in
 * numpy.argmax / argmin (ONNX's reference). Scans k outermost so x is read
 * in order, comparing with the best so far through its index in y. A lane
 * along the last axis (inner 1) is two passes instead: its extreme through
 * ARG_LANES running extremes (NaNs noted apart), then the first (last)
 * element equal to it, or the first (last) NaN (the best so far carried
 * element to element was one chain of dependent compares and moves:
 * [4096, 1000] over its last axis took 1.8x ONNX Runtime's time).
 * BETTER / BETTER_EQ: > and >= (max) or < and <= (min). */
#define ARG_LANES 16
#define DEF_ARG(fn, T, ISNAN, BETTER, BETTER_EQ)                                                  \
    TGC_CPU_CLONES static int64_t fn##_lane(const T *x, int64_t n, bool last) {                    \
        T m[ARG_LANES];                                                                           \
        bool nan = false;                                                                         \
        for (int t = 0; t < ARG_LANES; t++) m[t] = x[0];                                          \
        int64_t k = 0;                                                                            \
        for (; k + ARG_LANES <= n; k += ARG_LANES)                                                \
            for (int t = 0; t < ARG_LANES; t++) {                                                 \
                T v = x[k + t];                                                                   \
                nan |= ISNAN(v);                                                                  \
                m[t] = v BETTER m[t] ? v : m[t];                                                  \
            }                                                                                     \
        for (; k < n; k++) {                                                                      \
            nan |= ISNAN(x[k]);                                                                   \
            m[0] = x[k] BETTER m[0] ? x[k] : m[0];                                                \
        }                                                                                         \
        T best = m[0];                                                                            \
        for (int t = 1; t < ARG_LANES; t++) best = m[t] BETTER best ? m[t] : best;                \
        /* the first (last) NaN when there is one, else the first (last) element equal to best */ \
        if (last) {                                                                               \
            for (k = n - 1; k > 0; k--)                                                           \
                if (nan ? ISNAN(x[k]) : x[k] == best) break;                                      \
        } else {                                                                                  \
            for (k = 0; k < n - 1; k++)                                                           \
                if (nan ? ISNAN(x[k]) : x[k] == best) break;                                      \
        }                                                                                         \
        return k;                                                                                 \
    }                                                                                             \
    static void fn(const void *px, int64_t *y, int64_t outer, int64_t n, int64_t inner, bool last) { \
        const T *x = px;                                                                          \
        for (int64_t o = 0; o < outer; o++) {                                                     \
            const T *xo = x + o * n * inner;                                                      \
            int64_t *yo = y + o * inner;                                                          \
            if (inner == 1) {                                                                     \
                *yo = fn##_lane(xo, n, last);                                                     \
                continue;                                                                         \
            }                                                                                     \
            for (int64_t i = 0; i < inner; i++) yo[i] = 0;                                        \
            for (int64_t k = 1; k < n; k++) {                                                     \
                const T *xk = xo + k * inner;                                                     \
                for (int64_t i = 0; i < inner; i++) {                                             \
                    T v = xk[i], b = xo[yo[i] * inner + i];                                       \
                    bool take = last ? (v BETTER_EQ b || ISNAN(v))                                \
                                     : (v BETTER b || (ISNAN(v) && !ISNAN(b)));                   \
                    if (take) yo[i] = k;                                                          \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }
#define NAN_F32(v) ((v) != (v))
#define NAN_INT(v) false
typedef void (*arg_fn)(const void *x, int64_t *y, int64_t outer, int64_t n, int64_t inner, bool last);
/* One line per element type: {argmax, argmin}. */
#define DEF_ARGS(s, T, ISNAN)                                                                     \
    DEF_ARG(argmax_##s, T, ISNAN, >, >=)                                                          \
    DEF_ARG(argmin_##s, T, ISNAN, <, <=)                                                          \
    static const arg_fn args_##s[2] = {argmax_##s, argmin_##s};
DEF_ARGS(f32, float, NAN_F32)
DEF_ARGS(f64, double, NAN_F32)
DEF_ARGS(i32, int32_t, NAN_INT)
DEF_ARGS(i64, int64_t, NAN_INT)
DEF_ARGS(u8, uint8_t, NAN_INT)

static const arg_fn *args_of(tgc_dtype t) {
    switch (t) {
    case TGC_FLOAT32: return args_f32;
    case TGC_FLOAT64: return args_f64;
    case TGC_INT32: return args_i32;
    case TGC_INT64: return args_i64;
    case TGC_UINT8: return args_u8;
    default: return NULL;
    }
}

/* ArgMax-13 (is_min false) and ArgMin-13; float16 is widened to float32
 * (exact, so the same index). */
static tgc_status arg_extreme(tgc_kernel_ctx *c, bool is_min) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    const arg_fn *fns = args_of(x->dtype == TGC_FLOAT16 ? TGC_FLOAT32 : x->dtype);
    if (fns == NULL) return no_kernel(c, x->dtype);
    int axis;
    int64_t outer, n, inner;
    bool last;
    st = tgc_reduce_argmax_read(c, tgc_kernel_op_name(c), x->rank, x->dims, &axis, &outer, &n, &inner, &last);
    if (st != TGC_OK) return st;
    if (outer * inner == 0) return TGC_OK;
    int64_t *py = tgc_buffer_host_ptr(y->buf);
    if (x->dtype != TGC_FLOAT16) {
        fns[is_min](data_of(x), py, outer, n, inner, last);
        return TGC_OK;
    }
    int64_t nx = tgc_value_numel(x);
    float *xf = tgc_malloc((size_t)nx * sizeof *xf);
    if (xf == NULL) return tgc_kernel_fail(c, "%s: out of memory widening float16", tgc_kernel_op_name(c));
    const uint16_t *xh = data_of(x);
    for (int64_t i = 0; i < nx; i++) xf[i] = tgc_half_to_float(xh[i]);
    fns[is_min](xf, py, outer, n, inner, last);
    tgc_free(xf);
    return TGC_OK;
}

static tgc_status k_argmax(tgc_kernel_ctx *c) { return arg_extreme(c, false); }
static tgc_status k_argmin(tgc_kernel_ctx *c) { return arg_extreme(c, true); }

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

/* softmax_f32's float64 form, serial: per [outer, inner] column the max,
 * then sum(exp(x - max)), then y = exp(x - max) / sum or (log)
 * x - max - log(sum), as ONNX's reference (numpy, float64). Each x[k] is
 * read before y[k] is written, so y may be x. */
static void softmax_f64(const double *x, double *y, int64_t outer, int64_t n, int64_t inner, bool log_out) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double m = -INFINITY, sum = 0.0;
            for (int64_t k = 0; k < n; k++) m = fmax(m, x[base + k * inner]);
            for (int64_t k = 0; k < n; k++) sum += exp(x[base + k * inner] - m);
            double log_sum = log(sum);
            for (int64_t k = 0; k < n; k++) {
                double t = x[base + k * inner] - m;
                y[base + k * inner] = log_out ? t - log_sum : exp(t) / sum;
            }
        }
}

static tgc_status softmax(tgc_kernel_ctx *c, bool log_out) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (x->dtype != TGC_FLOAT32 && x->dtype != TGC_FLOAT64) return no_kernel(c, x->dtype);
    if (y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: output is %s, expected %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(x->dtype));
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    int axis;
    if ((st = norm_axis(c, "axis", tgc_kernel_attr_int(c, "axis", -1), x->rank, &axis)) != TGC_OK) return st;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis) outer *= x->dims[d];
        if (d > axis) inner *= x->dims[d];
    }
    if (tgc_value_numel(x) > 0 && x->dtype == TGC_FLOAT64)
        softmax_f64(tgc_kernel_in_ptr(c, 0), tgc_buffer_host_ptr(y->buf), outer, x->dims[axis], inner, log_out);
    else if (tgc_value_numel(x) > 0)
        softmax_f32(c->pool, data_of(x), tgc_buffer_host_ptr(y->buf), outer, x->dims[axis], inner, log_out);
    return TGC_OK;
}

static tgc_status k_softmax(tgc_kernel_ctx *c) { return softmax(c, false); }
static tgc_status k_log_softmax(tgc_kernel_ctx *c) { return softmax(c, true); }

/* ==== The list ============================================================== */

#define DTYPES(...) {__VA_ARGS__, TGC_DTYPE_INVALID}

/* The reductions: axes as input 1 lives in host memory. */
#define RED(name, f, ...)                                                                            \
    {.op = name, .fn = f, .host_inputs = 1u << 1, .forward_input = -1,       \
     .dtypes = DTYPES(__VA_ARGS__)}
#define RED_ALL TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_INT32, TGC_INT64
#define RED_FLOAT TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64
#define ARG(name, f)                                                                                 \
    {.op = name, .fn = f, .forward_input = -1,                               \
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_INT32, TGC_INT64, TGC_UINT8)}

const tgc_kernel_def tgc_cpu_kernels_reduce[] = {
    RED("ReduceSum", k_reduce_sum, RED_ALL),
    RED("ReduceMean", k_reduce_mean, RED_ALL),
    RED("ReduceMax", k_reduce_max, RED_ALL, TGC_UINT8),
    RED("ReduceMin", k_reduce_min, RED_ALL, TGC_UINT8),
    RED("ReduceProd", k_reduce_prod, RED_ALL),
    RED("ReduceL1", k_reduce_l1, RED_ALL),
    RED("ReduceL2", k_reduce_l2, RED_FLOAT),
    RED("ReduceLogSum", k_reduce_log_sum, RED_FLOAT),
    RED("ReduceLogSumExp", k_reduce_log_sum_exp, RED_FLOAT),
    RED("ReduceSumSquare", k_reduce_sum_square, RED_ALL),
    ARG("ArgMax", k_argmax),
    ARG("ArgMin", k_argmin),
    {.op = "Softmax", .fn = k_softmax, .forward_input = 0,
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT64)},
    {.op = "LogSoftmax", .fn = k_log_softmax, .forward_input = 0,
     .dtypes = DTYPES(TGC_FLOAT32, TGC_FLOAT64)},
    {.op = NULL},
};
