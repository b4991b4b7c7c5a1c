/* The geometry of ConvTranspose-11 and MaxUnpool-11, shared by the cpu and
 * gpu kernels: the attributes and shapes of a node checked against its
 * output, with auto_pad and output_shape resolved to one begin pad per
 * axis. Input position i of axis a, tap t, lands at output position
 *     i * strides[a] - pad_begin[a] + t * dilations[a],
 * and counts only inside [0, out[a]). The output sizes follow ONNX's
 * reference implementation (onnx/reference/ops/op_conv_transpose.py):
 *   - output_shape given (n or n + 2 values): it is the output; with
 *     SAME_UPPER/SAME_LOWER the total padding s * (D - 1) + output_padding
 *     + ek - O is split as SAME_UPPER: floor(total / 2) at the begin,
 *     otherwise the rest at the begin; with NOTSET, pads (or 0) begin;
 *   - SAME_*: O = D * s, the total split as above;
 *   - else O = s * (D - 1) + output_padding + ek - pad_begin - pad_end.
 * Device-independent: it reads only attributes and dims.
 *
 * Example usage (inside a kernel):
 *     tgc_convt_geometry g;
 *     tgc_status st = tgc_convt_read(c, &g);
 *     if (st != TGC_OK) return st;   // c->error already says why
 */
#ifndef TGC_DEVICES_CONVT_GEOMETRY_H
#define TGC_DEVICES_CONVT_GEOMETRY_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_convt_geometry {
    int n;                       /* spatial axes */
    int64_t in[TGC_MAX_RANK];    /* D1..Dn */
    int64_t out[TGC_MAX_RANK];   /* O1..On */
    int64_t kernel[TGC_MAX_RANK];
    int64_t strides[TGC_MAX_RANK];
    int64_t dilations[TGC_MAX_RANK];
    int64_t pad_begin[TGC_MAX_RANK];
    bool has_bias;
    int64_t group, batch, channels, m_count; /* group, N, C, M */
    int64_t cg, mg;                          /* C / group, M / group */
    int64_t in_size, out_size, kk_count;     /* products over the spatial axes */
} tgc_convt_geometry;

/* Checks a ConvTranspose node: X [N, C, D1..Dn], W [C, M / group, k1..kn],
 * optional B [M], Y [N, M, O1..On], all float32, attributes in range
 * (values < 2^31), Y's sizes the ones the rules above give; fills *g.
 * Returns TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_convt_read(tgc_kernel_ctx *c, tgc_convt_geometry *g);

/* Checks a MaxUnpool node: X [N, C, D1..Dn] float32, I int64 of X's shape,
 * kernel_shape/strides/pads, optional output_shape (host int64 [n + 2]),
 * Y float32 of rank n + 2. The indices address the default output
 * unpooled[0..n+2) = [N, C, (D - 1) * s + k - pad_begin - pad_end ...],
 * flattened over the whole tensor (MaxPool's Indices); that tensor lies in
 * the leading corner of Y (onnx/reference/ops/op_max_unpool.py), so Y's
 * dims must be at least unpooled's (equal without output_shape). Returns
 * TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_convt_read_unpool(tgc_kernel_ctx *c, int64_t *unpooled);

#endif
