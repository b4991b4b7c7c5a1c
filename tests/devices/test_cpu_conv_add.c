/* The cpu's _ConvAdd (devices/cpu/kernels_conv.c): Conv(x, W, B) + Z in
 * each of Conv's ways, Z added where the way writes its outputs, before an
 * absorbed activation. For a geometry that takes each way (the kernel's
 * own report, tgc_kernel_ctx.impl, is checked; oneDNN's ways only where
 * it is there), Conv alone is first
 * checked against a direct convolution written again here in double;
 * then _ConvAdd, with and without a Relu, must give the bits of Conv's
 * output plus Z rounded to float32 (what the unfused Add computes) through
 * the Relu, alone and over pools of 1 and 3 workers. A Z of another
 * shape is refused with an error, not read. */
#include "tests/devices/conv_case.h"
#include "tests/devices/kernel_fixture_nn.h"

#include "devices/cpu/dnnl_conv.h"
#include "devices/cpu/ew.h"
#include "graph/elementwise.h"

#include <stdlib.h>

static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

/* A 2-D Conv (g) and the way the kernel must report for it. */
typedef struct add_case {
    const char *way;
    conv_case g;
    bool w_const; /* W (and B) session constants: the ways that pack W once */
} add_case;

static int64_t y_count(const conv_case *k) { return k->batch * k->m * conv_oh(k) * conv_ow(k); }

/* Runs op (Conv, or _ConvAdd with z) on k's tensors over pool (NULL:
 * alone), with an absorbed Relu when relu; y gets the output. Returns the
 * status; *way the impl reported. */
static tgc_status run(const add_case *c, const char *op, const float *x, const float *w, const float *b,
                      const float *z, const int64_t *z_dims, bool relu, tgc_thread_pool *pool, float *y,
                      const char **way) {
    const conv_case *k = &c->g;
    nn_fixture f;
    nn_begin(&f, op, "conv_add");
    int64_t xd[4] = {k->batch, k->c, k->h, k->w}, wd[4] = {k->m, k->c / conv_group(k), k->kh, k->kw};
    int64_t yd[4] = {k->batch, k->m, conv_oh(k), conv_ow(k)};
    nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
    nn_in_dims(&f, TGC_FLOAT32, 4, wd, w);
    if (k->bias) nn_in_dims(&f, TGC_FLOAT32, 1, &k->m, b);
    else if (z != NULL) nn_in_omitted(&f);
    if (z != NULL) nn_in_dims(&f, TGC_FLOAT32, 4, z_dims != NULL ? z_dims : yd, z);
    NN_INTS(&f, "pads", k->pads[0], k->pads[1], k->pads[2], k->pads[3]);
    NN_INTS(&f, "strides", k->sh, k->sw);
    NN_INTS(&f, "dilations", k->dh, k->dw);
    NN_INTS(&f, "kernel_shape", k->kh, k->kw);
    nn_int(&f, "group", conv_group(k));
    nn_out_dims(&f, TGC_FLOAT32, 4, yd);
    tgc_fused_act act = {.row = (int)tgc_ew_id(tgc_ew_find("Relu"))};
    f.fused_act = relu ? &act : NULL;
    f.pool = pool;
    tgc_kernel_cache cache;
    tgc_kernel_cache_init(&cache);
    if (c->w_const) {
        f.cache = &cache;
        f.const_inputs = k->bias ? 0x6 : 0x2; /* W and B are weights */
    }
    tgc_status st = nn_run(&f);
    *way = f.impl;
    if (st == TGC_OK)
        for (int64_t i = 0; i < y_count(k); i++) y[i] = nn_out_f32(&f, 0, i);
    else if (getenv("TGC_TEST_VERBOSE") != NULL)
        printf("\n  %s: %s", op, f.err);
    tgc_kernel_cache_clear(&cache);
    nn_end(&f);
    return st;
}

static void check(const add_case *c) {
    const conv_case *k = &c->g;
    int64_t ny = y_count(k), nx = k->batch * k->c * k->h * k->w, nw = k->m * (k->c / conv_group(k)) * k->kh * k->kw;
    uint32_t seed = (uint32_t)(k->c * 131 + k->h * 7 + k->kh);
    float *x = malloc((size_t)(nx + 1) * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    float *b = malloc((size_t)k->m * sizeof *b), *z = malloc((size_t)ny * sizeof *z);
    float *conv = malloc((size_t)ny * sizeof *conv), *got = malloc((size_t)ny * sizeof *got);
    float *want = malloc((size_t)ny * sizeof *want);
    CU_ASSERT_FATAL(x && w && b && z && conv && got && want);
    for (int64_t i = 0; i < nx; i++) x[i] = lcg(&seed);
    for (int64_t i = 0; i < nw; i++) w[i] = lcg(&seed);
    for (int64_t i = 0; i < k->m; i++) b[i] = lcg(&seed);
    for (int64_t i = 0; i < ny; i++) z[i] = lcg(&seed) * 4.0f;

    const char *way = NULL;
    CU_ASSERT_EQUAL_FATAL(run(c, "Conv", x, w, b, NULL, NULL, false, NULL, conv, &way), TGC_OK);
    bool way_here = strstr(c->way, "onednn") == NULL || tgc_dnnl_conv_available(); /* else another way's bits */
    CU_ASSERT(way != NULL && (!way_here || strcmp(way, c->way) == 0));
    if (way_here && (way == NULL || strcmp(way, c->way) != 0)) printf("\n  expected way '%s', ran '%s'", c->way, way);
    const char *conv_way = way;
    double err = conv_error(k, x, w, b, conv);
    CU_ASSERT(err < 1e-5);
    if (!(err < 1e-5)) printf("\n  %s: Conv's relative error %.3g", c->way, err);
    for (int relu = 0; relu < 2; relu++) {
        for (int64_t i = 0; i < ny; i++) {
            float s = conv[i] + z[i]; /* the unfused Add's float32 sum */
            want[i] = relu && !(s > 0.0f) ? 0.0f : s;
        }
        for (int workers = 0; workers <= 3; workers += 1 + (workers > 0)) { /* alone, 1, 3 */
            tgc_thread_pool *pool = NULL;
            if (workers > 0) CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(workers, &pool), TGC_OK);
            memset(got, 0xff, (size_t)ny * sizeof *got);
            CU_ASSERT_EQUAL(run(c, "_ConvAdd", x, w, b, z, NULL, relu, pool, got, &way), TGC_OK);
            CU_ASSERT(way != NULL && conv_way != NULL && strcmp(way, conv_way) == 0); /* Conv's own way */
            bool same = memcmp(got, want, (size_t)ny * sizeof *got) == 0;
            CU_ASSERT(same);
            if (!same) printf("\n  %s, relu %d, %d workers: not Conv + Z", c->way, relu, workers);
            if (pool != NULL) tgc_thread_pool_free(pool);
        }
    }
    free(x), free(w), free(b), free(z), free(conv), free(got), free(want);
}

/* {way, {batch, C, M, H, W, kh, kw, sh, sw, dh, dw, pads, 1-D, bias, group (0: depthwise)}, W constant} */
static const add_case CASES[] = {
    {"pointwise gemm", {2, 128, 40, 20, 20, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1}, false},
    {"im2col + gemm", {1, 24, 40, 21, 21, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, true, 1}, false},
    {"winograd f(2x2,3x3)", {1, 64, 48, 30, 30, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 1}, false},
    /* depthwise: rows in registers, and on 7x7 a channel a lane */
    {"direct", {2, 16, 16, 15, 15, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0}, false},
    {"direct", {1, 32, 32, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, true, 0}, true},
    {"onednn conv nhwc copies", {1, 64, 64, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, false, 1}, true},
    {"small map onednn, channels in lanes", {1, 64, 96, 7, 7, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1}, true},
};

static void test_each_way(void) {
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) check(&CASES[i]);
}

/* A Z of another shape than Y's: a clean failure, nothing read. */
static void test_z_shape(void) {
    const add_case k = {"pointwise gemm", {1, 8, 8, 4, 4, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, true, 1}, false};
    float x[128], w[64], b[8], z[128], y[128];
    for (int i = 0; i < 128; i++) x[i] = (float)i, z[i] = 1.0f;
    for (int i = 0; i < 64; i++) w[i] = 0.5f;
    for (int i = 0; i < 8; i++) b[i] = 0.0f;
    const int64_t short_z[4] = {1, 8, 4, 2};
    const char *way;
    CU_ASSERT_NOT_EQUAL(run(&k, "_ConvAdd", x, w, b, z, short_z, false, NULL, y, &way), TGC_OK);
}

TGC_TEST_MAIN("cpu conv + residual (_ConvAdd)", {"each of Conv's ways: bitwise Conv then Add", test_each_way},
              {"Z of another shape", test_z_shape})
