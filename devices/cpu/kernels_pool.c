/* Pooling on the cpu (float32; MaxPool also uint8): MaxPool-12 with its
 * optional Indices, AveragePool-11, GlobalAveragePool-1, over any number of
 * spatial axes; the sliding-window geometry (ONNX's convPoolShapeInference,
 * pads included), shared with Conv and the gpu, is devices/window.c.
 *
 * A window is the Cartesian product, over the spatial axes, of the taps
 * o * stride - pad_begin + t * dilation (t < kernel); a tap outside the input
 * is padding. With ceil_mode the last window may also run past pad_end; those
 * taps are neither input nor padding and count for nothing:
 *   - MaxPool ignores padding (as -inf). Ties keep the first maximum in
 *     row-major window order (onnxruntime and PyTorch alike); a NaN wins.
 *     Indices are flattened over the whole input tensor, N and C included:
 *     (n * C + c) * prod(D) + the spatial offset, row-major for
 *     storage_order 0, column-major (first spatial axis fastest) for 1.
 *   - AveragePool divides by the taps inside the input (count_include_pad
 *     0) or inside the padded input [-pad_begin, D + pad_end) (1), the rule
 *     of the ONNX reference implementation and of PyTorch.
 *   - A window with nothing to count (no input tap for MaxPool and for
 *     AveragePool with count_include_pad 0, nothing inside the padded input
 *     for 1: only possible with pads >= kernel or ceil_mode overshoot) gives
 *     NaN, and Indices -1. */
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/pool_max_rows.h"
#include "devices/cpu/pool_max_rule.h"
#include "devices/cpu/pool_padded.h"
#include "support/alloc.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* ---- MaxPool, AveragePool ---------------------------------------------------- */

/* Taps (window reads) in one piece of a pool split over the device's
 * threads: about 100 us of work. */
#define POOL_PIECE_WORK ((int64_t)1 << 18)

/* One output position's window: per axis the input index of tap 0 (start)
 * and the taps [lo, hi) that read input rather than padding. */
typedef struct window_at {
    int64_t start[TGC_MAX_RANK], lo[TGC_MAX_RANK], hi[TGC_MAX_RANK];
} window_at;

/* Fills *at for output position o[0..n); false if the window reads no input. */
static bool window_locate(const tgc_window *w, const int64_t *o, window_at *at) {
    bool any = true;
    for (int a = 0; a < w->n; a++) {
        at->start[a] = o[a] * w->strides[a] - w->pads[a];
        tgc_window_taps(at->start[a], w->kernel[a], w->dilations[a], 0, w->in[a], &at->lo[a], &at->hi[a]);
        any = any && at->lo[a] < at->hi[a];
    }
    return any;
}

/* Advances the odometer t over [lo, hi) per axis, last axis fastest;
 * false when it wraps around. */
static bool odometer_next(int n, int64_t *t, const int64_t *lo, const int64_t *hi) {
    for (int a = n - 1; a >= 0; a--) {
        if (++t[a] < hi[a]) return true;
        t[a] = lo[a];
    }
    return false;
}

/* Row-major offset within a spatial plane of window `at`'s tap t. */
static int64_t tap_offset(const tgc_window *w, const window_at *at, const int64_t *t) {
    int64_t off = 0;
    for (int a = 0; a < w->n; a++) off = off * w->in[a] + at->start[a] + t[a] * w->dilations[a];
    return off;
}

/* Row-major spatial offset `off` as column-major (first axis fastest). */
static int64_t column_major(const tgc_window *w, int64_t off) {
    int64_t col = 0;
    for (int a = 0; a < w->n; a++) {
        int64_t stride = 1;
        for (int b = a + 1; b < w->n; b++) stride *= w->in[b];
        int64_t i = off / stride;
        off %= stride;
        int64_t cstride = 1;
        for (int b = 0; b < a; b++) cstride *= w->in[b];
        col += i * cstride;
    }
    return col;
}

/* The end of piece `piece`'s planes [piece * per, end) out of `planes`. */
static int64_t piece_end(int64_t piece, int64_t per, int64_t planes) {
    return (piece + 1) * per < planes ? (piece + 1) * per : planes;
}

/* ---- 2-D pooling over rows: the CNN case ------------------------------------ */

/* The taps of a 2-D window along the last axis, each with the output
 * columns [lo, hi) where it reads input; at most POOL_2D_MAX_TAPS of them. */
#define POOL_2D_MAX_TAPS 64

/* A 2-D pool split over the device's threads by planes. For AveragePool,
 * count_w[ow] is the number of taps of output column ow's window that count
 * (per count_include_pad), and include_pad the attribute. */
typedef struct pool_2d {
    const tgc_window *w;
    const float *x;
    float *y;
    const uint8_t *x8; /* MaxPool of uint8 (x and y NULL) */
    uint8_t *y8;
    int64_t planes, planes_per_piece;
    int64_t col_lo[POOL_2D_MAX_TAPS], col_hi[POOL_2D_MAX_TAPS];
    const int64_t *count_w;
    bool include_pad;
} pool_2d;

/* Fills m's column ranges for a 2-D window; false (nothing filled) when
 * the window is not 2-D or has more than POOL_2D_MAX_TAPS taps per row. */
static bool pool_2d_columns(const tgc_window *w, pool_2d *m) {
    if (w->n != 2 || w->kernel[1] > POOL_2D_MAX_TAPS) return false;
    for (int64_t tw = 0; tw < w->kernel[1]; tw++) {
        /* ow * sw - pad + tw * dw in [0, in): tgc_window_taps from the output side */
        int64_t off = tw * w->dilations[1] - w->pads[1], lo = 0, hi = w->out[1];
        while (lo < hi && lo * w->strides[1] + off < 0) lo++;
        while (hi > lo && (hi - 1) * w->strides[1] + off >= w->in[1]) hi--;
        m->col_lo[tw] = lo;
        m->col_hi[tw] = hi;
    }
    return true;
}

/* Splits m's planes into pieces of about POOL_PIECE_WORK taps and runs
 * `piece` over them on the device's pool. */
static void pool_2d_split(tgc_kernel_ctx *c, pool_2d *m, void (*piece)(void *, int64_t, int)) {
    const tgc_window *w = m->w;
    int64_t plane_work = w->out[0] * w->out[1] * w->kernel[0] * w->kernel[1];
    m->planes_per_piece = POOL_PIECE_WORK / (plane_work > 0 ? plane_work : 1);
    if (m->planes_per_piece < 1) m->planes_per_piece = 1;
    tgc_parallel_for(c->pool, (m->planes + m->planes_per_piece - 1) / m->planes_per_piece, piece, m);
}

/* A 2-D MaxPool piece over element type T (pool_2d's x and y members X
 * and Y): planes [piece * planes_per_piece, ...) row by row, each output
 * row starting at LOW and taking, tap by tap in row-major window order,
 * MAX(v, best), with loops over the row that vectorize (a contiguous one
 * where the stride is 1). */
#define MAX_POOL_2D_PIECE(name, T, X, Y, LOW, MAX)                                                      \
    static void name(void *arg, int64_t piece, int slot) {                                              \
        (void)slot;                                                                                      \
        const pool_2d *m = arg;                                                                          \
        const tgc_window *w = m->w;                                                                      \
        int64_t h = w->in[0], wd = w->in[1], oh_count = w->out[0], ow_count = w->out[1];               \
        int64_t sw = w->strides[1], dw = w->dilations[1];                                                \
        int64_t p1 = piece_end(piece, m->planes_per_piece, m->planes);                                   \
        for (int64_t p = piece * m->planes_per_piece; p < p1; p++) {                                     \
            for (int64_t oh = 0; oh < oh_count; oh++) {                                                  \
                T *restrict out = m->Y + (p * oh_count + oh) * ow_count;                                 \
                for (int64_t ow = 0; ow < ow_count; ow++) out[ow] = LOW;                                 \
                int64_t h0 = oh * w->strides[0] - w->pads[0], hlo, hhi;                                  \
                tgc_window_taps(h0, w->kernel[0], w->dilations[0], 0, h, &hlo, &hhi);                    \
                for (int64_t th = hlo; th < hhi; th++) {                                                 \
                    const T *restrict row = m->X + (p * h + h0 + th * w->dilations[0]) * wd;             \
                    for (int64_t tw = 0; tw < w->kernel[1]; tw++) {                                      \
                        int64_t off = tw * dw - w->pads[1];                                              \
                        if (sw == 1)                                                                     \
                            for (int64_t ow = m->col_lo[tw]; ow < m->col_hi[tw]; ow++) {                 \
                                T v = row[ow + off];                                                     \
                                out[ow] = MAX(v, out[ow]);                                                \
                            }                                                                            \
                        else                                                                             \
                            for (int64_t ow = m->col_lo[tw]; ow < m->col_hi[tw]; ow++) {                 \
                                T v = row[ow * sw + off];                                                \
                                out[ow] = MAX(v, out[ow]);                                                \
                            }                                                                            \
                    }                                                                                    \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }

/* float32: rows start at -inf; a NaN wins and the first maximum wins
 * ties, as in the general path (pool_max_rule.h). uint8: every window
 * reads some input, so a row starts at 0 (no byte is below it). */
#define MAX_U8(v, best) ((v) > (best) ? (v) : (best))
MAX_POOL_2D_PIECE(max_pool_2d_piece, float, x, y, -INFINITY, TGC_POOL_MAX_F32)
MAX_POOL_2D_PIECE(max_pool_2d_u8_piece, uint8_t, x8, y8, 0, MAX_U8)
#undef MAX_POOL_2D_PIECE

/* The 2-D paths when one applies (every output window reads some input):
 * for float32 without dilation, rows then columns (pool_max_rows.h), or for
 * windows past its 64 taps a side padded planes (pool_padded.h, equal
 * strides); else rows, at most POOL_2D_MAX_TAPS taps per row. True when
 * one ran, with *st its status. x and y are uint8 when u8, else float32. */
static bool max_pool_2d_run(tgc_kernel_ctx *c, const tgc_window *w, int64_t planes, bool u8, const void *x, void *y,
                            tgc_status *st) {
    *st = TGC_OK;
    pool_2d m = {.w = w, .planes = planes};
    if (u8) m.x8 = x, m.y8 = y;
    else m.x = x, m.y = y;
    if (!pool_2d_columns(w, &m)) return false;
    /* Every window must read input (with dilation, one in the middle may
     * not): each output row has a tap row, each output column a tap. */
    for (int64_t oh = 0; oh < w->out[0]; oh++) {
        int64_t lo, hi;
        tgc_window_taps(oh * w->strides[0] - w->pads[0], w->kernel[0], w->dilations[0], 0, w->in[0], &lo, &hi);
        if (lo >= hi) return false;
    }
    for (int64_t ow = 0; ow < w->out[1]; ow++) {
        bool read = false;
        for (int64_t tw = 0; tw < w->kernel[1] && !read; tw++) read = m.col_lo[tw] <= ow && ow < m.col_hi[tw];
        if (!read) return false;
    }
    if (u8) {
        pool_2d_split(c, &m, max_pool_2d_u8_piece);
        return true;
    }
    if (tgc_cpu_max_pool_rows(c, w, planes, x, y, st)) return true;
    if (tgc_cpu_pool_padded(c, w, planes, TGC_POOL_MAX, false, x, y, st)) return true;
    pool_2d_split(c, &m, max_pool_2d_piece);
    return true;
}

/* ---- AveragePool, 2-D ---------------------------------------------------------- */

/* Planes [piece * planes_per_piece, ...) row by row: each output row's sums
 * start at 0 and take the taps that read input in row-major window order
 * (the general path's order, so the sums are bitwise the same), then each
 * is divided by its window's count: rows' count times count_w[ow]. */
static void average_pool_2d_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const pool_2d *m = arg;
    const tgc_window *w = m->w;
    int64_t h = w->in[0], wd = w->in[1], oh_count = w->out[0], ow_count = w->out[1];
    int64_t sw = w->strides[1], dw = w->dilations[1];
    int64_t p1 = piece_end(piece, m->planes_per_piece, m->planes);
    for (int64_t p = piece * m->planes_per_piece; p < p1; p++) {
        for (int64_t oh = 0; oh < oh_count; oh++) {
            float *restrict out = m->y + (p * oh_count + oh) * ow_count;
            for (int64_t ow = 0; ow < ow_count; ow++) out[ow] = 0.0f;
            int64_t h0 = oh * w->strides[0] - w->pads[0], hlo, hhi;
            int64_t count_h = tgc_window_count(w, 0, oh, m->include_pad);
            tgc_window_taps(h0, w->kernel[0], w->dilations[0], 0, h, &hlo, &hhi);
            for (int64_t th = hlo; th < hhi; th++) {
                const float *restrict row = m->x + (p * h + h0 + th * w->dilations[0]) * wd;
                for (int64_t tw = 0; tw < w->kernel[1]; tw++) {
                    int64_t off = tw * dw - w->pads[1];
                    if (sw == 1) { /* contiguous: vectorizes */
                        const float *restrict in = row + off;
                        for (int64_t ow = m->col_lo[tw]; ow < m->col_hi[tw]; ow++) out[ow] += in[ow];
                    } else {
                        for (int64_t ow = m->col_lo[tw]; ow < m->col_hi[tw]; ow++) out[ow] += row[ow * sw + off];
                    }
                }
            }
            for (int64_t ow = 0; ow < ow_count; ow++) {
                int64_t count = count_h * m->count_w[ow];
                out[ow] = count > 0 ? out[ow] / (float)count : NAN;
            }
        }
    }
}

/* The 2-D paths when one applies (padded planes, pool_padded.h, for equal
 * strides and no dilation, else rows): true when one ran; TGC_ERR_NOMEM
 * through *st when its scratch could not be allocated. */
static bool average_pool_2d_run(tgc_kernel_ctx *c, const tgc_window *w, int64_t planes, bool include_pad,
                                const float *x, float *y, tgc_status *st) {
    if (tgc_cpu_pool_padded(c, w, planes, TGC_POOL_AVERAGE, include_pad, x, y, st)) return true;
    pool_2d m = {.w = w, .x = x, .y = y, .planes = planes, .include_pad = include_pad};
    if (!pool_2d_columns(w, &m)) return false;
    int64_t *count_w = tgc_malloc((size_t)w->out[1] * sizeof *count_w);
    if (count_w == NULL) {
        *st = tgc_kernel_fail(c, "out of host memory for AveragePool's column counts");
        return true;
    }
    for (int64_t ow = 0; ow < w->out[1]; ow++) count_w[ow] = tgc_window_count(w, 1, ow, include_pad);
    m.count_w = count_w;
    pool_2d_split(c, &m, average_pool_2d_piece);
    tgc_free(count_w);
    return true;
}

/* The offset (within its plane) of the maximum tap of window `at`, -1
 * when the window reads no input: the first maximum in row-major window
 * order; for float32 a NaN wins, as numpy.maximum. x is the plane, float32
 * or uint8 (MaxPool-12 takes both). */
static int64_t window_argmax(const tgc_window *w, const window_at *at, const void *x, bool u8) {
    int64_t best_off = -1, t[TGC_MAX_RANK];
    float best = 0.0f;
    memcpy(t, at->lo, sizeof t);
    do {
        int64_t off = tap_offset(w, at, t);
        float v = u8 ? (float)((const uint8_t *)x)[off] : ((const float *)x)[off];
        if (best_off < 0 || v > best || (isnan(v) && !isnan(best))) {
            best = v;
            best_off = off;
        }
    } while (odometer_next(w->n, t, at->lo, at->hi));
    return best_off;
}

/* The general path, any rank, with or without Indices: each window's
 * maximum by window_argmax. A window that reads no input gives NaN (0 for
 * uint8, which has no NaN) and Indices -1. */
static void max_pool_general(const tgc_window *w, int64_t planes, int64_t in_size, int64_t out_size,
                             int64_t storage_order, bool u8, const void *x, void *y, int64_t *indices) {
    size_t esize = u8 ? 1 : sizeof(float);
    for (int64_t p = 0; p < planes; p++) {
        /* An empty input has no memory (x NULL) and windows that read nothing. */
        const char *plane = x != NULL ? (const char *)x + (size_t)(p * in_size) * esize : NULL;
        int64_t o[TGC_MAX_RANK] = {0}, zero[TGC_MAX_RANK] = {0};
        for (int64_t j = 0; j < out_size; j++, odometer_next(w->n, o, zero, w->out)) {
            window_at at;
            int64_t off = window_locate(w, o, &at) ? window_argmax(w, &at, plane, u8) : -1, at_y = p * out_size + j;
            if (u8) ((uint8_t *)y)[at_y] = off < 0 ? 0 : ((const uint8_t *)plane)[off];
            else ((float *)y)[at_y] = off < 0 ? NAN : ((const float *)plane)[off];
            if (indices != NULL)
                indices[at_y] = off < 0 ? -1 : p * in_size + (storage_order ? column_major(w, off) : off);
        }
    }
}

tgc_status tgc_cpu_max_pool(tgc_kernel_ctx *c) {
    tgc_window w;
    int64_t planes, in_size, out_size;
    tgc_status st = tgc_window_read_pool(c, &w, &planes, &in_size, &out_size, NULL);
    if (st != TGC_OK) return st;
    int64_t storage_order = tgc_kernel_attr_int(c, "storage_order", 0);
    if (storage_order != 0 && storage_order != 1)
        return tgc_kernel_fail(c, "attribute 'storage_order' is %lld; it must be 0 or 1",
                               (long long)storage_order);
    bool want_indices = tgc_kernel_has_output(c, 1);
    if (want_indices) {
        const tgc_value *iv = &c->outputs[1];
        if (iv->dtype != TGC_INT64 || tgc_value_numel(iv) != planes * out_size)
            return tgc_kernel_fail(c, "output Indices must be int64 with Y's shape");
    }
    if (planes * out_size == 0) return TGC_OK;
    int64_t *indices = want_indices ? tgc_kernel_out_ptr(c, 1) : NULL;
    bool u8 = c->inputs[0].dtype == TGC_UINT8;
    const void *x = tgc_kernel_in_ptr(c, 0);
    void *y = tgc_kernel_out_ptr(c, 0);
    if (indices == NULL && max_pool_2d_run(c, &w, planes, u8, x, y, &st)) return st;
    max_pool_general(&w, planes, in_size, out_size, storage_order, u8, x, y, indices);
    return TGC_OK;
}

tgc_status tgc_cpu_average_pool_f32(tgc_kernel_ctx *c) {
    tgc_window w;
    int64_t planes, in_size, out_size;
    tgc_status st = tgc_window_read_pool(c, &w, &planes, &in_size, &out_size, NULL);
    if (st != TGC_OK) return st;
    int64_t include_pad = tgc_kernel_attr_int(c, "count_include_pad", 0);
    if (include_pad != 0 && include_pad != 1)
        return tgc_kernel_fail(c, "attribute 'count_include_pad' is %lld; it must be 0 or 1",
                               (long long)include_pad);
    if (planes * out_size == 0) return TGC_OK;
    const float *x = tgc_kernel_in_ptr(c, 0);
    float *y = tgc_kernel_out_ptr(c, 0);
    if (average_pool_2d_run(c, &w, planes, include_pad != 0, x, y, &st)) return st;

    for (int64_t p = 0; p < planes; p++) {
        int64_t o[TGC_MAX_RANK] = {0}, zero[TGC_MAX_RANK] = {0};
        for (int64_t j = 0; j < out_size; j++, odometer_next(w.n, o, zero, w.out)) {
            window_at at;
            float sum = 0.0f;
            int64_t count = 1;
            bool any = window_locate(&w, o, &at);
            if (any) {
                int64_t t[TGC_MAX_RANK];
                memcpy(t, at.lo, sizeof t);
                do sum += x[p * in_size + tap_offset(&w, &at, t)];
                while (odometer_next(w.n, t, at.lo, at.hi));
            }
            for (int a = 0; a < w.n; a++) {
                int64_t lo = at.lo[a], hi = at.hi[a];
                if (include_pad)
                    tgc_window_taps(at.start[a], w.kernel[a], w.dilations[a], -w.pads[a],
                                        w.in[a] + w.pads[w.n + a], &lo, &hi);
                count *= hi - lo;
            }
            y[p * out_size + j] = count > 0 ? sum / (float)count : NAN;
        }
    }
    return TGC_OK;
}

/* ---- GlobalAveragePool ------------------------------------------------------- */

typedef struct global_pool {
    const float *x;
    float *y;
    int64_t planes, size, planes_per_piece;
} global_pool;

/* The sum in double of x[0..n): 8 running sums (element i into sum i mod
 * 8, which vectorizes and hides the adds' latency), then added pairwise. */
static double sum_as_double(const float *restrict x, int64_t n) {
    double acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += (double)x[i + k];
    for (int k = 0; i < n; i++, k++) acc[k] += (double)x[i];
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

/* The floats one piece of GlobalAveragePool reads (256 KiB, ~10 us from
 * memory): a read is all it does, a quarter of POOL_PIECE_WORK's taps
 * take as long. SqueezeNet's [1, 1000, 13, 13] (169K floats) ran whole at
 * 2 threads, 24-30 us alone and 45 in the model, where ORT took 17; in 3
 * pieces 16-24 alone, the model 2.90 -> 2.85 ms (medians of 7 rounds).
 * Level where the pools are squeeze-and-excitation's, over maps of up to
 * 112x112: EfficientNet-B1 and MobileNetV3-Small at 1 and 2 threads,
 * MobileNetV2 at 2. */
#define GLOBAL_POOL_PIECE_FLOATS ((int64_t)1 << 16)

/* Planes [piece * planes_per_piece, ...): each plane's mean. */
static void global_average_pool_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const global_pool *g = arg;
    int64_t p1 = piece_end(piece, g->planes_per_piece, g->planes);
    for (int64_t p = piece * g->planes_per_piece; p < p1; p++) {
        /* (an empty plane reads nothing: its x may be NULL, never offset) */
        g->y[p] = g->size > 0 ? (float)(sum_as_double(g->x + p * g->size, g->size) / (double)g->size) : NAN;
    }
}

/* [N, C, D1..Dn] -> [N, C, 1..1]: the mean of each plane, summed in double
 * (planes can be large); NaN for an empty plane, as numpy's mean. Planes
 * split over the device's threads (the same sums on any thread count). */
tgc_status tgc_cpu_global_average_pool_f32(tgc_kernel_ctx *c) {
    int64_t planes, size;
    tgc_status st = tgc_window_read_global_pool(c, &planes, &size);
    if (st != TGC_OK) return st;
    if (planes == 0) return TGC_OK;
    global_pool g = {.x = tgc_kernel_in_ptr(c, 0), .y = tgc_kernel_out_ptr(c, 0), .planes = planes, .size = size};
    g.planes_per_piece = GLOBAL_POOL_PIECE_FLOATS / (size > 0 ? size : 1);
    if (g.planes_per_piece < 1) g.planes_per_piece = 1;
    tgc_parallel_for(c->pool, (planes + g.planes_per_piece - 1) / g.planes_per_piece, global_average_pool_piece, &g);
    return TGC_OK;
}
