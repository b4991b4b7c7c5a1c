/* MatMul throughput on the cpu: the tgc MatMul kernel (devices/cpu/
 * kernels_gemm.c) on square float32 matrices of 256, 512, 1024 and 2048,
 * beside cblas_sgemm called directly on the same buffers in the same run,
 * so the ratio is the kernel's overhead over OpenBLAS. Each figure is the
 * median of several repetitions (2 n^3 flops each), the two interleaved.
 *
 * Usage: bench_matmul [repetitions]   (default 7) */
#include "devices/kernel.h"

#include "bench_util.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A float32 [n, n] buffer on `dev` filled with values in [-1, 1). */
static tgc_value square(tgc_device *dev, int64_t n, unsigned seed) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = 2, .dims = {n, n}};
    if (tgc_buffer_alloc(dev, tgc_value_nbytes(&v), &v.buf) != TGC_OK) {
        fprintf(stderr, "bench_matmul: out of memory\n");
        exit(1);
    }
    float *p = tgc_buffer_host_ptr(v.buf);
    for (int64_t i = 0; i < n * n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
    return v;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > 1000) reps = 7;
    tgc_device *dev = tgc_cpu_device_create(0);
    const tgc_kernel_def *def = tgc_kernel_find("MatMul", TGC_DEVICE_CPU, TGC_FLOAT32);
    if (dev == NULL || def == NULL) {
        fprintf(stderr, "bench_matmul: no cpu device or MatMul kernel\n");
        return 1;
    }
    static const int64_t sizes[] = {256, 512, 1024, 2048};
    double *t_tgc = malloc((size_t)reps * sizeof *t_tgc), *t_blas = malloc((size_t)reps * sizeof *t_blas);
    if (t_tgc == NULL || t_blas == NULL) return 1;

    printf("MatMul float32, square n x n, median of %d (OpenBLAS threads: %d)\n", reps,
           openblas_get_num_threads());
    printf("%6s  %13s  %13s  %7s\n", "n", "tgc GFLOP/s", "sgemm GFLOP/s", "ratio");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        tgc_value in[2] = {square(dev, n, 1), square(dev, n, 2)}, out[1] = {square(dev, n, 3)};
        tgc_node node = {.name = (char *)"matmul", .kind = TGC_NODE_OP, .op_name = (char *)"MatMul",
                         .n_outputs = 1};
        char err[256] = "";
        tgc_kernel_ctx ctx = {.node = &node, .device = dev, .inputs = in, .n_inputs = 2, .outputs = out,
                              .n_outputs = 1, .error = err, .error_size = sizeof err};
        const float *a = tgc_buffer_host_ptr(in[0].buf), *b = tgc_buffer_host_ptr(in[1].buf);
        float *y = tgc_buffer_host_ptr(out[0].buf);
        /* Warm up both (thread pool start, page faults). */
        if (def->fn(&ctx) != TGC_OK) {
            fprintf(stderr, "bench_matmul: %s\n", err);
            return 1;
        }
        int ni = (int)n;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, y, ni);
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now_s();
            def->fn(&ctx);
            double t1 = bench_now_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, y,
                        ni);
            double t2 = bench_now_s();
            t_tgc[r] = t1 - t0;
            t_blas[r] = t2 - t1;
        }
        double flops = 2.0 * (double)n * (double)n * (double)n;
        double g_tgc = flops / bench_median(t_tgc, reps) * 1e-9, g_blas = flops / bench_median(t_blas, reps) * 1e-9;
        printf("%6lld  %13.1f  %13.1f  %7.3f\n", (long long)n, g_tgc, g_blas, g_tgc / g_blas);
        for (int i = 0; i < 2; i++) tgc_buffer_release(in[i].buf);
        tgc_buffer_release(out[0].buf);
    }
    free(t_tgc);
    free(t_blas);
    tgc_device_destroy(dev);
    return 0;
}
