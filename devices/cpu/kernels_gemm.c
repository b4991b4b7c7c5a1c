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

#include <cblas.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

bool tgc_cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                   int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
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
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return true;
}

/* ---- MatMul --------------------------------------------------------------- */

tgc_status tgc_cpu_matmul_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "MatMul takes 2 inputs and 1 output");
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    const tgc_value *y = &c->outputs[0];
    tgc_status st = tgc_cpu_need_f32(c, a, "input A");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, b, "input B");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1)
        return tgc_kernel_fail(c, "MatMul needs inputs of rank >= 1 (A rank %d, B rank %d)", ra, rb);

    int64_t m = ra >= 2 ? a->dims[ra - 2] : 1, k = a->dims[ra - 1];
    int64_t kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0], n = rb >= 2 ? b->dims[rb - 1] : 1;
    if (k != kb)
        return tgc_kernel_fail(c, "inner dimensions differ: A has K = %lld, B has K = %lld", (long long)k,
                               (long long)kb);
    /* Output: broadcast batch, then M if A is a matrix, then N if B is. */
    int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = nba > nbb ? nba : nbb;
    if (y->rank != nb + (ra >= 2) + (rb >= 2) || (ra >= 2 && y->dims[nb] != m) ||
        (rb >= 2 && y->dims[y->rank - 1] != n))
        return tgc_kernel_fail(c,
                               "output Y has rank %d, not the %d-D [batch.., M = %lld, N = %lld] "
                               "that A and B give",
                               y->rank, nb + (ra >= 2) + (rb >= 2), (long long)m, (long long)n);

    /* Matrix strides of A and B along each output batch axis (0: broadcast). */
    int64_t sa[TGC_MAX_RANK], sb[TGC_MAX_RANK], batch = 1, b_count = 1;
    int64_t step_a = m * k, step_b = k * n;
    for (int i = nb - 1; i >= 0; i--) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1, dy = y->dims[i];
        if ((da != dy && da != 1) || (db != dy && db != 1))
            return tgc_kernel_fail(c,
                                   "batch axis %d: A has %lld, B has %lld, Y has %lld; they do not "
                                   "broadcast",
                                   i, (long long)da, (long long)db, (long long)dy);
        sa[i] = da == 1 ? 0 : step_a;
        sb[i] = db == 1 ? 0 : step_b;
        step_a *= da;
        step_b *= db;
        batch *= dy;
        b_count *= db;
    }
    if (batch == 0 || m == 0 || n == 0) return TGC_OK;

    const float *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    float *py = tgc_kernel_out_ptr(c, 0);
    if (k == 0) { /* an empty sum: zeros, and A and B have no memory to point into */
        memset(py, 0, tgc_value_nbytes(y));
        return TGC_OK;
    }
    bool ok = true;
    if (b_count == 1 && batch * m <= INT_MAX) { /* then A's batch is the output's */
        ok = tgc_cpu_sgemm(false, false, batch * m, n, k, 1.0f, pa, k, pb, n, 0.0f, py, n);
    } else {
        for (int64_t t = 0; ok && t < batch; t++) {
            int64_t oa = 0, ob = 0, rest = t;
            for (int i = nb - 1; i >= 0; i--) {
                int64_t idx = rest % y->dims[i];
                rest /= y->dims[i];
                oa += idx * sa[i];
                ob += idx * sb[i];
            }
            ok = tgc_cpu_sgemm(false, false, m, n, k, 1.0f, pa + oa, k, pb + ob, n, 0.0f, py + t * m * n, n);
        }
    }
    if (!ok) return tgc_kernel_fail(c, "MatMul sizes pass BLAS's int range");
    return TGC_OK;
}

/* ---- Gemm ----------------------------------------------------------------- */

tgc_status tgc_cpu_gemm_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 2 || c->n_outputs < 1)
        return tgc_kernel_fail(c, "Gemm takes 2 or 3 inputs and 1 output");
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    const tgc_value *y = &c->outputs[0];
    bool has_c = tgc_cpu_has_input(c, 2);
    tgc_status st = tgc_cpu_need_f32(c, a, "input A");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, b, "input B");
    if (st == TGC_OK && has_c) st = tgc_cpu_need_f32(c, &c->inputs[2], "input C");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (a->rank != 2 || b->rank != 2)
        return tgc_kernel_fail(c, "Gemm needs 2-D A and B (A rank %d, B rank %d)", a->rank, b->rank);
    bool ta = tgc_kernel_attr_int(c, "transA", 0) != 0, tb = tgc_kernel_attr_int(c, "transB", 0) != 0;
    float alpha = (float)tgc_kernel_attr_float(c, "alpha", 1.0);
    float beta = (float)tgc_kernel_attr_float(c, "beta", 1.0);
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (k != kb)
        return tgc_kernel_fail(c, "inner dimensions differ: A' has K = %lld, B' has K = %lld", (long long)k,
                               (long long)kb);
    if (y->rank != 2 || y->dims[0] != m || y->dims[1] != n)
        return tgc_kernel_fail(c, "output Y must be [M = %lld, N = %lld]", (long long)m, (long long)n);

    /* C's strides over [M, N]: 0 along an axis it broadcasts (absent or 1). */
    int64_t cm = 0, cn = 0;
    if (has_c) {
        const tgc_value *cv = &c->inputs[2];
        int64_t dm = cv->rank == 2 ? cv->dims[0] : 1, dn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if (cv->rank > 2 || (dm != 1 && dm != m) || (dn != 1 && dn != n))
            return tgc_kernel_fail(c, "input C (rank %d) does not broadcast to [%lld, %lld]", cv->rank,
                                   (long long)m, (long long)n);
        cn = dn == 1 ? 0 : 1;
        cm = dm == 1 ? 0 : dn;
    }
    if (m == 0 || n == 0) return TGC_OK;

    float *py = tgc_kernel_out_ptr(c, 0);
    if (has_c) {
        const float *pc = tgc_kernel_in_ptr(c, 2);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) py[i * n + j] = pc[i * cm + j * cn];
    }
    const float *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    if (!tgc_cpu_sgemm(ta, tb, m, n, k, alpha, pa, a->dims[1], pb, b->dims[1], has_c ? beta : 0.0f, py, n))
        return tgc_kernel_fail(c, "Gemm sizes pass BLAS's int range");
    return TGC_OK;
}
