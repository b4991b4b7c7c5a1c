/* compute-in-float32 (passes/compute_in_float32.c): float16 and bfloat16
 * graphs whose ops the cpu has no narrow kernel for run in float32 between
 * Casts, at every optimization level. Checked on the rewritten graph (which
 * Casts there are, names kept) and on values worked out by hand in the
 * comments, all exactly representable in the narrow type. */
#include "graph/graph.h"
#include "tests/passes/graph_queries.h"
#include "support/half.h"
#include "tests/harness.h"
#include "tgc.h"

#include <stdio.h>
#include <string.h>

/* The narrow bits of v (float16 or bfloat16; v exactly representable). */
static uint16_t narrow_bits(tgc_dtype t, float v) {
    return t == TGC_FLOAT16 ? tgc_float_to_half(v) : tgc_float_to_bf16(v);
}

static float widen(tgc_dtype t, uint16_t h) { return t == TGC_FLOAT16 ? tgc_half_to_float(h) : tgc_bf16_to_float(h); }

/* Runs g on the cpu at `level`, feeding `x` (dtype t, dims) to input "x"
 * and, when x2 is not NULL, the same shape to "x2"; stores up to 2 outputs. */
static void run(const tgc_graph *g, tgc_optimize_level level, tgc_dtype t, int rank, const int64_t *dims,
                const float *x, const float *x2, tgc_tensor **outs) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    uint16_t bits[2][16];
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    CU_ASSERT_FATAL(n <= 16);
    for (int64_t i = 0; i < n; i++) {
        bits[0][i] = narrow_bits(t, x[i]);
        if (x2 != NULL) bits[1][i] = narrow_bits(t, x2[i]);
    }
    tgc_tensor *feeds[2] = {NULL, NULL};
    const char *names[2] = {"x", "x2"};
    int n_feeds = x2 != NULL ? 2 : 1;
    tgc_session_options o = {.optimize = level, .threads = "cpu0=1"};
    tgc_status st = tgc_session_create(g, "cpu", &o, d, &s);
    for (int k = 0; st == TGC_OK && k < n_feeds; k++) st = tgc_tensor_create(t, rank, dims, bits[k], &feeds[k]);
    if (st == TGC_OK) st = tgc_session_run(s, n_feeds, names, feeds, outs, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    for (int k = 0; k < n_feeds; k++) tgc_tensor_release(feeds[k]);
    tgc_session_free(s);
    tgc_diags_free(d);
}

static void expect_narrow(const tgc_tensor *y, tgc_dtype t, const float *want, int n) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(tgc_tensor_dtype(y), t);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(y), n);
    const uint16_t *got = tgc_tensor_data(y);
    for (int i = 0; i < n; i++) {
        if (widen(t, got[i]) != want[i]) fprintf(stderr, "\n  element %d: %g, want %g", i, widen(t, got[i]), want[i]);
        CU_ASSERT_EQUAL(widen(t, got[i]), want[i]);
    }
}

/* MatMul -> Add -> Relu in float16: MatMul has no float16 kernel on the
 * cpu, so it runs in float32; Add and Relu, between it and the output,
 * join it. Two Casts in all (the input in, the output back), the last
 * taking the output's name. x = [[1, 0.5], [-1, 2]], W = [[1, 2], [3, 4]]:
 * x W = [[2.5, 4], [5, 6]]; + b [-10, 0.5] = [[-7.5, 4.5], [-5, 6.5]];
 * Relu: [[0, 4.5], [0, 6.5]]. */
static void test_chain_in_float32(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float16, shape: [2, 2]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float16, shape: [2, 2], values: [1, 2, 3, 4]}\n"
                       "  - {name: b, dtype: float16, shape: [2], values: [-10, 0.5]}\n"
                       "nodes:\n"
                       "  - {name: m, op: MatMul, inputs: [x, W]}\n"
                       "  - {name: a, op: Add, inputs: [m, b]}\n"
                       "  - {name: y, op: Relu, inputs: [a]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f16.yaml", d);
    tgc_optimize_level levels[] = {TGC_OPTIMIZE_NONE, TGC_OPTIMIZE_ALL};
    for (int l = 0; l < 2; l++) {
        tgc_graph *opt = optimized_graph(g, levels[l], "cpu", d);
        /* At NONE the weights are cast each step; above, fold-constants folds those Casts. */
        CU_ASSERT_EQUAL(count_op(opt, "Cast"), levels[l] == TGC_OPTIMIZE_NONE ? 4 : 2);
        const tgc_node *y = node_named(opt, "y");
        CU_ASSERT_PTR_NOT_NULL_FATAL(y);
        CU_ASSERT_STRING_EQUAL(y->op_name, "Cast");
        CU_ASSERT_EQUAL(y->outputs[0].dtype, TGC_FLOAT16);
        CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, y->inputs[0])->dtype, TGC_FLOAT32);
        const tgc_node *m = node_named(opt, "m");
        if (levels[l] == TGC_OPTIMIZE_NONE) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(m); /* the float32 copy keeps the node's name */
            CU_ASSERT_STRING_EQUAL(m->op_name, "MatMul");
            CU_ASSERT_EQUAL(m->outputs[0].dtype, TGC_FLOAT32);
        }
        tgc_graph_free(opt);
        tgc_tensor *out[1] = {NULL};
        run(g, levels[l], TGC_FLOAT16, 2, (int64_t[]){2, 2}, (float[]){1, 0.5f, -1, 2}, NULL, out);
        expect_narrow(out[0], TGC_FLOAT16, (float[]){0, 4.5f, 0, 6.5f}, 4);
        tgc_tensor_release(out[0]);
    }
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* The products are summed in float32 and rounded once: x = [2048, 1, 1]
 * times a column of ones is 2050 (a float16 value: its spacing at 2048 is
 * 2), where a float16 running sum would give 2048 (2048 + 1 rounds to
 * 2048, nearest even, twice). numpy: np.float16(np.float32([2048, 1, 1]).sum()). */
static void test_products_summed_in_float32(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float16, shape: [1, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float16, shape: [3, 1], values: [1, 1, 1]}\n"
                       "nodes:\n"
                       "  - {name: y, op: MatMul, inputs: [x, W]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f16.yaml", d);
    tgc_tensor *out[1] = {NULL};
    run(g, TGC_OPTIMIZE_DEFAULT, TGC_FLOAT16, 2, (int64_t[]){1, 3}, (float[]){2048, 1, 1}, NULL, out);
    expect_narrow(out[0], TGC_FLOAT16, (float[]){2050}, 1);
    tgc_tensor_release(out[0]);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* bfloat16 MaxPool (no bfloat16 kernel on the cpu) with its Indices: Y goes
 * back to bfloat16, the int64 Indices are read as they are. x = 1..9 as
 * [1, 1, 3, 3], 2x2 windows, stride 1: Y = [5, 6, 8, 9] at flat indices
 * [4, 5, 7, 8]. */
static void test_bfloat16_with_an_index_output(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: bfloat16, shape: [1, 1, 3, 3]}]\n"
                       "outputs: [p, 'p:1']\n"
                       "nodes:\n"
                       "  - {name: p, op: MaxPool, inputs: [x], attrs: {kernel_shape: [2, 2]}}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f16.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_NONE, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "Cast"), 2);
    CU_ASSERT_EQUAL(count_op(opt, "MaxPool"), 1);
    tgc_graph_free(opt);
    tgc_tensor *out[2] = {NULL, NULL};
    run(g, TGC_OPTIMIZE_NONE, TGC_BFLOAT16, 4, (int64_t[]){1, 1, 3, 3}, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, NULL,
        out);
    expect_narrow(out[0], TGC_BFLOAT16, (float[]){5, 6, 8, 9}, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[1]);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_dtype(out[1]), TGC_INT64);
    const int64_t *idx = tgc_tensor_data(out[1]);
    CU_ASSERT(idx[0] == 4 && idx[1] == 5 && idx[2] == 7 && idx[3] == 8);
    tgc_tensor_release(out[0]);
    tgc_tensor_release(out[1]);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Nodes with float16 kernels stay float16 unless float32 nodes surround
 * them: Relu of the graph input stays; the Add of the MatMul's result and
 * a second input reads the MatMul through a Cast back, shared with the
 * graph output m. x = [[-1, 2], [3, -4]]: Relu = [[0, 2], [3, 0]];
 * times W = [[1, 0], [0.5, 1]]: m = [[1, 2], [3, 0]]; + x2 = [[1, 1], [1, 1]]:
 * s = [[2, 3], [4, 1]]. */
static void test_native_nodes_stay_narrow(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs:\n"
                       "  - {name: x, dtype: float16, shape: [2, 2]}\n"
                       "  - {name: x2, dtype: float16, shape: [2, 2]}\n"
                       "outputs: [m, s]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float16, shape: [2, 2], values: [1, 0, 0.5, 1]}\n"
                       "nodes:\n"
                       "  - {name: r, op: Relu, inputs: [x]}\n"
                       "  - {name: m, op: MatMul, inputs: [r, W]}\n"
                       "  - {name: s, op: Add, inputs: [m, x2]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f16.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "Cast"), 2); /* r in, m back */
    const tgc_node *r = node_named(opt, "r"), *s = node_named(opt, "s"), *m = node_named(opt, "m");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(r->outputs[0].dtype, TGC_FLOAT16);
    CU_ASSERT_STRING_EQUAL(s->op_name, "Add");
    CU_ASSERT_EQUAL(s->outputs[0].dtype, TGC_FLOAT16);
    CU_ASSERT_STRING_EQUAL(m->op_name, "Cast");
    tgc_graph_free(opt);
    tgc_tensor *out[2] = {NULL, NULL};
    run(g, TGC_OPTIMIZE_ALL, TGC_FLOAT16, 2, (int64_t[]){2, 2}, (float[]){-1, 2, 3, -4}, (float[]){1, 1, 1, 1}, out);
    expect_narrow(out[0], TGC_FLOAT16, (float[]){1, 2, 3, 0}, 4);
    expect_narrow(out[1], TGC_FLOAT16, (float[]){2, 3, 4, 1}, 4);
    tgc_tensor_release(out[0]);
    tgc_tensor_release(out[1]);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A float32 graph is left as it is: the pass runs at NONE and rewrites nothing. */
static void test_float32_untouched(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [2, 2]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float32, shape: [2, 2], values: [1, 2, 3, 4]}\n"
                       "nodes:\n"
                       "  - {name: y, op: MatMul, inputs: [x, W]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f16.yaml", d);
    tgc_optimize_report rep;
    tgc_graph *opt = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_NONE, "cpu", &rep, d, &opt), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(rep.n_passes, 1);
    CU_ASSERT_STRING_EQUAL(rep.passes[0].name, "compute-in-float32");
    CU_ASSERT_EQUAL(rep.passes[0].rewrites, 0);
    CU_ASSERT_EQUAL(count_op(opt, "Cast"), 0);
    tgc_graph_free(opt);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* The graph's own Cast of a float16 value to float32 gives a float16 value:
 * MatMul computed in float32 makes x . ones = 2048 + 1 + 0.5 = 2049.5,
 * which float16 cannot hold (its spacing at 2048 is 2: 2050, the nearer),
 * so the Cast reads 2050, narrowed before it, and is not computed away.
 * numpy: np.float32(np.float16(2049.5)) == 2050. */
static void test_graph_cast_narrows(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float16, shape: [1, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers: [{name: ones, dtype: float16, shape: [3, 1], values: [1, 1, 1]}]\n"
                       "nodes:\n"
                       "  - {name: m, op: MatMul, inputs: [x, ones]}\n"
                       "  - {name: y, op: Cast, inputs: [m], attrs: {to: 1}}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f16.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_ALL, "cpu", d);
    const tgc_node *y = node_named(opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->op_name, "Cast");
    CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, y->inputs[0])->dtype, TGC_FLOAT16); /* narrowed first */
    tgc_graph_free(opt);
    tgc_tensor *out[1] = {NULL};
    run(g, TGC_OPTIMIZE_ALL, TGC_FLOAT16, 2, (int64_t[]){1, 3}, (float[]){2048, 1, 0.5f}, NULL, out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[0]);
    CU_ASSERT_EQUAL(tgc_tensor_dtype(out[0]), TGC_FLOAT32);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(out[0]))[0], 2050.0f);
    tgc_tensor_release(out[0]);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("compute in float32", {"a chain in float32", test_chain_in_float32},
              {"the graph's Cast narrows", test_graph_cast_narrows},
              {"products summed in float32", test_products_summed_in_float32},
              {"bfloat16 with an index output", test_bfloat16_with_an_index_output},
              {"native nodes stay narrow", test_native_nodes_stay_narrow},
              {"float32 untouched", test_float32_untouched})
