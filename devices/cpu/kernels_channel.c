/* Per-channel and pooling kernels on the cpu (float32, ONNX opset 17;
 * LpPool in its opset-18 form):
 *   - InstanceNormalization-6: each (n, c) plane x becomes
 *     scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], mean and the
 *     biased variance summed in double (row_sum.h); planes split over the
 *     pool.
 *   - LRN-13: y = x / (bias + alpha / size * S)^beta, S the sum of x^2 over
 *     channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that
 *     exist (the ONNX operator spec).
 *   - LpPool-18: (sum over the window's taps that read input of |x|^p)^(1/p),
 *     padding adding nothing; the window is MaxPool's (devices/window.h).
 *   - GlobalMaxPool-1: each plane's maximum (a NaN wins, as numpy.max);
 *     GlobalLpPool-2: each plane's (sum |x|^p)^(1/p). An empty plane gives
 *     NaN for the maximum and 0 for the sum. */
#include "devices/cpu/kernels_convt.h"
#include "devices/cpu/row_sum.h"
#include "devices/cpu/target_clones.h"

#include "devices/window.h"

#include <math.h>
#include <string.h>

/* |v|^p for an integer p >= 1, exactly for p 1 and 2. */
static inline double abs_pow(double v, int64_t p) {
    v = fabs(v);
    return p == 1 ? v : p == 2 ? v * v : pow(v, (double)p);
}

/* s^(1/p), the inverse of abs_pow's power. */
static inline double root(double s, int64_t p) { return p == 1 ? s : p == 2 ? sqrt(s) : pow(s, 1.0 / (double)p); }

/* Reads attribute `p` (default 2, >= 1). */
static tgc_status read_p(tgc_kernel_ctx *c, int64_t *p) {
    *p = tgc_kernel_attr_int(c, "p", 2);
    return *p >= 1 ? TGC_OK : tgc_kernel_fail(c, "attribute 'p' is %lld; it must be >= 1", (long long)*p);
}

/* ---- InstanceNormalization ------------------------------------------------------------ */

typedef struct instance_norm {
    const float *x, *scale, *bias;
    float *y;
    int64_t channels, size;
    double eps;
} instance_norm;

/* One (n, c) plane: its mean and variance in double through eight partial
 * sums each (row_sum.h; one chain of dependent double adds took 1.6x ONNX
 * Runtime's time on [1, 64, 112, 112]), compiled for each vector ISA. */
TGC_CPU_CLONES static void instance_norm_plane(void *arg, int64_t plane, int slot) {
    (void)slot;
    const instance_norm *a = arg;
    const float *x = a->x + plane * a->size;
    float *y = a->y + plane * a->size;
    double mean = tgc_cpu_row_sum(x, a->size) / (double)a->size;
    double sq = tgc_cpu_row_sq_dev(x, a->size, mean);
    int64_t ch = plane % a->channels;
    double k = a->scale[ch] / sqrt(sq / (double)a->size + a->eps), b = a->bias[ch];
    for (int64_t i = 0; i < a->size; i++) y[i] = (float)((x[i] - mean) * k + b); /* in place: x[i] read first */
}

tgc_status tgc_cpu_instance_norm_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 3 || c->n_outputs < 1) return tgc_kernel_fail(c, "InstanceNormalization takes 3 inputs");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = tgc_kernel_need_f32(c, x, "input");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, &c->inputs[1], "input scale");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, &c->inputs[2], "input B");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, y, "output");
    if (st != TGC_OK) return st;
    if (x->rank < 2 || y->rank != x->rank || memcmp(x->dims, y->dims, (size_t)x->rank * sizeof *x->dims) != 0)
        return tgc_kernel_fail(c, "input must be [N, C, ...] and the output of its shape");
    for (int i = 1; i < 3; i++)
        if (c->inputs[i].rank != 1 || c->inputs[i].dims[0] != x->dims[1])
            return tgc_kernel_fail(c, "input %d must be [C = %lld]", i, (long long)x->dims[1]);
    int64_t total = tgc_value_numel(x), planes = x->dims[0] * x->dims[1];
    if (total == 0) return TGC_OK;
    instance_norm a = {.x = tgc_kernel_in_ptr(c, 0), .scale = tgc_kernel_in_ptr(c, 1), .bias = tgc_kernel_in_ptr(c, 2),
                       .y = tgc_kernel_out_ptr(c, 0), .channels = x->dims[1], .size = total / planes,
                       .eps = tgc_kernel_attr_float(c, "epsilon", 1e-5)};
    tgc_parallel_for(c->pool, planes, instance_norm_plane, &a);
    return TGC_OK;
}

/* ---- LRN ------------------------------------------------------------------------------- */

tgc_status tgc_cpu_lrn_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 1 || c->n_outputs < 1) return tgc_kernel_fail(c, "LRN takes 1 input");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = tgc_kernel_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (x->rank < 2 || y->rank != x->rank || memcmp(x->dims, y->dims, (size_t)x->rank * sizeof *x->dims) != 0)
        return tgc_kernel_fail(c, "input X must be [N, C, ...] and Y of its shape");
    int64_t size = tgc_kernel_attr_int(c, "size", 0);
    if (size < 1) return tgc_kernel_fail(c, "attribute 'size' is %lld; it must be >= 1", (long long)size);
    double alpha = tgc_kernel_attr_float(c, "alpha", 1e-4), beta = tgc_kernel_attr_float(c, "beta", 0.75);
    double bias = tgc_kernel_attr_float(c, "bias", 1.0);
    int64_t total = tgc_value_numel(x), channels = x->dims[1];
    if (total == 0) return TGC_OK;
    int64_t spatial = total / (x->dims[0] * channels), before = (size - 1) / 2, after = size - 1 - before;
    const float *px = tgc_kernel_in_ptr(c, 0);
    float *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t ch = 0; ch < channels; ch++) {
            int64_t c0 = ch - before < 0 ? 0 : ch - before, c1 = ch + after >= channels ? channels - 1 : ch + after;
            const float *xc = px + (n * channels + ch) * spatial;
            float *yc = py + (n * channels + ch) * spatial;
            for (int64_t s = 0; s < spatial; s++) {
                double sum = 0.0;
                for (int64_t k = c0; k <= c1; k++) {
                    double v = px[(n * channels + k) * spatial + s];
                    sum += v * v;
                }
                yc[s] = (float)(xc[s] / pow(bias + alpha / (double)size * sum, beta));
            }
        }
    return TGC_OK;
}

/* ---- LpPool ------------------------------------------------------------------------------ */

tgc_status tgc_cpu_lp_pool_f32(tgc_kernel_ctx *c) {
    tgc_window w;
    int64_t planes, in_size, out_size, kk, p;
    tgc_status st = tgc_window_read_pool(c, &w, &planes, &in_size, &out_size, &kk);
    if (st == TGC_OK) st = read_p(c, &p);
    if (st != TGC_OK) return st;
    const float *x = tgc_kernel_in_ptr(c, 0);
    float *y = tgc_kernel_out_ptr(c, 0);
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * in_size;
        int64_t o[TGC_MAX_RANK] = {0};
        for (int64_t j = 0; j < out_size; j++) {
            double sum = 0.0;
            int64_t t[TGC_MAX_RANK] = {0};
            for (int64_t tap = 0; tap < kk; tap++) {
                int64_t off = 0;
                bool inside = true;
                for (int a = 0; a < w.n && inside; a++) {
                    int64_t i = o[a] * w.strides[a] - w.pads[a] + t[a] * w.dilations[a];
                    inside = i >= 0 && i < w.in[a];
                    off = off * w.in[a] + i;
                }
                if (inside) sum += abs_pow(xp[off], p);
                for (int a = w.n - 1; a >= 0; a--) {
                    if (++t[a] < w.kernel[a]) break;
                    t[a] = 0;
                }
            }
            y[pl * out_size + j] = (float)root(sum, p);
            for (int a = w.n - 1; a >= 0; a--) {
                if (++o[a] < w.out[a]) break;
                o[a] = 0;
            }
        }
    }
    return TGC_OK;
}

/* ---- GlobalMaxPool, GlobalLpPool ------------------------------------------------------- */

tgc_status tgc_cpu_global_max_pool_f32(tgc_kernel_ctx *c) {
    int64_t planes, size;
    tgc_status st = tgc_window_read_global_pool(c, &planes, &size);
    if (st != TGC_OK) return st;
    const float *x = tgc_kernel_in_ptr(c, 0);
    float *y = tgc_kernel_out_ptr(c, 0);
    for (int64_t p = 0; p < planes; p++) {
        float best = size > 0 ? -INFINITY : NAN;
        for (int64_t i = 0; i < size; i++) {
            float v = x[p * size + i];
            best = v > best || v != v ? v : best;
            if (best != best) break;
        }
        y[p] = best;
    }
    return TGC_OK;
}

tgc_status tgc_cpu_global_lp_pool_f32(tgc_kernel_ctx *c) {
    int64_t planes, size, p;
    tgc_status st = tgc_window_read_global_pool(c, &planes, &size);
    if (st == TGC_OK) st = read_p(c, &p);
    if (st != TGC_OK) return st;
    const float *x = tgc_kernel_in_ptr(c, 0);
    float *y = tgc_kernel_out_ptr(c, 0);
    for (int64_t pl = 0; pl < planes; pl++) {
        double sum = 0.0;
        for (int64_t i = 0; i < size; i++) sum += abs_pow(x[pl * size + i], p);
        y[pl] = (float)root(sum, p);
    }
    return TGC_OK;
}
