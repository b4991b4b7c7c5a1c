/* Dense and grouped 3x3 Convs at stride 2 read where the input lies
 * (tgc_conv_isa.plane_rows, the windows tgc_conv_plane_rows_applies takes),
 * for one vector ISA: included by devices/cpu/conv_isa_{sse2,avx2,avx512}.c
 * after conv_rows.h, whose column taps (cr_plane_taps) it shares with the
 * depthwise tgc_conv_isa.dw_plane.
 *
 * The row method packs a band of each input channel into phase planes
 * first (conv_direct.c): at stride 2 that is a copy of the whole input,
 * split into even and odd rows and columns, before a multiply-add is
 * done. Here a tile of mb output channels by nv vectors of one output row
 * forms each input row's column taps in registers (at stride 2 the even
 * and odd lanes of two loads, the tap left of the row moved up a lane)
 * and multiplies each into all mb channels: per input channel and kernel
 * row, 2 nv loads and a few shuffles feed K mb nv multiply-adds.
 * An output's sum is the packed method's, term for term: the bias, then
 * the taps in the order (input channel, kernel row, kernel column), one
 * tgc_vmuladd each, rows outside the input multiplied in as zeros; so the
 * bits do not depend on the method, the tile or the piece. */
#ifndef TGC_DEVICES_CPU_CONV_PLANE_ROWS_H
#define TGC_DEVICES_CPU_CONV_PLANE_ROWS_H

#include "devices/cpu/conv_rows.h"

/* Vectors a tile holds side by side: with AVX-512's 32 registers 8
 * channels x 2 vectors (16 accumulators, 2 x K taps); one elsewhere. */
/* The widest window a tile holds the column taps of (cp_plane_rows takes 3x3 only). */
#define CP_MAX_K 3

#if TGC_VBYTES == 64
#define CP_NV 2
#else
#define CP_NV 1
#endif

/* Output row r of the job, channels [0, mb), the nv vectors at columns
 * f + v * lanes (the last one may be partial). inner: every float those
 * vectors' taps read lies inside the row (cr_plane_inner), so no load
 * needs a mask. */
static inline __attribute__((always_inline)) void cp_tile(const tgc_conv_dw_plane_job *j, const float *w,
                                                          const float *bias, float *out, int64_t r, int64_t f,
                                                          const int mb, const int nv, const int K, const int S,
                                                          const int pw, const bool inner) {
    tgc_vf acc[CR_MB][CP_NV];
#pragma GCC unroll 8
    for (int k = 0; k < mb; k++) {
        tgc_vf b = tgc_vf_splat(bias != NULL ? bias[k] : 0.0f);
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) acc[k][v] = b;
    }
    const int64_t taps = j->cin * K * K, ih0 = S * (j->oh0 + r) - j->ph;
    for (int64_t c = 0; c < j->cin; c++) {
        const float *plane = j->x + c * j->in_cs, *wc = w + c * K * K;
#pragma GCC unroll 3
        for (int i = 0; i < K; i++) {
            tgc_vf x[CP_NV][CP_MAX_K];
            int64_t ih = ih0 + i;
#pragma GCC unroll 2
            for (int v = 0; v < nv; v++) {
                if (ih >= 0 && ih < j->h) {
                    cr_plane_taps(plane + ih * j->wd, f + v * TGC_VLANES, j->wd, x[v], K, S, pw, inner);
                } else {
#pragma GCC unroll 3
                    for (int t = 0; t < K; t++) x[v][t] = tgc_vf_splat(0.0f);
                }
            }
#pragma GCC unroll 3
            for (int t = 0; t < K; t++)
#pragma GCC unroll 8
                for (int k = 0; k < mb; k++) {
                    tgc_vf wk = tgc_vf_splat(wc[k * taps + i * K + t]);
#pragma GCC unroll 2
                    for (int v = 0; v < nv; v++) acc[k][v] = tgc_vmuladd(wk, x[v][t], acc[k][v]);
                }
        }
    }
    tgc_vf lo = tgc_vf_splat(j->lo), hi = tgc_vf_splat(j->hi);
#pragma GCC unroll 2
    for (int v = 0; v < nv; v++) {
        int64_t cols = j->ow - f - v * TGC_VLANES;
        float *o = out + r * j->out_rs + f + v * TGC_VLANES;
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++) {
            tgc_vf y = j->clamp ? cr_clamp(acc[k][v], lo, hi) : acc[k][v];
            if (cols >= TGC_VLANES) tgc_vf_store(o + k * j->out_cs, y);
            else cr_store_n(o + k * j->out_cs, y, cols);
        }
    }
}

/* cp_tile without masks where the tile allows. */
static inline __attribute__((always_inline)) void cp_vectors(const tgc_conv_dw_plane_job *j, const float *w,
                                                             const float *bias, float *out, int64_t r, int64_t f,
                                                             const int mb, const int nv, const int K, const int S,
                                                             const int pw) {
    if (cr_plane_inner(f, j->wd, K, S, pw) && cr_plane_inner(f + (nv - 1) * TGC_VLANES, j->wd, K, S, pw))
        cp_tile(j, w, bias, out, r, f, mb, nv, K, S, pw, true);
    else
        cp_tile(j, w, bias, out, r, f, mb, nv, K, S, pw, false);
}

/* Every row of the job for channels [0, mb), w, bias and out at the first
 * of them: CP_NV vectors a tile, then the one left over. */
static inline __attribute__((always_inline)) void cp_rows(const tgc_conv_dw_plane_job *j, const float *w,
                                                          const float *bias, float *out, const int mb, const int K,
                                                          const int S, const int pw) {
    const int64_t step = CP_NV * TGC_VLANES;
    for (int64_t r = 0; r < j->rows; r++) {
        int64_t f = 0;
        for (; f + step - TGC_VLANES < j->ow; f += step) cp_vectors(j, w, bias, out, r, f, mb, CP_NV, K, S, pw);
        if (f < j->ow) cp_vectors(j, w, bias, out, r, f, mb, 1, K, S, pw);
    }
}

/* The job's channels in tiles of 8 (AVX-512), 4, 2, then 1. */
static inline __attribute__((always_inline)) void cp_run(const tgc_conv_dw_plane_job *j, const int K, const int S,
                                                         const int pw) {
    const int64_t taps = j->cin * K * K;
    int64_t k = 0;
#define CP_TILES(MB)                                                                                        \
    for (; k + (MB) <= j->mb; k += (MB))                                                                    \
        cp_rows(j, j->w + k * taps, j->bias != NULL ? j->bias + k : NULL, j->out + k * j->out_cs, (MB), K, S, pw)
#if TGC_VBYTES == 64
    CP_TILES(8);
#endif
    CP_TILES(4);
    CP_TILES(2);
    CP_TILES(1);
#undef CP_TILES
}

/* tgc_conv_isa.plane_rows for the windows tgc_conv_plane_rows_applies takes. */
static void cp_plane_rows(const tgc_conv_dw_plane_job *j, int k, int s) {
    if (k == 3 && s == 2 && j->pw == 1) cp_run(j, 3, 2, 1);
    else if (k == 3 && s == 2 && j->pw == 0) cp_run(j, 3, 2, 0);
}

#endif
