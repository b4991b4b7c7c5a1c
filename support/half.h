/* IEEE 754 binary16 <-> binary32 conversion (round to nearest even), for
 * float16 tensors on hosts without native half arithmetic; and bfloat16
 * (the upper half of a binary32: sign, 8 exponent bits, 7 mantissa bits)
 * <-> binary32. */
#ifndef TGC_SUPPORT_HALF_H
#define TGC_SUPPORT_HALF_H

#include <stdint.h>

/* Exact: every binary16 value, NaNs and infinities included, is a float. */
float tgc_half_to_float(uint16_t h);

/* Rounds to nearest even; overflow gives infinity, NaN stays NaN. */
uint16_t tgc_float_to_half(float f);

/* Exact: a bfloat16 is a float32 whose low 16 bits are zero. */
static inline float tgc_bf16_to_float(uint16_t h) {
    union {
        uint32_t u;
        float f;
    } v = {.u = (uint32_t)h << 16};
    return v.f;
}

/* Rounds to nearest even (as ONNX's reference float32_to_bfloat16 and
 * PyTorch do); overflow past the largest bfloat16 gives infinity; a NaN
 * stays a (quiet) NaN of the same sign. */
static inline uint16_t tgc_float_to_bf16(float f) {
    union {
        float f;
        uint32_t u;
    } v = {.f = f};
    if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x0040u);
    return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}

#endif
