/* A row-major walk over the elements of a tensor of `rank` dims that
 * keeps a strided offset into another tensor: after tgc_cpu_odo_next the
 * offset is sum(idx[d] * strides[d]). The indexing kernels
 * (kernels_gather.c, kernels_scatter.c) walk their indices with it, a
 * stride of 0 on the axis their index values choose.
 *
 * Example usage:
 *     tgc_cpu_odo o;
 *     tgc_cpu_odo_init(&o, ind->rank, ind->dims, data_strides);
 *     for (int64_t k = 0; k < n; k++, tgc_cpu_odo_next(&o)) use(o.off);
 */
#ifndef TGC_DEVICES_CPU_ODOMETER_H
#define TGC_DEVICES_CPU_ODOMETER_H

#include "graph/shape.h"

#include <stdint.h>

typedef struct tgc_cpu_odo {
    int rank;
    int64_t dims[TGC_MAX_RANK], idx[TGC_MAX_RANK], strides[TGC_MAX_RANK];
    int64_t off;
} tgc_cpu_odo;

/* Starts at element 0 (offset 0). dims and strides are copied. */
static inline void tgc_cpu_odo_init(tgc_cpu_odo *o, int rank, const int64_t *dims, const int64_t *strides) {
    o->rank = rank;
    o->off = 0;
    for (int d = 0; d < rank; d++) {
        o->dims[d] = dims[d];
        o->idx[d] = 0;
        o->strides[d] = strides[d];
    }
}

/* Steps to the next element in row-major order (past the last it wraps to 0). */
static inline void tgc_cpu_odo_next(tgc_cpu_odo *o) {
    for (int d = o->rank - 1; d >= 0; d--) {
        o->off += o->strides[d];
        if (++o->idx[d] < o->dims[d]) return;
        o->off -= o->strides[d] * o->dims[d];
        o->idx[d] = 0;
    }
}

/* The row-major strides (in elements) of a contiguous tensor of dims. */
static inline void tgc_cpu_row_major_strides(int rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

#endif
