/* The common part of every device: figures, the limit, the arena, fault
 * injection, and reference-counted buffers. Kind-specific memory comes from
 * d->ops, or, with an arena, from d->arena_ops: regions carved by the arena
 * (bfc_allocator.c) into views; without one, one ops->alloc per buffer. */
#include "devices/device.h"
#include "devices/kernel.h"

#include "support/string_slots.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/settings.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- fault injection, armed from the process's settings once --- */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static atomic_llong fail_countdown; /* TGC_FAIL_ALLOC / tgc_device_fail_nth_alloc */

static void read_env(void) {
    int64_t n = tgc_settings_current()->fail_alloc;
    if (n > 0) atomic_store(&fail_countdown, n);
}

void tgc_device_fail_nth_alloc(int64_t n) {
    pthread_once(&env_once, read_env);
    atomic_store(&fail_countdown, n > 0 ? n : 0);
}

/* true exactly once: when the armed countdown reaches its allocation. */
static bool injected_failure(void) {
    long long n = atomic_load(&fail_countdown);
    while (n > 0)
        if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1)) return n == 1;
    return false;
}

/* --- the arena's callbacks, forwarding to the kind --- */

static void *arena_region_alloc(void *ctx, size_t nbytes) {
    tgc_device *d = ctx;
    return d->arena_ops->region_alloc(d, nbytes);
}

static void arena_region_release(void *ctx, void *region, size_t nbytes) {
    tgc_device *d = ctx;
    d->arena_ops->region_free(d, region, nbytes);
}

int tgc_device_arena_wanted(void) { return tgc_settings_current()->arena; }

tgc_status tgc_device_arena_init(tgc_device *d, const tgc_arena_config *cfg) {
    if (tgc_device_arena_wanted() == 0) return TGC_OK;
    d->arena_ops = cfg->ops;
    tgc_bfc_config bc = {
        .alignment = cfg->alignment,
        .initial_region_bytes = cfg->initial_region_bytes,
        .max_region_bytes = cfg->max_region_bytes,
        .bytes_limit = d->stats.bytes_limit,
        .region_alloc = arena_region_alloc,
        .region_release = arena_region_release,
        .ctx = d,
    };
    d->arena = tgc_bfc_create(&bc);
    return d->arena != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

int64_t tgc_device_shrink(tgc_device *d) { return d->arena != NULL ? tgc_bfc_shrink(d->arena) : 0; }

void tgc_device_init(tgc_device *d, const tgc_device_ops *ops, tgc_device_kind kind, int index) {
    memset(d, 0, sizeof *d);
    d->ops = ops;
    d->kind = kind;
    d->index = index;
    d->host_memory = tgc_kind_host_memory(kind);
    tgc_device_id_name((tgc_device_id){kind, index, 0}, d->name, sizeof d->name);
    pthread_mutex_init(&d->stats_lock, NULL);
    atomic_init(&d->refs, 1);
    atomic_init(&d->live_handles, 0);
    atomic_init(&d->live_handle_bytes, 0);
}

tgc_device *tgc_device_retain(tgc_device *d) {
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
    return d;
}

void tgc_device_release(tgc_device *d) {
    if (d == NULL || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    if (d->on_last_release != NULL) d->on_last_release(d);
    else tgc_device_destroy(d);
}

void tgc_device_destroy(tgc_device *d) {
    if (d == NULL) return;
    assert(d->stats.live_buffers == 0 && "a buffer outlived its device");
    tgc_bfc_destroy(d->arena); /* its regions go back while the kind is alive */
    d->arena = NULL;
    pthread_mutex_destroy(&d->stats_lock);
    d->ops->destroy(d); /* frees d */
}

tgc_allocator_stats tgc_device_stats(tgc_device *d) {
    pthread_mutex_lock(&d->stats_lock);
    tgc_allocator_stats s = d->stats;
    pthread_mutex_unlock(&d->stats_lock);
    if (d->arena != NULL) {
        tgc_bfc_stats a = tgc_bfc_get_stats(d->arena);
        s.bytes_reserved = a.bytes_reserved;
        s.num_regions = a.num_regions;
        s.fragmentation = a.fragmentation;
    } else {
        s.bytes_reserved = s.bytes_in_use;
        s.num_regions = 0;
        s.fragmentation = 0.0;
    }
    return s;
}

void tgc_device_reset_peak(tgc_device *d) {
    pthread_mutex_lock(&d->stats_lock);
    d->stats.peak_bytes_in_use = d->stats.bytes_in_use;
    pthread_mutex_unlock(&d->stats_lock);
}

void tgc_device_set_limit(tgc_device *d, int64_t bytes_limit) {
    pthread_mutex_lock(&d->stats_lock);
    d->stats.bytes_limit = bytes_limit > 0 ? bytes_limit : 0;
    if (d->arena != NULL) tgc_bfc_set_limit(d->arena, d->stats.bytes_limit);
    pthread_mutex_unlock(&d->stats_lock);
}

/* Reserves `nbytes` against the limit (and the per-device test hook), or
 * refuses. The figures move only when the allocation succeeds (commit), so
 * a refused or failed allocation leaves them as they were; the pending
 * bytes keep concurrent allocations from passing the limit together. */
static bool reserve(tgc_device *d, size_t nbytes) {
    pthread_mutex_lock(&d->stats_lock);
    tgc_allocator_stats *s = &d->stats;
    int64_t pending, total;
    bool ok = tgc_checked_add_i64(d->pending_bytes, (int64_t)nbytes, &pending) &&
              tgc_checked_add_i64(s->bytes_in_use, pending, &total) && (s->bytes_limit == 0 || total <= s->bytes_limit);
    if (ok && d->fail_countdown > 0 && --d->fail_countdown == 0) ok = false;
    if (ok) d->pending_bytes = pending;
    pthread_mutex_unlock(&d->stats_lock);
    return ok;
}

/* Ends a reservation: counted as a live buffer when `done`, else dropped. */
static void commit(tgc_device *d, size_t nbytes, bool done) {
    pthread_mutex_lock(&d->stats_lock);
    tgc_allocator_stats *s = &d->stats;
    d->pending_bytes -= (int64_t)nbytes;
    if (done) {
        s->bytes_in_use += (int64_t)nbytes;
        if (s->bytes_in_use > s->peak_bytes_in_use) s->peak_bytes_in_use = s->bytes_in_use;
        if ((int64_t)nbytes > s->largest_alloc_size) s->largest_alloc_size = (int64_t)nbytes;
        s->num_allocs++;
        s->live_buffers++;
    }
    pthread_mutex_unlock(&d->stats_lock);
}

static void unreserve(tgc_device *d, size_t nbytes) {
    pthread_mutex_lock(&d->stats_lock);
    d->stats.bytes_in_use -= (int64_t)nbytes;
    d->stats.live_buffers--;
    d->stats.num_frees++;
    pthread_mutex_unlock(&d->stats_lock);
}

/* Device memory for b->nbytes (> 0) bytes: a chunk of the arena and a view
 * of it, or a block of its own. */
static tgc_status memory_alloc(tgc_device *d, tgc_buffer *b) {
    if (d->arena == NULL) return d->ops->alloc(d, b->nbytes, &b->mem);
    tgc_bfc_block blk;
    if (tgc_bfc_alloc(d->arena, b->nbytes, &blk) != TGC_OK) return TGC_ERR_NOMEM;
    if (d->arena_ops->view_create(d, blk.region, blk.offset, b->nbytes, &b->mem) != TGC_OK) {
        tgc_bfc_free(d->arena, blk.chunk);
        return TGC_ERR_NOMEM;
    }
    b->chunk = blk.chunk;
    return TGC_OK;
}

static void memory_free(tgc_device *d, tgc_buffer *b) {
    if (d->arena == NULL) {
        d->ops->free(d, b->mem);
        return;
    }
    if (d->arena_ops->view_release != NULL) d->arena_ops->view_release(d, b->mem, b->nbytes);
    tgc_bfc_free(d->arena, b->chunk);
}

/* A buffer from the arena with one hold of the stats lock: the limit
 * check, the arena's chunk (its own lock nests inside; nothing takes the
 * two the other way) and the figures at once, where reserve, the arena and
 * commit would take three (an eager op's result is mostly this). False:
 * refused or failed, the figures as they were. */
static bool arena_alloc_counted(tgc_device *d, tgc_buffer *b) {
    pthread_mutex_lock(&d->stats_lock);
    tgc_allocator_stats *s = &d->stats;
    int64_t n = (int64_t)b->nbytes, total;
    bool ok = tgc_checked_add_i64(s->bytes_in_use, d->pending_bytes, &total) &&
              tgc_checked_add_i64(total, n, &total) && (s->bytes_limit == 0 || total <= s->bytes_limit);
    if (ok && d->fail_countdown > 0 && --d->fail_countdown == 0) ok = false;
    if (ok) ok = memory_alloc(d, b) == TGC_OK;
    if (ok) {
        s->bytes_in_use += n;
        if (s->bytes_in_use > s->peak_bytes_in_use) s->peak_bytes_in_use = s->bytes_in_use;
        if (n > s->largest_alloc_size) s->largest_alloc_size = n;
        s->num_allocs++;
        s->live_buffers++;
    }
    pthread_mutex_unlock(&d->stats_lock);
    return ok;
}

tgc_status tgc_buffer_alloc(tgc_device *d, size_t nbytes, tgc_buffer **out) {
    *out = NULL;
    pthread_once(&env_once, read_env);
    if (injected_failure()) return TGC_ERR_NOMEM;
    if (nbytes > (size_t)TGC_MAX_BYTES) return TGC_ERR_NOMEM; /* tgc_value_nbytes of a size that does not fit */
    tgc_buffer *b = tgc_malloc(sizeof *b);
    if (b == NULL) return TGC_ERR_NOMEM;
    bool in_arena = d->arena != NULL && nbytes > 0;
    if (!in_arena && !reserve(d, nbytes)) {
        tgc_free(b);
        return TGC_ERR_NOMEM;
    }
    b->device = d;
    b->nbytes = nbytes;
    b->mem = NULL;
    b->chunk = UINT32_MAX;
    b->n_strings = 0;
    b->borrowed = false;
    b->list = 0;
    b->n_values = 0;
    b->foreign_release = NULL;
    b->foreign_ctx = NULL;
    b->borrow_counted = false;
    atomic_init(&b->refs, 1);
    if (in_arena) {
        if (!arena_alloc_counted(d, b)) {
            tgc_free(b);
            return TGC_ERR_NOMEM;
        }
        *out = b;
        return TGC_OK;
    }
    if (nbytes > 0 && memory_alloc(d, b) != TGC_OK) {
        commit(d, nbytes, false);
        tgc_free(b);
        return TGC_ERR_NOMEM;
    }
    commit(d, nbytes, true);
    *out = b;
    return TGC_OK;
}

tgc_status tgc_buffer_alloc_strings(tgc_device *d, size_t n_strings, tgc_buffer **out) {
    *out = NULL;
    if (!tgc_device_host_memory(d)) return TGC_ERR_UNSUPPORTED;
    if (n_strings > (size_t)TGC_MAX_BYTES / sizeof(char *)) return TGC_ERR_NOMEM;
    tgc_status s = tgc_buffer_alloc(d, n_strings * sizeof(char *), out);
    if (s != TGC_OK) return s;
    if (n_strings > 0) memset(tgc_buffer_host_ptr(*out), 0, n_strings * sizeof(char *));
    (*out)->n_strings = n_strings;
    return TGC_OK;
}

tgc_status tgc_buffer_alloc_list(tgc_device *d, size_t n_values, uint8_t kind, tgc_buffer **out) {
    *out = NULL;
    if (!tgc_device_host_memory(d)) return TGC_ERR_UNSUPPORTED;
    if (n_values > (size_t)TGC_MAX_BYTES / sizeof(tgc_value)) return TGC_ERR_NOMEM;
    tgc_status s = tgc_buffer_alloc(d, n_values * sizeof(tgc_value), out);
    if (s != TGC_OK) return s;
    if (n_values > 0) memset(tgc_buffer_host_ptr(*out), 0, n_values * sizeof(tgc_value));
    (*out)->list = kind;
    (*out)->n_values = n_values;
    return TGC_OK;
}

void *tgc_buffer_list_slots(tgc_buffer *b) { return b != NULL && b->list ? tgc_buffer_host_ptr(b) : NULL; }

tgc_status tgc_buffer_alloc_typed(tgc_device *d, tgc_dtype dtype, size_t nbytes, tgc_buffer **out) {
    if (dtype == TGC_STRING) {
        if (nbytes == SIZE_MAX) return TGC_ERR_NOMEM; /* tgc_value_nbytes of a size that does not fit */
        return tgc_buffer_alloc_strings(d, nbytes / sizeof(char *), out);
    }
    return tgc_buffer_alloc(d, nbytes, out);
}

tgc_status tgc_buffer_wrap_host(tgc_device *d, void *data, size_t nbytes, void (*release)(void *ctx), void *ctx,
                                tgc_buffer **out) {
    *out = NULL;
    if (!tgc_device_host_memory(d)) return TGC_ERR_UNSUPPORTED;
    tgc_buffer *b = tgc_calloc(1, sizeof *b);
    if (b == NULL) return TGC_ERR_NOMEM;
    b->device = d;
    b->mem = nbytes > 0 ? data : NULL;
    b->nbytes = nbytes;
    b->chunk = UINT32_MAX;
    atomic_init(&b->refs, 1);
    b->borrowed = true;
    b->foreign_release = release;
    b->foreign_ctx = ctx;
    *out = b;
    return TGC_OK;
}

tgc_buffer *tgc_buffer_retain(tgc_buffer *b) {
    if (b != NULL) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

tgc_status tgc_buffer_borrow_host(tgc_device *d, void *mem, size_t nbytes, tgc_buffer **out) {
    *out = NULL;
    if (!tgc_device_host_memory(d) || (mem == NULL && nbytes > 0)) return TGC_ERR_INVALID;
    pthread_once(&env_once, read_env);
    if (injected_failure()) return TGC_ERR_NOMEM;
    tgc_buffer *b = tgc_malloc(sizeof *b);
    if (b == NULL) return TGC_ERR_NOMEM;
    if (!reserve(d, nbytes)) {
        tgc_free(b);
        return TGC_ERR_NOMEM;
    }
    *b = (tgc_buffer){.device = d, .mem = nbytes > 0 ? mem : NULL, .nbytes = nbytes, .chunk = UINT32_MAX,
                      .borrowed = true, .borrow_counted = true};
    atomic_init(&b->refs, 1);
    commit(d, nbytes, true);
    *out = b;
    return TGC_OK;
}

void tgc_buffer_release(tgc_buffer *b) {
    if (b == NULL) return;
    int before = atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel);
    assert(before > 0);
    if (before != 1) return;
    if (b->borrowed) { /* host memory of another owner: counted (weights) or not (NumPy's) */
        if (b->borrow_counted) unreserve(b->device, b->nbytes);
        if (b->foreign_release != NULL) b->foreign_release(b->foreign_ctx);
        tgc_free(b);
        return;
    }
    if (b->n_strings > 0) tgc_string_slots_free(tgc_buffer_host_ptr(b), b->n_strings);
    tgc_value *slots = tgc_buffer_list_slots(b);
    for (size_t i = 0; slots != NULL && i < b->n_values; i++) tgc_buffer_release(slots[i].buf);
    tgc_device *d = b->device;
    if (b->mem != NULL && d->arena != NULL) { /* as arena_alloc_counted: one hold of the stats lock */
        pthread_mutex_lock(&d->stats_lock);
        memory_free(d, b);
        d->stats.bytes_in_use -= (int64_t)b->nbytes;
        d->stats.live_buffers--;
        d->stats.num_frees++;
        pthread_mutex_unlock(&d->stats_lock);
    } else {
        if (b->mem != NULL) memory_free(d, b);
        unreserve(d, b->nbytes);
    }
    tgc_free(b);
}

void *tgc_buffer_host_ptr(tgc_buffer *b) {
    return b != NULL && b->mem != NULL ? b->device->ops->host_ptr(b->device, b->mem) : NULL;
}

/* A string buffer's copy: the first nbytes / sizeof(char *) slots, each
 * string duplicated, into a new string buffer in `to`'s host memory. */
static tgc_status copy_strings(tgc_buffer *src, size_t nbytes, tgc_device *to, tgc_buffer **out) {
    size_t n = nbytes / sizeof(char *);
    if (n > src->n_strings) n = src->n_strings;
    tgc_status s = tgc_buffer_alloc_strings(to, n, out);
    if (s == TGC_ERR_UNSUPPORTED) return TGC_ERR_RUNTIME;
    if (s != TGC_OK || n == 0) return s;
    s = tgc_string_slots_copy(tgc_buffer_host_ptr(*out), (const char *const *)tgc_buffer_host_ptr(src), n);
    if (s != TGC_OK) {
        tgc_buffer_release(*out);
        *out = NULL;
    }
    return s;
}

/* A list buffer's copy: a new list on `to` sharing the elements. */
static tgc_status copy_list(tgc_buffer *src, tgc_device *to, tgc_buffer **out) {
    tgc_status s = tgc_buffer_alloc_list(to, src->n_values, src->list, out);
    if (s == TGC_ERR_UNSUPPORTED) return TGC_ERR_RUNTIME;
    if (s != TGC_OK) return s;
    tgc_value *from = tgc_buffer_list_slots(src), *slots = tgc_buffer_list_slots(*out);
    for (size_t i = 0; i < src->n_values; i++) {
        slots[i] = from[i];
        tgc_buffer_retain(slots[i].buf);
    }
    return TGC_OK;
}

tgc_status tgc_buffer_copy_in_async(tgc_buffer *src, size_t nbytes, tgc_device *to, tgc_buffer **out) {
    bool plain = !src->list && src->n_strings == 0;
    if (!plain || !tgc_device_host_memory(src->device) || to->ops->copy_from_host_async == NULL)
        return tgc_buffer_copy(src, nbytes, to, out);
    tgc_status s = tgc_buffer_alloc(to, nbytes, out);
    if (s != TGC_OK || nbytes == 0) return s;
    s = to->ops->copy_from_host_async(to, (*out)->mem, 0, tgc_buffer_host_ptr(src), nbytes);
    if (s != TGC_OK) {
        tgc_buffer_release(*out);
        *out = NULL;
    }
    return s;
}

tgc_status tgc_buffer_copy(tgc_buffer *src, size_t nbytes, tgc_device *to, tgc_buffer **out) {
    if (src->list) return copy_list(src, to, out);
    if (src->n_strings > 0) return copy_strings(src, nbytes, to, out);
    tgc_device *from = src->device;
    tgc_status s = tgc_buffer_alloc(to, nbytes, out);
    if (s != TGC_OK || nbytes == 0) return s;
    if (tgc_device_host_memory(from))
        s = to->ops->copy_from_host(to, (*out)->mem, 0, tgc_buffer_host_ptr(src), nbytes);
    else if (tgc_device_host_memory(to))
        s = from->ops->copy_to_host(from, tgc_buffer_host_ptr(*out), src->mem, 0, nbytes);
    else {
        tgc_buffer *staging = NULL;
        s = tgc_buffer_copy(src, nbytes, tgc_host_device(), &staging);
        if (s == TGC_OK) s = to->ops->copy_from_host(to, (*out)->mem, 0, tgc_buffer_host_ptr(staging), nbytes);
        tgc_buffer_release(staging);
    }
    if (s != TGC_OK) {
        tgc_buffer_release(*out);
        *out = NULL;
    }
    return s;
}
