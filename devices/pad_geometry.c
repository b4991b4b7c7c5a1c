/* Pad's arguments and index mapping (see pad_geometry.h). */
#include "devices/pad_geometry.h"

#include "support/checked.h"

#include <string.h>

tgc_status tgc_pad_read(tgc_kernel_ctx *c, tgc_pad_geometry *p) {
    memset(p, 0, sizeof *p);
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "Pad takes 2 to 4 inputs and 1 output");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    const char *mode = tgc_kernel_attr_string(c, "mode", "constant");
    if (strcmp(mode, "constant") == 0) p->mode = TGC_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0) p->mode = TGC_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0) p->mode = TGC_PAD_EDGE;
    else return tgc_kernel_fail(c, "attribute 'mode' is '%s'; tgc pads in modes constant, reflect and edge", mode);
    if (y->dtype != x->dtype || y->rank != x->rank)
        return tgc_kernel_fail(c, "output 0 must have input 0's dtype and rank");
    p->rank = x->rank;
    p->esize = tgc_dtype_size(x->dtype);
    if (p->esize == 0 || p->esize > sizeof p->constant)
        return tgc_kernel_fail(c, "Pad cannot move elements of %s", tgc_dtype_name(x->dtype));
    if (tgc_kernel_has_input(c, 2)) {
        const tgc_value *cv = &c->inputs[2];
        int64_t count = tgc_value_numel(cv);
        if (cv->dtype != x->dtype || cv->rank > 1 || count > 1)
            return tgc_kernel_fail(c, "input constant_value must be one element of %s", tgc_dtype_name(x->dtype));
        if (count == 1) memcpy(p->constant, tgc_kernel_in_ptr(c, 2), p->esize);
    }
    int64_t pads[2 * TGC_MAX_RANK], axes[TGC_MAX_RANK];
    int n_pads, n_axes = p->rank;
    tgc_status st = tgc_kernel_read_ints(c, 1, "pads", pads, 2 * TGC_MAX_RANK, &n_pads);
    if (st != TGC_OK) return st;
    if (tgc_kernel_has_input(c, 3)) {
        st = tgc_kernel_read_ints(c, 3, "axes", axes, TGC_MAX_RANK, &n_axes);
        if (st != TGC_OK) return st;
    } else {
        for (int a = 0; a < p->rank; a++) axes[a] = a;
    }
    if (n_pads != 2 * n_axes)
        return tgc_kernel_fail(c, "input pads has %d values; it needs %d (2 per axis)", n_pads, 2 * n_axes);
    int64_t begin[TGC_MAX_RANK] = {0}, end[TGC_MAX_RANK] = {0};
    bool seen[TGC_MAX_RANK] = {false};
    for (int i = 0; i < n_axes; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + p->rank : axes[i];
        if (a < 0 || a >= p->rank || seen[a])
            return tgc_kernel_fail(c, "input axes has %lld: out of range for rank %d, or repeated", (long long)axes[i],
                                   p->rank);
        seen[a] = true;
        begin[a] = pads[i];
        end[a] = pads[n_axes + i];
    }
    for (int a = 0; a < p->rank; a++) {
        int64_t in = x->dims[a], cb = begin[a] < 0 ? -begin[a] : 0, ce = end[a] < 0 ? -end[a] : 0, kept, out;
        if (!tgc_checked_sub_i64(in, cb, &kept) || !tgc_checked_sub_i64(kept, ce, &kept) || kept < 0)
            return tgc_kernel_fail(c, "the pads of axis %d crop more than its %lld elements", a, (long long)in);
        int64_t pb = begin[a] > 0 ? begin[a] : 0, pe = end[a] > 0 ? end[a] : 0;
        if (!tgc_checked_add_i64(kept, pb, &out) || !tgc_checked_add_i64(out, pe, &out) || out != y->dims[a])
            return tgc_kernel_fail(c, "output 0 has %lld on axis %d; the pads give %lld", (long long)y->dims[a], a,
                                   (long long)(kept + pb + pe));
        if (p->mode != TGC_PAD_CONSTANT && kept == 0 && out > 0)
            return tgc_kernel_fail(c, "axis %d has nothing to pad from in mode '%s'", a, mode);
        p->in[a] = in;
        p->out[a] = out;
        p->lo[a] = cb;
        p->kept[a] = kept;
        p->begin[a] = pb;
    }
    return TGC_OK;
}

int64_t tgc_pad_source(const tgc_pad_geometry *p, int a, int64_t o) {
    int64_t i = o - p->begin[a], m = p->kept[a];
    if (i < 0 || i >= m) {
        if (p->mode == TGC_PAD_CONSTANT) return -1;
        if (p->mode == TGC_PAD_EDGE) i = i < 0 ? 0 : m - 1;
        else if (m == 1) i = 0;
        else { /* a triangle wave of period 2 * (m - 1) */
            int64_t period = 2 * (m - 1);
            i %= period;
            if (i < 0) i += period;
            if (i >= m) i = period - i;
        }
    }
    return p->lo[a] + i;
}
