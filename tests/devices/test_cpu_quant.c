/* The cpu quantization kernels (devices/cpu/kernels_quant.c) called
 * directly, against NumPy: each expected tensor is pasted with the numpy
 * expression that made it (ONNX's reference formulas, onnx/reference/ops),
 * for what the backend test data does not cover: int32 inputs, per-axis
 * and per-row/column parameters, ties, saturation, grouped/strided/padded/
 * dilated convolution with a bias and per-channel scales, and errors. */
#define FX_MAX 12
#include "tests/devices/kernel_fixture_shape.h"

#include "devices/cpu/quant.h"
#include "support/alloc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* QuantizeLinear-13, int32 x [2, 3], per-axis on axis 0:
 * np.clip(np.rint(x / s.reshape(2, 1)).astype(np.int32) + z.reshape(2, 1), 0, 255)
 * with x [[-7, 3, 250], [1000, -2, 5]], s [2, 0.5], z [10, 128]. */
static void test_quantize_int32_per_axis(void) {
    shape_fx f;
    fx_begin(&f, "QuantizeLinear");
    fx_in(&f, TGC_INT32, 2, (int64_t[]){2, 3}, (int32_t[]){-7, 3, 250, 1000, -2, 5});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){2.0f, 0.5f});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){2}, (uint8_t[]){10, 128});
    fx_attr_int(&f, "axis", 0);
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){2, 3}, (uint8_t[]){6, 12, 135, 255, 124, 138});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* Ties round half to even, results saturate:
 * np.clip(np.rint(x / 1) + 3, 0, 255) for x [0.5, 1.5, 2.5, -0.5, -1.5, 300, -300]. */
static void test_quantize_ties_and_saturation(void) {
    shape_fx f;
    fx_begin(&f, "QuantizeLinear");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){7}, (float[]){0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){1.0f});
    fx_in(&f, TGC_UINT8, 0, NULL, (uint8_t[]){3});
    fx_out_expect(&f, TGC_UINT8, 1, (int64_t[]){7}, (uint8_t[]){3, 5, 5, 3, 1, 255, 0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* float32 to int8 per tensor, 20 elements (16 vector lanes and a tail):
 * np.clip(np.rint(x / 0.5) - 3, -128, 127) for x [inf, -inf, 1e30, -1e30,
 * 0.25, 0.75, 1.25, -0.25, -0.75, 63, 65.5, -62.5, -63, 0, 1, 2, 3, 4, 5]
 * after a NaN, which tgc takes to the zero point (ONNX leaves it open). */
static void test_quantize_int8_edges(void) {
    shape_fx f;
    fx_begin(&f, "QuantizeLinear");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){20},
          (float[]){NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 0.25f, 0.75f, 1.25f, -0.25f, -0.75f,
                    63.0f, 65.5f, -62.5f, -63.0f, 0, 1, 2, 3, 4, 5});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0.5f});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){-3});
    fx_out_expect(&f, TGC_INT8, 1, (int64_t[]){20},
                  (int8_t[]){-3, 127, -128, 127, -128, -3, -1, -1, -3, -5, 123, 127, -128, -128, -3, -1, 1, 3, 5, 7});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* float32 to uint8 per axis (axis 0), 17 elements a channel: row 0
 * x = i / 2 - 1 at scale 0.5, zero point 10 gives i + 8; row 1 x = 3 (i - 8)
 * at scale 2, zero point 200: np.rint(1.5 * (i - 8)) + 200, the halves to
 * even. */
static void test_quantize_per_axis_float(void) {
    float x[34];
    for (int i = 0; i < 17; i++) {
        x[i] = (float)i / 2.0f - 1.0f;
        x[17 + i] = 3.0f * (float)(i - 8);
    }
    uint8_t want[34];
    static const uint8_t row1[17] = {188, 190, 191, 192, 194, 196, 197, 198, 200,
                                     202, 203, 204, 206, 208, 209, 210, 212};
    for (int i = 0; i < 17; i++) {
        want[i] = (uint8_t)(i + 8);
        want[17 + i] = row1[i];
    }
    shape_fx f;
    fx_begin(&f, "QuantizeLinear");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 17}, x);
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){0.5f, 2.0f});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){2}, (uint8_t[]){10, 200});
    fx_attr_int(&f, "axis", 0);
    fx_out_expect(&f, TGC_UINT8, 2, (int64_t[]){2, 17}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* A per-axis scale whose length is not the axis's size is an error. */
static void test_quantize_bad_scale_length(void) {
    shape_fx f;
    fx_begin(&f, "QuantizeLinear");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){1, 2});
    fx_out(&f, TGC_UINT8, 2, (int64_t[]){2, 3});
    fx_run_fails(&f, "y_scale");
    fx_end(&f);
}

/* DequantizeLinear of int32 refuses a non-zero zero point (ONNX). */
static void test_dequantize_int32_needs_zero_point_0(void) {
    shape_fx f;
    fx_begin(&f, "DequantizeLinear");
    fx_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){5, -5});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0.5f});
    fx_in(&f, TGC_INT32, 0, NULL, (int32_t[]){1});
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    fx_run_fails(&f, "zero x_zero_point");
    fx_end(&f);
}

/* MatMulInteger with a per-row a_zero_point and a per-column b_zero_point:
 * (A - az.reshape(2, 1)) @ (B - bz.reshape(1, 2)) in int32. */
static void test_matmul_integer_per_row_and_column(void) {
    shape_fx f;
    fx_begin(&f, "MatMulInteger");
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){2, 3}, (uint8_t[]){1, 2, 3, 4, 5, 6});
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){3, 2}, (uint8_t[]){7, 8, 9, 10, 11, 12});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){2}, (uint8_t[]){1, 2});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){2}, (uint8_t[]){3, 4});
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){2, 2}, (int32_t[]){22, 22, 58, 58});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* K = 40000 products of 255 * 255 sum past 2^31: exact in int64, then
 * wrapped to int32 as numpy's int32 matmul does: 40000 * 65025 mod 2^32
 * as int32 = 2601000000 - 2^32 = -1693967296. */
static void test_matmul_integer_large_k_exact(void) {
    enum { K = 40000 };
    static uint8_t a[K], b[K];
    for (int i = 0; i < K; i++) a[i] = b[i] = 255;
    shape_fx f;
    fx_begin(&f, "MatMulInteger");
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){1, K}, a);
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){K, 1}, b);
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){1, 1}, (int32_t[]){-1693967296});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* numpy.random.RandomState(7), uint8 A [2, 3, 4] with a per-row a_zp
 * [3, 250, 128] and uint8 B [4, 5] with a per-column b_zp [0, 255, 17,
 * 128, 90]: (A - az.reshape(3, 1)) @ (B - bz.reshape(1, 5)) in int64, as
 * int32. Both of A's matrices read the one B (a single product of all A's
 * rows, where the zero point of a row is still that of its row in its
 * matrix). */
static void test_matmul_integer_stacked_rows(void) {
    shape_fx f;
    fx_begin(&f, "MatMulInteger");
    fx_in(&f, TGC_UINT8, 3, (int64_t[]){2, 3, 4},
          (uint8_t[]){175, 196, 25, 246, 67, 211, 151, 103, 92, 185, 142, 23,
                      72, 89, 110, 42, 218, 136, 167, 230, 68, 176, 127, 135});
    fx_in(&f, TGC_UINT8, 2, (int64_t[]){4, 5},
          (uint8_t[]){172, 0, 75, 55, 250, 6, 19, 188, 44, 191, 69, 56, 152, 183, 181, 112, 251, 189, 192, 34});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){3}, (uint8_t[]){3, 250, 128});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){5}, (uint8_t[]){0, 255, 17, 128, 90});
    fx_out_expect(&f, TGC_INT32, 3, (int64_t[]){2, 3, 5},
                  (int32_t[]){59476,  -94758, 87745, -12006, 35407,  -55005, 76158,  -55932, 1782,  -33996,
                              -16644, -6638,  -8511, -8110,  7151,   24135,  -59340, 39861,  -3880, 27279,
                              -14155, 51661,  -35995, 6067,  -23067, -9317,  4143,   5797,   741,   -5235});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* int8 A [2, 2, 3] and B [2, 3, 2] (a B per matrix), zero points -2 and 5:
 * np.matmul(A - (-2), B - 5) in int64 (RandomState(7), after the case above). */
static void test_matmul_integer_batched_b(void) {
    shape_fx f;
    fx_begin(&f, "MatMulInteger");
    fx_in(&f, TGC_INT8, 3, (int64_t[]){2, 2, 3}, (int8_t[]){-72, 73, 78, -90, -124, 110, 9, -41, 99, 67, -56, -45});
    fx_in(&f, TGC_INT8, 3, (int64_t[]){2, 3, 2}, (int8_t[]){48, -127, 64, 16, -10, 31, -35, 44, -36, 124, -57, -105});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){-2});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){5});
    fx_out_expect(&f, TGC_INT32, 3, (int64_t[]){2, 2, 2},
                  (int32_t[]){215, 12145, -12662, 13186, -5103, -15322, 2120, 995});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* ConvInteger of int8 X [1, 2, 4, 4] (x_zp -5) and int8 W [3, 2, 3, 3],
 * pads 1, strides 2: padding reads the zero point, so the padded
 * differences are 0. numpy: np.pad(X - (-5), 1) then a direct loop of
 * (window * W[m]).sum() (RandomState(7), after the cases above). */
static void test_conv_integer_int8_padded_strided(void) {
    shape_fx f;
    fx_begin(&f, "ConvInteger");
    fx_in(&f, TGC_INT8, 4, (int64_t[]){1, 2, 4, 4},
          (int8_t[]){-118, 105, -93, 64, -67, 7, 23, -36, 119, 96, 21, -28, 35, 97, -61, -5,
                     91, 97, -109, 27, -124, -109, -95, -5, -98, 57, 101, -55, 93, 81, -1, 31});
    fx_in(&f, TGC_INT8, 4, (int64_t[]){3, 2, 3, 3},
          (int8_t[]){2,   -45, 50,  18,  -107, -9,  -61, 75,  58,  -81, -112, -116, -35, -21, 105, 9,  -52, -61,
                     -18, 14,  -4,  -108, -75, 124, 15,  -69, -93, -80, -124, -85, 72,  90,  122, -74, -85, 111,
                     87,  77,  50,  -89, 3,   29,  12,  76,  -49, -99, 8,    -74, 38,  -11, 70,  21,  -84, 91});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){-5});
    fx_attr_ints(&f, "pads", 4, (int64_t[]){1, 1, 1, 1});
    fx_attr_ints(&f, "strides", 2, (int64_t[]){2, 2});
    fx_out_expect(&f, TGC_INT32, 4, (int64_t[]){1, 3, 2, 2},
                  (int32_t[]){28373, 16063, 21642, -6737, 44932, 21641, 14068, 14660, 4167, 8374, 8870, 1052});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* ConvInteger with 72 products an output (8 channels, 3x3: past the taps
 * summed directly, so through the integer GEMM), uint8 X [1, 8, 3, 3] with
 * x_zp 100, uint8 W [2, 8, 3, 3] with per-channel w_zp [3, 200], pads 1.
 * numpy (RandomState(11)): np.pad(X - 100, 1), then per output channel m
 * and position, (window * (W[m] - wz[m])).sum() in int64. */
static void test_conv_integer_many_products(void) {
    shape_fx f;
    fx_begin(&f, "ConvInteger");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 8, 3, 3},
          (uint8_t[]){153, 191, 80,  91,  81,  183, 13,  76,  161, 71,  82,  24,  109, 92,  176, 253, 160, 45,
                      236, 125, 132, 34,  140, 129, 74,  37,  245, 231, 212, 81,  91,  152, 248, 145, 67,  70,
                      171, 114, 242, 192, 125, 79,  96,  23,  155, 70,  89,  107, 138, 185, 27,  44,  245, 142,
                      7,   183, 79,  192, 168, 240, 27,  248, 223, 133, 181, 71,  178, 227, 187, 1,   240, 131});
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){2, 8, 3, 3},
          (uint8_t[]){136, 215, 209, 68,  72,  114, 160, 78,  19,  153, 117, 90,  166, 187, 17,  43,  18,  253,
                      48,  138, 47,  110, 160, 172, 40,  8,   196, 161, 129, 223, 105, 124, 75,  162, 72,  19,
                      224, 84,  50,  82,  187, 237, 72,  38,  167, 34,  119, 118, 31,  244, 118, 100, 132, 156,
                      141, 185, 65,  252, 90,  213, 118, 148, 106, 145, 111, 209, 190, 132, 74,  238, 167, 163,
                      149, 195, 163, 209, 6,   124, 104, 241, 58,  65,  167, 100, 200, 5,   37,  91,  93,  252,
                      178, 125, 111, 213, 215, 10,  64,  177, 208, 117, 215, 43,  140, 132, 250, 118, 34,  132,
                      236, 162, 156, 87,  17,  241, 213, 172, 225, 179, 35,  78,  254, 194, 147, 147, 210, 176,
                      249, 107, 94,  242, 179, 15,  32,  152, 43,  19,  215, 50,  73,  7,   141, 162, 76,  255});
    fx_in(&f, TGC_UINT8, 0, NULL, (uint8_t[]){100});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){2}, (uint8_t[]){3, 200});
    fx_attr_ints(&f, "pads", 4, (int64_t[]){1, 1, 1, 1});
    fx_out_expect(&f, TGC_INT32, 4, (int64_t[]){1, 2, 3, 3},
                  (int32_t[]){168294, 201583, 159518, 190481, 291301, 226907, 91008,   264606,  222685,
                              -71477, -118299, -89123, -122138, -142088, -129975, -99355, -150270, -35302});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* numpy.random.RandomState(1): X = randint(0, 256, (1, 4, 5, 5)), W =
 * randint(0, 256, (4, 2, 2, 2)) as uint8 (pasted below). */
static const uint8_t conv_x[100] = {
    37,  235, 140, 72,  255, 137, 203, 133, 79,  192, 144, 129, 204, 71,  237, 252, 134, 25,  178, 20,
    254, 101, 146, 212, 139, 252, 234, 156, 157, 142, 50,  68,  215, 215, 233, 241, 247, 222, 96,  86,
    141, 233, 137, 7,   63,  61,  22,  57,  1,   128, 60,  209, 8,   216, 141, 115, 175, 234, 121, 200,
    30,  71,  131, 198, 149, 49,  57,  3,   196, 24,  241, 43,  76,  26,  52,  80,  109, 115, 41,  210,
    15,  64,  196, 25,  111, 226, 215, 135, 26,  153, 104, 22,  9,   195, 231, 126, 23,  125, 100, 155};
static const uint8_t conv_w[32] = {165, 57,  83,  166, 136, 32,  162, 10,  23,  143, 239, 87,  25,  199, 243, 92,
                                   74,  190, 46,  160, 216, 151, 183, 65,  113, 77,  3,   128, 248, 253, 205, 6};

/* Inputs 1..8 and the attributes of the QLinearConv below (static: the
 * fixture keeps pointers to them until it runs). */
static void qlinear_conv_params(shape_fx *f) {
    static const float x_s = 0.02f, w_s[4] = {0.01f, 0.02f, 0.015f, 0.03f}, y_s = 0.5f;
    static const uint8_t x_zp = 120, w_zp[4] = {128, 100, 130, 127}, y_zp = 100;
    static const int32_t bias[4] = {100, -200, 3000, -50};
    static const int64_t w_dims[4] = {4, 2, 2, 2}, m_dims[1] = {4};
    static int64_t strides[2] = {2, 1}, pads[4] = {1, 0, 0, 1}, dilations[2] = {1, 2};
    fx_in(f, TGC_FLOAT32, 0, NULL, &x_s);
    fx_in(f, TGC_UINT8, 0, NULL, &x_zp);
    fx_in(f, TGC_UINT8, 4, w_dims, conv_w);
    fx_in(f, TGC_FLOAT32, 1, m_dims, w_s);
    fx_in(f, TGC_UINT8, 1, m_dims, w_zp);
    fx_in(f, TGC_FLOAT32, 0, NULL, &y_s);
    fx_in(f, TGC_UINT8, 0, NULL, &y_zp);
    fx_in(f, TGC_INT32, 1, m_dims, bias);
    fx_attr_int(f, "group", 2);
    fx_attr_ints(f, "strides", 2, strides);
    fx_attr_ints(f, "pads", 4, pads);
    fx_attr_ints(f, "dilations", 2, dilations);
}

/* QLinearConv: group 2, strides [2, 1], pads [1, 0, 0, 1], dilations
 * [1, 2], bias [100, -200, 3000, -50], x_scale 0.02, x_zp 120, per-channel
 * w_scale [0.01, 0.02, 0.015, 0.03] and w_zp [128, 100, 130, 127], y_scale
 * 0.5, y_zp 100. Reference: R = conv(X - 120, W - wz, ...) + B (a direct
 * loop over the padded input), then np.clip(np.rint(R * (xs * ws / ys) +
 * 100), 0, 255). */
static void test_qlinear_conv_grouped_strided_padded_dilated(void) {
    static const uint8_t want[48] = {102, 97,  101, 101, 94,  101, 97,  100, 104, 109, 102, 97,
                                     105, 126, 105, 99,  126, 120, 125, 88,  97,  72,  92,  100,
                                     102, 102, 104, 94,  109, 106, 104, 90,  91,  102, 98,  107,
                                     106, 97,  103, 78,  111, 106, 98,  66,  71,  99,  110, 122};
    shape_fx f;
    fx_begin(&f, "QLinearConv");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 4, 5, 5}, conv_x);
    qlinear_conv_params(&f);
    fx_out_expect(&f, TGC_UINT8, 4, (int64_t[]){1, 4, 3, 4}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* _QLinearConvNHWC (tgc's channels-last QLinearConv, made by the
 * nhwc-conv pass) on the same data laid out NHWC: X [1, 5, 5, 4] is
 * conv_x transposed (np.transpose(x, (0, 2, 3, 1))), and the result must
 * be the test above's, transposed the same way. Outside a session (no
 * cache: oneDNN's convolution is made at session creation) it runs
 * QLinearConv on NCHW copies. */
static void test_qlinear_conv_channels_last(void) {
    static const uint8_t want_nchw[48] = {102, 97,  101, 101, 94,  101, 97,  100, 104, 109, 102, 97,
                                          105, 126, 105, 99,  126, 120, 125, 88,  97,  72,  92,  100,
                                          102, 102, 104, 94,  109, 106, 104, 90,  91,  102, 98,  107,
                                          106, 97,  103, 78,  111, 106, 98,  66,  71,  99,  110, 122};
    uint8_t x[100], want[48];
    for (int c = 0; c < 4; c++)
        for (int p = 0; p < 25; p++) x[p * 4 + c] = conv_x[c * 25 + p];
    for (int m = 0; m < 4; m++)
        for (int p = 0; p < 12; p++) want[p * 4 + m] = want_nchw[m * 12 + p];
    shape_fx f;
    fx_begin(&f, "_QLinearConvNHWC");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 5, 5, 4}, x);
    qlinear_conv_params(&f);
    fx_out_expect(&f, TGC_UINT8, 4, (int64_t[]){1, 3, 4, 4}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* _MaxPoolNHWC (the nhwc-conv pass's channels-last MaxPool), float32
 * and uint8: x [1, 3, 3, 2], channel 0 [1..9] row by row, channel 1 [9, 8,
 * 7; 6, 5, 4; 3, 2, 1]; kernel 2x2, stride 2, pads [1, 1, 0, 0]. By hand:
 * the top-left window holds only x[0, 0] (1, 9); top-right x[0, 1..2] (3,
 * 8); bottom-left x[1..2, 0] (7, 6); bottom-right x[1..2, 1..2] (9, 5). */
static void test_max_pool_channels_last(void) {
    static const float xf[18] = {1, 9, 2, 8, 3, 7, 4, 6, 5, 5, 6, 4, 7, 3, 8, 2, 9, 1};
    static const float want[8] = {1, 9, 3, 8, 7, 6, 9, 5};
    for (int u8 = 0; u8 < 2; u8++) {
        uint8_t xb[18], wb[8];
        for (int i = 0; i < 18; i++) xb[i] = (uint8_t)xf[i];
        for (int i = 0; i < 8; i++) wb[i] = (uint8_t)want[i];
        tgc_dtype t = u8 ? TGC_UINT8 : TGC_FLOAT32;
        shape_fx f;
        fx_begin(&f, "_MaxPoolNHWC");
        fx_in(&f, t, 4, (int64_t[]){1, 3, 3, 2}, u8 ? (const void *)xb : (const void *)xf);
        fx_attr_ints(&f, "kernel_shape", 2, (int64_t[]){2, 2});
        fx_attr_ints(&f, "strides", 2, (int64_t[]){2, 2});
        fx_attr_ints(&f, "pads", 4, (int64_t[]){1, 1, 0, 0});
        fx_out_expect(&f, t, 4, (int64_t[]){1, 2, 2, 2}, u8 ? (const void *)wb : (const void *)want);
        fx_run_ok(&f);
        fx_check(&f);
        fx_end(&f);
    }
}

/* tgc_cpu_q8_requantize_channels against the formula it implements, ONNX's
 * requantization with the product in float64, element by element:
 *     y = clip(rint(float64(int32(acc + add[k])) * float64(mult[k])) + zp, lo, hi)
 * for m = 16 and 32 (its float32 lanes, kept only where provably equal),
 * 24 (float64 lanes), 5 (row by row, float64 and a scalar tail); sums past
 * 2^24, exact ties (mult 0.5 and odd sums, an odd zero point: ties go to
 * the even integer before the zero point is added), near ties (0.5 one
 * float32 step up or down), products past the range both ways; uint8 and
 * int8 outputs. */
static void test_requantize_channels(void) {
    static const float mults[] = {0.5f, 0x1.000002p-1f, 1.7e-4f, 0.0123f, 3e-4f, 2.3e-4f, 0x1p-20f, 1.1e-4f};
    /* sums whose float32 product rounds to the other side of a half than
     * the float64 one (found by search: what the float32 lanes must catch) */
    int32_t flips[8][4];
    int n_flips[8] = {0}, total_flips = 0;
    for (int k = 0; k < 8; k++)
        for (int32_t a = -1000000; a <= 1000000 && n_flips[k] < 4; a++) {
            float p32 = (float)a * mults[k];
            if (rintf(p32) != rint((double)a * (double)mults[k]) && fabs(p32) < 200) flips[k][n_flips[k]++] = a;
        }
    for (int k = 0; k < 8; k++) total_flips += n_flips[k];
    CU_ASSERT(total_flips >= 4);
    uint32_t seed = 12345;
    for (int mi = 0; mi < 4; mi++) {
        int64_t m = (int64_t[]){16, 32, 24, 5}[mi], rows = 9, n = rows * m;
        int32_t *acc = tgc_malloc((size_t)n * sizeof *acc), *add = tgc_malloc((size_t)m * sizeof *add);
        float *mult = tgc_malloc((size_t)m * sizeof *mult);
        uint8_t *y = tgc_malloc((size_t)n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(y);
        for (int64_t k = 0; k < m; k++) {
            mult[k] = mults[k % 8];
            add[k] = (int32_t)(k % 3) - 1;
        }
        for (int64_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            int32_t r = (int32_t)(seed >> 8) % 1200 - 600;
            int64_t k = i % m;
            if (i % 17 == 3) r = (int32_t)(seed >> 1) - (1 << 30); /* far past 2^24 */
            if (i % 13 == 5) r = 2 * (r / 2) + 1;                  /* odd: a tie at mult 0.5 */
            if (i % 11 == 4 && n_flips[k % 8] > 0) r = flips[k % 8][i % n_flips[k % 8]] - add[k];
            /* past 2^24 and within range at 2^-20: 32.5 + 2^-20 rounds to 33; the sum as a float32 to 32 */
            if (i % 19 == 6 && k % 8 == 6) r = (1 << 25) + (1 << 19) + 1 - add[k];
            acc[i] = r;
        }
        for (int sgn = 0; sgn < 2; sgn++) {
            double zp = sgn ? -3 : 121, lo = sgn ? -128 : 0, hi = sgn ? 127 : 255;
            tgc_cpu_q8_requantize_channels(acc, rows, m, add, mult, zp, lo, hi, sgn != 0, y);
            int bad = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t k = i % m;
                double v = rint((double)(int32_t)((uint32_t)acc[i] + (uint32_t)add[k]) * (double)mult[k]) + zp;
                v = v < lo ? lo : v > hi ? hi : v;
                int got = sgn ? ((int8_t *)y)[i] : y[i];
                if (got != (int)v && bad++ < 3)
                    fprintf(stderr, "\n  m %lld, element %lld: %d, want %d", (long long)m, (long long)i, got, (int)v);
            }
            CU_ASSERT_EQUAL(bad, 0);
        }
        tgc_free(acc), tgc_free(add), tgc_free(mult), tgc_free(y);
    }
}

/* ConvInteger, group 2, x_zp 7, per-channel w_zp [128, 100, 130, 127]:
 * conv(X - 7, W - wz) by the direct loop, as int32. */
static void test_conv_integer_per_channel_zero_point(void) {
    static const int32_t want[64] = {
        -39048, -39997, -33308, -42769, -36511, -36388, -28379, -30939, -53072, -40880, 6029,   -34643, -28053,
        -11589, -6492,  -18663, 32775,  18554,  40887,  43313,  50231,  53340,  54970,  27186,  50665,  51059,
        -862,   29260,  39633,  -81,    20071,  17889,  10259,  -16778, 15685,  -6069,  3992,   14131,  11623,
        -11339, 27892,  20777,  9815,   -17438, -4004,  -9484,  10667,  6371,   -8654,  -15956, -8582,  -5057,
        -12636, 9933,   8759,   -35690, 49778,  28924,  -15311, -24938, -11095, -15858, 3950,   34511};
    shape_fx f;
    fx_begin(&f, "ConvInteger");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 4, 5, 5}, conv_x);
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){4, 2, 2, 2}, conv_w);
    fx_in(&f, TGC_UINT8, 0, NULL, (uint8_t[]){7});
    fx_in(&f, TGC_UINT8, 1, (int64_t[]){4}, (uint8_t[]){128, 100, 130, 127});
    fx_attr_int(&f, "group", 2);
    fx_out_expect(&f, TGC_INT32, 4, (int64_t[]){1, 4, 4, 4}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* W's channels must match X's with the group. */
static void test_conv_integer_channel_mismatch_fails(void) {
    shape_fx f;
    fx_begin(&f, "ConvInteger");
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){1, 4, 5, 5}, conv_x);
    fx_in(&f, TGC_UINT8, 4, (int64_t[]){4, 2, 2, 2}, conv_w);
    fx_out(&f, TGC_INT32, 4, (int64_t[]){1, 4, 4, 4});
    fx_run_fails(&f, "group");
    fx_end(&f);
}

/* int8 QuantizeLinear then int8 DequantizeLinear, per tensor:
 * np.clip(np.rint(x / 2) + (-3), -128, 127).astype(np.int8) for
 * x [0.5, 1.5, 2.5, -0.5, -1.5, 300, -300, -20.4]; and
 * (q.astype(np.int32) - (-5)) * 0.25 for q [-128, -1, 0, 127]. */
static void test_quantize_dequantize_int8(void) {
    shape_fx f;
    fx_begin(&f, "QuantizeLinear");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){8}, (float[]){0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f, -20.4f});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){2.0f});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){-3});
    fx_out_expect(&f, TGC_INT8, 1, (int64_t[]){8}, (int8_t[]){-3, -2, -2, -3, -4, 127, -128, -13});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
    fx_begin(&f, "DequantizeLinear");
    fx_in(&f, TGC_INT8, 1, (int64_t[]){4}, (int8_t[]){-128, -1, 0, 127});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0.25f});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){-5});
    fx_out_expect(&f, TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){-30.75f, 1.0f, 1.25f, 33.0f});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* MatMulInteger of int8 A and B with scalar zero points -2 and 3:
 * (A.astype(np.int32) + 2) @ (B.astype(np.int32) - 3). */
static void test_matmul_integer_int8(void) {
    shape_fx f;
    fx_begin(&f, "MatMulInteger");
    fx_in(&f, TGC_INT8, 2, (int64_t[]){2, 3}, (int8_t[]){-1, 2, -3, 4, -128, 127});
    fx_in(&f, TGC_INT8, 2, (int64_t[]){3, 2}, (int8_t[]){7, -8, 9, 10, -11, 12});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){-2});
    fx_in(&f, TGC_INT8, 0, NULL, (int8_t[]){3});
    fx_out_expect(&f, TGC_INT32, 2, (int64_t[]){2, 2}, (int32_t[]){42, 8, -2538, 213});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

TGC_TEST_MAIN("devices/cpu_quant", {"QuantizeLinear int32 per axis", test_quantize_int32_per_axis},
              {"QuantizeLinear ties and saturation", test_quantize_ties_and_saturation},
              {"QuantizeLinear to int8: NaN, infinities, ties", test_quantize_int8_edges},
              {"QuantizeLinear float32 per axis", test_quantize_per_axis_float},
              {"QuantizeLinear bad scale length", test_quantize_bad_scale_length},
              {"DequantizeLinear int32 zero point", test_dequantize_int32_needs_zero_point_0},
              {"MatMulInteger per row and column", test_matmul_integer_per_row_and_column},
              {"MatMulInteger large K exact", test_matmul_integer_large_k_exact},
              {"MatMulInteger stacked rows", test_matmul_integer_stacked_rows},
              {"MatMulInteger batched B", test_matmul_integer_batched_b},
              {"ConvInteger int8 padded strided", test_conv_integer_int8_padded_strided},
              {"ConvInteger many products", test_conv_integer_many_products},
              {"QLinearConv grouped strided padded dilated", test_qlinear_conv_grouped_strided_padded_dilated},
              {"_QLinearConvNHWC: the same, channels last", test_qlinear_conv_channels_last},
              {"requantization per channel, float32 lanes checked", test_requantize_channels},
              {"_MaxPoolNHWC float32 and uint8", test_max_pool_channels_last},
              {"ConvInteger per-channel zero point", test_conv_integer_per_channel_zero_point},
              {"ConvInteger channel mismatch", test_conv_integer_channel_mismatch_fails},
              {"QuantizeLinear/DequantizeLinear int8", test_quantize_dequantize_int8},
              {"MatMulInteger int8", test_matmul_integer_int8})
