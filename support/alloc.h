/* Host memory for tgc's own bookkeeping: every heap block tgc allocates goes
 * through these four functions (the Lua habit), so a test build can count
 * blocks and bytes, check that a run leaves none behind, and make the Nth
 * allocation fail to exercise error paths.
 *
 * Example usage:
 *     int64_t *v = tgc_malloc(n * sizeof *v);
 *     if (v == NULL) return TGC_ERR_NOMEM;
 *     ...
 *     tgc_free(v);
 *
 * Tensor buffers do not come from here: they come from a device allocator
 * (devices/), which keeps its own figures. */
#ifndef TGC_SUPPORT_ALLOC_H
#define TGC_SUPPORT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* Every block tgc_malloc, tgc_calloc and tgc_realloc return starts on a
 * multiple of this many bytes (a cache line; an AVX-512 vector). */
#define TGC_ALLOC_ALIGN 64

/* Returns a block of at least `size` bytes (size 0 gives a valid unique
 * block), aligned to TGC_ALLOC_ALIGN, or NULL when the system is out of
 * memory or an injected failure fires. The caller owns the block and
 * releases it with tgc_free. */
void *tgc_malloc(size_t size);

/* As tgc_malloc, zero-filled, for `count` elements of `size` bytes; NULL also
 * when count * size overflows. */
void *tgc_calloc(size_t count, size_t size);

/* Resizes `block` (NULL acts as tgc_malloc) to `size` bytes. On failure
 * returns NULL and leaves `block` untouched and still owned by the caller. */
void *tgc_realloc(void *block, size_t size);

/* Releases a block from the functions above; NULL is ignored. */
void tgc_free(void *block);

/* Returns a tgc_malloc'd copy of the NUL-terminated `s`, or NULL. */
char *tgc_strdup(const char *s);

/* Returns a tgc_malloc'd copy of the first `n` bytes of `s` plus a NUL. */
char *tgc_strndup(const char *s, size_t n);

/* Live host blocks and bytes allocated through this module right now, and
 * the high-water mark of bytes since start (all processes' threads). */
typedef struct tgc_host_alloc_stats {
    int64_t live_blocks;
    int64_t live_bytes;
    int64_t peak_bytes;
    int64_t num_allocs; /* successful allocations since start */
} tgc_host_alloc_stats;

tgc_host_alloc_stats tgc_host_alloc_stats_get(void);

/* Test hook: the `n`th allocation from now (1 = the next one) fails, and
 * only that one; n <= 0 disarms. Returns nothing; thread safe. */
void tgc_host_alloc_fail_nth(int64_t n);

#endif
