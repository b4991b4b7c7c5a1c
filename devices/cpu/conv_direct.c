/* Direct convolution for depthwise Conv (group == C: MobileNet, EfficientNet,
 * ConvNeXt) and grouped Conv with few channels a group, 1-D and 2-D,
 * float32, NCHW, any kernel size, strides, dilations and pads.
 *
 * im2col would copy kh*kw times the input to multiply it by a matrix of
 * one row (depthwise) or a few (narrow groups), and a loop over taps that
 * adds each tap into Y makes kh*kw passes over Y. Instead each output is
 * computed in a register over all of its taps and stored once, by one of
 * two methods, chosen by the output's width:
 *
 * Rows (the row kernel, conv_rows.h), for outputs wider than a vector or
 * two:
 *   1. Pack. A piece of work is one image, one or more groups (one input
 *      channel a group when depthwise) and a band of output rows. A
 *      group's input rows are copied into a scratch block with the padding
 *      written out as zeros, split by phase: with strides (sh, sw), padded
 *      row u * sh + a and column v * sw + b go to phase plane (a, b) at
 *      (u, v) (a polyphase split, as XNNPACK's stride-2 CHW depthwise
 *      kernels, f32-dwconv2d-chw, deinterleave even and odd columns). Then
 *      output (oh, ow)'s tap (i, j) reads phase plane ((i*dh) % sh,
 *      (j*dw) % sw) at row oh + (i*dh) / sh and column ow + (j*dw) / sw:
 *      for every stride and dilation a tap is one offset, and a row of
 *      outputs reads a contiguous run of each plane. Padding costs nothing
 *      past the copy: no tap is ever clipped, and there are no branches
 *      within a row. A 1x1 window at stride 1 without pads needs no copy:
 *      its band is read where it lies, as one long row, partial vectors
 *      through a mask (MNASNet's 1x1 layers on 16-48 channels, the node
 *      alone, 1 thread, AVX-512: 32 -> 16 over 112x112 109 -> 86 us, 16 ->
 *      48 135 -> 129, 48 -> 24 over 56x56 63 -> 55; ORT 78, 97, 47).
 *   2. Compute. y[k][r][f] = bias[k] + sum over taps t of w[k][t] *
 *      block[r * pitch + off[t] + f], 1, 2, 4 or (AVX-512) 8 output
 *      channels by up to 4 vectors in registers (a channel multiplier or a group's outputs
 *      share each load).
 *      Depthwise windows of 3x3, 5x5 and 7x7 at stride 1 and 3x3 and 5x5
 *      at stride 2 (one input channel a job) take tgc_conv_isa.dw_rows:
 *      4 output rows a tile, each phase row loaded once for every output
 *      row of the tile that reads it (the bits of the general kernel,
 *      tested so; bench_conv_families' depthwise layers, 1 thread, Zen 5:
 *      MobileNetV2 0.93 -> 0.80 ms, MobileNetV3-Large 0.72 -> 0.61,
 *      EfficientNet-B0 1.30 -> 1.04, ConvNeXt-T 2.66 -> 2.54).
 *      Those tgc_conv_dw_plane_applies takes (3x3 and 7x7 at stride 1,
 *      3x3 and 5x5 at stride 2, pads as trained models have them) skip
 *      step 1: tgc_conv_isa.dw_plane forms each input row's column taps
 *      in registers from loads of X (at stride 2 the even and odd lanes
 *      of pairs of loads; taps left of the row moved up a lane), the same
 *      sums in the same order. Node medians, 1 thread: MNASNet's 3x3 of
 *      48 channels from 112x112 at stride 2, in the model, 196 -> 121 us
 *      (ORT 106); alone, 3x3 of 32 channels on 112x112 214 -> 158, 7x7 of
 *      96 on 56x56 651 -> 548.
 *      Dense and grouped 3x3 layers at stride 2 with at least 8 input
 *      channels a group skip step 1 as well: tgc_conv_isa.plane_rows
 *      (conv_plane_rows.h) forms the column taps from loads of X, where
 *      packing the four phase planes copied the whole input first. Node
 *      medians, the layer alone, 1 and 2 threads: 4 groups of 16 from
 *      112x112 (RegNetX's stage entry) 438 -> 409 and 271 -> 213 us, 8
 *      groups of 16 from 56x56 245 -> 221 and 168 -> 148; a 3-channel
 *      stem lost (220 -> 244: its few taps a row do not pay for the
 *      shuffles), and so did stride 1 (16 -> 64 over 55x55 320 -> 387:
 *      its packing is one plain copy).
 *      Rows much narrower than their vectors (7x7 maps) go as one long
 *      row a band, rows ow + qj_max apart, into a stage, then into Y
 *      (long_rows_pay).
 *   3. The fused activation (c->fused_act) runs over the band just
 *      written, while it is in cache.
 * Lanes (conv_dw_lanes.h), for depthwise outputs of 7x7 and strided ones
 * up to 16 wide, where a row is a vector or less: a block of 8 or 16
 * channels is transposed so that each pixel is a vector of channels (the
 * blocked layout oneDNN and ONNX Runtime keep whole networks in), every
 * tap of a tile of 8 pixels is added in registers, and the rows are
 * transposed back, through the activation first.
 * By channels (conv_channel_lanes.h), for an image's first layer at
 * stride 3 or 4 (by_channels_pays): each band's input rows are copied
 * with their padding (pack_padded; no phase planes), W is transposed once
 * into blocks of a vector's channels (the node's kernel cache), and a
 * tile of positions by two blocks of channels takes one broadcast of the
 * input a position and one load of weights a block for every tap: the
 * row kernel's sums, the output channels in the lanes.
 * The vector kernels come in one build per ISA (conv_isa_*.c), the one the
 * elementwise loops run (ew_dispatch.c's cpuid choice).
 *
 * Pieces come from the sizes alone (bands near PACK_FLOATS or
 * LANES_FLOATS of packed input, whole groups up to PIECE_MACS, chunks of
 * output channels below MIN_PIECES), and an
 * output's arithmetic (the bias, then its taps in order, one multiply-add
 * each) is the same in any piece, tile, method or vector width of one ISA:
 * the bits do not depend on the thread count. */
#include "devices/cpu/conv_direct.h"

#include "devices/cpu/ew.h"
#include "graph/elementwise.h"
#include "devices/kernel_cache.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <math.h>
#include <string.h>

/* A band's packed input aims at this many floats (32 KiB, in a core's L1 or
 * close to it): it is read kh * kw times. */
#define PACK_FLOATS ((int64_t)8 << 10)

/* Bands of at least HALO_BANDS times the halo's rows (qi_max: the rows a
 * band packs again for the band after it), where that block stays within
 * HALO_PACK_FLOATS (128 KiB): wide rows of many channels a group would
 * otherwise make bands of one or two rows that pack their input twice.
 * RegNetX-800MF's 3x3 layers with 16 channels a group at stride 2 (one
 * band row in 4 packed phase planes of 16 x 64 floats), `tgc run
 * --trace`, node medians of 5 interleaved runs, 1 and 2 threads: 64 x
 * 112x112 in 642 -> 541 and 530 -> 398 us, 128 x 56x56 292 -> 233 and 258
 * -> 202; ResNet-34's and GoogLeNet's 7x7 stems (3 channels at stride 2,
 * 2 band rows) 1306 -> 1204 and 1286 -> 1184 at 1 thread. 8 times the
 * halo within 256 KiB: the stems 3% slower than 4 times. */
#define HALO_BANDS 4
#define HALO_PACK_FLOATS ((int64_t)32 << 10)

/* A piece takes whole groups until it has this many multiply-adds: small
 * maps (7x7, 14x14) would otherwise make pieces of a few hundred. */
#define PIECE_MACS ((int64_t)1 << 16)

/* Fewer pieces than this (per image) and the output channels split too. */
#define MIN_PIECES 8

/* Which Conv takes the direct path (bench/bench_conv_families.c's "direct"
 * against "old", the GEMM paths, at 1 thread, AVX-512 and AVX2 against
 * OpenBLAS's AVX2 kernels): grouped Conv up to 32 channels a group
 * (ResNeXt's 4 to 32: 1.4-4.5x), and one group when a window has at most
 * 48 taps (C * kh * kw: 3x3 and 4x4 stems on RGB, 1x1 on up to 48
 * channels: 1.1-2.6x; 1x1 on 64 channels is even at AVX2, on 96 and more
 * behind) or the input at most 4 channels whatever the kernel (images:
 * ResNet's 7x7 stem 2-3.5x at AVX-512, 1.0-1.2x at AVX2, where im2col
 * copies the input 49 times). */
#define DIRECT_MAX_CG 32
#define DIRECT_MAX_DENSE_TAPS 48
#define DIRECT_MAX_DENSE_CG 4

/* And one group with 3x3 windows at stride 1 over at most 24 channels,
 * which Winograd F(2x2, 3x3) would take otherwise: its 16 GEMMs have K =
 * C, too thin to pay for its transforms. The node alone (`tgc run --trace`, median
 * node time, AVX-512, 1 and 2 threads): 16 -> 64 channels over 55x55
 * (SqueezeNet's fire modules) 304 and 187 us against 431 and 196; 16 ->
 * 32 over 28x28 (GoogLeNet's) 51 and 34 against 95 and 86; 24 -> 64 over
 * 28x28 116 and 74 against 119 and 98; at 32 channels Winograd leads (32
 * -> 64 over 55x55: 503 and 324 against 719 and 401). Below 16 channels
 * the alternative is im2col: 8 -> 32 over 56x56 97 and 70 against 135 and
 * 167. With AVX-512 only: at AVX2 Winograd kept the lead at 1 thread
 * (16 -> 64 over 55x55: 599 against 503 us). */
#define DIRECT_MAX_3X3_CG 24

/* Depthwise outputs up to this wide (or, strided, this wide) run with a
 * channel a lane (conv_dw_lanes.h), wider ones by rows: measured on the
 * layers of bench/bench_conv_families.c at AVX-512 and AVX2, the lanes
 * method is ahead on 7x7 outputs (1.2-1.5x) and on strided ones up to
 * 14 wide (1.3-2.4x: the row method's phase planes cost the most there),
 * level on 14x14 at stride 1 and behind from 28 wide. */
#define LANES_MAX_OW 8
#define LANES_MAX_OW_STRIDED 16

/* Input channels a group at least for tgc_conv_isa.plane_rows: a stem's
 * 3 lost to packing (see the top of the file). */
#define PLANE_ROWS_MIN_CIN 8

/* A band of the row method by channels has this many vectors' lanes of
 * output positions at least (AlexNet's 55-wide rows: bands of 2): its
 * tiles of a few positions then leave few empty. */
#define CHANNELS_MIN_POSITIONS 4

/* The lanes method's band of packed input aims at this many floats. */
#define LANES_FLOATS ((int64_t)16 << 10)

/* One Conv's direct plan, shared by its pieces (read only). */
typedef struct direct_plan {
    const float *x, *w, *bias; /* bias NULL: zeros */
    float *y;
    const tgc_fused_act *act;
    const tgc_conv_isa *isa;
    int64_t channels, m_count, groups, cin, mout; /* C, M, group, C / group, M / group */
    /* The 2-D window (1-D: one row, kernel height 1). */
    int64_t h, wd, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t qi_max, qj_max; /* the furthest tap's row and column shift in its phase plane */
    int64_t lc;             /* floats in a phase plane's row: ow + qj_max */
    int64_t band, bands;    /* output rows a piece; pieces a plane */
    int64_t gb;             /* groups a piece */
    int64_t mc, mchunks;    /* output channels of a group a piece (all but when pieces are few), chunks */
    int64_t plane_floats;   /* one phase plane of a band: (band + qi_max) * lc */
    int64_t *off;           /* [cin * kh * kw]: each tap's offset in the block */
    int64_t *rphases, *cphases, n_rphases, n_cphases; /* the phases taps read: up to kh, kw */
    float **scratch;        /* one block a participant */
    /* The lanes method (depthwise, small maps): channel blocks of lanes,
     * their weights [blocks, mout, kh * kw, lanes] and biases [blocks,
     * mout, lanes] transposed (zeros past C). */
    bool dw_rows; /* one input channel, a square window dw_rows takes (tgc_conv_isa.dw_rows) */
    bool dw_plane; /* dw_rows that tgc_conv_isa.dw_plane takes from X where it lies, nothing packed */
    bool plane_rows; /* rows that tgc_conv_isa.plane_rows takes from X where it lies, nothing packed */
    bool in_place; /* 1x1 at stride 1 without pads: the row kernel reads X where it lies, nothing packed */
    bool long_rows; /* a band's rows as one long row into stage_floats floats a slot, then copied (plan_rows) */
    int64_t stage_floats, stage_floats_at; /* the stage's size, and where it starts after the packed block */
    bool by_lanes;
    int64_t lanes, blocks;
    /* rows by tgc_conv_isa.rows_by_channels from wt: W transposed into
     * [blocks of lanes channels, taps, lanes] (by_channels_pays) */
    bool by_channels;
    const float *wt, *bt; /* the node's kernel cache, or wt_owned */
    float *wt_owned;
} direct_plan;

/* The 2-D view of geometry g (1-D: one row). */
static void view_2d(const tgc_conv_geometry *g, direct_plan *d) {
    const tgc_window *w = &g->w;
    bool two = w->n == 2;
    d->h = two ? w->in[0] : 1;
    d->oh = two ? w->out[0] : 1;
    d->kh = two ? w->kernel[0] : 1;
    d->sh = two ? w->strides[0] : 1;
    d->dh = two ? w->dilations[0] : 1;
    d->ph = two ? w->pads[0] : 0;
    d->wd = w->in[two];
    d->ow = w->out[two];
    d->kw = w->kernel[two];
    d->sw = w->strides[two];
    d->dw = w->dilations[two];
    d->pw = w->pads[two];
    d->qi_max = (d->kh - 1) * d->dh / d->sh;
    d->qj_max = (d->kw - 1) * d->dw / d->sw;
}

/* 3x3 windows at stride 1, dilation 1, over at most DIRECT_MAX_3X3_CG
 * channels, on AVX-512. */
static bool narrow_3x3(const tgc_conv_geometry *g) {
    const tgc_window *w = &g->w;
    return w->n == 2 && g->cg <= DIRECT_MAX_3X3_CG && tgc_cpu_conv_isa()->lanes >= 16 && w->kernel[0] == 3 &&
           w->kernel[1] == 3 && w->strides[0] == 1 && w->strides[1] == 1 && w->dilations[0] == 1 &&
           w->dilations[1] == 1;
}

bool tgc_cpu_conv_direct_applies(const tgc_conv_geometry *g) {
    if (g->w.n > 2) return false;
    if (g->group > 1 ? g->cg > DIRECT_MAX_CG
                     : g->cg > DIRECT_MAX_DENSE_CG && g->cg * g->kk_count > DIRECT_MAX_DENSE_TAPS && !narrow_3x3(g))
        return false;
    direct_plan d;
    view_2d(g, &d);
    /* The padded input a whole plane would pack, against a few times what
     * the input and output planes hold: pads or dilations far past the
     * kernel (nothing a trained model has) go to im2col instead. */
    int64_t rows, cols, packed, in_plane, out_plane, bound;
    if (!tgc_checked_add_i64(d.oh, d.qi_max, &rows) || !tgc_checked_mul_i64(rows, d.sh, &rows) ||
        !tgc_checked_add_i64(d.ow, d.qj_max, &cols) || !tgc_checked_mul_i64(cols, d.sw, &cols) ||
        !tgc_checked_mul_i64(rows, cols, &packed) || !tgc_checked_mul_i64(d.h, d.wd, &in_plane) ||
        !tgc_checked_mul_i64(d.oh, d.ow, &out_plane) || !tgc_checked_add_i64(in_plane, out_plane, &bound) ||
        !tgc_checked_mul_i64(bound, 4, &bound) || !tgc_checked_add_i64(bound, 4096, &bound))
        return false;
    return packed <= bound;
}

/* [*lo, *hi): the v in [0, n) whose input index v * s + off lies in [0, in). */
static void valid_span(int64_t off, int64_t s, int64_t in, int64_t n, int64_t *lo, int64_t *hi) {
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s, e = in - off <= 0 ? 0 : (in - off + s - 1) / s;
    *lo = l < n ? l : n;
    *hi = e < *lo ? *lo : e < n ? e : n;
}

/* Where channel ci's phase plane (a, b) starts in a packed block: the
 * planes of the phases some tap reads (d->rphases, d->cphases), in their
 * order, channel after channel. */
static int64_t phase_plane(const direct_plan *d, int64_t ci, int64_t a, int64_t b) {
    int64_t ia = 0, ib = 0;
    while (ia < d->n_rphases - 1 && d->rphases[ia] != a) ia++;
    while (ib < d->n_cphases - 1 && d->cphases[ib] != b) ib++;
    return ((ci * d->n_rphases + ia) * d->n_cphases + ib) * d->plane_floats;
}

/* pack's row phase a when the column stride is 2 and taps read both
 * column phases (3x3 and 5x5 at stride 2): input column iw, padded
 * column iw + pw, goes to phase (iw + pw) % 2 at (iw + pw) / 2, so the
 * even input columns of a row fill one plane from column pw / 2 and the
 * odd ones the other from (pw + 1) / 2, both in one pass over the row. */
static void pack_pairs(const direct_plan *d, const float *x, int64_t oh0, int64_t a, int64_t lr, int64_t ulo,
                       int64_t uhi, float *block) {
    int64_t ve = d->pw / 2, vo = (d->pw + 1) / 2; /* where column 0 and column 1 land */
    int64_t ne = (d->wd + 1) / 2 < d->lc - ve ? (d->wd + 1) / 2 : d->lc - ve;
    int64_t no = d->wd / 2 < d->lc - vo ? d->wd / 2 : d->lc - vo;
    if (ne < 0) ne = 0; /* pads past the row: all padding */
    if (no < 0) no = 0;
    /* a phase's columns before the first it takes are the left padding */
    unsigned before = (ve > 0 ? TGC_PACK2_EVEN : 0u) | (vo > 0 ? TGC_PACK2_ODD : 0u);
    for (int64_t ci = 0; ci < d->cin; ci++) {
        float *plane[2];
        for (int b = 0; b < 2; b++) plane[b] = block + phase_plane(d, ci, a, b);
        float *even = plane[d->pw % 2] + ve, *odd = plane[(d->pw + 1) % 2] + vo;
        for (int64_t u = 0; d->bands > 1 && u < ulo; u++) {
            memset(even + u * d->lc, 0, (size_t)ne * sizeof *even);
            memset(odd + u * d->lc, 0, (size_t)no * sizeof *odd);
        }
        for (int64_t u = uhi; d->bands > 1 && u < lr; u++) {
            memset(even + u * d->lc, 0, (size_t)ne * sizeof *even);
            memset(odd + u * d->lc, 0, (size_t)no * sizeof *odd);
        }
        if (ulo == uhi || ne == 0) continue;
        const float *src = x + (ci * d->h + (oh0 + ulo) * d->sh + a - d->ph) * d->wd;
        d->isa->pack2(even + ulo * d->lc, odd + ulo * d->lc, d->lc, src, d->sh * d->wd, uhi - ulo, ne, no, before);
    }
}

/* Packs the input rows that output rows [oh0, oh0 + rows) read, of the
 * cin channels at x [cin, h, wd], into block: channel ci's phase plane
 * (a, b) at block + phase_plane(d, ci, a, b), its row u the
 * padded input row (oh0 + u) * sh + a, its column v the padded column
 * v * sw + b. Only the columns that fall inside the input are written
 * (the input, or zeros for a padding row): the others are padding in every
 * row of every piece, and stay the zeros the block was allocated with, as
 * do the planes no tap reads and, when a piece is a whole plane (one
 * band), the padding rows. */
static void pack(const direct_plan *d, const float *x, int64_t oh0, int64_t rows, float *block) {
    int64_t lr = rows + d->qi_max;
    for (int64_t pa = 0; pa < d->n_rphases; pa++) {
        int64_t a = d->rphases[pa], ulo, uhi; /* rows u whose input row (oh0 + u) * sh + a - ph is inside */
        valid_span(oh0 * d->sh + a - d->ph, d->sh, d->h, lr, &ulo, &uhi);
        if (d->sw == 2 && d->n_cphases == 2) {
            pack_pairs(d, x, oh0, a, lr, ulo, uhi, block);
            continue;
        }
        for (int64_t pb = 0; pb < d->n_cphases; pb++) {
            int64_t b = d->cphases[pb], vlo, vhi;
            valid_span(b - d->pw, d->sw, d->wd, d->lc, &vlo, &vhi);
            if (vlo == vhi) continue;
            for (int64_t ci = 0; ci < d->cin; ci++) {
                float *plane = block + phase_plane(d, ci, a, b) + vlo;
                for (int64_t u = 0; d->bands > 1 && u < ulo; u++)
                    memset(plane + u * d->lc, 0, (size_t)(vhi - vlo) * sizeof *plane);
                for (int64_t u = uhi; d->bands > 1 && u < lr; u++)
                    memset(plane + u * d->lc, 0, (size_t)(vhi - vlo) * sizeof *plane);
                if (ulo == uhi) continue;
                const float *src = x + (ci * d->h + (oh0 + ulo) * d->sh + a - d->ph) * d->wd + vlo * d->sw + b - d->pw;
                d->isa->pack(plane + ulo * d->lc, d->lc, src, d->sh * d->wd, uhi - ulo, vhi - vlo, d->sw);
            }
        }
    }
}

/* The row method's packed block starts on a 64-byte boundary, and when
 * taps are wider than one column (kernels 3 or 5 wide) its rows are a
 * whole number of 64-byte lines apart: every vector of a tap in column
 * shift 0 is then one aligned load, where before each crossed two cache
 * lines. bench_conv_families, the depthwise layers of each network at 1
 * thread on a Zen 5 with AVX-512, medians of 3 interleaved runs:
 * MobileNetV2 1.02 -> 0.99 ms, MobileNetV3-Large 0.79 -> 0.76,
 * EfficientNet-B0 1.44 -> 1.36, ConvNeXt-T 2.81 -> 2.76. Kernels 1 wide
 * keep rows as far apart as in Y, so that a band is one long row. */
#define BLOCK_ALIGN_FLOATS 16

static float *block_of(float *scratch) {
    return (float *)(((uintptr_t)scratch + 4 * BLOCK_ALIGN_FLOATS - 1) & ~(uintptr_t)(4 * BLOCK_ALIGN_FLOATS - 1));
}

/* A separate pass over each band just written (out of L1: a band of every
 * channel) cost MobileNetV2 4.4% a run at one thread (`tgc run --trace`,
 * the sums of its nodes' best medians of 8 runs: 4631 -> 4426 us; its 1x1
 * expansion over 96 channels of 112x112 254 -> 229). */
bool tgc_cpu_act_clamp(const tgc_fused_act *act, float *lo, float *hi) {
    if (act == NULL || act->residual != NULL) return false; /* a residual comes first: the epilogue's */
    if (act->row == TGC_EW_Relu) *lo = 0.0f, *hi = INFINITY;
    else if (act->row == TGC_EW_Clip) *lo = act->params[0], *hi = act->params[1];
    else return false;
    return true;
}

/* Whether the row method takes a band's rows as one long row (short
 * rows of taps wider than a column, packed at stride 1): output position
 * u * lc + v of the long row is output (u, v) for v < ow, and the qj_max
 * positions after each row are sums nobody reads. Rows lc = ow + qj_max
 * apart then fill the vectors that rows of their own would leave partly
 * empty: a 7x7 map's row takes one vector of 16 lanes for 7 outputs, a
 * band of 7 rows 4 vectors for 61 positions. Taken where a row alone
 * would leave more than a quarter of its vectors' lanes empty beyond lc;
 * the band is then computed into the slot's stage and copied into Y. An
 * output's sum is the same either way (its taps in order). `tgc run
 * --trace`, node medians of 5 interleaved runs, AVX-512: RegNetX-800MF's
 * 3x3 layers of 16 channels a group on 7x7, 206 -> 145 us at 1 thread
 * and 98 -> 77 at 2 (its stride-2 one 253 -> 206 and 122 -> 104);
 * RegNetY-400MF's of 8 a group on 7x7, 56 -> 44 at 1 thread. At a tenth
 * of the lanes (57 of 64: 55 or 56 wide) the long row lost more than it
 * gained, node medians of 5 interleaved runs, 1 and 2 threads: RegNetX's
 * and RegNetY's grouped stride-2 layers to 56x56 570 -> 578 and 436 ->
 * 494 us, 402 -> 446 and 274 -> 316; SqueezeNet's 16 -> 64 over 55x55
 * 372 -> 360 but 248 -> 275 and 274 -> 321; only AlexNet's 11x11 stem
 * gained (1228 -> 1098, 812 -> 757). */
static bool long_rows_pay(const direct_plan *d) {
    int64_t lanes = d->isa->lanes, row_lanes = (d->ow + lanes - 1) / lanes * lanes;
    return !d->in_place && !d->dw_rows && d->qj_max > 0 && 4 * d->lc <= 3 * row_lanes;
}

/* Output rows [oh0, oh0 + rows) of output channels [m0, m0 + mc) by
 * tgc_conv_isa.dw_plane or plane_rows from the group's input planes at x,
 * into y (output row oh0 of channel m0), then the fused activation the
 * kernel does not apply. */
static void plane_piece(const direct_plan *d, const float *x, int64_t m0, int64_t mc, int64_t oh0, int64_t rows,
                        float *y) {
    int64_t out_plane = d->oh * d->ow, taps = d->cin * d->kh * d->kw;
    tgc_conv_dw_plane_job j = {.x = x, .h = d->h, .wd = d->wd, .ph = d->ph, .pw = d->pw, .cin = d->cin,
                               .in_cs = d->h * d->wd, .oh0 = oh0, .rows = rows, .ow = d->ow, .w = d->w + m0 * taps,
                               .bias = d->bias != NULL ? d->bias + m0 : NULL, .mb = mc, .out = y,
                               .out_cs = out_plane, .out_rs = d->ow};
    j.clamp = tgc_cpu_act_clamp(d->act, &j.lo, &j.hi);
    (d->dw_plane ? d->isa->dw_plane : d->isa->plane_rows)(&j, (int)d->kh, (int)d->sh);
    if (!j.clamp) tgc_cpu_act_block(d->act, y, out_plane, 0, mc, 0, rows * d->ow);
}

/* Row method, piece p: image n, groups [g0, g0 + gb), output rows [oh0,
 * oh0 + rows), output channels [mc0, mc0 + mc) of each group. */
static void rows_piece(void *arg, int64_t p, int slot) {
    const direct_plan *d = arg;
    int64_t band = p % d->bands, q = p / d->bands, chunk = q % d->mchunks, blocks = (d->groups + d->gb - 1) / d->gb;
    int64_t g0 = q / d->mchunks % blocks * d->gb, n = q / d->mchunks / blocks;
    int64_t g1 = g0 + d->gb < d->groups ? g0 + d->gb : d->groups;
    int64_t oh0 = band * d->band, rows = d->oh - oh0 < d->band ? d->oh - oh0 : d->band;
    int64_t mc0 = chunk * d->mc, mc = d->mout - mc0 < d->mc ? d->mout - mc0 : d->mc;
    int64_t out_plane = d->oh * d->ow, taps = d->cin * d->kh * d->kw;
    for (int64_t gi = g0; gi < g1; gi++) {
        int64_t m0 = gi * d->mout + mc0;
        const float *x = d->x + (n * d->channels + gi * d->cin) * d->h * d->wd;
        if (d->dw_plane || d->plane_rows) {
            plane_piece(d, x, m0, mc, oh0, rows, d->y + (n * d->m_count + m0) * out_plane + oh0 * d->ow);
            continue;
        }
        const float *blk = x + oh0 * d->wd;
        if (!d->in_place) {
            float *packed = block_of(d->scratch[slot]);
            pack(d, x, oh0, rows, packed);
            blk = packed;
        }
        float *y = d->y + (n * d->m_count + m0) * out_plane + oh0 * d->ow;
        tgc_conv_rows_job j = {.in = blk, .in_rs = d->lc, .off = d->off, .taps = taps,
                               .w = d->w + m0 * taps, .bias = d->bias != NULL ? d->bias + m0 : NULL, .mb = mc,
                               .out = y, .out_cs = out_plane, .out_rs = d->ow, .rows = rows, .n = d->ow,
                               .exact = d->in_place};
        j.clamp = tgc_cpu_act_clamp(d->act, &j.lo, &j.hi);
        if (d->lc == d->ow) { /* rows as far apart in the block as in Y (kernels 1 wide): one long row */
            j.n = rows * d->ow;
            j.rows = 1;
        }
        if (d->long_rows) { /* one long row into the stage (long_rows_pay), then its rows into Y */
            float *stage = block_of(d->scratch[slot]) + d->stage_floats_at;
            j.out = stage;
            j.out_cs = rows * d->lc;
            j.n = rows * d->lc - d->qj_max;
            j.rows = 1;
            d->isa->rows(&j);
            for (int64_t k = 0; k < mc; k++)
                for (int64_t r = 0; r < rows; r++)
                    memcpy(y + k * out_plane + r * d->ow, stage + k * j.out_cs + r * d->lc,
                           (size_t)d->ow * sizeof *y);
        } else if (d->dw_rows) {
            d->isa->dw_rows(&j, (int)d->kh, (int)d->sh);
        } else {
            d->isa->rows(&j);
        }
        if (!j.clamp) tgc_cpu_act_block(d->act, y, out_plane, 0, mc, 0, rows * d->ow);
    }
}

/* Appends phase p to list[0 .. *n) unless it is there. */
static void add_phase(int64_t *list, int64_t *n, int64_t p) {
    for (int64_t i = 0; i < *n; i++)
        if (list[i] == p) return;
    list[(*n)++] = p;
}

/* Lanes method, piece p: image n, channel block cb, output rows [oh0, oh0 + rows). */
static void lanes_piece(void *arg, int64_t p, int slot) {
    const direct_plan *d = arg;
    int64_t band = p % d->bands, cb = p / d->bands % d->blocks, n = p / d->bands / d->blocks;
    int64_t c0 = cb * d->lanes, taps = d->kh * d->kw, out_plane = d->oh * d->ow;
    tgc_conv_dw_job j = {.x = d->x + (n * d->channels + c0) * d->h * d->wd,
                         .nl = d->channels - c0 < d->lanes ? d->channels - c0 : d->lanes, .h = d->h, .w = d->wd,
                         .oh_count = d->oh, .ow_count = d->ow, .kh = d->kh, .kw = d->kw, .sh = d->sh, .sw = d->sw,
                         .dh = d->dh, .dw = d->dw, .ph = d->ph, .pw = d->pw, .oh0 = band * d->band, .mult = d->mout,
                         .wt = d->wt + cb * d->mout * taps * d->lanes, .bias = d->bt + cb * d->mout * d->lanes,
                         .y = d->y + (n * d->m_count + c0 * d->mout) * out_plane, .act = d->act,
                         .scratch = d->scratch[slot]};
    j.rows = d->oh - j.oh0 < d->band ? d->oh - j.oh0 : d->band;
    bool residual = d->act != NULL && d->act->residual != NULL;
    if (residual) j.act = NULL; /* the kernel applies it to lanes in scratch; a residual needs Y's own places */
    d->isa->dw_block(&j);
    if (residual) tgc_cpu_act_block(d->act, j.y + j.oh0 * d->ow, out_plane, 0, j.nl * d->mout, 0, j.rows * d->ow);
}

/* Copies the input rows that output rows [oh0, oh0 + rows) read, of the
 * cin channels at x [cin, h, wd], into block with their padding as zeros:
 * channel ci's row u (padded input row oh0 * sh + u) at block + ci *
 * plane_floats + u * lc, its column v the padded column v. */
static void pack_padded(const direct_plan *d, const float *x, int64_t oh0, int64_t rows, float *block) {
    int64_t in_rows = (rows - 1) * d->sh + (d->kh - 1) * d->dh + 1;
    int64_t v0 = d->pw < d->lc ? d->pw : d->lc, v1 = d->pw + d->wd < d->lc ? d->pw + d->wd : d->lc;
    for (int64_t ci = 0; ci < d->cin; ci++)
        for (int64_t u = 0; u < in_rows; u++) {
            float *dst = block + ci * d->plane_floats + u * d->lc;
            int64_t ih = oh0 * d->sh - d->ph + u;
            if (ih < 0 || ih >= d->h || v0 >= v1) {
                memset(dst, 0, (size_t)d->lc * sizeof *dst);
                continue;
            }
            memset(dst, 0, (size_t)v0 * sizeof *dst);
            memcpy(dst + v0, x + (ci * d->h + ih) * d->wd + (v0 - d->pw), (size_t)(v1 - v0) * sizeof *dst);
            memset(dst + v1, 0, (size_t)(d->lc - v1) * sizeof *dst);
        }
}

/* Row method by channels, piece p: image n, output rows [oh0, oh0 +
 * rows), output channels [mc0, mc0 + mc). */
static void channels_piece(void *arg, int64_t p, int slot) {
    const direct_plan *d = arg;
    int64_t band = p % d->bands, chunk = p / d->bands % d->mchunks, n = p / d->bands / d->mchunks;
    int64_t oh0 = band * d->band, rows = d->oh - oh0 < d->band ? d->oh - oh0 : d->band;
    int64_t mc0 = chunk * d->mc, mc = d->m_count - mc0 < d->mc ? d->m_count - mc0 : d->mc;
    int64_t out_plane = d->oh * d->ow, taps = d->cin * d->kh * d->kw;
    float *block = block_of(d->scratch[slot]), *y = d->y + (n * d->m_count + mc0) * out_plane + oh0 * d->ow;
    pack_padded(d, d->x + n * d->channels * d->h * d->wd, oh0, rows, block);
    tgc_conv_rows_job j = {.in = block, .in_rs = d->sh * d->lc, .in_ps = d->sw, .off = d->off, .taps = taps,
                           .bias = d->bias != NULL ? d->bias + mc0 : NULL, .mb = mc, .out = y,
                           .out_cs = out_plane, .out_rs = d->ow, .rows = rows, .n = d->ow};
    j.clamp = tgc_cpu_act_clamp(d->act, &j.lo, &j.hi);
    d->isa->rows_by_channels(&j, d->wt + mc0 * taps);
    if (!j.clamp) tgc_cpu_act_block(d->act, y, out_plane, 0, mc, 0, rows * d->ow);
}

const tgc_conv_isa *tgc_cpu_conv_isa(void) {
    const char *isa = tgc_cpu_ew_loops()->isa;
    if (strcmp(isa, tgc_conv_isa_avx512.isa) == 0) return &tgc_conv_isa_avx512;
    if (strcmp(isa, tgc_conv_isa_avx2.isa) == 0) return &tgc_conv_isa_avx2;
    return &tgc_conv_isa_sse2;
}

/* The row method's bands, groups a piece and tap offsets (into d->off,
 * allocated here); *floats: the scratch block a participant needs. */
static bool plan_rows(direct_plan *d, int64_t *floats) {
    d->dw_rows = d->cin == 1 && d->kh == d->kw && d->sh == d->sw && d->dh == 1 && d->dw == 1 &&
                 ((d->sh == 1 && (d->kh == 3 || d->kh == 5 || d->kh == 7)) ||
                  (d->sh == 2 && (d->kh == 3 || d->kh == 5)));
    d->in_place = d->kh == 1 && d->kw == 1 && d->sh == 1 && d->sw == 1 && d->ph == 0 && d->pw == 0 &&
                  d->oh == d->h && d->ow == d->wd;
    d->dw_plane = d->dw_rows && tgc_conv_dw_plane_applies(d->kw, d->sw, d->pw);
    d->lc = d->ow + d->qj_max;
    d->long_rows = long_rows_pay(d);
    d->plane_rows = !d->long_rows && !d->dw_rows && d->kh == d->kw && d->sh == d->sw && d->dh == 1 && d->dw == 1 &&
                    tgc_conv_plane_rows_applies(d->kw, d->sw, d->pw) && d->cin >= PLANE_ROWS_MIN_CIN;
    if (d->qj_max > 0 && !d->long_rows)
        d->lc = (d->lc + BLOCK_ALIGN_FLOATS - 1) / BLOCK_ALIGN_FLOATS * BLOCK_ALIGN_FLOATS;
    /* Bands: the packed block near PACK_FLOATS, HALO_BANDS times the halo's
     * rows where that fits in HALO_PACK_FLOATS, the halo's rows at least.
     * The plane sizes passed tgc_cpu_conv_direct_applies's checks, so only
     * the products with cin can overflow. */
    int64_t per_row, taps = d->cin * d->kh * d->kw;
    if ((d->off = tgc_malloc((size_t)(taps + d->kh + d->kw) * sizeof *d->off)) == NULL) return false;
    /* The row and column phases some tap reads, each once: only their
     * planes are packed (a 1x1 window at stride 2 reads one of four). */
    d->rphases = d->off + taps;
    d->cphases = d->rphases + d->kh;
    for (int64_t i = 0; i < d->kh; i++) add_phase(d->rphases, &d->n_rphases, i * d->dh % d->sh);
    for (int64_t jj = 0; jj < d->kw; jj++) add_phase(d->cphases, &d->n_cphases, jj * d->dw % d->sw);
    if (!tgc_checked_mul_i64(d->cin * d->n_rphases * d->n_cphases, d->lc, &per_row)) return false;
    d->band = PACK_FLOATS / per_row - d->qi_max;
    if (d->band < HALO_BANDS * d->qi_max && d->qi_max <= HALO_PACK_FLOATS / (HALO_BANDS + 1) / per_row)
        d->band = HALO_BANDS * d->qi_max;
    if (d->band < d->qi_max) d->band = d->qi_max;
    if (d->band < 1) d->band = 1;
    if (d->band > d->oh) d->band = d->oh;
    d->bands = (d->oh + d->band - 1) / d->band;
    d->plane_floats = (d->band + d->qi_max) * d->lc;
    if (d->in_place) { /* a channel's "plane" is its whole input plane, and nothing is packed */
        d->plane_floats = d->h * d->wd;
        *floats = 0;
    } else if (d->dw_plane || d->plane_rows) {
        *floats = 0;
    } else if (!tgc_checked_mul_i64(per_row, d->band + d->qi_max, floats) ||
        !tgc_checked_add_i64(*floats, TGC_CONV_ROWS_MAX_LANES + BLOCK_ALIGN_FLOATS, floats))
        return false;
    /* Groups a piece: enough to pass PIECE_MACS multiply-adds (small maps). */
    int64_t macs = d->band * d->ow * taps * d->mout;
    d->gb = macs >= PIECE_MACS ? 1 : PIECE_MACS / (macs > 0 ? macs : 1);
    if (d->gb > d->groups) d->gb = d->groups;
    /* Few pieces (one image, one group, a band or two: 1-D and small 2-D
     * Convs on few channels): the output channels split too, each chunk
     * packing the input again, into MIN_PIECES pieces if there are enough
     * channels (chunks of whole tiles of 4). */
    int64_t pieces = ((d->groups + d->gb - 1) / d->gb) * d->bands;
    d->mc = d->mout;
    if (pieces < MIN_PIECES && d->mout >= 8) {
        int64_t want = (MIN_PIECES + pieces - 1) / pieces;
        d->mc = (d->mout + want - 1) / want;
        d->mc = (d->mc + 3) / 4 * 4;
    }
    d->mchunks = (d->mout + d->mc - 1) / d->mc;
    d->stage_floats_at = *floats - BLOCK_ALIGN_FLOATS; /* past the block's slack, from the aligned start */
    if (d->long_rows && (!tgc_checked_mul_i64(d->mc * d->band, d->lc, &d->stage_floats) ||
                         !tgc_checked_add_i64(*floats, d->stage_floats, floats)))
        return false;
    for (int64_t ci = 0, t = 0; ci < d->cin; ci++)
        for (int64_t i = 0; i < d->kh; i++)
            for (int64_t jj = 0; jj < d->kw; jj++, t++)
                d->off[t] = phase_plane(d, ci, i * d->dh % d->sh, jj * d->dw % d->sw) + i * d->dh / d->sh * d->lc +
                            jj * d->dw / d->sw;
    return true;
}

/* dst[((b * mult + q) * taps + t) * lanes + l] = src[((b * lanes + l) *
 * mult + q) * taps + t] for every block b of lanes rows of src's count
 * (rows past count, or src NULL: zeros): each row's taps for a multiplier
 * index q, a row a vector lane. */
static void to_lanes(const float *src, int64_t count, int64_t mult, int64_t taps, int64_t lanes, float *dst) {
    for (int64_t b = 0; b < (count + lanes - 1) / lanes; b++)
        for (int64_t q = 0; q < mult; q++)
            for (int64_t t = 0; t < taps; t++)
                for (int64_t l = 0; l < lanes; l++, dst++) {
                    int64_t row = b * lanes + l;
                    *dst = src != NULL && row < count ? src[(row * mult + q) * taps + t] : 0.0f;
                }
}

/* The weights the plan's lanes method or method by channels reads,
 * transposed (to_lanes): the lanes method's W as [channel blocks, mout,
 * kh * kw, lanes] and then B as [channel blocks, mout, lanes]; by
 * channels W as [output channel blocks, cin * kh * kw, lanes]. *floats:
 * their count (false on overflow). */
static bool transposed_floats(const direct_plan *d, int64_t *floats) {
    int64_t lanes = d->isa->lanes;
    if (d->by_channels)
        return tgc_checked_mul_i64((d->m_count + lanes - 1) / lanes * lanes, d->cin * d->kh * d->kw, floats);
    return tgc_checked_mul_i64((d->channels + lanes - 1) / lanes * lanes * d->mout, d->kh * d->kw + 1, floats);
}

/* Which inputs (bit i: input i) transposed_floats's block stands for once
 * in the kernel cache: W, and B for the lanes method (by channels reads B
 * where it lies). */
static uint32_t transposed_inputs(const direct_plan *d, bool has_bias) {
    return 1u << 1 | (!d->by_channels && has_bias ? 1u << 2 : 0u);
}

/* Where the lanes method's transposed B starts in transposed_floats's
 * block: after W's channel blocks (a product transposed_floats checked). */
static int64_t lanes_bias_at(const direct_plan *d) {
    int64_t lanes = d->isa->lanes;
    return (d->channels + lanes - 1) / lanes * d->mout * d->kh * d->kw * lanes;
}

/* transposed_floats's block, from tgc_malloc (NULL without memory). */
static float *transpose_weights(const direct_plan *d, int64_t floats) {
    float *wt = tgc_malloc((size_t)floats * sizeof *wt);
    if (wt == NULL) return NULL;
    int64_t lanes = d->isa->lanes, taps = d->kh * d->kw;
    if (d->by_channels) {
        to_lanes(d->w, d->m_count, 1, d->cin * taps, lanes, wt);
    } else {
        to_lanes(d->w, d->channels, d->mout, taps, lanes, wt);
        to_lanes(d->bias, d->channels, d->mout, 1, lanes, wt + lanes_bias_at(d));
    }
    return wt;
}

/* tgc_kernel_cache_build for the transposed weights (arg: the plan). */
static void *build_weights(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const direct_plan *d = arg;
    int64_t floats;
    if (!transposed_floats(d, &floats)) return NULL;
    *bytes = (size_t)floats * sizeof(float);
    return transpose_weights(d, floats);
}

/* The transposed weights into d->wt: from the node's kernel cache when
 * the inputs they stand for are weights (which they then replace), else
 * into d->wt_owned, allocated here. */
static bool plan_weights(tgc_kernel_ctx *c, direct_plan *d) {
    int64_t floats;
    if (!transposed_floats(d, &floats)) return false;
    uint32_t consts = transposed_inputs(d, d->bias != NULL);
    d->wt = tgc_kernel_cache_get(c, consts, build_weights, d);
    if (d->wt != NULL) tgc_kernel_cache_replaces(c, consts); /* read from the cache only */
    return d->wt != NULL || (d->wt = d->wt_owned = transpose_weights(d, floats)) != NULL;
}

/* The lanes method's bands and transposed weights (from the node's kernel
 * cache when W and B are weights, else into d->wt_owned, allocated here);
 * *floats: the scratch a participant needs. */
static bool plan_lanes(tgc_kernel_ctx *c, direct_plan *d, int64_t *floats) {
    d->lanes = d->isa->lanes;
    d->blocks = (d->channels + d->lanes - 1) / d->lanes;
    int64_t cols = (d->ow - 1) * d->sw + (d->kw - 1) * d->dw + 1;
    d->band = ((LANES_FLOATS / (cols * d->lanes) - (d->kh - 1) * d->dh - 1) / d->sh) + 1;
    if (d->band < 1) d->band = 1;
    if (d->band > d->oh) d->band = d->oh;
    d->bands = (d->oh + d->band - 1) / d->band;
    tgc_conv_dw_job probe = {.rows = d->band, .ow_count = d->ow, .kh = d->kh, .kw = d->kw, .sh = d->sh,
                             .sw = d->sw, .dh = d->dh, .dw = d->dw};
    *floats = tgc_conv_dw_scratch_floats(&probe, d->lanes);
    if (!plan_weights(c, d)) return false;
    d->bt = d->wt + lanes_bias_at(d);
    return true;
}

/* Whether the row method runs by channels (conv_channel_lanes.h, on
 * padded rows: pack_padded, plan_channels): one group over an image's few
 * channels, a vector of output channels at least, strides 3 to 4 in
 * both axes. bench_conv_families' stems, ms, medians of 4 alternating
 * runs of 7 (rows -> by channels), 1 and 2 threads:
 *   AVX-512: AlexNet's 11x11 at 4 0.92 -> 0.73 and 0.52 -> 0.38,
 *            ConvNeXt's 4x4 at 4 0.225 -> 0.176 and 0.135 -> 0.101,
 *            7x7 at 3 0.64 -> 0.63 and 0.37 -> 0.33, 3x3 at 3 (3 -> 32)
 *            0.118 -> 0.077 and 0.087 -> 0.058;
 *   AVX2:    1.69 -> 1.52 and 0.86 -> 0.86, 0.39 -> 0.33 and 0.21 ->
 *            0.215, 1.29 -> 1.10 and 0.74 -> 0.60, 0.165 -> 0.12 and
 *            0.11 -> 0.075.
 * At stride 2 the row kernel's full vectors lead (AVX-512, 1 thread:
 * 3x3 3 -> 64 0.264 against 0.301; 7x7 3 -> 64 1.111 against 1.234);
 * from stride 8 a tile's broadcasts each fall in a cache line of their
 * own (ViT's 16x16 at 16: 1.85 against 1.83, level). */
static bool by_channels_pays(const direct_plan *d) {
    return d->groups == 1 && d->cin <= DIRECT_MAX_DENSE_CG && d->mout >= d->isa->lanes && d->sh >= 3 &&
           d->sh <= 4 && d->sw >= 3 && d->sw <= 4;
}

/* The method for d's view: the lanes method for depthwise with a vector's
 * worth of channels at least on narrow outputs, by channels where
 * by_channels_pays, else rows (plan_rows picks among its kernels). */
static void choose_method(direct_plan *d) {
    d->by_lanes = d->cin == 1 && d->groups > 1 && d->channels >= d->isa->lanes &&
                  (d->ow <= LANES_MAX_OW || (d->sw > 1 && d->ow <= LANES_MAX_OW_STRIDED));
    d->by_channels = !d->by_lanes && by_channels_pays(d);
}

/* The row method by channels: bands of CHANNELS_MIN_POSITIONS vectors of
 * output positions, their padded input rows (pack_padded) and tap
 * offsets (into d->off, allocated here), chunks of output channels when
 * bands are few, and the weights by channels; *floats: the scratch a
 * participant needs. */
static bool plan_channels(tgc_kernel_ctx *c, direct_plan *d, int64_t *floats) {
    int64_t lanes = d->isa->lanes, taps = d->cin * d->kh * d->kw;
    d->lc = (d->ow - 1) * d->sw + (d->kw - 1) * d->dw + 1; /* the padded columns the outputs read */
    d->band = (CHANNELS_MIN_POSITIONS * lanes + d->ow - 1) / d->ow;
    if (d->band > d->oh) d->band = d->oh;
    d->bands = (d->oh + d->band - 1) / d->band;
    /* The plane sizes passed tgc_cpu_conv_direct_applies's checks; the
     * products with cin and the slack are checked. */
    d->plane_floats = ((d->band - 1) * d->sh + (d->kh - 1) * d->dh + 1) * d->lc;
    if (!tgc_checked_mul_i64(d->cin, d->plane_floats, floats) ||
        !tgc_checked_add_i64(*floats, TGC_CONV_ROWS_MAX_LANES * (d->sw + 1) + BLOCK_ALIGN_FLOATS, floats))
        return false;
    d->mc = d->m_count;
    if (d->bands < MIN_PIECES && d->m_count > 2 * lanes) { /* chunks of whole pairs of channel blocks */
        int64_t want = (MIN_PIECES + d->bands - 1) / d->bands;
        d->mc = (d->m_count + want - 1) / want;
        d->mc = (d->mc + 2 * lanes - 1) / (2 * lanes) * (2 * lanes);
    }
    d->mchunks = (d->m_count + d->mc - 1) / d->mc;
    d->gb = 1;
    if ((d->off = tgc_malloc((size_t)taps * sizeof *d->off)) == NULL) return false;
    for (int64_t ci = 0, t = 0; ci < d->cin; ci++)
        for (int64_t i = 0; i < d->kh; i++)
            for (int64_t jj = 0; jj < d->kw; jj++, t++)
                d->off[t] = ci * d->plane_floats + i * d->dh * d->lc + jj * d->dw;
    return plan_weights(c, d);
}

/* Frees s[0 .. count) (NULL entries allowed) and s itself; s may be NULL. */
static void free_scratch(float **s, int count) {
    for (int i = 0; s != NULL && i < count; i++) tgc_free(s[i]);
    tgc_free(s);
}

void tgc_cpu_conv_direct_footprint(const tgc_conv_geometry *g, uint32_t const_inputs, tgc_kernel_footprint *out) {
    direct_plan d = {.isa = tgc_cpu_conv_isa(), .channels = g->channels, .m_count = g->m_count, .groups = g->group,
                     .cin = g->cg, .mout = g->m_count / g->group};
    view_2d(g, &d);
    choose_method(&d);
    uint32_t consts = transposed_inputs(&d, g->has_bias);
    int64_t floats;
    if ((d.by_lanes || d.by_channels) && (const_inputs & consts) == consts && transposed_floats(&d, &floats))
        out->cache_bytes = floats * (int64_t)sizeof(float), out->replaces_inputs = consts;
}

tgc_status tgc_cpu_conv_direct(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                               const float *bias, float *y) {
    direct_plan d = {.x = x, .w = w, .bias = bias, .y = y, .act = c->fused_act, .isa = tgc_cpu_conv_isa(),
                     .channels = g->channels, .m_count = g->m_count, .groups = g->group, .cin = g->cg,
                     .mout = g->m_count / g->group};
    view_2d(g, &d);
    choose_method(&d);
    int64_t floats = 0;
    size_t bytes = 0;
    int width = tgc_parallel_width(c->pool);
    bool ok = (d.by_lanes      ? plan_lanes(c, &d, &floats)
               : d.by_channels ? plan_channels(c, &d, &floats)
                               : plan_rows(&d, &floats)) &&
              tgc_checked_mul_size((size_t)floats, sizeof(float), &bytes);
    if (ok && c->prepack_only) { /* the cache is built: nothing to compute */
        tgc_free(d.off);
        tgc_free(d.wt_owned);
        return TGC_OK;
    }
    if (ok && bytes > 0) ok = (d.scratch = tgc_calloc((size_t)width, sizeof *d.scratch)) != NULL;
    for (int s = 0; ok && bytes > 0 && s < width; s++) ok = (d.scratch[s] = tgc_calloc(1, bytes)) != NULL;
    if (ok) {
        int64_t pieces = d.by_lanes ? g->batch * d.blocks * d.bands
                                    : g->batch * ((d.groups + d.gb - 1) / d.gb) * d.mchunks * d.bands;
        tgc_parallel_for(c->pool, pieces, d.by_lanes ? lanes_piece : d.by_channels ? channels_piece : rows_piece, &d);
    }
    tgc_free(d.off);
    tgc_free(d.wt_owned);
    free_scratch(d.scratch, d.scratch != NULL ? width : 0);
    if (!ok) return tgc_kernel_fail(c, "out of host memory for Conv's packed input (%d x %zu bytes)", width, bytes);
    return TGC_OK;
}
