/* Sampling and detection ops (ONNX opset 16): GridSample, RoiAlign and
 * NonMaxSuppression. GridSample and RoiAlign shape their output from their
 * inputs' shapes and attributes; NonMaxSuppression's row count depends on
 * the scores, so it is a fresh symbol (its kernel sizes the output). */
#include "graph/ops.h"

#include <stdio.h>
#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* True when `v` is one of the n names; else reports "bad-attribute" naming
 * the attribute and the choices, and returns false. */
static bool attr_choice(tgc_infer_ctx *c, const char *attr, const char *dflt, const char *const *names, int n) {
    const char *v = tgc_infer_attr_string(c, attr, dflt);
    char list[160] = "";
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(v, names[i]) == 0) return true;
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s", i ? ", " : "", names[i]);
    }
    tgc_infer_fail(c, -1, "bad-attribute", "attribute '%s' is '%s'; it must be one of %s", attr, v, list);
    return false;
}

/* Input i must have rank `rank` when its rank is known. */
static bool need_rank(tgc_infer_ctx *c, int i, const char *what, int rank) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->shape.rank < 0 || in->shape.rank == rank) return true;
    char s[TGC_OPS_SHAPE_BUF];
    tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must have rank %d", i, what,
                   SHAPE(c, &in->shape, s), rank);
    return false;
}

/* Merges dim da of input ia with dim db of input ib (must be equal at run time) into *out. */
static bool merge_dims(tgc_infer_ctx *c, int ia, int da, int ib, int db, tgc_dim *out) {
    const tgc_tensor_info *a = tgc_infer_input(c, ia), *b = tgc_infer_input(c, ib);
    if (tgc_ops_dim_merge(a->shape.dims[da], b->shape.dims[db], out)) return true;
    char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
    tgc_infer_fail(c, ib, "shape-mismatch", "input %d has shape %s and input %d has shape %s; dim %d of the first "
                   "must equal dim %d of the second", ia, SHAPE(c, &a->shape, sa), ib, SHAPE(c, &b->shape, sb), da, db);
    return false;
}

/* ---- GridSample ---------------------------------------------------------------------- */

/* GridSample-16 (and -20's N-D form): X [N, C, D1..Dk], grid [N, O1..Ok, k]
 * -> Y [N, C, O1..Ok]; mode bilinear/nearest/bicubic (linear/cubic, -20's
 * names), padding_mode zeros/border/reflection, align_corners 0/1. */
static tgc_status infer_grid_sample(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *grid = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC) || !tgc_infer_require_float(c, 1)) return TGC_ERR_INVALID;
    static const char *const modes[] = {"bilinear", "nearest", "bicubic", "linear", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    if (!attr_choice(c, "mode", "bilinear", modes, 5) || !attr_choice(c, "padding_mode", "zeros", pads, 3))
        return TGC_ERR_INVALID;
    int64_t ac = tgc_infer_attr_int(c, "align_corners", 0);
    if (ac != 0 && ac != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'align_corners' is %lld; it must be 0 or 1",
                              (long long)ac);
    int r = x->shape.rank >= 0 ? x->shape.rank : grid->shape.rank;
    tgc_shape out = {.rank = r};
    if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    if (r < 3) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, x->shape.rank >= 0 ? 0 : 1, "shape-mismatch", "input %s has rank %d; GridSample "
                              "needs rank >= 3 ([N, C, spatial...] and [N, spatial..., k])",
                              SHAPE(c, x->shape.rank >= 0 ? &x->shape : &grid->shape, s), r);
    }
    if (!need_rank(c, 0, "X", r) || !need_rank(c, 1, "grid", r)) return TGC_ERR_INVALID;
    /* N and C from X, the spatial dims from grid; a fresh symbol where the rank is unknown. */
    for (int d = 0; d < r; d++) {
        bool from_x = d < 2 ? x->shape.rank >= 0 : false, from_grid = d == 0 || d >= 2 ? grid->shape.rank >= 0 : false;
        if (from_x) out.dims[d] = x->shape.dims[d];
        else if (from_grid) out.dims[d] = grid->shape.dims[d == 0 ? 0 : d - 1];
        else out.dims[d] = tgc_infer_fresh_dim(c);
    }
    if (grid->shape.rank >= 0) {
        tgc_dim k = grid->shape.dims[r - 1];
        if (tgc_dim_known(k) && k.v != r - 2) {
            char s[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (grid) has shape %s; its last dim must be %d, "
                                  "the number of spatial axes", SHAPE(c, &grid->shape, s), r - 2);
        }
        if (x->shape.rank >= 0 && !merge_dims(c, 0, 0, 1, 0, &out.dims[0])) return TGC_ERR_INVALID;
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def grid_sample_attrs[] = {
    {"mode", TGC_ATTR_STRING, false},
    {"padding_mode", TGC_ATTR_STRING, false},
    {"align_corners", TGC_ATTR_INT, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_GridSample = {"GridSample", 2, 2, 1, 1, grid_sample_attrs, infer_grid_sample};

/* ---- RoiAlign ------------------------------------------------------------------------ */

/* RoiAlign-16: X [N, C, H, W], rois [R, 4], batch_indices [R] (int64) ->
 * Y [R, C, output_height, output_width]. */
static tgc_status infer_roi_align(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *rois = tgc_infer_input(c, 1), *bi = tgc_infer_input(c, 2);
    if (!tgc_infer_require_float(c, 0) || !tgc_infer_require_same_dtype(c, 0, 1) ||
        !tgc_infer_require_dtype(c, 2, TGC_INT64))
        return TGC_ERR_INVALID;
    static const char *const modes[] = {"avg", "max"};
    static const char *const coords[] = {"half_pixel", "output_half_pixel"};
    if (!attr_choice(c, "mode", "avg", modes, 2) ||
        !attr_choice(c, "coordinate_transformation_mode", "half_pixel", coords, 2))
        return TGC_ERR_INVALID;
    int64_t oh = tgc_infer_attr_int(c, "output_height", 1), ow = tgc_infer_attr_int(c, "output_width", 1);
    int64_t sr = tgc_infer_attr_int(c, "sampling_ratio", 0);
    if (oh < 1 || ow < 1 || sr < 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "output_height (%lld) and output_width (%lld) must be >= 1 and "
                              "sampling_ratio (%lld) >= 0", (long long)oh, (long long)ow, (long long)sr);
    if (!need_rank(c, 0, "X", 4) || !need_rank(c, 1, "rois", 2) || !need_rank(c, 2, "batch_indices", 1))
        return TGC_ERR_INVALID;
    if (rois->shape.rank == 2 && tgc_dim_known(rois->shape.dims[1]) && rois->shape.dims[1].v != 4) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 (rois) has shape %s; it must be [num_rois, 4]",
                              SHAPE(c, &rois->shape, s));
    }
    tgc_shape out = {.rank = 4};
    out.dims[0] = rois->shape.rank == 2 ? rois->shape.dims[0]
                  : bi->shape.rank == 1 ? bi->shape.dims[0]
                                        : tgc_infer_fresh_dim(c);
    if (rois->shape.rank == 2 && bi->shape.rank == 1 && !merge_dims(c, 1, 0, 2, 0, &out.dims[0]))
        return TGC_ERR_INVALID;
    out.dims[1] = x->shape.rank == 4 ? x->shape.dims[1] : tgc_infer_fresh_dim(c);
    out.dims[2] = tgc_dim_of(oh);
    out.dims[3] = tgc_dim_of(ow);
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def roi_align_attrs[] = {
    {"coordinate_transformation_mode", TGC_ATTR_STRING, false},
    {"mode", TGC_ATTR_STRING, false},
    {"output_height", TGC_ATTR_INT, false},
    {"output_width", TGC_ATTR_INT, false},
    {"sampling_ratio", TGC_ATTR_INT, false},
    {"spatial_scale", TGC_ATTR_FLOAT, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_RoiAlign = {"RoiAlign", 3, 3, 1, 1, roi_align_attrs, infer_roi_align};

/* ---- NonMaxSuppression --------------------------------------------------------------- */

/* NonMaxSuppression-11: boxes [B, S, 4], scores [B, C, S] (float32),
 * optional max_output_boxes_per_class (int64), iou_threshold and
 * score_threshold (float32) scalars or 1-element tensors -> selected_indices
 * [num_selected, 3] int64, num_selected known only at run time. */
static tgc_status infer_nms(tgc_infer_ctx *c) {
    const tgc_tensor_info *boxes = tgc_infer_input(c, 0), *scores = tgc_infer_input(c, 1);
    if (!tgc_infer_require_dtype(c, 0, TGC_FLOAT32) || !tgc_infer_require_dtype(c, 1, TGC_FLOAT32) ||
        !tgc_ops_require_dtypes(c, 2, TGC_DT(TGC_INT64)) || !tgc_ops_require_dtypes(c, 3, TGC_DT(TGC_FLOAT32)) ||
        !tgc_ops_require_dtypes(c, 4, TGC_DT(TGC_FLOAT32)))
        return TGC_ERR_INVALID;
    int64_t cpb = tgc_infer_attr_int(c, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'center_point_box' is %lld; it must be 0 or 1",
                              (long long)cpb);
    if (!need_rank(c, 0, "boxes", 3) || !need_rank(c, 1, "scores", 3)) return TGC_ERR_INVALID;
    if (boxes->shape.rank == 3 && tgc_dim_known(boxes->shape.dims[2]) && boxes->shape.dims[2].v != 4) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 (boxes) has shape %s; it must be [batches, boxes, 4]",
                              SHAPE(c, &boxes->shape, s));
    }
    tgc_dim m;
    if (boxes->shape.rank == 3 && scores->shape.rank == 3 &&
        (!merge_dims(c, 0, 0, 1, 0, &m) || !merge_dims(c, 0, 1, 1, 2, &m)))
        return TGC_ERR_INVALID;
    for (int i = 2; i <= 4; i++) {
        const tgc_tensor_info *in = tgc_infer_input(c, i);
        if (in == NULL || in->shape.rank < 0) continue;
        if (in->shape.rank > 1 || (in->shape.rank == 1 && tgc_dim_known(in->shape.dims[0]) &&
                                   in->shape.dims[0].v > 1)) {
            char s[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d has shape %s; it must hold one value", i,
                                  SHAPE(c, &in->shape, s));
        }
    }
    tgc_shape out = {.rank = 2};
    out.dims[0] = tgc_infer_fresh_dim(c);
    out.dims[1] = tgc_dim_of(3);
    return tgc_infer_set_output(c, 0, TGC_INT64, &out);
}

static const tgc_attr_def nms_attrs[] = {{"center_point_box", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_NonMaxSuppression = {"NonMaxSuppression", 2, 5, 1, 1, nms_attrs, infer_nms};
