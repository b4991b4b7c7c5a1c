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

/* tgc_kernel_check_host, and output 0 has input 0's dtype (the kernels
 * that move input 0's elements). */
tgc_status tgc_cpu_shape_check_moves(tgc_kernel_ctx *c, int min_inputs);

/* Element i of an int32 or int64 tensor at host memory p. */
int64_t tgc_cpu_shape_int_at(tgc_dtype dtype, const void *p, int64_t i);

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

/* The least bytes worth a piece of their own in a parallel copy (~5-10 us:
 * half of a 128 KiB copy whose source sits in the other core's cache took
 * 7 us where the whole took 15). */
#define TGC_CPU_COPY_PIECE_BYTES ((int64_t)64 << 10)

/* tgc_cpu_strided_copy split over pool (NULL: on the caller) in pieces of
 * about 64 KiB chosen from the sizes alone (a transpose in bands of rows). */
void tgc_cpu_strided_copy_on(tgc_thread_pool *pool, void *dst, const void *src, size_t esize, int rank,
                             const int64_t *dims, const int64_t *strides, int64_t offset);

/* The kernels, each in the file of its kind. */
tgc_status tgc_cpu_transpose(tgc_kernel_ctx *c); /* kernels_layout.c */
tgc_status tgc_cpu_slice(tgc_kernel_ctx *c);
tgc_status tgc_cpu_expand(tgc_kernel_ctx *c);
tgc_status tgc_cpu_gather(tgc_kernel_ctx *c); /* kernels_index.c */
tgc_status tgc_cpu_concat(tgc_kernel_ctx *c);
tgc_status tgc_cpu_split(tgc_kernel_ctx *c);

#endif
