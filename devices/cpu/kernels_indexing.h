/* Private to the cpu indexing kernels (kernels_gather.c, kernels_scatter.c,
 * kernels_arrange.c, kernels_select.c, listed in kernels_indexing.c): the
 * kernels, and the argument checks the gathers and scatters share. Only
 * tgc_cpu_kernels_indexing[] leaves the family. Each check fails through
 * tgc_kernel_fail naming the op, so the node's error says what was wrong. */
#ifndef TGC_DEVICES_CPU_KERNELS_INDEXING_H
#define TGC_DEVICES_CPU_KERNELS_INDEXING_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

/* Input i holds indices: int32 or int64. */
tgc_status tgc_cpu_need_indices(tgc_kernel_ctx *c, int i);

/* The error for index value v (element k of the indices) outside
 * [-size, size) of `axis` of data. Returns TGC_ERR_RUNTIME. */
tgc_status tgc_cpu_index_range_fail(tgc_kernel_ctx *c, int64_t v, int64_t k, int axis, const tgc_value *data);

/* GatherElements' and ScatterElements' rules: data of rank >= 1, indices
 * (input 1, int32/int64, host memory) of the same rank and no larger on
 * any axis but `axis` (the attribute, default 0, made non-negative in
 * *axis), every index value in [-s, s) for the axis size s. */
tgc_status tgc_cpu_elements_args(tgc_kernel_ctx *c, const tgc_value *data, const tgc_value *ind, int *axis);

/* GatherND's and ScatterND's geometry: m index values per tuple address
 * the data axes b..b+m-1 with strides[] (elements); `tuples` tuples per
 * batch (of `batches`, each a `block` of data elements), each choosing a
 * slice of `slice` contiguous elements. */
typedef struct tgc_cpu_nd {
    int m;
    int64_t batches, tuples, slice, block;
    int64_t strides[TGC_MAX_RANK];
} tgc_cpu_nd;

/* Checks data and indices (input 1) for GatherND/ScatterND with batch
 * dims b (ScatterND: 0): ranks, the tuple length m in [1, r - b], equal
 * batch dims, and every index value in range for its axis; fills *nd. */
tgc_status tgc_cpu_nd_args(tgc_kernel_ctx *c, const tgc_value *data, const tgc_value *ind, int b, tgc_cpu_nd *nd);

/* The data offset (elements, within its batch) that tuple t (counted over
 * all batches) addresses; indices of dtype it at ip, checked already. */
int64_t tgc_cpu_nd_offset(const tgc_cpu_nd *nd, const tgc_value *data, int b, tgc_dtype it, const void *ip,
                          int64_t t);

/* The kernels, each in the file of its kind. */
tgc_status tgc_cpu_gather_elements(tgc_kernel_ctx *c); /* kernels_gather.c */
tgc_status tgc_cpu_gather_nd(tgc_kernel_ctx *c);
tgc_status tgc_cpu_scatter_elements(tgc_kernel_ctx *c); /* kernels_scatter.c */
tgc_status tgc_cpu_scatter_nd(tgc_kernel_ctx *c);
tgc_status tgc_cpu_tile(tgc_kernel_ctx *c); /* kernels_arrange.c */
tgc_status tgc_cpu_trilu(tgc_kernel_ctx *c);
tgc_status tgc_cpu_eye_like(tgc_kernel_ctx *c);
tgc_status tgc_cpu_one_hot(tgc_kernel_ctx *c);
tgc_status tgc_cpu_cumsum(tgc_kernel_ctx *c);
tgc_status tgc_cpu_reverse_sequence(tgc_kernel_ctx *c);
tgc_status tgc_cpu_top_k(tgc_kernel_ctx *c); /* kernels_select.c */
tgc_status tgc_cpu_nonzero(tgc_kernel_ctx *c);
tgc_status tgc_cpu_compress(tgc_kernel_ctx *c);
tgc_status tgc_cpu_unique(tgc_kernel_ctx *c); /* kernels_unique.c */

#endif
