/* The parallel executor across devices: a failing node aborts the step
 * while another device waits on its _Recv (no hang, no leak, the node named
 * in the error); results bitwise identical across runs, thread counts and
 * placements over virtual cpus; cpu,gpu0 within tolerance; a thousand runs
 * without growth; the trace file, with its nodes side by side; a fan-out
 * one node dominates run one node at a time. */
#include "tests/harness.h"

#include "executor/session.h"
#include "support/alloc.h"
#include "support/settings.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SOAK_RUNS 200
#else
#define SOAK_RUNS 1000
#endif

static char *read_text(const char *rel) {
    FILE *f = fopen(tgc_test_path(rel), "rb");
    if (f == NULL) return NULL;
    char *buf = malloc(1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static tgc_graph *load(const char *rel) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path(rel));
    if (tgc_graph_load(path, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return g;
}

static tgc_session *open_session(const tgc_graph *g, const char *devices, const char *threads) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_session_options o = {.threads = threads, .optimize = TGC_OPTIMIZE_NONE}; /* the nodes as written */
    if (tgc_session_create(g, devices, &o, d, &s) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return s;
}

static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

/* ---- abort ---------------------------------------------------------------- */

static void expected_two_devices(const float *x, float *y) {
    static const float w[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double a = 0;
            for (int k = 0; k < 4; k++) a += (double)x[i * 4 + k] * w[k * 4 + j];
            double d = 1 / (1 + exp(-(double)x[i * 4 + j]));
            y[i * 4 + j] = (float)(tanh(a) + x[i * 4 + j] - d * d);
        }
}

static void test_failing_node_aborts_the_step_across_devices(void) {
    tgc_graph *g = load("tests/data/exec/two_devices.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    setenv("TGC_FAIL_NODE", "b", 1); /* read once, when the session is made */
    tgc_session *s = open_session(g, "cpu0,cpu1", NULL);
    unsetenv("TGC_FAIL_NODE");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    float xs[16];
    for (int i = 0; i < 16; i++) xs[i] = (float)(i % 7) * 0.1f - 0.3f;
    tgc_tensor *x;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){4, 4}, xs, &x), TGC_OK);
    const char *names[] = {"x"};
    tgc_memory_figures before0 = tgc_session_memory(s, 0), before1 = tgc_session_memory(s, 1);
    for (int round = 0; round < 50; round++) {
        tgc_diags *d = tgc_diags_create();
        tgc_tensor *y = NULL;
        CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &y, d), TGC_ERR_RUNTIME);
        CU_ASSERT_PTR_NULL(y);
        CU_ASSERT_EQUAL(tgc_diags_error_count(d), 1);
        if (tgc_diags_count(d) > 0) {
            CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "node 'b' (Tanh) on cpu0"));
            CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "TGC_FAIL_NODE"));
            CU_ASSERT_EQUAL(tgc_diag_line(d, 0), 12); /* b's line in the file */
        }
        tgc_diags_free(d);
        /* Nothing left behind on either device. */
        CU_ASSERT_EQUAL(tgc_session_memory(s, 0).live_buffers, before0.live_buffers);
        CU_ASSERT_EQUAL(tgc_session_memory(s, 1).live_buffers, before1.live_buffers);
        CU_ASSERT_EQUAL(tgc_session_memory(s, 0).bytes_in_use, before0.bytes_in_use);
        CU_ASSERT_EQUAL(tgc_session_memory(s, 1).bytes_in_use, before1.bytes_in_use);
    }
    /* And the session still runs, with the right answer, once the hook is
     * gone from its settings (a snapshot of the environment without it). */
    s->settings = tgc_settings_read();
    CU_ASSERT_PTR_NULL(s->settings->fail_node);
    tgc_diags *d = tgc_diags_create();
    tgc_tensor *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, &x, &y, d), TGC_OK);
    float want[16];
    expected_two_devices(xs, want);
    const float *got = tgc_tensor_data(y);
    for (int i = 0; i < 16; i++) CU_ASSERT_DOUBLE_EQUAL(got[i], want[i], 1e-5);
    tgc_tensor_release(y);
    tgc_diags_free(d);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
}

/* The hook is read when the session is made, never by a step: set after,
 * it changes nothing. */
static void test_the_hook_is_read_when_the_session_is_made(void) {
    tgc_graph *g = load("tests/data/exec/two_devices.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session *s = open_session(g, "cpu0,cpu1", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_EQUAL(s->settings, tgc_settings_current());
    float xs[16] = {0};
    tgc_tensor *x;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){4, 4}, xs, &x), TGC_OK);
    const char *names[] = {"x"};
    setenv("TGC_FAIL_NODE", "b", 1);
    tgc_diags *d = tgc_diags_create();
    tgc_tensor *y = NULL;
    CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &y, d), TGC_OK);
    unsetenv("TGC_FAIL_NODE");
    tgc_tensor_release(y);
    tgc_diags_free(d);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
}

/* ---- determinism ---------------------------------------------------------- */

/* The digits CNN with some nodes asked onto cpu1. */
static tgc_graph *load_split_cnn(void) {
    char *text = read_text("examples/digits/cnn.yaml");
    if (text == NULL) return NULL;
    const char *from[] = {"{name: relu1, op: Relu, inputs: [conv1]}", "{name: relu2, op: Relu, inputs: [conv2]}",
                          "{name: relu3,  op: Relu,    inputs: [fc1]}"};
    const char *to[] = {"{name: relu1, op: Relu, inputs: [conv1], device: cpu1}",
                        "{name: relu2, op: Relu, inputs: [conv2], device: cpu1}",
                        "{name: relu3,  op: Relu,    inputs: [fc1], device: cpu1}"};
    char *out = malloc(strlen(text) + 256);
    strcpy(out, text);
    for (int i = 0; i < 3; i++) {
        char *at = strstr(out, from[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        size_t tail = strlen(at + strlen(from[i]));
        memmove(at + strlen(to[i]), at + strlen(from[i]), tail + 1);
        memcpy(at, to[i], strlen(to[i]));
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tgc_test_path("examples/digits"));
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(out, strlen(out), "cnn_split.yaml", dir, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    free(text);
    free(out);
    return g;
}

static tgc_tensor *run_once(tgc_session *s, tgc_tensor *x) {
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    tgc_diags *d = tgc_diags_create();
    if (tgc_session_run(s, 1, names, &x, outs, d) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    tgc_tensor_release(outs[1]);
    return outs[0];
}

static bool bitwise_equal(const tgc_tensor *a, const tgc_tensor *b) {
    return a != NULL && b != NULL && tgc_tensor_numel(a) == tgc_tensor_numel(b) &&
           memcmp(tgc_tensor_data(a), tgc_tensor_data(b), (size_t)tgc_tensor_numel(a) * 4) == 0;
}

static void test_results_are_bitwise_identical(void) {
    tgc_graph *g = load("examples/digits/cnn.yaml");
    tgc_graph *split = load_split_cnn();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(split);
    tgc_tensor *x = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_x.npy"));
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_load_npy(path, NULL, &x), TGC_OK);
    tgc_session *base = open_session(g, "cpu", NULL);
    tgc_tensor *want = run_once(base, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    struct {
        const tgc_graph *g;
        const char *devices, *threads;
    } variants[] = {{g, "cpu", "cpu=1"},           {g, "cpu", "cpu=4"},          {g, "cpu0,cpu1", NULL},
                    {split, "cpu0,cpu1", NULL},    {split, "cpu0,cpu1", "cpu0=1,cpu1=3"},
                    {split, "cpu1,cpu0", "cpu0=2,cpu1=1"}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        tgc_session *s = open_session(variants[v].g, variants[v].devices, variants[v].threads);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        for (int r = 0; r < 5; r++) {
            tgc_tensor *got = run_once(s, x);
            if (!bitwise_equal(got, want))
                fprintf(stderr, "\n  variant %zu (%s, threads %s) differs\n", v, variants[v].devices,
                        variants[v].threads ? variants[v].threads : "default");
            CU_ASSERT(bitwise_equal(got, want));
            tgc_tensor_release(got);
        }
        tgc_session_free(s);
    }
    if (have_gpu()) {
        tgc_session *s = open_session(g, "cpu,gpu0", NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        tgc_tensor *got = run_once(s, x);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        const float *a = tgc_tensor_data(got), *b = tgc_tensor_data(want);
        double worst = 0;
        for (int64_t i = 0; i < tgc_tensor_numel(got); i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
        printf("\n  cpu,gpu0 vs cpu: max abs diff %.3g\n", worst);
        CU_ASSERT(worst <= 1e-4);
        tgc_tensor_release(got);
        tgc_session_free(s);
    }
    tgc_tensor_release(want);
    tgc_tensor_release(x);
    tgc_session_free(base);
    tgc_graph_free(g);
    tgc_graph_free(split);
}

/* ---- soak ----------------------------------------------------------------- */

static void soak(const char *devices) {
    tgc_graph *g = load("examples/digits/cnn.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session *s = open_session(g, devices, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tgc_tensor *x = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_x.npy"));
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_load_npy(path, NULL, &x), TGC_OK);
    int n_dev = tgc_session_device_count(s);
    tgc_memory_figures base[4];
    int64_t host_blocks = 0;
    for (int r = 0; r < SOAK_RUNS; r++) {
        tgc_tensor *y = run_once(s, x);
        CU_ASSERT_PTR_NOT_NULL_FATAL(y);
        tgc_tensor_release(y);
        if (r == 9) { /* after warm-up */
            for (int i = 0; i < n_dev && i < 4; i++) base[i] = tgc_session_memory(s, i);
            host_blocks = tgc_host_alloc_stats_get().live_blocks;
        }
        if (r > 9)
            for (int i = 0; i < n_dev && i < 4; i++) {
                tgc_memory_figures now = tgc_session_memory(s, i);
                CU_ASSERT_EQUAL(now.live_buffers, base[i].live_buffers);
                CU_ASSERT_EQUAL(now.bytes_in_use, base[i].bytes_in_use);
            }
    }
    CU_ASSERT_EQUAL(tgc_host_alloc_stats_get().live_blocks, host_blocks);
    printf("\n  %d runs on %s: live buffers", SOAK_RUNS, devices);
    for (int i = 0; i < n_dev && i < 4; i++)
        printf(" %s %lld (%lld bytes)", tgc_session_device_name(s, i),
               (long long)tgc_session_memory(s, i).live_buffers, (long long)tgc_session_memory(s, i).bytes_in_use);
    printf(", host blocks %lld\n", (long long)host_blocks);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
}

static void test_a_thousand_runs_do_not_grow(void) {
    soak("cpu");
    if (have_gpu()) soak("cpu,gpu0");
}

/* ---- trace ---------------------------------------------------------------- */

/* s's trace as written to a file, read back whole (NUL-terminated, to be
 * freed), or NULL when writing fails or the file has max_bytes or more. */
static char *written_trace(tgc_session *s, size_t max_bytes) {
    char path[] = "/tmp/tgc-trace-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    close(fd);
    char *text = calloc(1, max_bytes);
    FILE *f = text != NULL && tgc_session_trace_write(s, path, NULL) == TGC_OK ? fopen(path, "r") : NULL;
    size_t n = f != NULL ? fread(text, 1, max_bytes - 1, f) : 0;
    if (f != NULL) fclose(f);
    remove(path);
    if (n == 0 || n == max_bytes - 1) {
        free(text);
        return NULL;
    }
    return text;
}

static void test_trace_has_nodes_flows_and_counters(void) {
    tgc_graph *g = load("tests/data/exec/two_devices.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session *s = open_session(g, "cpu0,cpu1", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(tgc_session_trace_start(s), TGC_OK);
    tgc_tensor *x;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){4, 4}, NULL, &x), TGC_OK);
    const char *names[] = {"x"};
    tgc_tensor *y = NULL;
    CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &y, NULL), TGC_OK);
    char *text = written_trace(s, (size_t)1 << 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"traceEvents\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "{\"name\":\"cpu0\"}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "{\"name\":\"cpu1\"}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"name\":\"b\",\"cat\":\"Tanh\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"ph\":\"s\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"ph\":\"f\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"name\":\"bytes in use\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "float32 [4, 4]"));
    /* nodes side by side: a counter per device that ends at 0, and per
     * device the time its nodes ran, of which two or more at once */
    const char *last = NULL;
    for (const char *p = text; (p = strstr(p, "\"name\":\"nodes at once\"")) != NULL; p++) last = p;
    CU_ASSERT_PTR_NOT_NULL(last);
    CU_ASSERT_PTR_NOT_NULL(last != NULL ? strstr(last, "{\"nodes\":0}") : NULL);
    const char *other = strstr(text, "\"otherData\":{\"cpu0\":{\"node time us\":");
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    unsigned long long busy = 0, side = 0;
    CU_ASSERT_EQUAL(sscanf(strchr(other, ':') + 1, "{\"cpu0\":{\"node time us\":%llu,\"side by side us\":%llu", &busy,
                           &side),
                    2);
    CU_ASSERT(side <= busy);
    free(text);
    tgc_tensor_release(y);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
}

/* The trace event of node `name` (kind `op`) in text: its thread and its
 * start and length in us; false when it is not there. */
static bool node_event(const char *text, const char *name, const char *op, int *tid, unsigned long long *ts,
                       unsigned long long *dur) {
    char key[128];
    snprintf(key, sizeof key, "\"name\":\"%s\",\"cat\":\"%s\"", name, op);
    const char *at = strstr(text, key);
    while (at != NULL && at > text && *at != '{') at--;
    int pid;
    return at != NULL &&
           sscanf(at, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu", &pid, tid, ts, dur) == 4;
}

/* r's readers big (33.5M multiply-adds, a GEMM's few pieces) and small
 * (2M) become ready together at 2 threads: big runs first and small only
 * after it, on the same thread (executor/step.c, dominant), and y is
 * right. */
static void test_a_dominated_fan_out_runs_in_turn(void) {
    tgc_graph *g = load("tests/data/exec/fan_out.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session *s = open_session(g, "cpu", "cpu=2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(tgc_session_trace_start(s), TGC_OK);
    float *x = malloc(64 * 512 * sizeof *x), *wb = malloc(512 * 1024 * sizeof *wb), *ws = malloc(512 * 64 * sizeof *ws);
    CU_ASSERT_FATAL(x != NULL && wb != NULL && ws != NULL);
    for (int i = 0; i < 64 * 512; i++) x[i] = i % 3 == 0 ? -1.0f : 1.0f; /* r: 0 where x is -1 */
    for (int i = 0; i < 512 * 1024; i++) wb[i] = 0.5f;
    for (int i = 0; i < 512 * 64; i++) ws[i] = 2.0f;
    tgc_tensor *in[3];
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){64, 512}, x, &in[0]), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){512, 1024}, wb, &in[1]), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){512, 64}, ws, &in[2]), TGC_OK);
    const char *names[] = {"x", "wb", "ws"};
    tgc_tensor *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 3, names, in, &y, NULL), TGC_OK);
    const float *py = tgc_tensor_data(y);
    for (int row = 0; row < 64; row++) {
        int ones = 0; /* the positive entries of row `row` of x */
        for (int k = 0; k < 512; k++) ones += (row * 512 + k) % 3 != 0;
        CU_ASSERT_DOUBLE_EQUAL(py[row * 1088], 0.5 * ones, 1e-3);
        CU_ASSERT_DOUBLE_EQUAL(py[row * 1088 + 1087], 2.0 * ones, 1e-3);
    }
    char *text = written_trace(s, (size_t)1 << 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int big_tid = -1, small_tid = -2;
    unsigned long long big_ts = 0, big_dur = 0, small_ts = 0, small_dur = 0;
    CU_ASSERT(node_event(text, "big", "MatMul", &big_tid, &big_ts, &big_dur));
    CU_ASSERT(node_event(text, "small", "MatMul", &small_tid, &small_ts, &small_dur));
    CU_ASSERT_EQUAL(big_tid, small_tid);
    CU_ASSERT(small_ts >= big_ts + big_dur);
    free(text);
    tgc_tensor_release(y);
    for (int i = 0; i < 3; i++) tgc_tensor_release(in[i]);
    free(x), free(wb), free(ws);
    tgc_session_free(s);
    tgc_graph_free(g);
}

/* A chain of 300 nodes run 20 times: 12000 events, several of the
 * trace's blocks, and more names than its string table first holds; every
 * node of every step must be in the file once, under its own name. */
static void test_a_long_trace_keeps_every_event(void) {
    enum { NODES = 300, RUNS = 20 };
    char yaml[] = "/tmp/tgc-chain-XXXXXX";
    int fd = mkstemp(yaml);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "format: tgc/1\nname: chain\ninputs:\n  - {name: x, dtype: float32, shape: [2, 3]}\n");
    fprintf(f, "outputs: [n%d]\nnodes:\n", NODES - 1);
    fprintf(f, "  - {name: n0, op: Neg, inputs: [x]}\n");
    for (int i = 1; i < NODES; i++) fprintf(f, "  - {name: n%d, op: Neg, inputs: [n%d]}\n", i, i - 1);
    fclose(f);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load(yaml, d, &g), TGC_OK);
    if (g == NULL) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    remove(yaml);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session *s = open_session(g, "cpu", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(tgc_session_trace_start(s), TGC_OK);
    tgc_tensor *x;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){2, 3}, NULL, &x), TGC_OK);
    const char *names[] = {"x"};
    for (int r = 0; r < RUNS; r++) {
        tgc_tensor *y = NULL;
        CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &y, NULL), TGC_OK);
        tgc_tensor_release(y);
    }
    char *text = written_trace(s, (size_t)8 << 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int *seen = calloc(NODES, sizeof *seen);
    for (const char *p = text; (p = strstr(p, "\"name\":\"n")) != NULL; p++) {
        int i = -1, used = 0;
        if (sscanf(p, "\"name\":\"n%d\",\"cat\":\"Neg\"%n", &i, &used) == 1 && used > 0 && i >= 0 && i < NODES)
            seen[i]++;
    }
    int wrong = 0;
    for (int i = 0; i < NODES; i++) wrong += seen[i] != RUNS;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"outputs\":\"float32 [2, 3]\""));
    free(seen);
    free(text);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
}

/* Outputs large enough to be copied into the caller's tensors by a pool
 * worker (executor/step.c COPY_ON_POOL_BYTES), in steps long enough that
 * the caller does not run them itself: every value, at 1 and 2 threads,
 * run after run, and still there once the session is freed. */
static void test_large_outputs_are_copied_whole(void) {
    enum { N = 8 * 512 * 512, RUNS = 10 }; /* 8 MiB an output: a step of milliseconds */
    const char *yaml = "format: tgc/1\nname: large\n"
                       "inputs:\n  - {name: x, dtype: float32, shape: [8, 512, 512]}\n"
                       "outputs: [y, z]\nnodes:\n  - {name: y, op: Neg, inputs: [x]}\n"
                       "  - {name: z, op: Relu, inputs: [y]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load_string(yaml, strlen(yaml), "large.yaml", ".", d, &g), TGC_OK);
    if (g == NULL) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    float *xs = malloc(N * sizeof *xs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xs);
    for (int i = 0; i < N; i++) xs[i] = (float)(i % 97 - 48);
    tgc_tensor *x;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){8, 512, 512}, xs, &x), TGC_OK);
    const char *threads[] = {"cpu=1", "cpu=2"};
    for (int t = 0; t < 2; t++) {
        tgc_session *s = open_session(g, "cpu", threads[t]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        const char *names[] = {"x"};
        tgc_tensor *outs[2] = {NULL, NULL};
        int wrong = 0;
        for (int r = 0; r < RUNS; r++) {
            tgc_tensor_release(outs[0]);
            tgc_tensor_release(outs[1]);
            outs[0] = outs[1] = NULL;
            CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, &x, outs, NULL), TGC_OK);
            const float *y = tgc_tensor_data(outs[0]), *z = tgc_tensor_data(outs[1]);
            for (int i = 0; i < N; i++) wrong += y[i] != -xs[i] || z[i] != (xs[i] < 0 ? -xs[i] : 0.0f);
        }
        tgc_session_free(s); /* the outputs are the caller's */
        const float *y = tgc_tensor_data(outs[0]), *z = tgc_tensor_data(outs[1]);
        for (int i = 0; i < N; i++) wrong += y[i] != -xs[i] || z[i] != (xs[i] < 0 ? -xs[i] : 0.0f);
        CU_ASSERT_EQUAL(wrong, 0);
        tgc_tensor_release(outs[0]);
        tgc_tensor_release(outs[1]);
    }
    tgc_tensor_release(x);
    free(xs);
    tgc_graph_free(g);
}

TGC_TEST_MAIN("parallel executor",
              {"a failing node aborts the step across devices", test_failing_node_aborts_the_step_across_devices},
              {"the hook is read when the session is made", test_the_hook_is_read_when_the_session_is_made},
              {"results are bitwise identical", test_results_are_bitwise_identical},
              {"a thousand runs do not grow", test_a_thousand_runs_do_not_grow},
              {"the trace has nodes, flows and counters", test_trace_has_nodes_flows_and_counters},
              {"a long trace keeps every event", test_a_long_trace_keeps_every_event},
              {"a dominated fan-out runs in turn", test_a_dominated_fan_out_runs_in_turn},
              {"large outputs are copied whole", test_large_outputs_are_copied_whole})
