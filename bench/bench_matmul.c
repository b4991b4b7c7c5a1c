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
 * Then GEMMs on packed weights (devices/cpu/gemm_packed.h: oneDNN's
 * matmul, B packed once) beside the OpenBLAS path tgc takes otherwise
 * (tgc_cpu_sgemm), on the products of the peer models (transformer and
 * GPT layers, the MLP, ResNet's late 1x1 and 3x3 layers as GEMMs), at 1 and
 * 2 threads of tgc's pool, the two interleaved run by run.
 *
 * Then matrix-vector products read from memory (a classifier's Gemm on
 * one image, its weights [N, K] as Gemm's transB keeps them): tgc's dot
 * form (devices/cpu/gemv.c) beside OpenBLAS's cblas_sgemv on the same
 * matrices, one thread each, interleaved. Each repetition runs over
 * enough copies of the matrix (96 MiB in all) that every copy comes from
 * memory, not the caches; GB/s counts the matrix's bytes. Then one row by
 * weights [K, N] as they lie (MatMul's B): the update form on B as it
 * lies and on B in column panels (tgc_cpu_gemv_panels, as a session packs
 * a constant B) beside cblas_sgemv, the same way.
 *
 * Usage: bench_matmul [repetitions]   (default 7) */
#include "devices/kernel.h"

#include "bench_util.h"

#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/kernels_nn.h"

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
    bench_fill_uniform(tgc_buffer_host_ptr(v.buf), n * n, seed);
    return v;
}

/* One row of the packed-weights table: median ms of each path at `threads`. */
static void packed_row(int64_t m, int64_t n, int64_t k, const char *what, int threads, int reps) {
    float *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(k * n) * sizeof *b);
    float *c = malloc((size_t)(m * n) * sizeof *c);
    double *tp = malloc((size_t)reps * sizeof *tp), *to = malloc((size_t)reps * sizeof *to);
    if (a == NULL || b == NULL || c == NULL || tp == NULL || to == NULL) exit(1);
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)((i * 7) % 13 - 6) / 13.0f;
    for (int64_t i = 0; i < k * n; i++) b[i] = (float)((i * 5) % 11 - 5) / 11.0f;
    tgc_thread_pool *pool = NULL;
    if (tgc_thread_pool_create(threads, &pool) != TGC_OK) exit(1);
    tgc_gemm_shape shape = {.m = m, .n = n, .k = k, .lda = k, .ldb = n, .ldc = n, .alpha = 1.0f};
    size_t bytes;
    tgc_packed_gemm *g = tgc_packed_gemm_create(&shape, b, &bytes);
    openblas_set_num_threads(1);
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now_s();
        if (g != NULL && !tgc_packed_gemm_run(g, pool, a, c, NULL)) exit(1);
        double t1 = bench_now_s();
        if (!tgc_cpu_sgemm(pool, false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n)) exit(1);
        double t2 = bench_now_s();
        if (r >= 0) tp[r] = t1 - t0, to[r] = t2 - t1;
    }
    double mp = bench_median(tp, reps), mo = bench_median(to, reps), flops = 2.0 * (double)(m * n * k);
    if (g != NULL)
        printf("%-24s %5lld %5lld %5lld %3d %9.3f %7.1f %9.3f %7.1f %6.2fx\n", what, (long long)m, (long long)n,
               (long long)k, threads, mp * 1e3, flops / mp * 1e-9, mo * 1e3, flops / mo * 1e-9, mo / mp);
    else
        printf("%-24s %5lld %5lld %5lld %3d %9s %7s %9.3f %7.1f\n", what, (long long)m, (long long)n, (long long)k,
               threads, "-", "-", mo * 1e3, flops / mo * 1e-9);
    tgc_packed_gemm_free(g);
    tgc_thread_pool_free(pool);
    free(a), free(b), free(c), free(tp), free(to);
}

static void bench_packed(int reps) {
    static const struct {
        int64_t m, n, k;
        const char *what;
    } shapes[] = {
        {1, 512, 784, "MLP batch 1"},          {64, 512, 784, "MLP batch 64"},
        {128, 768, 256, "transformer in_proj"}, {128, 1024, 256, "transformer linear1"},
        {128, 256, 1024, "transformer linear2"}, {128, 1536, 512, "GPT d512 in_proj"},
        {128, 2048, 512, "GPT d512 linear1"},   {128, 512, 2048, "GPT d512 linear2"},
        {49, 2048, 512, "ResNet-50 1x1, 7x7"},  {196, 256, 2304, "ResNet 3x3 as GEMM, 14x14"},
        {49, 672, 672, "RegNetX-800MF 1x1, 7x7"}, {196, 672, 288, "RegNetX-800MF 1x1, 14x14"},
    };
    printf("\nGEMMs on packed weights (oneDNN) beside OpenBLAS (tgc_cpu_sgemm), median of %d, interleaved%s\n", reps,
           tgc_packed_gemm_available() ? "" : " (no oneDNN in this build, or TGC_DNNL=0)");
    printf("%-24s %5s %5s %5s %3s %9s %7s %9s %7s %7s\n", "product", "M", "N", "K", "thr", "packed ms", "GFLOP/s",
           "BLAS ms", "GFLOP/s", "speedup");
    for (int threads = 1; threads <= 2; threads++)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
            packed_row(shapes[i].m, shapes[i].n, shapes[i].k, shapes[i].what, threads, reps);
}

/* One row of the matrix-vector table: tgc_cpu_gemv_dot and cblas_sgemv
 * over `copies` copies of an [n, k] matrix, each its own allocation as a
 * model's weights are, median ms a copy. (In this loop gemv.c's short-row
 * and four-row forms ran alike on Zen 4, 16-24 GB/s; in a model's run, its
 * other nodes between, the short-row form halved the classifiers' times:
 * gemv.c's note.) */
static void gemv_row(int64_t n, int64_t k, const char *what, int reps) {
    int64_t copies = ((int64_t)96 << 20) / (n * k * (int64_t)sizeof(float)) + 1;
    size_t mat_bytes = ((size_t)(n * k) * sizeof(float) + 63) / 64 * 64;
    float **mat = calloc((size_t)copies, sizeof *mat), *x = malloc((size_t)k * sizeof *x);
    float *y = malloc((size_t)n * sizeof *y);
    double *tt = malloc((size_t)reps * sizeof *tt), *tb = malloc((size_t)reps * sizeof *tb);
    if (mat == NULL || x == NULL || y == NULL || tt == NULL || tb == NULL) exit(1);
    for (int64_t c = 0; c < copies; c++) {
        if ((mat[c] = aligned_alloc(64, mat_bytes)) == NULL) exit(1);
        for (int64_t i = 0; i < n * k; i++) mat[c][i] = (float)((i * 5 + c) % 11 - 5) / 11.0f;
    }
    for (int64_t i = 0; i < k; i++) x[i] = (float)((i * 7) % 13 - 6) / 13.0f;
    openblas_set_num_threads(1);
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now_s();
        for (int64_t c = 0; c < copies; c++) tgc_cpu_gemv_dot(n, k, 1.0f, mat[c], k, x, 0.0f, y, 1);
        double t1 = bench_now_s();
        for (int64_t c = 0; c < copies; c++)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)k, 1.0f, mat[c], (int)k, x, 1, 0.0f, y, 1);
        double t2 = bench_now_s();
        if (r >= 0) tt[r] = (t1 - t0) / (double)copies, tb[r] = (t2 - t1) / (double)copies;
    }
    double mt = bench_median(tt, reps), mb = bench_median(tb, reps), bytes = (double)(n * k) * sizeof(float);
    printf("%-26s %5lld %5lld %9.3f %7.1f %9.3f %7.1f %6.2fx\n", what, (long long)n, (long long)k, mt * 1e3,
           bytes / mt * 1e-9, mb * 1e3, bytes / mb * 1e-9, mb / mt);
    for (int64_t c = 0; c < copies; c++) free(mat[c]);
    free(mat), free(x), free(y), free(tt), free(tb);
}

static void bench_gemv(int reps) {
    static const struct {
        int64_t n, k;
        const char *what;
    } shapes[] = {
        {1000, 512, "ResNet-18/34 classifier"}, {1024, 576, "MobileNetV3-S hidden"},
        {1000, 1024, "GoogLeNet classifier"},    {1000, 1280, "MobileNetV2 classifier"},
        {1000, 2048, "ResNet-50 classifier"},    {4096, 4096, "AlexNet fc7"},
        {4096, 9216, "AlexNet fc6"},
    };
    printf("\nMatrix-vector products from memory, [N, K] x [K]: tgc's dot form beside cblas_sgemv, 1 thread, "
           "median of %d, interleaved\n", reps);
    printf("%-26s %5s %5s %9s %7s %9s %7s %7s\n", "product", "N", "K", "tgc ms", "GB/s", "BLAS ms", "GB/s",
           "speedup");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        gemv_row(shapes[i].n, shapes[i].k, shapes[i].what, reps);
}

/* One row of the update-form table: [1, k] x [k, n] over copies of B, as
 * it lies (tgc_cpu_gemv_update), packed in column panels
 * (tgc_cpu_gemv_panels) and through cblas_sgemv, median ms a copy. */
static void update_row(int64_t n, int64_t k, const char *what, int reps) {
    int64_t copies = ((int64_t)96 << 20) / (n * k * (int64_t)sizeof(float)) + 1;
    float **mat = calloc((size_t)copies, sizeof *mat), **pan = calloc((size_t)copies, sizeof *pan);
    float *x = malloc((size_t)k * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *t[3];
    for (int v = 0; v < 3; v++) t[v] = malloc((size_t)reps * sizeof *t[v]);
    if (mat == NULL || pan == NULL || x == NULL || y == NULL || t[0] == NULL || t[1] == NULL || t[2] == NULL) exit(1);
    for (int64_t c = 0; c < copies; c++) {
        mat[c] = malloc((size_t)(n * k) * sizeof(float));
        pan[c] = malloc((size_t)tgc_cpu_gemv_panels_floats(n, k) * sizeof(float));
        if (mat[c] == NULL || pan[c] == NULL) exit(1);
        for (int64_t i = 0; i < n * k; i++) mat[c][i] = (float)((i * 5 + c) % 11 - 5) / 11.0f;
        tgc_cpu_gemv_panels_pack(n, k, mat[c], n, 1, pan[c]);
    }
    for (int64_t i = 0; i < k; i++) x[i] = (float)((i * 7) % 13 - 6) / 13.0f;
    openblas_set_num_threads(1);
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now_s();
        for (int64_t c = 0; c < copies; c++) tgc_cpu_gemv_update(n, k, 1.0f, mat[c], n, x, 0.0f, y);
        double t1 = bench_now_s();
        for (int64_t c = 0; c < copies; c++) tgc_cpu_gemv_panels(n, k, 1.0f, pan[c], x, 0.0f, y);
        double t2 = bench_now_s();
        for (int64_t c = 0; c < copies; c++)
            cblas_sgemv(CblasRowMajor, CblasTrans, (int)k, (int)n, 1.0f, mat[c], (int)n, x, 1, 0.0f, y, 1);
        double t3 = bench_now_s();
        if (r >= 0) {
            t[0][r] = (t1 - t0) / (double)copies;
            t[1][r] = (t2 - t1) / (double)copies;
            t[2][r] = (t3 - t2) / (double)copies;
        }
    }
    double bytes = (double)(n * k) * sizeof(float), m[3];
    for (int v = 0; v < 3; v++) m[v] = bench_median(t[v], reps);
    printf("%-26s %5lld %5lld %9.3f %7.1f %9.3f %7.1f %9.3f %7.1f %6.2fx\n", what, (long long)n, (long long)k,
           m[0] * 1e3, bytes / m[0] * 1e-9, m[1] * 1e3, bytes / m[1] * 1e-9, m[2] * 1e3, bytes / m[2] * 1e-9,
           m[2] / m[1]);
    for (int64_t c = 0; c < copies; c++) free(mat[c]), free(pan[c]);
    for (int v = 0; v < 3; v++) free(t[v]);
    free(mat), free(pan), free(x), free(y);
}

static void bench_update(int reps) {
    static const struct {
        int64_t n, k;
        const char *what;
    } shapes[] = {
        {1000, 1280, "a classifier, B [K, N]"}, {1024, 1024, "a 1024-wide layer"},
        {4096, 1024, "an MLP's widening"},      {1024, 4096, "an MLP's narrowing"},
    };
    printf("\nOne row by weights [K, N] as they lie, from memory: tgc's update form on B as it lies and on B in "
           "column panels beside cblas_sgemv, 1 thread, median of %d, interleaved\n", reps);
    printf("%-26s %5s %5s %9s %7s %9s %7s %9s %7s %7s\n", "product", "N", "K", "as is ms", "GB/s", "panels ms",
           "GB/s", "BLAS ms", "GB/s", "speedup");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        update_row(shapes[i].n, shapes[i].k, shapes[i].what, reps);
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
    bench_packed(reps);
    bench_gemv(reps);
    bench_update(reps);
    return 0;
}
