/* Type and shape inference of the quantization, signal and random ops
 * (graph/ops_quant.c, ops_signal.c, ops_random.c), one node at a time.
 * Expected shapes follow the ONNX opset-17 operator specification: the
 * matrix and conv quantized ops have MatMul's and Conv's shapes; the
 * signal ops' sizes come from their integer inputs' values. */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

static void test_quantized_matrix_and_conv_shapes(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_UINT8, "N, 2, 3");
    fx_input(&f, "b", TGC_UINT8, "3, 5");
    fx_input(&f, "s", TGC_FLOAT32, "");
    fx_input(&f, "z", TGC_UINT8, "");
    fx_input(&f, "fa", TGC_FLOAT32, "N, 2, 3");
    int32_t mm = fx_op(&f, "mm", "MatMulInteger", "a, b", 1);
    FX_OK(&f, mm);
    FX_OUT(&f, mm, 0, TGC_INT32, "[N, 2, 5]");
    int32_t q = fx_op(&f, "q", "QLinearMatMul", "a, s, z, b, s, z, s, z", 1);
    FX_OK(&f, q);
    FX_OUT(&f, q, 0, TGC_UINT8, "[N, 2, 5]");
    int32_t bad = fx_op(&f, "bad", "MatMulInteger", "fa, b", 1);
    FX_FAILS(&f, bad, 0, "dtype-mismatch", "input 0 is float32");
    /* QLinearConv: x [N, 4, 5, 5], w [4, 2, 2, 2], group 2, strides [2, 1],
     * pads [1, 0, 0, 1], dilations [1, 2]: (5 + 1 - 2) / 2 + 1 = 3 and
     * (5 + 1 - 3) / 1 + 1 = 4. */
    fx_input(&f, "x", TGC_UINT8, "N, 4, 5, 5");
    fx_input(&f, "w", TGC_UINT8, "4, 2, 2, 2");
    fx_input(&f, "bias", TGC_INT32, "4");
    fx_input(&f, "bias3", TGC_INT32, "3");
    int32_t qc = fx_op(&f, "qc", "QLinearConv", "x, s, z, w, s, z, s, z, bias", 1);
    fx_attr_int(&f, qc, "group", 2);
    fx_attr_ints(&f, qc, "strides", "2, 1");
    fx_attr_ints(&f, qc, "pads", "1, 0, 0, 1");
    fx_attr_ints(&f, qc, "dilations", "1, 2");
    FX_OK(&f, qc);
    FX_OUT(&f, qc, 0, TGC_UINT8, "[N, 4, 3, 4]");
    int32_t ci = fx_op(&f, "ci", "ConvInteger", "x, w", 1);
    fx_attr_int(&f, ci, "group", 2);
    FX_OK(&f, ci);
    FX_OUT(&f, ci, 0, TGC_INT32, "[N, 4, 4, 4]");
    int32_t qb = fx_op(&f, "qb", "QLinearConv", "x, s, z, w, s, z, s, z, bias3", 1);
    fx_attr_int(&f, qb, "group", 2);
    FX_FAILS(&f, qb, 8, "shape-mismatch", "input 8 (B) has shape [3]");
    fx_end(&f);
}

static void test_quantize_linear(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    fx_input(&f, "s", TGC_FLOAT32, "");
    fx_input(&f, "s3", TGC_FLOAT32, "3");
    fx_input(&f, "s5", TGC_FLOAT32, "5");
    fx_input(&f, "z3", TGC_UINT8, "3");
    int32_t q = fx_op(&f, "q", "QuantizeLinear", "x, s", 1); /* no zero point: uint8 */
    FX_OK(&f, q);
    FX_OUT(&f, q, 0, TGC_UINT8, "[N, 3, 4]");
    int32_t pa = fx_op(&f, "pa", "QuantizeLinear", "x, s3, z3", 1);
    FX_OK(&f, pa);
    int32_t bad = fx_op(&f, "bad", "QuantizeLinear", "x, s5", 1); /* axis 1 has 3 */
    FX_FAILS(&f, bad, 1, "shape-mismatch", "input 1 (y_scale) has shape [5]");
    int32_t dq = fx_op(&f, "dq", "DequantizeLinear", "q, s", 1);
    FX_OK(&f, dq);
    FX_OUT(&f, dq, 0, TGC_FLOAT32, "[N, 3, 4]");
    int32_t dyn = fx_op(&f, "dyn", "DynamicQuantizeLinear", "x", 3);
    FX_OK(&f, dyn);
    FX_OUT(&f, dyn, 0, TGC_UINT8, "[N, 3, 4]");
    FX_OUT(&f, dyn, 1, TGC_FLOAT32, "[]");
    FX_OUT(&f, dyn, 2, TGC_UINT8, "[]");
    fx_end(&f);
}

static void test_dft_and_stft(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "B, 10, 10, 1");
    fx_value(&f, "n16", TGC_INT64, "", "16");
    int32_t one = fx_op(&f, "one", "DFT", "x", 1);
    fx_attr_int(&f, one, "axis", 2);
    fx_attr_int(&f, one, "onesided", 1);
    FX_OK(&f, one);
    FX_OUT(&f, one, 0, TGC_FLOAT32, "[B, 10, 6, 2]"); /* 10 / 2 + 1 */
    int32_t len = fx_op(&f, "len", "DFT", "x, n16", 1);
    FX_OK(&f, len);
    FX_OUT(&f, len, 0, TGC_FLOAT32, "[B, 16, 10, 2]");
    int32_t irf = fx_op(&f, "irf", "DFT", "one", 1); /* the inverse of a onesided one: 2 * (6 - 1) real values */
    fx_attr_int(&f, irf, "axis", 2);
    fx_attr_int(&f, irf, "inverse", 1);
    fx_attr_int(&f, irf, "onesided", 1);
    FX_OK(&f, irf);
    FX_OUT(&f, irf, 0, TGC_FLOAT32, "[B, 10, 10, 1]");
    int32_t last = fx_op(&f, "last", "DFT", "x", 1);
    fx_attr_int(&f, last, "axis", -1);
    FX_FAILS(&f, last, -1, "bad-attribute", "not the last axis");
    fx_input(&f, "sig", TGC_FLOAT32, "2, 128, 1");
    fx_value(&f, "step", TGC_INT64, "", "8");
    fx_input(&f, "step_unknown", TGC_INT64, "");
    int32_t st = fx_op(&f, "st", "STFT", "sig, step, , n16", 1);
    FX_OK(&f, st);
    FX_OUT(&f, st, 0, TGC_FLOAT32, "[2, 15, 9, 2]"); /* 1 + (128 - 16) / 8, 16 / 2 + 1 */
    int32_t su = fx_op(&f, "su", "STFT", "sig, step_unknown, , n16", 1);
    fx_attr_int(&f, su, "onesided", 0);
    FX_OK(&f, su);
    FX_OUT(&f, su, 0, TGC_FLOAT32, "[2, unk__0, 16, 2]");
    fx_end(&f);
}

static void test_windows_and_mel(void) {
    fx f = fx_begin();
    fx_value(&f, "n7", TGC_INT32, "", "7");
    fx_input(&f, "n", TGC_INT64, "");
    fx_value(&f, "bins", TGC_INT32, "", "8");
    fx_value(&f, "rate", TGC_INT32, "", "8000");
    fx_input(&f, "hz", TGC_FLOAT32, "");
    int32_t h = fx_op(&f, "h", "HannWindow", "n7", 1);
    FX_OK(&f, h);
    FX_OUT(&f, h, 0, TGC_FLOAT32, "[7]");
    int32_t b = fx_op(&f, "b", "BlackmanWindow", "n", 1);
    fx_attr_int(&f, b, "output_datatype", 7);
    FX_OK(&f, b);
    FX_OUT(&f, b, 0, TGC_INT64, "[unk__0]");
    int32_t m = fx_op(&f, "m", "MelWeightMatrix", "bins, n7, rate, hz, hz", 1);
    FX_OK(&f, m);
    FX_OUT(&f, m, 0, TGC_FLOAT32, "[4, 8]"); /* 7 / 2 + 1 */
    int32_t bad = fx_op(&f, "bad", "HammingWindow", "hz", 1);
    FX_FAILS(&f, bad, 0, "dtype-mismatch", "input 0 is float32");
    fx_end(&f);
}

static void test_random_and_dropout(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 4");
    fx_input(&f, "i", TGC_INT64, "3");
    int32_t rn = fx_op(&f, "rn", "RandomNormal", "", 1);
    fx_attr_ints(&f, rn, "shape", "2, 3");
    fx_attr_int(&f, rn, "dtype", 10);
    FX_OK(&f, rn);
    FX_OUT(&f, rn, 0, TGC_FLOAT16, "[2, 3]");
    int32_t ul = fx_op(&f, "ul", "RandomUniformLike", "i", 1); /* an int64 input needs a float dtype */
    FX_FAILS(&f, ul, -1, "bad-attribute", "attribute 'dtype'");
    int32_t be = fx_op(&f, "be", "Bernoulli", "x", 1);
    fx_attr_int(&f, be, "dtype", 9);
    FX_OK(&f, be);
    FX_OUT(&f, be, 0, TGC_BOOL, "[N, 4]");
    int32_t mu = fx_op(&f, "mu", "Multinomial", "x", 1);
    fx_attr_int(&f, mu, "sample_size", 5);
    FX_OK(&f, mu);
    FX_OUT(&f, mu, 0, TGC_INT32, "[N, 5]");
    int32_t dr = fx_op(&f, "dr", "Dropout", "x", 2);
    FX_OK(&f, dr);
    FX_OUT(&f, dr, 0, TGC_FLOAT32, "[N, 4]");
    FX_OUT(&f, dr, 1, TGC_BOOL, "[N, 4]");
    fx_end(&f);
}

TGC_TEST_MAIN("graph/infer_quant_signal", {"quantized matrix and conv shapes", test_quantized_matrix_and_conv_shapes},
              {"QuantizeLinear", test_quantize_linear}, {"DFT and STFT", test_dft_and_stft},
              {"windows and MelWeightMatrix", test_windows_and_mel}, {"random and Dropout", test_random_and_dropout})
