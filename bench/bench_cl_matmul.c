/* MatMul throughput on the gpu (OpenCL): the tgc MatMul kernel
 * (devices/opencl/kernels_gemm_cl.c) on square float32 matrices of 256,
 * 512, 1024 and 2048 (2048 only while a 1024 repetition stays under a
 * second), beside CLBlastSgemm called directly on the same buffers and the
 * same queue in the same run, so the ratio is the kernel's overhead over
 * CLBlast. Each figure is the median of several repetitions (2 n^3 flops
 * each, timed to clFinish), the two interleaved in alternating order.
 *
 * First, the device's start: tgc_cl_device_create with an empty cache
 * (XDG_CACHE_HOME set to a new temporary directory, which empties PoCL's
 * kernel cache too) against a second create with the cache filled; then
 * the first MatMul, in which CLBlast compiles its GEMM program (CLBlast
 * keeps compiled programs in memory only). The directory is removed at the
 * end.
 *
 * Usage: bench_cl_matmul [repetitions]   (default 7) */
#include "devices/opencl/opencl.h"

#include "bench_util.h"

#include <clblast_c.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A float32 [n, n] buffer on the gpu filled with values in [-1, 1). */
static tgc_value square(tgc_device *dev, int64_t n, unsigned seed) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = 2, .dims = {n, n}};
    size_t nbytes = tgc_value_nbytes(&v);
    float *p = malloc(nbytes);
    if (p == NULL || tgc_buffer_alloc(dev, nbytes, &v.buf) != TGC_OK) {
        fprintf(stderr, "bench_cl_matmul: out of memory\n");
        exit(1);
    }
    bench_fill_uniform(p, n * n, seed);
    if (dev->ops->copy_from_host(dev, v.buf->mem, 0, p, nbytes) != TGC_OK) {
        fprintf(stderr, "bench_cl_matmul: upload failed\n");
        exit(1);
    }
    free(p);
    return v;
}

/* Creates gpu0, timing it; exits when there is none. */
static tgc_device *create_timed(double *seconds) {
    tgc_diags *diags = tgc_diags_create();
    tgc_device *dev = NULL;
    double t0 = bench_now_s();
    tgc_status st = tgc_cl_device_create(0, diags, &dev);
    *seconds = bench_now_s() - t0;
    if (st != TGC_OK) {
        fprintf(stderr, "bench_cl_matmul: no OpenCL device:\n");
        tgc_diags_print(diags, stderr);
        tgc_diags_free(diags);
        exit(1);
    }
    tgc_diags_free(diags);
    return dev;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > 1000) reps = 7;

    /* Device start: empty cache, then filled. Before any OpenCL call, so PoCL sees it too. */
    char cache[] = "/tmp/tgc-bench-cache-XXXXXX";
    if (mkdtemp(cache) == NULL || setenv("XDG_CACHE_HOME", cache, 1) != 0) {
        fprintf(stderr, "bench_cl_matmul: cannot make a temporary cache directory\n");
        return 1;
    }
    double t_first, t_cached;
    tgc_device *dev = create_timed(&t_first);
    tgc_cl_counters first = tgc_cl_device_counters(dev);
    tgc_device_destroy(dev);
    dev = create_timed(&t_cached);
    tgc_cl_counters cached = tgc_cl_device_counters(dev);
    tgc_cl_device *cl = (tgc_cl_device *)dev;
    printf("device: %s (%s, %s)\n", cl->device_name, cl->platform_name, cl->driver_version);
    printf("device start, empty cache:  %8.3f s (%lld programs built, %lld from cache)\n", t_first,
           (long long)first.program_builds, (long long)first.cache_loads);
    printf("device start, cache filled: %8.3f s (%lld programs built, %lld from cache)\n", t_cached,
           (long long)cached.program_builds, (long long)cached.cache_loads);

    const tgc_kernel_def *def = tgc_kernel_find("MatMul", TGC_DEVICE_GPU, TGC_FLOAT32);
    if (def == NULL) {
        fprintf(stderr, "bench_cl_matmul: no gpu MatMul kernel\n");
        return 1;
    }
    cl_command_queue queue = tgc_cl_queue(dev);
    static const int64_t sizes[] = {256, 512, 1024, 2048};
    double *t_tgc = malloc((size_t)reps * sizeof *t_tgc), *t_blast = malloc((size_t)reps * sizeof *t_blast);
    if (t_tgc == NULL || t_blast == NULL) return 1;
    double last_rep = 0.0;
    bool first_call = true;

    printf("MatMul float32, square n x n, median of %d, each timed to clFinish\n", reps);
    printf("%6s  %13s  %16s  %7s\n", "n", "tgc GFLOP/s", "CLBlast GFLOP/s", "ratio");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        if (n == 2048 && last_rep > 1.0) {
            printf("%6lld  skipped: a 1024 repetition took %.2f s\n", (long long)n, last_rep);
            break;
        }
        tgc_value in[2] = {square(dev, n, 1), square(dev, n, 2)}, out[1] = {square(dev, n, 3)};
        tgc_node node = {.name = (char *)"matmul", .kind = TGC_NODE_OP, .op_name = (char *)"MatMul", .n_outputs = 1};
        char err[256] = "";
        tgc_kernel_ctx ctx = {.node = &node, .device = dev, .inputs = in, .n_inputs = 2, .outputs = out,
                              .n_outputs = 1, .error = err, .error_size = sizeof err};
        cl_mem a = in[0].buf->mem, b = in[1].buf->mem, y = out[0].buf->mem;
        size_t ni = (size_t)n;
        /* Warm up both (CLBlast compiles its kernels on first use). */
        double t0 = bench_now_s();
        if (def->fn(&ctx) != TGC_OK || clFinish(queue) != CL_SUCCESS) {
            fprintf(stderr, "bench_cl_matmul: %s\n", err);
            return 1;
        }
        if (first_call) {
            printf("first MatMul (%lld), CLBlast compiling: %.3f s\n", (long long)n, bench_now_s() - t0);
            first_call = false;
        }
        CLBlastStatusCode bs = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, ni, ni,
                                            ni, 1.0f, a, 0, ni, b, 0, ni, 0.0f, y, 0, ni, &queue, NULL);
        if (bs != CLBlastSuccess || clFinish(queue) != CL_SUCCESS) {
            fprintf(stderr, "bench_cl_matmul: CLBlastSgemm: status %d\n", (int)bs);
            return 1;
        }
        /* Interleaved, the order alternating: whichever runs second finds
         * the caches warmer (on PoCL that is worth several percent). */
        for (int r = 0; r < reps; r++) {
            for (int turn = 0; turn < 2; turn++) {
                double t0r = bench_now_s();
                if ((turn + r) % 2 == 0) {
                    def->fn(&ctx);
                    clFinish(queue);
                    t_tgc[r] = bench_now_s() - t0r;
                } else {
                    CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, ni, ni, ni, 1.0f, a,
                                 0, ni, b, 0, ni, 0.0f, y, 0, ni, &queue, NULL);
                    clFinish(queue);
                    t_blast[r] = bench_now_s() - t0r;
                }
            }
        }
        double flops = 2.0 * (double)n * (double)n * (double)n;
        double m_tgc = bench_median(t_tgc, reps), m_blast = bench_median(t_blast, reps);
        last_rep = m_tgc;
        printf("%6lld  %13.1f  %16.1f  %7.3f\n", (long long)n, flops / m_tgc * 1e-9, flops / m_blast * 1e-9,
               m_blast / m_tgc);
        fflush(stdout);
        for (int i = 0; i < 2; i++) tgc_buffer_release(in[i].buf);
        tgc_buffer_release(out[0].buf);
    }
    free(t_tgc);
    free(t_blast);
    CLBlastClearCache(); /* its programs hold the device's context */
    tgc_device_destroy(dev);
    nftw(cache, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
