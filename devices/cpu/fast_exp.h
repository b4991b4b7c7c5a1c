/* A float32 exp that vectorizes: private to the cpu kernels (Softmax and
 * LogSoftmax in kernels_reduce.c), tested by tests/devices/test_cpu_fast_exp.c.
 *
 * libm's expf is a call per element, so a loop over it runs one element at
 * a time (gcc only calls glibc's vector expf under -ffast-math). This one is
 * straight-line float and int32 arithmetic without branches or tables, so
 * gcc (-O2 -fvect-cost-model=cheap, as devices/cpu/ is built) and clang turn
 * a loop over it into SIMD code, 4 or more elements an instruction.
 *
 * The algorithm is Cephes's expf (Stephen L. Moshier, cephes/single/expf.c):
 *     n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, Cody and Waite,
 *     so r is exact to float precision), |r| <= ln 2 / 2 (a hair more when
 *     the float rounding of x / ln 2 lands on the other integer),
 *     exp(r) = 1 + r + r^2 P(r), P Cephes's degree-5 minimax polynomial,
 *     exp(x) = exp(r) * 2^n.
 * 2^n is built from exponent bits as 2^(n/2) * 2^(n - n/2), two normal
 * powers of two, so results that are subnormal or overflow round once, as
 * libm's do. Error against exp in double: at most 0.991 ulp of the float
 * result over every float in [-104, 89] (measured on x86-64 without FMA;
 * the unit test bounds it at 1.5 ulp on a dense grid, and checks the edges).
 *
 * Edges, as expf: x below -103.972 (-150 ln 2, and -inf) gives +0; x above
 * 88.7228 (ln FLT_MAX, and +inf) gives +inf; NaN gives NaN. Neither errno
 * nor the floating-point exception flags are set as C's expf sets them.
 *
 * Example usage:
 *     for (int64_t i = 0; i < n; i++) y[i] = tgc_cpu_fast_expf(x[i] - m);   // vectorizes
 */
#ifndef TGC_DEVICES_CPU_FAST_EXP_H
#define TGC_DEVICES_CPU_FAST_EXP_H

#include <stdint.h>
#include <string.h>

/* exp(x) for any float x, within 1 ulp (see above). Pure: no errno, no
 * state, safe from any thread. */
static inline float tgc_cpu_fast_expf(float x) {
    /* n = round(x * log2(e)) by the 1.5 * 2^23 trick: adding it leaves the
     * integer in the low mantissa bits of t (round to nearest even). */
    const float shifter = 12582912.0f;
    float t = x * 1.44269504088896341f + shifter;
    float n = t - shifter;
    /* r = x - n ln 2; 0.693359375 has 9 significant bits, so n * it is
     * exact for |n| < 2^15 and the subtraction is exact (Sterbenz). */
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float z = r * r;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * z + r + 1.0f;
    /* 2^n1 and 2^n2, n1 = floor(n / 2) and n2 = n - n1, from t's bits, in
     * unsigned arithmetic (u = n + 512, h = n1 + 256): for x in range both
     * are normal (n in [-151, 129]); outside it the bits are garbage that
     * the masks below replace. */
    uint32_t tb, sb;
    memcpy(&tb, &t, sizeof tb);
    memcpy(&sb, &shifter, sizeof sb);
    uint32_t u = tb - sb + 512u, h = u >> 1;
    uint32_t b1 = (h - 129u) << 23, b2 = (u - h - 129u) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float y = e * s1 * s2;
    /* Below -104 the result rounds to +0, above 89 to +inf (in between,
     * the product above already underflows or overflows as it should); NaN
     * compares false and passes. Masks, not ?:, so that gcc keeps the
     * loop free of branches (it sinks the arithmetic into a ?:'s arm and
     * then cannot if-convert it). */
    uint32_t yb, small = 0u - (uint32_t)(x < -104.0f), big = 0u - (uint32_t)(x > 89.0f);
    memcpy(&yb, &y, sizeof yb);
    yb = (yb & ~(small | big)) | (0x7f800000u & big);
    memcpy(&y, &yb, sizeof y);
    return y;
}

#endif
