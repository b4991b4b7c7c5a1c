/* Devices: a table of functions per device kind (the ggml backend habit),
 * and the reference-counted buffers they hand out. Private to the library.
 *
 * Example usage:
 *     tgc_device *cpu = tgc_cpu_device_create(0);
 *     tgc_buffer *b;
 *     if (tgc_buffer_alloc(cpu, 4096, &b) != TGC_OK) ...   // refs = 1
 *     float *p = tgc_buffer_host_ptr(b);                  // cpu: host memory
 *     tgc_buffer_release(b);                              // freed at refs 0
 *     tgc_device_destroy(cpu);
 */
#ifndef TGC_DEVICES_DEVICE_H
#define TGC_DEVICES_DEVICE_H

#include "tgc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum tgc_device_kind { TGC_DEVICE_CPU = 0, TGC_DEVICE_GPU = 1, TGC_DEVICE_KIND_COUNT } tgc_device_kind;

typedef struct tgc_device tgc_device;

/* Allocator figures, named as TensorFlow's AllocatorStats. Bytes. */
typedef struct tgc_allocator_stats {
    int64_t num_allocs;         /* allocations since the device was created */
    int64_t bytes_in_use;       /* bytes of live buffers */
    int64_t peak_bytes_in_use;  /* high-water mark of bytes_in_use */
    int64_t largest_alloc_size; /* largest single allocation */
    int64_t bytes_limit;        /* 0: no limit */
    int64_t live_buffers;       /* buffers allocated and not yet freed */
    int64_t num_frees;
} tgc_allocator_stats;

typedef struct tgc_device_ops {
    /* Allocates `nbytes` (> 0) of device memory into *mem; TGC_ERR_NOMEM
     * when the device has none. Called with figures already checked
     * against the limit. */
    tgc_status (*alloc)(tgc_device *d, size_t nbytes, void **mem);
    void (*free)(tgc_device *d, void *mem);
    /* Host pointer of `mem` when the device's memory is host memory, else NULL. */
    void *(*host_ptr)(tgc_device *d, void *mem);
    /* Copies between host memory and device memory (offsets in bytes). */
    tgc_status (*copy_from_host)(tgc_device *d, void *dst_mem, size_t offset, const void *src, size_t nbytes);
    tgc_status (*copy_to_host)(tgc_device *d, void *dst, void *src_mem, size_t offset, size_t nbytes);
    /* Waits until all work queued on the device is done. */
    tgc_status (*synchronize)(tgc_device *d);
    /* Releases the device's own resources (not its buffers: all must be freed). */
    void (*destroy)(tgc_device *d);
} tgc_device_ops;

struct tgc_device {
    const tgc_device_ops *ops;
    tgc_device_kind kind;
    int index;      /* cpu0, cpu1 (virtual host devices), gpu0, ... */
    char name[16];  /* "cpu0", "gpu0" */
    pthread_mutex_t stats_lock;
    tgc_allocator_stats stats;
    int64_t fail_countdown; /* test hook: the Nth allocation from now fails */
    void *impl;             /* the kind's own state */
};

/* A block of device memory, reference counted. The creator holds one
 * reference; tgc_buffer_retain adds one; the last tgc_buffer_release gives
 * the memory back to its device. Thread safe. */
typedef struct tgc_buffer {
    tgc_device *device;
    void *mem;      /* the device's handle (host pointer on cpu) */
    size_t nbytes;
    atomic_int refs;
} tgc_buffer;

/* Initialises the common part of a device (name from kind and index). */
void tgc_device_init(tgc_device *d, const tgc_device_ops *ops, tgc_device_kind kind, int index);

/* Destroys the device; every buffer must already be released (asserted). */
void tgc_device_destroy(tgc_device *d);

/* A snapshot of the device's figures. */
tgc_allocator_stats tgc_device_stats(tgc_device *d);

/* Sets the device's memory limit in bytes (0: none). */
void tgc_device_set_limit(tgc_device *d, int64_t bytes_limit);

/* Allocates a buffer of `nbytes` (0 allowed: no device memory, a valid
 * buffer) on `d`, refs = 1, in *out. TGC_ERR_NOMEM when the device is out
 * of memory or the allocation would pass the device's limit; the message
 * is the caller's to write (it knows the node and tensor). */
tgc_status tgc_buffer_alloc(tgc_device *d, size_t nbytes, tgc_buffer **out);

tgc_buffer *tgc_buffer_retain(tgc_buffer *b);

/* Drops one reference; at zero the memory returns to the device. NULL ok. */
void tgc_buffer_release(tgc_buffer *b);

/* Host pointer of the buffer's memory on host-memory devices, else NULL. */
void *tgc_buffer_host_ptr(tgc_buffer *b);

/* The cpu device number `index` (cpu0, cpu1 are separate virtual host
 * devices). Memory from tgc's aligned host allocator (64-byte alignment).
 * NULL if out of memory. */
tgc_device *tgc_cpu_device_create(int index);

/* The process-wide host device that holds user tensors (feeds, fetched
 * outputs), named "host". Static storage, created on first use, never
 * destroyed; its figures count the tensors users hold. */
tgc_device *tgc_host_device(void);

#endif
