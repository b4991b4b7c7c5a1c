/* Resize's arguments and per-axis sampling tables (see resize_geometry.h;
 * the formulas are those of ONNX's reference, op_resize.py). */
#include "devices/resize_geometry.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

/* ---- Arguments ------------------------------------------------------------------- */

/* Reads the string and flag attributes into g. */
static tgc_status read_attrs(tgc_kernel_ctx *c, tgc_resize_geometry *g, tgc_resize_policy *policy) {
    const char *s;
    if (!tgc_resize_mode_parse(s = tgc_kernel_attr_string(c, "mode", "nearest"), &g->mode))
        return tgc_kernel_fail(c, "Resize: attribute 'mode' is '%s'; it must be nearest, linear or cubic", s);
    if (!tgc_resize_coord_parse(s = tgc_kernel_attr_string(c, "coordinate_transformation_mode", "half_pixel"),
                                &g->coord))
        return tgc_kernel_fail(c, "Resize: attribute 'coordinate_transformation_mode' '%s' is unknown", s);
    if (!tgc_resize_nearest_parse(s = tgc_kernel_attr_string(c, "nearest_mode", "round_prefer_floor"), &g->nearest))
        return tgc_kernel_fail(c, "Resize: attribute 'nearest_mode' '%s' is unknown", s);
    if (!tgc_resize_policy_parse(s = tgc_kernel_attr_string(c, "keep_aspect_ratio_policy", "stretch"), policy))
        return tgc_kernel_fail(c, "Resize: attribute 'keep_aspect_ratio_policy' '%s' is unknown", s);
    int64_t exclude = tgc_kernel_attr_int(c, "exclude_outside", 0), antialias = tgc_kernel_attr_int(c, "antialias", 0);
    if ((exclude != 0 && exclude != 1) || (antialias != 0 && antialias != 1))
        return tgc_kernel_fail(c, "Resize: attributes 'exclude_outside' and 'antialias' must be 0 or 1");
    g->exclude_outside = exclude == 1;
    g->antialias = antialias == 1 && g->mode != TGC_RESIZE_NEAREST; /* antialias applies to linear and cubic */
    g->cubic_a = tgc_kernel_attr_float(c, "cubic_coeff_a", -0.75);
    g->extrapolation = tgc_kernel_attr_float(c, "extrapolation_value", 0.0);
    return TGC_OK;
}

/* The resized axes: attribute `axes` normalised, else 0 .. rank-1. */
static tgc_status read_axes(tgc_kernel_ctx *c, int rank, int *axes, int *n_axes) {
    size_t n;
    const int64_t *v = tgc_kernel_attr_ints(c, "axes", &n);
    if (v == NULL) {
        for (int d = 0; d < rank; d++) axes[d] = d;
        *n_axes = rank;
        return TGC_OK;
    }
    if (n > (size_t)rank) return tgc_kernel_fail(c, "Resize: attribute 'axes' lists %zu axes for rank %d", n, rank);
    bool seen[TGC_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int64_t a = v[i] < 0 ? v[i] + rank : v[i];
        if (a < 0 || a >= rank || seen[a])
            return tgc_kernel_fail(c, "Resize: attribute 'axes' has axis %lld, out of range or repeated for rank %d",
                                   (long long)v[i], rank);
        seen[a] = true;
        axes[i] = (int)a;
    }
    *n_axes = (int)n;
    return TGC_OK;
}

/* Element count of optional host input i (0 when omitted), rank <= 1. */
static tgc_status count_of(tgc_kernel_ctx *c, int i, const char *what, int64_t *n) {
    *n = 0;
    if (!tgc_kernel_has_input(c, i)) return TGC_OK;
    const tgc_value *v = &c->inputs[i];
    tgc_status st = tgc_kernel_check_tensor(c, "input", i, v, true);
    if (st != TGC_OK) return st;
    if (v->rank > 1) return tgc_kernel_fail(c, "Resize: input %d (%s) must be 1-D", i, what);
    *n = tgc_value_numel(v);
    return TGC_OK;
}

/* Reads roi (float32 or float16, 2 * n_axes values: starts then ends) into
 * g's per-axis roi; only tf_crop_and_resize needs it. */
static tgc_status read_roi(tgc_kernel_ctx *c, tgc_resize_geometry *g, const int *axes, int n_axes) {
    for (int d = 0; d < g->rank; d++) {
        g->roi_start[d] = 0.0;
        g->roi_end[d] = 1.0;
    }
    if (g->coord != TGC_RESIZE_TF_CROP_AND_RESIZE) return TGC_OK;
    int64_t n;
    tgc_status st = count_of(c, 1, "roi", &n);
    if (st != TGC_OK) return st;
    const tgc_value *v = &c->inputs[1];
    if (n != 2 * n_axes || (v->dtype != TGC_FLOAT32 && v->dtype != TGC_FLOAT16))
        return tgc_kernel_fail(c, "Resize: tf_crop_and_resize needs roi (input 1), float with %d values (starts, "
                               "then ends, of the resized axes)", 2 * n_axes);
    const void *p = tgc_kernel_in_ptr(c, 1);
    for (int i = 0; i < 2 * n_axes; i++) {
        double r = v->dtype == TGC_FLOAT32 ? ((const float *)p)[i] : tgc_half_to_float(((const uint16_t *)p)[i]);
        if (i < n_axes) g->roi_start[axes[i]] = r;
        else g->roi_end[axes[i - n_axes]] = r;
    }
    return TGC_OK;
}

tgc_status tgc_resize_geometry_read(tgc_kernel_ctx *c, tgc_resize_geometry *g) {
    memset(g, 0, sizeof *g);
    if (c->n_inputs < 1 || c->n_outputs != 1)
        return tgc_kernel_fail(c, "Resize: needs input X and one output");
    tgc_resize_policy policy;
    tgc_status st = read_attrs(c, g, &policy);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    g->rank = x->rank;
    memcpy(g->in, x->dims, sizeof g->in);
    int axes[TGC_MAX_RANK], n_axes = 0;
    if ((st = read_axes(c, x->rank, axes, &n_axes)) != TGC_OK) return st;
    int64_t n_scales, n_sizes;
    if ((st = count_of(c, 2, "scales", &n_scales)) != TGC_OK || (st = count_of(c, 3, "sizes", &n_sizes)) != TGC_OK)
        return st;
    if ((n_scales > 0) == (n_sizes > 0))
        return tgc_kernel_fail(c, "Resize: exactly one of scales (input 2) and sizes (input 3) must be given, not %s",
                               n_scales > 0 ? "both" : "neither");
    int given = n_scales > 0 ? 2 : 3;
    int64_t count = given == 2 ? n_scales : n_sizes;
    if (count != n_axes)
        return tgc_kernel_fail(c, "Resize: input %d (%s) has %lld values; %d axes are resized", given,
                               given == 2 ? "scales" : "sizes", (long long)count, n_axes);
    if (c->inputs[given].dtype != (given == 2 ? TGC_FLOAT32 : TGC_INT64))
        return tgc_kernel_fail(c, "Resize: input %d must be %s", given, given == 2 ? "float32" : "int64");
    float scales[TGC_MAX_RANK];
    int64_t sizes[TGC_MAX_RANK];
    if (given == 2) memcpy(scales, tgc_kernel_in_ptr(c, 2), (size_t)n_axes * sizeof *scales);
    else memcpy(sizes, tgc_kernel_in_ptr(c, 3), (size_t)n_axes * sizeof *sizes);
    char why[192];
    if (!tgc_resize_output_dims(x->rank, x->dims, axes, n_axes, given == 2 ? scales : NULL,
                                given == 3 ? sizes : NULL, policy, g->out, g->scale, why, sizeof why))
        return tgc_kernel_fail(c, "Resize: %s", why);
    for (int d = 0; d < g->rank; d++)
        if (g->in[d] == 0 && g->out[d] > 0)
            return tgc_kernel_fail(c, "Resize: axis %d is empty but would be resized to %lld", d, (long long)g->out[d]);
    return read_roi(c, g, axes, n_axes);
}

bool tgc_resize_axis_identity(const tgc_resize_geometry *g, int a) {
    return g->in[a] == g->out[a] && g->scale[a] == 1.0 &&
           (g->coord != TGC_RESIZE_TF_CROP_AND_RESIZE || (g->roi_start[a] == 0.0 && g->roi_end[a] == 1.0));
}

/* ---- Sampling tables ----------------------------------------------------------- */

/* Input coordinate of output index y on axis a (_compute_x_ori); *outside
 * when tf_crop_and_resize lands past the input. */
static double source_coord(const tgc_resize_geometry *g, int a, int64_t y, bool *outside) {
    double in = (double)g->in[a], s = g->scale[a], width = s * in, yy = (double)y;
    double r0 = g->roi_start[a], r1 = g->roi_end[a], x;
    *outside = false;
    switch (g->coord) {
    case TGC_RESIZE_ALIGN_CORNERS: return width == 1 ? 0.0 : yy * (in - 1) / (width - 1);
    case TGC_RESIZE_ASYMMETRIC: return yy / s;
    case TGC_RESIZE_TF_CROP_AND_RESIZE:
        x = width == 1 ? (r1 - r0) * (in - 1) / 2 : yy * (r1 - r0) * (in - 1) / (width - 1);
        x += r0 * (in - 1);
        *outside = x < 0 || x > in - 1;
        return x;
    case TGC_RESIZE_PYTORCH_HALF_PIXEL: return width == 1 ? -0.5 : (yy + 0.5) / s - 0.5;
    case TGC_RESIZE_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)g->out[a] / width, offset = in / 2 * (1 - adjustment);
        return offset + (yy + 0.5) / s - 0.5;
    }
    case TGC_RESIZE_TF_HALF_PIXEL_FOR_NN: return (yy + 0.5) / s;
    case TGC_RESIZE_HALF_PIXEL: break;
    }
    return (yy + 0.5) / s - 0.5;
}

/* Keys' cubic convolution weight at distance |x| (cubic_coeff_a = A). */
static double cubic_weight(double x, double A) {
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
}

/* The number of weights per output index on axis a. */
static double taps_per_index(const tgc_resize_geometry *g, int a) {
    if (g->mode == TGC_RESIZE_NEAREST) return 2;
    double support = g->mode == TGC_RESIZE_LINEAR ? 1 : 2;
    if (!g->antialias) return 2 * support;
    double s = g->scale[a] < 1 ? g->scale[a] : 1;
    return 2 - 2 * (floor(-support / s) + 1); /* i_start .. 2 - i_start */
}

/* The n weights for fraction `ratio` (in (0, 1]) on axis a. */
static void weights(const tgc_resize_geometry *g, int a, double ratio, int n, double *w) {
    if (g->mode == TGC_RESIZE_NEAREST) {
        bool ceil_side = ratio == 1.0;
        if (!ceil_side) switch (g->nearest) {
            case TGC_RESIZE_ROUND_PREFER_FLOOR: ceil_side = ratio > 0.5; break;
            case TGC_RESIZE_ROUND_PREFER_CEIL: ceil_side = ratio >= 0.5; break;
            case TGC_RESIZE_FLOOR: ceil_side = false; break;
            case TGC_RESIZE_CEIL: ceil_side = true; break;
            }
        w[0] = ceil_side ? 0.0 : 1.0;
        w[1] = ceil_side ? 1.0 : 0.0;
        return;
    }
    if (!g->antialias) {
        if (g->mode == TGC_RESIZE_LINEAR) {
            w[0] = 1 - ratio;
            w[1] = ratio;
        } else {
            for (int k = 0; k < 4; k++) w[k] = cubic_weight(ratio + 1 - k, g->cubic_a);
        }
        return;
    }
    double s = g->scale[a] < 1 ? g->scale[a] : 1, sum = 0;
    int start = 1 - n / 2; /* the first offset from floor(x): i_start */
    for (int k = 0; k < n; k++) {
        double arg = ((double)(start + k) - ratio) * s;
        w[k] = g->mode == TGC_RESIZE_LINEAR ? fmax(0.0, 1 - fabs(arg)) : cubic_weight(arg, g->cubic_a);
        sum += w[k];
    }
    for (int k = 0; k < n; k++) w[k] /= sum;
}

tgc_status tgc_resize_taps_make(tgc_kernel_ctx *c, const tgc_resize_geometry *g, int a, tgc_resize_taps *t) {
    memset(t, 0, sizeof *t);
    double nd = taps_per_index(g, a);
    int64_t n_out = g->out[a], entries;
    if (!(nd <= 1 << 24) || !tgc_checked_mul_i64(n_out, (int64_t)nd, &entries))
        return tgc_kernel_fail(c, "Resize: axis %d would read %g input positions per output", a, nd);
    int n = (int)nd;
    t->n_out = n_out;
    t->n = n;
    size_t ne = (size_t)entries;
    t->index = tgc_calloc(ne ? ne : 1, sizeof *t->index);
    t->weight = tgc_calloc(ne ? ne : 1, sizeof *t->weight);
    t->outside = tgc_calloc(n_out ? (size_t)n_out : 1, sizeof *t->outside);
    if (t->index == NULL || t->weight == NULL || t->outside == NULL) {
        tgc_resize_taps_free(t);
        tgc_kernel_fail(c, "Resize: no host memory for the sampling table of axis %d", a);
        return TGC_ERR_NOMEM;
    }
    int64_t size = g->in[a];
    for (int64_t j = 0; j < n_out; j++) {
        double x = source_coord(g, a, j, &t->outside[j]);
        double fl = floor(x);
        bool whole = x == fl;
        double ratio = whole ? 1.0 : x - fl;
        int64_t *idx = t->index + j * n;
        double *w = t->weight + j * n;
        weights(g, a, ratio, n, w);
        /* n is even: the window starts n/2 - 1 before floor(x), or n/2 at a whole x. */
        double first = fl - n / 2 + (whole ? 0 : 1);
        if (!(fabs(first) < 4e18)) first = first < 0 ? -4e18 : 4e18; /* NaN or huge x: clamps to an edge */
        double sum = 0;
        for (int k = 0; k < n; k++) {
            int64_t p = (int64_t)first + k;
            if (g->exclude_outside && (p < 0 || p >= size)) w[k] = 0;
            sum += w[k];
            idx[k] = p < 0 ? 0 : p >= size ? size - 1 : p;
        }
        if (g->exclude_outside && sum != 0)
            for (int k = 0; k < n; k++) w[k] /= sum;
    }
    return TGC_OK;
}

void tgc_resize_taps_free(tgc_resize_taps *t) {
    tgc_free(t->index);
    tgc_free(t->weight);
    tgc_free(t->outside);
    memset(t, 0, sizeof *t);
}

/* ---- Bilinear as ONNX Runtime computes it --------------------------------------- */

/* The input coordinate of output index y in float32, as ONNX Runtime's
 * get_original_coordinate functions compute it (upsamplebase.h); false for
 * the modes left to the reference's tables. */
static bool bilinear_coord(tgc_resize_coord mode, float y, float scale, float len_out, float len_in, float *x) {
    switch (mode) {
    case TGC_RESIZE_HALF_PIXEL: *x = ((y + 0.5f) / scale) - 0.5f; return true;
    case TGC_RESIZE_PYTORCH_HALF_PIXEL: *x = len_out > 1 ? (y + 0.5f) / scale - 0.5f : 0.0f; return true;
    case TGC_RESIZE_ALIGN_CORNERS: *x = len_out == 1 ? 0.0f : y * (len_in - 1) / (len_out - 1); return true;
    case TGC_RESIZE_ASYMMETRIC: *x = y / scale; return true;
    default: return false;
    }
}

bool tgc_resize_bilinear_applies(const tgc_resize_geometry *g) {
    if (g->rank < 2 || g->mode != TGC_RESIZE_LINEAR || g->antialias || g->exclude_outside) return false;
    float probe;
    if (!bilinear_coord(g->coord, 0.0f, 1.0f, 1.0f, 1.0f, &probe)) return false;
    for (int a = 0; a < g->rank - 2; a++)
        if (!tgc_resize_axis_identity(g, a)) return false;
    for (int a = g->rank - 2; a < g->rank; a++)
        if (g->in[a] == 0 || (double)g->out[a] != g->scale[a] * (double)g->in[a]) return false;
    return true;
}

bool tgc_resize_bilinear_len(const tgc_resize_geometry *g, int64_t *n) {
    int64_t both;
    size_t bytes;
    return tgc_checked_add_i64(g->out[g->rank - 2], g->out[g->rank - 1], &both) &&
           tgc_checked_mul_i64(both, 2, n) && tgc_checked_nbytes(*n, sizeof(int64_t), &bytes);
}

void tgc_resize_bilinear_tables(const tgc_resize_geometry *g, int64_t *idx, float *wt, tgc_resize_bilinear *h,
                                tgc_resize_bilinear *w) {
    int64_t oh = g->out[g->rank - 2], ow = g->out[g->rank - 1];
    *h = (tgc_resize_bilinear){idx, idx + oh, wt, wt + oh};
    *w = (tgc_resize_bilinear){idx + 2 * oh, idx + 2 * oh + ow, wt + 2 * oh, wt + 2 * oh + ow};
    tgc_resize_bilinear_axis(g, g->rank - 2, h);
    tgc_resize_bilinear_axis(g, g->rank - 1, w);
}

void tgc_resize_bilinear_axis(const tgc_resize_geometry *g, int a, tgc_resize_bilinear *t) {
    int64_t in = g->in[a], out = g->out[a];
    /* ORT's float scale: out / in from sizes, the scales input's value otherwise */
    float scale = (double)out / (double)in == g->scale[a] ? (float)out / (float)in : (float)g->scale[a];
    for (int64_t j = 0; j < out; j++) {
        float x = (float)j;
        if (scale != 1.0f) bilinear_coord(g->coord, (float)j, scale, (float)out, (float)in, &x);
        x = fmaxf(0.0f, fminf(x, (float)(in - 1)));
        int64_t i1 = (int64_t)x < in - 1 ? (int64_t)x : in - 1, i2 = i1 + 1 < in - 1 ? i1 + 1 : in - 1;
        float d1 = fabsf(x - (float)i1), d2 = fabsf(x - (float)i2);
        if (i1 == i2) d1 = d2 = 0.5f;
        /* i1's sample is weighted by the distance to i2, and i2's by the distance to i1 */
        t->i1[j] = i1, t->i2[j] = i2, t->w1[j] = d2, t->w2[j] = d1;
    }
}
