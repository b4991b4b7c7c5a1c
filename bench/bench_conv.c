/* Conv throughput on the cpu: the tgc Conv kernel (devices/cpu/
 * kernels_conv.c) run as a session runs it (a pool of one worker per core,
 * OpenBLAS single-threaded), on a ResNet stage-2 sized input [1, 64, 56,
 * 56], float32:
 *   - 3x3, pad 1, 64 filters: the Winograd F(2x2, 3x3) path;
 *   - the GEMM an im2col convolution would run for it ([64, 576] x [576,
 *     3136], cblas_sgemm on a ready col matrix, OpenBLAS's own threads, one
 *     per core): the ceiling of im2col + GEMM, which Winograd passes;
 *   - 1x1, 64 filters: the pointwise path (GEMM on the input, no copy);
 *   - 3x3 depthwise (group 64), pad 1: the direct kernel (conv_direct.c;
 *     bench_conv_families has every depthwise layer of five networks);
 * and two ResNet shapes: the 7x7 stride-2 stem on [1, 3, 224, 224] (the
 * direct kernel: 3 input channels) and a 3x3 conv on [1, 512, 7, 7] (im2col,
 * one matrix, the GEMM split by output channels). GFLOP/s counts the direct
 * convolution's 2 * M * (C / group) * k * k * OH * OW per image whatever
 * the path; each figure is the median of several repetitions.
 *
 * Usage: bench_conv [repetitions]   (default 15) */
#include "devices/kernel.h"

#include "bench_util.h"

#include <cblas.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* A float32 buffer of shape dims[0..rank) on `dev`, values in [-1, 1). */
static tgc_value tensor(tgc_device *dev, int rank, const int64_t *dims, unsigned seed) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = rank};
    memcpy(v.dims, dims, (size_t)rank * sizeof *dims);
    if (tgc_buffer_alloc(dev, tgc_value_nbytes(&v), &v.buf) != TGC_OK) {
        fprintf(stderr, "bench_conv: out of memory\n");
        exit(1);
    }
    bench_fill_uniform(tgc_buffer_host_ptr(v.buf), tgc_value_numel(&v), seed);
    return v;
}

static tgc_thread_pool *pool; /* the kernel's workers, as a session's cpu device has */

/* Median seconds of `reps` runs of Conv with weights [m, c / group, k, k],
 * pads `pad` on every side and strides `stride`, on x; -1 if the kernel
 * fails. */
static double time_conv(tgc_device *dev, const tgc_kernel_def *def, const tgc_value *x, int64_t m, int64_t k,
                        int64_t pad, int64_t stride, int64_t group, int reps, double *times) {
    int64_t wd[4] = {m, x->dims[1] / group, k, k};
    int64_t oh = (x->dims[2] + 2 * pad - k) / stride + 1, ow = (x->dims[3] + 2 * pad - k) / stride + 1;
    int64_t yd[4] = {x->dims[0], m, oh, ow};
    tgc_value in[3] = {*x, tensor(dev, 4, wd, 5), tensor(dev, 1, &m, 6)}, out[1] = {tensor(dev, 4, yd, 7)};
    int64_t pads[4] = {pad, pad, pad, pad}, strides[2] = {stride, stride};
    tgc_attr attrs[3] = {{.name = (char *)"pads", .type = TGC_ATTR_INTS, .ints = pads, .n = 4},
                         {.name = (char *)"group", .type = TGC_ATTR_INT, .i = group},
                         {.name = (char *)"strides", .type = TGC_ATTR_INTS, .ints = strides, .n = 2}};
    tgc_node node = {.name = (char *)"conv", .kind = TGC_NODE_OP, .op_name = (char *)"Conv", .attrs = attrs,
                     .n_attrs = 3, .n_outputs = 1};
    char err[256] = "";
    tgc_kernel_ctx ctx = {.node = &node, .device = dev, .inputs = in, .n_inputs = 3, .outputs = out,
                          .n_outputs = 1, .error = err, .error_size = sizeof err, .pool = pool};
    double result = -1.0;
    if (def->fn(&ctx) == TGC_OK) { /* the first run warms up */
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now_s();
            def->fn(&ctx);
            times[r] = bench_now_s() - t0;
        }
        result = bench_median(times, reps);
    } else {
        fprintf(stderr, "bench_conv: %s\n", err);
    }
    tgc_buffer_release(in[1].buf);
    tgc_buffer_release(in[2].buf);
    tgc_buffer_release(out[0].buf);
    return result;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > 1000) reps = 15;
    tgc_device *dev = tgc_cpu_device_create(0);
    const tgc_kernel_def *def = tgc_kernel_find("Conv", TGC_DEVICE_CPU, TGC_FLOAT32);
    double *times = malloc((size_t)reps * sizeof *times);
    if (dev == NULL || def == NULL || times == NULL) {
        fprintf(stderr, "bench_conv: no cpu device or Conv kernel\n");
        return 1;
    }
    const int64_t c = 64, hw = 56, m = 64, p = hw * hw;
    int64_t xd[4] = {1, c, hw, hw};
    tgc_value x = tensor(dev, 4, xd, 1);

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores > 0 ? (int)cores : 1;
    if (tgc_thread_pool_create(threads, &pool) != TGC_OK) return 1;
    printf("Conv float32 on [1, %lld, %lld, %lld], median of %d (tgc: a pool of %d, OpenBLAS 1 thread; "
           "reference GEMM: OpenBLAS %d threads)\n",
           (long long)c, (long long)hw, (long long)hw, reps, threads, threads);
    printf("%-40s  %9s  %9s\n", "case", "ms", "GFLOP/s");

    openblas_set_num_threads(1); /* as a session sets it */
    double flops = 2.0 * (double)(m * c * 9 * p);
    double t = time_conv(dev, def, &x, m, 3, 1, 1, 1, reps, times);
    printf("%-40s  %9.3f  %9.1f\n", "3x3 pad 1, 64 -> 64 (Winograd F(2x2,3x3))", t * 1e3, flops / t * 1e-9);

    /* The GEMM of that path alone, on a col matrix already built. */
    float *w = malloc((size_t)(m * c * 9) * sizeof *w), *col = malloc((size_t)(c * 9 * p) * sizeof *col);
    float *y = malloc((size_t)(m * p) * sizeof *y);
    if (w == NULL || col == NULL || y == NULL) return 1;
    for (int64_t i = 0; i < m * c * 9; i++) w[i] = (float)(i % 7) * 0.1f;
    for (int64_t i = 0; i < c * 9 * p; i++) col[i] = (float)(i % 5) * 0.1f;
    int gm = (int)m, gn = (int)p, gk = (int)(c * 9);
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, gm, gn, gk, 1.0f, w, gk, col, gn, 0.0f, y, gn);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, gm, gn, gk, 1.0f, w, gk, col, gn, 0.0f, y, gn);
        times[r] = bench_now_s() - t0;
    }
    t = bench_median(times, reps);
    printf("%-40s  %9.3f  %9.1f\n", "  im2col's GEMM alone (cblas_sgemm)", t * 1e3, flops / t * 1e-9);
    free(w);
    free(col);
    free(y);
    openblas_set_num_threads(1);

    flops = 2.0 * (double)(m * c * p);
    t = time_conv(dev, def, &x, m, 1, 0, 1, 1, reps, times);
    printf("%-40s  %9.3f  %9.1f\n", "1x1, 64 -> 64 (pointwise GEMM)", t * 1e3, flops / t * 1e-9);

    flops = 2.0 * (double)(c * 9 * p);
    t = time_conv(dev, def, &x, c, 3, 1, 1, c, reps, times);
    printf("%-40s  %9.3f  %9.1f\n", "3x3 depthwise pad 1 (direct)", t * 1e3, flops / t * 1e-9);
    tgc_buffer_release(x.buf);

    int64_t stem_d[4] = {1, 3, 224, 224}, late_d[4] = {1, 512, 7, 7};
    x = tensor(dev, 4, stem_d, 2);
    flops = 2.0 * (double)(64 * 3 * 49 * 112 * 112);
    t = time_conv(dev, def, &x, 64, 7, 3, 2, 1, reps, times);
    printf("%-40s  %9.3f  %9.1f\n", "stem 7x7/2 on 3x224x224 (direct)", t * 1e3, flops / t * 1e-9);
    tgc_buffer_release(x.buf);
    x = tensor(dev, 4, late_d, 3);
    flops = 2.0 * (double)(512 * 512 * 9 * 49);
    t = time_conv(dev, def, &x, 512, 3, 1, 1, 1, reps, times);
    printf("%-40s  %9.3f  %9.1f\n", "3x3 on 512x7x7 (one im2col matrix)", t * 1e3, flops / t * 1e-9);
    tgc_buffer_release(x.buf);
    tgc_thread_pool_free(pool);
    free(times);
    tgc_device_destroy(dev);
    return 0;
}
