/* A pointwise layer channels last (devices/cpu/conv_direct.h's
 * tgc_conv_isa.pointwise) for AVX-512: included after conv_rows.h by
 * devices/cpu/conv_isa_avx512.c. (On AVX2 the same loops with a tile of 6
 * rows by 2 vectors ran 2-14% behind oneDNN's jit_1x1 on this Zen 4, and
 * 4 by 3 no better: the narrower ISAs keep oneDNN's kernels.)
 *
 * Y [rows, m] = X [rows, k] x W^T is a GEMM whose rows are the map's
 * positions. A tile of PW_R rows by PW_V blocks of output channels (one
 * vector each) is held in registers over all of k: each step loads one
 * vector of every block's weights (W packed [blocks][k][lanes]: each block
 * one stream) and broadcasts one input of every row, PW_R * PW_V
 * multiply-adds for PW_V + PW_R loads. The register tile of ONNX Runtime's
 * MLAS SGEMM kernels on AVX-512 (6 rows by 4 vectors) and its NCHWc
 * pointwise convolution. The bias is the sum's start and Z, the
 * clamp and the store come while the tile is in registers. */
#ifndef TGC_DEVICES_CPU_CONV_POINTWISE_LANES_H
#define TGC_DEVICES_CPU_CONV_POINTWISE_LANES_H

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/simd.h"

#include <stdint.h>

#if TGC_VLANES != 16
#error "conv_pointwise_lanes.h is for AVX-512's 16 lanes"
#endif

/* Rows and blocks a tile: PW_R * PW_V accumulators beside PW_V weight
 * vectors and a broadcast, 29 of the 32 registers. */
#define PW_R 6
#define PW_V 4

/* Rows [r, r + nr) at blocks [b, b + nv): constant nr and nv once inlined. */
static inline __attribute__((always_inline)) void pw_tile(const tgc_conv_pw_job *j, int64_t r, int64_t b,
                                                          const int nr, const int nv) {
    const int64_t L = TGC_VLANES, k = j->k, ldx = j->ldx;
    const float *x = j->x + r * ldx, *w = j->w + b * k * L;
    int64_t c0 = b * L, left = j->m - c0 - (nv - 1) * L; /* lanes the last vector writes */
    tgc_vf acc[PW_R][PW_V];
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) {
        tgc_vf start = j->bias == NULL              ? tgc_vf_splat(0.0f)
                       : v < nv - 1 || left >= L ? tgc_vf_load(j->bias + c0 + v * L)
                                                   : cr_load_n(j->bias + c0 + v * L, left);
#pragma GCC unroll 6
        for (int q = 0; q < nr; q++) acc[q][v] = start;
    }
    for (int64_t t = 0; t < k; t++) {
        tgc_vf wv[PW_V];
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) wv[v] = tgc_vf_load(w + (v * k + t) * L);
#pragma GCC unroll 6
        for (int q = 0; q < nr; q++) {
            tgc_vf xs = tgc_vf_splat(x[q * ldx + t]);
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[q][v] = tgc_vmuladd(wv[v], xs, acc[q][v]);
        }
    }
    const tgc_vf lo = tgc_vf_splat(j->lo), hi = tgc_vf_splat(j->hi);
#pragma GCC unroll 6
    for (int q = 0; q < nr; q++) {
        float *y = j->y + (r + q) * j->ldy + c0;
        const float *z = j->z != NULL ? j->z + (r + q) * j->ldy + c0 : NULL;
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            bool whole = v < nv - 1 || left >= L;
            tgc_vf s = acc[q][v];
            if (z != NULL) s = s + (whole ? tgc_vf_load(z + v * L) : cr_load_n(z + v * L, left));
            if (j->clamp) s = cr_clamp(s, lo, hi);
            if (whole) tgc_vf_store(y + v * L, s);
            else cr_store_n(y + v * L, s, left);
        }
    }
}

/* Rows [r, r + nr) at nv blocks from b, nr in [1, PW_R]: the tile inlined
 * for that row count. */
static inline __attribute__((always_inline)) void pw_rows(const tgc_conv_pw_job *j, int64_t r, int64_t b, int64_t nr,
                                                          const int nv) {
    switch (nr) {
    case 6: pw_tile(j, r, b, 6, nv); break;
    case 5: pw_tile(j, r, b, 5, nv); break;
    case 4: pw_tile(j, r, b, 4, nv); break;
    case 3: pw_tile(j, r, b, 3, nv); break;
    case 2: pw_tile(j, r, b, 2, nv); break;
    default: pw_tile(j, r, b, 1, nv); break;
    }
}

/* PW_V blocks at a time while that many are left, over every tile of rows
 * (a block's weights stay in cache across the rows), then what remains. */
static void pw_run(const tgc_conv_pw_job *j, int64_t r0, int64_t r1, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1;) {
        int64_t nv = b1 - b < PW_V ? b1 - b : PW_V;
        for (int64_t r = r0; r < r1; r += PW_R) {
            int64_t nr = r1 - r < PW_R ? r1 - r : PW_R;
            if (nv == 4) pw_rows(j, r, b, nr, 4);
            else if (nv == 3) pw_rows(j, r, b, nr, 3);
            else if (nv == 2) pw_rows(j, r, b, nr, 2);
            else pw_rows(j, r, b, nr, 1);
        }
        b += nv;
    }
}

#endif
