/* The gpu (OpenCL) kernels of the convolution-family and layout ops
 * (devices/opencl/kernels_convt.c, kernels/convt.cl) against the cpu kernels
 * of the same ops on seeded random inputs (tests/devices/gpu_fixture_nn.h),
 * on shapes ONNX's backend data lacks: odd sizes, groups, strides larger
 * than the kernel, dilations with output_padding, SAME_* with an odd
 * output_shape, 3-D; Pad with opset-18 axes, crops and reflections past the
 * edge, int64 elements; DepthToSpace in both modes with blocksize 3;
 * InstanceNormalization and GlobalMaxPool on planes larger than a
 * work-group; LRN with an even size; LpPool with dilations and ceil_mode. Without an OpenCL device every case
 * passes after a notice. */
#include "tests/devices/gpu_fixture_nn.h"

#define TOL_SUM 1e-4 /* absolute: sums of products */
#define TOL 1e-5     /* relative elsewhere */

/* Appends an int64 input that lives in host memory for the gpu kernel (a
 * shape argument: Pad's pads and axes). */
static void in_host_ints(gn_fixture *f, int n, const int64_t *v) {
    CU_ASSERT_FATAL(f->n_in < GN_MAX_IO);
    int i = f->n_in++;
    tgc_value val = {.dtype = TGC_INT64, .rank = 1, .dims = {n}};
    f->cin[i] = f->gin[i] = val;
    gn_alloc(f, f->cpu, &f->cin[i]);
    gn_alloc(f, tgc_host_device(), &f->gin[i]);
    if (!f->ok || n == 0) return;
    memcpy(tgc_buffer_host_ptr(f->cin[i].buf), v, (size_t)n * sizeof *v);
    memcpy(tgc_buffer_host_ptr(f->gin[i].buf), v, (size_t)n * sizeof *v);
}

#define IN_HOST_INTS(f, ...) in_host_ints((f), GN_DIMS(__VA_ARGS__))

static void test_registry(void) {
    static const char *const ops[] = {"ConvTranspose", "Pad", "DepthToSpace", "SpaceToDepth",
                                      "InstanceNormalization", "GlobalMaxPool", "LRN", "LpPool", "GlobalLpPool"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const tgc_kernel_def *k = tgc_kernel_find(ops[i], TGC_DEVICE_GPU, TGC_FLOAT32);
        CU_ASSERT_PTR_NOT_NULL(k);
        CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(ops[i], TGC_DEVICE_CPU, TGC_FLOAT32));
    }
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Pad", TGC_DEVICE_GPU, TGC_INT64));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("ConvTranspose", TGC_DEVICE_GPU, TGC_INT64));
}

/* ---- ConvTranspose ------------------------------------------------------------------- */

/* Groups 2, strides (3, 2) past the kernel (2, 2), dilations (2, 1),
 * asymmetric pads and output_padding, bias: O = s (D - 1) + op + ek - pads =
 * 3 * 4 + 1 + 3 - 1 - 0 = 15 and 2 * 6 + 1 + 2 - 0 - 2 = 13. */
static void test_convt_groups_strides(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 1)) return;
    GN_IN(&f, 2, 4, 5, 7);
    GN_IN(&f, 4, 3, 2, 2);
    GN_IN(&f, 6);
    gn_int(&f, "group", 2);
    GN_INTS(&f, "strides", 3, 2);
    GN_INTS(&f, "dilations", 2, 1);
    GN_INTS(&f, "pads", 1, 0, 0, 2);
    GN_INTS(&f, "output_padding", 1, 1);
    GN_OUT(&f, TGC_FLOAT32, 2, 6, 15, 13);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* 1-D, SAME_LOWER with an output_shape of 15 (odd total padding 2 * 6 + 4
 * - 15 = 1, at the begin), no bias. */
static void test_convt_same_lower_output_shape(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 2)) return;
    GN_IN(&f, 1, 3, 7);
    GN_IN(&f, 3, 2, 4);
    gn_string(&f, "auto_pad", "SAME_LOWER");
    GN_INTS(&f, "strides", 2);
    GN_INTS(&f, "output_shape", 15);
    GN_OUT(&f, TGC_FLOAT32, 1, 2, 15);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* SAME_UPPER without output_shape: O = D * s. */
static void test_convt_same_upper(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 3)) return;
    GN_IN(&f, 2, 3, 5, 4);
    GN_IN(&f, 3, 5, 3, 3);
    GN_IN(&f, 5);
    gn_string(&f, "auto_pad", "SAME_UPPER");
    GN_INTS(&f, "strides", 2, 3);
    GN_OUT(&f, TGC_FLOAT32, 2, 5, 10, 12);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* 3-D with pads 1: 2 + 3 - 2 = 3, 2 * 3 + 2 - 2 = 6, 2 * 2 + 2 - 2 = 4. */
static void test_convt_3d(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 4)) return;
    GN_IN(&f, 1, 2, 3, 4, 3);
    GN_IN(&f, 2, 2, 3, 2, 2);
    GN_IN(&f, 2);
    GN_INTS(&f, "strides", 1, 2, 2);
    GN_INTS(&f, "pads", 1, 1, 1, 1, 1, 1);
    GN_OUT(&f, TGC_FLOAT32, 1, 2, 3, 6, 4);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* Depthwise (group == C), stride 2: 2 * 5 + 3 = 13. */
static void test_convt_depthwise(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 5)) return;
    GN_IN(&f, 1, 3, 6, 6);
    GN_IN(&f, 3, 1, 3, 3);
    gn_in_omitted(&f);
    gn_int(&f, "group", 3);
    GN_INTS(&f, "strides", 2, 2);
    GN_OUT(&f, TGC_FLOAT32, 1, 3, 13, 13);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* 64 input channels (sums of 64 * 4 products), stride 2, pads 1:
 * 2 * 8 + 4 - 2 = 18. */
static void test_convt_wide(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 18)) return;
    GN_IN(&f, 2, 64, 9, 9);
    GN_IN(&f, 64, 8, 4, 4);
    GN_IN(&f, 8);
    GN_INTS(&f, "strides", 2, 2);
    GN_INTS(&f, "pads", 1, 1, 1, 1);
    GN_OUT(&f, TGC_FLOAT32, 2, 8, 18, 18);
    gn_check(&f, GN_ABS, TOL_SUM);
    gn_end(&f);
}

/* No input channels: Y is the bias on both devices. */
static void test_convt_no_channels(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 19)) return;
    GN_IN(&f, 1, 0, 3, 3);
    GN_IN(&f, 0, 2, 2, 2);
    GN_IN(&f, 2);
    GN_OUT(&f, TGC_FLOAT32, 1, 2, 4, 4);
    gn_check(&f, GN_ABS, 0.0);
    gn_end(&f);
}

/* A Y whose shape the attributes do not give fails on both devices. */
static void test_convt_bad_output(void) {
    gn_fixture f;
    if (!gn_begin(&f, "ConvTranspose", 6)) return;
    GN_IN(&f, 1, 2, 3, 3);
    GN_IN(&f, 2, 2, 3, 3);
    GN_OUT(&f, TGC_FLOAT32, 1, 2, 6, 5);
    gn_check_fails(&f);
    gn_end(&f);
}

/* ---- Pad ------------------------------------------------------------------------------- */

/* Reflect over axes [-1, 2] (opset 18): W 5 gets 7 before (past W - 1:
 * reflected twice) and loses 1 at the end; H 4 gets 1 and 3. */
static void test_pad_reflect_axes(void) {
    gn_fixture f;
    if (!gn_begin(&f, "Pad", 7)) return;
    GN_IN(&f, 2, 3, 4, 5);
    IN_HOST_INTS(&f, 7, 1, -1, 3);
    gn_in_omitted(&f);
    IN_HOST_INTS(&f, -1, 2);
    gn_string(&f, "mode", "reflect");
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 8, 11);
    gn_check(&f, GN_REL, 0.0);
    gn_end(&f);
}

/* Edge with crops: [3, 7] with pads [-1, 2, 1, -3] -> [3, 6]. */
static void test_pad_edge_crop(void) {
    gn_fixture f;
    if (!gn_begin(&f, "Pad", 8)) return;
    GN_IN(&f, 3, 7);
    IN_HOST_INTS(&f, -1, 2, 1, -3);
    gn_string(&f, "mode", "edge");
    GN_OUT(&f, TGC_FLOAT32, 3, 6);
    gn_check(&f, GN_REL, 0.0);
    gn_end(&f);
}

/* Constant int64 elements with constant_value 9 (8-byte moves). */
static void test_pad_constant_int64(void) {
    gn_fixture f;
    if (!gn_begin(&f, "Pad", 9)) return;
    int64_t data[20], nine = 9;
    for (int i = 0; i < 20; i++) data[i] = i * 1000003LL - 7;
    gn_in_data(&f, TGC_INT64, GN_DIMS(4, 5), data);
    IN_HOST_INTS(&f, 1, 0, 2, 3);
    in_host_ints(&f, 1, &nine); /* constant_value: an int64 scalar in host memory */
    f.cin[2].rank = f.gin[2].rank = 0;
    GN_OUT(&f, TGC_INT64, 7, 8);
    gn_check(&f, GN_REL, 0.0);
    gn_end(&f);
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------------------------ */

static void depth_to_space_case(unsigned seed, const char *mode) {
    gn_fixture f;
    if (!gn_begin(&f, "DepthToSpace", seed)) return;
    GN_IN(&f, 2, 18, 3, 5);
    gn_int(&f, "blocksize", 3);
    gn_string(&f, "mode", mode);
    GN_OUT(&f, TGC_FLOAT32, 2, 2, 9, 15);
    gn_check(&f, GN_REL, 0.0);
    gn_end(&f);
}

static void test_depth_to_space_dcr(void) { depth_to_space_case(10, "DCR"); }
static void test_depth_to_space_crd(void) { depth_to_space_case(11, "CRD"); }

static void test_space_to_depth(void) {
    gn_fixture f;
    if (!gn_begin(&f, "SpaceToDepth", 12)) return;
    GN_IN(&f, 1, 2, 6, 9);
    gn_int(&f, "blocksize", 3);
    GN_OUT(&f, TGC_FLOAT32, 1, 18, 2, 3);
    gn_check(&f, GN_REL, 0.0);
    gn_end(&f);
}

/* ---- InstanceNormalization, GlobalMaxPool, LRN ------------------------------------------------ */

static void instance_norm_case(unsigned seed, int rank, const int64_t *dims) {
    gn_fixture f;
    if (!gn_begin(&f, "InstanceNormalization", seed)) return;
    gn_in_range(&f, -3.0f, 5.0f, rank, dims);
    gn_in_range(&f, 0.5f, 2.0f, GN_DIMS(dims[1]));
    gn_in_range(&f, -1.0f, 1.0f, GN_DIMS(dims[1]));
    gn_float(&f, "epsilon", 1e-3);
    gn_out(&f, TGC_FLOAT32, rank, dims);
    gn_check(&f, GN_REL, 1e-4);
    gn_end(&f);
}

static void test_instance_norm_odd(void) { instance_norm_case(13, GN_DIMS(2, 3, 7, 11)); }
static void test_instance_norm_large_plane(void) { instance_norm_case(14, GN_DIMS(1, 2, 1000)); }

static void global_max_pool_case(unsigned seed, int rank, const int64_t *dims) {
    gn_fixture f;
    if (!gn_begin(&f, "GlobalMaxPool", seed)) return;
    gn_in_range(&f, -1.0f, 1.0f, rank, dims);
    int64_t out[TGC_MAX_RANK] = {dims[0], dims[1], 1, 1, 1};
    gn_out(&f, TGC_FLOAT32, rank, out);
    gn_check(&f, GN_REL, 0.0);
    gn_end(&f);
}

static void test_global_max_pool_odd(void) { global_max_pool_case(15, GN_DIMS(2, 3, 5, 7)); }
static void test_global_max_pool_large(void) { global_max_pool_case(16, GN_DIMS(1, 2, 1000)); }

static void test_lrn_even_size(void) {
    gn_fixture f;
    if (!gn_begin(&f, "LRN", 17)) return;
    GN_IN(&f, 2, 7, 3, 5);
    gn_int(&f, "size", 4);
    gn_float(&f, "alpha", 0.02);
    gn_float(&f, "beta", 0.6);
    gn_float(&f, "bias", 2.0);
    GN_OUT(&f, TGC_FLOAT32, 2, 7, 3, 5);
    gn_check(&f, GN_REL, 1e-5);
    gn_end(&f);
}

/* LpPool p 3 with dilations, asymmetric pads and ceil_mode (opset 18). */
static void test_lp_pool(void) {
    gn_fixture f;
    if (!gn_begin(&f, "LpPool", 20)) return;
    GN_IN(&f, 2, 3, 7, 8);
    gn_int(&f, "p", 3);
    GN_INTS(&f, "kernel_shape", 3, 2);
    GN_INTS(&f, "strides", 2, 3);
    GN_INTS(&f, "dilations", 1, 2);
    GN_INTS(&f, "pads", 1, 0, 0, 1);
    gn_int(&f, "ceil_mode", 1);
    /* ceil((7 + 1 - 3) / 2) + 1 = 4, ceil((8 + 1 - 3) / 3) + 1 = 3 */
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 4, 3);
    gn_check(&f, GN_REL, 1e-5);
    gn_end(&f);
}

static void global_lp_pool_case(unsigned seed, int64_t p) {
    gn_fixture f;
    if (!gn_begin(&f, "GlobalLpPool", seed)) return;
    GN_IN(&f, 2, 3, 700);
    gn_int(&f, "p", p);
    GN_OUT(&f, TGC_FLOAT32, 2, 3, 1);
    gn_check(&f, GN_REL, 1e-5);
    gn_end(&f);
}

static void test_global_lp_pool(void) {
    global_lp_pool_case(21, 1);
    global_lp_pool_case(22, 2);
    global_lp_pool_case(23, 3);
}

static void test_counters(void) { gn_suite_end(); }

TGC_TEST_MAIN("gpu_convt",
              {"registry", test_registry},
              {"convtranspose groups, strides past the kernel", test_convt_groups_strides},
              {"convtranspose 1d SAME_LOWER output_shape", test_convt_same_lower_output_shape},
              {"convtranspose SAME_UPPER", test_convt_same_upper},
              {"convtranspose 3d", test_convt_3d},
              {"convtranspose depthwise", test_convt_depthwise},
              {"convtranspose 64 channels", test_convt_wide},
              {"convtranspose no input channels", test_convt_no_channels},
              {"convtranspose bad output", test_convt_bad_output},
              {"pad reflect axes", test_pad_reflect_axes},
              {"pad edge crop", test_pad_edge_crop},
              {"pad constant int64", test_pad_constant_int64},
              {"depthtospace DCR", test_depth_to_space_dcr},
              {"depthtospace CRD", test_depth_to_space_crd},
              {"spacetodepth", test_space_to_depth},
              {"instancenorm odd", test_instance_norm_odd},
              {"instancenorm large plane", test_instance_norm_large_plane},
              {"globalmaxpool odd", test_global_max_pool_odd},
              {"globalmaxpool large plane", test_global_max_pool_large},
              {"lrn even size", test_lrn_even_size},
              {"lppool p 3 dilations ceil_mode", test_lp_pool},
              {"globallppool p 1, 2, 3", test_global_lp_pool},
              {"counters", test_counters})
