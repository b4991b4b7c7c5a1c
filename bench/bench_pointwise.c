/* Pointwise layers channels last: tgc's own tiles (_ConvNHWC as a session
 * runs it, devices/cpu/conv_pointwise.c: W packed once in the kernel
 * cache, pieces over tgc's pool) beside oneDNN's NHWC convolution as one
 * call over the whole layer (its `brgconv_1x1`, weights reordered once, not
 * timed; OpenMP threads), on the 1x1 layers of MNASNet, RegNetX-800MF,
 * SqueezeNet 1.1 and ResNeXt-50 at batch 1, float32, random values. Per
 * layer and thread count: median ms of `reps` interleaved runs, GFLOP/s
 * (2 per multiply-add) and tiles / oneDNN. Both outputs are checked
 * against each other (max |diff| printed past 1e-4 of the largest).
 *
 * With --cold MB, MB megabytes are written before each timed run (not
 * timed): the layer's tensors and weights then come from memory, as in a
 * model whose other layers passed through the caches since.
 *
 * Usage: bench_pointwise [--reps N] [--threads 1,2] [--cold MB]
 *        (defaults: 31, 1,2, 0). Without oneDNN (no libdnnl-dev at build
 *        time) the tiles alone. */
#include "devices/device.h"
#include "devices/kernel.h"
#include "devices/kernel_cache.h"
#include "support/thread_pool.h"

#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TGC_BENCH_DNNL
#include "bench_dnnl.h"
#endif

typedef struct layer {
    const char *model;
    int64_t hw, c, m; /* X [1, hw, hw, c] -> Y [1, hw, hw, m] */
} layer;

static const layer layers[] = {
    {"mnasnet1_0", 28, 48, 128},    {"mnasnet1_0", 28, 128, 48},     {"mnasnet1_0", 14, 80, 480},
    {"mnasnet1_0", 14, 480, 80},    {"mnasnet1_0", 14, 96, 576},     {"mnasnet1_0", 14, 576, 96},
    {"mnasnet1_0", 7, 192, 1152},   {"mnasnet1_0", 7, 1152, 192},    {"mnasnet1_0", 7, 1152, 320},
    {"mnasnet1_0", 7, 320, 1280},   {"regnet_x_800mf", 28, 128, 288}, {"regnet_x_800mf", 14, 288, 288},
    {"regnet_x_800mf", 7, 672, 672}, {"squeezenet1_1", 13, 512, 1000}, {"resnext50_32x4d", 7, 1024, 2048},
    {"resnext50_32x4d", 7, 2048, 1024},
};
enum { N_LAYERS = sizeof layers / sizeof layers[0] };

static float *filled(int64_t n, unsigned seed) {
    float *p = malloc((size_t)n * sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "bench_pointwise: out of memory\n");
        exit(1);
    }
    bench_fill_uniform(p, n, seed);
    return p;
}

/* The _ConvNHWC kernel on one layer with a kernel cache, as a session. */
typedef struct tiles_case {
    tgc_value in[3], out[1];
    tgc_node node;
    char err[256];
    tgc_kernel_ctx ctx;
    tgc_kernel_cache cache;
    const tgc_kernel_def *def;
} tiles_case;

static tgc_value on_device(tgc_device *dev, int rank, const int64_t *dims, const float *data) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = rank};
    memcpy(v.dims, dims, (size_t)rank * sizeof *dims);
    if (tgc_buffer_alloc(dev, tgc_value_nbytes(&v), &v.buf) != TGC_OK) {
        fprintf(stderr, "bench_pointwise: out of memory\n");
        exit(1);
    }
    if (data != NULL) memcpy(tgc_buffer_host_ptr(v.buf), data, tgc_value_nbytes(&v));
    return v;
}

static void tiles_init(tiles_case *t, tgc_device *dev, const layer *l, const float *x, const float *w,
                       const float *b, tgc_thread_pool *pool) {
    memset(t, 0, sizeof *t);
    t->in[0] = on_device(dev, 4, (int64_t[]){1, l->hw, l->hw, l->c}, x);
    t->in[1] = on_device(dev, 4, (int64_t[]){l->m, l->c, 1, 1}, w);
    t->in[2] = on_device(dev, 1, (int64_t[]){l->m}, b);
    t->out[0] = on_device(dev, 4, (int64_t[]){1, l->hw, l->hw, l->m}, NULL);
    t->node = (tgc_node){.name = (char *)"pointwise", .kind = TGC_NODE_OP, .op_name = (char *)"_ConvNHWC",
                         .n_outputs = 1};
    t->ctx = (tgc_kernel_ctx){.node = &t->node, .device = dev, .inputs = t->in, .n_inputs = 3, .outputs = t->out,
                              .n_outputs = 1, .error = t->err, .error_size = sizeof t->err, .pool = pool,
                              .cache = &t->cache, .const_inputs = 1u << 1 | 1u << 2};
    tgc_kernel_cache_init(&t->cache);
    t->def = tgc_kernel_find("_ConvNHWC", TGC_DEVICE_CPU, TGC_FLOAT32);
    if (t->def == NULL) {
        fprintf(stderr, "bench_pointwise: no cpu _ConvNHWC kernel\n");
        exit(1);
    }
}

static void tiles_run(tiles_case *t) {
    if (t->def->fn(&t->ctx) != TGC_OK) {
        fprintf(stderr, "bench_pointwise: %s\n", t->err);
        exit(1);
    }
}

static void tiles_free(tiles_case *t) {
    tgc_kernel_cache_clear(&t->cache);
    for (int i = 0; i < 3; i++) tgc_buffer_release(t->in[i].buf);
    tgc_buffer_release(t->out[0].buf);
}

#ifdef TGC_BENCH_DNNL
/* oneDNN's NHWC 1x1 convolution over the whole layer. */
typedef struct dnnl_case {
    dnnl_primitive_t conv;
    dnnl_memory_t src, wei, bias, dst;
    const char *impl;
    void *wei_buf;
} dnnl_case;

static void dnnl_init(dnnl_case *d, const layer *l, float *x, const float *w, float *b, float *y) {
    dnnl_dims_t sd = {1, l->c, l->hw, l->hw}, dd = {1, l->m, l->hw, l->hw}, wd = {l->m, l->c, 1, 1}, bd = {l->m};
    dnnl_dims_t st = {1, 1}, dil = {0, 0}, pad = {0, 0};
    dnnl_memory_desc_t smd, dmd, wmd, wany, bmd;
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_nhwc));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, dnnl_nhwc));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32, dnnl_oihw));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wany, 4, wd, dnnl_f32, dnnl_format_tag_any));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x));
    dnnl_convolution_desc_t cd;
    BENCH_DNNL_CHECK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &smd,
                                                          &wany, &bmd, &dmd, st, dil, pad, pad));
    dnnl_primitive_desc_t pd;
    BENCH_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, bench_dnnl_eng, NULL));
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    d->impl = strdup(impl != NULL ? impl : "?");
    const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    d->wei = bench_dnnl_reordered(&wmd, (void *)w, wq, &d->wei_buf);
    BENCH_DNNL_CHECK(dnnl_memory_create(&d->src, &smd, bench_dnnl_eng, x));
    BENCH_DNNL_CHECK(dnnl_memory_create(&d->bias, &bmd, bench_dnnl_eng, b));
    BENCH_DNNL_CHECK(dnnl_memory_create(&d->dst, &dmd, bench_dnnl_eng, y));
    BENCH_DNNL_CHECK(dnnl_primitive_create(&d->conv, pd));
    dnnl_primitive_desc_destroy(pd);
}

static void dnnl_run(dnnl_case *d) { bench_dnnl_conv_run(d->conv, d->src, d->wei, d->bias, d->dst); }

static void dnnl_free(dnnl_case *d) {
    dnnl_primitive_destroy(d->conv);
    dnnl_memory_destroy(d->src);
    dnnl_memory_destroy(d->wei);
    dnnl_memory_destroy(d->bias);
    dnnl_memory_destroy(d->dst);
    free(d->wei_buf);
    free((void *)d->impl);
}
#endif

int main(int argc, char **argv) {
    int reps = 31, cold_mb = 0;
    const char *thread_list = "1,2";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0) thread_list = argv[i + 1];
        else if (strcmp(argv[i], "--cold") == 0) cold_mb = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_pointwise [--reps N] [--threads 1,2] [--cold MB]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000) reps = 31;
#ifdef TGC_BENCH_DNNL
    bench_dnnl_start(argv);
#endif
    size_t cold_bytes = cold_mb > 0 && cold_mb <= 4096 ? (size_t)cold_mb << 20 : 0;
    unsigned char *cold = cold_bytes > 0 ? malloc(cold_bytes) : NULL;
    double *times = malloc((size_t)reps * 2 * sizeof *times);
    tgc_device *dev = tgc_cpu_device_create(0);
    if (times == NULL || dev == NULL || (cold_bytes > 0 && cold == NULL)) return 1;
    printf("1x1 Conv channels last, float32, batch 1, median ms of %d interleaved runs%s; tiles: tgc's own "
           "(_ConvNHWC), onednn: oneDNN's NHWC convolution, one call\n",
           reps, cold != NULL ? ", caches flushed before each" : "");
    for (const char *t = thread_list; *t != '\0';) {
        int threads = atoi(t);
        tgc_thread_pool *pool = NULL;
        if (threads > 1 && tgc_thread_pool_create(threads - 1, &pool) != TGC_OK) return 1;
#ifdef TGC_BENCH_DNNL
        omp_set_num_threads(threads);
#endif
        printf("\n== %d thread%s ==\n%-16s %4s %5s %5s %9s %7s %9s %7s %7s  %s\n", threads, threads > 1 ? "s" : "",
               "model", "HW", "C", "M", "tiles", "GF/s", "onednn", "GF/s", "ratio", "oneDNN impl");
        for (int li = 0; li < N_LAYERS; li++) {
            const layer *l = &layers[li];
            int64_t rows = l->hw * l->hw;
            float *x = filled(rows * l->c, 1), *w = filled(l->m * l->c, 2), *b = filled(l->m, 3);
            float *y = filled(rows * l->m, 4);
            tiles_case tc;
            tiles_init(&tc, dev, l, x, w, b, pool);
            tiles_run(&tc);
            int variants = 1;
            double med[2] = {0, 0}, diff = 0, top = 1e-30;
            const char *impl = "-";
#ifdef TGC_BENCH_DNNL
            dnnl_case dc;
            dnnl_init(&dc, l, x, w, b, y);
            dnnl_run(&dc);
            const float *mine = tgc_buffer_host_ptr(tc.out[0].buf);
            for (int64_t i = 0; i < rows * l->m; i++) {
                diff = fmax(diff, fabs((double)mine[i] - y[i]));
                top = fmax(top, fabs((double)y[i]));
            }
            impl = dc.impl;
            variants = 2;
#endif
            for (int r = 0; r < reps; r++)
                for (int v = 0; v < variants; v++) {
                    if (cold != NULL) memset(cold, r + v, cold_bytes);
                    double t0 = bench_now_s();
                    if (v == 0) tiles_run(&tc);
#ifdef TGC_BENCH_DNNL
                    else dnnl_run(&dc);
#endif
                    times[v * reps + r] = bench_now_s() - t0;
                }
            for (int v = 0; v < variants; v++) med[v] = bench_median(times + v * reps, reps) * 1e3;
            double gflop = 2.0 * (double)rows * (double)l->c * (double)l->m * 1e-9;
            printf("%-16s %4lld %5lld %5lld %9.3f %7.1f", l->model, (long long)l->hw, (long long)l->c,
                   (long long)l->m, med[0], gflop / med[0] * 1e3);
            if (variants == 2)
                printf(" %9.3f %7.1f %7.3f  %s", med[1], gflop / med[1] * 1e3, med[0] / med[1], impl);
            if (diff > 1e-4 * top) printf("  [outputs differ: %.2g]", diff / top);
            printf("\n");
            fflush(stdout);
#ifdef TGC_BENCH_DNNL
            dnnl_free(&dc);
#endif
            tiles_free(&tc);
            free(x), free(w), free(b), free(y);
        }
        tgc_thread_pool_free(pool);
        while (*t != '\0' && *t != ',') t++;
        if (*t == ',') t++;
    }
#ifdef TGC_BENCH_DNNL
    bench_dnnl_stop();
#endif
    tgc_device_release(dev);
    free(times);
    free(cold);
    return 0;
}
