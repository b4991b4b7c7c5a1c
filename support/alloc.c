/* Counting host allocator. Each block carries a small header with its size,
 * so tgc_free can keep the byte counts exact without the caller passing the
 * size back, and where the system's block starts.
 *
 * Every payload starts on a 64-byte boundary (TGC_ALLOC_ALIGN: a cache line,
 * an AVX-512 vector). malloc's 16-byte alignment left weights loaded from a
 * model 48 bytes past a line, so every vector of an LSTM's recurrent
 * weights spanned two lines: its matrix-vector product streams them each
 * step, and the LSTM peer model ran 8.39 -> 7.98 ms a run (one thread,
 * medians of 100) with them aligned.
 *
 * Test-allocator mode (the Lua habit): with TGC_DEBUG_ALLOC=1 in the
 * environment (read once, at the first allocation, from the process's
 * settings: support/settings.h), every block also gets GUARD_BYTES guard
 * bytes after its payload, checked when the block is freed or resized,
 * and a freed block is filled with POISON_BYTE before it goes back to the
 * system, so a use after free reads garbage that shows.
 * A damaged guard is a programmer error: the process aborts, naming the
 * block's size. The counters never include the guards. */
#include "support/alloc.h"

#include "support/settings.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 16
#define GUARD_BYTE 0xfd
#define POISON_BYTE 0xdd

/* Right before the payload: its size and the system's block around it. */
typedef struct block_header {
    size_t size;
    void *raw; /* what malloc or calloc returned */
} block_header;

static atomic_llong live_blocks;
static atomic_llong live_bytes;
static atomic_llong peak_bytes;
static atomic_llong num_allocs;
static atomic_llong fail_countdown;

/* 0: not read yet, 1: off, 2: on. Racing first readers agree. */
static atomic_int debug_state;

static int debug_mode(void) {
    int st = atomic_load_explicit(&debug_state, memory_order_relaxed);
    if (st == 0) {
        st = tgc_settings_current()->debug_alloc ? 2 : 1;
        atomic_store_explicit(&debug_state, st, memory_order_relaxed);
    }
    return st == 2;
}

static void set_guard(block_header *h) { memset((char *)(h + 1) + h->size, GUARD_BYTE, GUARD_BYTES); }

static void check_guard(const block_header *h) {
    const unsigned char *g = (const unsigned char *)(h + 1) + h->size;
    for (int i = 0; i < GUARD_BYTES; i++) {
        if (g[i] != GUARD_BYTE) {
            fprintf(stderr,
                    "tgc: heap corruption: the guard bytes after a block of %zu bytes were overwritten "
                    "(a write past its end, first at payload byte %zu)\n",
                    h->size, h->size + (size_t)i);
            abort();
        }
    }
}

/* Checks the guard, poisons the payload and frees the block (debug mode). */
static void debug_release(block_header *h) {
    check_guard(h);
    memset(h + 1, POISON_BYTE, h->size);
    free(h->raw);
}

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

/* A block of `size` payload bytes with its header (and guard), uncounted;
 * zeroed when `zero`, by calloc: a large block comes from fresh pages the
 * kernel has already zeroed, where a memset would touch every page once
 * more (folding a float16 ResNet-18's Casts wrote 47 MB of zeros first). */
static block_header *raw_alloc(size_t size, bool zero) {
    size_t extra = debug_mode() ? GUARD_BYTES : 0, slack = sizeof(block_header) + TGC_ALLOC_ALIGN - 1;
    if (size > SIZE_MAX - slack - GUARD_BYTES) return NULL;
    void *raw = zero ? calloc(1, slack + size + extra) : malloc(slack + size + extra);
    if (raw == NULL) return NULL;
    uintptr_t payload = ((uintptr_t)raw + sizeof(block_header) + TGC_ALLOC_ALIGN - 1) & ~(uintptr_t)(TGC_ALLOC_ALIGN - 1);
    block_header *h = (block_header *)payload - 1;
    h->size = size;
    h->raw = raw;
    if (extra) set_guard(h);
    return h;
}

static void *counted_alloc(size_t size, bool zero) {
    if (injected_failure()) return NULL;
    block_header *h = raw_alloc(size, zero);
    if (h == NULL) return NULL;
    count_alloc(size);
    return h + 1;
}

void *tgc_malloc(size_t size) { return counted_alloc(size, false); }

void *tgc_calloc(size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    return counted_alloc(count * size, true);
}

void *tgc_realloc(void *block, size_t size) {
    if (block == NULL) return tgc_malloc(size);
    if (injected_failure()) return NULL;
    block_header *old = (block_header *)block - 1;
    size_t old_size = old->size;
    /* Always a new block: realloc would keep malloc's alignment, not the
     * payload's (and in debug mode the old block is checked and poisoned). */
    if (debug_mode()) check_guard(old);
    block_header *h = raw_alloc(size, false);
    if (h == NULL) return NULL;
    memcpy(h + 1, old + 1, size < old_size ? size : old_size);
    if (debug_mode()) debug_release(old);
    else free(old->raw);
    count_free(old_size);
    count_alloc(size);
    atomic_fetch_sub(&num_allocs, 1); /* a resize is not a new allocation */
    return h + 1;
}

void tgc_free(void *block) {
    if (block == NULL) return;
    block_header *h = (block_header *)block - 1;
    count_free(h->size);
    if (debug_mode()) debug_release(h);
    else free(h->raw);
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
