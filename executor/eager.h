/* Eager contexts (the public API is tgc.h's "Eager ops"): private layout,
 * shared by eager.c (running an op, its output shapes through
 * devices/node_exec.h), eager_node.c (the node a call describes, and its
 * cache key) and eager_cache.c (the kernel cache).
 *
 * A call runs one node that no graph holds: eager_node.c builds it from
 * the op's name, the caller's attributes (checked against the op's schema)
 * and the input count, and the kernels read it as they read a session's
 * nodes. The kernel cache keeps one such node per key, with its device,
 * its kernel and, where inference does not read input values, its output
 * shapes; a hit runs the kernel straight away. */
#ifndef TGC_EXECUTOR_EAGER_H
#define TGC_EXECUTOR_EAGER_H

#include "executor/session.h"

#include <pthread.h>

/* What one key of the kernel cache resolved to. */
typedef struct tgc_eager_entry {
    struct tgc_eager_entry *next; /* the bucket's chain */
    uint64_t hash;
    unsigned char *key;
    size_t key_len;
    tgc_node node;                /* op, attributes, input refs (node i or -1), n_outputs */
    const tgc_kernel_def *kernel;
    int device;                   /* index into tgc_eager.devices */
    /* The output dtypes and dims below hold whatever the input values are
     * (inference gave them without reading a value); else each call infers. */
    bool static_shapes;
    tgc_value *outs; /* node.n_outputs; bufs NULL */
} tgc_eager_entry;

#define TGC_EAGER_CACHE_MAX 4096 /* entries; past it calls run without caching */

struct tgc_eager {
    uint64_t id; /* unique in the process: a thread's last hit names its context by it */
    tgc_device *devices[TGC_MAX_DEVICES]; /* retained; devices[0] is cpu0 */
    tgc_thread_pool *pools[TGC_MAX_DEVICES]; /* cpus' pools; NULL for gpus */
    int64_t workspace_limits[TGC_MAX_DEVICES]; /* each device's kernels' (devices/memory_limit.h); 0: none */
    int n_devices;
    tgc_graph *g;           /* an empty graph: inference's limits and messages */
    const tgc_settings *settings; /* the environment when the context was made (support/settings.h) */
    pthread_mutex_t lock;   /* the cache */
    tgc_eager_entry **buckets;
    size_t n_buckets, n_entries;
    atomic_llong ops, hits, misses, copies, copy_bytes;
};

/* A key being built: bytes on the stack, on the heap past them. */
typedef struct tgc_eager_key {
    unsigned char *bytes;
    size_t len, cap;
    unsigned char small[512];
    bool nomem;
} tgc_eager_key;

/* The call's key: op, counts, requested device, attributes, and each
 * input's dtype, dims and device. Frees nothing on its own: call
 * tgc_eager_key_free. TGC_ERR_NOMEM. */
tgc_status tgc_eager_key_make(tgc_eager_key *k, const char *op, const tgc_op_attr *attrs, int n_attrs,
                              tgc_tensor *const *inputs, int n_inputs, int device, int n_outputs);
void tgc_eager_key_free(tgc_eager_key *k);
uint64_t tgc_eager_key_hash(const tgc_eager_key *k);

/* Builds entry->node for op `op` with the caller's attributes and counts
 * (0 outputs: the op's least, at least 1), checked against the schema.
 * TGC_ERR_INVALID with a message in diags; TGC_ERR_NOMEM. */
tgc_status tgc_eager_node_build(tgc_node *n, const char *op, const tgc_op_attr *attrs, int n_attrs, int n_inputs,
                                int n_outputs, tgc_diags *diags);
void tgc_eager_node_release(tgc_node *n);

/* The cache (eager_cache.c). lookup: the entry of key k, or NULL; counts
 * the hit or miss; the calling thread's last entry is checked first,
 * without the lock (a loop calling one op finds it there). insert: takes e's ownership of entry (its key set from
 * k) unless the cache is full (returns false: the caller frees it). */
tgc_eager_entry *tgc_eager_cache_lookup(tgc_eager *e, const tgc_eager_key *k, uint64_t hash);
bool tgc_eager_cache_insert(tgc_eager *e, tgc_eager_entry *entry, const tgc_eager_key *k, uint64_t hash);
void tgc_eager_cache_clear(tgc_eager *e);
void tgc_eager_entry_free(tgc_eager_entry *entry);

/* The index of device `name` in e (a name as --devices spells it: "cpu"
 * is cpu0, "gpu" gpu0), or -1. */
int tgc_eager_device_index(const tgc_eager *e, const char *name);

#endif
