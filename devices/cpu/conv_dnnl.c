/* Conv on NCHW tensors through oneDNN's channels-last convolution
 * (dnnl_conv.h), for dense layers on small maps (see
 * tgc_cpu_conv_dnnl_applies for which, and why). For each image:
 *   1. X [C, H, W] is transposed into [H, W, C] scratch, over the pool;
 *   2. each piece of output rows (cut from the sizes alone) runs oneDNN's
 *      kernel into its slot's [rows, OW, M] scratch, bias included, then
 *      the fused activation over those rows while they are in cache (the
 *      row's own vector loop: an unfused Relu's or Clip's bits), then a
 *      transpose into Y's planes [M, rows x OW] (a _ConvAdd's residual,
 *      NCHW as Y, is added into the scratch before the activation).
 * The sums are oneDNN's, in its kernel's order (not the other ways' bits);
 * any thread count gives the same bits. */
#include "devices/cpu/conv_direct.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/kernels_shape.h"
#include "devices/cpu/nhwc.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <stdatomic.h>

typedef struct dnnl_job {
    const tgc_conv_geometry *g;
    const tgc_dnnl_conv *dq;
    const float *x_nhwc, *bias;
    float *y;            /* this image's Y [M, OH, OW] */
    float *slot_scratch; /* per slot: piece_floats floats */
    int64_t piece_floats;
    const tgc_fused_act *act;
    atomic_bool failed;
} dnnl_job;

/* Piece i: its rows [r0, r1) of every output channel. */
static void dnnl_piece(void *arg, int64_t i, int slot) {
    dnnl_job *j = arg;
    const tgc_conv_geometry *g = j->g;
    int64_t r0, r1, ow = g->w.out[1], m_count = g->m_count;
    tgc_dnnl_conv_piece_rows(j->dq, i, &r0, &r1);
    int64_t positions = (r1 - r0) * ow;
    float *rows = j->slot_scratch + slot * j->piece_floats; /* [positions, M] */
    if (!tgc_dnnl_conv_run_piece(j->dq, i, j->x_nhwc, 0, j->bias, rows)) {
        atomic_store(&j->failed, true);
        return;
    }
    const tgc_fused_act *act = j->act;
    tgc_fused_act after;
    if (act != NULL && act->residual != NULL) { /* Z's rows, NCHW like Y's, into the piece before the activation */
        const float *z = act->residual + (j->y + r0 * ow - act->out);
        for (int64_t m = 0; m < m_count; m++)
            for (int64_t p = 0; p < positions; p++) rows[p * m_count + m] += z[m * g->out_size + p];
        after = *act;
        after.residual = NULL;
        act = after.row >= 0 ? &after : NULL;
    }
    tgc_cpu_act_block(act, rows, 0, 0, 1, 0, positions * m_count);
    for (int64_t m = 0; m < m_count; m++) {
        float *to = j->y + m * g->out_size + r0 * ow;
        for (int64_t p = 0; p < positions; p++) to[p] = rows[p * m_count + m];
    }
}

/* Which layers (tgc_cpu_conv_dnnl_applies), from the Conv layers of seven
 * networks (bench/bench_conv_families, this path against tgc's own) and
 * from whole models (`tgc run --trace`, medians of 5 interleaved runs):
 *   - Winograd's 16 GEMMs [M, C] x [C, tiles] are thin with few output
 *     channels: DenseNet-121's 128 -> 32 3x3 on 14x14 (32 x 128 x 49)
 *     ran in 0.058 ms against 0.088 (one thread; 0.031 against 0.062 on
 *     two). On 28x28 (x 196) the two were level; on 56x56 (x 784) and for
 *     ResNet-18's 256 -> 256 on 14x14 (256 x 256 x 49) Winograd won by
 *     1.18x. So: Winograd's layers whose GEMMs have fewer than
 *     THIN_WINOGRAD_MACS multiply-adds each.
 *   - im2col's layers on maps of at most MAX_POSITIONS outputs: DenseNet's
 *     3x3 on 7x7 0.016 ms against 0.049; ResNet-18's strided 3x3 layers
 *     0.68-0.86x. Larger maps lost: stems (7x7 stride 2 to 112x112: 1.25x;
 *     ConvNeXt's 4x4 stride 4 to 56x56: 1.9x).
 *   - Weights of at most MAX_WEIGHT_FLOATS (2 MiB) unless each serves at
 *     least HEAVY_WEIGHT_POSITIONS outputs a run (positions times images:
 *     at batch 16 ResNet-50's strided 3x3 layers on 14x14 and 7x7 read
 *     their weights once for 16 images; the model -4.2% at 1 thread,
 *     -3.0% at 2): ResNet-18's 512 -> 512 3x3 on
 *     7x7 (9.4 MB, 49 positions) was 0.63x alone but 1.1x inside the
 *     model, where its weights stream from memory (both ways near 1.45
 *     ms); DeepLabV3's atrous 960 -> 256 3x3 with dilation 12 on 20x20
 *     (8.8 MB, 400 positions) went from 9.0 to 3.4 ms (oneDNN skips the
 *     taps that read padding, two thirds of them; im2col multiplies them).
 *   - Not where conv_direct.c applies (few input channels: an image's
 *     first layer), nor 1x1: ResNet's strided 1x1 downsampling took
 *     1.25-1.4x longer in the model (im2col of a 1x1 is a plain gather;
 *     its GEMM is not thin).
 * Whole models against tgc's own ways (1 thread, 2 threads): DenseNet-121
 * -6.6%, -8.2%; ResNet-18 -1.0%, -1.1%; ResNet-50 -0.9%, -0.6%;
 * ConvNeXt-T -0.6%, -1.8%; DeepLabV3-MobileNetV3 -22.8%, -21.9% (its
 * atrous layer). */
#define THIN_WINOGRAD_MACS (INT64_C(1) << 20)
/* Winograd's layers taken have at least this many channels in and out
 * (DenseNet's: 128 -> 32): narrower ones were not measured, and there
 * Winograd's filters in the cache and oneDNN's weights padded to blocks
 * of 16 channels weigh alike (resnet_mini's 16 -> 16 layers). */
#define MIN_WINOGRAD_CHANNELS 32
/* The fewest multiply-adds an image for which the path is taken: a call
 * into oneDNN and the copies cost microseconds of their own (dnnl_conv.c
 * does not split a layer below 1M either); smaller layers were not
 * measured. */
#define MIN_MACS (INT64_C(1) << 20)
#define MAX_POSITIONS 784
#define MAX_WEIGHT_FLOATS (INT64_C(1) << 19)
#define HEAVY_WEIGHT_POSITIONS 256

bool tgc_cpu_conv_dnnl_applies(const tgc_conv_geometry *g, bool w_const) {
    if (!w_const || g->w.n != 2 || g->group != 1 || g->kk_count < 2 || tgc_cpu_conv_direct_applies(g) ||
        !tgc_dnnl_conv_possible(g, TGC_FLOAT32))
        return false;
    int64_t floats, tiles = (g->w.out[0] + 1) / 2 * ((g->w.out[1] + 1) / 2), macs, served;
    if (!tgc_checked_mul_i64(g->m_count, g->cg * g->kk_count, &floats) ||
        !tgc_checked_mul_i64(g->out_size, g->batch, &served) || /* a run's outputs each weight serves */
        (floats > MAX_WEIGHT_FLOATS && served < HEAVY_WEIGHT_POSITIONS) ||
        !tgc_checked_mul_i64(floats, g->out_size, &macs) || macs < MIN_MACS)
        return false;
    if (tgc_cpu_conv_winograd_applies(g)) /* its GEMMs' multiply-adds: M x C x tiles */
        return g->m_count >= MIN_WINOGRAD_CHANNELS && g->cg >= MIN_WINOGRAD_CHANNELS &&
               tgc_checked_mul_i64(g->m_count * g->cg, tiles, &macs) && macs < THIN_WINOGRAD_MACS;
    return g->out_size <= MAX_POSITIONS;
}

void tgc_cpu_conv_dnnl_footprint(const tgc_conv_geometry *g, int width, tgc_kernel_footprint *out) {
    int64_t x_floats, y_floats, bytes;
    out->cache_bytes = tgc_cpu_dnnl_conv_cache_bytes(g, false);
    if (out->cache_bytes > 0) out->replaces_inputs = 1u << 1;
    /* an image's X channels last, and a whole image's Y rows a slot (a bound on a piece's) */
    if (tgc_checked_mul_i64(g->channels, g->in_size, &x_floats) &&
        tgc_checked_mul_i64(g->m_count, g->out_size, &y_floats) && tgc_checked_mul_i64(y_floats, width, &y_floats) &&
        tgc_checked_add_i64(x_floats, y_floats, &bytes) && tgc_checked_mul_i64(bytes, (int64_t)sizeof(float), &bytes))
        out->workspace_bytes = bytes;
}

tgc_status tgc_cpu_conv_dnnl(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *bias,
                             float *y) {
    bool no_memory;
    const tgc_dnnl_conv *dq = tgc_cpu_dnnl_conv_cached(c, g, false, &no_memory);
    if (no_memory) return tgc_kernel_fail(c, "out of host memory for oneDNN's convolution");
    if (c->prepack_only) return TGC_OK;
    if (dq == NULL) return tgc_cpu_conv_im2col(c, g, x, tgc_kernel_in_ptr(c, 1), bias, y);
    int width = tgc_parallel_width(c->pool);
    int64_t piece_floats = tgc_dnnl_conv_piece_sums(dq), x_floats = g->channels * g->in_size, floats;
    if (!tgc_checked_mul_i64(piece_floats, width, &floats) || !tgc_checked_add_i64(floats, x_floats, &floats) ||
        floats > INT64_MAX / (int64_t)sizeof(float))
        return tgc_kernel_fail(c, "Conv's channels-last copies would pass the address space");
    float *scratch = tgc_malloc((size_t)floats * sizeof(float));
    if (scratch == NULL)
        return tgc_kernel_fail(c, "out of host memory for Conv's channels-last copies (%lld bytes)",
                               (long long)floats * (long long)sizeof(float));
    dnnl_job j = {.g = g, .dq = dq, .x_nhwc = scratch, .bias = bias, .slot_scratch = scratch + x_floats,
                  .piece_floats = piece_floats, .act = c->fused_act};
    atomic_init(&j.failed, false);
    int64_t dims[2] = {g->in_size, g->channels}, strides[2] = {1, g->in_size}; /* [C, HW] read as [HW, C] */
    for (int64_t n = 0; n < g->batch && !atomic_load(&j.failed); n++) {
        tgc_cpu_strided_copy_on(c->pool, scratch, x + n * x_floats, sizeof(float), 2, dims, strides, 0);
        j.y = y + n * g->m_count * g->out_size;
        tgc_parallel_for(c->pool, tgc_dnnl_conv_pieces(dq), dnnl_piece, &j);
    }
    tgc_free(scratch);
    return atomic_load(&j.failed) ? tgc_kernel_fail(c, "oneDNN's convolution failed") : TGC_OK;
}
