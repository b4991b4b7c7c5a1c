/* The OpenCL device: discovery, context and in-order queue, buffers,
 * copies, and kernel launches. Programs are built (or loaded from the disk
 * cache) by cl_program.c.
 *
 * Buffers come from the device's arena (bfc_allocator.c): its regions are
 * large cl_mem buffers, and each tgc buffer is a sub-buffer of one, so
 * kernels still take a plain cl_mem. Reusing a freed chunk is safe without
 * waiting: every command on the device goes through its one in-order queue
 * (CLBlast's too), so work queued on the old sub-buffer finishes before
 * work on the new one starts, and releasing a sub-buffer or a region is
 * deferred by OpenCL until commands using it are done. */
#include "devices/opencl/opencl.h"

#include "devices/deferred_checks.h"
#include "devices/device_events.h"
#include "devices/kernel_checks.h"

#include "devices/opencl/cl_program.h"
#include "devices/opencl/gemm_tiles.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/diag.h"

#include "devices/opencl/clblast_api.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_CL_DEVICES 16

/* The devices that serve as gpu0, gpu1...: GPUs in platform order, else
 * every device (so PoCL's CPU device runs the GPU path). */
static int select_devices(cl_platform_id *platforms, cl_device_id *devices, int max) {
    cl_platform_id all[16];
    cl_uint n_platforms = 0;
    if (clGetPlatformIDs(16, all, &n_platforms) != CL_SUCCESS) return 0;
    if (n_platforms > 16) n_platforms = 16;
    for (int pass = 0; pass < 2; pass++) {
        cl_device_type want = pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
        int count = 0;
        for (cl_uint p = 0; p < n_platforms; p++) {
            cl_device_id ids[MAX_CL_DEVICES];
            cl_uint n = 0;
            if (clGetDeviceIDs(all[p], want, MAX_CL_DEVICES, ids, &n) != CL_SUCCESS) continue;
            for (cl_uint i = 0; i < n && i < MAX_CL_DEVICES && count < max; i++) {
                platforms[count] = all[p];
                devices[count++] = ids[i];
            }
        }
        if (count > 0) return count;
    }
    return 0;
}

static const char *type_word(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return "gpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    if (t & CL_DEVICE_TYPE_CPU) return "cpu";
    return "other";
}

/* Free device memory where the platform reports it (AMD's extension query);
 * -1 elsewhere. */
static int64_t free_memory(cl_device_id id) {
    cl_ulong kib[2] = {0, 0};
    const cl_device_info CL_DEVICE_GLOBAL_FREE_MEMORY_AMD_ = 0x4039;
    if (clGetDeviceInfo(id, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD_, sizeof kib, kib, NULL) == CL_SUCCESS)
        return (int64_t)kib[0] * 1024;
    return -1;
}

static void describe(cl_platform_id platform, cl_device_id id, tgc_cl_info *info) {
    memset(info, 0, sizeof *info);
    cl_device_type type = 0;
    cl_ulong mem = 0;
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof info->name - 1, info->name, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform - 1, info->platform, NULL);
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof info->compute_units, &info->compute_units, NULL);
    clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    snprintf(info->type, sizeof info->type, "%s", type_word(type));
    info->global_mem_size = mem;
    info->free_mem = free_memory(id);
}

void tgc_cl_list(tgc_cl_info *out, int max, int *count) {
    cl_platform_id platforms[MAX_CL_DEVICES];
    cl_device_id ids[MAX_CL_DEVICES];
    int n = select_devices(platforms, ids, MAX_CL_DEVICES);
    *count = 0;
    for (int i = 0; i < n && i < max; i++) describe(platforms[i], ids[i], &out[(*count)++]);
}

const char *tgc_cl_error_name(cl_int err) {
    switch (err) {
#define NAME(e) \
    case e: return #e;
        NAME(CL_SUCCESS) NAME(CL_DEVICE_NOT_FOUND) NAME(CL_DEVICE_NOT_AVAILABLE) NAME(CL_COMPILER_NOT_AVAILABLE)
        NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE) NAME(CL_OUT_OF_RESOURCES) NAME(CL_OUT_OF_HOST_MEMORY)
        NAME(CL_PROFILING_INFO_NOT_AVAILABLE) NAME(CL_MEM_COPY_OVERLAP) NAME(CL_IMAGE_FORMAT_MISMATCH)
        NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED) NAME(CL_BUILD_PROGRAM_FAILURE) NAME(CL_MAP_FAILURE)
        NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET) NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        NAME(CL_COMPILE_PROGRAM_FAILURE) NAME(CL_LINKER_NOT_AVAILABLE) NAME(CL_LINK_PROGRAM_FAILURE)
        NAME(CL_DEVICE_PARTITION_FAILED) NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) NAME(CL_INVALID_VALUE)
        NAME(CL_INVALID_DEVICE_TYPE) NAME(CL_INVALID_PLATFORM) NAME(CL_INVALID_DEVICE) NAME(CL_INVALID_CONTEXT)
        NAME(CL_INVALID_QUEUE_PROPERTIES) NAME(CL_INVALID_COMMAND_QUEUE) NAME(CL_INVALID_HOST_PTR)
        NAME(CL_INVALID_MEM_OBJECT) NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) NAME(CL_INVALID_IMAGE_SIZE)
        NAME(CL_INVALID_SAMPLER) NAME(CL_INVALID_BINARY) NAME(CL_INVALID_BUILD_OPTIONS) NAME(CL_INVALID_PROGRAM)
        NAME(CL_INVALID_PROGRAM_EXECUTABLE) NAME(CL_INVALID_KERNEL_NAME) NAME(CL_INVALID_KERNEL_DEFINITION)
        NAME(CL_INVALID_KERNEL) NAME(CL_INVALID_ARG_INDEX) NAME(CL_INVALID_ARG_VALUE) NAME(CL_INVALID_ARG_SIZE)
        NAME(CL_INVALID_KERNEL_ARGS) NAME(CL_INVALID_WORK_DIMENSION) NAME(CL_INVALID_WORK_GROUP_SIZE)
        NAME(CL_INVALID_WORK_ITEM_SIZE) NAME(CL_INVALID_GLOBAL_OFFSET) NAME(CL_INVALID_EVENT_WAIT_LIST)
        NAME(CL_INVALID_EVENT) NAME(CL_INVALID_OPERATION) NAME(CL_INVALID_GL_OBJECT) NAME(CL_INVALID_BUFFER_SIZE)
        NAME(CL_INVALID_MIP_LEVEL) NAME(CL_INVALID_GLOBAL_WORK_SIZE) NAME(CL_INVALID_PROPERTY)
#undef NAME
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an unknown OpenCL error";
    }
}

static tgc_cl_device *cl_of(tgc_device *d) { return (tgc_cl_device *)d; }

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;

void tgc_cl_blas_lock(void) { pthread_mutex_lock(&blas_lock); }
void tgc_cl_blas_unlock(void) { pthread_mutex_unlock(&blas_lock); }

static tgc_status cl_alloc(tgc_device *d, size_t nbytes, void **mem) {
    tgc_cl_device *c = cl_of(d);
    cl_int err;
    cl_mem m = clCreateBuffer(c->context, CL_MEM_READ_WRITE, nbytes, NULL, &err);
    if (err != CL_SUCCESS) return TGC_ERR_NOMEM;
    pthread_mutex_lock(&c->lock);
    c->counters.mems++;
    c->counters.allocations++;
    pthread_mutex_unlock(&c->lock);
    *mem = m;
    return TGC_OK;
}

/* Release defers the memory's reuse until queued commands using it finish
 * (OpenCL 1.2, clReleaseMemObject), so freeing never waits. */
static void cl_free(tgc_device *d, void *mem) {
    tgc_cl_device *c = cl_of(d);
    clReleaseMemObject((cl_mem)mem);
    pthread_mutex_lock(&c->lock);
    c->counters.mems--;
    pthread_mutex_unlock(&c->lock);
}

/* Arena regions: plain buffers, counted apart from the sub-buffers. */
static void *cl_region_alloc(tgc_device *d, size_t nbytes) {
    tgc_cl_device *c = cl_of(d);
    cl_int err;
    cl_mem m = clCreateBuffer(c->context, CL_MEM_READ_WRITE, nbytes, NULL, &err);
    if (err != CL_SUCCESS) return NULL;
    pthread_mutex_lock(&c->lock);
    c->counters.regions++;
    c->counters.allocations++;
    pthread_mutex_unlock(&c->lock);
    return m;
}

static void cl_region_free(tgc_device *d, void *region, size_t nbytes) {
    (void)nbytes;
    tgc_cl_device *c = cl_of(d);
    clReleaseMemObject((cl_mem)region);
    pthread_mutex_lock(&c->lock);
    c->counters.regions--;
    pthread_mutex_unlock(&c->lock);
}

/* A sub-buffer of the region; the offset is a multiple of the arena's
 * alignment, which covers CL_DEVICE_MEM_BASE_ADDR_ALIGN. */
static tgc_status cl_view_create(tgc_device *d, void *region, size_t offset, size_t nbytes, void **mem) {
    tgc_cl_device *c = cl_of(d);
    cl_buffer_region r = {offset, nbytes};
    cl_int err;
    cl_mem m = clCreateSubBuffer((cl_mem)region, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    if (err != CL_SUCCESS) return TGC_ERR_NOMEM;
    pthread_mutex_lock(&c->lock);
    c->counters.mems++;
    pthread_mutex_unlock(&c->lock);
    *mem = m;
    return TGC_OK;
}

static void cl_view_release(tgc_device *d, void *mem, size_t nbytes) {
    (void)nbytes;
    cl_free(d, mem);
}

static void *cl_host_ptr(tgc_device *d, void *mem) {
    (void)d;
    (void)mem;
    return NULL;
}

static uint64_t enqueued_now(tgc_cl_device *c) {
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->enqueued;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* A blocking call returned: one host wait; the `done` first commands are
 * done (those enqueued before the call). */
static void waited(tgc_cl_device *c, uint64_t done) {
    pthread_mutex_lock(&c->lock);
    c->counters.host_waits++;
    if (done > c->drained) c->drained = done;
    pthread_mutex_unlock(&c->lock);
}

/* Blocking: the host memory may be reused as soon as this returns. */
static tgc_status cl_copy_from_host(tgc_device *d, void *dst, size_t offset, const void *src, size_t nbytes) {
    if (nbytes == 0) return TGC_OK;
    uint64_t before = enqueued_now(cl_of(d));
    cl_int err = clEnqueueWriteBuffer(cl_of(d)->queue, (cl_mem)dst, CL_TRUE, offset, nbytes, src, 0, NULL, NULL);
    waited(cl_of(d), err == CL_SUCCESS ? before : 0);
    return err == CL_SUCCESS ? TGC_OK : TGC_ERR_RUNTIME;
}

/* Not blocking: src must stay as it is until the queue has run the copy
 * (a later blocking copy or finish). */
static tgc_status cl_copy_from_host_async(tgc_device *d, void *dst, size_t offset, const void *src, size_t nbytes) {
    if (nbytes == 0) return TGC_OK;
    cl_int err = clEnqueueWriteBuffer(cl_of(d)->queue, (cl_mem)dst, CL_FALSE, offset, nbytes, src, 0, NULL, NULL);
    if (err == CL_SUCCESS) tgc_cl_count_command(d);
    return err == CL_SUCCESS ? TGC_OK : TGC_ERR_RUNTIME;
}

static tgc_status cl_copy_to_host(tgc_device *d, void *dst, void *src, size_t offset, size_t nbytes) {
    if (nbytes == 0) return TGC_OK;
    uint64_t before = enqueued_now(cl_of(d));
    cl_int err = clEnqueueReadBuffer(cl_of(d)->queue, (cl_mem)src, CL_TRUE, offset, nbytes, dst, 0, NULL, NULL);
    waited(cl_of(d), err == CL_SUCCESS ? before : 0);
    return err == CL_SUCCESS ? TGC_OK : TGC_ERR_RUNTIME;
}

tgc_status tgc_cl_upload_owned(tgc_kernel_ctx *c, cl_mem m, void *block, size_t nbytes) {
    tgc_cl_device *d = cl_of(c->device);
    cl_int err;
    if (c->checks != NULL && tgc_deferred_checks_keep(c->checks, block, nbytes)) { /* freed at the step's end */
        err = clEnqueueWriteBuffer(d->queue, m, CL_FALSE, 0, nbytes, block, 0, NULL, NULL);
        if (err == CL_SUCCESS) tgc_cl_count_command(c->device);
    } else {
        uint64_t before = enqueued_now(d);
        err = clEnqueueWriteBuffer(d->queue, m, CL_TRUE, 0, nbytes, block, 0, NULL, NULL);
        waited(d, err == CL_SUCCESS ? before : 0);
        tgc_free(block);
    }
    if (err != CL_SUCCESS)
        return tgc_kernel_fail(c, "%s: writing %zu bytes to the device failed: %s", tgc_kernel_op_name(c), nbytes,
                               tgc_cl_error_name(err));
    return TGC_OK;
}

void tgc_cl_note_event(tgc_kernel_ctx *c, cl_event event, const char *name) {
    if (event == NULL) return;
    if (c->events == NULL || !tgc_device_events_add(c->events, event, c->device, c->node, name)) clReleaseEvent(event);
}

static bool cl_event_times(tgc_device *d, void *handle, uint64_t *queued_ns, uint64_t *start_ns, uint64_t *end_ns) {
    (void)d;
    cl_ulong q = 0, s = 0, e = 0;
    cl_event ev = handle;
    bool ok = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL) == CL_SUCCESS &&
              clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL) == CL_SUCCESS &&
              clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) == CL_SUCCESS;
    *queued_ns = q;
    *start_ns = s;
    *end_ns = e;
    return ok;
}

static void cl_event_release(tgc_device *d, void *handle) {
    (void)d;
    clReleaseEvent((cl_event)handle);
}

tgc_status tgc_cl_check_flag(tgc_kernel_ctx *c, cl_mem flag, const char *reason) {
    tgc_cl_device *d = cl_of(c->device);
    int32_t *later = c->checks != NULL ? tgc_deferred_checks_add(c->checks, c->node, c->device->name, reason) : NULL;
    cl_int err;
    if (later != NULL) { /* the step looks at it after its devices synchronize */
        err = clEnqueueReadBuffer(d->queue, flag, CL_FALSE, 0, sizeof *later, later, 0, NULL, NULL);
        if (err == CL_SUCCESS) tgc_cl_count_command(c->device);
    } else {
        int32_t v = 0;
        uint64_t before = enqueued_now(d);
        err = clEnqueueReadBuffer(d->queue, flag, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
        waited(d, err == CL_SUCCESS ? before : 0);
        if (err == CL_SUCCESS && v != 0) return tgc_kernel_fail(c, "%s", reason);
    }
    if (err != CL_SUCCESS) return tgc_kernel_fail(c, "reading a check's verdict failed: %s", tgc_cl_error_name(err));
    return TGC_OK;
}

/* A finish, unless a blocking copy has seen every command enqueued so far
 * done (then there is nothing to wait for, and no wait is counted: a
 * step's fetch of its outputs is then its last wait). */
static tgc_status cl_synchronize(tgc_device *d) {
    tgc_cl_device *c = cl_of(d);
    pthread_mutex_lock(&c->lock);
    uint64_t before = c->enqueued;
    bool idle = c->drained >= before;
    pthread_mutex_unlock(&c->lock);
    if (idle) return TGC_OK;
    cl_int err = clFinish(c->queue);
    waited(c, err == CL_SUCCESS ? before : 0);
    return err == CL_SUCCESS ? TGC_OK : TGC_ERR_RUNTIME;
}

static void cl_activity(tgc_device *d, tgc_device_activity *out) {
    tgc_cl_device *c = cl_of(d);
    pthread_mutex_lock(&c->lock);
    *out = (tgc_device_activity){c->counters.launches, c->counters.host_waits, c->counters.allocations};
    pthread_mutex_unlock(&c->lock);
}

/* Adds to d's activity counts: launches, waits, allocations, and commands
 * enqueued without waiting (launches are such commands too). */
static void add_counts(tgc_device *d, int64_t launches, int64_t waits, int64_t allocations, int64_t commands) {
    tgc_cl_device *c = cl_of(d);
    pthread_mutex_lock(&c->lock);
    c->counters.launches += launches;
    c->counters.host_waits += waits;
    c->counters.allocations += allocations;
    c->enqueued += (uint64_t)(launches + commands);
    pthread_mutex_unlock(&c->lock);
}

void tgc_cl_count_wait(tgc_device *d) { add_counts(d, 0, 1, 0, 0); }
void tgc_cl_count_launches(tgc_device *d, int64_t n) { add_counts(d, n, 0, 0, 0); }
void tgc_cl_count_command(tgc_device *d) { add_counts(d, 0, 0, 0, 1); }

static void cl_destroy(tgc_device *d) {
    tgc_cl_device *c = cl_of(d);
    if (c->queue != NULL) clFinish(c->queue);
    tgc_cl_programs_release(c);
    tgc_cl_tiles_release(c);
    /* CLBlast caches programs per context and keeps the context alive: let
     * go of them so the context really goes (it rebuilds on next use). */
    if (tgc_clblast_is_open()) {
        tgc_cl_blas_lock();
        tgc_clblast.clear_cache();
        tgc_cl_blas_unlock();
    }
    if (c->queue != NULL) clReleaseCommandQueue(c->queue);
    if (c->context != NULL) clReleaseContext(c->context);
    pthread_mutex_destroy(&c->lock);
    tgc_free(c);
}

static const tgc_device_ops cl_ops = {
    .alloc = cl_alloc,
    .free = cl_free,
    .host_ptr = cl_host_ptr,
    .copy_from_host = cl_copy_from_host,
    .copy_to_host = cl_copy_to_host,
    .copy_from_host_async = cl_copy_from_host_async,
    .synchronize = cl_synchronize,
    .event_times = cl_event_times,
    .event_release = cl_event_release,
    .destroy = cl_destroy,
    .activity = cl_activity,
};

static const tgc_arena_ops cl_arena_ops = {
    .region_alloc = cl_region_alloc,
    .region_free = cl_region_free,
    .view_create = cl_view_create,
    .view_release = cl_view_release,
};

#define CL_INITIAL_REGION ((size_t)4 << 20)
#define CL_MAX_REGION ((size_t)1 << 30)

/* The arena: chunks aligned to 256 bytes or to the device's base address
 * alignment for sub-buffers, whichever is more; regions no larger than one
 * buffer may be. */
static tgc_status arena_init(tgc_cl_device *c) {
    cl_uint bits = 0;
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(c->id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    clGetDeviceInfo(c->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    size_t align = 256;
    while (align < bits / 8) align *= 2;
    size_t max_region = CL_MAX_REGION;
    if (max_alloc != 0 && max_alloc < max_region) max_region = (size_t)max_alloc & ~(align - 1);
    size_t initial = CL_INITIAL_REGION < max_region ? CL_INITIAL_REGION : max_region;
    tgc_arena_config cfg = {&cl_arena_ops, align, initial, max_region};
    return tgc_device_arena_init(&c->base, &cfg);
}

static tgc_status no_such_device(int index, int count, tgc_diags *diags) {
    char list[2048] = "cpu";
    tgc_cl_info infos[MAX_CL_DEVICES];
    int n = 0;
    tgc_cl_list(infos, MAX_CL_DEVICES, &n);
    for (int i = 0; i < n; i++) {
        char one[300];
        snprintf(one, sizeof one, ", gpu%d (%.200s)", i, infos[i].name);
        strncat(list, one, sizeof list - strlen(list) - 1);
    }
    if (count == 0)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "unknown-device",
                              "device 'gpu%d' is not available: OpenCL has no platform here (devices: %s)", index, list);
    return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "unknown-device",
                          "device 'gpu%d' is not available (devices: %s)", index, list);
}

tgc_status tgc_cl_device_create(int index, tgc_diags *diags, tgc_device **out) {
    *out = NULL;
    cl_platform_id platforms[MAX_CL_DEVICES];
    cl_device_id ids[MAX_CL_DEVICES];
    int n = select_devices(platforms, ids, MAX_CL_DEVICES);
    if (index < 0 || index >= n) return no_such_device(index, n, diags);
    tgc_cl_device *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return TGC_ERR_NOMEM;
    tgc_device_init(&c->base, &cl_ops, TGC_DEVICE_GPU, index);
    pthread_mutex_init(&c->lock, NULL);
    c->platform = platforms[index];
    c->id = ids[index];
    clGetDeviceInfo(c->id, CL_DEVICE_NAME, sizeof c->device_name - 1, c->device_name, NULL);
    clGetDeviceInfo(c->id, CL_DRIVER_VERSION, sizeof c->driver_version - 1, c->driver_version, NULL);
    clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof c->platform_name - 1, c->platform_name, NULL);
    clGetDeviceInfo(c->id, CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
    clGetDeviceInfo(c->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof c->compute_units, &c->compute_units, NULL);
    clGetDeviceInfo(c->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof c->global_mem_size, &c->global_mem_size, NULL);
    cl_int err;
    c->context = clCreateContext(NULL, 1, &c->id, NULL, NULL, &err);
    /* Profiling on: a traced step asks its kernels' device-side times (devices/device_events.h). */
    if (err == CL_SUCCESS) c->queue = clCreateCommandQueue(c->context, c->id, CL_QUEUE_PROFILING_ENABLE, &err);
    tgc_status s = TGC_OK;
    if (err != CL_SUCCESS)
        s = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "opencl", "gpu%d (%s): cannot open: %s", index,
                           c->device_name, tgc_cl_error_name(err));
    if (s == TGC_OK) s = tgc_cl_programs_build(c, diags);
    if (s == TGC_OK) tgc_cl_tiles_load(c);
    if (s == TGC_OK && arena_init(c) != TGC_OK) {
        tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "out-of-memory", "gpu%d (%s): no host memory for its arena",
                       index, c->device_name);
        s = TGC_ERR_NOMEM;
    }
    if (s != TGC_OK) {
        cl_destroy(&c->base);
        return s;
    }
    *out = &c->base;
    return TGC_OK;
}

cl_int tgc_cl_launch(tgc_cl_device *c, cl_kernel k, cl_uint work_dim, const size_t *global, const size_t *local,
                     int n_args, const tgc_cl_arg *args, cl_event *event) {
    cl_int err = CL_SUCCESS;
    for (int i = 0; err == CL_SUCCESS && i < n_args; i++)
        err = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
    if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(c->queue, k, work_dim, NULL, global, local, 0, NULL, event);
    if (err == CL_SUCCESS) c->counters.launches++, c->enqueued++;
    return err;
}

tgc_status tgc_cl_enqueue(tgc_kernel_ctx *ctx, const char *name, cl_uint work_dim, const size_t *global,
                          const size_t *local, int n_args, const tgc_cl_arg *args) {
    tgc_cl_device *c = cl_of(ctx->device);
    for (cl_uint i = 0; i < work_dim; i++)
        if (global[i] == 0) return TGC_OK; /* nothing to do: OpenCL rejects empty ranges */
    cl_event event = NULL;
    pthread_mutex_lock(&c->lock);
    cl_kernel k = tgc_cl_kernel_get(c, name);
    cl_int err = k == NULL ? CL_INVALID_KERNEL_NAME
                           : tgc_cl_launch(c, k, work_dim, global, local, n_args, args, ctx->events ? &event : NULL);
    pthread_mutex_unlock(&c->lock);
    tgc_cl_note_event(ctx, event, name);
    if (err != CL_SUCCESS) return tgc_kernel_fail(ctx, "OpenCL kernel '%s': %s", name, tgc_cl_error_name(err));
    return TGC_OK;
}

cl_command_queue tgc_cl_queue(tgc_device *d) { return cl_of(d)->queue; }

tgc_buffer *tgc_cl_scratch(tgc_device *d, size_t nbytes) {
    tgc_buffer *b = NULL;
    if (nbytes > (size_t)TGC_MAX_BYTES) return NULL; /* a size that did not fit (support/checked.h) */
    return tgc_buffer_alloc(d, nbytes ? nbytes : 4, &b) == TGC_OK ? b : NULL;
}

void tgc_cl_scratch_release(tgc_buffer *b) { tgc_buffer_release(b); }

tgc_cl_counters tgc_cl_device_counters(tgc_device *d) {
    tgc_cl_device *c = cl_of(d);
    pthread_mutex_lock(&c->lock);
    tgc_cl_counters n = c->counters;
    pthread_mutex_unlock(&c->lock);
    return n;
}
