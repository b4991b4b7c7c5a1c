/* String buffers own their strings (devices/device.h): a release frees
 * every slot's string, a copy duplicates each one, a half-written buffer
 * frees safely, strings never go to device memory. The harness fails the
 * suite when a tgc_malloc block outlives it; the ASan build's leak checker
 * and use-after-free detection check the same from the outside. */
#include "tests/harness.h"

#include "devices/device.h"
#include "support/alloc.h"
#include "support/string_slots.h"

#include <CUnit/CUnit.h>
#include <string.h>

static void test_release_frees_strings(void) {
    tgc_device *cpu = tgc_cpu_device_create(0);
    CU_ASSERT_FATAL(cpu != NULL);
    tgc_buffer *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc_strings(cpu, 4, &b), TGC_OK);
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get(); /* the header and the arena's region are counted */
    CU_ASSERT(b->n_strings == 4 && b->nbytes == 4 * sizeof(char *));
    char **slots = tgc_buffer_host_ptr(b);
    for (int i = 0; i < 4; i++) CU_ASSERT_PTR_NULL(slots[i]); /* empty strings until written */
    CU_ASSERT_EQUAL(tgc_string_slot_set(&slots[0], "alpha", 5), TGC_OK);
    CU_ASSERT_EQUAL(tgc_string_slot_set(&slots[2], "gamma ray", 9), TGC_OK);
    CU_ASSERT_EQUAL(tgc_string_slot_set(&slots[3], "", 0), TGC_OK); /* "" stays NULL */
    CU_ASSERT_PTR_NULL(slots[3]);
    CU_ASSERT(tgc_host_alloc_stats_get().live_blocks == before.live_blocks + 2); /* 2 strings */
    tgc_buffer_retain(b);
    tgc_buffer_release(b); /* not the last reference: the strings stay */
    CU_ASSERT_STRING_EQUAL(slots[2], "gamma ray");
    tgc_buffer_release(b);
    /* the strings and the header gone; without an arena (TGC_ARENA=0) the slot array too */
    CU_ASSERT(tgc_host_alloc_stats_get().live_blocks == before.live_blocks - (cpu->arena != NULL ? 1 : 2));
    CU_ASSERT(tgc_device_stats(cpu).bytes_in_use == 0);
    tgc_device_destroy(cpu);
}

static void test_copy_is_deep(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0), *cpu1 = tgc_cpu_device_create(1);
    CU_ASSERT_FATAL(cpu0 != NULL && cpu1 != NULL);
    tgc_buffer *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc_typed(cpu0, TGC_STRING, 3 * sizeof(char *), &a), TGC_OK);
    CU_ASSERT(a->n_strings == 3);
    char **sa = tgc_buffer_host_ptr(a);
    tgc_string_slot_set(&sa[0], "x", 1);
    tgc_string_slot_set(&sa[1], "yy", 2);
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_copy(a, a->nbytes, cpu1, &b), TGC_OK);
    char **sb = tgc_buffer_host_ptr(b);
    CU_ASSERT(b->n_strings == 3 && sb[0] != sa[0] && sb[1] != sa[1]);
    CU_ASSERT_STRING_EQUAL(sb[0], "x");
    CU_ASSERT_STRING_EQUAL(sb[1], "yy");
    CU_ASSERT_PTR_NULL(sb[2]);
    tgc_buffer_release(a); /* b's strings are its own */
    CU_ASSERT_STRING_EQUAL(sb[1], "yy");
    tgc_buffer_release(b);
    tgc_device_destroy(cpu0);
    tgc_device_destroy(cpu1);
}

static void test_half_written_and_failures(void) {
    tgc_device *cpu = tgc_cpu_device_create(0);
    CU_ASSERT_FATAL(cpu != NULL);
    /* a writer that stopped half-way: the untouched slots are NULL */
    tgc_buffer *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc_strings(cpu, 1000, &b), TGC_OK);
    char **slots = tgc_buffer_host_ptr(b);
    for (int i = 0; i < 10; i++) tgc_string_slot_set(&slots[i], "partial", 7);
    tgc_buffer_release(b);
    /* an injected failure of the allocation leaves nothing behind */
    tgc_device_fail_nth_alloc(1);
    b = NULL;
    CU_ASSERT_EQUAL(tgc_buffer_alloc_strings(cpu, 4, &b), TGC_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(b);
    /* a failed string copy inside tgc_buffer_copy: the copy is released, the source intact */
    tgc_buffer *src = NULL, *dst = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc_strings(cpu, 2, &src), TGC_OK);
    char **ss = tgc_buffer_host_ptr(src);
    tgc_string_slot_set(&ss[0], "one", 3);
    tgc_string_slot_set(&ss[1], "two", 3);
    int64_t live = tgc_host_alloc_stats_get().live_blocks;
    int failures = 0;
    for (int64_t n = 1; n < 20; n++) { /* every host allocation of the copy fails once, in turn */
        tgc_host_alloc_fail_nth(n);
        tgc_status st = tgc_buffer_copy(src, src->nbytes, cpu, &dst);
        tgc_host_alloc_fail_nth(0);
        if (st == TGC_OK) break;
        failures++;
        CU_ASSERT_EQUAL(st, TGC_ERR_NOMEM);
        CU_ASSERT_PTR_NULL(dst);
        CU_ASSERT_STRING_EQUAL(ss[1], "two");
        CU_ASSERT(tgc_host_alloc_stats_get().live_blocks == live);
    }
    CU_ASSERT(failures >= 3); /* at least the buffer header, "one" and "two" */
    CU_ASSERT_FATAL(dst != NULL);
    CU_ASSERT_STRING_EQUAL(((char **)tgc_buffer_host_ptr(dst))[1], "two");
    tgc_buffer_release(dst);
    tgc_buffer_release(src);
    CU_ASSERT(tgc_device_stats(cpu).live_buffers == 0);
    tgc_device_destroy(cpu);
}

TGC_TEST_MAIN("string_buffers", {"release frees the strings", test_release_frees_strings},
              {"copies are deep", test_copy_is_deep}, {"half-written buffers and failures", test_half_written_and_failures})
