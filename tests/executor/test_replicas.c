/* Replicas: automatic placement for throughput (max_inflight 2) over
 * cpu0,cpu1 of a graph whose work cannot be cut into even stages runs
 * whole steps on each device in turn instead of a pipeline; every step's
 * outputs are bitwise one cpu's, each device holds the whole graph, and a
 * latency placement (max_inflight 1) keeps one device.
 *
 * The graph: h = Relu(MatMul(x [64, 256], W1 [256, 256])), y =
 * MatMul(h, W2 [256, 16]). By hand: 4194304 multiply-adds in the first
 * MatMul, 262144 in the second: a pipeline's slowest stage is at least
 * 16/17 of the whole step, so two replicas give about 1.9x its
 * throughput. Weights: 262144 + 16384 bytes. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 64
#define N 256
#define OUT 16
#define STEPS 8

static float x_at(int i) { return (float)(i % 7 - 3) * 0.25f; }

static tgc_graph *load_uneven(tgc_diags *d) {
    size_t size = (size_t)(N * N + N * OUT) * 8 + 2048, at = 0;
    char *text = malloc(size);
    at += (size_t)snprintf(text + at, size - at,
                           "format: tgc/1\nname: uneven\ninputs:\n  - {name: x, dtype: float32, shape: [%d, %d]}\n"
                           "outputs: [y]\ninitializers:\n  - {name: w1, dtype: float32, shape: [%d, %d], values: [",
                           ROWS, N, N, N);
    for (int i = 0; i < N * N; i++) at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", i * 5 % 9 - 4);
    at += (size_t)snprintf(text + at, size - at, "]}\n  - {name: w2, dtype: float32, shape: [%d, %d], values: [", N,
                           OUT);
    for (int i = 0; i < N * OUT; i++) at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", i % 5 - 2);
    at += (size_t)snprintf(text + at, size - at,
                           "]}\nnodes:\n  - {name: m, op: MatMul, inputs: [x, w1]}\n"
                           "  - {name: h, op: Relu, inputs: [m]}\n  - {name: y, op: MatMul, inputs: [h, w2]}\n");
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, at, "uneven.yaml", NULL, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    free(text);
    return g;
}

/* The "replicas" list of g's automatic placement on cpu0,cpu1 at
 * `inflight`, as the JSON dump gives it ("" when none). */
static void replicas_of(tgc_graph *g, int inflight, char *out, size_t size, tgc_diags *d) {
    tgc_place_options o = {.threads = "cpu0=1,cpu1=1", .placement = TGC_PLACEMENT_AUTO, .max_inflight = inflight};
    tgc_placed *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu0,cpu1", &o, d, &p), TGC_OK);
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    CU_ASSERT_EQUAL(tgc_placed_dump_json(p, f, d), TGC_OK);
    fclose(f);
    const char *at = strstr(json, "\"replicas\": [");
    out[0] = '\0';
    if (at != NULL) snprintf(out, size, "%.*s", (int)(strchr(at, ']') - at + 1), at);
    free(json);
    tgc_placed_free(p);
}

typedef struct stepper {
    tgc_session *s;
    tgc_tensor *x;
    float y[STEPS][ROWS * OUT];
    int failures;
} stepper;

static void *run_steps(void *arg) {
    stepper *st = arg;
    tgc_diags *d = tgc_diags_create();
    const char *names[] = {"x"};
    for (int k = 0; k < STEPS; k++) {
        tgc_tensor *y = NULL;
        if (tgc_session_run(st->s, 1, names, &st->x, &y, d) != TGC_OK) st->failures++;
        else memcpy(st->y[k], tgc_tensor_data(y), sizeof st->y[k]);
        tgc_tensor_release(y);
    }
    tgc_diags_free(d);
    return NULL;
}

static void test_uneven_graph_runs_as_replicas(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = load_uneven(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    char list[128];
    replicas_of(g, 2, list, sizeof list, d);
    CU_ASSERT_STRING_EQUAL(list, "\"replicas\": [\"cpu0\", \"cpu1\"]");
    replicas_of(g, 1, list, sizeof list, d); /* one step's latency: replicas do not shorten it */
    CU_ASSERT_STRING_EQUAL(list, "");

    static float xs[ROWS * N];
    for (int i = 0; i < ROWS * N; i++) xs[i] = x_at(i);
    tgc_tensor *x = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){ROWS, N}, xs, &x), TGC_OK);
    /* one cpu's bits */
    tgc_session *one = NULL;
    tgc_session_options o1 = {.threads = "cpu0=1"};
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu0", &o1, d, &one), TGC_OK);
    tgc_tensor *y1 = NULL;
    const char *names[] = {"x"};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(one, 1, names, &x, &y1, d), TGC_OK);

    tgc_session_options o = {.threads = "cpu0=1,cpu1=1", .placement = TGC_PLACEMENT_AUTO, .max_inflight = 2,
                             .memory_report = 1};
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu0,cpu1", &o, d, &s), TGC_OK);
    CU_ASSERT_EQUAL(tgc_session_device_count(s), 2);
    CU_ASSERT_STRING_EQUAL(tgc_session_device_name(s, 1), "cpu1");
    CU_ASSERT_EQUAL(tgc_session_output_count(s), 1);
    static stepper a, b;
    a = (stepper){.s = s, .x = x};
    b = (stepper){.s = s, .x = x};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, run_steps, &a);
    pthread_create(&tb, NULL, run_steps, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CU_ASSERT_EQUAL(a.failures + b.failures, 0);
    for (int k = 0; k < STEPS; k++) {
        CU_ASSERT(memcmp(a.y[k], tgc_tensor_data(y1), sizeof a.y[k]) == 0);
        CU_ASSERT(memcmp(b.y[k], tgc_tensor_data(y1), sizeof b.y[k]) == 0);
    }
    /* Steps took turns: both devices ran some, each holding the whole graph's tensors. */
    for (int i = 0; i < 2; i++) {
        tgc_memory_figures f = tgc_session_memory(s, i);
        printf("\n  %s: %" PRId64 " allocations, peak %" PRId64, tgc_session_device_name(s, i), f.num_allocs,
               f.peak_bytes_in_use);
        CU_ASSERT(f.peak_bytes_in_use >= ROWS * N * 4 + ROWS * OUT * 4); /* h and y at least */
    }
    /* one after another, steps alternate */
    int64_t before[2] = {tgc_session_memory(s, 0).num_allocs, tgc_session_memory(s, 1).num_allocs};
    for (int k = 0; k < 4; k++) {
        tgc_tensor *y = NULL;
        CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &y, d), TGC_OK);
        tgc_tensor_release(y);
    }
    CU_ASSERT_EQUAL(tgc_session_memory(s, 0).num_allocs - before[0], tgc_session_memory(s, 1).num_allocs - before[1]);
    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len);
    CU_ASSERT_EQUAL(tgc_session_memory_report(s, f), TGC_OK);
    fclose(f);
    CU_ASSERT(strncmp(report, "replicas: whole steps take turns over cpu0, cpu1", 48) == 0);
    free(report);
    tgc_session_free(s);
    tgc_tensor_release(y1);
    tgc_session_free(one);
    tgc_tensor_release(x);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("replicas", {"an uneven graph runs as replicas, one cpu's bits", test_uneven_graph_runs_as_replicas})
