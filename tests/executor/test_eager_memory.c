/* The memory stories with eager ops: the classic leak (10^4 ops in a loop,
 * nothing released) grows the live tensors by exactly 10^4 and the bytes
 * by what the shapes say; a scope around the loop body keeps them flat;
 * a kept tensor survives its scope; tgc_memory_devices counts per device;
 * memory traces give used and peak deltas over a block, nested too. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#define LOOPS 10000

typedef struct fixture {
    tgc_diags *diags;
    tgc_eager *e;
    tgc_tensor *x, *one;
} fixture;

static fixture open_fixture(void) {
    fixture f = {tgc_diags_create(), NULL, NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(tgc_eager_create("cpu", NULL, f.diags, &f.e), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4}, &f.x), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 0, NULL, (float[]){1}, &f.one), TGC_OK);
    return f;
}

static void close_fixture(fixture *f) {
    tgc_tensor_release(f->x);
    tgc_tensor_release(f->one);
    tgc_eager_free(f->e);
    tgc_diags_free(f->diags);
}

/* y = x + 1, a new [4] float32 tensor (16 bytes) each call. */
static tgc_tensor *add_one(fixture *f, tgc_tensor *x) {
    tgc_tensor *in[] = {x, f->one}, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_eager_run(f->e, "Add", NULL, 0, in, 2, NULL, &y, 1, f->diags), TGC_OK);
    return y;
}

static void test_leak_grows_by_exactly_the_loop(void) {
    fixture f = open_fixture();
    static tgc_tensor *kept[LOOPS];
    tgc_memory_info before = tgc_memory();
    tgc_memory_device cpu_before = tgc_test_device_memory("cpu0");
    for (int i = 0; i < LOOPS; i++) kept[i] = add_one(&f, f.x); /* the leak: nothing released */
    tgc_memory_info after = tgc_memory();
    tgc_memory_device cpu_after = tgc_test_device_memory("cpu0");
    printf("\n    leak: live tensors %lld -> %lld, bytes %lld -> %lld; cpu0 bytes in use %lld -> %lld\n",
           (long long)before.live_tensors, (long long)after.live_tensors, (long long)before.live_tensor_bytes,
           (long long)after.live_tensor_bytes, (long long)cpu_before.bytes_in_use, (long long)cpu_after.bytes_in_use);
    CU_ASSERT_EQUAL(after.live_tensors - before.live_tensors, LOOPS);
    CU_ASSERT_EQUAL(after.live_tensor_bytes - before.live_tensor_bytes, LOOPS * 16);
    CU_ASSERT_EQUAL(cpu_after.live_tensors - cpu_before.live_tensors, LOOPS);
    CU_ASSERT_EQUAL(cpu_after.bytes_in_use - cpu_before.bytes_in_use, LOOPS * 16);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(kept[LOOPS - 1]))[3], 5);
    for (int i = 0; i < LOOPS; i++) tgc_tensor_release(kept[i]); /* the first fix: release */
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors);
    CU_ASSERT_EQUAL(tgc_test_device_memory("cpu0").bytes_in_use, cpu_before.bytes_in_use);
    tgc_eager_stats st = tgc_eager_get_stats(f.e);
    CU_ASSERT_EQUAL(st.cache_misses, 1);
    CU_ASSERT_EQUAL(st.cache_hits, LOOPS - 1);
    close_fixture(&f);
}

/* The second fix: a scope per iteration; the chain's last value is kept. */
static void test_scope_keeps_it_flat(void) {
    fixture f = open_fixture();
    tgc_memory_info before = tgc_memory();
    tgc_tensor *last = NULL;
    int64_t most = 0;
    for (int i = 0; i < LOOPS; i++) {
        CU_ASSERT_EQUAL_FATAL(tgc_scope_begin(), TGC_OK);
        tgc_tensor *a = add_one(&f, f.x), *b = add_one(&f, a); /* a temporary and a result */
        if (i == LOOPS - 1) last = tgc_keep(b);
        CU_ASSERT_EQUAL(tgc_scope_end(), i == LOOPS - 1 ? 1 : 2);
        int64_t live = tgc_memory().live_tensors - before.live_tensors;
        if (live > most) most = live;
    }
    printf("\n    scoped: at most %lld more live tensors after an iteration; the kept one survives\n",
           (long long)most);
    CU_ASSERT_EQUAL(most, 1); /* only the kept tensor, after the last iteration */
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors + 1);
    CU_ASSERT_EQUAL(((const float *)tgc_tensor_data(last))[0], 3);
    tgc_tensor_release(last);
    CU_ASSERT_EQUAL(tgc_memory().live_tensors, before.live_tensors);
    close_fixture(&f);
}

/* Used and peak deltas over a block, and a trace nested in it. */
static void test_memory_trace(void) {
    fixture f = open_fixture();
    tgc_tensor *big = NULL, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1 << 16}, NULL, &big), TGC_OK);
    tgc_memory_tracer *outer = NULL, *inner = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_memory_tracer_start(&outer), TGC_OK);
    tgc_tensor *in[] = {big, f.one};
    CU_ASSERT_EQUAL(tgc_eager_run(f.e, "Add", NULL, 0, in, 2, NULL, &y, 1, f.diags), TGC_OK); /* 256 KiB */
    tgc_tensor_release(y);                                                                   /* back to the start */
    CU_ASSERT_EQUAL_FATAL(tgc_memory_tracer_start(&inner), TGC_OK);
    tgc_tensor *small = add_one(&f, f.x); /* 16 bytes, kept past both traces */
    tgc_memory_delta d[8];
    int n = tgc_memory_tracer_report(inner, d, 8);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(d[0].device, "host");
    CU_ASSERT_STRING_EQUAL(d[1].device, "cpu0");
    CU_ASSERT_EQUAL(d[1].used_delta, 16);
    CU_ASSERT_EQUAL(d[1].peak_delta, 16);
    CU_ASSERT_EQUAL(d[1].tensors_delta, 1);
    CU_ASSERT_EQUAL(d[0].used_delta, 0);
    n = tgc_memory_tracer_report(outer, d, 8);
    CU_ASSERT_EQUAL(d[1].used_delta, 16);
    CU_ASSERT_EQUAL(d[1].peak_delta, 4 << 16); /* the Add's result, gone before the inner trace reset the peak */
    printf("\n    trace: cpu0 used +%lld, peak +%lld (outer); ", (long long)d[1].used_delta,
           (long long)d[1].peak_delta);
    tgc_memory_tracer_free(inner);
    tgc_memory_tracer_free(outer);
    CU_ASSERT_EQUAL(tgc_memory_tracer_report(NULL, d, 8), 2); /* no trace: deltas from zero */
    printf("cpu0 peak now %lld bytes\n", (long long)tgc_test_device_memory("cpu0").peak_bytes_in_use);
    tgc_tensor_release(small);
    tgc_tensor_release(big);
    close_fixture(&f);
}

TGC_TEST_MAIN("eager memory", {"the leak grows by exactly the loop", test_leak_grows_by_exactly_the_loop},
              {"a scope keeps it flat", test_scope_keeps_it_flat}, {"memory trace", test_memory_trace})
