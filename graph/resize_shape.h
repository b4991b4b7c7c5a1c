/* Resize's output shape (ONNX opset 10-19), shared by the op's inference
 * (graph/ops_resize.c) and its kernels (devices/resize_geometry.c), so a
 * compile-time shape and a run-time one never disagree.
 *
 * Example usage:
 *     int64_t out[TGC_MAX_RANK];
 *     double scale[TGC_MAX_RANK];
 *     char why[160];
 *     if (!tgc_resize_output_dims(rank, in, axes, n_axes, scales, NULL, TGC_RESIZE_STRETCH,
 *                                 out, scale, why, sizeof why))
 *         ... report why ...
 */
#ifndef TGC_GRAPH_RESIZE_SHAPE_H
#define TGC_GRAPH_RESIZE_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* keep_aspect_ratio_policy (opset 18), for sizes only. */
typedef enum tgc_resize_policy {
    TGC_RESIZE_STRETCH,     /* each axis to its size */
    TGC_RESIZE_NOT_LARGER,  /* one scale, the smallest size / input ratio */
    TGC_RESIZE_NOT_SMALLER, /* one scale, the largest */
} tgc_resize_policy;

/* Parses a keep_aspect_ratio_policy name; false when unknown. */
bool tgc_resize_policy_parse(const char *name, tgc_resize_policy *out);

/* The `mode` attribute. */
typedef enum tgc_resize_mode { TGC_RESIZE_NEAREST, TGC_RESIZE_LINEAR, TGC_RESIZE_CUBIC } tgc_resize_mode;

/* coordinate_transformation_mode: how output index y maps to input
 * coordinate x (resize_geometry.c has the formulas). tf_half_pixel_for_nn
 * is Resize-11's, kept for models of that opset. */
typedef enum tgc_resize_coord {
    TGC_RESIZE_HALF_PIXEL,
    TGC_RESIZE_HALF_PIXEL_SYMMETRIC,
    TGC_RESIZE_PYTORCH_HALF_PIXEL,
    TGC_RESIZE_ALIGN_CORNERS,
    TGC_RESIZE_ASYMMETRIC,
    TGC_RESIZE_TF_CROP_AND_RESIZE,
    TGC_RESIZE_TF_HALF_PIXEL_FOR_NN,
} tgc_resize_coord;

/* nearest_mode: which neighbour a coordinate between two takes. */
typedef enum tgc_resize_nearest {
    TGC_RESIZE_ROUND_PREFER_FLOOR,
    TGC_RESIZE_ROUND_PREFER_CEIL,
    TGC_RESIZE_FLOOR,
    TGC_RESIZE_CEIL,
} tgc_resize_nearest;

/* Parse the attribute names ("linear", "align_corners", "floor", ...);
 * false when unknown. */
bool tgc_resize_mode_parse(const char *name, tgc_resize_mode *out);
bool tgc_resize_coord_parse(const char *name, tgc_resize_coord *out);
bool tgc_resize_nearest_parse(const char *name, tgc_resize_nearest *out);

/* The output dims and per-axis scales of Resize over an input of `rank`
 * concrete dims in[0..rank). axes[0..n_axes) are the resized axes,
 * non-negative and distinct (all axes in order when the node has none).
 * Exactly one of scales (float32, one per axis, each > 0) and sizes (one per
 * axis, each >= 0) is non-NULL. Axes not listed keep their dim and scale 1.
 *   scales: out = floor(in * scale) (the product in double, as ONNX's
 *           reference), scale as given;
 *   sizes, stretch: out = size, scale = size / in;
 *   sizes, not_larger / not_smaller: s = min / max of size / in over the
 *           axes, out = floor(s * in + 0.5), scale = s on every listed axis.
 * An axis of input size 0 gets scale 1 from sizes (nothing to sample).
 * Returns true, or false with a message in why (a scale that is not > 0 or
 * not finite, a negative size, a dim past int64). */
bool tgc_resize_output_dims(int rank, const int64_t *in, const int *axes, int n_axes, const float *scales,
                            const int64_t *sizes, tgc_resize_policy policy, int64_t *out, double *scale, char *why,
                            size_t why_size);

#endif
