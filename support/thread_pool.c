/* Worker threads over a growable ring buffer of tasks, guarded by one mutex
 * and one condition variable. Tasks are short (one node's kernel), so a
 * single queue per device keeps order simple and fair; a kernel's helpers
 * (tgc_parallel_for) go in at the front, so that a kernel already running
 * gets the next free worker before a node not yet started. An idle worker
 * spins a little (tgc_spin_until) before sleeping on the condition variable,
 * so work handed over right after it went idle starts at once. */
#include "support/thread_pool.h"

#include "support/alloc.h"
#include "support/spin.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct task {
    tgc_task_fn fn;
    void *arg;
    uint64_t order; /* tgc_thread_pool_submit_ordered's; 0: never passed */
} task;

/* Who a worker thread is: its pool and its index there. */
typedef struct worker_id {
    tgc_thread_pool *pool;
    int index;
} worker_id;

/* The calling thread's identity when it is a pool's worker, else NULL. */
static _Thread_local const worker_id *this_worker;

/* The pool the calling thread stands in for a worker of, else NULL. */
static _Thread_local const tgc_thread_pool *stands_in_for;

struct tgc_thread_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    task *ring;
    size_t cap, head;
    atomic_size_t count; /* tasks at ring[(head + i) % cap], i < count; written under lock */
    bool stopping;
    pthread_t *threads;
    worker_id *ids; /* [n_threads] */
    int n_threads;
};

static bool queue_nonempty(void *arg) {
    tgc_thread_pool *p = arg;
    return atomic_load_explicit(&p->count, memory_order_relaxed) > 0;
}

static void *worker(void *arg) {
    this_worker = arg;
    tgc_thread_pool *p = this_worker->pool;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->count == 0 && !p->stopping) {
            pthread_mutex_unlock(&p->lock);
            tgc_spin_until(queue_nonempty, p);
            pthread_mutex_lock(&p->lock);
        }
        while (p->count == 0 && !p->stopping) pthread_cond_wait(&p->wake, &p->lock);
        if (p->count == 0) break; /* stopping and drained */
        task t = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->count--;
        pthread_mutex_unlock(&p->lock);
        t.fn(t.arg);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

tgc_status tgc_thread_pool_create(int threads, tgc_thread_pool **out) {
    *out = NULL;
    if (threads < 1) threads = 1;
    tgc_thread_pool *p = tgc_calloc(1, sizeof *p);
    if (p == NULL) return TGC_ERR_NOMEM;
    p->cap = 64;
    p->ring = tgc_malloc(p->cap * sizeof *p->ring);
    p->threads = tgc_calloc((size_t)threads, sizeof *p->threads);
    p->ids = tgc_calloc((size_t)threads, sizeof *p->ids);
    if (p->ring == NULL || p->threads == NULL || p->ids == NULL) {
        tgc_free(p->ring);
        tgc_free(p->threads);
        tgc_free(p->ids);
        tgc_free(p);
        return TGC_ERR_NOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    for (int i = 0; i < threads; i++) {
        p->ids[i] = (worker_id){p, i};
        if (pthread_create(&p->threads[i], NULL, worker, &p->ids[i]) != 0) {
            tgc_thread_pool_free(p);
            return TGC_ERR_RUNTIME;
        }
        p->n_threads++;
    }
    *out = p;
    return TGC_OK;
}

static bool grow(tgc_thread_pool *p) {
    size_t cap = p->cap * 2;
    task *ring = tgc_malloc(cap * sizeof *ring);
    if (ring == NULL) return false;
    for (size_t i = 0; i < p->count; i++) ring[i] = p->ring[(p->head + i) % p->cap];
    tgc_free(p->ring);
    p->ring = ring;
    p->cap = cap;
    p->head = 0;
    return true;
}

/* Queues `copies` (>= 1) of fn(arg) at the back of the queue, or at its
 * front when `first`, or (order > 0) ahead of the queued tasks of a greater
 * order at its back, in one hold of the lock, a sleeping worker woken for
 * each; returns how many it queued (fewer when the queue cannot grow). */
static int submit(tgc_thread_pool *p, tgc_task_fn fn, void *arg, bool first, uint64_t order, int copies) {
    pthread_mutex_lock(&p->lock);
    int queued = 0;
    for (; queued < copies; queued++) {
        if (p->count == p->cap && !grow(p)) break;
        if (first) {
            p->head = (p->head + p->cap - 1) % p->cap;
            p->ring[p->head] = (task){fn, arg, 0};
        } else {
            size_t at = p->count; /* the queue's position it takes, moving the tasks it passes back one */
            while (order > 0 && at > 0 && p->ring[(p->head + at - 1) % p->cap].order > order) {
                p->ring[(p->head + at) % p->cap] = p->ring[(p->head + at - 1) % p->cap];
                at--;
            }
            p->ring[(p->head + at) % p->cap] = (task){fn, arg, order};
        }
        p->count++;
        pthread_cond_signal(&p->wake); /* no system call where no worker sleeps */
    }
    pthread_mutex_unlock(&p->lock);
    return queued;
}

static tgc_status submit_one(tgc_thread_pool *p, tgc_task_fn fn, void *arg, bool first, uint64_t order) {
    return submit(p, fn, arg, first, order, 1) == 1 ? TGC_OK : TGC_ERR_NOMEM;
}

tgc_status tgc_thread_pool_submit(tgc_thread_pool *p, tgc_task_fn fn, void *arg) {
    return submit_one(p, fn, arg, false, 0);
}

tgc_status tgc_thread_pool_submit_first(tgc_thread_pool *p, tgc_task_fn fn, void *arg) {
    return submit_one(p, fn, arg, true, 0);
}

int tgc_thread_pool_submit_first_n(tgc_thread_pool *p, tgc_task_fn fn, void *arg, int copies) {
    return copies > 0 ? submit(p, fn, arg, true, 0, copies) : 0;
}

tgc_status tgc_thread_pool_submit_ordered(tgc_thread_pool *p, tgc_task_fn fn, void *arg, uint64_t order) {
    return submit_one(p, fn, arg, false, order);
}

int tgc_thread_pool_cancel(tgc_thread_pool *p, tgc_task_fn fn, void *arg) {
    pthread_mutex_lock(&p->lock);
    size_t kept = 0, count = p->count;
    for (size_t i = 0; i < count; i++) { /* compact the ring in place, keeping order */
        task t = p->ring[(p->head + i) % p->cap];
        if (t.fn == fn && t.arg == arg) continue;
        p->ring[(p->head + kept++) % p->cap] = t;
    }
    p->count = kept;
    pthread_mutex_unlock(&p->lock);
    return (int)(count - kept);
}

int tgc_thread_pool_size(const tgc_thread_pool *p) { return p->n_threads; }

int tgc_thread_pool_worker_index(const tgc_thread_pool *p) {
    return this_worker != NULL && this_worker->pool == p ? this_worker->index : -1;
}

void tgc_thread_pool_stand_in(const tgc_thread_pool *p) { stands_in_for = p; }

bool tgc_thread_pool_counts_caller(const tgc_thread_pool *p) {
    return p != NULL && (tgc_thread_pool_worker_index(p) >= 0 || stands_in_for == p);
}

void tgc_thread_pool_free(tgc_thread_pool *p) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    tgc_free(p->ring);
    tgc_free(p->threads);
    tgc_free(p->ids);
    tgc_free(p);
}
