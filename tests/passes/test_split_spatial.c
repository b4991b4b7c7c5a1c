/* split-spatial (passes/split_spatial.c): a Conv -> activation -> pool
 * chain (or Conv -> activation -> Conv) whose largest step holds more
 * than the given bytes is cut along
 * its rows into the number of bands worked out by hand, joined by one
 * Concat on axis 2 that keeps the last node's name, and the cut graph's
 * output equals a double-precision loop over the whole map (float32
 * rounding) at the band edges too: a strided, padded Conv; a ceil_mode
 * MaxPool whose last window hangs over the map; a dilated Conv with
 * asymmetric pads; an AveragePool counting its pads. A chain whose steps
 * fit, or with a device spec, is left whole. */
#include "tests/harness.h"
#include "tests/passes/graph_queries.h"

#include "passes/pass.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* n values (i * 37 % 23 - 11) / 8 (and the text "[v0, v1, ...]" into *text). */
static float *values(int n, int seed, char **text) {
    float *v = malloc((size_t)n * sizeof *v);
    *text = malloc((size_t)n * 12 + 4);
    size_t at = (size_t)sprintf(*text, "[");
    for (int i = 0; i < n; i++) {
        v[i] = (float)((i * 37 + seed) % 23 - 11) / 8.0f;
        at += (size_t)sprintf(*text + at, "%s%g", i ? "," : "", (double)v[i]);
    }
    sprintf(*text + at, "]");
    return v;
}

/* A window's geometry along one axis. */
typedef struct axis_win {
    int k, s, d, pad_begin;
} axis_win;

/* Conv (group 1) in double: x [ci, h, w] -> y [co, oh, ow]. */
static void conv_ref(const float *x, int ci, int h, int w, const float *wt, const float *b, int co, axis_win r,
                     axis_win c, int oh, int ow, double *y) {
    for (int o = 0; o < co; o++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                double acc = b != NULL ? b[o] : 0.0;
                for (int q = 0; q < ci; q++)
                    for (int u = 0; u < r.k; u++)
                        for (int v = 0; v < c.k; v++) {
                            int yy = i * r.s - r.pad_begin + u * r.d, xx = j * c.s - c.pad_begin + v * c.d;
                            if (yy >= 0 && yy < h && xx >= 0 && xx < w)
                                acc += (double)x[(q * h + yy) * w + xx] * wt[((o * ci + q) * r.k + u) * c.k + v];
                        }
                y[(o * oh + i) * ow + j] = acc;
            }
}

/* MaxPool (max) or AveragePool counting pads (!max) in double over [ch, h, w]. */
static void pool_ref(const double *x, int ch, int h, int w, axis_win r, axis_win c, int oh, int ow, bool max,
                     double *y) {
    for (int q = 0; q < ch; q++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                double acc = max ? -INFINITY : 0.0;
                for (int u = 0; u < r.k; u++)
                    for (int v = 0; v < c.k; v++) {
                        int yy = i * r.s - r.pad_begin + u, xx = j * c.s - c.pad_begin + v;
                        double val = yy >= 0 && yy < h && xx >= 0 && xx < w ? x[(q * h + yy) * w + xx] : 0.0;
                        if (max && yy >= 0 && yy < h && xx >= 0 && xx < w) acc = val > acc ? val : acc;
                        if (!max) acc += val;
                    }
                y[(q * oh + i) * ow + j] = max ? acc : acc / (r.k * c.k);
            }
}

/* Loads yaml, cuts it at max_step and checks: `convs` Convs a band times
 * `bands` after `convs` before (0 bands: left whole), one Concat named
 * `name`; returns the cut graph's output on x (the caller releases it). */
static tgc_tensor *cut_and_run_convs(const char *yaml, int64_t max_step, int bands, int convs, const char *name,
                                     const int64_t dims[4], const float *x) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "spatial.yaml", d);
    tgc_graph *cut = NULL;
    int32_t n_cut = -1;
    tgc_status st = tgc_graph_split_spatial(g, max_step, d, &cut, &n_cut);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_EQUAL(n_cut, bands > 0 ? 1 : 0);
    CU_ASSERT_EQUAL(count_op(cut, "Conv"), bands > 0 ? bands * convs : convs);
    CU_ASSERT_EQUAL(count_op(cut, "Concat"), bands > 0 ? 1 : 0);
    const tgc_node *joined = node_named(cut, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(joined);
    if (bands > 0) CU_ASSERT_STRING_EQUAL(joined->op_name, "Concat");
    tgc_tensor *y = run_x(cut, 4, dims, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    tgc_graph_free(cut);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return y;
}

/* cut_and_run_convs for a chain with one Conv. */
static tgc_tensor *cut_and_run(const char *yaml, int64_t max_step, int bands, const char *name, const int64_t dims[4],
                               const float *x) {
    return cut_and_run_convs(yaml, max_step, bands, 1, name, dims, x);
}

static void expect_close(const tgc_tensor *y, const double *want, int64_t n) {
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(y), n);
    const float *got = tgc_tensor_data(y);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(got[i] - want[i]) > 1e-5 * (1.0 + fabs(want[i])) && bad++ < 3)
            fprintf(stderr, "\n  element %lld: %g, want %g", (long long)i, (double)got[i], want[i]);
    CU_ASSERT_EQUAL(bad, 0);
}

/* x [1, 3, 39, 33]; Conv 3 -> 8, 3x3, stride 2, pads 1 -> [1, 8, 20, 17];
 * Relu; MaxPool 3x3 stride 2 ceil_mode 1 -> [1, 8, 10, 8] (its last row's
 * window takes conv rows 18..20, one past the map). The Conv's step holds
 * 3 x 39 x 33 x 4 = 15444 bytes of input and 8 x 20 x 17 x 4 = 10880 of
 * output: 26324 (an x row 396 bytes, a conv row 544). At 12000 a step, 2
 * bands of 5 pool rows: the first reads conv rows 0..10, which read x
 * rows 0..21: 22 x 396 + 11 x 544 = 14696, over. 3 bands (pool rows 3, 3,
 * 4): the last reads conv rows 12..19 and one past (a pad of its own),
 * which read x rows 23..38: 16 x 396 + 8 x 544 = 10688; the second conv
 * rows 6..12 from x rows 11..25: 9748; they fit. */
static void test_conv_relu_maxpool(void) {
    char *wtext, *btext, *unused;
    float *w = values(8 * 3 * 9, 1, &wtext), *b = values(8, 5, &btext), *x = values(3 * 39 * 33, 3, &unused);
    char yaml[16384];
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [1, 3, 39, 33]}]\noutputs: [p]\n"
             "initializers:\n  - {name: w, dtype: float32, shape: [8, 3, 3, 3], values: %s}\n"
             "  - {name: b, dtype: float32, shape: [8], values: %s}\n"
             "nodes:\n  - {name: c, op: Conv, inputs: [x, w, b], attrs: {strides: [2, 2], pads: [1, 1, 1, 1]}}\n"
             "  - {name: r, op: Relu, inputs: [c]}\n"
             "  - {name: p, op: MaxPool, inputs: [r], attrs: {kernel_shape: [3, 3], strides: [2, 2], ceil_mode: 1}}\n",
             wtext, btext);
    double *conv = malloc(8 * 20 * 17 * sizeof *conv), want[8 * 10 * 8];
    conv_ref(x, 3, 39, 33, w, b, 8, (axis_win){3, 2, 1, 1}, (axis_win){3, 2, 1, 1}, 20, 17, conv);
    for (int i = 0; i < 8 * 20 * 17; i++) conv[i] = conv[i] > 0 ? conv[i] : 0;
    pool_ref(conv, 8, 20, 17, (axis_win){3, 2, 1, 0}, (axis_win){3, 2, 1, 0}, 10, 8, true, want);
    const int64_t dims[4] = {1, 3, 39, 33};
    tgc_tensor *y = cut_and_run(yaml, 12000, 3, "p", dims, x);
    expect_close(y, want, 8 * 10 * 8);
    tgc_tensor_release(y);
    /* At 14000 only the Conv's step is too large, but its output joined again (2 x 10880) is too: the chain
     * runs on to the pool (2 x 2560), in the same 3 bands (2 bands: 14696, over), never the conv map whole */
    y = cut_and_run(yaml, 14000, 3, "p", dims, x);
    expect_close(y, want, 8 * 10 * 8);
    tgc_tensor_release(y);
    y = cut_and_run(yaml, 30000, 0, "p", dims, x); /* the steps fit: whole */
    expect_close(y, want, 8 * 10 * 8);
    tgc_tensor_release(y);
    free(conv);
    free(w), free(b), free(x), free(wtext), free(btext), free(unused);
}

/* x [1, 2, 30, 9]; Conv 2 -> 4, 3x1, dilation 2, pads top 2, bottom 1 ->
 * [1, 4, 29, 9]; Sigmoid; AveragePool 2x1 stride 1 pads bottom 1,
 * counting pads -> [1, 4, 29, 9] (an x row 72 bytes, the others' 144).
 * Whole, the pool's step holds 4176 + 4176 bytes. At 3000 a step, 3
 * bands (9, 10, 10 rows): the second pool reads 11 rows, 1584 + 1440 =
 * 3024, over; 4 bands (7, 7, 7, 8 rows): the last pool reads rows 21..28
 * and a pad, 8 x 144 x 2 = 2304, its Conv x rows 19..29 (11 x 72) for 8
 * rows: 1944; they fit. */
static void test_dilated_conv_average_pool(void) {
    char *wtext, *unused;
    float *w = values(4 * 2 * 3, 2, &wtext), *x = values(2 * 30 * 9, 7, &unused);
    char yaml[8192];
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [1, 2, 30, 9]}]\noutputs: [a]\n"
             "initializers:\n  - {name: w, dtype: float32, shape: [4, 2, 3, 1], values: %s}\n"
             "nodes:\n  - {name: c, op: Conv, inputs: [x, w], attrs: {dilations: [2, 1], pads: [2, 0, 1, 0]}}\n"
             "  - {name: s, op: Sigmoid, inputs: [c]}\n"
             "  - {name: a, op: AveragePool, inputs: [s], attrs: {kernel_shape: [2, 1], pads: [0, 0, 1, 0], "
             "count_include_pad: 1}}\n",
             wtext);
    double conv[4 * 29 * 9], want[4 * 29 * 9];
    conv_ref(x, 2, 30, 9, w, NULL, 4, (axis_win){3, 1, 2, 2}, (axis_win){1, 1, 1, 0}, 29, 9, conv);
    for (int i = 0; i < 4 * 29 * 9; i++) conv[i] = 1.0 / (1.0 + exp(-conv[i]));
    pool_ref(conv, 4, 29, 9, (axis_win){2, 1, 1, 0}, (axis_win){1, 1, 1, 0}, 29, 9, false, want);
    const int64_t dims[4] = {1, 2, 30, 9};
    tgc_tensor *y = cut_and_run(yaml, 3000, 4, "a", dims, x);
    expect_close(y, want, 4 * 29 * 9);
    tgc_tensor_release(y);
    free(w), free(x), free(wtext), free(unused);
}

/* x [1, 4, 40, 20] (a row 320 bytes); Conv 1x1 4 -> 16 -> [1, 16, 40, 20]
 * (a row 1280); Clip 0..6; depthwise Conv 3x3, stride 2, pads 1, group 16
 * -> [1, 16, 20, 10] (a row 640); Relu: a MobileNetV2 block's expansion.
 * Whole, both Convs' steps hold 64000 bytes. At 20000 a step the chain
 * ends at the Relu (the depthwise output joined again, 2 x 12800, is over
 * too) and goes in bands of the depthwise rows: 2 bands read 20 expanded
 * rows each (a 1x1 step of 20 x 1600 = 32000, over); 3 bands (edges 6,
 * 13): the second reads expanded rows 11..25, 15 x 1600 = 24000, over; 4
 * bands of 5 rows: the inner ones read 11 expanded rows, 11 x 1600 =
 * 17600, and their depthwise steps 11 x 1280 + 5 x 640 = 17280; they fit.
 * 8 Convs, one Concat named as the Relu. */
static void test_expansion_and_depthwise(void) {
    char *w1text, *w2text, *unused;
    float *w1 = values(16 * 4, 4, &w1text), *w2 = values(16 * 9, 6, &w2text), *x = values(4 * 40 * 20, 9, &unused);
    char yaml[16384];
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [1, 4, 40, 20]}]\noutputs: [r]\n"
             "initializers:\n  - {name: w1, dtype: float32, shape: [16, 4, 1, 1], values: %s}\n"
             "  - {name: w2, dtype: float32, shape: [16, 1, 3, 3], values: %s}\n"
             "  - {name: lo, dtype: float32, shape: [], values: [0]}\n"
             "  - {name: hi, dtype: float32, shape: [], values: [6]}\n"
             "nodes:\n  - {name: e, op: Conv, inputs: [x, w1]}\n"
             "  - {name: c6, op: Clip, inputs: [e, lo, hi]}\n"
             "  - {name: d, op: Conv, inputs: [c6, w2], attrs: {group: 16, strides: [2, 2], pads: [1, 1, 1, 1]}}\n"
             "  - {name: r, op: Relu, inputs: [d]}\n",
             w1text, w2text);
    double *expanded = malloc(16 * 40 * 20 * sizeof *expanded), want[16 * 20 * 10];
    conv_ref(x, 4, 40, 20, w1, NULL, 16, (axis_win){1, 1, 1, 0}, (axis_win){1, 1, 1, 0}, 40, 20, expanded);
    for (int i = 0; i < 16 * 40 * 20; i++) expanded[i] = expanded[i] < 0 ? 0 : expanded[i] > 6 ? 6 : expanded[i];
    for (int q = 0; q < 16; q++) /* depthwise: channel q's own 3x3 filter */
        for (int i = 0; i < 20; i++)
            for (int j = 0; j < 10; j++) {
                double acc = 0;
                for (int u = 0; u < 3; u++)
                    for (int v = 0; v < 3; v++) {
                        int yy = 2 * i - 1 + u, xx = 2 * j - 1 + v;
                        if (yy >= 0 && yy < 40 && xx >= 0 && xx < 20)
                            acc += expanded[(q * 40 + yy) * 20 + xx] * w2[q * 9 + u * 3 + v];
                    }
                want[(q * 20 + i) * 10 + j] = acc > 0 ? acc : 0;
            }
    const int64_t dims[4] = {1, 4, 40, 20};
    tgc_tensor *y = cut_and_run_convs(yaml, 20000, 4, 2, "r", dims, x);
    expect_close(y, want, 16 * 20 * 10);
    tgc_tensor_release(y);
    free(expanded);
    free(w1), free(w2), free(x), free(w1text), free(w2text), free(unused);
}

/* A Conv that asks for a device stays whole however small the steps. */
static void test_device_spec_whole(void) {
    char *wtext, *unused;
    float *w = values(4 * 2 * 3, 2, &wtext), *x = values(2 * 30 * 9, 7, &unused);
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [1, 2, 30, 9]}]\noutputs: [c]\n"
             "initializers:\n  - {name: w, dtype: float32, shape: [4, 2, 3, 1], values: %s}\n"
             "nodes:\n  - {name: c, op: Conv, inputs: [x, w], device: cpu0}\n",
             wtext);
    double want[4 * 28 * 9];
    conv_ref(x, 2, 30, 9, w, NULL, 4, (axis_win){3, 1, 1, 0}, (axis_win){1, 1, 1, 0}, 28, 9, want);
    const int64_t dims[4] = {1, 2, 30, 9};
    tgc_tensor *y = cut_and_run(yaml, 100, 0, "c", dims, x);
    expect_close(y, want, 4 * 28 * 9);
    tgc_tensor_release(y);
    free(w), free(x), free(wtext), free(unused);
}

TGC_TEST_MAIN("split_spatial", {"Conv, Relu and a ceil_mode MaxPool in bands", test_conv_relu_maxpool},
              {"a dilated Conv and an AveragePool in bands", test_dilated_conv_average_pool},
              {"an expanding Conv and a depthwise Conv in bands together", test_expansion_and_depthwise},
              {"a device spec stays whole", test_device_spec_whole})
