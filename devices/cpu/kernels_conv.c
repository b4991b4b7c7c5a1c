/* Conv-11 on the cpu (float32): X [N, C, D1..Dn], W [M, C/group, k1..kn],
 * optional B [M] -> Y [N, M, O1..On], any number n >= 1 of spatial axes,
 * with group, pads, strides, dilations and auto_pad (resolved to pads in
 * devices/window.c's tgc_window_read, as ONNX does).
 *
 * Six paths, by shape:
 *   - oneDNN's channels-last kernel on transposed copies (dense layers on
 *     small maps with W a constant, where Winograd's GEMMs are thin or
 *     im2col's map is small): conv_dnnl.c.
 *   - direct (1-D and 2-D grouped and depthwise layers, and one group
 *     over few channels: 3x3 on up to 24 with AVX-512, images' stems,
 *     narrow 1x1):
 *     conv_direct.c, each output row in registers over all its taps;
 *     im2col would copy k1*k2 times the input to multiply it by a few
 *     rows, Winograd's GEMMs would be too thin.
 *   - Winograd (3x3, stride 1, one group, 16+ channels, 25+ with AVX-512
 *     where direct takes the narrower, a large enough output):
 *     conv_winograd.c.
 *   - small maps (7x7, 8x8; 14x14 for kernels past 1x1 where Winograd
 *     does not apply; one group, W a constant): the output channels
 *     across the vector lanes, Y^T = A W^T by oneDNN on W^T packed once,
 *     A the receptive fields channels last: conv_small_map.c.
 *   - pointwise (every kernel size 1, strides 1, no pads): each group's
 *     output is one GEMM on the input as it lies, Y_g = W_g [M/g, C/g] x
 *     X_g [C/g, D1*..*Dn]; no copy.
 *   - otherwise im2col (Chellapilla, Puri and Simard, "High Performance
 *     Convolutional Neural Networks for Document Processing", 2006): each
 *     group's receptive fields are unrolled into a matrix col
 *     [C/g * k1*..*kn, O1*..*On] (padding as zeros) and Y_g = W_g x col by
 *     cblas_sgemm, in tiles of output rows over the device's threads (see
 *     below); col buffers come from tgc_malloc, one per thread, and are
 *     freed before returning.
 * The bias is added to each block after its product (beta 0), per tile or
 * per GEMM piece (tgc_cpu_sgemm_fused) while the block is in cache;
 * a fused activation (c->fused_act, executor/fuse.c) is applied the same way, as
 * the last step. Large passes are split over c->pool in pieces chosen from
 * the sizes alone. */
#include "devices/cpu/kernels_nn.h"

#include "devices/cpu/conv_direct.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The largest im2col buffer built at once, in floats (32 MiB). */
#define COL_BUDGET_FLOATS ((int64_t)8 << 20)

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

/* The output indices [*lo, *hi) within [l0, l1) whose input index
 * o * s + off lies in [0, in): outside them the tap reads padding. */
static void valid_range(int64_t off, int64_t s, int64_t in, int64_t l0, int64_t l1, int64_t *lo,
                        int64_t *hi) {
    int64_t l = ceil_div(-off, s), h = ceil_div(in - off, s);
    if (l < l0) l = l0;
    if (l > l1) l = l1; /* every tap of the slab in the padding past the input */
    if (h > l1) h = l1;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* Unrolls one group's input x [cg, D1..Dn] into col for the output slab
 * whose first spatial index is in [o0, o1) (with n == 1 that axis is also
 * the innermost): col[(ci * KK + kk) * cols + j], kk the row-major kernel
 * tap, j the row-major output position within the slab, cols the slab's
 * size. Taps that land in the padding give 0. */
static void im2col(const float *x, int64_t cg, const tgc_window *w, int64_t o0, int64_t o1, float *col) {
    int n = w->n, last = n - 1;
    int64_t in_size = 1, kk_count = 1;
    for (int a = 0; a < n; a++) {
        in_size *= w->in[a];
        kk_count *= w->kernel[a];
    }
    /* The last axis spans [l0, l1) of its outputs; the others form the outer odometer. */
    int64_t l0 = n == 1 ? o0 : 0, l1 = n == 1 ? o1 : w->out[last];
    int64_t s = w->strides[last], in_last = w->in[last];
    float *dst = col;
    for (int64_t ci = 0; ci < cg; ci++) {
        const float *xc = x + ci * in_size;
        int64_t kt[TGC_MAX_RANK] = {0};
        for (int64_t kk = 0; kk < kk_count; kk++) {
            int64_t off = kt[last] * w->dilations[last] - w->pads[last], lo, hi;
            valid_range(off, s, in_last, l0, l1, &lo, &hi);
            int64_t o[TGC_MAX_RANK] = {0};
            o[0] = o0;
            for (;;) {
                /* The input row this outer position and tap read, if any. */
                bool inside = true;
                int64_t base = 0;
                for (int a = 0; a < last; a++) {
                    int64_t i = o[a] * w->strides[a] - w->pads[a] + kt[a] * w->dilations[a];
                    inside = inside && i >= 0 && i < w->in[a];
                    base = base * w->in[a] + i;
                }
                int64_t width = l1 - l0;
                if (!inside) {
                    memset(dst, 0, (size_t)width * sizeof *dst);
                } else {
                    const float *row = xc + base * in_last;
                    for (int64_t j = l0; j < lo; j++) dst[j - l0] = 0.0f;
                    if (s == 1 && hi > lo)
                        memcpy(dst + (lo - l0), row + lo + off, (size_t)(hi - lo) * sizeof *dst);
                    else
                        for (int64_t j = lo; j < hi; j++) dst[j - l0] = row[j * s + off];
                    for (int64_t j = hi; j < l1; j++) dst[j - l0] = 0.0f;
                }
                dst += width;
                /* Next outer position: axes last-1 .. 1 over [0, out), axis 0 over [o0, o1). */
                int a = last - 1;
                for (; a >= 0; a--) {
                    if (++o[a] < (a == 0 ? o1 : w->out[a])) break;
                    o[a] = a == 0 ? o0 : 0;
                }
                if (a < 0) break;
            }
            for (int a = last; a >= 0; a--) { /* next kernel tap */
                if (++kt[a] < w->kernel[a]) break;
                kt[a] = 0;
            }
        }
    }
}

/* dst[k] = src[2k] for k < n (a stride-2 row; a parameter-restrict loop
 * that gcc vectorizes). */
__attribute__((noinline)) static void copy_stride2(float *restrict dst, const float *restrict src, int64_t n) {
    for (int64_t k = 0; k < n; k++) dst[k] = src[2 * k];
}

/* im2col for 2-D windows, the common case: the same layout as im2col above
 * for output rows [o0, o1), as plain loops over each tap's rows (the
 * odometer's bookkeeping per row cost as much as the copying). */
static void im2col_2d(const float *x, int64_t cg, const tgc_window *w, int64_t o0, int64_t o1, float *col) {
    int64_t h = w->in[0], wd = w->in[1], ow_count = w->out[1];
    int64_t sh = w->strides[0], sw = w->strides[1], dh = w->dilations[0], dw = w->dilations[1];
    float *dst = col;
    for (int64_t ci = 0; ci < cg; ci++) {
        const float *xc = x + ci * h * wd;
        for (int64_t i = 0; i < w->kernel[0]; i++) {
            for (int64_t j = 0; j < w->kernel[1]; j++) {
                int64_t off = j * dw - w->pads[1], lo, hi;
                valid_range(off, sw, wd, 0, ow_count, &lo, &hi);
                for (int64_t oh = o0; oh < o1; oh++, dst += ow_count) {
                    int64_t ih = oh * sh - w->pads[0] + i * dh;
                    if (ih < 0 || ih >= h) {
                        memset(dst, 0, (size_t)ow_count * sizeof *dst);
                        continue;
                    }
                    /* row[ow * sw + off] for ow in [lo, hi), zeros around; short
                     * rows (late layers: 7 or 14 wide) by loops, not calls */
                    const float *row = xc + ih * wd + lo * sw + off;
                    for (int64_t k = 0; k < lo; k++) dst[k] = 0.0f;
                    if (sw == 1 && hi - lo >= 32) memcpy(dst + lo, row, (size_t)(hi - lo) * sizeof *dst);
                    else if (sw == 1) for (int64_t k = 0; k < hi - lo; k++) dst[lo + k] = row[k];
                    else if (sw == 2) copy_stride2(dst + lo, row, hi - lo);
                    else for (int64_t k = 0; k < hi - lo; k++) dst[lo + k] = row[k * sw];
                    for (int64_t k = hi; k < ow_count; k++) dst[k] = 0.0f;
                }
            }
        }
    }
}

/* ---- Bias and a fused Relu ------------------------------------------------ */

/* Y's rows (one per image and output channel, out_size floats each) in
 * pieces of ~64 Ki floats: filled with the bias (a Conv with nothing to
 * multiply, whose Y is its bias), then passed through the fused
 * activation. */
#define ROWS_PIECE_FLOATS ((int64_t)1 << 16)

typedef struct conv_rows {
    float *y;
    const float *bias; /* [M], or NULL: zeros */
    const tgc_fused_act *act; /* act_piece's activation */
    int64_t m_count, out_size, rows, rows_per_piece;
} conv_rows;


static void fill_bias_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const conv_rows *r = arg;
    int64_t hi = (piece + 1) * r->rows_per_piece < r->rows ? (piece + 1) * r->rows_per_piece : r->rows;
    for (int64_t p = piece * r->rows_per_piece; p < hi; p++) {
        float v = r->bias != NULL ? r->bias[p % r->m_count] : 0.0f, *row = r->y + p * r->out_size;
        for (int64_t j = 0; j < r->out_size; j++) row[j] = v;
    }
}

static void act_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const conv_rows *r = arg;
    int64_t hi = (piece + 1) * r->rows_per_piece < r->rows ? (piece + 1) * r->rows_per_piece : r->rows;
    tgc_cpu_act_block(r->act, r->y, r->out_size, piece * r->rows_per_piece, hi, 0, r->out_size);
}

/* Runs fn (fill_bias_piece or act_piece) over all of Y, split over the pool. */
static void over_rows(tgc_kernel_ctx *c, const tgc_conv_geometry *g, float *y, const float *bias,
                      tgc_parallel_fn fn) {
    conv_rows r = {.y = y, .bias = bias, .act = c->fused_act, .m_count = g->m_count, .out_size = g->out_size,
                   .rows = g->batch * g->m_count};
    r.rows_per_piece = ROWS_PIECE_FLOATS / (g->out_size > 0 ? g->out_size : 1);
    if (r.rows_per_piece < 1) r.rows_per_piece = 1;
    tgc_parallel_for(c->pool, (r.rows + r.rows_per_piece - 1) / r.rows_per_piece, fn, &r);
}

/* ---- im2col + GEMM, in tiles over the device's threads ------------------- */

/* A tile is a run of rows of the first output axis: its im2col block
 * [k, cols] is built and multiplied at once, on one thread, while it is in
 * that core's cache. Tiles aim at TILE_FLOATS floats of im2col (384 KiB, in
 * a core's L2) and at least TILE_MIN_COLS output positions (thinner GEMMs
 * run slowly). An image with fewer than two such tiles (late CNN layers:
 * 14x14, 7x7) builds its whole im2col matrix once and the GEMM splits over
 * output channels instead (tgc_cpu_sgemm). */
#define TILE_FLOATS ((int64_t)96 << 10)
#define TILE_MIN_COLS 128

typedef struct conv_tiles {
    const tgc_conv_geometry *g;
    const float *x, *w, *bias; /* bias [M] or NULL */
    float *y;
    const tgc_fused_act *act; /* a fused activation, applied to each tile's block */
    int64_t k, m_group, row_cols, tile_rows, tiles; /* tiles per (image, group) */
    float **col;                                    /* one [k, tile_rows * row_cols] block per slot */
    _Atomic bool failed;
} conv_tiles;

static void build_col(const float *x, int64_t cg, const tgc_window *w, int64_t o0, int64_t o1, float *col) {
    if (w->n == 2) im2col_2d(x, cg, w, o0, o1, col);
    else im2col(x, cg, w, o0, o1, col);
}

/* build_col over input channels split across the pool: channel ci's rows
 * start at col + ci * kk_count * cols. */
typedef struct col_split {
    const float *x;
    const tgc_conv_geometry *g;
    int64_t o0, o1, cols, per_piece;
    float *col;
} col_split;

static void col_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const col_split *s = arg;
    int64_t c0 = piece * s->per_piece, c1 = c0 + s->per_piece < s->g->cg ? c0 + s->per_piece : s->g->cg;
    build_col(s->x + c0 * s->g->in_size, c1 - c0, &s->g->w, s->o0, s->o1, s->col + c0 * s->g->kk_count * s->cols);
}

static void build_col_split(tgc_kernel_ctx *c, const float *x, const tgc_conv_geometry *g, int64_t o0, int64_t o1,
                            float *col) {
    int64_t cols = (o1 - o0) * (g->out_size / g->w.out[0]), per_channel = g->kk_count * cols;
    col_split s = {.x = x, .g = g, .o0 = o0, .o1 = o1, .cols = cols, .col = col};
    s.per_piece = ROWS_PIECE_FLOATS / (per_channel > 0 ? per_channel : 1);
    if (s.per_piece < 1) s.per_piece = 1;
    tgc_parallel_for(c->pool, (g->cg + s.per_piece - 1) / s.per_piece, col_piece, &s);
}

static void conv_tile(void *arg, int64_t i, int slot) {
    conv_tiles *t = arg;
    const tgc_conv_geometry *g = t->g;
    int64_t ng = i / t->tiles, n = ng / g->group, gi = ng % g->group;
    int64_t o0 = i % t->tiles * t->tile_rows, o1 = o0 + t->tile_rows < g->w.out[0] ? o0 + t->tile_rows : g->w.out[0];
    int64_t cols = (o1 - o0) * t->row_cols;
    build_col(t->x + (n * g->channels + gi * g->cg) * g->in_size, g->cg, &g->w, o0, o1, t->col[slot]);
    float *y = t->y + (n * g->m_count + gi * t->m_group) * g->out_size + o0 * t->row_cols;
    if (!tgc_cpu_sgemm_one(false, false, t->m_group, cols, t->k, 1.0f, t->w + gi * t->m_group * t->k, t->k,
                           t->col[slot], cols, 0.0f, y, g->out_size))
        t->failed = true;
    if (t->bias != NULL) /* the bias after the product, as tgc_cpu_sgemm_fused adds it */
        tgc_cpu_add_row_bias(y, g->out_size, t->bias + gi * t->m_group, 0, t->m_group, 0, cols);
    tgc_cpu_act_block(t->act, y, g->out_size, 0, t->m_group, 0, cols);
}

static void free_cols(float **cols, int count) {
    for (int s = 0; s < count; s++) tgc_free(cols[s]);
    tgc_free(cols);
}

/* The output rows of axis 0 one im2col matrix covers for geometry g;
 * *tiled: matrices per tile, one per thread (else one matrix, slab by
 * slab). */
static int64_t im2col_tile_rows(const tgc_conv_geometry *g, bool *tiled) {
    const tgc_window *w = &g->w;
    int64_t k = g->cg * g->kk_count, row_cols = g->out_size / w->out[0];
    int64_t tile_rows = TILE_FLOATS / (k * row_cols);
    if (tile_rows * row_cols < TILE_MIN_COLS) tile_rows = (TILE_MIN_COLS + row_cols - 1) / row_cols;
    *tiled = tile_rows * 2 <= w->out[0];
    if (!*tiled) { /* whole images, or slabs of them if the matrix would pass COL_BUDGET_FLOATS */
        tile_rows = w->out[0];
        if (k * g->out_size > COL_BUDGET_FLOATS) tile_rows = COL_BUDGET_FLOATS / (k * row_cols);
        if (tile_rows < 1) tile_rows = 1;
    }
    return tile_rows;
}

tgc_status tgc_cpu_conv_im2col(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *px, const float *pw,
                               const float *bias, float *py) {
    const tgc_window *w = &g->w;
    int64_t k = g->cg * g->kk_count, m_group = g->m_count / g->group;
    int64_t row_cols = g->out_size / w->out[0]; /* output positions in one row of axis 0 */
    bool tiled;
    int64_t tile_rows = im2col_tile_rows(g, &tiled);
    if (k * row_cols > (int64_t)(SIZE_MAX / sizeof(float)) / tile_rows)
        return tgc_kernel_fail(c, "the im2col buffer for Conv would pass the address space");
    size_t col_bytes = (size_t)(k * row_cols * tile_rows) * sizeof(float);
    int width = tiled ? tgc_parallel_width(c->pool) : 1;
    float **cols = tgc_calloc((size_t)width, sizeof *cols);
    for (int s = 0; cols != NULL && s < width; s++) {
        if ((cols[s] = tgc_malloc(col_bytes)) != NULL) continue;
        free_cols(cols, s);
        cols = NULL;
    }
    if (cols == NULL)
        return tgc_kernel_fail(c, "out of host memory for Conv's im2col buffers (%d x %zu bytes)", width,
                               col_bytes);
    conv_tiles t = {.g = g, .x = px, .w = pw, .bias = bias, .y = py, .act = c->fused_act, .k = k,
                    .m_group = m_group, .row_cols = row_cols, .tile_rows = tile_rows,
                    .tiles = (w->out[0] + tile_rows - 1) / tile_rows, .col = cols};
    if (tiled) {
        tgc_parallel_for(width > 1 ? c->pool : NULL, g->batch * g->group * t.tiles, conv_tile, &t);
    } else { /* one matrix a slab; the GEMM writes the bias and Relu per piece */
        for (int64_t n = 0; !t.failed && n < g->batch; n++) {
            for (int64_t gi = 0; !t.failed && gi < g->group; gi++) {
                const float *xg = px + (n * g->channels + gi * g->cg) * g->in_size;
                float *yg = py + (n * g->m_count + gi * m_group) * g->out_size;
                const float *bg = bias != NULL ? bias + gi * m_group : NULL;
                for (int64_t o0 = 0; !t.failed && o0 < w->out[0]; o0 += tile_rows) {
                    int64_t o1 = o0 + tile_rows < w->out[0] ? o0 + tile_rows : w->out[0], n_cols = (o1 - o0) * row_cols;
                    build_col_split(c, xg, g, o0, o1, cols[0]);
                    t.failed = !tgc_cpu_sgemm_fused(c->pool, false, false, m_group, n_cols, k, 1.0f,
                                                    pw + gi * m_group * k, k, cols[0], n_cols, bg != NULL ? 1.0f : 0.0f,
                                                    yg + o0 * row_cols, g->out_size, bg, 1, 0, c->fused_act);
                }
            }
        }
    }
    free_cols(cols, width);
    if (t.failed) return tgc_kernel_fail(c, "Conv: " TGC_CPU_GEMM_FAILED);
    return TGC_OK;
}

tgc_status tgc_cpu_conv_pointwise(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                  const float *bias, float *y) {
    int64_t m_group = g->m_count / g->group, cg = g->cg;
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t gi = 0; gi < g->group; gi++) { /* one GEMM a group, bias and activation per piece */
            const float *bg = bias != NULL ? bias + gi * m_group : NULL;
            if (!tgc_cpu_sgemm_fused(c->pool, false, false, m_group, g->out_size, cg, 1.0f, w + gi * m_group * cg, cg,
                                     x + (n * g->channels + gi * cg) * g->in_size, g->in_size,
                                     bg != NULL ? 1.0f : 0.0f, y + (n * g->m_count + gi * m_group) * g->out_size,
                                     g->out_size, bg, 1, 0, c->fused_act))
                return tgc_kernel_fail(c, "Conv: " TGC_CPU_GEMM_FAILED);
        }
    return TGC_OK;
}

/* Conv's ways, in the order they are tried. */
typedef enum conv_way {
    CONV_NOTHING,
    CONV_BIAS_ONLY,
    CONV_DNNL,
    CONV_WINOGRAD,
    CONV_DIRECT,
    CONV_IM2COL,
    CONV_SMALL_MAP,
    CONV_POINTWISE
} conv_way;

static const char *const conv_way_names[] = {
    [CONV_NOTHING] = NULL, /* an empty output: nothing runs */
    [CONV_BIAS_ONLY] = "bias only",
    [CONV_DNNL] = "onednn conv nhwc copies",
    [CONV_WINOGRAD] = "winograd f(2x2,3x3)",
    [CONV_DIRECT] = "direct",
    [CONV_IM2COL] = "im2col + gemm",
    [CONV_SMALL_MAP] = "small map onednn, channels in lanes",
    [CONV_POINTWISE] = "pointwise gemm",
};

/* The way for geometry g (W a session constant: w_const): from its sizes
 * alone, so a run and tgc_cpu_conv_choose agree. */
static conv_way conv_way_for(const tgc_conv_geometry *g, bool w_const) {
    if (g->batch == 0 || g->m_count == 0 || g->out_size == 0) return CONV_NOTHING;
    if (g->cg * g->kk_count == 0 || g->in_size == 0) return CONV_BIAS_ONLY; /* no channels, or only padding */
    if (tgc_cpu_conv_dnnl_applies(g, w_const)) return CONV_DNNL;
    if (tgc_cpu_conv_direct_applies(g)) return CONV_DIRECT; /* before Winograd: its narrow 3x3 layers */
    if (tgc_cpu_conv_small_map_applies(g, w_const)) return CONV_SMALL_MAP; /* after direct: thin layers */
    if (tgc_cpu_conv_winograd_applies(g)) return CONV_WINOGRAD;
    return g->pointwise ? CONV_POINTWISE : CONV_IM2COL;
}

/* Whether c's W (input 1) is one of the session's constants. */
static bool w_const(const tgc_kernel_ctx *c) { return (c->const_inputs & 1u << 1) != 0; }

const char *tgc_cpu_conv_choose(tgc_kernel_ctx *c) {
    tgc_conv_geometry g;
    return tgc_window_read_conv(c, &g) == TGC_OK ? conv_way_names[conv_way_for(&g, w_const(c))] : NULL;
}

void tgc_cpu_conv_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    tgc_conv_geometry g;
    if (tgc_window_read_conv(c, &g) != TGC_OK) return;
    switch (conv_way_for(&g, w_const(c))) {
    case CONV_DNNL:
        tgc_cpu_conv_dnnl_footprint(&g, width, out);
        out->copies_channels_last = true;
        break;
    case CONV_WINOGRAD: tgc_cpu_conv_winograd_footprint(&g, w_const(c), width, out); break;
    case CONV_DIRECT: tgc_cpu_conv_direct_footprint(&g, c->const_inputs, out); break;
    case CONV_SMALL_MAP:
        tgc_cpu_conv_small_map_footprint(&g, out);
        out->coarse_pieces = true; /* oneDNN's pieces of output channels */
        break;
    case CONV_IM2COL: {
        bool tiled;
        int64_t rows = im2col_tile_rows(&g, &tiled), bytes; /* one matrix a slot, as tgc_cpu_conv_im2col */
        if (tgc_checked_mul_i64(g.cg * g.kk_count * (g.out_size / g.w.out[0]), rows * (int64_t)sizeof(float), &bytes))
            out->workspace_bytes = bytes * (tiled ? width : 1);
        out->coarse_pieces = !tiled; /* the GEMM's pieces, not tiles of rows */
        break;
    }
    case CONV_POINTWISE: out->coarse_pieces = true; break; /* the GEMM's pieces; OpenBLAS's scratch is not counted */
    default: break; /* bias only: no scratch of its own */
    }
}

tgc_status tgc_cpu_conv_f32(tgc_kernel_ctx *c) {
    tgc_conv_geometry g;
    tgc_status st = tgc_window_read_conv(c, &g);
    if (st != TGC_OK) return st;
    conv_way way = conv_way_for(&g, w_const(c));
    c->impl = conv_way_names[way];
    if (way == CONV_NOTHING) return TGC_OK;

    float *py = tgc_kernel_out_ptr(c, 0);
    const float *bias = g.has_bias ? tgc_kernel_in_ptr(c, 2) : NULL;
    const float *px = tgc_kernel_in_ptr(c, 0), *pw = tgc_kernel_in_ptr(c, 1);
    switch (way) {
    case CONV_DNNL: return tgc_cpu_conv_dnnl(c, &g, px, bias, py);
    case CONV_WINOGRAD: return tgc_cpu_conv_winograd(c, &g, px, pw, bias, py);
    case CONV_DIRECT: return tgc_cpu_conv_direct(c, &g, px, pw, bias, py);
    case CONV_IM2COL: return tgc_cpu_conv_im2col(c, &g, px, pw, bias, py);
    case CONV_SMALL_MAP: return tgc_cpu_conv_small_map(c, &g, px, pw, bias, py);
    case CONV_POINTWISE: return tgc_cpu_conv_pointwise(c, &g, px, pw, bias, py);
    default: break;
    }
    /* Y is the bias, through the fused activation. */
    over_rows(c, &g, py, bias, fill_bias_piece);
    if (c->fused_act != NULL) over_rows(c, &g, py, NULL, act_piece);
    return TGC_OK;
}

tgc_status tgc_cpu_conv_add_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs != 4 || !tgc_kernel_has_input(c, 3)) return tgc_kernel_fail(c, "_ConvAdd takes 4 inputs");
    const tgc_value *z = &c->inputs[3], *y = &c->outputs[0];
    bool same = z->dtype == TGC_FLOAT32 && y->dtype == TGC_FLOAT32 && z->rank == y->rank;
    for (int d = 0; same && d < z->rank; d++) same = z->dims[d] == y->dims[d];
    if (!same) return tgc_kernel_fail(c, "_ConvAdd: input 3 (Z) must be float32 of Y's shape");
    tgc_fused_act epilogue = c->fused_act != NULL ? *c->fused_act : (tgc_fused_act){.row = -1};
    epilogue.residual = tgc_value_numel(y) > 0 ? tgc_kernel_in_ptr(c, 3) : NULL;
    epilogue.out = tgc_kernel_out_ptr(c, 0);
    const tgc_fused_act *absorbed = c->fused_act;
    c->fused_act = &epilogue;
    tgc_status st = tgc_cpu_conv_f32(c);
    c->fused_act = absorbed;
    return st;
}
