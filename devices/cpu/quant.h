/* What the cpu's quantization kernels share (kernels_quant.c: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul;
 * kernels_quant_conv.c: ConvInteger, QLinearConv): the 8-bit types, scale
 * and zero-point inputs per tensor or per axis, the exact float64 integer
 * product, and requantization. Private to the cpu kernels.
 *
 * Example usage:
 *     tgc_cpu_qparam zp;
 *     if (tgc_cpu_qparam_read(c, 7, "y_zero_point", -1, y->dtype, &zp) != TGC_OK) return st;
 *     int32_t lo, hi;
 *     tgc_cpu_q8_range(y->dtype, &lo, &hi);
 *     tgc_cpu_q8_requantize(acc, n, 0, mult, tgc_cpu_qparam_int(&zp, 0), lo, hi, y->dtype == TGC_INT8, out);
 */
#ifndef TGC_DEVICES_CPU_QUANT_H
#define TGC_DEVICES_CPU_QUANT_H

#include "devices/kernel.h"

#include <stdbool.h>
#include <stdint.h>

/* True for the 8-bit quantized types (uint8, int8). */
bool tgc_cpu_q8_is(tgc_dtype t);

/* The range of quantized type t, in *lo and *hi ([0, 255] or [-128, 127]). */
void tgc_cpu_q8_range(tgc_dtype t, int32_t *lo, int32_t *hi);

/* How far an 8-bit type's values move to be int8 (uint8: down by 128, its
 * byte's top bit flipped). The differences x - zp, all the integer sums
 * need, stay as they were. */
static inline int32_t tgc_cpu_q8_shift(tgc_dtype t) { return t == TGC_UINT8 ? 128 : 0; }

/* An integer sum's int64 value stored as int32, wrapping as numpy's int32. */
static inline int32_t tgc_cpu_wrap_int32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* A scale or zero point input: element idx % count (count 1: per tensor;
 * 0: omitted, a zero point of zero). Points into the input's buffer. */
typedef struct tgc_cpu_qparam {
    const void *p;
    tgc_dtype dtype;
    int64_t count;
} tgc_cpu_qparam;

/* Reads optional input i as a parameter of `want` elements (1 also fits;
 * `want` < 0: one element only) of dtype `dtype` (TGC_DTYPE_INVALID: any)
 * into *q. Fails through tgc_kernel_fail naming `what`. */
tgc_status tgc_cpu_qparam_read(tgc_kernel_ctx *c, int i, const char *what, int64_t want, tgc_dtype dtype,
                               tgc_cpu_qparam *q);

/* Element idx of a float32 scale (element 0 when per tensor). */
double tgc_cpu_qparam_float(const tgc_cpu_qparam *q, int64_t idx);

/* Element idx of an 8-bit or int32 zero point, widened (0 when omitted). */
int32_t tgc_cpu_qparam_int(const tgc_cpu_qparam *q, int64_t idx);

/* y[m x n] (int32, row stride ldy) = a[m x k] b[k x n] (row-major float64
 * holding integers of at most 9 bits; rows of a and b at strides k and
 * ldb), exactly through OpenBLAS's dgemm: every product (< 2^16) and
 * partial sum (< k 2^16) is an integer float64 holds exactly, in any order.
 * `acc` is m x n float64 scratch. The sum is wrapped to int32 as numpy's
 * int32 does. False when a size passes BLAS's int range. */
bool tgc_cpu_q8_dgemm(int64_t m, int64_t n, int64_t k, const double *a, const double *b, int64_t ldb, double *acc,
                      int32_t *y, int64_t ldy);

/* A float32 view of v (same dims, same buffer) for geometry readers that
 * check float32 operands. */
tgc_value tgc_cpu_q8_f32_view(const tgc_value *v);

/* y[i] = saturate(rint((acc[i] + add) * mult) + zp) to [lo, hi] (int8 stores
 * when is_signed, else uint8), i < n: QLinearConv's and QLinearMatMul's
 * requantization. acc[i] + add wraps in int32 as the int32 accumulation
 * it finishes does; the product is in float64 and rounds half to even; NaN
 * gives zp. Vectorized (AVX-512, AVX2 clones). */
void tgc_cpu_q8_requantize(const int32_t *acc, int64_t n, int32_t add, double mult, double zp, double lo, double hi,
                           bool is_signed, void *y);

/* tgc_cpu_q8_requantize over `rows` rows of m channels (channels last: a
 * QLinearConv's sums in NHWC), channel k with its own add[k] and float32
 * multiplier mult[k]: y[r m + k] = saturate(rint((acc[r m + k] + add[k])
 * mult[k]) + zp), the product in float64 as there, element for element
 * (float32 lanes where they provably give the same). */
void tgc_cpu_q8_requantize_channels(const int32_t *acc, int64_t rows, int64_t m, const int32_t *add,
                                    const float *mult, double zp, double lo, double hi, bool is_signed, void *y);

#endif
