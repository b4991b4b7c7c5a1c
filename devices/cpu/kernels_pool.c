/* Pooling on the cpu (float32): MaxPool-12 with its optional Indices,
 * AveragePool-11, GlobalAveragePool-1, over any number of spatial axes; and
 * the sliding-window geometry (ONNX's convPoolShapeInference, pads included)
 * that Conv shares.
 *
 * A window is the Cartesian product, over the spatial axes, of the taps
 * o * stride - pad_begin + t * dilation (t < kernel); a tap outside the input
 * is padding. With ceil_mode the last window may also run past pad_end; those
 * taps are neither input nor padding and count for nothing:
 *   - MaxPool ignores padding (as -inf). Ties keep the first maximum in
 *     row-major window order (onnxruntime and PyTorch alike); a NaN wins.
 *     Indices are flattened over the whole input tensor, N and C included:
 *     (n * C + c) * prod(D) + the spatial offset, row-major for
 *     storage_order 0, column-major (first spatial axis fastest) for 1.
 *   - AveragePool divides by the taps inside the input (count_include_pad
 *     0) or inside the padded input [-pad_begin, D + pad_end) (1), the rule
 *     of the ONNX reference implementation and of PyTorch.
 *   - A window with nothing to count (no input tap for MaxPool and for
 *     AveragePool with count_include_pad 0, nothing inside the padded input
 *     for 1: only possible with pads >= kernel or ceil_mode overshoot) gives
 *     NaN, and Indices -1. */
#include "devices/cpu/kernels_nn.h"

#include <math.h>
#include <string.h>

/* ---- Window geometry ------------------------------------------------------- */

/* ceil(a / b) and floor(a / b) for b > 0 and any sign of a. */
static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

void tgc_cpu_window_taps(int64_t start, int64_t k, int64_t d, int64_t begin, int64_t end, int64_t *lo,
                         int64_t *hi) {
    /* begin <= start + t * d < end  <=>  ceil((begin - start) / d) <= t <= floor((end - 1 - start) / d) */
    int64_t l = ceil_div(begin - start, d), h = floor_div(end - 1 - start, d) + 1;
    if (l < 0) l = 0;
    if (h > k) h = k;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* Reads INTS attribute `name` of exactly `len` values >= min into out, or
 * `dflt` everywhere when absent. */
static tgc_status read_ints(tgc_kernel_ctx *c, const char *name, int len, int64_t min, int64_t dflt,
                            int64_t *out) {
    size_t n;
    const int64_t *v = tgc_kernel_attr_ints(c, name, &n);
    if (v == NULL) {
        for (int i = 0; i < len; i++) out[i] = dflt;
        return TGC_OK;
    }
    if (n != (size_t)len)
        return tgc_kernel_fail(c, "attribute '%s' has %zu values; it needs %d", name, n, len);
    for (int i = 0; i < len; i++) {
        if (v[i] < min)
            return tgc_kernel_fail(c, "attribute '%s' has %lld at position %d; values must be >= %lld", name,
                                   (long long)v[i], i, (long long)min);
        out[i] = v[i];
    }
    return TGC_OK;
}

tgc_status tgc_cpu_window_read(tgc_kernel_ctx *c, const tgc_value *x, const tgc_value *y,
                               const int64_t *kernel, bool ceil_mode, tgc_cpu_window *w) {
    memset(w, 0, sizeof *w);
    int n = x->rank - 2;
    if (n < 1) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, D1, ...]", x->rank);
    if (y->rank != x->rank)
        return tgc_kernel_fail(c, "output Y has rank %d; X has rank %d", y->rank, x->rank);
    w->n = n;
    tgc_status st = read_ints(c, "strides", n, 1, 1, w->strides);
    if (st == TGC_OK) st = read_ints(c, "dilations", n, 1, 1, w->dilations);
    if (st == TGC_OK) st = read_ints(c, "pads", 2 * n, 0, 0, w->pads);
    if (st != TGC_OK) return st;
    const char *auto_pad = tgc_kernel_attr_string(c, "auto_pad", "NOTSET");
    bool same_upper = strcmp(auto_pad, "SAME_UPPER") == 0, same_lower = strcmp(auto_pad, "SAME_LOWER") == 0;
    bool valid = strcmp(auto_pad, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(auto_pad, "NOTSET") != 0)
        return tgc_kernel_fail(c,
                               "attribute 'auto_pad' is '%s'; it must be NOTSET, SAME_UPPER, "
                               "SAME_LOWER or VALID",
                               auto_pad);
    for (int i = 0; i < n; i++) {
        int64_t in = x->dims[2 + i], k = kernel[i], s = w->strides[i];
        if (k < 1)
            return tgc_kernel_fail(c, "kernel size %lld on spatial axis %d; it must be >= 1", (long long)k,
                                   i);
        int64_t ek = (k - 1) * w->dilations[i] + 1; /* the window's extent */
        if (valid) {
            w->pads[i] = w->pads[n + i] = 0;
        } else if (same_upper || same_lower) {
            /* ONNX: total = ek - s, or ek - in % s when s does not divide in,
             * so that the output is ceil(in / s); the odd pad goes to the end
             * for SAME_UPPER, to the beginning for SAME_LOWER. */
            int64_t total = in % s == 0 ? ek - s : ek - in % s;
            if (total < 0) total = 0;
            w->pads[i] = same_upper ? total / 2 : total - total / 2;
            w->pads[n + i] = total - w->pads[i];
        }
        int64_t span = in + w->pads[i] + w->pads[n + i] - ek;
        if (span < 0)
            return tgc_kernel_fail(c,
                                   "spatial axis %d has size %lld (%lld with padding), smaller than the "
                                   "kernel's extent %lld",
                                   i, (long long)in, (long long)(in + w->pads[i] + w->pads[n + i]),
                                   (long long)ek);
        int64_t out = y->dims[2 + i];
        if (out != span / s + 1 && !(ceil_mode && out == ceil_div(span, s) + 1))
            return tgc_kernel_fail(c, "output Y has %lld on spatial axis %d; the window gives %lld",
                                   (long long)out, i, (long long)(span / s + 1));
        w->in[i] = in;
        w->out[i] = out;
        w->kernel[i] = k;
    }
    return TGC_OK;
}

/* ---- MaxPool, AveragePool ---------------------------------------------------- */

/* Checks X and Y and reads the window of MaxPool or AveragePool; *planes is
 * N * C, *in_size and *out_size the spatial element counts. */
static tgc_status pool_setup(tgc_kernel_ctx *c, tgc_cpu_window *w, int64_t *planes, int64_t *in_size,
                             int64_t *out_size) {
    if (c->n_inputs < 1 || c->n_outputs < 1) return tgc_kernel_fail(c, "pooling takes 1 input and an output");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = tgc_cpu_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    int n = x->rank - 2;
    if (n < 1) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, D1, ...]", x->rank);
    int64_t kernel[TGC_MAX_RANK];
    size_t nk;
    const int64_t *k = tgc_kernel_attr_ints(c, "kernel_shape", &nk);
    if (k == NULL || nk != (size_t)n)
        return tgc_kernel_fail(
            c, "attribute 'kernel_shape' must give one size for each of X's %d spatial axes", n);
    memcpy(kernel, k, nk * sizeof *k);
    int64_t ceil_mode = tgc_kernel_attr_int(c, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return tgc_kernel_fail(c, "attribute 'ceil_mode' is %lld; it must be 0 or 1", (long long)ceil_mode);
    st = tgc_cpu_window_read(c, x, y, kernel, ceil_mode == 1, w);
    if (st != TGC_OK) return st;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return tgc_kernel_fail(c, "output Y must keep X's N and C (%lld, %lld)", (long long)x->dims[0],
                               (long long)x->dims[1]);
    *planes = x->dims[0] * x->dims[1];
    *in_size = *out_size = 1;
    for (int i = 0; i < n; i++) {
        *in_size *= w->in[i];
        *out_size *= w->out[i];
    }
    return TGC_OK;
}

/* One output position's window: per axis the input index of tap 0 (start)
 * and the taps [lo, hi) that read input rather than padding. */
typedef struct window_at {
    int64_t start[TGC_MAX_RANK], lo[TGC_MAX_RANK], hi[TGC_MAX_RANK];
} window_at;

/* Fills *at for output position o[0..n); false if the window reads no input. */
static bool window_locate(const tgc_cpu_window *w, const int64_t *o, window_at *at) {
    bool any = true;
    for (int a = 0; a < w->n; a++) {
        at->start[a] = o[a] * w->strides[a] - w->pads[a];
        tgc_cpu_window_taps(at->start[a], w->kernel[a], w->dilations[a], 0, w->in[a], &at->lo[a], &at->hi[a]);
        any = any && at->lo[a] < at->hi[a];
    }
    return any;
}

/* Advances the odometer t over [lo, hi) per axis, last axis fastest;
 * false when it wraps around. */
static bool odometer_next(int n, int64_t *t, const int64_t *lo, const int64_t *hi) {
    for (int a = n - 1; a >= 0; a--) {
        if (++t[a] < hi[a]) return true;
        t[a] = lo[a];
    }
    return false;
}

/* Row-major offset within a spatial plane of window `at`'s tap t. */
static int64_t tap_offset(const tgc_cpu_window *w, const window_at *at, const int64_t *t) {
    int64_t off = 0;
    for (int a = 0; a < w->n; a++) off = off * w->in[a] + at->start[a] + t[a] * w->dilations[a];
    return off;
}

/* Row-major spatial offset `off` as column-major (first axis fastest). */
static int64_t column_major(const tgc_cpu_window *w, int64_t off) {
    int64_t col = 0;
    for (int a = 0; a < w->n; a++) {
        int64_t stride = 1;
        for (int b = a + 1; b < w->n; b++) stride *= w->in[b];
        int64_t i = off / stride;
        off %= stride;
        int64_t cstride = 1;
        for (int b = 0; b < a; b++) cstride *= w->in[b];
        col += i * cstride;
    }
    return col;
}

tgc_status tgc_cpu_max_pool_f32(tgc_kernel_ctx *c) {
    tgc_cpu_window w;
    int64_t planes, in_size, out_size;
    tgc_status st = pool_setup(c, &w, &planes, &in_size, &out_size);
    if (st != TGC_OK) return st;
    int64_t storage_order = tgc_kernel_attr_int(c, "storage_order", 0);
    if (storage_order != 0 && storage_order != 1)
        return tgc_kernel_fail(c, "attribute 'storage_order' is %lld; it must be 0 or 1",
                               (long long)storage_order);
    bool want_indices = tgc_cpu_has_output(c, 1);
    if (want_indices) {
        const tgc_value *iv = &c->outputs[1];
        if (iv->dtype != TGC_INT64 || tgc_value_numel(iv) != planes * out_size)
            return tgc_kernel_fail(c, "output Indices must be int64 with Y's shape");
    }
    if (planes * out_size == 0) return TGC_OK;
    const float *x = tgc_kernel_in_ptr(c, 0);
    float *y = tgc_kernel_out_ptr(c, 0);
    int64_t *indices = want_indices ? tgc_kernel_out_ptr(c, 1) : NULL;

    for (int64_t p = 0; p < planes; p++) {
        int64_t o[TGC_MAX_RANK] = {0}, zero[TGC_MAX_RANK] = {0};
        for (int64_t j = 0; j < out_size; j++, odometer_next(w.n, o, zero, w.out)) {
            window_at at;
            float best = NAN;
            int64_t best_off = -1;
            if (window_locate(&w, o, &at)) {
                int64_t t[TGC_MAX_RANK];
                memcpy(t, at.lo, sizeof t);
                do {
                    int64_t off = tap_offset(&w, &at, t);
                    float v = x[p * in_size + off];
                    if (best_off < 0 || v > best || (isnan(v) && !isnan(best))) {
                        best = v;
                        best_off = off;
                    }
                } while (odometer_next(w.n, t, at.lo, at.hi));
            }
            y[p * out_size + j] = best;
            if (indices != NULL)
                indices[p * out_size + j] =
                    best_off < 0 ? -1 : p * in_size + (storage_order ? column_major(&w, best_off) : best_off);
        }
    }
    return TGC_OK;
}

tgc_status tgc_cpu_average_pool_f32(tgc_kernel_ctx *c) {
    tgc_cpu_window w;
    int64_t planes, in_size, out_size;
    tgc_status st = pool_setup(c, &w, &planes, &in_size, &out_size);
    if (st != TGC_OK) return st;
    int64_t include_pad = tgc_kernel_attr_int(c, "count_include_pad", 0);
    if (include_pad != 0 && include_pad != 1)
        return tgc_kernel_fail(c, "attribute 'count_include_pad' is %lld; it must be 0 or 1",
                               (long long)include_pad);
    if (planes * out_size == 0) return TGC_OK;
    const float *x = tgc_kernel_in_ptr(c, 0);
    float *y = tgc_kernel_out_ptr(c, 0);

    for (int64_t p = 0; p < planes; p++) {
        int64_t o[TGC_MAX_RANK] = {0}, zero[TGC_MAX_RANK] = {0};
        for (int64_t j = 0; j < out_size; j++, odometer_next(w.n, o, zero, w.out)) {
            window_at at;
            float sum = 0.0f;
            int64_t count = 1;
            bool any = window_locate(&w, o, &at);
            if (any) {
                int64_t t[TGC_MAX_RANK];
                memcpy(t, at.lo, sizeof t);
                do sum += x[p * in_size + tap_offset(&w, &at, t)];
                while (odometer_next(w.n, t, at.lo, at.hi));
            }
            for (int a = 0; a < w.n; a++) {
                int64_t lo = at.lo[a], hi = at.hi[a];
                if (include_pad)
                    tgc_cpu_window_taps(at.start[a], w.kernel[a], w.dilations[a], -w.pads[a],
                                        w.in[a] + w.pads[w.n + a], &lo, &hi);
                count *= hi - lo;
            }
            y[p * out_size + j] = count > 0 ? sum / (float)count : NAN;
        }
    }
    return TGC_OK;
}

/* ---- GlobalAveragePool ------------------------------------------------------- */

/* [N, C, D1..Dn] -> [N, C, 1..1]: the mean of each plane, summed in double
 * (planes can be large); NaN for an empty plane, as numpy's mean. */
tgc_status tgc_cpu_global_average_pool_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 1 || c->n_outputs < 1)
        return tgc_kernel_fail(c, "GlobalAveragePool takes 1 input and 1 output");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = tgc_cpu_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (x->rank < 2) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, ...]", x->rank);
    int64_t planes = x->dims[0] * x->dims[1], size = 1;
    for (int i = 2; i < x->rank; i++) size *= x->dims[i];
    bool ok = y->rank == x->rank && y->dims[0] == x->dims[0] && y->dims[1] == x->dims[1];
    for (int i = 2; ok && i < y->rank; i++) ok = y->dims[i] == 1;
    if (!ok) return tgc_kernel_fail(c, "output Y must be [N, C, 1, ...] for X's N and C");
    if (planes == 0) return TGC_OK;
    const float *px = tgc_kernel_in_ptr(c, 0);
    float *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t p = 0; p < planes; p++) {
        double sum = 0.0;
        for (int64_t i = 0; i < size; i++) sum += px[p * size + i];
        py[p] = size > 0 ? (float)(sum / (double)size) : NAN;
    }
    return TGC_OK;
}
