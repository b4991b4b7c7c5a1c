/* Private to the cpu shape and data-movement kernels (kernels_shape.c,
 * kernels_layout.c, kernels_index.c): the checks every one of them makes
 * before touching memory, readers of host-memory shape arguments, and the
 * strided copy they share. Only tgc_cpu_kernels_shape[] leaves the family.
 *
 * These kernels move bytes, never interpret them, so each handles every
 * dtype by its element size. The executor has already computed the output
 * shapes; each kernel recomputes them from its inputs and fails (never
 * writes) when they disagree, so a wrong shape is a message, not a crash. */
#ifndef TGC_DEVICES_CPU_KERNELS_SHAPE_H
#define TGC_DEVICES_CPU_KERNELS_SHAPE_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>

/* True when input i was given (not an omitted optional input). */
bool tgc_cpu_shape_has_input(const tgc_kernel_ctx *c, int i);

/* Checks the tensors the kernel was handed: at least `min_inputs` inputs
 * and `n_outputs` outputs present; every present tensor of rank
 * 0..TGC_MAX_RANK with dims >= 0, a byte size that does not overflow, a
 * buffer at least that large and host-visible memory. TGC_OK, or
 * TGC_ERR_RUNTIME with the reason in c->error. */
tgc_status tgc_cpu_shape_check(tgc_kernel_ctx *c, int min_inputs, int n_outputs);

/* As tgc_cpu_shape_check, and output 0 has input 0's dtype (the kernels
 * that move input 0's elements). */
tgc_status tgc_cpu_shape_check_moves(tgc_kernel_ctx *c, int min_inputs);

/* Element i of an int32 or int64 tensor at host memory p. */
int64_t tgc_cpu_shape_int_at(tgc_dtype dtype, const void *p, int64_t i);

/* Reads the int32/int64 rank-0 or 1-D host input i (`what` names it in
 * messages) into out[0..*n), at most `max` elements. Fails on another dtype
 * or rank, or more than `max` elements. */
tgc_status tgc_cpu_shape_read_ints(tgc_kernel_ctx *c, int i, const char *what, int64_t *out,
                                   int max, int *n);

/* Product of dims[0..n) (the caller has checked it does not overflow). */
int64_t tgc_cpu_dims_product(const int64_t *dims, int n);

/* Copies `nbytes` from src to dst unless they are the same memory (a
 * forwarded buffer) or nbytes is 0. */
void tgc_cpu_copy_bytes(void *dst, const void *src, size_t nbytes);

/* The general strided copy: fills the contiguous tensor dst of `rank` dims
 * `dims` with element size `esize` (1, 2, 4 or 8 bytes, or any other size
 * through memcpy) from src, where output element (i0, i1, ...) comes from
 * source element offset + sum(i_k * strides[k]) (in elements; strides may be
 * negative or 0). Every such source element must lie inside src. Adjacent
 * axes that are contiguous in the source are merged first; contiguous runs
 * go through memcpy, and what reduces to (a batch of) 2-D transposes
 * takes a blocked path. */
void tgc_cpu_strided_copy(void *dst, const void *src, size_t esize, int rank, const int64_t *dims,
                          const int64_t *strides, int64_t offset);

/* The kernels, each in the file of its kind. */
tgc_status tgc_cpu_transpose(tgc_kernel_ctx *c); /* kernels_layout.c */
tgc_status tgc_cpu_slice(tgc_kernel_ctx *c);
tgc_status tgc_cpu_expand(tgc_kernel_ctx *c);
tgc_status tgc_cpu_gather(tgc_kernel_ctx *c); /* kernels_index.c */
tgc_status tgc_cpu_concat(tgc_kernel_ctx *c);
tgc_status tgc_cpu_split(tgc_kernel_ctx *c);

#endif
