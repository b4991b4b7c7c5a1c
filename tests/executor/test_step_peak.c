/* A step's memory peak on a device equals the static plan's: on a device
 * of one thread a step's nodes start in the plan's order (node id order,
 * executor/plan.c tgc_plan_order), and the memory watch counts each step's
 * own tensors, also with steps in flight. The graphs interleave two
 * branches, so that the order matters:
 *
 *   a1 = Relu(x)   b1 = Neg(x)   a2 = ReduceSum(a1)   b2 = ReduceSum(b1)
 *   y = Add(a2, b2)
 *
 * In id order a1 and b1 (x of [1, 1024] float32: 4096 bytes each) are live
 * together from b1 on, and a2 is made while both are: 4096 + 4096 + 4 =
 * 8196 bytes, the plan's lower bound (x is a feed, read in place). Run as
 * nodes became ready, a1's chain came first (a1, a2, then b1, b2): at most
 * 4096 + 4 + 4 bytes, under the plan. */
#include "tests/harness.h"

#include "executor/memory_plan.h"
#include "executor/session.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 1024
#define RUNS 20

static const char one_device[] = "format: tgc/1\n"
                                 "inputs: [{name: x, dtype: float32, shape: [1, 1024]}]\n"
                                 "outputs: [y]\n"
                                 "nodes:\n"
                                 "  - {name: a1, op: Relu, inputs: [x]}\n"
                                 "  - {name: b1, op: Neg, inputs: [x]}\n"
                                 "  - {name: a2, op: ReduceSum, inputs: [a1]}\n"
                                 "  - {name: b2, op: ReduceSum, inputs: [b1]}\n"
                                 "  - {name: y, op: Add, inputs: [a2, b2]}\n";

/* The same branches on cpu1, over r = Relu(x) made on cpu0 and read there
 * in place: a pipeline of two one-thread stages. */
static const char two_devices[] = "format: tgc/1\n"
                                  "inputs: [{name: x, dtype: float32, shape: [1, 1024]}]\n"
                                  "outputs: [y]\n"
                                  "nodes:\n"
                                  "  - {name: r, op: Relu, inputs: [x], device: cpu0}\n"
                                  "  - {name: a1, op: Relu, inputs: [r], device: cpu1}\n"
                                  "  - {name: b1, op: Neg, inputs: [r], device: cpu1}\n"
                                  "  - {name: a2, op: ReduceSum, inputs: [a1], device: cpu1}\n"
                                  "  - {name: b2, op: ReduceSum, inputs: [b1], device: cpu1}\n"
                                  "  - {name: y, op: Add, inputs: [a2, b2], device: cpu1}\n";

static float x_at(int i) { return (float)(i % 7 - 3) * 0.5f; }

/* y by hand: sum(relu(v)) - sum(v) over v = x (one device) or relu(x). */
static double y_expected(bool relu_first) {
    double a = 0, b = 0;
    for (int i = 0; i < N; i++) {
        double v = x_at(i);
        if (relu_first && v < 0) v = 0;
        a += v > 0 ? v : 0;
        b -= v;
    }
    return a + b;
}

typedef struct fixture {
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x;
    tgc_diags *d;
    double want;
    int bad; /* runs that failed or gave another y */
} fixture;

static bool open_fixture(fixture *f, const char *yaml, const char *devices, const char *threads, int inflight) {
    memset(f, 0, sizeof *f);
    f->d = tgc_diags_create();
    if (tgc_graph_load_string(yaml, strlen(yaml), "peak.yaml", NULL, f->d, &f->g) != TGC_OK) return false;
    tgc_session_options o = {.threads = threads, .memory_report = 1, .optimize = TGC_OPTIMIZE_NONE,
                             .max_inflight = inflight};
    if (tgc_session_create(f->g, devices, &o, f->d, &f->s) != TGC_OK) {
        tgc_diags_print(f->d, stderr);
        return false;
    }
    float *x = NULL;
    if (tgc_tensor_alloc(TGC_FLOAT32, 2, (int64_t[]){1, N}, &f->x) != TGC_OK) return false;
    x = (float *)tgc_tensor_data(f->x);
    for (int i = 0; i < N; i++) x[i] = x_at(i);
    return true;
}

static void close_fixture(fixture *f) {
    tgc_session_free(f->s);
    tgc_tensor_release(f->x);
    tgc_graph_free(f->g);
    tgc_diags_free(f->d);
}

static void *run_steps(void *arg) {
    fixture *f = arg;
    const char *names[] = {"x"};
    for (int r = 0; r < RUNS; r++) {
        tgc_tensor *y = NULL;
        tgc_status st = tgc_session_run(f->s, 1, names, &f->x, &y, NULL);
        if (st != TGC_OK || fabs(((const float *)tgc_tensor_data(y))[0] - f->want) > 1e-3)
            __atomic_fetch_add(&f->bad, 1, __ATOMIC_RELAXED);
        tgc_tensor_release(y);
    }
    return NULL;
}

/* The plan's lower bound on `device` (no passes, as the session runs). */
static int64_t planned(const tgc_graph *g, const char *devices, const char *device) {
    tgc_diags *d = tgc_diags_create();
    tgc_memory_plan *mp = NULL;
    tgc_memory_plan_options o = {.optimize = TGC_OPTIMIZE_NONE};
    int64_t bytes = -1;
    if (tgc_graph_memory_plan(g, devices, &o, d, &mp) == TGC_OK)
        for (int i = 0; i < tgc_memory_plan_count(mp); i++)
            if (strcmp(tgc_memory_plan_get(mp, i).device, device) == 0) bytes = tgc_memory_plan_get(mp, i).lower_bound;
    tgc_memory_plan_free(mp);
    tgc_diags_free(d);
    return bytes;
}

/* The watch's most for device `name`, and that every step left 0 counted. */
static int64_t step_peak(const tgc_session *s, const char *name) {
    for (int i = 0; i < tgc_session_device_count(s); i++) {
        if (strcmp(tgc_session_device_name(s, i), name) != 0) continue;
        CU_ASSERT_EQUAL(atomic_load(&s->watch->gauges[i].left), 0);
        return atomic_load(&s->watch->gauges[i].peak);
    }
    return -1;
}

static void test_one_thread(void) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, one_device, "cpu0", "cpu0=1", 1));
    f.want = y_expected(false);
    CU_ASSERT_EQUAL(planned(f.g, "cpu0", "cpu0"), 8196);
    run_steps(&f);
    CU_ASSERT_EQUAL(f.bad, 0);
    CU_ASSERT_EQUAL(step_peak(f.s, "cpu0"), 8196);
    /* one step at a time: the allocator's peak is the same bytes (no weights here) */
    CU_ASSERT_EQUAL(tgc_session_memory(f.s, 0).peak_bytes_in_use, 8196);
    close_fixture(&f);
}

static void test_pipeline_in_flight(void) {
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, two_devices, "cpu0,cpu1", "cpu0=1,cpu1=1", 2));
    f.want = y_expected(true);
    CU_ASSERT_EQUAL(planned(f.g, "cpu0,cpu1", "cpu0"), 4096); /* r, from its Relu until the _Send right after */
    CU_ASSERT_EQUAL(planned(f.g, "cpu0,cpu1", "cpu1"), 8196); /* a1, b1 and a2; r is cpu0's buffer */
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run_steps, &f);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(f.bad, 0);
    CU_ASSERT_EQUAL(step_peak(f.s, "cpu0"), 4096);
    CU_ASSERT_EQUAL(step_peak(f.s, "cpu1"), 8196);
    close_fixture(&f);
}

TGC_TEST_MAIN("step_peak", {"one thread: a step's peak is the plan's", test_one_thread},
              {"a pipeline at --inflight 2: each step's peak is the plan's", test_pipeline_in_flight})
