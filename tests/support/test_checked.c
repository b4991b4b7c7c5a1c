/* support/checked.h: every helper gives the exact result when it fits and
 * false when it does not, at the edges of int64, size_t and TGC_MAX_BYTES.
 * Run under UBSan by `make test`: no helper may overflow itself. */
#include "tests/harness.h"

#include "support/checked.h"

#include <CUnit/CUnit.h>

#define P2(k) ((int64_t)1 << (k))

static void test_add_sub_mul_i64(void) {
    int64_t r;
    CU_ASSERT(tgc_checked_add_i64(INT64_MAX - 1, 1, &r) && r == INT64_MAX);
    CU_ASSERT(!tgc_checked_add_i64(INT64_MAX, 1, &r));
    CU_ASSERT(!tgc_checked_add_i64(INT64_MIN, -1, &r));
    CU_ASSERT(tgc_checked_add_i64(INT64_MIN, INT64_MAX, &r) && r == -1);
    CU_ASSERT(tgc_checked_sub_i64(0, INT64_MAX, &r) && r == -INT64_MAX);
    CU_ASSERT(!tgc_checked_sub_i64(0, INT64_MIN, &r));
    CU_ASSERT(!tgc_checked_sub_i64(INT64_MAX, -1, &r));
    CU_ASSERT(tgc_checked_mul_i64(P2(31), P2(31), &r) && r == P2(62));
    CU_ASSERT(!tgc_checked_mul_i64(P2(31), P2(32), &r));
    CU_ASSERT(!tgc_checked_mul_i64(3037000500, 3037000500, &r)); /* just past sqrt(2^63) */
    CU_ASSERT(tgc_checked_mul_i64(3037000499, 3037000499, &r) && r == 9223372030926249001);
    CU_ASSERT(!tgc_checked_mul_i64(-1, INT64_MIN, &r));
    CU_ASSERT(tgc_checked_mul_i64(-1, INT64_MAX, &r) && r == -INT64_MAX);
    CU_ASSERT(tgc_checked_mul_i64(0, INT64_MIN, &r) && r == 0);
    CU_ASSERT(!tgc_checked_mul_i64(INT64_MAX, 2, &r));
}

static void test_add_mul_size(void) {
    size_t r;
    CU_ASSERT(tgc_checked_add_size(SIZE_MAX - 1, 1, &r) && r == SIZE_MAX);
    CU_ASSERT(!tgc_checked_add_size(SIZE_MAX, 1, &r));
    CU_ASSERT(tgc_checked_mul_size(SIZE_MAX / 2, 2, &r) && r == SIZE_MAX - 1);
    CU_ASSERT(!tgc_checked_mul_size(SIZE_MAX / 2 + 1, 2, &r));
    CU_ASSERT(tgc_checked_mul_size(0, SIZE_MAX, &r) && r == 0);
}

static void test_numel(void) {
    int64_t n;
    CU_ASSERT(tgc_checked_numel(0, NULL, &n) && n == 1); /* a scalar */
    const int64_t a[] = {1, 9, 4, 4};
    CU_ASSERT(tgc_checked_numel(4, a, &n) && n == 144);
    /* Issue 21's Reshape target: each dim fits, the product does not. */
    const int64_t b[] = {1, 171798691841, 3, 3, 7561793, 4};
    CU_ASSERT(!tgc_checked_numel(6, b, &n));
    const int64_t c[] = {P2(31), P2(31), 2};
    CU_ASSERT(!tgc_checked_numel(3, c, &n));
    const int64_t d[] = {P2(31), P2(31), 1};
    CU_ASSERT(tgc_checked_numel(3, d, &n) && n == P2(62));
    const int64_t e[] = {INT64_MAX};
    CU_ASSERT(tgc_checked_numel(1, e, &n) && n == INT64_MAX);
    const int64_t neg[] = {4, -1};
    CU_ASSERT(!tgc_checked_numel(2, neg, &n));
    CU_ASSERT(!tgc_checked_numel(-1, NULL, &n));
    /* Empty, but the other dims' product (every stride) would not fit:
     * refused whatever the order of the dims. */
    const int64_t z1[] = {0, P2(62), 4}, z2[] = {P2(62), 4, 0};
    CU_ASSERT(!tgc_checked_numel(3, z1, &n));
    CU_ASSERT(!tgc_checked_numel(3, z2, &n));
    const int64_t z3[] = {0, P2(62)};
    CU_ASSERT(tgc_checked_numel(2, z3, &n) && n == 0);
}

static void test_nbytes(void) {
    size_t b;
    CU_ASSERT(tgc_checked_nbytes(P2(61) - 1, 4, &b) && b == (size_t)(INT64_MAX - 3));
    CU_ASSERT(!tgc_checked_nbytes(P2(61), 4, &b)); /* 2^63 bytes */
    CU_ASSERT(!tgc_checked_nbytes(-1, 1, &b));
    CU_ASSERT(tgc_checked_nbytes(INT64_MAX, 1, &b) && b == (size_t)INT64_MAX);
    CU_ASSERT(tgc_checked_nbytes(0, 8, &b) && b == 0);
    const int64_t dims[] = {P2(40), P2(21)};
    CU_ASSERT(!tgc_checked_dims_nbytes(2, dims, 4, &b));
    CU_ASSERT(tgc_checked_dims_nbytes(2, dims, 1, &b) && b == (size_t)P2(61));
    /* As NumPy: a zero dim does not excuse the others' bytes overflowing. */
    const int64_t empty[] = {0, P2(62)};
    CU_ASSERT(!tgc_checked_dims_nbytes(2, empty, 4, &b));
    CU_ASSERT(tgc_checked_dims_nbytes(2, empty, 1, &b) && b == 0);
    CU_ASSERT(tgc_checked_dims_nbytes(0, NULL, 8, &b) && b == 8);
}

static void test_align_and_size_of(void) {
    int64_t r;
    CU_ASSERT(tgc_checked_align_i64(0, 64, &r) && r == 0);
    CU_ASSERT(tgc_checked_align_i64(65, 64, &r) && r == 128);
    CU_ASSERT(tgc_checked_align_i64(INT64_MAX - 63, 64, &r) && r == INT64_MAX - 63);
    CU_ASSERT(!tgc_checked_align_i64(INT64_MAX - 62, 64, &r));
    CU_ASSERT(!tgc_checked_align_i64(-1, 64, &r));
    CU_ASSERT(!tgc_checked_align_i64(5, 48, &r)); /* not a power of two */
    size_t s;
    CU_ASSERT(tgc_checked_size_of_i64(TGC_MAX_BYTES, &s) && s == (size_t)TGC_MAX_BYTES);
    CU_ASSERT(!tgc_checked_size_of_i64(-1, &s));
}

TGC_TEST_MAIN("checked", {"add, sub, mul over int64", test_add_sub_mul_i64}, {"add, mul over size_t", test_add_mul_size},
              {"element counts", test_numel}, {"byte sizes", test_nbytes},
              {"alignment and size_t conversion", test_align_and_size_of})
