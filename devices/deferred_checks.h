/* Checks a kernel leaves for the step's end: a device-side verdict (an
 * index out of range, found by the kernel as it reads) that the host
 * would otherwise wait for at once. The kernel enqueues a non-blocking
 * read of its 4-byte flag into the int32 a check gives, and goes on; the
 * step looks at every flag once its devices' queues have run past the
 * reads (after the fetches and the synchronize: executor/step.c), and a
 * set flag fails the step with the node and the kernel's reason, as a
 * failure at the node would. So a gpu step with Gathers waits once, not
 * once a Gather. The values after such a node are wrong, never read out
 * of bounds (the kernels clamp or zero what they cannot read), and the
 * step's outputs are dropped. Thread safe: nodes of a step run on many
 * threads.
 *
 * The same list keeps host blocks a kernel copies to its device without
 * waiting (Resize's sampling tables, a Constant's value): the copy reads
 * the block until the queue runs it, so the block is freed with the list,
 * after the step's devices synchronized. */
#ifndef TGC_DEVICES_DEFERRED_CHECKS_H
#define TGC_DEVICES_DEFERRED_CHECKS_H

#include "graph/graph.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most checks one step keeps; a kernel whose check finds the list
 * full reads its flag at once (a host wait). */
#define TGC_DEFERRED_CHECKS 64

typedef struct tgc_deferred_check {
    int32_t flag;         /* written by the device's read: nonzero means the check failed */
    const tgc_node *node; /* the node that made it (the step's graph owns it) */
    const char *device;   /* its device's name (the session owns it) */
    char reason[240];     /* the kernel's reason, as for tgc_kernel_fail */
} tgc_deferred_check;

/* The most host blocks, and bytes, one step keeps for its copies; past
 * either a kernel's copy waits instead. */
#define TGC_DEFERRED_BLOCKS 256
#define TGC_DEFERRED_BLOCK_BYTES ((size_t)64 << 20)

typedef struct tgc_deferred_checks {
    pthread_mutex_t lock;
    tgc_deferred_check *items; /* TGC_DEFERRED_CHECKS of them, allocated at the first check; NULL: none yet */
    int count;
    void **blocks;             /* TGC_DEFERRED_BLOCKS of them, allocated at the first; tgc_malloc'd blocks kept */
    int n_blocks;
    size_t block_bytes;
} tgc_deferred_checks;

void tgc_deferred_checks_init(tgc_deferred_checks *dc);

/* Frees the list and the blocks it kept. Call only when no read into it
 * or copy from them is still pending (the devices synchronized). */
void tgc_deferred_checks_release(tgc_deferred_checks *dc);

/* A new check of `node` on `device` with its reason; the int32 the
 * device's read is to write (zeroed), owned by dc. NULL when the list is
 * full or out of memory: check at once. */
int32_t *tgc_deferred_checks_add(tgc_deferred_checks *dc, const tgc_node *node, const char *device,
                                 const char *reason);

/* Takes host block `block` (tgc_malloc'd, `bytes` long) to free when the
 * list is released; false (the caller keeps it) when the list holds
 * TGC_DEFERRED_BLOCKS blocks or TGC_DEFERRED_BLOCK_BYTES bytes already,
 * or is out of memory. */
bool tgc_deferred_checks_keep(tgc_deferred_checks *dc, void *block, size_t bytes);

/* The first check whose flag is set, or NULL when every one passed. Call
 * once the devices' queues have run past every read. */
const tgc_deferred_check *tgc_deferred_checks_failed(tgc_deferred_checks *dc);

#endif
