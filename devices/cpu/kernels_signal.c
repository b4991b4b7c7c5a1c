/* Signal kernels on the cpu (ONNX opset 17), after ONNX's reference
 * implementation (onnx/reference/ops/op_*.py), computed in double:
 *
 *   HannWindow      sin^2(pi n / N)
 *   HammingWindow   25/46 - 21/46 cos(2 pi n / N)
 *   BlackmanWindow  0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
 *                   for n < size, N = size (periodic) or size - 1
 *   DFT             numpy.fft.fft / ifft along `axis` (dft_length: the
 *                   signal cut or zero-padded to it; the inverse divided by
 *                   it), onesided keeping bins [0, n / 2]; inverse with
 *                   onesided is numpy.fft.irfft (real output)
 *   STFT            frames x[f * step, f * step + frame_length), times the
 *                   window, each through the DFT
 *   MelWeightMatrix triangular filters between mel-spaced bin edges
 *
 * The transforms go through devices/cpu/fft.h (radix-2, Bluestein for
 * other lengths: O(n log n) for all). Outputs of output_datatype are
 * stored through OUT_TYPES, one line per type. */
#include "devices/cpu/fft.h"
#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include "support/alloc.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

#define PI 3.141592653589793238462643383279502884

/* X(tgc dtype, C type) for the plain numeric output types (float16 aside). */
#define OUT_TYPES(X)                                                                                                   \
    X(TGC_FLOAT32, float) X(TGC_FLOAT64, double) X(TGC_INT8, int8_t) X(TGC_INT16, int16_t) X(TGC_INT32, int32_t)       \
    X(TGC_INT64, int64_t) X(TGC_UINT8, uint8_t) X(TGC_UINT16, uint16_t) X(TGC_UINT32, uint32_t)                        \
    X(TGC_UINT64, uint64_t)

/* The float types the transforms read (float32, float16, float64). */
static bool float_in(tgc_dtype t) { return t == TGC_FLOAT32 || t == TGC_FLOAT16 || t == TGC_FLOAT64; }

/* Stores v as element i of p (type t), as numpy's astype: ints truncate.
 * Callers give values in the type's range. */
static void store_real(tgc_dtype t, void *p, int64_t i, double v) {
    if (!float_in(t) && !(v >= -9.2e18 && v <= 9.2e18)) v = 0; /* NaN: no UB */
    if (t == TGC_FLOAT16) ((uint16_t *)p)[i] = tgc_float_to_half((float)v);
#define STORE(dt, ct) else if (t == dt) ((ct *)p)[i] = (ct)v;
    OUT_TYPES(STORE)
#undef STORE
}

/* Element i of a float32, float16 or float64 tensor. */
static double load_float(tgc_dtype t, const void *p, int64_t i) {
    if (t == TGC_FLOAT64) return ((const double *)p)[i];
    return t == TGC_FLOAT16 ? tgc_half_to_float(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static bool storable(tgc_dtype t) {
#define IS(dt, ct) t == dt ||
    return OUT_TYPES(IS) t == TGC_FLOAT16;
#undef IS
}

/* The int32/int64 scalar host input i (`what`) in *v (0 when it fails). */
static tgc_status int_scalar(tgc_kernel_ctx *c, int i, const char *what, int64_t *v) {
    const tgc_value *in = &c->inputs[i];
    *v = 0; /* set on failure too: the callers read it only after TGC_OK, which the compiler cannot see */
    if ((in->dtype != TGC_INT32 && in->dtype != TGC_INT64) || tgc_value_numel(in) != 1)
        return tgc_kernel_fail(c, "input %d (%s) must be an int32 or int64 scalar", i, what);
    const void *p = tgc_kernel_in_ptr(c, i);
    *v = in->dtype == TGC_INT32 ? *(const int32_t *)p : *(const int64_t *)p;
    return TGC_OK;
}

/* ---- Windows ------------------------------------------------------------------------ */

typedef enum window_kind { HANN, HAMMING, BLACKMAN } window_kind;

static tgc_status window(tgc_kernel_ctx *c, window_kind kind) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    int64_t size;
    if (st == TGC_OK) st = int_scalar(c, 0, "size", &size);
    if (st != TGC_OK) return st;
    const tgc_value *y = &c->outputs[0];
    if (!storable(y->dtype)) return tgc_kernel_fail(c, "output is %s; a window is numeric", tgc_dtype_name(y->dtype));
    if (y->rank != 1 || y->dims[0] != size)
        return tgc_kernel_fail(c, "output must be [%lld], the window size", (long long)size);
    double big_n = (double)(tgc_kernel_attr_int(c, "periodic", 1) ? size : size - 1);
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t n = 0; n < size; n++) {
        double v, a = 2.0 * PI * (double)n / big_n;
        if (kind == HANN) v = sin(PI * (double)n / big_n) * sin(PI * (double)n / big_n);
        else if (kind == HAMMING) v = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * cos(a);
        else v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2.0 * a);
        store_real(y->dtype, py, n, v);
    }
    return TGC_OK;
}

static tgc_status hann_window(tgc_kernel_ctx *c) { return window(c, HANN); }
static tgc_status hamming_window(tgc_kernel_ctx *c) { return window(c, HAMMING); }
static tgc_status blackman_window(tgc_kernel_ctx *c) { return window(c, BLACKMAN); }

/* ---- DFT ------------------------------------------------------------------------------- */

/* One transform's buffers: the plan and n complex values. */
typedef struct transform {
    tgc_fft *plan;
    double *buf;
    int64_t n;
} transform;

static tgc_status transform_open(tgc_kernel_ctx *c, int64_t n, transform *t) {
    t->n = n;
    t->plan = tgc_fft_create(n);
    t->buf = t->plan != NULL ? tgc_malloc((size_t)n * 2 * sizeof(double)) : NULL;
    if (t->buf == NULL) {
        tgc_fft_release(t->plan);
        return tgc_kernel_fail(c, "out of host memory for a transform of length %lld", (long long)n);
    }
    return TGC_OK;
}

static void transform_close(transform *t) {
    tgc_fft_release(t->plan);
    tgc_free(t->buf);
}

static tgc_status dft(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int r = x->rank;
    if (!float_in(x->dtype) || y->dtype != x->dtype || r < 2 ||
        (x->dims[r - 1] != 1 && x->dims[r - 1] != 2) || y->rank != r)
        return tgc_kernel_fail(c, "DFT takes float [batch, ..., 1 or 2] to the same dtype and rank");
    int64_t axis = tgc_kernel_attr_int(c, "axis", 1);
    if (axis < -r || axis >= r - 1 || axis == -1) return tgc_kernel_fail(c, "attribute 'axis' is out of range");
    int ax = (int)(axis < 0 ? axis + r : axis);
    bool inverse = tgc_kernel_attr_int(c, "inverse", 0) != 0, onesided = tgc_kernel_attr_int(c, "onesided", 0) != 0;
    int64_t len = x->dims[ax], n = inverse && onesided ? 2 * (len > 0 ? len - 1 : 0) : len;
    if (tgc_kernel_has_input(c, 1) && (st = int_scalar(c, 1, "dft_length", &n)) != TGC_OK) return st;
    if (n < 1) return tgc_kernel_fail(c, "dft_length is %lld; it must be >= 1", (long long)n);
    bool real_out = inverse && onesided;
    int64_t bins = real_out ? n : onesided ? n / 2 + 1 : n;
    int64_t cin = x->dims[r - 1], cout = real_out ? 1 : 2;
    for (int d = 0; d < r; d++) {
        int64_t want = d == ax ? bins : d == r - 1 ? cout : x->dims[d];
        if (y->dims[d] != want) {
            char sy[TGC_KERNEL_DIMS_BUF];
            return tgc_kernel_fail(c, "output has shape %s; dim %d should be %lld", tgc_kernel_dims_str(r, y->dims, sy),
                                   d, (long long)want);
        }
    }
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < r - 1; d++) inner *= x->dims[d];
    if (outer * inner == 0) return TGC_OK;
    transform t;
    if ((st = transform_open(c, n, &t)) != TGC_OK) return st;
    const void *px = tgc_kernel_in_ptr(c, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    /* real_out reads the bins [0, n / 2] it needs (numpy's irfft). */
    int64_t take = real_out ? n / 2 + 1 : n, have = len < take ? len : take;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double *b = t.buf;
            memset(b, 0, (size_t)n * 2 * sizeof(double));
            for (int64_t k = 0; k < have; k++) {
                int64_t at = ((o * len + k) * inner + i) * cin;
                b[2 * k] = load_float(x->dtype, px, at);
                b[2 * k + 1] = cin == 2 ? load_float(x->dtype, px, at + 1) : 0;
            }
            if (real_out) { /* Hermitian: X[n - k] = conj(X[k]); the imaginary parts of X[0], X[n / 2] dropped */
                b[1] = 0;
                if (n % 2 == 0) b[n + 1] = 0;
                for (int64_t k = 1; k < (n + 1) / 2; k++) b[2 * (n - k)] = b[2 * k], b[2 * (n - k) + 1] = -b[2 * k + 1];
            }
            tgc_fft_run(t.plan, b, inverse);
            double scale = inverse ? 1.0 / (double)n : 1.0;
            for (int64_t k = 0; k < bins; k++) {
                int64_t at = ((o * bins + k) * inner + i) * cout;
                store_real(y->dtype, py, at, b[2 * k] * scale);
                if (cout == 2) store_real(y->dtype, py, at + 1, b[2 * k + 1] * scale);
            }
        }
    transform_close(&t);
    return TGC_OK;
}

/* ---- STFT ------------------------------------------------------------------------------ */

static tgc_status stft(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    bool has_window = tgc_kernel_has_input(c, 2);
    if (!float_in(x->dtype) || y->dtype != x->dtype || x->rank != 3 ||
        (x->dims[2] != 1 && x->dims[2] != 2) ||
        (has_window && (c->inputs[2].dtype != x->dtype || c->inputs[2].rank != 1)))
        return tgc_kernel_fail(c, "STFT takes a float signal [batch, length, 1 or 2] and a 1-D window of its dtype");
    int64_t step, flen = has_window ? c->inputs[2].dims[0] : x->dims[1];
    if ((st = int_scalar(c, 1, "frame_step", &step)) != TGC_OK) return st;
    if (tgc_kernel_has_input(c, 3) && (st = int_scalar(c, 3, "frame_length", &flen)) != TGC_OK) return st;
    if (step < 1 || flen < 1 || flen > x->dims[1] || (has_window && c->inputs[2].dims[0] != flen))
        return tgc_kernel_fail(c, "frame_step %lld and frame_length %lld must be >= 1, the frame no longer than the "
                               "signal (%lld) and the window's length", (long long)step, (long long)flen,
                               (long long)x->dims[1]);
    bool onesided = tgc_kernel_attr_int(c, "onesided", 1) != 0;
    int64_t batch = x->dims[0], len = x->dims[1], cin = x->dims[2];
    int64_t frames = 1 + (len - flen) / step, bins = onesided ? flen / 2 + 1 : flen;
    int64_t want[4] = {batch, frames, bins, 2};
    if ((st = tgc_kernel_expect_dims(c, 0, 4, want)) != TGC_OK) return st;
    if (batch * frames == 0) return TGC_OK;
    transform t;
    if ((st = transform_open(c, flen, &t)) != TGC_OK) return st;
    const void *px = tgc_kernel_in_ptr(c, 0), *pw = has_window ? tgc_kernel_in_ptr(c, 2) : NULL;
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t j = 0; j < flen; j++) {
                int64_t at = (b * len + f * step + j) * cin;
                double w = pw != NULL ? load_float(x->dtype, pw, j) : 1.0;
                t.buf[2 * j] = load_float(x->dtype, px, at) * w;
                t.buf[2 * j + 1] = cin == 2 ? load_float(x->dtype, px, at + 1) * w : 0;
            }
            tgc_fft_run(t.plan, t.buf, false);
            for (int64_t k = 0; k < bins; k++) {
                int64_t at = ((b * frames + f) * bins + k) * 2;
                store_real(y->dtype, py, at, t.buf[2 * k]);
                store_real(y->dtype, py, at + 1, t.buf[2 * k + 1]);
            }
        }
    transform_close(&t);
    return TGC_OK;
}

/* ---- MelWeightMatrix --------------------------------------------------------------------- */

/* The reference's arithmetic, in double: mel(f) = 2595 log10(1 + f / 700),
 * num_mel_bins + 2 edges evenly spaced in mels from the lower edge by
 * (high - low) / (num_mel_bins + 2), each back in hertz and floored to a
 * bin: floor((dft_length + 1) * hz / sample_rate). */
static tgc_status mel_weight_matrix(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 5, 1);
    int64_t bins_n, dft_len, rate;
    if (st == TGC_OK) st = int_scalar(c, 0, "num_mel_bins", &bins_n);
    if (st == TGC_OK) st = int_scalar(c, 1, "dft_length", &dft_len);
    if (st == TGC_OK) st = int_scalar(c, 2, "sample_rate", &rate);
    if (st != TGC_OK) return st;
    for (int i = 3; i < 5; i++)
        if (!float_in(c->inputs[i].dtype) ||
            tgc_value_numel(&c->inputs[i]) != 1)
            return tgc_kernel_fail(c, "input %d must be a float scalar (a frequency in hertz)", i);
    const tgc_value *y = &c->outputs[0];
    if (bins_n < 0 || dft_len < 1 || rate < 1)
        return tgc_kernel_fail(c, "num_mel_bins must be >= 0, dft_length and sample_rate >= 1");
    int64_t spec = dft_len / 2 + 1, want[2] = {spec, bins_n};
    if ((st = tgc_kernel_expect_dims(c, 0, 2, want)) != TGC_OK) return st;
    if (!storable(y->dtype)) return tgc_kernel_fail(c, "output is %s; it must be numeric", tgc_dtype_name(y->dtype));
    double lo_hz = load_float(c->inputs[3].dtype, tgc_kernel_in_ptr(c, 3), 0);
    double hi_hz = load_float(c->inputs[4].dtype, tgc_kernel_in_ptr(c, 4), 0);
    double lo_mel = 2595.0 * log10(1.0 + lo_hz / 700.0), hi_mel = 2595.0 * log10(1.0 + hi_hz / 700.0);
    double mel_step = (hi_mel - lo_mel) / (double)(bins_n + 2);
    int64_t *edge = tgc_malloc((size_t)(bins_n + 2) * sizeof(int64_t));
    double *out = tgc_calloc((size_t)(spec * bins_n + 1), sizeof(double));
    if (edge == NULL || out == NULL) {
        tgc_free(edge), tgc_free(out);
        return tgc_kernel_fail(c, "out of host memory for the mel filters");
    }
    for (int64_t i = 0; i < bins_n + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * mel_step + lo_mel) / 2595.0) - 1.0);
        edge[i] = (int64_t)floor((double)(dft_len + 1) * hz / (double)rate);
    }
    bool ok = true;
    for (int64_t i = 0; i < bins_n && ok; i++) {
        int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
        ok = left >= 0 && center >= left && right >= center && right <= spec && center < spec;
        if (!ok) break;
        if (center == left) out[center * bins_n + i] = 1;
        else
            for (int64_t j = left; j <= center; j++) out[j * bins_n + i] = (double)(j - left) / (double)(center - left);
        for (int64_t j = center; j < right; j++) out[j * bins_n + i] = (double)(right - j) / (double)(right - center);
    }
    if (ok) {
        void *py = tgc_kernel_out_ptr(c, 0);
        for (int64_t e = 0; e < spec * bins_n; e++) store_real(y->dtype, py, e, out[e]);
    }
    tgc_free(edge), tgc_free(out);
    if (!ok)
        return tgc_kernel_fail(c, "the mel filters' edges fall outside the %lld spectrogram bins (edge hertz "
                               "%g..%g at sample rate %lld)", (long long)spec, lo_hz, hi_hz, (long long)rate);
    return TGC_OK;
}

/* ---- The family ----------------------------------------------------------------------------- */

#define HOST(i) (1u << (i))
#define INTS {TGC_INT32, TGC_INT64, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_cpu_kernels_signal[] = {
    {.op = "HannWindow", .fn = hann_window, .forward_input = -1, .host_inputs = HOST(0),
     .dtypes = INTS},
    {.op = "HammingWindow", .fn = hamming_window, .forward_input = -1, .host_inputs = HOST(0),
     .dtypes = INTS},
    {.op = "BlackmanWindow", .fn = blackman_window, .forward_input = -1, .host_inputs = HOST(0),
     .dtypes = INTS},
    {.op = "DFT", .fn = dft, .forward_input = -1, .host_inputs = HOST(1),
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_DTYPE_INVALID}},
    {.op = "STFT", .fn = stft, .forward_input = -1, .host_inputs = HOST(1) | HOST(3),
     .dtypes = {TGC_FLOAT32, TGC_FLOAT16, TGC_FLOAT64, TGC_DTYPE_INVALID}},
    {.op = "MelWeightMatrix", .fn = mel_weight_matrix, .forward_input = -1,
     .host_inputs = HOST(0) | HOST(1) | HOST(2) | HOST(3) | HOST(4), .dtypes = INTS},
    {.op = NULL},
};
