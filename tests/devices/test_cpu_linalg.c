/* The cpu kernels of Einsum and Det (devices/cpu/kernels_linalg.c) against
 * numpy.einsum and numpy.linalg.det (tests/data/kernels/make_linalg_refs.py):
 * equations that lower to a batched GEMM (explicit, implicit, permuted
 * labels, outer and inner products, ellipsis) and ones that take the
 * general loop (transpose, full sum, diagonal, trace, a label summed in one
 * input, three inputs, broadcast ellipsis dims), float16; determinants of
 * a batch, a singular matrix, a permutation, 1 x 1 matrices. And the
 * errors: a bad equation, mismatched label sizes, non-square matrices. */
#include "tests/devices/kernel_fixture_ew.h"

#define LA_DIR "tests/data/kernels/linalg/"
#define EQ(text) ((tgc_attr){.name = (char *)"equation", .type = TGC_ATTR_STRING, .s = (char *)(text)})

static void einsum_case(const char *name, const char *eq, int n_in, double tol) {
    const tgc_attr a[] = {EQ(eq)};
    ew_case(LA_DIR, "Einsum", name, n_in, a, 1, tol);
}

static void test_einsum_gemm(void) {
    einsum_case("matmul", "ij,jk->ik", 2, 1e-5);
    einsum_case("batch_matmul", "bij,bjk->bik", 2, 1e-5);
    einsum_case("matmul_implicit", "ij,jk", 2, 1e-5);
    einsum_case("permuted", "kB,Bmk->mB", 2, 1e-5);
    einsum_case("outer", "i,j->ij", 2, 1e-5);
    einsum_case("inner", "i,i", 2, 1e-5);
    einsum_case("ellipsis_matmul", "...ij,...jk->...ik", 2, 1e-5);
    einsum_case("f16_matmul", "ij, jk -> ik", 2, 2e-3); /* spaces are ignored */
}

static void test_einsum_loop(void) {
    einsum_case("transpose", "ijk->kji", 1, 0);
    einsum_case("sum_all", "ij->", 1, 1e-5);
    einsum_case("diagonal", "ii->i", 1, 0);
    einsum_case("trace", "ii", 1, 1e-5);
    einsum_case("batch_diagonal", "...ii->...i", 1, 0);
    einsum_case("one_side_sum", "ij,jk->k", 2, 1e-5);
    einsum_case("three", "ij,jk,kl->il", 3, 1e-5);
    einsum_case("broadcast_ellipsis", "...ij,...jk->...ik", 2, 1e-5);
    einsum_case("implicit_sorted", "ba,cb", 2, 1e-5);
}

static void test_einsum_ints(void) {
    einsum_case("i32_matmul", "ij,jk->ik", 2, 0);
    einsum_case("i64_wrap", "i,i", 2, 0);
    einsum_case("u8_trace", "ii", 1, 0);
}

static void einsum_fails(const char *eq, int n_in, const int64_t *const *dims, const int *ranks, const char *frag) {
    ew_fx f;
    ew_begin(&f, "Einsum", LA_DIR);
    ew_attr(&f, EQ(eq));
    for (int i = 0; i < n_in; i++) ew_in(&f, TGC_FLOAT32, ranks[i], dims[i], NULL);
    ew_out(&f, TGC_FLOAT32, 0, NULL);
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, frag));
    ew_end(&f);
}

static void test_einsum_errors(void) {
    const int64_t d23[] = {2, 3}, d43[] = {4, 3};
    const int64_t *two[] = {d23, d43};
    einsum_fails("ij,jk->ik", 2, two, (int[]){2, 2}, "has 4 elements where its label has 3");
    einsum_fails("ij->ik", 1, two, (int[]){2}, "in no input");
    einsum_fails("ijk->", 1, two, (int[]){2}, "does not fit input 0");
    einsum_fails("i$->", 1, two, (int[]){2}, "not a letter");
    einsum_fails("ij", 2, two, (int[]){2, 2}, "1 terms for 2 inputs");
    einsum_fails("..i.->", 1, two, (int[]){2}, "'...'");
}

static void test_einsum_empty(void) {
    /* A sum over an empty label is 0. */
    ew_fx f;
    ew_begin(&f, "Einsum", LA_DIR);
    ew_attr(&f, EQ("ij,jk->ik"));
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 0}, NULL);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    ew_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(y[i], 0.0f);
    ew_end(&f);
}

static void test_det(void) {
    ew_case(LA_DIR, "Det", "det_batch", 1, NULL, 0, 1e-5);
    ew_case(LA_DIR, "Det", "det_singular", 1, NULL, 0, 1e-6);
    ew_case(LA_DIR, "Det", "det_permutation", 1, NULL, 0, 0);
    ew_case(LA_DIR, "Det", "det_1x1", 1, NULL, 0, 0);
    ew_case(LA_DIR, "Det", "det_f16", 1, NULL, 0, 2e-3);
}

static void test_det_errors(void) {
    ew_fx f;
    ew_begin(&f, "Det", LA_DIR);
    ew_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, NULL);
    ew_out(&f, TGC_FLOAT32, 0, NULL);
    CU_ASSERT_EQUAL(ew_run(&f), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.err, "square"));
    ew_end(&f);
    /* 0 x 0 matrices: 1, as numpy.linalg.det. */
    ew_begin(&f, "Det", LA_DIR);
    ew_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 0, 0}, NULL);
    ew_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    ew_run_ok(&f);
    const float *y = tgc_buffer_host_ptr(f.out[0].buf);
    CU_ASSERT(y[0] == 1.0f && y[1] == 1.0f);
    ew_end(&f);
}

TGC_TEST_MAIN("cpu_linalg",
              {"einsum_gemm", test_einsum_gemm},
              {"einsum_loop", test_einsum_loop},
              {"einsum_ints", test_einsum_ints},
              {"einsum_errors", test_einsum_errors},
              {"einsum_empty", test_einsum_empty},
              {"det", test_det},
              {"det_errors", test_det_errors})
