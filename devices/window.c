/* The sliding-window geometry of Conv and pooling (see window.h): ONNX's
 * convPoolShapeInference with pads and auto_pad, one copy for the cpu and
 * gpu kernels. */
#include "devices/window.h"

#include "support/checked.h"

#include <string.h>

/* ceil(a / b) and floor(a / b) for b > 0 and any sign of a. */
static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

void tgc_window_taps(int64_t start, int64_t k, int64_t d, int64_t begin, int64_t end, int64_t *lo, int64_t *hi) {
    /* begin <= start + t * d < end  <=>  ceil((begin - start) / d) <= t <= floor((end - 1 - start) / d) */
    int64_t l = ceil_div(begin - start, d), h = floor_div(end - 1 - start, d) + 1;
    if (l < 0) l = 0;
    if (h > k) h = k;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

int64_t tgc_window_count(const tgc_window *w, int a, int64_t o, bool include_pad) {
    int64_t begin = include_pad ? -w->pads[a] : 0, end = w->in[a] + (include_pad ? w->pads[w->n + a] : 0), lo, hi;
    tgc_window_taps(o * w->strides[a] - w->pads[a], w->kernel[a], w->dilations[a], begin, end, &lo, &hi);
    return hi - lo;
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

tgc_status tgc_window_read(tgc_kernel_ctx *c, const tgc_value *x, const tgc_value *y, const int64_t *kernel,
                           bool ceil_mode, tgc_window *w) {
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
        int64_t ek; /* the window's extent, (k - 1) * d + 1 */
        if (!tgc_checked_mul_i64(k - 1, w->dilations[i], &ek) || !tgc_checked_add_i64(ek, 1, &ek))
            return tgc_kernel_fail(c, "the window's extent on spatial axis %d does not fit in int64", i);
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
        int64_t padded, span;
        if (!tgc_checked_add_i64(in, w->pads[i], &padded) || !tgc_checked_add_i64(padded, w->pads[n + i], &padded) ||
            !tgc_checked_sub_i64(padded, ek, &span))
            return tgc_kernel_fail(c, "spatial axis %d: its size %lld with padding does not fit in int64", i,
                                   (long long)in);
        if (span < 0)
            return tgc_kernel_fail(c,
                                   "spatial axis %d has size %lld (%lld with padding), smaller than the "
                                   "kernel's extent %lld",
                                   i, (long long)in, (long long)padded, (long long)ek);
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

tgc_status tgc_window_read_pool(tgc_kernel_ctx *c, tgc_window *w, int64_t *planes, int64_t *in_size,
                                int64_t *out_size, int64_t *kk_count) {
    if (c->n_inputs < 1 || c->n_outputs < 1) return tgc_kernel_fail(c, "pooling takes 1 input and an output");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = TGC_OK;
    const char *op = tgc_kernel_op_name(c);
    if (x->dtype == TGC_UINT8 && (strcmp(op, "MaxPool") == 0 || strcmp(op, "_MaxPoolNHWC") == 0)) { /* uint8 too */
        if (y->dtype != TGC_UINT8) return tgc_kernel_fail(c, "output Y must be uint8 as input X");
    } else {
        tgc_dtype t = tgc_kernel_float_type(c, x);
        st = tgc_kernel_need_float(c, x, "input X", t);
        if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", t);
        if (st != TGC_OK) return st;
    }
    int n = x->rank - 2;
    if (n < 1) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, D1, ...]", x->rank);
    size_t nk;
    const int64_t *k = tgc_kernel_attr_ints(c, "kernel_shape", &nk);
    if (k == NULL || nk != (size_t)n)
        return tgc_kernel_fail(c, "attribute 'kernel_shape' must give one size for each of X's %d spatial axes", n);
    int64_t ceil_mode = tgc_kernel_attr_int(c, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return tgc_kernel_fail(c, "attribute 'ceil_mode' is %lld; it must be 0 or 1", (long long)ceil_mode);
    st = tgc_window_read(c, x, y, k, ceil_mode == 1, w);
    if (st != TGC_OK) return st;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return tgc_kernel_fail(c, "output Y must keep X's N and C (%lld, %lld)", (long long)x->dims[0],
                               (long long)x->dims[1]);
    int64_t in, out, kk;
    if (!tgc_checked_numel(n, w->in, &in) || !tgc_checked_numel(n, w->out, &out) ||
        !tgc_checked_numel(n, w->kernel, &kk) || !tgc_checked_numel(2, x->dims, planes))
        return tgc_kernel_fail(c, "the window's sizes do not fit in int64");
    *in_size = in;
    *out_size = out;
    if (kk_count != NULL) *kk_count = kk;
    return TGC_OK;
}

tgc_status tgc_window_read_global_pool(tgc_kernel_ctx *c, int64_t *planes, int64_t *size) {
    if (c->n_inputs < 1 || c->n_outputs < 1) return tgc_kernel_fail(c, "GlobalAveragePool takes 1 input and 1 output");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_dtype t = tgc_kernel_float_type(c, x);
    tgc_status st = tgc_kernel_need_float(c, x, "input X", t);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", t);
    if (st != TGC_OK) return st;
    if (x->rank < 2) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, ...]", x->rank);
    int64_t s = 1;
    for (int i = 2; i < x->rank; i++) s *= x->dims[i];
    bool ok = y->rank == x->rank && y->dims[0] == x->dims[0] && y->dims[1] == x->dims[1];
    for (int i = 2; ok && i < y->rank; i++) ok = y->dims[i] == 1;
    if (!ok) return tgc_kernel_fail(c, "output Y must be [N, C, 1, ...] for X's N and C");
    *planes = x->dims[0] * x->dims[1];
    *size = s;
    return TGC_OK;
}

tgc_status tgc_window_read_conv(tgc_kernel_ctx *c, tgc_conv_geometry *g) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "Conv takes 2 or 3 inputs and 1 output");
    const tgc_value *x = &c->inputs[0], *wt = &c->inputs[1], *y = &c->outputs[0];
    bool has_bias = tgc_kernel_has_input(c, 2);
    tgc_dtype t = tgc_kernel_float_type(c, x);
    tgc_status st = tgc_kernel_need_float(c, x, "input X", t);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, wt, "input W", t);
    if (st == TGC_OK && has_bias) st = tgc_kernel_need_float(c, &c->inputs[2], "input B", t);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", t);
    if (st != TGC_OK) return st;
    if (x->rank < 3 || wt->rank != x->rank)
        return tgc_kernel_fail(c, "X (rank %d) must be [N, C, D1, ...] and W of the same rank (rank %d)", x->rank,
                               wt->rank);
    int64_t group = tgc_kernel_attr_int(c, "group", 1);
    int64_t batch = x->dims[0], channels = x->dims[1], m_count = wt->dims[0], cg = wt->dims[1];
    if (group < 1 || channels != cg * group || m_count % group != 0)
        return tgc_kernel_fail(c,
                               "X has %lld channels and W is [%lld, %lld, ...] with group %lld; Conv needs "
                               "C == W[1] * group and W[0] divisible by group",
                               (long long)channels, (long long)m_count, (long long)cg, (long long)group);
    if (y->rank != x->rank || y->dims[0] != batch || y->dims[1] != m_count)
        return tgc_kernel_fail(c, "output Y must be [N = %lld, M = %lld, ...]", (long long)batch, (long long)m_count);
    size_t nk;
    const int64_t *ks = tgc_kernel_attr_ints(c, "kernel_shape", &nk);
    if (ks != NULL && (nk != (size_t)x->rank - 2 || memcmp(ks, wt->dims + 2, nk * sizeof *ks) != 0))
        return tgc_kernel_fail(c, "attribute 'kernel_shape' does not match W's spatial sizes");
    if (has_bias && (c->inputs[2].rank != 1 || c->inputs[2].dims[0] != m_count))
        return tgc_kernel_fail(c, "input B must be [M = %lld]", (long long)m_count);
    tgc_window *w = &g->w;
    st = tgc_window_read(c, x, y, wt->dims + 2, false, w);
    if (st != TGC_OK) return st;

    int64_t in_size, out_size, kk_count;
    if (!tgc_checked_numel(w->n, w->in, &in_size) || !tgc_checked_numel(w->n, w->out, &out_size) ||
        !tgc_checked_numel(w->n, w->kernel, &kk_count))
        return tgc_kernel_fail(c, "the window's sizes do not fit in int64");
    bool pointwise = true;
    for (int a = 0; a < w->n; a++) {
        pointwise = pointwise && w->kernel[a] == 1 && w->strides[a] == 1 && w->pads[a] == 0 && w->pads[w->n + a] == 0;
    }
    g->has_bias = has_bias;
    g->pointwise = pointwise;
    g->group = group;
    g->batch = batch;
    g->channels = channels;
    g->m_count = m_count;
    g->cg = cg;
    g->in_size = in_size;
    g->out_size = out_size;
    g->kk_count = kk_count;
    g->workspace_limit = c->workspace_limit;
    return TGC_OK;
}
