/* Intra-op parallelism: one kernel's loop split over a device's thread pool,
 * the calling thread taking part. Private to the library.
 *
 * Example usage (a kernel over rows, scratch per slot):
 *     static void rows(void *arg, int64_t i, int slot) { ... row i, scratch[slot] ... }
 *     int width = tgc_parallel_width(pool);          // slots: 0 .. width-1
 *     tgc_parallel_for(pool, n_rows, rows, &ctx);    // returns when every row is done
 *
 * Results must not depend on how the indices are spread over threads: a
 * kernel splits its work into pieces chosen from the sizes alone, never
 * from the thread count, so a run on one thread and on many is bitwise the
 * same. Which thread runs which index may be chosen for locality: each
 * participant starts on a contiguous range of its own, the same one call
 * after call (see parallel_for.c). */
#ifndef TGC_SUPPORT_PARALLEL_FOR_H
#define TGC_SUPPORT_PARALLEL_FOR_H

#include "support/thread_pool.h"

#include <stdint.h>

/* One piece of work: index i in [0, n); `slot` in [0, tgc_parallel_width)
 * names the participant running it, and no two running at once share a
 * slot (for per-thread scratch). */
typedef void (*tgc_parallel_fn)(void *arg, int64_t i, int slot);

/* Participants a tgc_parallel_for over pool p called on this thread may
 * have at once: p's workers when this thread is one of them or stands in
 * for one (tgc_thread_pool_stand_in), else the caller and each of p's
 * workers (1 when p is NULL). A kernel sizes its
 * per-slot scratch with it on the thread that then calls
 * tgc_parallel_for; a plan made elsewhere for a kernel that runs on a
 * worker gets a bound one slot above the need. */
int tgc_parallel_width(const tgc_thread_pool *p);

/* Calls fn(arg, i, slot) exactly once for every i in [0, n) and returns when
 * all calls have returned, with nothing left referring to the call (no
 * memory, no queued task). The caller runs indices itself while up to
 * min(n - 1, workers) tasks queued on p take the rest; the caller never
 * waits for a queued task to start (it may sit behind other work, or the
 * caller may be p's only worker): once every index is taken it removes its
 * queued helpers from p (tgc_thread_pool_cancel) and waits only for the
 * running ones, so nesting and calls from p's own workers cannot deadlock.
 * With p NULL or n <= 1 everything runs on the caller, in index order. fn
 * must not fail: it records its own errors (e.g. in arg, per slot). */
void tgc_parallel_for(tgc_thread_pool *p, int64_t n, tgc_parallel_fn fn, void *arg);

/* The calling thread's running tally of its tgc_parallel_for calls with
 * n >= 1 (splits) and of their indices (pieces), at any pool (NULL too:
 * the pieces come from the sizes, so one thread shows what many would
 * share). The executor takes it before and after a node's kernel and puts
 * the difference in the trace: how finely the node split its work, the
 * bound on how many threads it can use. Pieces a helper's own nested
 * calls make are on the helper's tally. */
typedef struct tgc_parallel_tally {
    int64_t splits, pieces;
} tgc_parallel_tally;
tgc_parallel_tally tgc_parallel_tally_now(void);

#endif
