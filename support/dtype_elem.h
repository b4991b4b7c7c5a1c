/* Reading one element of any tgc dtype as a number, and the dtype kinds,
 * for code that is not a hot loop (messages, the YAML dumper, scalar
 * parameters, small shape tensors). Hot loops instantiate per C type. */
#ifndef TGC_SUPPORT_DTYPE_ELEM_H
#define TGC_SUPPORT_DTYPE_ELEM_H

#include "support/half.h"
#include "tgc.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* float32, float16, bfloat16, float64. */
static inline bool tgc_dtype_is_float(tgc_dtype t) {
    return t == TGC_FLOAT32 || t == TGC_FLOAT16 || t == TGC_BFLOAT16 || t == TGC_FLOAT64;
}

/* uint8, uint16, uint32, uint64 (bool is neither signed nor unsigned). */
static inline bool tgc_dtype_is_unsigned(tgc_dtype t) {
    return t == TGC_UINT8 || t == TGC_UINT16 || t == TGC_UINT32 || t == TGC_UINT64;
}

/* int8, int16, int32, int64. */
static inline bool tgc_dtype_is_signed_int(tgc_dtype t) {
    return t == TGC_INT8 || t == TGC_INT16 || t == TGC_INT32 || t == TGC_INT64;
}

/* Element i of the array p of dtype t, exactly as a double for floats and
 * integers up to 2^53 (larger ones round); bool gives 0 or 1; an invalid
 * dtype gives 0. p must hold element i (unaligned is fine). */
static inline double tgc_elem_as_double(tgc_dtype t, const void *p, int64_t i) {
    const unsigned char *b = (const unsigned char *)p + (size_t)i * tgc_dtype_size(t);
    union {
        float f;
        double d;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
    } v;
    memcpy(&v, b, tgc_dtype_size(t));
    switch (t) {
    case TGC_FLOAT32: return v.f;
    case TGC_FLOAT16: return tgc_half_to_float(v.u16);
    case TGC_BFLOAT16: return tgc_bf16_to_float(v.u16);
    case TGC_FLOAT64: return v.d;
    case TGC_INT8: return v.i8;
    case TGC_INT16: return v.i16;
    case TGC_INT32: return v.i32;
    case TGC_INT64: return (double)v.i64;
    case TGC_UINT8: return v.u8;
    case TGC_BOOL: return v.u8 != 0;
    case TGC_UINT16: return v.u16;
    case TGC_UINT32: return v.u32;
    case TGC_UINT64: return (double)v.u64;
    default: return 0;
    }
}

/* Element i of an integer or bool array as int64 (uint64 above INT64_MAX
 * wraps to negative: callers that care check the dtype); a float is
 * truncated toward zero when in range, else 0. */
static inline int64_t tgc_elem_as_int64(tgc_dtype t, const void *p, int64_t i) {
    if (tgc_dtype_is_float(t)) {
        double d = tgc_elem_as_double(t, p, i);
        return d > -9223372036854775808.0 && d < 9223372036854775808.0 ? (int64_t)d : 0;
    }
    if (t == TGC_UINT64 || t == TGC_INT64) {
        int64_t v;
        memcpy(&v, (const unsigned char *)p + (size_t)i * 8, 8);
        return v;
    }
    return (int64_t)tgc_elem_as_double(t, p, i); /* exact below 2^32 */
}

#endif
