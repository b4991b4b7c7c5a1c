/* Control flow run by the executor (executor/control_flow.c): If, Loop,
 * Scan, SequenceMap and the sequence ops, through sessions on the cpu.
 * Every expected value is worked out by hand (or by a plain C loop written
 * here from ONNX's definition of the op), never taken from tgc. Also: a
 * loop of 10^5 iterations runs in flat memory (the bytes in use at
 * iteration 10^5 are those at iteration 10), a carried value is overwritten
 * in place rather than copied, a kernel failing in iteration k fails the
 * step naming the node, the iteration and the device, and a loop past the
 * session's max_iterations stops cleanly. The harness checks that no host
 * block leaks. */
#include "tests/harness.h"

#include "executor/session.h"
#include "executor/step.h"
#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct run {
    tgc_diags *diags;
    tgc_graph *g;
    tgc_session *s;
} run;

static bool open_run(run *r, const char *text, const tgc_session_options *o) {
    memset(r, 0, sizeof *r);
    r->diags = tgc_diags_create();
    if (tgc_graph_load_string(text, strlen(text), "cf.yaml", NULL, r->diags, &r->g) != TGC_OK ||
        tgc_session_create(r->g, "cpu", o, r->diags, &r->s) != TGC_OK) {
        tgc_diags_print(r->diags, stderr);
        return false;
    }
    return true;
}

static void close_run(run *r) {
    tgc_session_free(r->s);
    tgc_graph_free(r->g);
    tgc_diags_free(r->diags);
}

static tgc_tensor *f32(int rank, const int64_t *dims, const float *v) {
    tgc_tensor *t = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_FLOAT32, rank, dims, v, &t) == TGC_OK);
    return t;
}

static tgc_tensor *i64(int64_t v) {
    tgc_tensor *t = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_INT64, 0, NULL, &v, &t) == TGC_OK);
    return t;
}

static tgc_tensor *boolean(bool b) {
    uint8_t v = b;
    tgc_tensor *t = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_BOOL, 0, NULL, &v, &t) == TGC_OK);
    return t;
}

/* Output t is float32 of `rank` dims `dims` holding want[]. */
static void check_f32(const tgc_tensor *t, int rank, const int64_t *dims, const float *want) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(tgc_tensor_dtype(t), TGC_FLOAT32);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_rank(t), rank);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_dims(t)[d], dims[d]);
        n *= dims[d];
    }
    const float *got = tgc_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        if (fabsf(got[i] - want[i]) > 1e-5f * (1 + fabsf(want[i]))) {
            fprintf(stderr, "\nelement %lld: %g, want %g\n", (long long)i, got[i], want[i]);
            CU_FAIL("a value differs");
            return;
        }
}

static void release_all(tgc_tensor **t, int n) {
    for (int i = 0; i < n; i++) tgc_tensor_release(t[i]);
}

/* ---- If, Loop, Scan ---------------------------------------------------------------- */

static const char loop_text[] = "format: tgc/1\n"
                                "inputs:\n"
                                "  - {name: x, dtype: float32, shape: [N, 3]}\n"
                                "  - {name: m, dtype: int64, shape: []}\n"
                                "  - {name: c, dtype: bool, shape: []}\n"
                                "outputs: [loop, 'loop:1', pick]\n"
                                "initializers:\n"
                                "  - {name: zero, dtype: float32, shape: [3], values: [0, 0, 0]}\n"
                                "nodes:\n"
                                "  - name: loop\n"
                                "    op: Loop\n"
                                "    inputs: [m, '', zero]\n"
                                "    attrs:\n"
                                "      body:\n"
                                "        inputs: [{name: i}, {name: go}, {name: acc}]\n"
                                "        outputs: [go, next, row]\n"
                                "        nodes:\n"
                                "          - {name: row, op: Gather, inputs: [x, i], attrs: {axis: 0}}\n"
                                "          - {name: next, op: Add, inputs: [acc, row]}\n"
                                "  - name: pick\n"
                                "    op: If\n"
                                "    inputs: [c]\n"
                                "    attrs:\n"
                                "      else_branch: {outputs: [loop]}\n"
                                "      then_branch:\n"
                                "        outputs: [sq]\n"
                                "        nodes:\n"
                                "          - {name: sq, op: Mul, inputs: [loop, loop]}\n";

/* x = [[0 1 2] [3 4 5] [6 7 8] [9 10 11]], M = 4: the rows' sum is
 * [18 22 26]; the scan output stacks the rows (x itself); then_branch
 * squares the sum, else_branch gives it as it is. M = 0: no iteration, the
 * initial value and an empty scan output [0, 3]. */
static void test_loop_and_if(void) {
    run r;
    CU_ASSERT_FATAL(open_run(&r, loop_text, NULL));
    float xv[12];
    for (int i = 0; i < 12; i++) xv[i] = (float)i;
    const char *names[] = {"x", "m", "c"};
    for (int pass = 0; pass < 3; pass++) {
        tgc_tensor *feeds[3] = {f32(2, (int64_t[]){4, 3}, xv), i64(pass == 2 ? 0 : 4), boolean(pass == 0)};
        tgc_tensor *out[3] = {0};
        CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 3, names, feeds, out, r.diags), TGC_OK);
        if (pass < 2) {
            check_f32(out[0], 1, (int64_t[]){3}, (float[]){18, 22, 26});
            check_f32(out[1], 2, (int64_t[]){4, 3}, xv);
            check_f32(out[2], 1, (int64_t[]){3},
                      pass == 0 ? (float[]){324, 484, 676} : (float[]){18, 22, 26});
        } else {
            check_f32(out[0], 1, (int64_t[]){3}, (float[]){0, 0, 0});
            check_f32(out[1], 2, (int64_t[]){0, 3}, NULL);
            check_f32(out[2], 1, (int64_t[]){3}, (float[]){0, 0, 0});
        }
        release_all(out, 3);
        release_all(feeds, 3);
    }
    close_run(&r);
}

/* A while loop (no M): v doubles while it stays below 100, from 1: 1 2 4
 * ... 64 128, so 7 iterations and 128. A Loop whose carried value grows by
 * one element each time (Concat), M = 5: five ones. */
static void test_while_and_growing(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: start, dtype: int64, shape: []}\n"
                               "outputs: [while, 'while:1', grow]\n"
                               "initializers:\n"
                               "  - {name: yes, dtype: bool, shape: [], values: [true]}\n"
                               "  - {name: limit, dtype: int64, shape: [], values: [100]}\n"
                               "  - {name: five, dtype: int64, shape: [], values: [5]}\n"
                               "  - {name: empty, dtype: float32, shape: [0], values: []}\n"
                               "nodes:\n"
                               "  - name: while\n"
                               "    op: Loop\n"
                               "    inputs: ['', yes, start]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: j}, {name: go}, {name: v}]\n"
                               "        outputs: [more, doubled, j]\n"
                               "        nodes:\n"
                               "          - {name: doubled, op: Add, inputs: [v, v]}\n"
                               "          - {name: more, op: Less, inputs: [doubled, limit]}\n"
                               "  - name: grow\n"
                               "    op: Loop\n"
                               "    inputs: [five, '', empty]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: acc}]\n"
                               "        outputs: [c, grown]\n"
                               "        initializers:\n"
                               "          - {name: one, dtype: float32, shape: [1], values: [1]}\n"
                               "        nodes:\n"
                               "          - {name: grown, op: Concat, inputs: [acc, one], attrs: {axis: 0}}\n";
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, NULL));
    const char *names[] = {"start"};
    tgc_tensor *feeds[1] = {i64(1)}, *out[3] = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 1, names, feeds, out, r.diags), TGC_OK);
    CU_ASSERT_EQUAL(*(const int64_t *)tgc_tensor_data(out[0]), 128);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_dims(out[1])[0], 7); /* iteration numbers 0..6 */
    for (int i = 0; i < 7; i++) CU_ASSERT_EQUAL(((const int64_t *)tgc_tensor_data(out[1]))[i], i);
    check_f32(out[2], 1, (int64_t[]){5}, (float[]){1, 1, 1, 1, 1});
    release_all(out, 3);
    release_all(feeds, 1);
    close_run(&r);
}

/* Scan over x [2, 4] along axis 1 (4 steps), one state s (float32 [2])
 * starting at [0, 0], body s' = s + col: the scan output stacks each s' on
 * axis 1; a second scan input read backwards (direction 1) is stacked
 * backwards too (output direction 1), so it comes out as it went in.
 * Reference: the cumulative sums, by hand. */
static void test_scan(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: [2, 4]}\n"
                               "outputs: [scan, 'scan:1', 'scan:2']\n"
                               "initializers:\n"
                               "  - {name: s0, dtype: float32, shape: [2], values: [0, 0]}\n"
                               "nodes:\n"
                               "  - name: scan\n"
                               "    op: Scan\n"
                               "    inputs: [s0, x, x]\n"
                               "    attrs:\n"
                               "      num_scan_inputs: 2\n"
                               "      scan_input_axes: [1, 1]\n"
                               "      scan_input_directions: [0, 1]\n"
                               "      scan_output_axes: [1, -1]\n"
                               "      scan_output_directions: [0, 1]\n"
                               "      body:\n"
                               "        inputs: [{name: s}, {name: col}, {name: back}]\n"
                               "        outputs: [next, next, copy]\n"
                               "        nodes:\n"
                               "          - {name: next, op: Add, inputs: [s, col]}\n"
                               "          - {name: copy, op: Identity, inputs: [back]}\n";
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, NULL));
    float xv[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    const char *names[] = {"x"};
    tgc_tensor *feeds[1] = {f32(2, (int64_t[]){2, 4}, xv)}, *out[3] = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 1, names, feeds, out, r.diags), TGC_OK);
    check_f32(out[0], 1, (int64_t[]){2}, (float[]){10, 100});
    check_f32(out[1], 2, (int64_t[]){2, 4}, (float[]){1, 3, 6, 10, 10, 30, 60, 100});
    check_f32(out[2], 2, (int64_t[]){2, 4}, xv);
    release_all(out, 3);
    release_all(feeds, 1);
    close_run(&r);
}

/* Loops inside a loop: the outer body (i < 3) runs an inner Loop (j < 4)
 * whose body adds x * i + j to its sum, reading x two graphs out and i
 * one out. Sum over i, j of (x i + j) = x (0+1+2) 4 + 3 (0+1+2+3) = 12 x + 18. */
static void test_nested_loops(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: []}\n"
                               "outputs: [outer]\n"
                               "initializers:\n"
                               "  - {name: three, dtype: int64, shape: [], values: [3]}\n"
                               "  - {name: four, dtype: int64, shape: [], values: [4]}\n"
                               "  - {name: zero, dtype: float32, shape: [], values: [0]}\n"
                               "nodes:\n"
                               "  - name: outer\n"
                               "    op: Loop\n"
                               "    inputs: [three, '', zero]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: total}]\n"
                               "        outputs: [c, inner]\n"
                               "        nodes:\n"
                               "          - {name: fi, op: Cast, inputs: [i], attrs: {to: 1}}\n"
                               "          - {name: xi, op: Mul, inputs: [x, fi]}\n"
                               "          - name: inner\n"
                               "            op: Loop\n"
                               "            inputs: [four, '', total]\n"
                               "            attrs:\n"
                               "              body:\n"
                               "                inputs: [{name: j}, {name: c2}, {name: t}]\n"
                               "                outputs: [c2, t2]\n"
                               "                nodes:\n"
                               "                  - {name: fj, op: Cast, inputs: [j], attrs: {to: 1}}\n"
                               "                  - {name: term, op: Add, inputs: [xi, fj]}\n"
                               "                  - {name: t2, op: Add, inputs: [t, term]}\n";
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, NULL));
    const char *names[] = {"x"};
    tgc_tensor *feeds[1] = {f32(0, NULL, (float[]){2.5f})}, *out[1] = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 1, names, feeds, out, r.diags), TGC_OK);
    check_f32(out[0], 0, NULL, (float[]){12 * 2.5f + 18});
    release_all(out, 1);
    release_all(feeds, 1);
    close_run(&r);
}

/* ---- sequences ------------------------------------------------------------------- */

/* From a [] float x: s = [x, 2x] (SequenceConstruct), insert x+1 at 1:
 * [x, x+1, 2x]; erase position -1: [x, x+1]; length 2; at 1: x+1; concat
 * of s along a new axis 0: [x, x+1, 2x]; split of [1 2 3 4 5] by 2: [1 2]
 * [3 4] [5], then SequenceMap adds 10 to each: [11 12] [13 14] [15];
 * Optional(x) holds x; an empty optional holds nothing. */
static void test_sequences(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: [1]}\n"
                               "outputs: [erased, len, at, cat, mapped, has, got, none]\n"
                               "initializers:\n"
                               "  - {name: one, dtype: int64, shape: [], values: [1]}\n"
                               "  - {name: minus1, dtype: int64, shape: [], values: [-1]}\n"
                               "  - {name: fone, dtype: float32, shape: [1], values: [1]}\n"
                               "  - {name: ten, dtype: float32, shape: [1], values: [10]}\n"
                               "  - {name: five, dtype: float32, shape: [5], values: [1, 2, 3, 4, 5]}\n"
                               "  - {name: two, dtype: int64, shape: [], values: [2]}\n"
                               "nodes:\n"
                               "  - {name: xx, op: Add, inputs: [x, x]}\n"
                               "  - {name: x1, op: Add, inputs: [x, fone]}\n"
                               "  - {name: s, op: SequenceConstruct, inputs: [x, xx]}\n"
                               "  - {name: ins, op: SequenceInsert, inputs: [s, x1, one]}\n"
                               "  - {name: erased, op: SequenceErase, inputs: [ins, minus1]}\n"
                               "  - {name: len, op: SequenceLength, inputs: [erased]}\n"
                               "  - {name: at, op: SequenceAt, inputs: [erased, one]}\n"
                               "  - {name: cat, op: ConcatFromSequence, inputs: [ins], attrs: {axis: 0, new_axis: 1}}\n"
                               "  - {name: parts, op: SplitToSequence, inputs: [five, two]}\n"
                               "  - name: mapped\n"
                               "    op: SequenceMap\n"
                               "    inputs: [parts, ten]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: e}, {name: k}]\n"
                               "        outputs: [plus]\n"
                               "        nodes:\n"
                               "          - {name: plus, op: Add, inputs: [e, k]}\n"
                               "  - {name: opt, op: Optional, inputs: [x]}\n"
                               "  - {name: has, op: OptionalHasElement, inputs: [opt]}\n"
                               "  - {name: got, op: OptionalGetElement, inputs: [opt]}\n"
                               "  - {name: none, op: Optional, attrs: {type: float32}}\n";
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, NULL));
    const char *names[] = {"x"};
    tgc_tensor *feeds[1] = {f32(1, (int64_t[]){1}, (float[]){3})}, *out[8] = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 1, names, feeds, out, r.diags), TGC_OK);
    CU_ASSERT_EQUAL(tgc_tensor_kind_of(out[0]), TGC_TENSOR_SEQUENCE);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_list_length(out[0]), 2);
    for (int i = 0; i < 2; i++) {
        tgc_tensor *e = tgc_tensor_list_at(out[0], i);
        check_f32(e, 1, (int64_t[]){1}, (float[]){i == 0 ? 3.0f : 4.0f});
        tgc_tensor_release(e);
    }
    CU_ASSERT_EQUAL(*(const int64_t *)tgc_tensor_data(out[1]), 2);
    check_f32(out[2], 1, (int64_t[]){1}, (float[]){4});
    check_f32(out[3], 2, (int64_t[]){3, 1}, (float[]){3, 4, 6});
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_list_length(out[4]), 3);
    const float want[3][2] = {{11, 12}, {13, 14}, {15, 0}};
    for (int i = 0; i < 3; i++) {
        tgc_tensor *e = tgc_tensor_list_at(out[4], i);
        check_f32(e, 1, (int64_t[]){i < 2 ? 2 : 1}, want[i]);
        tgc_tensor_release(e);
    }
    CU_ASSERT_EQUAL(*(const uint8_t *)tgc_tensor_data(out[5]), 1);
    check_f32(out[6], 1, (int64_t[]){1}, (float[]){3});
    CU_ASSERT_EQUAL(tgc_tensor_kind_of(out[7]), TGC_TENSOR_OPTIONAL);
    CU_ASSERT_EQUAL(tgc_tensor_list_length(out[7]), 0);
    release_all(out, 8);
    release_all(feeds, 1);
    close_run(&r);
}

/* A sequence fed and fetched through the API: the loop appends x + i to
 * the sequence it is given, three times. */
static void test_sequence_feeds(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: s, dtype: seq(float32)}\n"
                               "  - {name: x, dtype: float32, shape: [2]}\n"
                               "outputs: [loop]\n"
                               "initializers:\n"
                               "  - {name: three, dtype: int64, shape: [], values: [3]}\n"
                               "nodes:\n"
                               "  - name: loop\n"
                               "    op: Loop\n"
                               "    inputs: [three, '', s]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: acc}]\n"
                               "        outputs: [c, more]\n"
                               "        nodes:\n"
                               "          - {name: fi, op: Cast, inputs: [i], attrs: {to: 1}}\n"
                               "          - {name: xi, op: Add, inputs: [x, fi]}\n"
                               "          - {name: more, op: SequenceInsert, inputs: [acc, xi]}\n";
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, NULL));
    tgc_tensor *first = f32(1, (int64_t[]){2}, (float[]){-1, -2}), *seq = NULL;
    CU_ASSERT_FATAL(tgc_sequence_create(TGC_FLOAT32, 1, &first, &seq) == TGC_OK);
    const char *names[] = {"s", "x"};
    tgc_tensor *feeds[2] = {seq, f32(1, (int64_t[]){2}, (float[]){5, 7})}, *out[1] = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 2, names, feeds, out, r.diags), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_list_length(out[0]), 4);
    const float want[4][2] = {{-1, -2}, {5, 7}, {6, 8}, {7, 9}};
    for (int i = 0; i < 4; i++) {
        tgc_tensor *e = tgc_tensor_list_at(out[0], i);
        check_f32(e, 1, (int64_t[]){2}, want[i]);
        tgc_tensor_release(e);
    }
    /* A tensor where the graph wants a sequence is refused before anything runs. */
    tgc_tensor *wrong[2] = {feeds[1], feeds[1]};
    tgc_tensor *none[1] = {0};
    CU_ASSERT_EQUAL(tgc_session_run(r.s, 2, names, wrong, none, r.diags), TGC_ERR_INVALID);
    release_all(out, 1);
    release_all(feeds, 2);
    tgc_tensor_release(first);
    close_run(&r);
}

/* ---- memory, failures, limits ------------------------------------------------------ */

/* v = v + 1 over [256] floats (and a scan of nothing): the loop the issue
 * asks for. */
static const char counter_text[] = "format: tgc/1\n"
                                   "inputs:\n"
                                   "  - {name: m, dtype: int64, shape: []}\n"
                                   "  - {name: v0, dtype: float32, shape: [256]}\n"
                                   "outputs: [loop]\n"
                                   "initializers:\n"
                                   "  - {name: one, dtype: float32, shape: [], values: [1]}\n"
                                   "nodes:\n"
                                   "  - name: loop\n"
                                   "    op: Loop\n"
                                   "    inputs: [m, '', v0]\n"
                                   "    attrs:\n"
                                   "      body:\n"
                                   "        inputs: [{name: i}, {name: c}, {name: v}]\n"
                                   "        outputs: [c, w]\n"
                                   "        nodes:\n"
                                   "          - {name: w, op: Add, inputs: [v, one]}\n";

typedef struct observed {
    tgc_session *s;
    int64_t at[2];              /* the iterations to look at */
    tgc_memory_figures cpu[2];  /* the cpu's figures there */
    tgc_host_alloc_stats host[2];
    int64_t host_device_bytes[2]; /* the host device's bytes in use */
} observed;

static void observe(void *ctx, const char *node, int64_t iteration) {
    observed *o = ctx;
    (void)node;
    for (int k = 0; k < 2; k++)
        if (iteration == o->at[k]) {
            o->cpu[k] = tgc_session_memory(o->s, 0);
            o->host[k] = tgc_host_alloc_stats_get();
            o->host_device_bytes[k] = tgc_device_stats(tgc_host_device()).bytes_in_use;
        }
}

/* 10^5 iterations (and one): the bytes in use (the cpu device's, the host
 * device's, and tgc's host blocks) at iteration 10^5 are those at
 * iteration 10; the
 * cpu device allocates nothing per iteration (the carried value is
 * overwritten in place, Add forwarding the buffer it is handed); and the
 * value is 10^5 more than it started. */
static void test_flat_memory(void) {
    run r;
    CU_ASSERT_FATAL(open_run(&r, counter_text, NULL));
    float v0[256];
    for (int i = 0; i < 256; i++) v0[i] = (float)i;
    /* One iteration more than the one looked at: after the last, no next one is fed. */
    const int64_t iterations = 100000, runs = iterations + 1;
    observed o = {.s = r.s, .at = {10, iterations}};
    tgc_control_observe(observe, &o);
    const char *names[] = {"m", "v0"};
    tgc_tensor *feeds[2] = {i64(runs), f32(1, (int64_t[]){256}, v0)}, *out[1] = {0};
    tgc_memory_figures before = tgc_session_memory(r.s, 0);
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(r.s, 2, names, feeds, out, r.diags), TGC_OK);
    tgc_control_observe(NULL, NULL);
    float want[256];
    for (int i = 0; i < 256; i++) want[i] = (float)i + (float)runs;
    check_f32(out[0], 1, (int64_t[]){256}, want);
    printf("\n  cpu0 bytes in use at iteration 10: %lld, at iteration %lld: %lld; host blocks %lld and %lld "
           "(%lld and %lld bytes); cpu0 allocations between: %lld\n",
           (long long)o.cpu[0].bytes_in_use, (long long)iterations, (long long)o.cpu[1].bytes_in_use,
           (long long)o.host[0].live_blocks, (long long)o.host[1].live_blocks, (long long)o.host[0].live_bytes,
           (long long)o.host[1].live_bytes, (long long)(o.cpu[1].num_allocs - o.cpu[0].num_allocs));
    CU_ASSERT_EQUAL(o.cpu[0].bytes_in_use, o.cpu[1].bytes_in_use);
    CU_ASSERT_EQUAL(o.cpu[0].live_buffers, o.cpu[1].live_buffers);
    CU_ASSERT_EQUAL(o.host[0].live_blocks, o.host[1].live_blocks);
    CU_ASSERT_EQUAL(o.host[0].live_bytes, o.host[1].live_bytes);
    CU_ASSERT_EQUAL(o.host_device_bytes[0], o.host_device_bytes[1]);
    CU_ASSERT_EQUAL(o.cpu[1].num_allocs, o.cpu[0].num_allocs); /* in place: no allocation per iteration */
    CU_ASSERT(o.cpu[1].peak_bytes_in_use <= o.cpu[0].peak_bytes_in_use + 1024);
    tgc_memory_figures after = tgc_session_memory(r.s, 0);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    release_all(out, 1);
    release_all(feeds, 2);
    close_run(&r);
}

/* Gather reads row i of x [2, 4] in iteration i of a Loop of 4: iteration
 * 2 fails; the step fails naming the node, the iteration, the loop and the
 * device, at the node's line, and releases everything. */
static void test_failure_names_the_iteration(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: [N, 4]}\n"
                               "outputs: [count]\n"
                               "initializers:\n"
                               "  - {name: four, dtype: int64, shape: [], values: [4]}\n"
                               "  - {name: z, dtype: float32, shape: [4], values: [0, 0, 0, 0]}\n"
                               "nodes:\n"
                               "  - name: count\n"
                               "    op: Loop\n"
                               "    inputs: [four, '', z]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: acc}]\n"
                               "        outputs: [c, sum]\n"
                               "        nodes:\n"
                               "          - {name: row, op: Gather, inputs: [x, i], attrs: {axis: 0}}\n"
                               "          - {name: sum, op: Add, inputs: [acc, row]}\n";
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, NULL));
    tgc_memory_figures before = tgc_session_memory(r.s, 0);
    const char *names[] = {"x"};
    tgc_tensor *feeds[1] = {f32(2, (int64_t[]){2, 4}, (float[]){1, 2, 3, 4, 5, 6, 7, 8})}, *out[1] = {0};
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_session_run(r.s, 1, names, feeds, out, d), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NULL(out[0]);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(d), 1);
    const char *msg = tgc_diag_message(d, 0);
    CU_ASSERT(strstr(msg, "node 'row' (Gather) on cpu0 in iteration 2 of Loop 'count'") != NULL);
    CU_ASSERT_EQUAL(tgc_diag_line(d, 0), 17);
    if (strstr(msg, "in iteration 2") == NULL) fprintf(stderr, "\n%s\n", msg);
    tgc_diags_free(d);
    tgc_memory_figures after = tgc_session_memory(r.s, 0);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    release_all(feeds, 1);
    close_run(&r);
}

/* A loop whose condition never turns false, with max_iterations 1000: a
 * clean error naming the loop (rule max-iterations); the observer sees
 * exactly 1000 iterations. */
static void count_iterations(void *ctx, const char *node, int64_t iteration) {
    (void)node;
    *(int64_t *)ctx = iteration;
}

static void test_max_iterations(void) {
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: [3]}\n"
                               "outputs: [forever]\n"
                               "initializers:\n"
                               "  - {name: yes, dtype: bool, shape: [], values: [true]}\n"
                               "nodes:\n"
                               "  - name: forever\n"
                               "    op: Loop\n"
                               "    inputs: ['', yes, x]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: v}]\n"
                               "        outputs: [c, w]\n"
                               "        nodes:\n"
                               "          - {name: w, op: Neg, inputs: [v]}\n";
    tgc_session_options opts = {.max_iterations = 1000};
    run r;
    CU_ASSERT_FATAL(open_run(&r, text, &opts));
    int64_t seen = 0;
    tgc_control_observe(count_iterations, &seen);
    const char *names[] = {"x"};
    tgc_tensor *feeds[1] = {f32(1, (int64_t[]){3}, (float[]){1, 2, 3})}, *out[1] = {0};
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_session_run(r.s, 1, names, feeds, out, d), TGC_ERR_RUNTIME);
    tgc_control_observe(NULL, NULL);
    CU_ASSERT_EQUAL(seen, 1000);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(d), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 0), "max-iterations");
    CU_ASSERT(strstr(tgc_diag_message(d, 0), "node 'forever' (Loop)") != NULL);
    CU_ASSERT(strstr(tgc_diag_message(d, 0), "1000 iterations") != NULL);
    tgc_diags_free(d);
    release_all(feeds, 1);
    close_run(&r);
}

/* Out of memory at each host allocation of a run of the loop and the If
 * (the first 400): a clean status, never a crash or a leak. */
static void test_run_survives_allocation_failures(void) {
    run r;
    CU_ASSERT_FATAL(open_run(&r, loop_text, NULL));
    float xv[12] = {0};
    const char *names[] = {"x", "m", "c"};
    for (int64_t n = 1; n <= 400; n++) {
        tgc_tensor *feeds[3] = {f32(2, (int64_t[]){4, 3}, xv), i64(4), boolean(true)};
        tgc_tensor *out[3] = {0};
        tgc_diags *d = tgc_diags_create();
        tgc_host_alloc_fail_nth(n);
        tgc_status s = tgc_session_run(r.s, 3, names, feeds, out, d);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(s == TGC_OK || s == TGC_ERR_NOMEM || s == TGC_ERR_RUNTIME);
        release_all(out, 3);
        release_all(feeds, 3);
        tgc_diags_free(d);
    }
    close_run(&r);
}

/* ---- a body across devices ---------------------------------------------------- */

/* A Loop whose body spans gpu0 and cpu0: v' = (v * 0.5 on gpu0) + 1 on
 * cpu0, so each iteration sends h from gpu0 to cpu0 through the rendezvous,
 * and the carried value goes back to gpu0 as the next iteration's feed.
 * The reference repeats the two float32 roundings in C. Keys carry the
 * frame and the iteration: were they not, the second iteration's _Send
 * would find its key sent already and the run would fail. */
static void test_body_across_devices(void) {
    tgc_device_info info[4];
    if (tgc_devices_list(info, 4) < 2) {
        printf("\n  notice: no OpenCL device; skipped\n");
        return;
    }
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: v0, dtype: float32, shape: [8]}\n"
                               "outputs: [loop]\n"
                               "initializers:\n"
                               "  - {name: m, dtype: int64, shape: [], values: [40]}\n"
                               "  - {name: half, dtype: float32, shape: [], values: [0.5]}\n"
                               "  - {name: one, dtype: float32, shape: [], values: [1]}\n"
                               "nodes:\n"
                               "  - name: loop\n"
                               "    op: Loop\n"
                               "    inputs: [m, '', v0]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: v}]\n"
                               "        outputs: [c, w]\n"
                               "        nodes:\n"
                               "          - {name: h, op: Mul, inputs: [v, half], device: gpu0}\n"
                               "          - {name: w, op: Add, inputs: [h, one], device: cpu0}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_FATAL(tgc_graph_load_string(text, strlen(text), "across.yaml", NULL, d, &g) == TGC_OK);
    /* The partitions: the body's on both devices, with pairs between them. */
    tgc_placed *placed = NULL;
    tgc_partitions *parts = NULL;
    CU_ASSERT_FATAL(tgc_graph_place(g, "cpu,gpu0", NULL, d, &placed) == TGC_OK);
    CU_ASSERT_FATAL(tgc_graph_partition(g, placed, d, &parts) == TGC_OK);
    CU_ASSERT_EQUAL(tgc_partitions_validate(parts, d), TGC_OK);
    bool body_cpu = false, body_gpu = false;
    for (int i = 0; i < tgc_partitions_count(parts); i++) {
        body_cpu |= strcmp(tgc_partitions_label(parts, i), "loop.body@cpu0") == 0;
        body_gpu |= strcmp(tgc_partitions_label(parts, i), "loop.body@gpu0") == 0;
    }
    CU_ASSERT(body_cpu && body_gpu);
    CU_ASSERT(tgc_partitions_pair_count(parts) >= 1); /* h: gpu0 -> cpu0 */
    tgc_partitions_free(parts);
    tgc_placed_free(placed);
    tgc_session *s = NULL;
    CU_ASSERT_FATAL(tgc_session_create(g, "cpu,gpu0", NULL, d, &s) == TGC_OK);
    float v0[8];
    double want_d[8];
    for (int k = 0; k < 8; k++) v0[k] = want_d[k] = (float)k;
    for (int it = 0; it < 40; it++)
        for (int k = 0; k < 8; k++) want_d[k] = (double)(float)((float)want_d[k] * 0.5f) + 1.0;
    float want[8];
    for (int k = 0; k < 8; k++) want[k] = (float)want_d[k];
    const char *names[] = {"v0"};
    tgc_memory_figures before[2] = {tgc_session_memory(s, 0), tgc_session_memory(s, 1)};
    for (int rep = 0; rep < 2; rep++) { /* twice: a second step starts from a clean rendezvous */
        tgc_tensor *feeds[1] = {f32(1, (int64_t[]){8}, v0)}, *out[1] = {0};
        CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, feeds, out, d), TGC_OK);
        check_f32(out[0], 1, (int64_t[]){8}, want);
        release_all(out, 1);
        release_all(feeds, 1);
    }
    for (int dev = 0; dev < 2; dev++) { /* every iteration's buffers went back, on both devices */
        tgc_memory_figures after = tgc_session_memory(s, dev);
        CU_ASSERT_EQUAL(after.bytes_in_use, before[dev].bytes_in_use);
        CU_ASSERT_EQUAL(after.live_buffers, before[dev].live_buffers);
    }
    tgc_diags_print(d, stderr);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* The failure of a body spanning devices: row = x[i] on cpu0, w = acc + row
 * on gpu0 (which waits on a _Recv for row). x has 2 rows, so iteration 2's
 * Gather fails on cpu0 while gpu0 waits for its row: the whole step stops,
 * naming the node, the device and the iteration, both devices' buffers go
 * back, and the session runs again with 4 rows (sums by hand). */
static void test_failure_across_devices(void) {
    tgc_device_info info[4];
    if (tgc_devices_list(info, 4) < 2) {
        printf("\n  notice: no OpenCL device; skipped\n");
        return;
    }
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: [N, 4]}\n"
                               "outputs: [count]\n"
                               "initializers:\n"
                               "  - {name: four, dtype: int64, shape: [], values: [4]}\n"
                               "  - {name: z, dtype: float32, shape: [4], values: [0, 0, 0, 0]}\n"
                               "nodes:\n"
                               "  - name: count\n"
                               "    op: Loop\n"
                               "    inputs: [four, '', z]\n"
                               "    attrs:\n"
                               "      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: acc}]\n"
                               "        outputs: [c, sum]\n"
                               "        nodes:\n"
                               "          - {name: row, op: Gather, inputs: [x, i], attrs: {axis: 0}, device: cpu0}\n"
                               "          - {name: sum, op: Add, inputs: [acc, row], device: gpu0}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    CU_ASSERT_FATAL(tgc_graph_load_string(text, strlen(text), "fail.yaml", NULL, d, &g) == TGC_OK);
    CU_ASSERT_FATAL(tgc_session_create(g, "cpu,gpu0", NULL, d, &s) == TGC_OK);
    tgc_memory_figures before[2] = {tgc_session_memory(s, 0), tgc_session_memory(s, 1)};
    const char *names[] = {"x"};
    tgc_tensor *feeds[1] = {f32(2, (int64_t[]){2, 4}, (float[]){1, 2, 3, 4, 5, 6, 7, 8})}, *out[1] = {0};
    CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, feeds, out, d), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NULL(out[0]);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(d), 1);
    const char *msg = tgc_diag_message(d, 0);
    CU_ASSERT(strstr(msg, "node 'row' (Gather) on cpu0 in iteration 2 of Loop 'count'") != NULL);
    if (strstr(msg, "in iteration 2") == NULL) fprintf(stderr, "\n%s\n", msg);
    release_all(feeds, 1);
    for (int dev = 0; dev < 2; dev++) {
        tgc_memory_figures after = tgc_session_memory(s, dev);
        CU_ASSERT_EQUAL(after.bytes_in_use, before[dev].bytes_in_use);
        CU_ASSERT_EQUAL(after.live_buffers, before[dev].live_buffers);
    }
    tgc_diags_free(d);
    d = tgc_diags_create();
    float x4[16];
    for (int k = 0; k < 16; k++) x4[k] = (float)k; /* column j sums to j + (j + 4) + (j + 8) + (j + 12) */
    feeds[0] = f32(2, (int64_t[]){4, 4}, x4);
    CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, feeds, out, d), TGC_OK);
    check_f32(out[0], 1, (int64_t[]){4}, (float[]){24, 28, 32, 36});
    release_all(out, 1);
    release_all(feeds, 1);
    tgc_diags_print(d, stderr);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("control flow", {"loop and if", test_loop_and_if}, {"while and growing", test_while_and_growing},
              {"scan", test_scan}, {"nested loops", test_nested_loops}, {"sequences", test_sequences},
              {"sequence feeds", test_sequence_feeds}, {"flat memory", test_flat_memory},
              {"failure names the iteration", test_failure_names_the_iteration},
              {"max iterations", test_max_iterations},
              {"run survives allocation failures", test_run_survives_allocation_failures},
              {"a body across devices", test_body_across_devices},
              {"a failure across devices", test_failure_across_devices})
