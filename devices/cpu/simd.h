/* The vector types of one ISA, for code compiled once per ISA (the
 * elementwise loops, devices/cpu/ew_loops.h, and the vector math,
 * devices/cpu/vmath.h). Private to the cpu device.
 *
 * The width follows the compiler flags of the translation unit: 64 bytes
 * under -mavx512f, 32 under -mavx2, else 16 (SSE2, the x86-64 baseline).
 * ew_isa_*.c compile the same loops once per width; ew_dispatch.c picks
 * the widest one the running cpu has (cpuid), never what the build
 * machine had.
 *
 * The types are gcc/clang vector extensions: + - * / and comparisons work
 * lane by lane (a comparison gives a tgc_vi of -1 or 0 per lane), a
 * scalar operand is broadcast, and a cast between two vector types of the
 * same size reinterprets the bits. Nothing contracts a * b + c into a
 * fused multiply-add behind the code's back (the project builds in ISO C
 * mode, -ffp-contract=off): tgc_vmuladd asks for one where the ISA has it.
 *
 * Example usage:
 *     tgc_vf x = tgc_vf_load(p), y = tgc_vsel(x < 0.0f, x * 0.01f, x);
 *     tgc_vf_store(q, y);
 */
#ifndef TGC_DEVICES_CPU_SIMD_H
#define TGC_DEVICES_CPU_SIMD_H

#include "support/half.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define TGC_VBYTES 64
#define TGC_ISA_NAME "avx512"
#elif defined(__AVX2__)
#define TGC_VBYTES 32
#define TGC_ISA_NAME "avx2"
#else
#define TGC_VBYTES 16
#define TGC_ISA_NAME "sse2"
#endif

/* Lanes of a float32 vector. */
#define TGC_VLANES (TGC_VBYTES / 4)

typedef float tgc_vf __attribute__((vector_size(TGC_VBYTES)));
typedef int32_t tgc_vi __attribute__((vector_size(TGC_VBYTES)));
typedef uint32_t tgc_vu __attribute__((vector_size(TGC_VBYTES)));

/* ---- Loads and stores (any alignment) -------------------------------------- */

static inline tgc_vf tgc_vf_load(const float *p) {
    tgc_vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void tgc_vf_store(float *p, tgc_vf v) { memcpy(p, &v, sizeof v); }

/* Every lane set to s (-0 + s is s for every s, -0 included). */
static inline tgc_vf tgc_vf_splat(float s) { return -(tgc_vf){0} + s; }

/* a * b + c: fused (one rounding) where the ISA has FMA (avx2, avx512),
 * else a multiply and an add. A function built on it gives the same bits
 * at every width of one ISA family, slightly different bits with and
 * without FMA (its measured ulp bound holds for both). */
static inline tgc_vf tgc_vmuladd(tgc_vf a, tgc_vf b, tgc_vf c) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif TGC_VBYTES == 32 && defined(__FMA__)
    return (tgc_vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return a * b + c;
#endif
}

/* ---- Selection without branches ---------------------------------------------- */

/* Lane i: a[i] where m[i] is -1 (all bits), b[i] where it is 0. */
static inline tgc_vf tgc_vsel(tgc_vi m, tgc_vf a, tgc_vf b) {
    return (tgc_vf)(((tgc_vu)m & (tgc_vu)a) | (~(tgc_vu)m & (tgc_vu)b));
}

/* v > e ? v : e lane by lane, and e where either is a NaN: x86's MAXPS
 * with v as its first operand (a NaN already in e carries on, one in v is
 * dropped; of two equal lanes, +0 and -0 included, e's is kept). One
 * instruction where MaxPool's rule (pool_max_rule.h) takes four; callers
 * that need the rule check v for NaNs themselves. */
static inline tgc_vf tgc_vmax_keep(tgc_vf v, tgc_vf e) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_max_ps((__m512)v, (__m512)e);
#elif TGC_VBYTES == 32
    return (tgc_vf)_mm256_max_ps((__m256)v, (__m256)e);
#elif defined(__SSE2__)
    return (tgc_vf)_mm_max_ps((__m128)v, (__m128)e);
#else
    return tgc_vsel(v > e, v, e);
#endif
}

/* Whether any lane of m is non-zero. */
static inline bool tgc_vi_any(tgc_vi m) {
#if TGC_VBYTES == 64
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0;
#elif TGC_VBYTES == 32
    return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#elif defined(__SSE2__)
    return _mm_movemask_epi8((__m128i)m) != 0;
#else
    int32_t any = 0;
    for (int i = 0; i < TGC_VLANES; i++) any |= m[i];
    return any != 0;
#endif
}

/* The bits of a float vector as unsigned lanes, and back. */
static inline tgc_vu tgc_vf_bits(tgc_vf x) { return (tgc_vu)x; }
static inline tgc_vf tgc_vf_from_bits(tgc_vu u) { return (tgc_vf)u; }

/* |x| (clears the sign bit; NaN stays NaN). */
static inline tgc_vf tgc_vabs(tgc_vf x) { return (tgc_vf)((tgc_vu)x & 0x7fffffffu); }

/* x with the sign of s. */
static inline tgc_vf tgc_vcopysign(tgc_vf x, tgc_vf s) {
    return (tgc_vf)(((tgc_vu)x & 0x7fffffffu) | ((tgc_vu)s & 0x80000000u));
}

/* Lane-wise conversions, rounding as C casts do (toward zero for float ->
 * int; the caller keeps the value in range). */
static inline tgc_vi tgc_vf_to_vi(tgc_vf x) { return __builtin_convertvector(x, tgc_vi); }
static inline tgc_vf tgc_vi_to_vf(tgc_vi x) { return __builtin_convertvector(x, tgc_vf); }

/* sqrt per lane, correctly rounded (the ISA's sqrt instruction). */
static inline tgc_vf tgc_vsqrt(tgc_vf x) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_sqrt_ps((__m512)x);
#elif TGC_VBYTES == 32
    return (tgc_vf)_mm256_sqrt_ps((__m256)x);
#elif defined(__SSE2__)
    return (tgc_vf)_mm_sqrt_ps((__m128)x);
#else
    for (int i = 0; i < TGC_VLANES; i++) x[i] = __builtin_sqrtf(x[i]);
    return x;
#endif
}

/* Stores a mask's TGC_VLANES lanes (each all ones or zero) as bytes of 1
 * or 0: a comparison's bool output. Packs, not a byte per lane. */
static inline void tgc_vi_store_bool(uint8_t *p, tgc_vi m) {
#if TGC_VBYTES == 64
    _mm_storeu_si128((__m128i *)(void *)p, _mm_and_si128(_mm512_cvtepi32_epi8((__m512i)m), _mm_set1_epi8(1)));
#elif TGC_VBYTES == 32
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128((__m256i)m), _mm256_extracti128_si256((__m256i)m, 1));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_and_si128(_mm_packs_epi16(w, w), _mm_set1_epi8(1)));
#elif defined(__SSE2__)
    __m128i w = _mm_packs_epi32((__m128i)m, (__m128i)m);
    int32_t b = _mm_cvtsi128_si32(_mm_and_si128(_mm_packs_epi16(w, w), _mm_set1_epi8(1)));
    memcpy(p, &b, 4);
#else
    for (int i = 0; i < TGC_VLANES; i++) p[i] = (uint8_t)(m[i] & 1);
#endif
}

/* ---- float16 (binary16 bits) <-> float32 lanes ------------------------------- */

/* TGC_VLANES float16 values from p, exactly (F16C where the ISA has it). */
static inline tgc_vf tgc_vf_load_half(const uint16_t *p) {
#if TGC_VBYTES == 64
    return (tgc_vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
#elif TGC_VBYTES == 32
    return (tgc_vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
#else
    tgc_vf v;
    for (int i = 0; i < TGC_VLANES; i++) v[i] = tgc_half_to_float(p[i]);
    return v;
#endif
}

/* Stores v's lanes to p as float16, rounded to nearest even. */
static inline void tgc_vf_store_half(uint16_t *p, tgc_vf v) {
#if TGC_VBYTES == 64
    _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtps_ph((__m512)v, _MM_FROUND_TO_NEAREST_INT));
#elif TGC_VBYTES == 32
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT));
#else
    for (int i = 0; i < TGC_VLANES; i++) p[i] = tgc_float_to_half(v[i]);
#endif
}

#endif
