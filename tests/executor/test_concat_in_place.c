/* Concat in place (executor/concat_in_place.h): the producers of a batch-1
 * Concat's inputs write into their places in its output, and the Concat
 * copies nothing. The graph (x of [1, 4, 8, 8] float32: 1024 bytes a part):
 *
 *   a = Neg(x)       b0 = Abs(x)    b = Relu(b0)    (Relu takes over b0's buffer)
 *   c = Concat(a, b, axis 1)        d = Mul(x, x)   z = Relu(x)
 *   e = Concat(c, d, axis -3)       (c, itself a Concat, a part of e)
 *   outputs e, z
 *
 * By hand: e = [-x, |x|, x * x] along the channels, z = max(x, 0); every
 * value one rounding from x (Neg, Abs, Relu exact; Mul rounded once, as
 * here). Memory by hand: e's 3072 bytes, made when `a` runs, and z's 1024:
 * 4096 bytes at the peak, where copying Concats held a, b, c and d with e
 * (7168). A value that two Concats read (DenseNet's way) is copied into
 * both, and a Concat whose whole would be live beside a larger value
 * copies. */
#include "tests/harness.h"

#include "devices/device.h"
#include "executor/session.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PART 256 /* floats a part: 4 x 8 x 8 */

static const char graph_yaml[] = "format: tgc/1\n"
                                 "inputs: [{name: x, dtype: float32, shape: [1, 4, 8, 8]}]\n"
                                 "outputs: [e, z]\n"
                                 "nodes:\n"
                                 "  - {name: a, op: Neg, inputs: [x]}\n"
                                 "  - {name: b0, op: Abs, inputs: [x]}\n"
                                 "  - {name: b, op: Relu, inputs: [b0]}\n"
                                 "  - {name: c, op: Concat, inputs: [a, b], attrs: {axis: 1}}\n"
                                 "  - {name: d, op: Mul, inputs: [x, x]}\n"
                                 "  - {name: z, op: Relu, inputs: [x]}\n"
                                 "  - {name: e, op: Concat, inputs: [c, d], attrs: {axis: -3}}\n";

/* p and q read by two Concats: copied into both; r in place in y2. */
static const char shared_yaml[] = "format: tgc/1\n"
                                  "inputs: [{name: x, dtype: float32, shape: [1, 4, 8, 8]}]\n"
                                  "outputs: [y1, y2]\n"
                                  "nodes:\n"
                                  "  - {name: p, op: Neg, inputs: [x]}\n"
                                  "  - {name: q, op: Abs, inputs: [x]}\n"
                                  "  - {name: r, op: Mul, inputs: [x, x]}\n"
                                  "  - {name: y1, op: Concat, inputs: [p, q], attrs: {axis: 1}}\n"
                                  "  - {name: y2, op: Concat, inputs: [p, q, r], attrs: {axis: 1}}\n";

/* A Concat whose whole, made with its first part, would be live beside a
 * larger value made between its parts (t, 8192 bytes): copying holds a, t
 * and s at most (9220 bytes); in place would hold c's 2048 with t and s
 * (10244), so c copies. */
static const char larger_yaml[] = "format: tgc/1\n"
                                  "inputs: [{name: x, dtype: float32, shape: [1, 4, 8, 8]}]\n"
                                  "outputs: [c]\n"
                                  "nodes:\n"
                                  "  - {name: a, op: Neg, inputs: [x]}\n"
                                  "  - {name: t, op: Concat, inputs: [x, x, x, x, x, x, x, x], attrs: {axis: 1}}\n"
                                  "  - {name: s, op: ReduceSum, inputs: [t]}\n"
                                  "  - {name: b, op: Add, inputs: [x, s]}\n"
                                  "  - {name: c, op: Concat, inputs: [a, b], attrs: {axis: 1}}\n";

/* The same Concat over a batch of 2: its inputs interleave in its output
 * (not in place), copied as before. */
static const char batch_yaml[] = "format: tgc/1\n"
                                 "inputs: [{name: x, dtype: float32, shape: [2, 2, 8, 8]}]\n"
                                 "outputs: [c]\n"
                                 "nodes:\n"
                                 "  - {name: a, op: Neg, inputs: [x]}\n"
                                 "  - {name: b, op: Abs, inputs: [x]}\n"
                                 "  - {name: c, op: Concat, inputs: [a, b], attrs: {axis: 1}}\n";

static float x_at(int i) { return (float)((i * 37) % 23 - 11) * 0.375f; }

typedef struct fixture {
    tgc_diags *d;
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x;
} fixture;

static bool open_fixture(fixture *f, const char *yaml, const char *threads, int64_t batch, int64_t channels) {
    memset(f, 0, sizeof *f);
    f->d = tgc_diags_create();
    tgc_session_options o = {.threads = threads, .optimize = TGC_OPTIMIZE_NONE};
    if (tgc_graph_load_string(yaml, strlen(yaml), "concat.yaml", NULL, f->d, &f->g) != TGC_OK ||
        tgc_session_create(f->g, "cpu", &o, f->d, &f->s) != TGC_OK ||
        tgc_tensor_alloc(TGC_FLOAT32, 4, (int64_t[]){batch, channels, 8, 8}, &f->x) != TGC_OK) {
        tgc_diags_print(f->d, stderr);
        return false;
    }
    float *x = (float *)tgc_tensor_data(f->x);
    for (int i = 0; i < batch * channels * 64; i++) x[i] = x_at(i);
    return true;
}

static void close_fixture(fixture *f) {
    tgc_tensor_release(f->x);
    tgc_session_free(f->s);
    tgc_graph_free(f->g);
    tgc_diags_free(f->d);
}

/* The last message of f's diagnostics, or "". */
static const char *last_message(const fixture *f) {
    size_t n = tgc_diags_count(f->d);
    return n > 0 ? tgc_diag_message(f->d, n - 1) : "";
}

/* How node `name` of the session's one partition last ran (its kernel's
 * impl), or "" when it did not say; a node not there fails the test. */
static const char *impl_of(const tgc_session *s, const char *name) {
    const tgc_plan *p = &s->plans[0];
    for (int32_t id = 0; id < p->g->n_nodes; id++)
        if (strcmp(p->g->nodes[id].name, name) == 0) {
            const char *impl = atomic_load(&p->impl[id]);
            return impl != NULL ? impl : "";
        }
    CU_FAIL("no such node");
    return "";
}

/* Runs once; the number of elements of e and z that differ from the hand
 * values (-1: the run failed). */
static int run_and_check(fixture *f) {
    const char *names[] = {"x"};
    tgc_tensor *out[2] = {NULL, NULL};
    if (tgc_session_run(f->s, 1, names, &f->x, out, f->d) != TGC_OK) return -1;
    const float *e = tgc_tensor_data(out[0]), *z = tgc_tensor_data(out[1]);
    int bad = 0;
    for (int i = 0; i < PART; i++) {
        float x = x_at(i);
        bad += e[i] != -x;
        bad += e[PART + i] != fabsf(x);
        bad += e[2 * PART + i] != x * x;
        bad += z[i] != (x > 0 ? x : 0.0f);
    }
    tgc_tensor_release(out[0]);
    tgc_tensor_release(out[1]);
    return bad;
}

static void check_in_place(const char *threads) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, graph_yaml, threads, 1, 4));
    for (int r = 0; r < 20; r++) CU_ASSERT_EQUAL(run_and_check(&f), 0);
    CU_ASSERT_STRING_EQUAL(impl_of(f.s, "c"), "in place");
    CU_ASSERT_STRING_EQUAL(impl_of(f.s, "e"), "in place");
    tgc_memory_figures m = tgc_session_memory(f.s, 0);
    CU_ASSERT_EQUAL(m.peak_bytes_in_use, 4096);
    CU_ASSERT_EQUAL(m.bytes_in_use, 0);
    close_fixture(&f);
}

static void test_one_thread(void) { check_in_place("cpu=1"); }

/* The producers of one Concat run side by side: the whole is made once. */
static void test_two_threads(void) { check_in_place("cpu=2"); }

/* The static plan counts the same buffer: 4096 bytes at most. */
static void test_plan(void) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, graph_yaml, "cpu=1", 1, 4));
    tgc_memory_plan *mp = NULL;
    tgc_memory_plan_options o = {.optimize = TGC_OPTIMIZE_NONE};
    CU_ASSERT_FATAL(tgc_graph_memory_plan(f.g, "cpu", &o, f.d, &mp) == TGC_OK);
    CU_ASSERT_EQUAL(tgc_memory_plan_get(mp, 0).lower_bound, 4096);
    CU_ASSERT_EQUAL(tgc_memory_plan_get(mp, 0).planned_peak, 4096);
    tgc_memory_plan_free(mp);
    close_fixture(&f);
}

/* A batch of 2: copied, the values as before. */
static void test_batch_copies(void) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, batch_yaml, "cpu=2", 2, 2));
    const char *names[] = {"x"};
    tgc_tensor *c = NULL;
    CU_ASSERT_FATAL(tgc_session_run(f.s, 1, names, &f.x, &c, NULL) == TGC_OK);
    const float *y = tgc_tensor_data(c);
    int bad = 0;
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < 128; i++) {
            float x = x_at(n * 128 + i);
            bad += y[n * 256 + i] != -x;
            bad += y[n * 256 + 128 + i] != fabsf(x);
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_STRING_NOT_EQUAL(impl_of(f.s, "c"), "in place");
    CU_ASSERT_PTR_NULL(f.s->plans[0].places); /* nothing placed at all */
    tgc_tensor_release(c);
    close_fixture(&f);
}

/* Values read twice: copied, the values by hand. */
static void test_shared_parts(void) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, shared_yaml, "cpu=2", 1, 4));
    const char *names[] = {"x"};
    tgc_tensor *y[2] = {NULL, NULL};
    CU_ASSERT_FATAL(tgc_session_run(f.s, 1, names, &f.x, y, f.d) == TGC_OK);
    const float *y1 = tgc_tensor_data(y[0]), *y2 = tgc_tensor_data(y[1]);
    int bad = 0;
    for (int i = 0; i < PART; i++) {
        float x = x_at(i);
        bad += y1[i] != -x || y2[i] != -x;
        bad += y1[PART + i] != fabsf(x) || y2[PART + i] != fabsf(x);
        bad += y2[2 * PART + i] != x * x;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_STRING_NOT_EQUAL(impl_of(f.s, "y1"), "in place");
    CU_ASSERT_STRING_NOT_EQUAL(impl_of(f.s, "y2"), "in place");
    const tgc_plan *p = &f.s->plans[0];
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->places);
    int placed = 0;
    for (int32_t v = 0; v < p->n_values; v++) placed += p->places[v].into >= 0;
    CU_ASSERT_EQUAL(placed, 1); /* r */
    tgc_tensor_release(y[0]);
    tgc_tensor_release(y[1]);
    close_fixture(&f);
}

/* In place only where that holds no more at once than copying. */
static void test_not_past_the_peak(void) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, larger_yaml, "cpu=1", 1, 4));
    const char *names[] = {"x"};
    tgc_tensor *c = NULL;
    CU_ASSERT_FATAL(tgc_session_run(f.s, 1, names, &f.x, &c, f.d) == TGC_OK);
    double sum = 0;
    for (int i = 0; i < PART; i++) sum += 8.0 * x_at(i);
    const float *y = tgc_tensor_data(c);
    int bad = 0;
    for (int i = 0; i < PART; i++) {
        bad += y[i] != -x_at(i);
        bad += fabs(y[PART + i] - (x_at(i) + sum)) > 1e-3 * (fabs(sum) + 1);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_STRING_NOT_EQUAL(impl_of(f.s, "c"), "in place");
    CU_ASSERT_EQUAL(tgc_session_memory(f.s, 0).peak_bytes_in_use, 9220);
    tgc_tensor_release(c);
    close_fixture(&f);
}

/* A failure after the whole was made (d's kernel), and the whole's own
 * allocation failing (the first of the run, a's): a clean error naming the
 * node, nothing left in use, and the next run right. */
static void test_failures(void) {
    setenv("TGC_FAIL_NODE", "d", 1);
    fixture f;
    bool opened = open_fixture(&f, graph_yaml, "cpu=2", 1, 4);
    unsetenv("TGC_FAIL_NODE");
    CU_ASSERT_FATAL(opened);
    CU_ASSERT_EQUAL(run_and_check(&f), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_message(&f), "node 'd'"));
    CU_ASSERT_EQUAL(tgc_session_memory(f.s, 0).bytes_in_use, 0);
    close_fixture(&f);

    CU_ASSERT_FATAL(open_fixture(&f, graph_yaml, "cpu=1", 1, 4));
    tgc_device_fail_nth_alloc(1);
    CU_ASSERT_EQUAL(run_and_check(&f), -1);
    tgc_device_fail_nth_alloc(0);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_message(&f), "node 'a' (Neg) on cpu"));
    CU_ASSERT_PTR_NOT_NULL(strstr(last_message(&f), "Concat's buffer"));
    CU_ASSERT_EQUAL(tgc_session_memory(f.s, 0).bytes_in_use, 0);
    CU_ASSERT_EQUAL(run_and_check(&f), 0);
    close_fixture(&f);
}

TGC_TEST_MAIN("concat_in_place", {"one thread: values by hand, 4096 bytes at the peak", test_one_thread},
              {"two threads: the same values and bytes", test_two_threads},
              {"the static plan counts one buffer", test_plan},
              {"a batch of 2 is copied", test_batch_copies},
              {"values two Concats read are copied", test_shared_parts},
              {"no Concat in place past the copying peak", test_not_past_the_peak},
              {"failures leave nothing behind", test_failures})
