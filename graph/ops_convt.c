/* Transposed convolution and unpooling (ONNX opset 17): ConvTranspose-11
 * and MaxUnpool-11. Both grow the spatial axes: an input position i of a
 * window with stride s lands at output position i * s - pad_begin + t * d.
 * The output sizes follow ONNX's reference implementation
 * (onnx/reference/ops/op_conv_transpose.py, op_max_unpool.py); the kernels
 * resolve the same rules in devices/convt_geometry.c. */
#include "graph/ops.h"
#include "support/checked.h"

#include <string.h>

/* Formats a shape into buf for messages. */
#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* Reads INTS attribute `name` of `len` values in [min, 2^31 - 1] into out
 * (`dflt` everywhere when absent; *present says which). The bound keeps
 * every window product below in int64. */
static tgc_status read_ints(tgc_infer_ctx *c, const char *name, int len, int64_t min, int64_t dflt, int64_t *out,
                            bool *present) {
    const int64_t *v;
    size_t n;
    bool has = tgc_infer_attr_ints(c, name, &v, &n);
    if (present != NULL) *present = has;
    if (!has) {
        for (int i = 0; i < len; i++) out[i] = dflt;
        return TGC_OK;
    }
    if (n != (size_t)len)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute '%s' has %zu values; it needs %d", name, n, len);
    for (int i = 0; i < len; i++) {
        if (v[i] < min || v[i] > INT32_MAX)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute '%s' has %lld at position %d; values must "
                                  "be in [%lld, %d]", name, (long long)v[i], i, (long long)min, INT32_MAX);
        out[i] = v[i];
    }
    return TGC_OK;
}

/* ---- ConvTranspose ------------------------------------------------------------ */

/* ConvTranspose-11: X [N, C, D1..Dn], W [C, M/group, k1..kn], optional
 * B [M] -> Y [N, M, O1..On]. Per axis, with ek = (k - 1) * d + 1 and
 * output_padding op:
 *   output_shape given: O is it (n values, or n + 2 of which the last n);
 *   else SAME_UPPER/SAME_LOWER: O = D * s;
 *   else O = s * (D - 1) + op + ek - pad_begin - pad_end (pads 0 for VALID
 *   or when absent). */
static tgc_status infer_conv_transpose(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *wt = tgc_infer_input(c, 1), *b = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_infer_require_same_dtype(c, 0, 1) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    int64_t group = tgc_infer_attr_int(c, "group", 1);
    if (group < 1 || group > INT32_MAX)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'group' is %lld; it must be >= 1", (long long)group);
    const char *ap = tgc_infer_attr_string(c, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0, valid = strcmp(ap, "VALID") == 0;
    if (!same && !valid && strcmp(ap, "NOTSET") != 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'auto_pad' is '%s'; it must be NOTSET, "
                              "SAME_UPPER, SAME_LOWER or VALID", ap);
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    int rank = x->shape.rank >= 0 ? x->shape.rank : wt->shape.rank;
    if (rank < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    char sx[TGC_OPS_SHAPE_BUF], sw[TGC_OPS_SHAPE_BUF];
    if (rank < 3 || rank > TGC_MAX_RANK)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has rank %d; ConvTranspose needs [N, C, D1, ...] "
                              "of rank >= 3", rank);
    if (x->shape.rank >= 0 && wt->shape.rank >= 0 && x->shape.rank != wt->shape.rank)
        return tgc_infer_fail(c, 1, "shape-mismatch", "X has shape %s but W has shape %s; their ranks must agree",
                              SHAPE(c, &x->shape, sx), SHAPE(c, &wt->shape, sw));
    int n = rank - 2;
    int64_t kernel[TGC_MAX_RANK], strides[TGC_MAX_RANK], dil[TGC_MAX_RANK], opad[TGC_MAX_RANK],
        pads[2 * TGC_MAX_RANK];
    bool has_kernel, has_pads;
    tgc_status st = read_ints(c, "kernel_shape", n, 1, 0, kernel, &has_kernel);
    if (st == TGC_OK) st = read_ints(c, "strides", n, 1, 1, strides, NULL);
    if (st == TGC_OK) st = read_ints(c, "dilations", n, 1, 1, dil, NULL);
    if (st == TGC_OK) st = read_ints(c, "output_padding", n, 0, 0, opad, NULL);
    if (st == TGC_OK) st = read_ints(c, "pads", 2 * n, 0, 0, pads, &has_pads);
    if (st != TGC_OK) return st;
    if (has_pads && (same || valid))
        return tgc_infer_fail(c, -1, "bad-attribute", "attributes 'pads' and 'auto_pad' (%s) cannot be used "
                              "together", ap);
    const int64_t *oshape;
    size_t n_oshape;
    bool has_oshape = tgc_infer_attr_ints(c, "output_shape", &oshape, &n_oshape);
    if (has_oshape && n_oshape != (size_t)n && n_oshape != (size_t)rank)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'output_shape' has %zu values; it needs %d (one "
                              "per spatial axis) or %d", n_oshape, n, rank);
    if (has_oshape) oshape += n_oshape - (size_t)n;
    for (int i = 0; has_oshape && i < n; i++)
        if (oshape[i] < 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'output_shape' has %lld; sizes must be >= 0",
                                  (long long)oshape[i]);

    const tgc_shape *xs = &x->shape, *ws = &wt->shape;
    bool w_ranked = ws->rank >= 0, x_ranked = xs->rank >= 0;
    for (int i = 0; w_ranked && i < n; i++) {
        tgc_dim k = ws->dims[2 + i];
        if (has_kernel && tgc_dim_known(k) && k.v != kernel[i])
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'kernel_shape' gives %lld for spatial axis %d "
                                  "but W has shape %s", (long long)kernel[i], i, SHAPE(c, ws, sw));
        if (tgc_dim_known(k) && k.v < 1)
            return tgc_infer_fail(c, 1, "shape-mismatch", "W has shape %s; kernel sizes must be >= 1",
                                  SHAPE(c, ws, sw));
    }
    if (!has_kernel && w_ranked) {
        has_kernel = true;
        for (int i = 0; i < n; i++) {
            tgc_dim k = ws->dims[2 + i];
            if (!tgc_dim_known(k) || k.v > INT32_MAX) has_kernel = false;
            else kernel[i] = k.v;
        }
    }
    /* Channels: W is [C, M / group, ...]; C must divide into groups. */
    if (x_ranked && w_ranked && tgc_dim_known(xs->dims[1]) && tgc_dim_known(ws->dims[0]) &&
        xs->dims[1].v != ws->dims[0].v)
        return tgc_infer_fail(c, 1, "shape-mismatch", "X has shape %s but W %s; W's dim 0 must be X's channels",
                              SHAPE(c, xs, sx), SHAPE(c, ws, sw));
    tgc_dim ch = x_ranked ? xs->dims[1] : (w_ranked ? ws->dims[0] : tgc_dim_of(0));
    if ((x_ranked || w_ranked) && tgc_dim_known(ch) && ch.v % group != 0)
        return tgc_infer_fail(c, 0, "shape-mismatch", "%lld input channels do not divide into %lld groups",
                              (long long)ch.v, (long long)group);
    /* M: W's dim 1 times group, else B's size, else unknown (a fresh dim,
     * made only when needed: at run time one marks the shape unresolved). */
    tgc_dim m = tgc_dim_of(0);
    bool m_known = false;
    if (w_ranked && tgc_dim_known(ws->dims[1])) {
        m_known = true;
        int64_t mv;
        if (!tgc_checked_mul_i64(ws->dims[1].v, group, &mv))
            return tgc_infer_fail(c, 1, "size-overflow", "W's dim 1 times group passes int64");
        m = tgc_dim_of(mv);
    }
    if (b != NULL && b->shape.rank >= 0) {
        tgc_dim bm = b->shape.rank == 1 ? b->shape.dims[0] : tgc_dim_of(-1);
        if (b->shape.rank != 1 || (m_known && !tgc_ops_dim_merge(bm, m, &bm))) {
            char sb[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 2, "shape-mismatch", "B has shape %s; it must be [M] (W %s, group %lld)",
                                  SHAPE(c, &b->shape, sb), SHAPE(c, ws, sw), (long long)group);
        }
        m = bm;
        m_known = true;
    }
    out.rank = rank;
    out.dims[0] = x_ranked ? xs->dims[0] : tgc_infer_fresh_dim(c);
    out.dims[1] = m_known ? m : tgc_infer_fresh_dim(c);
    for (int i = 0; i < n; i++) {
        tgc_dim in = x_ranked ? xs->dims[2 + i] : tgc_dim_of(0);
        if (has_oshape) {
            out.dims[2 + i] = tgc_dim_of(oshape[i]);
            continue;
        }
        if (!x_ranked || !tgc_dim_known(in) || (!same && !has_kernel)) {
            out.dims[2 + i] = tgc_infer_fresh_dim(c);
            continue;
        }
        int64_t o;
        bool ok;
        if (same) {
            ok = tgc_checked_mul_i64(in.v, strides[i], &o);
        } else {
            /* s * (D - 1) + op + (k - 1) * d + 1 - pads; every factor < 2^31 but D */
            int64_t ek = (kernel[i] - 1) * dil[i] + 1;
            ok = in.v >= 1 && tgc_checked_mul_i64(in.v - 1, strides[i], &o) && tgc_checked_add_i64(o, opad[i] + ek, &o) &&
                 tgc_checked_sub_i64(o, pads[i] + pads[n + i], &o);
            if (in.v == 0) ok = true, o = 0;
        }
        if (!ok)
            return tgc_infer_fail(c, 0, "size-overflow", "spatial axis %d's output size does not fit in int64", i);
        if (o < 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "the pads of spatial axis %d exceed its output size "
                                  "(%lld before padding)", i, (long long)(o + pads[i] + pads[n + i]));
        out.dims[2 + i] = tgc_dim_of(o);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def conv_transpose_attrs[] = {
    {"auto_pad", TGC_ATTR_STRING, false},   {"dilations", TGC_ATTR_INTS, false},
    {"group", TGC_ATTR_INT, false},         {"kernel_shape", TGC_ATTR_INTS, false},
    {"output_padding", TGC_ATTR_INTS, false}, {"output_shape", TGC_ATTR_INTS, false},
    {"pads", TGC_ATTR_INTS, false},         {"strides", TGC_ATTR_INTS, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_ConvTranspose = {"ConvTranspose", 2, 3, 1, 1, conv_transpose_attrs, infer_conv_transpose};

/* ---- MaxUnpool ---------------------------------------------------------------- */

/* MaxUnpool-11: X [N, C, D1..Dn] (float), I int64 of X's shape, optional
 * output_shape (int64 [n + 2], its value the output's shape) -> Y. Without
 * output_shape, O = (D - 1) * s + k - pad_begin - pad_end per axis. */
static tgc_status infer_max_unpool(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *ind = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_infer_require_dtype(c, 1, TGC_INT64) ||
        !tgc_infer_require_dtype(c, 2, TGC_INT64))
        return TGC_ERR_INVALID;
    const int64_t *k;
    size_t nk;
    if (!tgc_infer_attr_ints(c, "kernel_shape", &k, &nk) || nk == 0 || nk > TGC_MAX_RANK - 2)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'kernel_shape' is required: one size per spatial "
                              "axis (1 to %d of them)", TGC_MAX_RANK - 2);
    int n = (int)nk;
    int64_t kernel[TGC_MAX_RANK], strides[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK];
    tgc_status st = read_ints(c, "kernel_shape", n, 1, 1, kernel, NULL);
    if (st == TGC_OK) st = read_ints(c, "strides", n, 1, 1, strides, NULL);
    if (st == TGC_OK) st = read_ints(c, "pads", 2 * n, 0, 0, pads, NULL);
    if (st != TGC_OK) return st;
    char sx[TGC_OPS_SHAPE_BUF], si[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && x->shape.rank != n + 2)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s but 'kernel_shape' has %d axes",
                              SHAPE(c, &x->shape, sx), n);
    if (x->shape.rank >= 0 && ind->shape.rank >= 0) {
        bool ok = ind->shape.rank == x->shape.rank;
        for (int i = 0; ok && i < x->shape.rank; i++) {
            tgc_dim d;
            ok = tgc_ops_dim_merge(x->shape.dims[i], ind->shape.dims[i], &d);
        }
        if (!ok)
            return tgc_infer_fail(c, 1, "shape-mismatch", "I has shape %s but X %s; they must agree",
                                  SHAPE(c, &ind->shape, si), SHAPE(c, &x->shape, sx));
    }
    tgc_shape out = {.rank = n + 2};
    if (tgc_infer_input(c, 2) != NULL) {
        const tgc_tensor_info *os = tgc_infer_input(c, 2);
        if (os->shape.rank >= 0 && (os->shape.rank != 1 || (tgc_dim_known(os->shape.dims[0]) &&
                                                          os->shape.dims[0].v != n + 2)))
            return tgc_infer_fail(c, 2, "shape-mismatch", "output_shape has shape %s; it must be [%d]",
                                  SHAPE(c, &os->shape, si), n + 2);
        const tgc_dim *v;
        int nv;
        if (tgc_ops_input_value(c, 2, &v, &nv)) {
            if (nv != n + 2) return tgc_infer_fail(c, 2, "bad-input", "output_shape has %d values; it needs %d", nv, n + 2);
            for (int i = 0; i < n + 2; i++) {
                if (tgc_dim_known(v[i]) && v[i].v < 0)
                    return tgc_infer_fail(c, 2, "bad-input", "output_shape has %lld; sizes must be >= 0",
                                          (long long)v[i].v);
                out.dims[i] = v[i];
            }
        } else {
            for (int i = 0; i < n + 2; i++) out.dims[i] = tgc_infer_fresh_dim(c);
        }
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    }
    if (x->shape.rank < 0) {
        out.rank = TGC_RANK_UNKNOWN;
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    }
    out.dims[0] = x->shape.dims[0];
    out.dims[1] = x->shape.dims[1];
    for (int i = 0; i < n; i++) {
        tgc_dim in = x->shape.dims[2 + i];
        if (!tgc_dim_known(in)) {
            out.dims[2 + i] = tgc_infer_fresh_dim(c);
            continue;
        }
        int64_t o;
        if (in.v == 0) o = 0;
        else if (!tgc_checked_mul_i64(in.v - 1, strides[i], &o) || !tgc_checked_add_i64(o, kernel[i], &o) ||
                 !tgc_checked_sub_i64(o, pads[i] + pads[n + i], &o))
            return tgc_infer_fail(c, 0, "size-overflow", "spatial axis %d's output size does not fit in int64", i);
        if (o < 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "the pads of spatial axis %d exceed its output size", i);
        out.dims[2 + i] = tgc_dim_of(o);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def max_unpool_attrs[] = {
    {"kernel_shape", TGC_ATTR_INTS, true}, {"pads", TGC_ATTR_INTS, false}, {"strides", TGC_ATTR_INTS, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_MaxUnpool = {"MaxUnpool", 2, 3, 1, 1, max_unpool_attrs, infer_max_unpool};
