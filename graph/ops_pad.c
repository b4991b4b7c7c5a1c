/* Layout ops that move elements between positions (ONNX opset 17, Pad in
 * its opset-18 form): Pad (constant, reflect, edge; negative pads crop),
 * DepthToSpace (DCR, CRD) and SpaceToDepth. Any dtype: the kernels move
 * elements by their size. */
#include "graph/ops.h"
#include "support/checked.h"

#include <string.h>

/* Formats a shape into buf for messages. */
#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* ---- Pad ------------------------------------------------------------------------ */

/* Pad-18 (Pad-11/13 is the same without `axes`): data, pads int64
 * [2 * naxes] (begins, then ends), optional constant_value (data's dtype,
 * one element), optional axes (int32/int64, naxes of them; default every
 * axis) -> output dims[a] = data.dims[a] + begin[a] + end[a] (>= 0). */
static tgc_status infer_pad(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_ANY) || !tgc_infer_require_dtype(c, 1, TGC_INT64) ||
        !tgc_infer_require_same_dtype(c, 0, 2) || !tgc_infer_require_int(c, 3))
        return TGC_ERR_INVALID;
    const char *mode = tgc_infer_attr_string(c, "mode", "constant");
    if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0)
        return tgc_infer_fail(c, -1, strcmp(mode, "wrap") == 0 ? "unsupported" : "bad-attribute",
                              "attribute 'mode' is '%s'; tgc pads in modes constant, reflect and edge", mode);
    const tgc_tensor_info *cv = tgc_infer_input(c, 2);
    if (cv != NULL && cv->shape.rank > 1) {
        char sv[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 2, "shape-mismatch", "constant_value has shape %s; it must hold one element",
                              SHAPE(c, &cv->shape, sv));
    }
    int r = x->shape.rank;
    tgc_shape out = x->shape;
    if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    int64_t axes[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK];
    int n_axes = r, n_pads;
    bool has_axes = tgc_infer_input(c, 3) != NULL, axes_known = true;
    if (has_axes) axes_known = tgc_infer_input_concrete_value(c, 3, axes, TGC_MAX_RANK, &n_axes);
    else
        for (int i = 0; i < r; i++) axes[i] = i;
    if (axes_known) {
        tgc_status st = tgc_ops_normalize_axes(c, 3, "axes", axes, n_axes, r);
        if (st != TGC_OK) return st;
    }
    if (!tgc_infer_input_concrete_value(c, 1, pads, 2 * TGC_MAX_RANK, &n_pads) || !axes_known) {
        /* Which sizes change, or by how much, is known at run time only. */
        for (int i = 0; i < (axes_known ? n_axes : r); i++) out.dims[axes_known ? axes[i] : i] = tgc_infer_fresh_dim(c);
        return tgc_infer_set_output(c, 0, x->dtype, &out);
    }
    if (n_pads != 2 * n_axes)
        return tgc_infer_fail(c, 1, "bad-input", "pads has %d values; it needs %d (a begin and an end for each of "
                              "%d axes)", n_pads, 2 * n_axes, n_axes);
    for (int i = 0; i < n_axes; i++) {
        int a = (int)axes[i];
        tgc_dim d = x->shape.dims[a];
        int64_t o;
        if (!tgc_dim_known(d)) {
            out.dims[a] = pads[i] == 0 && pads[n_axes + i] == 0 ? d : tgc_infer_fresh_dim(c);
            continue;
        }
        if (!tgc_checked_add_i64(d.v, pads[i], &o) || !tgc_checked_add_i64(o, pads[n_axes + i], &o))
            return tgc_infer_fail(c, 1, "size-overflow", "axis %d's padded size does not fit in int64", a);
        if (o < 0)
            return tgc_infer_fail(c, 1, "bad-input", "pads crop axis %d of size %lld by more than its size "
                                  "(%lld and %lld)", a, (long long)d.v, (long long)pads[i],
                                  (long long)pads[n_axes + i]);
        out.dims[a] = tgc_dim_of(o);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def pad_attrs[] = {{"mode", TGC_ATTR_STRING, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Pad = {"Pad", 2, 4, 1, 1, pad_attrs, infer_pad};

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------------- */

/* Reads the required `blocksize` (>= 1, < 2^31). */
static tgc_status read_blocksize(tgc_infer_ctx *c, int64_t *b) {
    *b = tgc_infer_attr_int(c, "blocksize", 0);
    if (*b < 1 || *b > INT32_MAX)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'blocksize' is %lld; it must be >= 1",
                              (long long)*b);
    return TGC_OK;
}

/* DepthToSpace-13: [N, C, H, W] -> [N, C / b^2, H * b, W * b]; C must be a
 * multiple of b^2. mode DCR (default) or CRD orders the channels. */
static tgc_status infer_depth_to_space(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_ANY)) return TGC_ERR_INVALID;
    int64_t b, bb;
    tgc_status st = read_blocksize(c, &b);
    if (st != TGC_OK) return st;
    const char *mode = tgc_infer_attr_string(c, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'mode' is '%s'; it must be DCR or CRD", mode);
    tgc_shape out = x->shape;
    if (out.rank < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    char sx[TGC_OPS_SHAPE_BUF];
    if (out.rank != 4)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; DepthToSpace needs [N, C, H, W]",
                              SHAPE(c, &x->shape, sx));
    bb = b * b; /* b < 2^31 */
    tgc_dim ch = x->shape.dims[1];
    if (tgc_dim_known(ch) && ch.v % bb != 0)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; its channels must be a multiple of "
                              "blocksize^2 = %lld", SHAPE(c, &x->shape, sx), (long long)bb);
    out.dims[1] = tgc_dim_known(ch) ? tgc_dim_of(ch.v / bb) : tgc_infer_fresh_dim(c);
    for (int i = 2; i < 4; i++) {
        tgc_dim d = x->shape.dims[i];
        int64_t o;
        if (!tgc_dim_known(d)) out.dims[i] = tgc_infer_fresh_dim(c);
        else if (!tgc_checked_mul_i64(d.v, b, &o))
            return tgc_infer_fail(c, 0, "size-overflow", "axis %d times blocksize passes int64", i);
        else out.dims[i] = tgc_dim_of(o);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

/* SpaceToDepth-13: [N, C, H, W] -> [N, C * b^2, H / b, W / b]; H and W must
 * be multiples of b. */
static tgc_status infer_space_to_depth(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_ANY)) return TGC_ERR_INVALID;
    int64_t b;
    tgc_status st = read_blocksize(c, &b);
    if (st != TGC_OK) return st;
    tgc_shape out = x->shape;
    if (out.rank < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    char sx[TGC_OPS_SHAPE_BUF];
    if (out.rank != 4)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; SpaceToDepth needs [N, C, H, W]",
                              SHAPE(c, &x->shape, sx));
    tgc_dim ch = x->shape.dims[1];
    int64_t o;
    if (!tgc_dim_known(ch)) out.dims[1] = tgc_infer_fresh_dim(c);
    else if (!tgc_checked_mul_i64(ch.v, b * b, &o))
        return tgc_infer_fail(c, 0, "size-overflow", "channels times blocksize^2 passes int64");
    else out.dims[1] = tgc_dim_of(o);
    for (int i = 2; i < 4; i++) {
        tgc_dim d = x->shape.dims[i];
        if (tgc_dim_known(d) && d.v % b != 0)
            return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; H and W must be multiples of "
                                  "blocksize %lld", SHAPE(c, &x->shape, sx), (long long)b);
        out.dims[i] = tgc_dim_known(d) ? tgc_dim_of(d.v / b) : tgc_infer_fresh_dim(c);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def depth_to_space_attrs[] = {
    {"blocksize", TGC_ATTR_INT, true}, {"mode", TGC_ATTR_STRING, false}, {NULL, 0, false}};
static const tgc_attr_def space_to_depth_attrs[] = {{"blocksize", TGC_ATTR_INT, true}, {NULL, 0, false}};

const tgc_op_def tgc_op_DepthToSpace = {"DepthToSpace", 1, 1, 1, 1, depth_to_space_attrs, infer_depth_to_space};
const tgc_op_def tgc_op_SpaceToDepth = {"SpaceToDepth", 1, 1, 1, 1, space_to_depth_attrs, infer_space_to_depth};
