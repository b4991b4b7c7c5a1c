/* The cpu reduction kernels (devices/cpu/kernels_reduce.c) against NumPy's
 * answers (tests/data/kernels/make_elementwise_refs.py): ReduceSum with
 * axes as an input, ReduceMean and ReduceMax with axes as an attribute
 * (opset 17), keepdims 0 and 1, negative axes, every axis, empty inputs;
 * ArgMax with ties either way; Softmax and LogSoftmax on each axis and on
 * values that would overflow exp without the max subtracted. */
#include "tests/devices/kernel_fixture_ew.h"

#define AXES(...) ((const int64_t[]){__VA_ARGS__})

static void red_case(const char *op, const char *name, int n_in, const tgc_attr *attrs, int n_attrs) {
    ew_case(EW_RED_DIR, op, name, n_in, attrs, n_attrs, EW_TOL);
}

/* ---- ReduceSum (axes input) ------------------------------------------------- */

static void test_reduce_sum(void) {
    red_case("ReduceSum", "sum_f32_axis1_keep", 2, NULL, 0);
    const tgc_attr drop[] = {EW_INT("keepdims", 0)};
    red_case("ReduceSum", "sum_f32_axes_m1_0", 2, drop, 1);
    red_case("ReduceSum", "sum_f32_all", 1, NULL, 0);
    red_case("ReduceSum", "sum_i32_axis0", 2, NULL, 0);
    red_case("ReduceSum", "sum_i64_axis2", 2, drop, 1);
    red_case("ReduceSum", "sum_f32_empty", 2, NULL, 0); /* the sum of nothing is 0 */
}

/* noop_with_empty_axes: empty axes leave the input as it is; without it
 * they reduce everything. */
static void test_reduce_sum_noop(void) {
    const tgc_attr noop[] = {EW_INT("noop_with_empty_axes", 1)};
    red_case("ReduceSum", "sum_f32_noop", 2, noop, 1);

    ew_fx f;
    ew_begin(&f, "ReduceSum", EW_RED_DIR);
    ew_in_npy(&f, "sum_f32_noop_in0");
    ew_in_npy(&f, "sum_f32_noop_in1");
    ew_out_npy(&f, "sum_f32_all_out");
    ew_run_ok(&f);
    ew_check(&f, EW_TOL);
    ew_end(&f);
}

static void test_reduce_sum_errors(void) {
    /* An axis twice. */
    ew_fx f;
    ew_begin(&f, "ReduceSum", EW_RED_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    ew_in(&f, TGC_INT64, 1, (int64_t[]){2}, AXES(1, -1));
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 1});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "twice"));
    ew_end(&f);

    /* An axis out of range. */
    ew_begin(&f, "ReduceSum", EW_RED_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    ew_in(&f, TGC_INT64, 1, (int64_t[]){1}, AXES(2));
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 1});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "out of range"));
    ew_end(&f);

    /* An output shape the axes do not give. */
    ew_begin(&f, "ReduceSum", EW_RED_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    ew_in(&f, TGC_INT64, 1, (int64_t[]){1}, AXES(0));
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "output 0 was given shape [2] but the inputs make [1, 2]"));
    ew_end(&f);
}

/* ---- ReduceMean, ReduceMax (axes attribute) ------------------------------------ */

static void test_reduce_mean(void) {
    const tgc_attr a02[] = {EW_INTS("axes", AXES(0, 2), 2)};
    red_case("ReduceMean", "mean_f32_axes02_keep", 1, a02, 1);
    const tgc_attr am2[] = {EW_INTS("axes", AXES(-2), 1), EW_INT("keepdims", 0)};
    red_case("ReduceMean", "mean_f32_axis_m2", 1, am2, 2);
    const tgc_attr all[] = {EW_INT("keepdims", 0)};
    red_case("ReduceMean", "mean_f32_all", 1, all, 1);
    const tgc_attr a0[] = {EW_INTS("axes", AXES(0), 1)};
    red_case("ReduceMean", "mean_f32_empty", 1, a0, 1); /* 0 / 0: NaN, as numpy */
    const tgc_attr a1[] = {EW_INTS("axes", AXES(1), 1)};
    red_case("ReduceMean", "mean_i32_axis1", 1, a1, 1); /* truncated toward zero */
    red_case("ReduceMean", "mean_i64_all", 1, NULL, 0);

    /* An integer mean of nothing has no value. */
    ew_fx f;
    ew_begin(&f, "ReduceMean", EW_RED_DIR);
    ew_attr(&f, EW_INTS("axes", AXES(0), 1));
    ew_in(&f, TGC_INT32, 2, (int64_t[]){0, 3}, NULL);
    ew_out(&f, TGC_INT32, 2, (int64_t[]){1, 3});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    ew_end(&f);
}

static void test_reduce_max(void) {
    const tgc_attr a1[] = {EW_INTS("axes", AXES(1), 1), EW_INT("keepdims", 0)};
    red_case("ReduceMax", "max_f32_axis1", 1, a1, 2);
    const tgc_attr a01[] = {EW_INTS("axes", AXES(0, 1), 2), EW_INT("keepdims", 1)};
    red_case("ReduceMax", "max_f32_axes01_keep", 1, a01, 2);
    const tgc_attr am1[] = {EW_INTS("axes", AXES(-1), 1)};
    red_case("ReduceMax", "max_i64_axis_m1", 1, am1, 1);
    red_case("ReduceMax", "max_u8_all", 1, NULL, 0);
    const tgc_attr a0[] = {EW_INTS("axes", AXES(0), 1)};
    red_case("ReduceMax", "max_f32_empty", 1, a0, 1); /* -inf, as opset 18 states */
}

/* A scalar reduces to itself. */
static void test_reduce_scalar(void) {
    ew_fx f;
    ew_begin(&f, "ReduceMean", EW_RED_DIR);
    ew_in(&f, TGC_FLOAT32, 0, NULL, (float[]){2.5f});
    ew_out(&f, TGC_FLOAT32, 0, NULL);
    ew_run_ok(&f);
    CU_ASSERT_EQUAL(*(const float *)tgc_buffer_host_ptr(f.out[0].buf), 2.5f);
    ew_end(&f);
}

/* ---- ArgMax ---------------------------------------------------------------------- */

static void test_argmax(void) {
    const tgc_attr a1[] = {EW_INT("axis", 1)};
    red_case("ArgMax", "argmax_f32_axis1", 1, a1, 1);
    const tgc_attr a0[] = {EW_INT("keepdims", 0)};
    red_case("ArgMax", "argmax_f32_axis0", 1, a0, 1);
    const tgc_attr first[] = {EW_INT("axis", -1)};
    red_case("ArgMax", "argmax_i32_ties_first", 1, first, 1);
    const tgc_attr last[] = {EW_INT("axis", -1), EW_INT("select_last_point_index", 1)};
    red_case("ArgMax", "argmax_i32_ties_last", 1, last, 2);
    const tgc_attr last0[] = {EW_INT("keepdims", 0), EW_INT("select_last_point_index", 1)};
    red_case("ArgMax", "argmax_i64_axis0_last", 1, last0, 2);
    red_case("ArgMax", "argmax_i64_axis1", 1, a1, 1);
}

/* ArgMax or ArgMin (op) of one float32 lane x[0..n) along its last axis,
 * first or last on ties: the index. */
static int64_t arg_lane(const char *op, const float *x, int64_t n, bool last) {
    ew_fx f;
    ew_begin(&f, op, EW_RED_DIR);
    ew_attr(&f, EW_INT("axis", 1));
    ew_attr(&f, EW_INT("select_last_point_index", last));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){1, n}, x);
    ew_out(&f, TGC_INT64, 2, (int64_t[]){1, 1});
    ew_run_ok(&f);
    int64_t at = *(const int64_t *)tgc_buffer_host_ptr(f.out[0].buf);
    ew_end(&f);
    return at;
}

/* Lanes along the last axis longer than the kernel's 16 running extremes:
 * ties of the extreme in different accumulators, NaNs (the first or last
 * one wins), all zeros of both signs, and the extreme in the tail past
 * the last whole block. Expected indices by hand (numpy.argmax's rule). */
static void test_argmax_long_lanes(void) {
    enum { N = 1000 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = (float)((i * 37) % 101) - 50.0f; /* 50 where i % 101 == 30 */
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, N, false), 30);
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, N, true), 939); /* 30 + 9 * 101 */
    CU_ASSERT_EQUAL(arg_lane("ArgMin", x, N, false), 0);  /* -50 where i % 101 == 0 */
    x[0] = 1.0f;
    CU_ASSERT_EQUAL(arg_lane("ArgMin", x, N, false), 101);
    x[999] = 60.0f; /* past the last whole block of 16 */
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, N, false), 999);
    x[31] = NAN, x[700] = NAN;
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, N, false), 31);
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, N, true), 700);
    CU_ASSERT_EQUAL(arg_lane("ArgMin", x, 37, false), 31);
    for (int i = 0; i < 64; i++) x[i] = (float)(i % 16); /* a lone 20 in the last running extreme */
    x[47] = 20.0f;
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, 64, false), 47);
    for (int i = 0; i < 40; i++) x[i] = i % 3 ? -0.0f : 0.0f;
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, 40, false), 0);
    CU_ASSERT_EQUAL(arg_lane("ArgMax", x, 40, true), 39);
}

static void test_argmax_errors(void) {
    /* No largest element of an empty axis. */
    ew_fx f;
    ew_begin(&f, "ArgMax", EW_RED_DIR);
    ew_attr(&f, EW_INT("axis", 1));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 0}, NULL);
    ew_out(&f, TGC_INT64, 2, (int64_t[]){2, 1});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "empty"));
    ew_end(&f);

    ew_begin(&f, "ArgMax", EW_RED_DIR); /* axis 0 of [0, 3] into [1, 3] */
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    ew_out(&f, TGC_INT64, 2, (int64_t[]){1, 3});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    ew_end(&f);

    /* Nothing to do when the output is empty too: axis 1 of [0, 3]. */
    ew_begin(&f, "ArgMax", EW_RED_DIR);
    ew_attr(&f, EW_INT("axis", 1));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    ew_out(&f, TGC_INT64, 2, (int64_t[]){0, 1});
    ew_run_ok(&f);
    ew_end(&f);
}

/* ---- Softmax, LogSoftmax --------------------------------------------------------- */

static void test_softmax(void) {
    const tgc_attr ax0[] = {EW_INT("axis", 0)}, ax1[] = {EW_INT("axis", 1)};
    red_case("Softmax", "softmax_axis0", 1, ax0, 1);
    red_case("Softmax", "softmax_axis1", 1, ax1, 1);
    red_case("Softmax", "softmax_axism1", 1, NULL, 0); /* default -1 */
    red_case("LogSoftmax", "logsoftmax_axis0", 1, ax0, 1);
    red_case("LogSoftmax", "logsoftmax_axis1", 1, ax1, 1);
    const tgc_attr axm1[] = {EW_INT("axis", -1)};
    red_case("LogSoftmax", "logsoftmax_axism1", 1, axm1, 1);
    red_case("Softmax", "softmax_wide_axis0", 1, ax0, 1);
    red_case("Softmax", "softmax_axis1_inner300", 1, ax1, 1);
}

/* exp(1000) overflows; exp(x - max) does not. */
static void test_softmax_stable(void) {
    red_case("Softmax", "softmax_large", 1, NULL, 0);
    red_case("LogSoftmax", "logsoftmax_large", 1, NULL, 0);
}

/* Softmax over a forwarded buffer (forward_input 0). */
static void test_softmax_in_place(void) {
    const char *ops[] = {"Softmax", "LogSoftmax"};
    const char *names[] = {"softmax_axis1", "logsoftmax_axis1"};
    for (int i = 0; i < 2; i++) {
        ew_fx f;
        char file[64];
        ew_begin(&f, ops[i], EW_RED_DIR);
        ew_attr(&f, EW_INT("axis", 1));
        snprintf(file, sizeof file, "%s_in0", names[i]);
        ew_in_npy(&f, file);
        snprintf(file, sizeof file, "%s_out", names[i]);
        f.ref = ew_read(&f, file);
        f.has_ref = true;
        f.out[0] = f.in[0];
        f.out[0].buf = tgc_buffer_retain(f.in[0].buf);
        f.n_out = 1;
        ew_run_ok(&f);
        ew_check(&f, EW_TOL);
        ew_end(&f);
    }
}

static void test_softmax_errors(void) {
    ew_fx f;
    ew_begin(&f, "Softmax", EW_RED_DIR);
    ew_attr(&f, EW_INT("axis", 2));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2}, (float[]){1, 2});
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "out of range"));
    ew_end(&f);

    /* An empty tensor: nothing to do. */
    ew_begin(&f, "Softmax", EW_RED_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){0, 4});
    ew_run_ok(&f);
    ew_end(&f);
}

static void test_registry(void) {
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("ReduceSum", TGC_DEVICE_CPU, TGC_INT64));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("ReduceMean", TGC_DEVICE_CPU, TGC_UINT8));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("ReduceMax", TGC_DEVICE_CPU, TGC_UINT8));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("ArgMax", TGC_DEVICE_CPU, TGC_INT32));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Softmax", TGC_DEVICE_CPU, TGC_FLOAT16));
    const tgc_kernel_def *k = tgc_kernel_find("ReduceSum", TGC_DEVICE_CPU, TGC_FLOAT32);
    CU_ASSERT_FATAL(k != NULL);
    CU_ASSERT_EQUAL(k->host_inputs, 1u << 1);
    CU_ASSERT_EQUAL(k->forward_input, -1);
}

TGC_TEST_MAIN("cpu_reduce",
              {"reduce_sum", test_reduce_sum},
              {"argmax long lanes", test_argmax_long_lanes},
              {"reduce_sum_noop", test_reduce_sum_noop},
              {"reduce_sum_errors", test_reduce_sum_errors},
              {"reduce_mean", test_reduce_mean},
              {"reduce_max", test_reduce_max},
              {"reduce_scalar", test_reduce_scalar},
              {"argmax", test_argmax},
              {"argmax_errors", test_argmax_errors},
              {"softmax", test_softmax},
              {"softmax_stable", test_softmax_stable},
              {"softmax_in_place", test_softmax_in_place},
              {"softmax_errors", test_softmax_errors},
              {"registry", test_registry})
