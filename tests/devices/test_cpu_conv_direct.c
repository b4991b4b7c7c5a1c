/* The cpu's direct convolution (devices/cpu/conv_direct.c): depthwise Conv
 * (group == C, M a multiple of C), grouped Conv with up to 32 channels a
 * group and Conv on few input channels (images, thin 1x1), 1-D and 2-D, by
 * its two methods (rows in registers over phase planes; depthwise with a
 * channel a lane on small maps), against a
 * direct convolution written again here in double, within the rounding of
 * a float32 sum (relative to the summed magnitudes, as
 * test_cpu_fast_paths.c). Every case also runs over pools of 1 and 3
 * workers and must give the same bits as alone; with an absorbed
 * activation (tgc_kernel_ctx.fused_act, executor/fuse.c) it must give the
 * bits of the activation's own kernel run on Conv's output. The suite runs again with TGC_CPU_ISA=sse2 and avx2
 * (tests/CMakeLists.txt), so every ISA's kernels are checked on a machine
 * with AVX-512. */
#include "tests/devices/conv_case.h"
#include "tests/devices/kernel_fixture_nn.h"

#include "devices/cpu/conv_direct.h"
#include "devices/cpu/ew.h"
#include "graph/elementwise.h"

#include <stdlib.h>

static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}


/* Runs op (Conv; with act: absorbing activation act with its params) on
 * k's x, w, b over pool; y gets the output (N*M*OH*OW floats). */
static void run_cached(const conv_case *k, const char *op, const char *act, const double *params, int n_params,
                       const float *x, const float *w, const float *b, tgc_thread_pool *pool,
                       tgc_kernel_cache *cache, float *y) {
    int64_t oh = conv_oh(k), ow = conv_ow(k), cg = k->c / conv_group(k);
    nn_fixture f;
    nn_begin(&f, op, "conv_direct");
    if (k->one_d) {
        int64_t xd[3] = {k->batch, k->c, k->w}, wd[3] = {k->m, cg, k->kw}, yd[3] = {k->batch, k->m, ow};
        nn_in_dims(&f, TGC_FLOAT32, 3, xd, x);
        nn_in_dims(&f, TGC_FLOAT32, 3, wd, w);
        NN_INTS(&f, "pads", k->pads[1], k->pads[3]);
        NN_INTS(&f, "strides", k->sw);
        NN_INTS(&f, "dilations", k->dw);
        if (k->bias) nn_in_dims(&f, TGC_FLOAT32, 1, &k->m, b);
        nn_out_dims(&f, TGC_FLOAT32, 3, yd);
    } else {
        int64_t xd[4] = {k->batch, k->c, k->h, k->w}, wd[4] = {k->m, cg, k->kh, k->kw};
        int64_t yd[4] = {k->batch, k->m, oh, ow};
        nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
        nn_in_dims(&f, TGC_FLOAT32, 4, wd, w);
        NN_INTS(&f, "pads", k->pads[0], k->pads[1], k->pads[2], k->pads[3]);
        NN_INTS(&f, "strides", k->sh, k->sw);
        NN_INTS(&f, "dilations", k->dh, k->dw);
        if (k->bias) nn_in_dims(&f, TGC_FLOAT32, 1, &k->m, b);
        nn_out_dims(&f, TGC_FLOAT32, 4, yd);
    }
    nn_int(&f, "group", conv_group(k));
    tgc_fused_act fused = {.row = -1};
    if (act != NULL) {
        fused.row = (int)tgc_ew_id(tgc_ew_find(act));
        for (int i = 0; i < n_params; i++) fused.params[i] = (float)params[i];
        f.fused_act = &fused;
    }
    f.pool = pool;
    f.cache = cache;
    f.const_inputs = cache != NULL ? 0x6 : 0; /* W and B are weights */
    tgc_status st = nn_run(&f);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) fprintf(stderr, "\n  %s: %s\n", op, f.err);
    int64_t n = k->batch * k->m * oh * ow;
    for (int64_t i = 0; i < n; i++) y[i] = nn_out_f32(&f, 0, i);
    nn_end(&f);
}

/* run_cached without a kernel cache (as a kernel run outside a session). */
static void run(const conv_case *k, const char *op, const char *act, const double *params, int n_params,
                const float *x, const float *w, const float *b, tgc_thread_pool *pool, float *y) {
    run_cached(k, op, act, params, n_params, x, w, b, pool, NULL, y);
}


/* Case k: correct alone, the same bits over pools of 1 and 3 workers, and
 * with a kernel cache (the lanes method's transposed weights) on its first
 * run and its second. */
static void check(const conv_case *k) {
    int64_t h = k->one_d ? 1 : k->h, kh = k->one_d ? 1 : k->kh, cg = k->c / conv_group(k);
    size_t nx = (size_t)(k->batch * k->c * h * k->w), nw = (size_t)(k->m * cg * kh * k->kw);
    size_t ny = (size_t)(k->batch * k->m * conv_oh(k) * conv_ow(k));
    uint32_t seed = (uint32_t)(k->c * 131 + k->w * 7 + k->kw);
    float *x = malloc((nx + 1) * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc((size_t)k->m * sizeof *b);
    float *alone = malloc((ny + 1) * sizeof *alone), *split = malloc((ny + 1) * sizeof *split);
    CU_ASSERT_FATAL(x && w && b && alone && split);
    for (size_t i = 0; i < nx; i++) x[i] = lcg(&seed);
    for (size_t i = 0; i < nw; i++) w[i] = lcg(&seed);
    for (int64_t i = 0; i < k->m; i++) b[i] = lcg(&seed);

    run(k, "Conv", NULL, NULL, 0, x, w, b, NULL, alone);
    double err = conv_error(k, x, w, b, alone);
    CU_ASSERT(err < 1e-6);
    if (!(err < 1e-6) || getenv("TGC_TEST_VERBOSE") != NULL)
        printf("\n  C=%lld M=%lld %lldx%lld k %lldx%lld s %lld,%lld d %lld,%lld: relative error %.3g", (long long)k->c,
               (long long)k->m, (long long)h, (long long)k->w, (long long)kh, (long long)k->kw, (long long)k->sh,
               (long long)k->sw, (long long)k->dh, (long long)k->dw, err);
    for (int workers = 1; workers <= 3; workers += 2) {
        tgc_thread_pool *pool = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(workers, &pool), TGC_OK);
        run(k, "Conv", NULL, NULL, 0, x, w, b, pool, split);
        CU_ASSERT_EQUAL(memcmp(alone, split, ny * sizeof *alone), 0);
        tgc_thread_pool_free(pool);
    }
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    for (int pass = 0; pass < 2; pass++) {
        run_cached(k, "Conv", NULL, NULL, 0, x, w, b, NULL, &cache, split);
        CU_ASSERT_EQUAL(memcmp(alone, split, ny * sizeof *alone), 0);
    }
    tgc_kernel_cache_clear(&cache);
    free(x);
    free(w);
    free(b);
    free(alone);
    free(split);
}

/* {batch, C, M, H, W, kh, kw, sh, sw, dh, dw, {pads t, l, b, r}, one_d, bias} */
static void test_kernel_sizes(void) {
    const conv_case cases[] = {
        {1, 5, 5, 9, 11, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 0},  /* 1x1 */
        {1, 5, 5, 9, 11, 2, 2, 1, 1, 1, 1, {0, 1, 1, 0}, false, true, 0},  /* 2x2, pads on one side */
        {1, 7, 7, 12, 13, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},
        {1, 7, 7, 12, 13, 4, 4, 1, 1, 1, 1, {1, 2, 2, 1}, false, true, 0}, /* even kernel, uneven pads */
        {1, 6, 6, 15, 14, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, false, true, 0},
        {1, 3, 3, 14, 14, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, false, true, 0},
        {1, 4, 4, 10, 12, 3, 5, 1, 1, 1, 1, {1, 2, 1, 2}, false, true, 0}, /* 3x5 */
        {1, 4, 4, 10, 12, 5, 1, 1, 1, 1, 1, {2, 0, 2, 0}, false, false, 0}, /* 5x1, no bias */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

static void test_strides_dilations_pads(void) {
    const conv_case cases[] = {
        {1, 6, 6, 14, 14, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 0},  /* MobileNet's stride 2 */
        {1, 6, 6, 15, 17, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, false, true, 0},  /* odd sizes */
        {1, 5, 5, 11, 12, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, false, true, 0},  /* stride 2, left pad 0 */
        {1, 5, 5, 12, 13, 3, 3, 2, 2, 1, 1, {2, 2, 0, 0}, false, true, 0},  /* stride 2, left pad 2 */
        {1, 5, 5, 20, 22, 3, 3, 3, 3, 1, 1, {1, 1, 1, 1}, false, true, 0},  /* stride 3 */
        {1, 5, 5, 21, 19, 3, 3, 2, 3, 1, 1, {0, 2, 1, 0}, false, true, 0},  /* strides 2, 3, asymmetric pads */
        {1, 4, 4, 16, 16, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, false, true, 0},  /* dilation 2 */
        {1, 4, 4, 17, 18, 3, 3, 2, 2, 2, 2, {2, 1, 0, 2}, false, true, 0},  /* dilation and stride 2 */
        {1, 4, 4, 13, 11, 3, 2, 1, 1, 3, 2, {3, 0, 1, 2}, false, true, 0},  /* dilations 3, 2 */
        {1, 3, 3, 9, 9, 3, 3, 1, 1, 1, 1, {4, 5, 3, 6}, false, true, 0},    /* pads past the kernel */
        {1, 3, 3, 9, 9, 3, 3, 4, 4, 1, 1, {0, 0, 0, 0}, false, true, 0},    /* stride past the kernel */
        {1, 3, 3, 6, 5, 5, 5, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 0},    /* 2x1 output, no pads */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

/* Row method and lanes method (depthwise on at least a vector's worth of
 * channels, outputs up to 8 wide, or 16 when strided), channel counts
 * around the lane widths (4, 8, 16), widths below a vector. */
static void test_widths_and_channels(void) {
    const conv_case cases[] = {
        {1, 3, 3, 5, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},    /* one column */
        {1, 17, 17, 3, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},  /* 3x3 map, 17 channels */
        {1, 33, 33, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},  /* 7x7 */
        {1, 20, 20, 14, 14, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, false, true, 0},
        {1, 9, 9, 8, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},    /* fewer channels than lanes: rows */
        {1, 20, 20, 16, 16, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0}, /* 16 wide, stride 1: rows */
        {1, 20, 20, 32, 32, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 0}, /* 16 wide, stride 2: lanes */
        {1, 20, 20, 34, 34, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 0}, /* 17 wide, stride 2: rows */
        {1, 8, 8, 30, 37, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},  /* tiles and a tail */
        {1, 4, 4, 40, 70, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, false, true, 0},  /* ConvNeXt-like */
        {1, 3, 3, 100, 90, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 0}, /* bands over a plane */
        {1, 2, 2, 150, 150, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},
        {1, 16, 16, 120, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0}, /* tall, narrow: lanes in bands */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

static void test_multiplier_batch_1d(void) {
    const conv_case cases[] = {
        {1, 16, 32, 8, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},   /* M = 2C, lanes */
        {1, 3, 9, 11, 40, 3, 3, 2, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},   /* M = 3C, rows */
        {3, 5, 5, 9, 21, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},    /* a batch */
        {2, 18, 36, 7, 7, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, false, false, 0},  /* a batch, M = 2C, no bias */
        {1, 4, 4, 1, 50, 1, 5, 1, 1, 1, 1, {0, 2, 0, 2}, true, true, 0},     /* 1-D */
        {2, 6, 12, 1, 33, 1, 9, 1, 3, 1, 2, {0, 4, 0, 1}, true, true, 0},    /* 1-D, stride 3, dilation 2 */
        {1, 5, 5, 1, 12, 1, 3, 1, 2, 1, 1, {0, 1, 0, 1}, true, false, 0},    /* 1-D, short */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

/* Grouped Conv (ResNeXt's 32 groups of 4 to 32 channels) and Conv on a
 * few input channels (stems on RGB, 1x1 on up to 48 channels): output
 * channels a group in tiles of 4, 2 and 1. */
static void test_grouped_and_few_channels(void) {
    const conv_case cases[] = {
        {1, 8, 8, 12, 13, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 2},     /* 2 groups of 4 -> 4 */
        {1, 16, 24, 11, 30, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 4},   /* 4 -> 6: tiles 4, 2 */
        {1, 12, 9, 10, 10, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 3},    /* 4 -> 3: tiles 2, 1 */
        {2, 64, 64, 14, 14, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 2},   /* 32 a group */
        {1, 128, 128, 20, 20, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 32}, /* ResNeXt's first */
        {1, 256, 256, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, false, 32},  /* 8 a group, 7x7 */
        /* short rows as one long row a band (AVX-512: rows of 7 to 9 outputs) */
        {1, 64, 64, 14, 14, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 4},    /* to 7x7 at stride 2 */
        {1, 64, 32, 60, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 2},     /* 3 bands, 2 chunks of 8 */
        {1, 32, 32, 7, 7, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, false, true, 4},      /* 5x5 */
        {1, 16, 24, 7, 7, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, false, true, 2},      /* dilation 2 */
        {1, 24, 12, 9, 9, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 3},      /* 9 wide: 8 a group -> 4 */
        {1, 16, 24, 21, 55, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 1},    /* 55 wide: rows alone, 57 lanes of 64 */
        {1, 5, 12, 11, 24, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 1},     /* 24 wide: rows alone, 26 lanes of 32 */
        {1, 6, 9, 1, 40, 1, 5, 1, 2, 1, 2, {0, 3, 0, 1}, true, true, 3},        /* 1-D grouped */
        {1, 3, 16, 33, 35, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 1},     /* a 3x3 stem */
        {1, 3, 8, 32, 32, 4, 4, 4, 4, 1, 1, {0, 0, 0, 0}, false, true, 1},      /* a 4x4 patchify stem */
        {1, 3, 20, 45, 47, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}, false, true, 1},     /* ResNet's 7x7 stem */
        /* rows wide enough that a band is 4 times its halo (HALO_BANDS), the last band shorter */
        {1, 3, 8, 61, 200, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}, false, true, 1},     /* bands of 12 rows */
        {1, 64, 32, 58, 100, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 4},   /* 16 a group: bands of 4 */
        /* from the input planes (plane_rows): 8 and 12 a group at stride 2, left pads 1 and 0 */
        {1, 32, 32, 40, 112, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 4},   /* RegNet's stage entry */
        {1, 24, 26, 21, 60, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, false, true, 2},    /* 12 a group -> 13, 30 wide */
        {1, 16, 24, 20, 21, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1},    /* 1x1 on 16 channels */
        {2, 48, 10, 9, 9, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, false, 1},     /* 1x1 on 48: the most */
        {1, 24, 20, 50, 37, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1},    /* 1x1 in bands, tails */
        {1, 7, 9, 3, 22, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1},       /* 1x1, 66: a short tail */
        {1, 12, 16, 15, 15, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1},    /* 1x1 over 225: 8 x 3, then 2 + 1 */
        {1, 8, 12, 1, 70, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true, true, 1},       /* 1-D 1x1 */
        {1, 16, 24, 9, 9, 1, 1, 2, 2, 1, 1, {0, 0, 0, 0}, false, true, 1},      /* 1x1 at stride 2: packed */
        {1, 16, 24, 9, 9, 1, 1, 1, 1, 1, 1, {1, 0, 0, 1}, false, true, 1},      /* 1x1 with pads: packed */
        {1, 5, 7, 13, 12, 3, 3, 1, 2, 2, 1, {2, 1, 2, 0}, false, true, 1},      /* dilated, strided */
        {1, 1, 40, 1, 500, 1, 10, 1, 5, 1, 1, {0, 0, 0, 0}, true, true, 1},     /* 1-D, one piece: channels split */
        {2, 2, 13, 1, 300, 1, 7, 1, 2, 1, 1, {0, 3, 0, 3}, true, true, 1},      /* split 8 + 5 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

/* Stems at strides 3 and 4 by channels (conv_channel_lanes.h, on padded
 * rows): output channel counts that leave a partial block and a lone
 * block after the pairs (at 16, 8 and 4 lanes), outputs that leave a
 * partial tile of positions, several bands and chunks of channels, pads
 * past the first and last columns, dilation, a batch, no bias. */
static void test_stems_by_channels(void) {
    const conv_case cases[] = {
        {1, 3, 40, 47, 51, 11, 11, 4, 4, 1, 1, {2, 2, 2, 2}, false, true, 1},  /* AlexNet's: 16 + 16, then 8 */
        {1, 3, 33, 32, 36, 4, 4, 4, 4, 1, 1, {0, 0, 0, 0}, false, true, 1},    /* patchify: 2 blocks and 1 */
        {2, 3, 70, 30, 30, 3, 3, 3, 3, 1, 1, {1, 1, 1, 1}, false, false, 1},   /* stride 3, chunks, no bias */
        {1, 4, 24, 61, 150, 5, 5, 3, 4, 2, 1, {4, 0, 1, 6}, false, true, 1},   /* strides 3, 4, dilated, pads */
        {1, 1, 16, 40, 41, 8, 8, 4, 4, 1, 1, {3, 3, 3, 3}, false, true, 1},    /* one channel: pads past */
        {1, 2, 17, 9, 200, 3, 7, 4, 3, 1, 2, {1, 5, 1, 5}, false, true, 1},    /* one output row, 17 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

/* An empty batch and an empty channel axis: nothing to compute, success. */
static void test_empty(void) {
    conv_case k = {0, 4, 4, 8, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0};
    float x[1] = {0}, w[36], b[4] = {0}, y[1];
    for (int i = 0; i < 36; i++) w[i] = 1.0f;
    run(&k, "Conv", NULL, NULL, 0, x, w, b, NULL, y);
}

/* Conv with an absorbed activation, on the direct path, is bitwise Conv
 * then the activation's own kernel, for both methods. */
static void test_fused_activations(void) {
    static const struct {
        const char *op;
        double params[2];
        int n;
    } acts[] = {{"Relu", {0, 0}, 0},    {"Clip", {0.0, 6.0}, 2}, {"HardSwish", {0, 0}, 0},
                {"Sigmoid", {0, 0}, 0}, {"Tanh", {0, 0}, 0},     {"LeakyRelu", {0.1, 0}, 1},
                {"Gelu", {0, 0}, 0},    {"Mish", {0, 0}, 0}};
    const conv_case shapes[] = {
        {1, 19, 19, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0},   /* lanes */
        {1, 5, 10, 12, 33, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 0}, /* rows, M = 2C */
        {1, 3, 24, 40, 45, 5, 5, 4, 4, 1, 1, {2, 2, 2, 2}, false, true, 1}, /* rows by channels */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const conv_case *k = &shapes[s];
        size_t nx = (size_t)(k->c * k->h * k->w), nw = (size_t)(k->m * (k->c / conv_group(k)) * k->kh * k->kw);
        int64_t ny = k->m * conv_oh(k) * conv_ow(k), yd[4] = {1, k->m, conv_oh(k), conv_ow(k)};
        uint32_t seed = 99;
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc((size_t)k->m * sizeof *b);
        float *conv = malloc((size_t)ny * sizeof *conv), *fused = malloc((size_t)ny * sizeof *fused);
        CU_ASSERT_FATAL(x && w && b && conv && fused);
        for (size_t i = 0; i < nx; i++) x[i] = 4.0f * lcg(&seed);
        for (size_t i = 0; i < nw; i++) w[i] = lcg(&seed);
        for (int64_t i = 0; i < k->m; i++) b[i] = lcg(&seed);
        run(k, "Conv", NULL, NULL, 0, x, w, b, NULL, conv);
        tgc_thread_pool *pool = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &pool), TGC_OK);
        for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
            run(k, "Conv", acts[a].op, acts[a].params, acts[a].n, x, w, b, pool, fused);
            /* the activation's kernel on Conv's output */
            nn_fixture f;
            nn_begin(&f, acts[a].op, "conv_direct");
            nn_in_dims(&f, TGC_FLOAT32, 4, yd, conv);
            if (strcmp(acts[a].op, "Clip") == 0) {
                float lo = (float)acts[a].params[0], hi = (float)acts[a].params[1];
                nn_in_dims(&f, TGC_FLOAT32, 0, NULL, &lo);
                nn_in_dims(&f, TGC_FLOAT32, 0, NULL, &hi);
            }
            if (strcmp(acts[a].op, "LeakyRelu") == 0) nn_float(&f, "alpha", acts[a].params[0]);
            nn_out_dims(&f, TGC_FLOAT32, 4, yd);
            CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
            int64_t differ = 0;
            for (int64_t i = 0; i < ny; i++) {
                float want = nn_out_f32(&f, 0, i);
                differ += memcmp(&want, &fused[i], sizeof want) != 0;
            }
            CU_ASSERT_EQUAL(differ, 0);
            if (differ != 0) printf("\n  %s: %lld outputs differ", acts[a].op, (long long)differ);
            nn_end(&f);
        }
        tgc_thread_pool_free(pool);
        free(x);
        free(w);
        free(b);
        free(conv);
        free(fused);
    }
}

/* Which geometries take the direct path. */
static void test_applies(void) {
    tgc_conv_geometry g = {.group = 32, .batch = 1, .channels = 32, .m_count = 32, .cg = 1, .kk_count = 9};
    g.w.n = 2;
    for (int a = 0; a < 2; a++) {
        g.w.in[a] = 56;
        g.w.out[a] = 56;
        g.w.kernel[a] = 3;
        g.w.strides[a] = 1;
        g.w.dilations[a] = 1;
        g.w.pads[a] = g.w.pads[2 + a] = 1;
    }
    CU_ASSERT(tgc_cpu_conv_direct_applies(&g)); /* depthwise */
    tgc_conv_geometry k = g;
    k.group = 4;
    k.cg = 32;
    CU_ASSERT(tgc_cpu_conv_direct_applies(&k)); /* 32 channels a group */
    k.group = 2;
    k.cg = 64;
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&k)); /* 64: im2col */
    k.group = 1;
    k.cg = 5;
    CU_ASSERT(tgc_cpu_conv_direct_applies(&k)); /* 45 taps */
    /* 3x3 at stride 1 on up to 24 channels: direct with AVX-512, else Winograd or im2col */
    bool wide = strcmp(tgc_cpu_ew_loops()->isa, "avx512") == 0;
    k.cg = 6;
    CU_ASSERT_EQUAL(tgc_cpu_conv_direct_applies(&k), wide);
    k.cg = 24;
    CU_ASSERT_EQUAL(tgc_cpu_conv_direct_applies(&k), wide);
    k.cg = 25;
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&k)); /* Winograd */
    k.cg = 6;
    k.w.strides[0] = k.w.strides[1] = 2;
    k.w.out[0] = k.w.out[1] = 28;
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&k)); /* 54 taps at stride 2: GEMM */
    k = g;
    k.group = 1;
    k.cg = 4;
    k.kk_count = 49;
    CU_ASSERT(tgc_cpu_conv_direct_applies(&k)); /* 7x7 on 4 channels: an image stem */
    k.cg = 48;
    k.kk_count = 1;
    CU_ASSERT(tgc_cpu_conv_direct_applies(&k)); /* 1x1 on 48 channels */
    k.cg = 49;
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&k));
    tgc_conv_geometry far = g; /* pads and a stride of 2^40: 3 output rows from a padded plane of 2^41: im2col */
    far.w.pads[0] = far.w.pads[2] = (int64_t)1 << 40;
    far.w.strides[0] = (int64_t)1 << 40;
    far.w.out[0] = 3;
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&far));
    far.w.strides[0] = (int64_t)1 << 62; /* products past int64 */
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&far));
    tgc_conv_geometry three = g;
    three.w.n = 3;
    CU_ASSERT(!tgc_cpu_conv_direct_applies(&three));
}

/* A stem by channels keeps W transposed in the node's kernel cache, in
 * place of W: the bytes the footprint predicts (W's 40 output channels
 * rounded up to whole vectors, by 3 x 11 x 11 taps), exactly; none when W
 * is not a weight. */
static void test_channels_cache_footprint(void) {
    const conv_case k = {1, 3, 40, 47, 51, 11, 11, 4, 4, 1, 1, {2, 2, 2, 2}, false, true, 1};
    tgc_conv_geometry g = {.has_bias = true, .group = 1, .batch = 1, .channels = 3, .m_count = 40, .cg = 3,
                           .kk_count = 121};
    g.w.n = 2;
    for (int a = 0; a < 2; a++) {
        g.w.in[a] = a == 0 ? k.h : k.w;
        g.w.out[a] = a == 0 ? conv_oh(&k) : conv_ow(&k);
        g.w.kernel[a] = 11;
        g.w.strides[a] = 4;
        g.w.dilations[a] = 1;
        g.w.pads[a] = g.w.pads[2 + a] = 2;
    }
    CU_ASSERT_FATAL(tgc_cpu_conv_direct_applies(&g));
    const char *isa = tgc_cpu_ew_loops()->isa;
    int64_t lanes = strcmp(isa, "avx512") == 0 ? 16 : strcmp(isa, "avx2") == 0 ? 8 : 4;
    tgc_kernel_footprint fp = {0}, none = {0};
    tgc_cpu_conv_direct_footprint(&g, 0x6, &fp);
    tgc_cpu_conv_direct_footprint(&g, 0x4, &none);
    CU_ASSERT_EQUAL(fp.cache_bytes, (40 + lanes - 1) / lanes * lanes * 363 * (int64_t)sizeof(float));
    CU_ASSERT_EQUAL(fp.replaces_inputs, 1u << 1);
    CU_ASSERT_EQUAL(none.cache_bytes, 0);
    size_t nx = 3 * 47 * 51, nw = 40 * 363, ny = (size_t)(40 * conv_oh(&k) * conv_ow(&k));
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc(40 * sizeof *b);
    float *y = malloc(ny * sizeof *y);
    CU_ASSERT_FATAL(x && w && b && y);
    uint32_t seed = 5;
    for (size_t i = 0; i < nx; i++) x[i] = lcg(&seed);
    for (size_t i = 0; i < nw; i++) w[i] = lcg(&seed);
    for (int i = 0; i < 40; i++) b[i] = lcg(&seed);
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    run_cached(&k, "Conv", NULL, NULL, 0, x, w, b, NULL, &cache, y);
    CU_ASSERT_EQUAL((int64_t)tgc_kernel_cache_bytes(&cache, 1), fp.cache_bytes);
    CU_ASSERT(conv_error(&k, x, w, b, y) < 1e-6);
    tgc_kernel_cache_clear(&cache);
    free(x), free(w), free(b), free(y);
}

/* The vector table of each ISA this cpu runs, NULL past the last. */
static const tgc_conv_isa *runnable_isa(int i) {
    const tgc_conv_isa *all[3] = {&tgc_conv_isa_sse2, &tgc_conv_isa_avx2, &tgc_conv_isa_avx512};
    int n = 0;
    tgc_cpu_ew_all_loops(&n); /* the ISAs this cpu runs, in the same order (cpuid) */
    return i < n ? all[i] : NULL;
}

/* dw_rows against rows on the same job, bit for bit, for every window it
 * takes (k 3, 5, 7 at stride 1; 3, 5 at stride 2), with two output channels
 * (a multiplier), a bias, a row count that leaves a tile tail and widths
 * that leave a partial vector, on phase planes laid out as conv_direct.c
 * packs them (plane (a, b) at ((a * s) + b) * plane_floats; tap (i, j) at
 * its plane, row i / s, column j / s), the block aligned and not. */
static void test_dw_rows_bitwise(void) {
    static const int windows[][2] = {{3, 1}, {5, 1}, {7, 1}, {3, 2}, {5, 2}};
    for (int isa_i = 0; runnable_isa(isa_i) != NULL; isa_i++) {
        const tgc_conv_isa *isa = runnable_isa(isa_i);
        for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++)
            for (int64_t n = 5; n <= 37; n += 16)
                for (int shift = 0; shift < 2; shift++) {
                    int k = windows[wi][0], s = windows[wi][1];
                    int64_t rows = 7, qmax = (k - 1) / s, lc = n + qmax + 3 * shift;
                    int64_t plane_floats = (rows + qmax) * lc, taps = k * k, mb = 2;
                    size_t block_floats = (size_t)(s * s * plane_floats + 64);
                    /* aligned_alloc wants a multiple of the alignment */
                    float *store = aligned_alloc(64, (block_floats + 16 + 15) / 16 * 16 * sizeof(float));
                    float *in = store + shift, *w = malloc((size_t)(mb * taps) * sizeof *w);
                    float bias[2], *y0 = calloc((size_t)(mb * rows * n), sizeof *y0);
                    float *y1 = calloc((size_t)(mb * rows * n), sizeof *y1);
                    int64_t *off = malloc((size_t)taps * sizeof *off);
                    CU_ASSERT_FATAL(store && w && y0 && y1 && off);
                    uint32_t seed = (uint32_t)(k * 31 + s * 7 + n);
                    for (size_t i = 0; i < block_floats; i++) in[i] = lcg(&seed);
                    for (int64_t i = 0; i < mb * taps; i++) w[i] = lcg(&seed);
                    bias[0] = lcg(&seed), bias[1] = lcg(&seed);
                    for (int i = 0; i < k; i++)
                        for (int j = 0; j < k; j++)
                            off[i * k + j] = ((i % s) * s + j % s) * plane_floats + i / s * lc + j / s;
                    tgc_conv_rows_job job = {.in = in, .in_rs = lc, .off = off, .taps = taps, .w = w, .bias = bias,
                                             .mb = mb, .out = y0, .out_cs = rows * n, .out_rs = n, .rows = rows,
                                             .n = n};
                    isa->rows(&job);
                    job.out = y1;
                    isa->dw_rows(&job, k, s);
                    bool same = memcmp(y0, y1, (size_t)(mb * rows * n) * sizeof *y0) == 0;
                    CU_ASSERT(same);
                    if (!same)
                        printf("\n  %s: %dx%d stride %d, %lld wide, shift %d: dw_rows differs from rows", isa->isa, k,
                               k, s, (long long)n, shift);
                    free(store), free(w), free(y0), free(y1), free(off);
                }
    }
}

/* rows_by_channels against rows, bit for bit, for isa: mb output
 * channels (every count up to three blocks of lanes and one past), n
 * positions (a partial tile and more), rows 3 apart, inputs in_ps apart;
 * rows runs on a copy with each tap's inputs side by side. */
static void by_channels_case(const tgc_conv_isa *isa, int64_t mb, int64_t n, int64_t in_ps, bool clamp) {
    const int64_t taps = 7, rows = 3, in_rs = 97, lanes = isa->lanes, blocks = (mb + lanes - 1) / lanes;
    const int64_t off[7] = {0, 1, 5, 40, 41, 90, 200}; /* every tap's start in the block */
    int64_t in_floats = (rows - 1) * in_rs + off[taps - 1] + (n + lanes) * in_ps + 1, ny = mb * rows * n;
    float *in = malloc((size_t)in_floats * sizeof *in), *w = malloc((size_t)(mb * taps) * sizeof *w);
    float *wt = calloc((size_t)(blocks * lanes * taps), sizeof *wt), *bias = malloc((size_t)mb * sizeof *bias);
    float *side = malloc((size_t)(taps * rows * n + lanes) * sizeof *side);
    float *y0 = calloc((size_t)ny, sizeof *y0), *y1 = calloc((size_t)ny, sizeof *y1);
    int64_t side_off[7];
    CU_ASSERT_FATAL(in && w && wt && bias && side && y0 && y1);
    uint32_t seed = (uint32_t)(mb * 131 + n * 7 + in_ps);
    for (int64_t i = 0; i < in_floats; i++) in[i] = 3.0f * lcg(&seed);
    for (int64_t i = 0; i < mb * taps; i++) w[i] = lcg(&seed);
    for (int64_t i = 0; i < mb; i++) bias[i] = lcg(&seed);
    for (int64_t k = 0; k < mb; k++)
        for (int64_t t = 0; t < taps; t++) wt[(k / lanes * taps + t) * lanes + k % lanes] = w[k * taps + t];
    for (int64_t t = 0; t < taps; t++) {
        side_off[t] = t * rows * n;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t f = 0; f < n; f++) side[side_off[t] + r * n + f] = in[r * in_rs + off[t] + f * in_ps];
    }
    tgc_conv_rows_job job = {.in = side, .in_rs = n, .off = side_off, .taps = taps, .w = w, .bias = bias,
                             .mb = mb, .out = y0, .out_cs = rows * n, .out_rs = n, .rows = rows, .n = n,
                             .clamp = clamp, .lo = -0.5f, .hi = 1.0f};
    isa->rows(&job);
    job.in = in, job.in_rs = in_rs, job.in_ps = in_ps, job.off = off, job.w = NULL, job.out = y1;
    isa->rows_by_channels(&job, wt);
    bool same = memcmp(y0, y1, (size_t)ny * sizeof *y0) == 0;
    CU_ASSERT(same);
    if (!same)
        printf("\n  %s: %lld channels, %lld positions %lld apart%s: rows_by_channels differs", isa->isa,
               (long long)mb, (long long)n, (long long)in_ps, clamp ? ", clamped" : "");
    free(in), free(w), free(wt), free(bias), free(side), free(y0), free(y1);
}

static void test_by_channels_bitwise(void) {
    for (int isa_i = 0; runnable_isa(isa_i) != NULL; isa_i++) {
        const tgc_conv_isa *isa = runnable_isa(isa_i);
        for (int64_t mb = 1; mb <= 3 * isa->lanes + 1; mb++)
            for (int64_t n = 1; n <= 29; n += 14)
                for (int64_t in_ps = 1; in_ps <= 4; in_ps += 3) by_channels_case(isa, mb, n, in_ps, mb % 2 == 0);
    }
}

/* One case of test_dw_plane_bitwise and test_plane_rows_bitwise: cin
 * input planes 13 high and wd wide, mb output channels, a k x k window at
 * stride st, pads ph (top) and pw (left, and as much right), the band of
 * up to 5 output rows from oh0, by isa's dw_plane (cin 1) or plane_rows
 * on the planes against its rows on the phase planes conv_direct.c would
 * pack from them (zeros for the padding), bit for bit. */
static void plane_case(const tgc_conv_isa *isa, int64_t cin, int64_t mb, int k, int st, int64_t ph, int64_t pw,
                       int64_t wd, int64_t oh0) {
    int64_t h = 13, taps = cin * k * k, qmax = (k - 1) / st;
    int64_t oh = (h + 2 * ph - k) / st + 1, ow = (wd + 2 * pw - k) / st + 1, rows = oh - oh0 < 5 ? oh - oh0 : 5;
    int64_t lc = ow + qmax, plane_floats = (rows + qmax) * lc, ny = mb * rows * ow;
    size_t block_floats = (size_t)(cin * st * st * plane_floats + 64); /* rows reads up to a vector past */
    float *x = malloc((size_t)(cin * h * wd) * sizeof *x), *w = malloc((size_t)(mb * taps) * sizeof *w);
    float *bias = malloc((size_t)mb * sizeof *bias), *block = calloc(block_floats, sizeof *block);
    float *y0 = calloc((size_t)ny, sizeof *y0), *y1 = calloc((size_t)ny, sizeof *y1);
    int64_t *off = malloc((size_t)taps * sizeof *off);
    CU_ASSERT_FATAL(x && w && bias && block && y0 && y1 && off);
    uint32_t seed = (uint32_t)(cin * 131 + mb * 61 + k * 31 + st * 17 + pw * 7 + ph * 3 + wd);
    for (int64_t i = 0; i < cin * h * wd; i++) x[i] = lcg(&seed);
    for (int64_t i = 0; i < mb * taps; i++) w[i] = lcg(&seed);
    for (int64_t i = 0; i < mb; i++) bias[i] = lcg(&seed);
    /* channel c's phase plane (a, b), row u, column v: padded row st (oh0 + u) + a, padded column st v + b */
    for (int64_t c = 0; c < cin; c++)
        for (int64_t a = 0; a < st; a++)
            for (int64_t b = 0; b < st; b++)
                for (int64_t u = 0; u < rows + qmax; u++)
                    for (int64_t v = 0; v < lc; v++) {
                        int64_t ih = st * (oh0 + u) + a - ph, iw = st * v + b - pw;
                        if (ih >= 0 && ih < h && iw >= 0 && iw < wd)
                            block[((c * st + a) * st + b) * plane_floats + u * lc + v] = x[(c * h + ih) * wd + iw];
                    }
    for (int64_t c = 0, t = 0; c < cin; c++)
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++, t++)
                off[t] = ((c * st + i % st) * st + j % st) * plane_floats + i / st * lc + j / st;
    tgc_conv_rows_job job = {.in = block, .in_rs = lc, .off = off, .taps = taps, .w = w, .bias = bias, .mb = mb,
                             .out = y0, .out_cs = rows * ow, .out_rs = ow, .rows = rows, .n = ow};
    isa->rows(&job);
    tgc_conv_dw_plane_job pj = {.x = x, .h = h, .wd = wd, .ph = ph, .pw = pw, .cin = cin, .in_cs = h * wd,
                                .oh0 = oh0, .rows = rows, .ow = ow, .w = w, .bias = bias, .mb = mb, .out = y1,
                                .out_cs = rows * ow, .out_rs = ow};
    (cin == 1 ? isa->dw_plane : isa->plane_rows)(&pj, k, st);
    bool same = memcmp(y0, y1, (size_t)ny * sizeof *y0) == 0;
    CU_ASSERT(same);
    if (!same)
        printf("\n  %s: %lld -> %lld, %dx%d stride %d, pads %lld top and %lld left, %lld wide, from row %lld: %s differs",
               isa->isa, (long long)cin, (long long)mb, k, k, st, (long long)ph, (long long)pw, (long long)wd,
               (long long)oh0, cin == 1 ? "dw_plane" : "plane_rows");
    free(x), free(w), free(bias), free(block), free(y0), free(y1), free(off);
}

/* dw_plane on an input plane against rows on the phase planes
 * conv_direct.c would pack from it (zeros for the padding), bit for bit:
 * every window, stride and left pad it takes (tgc_conv_dw_plane_applies),
 * top pads 0 .. 2, widths that end on, before and past a vector (partial
 * loads at the right edge), bands that start inside the plane and leave a
 * tile tail. */
static void test_dw_plane_bitwise(void) {
    static const int64_t widths[] = {9, 32, 33, 67};
    for (int isa_i = 0; runnable_isa(isa_i) != NULL; isa_i++)
        for (int st = 1; st <= 2; st++)
            for (int k = 3; k <= 7; k += 2)
                for (int64_t pw = 0; pw <= k / 2; pw++)
                    for (int64_t ph = 0; ph <= 2 && tgc_conv_dw_plane_applies(k, st, pw); ph++)
                        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
                            for (int64_t oh0 = 0; oh0 <= 2; oh0 += 2)
                                plane_case(runnable_isa(isa_i), 1, 2, k, st, ph, pw, widths[wi], oh0);
}

/* plane_rows on the input planes against rows on the phase planes
 * conv_direct.c would pack from them, bit for bit: 3x3 at stride 2, left
 * pads 0 and 1, top pads 0 .. 2, 8 and 9 input channels, output channel
 * counts that leave every tile height (8, 4, 2, 1), outputs of 5 to 50
 * columns (one vector or less, a whole one, two with a partial second,
 * more), bands that start inside the plane. */
static void test_plane_rows_bitwise(void) {
    static const int64_t widths[] = {9, 32, 33, 67, 100};
    for (int isa_i = 0; runnable_isa(isa_i) != NULL; isa_i++)
        for (int64_t pw = 0; pw <= 1; pw++)
            for (int64_t ph = 0; ph <= 2; ph++)
                for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
                    for (int64_t oh0 = 0; oh0 <= 2; oh0 += 2) {
                        CU_ASSERT(tgc_conv_plane_rows_applies(3, 2, pw));
                        plane_case(runnable_isa(isa_i), 8 + oh0 / 2, 15 - 2 * ph, 3, 2, ph, pw, widths[wi], oh0);
                    }
    CU_ASSERT(!tgc_conv_plane_rows_applies(3, 1, 1) && !tgc_conv_plane_rows_applies(3, 2, 2));
}

TGC_TEST_MAIN("cpu direct convolution", {"kernel sizes 1x1 .. 7x7", test_kernel_sizes},
              {"strides, dilations, pads", test_strides_dilations_pads},
              {"widths and channel counts", test_widths_and_channels},
              {"channel multiplier, batch, 1-D", test_multiplier_batch_1d},
              {"grouped, few input channels", test_grouped_and_few_channels},
              {"stems by channels", test_stems_by_channels}, {"empty batch", test_empty},
              {"fused activations: bitwise Conv then the op", test_fused_activations},
              {"which geometries apply", test_applies},
              {"a stem's weights by channels: the cache the footprint predicts", test_channels_cache_footprint},
              {"depthwise rows kernel: bitwise the general one", test_dw_rows_bitwise},
              {"depthwise from the input plane: bitwise the general one", test_dw_plane_bitwise},
              {"dense and grouped from the input planes: bitwise the general one", test_plane_rows_bitwise},
              {"output channels in the lanes: bitwise the general one", test_by_channels_bitwise})
