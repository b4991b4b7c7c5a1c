/* The cpu kernels of Hardmax, LpNormalization and MeanVarianceNormalization
 * (devices/cpu/kernels_normalize.c) against NumPy's answers
 * (tests/data/kernels/make_normalize_refs.py): each axis form, ties, a zero
 * norm, float16, and the attribute errors. */
#include "tests/devices/kernel_fixture_ew.h"

#define NORM_DIR "tests/data/kernels/normalize/"
#define AXES(...) ((const int64_t[]){__VA_ARGS__})

static void norm_case(const char *op, const char *name, const tgc_attr *attrs, int n_attrs, double tol) {
    ew_case(NORM_DIR, op, name, 1, attrs, n_attrs, tol);
}

static void test_hardmax(void) {
    const tgc_attr a1[] = {EW_INT("axis", 1)}, a0[] = {EW_INT("axis", 0)};
    norm_case("Hardmax", "hardmax_axis1", a1, 1, 0);
    norm_case("Hardmax", "hardmax_ties", NULL, 0, 0); /* default axis -1 */
    norm_case("Hardmax", "hardmax_f16_axis0", a0, 1, 0);
}

static void test_lp_normalization(void) {
    const tgc_attr l2[] = {EW_INT("axis", -1)};
    const tgc_attr l1[] = {EW_INT("axis", 2), EW_INT("p", 1)};
    const tgc_attr z[] = {EW_INT("axis", 2)};
    const tgc_attr h[] = {EW_INT("axis", 0), EW_INT("p", 1)};
    norm_case("LpNormalization", "lp2_axis_m1", l2, 1, EW_TOL);
    norm_case("LpNormalization", "lp1_axis2", l1, 2, EW_TOL);
    norm_case("LpNormalization", "lp2_zero_norm", z, 1, EW_TOL);
    norm_case("LpNormalization", "lp1_f16_axis0", h, 2, 1e-3);
}

static void test_mvn(void) {
    const tgc_attr m1[] = {EW_INTS("axes", AXES(-1), 1)};
    const tgc_attr a12[] = {EW_INTS("axes", AXES(1, 2), 2)};
    norm_case("MeanVarianceNormalization", "mvn_default", NULL, 0, 1e-5);
    norm_case("MeanVarianceNormalization", "mvn_axes_m1", m1, 1, 1e-5);
    norm_case("MeanVarianceNormalization", "mvn_axes12", a12, 1, 1e-5);
    norm_case("MeanVarianceNormalization", "mvn_f16_default", NULL, 0, 2e-3);
}

static void test_errors(void) {
    ew_fx f;
    ew_begin(&f, "LpNormalization", NORM_DIR);
    ew_attr(&f, EW_INT("p", 3));
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){1, 2});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "must be 1 or 2"));
    ew_end(&f);

    ew_begin(&f, "Hardmax", NORM_DIR);
    ew_attr(&f, EW_INT("axis", 1));
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){1, 2});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "out of range"));
    ew_end(&f);

    /* The default axes [0, 2, 3] need rank 4. */
    ew_begin(&f, "MeanVarianceNormalization", NORM_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2}, (float[]){1, 2});
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){1, 2});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "out of range"));
    ew_end(&f);

    /* Empty tensors: nothing to write, no failure. */
    ew_begin(&f, "Hardmax", NORM_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3});
    ew_run_ok(&f);
    ew_end(&f);
}

TGC_TEST_MAIN("cpu_normalize",
              {"hardmax", test_hardmax},
              {"lp_normalization", test_lp_normalization},
              {"mvn", test_mvn},
              {"errors", test_errors})
