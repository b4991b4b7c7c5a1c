/* CLBlast, opened at its first use instead of linked (private to
 * devices/opencl/). Linked, the library's static constructors build its
 * whole tuning database when any tgc process starts (about 10 ms of a
 * cpu-only `tgc run`, which never calls it); opened on the first gpu GEMM,
 * only a process that uses the gpu pays. Each function is a pointer in
 * tgc_clblast with the type the CLBlast header declares. */
#ifndef TGC_DEVICES_OPENCL_CLBLAST_API_H
#define TGC_DEVICES_OPENCL_CLBLAST_API_H

#include <clblast_c.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct tgc_clblast_api {
    __typeof__(CLBlastSgemm) *sgemm;
    __typeof__(CLBlastClearCache) *clear_cache;
    /* Both NULL where the library lacks them (CLBlast before 1.5): then
     * CLBlastSgemm allocates a call's temporary buffer itself, outside the
     * device's allocator and its counts (tgc_device_activity). */
    __typeof__(CLBlastSGemmTempBufferSize) *sgemm_temp_size;
    __typeof__(CLBlastSgemmWithTempBuffer) *sgemm_with_temp;
} tgc_clblast_api;

/* The functions, set once tgc_clblast_open has succeeded. */
extern tgc_clblast_api tgc_clblast;

/* Opens CLBlast (TGC_CLBLAST_SONAME, libclblast.so.1) and finds its
 * functions, once per process; thread-safe. true when they are there;
 * false, with the reason in err (the library missing, a function
 * lacking), every time after a failure. */
bool tgc_clblast_open(char *err, size_t err_size);

/* True when CLBlast has been opened (so it may hold caches to clear). */
bool tgc_clblast_is_open(void);

#endif
