/* Scaled dot-product attention: the _Attention cpu kernel against float64
 * numpy references (tests/data/passes/make_attention_refs.py), the
 * fuse-attention pass on the decomposed forms exporters write (and left
 * alone on near-misses), on PyTorch 1.13's own exports of a GPT- and a
 * BERT-style model (optimized vs unoptimized, and vs PyTorch's outputs),
 * the same bits for 1 and 2 threads, and every allocation failing in turn. */
#include "graph/graph.h"
#include "tests/passes/graph_queries.h"
#include "support/alloc.h"
#include "tests/harness.h"
#include "tgc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/passes/attention"

static tgc_tensor *npy(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, DATA "/%s.npy", name);
    tgc_tensor *t = NULL;
    tgc_diags *d = tgc_diags_create();
    tgc_status st = tgc_tensor_load_npy(tgc_test_path(rel), d, &t);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return t;
}

/* Loads a graph written in the test (its file: weights beneath DATA). */
static tgc_graph *load(const char *yaml) {
    char base[4096];
    snprintf(base, sizeof base, "%s", tgc_test_path(DATA));
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status st = tgc_graph_load_string(yaml, strlen(yaml), "attention.yaml", base, d, &g);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return g;
}

static tgc_graph *load_file(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, DATA "/%s", name);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status st = tgc_graph_load(tgc_test_path(rel), d, &g);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return g;
}

/* The graph tgc_graph_optimize makes for `devices` (the caller frees it). */
static tgc_graph *optimized(const tgc_graph *g, const char *devices) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *opt = NULL;
    tgc_status st = tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, devices, NULL, d, &opt);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return opt;
}

/* Runs g on `devices` (optimized at `level`, `threads` workers) with the
 * feeds; stores the first n_out outputs in outs (the caller releases). */
static void run_on(const char *devices, const tgc_graph *g, tgc_optimize_level level, const char *threads,
                   int n_feeds, const char *const *names, tgc_tensor *const *feeds, int n_out, tgc_tensor **outs) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_tensor *all[4] = {NULL};
    tgc_session_options o = {.optimize = level, .threads = threads};
    tgc_status st = tgc_session_create(g, devices, &o, d, &s);
    CU_ASSERT_FATAL(st != TGC_OK || tgc_session_output_count(s) <= 4);
    if (st == TGC_OK) st = tgc_session_run(s, n_feeds, names, (tgc_tensor **)feeds, all, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    for (int i = 0; i < 4; i++) {
        if (i < n_out) outs[i] = all[i];
        else tgc_tensor_release(all[i]);
    }
    tgc_session_free(s);
    tgc_diags_free(d);
}

/* run_on the cpu. */
static void run(const tgc_graph *g, tgc_optimize_level level, const char *threads, int n_feeds,
                const char *const *names, tgc_tensor *const *feeds, int n_out, tgc_tensor **outs) {
    run_on("cpu", g, level, threads, n_feeds, names, feeds, n_out, outs);
}

static bool has_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

/* max |got - want| / max |want|, both of want's size. */
static double rel_diff(const tgc_tensor *got, const tgc_tensor *want) {
    CU_ASSERT_FATAL(got != NULL && want != NULL);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(got), tgc_tensor_numel(want));
    const float *a = tgc_tensor_data(got), *b = tgc_tensor_data(want);
    double err = 0, top = 0;
    for (int64_t i = 0; i < tgc_tensor_numel(want); i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        err = e > err || isnan(e) ? e : err;
        top = fabs((double)b[i]) > top ? fabs((double)b[i]) : top;
    }
    return top > 0 ? err / top : err;
}

static void expect_close(const tgc_tensor *got, const tgc_tensor *want, double tol, const char *what) {
    double r = rel_diff(got, want);
    if (!(r <= tol)) fprintf(stderr, "\n  %s: relative error %g > %g", what, r, tol);
    CU_ASSERT(r <= tol);
}

static void release_all(tgc_tensor **t, int n) {
    for (int i = 0; i < n; i++) tgc_tensor_release(t[i]);
}

/* ---- the kernel ------------------------------------------------------------- */

/* Four heads of two sequences, a [Lq, Lk] mask with -inf above a diagonal,
 * and the same without the mask: numpy's float64 values. */
static void test_kernel_values(void) {
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 3, 5, 4]}\n"
                        "  - {name: k, dtype: float32, shape: [2, 3, 7, 4]}\n"
                        "  - {name: v, dtype: float32, shape: [2, 3, 7, 6]}\n"
                        "  - {name: mask, dtype: float32, shape: [5, 7]}\n"
                        "outputs: [y, y2]\n"
                        "nodes:\n"
                        "  - {name: y, op: _Attention, inputs: [q, k, v, mask], attrs: {scale: 0.5}}\n"
                        "  - {name: y2, op: _Attention, inputs: [q, k, v], attrs: {scale: 0.5}}\n");
    const char *names[] = {"q", "k", "v", "mask"};
    tgc_tensor *in[4] = {npy("a_q"), npy("a_k"), npy("a_v"), npy("a_mask")}, *out[2] = {NULL};
    run(g, TGC_OPTIMIZE_NONE, "cpu0=1", 4, names, in, 2, out);
    tgc_tensor *want = npy("a_out"), *want2 = npy("a_out_nomask");
    expect_close(out[0], want, 1e-6, "masked");
    expect_close(out[1], want2, 1e-6, "unmasked");
    release_all(in, 4);
    release_all(out, 2);
    tgc_tensor_release(want);
    tgc_tensor_release(want2);
    tgc_graph_free(g);
}

/* Batch dims broadcast (Q [2, 1, ...], K^T [3, ...], V [1, 3, ...]), K
 * given transposed, a padding mask [B, 1, 1, Lk]. */
static void test_kernel_broadcast(void) {
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 1, 5, 4]}\n"
                        "  - {name: kt, dtype: float32, shape: [3, 4, 7]}\n"
                        "  - {name: v, dtype: float32, shape: [1, 3, 7, 6]}\n"
                        "  - {name: mask, dtype: float32, shape: [2, 1, 1, 7]}\n"
                        "outputs: [y]\n"
                        "nodes:\n"
                        "  - {name: y, op: _Attention, inputs: [q, kt, v, mask], attrs: {scale: 0.3, k_transposed: 1}}\n");
    const tgc_node *y = &g->nodes[tgc_graph_find(g, "y")];
    CU_ASSERT(y->outputs[0].shape.rank == 4 && y->outputs[0].shape.dims[1].v == 3 &&
              y->outputs[0].shape.dims[3].v == 6);
    const char *names[] = {"q", "kt", "v", "mask"};
    tgc_tensor *in[4] = {npy("b_q"), npy("b_kt"), npy("b_v"), npy("b_mask")}, *out = NULL;
    run(g, TGC_OPTIMIZE_NONE, "cpu0=1", 4, names, in, 1, &out);
    tgc_tensor *want = npy("b_out");
    expect_close(out, want, 1e-6, "broadcast");
    release_all(in, 4);
    tgc_tensor_release(out);
    tgc_tensor_release(want);
    tgc_graph_free(g);
}

/* Lq 150 and Lk 400: blocks of 128 query rows, the last one short (22);
 * a mask [B, 1, Lk] broadcast over the rows; on 1 and on 2 threads. */
static void test_kernel_blocks(void) {
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 150, 8]}\n"
                        "  - {name: k, dtype: float32, shape: [2, 400, 8]}\n"
                        "  - {name: v, dtype: float32, shape: [2, 400, 8]}\n"
                        "  - {name: mask, dtype: float32, shape: [2, 1, 400]}\n"
                        "outputs: [y]\n"
                        "nodes:\n"
                        "  - {name: y, op: _Attention, inputs: [q, k, v, mask], attrs: {scale: 0.125}}\n");
    const char *names[] = {"q", "k", "v", "mask"};
    tgc_tensor *in[4] = {npy("c_q"), npy("c_k"), npy("c_v"), npy("c_mask")}, *one = NULL, *two = NULL;
    run(g, TGC_OPTIMIZE_NONE, "cpu0=1", 4, names, in, 1, &one);
    run(g, TGC_OPTIMIZE_NONE, "cpu0=2", 4, names, in, 1, &two);
    tgc_tensor *want = npy("c_out");
    expect_close(one, want, 3e-6, "blocks"); /* sums of 400 products in float32 */
    CU_ASSERT(memcmp(tgc_tensor_data(one), tgc_tensor_data(two), (size_t)tgc_tensor_numel(one) * 4) == 0);
    release_all(in, 4);
    tgc_tensor_release(one);
    tgc_tensor_release(two);
    tgc_tensor_release(want);
    tgc_graph_free(g);
}

/* Inputs that do not fit are refused at load with the node's name. */
static void test_kernel_bad_shapes(void) {
    const char *bad[] = {
        /* head sizes differ */
        "format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 5, 4]}, {name: k, dtype: float32, shape: [2, 7, 3]},"
        " {name: v, dtype: float32, shape: [2, 7, 6]}]\noutputs: [y]\n"
        "nodes: [{name: y, op: _Attention, inputs: [q, k, v], attrs: {scale: 1}}]\n",
        /* key counts differ */
        "format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 5, 4]}, {name: k, dtype: float32, shape: [2, 7, 4]},"
        " {name: v, dtype: float32, shape: [2, 6, 6]}]\noutputs: [y]\n"
        "nodes: [{name: y, op: _Attention, inputs: [q, k, v], attrs: {scale: 1}}]\n",
        /* a mask that would grow the scores */
        "format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 5, 4]}, {name: k, dtype: float32, shape: [2, 7, 4]},"
        " {name: v, dtype: float32, shape: [2, 7, 6]}, {name: m, dtype: float32, shape: [3, 2, 5, 7]}]\noutputs: [y]\n"
        "nodes: [{name: y, op: _Attention, inputs: [q, k, v, m], attrs: {scale: 1}}]\n",
        /* no scale */
        "format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 5, 4]}, {name: k, dtype: float32, shape: [2, 7, 4]},"
        " {name: v, dtype: float32, shape: [2, 7, 6]}]\noutputs: [y]\n"
        "nodes: [{name: y, op: _Attention, inputs: [q, k, v]}]\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = NULL;
        CU_ASSERT_EQUAL(tgc_graph_load_string(bad[i], strlen(bad[i]), "bad.yaml", NULL, d, &g), TGC_ERR_INVALID);
        CU_ASSERT(tgc_diags_count(d) > 0 && strstr(tgc_diag_message(d, 0), "'y'") != NULL);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

/* ---- the pass ---------------------------------------------------------------- */

/* The classic form (ONNX Runtime's AttentionFusion's): K^T by a Transpose,
 * the scores divided by sqrt(D), a constant [Lq, Lk] mask added. `axis`,
 * `extra_outputs` and `more_nodes` make the near-misses. */
static char *classic(const char *axis, const char *extra_outputs, const char *more_nodes) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "format: tgc/1\n"
             "inputs:\n"
             "  - {name: q, dtype: float32, shape: [2, 3, 5, 4]}\n"
             "  - {name: k, dtype: float32, shape: [2, 3, 7, 4]}\n"
             "  - {name: v, dtype: float32, shape: [2, 3, 7, 6]}\n"
             "outputs: [y%s]\n"
             "initializers:\n"
             "  - {name: mask, dtype: float32, shape: [5, 7], file: a_mask.npy}\n"
             "  - {name: two, dtype: float32, shape: [], values: [2]}\n"
             "nodes:\n"
             "  - {name: kt, op: Transpose, inputs: [k], attrs: {perm: [0, 1, 3, 2]}}\n"
             "  - {name: s, op: MatMul, inputs: [q, kt]}\n"
             "  - {name: sd, op: Div, inputs: [s, two]}\n"
             "  - {name: sm, op: Add, inputs: [sd, mask]}\n"
             "  - {name: p, op: Softmax, inputs: [sm], attrs: {axis: %s}}\n"
             "  - {name: y, op: MatMul, inputs: [p, v]}\n%s",
             extra_outputs, axis, more_nodes);
    return buf;
}

static const char *const qkv_names[] = {"q", "k", "v"};

static void test_fuse_classic(void) {
    tgc_graph *g = load(classic("-1", "", ""));
    tgc_graph *opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Softmax") + count_op(opt, "Transpose") + count_op(opt, "MatMul"), 0);
    int32_t y = tgc_graph_find(opt, "y"); /* named after the second MatMul */
    CU_ASSERT_FATAL(y >= 0 && strcmp(opt->nodes[y].op_name, "_Attention") == 0);
    CU_ASSERT_DOUBLE_EQUAL(tgc_node_attr(&opt->nodes[y], "scale")->f, 0.5, 1e-7);
    CU_ASSERT_PTR_NULL(tgc_node_attr(&opt->nodes[y], "k_transposed"));
    tgc_tensor *in[3] = {npy("a_q"), npy("a_k"), npy("a_v")}, *fused = NULL, *plain = NULL;
    run(g, TGC_OPTIMIZE_ALL, "cpu0=1", 3, qkv_names, in, 1, &fused);
    run(g, TGC_OPTIMIZE_NONE, "cpu0=1", 3, qkv_names, in, 1, &plain);
    tgc_tensor *want = npy("a_out");
    expect_close(fused, want, 1e-6, "fused vs numpy");
    expect_close(fused, plain, 1e-5, "fused vs unfused");
    release_all(in, 3);
    tgc_tensor_release(fused);
    tgc_tensor_release(plain);
    tgc_tensor_release(want);
    tgc_graph_free(opt);
    tgc_graph_free(g);
    /* K^T read by another node too: the Transpose stays, read as K^T */
    g = load(classic("-1", ", n", "  - {name: n, op: Neg, inputs: [kt]}\n"));
    opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Transpose"), 1);
    y = tgc_graph_find(opt, "y");
    CU_ASSERT_FATAL(y >= 0);
    CU_ASSERT_EQUAL(tgc_node_attr(&opt->nodes[y], "k_transposed")->i, 1);
    tgc_graph_free(opt);
    tgc_graph_free(g);
}

/* PyTorch 2's scaled_dot_product_attention export: sqrt(scale) on Q and on
 * the transposed K, no mask, Softmax's axis as a positive number. */
static void test_fuse_sdpa_form(void) {
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 3, 5, 4]}\n"
                        "  - {name: k, dtype: float32, shape: [2, 3, 7, 4]}\n"
                        "  - {name: v, dtype: float32, shape: [2, 3, 7, 6]}\n"
                        "outputs: [y]\n"
                        "initializers:\n"
                        "  - {name: c, dtype: float32, shape: [], values: [0.70710678]}\n"
                        "nodes:\n"
                        "  - {name: qs, op: Mul, inputs: [q, c]}\n"
                        "  - {name: kt, op: Transpose, inputs: [k], attrs: {perm: [0, 1, 3, 2]}}\n"
                        "  - {name: kts, op: Mul, inputs: [kt, c]}\n"
                        "  - {name: s, op: MatMul, inputs: [qs, kts]}\n"
                        "  - {name: p, op: Softmax, inputs: [s], attrs: {axis: 3}}\n"
                        "  - {name: y, op: MatMul, inputs: [p, v]}\n");
    tgc_graph *opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(opt->n_nodes - opt->n_inputs_nodes, 1); /* the _Attention alone */
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
    tgc_tensor *in[3] = {npy("a_q"), npy("a_k"), npy("a_v")}, *fused = NULL, *plain = NULL;
    run(g, TGC_OPTIMIZE_ALL, "cpu0=1", 3, qkv_names, in, 1, &fused);
    run(g, TGC_OPTIMIZE_NONE, "cpu0=1", 3, qkv_names, in, 1, &plain);
    tgc_tensor *want = npy("a_out_nomask");
    expect_close(fused, want, 1e-6, "fused vs numpy");
    expect_close(fused, plain, 1e-5, "fused vs unfused");
    release_all(in, 3);
    tgc_tensor_release(fused);
    tgc_tensor_release(plain);
    tgc_tensor_release(want);
    tgc_graph_free(opt);
    tgc_graph_free(g);
}

/* K already transposed (kept as K^T), baddbmm's Mul by alpha 1 and the
 * scale on the scores, the padding mask [B, 1, 1, Lk] a run-time input
 * written first in the Add, batch dims broadcast. */
static void test_fuse_pretransposed_runtime_mask(void) {
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 1, 5, 4]}\n"
                        "  - {name: kt, dtype: float32, shape: [3, 4, 7]}\n"
                        "  - {name: v, dtype: float32, shape: [1, 3, 7, 6]}\n"
                        "  - {name: mask, dtype: float32, shape: [2, 1, 1, 7]}\n"
                        "outputs: [y]\n"
                        "initializers:\n"
                        "  - {name: one, dtype: float32, shape: [1], values: [1]}\n"
                        "  - {name: c, dtype: float32, shape: [], values: [0.3]}\n"
                        "nodes:\n"
                        "  - {name: s, op: MatMul, inputs: [q, kt]}\n"
                        "  - {name: s1, op: Mul, inputs: [one, s]}\n"
                        "  - {name: s2, op: Mul, inputs: [s1, c]}\n"
                        "  - {name: sm, op: Add, inputs: [mask, s2]}\n"
                        "  - {name: p, op: Softmax, inputs: [sm]}\n"
                        "  - {name: y, op: MatMul, inputs: [p, v]}\n");
    tgc_graph *opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
    CU_ASSERT_EQUAL(count_op(opt, "Mul") + count_op(opt, "Add") + count_op(opt, "Softmax"), 0);
    int32_t y = tgc_graph_find(opt, "y");
    CU_ASSERT_FATAL(y >= 0);
    CU_ASSERT_EQUAL(tgc_node_attr(&opt->nodes[y], "k_transposed")->i, 1);
    CU_ASSERT_EQUAL(opt->nodes[y].n_inputs, 4);
    const char *names[] = {"q", "kt", "v", "mask"};
    tgc_tensor *in[4] = {npy("b_q"), npy("b_kt"), npy("b_v"), npy("b_mask")}, *fused = NULL, *plain = NULL;
    run(g, TGC_OPTIMIZE_ALL, "cpu0=1", 4, names, in, 1, &fused);
    run(g, TGC_OPTIMIZE_NONE, "cpu0=1", 4, names, in, 1, &plain);
    tgc_tensor *want = npy("b_out");
    expect_close(fused, want, 1e-6, "fused vs numpy");
    expect_close(fused, plain, 1e-5, "fused vs unfused");
    release_all(in, 4);
    tgc_tensor_release(fused);
    tgc_tensor_release(plain);
    tgc_tensor_release(want);
    tgc_graph_free(opt);
    tgc_graph_free(g);
}

/* Einsum products as torchvision's maxvit writes them: Q K^T as
 * "bhid,bhjd->bhij" (K as it is) and P V as "bhij,bhjd->bhid", with the
 * numpy values of the unmasked case; and Q K^T as "bhid,bhdj->bhij" (K^T). */
static void test_fuse_einsum_form(void) {
    const char *forms[2][2] = {{"bhid,bhjd->bhij", "[2, 3, 7, 4]"}, {"bhid,bhdj->bhij", "[2, 3, 4, 7]"}};
    for (int f = 0; f < 2; f++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "format: tgc/1\n"
                 "inputs:\n"
                 "  - {name: q, dtype: float32, shape: [2, 3, 5, 4]}\n"
                 "  - {name: k, dtype: float32, shape: %s}\n"
                 "  - {name: v, dtype: float32, shape: [2, 3, 7, 6]}\n"
                 "outputs: [y]\n"
                 "initializers: [{name: c, dtype: float32, shape: [], values: [0.5]}]\n"
                 "nodes:\n"
                 "  - {name: qs, op: Mul, inputs: [q, c]}\n"
                 "  - {name: s, op: Einsum, inputs: [qs, k], attrs: {equation: \"%s\"}}\n"
                 "  - {name: p, op: Softmax, inputs: [s]}\n"
                 "  - {name: y, op: Einsum, inputs: [p, v], attrs: {equation: \"bhij,bhjd->bhid\"}}\n",
                 forms[f][1], forms[f][0]);
        tgc_graph *g = load(yaml);
        tgc_graph *opt = optimized(g, "cpu");
        CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
        CU_ASSERT_EQUAL(count_op(opt, "Einsum"), 0);
        int32_t y = tgc_graph_find(opt, "y");
        CU_ASSERT_FATAL(y >= 0);
        const tgc_attr *kt = tgc_node_attr(&opt->nodes[y], "k_transposed");
        CU_ASSERT_EQUAL(kt != NULL && kt->i == 1, f == 1);
        tgc_graph_free(opt);
        if (f == 0) {
            tgc_tensor *in[3] = {npy("a_q"), npy("a_k"), npy("a_v")}, *fused = NULL, *want = npy("a_out_nomask");
            run(g, TGC_OPTIMIZE_ALL, "cpu0=1", 3, qkv_names, in, 1, &fused);
            expect_close(fused, want, 1e-6, "einsum form vs numpy");
            release_all(in, 3);
            tgc_tensor_release(fused);
            tgc_tensor_release(want);
        }
        tgc_graph_free(g);
    }
    /* an Einsum that is no attention product ("bhij,bhjd->bhdi": P V transposed) stays */
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 3, 5, 4]}\n"
                        "  - {name: k, dtype: float32, shape: [2, 3, 7, 4]}\n"
                        "  - {name: v, dtype: float32, shape: [2, 3, 7, 6]}\n"
                        "outputs: [y]\n"
                        "nodes:\n"
                        "  - {name: s, op: Einsum, inputs: [q, k], attrs: {equation: \"bhid,bhjd->bhij\"}}\n"
                        "  - {name: p, op: Softmax, inputs: [s]}\n"
                        "  - {name: y, op: Einsum, inputs: [p, v], attrs: {equation: \"bhij,bhjd->bhdi\"}}\n");
    tgc_graph *opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 0);
    tgc_graph_free(opt);
    tgc_graph_free(g);
}

/* What is not exactly attention stays as it is. */
static void test_near_misses(void) {
    struct {
        const char *axis, *outputs, *nodes, *devices, *why;
    } cases[] = {
        {"2", "", "", "cpu", "a softmax over the query axis"},
        {"-1", ", s", "", "cpu", "the scores are a graph output"},
        {"-1", ", r", "  - {name: r, op: ReduceSum, inputs: [p], attrs: {keepdims: 0}}\n", "cpu",
         "the probabilities have another reader (nn.MultiheadAttention's averaged weights)"},
        {"-1", ", n", "  - {name: n, op: Neg, inputs: [sd]}\n", "cpu", "the scaled scores have another reader"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tgc_graph *g = load(classic(cases[i].axis, cases[i].outputs, cases[i].nodes));
        tgc_graph *opt = optimized(g, cases[i].devices);
        if (count_op(opt, "_Attention") != 0) fprintf(stderr, "\n  fused although %s", cases[i].why);
        CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 0);
        CU_ASSERT_EQUAL(count_op(opt, "Softmax"), 1);
        tgc_graph_free(opt);
        tgc_graph_free(g);
    }
    /* the scale divides by a run-time value: no constant scale */
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [2, 5, 4]}\n"
                        "  - {name: k, dtype: float32, shape: [2, 4, 7]}\n"
                        "  - {name: v, dtype: float32, shape: [2, 7, 6]}\n"
                        "  - {name: t, dtype: float32, shape: []}\n"
                        "outputs: [y]\n"
                        "nodes:\n"
                        "  - {name: s, op: MatMul, inputs: [q, k]}\n"
                        "  - {name: sd, op: Div, inputs: [s, t]}\n"
                        "  - {name: p, op: Softmax, inputs: [sd]}\n"
                        "  - {name: y, op: MatMul, inputs: [p, v]}\n");
    tgc_graph *opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 0);
    tgc_graph_free(opt);
    tgc_graph_free(g);
}

/* Attention big enough for many pieces (4 x 200 queries over 400 keys, D
 * 16): the same bits on 1 and 2 threads, within 1e-5 of the unfused ops. */
static void test_threads_bitwise(void) {
    tgc_graph *g = load("format: tgc/1\n"
                        "inputs:\n"
                        "  - {name: q, dtype: float32, shape: [4, 200, 16]}\n"
                        "  - {name: k, dtype: float32, shape: [4, 400, 16]}\n"
                        "  - {name: v, dtype: float32, shape: [4, 400, 16]}\n"
                        "outputs: [y]\n"
                        "initializers:\n"
                        "  - {name: c, dtype: float32, shape: [], values: [0.25]}\n"
                        "nodes:\n"
                        "  - {name: kt, op: Transpose, inputs: [k], attrs: {perm: [0, 2, 1]}}\n"
                        "  - {name: s, op: MatMul, inputs: [q, kt]}\n"
                        "  - {name: sc, op: Mul, inputs: [s, c]}\n"
                        "  - {name: p, op: Softmax, inputs: [sc]}\n"
                        "  - {name: y, op: MatMul, inputs: [p, v]}\n");
    int64_t nq = 4 * 200 * 16, nk = 4 * 400 * 16;
    float *buf = malloc((size_t)(nq + 2 * nk) * sizeof(float));
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    for (int64_t i = 0; i < nq + 2 * nk; i++) buf[i] = (float)sin((double)i * 0.731) * 2.0f;
    tgc_tensor *in[3] = {NULL};
    CU_ASSERT_EQUAL(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){4, 200, 16}, buf, &in[0]), TGC_OK);
    CU_ASSERT_EQUAL(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){4, 400, 16}, buf + nq, &in[1]), TGC_OK);
    CU_ASSERT_EQUAL(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){4, 400, 16}, buf + nq + nk, &in[2]), TGC_OK);
    tgc_tensor *one = NULL, *two = NULL, *plain = NULL;
    run(g, TGC_OPTIMIZE_ALL, "cpu0=1", 3, qkv_names, in, 1, &one);
    run(g, TGC_OPTIMIZE_ALL, "cpu0=2", 3, qkv_names, in, 1, &two);
    run(g, TGC_OPTIMIZE_NONE, "cpu0=2", 3, qkv_names, in, 1, &plain);
    CU_ASSERT(memcmp(tgc_tensor_data(one), tgc_tensor_data(two), (size_t)nq * sizeof(float)) == 0);
    expect_close(one, plain, 1e-5, "fused vs unfused");
    release_all(in, 3);
    tgc_tensor_release(one);
    tgc_tensor_release(two);
    tgc_tensor_release(plain);
    free(buf);
    tgc_graph_free(g);
}

/* The gpu kernel (when there is an OpenCL device): the kernel cases
 * against numpy, and the pass fusing on a list with the gpu, whose run
 * matches numpy too. */
static void test_gpu(void) {
    if (!has_gpu()) {
        printf("\n  notice: no OpenCL device; gpu kernel not checked\n");
        return;
    }
    struct {
        const char *yaml, *in[4], *out;
        double tol;
    } cases[] = {
        {"format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 3, 5, 4]}, {name: k, dtype: float32, shape: "
         "[2, 3, 7, 4]}, {name: v, dtype: float32, shape: [2, 3, 7, 6]}, {name: mask, dtype: float32, shape: [5, 7]}]\n"
         "outputs: [y]\nnodes: [{name: y, op: _Attention, inputs: [q, k, v, mask], attrs: {scale: 0.5}}]\n",
         {"a_q", "a_k", "a_v", "a_mask"}, "a_out", 1e-6},
        {"format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 1, 5, 4]}, {name: k, dtype: float32, shape: "
         "[3, 4, 7]}, {name: v, dtype: float32, shape: [1, 3, 7, 6]}, {name: mask, dtype: float32, shape: [2, 1, 1, "
         "7]}]\noutputs: [y]\nnodes: [{name: y, op: _Attention, inputs: [q, k, v, mask], attrs: {scale: 0.3, "
         "k_transposed: 1}}]\n",
         {"b_q", "b_kt", "b_v", "b_mask"}, "b_out", 1e-6},
        {"format: tgc/1\ninputs: [{name: q, dtype: float32, shape: [2, 150, 8]}, {name: k, dtype: float32, shape: "
         "[2, 400, 8]}, {name: v, dtype: float32, shape: [2, 400, 8]}, {name: mask, dtype: float32, shape: [2, 1, "
         "400]}]\noutputs: [y]\nnodes: [{name: y, op: _Attention, inputs: [q, k, v, mask], attrs: {scale: 0.125}}]\n",
         {"c_q", "c_k", "c_v", "c_mask"}, "c_out", 3e-6},
    };
    const char *names[] = {"q", "k", "v", "mask"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tgc_graph *g = load(cases[i].yaml);
        tgc_tensor *in[4], *out = NULL, *want = npy(cases[i].out);
        for (int k = 0; k < 4; k++) in[k] = npy(cases[i].in[k]);
        run_on("gpu0", g, TGC_OPTIMIZE_NONE, NULL, 4, names, in, 1, &out);
        expect_close(out, want, cases[i].tol, cases[i].out);
        release_all(in, 4);
        tgc_tensor_release(out);
        tgc_tensor_release(want);
        tgc_graph_free(g);
    }
    tgc_graph *g = load(classic("-1", "", ""));
    tgc_graph *opt = optimized(g, "cpu,gpu0");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
    tgc_graph_free(opt);
    tgc_tensor *in[3] = {npy("a_q"), npy("a_k"), npy("a_v")}, *fused = NULL, *want = npy("a_out");
    run_on("gpu0", g, TGC_OPTIMIZE_ALL, NULL, 3, qkv_names, in, 1, &fused);
    expect_close(fused, want, 1e-6, "fused on gpu0 vs numpy");
    release_all(in, 3);
    tgc_tensor_release(fused);
    tgc_tensor_release(want);
    tgc_graph_free(g);
}

/* ---- PyTorch 1.13's exports ---------------------------------------------- */

/* The GPT (causal mask, a constant) and BERT (padding mask, computed at
 * run time) of scripts/models_check.py, 2 layers each: every layer's
 * attention becomes one node; the optimized run is within 1e-5 of the
 * unoptimized one and both within models_check's tolerance of PyTorch. */
static void test_exported_models(void) {
    struct {
        const char *file;
        int n_feeds, n_out;
        const char *feeds[2], *refs[2];
    } models[] = {
        {"gpt.yaml", 1, 1, {"ids"}, {"gpt_logits"}},
        {"bert.yaml", 2, 2, {"ids", "pad"}, {"bert_x", "bert_pooled"}},
    };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        tgc_graph *g = load_file(models[i].file);
        tgc_graph *opt = optimized(g, "cpu");
        CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 2);
        CU_ASSERT_EQUAL(count_op(opt, "Softmax"), 0);
        tgc_graph_free(opt);
        tgc_tensor *in[2] = {NULL}, *fused[2] = {NULL}, *plain[2] = {NULL};
        for (int f = 0; f < models[i].n_feeds; f++) in[f] = npy(models[i].feeds[f]);
        run(g, TGC_OPTIMIZE_ALL, "cpu0=2", models[i].n_feeds, models[i].feeds, in, models[i].n_out, fused);
        run(g, TGC_OPTIMIZE_NONE, "cpu0=2", models[i].n_feeds, models[i].feeds, in, models[i].n_out, plain);
        for (int o = 0; o < models[i].n_out; o++) {
            tgc_tensor *torch = npy(models[i].refs[o]);
            expect_close(fused[o], plain[o], 1e-5, models[i].refs[o]);
            expect_close(fused[o], torch, 1e-4, models[i].refs[o]);
            tgc_tensor_release(torch);
        }
        release_all(in, models[i].n_feeds);
        release_all(fused, models[i].n_out);
        release_all(plain, models[i].n_out);
        tgc_graph_free(g);
    }
}

/* nn.MultiheadAttention with need_weights (its default): the probabilities
 * are also averaged into an output, so the pass leaves it alone; the
 * values are still PyTorch's. */
static void test_exported_mha_with_weights(void) {
    tgc_graph *g = load_file("mha.yaml");
    tgc_graph *opt = optimized(g, "cpu");
    CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 0);
    CU_ASSERT_EQUAL(count_op(opt, "Softmax"), 1);
    tgc_graph_free(opt);
    tgc_tensor *x = npy("mha_q"), *in[3] = {x, x, x}, *out[2] = {NULL};
    run(g, TGC_OPTIMIZE_ALL, "cpu0=1", 3, qkv_names, in, 2, out);
    tgc_tensor *y = npy("mha_y"), *w = npy("mha_w");
    expect_close(out[0], y, 1e-4, "mha y");
    expect_close(out[1], w, 1e-4, "mha w");
    release_all(out, 2);
    tgc_tensor_release(x);
    tgc_tensor_release(y);
    tgc_tensor_release(w);
    tgc_graph_free(g);
}

/* tgc_graph_optimize on the classic form with every host allocation
 * failing in turn: each fails cleanly (TGC_ERR_NOMEM, or a pass that gave
 * up), nothing is left allocated, and once nothing fails the graph is the
 * fused one. */
static void test_every_allocation_fails_in_turn(void) {
    tgc_graph *g = load(classic("-1", "", ""));
    int64_t base = tgc_host_alloc_stats_get().live_blocks, failures = 0, left = 0, crashes = 0;
    bool finished = false;
    for (int64_t n = 1; n < 100000; n++) {
        tgc_diags *dn = tgc_diags_create();
        int64_t before = tgc_host_alloc_stats_get().num_allocs;
        tgc_host_alloc_fail_nth(n);
        tgc_graph *opt = NULL;
        tgc_status st = tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "cpu", NULL, dn, &opt);
        tgc_host_alloc_fail_nth(0);
        failures += st != TGC_OK;
        crashes += st != TGC_OK && st != TGC_ERR_NOMEM && st != TGC_ERR_INVALID;
        bool done = st == TGC_OK && tgc_host_alloc_stats_get().num_allocs - before < n;
        if (done) CU_ASSERT_EQUAL(count_op(opt, "_Attention"), 1);
        tgc_graph_free(opt);
        tgc_diags_free(dn);
        left += tgc_host_alloc_stats_get().live_blocks != base;
        if (done) {
            finished = true;
            break;
        }
    }
    printf("\n  %lld allocations failed in turn, each cleanly\n", (long long)failures);
    CU_ASSERT(finished);
    CU_ASSERT(failures > 20);
    CU_ASSERT_EQUAL(left, 0);
    CU_ASSERT_EQUAL(crashes, 0);
    tgc_graph_free(g);
}

TGC_TEST_MAIN("attention", {"kernel_values", test_kernel_values}, {"kernel_broadcast", test_kernel_broadcast},
              {"kernel_blocks", test_kernel_blocks}, {"kernel_bad_shapes", test_kernel_bad_shapes},
              {"fuse_classic", test_fuse_classic}, {"fuse_sdpa_form", test_fuse_sdpa_form},
              {"fuse_pretransposed_runtime_mask", test_fuse_pretransposed_runtime_mask},
              {"fuse_einsum_form", test_fuse_einsum_form}, {"near_misses", test_near_misses},
              {"threads_bitwise", test_threads_bitwise}, {"gpu", test_gpu},
              {"exported_models", test_exported_models},
              {"exported_mha_with_weights", test_exported_mha_with_weights},
              {"every_allocation_fails_in_turn", test_every_allocation_fails_in_turn})
