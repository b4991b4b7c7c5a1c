/* Per-node kernel caches: double-checked building under the node's lock. */
#include "devices/kernel_cache.h"

#include "devices/kernel.h"
#include "support/alloc.h"

void tgc_kernel_cache_init(tgc_kernel_cache *k) {
    pthread_mutex_init(&k->lock, NULL);
    atomic_init(&k->data, NULL);
    k->bytes = 0;
    k->release = NULL;
    k->builder = NULL;
    atomic_init(&k->replaces, 0);
}

void tgc_kernel_cache_clear(tgc_kernel_cache *k) {
    void *data = atomic_load(&k->data);
    if (data != NULL && k->release != NULL) k->release(data);
    else tgc_free(data);
    atomic_store(&k->data, NULL);
    pthread_mutex_destroy(&k->lock);
}

const void *tgc_kernel_cache_get(tgc_kernel_ctx *c, uint32_t const_inputs, tgc_kernel_cache_build build, void *arg) {
    return tgc_kernel_cache_get_owning(c, const_inputs, build, NULL, arg);
}

const void *tgc_kernel_cache_get_owning(tgc_kernel_ctx *c, uint32_t const_inputs, tgc_kernel_cache_build build,
                                        tgc_kernel_cache_release release, void *arg) {
    tgc_kernel_cache *k = c->cache;
    if (k == NULL || (c->const_inputs & const_inputs) != const_inputs) return NULL;
    void *data = atomic_load_explicit(&k->data, memory_order_acquire);
    if (data != NULL) return k->builder == build ? data : NULL; /* (builder set before data was published) */
    pthread_mutex_lock(&k->lock);
    data = atomic_load_explicit(&k->data, memory_order_acquire);
    if (data == NULL) {
        size_t bytes = 0;
        data = build(c, arg, &bytes);
        if (data != NULL) k->bytes = bytes, k->release = release, k->builder = build;
        atomic_store_explicit(&k->data, data, memory_order_release);
    } else if (k->builder != build) {
        data = NULL;
    }
    pthread_mutex_unlock(&k->lock);
    return data;
}

bool tgc_kernel_cache_taken(const tgc_kernel_ctx *c) {
    return c->cache != NULL && atomic_load_explicit(&c->cache->data, memory_order_acquire) != NULL;
}

void tgc_kernel_cache_replaces(tgc_kernel_ctx *c, uint32_t inputs) {
    if (c->cache != NULL) atomic_fetch_or(&c->cache->replaces, inputs & c->const_inputs);
}

size_t tgc_kernel_cache_bytes(const tgc_kernel_cache *caches, int64_t count) {
    size_t total = 0;
    for (int64_t i = 0; caches != NULL && i < count; i++)
        if (atomic_load(&((tgc_kernel_cache *)&caches[i])->data) != NULL) total += caches[i].bytes;
    return total;
}
