/* Eager ops as a user meets them: one op by its ONNX name on host tensors
 * and on gpu0 (PoCL here), values against numpy's or a loop written here;
 * TensorFlow eager's device rules (explicit device, the inputs' device,
 * integer shape arithmetic on cpu0, a fallback where a device has no
 * kernel) and the copies they count; the kernel cache's hits and misses,
 * shapes that depend on values; errors that name the op and leave nothing
 * behind; devices outliving their context while a tensor lives there. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static tgc_tensor *load(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/eager/%s", name);
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_load_npy(tgc_test_path(rel), NULL, &t), TGC_OK);
    return t;
}

static tgc_tensor *floats(int rank, const int64_t *dims, const float *v) {
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, rank, dims, v, &t), TGC_OK);
    return t;
}

static tgc_tensor *ints(int64_t n, const int64_t *v) {
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_INT64, 1, &n, v, &t), TGC_OK);
    return t;
}

static tgc_eager *open_eager(const char *devices, tgc_diags *diags) {
    tgc_eager *e = NULL;
    tgc_status s = tgc_eager_create(devices, NULL, diags, &e);
    if (s != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
    return e;
}

/* Largest |a - b| over n floats of t (read back from any device) and ref. */
static double max_diff(const tgc_tensor *t, const tgc_tensor *ref) {
    int64_t n = tgc_tensor_numel(ref);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(t), n);
    float got[256];
    CU_ASSERT_FATAL(n <= 256);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_read(t, got, (size_t)n * sizeof(float)), TGC_OK);
    const float *want = tgc_tensor_data(ref);
    double worst = 0;
    for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)got[i] - want[i]));
    return worst;
}

static void test_add_on_cpu(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("cpu", diags);
    int64_t dims[] = {2, 3}, bdims[] = {3};
    float a[] = {1, 2, 3, 4, 5, 6}, b[] = {10, -20, 0.5f};
    tgc_tensor *in[] = {floats(2, dims, a), floats(1, bdims, b)}, *y = NULL;
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Add", NULL, 0, in, 2, NULL, &y, 1, diags), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_device(y), "cpu0");
    CU_ASSERT_EQUAL(tgc_tensor_rank(y), 2);
    CU_ASSERT_EQUAL(tgc_tensor_dims(y)[0], 2);
    CU_ASSERT_EQUAL(tgc_tensor_dims(y)[1], 3);
    const float *got = tgc_tensor_data(y); /* cpu0 is host memory */
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(got[i], a[i] + b[i % 3]);
    tgc_eager_stats st = tgc_eager_get_stats(e);
    CU_ASSERT_EQUAL(st.ops, 1);
    CU_ASSERT_EQUAL(st.cache_misses, 1);
    CU_ASSERT_EQUAL(st.cache_hits, 0);
    CU_ASSERT_EQUAL(st.copies, 0); /* host tensors are read in place on cpu0 */
    tgc_tensor_release(y);
    /* the one-call shortcut: the same op, a hit; a unary one; a failure gives NULL and its message */
    y = tgc_eager_apply(e, "Add", in[0], in[1], diags);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(y))[4], a[4] + b[1]);
    tgc_tensor_release(y);
    y = tgc_eager_apply(e, "Neg", in[1], NULL, diags);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(y))[1], 20);
    tgc_tensor_release(y);
    CU_ASSERT_PTR_NULL(tgc_eager_apply(e, "MatMul", in[0], in[0], NULL)); /* [2, 3] x [2, 3] */
    CU_ASSERT_PTR_NULL(tgc_eager_apply(NULL, "Add", in[0], in[1], diags));
    CU_ASSERT_EQUAL(tgc_eager_get_stats(e).cache_hits, 1);
    tgc_tensor_release(in[0]);
    tgc_tensor_release(in[1]);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

static void conv_on(const char *devices, const char *device, const char *where) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager(devices, diags);
    tgc_tensor *in[] = {load("conv_x.npy"), load("conv_w.npy")}, *ref = load("conv_y.npy"), *y = NULL;
    tgc_op_attr pads = {.name = "pads", .type = TGC_OP_ATTR_INTS, .ints = (int64_t[]){1, 1, 1, 1}, .n = 4};
    tgc_status s = tgc_eager_run(e, "Conv", &pads, 1, in, 2, device, &y, 1, diags);
    if (s != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_device(y), where);
    CU_ASSERT(max_diff(y, ref) < 1e-4);
    tgc_tensor_release(y);
    tgc_tensor_release(ref);
    tgc_tensor_release(in[0]);
    tgc_tensor_release(in[1]);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

static void test_conv_cpu(void) { conv_on("cpu", NULL, "cpu0"); }

/* On gpu0 the result stays there until read: no host pointer. */
static void test_conv_gpu(void) {
    conv_on("cpu,gpu0", "gpu0", "gpu0");
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("gpu0", diags);
    CU_ASSERT_EQUAL(tgc_eager_device_count(e), 2); /* cpu0 always */
    CU_ASSERT_STRING_EQUAL(tgc_eager_device_name(e, 0), "cpu0");
    CU_ASSERT_STRING_EQUAL(tgc_eager_device_name(e, 1), "gpu0");
    tgc_tensor *a = load("matmul_a.npy"), *b = load("matmul_b.npy"), *ref = load("matmul_y.npy");
    tgc_tensor *ga = NULL, *in[2], *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, a, "gpu0", &ga, diags), TGC_OK);
    CU_ASSERT_PTR_NULL(tgc_tensor_data(ga));
    in[0] = ga;
    in[1] = b;
    /* no device named: the inputs' (gpu0); b is copied there for the op */
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(e, "MatMul", NULL, 0, in, 2, NULL, &y, 1, diags), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_device(y), "gpu0");
    CU_ASSERT_PTR_NULL(tgc_tensor_data(y));
    CU_ASSERT_EQUAL(tgc_eager_synchronize(e), TGC_OK);
    CU_ASSERT(max_diff(y, ref) < 1e-4);
    tgc_eager_stats st = tgc_eager_get_stats(e);
    CU_ASSERT_EQUAL(st.copies, 2); /* a to gpu0, then b for the op */
    CU_ASSERT_EQUAL(st.copy_bytes, (5 * 7 + 7 * 3) * 4);
    tgc_tensor *back = NULL;
    CU_ASSERT_EQUAL(tgc_eager_copy(e, y, "host", &back, diags), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_device(back), "host");
    CU_ASSERT(max_diff(back, ref) < 1e-4);
    tgc_tensor_release(back);
    tgc_tensor_release(y);
    tgc_tensor_release(ga);
    tgc_tensor_release(a);
    tgc_tensor_release(b);
    tgc_tensor_release(ref);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

/* Integer shape arithmetic stays on cpu0 even when the inputs' device is
 * a gpu; an op without a kernel on the inputs' device falls back to cpu0;
 * an explicit device without one is an error. */
static void test_device_rules(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("cpu,gpu0", diags);
    int64_t dims[] = {2, 2};
    tgc_tensor *x = floats(2, dims, (float[]){1, -2, 3, -4}), *gx = NULL, *shape = NULL, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, x, "gpu", &gx, diags), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(e, "Relu", NULL, 0, &gx, 1, NULL, &y, 1, diags), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_device(y), "gpu0");
    float r[4];
    CU_ASSERT_EQUAL(tgc_tensor_read(y, r, sizeof r), TGC_OK);
    CU_ASSERT(r[0] == 1 && r[1] == 0 && r[2] == 3 && r[3] == 0);
    tgc_tensor_release(y);
    /* Shape of a gpu tensor: the gpu kernel leaves its output in host memory */
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(e, "Shape", NULL, 0, &gx, 1, NULL, &shape, 1, diags), TGC_OK);
    const int64_t *sv = tgc_tensor_data(shape);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sv);
    CU_ASSERT(sv[0] == 2 && sv[1] == 2);
    /* int64 shape arithmetic on host inputs: cpu0 */
    tgc_tensor *one = ints(2, (int64_t[]){1, 1}), *in[] = {shape, one}, *sum = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(e, "Add", NULL, 0, in, 2, NULL, &sum, 1, diags), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_device(sum), "cpu0");
    CU_ASSERT(((const int64_t *)tgc_tensor_data(sum))[1] == 3);
    /* an explicit device not in the context */
    tgc_diags *bad = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Relu", NULL, 0, &x, 1, "gpu1", &y, 1, bad), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(y);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(bad, 0), "unknown-device");
    /* strings have no gpu kernel: an explicit gpu0 is refused */
    tgc_tensor *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_STRING, 1, (int64_t[]){1}, (const char *[]){"ab"}, &s), TGC_OK);
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Identity", NULL, 0, &s, 1, "gpu0", &y, 1, bad), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(bad, 1), "no-kernel");
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Identity", NULL, 0, &s, 1, NULL, &y, 1, bad), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_tensor_string(y, 0), "ab");
    tgc_tensor_release(y);
    tgc_tensor_release(s);
    tgc_diags_free(bad);
    tgc_tensor_release(sum);
    tgc_tensor_release(one);
    tgc_tensor_release(shape);
    tgc_tensor_release(gx);
    tgc_tensor_release(x);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

/* Hits for the same (op, attributes, dtypes, shapes, devices); misses when
 * any of them changes; a Reshape whose target is a value gets the shape
 * its value says on every hit. */
static void test_kernel_cache(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("cpu", diags);
    int64_t d4[] = {4}, d6[] = {6};
    tgc_tensor *x = floats(1, d6, (float[]){1, 2, 3, 4, 5, 6}), *z = floats(1, d4, NULL), *y = NULL;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(tgc_eager_run(e, "Relu", NULL, 0, &x, 1, NULL, &y, 1, diags), TGC_OK);
        tgc_tensor_release(y);
    }
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Relu", NULL, 0, &z, 1, NULL, &y, 1, diags), TGC_OK); /* another shape */
    tgc_tensor_release(y);
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Relu", NULL, 0, &x, 1, "cpu", &y, 1, diags), TGC_OK); /* named device */
    tgc_tensor_release(y);
    tgc_op_attr alpha = {.name = "alpha", .type = TGC_OP_ATTR_FLOAT, .f = 0.5};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(tgc_eager_run(e, "Elu", &alpha, 1, &x, 1, NULL, &y, 1, diags), TGC_OK);
        tgc_tensor_release(y);
    }
    alpha.f = 0.25; /* another attribute value */
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Elu", &alpha, 1, &x, 1, NULL, &y, 1, diags), TGC_OK);
    tgc_tensor_release(y);
    tgc_eager_stats st = tgc_eager_get_stats(e);
    CU_ASSERT_EQUAL(st.cache_hits, 3);
    CU_ASSERT_EQUAL(st.cache_misses, 5);
    CU_ASSERT_EQUAL(st.cache_entries, 5);
    /* Reshape: same dtypes and shapes, targets [2, 3] then [3, 2]: one entry, right shapes */
    tgc_tensor *t23 = ints(2, (int64_t[]){2, 3}), *t32 = ints(2, (int64_t[]){3, 2});
    tgc_tensor *in[] = {x, t23};
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(e, "Reshape", NULL, 0, in, 2, NULL, &y, 1, diags), TGC_OK);
    CU_ASSERT(tgc_tensor_dims(y)[0] == 2 && tgc_tensor_dims(y)[1] == 3);
    tgc_tensor_release(y);
    in[1] = t32;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(e, "Reshape", NULL, 0, in, 2, NULL, &y, 1, diags), TGC_OK);
    CU_ASSERT(tgc_tensor_dims(y)[0] == 3 && tgc_tensor_dims(y)[1] == 2);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(y))[5], 6);
    tgc_tensor_release(y);
    st = tgc_eager_get_stats(e);
    CU_ASSERT_EQUAL(st.cache_hits, 4);
    CU_ASSERT_EQUAL(st.cache_misses, 6);
    tgc_tensor_release(t23);
    tgc_tensor_release(t32);
    tgc_tensor_release(x);
    tgc_tensor_release(z);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

/* Each error names the op and its rule, stores no output and leaves the
 * live tensors and every device's bytes as they were. */
static void expect_error(tgc_eager *e, const char *op, const tgc_op_attr *attrs, int n_attrs, tgc_tensor **in,
                         int n_in, int n_out, tgc_status status, const char *rule) {
    tgc_diags *diags = tgc_diags_create();
    tgc_memory_info before = tgc_memory();
    tgc_tensor *out[4] = {(tgc_tensor *)1, (tgc_tensor *)1, (tgc_tensor *)1, (tgc_tensor *)1};
    CU_ASSERT_EQUAL(tgc_eager_run(e, op, attrs, n_attrs, in, n_in, NULL, out, n_out, diags), status);
    for (int i = 0; i < n_out; i++) CU_ASSERT_PTR_NULL(out[i]);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(diags), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(diags, 0), rule);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(diags, 0), op));
    tgc_memory_info after = tgc_memory();
    CU_ASSERT_EQUAL(after.live_tensors, before.live_tensors);
    CU_ASSERT_EQUAL(after.live_tensor_bytes, before.live_tensor_bytes);
    tgc_memory_device devs[8];
    int n = tgc_memory_devices(devs, 8);
    for (int i = 0; i < n; i++)
        if (strcmp(devs[i].device, "cpu0") == 0) CU_ASSERT_EQUAL(devs[i].bytes_in_use, 2 * 2 * 4);
    tgc_diags_free(diags);
}

static void test_errors(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("cpu", diags);
    int64_t d2[] = {2}, d3[] = {3};
    tgc_tensor *a = floats(1, d2, NULL), *b = floats(1, d3, NULL), *c2 = NULL, *c3 = NULL;
    /* two tensors of 8 bytes on cpu0, whose bytes expect_error checks */
    tgc_tensor *in[] = {a, b};
    CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, a, "cpu", &c2, diags), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, a, "cpu", &c3, diags), TGC_OK);
    expect_error(e, "Frobnicate", NULL, 0, in, 1, 1, TGC_ERR_INVALID, "unknown-op");
    expect_error(e, "Add", NULL, 0, in, 2, 1, TGC_ERR_INVALID, "shape-mismatch");
    expect_error(e, "Add", NULL, 0, in, 1, 1, TGC_ERR_INVALID, "input-count");
    tgc_tensor *first_missing[] = {NULL, b};
    expect_error(e, "Add", NULL, 0, first_missing, 2, 1, TGC_ERR_INVALID, "missing-input");
    expect_error(e, "Relu", NULL, 0, in, 1, 2, TGC_ERR_INVALID, "output-count");
    tgc_op_attr bogus = {.name = "bogus", .type = TGC_OP_ATTR_INT, .i = 1};
    expect_error(e, "Relu", &bogus, 1, in, 1, 1, TGC_ERR_INVALID, "unknown-attribute");
    tgc_op_attr axis = {.name = "axis", .type = TGC_OP_ATTR_FLOAT, .f = 1.5};
    expect_error(e, "Concat", &axis, 1, in, 2, 1, TGC_ERR_INVALID, "attribute-type");
    expect_error(e, "Concat", NULL, 0, in, 2, 1, TGC_ERR_INVALID, "missing-attribute");
    axis = (tgc_op_attr){.name = "axis", .type = TGC_OP_ATTR_INT, .i = 3};
    expect_error(e, "Concat", &axis, 1, in, 2, 1, TGC_ERR_INVALID, "bad-attribute");
    tgc_tensor_release(c2);
    tgc_tensor_release(c3);
    tgc_tensor_release(a);
    tgc_tensor_release(b);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

/* A device closes when its last context and its last tensor are gone: a
 * gpu0 tensor stays readable after the context that made it is freed. */
static void test_device_outlives_context(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("gpu0", diags);
    tgc_tensor *x = floats(1, (int64_t[]){3}, (float[]){1, 2, 3}), *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_copy(e, x, "gpu0", &g, diags), TGC_OK);
    tgc_eager_free(e);
    tgc_memory_device devs[8];
    int n = tgc_memory_devices(devs, 8);
    CU_ASSERT_EQUAL(n, 2); /* host and gpu0; cpu0 closed with the context */
    CU_ASSERT_STRING_EQUAL(devs[1].device, "gpu0");
    CU_ASSERT_EQUAL(devs[1].live_tensors, 1);
    CU_ASSERT_EQUAL(devs[1].live_tensor_bytes, 12);
    float back[3];
    CU_ASSERT_EQUAL(tgc_tensor_read(g, back, sizeof back), TGC_OK);
    CU_ASSERT(back[0] == 1 && back[2] == 3);
    CU_ASSERT_EQUAL(tgc_tensor_read(g, back, 8), TGC_ERR_INVALID);
    tgc_tensor_release(g);
    CU_ASSERT_EQUAL(tgc_memory_devices(devs, 8), 1); /* gpu0 closed */
    tgc_tensor_release(x);
    tgc_diags_free(diags);
}

/* A tensor over the caller's memory: read in place, released once. */
static int released;
static void on_release(void *ctx) { released += *(int *)ctx; }

static void test_borrowed(void) {
    float data[4] = {1, -1, 2, -2};
    int one = 1;
    tgc_tensor *t = NULL, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create_borrowed(TGC_FLOAT32, 1, (int64_t[]){4}, data, on_release, &one, &t),
                          TGC_OK);
    CU_ASSERT_PTR_EQUAL(tgc_tensor_data(t), data);
    CU_ASSERT_EQUAL(tgc_tensor_create_borrowed(TGC_FLOAT32, 1, (int64_t[]){4}, (char *)data + 1, NULL, NULL, &y),
                    TGC_ERR_INVALID); /* misaligned */
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = open_eager("cpu", diags);
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Abs", NULL, 0, &t, 1, NULL, &y, 1, diags), TGC_OK);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(y))[3], 2);
    CU_ASSERT_EQUAL(data[3], -2); /* read, never written */
    tgc_tensor_retain(t);
    tgc_tensor_release(t);
    CU_ASSERT_EQUAL(released, 0);
    tgc_tensor_release(t);
    CU_ASSERT_EQUAL(released, 1);
    tgc_tensor_release(y);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

/* A memory limit on a shared device: the op fails cleanly, naming it. */
static void test_memory_limit(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = NULL;
    tgc_eager_options o = {.memory_limits = "cpu=1KiB", .threads = "cpu=1"};
    CU_ASSERT_EQUAL_FATAL(tgc_eager_create("cpu", &o, diags, &e), TGC_OK);
    tgc_tensor *x = floats(1, (int64_t[]){1024}, NULL), *y = NULL;
    CU_ASSERT_EQUAL(tgc_eager_run(e, "Relu", NULL, 0, &x, 1, NULL, &y, 1, diags), TGC_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(y);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(diags, 0), "out-of-memory");
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(diags, 0), "cpu0"));
    tgc_tensor_release(x);
    tgc_eager_free(e);
    tgc_eager_options bad = {.threads = "cpu=zero"};
    CU_ASSERT_EQUAL(tgc_eager_create("cpu", &bad, diags, &e), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_eager_create("tpu0", NULL, diags, &e), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(e);
    tgc_diags_free(diags);
}

/* The registry lists every op with its counts and attributes. */
static void test_op_schemas(void) {
    tgc_op_schema s;
    CU_ASSERT(tgc_op_schema_count() > 150);
    CU_ASSERT_EQUAL(tgc_op_schema_find("Conv", &s), TGC_OK);
    CU_ASSERT(s.min_inputs == 2 && s.max_inputs == 3 && s.min_outputs == 1 && s.max_outputs == 1);
    bool pads = false;
    for (int i = 0; i < s.n_attrs; i++) {
        const char *name;
        tgc_op_attr_type type;
        int required;
        CU_ASSERT_EQUAL(tgc_op_schema_attr("Conv", i, &name, &type, &required), TGC_OK);
        if (strcmp(name, "pads") == 0) pads = type == TGC_OP_ATTR_INTS && !required;
    }
    CU_ASSERT(pads);
    CU_ASSERT_EQUAL(tgc_op_schema_attr("Conv", s.n_attrs, NULL, NULL, NULL), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_op_schema_find("Nope", &s), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_op_schema_at(0, &s), TGC_OK);
    CU_ASSERT_EQUAL(tgc_op_schema_at(tgc_op_schema_count(), &s), TGC_ERR_INVALID);
}

TGC_TEST_MAIN("eager", {"add on cpu", test_add_on_cpu}, {"conv on cpu", test_conv_cpu},
              {"conv and matmul on gpu0", test_conv_gpu}, {"device rules", test_device_rules},
              {"kernel cache", test_kernel_cache}, {"errors", test_errors},
              {"device outlives context", test_device_outlives_context}, {"borrowed memory", test_borrowed},
              {"memory limit", test_memory_limit}, {"op schemas", test_op_schemas})
