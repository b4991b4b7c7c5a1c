/* OpenCL's backend table (devices/backend.h): gpu0, gpu1, ... are the
 * OpenCL devices tgc_cl_list picks, each with its own memory, one
 * in-order queue and a pool of one thread that enqueues. */
#include "devices/backend.h"

#include "devices/opencl/opencl.h"

#include <stdio.h>
#include <string.h>

extern const tgc_kernel_def tgc_gpu_kernels_elementwise[], tgc_gpu_kernels_nn[], tgc_gpu_kernels_shape[],
    tgc_gpu_kernels_reduce[], tgc_gpu_kernels_rnn[], tgc_gpu_kernels_host[], tgc_gpu_kernels_convt[],
    tgc_gpu_kernels_resize[], tgc_gpu_kernels_indexing[], tgc_gpu_kernels_fused[],
    tgc_gpu_kernels_attention[];

static const tgc_kernel_def *const families[] = {
    tgc_gpu_kernels_host, /* first: integer shape ops stay on the host */
    tgc_gpu_kernels_elementwise,
    tgc_gpu_kernels_nn,
    tgc_gpu_kernels_shape,
    tgc_gpu_kernels_reduce,
    tgc_gpu_kernels_rnn,
    tgc_gpu_kernels_convt,
    tgc_gpu_kernels_resize,
    tgc_gpu_kernels_indexing,
    tgc_gpu_kernels_fused,
    tgc_gpu_kernels_attention,
    NULL,
};

#define MAX_LISTED 16

static int cl_list(tgc_device_info *out, int max) {
    tgc_cl_info infos[MAX_LISTED];
    int count = 0;
    tgc_cl_list(infos, MAX_LISTED, &count);
    for (int i = 0; i < count && i < max; i++) {
        tgc_device_info *d = &out[i];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "gpu%d", i % 1000);
        snprintf(d->description, sizeof d->description, "%.255s", infos[i].name);
        snprintf(d->platform, sizeof d->platform, "%.127s", infos[i].platform);
        snprintf(d->type, sizeof d->type, "%.15s", infos[i].type);
        d->compute_units = infos[i].compute_units;
        snprintf(d->isa, sizeof d->isa, "opencl");
        d->total_memory = (int64_t)infos[i].global_mem_size;
        d->used_memory = 0; /* no session of this process holds the device */
        d->free_memory = infos[i].free_mem;
    }
    return count;
}

/* The queue orders the work: one thread enqueues it. */
static int cl_default_threads(void) { return 1; }

const tgc_backend tgc_opencl_backend = {
    .name = "opencl",
    .prefix = "gpu",
    .priority = 20,
    .host_memory = false,
    .workspaces_in_allocator = true,
    .host = false,
    .alignment = 256,
    .default_threads = cl_default_threads,
    .list = cl_list,
    .open = tgc_cl_device_create,
    .families = families,
};
