/* fuse-conv-add on convolutions that stay NCHW (passes/fuse_conv_add.c):
 * a ResNet basic block on a map too large for channels last, whose second
 * 3x3 convolution takes the skip's Add as _ConvAdd (and the Relu after it
 * as its activation), and a 1x1 whose Add reads the convolution's own
 * input. The pass fuses only where every listed device kind has the
 * kernel, and not where the Add broadcasts or the convolution's output
 * has another reader. The output is checked against the block computed
 * here in double, and against the unoptimized graph's bits. */
#include "tests/passes/graph_queries.h"

#include <math.h>
#include <stdlib.h>

enum { C = 64, HW = 40, N = HW * HW };

static float weight(int seed, int k) { return (float)sin(0.37 * k + 1.3 * seed) * 0.05f; }

/* "[w0, w1, ...]" for n weights of `seed`, in a new string. */
static char *weights(int seed, int n) {
    char *s = malloc((size_t)n * 24 + 4), *at = s;
    at += sprintf(at, "[");
    for (int k = 0; k < n; k++) at += sprintf(at, "%s%.9g", k ? ", " : "", (double)weight(seed, k));
    sprintf(at, "]");
    return s;
}

/* The block: y = Relu(Conv3x3(Relu(Conv3x3(x) + b1), w2) + b2 + x), then
 * q = y + Conv1x1(y, w3) (no bias), over x [1, C, HW, HW]. `tail` the
 * nodes after y's Relu (q's, or others). */
static char *block_yaml(const char *tail) {
    char *w1 = weights(1, C * C * 9), *w2 = weights(2, C * C * 9), *w3 = weights(3, C * C), *b = weights(4, C);
    size_t size = strlen(w1) + strlen(w2) + strlen(w3) + strlen(b) * 2 + strlen(tail) + 4096;
    char *yaml = malloc(size);
    snprintf(yaml, size,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [1, %d, %d, %d]}]\n"
             "outputs: [q]\n"
             "initializers:\n"
             "  - {name: w1, dtype: float32, shape: [%d, %d, 3, 3], values: %s}\n"
             "  - {name: w2, dtype: float32, shape: [%d, %d, 3, 3], values: %s}\n"
             "  - {name: w3, dtype: float32, shape: [%d, %d, 1, 1], values: %s}\n"
             "  - {name: b1, dtype: float32, shape: [%d], values: %s}\n"
             "  - {name: b2, dtype: float32, shape: [%d], values: %s}\n"
             "nodes:\n"
             "  - {name: c1, op: Conv, inputs: [x, w1, b1], attrs: {pads: [1, 1, 1, 1]}}\n"
             "  - {name: r1, op: Relu, inputs: [c1]}\n"
             "  - {name: c2, op: Conv, inputs: [r1, w2, b2], attrs: {pads: [1, 1, 1, 1]}}\n"
             "  - {name: a, op: Add, inputs: [c2, x]}\n"
             "  - {name: y, op: Relu, inputs: [a]}\n"
             "%s",
             C, HW, HW, C, C, w1, C, C, w2, C, C, w3, C, b, C, b, tail);
    free(w1), free(w2), free(w3), free(b);
    return yaml;
}

static const char *const TAIL_Q = "  - {name: c3, op: Conv, inputs: [y, w3]}\n"
                                  "  - {name: q, op: Add, inputs: [y, c3]}\n";

/* x [C, HW, HW] through the block in double: q [C, HW, HW]. */
static void block_ref(const float *x, double *q) {
    double *r1 = malloc(sizeof(double) * C * N), *y = malloc(sizeof(double) * C * N);
    for (int pass = 0; pass < 2; pass++) { /* c1 over x into r1, then c2 over r1 into y */
        const int seed = pass + 1;
        double *out = pass == 0 ? r1 : y;
        for (int m = 0; m < C; m++)
            for (int i = 0; i < HW; i++)
                for (int j = 0; j < HW; j++) {
                    double acc = weight(4, m);
                    for (int c = 0; c < C; c++)
                        for (int u = 0; u < 3; u++)
                            for (int v = 0; v < 3; v++) {
                                int r = i + u - 1, s = j + v - 1;
                                if (r < 0 || r >= HW || s < 0 || s >= HW) continue;
                                double in = pass == 0 ? x[(c * HW + r) * HW + s] : r1[(c * HW + r) * HW + s];
                                acc += (double)weight(seed, ((m * C + c) * 3 + u) * 3 + v) * in;
                            }
                    if (pass == 1) acc += x[(m * HW + i) * HW + j];
                    out[(m * HW + i) * HW + j] = acc > 0.0 ? acc : 0.0;
                }
    }
    for (int m = 0; m < C; m++)
        for (int p = 0; p < N; p++) {
            double acc = y[m * N + p];
            for (int c = 0; c < C; c++) acc += (double)weight(3, m * C + c) * y[c * N + p];
            q[m * N + p] = acc;
        }
    free(r1), free(y);
}

static tgc_tensor *run_block(const tgc_graph *g, tgc_optimize_level level, const char *threads, const float *x) {
    tgc_session_options o = {.threads = threads, .optimize = level};
    return run_fed(g, &o, TGC_FLOAT32, 4, (int64_t[]){1, C, HW, HW}, x);
}

static void test_basic_block(void) {
    char *yaml = block_yaml(TAIL_Q);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "block.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvAdd"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "Add"), 0);
    CU_ASSERT_EQUAL(count_op(opt, "Conv"), 1);
    const tgc_node *a = node_named(opt, "a"), *q = node_named(opt, "q");
    CU_ASSERT(a != NULL && strcmp(a->op_name, "_ConvAdd") == 0 && a->n_inputs == 4);
    CU_ASSERT(q != NULL && strcmp(q->op_name, "_ConvAdd") == 0 && q->n_inputs == 4 && q->inputs[2].node < 0);
    tgc_graph_free(opt);
    opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu,gpu0", d); /* the gpu has no _ConvAdd */
    CU_ASSERT_EQUAL(count_op(opt, "_ConvAdd"), 0);
    CU_ASSERT_EQUAL(count_op(opt, "Conv"), 3);
    tgc_graph_free(opt);

    float *x = malloc(sizeof(float) * C * N);
    double *want = malloc(sizeof(double) * C * N);
    for (int k = 0; k < C * N; k++) x[k] = (float)cos(0.11 * k) * (1.0f + 0.1f * (float)(k % 5));
    block_ref(x, want);
    tgc_tensor *fused = run_block(g, TGC_OPTIMIZE_ALL, "cpu=1", x), *two = run_block(g, TGC_OPTIMIZE_ALL, "cpu=2", x);
    tgc_tensor *plain = run_block(g, TGC_OPTIMIZE_NONE, "cpu=1", x);
    CU_ASSERT_FATAL(fused != NULL && two != NULL && plain != NULL);
    const float *y = tgc_tensor_data(fused);
    double worst = 0.0, top = 0.0;
    for (int k = 0; k < C * N; k++) {
        double e = fabs(y[k] - want[k]);
        if (!(e <= worst)) worst = e;
        if (fabs(want[k]) > top) top = fabs(want[k]);
    }
    CU_ASSERT(worst <= 1e-5 * top);
    if (!(worst <= 1e-5 * top)) printf("\n  largest error %.3g of %.3g", worst, top);
    size_t bytes = sizeof(float) * C * N;
    CU_ASSERT_EQUAL(memcmp(y, tgc_tensor_data(plain), bytes), 0); /* Conv's then Add's roundings */
    CU_ASSERT_EQUAL(memcmp(y, tgc_tensor_data(two), bytes), 0);
    tgc_tensor_release(fused), tgc_tensor_release(two), tgc_tensor_release(plain);
    free(x), free(want);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

/* Adds the pass leaves: one that broadcasts (Z [1, C, 1, 1]), and one
 * whose convolution's output has a second reader. */
static void test_left_alone(void) {
    char *yaml = block_yaml("  - {name: m, op: ReduceMean, inputs: [y], attrs: {axes: [2, 3], keepdims: 1}}\n"
                            "  - {name: c3, op: Conv, inputs: [y, w3]}\n"
                            "  - {name: s, op: Add, inputs: [c3, m]}\n"
                            "  - {name: c4, op: Conv, inputs: [s, w3]}\n"
                            "  - {name: t, op: Add, inputs: [c4, s]}\n"
                            "  - {name: q, op: Mul, inputs: [t, c4]}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "left.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_ConvAdd"), 1); /* the block's own */
    const tgc_node *s = node_named(opt, "s"), *t = node_named(opt, "t");
    CU_ASSERT(s == NULL || strcmp(s->op_name, "_ConvAdd") != 0);
    CU_ASSERT(t == NULL || strcmp(t->op_name, "_ConvAdd") != 0);
    tgc_graph_free(opt);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(yaml);
}

TGC_TEST_MAIN("fuse-conv-add on NCHW convolutions", {"a basic block and a 1x1 over its own input", test_basic_block},
              {"broadcasts and shared outputs left alone", test_left_alone})
