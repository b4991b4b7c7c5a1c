/* A fixed pool of worker threads draining one FIFO of tasks: one pool per
 * device, so a device's kernels run on its own threads. Private.
 *
 * Example usage:
 *     tgc_thread_pool *p;
 *     if (tgc_thread_pool_create(2, &p) != TGC_OK) ...
 *     tgc_thread_pool_submit(p, run_node, ctx);   // never blocks
 *     tgc_thread_pool_free(p);                     // drains, then joins
 */
#ifndef TGC_SUPPORT_THREAD_POOL_H
#define TGC_SUPPORT_THREAD_POOL_H

#include "tgc.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_thread_pool tgc_thread_pool;

typedef void (*tgc_task_fn)(void *arg);

/* Starts `threads` (>= 1) workers. TGC_ERR_NOMEM or TGC_ERR_RUNTIME (thread
 * creation failed); nothing is left running on failure. */
tgc_status tgc_thread_pool_create(int threads, tgc_thread_pool **out);

/* Queues fn(arg); a worker runs it soon. Never blocks on the task; returns
 * TGC_ERR_NOMEM when the queue cannot grow (the task is not queued). */
tgc_status tgc_thread_pool_submit(tgc_thread_pool *p, tgc_task_fn fn, void *arg);

/* As tgc_thread_pool_submit, but ahead of every task queued: the next
 * worker free takes it first (tgc_parallel_for's helpers, so that a
 * kernel already running gets the threads before nodes not yet started). */
tgc_status tgc_thread_pool_submit_first(tgc_thread_pool *p, tgc_task_fn fn, void *arg);

/* `copies` tasks fn(arg) queued as tgc_thread_pool_submit_first queues one,
 * all in one hold of the pool's lock (a kernel's helpers: on 16 threads,
 * 15 submissions one by one each took the lock the woken workers were
 * taking to start them). Returns how many it queued: all of them, or
 * fewer when the queue could not grow; 0 for copies <= 0. */
int tgc_thread_pool_submit_first_n(tgc_thread_pool *p, tgc_task_fn fn, void *arg, int copies);

/* As tgc_thread_pool_submit, but ahead of the queued tasks of a greater
 * `order` (> 0) that no worker has taken yet, behind those of an equal or
 * smaller one and every task queued otherwise: the executor queues a
 * step's nodes by its step id, so that a device of a pipeline finishes
 * the older step's nodes before it starts the newer's (two steps in
 * flight interleaved on every stage ran in lockstep: GoogLeNet over two
 * cpus at 77 steps/s where a pipeline gives 135). As GPipe's and
 * PipeDream's stages take micro-batches in order. O(tasks it passes). */
tgc_status tgc_thread_pool_submit_ordered(tgc_thread_pool *p, tgc_task_fn fn, void *arg, uint64_t order);

/* Removes the queued (not yet started) tasks that are fn(arg) and returns
 * how many it removed; a task a worker has already taken is not touched. */
int tgc_thread_pool_cancel(tgc_thread_pool *p, tgc_task_fn fn, void *arg);

/* Number of worker threads. */
int tgc_thread_pool_size(const tgc_thread_pool *p);

/* The calling thread's index in [0, size) when it is one of p's workers,
 * else -1: a stable identity, for work that should go to the same thread
 * call after call (tgc_parallel_for's ranges). */
int tgc_thread_pool_worker_index(const tgc_thread_pool *p);

/* Makes the calling thread, which is none of p's workers, stand in for
 * one of them until it calls this again with NULL (p NULL: stands in for
 * none): tgc_parallel_for over p then counts it among p's workers, so
 * that its kernels keep to p's thread count (a step's caller running the
 * step's first nodes itself, executor/step.c). Thread-local; it does not
 * change tgc_thread_pool_worker_index. */
void tgc_thread_pool_stand_in(const tgc_thread_pool *p);

/* True when the calling thread is one of p's workers or stands in for one
 * (tgc_thread_pool_stand_in); false for p NULL. */
bool tgc_thread_pool_counts_caller(const tgc_thread_pool *p);

/* Runs every queued task, stops the workers and frees the pool; NULL ok. */
void tgc_thread_pool_free(tgc_thread_pool *p);

#endif
