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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
        /* At NONE b is cast each step; above, fold-constants folds that Cast. W is read as it is. */
        CU_ASSERT_EQUAL(count_op(opt, "Cast"), levels[l] == TGC_OPTIMIZE_NONE ? 3 : 2);
        const tgc_node *y = node_named(opt, "y");
        CU_ASSERT_PTR_NOT_NULL_FATAL(y);
        CU_ASSERT_STRING_EQUAL(y->op_name, "Cast");
        CU_ASSERT_EQUAL(y->outputs[0].dtype, TGC_FLOAT16);
        CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, y->inputs[0])->dtype, TGC_FLOAT32);
        const tgc_node *m = node_named(opt, "m");
        if (levels[l] == TGC_OPTIMIZE_NONE) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(m); /* the float32 copy keeps the node's name */
            CU_ASSERT_STRING_EQUAL(m->op_name, "_MatMulHalfWeight");
            CU_ASSERT_EQUAL(m->outputs[0].dtype, TGC_FLOAT32);
            CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, m->inputs[1])->dtype, TGC_FLOAT16);
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

/* Runs g on the cpu (threads: the option, NULL: the default) once with
 * `data` (dtype t, dims) fed as input `name`; returns output 0 and leaves
 * the session in *s (the caller releases and frees both). */
static tgc_tensor *run_feed(const tgc_graph *g, const char *threads, const char *name, tgc_dtype t, int rank,
                            const int64_t *dims, const void *data, tgc_session **s) {
    tgc_diags *d = tgc_diags_create();
    tgc_tensor *x = NULL, *y = NULL;
    tgc_session_options o = {.threads = threads};
    *s = NULL;
    tgc_status st = tgc_session_create(g, "cpu", &o, d, s);
    if (st == TGC_OK) st = tgc_tensor_create(t, rank, dims, data, &x);
    if (st == TGC_OK) st = tgc_session_run(*s, 1, &name, &x, &y, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    tgc_tensor_release(x);
    tgc_diags_free(d);
    return y;
}

/* A YAML model y = x W with x [m, k] and W [k, n] of dtype `dt`, W's
 * values W[i] = ((37 i) % 29 - 14) / 8, into buf (size cap). */
static void matmul_model(char *buf, size_t cap, const char *dt, int m, int k, int n) {
    size_t len = (size_t)snprintf(buf, cap,
                                  "format: tgc/1\n"
                                  "inputs: [{name: x, dtype: %s, shape: [%d, %d]}]\n"
                                  "outputs: [y]\n"
                                  "initializers:\n"
                                  "  - {name: W, dtype: %s, shape: [%d, %d], values: [",
                                  dt, m, k, dt, k, n);
    for (int i = 0; i < k * n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%g", i > 0 ? ", " : "", (double)((37 * i) % 29 - 14) / 8.0);
    if (len < cap) snprintf(buf + len, cap - len, "]}\nnodes:\n  - {name: y, op: MatMul, inputs: [x, W]}\n");
    CU_ASSERT_FATAL(len < cap);
}

/* A MatMul by a float16 or bfloat16 weight keeps the weight in half
 * precision: compute-in-float32 makes it _MatMulHalfWeight reading W as it
 * is (no Cast of W, none folded), and the session holds W's two bytes an
 * element, not a float32 copy. One row (read in place: 150 columns, two
 * 64-column blocks of 16-lane vectors and a tail of 22) and three rows of
 * 400 columns (W widened once, packed). x[r, c] = ((13 (r k + c)) % 17 - 8)
 * / 4: every product a multiple of 1/32 and every sum below 2^10, so the
 * float32 sums are exact and equal a double loop's; the output is that
 * sum rounded once to the narrow type. */
static void test_half_weight_stays_half(void) {
    const tgc_dtype types[] = {TGC_FLOAT16, TGC_BFLOAT16};
    const int shapes[][3] = {{1, 64, 150}, {3, 64, 400}};
    enum { CAP = 200000 };
    char *yaml = malloc(CAP);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
    for (int t = 0; t < 2; t++)
        for (int sh = 0; sh < 2; sh++) {
            int m = shapes[sh][0], k = shapes[sh][1], n = shapes[sh][2];
            matmul_model(yaml, CAP, tgc_dtype_name(types[t]), m, k, n);
            tgc_diags *d = tgc_diags_create();
            tgc_graph *g = loaded_graph(yaml, "half_weight.yaml", d);
            tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_DEFAULT, "cpu", d);
            const tgc_node *mm = node_named(opt, "y");
            CU_ASSERT_EQUAL(count_op(opt, "_MatMulHalfWeight"), 1);
            CU_ASSERT_EQUAL(count_op(opt, "Cast"), 2); /* x in, y out */
            CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
            for (int32_t id = 0; id < opt->n_nodes; id++)
                if (opt->nodes[id].kind == TGC_NODE_OP && strcmp(opt->nodes[id].op_name, "_MatMulHalfWeight") == 0)
                    CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, opt->nodes[id].inputs[1])->dtype, types[t]);
            tgc_graph_free(opt);

            uint16_t *xb = malloc((size_t)(m * k) * sizeof *xb);
            CU_ASSERT_PTR_NOT_NULL_FATAL(xb);
            for (int i = 0; i < m * k; i++) xb[i] = narrow_bits(types[t], (float)((13 * i) % 17 - 8) / 4.0f);
            tgc_session *s;
            tgc_tensor *y = run_feed(g, "cpu0=2", "x", types[t], 2, (int64_t[]){m, k}, xb, &s);
            CU_ASSERT_PTR_NOT_NULL_FATAL(y);
            const uint16_t *got = tgc_tensor_data(y);
            int bad = 0;
            for (int r = 0; r < m; r++)
                for (int j = 0; j < n; j++) {
                    double sum = 0.0;
                    for (int c = 0; c < k; c++)
                        sum += (double)widen(types[t], xb[r * k + c]) * ((double)((37 * (c * n + j)) % 29 - 14) / 8.0);
                    bad += got[r * n + j] != narrow_bits(types[t], (float)sum);
                }
            CU_ASSERT_EQUAL(bad, 0);
            if (sh == 0) { /* after a run the device holds W at two bytes an element, not four */
                int64_t held = tgc_session_memory(s, 0).bytes_in_use;
                CU_ASSERT(held >= (int64_t)k * n * 2 && held < (int64_t)k * n * 4);
            }
            tgc_tensor_release(y);
            tgc_session_free(s);
            free(xb);
            tgc_graph_free(g);
            tgc_diags_free(d);
        }
    free(yaml);
}

/* A linear layer as exporters write it, Gemm(x, W, c) with transB 1, in
 * float16: _MatMulHalfWeight over W transposed once at the narrow type
 * (folded: no Transpose is left) and an Add of c, W two bytes an element.
 * x [1, 32] = ((13 c) % 17 - 8) / 4, W [24, 32] = ((37 i) % 29 - 14) / 8,
 * c [24] = (j % 5) - 2: exact sums, rounded once to float16. */
static void test_gemm_weight_stays_half(void) {
    char yaml[16384];
    size_t len = (size_t)snprintf(yaml, sizeof yaml,
                                  "format: tgc/1\n"
                                  "inputs: [{name: x, dtype: float16, shape: [1, 32]}]\n"
                                  "outputs: [y]\n"
                                  "initializers:\n"
                                  "  - {name: W, dtype: float16, shape: [24, 32], values: [");
    for (int i = 0; i < 24 * 32; i++)
        len += (size_t)snprintf(yaml + len, sizeof yaml - len, "%s%g", i > 0 ? ", " : "",
                                (double)((37 * i) % 29 - 14) / 8.0);
    len += (size_t)snprintf(yaml + len, sizeof yaml - len, "]}\n  - {name: c, dtype: float16, shape: [24], values: [");
    for (int j = 0; j < 24; j++)
        len += (size_t)snprintf(yaml + len, sizeof yaml - len, "%s%d", j > 0 ? ", " : "", j % 5 - 2);
    snprintf(yaml + len, sizeof yaml - len,
             "]}\nnodes:\n  - {name: y, op: Gemm, inputs: [x, W, c], attrs: {transB: 1}}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "gemm.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_DEFAULT, "cpu", d);
    CU_ASSERT_EQUAL(count_op(opt, "_MatMulHalfWeight"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 0);
    CU_ASSERT_EQUAL(count_op(opt, "Gemm"), 0);
    for (int32_t id = 0; id < opt->n_nodes; id++)
        if (opt->nodes[id].kind == TGC_NODE_OP && strcmp(opt->nodes[id].op_name, "_MatMulHalfWeight") == 0) {
            const tgc_tensor_info *w = tgc_graph_ref_info(opt, opt->nodes[id].inputs[1]);
            CU_ASSERT_EQUAL(w->dtype, TGC_FLOAT16);
            CU_ASSERT(w->shape.rank == 2 && w->shape.dims[0].v == 32 && w->shape.dims[1].v == 24);
        }
    tgc_graph_free(opt);
    uint16_t xb[32];
    for (int i = 0; i < 32; i++) xb[i] = tgc_float_to_half((float)((13 * i) % 17 - 8) / 4.0f);
    tgc_session *s;
    tgc_tensor *y = run_feed(g, NULL, "x", TGC_FLOAT16, 2, (int64_t[]){1, 32}, xb, &s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const uint16_t *got = tgc_tensor_data(y);
    for (int j = 0; j < 24; j++) {
        double sum = j % 5 - 2;
        for (int c = 0; c < 32; c++)
            sum += (double)tgc_half_to_float(xb[c]) * ((double)((37 * (j * 32 + c)) % 29 - 14) / 8.0);
        CU_ASSERT_EQUAL(got[j], tgc_float_to_half((float)sum));
    }
    tgc_tensor_release(y);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* ONNX's LSTM (default activations, no peepholes) in double precision:
 * x [seq, batch, in], w [4h, in], r [4h, h], b [8h] (gates i, o, f, c);
 * the last hidden state into yh [batch, h]. */
static void lstm_reference(int seq, int batch, int in, int h, const double *x, const double *w, const double *r,
                           const double *b, double *yh) {
    double hs[2][8] = {{0}}, cs[2][8] = {{0}};
    for (int t = 0; t < seq; t++)
        for (int n = 0; n < batch; n++) {
            double gate[32], hn[8];
            for (int j = 0; j < 4 * h; j++) {
                double v = b[j] + b[4 * h + j];
                for (int i = 0; i < in; i++) v += x[(t * batch + n) * in + i] * w[j * in + i];
                for (int i = 0; i < h; i++) v += hs[n][i] * r[j * h + i];
                gate[j] = v;
            }
            for (int j = 0; j < h; j++) {
                double ig = 1 / (1 + exp(-gate[j])), og = 1 / (1 + exp(-gate[h + j]));
                double fg = 1 / (1 + exp(-gate[2 * h + j])), cg = tanh(gate[3 * h + j]);
                cs[n][j] = fg * cs[n][j] + ig * cg;
                hn[j] = og * tanh(cs[n][j]);
            }
            memcpy(hs[n], hn, sizeof hn);
        }
    for (int n = 0; n < batch; n++)
        for (int j = 0; j < h; j++) yh[n * h + j] = hs[n][j];
}

/* An LSTM with float16 W and R keeps them float16: compute-in-float32
 * makes it _LSTMHalfWeight (no Cast of W or R). Batch 1 reads R in place
 * each step, batch 2 widens it for the run; X's projection (3 or 6 rows)
 * widens W a block at a time. seq 3, input 20 (one 16-block and a tail),
 * hidden 8; values (i % 11 - 5) / 8 and the like, exact in float16;
 * against a double-precision LSTM within float16's rounding of Y_h. */
static void test_lstm_weights_stay_half(void) {
    enum { SEQ = 3, IN = 20, H = 8 };
    static double w[4 * H * IN], r[4 * H * H], b[8 * H], x[SEQ * 2 * IN], want[2 * H];
    char *yaml = malloc(65536);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
    for (int batch = 1; batch <= 2; batch++) {
        size_t len = (size_t)snprintf(yaml, 65536,
                                      "format: tgc/1\n"
                                      "inputs: [{name: x, dtype: float16, shape: [%d, %d, %d]}]\n"
                                      "outputs: ['l:1']\n"
                                      "initializers:\n",
                                      SEQ, batch, IN);
        struct { const char *name; double *v; int n, dims[3], mod; } init[] = {
            {"W", w, 4 * H * IN, {1, 4 * H, IN}, 11}, {"R", r, 4 * H * H, {1, 4 * H, H}, 7},
            {"B", b, 8 * H, {1, 8 * H, 0}, 5}};
        for (int t = 0; t < 3; t++) {
            len += (size_t)snprintf(yaml + len, 65536 - len, "  - {name: %s, dtype: float16, shape: [%d, %d%s",
                                    init[t].name, init[t].dims[0], init[t].dims[1], t < 2 ? ", " : "");
            if (t < 2) len += (size_t)snprintf(yaml + len, 65536 - len, "%d", init[t].dims[2]);
            len += (size_t)snprintf(yaml + len, 65536 - len, "], values: [");
            for (int i = 0; i < init[t].n; i++) {
                init[t].v[i] = (double)((i * 7 + t) % init[t].mod - init[t].mod / 2) / 8.0;
                len += (size_t)snprintf(yaml + len, 65536 - len, "%s%g", i > 0 ? ", " : "", init[t].v[i]);
            }
            len += (size_t)snprintf(yaml + len, 65536 - len, "]}\n");
        }
        snprintf(yaml + len, 65536 - len, "nodes:\n  - {name: l, op: LSTM, inputs: [x, W, R, B], "
                                           "attrs: {hidden_size: %d}}\n", H);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = loaded_graph(yaml, "lstm.yaml", d);
        tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_DEFAULT, "cpu", d);
        CU_ASSERT_EQUAL(count_op(opt, "_LSTMHalfWeight"), 1);
        for (int32_t id = 0; id < opt->n_nodes; id++)
            if (opt->nodes[id].kind == TGC_NODE_OP && strcmp(opt->nodes[id].op_name, "_LSTMHalfWeight") == 0) {
                CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, opt->nodes[id].inputs[1])->dtype, TGC_FLOAT16);
                CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, opt->nodes[id].inputs[2])->dtype, TGC_FLOAT16);
            }
        tgc_graph_free(opt);
        uint16_t xb[SEQ * 2 * IN];
        for (int i = 0; i < SEQ * batch * IN; i++) {
            x[i] = (double)((i * 5) % 9 - 4) / 4.0;
            xb[i] = tgc_float_to_half((float)x[i]);
        }
        lstm_reference(SEQ, batch, IN, H, x, w, r, b, want);
        tgc_session *s;
        tgc_tensor *yh = run_feed(g, NULL, "x", TGC_FLOAT16, 3, (int64_t[]){SEQ, batch, IN}, xb, &s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(yh);
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(yh), batch * H);
        const uint16_t *got = tgc_tensor_data(yh);
        for (int i = 0; i < batch * H; i++) CU_ASSERT_DOUBLE_EQUAL(tgc_half_to_float(got[i]), want[i], 1e-3);
        tgc_tensor_release(yh);
        tgc_session_free(s);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
    free(yaml);
}

/* A Gather from a float16 table stays float16: it reads more than it
 * gives, so widening its output costs less than a float32 copy of the
 * table. E = 100 x 8 values (i % 7 - 3) / 2, rows 5 and 42 gathered, then
 * a Softmax (no float16 kernel) over each row: the Gather's output is
 * widened, not E. */
static void test_gather_reads_table_in_place(void) {
    char yaml[16384];
    size_t len = (size_t)snprintf(yaml, sizeof yaml,
                                  "format: tgc/1\n"
                                  "inputs: [{name: ids, dtype: int64, shape: [2]}]\n"
                                  "outputs: [y]\n"
                                  "initializers:\n"
                                  "  - {name: E, dtype: float16, shape: [100, 8], values: [");
    for (int i = 0; i < 800; i++)
        len += (size_t)snprintf(yaml + len, sizeof yaml - len, "%s%g", i > 0 ? ", " : "", (double)(i % 7 - 3) / 2.0);
    snprintf(yaml + len, sizeof yaml - len, "]}\nnodes:\n  - {name: e, op: Gather, inputs: [E, ids]}\n"
                                            "  - {name: y, op: Softmax, inputs: [e]}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "gather.yaml", d);
    tgc_graph *opt = optimized_graph(g, TGC_OPTIMIZE_DEFAULT, "cpu", d);
    const tgc_node *e = node_named(opt, "e");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_STRING_EQUAL(e->op_name, "Gather");
    CU_ASSERT_EQUAL(tgc_graph_ref_info(opt, e->inputs[0])->dtype, TGC_FLOAT16);
    CU_ASSERT_EQUAL(e->outputs[0].dtype, TGC_FLOAT16);
    tgc_graph_free(opt);
    tgc_session *s;
    tgc_tensor *y = run_feed(g, NULL, "ids", TGC_INT64, 1, (int64_t[]){2}, (int64_t[]){5, 42}, &s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const uint16_t *got = tgc_tensor_data(y);
    const int rows[2] = {5, 42};
    for (int r = 0; r < 2; r++) {
        double z = 0.0, want[8];
        for (int j = 0; j < 8; j++) z += exp((double)((rows[r] * 8 + j) % 7 - 3) / 2.0);
        for (int j = 0; j < 8; j++) want[j] = exp((double)((rows[r] * 8 + j) % 7 - 3) / 2.0) / z;
        for (int j = 0; j < 8; j++) CU_ASSERT_DOUBLE_EQUAL(tgc_half_to_float(got[r * 8 + j]), want[j], 1e-3);
    }
    tgc_tensor_release(y);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("compute in float32", {"a chain in float32", test_chain_in_float32},
              {"the graph's Cast narrows", test_graph_cast_narrows},
              {"products summed in float32", test_products_summed_in_float32},
              {"bfloat16 with an index output", test_bfloat16_with_an_index_output},
              {"native nodes stay narrow", test_native_nodes_stay_narrow},
              {"float32 untouched", test_float32_untouched},
              {"a half-precision weight stays half", test_half_weight_stays_half},
              {"a Gemm's half-precision weight stays half", test_gemm_weight_stays_half},
              {"an LSTM's half-precision weights stay half", test_lstm_weights_stay_half},
              {"a Gather reads its table in place", test_gather_reads_table_in_place})
