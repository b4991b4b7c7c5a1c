/* tgc_cpu_pool_padded (pool_padded.h): pooling a plane at a time over a
 * padded, phase-split copy of it. */
#include "devices/cpu/pool_padded.h"

#include "devices/cpu/pool_max_rule.h"

#include "devices/cpu/target_clones.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <math.h>
#include <string.h>

/* A thread's scratch block at most (16 MiB): planes past it (thousands of
 * pixels a side) take the row path. */
#define MAX_SCRATCH_FLOATS ((int64_t)4 << 20)

/* Strides past this (s * s phases) take the row path. */
#define MAX_STRIDE 8

/* A batch's scratch aims at this many floats (64 KiB, within a core's L2):
 * small planes (Inception's 17x17 and 8x8) go many to a tap loop. */
#define BATCH_FLOATS ((int64_t)16 << 10)

/* Windows of more than BLOCK_TAPS taps at stride 1: the flat outputs that
 * go through every tap before the next ones (4 KiB): a batch's outputs and
 * its phase (together past a core's L1) were streamed through L1 once a
 * tap, kh * kw times. With stride 2 each tap reads a phase of its own and
 * nothing is gained. */
#define CHUNK_FLOATS ((int64_t)1024)

/* Flat outputs a block folds over every tap before storing them once (4
 * AVX-512 vectors), for windows of at most BLOCK_TAPS taps: the running
 * sums stay in registers, where each tap had swept a chunk of outputs in
 * L1 (a load, an add and a store an element, bound by the stores). With
 * the division a plane a call (pool_batch), Inception-v3's nine 3x3
 * average pools at stride 1 (pads counted; 192-288 planes of 35x35, 768
 * of 17x17, 1280-2048 of 8x8), `tgc run --trace --threads cpu=1`, node
 * best-medians summed over 5-6 alternating rounds: 3914 -> 2862 us and
 * 4444 -> 3511 (ORT's, profiled: 1046), at 2 threads 3648 -> 2957; the
 * max pools level (GoogLeNet's 1212-1404 us both ways). Stride 1 only:
 * DenseNet-121's 2x2 pools at stride 2 (each tap its own phase) lost
 * 8-14% at 2 threads (410-432 -> 446-491 us) and keep the sweeps. */
#define TAP_BLOCK 64
#define BLOCK_TAPS 64

/* Taps (window reads) a piece of planes aims at: 25-60 us of work (2^18
 * left DenseNet-121's [512, 14, 14] pool in one piece at 2 threads). */
#define PIECE_TAPS ((int64_t)1 << 16)

typedef struct padded_pool {
    const tgc_window *w;
    const float *x;
    float *y;
    tgc_pool_kind kind;
    int64_t s;            /* the stride, both axes */
    int64_t hq, wq;       /* a phase's rows and row length: the padded plane's, divided by s (rounded up) */
    int64_t plane_floats; /* hq * wq: one plane's part of a phase, and its outputs' stride in ext */
    int64_t n_ext;        /* (OH - 1) * wq + OW: a plane's flat outputs */
    int64_t batch;        /* planes side by side in the scratch: a tap's loop runs over all of them */
    int64_t planes, planes_per_piece;
    const double *recips; /* AveragePool: [OH, OW], 1 / the taps that count in each window (NaN: none) */
    float *scratch;       /* per slot: s * s phases of batch planes, then the flat outputs */
    int64_t slot_floats;  /* the phases (s * s * batch * plane_floats, to a line), batch * plane_floats of
                           * flat outputs, then a stage of plane_floats */
} padded_pool;

#define INLINE static inline __attribute__((always_inline))

/* dst[q] = src[(q - q0) * s] for q in [q0, q1): the stride a constant
 * where it is 1 or 2, so the copy vectorizes. */
INLINE void phase_row(float *restrict dst, const float *restrict src, int64_t q0, int64_t q1, int64_t s) {
    if (s == 1) {
        for (int64_t q = q0; q < q1; q++) dst[q] = src[q - q0];
    } else if (s == 2) {
        for (int64_t q = q0; q < q1; q++) dst[q] = src[(q - q0) * 2];
    } else {
        for (int64_t q = q0; q < q1; q++) dst[q] = src[(q - q0) * s];
    }
}

/* The start of phase (a, b)'s part for plane k of the batch. */
INLINE float *phase_at(const padded_pool *pp, float *phases, int64_t a, int64_t b, int64_t k) {
    return phases + ((a * pp->s + b) * pp->batch + k) * pp->plane_floats;
}

/* Copies plane x [H, W] into plane k of the phases: input (ih, iw) is
 * padded row r = ih + pad_top, column c = iw + pad_left, and goes to phase
 * (r % s, c % s) at row r / s, column c / s. Only the input's places are
 * written: the padding around them is the same for every plane and was
 * written once (pool_piece). */
INLINE void copy_plane(const padded_pool *pp, const float *restrict x, float *phases, int64_t k) {
    const tgc_window *w = pp->w;
    int64_t s = pp->s, h = w->in[0], wd = w->in[1], pt = w->pads[0], pl = w->pads[1], wq = pp->wq;
    int64_t c_end = wd < s * wq - pl ? wd : s * wq - pl; /* input columns that land in the block */
    int64_t r_end = h + pt < s * pp->hq ? h + pt : s * pp->hq;
    int64_t c0[MAX_STRIDE], q0[MAX_STRIDE], q1[MAX_STRIDE]; /* per phase b: the same for every row */
    for (int64_t b = 0; b < s; b++) {
        c0[b] = ((b - pl) % s + s) % s; /* the first input column of phase b */
        q0[b] = (c0[b] + pl) / s;
        q1[b] = c0[b] < c_end ? q0[b] + (c_end - 1 - c0[b]) / s + 1 : q0[b];
    }
    for (int64_t r = pt, a = pt % s, rq = pt / s; r < r_end; r++) {
        float *dst = phase_at(pp, phases, a, 0, k) + rq * wq;
        const float *src = x + (r - pt) * wd;
        for (int64_t b = 0; b < s; b++)
            if (q1[b] > q0[b]) phase_row(dst + b * pp->batch * pp->plane_floats, src + c0[b], q0[b], q1[b], s);
        if (++a == s) a = 0, rq++;
    }
}

/* tgc_cpu_pool_divide, inlined into each clone of pool_batch. */
INLINE void divide_row(float *restrict y, const float *restrict sum, const double *restrict recip, int64_t n) {
    uint32_t tiny = 0; /* any 0 < |sum| < 2^-100: the bits of |sum| minus 1 below those of 2^-100 minus 1 */
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &sum[i], sizeof bits);
        tiny |= ((bits & 0x7fffffffu) - 1u) < 0x0d7fffffu;
    }
    if (!tiny) {
        for (int64_t i = 0; i < n; i++) y[i] = (float)((double)sum[i] * recip[i]);
        return;
    }
    for (int64_t i = 0; i < n; i++) y[i] = sum[i] / (float)(1.0 / recip[i]);
}

void tgc_cpu_pool_divide(float *restrict y, const float *restrict sum, const double *restrict recip, int64_t n) {
    divide_row(y, sum, recip, n);
}

/* e[i] for i in [i0, i0 + len), len <= TAP_BLOCK: tap 0's p[0][i] (a sum
 * from +0), then each later tap's folded in, in tap order: the chunked
 * loop's arithmetic, so the same bits. */
INLINE void fold_block(float *restrict e, const float *const *p, int64_t taps, int64_t i0, int64_t len, bool max) {
    float acc[TAP_BLOCK];
    const float *restrict p0 = p[0] + i0;
    for (int64_t j = 0; j < len; j++) acc[j] = max ? p0[j] : 0.0f + p0[j];
    for (int64_t t = 1; t < taps; t++) {
        const float *restrict pt = p[t] + i0;
        if (max)
            for (int64_t j = 0; j < len; j++) acc[j] = TGC_POOL_MAX_F32(pt[j], acc[j]);
        else
            for (int64_t j = 0; j < len; j++) acc[j] += pt[j];
    }
    for (int64_t j = 0; j < len; j++) e[i0 + j] = acc[j];
}

/* Tap (th, tw)'s phase, at its offset for flat output 0. */
INLINE const float *tap_at(const padded_pool *pp, float *phases, int64_t th, int64_t tw) {
    return phase_at(pp, phases, th % pp->s, tw % pp->s, 0) + th / pp->s * pp->wq + tw / pp->s;
}

/* ext[0, n) over every tap, TAP_BLOCK outputs at a time (stride 1, kh * kw <= BLOCK_TAPS). */
INLINE void fold_in_registers(const padded_pool *pp, float *phases, float *ext, int64_t n, bool max) {
    const float *tap[BLOCK_TAPS];
    int64_t taps = 0;
    for (int64_t th = 0; th < pp->w->kernel[0]; th++)
        for (int64_t tw = 0; tw < pp->w->kernel[1]; tw++) tap[taps++] = tap_at(pp, phases, th, tw);
    int64_t i0 = 0;
    for (; i0 + TAP_BLOCK <= n; i0 += TAP_BLOCK) fold_block(ext, tap, taps, i0, TAP_BLOCK, max);
    if (i0 < n) fold_block(ext, tap, taps, i0, n - i0, max);
}

/* ext[0, n) over every tap, a tap's sweep over a chunk of outputs at a time. */
INLINE void fold_in_chunks(const padded_pool *pp, float *phases, float *restrict ext, int64_t n, bool max) {
    int64_t chunk = pp->s == 1 ? CHUNK_FLOATS : n; /* stride 1: every tap reads the one phase */
    for (int64_t i0 = 0; i0 < n; i0 += chunk) { /* a chunk of outputs through every tap, in L1 */
        int64_t i1 = n - i0 < chunk ? n : i0 + chunk;
        for (int64_t th = 0; th < pp->w->kernel[0]; th++)
            for (int64_t tw = 0; tw < pp->w->kernel[1]; tw++) {
                const float *restrict p = tap_at(pp, phases, th, tw);
                if (th == 0 && tw == 0) {
                    for (int64_t i = i0; i < i1; i++) ext[i] = max ? p[i] : 0.0f + p[i];
                } else if (max) {
                    for (int64_t i = i0; i < i1; i++) ext[i] = TGC_POOL_MAX_F32(p[i], ext[i]);
                } else {
                    for (int64_t i = i0; i < i1; i++) ext[i] += p[i];
                }
            }
    }
}

/* Planes [0, count) of a batch from x into y: their input into the
 * phases, every tap in row-major window order over the flat outputs of all
 * of them (a sum from +0, or the maximum from -inf: p where it is greater
 * or NaN, the general path's rule; the first tap assigns what either would
 * give), then the OW columns of each row out, averages divided by their
 * counts. */
TGC_CPU_CLONES static void pool_batch(const padded_pool *pp, const float *x, float *y, int64_t count, float *phases,
                                   float *ext, float *stage) {
    const tgc_window *w = pp->w;
    int64_t oh_count = w->out[0], ow_count = w->out[1];
    int64_t n = (count - 1) * pp->plane_floats + pp->n_ext, in_plane = w->in[0] * w->in[1];
    bool max = pp->kind == TGC_POOL_MAX;
    for (int64_t k = 0; k < count; k++) copy_plane(pp, x + k * in_plane, phases, k);
    if (pp->s == 1 && w->kernel[0] * w->kernel[1] <= BLOCK_TAPS) fold_in_registers(pp, phases, ext, n, max);
    else fold_in_chunks(pp, phases, ext, n, max);
    /* Each plane's OH x OW outputs out of ext's rows (wq apart), then the
     * averages divided, a plane in one call (a call a row cost more than
     * the division on 8x8 maps): through the stage where ext's rows are
     * longer than Y's. */
    for (int64_t k = 0; k < count; k++) {
        const float *restrict ek = ext + k * pp->plane_floats;
        float *restrict yk = y + k * oh_count * ow_count;
        const float *plane = ek;
        if (pp->wq != ow_count || max) {
            float *restrict to = max ? yk : stage;
            for (int64_t oh = 0; oh < oh_count; oh++)
                for (int64_t ow = 0; ow < ow_count; ow++) to[oh * ow_count + ow] = ek[oh * pp->wq + ow];
            plane = to;
        }
        if (!max) divide_row(yk, plane, pp->recips, oh_count * ow_count);
    }
}

/* Where the flat outputs start after `phase_floats` floats of phases: on
 * a 64-byte line, so that the tap loops' stores to them are whole lines
 * (a slot starts on one: TGC_ALLOC_ALIGN, slot_floats a multiple of 16). */
static int64_t ext_at(int64_t phase_floats) { return (phase_floats + 15) / 16 * 16; }

/* Planes [piece * planes_per_piece, ...) a batch at a time, in the slot's
 * scratch; its phases start as all padding. */
static void pool_piece(void *arg, int64_t piece, int slot) {
    const padded_pool *pp = arg;
    const tgc_window *w = pp->w;
    int64_t p0 = piece * pp->planes_per_piece;
    int64_t p1 = p0 + pp->planes_per_piece < pp->planes ? p0 + pp->planes_per_piece : pp->planes;
    int64_t phase_floats = pp->s * pp->s * pp->batch * pp->plane_floats;
    float *phases = pp->scratch + slot * pp->slot_floats, *ext = phases + ext_at(phase_floats);
    float *stage = ext + pp->batch * pp->plane_floats;
    float pad = pp->kind == TGC_POOL_MAX ? -INFINITY : 0.0f;
    for (int64_t i = 0; i < phase_floats; i++) phases[i] = pad;
    for (int64_t p = p0; p < p1; p += pp->batch) {
        int64_t count = p1 - p < pp->batch ? p1 - p : pp->batch;
        pool_batch(pp, pp->x + p * w->in[0] * w->in[1], pp->y + p * w->out[0] * w->out[1], count, phases, ext, stage);
    }
}

/* 1 / AveragePool's count of each window (tgc_window_count), [OH, OW], in
 * double (NaN for a window with nothing to count), for
 * tgc_cpu_pool_divide, in a block from tgc_malloc; NULL without memory.
 * OH * OW <= n_ext <= MAX_SCRATCH_FLOATS (plan). */
static double *window_recips(const tgc_window *w, bool include_pad) {
    double *recips = tgc_malloc((size_t)(w->out[0] * w->out[1]) * sizeof *recips);
    for (int64_t oh = 0; recips != NULL && oh < w->out[0]; oh++) {
        int64_t ch = tgc_window_count(w, 0, oh, include_pad);
        for (int64_t ow = 0; ow < w->out[1]; ow++) {
            int64_t count = ch * tgc_window_count(w, 1, ow, include_pad);
            recips[oh * w->out[1] + ow] = count > 0 ? 1.0 / (double)count : NAN;
        }
    }
    return recips;
}

/* The phases' geometry for window w into *pp (pp->s set): false when the
 * sizes overflow or a thread's scratch would pass MAX_SCRATCH_FLOATS. */
static bool plan(const tgc_window *w, padded_pool *pp) {
    int64_t hneed, wneed, taps, work, per_plane;
    /* (OH - 1) * s + kh padded rows and (OW - 1) * s + kw columns, in s * s
     * phases of hq = ceil(rows / s) rows of wq = ceil(columns / s) */
    if (!tgc_checked_mul_i64(w->out[0] - 1, pp->s, &hneed) || !tgc_checked_add_i64(hneed, w->kernel[0], &hneed) ||
        !tgc_checked_mul_i64(w->out[1] - 1, pp->s, &wneed) || !tgc_checked_add_i64(wneed, w->kernel[1], &wneed))
        return false;
    pp->hq = hneed / pp->s + (hneed % pp->s != 0);
    pp->wq = wneed / pp->s + (wneed % pp->s != 0);
    /* a plane's scratch: s * s phases and its outputs, (s * s + 1) * hq * wq;
     * and a slot's stage, one plane's OH x OW <= hq * wq */
    if (!tgc_checked_mul_i64(w->out[0] - 1, pp->wq, &pp->n_ext) ||
        !tgc_checked_add_i64(pp->n_ext, w->out[1], &pp->n_ext) ||
        !tgc_checked_mul_i64(pp->hq, pp->wq, &pp->plane_floats) ||
        !tgc_checked_mul_i64(pp->plane_floats, pp->s * pp->s + 1, &per_plane) ||
        per_plane > MAX_SCRATCH_FLOATS - pp->plane_floats ||
        !tgc_checked_mul_i64(w->kernel[0], w->kernel[1], &taps) || !tgc_checked_mul_i64(taps, pp->n_ext, &work))
        return false;
    pp->planes_per_piece = PIECE_TAPS / (work > 0 ? work : 1);
    if (pp->planes_per_piece < 1) pp->planes_per_piece = 1;
    pp->batch = BATCH_FLOATS / per_plane;
    if (pp->batch > pp->planes_per_piece) pp->batch = pp->planes_per_piece;
    if (pp->batch < 1) pp->batch = 1;
    int64_t phases = ext_at(pp->s * pp->s * pp->batch * pp->plane_floats);
    pp->slot_floats = (phases + (pp->batch + 1) * pp->plane_floats + 15) / 16 * 16;
    return true;
}

bool tgc_cpu_pool_padded(tgc_kernel_ctx *c, const tgc_window *w, int64_t planes, tgc_pool_kind kind,
                         bool include_pad, const float *x, float *y, tgc_status *st) {
    *st = TGC_OK;
    if (w->n != 2 || w->strides[0] != w->strides[1] || w->strides[0] < 1 || w->strides[0] > MAX_STRIDE ||
        w->dilations[0] != 1 || w->dilations[1] != 1 || w->out[0] < 1 || w->out[1] < 1)
        return false;
    for (int a = 0; a < 4; a++)
        if (w->pads[a] < 0) return false;
    padded_pool pp = {.w = w, .x = x, .y = y, .kind = kind, .s = w->strides[0], .planes = planes};
    if (!plan(w, &pp)) return false;
    int width = tgc_parallel_width(c->pool);
    double *recips = kind == TGC_POOL_AVERAGE ? window_recips(w, include_pad) : NULL;
    pp.recips = recips;
    /* slot_floats <= 2^22 + 2 * BATCH_FLOATS and width <= 257: the product fits */
    pp.scratch = tgc_malloc((size_t)(pp.slot_floats * width) * sizeof *pp.scratch);
    if (pp.scratch == NULL || (kind == TGC_POOL_AVERAGE && recips == NULL)) {
        tgc_free(pp.scratch);
        tgc_free(recips);
        *st = tgc_kernel_fail(c, "out of host memory for the pool's padded planes (%d x %lld floats)", width,
                              (long long)pp.slot_floats);
        return true;
    }
    tgc_parallel_for(c->pool, (planes + pp.planes_per_piece - 1) / pp.planes_per_piece, pool_piece, &pp);
    tgc_free(pp.scratch);
    tgc_free(recips);
    return true;
}
