/* Integer convolutions on the cpu (ONNX opset 17): ConvInteger and
 * QLinearConv, following ONNX's reference implementation
 * (onnx/reference/ops/op_conv_integer.py, op_qlinear_conv.py):
 *
 *   ConvInteger   Y = Conv(X - x_zp, W - w_zp) in integers, exactly, the
 *                 int64 sum stored as int32 (wrapping as numpy's int32 does)
 *   QLinearConv   that sum plus the int32 bias B, times the float32
 *                 multiplier x_scale * w_scale[m] / y_scale in double, plus
 *                 y_zp, rint (half to even), saturated to Y's 8-bit type.
 *
 * The uint8 operands and zero points move down by 128 to int8 (quant.h:
 * tgc_cpu_q8_shift; the differences are unchanged). The sums are made one
 * block of output positions at a time, one of three ways:
 *   - depthwise windows (one input channel per group, at most
 *     DEPTHWISE_MAX_TAPS taps, 2-D): straight from X's channel, padded once
 *     and split by column phase so that every tap of a strided window reads
 *     consecutive bytes (MLAS's depthwise kernels read X directly too);
 *   - other windows of few taps: from im2col rows, tap by tap;
 *   - the rest: oneDNN's exact int8 product (s8s8s32 with VNNI) of W and a
 *     block of im2col columns, or OpenBLAS's dgemm over the differences
 *     in float64 where oneDNN declines (no VNNI, no oneDNN, K past 2^16).
 *     oneDNN sums W X; the zero points' terms come off as MLAS takes them:
 *     W X - x_zp rowsum(W) - w_zp colsum(X) + K w_zp x_zp. Column sums are
 *     made only when some w_zp is not 0 (symmetric int8 weights, the usual
 *     case, need none).
 * Every per-row term (the zero points', the bias) is one int32 that the
 * requantization (QLinearConv) or the store into Y (ConvInteger) adds as it
 * reads a block: QLinearConv never holds more than a block of int32 sums.
 *
 * im2col rows of 2-D windows are cut from the same padded, phase-split
 * channel (one copy per row of output positions, no bounds checks); other
 * ranks, and windows whose padding or dilation would make that copy far
 * larger than X, go through im2col_row, a line at a time. W lives as int8
 * with its rows' sums in the node's cache and stands in for W once built.
 *
 * Through oneDNN (dnnl_conv.h: its NHWC int8 convolution, weights packed
 * once into the node's cache beside tgc's int8 block, exact where it is
 * made at all):
 *   - QLinearConv and ConvInteger in NCHW copy X into NHWC and gather the
 *     int32 sums back, a row piece at a time, where that pays (dnnl_pays:
 *     16 or more input channels a group, or small depthwise layers);
 *   - _QLinearConvNHWC (the nhwc-conv pass's channels-last
 *     QLinearConv) reads X and writes Y as they lie; with the scales and
 *     zero points session constants oneDNN requantizes as it stores (in
 *     float32 as MLAS: tgc_dnnl_conv_requant), else the sums are
 *     requantized per channel here (tgc_cpu_q8_requantize_channels); where
 *     oneDNN cannot take the node, QLinearConv runs on NCHW copies.
 *
 * Threads: depthwise channels go in pieces of about PIECE_DEPTHWISE_MACS;
 * other blocks in two rounds, their im2col rows by input channels
 * (PIECE_BYTES a piece), then their product cut in one piece per thread
 * across W's rows or the columns (cut_block), whichever oneDNN repacks
 * more cheaply for each piece. The sums are exact integers, so the pieces
 * may follow the thread count (unlike a float kernel's): the results are
 * the same at any. */
#include "devices/cpu/dnnl_conv.h"
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/nhwc.h"
#include "devices/cpu/quant.h"
#include "devices/cpu/target_clones.h"
#include "devices/kernel.h"
#include "devices/kernel_cache.h"
#include "devices/kernel_checks.h"
#include "devices/window.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <stdatomic.h>
#include <string.h>

/* The most elements one block of im2col columns holds (int8, or float64 on
 * the dgemm path), and the most int32 sums one block makes. */
#define COL_BLOCK_ELEMS (INT64_C(1) << 20)
#define TILE_ELEMS (INT64_C(1) << 18)

/* Depthwise pieces of about PIECE_DEPTHWISE_MACS multiply-adds, im2col
 * pieces of about PIECE_BYTES; a product below PIECE_MACS stays whole, a
 * larger one is cut at multiples of FILTER_STEP rows or columns. */
#define PIECE_MACS (INT64_C(1) << 22)
#define PIECE_DEPTHWISE_MACS (INT64_C(1) << 18)
#define PIECE_BYTES (INT64_C(1) << 16)
#define FILTER_STEP 16

/* Bytes a phase plane's buffer holds past its elements: phase_plane_row's
 * vector moves of short lines may read that far. */
#define PLANE_SLACK 32

/* The most column phases (the last axis's stride) a phase plane is made
 * for: wider strides go through im2col_row. */
#define MAX_STRIDE_PHASES 8

/* Windows of at most this many taps are summed here rather than by a GEMM
 * (a depthwise Conv's, one input channel a group, up to DEPTHWISE_MAX_TAPS:
 * oneDNN would make one tiny call per channel): each product of an int8
 * and a difference of two 8-bit values is below 2^15, so the int32 sums of
 * these many are exact. */
#define DIRECT_MAX_TAPS 32
#define DEPTHWISE_MAX_TAPS 1024

/* ... when a group has fewer than this many filters too (more go to the
 * GEMM, which reads each column once for all of them). */
#define DIRECT_MAX_FILTERS 8

/* ---- W ------------------------------------------------------------------------------ */

/* W as the sums want it, in one block: a head (oneDNN's convolution, when
 * it takes the node), then per output channel the sum of its row (int64)
 * and its shifted zero point (int32), then, for a uint8 W, the shifted
 * weights [M, ck] (int8: u - 128). An int8 W needs no shift and is read
 * where it lies (W stays, the block holds no copy of it: a quantized
 * ResNet-18 started 5 ms sooner). Kept in the node's kernel cache when W
 * and its zero point are session constants (built at session creation).
 * The int8 weights stay beside oneDNN's layout of them: a run of other
 * shapes sums its own way. */
typedef struct conv_weights_head {
    tgc_dnnl_conv *dnnl;  /* NULL: oneDNN declined (or was not asked) */
    int64_t w_in_place;   /* 1: W is int8, read where it lies (and keeps what follows 16-byte aligned) */
} conv_weights_head;

typedef struct conv_weights_arg {
    tgc_dtype dtype;
    const uint8_t *w;
    const tgc_cpu_qparam *zp;
    int64_t m, ck;
    const tgc_conv_geometry *g; /* the geometry oneDNN is asked to take */
    tgc_dtype x_dtype;
    int threads; /* the pool's width: oneDNN's pieces */
    const tgc_dnnl_conv_requant *requant; /* oneDNN requantizes (else it makes int32 sums) */
} conv_weights_arg;

/* The bytes of that block for m filters of ck taps of W's dtype (one
 * more, so that it is never empty); false past SIZE_MAX. */
static bool conv_weights_bytes(int64_t m, int64_t ck, tgc_dtype w_dtype, size_t *bytes) {
    size_t head, nw;
    return tgc_checked_mul_size((size_t)m, sizeof(int64_t) + sizeof(int32_t), &head) &&
           tgc_checked_add_size(head, sizeof(conv_weights_head), &head) &&
           tgc_checked_mul_size(w_dtype == TGC_INT8 ? 0 : (size_t)m, (size_t)ck, &nw) &&
           tgc_checked_add_size(head, nw, bytes) && tgc_checked_add_size(*bytes, 1, bytes);
}

/* The block's parts. */
static const int64_t *block_sums(const uint8_t *block) { return (const int64_t *)(block + sizeof(conv_weights_head)); }

static const int32_t *block_zps(const uint8_t *block, int64_t m) {
    return (const int32_t *)(block + sizeof(conv_weights_head) + (size_t)m * sizeof(int64_t));
}

/* The shifted weights: in the block, or W itself (w_data) where it is int8. */
static const int8_t *block_weights(const uint8_t *block, int64_t m, const void *w_data) {
    if (((const conv_weights_head *)block)->w_in_place) return w_data;
    return (const int8_t *)(block + sizeof(conv_weights_head) + (size_t)m * (sizeof(int64_t) + sizeof(int32_t)));
}

static void release_conv_weights(void *block) {
    if (block == NULL) return;
    tgc_dnnl_conv_free(((conv_weights_head *)block)->dnnl);
    tgc_free(block);
}

static void *build_conv_weights(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const conv_weights_arg *a = arg;
    size_t total;
    if (!conv_weights_bytes(a->m, a->ck, a->dtype, &total)) return NULL;
    uint8_t *block = tgc_malloc(total);
    if (block == NULL) return NULL;
    conv_weights_head *head = (conv_weights_head *)block;
    *head = (conv_weights_head){.w_in_place = a->dtype == TGC_INT8};
    int64_t *sum = (int64_t *)block_sums(block);
    int32_t *zp = (int32_t *)block_zps(block, a->m);
    int8_t *w = (int8_t *)block_weights(block, a->m, a->w);
    int32_t shift = tgc_cpu_q8_shift(a->dtype);
    bool zero_zps = true;
    for (int64_t m = 0; m < a->m; m++) {
        zp[m] = tgc_cpu_qparam_int(a->zp, m) - shift;
        zero_zps = zero_zps && zp[m] == 0;
        int64_t row = 0;
        if (head->w_in_place)
            for (int64_t r = m * a->ck; r < (m + 1) * a->ck; r++) row += w[r];
        else
            for (int64_t r = m * a->ck; r < (m + 1) * a->ck; r++) { /* uint8 u - 128: u's bits, the top flipped */
                w[r] = (int8_t)(a->w[r] ^ 0x80u);
                row += w[r];
            }
        sum[m] = row;
    }
    size_t dnnl_bytes = 0;
    bool no_memory; /* integer sums: tgc's own path gives the same bits, so it may stand in */
    if (zero_zps && a->g != NULL)
        head->dnnl =
            tgc_dnnl_conv_create(a->g, a->x_dtype, w, a->threads, a->requant, 0, &dnnl_bytes, &no_memory);
    *bytes = total + dnnl_bytes;
    return block;
}

/* ---- X's columns -------------------------------------------------------------------- */

/* One im2col row: for tap `tap` of window w (row-major over the kernel's
 * axes) and output positions o0 .. o0 + n - 1, the input element each
 * reads from `plane` (one channel of X, bytes) as int8 (a uint8 byte with
 * its top bit flipped when `flip`: u - 128), `pad` where the tap lands in
 * padding. The positions go a line (the last axis) at a time: one division
 * per line, none per element, and no bounds checks inside a line. */
static void im2col_row(const tgc_window *w, int64_t tap, const uint8_t *plane, bool flip, int8_t pad, int64_t o0,
                       int64_t n, int8_t *out) {
    int rank = w->n, last = rank - 1;
    int64_t t[TGC_MAX_RANK] = {0};
    for (int a = last; a >= 0; a--) t[a] = tap % w->kernel[a], tap /= w->kernel[a];
    int64_t line = w->out[last], s = w->strides[last], start = t[last] * w->dilations[last] - w->pads[last];
    /* The output positions along a line whose tap lands inside: [first, last_in].
     */
    int64_t first = start >= 0 ? 0 : (-start + s - 1) / s;
    int64_t last_in = w->in[last] - 1 - start < 0 ? -1 : (w->in[last] - 1 - start) / s;
    for (int64_t done = 0; done < n;) {
        int64_t o = o0 + done, j0 = o % line, len = line - j0 < n - done ? line - j0 : n - done;
        /* the line's outer coordinates: inside the input, and where it starts */
        int64_t rest = o / line, off = 0, mul = w->in[last];
        bool inside = true;
        for (int a = last - 1; a >= 0; a--) {
            int64_t ii = (rest % w->out[a]) * w->strides[a] - w->pads[a] + t[a] * w->dilations[a];
            rest /= w->out[a];
            inside = inside && ii >= 0 && ii < w->in[a];
            off += ii * mul;
            mul *= w->in[a];
        }
        int8_t *dst = out + done;
        int64_t lo = first - j0 > 0 ? first - j0 : 0, hi = last_in - j0 + 1 < len ? last_in - j0 + 1 : len;
        if (!inside || hi <= lo) {
            memset(dst, (uint8_t)pad, (size_t)len);
        } else {
            memset(dst, (uint8_t)pad, (size_t)lo);
            const uint8_t *src = plane + off + (j0 + lo) * s + start;
            int64_t count = hi - lo;
            uint8_t *d = (uint8_t *)dst + lo, bits = flip ? 0x80u : 0;
            if (s == 1)
                for (int64_t j = 0; j < count; j++) d[j] = src[j] ^ bits;
            else
                for (int64_t j = 0; j < count; j++) d[j] = src[j * s] ^ bits;
            memset(dst + hi, (uint8_t)pad, (size_t)(len - hi));
        }
        done += len;
    }
}

/* y[j] = x[j] ^ bits, j < n: a uint8 row as int8 (bits 0x80) or an int8
 * row as it is. Compiled for AVX-512 and AVX2 too (target_clones.h). */
TGC_CPU_CLONES static void flip_row(const uint8_t *x, int64_t n, uint8_t bits, uint8_t *y) {
    for (int64_t j = 0; j < n; j++) y[j] = x[j] ^ bits;
}

/* y[j] = x[j * stride] ^ bits, j < n: flip_row of every stride-th byte (a
 * stride of 2, the common one, its own loop so that it vectorizes).
 * Compiled for AVX-512 and AVX2 too. */
TGC_CPU_CLONES static void flip_strided(const uint8_t *x, int64_t stride, int64_t n, uint8_t bits, uint8_t *y) {
    if (stride == 2)
        for (int64_t j = 0; j < n; j++) y[j] = x[2 * j] ^ bits;
    else
        for (int64_t j = 0; j < n; j++) y[j] = x[j * stride] ^ bits;
}

/* One channel of a 2-D X for the output rows [oy0, oy0 + n_oy), padded and
 * split by phase: padded row r (counted from row oy0 * sh) and column c lie
 * in block (r % sh, c % sw) at row r / sh, column c / sw, each block
 * [rows_q, wq]. A tap of a window strided (sh, sw) then reads, for output
 * rows i and columns j, element (i + a) wq + j + b of one block: the whole
 * plane's outputs, taken wq columns a row, are one run of consecutive
 * bytes. Each byte is X's as int8 (flipped from uint8 when flip), `pad` in
 * padding. */
typedef struct phase_plane {
    int64_t rows_q, wq, sh, sw;
    int8_t *p; /* [sh][sw][rows_q][wq] */
} phase_plane;

/* The plane's sizes for n_oy output rows of window w (2-D), and its
 * elements in *elems. False on an overflow or past `limit` elements. */
static bool phase_plane_size(const tgc_window *w, int64_t n_oy, int64_t limit, phase_plane *pp, int64_t *elems) {
    int64_t span_h, span_w, rows, wp, blocks;
    if (!tgc_checked_mul_i64(w->kernel[0] - 1, w->dilations[0], &span_h) ||
        !tgc_checked_mul_i64(w->kernel[1] - 1, w->dilations[1], &span_w) ||
        !tgc_checked_mul_i64(n_oy - 1, w->strides[0], &rows) || !tgc_checked_add_i64(rows, span_h + 1, &rows) ||
        !tgc_checked_mul_i64(w->out[1] - 1, w->strides[1], &wp) || !tgc_checked_add_i64(wp, span_w + 1, &wp) ||
        !tgc_checked_mul_i64(w->strides[0], w->strides[1], &blocks))
        return false;
    pp->sh = w->strides[0];
    pp->sw = w->strides[1];
    pp->rows_q = rows / pp->sh + (rows % pp->sh != 0);
    pp->wq = wp / pp->sw + (wp % pp->sw != 0);
    return tgc_checked_mul_i64(blocks, pp->rows_q, elems) && tgc_checked_mul_i64(*elems, pp->wq, elems) &&
           *elems <= limit;
}

/* Fills pp (sizes from phase_plane_size for output rows from oy0) from
 * `plane`, one channel of X [ih, iw] (bytes). */
static void phase_plane_fill(phase_plane *pp, const tgc_window *w, int64_t oy0, const uint8_t *plane, bool flip,
                             int8_t pad) {
    uint8_t bits = flip ? 0x80u : 0;
    int64_t ih = w->in[0], iw = w->in[1], pt = w->pads[0], pl = w->pads[1];
    int64_t lo[MAX_STRIDE_PHASES], hi[MAX_STRIDE_PHASES]; /* per phase, the columns inside [0, iw) */
    for (int64_t ph = 0; ph < pp->sw; ph++) tgc_window_taps(ph - pl, pp->wq, pp->sw, 0, iw, &lo[ph], &hi[ph]);
    int64_t block = pp->rows_q * pp->wq;
    for (int64_t r = 0; r < pp->rows_q * pp->sh; r++) {
        int64_t iy = oy0 * pp->sh + r - pt;
        int8_t *row = pp->p + (r % pp->sh) * pp->sw * block + (r / pp->sh) * pp->wq;
        for (int64_t ph = 0; ph < pp->sw; ph++) {
            int8_t *dst = row + ph * block;
            if (iy < 0 || iy >= ih || hi[ph] <= lo[ph]) {
                memset(dst, (uint8_t)pad, (size_t)pp->wq);
                continue;
            }
            memset(dst, (uint8_t)pad, (size_t)lo[ph]);
            const uint8_t *s = plane + iy * iw + (ph - pl + lo[ph] * pp->sw); /* input column of q = lo */
            if (pp->sw == 1) flip_row(s, hi[ph] - lo[ph], bits, (uint8_t *)dst + lo[ph]);
            else flip_strided(s, pp->sw, hi[ph] - lo[ph], bits, (uint8_t *)dst + lo[ph]);
            memset(dst + hi[ph], (uint8_t)pad, (size_t)(pp->wq - hi[ph]));
        }
    }
}

/* Where tap (ky, kx) of the window for output row i (of the plane's) and
 * column 0 reads in pp; column j reads j bytes on, row i + 1 wq bytes on. */
static const int8_t *phase_plane_tap(const phase_plane *pp, const tgc_window *w, int64_t i, int64_t ky, int64_t kx) {
    int64_t row = ky * w->dilations[0], col = kx * w->dilations[1];
    return pp->p + (((row % pp->sh) * pp->sw + col % pp->sw) * pp->rows_q + i + row / pp->sh) * pp->wq + col / pp->sw;
}

/* The im2col row of tap (ky, kx) for output positions o0 .. o0 + n - 1
 * from pp (made for output rows from oy0), a line of output columns at a
 * time. A short line with 16 or 32 bytes of the row still to fill is
 * copied as that many (one vector move, not a call): what lands past it
 * the next lines overwrite, and what it reads past the plane lies in
 * PLANE_SLACK. */
static void phase_plane_row(const phase_plane *pp, const tgc_window *w, int64_t oy0, int64_t ky, int64_t kx, int64_t o0,
                            int64_t n, int8_t *out) {
    int64_t ow = w->out[1], oy = o0 / ow, ox = o0 % ow;
    while (n > 0) {
        int64_t len = ow - ox < n ? ow - ox : n;
        const int8_t *src = phase_plane_tap(pp, w, oy - oy0, ky, kx) + ox;
        if (len <= 16 && n >= 16) memcpy(out, src, 16);
        else if (len <= 32 && n >= 32) memcpy(out, src, 32);
        else memcpy(out, src, (size_t)len);
        out += len, n -= len, ox = 0, oy++;
    }
}

/* sum[j] += row[j], j < n (the columns' sums). Compiled for AVX-512 and
 * AVX2 too (target_clones.h). */
TGC_CPU_CLONES static void add_row(const int8_t *row, int64_t n, int32_t *sum) {
    for (int64_t j = 0; j < n; j++) sum[j] += row[j];
}

/* ---- Sums --------------------------------------------------------------------------- */

/* y[j] = sum over r < taps of col[r * ld + j] (w[r] - w_zp), in int32
 * (exact for taps <= DIRECT_MAX_TAPS), j < n; the caller takes x_zp's
 * term off. Compiled for AVX-512 and AVX2 too (target_clones.h). */
TGC_CPU_CLONES static void sum_taps(const int8_t *w, int32_t w_zp, const int8_t *col, int64_t taps, int64_t ld,
                                    int64_t n, int32_t *y) {
    memset(y, 0, (size_t)n * sizeof *y);
    for (int64_t r = 0; r < taps; r++) {
        int16_t wd = (int16_t)(w[r] - w_zp); /* |x wd| <= 128 * 255: an int16 product */
        const int8_t *xr = col + r * ld;
        for (int64_t j = 0; j < n; j++) y[j] += (int16_t)(xr[j] * wd);
    }
}

/* y[i wq + j] = sum over taps (ky, kx) of pp's tap byte for output row i,
 * column j, times (w[ky kw + kx] - w_zp), for the plane's n_oy output rows
 * (the columns past ow hold sums of no output; the last row stops at ow):
 * a depthwise window straight from X, one run of consecutive sums a tap
 * (the caller takes x_zp's term off). Compiled for AVX-512 and AVX2 too. */
TGC_CPU_CLONES static void sum_plane_taps(const phase_plane *pp, const tgc_window *w, int64_t n_oy, const int8_t *wt,
                                          int32_t w_zp, int32_t *y) {
    int64_t kh = w->kernel[0], kw = w->kernel[1], len = (n_oy - 1) * pp->wq + w->out[1];
    memset(y, 0, (size_t)len * sizeof *y);
    for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
            int16_t wd = (int16_t)(wt[ky * kw + kx] - w_zp); /* |x wd| <= 128 * 255: an int16 product */
            const int8_t *xr = phase_plane_tap(pp, w, 0, ky, kx);
            for (int64_t j = 0; j < len; j++) y[j] += (int16_t)(xr[j] * wd);
        }
}

/* ---- The node ----------------------------------------------------------------------- */

/* How an integer Conv is summed, and what it holds while it runs. */
typedef struct int_conv_plan {
    bool depthwise; /* sum_plane_taps over whole channels */
    bool planes;    /* im2col rows cut from phase planes (else im2col_row) */
    bool few_taps;  /* im2col rows summed by sum_taps (else a GEMM) */
    int64_t cols;   /* output positions per block (depthwise: the whole channel) */
    int64_t ck;     /* the taps of one output: C / group * kernel size */
    int64_t plane;  /* a phase plane's elements (one per participant) */
    int64_t col;    /* an im2col block's elements (0 for depthwise) */
    int64_t tile;   /* int32 sums a participant holds */
    int64_t channels; /* input channels a piece fills (depthwise: sums) */
} int_conv_plan;

/* Output rows a block of `cols` positions can touch. */
static int64_t block_rows(const tgc_window *w, int64_t cols) {
    int64_t ow = w->out[1] > 0 ? w->out[1] : 1, rows = cols / ow + 2;
    return rows < w->out[0] ? rows : w->out[0];
}

/* Plans geometry g: false on a size past int64. */
static bool plan_int_conv(const tgc_conv_geometry *g, int_conv_plan *p) {
    memset(p, 0, sizeof *p);
    const tgc_window *w = &g->w;
    int64_t mg = g->m_count / g->group, out = g->out_size < 1 ? 1 : g->out_size, in = 1;
    if (!tgc_checked_mul_i64(g->cg, g->kk_count, &p->ck)) return false;
    for (int a = 0; a < w->n; a++) in *= w->in[a] > 0 ? w->in[a] : 1;
    int64_t limit = 4 * in + 65536; /* a plane beyond this is mostly padding or gaps: im2col_row instead */
    if (limit > COL_BLOCK_ELEMS) limit = COL_BLOCK_ELEMS;
    bool two_d = w->n == 2 && g->out_size > 0 && w->strides[1] <= MAX_STRIDE_PHASES;
    phase_plane whole;
    if (two_d && g->cg == 1 && g->kk_count <= DEPTHWISE_MAX_TAPS &&
        phase_plane_size(w, w->out[0], limit, &whole, &p->plane) && w->out[0] <= TILE_ELEMS / whole.wq) {
        p->depthwise = true; /* one channel's sums at a time, wq a row */
        p->cols = out;
        p->tile = w->out[0] * whole.wq;
        p->channels = PIECE_DEPTHWISE_MACS / (p->tile * g->kk_count * mg);
        p->channels = p->channels < 1 ? 1 : p->channels;
        return true;
    }
    p->cols = out;
    if (p->ck > 0 && p->cols > COL_BLOCK_ELEMS / p->ck) p->cols = COL_BLOCK_ELEMS / p->ck;
    if (mg > 0 && p->cols > TILE_ELEMS / mg) p->cols = TILE_ELEMS / mg;
    if (p->cols < 16) p->cols = out < 16 ? out : 16;
    p->few_taps = p->ck <= DIRECT_MAX_TAPS && mg < DIRECT_MAX_FILTERS;
    p->planes =
        two_d && !g->pointwise && phase_plane_size(w, block_rows(w, p->cols), limit, &(phase_plane){0}, &p->plane);
    if (!p->planes) p->plane = 0;
    p->channels = PIECE_BYTES / (g->kk_count * p->cols);
    p->channels = p->channels < 1 ? 1 : p->channels;
    return tgc_checked_mul_i64(p->ck, p->cols, &p->col) && tgc_checked_mul_i64(mg, p->cols, &p->tile);
}

/* Where a block's sums go: into Y as int32 (ConvInteger: y8 NULL), or
 * requantized into Y's 8-bit type (QLinearConv). */
typedef struct conv_sink {
    int32_t *y32;        /* ConvInteger's Y */
    void *y8;            /* QLinearConv's Y */
    const int32_t *bias; /* [M] or NULL */
    tgc_cpu_qparam x_scale, w_scale, y_scale, y_zp;
    int32_t lo, hi;
    bool is_signed;
} conv_sink;

/* Finishes channel m's sums for output positions o0 .. o0 + n - 1 of
 * image b: acc holds them less `add` (int64, the zero points' per-row
 * terms), already in Y (ConvInteger) or in a block (QLinearConv). */
static void sink_row(const conv_sink *s, const tgc_conv_geometry *g, int64_t b, int64_t m, int64_t o0, int64_t n,
                     int32_t *acc, int64_t add) {
    uint32_t total = (uint32_t)tgc_cpu_wrap_int32(add) + (uint32_t)(s->bias != NULL ? s->bias[m] : 0);
    if (s->y8 == NULL) {
        for (int64_t j = 0; total != 0 && j < n; j++) acc[j] = (int32_t)((uint32_t)acc[j] + total);
        return;
    }
    float mult = (float)tgc_cpu_qparam_float(&s->x_scale, 0) * (float)tgc_cpu_qparam_float(&s->w_scale, m) /
                 (float)tgc_cpu_qparam_float(&s->y_scale, 0);
    uint8_t *y = (uint8_t *)s->y8 + (b * g->m_count + m) * g->out_size + o0;
    tgc_cpu_q8_requantize(acc, n, (int32_t)total, mult, tgc_cpu_qparam_int(&s->y_zp, 0), s->lo, s->hi, s->is_signed, y);
}

/* A participant's scratch (a tgc_parallel_for slot). */
typedef struct conv_slot {
    int32_t *tile;             /* QLinearConv's sums, and depthwise ones */
    phase_plane pp;            /* plan.plane bytes */
    double *w_wide, *col_wide; /* the dgemm path's operands, made when it first runs */
    bool use_dnnl;             /* until oneDNN declines once */
    bool failed;               /* a sum failed */
} conv_slot;

/* What one node's sums work with. */
typedef struct int_conv {
    const tgc_conv_geometry *g;
    int_conv_plan plan;
    const conv_sink *sink;
    const uint8_t *x;
    bool flip;            /* X is uint8 */
    int8_t x_zp;          /* shifted */
    const int8_t *w;      /* shifted, [M, ck] */
    const int32_t *w_zp;  /* shifted, [M] */
    const int64_t *w_sum; /* [M] */
    bool col_sums;        /* some w_zp is not 0 */
    int8_t *col;          /* im2col block, plan.col */
    int32_t *col_sum;     /* plan.cols */
    conv_slot *slots;     /* tgc_parallel_width of them */
    int width;
    /* the block being summed: image b, group gi, output positions o0 .. o0 + cb - 1 */
    int64_t b, gi, o0, cb;
    int64_t piece_filters, piece_cols; /* its product's pieces (cut_block) */
} int_conv;

static void int_conv_free(int_conv *q) {
    tgc_free(q->col), tgc_free(q->col_sum);
    for (int s = 0; q->slots != NULL && s < q->width; s++) {
        conv_slot *sl = &q->slots[s];
        tgc_free(sl->tile), tgc_free(sl->pp.p), tgc_free(sl->w_wide), tgc_free(sl->col_wide);
    }
    tgc_free(q->slots);
}

/* Depthwise: channel k (of batch * group; one input channel each) of X,
 * every filter on it, whole. */
static void depthwise_channel(int_conv *q, conv_slot *sl, int64_t k) {
    const tgc_conv_geometry *g = q->g;
    int64_t mg = g->m_count / g->group, ck = q->plan.ck, b = k / g->group, gi = k % g->group;
    phase_plane_fill(&sl->pp, &g->w, 0, q->x + (b * g->channels + gi) * g->in_size, q->flip, q->x_zp);
    int64_t oh = g->w.out[0], ow = g->w.out[1];
    for (int64_t m = gi * mg; m < (gi + 1) * mg; m++) {
        int32_t *acc = sl->tile;
        sum_plane_taps(&sl->pp, &g->w, oh, q->w + m * ck, q->w_zp[m], acc);
        for (int64_t i = 1; sl->pp.wq != ow && i < oh; i++) /* wq sums a row to ow */
            memmove(acc + i * ow, acc + i * sl->pp.wq, (size_t)ow * sizeof *acc);
        if (q->sink->y8 == NULL) { /* ConvInteger: Y is where they go */
            int32_t *y = q->sink->y32 + (b * g->m_count + m) * g->out_size;
            memcpy(y, acc, (size_t)g->out_size * sizeof *y);
            acc = y;
        }
        int64_t wd_sum = q->w_sum[m] - ck * (int64_t)q->w_zp[m];
        sink_row(q->sink, g, b, m, 0, g->out_size, acc, -(int64_t)q->x_zp * wd_sum);
    }
}

/* The im2col rows of input channel ci (of the group) for the current block
 * into q->col. */
static void fill_channel(int_conv *q, conv_slot *sl, int64_t ci) {
    const tgc_conv_geometry *g = q->g;
    const tgc_window *w = &g->w;
    int64_t kk = g->kk_count, cb = q->cb, o0 = q->o0, oy0 = w->n == 2 && w->out[1] > 0 ? o0 / w->out[1] : 0;
    const uint8_t *plane = q->x + (q->b * g->channels + q->gi * g->cg + ci) * g->in_size;
    int8_t *rows = q->col + ci * kk * cb;
    if (g->pointwise) {
        flip_row(plane + o0, cb, q->flip ? 0x80u : 0, (uint8_t *)rows);
    } else if (q->plan.planes) {
        phase_plane_size(w, (o0 + cb - 1) / w->out[1] - oy0 + 1, INT64_MAX, &sl->pp, &(int64_t){0});
        phase_plane_fill(&sl->pp, w, oy0, plane, q->flip, q->x_zp);
        for (int64_t t = 0; t < kk; t++)
            phase_plane_row(&sl->pp, w, oy0, t / w->kernel[1], t % w->kernel[1], o0, cb, rows + t * cb);
    } else {
        for (int64_t t = 0; t < kk; t++) im2col_row(w, t, plane, q->flip, q->x_zp, o0, cb, rows + t * cb);
    }
}

/* The dgemm path for filters w0 .. w0 + nf - 1 over columns j0 .. j0 + nj
 * - 1 of the current block: exact sums of the differences into y (row
 * stride ldy). False when out of memory or past BLAS's int range. */
static bool block_dgemm(int_conv *q, conv_slot *sl, int64_t w0, int64_t nf, int64_t j0, int64_t nj, int32_t *y,
                        int64_t ldy) {
    int64_t ck = q->plan.ck, mg = q->g->m_count / q->g->group;
    if (sl->w_wide == NULL) sl->w_wide = tgc_malloc(((size_t)(mg * ck) + 1) * sizeof(double));
    if (sl->col_wide == NULL)
        sl->col_wide = tgc_malloc(((size_t)(q->plan.col + mg * q->plan.cols) + 1) * sizeof(double));
    if (sl->w_wide == NULL || sl->col_wide == NULL) return false;
    for (int64_t m = 0; m < nf; m++)
        for (int64_t r = 0; r < ck; r++) sl->w_wide[m * ck + r] = (double)(q->w[(w0 + m) * ck + r] - q->w_zp[w0 + m]);
    for (int64_t r = 0; r < ck; r++)
        for (int64_t j = 0; j < nj; j++) sl->col_wide[r * nj + j] = (double)(q->col[r * q->cb + j0 + j] - q->x_zp);
    return tgc_cpu_q8_dgemm(nf, nj, ck, sl->w_wide, sl->col_wide, nj, sl->col_wide + ck * nj, y, ldy);
}

/* Filters f0 .. f0 + nf - 1 of the group over columns j0 .. j0 + nj - 1 of
 * the current block, finished into the sink. False when a sum fails. */
static bool block_filters(int_conv *q, conv_slot *sl, int64_t f0, int64_t nf, int64_t j0, int64_t nj) {
    const tgc_conv_geometry *g = q->g;
    int64_t w0 = q->gi * (g->m_count / g->group) + f0, ck = q->plan.ck, cb = q->cb;
    bool tiled = q->sink->y8 != NULL;
    int32_t *y = tiled ? sl->tile : q->sink->y32 + (q->b * g->m_count + w0) * g->out_size + q->o0 + j0;
    int64_t ldy = tiled ? nj : g->out_size;
    bool exact = true;      /* y holds the differences' sums, nothing to take off */
    if (q->plan.few_taps) { /* too small a product to hand off */
        for (int64_t m = 0; m < nf; m++)
            sum_taps(q->w + (w0 + m) * ck, q->w_zp[w0 + m], q->col + j0, ck, cb, nj, y + m * ldy);
        exact = false; /* x_zp's term is left */
    } else {
        int done = sl->use_dnnl ? tgc_dnnl_igemm(nf, nj, ck, q->w + w0 * ck, ck, q->col + j0, cb, y, ldy) : 0;
        if (done < 0) return false;
        if (done == 0) {
            sl->use_dnnl = false;
            if (!block_dgemm(q, sl, w0, nf, j0, nj, y, ldy)) return false;
        }
        exact = done == 0;
    }
    for (int64_t m = 0; m < nf; m++) {
        int64_t zw = q->w_zp[w0 + m], add = 0;
        int32_t *ym = y + m * ldy;
        const int32_t *sums = q->col_sum + j0;
        if (!exact && q->plan.few_taps)
            add = -(int64_t)q->x_zp * (q->w_sum[w0 + m] - ck * zw);
        else if (!exact) {
            add = ck * zw * q->x_zp - (int64_t)q->x_zp * q->w_sum[w0 + m];
            for (int64_t j = 0; zw != 0 && j < nj; j++) ym[j] = tgc_cpu_wrap_int32((int64_t)ym[j] - zw * sums[j]);
        }
        sink_row(q->sink, g, q->b, w0 + m, q->o0 + j0, nj, ym, add);
    }
    return true;
}

/* tgc_parallel_for pieces: depthwise channels, a block's input channels
 * (im2col rows), a block's filters. */
static void depthwise_piece(void *arg, int64_t i, int slot) {
    int_conv *q = arg;
    int64_t n = q->g->batch * q->g->group, k0 = i * q->plan.channels;
    for (int64_t k = k0; k < k0 + q->plan.channels && k < n; k++) depthwise_channel(q, &q->slots[slot], k);
}

static void fill_piece(void *arg, int64_t i, int slot) {
    int_conv *q = arg;
    int64_t c0 = i * q->plan.channels, c1 = c0 + q->plan.channels < q->g->cg ? c0 + q->plan.channels : q->g->cg;
    for (int64_t ci = c0; ci < c1; ci++) fill_channel(q, &q->slots[slot], ci);
}

static void filters_piece(void *arg, int64_t i, int slot) {
    int_conv *q = arg;
    int64_t mg = q->g->m_count / q->g->group, col_pieces = (q->cb + q->piece_cols - 1) / q->piece_cols;
    int64_t f0 = i / col_pieces * q->piece_filters, j0 = i % col_pieces * q->piece_cols;
    int64_t nf = mg - f0 < q->piece_filters ? mg - f0 : q->piece_filters;
    int64_t nj = q->cb - j0 < q->piece_cols ? q->cb - j0 : q->piece_cols;
    conv_slot *sl = &q->slots[slot];
    if (!sl->failed && !block_filters(q, sl, f0, nf, j0, nj)) sl->failed = true;
}

/* How the current block's product is cut for a pool `width` threads wide:
 * whole on one thread or when small; else into `width` pieces across the
 * operand the GEMM repacks more cheaply for each (W's rows when W is
 * smaller than the block's columns, the columns otherwise). The sums are
 * exact integers, so the cut changes no result. */
static void cut_block(int_conv *q) {
    int64_t mg = q->g->m_count / q->g->group, ck = q->plan.ck;
    q->piece_filters = mg;
    q->piece_cols = q->cb;
    if (q->width <= 1 || (double)mg * (double)ck * (double)q->cb < (double)PIECE_MACS) return;
    if (mg <= q->cb) {
        int64_t n = (q->cb + q->width - 1) / q->width;
        q->piece_cols = (n + FILTER_STEP - 1) / FILTER_STEP * FILTER_STEP;
    } else {
        int64_t n = (mg + q->width - 1) / q->width;
        q->piece_filters = (n + FILTER_STEP - 1) / FILTER_STEP * FILTER_STEP;
    }
}

/* Sums every block, each in two parallel rounds: its im2col rows, then its
 * filters. */
static void blocks_run(int_conv *q, tgc_thread_pool *pool) {
    const tgc_conv_geometry *g = q->g;
    int64_t mg = g->m_count / g->group;
    for (q->b = 0; q->b < g->batch; q->b++)
        for (q->gi = 0; q->gi < g->group; q->gi++)
            for (q->o0 = 0; q->o0 < g->out_size; q->o0 += q->plan.cols) {
                q->cb = g->out_size - q->o0 < q->plan.cols ? g->out_size - q->o0 : q->plan.cols;
                tgc_parallel_for(pool, (g->cg + q->plan.channels - 1) / q->plan.channels, fill_piece, q);
                if (q->col_sums) {
                    memset(q->col_sum, 0, (size_t)q->cb * sizeof *q->col_sum);
                    for (int64_t r = 0; r < q->plan.ck; r++) add_row(q->col + r * q->cb, q->cb, q->col_sum);
                }
                cut_block(q);
                int64_t filter_pieces = (mg + q->piece_filters - 1) / q->piece_filters;
                tgc_parallel_for(pool, filter_pieces * ((q->cb + q->piece_cols - 1) / q->piece_cols), filters_piece, q);
            }
}

/* ---- Through oneDNN ----------------------------------------------------------------- */

/* The threads oneDNN's pieces are cut for: the pool's workers (a node
 * runs on one of them, which takes pieces too), 1 without a pool. */
static int dnnl_threads(const tgc_kernel_ctx *c) { return c->pool != NULL ? tgc_thread_pool_size(c->pool) : 1; }

/* Int32 sums one gather moves out of the NHWC sums at a time (per
 * participant): GATHER_ELEMS / M output positions, at least
 * GATHER_MIN_POSITIONS, so that each channel's row is finished in runs long
 * enough to pay for the call. */
#define GATHER_ELEMS (INT64_C(1) << 15)
#define GATHER_MIN_POSITIONS 32
#define GATHER_PAD 16

static int64_t gather_positions(const tgc_conv_geometry *g) {
    int64_t n = GATHER_ELEMS / (g->m_count > 0 ? g->m_count : 1);
    return n < GATHER_MIN_POSITIONS ? GATHER_MIN_POSITIONS : n;
}

/* One node's run through oneDNN's convolution: image b's X copied into
 * NHWC (xt), each piece's sums made in its participant's block of yt and
 * finished into the sink in NCHW as they come. */
typedef struct dnnl_conv_job {
    const tgc_conv_geometry *g;
    const tgc_dnnl_conv *dq;
    const conv_sink *sink;
    const uint8_t *x;
    uint8_t *xt;
    int32_t *yt;
    int32_t **gathers; /* per participant, QLinearConv only */
    int32_t x_zp;      /* as stored */
    int64_t b, transpose_rows;
    atomic_bool failed;
} dnnl_conv_job;

/* Rows [i transpose_rows, ..) of image b's X, [C, H, W], into xt [H, W, C]. */
static void transpose_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    dnnl_conv_job *j = arg;
    const tgc_conv_geometry *g = j->g;
    int64_t h = g->w.in[0], w = g->w.in[1], ch = g->channels, y0 = i * j->transpose_rows;
    int64_t y1 = y0 + j->transpose_rows < h ? y0 + j->transpose_rows : h;
    const uint8_t *image = j->x + j->b * ch * g->in_size;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t x0 = 0; x0 < w; x0 += 16) {
            int64_t n = w - x0 < 16 ? w - x0 : 16;
            uint8_t *to = j->xt + (y * w + x0) * ch;
            for (int64_t c = 0; c < ch; c++) {
                const uint8_t *from = image + c * g->in_size + y * w + x0;
                for (int64_t k = 0; k < n; k++) to[k * ch + c] = from[k];
            }
        }
}

/* Piece i of image b: its sums, then its output positions finished into
 * the sink a gather at a time (ConvInteger's straight into Y). */
static void dnnl_conv_piece(void *arg, int64_t i, int slot) {
    dnnl_conv_job *j = arg;
    const tgc_conv_geometry *g = j->g;
    int32_t *sums = j->yt + slot * tgc_dnnl_conv_piece_sums(j->dq);
    if (!tgc_dnnl_conv_run_piece(j->dq, i, j->xt, j->x_zp, NULL, sums)) {
        atomic_store(&j->failed, true);
        return;
    }
    int64_t r0, r1, mc = g->m_count, ow = g->w.out[1];
    tgc_dnnl_conv_piece_rows(j->dq, i, &r0, &r1);
    int64_t step = gather_positions(g);
    for (int64_t p0 = r0 * ow; p0 < r1 * ow; p0 += step) {
        int64_t n = r1 * ow - p0 < step ? r1 * ow - p0 : step;
        const int32_t *from = sums + (p0 - r0 * ow) * mc;
        /* a gather's rows GATHER_PAD apart past their length: rows a power of
         * two apart would fall in one set of the cache */
        int32_t *rows = j->sink->y8 != NULL ? j->gathers[slot] : j->sink->y32 + j->b * mc * g->out_size + p0;
        int64_t ld = j->sink->y8 != NULL ? n + GATHER_PAD : g->out_size, m0 = 0;
        for (; m0 + 8 <= mc; m0 += 8) /* 8 channels at a time: 32 bytes read, 8 rows written in order */
            for (int64_t k = 0; k < n; k++)
                for (int64_t m = m0; m < m0 + 8; m++) rows[m * ld + k] = from[k * mc + m];
        for (int64_t k = 0; k < n; k++)
            for (int64_t m = m0; m < mc; m++) rows[m * ld + k] = from[k * mc + m];
        for (int64_t m = 0; m < mc; m++) sink_row(j->sink, g, j->b, m, p0, n, rows + m * ld, 0);
    }
}

/* Where oneDNN's NHWC convolution pays for copying X into NHWC and its
 * sums back (measured per layer on ResNet-18 and MobileNetV2, one Zen 5
 * core, docs/cpu-speed.md): windows over 16 or more input channels a group
 * (3x3 layers 1.3-1.6x faster: no im2col, weights packed once); depthwise
 * windows over at most DNNL_DEPTHWISE_MAX_OUT positions (2-2.9x: the plane
 * sums pay per channel). Not 1x1 windows of stride 1, which sum straight
 * from X here, nor a network's first layer (3 channels: the copies cost
 * more than the sums), nor wide depthwise layers (56 x 56: 10% slower). */
#define DNNL_MIN_GROUP_CHANNELS 16
#define DNNL_DEPTHWISE_MAX_OUT 1024

static bool dnnl_pays(const tgc_conv_geometry *g) {
    if (g->pointwise) return false;
    if (g->cg == 1 && g->m_count == g->group) return g->out_size <= DNNL_DEPTHWISE_MAX_OUT;
    return g->cg >= DNNL_MIN_GROUP_CHANNELS;
}

/* The workspace of the oneDNN path for geometry g on a pool `width`
 * threads wide (bytes): X and the sums of one image in NHWC, and a gather
 * per participant. False past int64. */
static bool dnnl_conv_workspace(const tgc_conv_geometry *g, int width, int64_t *bytes) {
    int64_t xt, yt, gather;
    return tgc_checked_mul_i64(g->channels, g->in_size, &xt) && tgc_checked_mul_i64(g->m_count, g->out_size, &yt) &&
           tgc_checked_mul_i64(yt, (int64_t)sizeof(int32_t), &yt) &&
           tgc_checked_mul_i64(g->m_count,
                               (gather_positions(g) + GATHER_PAD) * (int64_t)sizeof(int32_t) * (width < 1 ? 1 : width),
                               &gather) &&
           tgc_checked_add_i64(xt, yt, bytes) && tgc_checked_add_i64(*bytes, gather, bytes);
}

/* Conv(X - x_zp, W) into the sink through dq (made for g and X's dtype),
 * image by image: X into NHWC over the pool by rows, then dq's pieces. */
static tgc_status dnnl_conv_run(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const tgc_dnnl_conv *dq,
                                const uint8_t *x, int32_t x_zp, const conv_sink *sink) {
    int width = tgc_parallel_width(c->pool);
    dnnl_conv_job j = {.g = g, .dq = dq, .sink = sink, .x = x, .x_zp = x_zp};
    atomic_init(&j.failed, false);
    int64_t row_bytes = g->channels * g->w.in[1] > 0 ? g->channels * g->w.in[1] : 1;
    j.transpose_rows = PIECE_BYTES / row_bytes < 1 ? 1 : PIECE_BYTES / row_bytes;
    bool ok = (j.xt = tgc_malloc((size_t)(g->channels * g->in_size) + 1)) != NULL &&
              (j.yt = tgc_malloc((size_t)(width * tgc_dnnl_conv_piece_sums(dq)) * sizeof(int32_t))) != NULL &&
              (j.gathers = tgc_calloc((size_t)width, sizeof *j.gathers)) != NULL;
    for (int s = 0; ok && sink->y8 != NULL && s < width; s++)
        ok = (j.gathers[s] = tgc_malloc((size_t)(g->m_count * (gather_positions(g) + GATHER_PAD)) * sizeof(int32_t))) !=
             NULL;
    c->impl = "onednn int8 conv";
    for (j.b = 0; ok && j.b < g->batch && !atomic_load(&j.failed); j.b++) {
        tgc_parallel_for(c->pool, (g->w.in[0] + j.transpose_rows - 1) / j.transpose_rows, transpose_piece, &j);
        tgc_parallel_for(c->pool, tgc_dnnl_conv_pieces(dq), dnnl_conv_piece, &j);
    }
    for (int s = 0; j.gathers != NULL && s < width; s++) tgc_free(j.gathers[s]);
    tgc_free(j.gathers), tgc_free(j.xt), tgc_free(j.yt);
    if (!ok) return tgc_kernel_fail(c, "out of host memory for the integer convolution's NHWC copies");
    return atomic_load(&j.failed) ? tgc_kernel_fail(c, "oneDNN's int8 convolution failed") : TGC_OK;
}

/* Conv's geometry for an integer Conv with X and W at input positions x
 * and w (read from dims, as Conv's; the dtypes are the caller's to check). */
static tgc_status read_int_conv(tgc_kernel_ctx *c, int x, int w, tgc_conv_geometry *g) {
    tgc_value views[2] = {tgc_cpu_q8_f32_view(&c->inputs[x]), tgc_cpu_q8_f32_view(&c->inputs[w])},
              out = tgc_cpu_q8_f32_view(&c->outputs[0]);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.n_inputs = 2;
    sub.outputs = &out;
    sub.n_outputs = 1;
    return tgc_window_read_conv(&sub, g);
}

/* What the node holds for the static memory plan: W as int8 with its rows'
 * sums and zero points in the node's cache when W is a constant (it then
 * stands in for W), and while it runs a block of im2col columns with their
 * sums, a phase plane and QLinearConv's block of int32 sums (the dgemm
 * path's operands, only where oneDNN declines, are not counted), a plane and
 * sums per participant of a pool `width` threads wide. X and W at input
 * positions x and w. */
static void int_conv_footprint(tgc_kernel_ctx *c, int x, int w, bool tile, int width, tgc_kernel_footprint *out) {
    tgc_conv_geometry g;
    int_conv_plan p;
    if (c->n_inputs <= w || c->n_outputs < 1 || read_int_conv(c, x, w, &g) != TGC_OK || !plan_int_conv(&g, &p)) return;
    size_t cache;
    if (!conv_weights_bytes(g.m_count, p.ck, c->inputs[w].dtype, &cache) || cache > INT64_MAX / 2) return;
    int64_t slot = p.plane + PLANE_SLACK + (tile || p.depthwise ? p.tile * (int64_t)sizeof(int32_t) : 0);
    out->workspace_bytes = p.col + p.cols * (int64_t)sizeof(int32_t) + (width < 1 ? 1 : width) * slot;
    /* where oneDNN may take the node */
    int64_t dnnl_bound = dnnl_pays(&g) ? tgc_dnnl_conv_bound(&g, TGC_INT8) : 0, dnnl_work = 0;
    if (dnnl_bound > 0 && dnnl_conv_workspace(&g, width, &dnnl_work) && dnnl_work > out->workspace_bytes)
        out->workspace_bytes = dnnl_work;
    if (c->const_inputs & 1u << w) {
        out->cache_bytes = (int64_t)cache + dnnl_bound;
        out->replaces_inputs = c->inputs[w].dtype == TGC_INT8 ? 0 : 1u << w; /* an int8 W is read in place */
    }
}

static void conv_integer_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    int_conv_footprint(c, 0, 1, false, width, out);
}

static void qlinear_conv_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    int_conv_footprint(c, 0, 3, true, width, out);
}

/* Conv(X - x_zp, W - w_zp) into the sink: x, w, xzp_at and wzp_at are the
 * input positions of X, W and their zero points. */
static tgc_status int_conv_run(tgc_kernel_ctx *c, int x, int w, int xzp_at, int wzp_at, const conv_sink *sink) {
    const tgc_value *vx = &c->inputs[x], *vw = &c->inputs[w];
    if (!tgc_cpu_q8_is(vx->dtype) || !tgc_cpu_q8_is(vw->dtype))
        return tgc_kernel_fail(c, "inputs X and W must be 8-bit quantized (X %s, W %s)", tgc_dtype_name(vx->dtype),
                               tgc_dtype_name(vw->dtype));
    tgc_conv_geometry g;
    tgc_status st = read_int_conv(c, x, w, &g);
    if (st != TGC_OK) return st;
    tgc_cpu_qparam xzp, wzp;
    if ((st = tgc_cpu_qparam_read(c, xzp_at, "x_zero_point", -1, vx->dtype, &xzp)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, wzp_at, "w_zero_point", g.m_count, vw->dtype, &wzp)) != TGC_OK)
        return st;
    if (g.batch == 0 || g.m_count == 0 || g.out_size == 0) return TGC_OK; /* an empty Y: nothing to sum */
    int_conv q = {.g = &g, .sink = sink, .flip = vx->dtype == TGC_UINT8, .width = tgc_parallel_width(c->pool)};
    if (!plan_int_conv(&g, &q.plan)) return tgc_kernel_fail(c, "the column buffer is too large");
    conv_weights_arg wa = {vw->dtype,         tgc_kernel_in_ptr(c, w),         &wzp, g.m_count, q.plan.ck,
                           dnnl_pays(&g) ? &g : NULL, vx->dtype, dnnl_threads(c), NULL};
    uint32_t weights_in = 1u << w | (tgc_kernel_has_input(c, wzp_at) ? 1u << wzp_at : 0);
    const uint8_t *block = tgc_kernel_cache_get_owning(c, weights_in, build_conv_weights, release_conv_weights, &wa);
    const uint8_t *owned = NULL;
    if (block != NULL && vw->dtype != TGC_INT8) tgc_kernel_cache_replaces(c, 1u << w); /* W read to build it */
    if (c->prepack_only) return TGC_OK;
    const tgc_dnnl_conv *dq = block != NULL ? ((const conv_weights_head *)block)->dnnl : NULL;
    if (dq != NULL && !tgc_dnnl_conv_requantizes(dq) && tgc_dnnl_conv_matches(dq, &g, vx->dtype))
        return dnnl_conv_run(c, &g, dq, tgc_kernel_in_ptr(c, x), tgc_cpu_qparam_int(&xzp, 0), sink);
    size_t block_bytes;
    wa.g = NULL; /* a block for this run alone: no oneDNN primitives */
    if (block == NULL) block = owned = build_conv_weights(c, &wa, &block_bytes);
    bool ok = block != NULL && (q.slots = tgc_calloc((size_t)q.width, sizeof *q.slots)) != NULL;
    if (ok && !q.plan.depthwise) {
        ok = (q.col = tgc_malloc((size_t)q.plan.col + 1)) != NULL &&
             (q.col_sum = tgc_malloc(((size_t)q.plan.cols + 1) * sizeof(int32_t))) != NULL;
    }
    bool tile = sink->y8 != NULL || q.plan.depthwise; /* else the sums go straight into Y */
    for (int s = 0; ok && s < q.width; s++) {
        conv_slot *sl = &q.slots[s];
        sl->use_dnnl = true;
        ok = (sl->pp.p = tgc_malloc((size_t)q.plan.plane + PLANE_SLACK)) != NULL &&
             (!tile || (sl->tile = tgc_malloc(((size_t)q.plan.tile + 1) * sizeof(int32_t))) != NULL);
    }
    if (!ok) {
        int_conv_free(&q);
        tgc_free((void *)owned);
        return tgc_kernel_fail(c, "out of host memory for the integer operands");
    }
    q.w_sum = block_sums(block);
    q.w_zp = block_zps(block, g.m_count);
    q.w = block_weights(block, g.m_count, tgc_kernel_in_ptr(c, w));
    for (int64_t m = 0; m < g.m_count; m++) q.col_sums = q.col_sums || q.w_zp[m] != 0;
    /* few taps are summed as differences, and many go to the dgemm path, exact too */
    q.col_sums = q.col_sums && !q.plan.few_taps && q.plan.ck <= TGC_DNNL_IGEMM_MAX_K;
    q.x = tgc_kernel_in_ptr(c, x);
    q.x_zp = (int8_t)(tgc_cpu_qparam_int(&xzp, 0) - tgc_cpu_q8_shift(vx->dtype)); /* padding: a zero difference */
    if (q.plan.depthwise) {
        for (int s = 0; s < q.width; s++) phase_plane_size(&g.w, g.w.out[0], INT64_MAX, &q.slots[s].pp, &(int64_t){0});
        c->impl = "int8 depthwise";
        int64_t n = g.batch * g.group;
        tgc_parallel_for(c->pool, (n + q.plan.channels - 1) / q.plan.channels, depthwise_piece, &q);
    } else if (g.out_size > 0) {
        blocks_run(&q, c->pool);
    }
    for (int s = 0; s < q.width; s++) ok = ok && !q.slots[s].failed;
    int_conv_free(&q);
    tgc_free((void *)owned);
    return ok ? TGC_OK
              : tgc_kernel_fail(c, "the integer product failed (out of host memory, a size past BLAS's int range, "
                                   "or oneDNN)");
}

static tgc_status conv_integer(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != TGC_INT32) return tgc_kernel_fail(c, "output y must be int32");
    int32_t scratch;
    conv_sink sink = {.y32 = tgc_value_numel(&c->outputs[0]) > 0 ? tgc_kernel_out_ptr(c, 0) : &scratch};
    return int_conv_run(c, 0, 1, 2, 3, &sink);
}

static tgc_status qlinear_conv(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 8, 1);
    if (st != TGC_OK) return st;
    const tgc_value *vy = &c->outputs[0];
    if (!tgc_cpu_q8_is(vy->dtype) || vy->dtype != c->inputs[7].dtype)
        return tgc_kernel_fail(c, "output y must have y_zero_point's 8-bit type");
    int64_t m_count = c->inputs[3].rank >= 1 ? c->inputs[3].dims[0] : 0;
    conv_sink sink = {.is_signed = vy->dtype == TGC_INT8};
    if ((st = tgc_cpu_qparam_read(c, 1, "x_scale", -1, TGC_FLOAT32, &sink.x_scale)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 4, "w_scale", m_count, TGC_FLOAT32, &sink.w_scale)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 6, "y_scale", -1, TGC_FLOAT32, &sink.y_scale)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 7, "y_zero_point", -1, vy->dtype, &sink.y_zp)) != TGC_OK)
        return st;
    if (tgc_kernel_has_input(c, 8)) {
        const tgc_value *vb = &c->inputs[8];
        if (vb->dtype != TGC_INT32 || vb->rank != 1 || vb->dims[0] != m_count)
            return tgc_kernel_fail(c, "input 8 (B) must be int32 [M = %lld]", (long long)m_count);
        sink.bias = tgc_kernel_in_ptr(c, 8);
    }
    tgc_cpu_q8_range(vy->dtype, &sink.lo, &sink.hi);
    uint8_t scratch;
    sink.y8 = tgc_value_numel(vy) > 0 ? tgc_kernel_out_ptr(c, 0) : &scratch;
    return int_conv_run(c, 0, 3, 2, 5, &sink);
}

/* ---- _QLinearConvNHWC: channels last ----------------------------------------------- */

/* One run of _QLinearConvNHWC through oneDNN, channels last as oneDNN
 * leaves them: each piece's rows straight into Y where oneDNN requantizes,
 * else its int32 sums into its participant's block of yt, then
 * requantized into Y. */
typedef struct nhwc_job {
    const tgc_conv_geometry *g;
    const tgc_dnnl_conv *dq;
    const uint8_t *x;
    uint8_t *y;
    int32_t *yt;
    const int32_t *bias; /* [M] or NULL */
    const int32_t *add;  /* [M]: the bias, or zeros */
    const float *mult;   /* [M]: x_scale w_scale[m] / y_scale in float32, as sink_row has it */
    int32_t x_zp, y_zp, lo, hi;
    bool is_signed;
    int64_t b;
    atomic_bool failed;
} nhwc_job;

static void nhwc_piece(void *arg, int64_t i, int slot) {
    nhwc_job *j = arg;
    const tgc_conv_geometry *g = j->g;
    int64_t mc = g->m_count, ow = g->w.out[1], r0, r1;
    tgc_dnnl_conv_piece_rows(j->dq, i, &r0, &r1);
    const uint8_t *x = j->x + j->b * g->in_size * g->channels;
    uint8_t *y = j->y + (j->b * g->out_size + r0 * ow) * mc;
    if (tgc_dnnl_conv_requantizes(j->dq)) {
        if (!tgc_dnnl_conv_run_piece(j->dq, i, x, j->x_zp, j->bias, y)) atomic_store(&j->failed, true);
        return;
    }
    int32_t *sums = j->yt + slot * tgc_dnnl_conv_piece_sums(j->dq);
    if (!tgc_dnnl_conv_run_piece(j->dq, i, x, j->x_zp, NULL, sums)) {
        atomic_store(&j->failed, true);
        return;
    }
    tgc_cpu_q8_requantize_channels(sums, (r1 - r0) * ow, mc, j->add, j->mult, j->y_zp, j->lo, j->hi, j->is_signed, y);
}

/* _QLinearConvNHWC (ops_quant.c): QLinearConv with X [N, H, W, C] and Y [N,
 * OH, OW, M]; through oneDNN's NHWC convolution wherever it takes the node
 * (it needs no copies here), else through QLinearConv on NCHW copies. */
static tgc_status qlinear_conv_nhwc(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 8, 1);
    if (st != TGC_OK) return st;
    const tgc_value *vx = &c->inputs[0], *vw = &c->inputs[3], *vy = &c->outputs[0];
    if (vx->rank != 4 || vy->rank != 4) return tgc_kernel_fail(c, "x and y must be 4-D, channels last");
    if (!tgc_cpu_q8_is(vx->dtype) || !tgc_cpu_q8_is(vw->dtype) || vy->dtype != c->inputs[7].dtype)
        return tgc_kernel_fail(c, "x, w and y must be 8-bit quantized (y of y_zero_point's type)");
    tgc_value views[2] = {tgc_cpu_nhwc_view(vx, true), *vw}, out = tgc_cpu_nhwc_view(vy, true);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.n_inputs = 2;
    sub.outputs = &out;
    tgc_conv_geometry g;
    if ((st = read_int_conv(&sub, 0, 1, &g)) != TGC_OK) return st;
    tgc_cpu_qparam wzp, xzp, x_scale, w_scale, y_scale, y_zp;
    if ((st = tgc_cpu_qparam_read(c, 1, "x_scale", -1, TGC_FLOAT32, &x_scale)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 2, "x_zero_point", -1, vx->dtype, &xzp)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 4, "w_scale", g.m_count, TGC_FLOAT32, &w_scale)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 5, "w_zero_point", g.m_count, vw->dtype, &wzp)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 6, "y_scale", -1, TGC_FLOAT32, &y_scale)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 7, "y_zero_point", -1, vy->dtype, &y_zp)) != TGC_OK)
        return st;
    const int32_t *bias = NULL;
    if (tgc_kernel_has_input(c, 8)) {
        const tgc_value *vb = &c->inputs[8];
        if (vb->dtype != TGC_INT32 || vb->rank != 1 || vb->dims[0] != g.m_count)
            return tgc_kernel_fail(c, "input 8 (B) must be int32 [M = %lld]", (long long)g.m_count);
        bias = tgc_kernel_in_ptr(c, 8);
    }
    int32_t *add = tgc_calloc((size_t)g.m_count + 1, sizeof *add);
    float *mult = tgc_malloc(((size_t)g.m_count + 1) * sizeof *mult);
    if (add == NULL || mult == NULL) {
        tgc_free(add), tgc_free(mult);
        return tgc_kernel_fail(c, "out of host memory for the requantization's multipliers");
    }
    for (int64_t m = 0; m < g.m_count; m++) { /* as sink_row computes them */
        add[m] = bias != NULL ? bias[m] : 0;
        mult[m] = (float)tgc_cpu_qparam_float(&x_scale, 0) * (float)tgc_cpu_qparam_float(&w_scale, m) /
                  (float)tgc_cpu_qparam_float(&y_scale, 0);
    }
    /* scales and zero points fixed for the session: oneDNN requantizes as it stores */
    uint32_t params = 1u << 1 | 1u << 4 | 1u << 6 | 1u << 7 | (bias != NULL ? 1u << 8 : 0);
    tgc_dnnl_conv_requant requant = {vy->dtype, mult, tgc_cpu_qparam_int(&y_zp, 0), bias != NULL};
    conv_weights_arg wa = {vw->dtype, tgc_kernel_in_ptr(c, 3), &wzp, g.m_count, g.cg * g.kk_count, &g, vx->dtype,
                           dnnl_threads(c), (c->const_inputs & params) == params ? &requant : NULL};
    uint32_t weights_in = 1u << 3 | (tgc_kernel_has_input(c, 5) ? 1u << 5 : 0);
    const uint8_t *block = tgc_kernel_cache_get_owning(c, weights_in, build_conv_weights, release_conv_weights, &wa);
    if (block != NULL && vw->dtype != TGC_INT8) tgc_kernel_cache_replaces(c, 1u << 3);
    const tgc_dnnl_conv *dq = block != NULL ? ((const conv_weights_head *)block)->dnnl : NULL;
    bool empty = tgc_value_numel(vy) == 0; /* nothing to compute (and X may have no buffer) */
    if (c->prepack_only || empty || dq == NULL || !tgc_dnnl_conv_matches(dq, &g, vx->dtype)) {
        tgc_free(add), tgc_free(mult);
        return c->prepack_only || empty ? TGC_OK : tgc_cpu_nhwc_fallback(c, qlinear_conv);
    }
    nhwc_job j = {.g = &g, .dq = dq, .x = tgc_kernel_in_ptr(c, 0), .y = tgc_kernel_out_ptr(c, 0), .bias = bias,
                  .add = add, .mult = mult, .x_zp = tgc_cpu_qparam_int(&xzp, 0), .y_zp = tgc_cpu_qparam_int(&y_zp, 0),
                  .is_signed = vy->dtype == TGC_INT8};
    atomic_init(&j.failed, false);
    tgc_cpu_q8_range(vy->dtype, &j.lo, &j.hi);
    if (!tgc_dnnl_conv_requantizes(dq) &&
        (j.yt = tgc_malloc((size_t)(tgc_parallel_width(c->pool) * tgc_dnnl_conv_piece_sums(dq)) * sizeof(int32_t))) ==
            NULL) {
        tgc_free(add), tgc_free(mult);
        return tgc_kernel_fail(c, "out of host memory for the int32 sums");
    }
    c->impl = tgc_dnnl_conv_requantizes(dq) ? "onednn int8 conv nhwc, requantizing" : "onednn int8 conv nhwc";
    for (j.b = 0; j.b < g.batch && !atomic_load(&j.failed); j.b++)
        tgc_parallel_for(c->pool, tgc_dnnl_conv_pieces(dq), nhwc_piece, &j);
    tgc_free(add), tgc_free(mult), tgc_free(j.yt);
    return atomic_load(&j.failed) ? tgc_kernel_fail(c, "oneDNN's int8 convolution failed") : TGC_OK;
}

/* What _QLinearConvNHWC holds: QLinearConv's footprint on the NCHW view
 * (its cache, with oneDNN's weights, and its fallback's workspace), and the
 * int32 sums of an image and the fallback's NCHW copies of X and Y. */
static void qlinear_conv_nhwc_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    if (c->n_inputs < 8 || c->n_outputs < 1 || c->inputs[0].rank != 4 || c->outputs[0].rank != 4) return;
    tgc_value inputs[9], y = tgc_cpu_nhwc_view(&c->outputs[0], true);
    for (int i = 0; i < c->n_inputs && i < 9; i++) inputs[i] = c->inputs[i];
    inputs[0] = tgc_cpu_nhwc_view(&c->inputs[0], true);
    tgc_kernel_ctx sub = *c;
    sub.inputs = inputs;
    sub.outputs = &y;
    int_conv_footprint(&sub, 0, 3, true, width, out);
    tgc_conv_geometry g;
    int64_t copies, sums;
    if (read_int_conv(&sub, 0, 3, &g) != TGC_OK || !tgc_checked_mul_i64(g.channels, g.in_size, &copies) ||
        !tgc_checked_mul_i64(g.m_count, g.out_size, &sums))
        return;
    copies = copies * g.batch + sums * g.batch; /* sizes inference already checked */
    out->workspace_bytes += copies > sums * 4 ? copies : sums * 4;
    if ((c->const_inputs & 1u << 3) && !dnnl_pays(&g)) out->cache_bytes += tgc_dnnl_conv_bound(&g, TGC_INT8);
}

const tgc_kernel_def tgc_cpu_kernels_quant_conv[] = {
    {.op = "ConvInteger",
     .fn = conv_integer,
     .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID},
     .footprint = conv_integer_footprint},
    {.op = "QLinearConv",
     .fn = qlinear_conv,
     .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID},
     .footprint = qlinear_conv_footprint},
    {.op = "_QLinearConvNHWC",
     .fn = qlinear_conv_nhwc,
     .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID},
     .footprint = qlinear_conv_nhwc_footprint},
    {.op = NULL},
};
