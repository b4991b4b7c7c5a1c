/* The gpu (OpenCL) kernels of ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMin, Hardmax,
 * LpNormalization and MeanVarianceNormalization (devices/opencl/kernels_reduce.c) against the cpu kernels of the same
 * ops (themselves checked against NumPy in test_cpu_reduce_ops.c), with
 * axes as the attribute and as input 1 (opset 18), keepdims 0 and 1,
 * negative axes, every axis, empty inputs, NaN and infinities. Floats must
 * agree within 1e-5 relative. Without an OpenCL device every test passes
 * after a notice. */
#include "tests/devices/gpu_fixture.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define SHAPE(...) NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__)

typedef struct red_case {
    int rank;
    int64_t dims[TGC_MAX_RANK];
    int n_axes;
    int64_t axes[4];
} red_case;

static const red_case cases[] = {
    {2, {7, 13}, 1, {1}},          {2, {7, 13}, 2, {-1, 0}},    {3, {3, 4, 5}, 2, {0, 2}},
    {3, {3, 4, 5}, 1, {-2}},       {3, {3, 4, 5}, 0, {0}},      {4, {2, 3, 4, 5}, 2, {3, 1}},
    {2, {0, 3}, 1, {0}},           {1, {1000}, 1, {0}},         {0, {0}, 0, {0}},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

/* The output dims of reducing c's input over its axes (none: all). */
static int out_dims(const red_case *c, bool keep, int64_t *out) {
    bool red[TGC_MAX_RANK] = {false};
    for (int i = 0; i < c->n_axes; i++) red[c->axes[i] < 0 ? c->axes[i] + c->rank : c->axes[i]] = true;
    int n = 0;
    for (int i = 0; i < c->rank; i++) {
        bool r = c->n_axes == 0 || red[i];
        if (!r) out[n++] = c->dims[i];
        else if (keep) out[n++] = 1;
    }
    return n;
}

/* op over every case, keepdims 0 and 1, axes as the attribute or input 1,
 * inputs uniform in [lo, hi). */
static void reduce_all(gk_dev *d, const char *op, tgc_dtype dtype, double lo, double hi) {
    for (int r = 0; r < N_CASES; r++)
        for (int mode = 0; mode < 4; mode++) {
            const red_case *rc = &cases[r];
            bool keep = mode & 1, as_input = mode >> 1;
            gk_case k;
            gk_begin(&k, d, op);
            gk_attr(&k, GK_INT("keepdims", keep));
            gk_in_range(&k, dtype, rc->rank, rc->dims, lo, hi);
            if (as_input && rc->n_axes > 0) gk_in_i64(&k, rc->n_axes, rc->axes);
            else if (rc->n_axes > 0) gk_attr(&k, GK_INTS("axes", rc->axes, (size_t)rc->n_axes));
            int64_t o[TGC_MAX_RANK];
            int n = out_dims(rc, keep, o);
            gk_out(&k, dtype, n, o);
            gk_run(&k);
            gk_end(&k);
        }
}

static void test_reduce_float_kinds(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    reduce_all(&d, "ReduceMin", TGC_FLOAT32, -3, 3);
    reduce_all(&d, "ReduceProd", TGC_FLOAT32, 0.9, 1.1); /* a product of 1000 stays in range */
    reduce_all(&d, "ReduceL1", TGC_FLOAT32, -3, 3);
    reduce_all(&d, "ReduceL2", TGC_FLOAT32, -3, 3);
    reduce_all(&d, "ReduceLogSum", TGC_FLOAT32, 0.5, 2);
    reduce_all(&d, "ReduceLogSumExp", TGC_FLOAT32, -3, 3);
    reduce_all(&d, "ReduceSumSquare", TGC_FLOAT32, -3, 3);
    reduce_all(&d, "ReduceMean", TGC_FLOAT32, -3, 3); /* the opset 18 axes input too */
    gk_close(&d);
}

static void test_reduce_min_ints(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const tgc_dtype types[] = {TGC_INT32, TGC_INT64, TGC_UINT8};
    for (int t = 0; t < 3; t++) reduce_all(&d, "ReduceMin", types[t], 0, 100);
    gk_close(&d);
}

/* NaN propagates, +-inf and exp's overflow: rows of [1000, 999],
 * [-inf, -inf], [+inf, 1], [NaN, 1]. */
static void test_reduce_edges(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const char *const ops[] = {"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp",
                                      "ReduceSumSquare"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        gk_case k;
        gk_begin(&k, &d, ops[i]);
        gk_in(&k, TGC_FLOAT32, SHAPE(4, 2), (float[]){1000, 999, -INFINITY, -INFINITY, INFINITY, 1, NAN, 1});
        gk_in_i64(&k, 1, DIMS(1));
        gk_out(&k, TGC_FLOAT32, SHAPE(4, 1));
        gk_run(&k);
        gk_end(&k);
    }
    gk_case k;
    gk_begin(&k, &d, "ReduceL2"); /* both forms at once */
    gk_attr(&k, GK_INTS("axes", DIMS(0), 1));
    gk_in_rand(&k, TGC_FLOAT32, SHAPE(2, 2));
    gk_in_i64(&k, 1, DIMS(0));
    gk_out(&k, TGC_FLOAT32, SHAPE(1, 2));
    gk_run_fails(&k, "twice");
    gk_end(&k);
    gk_close(&d);
}

static void test_argmin(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const tgc_dtype types[] = {TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8};
    for (int t = 0; t < 4; t++)
        for (int axis = -3; axis < 3; axis++)
            for (int mode = 0; mode < 4; mode++) { /* keepdims x select_last_point_index */
                int keep = mode & 1, last = mode >> 1;
                gk_case k;
                gk_begin(&k, &d, "ArgMin");
                gk_attr(&k, GK_INT("axis", axis));
                gk_attr(&k, GK_INT("keepdims", keep));
                gk_attr(&k, GK_INT("select_last_point_index", last));
                gk_in_range(&k, types[t], SHAPE(3, 4, 5), 0, 3); /* many ties */
                red_case rc = {3, {3, 4, 5}, 1, {axis}};
                int64_t o[TGC_MAX_RANK];
                int n = out_dims(&rc, keep, o);
                gk_out(&k, TGC_INT64, n, o);
                gk_run(&k);
                gk_end(&k);
            }
    for (int last = 0; last < 2; last++) {
        gk_case k;
        gk_begin(&k, &d, "ArgMin");
        gk_attr(&k, GK_INT("axis", 1));
        gk_attr(&k, GK_INT("select_last_point_index", last));
        gk_in(&k, TGC_FLOAT32, SHAPE(2, 4), (float[]){1, NAN, 3, NAN, 2, 2, INFINITY, 2});
        gk_out(&k, TGC_INT64, SHAPE(2, 1));
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

/* Hardmax and LpNormalization along each axis; MeanVarianceNormalization
 * over its default axes and others. */
static void test_normalizations(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    static const int64_t dims[] = {2, 3, 4, 5};
    for (int axis = -4; axis < 4; axis++)
        for (int p = 0; p < 3; p++) {
            gk_case k;
            gk_begin(&k, &d, p == 0 ? "Hardmax" : "LpNormalization");
            gk_attr(&k, GK_INT("axis", axis));
            if (p > 0) gk_attr(&k, GK_INT("p", p));
            gk_in_range(&k, TGC_FLOAT32, 4, dims, p == 0 ? 0 : -3, 3); /* Hardmax: many ties */
            gk_out(&k, TGC_FLOAT32, 4, dims);
            gk_run(&k);
            gk_end(&k);
        }
    gk_case k;
    gk_begin(&k, &d, "LpNormalization"); /* a zero norm gives 0; NaN propagates */
    gk_in(&k, TGC_FLOAT32, SHAPE(3, 2), (float[]){0, 0, 3, 4, NAN, 1});
    gk_out(&k, TGC_FLOAT32, SHAPE(3, 2));
    gk_run(&k);
    gk_end(&k);
    static const int64_t axes[][3] = {{0, 2, 3}, {-1, 0, 0}, {1, 2, 0}};
    static const int n_axes[] = {-1, 1, 2}; /* -1: the default */
    for (int a = 0; a < 3; a++) {
        gk_begin(&k, &d, "MeanVarianceNormalization");
        if (n_axes[a] > 0) gk_attr(&k, GK_INTS("axes", axes[a], (size_t)n_axes[a]));
        gk_in_range(&k, TGC_FLOAT32, 4, dims, -3, 3);
        gk_out(&k, TGC_FLOAT32, 4, dims);
        gk_run(&k);
        gk_end(&k);
    }
    gk_close(&d);
}

static void test_registry(void) {
    static const char *const ops[] = {"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                                      "ReduceLogSumExp", "ReduceSumSquare", "ReduceMean", "ReduceMax"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const tgc_kernel_def *k = gk_gpu_find(ops[i], TGC_FLOAT32);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_EQUAL(k->host_inputs, 1u << 1);
    }
    CU_ASSERT_PTR_NOT_NULL(gk_gpu_find("ArgMin", TGC_UINT8));
    CU_ASSERT_PTR_NULL(gk_gpu_find("ReduceProd", TGC_INT32)); /* integer products stay on the cpu */
}

TGC_TEST_MAIN("gpu_reduce_ops",
              {"registry", test_registry},
              {"reduce_float_kinds", test_reduce_float_kinds},
              {"reduce_min_ints", test_reduce_min_ints},
              {"reduce_edges", test_reduce_edges},
              {"argmin", test_argmin},
              {"normalizations", test_normalizations})
