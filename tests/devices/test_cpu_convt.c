/* The cpu kernels of the convolution-family and layout ops
 * (devices/cpu/kernels_convt.c, kernels_pad.c, kernels_channel.c) on cases
 * ONNX's backend data lacks, each against values from numpy: the script is
 * tests/data/kernels/make_convt_refs.py, each constant names the case it
 * prints. Also the error paths: a bad output shape, an index out of range,
 * a crop larger than the axis, edge padding of an empty axis. */
#include "tests/devices/kernel_fixture_nn.h"

#define DIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}

/* Output 0 of f (float32) equals want[0..n) within tol, element by element. */
static void expect_f32(const nn_fixture *f, const float *want, int64_t n, double tol) {
    CU_ASSERT_EQUAL_FATAL(tgc_value_numel(&f->out[0]), n);
    for (int64_t j = 0; j < n; j++) {
        float got = nn_out_f32(f, 0, j);
        CU_ASSERT(fabs(got - want[j]) <= tol);
        if (!(fabs(got - want[j]) <= tol)) fprintf(stderr, "\n  %s [%lld]: %g, want %g\n", f->op, (long long)j, got, want[j]);
    }
}

/* Runs f, asserting TGC_OK, then expect_f32. */
static void run_expect(nn_fixture *f, const float *want, int64_t n, double tol) {
    tgc_status st = nn_run(f);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (st != TGC_OK) fprintf(stderr, "\n  %s: %s\n", f->op, f->err);
    else expect_f32(f, want, n, tol);
}

/* ---- ConvTranspose ------------------------------------------------------------------------ */

/* X = arange(12) / 4 - 1 [1, 2, 2, 3], W = arange(8) / 8 - 0.3 [2, 1, 2, 2],
 * B [0.5, -1], group 2, strides (3, 2) past the kernel, dilations (1, 2),
 * pads (1, 0, 0, 1), output_padding (1, 0) -> [1, 2, 5, 6]. */
static void test_convt_group_strides(void) {
    float x[12], w[8], b[] = {0.5f, -1.0f};
    for (int i = 0; i < 12; i++) x[i] = (float)i / 4 - 1;
    for (int i = 0; i < 8; i++) w[i] = (float)i / 8 - 0.3f;
    static const float want[] = { /* make_convt_refs.py: convt */
        0.55f, 0.5f, 0.4625f, 0.5f, 0.46875f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.575f, 0.5f, 0.54375f,
        0.5f, 0.425f, 0.5f, 0.5125f, 0.5f, 0.48125f, 0.5f, 0.4875f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
        -0.775f, -1.0f, -0.375f, -1.0f, -0.11875f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -0.75f, -1.0f, -0.29375f, -1.0f,
        -0.1625001f, -1.0f, -0.4375f, -1.0f, 0.39375f, -1.0f, 0.6499999f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f};
    nn_fixture f;
    nn_begin(&f, "ConvTranspose", "convt");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 2, 2, 3), x);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2, 1, 2, 2), w);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2), b);
    nn_int(&f, "group", 2);
    NN_INTS(&f, "strides", 3, 2);
    NN_INTS(&f, "dilations", 1, 2);
    NN_INTS(&f, "pads", 1, 0, 0, 1);
    NN_INTS(&f, "output_padding", 1, 0);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 2, 5, 6));
    run_expect(&f, want, 60, 1e-5);
    nn_end(&f);
}

/* The same node with a Y of another size fails. */
static void test_convt_bad_output(void) {
    nn_fixture f;
    nn_begin(&f, "ConvTranspose", "convt_bad");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 2, 2, 3), NULL);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2, 1, 2, 2), NULL);
    nn_int(&f, "group", 2);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 2, 3, 5));
    nn_check_fails(&f);
    nn_end(&f);
}

/* ---- Pad ------------------------------------------------------------------------------------ */

/* np.pad([[1, 2, 3], [4, 5, 6]], ((0, 0), (5, 2)), 'reflect'): 5 passes
 * the axis's 2 reflectable elements. */
static void test_pad_reflect_past_edge(void) {
    static const float x[] = {1, 2, 3, 4, 5, 6};
    static const int64_t pads[] = {0, 5, 0, 2};
    static const float want[] = {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 5, 4, 5, 6, 5, 4, 5, 6, 5, 4};
    nn_fixture f;
    nn_begin(&f, "Pad", "pad_reflect");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2, 3), x);
    nn_in_dims(&f, TGC_INT64, DIMS(4), pads);
    nn_string(&f, "mode", "reflect");
    nn_out_dims(&f, TGC_FLOAT32, DIMS(2, 10));
    run_expect(&f, want, 20, 0.0);
    nn_end(&f);
}

/* axes [1] with pads [-1, 2] in mode edge: np.pad(x[:, 1:], ((0, 0), (0, 2)), 'edge'). */
static void test_pad_edge_crop_axes(void) {
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    static const int64_t pads[] = {-1, 2}, axes[] = {-1};
    static const float want[] = {1, 2, 3, 3, 3, 5, 6, 7, 7, 7, 9, 10, 11, 11, 11};
    nn_fixture f;
    nn_begin(&f, "Pad", "pad_edge");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(3, 4), x);
    nn_in_dims(&f, TGC_INT64, DIMS(2), pads);
    nn_in_omitted(&f);
    nn_in_dims(&f, TGC_INT64, DIMS(1), axes);
    nn_string(&f, "mode", "edge");
    nn_out_dims(&f, TGC_FLOAT32, DIMS(3, 5));
    run_expect(&f, want, 15, 0.0);
    nn_end(&f);
}

/* int32 elements, constant_value -7: np.pad(x, ((1, 0), (0, 2)), constant_values=-7). */
static void test_pad_constant_int32(void) {
    static const int32_t x[] = {10, 20, 30, 40}, value = -7;
    static const int64_t pads[] = {1, 0, 0, 2};
    static const int32_t want[] = {-7, -7, -7, -7, 10, 20, -7, -7, 30, 40, -7, -7};
    nn_fixture f;
    nn_begin(&f, "Pad", "pad_const");
    nn_in_dims(&f, TGC_INT32, DIMS(2, 2), x);
    nn_in_dims(&f, TGC_INT64, DIMS(4), pads);
    nn_in_dims(&f, TGC_INT32, 0, NULL, &value);
    nn_out_dims(&f, TGC_INT32, DIMS(3, 4));
    CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(f.out[0].buf), want, sizeof want), 0);
    nn_end(&f);
}

/* A crop past the axis, and edge padding with nothing left to copy, fail. */
static void test_pad_errors(void) {
    static const int64_t crop[] = {-3, 1}, edge[] = {-2, 1};
    nn_fixture f;
    nn_begin(&f, "Pad", "pad_crop");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2), NULL);
    nn_in_dims(&f, TGC_INT64, DIMS(2), crop);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(0));
    nn_check_fails(&f);
    nn_end(&f);
    nn_begin(&f, "Pad", "pad_edge_empty");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2), NULL);
    nn_in_dims(&f, TGC_INT64, DIMS(2), edge);
    nn_string(&f, "mode", "edge");
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1));
    nn_check_fails(&f);
    nn_end(&f);
}

/* ---- LpPool, GlobalLpPool --------------------------------------------------------------------- */

/* x = arange(9) - 4 [1, 1, 3, 3], p 3, kernel [2, 2], strides [2, 1],
 * pads [1, 0, 0, 1]: (sum |window|^3)^(1/3) over the zero-padded input. */
static void test_lp_pool_p3(void) {
    float x[9];
    for (int i = 0; i < 9; i++) x[i] = (float)i - 4;
    static const float want[] = {4.497941f, 3.271066f, 2.0f, 3.301927f, 4.514357f, 4.020726f}; /* lppool */
    nn_fixture f;
    nn_begin(&f, "LpPool", "lppool");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 1, 3, 3), x);
    nn_int(&f, "p", 3);
    NN_INTS(&f, "kernel_shape", 2, 2);
    NN_INTS(&f, "strides", 2, 1);
    NN_INTS(&f, "pads", 1, 0, 0, 1);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 1, 2, 3));
    run_expect(&f, want, 6, 1e-5);
    nn_end(&f);
}

/* x = arange(10) / 3 - 1.5 [1, 2, 5]; p 1 and 3. */
static void global_lp_case(int64_t p, const float *want) {
    float x[10];
    for (int i = 0; i < 10; i++) x[i] = (float)i / 3 - 1.5f;
    nn_fixture f;
    nn_begin(&f, "GlobalLpPool", "glp");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 2, 5), x);
    nn_int(&f, "p", p);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 2, 1));
    run_expect(&f, want, 2, 1e-5);
    nn_end(&f);
}

static void test_global_lp_pool(void) {
    static const float p1[] = {4.166667f, 4.166667f}, p3[] = {1.783312f, 1.783313f}; /* glp1, glp3 */
    global_lp_case(1, p1);
    global_lp_case(3, p3);
}

/* ---- MaxUnpool ---------------------------------------------------------------------------------- */

/* Indices address the default [1, 1, 4, 4] output, which output_shape
 * [1, 1, 5, 5] holds in its leading corner (ONNX's reference): 5, 7, 13, 15
 * land at (1, 1), (1, 3), (3, 1), (3, 3), flat 6, 8, 16, 18. */
static void test_max_unpool_output_shape(void) {
    static const float x[] = {5, 6, 7, 8};
    static const int64_t ind[] = {5, 7, 13, 15}, shape[] = {1, 1, 5, 5};
    float want[25] = {0};
    want[6] = 5, want[8] = 6, want[16] = 7, want[18] = 8;
    nn_fixture f;
    nn_begin(&f, "MaxUnpool", "unpool");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 1, 2, 2), x);
    nn_in_dims(&f, TGC_INT64, DIMS(1, 1, 2, 2), ind);
    nn_in_dims(&f, TGC_INT64, DIMS(4), shape);
    NN_INTS(&f, "kernel_shape", 2, 2);
    NN_INTS(&f, "strides", 2, 2);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 1, 5, 5));
    run_expect(&f, want, 25, 0.0);
    nn_end(&f);
}

static void test_max_unpool_bad_index(void) {
    static const int64_t ind[] = {0, 1, 2, 16};
    nn_fixture f;
    nn_begin(&f, "MaxUnpool", "unpool_bad");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 1, 2, 2), NULL);
    nn_in_dims(&f, TGC_INT64, DIMS(1, 1, 2, 2), ind);
    NN_INTS(&f, "kernel_shape", 2, 2);
    NN_INTS(&f, "strides", 2, 2);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 1, 4, 4));
    nn_check_fails(&f);
    nn_end(&f);
}

/* ---- InstanceNormalization, LRN ------------------------------------------------------------------ */

static void test_instance_norm(void) {
    static const float x[] = {1, 2, 4, -1, 0, 5}, scale[] = {2, 0.5f}, b[] = {1, -1};
    static const float want[] = {-1.138083f, 0.4654794f, 3.672604f, -1.4445f, -1.254f, -0.3014998f}; /* inorm */
    nn_fixture f;
    nn_begin(&f, "InstanceNormalization", "inorm");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 2, 3), x);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2), scale);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(2), b);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 2, 3));
    run_expect(&f, want, 6, 1e-5);
    nn_end(&f);
}

/* Planes of 1003 elements (past the partial sums' blocks of 8, with a
 * tail) far from zero (1000 + a small wave): against the two-pass mean
 * and variance in long double, within float rounding. */
static void test_instance_norm_long_planes(void) {
    enum { C = 3, S = 1003 };
    static float x[C * S], want[C * S];
    static const float scale[C] = {1.5f, -0.5f, 2.0f}, b[C] = {0.25f, 0.0f, -1.0f};
    for (int ch = 0; ch < C; ch++) {
        long double sum = 0, sq = 0;
        for (int i = 0; i < S; i++) {
            x[ch * S + i] = 1000.0f + (float)((i * 7 + ch) % 23) * 0.125f;
            sum += x[ch * S + i];
        }
        long double mean = sum / S;
        for (int i = 0; i < S; i++) sq += (x[ch * S + i] - mean) * (x[ch * S + i] - mean);
        long double k = scale[ch] / sqrtl(sq / S + 1e-5L);
        for (int i = 0; i < S; i++) want[ch * S + i] = (float)((x[ch * S + i] - mean) * k + b[ch]);
    }
    nn_fixture f;
    nn_begin(&f, "InstanceNormalization", "inorm_long");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, C, S), x);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(C), scale);
    nn_in_dims(&f, TGC_FLOAT32, DIMS(C), b);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, C, S));
    run_expect(&f, want, C * S, 1e-5);
    nn_end(&f);
}

/* DepthToSpace DCR, blocksize 3, on int64 and uint8 elements: channel k of
 * x [1, 9, 1, 2] holds (10k, 10k + 1); y[0, 0, bh, 3w + bw] = x[0, 3bh + bw,
 * 0, w] (ONNX's DCR rule, by hand). */
static void test_depth_to_space_elem_sizes(void) {
    static const int64_t want[18] = {0, 10, 20, 1, 11, 21, 30, 40, 50, 31, 41, 51, 60, 70, 80, 61, 71, 81};
    int64_t x64[18];
    uint8_t x8[18];
    for (int k = 0; k < 9; k++)
        for (int w = 0; w < 2; w++) x64[2 * k + w] = 10 * k + w, x8[2 * k + w] = (uint8_t)(10 * k + w);
    for (int t = 0; t < 2; t++) {
        nn_fixture f;
        nn_begin(&f, "DepthToSpace", "d2s_elem_sizes");
        nn_in_dims(&f, t ? TGC_UINT8 : TGC_INT64, DIMS(1, 9, 1, 2), t ? (const void *)x8 : (const void *)x64);
        nn_int(&f, "blocksize", 3);
        nn_out_dims(&f, t ? TGC_UINT8 : TGC_INT64, DIMS(1, 1, 3, 6));
        CU_ASSERT_EQUAL(nn_run(&f), TGC_OK);
        const void *y = tgc_buffer_host_ptr(f.out[0].buf);
        for (int i = 0; i < 18; i++)
            CU_ASSERT_EQUAL(t ? (int64_t)((const uint8_t *)y)[i] : ((const int64_t *)y)[i], want[i]);
        nn_end(&f);
    }
}

/* size 3, alpha 0.3: y = x / (1 + 0.1 * S)^0.75, S over channels c-1..c+1. */
static void test_lrn(void) {
    static const float x[] = {1, -2, 3, 0.5f, -1, 2, 4, -3};
    static const float want[] = {0.5946036f, -1.533447f, 1.719716f, 0.3184365f, -0.3826248f, 1.062216f,
                                 1.899053f, -1.606295f}; /* lrn */
    nn_fixture f;
    nn_begin(&f, "LRN", "lrn");
    nn_in_dims(&f, TGC_FLOAT32, DIMS(1, 4, 1, 2), x);
    nn_int(&f, "size", 3);
    nn_float(&f, "alpha", 0.3);
    nn_out_dims(&f, TGC_FLOAT32, DIMS(1, 4, 1, 2));
    run_expect(&f, want, 8, 1e-5);
    nn_end(&f);
}

TGC_TEST_MAIN("cpu_convt", {"instance norm on long planes", test_instance_norm_long_planes},
              {"depth to space of int64 and uint8", test_depth_to_space_elem_sizes},
              {"convtranspose group, strides past the kernel, dilations", test_convt_group_strides},
              {"convtranspose bad output", test_convt_bad_output},
              {"pad reflect past the edge", test_pad_reflect_past_edge},
              {"pad edge, crop, axes", test_pad_edge_crop_axes},
              {"pad constant int32", test_pad_constant_int32},
              {"pad errors", test_pad_errors},
              {"lppool p 3", test_lp_pool_p3},
              {"globallppool p 1, 3", test_global_lp_pool},
              {"maxunpool output_shape", test_max_unpool_output_shape},
              {"maxunpool bad index", test_max_unpool_bad_index},
              {"instancenorm", test_instance_norm},
              {"lrn", test_lrn})
