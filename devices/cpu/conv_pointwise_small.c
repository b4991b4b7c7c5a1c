/* Pointwise Conv (1x1, strides 1, no pads, one group) on small maps with
 * W a session constant: output channels across the vector lanes.
 *
 * As an NCHW product, Y [M, HW] = W [M, C] x X [C, HW], the vectors run
 * along HW, and a 7x7 map's 49 positions fill 4 vectors of 16 lanes with
 * 64: a quarter of every multiply-add is spent on lanes nobody reads. The
 * transposed product Y^T [HW, M] = X^T [HW, C] x W^T [C, M] puts the
 * vectors along M (hundreds of channels, whole vectors but the last) and
 * the positions in the rows of oneDNN's tiles. So, per image:
 *   1. oneDNN's matmul reads X where it lies as X^T (a transposed source:
 *      strides 1 and HW), against W^T packed once into its layout (the
 *      node's kernel cache, as a MatMul's constant B);
 *   2. each piece of Y^T's columns (output channels, cut from the sizes
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


/* The most output positions an image for which the path is taken (7x7,
 * 8x8): see tgc_cpu_conv_pointwise_small_applies. */
#define MAX_POSITIONS 64

/* The transposed product of geometry g, one image: A = X^T (X [C, HW]
 * read transposed), B^T = W [M, C], C = Y^T [HW, M] dense. */
static tgc_gemm_shape shape_of(const tgc_conv_geometry *g) {
    return (tgc_gemm_shape){.ta = true, .tb = true, .m = g->out_size, .n = g->m_count, .k = g->cg,
                            .lda = g->in_size, .ldb = g->cg, .ldc = g->m_count, .alpha = 1.0f};
}

bool tgc_cpu_conv_pointwise_small_applies(const tgc_conv_geometry *g, bool w_const) {
    if (!w_const || !g->pointwise || g->group != 1 || g->out_size > MAX_POSITIONS || g->out_size < 1 ||
        g->m_count < 1 || g->cg < 1 || !tgc_packed_gemm_available())
        return false;
    tgc_gemm_shape s = shape_of(g);
    return tgc_packed_gemm_blocks_fit(&s);
}

void tgc_cpu_conv_pointwise_small_footprint(const tgc_conv_geometry *g, tgc_kernel_footprint *out) {
    tgc_gemm_shape s = shape_of(g);
    out->cache_bytes = tgc_packed_gemm_cached_bound(&s);
    out->replaces_inputs = 1u << 1;
}

/* One image's output: where each block of Y^T goes. */
typedef struct unblock_job {
    float *y; /* this image's Y [M, HW] */
    const float *bias;
    int64_t positions;
    const tgc_fused_act *act;
} unblock_job;

/* Block [HW, n1 - n0] of Y^T into Y's planes n0 .. n1 - 1, with their bias. */
static void unblock(void *arg, int64_t n0, int64_t n1, const float *block) {
    const unblock_job *j = arg;
    int64_t cols = n1 - n0, hw = j->positions;
    for (int64_t m = n0; m < n1; m++) {
        float *to = j->y + m * hw, b = j->bias != NULL ? j->bias[m] : 0.0f;
        const float *from = block + (m - n0);
        for (int64_t p = 0; p < hw; p++) to[p] = from[p * cols] + b;
    }
    tgc_cpu_act_block(j->act, j->y, hw, n0, n1, 0, hw);
}

tgc_status tgc_cpu_conv_pointwise_small(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x,
                                        const float *w, const float *bias, float *y) {
    tgc_gemm_shape s = shape_of(g);
    const tgc_packed_gemm *packed = tgc_packed_gemm_cached(c, &s, w); /* W is then read only to pack it */
    if (c->prepack_only) return TGC_OK;
    if (packed == NULL) return tgc_cpu_conv_pointwise(c, g, x, w, bias, y);
    for (int64_t n = 0; n < g->batch; n++) {
        unblock_job j = {.y = y + n * g->m_count * g->out_size, .bias = bias, .positions = g->out_size,
                         .act = c->fused_act};
        if (!tgc_packed_gemm_run_blocks(packed, c->pool, x + n * g->channels * g->in_size, unblock, &j))
            return tgc_kernel_fail(c, "Conv: oneDNN's product over the output channels failed");
    }
    return TGC_OK;
}
