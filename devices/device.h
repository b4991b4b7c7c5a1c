/* Devices: a table of functions per device kind (the ggml backend habit),
 * and the reference-counted buffers they hand out. Private to the library.
 *
 * Example usage:
 *     tgc_device *cpu = tgc_cpu_device_create(0);
 *     tgc_buffer *b;
 *     if (tgc_buffer_alloc(cpu, 4096, &b) != TGC_OK) ...   // refs = 1
 *     float *p = tgc_buffer_host_ptr(b);                  // cpu: host memory
 *     tgc_buffer_release(b);                              // freed at refs 0
 *     tgc_allocator_stats s = tgc_device_stats(cpu);      // bytes_in_use 0, bytes_reserved 1 MiB
 *     tgc_device_shrink(cpu);                             // the arena's free regions go back
 *     tgc_device_destroy(cpu);
 *
 * Buffers of cpuN and gpuN come from the device's arena (bfc_allocator.h)
 * unless TGC_ARENA=0 (gpuN on PoCL: only with TGC_ARENA=1, see
 * cl_device.c); TGC_FAIL_ALLOC=N makes the Nth allocation fail.
 */
#ifndef TGC_DEVICES_DEVICE_H
#define TGC_DEVICES_DEVICE_H

#include "tgc.h"

#include "devices/backend.h"
#include "devices/bfc_allocator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_device tgc_device;

/* Allocator figures, named as TensorFlow's AllocatorStats. Bytes.
 * bytes_in_use, its peak and largest_alloc_size count the bytes buffers
 * asked for (tensor bytes, what a static plan predicts); bytes_reserved is
 * the device memory the arena holds, which also covers rounding to the
 * arena's alignment and free chunks. */
typedef struct tgc_allocator_stats {
    int64_t num_allocs;         /* allocations since the device was created */
    int64_t bytes_in_use;       /* bytes of live buffers */
    int64_t peak_bytes_in_use;  /* high-water mark of bytes_in_use */
    int64_t largest_alloc_size; /* largest single allocation */
    int64_t bytes_limit;        /* 0: no limit */
    int64_t live_buffers;       /* buffers allocated and not yet freed */
    int64_t num_frees;
    int64_t bytes_reserved;     /* the arena's regions; bytes_in_use without an arena */
    int64_t num_regions;        /* the arena's regions; 0 without an arena */
    double fragmentation;       /* 1 - largest free chunk / free bytes in the arena; 0 when none is free */
} tgc_allocator_stats;

/* What a device's work took since it was opened, for kinds that count it
 * (OpenCL): kernels enqueued (a CLBlast call counts as one: its own pad
 * and transpose kernels are inside it), host waits (the host blocked until
 * the device's queue reached a point: a blocking copy, a finish), and
 * device allocations (new device memory: an arena region, a buffer of its
 * own). */
typedef struct tgc_device_activity {
    int64_t launches;
    int64_t host_waits;
    int64_t allocations;
} tgc_device_activity;

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
    /* As copy_from_host, but may return before the copy is done: src must
     * stay as it is until the device is synchronized (or a blocking copy
     * on it returns). NULL: the kind has only the blocking one. */
    tgc_status (*copy_from_host_async)(tgc_device *d, void *dst_mem, size_t offset, const void *src, size_t nbytes);
    /* Waits until all work queued on the device is done. */
    tgc_status (*synchronize)(tgc_device *d);
    /* Releases the device's own resources (not its buffers: all must be freed). */
    void (*destroy)(tgc_device *d);
    /* The counts so far into *out (thread safe); NULL where the kind does
     * not count them. */
    void (*activity)(tgc_device *d, tgc_device_activity *out);
    /* When a launch recorded in a tgc_device_events list (its handle)
     * queued, started and ended, in nanoseconds of the device's clock;
     * false when the device cannot say. Call after the device
     * synchronized. NULL where the kind records none. */
    bool (*event_times)(tgc_device *d, void *handle, uint64_t *queued_ns, uint64_t *start_ns, uint64_t *end_ns);
    /* Releases a handle the kind put in such a list. */
    void (*event_release)(tgc_device *d, void *handle);
} tgc_device_ops;

/* What an arena (bfc_allocator.h) needs from a device kind that has one.
 * region_alloc returns a region of exactly `nbytes` (an opaque handle
 * aligned to the arena's alignment) or NULL; region_free gives it back.
 * view_create makes a buffer's `mem` for bytes [offset, offset + nbytes) of
 * a region (cpu: a pointer into it; OpenCL: a sub-buffer); view_release
 * undoes that (the region stays). */
typedef struct tgc_arena_ops {
    void *(*region_alloc)(tgc_device *d, size_t nbytes);
    void (*region_free)(tgc_device *d, void *region, size_t nbytes);
    tgc_status (*view_create)(tgc_device *d, void *region, size_t offset, size_t nbytes, void **mem);
    void (*view_release)(tgc_device *d, void *mem, size_t nbytes);
} tgc_arena_ops;

struct tgc_device {
    const tgc_device_ops *ops;
    tgc_device_kind kind; /* its backend's (backend.h) */
    int index;      /* cpu0, cpu1 (virtual host devices), gpu0, ... */
    bool host_memory; /* its backend's host_memory, kept here for the buffer paths */
    char name[32];  /* "cpu0", "gpu0"; "/task:1/cpu0" in a session spanning processes */
    pthread_mutex_t stats_lock;
    tgc_allocator_stats stats;
    int64_t fail_countdown; /* test hook: the Nth allocation from now fails */
    int64_t pending_bytes;  /* reserved against the limit, not yet allocated */
    const tgc_arena_ops *arena_ops;
    tgc_bfc *arena;         /* NULL: each buffer straight from ops->alloc */
    void *impl;             /* the kind's own state */
    /* Holders of the device (devices/device_registry.c: eager contexts, and
     * the tensor handles whose data lives here): 1 from tgc_device_init;
     * the last tgc_device_release calls on_last_release (NULL:
     * tgc_device_destroy). A session's devices keep their one reference. */
    atomic_int refs;
    void (*on_last_release)(tgc_device *d);
    /* Public tensor handles whose data lives here, and their bytes (executor/tensor.c). */
    atomic_llong live_handles, live_handle_bytes;
};

/* A block of device memory, reference counted. The creator holds one
 * reference; tgc_buffer_retain adds one; the last tgc_buffer_release gives
 * the memory back to its device. Thread safe.
 *
 * String buffers (TGC_STRING tensors, support/string_slots.h): a buffer
 * made by tgc_buffer_alloc_strings holds n_strings `char *` slots, in host
 * memory only. The buffer OWNS the strings its slots point to: whoever
 * writes a slot (a kernel, a copy, a loader) puts a fresh tgc_malloc'd
 * string there (or leaves NULL, the empty string) and gives up the
 * string; the last tgc_buffer_release frees every slot's string before the
 * slot array goes back to the device. Slots start NULL, so a buffer whose
 * writer failed half-way is freed safely. Nothing else may free a slot,
 * and a slot's pointer is never copied into another buffer: copies
 * (tgc_buffer_copy, kernels that move data) duplicate the strings.
 * Forwarding a buffer to an output moves the ownership with it.
 * Memory figures: the device's stats count the slot arrays as any buffer
 * (n_strings x sizeof(char *)); the strings themselves are host blocks of
 * support/alloc.h, counted by tgc_host_alloc_stats, not by the device. */
typedef struct tgc_buffer {
    tgc_device *device;
    void *mem;      /* the device's handle (host pointer on cpu) */
    size_t nbytes;
    uint32_t chunk; /* the arena's chunk (device with an arena, nbytes > 0) */
    atomic_int refs;
    size_t n_strings; /* > 0: a string buffer owning this many slots' strings */
    /* A list buffer (a sequence's or an optional's value, see
     * tgc_buffer_alloc_list): list is its kind (graph.h's TGC_KIND_SEQUENCE
     * or TGC_KIND_OPTIONAL), n_values its tgc_value slots. 0 otherwise. */
    uint8_t list;
    size_t n_values;
    /* borrowed: host memory the buffer borrows, never freed here: a NumPy
     * array's (tgc_buffer_wrap_host, not counted, given back by
     * foreign_release(foreign_ctx) when set), or a cpu partition's weights
     * in the session's graph (tgc_buffer_borrow_host: borrow_counted, in
     * the device's figures). */
    bool borrowed;
    void (*foreign_release)(void *ctx);
    void *foreign_ctx;
    bool borrow_counted;
} tgc_buffer;

/* Initialises the common part of a device of `kind` (a registered
 * backend's, backend.h): its name (the backend's prefix and `index`) and
 * whether its memory is host memory come from the backend's table. */
void tgc_device_init(tgc_device *d, const tgc_device_ops *ops, tgc_device_kind kind, int index);

/* How a kind sets up its arena, after tgc_device_init. */
typedef struct tgc_arena_config {
    const tgc_arena_ops *ops;
    size_t alignment;            /* bytes, a power of two */
    size_t initial_region_bytes; /* the first region */
    size_t max_region_bytes;     /* growth stops doubling here (0: no cap) */
} tgc_arena_config;

/* Gives `d` an arena over cfg->ops, unless the process's settings say
 * TGC_ARENA=0 (support/settings.h; called when the device is created):
 * then every buffer comes straight from ops->alloc, so AddressSanitizer
 * sees each one as its own block. TGC_ERR_NOMEM when host memory is short. */
tgc_status tgc_device_arena_init(tgc_device *d, const tgc_arena_config *cfg);

/* What TGC_ARENA says in the process's newest settings (support/
 * settings.h): 0 (off), 1 (on: any other value), -1 (unset or empty). */
int tgc_device_arena_wanted(void);

/* Gives the arena's fully free regions back to the device; returns the
 * bytes released (0 without an arena). Thread safe. */
int64_t tgc_device_shrink(tgc_device *d);

/* Fault injection: the `n`th device allocation from now, counted across
 * every device of the process (1 = the next tgc_buffer_alloc), fails with
 * TGC_ERR_NOMEM, and only that one; n <= 0 disarms. The environment
 * variable TGC_FAIL_ALLOC=N arms it for the Nth allocation of the process
 * (read once, from the process's settings, support/settings.h, at the
 * first allocation or the first call of this hook, whichever comes
 * first). Thread safe. */
void tgc_device_fail_nth_alloc(int64_t n);

/* Destroys the device; every buffer must already be released (asserted). */
void tgc_device_destroy(tgc_device *d);

/* Adds a holder of d; returns d. Thread safe. */
tgc_device *tgc_device_retain(tgc_device *d);

/* Drops a holder; the last one calls d->on_last_release (NULL:
 * tgc_device_destroy). NULL is ignored. Thread safe. */
void tgc_device_release(tgc_device *d);

/* A snapshot of the device's figures. */
tgc_allocator_stats tgc_device_stats(tgc_device *d);

/* Starts a new high-water mark: peak_bytes_in_use becomes bytes_in_use
 * now, so later snapshots give the peak since this call (TensorFlow's
 * ClearStats; the public memory trace resets the host device's). */
void tgc_device_reset_peak(tgc_device *d);

/* Sets the device's memory limit in bytes (0: none): the bytes buffers ask
 * for, and the arena's regions, stay within it. */
void tgc_device_set_limit(tgc_device *d, int64_t bytes_limit);

/* Allocates a buffer of `nbytes` (0 allowed: no device memory, a valid
 * buffer) on `d`, refs = 1, in *out. TGC_ERR_NOMEM when the device is out
 * of memory, the allocation would pass the device's limit, or an injected
 * failure fires; the figures are then as before and the message is the
 * caller's to write (it knows the node and tensor). */
tgc_status tgc_buffer_alloc(tgc_device *d, size_t nbytes, tgc_buffer **out);

/* A buffer of `nbytes` on `d`, a device whose memory is host memory
 * (tgc_device_host_memory), over `mem` owned by the caller, which must
 * outlive the buffer and stay unchanged while it lives: a cpu partition's
 * weights, which live in the session's graph already. Counted in the
 * device's figures and limit as an allocation (the tensor is the device's
 * to read), but takes none of its memory; its release frees nothing of
 * mem. TGC_ERR_INVALID for another kind of device, TGC_ERR_NOMEM as
 * tgc_buffer_alloc. */
tgc_status tgc_buffer_borrow_host(tgc_device *d, void *mem, size_t nbytes, tgc_buffer **out);

/* Allocates a string buffer of n_strings slots (all NULL: empty strings)
 * on `d`, which must be a host-memory device; refs = 1. The buffer owns the
 * strings later stored in its slots (see tgc_buffer). n_strings 0 gives an
 * empty buffer. TGC_ERR_NOMEM as tgc_buffer_alloc; TGC_ERR_UNSUPPORTED when
 * d's memory is not host memory (strings never live on a gpu). */
tgc_status tgc_buffer_alloc_strings(tgc_device *d, size_t n_strings, tgc_buffer **out);

/* The buffer for a tensor of `dtype` taking `nbytes` (tgc_value_nbytes):
 * tgc_buffer_alloc_strings for TGC_STRING (nbytes / sizeof(char *) slots),
 * else tgc_buffer_alloc. Every allocation of a tensor whose dtype may be
 * string goes through here. Errors as those two. */
tgc_status tgc_buffer_alloc_typed(tgc_device *d, tgc_dtype dtype, size_t nbytes, tgc_buffer **out);

/* Allocates a list buffer of n_values tgc_value slots (devices/kernel.h),
 * all empty (buf NULL), on `d`, which must be a host-memory device: the
 * value of a sequence (kind TGC_KIND_SEQUENCE: its elements in order) or of
 * an optional (TGC_KIND_OPTIONAL: none, or the one value it holds). The
 * buffer OWNS one reference to each slot's buffer: whoever fills a slot
 * gives it a reference of its own (tgc_buffer_retain), and the last
 * tgc_buffer_release releases the slots' buffers. A list is never changed
 * once filled: an op that changes a sequence makes a new list sharing the
 * elements. TGC_ERR_NOMEM as tgc_buffer_alloc; TGC_ERR_UNSUPPORTED when d's
 * memory is not host memory. */
tgc_status tgc_buffer_alloc_list(tgc_device *d, size_t n_values, uint8_t kind, tgc_buffer **out);

/* The slots of list buffer b (struct tgc_value *, devices/kernel.h); NULL
 * when b is not a list or holds none. */
void *tgc_buffer_list_slots(tgc_buffer *b);

/* A buffer over `nbytes` of host memory at `data` that tgc does not own
 * (a NumPy array's), on the host-memory device `d`, refs = 1: kernels read
 * it in place. The device's figures do not count it (its allocator did not
 * make it); the last tgc_buffer_release calls release(ctx) (release may be
 * NULL) instead of freeing. data may be NULL when nbytes is 0. Never a
 * string buffer. TGC_ERR_NOMEM (release is then not called);
 * TGC_ERR_UNSUPPORTED when d is not host memory. */
tgc_status tgc_buffer_wrap_host(tgc_device *d, void *data, size_t nbytes, void (*release)(void *ctx), void *ctx,
                                tgc_buffer **out);

tgc_buffer *tgc_buffer_retain(tgc_buffer *b);

/* Drops one reference; at zero a string buffer's strings are freed and the
 * memory returns to the device. NULL ok. */
void tgc_buffer_release(tgc_buffer *b);

/* True when d's memory is host memory (its backend's host_memory): the
 * cpu devices and the host device (cpu0 and cpu1 are one memory, so their
 * buffers need no copy). */
static inline bool tgc_device_host_memory(const tgc_device *d) { return d->host_memory; }

/* Copies the first `nbytes` of `src` into a new buffer on `to` (*out, refs
 * 1, owned by the caller), through host memory when neither side is host
 * memory. Blocking: the data is in place on return. A string buffer's copy
 * is a string buffer with a copy of each string (deep), only to host
 * memory. TGC_ERR_NOMEM (the allocation failed) or TGC_ERR_RUNTIME (a copy
 * failed, or strings asked to go to device memory); *out is then NULL. */
tgc_status tgc_buffer_copy(tgc_buffer *src, size_t nbytes, tgc_device *to, tgc_buffer **out);

/* tgc_buffer_copy of a plain buffer in host memory to a device that copies
 * in without waiting (tgc_device_ops.copy_from_host_async): returns once
 * the copy is queued; src must stay alive and unchanged until `to` is
 * synchronized (a step's feeds: the caller's, until the step returns).
 * Otherwise, or for any other buffer, tgc_buffer_copy. */
tgc_status tgc_buffer_copy_in_async(tgc_buffer *src, size_t nbytes, tgc_device *to, tgc_buffer **out);
/* (A list buffer's copy is a new list on `to`, host memory only, sharing
 * the elements: each retained.) */

/* Host pointer of the buffer's memory on host-memory devices, else NULL. */
void *tgc_buffer_host_ptr(tgc_buffer *b);

/* The cpu device number `index` (cpu0, cpu1 are separate virtual host
 * devices). Memory from an arena over regions of tgc's host allocator;
 * every buffer is 64-byte aligned. NULL if out of memory. */
tgc_device *tgc_cpu_device_create(int index);

/* The process-wide host device that holds user tensors (feeds, fetched
 * outputs), named "host". Static storage, created on first use, never
 * destroyed; its figures count the tensors users hold. It has no arena:
 * being never destroyed, it would keep its regions to the end of the
 * process, and the host allocator's counters would no longer show a
 * user's leaked tensors as live blocks. */
tgc_device *tgc_host_device(void);

#endif
