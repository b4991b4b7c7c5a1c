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
 * first so that cblas_sgemm's beta does the rest. */
#include "devices/cpu/kernels_nn.h"
#include "devices/matmul_geometry.h"

#include <cblas.h>
#include <limits.h>
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
    if (m == 1) { /* a row vector times op(B): GEMV (sgemm would pack all of B first) */
        cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? (int)n : (int)k, tb ? (int)k : (int)n, alpha,
                    b, (int)ldb, a, ta ? (int)lda : 1, beta, c, 1);
        return true;
    }
    if (n == 1) { /* op(A) times a column vector */
        cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? (int)k : (int)m, ta ? (int)m : (int)k, alpha,
                    a, (int)lda, b, tb ? 1 : (int)ldb, beta, c, (int)ldc);
        return true;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return true;
}

/* The least work worth a piece of its own (multiply-adds; ~40 us on one
 * core at 100 GFLOP/s, well above a hand-off to a worker), and the most
 * pieces one GEMM is cut into. */
#define SGEMM_PIECE_MACS ((int64_t)2 << 20)
#define GEMV_PIECE_MACS ((int64_t)256 << 10)
#define SGEMM_MAX_PIECES 8

/* A GEMM cut into `pieces` blocks of rows (split_m) or columns of C. */
typedef struct sgemm_split {
    bool ta, tb, split_m, ok[SGEMM_MAX_PIECES];
    int64_t m, n, k, lda, ldb, ldc, step;
    float alpha, beta;
    const float *a, *b;
    float *c;
} sgemm_split;

static void sgemm_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    sgemm_split *s = arg;
    int64_t lo = i * s->step, len = s->split_m ? s->m : s->n;
    int64_t hi = lo + s->step < len ? lo + s->step : len;
    if (s->split_m) {
        const float *a = s->ta ? s->a + lo : s->a + lo * s->lda;
        s->ok[i] = tgc_cpu_sgemm_one(s->ta, s->tb, hi - lo, s->n, s->k, s->alpha, a, s->lda, s->b, s->ldb, s->beta,
                             s->c + lo * s->ldc, s->ldc);
    } else {
        const float *b = s->tb ? s->b + lo * s->ldb : s->b + lo;
        s->ok[i] = tgc_cpu_sgemm_one(s->ta, s->tb, s->m, hi - lo, s->k, s->alpha, s->a, s->lda, b, s->ldb, s->beta,
                             s->c + lo, s->ldc);
    }
}

bool tgc_cpu_sgemm(tgc_thread_pool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                   const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    int64_t macs = m > 0 && n > 0 && k > 0 && m * n <= INT64_MAX / k ? m * n * k : 0;
    /* A matrix-vector product reads a new matrix element per multiply-add:
     * it is memory-bound, its pieces smaller. */
    int64_t pieces = macs / (m == 1 || n == 1 ? GEMV_PIECE_MACS : SGEMM_PIECE_MACS);
    if (pieces > SGEMM_MAX_PIECES) pieces = SGEMM_MAX_PIECES;
    /* Cut the longer side of C, in multiples of 16 (OpenBLAS's tiles), no
     * piece thinner than 16. */
    bool split_m = m > n;
    int64_t len = split_m ? m : n;
    if (pieces < 2 || len < 32)
        return tgc_cpu_sgemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    int64_t step = (len + pieces - 1) / pieces;
    step = (step + 15) / 16 * 16;
    pieces = (len + step - 1) / step;
    sgemm_split s = {.ta = ta, .tb = tb, .split_m = split_m, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb,
                     .ldc = ldc, .step = step, .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c};
    tgc_parallel_for(pool, pieces, sgemm_piece, &s);
    for (int64_t i = 0; i < pieces; i++)
        if (!s.ok[i]) return false;
    return true;
}

/* ---- MatMul --------------------------------------------------------------- */

tgc_status tgc_cpu_matmul_f32(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_status st = tgc_matmul_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *y = &c->outputs[0];
    int64_t m = g.m, n = g.n, k = g.k, batch = g.batch;
    if (batch == 0 || m == 0 || n == 0) return TGC_OK;

    const float *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    float *py = tgc_kernel_out_ptr(c, 0);
    if (k == 0) { /* an empty sum: zeros, and A and B have no memory to point into */
        memset(py, 0, tgc_value_nbytes(y));
        return TGC_OK;
    }
    bool ok = true;
    if (g.b_count == 1 && batch * m <= INT_MAX) { /* then A's batch is the output's */
        ok = tgc_cpu_sgemm(c->pool, false, false, batch * m, n, k, 1.0f, pa, k, pb, n, 0.0f, py, n);
    } else {
        for (int64_t t = 0; ok && t < batch; t++) {
            int64_t oa, ob, oy;
            tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
            ok = tgc_cpu_sgemm(c->pool, false, false, m, n, k, 1.0f, pa + oa, k, pb + ob, n, 0.0f, py + oy, n);
        }
    }
    if (!ok) return tgc_kernel_fail(c, "MatMul sizes pass BLAS's int range");
    return TGC_OK;
}

/* ---- Gemm ----------------------------------------------------------------- */

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
    if (has_c) {
        const float *pc = tgc_kernel_in_ptr(c, 2);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) py[i * n + j] = pc[i * cm + j * cn];
    }
    const float *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    if (!tgc_cpu_sgemm(c->pool, ta, tb, m, n, k, alpha, pa, a->dims[1], pb, b->dims[1], has_c ? beta : 0.0f, py, n))
        return tgc_kernel_fail(c, "Gemm sizes pass BLAS's int range");
    return TGC_OK;
}
