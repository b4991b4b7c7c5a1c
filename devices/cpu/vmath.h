/* Float32 vector math for the cpu elementwise kernels: one tgc_vf in, one
 * out, every lane independent. Private to the cpu device.
 *
 * Written once over the width of devices/cpu/simd.h (4, 8 or 16 lanes,
 * following the translation unit's -m flags) with gcc/clang vector
 * extensions only: + - * /, comparisons giving lane masks, tgc_vsel, bit
 * casts. No data-dependent branches and no tables, so a loop over them runs
 * at the vector width whatever the data. The project builds in ISO C mode
 * (-ffp-contract=off) and nothing here asks for a fused multiply-add, so a
 * function gives the same bits at every width and with or without -mfma.
 *
 * Accuracy is stated per function as the maximum error measured by
 * bench/bench_ulp.c (over all 2^32 float inputs, or the sample the comment
 * names) against the function in double, in units of the spacing of floats at the correctly rounded result
 * (ulp; 2^-149 among the subnormals). Every function is within 3.5 ulp, and
 * gives C99's (and ONNX's) special values: NaN in gives NaN out, the sign of
 * zero is kept where C's function keeps it, infinities and poles as C.
 * Subnormal inputs are handled (no flush-to-zero is assumed), and results
 * that are subnormal are computed, not flushed. Neither errno nor the
 * floating-point exception flags are set as C's functions set them.
 *
 * Own code for the activations models use most (exp, expm1, log, log1p,
 * tanh, sigmoid, erf, softplus): short polynomials, 2-5x faster than SLEEF's
 * 1-ulp functions. SLEEF 3.5 (Debian libsleef-dev; link with -lsleef) for
 * the trigonometric, inverse and hyperbolic functions and pow, at the
 * ISA of this translation unit (Sleef_sinf16_u35avx512f, ..._avx2,
 * ..._sse2), never through SLEEF's dispatcher.
 *
 * Example usage:
 *     for (i = 0; i + TGC_VLANES <= n; i += TGC_VLANES)
 *         tgc_vf_store(y + i, tgc_vtanh(tgc_vf_load(x + i)));
 */
#ifndef TGC_DEVICES_CPU_VMATH_H
#define TGC_DEVICES_CPU_VMATH_H

#include "devices/cpu/simd.h"

#include <math.h>
#include <immintrin.h> /* before sleef.h: it declares its functions with __m128/__m256/__m512 */
#include <sleef.h>

/* gcc in ISO C mode never contracts a * b + c; clang does within an
 * expression unless told not to (-ffp-contract=on is its default), which
 * would make the bits depend on -mfma. Restored at the end of the file. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- Helpers ------------------------------------------------------------- */

/* Every lane set to the float whose bits are b. */
static inline tgc_vf tgc_vm_bits_splat(uint32_t b) { return (tgc_vf)((tgc_vu){0} + b); }

/* Lane i: lo where x < lo, hi where x > hi, else x (NaN stays NaN). */
static inline tgc_vf tgc_vm_clamp(tgc_vf x, float lo, float hi) {
    x = tgc_vsel(x < lo, tgc_vf_splat(lo), x);
    return tgc_vsel(x > hi, tgc_vf_splat(hi), x);
}

/* SLEEF at this translation unit's width: TGC_VM_SLEEF(sin, u10, x) is
 * Sleef_sinf16_u10avx512f, Sleef_sinf8_u10avx2 or Sleef_sinf4_u10sse2. */
#if TGC_VBYTES == 64
#define TGC_VM_SLEEF(fn, acc, x) ((tgc_vf)Sleef_##fn##f16_##acc##avx512f((__m512)(x)))
#define TGC_VM_SLEEF2(fn, acc, x, y) ((tgc_vf)Sleef_##fn##f16_##acc##avx512f((__m512)(x), (__m512)(y)))
#elif TGC_VBYTES == 32
#define TGC_VM_SLEEF(fn, acc, x) ((tgc_vf)Sleef_##fn##f8_##acc##avx2((__m256)(x)))
#define TGC_VM_SLEEF2(fn, acc, x, y) ((tgc_vf)Sleef_##fn##f8_##acc##avx2((__m256)(x), (__m256)(y)))
#else
#define TGC_VM_SLEEF(fn, acc, x) ((tgc_vf)Sleef_##fn##f4_##acc##sse2((__m128)(x)))
#define TGC_VM_SLEEF2(fn, acc, x, y) ((tgc_vf)Sleef_##fn##f4_##acc##sse2((__m128)(x), (__m128)(y)))
#endif

/* 1.5 * 2^23: x + it leaves round(x) in the low mantissa bits (|x| < 2^22). */
#define TGC_VM_SHIFTER 12582912.0f
#define TGC_VM_LOG2E 1.44269504088896341f
/* ln 2 = TGC_VM_LN2_HI + TGC_VM_LN2_LO (Cody and Waite): the high part has
 * 9 significant bits, so n * it is exact for |n| < 2^15. */
#define TGC_VM_LN2_HI 0.693359375f
#define TGC_VM_LN2_LO -2.12194440e-4f

/* exp(r) - 1 - r over r^2, |r| <= ln2/2: Cephes expf's degree-5 minimax
 * polynomial (Stephen L. Moshier, cephes/single/expf.c). */
static inline tgc_vf tgc_vm_exp_poly(tgc_vf r) {
    tgc_vf p = tgc_vf_splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    return p * r + 5.0000001201e-1f;
}

/* log(1 + f) - f + f^2/2 over f^3, f in [sqrt(1/2) - 1, sqrt(2) - 1]:
 * Cephes logf's degree-8 polynomial (cephes/single/logf.c). */
static inline tgc_vf tgc_vm_log_poly(tgc_vf f) {
    tgc_vf p = tgc_vf_splat(7.0376836292e-2f);
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    return p * f + 3.3333331174e-1f;
}

/* log(u) + c for u positive, normal and finite (bits ub), c a small
 * correction (|c| below u's half ulp over u, or 0). The musl/FreeBSD
 * split: u = 2^k m with m in [sqrt(1/2), sqrt(2)) taken from the bits by
 * one integer add, f = m - 1 exact, then Cephes logf:
 *     log u = k ln2_hi + (f + (f^3 P(f) - f^2/2 + k ln2_lo + c)).
 * kadd is added to k (-23 when u was scaled up by 2^23). */
static inline tgc_vf tgc_vm_log_core(tgc_vu ub, tgc_vf c, tgc_vi kadd) {
    ub += 0x3f800000u - 0x3f3504f3u;
    tgc_vi k = (tgc_vi)(ub >> 23) - 127 + kadd;
    tgc_vf m = (tgc_vf)((ub & 0x007fffffu) + 0x3f3504f3u);
    tgc_vf f = m - 1.0f;
    tgc_vf kf = tgc_vi_to_vf(k);
    tgc_vf z = f * f;
    tgc_vf y = tgc_vm_log_poly(f) * f * z;
    y = y + kf * TGC_VM_LN2_LO;
    y = y - 0.5f * z;
    y = y + c;
    return (f + y) + kf * TGC_VM_LN2_HI;
}

/* ---- exp, expm1 ------------------------------------------------------------ */

/* exp(x). Cephes expf (as devices/cpu/fast_exp.h, lane for lane the same
 * bits as tgc_cpu_fast_expf): n = round(x log2 e) by the shifter trick,
 * r = x - n ln2 in two parts (Cody-Waite), exp(r) = 1 + r + r^2 P(r) with
 * Cephes's degree-5 minimax P, times 2^n built from exponent bits as
 * 2^(n/2) 2^(n - n/2) so that subnormal results round once.
 * Max error 0.990 ulp (bench_ulp, all 2^32 inputs).
 * Special values: NaN -> NaN, -inf and x < -103.98 -> +0 (subnormal
 * results down to 2^-149 above that), +inf and x > 88.7228 -> +inf,
 * +-0 -> 1. */
static inline tgc_vf tgc_vexp(tgc_vf x) {
    tgc_vf t = x * TGC_VM_LOG2E + TGC_VM_SHIFTER;
    tgc_vf n = t - TGC_VM_SHIFTER;
    tgc_vf r = x - n * TGC_VM_LN2_HI;
    r = r - n * TGC_VM_LN2_LO;
    tgc_vf e = tgc_vm_exp_poly(r) * (r * r) + r + 1.0f;
    /* u = n + 512, h = floor(u / 2): 2^(h-256) and 2^(u-h-256) are normal
     * for n in [-151, 129]; outside it the masks below decide. */
    tgc_vu u = (tgc_vu)t - (tgc_vu)tgc_vf_splat(TGC_VM_SHIFTER) + 512u, h = u >> 1;
    tgc_vf s1 = (tgc_vf)((h - 129u) << 23), s2 = (tgc_vf)((u - h - 129u) << 23);
    tgc_vf y = e * s1 * s2;
    y = tgc_vsel(x < -104.0f, tgc_vf_splat(0.0f), y);
    return tgc_vsel(x > 89.0f, tgc_vf_splat(INFINITY), y);
}

/* exp(x) - 1, accurate near 0. Same reduction as tgc_vexp, on x clamped
 * to [-20, 89] (expm1 rounds to -1 below -17.4; above 88.73 the result
 * overflows on its own): n = round(x / ln2), r = x - n ln2,
 * p = expm1(r) = r + r^2 P(r) (Cephes's exp polynomial), then
 *     expm1(x) = 2^n p + (2^n - 1) = 2 (s p + (s - 1/2)),  s = 2^(n-1),
 * which for n = 0 is p itself and for n = 128 still has s normal.
 * Max error 1.57 ulp (bench_ulp, all 2^32 inputs).
 * Special values: NaN -> NaN, +-0 -> +-0, -inf -> -1, +inf and
 * x > 88.7228 -> +inf, subnormal x -> x. */
static inline tgc_vf tgc_vexpm1(tgc_vf x) {
    tgc_vf xc = tgc_vm_clamp(x, -20.0f, 89.0f);
    tgc_vf t = xc * TGC_VM_LOG2E + TGC_VM_SHIFTER;
    tgc_vf n = t - TGC_VM_SHIFTER;
    tgc_vf r = xc - n * TGC_VM_LN2_HI;
    r = r - n * TGC_VM_LN2_LO;
    tgc_vf p = tgc_vm_exp_poly(r) * (r * r) + r;
    /* s = 2^(n-1), n in [-29, 128]: exponent field n + 126. */
    tgc_vf s = (tgc_vf)(((tgc_vu)t - (tgc_vu)tgc_vf_splat(TGC_VM_SHIFTER) + 126u) << 23);
    tgc_vf y = (s * p + (s - 0.5f)) * 2.0f;
    y = tgc_vsel(n == 0.0f, p, y);    /* s p would lose a subnormal p's last bits */
    return tgc_vsel(x == 0.0f, x, y); /* r = -0 - (-0) would give +0 for -0 */
}

/* ---- log, log1p ------------------------------------------------------------ */

/* Natural log. x = 2^k m, m in [sqrt(1/2), sqrt(2)) (exponent bits, musl's
 * offset trick), log(m) = f - f^2/2 + f^3 P(f), f = m - 1, Cephes logf's
 * degree-8 P, plus k ln2 in two parts (Cody-Waite). Subnormal x is scaled
 * by 2^23 first. Max error 0.82 ulp (bench_ulp, every 16th input).
 * Special values: NaN -> NaN, x < 0 (-inf too) -> NaN, +-0 -> -inf,
 * +inf -> +inf, 1 -> +0. */
static inline tgc_vf tgc_vlog(tgc_vf x) {
    tgc_vi sub = x < 1.17549435e-38f; /* FLT_MIN; also 0, negatives, -inf */
    tgc_vf xs = tgc_vsel(sub, x * 8388608.0f, x);
    tgc_vf y = tgc_vm_log_core((tgc_vu)xs, tgc_vf_splat(0.0f), sub & -23);
    tgc_vf special = tgc_vsel(x == 0.0f, tgc_vf_splat(-INFINITY), tgc_vsel(x < 0.0f, tgc_vf_splat(NAN), x));
    return tgc_vsel((x > 0.0f) & (x < INFINITY), y, special);
}

/* log(1 + x), accurate near 0. u = 1 + x rounded, c = (x - (u - 1)) / u
 * the part of x that the rounding lost (exact for u < 2^24), then
 * log1p(x) = log(u) + c with tgc_vlog's core (Goldberg's correction; as in
 * FreeBSD's log1pf). For x in (-1, -0.5] u is exact and c = 0.
 * Max error 0.82 ulp (bench_ulp, every 16th input).
 * Special values: NaN -> NaN, x < -1 (-inf too) -> NaN, -1 -> -inf,
 * +inf -> +inf, +-0 -> +-0, subnormal x -> x. */
static inline tgc_vf tgc_vlog1p(tgc_vf x) {
    tgc_vf u = x + 1.0f;
    tgc_vf c = (x - (u - 1.0f)) / u;
    tgc_vf y = tgc_vm_log_core((tgc_vu)u, c, (tgc_vi){0});
    tgc_vf special = tgc_vsel(x == -1.0f, tgc_vf_splat(-INFINITY), tgc_vsel(x < -1.0f, tgc_vf_splat(NAN), x));
    return tgc_vsel((x > -1.0f) & (x < INFINITY) & (x != 0.0f), y, special);
}

/* ---- tanh, sigmoid, softplus ------------------------------------------------- */

/* tanh(x) = sign(x) em / (em + 2), em = expm1(2 min(|x|, 9.5)) (tgc_vexpm1).
 * Odd by construction; near 0 em keeps its relative accuracy, and for
 * large |x| the error of em is divided by em (1 - 2/(em + 2)), so the
 * result is close to correctly rounded everywhere. tanh rounds to 1 above
 * 9.01, hence the clamp (which keeps em finite). The 13/6 rational form
 * of Eigen's ptanh_float / MLAS is not used: it is accurate in absolute,
 * not relative, terms, and Eigen's clamp at +-7.905 alone gives 1 where
 * tanh is 4.6 ulp below it.
 * Max error 2.42 ulp (bench_ulp, all 2^32 inputs).
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-1 (exactly +-1 for
 * |x| >= 9.02), subnormal x -> x. */
static inline tgc_vf tgc_vtanh(tgc_vf x) {
    tgc_vf a = tgc_vabs(x);
    a = tgc_vsel(a > 9.5f, tgc_vf_splat(9.5f), a);
    tgc_vf em = tgc_vexpm1(a + a);
    return tgc_vcopysign(em / (em + 2.0f), x);
}

/* The logistic function 1 / (1 + e^-x). With e = exp(-|x|) (tgc_vexp):
 * 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, one division, so the
 * small results for x < 0 keep their relative accuracy down to the
 * subnormals (MLAS's rational form is accurate only in absolute terms).
 * Max error 2.40 ulp (bench_ulp, every 16th input).
 * Special values: NaN -> NaN, -inf -> +0, +inf -> 1, +-0 -> 0.5, results
 * subnormal for x in (-103.98, -87.34), +0 below. */
static inline tgc_vf tgc_vsigmoid(tgc_vf x) {
    tgc_vf e = tgc_vexp(-tgc_vabs(x));
    return tgc_vsel(x < 0.0f, e, tgc_vf_splat(1.0f)) / (e + 1.0f);
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log1p(exp(-|x|)), which never
 * overflows: large x gives x (the log1p term drops below x's half ulp),
 * very negative x gives log1p(e^x) = e^x, subnormal where e^x is.
 * tgc_vexp and tgc_vlog1p. Max error 1.70 ulp (bench_ulp, every 16th
 * input).
 * Special values: NaN -> NaN, +inf -> +inf, -inf -> +0, +-0 -> ln 2. */
static inline tgc_vf tgc_vsoftplus(tgc_vf x) {
    tgc_vf m = tgc_vsel(x > 0.0f, x, tgc_vf_splat(0.0f));
    return m + tgc_vlog1p(tgc_vexp(-tgc_vabs(x)));
}

/* ---- erf -------------------------------------------------------------------- */

/* erf(x), in two pieces computed both and blended by |x| (the form and
 * coefficients of Norbert Juffa's erff, stackoverflow.com/q/35148198, as
 * MLAS's erf.cpp uses them):
 *     |x| <= 0.921875:  x + x P(x^2), P of degree 5;
 *     above:            sign(x) (1 - exp(-(t + t Q(t)))), t = min(|x|, 3.925),
 *                       Q of degree 6, exp by tgc_vexp.
 * Max error 1.15 ulp (bench_ulp, every 16th input).
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-1 (exactly +-1 for
 * |x| >= 3.92), subnormal x -> x + x P(0), within 1 ulp. */
static inline tgc_vf tgc_verf(tgc_vf x) {
    tgc_vf t = tgc_vabs(x);
    tgc_vf s = x * x;
    tgc_vf p = tgc_vf_splat(-5.99104969e-4f);
    p = p * s + 4.99339588e-3f;
    p = p * s - 2.67667342e-2f;
    p = p * s + 1.12818025e-1f;
    p = p * s - 3.76124859e-1f;
    p = p * s + 1.28379151e-1f;
    tgc_vf small = p * x + x;
    tgc_vf tc = tgc_vsel(t > 3.925f, tgc_vf_splat(3.925f), t);
    tgc_vf q = tgc_vf_splat(1.72948930e-5f);
    q = q * tc - 3.83208680e-4f;
    q = q * tc + 3.88393435e-3f;
    q = q * tc - 2.42545605e-2f;
    q = q * tc + 1.06777847e-1f;
    q = q * tc + 6.34846687e-1f;
    q = q * tc + 1.28717512e-1f;
    q = q * tc + tc;
    tgc_vf big = tgc_vcopysign(1.0f - tgc_vexp(-q), x);
    return tgc_vsel(t > 0.921875f, big, small);
}

/* ---- SLEEF 3.5: trigonometric, inverse, hyperbolic, pow ---------------------- */
/* Chosen per function by bench_ulp (every 64th input): u35 where it
 * measured clearly within 3.5 ulp (it is 1.5-3x faster than u10), else u10
 * (tan, and the only variant SLEEF has for asinh, acosh, atanh, pow).
 * sinh and cosh are own code: SLEEF's overflow early. Special values are
 * C99's (SLEEF's tests check them against MPFR); sin(-0) = -0, asin(1) =
 * pi/2, acosh(1) = +0, atanh(+-1) = +-inf, pow as C99 powf. Max errors
 * measured here are in each comment. */

/* sin(x): SLEEF u35. Max 2.42 ulp (bench_ulp, every 64th input). */
static inline tgc_vf tgc_vsin(tgc_vf x) { return TGC_VM_SLEEF(sin, u35, x); }

/* cos(x): SLEEF u35. Max 2.41 ulp (every 64th input). */
static inline tgc_vf tgc_vcos(tgc_vf x) { return TGC_VM_SLEEF(cos, u35, x); }

/* tan(x): SLEEF u10 (u35 measured 3.33 ulp on every 64th input, too
 * close to the 3.5 bound to trust over all of them). Max 0.94 ulp
 * (every 64th input). */
static inline tgc_vf tgc_vtan(tgc_vf x) { return TGC_VM_SLEEF(tan, u10, x); }

/* asin(x): SLEEF u35; |x| > 1 -> NaN. Max 2.39 ulp (every 64th input). */
static inline tgc_vf tgc_vasin(tgc_vf x) { return TGC_VM_SLEEF(asin, u35, x); }

/* acos(x): SLEEF u35; |x| > 1 -> NaN. Max 1.26 ulp (every 64th input). */
static inline tgc_vf tgc_vacos(tgc_vf x) { return TGC_VM_SLEEF(acos, u35, x); }

/* atan(x): SLEEF u35; +-inf -> +-pi/2. Max 2.48 ulp (every 64th input). */
static inline tgc_vf tgc_vatan(tgc_vf x) { return TGC_VM_SLEEF(atan, u35, x); }

/* sinh(x), own code (SLEEF's sinhf, u10 and u35, overflows early: from
 * |x| = 88.0 on, although sinh(x) < FLT_MAX up to 89.415). With
 * a = |x| and h = a (a <= 88) or a/2 (above; exact), em = expm1(h)
 * (tgc_vexpm1):
 *     sinh(a) = (em + em / (em + 1)) / 2         for a <= 88,
 *     sinh(a) = ((em + 1) / 2) (em + 1)          above (e^(a/2) squared),
 * then the sign of x. Max 2.42 ulp (bench_ulp, all 2^32 inputs).
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-inf, overflow to
 * +-inf beyond +-89.4159, subnormal x -> x. */
static inline tgc_vf tgc_vsinh(tgc_vf x) {
    tgc_vf a = tgc_vabs(x);
    tgc_vi big = a > 88.0f;
    tgc_vf em = tgc_vexpm1(tgc_vsel(big, a * 0.5f, a));
    tgc_vf e = em + 1.0f;
    tgc_vf y = tgc_vsel(big, (e * 0.5f) * e, (em + em / e) * 0.5f);
    return tgc_vcopysign(y, x);
}

/* cosh(x), own code (SLEEF's overflows early, as for sinh): e = exp(h),
 * h = |x| (<= 88) or |x|/2 (above), tgc_vexp:
 *     cosh(x) = e/2 + (1/2)/e  for |x| <= 88,   (e/2) e  above.
 * Max 2.37 ulp (bench_ulp, every 16th input).
 * Special values: NaN -> NaN, +-0 -> 1, +-inf -> +inf, overflow to +inf
 * beyond +-89.4159. */
static inline tgc_vf tgc_vcosh(tgc_vf x) {
    tgc_vf a = tgc_vabs(x);
    tgc_vi big = a > 88.0f;
    tgc_vf e = tgc_vexp(tgc_vsel(big, a * 0.5f, a));
    return tgc_vsel(big, (e * 0.5f) * e, e * 0.5f + 0.5f / e);
}

/* asinh(x): SLEEF u10, which gives inf from |x| = 2^64 on. For |x| > 2^60
 * asinh(x) = log(2|x|) to far below an ulp, so there
 *     asinh(x) = asinh(x 2^-k) + sign(x) k ln2,
 * k = 32 up to 2^90 and 76 above, which keeps x 2^-k in (2^14, 2^58),
 * where the same holds and SLEEF is finite. Max 1.11 ulp (every 16th
 * input).
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-inf. */
static inline tgc_vf tgc_vasinh(tgc_vf x) {
    tgc_vf a = tgc_vabs(x);
    tgc_vi big = a > 0x1p60f, huge = a > 0x1p90f;
    tgc_vf scale = tgc_vsel(huge, tgc_vf_splat(0x1p-76f), tgc_vsel(big, tgc_vf_splat(0x1p-32f), tgc_vf_splat(1.0f)));
    tgc_vf add = tgc_vsel(huge, tgc_vf_splat(52.6791857f), tgc_vsel(big, tgc_vf_splat(22.1807098f), tgc_vf_splat(0.0f)));
    tgc_vf y = TGC_VM_SLEEF(asinh, u10, x * scale);
    return tgc_vsel(big, y + tgc_vcopysign(add, x), y);
}

/* acosh(x): SLEEF u10, and acosh(x 2^-k) + k ln2 above 2^60 (as
 * tgc_vasinh). Max 1.09 ulp (every 16th input).
 * Special values: NaN -> NaN, x < 1 (-inf too) -> NaN, 1 -> +0,
 * +inf -> +inf. */
static inline tgc_vf tgc_vacosh(tgc_vf x) {
    tgc_vi big = x > 0x1p60f, huge = x > 0x1p90f;
    tgc_vf scale = tgc_vsel(huge, tgc_vf_splat(0x1p-76f), tgc_vsel(big, tgc_vf_splat(0x1p-32f), tgc_vf_splat(1.0f)));
    tgc_vf add = tgc_vsel(huge, tgc_vf_splat(52.6791857f), tgc_vsel(big, tgc_vf_splat(22.1807098f), tgc_vf_splat(0.0f)));
    tgc_vf y = TGC_VM_SLEEF(acosh, u10, x * scale);
    return tgc_vsel(big, y + add, y);
}

/* atanh(x): SLEEF u10; |x| > 1 -> NaN, +-1 -> +-inf. Max 0.51 ulp (every
 * 64th input). */
static inline tgc_vf tgc_vatanh(tgc_vf x) { return TGC_VM_SLEEF(atanh, u10, x); }

/* pow(x, y): SLEEF u10, C99 powf's special cases (pow(x, +-0) = 1 for any
 * x, pow(1, y) = 1 for any y, pow(x < 0, non-integer y) = NaN, ...).
 * Max 0.76 ulp on 2^20 pairs of bench_ulp's 2^26-pair grid. */
static inline tgc_vf tgc_vpow(tgc_vf x, tgc_vf y) { return TGC_VM_SLEEF2(pow, u10, x, y); }

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#endif

#endif
