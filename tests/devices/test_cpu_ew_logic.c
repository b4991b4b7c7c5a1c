/* The logic, bit, remainder, test and variadic rows of graph/elementwise.def
 * through the cpu kernels as the executor calls them (attributes read from
 * the node, broadcasting, Mean's passes), against values computed by numpy
 * (the expression in each comment) or by hand, and the inference rules and
 * errors of their op defs. test_ew_rows.c checks the loops themselves on
 * every dtype and ISA; conformance the ONNX backend models. */
#include "graph/ops.h"
#include "tests/devices/kernel_fixture_ew.h"
#include "tests/graph/infer_fixture.h"

#include <math.h>

#define EW_WORD(key, v) ((tgc_attr){.name = (char *)(key), .type = TGC_ATTR_STRING, .s = (char *)(v)})

/* Runs the node and compares output 0 (n elements of `dtype`) with want. */
static void run_and_check(ew_fx *f, const void *want, int64_t n, size_t esize) {
    ew_run_ok(f);
    CU_ASSERT_EQUAL(memcmp(tgc_buffer_host_ptr(f->out[0].buf), want, (size_t)n * esize), 0);
    ew_end(f);
}

/* Mean of three inputs broadcast together: the sum, then one division.
 * numpy: ((a + b) + c) / np.float32(3) with a = [1, 2, 3, 4],
 * b = [[10], [20]], c = np.float32(0.5). */
static void test_mean_three_inputs(void) {
    static const float want[8] = {3.8333333f, 4.1666665f, 4.5f, 4.8333335f,
                                  7.1666665f, 7.5f,       7.8333335f, 8.166667f};
    ew_fx f;
    ew_begin(&f, "Mean", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 1}, (float[]){10, 20});
    ew_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0.5f});
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 4});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    for (int i = 0; i < 8; i++) CU_ASSERT_DOUBLE_EQUAL(y[i], want[i], 1e-6);
    ew_end(&f);

    /* one input: itself */
    ew_begin(&f, "Mean", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, -2, 5});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){3});
    run_and_check(&f, (float[]){1, -2, 5}, 3, 4);
}

/* Mod on int32: np.mod (fmod 0, the divisor's sign) and np.fmod (fmod 1)
 * of x = [-4, 7, 5, 4, -7, 8], y = [2, -3, 8, -2, 3, 5]; then x mod 0 and
 * INT32_MIN mod -1, both 0 (numpy's result; C leaves them undefined). */
static void test_mod_int(void) {
    static const int32_t x[6] = {-4, 7, 5, 4, -7, 8}, y[6] = {2, -3, 8, -2, 3, 5};
    static const int32_t py[6] = {0, -2, 5, 0, 2, 3}, c[6] = {0, 1, 5, 0, -1, 3};
    for (int fmod = 0; fmod <= 1; fmod++) {
        ew_fx f;
        ew_begin(&f, "Mod", EW_DIR);
        ew_attr(&f, EW_INT("fmod", fmod));
        ew_in(&f, TGC_INT32, 1, (int64_t[]){6}, x);
        ew_in(&f, TGC_INT32, 1, (int64_t[]){6}, y);
        ew_out(&f, TGC_INT32, 1, (int64_t[]){6});
        run_and_check(&f, fmod ? c : py, 6, 4);

        ew_begin(&f, "Mod", EW_DIR);
        ew_attr(&f, EW_INT("fmod", fmod));
        ew_in(&f, TGC_INT64, 1, (int64_t[]){3}, (int64_t[]){5, -5, INT64_MIN});
        ew_in(&f, TGC_INT64, 1, (int64_t[]){3}, (int64_t[]){0, 0, -1});
        ew_out(&f, TGC_INT64, 1, (int64_t[]){3});
        run_and_check(&f, (int64_t[]){0, 0, 0}, 3, 8);
    }
}

/* Mod on float32 (fmod 1): np.fmod([-4.3, 7.2, 1e31], [2.1, -3.4, 1e-8])
 * in float32, exact; the third quotient overflows float. */
static void test_mod_float(void) {
    const float want[3] = {-0x1.999ap-4f, 0x1.99998p-2f, 0x1.4170b8p-27f};
    ew_fx f;
    ew_begin(&f, "Mod", EW_DIR);
    ew_attr(&f, EW_INT("fmod", 1));
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){-4.3f, 7.2f, 1e31f});
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){2.1f, -3.4f, 1e-8f});
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){3});
    run_and_check(&f, want, 3, 4);
}

/* BitShift on uint8, x = [16, 4, 1, 255] by [1, 2, 3, 8]: LEFT gives
 * [32, 16, 8, 0], RIGHT [8, 1, 0, 0] (a shift by 8 is 0, as numpy's); a
 * direction other than the two words is the kernel's error. */
static void test_bitshift(void) {
    static const uint8_t x[4] = {16, 4, 1, 255}, s[4] = {1, 2, 3, 8};
    static const uint8_t left[4] = {32, 16, 8, 0}, right[4] = {8, 1, 0, 0};
    ew_fx f;
    for (int r = 0; r <= 1; r++) {
        ew_begin(&f, "BitShift", EW_DIR);
        ew_attr(&f, EW_WORD("direction", r ? "RIGHT" : "LEFT"));
        ew_in(&f, TGC_UINT8, 1, (int64_t[]){4}, x);
        ew_in(&f, TGC_UINT8, 1, (int64_t[]){4}, s);
        ew_out(&f, TGC_UINT8, 1, (int64_t[]){4});
        run_and_check(&f, r ? right : left, 4, 1);
    }
    ew_begin(&f, "BitShift", EW_DIR);
    ew_attr(&f, EW_WORD("direction", "UP"));
    ew_in(&f, TGC_UINT8, 1, (int64_t[]){4}, x);
    ew_in(&f, TGC_UINT8, 0, NULL, s);
    ew_out(&f, TGC_UINT8, 1, (int64_t[]){4});
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "'direction' is 'UP'; it must be LEFT or RIGHT"));
    ew_end(&f);
}

/* IsInf with detect_negative 0: only +inf; IsNaN; Not; And broadcast. */
static void test_tests_and_logic(void) {
    const float x[4] = {-INFINITY, INFINITY, NAN, 1.0f};
    ew_fx f;
    ew_begin(&f, "IsInf", EW_DIR);
    ew_attr(&f, EW_INT("detect_negative", 0));
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, x);
    ew_out(&f, TGC_BOOL, 1, (int64_t[]){4});
    run_and_check(&f, (uint8_t[]){0, 1, 0, 0}, 4, 1);

    ew_begin(&f, "IsNaN", EW_DIR);
    ew_in(&f, TGC_FLOAT32, 1, (int64_t[]){4}, x);
    ew_out(&f, TGC_BOOL, 1, (int64_t[]){4});
    run_and_check(&f, (uint8_t[]){0, 0, 1, 0}, 4, 1);

    ew_begin(&f, "Not", EW_DIR);
    ew_in(&f, TGC_BOOL, 1, (int64_t[]){3}, (uint8_t[]){1, 0, 1});
    ew_out(&f, TGC_BOOL, 1, (int64_t[]){3});
    run_and_check(&f, (uint8_t[]){0, 1, 0}, 3, 1);

    /* [[1, 0], [0, 1]] and [[1], [0]] (a column) */
    ew_begin(&f, "And", EW_DIR);
    ew_in(&f, TGC_BOOL, 2, (int64_t[]){2, 2}, (uint8_t[]){1, 0, 0, 1});
    ew_in(&f, TGC_BOOL, 2, (int64_t[]){2, 1}, (uint8_t[]){1, 0});
    ew_out(&f, TGC_BOOL, 2, (int64_t[]){2, 2});
    run_and_check(&f, (uint8_t[]){1, 0, 0, 0}, 4, 1);
}

/* PRelu on int32 with a [3, 1] slope: x = [[-1, 2], [-3, 4], [-5, 6]],
 * slope [2, 3, 4] -> [[-2, 2], [-9, 4], [-20, 6]] (by hand). */
static void test_prelu_int(void) {
    ew_fx f;
    ew_begin(&f, "PRelu", EW_DIR);
    ew_in(&f, TGC_INT32, 2, (int64_t[]){3, 2}, (int32_t[]){-1, 2, -3, 4, -5, 6});
    ew_in(&f, TGC_INT32, 2, (int64_t[]){3, 1}, (int32_t[]){2, 3, 4});
    ew_out(&f, TGC_INT32, 2, (int64_t[]){3, 2});
    run_and_check(&f, (int32_t[]){-2, 2, -9, 4, -20, 6}, 6, 4);
}

/* Pow with a float16 base and an int32 exponent, and the reverse pair
 * kinds: [2, 3] ** [3, 2] = [8, 9] (exact; float16 bits 0x4800, 0x4880). */
static void test_pow_float16_pairs(void) {
    ew_fx f;
    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){2}, (uint16_t[]){0x4000, 0x4200});
    ew_in(&f, TGC_INT32, 1, (int64_t[]){2}, (int32_t[]){3, 2});
    ew_out(&f, TGC_FLOAT16, 1, (int64_t[]){2});
    run_and_check(&f, (uint16_t[]){0x4800, 0x4880}, 2, 2);

    ew_begin(&f, "Pow", EW_DIR);
    ew_in(&f, TGC_INT64, 1, (int64_t[]){2}, (int64_t[]){2, 3});
    ew_in(&f, TGC_FLOAT16, 1, (int64_t[]){2}, (uint16_t[]){0x4200, 0x4000}); /* 3, 2 */
    ew_out(&f, TGC_INT64, 1, (int64_t[]){2});
    run_and_check(&f, (int64_t[]){8, 9}, 2, 8);
}

/* ---- Inference ------------------------------------------------------------------- */

static void test_infer_rules(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    fx_input(&f, "s", TGC_FLOAT32, "3, 1");
    fx_input(&f, "wide_s", TGC_FLOAT32, "2, 3, 4");
    fx_input(&f, "bad_s", TGC_FLOAT32, "5, 1");
    fx_input(&f, "b", TGC_BOOL, "2, 1");
    fx_input(&f, "c", TGC_BOOL, "5");
    fx_input(&f, "u", TGC_UINT8, "4");
    fx_input(&f, "i", TGC_INT32, "4");

    int32_t prelu = fx_op(&f, "prelu", "PRelu", "x, s", 1);
    FX_OK(&f, prelu);
    FX_OUT(&f, prelu, 0, TGC_FLOAT32, "[N, 3, 4]");
    int32_t prelu_rank = fx_op(&f, "prelu_rank", "PRelu", "wide_s, x", 1); /* slope [N, 3, 4]: N may be 2 */
    FX_OK(&f, prelu_rank);
    int32_t prelu_bad = fx_op(&f, "prelu_bad", "PRelu", "x, bad_s", 1);
    FX_FAILS(&f, prelu_bad, 1, "shape-mismatch", "slope of shape [5, 1] does not broadcast to X's shape [N, 3, 4]");

    int32_t and_ = fx_op(&f, "and", "And", "b, c", 1);
    FX_OK(&f, and_);
    FX_OUT(&f, and_, 0, TGC_BOOL, "[2, 5]");
    int32_t and_int = fx_op(&f, "and_int", "And", "i, i", 1);
    FX_FAILS(&f, and_int, 0, "dtype-mismatch", "input 0 is int32");

    int32_t isnan = fx_op(&f, "isnan", "IsNaN", "x", 1);
    FX_OK(&f, isnan);
    FX_OUT(&f, isnan, 0, TGC_BOOL, "[N, 3, 4]");

    int32_t mod_f = fx_op(&f, "mod_f", "Mod", "x, x", 1);
    FX_FAILS(&f, mod_f, 0, "bad-attribute", "Mod of float32 inputs needs fmod = 1");
    int32_t mod_f1 = fx_op(&f, "mod_f1", "Mod", "x, x", 1);
    fx_attr_int(&f, mod_f1, "fmod", 1);
    FX_OK(&f, mod_f1);
    int32_t mod_i = fx_op(&f, "mod_i", "Mod", "i, i", 1);
    FX_OK(&f, mod_i);
    FX_OUT(&f, mod_i, 0, TGC_INT32, "[4]");

    int32_t shift = fx_op(&f, "shift", "BitShift", "u, u", 1);
    fx_attr_string(&f, shift, "direction", "RIGHT");
    FX_OK(&f, shift);
    int32_t shift_bad = fx_op(&f, "shift_bad", "BitShift", "u, u", 1);
    fx_attr_string(&f, shift_bad, "direction", "right");
    FX_FAILS(&f, shift_bad, -1, "bad-attribute", "'direction' is 'right'; it must be LEFT or RIGHT");
    int32_t shift_int = fx_op(&f, "shift_int", "BitShift", "i, i", 1);
    fx_attr_string(&f, shift_int, "direction", "LEFT");
    FX_FAILS(&f, shift_int, 0, "dtype-mismatch", "input 0 is int32");

    int32_t mean = fx_op(&f, "mean", "Mean", "x, s, x", 1);
    FX_OK(&f, mean);
    FX_OUT(&f, mean, 0, TGC_FLOAT32, "[N, 3, 4]");
    int32_t mean_int = fx_op(&f, "mean_int", "Mean", "i", 1);
    FX_FAILS(&f, mean_int, 0, "dtype-mismatch", "input 0 is int32");
    fx_end(&f);
}

TGC_TEST_MAIN("cpu_ew_logic",
              {"mean of three inputs", test_mean_three_inputs},
              {"mod int", test_mod_int},
              {"mod float", test_mod_float},
              {"bitshift", test_bitshift},
              {"tests and logic", test_tests_and_logic},
              {"prelu int", test_prelu_int},
              {"pow float16 pairs", test_pow_float16_pairs},
              {"infer rules", test_infer_rules})
