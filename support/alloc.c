/* Counting host allocator. Each block carries a small header with its size,
 * so tgc_free can keep the byte counts exact without the caller passing the
 * size back. */
#include "support/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* max_align_t keeps the payload aligned as malloc's would be. */
typedef union block_header {
    size_t size;
    max_align_t align;
} block_header;

static atomic_llong live_blocks;
static atomic_llong live_bytes;
static atomic_llong peak_bytes;
static atomic_llong num_allocs;
static atomic_llong fail_countdown;

static int injected_failure(void) {
    long long n = atomic_load(&fail_countdown);
    while (n > 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1)) return n == 1;
    }
    return 0;
}

static void count_alloc(size_t size) {
    atomic_fetch_add(&live_blocks, 1);
    atomic_fetch_add(&num_allocs, 1);
    long long now = atomic_fetch_add(&live_bytes, (long long)size) + (long long)size;
    long long peak = atomic_load(&peak_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
    }
}

static void count_free(size_t size) {
    atomic_fetch_sub(&live_blocks, 1);
    atomic_fetch_sub(&live_bytes, (long long)size);
}

void *tgc_malloc(size_t size) {
    if (size > SIZE_MAX - sizeof(block_header) || injected_failure()) return NULL;
    block_header *h = malloc(sizeof *h + size);
    if (h == NULL) return NULL;
    h->size = size;
    count_alloc(size);
    return h + 1;
}

void *tgc_calloc(size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    void *p = tgc_malloc(count * size);
    if (p != NULL) memset(p, 0, count * size);
    return p;
}

void *tgc_realloc(void *block, size_t size) {
    if (block == NULL) return tgc_malloc(size);
    if (size > SIZE_MAX - sizeof(block_header) || injected_failure()) return NULL;
    block_header *old = (block_header *)block - 1;
    size_t old_size = old->size;
    block_header *h = realloc(old, sizeof *h + size);
    if (h == NULL) return NULL;
    h->size = size;
    count_free(old_size);
    count_alloc(size);
    atomic_fetch_sub(&num_allocs, 1); /* a resize is not a new allocation */
    return h + 1;
}

void tgc_free(void *block) {
    if (block == NULL) return;
    block_header *h = (block_header *)block - 1;
    count_free(h->size);
    free(h);
}

char *tgc_strndup(const char *s, size_t n) {
    char *d = tgc_malloc(n + 1);
    if (d == NULL) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *tgc_strdup(const char *s) { return tgc_strndup(s, strlen(s)); }

tgc_host_alloc_stats tgc_host_alloc_stats_get(void) {
    tgc_host_alloc_stats s = {
        .live_blocks = atomic_load(&live_blocks),
        .live_bytes = atomic_load(&live_bytes),
        .peak_bytes = atomic_load(&peak_bytes),
        .num_allocs = atomic_load(&num_allocs),
    };
    return s;
}

void tgc_host_alloc_fail_nth(int64_t n) { atomic_store(&fail_countdown, n > 0 ? n : 0); }
