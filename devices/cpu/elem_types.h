/* The element types of the cpu indexing kernels (kernels_gather.c,
 * kernels_scatter.c, kernels_arrange.c, kernels_select.c) as X-macro lists,
 * so that a kernel body written once as a macro is instantiated per type
 * and a dtype switch (and the kernel defs' dtype lists) are generated from
 * the same list: adding an element type is its line in a list and its
 * helpers' line (TGC_CPU_FLOAT_TYPE / TGC_CPU_INT_TYPE; written out when it
 * is stored in another C type than it computes in, as float16 is).
 *
 * Each entry is X(dtype, store_t, calc_t, tag): the tgc dtype, the C type
 * of one stored element, the C type arithmetic and comparisons use, and a
 * short suffix for generated names, with the helpers of that tag below.
 * Bool computes as C's bool, so sums and products of bools are logical or
 * / and (numpy's answer).
 *
 * Example usage:
 *     #define CUMSUM(dt, ST, CT, tag) static void cumsum_##tag(...) { ... tgc_cpu_ld_##tag(x[i]) ... }
 *     TGC_CPU_SIGNED_TYPES(CUMSUM)
 *     switch (dtype) {
 *     #define CASE(dt, ST, CT, tag) case dt: cumsum_##tag(...); break;
 *     TGC_CPU_SIGNED_TYPES(CASE)
 *     }
 */
#ifndef TGC_DEVICES_CPU_ELEM_TYPES_H
#define TGC_DEVICES_CPU_ELEM_TYPES_H

#include "tgc.h"
#include "support/half.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Floats and signed ints (CumSum's types). */
#define TGC_CPU_SIGNED_TYPES(X)                                                                                        \
    X(TGC_FLOAT32, float, float, f32)                                                                                  \
    X(TGC_FLOAT16, uint16_t, float, f16)                                                                               \
    X(TGC_BFLOAT16, uint16_t, float, bf16)                                                                             \
    X(TGC_FLOAT64, double, double, f64)                                                                                \
    X(TGC_INT8, int8_t, int8_t, i8)                                                                                    \
    X(TGC_INT16, int16_t, int16_t, i16)                                                                                \
    X(TGC_INT32, int32_t, int32_t, i32)                                                                                \
    X(TGC_INT64, int64_t, int64_t, i64)

/* Every numeric type (TopK's, OneHot's indices and depth). */
#define TGC_CPU_NUMERIC_TYPES(X)                                                                                       \
    TGC_CPU_SIGNED_TYPES(X)                                                                                            \
    X(TGC_UINT8, uint8_t, uint8_t, u8)                                                                                 \
    X(TGC_UINT16, uint16_t, uint16_t, u16)                                                                             \
    X(TGC_UINT32, uint32_t, uint32_t, u32)                                                                             \
    X(TGC_UINT64, uint64_t, uint64_t, u64)

/* Every type (Unique, the scatter reductions, non-zero tests). */
#define TGC_CPU_ALL_TYPES(X) TGC_CPU_NUMERIC_TYPES(X) X(TGC_BOOL, uint8_t, bool, b8)

/* Per calc type `tag`: tgc_cpu_ld_<tag> / tgc_cpu_st_<tag> (stored <->
 * calc), tgc_cpu_add_<tag> / tgc_cpu_mul_<tag> (integers wrap, through an
 * unsigned type U at least as wide as int, never undefined; bools are or /
 * and) and tgc_cpu_isnan_<tag> (false but for floats). A type stored as it
 * computes takes one line below; float16, bfloat16 and bool are written
 * out. Narrow integers (int8/int16 sums) wrap by conversion from the
 * unsigned type, as gcc and clang define it (two's complement). */
#define TGC_CPU_FLOAT_TYPE(T, tag)                                                                                     \
    static inline T tgc_cpu_ld_##tag(T v) { return v; }                                                                \
    static inline T tgc_cpu_st_##tag(T v) { return v; }                                                                \
    static inline T tgc_cpu_add_##tag(T a, T b) { return a + b; }                                                      \
    static inline T tgc_cpu_mul_##tag(T a, T b) { return a * b; }                                                      \
    static inline bool tgc_cpu_isnan_##tag(T v) { return isnan(v); }
#define TGC_CPU_INT_TYPE(T, U, tag)                                                                                    \
    static inline T tgc_cpu_ld_##tag(T v) { return v; }                                                                \
    static inline T tgc_cpu_st_##tag(T v) { return v; }                                                                \
    static inline T tgc_cpu_add_##tag(T a, T b) { return (T)((U)a + (U)b); }                                           \
    static inline T tgc_cpu_mul_##tag(T a, T b) { return (T)((U)a * (U)b); }                                           \
    static inline bool tgc_cpu_isnan_##tag(T v) { return (void)v, false; }
TGC_CPU_FLOAT_TYPE(float, f32)
TGC_CPU_FLOAT_TYPE(double, f64)
TGC_CPU_INT_TYPE(int8_t, uint32_t, i8)
TGC_CPU_INT_TYPE(int16_t, uint32_t, i16)
TGC_CPU_INT_TYPE(int32_t, uint32_t, i32)
TGC_CPU_INT_TYPE(int64_t, uint64_t, i64)
TGC_CPU_INT_TYPE(uint8_t, uint32_t, u8)
TGC_CPU_INT_TYPE(uint16_t, uint32_t, u16)
TGC_CPU_INT_TYPE(uint32_t, uint32_t, u32)
TGC_CPU_INT_TYPE(uint64_t, uint64_t, u64)
#undef TGC_CPU_FLOAT_TYPE
#undef TGC_CPU_INT_TYPE

static inline float tgc_cpu_ld_f16(uint16_t v) { return tgc_half_to_float(v); }
static inline uint16_t tgc_cpu_st_f16(float v) { return tgc_float_to_half(v); }
static inline float tgc_cpu_add_f16(float a, float b) { return a + b; }
static inline float tgc_cpu_mul_f16(float a, float b) { return a * b; }
static inline bool tgc_cpu_isnan_f16(float v) { return isnan(v); }

static inline float tgc_cpu_ld_bf16(uint16_t v) { return tgc_bf16_to_float(v); }
static inline uint16_t tgc_cpu_st_bf16(float v) { return tgc_float_to_bf16(v); }
static inline float tgc_cpu_add_bf16(float a, float b) { return a + b; }
static inline float tgc_cpu_mul_bf16(float a, float b) { return a * b; }
static inline bool tgc_cpu_isnan_bf16(float v) { return isnan(v); }

static inline bool tgc_cpu_ld_b8(uint8_t v) { return v != 0; }
static inline uint8_t tgc_cpu_st_b8(bool v) { return (uint8_t)v; }
static inline bool tgc_cpu_add_b8(bool a, bool b) { return a || b; }
static inline bool tgc_cpu_mul_b8(bool a, bool b) { return a && b; }
static inline bool tgc_cpu_isnan_b8(bool v) { return (void)v, false; }

/* The dtypes of a list, for a kernel def's .dtypes (TGC_DTYPE_INVALID
 * ends it): {TGC_CPU_SIGNED_TYPES(TGC_CPU_DTYPE_OF) TGC_DTYPE_INVALID}. */
#define TGC_CPU_DTYPE_OF(dt, ST, CT, tag) dt,

/* True when dtype is in TGC_CPU_ALL_TYPES (the typed helpers below know it). */
static inline bool tgc_cpu_dtype_listed(tgc_dtype dtype) {
    switch (dtype) {
#define TGC_CPU_LISTED(dt, ST, CT, tag)                                                                                \
    case dt: return true;
        TGC_CPU_ALL_TYPES(TGC_CPU_LISTED)
#undef TGC_CPU_LISTED
    default: return false;
    }
}

/* Element i of a tensor of `dtype` at p as a double (for values that
 * index or count: OneHot's indices and depth); 0 for a dtype not listed. */
static inline double tgc_cpu_elem_f64(tgc_dtype dtype, const void *p, int64_t i) {
    switch (dtype) {
#define TGC_CPU_ELEM_F64(dt, ST, CT, tag)                                                                              \
    case dt: return (double)tgc_cpu_ld_##tag(((const ST *)p)[i]);
        TGC_CPU_ALL_TYPES(TGC_CPU_ELEM_F64)
#undef TGC_CPU_ELEM_F64
    default: return 0;
    }
}

/* Element i of a tensor of `dtype` at p is non-zero (NaN is; -0.0 is not). */
static inline bool tgc_cpu_elem_nonzero(tgc_dtype dtype, const void *p, int64_t i) {
    switch (dtype) {
#define TGC_CPU_ELEM_NZ(dt, ST, CT, tag)                                                                               \
    case dt: return tgc_cpu_ld_##tag(((const ST *)p)[i]) != 0;
        TGC_CPU_ALL_TYPES(TGC_CPU_ELEM_NZ)
#undef TGC_CPU_ELEM_NZ
    default: return false;
    }
}

/* Copies one element of `esize` bytes (the data-movement kernels, which
 * handle any dtype by its size). */
static inline void tgc_cpu_copy_elem(void *dst, const void *src, size_t esize) {
    switch (esize) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, esize);
    }
}

#endif
