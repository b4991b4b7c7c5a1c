/* tgc_parallel_for: a shared counter of indices that the caller and helper
 * tasks drain (the scheme of Eigen's and ONNX Runtime's TryParallelFor,
 * without their cost model: callers choose the pieces). The job lives on
 * the caller's stack: when no index is left, the caller takes its helpers
 * that never started back out of the pool's queue and waits only for those
 * that did, so nothing refers to the job once the call returns. */
#include "support/parallel_for.h"

#include "support/spin.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct job {
    tgc_parallel_fn fn;
    void *arg;
    int64_t n;
    atomic_int_fast64_t next; /* the next index to take */
    atomic_int next_slot;     /* helpers take slots 1, 2, ... */
    atomic_int helpers;       /* helpers queued or running, not yet returned */
    pthread_mutex_t lock;
    pthread_cond_t returned;
} job;

/* Runs indices until none are left to take. */
static void drain(job *j, int slot) {
    for (int64_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;) j->fn(j->arg, i, slot);
}

/* A helper task: takes part, then reports back under the lock; after the
 * unlock it does not touch the job again (the caller may have returned). */
static void helper(void *arg) {
    job *j = arg;
    if (atomic_load(&j->next) < j->n) drain(j, atomic_fetch_add(&j->next_slot, 1));
    pthread_mutex_lock(&j->lock);
    if (atomic_fetch_sub(&j->helpers, 1) == 1) pthread_cond_signal(&j->returned);
    pthread_mutex_unlock(&j->lock);
}

static bool helpers_returned(void *arg) { return atomic_load(&((job *)arg)->helpers) == 0; }

int tgc_parallel_width(const tgc_thread_pool *p) { return p == NULL ? 1 : tgc_thread_pool_size(p) + 1; }

void tgc_parallel_for(tgc_thread_pool *p, int64_t n, tgc_parallel_fn fn, void *arg) {
    if (p == NULL || n <= 1) {
        for (int64_t i = 0; i < n; i++) fn(arg, i, 0);
        return;
    }
    job j = {.fn = fn, .arg = arg, .n = n};
    atomic_init(&j.next, 0);
    atomic_init(&j.next_slot, 1);
    atomic_init(&j.helpers, 0);
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.returned, NULL);
    int helpers = n - 1 < tgc_thread_pool_size(p) ? (int)(n - 1) : tgc_thread_pool_size(p);
    for (int h = 0; h < helpers; h++) {
        atomic_fetch_add(&j.helpers, 1);
        if (tgc_thread_pool_submit(p, helper, &j) != TGC_OK) atomic_fetch_sub(&j.helpers, 1);
    }
    drain(&j, 0);
    /* Every index is taken. Helpers still queued have nothing to do: take
     * them back; the others are running and return soon. */
    atomic_fetch_sub(&j.helpers, tgc_thread_pool_cancel(p, helper, &j));
    tgc_spin_until(helpers_returned, &j);
    pthread_mutex_lock(&j.lock);
    while (atomic_load(&j.helpers) > 0) pthread_cond_wait(&j.returned, &j.lock);
    pthread_mutex_unlock(&j.lock);
    pthread_cond_destroy(&j.returned);
    pthread_mutex_destroy(&j.lock);
}
