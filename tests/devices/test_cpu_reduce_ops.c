/* The cpu reductions beside ReduceSum/Mean/Max (devices/cpu/kernels_reduce.c)
 * against NumPy's answers (tests/data/kernels/make_reduce_refs.py):
 * ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp, ReduceSumSquare with axes as the attribute (opset 13)
 * on each dtype they take, every ReduceX with axes as input 1 (opset 18),
 * ONNX's identities over empty axes, LogSumExp past exp's range, and
 * ArgMin with ties either way and NaN. */
#include "tests/devices/kernel_fixture_ew.h"

#define AXES(...) ((const int64_t[]){__VA_ARGS__})
#define N_AXES(...) (sizeof AXES(__VA_ARGS__) / sizeof(int64_t))

static void red_case(const char *op, const char *name, int n_in, const tgc_attr *attrs, int n_attrs) {
    ew_case(EW_RED_DIR, op, name, n_in, attrs, n_attrs, EW_TOL);
}

/* ---- Axes as the attribute ------------------------------------------------- */

static void test_attr_axes(void) {
    const tgc_attr a1[] = {EW_INTS("axes", AXES(1), 1)};
    const tgc_attr a02[] = {EW_INTS("axes", AXES(0, 2), 2), EW_INT("keepdims", 0)};
    const tgc_attr am1[] = {EW_INTS("axes", AXES(-1), 1)};
    red_case("ReduceMin", "min_f32_axis1_keep", 1, a1, 1);
    red_case("ReduceMin", "min_i32_axes02", 1, a02, 2);
    red_case("ReduceMin", "min_u8_all", 1, NULL, 0);
    red_case("ReduceProd", "prod_f32_axis_m1", 1, am1, 1);
    red_case("ReduceProd", "prod_i64_axes02", 1, a02, 2);
    red_case("ReduceL1", "l1_f32_axes02", 1, a02, 2);
    red_case("ReduceL1", "l1_i32_axis1_keep", 1, a1, 1);
    red_case("ReduceL2", "l2_f32_axis1_keep", 1, a1, 1);
    red_case("ReduceLogSum", "log_sum_f32_axes02", 1, a02, 2);
    red_case("ReduceLogSumExp", "log_sum_exp_f32_axis_m1_keep", 1, am1, 1);
    red_case("ReduceSumSquare", "sum_square_f32_all", 1, NULL, 0);
    red_case("ReduceSumSquare", "sum_square_i64_axis1_keep", 1, a1, 1);
}

/* float16 folds in float32 and rounds once: within a half's precision. */
static void test_float16(void) {
    const tgc_attr a1[] = {EW_INTS("axes", AXES(1), 1)};
    const tgc_attr a02[] = {EW_INTS("axes", AXES(0, 2), 2), EW_INT("keepdims", 0)};
    ew_case(EW_RED_DIR, "ReduceL2", "l2_f16_axes02", 1, a02, 2, 1e-3);
    ew_case(EW_RED_DIR, "ReduceMin", "min_f16_axis1_keep", 1, a1, 1, 0);
}

/* ---- Axes as input 1 (the opset 18 form) ------------------------------------ */

static void test_input_axes(void) {
    static const char *const ops[][2] = {
        {"ReduceSum", "sum"}, {"ReduceMean", "mean"}, {"ReduceMax", "max"}, {"ReduceMin", "min"},
        {"ReduceProd", "prod"}, {"ReduceL1", "l1"}, {"ReduceL2", "l2"}, {"ReduceLogSum", "log_sum"},
        {"ReduceLogSumExp", "log_sum_exp"}, {"ReduceSumSquare", "sum_square"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "in18_%s_f32", ops[i][1]);
        red_case(ops[i][0], name, 2, NULL, 0);
    }
}

/* noop_with_empty_axes with an empty axes input: the input as it is. */
static void test_input_axes_noop(void) {
    ew_fx f;
    ew_begin(&f, "ReduceProd", EW_RED_DIR);
    ew_attr(&f, EW_INT("noop_with_empty_axes", 1));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    ew_in(&f, TGC_INT64, 1, (int64_t[]){0}, NULL);
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(y[0] == 1 && y[1] == 2 && y[2] == 3 && y[3] == 4);
    ew_end(&f);
}

/* The attribute and the input at once is an error, never a guess. */
static void test_axes_twice(void) {
    ew_fx f;
    ew_begin(&f, "ReduceMin", EW_RED_DIR);
    ew_attr(&f, EW_INTS("axes", AXES(0), 1));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    ew_in(&f, TGC_INT64, 1, (int64_t[]){1}, AXES(0));
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "twice"));
    ew_end(&f);
}

/* ---- Values at the edges ------------------------------------------------------- */

static void test_empty_identities(void) {
    const tgc_attr a0[] = {EW_INTS("axes", AXES(0), 1)};
    red_case("ReduceSum", "empty_sum", 1, a0, 1); /* the kernel reads an axes attribute on any ReduceX (the schema of ReduceSum has none) */
    red_case("ReduceProd", "empty_prod", 1, a0, 1);
    red_case("ReduceMin", "empty_min", 1, a0, 1);
    red_case("ReduceL1", "empty_l1", 1, a0, 1);
    red_case("ReduceL2", "empty_l2", 1, a0, 1);
    red_case("ReduceLogSum", "empty_log_sum", 1, a0, 1);
    red_case("ReduceLogSumExp", "empty_log_sum_exp", 1, a0, 1);
    red_case("ReduceSumSquare", "empty_sum_square", 1, a0, 1);
    red_case("ReduceMin", "empty_min_i32", 1, a0, 1);
    red_case("ReduceProd", "empty_prod_i32", 1, a0, 1);
}

/* exp(1000) overflows float32 and float64; exp(x - max) does not. A row
 * of -inf is log(0) = -inf, not NaN. */
static void test_log_sum_exp_range(void) {
    const tgc_attr a1[] = {EW_INTS("axes", AXES(1), 1)};
    red_case("ReduceLogSumExp", "log_sum_exp_f32_large", 1, a1, 1);
}

static void test_float_only_kinds(void) {
    /* ReduceL2 of int32: ONNX allows it, the cpu kernel does not (yet). */
    CU_ASSERT_PTR_NULL(tgc_kernel_find("ReduceL2", TGC_DEVICE_CPU, TGC_INT32));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("ReduceL1", TGC_DEVICE_CPU, TGC_INT32));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("ReduceMin", TGC_DEVICE_CPU, TGC_UINT8));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("ReduceProd", TGC_DEVICE_CPU, TGC_UINT8));
    const tgc_kernel_def *k = tgc_kernel_find("ReduceMean", TGC_DEVICE_CPU, TGC_FLOAT32);
    CU_ASSERT_FATAL(k != NULL);
    CU_ASSERT_EQUAL(k->host_inputs, 1u << 1); /* the opset 18 axes input */
}

/* ---- ArgMin ------------------------------------------------------------------------ */

static void test_argmin(void) {
    const tgc_attr first[] = {EW_INT("axis", -1)};
    red_case("ArgMin", "argmin_i32_ties_first", 1, first, 1);
    const tgc_attr last[] = {EW_INT("axis", -1), EW_INT("select_last_point_index", 1)};
    red_case("ArgMin", "argmin_i32_ties_last", 1, last, 2);
    const tgc_attr nan1[] = {EW_INT("axis", 1), EW_INT("keepdims", 0)};
    red_case("ArgMin", "argmin_f32_axis1_nan", 1, nan1, 2);
    red_case("ArgMin", "argmin_u8_axis0", 1, NULL, 0);
    const tgc_attr a2[] = {EW_INT("axis", 2)};
    red_case("ArgMin", "argmin_f16_axis2", 1, a2, 1);
}

static void test_argmin_errors(void) {
    ew_fx f;
    ew_begin(&f, "ArgMin", EW_RED_DIR);
    ew_attr(&f, EW_INT("axis", 1));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 0}, NULL);
    ew_out(&f, TGC_INT64, 2, (int64_t[]){2, 1});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "ArgMin: axis 1 is empty"));
    ew_end(&f);
}

TGC_TEST_MAIN("cpu_reduce_ops",
              {"attr_axes", test_attr_axes},
              {"float16", test_float16},
              {"input_axes", test_input_axes},
              {"input_axes_noop", test_input_axes_noop},
              {"axes_twice", test_axes_twice},
              {"empty_identities", test_empty_identities},
              {"log_sum_exp_range", test_log_sum_exp_range},
              {"float_only_kinds", test_float_only_kinds},
              {"argmin", test_argmin},
              {"argmin_errors", test_argmin_errors})
