/* The gpu (OpenCL) nn kernels (devices/opencl/kernels_nn.c,
 * kernels_gemm_cl.c, kernels/nn.cl) against the cpu kernels of the same
 * ops, on seeded random inputs (tests/devices/gpu_fixture_nn.h): MatMul,
 * Gemm, Conv, MaxPool, AveragePool, GlobalAveragePool, BatchNormalization,
 * LayerNormalization, with the attribute combinations the cpu suite
 * covers, empty tensors, errors, and the device's OpenCL object counters.
 * Without an OpenCL device every case passes after a notice. */
#include "tests/devices/gpu_fixture_nn.h"

#include "devices/opencl/gemm_tiles.h"
#include "graph/elementwise.h"
#include "support/settings.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#define TOL_SUM 1e-4 /* absolute: a dot product or a convolution's sum */
#define TOL 1e-5     /* relative elsewhere */

/* ---- Registry ------------------------------------------------------------------------ */

static void test_registry(void) {
    static const char *const ops[] = {"MatMul", "Gemm", "Conv", "MaxPool", "AveragePool",
                                      "GlobalAveragePool", "BatchNormalization", "LayerNormalization"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const tgc_kernel_def *k = tgc_kernel_find(ops[i], TGC_DEVICE_GPU, TGC_FLOAT32);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_PTR_NOT_EQUAL(k, tgc_kernel_find(ops[i], TGC_DEVICE_CPU, TGC_FLOAT32));
        CU_ASSERT_EQUAL(k->dtypes[0], TGC_FLOAT32);
        CU_ASSERT_EQUAL(k->dtypes[1], TGC_FLOAT16); /* stored as half, computed in float32 */
        CU_ASSERT_EQUAL(k->dtypes[2], TGC_DTYPE_INVALID);
        CU_ASSERT_PTR_EQUAL(tgc_kernel_find(ops[i], TGC_DEVICE_GPU, TGC_FLOAT16), k);
        CU_ASSERT_EQUAL(k->host_inputs, 0);
        CU_ASSERT_EQUAL(k->host_outputs, 0);
        CU_ASSERT_EQUAL(k->forward_input, strcmp(ops[i], "BatchNormalization") == 0 ? 0 : -1);
        CU_ASSERT_PTR_NULL(tgc_kernel_find(ops[i], TGC_DEVICE_GPU, TGC_INT32));
    }
}

/* ---- MatMul ---------------------------------------------------------------------------- */

/* A [ra: a] x B [rb: b] -> Y [ry: y]. */
static void matmul_case(unsigned seed, int ra, const int64_t *a, int rb, const int64_t *b, int ry, const int64_t *y) {
    gn_fixture f;
    if (!gn_begin(&f, "MatMul", seed)) return;
    gn_in_range(&f, -1.0f, 1.0f, ra, a);
    gn_in_range(&f, -1.0f, 1.0f, rb, b);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

#define MATMUL(seed, a, b, y) matmul_case((seed), GN_DIMS a, GN_DIMS b, GN_DIMS y)

static void test_matmul_2d(void) { MATMUL(1, (7, 13), (13, 5), (7, 5)); }
static void test_matmul_1d_2d(void) { MATMUL(2, (13), (13, 5), (5)); }
static void test_matmul_2d_1d(void) { MATMUL(3, (7, 13), (13), (7)); }
static void test_matmul_1d_1d(void) { matmul_case(4, GN_DIMS(13), GN_DIMS(13), 0, NULL); } /* a scalar */
static void test_matmul_batched(void) { MATMUL(5, (2, 1, 3, 4), (5, 4, 6), (2, 5, 3, 6)); }
static void test_matmul_folded(void) { MATMUL(6, (2, 3, 4), (4, 6), (2, 3, 6)); } /* one GEMM */
static void test_matmul_a_broadcast(void) { MATMUL(7, (3, 4), (2, 4, 6), (2, 3, 6)); }
static void test_matmul_1d_batched(void) { MATMUL(8, (4), (2, 4, 6), (2, 6)); }
static void test_matmul_large(void) { MATMUL(9, (2, 65, 129), (2, 129, 33), (2, 65, 33)); }
static void test_matmul_square(void) { MATMUL(10, (256, 256), (256, 256), (256, 256)); }
static void test_matmul_empty_k(void) { MATMUL(11, (3, 0), (0, 4), (3, 4)); } /* zeros */
static void test_matmul_empty_m(void) { MATMUL(12, (0, 5), (5, 4), (0, 4)); }

/* ---- Gemm ------------------------------------------------------------------------------ */

static void test_gemm_trans(void) { /* A [6,4]^T, B [5,6]^T, C [5] */
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 20)) return;
    GN_IN(&f, 6, 4);
    GN_IN(&f, 5, 6);
    GN_IN(&f, 5);
    gn_int(&f, "transA", 1);
    gn_int(&f, "transB", 1);
    gn_float(&f, "alpha", 0.5);
    gn_float(&f, "beta", 2.0);
    GN_OUT(&f, TGC_FLOAT32, 4, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_scalar_c(void) {
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 21)) return;
    GN_IN(&f, 3, 4);
    GN_IN(&f, 4, 5);
    gn_in_range(&f, -1.0f, 1.0f, 0, NULL);
    gn_float(&f, "alpha", 1.5);
    gn_float(&f, "beta", -0.5);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_column_c(void) { /* C [M, 1] */
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 22)) return;
    GN_IN(&f, 3, 4);
    GN_IN(&f, 4, 5);
    GN_IN(&f, 3, 1);
    gn_float(&f, "beta", 0.25);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_full_c(void) { /* C [M, N], alpha and beta by default */
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 23)) return;
    GN_IN(&f, 4, 3);
    GN_IN(&f, 4, 5);
    GN_IN(&f, 3, 5);
    gn_int(&f, "transA", 1);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_no_c(void) { /* C omitted: beta has nothing to scale */
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 24)) return;
    GN_IN(&f, 3, 4);
    GN_IN(&f, 5, 4);
    gn_in_omitted(&f);
    gn_int(&f, "transB", 1);
    gn_float(&f, "alpha", 2.0);
    gn_float(&f, "beta", 3.0);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_beta_zero(void) { /* C given, beta 0: C does not count */
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 25)) return;
    GN_IN(&f, 3, 4);
    GN_IN(&f, 4, 5);
    GN_IN(&f, 3, 5);
    gn_float(&f, "beta", 0.0);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_empty_k(void) { /* Y = beta * C */
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 26)) return;
    GN_IN(&f, 3, 0);
    GN_IN(&f, 0, 5);
    GN_IN(&f, 5);
    gn_float(&f, "beta", 2.0);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_gemm_large(void) {
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", 27)) return;
    GN_IN(&f, 100, 70);
    GN_IN(&f, 90, 70);
    GN_IN(&f, 90);
    gn_int(&f, "transB", 1);
    gn_float(&f, "alpha", 0.75);
    GN_OUT(&f, TGC_FLOAT32, 100, 90);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* k = 600 spans three of tgc_cl_nn_sgemm's blocks of 256: each block's
 * operands start at the right offset for every transpose, alpha scales
 * each block and beta only the first. */
static void gemm_blocks_case(unsigned seed, int trans_a, int trans_b) {
    gn_fixture f;
    if (!gn_begin(&f, "Gemm", seed)) return;
    if (trans_a) GN_IN(&f, 600, 9);
    else GN_IN(&f, 9, 600);
    if (trans_b) GN_IN(&f, 11, 600);
    else GN_IN(&f, 600, 11);
    GN_IN(&f, 9, 11);
    gn_int(&f, "transA", trans_a);
    gn_int(&f, "transB", trans_b);
    gn_float(&f, "alpha", 0.5);
    gn_float(&f, "beta", -2.0);
    GN_OUT(&f, TGC_FLOAT32, 9, 11);
    gn_check(&f, GN_ABS, 1e-4);
    gn_end(&f);
}

static void test_gemm_k_blocks(void) {
    for (int t = 0; t < 4; t++) gemm_blocks_case(28 + (unsigned)t, t & 1, t >> 1);
}

/* The root mean square of the gpu's [m, n] product of a [m, k] x b [k, n]
 * (output 0 of f) against the float64 product of the same inputs. */
static double gemm_rms_error(const gn_fixture *f, const float *got, int64_t m, int64_t k, int64_t n) {
    const float *a = tgc_buffer_host_ptr(f->cin[0].buf), *b = tgc_buffer_host_ptr(f->cin[1].buf);
    double sq = 0.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double want = 0.0;
            for (int64_t p = 0; p < k; p++) want += (double)a[i * k + p] * (double)b[p * n + j];
            double d = (double)got[i * n + j] - want;
            sq += d * d;
        }
    return sqrt(sq / (double)(m * n));
}

/* A long sum is about as accurate on the gpu as on the cpu: the RMS error
 * against float64 of a [64, 1728] x [1728, 64] product (k of a 3x3 Conv
 * over 192 channels) within 2x the cpu kernel's. CLBlast summing the
 * whole k in one register gave 2.5x on PoCL; blocks of 256 gave 1.0x there
 * and 1.77x on an NVIDIA H200 (driver 580, CLBlast 1.5.3's kernels, beside
 * OpenBLAS on the machine's Xeon; 2026-11-27). The product is one GEMM,
 * now the implicit GEMM's kernel (kernels/nn.cl), which sums in blocks of
 * 256 too. */
static void test_matmul_long_k_accuracy(void) {
    gn_fixture f;
    if (!gn_begin(&f, "MatMul", 13)) return;
    GN_IN(&f, 64, 1728);
    GN_IN(&f, 1728, 64);
    GN_OUT(&f, TGC_FLOAT32, 64, 64);
    gn_check(&f, GN_ABS, 1e-3);
    double gpu = gemm_rms_error(&f, f.got[0], 64, 1728, 64);
    double cpu = gemm_rms_error(&f, tgc_buffer_host_ptr(f.cout[0].buf), 64, 1728, 64);
    CU_ASSERT(cpu > 0.0 && gpu <= 2.0 * cpu);
    if (!(gpu <= 2.0 * cpu)) fprintf(stderr, "\n  RMS error against float64: gpu %g, cpu %g\n", gpu, cpu);
    gn_end(&f);
}

/* ---- Conv ------------------------------------------------------------------------------- */

typedef void (*attrs_fn)(gn_fixture *f);

/* Conv of X [x] by W [w], bias B [w[0]] when `bias`, to Y [y]. */
static void conv_case(unsigned seed, int rx, const int64_t *x, int rw, const int64_t *w, bool bias, int ry,
                      const int64_t *y, attrs_fn attrs) {
    gn_fixture f;
    if (!gn_begin(&f, "Conv", seed)) return;
    gn_in_range(&f, -1.0f, 1.0f, rx, x);
    gn_in_range(&f, -1.0f, 1.0f, rw, w);
    if (bias) gn_in_range(&f, -1.0f, 1.0f, 1, w);
    if (attrs != NULL) attrs(&f);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

#define CONV(seed, x, w, bias, y, attrs) conv_case((seed), GN_DIMS x, GN_DIMS w, (bias), GN_DIMS y, (attrs))

static void attrs_pads_strides(gn_fixture *f) {
    GN_INTS(f, "pads", 1, 2, 0, 1); /* asymmetric */
    GN_INTS(f, "strides", 2, 2);
    GN_INTS(f, "kernel_shape", 3, 3);
}
static void attrs_dilations(gn_fixture *f) {
    GN_INTS(f, "pads", 2, 1, 2, 1);
    GN_INTS(f, "dilations", 2, 3);
}
static void attrs_groups(gn_fixture *f) {
    GN_INTS(f, "pads", 1, 1, 1, 1);
    gn_int(f, "group", 2);
}
static void attrs_depthwise(gn_fixture *f) {
    GN_INTS(f, "pads", 1, 1, 1, 1);
    GN_INTS(f, "strides", 2, 1);
    gn_int(f, "group", 3);
}
static void attrs_depthwise_dilated(gn_fixture *f) {
    GN_INTS(f, "pads", 2, 0, 1, 2);
    GN_INTS(f, "strides", 2, 2);
    GN_INTS(f, "dilations", 2, 2);
    gn_int(f, "group", 4);
}
static void attrs_group2(gn_fixture *f) { gn_int(f, "group", 2); }
static void attrs_strides2(gn_fixture *f) { GN_INTS(f, "strides", 2, 2); }
static void attrs_same_upper(gn_fixture *f) {
    GN_INTS(f, "strides", 2, 1);
    gn_string(f, "auto_pad", "SAME_UPPER");
}
static void attrs_same_lower(gn_fixture *f) {
    GN_INTS(f, "strides", 2, 1);
    gn_string(f, "auto_pad", "SAME_LOWER");
}
static void attrs_valid(gn_fixture *f) {
    GN_INTS(f, "strides", 1, 2);
    gn_string(f, "auto_pad", "VALID");
}
static void attrs_1d(gn_fixture *f) {
    GN_INTS(f, "pads", 2, 1);
    GN_INTS(f, "strides", 2);
    GN_INTS(f, "dilations", 2);
}
static void attrs_1d_depthwise(gn_fixture *f) {
    GN_INTS(f, "pads", 1, 2);
    gn_int(f, "group", 3);
}
static void attrs_3d(gn_fixture *f) {
    GN_INTS(f, "pads", 1, 0, 1, 0, 1, 1);
    GN_INTS(f, "strides", 1, 2, 1);
}
static void attrs_pad1(gn_fixture *f) { GN_INTS(f, "pads", 1, 1, 1, 1); }

static void test_conv_pads_strides(void) { CONV(40, (2, 3, 7, 8), (4, 3, 3, 3), true, (2, 4, 3, 5), attrs_pads_strides); }
static void test_conv_dilations(void) { CONV(41, (1, 2, 9, 10), (3, 2, 3, 2), false, (1, 3, 9, 9), attrs_dilations); }
static void test_conv_groups(void) { CONV(42, (2, 4, 6, 6), (6, 2, 3, 3), true, (2, 6, 6, 6), attrs_groups); }
static void test_conv_depthwise(void) { CONV(43, (2, 3, 7, 7), (6, 1, 3, 3), true, (2, 6, 4, 7), attrs_depthwise); }
static void test_conv_depthwise_dilated(void) {
    CONV(44, (1, 4, 8, 9), (4, 1, 3, 3), false, (1, 4, 4, 4), attrs_depthwise_dilated);
}
static void test_conv_1x1(void) { CONV(45, (2, 5, 4, 6), (7, 5, 1, 1), true, (2, 7, 4, 6), NULL); }
static void test_conv_1x1_groups(void) { CONV(46, (2, 6, 4, 5), (4, 3, 1, 1), false, (2, 4, 4, 5), attrs_group2); }
static void test_conv_1x1_strided(void) { CONV(47, (1, 3, 7, 7), (4, 3, 1, 1), true, (1, 4, 4, 4), attrs_strides2); }
static void test_conv_same_upper(void) { CONV(48, (1, 2, 7, 9), (3, 2, 3, 4), true, (1, 3, 4, 9), attrs_same_upper); }
static void test_conv_same_lower(void) { CONV(49, (1, 2, 7, 9), (3, 2, 3, 4), true, (1, 3, 4, 9), attrs_same_lower); }
static void test_conv_valid(void) { CONV(50, (1, 2, 7, 9), (3, 2, 3, 3), false, (1, 3, 5, 4), attrs_valid); }
static void test_conv_1d(void) { CONV(51, (2, 3, 20), (4, 3, 5), true, (2, 4, 8), attrs_1d); }
static void test_conv_1d_depthwise(void) { CONV(52, (1, 3, 15), (6, 1, 4), true, (1, 6, 15), attrs_1d_depthwise); }
static void test_conv_3d(void) { CONV(53, (1, 2, 5, 6, 7), (3, 2, 2, 3, 2), true, (1, 3, 5, 3, 8), attrs_3d); }
static void test_conv_no_channels(void) { CONV(54, (1, 0, 5, 5), (3, 0, 3, 3), true, (1, 3, 3, 3), NULL); } /* bias */
static void test_conv_empty_batch(void) { CONV(55, (0, 3, 5, 5), (2, 3, 3, 3), true, (0, 2, 3, 3), NULL); }
/* Large planes (the implicit GEMM's many tiles of positions), with sums of
 * 576 terms (past one block of 256). */
static void test_conv_slab_images(void) { CONV(56, (3, 64, 128, 128), (4, 64, 3, 3), true, (3, 4, 126, 126), NULL); }
static void test_conv_slab_rows(void) {
    CONV(57, (1, 64, 180, 180), (5, 64, 3, 3), true, (1, 5, 180, 180), attrs_pad1);
}

/* ---- Fused activations (executor/fuse.c: tgc_kernel_ctx.fused_act) --------------------------- */

/* The activation `op` (a unary row of graph/elementwise.def) with P0 = p0. */
static tgc_fused_act act_of(const char *op, float p0) {
    return (tgc_fused_act){.row = (int)tgc_ew_id(tgc_ew_find(op)), .params = {p0, 0.0f, 0.0f}};
}

/* Conv with `act` applied by both kernels as they write (the cpu's the
 * reference: it applies the row after its sums). */
static void conv_act_case(unsigned seed, int rx, const int64_t *x, int rw, const int64_t *w, int ry,
                          const int64_t *y, attrs_fn attrs, tgc_fused_act act) {
    gn_fixture f;
    if (!gn_begin(&f, "Conv", seed)) return;
    f.act = &act;
    gn_in_range(&f, -1.0f, 1.0f, rx, x);
    gn_in_range(&f, -1.0f, 1.0f, rw, w);
    gn_in_range(&f, -1.0f, 1.0f, 1, w);
    if (attrs != NULL) attrs(&f);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* 70 output channels (two tiles of rows), 100 positions (two of
 * columns), sums of 360 terms. */
static void test_conv_tiles_act(void) {
    conv_act_case(60, GN_DIMS(1, 40, 10, 10), GN_DIMS(70, 40, 3, 3), GN_DIMS(1, 70, 10, 10), attrs_pad1,
                  act_of("LeakyRelu", 0.2f));
}
static void test_conv_depthwise_act(void) {
    conv_act_case(61, GN_DIMS(2, 3, 7, 7), GN_DIMS(6, 1, 3, 3), GN_DIMS(2, 6, 4, 7), attrs_depthwise,
                  act_of("LeakyRelu", 0.2f));
}
static void test_conv_empty_act(void) { /* Y = Relu(bias) */
    conv_act_case(62, GN_DIMS(1, 0, 5, 5), GN_DIMS(3, 0, 3, 3), GN_DIMS(1, 3, 3, 3), NULL, act_of("Relu", 0.0f));
}

static void matmul_act_case(unsigned seed, int ra, const int64_t *a, int rb, const int64_t *b, int ry,
                            const int64_t *y) {
    tgc_fused_act act = act_of("Sigmoid", 0.0f);
    gn_fixture f;
    if (!gn_begin(&f, "MatMul", seed)) return;
    f.act = &act;
    gn_in_range(&f, -1.0f, 1.0f, ra, a);
    gn_in_range(&f, -1.0f, 1.0f, rb, b);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

static void test_matmul_folded_act(void) {
    matmul_act_case(63, GN_DIMS(2, 3, 40), GN_DIMS(40, 70), GN_DIMS(2, 3, 70));
}
static void test_matmul_batched_act(void) {
    matmul_act_case(64, GN_DIMS(2, 1, 3, 4), GN_DIMS(5, 4, 6), GN_DIMS(2, 5, 3, 6));
}
static void test_matmul_empty_k_act(void) { /* sigmoid(0) = 0.5 everywhere */
    matmul_act_case(65, GN_DIMS(3, 0), GN_DIMS(0, 4), GN_DIMS(3, 4));
}

/* ---- Tuning the GEMM kernel's tile (devices/opencl/gemm_tiles.h) ----------------------------- */

/* A cache folder of the test's own (XDG_CACHE_HOME), so that what the
 * tests write never reaches the user's; end restores the variable and
 * removes the folder and the files in its tgc/. */
typedef struct temp_cache {
    char dir[32];
    char *was;
} temp_cache;

static bool temp_cache_begin(temp_cache *t) {
    snprintf(t->dir, sizeof t->dir, "/tmp/tgc-tiles-XXXXXX");
    const char *was = getenv("XDG_CACHE_HOME");
    t->was = was != NULL ? strdup(was) : NULL;
    if (mkdtemp(t->dir) == NULL) return false;
    setenv("XDG_CACHE_HOME", t->dir, 1);
    tgc_settings_read();
    return true;
}

/* The folder's gemm-tiles file into path; false when there is none. */
static bool tiles_file(const temp_cache *t, char *path, size_t size) {
    char folder_path[64];
    snprintf(folder_path, sizeof folder_path, "%s/tgc", t->dir);
    DIR *folder = opendir(folder_path);
    struct dirent *e;
    bool found = false;
    while (folder != NULL && (e = readdir(folder)) != NULL)
        if (strncmp(e->d_name, "gemm-tiles-", 11) == 0)
            found = snprintf(path, size, "%s/%s", folder_path, e->d_name) < (int)size;
    if (folder != NULL) closedir(folder);
    return found;
}

static void temp_cache_end(temp_cache *t) {
    char folder_path[64], path[400];
    snprintf(folder_path, sizeof folder_path, "%s/tgc", t->dir);
    DIR *folder = opendir(folder_path);
    struct dirent *e;
    while (folder != NULL && (e = readdir(folder)) != NULL)
        if (e->d_name[0] != '.' && snprintf(path, sizeof path, "%s/%s", folder_path, e->d_name) < (int)sizeof path)
            remove(path);
    if (folder != NULL) closedir(folder);
    rmdir(folder_path);
    rmdir(t->dir);
    if (t->was != NULL) setenv("XDG_CACHE_HOME", t->was, 1);
    else unsetenv("XDG_CACHE_HOME");
    free(t->was);
    tgc_settings_read();
}

/* With TGC_GPU_TUNE and the device's table emptied, a Conv of a new shape
 * runs at both tiles, best of three each (six timed runs: six host waits),
 * keeps the faster for its shape (in the table and in the cache folder's
 * tiles file: a folder of the test's own), and gives the cpu's values; run
 * again, it takes the kept tile without timing. */
static void test_tune_tile(void) {
    if (gn_device() == NULL) return;
    int64_t forced = tgc_settings_current()->gpu_gemm_tile;
    if (forced == 32 || forced == 64) return; /* a forced tile is never tuned (the tile32 and tile64 runs) */
    tgc_cl_device *d = (tgc_cl_device *)gn_gpu;
    temp_cache cache;
    CU_ASSERT_FATAL(temp_cache_begin(&cache));
    tgc_cl_tiles_release(d);
    setenv("TGC_GPU_TUNE", "1", 1);
    tgc_settings_read();
    tgc_cl_counters before = tgc_cl_device_counters(gn_gpu);
    CONV(66, (1, 5, 11, 13), (7, 5, 3, 3), true, (1, 7, 11, 13), attrs_pad1);
    tgc_cl_counters tuned = tgc_cl_device_counters(gn_gpu);
    CONV(66, (1, 5, 11, 13), (7, 5, 3, 3), true, (1, 7, 11, 13), attrs_pad1);
    tgc_cl_counters again = tgc_cl_device_counters(gn_gpu);
    unsetenv("TGC_GPU_TUNE"); /* the other cases run untuned */
    tgc_cl_tile_shape shape = {.b_kind = 0, .m = 7, .n = 11 * 13, .k = 5 * 9, .kk = 9, .z = 1};
    int tile = tgc_cl_tiles_get(d, &shape);
    CU_ASSERT(tile == 32 || tile == 64);
    CU_ASSERT_EQUAL(tuned.launches - before.launches, 7); /* six timed, one for real */
    CU_ASSERT(tuned.host_waits - before.host_waits >= 6);
    CU_ASSERT_EQUAL(again.launches - tuned.launches, 1);
    char path[400];
    CU_ASSERT_TRUE(tiles_file(&cache, path, sizeof path));
    temp_cache_end(&cache);
}

/* The tiles file: written by put, read back by load in a fresh table;
 * lines that do not parse, or name another tile, are skipped. */
static void test_tiles_file(void) {
    temp_cache cache;
    CU_ASSERT_FATAL(temp_cache_begin(&cache));
    tgc_cl_device d;
    memset(&d, 0, sizeof d);
    pthread_mutex_init(&d.lock, NULL);
    snprintf(d.device_name, sizeof d.device_name, "test device");
    tgc_cl_tile_shape a = {1, 64, 3136, 256, 1, 1}, b = {0, 512, 49, 4608, 9, 1}, c = {2, 1000, 1, 2048, 1, 1};
    tgc_cl_tiles_put(&d, &a, 64);
    tgc_cl_tiles_put(&d, &b, 32);
    char path[400];
    CU_ASSERT_FATAL(tiles_file(&cache, path, sizeof path));
    FILE *f = fopen(path, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("2 1000 1 2048 1 1 48\nnot a line\n2 1000 1 2048 1\n", f); /* c: another tile; two that do not parse */
    fclose(f);
    tgc_cl_tiles_release(&d);
    CU_ASSERT_EQUAL(tgc_cl_tiles_get(&d, &a), 0);
    tgc_cl_tiles_load(&d);
    CU_ASSERT_EQUAL(tgc_cl_tiles_get(&d, &a), 64);
    CU_ASSERT_EQUAL(tgc_cl_tiles_get(&d, &b), 32);
    CU_ASSERT_EQUAL(tgc_cl_tiles_get(&d, &c), 0);
    tgc_cl_tiles_release(&d);
    pthread_mutex_destroy(&d.lock);
    temp_cache_end(&cache);
}

/* ---- MaxPool ------------------------------------------------------------------------------ */

/* MaxPool of X [x] to Y [y], with Indices when `indices`. */
static void max_pool_case(unsigned seed, int rx, const int64_t *x, int ry, const int64_t *y, attrs_fn attrs,
                          bool indices) {
    gn_fixture f;
    if (!gn_begin(&f, "MaxPool", seed)) return;
    gn_in_range(&f, -1.0f, 1.0f, rx, x);
    attrs(&f);
    gn_out(&f, TGC_FLOAT32, ry, y);
    if (indices) gn_out(&f, TGC_INT64, ry, y);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

#define MAXPOOL(seed, x, y, attrs, indices) max_pool_case((seed), GN_DIMS x, GN_DIMS y, (attrs), (indices))

static void attrs_max_ceil_pads(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 3, 3);
    GN_INTS(f, "strides", 2, 2);
    GN_INTS(f, "pads", 1, 1, 1, 1);
    gn_int(f, "ceil_mode", 1);
}
static void attrs_max_dilations(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 2, 3);
    GN_INTS(f, "strides", 1, 2);
    GN_INTS(f, "pads", 1, 1, 1, 1);
    GN_INTS(f, "dilations", 2, 1);
}
static void attrs_max_column_major(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 2, 2);
    GN_INTS(f, "strides", 2, 2);
    gn_int(f, "ceil_mode", 1);
    gn_int(f, "storage_order", 1);
}
static void attrs_max_same_upper(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 3, 3);
    GN_INTS(f, "strides", 2, 2);
    gn_string(f, "auto_pad", "SAME_UPPER");
}
static void attrs_max_1d(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 3);
    GN_INTS(f, "strides", 3);
    gn_int(f, "ceil_mode", 1);
}
static void attrs_max_3d(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 2, 2, 3);
    GN_INTS(f, "strides", 2, 2, 2);
    GN_INTS(f, "pads", 0, 1, 1, 0, 1, 1);
}
static void attrs_pool_all_pad(gn_fixture *f) { /* the first and last windows read only padding */
    GN_INTS(f, "kernel_shape", 2);
    GN_INTS(f, "pads", 2, 2);
}

static void test_maxpool_ceil_pads(void) { MAXPOOL(60, (2, 3, 9, 10), (2, 3, 5, 6), attrs_max_ceil_pads, true); }
static void test_maxpool_no_indices(void) { MAXPOOL(61, (2, 3, 9, 10), (2, 3, 5, 6), attrs_max_ceil_pads, false); }
static void test_maxpool_dilations(void) { MAXPOOL(62, (1, 2, 8, 9), (1, 2, 8, 5), attrs_max_dilations, true); }
static void test_maxpool_column_major(void) {
    MAXPOOL(63, (1, 2, 7, 7), (1, 2, 4, 4), attrs_max_column_major, true);
}
static void test_maxpool_same_upper(void) { MAXPOOL(64, (1, 2, 7, 8), (1, 2, 4, 4), attrs_max_same_upper, true); }
static void test_maxpool_1d(void) { MAXPOOL(65, (2, 3, 10), (2, 3, 4), attrs_max_1d, true); }
static void test_maxpool_3d(void) { MAXPOOL(66, (1, 2, 5, 6, 7), (1, 2, 2, 4, 4), attrs_max_3d, true); }
static void test_maxpool_all_pad(void) { MAXPOOL(67, (1, 1, 3), (1, 1, 6), attrs_pool_all_pad, true); }

static void test_maxpool_omitted_indices(void) { /* Indices declared but not asked for */
    gn_fixture f;
    if (!gn_begin(&f, "MaxPool", 68)) return;
    GN_IN(&f, 2, 3, 9, 10);
    attrs_max_ceil_pads(&f);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 5, 6);
    gn_out_omitted(&f);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_maxpool_ties(void) { /* values from {0, 1, 2} and a NaN: the first maximum, NaN wins */
    gn_fixture f;
    if (!gn_begin(&f, "MaxPool", 69)) return;
    float x[36];
    for (int i = 0; i < 36; i++) x[i] = (float)(int)(3.0f * gn_uniform(&f));
    x[14] = NAN;
    gn_in_data(&f, TGC_FLOAT32, GN_DIMS(1, 1, 6, 6), x);
    GN_INTS(&f, "kernel_shape", 2, 2);
    GN_INTS(&f, "strides", 2, 2);
    GN_INTS(&f, "pads", 1, 1, 1, 1);
    GN_OUT(&f, TGC_FLOAT32, 1, 1, 4, 4);
    GN_OUT(&f, TGC_INT64, 1, 1, 4, 4);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

/* ---- AveragePool ---------------------------------------------------------------------------- */

static void avg_pool_case(unsigned seed, int include_pad, int ceil_mode, int ry, const int64_t *y) {
    gn_fixture f;
    if (!gn_begin(&f, "AveragePool", seed)) return;
    GN_IN(&f, 2, 3, 9, 10);
    GN_INTS(&f, "kernel_shape", 3, 3);
    GN_INTS(&f, "strides", 2, 2);
    GN_INTS(&f, "pads", 1, 1, 1, 1);
    gn_int(&f, "count_include_pad", include_pad);
    gn_int(&f, "ceil_mode", ceil_mode);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_avgpool_exclude_pad(void) { avg_pool_case(70, 0, 0, GN_DIMS(2, 3, 5, 5)); }
static void test_avgpool_include_pad(void) { avg_pool_case(71, 1, 0, GN_DIMS(2, 3, 5, 5)); }
static void test_avgpool_ceil_include_pad(void) { avg_pool_case(72, 1, 1, GN_DIMS(2, 3, 5, 6)); }
static void test_avgpool_ceil_exclude_pad(void) { avg_pool_case(73, 0, 1, GN_DIMS(2, 3, 5, 6)); }

static void avg_pool_shape_case(unsigned seed, int rx, const int64_t *x, int ry, const int64_t *y, attrs_fn attrs,
                                int include_pad) {
    gn_fixture f;
    if (!gn_begin(&f, "AveragePool", seed)) return;
    gn_in_range(&f, -1.0f, 1.0f, rx, x);
    attrs(&f);
    gn_int(&f, "count_include_pad", include_pad);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void attrs_avg_1d(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 4);
    GN_INTS(f, "strides", 2);
    GN_INTS(f, "pads", 1, 2);
}
static void attrs_avg_3d(gn_fixture *f) {
    GN_INTS(f, "kernel_shape", 2, 2, 2);
    GN_INTS(f, "strides", 2, 2, 2);
    GN_INTS(f, "pads", 1, 1, 1, 1, 1, 1);
}

static void test_avgpool_1d(void) { avg_pool_shape_case(74, GN_DIMS(2, 3, 11), GN_DIMS(2, 3, 6), attrs_avg_1d, 0); }
static void test_avgpool_3d(void) {
    avg_pool_shape_case(75, GN_DIMS(1, 2, 5, 6, 7), GN_DIMS(1, 2, 3, 4, 4), attrs_avg_3d, 1);
}
static void test_avgpool_all_pad(void) { /* NaN where nothing counts, 0 where only padding does */
    avg_pool_shape_case(76, GN_DIMS(1, 1, 3), GN_DIMS(1, 1, 6), attrs_pool_all_pad, 0);
    avg_pool_shape_case(77, GN_DIMS(1, 1, 3), GN_DIMS(1, 1, 6), attrs_pool_all_pad, 1);
}

/* ---- GlobalAveragePool ---------------------------------------------------------------------- */

static void global_avg_case(unsigned seed, int rx, const int64_t *x, int ry, const int64_t *y) {
    gn_fixture f;
    if (!gn_begin(&f, "GlobalAveragePool", seed)) return;
    gn_in_range(&f, -1.0f, 1.0f, rx, x);
    gn_out(&f, TGC_FLOAT32, ry, y);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_global_avgpool_2d(void) { global_avg_case(80, GN_DIMS(2, 3, 5, 7), GN_DIMS(2, 3, 1, 1)); }
static void test_global_avgpool_large(void) { global_avg_case(81, GN_DIMS(1, 2, 300, 301), GN_DIMS(1, 2, 1, 1)); }
static void test_global_avgpool_1d(void) { global_avg_case(82, GN_DIMS(2, 3, 9), GN_DIMS(2, 3, 1)); }
static void test_global_avgpool_empty_plane(void) { global_avg_case(83, GN_DIMS(2, 3, 0), GN_DIMS(2, 3, 1)); } /* NaN */

/* ---- BatchNormalization ----------------------------------------------------------------------- */

static void batch_norm_case(unsigned seed, int rx, const int64_t *x, double eps) {
    gn_fixture f;
    if (!gn_begin(&f, "BatchNormalization", seed)) return;
    int64_t c = x[1];
    gn_in_range(&f, -1.0f, 1.0f, rx, x);
    gn_in_range(&f, 0.5f, 1.5f, 1, &c);  /* scale */
    gn_in_range(&f, -1.0f, 1.0f, 1, &c); /* B */
    gn_in_range(&f, -0.5f, 0.5f, 1, &c); /* mean */
    gn_in_range(&f, 0.5f, 2.0f, 1, &c);  /* var */
    gn_float(&f, "epsilon", eps);
    gn_out(&f, TGC_FLOAT32, rx, x);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_batch_norm_4d(void) { batch_norm_case(90, GN_DIMS(2, 3, 4, 5), 1e-3); }
static void test_batch_norm_2d(void) { batch_norm_case(91, GN_DIMS(4, 3), 1e-5); }

static void test_batch_norm_in_place(void) { /* Y is X's buffer (forward_input 0) */
    gn_fixture f;
    if (!gn_begin(&f, "BatchNormalization", 92)) return;
    GN_IN(&f, 2, 3, 4, 5);
    for (int i = 0; i < 4; i++) gn_in_range(&f, 0.5f, 1.5f, GN_DIMS(3));
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 4, 5);
    /* The gpu's output becomes X's buffer; X's values are still on the cpu side. */
    tgc_buffer_release(f.gout[0].buf);
    f.gout[0].buf = tgc_buffer_retain(f.gin[0].buf);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

/* ---- LayerNormalization ----------------------------------------------------------------------- */

static void test_layer_norm_last_axis(void) { /* with Mean and InvStdDev */
    gn_fixture f;
    if (!gn_begin(&f, "LayerNormalization", 100)) return;
    GN_IN(&f, 2, 3, 8);
    GN_IN(&f, 8);
    GN_IN(&f, 8);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 8);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 1);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 1);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_layer_norm_axis1_no_bias(void) {
    gn_fixture f;
    if (!gn_begin(&f, "LayerNormalization", 101)) return;
    GN_IN(&f, 2, 3, 4, 5);
    GN_IN(&f, 3, 4, 5);
    gn_in_omitted(&f);
    gn_int(&f, "axis", 1);
    gn_float(&f, "epsilon", 1e-3);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 4, 5);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_layer_norm_broadcast_params(void) { /* Scale [5], B [1, 5] over X.shape[2:] = [4, 5] */
    gn_fixture f;
    if (!gn_begin(&f, "LayerNormalization", 102)) return;
    GN_IN(&f, 2, 3, 4, 5);
    GN_IN(&f, 5);
    GN_IN(&f, 1, 5);
    gn_int(&f, "axis", 2);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 4, 5);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 1, 1);
    gn_out_omitted(&f);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

static void test_layer_norm_long_rows(void) { /* rows far longer than a work-group, values offset from 0 */
    gn_fixture f;
    if (!gn_begin(&f, "LayerNormalization", 103)) return;
    gn_in_range(&f, 100.0f, 101.0f, GN_DIMS(3, 1000));
    GN_IN(&f, 1000);
    GN_IN(&f, 1000);
    GN_OUT(&f, TGC_FLOAT32, 3, 1000);
    GN_OUT(&f, TGC_FLOAT32, 3, 1);
    GN_OUT(&f, TGC_FLOAT32, 3, 1);
    gn_check(&f, GN_REL, 1e-4); /* x - mean loses 3 digits to the offset, on both sides alike */
    gn_end(&f);
}

static void test_layer_norm_empty_rows(void) { /* statistics of nothing: NaN */
    gn_fixture f;
    if (!gn_begin(&f, "LayerNormalization", 104)) return;
    GN_IN(&f, 2, 0);
    GN_IN(&f, 0);
    gn_in_omitted(&f);
    GN_OUT(&f, TGC_FLOAT32, 2, 0);
    GN_OUT(&f, TGC_FLOAT32, 2, 1);
    GN_OUT(&f, TGC_FLOAT32, 2, 1);
    gn_check(&f, GN_REL, TOL);
    gn_end(&f);
}

/* ---- Errors ----------------------------------------------------------------------------------- */

static void test_errors(void) {
    gn_fixture f;
    if (!gn_begin(&f, "MatMul", 110)) return; /* K differs */
    GN_IN(&f, 3, 4);
    GN_IN(&f, 5, 6);
    GN_OUT(&f, TGC_FLOAT32, 3, 6);
    gn_check_fails(&f);
    gn_end(&f);

    if (!gn_begin(&f, "Conv", 111)) return; /* C != W[1] * group */
    GN_IN(&f, 1, 4, 5, 5);
    GN_IN(&f, 2, 3, 3, 3);
    gn_int(&f, "group", 2);
    GN_OUT(&f, TGC_FLOAT32, 1, 2, 3, 3);
    gn_check_fails(&f);
    gn_end(&f);

    if (!gn_begin(&f, "MaxPool", 112)) return; /* no kernel_shape */
    GN_IN(&f, 1, 1, 4, 4);
    GN_OUT(&f, TGC_FLOAT32, 1, 1, 2, 2);
    gn_check_fails(&f);
    gn_end(&f);

    if (!gn_begin(&f, "Gemm", 113)) return; /* C does not broadcast */
    GN_IN(&f, 3, 4);
    GN_IN(&f, 4, 5);
    GN_IN(&f, 4);
    GN_OUT(&f, TGC_FLOAT32, 3, 5);
    gn_check_fails(&f);
    gn_end(&f);
}

/* ---- Counters --------------------------------------------------------------------------------- */

/* Kernel objects are made once per device and kept: running the same ops
 * again makes none, and leaves no buffer or event behind. Then the device
 * goes (the last case). */
static void test_counters(void) {
    if (gn_device() == NULL) return;
    test_conv_pads_strides();
    test_layer_norm_last_axis();
    tgc_cl_counters before = tgc_cl_device_counters(gn_gpu);
    test_conv_pads_strides();
    test_layer_norm_last_axis();
    tgc_cl_counters after = tgc_cl_device_counters(gn_gpu);
    CU_ASSERT_EQUAL(after.kernels, before.kernels);
    CU_ASSERT_EQUAL(after.mems, gn_start.mems);
    CU_ASSERT_EQUAL(after.events, gn_start.events);
    CU_ASSERT_EQUAL(after.programs - after.generated, gn_start.programs - gn_start.generated);
    gn_suite_end();
}

TGC_TEST_MAIN("gpu_nn",
              {"registry", test_registry},
              {"matmul 2d", test_matmul_2d},
              {"matmul 1d x 2d", test_matmul_1d_2d},
              {"matmul 2d x 1d", test_matmul_2d_1d},
              {"matmul 1d x 1d", test_matmul_1d_1d},
              {"matmul batched broadcast", test_matmul_batched},
              {"matmul folded batch", test_matmul_folded},
              {"matmul A broadcast", test_matmul_a_broadcast},
              {"matmul 1d batched", test_matmul_1d_batched},
              {"matmul large batched", test_matmul_large},
              {"matmul 256 square", test_matmul_square},
              {"matmul empty K", test_matmul_empty_k},
              {"matmul empty M", test_matmul_empty_m},
              {"matmul long K accuracy", test_matmul_long_k_accuracy},
              {"gemm transA transB C [N]", test_gemm_trans},
              {"gemm scalar C", test_gemm_scalar_c},
              {"gemm column C", test_gemm_column_c},
              {"gemm full C", test_gemm_full_c},
              {"gemm no C", test_gemm_no_c},
              {"gemm beta 0", test_gemm_beta_zero},
              {"gemm empty K", test_gemm_empty_k},
              {"gemm large", test_gemm_large},
              {"gemm K blocks", test_gemm_k_blocks},
              {"conv pads strides", test_conv_pads_strides},
              {"conv dilations", test_conv_dilations},
              {"conv groups", test_conv_groups},
              {"conv depthwise", test_conv_depthwise},
              {"conv depthwise dilated", test_conv_depthwise_dilated},
              {"conv 1x1", test_conv_1x1},
              {"conv 1x1 groups", test_conv_1x1_groups},
              {"conv 1x1 strided", test_conv_1x1_strided},
              {"conv SAME_UPPER", test_conv_same_upper},
              {"conv SAME_LOWER", test_conv_same_lower},
              {"conv VALID", test_conv_valid},
              {"conv 1d", test_conv_1d},
              {"conv 1d depthwise", test_conv_1d_depthwise},
              {"conv 3d", test_conv_3d},
              {"conv no channels", test_conv_no_channels},
              {"conv empty batch", test_conv_empty_batch},
              {"conv large planes, batch 3", test_conv_slab_images},
              {"conv large plane, pads", test_conv_slab_rows},
              {"conv tiles of rows and positions, fused LeakyRelu", test_conv_tiles_act},
              {"conv depthwise, fused LeakyRelu", test_conv_depthwise_act},
              {"conv no channels, fused Relu", test_conv_empty_act},
              {"matmul folded, fused Sigmoid", test_matmul_folded_act},
              {"matmul batched (CLBlast), fused Sigmoid", test_matmul_batched_act},
              {"matmul empty K, fused Sigmoid", test_matmul_empty_k_act},
              {"tuning picks a tile and keeps it", test_tune_tile},
              {"the tiles file", test_tiles_file},
              {"maxpool ceil pads", test_maxpool_ceil_pads},
              {"maxpool no indices", test_maxpool_no_indices},
              {"maxpool omitted indices", test_maxpool_omitted_indices},
              {"maxpool dilations", test_maxpool_dilations},
              {"maxpool column major", test_maxpool_column_major},
              {"maxpool SAME_UPPER", test_maxpool_same_upper},
              {"maxpool 1d", test_maxpool_1d},
              {"maxpool 3d", test_maxpool_3d},
              {"maxpool all padding", test_maxpool_all_pad},
              {"maxpool ties and NaN", test_maxpool_ties},
              {"avgpool exclude pad", test_avgpool_exclude_pad},
              {"avgpool include pad", test_avgpool_include_pad},
              {"avgpool ceil include pad", test_avgpool_ceil_include_pad},
              {"avgpool ceil exclude pad", test_avgpool_ceil_exclude_pad},
              {"avgpool 1d", test_avgpool_1d},
              {"avgpool 3d", test_avgpool_3d},
              {"avgpool all padding", test_avgpool_all_pad},
              {"global avgpool 2d", test_global_avgpool_2d},
              {"global avgpool large plane", test_global_avgpool_large},
              {"global avgpool 1d", test_global_avgpool_1d},
              {"global avgpool empty plane", test_global_avgpool_empty_plane},
              {"batchnorm 4d", test_batch_norm_4d},
              {"batchnorm 2d", test_batch_norm_2d},
              {"batchnorm in place", test_batch_norm_in_place},
              {"layernorm last axis", test_layer_norm_last_axis},
              {"layernorm axis 1 no bias", test_layer_norm_axis1_no_bias},
              {"layernorm broadcast params", test_layer_norm_broadcast_params},
              {"layernorm long rows", test_layer_norm_long_rows},
              {"layernorm empty rows", test_layer_norm_empty_rows},
              {"errors", test_errors},
              {"counters", test_counters})
