/* Kernel taps that read only padding, cut from a Conv: with static spatial
 * sizes, tap t of an axis reads input position o * stride - pad_begin +
 * t * dilation for output positions o in [0, out). A tap for which no o
 * lands in [0, in) multiplies zeros only. The taps below the first live one
 * and above the last are removed from the weights, and the pads shrink by
 * the same amount (pad_begin' = pad_begin - lo * dilation, pad_end' =
 * pad_end - (k - 1 - hi) * dilation), so every output position reads the
 * same inputs with the same weights: the output shape and values are those
 * of the original (a dead tap's weight is never multiplied, so a NaN or
 * infinite weight there no longer gives NaN, as in ONNX Runtime, which
 * skips padding too).
 *
 * The case it is for: DeepLabV3's atrous pyramid, 3x3 convolutions with
 * dilation 12, 24 and 36 over a 20x20 map, where dilations 24 and 36 leave
 * the centre tap alone (a 1x1 convolution, 9x less work). Only Conv with
 * constant float32 weights, explicit pads (auto_pad NOTSET), and static
 * input and output spatial sizes; pads never go below zero. */
#include "passes/pass.h"
#include "support/checked.h"

#include <string.h>

/* A Conv's spatial geometry, from its attributes and inferred shapes. */
typedef struct conv_axes {
    int n;
    int64_t in[TGC_MAX_RANK], out[TGC_MAX_RANK], k[TGC_MAX_RANK];
    int64_t stride[TGC_MAX_RANK], dil[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK];
} conv_axes;

/* Reads list attribute name into v[0..n) (default dflt); false if present
 * with another length or type. */
static bool ints_attr(const tgc_node *node, const char *name, int n, int64_t dflt, int64_t *v) {
    const tgc_attr *a = tgc_node_attr(node, name);
    for (int i = 0; i < n; i++) v[i] = dflt;
    if (a == NULL) return true;
    if (a->type != TGC_ATTR_INTS || a->n != (size_t)n) return false;
    memcpy(v, a->ints, (size_t)n * sizeof *v);
    return true;
}

static bool static_dims(const tgc_shape *s, int from, int n, int64_t *out) {
    if (s->rank == TGC_RANK_UNKNOWN || s->rank != from + n) return false;
    for (int a = 0; a < n; a++) {
        if (s->dims[from + a].sym != TGC_SYM_NONE) return false;
        out[a] = s->dims[from + a].v;
    }
    return true;
}

static bool read_axes(const tgc_rewrite *rw, const tgc_node *c, const tgc_const *w, conv_axes *ax) {
    ax->n = w->shape.rank - 2;
    const tgc_attr *auto_pad = tgc_node_attr(c, "auto_pad");
    if (auto_pad != NULL && (auto_pad->type != TGC_ATTR_STRING || strcmp(auto_pad->s, "NOTSET") != 0)) return false;
    const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, c->inputs[0]);
    const tgc_tensor_info *y = tgc_graph_ref_info(rw->g, (tgc_ref){(int32_t)(c - rw->g->nodes), 0, {0, 0}});
    if (x == NULL || y == NULL || !static_dims(&x->shape, 2, ax->n, ax->in) || !static_dims(&y->shape, 2, ax->n, ax->out))
        return false;
    for (int a = 0; a < ax->n; a++) ax->k[a] = w->shape.dims[2 + a].v;
    if (!ints_attr(c, "strides", ax->n, 1, ax->stride) || !ints_attr(c, "dilations", ax->n, 1, ax->dil) ||
        !ints_attr(c, "pads", 2 * ax->n, 0, ax->pads))
        return false;
    for (int a = 0; a < ax->n; a++) /* values inference refuses: left to it */
        if (ax->stride[a] < 1 || ax->dil[a] < 1 || ax->k[a] < 1 || ax->pads[a] < 0 || ax->pads[ax->n + a] < 0)
            return false;
    return true;
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* Whether tap t of axis a reads input for some output position: o * stride
 * - pad + t * dilation in [0, in) for an o in [0, out), i.e. o in
 * [ceil((pad - t d) / s), floor((in - 1 + pad - t d) / s)] meets [0, out),
 * in O(1) however long the axis. *live false and true returned when the
 * sizes' arithmetic would overflow int64 (the caller then leaves the Conv
 * alone). */
static bool tap_live(const conv_axes *ax, int a, int64_t t, bool *live) {
    int64_t td, lo_num, hi_num;
    *live = false;
    /* pads >= 0 and td >= 0 (read_axes), so pad - td > INT64_MIN */
    if (!tgc_checked_mul_i64(t, ax->dil[a], &td) || !tgc_checked_sub_i64(ax->pads[a], td, &lo_num) ||
        !tgc_checked_add_i64(lo_num, ax->in[a] - 1, &hi_num))
        return false;
    int64_t o_lo = -floor_div(-lo_num, ax->stride[a]), o_hi = floor_div(hi_num, ax->stride[a]);
    if (o_lo < 0) o_lo = 0;
    if (o_hi > ax->out[a] - 1) o_hi = ax->out[a] - 1;
    *live = o_lo <= o_hi;
    return true;
}

/* Axis a's live taps [*lo, *hi]: the first and last tap some output
 * position reads input with, kept where cutting more would make a pad
 * negative; false when no tap of the axis reads input, or when its sizes
 * overflow. */
static bool live_taps(const conv_axes *ax, int a, int64_t *lo, int64_t *hi) {
    *lo = -1;
    *hi = -1;
    for (int64_t t = 0; t < ax->k[a]; t++) {
        bool live;
        if (!tap_live(ax, a, t, &live)) return false;
        if (live && *lo < 0) *lo = t;
        if (live) *hi = t;
    }
    if (*lo < 0) return false;
    /* lo * dil <= pad and (k - 1 - hi) * dil <= pad_end keep the pads >= 0;
     * the products fit (tap_live multiplied every t < k by dil), and a pad
     * >= 0 less one of them does not overflow */
    while (*lo > 0 && ax->pads[a] - *lo * ax->dil[a] < 0) (*lo)--;
    while (*hi < ax->k[a] - 1 && ax->pads[ax->n + a] - (ax->k[a] - 1 - *hi) * ax->dil[a] < 0) (*hi)++;
    return true;
}

/* w's taps [lo[a], hi[a]] on every spatial axis, as a new constant. */
static tgc_const *slice_weights(const tgc_const *w, const conv_axes *ax, const int64_t *lo, const int64_t *hi) {
    tgc_shape s = w->shape;
    for (int a = 0; a < ax->n; a++) s.dims[2 + a] = tgc_dim_of(hi[a] - lo[a] + 1);
    tgc_const *out = tgc_pass_new_const(TGC_FLOAT32, &s, w->pos);
    if (out == NULL) return NULL;
    int64_t planes = w->shape.dims[0].v * w->shape.dims[1].v, plane_in = 1, plane_out = 1;
    for (int a = 0; a < ax->n; a++) {
        plane_in *= ax->k[a];
        plane_out *= hi[a] - lo[a] + 1;
    }
    const float *src = w->data;
    float *dst = out->data;
    for (int64_t j = 0; j < plane_out; j++) {
        /* j's tap, row-major over the kept taps, as an offset in the full kernel */
        int64_t rest = j, off = 0, step = 1;
        for (int a = ax->n - 1; a >= 0; a--) {
            int64_t kept = hi[a] - lo[a] + 1;
            off += (lo[a] + rest % kept) * step;
            rest /= kept;
            step *= ax->k[a];
        }
        for (int64_t p = 0; p < planes; p++) dst[p * plane_out + j] = src[p * plane_in + off];
    }
    return out;
}

static tgc_status trim_one(tgc_rewrite *rw, int32_t id) {
    const tgc_node *c = &rw->g->nodes[id];
    if (c->n_inputs < 2 || c->n_outputs != 1) return TGC_OK;
    const tgc_const *w = tgc_pass_const_of(rw, c->inputs[1]);
    conv_axes ax;
    if (w == NULL || w->dtype != TGC_FLOAT32 || w->shape.rank < 3 || !read_axes(rw, c, w, &ax)) return TGC_OK;
    int64_t lo[TGC_MAX_RANK], hi[TGC_MAX_RANK];
    bool cut = false;
    for (int a = 0; a < ax.n; a++) {
        if (!live_taps(&ax, a, &lo[a], &hi[a])) return TGC_OK; /* all padding: the bias alone; left as it is */
        cut |= lo[a] > 0 || hi[a] < ax.k[a] - 1;
    }
    if (!cut) return TGC_OK;
    tgc_const *w2 = slice_weights(w, &ax, lo, hi);
    if (w2 == NULL) return TGC_ERR_NOMEM;
    int32_t wid, conv;
    char base[300];
    snprintf(base, sizeof base, "%s_W_trimmed", c->name);
    tgc_status s = tgc_rewrite_add_const(rw, -1, base, w2, &wid);
    if (s != TGC_OK) return s;
    c = &rw->g->nodes[id];
    tgc_ref ins[3] = {c->inputs[0], {wid, 0, {0, 0}}, c->n_inputs > 2 ? c->inputs[2] : (tgc_ref){-1, 0, {0, 0}}};
    if ((s = tgc_rewrite_replace_op(rw, id, ins, c->n_inputs > 2 ? 3 : 2, &conv)) != TGC_OK) return s;
    int64_t kernel[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK];
    for (int a = 0; a < ax.n; a++) {
        kernel[a] = hi[a] - lo[a] + 1;
        pads[a] = ax.pads[a] - lo[a] * ax.dil[a];
        pads[ax.n + a] = ax.pads[ax.n + a] - (ax.k[a] - 1 - hi[a]) * ax.dil[a];
    }
    if ((s = tgc_rewrite_set_attr_list(rw, conv, "kernel_shape", TGC_ATTR_INTS, (size_t)ax.n, kernel)) != TGC_OK ||
        (s = tgc_rewrite_set_attr_list(rw, conv, "pads", TGC_ATTR_INTS, (size_t)(2 * ax.n), pads)) != TGC_OK)
        return s;
    rw->edits++;
    return TGC_OK;
}

tgc_status tgc_pass_trim_conv_taps(tgc_rewrite *rw) { return tgc_pass_each_op(rw, "Conv", trim_one); }
