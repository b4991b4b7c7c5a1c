/* 2-D MaxPool and AveragePool over padded planes: the CNN case (DenseNet's
 * stride-2 AveragePools, Inception's 3x3 stride-1 ones; MaxPool only where
 * pool_max_rows.h declines, windows past 64 taps a side) as a few long
 * vector loops a plane instead of short loops a row. Private to the cpu
 * kernels (kernels_pool.c).
 *
 * Each plane is copied once into a scratch block with its padding written
 * as the op's identity (0 for the sum, -inf for the maximum), split by
 * phase as the direct convolution packs its input (padded row r, column c
 * goes to phase (r % s, c % s) at row r / s, column c / s; s the stride).
 * Then output (oh, ow)'s tap (th, tw) reads phase (th % s, tw % s) at flat
 * index i + (th / s) * wq + tw / s, where i = oh * wq + ow and wq is a
 * phase's row length: every tap is one contiguous loop over i for the
 * whole plane (the columns i % wq >= OW, a few, are computed and dropped).
 * Taps are taken in row-major window order, so the
 * sums are bitwise those of ONNX's reference rule (adding the identity 0
 * to a sum that starts at +0 changes no bit), and the maximum follows the
 * general path's rule (a NaN wins; the first maximum, which for floats
 * other than NaN is the same value).
 *
 * Example usage (in a pooling kernel):
 *     tgc_status st = TGC_OK;
 *     if (tgc_cpu_pool_padded(c, &w, planes, TGC_POOL_MAX, false, x, y, &st)) return st;
 *     // else: not this path's geometry; another path runs
 */
#ifndef TGC_DEVICES_CPU_POOL_PADDED_H
#define TGC_DEVICES_CPU_POOL_PADDED_H

#include "devices/kernel.h"
#include "devices/window.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tgc_pool_kind { TGC_POOL_MAX, TGC_POOL_AVERAGE } tgc_pool_kind;

/* Pools x [planes, H, W] into y [planes, OH, OW] (float32, window w: 2-D,
 * equal strides, dilation 1) with the planes split over c->pool. For
 * AveragePool, include_pad is count_include_pad; a window with nothing to
 * count gives NaN. MaxPool needs every window to read some input (the
 * caller checks). Returns false, having done nothing, when the geometry is
 * not this path's or its scratch block would pass 16 MiB a thread; true
 * when it ran, with *st TGC_OK or an out-of-memory failure (through
 * tgc_kernel_fail). */
bool tgc_cpu_pool_padded(tgc_kernel_ctx *c, const tgc_window *w, int64_t planes, tgc_pool_kind kind,
                         bool include_pad, const float *x, float *y, tgc_status *st);

/* y[i] = sum[i] / c[i] for i < n, the float quotient bit for bit, where
 * recip[i] = 1 / c[i] in double (a count c[i] >= 1 below 2^24, or NaN:
 * y[i] NaN): a window's sum divided by its count. As the product (float)
 * (sum * recip) in double where that is the quotient: the product is
 * within 2^-52 of the quotient (relative), which for a normal result is
 * at least 2^-25 / c (relative) from any midpoint between floats, so the
 * two round alike. A subnormal result can be a midpoint itself (an even
 * count), where the product rounds the wrong way: a row with a nonzero
 * |sum| below 2^-100 divides. A vector divide cost Inception-v3's [192,
 * 35, 35] 3x3 pool 105 of its 285 us (the node alone, 1 thread; 14,700
 * AVX-512 divides). */
void tgc_cpu_pool_divide(float *restrict y, const float *restrict sum, const double *restrict recip, int64_t n);

#endif
