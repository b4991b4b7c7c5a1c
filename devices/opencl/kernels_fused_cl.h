/* The generated kernels of _FusedElementwise groups on an OpenCL device
 * (devices/opencl/kernels_fused_cl.c): a cache per device of the programs
 * built from generated sources. Private to devices/opencl and its tests. */
#ifndef TGC_DEVICES_OPENCL_KERNELS_FUSED_CL_H
#define TGC_DEVICES_OPENCL_KERNELS_FUSED_CL_H

#include "devices/opencl/opencl.h"

#include <stddef.h>

/* The kernel `name` of the program kernel_text, compiled after the row
 * functions of kernels/elementwise.cl (its text up to the "end of the row
 * functions" mark): _FusedElementwise's generated kernels, and a file of
 * kernels/ built again with a fused activation (tgc_cl_enqueue_act). A
 * kernel seen before on this device answers from the device's cache
 * (counters.fused_hits counts those); a new name of a text seen before
 * shares its program; otherwise the program is built through
 * tgc_cl_program_build (so its disk cache applies: a second process loads
 * the binary) and kept until the device goes. The kernel is owned by the
 * cache. Call with c->lock held. A build failure, or a program without
 * `name`, is TGC_ERR_RUNTIME with the OpenCL build log or the reason in
 * err (truncated to err_size); TGC_ERR_NOMEM when memory runs out. */
tgc_status tgc_cl_fused_kernel(tgc_cl_device *c, const char *kernel_text, const char *name, char *err,
                               size_t err_size, cl_kernel *out);

/* Releases every cached fused program and kernel of c (at device
 * destruction; counters.programs and .kernels go down by as many). */
void tgc_cl_fused_release(tgc_cl_device *c);

#endif
