/* nhwc-conv through ShuffleNet units (passes/nhwc_shape_ops.c): after a
 * lone 1x1 Conv (NCHW: it feeds no other channels-last Conv), two units as
 * torchvision's shufflenet_v2 exports them (Slice the channels in two, a 1x1 Conv, a depthwise 3x3 and a 1x1
 * Conv on one half, Concat, then the channel shuffle Reshape -> Transpose
 * [0, 2, 1, 3, 4] -> Reshape), the second with int32 Slice indices on
 * axis -3 with steps. Channels last from the first unit's Concat on:
 * three 4-D Transposes (the first unit's halves into NHWC, z's back),
 * each shuffle a Transpose of the last axis, the second unit's Slices and
 * both Concats channels last; the values bitwise those of the graph
 * unoptimized (a rewrite that only moves data), at 1 and 2 threads. Runs
 * only where the cpu has oneDNN; elsewhere it checks that nothing moved. */
#include "graph/graph.h"
#include "tests/harness.h"
#include "tests/passes/graph_queries.h"
#include "tgc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C = 16, H = C / 2, HW = 14 };

/* "[v0, v1, ...]": n deterministic values in about [-scale, scale] (malloc'd). */
static char *values(int seed, int n, float scale) {
    size_t size = (size_t)n * 20 + 8, at = 1;
    char *buf = malloc(size);
    buf[0] = '[';
    for (int k = 0; k < n; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%.9g", k ? ", " : "", sin(0.37 * k + 1.3 * seed) * scale);
    snprintf(buf + at, size - at, "]");
    return buf;
}

/* Appends unit u's nodes (input `in`, output "u<u>") to y at *at; int32
 * indices on axis -3 with steps when `i32`. */
static void unit_nodes(char *y, size_t size, size_t *at, int u, const char *in, bool i32) {
    const char *ix = i32 ? "i32" : "i64", *tail = i32 ? ", i32_ax, i32_st" : ", i64_ax";
    *at += (size_t)snprintf(
        y + *at, size - *at,
        "  - {name: u%d_a, op: Slice, inputs: [%s, %s_0, %s_h%s]}\n"
        "  - {name: u%d_b, op: Slice, inputs: [%s, %s_h, %s_c%s]}\n"
        "  - {name: u%d_p1, op: Conv, inputs: [u%d_b, w1_%d]}\n"
        "  - {name: u%d_r1, op: Relu, inputs: [u%d_p1]}\n"
        "  - {name: u%d_d, op: Conv, inputs: [u%d_r1, wd_%d], attrs: {group: %d, kernel_shape: [3, 3], "
        "pads: [1, 1, 1, 1]}}\n"
        "  - {name: u%d_p2, op: Conv, inputs: [u%d_d, w2_%d]}\n"
        "  - {name: u%d_r2, op: Relu, inputs: [u%d_p2]}\n"
        "  - {name: u%d_cat, op: Concat, inputs: [u%d_a, u%d_r2], attrs: {axis: 1}}\n"
        "  - {name: u%d_s5, op: Reshape, inputs: [u%d_cat, split_shape]}\n"
        "  - {name: u%d_sw, op: Transpose, inputs: [u%d_s5], attrs: {perm: [0, 2, 1, 3, 4]}}\n"
        "  - {name: u%d, op: Reshape, inputs: [u%d_sw, joined_shape]}\n",
        u, in, ix, ix, tail, u, in, ix, ix, tail, u, u, u, u, u, u, u, u, H, u, u, u, u, u, u, u, u, u, u, u, u, u, u);
}

/* The graph: c0 (1x1, C -> C) and its Relu, two units, z = the second's output. */
static char *shuffle_yaml(void) {
    size_t size = 1 << 16, at = 0;
    char *y = malloc(size);
    char *w0 = values(1, C * C, 0.3f);
    at += (size_t)snprintf(y + at, size - at,
                           "format: tgc/1\n"
                           "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
                           "outputs: [z]\n"
                           "initializers:\n"
                           "  - {name: w0, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
                           "  - {name: i64_0, dtype: int64, shape: [1], values: [0]}\n"
                           "  - {name: i64_h, dtype: int64, shape: [1], values: [%d]}\n"
                           "  - {name: i64_c, dtype: int64, shape: [1], values: [%d]}\n"
                           "  - {name: i64_ax, dtype: int64, shape: [1], values: [1]}\n"
                           "  - {name: i32_0, dtype: int32, shape: [1], values: [0]}\n"
                           "  - {name: i32_h, dtype: int32, shape: [1], values: [%d]}\n"
                           "  - {name: i32_c, dtype: int32, shape: [1], values: [%d]}\n"
                           "  - {name: i32_ax, dtype: int32, shape: [1], values: [-3]}\n"
                           "  - {name: i32_st, dtype: int32, shape: [1], values: [1]}\n"
                           "  - {name: split_shape, dtype: int64, shape: [5], values: [1, 2, %d, %d, %d]}\n"
                           "  - {name: joined_shape, dtype: int64, shape: [4], values: [1, %d, %d, %d]}\n",
                           C, HW, HW, C, C, w0, H, C, H, C, H, HW, HW, C, HW, HW);
    free(w0);
    for (int u = 0; u < 2; u++) {
        char *w1 = values(10 + u, H * H, 0.4f), *wd = values(20 + u, H * 9, 0.3f), *w2 = values(30 + u, H * H, 0.4f);
        at += (size_t)snprintf(y + at, size - at,
                               "  - {name: w1_%d, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
                               "  - {name: wd_%d, dtype: float32, shape: [%d, 1, 3, 3], values: %s}\n"
                               "  - {name: w2_%d, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n",
                               u, H, H, w1, u, H, wd, u, H, H, w2);
        free(w1), free(wd), free(w2);
    }
    at += (size_t)snprintf(y + at, size - at,
                           "nodes:\n"
                           "  - {name: c0, op: Conv, inputs: [x, w0]}\n"
                           "  - {name: r0, op: Relu, inputs: [c0]}\n");
    unit_nodes(y, size, &at, 0, "r0", false);
    unit_nodes(y, size, &at, 1, "u0", true);
    snprintf(y + at, size - at, "  - {name: z, op: Relu, inputs: [u1]}\n");
    return y;
}

/* The Transposes of g whose perm has `rank` entries. */
static int count_transposes(const tgc_graph *g, size_t rank) {
    int n = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *nd = &g->nodes[id];
        if (nd->kind != TGC_NODE_OP || strcmp(nd->op_name, "Transpose") != 0) continue;
        const tgc_attr *a = tgc_node_attr(nd, "perm");
        n += a != NULL && a->n == rank;
    }
    return n;
}

static void test_units_channels_last(void) {
    char *yaml = shuffle_yaml();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "shuffle.yaml", d), *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    bool here = count_op(opt, "_ConvNHWC") > 0;
    if (here) {
        CU_ASSERT_EQUAL(count_op(opt, "_ConvNHWC"), 6);
        CU_ASSERT_EQUAL(count_op(opt, "Conv"), 1);
        CU_ASSERT_EQUAL(count_transposes(opt, 4), 3); /* the first unit's halves into NHWC, and z's back */
        CU_ASSERT_EQUAL(count_transposes(opt, 5), 2); /* each shuffle, of the last axis */
        int slices_on[4] = {0, 0, 0, 0};
        for (int32_t id = 0; id < opt->n_nodes; id++) {
            const tgc_node *nd = &opt->nodes[id];
            if (nd->kind != TGC_NODE_OP) continue;
            if (strcmp(nd->op_name, "Concat") == 0) CU_ASSERT_EQUAL(tgc_node_attr(nd, "axis")->i, 3);
            if (strcmp(nd->op_name, "Slice") != 0) continue;
            const tgc_node *axes = &opt->nodes[nd->inputs[3].node];
            CU_ASSERT_EQUAL_FATAL(axes->kind, TGC_NODE_CONST);
            const tgc_const *c = axes->data;
            int64_t a = c->dtype == TGC_INT64 ? ((int64_t *)c->data)[0] : ((int32_t *)c->data)[0];
            if (a >= 0 && a < 4) slices_on[a]++;
        }
        CU_ASSERT_EQUAL(slices_on[1], 2); /* the first unit's, of c0's NCHW output */
        CU_ASSERT_EQUAL(slices_on[3], 2); /* the second unit's, channels last */
    } else {
        CU_ASSERT_EQUAL(count_transposes(opt, 4), 0);
    }
    float x[C * HW * HW];
    for (int i = 0; i < C * HW * HW; i++) x[i] = (float)sin(0.11 * i + 0.5);
    const int64_t dims[4] = {1, C, HW, HW};
    tgc_tensor *want = run_x(g, 4, dims, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    const char *threads[2] = {"cpu=1", "cpu=2"};
    for (int t = 0; t < 2; t++) {
        tgc_session_options o = {.threads = threads[t], .optimize = TGC_OPTIMIZE_ALL};
        tgc_tensor *got = run_fed(g, &o, TGC_FLOAT32, 4, dims, x);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(got), C * HW * HW);
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(got), tgc_tensor_data(want), sizeof x), 0);
        tgc_tensor_release(got);
    }
    tgc_tensor_release(want);
    tgc_graph_free(opt), tgc_graph_free(g), tgc_diags_free(d), free(yaml);
}

TGC_TEST_MAIN("nhwc-conv through ShuffleNet units", {"two units channels last", test_units_channels_last})
