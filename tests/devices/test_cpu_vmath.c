/* The cpu's vector math (devices/cpu/vmath.h) against libm in double:
 * every function within VMATH_MAX_ULP units in the last place of the float
 * result on a dense sample (every 4096th float by bit pattern, 2^20 of
 * them, and 4096 random ones; pow on a grid of (x, y) pairs), and C99's
 * special values bit for bit: NaN, +-inf, signed zeros, subnormal inputs,
 * the overflow and underflow edges, poles and domain edges.
 *
 * Built twice by tests/CMakeLists.txt: as baseline code (SSE2, 4 lanes,
 * no FMA) and with -mavx512f ... -mfma (16 lanes, fused multiply-adds:
 * slightly different bits, the same bound); the second reports itself
 * skipped (exit 77) on a cpu without avx512f. The full sweep over all 2^32
 * inputs is bench/bench_ulp.c. */
#include "tests/harness.h"

#include "devices/cpu/vmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The bound every function is held to (bench_ulp measures each one's own
 * maximum over all inputs; see vmath.h). */
#define VMATH_MAX_ULP 3.5

typedef tgc_vf (*vfn)(tgc_vf);

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t to_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* Every lane x, by a load (tgc_vf_splat adds x to +0, which turns -0
 * into +0). */
static tgc_vf splat_exact(float x) {
    float lanes[TGC_VLANES];
    for (int i = 0; i < TGC_VLANES; i++) lanes[i] = x;
    return tgc_vf_load(lanes);
}

/* f at x in every lane; also checks that every lane gave the same bits. */
static float ev(vfn f, float x) {
    tgc_vf y = f(splat_exact(x));
    float lanes[TGC_VLANES];
    tgc_vf_store(lanes, y);
    for (int i = 1; i < TGC_VLANES; i++) CU_ASSERT_EQUAL(to_bits(lanes[i]), to_bits(lanes[0]));
    return lanes[0];
}

static float ev2(float x, float y) {
    float lanes[TGC_VLANES];
    tgc_vf_store(lanes, tgc_vpow(splat_exact(x), splat_exact(y)));
    return lanes[0];
}

/* Exactly want: the same bits, or both NaN. */
static int same(float got, float want) { return isnan(want) ? isnan(got) : to_bits(got) == to_bits(want); }

#define EXPECT(f, x, want)                                                                           \
    do {                                                                                             \
        float got_ = ev(f, x);                                                                       \
        CU_ASSERT(same(got_, want));                                                                 \
        if (!same(got_, want)) fprintf(stderr, "\n  %s(%a) = %a, want %a", #f, (double)(x), (double)got_, (double)(want)); \
    } while (0)

#define EXPECT_POW(x, y, want)                                                                       \
    do {                                                                                             \
        float got_ = ev2(x, y);                                                                      \
        CU_ASSERT(same(got_, want));                                                                 \
        if (!same(got_, want)) fprintf(stderr, "\n  pow(%a, %a) = %a, want %a", (double)(x), (double)(y), (double)got_, (double)(want)); \
    } while (0)

/* |got - ref| in ulp of the float nearest ref (2^-149 among subnormals,
 * the spacing at FLT_MAX when ref rounds to inf); 0 when both are the
 * same infinity or both NaN; inf on a special-value mismatch (NaN-ness,
 * an infinity where ref is finite, a zero of the wrong sign). */
static double ulp_error(float got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0.0 : INFINITY;
    if (isinf(ref) || isinf(got)) return (float)ref == got ? 0.0 : INFINITY;
    if (got == 0.0f && !signbit(got) != !signbit(ref)) return INFINITY;
    float rf = (float)ref;
    double ulp;
    if (isinf(rf)) ulp = 0x1p104;
    else if (fabs((double)rf) < FLT_MIN) ulp = 0x1p-149;
    else {
        int e;
        frexp((double)rf, &e);
        ulp = ldexp(1.0, e - 24);
    }
    return fabs((double)got - ref) / ulp;
}

/* ---- The dense sample ---------------------------------------------------------- */

#define SAMPLE_STEP 4096u
#define RANDOM_POINTS 4096u
#define BATCH 1024

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* Runs f over the sample and asserts the bound; prints the worst case. */
static void check_dense(const char *name, vfn f, double (*ref)(double)) {
    static float in[BATCH], out[BATCH];
    double worst = 0;
    float worst_x = 0;
    uint32_t lcg = 2463534242u;
    long checked = 0;
    uint64_t total = (1ull << 32) / SAMPLE_STEP + RANDOM_POINTS;
    for (uint64_t i = 0; i < total; i += BATCH) {
        for (int k = 0; k < BATCH; k++) {
            uint64_t idx = i + (uint64_t)k;
            if (idx < (1ull << 32) / SAMPLE_STEP) {
                in[k] = from_bits((uint32_t)(idx * SAMPLE_STEP + (idx % 4093u))); /* every binade, varied mantissas */
            } else {
                lcg = lcg * 1664525u + 1013904223u;
                in[k] = from_bits(lcg);
            }
        }
        for (int k = 0; k < BATCH; k += TGC_VLANES) tgc_vf_store(out + k, f(tgc_vf_load(in + k)));
        for (int k = 0; k < BATCH; k++) {
            double err = ulp_error(out[k], ref((double)in[k]));
            checked++;
            if (err > worst) {
                worst = err;
                worst_x = in[k];
            }
        }
    }
    CU_ASSERT(checked >= (long)total);
    CU_ASSERT(worst <= VMATH_MAX_ULP);
    if (!(worst <= VMATH_MAX_ULP)) fprintf(stderr, "\n  %s(%a): %.3f ulp off", name, (double)worst_x, worst);
}

#define DENSE(fn, ref)                                                        \
    static void test_dense_##fn(void) { check_dense(#fn, tgc_v##fn, ref); }

DENSE(exp, exp)
DENSE(expm1, expm1)
DENSE(log, log)
DENSE(log1p, log1p)
DENSE(tanh, tanh)
DENSE(sigmoid, ref_sigmoid)
DENSE(erf, erf)
DENSE(softplus, ref_softplus)
DENSE(sin, sin)
DENSE(cos, cos)
DENSE(tan, tan)
DENSE(asin, asin)
DENSE(acos, acos)
DENSE(atan, atan)
DENSE(sinh, sinh)
DENSE(cosh, cosh)
DENSE(asinh, asinh)
DENSE(acosh, acosh)
DENSE(atanh, atanh)

/* pow on 2^20 pairs: x over every sign and binade, y over a spread of bit
 * patterns, small integers, halves and a uniform range. */
static void test_dense_pow(void) {
    static float xs[1024], ys[1024], out[1024];
    uint32_t lcg = 88172645u;
    double worst = 0;
    float wx = 0, wy = 0;
    for (int i = 0; i < 1024; i++) {
        for (int k = 0; k < 1024; k++) {
            lcg = lcg * 1664525u + 1013904223u;
            xs[k] = from_bits((uint32_t)i * (1u << 22) + (lcg >> 10));
            if (k < 256) ys[k] = from_bits(lcg * 2654435761u);
            else if (k < 512) ys[k] = (float)(k - 384) * 0.5f;
            else ys[k] = -30.0f + 60.0f * (float)(lcg >> 8) * 0x1p-24f;
        }
        for (int k = 0; k < 1024; k += TGC_VLANES)
            tgc_vf_store(out + k, tgc_vpow(tgc_vf_load(xs + k), tgc_vf_load(ys + k)));
        for (int k = 0; k < 1024; k++) {
            double err = ulp_error(out[k], pow((double)xs[k], (double)ys[k]));
            if (err > worst) {
                worst = err;
                wx = xs[k];
                wy = ys[k];
            }
        }
    }
    CU_ASSERT(worst <= VMATH_MAX_ULP);
    if (!(worst <= VMATH_MAX_ULP)) fprintf(stderr, "\n  pow(%a, %a): %.3f ulp off", (double)wx, (double)wy, worst);
}

/* ---- Special values, exactly ------------------------------------------------------ */

static const float DENORM = 0x1p-149f, DENORM_BIG = 0x1.fffffcp-127f;

static void test_special_exp(void) {
    EXPECT(tgc_vexp, NAN, NAN);
    EXPECT(tgc_vexp, -NAN, NAN);
    EXPECT(tgc_vexp, -INFINITY, 0.0f);
    EXPECT(tgc_vexp, INFINITY, INFINITY);
    EXPECT(tgc_vexp, 0.0f, 1.0f);
    EXPECT(tgc_vexp, -0.0f, 1.0f);
    EXPECT(tgc_vexp, DENORM, 1.0f);
    EXPECT(tgc_vexp, -DENORM_BIG, 1.0f);
    EXPECT(tgc_vexp, -104.0f, 0.0f);
    EXPECT(tgc_vexp, -FLT_MAX, 0.0f);
    EXPECT(tgc_vexp, -103.9f, 0x1p-149f); /* the smallest subnormal */
    EXPECT(tgc_vexp, 88.73f, INFINITY);
    EXPECT(tgc_vexp, FLT_MAX, INFINITY);
    CU_ASSERT(ulp_error(ev(tgc_vexp, 88.72f), exp((double)88.72f)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vexp, -95.0f), exp(-95.0)) <= VMATH_MAX_ULP); /* subnormal result */
    EXPECT(tgc_vexp, 1.0f, 2.71828183f);
}

static void test_special_expm1(void) {
    EXPECT(tgc_vexpm1, NAN, NAN);
    EXPECT(tgc_vexpm1, 0.0f, 0.0f);
    EXPECT(tgc_vexpm1, -0.0f, -0.0f);
    EXPECT(tgc_vexpm1, -INFINITY, -1.0f);
    EXPECT(tgc_vexpm1, INFINITY, INFINITY);
    EXPECT(tgc_vexpm1, DENORM, DENORM);
    EXPECT(tgc_vexpm1, -DENORM_BIG, -DENORM_BIG);
    EXPECT(tgc_vexpm1, 1e-30f, 1e-30f);
    EXPECT(tgc_vexpm1, -20.0f, -1.0f);
    EXPECT(tgc_vexpm1, -FLT_MAX, -1.0f);
    EXPECT(tgc_vexpm1, 88.73f, INFINITY);
    EXPECT(tgc_vexpm1, FLT_MAX, INFINITY);
    CU_ASSERT(ulp_error(ev(tgc_vexpm1, 88.72f), expm1((double)88.72f)) <= VMATH_MAX_ULP);
}

static void test_special_log(void) {
    EXPECT(tgc_vlog, NAN, NAN);
    EXPECT(tgc_vlog, 0.0f, -INFINITY);
    EXPECT(tgc_vlog, -0.0f, -INFINITY);
    EXPECT(tgc_vlog, -1.0f, NAN);
    EXPECT(tgc_vlog, -DENORM, NAN);
    EXPECT(tgc_vlog, -INFINITY, NAN);
    EXPECT(tgc_vlog, INFINITY, INFINITY);
    EXPECT(tgc_vlog, 1.0f, 0.0f);
    CU_ASSERT(ulp_error(ev(tgc_vlog, DENORM), log(0x1p-149)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vlog, DENORM_BIG), log((double)DENORM_BIG)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vlog, FLT_MAX), log((double)FLT_MAX)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vlog, FLT_MIN), log((double)FLT_MIN)) <= VMATH_MAX_ULP);
}

static void test_special_log1p(void) {
    EXPECT(tgc_vlog1p, NAN, NAN);
    EXPECT(tgc_vlog1p, 0.0f, 0.0f);
    EXPECT(tgc_vlog1p, -0.0f, -0.0f);
    EXPECT(tgc_vlog1p, -1.0f, -INFINITY);
    EXPECT(tgc_vlog1p, -2.0f, NAN);
    EXPECT(tgc_vlog1p, -INFINITY, NAN);
    EXPECT(tgc_vlog1p, INFINITY, INFINITY);
    EXPECT(tgc_vlog1p, DENORM, DENORM);
    EXPECT(tgc_vlog1p, -DENORM_BIG, -DENORM_BIG);
    CU_ASSERT(ulp_error(ev(tgc_vlog1p, FLT_MAX), log1p((double)FLT_MAX)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vlog1p, -1.0f + 0x1p-24f), log1p(-1.0 + 0x1p-24)) <= VMATH_MAX_ULP);
}

static void test_special_tanh_sigmoid_softplus(void) {
    EXPECT(tgc_vtanh, NAN, NAN);
    EXPECT(tgc_vtanh, 0.0f, 0.0f);
    EXPECT(tgc_vtanh, -0.0f, -0.0f);
    EXPECT(tgc_vtanh, INFINITY, 1.0f);
    EXPECT(tgc_vtanh, -INFINITY, -1.0f);
    EXPECT(tgc_vtanh, 10.0f, 1.0f);
    EXPECT(tgc_vtanh, -FLT_MAX, -1.0f);
    EXPECT(tgc_vtanh, DENORM, DENORM);
    EXPECT(tgc_vtanh, -DENORM_BIG, -DENORM_BIG);

    EXPECT(tgc_vsigmoid, NAN, NAN);
    EXPECT(tgc_vsigmoid, -INFINITY, 0.0f);
    EXPECT(tgc_vsigmoid, INFINITY, 1.0f);
    EXPECT(tgc_vsigmoid, 0.0f, 0.5f);
    EXPECT(tgc_vsigmoid, -0.0f, 0.5f);
    EXPECT(tgc_vsigmoid, DENORM, 0.5f);
    EXPECT(tgc_vsigmoid, -200.0f, 0.0f);
    EXPECT(tgc_vsigmoid, 30.0f, 1.0f);
    CU_ASSERT(ulp_error(ev(tgc_vsigmoid, -100.0f), ref_sigmoid(-100.0)) <= VMATH_MAX_ULP); /* subnormal */
    CU_ASSERT(ev(tgc_vsigmoid, -100.0f) > 0.0f);

    EXPECT(tgc_vsoftplus, NAN, NAN);
    EXPECT(tgc_vsoftplus, INFINITY, INFINITY);
    EXPECT(tgc_vsoftplus, -INFINITY, 0.0f);
    EXPECT(tgc_vsoftplus, 0.0f, 0.693147182f);
    EXPECT(tgc_vsoftplus, -0.0f, 0.693147182f);
    EXPECT(tgc_vsoftplus, 100.0f, 100.0f);
    EXPECT(tgc_vsoftplus, FLT_MAX, FLT_MAX);
    EXPECT(tgc_vsoftplus, -FLT_MAX, 0.0f);
    CU_ASSERT(ulp_error(ev(tgc_vsoftplus, -100.0f), ref_softplus(-100.0)) <= VMATH_MAX_ULP); /* e^-100, subnormal */
    CU_ASSERT(ev(tgc_vsoftplus, -100.0f) > 0.0f);
}

static void test_special_erf(void) {
    EXPECT(tgc_verf, NAN, NAN);
    EXPECT(tgc_verf, 0.0f, 0.0f);
    EXPECT(tgc_verf, -0.0f, -0.0f);
    EXPECT(tgc_verf, INFINITY, 1.0f);
    EXPECT(tgc_verf, -INFINITY, -1.0f);
    EXPECT(tgc_verf, 5.0f, 1.0f);
    EXPECT(tgc_verf, -FLT_MAX, -1.0f);
    CU_ASSERT(ulp_error(ev(tgc_verf, DENORM_BIG), erf((double)DENORM_BIG)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_verf, -4 * DENORM), erf(-4 * 0x1p-149)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_verf, 0.921875f), erf(0.921875)) <= VMATH_MAX_ULP); /* the split */
    CU_ASSERT(ulp_error(ev(tgc_verf, 0.92187506f), erf((double)0.92187506f)) <= VMATH_MAX_ULP);
}

static void test_special_trig(void) {
    EXPECT(tgc_vsin, -0.0f, -0.0f);
    EXPECT(tgc_vsin, 0.0f, 0.0f);
    EXPECT(tgc_vsin, INFINITY, NAN);
    EXPECT(tgc_vsin, NAN, NAN);
    EXPECT(tgc_vsin, -DENORM, -DENORM);
    EXPECT(tgc_vcos, 0.0f, 1.0f);
    EXPECT(tgc_vcos, -0.0f, 1.0f);
    EXPECT(tgc_vcos, -INFINITY, NAN);
    EXPECT(tgc_vtan, -0.0f, -0.0f);
    EXPECT(tgc_vtan, INFINITY, NAN);
    EXPECT(tgc_vasin, 1.0f, 1.57079637f);
    EXPECT(tgc_vasin, -1.0f, -1.57079637f);
    EXPECT(tgc_vasin, -0.0f, -0.0f);
    EXPECT(tgc_vasin, 1.0000001f, NAN);
    EXPECT(tgc_vasin, -INFINITY, NAN);
    EXPECT(tgc_vacos, 1.0f, 0.0f);
    EXPECT(tgc_vacos, -1.0f, 3.14159274f);
    EXPECT(tgc_vacos, 2.0f, NAN);
    EXPECT(tgc_vatan, INFINITY, 1.57079637f);
    EXPECT(tgc_vatan, -INFINITY, -1.57079637f);
    EXPECT(tgc_vatan, -0.0f, -0.0f);
    EXPECT(tgc_vatan, NAN, NAN);
}

static void test_special_hyperbolic(void) {
    EXPECT(tgc_vsinh, -0.0f, -0.0f);
    EXPECT(tgc_vsinh, 0.0f, 0.0f);
    EXPECT(tgc_vsinh, INFINITY, INFINITY);
    EXPECT(tgc_vsinh, -INFINITY, -INFINITY);
    EXPECT(tgc_vsinh, NAN, NAN);
    EXPECT(tgc_vsinh, -DENORM, -DENORM);
    EXPECT(tgc_vsinh, 89.5f, INFINITY);
    EXPECT(tgc_vsinh, -89.5f, -INFINITY);
    CU_ASSERT(ulp_error(ev(tgc_vsinh, 89.4f), sinh((double)89.4f)) <= VMATH_MAX_ULP); /* finite, near FLT_MAX */
    CU_ASSERT(ulp_error(ev(tgc_vsinh, -88.5f), sinh(-88.5)) <= VMATH_MAX_ULP);
    EXPECT(tgc_vcosh, 0.0f, 1.0f);
    EXPECT(tgc_vcosh, -0.0f, 1.0f);
    EXPECT(tgc_vcosh, -INFINITY, INFINITY);
    EXPECT(tgc_vcosh, NAN, NAN);
    EXPECT(tgc_vcosh, 89.5f, INFINITY);
    CU_ASSERT(ulp_error(ev(tgc_vcosh, -89.4f), cosh((double)-89.4f)) <= VMATH_MAX_ULP);
    EXPECT(tgc_vasinh, -0.0f, -0.0f);
    EXPECT(tgc_vasinh, -INFINITY, -INFINITY);
    EXPECT(tgc_vasinh, NAN, NAN);
    CU_ASSERT(ulp_error(ev(tgc_vasinh, -FLT_MAX), asinh(-(double)FLT_MAX)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vasinh, 0x1p64f), asinh(0x1p64)) <= VMATH_MAX_ULP);
    EXPECT(tgc_vasinh, 0.0f, 0.0f);
    EXPECT(tgc_vasinh, INFINITY, INFINITY);
    EXPECT(tgc_vasinh, DENORM, DENORM);
    EXPECT(tgc_vasinh, -DENORM_BIG, -DENORM_BIG);
    CU_ASSERT(ulp_error(ev(tgc_vasinh, 4096.0f), asinh(4096.0)) <= VMATH_MAX_ULP); /* the split */
    CU_ASSERT(ulp_error(ev(tgc_vasinh, -4096.0005f), asinh((double)-4096.0005f)) <= VMATH_MAX_ULP);
    EXPECT(tgc_vacosh, 1.0f, 0.0f);
    EXPECT(tgc_vacosh, 0.5f, NAN);
    EXPECT(tgc_vacosh, -INFINITY, NAN);
    EXPECT(tgc_vacosh, INFINITY, INFINITY);
    CU_ASSERT(ulp_error(ev(tgc_vacosh, FLT_MAX), acosh((double)FLT_MAX)) <= VMATH_MAX_ULP);
    EXPECT(tgc_vacosh, 0.99999994f, NAN);
    EXPECT(tgc_vacosh, NAN, NAN);
    CU_ASSERT(ulp_error(ev(tgc_vacosh, 1.00000012f), acosh((double)1.00000012f)) <= VMATH_MAX_ULP);
    CU_ASSERT(ulp_error(ev(tgc_vacosh, 4096.0f), acosh(4096.0)) <= VMATH_MAX_ULP); /* the split */
    CU_ASSERT(ulp_error(ev(tgc_vacosh, 4096.0005f), acosh((double)4096.0005f)) <= VMATH_MAX_ULP);
    EXPECT(tgc_vatanh, 1.0f, INFINITY);
    EXPECT(tgc_vatanh, -1.0f, -INFINITY);
    EXPECT(tgc_vatanh, -0.0f, -0.0f);
    EXPECT(tgc_vatanh, 2.0f, NAN);
    EXPECT(tgc_vatanh, NAN, NAN);
    EXPECT(tgc_vatanh, -DENORM, -DENORM);
}

static void test_special_pow(void) {
    EXPECT_POW(NAN, 0.0f, 1.0f);
    EXPECT_POW(NAN, -0.0f, 1.0f);
    EXPECT_POW(-INFINITY, 0.0f, 1.0f);
    EXPECT_POW(1.0f, NAN, 1.0f);
    EXPECT_POW(1.0f, INFINITY, 1.0f);
    EXPECT_POW(-1.0f, INFINITY, 1.0f);
    EXPECT_POW(-1.0f, -INFINITY, 1.0f);
    EXPECT_POW(NAN, 1.0f, NAN);
    EXPECT_POW(2.0f, NAN, NAN);
    EXPECT_POW(-2.0f, 0.5f, NAN);
    EXPECT_POW(-8.0f, 1.0f / 3.0f, NAN);
    EXPECT_POW(0.0f, -3.0f, INFINITY);
    EXPECT_POW(-0.0f, -3.0f, -INFINITY);
    EXPECT_POW(-0.0f, -2.0f, INFINITY);
    EXPECT_POW(-0.0f, -INFINITY, INFINITY);
    EXPECT_POW(0.0f, 3.0f, 0.0f);
    EXPECT_POW(-0.0f, 3.0f, -0.0f);
    EXPECT_POW(-0.0f, 2.0f, 0.0f);
    EXPECT_POW(0.5f, INFINITY, 0.0f);
    EXPECT_POW(2.0f, INFINITY, INFINITY);
    EXPECT_POW(0.5f, -INFINITY, INFINITY);
    EXPECT_POW(2.0f, -INFINITY, 0.0f);
    EXPECT_POW(INFINITY, -1.0f, 0.0f);
    EXPECT_POW(INFINITY, 0.5f, INFINITY);
    EXPECT_POW(-INFINITY, 3.0f, -INFINITY);
    EXPECT_POW(-INFINITY, 2.0f, INFINITY);
    EXPECT_POW(-INFINITY, -3.0f, -0.0f);
    EXPECT_POW(-INFINITY, -2.0f, 0.0f);
    EXPECT_POW(2.0f, 10.0f, 1024.0f);
    EXPECT_POW(-2.0f, 3.0f, -8.0f);
    EXPECT_POW(2.0f, -149.0f, 0x1p-149f);
    EXPECT_POW(2.0f, 128.0f, INFINITY);
    EXPECT_POW(-2.0f, -151.0f, -0.0f);
}

/* A loop gives the same bits as single calls at any offset (lanes are
 * independent) for a mix of ordinary and special inputs, and of the
 * argument ranges where the trigonometric functions reduce differently. */
static void test_lanes_independent(void) {
    enum { N = 256 };
    static float x[N + TGC_VLANES], y[N];
    for (int i = 0; i < N; i++) x[i] = -30.0f + 0.25f * (float)i;
    x[3] = NAN;
    x[4] = -INFINITY;
    x[5] = INFINITY;
    x[6] = -0.0f;
    x[7] = DENORM;
    x[8] = 200.0f; /* the ranges where SLEEF's trigonometric functions reduce arguments differently */
    x[9] = 1.0e5f;
    x[10] = -3.0e38f;
    x[18] = 4321.0f;
    x[19] = -5.0e7f;
    static const vfn fns[] = {tgc_vexp, tgc_vexpm1, tgc_vlog, tgc_vlog1p, tgc_vtanh, tgc_vsigmoid, tgc_verf,
                              tgc_vsoftplus, tgc_vsin, tgc_vcos, tgc_vtan, tgc_vasin, tgc_vacos, tgc_vatan,
                              tgc_vsinh, tgc_vcosh, tgc_vasinh, tgc_vacosh, tgc_vatanh};
    for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
        for (int i = 0; i + TGC_VLANES <= N; i += TGC_VLANES) tgc_vf_store(y + i, fns[f](tgc_vf_load(x + i)));
        int same_bits = 0;
        for (int i = 0; i < N; i++) same_bits += same(ev(fns[f], x[i]), y[i]);
        for (int i = 0; i < N; i++)
            if (!same(ev(fns[f], x[i]), y[i]))
                fprintf(stderr, "\n  function %zu, x %a: alone %a, in a loop %a", f, (double)x[i],
                        (double)ev(fns[f], x[i]), (double)y[i]);
        CU_ASSERT_EQUAL(same_bits, N);
    }
}

static const tgc_test_case CASES[] = {
    {"exp within the bound on a dense sample", test_dense_exp},
    {"expm1 within the bound", test_dense_expm1},
    {"log within the bound", test_dense_log},
    {"log1p within the bound", test_dense_log1p},
    {"tanh within the bound", test_dense_tanh},
    {"sigmoid within the bound", test_dense_sigmoid},
    {"erf within the bound", test_dense_erf},
    {"softplus within the bound", test_dense_softplus},
    {"sin within the bound", test_dense_sin},
    {"cos within the bound", test_dense_cos},
    {"tan within the bound", test_dense_tan},
    {"asin within the bound", test_dense_asin},
    {"acos within the bound", test_dense_acos},
    {"atan within the bound", test_dense_atan},
    {"sinh within the bound", test_dense_sinh},
    {"cosh within the bound", test_dense_cosh},
    {"asinh within the bound", test_dense_asinh},
    {"acosh within the bound", test_dense_acosh},
    {"atanh within the bound", test_dense_atanh},
    {"pow within the bound on a grid of pairs", test_dense_pow},
    {"exp: 0, inf, NaN, underflow, overflow, subnormals", test_special_exp},
    {"expm1: signed zeros, -1, overflow, subnormals", test_special_expm1},
    {"log: poles, negatives, subnormals", test_special_log},
    {"log1p: -1, below -1, signed zeros, subnormals", test_special_log1p},
    {"tanh, sigmoid, softplus: saturation and tails", test_special_tanh_sigmoid_softplus},
    {"erf: signed zeros, +-1, the split point", test_special_erf},
    {"sin, cos, tan, asin, acos, atan: edges", test_special_trig},
    {"sinh, cosh, asinh, acosh, atanh: edges", test_special_hyperbolic},
    {"pow: C99's special cases", test_special_pow},
    {"a loop matches single calls", test_lanes_independent},
    {NULL, NULL},
};

int main(void) {
#if TGC_VBYTES == 64
    if (!__builtin_cpu_supports("avx512f")) {
        printf("cpu_vmath (avx512): skipped, this cpu has no avx512f\n");
        return 77; /* ctest's SKIP_RETURN_CODE */
    }
#endif
    return tgc_test_run("cpu_vmath (" TGC_ISA_NAME ")", CASES);
}
