/* Helpers the OpenCL kernels' host sides share (defined in
 * kernels_shape.c). Private to devices/opencl. */
#ifndef TGC_DEVICES_OPENCL_KERNEL_UTIL_H
#define TGC_DEVICES_OPENCL_KERNEL_UTIL_H

#include "devices/kernel_checks.h"
#include "devices/opencl/opencl.h"

#include <stdbool.h>

#define TGC_CL_MAX_ARGS 32

/* Checks the input/output counts and that every non-host tensor is on this
 * device with a buffer large enough for its dims; fails with a message. */
tgc_status tgc_cl_check(tgc_kernel_ctx *c, int min_inputs, int n_outputs, uint32_t host_inputs);

/* Enqueues a 1-D kernel over n work items (nothing when n == 0). */
tgc_status tgc_cl_run1d(tgc_kernel_ctx *c, const char *name, int64_t n, int n_args, const tgc_cl_arg *args);

/* tgc_cl_run1d of a kernel whose last argument is an int32 flag it sets
 * when a check fails (an index out of range): the flag is zeroed first
 * and its verdict taken by tgc_cl_check_flag with `reason` (a failure of
 * the node, now or at the step's end). At most TGC_CL_MAX_ARGS - 1 args. */
tgc_status tgc_cl_run1d_checked(tgc_kernel_ctx *c, const char *name, int64_t n, int n_args, const tgc_cl_arg *args,
                                const char *reason);

/* Enqueues a device-to-device copy of nbytes (no wait). */
tgc_status tgc_cl_copy(tgc_kernel_ctx *c, cl_mem dst, size_t dst_off, cl_mem src, size_t src_off, size_t nbytes);

#endif
