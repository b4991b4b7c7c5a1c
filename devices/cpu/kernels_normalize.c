/* The cpu kernels of the normalisations along axes (ONNX opset 17; the
 * definitions of ONNX's reference, onnx/reference/ops/op_*.py, and of
 * MeanVarianceNormalization's function body in onnx/defs/nn/defs.cc):
 *     Hardmax-13           y = 1 at the first largest x along `axis`
 *                          (default -1; NaN counts as the largest, as
 *                          numpy.argmax), 0 elsewhere
 *     LpNormalization-1    y = x / ||x||_p along `axis` (default -1), p 1
 *                          (sum |x|) or 2 (sqrt(sum x^2)); a zero norm
 *                          gives 0, as the reference
 *     MeanVarianceNormalization-13   y = (x - mean) / (std + 1e-9) over
 *                          `axes` (default [0, 2, 3]), std the population
 *                          standard deviation
 * on float32 and float16 (widened to float32, sums in double), and
 * tgc_cpu_kernels_normalize[]. Each kernel checks that the output has the
 * input's dtype and dims before it writes. */
#include "devices/kernel_checks.h"
#include "devices/reduce_axes.h"
#include "support/alloc.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

/* The input as float32: x itself, or a widened copy in *owned (freed by
 * the caller) for float16. NULL on another dtype or out of memory (both
 * reported through tgc_kernel_fail into *st). */
static const float *input_f32(tgc_kernel_ctx *c, const tgc_value *x, float **owned, tgc_status *st) {
    *owned = NULL;
    if (x->dtype == TGC_FLOAT32) return tgc_buffer_host_ptr(x->buf);
    if (x->dtype != TGC_FLOAT16) {
        *st = tgc_kernel_fail(c, "%s: the cpu has no kernel for %s", tgc_kernel_op_name(c), tgc_dtype_name(x->dtype));
        return NULL;
    }
    int64_t n = tgc_value_numel(x);
    *owned = tgc_malloc((size_t)n * sizeof(float));
    if (*owned == NULL) {
        *st = tgc_kernel_fail(c, "%s: out of memory widening float16", tgc_kernel_op_name(c));
        return NULL;
    }
    const uint16_t *h = tgc_buffer_host_ptr(x->buf);
    for (int64_t i = 0; i < n; i++) (*owned)[i] = tgc_half_to_float(h[i]);
    return *owned;
}

/* Where the float32 result goes: y itself, or scratch in *owned for
 * float16 (narrowed by output_done). */
static float *output_f32(tgc_kernel_ctx *c, const tgc_value *y, float **owned, tgc_status *st) {
    *owned = NULL;
    if (y->dtype == TGC_FLOAT32) return tgc_buffer_host_ptr(y->buf);
    *owned = tgc_malloc((size_t)tgc_value_numel(y) * sizeof(float));
    if (*owned == NULL) *st = tgc_kernel_fail(c, "%s: out of memory", tgc_kernel_op_name(c));
    return *owned;
}

static void output_done(const tgc_value *y, const float *yf) {
    if (y->dtype != TGC_FLOAT16) return;
    uint16_t *h = tgc_buffer_host_ptr(y->buf);
    for (int64_t i = 0, n = tgc_value_numel(y); i < n; i++) h[i] = tgc_float_to_half(yf[i]);
}

/* Checks output 0 against input 0 (same dtype and dims, float32 or
 * float16) and reads `axis` (default -1) into [outer, n, inner]. */
static tgc_status along_axis(tgc_kernel_ctx *c, int64_t *outer, int64_t *n, int64_t *inner) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: output is %s, the input %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(x->dtype));
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    int axis;
    st = tgc_reduce_norm_axis(c, tgc_kernel_op_name(c), "axis", tgc_kernel_attr_int(c, "axis", -1), x->rank, &axis);
    if (st != TGC_OK) return st;
    *outer = *inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis) *outer *= x->dims[d];
        if (d > axis) *inner *= x->dims[d];
    }
    *n = x->dims[axis];
    return TGC_OK;
}

/* ==== Hardmax ================================================================ */

static void hardmax_f32(const float *x, float *y, int64_t outer, int64_t n, int64_t inner) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xo = x + o * n * inner + i;
            float *yo = y + o * n * inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < n; k++) {
                float v = xo[k * inner], b = xo[best * inner];
                if (v > b || (v != v && b == b)) best = k;
            }
            for (int64_t k = 0; k < n; k++) yo[k * inner] = k == best ? 1.0f : 0.0f;
        }
}

/* ==== LpNormalization ======================================================== */

static void lp_normalize_f32(const float *x, float *y, int64_t outer, int64_t n, int64_t inner, int p) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xo = x + o * n * inner + i;
            float *yo = y + o * n * inner + i;
            double s = 0;
            for (int64_t k = 0; k < n; k++) {
                double v = xo[k * inner];
                s += p == 1 ? fabs(v) : v * v;
            }
            double norm = p == 1 ? s : sqrt(s);
            for (int64_t k = 0; k < n; k++) yo[k * inner] = norm == 0 ? 0.0f : (float)(xo[k * inner] / norm);
        }
}

/* Hardmax-13 (p 0) and LpNormalization-1 (p 1 or 2). */
static tgc_status along_axis_kernel(tgc_kernel_ctx *c, int p) {
    int64_t outer = 0, n = 0, inner = 0;
    tgc_status st = along_axis(c, &outer, &n, &inner);
    if (st != TGC_OK) return st;
    if (outer * n * inner == 0) return TGC_OK;
    float *xo, *yo;
    const float *x = input_f32(c, &c->inputs[0], &xo, &st);
    float *y = x ? output_f32(c, &c->outputs[0], &yo, &st) : NULL;
    if (y != NULL) {
        if (p == 0) hardmax_f32(x, y, outer, n, inner);
        else lp_normalize_f32(x, y, outer, n, inner, p);
        output_done(&c->outputs[0], y);
    }
    if (x != NULL) tgc_free(yo);
    tgc_free(xo);
    return st;
}

static tgc_status k_hardmax(tgc_kernel_ctx *c) { return along_axis_kernel(c, 0); }

static tgc_status k_lp_normalization(tgc_kernel_ctx *c) {
    int64_t p = tgc_kernel_attr_int(c, "p", 2);
    if (p != 1 && p != 2)
        return tgc_kernel_fail(c, "%s: p is %lld; it must be 1 or 2", tgc_kernel_op_name(c), (long long)p);
    return along_axis_kernel(c, (int)p);
}

/* ==== MeanVarianceNormalization ============================================== */

/* Walks x (dims[0..rank)) in row-major order, giving each element the
 * offset of its group (the output of reducing over the axes, kept as 1):
 * f(i, group) for element i. */
#define FOR_EACH_GROUP(rank, dims, gstride, BODY)                                                  \
    do {                                                                                           \
        int64_t idx_[TGC_MAX_RANK] = {0}, g_ = 0, n_ = 1;                                          \
        for (int d_ = 0; d_ < (rank); d_++) n_ *= (dims)[d_];                                      \
        for (int64_t i = 0; i < n_; i++) {                                                         \
            int64_t group = g_;                                                                    \
            BODY;                                                                                  \
            for (int d_ = (rank) - 1; d_ >= 0; d_--) {                                             \
                g_ += (gstride)[d_];                                                               \
                if (++idx_[d_] < (dims)[d_]) break;                                                \
                g_ -= (gstride)[d_] * (dims)[d_];                                                  \
                idx_[d_] = 0;                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static tgc_status k_mvn(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: output is %s, the input %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(x->dtype));
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, x->dims)) != TGC_OK) return st;
    static const int64_t dflt[] = {0, 2, 3};
    size_t n_axes;
    const int64_t *axes = tgc_kernel_attr_ints(c, "axes", &n_axes);
    if (tgc_node_attr(c->node, "axes") == NULL) {
        axes = dflt;
        n_axes = 3;
    }
    bool reduced[TGC_MAX_RANK];
    int64_t out[TGC_MAX_RANK];
    int out_rank;
    /* An empty list would mean every axis to the ReduceX ops; here it
     * means none (each element its own group: y = 0 / 1e-9 = 0). */
    if (n_axes == 0) {
        for (int d = 0; d < x->rank; d++) reduced[d] = false;
    } else if ((st = tgc_reduce_axes_read(c, tgc_kernel_op_name(c), axes, n_axes, x->rank, x->dims, reduced, out,
                                          &out_rank)) != TGC_OK) {
        return st;
    }
    int64_t gstride[TGC_MAX_RANK], groups = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        gstride[d] = reduced[d] ? 0 : groups;
        if (!reduced[d]) groups *= x->dims[d];
    }
    int64_t nx = tgc_value_numel(x);
    if (nx == 0) return TGC_OK;
    double count = (double)(nx / groups);
    float *xo, *yo;
    const float *xf = input_f32(c, x, &xo, &st);
    float *yf = xf ? output_f32(c, y, &yo, &st) : NULL;
    double *mean = yf ? tgc_calloc((size_t)groups, sizeof *mean) : NULL;
    double *var = mean ? tgc_calloc((size_t)groups, sizeof *var) : NULL;
    if (yf != NULL && var == NULL) st = tgc_kernel_fail(c, "%s: out of memory", tgc_kernel_op_name(c));
    if (var != NULL) {
        FOR_EACH_GROUP(x->rank, x->dims, gstride, mean[group] += xf[i]);
        for (int64_t g = 0; g < groups; g++) mean[g] /= count;
        FOR_EACH_GROUP(x->rank, x->dims, gstride, {
            double dv = xf[i] - mean[group];
            var[group] += dv * dv;
        });
        for (int64_t g = 0; g < groups; g++) var[g] = sqrt(var[g] / count) + 1e-9;
        FOR_EACH_GROUP(x->rank, x->dims, gstride, yf[i] = (float)((xf[i] - mean[group]) / var[group]));
        output_done(y, yf);
    }
    tgc_free(var);
    tgc_free(mean);
    if (xf != NULL) tgc_free(yo);
    tgc_free(xo);
    return st;
}

/* ==== The list ================================================================ */

#define NORM(name, f)                                                                                \
    {.op = name, .fn = f, .forward_input = -1,                               \
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_DTYPE_INVALID}}

const tgc_kernel_def tgc_cpu_kernels_normalize[] = {
    NORM("Hardmax", k_hardmax),
    NORM("LpNormalization", k_lp_normalization),
    NORM("MeanVarianceNormalization", k_mvn),
    {.op = NULL},
};
