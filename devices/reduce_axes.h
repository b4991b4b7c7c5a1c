/* Axis arguments of the reduction kernels, shared by the cpu and gpu
 * (devices/cpu/kernels_reduce.c, devices/opencl/kernels_reduce.c): one
 * axis normalised into [0, rank), the ReduceX ops' list of axes read
 * into a mask of reduced axes and the output dims, and ArgMax's / ArgMin's axis and
 * output checked. Device-independent:
 * it reads only attributes and dims.
 *
 * Example usage:
 *     bool reduced[TGC_MAX_RANK];
 *     int64_t out[TGC_MAX_RANK];
 *     int out_rank;
 *     st = tgc_reduce_axes_read(c, op, axes, n_axes, x->rank, x->dims, reduced, out, &out_rank);
 *     if (st != TGC_OK) return st;
 */
#ifndef TGC_DEVICES_REDUCE_AXES_H
#define TGC_DEVICES_REDUCE_AXES_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Normalises axis `a` of a rank-`rank` tensor into [0, rank) (ONNX accepts
 * [-rank, rank)) and stores it in *out. Otherwise fails the kernel with a
 * message that starts with `op` and names the argument `what`, and returns
 * its status. */
tgc_status tgc_reduce_norm_axis(tgc_kernel_ctx *c, const char *op, const char *what, int64_t a, int rank, int *out);

/* Reads the reduced axes of a rank-`rank` input of dims `dims` from
 * axes[0..n_axes) (each in [-rank, rank), none twice; n_axes 0: every
 * axis) into reduced[0..rank), and the output dims into out[0..*out_rank):
 * a reduced axis stays as 1 when the node's keepdims attribute (default 1)
 * is set, and is dropped otherwise. Fails the kernel (message starting with
 * `op`) and returns its status on an axis out of range or listed twice. */
tgc_status tgc_reduce_axes_read(tgc_kernel_ctx *c, const char *op, const int64_t *axes, size_t n_axes, int rank,
                                const int64_t *dims, bool *reduced, int64_t *out, int *out_rank);

/* Checks an ArgMax-13 or ArgMin-13 node's output (int64, of the dims that the input's
 * dims and the axis and keepdims attributes give) for input dims
 * dims[0..rank) (rank >= 1) and reads its geometry: the input is seen as
 * [*outer, *n, *inner] around the axis (*axis, normalised), and *last is
 * select_last_point_index. Fails the kernel (message starting with `op`)
 * and returns its status otherwise, also when the axis is empty while the
 * output is not (no element to name). */
tgc_status tgc_reduce_argmax_read(tgc_kernel_ctx *c, const char *op, int rank, const int64_t *dims, int *axis,
                                  int64_t *outer, int64_t *n, int64_t *inner, bool *last);

#endif
