/* Float32 vector math for the cpu elementwise kernels: one tgc_vf in, one
 * out, every lane independent. Private to the cpu device.
 *
 * Written once over the width of devices/cpu/simd.h (4, 8 or 16 lanes,
 * following the translation unit's -m flags) with gcc/clang vector
 * extensions only: + - * /, comparisons giving lane masks, tgc_vsel, bit
 * casts. No data-dependent branches and no tables, so a loop over them runs
 * at the vector width whatever the data. Every polynomial step is
 * tgc_vmuladd: a fused multiply-add on the avx2 and avx512 builds, a
 * multiply and an add on sse2 (the project builds in ISO C mode,
 * -ffp-contract=off, so nothing else is contracted). A function so gives
 * the same bits at every width of one ISA family, and slightly different
 * bits with and without FMA; each comment gives the maximum error of both
 * (AVX2: all 2^32 inputs; SSE2: every 16th). maxps/minps/blendvps are
 * asked for directly where gcc would emit longer sequences.
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
 * tanh, sigmoid, erf, softplus) and for sinh, cosh, asinh, acosh: short
 * minimax polynomials (fitted in double, coefficients rounded to float,
 * then measured), 2-10x faster than SLEEF's 1-ulp functions. SLEEF 3.5
 * (Debian libsleef-dev; link with -lsleef) for the trigonometric and
 * inverse trigonometric functions, atanh and pow, at the
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

/* Lane i: lo where x < lo, else x; NaN stays NaN (one maxps: it returns
 * its second operand when either is NaN). */
static inline tgc_vf tgc_vm_max(tgc_vf x, float lo) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_max_ps((__m512)tgc_vf_splat(lo), (__m512)x);
#elif TGC_VBYTES == 32
    return (tgc_vf)_mm256_max_ps((__m256)tgc_vf_splat(lo), (__m256)x);
#else
    return (tgc_vf)_mm_max_ps((__m128)tgc_vf_splat(lo), (__m128)x);
#endif
}

/* Lane i: hi where x > hi, else x; NaN stays NaN. */
static inline tgc_vf tgc_vm_min(tgc_vf x, float hi) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_min_ps((__m512)tgc_vf_splat(hi), (__m512)x);
#elif TGC_VBYTES == 32
    return (tgc_vf)_mm256_min_ps((__m256)tgc_vf_splat(hi), (__m256)x);
#else
    return (tgc_vf)_mm_min_ps((__m128)tgc_vf_splat(hi), (__m128)x);
#endif
}

/* Lane i: lo where x < lo, hi where x > hi, else x (NaN stays NaN). */
static inline tgc_vf tgc_vm_clamp(tgc_vf x, float lo, float hi) { return tgc_vm_min(tgc_vm_max(x, lo), hi); }

/* Lane i: a where m[i] is -1, b where it is 0 (tgc_vsel; one blendvps on
 * avx2, where gcc would otherwise emit and, andn, or). */
static inline tgc_vf tgc_vm_sel(tgc_vi m, tgc_vf a, tgc_vf b) {
#if TGC_VBYTES == 32
    return (tgc_vf)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)m);
#else
    return tgc_vsel(m, a, b);
#endif
}

/* Lane i: a where s[i]'s sign bit is set (s negative, -0, -NaN), else b. */
static inline tgc_vf tgc_vm_sel_sign(tgc_vf s, tgc_vf a, tgc_vf b) {
#if TGC_VBYTES == 32
    return (tgc_vf)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)s);
#else
    return tgc_vsel((tgc_vi)s >> 31, a, b);
#endif
}

/* -|x| (sets the sign bit; NaN stays NaN). */
static inline tgc_vf tgc_vm_nabs(tgc_vf x) { return (tgc_vf)((tgc_vu)x | 0x80000000u); }

/* c as a vector (a constant operand of tgc_vmuladd). */
#define TGC_VM_K(c) tgc_vf_splat(c)

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

/* 1.5 * 2^23: x + it leaves round(x) in the low mantissa bits (|x| < 2^22).
 * TGC_VM_SHIFTER + B leaves round(x) + B there, so that (bits << 23) is the
 * float 2^(round(x) + B - 127) while round(x) + B is in [1, 254]. */
#define TGC_VM_SHIFTER 12582912.0f
#define TGC_VM_LOG2E 1.44269504088896341f
/* ln 2 = TGC_VM_LN2_HI + TGC_VM_LN2_LO (Cody and Waite): the high part has
 * 15 significant bits, so n * it is exact for |n| < 2^9 without FMA too,
 * and it is below ln 2, so x - n ln2 keeps x's -0 (the products are -0). */
#define TGC_VM_LN2_HI 0x1.62e4p-1f
#define TGC_VM_LN2_LO 0x1.7f7d1cp-20f

/* The Cody-Waite reduction shared by the exp family: for z with
 * |z log2e| < 2^21, *t = z log2e + shifter rounded to an integer n (plus
 * the shifter's bias B in t's low bits), and the return value is
 * r = z - n ln2, |r| <= ln2/2 (a little more without FMA). */
static inline tgc_vf tgc_vm_exp_reduce(tgc_vf z, float shifter, tgc_vf *t) {
    *t = tgc_vmuladd(z, TGC_VM_K(TGC_VM_LOG2E), TGC_VM_K(shifter));
    tgc_vf n = *t - shifter;
    tgc_vf r = tgc_vmuladd(n, TGC_VM_K(-TGC_VM_LN2_HI), z);
    return tgc_vmuladd(n, TGC_VM_K(-TGC_VM_LN2_LO), r);
}

/* exp(r) - 1 = r + r^2 (c2 + c3 r + ... + c6 r^4), |r| <= ln2/2: our
 * minimax fit, relative error 4e-9 of exp(r) (degree 5 measured 3.35 ulp
 * in tgc_vsigmoid: too close to the bound). */
static inline tgc_vf tgc_vm_exp_poly(tgc_vf r) {
    tgc_vf q = tgc_vmuladd(TGC_VM_K(0x1.6a244ap-10f), r, TGC_VM_K(0x1.1239d4p-7f));
    q = tgc_vmuladd(q, r, TGC_VM_K(0x1.5558f2p-5f));
    q = tgc_vmuladd(q, r, TGC_VM_K(0x1.555492p-3f));
    q = tgc_vmuladd(q, r, TGC_VM_K(0x1.fffffcp-2f));
    return tgc_vmuladd(q, r * r, r);
}

/* expm1(r) = r + r^2 (c2 + ... + c6 r^4), |r| <= ln2/2, relative to
 * expm1(r) (so exact-ish near 0): our minimax fit, 1.7e-8 relative. */
static inline tgc_vf tgc_vm_expm1_poly(tgc_vf r) {
    tgc_vf q = tgc_vmuladd(TGC_VM_K(0x1.6bec04p-10f), r, TGC_VM_K(0x1.122768p-7f));
    q = tgc_vmuladd(q, r, TGC_VM_K(0x1.555674p-5f));
    q = tgc_vmuladd(q, r, TGC_VM_K(0x1.5554b0p-3f));
    q = tgc_vmuladd(q, r, TGC_VM_K(0x1.fffffep-2f));
    return tgc_vmuladd(q, r * r, r);
}

/* exp(z) for z in [-104, 0] (clamped by the caller; NaN passes), results
 * subnormal below -87.34 and +0 near -104: 2^(n+64) from t's bits (shifter
 * bias 191), times 2^-64 at the end, one rounding into the subnormals. */
static inline tgc_vf tgc_vm_exp_neg(tgc_vf z) {
    tgc_vf t, r = tgc_vm_exp_reduce(z, TGC_VM_SHIFTER + 191.0f, &t);
    tgc_vf s = (tgc_vf)((tgc_vu)t << 23);
    return tgc_vmuladd(tgc_vm_exp_poly(r), s, s) * 0x1p-64f;
}

/* log(1 + f) = f + f^2 (c2 + ... + c9 f^7), f in [-1/3, 1/3]: our minimax
 * fit, relative error 3.2e-8 of log1p(f). */
static inline tgc_vf tgc_vm_log1p_poly(tgc_vf f, tgc_vf f2) {
    tgc_vf p = tgc_vmuladd(TGC_VM_K(0x1.1f4206p-3f), f, TGC_VM_K(-0x1.3b2872p-3f));
    p = tgc_vmuladd(p, f, TGC_VM_K(0x1.1ea26ep-3f));
    p = tgc_vmuladd(p, f, TGC_VM_K(-0x1.5032e2p-3f));
    p = tgc_vmuladd(p, f, TGC_VM_K(0x1.99d426p-3f));
    p = tgc_vmuladd(p, f, TGC_VM_K(-0x1.00148p-2f));
    p = tgc_vmuladd(p, f, TGC_VM_K(0x1.5554fap-2f));
    p = tgc_vmuladd(p, f, TGC_VM_K(-0x1.ffffd6p-2f));
    return p * f2;
}

/* log(u) + c for u positive, normal and finite (bits ub), c a small
 * correction (or 0): u = 2^k m, m in [2/3, 4/3) from the bits by one
 * integer subtraction (ARM optimized-routines' v_logf split), f = m - 1
 * exact, log u = k ln2_hi + (f + (f^2 P(f) + k ln2_lo + c)). kadd is
 * added to k (-23 where u was scaled up by 2^23). */
static inline tgc_vf tgc_vm_log_core(tgc_vu ub, tgc_vf c, tgc_vf kadd) {
    ub -= 0x3f2aaaabu;
    tgc_vf kf = tgc_vi_to_vf((tgc_vi)ub >> 23) + kadd;
    tgc_vf f = (tgc_vf)((ub & 0x007fffffu) + 0x3f2aaaabu) - 1.0f;
    tgc_vf tail = tgc_vm_log1p_poly(f, f * f);
    tail = tail + tgc_vmuladd(kf, TGC_VM_K(TGC_VM_LN2_LO), c);
    return tgc_vmuladd(kf, TGC_VM_K(TGC_VM_LN2_HI), f + tail);
}

/* ---- exp, expm1 ------------------------------------------------------------ */

/* exp(x). x clamped to [-104, 89] (NaN passes), n = round(x log2e) by the
 * shifter trick, r = x - n ln2 in two parts (Cody-Waite), exp(r) = 1 + p,
 * p = r + r^2 Q(r) with our degree-5 minimax fit, times 2^n as two powers
 * of two built with shifts from t's bits (shifter bias 254: 2^floor(v/2)
 * and 2^ceil(v/2), v = n + 254), so that subnormal results round in the
 * last multiply: y = fma(p, s1, s1) * s2. Same scheme as ARM
 * optimized-routines' v_expf (fma(p, s, s)), our own polynomial.
 * Max error 1.01 ulp with FMA (AVX2, bench_ulp, all 2^32 inputs), 0.96
 * without (SSE2, every 16th input).
 * Special values: NaN -> NaN, -inf and x < -103.98 -> +0 (subnormal
 * results down to 2^-149 above that), +inf and x > 88.7228 -> +inf,
 * +-0 -> 1. */
static inline tgc_vf tgc_vexp(tgc_vf x) {
    tgc_vf t, r = tgc_vm_exp_reduce(tgc_vm_clamp(x, -104.0f, 89.0f), TGC_VM_SHIFTER + 254.0f, &t);
    tgc_vu a = (tgc_vu)t << 23, b = ((tgc_vu)t >> 1) << 23;
    tgc_vf s1 = (tgc_vf)b, s2 = (tgc_vf)(a - b);
    return tgc_vmuladd(tgc_vm_exp_poly(r), s1, s1) * s2;
}

/* exp(x) - 1, accurate near 0. x clamped to [-20, 89] (expm1 rounds to -1
 * below -17.4; above 88.73 the result overflows on its own), n and r as in
 * tgc_vexp, p = expm1(r) (our degree-6 fit, relative), s = 2^(n-1):
 *     expm1(x) = 2^n p + (2^n - 1) = 2 fma(s, p, s - 1/2)
 * (s - 1/2 exact for n >= -24; n = 128 still has s normal). Below 2^-25
 * in magnitude expm1(x) rounds to x, which that select also keeps exact
 * for -0 and the subnormals.
 * Max error 1.58 ulp with FMA (AVX2, every 16th input), 1.69 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, +-0 -> +-0, -inf -> -1, +inf and
 * x > 88.7228 -> +inf, subnormal x -> x. */
static inline tgc_vf tgc_vexpm1(tgc_vf x) {
    tgc_vf t, r = tgc_vm_exp_reduce(tgc_vm_clamp(x, -20.0f, 89.0f), TGC_VM_SHIFTER + 126.0f, &t);
    tgc_vf s = (tgc_vf)((tgc_vu)t << 23);
    tgc_vf y = tgc_vmuladd(s, tgc_vm_expm1_poly(r), s - 0.5f) * 2.0f;
    return tgc_vm_sel(tgc_vabs(x) < 0x1p-25f, x, y);
}

/* ---- log, log1p ------------------------------------------------------------ */

/* Natural log. x = 2^k m, m in [2/3, 4/3) (ARM's v_logf split),
 * log(m) = f + f^2 P(f), f = m - 1, our degree-9 minimax fit, plus k ln2
 * in two parts (Cody-Waite). Subnormal x is scaled by 2^23 first.
 * Max error 1.15 ulp with FMA (AVX2, every 16th input), 1.17 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, x < 0 (-inf too) -> NaN, +-0 -> -inf,
 * +inf -> +inf, 1 -> +0. */
static inline tgc_vf tgc_vlog(tgc_vf x) {
    tgc_vi sub = x < 1.17549435e-38f; /* FLT_MIN; also 0, negatives, -inf */
    tgc_vf xs = tgc_vm_sel(sub, x * 8388608.0f, x);
    tgc_vf y = tgc_vm_log_core((tgc_vu)xs, tgc_vf_splat(0.0f), (tgc_vf)(sub & (tgc_vi)tgc_vf_splat(-23.0f)));
    y = tgc_vm_sel(x < INFINITY, y, x);               /* +inf, NaN */
    y = tgc_vm_sel_sign(x, tgc_vf_splat(NAN), y);      /* x < 0 */
    return tgc_vm_sel(x == 0.0f, tgc_vf_splat(-INFINITY), y);
}

/* log(1 + x), accurate near 0. u = 1 + x rounded, c = (x - (u - 1)) / u
 * the part of x that the rounding lost (exact for u < 2^24), then
 * log1p(x) = log(u) + c with tgc_vlog's core (Goldberg's correction; as in
 * FreeBSD's log1pf). For x in (-1, -0.5] u is exact and c = 0.
 * Max error 1.15 ulp with FMA (AVX2, every 16th input), 1.17 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, x < -1 (-inf too) -> NaN, -1 -> -inf,
 * +inf -> +inf, +-0 -> +-0, subnormal x -> x. */
static inline tgc_vf tgc_vlog1p(tgc_vf x) {
    tgc_vf u = x + 1.0f;
    tgc_vf c = (x - (u - 1.0f)) / u;
    tgc_vf y = tgc_vm_log_core((tgc_vu)u, c, tgc_vf_splat(0.0f));
    y = tgc_vm_sel(x < INFINITY, y, x); /* +inf, NaN */
    y = tgc_vm_sel(x == 0.0f, x, y);
    y = tgc_vm_sel(x < -1.0f, tgc_vf_splat(NAN), y);
    return tgc_vm_sel(x == -1.0f, tgc_vf_splat(-INFINITY), y);
}

/* ---- tanh, sigmoid, softplus ------------------------------------------------- */

/* tanh(x) = sign(x) |em / (em + 2)|, em = expm1(-2 min(|x|, 9.5)) in
 * (-1, 0]: tgc_vexpm1's reduction and polynomial, em = fma(s, p, s - 1),
 * s = 2^n, n in [-28, 0] (s - 1 exact for n >= -24). One exp-like
 * evaluation and one division; near 0 em keeps its relative accuracy, and
 * for large |x| the error of em is divided by em + 2. tanh rounds to 1
 * above 9.01, hence the clamp. The 13/6 rational form of Eigen's
 * ptanh_float / MLAS is not used: it is accurate in absolute, not
 * relative, terms, and Eigen's clamp at +-7.905 alone gives 1 where tanh
 * is 4.6 ulp below it.
 * Max error 2.50 ulp with FMA (AVX2, all 2^32 inputs), 2.49 without
 * (SSE2, every 16th). (rcp + one Newton step instead of the division:
 * 3.8 ulp and no faster here.)
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-1 (exactly +-1 for
 * |x| >= 9.02), subnormal x -> x. */
static inline tgc_vf tgc_vtanh(tgc_vf x) {
    tgc_vf z = tgc_vm_max(tgc_vm_nabs(x), -9.5f);
    z = z + z;
    tgc_vf t, r = tgc_vm_exp_reduce(z, TGC_VM_SHIFTER + 127.0f, &t);
    tgc_vf s = (tgc_vf)((tgc_vu)t << 23);
    tgc_vf em = tgc_vmuladd(s, tgc_vm_expm1_poly(r), s - 1.0f);
    return tgc_vcopysign(em / (em + 2.0f), x);
}

/* The logistic function 1 / (1 + e^-x). With e = exp(-|x|) (-|x| clamped
 * at -104; subnormal e exact to its last rounding): 1 / (1 + e) for
 * x >= 0, e / (1 + e) for x < 0, one division, so the small results for
 * x < 0 keep their relative accuracy down to the subnormals (MLAS's
 * rational form is accurate only in absolute terms).
 * Max error 2.40 ulp with FMA (AVX2, all 2^32 inputs), 2.40 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, -inf -> +0, +inf -> 1, +-0 -> 0.5, results
 * subnormal for x in (-103.98, -87.34), +0 below. */
static inline tgc_vf tgc_vsigmoid(tgc_vf x) {
    tgc_vf e = tgc_vm_exp_neg(tgc_vm_max(tgc_vm_nabs(x), -104.0f));
    return tgc_vm_sel_sign(x, e, tgc_vf_splat(1.0f)) / (e + 1.0f);
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e), e = exp(-|x|) in
 * (0, 1] (tgc_vm_exp_neg), which never overflows. log1p(e) without
 * forming 1 + e: for e <= 1/3 it is e + e^2 P(e) (tgc_vlog's polynomial,
 * f = e exactly), above it ln2 + log1p(f), f = (e - 1)/2 in [-1/3, 0]
 * (exact). Large x gives x (the log1p term drops below x's half ulp), very
 * negative x gives e^x, subnormal where e^x is.
 * Max error 2.07 ulp with FMA (AVX2, every 16th input), 2.04 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, +inf -> +inf, -inf -> +0, +-0 -> ln 2. */
static inline tgc_vf tgc_vsoftplus(tgc_vf x) {
    tgc_vf e = tgc_vm_exp_neg(tgc_vm_max(tgc_vm_nabs(x), -104.0f));
    tgc_vi big = e > 0.333333343f;
    tgc_vf f = tgc_vm_sel(big, tgc_vmuladd(e, TGC_VM_K(0.5f), TGC_VM_K(-0.5f)), e);
    tgc_vf l = tgc_vmuladd(tgc_vm_log1p_poly(f, f * f), TGC_VM_K(1.0f), f);
    l = l + (tgc_vf)(big & (tgc_vi)tgc_vf_splat(0.693147182f));
    return tgc_vm_max(x, 0.0f) + l;
}

/* ---- erf -------------------------------------------------------------------- */

/* erf(x), in two pieces computed both and blended by |x| (the form and
 * coefficients of Norbert Juffa's erff, stackoverflow.com/q/35148198, as
 * MLAS's erf.cpp uses them):
 *     |x| <= 0.921875:  x + x P(x^2), P of degree 5;
 *     above:            sign(x) (1 - exp(-(t + t Q(t)))), t = min(|x|, 3.925),
 *                       Q of degree 6, evaluated at -t (its odd
 *                       coefficients negated) to give -(t + t Q(t)) directly;
 *                       1 - exp(-q) = fma(-s, p, 1 - s) with s = 2^n,
 *                       exp(-q) = s (1 + p) (tgc_vexp's reduction; no
 *                       subnormals: q <= 16.3).
 * Max error 1.00 ulp with FMA (AVX2, all 2^32 inputs), 1.12 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-1 (exactly +-1 for
 * |x| >= 3.92), subnormal x -> x + x P(0), within 1 ulp. */
static inline tgc_vf tgc_verf(tgc_vf x) {
    tgc_vf s2 = x * x;
    tgc_vf p = tgc_vmuladd(TGC_VM_K(-5.99104969e-4f), s2, TGC_VM_K(4.99339588e-3f));
    p = tgc_vmuladd(p, s2, TGC_VM_K(-2.67667342e-2f));
    p = tgc_vmuladd(p, s2, TGC_VM_K(1.12818025e-1f));
    p = tgc_vmuladd(p, s2, TGC_VM_K(-3.76124859e-1f));
    p = tgc_vmuladd(p, s2, TGC_VM_K(1.28379151e-1f));
    tgc_vf small = tgc_vmuladd(p, x, x);
    tgc_vf nt = tgc_vm_max(tgc_vm_nabs(x), -3.925f); /* -t */
    tgc_vf q = tgc_vmuladd(TGC_VM_K(1.72948930e-5f), nt, TGC_VM_K(3.83208680e-4f));
    q = tgc_vmuladd(q, nt, TGC_VM_K(3.88393435e-3f));
    q = tgc_vmuladd(q, nt, TGC_VM_K(2.42545605e-2f));
    q = tgc_vmuladd(q, nt, TGC_VM_K(1.06777847e-1f));
    q = tgc_vmuladd(q, nt, TGC_VM_K(-6.34846687e-1f));
    q = tgc_vmuladd(q, nt, TGC_VM_K(1.28717512e-1f));
    q = tgc_vmuladd(q, nt, nt); /* -(t + t Q(t)) */
    tgc_vf tt, r = tgc_vm_exp_reduce(q, TGC_VM_SHIFTER + 127.0f, &tt);
    tgc_vf s = (tgc_vf)((tgc_vu)tt << 23);
    tgc_vf big = tgc_vmuladd(-s, tgc_vm_exp_poly(r), 1.0f - s);
    big = (tgc_vf)((tgc_vu)big | ((tgc_vu)x & 0x80000000u));
    return tgc_vm_sel(nt < -0.921875f, big, small);
}

/* ---- SLEEF 3.5: trigonometric, inverse, hyperbolic, pow ---------------------- */
/* Chosen per function by bench_ulp (every 64th input): u35 where it
 * measured clearly within 3.5 ulp (it is 1.5-3x faster than u10), else u10
 * (tan, and the only variant SLEEF has for asinh, acosh, atanh, pow).
 * sinh and cosh are own code: SLEEF's overflow early. Special values are
 * C99's (SLEEF's tests check them against MPFR); sin(-0) = -0, asin(1) =
 * pi/2, acosh(1) = +0, atanh(+-1) = +-inf, pow as C99 powf. Max errors
 * measured here are in each comment. */

/* True when some lane of m is set. */
static inline int tgc_vm_any(tgc_vi m) {
    int32_t lanes[TGC_VLANES], acc = 0;
    memcpy(lanes, &m, sizeof lanes);
    for (int i = 0; i < TGC_VLANES; i++) acc |= lanes[i];
    return acc != 0;
}

/* SLEEF's sin, cos and tan choose their argument reduction for the whole
 * vector (sleefsimdsp.c): Cody-Waite in three constants when every lane's
 * |x| is below 125, in four below 39000 (where a function has that tier),
 * else Payne-Hanek, which NaN and infinities take too; the same lane then
 * rounds an ulp apart beside different neighbours. tgc wants every lane a
 * function of its own input alone (a loop gives the bits of single calls
 * at any offset, fused groups and tails those of the row loops, any thread
 * count the same), so each range is evaluated on a vector whose other
 * lanes hold a value of the same range: one call when all lanes are below
 * 125, the common case. */
#define TGC_VM_TRIG_LANEWISE(fn, acc, x)                                                                   \
    do {                                                                                                   \
        tgc_vf a_ = tgc_vabs(x);                                                                           \
        tgc_vi small_ = a_ < 125.0f; /* NaN: not small */                                                  \
        tgc_vf y_ = TGC_VM_SLEEF(fn, acc, tgc_vm_sel(small_, x, TGC_VM_K(0.0f)));                          \
        if (!tgc_vm_any(~small_)) return y_;                                                               \
        tgc_vi mid_ = ~small_ & (a_ < 39000.0f), big_ = ~(small_ | mid_);                                  \
        if (tgc_vm_any(mid_))                                                                              \
            y_ = tgc_vm_sel(mid_, TGC_VM_SLEEF(fn, acc, tgc_vm_sel(mid_, x, TGC_VM_K(125.0f))), y_);       \
        if (tgc_vm_any(big_))                                                                              \
            y_ = tgc_vm_sel(big_, TGC_VM_SLEEF(fn, acc, tgc_vm_sel(big_, x, TGC_VM_K(39000.0f))), y_);     \
        return y_;                                                                                         \
    } while (0)

/* sin(x): SLEEF u35, lane by lane. Max 2.42 ulp (bench_ulp, every 64th input). */
static inline tgc_vf tgc_vsin(tgc_vf x) { TGC_VM_TRIG_LANEWISE(sin, u35, x); }

/* cos(x): SLEEF u35, lane by lane. Max 2.41 ulp (every 64th input). */
static inline tgc_vf tgc_vcos(tgc_vf x) { TGC_VM_TRIG_LANEWISE(cos, u35, x); }

/* tan(x): SLEEF u10, lane by lane (u35 measured 3.33 ulp on every 64th
 * input, too close to the 3.5 bound to trust over all of them). Max 0.94
 * ulp (every 64th input). */
static inline tgc_vf tgc_vtan(tgc_vf x) { TGC_VM_TRIG_LANEWISE(tan, u10, x); }

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
 * then the sign of x. Max 2.45 ulp with FMA (AVX2, every 16th input),
 * 2.45 without (SSE2, every 16th).
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
 * Max 2.25 ulp with FMA (AVX2, every 16th input), 2.45 without (SSE2,
 * every 16th).
 * Special values: NaN -> NaN, +-0 -> 1, +-inf -> +inf, overflow to +inf
 * beyond +-89.4159. */
static inline tgc_vf tgc_vcosh(tgc_vf x) {
    tgc_vf a = tgc_vabs(x);
    tgc_vi big = a > 88.0f;
    tgc_vf e = tgc_vexp(tgc_vsel(big, a * 0.5f, a));
    return tgc_vsel(big, (e * 0.5f) * e, e * 0.5f + 0.5f / e);
}

/* log1p(v) where big is 0, log(w) + ln2 where it is -1 (v, w >= 0; for
 * asinh and acosh): u = 1 + v or w, and tgc_vm_log_core with
 * tgc_vlog1p's correction c = (v - (u - 1)) / u (0 where big) and k + 1
 * where big. */
static inline tgc_vf tgc_vm_log1p_or_log2x(tgc_vi big, tgc_vf v, tgc_vf w) {
    tgc_vf u = tgc_vm_sel(big, w, v + 1.0f);
    tgc_vf c = (tgc_vf)(~big & (tgc_vi)((v - (u - 1.0f)) / u));
    return tgc_vm_log_core((tgc_vu)u, c, (tgc_vf)(big & (tgc_vi)tgc_vf_splat(1.0f)));
}

/* asinh(x), own code (SLEEF's u10 is 5x slower and gives inf from 2^64
 * on): a = |x|,
 *     asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2)))   for a <= 2^12,
 *     asinh(a) = log(a) + ln2                             above
 * (glibc's split; a^2 + 1 rounds to a^2 there, and the 1/(4a^2) term is
 * below half an ulp), one log core for both (tgc_vm_log1p_or_log2x), then
 * the sign of x.
 * Max error 1.89 ulp with FMA (AVX2, every 16th input), 1.87 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, +-0 -> +-0, +-inf -> +-inf, subnormal
 * x -> x. */
static inline tgc_vf tgc_vasinh(tgc_vf x) {
    tgc_vf a = tgc_vabs(x);
    tgc_vi big = a > 4096.0f;
    tgc_vf a2 = a * a;
    tgc_vf v = a + a2 / (tgc_vsqrt(a2 + 1.0f) + 1.0f);
    tgc_vf y = tgc_vm_log1p_or_log2x(big, v, a);
    y = tgc_vm_sel(a < INFINITY, y, a); /* +-inf, NaN */
    return tgc_vcopysign(y, x);
}

/* acosh(x), own code (SLEEF's u10 is 5x slower): t = x - 1,
 *     acosh(x) = log1p(t + sqrt(t (t + 2)))   for x <= 2^12,
 *     acosh(x) = log(x) + ln2                  above (glibc's split),
 * one log core for both (tgc_vm_log1p_or_log2x).
 * Max error 2.33 ulp with FMA (AVX2, every 16th input), 2.33 without
 * (SSE2, every 16th).
 * Special values: NaN -> NaN, x < 1 (-inf too) -> NaN, 1 -> +0,
 * +inf -> +inf. */
static inline tgc_vf tgc_vacosh(tgc_vf x) {
    tgc_vi big = x > 4096.0f;
    tgc_vf t = x - 1.0f;
    tgc_vf v = t + tgc_vsqrt(tgc_vmuladd(t, t, t + t));
    tgc_vf y = tgc_vm_log1p_or_log2x(big, v, x);
    y = tgc_vm_sel(x < INFINITY, y, x);              /* +inf, NaN */
    return tgc_vm_sel(x < 1.0f, tgc_vf_splat(NAN), y); /* -inf too */
}

/* atanh(x): SLEEF u10; |x| > 1 -> NaN, +-1 -> +-inf. Max 0.51 ulp (every
 * 64th input). */
static inline tgc_vf tgc_vatanh(tgc_vf x) { return TGC_VM_SLEEF(atanh, u10, x); }

/* pow(x, y): SLEEF u10, C99 powf's special cases (pow(x, +-0) = 1 for any
 * x, pow(1, y) = 1 for any y, pow(x < 0, non-integer y) = NaN, ...).
 * Max 0.76 ulp on 2^20 pairs of bench_ulp's 2^26-pair grid. Where y is 2,
 * x * x: the correctly rounded square (numpy.power's own short cut), and
 * a vector of squares only (RMSNorm's and a variance's Pow(x, 2)) skips
 * SLEEF: [4, 1024, 1024] 16.1 -> 2.9 ms at 1 thread, ONNX Runtime 8.2. */
static inline tgc_vf tgc_vpow(tgc_vf x, tgc_vf y) {
    tgc_vi square = y == tgc_vf_splat(2.0f);
    if (!tgc_vi_any(~square)) return x * x;
    return tgc_vsel(square, x * x, TGC_VM_SLEEF2(pow, u10, x, y));
}

/* ---- Exact rounding (SLEEF 3.5) and remainder (own code) ------------------------ */
/* Exact results, C99's special values: NaN and +-inf pass, the sign of
 * zero is kept. SLEEF has one variant of each rounding function (no
 * accuracy suffix); its fmodf gives NaN once x / y overflows float (x
 * 1e31, y 1e-8), hence tgc_vfmod's own long division. */

/* floor(x), ceil(x): the integers at or below, at or above x. */
static inline tgc_vf tgc_vfloor(tgc_vf x) { return TGC_VM_SLEEF(floor, , x); }
static inline tgc_vf tgc_vceil(tgc_vf x) { return TGC_VM_SLEEF(ceil, , x); }

/* rint(x) in the default rounding mode: the nearest integer, halves to
 * even (numpy.round, ONNX Round). */
static inline tgc_vf tgc_vrint(tgc_vf x) { return TGC_VM_SLEEF(rint, , x); }

/* Double lanes, as many as tgc_vf has (twice its bytes; gcc splits them
 * into the ISA's registers). */
typedef double tgc_vm_vd __attribute__((vector_size(2 * TGC_VBYTES)));
typedef int64_t tgc_vm_vl __attribute__((vector_size(2 * TGC_VBYTES)));

/* fmod(x, y): x - trunc(x / y) y exactly, with the sign of x; NaN for
 * y = 0, a NaN or an infinite x; x for an infinite y.
 * Long division in double on r = |x|, b = |y|: each step takes B = b 2^k
 * with k = max(0, e(r) - e(b) - 28) (binary exponents, so r / B < 2^29),
 * q = trunc(r / B) and r -= q B, which is exact: q B has at most 29 + 24
 * significant bits, and the difference, below B and a multiple of b's
 * last bit, fits in a double. r / B
 * may round up to the next integer: the step then goes negative by less
 * than B, and adding B back is exact. Each step removes 28 bits of the
 * exponent difference (at most 127 + 149 = 276 for floats), so 11 steps
 * reach r < b for every pair; no data-dependent branch. */
static inline tgc_vf tgc_vfmod(tgc_vf x, tgc_vf y) {
    tgc_vf ax = tgc_vabs(x), ay = tgc_vabs(y);
    tgc_vi bad = (ax == INFINITY) | (ax != ax) | (ay == 0.0f) | (ay != ay);
    tgc_vi keep = ay == INFINITY; /* x itself */
    tgc_vi ok = ~(bad | keep);
    tgc_vm_vd r = __builtin_convertvector(tgc_vm_sel(ok, ax, tgc_vf_splat(0.0f)), tgc_vm_vd);
    tgc_vm_vd b = __builtin_convertvector(tgc_vm_sel(ok, ay, tgc_vf_splat(1.0f)), tgc_vm_vd);
    tgc_vm_vl eb = (tgc_vm_vl)b >> 52; /* biased exponents: every float is a normal double */
    for (int step = 0; step < 11; step++) {
        tgc_vm_vl k = ((tgc_vm_vl)r >> 52) - eb - 28;
        k &= (tgc_vm_vl)(k > 0);
        tgc_vm_vd big = (tgc_vm_vd)((tgc_vm_vl)b + (k << 52)); /* b 2^k, exact */
        tgc_vm_vd q = __builtin_convertvector(__builtin_convertvector(r / big, tgc_vi), tgc_vm_vd);
        r -= q * big;
        r += (tgc_vm_vd)((tgc_vm_vl)(r < 0) & (tgc_vm_vl)big);
    }
    tgc_vf res = tgc_vcopysign(__builtin_convertvector(r, tgc_vf), x);
    res = tgc_vm_sel(keep, x, res);
    return tgc_vm_sel(bad, tgc_vf_splat(NAN), res);
}

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#endif

#endif
