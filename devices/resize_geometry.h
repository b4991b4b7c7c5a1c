/* Resize's arguments and sampling tables, shared by the cpu and gpu kernels
 * (devices/cpu/kernels_resize.c, devices/opencl/kernels_resize.c) so both
 * accept the same nodes and sample the same input positions.
 *
 * Resize is separable: output index y on one axis reads n input positions
 * of that axis with n weights, whatever happens on the other axes. This file
 * turns the attributes into those per-axis tables, following ONNX's
 * reference implementation (onnx/reference/ops/op_resize.py:
 * _compute_x_ori, the *_coeffs functions and _interpolate_1d_along_axis):
 *   x      = the input coordinate of y (coordinate_transformation_mode),
 *   ratio  = x - floor(x), or 1 when x is a whole number,
 *   weights= the mode's n coefficients of ratio (nearest 2, linear 2, cubic
 *            4; antialias widens linear and cubic by 1 / scale when
 *            downsampling and normalises them),
 *   taps   = n consecutive positions from floor(x) - n/2 + (ratio < 1),
 *            clamped into [0, size) (edge padding); with exclude_outside the
 *            weights of positions outside are zeroed and the rest
 *            renormalised,
 *   tf_crop_and_resize: an x outside [0, size - 1] gives extrapolation_value.
 *
 * Example usage:
 *     tgc_resize_geometry g;
 *     tgc_status st = tgc_resize_geometry_read(c, &g);   // then allocate Y of g.out
 *     tgc_resize_taps t;
 *     if (st == TGC_OK && !tgc_resize_axis_identity(&g, a)) st = tgc_resize_taps_make(c, &g, a, &t);
 *     ... Y[.., j, ..] = t.outside[j] ? g.extrapolation : sum_k t.weight[j*t.n+k] * X[.., t.index[j*t.n+k], ..]
 *     tgc_resize_taps_free(&t);
 */
#ifndef TGC_DEVICES_RESIZE_GEOMETRY_H
#define TGC_DEVICES_RESIZE_GEOMETRY_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "graph/resize_shape.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_resize_geometry {
    tgc_resize_mode mode;
    tgc_resize_coord coord;
    tgc_resize_nearest nearest;
    double cubic_a;       /* cubic_coeff_a, default -0.75 */
    double extrapolation; /* extrapolation_value, default 0 */
    bool exclude_outside, antialias;
    int rank;
    int64_t in[TGC_MAX_RANK], out[TGC_MAX_RANK];
    double scale[TGC_MAX_RANK];                         /* 1 on axes not resized */
    double roi_start[TGC_MAX_RANK], roi_end[TGC_MAX_RANK]; /* 0 and 1 unless tf_crop_and_resize */
} tgc_resize_geometry;

/* Reads a Resize node: X (input 0, any device: only its dims are read), the
 * host-memory inputs roi (float32 or float16), scales (float32) and sizes
 * (int64), and every attribute, checked as inference checks them; fills
 * *g, Y's dims in g->out (graph/resize_shape.c's rules). Fails through
 * tgc_kernel_fail: a bad attribute, both or neither of scales and sizes, a
 * count that does not match the axes, tf_crop_and_resize without roi, an
 * empty axis resized to a non-empty one. */
tgc_status tgc_resize_geometry_read(tgc_kernel_ctx *c, tgc_resize_geometry *g);

/* True when axis a passes through unchanged (same size, scale 1, a whole
 * roi): ONNX's reference skips it too. */
bool tgc_resize_axis_identity(const tgc_resize_geometry *g, int a);

/* One axis's sampling table: output index j reads input positions
 * index[j*n .. j*n+n) (in [0, size)) with weight[j*n .. j*n+n), unless
 * outside[j] (tf_crop_and_resize past the input: extrapolation_value). */
typedef struct tgc_resize_taps {
    int64_t n_out;
    int n;
    int64_t *index;
    double *weight;
    bool *outside;
} tgc_resize_taps;

/* Builds axis a's table (arrays tgc_malloc'd, owned by *t; release with
 * tgc_resize_taps_free). TGC_ERR_NOMEM or a failure through tgc_kernel_fail
 * (a table past the memory limit). */
tgc_status tgc_resize_taps_make(tgc_kernel_ctx *c, const tgc_resize_geometry *g, int a, tgc_resize_taps *t);

/* Frees t's arrays (a zeroed or freed table is fine). */
void tgc_resize_taps_free(tgc_resize_taps *t);

/* ---- Bilinear as ONNX Runtime computes it --------------------------------------- */

/* Whether g is a bilinear resize of the last two axes that ONNX Runtime's
 * UpsampleBilinear serves and tgc reproduces (tgc_resize_bilinear_axis):
 * mode linear, no antialias or exclude_outside, coordinate mode
 * half_pixel, pytorch_half_pixel, align_corners or asymmetric, every other
 * axis kept, neither resized axis empty, and each resized axis's scaled
 * length its output length (scales 0.6 of 4 is 2.4, output 2: there ORT and
 * ONNX's reference disagree, and the reference's tables serve). */
bool tgc_resize_bilinear_applies(const tgc_resize_geometry *g);

/* One axis's bilinear table in ONNX Runtime's float32 arithmetic
 * (upsample.cc, SetupUpsampleBilinear): output index j reads input
 * positions i1[j] and i2[j] with weights w1[j] and w2[j] (each array
 * g->out[a] long, the caller's). Its value is then the products summed as
 * ORT does: dx_w1 * dy_w1 * X[y1][x1] + dx_w2 * dy_w1 * X[y1][x2] +
 * dx_w1 * dy_w2 * X[y2][x1] + dx_w2 * dy_w2 * X[y2][x2], one rounding each,
 * no fused multiply-add. For an axis where tgc_resize_bilinear_applies. */
typedef struct tgc_resize_bilinear {
    int64_t *i1, *i2;
    float *w1, *w2;
} tgc_resize_bilinear;
void tgc_resize_bilinear_axis(const tgc_resize_geometry *g, int a, tgc_resize_bilinear *t);

/* Both resized axes' tables in one layout, which every device's kernel
 * reads: idx = [height i1 | height i2 | width i1 | width i2] and wt the
 * weights w1, w2 in the same order (out_h, out_h, out_w, out_w entries).
 * *n: the entries of each (2 (out_h + out_w)); false when that or its
 * bytes overflow. */
bool tgc_resize_bilinear_len(const tgc_resize_geometry *g, int64_t *n);

/* Fills idx and wt (tgc_resize_bilinear_len entries each, the caller's)
 * for g, and the views of each axis into them in *h and *w. */
void tgc_resize_bilinear_tables(const tgc_resize_geometry *g, int64_t *idx, float *wt, tgc_resize_bilinear *h,
                                tgc_resize_bilinear *w);

#endif
