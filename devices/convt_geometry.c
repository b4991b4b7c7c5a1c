/* ConvTranspose's and MaxUnpool's geometry (see convt_geometry.h). */
#include "devices/convt_geometry.h"

#include "support/checked.h"

#include <string.h>

/* floor(a / 2) for any sign of a. */
static int64_t floor_half(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

/* Reads INTS attribute `name` of exactly `len` values in [min, 2^31 - 1]
 * into out, or `dflt` everywhere when absent; *present says which. */
static tgc_status read_ints(tgc_kernel_ctx *c, const char *name, int len, int64_t min, int64_t dflt, int64_t *out,
                            bool *present) {
    size_t n;
    const int64_t *v = tgc_kernel_attr_ints(c, name, &n);
    if (present != NULL) *present = v != NULL;
    if (v == NULL) {
        for (int i = 0; i < len; i++) out[i] = dflt;
        return TGC_OK;
    }
    if (n != (size_t)len) return tgc_kernel_fail(c, "attribute '%s' has %zu values; it needs %d", name, n, len);
    for (int i = 0; i < len; i++) {
        if (v[i] < min || v[i] > INT32_MAX)
            return tgc_kernel_fail(c, "attribute '%s' has %lld at position %d; values must be in [%lld, %d]", name,
                                   (long long)v[i], i, (long long)min, INT32_MAX);
        out[i] = v[i];
    }
    return TGC_OK;
}

tgc_status tgc_convt_read(tgc_kernel_ctx *c, tgc_convt_geometry *g) {
    memset(g, 0, sizeof *g);
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "ConvTranspose takes 2 or 3 inputs and 1 output");
    const tgc_value *x = &c->inputs[0], *wt = &c->inputs[1], *y = &c->outputs[0];
    g->has_bias = tgc_kernel_has_input(c, 2);
    tgc_status st = tgc_kernel_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, wt, "input W");
    if (st == TGC_OK && g->has_bias) st = tgc_kernel_need_f32(c, &c->inputs[2], "input B");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (x->rank < 3 || wt->rank != x->rank || y->rank != x->rank)
        return tgc_kernel_fail(c, "X (rank %d) must be [N, C, D1, ...], W and Y of the same rank (%d, %d)", x->rank,
                               wt->rank, y->rank);
    int n = x->rank - 2;
    g->n = n;
    g->group = tgc_kernel_attr_int(c, "group", 1);
    g->batch = x->dims[0];
    g->channels = x->dims[1];
    if (g->group < 1 || g->group > INT32_MAX || wt->dims[0] != g->channels || g->channels % g->group != 0 ||
        !tgc_checked_mul_i64(wt->dims[1], g->group, &g->m_count))
        return tgc_kernel_fail(c, "X has %lld channels and W is [%lld, %lld, ...] with group %lld; ConvTranspose "
                               "needs W[0] == C, divisible by group", (long long)g->channels, (long long)wt->dims[0],
                               (long long)wt->dims[1], (long long)g->group);
    g->cg = g->channels / g->group;
    g->mg = wt->dims[1];
    if (y->dims[0] != g->batch || y->dims[1] != g->m_count)
        return tgc_kernel_fail(c, "output Y must be [N = %lld, M = %lld, ...]", (long long)g->batch,
                               (long long)g->m_count);
    if (g->has_bias && (c->inputs[2].rank != 1 || c->inputs[2].dims[0] != g->m_count))
        return tgc_kernel_fail(c, "input B must be [M = %lld]", (long long)g->m_count);
    size_t nk;
    const int64_t *ks = tgc_kernel_attr_ints(c, "kernel_shape", &nk);
    if (ks != NULL && (nk != (size_t)n || memcmp(ks, wt->dims + 2, nk * sizeof *ks) != 0))
        return tgc_kernel_fail(c, "attribute 'kernel_shape' does not match W's spatial sizes");
    int64_t opad[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK];
    bool has_pads;
    st = read_ints(c, "strides", n, 1, 1, g->strides, NULL);
    if (st == TGC_OK) st = read_ints(c, "dilations", n, 1, 1, g->dilations, NULL);
    if (st == TGC_OK) st = read_ints(c, "output_padding", n, 0, 0, opad, NULL);
    if (st == TGC_OK) st = read_ints(c, "pads", 2 * n, 0, 0, pads, &has_pads);
    if (st != TGC_OK) return st;
    const char *ap = tgc_kernel_attr_string(c, "auto_pad", "NOTSET");
    bool upper = strcmp(ap, "SAME_UPPER") == 0, same = upper || strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    if (!same && !valid && strcmp(ap, "NOTSET") != 0)
        return tgc_kernel_fail(c, "attribute 'auto_pad' is '%s'; it must be NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                               ap);
    size_t n_os;
    const int64_t *os = tgc_kernel_attr_ints(c, "output_shape", &n_os);
    if (os != NULL && n_os != (size_t)n && n_os != (size_t)n + 2)
        return tgc_kernel_fail(c, "attribute 'output_shape' has %zu values; it needs %d or %d", n_os, n, n + 2);
    if (os != NULL) os += n_os - (size_t)n;
    for (int a = 0; a < n; a++) {
        int64_t k = wt->dims[2 + a], in = x->dims[2 + a], s = g->strides[a], full;
        if (k < 1 || k > INT32_MAX || in > INT32_MAX)
            return tgc_kernel_fail(c, "spatial axis %d: kernel %lld and input %lld must be in [1, 2^31)", a,
                                   (long long)k, (long long)in);
        /* the extent of the full result, s * (D - 1) + ek + output_padding; each term < 2^62 */
        full = (in > 0 ? s * (in - 1) : 0) + (k - 1) * g->dilations[a] + 1 + opad[a];
        int64_t out, pb;
        if (same) {
            out = os != NULL ? os[a] : in * s;
            int64_t total = full - out;
            pb = upper ? floor_half(total) : total - floor_half(total);
        } else {
            pb = has_pads && !valid ? pads[a] : 0;
            out = os != NULL ? os[a] : full - pb - (has_pads && !valid ? pads[n + a] : 0);
        }
        if (y->dims[2 + a] != out)
            return tgc_kernel_fail(c, "output Y has %lld on spatial axis %d; ConvTranspose gives %lld",
                                   (long long)y->dims[2 + a], a, (long long)out);
        g->in[a] = in;
        g->out[a] = out;
        g->kernel[a] = k;
        g->pad_begin[a] = pb;
    }
    if (!tgc_checked_numel(n, g->in, &g->in_size) || !tgc_checked_numel(n, g->out, &g->out_size) ||
        !tgc_checked_numel(n, g->kernel, &g->kk_count))
        return tgc_kernel_fail(c, "the window's sizes do not fit in int64");
    return TGC_OK;
}

tgc_status tgc_convt_read_unpool(tgc_kernel_ctx *c, int64_t *unpooled) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "MaxUnpool takes 2 or 3 inputs and 1 output");
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1], *y = &c->outputs[0];
    tgc_status st = tgc_kernel_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (ind->dtype != TGC_INT64 || ind->rank != x->rank || memcmp(ind->dims, x->dims, (size_t)x->rank * sizeof *x->dims))
        return tgc_kernel_fail(c, "input I must be int64 with X's shape");
    size_t nk;
    const int64_t *ks = tgc_kernel_attr_ints(c, "kernel_shape", &nk);
    int n = x->rank - 2;
    if (n < 1 || ks == NULL || nk != (size_t)n || y->rank != x->rank)
        return tgc_kernel_fail(c, "X must be [N, C, D1, ...], with one 'kernel_shape' size per spatial axis, and Y of "
                               "its rank");
    int64_t kernel[TGC_MAX_RANK], strides[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK];
    st = read_ints(c, "kernel_shape", n, 1, 1, kernel, NULL);
    if (st == TGC_OK) st = read_ints(c, "strides", n, 1, 1, strides, NULL);
    if (st == TGC_OK) st = read_ints(c, "pads", 2 * n, 0, 0, pads, NULL);
    if (st != TGC_OK) return st;
    bool has_shape = tgc_kernel_has_input(c, 2);
    unpooled[0] = x->dims[0];
    unpooled[1] = x->dims[1];
    for (int a = 0; a < n; a++) {
        int64_t in = x->dims[2 + a];
        if (in > INT32_MAX) return tgc_kernel_fail(c, "spatial axis %d of X is larger than 2^31 - 1", a);
        int64_t o = in > 0 ? (in - 1) * strides[a] + kernel[a] - pads[a] - pads[n + a] : 0;
        if (o < 0) return tgc_kernel_fail(c, "the pads of spatial axis %d exceed its output size", a);
        unpooled[2 + a] = o;
    }
    for (int a = 0; a < x->rank; a++)
        if (has_shape ? y->dims[a] < unpooled[a] : y->dims[a] != unpooled[a])
            return tgc_kernel_fail(c, "output Y has %lld on axis %d; MaxUnpool gives %lld%s", (long long)y->dims[a], a,
                                   (long long)unpooled[a], has_shape ? " (output_shape may only be larger)" : "");
    return TGC_OK;
}
