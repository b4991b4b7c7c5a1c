/* tgc_parallel_for: the indices cut into one contiguous range a
 * participant, each range drained from the front by its owner and, once
 * the owner's own is empty, by the others (the static partition of
 * OpenMP's schedule(static) and of MLAS's per-thread work split, with
 * stealing so that a helper that starts late, or never, costs no waiting).
 * A participant owns the range of its index in the pool (a caller from
 * outside the pool: the last), so a thread takes the same share call after
 * call: consecutive kernels that cut the same data alike (a convolution by
 * output pixels, the next by bands of rows) find it in the cache of the
 * core that wrote it. On this machine, when reading what the other core
 * had just written cost 1.7-3x a read from the own core's caches
 * (bench/bench_core_to_core: 1 MiB in 27 against 8.8 us), MobileNetV2 at 2 threads
 * ran 10% faster (`tgc run --threads cpu=2`, medians of 9 interleaved
 * runs: 4.24 -> 3.83 ms); when the cores shared their data cheaply, level.
 * The job lives on the caller's stack: when no index is left, the caller
 * takes its helpers that never started back out of the pool's queue and
 * waits only for those that did, so nothing refers to the job once the
 * call returns. */
#include "support/parallel_for.h"

#include "support/spin.h"

#include <pthread.h>
#include <stdatomic.h>

/* At most this many ranges (participants past it share them). */
#define MAX_RANGES 64

/* One participant's share of the indices, [next, end), on its own cache
 * line: its owner takes from the front, and so do the others once their
 * own range is empty. */
typedef struct range {
    _Alignas(64) atomic_int_fast64_t next;
    int64_t end;
} range;

typedef struct job {
    tgc_parallel_fn fn;
    void *arg;
    int n_ranges;
    atomic_int next_slot;  /* helpers take slots 1, 2, ... */
    atomic_int helpers;    /* helpers queued or running, not yet returned */
    pthread_mutex_t lock;
    pthread_cond_t returned;
    range ranges[MAX_RANGES];
} job;

/* The range the calling thread owns: a worker's index in the pool, the
 * last one for a caller from outside it. */
static int home_range(const job *j, const tgc_thread_pool *p) {
    int w = tgc_thread_pool_worker_index(p);
    return (w >= 0 ? w : tgc_thread_pool_size(p)) % j->n_ranges;
}

/* Runs the indices of the home range, then what is left of the others. */
static void drain(job *j, int home, int slot) {
    for (int k = 0; k < j->n_ranges; k++) {
        range *r = &j->ranges[(home + k) % j->n_ranges];
        for (int64_t i; (i = atomic_fetch_add(&r->next, 1)) < r->end;) j->fn(j->arg, i, slot);
    }
}

typedef struct helper_arg {
    job *j;
    tgc_thread_pool *p;
} helper_arg;

/* A helper task: takes part, then reports back under the lock; after the
 * unlock it does not touch the job again (the caller may have returned). */
static void helper(void *arg) {
    helper_arg *h = arg;
    job *j = h->j;
    drain(j, home_range(j, h->p), atomic_fetch_add(&j->next_slot, 1));
    pthread_mutex_lock(&j->lock);
    if (atomic_fetch_sub(&j->helpers, 1) == 1) pthread_cond_signal(&j->returned);
    pthread_mutex_unlock(&j->lock);
}

static bool helpers_returned(void *arg) { return atomic_load(&((job *)arg)->helpers) == 0; }

/* One participant a worker of p (the calling thread among them when it is
 * one or stands in for one), and the caller when it is not. */
int tgc_parallel_width(const tgc_thread_pool *p) {
    if (p == NULL) return 1;
    int size = tgc_thread_pool_size(p);
    return tgc_thread_pool_counts_caller(p) ? size : size + 1;
}

/* This thread's tally (tgc_parallel_tally_now). */
static _Thread_local tgc_parallel_tally tally;

tgc_parallel_tally tgc_parallel_tally_now(void) { return tally; }

void tgc_parallel_for(tgc_thread_pool *p, int64_t n, tgc_parallel_fn fn, void *arg) {
    if (n >= 1) {
        tally.splits++;
        tally.pieces += n;
    }
    if (p == NULL || n <= 1) {
        for (int64_t i = 0; i < n; i++) fn(arg, i, 0);
        return;
    }
    int participants = tgc_parallel_width(p); /* one range each */
    job j = {.fn = fn, .arg = arg};
    j.n_ranges = participants < MAX_RANGES ? participants : MAX_RANGES;
    if (j.n_ranges > n) j.n_ranges = (int)n;
    int64_t share = n / j.n_ranges, extra = n % j.n_ranges; /* the first `extra` ranges take one more */
    for (int r = 0; r < j.n_ranges; r++) {
        atomic_init(&j.ranges[r].next, r * share + (r < extra ? r : extra));
        j.ranges[r].end = (r + 1) * share + (r + 1 < extra ? r + 1 : extra);
    }
    atomic_init(&j.next_slot, 1);
    atomic_init(&j.helpers, 0);
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.returned, NULL);
    helper_arg h = {&j, p};
    int helpers = participants - 1 < n - 1 ? participants - 1 : (int)(n - 1);
    atomic_fetch_add(&j.helpers, helpers); /* before any can return */
    atomic_fetch_sub(&j.helpers, helpers - tgc_thread_pool_submit_first_n(p, helper, &h, helpers));
    drain(&j, home_range(&j, p), 0);
    /* Every index is taken. Helpers still queued have nothing to do: take
     * them back; the others are running and return soon. */
    atomic_fetch_sub(&j.helpers, tgc_thread_pool_cancel(p, helper, &h));
    tgc_spin_until(helpers_returned, &j);
    pthread_mutex_lock(&j.lock);
    while (atomic_load(&j.helpers) > 0) pthread_cond_wait(&j.returned, &j.lock);
    pthread_mutex_unlock(&j.lock);
    pthread_cond_destroy(&j.returned);
    pthread_mutex_destroy(&j.lock);
}
