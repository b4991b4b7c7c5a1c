/* Element types of the cpu sampling kernels (Resize, GridSample, RoiAlign):
 * they compute in double, as ONNX's reference implementations compute in
 * numpy float64, and convert each element on the way in and out (float64
 * itself passes through). Adding an element type is one line of
 * SAMPLE_ELEMENT_TYPES. Private to devices/cpu.
 *
 * Example usage:
 *     double *d = ...;
 *     if (!tgc_sample_load(x->dtype, tgc_kernel_in_ptr(c, 0), n, d)) ... unsupported dtype ...
 *     tgc_sample_store(y->dtype, d, n, tgc_kernel_out_ptr(c, 0));
 */
#ifndef TGC_DEVICES_CPU_SAMPLE_TYPES_H
#define TGC_DEVICES_CPU_SAMPLE_TYPES_H

#include "tgc.h"
#include "support/half.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* Integers: round half to even, then saturate into [lo, hi]; NaN gives 0
 * (ONNX's reference: numpy_helper.saturate_cast). */
static inline double tgc_sample_saturate(double d, double lo, double hi) {
    if (d != d) return 0;
    d = nearbyint(d);
    return d < lo ? lo : d > hi ? hi : d;
}

/* int64: 2^63 itself does not fit, so the top clamps below it. */
static inline int64_t tgc_sample_saturate_i64(double d) {
    if (d != d) return 0;
    d = nearbyint(d);
    if (d <= -9223372036854775808.0) return INT64_MIN;
    if (d >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)d;
}

/* One line per element type: dtype, C type, load to double (from v),
 * store from double (d). */
#define SAMPLE_ELEMENT_TYPES(X)                                                                                        \
    X(TGC_FLOAT32, float, (double)v, (float)d)                                                                         \
    X(TGC_FLOAT16, uint16_t, (double)tgc_half_to_float(v), tgc_float_to_half((float)d))                               \
    X(TGC_UINT8, uint8_t, (double)v, (uint8_t)tgc_sample_saturate(d, 0, 255))                                          \
    X(TGC_INT8, int8_t, (double)v, (int8_t)tgc_sample_saturate(d, -128, 127))                                         \
    X(TGC_INT32, int32_t, (double)v, (int32_t)tgc_sample_saturate(d, INT32_MIN, INT32_MAX))                            \
    X(TGC_INT64, int64_t, (double)v, tgc_sample_saturate_i64(d))                                                     \
    X(TGC_FLOAT64, double, v, d)

/* The kernel definitions' dtype list: SAMPLE_ELEMENT_TYPES(SAMPLE_DTYPE) TGC_DTYPE_INVALID. */
#define SAMPLE_DTYPE(dt, T, load, store) dt,

/* dst[0..n) = src's n elements of dtype as doubles; false for a dtype not listed. */
static inline bool tgc_sample_load(tgc_dtype dtype, const void *src, int64_t n, double *dst) {
    switch (dtype) {
#define SAMPLE_LOAD(dt, T, load, store)                                                                                \
    case dt:                                                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                                              \
            T v = ((const T *)src)[i];                                                                                 \
            dst[i] = load;                                                                                             \
        }                                                                                                              \
        return true;
        SAMPLE_ELEMENT_TYPES(SAMPLE_LOAD)
#undef SAMPLE_LOAD
    default: return false;
    }
}

/* dst's n elements of dtype = src[0..n) converted; nothing for a dtype not listed. */
static inline void tgc_sample_store(tgc_dtype dtype, const double *src, int64_t n, void *dst) {
    switch (dtype) {
#define SAMPLE_STORE(dt, T, load, store)                                                                               \
    case dt:                                                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                                              \
            double d = src[i];                                                                                         \
            ((T *)dst)[i] = store;                                                                                     \
        }                                                                                                              \
        return;
        SAMPLE_ELEMENT_TYPES(SAMPLE_STORE)
#undef SAMPLE_STORE
    default: return;
    }
}

#endif
