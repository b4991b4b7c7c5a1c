/* _GlobalAveragePoolNHWC: x [1, 2, 3, 2] channels last, channel 0 [1..6]
 * and channel 1 [10, 20, .., 60] over the six positions: means 3.5 and 35.
 * Then _ConvNHWC (the nhwc-conv pass's channels-last float Conv) called
 * directly, outside a session: no kernel cache, so oneDNN's convolution is
 * not made and the kernel runs Conv on NCHW copies (nhwc.h). By hand: x
 * [1, 2, 2, 2] channels last, positions p0..p3 = (1, 2), (3, 4), (5, 6),
 * (7, 8); W [2, 2, 1, 1] = [[1, 2], [3, -1]], B = [0.5, -1]:
 * y[p][0] = 0.5 + x0 + 2 x1 = 5.5, 11.5, 17.5, 23.5 and
 * y[p][1] = -1 + 3 x0 - x1 = 0, 4, 8, 12; with a Z (fuse-conv-add's fourth
 * input) of [1, 2, .., 8] channels last, y + Z: 6.5, 2, 14.5, 8, 22.5, 14,
 * 30.5, 20. The session path (oneDNN) is checked against a reference in
 * tests/passes/test_nhwc_conv.c. */
#include "tests/devices/kernel_fixture_shape.h"

#include <CUnit/CUnit.h>

static void test_fallback_on_nchw_copies(void) {
    static const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[4] = {1, 2, 3, -1}, b[2] = {0.5f, -1};
    static const float want[8] = {5.5f, 0, 11.5f, 4, 17.5f, 8, 23.5f, 12};
    shape_fx f;
    fx_begin(&f, "_ConvNHWC");
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, x);
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){2, 2, 1, 1}, w);
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, b);
    fx_out_expect(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_fallback_with_z(void) {
    static const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[4] = {1, 2, 3, -1}, b[2] = {0.5f, -1};
    static const float want[8] = {6.5f, 2, 14.5f, 8, 22.5f, 14, 30.5f, 20};
    shape_fx f;
    fx_begin(&f, "_ConvNHWC");
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, x);
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){2, 2, 1, 1}, w);
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, b);
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, x); /* Z = x's values, Y's shape */
    fx_out_expect(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* A Z of another shape than Y: a clear error naming it, nothing read past
 * its end. */
static void test_z_checked(void) {
    static const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[4] = {1, 2, 3, -1}, z[6] = {0};
    shape_fx f;
    fx_begin(&f, "_ConvNHWC");
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, x);
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){2, 2, 1, 1}, w);
    fx_in_omit(&f);
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){1, 1, 3, 2}, z);
    fx_out_expect(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 2, 2}, x);
    CU_ASSERT_NOT_EQUAL(fx_run(&f), TGC_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "input 3 (Z)"));
    fx_end(&f);
}

static void test_global_average_pool(void) {
    static const float x[12] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60}, want[2] = {3.5f, 35};
    shape_fx f;
    fx_begin(&f, "_GlobalAveragePoolNHWC");
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){1, 2, 3, 2}, x);
    fx_out_expect(&f, TGC_FLOAT32, 4, (int64_t[]){1, 1, 1, 2}, want);
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* A rank that is not 4: a clear error naming the layout, not a crash. */
static void test_rank_checked(void) {
    static const float x[4] = {1, 2, 3, 4}, w[4] = {1, 2, 3, -1};
    shape_fx f;
    fx_begin(&f, "_ConvNHWC");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){1, 2, 2}, x);
    fx_in(&f, TGC_FLOAT32, 4, (int64_t[]){2, 2, 1, 1}, w);
    fx_out_expect(&f, TGC_FLOAT32, 3, (int64_t[]){1, 2, 2}, x);
    CU_ASSERT_NOT_EQUAL(fx_run(&f), TGC_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "channels last"));
    fx_end(&f);
}

TGC_TEST_MAIN("cpu _ConvNHWC", {"outside a session: Conv on NCHW copies", test_fallback_on_nchw_copies},
              {"outside a session, with a Z: Conv on NCHW copies, then + Z", test_fallback_with_z},
              {"a Z of another shape than Y", test_z_checked},
              {"x must be 4-D", test_rank_checked}, {"_GlobalAveragePoolNHWC by hand", test_global_average_pool})
