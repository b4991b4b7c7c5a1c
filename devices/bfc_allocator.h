/* A best-fit-with-coalescing (BFC) arena, in the manner of TensorFlow's BFC
 * allocator (tensorflow/core/common_runtime/bfc_allocator.cc): memory comes
 * in large regions from a callback; each region is cut into chunks that
 * know their neighbours; free chunks sit in size-ordered bins so a request
 * takes the smallest free chunk that fits (split when the rest is worth
 * keeping), and a freed chunk merges with free neighbours at once. Private
 * to the library; each device kind with an arena owns one (devices/device.c).
 *
 * The arena never touches the memory it manages: a region is an opaque
 * handle (a host pointer, a cl_mem) and an allocation is (region, offset),
 * so the same code serves host memory (pointer arithmetic) and OpenCL
 * (a sub-buffer of the region's cl_mem, made by the device code).
 *
 * Example usage:
 *     tgc_bfc_config cfg = {.alignment = 256, .region_alloc = my_alloc,
 *                           .region_release = my_release, .ctx = me};
 *     tgc_bfc *a = tgc_bfc_create(&cfg);
 *     tgc_bfc_block blk;
 *     if (tgc_bfc_alloc(a, 1000, &blk) != TGC_OK) ...   // 1024 bytes at blk.offset
 *     char *p = (char *)blk.region + blk.offset;        // host regions
 *     tgc_bfc_free(a, blk.chunk);
 *     tgc_bfc_shrink(a);                                // regions back
 *     tgc_bfc_destroy(a);
 */
#ifndef TGC_DEVICES_BFC_ALLOCATOR_H
#define TGC_DEVICES_BFC_ALLOCATOR_H

#include "tgc.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tgc_bfc tgc_bfc;

typedef struct tgc_bfc_config {
    /* Every offset and every chunk size is a multiple of this (a power of
     * two; 0 gives 256). Regions must start at an address aligned to it
     * (offset 0 of an opaque handle is). */
    size_t alignment;
    /* Size of the first region (rounded up to the alignment; 0 gives 1 MiB).
     * Each later region is at least double the previous one, or the request
     * rounded up when that is larger. */
    size_t initial_region_bytes;
    /* Growth stops doubling past this (0: no cap); a larger request still
     * gets a region of its own size. */
    size_t max_region_bytes;
    /* A chunk is split when what is left after the request is at least this
     * many bytes (0 gives the alignment: any usable rest is split off);
     * smaller rests stay with the chunk as padding. */
    size_t min_split_bytes;
    /* Bytes the regions may add up to (0: no limit). */
    int64_t bytes_limit;
    /* Returns a region of exactly `nbytes` bytes (an opaque non-NULL
     * handle), or NULL when there is no memory. Called with the arena's
     * lock held: it must not call back into the arena. */
    void *(*region_alloc)(void *ctx, size_t nbytes);
    /* Gives back a region from region_alloc (no chunk of it is in use). */
    void (*region_release)(void *ctx, void *region, size_t nbytes);
    void *ctx;
} tgc_bfc_config;

/* One allocation: bytes [offset, offset + size) of `region`. `size` is the
 * request rounded up to the alignment (the chunk may carry a little more
 * padding when it was not worth splitting: `size` is the chunk's size).
 * `chunk` identifies it to tgc_bfc_free. */
typedef struct tgc_bfc_block {
    void *region;
    size_t offset;
    size_t size;
    uint32_t chunk;
} tgc_bfc_block;

/* Figures, named as TensorFlow's AllocatorStats. Bytes are chunk bytes as
 * handed out (requests rounded up to the alignment, plus any unsplit
 * padding), never the requested sizes. */
typedef struct tgc_bfc_stats {
    int64_t num_allocs;         /* successful allocations since creation */
    int64_t num_frees;
    int64_t live_allocs;        /* allocated and not yet freed */
    int64_t bytes_in_use;       /* chunk bytes of live allocations */
    int64_t peak_bytes_in_use;  /* high-water mark of bytes_in_use */
    int64_t largest_alloc_size; /* largest chunk handed out */
    int64_t bytes_reserved;     /* sum of the live regions' sizes */
    int64_t peak_bytes_reserved;
    int64_t bytes_limit;        /* 0: none */
    int64_t num_regions;
    int64_t free_bytes;         /* bytes_reserved - bytes_in_use */
    int64_t largest_free_chunk;
    double fragmentation;       /* 1 - largest_free_chunk / free_bytes; 0 when nothing is free */
} tgc_bfc_stats;

/* Creates an arena with no region yet (the first comes with the first
 * allocation). The config is copied. NULL when out of host memory or the
 * config is unusable (alignment not a power of two, no callbacks). */
tgc_bfc *tgc_bfc_create(const tgc_bfc_config *cfg);

/* Releases every region through region_release; every allocation must
 * already be freed (asserted). NULL is ignored. */
void tgc_bfc_destroy(tgc_bfc *a);

/* Allocates `nbytes` (> 0) into *out: the smallest free chunk that fits,
 * else a new region. TGC_ERR_NOMEM, with the arena and its figures as
 * before, when the request would take the regions past the limit (after
 * giving back fully free regions to make room), when region_alloc fails,
 * or when host memory for the bookkeeping cannot be had. Thread safe. */
tgc_status tgc_bfc_alloc(tgc_bfc *a, size_t nbytes, tgc_bfc_block *out);

/* Frees the allocation `chunk` (from tgc_bfc_block), merging it with free
 * neighbours. The memory stays in the arena. Thread safe. */
void tgc_bfc_free(tgc_bfc *a, uint32_t chunk);

/* Gives every fully free region back through region_release. Returns the
 * bytes released. Thread safe. */
int64_t tgc_bfc_shrink(tgc_bfc *a);

/* Sets the limit on bytes_reserved (0: none). Regions already held stay
 * even when they pass a lower limit; new ones are refused. */
void tgc_bfc_set_limit(tgc_bfc *a, int64_t bytes_limit);

/* A snapshot of the figures. O(log n). Thread safe. */
tgc_bfc_stats tgc_bfc_get_stats(tgc_bfc *a);

/* Checks every internal invariant (neighbour links, tiling of each region,
 * bin membership and order, figures); returns 1 when all hold. For tests:
 * O(n). */
int tgc_bfc_check(tgc_bfc *a);

#endif
