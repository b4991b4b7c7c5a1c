/* Conv on small maps (at most 64 output positions: 7x7, 8x8; 256, 14x14,
 * for kernels past 1x1), one group, W a session constant: output
 * channels across the vector lanes.
 *
 * As an NCHW product, Y [M, HW] = W [M, K] x X [K, HW] (K = C for a 1x1
 * layer; an im2col matrix of K = C k1..kn rows otherwise), the vectors run
 * along HW, and a 7x7 map's 49 positions fill 4 vectors of 16 lanes with
 * 64: a quarter of every multiply-add is spent on lanes nobody reads. The
 * transposed product Y^T [HW, M] = A [HW, K] x W^T [K, M] puts the
 * vectors along M (hundreds of channels, whole vectors but the last) and
 * the positions in the rows of oneDNN's tiles. So, per image:
 *   1. X [C, D1..Dn] is transposed channels last, [D1..Dn, C], and each
 *      output position's receptive field is copied into its row of A,
 *      tap after tap, C floats each (zeros for a tap in the padding): A
 *      [HW, k1..kn C], in a workspace, over the pool (a pointwise layer's
 *      A is the transposed X itself). oneDNN takes a transposed A too
 *      (an im2col matrix [K, HW] read as A), but copies it again for
 *      every piece of output channels: in perf, 15% of ResNet-34's 512 ->
 *      512 3x3 layer on 7x7 went to that copy, 7% to the im2col matrix;
 *   2. oneDNN's matmul multiplies A by W^T, W laid out [M, k1..kn, C]
 *      (the taps outermost, as A's rows) and packed once into oneDNN's
 *      layout (the node's kernel cache, as a MatMul's constant B);
 *   3. each piece of Y^T's columns (output channels, cut from the sizes
 *      alone: tgc_packed_gemm) comes back as a dense [HW, channels] block
 *      in its thread's scratch and is transposed into Y's planes with the
 *      bias, then through the fused activation (the row's own vector
 *      loop: an unfused Relu's bits), while in cache.
 * oneDNN 2.6 has no fast kernel for a transposed destination (its
 * reference loops: 0.4 s for 49 x 672 x 672), hence the blocks. Its
 * products, 1 thread, AVX-512 (Zen 5), medians of 5: 672 -> 672 channels
 * over 49 positions 285 us as [M, HW] against 219 as [HW, M] (254 with
 * the source transposed); 512 -> 512 163 against 125; 192 -> 1152 139
 * against 107; 288 -> 288 over 196 positions 162 against 150. The sums
 * are oneDNN's, in its order (not the NCHW product's bits); any thread
 * count gives the same bits. */
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/kernels_shape.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <string.h>

/* The most output positions an image for which the path is taken: 7x7
 * and 8x8 maps, and 14x14 ones for kernels larger than 1x1, whose im2col
 * matrix has short rows (see tgc_cpu_conv_small_map_applies). */
#define MAX_POSITIONS 64
#define MAX_POSITIONS_UNROLLED 256

/* The largest A (an image's receptive fields), in floats (16 MiB). */
#define MAX_FIELD_FLOATS ((int64_t)4 << 20)

/* The floats of A a piece of the unrolling aims at (256 KiB). */
#define PIECE_FLOATS ((int64_t)1 << 16)

/* The product of geometry g, one image: A [HW, K] (K = k1..kn C, the taps
 * outermost), B^T = W laid out [M, K], C = Y^T [HW, M] dense. */
static tgc_gemm_shape shape_of(const tgc_conv_geometry *g) {
    int64_t k = g->cg * g->kk_count;
    return (tgc_gemm_shape){.ta = false, .tb = true, .m = g->out_size, .n = g->m_count, .k = k,
                            .lda = k, .ldb = k, .ldc = g->m_count, .alpha = 1.0f};
}

bool tgc_cpu_conv_small_map_applies(const tgc_conv_geometry *g, bool w_const) {
    if (!w_const || g->group != 1 || g->out_size < 1 || g->m_count < 1 || g->cg < 1 || !tgc_packed_gemm_available())
        return false;
    if (g->out_size > (g->kk_count > 1 ? MAX_POSITIONS_UNROLLED : MAX_POSITIONS) ||
        (g->kk_count > 1 && tgc_cpu_conv_winograd_applies(g)))
        return false;
    int64_t k, field_floats, x_floats;
    if (!tgc_checked_mul_i64(g->cg, g->kk_count, &k) || !tgc_checked_mul_i64(k, g->out_size, &field_floats) ||
        field_floats > MAX_FIELD_FLOATS ||
        !tgc_checked_mul_i64(g->cg, g->in_size, &x_floats) || x_floats > MAX_FIELD_FLOATS)
        return false;
    tgc_gemm_shape s = shape_of(g);
    return tgc_packed_gemm_blocks_fit(&s);
}

/* One image's workspace, in floats: X channels last, and A unless A is
 * that (a pointwise layer). */
static int64_t workspace_floats(const tgc_conv_geometry *g) {
    return g->cg * g->in_size + (g->pointwise ? 0 : g->cg * g->kk_count * g->out_size);
}

void tgc_cpu_conv_small_map_footprint(const tgc_conv_geometry *g, tgc_kernel_footprint *out) {
    tgc_gemm_shape s = shape_of(g);
    out->cache_bytes = tgc_packed_gemm_cached_bound(&s);
    out->workspace_bytes = workspace_floats(g) * (int64_t)sizeof(float);
    out->replaces_inputs = 1u << 1;
}

/* W [M, C, taps] as B^T [M, taps, C] (a copy for a 1x1): tgc_packed_b_fn. */
typedef struct weights_arg {
    const tgc_conv_geometry *g;
    const float *w;
} weights_arg;

static void fill_weights(void *arg, float *b) {
    const weights_arg *a = arg;
    int64_t taps = a->g->kk_count, cg = a->g->cg;
    for (int64_t m = 0; m < a->g->m_count; m++)
        for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t t = 0; t < taps; t++) b[(m * taps + t) * cg + ci] = a->w[(m * cg + ci) * taps + t];
}

/* Rows [p0, p1) of A from X channels last: tgc_parallel_for's body. */
typedef struct unroll_job {
    const tgc_conv_geometry *g;
    const float *x_last; /* [D1..Dn, C] */
    float *a;            /* [HW, taps, C] */
    int64_t per_piece;   /* output positions */
} unroll_job;

static void unroll_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const unroll_job *j = arg;
    const tgc_window *w = &j->g->w;
    int64_t cg = j->g->cg, taps = j->g->kk_count;
    int64_t p0 = piece * j->per_piece, p1 = p0 + j->per_piece < j->g->out_size ? p0 + j->per_piece : j->g->out_size;
    for (int64_t p = p0; p < p1; p++) {
        int64_t o[TGC_MAX_RANK];
        int64_t q = p; /* p's output index, row-major */
        for (int a = w->n - 1; a >= 0; a--) {
            o[a] = q % w->out[a];
            q /= w->out[a];
        }
        for (int64_t t = 0; t < taps; t++) {
            int64_t r = t, k[TGC_MAX_RANK], at = 0;
            bool inside = true;
            for (int a = w->n - 1; a >= 0; a--) {
                k[a] = r % w->kernel[a];
                r /= w->kernel[a];
            }
            for (int a = 0; a < w->n; a++) {
                int64_t i = o[a] * w->strides[a] - w->pads[a] + k[a] * w->dilations[a];
                inside = inside && i >= 0 && i < w->in[a];
                at = at * w->in[a] + i;
            }
            float *to = j->a + (p * taps + t) * cg;
            if (inside) memcpy(to, j->x_last + at * cg, (size_t)cg * sizeof(float));
            else memset(to, 0, (size_t)cg * sizeof(float));
        }
    }
}

/* One image's output: where each block of Y^T goes. */
typedef struct unblock_job {
    float *y; /* this image's Y [M, HW] */
    const float *bias;
    int64_t positions;
    const tgc_fused_act *act;
} unblock_job;

/* Block [p1 - p0, n1 - n0] of Y^T (positions p0 .. p1 - 1) into Y's
 * planes n0 .. n1 - 1, with their bias. */
static void unblock(void *arg, int64_t p0, int64_t p1, int64_t n0, int64_t n1, const float *block) {
    const unblock_job *j = arg;
    int64_t cols = n1 - n0, hw = j->positions;
    for (int64_t m = n0; m < n1; m++) {
        float *to = j->y + m * hw, b = j->bias != NULL ? j->bias[m] : 0.0f;
        const float *from = block + (m - n0); /* position p0's */
        for (int64_t p = p0; p < p1; p++) to[p] = from[(p - p0) * cols] + b;
    }
    tgc_cpu_act_block(j->act, j->y, hw, n0, n1, p0, p1);
}

tgc_status tgc_cpu_conv_small_map(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                  const float *bias, float *y) {
    tgc_gemm_shape s = shape_of(g);
    weights_arg wa = {.g = g, .w = w}; /* W is read only to pack it */
    bool no_memory;
    const tgc_packed_gemm *packed = tgc_packed_gemm_cached_filled(c, &s, fill_weights, &wa, &no_memory);
    if (no_memory) return tgc_kernel_fail_nomem(c, "out of host memory for Conv's packed weights");
    if (c->prepack_only) return TGC_OK;
    if (packed == NULL)
        return g->pointwise ? tgc_cpu_conv_pointwise(c, g, x, w, bias, y) : tgc_cpu_conv_im2col(c, g, x, w, bias, y);
    size_t bytes = (size_t)workspace_floats(g) * sizeof(float); /* within 32 MiB: see applies */
    float *x_last = tgc_malloc(bytes);
    if (x_last == NULL)
        return tgc_kernel_fail_nomem(c, "out of host memory for Conv's receptive fields (%zu bytes)", bytes);
    unroll_job u = {.g = g, .x_last = x_last, .a = g->pointwise ? x_last : x_last + g->cg * g->in_size};
    u.per_piece = PIECE_FLOATS / (g->cg * g->kk_count);
    if (u.per_piece < 1) u.per_piece = 1;
    int64_t dims[2] = {g->in_size, g->cg}, strides[2] = {1, g->in_size}; /* [C, HW] read as [HW, C] */
    tgc_status st = TGC_OK;
    for (int64_t n = 0; st == TGC_OK && n < g->batch; n++) {
        tgc_cpu_strided_copy_on(c->pool, x_last, x + n * g->channels * g->in_size, sizeof(float), 2, dims, strides, 0);
        if (!g->pointwise) tgc_parallel_for(c->pool, (g->out_size + u.per_piece - 1) / u.per_piece, unroll_piece, &u);
        unblock_job j = {.y = y + n * g->m_count * g->out_size, .bias = bias, .positions = g->out_size,
                         .act = c->fused_act};
        if (!tgc_packed_gemm_run_blocks(packed, c->pool, u.a, unblock, &j))
            st = tgc_kernel_fail(c, "Conv: oneDNN's product over the output channels failed");
    }
    tgc_free(x_last);
    return st;
}
