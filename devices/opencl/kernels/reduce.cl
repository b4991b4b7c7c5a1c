/* OpenCL kernels of the reductions (host side: kernels_reduce.c), with the
 * cpu kernels' semantics (devices/cpu/kernels_reduce.c):
 *     red_sum_{f32,i32,i64}, red_max_{f32,i32,i64,u8}   ReduceSum, ReduceMean
 *                          (red_sum_f32 with mean = 1), ReduceMax
 *     red_min_{f32,i32,i64,u8}                          ReduceMin
 *     red_more_f32         ReduceProd, L1, L2, LogSum, LogSumExp, SumSquare
 *     red_argmax_{f32,i32,i64,u8}, red_argmin_...       ArgMax, ArgMin
 *     red_softmax_f32                                   Softmax, LogSoftmax
 *     red_along_axis_f32, red_mvn_f32   Hardmax, LpNormalization, MeanVarianceNormalization
 * One work-item per output element, looping over what it reduces; the
 * global size may be rounded up past the output's count.
 *
 * The reductions see the input through two index spaces, each collapsed
 * by the host to at most 8 dims with their input strides: the kept axes
 * (one point per output element, row-major, so the output is written in
 * order) and the reduced axes (walked row-major with an odometer). Float
 * sums are compensated (Neumaier), so their error stays near one rounding
 * however long the axis; integer sums wrap (computed unsigned). */

#pragma OPENCL FP_CONTRACT OFF

/* Input offset of the first element output o reduces. */
long red_base(long o, int krank, long8 kdims, long8 kstrides) {
    long d[8], s[8];
    vstore8(kdims, 0, d);
    vstore8(kstrides, 0, s);
    long off = 0;
    for (int k = krank - 1; k >= 0; k--) {
        long q = o / d[k];
        off += (o - q * d[k]) * s[k];
        o = q;
    }
    return off;
}

/* The loop over the reduced elements of output o: off walks them in
 * row-major order; BODY sees the element as x[off]. */
#define FOR_REDUCED(BODY)                                                                        \
    long d[8], s[8], idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                          \
    vstore8(rdims, 0, d);                                                                        \
    vstore8(rstrides, 0, s);                                                                     \
    long off = red_base(o, krank, kdims, kstrides);                                              \
    for (long r = 0; r < nr; r++) {                                                              \
        BODY;                                                                                    \
        for (int k = rrank - 1; k >= 0; k--) {                                                   \
            off += s[k];                                                                         \
            if (++idx[k] < d[k]) break;                                                          \
            off -= s[k] * d[k];                                                                  \
            idx[k] = 0;                                                                          \
        }                                                                                        \
    }

#define RED_ARGS                                                                                 \
    long ny, long nr, int krank, long8 kdims, long8 kstrides, int rrank, long8 rdims, long8 rstrides

/* Adds v to sum with Neumaier's compensation in *comp. */
void red_add(float *sum, float *comp, float v) {
    float t = *sum + v;
    *comp += fabs(*sum) >= fabs(v) ? (*sum - t) + v : (v - t) + *sum;
    *sum = t;
}

/* ReduceSum (mean = 0) and ReduceMean (mean = 1: the sum over nr; the
 * mean of nothing is 0 / 0, NaN). An infinite or NaN sum is returned as it
 * is: its compensation carries no meaning. */
__kernel void red_sum_f32(__global const float *x, __global float *y, RED_ARGS, int mean) {
    long o = get_global_id(0);
    if (o >= ny) return;
    float sum = 0.0f, comp = 0.0f;
    FOR_REDUCED(red_add(&sum, &comp, x[off]))
    float total = isfinite(sum) ? sum + comp : sum;
    y[o] = mean ? total / (float)nr : total;
}

#define RED_INT(name, T, U, INIT, OP)                                                            \
    __kernel void red_##name(__global const T *x, __global T *y, RED_ARGS) {                     \
        long o = get_global_id(0);                                                               \
        if (o >= ny) return;                                                                     \
        U acc = INIT;                                                                            \
        FOR_REDUCED(acc = OP(acc, x[off]))                                                       \
        y[o] = (T)acc;                                                                           \
    }

#define ADD_U(a, v) ((a) + (v))
/* Max and min propagate NaN, as numpy.maximum.reduce; the max of nothing
 * is the type's lowest value, the min of nothing its highest. */
#define MAX_F(a, v) (((a) > (v) || (a) != (a)) ? (a) : (v))
#define MAX_I(a, v) ((v) > (a) ? (v) : (a))
#define MIN_F(a, v) (((a) < (v) || (a) != (a)) ? (a) : (v))
#define MIN_I(a, v) ((v) < (a) ? (v) : (a))

RED_INT(sum_i32, int, uint, 0u, ADD_U)
RED_INT(sum_i64, long, ulong, 0ul, ADD_U)
RED_INT(max_f32, float, float, -INFINITY, MAX_F)
RED_INT(max_i32, int, int, INT_MIN, MAX_I)
RED_INT(max_i64, long, long, LONG_MIN, MAX_I)
RED_INT(max_u8, uchar, uchar, 0, MAX_I)

RED_INT(min_f32, float, float, INFINITY, MIN_F)
RED_INT(min_i32, int, int, INT_MAX, MIN_I)
RED_INT(min_i64, long, long, LONG_MAX, MIN_I)
RED_INT(min_u8, uchar, uchar, UCHAR_MAX, MIN_I)

/* The float reductions beside Sum, Mean and Max, `kind` as
 * devices/opencl/kernels_reduce.c numbers them: 1 ReduceProd, 2 ReduceL1
 * (sum |x|), 3 ReduceL2 (sqrt(sum x^2)), 4 ReduceLogSum (log(sum x)),
 * 5 ReduceLogSumExp (m + log(sum exp(x - m)), m the largest when finite,
 * else 0), 6 ReduceSumSquare (sum x^2). Sums are compensated as red_sum_f32's. */
__kernel void red_more_f32(__global const float *x, __global float *y, RED_ARGS, int kind) {
    long o = get_global_id(0);
    if (o >= ny) return;
    float m = 0.0f;
    if (kind == 5) {
        float mx = -INFINITY;
        {
            FOR_REDUCED(mx = MAX_F(mx, x[off]))
        }
        m = isfinite(mx) ? mx : 0.0f;
    }
    float acc = kind == 1 ? 1.0f : 0.0f, comp = 0.0f;
    {
        FOR_REDUCED({
            float v = x[off];
            if (kind == 1) acc *= v;
            else red_add(&acc, &comp, kind == 2 ? fabs(v) : kind == 5 ? exp(v - m) : (kind == 3 || kind == 6) ? v * v : v);
        })
    }
    float total = kind == 1 || !isfinite(acc) ? acc : acc + comp;
    y[o] = kind == 3 ? sqrt(total) : kind == 4 ? log(total) : kind == 5 ? m + log(total) : total;
}

/* Hardmax (p = 0: 1 at the first largest x along n, NaN counting as the
 * largest, 0 elsewhere) and LpNormalization (p = 1: x / sum |x|, p = 2:
 * x / sqrt(sum x^2); 0 where the norm is 0) of x [outer, n, inner] along
 * n, one work-item per (outer, inner). */
__kernel void red_along_axis_f32(__global const float *x, __global float *y, long ny, long n, long inner, int p) {
    long o = get_global_id(0);
    if (o >= ny) return;
    long outer = o / inner, base = outer * n * inner + (o - outer * inner);
    if (p == 0) {
        long best = 0;
        float b = x[base];
        for (long k = 1; k < n; k++) {
            float v = x[base + k * inner];
            if (v > b || (v != v && b == b)) {
                best = k;
                b = v;
            }
        }
        for (long k = 0; k < n; k++) y[base + k * inner] = k == best ? 1.0f : 0.0f;
        return;
    }
    float sum = 0.0f, comp = 0.0f;
    for (long k = 0; k < n; k++) {
        float v = x[base + k * inner];
        red_add(&sum, &comp, p == 1 ? fabs(v) : v * v);
    }
    float total = isfinite(sum) ? sum + comp : sum;
    float norm = p == 1 ? total : sqrt(total);
    for (long k = 0; k < n; k++) y[base + k * inner] = norm == 0.0f ? 0.0f : x[base + k * inner] / norm;
}

/* MeanVarianceNormalization: for the group of output o (its reduced
 * elements), y = (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9); y has
 * x's layout, so the reduced walk addresses both. */
__kernel void red_mvn_f32(__global const float *x, __global float *y, RED_ARGS) {
    long o = get_global_id(0);
    if (o >= ny) return;
    float sum = 0.0f, comp = 0.0f; /* not s: FOR_REDUCED declares d, s, idx, off, r, k */
    {
        FOR_REDUCED(red_add(&sum, &comp, x[off]))
    }
    float mean = (isfinite(sum) ? sum + comp : sum) / (float)nr;
    float v = 0.0f, vc = 0.0f;
    {
        FOR_REDUCED({
            float dv = x[off] - mean;
            red_add(&v, &vc, dv * dv);
        })
    }
    float sd = sqrt((isfinite(v) ? v + vc : v) / (float)nr) + 1e-9f;
    {
        FOR_REDUCED(y[off] = (x[off] - mean) / sd)
    }
}

/* ArgMax (ArgMin) over x seen as [outer, n, inner]: output o = (outer
 * index, inner index) gets the first index of the largest (smallest) value
 * (the last with last = 1); NaN counts as the most extreme. */
#define ARGX(name, s, T, ISNAN, BETTER, BETTER_EQ)                                               \
    __kernel void red_##name##_##s(__global const T *x, __global long *y, long ny, long n, long inner, int last) { \
        long o = get_global_id(0);                                                               \
        if (o >= ny) return;                                                                     \
        long outer = o / inner;                                                                  \
        __global const T *xo = x + outer * n * inner + (o - outer * inner);                      \
        long best = 0;                                                                           \
        T b = xo[0];                                                                             \
        for (long k = 1; k < n; k++) {                                                           \
            T v = xo[k * inner];                                                                 \
            bool take = last ? (v BETTER_EQ b || ISNAN(v)) : (v BETTER b || (ISNAN(v) && !ISNAN(b))); \
            if (take) {                                                                          \
                best = k;                                                                        \
                b = v;                                                                           \
            }                                                                                    \
        }                                                                                        \
        y[o] = best;                                                                             \
    }

#define NAN_F(v) ((v) != (v))
#define NAN_I(v) false

#define ARGMAX(s, T, ISNAN) ARGX(argmax, s, T, ISNAN, >, >=) ARGX(argmin, s, T, ISNAN, <, <=)

ARGMAX(f32, float, NAN_F)
ARGMAX(i32, int, NAN_I)
ARGMAX(i64, long, NAN_I)
ARGMAX(u8, uchar, NAN_I)

/* Softmax (log_out = 0) or LogSoftmax (1) of x [outer, n, inner] along n:
 *     y = exp(x - max) / sum(exp(x - max))
 *     y = (x - max) - log(sum(exp(x - max)))
 * subtracting the maximum so exp never overflows. In place is safe: y[k] is
 * written only after x[k] was last read. A row holding NaN becomes NaN. */
__kernel void red_softmax_f32(__global const float *x, __global float *y, long ny, long n, long inner, int log_out) {
    long o = get_global_id(0);
    if (o >= ny) return;
    long outer = o / inner, base = outer * n * inner + (o - outer * inner);
    float m = -INFINITY;
    for (long k = 0; k < n; k++) {
        float v = x[base + k * inner];
        m = v > m ? v : m;
    }
    float sum = 0.0f, comp = 0.0f;
    for (long k = 0; k < n; k++) {
        float e = exp(x[base + k * inner] - m);
        if (!log_out) y[base + k * inner] = e;
        red_add(&sum, &comp, e);
    }
    float s = isfinite(sum) ? sum + comp : sum;
    if (log_out) {
        float ls = log(s);
        for (long k = 0; k < n; k++) y[base + k * inner] = (x[base + k * inner] - m) - ls;
    } else {
        for (long k = 0; k < n; k++) y[base + k * inner] = y[base + k * inner] / s;
    }
}
