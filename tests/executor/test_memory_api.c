/* The memory API as a user meets it: the classic leak (a loop that creates
 * tensors and never releases them) grows the counters by exactly what the
 * shapes say; its two fixes, explicit release and a scope around the loop
 * body, keep them flat; scopes nest, keep and move out as documented, and
 * are per thread; a release inside a scope is not released again; the
 * memory trace gives the host's peak since the last reset; device memory. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The digits MLP: x [400, 64] in, logits and probs [400, 10] float32 out. */
#define RUNS 100
#define OUT_BYTES (400 * 10 * 4)

typedef struct mlp {
    tgc_diags *diags;
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x;
} mlp;

static bool open_mlp(mlp *m) {
    memset(m, 0, sizeof *m);
    m->diags = tgc_diags_create();
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/mlp.yaml"));
    if (tgc_graph_load(path, m->diags, &m->g) != TGC_OK) goto fail;
    if (tgc_session_create(m->g, "cpu", NULL, m->diags, &m->s) != TGC_OK) goto fail;
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_x_flat.npy"));
    if (tgc_tensor_load_npy(path, m->diags, &m->x) != TGC_OK) goto fail;
    return true;
fail:
    tgc_diags_print(m->diags, stderr);
    return false;
}

static void close_mlp(mlp *m) {
    tgc_tensor_release(m->x);
    tgc_session_free(m->s);
    tgc_graph_free(m->g);
    tgc_diags_free(m->diags);
}

static tgc_status run_mlp(mlp *m, tgc_tensor *outs[2]) {
    const char *names[] = {"x"};
    tgc_status st = tgc_session_run(m->s, 1, names, &m->x, outs, m->diags);
    if (st != TGC_OK) tgc_diags_print(m->diags, stderr);
    return st;
}

/* The counters a leak moves, all at once. */
static void assert_grown_by(tgc_memory_info base, int64_t tensors, int64_t bytes) {
    tgc_memory_info now = tgc_memory();
    CU_ASSERT_EQUAL(now.live_tensors, base.live_tensors + tensors);
    CU_ASSERT_EQUAL(now.live_tensor_bytes, base.live_tensor_bytes + bytes);
    CU_ASSERT_EQUAL(now.host.live_buffers, base.host.live_buffers + tensors);
    CU_ASSERT_EQUAL(now.host.bytes_in_use, base.host.bytes_in_use + bytes);
}

/* ---- the leak and its two fixes -------------------------------------------- */

static void test_the_classic_leak_grows_by_exactly_the_outputs(void) {
    mlp m;
    CU_ASSERT_FATAL(open_mlp(&m));
    tgc_memory_info base = tgc_memory();
    static tgc_tensor *leaked[RUNS][2];
    for (int i = 0; i < RUNS; i++) {
        CU_ASSERT_EQUAL_FATAL(run_mlp(&m, leaked[i]), TGC_OK);
        /* never released: two more handles of 400 x 10 float32 each run */
        assert_grown_by(base, 2 * (i + 1), 2 * (int64_t)OUT_BYTES * (i + 1));
    }
    tgc_memory_info after = tgc_memory();
    printf("\n  %d runs, outputs never released: +%lld handles, +%lld bytes (2 x %d x 400 x 10 x 4 = %d)\n", RUNS,
           (long long)(after.live_tensors - base.live_tensors),
           (long long)(after.live_tensor_bytes - base.live_tensor_bytes), RUNS, 2 * RUNS * OUT_BYTES);
    CU_ASSERT_EQUAL(after.live_tensors - base.live_tensors, 200);
    CU_ASSERT_EQUAL(after.live_tensor_bytes - base.live_tensor_bytes, 3200000);
    for (int i = 0; i < RUNS; i++) {
        tgc_tensor_release(leaked[i][0]);
        tgc_tensor_release(leaked[i][1]);
    }
    assert_grown_by(base, 0, 0);
    close_mlp(&m);
}

static void test_fix_one_explicit_release_keeps_the_counters_flat(void) {
    mlp m;
    CU_ASSERT_FATAL(open_mlp(&m));
    tgc_memory_info base = tgc_memory();
    for (int i = 0; i < RUNS; i++) {
        tgc_tensor *outs[2];
        CU_ASSERT_EQUAL_FATAL(run_mlp(&m, outs), TGC_OK);
        assert_grown_by(base, 2, 2 * OUT_BYTES); /* while held */
        tgc_tensor_release(outs[0]);
        tgc_tensor_release(outs[1]);
        assert_grown_by(base, 0, 0);
    }
    close_mlp(&m);
}

static void test_fix_two_a_scope_keeps_the_counters_flat_but_for_the_kept(void) {
    mlp m;
    CU_ASSERT_FATAL(open_mlp(&m));
    tgc_memory_info base = tgc_memory();
    tgc_tensor *last = NULL;
    for (int i = 0; i < RUNS; i++) {
        CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
        tgc_tensor *outs[2];
        CU_ASSERT_EQUAL_FATAL(run_mlp(&m, outs), TGC_OK);
        CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 2);
        if (i == RUNS - 1) last = tgc_keep(outs[0]);
        int64_t released = tgc_scope_end();
        CU_ASSERT_EQUAL(released, i == RUNS - 1 ? 1 : 2);
        if (i < RUNS - 1) assert_grown_by(base, 0, 0);
    }
    /* One kept tensor survives, and its bytes are counted. */
    assert_grown_by(base, 1, OUT_BYTES);
    CU_ASSERT_EQUAL(tgc_memory().scope_depth, 0);
    CU_ASSERT_EQUAL(tgc_tensor_dims(last)[0], 400);
    CU_ASSERT_EQUAL(tgc_tensor_dims(last)[1], 10);
    tgc_tensor_release(last);
    assert_grown_by(base, 0, 0);
    close_mlp(&m);
}

/* ---- scope semantics ----------------------------------------------------------- */

static tgc_tensor *make(int64_t n) {
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL(tgc_tensor_create(TGC_FLOAT32, 1, &n, NULL, &t), TGC_OK);
    return t;
}

static void test_scopes_nest_and_move_out_goes_to_the_enclosing_one(void) {
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_EQUAL(base.scope_depth, 0);
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *a = make(10); /* outer */
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *b = make(20), *c = make(30); /* inner */
    CU_ASSERT_EQUAL(tgc_memory().scope_depth, 2);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 3);
    CU_ASSERT_PTR_EQUAL(tgc_scope_move_out(c), c); /* to the outer scope */
    CU_ASSERT_EQUAL(tgc_scope_end(), 1);           /* b */
    assert_grown_by(base, 2, (10 + 30) * 4);
    CU_ASSERT_EQUAL(tgc_memory().scope_depth, 1);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 2);
    CU_ASSERT_EQUAL(tgc_tensor_numel(c), 30); /* still alive */
    CU_ASSERT_EQUAL(tgc_scope_end(), 2);      /* a and c */
    assert_grown_by(base, 0, 0);
    CU_ASSERT_EQUAL(tgc_memory().scope_depth, 0);
    CU_ASSERT_EQUAL(tgc_scope_end(), 0); /* none open: nothing happens */
    (void)a;
    (void)b;
}

static void test_keep_takes_a_handle_out_of_every_scope(void) {
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_PTR_NULL(tgc_keep(NULL));
    CU_ASSERT_PTR_NULL(tgc_scope_move_out(NULL));
    tgc_tensor *free_standing = make(5);
    CU_ASSERT_PTR_EQUAL(tgc_keep(free_standing), free_standing); /* no scope: nothing to do */
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *outer = make(7);
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *inner = make(9);
    tgc_keep(outer); /* from the outer scope, while the inner is open */
    tgc_keep(inner);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 0);
    CU_ASSERT_EQUAL(tgc_scope_end(), 0);
    CU_ASSERT_EQUAL(tgc_scope_end(), 0);
    assert_grown_by(base, 3, (5 + 7 + 9) * 4);
    tgc_tensor_release(free_standing);
    tgc_tensor_release(outer);
    tgc_tensor_release(inner);
    assert_grown_by(base, 0, 0);
}

static void test_move_out_of_the_outermost_scope_is_keep(void) {
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *t = make(16);
    tgc_scope_move_out(t);
    CU_ASSERT_EQUAL(tgc_scope_end(), 0);
    assert_grown_by(base, 1, 64);
    tgc_tensor_release(t);
    assert_grown_by(base, 0, 0);
}

static void test_a_release_inside_a_scope_is_not_released_again(void) {
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *early = make(100), *late = make(200);
    tgc_tensor_release(early); /* gone now, and out of the scope */
    assert_grown_by(base, 1, 800);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 1);
    CU_ASSERT_EQUAL(tgc_scope_end(), 1); /* late only */
    assert_grown_by(base, 0, 0);
    (void)late;
}

static void test_a_retained_handle_outlives_its_scope(void) {
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *t = make(8);
    tgc_tensor *shared = tgc_tensor_retain(t); /* the retainer's reference */
    CU_ASSERT_EQUAL(tgc_scope_end(), 1);        /* the scope's reference */
    assert_grown_by(base, 1, 32);
    CU_ASSERT_EQUAL(tgc_tensor_numel(shared), 8);
    tgc_tensor_release(shared);
    assert_grown_by(base, 0, 0);

    /* Retain then release inside the scope: the release gives up the
     * scope's reference; the one left is the retainer's. */
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    t = make(8);
    tgc_tensor_retain(t);
    tgc_tensor_release(t);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 0);
    CU_ASSERT_EQUAL(tgc_scope_end(), 0);
    assert_grown_by(base, 1, 32);
    tgc_tensor_release(t);
    assert_grown_by(base, 0, 0);
}

static void test_a_failed_run_leaves_nothing_in_the_scope(void) {
    mlp m;
    CU_ASSERT_FATAL(open_mlp(&m));
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    const char *names[] = {"not_an_input"};
    tgc_tensor *outs[2] = {NULL, NULL};
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_session_run(m.s, 1, names, &m.x, outs, d), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(outs[0]);
    CU_ASSERT_PTR_NULL(outs[1]);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 0);
    CU_ASSERT_EQUAL(tgc_scope_end(), 0);
    assert_grown_by(base, 0, 0);
    tgc_diags_free(d);
    close_mlp(&m);
}

static void test_load_npy_registers_with_the_scope(void) {
    tgc_memory_info base = tgc_memory();
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *x = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_x_flat.npy"));
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_load_npy(path, NULL, &x), TGC_OK);
    assert_grown_by(base, 1, 400 * 64 * 4);
    CU_ASSERT_EQUAL(tgc_scope_end(), 1);
    assert_grown_by(base, 0, 0);
}

/* ---- threads ------------------------------------------------------------------ */

#define THREAD_ROUNDS 500

/* Each thread: nested scopes, move out, keep; its figures are its own. */
static void *scoped_worker(void *arg) {
    int *failures = arg;
    for (int r = 0; r < THREAD_ROUNDS; r++) {
        if (tgc_scope_begin() != TGC_OK) {
            (*failures)++;
            continue;
        }
        tgc_tensor *keep_me = NULL, *t = NULL;
        int64_t n = 4 + r % 5;
        for (int i = 0; i < 3; i++) tgc_tensor_create(TGC_FLOAT32, 1, &n, NULL, &t);
        keep_me = t;
        if (tgc_scope_begin() == TGC_OK) {
            tgc_tensor *a = NULL, *b = NULL;
            tgc_tensor_create(TGC_INT32, 1, &n, NULL, &a);
            tgc_tensor_create(TGC_INT32, 1, &n, NULL, &b);
            tgc_scope_move_out(b);
            tgc_memory_info in = tgc_memory();
            if (in.scope_depth != 2 || in.scoped_tensors != 5) (*failures)++;
            if (tgc_scope_end() != 1) (*failures)++;
        }
        tgc_keep(keep_me);
        tgc_memory_info mid = tgc_memory();
        if (mid.scope_depth != 1 || mid.scoped_tensors != 3) (*failures)++;
        if (tgc_scope_end() != 3) (*failures)++;
        if (tgc_tensor_numel(keep_me) != n) (*failures)++;
        tgc_tensor_release(keep_me);
    }
    return NULL;
}

/* Leaves a scope open with two handles in it: they go when it exits. */
static void *exits_with_a_scope_open(void *arg) {
    (void)arg;
    if (tgc_scope_begin() != TGC_OK) return NULL;
    tgc_tensor *t = NULL;
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){64}, NULL, &t);
    if (tgc_scope_begin() != TGC_OK) return NULL;
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){64}, NULL, &t);
    return NULL;
}

/* Releases a handle that the main thread's scope holds. */
static void *releases_anothers(void *arg) {
    tgc_tensor_release(arg);
    return NULL;
}

static void test_scopes_are_per_thread(void) {
    tgc_memory_info base = tgc_memory();
    pthread_t th[2];
    int failures[2] = {0, 0};
    /* The main thread has a scope open meanwhile: the workers' handles never enter it. */
    CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
    tgc_tensor *mine = make(3), *handed = make(4);
    for (int i = 0; i < 2; i++) CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, scoped_worker, &failures[i]), 0);
    pthread_t other;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&other, NULL, releases_anothers, handed), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    pthread_join(other, NULL);
    CU_ASSERT_EQUAL(failures[0], 0);
    CU_ASSERT_EQUAL(failures[1], 0);
    CU_ASSERT_EQUAL(tgc_memory().scope_depth, 1);
    CU_ASSERT_EQUAL(tgc_memory().scoped_tensors, 1); /* mine; handed left when released */
    assert_grown_by(base, 1, 12);
    CU_ASSERT_EQUAL(tgc_scope_end(), 1);
    assert_grown_by(base, 0, 0);
    (void)mine;

    pthread_t quitter;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&quitter, NULL, exits_with_a_scope_open, NULL), 0);
    pthread_join(quitter, NULL);
    assert_grown_by(base, 0, 0);
}

/* ---- trace and device memory ----------------------------------------------------- */

static void test_the_trace_gives_the_peak_since_the_last_reset(void) {
    tgc_memory_trace t;
    CU_ASSERT_EQUAL(tgc_memory_trace_report(&t), TGC_ERR_INVALID); /* not started */
    tgc_memory_trace_start();
    CU_ASSERT_EQUAL_FATAL(tgc_memory_trace_report(&t), TGC_OK);
    int64_t in_use = t.bytes_in_use;
    CU_ASSERT_EQUAL(t.peak_bytes_in_use, in_use);
    CU_ASSERT_EQUAL(t.num_allocs, 0);

    tgc_tensor *big = make(256 * 1024); /* 1 MiB, then gone */
    tgc_tensor_release(big);
    tgc_memory_trace_report(&t);
    CU_ASSERT_EQUAL(t.bytes_in_use, in_use);
    CU_ASSERT_EQUAL(t.peak_bytes_in_use, in_use + (1 << 20));
    CU_ASSERT_EQUAL(t.num_allocs, 1);

    tgc_memory_trace_reset();
    tgc_memory_trace_report(&t);
    CU_ASSERT_EQUAL(t.peak_bytes_in_use, in_use); /* the 1 MiB is before the mark */
    CU_ASSERT_EQUAL(t.num_allocs, 0);
    CU_ASSERT_EQUAL(tgc_memory().host.peak_bytes_in_use, in_use);

    tgc_tensor *a = make(1024), *b = make(2048); /* 4 KiB and 8 KiB at once */
    tgc_tensor_release(a);
    tgc_tensor *c = make(512);
    tgc_tensor_release(b);
    tgc_tensor_release(c);
    tgc_memory_trace_report(&t);
    CU_ASSERT_EQUAL(t.peak_bytes_in_use, in_use + 4096 + 8192);
    CU_ASSERT_EQUAL(t.num_allocs, 3);
    CU_ASSERT_EQUAL(t.bytes_in_use, in_use);
    CU_ASSERT_EQUAL(t.live_tensors, tgc_memory().live_tensors);

    /* A run: its outputs are host tensors, 2 x 16000 bytes at least. */
    mlp m;
    CU_ASSERT_FATAL(open_mlp(&m));
    tgc_memory_trace_reset();
    tgc_memory_trace_report(&t);
    int64_t before = t.bytes_in_use;
    tgc_tensor *outs[2];
    CU_ASSERT_EQUAL_FATAL(run_mlp(&m, outs), TGC_OK);
    tgc_tensor_release(outs[0]);
    tgc_tensor_release(outs[1]);
    tgc_memory_trace_report(&t);
    CU_ASSERT(t.peak_bytes_in_use >= before + 2 * OUT_BYTES);
    CU_ASSERT(t.num_allocs >= 2);
    CU_ASSERT_EQUAL(t.bytes_in_use, before);
    printf("\n  trace over one MLP run: peak %lld bytes above the start, %lld host allocations\n",
           (long long)(t.peak_bytes_in_use - before), (long long)t.num_allocs);
    close_mlp(&m);
}

static void test_device_memory_gives_total_used_and_free(void) {
    tgc_device_memory_info mi;
    CU_ASSERT_EQUAL_FATAL(tgc_device_memory("cpu", &mi), TGC_OK);
    CU_ASSERT(mi.total_bytes > 0);
    CU_ASSERT(mi.free_bytes == -1 || (mi.free_bytes > 0 && mi.free_bytes <= mi.total_bytes));
    tgc_tensor *t = make(1000);
    CU_ASSERT_EQUAL(tgc_device_memory("cpu0", &mi), TGC_OK);
    CU_ASSERT_EQUAL(mi.used_bytes, tgc_memory().host.bytes_in_use);
    CU_ASSERT(mi.used_bytes >= 4000);
    tgc_tensor_release(t);
    CU_ASSERT_EQUAL(tgc_device_memory("host", &mi), TGC_OK);
    CU_ASSERT_EQUAL(tgc_device_memory("tpu0", &mi), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(mi.total_bytes, -1);
    CU_ASSERT_EQUAL(tgc_device_memory("gpu999", &mi), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_device_memory("cpu0x", &mi), TGC_ERR_INVALID);
    tgc_device_info info[4];
    if (tgc_devices_list(info, 4) > 1) {
        CU_ASSERT_EQUAL(tgc_device_memory("gpu", &mi), TGC_OK);
        CU_ASSERT_EQUAL(mi.total_bytes, info[1].total_memory);
        CU_ASSERT_EQUAL(tgc_device_memory("gpu0", &mi), TGC_OK);
    }
}

TGC_TEST_MAIN("memory API",
              {"the classic leak grows by exactly the outputs", test_the_classic_leak_grows_by_exactly_the_outputs},
              {"fix 1: explicit release keeps the counters flat", test_fix_one_explicit_release_keeps_the_counters_flat},
              {"fix 2: a scope keeps the counters flat but for the kept",
               test_fix_two_a_scope_keeps_the_counters_flat_but_for_the_kept},
              {"scopes nest; move out goes to the enclosing one",
               test_scopes_nest_and_move_out_goes_to_the_enclosing_one},
              {"keep takes a handle out of every scope", test_keep_takes_a_handle_out_of_every_scope},
              {"move out of the outermost scope is keep", test_move_out_of_the_outermost_scope_is_keep},
              {"a release inside a scope is not released again", test_a_release_inside_a_scope_is_not_released_again},
              {"a retained handle outlives its scope", test_a_retained_handle_outlives_its_scope},
              {"a failed run leaves nothing in the scope", test_a_failed_run_leaves_nothing_in_the_scope},
              {"load_npy registers with the scope", test_load_npy_registers_with_the_scope},
              {"scopes are per thread", test_scopes_are_per_thread},
              {"the trace gives the peak since the last reset", test_the_trace_gives_the_peak_since_the_last_reset},
              {"device memory gives total, used and free", test_device_memory_gives_total_used_and_free})
