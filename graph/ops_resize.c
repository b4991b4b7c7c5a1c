/* Resize (ONNX opset 11-19 forms; Resize-10 and Upsample arrive rewritten
 * by onnx/onnx_legacy.c). Inputs X, roi, scales, sizes; exactly one of
 * scales and sizes is given (an empty tensor counts as not given).
 *
 * The output shape needs the values of scales (float32) or sizes (int64).
 * Sizes are a small integer tensor whose value inference tracks; scales are
 * read from the initializer that makes them when there is one. Otherwise
 * the resized dims are fresh symbols, and at run time the kernels size the
 * output themselves (tgc_kernel_def.sizes_outputs) from the same rules,
 * graph/resize_shape.c. */
#include "graph/ops.h"
#include "graph/resize_shape.h"
#include "support/checked.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* True when input i's float32 values are known: the initializer that makes
 * it (rank <= 1, at most max elements), or a float scalar's known value.
 * Copies them into out and sets *n. */
static bool known_floats(const tgc_infer_ctx *c, int i, float *out, int max, int *n) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->dtype != TGC_FLOAT32) return false;
    if (in->has_real && max >= 1) {
        out[0] = (float)in->real;
        *n = 1;
        return true;
    }
    const tgc_node *node = c->node;
    if (c->graph == NULL || i >= node->n_inputs || node->inputs[i].node < 0) return false;
    const tgc_node *p = &c->graph->nodes[node->inputs[i].node];
    const tgc_const *k = p->kind == TGC_NODE_CONST ? p->data : NULL;
    if (k == NULL || k->dtype != TGC_FLOAT32 || k->shape.rank > 1) return false;
    size_t count = k->nbytes / sizeof(float);
    if (count > (size_t)max) return false;
    if (count > 0) memcpy(out, k->data, count * sizeof(float));
    *n = (int)count;
    return true;
}

/* The length of 1-D input i when its shape says (omitted: 0), else -1. */
static int64_t known_length(const tgc_infer_ctx *c, int i) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL) return 0;
    if (in->shape.rank == 0) return 1;
    if (in->shape.rank != 1 || !tgc_dim_known(in->shape.dims[0])) return -1;
    return in->shape.dims[0].v;
}

/* Checks the string and flag attributes against their ONNX vocabularies. */
static tgc_status check_attrs(tgc_infer_ctx *c) {
    tgc_resize_mode mode;
    tgc_resize_coord coord;
    tgc_resize_nearest nearest;
    tgc_resize_policy policy;
    const char *s;
    if (!tgc_resize_mode_parse(s = tgc_infer_attr_string(c, "mode", "nearest"), &mode))
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'mode' is '%s'; it must be nearest, linear or cubic",
                              s);
    if (!tgc_resize_coord_parse(s = tgc_infer_attr_string(c, "coordinate_transformation_mode", "half_pixel"), &coord))
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute 'coordinate_transformation_mode' is '%s'; it must be half_pixel, "
                              "half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
                              "tf_crop_and_resize or tf_half_pixel_for_nn", s);
    if (!tgc_resize_nearest_parse(s = tgc_infer_attr_string(c, "nearest_mode", "round_prefer_floor"), &nearest))
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute 'nearest_mode' is '%s'; it must be round_prefer_floor, round_prefer_ceil, "
                              "floor or ceil", s);
    if (!tgc_resize_policy_parse(s = tgc_infer_attr_string(c, "keep_aspect_ratio_policy", "stretch"), &policy))
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute 'keep_aspect_ratio_policy' is '%s'; it must be stretch, not_larger or "
                              "not_smaller", s);
    static const char *const flags[] = {"antialias", "exclude_outside"};
    for (int i = 0; i < 2; i++) {
        int64_t v = tgc_infer_attr_int(c, flags[i], 0);
        if (v != 0 && v != 1)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute '%s' is %lld; it must be 0 or 1", flags[i],
                                  (long long)v);
    }
    return TGC_OK;
}

/* Resize-19: Y has X's dtype and rank; see resize_shape.h for the dims. */
static tgc_status infer_resize(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC) || !tgc_ops_require_dtypes(c, 1, TGC_DT_FLOAT) ||
        !tgc_ops_require_dtypes(c, 2, TGC_DT(TGC_FLOAT32)) || !tgc_ops_require_dtypes(c, 3, TGC_DT(TGC_INT64)))
        return TGC_ERR_INVALID;
    tgc_status st = check_attrs(c);
    if (st != TGC_OK) return st;
    int64_t n_scales = known_length(c, 2), n_sizes = known_length(c, 3);
    if (n_scales > 0 && n_sizes > 0)
        return tgc_infer_fail(c, 3, "bad-input", "both scales (input 2) and sizes (input 3) are given; Resize takes "
                              "exactly one");
    if (n_scales == 0 && n_sizes == 0)
        return tgc_infer_fail(c, -1, "bad-input", "neither scales (input 2) nor sizes (input 3) is given; Resize "
                              "takes exactly one");
    int r = x->shape.rank;
    tgc_shape out = {.rank = r};
    if (r < 0) return tgc_infer_set_output(c, 0, x->dtype, &out);
    /* The resized axes: attribute `axes` (opset 18), else all. */
    int64_t axes64[TGC_MAX_RANK];
    const int64_t *attr_axes;
    size_t n_attr_axes;
    int n_axes = r;
    if (tgc_infer_attr_ints(c, "axes", &attr_axes, &n_attr_axes)) {
        if (n_attr_axes > (size_t)r)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'axes' lists %zu axes for an input of rank %d",
                                  n_attr_axes, r);
        n_axes = (int)n_attr_axes;
        if (n_attr_axes > 0) memcpy(axes64, attr_axes, n_attr_axes * sizeof *axes64);
        if ((st = tgc_ops_normalize_axes(c, -1, "axes", axes64, n_axes, r)) != TGC_OK) return st;
    } else {
        for (int d = 0; d < r; d++) axes64[d] = d;
    }
    int axes[TGC_MAX_RANK];
    for (int i = 0; i < n_axes; i++) axes[i] = (int)axes64[i];
    /* Which one is given (-1: both of unknown length, the run decides). */
    int given = n_sizes > 0 ? 3 : n_scales > 0 ? 2 : n_sizes < 0 && n_scales == 0 ? 3 : n_sizes == 0 ? 2 : -1;
    int64_t n_given = given == 3 ? n_sizes : n_scales;
    if (given > 0 && n_given >= 0 && n_given != n_axes) {
        char sx[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, given, "shape-mismatch", "input %d (%s) has %lld values but X %s has %d axes to "
                              "resize", given, given == 3 ? "sizes" : "scales", (long long)n_given,
                              SHAPE(c, &x->shape, sx), n_axes);
    }
    float scales[TGC_MAX_RANK];
    int64_t sizes[TGC_MAX_RANK];
    int n_val = 0;
    bool known = given == 2 ? known_floats(c, 2, scales, TGC_MAX_RANK, &n_val)
                            : given == 3 && tgc_infer_input_concrete_value(c, 3, sizes, TGC_MAX_RANK, &n_val);
    if (known && n_val != n_axes)
        return tgc_infer_fail(c, given, "shape-mismatch", "input %d (%s) has %d values but X has %d axes to resize",
                              given, given == 3 ? "sizes" : "scales", n_val, n_axes);
    tgc_resize_policy policy = TGC_RESIZE_STRETCH;
    tgc_resize_policy_parse(tgc_infer_attr_string(c, "keep_aspect_ratio_policy", "stretch"), &policy);
    /* With the values known, each listed axis of known size gets its dim (a
     * symbolic size stands in as 1; under keep_aspect_ratio_policy every
     * listed size must be known, as the one scale depends on them all). */
    int64_t in[TGC_MAX_RANK], od[TGC_MAX_RANK];
    double sc[TGC_MAX_RANK];
    bool listed_known = true;
    for (int d = 0; d < r; d++) {
        in[d] = tgc_dim_known(x->shape.dims[d]) ? x->shape.dims[d].v : 1;
        out.dims[d] = x->shape.dims[d];
    }
    for (int i = 0; i < n_axes; i++) listed_known = listed_known && tgc_dim_known(x->shape.dims[axes[i]]);
    if (known) {
        char why[192];
        if (!tgc_resize_output_dims(r, in, axes, n_axes, given == 2 ? scales : NULL, given == 3 ? sizes : NULL, policy,
                                    od, sc, why, sizeof why))
            return tgc_infer_fail(c, given, strstr(why, "2^63") ? "size-overflow" : "bad-input", "%s", why);
    }
    for (int i = 0; i < n_axes; i++) {
        int a = axes[i];
        bool own = known && tgc_dim_known(x->shape.dims[a]);
        if (own && (given == 2 || policy == TGC_RESIZE_STRETCH || listed_known)) out.dims[a] = tgc_dim_of(od[a]);
        else if (known && given == 2 && scales[i] == 1.0f) continue; /* floor(d * 1) is d, symbol or not */
        else if (known && given == 3 && policy == TGC_RESIZE_STRETCH) out.dims[a] = tgc_dim_of(sizes[i]);
        else out.dims[a] = tgc_infer_fresh_dim(c);
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def resize_attrs[] = {
    {"mode", TGC_ATTR_STRING, false},
    {"coordinate_transformation_mode", TGC_ATTR_STRING, false},
    {"nearest_mode", TGC_ATTR_STRING, false},
    {"cubic_coeff_a", TGC_ATTR_FLOAT, false},
    {"exclude_outside", TGC_ATTR_INT, false},
    {"extrapolation_value", TGC_ATTR_FLOAT, false},
    {"antialias", TGC_ATTR_INT, false},
    {"axes", TGC_ATTR_INTS, false},
    {"keep_aspect_ratio_policy", TGC_ATTR_STRING, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_Resize = {"Resize", 1, 4, 1, 1, resize_attrs, infer_resize};
