/* Type and shape inference of the convolution-family and layout ops
 * (graph/ops_convt.c, ops_pad.c, ops_channel_norm.c, and LpPool,
 * GlobalMaxPool, GlobalLpPool in ops_conv.c), one node at a time, against
 * the ONNX operator specification (derivations in the comments), and their
 * errors: rule, position and words. */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

static void test_conv_transpose_shapes(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 4, 5, 7");
    fx_input(&f, "w", TGC_FLOAT32, "4, 3, 2, 2");
    fx_input(&f, "b", TGC_FLOAT32, "6");
    fx_input(&f, "b5", TGC_FLOAT32, "5");
    /* group 2: M = 3 * 2; s (D - 1) + op + ek - pads: 3 * 4 + 1 + 3 - 1 = 15, 2 * 6 + 1 + 2 - 2 = 13 */
    int32_t t = fx_op(&f, "t", "ConvTranspose", "x, w, b", 1);
    fx_attr_int(&f, t, "group", 2);
    fx_attr_ints(&f, t, "strides", "3, 2");
    fx_attr_ints(&f, t, "dilations", "2, 1");
    fx_attr_ints(&f, t, "pads", "1, 0, 0, 2");
    fx_attr_ints(&f, t, "output_padding", "1, 1");
    FX_OK(&f, t);
    FX_OUT(&f, t, 0, TGC_FLOAT32, "[N, 6, 15, 13]");
    /* SAME_UPPER: D * s */
    int32_t same = fx_op(&f, "same", "ConvTranspose", "x, w", 1);
    fx_attr_string(&f, same, "auto_pad", "SAME_UPPER");
    fx_attr_ints(&f, same, "strides", "2, 3");
    FX_OK(&f, same);
    FX_OUT(&f, same, 0, TGC_FLOAT32, "[N, 3, 10, 21]");
    /* output_shape, as n + 2 values: the last n */
    int32_t os = fx_op(&f, "os", "ConvTranspose", "x, w", 1);
    fx_attr_ints(&f, os, "output_shape", "1, 3, 11, 9");
    FX_OK(&f, os);
    FX_OUT(&f, os, 0, TGC_FLOAT32, "[N, 3, 11, 9]");
    int32_t bad_b = fx_op(&f, "bad_b", "ConvTranspose", "x, w, b5", 1);
    fx_attr_int(&f, bad_b, "group", 2);
    FX_FAILS(&f, bad_b, 2, "shape-mismatch", "B has shape [5]; it must be [M]");
    int32_t bad_pads = fx_op(&f, "bad_pads", "ConvTranspose", "x, w", 1);
    fx_attr_ints(&f, bad_pads, "pads", "9, 0, 0, 0");
    FX_FAILS(&f, bad_pads, -1, "bad-attribute", "exceed its output size");
    int32_t both = fx_op(&f, "both", "ConvTranspose", "x, w", 1);
    fx_attr_ints(&f, both, "pads", "0, 0, 0, 0");
    fx_attr_string(&f, both, "auto_pad", "VALID");
    FX_FAILS(&f, both, -1, "bad-attribute", "cannot be used together");
    fx_end(&f);
}

static void test_conv_transpose_channels(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 3, 5");
    fx_input(&f, "w", TGC_FLOAT32, "4, 2, 3");
    fx_input(&f, "xi", TGC_INT32, "1, 3, 5");
    int32_t c = fx_op(&f, "c", "ConvTranspose", "x, w", 1);
    FX_FAILS(&f, c, 1, "shape-mismatch", "W's dim 0 must be X's channels");
    int32_t i = fx_op(&f, "i", "ConvTranspose", "xi, w", 1);
    FX_FAILS(&f, i, 0, "dtype-mismatch", "ConvTranspose needs");
    fx_end(&f);
}

/* _ConvNHWC (channels last) with fuse-conv-add's Z: Y's shape and dtype,
 * or a clear error naming input 3. */
static void test_conv_nhwc_z(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 5, 5, 2");
    fx_input(&f, "w", TGC_FLOAT32, "3, 2, 3, 3");
    fx_input(&f, "b", TGC_FLOAT32, "3");
    fx_input(&f, "z", TGC_FLOAT32, "1, 3, 3, 3");
    fx_input(&f, "z_wide", TGC_FLOAT32, "1, 3, 3, 4");
    fx_input(&f, "z_int", TGC_INT32, "1, 3, 3, 3");
    int32_t ok = fx_op(&f, "ok", "_ConvNHWC", "x, w, b, z", 1);
    FX_OK(&f, ok);
    FX_OUT(&f, ok, 0, TGC_FLOAT32, "[1, 3, 3, 3]");
    int32_t wide = fx_op(&f, "wide", "_ConvNHWC", "x, w, b, z_wide", 1);
    FX_FAILS(&f, wide, 3, "shape-mismatch", "input 3 (Z) is float32 [1, 3, 3, 4]; it must be y's float32 [1, 3, 3, 3]");
    int32_t ints = fx_op(&f, "ints", "_ConvNHWC", "x, w, b, z_int", 1);
    FX_FAILS(&f, ints, 3, "shape-mismatch", "input 3 (Z) is int32");
    fx_end(&f);
}

static void test_pad_shapes(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 4, 5");
    fx_value(&f, "pads", TGC_INT64, "6", "0, 1, -2, 0, 3, 1");
    fx_value(&f, "pads2", TGC_INT64, "4", "2, -1, 0, 3");
    fx_value(&f, "axes", TGC_INT64, "2", "-1, 1");
    fx_value(&f, "crop", TGC_INT64, "6", "0, -3, 0, 0, -3, 0");
    fx_input(&f, "unknown", TGC_INT64, "6");
    fx_input(&f, "cv", TGC_FLOAT32, "");
    fx_input(&f, "cv_int", TGC_INT32, "");
    /* [N, 4 + 1 + 3, 5 - 2 + 1] */
    int32_t p = fx_op(&f, "p", "Pad", "x, pads, cv", 1);
    FX_OK(&f, p);
    FX_OUT(&f, p, 0, TGC_FLOAT32, "[N, 8, 4]");
    /* axes [-1, 1]: W gets 2 and 0, C gets -1 and 3 */
    int32_t a = fx_op(&f, "a", "Pad", "x, pads2, , axes", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[N, 6, 7]");
    int32_t u = fx_op(&f, "u", "Pad", "x, unknown", 1);
    FX_OK(&f, u);
    int32_t crop = fx_op(&f, "crop", "Pad", "x, crop", 1);
    FX_FAILS(&f, crop, 1, "bad-input", "crop axis 1 of size 4");
    int32_t count = fx_op(&f, "count", "Pad", "x, pads2", 1);
    FX_FAILS(&f, count, 1, "bad-input", "pads has 4 values; it needs 6");
    int32_t dt = fx_op(&f, "dt", "Pad", "x, pads, cv_int", 1);
    FX_FAILS(&f, dt, 2, "dtype-mismatch", "");
    int32_t mode = fx_op(&f, "mode", "Pad", "x, pads", 1);
    fx_attr_string(&f, mode, "mode", "wrap");
    FX_FAILS(&f, mode, -1, "unsupported", "constant, reflect and edge");
    fx_end(&f);
}

static void test_depth_space(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_UINT8, "N, 18, 3, 5");
    int32_t d = fx_op(&f, "d", "DepthToSpace", "x", 1);
    fx_attr_int(&f, d, "blocksize", 3);
    fx_attr_string(&f, d, "mode", "CRD");
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_UINT8, "[N, 2, 9, 15]");
    int32_t s = fx_op(&f, "s", "SpaceToDepth", "d", 1);
    fx_attr_int(&f, s, "blocksize", 3);
    FX_OK(&f, s);
    FX_OUT(&f, s, 0, TGC_UINT8, "[N, 18, 3, 5]");
    int32_t bad = fx_op(&f, "bad", "DepthToSpace", "x", 1);
    fx_attr_int(&f, bad, "blocksize", 4);
    FX_FAILS(&f, bad, 0, "shape-mismatch", "multiple of blocksize^2 = 16");
    int32_t bad2 = fx_op(&f, "bad2", "SpaceToDepth", "x", 1);
    fx_attr_int(&f, bad2, "blocksize", 2);
    FX_FAILS(&f, bad2, 0, "shape-mismatch", "multiples of blocksize 2");
    fx_end(&f);
}

static void test_pools_and_norms(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 7, 9");
    fx_input(&f, "s4", TGC_FLOAT32, "4");
    fx_input(&f, "s3", TGC_FLOAT32, "3");
    /* LpPool: (7 - 3) / 2 + 1 = 3, (9 + 1 - 2) / 1 + 1 = 9 */
    int32_t lp = fx_op(&f, "lp", "LpPool", "x", 1);
    fx_attr_ints(&f, lp, "kernel_shape", "3, 2");
    fx_attr_ints(&f, lp, "strides", "2, 1");
    fx_attr_ints(&f, lp, "pads", "0, 1, 0, 0");
    fx_attr_int(&f, lp, "p", 3);
    FX_OK(&f, lp);
    FX_OUT(&f, lp, 0, TGC_FLOAT32, "[N, 3, 3, 9]");
    int32_t gm = fx_op(&f, "gm", "GlobalMaxPool", "x", 1);
    FX_OK(&f, gm);
    FX_OUT(&f, gm, 0, TGC_FLOAT32, "[N, 3, 1, 1]");
    int32_t gl = fx_op(&f, "gl", "GlobalLpPool", "x", 1);
    fx_attr_int(&f, gl, "p", 0);
    FX_FAILS(&f, gl, -1, "bad-attribute", "attribute 'p' is 0");
    int32_t in = fx_op(&f, "in", "InstanceNormalization", "x, s3, s3", 1);
    FX_OK(&f, in);
    FX_OUT(&f, in, 0, TGC_FLOAT32, "[N, 3, 7, 9]");
    int32_t bad_in = fx_op(&f, "bad_in", "InstanceNormalization", "x, s4, s3", 1);
    FX_FAILS(&f, bad_in, 1, "shape-mismatch", "it must be [C]");
    int32_t lrn = fx_op(&f, "lrn", "LRN", "x", 1);
    fx_attr_int(&f, lrn, "size", 0);
    FX_FAILS(&f, lrn, -1, "bad-attribute", "attribute 'size' is 0");
    fx_end(&f);
}

static void test_max_unpool(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 2, 3, 4");
    fx_input(&f, "i", TGC_INT64, "N, 2, 3, 4");
    fx_value(&f, "shape", TGC_INT64, "4", "1, 2, 7, 9");
    /* (3 - 1) * 2 + 2 - 1 = 5, (4 - 1) * 2 + 2 - 0 = 8 */
    int32_t u = fx_op(&f, "u", "MaxUnpool", "x, i", 1);
    fx_attr_ints(&f, u, "kernel_shape", "2, 2");
    fx_attr_ints(&f, u, "strides", "2, 2");
    fx_attr_ints(&f, u, "pads", "1, 0, 0, 0");
    FX_OK(&f, u);
    FX_OUT(&f, u, 0, TGC_FLOAT32, "[N, 2, 5, 8]");
    int32_t s = fx_op(&f, "s", "MaxUnpool", "x, i, shape", 1);
    fx_attr_ints(&f, s, "kernel_shape", "2, 2");
    FX_OK(&f, s);
    FX_OUT(&f, s, 0, TGC_FLOAT32, "[1, 2, 7, 9]");
    int32_t k = fx_op(&f, "k", "MaxUnpool", "x, i", 1);
    fx_attr_ints(&f, k, "kernel_shape", "2");
    FX_FAILS(&f, k, 0, "shape-mismatch", "'kernel_shape' has 1 axes");
    fx_end(&f);
}

TGC_TEST_MAIN("infer_convt",
              {"convtranspose shapes", test_conv_transpose_shapes},
              {"convtranspose channels and dtypes", test_conv_transpose_channels},
              {"channels-last conv's Z", test_conv_nhwc_z},
              {"pad shapes", test_pad_shapes},
              {"depthtospace, spacetodepth", test_depth_space},
              {"pools and norms", test_pools_and_norms},
              {"maxunpool", test_max_unpool})
