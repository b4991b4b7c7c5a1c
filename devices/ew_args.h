/* What an elementwise row's kernel reads besides its tensors, read the same
 * way by every device (devices/cpu/kernels_elementwise.c and
 * devices/opencl/kernels_elementwise.c): the row's parameters P0..P2 and
 * the dtype rules of a binary row.
 *
 * Example usage (in a kernel):
 *     tgc_ew_params p;
 *     if (tgc_ew_read_params(c, r, &p) != TGC_OK) return TGC_ERR_RUNTIME;
 */
#ifndef TGC_DEVICES_EW_ARGS_H
#define TGC_DEVICES_EW_ARGS_H

#include "devices/kernel.h"
#include "graph/elementwise.h"

#include <stdint.h>

/* A row's parameters (P0..P2): f for float32/float16/bfloat16, d for
 * float64, i for integer ones (uint64 as its bits). */
typedef struct tgc_ew_params {
    float f[TGC_EW_MAX_PARAMS];
    double d[TGC_EW_MAX_PARAMS];
    int64_t i[TGC_EW_MAX_PARAMS];
} tgc_ew_params;

/* A parameter given as a double, as an integer row reads it: truncated, and
 * saturated to int64's range (NaN: 0), never past it (a fused group's
 * float parameters come from the model's constants). */
static inline int64_t tgc_ew_param_int(double v) {
    if (!(v == v)) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* Fills *p for row r on node c: the row's float attributes from the node
 * (an integer attribute taken as a float too; absent: the row's default),
 * its integer attributes (in f and i), its word attribute (the word's
 * index, in f and i), or, for Clip-13, its bounds from inputs 1 and 2
 * (optional one-element host-memory tensors of input 0's dtype; absent:
 * the dtype's lowest and highest); Mean's divisor P0 is 1 (the kernel
 * sets it for the last pass). Fails through tgc_kernel_fail on a
 * malformed bound or a word attribute that is neither word. */
tgc_status tgc_ew_read_params(tgc_kernel_ctx *c, const tgc_ew_row *r, tgc_ew_params *p);

/* A binary row's inputs (two, or Min/Max's one or more) share one dtype,
 * and its output is that dtype (bool for a comparison). Fails through
 * tgc_kernel_fail naming what differs. */
tgc_status tgc_ew_check_binary_dtypes(tgc_kernel_ctx *c, const tgc_ew_row *r);

#endif
