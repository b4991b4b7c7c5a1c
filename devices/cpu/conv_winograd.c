/* Conv 3x3, stride 1, by Winograd's minimal filtering F(2x2, 3x3) (Lavin
 * and Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016):
 * each 2x2 block of outputs comes from a 4x4 patch of the input with 16
 * multiplies per input channel instead of 36, and the multiplies of all
 * channels, tiles and filters form 16 independent GEMMs.
 *
 * With the transforms of the paper (B^T, G, A^T below), for one image:
 *   U[xi][m][c] = (G g[m][c] G^T)[xi]           filters, [16][M][C]
 *   V[xi][c][t] = (B^T d[c][t] B)[xi]           input tile t, [16][C][T]
 *   P[xi]       = U[xi] V[xi]                   16 GEMMs [M, C] x [C, T]
 *   Y tile t    = A^T P[.][m][t] A              2x2 outputs, added onto Y
 * where xi = 4 * row + column indexes a 4x4 transformed tile, T = ceil(OH/2)
 * * ceil(OW/2) tiles, and d[c][t] is the 4x4 input patch of tile t (rows
 * 2 * ty - pad_top .. +3, columns likewise; zeros outside the input).
 * Each phase is split over the device's threads in pieces chosen from the
 * sizes alone. Rounding differs from im2col's by a few units in the last
 * place: the transforms add and subtract at most four terms, by halves. */
#include "devices/cpu/kernels_nn.h"

#include "support/alloc.h"

#include <stdatomic.h>
#include <string.h>

/* Elements a transform piece handles (~50 us of work). */
#define PIECE_ELEMENTS ((int64_t)1 << 16)

typedef struct winograd {
    const tgc_conv_geometry *g;
    const float *x, *w; /* this image's input [C, H, W]; the filters [M, C, 3, 3] */
    float *y;           /* this image's output [M, OH, OW], holding the bias */
    const float *u;     /* [16][M][C]: the transformed filters the GEMMs read */
    float *u_out;       /* where transform_filters writes them */
    float *v, *p;       /* [16][C][T], [16][M][T]; each xi at a stride of its own */
    int64_t u_stride, v_stride, p_stride;
    float **rows;       /* per slot: 8 rows of row_len floats */
    tgc_thread_pool *pool;
    int64_t row_len;    /* 2 * tiles_w + 2: the input columns the tiles of a row read */
    int64_t tiles_w, tiles_h, tiles, rows_per_piece;
    atomic_bool failed;
} winograd;

/* U = G g G^T, G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]],
 * for filters [piece * rows_per_piece, ...). */
static void transform_filters(void *arg, int64_t piece, int slot) {
    (void)slot;
    winograd *wg = arg;
    int64_t m_count = wg->g->m_count, c_count = wg->g->cg, mc = wg->u_stride;
    int64_t lo = piece * wg->rows_per_piece, hi = lo + wg->rows_per_piece < m_count ? lo + wg->rows_per_piece : m_count;
    for (int64_t m = lo; m < hi; m++) {
        for (int64_t c = 0; c < c_count; c++) {
            const float *f = wg->w + (m * c_count + c) * 9;
            float t[4][3];
            for (int j = 0; j < 3; j++) {
                t[0][j] = f[j];
                t[1][j] = 0.5f * (f[j] + f[3 + j] + f[6 + j]);
                t[2][j] = 0.5f * (f[j] - f[3 + j] + f[6 + j]);
                t[3][j] = f[6 + j];
            }
            float *u = wg->u_out + m * c_count + c;
            for (int i = 0; i < 4; i++) {
                u[(i * 4 + 0) * mc] = t[i][0];
                u[(i * 4 + 1) * mc] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
                u[(i * 4 + 2) * mc] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
                u[(i * 4 + 3) * mc] = t[i][2];
            }
        }
    }
}

/* One output row of the row pass of B^T d, split into its even and odd
 * columns: e[k] = a[2k] - b[2k], o[k] = a[2k+1] - b[2k+1] (sub_split),
 * or + (add_split). Kept out of line: gcc vectorizes these loops alone but
 * not inside the tile loops. */
__attribute__((noinline)) static void sub_split(const float *restrict a, const float *restrict b, float *restrict e,
                                                float *restrict o, int64_t half) {
    for (int64_t k = 0; k < half; k++) {
        e[k] = a[2 * k] - b[2 * k];
        o[k] = a[2 * k + 1] - b[2 * k + 1];
    }
}

__attribute__((noinline)) static void add_split(const float *restrict a, const float *restrict b, float *restrict e,
                                                float *restrict o, int64_t half) {
    for (int64_t k = 0; k < half; k++) {
        e[k] = a[2 * k] + b[2 * k];
        o[k] = a[2 * k + 1] + b[2 * k + 1];
    }
}

/* The column pass (B^T d) B of one combined row for `tiles` tiles: tile tx
 * reads columns 2 tx .. 2 tx + 3 = even tx, odd tx, even tx + 1, odd tx + 1. */
__attribute__((noinline)) static void tiles_b(const float *restrict ev, const float *restrict od, float *restrict v0,
                                              float *restrict v1, float *restrict v2, float *restrict v3,
                                              int64_t tiles) {
    for (int64_t tx = 0; tx < tiles; tx++) {
        v0[tx] = ev[tx] - ev[tx + 1];
        v1[tx] = od[tx] + ev[tx + 1];
        v2[tx] = ev[tx + 1] - od[tx];
        v3[tx] = od[tx] - od[tx + 1];
    }
}

/* V = B^T d B, B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
 * for input channels [piece * rows_per_piece, ...) and every tile, a row of
 * tiles at a time: the 4 input rows (padding as zeros) are copied out, B^T
 * combines them along the whole row into even and odd columns, then B the
 * columns of each tile (tile tx reads columns 2 tx .. 2 tx + 3: even tx,
 * odd tx, even tx + 1, odd tx + 1). Every loop is unit-stride and
 * vectorizes. */
static void transform_input(void *arg, int64_t piece, int slot) {
    winograd *wg = arg;
    const tgc_window *w = &wg->g->w;
    int64_t h = w->in[0], wd = w->in[1], c_count = wg->g->cg, len = wg->row_len, vs = wg->v_stride;
    int64_t tiles_w = wg->tiles_w, half = len / 2;
    int64_t pl = w->pads[1], copy_lo = pl < len ? pl : len, copy_hi = wd + pl < len ? wd + pl : len;
    float *d[4], *even[4], *odd[4];
    for (int i = 0; i < 4; i++) {
        d[i] = wg->rows[slot] + i * len;
        even[i] = wg->rows[slot] + (4 + i) * len;
        odd[i] = even[i] + half;
    }
    int64_t lo = piece * wg->rows_per_piece, hi = lo + wg->rows_per_piece < c_count ? lo + wg->rows_per_piece : c_count;
    for (int64_t c = lo; c < hi; c++) {
        const float *xc = wg->x + c * h * wd;
        for (int64_t ty = 0; ty < wg->tiles_h; ty++) {
            for (int i = 0; i < 4; i++) { /* input row 2 ty - pad_top + i, columns -pad_left .. */
                int64_t r = ty * 2 - w->pads[0] + i;
                if (r < 0 || r >= h || copy_lo >= copy_hi) {
                    memset(d[i], 0, (size_t)len * sizeof(float));
                    continue;
                }
                memset(d[i], 0, (size_t)copy_lo * sizeof(float));
                memcpy(d[i] + copy_lo, xc + r * wd + (copy_lo - pl), (size_t)(copy_hi - copy_lo) * sizeof(float));
                memset(d[i] + copy_hi, 0, (size_t)(len - copy_hi) * sizeof(float));
            }
            sub_split(d[0], d[2], even[0], odd[0], half); /* B^T d, on the rows */
            add_split(d[1], d[2], even[1], odd[1], half);
            sub_split(d[2], d[1], even[2], odd[2], half);
            sub_split(d[1], d[3], even[3], odd[3], half);
            for (int i = 0; i < 4; i++) { /* (B^T d) B, per tile */
                float *v0 = wg->v + (i * 4) * vs + c * wg->tiles + ty * tiles_w;
                tiles_b(even[i], odd[i], v0, v0 + vs, v0 + 2 * vs, v0 + 3 * vs, tiles_w);
            }
        }
    }
}

/* P[xi] = U[xi] V[xi]: one GEMM a piece. */
static void multiply(void *arg, int64_t xi, int slot) {
    (void)slot;
    winograd *wg = arg;
    int64_t m = wg->g->m_count, c = wg->g->cg, t = wg->tiles;
    if (!tgc_cpu_sgemm_one(false, false, m, t, c, 1.0f, wg->u + xi * wg->u_stride, c, wg->v + xi * wg->v_stride,
                       t, 0.0f, wg->p + xi * wg->p_stride, t))
        wg->failed = true;
}

/* A^T P A for `tiles` tiles of one row: P element xi of tile tx at
 * p[xi * ps + tx]; the tiles' output rows 0 and 1, even and odd columns. */
__attribute__((noinline)) static void tiles_at(const float *p, int64_t ps, float *restrict r0e, float *restrict r0o,
                                               float *restrict r1e, float *restrict r1o, int64_t tiles) {
    const float *restrict p0 = p, *restrict p1 = p + ps, *restrict p2 = p + 2 * ps, *restrict p3 = p + 3 * ps;
    const float *restrict p4 = p + 4 * ps, *restrict p5 = p + 5 * ps, *restrict p6 = p + 6 * ps;
    const float *restrict p7 = p + 7 * ps, *restrict p8 = p + 8 * ps, *restrict p9 = p + 9 * ps;
    const float *restrict p10 = p + 10 * ps, *restrict p11 = p + 11 * ps, *restrict p12 = p + 12 * ps;
    const float *restrict p13 = p + 13 * ps, *restrict p14 = p + 14 * ps, *restrict p15 = p + 15 * ps;
    for (int64_t tx = 0; tx < tiles; tx++) {
        /* A^T P: row 0 = P rows 0 + 1 + 2, row 1 = P rows 1 - 2 - 3 (P row i is xi 4i .. 4i+3) */
        float a0 = p0[tx] + p4[tx] + p8[tx], a1 = p1[tx] + p5[tx] + p9[tx];
        float a2 = p2[tx] + p6[tx] + p10[tx], a3 = p3[tx] + p7[tx] + p11[tx];
        float b0 = p4[tx] - p8[tx] - p12[tx], b1 = p5[tx] - p9[tx] - p13[tx];
        float b2 = p6[tx] - p10[tx] - p14[tx], b3 = p7[tx] - p11[tx] - p15[tx];
        r0e[tx] = a0 + a1 + a2; /* (A^T P) A */
        r0o[tx] = a1 - a2 - a3;
        r1e[tx] = b0 + b1 + b2;
        r1o[tx] = b1 - b2 - b3;
    }
}

/* Y += A^T P A, A^T = [[1, 1, 1, 0], [0, 1, -1, -1]], for output channels
 * [piece * rows_per_piece, ...) and every tile, a row of tiles at a time:
 * the tiles' even and odd output columns of both output rows into scratch,
 * then added onto Y clipped at its edges. */
static void transform_output(void *arg, int64_t piece, int slot) {
    winograd *wg = arg;
    const tgc_window *w = &wg->g->w;
    int64_t oh = w->out[0], ow = w->out[1], m_count = wg->g->m_count, ps = wg->p_stride, tiles_w = wg->tiles_w;
    float *restrict r0e = wg->rows[slot], *restrict r0o = r0e + tiles_w, *restrict r1e = r0o + tiles_w;
    float *restrict r1o = r1e + tiles_w;
    int64_t lo = piece * wg->rows_per_piece, hi = lo + wg->rows_per_piece < m_count ? lo + wg->rows_per_piece : m_count;
    for (int64_t m = lo; m < hi; m++) {
        float *ym = wg->y + m * oh * ow;
        for (int64_t ty = 0; ty < wg->tiles_h; ty++) {
            tiles_at(wg->p + m * wg->tiles + ty * tiles_w, ps, r0e, r0o, r1e, r1o, tiles_w);
            float *y0 = ym + ty * 2 * ow, *y1 = y0 + ow;
            int64_t pairs = ow / 2;
            for (int64_t k = 0; k < pairs; k++) {
                y0[2 * k] += r0e[k];
                y0[2 * k + 1] += r0o[k];
            }
            if (ow % 2) y0[ow - 1] += r0e[pairs];
            if (ty * 2 + 1 >= oh) continue;
            for (int64_t k = 0; k < pairs; k++) {
                y1[2 * k] += r1e[k];
                y1[2 * k + 1] += r1o[k];
            }
            if (ow % 2) y1[ow - 1] += r1e[pairs];
        }
    }
}

/* Pieces of `rows_per_piece` rows of `per_row` elements each, about
 * PIECE_ELEMENTS a piece. */
static int64_t pieces_of(int64_t rows, int64_t per_row, int64_t *rows_per_piece) {
    int64_t r = PIECE_ELEMENTS / (per_row > 0 ? per_row : 1);
    *rows_per_piece = r < 1 ? 1 : r;
    return (rows + *rows_per_piece - 1) / *rows_per_piece;
}

/* The transformed filters as a cache block: [16][u_stride] floats. */
static void *build_filters(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    winograd *wg = arg;
    *bytes = (size_t)(16 * wg->u_stride) * sizeof(float);
    if ((wg->u_out = tgc_malloc(*bytes)) != NULL) {
        int64_t pieces = pieces_of(wg->g->m_count, wg->g->cg * 16, &wg->rows_per_piece);
        tgc_parallel_for(wg->pool, pieces, transform_filters, wg);
    }
    return wg->u_out;
}

bool tgc_cpu_conv_winograd_applies(const tgc_conv_geometry *g) {
    const tgc_window *w = &g->w;
    if (w->n != 2 || g->group != 1) return false;
    for (int a = 0; a < 2; a++)
        if (w->kernel[a] != 3 || w->strides[a] != 1 || w->dilations[a] != 1) return false;
    /* Worth it when the GEMMs are wide enough to run well and the filter
     * transform (16 floats per filter channel, every run) is small beside
     * the multiplies it saves: the middle of a CNN, not its first layer
     * (3 channels) nor a 7x7 map. */
    int64_t tiles = (w->out[0] + 1) / 2 * ((w->out[1] + 1) / 2);
    return g->cg >= 16 && g->m_count >= 16 && tiles >= 49;
}

/* Floats between consecutive xi matrices: `size` rounded up to a cache
 * line and moved off multiples of 4 KiB, so that the 16 streams a
 * transform writes do not alias in the store buffer (4K aliasing made the
 * transforms 3x slower). */
static int64_t spread_stride(int64_t size) {
    int64_t stride = (size + 15) / 16 * 16;
    while (stride * 4 % 4096 < 512 || stride * 4 % 4096 > 3584) stride += 16;
    return stride;
}

tgc_status tgc_cpu_conv_winograd(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                 float *y) {
    const tgc_window *win = &g->w;
    int64_t tiles_w = (win->out[1] + 1) / 2, tiles_h = (win->out[0] + 1) / 2, tiles = tiles_h * tiles_w;
    int64_t m = g->m_count, ch = g->cg;
    winograd wg = {.g = g, .w = w, .tiles_w = tiles_w, .tiles_h = tiles_h, .tiles = tiles, .row_len = 2 * tiles_w + 2,
                   .u_stride = spread_stride(m * ch), .v_stride = spread_stride(ch * tiles),
                   .p_stride = spread_stride(m * tiles)};
    int width = tgc_parallel_width(c->pool);
    wg.pool = c->pool;
    const float *cached = tgc_kernel_cache_get(c, 1u << 1, build_filters, &wg);
    int64_t u_floats = cached != NULL ? 0 : 16 * wg.u_stride;
    size_t floats = (size_t)(u_floats + 16 * (wg.v_stride + wg.p_stride) + width * 8 * wg.row_len);
    float *scratch = tgc_malloc(floats * sizeof(float));
    wg.rows = tgc_malloc((size_t)width * sizeof *wg.rows);
    if (scratch == NULL || wg.rows == NULL) {
        tgc_free(scratch);
        tgc_free(wg.rows);
        return tgc_kernel_fail(c, "out of host memory for Conv's Winograd transforms (%zu bytes)",
                               floats * sizeof(float));
    }
    wg.v = scratch + u_floats;
    wg.p = wg.v + 16 * wg.v_stride;
    for (int s = 0; s < width; s++) wg.rows[s] = wg.p + 16 * wg.p_stride + s * 8 * wg.row_len;

    int64_t pieces;
    if (cached != NULL) {
        wg.u = cached;
    } else { /* no cache (a kernel run alone, or computed filters): transform them now */
        wg.u = wg.u_out = scratch;
        pieces = pieces_of(m, ch * 16, &wg.rows_per_piece);
        tgc_parallel_for(c->pool, pieces, transform_filters, &wg);
    }
    for (int64_t n = 0; n < g->batch && !atomic_load(&wg.failed); n++) {
        wg.x = x + n * g->channels * g->in_size;
        wg.y = y + n * m * g->out_size;
        pieces = pieces_of(ch, tiles * 16, &wg.rows_per_piece);
        tgc_parallel_for(c->pool, pieces, transform_input, &wg);
        tgc_parallel_for(c->pool, 16, multiply, &wg);
        pieces = pieces_of(m, tiles * 16, &wg.rows_per_piece);
        tgc_parallel_for(c->pool, pieces, transform_output, &wg);
    }
    tgc_free(scratch);
    tgc_free(wg.rows);
    if (atomic_load(&wg.failed)) return tgc_kernel_fail(c, "Conv sizes pass BLAS's int range");
    return TGC_OK;
}
