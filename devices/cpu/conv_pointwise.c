/* Pointwise layers channels last on tgc's own register tiles (see
 * conv_pointwise.h): W packed once, pieces from the sizes, AVX-512's tiles
 * (conv_pointwise_lanes.h), the activation while in cache.
 *
 * Why not oneDNN's 1x1 kernel, which ran as fast alone: oneDNN takes a
 * dense Y only, so its pieces were pieces of positions and each read every
 * weight. In a model those come from the last-level cache or memory once
 * a piece: MNASNet's 1152 -> 192 on 7x7 (885 KB of weights) read them four
 * times a run. Here a layer whose weights outweigh its input is cut by
 * output channels, and each piece streams only its own blocks, once. */
#include "devices/cpu/conv_pointwise.h"

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/kernel_cache.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <string.h>

/* No pieces below SPLIT_MACS multiply-adds; else a power of two of them,
 * at least 2, more while each keeps PIECE_MACS, at most MAX_PIECES (even
 * over 2, 4, 8 or 16 threads), as oneDNN's float32 pieces (dnnl_conv.c). */
#define SPLIT_MACS (INT64_C(1) << 20)
#define PIECE_MACS (INT64_C(2) << 20)
#define MAX_PIECES 16

/* A piece's rows go through the tiles and the activation in chunks (whole
 * tiles of rows but the last) whose input and output each stay within
 * CHUNK_BYTES (in a core's L2 with the weights they meet). */
#define CHUNK_BYTES (INT64_C(128) << 10)

int64_t tgc_cpu_pointwise_bytes(int64_t m, int64_t k, int64_t lanes) {
    int64_t blocks, floats, bytes;
    if (m < 1 || k < 1 || lanes < 1 || m > INT64_MAX - lanes) return -1;
    blocks = (m + lanes - 1) / lanes;
    if (!tgc_checked_mul_i64(blocks * lanes, k, &floats) ||
        !tgc_checked_mul_i64(floats, (int64_t)sizeof(float), &bytes) ||
        !tgc_checked_add_i64(bytes, (int64_t)sizeof(tgc_pointwise_weights), &bytes))
        return -1;
    return bytes;
}

typedef struct pack_args {
    int64_t m, k, lanes;
    const float *w; /* [m, k] */
} pack_args;

/* tgc_kernel_cache_build: W [m, k] into blocks [m / lanes][k][lanes]. */
static void *build_packed(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const pack_args *a = arg;
    int64_t nbytes = tgc_cpu_pointwise_bytes(a->m, a->k, a->lanes);
    tgc_pointwise_weights *pw = nbytes > 0 && (uint64_t)nbytes <= SIZE_MAX ? tgc_malloc((size_t)nbytes) : NULL;
    if (pw == NULL) return NULL;
    *pw = (tgc_pointwise_weights){.m = a->m, .k = a->k, .lanes = a->lanes};
    int64_t blocks = (a->m + a->lanes - 1) / a->lanes;
    for (int64_t b = 0; b < blocks; b++)
        for (int64_t t = 0; t < a->k; t++) {
            float *to = pw->w + (b * a->k + t) * a->lanes;
            for (int64_t l = 0; l < a->lanes; l++) {
                int64_t q = b * a->lanes + l;
                to[l] = q < a->m ? a->w[q * a->k + t] : 0.0f;
            }
        }
    *bytes = (size_t)nbytes;
    return pw;
}

const tgc_pointwise_weights *tgc_cpu_pointwise_cached(tgc_kernel_ctx *c, int64_t m, int64_t k, const float *w,
                                                     bool *no_memory) {
    pack_args args = {.m = m, .k = k, .lanes = tgc_cpu_conv_isa()->lanes, .w = w};
    const tgc_pointwise_weights *pw = tgc_kernel_cache_get(c, 1u << 1, build_packed, &args);
    *no_memory = pw == NULL && (c->const_inputs & (1u << 1)) && c->cache != NULL && !tgc_kernel_cache_taken(c);
    if (pw == NULL || pw->m != m || pw->k != k || pw->lanes != args.lanes) return NULL;
    tgc_kernel_cache_replaces(c, 1u << 1);
    return pw;
}

typedef struct pw_plan {
    tgc_conv_pw_job job;
    const tgc_conv_isa *isa;
    const tgc_fused_act *act; /* what the tiles' clamp leaves: NULL when they apply it */
    int64_t rows, blocks;
    bool by_channels;   /* pieces of blocks, else of tiles of rows */
    int64_t units;      /* blocks, or tiles of isa->pointwise_rows rows (the last may have fewer) */
    int64_t pieces;     /* piece i: units [i units / pieces, (i + 1) units / pieces) */
    int64_t chunk_rows; /* rows a chunk */
    /* A strided layer: Y's rows are lines of out_w positions (out_h lines
     * an image), row (n, oh, ow) reading X's position (n, oh sh, ow sw) of
     * an in_h x in_w map; 0 for a layer at stride 1 (X's rows as Y's). */
    int64_t out_w, out_h, in_w, in_h, sh, sw;
} pw_plan;

/* Rows [r0, r1) of blocks [b0, b1): in one call at stride 1, else a call
 * a line, each reading its line's inputs sw positions apart. */
static void run_rows(const pw_plan *p, int64_t r0, int64_t r1, int64_t b0, int64_t b1) {
    if (p->out_w == 0) {
        p->isa->pointwise(&p->job, r0, r1, b0, b1);
        return;
    }
    for (int64_t r = r0; r < r1;) {
        int64_t line = r / p->out_w, ow = r % p->out_w, n = line / p->out_h, oh = line % p->out_h;
        int64_t count = p->out_w - ow < r1 - r ? p->out_w - ow : r1 - r;
        tgc_conv_pw_job j = p->job;
        j.x = p->job.x + ((n * p->in_h + oh * p->sh) * p->in_w + ow * p->sw) * p->job.k;
        j.ldx = p->sw * p->job.k;
        j.y = p->job.y + r * p->job.ldy;
        j.z = p->job.z != NULL ? p->job.z + r * p->job.ldy : NULL;
        p->isa->pointwise(&j, 0, count, b0, b1);
        r += count;
    }
}

/* Piece i: its rows (or all) at its blocks (or all), chunk by chunk, the
 * activation over each chunk while it is in cache. */
static void pw_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const pw_plan *p = arg;
    int64_t r0 = 0, r1 = p->rows, b0 = 0, b1 = p->blocks, lanes = p->isa->lanes;
    int64_t u0 = i * p->units / p->pieces, u1 = (i + 1) * p->units / p->pieces;
    if (p->by_channels) {
        b0 = u0, b1 = u1;
    } else {
        int64_t tile = p->isa->pointwise_rows;
        r0 = u0 * tile;
        r1 = u1 * tile < p->rows ? u1 * tile : p->rows;
    }
    int64_t c0 = b0 * lanes, c1 = b1 * lanes < p->job.m ? b1 * lanes : p->job.m;
    for (int64_t r = r0; r < r1; r += p->chunk_rows) {
        int64_t re = r + p->chunk_rows < r1 ? r + p->chunk_rows : r1;
        run_rows(p, r, re, b0, b1);
        tgc_cpu_act_block(p->act, p->job.y, p->job.ldy, r, re, c0, c1);
    }
}

/* The plan's pieces and chunks, from the sizes alone; returns the pieces.
 * The units are shared out evenly (6 blocks over 4 pieces: 1, 2, 1, 2),
 * never in pieces of one rounded-up size, which left RegNetX-800MF's 42
 * blocks of 672 channels in 7 pieces of 6 where it asked for 8: 4 and 3
 * on two threads. */
static int64_t cut(pw_plan *p) {
    int64_t k = p->job.k, m = p->job.m, tile = p->isa->pointwise_rows, macs, pieces;
    if (!tgc_checked_mul_i64(p->rows, k, &macs) || !tgc_checked_mul_i64(macs, m, &macs)) macs = INT64_MAX;
    pieces = macs < SPLIT_MACS ? 1 : 2;
    while (pieces < MAX_PIECES && macs / (2 * pieces) >= PIECE_MACS) pieces *= 2;
    p->by_channels = m > p->rows; /* W [m, k] outweighs X [rows, k] */
    p->units = p->by_channels ? p->blocks : (p->rows + tile - 1) / tile;
    p->pieces = pieces < p->units ? pieces : p->units;
    int64_t most = (p->units + p->pieces - 1) / p->pieces; /* units a piece, at most */
    int64_t width = p->by_channels ? most * p->isa->lanes : m, widest = k > width ? k : width;
    p->chunk_rows = CHUNK_BYTES / (widest * (int64_t)sizeof(float)) / tile * tile;
    if (p->chunk_rows < tile) p->chunk_rows = tile;
    return p->pieces;
}

/* Runs plan p (its job, rows and blocks set) over c's pool. */
static void run_plan(tgc_kernel_ctx *c, pw_plan *p, const tgc_pointwise_weights *pw) {
    p->isa = tgc_cpu_conv_isa();
    p->blocks = (pw->m + pw->lanes - 1) / pw->lanes;
    p->job.clamp = tgc_cpu_act_clamp(c->fused_act, &p->job.lo, &p->job.hi);
    p->act = p->job.clamp ? NULL : c->fused_act;
    tgc_parallel_for(c->pool, cut(p), pw_piece, p);
}

/* The job for W packed: rows of X k floats apart, Y's and Z's m. */
static tgc_conv_pw_job job_of(const tgc_pointwise_weights *pw, const float *x, const float *bias, const float *z,
                              float *y) {
    return (tgc_conv_pw_job){.x = x, .ldx = pw->k, .k = pw->k, .m = pw->m, .w = pw->w, .bias = bias, .z = z,
                             .y = y, .ldy = pw->m};
}

void tgc_cpu_pointwise_run(tgc_kernel_ctx *c, const tgc_pointwise_weights *pw, const float *x, int64_t rows,
                           const float *bias, const float *z, float *y) {
    if (rows < 1) return;
    pw_plan p = {.job = job_of(pw, x, bias, z, y), .rows = rows};
    run_plan(c, &p, pw);
}

void tgc_cpu_pointwise_run_strided(tgc_kernel_ctx *c, const tgc_pointwise_weights *pw, const float *x,
                                   const tgc_pointwise_sampling *s, const float *bias, const float *z, float *y) {
    if (s->batch < 1 || s->out_h < 1 || s->out_w < 1) return;
    pw_plan p = {.job = job_of(pw, x, bias, z, y),
                 .rows = s->batch * s->out_h * s->out_w,
                 .out_w = s->out_w,
                 .out_h = s->out_h,
                 .in_w = s->in_w,
                 .in_h = s->in_h,
                 .sh = s->stride_h,
                 .sw = s->stride_w};
    run_plan(c, &p, pw);
}
