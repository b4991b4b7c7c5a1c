/* The optimization passes: each rewrite checked on the optimized graph's
 * structure (which nodes are gone, what replaced them, names kept) and on
 * its values, against numbers worked out by hand in the comments (never
 * against tgc's own unoptimized run alone). */
#include "graph/elementwise.h"
#include "graph/graph.h"
#include "graph/npy.h"
#include "tests/passes/graph_queries.h"
#include "passes/pass.h"
#include "support/alloc.h"
#include "tests/harness.h"
#include "tgc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fixture {
    tgc_diags *diags;
    tgc_graph *g, *opt;
    tgc_optimize_report rep;
} fixture;

static void load_and_optimize(fixture *f, const char *yaml, tgc_optimize_level level) {
    memset(f, 0, sizeof *f);
    f->diags = tgc_diags_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->diags);
    tgc_status st = tgc_graph_load_string(yaml, strlen(yaml), "passes.yaml", NULL, f->diags, &f->g);
    if (st == TGC_OK) st = tgc_graph_optimize(f->g, level, NULL, &f->rep, f->diags, &f->opt);
    if (st != TGC_OK) tgc_diags_print(f->diags, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
}

static void release(fixture *f) {
    tgc_graph_free(f->opt);
    tgc_graph_free(f->g);
    tgc_diags_free(f->diags);
}

/* Runs g (at `level`) on the cpu with one float32 feed; returns output 0
 * (g has at most 4 outputs). */
static tgc_tensor *run1(const tgc_graph *g, tgc_optimize_level level, const char *name, int rank,
                        const int64_t *dims, const float *x) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_tensor *feed = NULL, *outs[4] = {NULL};
    tgc_session_options o = {.optimize = level, .threads = "cpu0=1"};
    tgc_status st = tgc_session_create(g, "cpu", &o, d, &s);
    CU_ASSERT_FATAL(st != TGC_OK || tgc_session_output_count(s) <= 4);
    if (st == TGC_OK && name != NULL) st = tgc_tensor_create(TGC_FLOAT32, rank, dims, x, &feed);
    if (st == TGC_OK) st = tgc_session_run(s, name != NULL, &name, &feed, outs, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    tgc_tensor *y = outs[0];
    for (int i = 1; i < 4; i++) tgc_tensor_release(outs[i]);
    tgc_tensor_release(feed);
    tgc_session_free(s);
    tgc_diags_free(d);
    return y;
}

static void expect_values(const tgc_tensor *y, const float *want, int n, float tol) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(y), n);
    const float *got = tgc_tensor_data(y);
    for (int i = 0; i < n; i++) {
        if (fabsf(got[i] - want[i]) > tol) fprintf(stderr, "\n  element %d: %g, want %g", i, got[i], want[i]);
        CU_ASSERT(fabsf(got[i] - want[i]) <= tol);
    }
}

/* Add of two initializers folds into one; a Shape over a static shape and
 * what is computed from it fold too; the Reshape then reads initializers. */
static void test_fold_constants(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [2, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: c1, dtype: float32, shape: [3], values: [1, 2, 3]}\n"
                       "  - {name: c2, dtype: float32, shape: [3], values: [10, 20, 30]}\n"
                       "nodes:\n"
                       "  - {name: s, op: Add, inputs: [c1, c2]}\n"
                       "  - {name: m, op: Mul, inputs: [x, s]}\n"
                       "  - {name: shp, op: Shape, inputs: [m]}\n"
                       "  - {name: y, op: Reshape, inputs: [m, shp]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_EQUAL(count_op(f.opt, "Add"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "Shape"), 0);
    const tgc_node *s = node_named(f.opt, "s"); /* the folded value keeps the node's name */
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(s->kind, TGC_NODE_CONST);
    const float *sv = s->data->data;
    CU_ASSERT(sv[0] == 11 && sv[1] == 22 && sv[2] == 33);
    const tgc_node *shp = node_named(f.opt, "shp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(shp);
    CU_ASSERT_EQUAL(shp->kind, TGC_NODE_CONST);
    CU_ASSERT_EQUAL(((const int64_t *)shp->data->data)[1], 3);
    float x[6] = {1, 1, 1, 2, 2, 2};
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_BASIC, "x", 2, (int64_t[]){2, 3}, x);
    expect_values(y, (float[]){11, 22, 33, 22, 44, 66}, 6, 0); /* x * [11, 22, 33] */
    tgc_tensor_release(y);
    release(&f);
}

/* A constant subgraph that would fail at run time stays, so that the run
 * reports it with the node's name; random ops are never folded. (The index
 * tensor has 65 elements, more than inference tracks, so only the run can
 * see that one is out of range.) */
static void test_fold_leaves_failures_and_random(void) {
    char yaml[2048];
    int at = snprintf(yaml, sizeof yaml,
                      "format: tgc/1\n"
                      "inputs: [{name: x, dtype: float32, shape: [65]}]\n"
                      "outputs: [y, r]\n"
                      "initializers:\n"
                      "  - {name: data, dtype: float32, shape: [3], values: [1, 2, 3]}\n"
                      "  - {name: idx, dtype: int64, shape: [65], values: [7");
    for (int i = 1; i < 65; i++) at += snprintf(yaml + at, sizeof yaml - (size_t)at, ", 0");
    snprintf(yaml + at, sizeof yaml - (size_t)at,
             "]}\n"
             "nodes:\n"
             "  - {name: bad, op: Gather, inputs: [data, idx]}\n"
             "  - {name: y, op: Add, inputs: [x, bad]}\n"
             "  - {name: r, op: RandomNormal, attrs: {shape: [2], seed: 1.0}}\n");
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "Gather"), 1);
    CU_ASSERT_EQUAL(count_op(f.opt, "RandomNormal"), 1);
    release(&f);
}

/* A chain of constant nodes folds node by node: a value read twice (a in
 * Mul(a, a)) and values only other foldable nodes read (a, b) are freed
 * along the way; only what a node that stays reads (c) becomes an
 * initializer. c1 + c2 = [11, 22, 33]; squared [121, 484, 1089]; minus c1:
 * c = [120, 482, 1086]; y = x + c. */
static void test_fold_chain(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: c1, dtype: float32, shape: [3], values: [1, 2, 3]}\n"
                       "  - {name: c2, dtype: float32, shape: [3], values: [10, 20, 30]}\n"
                       "nodes:\n"
                       "  - {name: a, op: Add, inputs: [c1, c2]}\n"
                       "  - {name: b, op: Mul, inputs: [a, a]}\n"
                       "  - {name: c, op: Sub, inputs: [b, c1]}\n"
                       "  - {name: y, op: Add, inputs: [x, c]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_EQUAL(count_op(f.opt, "Mul"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "Sub"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "Add"), 1);
    CU_ASSERT_PTR_NULL(node_named(f.opt, "b"));
    const tgc_node *c = node_named(f.opt, "c");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL_FATAL(c->kind, TGC_NODE_CONST);
    const float *cv = c->data->data;
    CU_ASSERT(cv[0] == 120 && cv[1] == 482 && cv[2] == 1086);
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_BASIC, "x", 1, (int64_t[]){3}, (float[]){1, 1, 1});
    expect_values(y, (float[]){121, 483, 1087}, 3, 0);
    tgc_tensor_release(y);
    release(&f);
}

/* The fold holds each folded value once: eight chains Expand(h, [2^20])
 * (float16 0.333251953125, the nearest to 1/3) -> Cast to float32, each
 * Cast's 4 MiB read by an Add that stays. The chains run one after the
 * other (depth first), and each Cast's value becomes an initializer as
 * soon as it is computed and its buffer goes, so the host's high-water
 * mark during the optimization stays below the eight initializers (32
 * MiB) plus 16 MiB (a chain's Expand and Cast buffers in the fold's arena,
 * and the rest). Run in topological order (every Expand first) and holding
 * every folded value until the end, as the fold did, it passed 98 MiB.
 * First in this file: the mark is process-wide. */
#define FOLD_CHAINS 8
#define FOLD_ELEMS (1 << 20)

static void test_fold_holds_each_value_once(void) {
    char yaml[4096];
    int at = snprintf(yaml, sizeof yaml,
                      "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [%d]}]\noutputs: [", FOLD_ELEMS);
    for (int i = 0; i < FOLD_CHAINS; i++) at += snprintf(yaml + at, sizeof yaml - at, "%sy%d", i ? ", " : "", i);
    at += snprintf(yaml + at, sizeof yaml - at,
                   "]\ninitializers:\n  - {name: h, dtype: float16, shape: [1], values: [0.333251953125]}\n"
                   "  - {name: n, dtype: int64, shape: [1], values: [%d]}\nnodes:\n", FOLD_ELEMS);
    for (int i = 0; i < FOLD_CHAINS; i++)
        at += snprintf(yaml + at, sizeof yaml - at,
                       "  - {name: e%d, op: Expand, inputs: [h, n]}\n"
                       "  - {name: c%d, op: Cast, inputs: [e%d], attrs: {to: 1}}\n"
                       "  - {name: y%d, op: Add, inputs: [x, c%d]}\n",
                       i, i, i, i, i);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL, *opt = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, (size_t)at, "fold.yaml", NULL, d, &g), TGC_OK);
    int64_t before = tgc_host_alloc_stats_get().live_bytes;
    tgc_optimize_report rep;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_BASIC, NULL, &rep, d, &opt), TGC_OK);
    int64_t peak = tgc_host_alloc_stats_get().peak_bytes - before, held = (int64_t)FOLD_CHAINS * FOLD_ELEMS * 4;
    printf("\n  optimization's high-water mark %lld bytes above the start; initializers %lld\n", (long long)peak,
           (long long)held);
    CU_ASSERT(peak >= held);
    CU_ASSERT(peak < held + (16 << 20));
    CU_ASSERT_EQUAL(count_op(opt, "Cast"), 0);
    CU_ASSERT_EQUAL(count_op(opt, "Expand"), 0);
    for (int i = 0; i < FOLD_CHAINS; i++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", i);
        const tgc_node *c = node_named(opt, name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL_FATAL(c->kind, TGC_NODE_CONST);
        const float *v = c->data->data;
        CU_ASSERT(v[0] == 0.333251953125f && v[FOLD_ELEMS - 1] == 0.333251953125f);
    }
    tgc_graph_free(opt);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A Transpose of a 12 MiB weight (past fold-constants' 10 MiB) folds when
 * only it reads the weight: the transposed copy takes its place, so folding
 * holds no more than before and the copy is made once, not every run;
 * where another node reads the weight too, it stays. W [1024, 3072],
 * W[i][j] = i - j / 4 (exact); after folding, W^T[j][i] the same. */
#define BIG_ROWS 1024
#define BIG_COLS 3072
static void test_fold_large_transpose(void) {
    char dir[] = "/tmp/tgc_test_fold.XXXXXX", path[256], npy[256], err[256];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    tgc_npy w = {.dtype = TGC_FLOAT32, .rank = 2, .dims = {BIG_ROWS, BIG_COLS},
                 .nbytes = (size_t)BIG_ROWS * BIG_COLS * sizeof(float)};
    float *v = malloc(w.nbytes);
    for (int i = 0; i < BIG_ROWS; i++)
        for (int j = 0; j < BIG_COLS; j++) v[i * BIG_COLS + j] = (float)i - (float)j / 4.0f;
    w.data = v;
    snprintf(npy, sizeof npy, "%s/w.npy", dir);
    CU_ASSERT_EQUAL_FATAL(tgc_npy_write_file(npy, &w, err, sizeof err), TGC_OK);
    free(v);
    for (int shared = 0; shared < 2; shared++) {
        snprintf(path, sizeof path, "%s/m%d.yaml", dir, shared);
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f,
                "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [1, %d]}]\noutputs: [y%s]\n"
                "initializers:\n  - {name: w, dtype: float32, shape: [%d, %d], file: w.npy}\n"
                "nodes:\n  - {name: t, op: Transpose, inputs: [w]}\n  - {name: y, op: MatMul, inputs: [x, t]}\n%s",
                BIG_COLS, shared ? ", z" : "", BIG_ROWS, BIG_COLS,
                shared ? "  - {name: z, op: ReduceSum, inputs: [w], attrs: {keepdims: 0}}\n" : "");
        fclose(f);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = NULL, *opt = NULL;
        if (tgc_graph_load(path, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_BASIC, NULL, NULL, d, &opt), TGC_OK);
        CU_ASSERT_EQUAL(count_op(opt, "Transpose"), shared ? 1 : 0);
        if (!shared) {
            const tgc_node *t = node_named(opt, "t");
            CU_ASSERT_PTR_NOT_NULL_FATAL(t);
            CU_ASSERT_EQUAL_FATAL(t->kind, TGC_NODE_CONST);
            const float *tv = t->data->data;
            CU_ASSERT(tv[0] == 0.0f && tv[1] == 1.0f && tv[BIG_ROWS] == -0.25f &&
                      tv[(size_t)BIG_COLS * BIG_ROWS - 1] == (float)(BIG_ROWS - 1) - (float)(BIG_COLS - 1) / 4.0f);
        }
        tgc_graph_free(opt);
        tgc_graph_free(g);
        tgc_diags_free(d);
        remove(path);
    }
    remove(npy);
    rmdir(dir);
}

/* A sequence folds inside the constant part: SequenceAt(SequenceConstruct(
 * c1, c2), 1) becomes an initializer of c2's values. Where a node that stays
 * reads the sequence (SequenceAt at a fed position), the sequence and what
 * is computed from it stay (an initializer holds a tensor), and the rest
 * of the constant part (w) still folds. */
static void test_fold_sequences(void) {
    const char *head = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [3]}, {name: k, dtype: int64, shape: []}]\n"
                       "outputs: [y%s]\n"
                       "initializers:\n"
                       "  - {name: c1, dtype: float32, shape: [3], values: [1, 2, 3]}\n"
                       "  - {name: c2, dtype: float32, shape: [3], values: [10, 20, 30]}\n"
                       "  - {name: one, dtype: int64, shape: [], values: [1]}\n"
                       "nodes:\n"
                       "  - {name: seq, op: SequenceConstruct, inputs: [c1, c2]}\n"
                       "  - {name: e, op: SequenceAt, inputs: [seq, one]}\n"
                       "  - {name: y, op: Add, inputs: [x, e]}\n"
                       "%s";
    char yaml[1024];
    snprintf(yaml, sizeof yaml, head, "", "");
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_EQUAL(count_op(f.opt, "SequenceConstruct"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "SequenceAt"), 0);
    const tgc_node *y = node_named(f.opt, "y"); /* reads e's value (c2's twin, so perhaps c2 itself) */
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const tgc_node *e = &f.opt->nodes[y->inputs[1].node];
    CU_ASSERT_EQUAL_FATAL(e->kind, TGC_NODE_CONST);
    const float *ev = e->data->data;
    CU_ASSERT(ev[0] == 10 && ev[1] == 20 && ev[2] == 30);
    release(&f);
    snprintf(yaml, sizeof yaml, head, ", z, w",
             "  - {name: z, op: SequenceAt, inputs: [seq, k]}\n"
             "  - {name: w, op: Neg, inputs: [c1]}\n");
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_EQUAL(count_op(f.opt, "SequenceConstruct"), 1);
    CU_ASSERT_EQUAL(count_op(f.opt, "SequenceAt"), 2);
    CU_ASSERT_EQUAL(count_op(f.opt, "Neg"), 0); /* the rest still folds */
    release(&f);
}

/* Two equal Relu nodes become one; two equal initializers too; equal
 * nodes that are both graph outputs keep their own names. */
static void test_eliminate_common(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [3]}]\n"
                       "outputs: [y, o1, o2]\n"
                       "initializers:\n"
                       "  - {name: k1, dtype: float32, shape: [3], values: [1, 2, 3]}\n"
                       "  - {name: k2, dtype: float32, shape: [3], values: [1, 2, 3]}\n"
                       "nodes:\n"
                       "  - {name: a, op: Relu, inputs: [x]}\n"
                       "  - {name: b, op: Relu, inputs: [x]}\n"
                       "  - {name: a2, op: Mul, inputs: [a, k1]}\n"
                       "  - {name: b2, op: Mul, inputs: [b, k2]}\n"
                       "  - {name: y, op: Add, inputs: [a2, b2]}\n"
                       "  - {name: o1, op: Neg, inputs: [x]}\n"
                       "  - {name: o2, op: Neg, inputs: [x]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_EQUAL(count_op(f.opt, "Relu"), 1);
    CU_ASSERT_EQUAL(count_op(f.opt, "Mul"), 1);
    CU_ASSERT_EQUAL(count_op(f.opt, "Neg"), 2);
    CU_ASSERT_PTR_NULL(node_named(f.opt, "k2"));
    CU_ASSERT_PTR_NOT_NULL(node_named(f.opt, "o2"));
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT(y->inputs[0].node == y->inputs[1].node);
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_BASIC, "x", 1, (int64_t[]){3}, (float[]){-1, 2, 3});
    expect_values(out, (float[]){0, 8, 18}, 3, 0); /* 2 * relu(x) * [1, 2, 3] */
    tgc_tensor_release(out);
    release(&f);
}

/* Nodes no output needs go, with the initializers only they read; an
 * unused graph input stays (a feed for it is still accepted). */
static void test_eliminate_dead(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [2]}, {name: unused, dtype: float32, shape: [1]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: w, dtype: float32, shape: [2], values: [1, 2]}\n"
                       "nodes:\n"
                       "  - {name: y, op: Relu, inputs: [x]}\n"
                       "  - {name: dead, op: Mul, inputs: [x, w]}\n"
                       "  - {name: dead2, op: Exp, inputs: [dead]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_PTR_NULL(node_named(f.opt, "dead"));
    CU_ASSERT_PTR_NULL(node_named(f.opt, "dead2"));
    CU_ASSERT_PTR_NULL(node_named(f.opt, "w"));
    CU_ASSERT_PTR_NOT_NULL(node_named(f.opt, "unused"));
    CU_ASSERT_EQUAL(f.opt->n_inputs_nodes, 2);
    release(&f);
}

/* Conv (2 output channels, 1x1, with bias) then BatchNormalization:
 * per channel m, s = scale / sqrt(var + eps):
 *   m=0: scale 2, var 3, eps 1 -> s = 2 / 2 = 1; mean 1, beta 0.5
 *   m=1: scale 4, var 3, eps 1 -> s = 4 / 2 = 2; mean -1, beta 0
 * x = [1, 2] (C=2, 1x1), W = [[1, 1], [2, -1]], B = [0, 1]:
 *   conv = [3, 1]; bn = [(3 - 1) * 1 + 0.5, (1 + 1) * 2 + 0] = [2.5, 4]. */
static void test_fold_batch_norm_conv(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 2, 1, 1]}]\n"
                       "outputs: [bn]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float32, shape: [2, 2, 1, 1], values: [1, 1, 2, -1]}\n"
                       "  - {name: B, dtype: float32, shape: [2], values: [0, 1]}\n"
                       "  - {name: scale, dtype: float32, shape: [2], values: [2, 4]}\n"
                       "  - {name: beta, dtype: float32, shape: [2], values: [0.5, 0]}\n"
                       "  - {name: mean, dtype: float32, shape: [2], values: [1, -1]}\n"
                       "  - {name: var, dtype: float32, shape: [2], values: [3, 3]}\n"
                       "nodes:\n"
                       "  - {name: conv, op: Conv, inputs: [x, W, B]}\n"
                       "  - {name: bn, op: BatchNormalization, inputs: [conv, scale, beta, mean, var],"
                       " attrs: {epsilon: 1.0}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "BatchNormalization"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "Conv"), 1);
    const tgc_node *bn = node_named(f.opt, "bn"); /* the fused Conv takes the output's name */
    CU_ASSERT_PTR_NOT_NULL_FATAL(bn);
    CU_ASSERT_STRING_EQUAL(bn->op_name, "Conv");
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_ALL, "x", 4, (int64_t[]){1, 2, 1, 1}, (float[]){1, 2});
    expect_values(y, (float[]){2.5f, 4}, 2, 1e-6f);
    tgc_tensor_release(y);
    release(&f);
}

/* The attr's ints, or NULL. */
static const int64_t *ints_of(const tgc_node *n, const char *name, size_t want) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL && a->type == TGC_ATTR_INTS && a->n == want ? a->ints : NULL;
}

/* Dilation 4 and pads 4 on a 3x3 map: every output's outer taps read
 * padding, so the 3x3 kernel becomes its centre tap, pads 0:
 * y = 5 * x + 0.5 for x = 1..9. */
static void test_trim_conv_taps_to_centre(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 1, 3, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float32, shape: [1, 1, 3, 3], values: [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n"
                       "  - {name: B, dtype: float32, shape: [1], values: [0.5]}\n"
                       "nodes:\n"
                       "  - {name: y, op: Conv, inputs: [x, W, B], attrs: {dilations: [4, 4], pads: [4, 4, 4, 4]}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const int64_t *k = ints_of(y, "kernel_shape", 2), *pads = ints_of(y, "pads", 4);
    CU_ASSERT_FATAL(k != NULL && pads != NULL);
    CU_ASSERT(k[0] == 1 && k[1] == 1);
    CU_ASSERT(pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0);
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, want[9];
    for (int i = 0; i < 9; i++) want[i] = 5 * x[i] + 0.5f;
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 4, (int64_t[]){1, 1, 3, 3}, x);
    expect_values(out, want, 9, 1e-6f);
    tgc_tensor_release(out);
    release(&f);
}

/* One side only: width 4, dilation 3, pads [0, 3] on the width and none on
 * the end, one output column: its taps read -3 (padding), 0 and 3, so the
 * first tap goes (kernel [2, 2], pads 0) and the height's two taps stay.
 * x = [[1, 2, 3, 4], [5, 6, 7, 8]], W = [[1, 2, 3], [4, 5, 6]]:
 * y = 2*1 + 3*4 + 5*5 + 6*8 = 87. Symbolic sizes leave a Conv alone. */
static void test_trim_conv_taps_one_side(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 1, 2, 4]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float32, shape: [1, 1, 2, 3], values: [1, 2, 3, 4, 5, 6]}\n"
                       "nodes:\n"
                       "  - {name: y, op: Conv, inputs: [x, W], attrs: {dilations: [1, 3], pads: [0, 3, 0, 0]}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const int64_t *k = ints_of(y, "kernel_shape", 2), *pads = ints_of(y, "pads", 4);
    CU_ASSERT_FATAL(k != NULL && pads != NULL);
    CU_ASSERT(k[0] == 2 && k[1] == 2);
    CU_ASSERT(pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0);
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 4, (int64_t[]){1, 1, 2, 4}, (float[]){1, 2, 3, 4, 5, 6, 7, 8});
    expect_values(out, (float[]){87}, 1, 1e-5f);
    tgc_tensor_release(out);
    release(&f);

    /* Stride 3, dilation 4 along a width of 5, pads [4, 3]: output 0 reads
     * -4 (padding), 0 and 4, output 1 reads -1, 3 and 7 (both padding at the
     * ends): the first tap goes, the last stays (output 0 reads with it),
     * kernel [1, 2], pads [0, 0, 0, 3]. x = 1..5, W = [1, 2, 3]:
     * y = [2*1 + 3*5, 2*4 + 3*0] = [17, 8]. */
    const char *strided = "format: tgc/1\n"
                          "inputs: [{name: x, dtype: float32, shape: [1, 1, 1, 5]}]\n"
                          "outputs: [y]\n"
                          "initializers:\n"
                          "  - {name: W, dtype: float32, shape: [1, 1, 1, 3], values: [1, 2, 3]}\n"
                          "nodes:\n"
                          "  - {name: y, op: Conv, inputs: [x, W], attrs: {strides: [1, 3], dilations: [1, 4],"
                          " pads: [0, 4, 0, 3]}}\n";
    load_and_optimize(&f, strided, TGC_OPTIMIZE_ALL);
    y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    k = ints_of(y, "kernel_shape", 2);
    pads = ints_of(y, "pads", 4);
    CU_ASSERT_FATAL(k != NULL && pads != NULL);
    CU_ASSERT(k[0] == 1 && k[1] == 2);
    CU_ASSERT(pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 3);
    out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 4, (int64_t[]){1, 1, 1, 5}, (float[]){1, 2, 3, 4, 5});
    expect_values(out, (float[]){17, 8}, 2, 1e-5f);
    tgc_tensor_release(out);
    release(&f);

    const char *sym = "format: tgc/1\n"
                      "inputs: [{name: x, dtype: float32, shape: [1, 1, 2, W]}]\n"
                      "outputs: [y]\n"
                      "initializers:\n"
                      "  - {name: W, dtype: float32, shape: [1, 1, 2, 3], values: [1, 2, 3, 4, 5, 6]}\n"
                      "nodes:\n"
                      "  - {name: y, op: Conv, inputs: [x, W], attrs: {dilations: [1, 3], pads: [0, 3, 0, 0]}}\n";
    load_and_optimize(&f, sym, TGC_OPTIMIZE_ALL);
    y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_PTR_NULL(ints_of(y, "kernel_shape", 2));
    release(&f);
}

/* Pad by 1 with zeros, then a 3x3 AveragePool with no pads (PyTorch's
 * avg_pool2d(padding=1) as exported): one AveragePool, pads 1, the zeros
 * counted. x = 1..9 (3x3): each output is the sum of x in its window / 9,
 * e.g. the corner (1 + 2 + 4 + 5) / 9 = 12/9. An AveragePool with pads of
 * its own that do not count keeps its Pad. */
static void test_fuse_pad_average_pool(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 1, 3, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: p, dtype: int64, shape: [8], values: [0, 0, 1, 1, 0, 0, 1, 1]}\n"
                       "nodes:\n"
                       "  - {name: padded, op: Pad, inputs: [x, p]}\n"
                       "  - {name: y, op: AveragePool, inputs: [padded], attrs: {kernel_shape: [3, 3]}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "Pad"), 0);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const int64_t *pads = ints_of(y, "pads", 4);
    CU_ASSERT_FATAL(pads != NULL);
    CU_ASSERT(pads[0] == 1 && pads[1] == 1 && pads[2] == 1 && pads[3] == 1);
    const tgc_attr *cip = tgc_node_attr(y, "count_include_pad");
    CU_ASSERT(cip != NULL && cip->i == 1);
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float want[9] = {12 / 9.0f, 21 / 9.0f, 16 / 9.0f, 27 / 9.0f, 45 / 9.0f, 33 / 9.0f, 24 / 9.0f, 39 / 9.0f, 28 / 9.0f};
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 4, (int64_t[]){1, 1, 3, 3}, x);
    expect_values(out, want, 9, 1e-6f);
    tgc_tensor_release(out);
    release(&f);

    const char *keep = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 1, 3, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: p, dtype: int64, shape: [8], values: [0, 0, 1, 1, 0, 0, 1, 1]}\n"
                       "nodes:\n"
                       "  - {name: padded, op: Pad, inputs: [x, p]}\n"
                       "  - {name: y, op: AveragePool, inputs: [padded], attrs: {kernel_shape: [3, 3],"
                       " pads: [1, 1, 1, 1]}}\n";
    load_and_optimize(&f, keep, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "Pad"), 1);
    release(&f);
}

/* Pad the top and the right by 1 (asymmetric, as TensorFlow's SAME), then
 * a 2x2 Conv of ones: one Conv, pads [1, 0, 0, 1]. x = [[1, 2], [3, 4]]
 * padded is [[0, 0, 0], [1, 2, 0], [3, 4, 0]]: y = [[3, 2], [10, 6]]. */
static void test_fuse_pad_conv(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 1, 2, 2]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: p, dtype: int64, shape: [8], values: [0, 0, 1, 0, 0, 0, 0, 1]}\n"
                       "  - {name: zero, dtype: float32, shape: [], values: [0]}\n"
                       "  - {name: W, dtype: float32, shape: [1, 1, 2, 2], values: [1, 1, 1, 1]}\n"
                       "nodes:\n"
                       "  - {name: padded, op: Pad, inputs: [x, p, zero]}\n"
                       "  - {name: y, op: Conv, inputs: [padded, W]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "Pad"), 0);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const int64_t *pads = ints_of(y, "pads", 4);
    CU_ASSERT_FATAL(pads != NULL);
    CU_ASSERT(pads[0] == 1 && pads[1] == 0 && pads[2] == 0 && pads[3] == 1);
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4});
    expect_values(out, (float[]){3, 2, 10, 6}, 4, 1e-6f);
    tgc_tensor_release(out);
    release(&f);
}

/* Gemm (transB, alpha 2, beta 0.5, C = [2, 4]) then BatchNormalization over
 * its 2 columns: A = [[1, 1]], B^T rows [1, 0] and [0, 1]:
 *   gemm = 2 * [1, 1] + 0.5 * [2, 4] = [3, 4];
 *   bn (scale [1, 2], var [0, 0], eps 1 -> s = [1, 2]; mean [1, 1]; beta [0, 1])
 *      = [(3 - 1) * 1 + 0, (4 - 1) * 2 + 1] = [2, 7]. */
static void test_fold_batch_norm_gemm(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: a, dtype: float32, shape: [1, 2]}]\n"
                       "outputs: [bn]\n"
                       "initializers:\n"
                       "  - {name: B, dtype: float32, shape: [2, 2], values: [1, 0, 0, 1]}\n"
                       "  - {name: C, dtype: float32, shape: [2], values: [2, 4]}\n"
                       "  - {name: scale, dtype: float32, shape: [2], values: [1, 2]}\n"
                       "  - {name: beta, dtype: float32, shape: [2], values: [0, 1]}\n"
                       "  - {name: mean, dtype: float32, shape: [2], values: [1, 1]}\n"
                       "  - {name: var, dtype: float32, shape: [2], values: [0, 0]}\n"
                       "nodes:\n"
                       "  - {name: gemm, op: Gemm, inputs: [a, B, C], attrs: {transB: 1, alpha: 2.0, beta: 0.5}}\n"
                       "  - {name: bn, op: BatchNormalization, inputs: [gemm, scale, beta, mean, var],"
                       " attrs: {epsilon: 1.0}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "BatchNormalization"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "Gemm"), 1);
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_ALL, "a", 2, (int64_t[]){1, 2}, (float[]){1, 1});
    expect_values(y, (float[]){2, 7}, 2, 1e-6f);
    tgc_tensor_release(y);
    /* and level 1 leaves the BatchNormalization alone, with the same values */
    tgc_graph *basic = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_BASIC, NULL, NULL, f.diags, &basic), TGC_OK);
    CU_ASSERT_EQUAL(count_op(basic, "BatchNormalization"), 1);
    tgc_graph_free(basic);
    y = run1(f.g, TGC_OPTIMIZE_NONE, "a", 2, (int64_t[]){1, 2}, (float[]){1, 1});
    expect_values(y, (float[]){2, 7}, 2, 1e-6f);
    tgc_tensor_release(y);
    release(&f);
}

/* A BatchNormalization whose input another node reads too is not folded. */
static void test_fold_batch_norm_needs_only_reader(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [1, 1, 1, 1]}]\n"
                       "outputs: [bn, conv]\n"
                       "initializers:\n"
                       "  - {name: W, dtype: float32, shape: [1, 1, 1, 1], values: [2]}\n"
                       "  - {name: p, dtype: float32, shape: [1], values: [1]}\n"
                       "nodes:\n"
                       "  - {name: conv, op: Conv, inputs: [x, W]}\n"
                       "  - {name: bn, op: BatchNormalization, inputs: [conv, p, p, p, p]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "BatchNormalization"), 1);
    release(&f);
}

/* MatMul [2, 2] x [2, 3] + bias [3] -> one Gemm named after the Add:
 * a = [[1, 2], [3, 4]], b = [[1, 0, 1], [0, 1, 1]], bias [10, 20, 30]:
 *   a b = [[1, 2, 3], [3, 4, 7]]; + bias = [[11, 22, 33], [13, 24, 37]]. */
static void test_matmul_add_to_gemm(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: a, dtype: float32, shape: [2, 2]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: b, dtype: float32, shape: [2, 3], values: [1, 0, 1, 0, 1, 1]}\n"
                       "  - {name: bias, dtype: float32, shape: [3], values: [10, 20, 30]}\n"
                       "nodes:\n"
                       "  - {name: mm, op: MatMul, inputs: [a, b]}\n"
                       "  - {name: y, op: Add, inputs: [bias, mm]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "MatMul"), 0);
    CU_ASSERT_EQUAL(count_op(f.opt, "Add"), 0);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->op_name, "Gemm");
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "a", 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    expect_values(out, (float[]){11, 22, 33, 13, 24, 37}, 6, 0);
    tgc_tensor_release(out);
    release(&f);
}

/* A 3-D MatMul is no Gemm; the graph stays as it was. */
static void test_matmul_add_rank3_stays(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: a, dtype: float32, shape: [2, 2, 2]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: b, dtype: float32, shape: [2, 2], values: [1, 0, 0, 1]}\n"
                       "  - {name: bias, dtype: float32, shape: [2], values: [1, 1]}\n"
                       "nodes:\n"
                       "  - {name: mm, op: MatMul, inputs: [a, b]}\n"
                       "  - {name: y, op: Add, inputs: [mm, bias]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "MatMul"), 1);
    CU_ASSERT_EQUAL(count_op(f.opt, "Gemm"), 0);
    release(&f);
}

static const float gelu_x[8] = {-3, -1, -0.5f, 0, 0.5f, 1, 2, 3};
/* numpy, float64: 0.5 * x * (1 + erf(x / sqrt(2))) */
static const float gelu_exact[8] = {-0.00404969f, -0.15865526f, -0.15426877f, 0.0f,
                                    0.34573123f,  0.84134477f,  1.95449972f,  2.99595022f};
/* numpy, float64: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) */
static const float gelu_tanh[8] = {-0.00363739f, -0.15880801f, -0.15428600f, 0.0f,
                                   0.34571400f,  0.84119201f,  1.95459771f,  2.99636269f};

/* The Gelu op (opset 20) in both approximations. */
static void test_gelu_op(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                       "outputs: [e, t]\n"
                       "nodes:\n"
                       "  - {name: e, op: Gelu, inputs: [x]}\n"
                       "  - {name: t, op: Gelu, inputs: [x], attrs: {approximate: tanh}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_NONE);
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_NONE, "x", 1, (int64_t[]){8}, gelu_x); /* output e */
    expect_values(y, gelu_exact, 8, 2e-6f);
    tgc_tensor_release(y);
    release(&f);
    const char *bad = "format: tgc/1\n"
                      "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                      "outputs: [e]\n"
                      "nodes:\n"
                      "  - {name: e, op: Gelu, inputs: [x], attrs: {approximate: fast}}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load_string(bad, strlen(bad), "bad.yaml", NULL, d, &g), TGC_ERR_INVALID);
    tgc_diags_free(d);
}

/* Gelu with approximate tanh, output 1 of the graph above, alone. */
static void test_gelu_op_tanh(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                       "outputs: [t]\n"
                       "nodes:\n"
                       "  - {name: t, op: Gelu, inputs: [x], attrs: {approximate: tanh}}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_NONE);
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_NONE, "x", 1, (int64_t[]){8}, gelu_x);
    expect_values(y, gelu_tanh, 8, 2e-6f);
    tgc_tensor_release(y);
    release(&f);
}

/* PyTorch's export of GELU, x * (1 + erf(x / sqrt 2)) * 0.5, and another
 * association, (x * 0.5) * (1 + erf(x * (1 / sqrt 2))): each one Gelu. */
static void test_fuse_gelu(void) {
    const char *forms[] = {
        "  - {name: s, op: Div, inputs: [x, sqrt2]}\n"
        "  - {name: e, op: Erf, inputs: [s]}\n"
        "  - {name: a, op: Add, inputs: [e, one]}\n"
        "  - {name: m, op: Mul, inputs: [x, a]}\n"
        "  - {name: y, op: Mul, inputs: [m, half]}\n",
        "  - {name: s, op: Mul, inputs: [inv_sqrt2, x]}\n"
        "  - {name: e, op: Erf, inputs: [s]}\n"
        "  - {name: a, op: Add, inputs: [one, e]}\n"
        "  - {name: h, op: Mul, inputs: [x, half]}\n"
        "  - {name: y, op: Mul, inputs: [h, a]}\n",
    };
    for (int i = 0; i < 2; i++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml,
                 "format: tgc/1\n"
                 "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                 "outputs: [y]\n"
                 "initializers:\n"
                 "  - {name: sqrt2, dtype: float32, shape: [], values: [1.4142135]}\n"
                 "  - {name: inv_sqrt2, dtype: float32, shape: [], values: [0.70710677]}\n"
                 "  - {name: one, dtype: float32, shape: [], values: [1.0]}\n"
                 "  - {name: half, dtype: float32, shape: [], values: [0.5]}\n"
                 "nodes:\n%s",
                 forms[i]);
        fixture f;
        load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
        CU_ASSERT_EQUAL(count_op(f.opt, "Gelu"), 1);
        CU_ASSERT_EQUAL(count_op(f.opt, "Erf") + count_op(f.opt, "Mul") + count_op(f.opt, "Add"), 0);
        const tgc_node *y = node_named(f.opt, "y");
        CU_ASSERT(y != NULL && strcmp(y->op_name, "Gelu") == 0);
        tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 1, (int64_t[]){8}, gelu_x);
        expect_values(out, gelu_exact, 8, 2e-6f);
        tgc_tensor_release(out);
        release(&f);
    }
}

/* SiLU as exporters write it, Mul(x, Sigmoid(x)) in either operand order:
 * one _Swish named after the Mul, with x * sigmoid(x) in double (numpy) as
 * the reference, and bitwise the unfused graph's values; left alone where
 * the Sigmoid has another reader, where the Mul broadcasts, and where the
 * Mul's other operand is not the Sigmoid's input. */
static void test_fuse_swish(void) {
    static const float want[8] = {-0.14227762f, -0.268941421f, -0.188770334f, 0.0f,
                                  0.311229666f, 0.731058579f,  1.76159416f,   2.85772238f};
    const char *forms[] = {"  - {name: y, op: Mul, inputs: [x, s]}\n", "  - {name: y, op: Mul, inputs: [s, x]}\n"};
    for (int i = 0; i < 2; i++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "format: tgc/1\n"
                 "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                 "outputs: [y]\n"
                 "nodes:\n"
                 "  - {name: s, op: Sigmoid, inputs: [x]}\n%s",
                 forms[i]);
        fixture f;
        load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
        CU_ASSERT_EQUAL(count_op(f.opt, "_Swish"), 1);
        CU_ASSERT_EQUAL(count_op(f.opt, "Sigmoid") + count_op(f.opt, "Mul"), 0);
        const tgc_node *y = node_named(f.opt, "y");
        CU_ASSERT(y != NULL && strcmp(y->op_name, "_Swish") == 0);
        tgc_tensor *fused = run1(f.g, TGC_OPTIMIZE_ALL, "x", 1, (int64_t[]){8}, gelu_x);
        tgc_tensor *plain = run1(f.g, TGC_OPTIMIZE_NONE, "x", 1, (int64_t[]){8}, gelu_x);
        expect_values(fused, want, 8, 1e-6f);
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(fused), tgc_tensor_data(plain), 8 * sizeof(float)), 0);
        tgc_tensor_release(fused);
        tgc_tensor_release(plain);
        release(&f);
    }
    const char *kept[] = {
        /* the Sigmoid is an output too */
        "outputs: [y, s]\nnodes:\n  - {name: s, op: Sigmoid, inputs: [x]}\n"
        "  - {name: y, op: Mul, inputs: [x, s]}\n",
        /* a broadcasting Mul: Sigmoid of a row times a matrix */
        "outputs: [y]\nnodes:\n  - {name: s, op: Sigmoid, inputs: [x]}\n"
        "  - {name: y, op: Mul, inputs: [m, s]}\n",
        /* Sigmoid(x) times another value */
        "outputs: [y]\nnodes:\n  - {name: s, op: Sigmoid, inputs: [x]}\n"
        "  - {name: n, op: Neg, inputs: [x]}\n  - {name: y, op: Mul, inputs: [n, s]}\n",
    };
    for (int i = 0; i < 3; i++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "format: tgc/1\n"
                 "inputs: [{name: x, dtype: float32, shape: [8]}, {name: m, dtype: float32, shape: [2, 8]}]\n%s",
                 kept[i]);
        fixture f;
        load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
        CU_ASSERT_EQUAL(count_op(f.opt, "_Swish"), 0);
        release(&f);
    }
}

/* GPT-2's tanh GELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with
 * x^3 as Pow or as PyTorch's x * (x * x), is one Gelu with approximate
 * "tanh"; values by numpy (gelu_tanh). */
static void test_fuse_gelu_tanh(void) {
    const char *cubes[] = {"  - {name: p, op: Pow, inputs: [x, three]}\n",
                           /* PyTorch 1.13's export: x * (x * x) */
                           "  - {name: sq, op: Mul, inputs: [x, x]}\n"
                           "  - {name: p, op: Mul, inputs: [x, sq]}\n"};
    for (int i = 0; i < 2; i++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml,
                 "format: tgc/1\n"
                 "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                 "outputs: [y]\n"
                 "initializers:\n"
                 "  - {name: three, dtype: float32, shape: [], values: [3]}\n"
                 "  - {name: c, dtype: float32, shape: [], values: [0.044715]}\n"
                 "  - {name: k, dtype: float32, shape: [], values: [0.7978846]}\n"
                 "  - {name: one, dtype: float32, shape: [], values: [1]}\n"
                 "  - {name: half, dtype: float32, shape: [], values: [0.5]}\n"
                 "nodes:\n%s"
                 "  - {name: m, op: Mul, inputs: [c, p]}\n"
                 "  - {name: a, op: Add, inputs: [x, m]}\n"
                 "  - {name: s, op: Mul, inputs: [a, k]}\n"
                 "  - {name: t, op: Tanh, inputs: [s]}\n"
                 "  - {name: o, op: Add, inputs: [t, one]}\n"
                 "  - {name: h, op: Mul, inputs: [half, x]}\n"
                 "  - {name: y, op: Mul, inputs: [h, o]}\n",
                 cubes[i]);
        fixture f;
        load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
        CU_ASSERT_EQUAL(count_op(f.opt, "Gelu"), 1);
        CU_ASSERT_EQUAL(count_op(f.opt, "Tanh") + count_op(f.opt, "Pow") + count_op(f.opt, "Mul"), 0);
        const tgc_node *y = node_named(f.opt, "y");
        CU_ASSERT_FATAL(y != NULL && strcmp(y->op_name, "Gelu") == 0);
        const tgc_attr *a = tgc_node_attr(y, "approximate");
        CU_ASSERT(a != NULL && a->s != NULL && strcmp(a->s, "tanh") == 0);
        tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 1, (int64_t[]){8}, gelu_x);
        expect_values(out, gelu_tanh, 8, 2e-6f);
        tgc_tensor_release(out);
        release(&f);
    }
}

/* The decomposed LayerNormalization of exporters below opset 17 (here with
 * d * d for the square, eps 1e-3, gamma [1, 2, 0.5, -1], beta [0, 1, 0, 0.5])
 * is one LayerNormalization; values by numpy in float64. */
static void test_fuse_layer_norm(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [2, 4]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: eps, dtype: float32, shape: [], values: [0.001]}\n"
                       "  - {name: gamma, dtype: float32, shape: [4], values: [1, 2, 0.5, -1]}\n"
                       "  - {name: beta, dtype: float32, shape: [4], values: [0, 1, 0, 0.5]}\n"
                       "nodes:\n"
                       "  - {name: mean, op: ReduceMean, inputs: [x], attrs: {axes: [-1]}}\n"
                       "  - {name: d, op: Sub, inputs: [x, mean]}\n"
                       "  - {name: sq, op: Mul, inputs: [d, d]}\n"
                       "  - {name: var, op: ReduceMean, inputs: [sq], attrs: {axes: [1]}}\n"
                       "  - {name: ve, op: Add, inputs: [var, eps]}\n"
                       "  - {name: sd, op: Sqrt, inputs: [ve]}\n"
                       "  - {name: n, op: Div, inputs: [d, sd]}\n"
                       "  - {name: g, op: Mul, inputs: [gamma, n]}\n"
                       "  - {name: y, op: Add, inputs: [g, beta]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_ALL);
    CU_ASSERT_EQUAL(count_op(f.opt, "LayerNormalization"), 1);
    CU_ASSERT_EQUAL(count_op(f.opt, "ReduceMean"), 0);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT(y != NULL && strcmp(y->op_name, "LayerNormalization") == 0 && y->n_inputs == 3);
    tgc_tensor *out = run1(f.g, TGC_OPTIMIZE_ALL, "x", 2, (int64_t[]){2, 4}, (float[]){1, 2, 3, 4, -1, 0, 5, 2});
    expect_values(out,
                  (float[]){-1.341105f, 0.1059304f, 0.2235174f, -0.8411044f, -1.090986f, -0.3091827f, 0.7636899f,
                            0.2818029f},
                  8, 2e-6f);
    tgc_tensor_release(out);
    release(&f);
}

/* A chain of elementwise ops with a scalar initializer and a diamond (x
 * read twice) becomes one _FusedElementwise on cpu-only device lists and on
 * lists with a gpu (every device has the op's kernel), none without a list
 * (the devices unknown); its values are bitwise the unfused ones, and by
 * hand: y = sigmoid(2x + 1) * x, z = leaky_relu(relu(y - 0.25), 0.5)
 *   x = 0: y = 0, z = 0;  x = -0.5: 2x + 1 = 0, y = -0.25, z = 0
 *   x = 1: y = sigmoid(3) = 0.9525741268 -> z = 0.9525741268 - 0.25 = 0.7025741268. */
static void test_fuse_elementwise(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [N]}]\n"
                       "outputs: [z]\n"
                       "initializers:\n"
                       "  - {name: two, dtype: float32, shape: [], values: [2]}\n"
                       "  - {name: one, dtype: float32, shape: [1], values: [1]}\n"
                       "  - {name: q, dtype: float32, shape: [], values: [0.25]}\n"
                       "nodes:\n"
                       "  - {name: a, op: Mul, inputs: [x, two]}\n"
                       "  - {name: b, op: Add, inputs: [a, one]}\n"
                       "  - {name: s, op: Sigmoid, inputs: [b]}\n"
                       "  - {name: y, op: Mul, inputs: [s, x]}\n"
                       "  - {name: d, op: Sub, inputs: [y, q]}\n"
                       "  - {name: r, op: Relu, inputs: [d]}\n"
                       "  - {name: z, op: LeakyRelu, inputs: [r], attrs: {alpha: 0.5}}\n";
    fixture f;
    memset(&f, 0, sizeof f);
    f.diags = tgc_diags_create();
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "fuse.yaml", NULL, f.diags, &f.g), TGC_OK);
    tgc_graph *gpu = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_ALL, "cpu,gpu0", NULL, f.diags, &gpu), TGC_OK);
    CU_ASSERT_EQUAL(count_op(gpu, "_FusedElementwise"), 1);
    tgc_graph_free(gpu);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_ALL, NULL, NULL, f.diags, &gpu), TGC_OK);
    CU_ASSERT_EQUAL(count_op(gpu, "_FusedElementwise"), 0);
    tgc_graph_free(gpu);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_ALL, "cpu", &f.rep, f.diags, &f.opt), TGC_OK);
    CU_ASSERT_EQUAL(count_op(f.opt, "_FusedElementwise"), 1);
    CU_ASSERT_EQUAL(f.opt->n_nodes - f.opt->n_inputs_nodes, 4); /* three initializers and the group */
    const tgc_node *z = node_named(f.opt, "z");
    CU_ASSERT(z != NULL && strcmp(z->op_name, "_FusedElementwise") == 0 && tgc_node_attr(z, "ops")->n == 7);
    enum { N = 5000 }; /* several tiles and a ragged end */
    float *x = malloc(N * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (int i = 0; i < N; i++) x[i] = (float)((i * 37) % 401 - 200) / 50.0f;
    x[0] = 0, x[1] = -0.5f, x[2] = 1;
    tgc_tensor *fused = run1(f.g, TGC_OPTIMIZE_ALL, "x", 1, (int64_t[]){N}, x);
    tgc_tensor *plain = run1(f.g, TGC_OPTIMIZE_NONE, "x", 1, (int64_t[]){N}, x);
    CU_ASSERT_FATAL(fused != NULL && plain != NULL);
    CU_ASSERT(memcmp(tgc_tensor_data(fused), tgc_tensor_data(plain), N * sizeof(float)) == 0);
    const float *got = tgc_tensor_data(fused), want[3] = {0, 0, 0.7025741268f};
    for (int i = 0; i < 3; i++) CU_ASSERT(fabsf(got[i] - want[i]) <= 1e-6f);
    tgc_tensor_release(fused);
    tgc_tensor_release(plain);
    free(x);
    release(&f);
}

/* A row broadcast (a bias [3] of [N, 3], a period shorter than a tile)
 * joins the group: y = relu(x + b) * 2, bitwise the unfused values and by
 * hand for the first row: x = [-1, 0.5, 2], b = [0.5, -1, 1]:
 * relu([-0.5, -0.5, 3]) * 2 = [0, 0, 6]. */
static void test_fuse_elementwise_row_broadcast(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [N, 3]}]\n"
                       "outputs: [y]\n"
                       "initializers:\n"
                       "  - {name: b, dtype: float32, shape: [3], values: [0.5, -1, 1]}\n"
                       "  - {name: two, dtype: float32, shape: [1, 1], values: [2]}\n"
                       "nodes:\n"
                       "  - {name: s, op: Add, inputs: [b, x]}\n"
                       "  - {name: r, op: Relu, inputs: [s]}\n"
                       "  - {name: y, op: Mul, inputs: [two, r]}\n";
    fixture f;
    memset(&f, 0, sizeof f);
    f.diags = tgc_diags_create();
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "row.yaml", NULL, f.diags, &f.g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_ALL, "cpu", NULL, f.diags, &f.opt), TGC_OK);
    const tgc_node *y = node_named(f.opt, "y");
    CU_ASSERT_FATAL(y != NULL && strcmp(y->op_name, "_FusedElementwise") == 0);
    CU_ASSERT_EQUAL(tgc_graph_ref_info(f.opt, y->inputs[0])->shape.rank, 2); /* x, the full shape, first */
    enum { ROWS = 1501 };
    float *x = malloc(ROWS * 3 * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (int i = 0; i < ROWS * 3; i++) x[i] = (float)((i * 13) % 17 - 8) / 4.0f;
    x[0] = -1, x[1] = 0.5f, x[2] = 2;
    tgc_tensor *fused = run1(f.g, TGC_OPTIMIZE_ALL, "x", 2, (int64_t[]){ROWS, 3}, x);
    tgc_tensor *plain = run1(f.g, TGC_OPTIMIZE_NONE, "x", 2, (int64_t[]){ROWS, 3}, x);
    CU_ASSERT_FATAL(fused != NULL && plain != NULL);
    CU_ASSERT(memcmp(tgc_tensor_data(fused), tgc_tensor_data(plain), ROWS * 3 * sizeof(float)) == 0);
    const float *got = tgc_tensor_data(fused);
    CU_ASSERT(got[0] == 0 && got[1] == 0 && got[2] == 6);
    tgc_tensor_release(fused);
    tgc_tensor_release(plain);
    free(x);
    release(&f);
}

/* Which device lists form groups (the kernel registry has the op for cpu
 * and gpu), and a group never spans devices: a chain whose first half asks
 * for gpu0 and second half for cpu0 becomes two groups, each asking for its
 * members' device. */
static void test_fuse_elementwise_devices(void) {
    CU_ASSERT(tgc_pass_fusion_devices("cpu", TGC_FLOAT32));
    CU_ASSERT(tgc_pass_fusion_devices("cpu,gpu0", TGC_FLOAT32));
    CU_ASSERT(tgc_pass_fusion_devices("gpu1", TGC_FLOAT32));
    CU_ASSERT(!tgc_pass_fusion_devices(NULL, TGC_FLOAT32));
    CU_ASSERT(!tgc_pass_fusion_devices("", TGC_FLOAT32));
    CU_ASSERT(!tgc_pass_fusion_devices("cpu,tpu0", TGC_FLOAT32));
    CU_ASSERT(tgc_pass_fusion_devices("gpu0", TGC_FLOAT16)); /* float16 groups: the gpu's alone */
    CU_ASSERT(!tgc_pass_fusion_devices("cpu,gpu0", TGC_FLOAT16));
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [8]}]\n"
                       "outputs: [d]\n"
                       "nodes:\n"
                       "  - {name: a, op: Neg, inputs: [x], device: gpu0}\n"
                       "  - {name: b, op: Exp, inputs: [a], device: gpu0}\n"
                       "  - {name: c, op: Tanh, inputs: [b], device: cpu0}\n"
                       "  - {name: d, op: Relu, inputs: [c], device: cpu0}\n";
    fixture f;
    memset(&f, 0, sizeof f);
    f.diags = tgc_diags_create();
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "devs.yaml", NULL, f.diags, &f.g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_ALL, "cpu,gpu0", NULL, f.diags, &f.opt), TGC_OK);
    CU_ASSERT_EQUAL(count_op(f.opt, "_FusedElementwise"), 2);
    const tgc_node *b = node_named(f.opt, "b"), *d = node_named(f.opt, "d");
    CU_ASSERT_FATAL(b != NULL && d != NULL);
    CU_ASSERT(strcmp(b->op_name, "_FusedElementwise") == 0 && b->device != NULL && strcmp(b->device, "gpu0") == 0);
    CU_ASSERT(strcmp(d->op_name, "_FusedElementwise") == 0 && d->device != NULL && strcmp(d->device, "cpu0") == 0);
    release(&f);
}

/* tgc_graph_optimize with every host allocation failing in turn, over the
 * graph every pass rewrites: each fails cleanly (TGC_ERR_NOMEM or an
 * unchanged graph from a pass that gave up), nothing is left allocated,
 * and once nothing fails the result is the same graph as without faults. */
static void test_every_allocation_fails_in_turn(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load(tgc_test_path("tests/data/passes/every_pass.yaml"), d, &g), TGC_OK);
    tgc_graph *want = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "cpu", NULL, d, &want), TGC_OK);
    int64_t base = tgc_host_alloc_stats_get().live_blocks, failures = 0, left = 0, crashes = 0;
    for (int64_t n = 1; n < 200000; n++) {
        tgc_diags *dn = tgc_diags_create();
        int64_t before = tgc_host_alloc_stats_get().num_allocs;
        tgc_host_alloc_fail_nth(n);
        tgc_graph *opt = NULL;
        tgc_status st = tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "cpu", NULL, dn, &opt);
        tgc_host_alloc_fail_nth(0);
        failures += st != TGC_OK;
        crashes += st != TGC_OK && st != TGC_ERR_NOMEM && st != TGC_ERR_INVALID;
        bool done = st == TGC_OK && tgc_host_alloc_stats_get().num_allocs - before < n;
        if (done) CU_ASSERT_EQUAL(opt->n_nodes, want->n_nodes);
        tgc_graph_free(opt);
        tgc_diags_free(dn);
        left += tgc_host_alloc_stats_get().live_blocks != base;
        if (done) break;
    }
    printf("\n  %lld allocations failed in turn, each cleanly\n", (long long)failures);
    CU_ASSERT(failures > 100);
    CU_ASSERT_EQUAL(left, 0);
    CU_ASSERT_EQUAL(crashes, 0);
    tgc_graph_free(want);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A chain longer than a group may be (TGC_FUSED_MAX_STEPS) becomes several
 * groups, with the chain's value (x + 100, by hand); a file asking for a
 * longer program than the kernel takes is refused at load. */
static void test_fuse_elementwise_limits(void) {
    enum { LEN = 150 };
    size_t cap = 64 * LEN + 512, at = 0;
    char *yaml = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
    at += (size_t)snprintf(yaml + at, cap - at,
                           "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [4]}]\noutputs: [a%d]\n"
                           "initializers: [{name: one, dtype: float32, shape: [], values: [1]}]\nnodes:\n"
                           "  - {name: a0, op: Add, inputs: [x, one]}\n",
                           LEN - 1);
    for (int i = 1; i < LEN; i++)
        at += (size_t)snprintf(yaml + at, cap - at, "  - {name: a%d, op: Add, inputs: [a%d, one]}\n", i, i - 1);
    fixture f;
    memset(&f, 0, sizeof f);
    f.diags = tgc_diags_create();
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, at, "long.yaml", NULL, f.diags, &f.g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_optimize(f.g, TGC_OPTIMIZE_ALL, "cpu", NULL, f.diags, &f.opt), TGC_OK);
    int groups = count_op(f.opt, "_FusedElementwise");
    CU_ASSERT(groups >= (LEN + TGC_FUSED_MAX_STEPS - 1) / TGC_FUSED_MAX_STEPS && count_op(f.opt, "Add") <= 1);
    tgc_tensor *y = run1(f.g, TGC_OPTIMIZE_ALL, "x", 1, (int64_t[]){4}, (float[]){0, 1, -2, 0.5f});
    expect_values(y, (float[]){150, 151, 148, 150.5f}, 4, 0);
    tgc_tensor_release(y);
    release(&f);
    at = (size_t)snprintf(yaml, cap, "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [4]}]\noutputs: [y]\n"
                                     "nodes:\n  - {name: y, op: _FusedElementwise, inputs: [x], attrs: {ops: [Neg");
    for (int i = 1; i <= TGC_FUSED_MAX_STEPS; i++) at += (size_t)snprintf(yaml + at, cap - at, ", Neg");
    at += (size_t)snprintf(yaml + at, cap - at, "], operands: [0, -1");
    for (int i = 1; i <= TGC_FUSED_MAX_STEPS; i++) at += (size_t)snprintf(yaml + at, cap - at, ", %d, -1", i);
    at += (size_t)snprintf(yaml + at, cap - at, "], params: [0, 0, 0");
    for (int i = 1; i <= TGC_FUSED_MAX_STEPS; i++) at += (size_t)snprintf(yaml + at, cap - at, ", 0, 0, 0");
    at += (size_t)snprintf(yaml + at, cap - at, "]}}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load_string(yaml, at, "too_long.yaml", NULL, d, &g), TGC_ERR_INVALID);
    CU_ASSERT(tgc_diags_count(d) > 0 && strstr(tgc_diag_message(d, 0), "steps and") != NULL);
    tgc_diags_free(d);
    free(yaml);
}

/* The report names every pass of the level, in order, with node counts. */
static void test_report(void) {
    const char *yaml = "format: tgc/1\n"
                       "inputs: [{name: x, dtype: float32, shape: [2]}]\n"
                       "outputs: [y]\n"
                       "nodes:\n"
                       "  - {name: y, op: Relu, inputs: [x]}\n"
                       "  - {name: dead, op: Neg, inputs: [x]}\n";
    fixture f;
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_BASIC);
    CU_ASSERT_EQUAL_FATAL(f.rep.n_passes, 4);
    CU_ASSERT_STRING_EQUAL(f.rep.passes[0].name, "compute-in-float32");
    CU_ASSERT_STRING_EQUAL(f.rep.passes[1].name, "fold-constants");
    CU_ASSERT_STRING_EQUAL(f.rep.passes[3].name, "eliminate-dead");
    CU_ASSERT_EQUAL(f.rep.passes[3].nodes_before, 2);
    CU_ASSERT_EQUAL(f.rep.passes[3].nodes_after, 1);
    CU_ASSERT_EQUAL(f.rep.passes[3].rewrites, 1);
    release(&f);
    load_and_optimize(&f, yaml, TGC_OPTIMIZE_NONE); /* only the pass no level goes without */
    CU_ASSERT_EQUAL(f.rep.n_passes, 1);
    CU_ASSERT_EQUAL(f.rep.passes[0].rewrites, 0);
    CU_ASSERT_PTR_NOT_NULL(node_named(f.opt, "dead"));
    release(&f);
}

TGC_TEST_MAIN("passes", {"fold holds each value once", test_fold_holds_each_value_once},
              {"fold_constants", test_fold_constants},
              {"a Transpose of a large weight folds in its place", test_fold_large_transpose},
              {"trim_conv_taps to the centre", test_trim_conv_taps_to_centre},
              {"trim_conv_taps on one side", test_trim_conv_taps_one_side},
              {"fuse_pad into AveragePool", test_fuse_pad_average_pool}, {"fuse_pad into Conv", test_fuse_pad_conv},
              {"fold_leaves_failures_and_random", test_fold_leaves_failures_and_random},
              {"fold_chain", test_fold_chain}, {"fold_sequences", test_fold_sequences},
              {"eliminate_common", test_eliminate_common}, {"eliminate_dead", test_eliminate_dead},
              {"fold_batch_norm_conv", test_fold_batch_norm_conv}, {"fold_batch_norm_gemm", test_fold_batch_norm_gemm},
              {"fold_batch_norm_needs_only_reader", test_fold_batch_norm_needs_only_reader},
              {"matmul_add_to_gemm", test_matmul_add_to_gemm}, {"matmul_add_rank3_stays", test_matmul_add_rank3_stays},
              {"gelu_op", test_gelu_op}, {"gelu_op_tanh", test_gelu_op_tanh}, {"fuse_gelu", test_fuse_gelu},
              {"fuse_gelu_tanh", test_fuse_gelu_tanh}, {"fuse_swish", test_fuse_swish},
              {"fuse_layer_norm", test_fuse_layer_norm}, {"fuse_elementwise", test_fuse_elementwise},
              {"fuse_elementwise_row_broadcast", test_fuse_elementwise_row_broadcast},
              {"fuse_elementwise_limits", test_fuse_elementwise_limits},
              {"fuse_elementwise_devices", test_fuse_elementwise_devices},
              {"every_allocation_fails_in_turn", test_every_allocation_fails_in_turn}, {"report", test_report})
