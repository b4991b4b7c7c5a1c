/* Conv 3x3, stride 1, by Winograd's minimal filtering (Lavin and Gray,
 * "Fast Algorithms for Convolutional Neural Networks", CVPR 2016): each
 * m x m block of outputs comes from an alpha x alpha input patch
 * (alpha = m + 2) with alpha^2 multiplies per input channel instead of
 * 9 m^2, and the multiplies of all channels, tiles and filters form alpha^2
 * independent GEMMs. Only F(2x2, 3x3) (16 for 36; transforms in
 * conv_winograd_f23.c): its rounding stays that of a direct float32
 * convolution, where F(4x4, 3x3) (36 for 144) rounds 6x to 17x worse even
 * with exact transforms (its GEMM errors pass through A^T's 4s and 8s), and
 * deep networks amplify that (Inception-v3's logits: 0.0065 from float64
 * with F(4x4, 3x3), 0.0047 with F(2x2, 3x3), PyTorch's own 0.0022-0.0044;
 * measured on the model's layers, docs/cpu-speed.md). For one image:
 *   U[xi][m][c] = (G g[m][c] G^T)[xi]           filters, [alpha^2][M][C]
 *   V[xi][c][t] = (B^T d[c][t] B)[xi]           input tiles, [alpha^2][C][T]
 *   P[xi]       = U[xi] V[xi]                   GEMMs [M, C] x [C, T]
 *   Y tile t    = bias + A^T P[.][m][t] A       m x m outputs (a fused Relu after)
 * where T = ceil(OH/m) * ceil(OW/m) tiles and d[c][t] is the input patch of
 * tile t (rows m ty - pad_top .. + alpha - 1, columns likewise; zeros
 * outside the input). U is built once per session when W is a weight (the
 * node's kernel cache), else every run. A large image goes in bands of
 * tile rows, a band's three phases one piece on one thread with V and P
 * its own (about 512 KiB: they stay in cache, and the workspace does not
 * grow with the image); a small one as a whole, each phase split over the
 * device's threads. Bands and pieces are chosen from the sizes alone. */
#include "devices/cpu/conv_winograd.h"
#include "devices/cpu/kernels_nn.h"
#include "graph/elementwise.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <stdatomic.h>
#include <string.h>

/* Elements a transform piece handles (~50 us of work). */
#define PIECE_ELEMENTS ((int64_t)1 << 16)
/* The fewest tiles worth a Winograd GEMM (its N). */
#define MIN_TILES 49

typedef struct winograd {
    const tgc_winograd_variant *var;
    const tgc_conv_geometry *g;
    const float *x, *w; /* this image's input [C, H, W]; the filters [M, C, 3, 3] */
    const float *bias;  /* [M], or NULL: zeros */
    float *y;           /* this image's output [M, OH, OW] */
    const tgc_fused_act *act; /* a fused activation, or NULL */
    const float *u;     /* [alpha^2][M][C]: the transformed filters the GEMMs read */
    float *u_out;       /* where transform_filters writes them */
    float *v, *p;       /* [alpha^2][C][T], [alpha^2][M][T]; each xi at a stride of its own */
    int64_t u_stride, v_stride, p_stride;
    float **scratch; /* per slot: scratch_floats floats (banded: the slot's V and P first) */
    tgc_thread_pool *pool;
    int64_t row_len; /* m * tiles_w + 2: the input columns a row of tiles reads */
    int64_t tiles_w, tiles_h, tiles, rows_per_piece;
    int64_t band_rows; /* banded: tile rows a band (the last may have fewer); else tiles_h */
    int64_t bands;     /* bands an image: 1 for the whole-image way */
    atomic_bool failed;
} winograd;

/* The tile rows [ty_lo, ty_hi) of an image, as one matrix of each
 * transform: V [alpha^2][C][count], P [alpha^2][M][count] at strides of
 * their own, count = (ty_hi - ty_lo) * tiles_w. */
typedef struct tile_rows {
    int64_t ty_lo, ty_hi, count;
    float *v, *p;
    int64_t v_stride, p_stride;
} tile_rows;

static int64_t tiles_of(const tgc_window *w, int m) { return (w->out[0] + m - 1) / m * ((w->out[1] + m - 1) / m); }

/* The most floats the transformed input and products (V and P, all 16
 * matrices of all tiles) of the whole-image way may take: 24 MiB. Past it
 * the transforms stream through memory rather than cache, and im2col with
 * oneDNN's GEMM was 2.5-3x faster (Inception-v3's 32 -> 64 channel 3x3
 * over 147x147, V and P 34 MiB: 24 ms against 8.3 ms on one core of a Zen
 * 5 with 32 MiB of L3; at 22 MiB, 32 -> 32 channels, Winograd still won,
 * 3.0 against 4.8 ms). A banded image's V and P are a band's: no bound
 * (that 32 -> 64 layer banded: Inception-v3 -2.6% at 1 thread, -3.5% at
 * 2, medians of 3 interleaved runs). */
#define MAX_TRANSFORM_FLOATS ((int64_t)6 << 20)

/* Floats between consecutive xi matrices: `size` rounded up to a cache
 * line and moved off multiples of 4 KiB, so that the streams a transform
 * writes do not alias in the store buffer (4K aliasing made the transforms
 * 3x slower). */
static int64_t spread_stride(int64_t size) {
    int64_t stride = (size + 15) / 16 * 16;
    while (stride * 4 % 4096 < 512 || stride * 4 % 4096 > 3584) stride += 16;
    return stride;
}

/* The most floats of V and P a band holds: 2 MiB, so that the workspace
 * a slot holds does not grow with the image (GoogLeNet's 64 -> 192
 * channels over 56 x 56 took 12.9 MB as a whole image, 3.7 MB in bands).
 * Bands of 512 KiB made the GEMMs too thin (ResNet-18 6% slower at one
 * thread, when every image of two bands or more went banded). */
#define BAND_FLOATS ((int64_t)512 << 10)

/* A whole image's V and P up to 8 MiB (a quarter of the L3 here) go as
 * one: banded, ResNet-18's 64 -> 64 layers over 56 x 56 (6.4 MB) ran 1-3%
 * slower, thinner GEMMs for no traffic saved. */
#define WHOLE_FLOATS ((int64_t)2 << 20)

/* Tile rows a band for geometry g on a pool `width` threads wide: as
 * many as BAND_FLOATS allows, at least MIN_TILES tiles (the GEMMs' N), the
 * bands as even as they go; tiles_h (one band, the whole-image way) for an
 * image within WHOLE_FLOATS or when that leaves fewer than two bands.
 * Under a workspace limit (g->workspace_limit, the run's bytes) a whole
 * image's V and P past it go in bands of at most the limit's share a
 * slot, at least one tile row: thinner GEMMs, but the room the limit
 * leaves. From the sizes alone; the way (variant_for) does not depend on
 * the limit. */
static int64_t band_rows_of(const tgc_conv_geometry *g, const tgc_winograd_variant *var, int width) {
    const tgc_window *w = &g->w;
    int64_t tiles_w = (w->out[1] + var->m - 1) / var->m, tiles_h = (w->out[0] + var->m - 1) / var->m;
    int64_t per_row, least = (MIN_TILES + tiles_w - 1) / tiles_w, band = BAND_FLOATS;
    if (!tgc_checked_mul_i64(var->alpha * var->alpha * tiles_w, g->cg + g->m_count, &per_row) || per_row <= 0)
        per_row = INT64_MAX;
    int64_t limit = (g->workspace_limit + (int64_t)sizeof(float) - 1) / (int64_t)sizeof(float); /* floats; 0: none */
    bool over_limit = limit > 0 && per_row > limit / tiles_h;
    if (!over_limit && per_row <= WHOLE_FLOATS / tiles_h) return tiles_h;
    if (over_limit) {
        int64_t share = limit / (width > 0 ? width : 1);
        if (share < band) band = share;
        least = 1;
    }
    int64_t rows = band / per_row;
    if (rows < least) rows = least;
    if (!over_limit && rows * 2 > tiles_h) return tiles_h;
    int64_t bands = (tiles_h + rows - 1) / rows;
    return (tiles_h + bands - 1) / bands; /* as even as they go: no thin last band */
}

/* Floats of a band's V and P (banded way: per slot). */
static int64_t band_floats(const tgc_conv_geometry *g, const tgc_winograd_variant *var, int64_t band_rows,
                           int64_t tiles_w) {
    int64_t count = band_rows * tiles_w, xis = var->alpha * var->alpha;
    return xis * (spread_stride(g->cg * count) + spread_stride(g->m_count * count));
}

/* The variant for geometry g, or NULL: 3x3, stride 1, dilation 1, one
 * group, at least 16 input and output channels (fewer: the GEMMs are too
 * thin to gain), MIN_TILES tiles of 2x2, and, for a whole image, transforms
 * that fit MAX_TRANSFORM_FLOATS. */
static const tgc_winograd_variant *variant_for(const tgc_conv_geometry *g) {
    const tgc_window *w = &g->w;
    if (w->n != 2 || g->group != 1 || g->cg < 16 || g->m_count < 16) return NULL;
    for (int a = 0; a < 2; a++)
        if (w->kernel[a] != 3 || w->strides[a] != 1 || w->dilations[a] != 1) return NULL;
    const tgc_winograd_variant *var = &tgc_winograd_f23;
    int64_t tiles = tiles_of(w, var->m), xis = var->alpha * var->alpha, per_tile;
    if (tiles < MIN_TILES || !tgc_checked_add_i64(g->cg, g->m_count, &per_tile)) return NULL;
    tgc_conv_geometry unlimited = *g; /* the way is the same under any workspace limit */
    unlimited.workspace_limit = 0;
    bool whole = band_rows_of(&unlimited, var, 1) == (w->out[0] + var->m - 1) / var->m;
    if (whole && per_tile > MAX_TRANSFORM_FLOATS / xis / tiles) return NULL;
    return var;
}

bool tgc_cpu_conv_winograd_applies(const tgc_conv_geometry *g) { return variant_for(g) != NULL; }

/* Pieces of `rows_per_piece` rows of `per_row` elements each, about
 * PIECE_ELEMENTS a piece. */
static int64_t pieces_of(int64_t rows, int64_t per_row, int64_t *rows_per_piece) {
    int64_t r = PIECE_ELEMENTS / (per_row > 0 ? per_row : 1);
    *rows_per_piece = r < 1 ? 1 : r;
    return (rows + *rows_per_piece - 1) / *rows_per_piece;
}

static void piece_range(const winograd *wg, int64_t piece, int64_t count, int64_t *lo, int64_t *hi) {
    *lo = piece * wg->rows_per_piece;
    *hi = *lo + wg->rows_per_piece < count ? *lo + wg->rows_per_piece : count;
}

/* U for filters [lo, hi) of the piece. */
static void transform_filters(void *arg, int64_t piece, int slot) {
    (void)slot;
    winograd *wg = arg;
    int64_t c_count = wg->g->cg, lo, hi;
    piece_range(wg, piece, wg->g->m_count, &lo, &hi);
    for (int64_t m = lo; m < hi; m++)
        for (int64_t c = 0; c < c_count; c++)
            wg->var->filter(wg->w + (m * c_count + c) * 9, wg->u_out + m * c_count + c, wg->u_stride);
}

/* V of tile rows r for input channels [lo, hi), a row of tiles at a
 * time: its alpha input rows copied out with the padding as zeros into
 * `rows` (alpha * row_len floats, then input_row's scratch). */
static void input_rows(const winograd *wg, const tile_rows *r, int64_t lo, int64_t hi, float *rows) {
    const tgc_window *w = &wg->g->w;
    int alpha = wg->var->alpha, m = wg->var->m;
    int64_t h = w->in[0], wd = w->in[1], len = wg->row_len, pl = w->pads[1];
    int64_t copy_lo = pl < len ? pl : len, copy_hi = wd + pl < len ? wd + pl : len;
    const float *d[TGC_WINOGRAD_MAX_ALPHA];
    float *rest = rows + alpha * len;
    for (int i = 0; i < alpha; i++) d[i] = rows + i * len;
    for (int64_t c = lo; c < hi; c++) {
        const float *xc = wg->x + c * h * wd;
        for (int64_t ty = r->ty_lo; ty < r->ty_hi; ty++) {
            for (int i = 0; i < alpha; i++) { /* input row m ty - pad_top + i, columns -pad_left .. */
                float *row = rows + i * len;
                int64_t y = ty * m - w->pads[0] + i;
                if (y < 0 || y >= h || copy_lo >= copy_hi) {
                    memset(row, 0, (size_t)len * sizeof(float));
                    continue;
                }
                memset(row, 0, (size_t)copy_lo * sizeof(float));
                memcpy(row + copy_lo, xc + y * wd + (copy_lo - pl), (size_t)(copy_hi - copy_lo) * sizeof(float));
                memset(row + copy_hi, 0, (size_t)(len - copy_hi) * sizeof(float));
            }
            wg->var->input_row(d, wg->tiles_w, rest, r->v + c * r->count + (ty - r->ty_lo) * wg->tiles_w,
                               r->v_stride);
        }
    }
}

/* P[xi] = U[xi] V[xi] over tile rows r. */
static void multiply_rows(winograd *wg, const tile_rows *r, int64_t xi) {
    int64_t m = wg->g->m_count, c = wg->g->cg, t = r->count;
    if (!tgc_cpu_sgemm_one(false, false, m, t, c, 1.0f, wg->u + xi * wg->u_stride, c, r->v + xi * r->v_stride, t,
                           0.0f, r->p + xi * r->p_stride, t))
        wg->failed = true;
}

/* The whole image as tile rows. */
static tile_rows whole_image(const winograd *wg) {
    return (tile_rows){0, wg->tiles_h, wg->tiles, wg->v, wg->p, wg->v_stride, wg->p_stride};
}

/* Whole-image way: V for input channels [lo, hi) of the piece. */
static void transform_input(void *arg, int64_t piece, int slot) {
    winograd *wg = arg;
    int64_t lo, hi;
    piece_range(wg, piece, wg->g->cg, &lo, &hi);
    tile_rows r = whole_image(wg);
    input_rows(wg, &r, lo, hi, wg->scratch[slot]);
}

/* Whole-image way: one GEMM a piece. */
static void multiply(void *arg, int64_t xi, int slot) {
    (void)slot;
    winograd *wg = arg;
    tile_rows r = whole_image(wg);
    multiply_rows(wg, &r, xi);
}

/* y[k] = b + o[k] for k < n; bias_relu_row also through Relu-14 (NaN
 * passes), the common fused activation in one pass; bias_add_row adds a
 * residual z[k] after the bias, as Conv and then Add round, and
 * bias_add_relu_row then Relu as well. */
__attribute__((noinline)) static void bias_row(float *restrict y, const float *restrict o, float b, int64_t n) {
    for (int64_t k = 0; k < n; k++) y[k] = b + o[k];
}

__attribute__((noinline)) static void bias_relu_row(float *restrict y, const float *restrict o, float b,
                                                    int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        float v = b + o[k];
        y[k] = v < 0 ? 0.0f : v;
    }
}

__attribute__((noinline)) static void bias_add_row(float *restrict y, const float *restrict o, float b,
                                                   const float *restrict z, int64_t n) {
    for (int64_t k = 0; k < n; k++) y[k] = (b + o[k]) + z[k];
}

__attribute__((noinline)) static void bias_add_relu_row(float *restrict y, const float *restrict o, float b,
                                                        const float *restrict z, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        float v = (b + o[k]) + z[k];
        y[k] = v < 0 ? 0.0f : v;
    }
}

/* Y = bias + A^T P A (through a fused activation) for output channels
 * [lo, hi) over tile rows r, a row of tiles at a time, clipped at Y's
 * edges: every output is written once. scratch: output_row's rows and
 * scratch. */
static void output_rows(const winograd *wg, const tile_rows *r, int64_t lo, int64_t hi, float *scratch) {
    const tgc_window *w = &wg->g->w;
    int m = wg->var->m;
    int64_t oh = w->out[0], ow = w->out[1], tiles_w = wg->tiles_w;
    float *out[TGC_WINOGRAD_MAX_ALPHA], *rest = scratch + m * m * tiles_w;
    for (int i = 0; i < m; i++) out[i] = scratch + i * m * tiles_w;
    /* A residual (_ConvAdd's Z) goes in with the bias, a row at a time; the activation after it */
    const tgc_fused_act *act = wg->act;
    tgc_fused_act after = act != NULL ? *act : (tgc_fused_act){.row = -1};
    after.residual = NULL;
    bool relu = act != NULL && act->row == TGC_EW_Relu;
    for (int64_t mi = lo; mi < hi; mi++) {
        float *ym = wg->y + mi * oh * ow, b = wg->bias != NULL ? wg->bias[mi] : 0.0f;
        for (int64_t ty = r->ty_lo; ty < r->ty_hi; ty++) {
            wg->var->output_row(r->p + mi * r->count + (ty - r->ty_lo) * tiles_w, r->p_stride, tiles_w, rest, out);
            for (int i = 0; i < m && ty * m + i < oh; i++) {
                float *yr = ym + (ty * m + i) * ow;
                const float *zr = act != NULL && act->residual != NULL ? act->residual + (yr - act->out) : NULL;
                if (zr != NULL && relu) {
                    bias_add_relu_row(yr, out[i], b, zr, ow);
                } else if (zr != NULL) {
                    bias_add_row(yr, out[i], b, zr, ow);
                    if (after.row >= 0) tgc_cpu_act_block(&after, yr, ow, 0, 1, 0, ow);
                } else if (relu) {
                    bias_relu_row(yr, out[i], b, ow);
                } else {
                    bias_row(yr, out[i], b, ow);
                    tgc_cpu_act_block(act, yr, ow, 0, 1, 0, ow);
                }
            }
        }
    }
}

/* Whole-image way: Y for output channels [lo, hi) of the piece. */
static void transform_output(void *arg, int64_t piece, int slot) {
    winograd *wg = arg;
    int64_t lo, hi;
    piece_range(wg, piece, wg->g->m_count, &lo, &hi);
    tile_rows r = whole_image(wg);
    output_rows(wg, &r, lo, hi, wg->scratch[slot]);
}

/* Banded way: band `piece` of the image, its three phases in a row on the
 * slot's own V and P (which stay in cache between them). */
static void transform_band(void *arg, int64_t piece, int slot) {
    winograd *wg = arg;
    int64_t xis = wg->var->alpha * wg->var->alpha, lo = piece * wg->band_rows;
    int64_t hi = lo + wg->band_rows < wg->tiles_h ? lo + wg->band_rows : wg->tiles_h;
    int64_t most = wg->band_rows * wg->tiles_w; /* the slot's V and P are sized for a full band */
    tile_rows r = {lo, hi, (hi - lo) * wg->tiles_w, wg->scratch[slot], NULL, spread_stride(wg->g->cg * most),
                   spread_stride(wg->g->m_count * most)};
    r.p = r.v + xis * r.v_stride;
    float *rows = r.p + xis * r.p_stride;
    input_rows(wg, &r, 0, wg->g->cg, rows);
    for (int64_t xi = 0; xi < xis; xi++) multiply_rows(wg, &r, xi);
    output_rows(wg, &r, 0, wg->g->m_count, rows);
}

/* The transformed filters as a cache block. */
static void *build_filters(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    winograd *wg = arg;
    int64_t xis = wg->var->alpha * wg->var->alpha;
    *bytes = (size_t)(xis * wg->u_stride) * sizeof(float);
    if ((wg->u_out = tgc_malloc(*bytes)) != NULL) {
        int64_t pieces = pieces_of(wg->g->m_count, wg->g->cg * xis, &wg->rows_per_piece);
        tgc_parallel_for(wg->pool, pieces, transform_filters, wg);
    }
    return wg->u_out;
}

/* The floats a run of geometry g takes besides U: `shared` (the whole
 * image's V and P; 0 when banded) and `per_slot` (each slot's band V and P
 * when banded, then the input or output rows and the transforms' scratch);
 * *band_rows as band_rows_of. The footprint and the run both size by it. */
static void scratch_floats(const tgc_conv_geometry *g, const tgc_winograd_variant *var, int width,
                           int64_t *band_rows, int64_t *shared, int64_t *per_slot) {
    const tgc_window *win = &g->w;
    int64_t xis = var->alpha * var->alpha, tiles_w = (win->out[1] + var->m - 1) / var->m;
    int64_t tiles_h = (win->out[0] + var->m - 1) / var->m, row_len = var->m * tiles_w + 2;
    int64_t in_floats = var->alpha * row_len + 3 * var->alpha * (row_len + var->m);
    int64_t out_floats = (var->m * var->m + (var->alpha + 1) * var->m) * tiles_w;
    *per_slot = in_floats > out_floats ? in_floats : out_floats;
    *band_rows = band_rows_of(g, var, width);
    if (*band_rows < tiles_h) {
        *shared = 0;
        *per_slot += band_floats(g, var, *band_rows, tiles_w);
    } else {
        int64_t tiles = tiles_h * tiles_w;
        *shared = xis * (spread_stride(g->cg * tiles) + spread_stride(g->m_count * tiles));
    }
}

void tgc_cpu_conv_winograd_footprint(const tgc_conv_geometry *g, bool w_const, int width,
                                     tgc_kernel_footprint *out) {
    const tgc_winograd_variant *var = variant_for(g);
    if (var == NULL) return;
    int64_t xis = var->alpha * var->alpha, band_rows, shared, per_slot;
    scratch_floats(g, var, width, &band_rows, &shared, &per_slot);
    int64_t u = xis * spread_stride(g->m_count * g->cg) * (int64_t)sizeof(float); /* as the run sizes it */
    out->cache_bytes = w_const ? u : 0;
    out->replaces_inputs = w_const ? 1u << 1 : 0u;
    out->workspace_bytes = (w_const ? 0 : u) + (shared + width * per_slot) * (int64_t)sizeof(float) +
                           width * (int64_t)sizeof(float *);
}

tgc_status tgc_cpu_conv_winograd(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                 const float *bias, float *y) {
    const tgc_winograd_variant *var = variant_for(g);
    if (var == NULL) return tgc_kernel_fail(c, "Conv's geometry does not suit Winograd");
    const tgc_window *win = &g->w;
    int64_t m = g->m_count, ch = g->cg, xis = var->alpha * var->alpha;
    int64_t tiles_w = (win->out[1] + var->m - 1) / var->m, tiles_h = (win->out[0] + var->m - 1) / var->m;
    winograd wg = {.var = var, .g = g, .w = w, .bias = bias, .act = c->fused_act, .pool = c->pool,
                   .tiles_w = tiles_w, .tiles_h = tiles_h, .tiles = tiles_h * tiles_w,
                   .row_len = var->m * tiles_w + 2, .u_stride = spread_stride(m * ch)};
    int64_t shared, per_slot;
    int width = tgc_parallel_width(c->pool);
    scratch_floats(g, var, width, &wg.band_rows, &shared, &per_slot);
    wg.bands = (tiles_h + wg.band_rows - 1) / wg.band_rows;
    wg.v_stride = spread_stride(ch * wg.tiles);
    wg.p_stride = spread_stride(m * wg.tiles);

    const float *cached = tgc_kernel_cache_get(c, 1u << 1, build_filters, &wg);
    if (cached != NULL) tgc_kernel_cache_replaces(c, 1u << 1); /* W is read only to build the cache */
    if (c->prepack_only) return TGC_OK;
    int64_t u_floats = cached != NULL ? 0 : xis * wg.u_stride;
    size_t floats = (size_t)(u_floats + shared + width * per_slot);
    float *scratch = tgc_malloc(floats * sizeof(float));
    wg.scratch = tgc_malloc((size_t)width * sizeof *wg.scratch);
    if (scratch == NULL || wg.scratch == NULL) {
        tgc_free(scratch);
        tgc_free(wg.scratch);
        return tgc_kernel_fail(c, "out of host memory for Conv's Winograd transforms (%zu bytes)",
                               floats * sizeof(float));
    }
    wg.v = scratch + u_floats; /* the whole-image way's; banded, each slot has its own */
    wg.p = wg.v + xis * wg.v_stride;
    for (int s = 0; s < width; s++) wg.scratch[s] = scratch + u_floats + shared + s * per_slot;

    int64_t pieces;
    if (cached != NULL) {
        wg.u = cached;
    } else { /* no cache (a kernel run alone, or computed filters): transform them now */
        wg.u = wg.u_out = scratch;
        pieces = pieces_of(m, ch * xis, &wg.rows_per_piece);
        tgc_parallel_for(c->pool, pieces, transform_filters, &wg);
    }
    for (int64_t n = 0; n < g->batch && !atomic_load(&wg.failed); n++) {
        wg.x = x + n * g->channels * g->in_size;
        wg.y = y + n * m * g->out_size;
        if (wg.bands > 1) {
            tgc_parallel_for(c->pool, wg.bands, transform_band, &wg);
            continue;
        }
        pieces = pieces_of(ch, wg.tiles * xis, &wg.rows_per_piece);
        tgc_parallel_for(c->pool, pieces, transform_input, &wg);
        tgc_parallel_for(c->pool, xis, multiply, &wg);
        pieces = pieces_of(m, wg.tiles * xis, &wg.rows_per_piece);
        tgc_parallel_for(c->pool, pieces, transform_output, &wg);
    }
    tgc_free(scratch);
    tgc_free(wg.scratch);
    if (atomic_load(&wg.failed)) return tgc_kernel_fail(c, "Conv: " TGC_CPU_GEMM_FAILED);
    return TGC_OK;
}
