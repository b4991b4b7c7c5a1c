/* MatMul throughput on the cpu: the tgc MatMul kernel (devices/cpu/
 * kernels_gemm.c) on square float32 matrices of 256, 512, 1024 and 2048,
 * run as a session runs it (a pool of one worker per core splitting the
 * product, OpenBLAS on one thread per call), beside cblas_sgemm called
 * directly on the same buffers in the same run with OpenBLAS's own
 * threads (one per core), so the ratio is what tgc's splitting costs or
 * gains over OpenBLAS's threading. Each figure is the median of several
 * repetitions (2 n^3 flops each); per size the tgc runs come first, then
 * the reference (switching OpenBLAS's threads between single calls would
 * leave its idle threads spinning into tgc's runs).
 *
 * Usage: bench_matmul [repetitions]   (default 7) */
#include "devices/kernel.h"

#include "bench_util.h"

#include <cblas.h>
#include <stdio.h>
#include <unistd.h>
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

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    tgc_thread_pool *pool = NULL;
    if (tgc_thread_pool_create(cores > 0 ? (int)cores : 1, &pool) != TGC_OK) return 1;
    printf("MatMul float32, square n x n, median of %d (tgc: a pool of %d; sgemm: OpenBLAS threads %d)\n", reps,
           tgc_thread_pool_size(pool), cores > 0 ? (int)cores : 1);
    printf("%6s  %13s  %13s  %7s\n", "n", "tgc GFLOP/s", "sgemm GFLOP/s", "ratio");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        tgc_value in[2] = {square(dev, n, 1), square(dev, n, 2)}, out[1] = {square(dev, n, 3)};
        tgc_node node = {.name = (char *)"matmul", .kind = TGC_NODE_OP, .op_name = (char *)"MatMul",
                         .n_outputs = 1};
        char err[256] = "";
        tgc_kernel_ctx ctx = {.node = &node, .device = dev, .inputs = in, .n_inputs = 2, .outputs = out,
                              .n_outputs = 1, .error = err, .error_size = sizeof err, .pool = pool};
        const float *a = tgc_buffer_host_ptr(in[0].buf), *b = tgc_buffer_host_ptr(in[1].buf);
        float *y = tgc_buffer_host_ptr(out[0].buf);
        int ni = (int)n;
        openblas_set_num_threads(1); /* as a session sets it */
        for (int r = -1; r < reps; r++) { /* r = -1 warms up (pool threads, page faults) */
            double t0 = bench_now_s();
            if (def->fn(&ctx) != TGC_OK) {
                fprintf(stderr, "bench_matmul: %s\n", err);
                return 1;
            }
            if (r >= 0) t_tgc[r] = bench_now_s() - t0;
        }
        openblas_set_num_threads(cores > 0 ? (int)cores : 1);
        for (int r = -1; r < reps; r++) {
            double t0 = bench_now_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, y, ni);
            if (r >= 0) t_blas[r] = bench_now_s() - t0;
        }
        double flops = 2.0 * (double)n * (double)n * (double)n;
        double g_tgc = flops / bench_median(t_tgc, reps) * 1e-9, g_blas = flops / bench_median(t_blas, reps) * 1e-9;
        printf("%6lld  %13.1f  %13.1f  %7.3f\n", (long long)n, g_tgc, g_blas, g_tgc / g_blas);
        for (int i = 0; i < 2; i++) tgc_buffer_release(in[i].buf);
        tgc_buffer_release(out[0].buf);
    }
    free(t_tgc);
    free(t_blas);
    tgc_thread_pool_free(pool);
    tgc_device_destroy(dev);
    return 0;
}
