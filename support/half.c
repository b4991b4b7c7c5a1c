/* Bit-level binary16 conversion, after the classic branchy formulation
 * (F. Giesen, "Half to float done quic", 2012): handle zero/subnormal,
 * normal and inf/nan ranges separately. */
#include "support/half.h"

#include <string.h>

static float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float tgc_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (mant << 13)); /* inf, nan */
    if (exp != 0) return bits_to_float(sign | ((exp + 112) << 23) | (mant << 13));
    /* Zero or subnormal: mant * 2^-24, exactly representable in float. */
    float v = (float)mant * bits_to_float(0x33800000u); /* 2^-24 */
    return sign ? -v : v;
}

uint16_t tgc_float_to_half(float f) {
    uint32_t u = float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* inf or nan (keep nan quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
    if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
    if (abs < 0x38800000u) {
        /* Result is subnormal or zero: add 0.5 so the FPU rounds to the
         * nearest even multiple of 2^-24. */
        float v = bits_to_float(abs) + 0.5f;
        return (uint16_t)(sign | (float_to_bits(v) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += ((uint32_t)(15 - 127) << 23) + 0xfffu + mant_odd; /* rebias, round half even */
    return (uint16_t)(sign | (abs >> 13));
}
