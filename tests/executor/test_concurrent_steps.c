/* Concurrent steps: many threads call tgc_session_run on one session at
 * once. A model in two stages (Gather, MatMul, a fused Add-Relu-Mul on
 * cpu0; MatMul, Tanh, Sigmoid on the second device: cpu1, and gpu0 where
 * OpenCL is there) first runs alone on a session of its own: its outputs
 * are checked against the same arithmetic in double precision written
 * here, and kept. Then 8 threads run many steps each on a fresh session
 * (so the kernel caches, JIT kernels and fused programs are built while
 * steps race): every output bitwise equal to the lone run of the same
 * input; some steps fed an index out of range fail alone, with a message
 * naming the node and its device, while the others go on; afterwards every
 * device's bytes and buffers and the process's tensors are back where they
 * were. With max_inflight K the steps in flight never pass K. A Loop whose
 * body spans two devices runs from 6 threads at once: the keys of its
 * pairs carry the step, so iterations of different steps never meet. The
 * digits CNN (convolutions, shape arithmetic, batches of 1 to 20 rows)
 * runs from 4 threads with the memory watch and a trace on (read, with the
 * memory report, while the steps run), on cpu and on cpu,gpu0, bitwise
 * equal to its lone runs, those within 1e-4 of PyTorch;
 * the trace has one step id per run, and each send/recv arrow (named by
 * its key as it ran) starts and ends once: no arrow joins two steps.
 * Run under ThreadSanitizer by make test-tsan. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STEPS_PER_THREAD 12
#else
#define STEPS_PER_THREAD 60
#endif

#define THREADS 8
#define N_INPUTS 16 /* distinct inputs; each thread walks through them in its own order */
#define ROWS 8
#define IN 32
#define HID 32
#define OUT 16
#define BAD_INDEX 99 /* past x's 8 rows: Gather fails */

static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

/* ---- the two-stage model and its reference ---------------------------------- */

static float w1_at(int k, int j) { return (float)((k * 31 + j * 17) % 23 - 11) * 0.01f; }
static float b1_at(int j) { return (float)(j % 5 - 2) * 0.05f; }
static float w2_at(int k, int j) { return (float)((k * 13 + j * 7) % 19 - 9) * 0.02f; }

static void append(char **at, char *end, const char *fmt, double v) {
    int n = snprintf(*at, (size_t)(end - *at), fmt, v);
    if (n > 0 && n < end - *at) *at += n;
}

/* The model's YAML with its second stage on `second` ("cpu1", "gpu0"). */
static char *stages_yaml(const char *second) {
    size_t cap = 1 << 16;
    char *text = malloc(cap), *at = text, *end = text + cap;
    at += snprintf(at, cap, "format: tgc/1\n"
                            "inputs:\n"
                            "  - {name: x, dtype: float32, shape: [%d, %d]}\n"
                            "  - {name: idx, dtype: int64, shape: [%d]}\n"
                            "outputs: [y]\n"
                            "initializers:\n"
                            "  - {name: half, dtype: float32, shape: [], values: [0.5]}\n",
                   ROWS, IN, ROWS);
    append(&at, end, "  - {name: w1, dtype: float32, shape: [%g, 32], values: [", IN);
    for (int k = 0; k < IN; k++)
        for (int j = 0; j < HID; j++) append(&at, end, k + j ? ", %.9g" : "%.9g", w1_at(k, j));
    append(&at, end, "]}\n  - {name: b1, dtype: float32, shape: [%g], values: [", HID);
    for (int j = 0; j < HID; j++) append(&at, end, j ? ", %.9g" : "%.9g", b1_at(j));
    append(&at, end, "]}\n  - {name: w2, dtype: float32, shape: [%g, 16], values: [", HID);
    for (int k = 0; k < HID; k++)
        for (int j = 0; j < OUT; j++) append(&at, end, k + j ? ", %.9g" : "%.9g", w2_at(k, j));
    at += snprintf(at, (size_t)(end - at),
                   "]}\n"
                   "nodes:\n"
                   "  - {name: xg, op: Gather, inputs: [x, idx], device: cpu0}\n"
                   "  - {name: a, op: MatMul, inputs: [xg, w1], device: cpu0}\n"
                   "  - {name: ab, op: Add, inputs: [a, b1], device: cpu0}\n"
                   "  - {name: r, op: Relu, inputs: [ab], device: cpu0}\n"
                   "  - {name: h, op: Mul, inputs: [r, half], device: cpu0}\n"
                   "  - {name: m, op: MatMul, inputs: [h, w2], device: %s}\n"
                   "  - {name: t, op: Tanh, inputs: [m], device: %s}\n"
                   "  - {name: y, op: Sigmoid, inputs: [t], device: %s}\n",
                   second, second, second);
    return text;
}

static void input_x(int i, float *x) {
    for (int r = 0; r < ROWS; r++)
        for (int k = 0; k < IN; k++) x[r * IN + k] = (float)sin(i * 0.37 + r * 1.3 + k * 0.11);
}

static void input_idx(int i, int64_t *idx) {
    for (int r = 0; r < ROWS; r++) idx[r] = (r * 3 + i) % ROWS;
}

/* y = sigmoid(tanh((relu(x[idx] @ w1 + b1) * 0.5) @ w2)), in double. */
static void reference(const float *x, const int64_t *idx, double *y) {
    for (int r = 0; r < ROWS; r++) {
        double h[HID];
        for (int j = 0; j < HID; j++) {
            double a = 0;
            for (int k = 0; k < IN; k++) a += (double)x[idx[r] * IN + k] * w1_at(k, j);
            a += b1_at(j);
            h[j] = (a > 0 ? a : 0) * 0.5;
        }
        for (int j = 0; j < OUT; j++) {
            double m = 0;
            for (int k = 0; k < HID; k++) m += h[k] * w2_at(k, j);
            y[r * OUT + j] = 1 / (1 + exp(-tanh(m)));
        }
    }
}

static tgc_session *open_session(const tgc_graph *g, const char *devices, int max_inflight) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_session_options o = {.max_inflight = max_inflight}; /* all passes: fused groups run too */
    if (tgc_session_create(g, devices, &o, d, &s) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return s;
}

/* Runs input i (its idx made bad when `bad`) on s: the status, the output
 * in *y (NULL on failure), the first message in msg. */
static tgc_status run_input(tgc_session *s, int i, bool bad, tgc_tensor **y, char *msg, size_t msg_size) {
    float x[ROWS * IN];
    int64_t idx[ROWS];
    input_x(i, x);
    input_idx(i, idx);
    if (bad) idx[ROWS / 2] = BAD_INDEX;
    tgc_tensor *feeds[2] = {NULL, NULL};
    tgc_status st = tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){ROWS, IN}, x, &feeds[0]);
    if (st == TGC_OK) st = tgc_tensor_create(TGC_INT64, 1, (int64_t[]){ROWS}, idx, &feeds[1]);
    tgc_diags *d = tgc_diags_create(); /* one per call: a tgc_diags is not thread safe */
    const char *names[] = {"x", "idx"};
    *y = NULL;
    if (st == TGC_OK) st = tgc_session_run(s, 2, names, feeds, y, d);
    msg[0] = '\0';
    if (tgc_diags_count(d) > 0) snprintf(msg, msg_size, "%s", tgc_diag_message(d, 0));
    tgc_diags_free(d);
    tgc_tensor_release(feeds[0]);
    tgc_tensor_release(feeds[1]);
    return st;
}

/* ---- many threads, many steps ---------------------------------------------------- */

typedef struct shared_run {
    tgc_session *s;
    float (*alone)[ROWS * OUT]; /* input i -> the lone run's output */
    bool inject;                /* feed a bad index now and then */
    atomic_int ok, failed_as_expected, wrong;
    char first_wrong[1024];
    atomic_flag wrong_noted;
} shared_run;

typedef struct worker {
    shared_run *sh;
    int thread;
} worker;

static bool bad_step(int thread, int j) { return (thread + j) % 7 == 3; }

static void note_wrong(shared_run *sh, const char *fmt, int a, int b, const char *msg) {
    atomic_fetch_add(&sh->wrong, 1);
    if (!atomic_flag_test_and_set(&sh->wrong_noted)) snprintf(sh->first_wrong, sizeof sh->first_wrong, fmt, a, b, msg);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    shared_run *sh = w->sh;
    for (int j = 0; j < STEPS_PER_THREAD; j++) {
        int i = (w->thread * 5 + j * 3) % N_INPUTS;
        bool bad = sh->inject && bad_step(w->thread, j);
        tgc_tensor *y = NULL;
        char msg[512];
        tgc_status st = run_input(sh->s, i, bad, &y, msg, sizeof msg);
        if (bad) {
            /* It fails alone: its own error, naming the node and its device. */
            if (st == TGC_ERR_RUNTIME && y == NULL && strstr(msg, "'xg'") && strstr(msg, "cpu0"))
                atomic_fetch_add(&sh->failed_as_expected, 1);
            else note_wrong(sh, "thread %d step %d: the bad index gave: %s", w->thread, j, msg);
        } else if (st != TGC_OK || y == NULL) {
            note_wrong(sh, "thread %d step %d failed: %s", w->thread, j, msg);
        } else if (memcmp(tgc_tensor_data(y), sh->alone[i], sizeof sh->alone[i]) != 0) {
            note_wrong(sh, "thread %d step %d: output differs from the lone run%s", w->thread, j, "");
        } else {
            atomic_fetch_add(&sh->ok, 1);
        }
        tgc_tensor_release(y);
    }
    return NULL;
}

/* The lone runs: each input's output on a session of its own, checked
 * against the double-precision reference, kept in alone[]. */
static void run_alone(const tgc_graph *g, const char *devices, float (*alone)[ROWS * OUT]) {
    tgc_session *s = open_session(g, devices, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    double worst = 0;
    for (int i = 0; i < N_INPUTS; i++) {
        tgc_tensor *y = NULL;
        char msg[512];
        CU_ASSERT_EQUAL_FATAL(run_input(s, i, false, &y, msg, sizeof msg), TGC_OK);
        float x[ROWS * IN];
        int64_t idx[ROWS];
        double want[ROWS * OUT];
        input_x(i, x);
        input_idx(i, idx);
        reference(x, idx, want);
        const float *got = tgc_tensor_data(y);
        for (int k = 0; k < ROWS * OUT; k++) worst = fmax(worst, fabs(got[k] - want[k]));
        memcpy(alone[i], got, sizeof alone[i]);
        tgc_tensor_release(y);
    }
    CU_ASSERT(worst < 1e-5);
    if (!(worst < 1e-5)) printf("\n  %s: max abs diff %.3g from the reference\n", devices, worst);
    tgc_session_free(s);
}

/* Runs THREADS threads x STEPS_PER_THREAD steps on a fresh session of g
 * on `devices` (max_inflight K) and checks what the file's comment says. */
static void run_concurrently(const tgc_graph *g, const char *devices, int max_inflight, bool inject,
                             float (*alone)[ROWS * OUT]) {
    tgc_session *s = open_session(g, devices, max_inflight);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    int n_dev = tgc_session_device_count(s);
    tgc_memory_figures before[8];
    for (int dev = 0; dev < n_dev && dev < 8; dev++) before[dev] = tgc_session_memory(s, dev);
    tgc_memory_info process_before = tgc_memory();
    shared_run sh = {.s = s, .alone = alone, .inject = inject, .wrong_noted = ATOMIC_FLAG_INIT};
    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){&sh, t};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[t], NULL, worker_main, &workers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    int expected_bad = 0;
    for (int t = 0; inject && t < THREADS; t++)
        for (int j = 0; j < STEPS_PER_THREAD; j++) expected_bad += bad_step(t, j);
    CU_ASSERT_EQUAL(atomic_load(&sh.wrong), 0);
    if (atomic_load(&sh.wrong) > 0)
        printf("\n  %s: %d wrong; first: %s\n", devices, atomic_load(&sh.wrong), sh.first_wrong);
    CU_ASSERT_EQUAL(atomic_load(&sh.failed_as_expected), expected_bad);
    CU_ASSERT_EQUAL(atomic_load(&sh.ok), THREADS * STEPS_PER_THREAD - expected_bad);
    int now = -1, peak = -1;
    tgc_session_steps_in_flight(s, &now, &peak);
    CU_ASSERT_EQUAL(now, 0);
    CU_ASSERT(peak >= 1 && peak <= (max_inflight > 0 ? max_inflight : THREADS));
    for (int dev = 0; dev < n_dev && dev < 8; dev++) { /* every step's buffers went back */
        tgc_memory_figures after = tgc_session_memory(s, dev);
        CU_ASSERT_EQUAL(after.bytes_in_use, before[dev].bytes_in_use);
        CU_ASSERT_EQUAL(after.live_buffers, before[dev].live_buffers);
    }
    tgc_memory_info process_after = tgc_memory();
    CU_ASSERT_EQUAL(process_after.live_tensors, process_before.live_tensors);
    CU_ASSERT_EQUAL(process_after.host.bytes_in_use, process_before.host.bytes_in_use);
    printf("\n  %s, max_inflight %d: %d steps bitwise equal to the lone runs, %d failed alone as meant, "
           "peak in flight %d ",
           devices, max_inflight, atomic_load(&sh.ok), atomic_load(&sh.failed_as_expected), peak);
    tgc_session_free(s);
}

static void two_stages(const char *second, const char *devices, int max_inflight, bool inject) {
    char *text = stages_yaml(second);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status st = tgc_graph_load_string(text, strlen(text), "stages.yaml", NULL, d, &g);
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    free(text);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    float(*alone)[ROWS * OUT] = malloc(N_INPUTS * sizeof *alone);
    run_alone(g, devices, alone);
    run_concurrently(g, devices, max_inflight, inject, alone);
    free(alone);
    tgc_graph_free(g);
}

static void test_two_cpus(void) { two_stages("cpu1", "cpu0,cpu1", 0, true); }

static void test_cpu_and_gpu(void) {
    if (!have_gpu()) {
        printf("\n  notice: no OpenCL device; skipped\n");
        return;
    }
    two_stages("gpu0", "cpu0,gpu0", 0, true);
}

/* Back pressure: 8 threads, at most 2 steps at once (the others wait in
 * tgc_session_run), and 1: the steps run one after another. */
static void test_bounded_in_flight(void) {
    two_stages("cpu1", "cpu0,cpu1", 2, false);
    two_stages("cpu1", "cpu0,cpu1", 1, false);
}

/* ---- a loop across devices, from many threads --------------------------------------- */

#define LOOP_THREADS 6
#define LOOP_STEPS (STEPS_PER_THREAD / 2)

typedef struct loop_shared {
    tgc_session *s;
    atomic_int ok, wrong;
} loop_shared;

typedef struct loop_worker {
    loop_shared *sh;
    int thread;
} loop_worker;

/* v' = (v * 0.5 on the body's first device) + 1 on cpu0, 40 times, with
 * the float32 roundings of each step. */
static void loop_reference(const float *v0, float *want) {
    for (int k = 0; k < 8; k++) {
        float v = v0[k];
        for (int it = 0; it < 40; it++) v = v * 0.5f + 1.0f;
        want[k] = v;
    }
}

static void *loop_main(void *arg) {
    loop_worker *w = arg;
    for (int j = 0; j < LOOP_STEPS; j++) {
        float v0[8], want[8];
        for (int k = 0; k < 8; k++) v0[k] = (float)(w->thread * 100 + j * 10 + k);
        loop_reference(v0, want);
        tgc_tensor *feeds[1] = {NULL}, *out[1] = {NULL};
        tgc_diags *d = tgc_diags_create();
        const char *names[] = {"v0"};
        bool ok = tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){8}, v0, &feeds[0]) == TGC_OK &&
                  tgc_session_run(w->sh->s, 1, names, feeds, out, d) == TGC_OK &&
                  memcmp(tgc_tensor_data(out[0]), want, sizeof want) == 0;
        if (!ok) tgc_diags_print(d, stderr);
        atomic_fetch_add(ok ? &w->sh->ok : &w->sh->wrong, 1);
        tgc_diags_free(d);
        tgc_tensor_release(out[0]);
        tgc_tensor_release(feeds[0]);
    }
    return NULL;
}

static void test_loop_across_devices(void) {
    const char *first = have_gpu() ? "gpu0" : "cpu1";
    char text[1024];
    snprintf(text, sizeof text,
             "format: tgc/1\n"
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
             "          - {name: h, op: Mul, inputs: [v, half], device: %s}\n"
             "          - {name: w, op: Add, inputs: [h, one], device: cpu0}\n",
             first);
    char devices[32];
    snprintf(devices, sizeof devices, "cpu0,%s", first);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_FATAL(tgc_graph_load_string(text, strlen(text), "loop.yaml", NULL, d, &g) == TGC_OK);
    tgc_session *s = NULL;
    CU_ASSERT_FATAL(tgc_session_create(g, devices, NULL, d, &s) == TGC_OK);
    tgc_memory_figures before[2] = {tgc_session_memory(s, 0), tgc_session_memory(s, 1)};
    loop_shared sh = {.s = s};
    pthread_t threads[LOOP_THREADS];
    loop_worker workers[LOOP_THREADS];
    for (int t = 0; t < LOOP_THREADS; t++) {
        workers[t] = (loop_worker){&sh, t};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[t], NULL, loop_main, &workers[t]), 0);
    }
    for (int t = 0; t < LOOP_THREADS; t++) pthread_join(threads[t], NULL);
    CU_ASSERT_EQUAL(atomic_load(&sh.wrong), 0);
    CU_ASSERT_EQUAL(atomic_load(&sh.ok), LOOP_THREADS * LOOP_STEPS);
    for (int dev = 0; dev < 2; dev++) {
        tgc_memory_figures after = tgc_session_memory(s, dev);
        CU_ASSERT_EQUAL(after.bytes_in_use, before[dev].bytes_in_use);
        CU_ASSERT_EQUAL(after.live_buffers, before[dev].live_buffers);
    }
    printf("\n  %s: %d loops of 40 iterations from %d threads, each equal to the float32 reference ", devices,
           atomic_load(&sh.ok), LOOP_THREADS);
    tgc_diags_print(d, stderr);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* ---- the digits CNN: convolutions, shape arithmetic, a memory watch, a trace ---------- */

#define DIGIT_BATCHES 20
#define DIGIT_THREADS 4

typedef struct digits {
    tgc_session *s;
    const float *x;               /* [400, 1, 8, 8] */
    float *alone[DIGIT_BATCHES];  /* batch -> the lone run's logits */
    atomic_int ok, wrong;
} digits;

/* Batch b: rows [20 b, 20 b + n) with n from 1 to 20, so N (a symbol) changes from step to step. */
static int batch_rows(int b) { return 1 + (b * 7) % 20; }

static tgc_status run_batch(tgc_session *s, const float *x, int b, tgc_tensor **logits) {
    tgc_tensor *feed = NULL, *outs[2] = {NULL, NULL};
    const int64_t dims[4] = {batch_rows(b), 1, 8, 8};
    tgc_status st = tgc_tensor_create(TGC_FLOAT32, 4, dims, x + (size_t)b * 20 * 64, &feed);
    tgc_diags *d = tgc_diags_create();
    const char *names[] = {"x"};
    if (st == TGC_OK) st = tgc_session_run(s, 1, names, &feed, outs, d);
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    tgc_tensor_release(feed);
    tgc_tensor_release(outs[1]);
    *logits = outs[0];
    return st;
}

typedef struct digits_worker {
    digits *dg;
    int thread;
} digits_worker;

static void *digits_main(void *arg) {
    digits_worker *w = arg;
    for (int k = 0; k < DIGIT_BATCHES; k++) {
        int b = (k + w->thread * 5) % DIGIT_BATCHES;
        tgc_tensor *logits = NULL;
        bool ok = run_batch(w->dg->s, w->dg->x, b, &logits) == TGC_OK &&
                  memcmp(tgc_tensor_data(logits), w->dg->alone[b], (size_t)batch_rows(b) * 10 * sizeof(float)) == 0;
        atomic_fetch_add(ok ? &w->dg->ok : &w->dg->wrong, 1);
        tgc_tensor_release(logits);
    }
    return NULL;
}

/* Reads a trace file written by tgc_session_trace_write (one event a line)
 * and checks its flow arrows: every _Send's arrow id (the hash of its key
 * as it ran) starts once and ends once, so no arrow joins two steps. Gives
 * the number of arrows and of distinct step ids on node events. */
static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool trace_flows_pair_up(const char *path, int *n_flows, int *n_steps) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return false;
    size_t cap = 1 << 16, n_s = 0, n_f = 0, n_st = 0;
    uint64_t *starts = malloc(cap * sizeof *starts), *ends = malloc(cap * sizeof *ends), *steps = malloc(cap * 8);
    char line[2048];
    bool ok = starts && ends && steps;
    while (ok && fgets(line, sizeof line, f) != NULL) {
        const char *id = strstr(line, "\"id\":"), *step = strstr(line, "\"step\":");
        if (strncmp(line, "{\"ph\":\"s\"", 9) == 0 && id && n_s < cap) starts[n_s++] = strtoull(id + 5, NULL, 10);
        if (strncmp(line, "{\"ph\":\"f\"", 9) == 0 && id && n_f < cap) ends[n_f++] = strtoull(id + 5, NULL, 10);
        if (strncmp(line, "{\"ph\":\"X\"", 9) == 0 && step && n_st < cap) steps[n_st++] = strtoull(step + 7, NULL, 10);
    }
    fclose(f);
    if (ok) {
        qsort(starts, n_s, sizeof *starts, compare_u64);
        qsort(ends, n_f, sizeof *ends, compare_u64);
        qsort(steps, n_st, sizeof *steps, compare_u64);
        ok = n_s == n_f && n_s < cap;
        for (size_t i = 0; ok && i < n_s; i++) ok = starts[i] == ends[i] && (i == 0 || starts[i] != starts[i - 1]);
        *n_flows = (int)n_s;
        *n_steps = 0;
        for (size_t i = 0; i < n_st; i++) *n_steps += i == 0 || steps[i] != steps[i - 1];
    }
    free(starts);
    free(ends);
    free(steps);
    return ok;
}

static void digits_on(const tgc_graph *g, const float *x, const float *ref, const char *devices) {
    digits dg = {.x = x};
    tgc_diags *d = tgc_diags_create();
    tgc_session *alone = NULL;
    CU_ASSERT_FATAL(tgc_session_create(g, devices, NULL, d, &alone) == TGC_OK);
    double worst = 0;
    for (int b = 0; b < DIGIT_BATCHES; b++) { /* the lone runs, against PyTorch's logits */
        tgc_tensor *logits = NULL;
        CU_ASSERT_EQUAL_FATAL(run_batch(alone, x, b, &logits), TGC_OK);
        size_t n = (size_t)batch_rows(b) * 10;
        dg.alone[b] = malloc(n * sizeof(float));
        memcpy(dg.alone[b], tgc_tensor_data(logits), n * sizeof(float));
        for (size_t k = 0; k < n; k++) worst = fmax(worst, fabs(dg.alone[b][k] - ref[(size_t)b * 200 + k]));
        tgc_tensor_release(logits);
    }
    CU_ASSERT(worst <= 1e-4);
    tgc_session_free(alone);
    tgc_session_options o = {.memory_report = 1};
    CU_ASSERT_FATAL(tgc_session_create(g, devices, &o, d, &dg.s) == TGC_OK);
    CU_ASSERT_EQUAL(tgc_session_trace_start(dg.s), TGC_OK);
    int n_dev = tgc_session_device_count(dg.s);
    tgc_memory_figures before[2];
    for (int dev = 0; dev < n_dev && dev < 2; dev++) before[dev] = tgc_session_memory(dg.s, dev);
    pthread_t threads[DIGIT_THREADS];
    digits_worker workers[DIGIT_THREADS];
    for (int t = 0; t < DIGIT_THREADS; t++) {
        workers[t] = (digits_worker){&dg, t};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[t], NULL, digits_main, &workers[t]), 0);
    }
    /* Meanwhile this thread reads the figures, the memory report and the trace, as a monitor would. */
    char during[] = "/tmp/tgc-test-trace-during-XXXXXX";
    int during_fd = mkstemp(during);
    CU_ASSERT_FATAL(during_fd >= 0);
    close(during_fd);
    for (int k = 0; k < 5; k++) {
        FILE *report = tmpfile();
        tgc_diags *dd = tgc_diags_create();
        CU_ASSERT_EQUAL(tgc_session_memory_report(dg.s, report), TGC_OK);
        CU_ASSERT_EQUAL(tgc_session_trace_write(dg.s, during, dd), TGC_OK);
        CU_ASSERT(tgc_session_memory(dg.s, 0).bytes_in_use >= 0);
        tgc_diags_free(dd);
        if (report != NULL) fclose(report);
    }
    remove(during);
    for (int t = 0; t < DIGIT_THREADS; t++) pthread_join(threads[t], NULL);
    CU_ASSERT_EQUAL(atomic_load(&dg.wrong), 0);
    CU_ASSERT_EQUAL(atomic_load(&dg.ok), DIGIT_THREADS * DIGIT_BATCHES);
    for (int dev = 0; dev < n_dev && dev < 2; dev++) {
        tgc_memory_figures after = tgc_session_memory(dg.s, dev);
        CU_ASSERT_EQUAL(after.bytes_in_use, before[dev].bytes_in_use);
        CU_ASSERT_EQUAL(after.live_buffers, before[dev].live_buffers);
    }
    FILE *sink = tmpfile();
    CU_ASSERT_EQUAL(tgc_session_memory_report(dg.s, sink), TGC_OK);
    if (sink != NULL) fclose(sink);
    /* The trace: one step id per run, and every pair's arrow within its own step. */
    char trace[] = "/tmp/tgc-test-trace-XXXXXX";
    int fd = mkstemp(trace);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_EQUAL(tgc_session_trace_write(dg.s, trace, d), TGC_OK);
    int n_flows = -1, n_steps = -1;
    CU_ASSERT(trace_flows_pair_up(trace, &n_flows, &n_steps));
    CU_ASSERT_EQUAL(n_steps, DIGIT_THREADS * DIGIT_BATCHES);
    if (strchr(devices, ',') != NULL) CU_ASSERT(n_flows >= DIGIT_THREADS * DIGIT_BATCHES); /* pairs in every step */
    remove(trace);
    printf("\n  digits CNN on %s: %d batches of 1 to 20 rows from %d threads, bitwise equal to the lone runs "
           "(those within %.2g of PyTorch), %d steps in the trace, %d send/recv arrows each within its step ",
           devices, atomic_load(&dg.ok), DIGIT_THREADS, worst, n_steps, n_flows);
    for (int b = 0; b < DIGIT_BATCHES; b++) free(dg.alone[b]);
    tgc_session_free(dg.s);
    tgc_diags_free(d);
}

static void test_digits(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_tensor *x = NULL, *ref = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/cnn.yaml"));
    CU_ASSERT_FATAL(tgc_graph_load(path, d, &g) == TGC_OK);
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_x.npy"));
    CU_ASSERT_FATAL(tgc_tensor_load_npy(path, d, &x) == TGC_OK);
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/ref_logits_cnn.npy"));
    CU_ASSERT_FATAL(tgc_tensor_load_npy(path, d, &ref) == TGC_OK);
    digits_on(g, tgc_tensor_data(x), tgc_tensor_data(ref), "cpu");
    if (have_gpu()) digits_on(g, tgc_tensor_data(x), tgc_tensor_data(ref), "cpu,gpu0");
    tgc_tensor_release(x);
    tgc_tensor_release(ref);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("concurrent steps", {"8 threads on cpu0 | cpu1, some steps failing alone", test_two_cpus},
              {"8 threads on cpu0 | gpu0, some steps failing alone", test_cpu_and_gpu},
              {"max_inflight bounds the steps in flight", test_bounded_in_flight},
              {"a loop across devices from 6 threads", test_loop_across_devices},
              {"the digits CNN from 4 threads, memory watch and trace on", test_digits})
