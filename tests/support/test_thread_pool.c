/* The per-device thread pool: every submitted task runs exactly once, also
 * tasks submitted from inside tasks, across many producers; freeing drains
 * the queue; each worker knows its index, and no other thread has one; a
 * task submitted first runs ahead of those queued. Run under
 * ThreadSanitizer by `make test`. */
#include "tests/harness.h"

#include "support/thread_pool.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdatomic.h>

static atomic_int ran;
static int slots[20000];

static void mark(void *arg) {
    int i = (int)(intptr_t)arg;
    slots[i]++; /* each slot is written by exactly one task */
    atomic_fetch_add(&ran, 1);
}

static void test_every_task_runs_once(void) {
    atomic_store(&ran, 0);
    for (int i = 0; i < 20000; i++) slots[i] = 0;
    tgc_thread_pool *p;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(4, &p), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_size(p), 4);
    for (int i = 0; i < 20000; i++) CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, mark, (void *)(intptr_t)i), TGC_OK);
    tgc_thread_pool_free(p); /* drains */
    CU_ASSERT_EQUAL(atomic_load(&ran), 20000);
    int wrong = 0;
    for (int i = 0; i < 20000; i++) wrong += slots[i] != 1;
    CU_ASSERT_EQUAL(wrong, 0);
}

typedef struct chain {
    tgc_thread_pool *pool;
    atomic_int left;
} chain;

/* Each task submits the next: the pattern of a node scheduling its consumers. */
static void step(void *arg) {
    chain *c = arg;
    if (atomic_fetch_sub(&c->left, 1) > 1) tgc_thread_pool_submit(c->pool, step, c);
}

static void test_tasks_submit_tasks(void) {
    chain c;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &c.pool), TGC_OK);
    atomic_init(&c.left, 5000);
    tgc_thread_pool_submit(c.pool, step, &c);
    while (atomic_load(&c.left) > 0) {
    }
    tgc_thread_pool_free(c.pool);
    CU_ASSERT_EQUAL(atomic_load(&c.left), 0);
}

typedef struct producer {
    tgc_thread_pool *pool;
    int base;
} producer;

static void *produce(void *arg) {
    producer *pr = arg;
    for (int i = 0; i < 5000; i++) tgc_thread_pool_submit(pr->pool, mark, (void *)(intptr_t)(pr->base + i));
    return NULL;
}

static void test_many_producers(void) {
    atomic_store(&ran, 0);
    for (int i = 0; i < 20000; i++) slots[i] = 0;
    tgc_thread_pool *p;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &p), TGC_OK);
    pthread_t t[4];
    producer pr[4];
    for (int k = 0; k < 4; k++) {
        pr[k] = (producer){p, k * 5000};
        pthread_create(&t[k], NULL, produce, &pr[k]);
    }
    for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
    tgc_thread_pool_free(p);
    CU_ASSERT_EQUAL(atomic_load(&ran), 20000);
    int wrong = 0;
    for (int i = 0; i < 20000; i++) wrong += slots[i] != 1;
    CU_ASSERT_EQUAL(wrong, 0);
}

/* Three tasks held on the three workers at once: each reads its worker's
 * index, so every index in [0, 3) is seen exactly once. */
typedef struct who {
    tgc_thread_pool *pool;
    atomic_int arrived, seen[3], bad;
} who;

static void report_index(void *arg) {
    who *w = arg;
    int i = tgc_thread_pool_worker_index(w->pool);
    if (i < 0 || i >= 3) atomic_fetch_add(&w->bad, 1);
    else atomic_fetch_add(&w->seen[i], 1);
    atomic_fetch_add(&w->arrived, 1);
    while (atomic_load(&w->arrived) < 3) {
    }
}

/* A task on pool `b` reads its index in `a` (another pool) and in `b`. */
typedef struct two_pools {
    tgc_thread_pool *a, *b;
    atomic_int in_a, in_b, done;
} two_pools;

static void report_both(void *arg) {
    two_pools *t = arg;
    atomic_store(&t->in_a, tgc_thread_pool_worker_index(t->a));
    atomic_store(&t->in_b, tgc_thread_pool_worker_index(t->b));
    atomic_store(&t->done, 1);
}

static void test_worker_index(void) {
    who w = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &w.pool), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_worker_index(w.pool), -1);
    for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL(tgc_thread_pool_submit(w.pool, report_index, &w), TGC_OK);
    while (atomic_load(&w.arrived) < 3) {
    }
    CU_ASSERT_EQUAL(atomic_load(&w.bad), 0);
    for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(atomic_load(&w.seen[i]), 1);
    two_pools t = {.a = w.pool};
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(1, &t.b), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(t.b, report_both, &t), TGC_OK);
    while (!atomic_load(&t.done)) {
    }
    CU_ASSERT_EQUAL(atomic_load(&t.in_a), -1); /* a worker of another pool is none of this one's */
    CU_ASSERT_EQUAL(atomic_load(&t.in_b), 0);
    tgc_thread_pool_free(t.b);
    tgc_thread_pool_free(w.pool);
}

/* One worker held by a gate while tasks queue behind it: those submitted
 * first run before those submitted at the back, the last of them first;
 * the rest in the order they came. */
typedef struct gated {
    atomic_int open, entered;
    int order[8], n; /* written by the one worker only */
} gated;

static gated gate;

static void wait_gate(void *arg) {
    (void)arg;
    atomic_store(&gate.entered, 1);
    while (!atomic_load(&gate.open)) {
    }
}

static void record(void *arg) { gate.order[gate.n++] = (int)(intptr_t)arg; }

/* A pool of one worker held by the closed gate (NULL where it cannot be
 * made). Returns once the worker is inside the gate: a task queued first
 * before then would have gone ahead of the gate itself. */
static tgc_thread_pool *gated_pool(void) {
    atomic_store(&gate.open, 0);
    atomic_store(&gate.entered, 0);
    gate.n = 0;
    tgc_thread_pool *p = NULL;
    CU_ASSERT_EQUAL(tgc_thread_pool_create(1, &p), TGC_OK);
    if (p == NULL) return NULL;
    if (tgc_thread_pool_submit(p, wait_gate, NULL) != TGC_OK) {
        CU_FAIL("the gate could not be queued");
        tgc_thread_pool_free(p);
        return NULL;
    }
    while (!atomic_load(&gate.entered)) {
    }
    return p;
}

static void test_submit_first(void) {
    tgc_thread_pool *p = gated_pool();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, record, (void *)1), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, record, (void *)2), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first(p, record, (void *)3), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first(p, record, (void *)4), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, record, (void *)5), TGC_OK);
    atomic_store(&gate.open, 1);
    tgc_thread_pool_free(p); /* drains, joins: the worker's writes are seen */
    int want[5] = {4, 3, 1, 2, 5};
    CU_ASSERT_EQUAL_FATAL(gate.n, 5);
    for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(gate.order[i], want[i]);
}

static atomic_int counted;

static void count_one(void *arg) {
    (void)arg;
    atomic_fetch_add(&counted, 1);
}

/* Copies submitted first at once go ahead of the queue together, as that
 * many submitted first one by one would (by hand, behind the gate: 1 2
 * queued, then three 3s at the front, then 4 at the front: 4 3 3 3 1 2);
 * 0 copies queue nothing; 150 copies grow the queue (64 slots at first)
 * within the one call, and each runs once. */
static void test_submit_first_copies(void) {
    atomic_store(&counted, 0);
    tgc_thread_pool *p = gated_pool();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, record, (void *)1), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, record, (void *)2), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first_n(p, record, (void *)3, 3), 3);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first_n(p, record, (void *)9, 0), 0);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first(p, record, (void *)4), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first_n(p, count_one, NULL, 150), 150);
    CU_ASSERT_EQUAL(tgc_thread_pool_cancel(p, count_one, NULL), 150); /* all still queued behind the gate */
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_first_n(p, count_one, NULL, 150), 150);
    atomic_store(&gate.open, 1);
    tgc_thread_pool_free(p);
    int want[6] = {4, 3, 3, 3, 1, 2};
    CU_ASSERT_EQUAL_FATAL(gate.n, 6);
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(gate.order[i], want[i]);
    CU_ASSERT_EQUAL(atomic_load(&counted), 150);
}

/* Ordered tasks (the executor's, by step id) pass the queued tasks of a
 * greater order, not those of an equal or smaller one (first come, first
 * run among equals), and never a task queued without an order. Queued
 * behind a gate: A 2, B 2, C 1, D 3, E 1, F (plain), G 1; by hand, C E A
 * B D F G. */
static void test_submit_ordered(void) {
    tgc_thread_pool *p = gated_pool();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const int ids[] = {1, 2, 3, 4, 5}; /* A..E */
    const uint64_t orders[] = {2, 2, 1, 3, 1};
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(tgc_thread_pool_submit_ordered(p, record, (void *)(intptr_t)ids[i], orders[i]), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, record, (void *)6), TGC_OK);             /* F */
    CU_ASSERT_EQUAL(tgc_thread_pool_submit_ordered(p, record, (void *)7, 1), TGC_OK); /* G */
    atomic_store(&gate.open, 1);
    tgc_thread_pool_free(p);
    int want[7] = {3, 5, 1, 2, 4, 6, 7};
    CU_ASSERT_EQUAL_FATAL(gate.n, 7);
    for (int i = 0; i < 7; i++) CU_ASSERT_EQUAL(gate.order[i], want[i]);
}

TGC_TEST_MAIN("thread pool", {"every task runs once", test_every_task_runs_once},
              {"tasks submit tasks", test_tasks_submit_tasks}, {"many producers", test_many_producers},
              {"worker index", test_worker_index}, {"submitted first", test_submit_first},
              {"submitted in order", test_submit_ordered}, {"copies submitted first", test_submit_first_copies})
