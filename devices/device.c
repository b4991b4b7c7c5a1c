/* The common part of every device: figures, the limit, and reference-counted
 * buffers. Kind-specific memory comes from d->ops. */
#include "devices/device.h"

#include "support/alloc.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

void tgc_device_init(tgc_device *d, const tgc_device_ops *ops, tgc_device_kind kind, int index) {
    memset(d, 0, sizeof *d);
    d->ops = ops;
    d->kind = kind;
    d->index = index;
    snprintf(d->name, sizeof d->name, "%s%d", kind == TGC_DEVICE_CPU ? "cpu" : "gpu", index);
    pthread_mutex_init(&d->stats_lock, NULL);
}

void tgc_device_destroy(tgc_device *d) {
    if (d == NULL) return;
    assert(d->stats.live_buffers == 0 && "a buffer outlived its device");
    pthread_mutex_destroy(&d->stats_lock);
    d->ops->destroy(d); /* frees d */
}

tgc_allocator_stats tgc_device_stats(tgc_device *d) {
    pthread_mutex_lock(&d->stats_lock);
    tgc_allocator_stats s = d->stats;
    pthread_mutex_unlock(&d->stats_lock);
    return s;
}

void tgc_device_set_limit(tgc_device *d, int64_t bytes_limit) {
    pthread_mutex_lock(&d->stats_lock);
    d->stats.bytes_limit = bytes_limit > 0 ? bytes_limit : 0;
    pthread_mutex_unlock(&d->stats_lock);
}

/* Reserves `nbytes` in the figures, or refuses past the limit. */
static bool reserve(tgc_device *d, size_t nbytes) {
    pthread_mutex_lock(&d->stats_lock);
    tgc_allocator_stats *s = &d->stats;
    bool ok = s->bytes_limit == 0 || s->bytes_in_use + (int64_t)nbytes <= s->bytes_limit;
    if (ok && d->fail_countdown > 0 && --d->fail_countdown == 0) ok = false;
    if (ok) {
        s->bytes_in_use += (int64_t)nbytes;
        if (s->bytes_in_use > s->peak_bytes_in_use) s->peak_bytes_in_use = s->bytes_in_use;
        if ((int64_t)nbytes > s->largest_alloc_size) s->largest_alloc_size = (int64_t)nbytes;
        s->num_allocs++;
        s->live_buffers++;
    }
    pthread_mutex_unlock(&d->stats_lock);
    return ok;
}

static void unreserve(tgc_device *d, size_t nbytes, bool count_free) {
    pthread_mutex_lock(&d->stats_lock);
    d->stats.bytes_in_use -= (int64_t)nbytes;
    d->stats.live_buffers--;
    if (count_free) d->stats.num_frees++;
    else d->stats.num_allocs--;
    pthread_mutex_unlock(&d->stats_lock);
}

tgc_status tgc_buffer_alloc(tgc_device *d, size_t nbytes, tgc_buffer **out) {
    *out = NULL;
    tgc_buffer *b = tgc_malloc(sizeof *b);
    if (b == NULL) return TGC_ERR_NOMEM;
    if (!reserve(d, nbytes)) {
        tgc_free(b);
        return TGC_ERR_NOMEM;
    }
    b->device = d;
    b->nbytes = nbytes;
    b->mem = NULL;
    atomic_init(&b->refs, 1);
    if (nbytes > 0 && d->ops->alloc(d, nbytes, &b->mem) != TGC_OK) {
        unreserve(d, nbytes, false);
        tgc_free(b);
        return TGC_ERR_NOMEM;
    }
    *out = b;
    return TGC_OK;
}

tgc_buffer *tgc_buffer_retain(tgc_buffer *b) {
    if (b != NULL) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void tgc_buffer_release(tgc_buffer *b) {
    if (b == NULL) return;
    int before = atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel);
    assert(before > 0);
    if (before != 1) return;
    if (b->mem != NULL) b->device->ops->free(b->device, b->mem);
    unreserve(b->device, b->nbytes, true);
    tgc_free(b);
}

void *tgc_buffer_host_ptr(tgc_buffer *b) {
    return b != NULL && b->mem != NULL ? b->device->ops->host_ptr(b->device, b->mem) : NULL;
}
