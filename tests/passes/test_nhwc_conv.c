/* nhwc-conv on float32 Convs (passes/nhwc_conv.c) and their channels-last
 * kernel (_ConvNHWC, devices/cpu/kernels_conv_nhwc.c): a 1x1 Conv, then a
 * mobile block on its output h (1x1 expansion, ReLU6, depthwise 3x3,
 * ReLU6, 1x1 projection, Add of h, then a depthwise 3x3 of stride 2), and an image's first layer before a
 * depthwise one, run channels last: every Conv a _ConvNHWC, one Transpose
 * at the input and one at the output, the values those of the NCHW graph
 * as a plain loop in double computes them (to 1e-4), and the same bits at
 * 1 and 2 threads; other geometries (auto_pad, dilation, uneven pads, two
 * images) and a squeeze-and-excitation block (its GlobalAveragePool, or
 * ReduceMean, channels last too) as the unoptimized graph gives them;
 * reductions after channels-last Convs; a ResNeXt-style
 * block (a grouped 3x3, an NCHW skip joining at the Add) and a pointwise
 * layer of many weights (one packed product) against conv_ref. Left alone: a 1x1 between two dense 3x3 Convs (its
 * Transposes would stay), maps larger than 28x28, and any graph listed
 * with a gpu (no kernel there). Runs only where the cpu has oneDNN (the
 * kernel's only way); elsewhere it checks that nothing is rewritten. */
#include "devices/cpu/conv_direct.h"
#include "devices/kernel.h"
#include "graph/graph.h"
#include "support/half.h"
#include "tests/harness.h"
#include "tests/passes/graph_queries.h"
#include "tgc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C = 8, E = 16, MAX_HW = 56 };

/* Deterministic values in about [-1, 1]: the k-th of a stream `seed`. */
static float value(int seed, int k) { return (float)sin(0.37 * k + 1.3 * seed) * (1.0f + 0.1f * (float)(k % 7)); }

/* "[v0, v1, ...]": n values of stream seed, scaled (malloc'd). */
static char *values(int seed, int n, float scale) {
    size_t size = (size_t)n * 20 + 8, at = 1;
    char *buf = malloc(size);
    buf[0] = '[';
    for (int k = 0; k < n; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%.9g", k ? ", " : "", value(seed, k) * scale);
    snprintf(buf + at, size - at, "]");
    return buf;
}

/* The block's YAML over x [1, C, hw, hw]; `lone`: a 1x1 between two dense
 * 3x3 Convs instead. */
static char *block_yaml(int hw, bool lone) {
    size_t size = 1 << 17;
    char *y = malloc(size);
    if (lone) {
        char *w3 = values(8, E * C * 9, 0.1f), *wp = values(5, E * E, 0.3f), *w3b = values(9, C * E * 9, 0.1f);
        snprintf(y, size,
                 "format: tgc/1\n"
                 "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
                 "outputs: [z]\n"
                 "initializers:\n"
                 "  - {name: w3, dtype: float32, shape: [%d, %d, 3, 3], values: %s}\n"
                 "  - {name: wp, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
                 "  - {name: w3b, dtype: float32, shape: [%d, %d, 3, 3], values: %s}\n"
                 "nodes:\n"
                 "  - {name: a, op: Conv, inputs: [x, w3], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1]}}\n"
                 "  - {name: ar, op: Relu, inputs: [a]}\n"
                 "  - {name: p, op: Conv, inputs: [ar, wp]}\n"
                 "  - {name: pr, op: Relu, inputs: [p]}\n"
                 "  - {name: z, op: Conv, inputs: [pr, w3b], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1]}}\n",
                 C, hw, hw, E, C, w3, E, E, wp, C, E, w3b);
        free(w3), free(wp), free(w3b);
        return y;
    }
    char *wi = values(15, C * C, 0.3f), *we = values(1, E * C, 0.4f), *be = values(2, E, 0.2f),
         *wd = values(3, E * 9, 0.3f),
         *bd = values(4, E, 0.2f), *wp = values(5, C * E, 0.3f), *bp = values(6, C, 0.2f), *ws = values(7, C * 9, 0.3f);
    snprintf(y, size,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
             "outputs: [z]\n"
             "initializers:\n"
             "  - {name: wi, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: we, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: be, dtype: float32, shape: [%d], values: %s}\n"
             "  - {name: wd, dtype: float32, shape: [%d, 1, 3, 3], values: %s}\n"
             "  - {name: bd, dtype: float32, shape: [%d], values: %s}\n"
             "  - {name: wp, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: bp, dtype: float32, shape: [%d], values: %s}\n"
             "  - {name: ws, dtype: float32, shape: [%d, 1, 3, 3], values: %s}\n"
             "  - {name: lo, dtype: float32, shape: [], values: [0]}\n"
             "  - {name: hi, dtype: float32, shape: [], values: [6]}\n"
             "nodes:\n"
             "  - {name: h, op: Conv, inputs: [x, wi]}\n"
             "  - {name: e, op: Conv, inputs: [h, we, be]}\n"
             "  - {name: ea, op: Clip, inputs: [e, lo, hi]}\n"
             "  - {name: d, op: Conv, inputs: [ea, wd, bd], attrs: {group: %d, kernel_shape: [3, 3], "
             "pads: [1, 1, 1, 1]}}\n"
             "  - {name: da, op: Clip, inputs: [d, lo, hi]}\n"
             "  - {name: p, op: Conv, inputs: [da, wp, bp]}\n"
             "  - {name: r, op: Add, inputs: [h, p]}\n"
             "  - {name: z, op: Conv, inputs: [r, ws], attrs: {group: %d, kernel_shape: [3, 3], pads: [1, 1, 1, 1], "
             "strides: [2, 2]}}\n",
             C, hw, hw, C, C, wi, E, C, we, E, be, E, wd, E, bd, C, E, wp, C, bp, C, ws, E, C);
    free(wi), free(we), free(be), free(wd), free(bd), free(wp), free(bp), free(ws);
    return y;
}

/* Conv of x [ci, h, h] by w [co, ci / group, k, k] (+ bias) with pads p and
 * stride s, into y [co, oh, oh], in double; then clamped to [0, 6] when
 * `relu6`. Returns oh. */
static int conv_ref(const double *x, int ci, int h, const float *w, const float *bias, int co, int group, int k,
                    int p, int s, bool relu6, double *y) {
    int oh = (h + 2 * p - k) / s + 1, cg = ci / group, mg = co / group;
    for (int m = 0; m < co; m++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < oh; j++) {
                double acc = bias != NULL ? bias[m] : 0.0;
                for (int c = 0; c < cg; c++)
                    for (int u = 0; u < k; u++)
                        for (int v = 0; v < k; v++) {
                            int r = i * s + u - p, q = j * s + v - p;
                            if (r < 0 || r >= h || q < 0 || q >= h) continue;
                            acc += (double)w[((m * cg + c) * k + u) * k + v] * x[((m / mg * cg + c) * h + r) * h + q];
                        }
                y[(m * oh + i) * oh + j] = relu6 ? fmin(fmax(acc, 0.0), 6.0) : acc;
            }
    return oh;
}

/* The block's output for x [C, hw, hw], by conv_ref: z [C, hw / 2, hw / 2]. */
static void block_ref(const float *xf, int hw, double *z) {
    float wi[C * C], we[E * C], be[E], wd[E * 9], bd[E], wp[C * E], bp[C], ws[C * 9];
    for (int k = 0; k < C * C; k++) wi[k] = value(15, k) * 0.3f;
    for (int k = 0; k < E * C; k++) we[k] = value(1, k) * 0.4f, wp[k] = value(5, k) * 0.3f;
    for (int k = 0; k < E; k++) be[k] = value(2, k) * 0.2f, bd[k] = value(4, k) * 0.2f;
    for (int k = 0; k < E * 9; k++) wd[k] = value(3, k) * 0.3f;
    for (int k = 0; k < C; k++) bp[k] = value(6, k) * 0.2f;
    for (int k = 0; k < C * 9; k++) ws[k] = value(7, k) * 0.3f;
    int n = hw * hw;
    double *xin = malloc(sizeof(double) * C * n), *x = malloc(sizeof(double) * C * n),
           *ea = malloc(sizeof(double) * E * n), *da = malloc(sizeof(double) * E * n),
           *r = malloc(sizeof(double) * C * n);
    for (int k = 0; k < C * n; k++) xin[k] = xf[k];
    conv_ref(xin, C, hw, wi, NULL, C, 1, 1, 0, 1, false, x); /* h */
    conv_ref(x, C, hw, we, be, E, 1, 1, 0, 1, true, ea);
    conv_ref(ea, E, hw, wd, bd, E, E, 3, 1, 1, true, da);
    conv_ref(da, E, hw, wp, bp, C, 1, 1, 0, 1, false, r);
    for (int k = 0; k < C * n; k++) r[k] += x[k];
    conv_ref(r, C, hw, ws, NULL, C, C, 3, 1, 2, false, z);
    free(xin), free(x), free(ea), free(da), free(r);
}

/* g's output on the cpu at `threads` ("cpu=1", or NULL), optimize
 * `level`, for x [n, c, hw, hw]. */
static tgc_tensor *run_at(const tgc_graph *g, const char *threads, tgc_optimize_level level, const float *x, int n,
                          int c, int hw) {
    tgc_session_options o = {.threads = threads, .optimize = level};
    return run_fed(g, &o, TGC_FLOAT32, 4, (int64_t[]){n, c, hw, hw}, x);
}

/* run_at, optimized, for one image. */
static tgc_tensor *run(const tgc_graph *g, const char *threads, const float *x, int c, int hw) {
    return run_at(g, threads, TGC_OPTIMIZE_ALL, x, 1, c, hw);
}

/* Whether the cpu runs float convolutions channels last here (oneDNN):
 * asked of the pass itself on the block. */
static bool channels_last_here(void) {
    char *yaml = block_yaml(14, false);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "block.yaml", d), *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    bool here = count_op(opt, "_ConvNHWC") > 0;
    tgc_graph_free(opt), tgc_graph_free(g), tgc_diags_free(d), free(yaml);
    return here;
}

static void test_block_channels_last(void) {
    int hw = 14;
    char *yaml = block_yaml(hw, false);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "block.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    bool here = count_op(opt, "_ConvNHWC") > 0;
    if (here) {
        CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 5);
        CU_ASSERT_EQUAL(count_op(opt, "Conv"), 0);
        CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2); /* x's, and z's back to NCHW */
        const tgc_node *z = node_named(opt, "z");
        CU_ASSERT_PTR_NOT_NULL_FATAL(z);
        CU_ASSERT_STRING_EQUAL(z->op_name, "Transpose");
    } else {
        CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 0);
    }
    tgc_graph_free(opt);
    /* with a gpu listed (no channels-last kernel there) nothing is moved */
    opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu,gpu0", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC") + count_op(opt, "Transpose"), 0);
    tgc_graph_free(opt);
    float x[C * 14 * 14];
    for (int k = 0; k < C * hw * hw; k++) x[k] = value(10, k);
    double want[C * 7 * 7];
    block_ref(x, hw, want);
    tgc_tensor *one = run(g, "cpu=1", x, C, hw), *two = run(g, "cpu=2", x, C, hw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    const float *a = tgc_tensor_data(one), *b = tgc_tensor_data(two);
    double worst = 0;
    for (int k = 0; k < C * 7 * 7; k++) worst = fmax(worst, fabs(a[k] - want[k]));
    if (worst > 1e-4) fprintf(stderr, "\n  max |z - reference| = %g", worst);
    CU_ASSERT(worst <= 1e-4);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof(float) * C * 7 * 7), 0); /* the same bits at 1 and 2 threads */
    tgc_tensor_release(one), tgc_tensor_release(two);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* An image's first layer (3 channels, 3x3, stride 2) before a depthwise
 * 3x3: both channels last, the Transpose into NHWC on the image. x [1, 3,
 * 28, 28]; y = dw(ReLU6(stem(x))), checked against conv_ref. */
static void test_stem_channels_last(void) {
    if (!channels_last_here()) return;
    char *ws = values(11, C * 3 * 9, 0.3f), *bs = values(12, C, 0.2f), *wd = values(13, C * 9, 0.3f), yaml[16384];
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, 3, 28, 28]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: ws, dtype: float32, shape: [%d, 3, 3, 3], values: %s}\n"
             "  - {name: bs, dtype: float32, shape: [%d], values: %s}\n"
             "  - {name: wd, dtype: float32, shape: [%d, 1, 3, 3], values: %s}\n"
             "  - {name: lo, dtype: float32, shape: [], values: [0]}\n"
             "  - {name: hi, dtype: float32, shape: [], values: [6]}\n"
             "nodes:\n"
             "  - {name: s, op: Conv, inputs: [x, ws, bs], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], "
             "strides: [2, 2]}}\n"
             "  - {name: sa, op: Clip, inputs: [s, lo, hi]}\n"
             "  - {name: y, op: Conv, inputs: [sa, wd], attrs: {group: %d, kernel_shape: [3, 3], "
             "pads: [1, 1, 1, 1]}}\n",
             C, ws, C, bs, C, wd, C);
    free(ws), free(bs), free(wd);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "stem.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    tgc_graph_free(opt);
    float x[3 * 28 * 28], wsf[C * 27], bsf[C], wdf[C * 9];
    for (int k = 0; k < 3 * 28 * 28; k++) x[k] = value(14, k);
    for (int k = 0; k < C * 27; k++) wsf[k] = value(11, k) * 0.3f;
    for (int k = 0; k < C; k++) bsf[k] = value(12, k) * 0.2f;
    for (int k = 0; k < C * 9; k++) wdf[k] = value(13, k) * 0.3f;
    double xd[3 * 28 * 28], sa[C * 14 * 14], want[C * 14 * 14];
    for (int k = 0; k < 3 * 28 * 28; k++) xd[k] = x[k];
    conv_ref(xd, 3, 28, wsf, bsf, C, 1, 3, 1, 2, true, sa);
    conv_ref(sa, C, 14, wdf, NULL, C, C, 3, 1, 1, false, want);
    tgc_tensor *out = run(g, NULL, x, 3, 28);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const float *got = tgc_tensor_data(out);
    double worst = 0;
    for (int k = 0; k < C * 14 * 14; k++) worst = fmax(worst, fabs(got[k] - want[k]));
    CU_ASSERT(worst <= 1e-4);
    tgc_tensor_release(out);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* g run unoptimized on 1 thread and optimized (channels last) on 2 for x
 * [n, c, hw, hw]: the outputs agree to 1e-4. */
static void check_as_unoptimized(const tgc_graph *g, const float *x, int n, int c, int hw) {
    tgc_tensor *nchw = run_at(g, "cpu=1", TGC_OPTIMIZE_NONE, x, n, c, hw);
    tgc_tensor *nhwc = run_at(g, "cpu=2", TGC_OPTIMIZE_ALL, x, n, c, hw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nchw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nhwc);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(nchw), tgc_tensor_numel(nhwc));
    const float *a = tgc_tensor_data(nchw), *b = tgc_tensor_data(nhwc);
    double worst = 0;
    for (int64_t k = 0; k < tgc_tensor_numel(nchw); k++) worst = fmax(worst, fabs(a[k] - b[k]));
    if (worst > 1e-4) fprintf(stderr, "\n  max |channels last - NCHW| = %g", worst);
    CU_ASSERT(worst <= 1e-4);
    tgc_tensor_release(nchw), tgc_tensor_release(nhwc);
}

/* Geometries the mobile block does not have, on two images: a 4-channel
 * 5x5 first layer with auto_pad SAME_UPPER and no bias, a depthwise 3x3
 * of dilation 2 and stride 2 with uneven pads, a pointwise one without
 * bias. All three run channels last, and the pass changes no value past
 * float32 rounding (the graph unoptimized is the comparison: what is
 * checked is that the rewrite keeps its meaning). */
static void test_other_geometries(void) {
    if (!channels_last_here()) return;
    char *ws = values(21, C * 4 * 25, 0.2f), *wd = values(22, C * 9, 0.3f), *bd = values(23, C, 0.1f),
         *wp = values(24, C * C, 0.3f), yaml[16384];
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [2, 4, 12, 12]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: ws, dtype: float32, shape: [%d, 4, 5, 5], values: %s}\n"
             "  - {name: wd, dtype: float32, shape: [%d, 1, 3, 3], values: %s}\n"
             "  - {name: bd, dtype: float32, shape: [%d], values: %s}\n"
             "  - {name: wp, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "nodes:\n"
             "  - {name: s, op: Conv, inputs: [x, ws], attrs: {auto_pad: SAME_UPPER}}\n"
             "  - {name: sa, op: Relu, inputs: [s]}\n"
             "  - {name: d, op: Conv, inputs: [sa, wd, bd], attrs: {group: %d, dilations: [2, 2], strides: [2, 2], "
             "pads: [2, 1, 1, 2]}}\n"
             "  - {name: y, op: Conv, inputs: [d, wp]}\n",
             C, ws, C, wd, C, bd, C, C, wp, C);
    free(ws), free(wd), free(bd), free(wp);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "other.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 3);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    tgc_graph_free(opt);
    float x[2 * 4 * 12 * 12];
    for (int k = 0; k < 2 * 4 * 12 * 12; k++) x[k] = value(25, k);
    check_as_unoptimized(g, x, 2, 4, 12);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* "N: a0 a1 ..." for the axes attribute of g's first `op` node ("none" without one). */
static void axes_of(const tgc_graph *g, const char *op, char *out, size_t size) {
    snprintf(out, size, "none");
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        const tgc_attr *a = n->kind == TGC_NODE_OP && strcmp(n->op_name, op) == 0 ? tgc_node_attr(n, "axes") : NULL;
        if (a == NULL || a->type != TGC_ATTR_INTS) continue;
        size_t at = (size_t)snprintf(out, size, "%zu:", a->n);
        for (size_t k = 0; k < a->n && at < size; k++)
            at += (size_t)snprintf(out + at, size - at, " %lld", (long long)a->ints[k]);
        return;
    }
}

/* A squeeze-and-excitation block between two 1x1 Convs: h = conv(x); s =
 * Sigmoid(conv(Relu(conv(pool(h))))); y = conv(h * s), the pool a
 * GlobalAveragePool (torchvision's) or a ReduceMean over H and W keeping
 * them (timm's). All of it channels last (the pool as
 * _GlobalAveragePoolNHWC, or the ReduceMean over axes 1 and 2, the Mul's
 * Transposes cancelling), 2 Transposes left, the values the unoptimized
 * graph's. */
static void test_squeeze_excitation(void) {
    if (!channels_last_here()) return;
    static const char *const pools[] = {"{name: g, op: GlobalAveragePool, inputs: [h]}",
                                        "{name: g, op: ReduceMean, inputs: [h], attrs: {axes: [2, 3], keepdims: 1}}"};
    for (int p = 0; p < 2; p++) {
        char *wa = values(31, E * C, 0.3f), *wr = values(32, 4 * E, 0.3f), *we = values(33, E * 4, 0.3f),
             *wb = values(34, C * E, 0.3f), yaml[16384];
        snprintf(yaml, sizeof yaml,
                 "format: tgc/1\n"
                 "inputs: [{name: x, dtype: float32, shape: [1, %d, 14, 14]}]\n"
                 "outputs: [y]\n"
                 "initializers:\n"
                 "  - {name: wa, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
                 "  - {name: wr, dtype: float32, shape: [4, %d, 1, 1], values: %s}\n"
                 "  - {name: we, dtype: float32, shape: [%d, 4, 1, 1], values: %s}\n"
                 "  - {name: wb, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
                 "nodes:\n"
                 "  - {name: h, op: Conv, inputs: [x, wa]}\n"
                 "  - %s\n"
                 "  - {name: r, op: Conv, inputs: [g, wr]}\n"
                 "  - {name: rr, op: Relu, inputs: [r]}\n"
                 "  - {name: e, op: Conv, inputs: [rr, we]}\n"
                 "  - {name: s, op: Sigmoid, inputs: [e]}\n"
                 "  - {name: hs, op: Mul, inputs: [h, s]}\n"
                 "  - {name: y, op: Conv, inputs: [hs, wb]}\n",
                 C, E, C, wa, E, wr, E, we, C, E, wb, pools[p]);
        free(wa), free(wr), free(we), free(wb);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = loaded_graph(yaml, "se.yaml", d);
        tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
        CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 4);
        CU_ASSERT_EQUAL(count_op(opt, "_GlobalAveragePoolNHWC"), p == 0 ? 1 : 0);
        CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
        if (p == 1) {
            char got[64];
            axes_of(opt, "ReduceMean", got, sizeof got);
            CU_ASSERT_STRING_EQUAL(got, "2: 1 2");
        }
        tgc_graph_free(opt);
        float x[C * 14 * 14];
        for (int k = 0; k < C * 14 * 14; k++) x[k] = value(35, k);
        check_as_unoptimized(g, x, 1, C, 14);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

/* A graph over x [1, C, 14, 14] with two 1x1 weights, wa [E, C] (stream
 * seed) and wb [C, E] (seed + 1), its first node h = Conv(x, wa), then
 * `nodes` (YAML node lines, ending with y), into yaml. */
static void two_pointwise_yaml(char *yaml, size_t size, int seed, const char *nodes) {
    char *wa = values(seed, E * C, 0.3f), *wb = values(seed + 1, C * E, 0.3f);
    snprintf(yaml, size,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, %d, 14, 14]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: wa, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: wb, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "nodes:\n"
             "  - {name: h, op: Conv, inputs: [x, wa]}\n"
             "%s",
             C, E, C, wa, C, E, wb, nodes);
    free(wa), free(wb);
}

/* A reduction after two channels-last 1x1 Convs (then an Abs, which no
 * Transpose moves through): the Transpose back to NCHW moves past it,
 * its axes mapped, where the result keeps its layout (without keepdims,
 * the axes left in order: nothing after it; with keepdims, the Transpose
 * after it), and stays where the axes left would come out in another
 * order. The values the unoptimized graph's. */
static void test_reduction_after(void) {
    if (!channels_last_here()) return;
    static const struct {
        const char *op, *axes;
        int keepdims, transposes; /* Transposes left */
        const char *mapped;       /* the axes after the pass */
    } cases[] = {{"ReduceMean", "[2, 3]", 0, 1, "2: 1 2"}, /* a mean over H and W before a classifier */
                 {"ReduceMax", "[-1, 2]", 1, 2, "2: 2 1"},
                 {"ReduceL2", "[1]", 0, 1, "1: 3"},
                 {"ReduceMean", "[3]", 0, 2, "1: 3"}}; /* N, C, H would come out N, H, C: left */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char nodes[256], yaml[8192];
        snprintf(nodes, sizeof nodes,
                 "  - {name: k, op: Conv, inputs: [h, wb]}\n"
                 "  - {name: r, op: %s, inputs: [k], attrs: {axes: %s, keepdims: %d}}\n"
                 "  - {name: y, op: Abs, inputs: [r]}\n",
                 cases[i].op, cases[i].axes, cases[i].keepdims);
        two_pointwise_yaml(yaml, sizeof yaml, 51, nodes);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = loaded_graph(yaml, "reduce.yaml", d);
        tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
        CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 2);
        CU_ASSERT_EQUAL(count_op(opt, "Transpose"), cases[i].transposes);
        char got[64];
        axes_of(opt, cases[i].op, got, sizeof got);
        CU_ASSERT_STRING_EQUAL(got, cases[i].mapped);
        tgc_graph_free(opt);
        float x[C * 14 * 14];
        for (int k = 0; k < C * 14 * 14; k++) x[k] = value(53, k);
        check_as_unoptimized(g, x, 1, C, 14);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

/* Activations between two 1x1 Convs, channels last: a SiLU (x *
 * Sigmoid(x), EfficientNet's) becomes one _Swish (fuse-swish) that the
 * Transposes move through; a two-node one (x + Sigmoid(x)) becomes one
 * fusion group, since fuse-elementwise runs after the Transposes back to
 * NCHW that nhwc-conv left are gone (they read the Sigmoid's values too).
 * Both Convs channels last, the values the unoptimized graph's. */
static void test_activations_between(void) {
    if (!channels_last_here()) return;
    for (int silu = 0; silu < 2; silu++) {
        char nodes[256], yaml[8192];
        snprintf(nodes, sizeof nodes,
                 "  - {name: s, op: Sigmoid, inputs: [h]}\n"
                 "  - {name: hs, op: %s, inputs: [s, h]}\n"
                 "  - {name: y, op: Conv, inputs: [hs, wb]}\n",
                 silu ? "Mul" : "Add");
        two_pointwise_yaml(yaml, sizeof yaml, 41, nodes);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = loaded_graph(yaml, "act.yaml", d);
        tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
        CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 2);
        CU_ASSERT_EQUAL(count_op(opt, silu ? "_Swish" : "_FusedElementwise"), 1);
        CU_ASSERT_EQUAL(count_op(opt, "Sigmoid") + count_op(opt, "Mul") + count_op(opt, "Add"), 0);
        tgc_graph_free(opt);
        float x[C * 14 * 14];
        for (int k = 0; k < C * 14 * 14; k++) x[k] = value(43, k);
        check_as_unoptimized(g, x, 1, C, 14);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

/* A fire module (SqueezeNet's) on 13x13: squeeze 1x1 64 -> 32, expand
 * 1x1 and 3x3 32 -> 64 joined by a Concat on the channels, then a 1x1
 * 128 -> 32. The 3x3 (3.1M multiply-adds, Winograd's GEMMs small) is one
 * the cpu runs through oneDNN's channels-last kernel on copies, so it runs
 * channels last too; the Concat's inputs are then both Transposes back to
 * NCHW and the Concat moves below them (axis 3). The last 1x1 reads that
 * Concat of candidates, so it runs channels last as well (SqueezeNet's
 * classifier): one Transpose in, one after the last 1x1; the values the
 * unoptimized graph's. */
static void test_fire_module(void) {
    if (!channels_last_here()) return;
    char *ws = values(51, 32 * 64, 0.2f), *w1 = values(52, 64 * 32, 0.2f), *w3 = values(53, 64 * 32 * 9, 0.1f),
         *wn = values(54, 32 * 128, 0.1f), *yaml = malloc(400000);
    snprintf(yaml, 400000,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, 64, 13, 13]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: ws, dtype: float32, shape: [32, 64, 1, 1], values: %s}\n"
             "  - {name: w1, dtype: float32, shape: [64, 32, 1, 1], values: %s}\n"
             "  - {name: w3, dtype: float32, shape: [64, 32, 3, 3], values: %s}\n"
             "  - {name: wn, dtype: float32, shape: [32, 128, 1, 1], values: %s}\n"
             "nodes:\n"
             "  - {name: s, op: Conv, inputs: [x, ws]}\n"
             "  - {name: sr, op: Relu, inputs: [s]}\n"
             "  - {name: e1, op: Conv, inputs: [sr, w1]}\n"
             "  - {name: e1r, op: Relu, inputs: [e1]}\n"
             "  - {name: e3, op: Conv, inputs: [sr, w3], attrs: {pads: [1, 1, 1, 1]}}\n"
             "  - {name: e3r, op: Relu, inputs: [e3]}\n"
             "  - {name: cat, op: Concat, inputs: [e1r, e3r], attrs: {axis: 1}}\n"
             "  - {name: y, op: Conv, inputs: [cat, wn]}\n",
             ws, w1, w3, wn);
    free(ws), free(w1), free(w3), free(wn);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "fire.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 4);
    CU_ASSERT_EQUAL(count_op(opt, "Conv"), 0);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    for (int32_t id = 0; id < opt->n_nodes; id++)
        if (opt->nodes[id].kind == TGC_NODE_OP && strcmp(opt->nodes[id].op_name, "Concat") == 0)
            CU_ASSERT_EQUAL(tgc_node_attr(&opt->nodes[id], "axis")->i, 3);
    tgc_graph_free(opt);
    static float x[64 * 13 * 13];
    for (int k = 0; k < 64 * 13 * 13; k++) x[k] = value(55, k);
    check_as_unoptimized(g, x, 1, 64, 13);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* v = max(v, 0), n values. */
static void relu_ref(double *v, int n) {
    for (int k = 0; k < n; k++) v[k] = fmax(v[k], 0.0);
}

/* g's output y [1, C, hw, hw] for x [1, C, hw, hw] within 1e-4 of want,
 * and the same bits at 1 and 2 threads. */
static void check_reference(const tgc_graph *g, const float *x, int hw, const double *want) {
    tgc_tensor *one = run(g, "cpu=1", x, C, hw), *two = run(g, "cpu=2", x, C, hw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    const float *y = tgc_tensor_data(one);
    double worst = 0;
    for (int k = 0; k < C * hw * hw; k++) worst = fmax(worst, fabs(y[k] - want[k]));
    if (worst > 1e-4) fprintf(stderr, "\n  max |y - reference| = %g", worst);
    CU_ASSERT(worst <= 1e-4);
    CU_ASSERT_EQUAL(memcmp(y, tgc_tensor_data(two), sizeof(float) * C * hw * hw), 0);
    tgc_tensor_release(one), tgc_tensor_release(two);
}

/* A ResNeXt-style block whose skip stays NCHW: s = Conv 3x3 (8 -> 32, too
 * few multiply-adds for a channels-last kernel), then 1x1, Relu, a 3x3 of
 * 2 groups of 16 channels, Relu, 1x1, Add of s, Relu, then a 1x1, Add of s
 * again (no Relu), and a last 1x1. The grouped Conv runs channels last with the
 * 1x1s (5 _ConvNHWC), and the Adds join them through the Transpose that
 * s's first reader has, so that the Transposes around them cancel: 2 left
 * (s's, and y's back to NCHW) where there were 4. Then fuse-conv-add takes
 * each Add into the 1x1 before it (no Add left, two _ConvNHWC with a Z):
 * the first adds the skip into a copy (s is read again after it), the
 * second into the skip's own buffer (its last reader). x [1, 8, 7, 7]; y
 * against conv_ref in double. */
static void test_grouped_residual_channels_last(void) {
    if (!channels_last_here()) return;
    enum { W = 32, HW = 7, N = HW * HW };
    char *ws = values(61, W * C * 9, 0.1f), *wa = values(62, W * W, 0.2f), *wg = values(63, W * 16 * 9, 0.1f),
         *wc = values(64, W * W, 0.2f), *wz = values(65, W * W, 0.2f), *wy = values(66, C * W, 0.2f);
    size_t size = 1 << 19;
    char *yaml = malloc(size);
    snprintf(yaml, size,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: ws, dtype: float32, shape: [%d, %d, 3, 3], values: %s}\n"
             "  - {name: wa, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: wg, dtype: float32, shape: [%d, 16, 3, 3], values: %s}\n"
             "  - {name: wc, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: wz, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: wy, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "nodes:\n"
             "  - {name: s, op: Conv, inputs: [x, ws], attrs: {pads: [1, 1, 1, 1]}}\n"
             "  - {name: a, op: Conv, inputs: [s, wa]}\n"
             "  - {name: ar, op: Relu, inputs: [a]}\n"
             "  - {name: gc, op: Conv, inputs: [ar, wg], attrs: {group: 2, pads: [1, 1, 1, 1]}}\n"
             "  - {name: gr, op: Relu, inputs: [gc]}\n"
             "  - {name: c, op: Conv, inputs: [gr, wc]}\n"
             "  - {name: r, op: Add, inputs: [s, c]}\n"
             "  - {name: rr, op: Relu, inputs: [r]}\n"
             "  - {name: z, op: Conv, inputs: [rr, wz]}\n"
             "  - {name: q, op: Add, inputs: [z, s]}\n"
             "  - {name: y, op: Conv, inputs: [q, wy]}\n",
             C, HW, HW, W, C, ws, W, W, wa, W, wg, W, W, wc, W, W, wz, C, W, wy);
    free(ws), free(wa), free(wg), free(wc), free(wz), free(wy);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "resnext.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 5);
    CU_ASSERT_EQUAL(count_op(opt, "Conv"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Add"), 0);
    CU_ASSERT_EQUAL(count_op_inputs(opt, "_ConvNHWC", 4), 2);
    tgc_graph_free(opt);
    float x[C * N], fw[W * W * 9];
    double xd[C * N], sv[W * N], t1[W * N], t2[W * N], want[C * N];
    for (int k = 0; k < C * N; k++) x[k] = value(67, k), xd[k] = x[k];
    for (int k = 0; k < W * C * 9; k++) fw[k] = value(61, k) * 0.1f;
    conv_ref(xd, C, HW, fw, NULL, W, 1, 3, 1, 1, false, sv);
    for (int k = 0; k < W * W; k++) fw[k] = value(62, k) * 0.2f;
    conv_ref(sv, W, HW, fw, NULL, W, 1, 1, 0, 1, false, t1);
    relu_ref(t1, W * N);
    for (int k = 0; k < W * 16 * 9; k++) fw[k] = value(63, k) * 0.1f;
    conv_ref(t1, W, HW, fw, NULL, W, 2, 3, 1, 1, false, t2);
    relu_ref(t2, W * N);
    for (int k = 0; k < W * W; k++) fw[k] = value(64, k) * 0.2f;
    conv_ref(t2, W, HW, fw, NULL, W, 1, 1, 0, 1, false, t1);
    for (int k = 0; k < W * N; k++) t1[k] += sv[k];
    relu_ref(t1, W * N);
    for (int k = 0; k < W * W; k++) fw[k] = value(65, k) * 0.2f;
    conv_ref(t1, W, HW, fw, NULL, W, 1, 1, 0, 1, false, t2);
    for (int k = 0; k < W * N; k++) t2[k] += sv[k];
    for (int k = 0; k < C * W; k++) fw[k] = value(66, k) * 0.2f;
    conv_ref(t2, W, HW, fw, NULL, C, 1, 1, 0, 1, false, want);
    check_reference(g, x, HW, want);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* A RegNetX stage entry: x [1, 8, 14, 14]; the branch a 1x1 8 -> 32
 * with Relu, a 3x3 of 2 groups of 16 at stride 2 with Relu, a 1x1 32 ->
 * 32; the projection shortcut a 1x1 at stride 2 (8 -> 32) of x; their
 * Add, a Relu, then a 1x1 back to 8 channels: y [1, 8, 7, 7]. The
 * shortcut, a strided 1x1, goes channels last because the Add joins it
 * with the branch, which does (4 _ConvNHWC; fuse-conv-add then takes the
 * Add into the branch's last 1x1 with the shortcut as its Z): 2
 * Transposes (x's, and the Relu's back to NCHW for the last 1x1), where
 * a shortcut kept NCHW needed 4. The same shortcut beside an NCHW branch
 * (a 3x3 on 8 channels too dense for channels last) stays NCHW. y against
 * conv_ref in double; the same bits at 1 and 2 threads. */
static void test_projection_shortcut(void) {
    if (!channels_last_here()) return;
    enum { W = 32, HW = 14, OW = 7 };
    char *wa = values(71, W * C, 0.2f), *wg = values(72, W * 16 * 9, 0.1f), *wc = values(73, W * W, 0.2f),
         *wp = values(74, W * C, 0.2f), *wy = values(75, C * W, 0.2f);
    size_t size = 1 << 19;
    char *yaml = malloc(size);
    const char *format =
        "format: tgc/1\n"
        "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
        "outputs: [y]\n"
        "initializers:\n"
        "  - {name: wa, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
        "  - {name: wg, dtype: float32, shape: [%d, 16, 3, 3], values: %s}\n"
        "  - {name: wc, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
        "  - {name: wp, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
        "  - {name: wy, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
        "nodes:\n"
        "  - {name: a, op: Conv, inputs: [x, wa]}\n"
        "  - {name: ar, op: Relu, inputs: [a]}\n"
        "  - {name: gc, op: Conv, inputs: [ar, wg], attrs: {group: 2, pads: [1, 1, 1, 1], strides: [2, 2]}}\n"
        "  - {name: gr, op: Relu, inputs: [gc]}\n"
        "  - {name: c, op: Conv, inputs: [gr, wc]}\n"
        "  - {name: p, op: Conv, inputs: [x, wp], attrs: {strides: [2, 2]}}\n"
        "  - {name: r, op: Add, inputs: [c, p]}\n"
        "  - {name: rr, op: Relu, inputs: [r]}\n"
        "  - {name: y, op: Conv, inputs: [rr, wy]}\n";
    snprintf(yaml, size, format, C, HW, HW, W, C, wa, W, wg, W, W, wc, W, C, wp, C, W, wy);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "stage_entry.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 4);
    CU_ASSERT_EQUAL(count_op(opt, "Conv"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Add"), 0);
    CU_ASSERT_EQUAL(count_op_inputs(opt, "_ConvNHWC", 4), 1);
    tgc_graph_free(opt);

    float x[C * HW * HW], fw[W * 16 * 9];
    double xd[C * HW * HW], t1[W * HW * HW], t2[W * OW * OW], t3[W * OW * OW], want[C * OW * OW];
    for (int k = 0; k < C * HW * HW; k++) x[k] = value(76, k), xd[k] = x[k];
    for (int k = 0; k < W * C; k++) fw[k] = value(71, k) * 0.2f;
    conv_ref(xd, C, HW, fw, NULL, W, 1, 1, 0, 1, false, t1);
    relu_ref(t1, W * HW * HW);
    for (int k = 0; k < W * 16 * 9; k++) fw[k] = value(72, k) * 0.1f;
    conv_ref(t1, W, HW, fw, NULL, W, 2, 3, 1, 2, false, t2);
    relu_ref(t2, W * OW * OW);
    for (int k = 0; k < W * W; k++) fw[k] = value(73, k) * 0.2f;
    conv_ref(t2, W, OW, fw, NULL, W, 1, 1, 0, 1, false, t3);
    for (int k = 0; k < W * C; k++) fw[k] = value(74, k) * 0.2f;
    conv_ref(xd, C, HW, fw, NULL, W, 1, 1, 0, 2, false, t2);
    for (int k = 0; k < W * OW * OW; k++) t3[k] += t2[k];
    relu_ref(t3, W * OW * OW);
    for (int k = 0; k < C * W; k++) fw[k] = value(75, k) * 0.2f;
    conv_ref(t3, W, OW, fw, NULL, C, 1, 1, 0, 1, false, want);
    tgc_tensor *one = run(g, "cpu=1", x, C, HW), *two = run(g, "cpu=2", x, C, HW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    double worst = 0;
    const float *y = tgc_tensor_data(one);
    for (int k = 0; k < C * OW * OW; k++) worst = fmax(worst, fabs(y[k] - want[k]));
    if (worst > 1e-4) fprintf(stderr, "\n  max |y - reference| = %g", worst);
    CU_ASSERT(worst <= 1e-4);
    CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(one), tgc_tensor_data(two), sizeof(float) * C * OW * OW), 0);
    tgc_tensor_release(one), tgc_tensor_release(two);
    tgc_graph_free(g);

    /* the branch a dense 3x3 on 8 channels (NCHW): the shortcut stays NCHW too */
    char *wd = values(77, W * C * 9, 0.1f);
    snprintf(yaml, size,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
             "outputs: [y]\n"
             "initializers:\n"
             "  - {name: wd, dtype: float32, shape: [%d, %d, 3, 3], values: %s}\n"
             "  - {name: wp, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "nodes:\n"
             "  - {name: c, op: Conv, inputs: [x, wd], attrs: {pads: [1, 1, 1, 1], strides: [2, 2]}}\n"
             "  - {name: p, op: Conv, inputs: [x, wp], attrs: {strides: [2, 2]}}\n"
             "  - {name: y, op: Add, inputs: [c, p]}\n",
             C, HW, HW, W, C, wd, W, C, wp);
    g = loaded_graph(yaml, "nchw_entry.yaml", d);
    opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC") + count_op(opt, "Transpose"), 0);
    tgc_graph_free(opt);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(wa), free(wg), free(wc), free(wp), free(wy), free(wd);
    free(yaml);
}

/* Appends "[w0, w1, ...]" to *at (within end): n weights in steps of
 * 0.005 from -0.05 to 0.05, each also parsed into w[k] as the loader will
 * read it. */
static void coarse_weights(int seed, int n, float *w, char **at, char *end) {
    *at += snprintf(*at, (size_t)(end - *at), "[");
    for (int k = 0; k < n; k++) {
        char one[32];
        snprintf(one, sizeof one, "%g", (double)(((int64_t)k * 7919 + seed * 104729) % 21 - 10) * 0.005);
        w[k] = strtof(one, NULL);
        *at += snprintf(*at, (size_t)(end - *at), "%s%s", k ? ", " : "", one);
    }
    *at += snprintf(*at, (size_t)(end - *at), "]");
}

/* The way a pointwise _ConvNHWC takes on this cpu: the own tiles on
 * AVX-512; elsewhere the packed product for many weights (`big`), else
 * oneDNN's convolution. */
static const char *pointwise_way(bool big) {
    if (tgc_cpu_conv_isa()->pointwise != NULL) return "pointwise nhwc";
    return big ? "packed gemm nhwc" : "onednn conv nhwc";
}

/* Three 1x1 Convs channels last, 8 -> 640 -> 640 -> 8 over 6x6, the
 * first two with a bias, the first with a Relu, the second's output added
 * to the first's before its Relu (an Add that fuse-conv-add takes into the
 * second as its Z, adding into Z's own buffer: the Add was its last
 * reader). On AVX-512 all three run on the own pointwise tiles (the way
 * "pointwise nhwc"), the 640 -> 640 one (409,600 weights, 14.7M
 * multiply-adds) in pieces of output channels; elsewhere that one is one
 * packed product (past PACKED_MIN_WEIGHT_FLOATS), the others oneDNN's.
 * y against conv_ref in double; the same bits at 1 and 2 threads. */
static void test_wide_pointwise(void) {
    if (!channels_last_here()) return;
    enum { M = 640, HW = 6, N = HW * HW };
    size_t size = (size_t)(M * M + 2 * M * C + 2 * M) * 8 + 4096;
    char *yaml = malloc(size), *at = yaml, *end = yaml + size;
    float *w1 = malloc(sizeof(float) * M * C), *b1 = malloc(sizeof(float) * M), *w2 = malloc(sizeof(float) * M * M),
          *b2 = malloc(sizeof(float) * M), *w3 = malloc(sizeof(float) * C * M);
    at += snprintf(at, (size_t)(end - at),
                   "format: tgc/1\n"
                   "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
                   "outputs: [y]\n"
                   "initializers:\n"
                   "  - {name: w1, dtype: float32, shape: [%d, %d, 1, 1], values: ",
                   C, HW, HW, M, C);
    coarse_weights(1, M * C, w1, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: b1, dtype: float32, shape: [%d], values: ", M);
    coarse_weights(2, M, b1, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: w2, dtype: float32, shape: [%d, %d, 1, 1], values: ", M, M);
    coarse_weights(3, M * M, w2, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: b2, dtype: float32, shape: [%d], values: ", M);
    coarse_weights(4, M, b2, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: w3, dtype: float32, shape: [%d, %d, 1, 1], values: ", C, M);
    coarse_weights(5, C * M, w3, &at, end);
    snprintf(at, (size_t)(end - at),
             "}\n"
             "nodes:\n"
             "  - {name: p1, op: Conv, inputs: [x, w1, b1]}\n"
             "  - {name: r1, op: Relu, inputs: [p1]}\n"
             "  - {name: p2, op: Conv, inputs: [r1, w2, b2]}\n"
             "  - {name: q, op: Add, inputs: [p2, p1]}\n"
             "  - {name: y, op: Conv, inputs: [q, w3]}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "packed.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 3);
    CU_ASSERT_EQUAL(count_op(opt, "Add"), 0);
    int32_t w2_id = tgc_graph_find(opt, "w2");
    for (int32_t id = 0; id < opt->n_nodes; id++) {
        const tgc_node *n = &opt->nodes[id];
        if (n->kind != TGC_NODE_OP || strcmp(n->op_name, "_ConvNHWC") != 0) continue;
        const char *way = tgc_kernel_choice(tgc_kernel_for_node(opt, n, TGC_DEVICE_CPU), opt, id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(way);
        CU_ASSERT_STRING_EQUAL(way, pointwise_way(n->inputs[1].node == w2_id));
    }
    tgc_graph_free(opt);
    float x[C * N];
    double xd[C * N], *t1 = malloc(sizeof(double) * M * N), *t2 = malloc(sizeof(double) * M * N), want[C * N];
    for (int k = 0; k < C * N; k++) x[k] = value(68, k), xd[k] = x[k];
    conv_ref(xd, C, HW, w1, b1, M, 1, 1, 0, 1, false, t1);
    relu_ref(t1, M * N);
    conv_ref(t1, M, HW, w2, b2, M, 1, 1, 0, 1, false, t2);
    conv_ref(xd, C, HW, w1, b1, M, 1, 1, 0, 1, false, t1); /* p1 again, without its Relu */
    for (int k = 0; k < M * N; k++) t2[k] += t1[k];
    conv_ref(t2, M, HW, w3, NULL, C, 1, 1, 0, 1, false, want);
    check_reference(g, x, HW, want);
    free(w1), free(b1), free(w2), free(b2), free(w3), free(t1), free(t2);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* Four 1x1 Convs channels last over 7x7, 8 -> 96 -> 576 -> 96 -> 8, each
 * with a bias and all but the last with a Relu. On AVX-512 they run on the
 * own pointwise tiles, the middle two (2.7M multiply-adds) in two pieces
 * of output channels (more channels than the 49 positions: the weights
 * outweigh X), their 49 rows in 8 tiles of 6 and one of 1; elsewhere
 * through oneDNN's convolution in two pieces of the 49 positions seen as
 * one column (25 and 24). y against conv_ref in double, the same bits at
 * 1 and 2 threads. */
static void test_pointwise_pieces(void) {
    if (!channels_last_here()) return;
    enum { HW = 7, N = HW * HW, LAYERS = 4, MOST = 576 };
    static const int widths[LAYERS + 1] = {C, 96, MOST, 96, C};
    size_t size = (size_t)(2 * 96 * MOST + 2 * 96 * C + 2 * MOST) * 8 + 4096;
    char *yaml = malloc(size), *at = yaml, *end = yaml + size;
    float *w[LAYERS], *b[LAYERS];
    at += snprintf(at, (size_t)(end - at),
                   "format: tgc/1\n"
                   "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
                   "outputs: [y]\n"
                   "initializers:\n",
                   C, HW, HW);
    for (int l = 0; l < LAYERS; l++) {
        int ci = widths[l], co = widths[l + 1];
        w[l] = malloc(sizeof(float) * co * ci), b[l] = malloc(sizeof(float) * co);
        at += snprintf(at, (size_t)(end - at), "  - {name: w%d, dtype: float32, shape: [%d, %d, 1, 1], values: ", l,
                       co, ci);
        coarse_weights(10 + l, co * ci, w[l], &at, end);
        at += snprintf(at, (size_t)(end - at), "}\n  - {name: b%d, dtype: float32, shape: [%d], values: ", l, co);
        coarse_weights(20 + l, co, b[l], &at, end);
        at += snprintf(at, (size_t)(end - at), "}\n");
    }
    at += snprintf(at, (size_t)(end - at), "nodes:\n");
    for (int l = 0; l < LAYERS; l++) {
        const char *from = l == 0 ? "x" : NULL;
        char in[8], out[8];
        snprintf(in, sizeof in, "r%d", l - 1);
        snprintf(out, sizeof out, l == LAYERS - 1 ? "y" : "p%d", l);
        at += snprintf(at, (size_t)(end - at), "  - {name: %s, op: Conv, inputs: [%s, w%d, b%d]}\n", out,
                       from != NULL ? from : in, l, l);
        if (l < LAYERS - 1) at += snprintf(at, (size_t)(end - at), "  - {name: r%d, op: Relu, inputs: [p%d]}\n", l, l);
    }
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "pieces.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), LAYERS);
    for (int32_t id = 0; id < opt->n_nodes; id++) {
        const tgc_node *n = &opt->nodes[id];
        if (n->kind != TGC_NODE_OP || strcmp(n->op_name, "_ConvNHWC") != 0) continue;
        const char *way = tgc_kernel_choice(tgc_kernel_for_node(opt, n, TGC_DEVICE_CPU), opt, id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(way);
        CU_ASSERT_STRING_EQUAL(way, pointwise_way(false));
    }
    tgc_graph_free(opt);
    float x[C * N];
    double *t[2] = {malloc(sizeof(double) * MOST * N), malloc(sizeof(double) * MOST * N)}, want[C * N];
    for (int k = 0; k < C * N; k++) x[k] = value(69, k), t[0][k] = x[k];
    for (int l = 0; l < LAYERS; l++) {
        double *to = l == LAYERS - 1 ? want : t[(l + 1) % 2];
        conv_ref(t[l % 2], widths[l], HW, w[l], b[l], widths[l + 1], 1, 1, 0, 1, false, to);
        if (l < LAYERS - 1) relu_ref(to, widths[l + 1] * N);
        free(w[l]), free(b[l]);
    }
    check_reference(g, x, HW, want);
    free(t[0]), free(t[1]);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* y of a float16 graph over x [1, C, 7, 7] float16 (x16), on `threads`,
 * as float32 (the caller frees it). */
static float *run_half(const tgc_graph *g, const char *threads, const uint16_t *x16) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_tensor *in = NULL, *out = NULL;
    const char *names[] = {"x"};
    tgc_session_options o = {.threads = threads, .optimize = TGC_OPTIMIZE_ALL};
    tgc_status st = tgc_session_create(g, "cpu", &o, d, &s);
    if (st == TGC_OK) st = tgc_tensor_create(TGC_FLOAT16, 4, (int64_t[]){1, C, 7, 7}, x16, &in);
    if (st == TGC_OK) st = tgc_session_run(s, 1, names, &in, &out, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_dtype(out), TGC_FLOAT16);
    float *y = malloc(sizeof(float) * C * 49);
    const uint16_t *h = tgc_tensor_data(out);
    for (int k = 0; k < C * 49; k++) y[k] = tgc_half_to_float(h[k]);
    tgc_tensor_release(in), tgc_tensor_release(out);
    tgc_session_free(s);
    tgc_diags_free(d);
    return y;
}

/* A float16 model end to end through the channels-last passes: x, W and
 * y float16, 1x1 layers 8 -> 32 (a bias, a Relu), 32 -> 32 whose output
 * is added to the first layer's (a residual Add), 32 -> 8, over 7x7.
 * compute-in-float32 runs them in float32 between Casts; the three go
 * channels last and the Add into the second (fuse-conv-add). y against
 * the same layers in double over the float16 values, within float16's
 * rounding of y (2^-11 of its largest value, twice); the same bits at 1
 * and 2 threads. */
static void test_float16_residual(void) {
    if (!channels_last_here()) return;
    enum { M = 32, N = 49 };
    size_t size = (size_t)(2 * M * C + M * M + M) * 24 + 4096;
    char *yaml = malloc(size), *at = yaml, *end = yaml + size;
    float w1[M * C], b1[M], w2[M * M], w3[C * M];
    at += snprintf(at, (size_t)(end - at),
                   "format: tgc/1\n"
                   "inputs: [{name: x, dtype: float16, shape: [1, %d, 7, 7]}]\n"
                   "outputs: [y]\n"
                   "initializers:\n"
                   "  - {name: w1, dtype: float16, shape: [%d, %d, 1, 1], values: ",
                   C, M, C);
    coarse_weights(31, M * C, w1, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: b1, dtype: float16, shape: [%d], values: ", M);
    coarse_weights(32, M, b1, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: w2, dtype: float16, shape: [%d, %d, 1, 1], values: ", M, M);
    coarse_weights(33, M * M, w2, &at, end);
    at += snprintf(at, (size_t)(end - at), "}\n  - {name: w3, dtype: float16, shape: [%d, %d, 1, 1], values: ", C, M);
    coarse_weights(34, C * M, w3, &at, end);
    snprintf(at, (size_t)(end - at),
             "}\n"
             "nodes:\n"
             "  - {name: p1, op: Conv, inputs: [x, w1, b1]}\n"
             "  - {name: r1, op: Relu, inputs: [p1]}\n"
             "  - {name: p2, op: Conv, inputs: [r1, w2]}\n"
             "  - {name: q, op: Add, inputs: [p2, p1]}\n"
             "  - {name: y, op: Conv, inputs: [q, w3]}\n");
    /* the weights as the loader keeps them: rounded to float16 */
    for (int k = 0; k < M * C; k++) w1[k] = tgc_half_to_float(tgc_float_to_half(w1[k]));
    for (int k = 0; k < M; k++) b1[k] = tgc_half_to_float(tgc_float_to_half(b1[k]));
    for (int k = 0; k < M * M; k++) w2[k] = tgc_half_to_float(tgc_float_to_half(w2[k]));
    for (int k = 0; k < C * M; k++) w3[k] = tgc_half_to_float(tgc_float_to_half(w3[k]));
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "half.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 3);
    CU_ASSERT_EQUAL(count_op_inputs(opt, "_ConvNHWC", 4), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Add"), 0);
    tgc_graph_free(opt);
    uint16_t x16[C * N];
    double xd[C * N], t1[M * N], t2[M * N], r1[M * N], want[C * N];
    for (int k = 0; k < C * N; k++) x16[k] = tgc_float_to_half(value(71, k)), xd[k] = tgc_half_to_float(x16[k]);
    conv_ref(xd, C, 7, w1, b1, M, 1, 1, 0, 1, false, t1);
    memcpy(r1, t1, sizeof r1);
    relu_ref(r1, M * N);
    conv_ref(r1, M, 7, w2, NULL, M, 1, 1, 0, 1, false, t2);
    for (int k = 0; k < M * N; k++) t2[k] += t1[k];
    conv_ref(t2, M, 7, w3, NULL, C, 1, 1, 0, 1, false, want);
    float *one = run_half(g, "cpu=1", x16), *two = run_half(g, "cpu=2", x16);
    double worst = 0, top = 0;
    for (int k = 0; k < C * N; k++) worst = fmax(worst, fabs(one[k] - want[k])), top = fmax(top, fabs(want[k]));
    if (worst > 2 * top / 2048) fprintf(stderr, "\n  max |y - reference| = %g of %g", worst, top);
    CU_ASSERT(top > 0 && worst <= 2 * top / 2048);
    CU_ASSERT_EQUAL(memcmp(one, two, sizeof(float) * C * N), 0);
    free(one), free(two);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* Left alone: a 1x1 between two dense 3x3 Convs, and the block on 56x56. */
static void test_left_alone(void) {
    tgc_diags *d = tgc_diags_create();
    for (int lone = 0; lone < 2; lone++) {
        char *yaml = block_yaml(lone ? 14 : MAX_HW, lone);
        tgc_graph *g = loaded_graph(yaml, "block.yaml", d), *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
        CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC") + count_op(opt, "Transpose"), 0);
        tgc_graph_free(opt), tgc_graph_free(g), free(yaml);
    }
    tgc_diags_free(d);
}

TGC_TEST_MAIN("nhwc-conv, float32", {"a mobile block channels last", test_block_channels_last},
              {"an image's first layer channels last", test_stem_channels_last},
              {"other geometries, two images", test_other_geometries},
              {"a squeeze-and-excitation block", test_squeeze_excitation},
              {"activations between channels-last Convs, fused", test_activations_between},
              {"a fire module channels last, its Concat too", test_fire_module},
              {"a reduction after channels-last Convs", test_reduction_after},
              {"a grouped block channels last through its residual Add", test_grouped_residual_channels_last},
              {"a strided 1x1 shortcut channels last beside its branch", test_projection_shortcut},
              {"pointwise layers with many weights, a Z in its own buffer", test_wide_pointwise},
              {"pointwise layers over 7x7 in pieces", test_pointwise_pieces},
              {"a float16 residual block end to end", test_float16_residual},
              {"a lone 1x1 and large maps left alone", test_left_alone})
