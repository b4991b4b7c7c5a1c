/* The cpu's float64 paths that ONNX's backend data here does not cover:
 * MatMul and Gemm through cblas_dgemm (kernels_gemm_f64.c), Softmax and
 * LogSoftmax in double (kernels_reduce.c) along a middle axis, Det in
 * double (kernels_linalg.c). Each expected tensor is pasted with the numpy
 * expression that made it; MatMul and Gemm use values whose products and
 * sums are exact, so their bytes must match. */
#include "tests/devices/kernel_fixture_shape.h"

#include <math.h>

/* Asserts output 0 holds the n doubles of `want` within 1e-12 relative. */
static void expect_close(shape_fx *f, int64_t n, const double *want) {
    const double *got = tgc_buffer_host_ptr(f->out[0].buf);
    for (int64_t i = 0; i < n; i++) {
        bool close = fabs(got[i] - want[i]) <= 1e-12 * fmax(1.0, fabs(want[i]));
        if (!close) fprintf(stderr, "\n  %s: element %lld is %.17g, want %.17g\n", f->op, (long long)i, got[i], want[i]);
        CU_ASSERT(close);
    }
}

/* Batched MatMul with a broadcast A: a [2, 1, 3] @ b [2, 3, 2],
 * a = [1, 2, -1, 0.5, 3, -2], b = [1, 0, 2, -1, 0.5, 4, 1, 1, -2, 0.25, 3, -1]
 * (row-major): (a @ b).ravel() = [4.5, -6, -11.5, 3.25]. */
static void test_matmul_f64_batched(void) {
    shape_fx f;
    fx_begin(&f, "MatMul");
    fx_in(&f, TGC_FLOAT64, 3, (int64_t[]){2, 1, 3}, (double[]){1, 2, -1, 0.5, 3, -2});
    fx_in(&f, TGC_FLOAT64, 3, (int64_t[]){2, 3, 2}, (double[]){1, 0, 2, -1, 0.5, 4, 1, 1, -2, 0.25, 3, -1});
    fx_out_expect(&f, TGC_FLOAT64, 3, (int64_t[]){2, 1, 2}, (double[]){4.5, -6.0, -11.5, 3.25});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* Gemm, transA, transB, alpha 0.5, beta -2, C [2] broadcast over rows:
 * 0.5 * A.T @ B.T - 2 * C with A [3, 2] = [1, 2, 3, -1, 0.5, 2],
 * B [2, 3] = [2, -1, 0.5, 1, 3, -2], C = [1, -2]. */
static void test_gemm_f64_trans_alpha_beta(void) {
    shape_fx f;
    fx_begin(&f, "Gemm");
    fx_in(&f, TGC_FLOAT64, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, -1, 0.5, 2});
    fx_in(&f, TGC_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){2, -1, 0.5, 1, 3, -2});
    fx_in(&f, TGC_FLOAT64, 1, (int64_t[]){2}, (double[]){1, -2});
    fx_attr_int(&f, "transA", 1);
    fx_attr_int(&f, "transB", 1);
    fx_attr(&f, (tgc_attr){.name = (char *)"alpha", .type = TGC_ATTR_FLOAT, .f = 0.5});
    fx_attr(&f, (tgc_attr){.name = (char *)"beta", .type = TGC_ATTR_FLOAT, .f = -2.0});
    fx_out_expect(&f, TGC_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){-2.375, 8.5, 1.0, 1.5});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* x [1, 3, 2] = [0.5, -1, 2, 3, 0, -0.25] along axis 1:
 * e = np.exp(x - x.max(1, keepdims=True)); e / e.sum(1, keepdims=True)
 * and (m = x - max) m - np.log(np.exp(m).sum(1, keepdims=True)). */
static void test_softmax_f64_middle_axis(void) {
    static const double x[] = {0.5, -1, 2, 3, 0, -0.25};
    static const double soft[] = {0.1642516276250878,  0.017326473190104993, 0.73612472431259379,
                                  0.94599338277860368, 0.099623648062318312, 0.036680144031291335};
    static const double logsoft[] = {-1.8063557122291467,  -4.0555197049033458, -0.30635571222914665,
                                     -0.055519704903345402, -2.3063557122291467, -3.3055197049033453};
    const char *ops[] = {"Softmax", "LogSoftmax"};
    const double *want[] = {soft, logsoft};
    for (int i = 0; i < 2; i++) {
        shape_fx f;
        fx_begin(&f, ops[i]);
        fx_in(&f, TGC_FLOAT64, 3, (int64_t[]){1, 3, 2}, x);
        fx_attr_int(&f, "axis", 1);
        fx_out(&f, TGC_FLOAT64, 3, (int64_t[]){1, 3, 2});
        fx_run_ok(&f);
        expect_close(&f, 6, want[i]);
        fx_end(&f);
    }
}

/* np.linalg.det([[2, -1, 0], [1, 3, 2], [0, 5, -4]]) = -47.999999999999986 (-48). */
static void test_det_f64(void) {
    shape_fx f;
    fx_begin(&f, "Det");
    fx_in(&f, TGC_FLOAT64, 2, (int64_t[]){3, 3}, (double[]){2, -1, 0, 1, 3, 2, 0, 5, -4});
    fx_out(&f, TGC_FLOAT64, 0, NULL);
    fx_run_ok(&f);
    expect_close(&f, 1, (double[]){-48.0});
    fx_end(&f);
}

TGC_TEST_MAIN("devices/cpu_float64", {"MatMul float64 batched", test_matmul_f64_batched},
              {"Gemm float64 trans alpha beta", test_gemm_f64_trans_alpha_beta},
              {"Softmax/LogSoftmax float64 middle axis", test_softmax_f64_middle_axis},
              {"Det float64", test_det_f64})
