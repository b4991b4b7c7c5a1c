/* The row kernel of the direct convolution (devices/cpu/conv_direct.h's
 * tgc_conv_rows_job) and the packing of input rows, for one vector ISA:
 * included by devices/cpu/conv_isa_{sse2,avx2,avx512}.c, compiled with
 * that ISA's flags (CMakeLists.txt, the elementwise loops' flags).
 *
 * A tile of mb output channels by nv vectors is held in registers while
 * every tap is added in: per tap, nv loads of the input, one broadcast
 * weight per channel and mb * nv multiply-adds, so each load feeds mb
 * multiply-adds and each output is stored once. Tiles: 4 channels x 2
 * vectors, 2 x 3, 1 x 4 (at most 8 accumulators, within AVX2's 16
 * registers beside the loads), and with AVX-512's 32 registers 8 x 2
 * first (16 accumulators; the node alone, 1 thread: 16 -> 64 channels
 * 3x3 over 55x55 348 -> 309 us, the 3 -> 64 stem at stride 2 over
 * 224x224 272 -> 260, 4 groups of 16 over 56x56 372 -> 331; 8 x 3 was
 * behind on rows 28 wide). One long row (a 1x1 Conv read where it lies,
 * a band of rows one after another) of at least CR_LONG_ROW positions
 * takes 8 x 3 (24 accumulators; per tap 3 loads and 8 broadcasts feed 24
 * multiply-adds, where 8 x 2's 2 and 8 feed 16): `tgc run --trace`, node
 * medians of 7 interleaved runs, 1 thread, MNASNet's 1x1 layers on 16 to
 * 72 channels over 112x112 and 56x56 688 -> 661 us (its 32 -> 16 over
 * 112x112 107 -> 88), EfficientNet-B1's over 144 channels of 56x56 209-215 -> 201-204,
 * its 16 -> 96 over 112x112 level (514, 518); at 2 threads MNASNet's
 * level (514, 514; 32 -> 16: 120 -> 111). The node alone (docs/
 * cpu-speed.md), 1 and 2 threads: 24 -> 144 over 56x56 125 -> 111.5 and
 * 98.5 -> 98.5 us, 16 -> 72 56 -> 54.5 and 57.5 -> 53.5. The channel
 * loops are unrolled 8 deep: left rolled, GCC keeps the accumulators on
 * the stack, at half the speed.
 * A row's last columns (fewer than a tile) take a vector at a time, nv
 * rows side by side so that the chains of multiply-adds stay
 * independent (one long row: its last whole vectors as one narrower
 * tile); a last part of at most half a vector
 * runs at half width (AVX-512: 8 lanes, AVX2: 4); partial vectors are
 * stored through a mask. Every lane computes its output the same way (the
 * bias, then the taps in order by tgc_vmuladd), so an output's bits do not
 * depend on the tile or the width that computed it. */
#ifndef TGC_DEVICES_CPU_CONV_ROWS_H
#define TGC_DEVICES_CPU_CONV_ROWS_H

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/simd.h"

#include <stdint.h>
#include <string.h>

/* The biggest tile: mb channels x nv vectors. */
#define CR_MB 8
#define CR_NV 4
/* One long row this long takes the 8 x 3 tile (AVX-512): four tiles at least. */
#define CR_LONG_ROW (4 * 3 * TGC_VLANES)

/* out[0..k) = the first k lanes of v (0 <= k <= TGC_VLANES). */
static inline void cr_store_n(float *out, tgc_vf v, int64_t k) {
#if TGC_VBYTES == 64
    _mm512_mask_storeu_ps(out, (__mmask16)((1u << k) - 1u), (__m512)v);
#elif TGC_VBYTES == 32
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), lane), (__m256)v);
#else
    float t[TGC_VLANES];
    tgc_vf_store(t, v);
    for (int64_t i = 0; i < k; i++) out[i] = t[i];
#endif
}

/* A masked load: the first k lanes from p (0 < k <= TGC_VLANES), zeros
 * in the others; nothing past p + k is read. */
static inline tgc_vf cr_load_n(const float *p, int64_t k) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_maskz_loadu_ps((__mmask16)((1u << k) - 1u), p);
#elif TGC_VBYTES == 32
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return (tgc_vf)_mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), lane));
#else
    tgc_vf v = {0};
    for (int64_t i = 0; i < k; i++) v[i] = p[i];
    return v;
#endif
}

/* v clamped as the job's fused activation says (tgc_conv_rows_job.clamp):
 * the selects of Clip's row, so the bits of the unfused node. */
static inline tgc_vf cr_clamp(tgc_vf v, tgc_vf lo, tgc_vf hi) {
    v = tgc_vsel(v < lo, lo, v);
    return tgc_vsel(v > hi, hi, v);
}

/* One tile: channels [0, mb) x nv slots, slot v reading its taps at
 * in[v] + off[t] and writing channel k's output at out[v] + k * out_cs,
 * cols lanes of it (all when cols >= lanes). Inlined with constant mb and
 * nv, so the accumulators live in registers. Slots are vectors of one row
 * side by side, or the same columns of nv rows (the chains of
 * multiply-adds are independent either way, which hides their latency). */
static inline __attribute__((always_inline)) void cr_tile(const tgc_conv_rows_job *j, const float *w,
                                                          const float *bias, const float *const *in,
                                                          float *const *out, int64_t cols, const int mb,
                                                          const int nv) {
    tgc_vf acc[CR_MB][CR_NV];
#pragma GCC unroll 8
    for (int k = 0; k < mb; k++) {
        tgc_vf b = tgc_vf_splat(bias != NULL ? bias[k] : 0.0f);
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) acc[k][v] = b;
    }
    const int64_t taps = j->taps;
    for (int64_t t = 0; t < taps; t++) {
        const int64_t o = j->off[t];
        tgc_vf x[CR_NV];
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            x[v] = cols < TGC_VLANES && j->exact ? cr_load_n(in[v] + o, cols) : tgc_vf_load(in[v] + o);
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++) {
            tgc_vf wk = tgc_vf_splat(w[k * taps + t]);
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[k][v] = tgc_vmuladd(wk, x[v], acc[k][v]);
        }
    }
    if (j->clamp) {
        tgc_vf lo = tgc_vf_splat(j->lo), hi = tgc_vf_splat(j->hi);
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++)
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[k][v] = cr_clamp(acc[k][v], lo, hi);
    }
    if (cols >= TGC_VLANES) {
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++)
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) tgc_vf_store(out[v] + k * j->out_cs, acc[k][v]);
    } else {
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++)
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) cr_store_n(out[v] + k * j->out_cs, acc[k][v], cols);
    }
}

#if TGC_VBYTES >= 32
/* Half-width vectors for a last part of at most lanes / 2 columns: the
 * same multiply-adds (FMA in both widths) on half the lanes. */
#if TGC_VBYTES == 64
typedef __m256 cr_half;
#define CR_HALF_LOAD(p) _mm256_loadu_ps(p)
#define CR_HALF_SPLAT(s) _mm256_set1_ps(s)
#define CR_HALF_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define CR_HALF_STORE_N(p, v, k) _mm256_mask_storeu_ps((p), (__mmask8)((1u << (k)) - 1u), (v))
#define CR_HALF_CLAMP(v, lo, hi) \
    _mm256_blendv_ps(_mm256_blendv_ps((v), (lo), _mm256_cmp_ps((v), (lo), _CMP_LT_OQ)), (hi), \
                     _mm256_cmp_ps(_mm256_blendv_ps((v), (lo), _mm256_cmp_ps((v), (lo), _CMP_LT_OQ)), (hi), _CMP_GT_OQ))
#else
typedef __m128 cr_half;
#define CR_HALF_LOAD(p) _mm_loadu_ps(p)
#define CR_HALF_SPLAT(s) _mm_set1_ps(s)
#if defined(__FMA__)
#define CR_HALF_FMA(a, b, c) _mm_fmadd_ps((a), (b), (c))
#else
#define CR_HALF_FMA(a, b, c) _mm_add_ps(_mm_mul_ps((a), (b)), (c))
#endif
#define CR_HALF_STORE_N(p, v, k) \
    _mm_maskstore_ps((p), _mm_cmpgt_epi32(_mm_set1_epi32((int)(k)), _mm_setr_epi32(0, 1, 2, 3)), (v))
#define CR_HALF_CLAMP(v, lo, hi) \
    _mm_blendv_ps(_mm_blendv_ps((v), (lo), _mm_cmplt_ps((v), (lo))), (hi), \
                  _mm_cmpgt_ps(_mm_blendv_ps((v), (lo), _mm_cmplt_ps((v), (lo))), (hi)))
#endif

/* cr_tile at half width, cols <= lanes / 2. */
static inline __attribute__((always_inline)) void cr_tile_half(const tgc_conv_rows_job *j, const float *w,
                                                               const float *bias, const float *const *in,
                                                               float *const *out, int64_t cols, const int mb,
                                                               const int nv) {
    cr_half acc[CR_MB][CR_NV];
#pragma GCC unroll 8
    for (int k = 0; k < mb; k++) {
        cr_half b = CR_HALF_SPLAT(bias != NULL ? bias[k] : 0.0f);
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) acc[k][v] = b;
    }
    const int64_t taps = j->taps;
    for (int64_t t = 0; t < taps; t++) {
        const int64_t o = j->off[t];
        cr_half x[CR_NV];
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) x[v] = CR_HALF_LOAD(in[v] + o);
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++) {
            cr_half wk = CR_HALF_SPLAT(w[k * taps + t]);
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[k][v] = CR_HALF_FMA(wk, x[v], acc[k][v]);
        }
    }
    if (j->clamp) {
        cr_half lo = CR_HALF_SPLAT(j->lo), hi = CR_HALF_SPLAT(j->hi);
#pragma GCC unroll 8
        for (int k = 0; k < mb; k++)
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[k][v] = CR_HALF_CLAMP(acc[k][v], lo, hi);
    }
#pragma GCC unroll 8
    for (int k = 0; k < mb; k++)
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) CR_HALF_STORE_N(out[v] + k * j->out_cs, acc[k][v], cols);
}
#endif

/* Every row of the job for channels [0, mb) (a tile height), w and bias
 * already at the first of them: each row's columns in tiles of nv vectors
 * side by side; then the columns left over (the same in every row, fewer
 * than nv vectors) a vector at a time, nv rows a tile (the last tile
 * repeats its last row, computing and storing the same values twice). */
static inline __attribute__((always_inline)) void cr_rows(const tgc_conv_rows_job *j, const float *w,
                                                          const float *bias, float *out, const int mb,
                                                          const int nv) {
    const int64_t n = j->n, step = (int64_t)nv * TGC_VLANES, full = n / step * step;
    const float *in[CR_NV];
    float *o[CR_NV];
    for (int64_t r = 0; r < j->rows; r++)
        for (int64_t f = 0; f < full; f += step) {
            for (int v = 0; v < nv; v++) {
                in[v] = j->in + r * j->in_rs + f + v * TGC_VLANES;
                o[v] = out + r * j->out_rs + f + v * TGC_VLANES;
            }
            cr_tile(j, w, bias, in, o, TGC_VLANES, mb, nv);
        }
    if (j->rows == 1 && full < n) { /* one long row: what is left as one tile of fewer vectors */
        int64_t k = (n - full) / TGC_VLANES, f = full + k * TGC_VLANES;
        for (int v = 0; v < k; v++) {
            in[v] = j->in + full + v * TGC_VLANES;
            o[v] = out + full + v * TGC_VLANES;
        }
        if (k == 1) cr_tile(j, w, bias, in, o, TGC_VLANES, mb, 1);
        else if (k == 2 && nv > 2) cr_tile(j, w, bias, in, o, TGC_VLANES, mb, 2);
        else if (k == 3 && nv > 3) cr_tile(j, w, bias, in, o, TGC_VLANES, mb, 3);
        if (f == n) return;
        in[0] = j->in + f;
        o[0] = out + f;
#if TGC_VBYTES >= 32
        if (n - f <= TGC_VLANES / 2 && !j->exact) {
            cr_tile_half(j, w, bias, in, o, n - f, mb, 1);
            return;
        }
#endif
        cr_tile(j, w, bias, in, o, n - f, mb, 1);
        return;
    }
    for (int64_t f = full; f < n; f += TGC_VLANES) {
        int64_t cols = n - f < TGC_VLANES ? n - f : TGC_VLANES;
        for (int64_t r0 = 0; r0 < j->rows; r0 += nv) {
            for (int v = 0; v < nv; v++) {
                int64_t r = r0 + v < j->rows ? r0 + v : j->rows - 1;
                in[v] = j->in + r * j->in_rs + f;
                o[v] = out + r * j->out_rs + f;
            }
#if TGC_VBYTES >= 32
            if (cols <= TGC_VLANES / 2 && !j->exact) {
                cr_tile_half(j, w, bias, in, o, cols, mb, nv);
                continue;
            }
#endif
            cr_tile(j, w, bias, in, o, cols, mb, nv);
        }
    }
}

/* cr_rows for each tile shape, out of line (three copies of the loops, not one a call site). */
static void cr_rows_4(const tgc_conv_rows_job *j, const float *w, const float *b, float *o) {
    cr_rows(j, w, b, o, 4, 2);
}
static void cr_rows_2(const tgc_conv_rows_job *j, const float *w, const float *b, float *o) {
    cr_rows(j, w, b, o, 2, 3);
}
static void cr_rows_1(const tgc_conv_rows_job *j, const float *w, const float *b, float *o) {
    cr_rows(j, w, b, o, 1, 4);
}

#if TGC_VBYTES == 64
static void cr_rows_8(const tgc_conv_rows_job *j, const float *w, const float *b, float *o) {
    cr_rows(j, w, b, o, 8, 2);
}
static void cr_rows_8_long(const tgc_conv_rows_job *j, const float *w, const float *b, float *o) {
    cr_rows(j, w, b, o, 8, 3);
}
#endif

/* The job's channels in tiles of 8 (AVX-512: 8 x 3 along one long row of
 * CR_LONG_ROW positions or more, else 8 x 2), 4, 2, then 1. */
static void cr_run(const tgc_conv_rows_job *j) {
    int64_t k = 0;
#if TGC_VBYTES == 64
    for (; k + 8 <= j->mb; k += 8)
        (j->rows == 1 && j->n >= CR_LONG_ROW ? cr_rows_8_long : cr_rows_8)(
            j, j->w + k * j->taps, j->bias != NULL ? j->bias + k : NULL, j->out + k * j->out_cs);
#endif
    for (; k + 4 <= j->mb; k += 4)
        cr_rows_4(j, j->w + k * j->taps, j->bias != NULL ? j->bias + k : NULL, j->out + k * j->out_cs);
    for (; k + 2 <= j->mb; k += 2)
        cr_rows_2(j, j->w + k * j->taps, j->bias != NULL ? j->bias + k : NULL, j->out + k * j->out_cs);
    for (; k < j->mb; k++)
        cr_rows_1(j, j->w + k * j->taps, j->bias != NULL ? j->bias + k : NULL, j->out + k * j->out_cs);
}

/* ---- Depthwise KxK, stride 1 or 2: input rows loaded once for every output row ---- */

/* Output rows a tile holds: with stride 1 each input row it loads feeds up
 * to K of them (3x3: 6 rows of loads for 4 rows of outputs). */
#define CR_DW_ROWS 4

/* R output rows (R <= CR_DW_ROWS) of a vector of columns, for a window of
 * K x K taps at stride S over one channel's phase planes (tap (i, j) reads
 * plane (i % S, j % S), which starts at plane[(i % S) * K + j % S], at row
 * i / S and column j / S; rows in_rs apart). Each phase row is loaded once
 * a column shift and multiplied into every output row whose window covers
 * it; an output's taps still come in the order (i, j) row-major, each one
 * tgc_vmuladd onto the bias: cr_tile's arithmetic, so the same bits, with
 * a K-th of its loads (stride 1) and, for 3x3, the weights in registers. */
static inline __attribute__((always_inline)) void cr_dw_rows(const float *in, const int64_t *plane, int64_t in_rs,
                                                             const float *w, const tgc_vf *wv, tgc_vf b, float *out,
                                                             int64_t out_rs, int64_t cols, const tgc_vf *clamp,
                                                             const int K, const int S, const int R) {
    tgc_vf acc[CR_DW_ROWS];
#pragma GCC unroll 4
    for (int v = 0; v < R; v++) acc[v] = b;
    const int rows_in = R + (K - 1) / S; /* the phase rows the R output rows read */
#pragma GCC unroll 8
    for (int u = 0; u < rows_in; u++) {
#pragma GCC unroll 2
        for (int a = 0; a < S; a++) {
#pragma GCC unroll 7
            for (int jj = 0; jj < K; jj++) {
                bool used = false;
#pragma GCC unroll 4
                for (int v = 0; v < R; v++) used = used || (S * (u - v) + a >= 0 && S * (u - v) + a < K);
                if (used) { /* some output row's window covers this phase row (stride 2: not always) */
                    tgc_vf x = tgc_vf_load(in + plane[a * K + jj % S] + u * in_rs + jj / S);
#pragma GCC unroll 4
                    for (int v = 0; v < R; v++) {
                        int i = S * (u - v) + a;
                        if (i >= 0 && i < K)
                            acc[v] = tgc_vmuladd(K == 3 ? wv[i * 3 + jj] : tgc_vf_splat(w[i * K + jj]), x, acc[v]);
                    }
                }
            }
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < R; v++) {
        if (clamp != NULL) acc[v] = cr_clamp(acc[v], clamp[0], clamp[1]);
        if (cols >= TGC_VLANES) tgc_vf_store(out + v * out_rs, acc[v]);
        else cr_store_n(out + v * out_rs, acc[v], cols);
    }
}

/* A depthwise output channel's constants in registers: its 3x3 weights
 * (zeros for other windows, whose taps splat theirs), its bias (bias
 * NULL: zero) and the fused clamp's bounds. */
typedef struct {
    tgc_vf wv[9], b, bounds[2];
} cr_dw_consts;

static inline __attribute__((always_inline)) cr_dw_consts cr_dw_consts_of(const float *w, const float *bias,
                                                                          int64_t k, float lo, float hi,
                                                                          const int K) {
    cr_dw_consts c = {.b = tgc_vf_splat(bias != NULL ? bias[k] : 0.0f),
                      .bounds = {tgc_vf_splat(lo), tgc_vf_splat(hi)}};
    for (int t = 0; t < 9; t++) c.wv[t] = tgc_vf_splat(K == 3 ? w[t] : 0.0f);
    return c;
}

/* A job of one input channel with a K x K window at stride S and dilation
 * 1: rows CR_DW_ROWS at a time, a vector of columns at a time. Reads up to
 * a vector past the last column a sum uses, as cr_run does. */
static inline __attribute__((always_inline)) void cr_dw(const tgc_conv_rows_job *j, const int K, const int S) {
    const int64_t *plane = j->off; /* tap (a, b) for a, b < S: plane (a, b) at row 0, column 0 */
    for (int64_t k = 0; k < j->mb; k++) {
        const float *w = j->w + k * K * K;
        cr_dw_consts c = cr_dw_consts_of(w, j->bias, k, j->lo, j->hi, K);
        const tgc_vf *wv = c.wv, *clamp = j->clamp ? c.bounds : NULL;
        tgc_vf b = c.b;
        float *out = j->out + k * j->out_cs;
        int64_t r = 0;
        for (; r + CR_DW_ROWS <= j->rows; r += CR_DW_ROWS)
            for (int64_t f = 0; f < j->n; f += TGC_VLANES)
                cr_dw_rows(j->in + r * j->in_rs + f, plane, j->in_rs, w, wv, b, out + r * j->out_rs + f, j->out_rs,
                           j->n - f, clamp, K, S, CR_DW_ROWS);
        for (; r < j->rows; r++)
            for (int64_t f = 0; f < j->n; f += TGC_VLANES)
                cr_dw_rows(j->in + r * j->in_rs + f, plane, j->in_rs, w, wv, b, out + r * j->out_rs + f, j->out_rs,
                           j->n - f, clamp, K, S, 1);
    }
}

/* tgc_conv_isa.dw_rows: cr_dw for the windows it is built for. */
static void cr_dw_run(const tgc_conv_rows_job *j, int k, int s) {
    if (k == 3 && s == 1) cr_dw(j, 3, 1);
    else if (k == 3 && s == 2) cr_dw(j, 3, 2);
    else if (k == 5 && s == 1) cr_dw(j, 5, 1);
    else if (k == 5 && s == 2) cr_dw(j, 5, 2);
    else if (k == 7 && s == 1) cr_dw(j, 7, 1);
    else cr_run(j);
}

/* ---- Packing: input rows into phase planes ---------------------------------------- */

/* The even lanes of a, then those of b. */
static inline tgc_vf cr_even(tgc_vf a, tgc_vf b) {
#if TGC_VBYTES == 64
    __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return (tgc_vf)_mm512_permutex2var_ps((__m512)a, idx, (__m512)b);
#elif TGC_VBYTES == 32
    __m256 e = _mm256_shuffle_ps((__m256)a, (__m256)b, 0x88); /* a0 a2 b0 b2 a4 a6 b4 b6 */
    return (tgc_vf)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
#elif defined(__SSE2__)
    return (tgc_vf)_mm_shuffle_ps((__m128)a, (__m128)b, 0x88);
#else
    tgc_vf v;
    for (int i = 0; i < TGC_VLANES / 2; i++) {
        v[i] = a[2 * i];
        v[TGC_VLANES / 2 + i] = b[2 * i];
    }
    return v;
#endif
}

/* The odd lanes of a, then those of b. */
static inline tgc_vf cr_odd(tgc_vf a, tgc_vf b) {
#if TGC_VBYTES == 64
    __m512i idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    return (tgc_vf)_mm512_permutex2var_ps((__m512)a, idx, (__m512)b);
#elif TGC_VBYTES == 32
    __m256 e = _mm256_shuffle_ps((__m256)a, (__m256)b, 0xDD); /* a1 a3 b1 b3 a5 a7 b5 b7 */
    return (tgc_vf)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
#elif defined(__SSE2__)
    return (tgc_vf)_mm_shuffle_ps((__m128)a, (__m128)b, 0xDD);
#else
    tgc_vf v;
    for (int i = 0; i < TGC_VLANES / 2; i++) {
        v[i] = a[2 * i + 1];
        v[TGC_VLANES / 2 + i] = b[2 * i + 1];
    }
    return v;
#endif
}

/* dst[v] = src[v * s], v in [0, n): whole vectors, then the tail through
 * masks (stride 1 and 2; others lane by lane). Reads nothing past the
 * last src[v * s]. */
static inline __attribute__((always_inline)) void cr_gather(float *restrict dst, const float *restrict src,
                                                            int64_t n, int64_t s) {
    int64_t v = 0;
    if (s == 1) {
        for (; v + TGC_VLANES <= n; v += TGC_VLANES) tgc_vf_store(dst + v, tgc_vf_load(src + v));
        if (v < n) cr_store_n(dst + v, cr_load_n(src + v, n - v), n - v);
    } else if (s == 2) {
        for (; v + TGC_VLANES <= n; v += TGC_VLANES)
            tgc_vf_store(dst + v, cr_even(tgc_vf_load(src + 2 * v), tgc_vf_load(src + 2 * v + TGC_VLANES)));
        if (v < n) {
            int64_t k = 2 * (n - v) - 1; /* floats up to the last one taken */
            tgc_vf a = cr_load_n(src + 2 * v, k < TGC_VLANES ? k : TGC_VLANES);
            tgc_vf b = k > TGC_VLANES ? cr_load_n(src + 2 * v + TGC_VLANES, k - TGC_VLANES) : tgc_vf_splat(0.0f);
            cr_store_n(dst + v, cr_even(a, b), n - v);
        }
    } else {
        for (; v < n; v++) dst[v] = src[v * s];
    }
}

/* tgc_conv_isa.pack: cr_gather row by row, its stride a constant where it is 1 or 2. */
static void cr_pack(float *dst, int64_t dst_rs, const float *src, int64_t src_rs, int64_t rows, int64_t n,
                    int64_t s) {
    if (s == 1)
        for (int64_t r = 0; r < rows; r++) cr_gather(dst + r * dst_rs, src + r * src_rs, n, 1);
    else if (s == 2)
        for (int64_t r = 0; r < rows; r++) cr_gather(dst + r * dst_rs, src + r * src_rs, n, 2);
    else
        for (int64_t r = 0; r < rows; r++) cr_gather(dst + r * dst_rs, src + r * src_rs, n, s);
}

/* [prev's last lane, cur's lanes but its last]: cur moved up one lane. */
static inline tgc_vf cr_shift1(tgc_vf cur, tgc_vf prev) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512((__m512)cur), _mm512_castps_si512((__m512)prev), 15));
#elif TGC_VBYTES == 32
    __m256i up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
    return (tgc_vf)_mm256_blend_ps(_mm256_permutevar8x32_ps((__m256)cur, up),
                                   _mm256_permutevar8x32_ps((__m256)prev, up), 0x01);
#elif defined(__SSE2__)
    return (tgc_vf)_mm_move_ss(_mm_shuffle_ps((__m128)cur, (__m128)cur, 0x93),
                               _mm_shuffle_ps((__m128)prev, (__m128)prev, 0x93));
#else
    tgc_vf v;
    v[0] = prev[TGC_VLANES - 1];
    for (int i = 1; i < TGC_VLANES; i++) v[i] = cur[i - 1];
    return v;
#endif
}

/* Whether p lies one float past a vector boundary. */
static inline bool cr_one_past(const float *p) {
    return (uintptr_t)p % TGC_VBYTES == sizeof(float);
}

/* One phase's vectors stored at dst, in order; where dst lies one float
 * past a vector boundary and the float before it is padding (may_shift),
 * each store is moved down one float onto the boundary (cr_shift1 carrying
 * the last lane of the vector before), so that no store splits a cache
 * line: the float before dst is then written too, as zero. A pack of
 * stride-2 rows with a pad of 1 stores one phase one float past the line,
 * and those split stores took over half of cr_pack2's time (`perf
 * annotate`, 16 channels of 112x112 from L2). */
typedef struct {
    float *dst;
    bool shifted;
    tgc_vf prev;
} cr_phase_row;

static inline cr_phase_row cr_phase_row_at(float *dst, bool may_shift) {
    return (cr_phase_row){.dst = dst, .shifted = may_shift && cr_one_past(dst), .prev = tgc_vf_splat(0.0f)};
}

/* dst[k .. k + TGC_VLANES) = v. */
static inline __attribute__((always_inline)) void cr_phase_store(cr_phase_row *r, int64_t k, tgc_vf v) {
    if (r->shifted) {
        tgc_vf_store(r->dst + k - 1, cr_shift1(v, r->prev));
        r->prev = v;
    } else {
        tgc_vf_store(r->dst + k, v);
    }
}

/* dst[k .. k + n) = v's first n lanes (0 < n <= TGC_VLANES), the last store of the row. */
static inline __attribute__((always_inline)) void cr_phase_store_n(cr_phase_row *r, int64_t k, tgc_vf v,
                                                                   int64_t n) {
    if (r->shifted) {
        cr_store_n(r->dst + k - 1, cr_shift1(v, r->prev), n + 1 <= TGC_VLANES ? n + 1 : TGC_VLANES);
        if (n == TGC_VLANES) r->dst[k + TGC_VLANES - 1] = v[TGC_VLANES - 1];
    } else {
        cr_store_n(r->dst + k, v, n);
    }
}

/* tgc_conv_isa.pack2: one load of each pair of vectors for both phases,
 * each phase's stores on vector boundaries where pad_before allows
 * (cr_phase_row). */
static void cr_pack2(float *even, float *odd, int64_t dst_rs, const float *src, int64_t src_rs, int64_t rows,
                     int64_t ne, int64_t no, unsigned pad_before) {
    for (int64_t r = 0; r < rows; r++) {
        const float *p = src + r * src_rs;
        cr_phase_row e = cr_phase_row_at(even + r * dst_rs, pad_before & TGC_PACK2_EVEN);
        cr_phase_row o = cr_phase_row_at(odd + r * dst_rs, pad_before & TGC_PACK2_ODD);
        int64_t k = 0;
        for (; k + TGC_VLANES <= no; k += TGC_VLANES) {
            tgc_vf a = tgc_vf_load(p + 2 * k), b = tgc_vf_load(p + 2 * k + TGC_VLANES);
            cr_phase_store(&e, k, cr_even(a, b));
            cr_phase_store(&o, k, cr_odd(a, b));
        }
        int64_t re = ne - k, ro = no - k, floats = 2 * re - 1 > 2 * ro ? 2 * re - 1 : 2 * ro;
        if (re <= 0) {
            if (e.shifted && k > 0) e.dst[k - 1] = e.prev[TGC_VLANES - 1];
            if (o.shifted && k > 0) o.dst[k - 1] = o.prev[TGC_VLANES - 1];
            continue;
        }
        tgc_vf a = cr_load_n(p + 2 * k, floats < TGC_VLANES ? floats : TGC_VLANES);
        tgc_vf b = floats > TGC_VLANES ? cr_load_n(p + 2 * k + TGC_VLANES, floats - TGC_VLANES) : tgc_vf_splat(0.0f);
        cr_phase_store_n(&e, k, cr_even(a, b), re);
        if (ro > 0) cr_phase_store_n(&o, k, cr_odd(a, b), ro);
        else if (o.shifted && k > 0) o.dst[k - 1] = o.prev[TGC_VLANES - 1];
    }
}

/* ---- Depthwise at stride 1 or 2, read where the input lies ------------------------- */

/* row[q .. q + lanes), q >= 0, with zeros for the columns at wd and past (none read). */
static inline tgc_vf cr_row_load(const float *row, int64_t q, int64_t wd) {
    if (q + TGC_VLANES <= wd) return tgc_vf_load(row + q);
    return q < wd ? cr_load_n(row + q, wd - q) : tgc_vf_splat(0.0f);
}

/* row[c] inside [0, wd), zero outside. */
static inline float cr_row_at(const float *row, int64_t c, int64_t wd) {
    return c >= 0 && c < wd ? row[c] : 0.0f;
}

/* x[t] for t in [0, K): lane l = row[S * (f + l) - pw + t], zero outside
 * [0, wd): the K column taps of the output vector at column f. At stride
 * 1 each tap is one load (at f = 0 the taps left of the row are the tap to
 * their right moved up a lane); at stride 2 each pair of loads gives two
 * taps (its even and odd lanes), and a tap left of the first pair (t < pw)
 * is the tap two to its right moved up a lane, the float before it coming
 * in at lane 0 (pw <= K / 2: that tap is in the pairs). Inner: every float
 * read is inside the row (cr_plane_inner), so no load needs a mask. */
static inline __attribute__((always_inline)) void cr_plane_taps(const float *row, int64_t f, int64_t wd, tgc_vf *x,
                                                                const int K, const int S, const int pw,
                                                                const bool inner) {
    if (S == 1) {
#pragma GCC unroll 7
        for (int d = 0; d < K - pw; d++) x[pw + d] = inner ? tgc_vf_load(row + f + d) : cr_row_load(row, f + d, wd);
#pragma GCC unroll 3
        for (int d = -1; d >= -pw; d--)
            x[pw + d] = inner        ? tgc_vf_load(row + f + d)
                        : f + d >= 0 ? cr_row_load(row, f + d, wd)
                                     : cr_shift1(x[pw + d + 1], tgc_vf_splat(0.0f));
        return;
    }
    int64_t q0 = 2 * f;
#pragma GCC unroll 3
    for (int d = 0; d < K - pw; d += 2) {
        tgc_vf a = inner ? tgc_vf_load(row + q0 + d) : cr_row_load(row, q0 + d, wd);
        tgc_vf b = inner ? tgc_vf_load(row + q0 + d + TGC_VLANES) : cr_row_load(row, q0 + d + TGC_VLANES, wd);
        x[pw + d] = cr_even(a, b);
        if (d + 1 < K - pw) x[pw + d + 1] = cr_odd(a, b);
    }
#pragma GCC unroll 2
    for (int d = -1; d >= -pw; d--)
        x[pw + d] = cr_shift1(x[pw + d + 2], tgc_vf_splat(inner ? row[q0 + d] : cr_row_at(row, q0 + d, wd)));
}

/* Whether the output vector at column f reads only columns inside [0,
 * wd) (cr_plane_taps' inner): from S * f - pw, and at stride 2 up to the
 * last pair of loads' end. */
static inline bool cr_plane_inner(int64_t f, int64_t wd, const int K, const int S, const int pw) {
    int64_t last = S == 1 ? f - pw + K - 1 + TGC_VLANES : 2 * f + (K - pw - 1) / 2 * 2 + 2 * TGC_VLANES;
    return S * f - pw >= 0 && last <= wd;
}

/* R output rows from row r of the job, a vector of columns at f, of one
 * output channel: each input row's taps formed once for the output rows
 * whose window covers it, then multiplied in as cr_dw_rows does. */
static inline __attribute__((always_inline)) void cr_dw_plane_tile(const tgc_conv_dw_plane_job *j, const float *w,
                                                                   const tgc_vf *wv, tgc_vf b, float *out, int64_t r,
                                                                   int64_t f, const tgc_vf *clamp, const int K,
                                                                   const int S, const int pw, const int R,
                                                                   const bool inner) {
    tgc_vf acc[CR_DW_ROWS];
#pragma GCC unroll 4
    for (int v = 0; v < R; v++) acc[v] = b;
    int64_t ih0 = S * (j->oh0 + r) - j->ph;
#pragma GCC unroll 11
    for (int u = 0; u < S * (R - 1) + K; u++) {
        tgc_vf x[7];
        int64_t ih = ih0 + u;
        if (ih >= 0 && ih < j->h) {
            cr_plane_taps(j->x + ih * j->wd, f, j->wd, x, K, S, pw, inner);
        } else {
#pragma GCC unroll 7
            for (int t = 0; t < K; t++) x[t] = tgc_vf_splat(0.0f);
        }
#pragma GCC unroll 4
        for (int v = 0; v < R; v++) {
            int i = u - S * v;
            if (i < 0 || i >= K) continue;
#pragma GCC unroll 7
            for (int t = 0; t < K; t++)
                acc[v] = tgc_vmuladd(K == 3 ? wv[i * 3 + t] : tgc_vf_splat(w[i * K + t]), x[t], acc[v]);
        }
    }
    int64_t cols = j->ow - f;
#pragma GCC unroll 4
    for (int v = 0; v < R; v++) {
        if (clamp != NULL) acc[v] = cr_clamp(acc[v], clamp[0], clamp[1]);
        if (cols >= TGC_VLANES) tgc_vf_store(out + (r + v) * j->out_rs + f, acc[v]);
        else cr_store_n(out + (r + v) * j->out_rs + f, acc[v], cols);
    }
}

/* cr_dw_plane_tile without masks where the vector at f allows (cr_plane_inner). */
static inline __attribute__((always_inline)) void cr_dw_plane_vector(const tgc_conv_dw_plane_job *j, const float *w,
                                                                     const tgc_vf *wv, tgc_vf b, float *out,
                                                                     int64_t r, int64_t f, const tgc_vf *clamp,
                                                                     const int K, const int S, const int pw,
                                                                     const int R) {
    if (cr_plane_inner(f, j->wd, K, S, pw)) cr_dw_plane_tile(j, w, wv, b, out, r, f, clamp, K, S, pw, R, true);
    else cr_dw_plane_tile(j, w, wv, b, out, r, f, clamp, K, S, pw, R, false);
}

/* The job, CR_DW_ROWS output rows a tile, for a K x K window at stride S and left pad pw. */
static inline __attribute__((always_inline)) void cr_dw_plane(const tgc_conv_dw_plane_job *j, const int K,
                                                              const int S, const int pw) {
    for (int64_t k = 0; k < j->mb; k++) {
        const float *w = j->w + k * K * K;
        cr_dw_consts c = cr_dw_consts_of(w, j->bias, k, j->lo, j->hi, K);
        const tgc_vf *wv = c.wv, *clamp = j->clamp ? c.bounds : NULL;
        tgc_vf b = c.b;
        float *out = j->out + k * j->out_cs;
        int64_t r = 0;
        for (; r + CR_DW_ROWS <= j->rows; r += CR_DW_ROWS)
            for (int64_t f = 0; f < j->ow; f += TGC_VLANES)
                cr_dw_plane_vector(j, w, wv, b, out, r, f, clamp, K, S, pw, CR_DW_ROWS);
        for (; r < j->rows; r++)
            for (int64_t f = 0; f < j->ow; f += TGC_VLANES)
                cr_dw_plane_vector(j, w, wv, b, out, r, f, clamp, K, S, pw, 1);
    }
}

/* tgc_conv_isa.dw_plane: cr_dw_plane for each window, stride and left pad
 * tgc_conv_dw_plane_applies takes (conv_direct.c sends no other). */
static void cr_dw_plane_run(const tgc_conv_dw_plane_job *j, int k, int s) {
    if (s == 1 && k == 3) cr_dw_plane(j, 3, 1, 1);
    else if (s == 1 && k == 7) cr_dw_plane(j, 7, 1, 3);
    else if (k == 3 && j->pw == 1) cr_dw_plane(j, 3, 2, 1);
    else if (k == 3 && j->pw == 0) cr_dw_plane(j, 3, 2, 0);
    else if (k == 5 && j->pw == 2) cr_dw_plane(j, 5, 2, 2);
    else if (k == 5 && j->pw == 0) cr_dw_plane(j, 5, 2, 0);
    else if (k == 5 && j->pw == 1) cr_dw_plane(j, 5, 2, 1);
}

#endif
