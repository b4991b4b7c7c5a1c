/* Graphs built in code (tgc_graph_builder) and run as functions
 * (tgc_function): y = Relu(x @ w + b) for x of [N, 4], built node by node
 * with each value's shape known as it is added; the graph dumps as tgc/1
 * YAML (inline, or its constants as .npy files in a folder) that loads and
 * runs again alike; a mistake fails the call that made
 * it; a function's outputs stay on the device that made them (gpu0: PoCL
 * here), count on the devices' figures, go with a scope, and nothing of a
 * call outlives it; threads call one function at once. Values against
 * sums written out here. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const float W[4][3] = {{1, 0, -1}, {2, 1, 0}, {0, -1, 3}, {-2, 0.5f, 1}};
static const float B[3] = {0.5f, -1, 0};

/* Relu(x @ W + B) for x of [n, 4], written out. */
static void reference(const float *x, int n, float *y) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) {
            double s = B[j];
            for (int k = 0; k < 4; k++) s += (double)x[i * 4 + k] * W[k][j];
            y[i * 3 + j] = s > 0 ? (float)s : 0;
        }
}

static tgc_tensor *host_tensor(int rank, const int64_t *dims, const float *data) {
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, rank, dims, data, &t), TGC_OK);
    return t;
}

/* The graph, built; its `xw` value's shape checked on the way. */
static tgc_graph *build_mlp(tgc_diags *diags) {
    tgc_graph_builder *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_create("mlp", &b), TGC_OK);
    tgc_builder_value x, w, bias, xw, sum, y;
    tgc_tensor *wt = host_tensor(2, (int64_t[]){4, 3}, &W[0][0]), *bt = host_tensor(1, (int64_t[]){3}, B);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_input(b, "x", TGC_FLOAT32, 2, (int64_t[]){-1, 4},
                                                  (const char *[]){"N", NULL}, diags, &x), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_constant(b, "w", wt, diags, &w), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_constant(b, NULL, bt, diags, &bias), TGC_OK);
    tgc_tensor_release(wt); /* the builder holds copies */
    tgc_tensor_release(bt);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_op(b, "MatMul", NULL, 0, (tgc_builder_value[]){x, w}, 2, 1, NULL, NULL,
                                               diags, &xw), TGC_OK);
    tgc_dtype dt;
    int rank;
    int64_t dims[TGC_MAX_TENSOR_RANK];
    const char *syms[TGC_MAX_TENSOR_RANK];
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_value_info(b, xw, &dt, &rank, dims, syms), TGC_OK);
    CU_ASSERT_EQUAL(dt, TGC_FLOAT32);
    CU_ASSERT_EQUAL_FATAL(rank, 2);
    CU_ASSERT_EQUAL(dims[0], -1);
    CU_ASSERT_STRING_EQUAL(syms[0], "N");
    CU_ASSERT_EQUAL(dims[1], 3);
    CU_ASSERT_PTR_NULL(syms[1]);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_op(b, "Add", NULL, 0, (tgc_builder_value[]){xw, bias}, 2, 1, NULL, NULL,
                                               diags, &sum), TGC_OK);
    /* computed and never read: not in the graph */
    tgc_builder_value dropped;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_op(b, "Neg", NULL, 0, &sum, 1, 1, "dropped", NULL, diags, &dropped),
                          TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_op(b, "Relu", NULL, 0, &sum, 1, 1, "y", NULL, diags, &y), TGC_OK);
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_finish(b, &y, 1, (const char *[]){"out"}, diags, &g), TGC_OK);
    tgc_graph_builder_free(b);
    return g;
}

static void check_values(tgc_tensor *y, const float *x, int n) {
    float want[12];
    reference(x, n, want);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_rank(y), 2);
    CU_ASSERT_EQUAL(tgc_tensor_dims(y)[0], n);
    CU_ASSERT_EQUAL(tgc_tensor_dims(y)[1], 3);
    const float *got = tgc_tensor_data(y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    for (int i = 0; i < n * 3; i++) CU_ASSERT_DOUBLE_EQUAL(got[i], want[i], 1e-6);
}

static const float X2[8] = {1, -2, 3, 0.5f, 0, 1, -1, 2};

/* The built graph runs in a session; its dump loads and runs alike. */
static void test_build_dump_and_run(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = build_mlp(diags);
    CU_ASSERT_EQUAL(tgc_graph_node_count(g), 6); /* x, w, const_0, MatMul, Add, y: not the Neg */
    CU_ASSERT_EQUAL(tgc_graph_input_count(g), 1);
    char path[] = "/tmp/tgc_test_function_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CU_ASSERT_EQUAL_FATAL(tgc_graph_dump_yaml(g, f, NULL, diags), TGC_OK);
    fclose(f);
    tgc_graph *again = NULL;
    tgc_status s = tgc_graph_load(path, diags, &again);
    if (s != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
    remove(path);
    /* into a folder: the constants as NAME.npy beside the YAML */
    char dir[] = "/tmp/tgc_test_function_dir_XXXXXX", yaml[128], npy[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(yaml, sizeof yaml, "%s/mlp.yaml", dir);
    snprintf(npy, sizeof npy, "%s/w.npy", dir);
    f = fopen(yaml, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_dump_yaml(g, f, dir, diags), TGC_OK);
    fclose(f);
    tgc_tensor *w_back = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_load_npy(npy, diags, &w_back), TGC_OK);
    CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(w_back), W, sizeof W), 0);
    tgc_tensor_release(w_back);
    tgc_graph *from_dir = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load(yaml, diags, &from_dir), TGC_OK);
    remove(npy);
    snprintf(npy, sizeof npy, "%s/const_0.npy", dir);
    remove(npy);
    remove(yaml);
    rmdir(dir);
    tgc_tensor *x = host_tensor(2, (int64_t[]){2, 4}, X2);
    const tgc_graph *graphs[] = {g, again, from_dir};
    for (int i = 0; i < 3; i++) {
        tgc_session *sess = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_session_create(graphs[i], "cpu", NULL, diags, &sess), TGC_OK);
        CU_ASSERT_STRING_EQUAL(tgc_session_output_name(sess, 0), "out");
        tgc_tensor *y = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_session_run(sess, 1, (const char *[]){"x"}, &x, &y, diags), TGC_OK);
        check_values(y, X2, 2);
        tgc_tensor_release(y);
        tgc_session_free(sess);
    }
    tgc_tensor_release(x);
    tgc_graph_free(from_dir);
    tgc_graph_free(again);
    tgc_graph_free(g);
    tgc_diags_free(diags);
}

/* The message of the last error in d contains `part`. */
static void check_error(tgc_diags *d, tgc_status s, const char *part) {
    CU_ASSERT_EQUAL(s, TGC_ERR_INVALID);
    size_t n = tgc_diags_count(d);
    CU_ASSERT_FATAL(n > 0);
    const char *msg = tgc_diag_message(d, n - 1);
    if (strstr(msg, part) == NULL) fprintf(stderr, "\n    message: %s (wanted '%s')\n", msg, part);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, part));
}

/* Each mistake fails its own call; the builder goes on, and the failed
 * node is left out of the graph. */
static void test_errors_at_the_call(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_graph_builder *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_create("bad", &b), TGC_OK);
    tgc_builder_value x, w, out[2];
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_input(b, "x", TGC_FLOAT32, 2, (int64_t[]){2, 4}, NULL, diags, &x), TGC_OK);
    tgc_tensor *wt = host_tensor(2, (int64_t[]){5, 3}, (float[15]){0});
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_constant(b, "w", wt, diags, &w), TGC_OK);
    tgc_tensor_release(wt);
    check_error(diags, tgc_graph_builder_op(b, "MatMul", NULL, 0, (tgc_builder_value[]){x, w}, 2, 1, "mm", NULL, diags,
                                            out), "mm");
    tgc_builder_value failed = {2, 0}; /* mm, the third node added (after x and w) */
    check_error(diags, tgc_graph_builder_op(b, "Relu", NULL, 0, &failed, 1, 1, NULL, NULL, diags, out),
                "comes from node 'mm', which failed");
    check_error(diags, tgc_graph_builder_op(b, "Frobnicate", NULL, 0, &x, 1, 1, NULL, NULL, diags, out),
                "unknown op 'Frobnicate'");
    check_error(diags, tgc_graph_builder_op(b, "Relu", NULL, 0, &x, 1, 1, "x", NULL, diags, out),
                "'x' is defined twice");
    tgc_op_attr bad = {.name = "alpha", .type = TGC_OP_ATTR_FLOAT, .f = 1};
    check_error(diags, tgc_graph_builder_op(b, "Relu", &bad, 1, &x, 1, 1, NULL, NULL, diags, out),
                "unknown attribute 'alpha'");
    check_error(diags, tgc_graph_builder_op(b, "Add", NULL, 0, (tgc_builder_value[]){x, {99, 0}}, 2, 1, NULL, NULL,
                                            diags, out), "no value");
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_op(b, "Transpose", NULL, 0, &x, 1, 1, NULL, NULL, diags, out), TGC_OK);
    tgc_dtype dt;
    int rank;
    int64_t dims[TGC_MAX_TENSOR_RANK];
    CU_ASSERT_EQUAL(tgc_graph_builder_value_info(b, out[0], &dt, &rank, dims, NULL), TGC_OK);
    CU_ASSERT_EQUAL(dims[0], 4); /* the Transpose: [4, 2] */
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_builder_finish(b, out, 1, NULL, diags, &g), TGC_OK); /* the failed mm left out */
    CU_ASSERT_EQUAL(tgc_graph_node_count(g), 2);
    check_error(diags, tgc_graph_builder_op(b, "Relu", NULL, 0, &x, 1, 1, NULL, NULL, diags, out), "finished");
    tgc_graph_free(g);
    tgc_graph_builder_free(b);
    tgc_diags_free(diags);
}

/* Calls on `devices` with x fed from `x_device`: values, where the output
 * lies, and the devices' figures back where they were once the outputs go. */
static void call_on(const char *devices, const char *x_device, const char *y_device) {
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = build_mlp(diags);
    tgc_eager *e = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_create(devices, NULL, diags, &e), TGC_OK);
    tgc_tensor *hx = host_tensor(2, (int64_t[]){2, 4}, X2), *x = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, hx, x_device, &x, diags), TGC_OK);
    tgc_memory_device before = tgc_test_device_memory(y_device);
    tgc_memory_info live = tgc_memory();
    tgc_function *f = NULL;
    tgc_status s = tgc_function_create(g, devices, NULL, diags, &f);
    if (s != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
    for (int round = 0; round < 3; round++) {
        tgc_tensor *y = NULL;
        s = tgc_function_call(f, &x, 1, &y, 1, diags);
        if (s != TGC_OK) tgc_diags_print(diags, stderr);
        CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
        CU_ASSERT_STRING_EQUAL(tgc_tensor_device(y), y_device);
        tgc_memory_device during = tgc_test_device_memory(y_device);
        CU_ASSERT_EQUAL(during.live_tensors - before.live_tensors, 1);
        tgc_tensor *hy = y;
        if (tgc_tensor_data(y) == NULL) CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, y, "cpu0", &hy, diags), TGC_OK);
        check_values(hy, X2, 2);
        if (hy != y) tgc_tensor_release(hy);
        tgc_tensor_release(y);
    }
    tgc_memory_device weights = tgc_test_device_memory(y_device);
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, live.live_tensors); /* nothing of the calls is left */
    tgc_function_free(f);
    tgc_memory_device after = tgc_test_device_memory(y_device);
    printf("\n    %s: %s bytes in use %lld before the function, %lld while it lives, %lld after; peak %lld\n",
           devices, y_device, (long long)before.bytes_in_use, (long long)weights.bytes_in_use,
           (long long)after.bytes_in_use, (long long)after.peak_bytes_in_use);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    CU_ASSERT_EQUAL(after.live_tensors, before.live_tensors);
    CU_ASSERT(after.peak_bytes_in_use >= before.bytes_in_use + 2 * 3 * 4); /* a call's output counted there */
    tgc_tensor_release(x);
    tgc_tensor_release(hx);
    tgc_eager_free(e);
    tgc_graph_free(g);
    tgc_diags_free(diags);
}

static void test_call_cpu(void) { call_on("cpu", "cpu0", "cpu0"); }
static void test_call_gpu(void) {
    if (tgc_test_has_opencl_device()) call_on("cpu,gpu0", "gpu0", "gpu0");
}

/* A call's outputs belong to the caller's scope. */
static void test_call_in_scope(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = build_mlp(diags);
    tgc_function *f = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_function_create(g, "cpu", NULL, diags, &f), TGC_OK);
    tgc_tensor *x = host_tensor(2, (int64_t[]){2, 4}, X2), *y = NULL;
    tgc_memory_info before = tgc_memory();
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_function_call(f, &x, 1, &y, 1, diags), TGC_OK);
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors + 1);
    CU_ASSERT_EQUAL(tgc_scope_end(), 1);
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors);
    /* a wrong call: nothing made */
    tgc_tensor *none[2] = {NULL, NULL};
    CU_ASSERT_EQUAL(tgc_function_call(f, &x, 1, none, 2, diags), TGC_ERR_INVALID);
    tgc_tensor *bad = host_tensor(2, (int64_t[]){2, 5}, (float[10]){0});
    CU_ASSERT_EQUAL(tgc_function_call(f, &bad, 1, none, 1, diags), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(none[0]);
    tgc_tensor_release(bad);
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors);
    tgc_tensor_release(x);
    tgc_function_free(f);
    tgc_graph_free(g);
    tgc_diags_free(diags);
}

#define THREADS 4
#define CALLS 300

typedef struct caller {
    tgc_function *f;
    int n; /* rows of its x */
    int wrong;
} caller;

static void *call_many(void *arg) {
    caller *c = arg;
    tgc_diags *diags = tgc_diags_create();
    float x[12], want[9];
    for (int i = 0; i < c->n * 4; i++) x[i] = (float)((i * 7 + c->n) % 11) - 5;
    reference(x, c->n, want);
    tgc_tensor *xt = NULL;
    tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){c->n, 4}, x, &xt);
    for (int k = 0; k < CALLS; k++) {
        tgc_tensor *y = NULL;
        if (tgc_function_call(c->f, &xt, 1, &y, 1, diags) != TGC_OK || tgc_tensor_dims(y)[0] != c->n) {
            c->wrong++;
        } else {
            const float *got = tgc_tensor_data(y);
            for (int i = 0; i < c->n * 3; i++) c->wrong += got[i] != want[i];
        }
        tgc_tensor_release(y);
    }
    tgc_tensor_release(xt);
    tgc_diags_free(diags);
    return NULL;
}

/* Threads call one function at once, each with its own N. */
static void test_threads(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_graph *g = build_mlp(diags);
    tgc_function *f = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_function_create(g, "cpu", NULL, diags, &f), TGC_OK);
    tgc_memory_info before = tgc_memory();
    pthread_t th[THREADS];
    caller c[THREADS];
    for (int i = 0; i < THREADS; i++) {
        c[i] = (caller){f, 1 + i % 3, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, call_many, &c[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(c[i].wrong, 0);
    }
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors);
    tgc_function_free(f);
    tgc_graph_free(g);
    tgc_diags_free(diags);
}

TGC_TEST_MAIN("functions", {"build, dump and run", test_build_dump_and_run},
              {"errors at the call", test_errors_at_the_call}, {"call on cpu", test_call_cpu},
              {"call on gpu0", test_call_gpu}, {"call in a scope", test_call_in_scope}, {"threads", test_threads})
