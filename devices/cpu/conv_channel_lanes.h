/* The row kernel's sums with output channels in a vector's lanes
 * (devices/cpu/conv_direct.h's tgc_conv_isa.rows_by_channels), for one
 * vector ISA: included after conv_rows.h and conv_dw_lanes.h by
 * devices/cpu/conv_isa_{sse2,avx2,avx512}.c.
 *
 * The row kernel keeps output positions in the lanes and broadcasts a
 * weight a channel. An image's first layer at stride 4 (AlexNet's 11x11,
 * ConvNeXt's and Swin's 4x4) leaves it 16 phase planes a channel to pack
 * and short rows in each. Here a tap's weights for a block of channels are
 * one aligned vector (W transposed once: [channel blocks, taps, lanes]) and
 * each output position one broadcast of its input, read where the padded
 * input row has it (in_ps floats apart: no phase planes). A tile of CL_P
 * positions by two blocks of channels is held in registers over every
 * tap: the layout ONNX Runtime's MLAS (its NCHW-to-NCHWc convolution) and
 * oneDNN compute an image's first layer in. The tile is transposed back
 * (conv_dw_lanes.h's dl_transpose) into the output planes. Each output is
 * the row kernel's sum: the bias, then every tap in order, one
 * tgc_vmuladd each, so the bits are tgc_conv_isa.rows's on the same
 * inputs. */
#ifndef TGC_DEVICES_CPU_CONV_CHANNEL_LANES_H
#define TGC_DEVICES_CPU_CONV_CHANNEL_LANES_H

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/simd.h"

#include <stdint.h>

/* Output positions a tile: with two blocks of channels, 2 * CL_P
 * accumulators beside two weight vectors and a broadcast (AVX-512: 31 of
 * 32 registers; AVX2: 15 of 16). At most a vector's lanes: the tile is
 * transposed as one lanes x lanes block. bench_conv_families' stems, 1
 * thread, AVX-512, medians of 3 rounds of 15: 14 positions against 12,
 * AlexNet's 0.731 against 0.753 ms, ConvNeXt's 0.161 against 0.167. */
#define CL_P (TGC_VLANES == 16 ? 14 : TGC_VLANES == 8 ? 6 : 4)

/* Channels [k0, k0 + nb * lanes) (those below j->mb) at positions [f, f +
 * np) of row r. Reads CL_P positions of every tap (the block's slack
 * covers the ones past np); writes the np. */
static inline __attribute__((always_inline)) void cl_tile(const tgc_conv_rows_job *j, const float *wt, int64_t r,
                                                          int64_t f, int64_t np, int64_t k0, const int nb) {
    const int64_t taps = j->taps, L = TGC_VLANES;
    const int64_t ps = j->in_ps;
    const float *in = j->in + r * j->in_rs + f * ps, *w = wt + k0 * taps;
    tgc_vf acc[2][CL_P];
#pragma GCC unroll 2
    for (int b = 0; b < nb; b++) {
        int64_t left = j->mb - k0 - b * L;
        tgc_vf bias = j->bias == NULL ? tgc_vf_splat(0.0f)
                      : left >= L     ? tgc_vf_load(j->bias + k0 + b * L)
                                      : cr_load_n(j->bias + k0 + b * L, left);
#pragma GCC unroll 16
        for (int p = 0; p < CL_P; p++) acc[b][p] = bias;
    }
    for (int64_t t = 0; t < taps; t++) {
        const float *x = in + j->off[t];
        tgc_vf w0 = tgc_vf_load(w + t * L), w1 = nb > 1 ? tgc_vf_load(w + (taps + t) * L) : w0;
#pragma GCC unroll 16
        for (int p = 0; p < CL_P; p++) {
            tgc_vf xp = tgc_vf_splat(x[p * ps]);
            acc[0][p] = tgc_vmuladd(w0, xp, acc[0][p]);
            if (nb > 1) acc[1][p] = tgc_vmuladd(w1, xp, acc[1][p]);
        }
    }
    const tgc_vf lo = tgc_vf_splat(j->lo), hi = tgc_vf_splat(j->hi), zero = tgc_vf_splat(0.0f);
#pragma GCC unroll 2
    for (int b = 0; b < nb; b++) {
        tgc_vf v[TGC_VLANES];
#pragma GCC unroll 16
        for (int p = 0; p < TGC_VLANES; p++)
            v[p] = p >= CL_P ? zero : j->clamp ? cr_clamp(acc[b][p], lo, hi) : acc[b][p];
        dl_transpose(v); /* v[l]: channel k0 + b * lanes + l at the tile's positions */
        int64_t left = j->mb - k0 - b * L;
        float *out = j->out + (k0 + b * L) * j->out_cs + r * j->out_rs + f;
#pragma GCC unroll 16
        for (int l = 0; l < TGC_VLANES; l++) {
            if (l >= left) break;
            cr_store_n(out + l * j->out_cs, v[l], np);
        }
    }
}

/* tgc_conv_isa.rows_by_channels: two blocks of channels at a time while
 * two are left (their weights stay in cache), over every row in tiles of
 * CL_P positions. */
static void cl_run(const tgc_conv_rows_job *j, const float *wt) {
    const int64_t L = TGC_VLANES;
    for (int64_t k0 = 0; k0 < j->mb; k0 += 2 * L)
        for (int64_t r = 0; r < j->rows; r++)
            for (int64_t f = 0; f < j->n; f += CL_P) {
                int64_t np = j->n - f < CL_P ? j->n - f : CL_P;
                if (j->mb - k0 > L) cl_tile(j, wt, r, f, np, k0, 2);
                else cl_tile(j, wt, r, f, np, k0, 1);
            }
}

#endif
