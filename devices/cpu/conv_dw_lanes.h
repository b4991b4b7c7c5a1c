/* Depthwise convolution with a channel a vector lane (devices/cpu/
 * conv_direct.h's tgc_conv_dw_job), for one vector ISA: included after
 * conv_rows.h by devices/cpu/conv_isa_{sse2,avx2,avx512}.c.
 *
 * On small maps (7x7, 14x14: the late layers of MobileNet, EfficientNet,
 * ConvNeXt) a row is shorter than a vector or two, and the row kernel
 * spends more on packing and partial vectors than on arithmetic. Here a
 * block of `lanes` channels is transposed into pixel-major order (each
 * padded input pixel a vector of the block's channels, the layout oneDNN
 * and ONNX Runtime's MLAS call nChw16c / NCHWc), so that any stride or
 * dilation is a pixel offset and every lane does useful work:
 *
 *   1. Pack the band's padded input rows: lanes x lanes transposes in
 *      registers (unpack, shuffle, then 128-bit lane moves), zeros for the
 *      padding and for lanes past the block's channels.
 *   2. For each output row, tiles of 8 pixels in registers over every tap
 *      (one vector of weights a tap, the block's weights transposed by the
 *      driver), in the same order and by the same multiply-adds as the row
 *      kernel; the row (pixels x channels) goes through the fused
 *      activation while in cache (lane by lane, so the same bits as on Y).
 *   3. Transpose the row back into the block's output planes, through masks
 *      at the row's end. */
#ifndef TGC_DEVICES_CPU_CONV_DW_LANES_H
#define TGC_DEVICES_CPU_CONV_DW_LANES_H

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/simd.h"

#include <stdint.h>
#include <string.h>

/* Output pixels a tile. */
#define DL_P 8

/* r[0 .. lanes) transposed in place: lane j of r[i] becomes lane i of r[j]. */
static inline __attribute__((always_inline)) void dl_transpose(tgc_vf *r) {
#if TGC_VBYTES == 64
    __m512 t[16], s[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps((__m512)r[2 * i], (__m512)r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps((__m512)r[2 * i], (__m512)r[2 * i + 1]);
    }
    /* s[4g + m], 128-bit lane k: column 4k + m of rows 4g .. 4g + 3 */
#pragma GCC unroll 16
    for (int g = 0; g < 4; g++) {
        s[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        s[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
        s[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        s[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
#pragma GCC unroll 16
    for (int m = 0; m < 4; m++) {
        __m512 v0 = _mm512_shuffle_f32x4(s[m], s[4 + m], 0x88), v1 = _mm512_shuffle_f32x4(s[m], s[4 + m], 0xDD);
        __m512 v2 = _mm512_shuffle_f32x4(s[8 + m], s[12 + m], 0x88);
        __m512 v3 = _mm512_shuffle_f32x4(s[8 + m], s[12 + m], 0xDD);
        r[m] = (tgc_vf)_mm512_shuffle_f32x4(v0, v2, 0x88);
        r[8 + m] = (tgc_vf)_mm512_shuffle_f32x4(v0, v2, 0xDD);
        r[4 + m] = (tgc_vf)_mm512_shuffle_f32x4(v1, v3, 0x88);
        r[12 + m] = (tgc_vf)_mm512_shuffle_f32x4(v1, v3, 0xDD);
    }
#elif TGC_VBYTES == 32
    __m256 t[8], s[8];
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps((__m256)r[2 * i], (__m256)r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps((__m256)r[2 * i], (__m256)r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int g = 0; g < 2; g++) {
        s[4 * g] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        s[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
        s[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        s[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
#pragma GCC unroll 16
    for (int m = 0; m < 4; m++) {
        r[m] = (tgc_vf)_mm256_permute2f128_ps(s[m], s[4 + m], 0x20);
        r[4 + m] = (tgc_vf)_mm256_permute2f128_ps(s[m], s[4 + m], 0x31);
    }
#elif defined(__SSE2__)
    __m128 t0 = _mm_unpacklo_ps((__m128)r[0], (__m128)r[1]), t1 = _mm_unpackhi_ps((__m128)r[0], (__m128)r[1]);
    __m128 t2 = _mm_unpacklo_ps((__m128)r[2], (__m128)r[3]), t3 = _mm_unpackhi_ps((__m128)r[2], (__m128)r[3]);
    r[0] = (tgc_vf)_mm_shuffle_ps(t0, t2, 0x44);
    r[1] = (tgc_vf)_mm_shuffle_ps(t0, t2, 0xEE);
    r[2] = (tgc_vf)_mm_shuffle_ps(t1, t3, 0x44);
    r[3] = (tgc_vf)_mm_shuffle_ps(t1, t3, 0xEE);
#else
    for (int i = 0; i < TGC_VLANES; i++)
        for (int j = i + 1; j < TGC_VLANES; j++) {
            float a = r[i][j];
            r[i][j] = r[j][i];
            r[j][i] = a;
        }
#endif
}

/* Packs the band's input into px: pixel (u, v) of the padded band, input
 * row oh0 * sh - ph + u and column v - pw, at px + (u * cols + v) * lanes,
 * lane l channel l (zeros outside the input and for l >= nl). */
static void dl_pack(const tgc_conv_dw_job *j, float *px, int64_t in_rows, int64_t cols) {
    const int64_t plane = j->h * j->w, ih0 = j->oh0 * j->sh - j->ph;
    const tgc_vf zero = tgc_vf_splat(0.0f);
    for (int64_t u = 0; u < in_rows; u++) {
        float *dst = px + u * cols * TGC_VLANES;
        int64_t ih = ih0 + u, v0 = j->pw < cols ? j->pw : cols, v1 = j->pw + j->w < cols ? j->pw + j->w : cols;
        if (ih < 0 || ih >= j->h) v1 = v0; /* a padding row: zeros throughout */
        for (int64_t v = 0; v < v0; v++) tgc_vf_store(dst + v * TGC_VLANES, zero);
        for (int64_t v = v1; v < cols; v++) tgc_vf_store(dst + v * TGC_VLANES, zero);
        /* pixels [v0, v1): input columns [v0 - pw, v1 - pw) of row ih, lanes at a time */
        for (int64_t v = v0; v < v1; v += TGC_VLANES) {
            int64_t n = v1 - v < TGC_VLANES ? v1 - v : TGC_VLANES;
            const float *src = j->x + ih * j->w + (v - j->pw);
            tgc_vf r[TGC_VLANES];
#pragma GCC unroll 16
            for (int l = 0; l < TGC_VLANES; l++)
                r[l] = l >= j->nl           ? zero
                       : n == TGC_VLANES ? tgc_vf_load(src + l * plane)
                                         : cr_load_n(src + l * plane, n);
            dl_transpose(r);
#pragma GCC unroll 16
            for (int p = 0; p < TGC_VLANES; p++)
                if (p < n) tgc_vf_store(dst + (v + p) * TGC_VLANES, r[p]);
        }
    }
}

/* Output row oh (of the band) for multiplier index q into row: pixel ow's
 * channels at row + ow * lanes, DL_P pixels a tile (the last tile repeats
 * its last pixel). */
static void dl_row(const tgc_conv_dw_job *j, const float *px, int64_t cols, int64_t r, int64_t q, float *row) {
    const int64_t taps = j->kh * j->kw;
    const float *wt = j->wt + q * taps * TGC_VLANES;
    const tgc_vf b = j->bias != NULL ? tgc_vf_load(j->bias + q * TGC_VLANES) : tgc_vf_splat(0.0f);
    for (int64_t ow0 = 0; ow0 < j->ow_count; ow0 += DL_P) {
        const float *in[DL_P];
        for (int p = 0; p < DL_P; p++) {
            int64_t ow = ow0 + p < j->ow_count ? ow0 + p : j->ow_count - 1;
            in[p] = px + (r * j->sh * cols + ow * j->sw) * TGC_VLANES;
        }
        tgc_vf acc[DL_P];
#pragma GCC unroll 8
        for (int p = 0; p < DL_P; p++) acc[p] = b;
        for (int64_t i = 0, t = 0; i < j->kh; i++) {
            const int64_t row_off = i * j->dh * cols * TGC_VLANES;
            for (int64_t jj = 0; jj < j->kw; jj++, t++) {
                const tgc_vf w = tgc_vf_load(wt + t * TGC_VLANES);
                const int64_t o = row_off + jj * j->dw * TGC_VLANES;
#pragma GCC unroll 8
                for (int p = 0; p < DL_P; p++) acc[p] = tgc_vmuladd(w, tgc_vf_load(in[p] + o), acc[p]);
            }
        }
#pragma GCC unroll 8
        for (int p = 0; p < DL_P; p++) {
            int64_t ow = ow0 + p < j->ow_count ? ow0 + p : j->ow_count - 1;
            tgc_vf_store(row + ow * TGC_VLANES, acc[p]);
        }
    }
}

/* Row (pixels x channels, ow_count pixels, room for a whole last vector of
 * them) into output row oh of each lane's plane for multiplier index q. */
static void dl_unpack(const tgc_conv_dw_job *j, const float *row, int64_t oh, int64_t q) {
    const int64_t plane = j->oh_count * j->ow_count;
    float *y = j->y + q * plane + oh * j->ow_count;
    for (int64_t v = 0; v < j->ow_count; v += TGC_VLANES) {
        int64_t n = j->ow_count - v < TGC_VLANES ? j->ow_count - v : TGC_VLANES;
        tgc_vf r[TGC_VLANES];
#pragma GCC unroll 16
        for (int p = 0; p < TGC_VLANES; p++) r[p] = tgc_vf_load(row + (v + p) * TGC_VLANES);
        dl_transpose(r);
#pragma GCC unroll 16
        for (int l = 0; l < TGC_VLANES; l++) {
            float *dst = y + l * j->mult * plane + v;
            if (l >= j->nl) break;
            if (n == TGC_VLANES) tgc_vf_store(dst, r[l]);
            else cr_store_n(dst, r[l], n);
        }
    }
}

/* tgc_conv_isa.dw_block: pack the band, then each output row of each
 * multiplier index through registers, the activation and back. */
static void dl_block(const tgc_conv_dw_job *j) {
    const int64_t in_rows = (j->rows - 1) * j->sh + (j->kh - 1) * j->dh + 1;
    const int64_t cols = (j->ow_count - 1) * j->sw + (j->kw - 1) * j->dw + 1;
    float *px = j->scratch, *row = px + in_rows * cols * TGC_VLANES;
    dl_pack(j, px, in_rows, cols);
    for (int64_t r = 0; r < j->rows; r++)
        for (int64_t q = 0; q < j->mult; q++) {
            dl_row(j, px, cols, r, q, row);
            tgc_cpu_act_block(j->act, row, 0, 0, 1, 0, j->ow_count * TGC_VLANES);
            dl_unpack(j, row, j->oh0 + r, q);
        }
}

#endif
