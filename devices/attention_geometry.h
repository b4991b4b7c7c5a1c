/* _Attention's argument checks and geometry (graph/ops_attention.c has the
 * op), shared by the cpu and gpu kernels (devices/cpu/kernels_attention.c,
 * devices/opencl/kernels_attention.c) so that both accept the same nodes
 * and fail with the same words. Reads only attributes and dims.
 *
 * Example usage:
 *     tgc_attention_geometry g;
 *     tgc_status st = tgc_attention_geometry_read(c, &g);
 *     if (st != TGC_OK) return st;
 *     for (int64_t t = 0; t < g.batch; t++) {
 *         int64_t oq, ok, ov, om;
 *         tgc_attention_geometry_offsets(&g, t, &oq, &ok, &ov, &om);
 *         ... softmax(scale Q K^T + mask) V of matrix t at those offsets,
 *             written at Y + t * Lq * Dv ...
 *     }
 */
#ifndef TGC_DEVICES_ATTENTION_GEOMETRY_H
#define TGC_DEVICES_ATTENTION_GEOMETRY_H

#include "devices/kernel.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_attention_geometry {
    bool kt;                          /* K is given as K^T [..., D, Lk] */
    bool has_mask;
    float scale;
    int64_t lq, lk, d, dv;
    int nb;                           /* the output's batch axes */
    int64_t batch;                    /* the product of its batch dims */
    int64_t bdims[TGC_MAX_RANK];      /* its batch dims, [0, nb) */
    /* element strides of Q, K, V and the mask along each output batch axis
     * (0: broadcast) */
    int64_t sq[TGC_MAX_RANK], sk[TGC_MAX_RANK], sv[TGC_MAX_RANK], sm[TGC_MAX_RANK];
    int64_t m_row, m_col;             /* the mask's strides along Lq and Lk (0: broadcast) */
} tgc_attention_geometry;

/* Checks an _Attention node's arguments (Q, K, V, optional mask, output Y,
 * all float32; Q, K, V of rank >= 2; D, Lk and Y's last two dims agreeing;
 * batch dims and the mask broadcasting to Y's and the scores') and reads
 * the geometry into *g. TGC_OK, or the kernel fails through
 * tgc_kernel_fail and its status is returned. */
tgc_status tgc_attention_geometry_read(tgc_kernel_ctx *c, tgc_attention_geometry *g);

/* The element offsets of batch matrix t (0 <= t < g->batch, row-major over
 * the batch dims) in Q, K, V and the mask. */
void tgc_attention_geometry_offsets(const tgc_attention_geometry *g, int64_t t, int64_t *oq, int64_t *ok,
                                    int64_t *ov, int64_t *om);

#endif
