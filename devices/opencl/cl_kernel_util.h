/* Helpers the OpenCL kernels' host sides share (defined in
 * kernels_shape.c). Private to devices/opencl. */
#ifndef TGC_DEVICES_OPENCL_KERNEL_UTIL_H
#define TGC_DEVICES_OPENCL_KERNEL_UTIL_H

#include "devices/kernel_checks.h"
#include "devices/opencl/opencl.h"

#include <stdbool.h>

/* Checks the input/output counts and that every non-host tensor is on this
 * device with a buffer large enough for its dims; fails with a message. */
tgc_status tgc_cl_check(tgc_kernel_ctx *c, int min_inputs, int n_outputs, uint32_t host_inputs);

/* Enqueues a 1-D kernel over n work items (nothing when n == 0). */
tgc_status tgc_cl_run1d(tgc_kernel_ctx *c, const char *name, int64_t n, int n_args, const tgc_cl_arg *args);

/* Enqueues a device-to-device copy of nbytes (no wait). */
tgc_status tgc_cl_copy(tgc_kernel_ctx *c, cl_mem dst, size_t dst_off, cl_mem src, size_t src_off, size_t nbytes);

#endif
