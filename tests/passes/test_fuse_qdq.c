/* fuse-qdq (passes/fuse_qdq.c): DequantizeLinear -> Conv / MatMul ->
 * QuantizeLinear groups become QLinearConv / QLinearMatMul when their
 * parameters allow it, and stay as they are when not. Values are worked out
 * by hand in the comments (both the float path and the integer one give
 * them: no value lies near a half step); tests/cli/test_dtype_models.sh
 * runs a larger QDQ model against numpy. */
#include "graph/graph.h"
#include "tests/harness.h"
#include "tests/passes/graph_queries.h"
#include "tgc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A 1x1 Conv over x [1, 2, 3, 3] (uint8, scale 0.5, zero point 10) with
 * int8 weights per output channel (scales 0.25 and 0.5), an int32 bias of
 * scale x_s * w_s, and y per tensor (scale 0.25, zero point 100). Each
 * variant replaces one piece of it (a "%s" slot each). */
static const char conv_fmt[] =
    "format: tgc/1\n"
    "inputs: [{name: x, dtype: uint8, shape: [1, 2, 3, 3]}%s]\n"
    "outputs: [y%s]\n"
    "initializers:\n"
    "  - {name: x_s, dtype: float32, shape: [], values: [0.5]}\n"
    "  - {name: x_zp, dtype: uint8, shape: [], values: [10]}\n"
    "  - {name: w, dtype: int8, shape: [2, 2, 1, 1], values: [1, -2, 3, 4]}\n"
    "  - {name: w_s, dtype: float32, shape: [2], values: [0.25, 0.5]}\n"
    "  - {name: w_zp, dtype: int8, shape: [2], values: [0, 0]}\n"
    "  - {name: b, dtype: int32, shape: [2], values: [8, -4]}\n"
    "  - {name: b_s, dtype: float32, shape: [2], values: [%s]}\n"
    "%s"
    "  - {name: y_zp, dtype: uint8, shape: [], values: [100]}\n"
    "nodes:\n"
    "  - {name: dx, op: DequantizeLinear, inputs: [x, x_s, x_zp]}\n"
    "  - {name: dw, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: %s}}\n"
    "  - {name: db, op: DequantizeLinear, inputs: [b, b_s], attrs: {axis: 0}}\n"
    "  - {name: conv, op: Conv, inputs: [dx, dw, db]}\n"
    "  - {name: y, op: QuantizeLinear, inputs: [conv, y_s, y_zp]}\n";

typedef struct conv_variant {
    const char *what;
    const char *extra_input, *extra_output, *b_s, *y_s_init, *w_axis;
    bool fused;
} conv_variant;

/* Fused Convs: QLinearConv, or on the cpu its channels-last form
 * (nhwc-conv, which runs after fuse-qdq). */
static int fused_convs(const tgc_graph *g) { return count_op(g, "QLinearConv") + count_op(g, "_QLinearConvNHWC"); }

/* The first node of op `op` in g, or NULL. */
static const tgc_node *first_op(const tgc_graph *g, const char *op) {
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_OP && strcmp(g->nodes[id].op_name, op) == 0) return &g->nodes[id];
    return NULL;
}

/* Runs g on the cpu (session options opt, NULL: the defaults) with the
 * first input fed `x` (uint8, dims) and returns output 0 (the caller
 * releases it). */
static tgc_tensor *run_u8_with(const tgc_graph *g, int rank, const int64_t *dims, const uint8_t *x,
                               const tgc_session_options *opt) {
    return run_fed(g, opt, TGC_UINT8, rank, dims, x);
}

static tgc_tensor *run_u8(const tgc_graph *g, int rank, const int64_t *dims, const uint8_t *x) {
    return run_u8_with(g, rank, dims, x, NULL);
}

/* x: channel 0 all 12, channel 1 all 14, so DQ(x) = 1 and 2. DQ(w): c0
 * [0.25, -0.5], c1 [1.5, 2]; DQ(b) [1, -1]. Conv: c0 0.25 - 1 + 1 = 0.25,
 * c1 1.5 + 4 - 1 = 4.5; Q: 0.25 / 0.25 + 100 = 101, 4.5 / 0.25 + 100 = 118.
 * In integers: c0 (2 - 8) + 8 = 2 times 0.5 * 0.25 / 0.25 = 1, c1 22 - 4 =
 * 18 times 1 = 18: the same. */
static void test_conv_variants(void) {
    static const conv_variant variants[] = {
        {"the whole group", "", "", "0.125, 0.25", "  - {name: y_s, dtype: float32, shape: [], values: [0.25]}\n",
         "0", true},
        {"a DequantizeLinear read twice", "", ", dx", "0.125, 0.25",
         "  - {name: y_s, dtype: float32, shape: [], values: [0.25]}\n", "0", false},
        {"a bias scale that is not x_s * w_s", "", "", "0.125, 0.3",
         "  - {name: y_s, dtype: float32, shape: [], values: [0.25]}\n", "0", false},
        {"weights per input channel", "", "", "0.125, 0.25",
         "  - {name: y_s, dtype: float32, shape: [], values: [0.25]}\n", "1", false},
        {"y's scale fed at run time", ", {name: y_s, dtype: float32, shape: []}", "", "0.125, 0.25", "", "0", false},
    };
    uint8_t x[18];
    for (int i = 0; i < 18; i++) x[i] = i < 9 ? 12 : 14;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        const conv_variant *cv = &variants[v];
        char yaml[4096];
        snprintf(yaml, sizeof yaml, conv_fmt, cv->extra_input, cv->extra_output, cv->b_s, cv->y_s_init, cv->w_axis);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = loaded_graph(yaml, "qdq.yaml", d);
        tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
        bool fused = fused_convs(opt) == 1;
        if (fused != cv->fused) fprintf(stderr, "\n  %s: fused %d, expected %d", cv->what, fused, cv->fused);
        CU_ASSERT_EQUAL(fused, cv->fused);
        if (cv->fused) {
            /* the output keeps the QuantizeLinear's name (the Transpose back to NCHW has it) */
            CU_ASSERT_PTR_NOT_NULL(node_named(opt, "y"));
            const tgc_node *conv = first_op(opt, "_QLinearConvNHWC");
            CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
            CU_ASSERT_EQUAL(conv->n_inputs, 9);
            CU_ASSERT_EQUAL(count_op(opt, "DequantizeLinear") + count_op(opt, "QuantizeLinear") +
                                count_op(opt, "Conv"),
                            0);
            tgc_tensor *out = run_u8(g, 4, (int64_t[]){1, 2, 3, 3}, x);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            const uint8_t *got = tgc_tensor_data(out);
            for (int i = 0; i < 18; i++) CU_ASSERT_EQUAL(got[i], i < 9 ? 101 : 118);
            tgc_tensor_release(out);
            /* No kind listed has QLinearConv (gpu0 alone): the group stays. */
            tgc_graph *gpu = optimized_graph(g, TGC_OPTIMIZE_ALL, "gpu0", d);
            CU_ASSERT_EQUAL(count_op(gpu, "QLinearConv"), 0);
            tgc_graph_free(gpu);
        }
        tgc_graph_free(opt);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

/* The first QDQ Conv of the chain, residual and pool tests: x [1, 2, 3, 3]
 * uint8 (scale 0.5, zero point 10), test_conv_variants' weights and bias,
 * quantized into h at 0.25 and zero point 100 (zp100, an initializer the
 * tests add). */
#define FIRST_CONV_INITS \
    "format: tgc/1\n" \
    "inputs: [{name: x, dtype: uint8, shape: [1, 2, 3, 3]}]\n" \
    "outputs: [y]\n" \
    "initializers:\n" \
    "  - {name: x_s, dtype: float32, shape: [], values: [0.5]}\n" \
    "  - {name: x_zp, dtype: uint8, shape: [], values: [10]}\n" \
    "  - {name: w, dtype: int8, shape: [2, 2, 1, 1], values: [1, -2, 3, 4]}\n" \
    "  - {name: w_s, dtype: float32, shape: [2], values: [0.25, 0.5]}\n" \
    "  - {name: w_zp, dtype: int8, shape: [2], values: [0, 0]}\n" \
    "  - {name: b, dtype: int32, shape: [2], values: [8, -4]}\n" \
    "  - {name: b_s, dtype: float32, shape: [2], values: [0.125, 0.25]}\n" \
    "  - {name: h_s, dtype: float32, shape: [], values: [0.25]}\n"
#define FIRST_CONV_NODES \
    "  - {name: dx, op: DequantizeLinear, inputs: [x, x_s, x_zp]}\n" \
    "  - {name: dw1, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: 0}}\n" \
    "  - {name: db, op: DequantizeLinear, inputs: [b, b_s], attrs: {axis: 0}}\n" \
    "  - {name: conv1, op: Conv, inputs: [dx, dw1, db]}\n" \
    "  - {name: h, op: QuantizeLinear, inputs: [conv1, h_s, zp100]}\n"

/* Two QDQ Convs in a row, the second reading the first's QuantizeLinear
 * through a DequantizeLinear: both fused, in one pass (the second's input
 * is then a node the pass made, whose dtype its zero point gives). The
 * first gives 101 and 118 (test_conv_variants); DQ at scale 0.25, zero
 * point 100: 0.25 and 4.5; the same weights, no bias: c0 0.0625 - 2.25 =
 * -2.1875, c1 0.375 + 9 = 9.375; Q at scale 0.0625, zero point 100: 65
 * and 250. In integers: -35 times 1, 75 times 2. */
static void test_conv_chain(void) {
    static const char yaml[] =
        FIRST_CONV_INITS
        "  - {name: zp100, dtype: uint8, shape: [], values: [100]}\n"
        "  - {name: y_s, dtype: float32, shape: [], values: [0.0625]}\n"
        "nodes:\n"
        FIRST_CONV_NODES
        "  - {name: dh, op: DequantizeLinear, inputs: [h, h_s, zp100]}\n"
        "  - {name: dw2, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: 0}}\n"
        "  - {name: conv2, op: Conv, inputs: [dh, dw2]}\n"
        "  - {name: y, op: QuantizeLinear, inputs: [conv2, y_s, zp100]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "chain.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(fused_convs(opt), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Conv") + count_op(opt, "DequantizeLinear") + count_op(opt, "QuantizeLinear"), 0);
    /* channels last between them: one Transpose in, one out */
    CU_ASSERT_EQUAL(count_op(opt, "_QLinearConvNHWC"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    tgc_graph_free(opt);
    uint8_t x[18];
    for (int i = 0; i < 18; i++) x[i] = i < 9 ? 12 : 14;
    tgc_tensor *out = run_u8(g, 4, (int64_t[]){1, 2, 3, 3}, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const uint8_t *got = tgc_tensor_data(out);
    for (int i = 0; i < 18; i++) CU_ASSERT_EQUAL(got[i], i < 9 ? 65 : 250);
    tgc_tensor_release(out);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* test_conv_chain's two Convs (h, then y2: 65 and 250), a residual s =
 * Q(DQ(h) + DQ(y2)) and a third Conv on s, on the cpu: every Conv channels
 * last (nhwc-conv) and the Transposes between them moved through the
 * DequantizeLinear -> Add -> QuantizeLinear until they cancel, one left at
 * the input and one at the output. DQ(h) [0.25, 4.5], DQ(y2) [-2.1875,
 * 9.375]: sums -1.9375 and 13.875, Q at 0.125 and 100: -15.5 rounds half
 * to even to -16, so 84, and 211. DQ(s) [-2, 13.875]; the third Conv (w,
 * no bias): c0 -0.5 - 6.9375 = -7.4375, c1 -3 + 27.75 = 24.75; Q at 0.25
 * and 100: 70 and 199. */
static void test_residual_channels_last(void) {
    static const char yaml[] =
        FIRST_CONV_INITS
        "  - {name: zp100, dtype: uint8, shape: [], values: [100]}\n"
        "  - {name: y2_s, dtype: float32, shape: [], values: [0.0625]}\n"
        "  - {name: s_s, dtype: float32, shape: [], values: [0.125]}\n"
        "nodes:\n"
        FIRST_CONV_NODES
        "  - {name: dh, op: DequantizeLinear, inputs: [h, h_s, zp100]}\n"
        "  - {name: dw2, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: 0}}\n"
        "  - {name: conv2, op: Conv, inputs: [dh, dw2]}\n"
        "  - {name: y2, op: QuantizeLinear, inputs: [conv2, y2_s, zp100]}\n"
        "  - {name: dh_res, op: DequantizeLinear, inputs: [h, h_s, zp100]}\n"
        "  - {name: dy2, op: DequantizeLinear, inputs: [y2, y2_s, zp100]}\n"
        "  - {name: sum, op: Add, inputs: [dh_res, dy2]}\n"
        "  - {name: s, op: QuantizeLinear, inputs: [sum, s_s, zp100]}\n"
        "  - {name: ds, op: DequantizeLinear, inputs: [s, s_s, zp100]}\n"
        "  - {name: dw3, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: 0}}\n"
        "  - {name: conv3, op: Conv, inputs: [ds, dw3]}\n"
        "  - {name: y, op: QuantizeLinear, inputs: [conv3, h_s, zp100]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "residual.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_QLinearConvNHWC"), 3);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Add"), 1);
    const tgc_node *y = node_named(opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->op_name, "Transpose");
    tgc_graph_free(opt);
    /* with a gpu listed (no channels-last kernel there) nothing is moved */
    opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu,gpu0", d);
    CU_ASSERT_EQUAL(count_op(opt, "_QLinearConvNHWC") + count_op(opt, "Transpose"), 0);
    tgc_graph_free(opt);
    uint8_t x[18];
    for (int i = 0; i < 18; i++) x[i] = i < 9 ? 12 : 14;
    tgc_tensor *out = run_u8(g, 4, (int64_t[]){1, 2, 3, 3}, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const uint8_t *got = tgc_tensor_data(out);
    for (int i = 0; i < 18; i++) CU_ASSERT_EQUAL(got[i], i < 9 ? 70 : 199);
    tgc_tensor_release(out);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A QDQ MaxPool between two QDQ Convs: x channel 0 v = 10 + 2a for a =
 * [4, 0, 1; 0, 2, 3; 1, 3, 0], channel 1 all 14, so DQ(x) = [a, 2] and the
 * first Conv (test_conv_variants' weights and bias) gives 0.25a and 1.5a +
 * 3, quantized at 0.25 and 100: h = [a + 100, 6a + 112]. The pool (2x2,
 * stride 1) has its DequantizeLinear and QuantizeLinear at h's parameters,
 * so it runs on h itself (fuse-qdq drops the pair): c0 [104, 103, 103,
 * 103], c1 [136, 130, 130, 130]; dequantized [1, 0.75, 0.75, 0.75] and
 * [9, 7.5, 7.5, 7.5]. The second Conv (no bias): c0 0.25 - 4.5 = -4.25
 * then 0.1875 - 3.75 = -3.5625, c1 1.5 + 18 = 19.5 then 16.125; at 0.125
 * and 100: -34 + 100 = 66, -28.5 to even -28, so 72; 256 saturates to
 * 255, and 229. On the cpu all of it channels last: the pool too
 * (_MaxPoolNHWC), one Transpose in and one out. With the pool's output at
 * other parameters the pair stays. */
static void test_pool_between_convs(void) {
    static const char fmt[] =
        FIRST_CONV_INITS
        "  - {name: p_s, dtype: float32, shape: [], values: [%s]}\n"
        "  - {name: zp100, dtype: uint8, shape: [], values: [100]}\n"
        "  - {name: y_s, dtype: float32, shape: [], values: [0.125]}\n"
        "nodes:\n"
        FIRST_CONV_NODES
        "  - {name: dh, op: DequantizeLinear, inputs: [h, h_s, zp100]}\n"
        "  - {name: pool, op: MaxPool, inputs: [dh], attrs: {kernel_shape: [2, 2]}}\n"
        "  - {name: p, op: QuantizeLinear, inputs: [pool, p_s, zp100]}\n"
        "  - {name: dp, op: DequantizeLinear, inputs: [p, p_s, zp100]}\n"
        "  - {name: dw2, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: 0}}\n"
        "  - {name: conv2, op: Conv, inputs: [dp, dw2]}\n"
        "  - {name: y, op: QuantizeLinear, inputs: [conv2, y_s, zp100]}\n";
    char yaml[4096];
    tgc_diags *d = tgc_diags_create();
    snprintf(yaml, sizeof yaml, fmt, "0.25");
    tgc_graph *g = loaded_graph(yaml, "pool.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_QLinearConvNHWC"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "_MaxPoolNHWC"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "DequantizeLinear") + count_op(opt, "QuantizeLinear") + count_op(opt, "MaxPool"), 0);
    tgc_graph_free(opt);
    uint8_t x[18];
    static const uint8_t a[9] = {4, 0, 1, 0, 2, 3, 1, 3, 0};
    for (int i = 0; i < 9; i++) x[i] = (uint8_t)(10 + 2 * a[i]), x[9 + i] = 14;
    tgc_tensor *out = run_u8(g, 4, (int64_t[]){1, 2, 3, 3}, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const uint8_t *got = tgc_tensor_data(out), want[8] = {66, 72, 72, 72, 255, 229, 229, 229};
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(got[i], want[i]);
    tgc_tensor_release(out);
    tgc_graph_free(g);
    /* the pool's output at another scale: its DequantizeLinear and QuantizeLinear stay */
    snprintf(yaml, sizeof yaml, fmt, "0.5");
    g = loaded_graph(yaml, "pool.yaml", d);
    opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "MaxPool") + count_op(opt, "_MaxPoolNHWC"), 1);
    CU_ASSERT(count_op(opt, "DequantizeLinear") >= 1);
    tgc_graph_free(opt);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A QDQ Conv large enough for oneDNN's pieces (x [1, 16, 75, 41] uint8, w
 * [64, 16, 3, 3] int8 per channel, pads 1, stride [1, 2], a bias), on a
 * session of 1 and of 2 threads, against ONNX's definition computed here
 * directly: y = clip(rint(sum((x - 131) w) + b) * x_s w_s[m] / y_s) + 97,
 * 0, 255), every scale a power of two (products exact, ties half to
 * even). Both runs give those bits: the pieces' cut changes no sum. */
static void test_wide_conv_threads(void) {
    enum { C = 16, H = 75, W = 41, M = 64, OH = 75, OW = 21 };
    static uint8_t x[C * H * W], want[M * OH * OW];
    static int8_t w[M * C * 9];
    static int32_t b[M];
    static float w_s[M];
    uint32_t seed = 7;
    for (int i = 0; i < C * H * W; i++) x[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
    for (int i = 0; i < M * C * 9; i++) w[i] = (int8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
    for (int m = 0; m < M; m++) {
        b[m] = (int32_t)((seed = seed * 1664525u + 1013904223u) >> 20) - 2048;
        w_s[m] = ldexpf(1.0f, -(int)(m % 4) - 1);
    }
    const float x_s = 0.0625f, y_s = 16.0f;
    for (int m = 0; m < M; m++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                int64_t acc = b[m];
                for (int c = 0; c < C; c++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = oy - 1 + ky, ix = ox * 2 - 1 + kx;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                acc += (int64_t)(x[(c * H + iy) * W + ix] - 131) * w[((m * C + c) * 3 + ky) * 3 + kx];
                        }
                double v = rint((double)acc * x_s * w_s[m] / y_s) + 97;
                want[(m * OH + oy) * OW + ox] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    /* the graph, its weights written out as values lists */
    size_t cap = 1 << 17, used = 0;
    char *yaml = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
#define PUT(...) (used += (size_t)snprintf(yaml + used, cap - used, __VA_ARGS__))
    PUT("format: tgc/1\ninputs: [{name: x, dtype: uint8, shape: [1, %d, %d, %d]}]\noutputs: [y]\ninitializers:\n",
        C, H, W);
    PUT("  - {name: x_s, dtype: float32, shape: [], values: [0.0625]}\n");
    PUT("  - {name: x_zp, dtype: uint8, shape: [], values: [131]}\n");
    PUT("  - {name: w, dtype: int8, shape: [%d, %d, 3, 3], values: [", M, C);
    for (int i = 0; i < M * C * 9; i++) PUT("%s%d", i ? ", " : "", w[i]);
    PUT("]}\n  - {name: w_s, dtype: float32, shape: [%d], values: [", M);
    for (int m = 0; m < M; m++) PUT("%s%g", m ? ", " : "", w_s[m]);
    PUT("]}\n  - {name: w_zp, dtype: int8, shape: [%d], values: [", M);
    for (int m = 0; m < M; m++) PUT("%s0", m ? ", " : "");
    PUT("]}\n  - {name: b, dtype: int32, shape: [%d], values: [", M);
    for (int m = 0; m < M; m++) PUT("%s%d", m ? ", " : "", b[m]);
    PUT("]}\n  - {name: b_s, dtype: float32, shape: [%d], values: [", M);
    for (int m = 0; m < M; m++) PUT("%s%g", m ? ", " : "", x_s * w_s[m]);
    PUT("]}\n  - {name: y_s, dtype: float32, shape: [], values: [16]}\n");
    PUT("  - {name: y_zp, dtype: uint8, shape: [], values: [97]}\nnodes:\n");
    PUT("  - {name: dx, op: DequantizeLinear, inputs: [x, x_s, x_zp]}\n");
    PUT("  - {name: dw, op: DequantizeLinear, inputs: [w, w_s, w_zp], attrs: {axis: 0}}\n");
    PUT("  - {name: db, op: DequantizeLinear, inputs: [b, b_s], attrs: {axis: 0}}\n");
    PUT("  - {name: conv, op: Conv, inputs: [dx, dw, db], attrs: {pads: [1, 1, 1, 1], strides: [1, 2]}}\n");
    PUT("  - {name: y, op: QuantizeLinear, inputs: [conv, y_s, y_zp]}\n");
#undef PUT
    CU_ASSERT_FATAL(used < cap);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "wide.yaml", d);
    free(yaml);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int threads = 1; threads <= 2; threads++) {
        tgc_session_options opt = {0};
        char spec[32];
        snprintf(spec, sizeof spec, "cpu=%d", threads);
        opt.threads = spec;
        tgc_tensor *out = run_u8_with(g, 4, (int64_t[]){1, C, H, W}, x, &opt);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        const uint8_t *got = tgc_tensor_data(out);
        int bad = 0;
        for (int i = 0; i < M * OH * OW; i++) bad += got[i] != want[i];
        CU_ASSERT_EQUAL(bad, 0);
        tgc_tensor_release(out);
    }
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* DQ(a) x DQ(b) -> MatMul -> Q with b per column: a [2, 3] uint8 (scale
 * 0.5, zero point 10), b [3, 2] int8 (scales 0.5 and 0.25 by column), y
 * scale 0.125, zero point 100. a = [[12, 10, 8], [11, 13, 10]] gives
 * DQ(a) [[1, 0, -1], [0.5, 1.5, 0]]; DQ(b) [[0.5, 0.5], [1.5, -0.25],
 * [-1, 1]]; the product [[1.5, -0.5], [2.5, -0.125]]; Q: [[112, 96],
 * [120, 99]]. In integers: [[6, -4], [10, -1]] times 2 and 1 by column. */
static void test_matmul_per_column(void) {
    static const char yaml[] =
        "format: tgc/1\n"
        "inputs: [{name: x, dtype: uint8, shape: [2, 3]}]\n"
        "outputs: [y]\n"
        "initializers:\n"
        "  - {name: a_s, dtype: float32, shape: [], values: [0.5]}\n"
        "  - {name: a_zp, dtype: uint8, shape: [], values: [10]}\n"
        "  - {name: b, dtype: int8, shape: [3, 2], values: [1, 2, 3, -1, -2, 4]}\n"
        "  - {name: b_s, dtype: float32, shape: [2], values: [0.5, 0.25]}\n"
        "  - {name: b_zp, dtype: int8, shape: [2], values: [0, 0]}\n"
        "  - {name: y_s, dtype: float32, shape: [], values: [0.125]}\n"
        "  - {name: y_zp, dtype: uint8, shape: [], values: [100]}\n"
        "nodes:\n"
        "  - {name: da, op: DequantizeLinear, inputs: [x, a_s, a_zp]}\n"
        "  - {name: db, op: DequantizeLinear, inputs: [b, b_s, b_zp], attrs: {axis: 1}}\n"
        "  - {name: mm, op: MatMul, inputs: [da, db]}\n"
        "  - {name: y, op: QuantizeLinear, inputs: [mm, y_s, y_zp]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "qdq.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    const tgc_node *y = node_named(opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->op_name, "QLinearMatMul");
    CU_ASSERT_EQUAL(count_op(opt, "MatMul") + count_op(opt, "DequantizeLinear"), 0);
    tgc_graph_free(opt);
    tgc_tensor *out = run_u8(g, 2, (int64_t[]){2, 3}, (const uint8_t[]){12, 10, 8, 11, 13, 10});
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const uint8_t *got = tgc_tensor_data(out);
    const uint8_t want[4] = {112, 96, 120, 99};
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(got[i], want[i]);
    tgc_tensor_release(out);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("fuse qdq", {"Conv groups: fused or left", test_conv_variants},
              {"two Convs in a row", test_conv_chain},
              {"a residual block channels last", test_residual_channels_last},
              {"a MaxPool between Convs: on the 8-bit values, channels last", test_pool_between_convs},
              {"a wide Conv on 1 and 2 threads", test_wide_conv_threads},
              {"MatMul with B per column", test_matmul_per_column})
