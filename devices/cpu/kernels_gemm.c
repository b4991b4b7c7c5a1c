/* MatMul and Gemm on the cpu (float32) through OpenBLAS's cblas_sgemm, and
 * tgc_cpu_sgemm, the wrapper Conv uses too.
 *
 * MatMul-13 follows numpy.matmul: a 1-D A is [1, K] and a 1-D B is [K, 1],
 * the added axis dropped from the result; the leading (batch) axes
 * broadcast, and each output matrix is one cblas_sgemm over the A and B
 * matrices its batch index selects (stride 0 along broadcast axes). When B
 * has no batch of its own and A is not broadcast, the batch folds into the
 * rows of a single GEMM ([B.., M, K] x [K, N] is [B..*M, K] x [K, N]).
 *
 * Gemm-13: Y = alpha * A' B' + beta * C, A' = transA ? A^T : A, B' likewise;
 * C (optional) broadcasts unidirectionally to [M, N] and is copied into Y
 * first, each block by the piece that then multiplies into it, so that
 * cblas_sgemm's beta does the rest.
 *
 * Where B is a session constant (a weight) and A is not transposed, both
 * run on B packed once for oneDNN's matmul (devices/cpu/gemm_packed.h),
 * kept in the node's kernel cache; OpenBLAS does the rest.
 *
 * _MatMulHalfWeight, MatMul by a float16 or bfloat16 weight, is here too
 * (its section says how), on the same packing and splitting. */
#include "devices/cpu/ew.h"
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/target_clones.h"
#include "devices/kernel_cache.h"
#include "devices/matmul_geometry.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

bool tgc_cpu_sgemm_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                      const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
        return false;
    if (m == 0 || n == 0) return true;
    if (k == 0) {
        /* BLAS would reject lda = 0; the product is empty, so C = beta * C. */
        for (int64_t i = 0; i < m; i++) {
            float *row = c + i * ldc;
            if (beta == 0.0f)
                memset(row, 0, (size_t)n * sizeof(float));
            else
                for (int64_t j = 0; j < n; j++) row[j] *= beta;
        }
        return true;
    }
    if (m == 1 && (!ta || lda == 1)) { /* a row vector times op(B) (sgemm would pack all of B first) */
        if (tb) tgc_cpu_gemv_dot(n, k, alpha, b, ldb, a, beta, c, 1);
        else tgc_cpu_gemv_update(n, k, alpha, b, ldb, a, beta, c);
        return true;
    }
    if (n == 1 && !ta && (tb || ldb == 1)) { /* op(A)'s rows against a contiguous column */
        tgc_cpu_gemv_dot(m, k, alpha, a, lda, b, beta, c, ldc);
        return true;
    }
    if (m == 1) { /* a strided row vector: OpenBLAS's GEMV */
        cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? (int)n : (int)k, tb ? (int)k : (int)n, alpha,
                    b, (int)ldb, a, ta ? (int)lda : 1, beta, c, 1);
        return true;
    }
    if (n == 1) { /* op(A) times a column vector */
        cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? (int)k : (int)m, ta ? (int)m : (int)k, alpha,
                    a, (int)lda, b, tb ? 1 : (int)ldb, beta, c, (int)ldc);
        return true;
    }
    int done = tgc_dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); /* oneDNN where it takes it */
    if (done != 0) return done > 0;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return true;
}

/* How a GEMM is cut, from its multiply-adds alone: not below
 * SGEMM_SPLIT_MACS (1M: ~10-20 us on one core, still above a hand-off
 * to a worker; thin products run far below the core's peak: SqueezeNet's
 * 64 -> 16 1x1 layers on 55x55, [16, 64] x [64, 3025] with 3.1M, took
 * 84-86 us whole at 2 threads, where ORT took 39-59, and the model went
 * 3.05 -> 2.94 ms at 2 threads with 1M instead of 4M, level at 1 thread
 * and on MNASNet, RegNetY, EfficientNet, ShuffleNetV2, MobileNetV3 and
 * GoogLeNet, medians of 5-7 interleaved rounds); else into a power of two
 * of pieces (even over 2, 4 or 8 threads), at least 2, at most
 * SGEMM_MAX_PIECES, and more than 2 only while each keeps
 * SGEMM_PIECE_MACS. Pieces cost: each packs the operand it shares with
 * the others again (OpenBLAS packs per call). On two cores a
 * [128, 256] x [256, 1024] product took 398 us in 2 pieces, 415 in 4 and
 * 442 in 8; bench/peers' transformer encoder layer ran 1.57, 1.55 and
 * 1.53 ms with SGEMM_PIECE_MACS 4M, 8M and 16M (up to 8 pieces of 2M: 1.59).
 * 8M still cuts its 33M-MAC products in 4, for machines with more cores.
 * Matrix-vector products read a new matrix element per multiply-add: they
 * are memory-bound, their pieces smaller (GEMV_PIECE_MACS: 128K, about 10
 * us of streaming; at 256K the MLP's [1, 784] x [784, 512] stayed whole at
 * 2 threads, and the model ran 0.033 ms a run against 0.029 with 128K). */
#define SGEMM_SPLIT_MACS ((int64_t)1 << 20)
#define SGEMM_PIECE_MACS ((int64_t)8 << 20)
#define GEMV_PIECE_MACS ((int64_t)128 << 10)
#define SGEMM_MAX_PIECES 8
/* Rows or columns a piece should have at least (past 2 pieces): every piece
 * packs the shared operand again, which a narrow piece cannot amortize
 * (512^3 in 8 pieces of 64 ran at 0.87 of OpenBLAS's own two threads on
 * an earlier host). 128 (256 before stop 75) gives 1x1 layers on 14x14 and 7x7
 * twice the pieces for many cores: ResNet-50's pieces allow 4.8x at 16
 * threads, 4.0x at 256 (profile.py's bound). On a Zen 4 host it measured
 * level at 1 and 2 threads (ab.py, 4-6 alternating rounds: ResNet-50 0.947
 * and 1.011, RegNetX-800MF 0.978 and 1.000, GoogLeNet 0.986 and 1.022,
 * MNASNet 0.972 and 0.975; bench_matmul's square products at 2 threads
 * level from 1024, 256 and 512 within the noise or faster). Pieces are cut
 * at multiples of 16 rows or columns (a vector of oneDNN's kernels): 64,
 * OpenBLAS's tiles, cut MobileNetV2's [160, 960] x [960, 49] into 128 and
 * 32 rows, and its two threads ran it 1.27x faster than one. */
#define SGEMM_MIN_WIDTH 128
/* The same for a matrix-vector product, which packs nothing but whose
 * pieces are small (GEMV_PIECE_MACS): at 128 the batch-1 MLP's [1, 784] x
 * [784, 512] went from whole to 3 pieces, and at 2 threads the model ran
 * 0.043 -> 0.066 ms a run (the median of 3001; the best run 0.034 ->
 * 0.024: the second thread pays only when it is awake) on a Zen 4 host. */
#define GEMV_MIN_WIDTH 256

/* The pieces for a GEMM of `macs` multiply-adds (see above). */
static int64_t sgemm_pieces(int64_t macs, bool gemv) {
    if (gemv) {
        int64_t pieces = macs / GEMV_PIECE_MACS;
        return pieces < SGEMM_MAX_PIECES ? pieces : SGEMM_MAX_PIECES;
    }
    if (macs < SGEMM_SPLIT_MACS) return 1;
    int64_t pieces = 2;
    while (pieces < SGEMM_MAX_PIECES && macs / (2 * pieces) >= SGEMM_PIECE_MACS) pieces *= 2;
    return pieces;
}

/* C[r0..r1, c0..c1) = the broadcast bias: src[i * sm + j * sn] (sm and sn
 * are 0 along an axis the bias is broadcast along; sn is 0 or 1). */
static void fill_c(float *c, int64_t ldc, const float *src, int64_t sm, int64_t sn, int64_t r0, int64_t r1,
                   int64_t c0, int64_t c1) {
    for (int64_t i = r0; i < r1; i++) {
        float *row = c + i * ldc + c0;
        const float *s = src + i * sm;
        if (sn == 1) {
            memcpy(row, s + c0, (size_t)(c1 - c0) * sizeof(float));
        } else {
            for (int64_t j = 0; j < c1 - c0; j++) row[j] = s[(c0 + j) * sn];
        }
    }
}

/* C[r0..r1, c0..c1) += scale * the broadcast bias (as fill_c reads it),
 * after the product was written there with beta 0: the block is still in
 * the cache of the core that computed it. alpha * A B + beta * bias, the
 * product's sum and then the bias, as the GEMM's own beta would add it;
 * filling C first and accumulating into it (beta 1) cost a write and a
 * read of C more (a [256, 64] x [64, 3136] pointwise Conv: 406 us without
 * its bias, 609 with it filled first, on one Zen 5 core). */
TGC_CPU_CLONES static void add_bias(float *c, int64_t ldc, const float *src, int64_t sm, int64_t sn, float scale,
                                    int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    for (int64_t i = r0; i < r1; i++) {
        float *restrict row = c + i * ldc + c0;
        const float *restrict s = src + i * sm + c0 * sn;
        if (sn == 1) {
            for (int64_t j = 0; j < c1 - c0; j++) row[j] += scale * s[j];
        } else {
            float v = scale * s[0];
            for (int64_t j = 0; j < c1 - c0; j++) row[j] += v;
        }
    }
}

void tgc_cpu_add_row_bias(float *c, int64_t ldc, const float *bias, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    add_bias(c, ldc, bias, 1, 0, 1.0f, r0, r1, c0, c1);
}

/* A GEMM cut into `pieces` blocks of rows (split_m) or columns of C; with
 * `bias`, each piece adds it to its block after the product (add_bias). */
typedef struct sgemm_split {
    bool ta, tb, split_m, ok[SGEMM_MAX_PIECES];
    int64_t m, n, k, lda, ldb, ldc, step;
    float alpha, beta;
    const float *a, *b;
    const float *panels; /* B in column panels (tgc_cpu_gemv_panels): then m is 1 and the pieces whole blocks */
    float *c;
    const float *bias;
    int64_t bias_sm, bias_sn;
    const tgc_fused_act *act; /* a fused activation (c->fused_act), applied to each block */
} sgemm_split;


static void sgemm_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    sgemm_split *s = arg;
    int64_t lo = i * s->step, len = s->split_m ? s->m : s->n;
    int64_t hi = lo + s->step < len ? lo + s->step : len;
    float beta = s->bias != NULL ? 0.0f : s->beta; /* with a bias, beta scales it (add_bias) */
    if (s->split_m) {
        const float *a = s->ta ? s->a + lo : s->a + lo * s->lda;
        s->ok[i] = tgc_cpu_sgemm_one(s->ta, s->tb, hi - lo, s->n, s->k, s->alpha, a, s->lda, s->b, s->ldb, beta,
                                     s->c + lo * s->ldc, s->ldc);
        if (s->bias != NULL && s->beta != 0.0f)
            add_bias(s->c, s->ldc, s->bias, s->bias_sm, s->bias_sn, s->beta, lo, hi, 0, s->n);
        tgc_cpu_act_block(s->act, s->c, s->ldc, lo, hi, 0, s->n);
    } else {
        const float *b = s->tb ? s->b + lo * s->ldb : s->b + lo;
        if (s->panels != NULL) {
            tgc_cpu_gemv_panels(hi - lo, s->k, s->alpha, s->panels + lo * s->k, s->a, beta, s->c + lo);
            s->ok[i] = true;
        } else {
            s->ok[i] = tgc_cpu_sgemm_one(s->ta, s->tb, s->m, hi - lo, s->k, s->alpha, s->a, s->lda, b, s->ldb, beta,
                                         s->c + lo, s->ldc);
        }
        if (s->bias != NULL && s->beta != 0.0f)
            add_bias(s->c, s->ldc, s->bias, s->bias_sm, s->bias_sn, s->beta, 0, s->m, lo, hi);
        tgc_cpu_act_block(s->act, s->c, s->ldc, 0, s->m, lo, hi);
    }
}

/* The rows (*split_m) or columns of C a piece of an m x n x k GEMM gets, a
 * multiple of `align` (a power of two, 16 or more); the whole side when the
 * product stays whole. The longer side of C is cut. */
static int64_t sgemm_step(int64_t m, int64_t n, int64_t k, int64_t align, bool *split_m) {
    int64_t macs = m > 0 && n > 0 && k > 0 && m * n <= INT64_MAX / k ? m * n * k : 0;
    bool gemv = m == 1 || n == 1;
    int64_t pieces = sgemm_pieces(macs, gemv), min_width = gemv ? GEMV_MIN_WIDTH : SGEMM_MIN_WIDTH;
    *split_m = m > n;
    int64_t len = *split_m ? m : n;
    while (pieces > 2 && len / pieces < min_width) pieces /= 2;
    if (pieces < 2 || len < 32) return len;
    int64_t step = (len + pieces - 1) / pieces;
    return (step + align - 1) / align * align;
}

bool tgc_cpu_sgemm_fused(tgc_thread_pool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                      const float *bias, int64_t bias_sm, int64_t bias_sn, const tgc_fused_act *act) {
    bool split_m;
    int64_t step = sgemm_step(m, n, k, 16, &split_m), len = split_m ? m : n;
    if (step >= len) {
        bool ok = tgc_cpu_sgemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, bias != NULL ? 0.0f : beta, c, ldc);
        if (ok && bias != NULL && beta != 0.0f) add_bias(c, ldc, bias, bias_sm, bias_sn, beta, 0, m, 0, n);
        if (ok) tgc_cpu_act_block(act, c, ldc, 0, m, 0, n);
        return ok;
    }
    int64_t pieces = (len + step - 1) / step;
    sgemm_split s = {.ta = ta, .tb = tb, .split_m = split_m, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb,
                     .ldc = ldc, .step = step, .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c,
                     .bias = bias, .bias_sm = bias_sm, .bias_sn = bias_sn, .act = act};
    tgc_parallel_for(pool, pieces, sgemm_piece, &s);
    for (int64_t i = 0; i < pieces; i++)
        if (!s.ok[i]) return false;
    return true;
}

bool tgc_cpu_sgemm(tgc_thread_pool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                   const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    return tgc_cpu_sgemm_fused(pool, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL, 0, 0, false);
}

/* ---- Packed weights (devices/cpu/gemm_packed.h) ------------------------------ */

/* Below this many multiply-adds a product stays with OpenBLAS: oneDNN's
 * per-call set-up (memory objects for A and C) would be a large share. */
#define PACKED_MIN_MACS ((int64_t)1 << 16)

/* The ways MatMul and Gemm run (the trace's and --dump placed's names). */
#define WAY_PACKED "onednn packed matmul"
#define WAY_SGEMM "sgemm (onednn or openblas)" /* tgc_cpu_sgemm_fused: oneDNN's plain GEMM where it takes the piece */

/* Whether shape s with B = input 1 is worth packing once per session: B a
 * session constant, the product not small and not one row (a
 * matrix-vector product, bound by reading B: OpenBLAS's GEMV, split finer
 * (GEMV_PIECE_MACS), keeps up with it), and oneDNN present. From sizes
 * alone, so runs and the choosers agree. */
static bool packing_pays(const tgc_kernel_ctx *c, const tgc_gemm_shape *s) {
    bool small = s->m < PACKED_MIN_MACS && s->n < PACKED_MIN_MACS && s->k < PACKED_MIN_MACS &&
                 s->m * s->n * s->k < PACKED_MIN_MACS; /* each below 2^16: no overflow */
    return !small && s->m != 1 && (c->const_inputs & (1u << 1)) != 0 && tgc_packed_gemm_available();
}

/* The node's packed GEMM for shape s with B = input 1 (b), built on the
 * first run; NULL when packing does not pay (packing_pays), oneDNN
 * declined, or this run's sizes are not the first run's (a symbolic dim):
 * then tgc_cpu_sgemm_fused. NULL with *no_memory set when memory for the
 * packing ran out (tgc_packed_gemm_cached): the kernel fails. */
static const tgc_packed_gemm *packed_for(tgc_kernel_ctx *c, const tgc_gemm_shape *s, const float *b, bool *no_memory) {
    *no_memory = false;
    return packing_pays(c, s) ? tgc_packed_gemm_cached(c, s, b, no_memory) : NULL;
}

/* ---- One row by a constant B: column panels (kernels_nn.h) ------------------- */

#define WAY_PANELS "gemv on column panels"

/* Whether shape s is one row of A by B as it lies ([1, K] x [K, N], A's K
 * elements contiguous) with B = input 1 a session constant: the update
 * form, which then reads B in column panels packed once per session. */
static bool panels_pay(const tgc_kernel_ctx *c, const tgc_gemm_shape *s) {
    return s->m == 1 && !s->tb && (!s->ta || s->lda == 1) && tgc_cpu_gemv_panels_fit(s->n) && s->k > 0 &&
           (c->const_inputs & (1u << 1)) != 0;
}

int64_t tgc_cpu_gemv_panels_cached_bytes(int64_t count, int64_t n, int64_t k) {
    int64_t floats, bytes;
    if (n > INT64_MAX - 15 || !tgc_checked_mul_i64(tgc_cpu_gemv_panels_cols(n), k, &floats) ||
        !tgc_checked_mul_i64(floats, count, &floats) || !tgc_checked_mul_i64(floats, (int64_t)sizeof(float), &bytes) ||
        bytes > INT64_MAX - (int64_t)sizeof(tgc_gemv_panels))
        return -1;
    return bytes + (int64_t)sizeof(tgc_gemv_panels);
}

typedef struct panels_args {
    int64_t count, n, k, ld_k, ld_n, stride;
    const float *mat;
} panels_args;

static void *build_panels(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const panels_args *pa = arg;
    int64_t nbytes = tgc_cpu_gemv_panels_cached_bytes(pa->count, pa->n, pa->k);
    tgc_gemv_panels *gp = nbytes > 0 && (uint64_t)nbytes <= SIZE_MAX ? tgc_malloc((size_t)nbytes) : NULL;
    if (gp == NULL) return NULL;
    *gp = (tgc_gemv_panels){.count = pa->count, .n = pa->n, .k = pa->k};
    for (int64_t i = 0; i < gp->count; i++)
        tgc_cpu_gemv_panels_pack(gp->n, gp->k, pa->mat + i * pa->stride, pa->ld_k, pa->ld_n,
                                 gp->p + i * tgc_cpu_gemv_panels_floats(gp->n, gp->k));
    *bytes = (size_t)nbytes;
    return gp;
}

const tgc_gemv_panels *tgc_cpu_gemv_panels_cached(tgc_kernel_ctx *c, int input, int64_t count, int64_t n, int64_t k,
                                                  const float *mat, int64_t ld_k, int64_t ld_n, int64_t stride,
                                                  bool *no_memory) {
    panels_args args = {.count = count, .n = n, .k = k, .ld_k = ld_k, .ld_n = ld_n, .stride = stride, .mat = mat};
    const tgc_gemv_panels *gp = tgc_kernel_cache_get(c, 1u << input, build_panels, &args);
    *no_memory = gp == NULL && (c->const_inputs & (1u << input)) && c->cache != NULL && !tgc_kernel_cache_taken(c);
    if (gp == NULL || gp->count != count || gp->n != n || gp->k != k) return NULL;
    tgc_kernel_cache_replaces(c, 1u << input);
    return gp;
}

/* Where panels pay for shape s, their cache block in place of input 1 in
 * *out (MatMul's and Gemm's footprints). */
static void panels_footprint(const tgc_kernel_ctx *c, const tgc_gemm_shape *s, tgc_kernel_footprint *out) {
    int64_t bytes = panels_pay(c, s) ? tgc_cpu_gemv_panels_cached_bytes(1, s->n, s->k) : -1;
    if (bytes > 0) out->cache_bytes = bytes, out->replaces_inputs = 1u << 1;
}

/* The node's B in column panels for shape s (b: B as it lies, read on the
 * first run only) where panels pay (panels_pay), else NULL; NULL with
 * *no_memory set when memory for them ran out: the kernel fails, as for
 * oneDNN's packing. */
static const tgc_gemv_panels *panels_for(tgc_kernel_ctx *c, const tgc_gemm_shape *s, const float *b,
                                         bool *no_memory) {
    *no_memory = false;
    return panels_pay(c, s) ? tgc_cpu_gemv_panels_cached(c, 1, 1, s->n, s->k, b, s->ldb, 1, 0, no_memory) : NULL;
}

/* C [1, n] = alpha * x B + beta * bias[j * bias_sn] (bias NULL: alpha *
 * x B + beta * C), then `act`: tgc_cpu_sgemm_fused's pieces, cut at whole
 * blocks. */
static void run_panels(tgc_thread_pool *pool, int64_t n, int64_t k, const float *panels, float alpha, const float *x,
                       float beta, float *y, const float *bias, int64_t bias_sn, const tgc_fused_act *act) {
    bool split_m;
    int64_t step = sgemm_step(1, n, k, TGC_GEMV_PANEL, &split_m);
    sgemm_split s = {.m = 1, .n = n, .k = k, .ldc = n, .step = step, .alpha = alpha, .beta = beta, .a = x,
                     .panels = panels, .c = y, .bias = bias, .bias_sn = bias_sn, .act = act};
    tgc_parallel_for(pool, (n + step - 1) / step, sgemm_piece, &s);
}

void tgc_cpu_gemv_panels_run(tgc_thread_pool *pool, int64_t n, int64_t k, float alpha, const float *panels,
                             const float *x, float beta, float *y) {
    run_panels(pool, n, k, panels, alpha, x, beta, y, NULL, 0, NULL);
}

/* ---- MatMul --------------------------------------------------------------- */

/* A batch of products each too small to split (below SGEMM_SPLIT_MACS) runs
 * several at once: per_piece products a piece, about BATCH_PIECE_MACS
 * (~20 us) of them. Each product is one whole GEMM whichever piece runs it,
 * so any thread count gives the same bits. (Attention's [4, 128, 64] x
 * [4, 64, 128]: 97 us one after the other, 55 us over two cores.) */
#define BATCH_PIECE_MACS ((int64_t)1 << 20)

typedef struct matmul_batch {
    const tgc_matmul_geometry *g;
    const float *a, *b;
    float *y;
    int64_t per_piece;
    const tgc_fused_act *act; /* applied to each product as it is written */
    atomic_bool failed;
} matmul_batch;

static void matmul_batch_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    matmul_batch *mb = arg;
    const tgc_matmul_geometry *g = mb->g;
    int64_t lo = piece * mb->per_piece, hi = lo + mb->per_piece < g->batch ? lo + mb->per_piece : g->batch;
    for (int64_t t = lo; t < hi; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(g, t, &oa, &ob, &oy);
        if (!tgc_cpu_sgemm_one(false, false, g->m, g->n, g->k, 1.0f, mb->a + oa, g->k, mb->b + ob, g->n, 0.0f,
                               mb->y + oy, g->n))
            atomic_store(&mb->failed, true);
        tgc_cpu_act_block(mb->act, mb->y + oy, g->n, 0, g->m, 0, g->n);
    }
}

/* A MatMul whose B has no batch is one GEMM over A's rows, batches
 * stacked: its shape into *s; false for a batched B (or rows past int). */
static bool matmul_one_gemm(const tgc_matmul_geometry *g, tgc_gemm_shape *s) {
    *s = (tgc_gemm_shape){.m = g->batch * g->m, .n = g->n, .k = g->k, .lda = g->k, .ldb = g->n, .ldc = g->n,
                          .alpha = 1.0f};
    return g->b_count == 1 && g->batch * g->m <= INT_MAX;
}

const char *tgc_cpu_matmul_choose(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_gemm_shape s;
    if (tgc_matmul_geometry_read(c, &g) != TGC_OK || g.batch == 0 || g.m == 0 || g.n == 0 || g.k == 0) return NULL;
    if (!matmul_one_gemm(&g, &s)) return WAY_SGEMM;
    return packing_pays(c, &s) ? WAY_PACKED : panels_pay(c, &s) ? WAY_PANELS : WAY_SGEMM;
}

void tgc_cpu_matmul_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_matmul_geometry g;
    tgc_gemm_shape s;
    if (tgc_matmul_geometry_read(c, &g) != TGC_OK || g.batch == 0 || g.m == 0 || g.n == 0 || g.k == 0) return;
    out->coarse_pieces = true; /* a GEMM's pieces (SGEMM_PIECE_MACS, or gemm_packed.c's) */
    if (matmul_one_gemm(&g, &s) && packing_pays(c, &s))
        out->cache_bytes = tgc_packed_gemm_cached_bound(&s), out->replaces_inputs = 1u << 1;
    else if (matmul_one_gemm(&g, &s))
        panels_footprint(c, &s, out);
}

tgc_status tgc_cpu_matmul_f32(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_status st = tgc_matmul_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *y = &c->outputs[0];
    int64_t m = g.m, n = g.n, k = g.k, batch = g.batch;
    if (batch == 0 || m == 0 || n == 0) return TGC_OK;

    const float *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    float *py = tgc_kernel_out_ptr(c, 0);
    const tgc_fused_act *act = c->fused_act; /* executor/fuse.c: applied as each block is written */
    if (k == 0) { /* an empty sum: zeros, and A and B have no memory to point into */
        memset(py, 0, tgc_value_nbytes(y));
        tgc_cpu_act_block(act, py, n, 0, batch * m, 0, n);
        return TGC_OK;
    }
    bool ok = true;
    int64_t macs = m * n <= INT64_MAX / k ? m * n * k : INT64_MAX;
    tgc_gemm_shape shape;
    bool no_memory = false;
    bool one_gemm = matmul_one_gemm(&g, &shape);
    const tgc_packed_gemm *packed = one_gemm ? packed_for(c, &shape, pb, &no_memory) : NULL;
    const tgc_gemv_panels *panels = one_gemm && !no_memory ? panels_for(c, &shape, pb, &no_memory) : NULL;
    if (no_memory) return tgc_kernel_fail_nomem(c, "out of host memory for MatMul's packed B");
    c->impl = packed != NULL ? WAY_PACKED : panels != NULL ? WAY_PANELS : WAY_SGEMM;
    if (c->prepack_only) return TGC_OK;
    if (panels != NULL) {
        run_panels(c->pool, panels->n, panels->k, panels->p, 1.0f, pa, 0.0f, py, NULL, 0, act);
    } else if (packed != NULL) {
        ok = tgc_packed_gemm_run(packed, c->pool, pa, py, act);
        if (!ok) return tgc_kernel_fail(c, "MatMul: oneDNN's matmul failed");
    } else if (g.b_count == 1 && batch * m <= INT_MAX) { /* then A's batch is the output's */
        ok = tgc_cpu_sgemm_fused(c->pool, false, false, batch * m, n, k, 1.0f, pa, k, pb, n, 0.0f, py, n, NULL, 0, 0,
                                 act);
    } else if (batch > 1 && macs < SGEMM_SPLIT_MACS) { /* small products: several at once */
        matmul_batch b = {.g = &g, .a = pa, .b = pb, .y = py, .per_piece = (BATCH_PIECE_MACS + macs - 1) / macs,
                          .act = act};
        atomic_init(&b.failed, false);
        tgc_parallel_for(c->pool, (batch + b.per_piece - 1) / b.per_piece, matmul_batch_piece, &b);
        ok = !atomic_load(&b.failed);
    } else {
        for (int64_t t = 0; ok && t < batch; t++) {
            int64_t oa, ob, oy;
            tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
            ok = tgc_cpu_sgemm_fused(c->pool, false, false, m, n, k, 1.0f, pa + oa, k, pb + ob, n, 0.0f, py + oy, n,
                                     NULL, 0, 0, act);
        }
    }
    if (!ok) return tgc_kernel_fail(c, "MatMul: " TGC_CPU_GEMM_FAILED);
    return TGC_OK;
}

/* ---- _MatMulHalfWeight ----------------------------------------------------- */

/* A MatMul by a float16 or bfloat16 weight B [K, N] (graph/ops_nn.c). With
 * one row of A, a matrix-vector product bound by reading B, B is read in
 * place, two bytes an element, over pieces of columns
 * (tgc_ew_loops.gemv_half). With more rows B is widened once into the
 * node's kernel cache: packed for oneDNN where packing pays (the cache then
 * stands in for the half-precision original, which goes), else kept as a
 * float32 copy for tgc_cpu_sgemm_fused; outside a session, or for a B that
 * is not a constant, it is widened into a block freed after the run. Every
 * way gives the bits MatMul gives on Cast(B, to=float). */
#define WAY_HALF_GEMV "gemv on the half-precision weight"
#define WAY_WIDENED "sgemm on the widened weight"

typedef struct widened_block {
    tgc_packed_gemm *g; /* B packed for oneDNN, or NULL */
    float *b;           /* else B widened, [K, N] */
} widened_block;

typedef struct widened_args {
    const tgc_gemm_shape *shape;
    const tgc_value *b;
    bool pack;
} widened_args;

/* B widened into a new block of K x N floats (tgc_free), or NULL. */
static float *widen_weight(const tgc_value *b, int64_t count) {
    return tgc_cpu_widened_copy(b->dtype, tgc_buffer_host_ptr(b->buf), count);
}

static void *build_widened(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const widened_args *wa = arg;
    widened_block *blk = tgc_calloc(1, sizeof *blk);
    float *w = blk != NULL ? widen_weight(wa->b, wa->shape->k * wa->shape->n) : NULL;
    if (w == NULL) {
        tgc_free(blk);
        return NULL;
    }
    *bytes = 0;
    if (wa->pack) blk->g = tgc_packed_gemm_create(wa->shape, w, bytes);
    if (blk->g != NULL) {
        tgc_free(w);
    } else {
        blk->b = w;
        *bytes = (size_t)(wa->shape->k * wa->shape->n) * sizeof(float);
    }
    *bytes += sizeof *blk;
    return blk;
}

static void release_widened(void *data) {
    widened_block *blk = data;
    tgc_packed_gemm_free(blk->g);
    tgc_free(blk->b);
    tgc_free(blk);
}

/* One row of A times the half-precision B, pieces of columns. */
typedef struct half_gemv {
    const tgc_value *b;
    const float *x;
    float *y;
    int64_t n, k, step;
    const tgc_fused_act *act;
} half_gemv;

static void half_gemv_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const half_gemv *h = arg;
    int64_t lo = i * h->step, hi = lo + h->step < h->n ? lo + h->step : h->n;
    const tgc_ew_loops *loops = tgc_cpu_ew_loops();
    const uint16_t *b = (const uint16_t *)tgc_buffer_host_ptr(h->b->buf) + lo;
    if (h->b->dtype == TGC_FLOAT16) loops->gemv_half(hi - lo, h->k, b, h->n, h->x, h->y + lo);
    else loops->gemv_bf16(hi - lo, h->k, b, h->n, h->x, h->y + lo);
    tgc_cpu_act_block(h->act, h->y, h->n, 0, 1, lo, hi);
}

static void matmul_half_gemv(tgc_kernel_ctx *c, const tgc_gemm_shape *s, const float *x, float *y) {
    int64_t macs; /* n * k: B's elements, which its geometry checked */
    if (!tgc_checked_mul_i64(s->n, s->k, &macs)) macs = INT64_MAX;
    int64_t pieces = sgemm_pieces(macs, true);
    while (pieces > 2 && s->n / pieces < SGEMM_MIN_WIDTH) pieces /= 2;
    if (pieces < 1 || s->n < 32) pieces = 1;
    int64_t step = ((s->n + pieces - 1) / pieces + 15) / 16 * 16;
    half_gemv h = {.b = &c->inputs[1], .x = x, .y = y, .n = s->n, .k = s->k, .step = step, .act = c->fused_act};
    tgc_parallel_for(c->pool, (s->n + step - 1) / step, half_gemv_piece, &h);
}

/* Whether the node reads B in place: one row of A. */
static bool reads_half_in_place(const tgc_gemm_shape *s) { return s->m == 1; }

const char *tgc_cpu_matmul_half_choose(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_gemm_shape s;
    if (tgc_matmul_geometry_read_dtypes(c, TGC_FLOAT32, c->inputs[1].dtype, &g) != TGC_OK || !matmul_one_gemm(&g, &s) ||
        g.m == 0 || g.n == 0 || g.k == 0)
        return NULL;
    if (reads_half_in_place(&s)) return WAY_HALF_GEMV;
    return packing_pays(c, &s) ? WAY_PACKED : WAY_WIDENED;
}

void tgc_cpu_matmul_half_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_matmul_geometry g;
    tgc_gemm_shape s;
    if (tgc_matmul_geometry_read_dtypes(c, TGC_FLOAT32, c->inputs[1].dtype, &g) != TGC_OK || !matmul_one_gemm(&g, &s) ||
        g.batch == 0 || g.m == 0 || g.n == 0 || g.k == 0 || reads_half_in_place(&s) || !(c->const_inputs & (1u << 1)))
        return;
    int64_t widened;
    if (!tgc_checked_mul_i64(s.k * s.n, (int64_t)sizeof(float), &widened)) widened = INT64_MAX; /* k * n checked */
    out->cache_bytes = packing_pays(c, &s) ? tgc_packed_gemm_cached_bound(&s) : widened;
    if (out->cache_bytes <= INT64_MAX - (int64_t)sizeof(widened_block)) out->cache_bytes += (int64_t)sizeof(widened_block);
    out->replaces_inputs = 1u << 1;
}

tgc_status tgc_cpu_matmul_half_weight(tgc_kernel_ctx *c) {
    const tgc_value *b = &c->inputs[1];
    if (b->dtype != TGC_FLOAT16 && b->dtype != TGC_BFLOAT16)
        return tgc_kernel_fail(c, "_MatMulHalfWeight: input B is %s; it takes float16 or bfloat16",
                               tgc_dtype_name(b->dtype));
    tgc_matmul_geometry g;
    tgc_status st = tgc_matmul_geometry_read_dtypes(c, TGC_FLOAT32, b->dtype, &g);
    if (st != TGC_OK) return st;
    tgc_gemm_shape s;
    if (!matmul_one_gemm(&g, &s)) return tgc_kernel_fail(c, "_MatMulHalfWeight: B must be a matrix [K, N]");
    const float *pa = tgc_kernel_in_ptr(c, 0);
    float *py = tgc_kernel_out_ptr(c, 0);
    if (s.m == 0 || s.n == 0) return TGC_OK;
    if (s.k == 0) { /* an empty sum: zeros */
        memset(py, 0, tgc_value_nbytes(&c->outputs[0]));
        tgc_cpu_act_block(c->fused_act, py, s.n, 0, s.m, 0, s.n);
        return TGC_OK;
    }
    if (reads_half_in_place(&s)) {
        c->impl = WAY_HALF_GEMV;
        if (!c->prepack_only) matmul_half_gemv(c, &s, pa, py);
        return TGC_OK;
    }
    widened_args args = {.shape = &s, .b = b, .pack = packing_pays(c, &s)};
    const widened_block *blk = tgc_kernel_cache_get_owning(c, 1u << 1, build_widened, release_widened, &args);
    if (blk != NULL && blk->g != NULL && !tgc_packed_gemm_matches(blk->g, &s)) blk = NULL;
    if (blk == NULL && c->cache != NULL && (c->const_inputs & (1u << 1)) && !tgc_kernel_cache_taken(c))
        return tgc_kernel_fail(c, "_MatMulHalfWeight: out of host memory widening the weight");
    if (blk != NULL) tgc_kernel_cache_replaces(c, 1u << 1);
    c->impl = blk != NULL && blk->g != NULL ? WAY_PACKED : WAY_WIDENED;
    if (c->prepack_only) return TGC_OK;
    if (blk != NULL && blk->g != NULL) {
        if (!tgc_packed_gemm_run(blk->g, c->pool, pa, py, c->fused_act))
            return tgc_kernel_fail(c, "_MatMulHalfWeight: oneDNN's matmul failed");
        return TGC_OK;
    }
    float *own = blk != NULL ? NULL : widen_weight(b, s.k * s.n);
    if (blk == NULL && own == NULL) return tgc_kernel_fail(c, "_MatMulHalfWeight: out of host memory widening B");
    bool ok = tgc_cpu_sgemm_fused(c->pool, false, false, s.m, s.n, s.k, 1.0f, pa, s.k, own != NULL ? own : blk->b,
                                  s.n, 0.0f, py, s.n, NULL, 0, 0, c->fused_act);
    tgc_free(own);
    if (!ok) return tgc_kernel_fail(c, "_MatMulHalfWeight: " TGC_CPU_GEMM_FAILED);
    return TGC_OK;
}

/* ---- Gemm ----------------------------------------------------------------- */

static tgc_gemm_shape gemm_shape(const tgc_kernel_ctx *c, const tgc_gemm_geometry *g) {
    return (tgc_gemm_shape){.tb = g->tb, .m = g->m, .n = g->n, .k = g->k, .lda = c->inputs[0].dims[1],
                            .ldb = c->inputs[1].dims[1], .ldc = g->n, .alpha = g->alpha,
                            .beta = g->has_c ? g->beta : 0.0f};
}

void tgc_cpu_gemm_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_gemm_geometry g;
    if (tgc_gemm_geometry_read(c, &g) != TGC_OK || g.m == 0 || g.n == 0) return;
    out->coarse_pieces = true; /* a GEMM's pieces (SGEMM_PIECE_MACS, or gemm_packed.c's) */
    tgc_gemm_shape s = gemm_shape(c, &g);
    if (!g.ta && g.k > 0 && packing_pays(c, &s))
        out->cache_bytes = tgc_packed_gemm_cached_bound(&s), out->replaces_inputs = 1u << 1;
    else
        panels_footprint(c, &s, out);
}

const char *tgc_cpu_gemm_choose(tgc_kernel_ctx *c) {
    tgc_gemm_geometry g;
    if (tgc_gemm_geometry_read(c, &g) != TGC_OK || g.m == 0 || g.n == 0) return NULL;
    tgc_gemm_shape s = gemm_shape(c, &g);
    if (!g.ta && g.k > 0 && packing_pays(c, &s)) return WAY_PACKED;
    return panels_pay(c, &s) ? WAY_PANELS : WAY_SGEMM;
}

tgc_status tgc_cpu_gemm_f32(tgc_kernel_ctx *c) {
    tgc_gemm_geometry g;
    tgc_status st = tgc_gemm_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    bool has_c = g.has_c, ta = g.ta, tb = g.tb;
    float alpha = g.alpha, beta = g.beta;
    int64_t m = g.m, n = g.n, k = g.k, cm = g.cm, cn = g.cn;
    if (m == 0 || n == 0) return TGC_OK;

    float *py = tgc_kernel_out_ptr(c, 0);
    const float *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    const float *pc = has_c ? tgc_kernel_in_ptr(c, 2) : NULL;
    tgc_gemm_shape shape = gemm_shape(c, &g);
    bool no_memory = false;
    const tgc_packed_gemm *packed = !ta && k > 0 ? packed_for(c, &shape, pb, &no_memory) : NULL;
    const tgc_gemv_panels *panels = !no_memory ? panels_for(c, &shape, pb, &no_memory) : NULL;
    if (no_memory) return tgc_kernel_fail_nomem(c, "out of host memory for Gemm's packed B");
    c->impl = packed != NULL ? WAY_PACKED : panels != NULL ? WAY_PANELS : WAY_SGEMM;
    if (c->prepack_only) return TGC_OK;
    if (panels != NULL) { /* C broadcast to [1, n]: one value (cn 0) or a row (cn 1) */
        run_panels(c->pool, panels->n, panels->k, panels->p, alpha, pa, has_c ? beta : 0.0f, py, pc, cn,
                   c->fused_act);
        return TGC_OK;
    }
    if (packed != NULL) {
        if (has_c && beta != 0.0f) fill_c(py, n, pc, cm, cn, 0, m, 0, n);
        if (!tgc_packed_gemm_run(packed, c->pool, pa, py, c->fused_act))
            return tgc_kernel_fail(c, "Gemm: oneDNN's matmul failed");
        return TGC_OK;
    }
    if (!tgc_cpu_sgemm_fused(c->pool, ta, tb, m, n, k, alpha, pa, a->dims[1], pb, b->dims[1], has_c ? beta : 0.0f, py, n, pc,
                   cm, cn, c->fused_act))
        return tgc_kernel_fail(c, "Gemm: " TGC_CPU_GEMM_FAILED);
    return TGC_OK;
}
