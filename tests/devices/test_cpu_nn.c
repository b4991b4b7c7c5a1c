/* The cpu nn kernels (devices/cpu/kernels_*.c) against PyTorch and NumPy:
 * each case's inputs and expected outputs are tests/data/kernels/nn/CASE.*.npy,
 * written by tests/data/kernels/make_nn_refs.py, whose attributes are
 * repeated here beside each case. Then empty tensors, the paths that only
 * large shapes take (checked against a direct loop), and the errors. */
#include "tests/devices/kernel_fixture_nn.h"

#include "support/alloc.h"

#include <stdlib.h>

#define TOL_SUM 1e-4 /* a dot product or a convolution's sum */
#define TOL 1e-5

/* ---- Registry ---------------------------------------------------------------- */

static void test_registry(void) {
    static const char *const ops[] = {"MatMul", "Gemm", "Conv", "MaxPool", "AveragePool",
                                      "GlobalAveragePool", "BatchNormalization", "LayerNormalization"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const tgc_kernel_def *k = tgc_kernel_find(ops[i], TGC_DEVICE_CPU, TGC_FLOAT32);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_EQUAL(k->dtypes[0], TGC_FLOAT32);
        bool u8 = strcmp(ops[i], "MaxPool") == 0; /* MaxPool-12 takes uint8 too */
        CU_ASSERT_EQUAL(k->dtypes[1], u8 ? TGC_UINT8 : TGC_DTYPE_INVALID);
        if (u8) CU_ASSERT_EQUAL(k->dtypes[2], TGC_DTYPE_INVALID);
        CU_ASSERT_EQUAL(k->forward_input, strcmp(ops[i], "BatchNormalization") == 0 ? 0 : -1);
        CU_ASSERT_PTR_NULL(tgc_kernel_find(ops[i], TGC_DEVICE_CPU, TGC_INT32));
        CU_ASSERT((tgc_kernel_find(ops[i], TGC_DEVICE_CPU, TGC_UINT8) != NULL) == (strcmp(ops[i], "MaxPool") == 0));
    }
}

/* ---- MatMul ------------------------------------------------------------------ */

static void matmul_case(const char *name) {
    nn_fixture f;
    nn_begin(&f, "MatMul", name);
    nn_in(&f, "a");
    nn_in(&f, "b");
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

static void test_matmul_2d(void) { matmul_case("matmul_2d"); }              /* [7,13] x [13,5] */
static void test_matmul_1d_2d(void) { matmul_case("matmul_1d_2d"); }        /* [13] x [13,5] -> [5] */
static void test_matmul_2d_1d(void) { matmul_case("matmul_2d_1d"); }        /* [7,13] x [13] -> [7] */
static void test_matmul_1d_1d(void) { matmul_case("matmul_1d_1d"); }        /* -> a scalar */
static void test_matmul_batched(void) { matmul_case("matmul_batched"); }    /* [2,1,3,4] x [5,4,6] */
static void test_matmul_folded(void) { matmul_case("matmul_folded"); }      /* [2,3,4] x [4,6]: one GEMM */
static void test_matmul_a_broadcast(void) { matmul_case("matmul_a_broadcast"); } /* [3,4] x [2,4,6] */
static void test_matmul_1d_batched(void) { matmul_case("matmul_1d_batched"); }   /* [4] x [2,4,6] */

/* ---- Gemm -------------------------------------------------------------------- */

static void test_gemm_trans(void) { /* A [6,4]^T, B [5,6]^T, C [5] */
    nn_fixture f;
    nn_begin(&f, "Gemm", "gemm_trans");
    nn_in(&f, "a");
    nn_in(&f, "b");
    nn_in(&f, "c");
    nn_int(&f, "transA", 1);
    nn_int(&f, "transB", 1);
    nn_float(&f, "alpha", 0.5);
    nn_float(&f, "beta", 2.0);
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

static void test_gemm_scalar_c(void) {
    nn_fixture f;
    nn_begin(&f, "Gemm", "gemm_scalar_c");
    nn_in(&f, "a");
    nn_in(&f, "b");
    nn_in(&f, "c");
    nn_float(&f, "alpha", 1.5);
    nn_float(&f, "beta", -0.5);
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

static void test_gemm_column_c(void) { /* C [M, 1] */
    nn_fixture f;
    nn_begin(&f, "Gemm", "gemm_column_c");
    nn_in(&f, "a");
    nn_in(&f, "b");
    nn_in(&f, "c");
    nn_float(&f, "beta", 0.25);
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

static void test_gemm_full_c(void) { /* C [M, N], alpha and beta by default */
    nn_fixture f;
    nn_begin(&f, "Gemm", "gemm_full_c");
    nn_in(&f, "a");
    nn_in(&f, "b");
    nn_in(&f, "c");
    nn_int(&f, "transA", 1);
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

static void test_gemm_no_c(void) { /* C omitted: beta has nothing to scale */
    nn_fixture f;
    nn_begin(&f, "Gemm", "gemm_no_c");
    nn_in(&f, "a");
    nn_in(&f, "b");
    nn_in_omitted(&f);
    nn_int(&f, "transB", 1);
    nn_float(&f, "alpha", 2.0);
    nn_float(&f, "beta", 3.0);
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

/* ---- Conv -------------------------------------------------------------------- */

/* Conv case `name` with inputs x, w and (if bias) b, attributes set by
 * `attrs` (may be NULL). */
static void conv_case(const char *name, bool bias, void (*attrs)(nn_fixture *)) {
    nn_fixture f;
    nn_begin(&f, "Conv", name);
    nn_in(&f, "x");
    nn_in(&f, "w");
    if (bias) nn_in(&f, "b");
    if (attrs != NULL) attrs(&f);
    nn_out(&f, "y");
    nn_check(&f, TOL_SUM);
    nn_end(&f);
}

static void attrs_pads_strides(nn_fixture *f) {
    NN_INTS(f, "pads", 1, 2, 0, 1); /* asymmetric */
    NN_INTS(f, "strides", 2, 2);
    NN_INTS(f, "kernel_shape", 3, 3);
}
static void attrs_dilations(nn_fixture *f) {
    NN_INTS(f, "pads", 2, 1, 2, 1);
    NN_INTS(f, "dilations", 2, 3);
}
static void attrs_groups(nn_fixture *f) {
    NN_INTS(f, "pads", 1, 1, 1, 1);
    nn_int(f, "group", 2);
}
static void attrs_depthwise(nn_fixture *f) { /* group == C == 3, M == 6 */
    NN_INTS(f, "pads", 1, 1, 1, 1);
    NN_INTS(f, "strides", 2, 1);
    nn_int(f, "group", 3);
}
static void attrs_depthwise_dilated(nn_fixture *f) {
    NN_INTS(f, "pads", 2, 0, 1, 2);
    NN_INTS(f, "strides", 2, 2);
    NN_INTS(f, "dilations", 2, 2);
    nn_int(f, "group", 4);
}
static void attrs_group2(nn_fixture *f) { nn_int(f, "group", 2); }
static void attrs_strides2(nn_fixture *f) { NN_INTS(f, "strides", 2, 2); }
static void attrs_same_upper(nn_fixture *f) { /* total pads 2 and 3: the odd one at the end */
    NN_INTS(f, "strides", 2, 1);
    nn_string(f, "auto_pad", "SAME_UPPER");
}
static void attrs_same_lower(nn_fixture *f) { /* ... at the beginning */
    NN_INTS(f, "strides", 2, 1);
    nn_string(f, "auto_pad", "SAME_LOWER");
}
static void attrs_valid(nn_fixture *f) {
    NN_INTS(f, "strides", 1, 2);
    nn_string(f, "auto_pad", "VALID");
}
static void attrs_1d(nn_fixture *f) {
    NN_INTS(f, "pads", 2, 1);
    NN_INTS(f, "strides", 2);
    NN_INTS(f, "dilations", 2);
}
static void attrs_1d_depthwise(nn_fixture *f) {
    NN_INTS(f, "pads", 1, 2);
    nn_int(f, "group", 3);
}
static void attrs_3d(nn_fixture *f) {
    NN_INTS(f, "pads", 1, 0, 1, 0, 1, 1);
    NN_INTS(f, "strides", 1, 2, 1);
}

static void test_conv_pads_strides(void) { conv_case("conv_pads_strides", true, attrs_pads_strides); }
static void test_conv_dilations(void) { conv_case("conv_dilations", true, attrs_dilations); }
static void test_conv_groups(void) { conv_case("conv_groups", true, attrs_groups); }
static void test_conv_depthwise(void) { conv_case("conv_depthwise", true, attrs_depthwise); }
static void test_conv_depthwise_dilated(void) {
    conv_case("conv_depthwise_dilated", false, attrs_depthwise_dilated);
}
static void test_conv_1x1(void) { conv_case("conv_1x1", true, NULL); }
static void test_conv_1x1_groups(void) { conv_case("conv_1x1_groups", false, attrs_group2); }
static void test_conv_1x1_strided(void) { conv_case("conv_1x1_strided", true, attrs_strides2); }
static void test_conv_same_upper(void) { conv_case("conv_same_upper", true, attrs_same_upper); }
static void test_conv_same_lower(void) { conv_case("conv_same_lower", true, attrs_same_lower); }
static void test_conv_valid(void) { conv_case("conv_valid", false, attrs_valid); }
static void test_conv_1d(void) { conv_case("conv_1d", true, attrs_1d); }
static void test_conv_1d_depthwise(void) { conv_case("conv_1d_depthwise", true, attrs_1d_depthwise); }
static void test_conv_3d(void) { conv_case("conv_3d", true, attrs_3d); }

/* A pseudo-random float in [-1, 1) from a 32-bit LCG (Numerical Recipes). */
static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

/* Conv of [1, C, D1..Dn] (n 1 or 2) with M filters of kernel k (both axes),
 * pads p on every side, stride 1, against a direct loop in double. The
 * sizes make the im2col matrix pass the 8 Mi-float budget, so the kernel
 * builds it in slabs of the first output axis. */
static void conv_direct_check(int n, int64_t channels, int64_t size, int64_t m_count, int64_t k, int64_t p) {
    int64_t h = n == 2 ? size : 1, wd = size;
    int64_t oh = n == 2 ? size + 2 * p - k + 1 : 1, ow = size + 2 * p - k + 1;
    int64_t kh = n == 2 ? k : 1;
    int64_t xd[4] = {1, channels, size, size}, wdims[4] = {m_count, channels, k, k};
    int64_t yd[4] = {1, m_count, n == 2 ? oh : ow, ow};
    size_t nx = (size_t)(channels * h * wd), nw = (size_t)(m_count * channels * kh * k);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    uint32_t seed = 7;
    for (size_t i = 0; i < nx; i++) x[i] = lcg(&seed);
    for (size_t i = 0; i < nw; i++) w[i] = lcg(&seed);
    nn_fixture f;
    nn_begin(&f, "Conv", "conv_direct");
    nn_in_dims(&f, TGC_FLOAT32, n + 2, xd, x);
    nn_in_dims(&f, TGC_FLOAT32, n + 2, wdims, w);
    if (n == 2) NN_INTS(&f, "pads", p, p, p, p);
    else NN_INTS(&f, "pads", p, p);
    nn_out_dims(&f, TGC_FLOAT32, n + 2, yd);
    tgc_status st = nn_run(&f);
    CU_ASSERT_EQUAL(st, TGC_OK);
    double worst = 0.0;
    for (int64_t m = 0; st == TGC_OK && m < m_count; m++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double sum = 0.0;
                for (int64_t c = 0; c < channels; c++)
                    for (int64_t a = 0; a < kh; a++)
                        for (int64_t b = 0; b < k; b++) {
                            int64_t ii = n == 2 ? i - p + a : 0, jj = j - p + b;
                            if (ii < 0 || ii >= h || jj < 0 || jj >= wd) continue;
                            double wv = w[((m * channels + c) * kh + a) * k + b];
                            sum += (double)x[(c * h + ii) * wd + jj] * wv;
                        }
                double d = fabs(sum - nn_out_f32(&f, 0, (m * oh + i) * ow + j));
                if (d > worst) worst = d;
            }
    CU_ASSERT(worst <= 1e-3); /* sums of ~1000 products of values in [-1, 1) */
    nn_end(&f);
    free(x);
    free(w);
}

static void test_conv_im2col_slabs_2d(void) { conv_direct_check(2, 64, 130, 3, 3, 1); }
static void test_conv_im2col_slabs_1d(void) { conv_direct_check(1, 700, 4100, 2, 3, 1); }

/* ---- Pools -------------------------------------------------------------------- */

static void max_pool_case(const char *name, void (*attrs)(nn_fixture *), bool indices) {
    nn_fixture f;
    nn_begin(&f, "MaxPool", name);
    nn_in(&f, "x");
    attrs(&f);
    nn_out(&f, "y");
    if (indices) nn_out(&f, "indices");
    nn_check(&f, TOL);
    nn_end(&f);
}

static void attrs_max_ceil_pads(nn_fixture *f) {
    NN_INTS(f, "kernel_shape", 3, 3);
    NN_INTS(f, "strides", 2, 2);
    NN_INTS(f, "pads", 1, 1, 1, 1);
    nn_int(f, "ceil_mode", 1);
}
static void attrs_max_dilations(nn_fixture *f) {
    NN_INTS(f, "kernel_shape", 2, 3);
    NN_INTS(f, "strides", 1, 2);
    NN_INTS(f, "pads", 1, 1, 1, 1);
    NN_INTS(f, "dilations", 2, 1);
}
static void attrs_max_column_major(nn_fixture *f) {
    NN_INTS(f, "kernel_shape", 2, 2);
    NN_INTS(f, "strides", 2, 2);
    nn_int(f, "ceil_mode", 1);
    nn_int(f, "storage_order", 1);
}
static void attrs_max_same_upper(nn_fixture *f) {
    NN_INTS(f, "kernel_shape", 3, 3);
    NN_INTS(f, "strides", 2, 2);
    nn_string(f, "auto_pad", "SAME_UPPER");
}
static void attrs_max_1d(nn_fixture *f) {
    NN_INTS(f, "kernel_shape", 3);
    NN_INTS(f, "strides", 3);
    nn_int(f, "ceil_mode", 1);
}
static void attrs_max_3d(nn_fixture *f) {
    NN_INTS(f, "kernel_shape", 2, 2, 3);
    NN_INTS(f, "strides", 2, 2, 2);
    NN_INTS(f, "pads", 0, 1, 1, 0, 1, 1);
}

static void test_maxpool_ceil_pads(void) { max_pool_case("maxpool_ceil_pads", attrs_max_ceil_pads, true); }
static void test_maxpool_no_indices(void) { max_pool_case("maxpool_ceil_pads", attrs_max_ceil_pads, false); }
static void test_maxpool_dilations(void) { max_pool_case("maxpool_dilations", attrs_max_dilations, true); }
static void test_maxpool_column_major(void) {
    max_pool_case("maxpool_column_major", attrs_max_column_major, true);
}
static void test_maxpool_same_upper(void) { max_pool_case("maxpool_same_upper", attrs_max_same_upper, true); }
static void test_maxpool_1d(void) { max_pool_case("maxpool_1d", attrs_max_1d, true); }
static void test_maxpool_3d(void) { max_pool_case("maxpool_3d", attrs_max_3d, true); }

static void test_maxpool_omitted_indices(void) { /* Indices declared but not asked for */
    nn_fixture f;
    nn_begin(&f, "MaxPool", "maxpool_1d");
    nn_in(&f, "x");
    attrs_max_1d(&f);
    nn_out(&f, "y");
    nn_out_omitted(&f);
    nn_check(&f, TOL);
    nn_end(&f);
}

/* Ties keep the first maximum in window order (row-major), padding never
 * wins: on a constant input every index is the window's first input tap. */
static void test_maxpool_ties(void) {
    static const int64_t xd[4] = {1, 1, 4, 4}, yd[4] = {1, 1, 3, 3};
    static const float x[16] = {0};
    static const int64_t expect[9] = {0, 1, 3, 4, 5, 7, 12, 13, 15};
    nn_fixture f;
    nn_begin(&f, "MaxPool", "ties");
    nn_in_dims(&f, TGC_FLOAT32, 4, xd, x);
    NN_INTS(&f, "kernel_shape", 2, 2);
    NN_INTS(&f, "strides", 2, 2);
    NN_INTS(&f, "pads", 1, 1, 1, 1);
    nn_out_dims(&f, TGC_FLOAT32, 4, yd);
    nn_out_dims(&f, TGC_INT64, 4, yd);
    nn_check(&f, TOL);
    const int64_t *idx = f.ok ? tgc_buffer_host_ptr(f.out[1].buf) : NULL;
    for (int i = 0; idx != NULL && i < 9; i++) {
        CU_ASSERT_EQUAL(idx[i], expect[i]);
        CU_ASSERT_EQUAL(nn_out_f32(&f, 0, i), 0.0f);
    }
    nn_end(&f);
}

static void avg_pool_case(const char *name, int64_t include_pad, int64_t ceil_mode) {
    nn_fixture f;
    nn_begin(&f, "AveragePool", name);
    nn_in(&f, "x");
    NN_INTS(&f, "kernel_shape", 3, 3);
    NN_INTS(&f, "strides", 2, 2);
    NN_INTS(&f, "pads", 1, 1, 1, 1);
    nn_int(&f, "count_include_pad", include_pad);
    nn_int(&f, "ceil_mode", ceil_mode);
    nn_out(&f, "y");
    nn_check(&f, TOL);
    nn_end(&f);
}

static void test_avgpool_exclude_pad(void) { avg_pool_case("avgpool_exclude_pad", 0, 0); }
static void test_avgpool_include_pad(void) { avg_pool_case("avgpool_include_pad", 1, 0); }
static void test_avgpool_ceil_include_pad(void) { avg_pool_case("avgpool_ceil_include_pad", 1, 1); }
static void test_avgpool_ceil_exclude_pad(void) { avg_pool_case("avgpool_ceil_exclude_pad", 0, 1); }

static void test_avgpool_1d(void) {
    nn_fixture f;
    nn_begin(&f, "AveragePool", "avgpool_1d");
    nn_in(&f, "x");
    NN_INTS(&f, "kernel_shape", 4);
    NN_INTS(&f, "strides", 2);
    NN_INTS(&f, "pads", 1, 1);
    nn_out(&f, "y");
    nn_check(&f, TOL);
    nn_end(&f);
}

static void global_avg_case(const char *name) {
    nn_fixture f;
    nn_begin(&f, "GlobalAveragePool", name);
    nn_in(&f, "x");
    nn_out(&f, "y");
    nn_check(&f, TOL);
    nn_end(&f);
}

static void test_global_avgpool_2d(void) { global_avg_case("global_avgpool_2d"); }
static void test_global_avgpool_1d(void) { global_avg_case("global_avgpool_1d"); }
static void test_global_avgpool_3d(void) { global_avg_case("global_avgpool_3d"); }

/* ---- Normalisation ----------------------------------------------------------- */

static void test_batchnorm_4d(void) {
    nn_fixture f;
    nn_begin(&f, "BatchNormalization", "batchnorm_4d");
    static const char *const names[] = {"x", "scale", "b", "mean", "var"};
    for (int i = 0; i < 5; i++) nn_in(&f, names[i]);
    nn_out(&f, "y");
    nn_check(&f, TOL);
    nn_end(&f);
}

static void test_batchnorm_2d(void) {
    nn_fixture f;
    nn_begin(&f, "BatchNormalization", "batchnorm_2d");
    static const char *const names[] = {"x", "scale", "b", "mean", "var"};
    for (int i = 0; i < 5; i++) nn_in(&f, names[i]);
    nn_float(&f, "epsilon", 1e-3);
    nn_out(&f, "y");
    nn_check(&f, TOL);
    nn_end(&f);
}

/* In place, as when the executor forwards X's buffer to Y. */
static void test_batchnorm_in_place(void) {
    nn_fixture f;
    nn_begin(&f, "BatchNormalization", "batchnorm_4d");
    static const char *const names[] = {"x", "scale", "b", "mean", "var"};
    for (int i = 0; i < 5; i++) nn_in(&f, names[i]);
    nn_out(&f, "y");
    if (f.ok) {
        tgc_buffer_release(f.out[0].buf);
        f.out[0].buf = tgc_buffer_retain(f.in[0].buf);
    }
    nn_check(&f, TOL);
    nn_end(&f);
}

static void layer_norm_case(const char *name, int64_t axis, bool bias, double epsilon) {
    nn_fixture f;
    nn_begin(&f, "LayerNormalization", name);
    nn_in(&f, "x");
    nn_in(&f, "scale");
    if (bias) nn_in(&f, "b");
    nn_int(&f, "axis", axis);
    if (epsilon != 0.0) nn_float(&f, "epsilon", epsilon);
    nn_out(&f, "y");
    nn_out(&f, "mean");
    nn_out(&f, "inv_std_dev");
    nn_check(&f, TOL);
    nn_end(&f);
}

static void test_layernorm_last(void) { layer_norm_case("layernorm_last", -1, true, 0.0); }
/* Scale [4, 5] and B [5] broadcast over X [2, 3, 4, 5]'s axes 1..3. */
static void test_layernorm_axis1(void) { layer_norm_case("layernorm_axis1", 1, true, 0.0); }
static void test_layernorm_no_bias(void) { layer_norm_case("layernorm_no_bias", -2, false, 1e-3); }

static void test_layernorm_y_only(void) { /* Mean and InvStdDev not asked for */
    nn_fixture f;
    nn_begin(&f, "LayerNormalization", "layernorm_last");
    nn_in(&f, "x");
    nn_in(&f, "scale");
    nn_in(&f, "b");
    nn_out(&f, "y");
    nn_check(&f, TOL);
    nn_end(&f);
}

/* ---- Empty tensors ------------------------------------------------------------- */

static void test_empty_batch(void) {
    /* Conv, pools and normalisations with N = 0. */
    static const int64_t x0[4] = {0, 3, 5, 5}, w[4] = {4, 3, 3, 3}, y0[4] = {0, 4, 3, 3};
    static const int64_t p0[4] = {0, 3, 2, 2};
    static const int64_t c3[1] = {3}, g0[4] = {0, 3, 1, 1}, ln_stats[2] = {0, 1};
    nn_fixture f;
    nn_begin(&f, "Conv", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 4, x0, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 4, w, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, y0);
    nn_check(&f, TOL);
    nn_end(&f);

    nn_begin(&f, "MaxPool", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 4, x0, NULL);
    NN_INTS(&f, "kernel_shape", 2, 2);
    NN_INTS(&f, "strides", 2, 2);
    nn_out_dims(&f, TGC_FLOAT32, 4, p0);
    nn_out_dims(&f, TGC_INT64, 4, p0);
    nn_check(&f, TOL);
    nn_end(&f);

    nn_begin(&f, "AveragePool", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 4, x0, NULL);
    NN_INTS(&f, "kernel_shape", 2, 2);
    NN_INTS(&f, "strides", 2, 2);
    nn_out_dims(&f, TGC_FLOAT32, 4, p0);
    nn_check(&f, TOL);
    nn_end(&f);

    nn_begin(&f, "GlobalAveragePool", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 4, x0, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, g0);
    nn_check(&f, TOL);
    nn_end(&f);

    /* Planes but no elements in them (an empty, NULL-held input): each
     * mean is NaN, as numpy's np.mean of an empty array; written by the
     * kernel, not the fixture's all-ones fill (also a NaN, other bits). */
    static const int64_t xe[4] = {1, 3, 0, 5}, ge[4] = {1, 3, 1, 1};
    nn_begin(&f, "GlobalAveragePool", "empty planes");
    nn_in_dims(&f, TGC_FLOAT32, 4, xe, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, ge);
    nn_check(&f, TOL);
    for (int i = 0; i < 3; i++) {
        uint32_t bits;
        float y = nn_out_f32(&f, 0, i);
        memcpy(&bits, &y, sizeof bits);
        CU_ASSERT(isnan(y) && bits != 0xffffffffu);
    }
    nn_end(&f);

    nn_begin(&f, "BatchNormalization", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 4, x0, NULL);
    for (int i = 0; i < 4; i++) nn_in_dims(&f, TGC_FLOAT32, 1, c3, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, x0);
    nn_check(&f, TOL);
    nn_end(&f);

    static const int64_t lx[2] = {0, 4}, ls[1] = {4};
    nn_begin(&f, "LayerNormalization", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 2, lx, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 1, ls, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 2, lx);
    nn_out_dims(&f, TGC_FLOAT32, 2, ln_stats);
    nn_out_dims(&f, TGC_FLOAT32, 2, ln_stats);
    nn_check(&f, TOL);
    nn_end(&f);
}

static void test_empty_matmul(void) {
    /* M = 0: nothing; K = 0: zeros (an empty sum), for MatMul and Gemm. */
    static const int64_t a0[3] = {2, 0, 4}, b[2] = {4, 3}, y0[3] = {2, 0, 3};
    static const int64_t ak[2] = {3, 0}, bk[2] = {0, 4}, yk[2] = {3, 4}, c[1] = {4};
    static const float cv[4] = {1, 2, 3, 4};
    nn_fixture f;
    nn_begin(&f, "MatMul", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 3, a0, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 2, b, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 3, y0);
    nn_check(&f, TOL);
    nn_end(&f);

    nn_begin(&f, "MatMul", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 2, ak, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 2, bk, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 2, yk);
    nn_check(&f, TOL);
    for (int i = 0; i < 12 && f.ok; i++) CU_ASSERT_EQUAL(nn_out_f32(&f, 0, i), 0.0f);
    nn_end(&f);

    nn_begin(&f, "Gemm", "empty"); /* Y = alpha * 0 + beta * C */
    nn_in_dims(&f, TGC_FLOAT32, 2, ak, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 2, bk, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 1, c, cv);
    nn_float(&f, "beta", 2.0);
    nn_out_dims(&f, TGC_FLOAT32, 2, yk);
    nn_check(&f, TOL);
    for (int i = 0; i < 12 && f.ok; i++) CU_ASSERT_EQUAL(nn_out_f32(&f, 0, i), 2.0f * cv[i % 4]);
    nn_end(&f);
}

static void test_empty_channels(void) {
    /* Conv with C = 0: Y is the bias. LayerNorm over an empty axis: NaN statistics. */
    static const int64_t x[4] = {1, 0, 4, 4}, w[4] = {2, 0, 3, 3}, bd[1] = {2}, y[4] = {1, 2, 2, 2};
    static const float bias[2] = {0.5f, -1.5f};
    nn_fixture f;
    nn_begin(&f, "Conv", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 4, w, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 1, bd, bias);
    nn_out_dims(&f, TGC_FLOAT32, 4, y);
    nn_check(&f, TOL);
    for (int i = 0; i < 8 && f.ok; i++) CU_ASSERT_EQUAL(nn_out_f32(&f, 0, i), bias[i / 4]);
    nn_end(&f);

    static const int64_t lx[2] = {3, 0}, ls[1] = {0}, st[2] = {3, 1};
    nn_begin(&f, "LayerNormalization", "empty");
    nn_in_dims(&f, TGC_FLOAT32, 2, lx, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 1, ls, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 2, lx);
    nn_out_dims(&f, TGC_FLOAT32, 2, st);
    nn_out_dims(&f, TGC_FLOAT32, 2, st);
    nn_check(&f, TOL);
    for (int i = 0; i < 3 && f.ok; i++) CU_ASSERT(isnan(nn_out_f32(&f, 1, i)));
    nn_end(&f);
}

/* ---- Errors -------------------------------------------------------------------- */

static void test_errors(void) {
    static const int64_t a[2] = {3, 4}, b[2] = {5, 6}, y[2] = {3, 6};
    nn_fixture f;
    nn_begin(&f, "MatMul", "errors"); /* inner dimensions differ */
    nn_in_dims(&f, TGC_FLOAT32, 2, a, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 2, b, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 2, y);
    nn_check_fails(&f);
    nn_end(&f);

    static const int64_t b4[2] = {4, 6};
    nn_begin(&f, "MatMul", "errors"); /* int32 input to the float32 kernel */
    nn_in_dims(&f, TGC_INT32, 2, a, NULL);
    nn_in_dims(&f, TGC_INT32, 2, b4, NULL);
    nn_out_dims(&f, TGC_INT32, 2, y);
    nn_check_fails(&f);
    nn_end(&f);

    static const int64_t c2[2] = {2, 6};
    nn_begin(&f, "Gemm", "errors"); /* C [2, 6] does not broadcast to [3, 6] */
    nn_in_dims(&f, TGC_FLOAT32, 2, a, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 2, b4, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 2, c2, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 2, y);
    nn_check_fails(&f);
    nn_end(&f);

    static const int64_t x[4] = {1, 3, 5, 5}, w[4] = {4, 2, 3, 3}, cy[4] = {1, 4, 3, 3};
    nn_begin(&f, "Conv", "errors"); /* 3 channels, W takes 2 */
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 4, w, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, cy);
    nn_check_fails(&f);
    nn_end(&f);

    static const int64_t w3[4] = {4, 3, 3, 3}, bad_y[4] = {1, 4, 4, 4};
    nn_begin(&f, "Conv", "errors"); /* Y's spatial size is not the window's */
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 4, w3, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, bad_y);
    nn_check_fails(&f);
    nn_end(&f);

    nn_begin(&f, "Conv", "errors"); /* an unknown auto_pad */
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 4, w3, NULL);
    nn_string(&f, "auto_pad", "SAME");
    nn_out_dims(&f, TGC_FLOAT32, 4, cy);
    nn_check_fails(&f);
    nn_end(&f);

    nn_begin(&f, "MaxPool", "errors"); /* no kernel_shape */
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, x);
    nn_check_fails(&f);
    nn_end(&f);

    static const int64_t c4[1] = {4};
    nn_begin(&f, "BatchNormalization", "errors"); /* scale [4] for 3 channels */
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    for (int i = 0; i < 4; i++) nn_in_dims(&f, TGC_FLOAT32, 1, c4, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, x);
    nn_check_fails(&f);
    nn_end(&f);

    static const int64_t s3[1] = {3};
    nn_begin(&f, "LayerNormalization", "errors"); /* Scale [3] for a last axis of 5 */
    nn_in_dims(&f, TGC_FLOAT32, 4, x, NULL);
    nn_in_dims(&f, TGC_FLOAT32, 1, s3, NULL);
    nn_out_dims(&f, TGC_FLOAT32, 4, x);
    nn_check_fails(&f);
    nn_end(&f);
}

/* Scratch memory that cannot be had is a clean failure, and nothing leaks. */
static void test_scratch_out_of_memory(void) {
    nn_fixture f;
    nn_begin(&f, "Conv", "conv_pads_strides"); /* im2col buffer */
    nn_in(&f, "x");
    nn_in(&f, "w");
    nn_in(&f, "b");
    attrs_pads_strides(&f);
    nn_out(&f, "y");
    tgc_host_alloc_fail_nth(1);
    nn_check_fails(&f);
    tgc_host_alloc_fail_nth(0);
    nn_end(&f);

    /* Scale [4, 5] and B [5] expanded over [3, 4, 5] (full-size ones are
     * read in place, without scratch) */
    nn_begin(&f, "LayerNormalization", "layernorm_axis1");
    nn_in(&f, "x");
    nn_in(&f, "scale");
    nn_in(&f, "b");
    nn_int(&f, "axis", 1);
    nn_out(&f, "y");
    tgc_host_alloc_fail_nth(1);
    nn_check_fails(&f);
    tgc_host_alloc_fail_nth(0);
    nn_end(&f);
}

TGC_TEST_MAIN("cpu_nn",
              {"registry", test_registry},
              {"matmul 2-D", test_matmul_2d},
              {"matmul 1-D x 2-D", test_matmul_1d_2d},
              {"matmul 2-D x 1-D", test_matmul_2d_1d},
              {"matmul 1-D x 1-D", test_matmul_1d_1d},
              {"matmul batched broadcast", test_matmul_batched},
              {"matmul batch folded into rows", test_matmul_folded},
              {"matmul A broadcast over B's batch", test_matmul_a_broadcast},
              {"matmul 1-D x batched", test_matmul_1d_batched},
              {"gemm transA transB alpha beta C [N]", test_gemm_trans},
              {"gemm scalar C", test_gemm_scalar_c},
              {"gemm C [M, 1]", test_gemm_column_c},
              {"gemm C [M, N]", test_gemm_full_c},
              {"gemm no C", test_gemm_no_c},
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
              {"conv 1-D", test_conv_1d},
              {"conv 1-D depthwise", test_conv_1d_depthwise},
              {"conv 3-D", test_conv_3d},
              {"conv im2col slabs 2-D", test_conv_im2col_slabs_2d},
              {"conv im2col slabs 1-D", test_conv_im2col_slabs_1d},
              {"maxpool ceil_mode pads indices", test_maxpool_ceil_pads},
              {"maxpool without indices", test_maxpool_no_indices},
              {"maxpool omitted indices", test_maxpool_omitted_indices},
              {"maxpool dilations", test_maxpool_dilations},
              {"maxpool storage_order 1", test_maxpool_column_major},
              {"maxpool SAME_UPPER", test_maxpool_same_upper},
              {"maxpool 1-D", test_maxpool_1d},
              {"maxpool 3-D", test_maxpool_3d},
              {"maxpool ties", test_maxpool_ties},
              {"avgpool count_include_pad 0", test_avgpool_exclude_pad},
              {"avgpool count_include_pad 1", test_avgpool_include_pad},
              {"avgpool ceil_mode count_include_pad 1", test_avgpool_ceil_include_pad},
              {"avgpool ceil_mode count_include_pad 0", test_avgpool_ceil_exclude_pad},
              {"avgpool 1-D", test_avgpool_1d},
              {"global avgpool 2-D", test_global_avgpool_2d},
              {"global avgpool 1-D", test_global_avgpool_1d},
              {"global avgpool 3-D", test_global_avgpool_3d},
              {"batchnorm 4-D", test_batchnorm_4d},
              {"batchnorm 2-D epsilon", test_batchnorm_2d},
              {"batchnorm in place", test_batchnorm_in_place},
              {"layernorm axis -1", test_layernorm_last},
              {"layernorm axis 1 broadcast scale", test_layernorm_axis1},
              {"layernorm no bias", test_layernorm_no_bias},
              {"layernorm Y only", test_layernorm_y_only},
              {"empty batch", test_empty_batch},
              {"empty matmul and gemm", test_empty_matmul},
              {"empty channels", test_empty_channels},
              {"errors", test_errors},
              {"scratch out of memory", test_scratch_out_of_memory})
