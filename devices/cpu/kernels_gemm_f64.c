/* MatMul-13 and Gemm-13 on the cpu in float64, through OpenBLAS's
 * cblas_dgemm: the double path beside kernels_gemm.c's float32 one, with
 * the same geometry (devices/matmul_geometry.h) and semantics, kept plain
 * (one cblas_dgemm per output matrix, no splitting across the pool).
 *
 * MatMul: numpy.matmul (1-D operands, broadcast batch axes).
 * Gemm: Y = alpha * A' B' + beta * C, C broadcast to [M, N] and copied
 * into Y first so that cblas_dgemm's beta adds it. (The executor fuses
 * activations into float32 outputs only.) */
#include "devices/cpu/kernels_nn.h"
#include "devices/matmul_geometry.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

/* One row-major dgemm, Y = alpha * op(A) op(B) + beta * Y; false when a
 * size or leading dimension passes BLAS's int range. */
static bool dgemm_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                      const double *b, int64_t ldb, double beta, double *y, int64_t ldy) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldy > INT_MAX) return false;
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                alpha, a, (int)(lda > 0 ? lda : 1), b, (int)(ldb > 0 ? ldb : 1), beta, y, (int)(ldy > 0 ? ldy : 1));
    return true;
}

tgc_status tgc_cpu_matmul_f64(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_status st = tgc_matmul_geometry_read_dtype(c, TGC_FLOAT64, &g);
    if (st != TGC_OK) return st;
    if (g.batch == 0 || g.m == 0 || g.n == 0) return TGC_OK;
    const double *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    double *py = tgc_kernel_out_ptr(c, 0);
    if (g.k == 0) { /* an empty sum: zeros */
        memset(py, 0, tgc_value_nbytes(&c->outputs[0]));
        return TGC_OK;
    }
    for (int64_t t = 0; t < g.batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
        if (!dgemm_one(false, false, g.m, g.n, g.k, 1.0, pa + oa, g.k, pb + ob, g.n, 0.0, py + oy, g.n))
            return tgc_kernel_fail(c, "MatMul sizes pass BLAS's int range");
    }
    return TGC_OK;
}

tgc_status tgc_cpu_gemm_f64(tgc_kernel_ctx *c) {
    tgc_gemm_geometry g;
    tgc_status st = tgc_gemm_geometry_read_dtype(c, TGC_FLOAT64, &g);
    if (st != TGC_OK) return st;
    int64_t m = g.m, n = g.n;
    if (m == 0 || n == 0) return TGC_OK;
    double *py = tgc_kernel_out_ptr(c, 0);
    const double *pa = tgc_kernel_in_ptr(c, 0), *pb = tgc_kernel_in_ptr(c, 1);
    double beta = 0.0;
    if (g.has_c && g.beta != 0.0f) {
        const double *pc = tgc_kernel_in_ptr(c, 2);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) py[i * n + j] = pc[i * g.cm + j * g.cn];
        beta = g.beta;
    }
    if (g.k == 0) { /* an empty product: beta * C (or 0) */
        for (int64_t i = 0; i < m * n; i++) py[i] = beta != 0.0 ? beta * py[i] : 0.0;
    } else if (!dgemm_one(g.ta, g.tb, m, n, g.k, g.alpha, pa, c->inputs[0].dims[1], pb, c->inputs[1].dims[1], beta, py,
                          n)) {
        return tgc_kernel_fail(c, "Gemm sizes pass BLAS's int range");
    }
    return TGC_OK;
}
