/* The OpenCL device (gpuN): one context and one in-order command queue per
 * device; kernels from the .cl files in devices/opencl/kernels, embedded at build time,
 * built once per device and cached on disk. Work is enqueued without
 * waiting: the in-order queue orders it, and the host waits only where it
 * reads a result (a blocking read) or a kernel declares a host argument.
 * Private to the library.
 *
 * Example usage (an OpenCL kernel's host side, in devices/opencl/kernels_NAME.c):
 *     static tgc_status relu_gpu(tgc_kernel_ctx *c) {
 *         cl_int n = (cl_int)tgc_value_numel(&c->outputs[0]);
 *         if (n == 0) return TGC_OK;
 *         tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf), TGC_CL_BUF(c->outputs[0].buf), TGC_CL_INT(n)};
 *         size_t global = (size_t)n;
 *         return tgc_cl_enqueue(c, "relu_f32", 1, &global, NULL, 3, args);
 *     }
 */
#ifndef TGC_DEVICES_OPENCL_H
#define TGC_DEVICES_OPENCL_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "devices/kernel.h"

#define TGC_CL_MAX_PROGRAMS 16

/* Live OpenCL objects tgc created and has not released, per device; tests
 * check they return to zero. Memory objects are counted in two parts: the
 * arena's regions (each one clCreateBuffer), and `mems`, every other
 * cl_mem (a buffer's sub-buffer of a region, a buffer of its own when the
 * arena is off, kernel scratch); live cl_mem objects = mems + regions. */
typedef struct tgc_cl_counters {
    int64_t mems;
    int64_t regions;
    int64_t events;
    int64_t programs;
    int64_t kernels;
    int64_t program_builds; /* programs compiled from source (not the disk cache) */
    int64_t cache_loads;    /* programs created from cached binaries */
    int64_t fused_hits;     /* fused-group kernels found already built (kernels_fused_cl.c) */
    int64_t generated;      /* of `programs`, those the generated cache keeps until the device goes
                             * (kernels_fused_cl.c: fused groups, kernels built with defines or activations) */
    /* since the device opened (tgc_device_activity): */
    int64_t launches;    /* kernels enqueued; a CLBlast call as one */
    int64_t host_waits;  /* blocking copies and finishes */
    int64_t allocations; /* clCreateBuffer calls */
} tgc_cl_counters;

/* CLBlast's temporary buffer for one SGEMM call shape (transposes, m, n,
 * k, offsets and leading dimensions: the arguments its size depends on). */
#define TGC_CL_TEMP_SIZES 256
typedef struct tgc_cl_temp_size {
    size_t key[11];
    size_t bytes;
    bool set;
} tgc_cl_temp_size;

typedef struct tgc_cl_device {
    tgc_device base; /* first: a tgc_device * points here */
    cl_platform_id platform;
    cl_device_id id;
    cl_context context;
    cl_command_queue queue;
    cl_program programs[TGC_CL_MAX_PROGRAMS]; /* one per .cl file */
    int n_programs;
    struct tgc_cl_fused_cache *fused; /* built kernels of fused groups (kernels_fused_cl.c) */
    struct tgc_strmap *tiles;         /* the GEMM kernel's tuned tiles by layer shape (gemm_tiles.c); under lock */
    pthread_mutex_t lock; /* kernel objects: clSetKernelArg + enqueue as one step */
    tgc_cl_counters counters;
    /* Commands enqueued without waiting, and how many of the first of them
     * a blocking copy or a finish has seen done (the in-order queue: a
     * command done, every earlier one is); equal, synchronize has nothing
     * to wait for. Under lock. */
    uint64_t enqueued, drained;
    /* CLBlast's temporary buffer sizes by call shape, a direct-mapped cache
     * (a slot taken by another shape is asked again): asking CLBlast took
     * about 1.5 us a call (PoCL, 200 MatMuls of [64, 64]), a step repeats
     * its shapes. Under tgc_cl_blas_lock. */
    tgc_cl_temp_size temp_sizes[TGC_CL_TEMP_SIZES];
    char device_name[256], platform_name[256], driver_version[128];
    cl_device_type type;
    cl_uint compute_units;
    cl_ulong global_mem_size;
} tgc_cl_device;

/* What `tgc devices` shows of one OpenCL device. */
typedef struct tgc_cl_info {
    char name[256];
    char platform[256];
    char type[16];      /* "gpu", "cpu", "accelerator" */
    unsigned compute_units;
    uint64_t global_mem_size; /* bytes */
    int64_t free_mem;         /* bytes, -1 when the platform does not say */
} tgc_cl_info;

/* Lists the OpenCL devices that serve as gpu0, gpu1, ...: the GPU-type
 * devices in platform order, or, where there are none, every other device
 * (PoCL's CPU device) so the whole path still runs. Writes up to `max` into
 * out and their number into *count (0 when OpenCL has no platform). */
void tgc_cl_list(tgc_cl_info *out, int max, int *count);

/* Opens gpuN: context, queue, programs (from the disk cache when a binary
 * for this source, device, driver and options is there). A missing device
 * is TGC_ERR_INVALID with a message listing the devices there are; a build
 * failure gives the OpenCL build log and names the .cl file. */
tgc_status tgc_cl_device_create(int index, tgc_diags *diags, tgc_device **out);

/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *tgc_cl_error_name(cl_int err);

/* A kernel argument: a value of `size` bytes at `value`. */
typedef struct tgc_cl_arg {
    size_t size;
    const void *value;
} tgc_cl_arg;

#define TGC_CL_BUF(b) ((tgc_cl_arg){sizeof(cl_mem), &(b)->mem})
#define TGC_CL_INT(v) ((tgc_cl_arg){sizeof(cl_int), &(cl_int){(v)}})
#define TGC_CL_LONG(v) ((tgc_cl_arg){sizeof(cl_long), &(cl_long){(v)}})
#define TGC_CL_FLOAT(v) ((tgc_cl_arg){sizeof(cl_float), &(cl_float){(v)}})
/* A small array passed by value: struct members or __constant data must
 * go through a buffer; use TGC_CL_BYTES for a plain struct argument. */
#define TGC_CL_BYTES(p, n) ((tgc_cl_arg){(n), (p)})

/* Enqueues kernel `name` with the given arguments on c->device's queue
 * (global work size rounded up by the caller as the kernel expects; local
 * may be NULL). Does not wait. An OpenCL error is reported through
 * tgc_kernel_fail with the code's name. */
tgc_status tgc_cl_enqueue(tgc_kernel_ctx *c, const char *name, cl_uint work_dim, const size_t *global,
                          const size_t *local, int n_args, const tgc_cl_arg *args);

/* tgc_cl_enqueue of kernel `name` of kernels/<file> built with `defines`
 * (lines of "#define NAME VALUE", the variant of a kernel: NULL, none) and
 * with c->fused_act (executor/fuse.c) compiled in when there is one:
 * TGC_ACT(v) defined as the activation's row function of
 * graph/elementwise.def (its parameters as exact float bits). Either way
 * the file is built again behind the row functions (tgc_cl_fused_kernel:
 * cached per device and on disk); with neither, the plain build. The
 * file's kernels apply TGC_ACT to each value they store (identity in the
 * plain build). A build failure fails the node through tgc_kernel_fail
 * with the build log. */
tgc_status tgc_cl_enqueue_act(tgc_kernel_ctx *c, const char *file, const char *defines, const char *name,
                              cl_uint work_dim, const size_t *global, const size_t *local, int n_args,
                              const tgc_cl_arg *args);

/* Runs kernel `name` as tgc_cl_enqueue_act would, once, and waits for it
 * (a host wait): its time on the device's clock (OpenCL profiling) into
 * *ns; UINT64_MAX when the device did not say. For tuning: the caller
 * runs the kernel again for real. */
tgc_status tgc_cl_time_act(tgc_kernel_ctx *c, const char *file, const char *defines, const char *name,
                           cl_uint work_dim, const size_t *global, const size_t *local, int n_args,
                           const tgc_cl_arg *args, uint64_t *ns);

/* Sets kernel k's arguments and enqueues it on c's queue, counting the
 * launch; call with c->lock held. With `event` (not NULL), the launch's
 * event for the trace (pass it to tgc_cl_note_event after unlocking). The
 * OpenCL status. */
cl_int tgc_cl_launch(tgc_cl_device *c, cl_kernel k, cl_uint work_dim, const size_t *global, const size_t *local,
                     int n_args, const tgc_cl_arg *args, cl_event *event);

/* Hands a launch's event (NULL: none) to c's trace list
 * (tgc_kernel_ctx.events, devices/device_events.h) under the kernel's
 * name, or releases it where there is none. Launches ask for an event
 * only when c->events is set. */
void tgc_cl_note_event(tgc_kernel_ctx *c, cl_event event, const char *name);

/* The verdict of a kernel's check: the int32 at `flag` (device memory,
 * written by kernels already enqueued; 0: passed). Within a step
 * (c->checks), a read that does not wait, into the step's checks: the
 * step fails at its end with `reason` when the flag is set
 * (devices/deferred_checks.h). Elsewhere, or with the step's list full, a
 * blocking read (a host wait) and, when set, tgc_kernel_fail(c, reason).
 * `flag` may be released once this returns (later users come after the
 * read on the in-order queue). */
tgc_status tgc_cl_check_flag(tgc_kernel_ctx *c, cl_mem flag, const char *reason);

/* Copies nbytes of host block `block` (tgc_malloc'd; the caller gives it
 * up) into device memory m: within a step (c->checks), without waiting,
 * the step freeing the block at its end (devices/deferred_checks.h);
 * elsewhere, or with the step's list full, a blocking write (a host wait)
 * and the block freed at once. Fails the node through tgc_kernel_fail. */
tgc_status tgc_cl_upload_owned(tgc_kernel_ctx *c, cl_mem m, void *block, size_t nbytes);

/* Counts a blocking call on d's queue (a read, a write, a finish) as one
 * host wait, n kernels enqueued outside tgc_cl_enqueue (CLBlast's calls)
 * as launches: tgc_device_activity. */
void tgc_cl_count_wait(tgc_device *d);
void tgc_cl_count_launches(tgc_device *d, int64_t n);
/* Notes a command enqueued without waiting that is not a kernel (a copy,
 * a fill): synchronize must then wait for it. */
void tgc_cl_count_command(tgc_device *d);

/* The device's queue, for libraries that enqueue on it (CLBlast). */
cl_command_queue tgc_cl_queue(tgc_device *d);

/* A scratch buffer of nbytes (at least 4) for a kernel's own use (im2col,
 * an index check's flag, CLBlast's temporary buffer), from the device's
 * allocator: its arena's regions, so a steady-state step allocates no
 * device memory, within its limit. Release it once its kernels are
 * enqueued: later users of the memory come after them on the in-order
 * queue. NULL on failure (out of memory, or past the limit). */
tgc_buffer *tgc_cl_scratch(tgc_device *d, size_t nbytes);
void tgc_cl_scratch_release(tgc_buffer *b);

/* CLBlast keeps process-wide state it fills without a lock on first use
 * (its kernel database and program cache), so every call into CLBlast
 * holds this lock. Calls only enqueue work: the lock is held briefly,
 * except for CLBlast's one-time compile of a routine. */
void tgc_cl_blas_lock(void);
void tgc_cl_blas_unlock(void);

/* Counters of live OpenCL objects (see above). */
tgc_cl_counters tgc_cl_device_counters(tgc_device *d);

#endif
