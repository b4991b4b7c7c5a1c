/* Pointwise layers (1x1, no pads, one group; stride 1, or strided: a
 * projection shortcut) channels last on tgc's own register tiles
 * (conv_pointwise_lanes.h, through the running ISA's
 * tgc_conv_isa.pointwise, which only AVX-512 has; callers check it is
 * there): Y [rows, m] = act(X [rows, k] x W^T +
 * bias + Z), rows = N H W, X, Y and Z float32 NHWC, W [m, k] Conv's
 * weights as they lie, packed once a session into blocks of a vector's
 * lanes of output channels (the node's kernel cache, in place of W).
 *
 * Each output is bias, then its k products in order, then Z, then the
 * activation: the same bits whatever the pieces, and the pieces come from
 * the sizes alone, so every thread count gives the same bits. Used by
 * _ConvNHWC (kernels_conv_nhwc.c). */
#ifndef TGC_DEVICES_CPU_CONV_POINTWISE_H
#define TGC_DEVICES_CPU_CONV_POINTWISE_H

#include "devices/kernel.h"

#include <stdbool.h>
#include <stdint.h>

/* W packed: block b (output channels [b * lanes, (b + 1) * lanes)) at
 * w + b * k * lanes, [k][lanes], zeros past m. */
typedef struct tgc_pointwise_weights {
    int64_t m, k, lanes;
    _Alignas(64) float w[]; /* on a cache line (tgc_malloc's blocks are) */
} tgc_pointwise_weights;

/* Bytes of the packed block for W [m, k] at `lanes` floats a vector; -1
 * when that overflows. */
int64_t tgc_cpu_pointwise_bytes(int64_t m, int64_t k, int64_t lanes);

/* The packed block of c's node for W [m, k] (input 1, read on the first
 * run only; a session constant) at the running ISA's lanes, in the node's
 * kernel cache, standing in for W from then on; NULL where the node has
 * no cache, where W is not a constant or where another way's block holds
 * the cache; NULL with *no_memory set when memory for it ran out (the
 * kernel then fails, out of memory). Owned by the cache. */
const tgc_pointwise_weights *tgc_cpu_pointwise_cached(tgc_kernel_ctx *c, int64_t m, int64_t k, const float *w,
                                                     bool *no_memory);

/* Y [rows, m] = act(X [rows, k] x W^T + bias + Z) on c's pool, with W
 * packed (tgc_cpu_pointwise_cached): X rows k floats apart, Y's and Z's m
 * apart; bias [m] or NULL; Z or NULL, and may be Y's buffer; act
 * c->fused_act (NULL: none). Pieces of rows, or of output channels where
 * W outweighs X (each piece then reads only its own weights), cut from the
 * sizes alone. */
void tgc_cpu_pointwise_run(tgc_kernel_ctx *c, const tgc_pointwise_weights *pw, const float *x, int64_t rows,
                           const float *bias, const float *z, float *y);

/* Where a strided 1x1 layer (no pads: a residual stage's projection
 * shortcut) reads: X [batch, in_h, in_w, k], Y [batch, out_h, out_w, m],
 * Y's position (n, oh, ow) from X's (n, oh stride_h, ow stride_w). */
typedef struct tgc_pointwise_sampling {
    int64_t batch, in_h, in_w, out_h, out_w, stride_h, stride_w;
} tgc_pointwise_sampling;

/* tgc_cpu_pointwise_run for a strided layer sampled as s says: the same
 * sums, X's rows read where they lie (no copy). */
void tgc_cpu_pointwise_run_strided(tgc_kernel_ctx *c, const tgc_pointwise_weights *pw, const float *x,
                                   const tgc_pointwise_sampling *s, const float *bias, const float *z, float *y);

#endif
