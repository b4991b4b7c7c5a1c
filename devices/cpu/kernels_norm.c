/* Normalisation on the cpu (float32): BatchNormalization-15 in inference
 * mode and LayerNormalization-17.
 *
 * BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B per
 * channel (axis 1), computed as Y = X * a + b with a = scale / sqrt(var +
 * epsilon) and b = B - mean * a per channel (in double); each element is
 * read once before it is written, so Y may be X's buffer (forwarding).
 *
 * LayerNormalization follows its ONNX function body with stash_type 1
 * (statistics in float32 or wider): over each row of the normalised axes
 * [axis, r), Mean = mean(X), InvStdDev = 1 / sqrt(mean((X - Mean)^2) +
 * epsilon), Y = (X - Mean) * InvStdDev * Scale + B, with Scale and B
 * broadcast unidirectionally to X.shape[axis:]. Sums are in double, the
 * variance in two passes. An empty row gives NaN statistics (numpy's mean of
 * nothing). */
#include "devices/cpu/kernels_nn.h"
#include "devices/norm_geometry.h"

#include "support/alloc.h"

#include <math.h>
#include <string.h>

/* ---- BatchNormalization ------------------------------------------------------ */

tgc_status tgc_cpu_batch_norm_f32(tgc_kernel_ctx *c) {
    int64_t planes, channels, size;
    tgc_status st = tgc_batch_norm_geometry_read(c, &planes, &channels, &size);
    if (st != TGC_OK) return st;
    double eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5); /* a float attribute in ONNX */
    if (planes * size == 0) return TGC_OK;

    const float *px = tgc_kernel_in_ptr(c, 0), *scale = tgc_kernel_in_ptr(c, 1),
                *bias = tgc_kernel_in_ptr(c, 2);
    const float *mean = tgc_kernel_in_ptr(c, 3), *var = tgc_kernel_in_ptr(c, 4);
    float *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t p = 0; p < planes; p++) {
        int64_t ch = p % channels;
        double a = scale[ch] / sqrt((double)var[ch] + eps);
        double b = bias[ch] - mean[ch] * a;
        for (int64_t i = 0; i < size; i++) py[p * size + i] = (float)(px[p * size + i] * a + b);
    }
    return TGC_OK;
}

/* ---- LayerNormalization ------------------------------------------------------ */

/* Checks that p (Scale or B) broadcasts to dims[0..n) and writes it there
 * expanded into out[0..prod(dims)). */
static bool expand_param(const tgc_value *p, const float *src, const int64_t *dims, int n, float *out) {
    if (p->rank > n) return false;
    int64_t stride[TGC_MAX_RANK], acc = 1, count = 1;
    for (int i = n - 1; i >= 0; i--) {
        int pi = i - (n - p->rank);
        int64_t d = pi >= 0 ? p->dims[pi] : 1;
        if (d != 1 && d != dims[i]) return false;
        stride[i] = d == 1 ? 0 : acc;
        acc *= d;
        count *= dims[i];
    }
    for (int64_t j = 0; j < count; j++) {
        int64_t rest = j, off = 0;
        for (int i = n - 1; i >= 0; i--) {
            off += rest % dims[i] * stride[i];
            rest /= dims[i];
        }
        out[j] = src[off];
    }
    return true;
}

tgc_status tgc_cpu_layer_norm_f32(tgc_kernel_ctx *c) {
    tgc_layer_norm_geometry g;
    tgc_status st = tgc_layer_norm_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *sv = &c->inputs[1];
    int ax = g.ax;
    int64_t rows = g.rows, size = g.size;
    bool has_b = g.has_b, want_mean = g.want_mean, want_inv = g.want_inv;
    if (tgc_value_numel(sv) > size || (has_b && tgc_value_numel(&c->inputs[2]) > size))
        return tgc_kernel_fail(c, "Scale and B must broadcast to X.shape[%d:]", ax);
    if (rows == 0) return TGC_OK;
    float *mean_out = want_mean ? tgc_kernel_out_ptr(c, 1) : NULL,
          *inv_out = want_inv ? tgc_kernel_out_ptr(c, 2) : NULL;
    if (size == 0) { /* statistics of empty rows; nothing to normalise */
        for (int64_t r = 0; r < rows; r++) {
            if (mean_out != NULL) mean_out[r] = NAN;
            if (inv_out != NULL) inv_out[r] = NAN;
        }
        return TGC_OK;
    }

    /* Scale and B expanded to one value per position in a row. */
    float *params = tgc_malloc(2 * (size_t)size * sizeof(float));
    if (params == NULL) return tgc_kernel_fail(c, "out of host memory for LayerNormalization's parameters");
    float *scale = params, *bias = params + size;
    const int64_t *ndims = x->dims + ax;
    int nn = x->rank - ax;
    bool ok = expand_param(sv, tgc_kernel_in_ptr(c, 1), ndims, nn, scale);
    if (ok && has_b)
        ok = expand_param(&c->inputs[2], tgc_kernel_in_ptr(c, 2), ndims, nn, bias);
    else
        memset(bias, 0, (size_t)size * sizeof(float));
    if (!ok) {
        tgc_free(params);
        return tgc_kernel_fail(c, "Scale and B must broadcast to X.shape[%d:]", ax);
    }

    double eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5); /* a float attribute in ONNX */
    const float *px = tgc_kernel_in_ptr(c, 0);
    float *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = px + r * size;
        float *yr = py + r * size;
        double sum = 0.0, sq = 0.0;
        for (int64_t i = 0; i < size; i++) sum += xr[i];
        double mean = sum / (double)size;
        for (int64_t i = 0; i < size; i++) sq += (xr[i] - mean) * (xr[i] - mean);
        float inv = (float)(1.0 / sqrt(sq / (double)size + eps));
        float mf = (float)mean;
        for (int64_t i = 0; i < size; i++) yr[i] = (xr[i] - mf) * inv * scale[i] + bias[i];
        if (mean_out != NULL) mean_out[r] = mf;
        if (inv_out != NULL) inv_out[r] = inv;
    }
    tgc_free(params);
    return TGC_OK;
}
