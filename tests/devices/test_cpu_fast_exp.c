/* The cpu's vectorizable exp (devices/cpu/fast_exp.h, Softmax's exp)
 * against exp in double: within FAST_EXP_MAX_ULP units in the last place
 * of the float result over a dense grid of every float from -104 to 89
 * (normal results, subnormal ones below -87.3, overflow above 88.72), and
 * IEEE's answers at the edges: 0 for -inf and anything below -104, inf
 * for +inf and anything above 89, NaN for NaN, exactly 1 for +-0. */
#include "tests/harness.h"

#include "devices/cpu/fast_exp.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Measured at most 0.991 ulp over every float in [-104, 89] on x86-64; the
 * bound leaves room for compilers that contract a * b + c into an FMA. */
#define FAST_EXP_MAX_ULP 1.5

/* Every GRID_STEP-th float (by bit pattern) is checked: ~9 million. */
#define GRID_STEP 257u

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* |got - want| in units of the float spacing at want (2^-149 among the
 * subnormals); 0 when both round to the same infinity. */
static double ulp_error(float got, double want) {
    if ((float)want == (float)INFINITY) return got == INFINITY ? 0.0 : INFINITY;
    double ulp;
    if (want < FLT_MIN) {
        ulp = 0x1p-149;
    } else {
        int e;
        frexp(want, &e); /* want = m * 2^e, 0.5 <= m < 1 */
        ulp = ldexp(1.0, e - 24);
    }
    return fabs((double)got - want) / ulp;
}

static void test_dense_range(void) {
    double worst = 0;
    float worst_x = 0;
    long checked = 0;
    for (uint64_t b = 0; b <= UINT32_MAX; b += GRID_STEP) {
        float x = from_bits((uint32_t)b);
        if (!(x >= -104.0f && x <= 89.0f)) continue; /* also skips NaN */
        double err = ulp_error(tgc_cpu_fast_expf(x), exp((double)x));
        checked++;
        if (err > worst) {
            worst = err;
            worst_x = x;
        }
    }
    CU_ASSERT(checked > 8000000);
    CU_ASSERT(worst <= FAST_EXP_MAX_ULP);
    if (!(worst <= FAST_EXP_MAX_ULP)) fprintf(stderr, "\n  exp(%a): %.3f ulp off\n", (double)worst_x, worst);
}

/* Softmax's arguments, x - max <= 0, where most of them fall: every
 * 101st float from -0 down to -20 (~11 million). */
static void test_softmax_range(void) {
    double worst = 0;
    for (uint32_t b = 0x80000000u; b <= 0xC1A00000u; b += 101) { /* -0 .. -20 */
        float x = from_bits(b);
        double err = ulp_error(tgc_cpu_fast_expf(x), exp((double)x));
        worst = err > worst ? err : worst;
    }
    CU_ASSERT(worst <= FAST_EXP_MAX_ULP);
}

static void test_edges(void) {
    CU_ASSERT(tgc_cpu_fast_expf(0.0f) == 1.0f);
    CU_ASSERT(tgc_cpu_fast_expf(-0.0f) == 1.0f);
    /* Underflow to +0 (exp(-104) is below half the smallest subnormal). */
    const float zeros[] = {-INFINITY, -FLT_MAX, -1e30f, -1000.0f, -104.0f, -103.98f};
    for (size_t i = 0; i < sizeof zeros / sizeof *zeros; i++) {
        float y = tgc_cpu_fast_expf(zeros[i]);
        CU_ASSERT(y == 0.0f && !signbit(y));
    }
    /* The smallest subnormal, and the region of subnormal results. */
    CU_ASSERT(tgc_cpu_fast_expf(-103.9f) == 0x1p-149f);
    CU_ASSERT(ulp_error(tgc_cpu_fast_expf(-95.0f), exp(-95.0)) <= FAST_EXP_MAX_ULP);
    CU_ASSERT(tgc_cpu_fast_expf(-87.0f) >= FLT_MIN);
    /* Overflow to +inf, and the largest finite results. */
    const float infs[] = {INFINITY, FLT_MAX, 1e30f, 1000.0f, 89.0f, 88.73f};
    for (size_t i = 0; i < sizeof infs / sizeof *infs; i++) CU_ASSERT(tgc_cpu_fast_expf(infs[i]) == INFINITY);
    float big = tgc_cpu_fast_expf(88.72f);
    CU_ASSERT(isfinite(big) && big > 3.3e38f);
    CU_ASSERT(ulp_error(big, exp((double)88.72f)) <= FAST_EXP_MAX_ULP);
    /* NaN passes, whatever its sign or payload. */
    CU_ASSERT(isnan(tgc_cpu_fast_expf(NAN)));
    CU_ASSERT(isnan(tgc_cpu_fast_expf(-NAN)));
    CU_ASSERT(isnan(tgc_cpu_fast_expf(from_bits(0x7f800001u))));
    CU_ASSERT(isnan(tgc_cpu_fast_expf(from_bits(0xffffffffu))));
}

/* A loop over the function (vectorized where the compiler can) gives what
 * the single calls give. */
static void test_loop_matches_calls(void) {
    enum { N = 1003 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = -110.0f + 0.2f * (float)i;
    x[7] = NAN;
    x[8] = -INFINITY;
    x[9] = INFINITY;
    for (int i = 0; i < N; i++) y[i] = tgc_cpu_fast_expf(x[i]);
    int same = 0;
    for (int i = 0; i < N; i++) {
        float one = tgc_cpu_fast_expf(x[i]);
        same += memcmp(&one, &y[i], sizeof one) == 0;
    }
    CU_ASSERT_EQUAL(same, N);
}

TGC_TEST_MAIN("cpu_fast_exp",
              {"dense range within the ulp bound", test_dense_range},
              {"softmax's range (-20, 0]", test_softmax_range},
              {"edges: 0, inf, NaN, subnormals", test_edges},
              {"a loop matches single calls", test_loop_matches_calls})
