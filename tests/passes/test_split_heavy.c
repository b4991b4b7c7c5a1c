/* split-heavy (passes/split_heavy.c): a MatMul (float32 or half-precision
 * weights), a Gemm and a Conv whose
 * weight is over the piece size are cut along their output features into
 * the number of pieces the sizes give by hand, joined by one Concat that
 * keeps the node's name, and the cut graph's output is bitwise the whole
 * node's on the cpu (each output feature the same computation) and the
 * MatMul's within 1e-5 of a double-precision loop; pieces of wide weights
 * are whole multiples of 16 features; a node with a device spec stays
 * whole. */
#include "tests/harness.h"
#include "tests/passes/graph_queries.h"

#include "passes/pass.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

/* "values: [v0, v1, ...]" of n pseudo-random multiples of 1/16 in [-1, 1). */
static char *values(int n, uint32_t seed, float *out) {
    char *text = malloc((size_t)n * 12 + 16);
    size_t at = (size_t)sprintf(text, "[");
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = (float)((int)(seed >> 28) - 8) / 8.0f;
        if (out != NULL) out[i] = v;
        at += (size_t)sprintf(text + at, "%s%g", i ? "," : "", (double)v);
    }
    sprintf(text + at, "]");
    return text;
}

/* Loads `yaml` (a format with two %s for two initializers' values), cuts it
 * at piece_bytes and checks: n_cut nodes cut, `op` nodes before 1 and
 * after `pieces`, one Concat named `name`, and the output on x bitwise the
 * whole graph's. The whole graph's output is returned (the caller frees). */
static tgc_tensor *cut_and_compare(const char *yaml, const char *v1, const char *v2, int64_t piece_bytes,
                                   const char *op, const char *name, int n_cut_want, int pieces, int rank,
                                   const int64_t *dims, const float *x) {
    size_t size = strlen(yaml) + strlen(v1) + strlen(v2) + 1;
    char *text = malloc(size);
    snprintf(text, size, yaml, v1, v2);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(text, "split.yaml", d);
    free(text);
    tgc_graph *cut = NULL;
    int32_t n_cut = -1;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_split_heavy(g, piece_bytes, d, &cut, &n_cut), TGC_OK);
    CU_ASSERT_EQUAL(n_cut, n_cut_want);
    CU_ASSERT_EQUAL(count_op(g, op), 1);
    CU_ASSERT_EQUAL(count_op(cut, op), pieces);
    CU_ASSERT_EQUAL(count_op(cut, "Concat"), pieces > 1 ? 1 : 0);
    const tgc_node *joined = node_named(cut, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(joined);
    CU_ASSERT_STRING_EQUAL(joined->op_name, pieces > 1 ? "Concat" : op);
    tgc_tensor *whole = run_x(g, rank, dims, x), *parts = run_x(cut, rank, dims, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    CU_ASSERT_PTR_NOT_NULL_FATAL(parts);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(whole), tgc_tensor_numel(parts));
    CU_ASSERT(memcmp(tgc_tensor_data(whole), tgc_tensor_data(parts), (size_t)tgc_tensor_numel(whole) * 4) == 0);
    tgc_tensor_release(parts);
    tgc_graph_free(cut);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return whole;
}

/* MatMul x [2, 3, 8] W [8, 40]: 1280 bytes at 400 a piece -> 4 pieces of
 * 10 features (40 < 16 x 4: not aligned); y [2, 3, 40] against a loop. */
static void test_matmul(void) {
    static const char yaml[] = "format: tgc/1\nname: mm\ninputs:\n  - {name: x, dtype: float32, shape: [2, 3, 8]}\n"
                               "outputs: [y]\ninitializers:\n"
                               "  - {name: w, dtype: float32, shape: [8, 40], values: %s}\n%s"
                               "nodes:\n  - {name: y, op: MatMul, inputs: [x, w]}\n";
    float w[8 * 40], x[48];
    char *vw = values(8 * 40, 3, w), *vx = values(48, 5, x);
    tgc_tensor *y = cut_and_compare(yaml, vw, "", 400, "MatMul", "y", 1, 4, 3, (int64_t[]){2, 3, 8}, x);
    const float *got = tgc_tensor_data(y);
    for (int r = 0; r < 6; r++)
        for (int n = 0; n < 40; n++) {
            double acc = 0;
            for (int k = 0; k < 8; k++) acc += (double)x[r * 8 + k] * w[k * 40 + n];
            CU_ASSERT_DOUBLE_EQUAL(got[r * 40 + n], acc, 1e-5);
        }
    tgc_tensor_release(y);
    free(vw);
    free(vx);
}

/* Gemm A [2, 16], B [16, 48], C [1, 48] (sliced with B's columns): 3072
 * bytes at 1000 -> 4 pieces of 12. */
/* _MatMulHalfWeight x [1, 8] W float16 [8, 40]: 640 bytes at 200 a piece
 * -> 4 pieces of 10 features, each reading its float16 slice in place;
 * against a loop (every value a multiple of 1/8: exact in float16). */
static void test_half_weight(void) {
    static const char yaml[] = "format: tgc/1\nname: mm\ninputs:\n  - {name: x, dtype: float32, shape: [1, 8]}\n"
                               "outputs: [y]\ninitializers:\n"
                               "  - {name: w, dtype: float16, shape: [8, 40], values: %s}\n%s"
                               "nodes:\n  - {name: y, op: _MatMulHalfWeight, inputs: [x, w]}\n";
    float w[8 * 40], x[8];
    char *vw = values(8 * 40, 7, w), *vx = values(8, 9, x);
    tgc_tensor *y = cut_and_compare(yaml, vw, "", 200, "_MatMulHalfWeight", "y", 1, 4, 2, (int64_t[]){1, 8}, x);
    const float *got = tgc_tensor_data(y);
    for (int n = 0; n < 40; n++) {
        double acc = 0;
        for (int k = 0; k < 8; k++) acc += (double)x[k] * w[k * 40 + n];
        CU_ASSERT_DOUBLE_EQUAL(got[n], acc, 1e-6);
    }
    tgc_tensor_release(y);
    free(vw);
    free(vx);
}

static void test_gemm(void) {
    static const char yaml[] = "format: tgc/1\nname: gemm\ninputs:\n  - {name: x, dtype: float32, shape: [2, 16]}\n"
                               "outputs: [y]\ninitializers:\n"
                               "  - {name: b, dtype: float32, shape: [16, 48], values: %s}\n"
                               "  - {name: c, dtype: float32, shape: [1, 48], values: %s}\n"
                               "nodes:\n  - {name: y, op: Gemm, inputs: [x, b, c], attrs: {alpha: 0.5, beta: 2.0}}\n";
    float x[32];
    char *vb = values(16 * 48, 7, NULL), *vc = values(48, 9, NULL), *vx = values(32, 11, x);
    tgc_tensor_release(cut_and_compare(yaml, vb, vc, 1000, "Gemm", "y", 1, 4, 2, (int64_t[]){2, 16}, x));
    free(vb);
    free(vc);
    free(vx);
}

/* Conv X [1, 4, 6, 6], W [24, 4, 3, 3], B [24], pads 1: 3456 bytes at
 * 1000 -> 4 pieces of 6 output channels. */
static void test_conv(void) {
    static const char yaml[] = "format: tgc/1\nname: conv\ninputs:\n"
                               "  - {name: x, dtype: float32, shape: [1, 4, 6, 6]}\n"
                               "outputs: [y]\ninitializers:\n"
                               "  - {name: w, dtype: float32, shape: [24, 4, 3, 3], values: %s}\n"
                               "  - {name: b, dtype: float32, shape: [24], values: %s}\n"
                               "nodes:\n  - {name: y, op: Conv, inputs: [x, w, b], attrs: {pads: [1, 1, 1, 1]}}\n";
    float x[144];
    char *vw = values(24 * 36, 13, NULL), *vb = values(24, 15, NULL), *vx = values(144, 17, x);
    tgc_tensor_release(cut_and_compare(yaml, vw, vb, 1000, "Conv", "y", 1, 4, 4, (int64_t[]){1, 4, 6, 6}, x));
    free(vw);
    free(vb);
    free(vx);
}

/* W [4, 100] (1600 bytes) at 500 -> 4 pieces asked, 25 features each,
 * rounded up to 32 (100 >= 16 x 4): pieces of 32, 32, 32 and 4. */
static void test_aligned_pieces(void) {
    static const char yaml[] = "format: tgc/1\nname: wide\ninputs:\n  - {name: x, dtype: float32, shape: [1, 4]}\n"
                               "outputs: [y]\ninitializers:\n"
                               "  - {name: w, dtype: float32, shape: [4, 100], values: %s}\n%s"
                               "nodes:\n  - {name: y, op: MatMul, inputs: [x, w]}\n";
    char *vw = values(400, 19, NULL);
    tgc_diags *d = tgc_diags_create();
    size_t size = sizeof yaml + strlen(vw);
    char *text = malloc(size);
    snprintf(text, size, yaml, vw, "");
    tgc_graph *g = loaded_graph(text, "wide.yaml", d), *cut = NULL;
    int32_t n_cut = 0;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_split_heavy(g, 500, d, &cut, &n_cut), TGC_OK);
    int widths[8], n = 0;
    for (int32_t id = 0; id < cut->n_nodes && n < 8; id++)
        if (cut->nodes[id].kind == TGC_NODE_OP && strcmp(cut->nodes[id].op_name, "MatMul") == 0)
            widths[n++] = (int)cut->nodes[id].outputs[0].shape.dims[1].v;
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT(widths[0] == 32 && widths[1] == 32 && widths[2] == 32 && widths[3] == 4);
    tgc_graph_free(cut);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(text);
    free(vw);
}

/* A MatMul that asks for cpu0 keeps its weight whole (no cut); a light
 * weight (1280 bytes at 2000) is not cut either. */
static void test_left_whole(void) {
    static const char yaml[] = "format: tgc/1\nname: mm\ninputs:\n  - {name: x, dtype: float32, shape: [2, 3, 8]}\n"
                               "outputs: [y]\ninitializers:\n"
                               "  - {name: w, dtype: float32, shape: [8, 40], values: %s}\n%s"
                               "nodes:\n  - {name: y, op: MatMul, inputs: [x, w], device: cpu0}\n";
    float x[48];
    char *vw = values(8 * 40, 3, NULL), *vx = values(48, 5, x);
    tgc_tensor_release(cut_and_compare(yaml, vw, "", 400, "MatMul", "y", 0, 1, 3, (int64_t[]){2, 3, 8}, x));
    static const char light[] = "format: tgc/1\nname: mm\ninputs:\n  - {name: x, dtype: float32, shape: [2, 3, 8]}\n"
                                "outputs: [y]\ninitializers:\n"
                                "  - {name: w, dtype: float32, shape: [8, 40], values: %s}\n%s"
                                "nodes:\n  - {name: y, op: MatMul, inputs: [x, w]}\n";
    tgc_tensor_release(cut_and_compare(light, vw, "", 2000, "MatMul", "y", 0, 1, 3, (int64_t[]){2, 3, 8}, x));
    free(vw);
    free(vx);
}

TGC_TEST_MAIN("split_heavy", {"MatMul cut along its columns", test_matmul}, {"Gemm with its bias sliced", test_gemm},
              {"Conv cut along its output channels", test_conv},
              {"a half-precision weight cut in place", test_half_weight},
              {"wide weights cut in multiples of 16", test_aligned_pieces},
              {"a device spec or a light weight stays whole", test_left_whole})
