/* The sliding-window geometry of Conv and pooling (ONNX's
 * convPoolShapeInference, pads and auto_pad included), shared by the cpu
 * and gpu kernels: the strides, dilations and pads of a window over the
 * spatial axes of [N, C, D1..Dn], checked against the output's sizes; the
 * taps of one window that land inside a range; and the argument checks of
 * a Conv node and of a MaxPool/AveragePool node, so that both devices
 * accept the same nodes and fail with the same words. Device-independent:
 * it reads only attributes and dims.
 *
 * Example usage (inside a kernel):
 *     tgc_window w;
 *     tgc_status st = tgc_window_read(c, x, y, &w_dims[2], false, &w);
 *     if (st != TGC_OK) return st;   // c->error already says why
 *     // w.pads[i] is where axis i's windows begin before the input (-pads)
 */
#ifndef TGC_DEVICES_WINDOW_H
#define TGC_DEVICES_WINDOW_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>
#include <stdint.h>

/* The geometry of a sliding window over the spatial axes of [N, C, D1..Dn]:
 * output index o of axis i reads input indices
 *     o * strides[i] - pads[i] + t * dilations[i],  t in [0, kernel[i]),
 * those outside [0, in[i]) being padding. */
typedef struct tgc_window {
    int n;                     /* spatial axes */
    int64_t in[TGC_MAX_RANK];  /* input sizes D1..Dn */
    int64_t out[TGC_MAX_RANK]; /* output sizes O1..On */
    int64_t kernel[TGC_MAX_RANK];
    int64_t strides[TGC_MAX_RANK];
    int64_t dilations[TGC_MAX_RANK];
    int64_t pads[2 * TGC_MAX_RANK]; /* begins, then ends (after auto_pad) */
} tgc_window;

/* Reads strides, dilations, pads and auto_pad from c->node for input x
 * [N, C, D1..Dn] and output y [N, M, O1..On] with kernel sizes kernel[0..n),
 * resolving auto_pad to explicit pads as ONNX does (SAME_UPPER puts the odd
 * pad at the end, SAME_LOWER at the beginning), and checks that y's spatial
 * sizes are the ones those give (floor, or with ceil_mode either rounding).
 * Fills *w and returns TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_window_read(tgc_kernel_ctx *c, const tgc_value *x, const tgc_value *y, const int64_t *kernel,
                           bool ceil_mode, tgc_window *w);

/* The taps t in [*lo, *hi) of a window starting at input index `start`
 * (stride and padding applied) with `k` taps `d` apart that land in
 * [begin, end). Empty when *lo == *hi. */
void tgc_window_taps(int64_t start, int64_t k, int64_t d, int64_t begin, int64_t end, int64_t *lo, int64_t *hi);

/* AveragePool's count for output o along axis a of w (ONNX's reference
 * rule): the taps of its window inside the input [0, in), or with
 * include_pad inside the padded input [-pad_begin, in + pad_end) (a
 * ceil_mode window's taps past pad_end count for nothing either way). */
int64_t tgc_window_count(const tgc_window *w, int a, int64_t o, bool include_pad);

/* Checks a MaxPool/AveragePool node's X [N, C, D1..Dn] and Y [N, C,
 * O1..On] (float32, or uint8 for MaxPool; n >= 1), its kernel_shape and ceil_mode, and reads its
 * window into *w; *planes is N * C, *in_size and *out_size the spatial
 * element counts, *kk_count (when not NULL) the taps in a window. Returns
 * TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_window_read_pool(tgc_kernel_ctx *c, tgc_window *w, int64_t *planes, int64_t *in_size,
                                int64_t *out_size, int64_t *kk_count);

/* Checks a GlobalAveragePool node's X [N, C, D1..] (rank >= 2) and Y
 * [N, C, 1..] (float32); *planes is N * C, *size the elements of a plane.
 * Returns TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_window_read_global_pool(tgc_kernel_ctx *c, int64_t *planes, int64_t *size);

/* A Conv node's arguments: X [N, C, D1..Dn], W [M, C / group, k1..kn],
 * optional B [M], Y [N, M, O1..On]. */
typedef struct tgc_conv_geometry {
    tgc_window w;
    bool has_bias;      /* input B was given */
    bool pointwise;     /* every kernel size 1, strides 1, no pads */
    int64_t group;      /* the attribute, >= 1 */
    int64_t batch;      /* N */
    int64_t channels;   /* C */
    int64_t m_count;    /* M, output channels */
    int64_t cg;         /* C / group, W's dim 1 */
    int64_t in_size;    /* D1 * .. * Dn */
    int64_t out_size;   /* O1 * .. * On */
    int64_t kk_count;   /* k1 * .. * kn, the taps in a window */
    int64_t workspace_limit; /* the run's (tgc_kernel_ctx.workspace_limit), bytes; 0: none */
} tgc_conv_geometry;

/* Checks a Conv-11 node's inputs, output and attributes (float32; group
 * divides C and M; kernel_shape, when given, matches W; B is [M]) and reads
 * its geometry into *g. Returns TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_window_read_conv(tgc_kernel_ctx *c, tgc_conv_geometry *g);

#endif
