/* Direct convolution on the cpu for depthwise and narrow grouped Conv
 * (conv_direct.c), and the vector kernels it runs, compiled once per ISA
 * as conv_isa_sse2.c, conv_isa_avx2.c, conv_isa_avx512.c: output rows in
 * registers (conv_rows.h), depthwise with a channel a lane
 * (conv_dw_lanes.h) and stems with an output channel a lane
 * (conv_channel_lanes.h). Private to devices/cpu/.
 *
 * Example usage (inside the Conv kernel):
 *     if (tgc_cpu_conv_direct_applies(&g)) return tgc_cpu_conv_direct(c, &g, x, w, bias, y);
 */
#ifndef TGC_DEVICES_CPU_CONV_DIRECT_H
#define TGC_DEVICES_CPU_CONV_DIRECT_H

#include "devices/cpu/kernels_nn.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- The driver (conv_direct.c) ---------------------------------------------- */

/* True when Conv geometry g (from tgc_window_read_conv, with input
 * channels and output positions) suits tgc_cpu_conv_direct: 1-D or 2-D,
 * group > 1 with one input channel a group (depthwise: group == C, M any
 * multiple of C) or a few (see conv_direct.c), and pads and dilations
 * that keep its padded copy of an input plane within a few times the
 * input's and output's planes (a model asking for more goes to im2col). */
bool tgc_cpu_conv_direct_applies(const tgc_conv_geometry *g);

/* Conv by the direct method of conv_direct.c for a geometry that
 * tgc_cpu_conv_direct_applies accepts: x [N, C, (H,) W], w [M, C / group,
 * (kh,) kw], bias [M] (NULL: zeros) into y [N, M, (OH,) OW], all float32,
 * through c->fused_act when it is set. Split over c->pool in pieces chosen
 * from the sizes alone; each output's arithmetic is the same whatever the
 * split, so the bits do not depend on the thread count. Scratch (one
 * padded block of input rows per participant, tens of KiB) comes from
 * tgc_calloc and is freed before returning; without it, fails through
 * tgc_kernel_fail naming the bytes. */
/* What tgc_cpu_conv_direct caches for geometry g (devices/kernel.h): the
 * depthwise lanes method's transposed weights and biases when W (and B)
 * are weights (bits of const_inputs), exact. Its per-thread scratch (a
 * band of packed input rows) is not counted: at most LANES_FLOATS floats
 * a thread. Leaves *out as it is otherwise. */
void tgc_cpu_conv_direct_footprint(const tgc_conv_geometry *g, uint32_t const_inputs, tgc_kernel_footprint *out);

tgc_status tgc_cpu_conv_direct(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                               const float *bias, float *y);

/* ---- The vector kernels (one table per ISA) -------------------------------- */

/* One block of output rows: for output channel k in [0, mb), row r in
 * [0, rows) and column f in [0, n),
 *     out[k * out_cs + r * out_rs + f]
 *         = bias[k] + sum over t in [0, taps) of w[k * taps + t] * in[r * in_rs + off[t] + f],
 * summed in the order t = 0, 1, ..., one multiply-add a step (fused where
 * the ISA has FMA), bias NULL meaning zeros. The value of an output never
 * depends on rows, n, mb or where it falls in a vector. Unless exact, the
 * kernel reads in up to `lanes` floats past the last one a sum uses (the
 * caller's buffer has that slack; those lanes are dropped); it writes the
 * outputs only. */
typedef struct tgc_conv_rows_job {
    const float *in;
    int64_t in_rs;
    const int64_t *off; /* [taps] */
    int64_t taps;
    const float *w;    /* [mb, taps] */
    const float *bias; /* [mb], or NULL */
    int64_t mb;
    float *out;
    int64_t out_cs, out_rs;
    int64_t rows, n;
    /* A fused Relu or Clip applied in registers before each store:
     * x < lo gives lo, then x > hi gives hi (NaN passes), the rows of
     * graph/elementwise.def exactly (Relu: lo 0, hi +inf). */
    bool clamp;
    float lo, hi;
    /* tgc_conv_isa.rows_by_channels only: floats between the inputs of
     * neighbouring output positions (column f reads in[r * in_rs +
     * off[t] + f * in_ps]), at least 1. */
    int64_t in_ps;
    /* No slack past the last float a sum uses (the input read where it
     * lies, not a packed block): a partial vector is loaded through a
     * mask (tgc_conv_isa.rows only, not dw_rows). */
    bool exact;
} tgc_conv_rows_job;

/* A band of output rows of a depthwise Conv at stride s (1 or 2, both
 * axes), dilation 1, a k x k window and a left pad pw that
 * tgc_conv_dw_plane_applies takes, read from the input plane where it
 * lies: for output channel q in [0, mb), row r in [0, rows) and column o
 * in [0, ow),
 *     out[q * out_cs + r * out_rs + o]
 *         = bias[q] + sum over taps (i, j) of w[q * k * k + i * k + j] *
 *           x[(s * (oh0 + r) - ph + i) * wd + s * o - pw + j]
 * (zero outside the h x wd plane, multiplied in all the same), taps in
 * the order i * k + j, one multiply-add a step: tgc_conv_rows_job's
 * arithmetic on the planes conv_direct.c would pack, so the same bits.
 * Reads nothing outside the plane; writes the outputs only; then the
 * clamp as tgc_conv_rows_job's. */
typedef struct tgc_conv_dw_plane_job {
    const float *x; /* [h, wd]: the input channel's plane */
    int64_t h, wd, ph, pw;
    /* tgc_conv_isa.plane_rows: the group's cin input planes, in_cs floats
     * apart from x on, each output channel's weights [cin, k, k] */
    int64_t cin, in_cs;
    int64_t oh0, rows, ow;
    const float *w;    /* [mb, k * k] */
    const float *bias; /* [mb], or NULL */
    int64_t mb;
    float *out; /* output row oh0 of the first output channel */
    int64_t out_cs, out_rs;
    bool clamp;
    float lo, hi;
} tgc_conv_dw_plane_job;

/* Whether tgc_conv_isa.plane_rows takes a k x k window at stride s with
 * left pad pw: 3x3 at stride 2, pads 0 or 1 (where packing the phase
 * planes copies the whole input; conv_plane_rows.h). */
static inline bool tgc_conv_plane_rows_applies(int64_t k, int64_t s, int64_t pw) {
    return k == 3 && s == 2 && (pw == 0 || pw == 1);
}

/* Whether tgc_conv_isa.dw_plane takes a k x k window at stride s with
 * left pad pw: 3x3 and 7x7 at stride 1 padded by half the window (as
 * trained models pad them), 3x3 and 5x5 at stride 2 by at most half.
 * 5x5 at stride 1 stays on packed planes: it lost on 56 x 56 maps (the
 * node alone, 144 channels, 1 thread: 545-556 -> 584-662 us) and was
 * level to 12% ahead on 112 x 112. */
static inline bool tgc_conv_dw_plane_applies(int64_t k, int64_t s, int64_t pw) {
    if (s == 1) return (k == 3 || k == 7) && pw == k / 2;
    return s == 2 && (k == 3 || k == 5) && pw >= 0 && pw <= k / 2;
}

/* A band of output rows of a depthwise Conv for a block of input
 * channels c0 .. c0 + nl - 1, one channel a vector lane (nl <= lanes):
 * for each multiplier index q in [0, mult), lane l, output row oh in
 * [oh0, oh0 + rows) and column ow in [0, ow_count),
 *     y[(l * mult + q) * oh_count * ow_count + oh * ow_count + ow]
 *         = bias[q * lanes + l] + sum over taps t = (i, j) of wt[(q * taps + t) * lanes + l] *
 *           x[l * h * w + (oh * sh - ph + i * dh) * w + ow * sw - pw + j * dw]
 * (zero outside the input), taps in the order t = i * kw + j, one
 * multiply-add a step as tgc_conv_rows_job's, then through act (NULL:
 * none). x and y are the block's first input and output planes (output
 * channel (c0 + l) * mult + q sits (l * mult + q) planes after y). */
typedef struct tgc_conv_dw_job {
    const float *x;
    int64_t nl, h, w, oh_count, ow_count, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t oh0, rows, mult;
    const float *wt;   /* [mult, kh * kw, lanes] */
    const float *bias; /* [mult, lanes], or NULL */
    float *y;
    const tgc_fused_act *act;
    float *scratch; /* tgc_conv_dw_scratch_floats(j, lanes) floats, any values */
} tgc_conv_dw_job;

/* The scratch a tgc_conv_dw_job needs at `lanes` lanes: the band's padded
 * input, pixel by pixel with a vector of channels each, and one output row
 * the same way. No overflow: the driver checks the plane sizes first. */
static inline int64_t tgc_conv_dw_scratch_floats(const tgc_conv_dw_job *j, int64_t lanes) {
    int64_t in_rows = (j->rows - 1) * j->sh + (j->kh - 1) * j->dh + 1;
    int64_t in_cols = (j->ow_count - 1) * j->sw + (j->kw - 1) * j->dw + 1;
    return (in_rows * in_cols + (j->ow_count + lanes) / lanes * lanes + lanes) * lanes;
}

/* tgc_conv_isa.pack2's pad_before bits. */
#define TGC_PACK2_EVEN 1u
#define TGC_PACK2_ODD 2u

/* A pointwise layer channels last, Y [rows, m] = X [rows, k] x W^T (+ bias,
 * + Z, then the clamp), W packed in blocks of `lanes` output channels
 * (conv_pointwise.h: block b at w + b * k * lanes, [k][lanes], zeros past
 * m). Each output is bias (0 without one), then every product in the
 * order of k, one tgc_vmuladd each; Z added after; then the clamp. */
typedef struct tgc_conv_pw_job {
    const float *x; /* row r at x + r * ldx, k floats */
    int64_t ldx, k, m;
    const float *w;    /* packed */
    const float *bias; /* [m] or NULL */
    const float *z;    /* row r at z + r * ldy, or NULL; may be y */
    float *y;          /* row r at y + r * ldy, m floats written */
    int64_t ldy;
    bool clamp; /* min(max(., lo), hi) last */
    float lo, hi;
} tgc_conv_pw_job;

typedef struct tgc_conv_isa {
    const char *isa; /* "sse2", "avx2", "avx512": the names of devices/cpu/ew.h */
    int lanes;       /* float32 lanes of its vectors */
    void (*rows)(const tgc_conv_rows_job *j);
    /* dst[r * dst_rs + v] = src[r * src_rs + v * s] for r in [0, rows),
     * v in [0, n), s >= 1, reading nothing else; dst and src do not overlap
     * (input rows packed into a phase plane). */
    void (*pack)(float *dst, int64_t dst_rs, const float *src, int64_t src_rs, int64_t rows, int64_t n, int64_t s);
    /* Both column phases of stride 2 in one pass: for r in [0, rows),
     * even[r * dst_rs + k] = src[r * src_rs + 2k] for k in [0, ne) and
     * odd[r * dst_rs + k] = src[r * src_rs + 2k + 1] for k in [0, no),
     * no <= ne <= no + 1, reading nothing else. pad_before: which of
     * even (TGC_PACK2_EVEN) and odd (TGC_PACK2_ODD) have in every row a
     * padding float just before them, which may then be written (as zero)
     * so that the stores stay on vector boundaries. */
    void (*pack2)(float *even, float *odd, int64_t dst_rs, const float *src, int64_t src_rs, int64_t rows,
                  int64_t ne, int64_t no, unsigned pad_before);
    void (*dw_block)(const tgc_conv_dw_job *j);
    /* rows for a job of one input channel whose taps are a k x k window
     * at stride s (both axes) and dilation 1 over phase planes, as
     * conv_direct.c packs them (k 3, 5 or 7 at stride 1, 3 or 5 at stride
     * 2; others go to rows): the same outputs, bit for bit, each phase row
     * loaded once for all the output rows of a tile that read it. */
    void (*dw_rows)(const tgc_conv_rows_job *j, int k, int s);
    /* The job for a k x k window at stride s (tgc_conv_dw_plane_job). */
    void (*dw_plane)(const tgc_conv_dw_plane_job *j, int k, int s);
    /* rows for a dense or grouped k x k window at stride s (both axes),
     * dilation 1, that tgc_conv_plane_rows_applies takes, read from X
     * where it lies: for output channel q in [0, mb), row r in [0, rows)
     * and column o in [0, ow),
     *     out[q * out_cs + r * out_rs + o] = bias[q] + sum over input
     *         channels c, then taps (i, j), of w[(q * cin + c) * k * k + i * k + j] *
     *         x[c * in_cs + (s * (oh0 + r) - ph + i) * wd + s * o - pw + j]
     * (zero outside the h x wd plane, multiplied in all the same), one
     * multiply-add a step: the row method's bits. Then the clamp. */
    void (*plane_rows)(const tgc_conv_dw_plane_job *j, int k, int s);
    /* rows with the output channels in the lanes (conv_channel_lanes.h),
     * its inputs in_ps floats apart (rows' sums, bit for bit, at in_ps 1),
     * from wt, the job's weights transposed: wt[(k / lanes * taps + t) *
     * lanes + k % lanes] = w[k * taps + t], zeros past mb (j->w is not
     * read). Reads up to lanes * in_ps floats past the last one a sum
     * uses (never exact). */
    void (*rows_by_channels)(const tgc_conv_rows_job *j, const float *wt);
    /* A pointwise layer channels last (conv_pointwise_lanes.h; the job:
     * tgc_conv_pw_job): Y's rows [r0, r1) at channels [b0 * lanes, b1 *
     * lanes) (those below j->m). NULL where the ISA has none (AVX2 and
     * SSE2: oneDNN's kernels ran ahead there). */
    void (*pointwise)(const tgc_conv_pw_job *j, int64_t r0, int64_t r1, int64_t b0, int64_t b1);
    int pointwise_rows; /* rows a tile of pointwise takes (0 without one) */
} tgc_conv_isa;

/* One table per ISA (devices/cpu/conv_isa_*.c). */
extern const tgc_conv_isa tgc_conv_isa_sse2, tgc_conv_isa_avx2, tgc_conv_isa_avx512;

/* The table of the ISA the elementwise loops run (ew_dispatch.c's cpuid
 * choice, TGC_CPU_ISA included). */
const tgc_conv_isa *tgc_cpu_conv_isa(void);

/* Whether fused activation act (NULL: none) is a Relu or a Clip that the
 * vector kernels apply in registers as they store (tgc_conv_rows_job's
 * and tgc_conv_pw_job's clamp), with its bounds in *lo and *hi; false for
 * any other, and for one with a residual (its Add comes first). */
bool tgc_cpu_act_clamp(const tgc_fused_act *act, float *lo, float *hi);

/* The widest lanes any table has: the slack a caller leaves past its input. */
#define TGC_CONV_ROWS_MAX_LANES 16

#endif
