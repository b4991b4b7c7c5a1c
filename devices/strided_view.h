/* The strided views of Transpose, Slice and Expand, shared by the cpu and
 * gpu kernels (devices/cpu/kernels_layout.c, devices/opencl/kernels_shape.c):
 * each computes, from the input's dims and the op's arguments, the output
 * dims and, per output axis, the input stride (in elements) and a start
 * offset, so that output element (i_0, .., i_r-1) is input element
 * offset + sum(i_k * strides[k]) of the contiguous input. The kernels then
 * do the strided copy their own way. Device-independent; all fail through
 * tgc_kernel_fail with the same words on both devices.
 *
 * Example usage:
 *     int64_t dims[TGC_MAX_RANK], strides[TGC_MAX_RANK];
 *     tgc_status st = tgc_view_transpose(c, x, dims, strides);
 *     if (st != TGC_OK) return st;
 *     // copy x[sum(i_k * strides[k])] to y[i_0, .., i_r-1] over dims
 */
#ifndef TGC_DEVICES_STRIDED_VIEW_H
#define TGC_DEVICES_STRIDED_VIEW_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdint.h>

/* Row-major strides (in elements) of dims[0..rank). */
void tgc_view_contiguous_strides(int rank, const int64_t *dims, int64_t *strides);

/* Transpose-13 over x (rank r): out.dims[i] = x.dims[perm[i]], perm the
 * node's attribute (default: the axes reversed), which must be a
 * permutation of 0..r-1. Fills dims[0..r) and strides[0..r). */
tgc_status tgc_view_transpose(tgc_kernel_ctx *c, const tgc_value *x, int64_t *dims, int64_t *strides);

/* Slice-13 over x (rank r) with k entries of starts and ends, and axes and
 * steps (each NULL when omitted: 0..k-1 and 1). Axes count from the back
 * when negative and may not repeat; steps may not be 0; axes not listed
 * are taken whole. Fills dims[0..r), strides[0..r) and *offset. */
tgc_status tgc_view_slice(tgc_kernel_ctx *c, const tgc_value *x, int k, const int64_t *starts, const int64_t *ends,
                          const int64_t *axes, const int64_t *steps, int64_t *dims, int64_t *strides,
                          int64_t *offset);

/* Expand-13: the numpy broadcast of x's dims and target[0..n) (which may be
 * shorter than x's rank; a 1 there keeps x's dim). Fills *rank (the larger
 * of the two), dims[0..*rank) and strides[0..*rank) (0 along the axes x
 * repeats). */
tgc_status tgc_view_expand(tgc_kernel_ctx *c, const tgc_value *x, const int64_t *target, int n, int *rank,
                           int64_t *dims, int64_t *strides);

#endif
