/* The cpu kernels' fast paths, each against a direct loop in double, and
 * each run both alone and split over a thread pool (results must be
 * bitwise the same: the pieces are chosen from the sizes alone):
 *   - Conv by Winograd F(2x2, 3x3) (conv_winograd*.c), whole images and in
 *     bands of tile rows: odd and even output sizes, asymmetric pads, a
 *     batch, with and without the filter cache,
 *     within the rounding of a direct float32 convolution;
 *   - Conv by im2col in tiles over the threads, and by one im2col matrix
 *     with the GEMM split over output channels (small maps);
 *   - Conv through oneDNN on channels-last copies (conv_dnnl.c): dense
 *     layers on small maps with W a constant, an absorbed activation
 *     bitwise as run after, and the geometries it leaves to the others;
 *   - GEMM split into blocks (tgc_cpu_sgemm through MatMul), and GEMV for a
 *     product with one row or one column (through Gemm, every transpose);
 *   - MaxPool's 2-D paths (rows then columns, rows), with NaN, -inf and ties, against the rule of
 *     the general path;
 *   - AveragePool's 2-D row path, both count_include_pad values, ceil_mode,
 *     dilation, uneven pads, bitwise against the rule of ONNX's reference
 *     (float sums in row-major window order);
 *   - Concat and Split cut into pieces of each part (one row; a row longer
 *     than half a piece) or of rows of the whole (rows of 1 KiB, the last
 *     piece short), empty parts, more parts than their stack holds. */
#include "tests/devices/kernel_fixture_nn.h"

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/dnnl_conv.h"
#include "devices/cpu/ew.h"
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/pool_isa.h"
#include "devices/cpu/pool_padded.h"
#include "graph/elementwise.h"
#include "support/alloc.h"

#include <cblas.h>
#include <stdlib.h>

static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

static float *random_floats(size_t n, uint32_t seed) {
    float *v = malloc(n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (size_t i = 0; i < n; i++) v[i] = lcg(&seed);
    return v;
}

/* ---- Conv ---------------------------------------------------------------------- */

typedef struct conv_shape {
    int64_t batch, channels, m_count, h, w, k, stride;
    int64_t pads[4]; /* top, left, bottom, right */
} conv_shape;

static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t p0, int64_t p1) {
    return (in + p0 + p1 - k) / stride + 1;
}

/* Runs Conv (with a bias) on shape s: pool, cache, absorbed activation and
 * workspace limit as given (NULL, 0: none); the output goes to y (numel
 * floats). */
static void run_conv_limited(const conv_shape *s, const float *x, const float *wt, const float *b,
                             tgc_thread_pool *pool, tgc_kernel_cache *cache, const tgc_fused_act *act,
                             int64_t workspace_limit, float *y) {
    int64_t oh = out_size(s->h, s->k, s->stride, s->pads[0], s->pads[2]);
    int64_t ow = out_size(s->w, s->k, s->stride, s->pads[1], s->pads[3]);
    int64_t xd[4] = {s->batch, s->channels, s->h, s->w}, wd[4] = {s->m_count, s->channels, s->k, s->k};
    int64_t bd[1] = {s->m_count}, yd[4] = {s->batch, s->m_count, oh, ow};
    nn_fixture f;
    nn_begin(&f, "Conv", "fast_paths");
    nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
    nn_in_dims(&f, TGC_FLOAT32, 4, wd, wt);
    nn_in_dims(&f, TGC_FLOAT32, 1, bd, b);
    NN_INTS(&f, "pads", s->pads[0], s->pads[1], s->pads[2], s->pads[3]);
    NN_INTS(&f, "strides", s->stride, s->stride);
    nn_out_dims(&f, TGC_FLOAT32, 4, yd);
    f.pool = pool;
    f.cache = cache;
    f.const_inputs = cache != NULL ? 0x6 : 0; /* W and B are weights */
    f.fused_act = act;
    f.workspace_limit = workspace_limit;
    CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
    int64_t n = s->batch * s->m_count * oh * ow;
    for (int64_t i = 0; i < n; i++) y[i] = nn_out_f32(&f, 0, i);
    nn_end(&f);
}

static void run_conv_act(const conv_shape *s, const float *x, const float *wt, const float *b, tgc_thread_pool *pool,
                         tgc_kernel_cache *cache, const tgc_fused_act *act, float *y) {
    run_conv_limited(s, x, wt, b, pool, cache, act, 0, y);
}

static void run_conv(const conv_shape *s, const float *x, const float *wt, const float *b, tgc_thread_pool *pool,
                     tgc_kernel_cache *cache, float *y) {
    run_conv_act(s, x, wt, b, pool, cache, NULL, y);
}

/* The largest |y - direct| relative to the sum of |products| at each
 * output (a rounding bound that holds for any summation order). */
static double conv_error(const conv_shape *s, const float *x, const float *wt, const float *b, const float *y) {
    int64_t oh = out_size(s->h, s->k, s->stride, s->pads[0], s->pads[2]);
    int64_t ow = out_size(s->w, s->k, s->stride, s->pads[1], s->pads[3]);
    double worst = 0.0;
    for (int64_t n = 0; n < s->batch; n++)
        for (int64_t m = 0; m < s->m_count; m++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double sum = b[m], mag = fabs(b[m]);
                    for (int64_t c = 0; c < s->channels; c++)
                        for (int64_t a = 0; a < s->k; a++)
                            for (int64_t e = 0; e < s->k; e++) {
                                int64_t r = i * s->stride - s->pads[0] + a, q = j * s->stride - s->pads[1] + e;
                                if (r < 0 || r >= s->h || q < 0 || q >= s->w) continue;
                                double p = (double)x[((n * s->channels + c) * s->h + r) * s->w + q] *
                                           wt[((m * s->channels + c) * s->k + a) * s->k + e];
                                sum += p;
                                mag += fabs(p);
                            }
                    double got = y[((n * s->m_count + m) * oh + i) * ow + j];
                    double rel = fabs(got - sum) / (mag + 1e-30);
                    if (rel > worst) worst = rel;
                }
    return worst;
}

/* The geometry the Conv kernel reads for shape s. */
static tgc_conv_geometry geometry_of(const conv_shape *s) {
    tgc_conv_geometry g = {.group = 1, .batch = s->batch, .channels = s->channels, .m_count = s->m_count,
                           .cg = s->channels, .has_bias = true, .kk_count = s->k * s->k, .in_size = s->h * s->w};
    g.w.n = 2;
    g.w.in[0] = s->h;
    g.w.in[1] = s->w;
    for (int a = 0; a < 2; a++) {
        g.w.kernel[a] = s->k;
        g.w.strides[a] = s->stride;
        g.w.dilations[a] = 1;
    }
    for (int i = 0; i < 4; i++) g.w.pads[i] = s->pads[i];
    g.w.out[0] = out_size(s->h, s->k, s->stride, s->pads[0], s->pads[2]);
    g.w.out[1] = out_size(s->w, s->k, s->stride, s->pads[1], s->pads[3]);
    g.out_size = g.w.out[0] * g.w.out[1];
    g.pointwise = s->k == 1 && s->stride == 1 && !(s->pads[0] | s->pads[1] | s->pads[2] | s->pads[3]);
    return g;
}

/* Conv of shape s: correct alone, bitwise the same over a 3-worker pool,
 * and (cached) bitwise the same on a first and a second run with the cache.
 * With W a session constant, a geometry tgc_cpu_conv_dnnl_applies or
 * tgc_cpu_conv_small_map_applies to runs through oneDNN (other sums
 * than without the cache): those runs must be correct too, and the same
 * bits with and without the pool. */
static void conv_check(const conv_shape *s) {
    int64_t oh = out_size(s->h, s->k, s->stride, s->pads[0], s->pads[2]);
    int64_t ow = out_size(s->w, s->k, s->stride, s->pads[1], s->pads[3]);
    size_t nx = (size_t)(s->batch * s->channels * s->h * s->w), nw = (size_t)(s->m_count * s->channels * s->k * s->k);
    size_t ny = (size_t)(s->batch * s->m_count * oh * ow);
    float *x = random_floats(nx, 11), *wt = random_floats(nw, 12), *b = random_floats((size_t)s->m_count, 13);
    float *alone = malloc(ny * sizeof *alone), *split = malloc(ny * sizeof *split);
    float *first = malloc(ny * sizeof *first), *second = malloc(ny * sizeof *second);
    CU_ASSERT_FATAL(alone && split && first && second);

    run_conv(s, x, wt, b, NULL, NULL, alone);
    double err = conv_error(s, x, wt, b, alone);
    /* Direct float32 sums (im2col) round to 1.5e-7 .. 2.5e-7 of the summed
     * magnitudes on these shapes, F(2x2, 3x3) to 0.7e-7 .. 2e-7; F(4x4,
     * 3x3) reached 2.2e-6 and fails, as any path rounding well past a
     * direct convolution's must (deep networks amplify it). */
    CU_ASSERT(err < 1e-6);
    if (getenv("TGC_TEST_VERBOSE") != NULL || err >= 1e-6)
        printf("\n  conv %lldx%lld C=%lld M=%lld: relative error %.3g\n", (long long)s->h, (long long)s->w,
               (long long)s->channels, (long long)s->m_count, err);

    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &pool), TGC_OK);
    run_conv(s, x, wt, b, pool, NULL, split);
    CU_ASSERT_EQUAL(memcmp(alone, split, ny * sizeof *alone), 0);

    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    run_conv(s, x, wt, b, pool, &cache, first);
    run_conv(s, x, wt, b, pool, &cache, second);
    tgc_conv_geometry g = geometry_of(s);
    if (tgc_cpu_conv_dnnl_applies(&g, true) || tgc_cpu_conv_small_map_applies(&g, true)) {
        double dnnl_err = conv_error(s, x, wt, b, first);
        CU_ASSERT(dnnl_err < 1e-6);
        tgc_kernel_cache_clear(&cache);
        tgc_kernel_cache_init(&cache);
        run_conv(s, x, wt, b, NULL, &cache, split); /* the oneDNN path on one thread */
        CU_ASSERT_EQUAL(memcmp(split, first, ny * sizeof *alone), 0);
    } else {
        CU_ASSERT_EQUAL(memcmp(alone, first, ny * sizeof *alone), 0);
    }
    CU_ASSERT_EQUAL(memcmp(first, second, ny * sizeof *alone), 0);
    tgc_kernel_cache_clear(&cache);
    tgc_thread_pool_free(pool);
    free(x);
    free(wt);
    free(b);
    free(alone);
    free(split);
    free(first);
    free(second);
}

static void test_winograd_shapes(void) {
    conv_shape shapes[] = {
        {1, 32, 16, 14, 14, 3, 1, {1, 1, 1, 1}},  /* 14x14 out: 49 tiles, the smallest taken */
        {2, 32, 20, 17, 19, 3, 1, {1, 0, 0, 2}},  /* odd outputs, asymmetric pads, a batch */
        {1, 32, 48, 30, 16, 3, 1, {0, 0, 0, 0}},  /* no pads */
        {1, 33, 33, 21, 23, 3, 1, {2, 2, 2, 2}},  /* pads of 2: tiles reading only padding */
        {1, 32, 24, 28, 28, 3, 1, {1, 1, 1, 1}},  /* 28x28 out */
        {2, 40, 16, 30, 33, 3, 1, {1, 2, 0, 1}},  /* ragged edges */
        {1, 64, 64, 56, 56, 3, 1, {1, 1, 1, 1}},  /* a ResNet layer-1 conv */
        {1, 32, 32, 128, 100, 3, 1, {1, 1, 1, 1}}, /* V and P past 8 MiB: bands of 10 tile rows, the last 4 */
        {1, 32, 40, 127, 99, 3, 1, {1, 0, 0, 2}},  /* bands of 9 over 126 x 99 outputs: a ragged column */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tgc_conv_geometry g = geometry_of(&shapes[i]);
        CU_ASSERT(tgc_cpu_conv_winograd_applies(&g));
        conv_check(&shapes[i]);
    }
}

/* Under a workspace limit (a device's --memory-limit, devices/memory_limit.h)
 * a whole image's V and P past it go in bands of the limit's share a
 * slot: SqueezeNet's 16 -> 64 channel layer over 55 x 55 takes 4.0 MB as
 * a whole image (V 16 x 784 tiles x 16 channels, P 16 x 784 x 64 floats,
 * by hand: 4,014,080 bytes before row padding). Limited to 512 KiB it
 * holds under 512 KiB plus a slot's transform rows, on one thread (bands
 * of 3 tile rows: 3 x 16 x 28 x (16 + 64) floats, 430,080 bytes) and on a
 * pool of 2 (a half each: 1 tile row); a slot holds at least one tile row
 * whatever the limit. The way stays Winograd and the values are those of
 * the whole image's tiles, within float32 rounding of a double loop; bit
 * for bit the whole image's where oneDNN's GEMM computes the tiles'
 * products (its sums do not depend on how many tiles a band holds;
 * OpenBLAS's, in a build without oneDNN, round differently with the
 * band's width). */
/* Whether oneDNN's GEMM takes the Winograd products of 16 -> 64 channels
 * over `tiles` tiles ([64, 16] x [16, tiles]). */
static bool onednn_multiplies(int64_t tiles) {
    float *a = calloc(64 * 16, sizeof *a), *b = calloc((size_t)(16 * tiles), sizeof *b);
    float *c = calloc((size_t)(64 * tiles), sizeof *c);
    bool taken = a && b && c && tgc_dnnl_sgemm(false, false, 64, tiles, 16, 1.0f, a, 16, b, tiles, 0.0f, c, tiles) == 1;
    free(a), free(b), free(c);
    return taken;
}

static void test_winograd_workspace_limit(void) {
    conv_shape s = {1, 16, 64, 55, 55, 3, 1, {1, 1, 1, 1}};
    tgc_conv_geometry g = geometry_of(&s);
    tgc_kernel_footprint whole = {0}, banded = {0}, banded2 = {0}, least = {0};
    tgc_cpu_conv_winograd_footprint(&g, true, 1, &whole);
    CU_ASSERT(whole.workspace_bytes >= 4014080);
    const int64_t limit = 512 << 10, rows = 64 << 10, one_row = 16 * 28 * 80 * 4; /* rows: a slot's transform rows */
    g.workspace_limit = limit;
    CU_ASSERT(tgc_cpu_conv_winograd_applies(&g));
    tgc_cpu_conv_winograd_footprint(&g, true, 1, &banded);
    tgc_cpu_conv_winograd_footprint(&g, true, 2, &banded2);
    CU_ASSERT(banded.workspace_bytes >= 430080 && banded.workspace_bytes <= limit + rows);
    CU_ASSERT(banded2.workspace_bytes >= 2 * one_row && banded2.workspace_bytes <= limit + 2 * rows);
    g.workspace_limit = 1; /* less than a tile row: one a slot */
    tgc_cpu_conv_winograd_footprint(&g, true, 1, &least);
    CU_ASSERT(least.workspace_bytes >= one_row && least.workspace_bytes <= one_row + rows);
    CU_ASSERT(banded.cache_bytes == whole.cache_bytes); /* the same filters */

    size_t nx = 16 * 55 * 55, nw = 64 * 16 * 9, ny = 64 * 55 * 55;
    float *x = random_floats(nx, 21), *wt = random_floats(nw, 22), *b = random_floats(64, 23);
    float *y_whole = malloc(ny * sizeof(float)), *y_band = malloc(ny * sizeof(float));
    float *y_pool = malloc(ny * sizeof(float));
    CU_ASSERT_FATAL(y_whole && y_band && y_pool);
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &pool), TGC_OK);
    run_conv_limited(&s, x, wt, b, NULL, NULL, NULL, 0, y_whole);
    run_conv_limited(&s, x, wt, b, NULL, NULL, NULL, limit, y_band);
    run_conv_limited(&s, x, wt, b, pool, NULL, NULL, limit, y_pool);
    CU_ASSERT(conv_error(&s, x, wt, b, y_band) < 1e-6);
    CU_ASSERT(conv_error(&s, x, wt, b, y_pool) < 1e-6);
    if (onednn_multiplies(784) && onednn_multiplies(28) && onednn_multiplies(84)) {
        CU_ASSERT_EQUAL(memcmp(y_whole, y_band, ny * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(y_whole, y_pool, ny * sizeof(float)), 0);
    } else {
        printf("\n  notice: OpenBLAS multiplies the tiles: bands within rounding, not bitwise\n");
    }
    tgc_thread_pool_free(pool);
    free(x);
    free(wt);
    free(b);
    free(y_whole);
    free(y_band);
    free(y_pool);
}

static void test_winograd_declines(void) {
    conv_shape strided = {1, 32, 32, 30, 30, 3, 2, {1, 1, 1, 1}}, small_map = {1, 64, 64, 7, 7, 3, 1, {1, 1, 1, 1}};
    conv_shape few_channels = {1, 3, 64, 56, 56, 3, 1, {1, 1, 1, 1}}, five = {1, 32, 32, 30, 30, 5, 1, {2, 2, 2, 2}};
    conv_shape *no[] = {&strided, &small_map, &few_channels, &five};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        tgc_conv_geometry g = geometry_of(no[i]);
        CU_ASSERT(!tgc_cpu_conv_winograd_applies(&g));
    }
    tgc_conv_geometry g = geometry_of(&strided);
    g.group = 2;
    g.w.strides[0] = g.w.strides[1] = 1;
    CU_ASSERT(!tgc_cpu_conv_winograd_applies(&g));
}

static void test_im2col_tiles_and_channel_split(void) {
    conv_shape shapes[] = {
        {2, 8, 24, 60, 41, 3, 1, {1, 1, 1, 1}},  /* tiles of output rows over the threads */
        {1, 5, 16, 64, 64, 7, 2, {3, 3, 3, 3}},  /* 7x7 stride 2 (on RGB, a stem takes conv_direct.c) */
        {1, 64, 96, 7, 7, 3, 1, {1, 1, 1, 1}},   /* a 7x7 map: one matrix, GEMM split by channels */
        {1, 32, 64, 20, 20, 3, 2, {1, 1, 1, 1}}, /* strided 3x3 */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) conv_check(&shapes[i]);
}

static void test_cache_needs_constant_filters(void) {
    size_t nx = 32 * 14 * 14, nw = 16 * 32 * 9;
    float *x = random_floats(nx, 1), *wt = random_floats(nw, 2), *b = random_floats(16, 3);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    /* const_inputs lacks W: no cache is built */
    int64_t xd[4] = {1, 32, 14, 14}, wd[4] = {16, 32, 3, 3}, bd[1] = {16}, yd[4] = {1, 16, 14, 14};
    nn_fixture f;
    nn_begin(&f, "Conv", "fast_paths");
    nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
    nn_in_dims(&f, TGC_FLOAT32, 4, wd, wt);
    nn_in_dims(&f, TGC_FLOAT32, 1, bd, b);
    NN_INTS(&f, "pads", 1, 1, 1, 1);
    nn_out_dims(&f, TGC_FLOAT32, 4, yd);
    f.cache = &cache;
    f.const_inputs = 0x4; /* only B */
    CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
    CU_ASSERT_EQUAL(tgc_kernel_cache_bytes(&cache, 1), 0);
    f.const_inputs = 0x6;
    CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
    /* the filters in the way's own layout (Winograd's U or oneDNN's blocks): at least W's floats */
    CU_ASSERT(tgc_kernel_cache_bytes(&cache, 1) >= 16 * 32 * 9 * sizeof(float));
    nn_end(&f);
    tgc_kernel_cache_clear(&cache);
    free(x);
    free(wt);
    free(b);
}

/* Shape s with W a constant (the node's cache) run plain, then with a Relu
 * and a Clip absorbed: each gives the bits of the activation run after. */
static void check_absorbed_acts(const conv_shape *s) {
    size_t nx = (size_t)(s->batch * s->channels * s->h * s->w), nw = (size_t)(s->m_count * s->channels * s->k * s->k);
    size_t ny = (size_t)(s->batch * s->m_count * out_size(s->h, s->k, s->stride, s->pads[0], s->pads[2]) *
                         out_size(s->w, s->k, s->stride, s->pads[1], s->pads[3]));
    float *x = random_floats(nx, 21), *wt = random_floats(nw, 22), *b = random_floats((size_t)s->m_count, 23);
    float *plain = malloc(ny * sizeof *plain), *fused = malloc(ny * sizeof *fused);
    CU_ASSERT_FATAL(plain && fused);
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(1, &pool), TGC_OK);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    run_conv(s, x, wt, b, pool, &cache, plain);
    const tgc_fused_act acts[] = {{.row = (int)tgc_ew_id(tgc_ew_find("Relu"))},
                                  {.row = (int)tgc_ew_id(tgc_ew_find("Clip")), .params = {-0.25f, 0.5f}}};
    for (size_t a = 0; a < 2; a++) {
        run_conv_act(s, x, wt, b, pool, &cache, &acts[a], fused);
        int64_t differ = 0, clipped = 0;
        for (size_t i = 0; i < ny; i++) {
            float want = a == 0 ? (plain[i] > 0.0f ? plain[i] : 0.0f)
                                : (plain[i] < -0.25f ? -0.25f : plain[i] > 0.5f ? 0.5f : plain[i]);
            differ += memcmp(&want, &fused[i], sizeof want) != 0;
            clipped += want != plain[i];
        }
        CU_ASSERT_EQUAL(differ, 0);
        CU_ASSERT(clipped > 0); /* the activation changed something */
    }
    tgc_kernel_cache_clear(&cache);
    tgc_thread_pool_free(pool);
    free(x);
    free(wt);
    free(b);
    free(plain);
    free(fused);
}

/* ---- Conv through oneDNN on channels-last copies --------------------------------------- */

/* Dense layers on small maps (DenseNet-121's 128 -> 32 3x3 on 14x14 and
 * 7x7, a strided 3x3, a 2x2 stride-2 downsampling, uneven pads, a batch):
 * with W a constant they take oneDNN's kernel when it is there, within the
 * rounding of a float32 sum, the same bits over a pool as alone (conv_check);
 * and an absorbed Relu or Clip gives the bits of the activation run after. */
static void test_dnnl_small_maps(void) {
    conv_shape shapes[] = {
        {1, 128, 32, 14, 14, 3, 1, {1, 1, 1, 1}}, /* Winograd's GEMMs too thin: 32 x 128 x 49 */
        {2, 128, 32, 7, 7, 3, 1, {1, 1, 1, 1}},   /* im2col's map: 49 positions */
        {1, 48, 40, 23, 17, 3, 2, {1, 0, 2, 1}},  /* strided, uneven pads */
        {1, 64, 64, 20, 20, 2, 2, {0, 0, 0, 0}},  /* a ConvNeXt-style downsampling */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tgc_conv_geometry g = geometry_of(&shapes[i]);
        CU_ASSERT_EQUAL(tgc_cpu_conv_dnnl_applies(&g, true), tgc_dnnl_conv_available());
        CU_ASSERT(!tgc_cpu_conv_dnnl_applies(&g, false)); /* W computed: its layout cannot be kept */
        conv_check(&shapes[i]);
    }
    check_absorbed_acts(&shapes[1]);
}

/* Layers on small maps take the transposed product over the output
 * channels when W is a constant and oneDNN is there, within the rounding
 * of a float32 sum and the same bits over a pool as alone (conv_check):
 *   - pointwise ones (RegNetX's 672 -> 672 on 7x7, cut into 4 pieces of
 *     output channels, the last shorter; one piece; a batch; 5x5; 64
 *     positions, the most), an absorbed Relu or Clip with the bits of the
 *     activation run after;
 *   - any other one group layer whose weights are too large for oneDNN's
 *     convolution, on its receptive fields channels last: ResNet's 3x3 on
 *     7x7 (its padding read as zeros), a 3x3 at stride 2 over a batch, a
 *     strided 1x1 (ResNet's downsampling) and a 3x3 at stride 2 onto 10x10
 *     (100 positions: up to 256 for kernels past 1x1); a 3x3 at stride 2
 *     onto 12x12, whose product runs in blocks of positions.
 * 65 positions of a 1x1, 257 of a 3x3, thin layers (the direct path's),
 * Winograd's and computed weights do not. */
static void test_small_maps(void) {
    conv_shape shapes[] = {
        {1, 672, 672, 7, 7, 1, 1, {0, 0, 0, 0}}, /* 22M multiply-adds: pieces of 176, 160, 176, 160 channels */
        {1, 96, 80, 7, 7, 1, 1, {0, 0, 0, 0}},   /* one piece */
        {2, 64, 200, 8, 8, 1, 1, {0, 0, 0, 0}},  /* a batch, 64 positions */
        {1, 300, 33, 5, 5, 1, 1, {0, 0, 0, 0}},  /* odd sizes */
        {1, 256, 256, 7, 7, 3, 1, {1, 1, 1, 1}}, /* 2.3 MB of weights: past oneDNN's convolution */
        {2, 256, 232, 13, 13, 3, 2, {1, 1, 1, 1}}, /* 13x13 -> 7x7, a batch */
        {1, 256, 300, 14, 14, 1, 2, {0, 0, 0, 0}}, /* 14x14 -> 7x7 */
        {1, 232, 256, 19, 19, 3, 2, {1, 0, 0, 1}}, /* 19x19 -> 9x10, one pad on each axis */
        {1, 256, 232, 23, 23, 3, 2, {1, 1, 1, 1}}, /* 144 positions: 2 pieces of channels, 2 blocks of 72 rows */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tgc_conv_geometry g = geometry_of(&shapes[i]);
        CU_ASSERT(!tgc_cpu_conv_dnnl_applies(&g, true));
        CU_ASSERT_EQUAL(tgc_cpu_conv_small_map_applies(&g, true), tgc_packed_gemm_available());
        CU_ASSERT(!tgc_cpu_conv_small_map_applies(&g, false));
        conv_check(&shapes[i]);
    }
    check_absorbed_acts(&shapes[0]);
    conv_shape wider = {1, 64, 64, 5, 13, 1, 1, {0, 0, 0, 0}}, thin = {1, 48, 64, 7, 7, 1, 1, {0, 0, 0, 0}};
    conv_shape wide3 = {1, 256, 256, 33, 33, 3, 2, {1, 1, 1, 1}}, wino = {1, 256, 256, 14, 14, 3, 1, {1, 1, 1, 1}};
    tgc_conv_geometry gw = geometry_of(&wider), gt = geometry_of(&thin), g3 = geometry_of(&wide3);
    tgc_conv_geometry gwino = geometry_of(&wino);
    CU_ASSERT(!tgc_cpu_conv_small_map_applies(&gw, true)); /* 65 positions */
    CU_ASSERT(!tgc_cpu_conv_small_map_applies(&g3, true)); /* 17x17 = 289 */
    CU_ASSERT(tgc_cpu_conv_winograd_applies(&gwino));
    CU_ASSERT(!tgc_cpu_conv_small_map_applies(&gwino, true));
    CU_ASSERT(tgc_cpu_conv_direct_applies(&gt)); /* 48 channels: the direct path first */
}

/* An n-D Conv (one group, 1 to 3 spatial axes, batch 1) for the small-map
 * tests: X [1, c, in..], W [m, c, k..], B [m], per-axis strides,
 * dilations and pads (begins, then ends). */
typedef struct conv_nd {
    int n;
    int64_t c, m, in[3], k[3], stride[3], dilation[3], pads[6], out[3];
} conv_nd;

static int64_t nd_count(const int64_t *d, int n) {
    int64_t v = 1;
    for (int a = 0; a < n; a++) v *= d[a];
    return v;
}

/* y from the Conv kernel (W and B session constants, a fresh cache: the
 * first run packs), on pool (NULL: the caller's thread). */
static void run_conv_nd(const conv_nd *s, const float *x, const float *w, const float *b, tgc_thread_pool *pool,
                        float *y) {
    int64_t xd[5] = {1, s->c}, wd[5] = {s->m, s->c}, bd[1] = {s->m}, yd[5] = {1, s->m}, pads[6];
    for (int a = 0; a < s->n; a++) xd[2 + a] = s->in[a], wd[2 + a] = s->k[a], yd[2 + a] = s->out[a];
    for (int i = 0; i < 2 * s->n; i++) pads[i] = s->pads[i];
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    nn_fixture f;
    nn_begin(&f, "Conv", "fast_paths");
    nn_in_dims(&f, TGC_FLOAT32, 2 + s->n, xd, x);
    nn_in_dims(&f, TGC_FLOAT32, 2 + s->n, wd, w);
    nn_in_dims(&f, TGC_FLOAT32, 1, bd, b);
    nn_ints(&f, "pads", pads, (size_t)(2 * s->n));
    nn_ints(&f, "strides", s->stride, (size_t)s->n);
    nn_ints(&f, "dilations", s->dilation, (size_t)s->n);
    nn_out_dims(&f, TGC_FLOAT32, 2 + s->n, yd);
    f.pool = pool;
    f.cache = &cache;
    f.const_inputs = 0x6;
    CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
    for (int64_t i = 0, n = s->m * nd_count(s->out, s->n); i < n; i++) y[i] = nn_out_f32(&f, 0, i);
    nn_end(&f);
    tgc_kernel_cache_clear(&cache);
}

/* The largest |y - direct sum| relative to the sum of |products| of an
 * output, the direct sums in double over every tap inside the input. */
static double conv_nd_error(const conv_nd *s, const float *x, const float *w, const float *b, const float *y) {
    int64_t outs = nd_count(s->out, s->n), taps = nd_count(s->k, s->n), in_size = nd_count(s->in, s->n);
    double worst = 0;
    for (int64_t m = 0; m < s->m; m++)
        for (int64_t p = 0; p < outs; p++) {
            int64_t o[3], q = p;
            for (int a = s->n - 1; a >= 0; a--) o[a] = q % s->out[a], q /= s->out[a];
            double sum = b[m], mag = fabs(b[m]);
            for (int64_t t = 0; t < taps; t++) {
                int64_t kk[3], r = t, at = 0;
                bool inside = true;
                for (int a = s->n - 1; a >= 0; a--) kk[a] = r % s->k[a], r /= s->k[a];
                for (int a = 0; a < s->n; a++) {
                    int64_t i = o[a] * s->stride[a] - s->pads[a] + kk[a] * s->dilation[a];
                    inside = inside && i >= 0 && i < s->in[a];
                    at = at * s->in[a] + i;
                }
                for (int64_t c = 0; inside && c < s->c; c++) {
                    double v = (double)w[(m * s->c + c) * taps + t] * x[c * in_size + at];
                    sum += v, mag += fabs(v);
                }
            }
            double rel = fabs(y[m * outs + p] - sum) / (mag + 1e-30);
            if (rel > worst) worst = rel;
        }
    return worst;
}

/* Small maps of 1 and 3 spatial axes (the direct path's and oneDNN's
 * convolution's only 2): their receptive fields are unrolled over every
 * axis, dilation and padding among them; within float32 rounding of the
 * direct sums, the same bits over a pool as alone. */
static void test_small_maps_nd(void) {
    conv_nd shapes[] = {
        {.n = 1, .c = 256, .m = 200, .in = {40}, .k = {3}, .stride = {1}, .dilation = {2}, .pads = {2, 2}},
        {.n = 3, .c = 64, .m = 96, .in = {5, 6, 7}, .k = {3, 3, 3}, .stride = {2, 2, 2}, .dilation = {1, 1, 1},
         .pads = {1, 1, 1, 1, 0, 1}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        conv_nd *s = &shapes[i];
        tgc_conv_geometry g = {.group = 1, .batch = 1, .channels = s->c, .m_count = s->m, .cg = s->c,
                               .has_bias = true};
        g.w.n = s->n;
        for (int a = 0; a < s->n; a++) {
            s->out[a] = (s->in[a] + s->pads[a] + s->pads[s->n + a] - s->dilation[a] * (s->k[a] - 1) - 1) /
                            s->stride[a] + 1;
            g.w.in[a] = s->in[a], g.w.out[a] = s->out[a], g.w.kernel[a] = s->k[a];
            g.w.strides[a] = s->stride[a], g.w.dilations[a] = s->dilation[a];
            g.w.pads[a] = s->pads[a], g.w.pads[s->n + a] = s->pads[s->n + a];
        }
        g.in_size = nd_count(s->in, s->n), g.out_size = nd_count(s->out, s->n), g.kk_count = nd_count(s->k, s->n);
        CU_ASSERT(!tgc_cpu_conv_direct_applies(&g) && !tgc_cpu_conv_winograd_applies(&g));
        CU_ASSERT_EQUAL(tgc_cpu_conv_small_map_applies(&g, true), tgc_packed_gemm_available());
        size_t nx = (size_t)(s->c * g.in_size), nw = (size_t)(s->m * s->c * g.kk_count);
        size_t ny = (size_t)(s->m * g.out_size);
        float *x = random_floats(nx, 21), *w = random_floats(nw, 22), *b = random_floats((size_t)s->m, 23);
        float *alone = malloc(ny * sizeof *alone), *split = malloc(ny * sizeof *split);
        CU_ASSERT_FATAL(alone != NULL && split != NULL);
        tgc_thread_pool *pool = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &pool), TGC_OK);
        run_conv_nd(s, x, w, b, NULL, alone);
        run_conv_nd(s, x, w, b, pool, split);
        double err = conv_nd_error(s, x, w, b, alone);
        CU_ASSERT(err < 1e-6);
        if (err >= 1e-6) printf("\n  %d-D conv: relative error %.3g\n", s->n, err);
        CU_ASSERT_EQUAL(memcmp(alone, split, ny * sizeof *alone), 0);
        tgc_thread_pool_free(pool);
        free(x), free(w), free(b), free(alone), free(split);
    }
}

/* One node's cache across runs whose shapes change its way: oneDNN's
 * weights built on 14x14, Winograd on 56x56 (its GEMMs no longer thin)
 * must not take them for its filters, nor the reverse; each run gives the
 * bits of its way run alone (Winograd) or of the first run (oneDNN). */
static void test_way_changes_with_shapes(void) {
    conv_shape small = {1, 128, 32, 14, 14, 3, 1, {1, 1, 1, 1}}, large = {1, 128, 32, 56, 56, 3, 1, {1, 1, 1, 1}};
    tgc_conv_geometry gs = geometry_of(&small), gl = geometry_of(&large);
    CU_ASSERT(!tgc_cpu_conv_dnnl_applies(&gl, true));
    CU_ASSERT(tgc_cpu_conv_winograd_applies(&gl));
    size_t nx = 128 * 56 * 56, nw = 32 * 128 * 9, ns = 32 * 14 * 14, nl = 32 * 56 * 56;
    float *x = random_floats(nx, 31), *wt = random_floats(nw, 32), *b = random_floats(32, 33);
    float *s1 = malloc(ns * sizeof *s1), *s2 = malloc(ns * sizeof *s2), *l1 = malloc(nl * sizeof *l1);
    float *l_alone = malloc(nl * sizeof *l_alone);
    CU_ASSERT_FATAL(s1 && s2 && l1 && l_alone);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    run_conv(&small, x, wt, b, NULL, &cache, s1);
    run_conv(&large, x, wt, b, NULL, &cache, l1);
    run_conv(&large, x, wt, b, NULL, NULL, l_alone);
    run_conv(&small, x, wt, b, NULL, &cache, s2);
    CU_ASSERT_EQUAL(memcmp(l1, l_alone, nl * sizeof *l1), 0);
    CU_ASSERT_EQUAL(memcmp(s1, s2, ns * sizeof *s1), 0);
    CU_ASSERT(conv_error(&small, x, wt, b, s2) < 1e-6);
    CU_ASSERT_EQUAL(tgc_cpu_conv_dnnl_applies(&gs, true), tgc_dnnl_conv_available());
    tgc_kernel_cache_clear(&cache);
    free(x);
    free(wt);
    free(b);
    free(s1);
    free(s2);
    free(l1);
    free(l_alone);
}

/* oneDNN's convolution made for a dilated window, whose pieces of rows
 * each pad differently (more shapes than it keeps primitives for): cut
 * into fewer pieces rather than one, and the bytes the memory plan
 * predicts (tgc_dnnl_conv_bytes) are those it holds; a small depthwise
 * layer cut in pieces (its multiply-adds are dearer than a dense one's);
 * a layer whose last piece oneDNN would lay the weights out for
 * differently, cut in fewer pieces. */
static void test_dnnl_pieces_and_bytes(void) {
    if (!tgc_dnnl_conv_available()) return;
    conv_shape s = {1, 128, 128, 20, 20, 3, 1, {6, 6, 6, 6}};
    tgc_conv_geometry g = geometry_of(&s);
    g.w.dilations[0] = g.w.dilations[1] = 6;
    g.w.out[0] = g.w.out[1] = 20;
    g.out_size = 400;
    float *wt = random_floats(128 * 128 * 9, 41);
    size_t bytes = 0;
    bool no_memory = true;
    tgc_dnnl_conv *q = tgc_dnnl_conv_create(&g, TGC_FLOAT32, wt, 1, NULL, TGC_DNNL_CONV_BIAS, &bytes, &no_memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_FALSE(no_memory);
    CU_ASSERT(tgc_dnnl_conv_pieces(q) >= 2); /* 59M multiply-adds, cut into 10 pieces of 6 shapes first */
    CU_ASSERT_EQUAL(tgc_dnnl_conv_bytes(&g, TGC_FLOAT32, 1, TGC_DNNL_CONV_BIAS), (int64_t)bytes);
    int64_t rows = 0;
    for (int64_t i = 0; i < tgc_dnnl_conv_pieces(q); i++) {
        int64_t r0, r1;
        tgc_dnnl_conv_piece_rows(q, i, &r0, &r1);
        CU_ASSERT_EQUAL(r0, rows); /* the pieces tile the rows in order */
        rows = r1;
    }
    CU_ASSERT_EQUAL(rows, 20);
    tgc_dnnl_conv_free(q);
    free(wt);

    /* a depthwise layer of 0.5M multiply-adds (MobileNetV2's 14x14 ones):
     * split for a second thread, where a dense one as small stays whole */
    conv_shape dw = {1, 224, 224, 14, 14, 3, 1, {1, 1, 1, 1}};
    tgc_conv_geometry gd = geometry_of(&dw);
    gd.group = 224;
    gd.cg = 1;
    float *wd = random_floats(224 * 9, 42);
    q = tgc_dnnl_conv_create(&gd, TGC_FLOAT32, wd, 1, NULL, TGC_DNNL_CONV_BIAS, &bytes, &no_memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT(tgc_dnnl_conv_pieces(q) >= 2);
    /* run by oneDNN's direct depthwise kernel (F32_DW_IMPL), its pieces
     * against a loop in double over the NHWC image */
    CU_ASSERT_NSTRING_EQUAL(tgc_dnnl_conv_impl(q), "jit_dw", 6);
    float *xd = random_floats(14 * 14 * 224, 44), *bd = random_floats(224, 45);
    float *yd = malloc((size_t)tgc_dnnl_conv_piece_sums(q) * sizeof *yd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yd);
    int64_t bad = 0;
    for (int64_t i = 0; i < tgc_dnnl_conv_pieces(q); i++) {
        int64_t r0, r1;
        tgc_dnnl_conv_piece_rows(q, i, &r0, &r1);
        CU_ASSERT(tgc_dnnl_conv_run_piece(q, i, xd, 0, bd, yd));
        for (int64_t r = r0; r < r1; r++)
            for (int64_t c = 0; c < 14; c++)
                for (int64_t ch = 0; ch < 224; ch++) {
                    double sum = bd[ch], mag = fabs(bd[ch]);
                    for (int64_t ky = 0; ky < 3; ky++)
                        for (int64_t kx = 0; kx < 3; kx++) {
                            int64_t iy = r + ky - 1, ix = c + kx - 1;
                            if (iy < 0 || iy >= 14 || ix < 0 || ix >= 14) continue;
                            double p = (double)xd[(iy * 14 + ix) * 224 + ch] * wd[ch * 9 + ky * 3 + kx];
                            sum += p, mag += fabs(p);
                        }
                    bad += fabs(yd[((r - r0) * 14 + c) * 224 + ch] - sum) > 1e-6 * mag + 1e-30;
                }
    }
    CU_ASSERT_EQUAL(bad, 0);
    tgc_dnnl_conv_free(q);
    free(wd), free(xd), free(bd), free(yd);

    /* AlexNet's 5x5 layer (64 -> 192 on 27x27, 224M multiply-adds): cut in
     * pieces of 2 rows, its last of one row has no kernel for the others'
     * weights layout; fewer, larger pieces, not one */
    conv_shape five = {1, 64, 192, 27, 27, 5, 1, {2, 2, 2, 2}};
    tgc_conv_geometry g5 = geometry_of(&five);
    float *w5 = random_floats(192 * 64 * 25, 43);
    q = tgc_dnnl_conv_create(&g5, TGC_FLOAT32, w5, 1, NULL, TGC_DNNL_CONV_BIAS, &bytes, &no_memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT(tgc_dnnl_conv_pieces(q) >= 2);
    CU_ASSERT_EQUAL(tgc_dnnl_conv_bytes(&g5, TGC_FLOAT32, 1, TGC_DNNL_CONV_BIAS), (int64_t)bytes);
    tgc_dnnl_conv_free(q);
    free(w5);
}

/* Where tgc's own ways stay: 1x1 (a GEMM on X as it lies), groups, weights
 * past 2 MiB on fewer than 256 outputs (streamed from memory either way;
 * oneDNN's layout was slower in ResNet-18), Winograd with GEMMs of 1M
 * multiply-adds or more or with fewer than 32 channels, maps past 28x28
 * for the rest, and layers under 1M multiply-adds. */
static void test_dnnl_declines(void) {
    conv_shape pointwise_s2 = {1, 256, 512, 14, 14, 1, 2, {0, 0, 0, 0}};
    conv_shape heavy = {1, 512, 512, 7, 7, 3, 1, {1, 1, 1, 1}};
    conv_shape wide_winograd = {1, 256, 256, 14, 14, 3, 1, {1, 1, 1, 1}};
    conv_shape big_map = {1, 64, 128, 112, 112, 3, 2, {1, 1, 1, 1}}, tiny = {1, 8, 16, 4, 4, 3, 1, {1, 1, 1, 1}};
    conv_shape narrow_winograd = {1, 16, 16, 32, 32, 3, 1, {1, 1, 1, 1}}; /* thin GEMMs, but 16 channels */
    const conv_shape *no[] = {&pointwise_s2, &heavy, &wide_winograd, &big_map, &tiny, &narrow_winograd};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        tgc_conv_geometry g = geometry_of(no[i]);
        CU_ASSERT(!tgc_cpu_conv_dnnl_applies(&g, true));
    }
    /* weights past 2 MiB taken where each serves 256 outputs or more (2.4 MB over 20x20) */
    conv_shape heavy_wide = {1, 256, 256, 40, 40, 3, 2, {1, 1, 1, 1}};
    tgc_conv_geometry hw = geometry_of(&heavy_wide);
    CU_ASSERT_EQUAL(tgc_cpu_conv_dnnl_applies(&hw, true), tgc_dnnl_conv_available());
    /* and where a batch makes each serve as many: 16 images of 7x7 */
    conv_shape heavy_batch = {16, 512, 512, 7, 7, 3, 1, {1, 1, 1, 1}};
    tgc_conv_geometry hb = geometry_of(&heavy_batch);
    CU_ASSERT_EQUAL(tgc_cpu_conv_dnnl_applies(&hb, true), tgc_dnnl_conv_available());
    conv_shape dense = {1, 128, 32, 7, 7, 3, 1, {1, 1, 1, 1}};
    tgc_conv_geometry g = geometry_of(&dense);
    g.group = 2;
    g.cg = 64;
    CU_ASSERT(!tgc_cpu_conv_dnnl_applies(&g, true));
}

/* ---- GEMM split ------------------------------------------------------------------- */

/* MatMul [m, k] x [k, n] against a loop in double, alone and over a pool
 * bit for bit; one row (m 1) also with B a weight in a cache, twice (B in
 * column panels, built then read), bit for bit too. */
static void matmul_check(int64_t m, int64_t k, int64_t n) {
    float *a = random_floats((size_t)(m * k), 5), *b = random_floats((size_t)(k * n), 6);
    int64_t ad[2] = {m, k}, bd[2] = {k, n}, yd[2] = {m, n};
    float *alone = malloc((size_t)(m * n) * sizeof *alone);
    CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    for (int pass = 0; pass < (m == 1 ? 4 : 2); pass++) {
        nn_fixture f;
        nn_begin(&f, "MatMul", "fast_paths");
        nn_in_dims(&f, TGC_FLOAT32, 2, ad, a);
        nn_in_dims(&f, TGC_FLOAT32, 2, bd, b);
        nn_out_dims(&f, TGC_FLOAT32, 2, yd);
        f.pool = pass == 0 ? NULL : pool;
        f.cache = pass >= 2 ? &cache : NULL;
        f.const_inputs = pass >= 2 ? 1u << 1 : 0;
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        if (pass >= 2) CU_ASSERT(f.impl != NULL && strcmp(f.impl, "gemv on column panels") == 0);
        double worst = 0.0;
        int64_t differ = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float got = nn_out_f32(&f, 0, i * n + j);
                if (pass == 0) {
                    double sum = 0.0, mag = 0.0;
                    for (int64_t t = 0; t < k; t++) {
                        sum += (double)a[i * k + t] * b[t * n + j];
                        mag += fabs((double)a[i * k + t] * b[t * n + j]);
                    }
                    double rel = fabs(got - sum) / (mag + 1e-30);
                    if (rel > worst) worst = rel;
                    alone[i * n + j] = got;
                } else {
                    differ += memcmp(&got, &alone[i * n + j], sizeof got) != 0;
                }
            }
        CU_ASSERT(worst < 1e-5);
        CU_ASSERT_EQUAL(differ, 0);
        nn_end(&f);
    }
    tgc_kernel_cache_clear(&cache);
    tgc_thread_pool_free(pool);
    free(a);
    free(b);
    free(alone);
}

static void test_gemm_split(void) {
    matmul_check(300, 256, 200); /* split along M (the longer side) */
    matmul_check(64, 784, 512);  /* along N */
    matmul_check(33, 1000, 100); /* blocks with a ragged last one */
    matmul_check(1, 700, 1000);  /* one row: the update form, B in column panels with a cache */
}

/* Gemm Y = alpha op(A) op(B) + beta C with C [N] broadcast, for each
 * transpose, against a direct loop: with m == 1 or n == 1 the kernel
 * takes a matrix-vector product, and a large one is split into pieces.
 * With B a weight and a cache (`cache` non-NULL: run twice, the second
 * reading the cache), one row by B as it lies reads B in column panels. */
static void gemm_check_cached(int64_t m, int64_t k, int64_t n, bool ta, bool tb, tgc_kernel_cache *cache) {
    float *a = random_floats((size_t)(m * k), 31), *b = random_floats((size_t)(k * n), 32);
    float *cv = random_floats((size_t)n, 33);
    int64_t ad[2] = {ta ? k : m, ta ? m : k}, bd[2] = {tb ? n : k, tb ? k : n}, cd[1] = {n}, yd[2] = {m, n};
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    for (int run = 0; run < (cache != NULL ? 2 : 1); run++) {
        nn_fixture f;
        nn_begin(&f, "Gemm", "fast_paths");
        f.cache = cache;
        f.const_inputs = cache != NULL ? 1u << 1 : 0;
        nn_in_dims(&f, TGC_FLOAT32, 2, ad, a);
        nn_in_dims(&f, TGC_FLOAT32, 2, bd, b);
        nn_in_dims(&f, TGC_FLOAT32, 1, cd, cv);
        nn_int(&f, "transA", ta);
        nn_int(&f, "transB", tb);
        nn_float(&f, "alpha", 0.75);
        nn_float(&f, "beta", -1.5);
        nn_out_dims(&f, TGC_FLOAT32, 2, yd);
        f.pool = pool;
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        bool panels = cache != NULL && m == 1 && !tb && tgc_cpu_gemv_panels_fit(n);
        CU_ASSERT_EQUAL(f.impl != NULL && strcmp(f.impl, "gemv on column panels") == 0, panels);
        double worst = 0.0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0.0, mag = 0.0;
                for (int64_t t = 0; t < k; t++) {
                    double p = (double)(ta ? a[t * m + i] : a[i * k + t]) * (tb ? b[j * k + t] : b[t * n + j]);
                    sum += p;
                    mag += fabs(p);
                }
                double want = 0.75 * sum - 1.5 * cv[j];
                double rel = fabs(nn_out_f32(&f, 0, i * n + j) - want) / (0.75 * mag + 1.5 * fabs(cv[j]) + 1e-30);
                if (rel > worst) worst = rel;
            }
        CU_ASSERT(worst < 1e-5);
        nn_end(&f);
    }
    tgc_thread_pool_free(pool);
    free(a);
    free(b);
    free(cv);
}

/* The update form (x times the rows of a matrix) over more columns than
 * it sums at once (4096): against a loop in double, and each output's bits
 * the same whether the columns come in one call or in two pieces cut at
 * an odd column, with beta 0 and beta reading y. */
static void test_gemv_update_wide(void) {
    const int64_t k = 37, n = 9000, cut = 4099;
    float *mat = random_floats((size_t)(k * n), 41), *x = random_floats((size_t)k, 42);
    float *y0 = random_floats((size_t)n, 43), *whole = malloc((size_t)n * sizeof *whole);
    float *parts = malloc((size_t)n * sizeof *parts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    CU_ASSERT_PTR_NOT_NULL_FATAL(parts);
    for (int b = 0; b < 2; b++) {
        float beta = b == 0 ? 0.0f : 0.5f;
        memcpy(whole, y0, (size_t)n * sizeof *whole);
        memcpy(parts, y0, (size_t)n * sizeof *parts);
        tgc_cpu_gemv_update(n, k, 2.0f, mat, n, x, beta, whole);
        tgc_cpu_gemv_update(cut, k, 2.0f, mat, n, x, beta, parts);
        tgc_cpu_gemv_update(n - cut, k, 2.0f, mat + cut, n, x, beta, parts + cut);
        CU_ASSERT(memcmp(whole, parts, (size_t)n * sizeof *whole) == 0);
        int bad = 0;
        for (int64_t j = 0; j < n; j++) {
            double sum = 0.0, mag = 0.0;
            for (int64_t t = 0; t < k; t++) {
                sum += (double)x[t] * mat[t * n + j];
                mag += fabs((double)x[t] * mat[t * n + j]);
            }
            double want = 2.0 * sum + beta * (double)y0[j];
            bad += fabs(whole[j] - want) > 1e-6 * (2.0 * mag + fabs(beta * y0[j])) + 1e-30;
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    free(mat), free(x), free(y0), free(whole), free(parts);
}

/* The dot form (the rows of a matrix against x), on rows read one at a
 * time (k below 4096) and four at a time (k from 4096, an odd tail of k
 * included): against a loop in double, and each output's bits the same
 * whether the rows come in one call or in two pieces cut at an odd row,
 * with beta 0 and beta reading y, y strided. */
static void test_gemv_dot_rows(void) {
    const int64_t ks[2] = {999, 4100}, n = 11, cut = 3, incy = 2;
    for (int ki = 0; ki < 2; ki++) {
        int64_t k = ks[ki], ld = k + 5;
        float *mat = random_floats((size_t)(n * ld), 51), *x = random_floats((size_t)k, 52);
        float *y0 = random_floats((size_t)(n * incy), 53), *whole = malloc((size_t)(n * incy) * sizeof *whole);
        float *parts = malloc((size_t)(n * incy) * sizeof *parts);
        CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
        CU_ASSERT_PTR_NOT_NULL_FATAL(parts);
        for (int b = 0; b < 2; b++) {
            float beta = b == 0 ? 0.0f : 0.5f;
            memcpy(whole, y0, (size_t)(n * incy) * sizeof *whole);
            memcpy(parts, y0, (size_t)(n * incy) * sizeof *parts);
            tgc_cpu_gemv_dot(n, k, 2.0f, mat, ld, x, beta, whole, incy);
            tgc_cpu_gemv_dot(cut, k, 2.0f, mat, ld, x, beta, parts, incy);
            tgc_cpu_gemv_dot(n - cut, k, 2.0f, mat + cut * ld, ld, x, beta, parts + cut * incy, incy);
            CU_ASSERT(memcmp(whole, parts, (size_t)(n * incy) * sizeof *whole) == 0);
            int bad = 0;
            for (int64_t j = 0; j < n; j++) {
                double sum = 0.0, mag = 0.0;
                for (int64_t t = 0; t < k; t++) {
                    sum += (double)mat[j * ld + t] * x[t];
                    mag += fabs((double)mat[j * ld + t] * x[t]);
                }
                double want = 2.0 * sum + beta * (double)y0[j * incy];
                bad += fabs(whole[j * incy] - want) > 1e-6 * (2.0 * mag + fabs(beta * y0[j * incy])) + 1e-30;
                bad += whole[j * incy + 1] != y0[j * incy + 1]; /* between the strided outputs: untouched */
            }
            CU_ASSERT_EQUAL(bad, 0);
        }
        free(mat), free(x), free(y0), free(whole), free(parts);
    }
}

static void gemm_check(int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
    gemm_check_cached(m, k, n, ta, tb, NULL);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    gemm_check_cached(m, k, n, ta, tb, &cache);
    tgc_kernel_cache_clear(&cache);
}

/* The update form on B packed in column panels: for widths of whole
 * blocks, of a short last block and under one block, and k of 1 and odd,
 * each output's bits those of tgc_cpu_gemv_update on B as it lies, whole
 * and in pieces cut at a block, with beta 0 and beta reading y; the
 * packing's padding zeros. (The update form itself is checked against
 * double above.) */
static void test_gemv_panels(void) {
    /* padding at most n / 16 columns: multiples of 16 and wide products, not narrow pieces */
    CU_ASSERT(tgc_cpu_gemv_panels_fit(16) && tgc_cpu_gemv_panels_fit(144) && tgc_cpu_gemv_panels_fit(280));
    CU_ASSERT(tgc_cpu_gemv_panels_fit(1000) && tgc_cpu_gemv_panels_fit(241));
    CU_ASSERT(!tgc_cpu_gemv_panels_fit(2) && !tgc_cpu_gemv_panels_fit(100) && !tgc_cpu_gemv_panels_fit(135));
    CU_ASSERT(!tgc_cpu_gemv_panels_fit(0));
    const int64_t ns[5] = {1, 17, 64, 200, 1000}, ks[3] = {1, 7, 300};
    for (int ni = 0; ni < 5; ni++)
        for (int ki = 0; ki < 3; ki++) {
            int64_t n = ns[ni], k = ks[ki], ld = n + 3, floats = tgc_cpu_gemv_panels_floats(n, k);
            float *mat = random_floats((size_t)(k * ld), 61), *x = random_floats((size_t)k, 62);
            float *y0 = random_floats((size_t)n, 63), *want = malloc((size_t)n * sizeof *want);
            float *got = malloc((size_t)n * sizeof *got), *panels = malloc((size_t)floats * sizeof *panels);
            CU_ASSERT_PTR_NOT_NULL_FATAL(want);
            CU_ASSERT_PTR_NOT_NULL_FATAL(got);
            CU_ASSERT_PTR_NOT_NULL_FATAL(panels);
            CU_ASSERT_EQUAL(floats, (n + 15) / 16 * 16 * k);
            tgc_cpu_gemv_panels_pack(n, k, mat, ld, 1, panels);
            /* packed from B^T [n, k] as it lies (ld_k 1, ld_n k + 2): the same panels */
            float *bt = malloc((size_t)(n * (k + 2)) * sizeof *bt), *from_t = malloc((size_t)floats * sizeof *from_t);
            CU_ASSERT_PTR_NOT_NULL_FATAL(bt);
            CU_ASSERT_PTR_NOT_NULL_FATAL(from_t);
            for (int64_t j = 0; j < n; j++)
                for (int64_t t = 0; t < k; t++) bt[j * (k + 2) + t] = mat[t * ld + j];
            tgc_cpu_gemv_panels_pack(n, k, bt, 1, k + 2, from_t);
            CU_ASSERT(memcmp(from_t, panels, (size_t)floats * sizeof *panels) == 0);
            free(bt), free(from_t);
            int64_t last = n / TGC_GEMV_PANEL * TGC_GEMV_PANEL, lw = (n - last + 15) / 16 * 16, pad = 0;
            for (int64_t t = 0; t < k; t++) /* the last block's columns past n */
                for (int64_t j = n - last; j < lw; j++) pad += panels[last * k + t * lw + j] != 0.0f;
            CU_ASSERT_EQUAL(pad, 0);
            for (int bi = 0; bi < 2; bi++) {
                float beta = bi == 0 ? 0.0f : 0.5f;
                memcpy(want, y0, (size_t)n * sizeof *want);
                tgc_cpu_gemv_update(n, k, 2.0f, mat, ld, x, beta, want);
                memcpy(got, y0, (size_t)n * sizeof *got);
                tgc_cpu_gemv_panels(n, k, 2.0f, panels, x, beta, got);
                CU_ASSERT(memcmp(got, want, (size_t)n * sizeof *got) == 0);
                int64_t cut = n > TGC_GEMV_PANEL ? TGC_GEMV_PANEL : 0;
                memcpy(got, y0, (size_t)n * sizeof *got);
                tgc_cpu_gemv_panels(cut, k, 2.0f, panels, x, beta, got);
                tgc_cpu_gemv_panels(n - cut, k, 2.0f, panels + cut * k, x, beta, got + cut);
                CU_ASSERT(memcmp(got, want, (size_t)n * sizeof *got) == 0);
            }
            free(mat), free(x), free(y0), free(want), free(got), free(panels);
        }
}

static void test_gemv(void) {
    for (int t = 0; t < 4; t++) {
        bool ta = t & 1, tb = t & 2;
        gemm_check(1, 2048, 1000, ta, tb); /* a classifier on one image: split into pieces */
        gemm_check(1, 7, 5, ta, tb);
        gemm_check(300, 900, 1, ta, tb);   /* a column */
        gemm_check(1, 1, 1, ta, tb);
    }
    gemm_check(1, 16, 40000, false, false); /* pieces wider than the update form sums at once */
    gemm_check(1, 300, 1000, false, false); /* B in panels: pieces of whole blocks, a short last block */
    test_gemv_update_wide();
    test_gemv_dot_rows();
    test_gemv_panels();
}

/* ---- MaxPool 2-D -------------------------------------------------------------------- */

/* The general path's rule for one window: the first maximum in row-major
 * order; a NaN wins. */
static float window_max(const float *plane, int64_t h, int64_t w, int64_t r0, int64_t c0, int64_t k, int64_t d) {
    float best = 0.0f;
    bool first = true;
    for (int64_t a = 0; a < k; a++)
        for (int64_t e = 0; e < k; e++) {
            int64_t r = r0 + a * d, c = c0 + e * d;
            if (r < 0 || r >= h || c < 0 || c >= w) continue;
            float v = plane[r * w + c];
            if (first || v > best || (isnan(v) && !isnan(best))) best = v;
            first = false;
        }
    return first ? NAN : best;
}

/* MaxPool over [1, planes, h, w] against window_max, bit for bit but for
 * the sign of a zero, alone and over a pool of 2 workers: a NaN every
 * nan_every floats and one in a last row (none for 0), -inf, ties, and
 * +0 beside -0. */
static void max_pool_nans(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad, int64_t dil,
                          size_t nan_every) {
    size_t nx = (size_t)(planes * h * w);
    float *x = random_floats(nx, 21);
    for (size_t i = 3; i + 1 < nx; i += 29) x[i] = 0.0f, x[i + 1] = -0.0f;
    for (size_t i = 0; nan_every > 0 && i < nx; i += nan_every) x[i] = NAN;
    /* and one in the middle plane's last row, never the first row a window
     * reads (the last plane's rows may take the rule's way for their reads) */
    if (nan_every > 0) x[(size_t)((planes + 1) / 2 * h * w - w / 2 - 1)] = NAN;
    for (size_t i = 5; i < nx; i += 41) x[i] = -INFINITY;
    for (size_t i = 9; i < nx; i += 13) x[i] = x[i - 1]; /* ties */
    int64_t ext = dil * (k - 1) + 1;
    int64_t oh = (h + 2 * pad - ext) / stride + 1, ow = (w + 2 * pad - ext) / stride + 1;
    int64_t xd[4] = {1, planes, h, w}, yd[4] = {1, planes, oh, ow};
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    for (int pass = 0; pass < 2; pass++) {
        nn_fixture f;
        nn_begin(&f, "MaxPool", "fast_paths");
        nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
        NN_INTS(&f, "kernel_shape", k, k);
        NN_INTS(&f, "strides", stride, stride);
        NN_INTS(&f, "pads", pad, pad, pad, pad);
        NN_INTS(&f, "dilations", dil, dil);
        nn_out_dims(&f, TGC_FLOAT32, 4, yd);
        f.pool = pass == 0 ? NULL : pool;
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        int64_t wrong = 0;
        for (int64_t p = 0; p < planes; p++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    float want = window_max(x + p * h * w, h, w, i * stride - pad, j * stride - pad, k, dil);
                    float got = nn_out_f32(&f, 0, (p * oh + i) * ow + j);
                    /* a zero maximum's sign follows the path's order (rows,
                     * then columns), not row-major: +0 and -0 both pass */
                    bool same = (isnan(want) && isnan(got)) || memcmp(&want, &got, sizeof got) == 0 ||
                                (want == 0.0f && got == 0.0f);
                    wrong += !same;
                }
        CU_ASSERT_EQUAL(wrong, 0);
        nn_end(&f);
    }
    tgc_thread_pool_free(pool);
    free(x);
}

/* ... with a NaN every 37 floats: most windows see one. */
static void max_pool_check(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
    max_pool_nans(planes, h, w, k, stride, pad, dil, 37);
}

static void test_max_pool_2d(void) {
    max_pool_check(70, 112, 112, 3, 2, 1, 1); /* ResNet's pool, many pieces */
    max_pool_check(3, 9, 11, 2, 2, 0, 1);
    max_pool_check(4, 13, 10, 3, 1, 1, 2);    /* dilated */
    max_pool_check(2, 8, 8, 3, 3, 2, 1);      /* pads 2 of 3: edge windows see one tap row */
    max_pool_check(2, 3, 3, 2, 1, 3, 5);      /* dilation 5 on 3 wide: a middle window reads nothing (NaN) */
    max_pool_check(40, 28, 28, 3, 1, 1, 1);   /* a plane at a time: GoogLeNet's stride-1 pools */
    max_pool_check(6, 20, 20, 5, 1, 2, 1);    /* YOLO's 5x5 with pads 2 */
    max_pool_check(3, 4, 4, 5, 1, 2, 1);      /* planes narrower than the window */
    max_pool_check(3, 9, 9, 3, 1, 0, 1);      /* stride 1 without pads: rows then columns */
    max_pool_check(3, 37, 53, 5, 3, 2, 1);    /* stride 3: three column phases, rows past a vector */
    max_pool_check(1, 7, 13, 3, 2, 0, 1);     /* one short plane: rows rounded to a vector stop at X's end */
    max_pool_check(5, 20, 20, 1, 4, 0, 1);    /* 1x1 window, stride 4 */
    /* column stride 2 over 2 or 3 columns, in registers: */
    max_pool_check(9, 111, 111, 3, 2, 0, 1);  /* SqueezeNet's and AlexNet's pool, no pads */
    max_pool_check(9, 14, 14, 3, 1, 1, 1);    /* stride 1, rows in one vector */
    max_pool_check(4, 23, 61, 3, 2, 1, 1);    /* pads as -inf lanes at both ends, a block past OW */
    max_pool_check(3, 27, 30, 2, 2, 0, 1);    /* 2x2 by 2 (VGG's) */
    max_pool_check(2, 6, 5, 3, 2, 2, 1);      /* rows narrower than a block, every block at an edge */
    /* the same in registers without a NaN, and with a few (the rows that
     * read one computed again by the rule), at rows of 4, 8 and 16 lanes: */
    for (size_t nan_every = 0; nan_every <= 1999; nan_every += 1999) {
        max_pool_nans(9, 111, 111, 3, 2, 0, 1, nan_every); /* 55 outputs a row: blocks of 16 */
        max_pool_nans(5, 29, 29, 3, 2, 0, 1, nan_every);   /* 14: blocks of 8 */
        max_pool_nans(7, 13, 13, 3, 2, 0, 1, nan_every);   /* 6: blocks of 4 */
        max_pool_nans(4, 23, 61, 3, 2, 1, 1, nan_every);
        max_pool_nans(3, 27, 30, 2, 2, 0, 1, nan_every);
        max_pool_nans(2, 6, 5, 3, 2, 2, 1, nan_every);
        max_pool_nans(4, 40, 33, 3, 2, 0, 1, nan_every);   /* 16 outputs: one whole block */
        /* stride 1, a padded row in one vector (pool_narrow.h): */
        max_pool_nans(9, 14, 14, 3, 1, 1, 1, nan_every);   /* GoogLeNet's 14x14: 16 lanes exactly */
        max_pool_nans(7, 7, 7, 3, 1, 1, 1, nan_every);     /* 7x7 in 16 lanes */
        max_pool_nans(5, 6, 6, 3, 1, 1, 1, nan_every);     /* 8 lanes */
        max_pool_nans(6, 2, 2, 3, 1, 1, 1, nan_every);     /* 4 lanes */
        max_pool_nans(3, 9, 12, 3, 1, 1, 1, nan_every);    /* taller than wide */
        max_pool_nans(3, 10, 10, 5, 1, 2, 1, nan_every);   /* 5x5: the shifts through memory */
        max_pool_nans(3, 12, 11, 9, 1, 4, 1, nan_every);   /* 81 taps: past the padded planes' blocks */
    }
}

/* The ISAs' tables this cpu runs (pool_isa.h), narrowest first. */
static const tgc_pool_isa *runnable_pool_isa(int i) {
    const tgc_pool_isa *all[3] = {&tgc_pool_isa_sse2, &tgc_pool_isa_avx2, &tgc_pool_isa_avx512};
    int n = 0;
    tgc_cpu_ew_all_loops(&n); /* the ISAs this cpu runs, in the same order (cpuid) */
    return i < n ? all[i] : NULL;
}

/* narrow_plane of every ISA this cpu runs, on rows of 1 to 4 of its
 * vectors, 3x3 with pads 1 and 5x5 with pads 2: true and window_max's
 * values (either zero where +0 and -0 tie) without a NaN; false with a
 * NaN in the last row, where no window reads it first. */
static void test_max_pool_narrow_isas(void) {
    for (int i = 0; runnable_pool_isa(i) != NULL; i++) {
        const tgc_pool_isa *isa = runnable_pool_isa(i);
        int64_t lanes = isa->lanes, widths[4] = {lanes - 2, lanes + 5, 3 * lanes - 2, 4 * lanes - 4};
        for (int wi = 0; wi < 4; wi++)
            for (int64_t k = 3; k <= 5; k += 2) {
                int64_t wd = widths[wi] - (k - 3), h = 9, pad = k / 2, plane = h * wd;
                if (wd < 2) continue; /* 4 lanes hold no row of a 5x5 window */
                size_t n = (size_t)(3 * plane + 8 * lanes);
                float *x = random_floats(n, 31), *y = malloc((size_t)plane * sizeof *y);
                CU_ASSERT_PTR_NOT_NULL_FATAL(y);
                for (size_t e = 3; e + 1 < n; e += 29) x[e] = 0.0f, x[e + 1] = -0.0f;
                const float *xp = x + plane; /* the middle plane: reads around it stay in x */
                bool ok = isa->narrow_plane(xp, y, plane, h, wd, k, k, pad, pad, h);
                int64_t wrong = 0;
                for (int64_t r = 0; r < h; r++)
                    for (int64_t c = 0; c < wd; c++) {
                        float want = window_max(xp, h, wd, r - pad, c - pad, k, 1), got = y[r * wd + c];
                        wrong += memcmp(&want, &got, sizeof got) != 0 && !(want == 0.0f && got == 0.0f);
                    }
                if (!ok || wrong != 0)
                    printf("\n  %s: %lld wide, %lldx%lld: %s, %lld wrong", isa->isa, (long long)wd, (long long)k,
                           (long long)k, ok ? "true" : "false", (long long)wrong);
                CU_ASSERT(ok && wrong == 0);
                x[2 * plane - wd / 2 - 1] = NAN;
                CU_ASSERT(!isa->narrow_plane(xp, y, plane, h, wd, k, k, pad, pad, h));
                free(x);
                free(y);
            }
    }
}

/* ---- Concat and Split in pieces ---------------------------------------------------- */

/* Concat of n int32 parts [outer, sizes[i], inner] along axis 1, and Split
 * of the whole back into them, alone and over a pool of 2 workers: every
 * element against the rule whole[o, at_i + j, k] = part_i[o, j, k], each
 * element a code of its part and place. */
static void concat_split_check(int64_t outer, int n, const int64_t *sizes, int64_t inner) {
    int32_t *data[NN_MAX_IO];
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)(outer * sizes[i] * inner);
        data[i] = malloc((count + 1) * sizeof *data[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(data[i]);
        for (size_t e = 0; e < count; e++) data[i][e] = (int32_t)(((uint32_t)i << 24) | (uint32_t)e);
        total += sizes[i];
    }
    int32_t *whole = malloc((size_t)(outer * total * inner + 1) * sizeof *whole);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    for (int64_t i = 0, at = 0; i < n; at += sizes[i++])
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < sizes[i]; j++)
                for (int64_t k = 0; k < inner; k++)
                    whole[(o * total + at + j) * inner + k] = data[i][(o * sizes[i] + j) * inner + k];
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    for (int pass = 0; pass < 2; pass++) {
        nn_fixture f;
        nn_begin(&f, "Concat", "fast_paths");
        for (int i = 0; i < n; i++) nn_in_dims(&f, TGC_INT32, 3, (int64_t[]){outer, sizes[i], inner}, data[i]);
        nn_int(&f, "axis", 1);
        nn_out_dims(&f, TGC_INT32, 3, (int64_t[]){outer, total, inner});
        f.pool = pass == 0 ? NULL : pool;
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        size_t bytes = (size_t)(outer * total * inner) * sizeof *whole;
        CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(f.out[0].buf), whole, bytes), 0);
        nn_end(&f);

        nn_begin(&f, "Split", "fast_paths");
        nn_in_dims(&f, TGC_INT32, 3, (int64_t[]){outer, total, inner}, whole);
        nn_in_dims(&f, TGC_INT64, 1, (int64_t[]){n}, sizes);
        nn_int(&f, "axis", 1);
        for (int i = 0; i < n; i++) nn_out_dims(&f, TGC_INT32, 3, (int64_t[]){outer, sizes[i], inner});
        f.pool = pass == 0 ? NULL : pool;
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        for (int i = 0; i < n; i++) {
            size_t part = (size_t)(outer * sizes[i] * inner) * sizeof *whole;
            CU_ASSERT_EQUAL(part == 0 || memcmp(tgc_buffer_host_ptr(f.out[i].buf), data[i], part) == 0, true);
        }
        nn_end(&f);
    }
    tgc_thread_pool_free(pool);
    for (int i = 0; i < n; i++) free(data[i]);
    free(whole);
}

static void test_concat_split_pieces(void) {
    concat_split_check(1, 2, (int64_t[]){64, 64}, 55 * 55); /* NCHW at batch 1: one row, pieces inside an input */
    concat_split_check(729, 2, (int64_t[]){128, 128}, 1);   /* channels last: pieces of 64 rows of 1 KiB */
    concat_split_check(2, 3, (int64_t[]){33, 1, 70}, 301);  /* pieces ending inside a part's row */
    int64_t many[20];
    for (int i = 0; i < 20; i++) many[i] = i % 5; /* some empty */
    concat_split_check(300, 20, many, 7);                   /* more parts than the kernels keep on their stack */
}

/* ---- AveragePool 2-D ---------------------------------------------------------------- */

/* The rule for one window (AveragePool-11, ONNX's reference): the float sum
 * of the taps inside the input in row-major order over the count of taps
 * inside the input (include_pad 0) or inside [-pad, size + pad_end) (1);
 * NaN when the count is 0. pads: top, left, bottom, right. */
static float window_mean(const float *plane, int64_t h, int64_t w, int64_t r0, int64_t c0, int64_t kh, int64_t kw,
                         int64_t d, const int64_t *pads, bool include_pad) {
    float sum = 0.0f;
    int64_t rows = 0, cols = 0;
    for (int64_t a = 0; a < kh; a++) {
        int64_t r = r0 + a * d;
        rows += include_pad ? r >= -pads[0] && r < h + pads[2] : r >= 0 && r < h;
    }
    for (int64_t e = 0; e < kw; e++) {
        int64_t c = c0 + e * d;
        cols += include_pad ? c >= -pads[1] && c < w + pads[3] : c >= 0 && c < w;
    }
    for (int64_t a = 0; a < kh; a++)
        for (int64_t e = 0; e < kw; e++) {
            int64_t r = r0 + a * d, c = c0 + e * d;
            if (r >= 0 && r < h && c >= 0 && c < w) sum += plane[r * w + c];
        }
    int64_t count = rows * cols;
    return count > 0 ? sum / (float)count : NAN;
}

typedef struct avg_pool_shape {
    int64_t planes, h, w, kh, kw, stride, dil, pads[4];
    bool include_pad, ceil_mode;
} avg_pool_shape;

static int64_t pool_out(int64_t in, int64_t p0, int64_t p1, int64_t ext, int64_t stride, bool ceil_mode) {
    int64_t span = in + p0 + p1 - ext;
    int64_t o = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    /* ceil_mode: the last window must start inside the input or left padding */
    if (ceil_mode && (o - 1) * stride >= in + p0) o--;
    return o;
}

static void avg_pool_check(avg_pool_shape s) {
    size_t nx = (size_t)(s.planes * s.h * s.w);
    float *x = random_floats(nx, 33);
    int64_t oh = pool_out(s.h, s.pads[0], s.pads[2], s.dil * (s.kh - 1) + 1, s.stride, s.ceil_mode);
    int64_t ow = pool_out(s.w, s.pads[1], s.pads[3], s.dil * (s.kw - 1) + 1, s.stride, s.ceil_mode);
    int64_t xd[4] = {1, s.planes, s.h, s.w}, yd[4] = {1, s.planes, oh, ow};
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
    for (int pass = 0; pass < 2; pass++) {
        nn_fixture f;
        nn_begin(&f, "AveragePool", "fast_paths");
        nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
        NN_INTS(&f, "kernel_shape", s.kh, s.kw);
        NN_INTS(&f, "strides", s.stride, s.stride);
        NN_INTS(&f, "pads", s.pads[0], s.pads[1], s.pads[2], s.pads[3]);
        NN_INTS(&f, "dilations", s.dil, s.dil);
        nn_int(&f, "count_include_pad", s.include_pad);
        nn_int(&f, "ceil_mode", s.ceil_mode);
        nn_out_dims(&f, TGC_FLOAT32, 4, yd);
        f.pool = pass == 0 ? NULL : pool;
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        int64_t wrong = 0;
        for (int64_t p = 0; f.ok && p < s.planes; p++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    float want = window_mean(x + p * s.h * s.w, s.h, s.w, i * s.stride - s.pads[0],
                                             j * s.stride - s.pads[1], s.kh, s.kw, s.dil, s.pads, s.include_pad);
                    float got = nn_out_f32(&f, 0, (p * oh + i) * ow + j);
                    wrong += !((isnan(want) && isnan(got)) || memcmp(&want, &got, sizeof got) == 0);
                }
        CU_ASSERT_EQUAL(wrong, 0);
        nn_end(&f);
    }
    tgc_thread_pool_free(pool);
    free(x);
}

static void test_average_pool_2d(void) {
    /* Inception's 3x3 stride 1 pool with its pads counted, many pieces */
    avg_pool_check((avg_pool_shape){64, 35, 35, 3, 3, 1, 1, {1, 1, 1, 1}, true, false});
    avg_pool_check((avg_pool_shape){5, 17, 17, 3, 3, 1, 1, {1, 1, 1, 1}, false, false});
    /* DenseNet's 2x2 stride 2 transition, odd sizes */
    avg_pool_check((avg_pool_shape){7, 15, 13, 2, 2, 2, 1, {0, 0, 0, 0}, false, false});
    /* uneven kernel and pads, ceil_mode, dilation */
    avg_pool_check((avg_pool_shape){3, 11, 9, 3, 2, 2, 1, {1, 0, 2, 1}, true, true});
    avg_pool_check((avg_pool_shape){3, 11, 9, 3, 2, 2, 1, {1, 0, 2, 1}, false, true});
    avg_pool_check((avg_pool_shape){4, 13, 10, 3, 3, 1, 2, {2, 2, 2, 2}, false, false});
    /* dilation 5 on 3 wide: a window reads nothing (NaN without pads counted) */
    avg_pool_check((avg_pool_shape){2, 3, 3, 2, 2, 1, 5, {3, 3, 3, 3}, false, false});
    avg_pool_check((avg_pool_shape){2, 3, 3, 2, 2, 1, 5, {3, 3, 3, 3}, true, false});
    /* pads past the kernel without dilation (the padded planes): corner
     * windows read nothing, NaN without pads counted, 0 with them */
    avg_pool_check((avg_pool_shape){2, 4, 4, 2, 2, 1, 1, {3, 3, 3, 3}, false, false});
    avg_pool_check((avg_pool_shape){2, 4, 4, 2, 2, 1, 1, {3, 3, 3, 3}, true, false});
    /* windows past the padded planes' register blocks (64 taps): 9x9 sums each tap's sweep in turn */
    avg_pool_check((avg_pool_shape){3, 12, 11, 9, 9, 1, 1, {4, 4, 4, 4}, true, false});
    avg_pool_check((avg_pool_shape){3, 12, 11, 9, 9, 1, 1, {4, 4, 4, 4}, false, false});
}

/* The padded planes divide a window's float sum by its count mostly as a
 * product with the count's reciprocal in double (tgc_cpu_pool_divide):
 * the same bits as the float quotient for every count to 4096 and sums of
 * every magnitude, subnormals (whose quotients by even counts can be
 * midpoints the product rounds the wrong way: 98 of them here), zeros of
 * both signs and infinities included, in rows of 64 that mix them. */
static void test_average_reciprocal_exact(void) {
    enum { VALUES = 4096 };
    float x[VALUES];
    uint32_t state = 12345;
    for (int i = 0; i < VALUES; i++) {
        state = state * 1664525u + 1013904223u;
        uint32_t bits = state;
        if (i % 4 == 1) bits &= 0x807fffffu; /* subnormal or zero */
        if ((bits & 0x7f800000u) == 0x7f800000u) bits &= 0xff7fffffu; /* no NaN or infinity here */
        memcpy(&x[i], &bits, sizeof bits);
    }
    x[0] = INFINITY, x[1] = -INFINITY, x[2] = 0.0f, x[3] = -0.0f;
    int64_t wrong = 0;
    double recip[64];
    float got[64];
    for (int count = 1; count <= 4096; count++) {
        for (int k = 0; k < 64; k++) recip[k] = 1.0 / (double)count;
        for (int i = 0; i < VALUES; i += 64) {
            tgc_cpu_pool_divide(got, x + i, recip, 64);
            for (int k = 0; k < 64; k++) {
                float want = x[i + k] / (float)count;
                wrong += memcmp(&want, &got[k], sizeof want) != 0;
            }
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    for (int k = 0; k < 64; k++) recip[k] = NAN; /* nothing to count */
    tgc_cpu_pool_divide(got, x, recip, 64);
    for (int k = 0; k < 64; k++) CU_ASSERT(isnan(got[k]));
}

/* Kernels run here outside a session: OpenBLAS single-threaded as a
 * session makes it, before any test (its own threads synchronize in ways
 * ThreadSanitizer cannot see, and the pool is what these tests exercise).
 * Shared libraries' constructors, OpenBLAS's included, run before this. */
__attribute__((constructor)) static void blas_single_threaded(void) { openblas_set_num_threads(1); }

/* MaxPool on uint8 with Indices (MaxPool-12), and without them (the 2-D
 * row path): every window against the rule, ties to the first maximum in
 * row-major order, indices flat over the whole input. */
static void test_max_pool_u8(void) {
    for (int with_indices = 1; with_indices >= 0; with_indices--) {
        int64_t xd[4] = {2, 3, 7, 6}, yd[4] = {2, 3, 4, 3};
        uint8_t x[2 * 3 * 7 * 6];
        uint32_t seed = 5;
        for (size_t i = 0; i < sizeof x; i++) x[i] = (uint8_t)((lcg(&seed) + 1.0f) * 4.0f); /* many ties */
        x[5] = 255; /* the ends of the range */
        x[100] = 0;
        nn_fixture f;
        nn_begin(&f, "MaxPool", "fast_paths");
        nn_in_dims(&f, TGC_UINT8, 4, xd, x);
        NN_INTS(&f, "kernel_shape", 3, 2);
        NN_INTS(&f, "strides", 2, 2);
        NN_INTS(&f, "pads", 1, 0, 1, 0);
        nn_out_dims(&f, TGC_UINT8, 4, yd);
        if (with_indices) nn_out_dims(&f, TGC_INT64, 4, yd);
        CU_ASSERT_EQUAL_FATAL(nn_run(&f), TGC_OK);
        const uint8_t *y = tgc_buffer_host_ptr(f.out[0].buf);
        const int64_t *idx = with_indices ? tgc_buffer_host_ptr(f.out[1].buf) : NULL;
        int64_t wrong = 0;
        for (int64_t p = 0; p < 6; p++)
            for (int64_t i = 0; i < 4; i++)
                for (int64_t j = 0; j < 3; j++) {
                    int best = -1;
                    int64_t at = -1;
                    for (int64_t a = 0; a < 3; a++)
                        for (int64_t b = 0; b < 2; b++) {
                            int64_t r = i * 2 - 1 + a, q = j * 2 + b;
                            if (r < 0 || r >= 7 || q >= 6) continue;
                            int v = x[(p * 7 + r) * 6 + q];
                            if (v > best) {
                                best = v;
                                at = (p * 7 + r) * 6 + q;
                            }
                        }
                    int64_t o = (p * 4 + i) * 3 + j;
                    wrong += y[o] != best || (idx != NULL && idx[o] != at);
                }
        CU_ASSERT_EQUAL(wrong, 0);
        nn_end(&f);
    }
}

TGC_TEST_MAIN("cpu fast paths", {"winograd shapes", test_winograd_shapes},
              {"winograd declines", test_winograd_declines},
              {"winograd under a workspace limit", test_winograd_workspace_limit},
              {"im2col tiles and channel split", test_im2col_tiles_and_channel_split},
              {"cache needs constant filters", test_cache_needs_constant_filters},
              {"oneDNN on small maps", test_dnnl_small_maps}, {"oneDNN declines", test_dnnl_declines},
              {"small maps, channels in lanes", test_small_maps},
              {"small maps of 1 and 3 axes", test_small_maps_nd},
              {"the way changes with the shapes", test_way_changes_with_shapes},
              {"oneDNN pieces of a dilated window, and its bytes", test_dnnl_pieces_and_bytes},
              {"gemm split", test_gemm_split},
              {"gemv", test_gemv}, {"max pool uint8", test_max_pool_u8}, {"max pool 2-D", test_max_pool_2d},
              {"max pool rows in registers, every ISA", test_max_pool_narrow_isas},
              {"average pool 2-D", test_average_pool_2d},
              {"average pool: a sum times 1 / count in double is the quotient", test_average_reciprocal_exact},
              {"concat and split in pieces", test_concat_split_pieces})
