/* Convolution and pooling (ONNX opset 17): Conv, MaxPool, AveragePool and
 * GlobalAveragePool. Conv and the windowed pools share one computation of
 * the spatial output size, ONNX's convPoolShapeInference: kernel, strides,
 * dilations, explicit pads or auto_pad, and ceil_mode. */
#include "graph/ops.h"
#include "support/checked.h"

#include <string.h>

/* Formats a shape into buf for messages. */
#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* ---- Convolution and pooling ---------------------------------------------- */

typedef enum auto_pad { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } auto_pad;

typedef struct window {
    int n; /* spatial rank */
    bool has_kernel;
    int64_t kernel[TGC_MAX_RANK];
    int64_t strides[TGC_MAX_RANK];
    int64_t dilations[TGC_MAX_RANK];
    int64_t pads[2 * TGC_MAX_RANK]; /* begins, then ends */
    auto_pad pad;
    bool ceil_mode;
} window;

/* Reads an INTS attribute of exactly `len` elements, each in [min, 2^31 - 1]
 * (so that window arithmetic cannot overflow), into out (or `dflt`
 * everywhere when absent). */
static tgc_status read_ints(tgc_infer_ctx *c, const char *name, int len, int64_t min, int64_t dflt,
                            int64_t *out, bool *present) {
    const int64_t *v;
    size_t n;
    bool has = tgc_infer_attr_ints(c, name, &v, &n);
    if (present != NULL) *present = has;
    if (!has) {
        for (int i = 0; i < len; i++) out[i] = dflt;
        return TGC_OK;
    }
    if (n != (size_t)len)
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute '%s' has %zu values; it needs %d (the input has %d spatial axes)",
                              name, n, len, name[0] == 'p' ? len / 2 : len);
    for (int i = 0; i < len; i++) {
        if (v[i] < min || v[i] > INT32_MAX)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute '%s' has %lld at position %d; "
                                  "values must be in [%lld, %d]", name, (long long)v[i], i, (long long)min,
                                  INT32_MAX);
        out[i] = v[i];
    }
    return TGC_OK;
}

/* Reads the windowing attributes shared by Conv and the pools for n
 * spatial axes. */
static tgc_status read_window(tgc_infer_ctx *c, int n, window *w) {
    memset(w, 0, sizeof *w);
    w->n = n;
    const char *ap = tgc_infer_attr_string(c, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0) w->pad = PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0) w->pad = PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) w->pad = PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) w->pad = PAD_VALID;
    else
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'auto_pad' is '%s'; it must be "
                              "NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    int64_t ceil_mode = tgc_infer_attr_int(c, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'ceil_mode' is %lld; it must be 0 or 1",
                              (long long)ceil_mode);
    w->ceil_mode = ceil_mode == 1;
    bool has_pads;
    tgc_status st = read_ints(c, "kernel_shape", n, 1, 0, w->kernel, &w->has_kernel);
    if (st == TGC_OK) st = read_ints(c, "strides", n, 1, 1, w->strides, NULL);
    if (st == TGC_OK) st = read_ints(c, "dilations", n, 1, 1, w->dilations, NULL);
    if (st == TGC_OK) st = read_ints(c, "pads", 2 * n, 0, 0, w->pads, &has_pads);
    if (st == TGC_OK && has_pads && w->pad != PAD_NOTSET)
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attributes 'pads' and 'auto_pad' (%s) cannot be used together", ap);
    return st;
}

/* ceil(a / b) for a >= 0, b > 0, without overflow. */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Output size of spatial axis i for input size `in`, as ONNX computes it:
 *   effective kernel ek = (k - 1) * d + 1;
 *   SAME_*: total pad = max(0, (in % s == 0 ? ek - s : ek - in % s)), so
 *           that the output is ceil(in / s); VALID: no padding;
 *   out = floor((in + pad_begin + pad_end - ek) / s) + 1, ceil with ceil_mode.
 * A symbolic input size keeps its symbol when the window preserves the size
 * (stride 1 and total pad ek - 1, as a 3x3 conv with pads 1); otherwise the
 * output is a fresh dim. */
static tgc_status spatial_out(tgc_infer_ctx *c, const window *w, int i, tgc_dim in, tgc_dim *out) {
    if (!w->has_kernel) {
        *out = tgc_infer_fresh_dim(c);
        return TGC_OK;
    }
    int64_t s = w->strides[i], ek, total;
    /* The attributes are in [0, 2^31 - 1] (read_ints), so none of these
     * overflow; checked all the same, as every size is. */
    if (!tgc_checked_mul_i64(w->kernel[i] - 1, w->dilations[i], &ek) || !tgc_checked_add_i64(ek, 1, &ek))
        return tgc_infer_fail(c, -1, "size-overflow", "the kernel's extent on spatial axis %d does not fit in int64",
                              i);
    if (w->pad == PAD_VALID) {
        total = 0;
    } else if (w->pad == PAD_NOTSET) {
        if (!tgc_checked_add_i64(w->pads[i], w->pads[i + w->n], &total))
            return tgc_infer_fail(c, -1, "size-overflow", "the pads of spatial axis %d add up past 2^63 - 1", i);
    } else if (tgc_dim_known(in)) {
        int64_t residual = in.v % s;
        total = residual == 0 ? ek - s : ek - residual;
        if (total < 0) total = 0;
    } else {
        total = s == 1 ? ek - 1 : -1; /* SAME with stride 1 preserves the size */
    }
    if (!tgc_dim_known(in)) {
        *out = s == 1 && total == ek - 1 ? in : tgc_infer_fresh_dim(c);
        return TGC_OK;
    }
    int64_t span, padded;
    if (!tgc_checked_add_i64(in.v, total, &padded) || !tgc_checked_sub_i64(padded, ek, &span))
        return tgc_infer_fail(c, 0, "size-overflow", "spatial axis %d has size %lld, which with padding "
                              "%lld does not fit in int64", i, (long long)in.v, (long long)total);
    if (span < 0)
        return tgc_infer_fail(c, 0, "shape-mismatch",
                              "spatial axis %d has size %lld (%lld with padding), smaller than the "
                              "kernel's extent %lld", i, (long long)in.v, (long long)padded,
                              (long long)ek);
    *out = tgc_dim_of((w->ceil_mode ? ceil_div(span, s) : span / s) + 1);
    return TGC_OK;
}

/* Conv-11: X [N, C, D1..Dn], W [M, C/group, k1..kn], optional B [M] ->
 * Y [N, M, O1..On]. kernel_shape, when given, must agree with W. */
static tgc_status infer_conv(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *wt = tgc_infer_input(c, 1),
                          *b = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_infer_require_same_dtype(c, 0, 1) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    int64_t group = tgc_infer_attr_int(c, "group", 1);
    if (group < 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'group' is %lld; it must be >= 1",
                              (long long)group);
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    int rank = x->shape.rank >= 0 ? x->shape.rank : wt->shape.rank;
    if (rank < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    char sx[TGC_OPS_SHAPE_BUF], sw[TGC_OPS_SHAPE_BUF];
    if (rank < 3)
        return tgc_infer_fail(c, 0, "shape-mismatch",
                              "input 0 has rank %d; Conv needs [N, C, D1, ...] of rank >= 3", rank);
    if (x->shape.rank >= 0 && wt->shape.rank >= 0 && x->shape.rank != wt->shape.rank)
        return tgc_infer_fail(c, 1, "shape-mismatch", "X has shape %s but W has shape %s; their ranks "
                              "must agree", SHAPE(c, &x->shape, sx), SHAPE(c, &wt->shape, sw));
    /* Either of X and W may have an unknown rank (the other gave `rank`). */
    const tgc_shape *xs = &x->shape, *ws = &wt->shape;
    bool x_ranked = xs->rank >= 0, w_ranked = ws->rank >= 0;

    window w;
    tgc_status st = read_window(c, rank - 2, &w);
    if (st != TGC_OK) return st;
    for (int i = 0; w_ranked && i < w.n; i++) {
        tgc_dim k = ws->dims[2 + i];
        if (w.has_kernel && tgc_dim_known(k) && k.v != w.kernel[i])
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'kernel_shape' gives %lld for "
                                  "spatial axis %d but W has shape %s", (long long)w.kernel[i], i,
                                  SHAPE(c, ws, sw));
    }
    if (!w.has_kernel && w_ranked) {
        w.has_kernel = true;
        for (int i = 0; i < w.n; i++) {
            tgc_dim k = ws->dims[2 + i];
            if (!tgc_dim_known(k) || k.v > INT32_MAX) w.has_kernel = false; /* unknown or absurd */
            else if (k.v < 1)
                return tgc_infer_fail(c, 1, "shape-mismatch", "W has shape %s; kernel sizes must be >= 1",
                                      SHAPE(c, ws, sw));
            else w.kernel[i] = k.v;
        }
    }
    /* Channels: C == (C/group) * group, and M divisible by group. */
    int64_t taken;
    tgc_dim m = w_ranked ? ws->dims[0] : tgc_dim_of(0);
    if (x_ranked && w_ranked && tgc_dim_known(xs->dims[1]) && tgc_dim_known(ws->dims[1]) &&
        (xs->dims[1].v % group != 0 || xs->dims[1].v / group != ws->dims[1].v))
        return tgc_infer_fail(c, 1, "shape-mismatch", "X has shape %s with %lld channels but W %s "
                              "with group %lld takes %lld", SHAPE(c, xs, sx), (long long)xs->dims[1].v,
                              SHAPE(c, ws, sw), (long long)group,
                              tgc_checked_mul_i64(ws->dims[1].v, group, &taken) ? (long long)taken : -1LL);
    if (w_ranked && tgc_dim_known(m) && m.v % group != 0)
        return tgc_infer_fail(c, 1, "shape-mismatch", "W has shape %s; its %lld output channels do "
                              "not divide into %lld groups", SHAPE(c, ws, sw), (long long)m.v,
                              (long long)group);
    bool m_known = w_ranked;
    if (b != NULL && b->shape.rank >= 0) {
        tgc_dim bm = b->shape.rank == 1 ? b->shape.dims[0] : tgc_dim_of(0);
        if (b->shape.rank != 1 || (w_ranked && !tgc_ops_dim_merge(bm, m, &bm))) {
            char sb[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 2, "shape-mismatch", "B has shape %s but W %s has %s output "
                                  "channels; B must be [M]", SHAPE(c, &b->shape, sb),
                                  SHAPE(c, ws, sw), w_ranked ? tgc_dim_str(c->graph, m, sx, sizeof sx) : "M");
        }
        m = bm;
        m_known = true;
    }
    out.rank = rank;
    out.dims[0] = x_ranked ? xs->dims[0] : tgc_infer_fresh_dim(c);
    out.dims[1] = m_known ? m : tgc_infer_fresh_dim(c);
    for (int i = 0; i < w.n; i++) {
        if (!x_ranked) {
            out.dims[2 + i] = tgc_infer_fresh_dim(c);
            continue;
        }
        st = spatial_out(c, &w, i, xs->dims[2 + i], &out.dims[2 + i]);
        if (st != TGC_OK) return st;
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def conv_attrs[] = {
    {"auto_pad", TGC_ATTR_STRING, false}, {"dilations", TGC_ATTR_INTS, false},
    {"group", TGC_ATTR_INT, false},       {"kernel_shape", TGC_ATTR_INTS, false},
    {"pads", TGC_ATTR_INTS, false},       {"strides", TGC_ATTR_INTS, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_Conv = {"Conv", 2, 3, 1, 1, conv_attrs, infer_conv};

/* The check of a fused convolution's optional fourth input Z (a residual
 * block's skip, as ONNX Runtime's FusedConv takes it): y's dtype and
 * shape, y already inferred. */
static tgc_status check_z(tgc_infer_ctx *c) {
    const tgc_tensor_info *z = c->node->n_inputs > 3 ? tgc_infer_input(c, 3) : NULL;
    if (z == NULL) return TGC_OK;
    const tgc_tensor_info *y = c->output_infos != NULL ? &c->output_infos[0] : &c->node->outputs[0];
    if (z->dtype != y->dtype || !tgc_shape_eq(&z->shape, &y->shape)) {
        char zb[TGC_OPS_SHAPE_BUF], yb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 3, "shape-mismatch", "input 3 (Z) is %s %s; it must be y's %s %s",
                              tgc_dtype_name(z->dtype), tgc_infer_shape_str(c, &z->shape, zb, sizeof zb),
                              tgc_dtype_name(y->dtype), tgc_infer_shape_str(c, &y->shape, yb, sizeof yb));
    }
    return TGC_OK;
}

/* _ConvNHWC (tgc's own, made by the nhwc-conv pass): Conv with x [N, H, W,
 * C] and y [N, OH, OW, M] (channels last); W and B as Conv has them; an
 * optional fourth input Z of y's dtype and shape is added to the result
 * (made by the fuse-conv-add pass): y = (Conv(x, W, B) + Z), each sum
 * rounded as Conv and then Add would. */
static tgc_status infer_conv_nhwc(tgc_infer_ctx *c) {
    tgc_status st = tgc_ops_infer_channels_last(c, infer_conv);
    return st == TGC_OK ? check_z(c) : st;
}

const tgc_op_def tgc_op__ConvNHWC = {"_ConvNHWC", 2, 4, 1, 1, conv_attrs, infer_conv_nhwc};

/* _ConvAdd (tgc's own, made by the fuse-conv-add pass): Conv (NCHW, any
 * rank) with a fourth input Z of y's dtype and shape added to its result,
 * y = Conv(x, W, B) + Z, each sum rounded as Conv and then Add would; B
 * may be omitted (an empty input 2). ONNX Runtime's FusedConv with its Z. */
static tgc_status infer_conv_add(tgc_infer_ctx *c) {
    tgc_status st = infer_conv(c);
    return st == TGC_OK ? check_z(c) : st;
}

const tgc_op_def tgc_op__ConvAdd = {"_ConvAdd", 4, 4, 1, 1, conv_attrs, infer_conv_add};

/* MaxPool-12 and AveragePool-11: X [N, C, D1..Dn] with kernel_shape
 * (required) giving n -> Y [N, C, O1..On]; MaxPool's optional second output
 * Indices is int64 of Y's shape. */
static tgc_status infer_pool(tgc_infer_ctx *c, unsigned dtypes, bool is_max) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, dtypes)) return TGC_ERR_INVALID;
    const int64_t *k;
    size_t nk;
    if (!tgc_infer_attr_ints(c, "kernel_shape", &k, &nk) || nk == 0 || nk > TGC_MAX_RANK - 2)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'kernel_shape' is required: one "
                              "size per spatial axis (1 to %d of them)", TGC_MAX_RANK - 2);
    const char *flag = is_max ? "storage_order" : "count_include_pad";
    int64_t fv = tgc_infer_attr_int(c, flag, 0);
    if (fv != 0 && fv != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute '%s' is %lld; it must be 0 or 1", flag,
                              (long long)fv);
    window w;
    tgc_status st = read_window(c, (int)nk, &w);
    if (st != TGC_OK) return st;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (x->shape.rank >= 0) {
        if (x->shape.rank != (int)nk + 2) {
            char sx[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s but 'kernel_shape' "
                                  "has %zu axes; X must be [N, C] plus one axis per kernel axis",
                                  SHAPE(c, &x->shape, sx), nk);
        }
        out = x->shape;
        for (int i = 0; i < w.n; i++) {
            st = spatial_out(c, &w, i, x->shape.dims[2 + i], &out.dims[2 + i]);
            if (st != TGC_OK) return st;
        }
    }
    st = tgc_infer_set_output(c, 0, x->dtype, &out);
    if (st == TGC_OK && is_max) st = tgc_infer_set_output(c, 1, TGC_INT64, &out);
    return st;
}

static tgc_status infer_max_pool(tgc_infer_ctx *c) {
    return infer_pool(c, TGC_DT_FLOAT | TGC_DT(TGC_UINT8), true);
}

static tgc_status infer_average_pool(tgc_infer_ctx *c) { return infer_pool(c, TGC_DT_FLOAT, false); }

static const tgc_attr_def max_pool_attrs[] = {
    {"auto_pad", TGC_ATTR_STRING, false}, {"ceil_mode", TGC_ATTR_INT, false},
    {"dilations", TGC_ATTR_INTS, false},  {"kernel_shape", TGC_ATTR_INTS, true},
    {"pads", TGC_ATTR_INTS, false},       {"storage_order", TGC_ATTR_INT, false},
    {"strides", TGC_ATTR_INTS, false},    {NULL, 0, false},
};

/* AveragePool has no dilations before opset 19. */
static const tgc_attr_def average_pool_attrs[] = {
    {"auto_pad", TGC_ATTR_STRING, false}, {"ceil_mode", TGC_ATTR_INT, false},
    {"count_include_pad", TGC_ATTR_INT, false}, {"kernel_shape", TGC_ATTR_INTS, true},
    {"pads", TGC_ATTR_INTS, false},       {"strides", TGC_ATTR_INTS, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_MaxPool = {"MaxPool", 1, 1, 1, 2, max_pool_attrs, infer_max_pool};

/* _MaxPoolNHWC (tgc's own, made by the nhwc-conv pass): MaxPool of x
 * [N, H, W, C] into y [N, OH, OW, C], without Indices. */
static tgc_status infer_max_pool_nhwc(tgc_infer_ctx *c) { return tgc_ops_infer_channels_last(c, infer_max_pool); }

const tgc_op_def tgc_op__MaxPoolNHWC = {"_MaxPoolNHWC", 1, 1, 1, 1, max_pool_attrs, infer_max_pool_nhwc};
const tgc_op_def tgc_op_AveragePool = {"AveragePool", 1, 1, 1, 1, average_pool_attrs,
                                       infer_average_pool};

/* GlobalAveragePool-1: [N, C, D1..Dn] -> [N, C, 1..1]. */
static tgc_status infer_global_average_pool(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    tgc_shape out = x->shape;
    if (out.rank >= 0 && out.rank < 2) {
        char sx[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; GlobalAveragePool "
                              "needs [N, C, ...]", SHAPE(c, &x->shape, sx));
    }
    for (int i = 2; i < out.rank; i++) out.dims[i] = tgc_dim_of(1);
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

const tgc_op_def tgc_op_GlobalAveragePool = {"GlobalAveragePool", 1, 1, 1, 1,
                                             no_attrs, infer_global_average_pool};

/* _GlobalAveragePoolNHWC (tgc's own, made by the nhwc-conv pass):
 * GlobalAveragePool of x [N, H, W, C] into y [N, 1, 1, C]. */
static tgc_status infer_global_average_pool_nhwc(tgc_infer_ctx *c) {
    return tgc_ops_infer_channels_last(c, infer_global_average_pool);
}

const tgc_op_def tgc_op__GlobalAveragePoolNHWC = {"_GlobalAveragePoolNHWC", 1, 1, 1, 1, no_attrs,
                                                  infer_global_average_pool_nhwc};

/* LpPool-18 (LpPool-11 without dilations and ceil_mode): MaxPool's window
 * and output; the integer p (default 2) must be >= 1. */
static tgc_status infer_lp_pool(tgc_infer_ctx *c) {
    int64_t p = tgc_infer_attr_int(c, "p", 2);
    if (p < 1) return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'p' is %lld; it must be >= 1", (long long)p);
    return infer_pool(c, TGC_DT_FLOAT, false);
}

static const tgc_attr_def lp_pool_attrs[] = {
    {"auto_pad", TGC_ATTR_STRING, false}, {"ceil_mode", TGC_ATTR_INT, false},
    {"dilations", TGC_ATTR_INTS, false},  {"kernel_shape", TGC_ATTR_INTS, true},
    {"p", TGC_ATTR_INT, false},           {"pads", TGC_ATTR_INTS, false},
    {"strides", TGC_ATTR_INTS, false},    {NULL, 0, false},
};

const tgc_op_def tgc_op_LpPool = {"LpPool", 1, 1, 1, 1, lp_pool_attrs, infer_lp_pool};

/* GlobalMaxPool-1 and GlobalLpPool-2 (p >= 1, default 2): GlobalAveragePool's
 * shapes. */
static tgc_status infer_global_lp_pool(tgc_infer_ctx *c) {
    int64_t p = tgc_infer_attr_int(c, "p", 2);
    if (p < 1) return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'p' is %lld; it must be >= 1", (long long)p);
    return infer_global_average_pool(c);
}

static const tgc_attr_def global_lp_pool_attrs[] = {{"p", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_GlobalMaxPool = {"GlobalMaxPool", 1, 1, 1, 1, no_attrs, infer_global_average_pool};
const tgc_op_def tgc_op_GlobalLpPool = {"GlobalLpPool", 1, 1, 1, 1, global_lp_pool_attrs, infer_global_lp_pool};
