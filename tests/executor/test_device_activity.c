/* What a step's work takes on an OpenCL device (tgc_device_activity, the
 * memory report's "kernel launches per step", "host waits per step" and
 * "device allocations per step"), counted by hand:
 *
 *   y = Sigmoid(Neg(Relu(x))) on gpu0, no passes (three kernels):
 *   3 launches; 1 host wait: x is copied in without waiting (the caller's
 *   feed outlives the step), and reading y back waits for the in-order
 *   queue, so the step's end has nothing left to finish; allocations: the
 *   arena's first region in the first step, none in the next; y equal to
 *   the same arithmetic in double within float32 rounding.
 *   y = MatMul(x, x), [64, 64] x [64, 64]: one launch (the implicit
 *   GEMM's kernel), one wait.
 *   y = LeakyRelu(Conv(x, w, b), alpha 0.1), x [1, 2, 8, 8], w [3, 2, 3,
 *   3], pads 1: the activation absorbed (executor/fuse.c) and applied in
 *   the Conv kernel's epilogue: one launch; y against the same
 *   convolution summed in double in this file. y = Sigmoid(MatMul(x, x))
 *   likewise.
 *
 * A cpu counts nothing. Skipped without an OpenCL device. */
#include "tests/harness.h"

#include "executor/memory_plan.h"
#include "executor/session.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char chain[] = "format: tgc/1\n"
                            "inputs: [{name: x, dtype: float32, shape: [4, 256]}]\n"
                            "outputs: [y]\n"
                            "nodes:\n"
                            "  - {name: a, op: Relu, inputs: [x], device: gpu0}\n"
                            "  - {name: b, op: Neg, inputs: [a], device: gpu0}\n"
                            "  - {name: y, op: Sigmoid, inputs: [b], device: gpu0}\n";

static const char matmul[] = "format: tgc/1\n"
                             "inputs: [{name: x, dtype: float32, shape: [64, 64]}]\n"
                             "outputs: [y]\n"
                             "nodes:\n"
                             "  - {name: y, op: MatMul, inputs: [x, x], device: gpu0}\n";

static const char conv_act[] =
    "format: tgc/1\n"
    "inputs: [{name: x, dtype: float32, shape: [1, 2, 8, 8]}]\n"
    "outputs: [y]\n"
    "initializers:\n"
    "  - {name: w, dtype: float32, shape: [3, 2, 3, 3], values: [-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, "
    "-0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, "
    "-0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3, -0.3, -0.2, "
    "-0.1, 0, 0.1]}\n"
    "  - {name: b, dtype: float32, shape: [3], values: [0.5, -0.25, 0.1]}\n"
    "nodes:\n"
    "  - {name: c, op: Conv, inputs: [x, w, b], attrs: {pads: [1, 1, 1, 1]}, device: gpu0}\n"
    "  - {name: y, op: LeakyRelu, inputs: [c], attrs: {alpha: 0.1}, device: gpu0}\n";

static const char matmul_act[] = "format: tgc/1\n"
                                 "inputs: [{name: x, dtype: float32, shape: [64, 64]}]\n"
                                 "outputs: [y]\n"
                                 "nodes:\n"
                                 "  - {name: m, op: MatMul, inputs: [x, x], device: gpu0}\n"
                                 "  - {name: y, op: Sigmoid, inputs: [m], device: gpu0}\n";

static const char gather[] = "format: tgc/1\n"
                             "inputs:\n"
                             "  - {name: x, dtype: float32, shape: [5, 3]}\n"
                             "  - {name: idx, dtype: int64, shape: [2]}\n"
                             "outputs: [y]\n"
                             "nodes:\n"
                             "  - {name: g, op: Gather, inputs: [x, idx], device: gpu0}\n"
                             "  - {name: y, op: Relu, inputs: [g], device: gpu0}\n";

static const char resize[] = "format: tgc/1\n"
                             "inputs: [{name: x, dtype: float32, shape: [1, 1, 2, 2]}]\n"
                             "outputs: [y]\n"
                             "initializers: [{name: scales, dtype: float32, shape: [4], values: [1, 1, 2, 2]}]\n"
                             "nodes:\n"
                             "  - {name: r, op: Resize, inputs: [x, '', scales], attrs: {mode: nearest}, "
                             "device: gpu0}\n"
                             "  - {name: k, op: Constant, attrs: {value_float: 0.5}, device: gpu0}\n"
                             "  - {name: y, op: Add, inputs: [r, k], device: gpu0}\n";

static const char int_div[] = "format: tgc/1\n"
                              "inputs:\n"
                              "  - {name: a, dtype: int64, shape: [4]}\n"
                              "  - {name: b, dtype: int64, shape: [4]}\n"
                              "outputs: [y]\n"
                              "nodes:\n"
                              "  - {name: y, op: Div, inputs: [a, b], device: gpu0}\n";

static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

typedef struct fixture {
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x;
    tgc_diags *d;
} fixture;

/* A session of yaml on `devices`, and x of the given dims. */
static bool open_fixture_on(fixture *f, const char *yaml, const char *devices, int rank, const int64_t *dims) {
    memset(f, 0, sizeof *f);
    f->d = tgc_diags_create();
    tgc_session_options o = {.memory_report = 1, .optimize = TGC_OPTIMIZE_NONE};
    if (tgc_graph_load_string(yaml, strlen(yaml), "activity.yaml", NULL, f->d, &f->g) != TGC_OK ||
        tgc_session_create(f->g, devices, &o, f->d, &f->s) != TGC_OK ||
        tgc_tensor_alloc(TGC_FLOAT32, rank, dims, &f->x) != TGC_OK) {
        tgc_diags_print(f->d, stderr);
        return false;
    }
    float *x = (float *)tgc_tensor_data(f->x);
    for (int64_t i = 0; i < tgc_tensor_numel(f->x); i++) x[i] = (float)(i % 9 - 4) * 0.25f;
    return true;
}

static bool open_fixture_dims(fixture *f, const char *yaml, int rank, const int64_t *dims) {
    return open_fixture_on(f, yaml, "cpu,gpu0", rank, dims);
}

static bool open_fixture(fixture *f, const char *yaml, int64_t rows, int64_t cols) {
    return open_fixture_dims(f, yaml, 2, (int64_t[]){rows, cols});
}

/* One step; *worst (when not NULL): the largest difference of y from
 * sigmoid(-relu(x)) computed in double. */
static tgc_status run_once(fixture *f, double *worst) {
    const char *names[] = {"x"};
    tgc_tensor *y = NULL;
    tgc_status st = tgc_session_run(f->s, 1, names, &f->x, &y, f->d);
    if (st == TGC_OK && worst != NULL) {
        const float *x = tgc_tensor_data(f->x), *yv = tgc_tensor_data(y);
        *worst = 0;
        for (int64_t i = 0; i < tgc_tensor_numel(f->x); i++) {
            double r = x[i] > 0 ? x[i] : 0, want = 1 / (1 + exp(r));
            if (fabs(yv[i] - want) > *worst) *worst = fabs(yv[i] - want);
        }
    }
    tgc_tensor_release(y);
    return st;
}

/* The last step's figures of the session's device `name`; *counted false
 * where the device counts nothing. */
static tgc_device_activity last_step(const tgc_session *s, const char *name, bool *counted) {
    tgc_device_activity a = {-1, -1, -1};
    *counted = false;
    for (int i = 0; i < tgc_session_device_count(s); i++) {
        if (strcmp(tgc_session_device_name(s, i), name) != 0) continue;
        a = s->watch->gauges[i].last_step;
        *counted = s->watch->gauges[i].activity_counted;
    }
    return a;
}

static void close_fixture(fixture *f) {
    tgc_session_free(f->s);
    tgc_tensor_release(f->x);
    tgc_graph_free(f->g);
    tgc_diags_free(f->d);
}

static void test_chain(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, chain, 4, 256));
    bool counted = false;
    double worst = 1;
    CU_ASSERT_EQUAL_FATAL(run_once(&f, &worst), TGC_OK);
    CU_ASSERT(worst < 1e-6);
    tgc_device_activity a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_TRUE(counted);
    CU_ASSERT_EQUAL(a.launches, 3);
    CU_ASSERT_EQUAL(a.host_waits, 1);
    CU_ASSERT(a.allocations >= 1); /* the arena's first region */
    for (int r = 0; r < 3; r++) {
        worst = 1;
        CU_ASSERT_EQUAL(run_once(&f, &worst), TGC_OK);
        CU_ASSERT(worst < 1e-6);
    }
    a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_EQUAL(a.launches, 3);
    CU_ASSERT_EQUAL(a.host_waits, 1);
    CU_ASSERT_EQUAL(a.allocations, 0);
    last_step(f.s, "cpu0", &counted);
    CU_ASSERT_FALSE(counted);
    close_fixture(&f);
}

static void test_matmul(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, matmul, 64, 64));
    bool counted = false;
    for (int r = 0; r < 2; r++) CU_ASSERT_EQUAL(run_once(&f, NULL), TGC_OK);
    tgc_device_activity a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_TRUE(counted);
    CU_ASSERT_EQUAL(a.launches, 1);
    CU_ASSERT_EQUAL(a.host_waits, 1);
    close_fixture(&f);
}

/* Two steps of f's session on x; the second's output (the caller releases
 * it), or NULL when a step failed. */
static tgc_tensor *run_twice(fixture *f) {
    const char *names[] = {"x"};
    tgc_tensor *y = NULL;
    for (int r = 0; r < 2; r++) {
        tgc_tensor_release(y);
        y = NULL;
        if (tgc_session_run(f->s, 1, names, &f->x, &y, f->d) != TGC_OK) return NULL;
    }
    return y;
}

static void test_conv_activation(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture_dims(&f, conv_act, 4, (int64_t[]){1, 2, 8, 8}));
    tgc_tensor *y = run_twice(&f); /* the step after the first: its caches built */
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const float *x = tgc_tensor_data(f.x), *yv = tgc_tensor_data(y);
    static const double bias[3] = {0.5, -0.25, 0.1};
    double worst = 0;
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) {
                double sum = bias[m];
                for (int ci = 0; ci < 2; ci++)
                    for (int u = 0; u < 3; u++)
                        for (int v = 0; v < 3; v++) {
                            int ii = i + u - 1, jj = j + v - 1, widx = ((m * 2 + ci) * 3 + u) * 3 + v;
                            if (ii >= 0 && ii < 8 && jj >= 0 && jj < 8)
                                sum += (double)x[(ci * 8 + ii) * 8 + jj] * ((widx % 7 - 3) * 0.1);
                        }
                double want = sum > 0 ? sum : 0.1 * sum, got = yv[(m * 8 + i) * 8 + j];
                if (fabs(got - want) > worst) worst = fabs(got - want);
            }
    CU_ASSERT(worst < 1e-5);
    bool counted = false;
    tgc_device_activity a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_TRUE(counted);
    CU_ASSERT_EQUAL(a.launches, 1);
    CU_ASSERT_EQUAL(a.host_waits, 1);
    tgc_tensor_release(y);
    close_fixture(&f);
}

static void test_matmul_activation(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, matmul_act, 64, 64));
    tgc_tensor *y = run_twice(&f); /* the step after the first: its caches built */
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const float *x = tgc_tensor_data(f.x), *yv = tgc_tensor_data(y);
    double worst = 0;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            double sum = 0;
            for (int k = 0; k < 64; k++) sum += (double)x[i * 64 + k] * x[k * 64 + j];
            double want = 1 / (1 + exp(-sum));
            if (fabs(yv[i * 64 + j] - want) > worst) worst = fabs(yv[i * 64 + j] - want);
        }
    CU_ASSERT(worst < 1e-5);
    bool counted = false;
    tgc_device_activity a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_EQUAL(a.launches, 1);
    tgc_tensor_release(y);
    close_fixture(&f);
}

/* Runs the gather graph with idx {i0, i1}; its status, y into want's
 * comparison (*worst: the largest |y - relu(x[idx])|). */
static tgc_status run_gather(fixture *f, int64_t i0, int64_t i1, double *worst) {
    tgc_tensor *idx = NULL, *y = NULL, *feeds[2] = {f->x, NULL};
    if (tgc_tensor_alloc(TGC_INT64, 1, (int64_t[]){2}, &idx) != TGC_OK) return TGC_ERR_NOMEM;
    int64_t *iv = (int64_t *)tgc_tensor_data(idx); /* the caller's, written before the run */
    iv[0] = i0;
    iv[1] = i1;
    feeds[1] = idx;
    const char *names[] = {"x", "idx"};
    tgc_status st = tgc_session_run(f->s, 2, names, feeds, &y, f->d);
    if (st == TGC_OK) {
        const float *x = tgc_tensor_data(f->x), *yv = tgc_tensor_data(y);
        *worst = 0;
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 3; j++) {
                int64_t row = iv[r] < 0 ? iv[r] + 5 : iv[r];
                double want = x[row * 3 + j] > 0 ? x[row * 3 + j] : 0;
                if (fabs(yv[r * 3 + j] - want) > *worst) *worst = fabs(yv[r * 3 + j] - want);
            }
    }
    tgc_tensor_release(y);
    tgc_tensor_release(idx);
    return st;
}

static void test_gather_check_at_the_end(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, gather, 5, 3));
    double worst = 1;
    CU_ASSERT_EQUAL(run_gather(&f, 1, 4, &worst), TGC_OK);
    CU_ASSERT_EQUAL(run_gather(&f, 1, 4, &worst), TGC_OK);
    CU_ASSERT(worst == 0);
    bool counted = false;
    tgc_device_activity a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_EQUAL(a.host_waits, 1);
    CU_ASSERT_EQUAL(a.launches, 2);
    CU_ASSERT_EQUAL(run_gather(&f, 1, 7, &worst), TGC_ERR_RUNTIME);
    const char *want = "node 'g' (Gather) on gpu0: Gather: an index is out of range [-5, 5) for axis 0 of data [5, 3]";
    bool named = false;
    for (size_t i = 0; i < tgc_diags_count(f.d); i++) named |= strstr(tgc_diag_message(f.d, i), want) != NULL;
    CU_ASSERT_TRUE(named);
    if (!named) tgc_diags_print(f.d, stderr);
    worst = 1;
    CU_ASSERT_EQUAL(run_gather(&f, 4, -5, &worst), TGC_OK);
    CU_ASSERT(worst == 0);
    close_fixture(&f);
}

/* The trace written to a temporary file, as text (the caller frees it). */
static char *trace_text(tgc_session *s) {
    char path[] = "/tmp/tgc-trace-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    close(fd);
    char *text = NULL;
    FILE *f = tgc_session_trace_write(s, path, NULL) == TGC_OK ? fopen(path, "r") : NULL;
    if (f != NULL && (text = calloc(1, 1 << 20)) != NULL) fread(text, 1, (1 << 20) - 1, f);
    if (f != NULL) fclose(f);
    remove(path);
    return text;
}

static void test_trace_device_times(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture(&f, chain, 4, 256));
    CU_ASSERT_EQUAL_FATAL(tgc_session_trace_start(f.s), TGC_OK);
    for (int r = 0; r < 2; r++) CU_ASSERT_EQUAL(run_once(&f, NULL), TGC_OK);
    char *text = trace_text(f.s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *meta = strstr(text, "\"args\":{\"name\":\"gpu0 (device)\"}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    const char *line = meta;
    while (line > text && line[-1] != '\n') line--;
    int pid = 0;
    CU_ASSERT_EQUAL_FATAL(sscanf(line, "{\"ph\":\"M\",\"pid\":%d", &pid), 1);
    char head[48];
    snprintf(head, sizeof head, "{\"ph\":\"X\",\"pid\":%d,\"tid\":0,", pid);
    static const char *const order[] = {"a", "b", "y"};
    int seen = 0;
    unsigned long long last_end = 0;
    bool in_order = true, named = true;
    for (const char *p = text; (p = strstr(p, head)) != NULL; p++) {
        unsigned long long ts = 0, dur = 0;
        char name[16] = "";
        if (sscanf(p + strlen(head), "\"ts\":%llu,\"dur\":%llu,\"name\":\"%15[^\"]", &ts, &dur, name) != 3) break;
        in_order &= ts >= last_end;
        last_end = ts + dur;
        named &= strcmp(name, order[seen % 3]) == 0;
        const char *end = strchr(p, '\n');
        const char *kernel = strstr(p, "\"kernel\":\"");
        named &= kernel != NULL && (end == NULL || kernel < end) && kernel[10] != '"';
        seen++;
    }
    CU_ASSERT_EQUAL(seen, 6);
    CU_ASSERT_TRUE(in_order);
    CU_ASSERT_TRUE(named);
    free(text);
    close_fixture(&f);
}

static void test_uploads_without_waiting(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture_dims(&f, resize, 4, (int64_t[]){1, 1, 2, 2}));
    tgc_tensor *y = run_twice(&f); /* the step after the first: its caches built */
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    const float *x = tgc_tensor_data(f.x), *yv = tgc_tensor_data(y);
    bool equal = true;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) equal &= yv[i * 4 + j] == x[(i / 2) * 2 + j / 2] + 0.5f;
    CU_ASSERT_TRUE(equal);
    bool counted = false;
    tgc_device_activity a = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_EQUAL(a.host_waits, 1);
    tgc_tensor_release(y);
    close_fixture(&f);
}

static void test_host_feeds(void) {
    if (!have_gpu()) return;
    fixture f;
    CU_ASSERT_FATAL(open_fixture_on(&f, int_div, "gpu0", 1, (int64_t[]){1})); /* no cpu device to feed */
    static const int64_t a[4] = {7, 9, 10, 12}, b[4] = {2, 4, 3, 12};
    tgc_tensor *ta = NULL, *tb = NULL, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_alloc(TGC_INT64, 1, (int64_t[]){4}, &ta), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_alloc(TGC_INT64, 1, (int64_t[]){4}, &tb), TGC_OK);
    memcpy((void *)tgc_tensor_data(ta), a, sizeof a); /* the caller's, written before the run */
    memcpy((void *)tgc_tensor_data(tb), b, sizeof b);
    const char *names[] = {"a", "b"};
    tgc_tensor *feeds[] = {ta, tb};
    for (int r = 0; r < 2; r++) {
        tgc_tensor_release(y);
        y = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_session_run(f.s, 2, names, feeds, &y, f.d), TGC_OK);
    }
    const int64_t *got = tgc_tensor_data(y);
    CU_ASSERT(got[0] == 3 && got[1] == 2 && got[2] == 3 && got[3] == 1);
    bool counted = false;
    tgc_device_activity act = last_step(f.s, "gpu0", &counted);
    CU_ASSERT_EQUAL(act.host_waits, 0);
    CU_ASSERT_EQUAL(act.allocations, 0);
    tgc_tensor_release(y);
    tgc_tensor_release(ta);
    tgc_tensor_release(tb);
    close_fixture(&f);
}

TGC_TEST_MAIN("device_activity", {"three kernels: launches, waits, allocations", test_chain},
              {"one MatMul, one launch", test_matmul},
              {"a Conv and its activation in one launch", test_conv_activation},
              {"a MatMul and its activation in one launch", test_matmul_activation},
              {"a Gather's index check read at the step's end", test_gather_check_at_the_end},
              {"a traced step's kernels on the device's own track", test_trace_device_times},
              {"Resize's tables and a Constant go in without a wait", test_uploads_without_waiting},
              {"feeds read only on the host stay there", test_host_feeds})
