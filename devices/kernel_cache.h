/* What a kernel keeps for one node across the runs of a session: constant
 * weights in the layout the kernel computes with (Conv's Winograd-transformed
 * filters), built on the first run and reused until the session is freed,
 * as ONNX Runtime's pre-packed weights. Private to the library.
 *
 * Example usage (inside a kernel whose input 1 is a weight):
 *     const float *u = tgc_kernel_cache_get(c, 1u << 1, build_u, &geometry);
 *     if (u == NULL) ... transform into scratch, as without a cache ...
 */
#ifndef TGC_DEVICES_KERNEL_CACHE_H
#define TGC_DEVICES_KERNEL_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tgc_kernel_ctx tgc_kernel_ctx;

/* Builds the block for c's node: returns a tgc_malloc'd block of *bytes
 * bytes, or NULL (no memory: the kernel then works without the cache). */
typedef void *(*tgc_kernel_cache_build)(const tgc_kernel_ctx *c, void *arg, size_t *bytes);

/* Frees a block that holds more than its own memory (a library's handles). */
typedef void (*tgc_kernel_cache_release)(void *data);

/* One node's cache: one tgc_malloc block or nothing. Owned by the
 * executor's plan (one per node), which calls init and clear. */
typedef struct tgc_kernel_cache {
    pthread_mutex_t lock;     /* held while building */
    _Atomic(void *) data;     /* the block, NULL until built */
    size_t bytes;
    tgc_kernel_cache_release release; /* NULL: tgc_free */
    tgc_kernel_cache_build builder;   /* the build function that made it */
    /* Inputs (bit i: input i) the block stands in for: a kernel that set
     * them never reads them again on runs of the same shapes
     * (tgc_kernel_cache_replaces). */
    _Atomic uint32_t replaces;
} tgc_kernel_cache;

void tgc_kernel_cache_init(tgc_kernel_cache *k);

/* Frees the block and the lock. */
void tgc_kernel_cache_clear(tgc_kernel_cache *k);

/* The node's cached block, built by build(c, arg) on the first call; NULL
 * when the node has no cache (c->cache NULL, a kernel run outside a
 * session), when an input in `const_inputs` (bit i: input i) is not one of
 * the session's constants (so may change between runs), when building
 * failed, or when another build function made the block (a kernel whose
 * way changed with its input shapes: Conv's Winograd filters on one run,
 * oneDNN's weights on another; tgc_kernel_cache_taken tells this case).
 * Safe from several threads: one builds, the others wait for it.
 * The block is read-only afterwards; the caller does not free it. */
const void *tgc_kernel_cache_get(tgc_kernel_ctx *c, uint32_t const_inputs, tgc_kernel_cache_build build, void *arg);

/* tgc_kernel_cache_get for a block that release(block) frees when the
 * cache is cleared (one that holds handles of a library: oneDNN's packed
 * weights and primitives). */
const void *tgc_kernel_cache_get_owning(tgc_kernel_ctx *c, uint32_t const_inputs, tgc_kernel_cache_build build,
                                        tgc_kernel_cache_release release, void *arg);

/* Whether c's node's cache holds a block, whoever built it. */
bool tgc_kernel_cache_taken(const tgc_kernel_ctx *c);

/* Says that c's node's cached block stands in for its constant inputs
 * `inputs` (bit i: input i): on every later run with the same input
 * shapes the kernel reads the block, never those inputs, so the session
 * may let the original weights go (executor/prepack.c). Called by a
 * kernel after tgc_kernel_cache_get gave it a block it computes with; a
 * no-op without a cache. Bits outside c->const_inputs are ignored. */
void tgc_kernel_cache_replaces(tgc_kernel_ctx *c, uint32_t inputs);

/* Bytes held by the caches of `count` nodes (for memory reports). */
size_t tgc_kernel_cache_bytes(const tgc_kernel_cache *caches, int64_t count);

#endif
