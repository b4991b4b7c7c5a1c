/* _ConvNHWC's pointwise layers on tgc's own register tiles
 * (devices/cpu/conv_pointwise.c): the kernel run with a kernel cache (W a
 * session constant), as a session runs it. Each case against a loop in
 * double over the NHWC tensors (bias, the products, Z, the activation);
 * alone, over a 3-worker pool (bitwise the same) and a second time on the
 * cached weights (bitwise the same). The shapes leave a last block of
 * output channels partly full (37, 80 and 200 channels at 16, 8 and 4
 * lanes), rows that are no multiple of the tile's 6, pieces of rows and
 * pieces of output channels (W outweighing X), two images, no bias; the
 * activations a Relu and a Clip (applied in the tiles' registers) and a
 * Sigmoid (a pass over each chunk after); strided layers, whose rows of X
 * are read line by line where they lie. The tiles are AVX-512's; run at
 * the narrower ISAs (tests/CMakeLists.txt, TGC_CPU_ISA) the same cases
 * check the ways those take instead (oneDNN's convolution, the packed
 * product). */
#include "devices/cpu/conv_direct.h"
#include "devices/cpu/conv_pointwise.h"
#include "graph/elementwise.h"
#include "support/thread_pool.h"
#include "tests/devices/kernel_fixture_nn.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

typedef struct pw_case {
    int64_t batch, hw, k, m; /* X [batch, hw, hw, k] channels last; W [m, k, 1, 1] */
    int64_t in_w, sh, sw;    /* when sh > 0: X [batch, hw, in_w, k] at strides sh, sw */
    bool bias, z;
    const char *act; /* an elementwise row's op, or NULL */
    float params[2];
} pw_case;

/* A value in [-1, 1) from (seed, i). */
static float value(unsigned seed, int64_t i) {
    uint32_t s = seed * 2654435761u + (uint32_t)i * 40503u + 12345u;
    s ^= s >> 13, s *= 0x5bd1e995u, s ^= s >> 15;
    return (float)(s >> 8) / (float)(1u << 23) - 1.0f;
}

/* X's and Y's maps: [ih, iw] and [oh, ow]. */
static void maps(const pw_case *pc, int64_t *ih, int64_t *iw, int64_t *oh, int64_t *ow) {
    bool strided = pc->sh > 0;
    *ih = pc->hw, *iw = strided ? pc->in_w : pc->hw;
    *oh = strided ? (*ih - 1) / pc->sh + 1 : *ih;
    *ow = strided ? (*iw - 1) / pc->sw + 1 : *iw;
}

/* The reference in double: y[r][q] = act(bias[q] + sum_t x[r'][t] w[q][t] +
 * z[r][q]), r' the input position output row r samples; *mag the sum of
 * its terms' magnitudes (what a float32 sum's rounding scales with). */
static double reference(const pw_case *pc, const float *x, const float *w, const float *b, const float *z,
                        int64_t r, int64_t q, double *mag) {
    int64_t ih, iw, oh, ow;
    maps(pc, &ih, &iw, &oh, &ow);
    int64_t n = r / (oh * ow), i = r / ow % oh, j = r % ow;
    int64_t from = pc->sh > 0 ? (n * ih + i * pc->sh) * iw + j * pc->sw : r;
    double s = pc->bias ? b[q] : 0.0;
    *mag = fabs(s);
    for (int64_t t = 0; t < pc->k; t++) {
        double term = (double)x[from * pc->k + t] * w[q * pc->k + t];
        s += term;
        *mag += fabs(term);
    }
    if (pc->z) s += z[r * pc->m + q];
    if (pc->act == NULL) return s;
    if (strcmp(pc->act, "Relu") == 0) return s > 0 ? s : 0;
    if (strcmp(pc->act, "Clip") == 0) return s < pc->params[0] ? pc->params[0] : s > pc->params[1] ? pc->params[1] : s;
    return 1.0 / (1.0 + exp(-s)); /* Sigmoid */
}

/* Runs the case once into y (rows * m floats); the impl the kernel named. */
static const char *run(const pw_case *pc, const float *x, const float *w, const float *b, const float *z,
                       tgc_thread_pool *pool, tgc_kernel_cache *cache, float *y) {
    int64_t ih, iw, oh, ow;
    maps(pc, &ih, &iw, &oh, &ow);
    int64_t xd[4] = {pc->batch, ih, iw, pc->k}, wd[4] = {pc->m, pc->k, 1, 1}, bd[1] = {pc->m};
    int64_t yd[4] = {pc->batch, oh, ow, pc->m}, rows = pc->batch * oh * ow;
    tgc_fused_act act = {.row = -1};
    if (pc->act != NULL) {
        act.row = (int)tgc_ew_id(tgc_ew_find(pc->act));
        act.params[0] = pc->params[0], act.params[1] = pc->params[1];
    }
    nn_fixture f;
    nn_begin(&f, "_ConvNHWC", "pointwise");
    nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
    nn_in_dims(&f, TGC_FLOAT32, 4, wd, w);
    if (pc->bias) nn_in_dims(&f, TGC_FLOAT32, 1, bd, b);
    else nn_in_omitted(&f);
    if (pc->z) nn_in_dims(&f, TGC_FLOAT32, 4, yd, z);
    nn_out_dims(&f, TGC_FLOAT32, 4, yd);
    if (pc->sh > 0) NN_INTS(&f, "strides", pc->sh, pc->sw);
    f.pool = pool;
    f.cache = cache;
    f.const_inputs = 1u << 1 | (pc->bias ? 1u << 2 : 0);
    f.fused_act = pc->act != NULL ? &act : NULL;
    CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
    for (int64_t i = 0; i < rows * pc->m; i++) y[i] = nn_out_f32(&f, 0, i);
    const char *impl = f.impl;
    nn_end(&f);
    return impl;
}

static void check_case(const pw_case *pc) {
    int64_t ih, iw, oh, ow;
    maps(pc, &ih, &iw, &oh, &ow);
    int64_t rows = pc->batch * oh * ow, ny = rows * pc->m, in_rows = pc->batch * ih * iw;
    float *x = malloc(sizeof(float) * (size_t)(in_rows * pc->k)), *w = malloc(sizeof(float) * (size_t)(pc->m * pc->k));
    float *b = malloc(sizeof(float) * (size_t)pc->m), *z = malloc(sizeof(float) * (size_t)ny);
    float *alone = malloc(sizeof(float) * (size_t)ny), *split = malloc(sizeof(float) * (size_t)ny);
    float *again = malloc(sizeof(float) * (size_t)ny);
    CU_ASSERT_FATAL(x != NULL && w != NULL && b != NULL && z != NULL && alone != NULL && split != NULL &&
                    again != NULL);
    for (int64_t i = 0; i < in_rows * pc->k; i++) x[i] = value(1, i);
    for (int64_t i = 0; i < pc->m * pc->k; i++) w[i] = value(2, i);
    for (int64_t i = 0; i < pc->m; i++) b[i] = value(3, i);
    for (int64_t i = 0; i < ny; i++) z[i] = value(4, i);
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &pool), TGC_OK);
    tgc_kernel_cache c1, c2;
    tgc_kernel_cache_init(&c1);
    tgc_kernel_cache_init(&c2);
    const char *impl = run(pc, x, w, b, z, NULL, &c1, alone);
    bool tiles = tgc_cpu_conv_isa()->pointwise != NULL; /* else any of that ISA's ways (a build without
                                                           * oneDNN: Conv on NCHW copies, no cache) */
    if (tiles) CU_ASSERT(impl != NULL && strcmp(impl, "pointwise nhwc") == 0);
    run(pc, x, w, b, z, pool, &c2, split);
    run(pc, x, w, b, z, NULL, &c1, again); /* on the weights packed by the first run */
    int64_t wrong = 0, differ = 0;
    double worst = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t q = 0; q < pc->m; q++) {
            int64_t i = r * pc->m + q;
            double mag, want = reference(pc, x, w, b, z, r, q, &mag), err = fabs(alone[i] - want);
            if (err > worst) worst = err;
            if (!(err <= 1e-5 * (1.0 + fabs(want)) + 1e-6 * mag)) wrong++; /* float32 sums of k terms */
            if (memcmp(&alone[i], &split[i], sizeof(float)) != 0 || memcmp(&alone[i], &again[i], sizeof(float)) != 0)
                differ++;
        }
    if (wrong > 0 || differ > 0)
        printf("\n  [%lld, %lld, %lld, %lld] -> %lld: %lld wrong (worst %.3g), %lld differ over the pool or cached\n",
               (long long)pc->batch, (long long)ih, (long long)iw, (long long)pc->k, (long long)pc->m,
               (long long)wrong, worst, (long long)differ);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(differ, 0);
    /* The cache holds W packed at the running ISA's lanes, in its place. */
    if (tiles) {
        CU_ASSERT(c1.bytes >= (size_t)(pc->m * pc->k) * sizeof(float));
        CU_ASSERT_EQUAL(atomic_load(&c1.replaces), 1u << 1);
    }
    tgc_kernel_cache_clear(&c1);
    tgc_kernel_cache_clear(&c2);
    tgc_thread_pool_free(pool);
    free(x), free(w), free(b), free(z), free(alone), free(split), free(again);
}

/* 7x7 rows (49: 8 tiles and one row), 37 channels: a last block of 5, 5
 * and 1 lanes at 16, 8 and 4; small enough for one piece. */
static void test_ragged_one_piece(void) {
    check_case(&(pw_case){.batch = 1, .hw = 7, .k = 24, .m = 37, .bias = true});
}

/* 7x7, 300 -> 400 (5.9M multiply-adds, W outweighing X): pieces of output
 * channels; a Relu in the tiles. */
static void test_pieces_of_channels(void) {
    check_case(&(pw_case){.batch = 1, .hw = 7, .k = 300, .m = 400, .bias = true, .act = "Relu"});
}

/* 28x28, 40 -> 80 (2.5M): pieces of rows, in chunks; a Z added before a
 * Clip. */
static void test_pieces_of_rows_with_z(void) {
    check_case(&(pw_case){.batch = 1, .hw = 28, .k = 40, .m = 80, .bias = true, .z = true, .act = "Clip",
                          .params = {-0.5f, 0.75f}});
}

/* Two images of 5x5 (50 rows), 200 channels of 17 inputs, no bias, a
 * Sigmoid: the pass over each chunk after the tiles. */
static void test_two_images_sigmoid(void) {
    check_case(&(pw_case){.batch = 2, .hw = 5, .k = 17, .m = 200, .z = true, .act = "Sigmoid"});
}

/* Strided 1x1 layers (a projection shortcut), X read where it lies: 2
 * images of 13x9 at strides 2 and 2 (7x5 outputs), 64 -> 96 with a Z and
 * a Relu; one of 28x28 at 2 and 3 (14x10), 128 -> 64 (1.1M multiply-adds),
 * in two pieces of rows, the first ending inside a line (72 rows, lines of
 * 10). */
static void test_strided(void) {
    check_case(&(pw_case){.batch = 2, .hw = 13, .in_w = 9, .sh = 2, .sw = 2, .k = 64, .m = 96, .bias = true,
                          .z = true, .act = "Relu"});
    check_case(&(pw_case){.batch = 1, .hw = 28, .in_w = 28, .sh = 2, .sw = 3, .k = 128, .m = 64, .bias = true});
}

/* 14x14, 1536 -> 256 (77M multiply-adds) with a Z and a Relu: on the
 * tiles, pieces of rows; at AVX2 and SSE2 the packed product (393K
 * weights), 4 pieces of columns each in 2 blocks of 98 rows, each block
 * handed over on its own (tgc_packed_gemm_run_blocks). */
static void test_blocks_of_rows(void) {
    check_case(&(pw_case){.batch = 1, .hw = 14, .k = 1536, .m = 256, .bias = true, .z = true, .act = "Relu"});
}

/* One position, one input channel, one output: a tile of one row, one
 * lane. */
static void test_smallest(void) { check_case(&(pw_case){.batch = 1, .hw = 1, .k = 1, .m = 1, .bias = true}); }

/* The cache block's size: blocks of lanes, the header; overflow is -1. */
static void test_bytes(void) {
    int64_t header = (int64_t)sizeof(tgc_pointwise_weights);
    CU_ASSERT_EQUAL(tgc_cpu_pointwise_bytes(37, 24, 16), 48 * 24 * 4 + header);
    CU_ASSERT_EQUAL(tgc_cpu_pointwise_bytes(32, 3, 8), 32 * 3 * 4 + header);
    CU_ASSERT_EQUAL(tgc_cpu_pointwise_bytes(INT64_MAX, 2, 16), -1);
    CU_ASSERT_EQUAL(tgc_cpu_pointwise_bytes(INT64_C(1) << 40, INT64_C(1) << 30, 16), -1);
    CU_ASSERT_EQUAL(tgc_cpu_pointwise_bytes(0, 4, 16), -1);
    CU_ASSERT_EQUAL(header % 64, 0);
}

TGC_TEST_MAIN("cpu _ConvNHWC pointwise tiles", {"a ragged last block, one piece", test_ragged_one_piece},
              {"pieces of output channels, a Relu", test_pieces_of_channels},
              {"pieces of rows, a Z, a Clip", test_pieces_of_rows_with_z},
              {"two images, no bias, a Sigmoid", test_two_images_sigmoid}, {"1x1x1 -> 1", test_smallest},
              {"strided: X read where it lies", test_strided},
              {"blocks of rows (the packed product's, at AVX2 and SSE2)", test_blocks_of_rows},
              {"the packed block's bytes", test_bytes})
