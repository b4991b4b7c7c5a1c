/* The counting host allocator (support/alloc.c): every block starts on a
 * TGC_ALLOC_ALIGN boundary, tgc_calloc's blocks are zero, tgc_realloc keeps
 * the bytes both blocks hold (growing and shrinking) and its alignment, an
 * injected failure leaves the block as it was, and the live counts come
 * back to where they started. */
#include "support/alloc.h"
#include "tests/harness.h"

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <string.h>

static bool aligned(const void *p) { return ((uintptr_t)p & (TGC_ALLOC_ALIGN - 1)) == 0; }

static void test_aligned_blocks(void) {
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    static const size_t sizes[] = {0, 1, 17, 63, 64, 65, 4096, 100000, (size_t)1 << 21};
    void *blocks[9];
    for (int i = 0; i < 9; i++) {
        blocks[i] = i % 2 ? tgc_calloc(1, sizes[i]) : tgc_malloc(sizes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(blocks[i]);
        CU_ASSERT(aligned(blocks[i]));
        if (i % 2) {
            const unsigned char *b = blocks[i];
            size_t nonzero = 0;
            for (size_t k = 0; k < sizes[i]; k++) nonzero += b[k] != 0;
            CU_ASSERT_EQUAL(nonzero, 0);
        }
        memset(blocks[i], 0x5a, sizes[i]); /* the whole payload is ours (ASan checks) */
    }
    tgc_host_alloc_stats during = tgc_host_alloc_stats_get();
    CU_ASSERT_EQUAL(during.live_blocks - before.live_blocks, 9);
    for (int i = 0; i < 9; i++) tgc_free(blocks[i]);
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    CU_ASSERT_EQUAL(after.live_blocks, before.live_blocks);
    CU_ASSERT_EQUAL(after.live_bytes, before.live_bytes);
}

static void test_realloc_keeps_bytes(void) {
    unsigned char *p = tgc_malloc(100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    for (int k = 0; k < 100; k++) p[k] = (unsigned char)k;
    size_t steps[] = {5000, 30, 1 << 20, 1};
    size_t kept = 100;
    for (int s = 0; s < 4; s++) {
        unsigned char *q = tgc_realloc(p, steps[s]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        CU_ASSERT(aligned(q));
        kept = kept < steps[s] ? kept : steps[s];
        size_t wrong = 0;
        for (size_t k = 0; k < kept; k++) wrong += q[k] != (unsigned char)k;
        CU_ASSERT_EQUAL(wrong, 0);
        p = q;
    }
    /* an injected failure: NULL, and the block still there and ours */
    tgc_host_alloc_fail_nth(1);
    CU_ASSERT_PTR_NULL(tgc_realloc(p, 4096));
    tgc_host_alloc_fail_nth(0);
    CU_ASSERT_EQUAL(p[0], 0);
    tgc_free(p);
}

TGC_TEST_MAIN("host allocator", {"every block aligned, calloc's zero", test_aligned_blocks},
              {"realloc keeps the bytes and the alignment", test_realloc_keeps_bytes})
