/* Eager ops from several threads on one context: the kernel cache's
 * inserts, lookups and each thread's last entry, shared devices and
 * scopes per thread; every result checked against the sum written here,
 * and nothing left live after. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define OPS 2000

typedef struct worker {
    tgc_eager *e;
    int id;
    int wrong;
} worker;

/* Adds in shapes [1] .. [4] (a few keys, shared by all threads), in a scope per op. */
static void *work(void *arg) {
    worker *w = arg;
    tgc_diags *diags = tgc_diags_create();
    for (int i = 0; i < OPS; i++) {
        int64_t n = 1 + (i + w->id) % 4;
        float a[4] = {1, 2, 3, 4}, b[4] = {(float)w->id, (float)i, 0, -1};
        if (tgc_scope_begin() != TGC_OK) {
            w->wrong++;
            continue;
        }
        tgc_tensor *x = NULL, *y = NULL, *z = NULL;
        tgc_tensor_create(TGC_FLOAT32, 1, &n, a, &x);
        tgc_tensor_create(TGC_FLOAT32, 1, &n, b, &y);
        tgc_tensor *in[] = {x, y};
        if (tgc_eager_run(w->e, i % 2 ? "Add" : "Mul", NULL, 0, in, 2, NULL, &z, 1, diags) != TGC_OK) {
            w->wrong++;
        } else {
            const float *v = tgc_tensor_data(z);
            for (int64_t k = 0; k < n; k++)
                if (v[k] != (i % 2 ? a[k] + b[k] : a[k] * b[k])) w->wrong++;
        }
        tgc_scope_end(); /* x, y, z */
    }
    tgc_diags_free(diags);
    return NULL;
}

static void test_threads_share_a_context(void) {
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_create("cpu", NULL, diags, &e), TGC_OK);
    int64_t before = tgc_memory().live_tensors;
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){e, i, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(w[i].wrong, 0);
    }
    tgc_eager_stats st = tgc_eager_get_stats(e);
    CU_ASSERT_EQUAL(st.ops, THREADS * OPS);
    CU_ASSERT_EQUAL(st.cache_hits + st.cache_misses, THREADS * OPS);
    CU_ASSERT(st.cache_entries == 8); /* {Add, Mul} x 4 shapes, however the threads raced */
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before);
    tgc_eager_free(e);
    tgc_diags_free(diags);
}

TGC_TEST_MAIN("eager threads", {"threads share a context", test_threads_share_a_context})
