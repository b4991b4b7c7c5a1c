/* tgc_parallel_for: a shared counter of indices that the caller and helper
 * tasks drain (the scheme of Eigen's and ONNX Runtime's TryParallelFor,
 * without their cost model: callers choose the pieces). The job lives on
 * the heap with a reference per participant, since a helper may start
 * after the caller has returned. */
#include "support/parallel_for.h"

#include "support/alloc.h"
#include "support/spin.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct job {
    tgc_parallel_fn fn;
    void *arg;
    int64_t n;
    atomic_int_fast64_t next;   /* the next index to take */
    atomic_int_fast64_t unfinished; /* indices not yet returned */
    atomic_int refs;            /* the caller and each queued helper */
    atomic_int next_slot;       /* helpers take slots 1, 2, ... */
    pthread_mutex_t lock;
    pthread_cond_t finished;
} job;

static void job_release(job *j) {
    if (atomic_fetch_sub(&j->refs, 1) != 1) return;
    pthread_cond_destroy(&j->finished);
    pthread_mutex_destroy(&j->lock);
    tgc_free(j);
}

/* Runs indices until none are left to take; wakes the caller when the
 * last index anyone took has returned. */
static void drain(job *j, int slot) {
    int64_t done = 0;
    for (int64_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n; done++) j->fn(j->arg, i, slot);
    if (done > 0 && atomic_fetch_sub(&j->unfinished, done) == done) {
        pthread_mutex_lock(&j->lock);
        pthread_cond_signal(&j->finished);
        pthread_mutex_unlock(&j->lock);
    }
}

static bool all_finished(void *arg) { return atomic_load(&((job *)arg)->unfinished) == 0; }

static void helper(void *arg) {
    job *j = arg;
    if (atomic_load(&j->next) < j->n) drain(j, atomic_fetch_add(&j->next_slot, 1));
    job_release(j);
}

int tgc_parallel_width(const tgc_thread_pool *p) { return p == NULL ? 1 : tgc_thread_pool_size(p) + 1; }

static void run_serially(int64_t n, tgc_parallel_fn fn, void *arg) {
    for (int64_t i = 0; i < n; i++) fn(arg, i, 0);
}

void tgc_parallel_for(tgc_thread_pool *p, int64_t n, tgc_parallel_fn fn, void *arg) {
    if (p == NULL || n <= 1) {
        run_serially(n, fn, arg);
        return;
    }
    job *j = tgc_malloc(sizeof *j);
    if (j == NULL) {
        run_serially(n, fn, arg);
        return;
    }
    int64_t helpers = n - 1 < tgc_thread_pool_size(p) ? n - 1 : tgc_thread_pool_size(p);
    j->fn = fn;
    j->arg = arg;
    j->n = n;
    atomic_init(&j->next, 0);
    atomic_init(&j->unfinished, n);
    atomic_init(&j->refs, 1 + (int)helpers);
    atomic_init(&j->next_slot, 1);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->finished, NULL);
    for (int64_t h = 0; h < helpers; h++)
        if (tgc_thread_pool_submit(p, helper, j) != TGC_OK) atomic_fetch_sub(&j->refs, 1);
    drain(j, 0);
    if (atomic_load(&j->unfinished) > 0) tgc_spin_until(all_finished, j);
    pthread_mutex_lock(&j->lock);
    while (atomic_load(&j->unfinished) > 0) pthread_cond_wait(&j->finished, &j->lock);
    pthread_mutex_unlock(&j->lock);
    job_release(j);
}
