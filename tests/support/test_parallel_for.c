/* tgc_parallel_for: every index runs exactly once; no two running pieces
 * share a slot; calls from a pool's own workers, a pool of one worker and
 * nested calls finish (the caller never waits on a queued helper, and takes
 * it back from the queue before returning); a NULL pool runs in index order
 * on the caller; the pool's cancel removes only the queued tasks it names;
 * each participant starts on its own range, the range of its index in the
 * pool (the last one for a caller from outside); a caller standing in for
 * a worker counts as one.
 * Run under ThreadSanitizer by `make test`. */
#include "tests/harness.h"

#include "support/parallel_for.h"

#include <CUnit/CUnit.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#define N_INDICES 10000

typedef struct tally {
    atomic_int runs[N_INDICES];
    atomic_int busy[16]; /* per slot: pieces running with it now */
    atomic_int slot_clash, bad_slot;
    int width;
} tally;

static void count(void *arg, int64_t i, int slot) {
    tally *t = arg;
    if (slot < 0 || slot >= t->width) {
        atomic_fetch_add(&t->bad_slot, 1);
        return;
    }
    if (atomic_fetch_add(&t->busy[slot], 1) != 0) atomic_fetch_add(&t->slot_clash, 1);
    atomic_fetch_add(&t->runs[i], 1);
    for (volatile int spin = 0; spin < 50; spin++) {
    }
    atomic_fetch_sub(&t->busy[slot], 1);
}

static tally *tally_new(const tgc_thread_pool *p) {
    static tally t;
    for (int i = 0; i < N_INDICES; i++) atomic_store(&t.runs[i], 0);
    for (int s = 0; s < 16; s++) atomic_store(&t.busy[s], 0);
    atomic_store(&t.slot_clash, 0);
    atomic_store(&t.bad_slot, 0);
    t.width = tgc_parallel_width(p);
    return &t;
}

static int wrong_counts(tally *t, int n) {
    int wrong = 0;
    for (int i = 0; i < N_INDICES; i++) wrong += atomic_load(&t->runs[i]) != (i < n ? 1 : 0);
    return wrong;
}

static void test_every_index_once(void) {
    tgc_thread_pool *p;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &p), TGC_OK);
    CU_ASSERT_EQUAL(tgc_parallel_width(p), 4);
    int sizes[] = {0, 1, 2, 3, 7, 100, N_INDICES};
    for (int k = 0; k < 7; k++) {
        for (int rep = 0; rep < 20; rep++) {
            tally *t = tally_new(p);
            tgc_parallel_for(p, sizes[k], count, t);
            CU_ASSERT_EQUAL(wrong_counts(t, sizes[k]), 0);
            CU_ASSERT_EQUAL(atomic_load(&t->slot_clash), 0);
            CU_ASSERT_EQUAL(atomic_load(&t->bad_slot), 0);
        }
    }
    tgc_thread_pool_free(p);
}

static int64_t order[64];
static int order_len;

static void record(void *arg, int64_t i, int slot) {
    (void)arg;
    CU_ASSERT_EQUAL(slot, 0);
    order[order_len++] = i;
}

static void test_null_pool_in_order(void) {
    CU_ASSERT_EQUAL(tgc_parallel_width(NULL), 1);
    order_len = 0;
    tgc_parallel_for(NULL, 40, record, NULL);
    CU_ASSERT_EQUAL_FATAL(order_len, 40);
    for (int i = 0; i < 40; i++) CU_ASSERT_EQUAL(order[i], i);
}

/* A task on a one-worker pool runs a parallel_for over that same pool: its
 * helper can only start after the task returns, so the caller must finish
 * every index itself. */
typedef struct inside {
    tgc_thread_pool *pool;
    tally *t;
    atomic_bool done;
} inside;

static void from_worker(void *arg) {
    inside *in = arg;
    tgc_parallel_for(in->pool, 500, count, in->t);
    atomic_store(&in->done, true);
}

/* On one of the pool's workers the width is the pool's size, and the
 * slots stay below it. */
typedef struct on_worker {
    tgc_thread_pool *pool;
    tally *t;
    int width;
    atomic_bool done;
} on_worker;

static void width_on_worker(void *arg) {
    on_worker *w = arg;
    w->width = tgc_parallel_width(w->pool);
    w->t->width = w->width;
    tgc_parallel_for(w->pool, 300, count, w->t);
    atomic_store(&w->done, true);
}

static void test_width_on_a_worker(void) {
    on_worker w;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &w.pool), TGC_OK);
    CU_ASSERT_EQUAL(tgc_parallel_width(w.pool), 4); /* from outside: the caller too */
    for (int rep = 0; rep < 20; rep++) {
        w.t = tally_new(w.pool);
        atomic_init(&w.done, false);
        CU_ASSERT_EQUAL(tgc_thread_pool_submit(w.pool, width_on_worker, &w), TGC_OK);
        while (!atomic_load(&w.done)) {
        }
        CU_ASSERT_EQUAL(w.width, 3);
        CU_ASSERT_EQUAL(wrong_counts(w.t, 300), 0);
        CU_ASSERT_EQUAL(atomic_load(&w.t->bad_slot), 0);
        CU_ASSERT_EQUAL(atomic_load(&w.t->slot_clash), 0);
    }
    tgc_thread_pool_free(w.pool);
}

static void test_from_the_pools_only_worker(void) {
    inside in;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(1, &in.pool), TGC_OK);
    in.t = tally_new(in.pool);
    atomic_init(&in.done, false);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(in.pool, from_worker, &in), TGC_OK);
    while (!atomic_load(&in.done)) {
    }
    tgc_thread_pool_free(in.pool);
    CU_ASSERT_EQUAL(wrong_counts(in.t, 500), 0);
    CU_ASSERT_EQUAL(atomic_load(&in.t->slot_clash), 0);
}

/* Each outer index runs an inner parallel_for of 50 over the same pool. */
typedef struct nested {
    tgc_thread_pool *pool;
    atomic_int inner_runs[20 * 50];
} nested;

typedef struct inner_arg {
    nested *n;
    int64_t outer;
} inner_arg;

static void inner(void *arg, int64_t i, int slot) {
    (void)slot;
    inner_arg *a = arg;
    atomic_fetch_add(&a->n->inner_runs[a->outer * 50 + i], 1);
}

static void outer(void *arg, int64_t i, int slot) {
    (void)slot;
    inner_arg a = {arg, i};
    tgc_parallel_for(((nested *)arg)->pool, 50, inner, &a);
}

static void test_nested(void) {
    static nested n;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &n.pool), TGC_OK);
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < 20 * 50; i++) atomic_store(&n.inner_runs[i], 0);
        tgc_parallel_for(n.pool, 20, outer, &n);
        int wrong = 0;
        for (int i = 0; i < 20 * 50; i++) wrong += atomic_load(&n.inner_runs[i]) != 1;
        CU_ASSERT_EQUAL(wrong, 0);
    }
    tgc_thread_pool_free(n.pool);
}

/* The pool's only worker is blocked: the caller's helper stays queued, so
 * the caller runs every index itself and, returning, takes the helper back
 * (it never runs later against the finished call). */
static atomic_bool release_blocker, blocker_started;

static void blocker(void *arg) {
    (void)arg;
    atomic_store(&blocker_started, true);
    while (!atomic_load(&release_blocker)) {
    }
}

/* Queues the blocker on p's only worker and waits until it runs. */
static void block_worker(tgc_thread_pool *p) {
    atomic_store(&release_blocker, false);
    atomic_store(&blocker_started, false);
    CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, blocker, NULL), TGC_OK);
    while (!atomic_load(&blocker_started)) {
    }
}

static void test_queued_helpers_taken_back(void) {
    tgc_thread_pool *p;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(1, &p), TGC_OK);
    block_worker(p);
    tally *t = tally_new(p);
    tgc_parallel_for(p, 300, count, t);
    CU_ASSERT_EQUAL(wrong_counts(t, 300), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->busy[1]), 0);
    CU_ASSERT_EQUAL(tgc_thread_pool_cancel(p, blocker, NULL), 0); /* already running */
    atomic_store(&release_blocker, true);
    tgc_thread_pool_free(p); /* drains: a helper left queued would run here */
    CU_ASSERT_EQUAL(wrong_counts(t, 300), 0);
}

static atomic_int cancel_runs[8];

static void mark_cancel(void *arg) { atomic_fetch_add(&cancel_runs[(intptr_t)arg], 1); }

static void test_cancel_removes_only_matching_queued_tasks(void) {
    tgc_thread_pool *p;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(1, &p), TGC_OK);
    for (int i = 0; i < 8; i++) atomic_store(&cancel_runs[i], 0);
    block_worker(p);
    for (int round = 0; round < 3; round++)
        for (intptr_t i = 0; i < 8; i++) CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, mark_cancel, (void *)i), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_cancel(p, mark_cancel, (void *)3), 3);
    CU_ASSERT_EQUAL(tgc_thread_pool_cancel(p, mark_cancel, (void *)5), 3);
    CU_ASSERT_EQUAL(tgc_thread_pool_cancel(p, mark_cancel, (void *)5), 0);
    atomic_store(&release_blocker, true);
    tgc_thread_pool_free(p);
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(atomic_load(&cancel_runs[i]), i == 3 || i == 5 ? 0 : 3);
}

/* Every participant's first index, by who it is (a worker's index in the
 * pool, or `size` for a caller from outside). Each first piece waits until
 * all participants have started, so that no range is taken by another
 * before its owner arrives. */
typedef struct firsts {
    tgc_thread_pool *pool;
    int participants;
    int64_t n;
    atomic_int started, timed_out;
    atomic_int_fast64_t first[8]; /* -1: none yet */
} firsts;

static void note_first(void *arg, int64_t i, int slot) {
    (void)slot;
    firsts *f = arg;
    int who = tgc_thread_pool_worker_index(f->pool);
    if (who < 0) who = tgc_thread_pool_size(f->pool);
    int_fast64_t none = -1;
    if (!atomic_compare_exchange_strong(&f->first[who], &none, i)) return;
    atomic_fetch_add(&f->started, 1);
    time_t deadline = time(NULL) + 20;
    while (atomic_load(&f->started) < f->participants)
        if (time(NULL) > deadline) {
            atomic_store(&f->timed_out, 1);
            return;
        }
}

static void firsts_init(firsts *f, tgc_thread_pool *p, int participants, int64_t n) {
    f->pool = p;
    f->participants = participants;
    f->n = n;
    atomic_init(&f->started, 0);
    atomic_init(&f->timed_out, 0);
    for (int i = 0; i < 8; i++) atomic_init(&f->first[i], -1);
}

static void firsts_from_worker(void *arg) {
    firsts *f = arg;
    tgc_parallel_for(f->pool, f->n, note_first, f);
    atomic_store(&f->started, -100); /* done */
}

static void test_each_starts_on_its_own_range(void) {
    tgc_thread_pool *p;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(3, &p), TGC_OK);
    CU_ASSERT_EQUAL(tgc_thread_pool_worker_index(p), -1); /* not a worker */
    for (int rep = 0; rep < 5; rep++) { /* from outside: 4 ranges of 100, the caller's the last */
        firsts f;
        firsts_init(&f, p, 4, 400);
        tgc_parallel_for(p, 400, note_first, &f);
        CU_ASSERT_EQUAL(atomic_load(&f.timed_out), 0);
        for (int who = 0; who < 4; who++) CU_ASSERT_EQUAL(atomic_load(&f.first[who]), who * 100);
    }
    tgc_thread_pool_free(p);
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &p), TGC_OK);
    for (int rep = 0; rep < 5; rep++) { /* from a worker: 2 ranges, one a worker */
        firsts f;
        firsts_init(&f, p, 2, 200);
        CU_ASSERT_EQUAL(tgc_thread_pool_submit(p, firsts_from_worker, &f), TGC_OK);
        while (atomic_load(&f.started) >= 0) {
        }
        CU_ASSERT_EQUAL(atomic_load(&f.timed_out), 0);
        CU_ASSERT_EQUAL(atomic_load(&f.first[0]), 0);
        CU_ASSERT_EQUAL(atomic_load(&f.first[1]), 100);
        CU_ASSERT_EQUAL(atomic_load(&f.first[2]), -1); /* no outsider took part */
    }
    tgc_thread_pool_free(p);
}

/* A caller standing in for one of a pool's workers (a step's caller
 * running its first nodes) counts as one of them: the pool's size in all,
 * every index once, no slot past it; over a pool of one worker everything
 * runs on the caller, in order. Another pool, and the caller after it
 * stands down, count it as before. */
static void test_caller_standing_in(void) {
    tgc_thread_pool *p, *q, *one;
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &p), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(2, &q), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_thread_pool_create(1, &one), TGC_OK);
    CU_ASSERT_EQUAL(tgc_parallel_width(p), 3);
    tgc_thread_pool_stand_in(p);
    CU_ASSERT(tgc_thread_pool_counts_caller(p));
    CU_ASSERT_EQUAL(tgc_thread_pool_worker_index(p), -1);
    CU_ASSERT_EQUAL(tgc_parallel_width(p), 2);
    CU_ASSERT_EQUAL(tgc_parallel_width(q), 3);
    for (int rep = 0; rep < 20; rep++) {
        tally *t = tally_new(p);
        tgc_parallel_for(p, N_INDICES, count, t);
        CU_ASSERT_EQUAL(wrong_counts(t, N_INDICES), 0);
        CU_ASSERT_EQUAL(atomic_load(&t->slot_clash), 0);
        CU_ASSERT_EQUAL(atomic_load(&t->bad_slot), 0); /* slots 0 and 1 only */
    }
    tgc_thread_pool_stand_in(one);
    CU_ASSERT_EQUAL(tgc_parallel_width(one), 1);
    order_len = 0;
    tgc_parallel_for(one, 40, record, NULL); /* slot 0 each time: asserted in record */
    CU_ASSERT_EQUAL(order_len, 40);
    for (int i = 0; i < order_len; i++) CU_ASSERT_EQUAL(order[i], i);
    tgc_thread_pool_stand_in(NULL);
    CU_ASSERT(!tgc_thread_pool_counts_caller(p));
    CU_ASSERT_EQUAL(tgc_parallel_width(p), 3);
    CU_ASSERT_EQUAL(tgc_parallel_width(one), 2);
    tgc_thread_pool_free(p), tgc_thread_pool_free(q), tgc_thread_pool_free(one);
}

TGC_TEST_MAIN("parallel for", {"every index once, slots never shared", test_every_index_once},
              {"a caller standing in for a worker", test_caller_standing_in},
              {"NULL pool: in order on the caller", test_null_pool_in_order},
              {"from the pool's only worker", test_from_the_pools_only_worker},
              {"width on a worker: the pool's size", test_width_on_a_worker}, {"nested", test_nested},
              {"queued helpers taken back", test_queued_helpers_taken_back},
              {"cancel removes only matching queued tasks", test_cancel_removes_only_matching_queued_tasks},
              {"each participant starts on its own range", test_each_starts_on_its_own_range})
