/* MatMul's and Gemm's argument checks and geometry, shared by the cpu and
 * gpu kernels (devices/cpu/kernels_gemm.c, devices/opencl/kernels_gemm_cl.c)
 * so that both accept the same nodes and fail with the same words.
 *
 * MatMul: from the dims of A, B and Y, the matrix sizes M, N, K, the number
 * of output matrices, and for each output matrix the element offsets of the
 * A and B matrices it reads (numpy.matmul broadcasting: stride 0 along a
 * batch axis an operand broadcasts) and of the Y matrix it writes.
 *
 * Gemm: the attributes, M, N, K from 2-D A and B and transA/transB, and
 * C's strides over [M, N] (0 along an axis it broadcasts).
 *
 * Device-independent: it reads only attributes and dims; the kernels do
 * the GEMMs.
 *
 * Example usage:
 *     tgc_matmul_geometry g;
 *     tgc_status st = tgc_matmul_geometry_read(c, &g);
 *     if (st != TGC_OK) return st;
 *     for (int64_t t = 0; t < g.batch; t++) {
 *         int64_t oa, ob, oy;
 *         tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
 *         ... one [M, K] x [K, N] GEMM at A + oa, B + ob into Y + oy ...
 *     }
 */
#ifndef TGC_DEVICES_MATMUL_GEOMETRY_H
#define TGC_DEVICES_MATMUL_GEOMETRY_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_matmul_geometry {
    int64_t m, n, k;                 /* each output matrix is [M, K] x [K, N] */
    int64_t batch;                   /* output matrices: the product of the batch dims */
    int64_t b_count;                 /* B's own matrices (1: B has no batch, so A's batch is Y's) */
    int nb;                          /* output batch axes */
    int64_t dims[TGC_MAX_RANK];      /* Y's batch dims, [0, nb) */
    int64_t sa[TGC_MAX_RANK];        /* A's element stride along each output batch axis (0: broadcast) */
    int64_t sb[TGC_MAX_RANK];        /* B's likewise */
} tgc_matmul_geometry;

/* Checks a MatMul-13 node's arguments (inputs A, B and output Y, all
 * float32, or all float16 for a kernel that takes it; A and B of rank >=
 * 1) and reads its geometry: a 1-D A is [1, K], a 1-D B is [K, 1], the
 * added axis absent from Y; the batch axes
 * broadcast. Fills *g and returns TGC_OK, or fails the kernel through
 * tgc_kernel_fail (counts, dtypes, ranks, K mismatch, Y's shape, batch axes
 * that do not broadcast) and returns its status. Only dims are read. */
tgc_status tgc_matmul_geometry_read(tgc_kernel_ctx *c, tgc_matmul_geometry *g);

/* tgc_matmul_geometry_read with A, B and Y all of dtype dt (float64: the
 * cpu's double path) in place of float32. */
tgc_status tgc_matmul_geometry_read_dtype(tgc_kernel_ctx *c, tgc_dtype dt, tgc_matmul_geometry *g);

/* The same with B of dtype b_dt (a half-precision weight: the cpu's
 * _MatMulHalfWeight, float32 A and Y). */
tgc_status tgc_matmul_geometry_read_dtypes(tgc_kernel_ctx *c, tgc_dtype dt, tgc_dtype b_dt, tgc_matmul_geometry *g);

/* The element offsets of output matrix t (0 <= t < g->batch, row-major over
 * the batch dims) in A (*oa), B (*ob) and Y (*oy). */
void tgc_matmul_geometry_offsets(const tgc_matmul_geometry *g, int64_t t, int64_t *oa, int64_t *ob, int64_t *oy);

typedef struct tgc_gemm_geometry {
    bool has_c;         /* input C was given */
    bool ta, tb;        /* transA, transB */
    float alpha, beta;  /* the attributes (default 1) */
    int64_t m, n, k;    /* Y [M, N] = A' [M, K] x B' [K, N] */
    int64_t cm, cn;     /* C's element strides along M and N (0: broadcast; both 0 without C) */
} tgc_gemm_geometry;

/* Checks a Gemm-13 node's arguments and reads its attributes and geometry:
 * inputs A, B (2-D) and optional C, output Y, all float32; A' = transA ?
 * A^T : A and B' likewise must agree on K, Y must be [M, N], and C must
 * broadcast unidirectionally to [M, N] (rank <= 2). Fills *g and returns
 * TGC_OK, or fails the kernel through tgc_kernel_fail and returns its
 * status. */
tgc_status tgc_gemm_geometry_read(tgc_kernel_ctx *c, tgc_gemm_geometry *g);

/* tgc_gemm_geometry_read with A, B, C and Y all of dtype dt in place of
 * float32. */
tgc_status tgc_gemm_geometry_read_dtype(tgc_kernel_ctx *c, tgc_dtype dt, tgc_gemm_geometry *g);

#endif
