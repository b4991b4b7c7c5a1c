/* Resize's output dims (see resize_shape.h). The rules are ONNX's
 * Resize-19 text and its reference (onnx/reference/ops/op_resize.py,
 * _interpolate_nd): floor(in * scale) for scales; sizes as given, or with
 * keep_aspect_ratio_policy one scale and round-half-up sizes. */
#include "graph/resize_shape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The index of `name` in names[0..n), or -1. */
static int find_name(const char *name, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

bool tgc_resize_policy_parse(const char *name, tgc_resize_policy *out) {
    static const char *const names[] = {"stretch", "not_larger", "not_smaller"};
    int i = find_name(name, names, 3);
    if (i >= 0) *out = (tgc_resize_policy)i;
    return i >= 0;
}

bool tgc_resize_mode_parse(const char *name, tgc_resize_mode *out) {
    static const char *const names[] = {"nearest", "linear", "cubic"};
    int i = find_name(name, names, 3);
    if (i >= 0) *out = (tgc_resize_mode)i;
    return i >= 0;
}

bool tgc_resize_coord_parse(const char *name, tgc_resize_coord *out) {
    static const char *const names[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                        "align_corners", "asymmetric",           "tf_crop_and_resize",
                                        "tf_half_pixel_for_nn"};
    int i = find_name(name, names, 7);
    if (i >= 0) *out = (tgc_resize_coord)i;
    return i >= 0;
}

bool tgc_resize_nearest_parse(const char *name, tgc_resize_nearest *out) {
    static const char *const names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int i = find_name(name, names, 4);
    if (i >= 0) *out = (tgc_resize_nearest)i;
    return i >= 0;
}

/* 2^63 as a double: a product at or past it does not fit in int64. */
#define INT64_LIMIT 9223372036854775808.0

bool tgc_resize_output_dims(int rank, const int64_t *in, const int *axes, int n_axes, const float *scales,
                            const int64_t *sizes, tgc_resize_policy policy, int64_t *out, double *scale, char *why,
                            size_t why_size) {
    for (int d = 0; d < rank; d++) {
        out[d] = in[d];
        scale[d] = 1.0;
    }
    if (scales != NULL) {
        for (int i = 0; i < n_axes; i++) {
            int a = axes[i];
            double s = scales[i];
            if (!(s > 0) || !isfinite(s)) {
                snprintf(why, why_size, "scale %g for axis %d is not a finite number > 0", s, a);
                return false;
            }
            double prod = s * (double)in[a];
            if (prod >= INT64_LIMIT) {
                snprintf(why, why_size, "axis %d of size %lld scaled by %g passes 2^63 - 1", a, (long long)in[a], s);
                return false;
            }
            out[a] = (int64_t)floor(prod);
            scale[a] = s;
        }
        return true;
    }
    double common = policy == TGC_RESIZE_NOT_LARGER ? INFINITY : 0.0;
    for (int i = 0; i < n_axes; i++) {
        int a = axes[i];
        if (sizes[i] < 0) {
            snprintf(why, why_size, "size %lld for axis %d is negative", (long long)sizes[i], a);
            return false;
        }
        double s = in[a] > 0 ? (double)sizes[i] / (double)in[a] : 1.0;
        out[a] = sizes[i];
        scale[a] = s;
        if (policy == TGC_RESIZE_NOT_LARGER && s < common) common = s;
        if (policy == TGC_RESIZE_NOT_SMALLER && s > common) common = s;
    }
    if (policy == TGC_RESIZE_STRETCH || n_axes == 0) return true;
    for (int i = 0; i < n_axes; i++) {
        int a = axes[i];
        double prod = common * (double)in[a] + 0.5;
        if (prod >= INT64_LIMIT) {
            snprintf(why, why_size, "axis %d of size %lld scaled by %g passes 2^63 - 1", a, (long long)in[a], common);
            return false;
        }
        out[a] = (int64_t)prod;
        scale[a] = common;
    }
    return true;
}
