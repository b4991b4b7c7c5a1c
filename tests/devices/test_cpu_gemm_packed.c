/* GEMMs on packed weights (devices/cpu/gemm_packed.c, oneDNN's matmul):
 *   - C = alpha * A op(B) + beta * C against a direct loop in double, over
 *     shapes of one to several column pieces, odd sizes, B transposed,
 *     row strides above the sizes, alpha and beta, a fused Relu; bitwise
 *     the same alone and split over a pool of two threads;
 *   - products on operands as they lie (tgc_dnnl_sgemm through
 *     tgc_cpu_sgemm) from two threads at once, against the direct loop;
 *     into a block of a wider C, its other columns untouched; B's rows a
 *     multiple of 4 KiB apart (copied first);
 *   - argument memory objects (tgc_dnnl_arg): made once a thread for a
 *     role and a layout, pointed at each call's data after; made again
 *     where the layout at an address changed; a product run a second time
 *     on other data makes none and is right;
 *   - blocks of rows where the columns are too few for the work: the
 *     work items a run hands out (by hand from the rules), the plan's
 *     bound, the values (above) and tgc_packed_gemm_run_blocks handing
 *     every block over, together the bits of a plain run;
 *   - TGC_DNNL=0 turns it off; a build without oneDNN makes nothing;
 *   - through a session: MatMul and Gemm with a weight, run twice (the
 *     second from the node's cache), and MatMul fed a different batch
 *     size than its first run (the packed B does not fit: OpenBLAS),
 *     each against the direct loop, and the trace naming the way each
 *     node ran. */
#include "tests/harness.h"

#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/kernels_nn.h"
#include "graph/elementwise.h"
#include "support/settings.h"
#include "support/thread_pool.h"
#include "tgc.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TGC_HAVE_DNNL
#include "devices/cpu/dnnl_runtime.h"
#endif

static float lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

static float *random_floats(size_t n, uint32_t seed) {
    float *v = malloc(n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (size_t i = 0; i < n; i++) v[i] = lcg(&seed);
    return v;
}

/* B[kk, j] of shape s in b. */
static float b_at(const tgc_gemm_shape *s, const float *b, int64_t kk, int64_t j) {
    return s->tb ? b[j * s->ldb + kk] : b[kk * s->ldb + j];
}

/* Checks c against alpha * A op(B) + beta * c0 (then Relu when relu), in
 * double: each element within 1e-5 of the sum of its terms' magnitudes. */
static int count_bad(const tgc_gemm_shape *s, const float *a, const float *b, const float *c0, const float *c,
                     bool relu) {
    int bad = 0;
    for (int64_t i = 0; i < s->m; i++)
        for (int64_t j = 0; j < s->n; j++) {
            double sum = 0, mag = 0;
            for (int64_t kk = 0; kk < s->k; kk++) {
                double t = (double)a[i * s->lda + kk] * b_at(s, b, kk, j);
                sum += t;
                mag += fabs(t);
            }
            double want = s->alpha * sum + s->beta * c0[i * s->ldc + j];
            mag = fabs(s->alpha) * mag + fabs(s->beta * c0[i * s->ldc + j]);
            if (relu && want < 0) want = 0;
            if (fabs(c[i * s->ldc + j] - want) > 1e-5 * (mag + 1e-30)) {
                if (bad++ < 3)
                    fprintf(stderr, "\n  m %lld n %lld k %lld: C[%lld, %lld] = %.8g, want %.8g", (long long)s->m,
                            (long long)s->n, (long long)s->k, (long long)i, (long long)j, (double)c[i * s->ldc + j],
                            want);
            }
        }
    return bad;
}

static void check_shape(tgc_gemm_shape s, tgc_thread_pool *pool, bool relu) {
    size_t na = (size_t)(s.m * s.lda), nb = (size_t)(s.tb ? s.n * s.ldb : s.k * s.ldb), nc = (size_t)(s.m * s.ldc);
    float *a = random_floats(na, 1), *b = random_floats(nb, 2), *c0 = random_floats(nc, 3);
    float *c1 = malloc(nc * sizeof *c1), *c2 = malloc(nc * sizeof *c2);
    size_t bytes = 0;
    tgc_packed_gemm *g = tgc_packed_gemm_create(&s, b, &bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT(bytes >= (size_t)(s.k * s.n) * sizeof(float)); /* the packed blocks hold all of B */
    CU_ASSERT(tgc_packed_gemm_matches(g, &s));
    tgc_gemm_shape other = s;
    other.m++;
    CU_ASSERT(!tgc_packed_gemm_matches(g, &other));
    tgc_fused_act act = {.row = TGC_EW_Relu};
    memcpy(c1, c0, nc * sizeof *c1);
    memcpy(c2, c0, nc * sizeof *c2);
    CU_ASSERT(tgc_packed_gemm_run(g, NULL, a, c1, relu ? &act : NULL));
    CU_ASSERT(tgc_packed_gemm_run(g, pool, a, c2, relu ? &act : NULL));
    CU_ASSERT_EQUAL(count_bad(&s, a, b, c0, c1, relu), 0);
    CU_ASSERT(memcmp(c1, c2, nc * sizeof *c1) == 0); /* any thread count, the same bits */
    tgc_packed_gemm_free(g);
    free(a), free(b), free(c0), free(c1), free(c2);
}

static void test_against_direct_loop(void) {
    if (!tgc_packed_gemm_available()) { /* a build without oneDNN: nothing is made */
        size_t bytes = 1;
        tgc_gemm_shape s = {.m = 4, .n = 4, .k = 4, .lda = 4, .ldb = 4, .ldc = 4, .alpha = 1};
        CU_ASSERT_PTR_NULL(tgc_packed_gemm_create(&s, (float[16]){0}, &bytes));
        CU_ASSERT_EQUAL(bytes, 0);
        return;
    }
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_FATAL(tgc_thread_pool_create(2, &pool) == TGC_OK);
    static const tgc_gemm_shape shapes[] = {
        {.m = 1, .n = 512, .k = 784, .lda = 784, .ldb = 512, .ldc = 512, .alpha = 1},         /* batch 1 */
        {.m = 3, .n = 7, .k = 5, .lda = 5, .ldb = 7, .ldc = 7, .alpha = 1},                   /* tiny, odd */
        {.m = 64, .n = 1000, .k = 300, .lda = 300, .ldb = 1000, .ldc = 1000, .alpha = 1},     /* 2+ pieces */
        {.m = 128, .n = 2048, .k = 512, .lda = 512, .ldb = 2048, .ldc = 2048, .alpha = 1},    /* 16 pieces */
        {.tb = true, .m = 197, .n = 768, .k = 768, .lda = 768, .ldb = 768, .ldc = 768, .alpha = 1},
        {.tb = true, .m = 50, .n = 130, .k = 33, .lda = 40, .ldb = 35, .ldc = 150, .alpha = 0.5f, .beta = 2},
        {.m = 17, .n = 300, .k = 129, .lda = 129, .ldb = 301, .ldc = 300, .alpha = -1.5f, .beta = 1},
        /* few columns for the work: blocks of rows (16, the last of 115 rows; 2 of 501 and 500, staged) */
        {.m = 2050, .n = 96, .k = 384, .lda = 384, .ldb = 96, .ldc = 96, .alpha = 1},
        {.tb = true, .m = 1001, .n = 40, .k = 300, .lda = 310, .ldb = 300, .ldc = 50, .alpha = 0.5f, .beta = 2},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) check_shape(shapes[i], pool, false);
    check_shape(shapes[2], pool, true);
    check_shape(shapes[5], pool, true);
    check_shape(shapes[8], pool, true);
    tgc_thread_pool_free(pool);
}

/* tgc_packed_gemm_block_fn: the block into C (ldc n), counting blocks. */
typedef struct blocks_into {
    float *c;
    int64_t ldc;
    atomic_int blocks;
} blocks_into;

static void block_into_c(void *arg, int64_t r0, int64_t r1, int64_t n0, int64_t n1, const float *block) {
    blocks_into *b = arg;
    for (int64_t r = r0; r < r1; r++)
        memcpy(b->c + r * b->ldc + n0, block + (r - r0) * (n1 - n0), (size_t)(n1 - n0) * sizeof(float));
    atomic_fetch_add(&b->blocks, 1);
}

/* tgc_packed_gemm_run_blocks hands over every block of rows of every
 * piece, over a pool: together the bits tgc_packed_gemm_run writes. */
static void test_run_blocks_by_rows(void) {
    if (!tgc_packed_gemm_available()) return;
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_FATAL(tgc_thread_pool_create(2, &pool) == TGC_OK);
    static const tgc_gemm_shape shapes[] = {
        {.m = 2050, .n = 96, .k = 384, .lda = 384, .ldb = 96, .ldc = 96, .alpha = 1},     /* 16 blocks of rows */
        {.m = 3136, .n = 192, .k = 96, .lda = 96, .ldb = 192, .ldc = 192, .alpha = 1},    /* 2 pieces x 4 */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const tgc_gemm_shape *s = &shapes[i];
        size_t nc = (size_t)(s->m * s->n);
        float *a = random_floats((size_t)(s->m * s->lda), 6), *b = random_floats((size_t)(s->k * s->ldb), 7);
        float *c1 = calloc(nc, sizeof *c1), *c2 = calloc(nc, sizeof *c2);
        size_t bytes;
        tgc_packed_gemm *g = tgc_packed_gemm_create(s, b, &bytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        blocks_into into = {.c = c2, .ldc = s->n};
        atomic_init(&into.blocks, 0);
        CU_ASSERT(tgc_packed_gemm_run(g, NULL, a, c1, NULL));
        CU_ASSERT(tgc_packed_gemm_run_blocks(g, pool, a, block_into_c, &into));
        CU_ASSERT_EQUAL(atomic_load(&into.blocks), tgc_packed_gemm_work_items(g));
        CU_ASSERT(memcmp(c1, c2, nc * sizeof *c1) == 0);
        tgc_packed_gemm_free(g);
        free(a), free(b), free(c1), free(c2);
    }
    tgc_thread_pool_free(pool);
}

/* The work items a run hands out, by hand from gemm_packed.c's rules
 * (pieces of columns while each keeps 4M multiply-adds and 64 columns,
 * then blocks of rows while each keeps 4M and 64 rows, 16 items at most). */
static void test_blocks_of_rows(void) {
    if (!tgc_packed_gemm_available()) return;
    static const struct {
        tgc_gemm_shape s;
        int items;
    } cases[] = {
        {{.m = 64, .n = 1000, .k = 300, .lda = 300, .ldb = 1000, .ldc = 1000, .alpha = 1}, 4},  /* 19.2M: columns */
        {{.m = 49, .n = 3072, .k = 768, .lda = 768, .ldb = 3072, .ldc = 3072, .alpha = 1}, 16}, /* columns only */
        {{.m = 2050, .n = 96, .k = 384, .lda = 384, .ldb = 96, .ldc = 96, .alpha = 1}, 16},     /* rows only */
        {{.m = 3136, .n = 192, .k = 96, .lda = 96, .ldb = 192, .ldc = 192, .alpha = 1}, 8},     /* 2 x 4 */
        {{.m = 1001, .n = 40, .k = 300, .lda = 300, .ldb = 40, .ldc = 40, .alpha = 1}, 2},      /* 12M */
        {{.m = 100, .n = 40, .k = 3000, .lda = 3000, .ldb = 40, .ldc = 40, .alpha = 1}, 1},     /* 100 rows */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tgc_gemm_shape *s = &cases[i].s;
        float *b = random_floats((size_t)(s->k * s->ldb), 5);
        size_t bytes = 0;
        tgc_packed_gemm *g = tgc_packed_gemm_create(s, b, &bytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_EQUAL(tgc_packed_gemm_work_items(g), cases[i].items);
        if (tgc_packed_gemm_work_items(g) != cases[i].items)
            fprintf(stderr, "\n  m %lld n %lld k %lld: %d work items, want %d", (long long)s->m, (long long)s->n,
                    (long long)s->k, tgc_packed_gemm_work_items(g), cases[i].items);
        CU_ASSERT_EQUAL((int64_t)bytes, tgc_packed_gemm_bound(s)); /* the plan's bound, from the sizes alone */
        tgc_packed_gemm_free(g);
        free(b);
    }
}

/* tgc_cpu_sgemm over a pool of two: the pieces run on oneDNN's plain
 * path (tgc_dnnl_sgemm) on both threads at once, each with its own
 * scratchpad (oneDNN's shared one let them write over each other), so the
 * result is the direct loop's, and the same as on one thread. Pointwise
 * convolution shapes (W [M, K] x X [K, HW]), each run five times. */
static void test_plain_from_two_threads(void) {
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_FATAL(tgc_thread_pool_create(2, &pool) == TGC_OK);
    static const int64_t shapes[][3] = {{256, 3136, 64}, {64, 3136, 256}, {512, 196, 1024}, {96, 785, 33}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        tgc_gemm_shape s = {.m = shapes[i][0], .n = shapes[i][1], .k = shapes[i][2], .alpha = 1};
        s.lda = s.k, s.ldb = s.n, s.ldc = s.n;
        float *a = random_floats((size_t)(s.m * s.k), 8), *b = random_floats((size_t)(s.k * s.n), 9);
        float *zero = calloc((size_t)(s.m * s.n), sizeof *zero), *c = malloc((size_t)(s.m * s.n) * sizeof *c);
        float *one = malloc((size_t)(s.m * s.n) * sizeof *one);
        CU_ASSERT_FATAL(tgc_cpu_sgemm(NULL, false, false, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, one, s.n));
        CU_ASSERT_EQUAL(count_bad(&s, a, b, zero, one, false), 0);
        for (int r = 0; r < 5; r++) {
            CU_ASSERT_FATAL(tgc_cpu_sgemm(pool, false, false, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c, s.n));
            CU_ASSERT(memcmp(c, one, (size_t)(s.m * s.n) * sizeof *c) == 0);
        }
        free(a), free(b), free(zero), free(c), free(one);
    }
    tgc_thread_pool_free(pool);
}

/* tgc_dnnl_arg keeps one memory object a role and layout on this thread. */
static void test_argument_memory(void) {
#ifdef TGC_HAVE_DNNL
    if (!tgc_packed_gemm_available()) return;
    enum { LAYOUTS = 32 };
    dnnl_memory_desc_t *md = calloc(LAYOUTS, sizeof *md);
    CU_ASSERT_FATAL(md != NULL);
    float x[64], y[64];
    for (int i = 0; i < LAYOUTS; i++) {
        dnnl_dims_t dims = {2 + i, 3};
        CU_ASSERT_FATAL(dnnl_memory_desc_init_by_tag(&md[i], 2, dims, dnnl_f32, dnnl_ab) == dnnl_success);
    }
    long made = tgc_dnnl_args_made();
    dnnl_memory_t first = tgc_dnnl_arg(TGC_DNNL_SRC, &md[0], x);
    CU_ASSERT(first != NULL && tgc_dnnl_args_made() == made + 1);
    dnnl_memory_t again = tgc_dnnl_arg(TGC_DNNL_SRC, &md[0], y);
    void *handle = NULL;
    CU_ASSERT(again == first && tgc_dnnl_args_made() == made + 1);
    CU_ASSERT(dnnl_memory_get_data_handle(again, &handle) == dnnl_success && handle == y);
    dnnl_memory_t dst = tgc_dnnl_arg(TGC_DNNL_DST, &md[0], x); /* another role: its own, the src one kept */
    CU_ASSERT(dst != NULL && dst != first && tgc_dnnl_args_made() == made + 2);
    CU_ASSERT(tgc_dnnl_arg(TGC_DNNL_SRC, &md[0], x) == first && tgc_dnnl_args_made() == made + 2);
    /* the same address with another layout (its owner freed, another made there): made again */
    dnnl_dims_t wider = {2, 5};
    CU_ASSERT_FATAL(dnnl_memory_desc_init_by_tag(&md[0], 2, wider, dnnl_f32, dnnl_ab) == dnnl_success);
    dnnl_memory_t remade = tgc_dnnl_arg(TGC_DNNL_SRC, &md[0], x);
    const dnnl_memory_desc_t *have = NULL;
    CU_ASSERT(remade != NULL && tgc_dnnl_args_made() == made + 3);
    CU_ASSERT(dnnl_memory_get_memory_desc(remade, &have) == dnnl_success && have->dims[1] == 5);
    /* a model's worth of layouts: each made once, all kept */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 1; i < LAYOUTS; i++) CU_ASSERT(tgc_dnnl_arg(TGC_DNNL_SRC, &md[i], x) != NULL);
    CU_ASSERT_EQUAL(tgc_dnnl_args_made(), made + 3 + LAYOUTS - 1);
    free(md);

    /* a product on its operands as they lie, run again on other data: nothing made, both right */
    tgc_gemm_shape s = {.m = 48, .n = 160, .k = 72, .alpha = 1, .lda = 72, .ldb = 160, .ldc = 160};
    float *a1 = random_floats(48 * 72, 21), *a2 = random_floats(48 * 72, 22), *b = random_floats(72 * 160, 23);
    float *zero = calloc(48 * 160, sizeof *zero), *c = malloc(48 * 160 * sizeof *c);
    CU_ASSERT_FATAL(a1 && a2 && b && zero && c);
    CU_ASSERT_FATAL(tgc_cpu_sgemm(NULL, false, false, s.m, s.n, s.k, 1.0f, a1, s.k, b, s.n, 0.0f, c, s.n));
    CU_ASSERT_EQUAL(count_bad(&s, a1, b, zero, c, false), 0);
    made = tgc_dnnl_args_made();
    CU_ASSERT_FATAL(tgc_cpu_sgemm(NULL, false, false, s.m, s.n, s.k, 1.0f, a2, s.k, b, s.n, 0.0f, c, s.n));
    CU_ASSERT_EQUAL(count_bad(&s, a2, b, zero, c, false), 0);
    CU_ASSERT_EQUAL(tgc_dnnl_args_made(), made);
    free(a1), free(a2), free(b), free(zero), free(c);
#endif
}

/* tgc_dnnl_sgemm on a dense B and a block of a wider C (a Conv's column
 * tile: C's rows ldc apart, ldc > n), which oneDNN computes as a dense
 * block then copied into C: C's other columns untouched, beta read from
 * C's block, a second call (the geometry's primitive kept) the same. */
static void test_plain_block_of_wider_c(void) {
    if (!tgc_packed_gemm_available()) return;
    static const struct {
        int64_t m, n, k, ldc;
        float beta;
    } cases[] = {{128, 168, 576, 784, 0.0f}, {64, 112, 384, 196, 0.5f}, {5, 17, 9, 40, 1.0f}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tgc_gemm_shape s = {.m = cases[i].m, .n = cases[i].n, .k = cases[i].k, .lda = cases[i].k, .ldb = cases[i].n,
                            .ldc = cases[i].ldc, .alpha = 1.0f, .beta = cases[i].beta};
        size_t nc = (size_t)(s.m * s.ldc);
        float *a = random_floats((size_t)(s.m * s.k), 11), *b = random_floats((size_t)(s.k * s.n), 12);
        float *c0 = random_floats(nc, 13), *c = malloc(nc * sizeof *c);
        for (int r = 0; r < 2; r++) {
            memcpy(c, c0, nc * sizeof *c);
            int done = tgc_dnnl_sgemm(false, false, s.m, s.n, s.k, 1.0f, a, s.lda, b, s.ldb, s.beta, c, s.ldc);
            CU_ASSERT_EQUAL(done, 1);
            CU_ASSERT_EQUAL(count_bad(&s, a, b, c0, c, false), 0);
            int touched = 0;
            for (int64_t row = 0; row < s.m; row++)
                touched += memcmp(c + row * s.ldc + s.n, c0 + row * s.ldc + s.n,
                                  (size_t)(s.ldc - s.n) * sizeof *c) != 0;
            CU_ASSERT_EQUAL(touched, 0);
        }
        free(a), free(b), free(c0), free(c);
    }
}

/* tgc_dnnl_sgemm where B's rows lie a multiple of 4 KiB apart (which
 * alias in the cache read as they lie): B is copied to rows of its own
 * first, and oneDNN still takes the product (it used to decline them to
 * OpenBLAS). A dense B of 1024 columns (its copy padded), a block of a
 * wider B into a block of a wider C with beta, each twice (the second on
 * the kept primitive); B itself unchanged. Then 1024 columns through
 * tgc_cpu_sgemm's pieces: alone and over a pool of two, the same bits. */
static void test_plain_aliasing_b(void) {
    if (!tgc_packed_gemm_available()) return;
    static const struct {
        int64_t m, n, k, ldb, ldc;
        float beta;
    } cases[] = {{48, 1024, 40, 1024, 1024, 0.0f}, {33, 200, 70, 2048, 260, 0.5f}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tgc_gemm_shape s = {.m = cases[i].m, .n = cases[i].n, .k = cases[i].k, .lda = cases[i].k,
                            .ldb = cases[i].ldb, .ldc = cases[i].ldc, .alpha = 1.0f, .beta = cases[i].beta};
        size_t nb = (size_t)(s.k * s.ldb), nc = (size_t)(s.m * s.ldc);
        float *a = random_floats((size_t)(s.m * s.k), 21), *b = random_floats(nb, 22), *b0 = malloc(nb * sizeof *b0);
        float *c0 = random_floats(nc, 23), *c = malloc(nc * sizeof *c);
        memcpy(b0, b, nb * sizeof *b0);
        for (int r = 0; r < 2; r++) {
            memcpy(c, c0, nc * sizeof *c);
            CU_ASSERT_EQUAL(tgc_dnnl_sgemm(false, false, s.m, s.n, s.k, 1.0f, a, s.lda, b, s.ldb, s.beta, c, s.ldc), 1);
            CU_ASSERT_EQUAL(count_bad(&s, a, b, c0, c, false), 0);
        }
        CU_ASSERT(memcmp(b, b0, nb * sizeof *b) == 0);
        free(a), free(b), free(b0), free(c0), free(c);
    }
    tgc_thread_pool *pool = NULL;
    CU_ASSERT_FATAL(tgc_thread_pool_create(2, &pool) == TGC_OK);
    tgc_gemm_shape s = {.m = 96, .n = 1024, .k = 128, .lda = 128, .ldb = 1024, .ldc = 1024, .alpha = 1.0f};
    float *a = random_floats((size_t)(s.m * s.k), 24), *b = random_floats((size_t)(s.k * s.n), 25);
    float *zero = calloc((size_t)(s.m * s.n), sizeof *zero), *c1 = malloc((size_t)(s.m * s.n) * sizeof *c1);
    float *c2 = malloc((size_t)(s.m * s.n) * sizeof *c2);
    CU_ASSERT_FATAL(tgc_cpu_sgemm(NULL, false, false, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c1, s.n));
    CU_ASSERT_FATAL(tgc_cpu_sgemm(pool, false, false, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c2, s.n));
    CU_ASSERT_EQUAL(count_bad(&s, a, b, zero, c1, false), 0);
    CU_ASSERT(memcmp(c1, c2, (size_t)(s.m * s.n) * sizeof *c1) == 0);
    free(a), free(b), free(zero), free(c1), free(c2);
    tgc_thread_pool_free(pool);
}

/* Read when a session or context is made; here, without one, by hand. */
static void test_env_turns_it_off(void) {
    setenv("TGC_DNNL", "0", 1);
    tgc_settings_read();
    CU_ASSERT(!tgc_packed_gemm_available());
    size_t bytes = 1;
    tgc_gemm_shape s = {.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .alpha = 1};
    float *b = random_floats(64 * 64, 4);
    CU_ASSERT_PTR_NULL(tgc_packed_gemm_create(&s, b, &bytes));
    CU_ASSERT_EQUAL(bytes, 0);
    free(b);
    unsetenv("TGC_DNNL");
    tgc_settings_read();
}

/* ---- Through a session ------------------------------------------------------------ */

/* A graph of x [N, 64] -> MatMul(x, w [64, 96]) -> Gemm(mm, v [80, 96], transB, bias [80]), the weights
 * inline, as text (caller frees). */
static char *weights_graph(const float *w, const float *v, const float *bias) {
    size_t cap = 400000, len = 0;
    char *t = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    len += (size_t)snprintf(t + len, cap - len,
                            "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [N, 64]}]\noutputs: [y]\n"
                            "initializers:\n  - {name: w, dtype: float32, shape: [64, 96], values: [");
    for (int i = 0; i < 64 * 96; i++) len += (size_t)snprintf(t + len, cap - len, "%s%.9g", i ? ", " : "", w[i]);
    len += (size_t)snprintf(t + len, cap - len, "]}\n  - {name: v, dtype: float32, shape: [80, 96], values: [");
    for (int i = 0; i < 80 * 96; i++) len += (size_t)snprintf(t + len, cap - len, "%s%.9g", i ? ", " : "", v[i]);
    len += (size_t)snprintf(t + len, cap - len, "]}\n  - {name: bias, dtype: float32, shape: [80], values: [");
    for (int i = 0; i < 80; i++) len += (size_t)snprintf(t + len, cap - len, "%s%.9g", i ? ", " : "", bias[i]);
    snprintf(t + len, cap - len,
             "]}\nnodes:\n  - {name: mm, op: MatMul, inputs: [x, w]}\n"
             "  - {name: y, op: Gemm, inputs: [mm, v, bias], attrs: {transB: 1, alpha: 0.75, beta: 1.5}}\n");
    return t;
}

/* y's rows for x [rows, 64], in double. */
static void direct_model(const float *x, int64_t rows, const float *w, const float *v, const float *bias,
                         double *y) {
    for (int64_t i = 0; i < rows; i++) {
        double h[96];
        for (int j = 0; j < 96; j++) {
            h[j] = 0;
            for (int kk = 0; kk < 64; kk++) h[j] += (double)x[i * 64 + kk] * w[kk * 96 + j];
        }
        for (int j = 0; j < 80; j++) {
            double s = 0;
            for (int kk = 0; kk < 96; kk++) s += (double)(float)h[kk] * v[j * 96 + kk];
            y[i * 80 + j] = 0.75 * s + 1.5 * bias[j];
        }
    }
}

static void run_rows(tgc_session *s, int64_t rows, const float *w, const float *v, const float *bias) {
    float *x = random_floats((size_t)rows * 64, (uint32_t)rows);
    tgc_tensor *xt = NULL, *y = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){rows, 64}, x, &xt) == TGC_OK);
    const char *names[] = {"x"};
    CU_ASSERT_FATAL(tgc_session_run(s, 1, names, &xt, &y, NULL) == TGC_OK);
    double *want = malloc((size_t)rows * 80 * sizeof *want);
    direct_model(x, rows, w, v, bias, want);
    const float *got = tgc_tensor_data(y);
    int bad = 0;
    for (int64_t i = 0; i < rows * 80; i++) bad += fabs(got[i] - want[i]) > 1e-4 * (1 + fabs(want[i]));
    CU_ASSERT_EQUAL(bad, 0);
    free(want), free(x);
    tgc_tensor_release(y);
    tgc_tensor_release(xt);
}

static void test_session_weights(void) {
    float *w = random_floats(64 * 96, 5), *v = random_floats(80 * 96, 6), *bias = random_floats(80, 7);
    char *text = weights_graph(w, v, bias);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_FATAL(tgc_graph_load_string(text, strlen(text), "weights.yaml", ".", d, &g) == TGC_OK);
    tgc_session *s = NULL;
    tgc_session_options o = {.threads = "cpu0=2", .optimize = TGC_OPTIMIZE_NONE};
    CU_ASSERT_FATAL(tgc_session_create(g, "cpu", &o, d, &s) == TGC_OK);
    CU_ASSERT_FATAL(tgc_session_trace_start(s) == TGC_OK);
    run_rows(s, 32, w, v, bias); /* builds the packed weights */
    run_rows(s, 32, w, v, bias); /* from the cache */
    /* the trace says which way each node ran */
    char path[] = "/tmp/tgc_packed_trace_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(tgc_session_trace_write(s, path, d) == TGC_OK);
    FILE *f = fopen(path, "r");
    char trace[8192] = "";
    size_t got = f != NULL ? fread(trace, 1, sizeof trace - 1, f) : 0;
    trace[got] = 0;
    if (f != NULL) fclose(f);
    unlink(path);
    const char *want = tgc_packed_gemm_available() ? "\"kernel\":\"onednn packed matmul\""
                                                   : "\"kernel\":\"sgemm (onednn or openblas)\"";
    CU_ASSERT_PTR_NOT_NULL(strstr(trace, want));
    run_rows(s, 7, w, v, bias);  /* other sizes: OpenBLAS */
    run_rows(s, 32, w, v, bias);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
    free(text), free(w), free(v), free(bias);
}

TGC_TEST_MAIN("cpu_gemm_packed", {"against a direct loop, alone and over a pool", test_against_direct_loop},
              {"plain operands from two threads at once", test_plain_from_two_threads},
              {"a block of a wider C", test_plain_block_of_wider_c},
              {"B's rows 4 KiB apart", test_plain_aliasing_b},
              {"argument memory objects made once a thread", test_argument_memory},
              {"TGC_DNNL=0 turns it off", test_env_turns_it_off}, {"through a session", test_session_weights},
              {"blocks of rows where the columns are few", test_blocks_of_rows},
              {"blocks handed over by rows", test_run_blocks_by_rows})
