/* Activation fusion (executor/fuse.c): a Relu (and, in the second test,
 * Clip, HardSwish, Tanh, LeakyRelu, Sigmoid; in the third, Gelu, Sigmoid
 * and Tanh after each of MatMul's paths) after a cpu Conv, Gemm, MatMul,
 * Add or BatchNormalization whose output nothing else reads is absorbed
 * into it (each Conv path: im2col, pointwise, Winograd, direct; Gemm; a
 * broadcasting Add; a pre-activation BatchNormalization); a Relu whose Conv
 * output is also read elsewhere (here: a graph output) is not, and that
 * reader sees the values before Relu. Outputs are bitwise those of the same
 * session built with TGC_NO_FUSION=1. Then the same graph with every host
 * allocation failing in turn. */
#include "tests/harness.h"

#include "executor/session.h"
#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

/* Appends an initializer with `count` pseudo-random values. */
static size_t put_init(char *buf, size_t at, size_t size, const char *name, const char *shape, int count,
                       uint32_t seed) {
    at += (size_t)snprintf(buf + at, size - at, "  - {name: %s, dtype: float32, shape: %s, values: [", name, shape);
    for (int i = 0; i < count && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%.6f", i ? ", " : "", 0.3 * lcg(&seed));
    at += (size_t)snprintf(buf + at, size - at, "]}\n");
    return at;
}

/* x [1,16,12,12] -> c1 (3x3, one im2col matrix) -> r1 -> c2 (1x1 on 16
 * channels: the direct path) -> r2, with c2 also an output; x2 [1,16,30,30] -> c3 (3x3,
 * Winograd) -> r3 and -> c4 (5x5, im2col in tiles) -> r4 and -> n1
 * (BatchNormalization) -> r7; v [3, 20] -> g1 (Gemm) -> r5 and -> s1 (Add,
 * broadcast) -> r6. */
static char *graph_text(void) {
    size_t size = 1 << 17, at = 0;
    char *buf = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    at += (size_t)snprintf(buf + at, size - at,
                           "format: tgc/1\n"
                           "inputs:\n"
                           "  - {name: x, dtype: float32, shape: [1, 16, 12, 12]}\n"
                           "  - {name: x2, dtype: float32, shape: [1, 16, 30, 30]}\n"
                           "  - {name: v, dtype: float32, shape: [3, 20]}\n"
                           "outputs: [r1, r2, c2, r3, r4, r5, r6, r7]\n"
                           "initializers:\n");
    at = put_init(buf, at, size, "w1", "[16, 16, 3, 3]", 16 * 16 * 9, 1);
    at = put_init(buf, at, size, "b1", "[16]", 16, 2);
    at = put_init(buf, at, size, "w2", "[16, 16, 1, 1]", 16 * 16, 3);
    at = put_init(buf, at, size, "w3", "[16, 16, 5, 5]", 16 * 16 * 25, 4);
    at = put_init(buf, at, size, "wg", "[20, 24]", 20 * 24, 5);
    at = put_init(buf, at, size, "bg", "[24]", 24, 6);
    at = put_init(buf, at, size, "b20", "[20]", 20, 10);
    at = put_init(buf, at, size, "bn_scale", "[16]", 16, 11);
    at = put_init(buf, at, size, "bn_bias", "[16]", 16, 12);
    at = put_init(buf, at, size, "bn_mean", "[16]", 16, 13);
    at += (size_t)snprintf(buf + at, size - at, "  - {name: bn_var, dtype: float32, shape: [16], values: [");
    for (int i = 0; i < 16; i++) at += (size_t)snprintf(buf + at, size - at, "%s%.2f", i ? ", " : "", 0.5 + 0.1 * i);
    at += (size_t)snprintf(buf + at, size - at, "]}\n");
    at += (size_t)snprintf(buf + at, size - at,
                           "nodes:\n"
                           "  - {name: c1, op: Conv, inputs: [x, w1, b1], attrs: {pads: [1, 1, 1, 1]}}\n"
                           "  - {name: r1, op: Relu, inputs: [c1]}\n"
                           "  - {name: c2, op: Conv, inputs: [r1, w2]}\n"
                           "  - {name: r2, op: Relu, inputs: [c2]}\n"
                           "  - {name: c3, op: Conv, inputs: [x2, w1, b1], attrs: {pads: [1, 1, 1, 1]}}\n"
                           "  - {name: r3, op: Relu, inputs: [c3]}\n"
                           "  - {name: c4, op: Conv, inputs: [x2, w3]}\n"
                           "  - {name: r4, op: Relu, inputs: [c4]}\n"
                           "  - {name: g1, op: Gemm, inputs: [v, wg, bg]}\n"
                           "  - {name: r5, op: Relu, inputs: [g1]}\n"
                           "  - {name: s1, op: Add, inputs: [v, b20]}\n"
                           "  - {name: r6, op: Relu, inputs: [s1]}\n"
                           "  - {name: n1, op: BatchNormalization, inputs: [x2, bn_scale, bn_bias, bn_mean, bn_var]}\n"
                           "  - {name: r7, op: Relu, inputs: [n1]}\n");
    CU_ASSERT_FATAL(at < size);
    return buf;
}

static tgc_tensor *random_tensor(int rank, const int64_t *dims, uint32_t seed) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = lcg(&seed);
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL(tgc_tensor_create(TGC_FLOAT32, rank, dims, v, &t), TGC_OK);
    free(v);
    return t;
}

#define N_OUT 8

/* Runs the graph once in a session built with fusion on or off; returns
 * the outputs and how many Relu nodes the plan absorbed. */
static int run(const tgc_graph *g, bool fusion, tgc_tensor *const feeds[3], tgc_tensor *outs[N_OUT]) {
    if (fusion) unsetenv("TGC_NO_FUSION");
    else setenv("TGC_NO_FUSION", "1", 1);
    tgc_diags *diags = tgc_diags_create();
    tgc_session *s = NULL;
    /* the executor's activation fusion on the graph as written (the passes
     * would make the Add and its Relu one fusion group) */
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_NONE};
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, diags, &s), TGC_OK);
    unsetenv("TGC_NO_FUSION");
    int absorbed = 0;
    for (int32_t id = 0; id < s->plans[0].g->n_nodes; id++) absorbed += s->plans[0].absorbed[id];
    const char *names[] = {"x", "x2", "v"};
    CU_ASSERT_EQUAL(tgc_session_run(s, 3, names, feeds, outs, diags), TGC_OK);
    tgc_session_free(s);
    tgc_diags_free(diags);
    return absorbed;
}

/* Frees what a test made: both runs' outputs, the feeds, the graph, its
 * diagnostics and its text. */
static void release_runs(tgc_tensor **fused, tgc_tensor **plain, tgc_tensor *const feeds[3], tgc_graph *g,
                         tgc_diags *diags, char *text) {
    for (int i = 0; i < N_OUT; i++) {
        tgc_tensor_release(fused[i]);
        tgc_tensor_release(plain[i]);
    }
    for (int i = 0; i < 3; i++) tgc_tensor_release(feeds[i]);
    tgc_graph_free(g);
    tgc_diags_free(diags);
    free(text);
}

static void test_fused_equals_unfused(void) {
    char *text = graph_text();
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, strlen(text), "fusion.yaml", NULL, diags, &g), TGC_OK);
    int64_t xd[4] = {1, 16, 12, 12}, x2d[4] = {1, 16, 30, 30}, vd[2] = {3, 20};
    tgc_tensor *feeds[3] = {random_tensor(4, xd, 7), random_tensor(4, x2d, 8), random_tensor(2, vd, 9)};
    tgc_tensor *fused[N_OUT], *plain[N_OUT];
    CU_ASSERT_EQUAL(run(g, true, feeds, fused), 6); /* r1, r3, r4, r5, r6, r7; r2's input is also an output */
    CU_ASSERT_EQUAL(run(g, false, feeds, plain), 0);
    for (int i = 0; i < N_OUT; i++) {
        size_t bytes = (size_t)tgc_tensor_numel(fused[i]) * sizeof(float);
        CU_ASSERT_EQUAL(tgc_tensor_numel(fused[i]), tgc_tensor_numel(plain[i]));
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(fused[i]), tgc_tensor_data(plain[i]), bytes), 0);
    }
    /* c2 (also an output) is before Relu: it has negatives; r2 is Relu of it */
    const float *c2 = tgc_tensor_data(fused[2]), *r2 = tgc_tensor_data(fused[1]);
    const float *r1 = tgc_tensor_data(fused[0]), *r3 = tgc_tensor_data(fused[3]), *r4 = tgc_tensor_data(fused[4]);
    int64_t negatives = 0, wrong = 0, below = 0;
    for (int64_t i = 0; i < tgc_tensor_numel(fused[2]); i++) {
        negatives += c2[i] < 0;
        wrong += r2[i] != (c2[i] < 0 ? 0.0f : c2[i]);
    }
    for (int64_t i = 0; i < tgc_tensor_numel(fused[0]); i++) below += r1[i] < 0;
    for (int64_t i = 0; i < tgc_tensor_numel(fused[3]); i++) below += r3[i] < 0;
    for (int64_t i = 0; i < tgc_tensor_numel(fused[4]); i++) below += r4[i] < 0;
    for (int k = 5; k < 8; k++) {
        const float *r = tgc_tensor_data(fused[k]);
        for (int64_t i = 0; i < tgc_tensor_numel(fused[k]); i++) below += r[i] < 0;
    }
    CU_ASSERT(negatives > 100);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(below, 0);
    release_runs(fused, plain, feeds, g, diags, text);
}

/* Every host allocation of creating a session over the graph and running
 * it (kernel caches, Winograd and im2col scratch, pool queues) fails in
 * turn: each time a clean status, and once everything is freed no block is
 * left; the runs that succeed give the fused results. */
static void test_every_host_allocation_fails_in_turn(void) {
    char *text = graph_text();
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, strlen(text), "fusion.yaml", NULL, diags, &g), TGC_OK);
    int64_t xd[4] = {1, 16, 12, 12}, x2d[4] = {1, 16, 30, 30}, vd[2] = {3, 20};
    tgc_tensor *feeds[3] = {random_tensor(4, xd, 7), random_tensor(4, x2d, 8), random_tensor(2, vd, 9)};
    tgc_tensor *want[N_OUT];
    run(g, true, feeds, want);
    const char *names[] = {"x", "x2", "v"};
    int64_t base = tgc_host_alloc_stats_get().live_blocks, failures = 0, left = 0, wrong = 0;
    for (int64_t n = 1; n < 100000; n++) {
        tgc_diags *d = tgc_diags_create();
        int64_t before = tgc_host_alloc_stats_get().num_allocs;
        tgc_host_alloc_fail_nth(n);
        tgc_session *s = NULL;
        tgc_tensor *outs[N_OUT] = {0};
        tgc_session_options o = {.optimize = TGC_OPTIMIZE_NONE};
        tgc_status st = tgc_session_create(g, "cpu", &o, d, &s);
        if (st == TGC_OK) st = tgc_session_run(s, 3, names, feeds, outs, d);
        tgc_host_alloc_fail_nth(0);
        bool failed = st != TGC_OK;
        failures += failed;
        for (int i = 0; !failed && i < N_OUT; i++)
            wrong += memcmp(tgc_tensor_data(outs[i]), tgc_tensor_data(want[i]),
                            (size_t)tgc_tensor_numel(want[i]) * sizeof(float)) != 0;
        for (int i = 0; i < N_OUT; i++) tgc_tensor_release(outs[i]);
        tgc_session_free(s);
        tgc_diags_free(d);
        left += tgc_host_alloc_stats_get().live_blocks != base;
        /* past the last allocation of a whole create + run: nothing failed */
        if (!failed && tgc_host_alloc_stats_get().num_allocs - before < n) break;
    }
    printf("\n  %lld allocations failed in turn, each cleanly\n", (long long)failures);
    CU_ASSERT(failures > 50);
    CU_ASSERT_EQUAL(left, 0);
    CU_ASSERT_EQUAL(wrong, 0);
    for (int i = 0; i < N_OUT; i++) tgc_tensor_release(want[i]);
    for (int i = 0; i < 3; i++) tgc_tensor_release(feeds[i]);
    tgc_graph_free(g);
    tgc_diags_free(diags);
    free(text);
}

/* The same with other activations, one after each kind of producer:
 * Clip(0, 6) (ReLU6: bounds from initializers) after an im2col Conv,
 * HardSwish after a Winograd Conv, Tanh after a pointwise Conv (64 input
 * channels: a GEMM), LeakyRelu (alpha 0.2) after a Gemm, Sigmoid after a
 * broadcasting Add, and after depthwise Convs (the direct path) Relu (rows,
 * 12 wide) and Sigmoid (stride 2: a channel a lane): each absorbed, the
 * values bitwise those of the nodes run one by one, and each activation's
 * range held (Clip in [0, 6], Sigmoid in (0, 1), Tanh in (-1, 1),
 * HardSwish >= -3/8, Relu >= 0). */
static void test_other_activations(void) {
    size_t size = 1 << 18, at = 0;
    char *buf = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    at += (size_t)snprintf(buf + at, size - at,
                           "format: tgc/1\n"
                           "inputs:\n"
                           "  - {name: x, dtype: float32, shape: [1, 64, 12, 12]}\n"
                           "  - {name: x2, dtype: float32, shape: [1, 16, 30, 30]}\n"
                           "  - {name: v, dtype: float32, shape: [3, 20]}\n"
                           "outputs: [a1, a2, a3, a4, a5, a6, a7]\n"
                           "initializers:\n"
                           "  - {name: lo, dtype: float32, shape: [], values: [0]}\n"
                           "  - {name: hi, dtype: float32, shape: [], values: [6]}\n");
    at = put_init(buf, at, size, "w0", "[16, 64, 3, 3]", 16 * 64 * 9, 11);
    at = put_init(buf, at, size, "w1", "[16, 16, 3, 3]", 16 * 16 * 9, 1);
    at = put_init(buf, at, size, "b1", "[16]", 16, 2);
    at = put_init(buf, at, size, "w2", "[16, 64, 1, 1]", 16 * 64, 3);
    at = put_init(buf, at, size, "wd", "[64, 1, 3, 3]", 64 * 9, 12);
    at = put_init(buf, at, size, "bd", "[64]", 64, 13);
    at = put_init(buf, at, size, "wg", "[20, 24]", 20 * 24, 5);
    at = put_init(buf, at, size, "b20", "[20]", 20, 10);
    at += (size_t)snprintf(buf + at, size - at,
                           "nodes:\n"
                           "  - {name: c1, op: Conv, inputs: [x, w0, b1], attrs: {pads: [1, 1, 1, 1]}}\n"
                           "  - {name: a1, op: Clip, inputs: [c1, lo, hi]}\n"
                           "  - {name: c3, op: Conv, inputs: [x2, w1, b1], attrs: {pads: [1, 1, 1, 1]}}\n"
                           "  - {name: a2, op: HardSwish, inputs: [c3]}\n"
                           "  - {name: c2, op: Conv, inputs: [x, w2]}\n"
                           "  - {name: a3, op: Tanh, inputs: [c2]}\n"
                           "  - {name: g1, op: Gemm, inputs: [v, wg]}\n"
                           "  - {name: a4, op: LeakyRelu, inputs: [g1], attrs: {alpha: 0.2}}\n"
                           "  - {name: s1, op: Add, inputs: [v, b20]}\n"
                           "  - {name: a5, op: Sigmoid, inputs: [s1]}\n"
                           "  - {name: d1, op: Conv, inputs: [x, wd, bd], attrs: {pads: [1, 1, 1, 1], group: 64}}\n"
                           "  - {name: a6, op: Relu, inputs: [d1]}\n"
                           "  - {name: d2, op: Conv, inputs: [x, wd, bd],\n"
                           "     attrs: {pads: [1, 1, 1, 1], strides: [2, 2], group: 64}}\n"
                           "  - {name: a7, op: Sigmoid, inputs: [d2]}\n");
    CU_ASSERT_FATAL(at < size);
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(buf, strlen(buf), "acts.yaml", NULL, diags, &g), TGC_OK);
    int64_t xd[4] = {1, 64, 12, 12}, x2d[4] = {1, 16, 30, 30}, vd[2] = {3, 20};
    tgc_tensor *feeds[3] = {random_tensor(4, xd, 17), random_tensor(4, x2d, 18), random_tensor(2, vd, 19)};
    tgc_tensor *fused[N_OUT] = {0}, *plain[N_OUT] = {0};
    CU_ASSERT_EQUAL(run(g, true, feeds, fused), 7);
    CU_ASSERT_EQUAL(run(g, false, feeds, plain), 0);
    const float lo[7] = {0, -0.375f, -1, -1e30f, 0, 0, 0}, hi[7] = {6, 1e30f, 1, 1e30f, 1, 1e30f, 1};
    for (int i = 0; i < 7; i++) {
        size_t bytes = (size_t)tgc_tensor_numel(fused[i]) * sizeof(float);
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(fused[i]), tgc_tensor_data(plain[i]), bytes), 0);
        const float *y = tgc_tensor_data(fused[i]);
        int64_t out = 0;
        for (int64_t k = 0; k < tgc_tensor_numel(fused[i]); k++) out += y[k] < lo[i] || y[k] > hi[i];
        CU_ASSERT_EQUAL(out, 0);
    }
    release_runs(fused, plain, feeds, g, diags, buf);
}

/* The direct convolution applies a fused Relu or Clip in registers as it
 * stores (tgc_conv_rows_job.clamp), every vector width included: a 1x1 on
 * 16 channels (the dense direct path) with Clip(0, 6), a depthwise 3x3
 * with Relu and one at stride 2 with Clip, 40 and 20 columns wide (a full
 * vector, then a part), over an input holding NaN, -0, +-inf and values at
 * the bounds: each absorbed and bitwise the unfused nodes' (NaN passes
 * both, as Clip's and Relu's rows say). */
static void test_clamp_in_registers(void) {
    size_t size = 1 << 16, at = 0;
    char *buf = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    at += (size_t)snprintf(buf + at, size - at,
                           "format: tgc/1\n"
                           "inputs:\n"
                           "  - {name: x, dtype: float32, shape: [1, 16, 9, 40]}\n"
                           "  - {name: x2, dtype: float32, shape: [1]}\n"
                           "  - {name: v, dtype: float32, shape: [1]}\n"
                           "outputs: [a1, a2, a3]\n"
                           "initializers:\n"
                           "  - {name: lo, dtype: float32, shape: [], values: [0]}\n"
                           "  - {name: hi, dtype: float32, shape: [], values: [6]}\n");
    at = put_init(buf, at, size, "wp", "[32, 16, 1, 1]", 32 * 16, 21);
    at = put_init(buf, at, size, "bp", "[32]", 32, 22);
    at = put_init(buf, at, size, "wd", "[16, 1, 3, 3]", 16 * 9, 23);
    at = put_init(buf, at, size, "bd", "[16]", 16, 24);
    at += (size_t)snprintf(buf + at, size - at,
                           "nodes:\n"
                           "  - {name: p1, op: Conv, inputs: [x, wp, bp]}\n"
                           "  - {name: a1, op: Clip, inputs: [p1, lo, hi]}\n"
                           "  - {name: d1, op: Conv, inputs: [x, wd, bd], attrs: {pads: [1, 1, 1, 1], group: 16}}\n"
                           "  - {name: a2, op: Relu, inputs: [d1]}\n"
                           "  - {name: d2, op: Conv, inputs: [x, wd, bd],\n"
                           "     attrs: {pads: [1, 1, 1, 1], strides: [2, 2], group: 16}}\n"
                           "  - {name: a3, op: Clip, inputs: [d2, lo, hi]}\n");
    CU_ASSERT_FATAL(at < size);
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(buf, strlen(buf), "clamp.yaml", NULL, diags, &g), TGC_OK);
    enum { NX = 16 * 9 * 40 };
    static float xs[NX];
    uint32_t seed = 31;
    const float special[] = {NAN, -0.0f, INFINITY, -INFINITY, 0.0f, 6.0f, 60.0f, -60.0f};
    for (int i = 0; i < NX; i++) xs[i] = i % 37 == 0 ? special[(i / 37) % 8] : 30.0f * lcg(&seed);
    int64_t xd[4] = {1, 16, 9, 40}, one[1] = {1};
    tgc_tensor *feeds[3] = {NULL, random_tensor(1, one, 1), random_tensor(1, one, 2)};
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 4, xd, xs, &feeds[0]), TGC_OK);
    tgc_tensor *fused[N_OUT] = {0}, *plain[N_OUT] = {0};
    CU_ASSERT_EQUAL(run(g, true, feeds, fused), 3);
    CU_ASSERT_EQUAL(run(g, false, feeds, plain), 0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(fused[i]);
        int64_t n = tgc_tensor_numel(fused[i]), nans = 0;
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(fused[i]), tgc_tensor_data(plain[i]), (size_t)n * sizeof(float)), 0);
        const float *y = tgc_tensor_data(fused[i]);
        for (int64_t k = 0; k < n; k++) nans += y[k] != y[k];
        CU_ASSERT(nans > 0); /* a NaN in a window passes through the clamp */
    }
    release_runs(fused, plain, feeds, g, diags, buf);
}

/* MatMul's three paths, each with an activation after it: the batch folded
 * into one GEMM (v [3, 20] x [20, 24], Gelu), small products several at a
 * piece ([4, 5, 20] x [4, 20, 6], Sigmoid), one GEMM per product
 * ([2, 70, 64] x [2, 64, 80], Tanh), and an empty sum ([3, 0] x [0, 4],
 * Sigmoid: 0.5 everywhere, by hand). Absorbed, and bitwise unfused. */
static void test_matmul_activations(void) {
    size_t size = 1 << 18, at = 0;
    char *buf = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    at += (size_t)snprintf(buf + at, size - at,
                           "format: tgc/1\n"
                           "inputs:\n"
                           "  - {name: x, dtype: float32, shape: [1, 16, 12, 12]}\n"
                           "  - {name: x2, dtype: float32, shape: [1, 16, 30, 30]}\n"
                           "  - {name: v, dtype: float32, shape: [3, 20]}\n"
                           "outputs: [a1, a2, a3, a4]\n"
                           "initializers:\n"
                           "  - {name: e0, dtype: float32, shape: [3, 0], values: []}\n"
                           "  - {name: e1, dtype: float32, shape: [0, 4], values: []}\n");
    at = put_init(buf, at, size, "wg", "[20, 24]", 20 * 24, 5);
    at = put_init(buf, at, size, "pa", "[4, 5, 20]", 4 * 5 * 20, 6);
    at = put_init(buf, at, size, "pb", "[4, 20, 6]", 4 * 20 * 6, 7);
    at = put_init(buf, at, size, "qa", "[2, 70, 64]", 2 * 70 * 64, 8);
    at = put_init(buf, at, size, "qb", "[2, 64, 80]", 2 * 64 * 80, 9);
    at += (size_t)snprintf(buf + at, size - at,
                           "nodes:\n"
                           "  - {name: m1, op: MatMul, inputs: [v, wg]}\n"
                           "  - {name: a1, op: Gelu, inputs: [m1]}\n"
                           "  - {name: m2, op: MatMul, inputs: [pa, pb]}\n"
                           "  - {name: a2, op: Sigmoid, inputs: [m2]}\n"
                           "  - {name: m3, op: MatMul, inputs: [qa, qb]}\n"
                           "  - {name: a3, op: Tanh, inputs: [m3]}\n"
                           "  - {name: m4, op: MatMul, inputs: [e0, e1]}\n"
                           "  - {name: a4, op: Sigmoid, inputs: [m4]}\n");
    CU_ASSERT_FATAL(at < size);
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status st = tgc_graph_load_string(buf, strlen(buf), "matmul_acts.yaml", NULL, diags, &g);
    if (st != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    int64_t xd[4] = {1, 16, 12, 12}, x2d[4] = {1, 16, 30, 30}, vd[2] = {3, 20};
    tgc_tensor *feeds[3] = {random_tensor(4, xd, 17), random_tensor(4, x2d, 18), random_tensor(2, vd, 19)};
    tgc_tensor *fused[N_OUT] = {0}, *plain[N_OUT] = {0};
    CU_ASSERT_EQUAL(run(g, true, feeds, fused), 4);
    CU_ASSERT_EQUAL(run(g, false, feeds, plain), 0);
    for (int i = 0; i < 4; i++) {
        size_t bytes = (size_t)tgc_tensor_numel(fused[i]) * sizeof(float);
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(fused[i]), tgc_tensor_data(plain[i]), bytes), 0);
    }
    const float *half = tgc_tensor_data(fused[3]);
    for (int k = 0; k < 12; k++) CU_ASSERT_EQUAL(half[k], 0.5f);
    release_runs(fused, plain, feeds, g, diags, buf);
}

TGC_TEST_MAIN("activation fusion", {"fused equals unfused", test_fused_equals_unfused},
              {"other activations", test_other_activations},
              {"MatMul's paths with activations", test_matmul_activations},
              {"Relu and Clip in the direct convolution's registers", test_clamp_in_registers},
              {"every host allocation fails in turn", test_every_host_allocation_fails_in_turn})
