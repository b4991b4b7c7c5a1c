/* oneDNN beside tgc in the benchmarks of bench/ (bench_conv_families,
 * bench_pointwise), where CMake found Debian's libdnnl-dev (TGC_BENCH_DNNL):
 * one cpu engine and stream, a check that ends the program on a oneDNN
 * error, weights reordered into a primitive's layout, and the start that
 * keeps oneDNN's OpenMP threads from spinning between runs. Header-only,
 * for one program each. */
#ifndef TGC_BENCH_DNNL_H
#define TGC_BENCH_DNNL_H

#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static dnnl_engine_t bench_dnnl_eng;
static dnnl_stream_t bench_dnnl_str;

/* Ends the program, naming the call, when a oneDNN call fails. */
#define BENCH_DNNL_CHECK(call)                                                 \
    do {                                                                       \
        dnnl_status_t s_ = (call);                                             \
        if (s_ != dnnl_success) {                                              \
            fprintf(stderr, "%s: oneDNN status %d\n", #call, (int)s_);         \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* Makes the engine and stream. oneDNN's OpenMP threads spin between runs
 * by default and take the core from tgc's workers on a small machine: the
 * program restarts itself (argv) with OMP_WAIT_POLICY=PASSIVE unless that
 * is set, so call this first. */
static inline void bench_dnnl_start(char **argv) {
    if (getenv("OMP_WAIT_POLICY") == NULL) {
        setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        exit(1);
    }
    BENCH_DNNL_CHECK(dnnl_engine_create(&bench_dnnl_eng, dnnl_cpu, 0));
    BENCH_DNNL_CHECK(dnnl_stream_create(&bench_dnnl_str, bench_dnnl_eng, dnnl_stream_default_flags));
}

static inline void bench_dnnl_stop(void) {
    dnnl_stream_destroy(bench_dnnl_str);
    dnnl_engine_destroy(bench_dnnl_eng);
}

/* A memory of layout to_md holding from_data (layout from_md) reordered,
 * in a 64-byte aligned block *buf of the caller's (free it after the
 * memory). */
static inline dnnl_memory_t bench_dnnl_reordered(const dnnl_memory_desc_t *from_md, void *from_data,
                                                 const dnnl_memory_desc_t *to_md, void **buf) {
    dnnl_memory_t from, to;
    BENCH_DNNL_CHECK(dnnl_memory_create(&from, from_md, bench_dnnl_eng, from_data));
    *buf = aligned_alloc(64, (dnnl_memory_desc_get_size(to_md) + 63) / 64 * 64);
    if (*buf == NULL) {
        fprintf(stderr, "out of memory for oneDNN's weights\n");
        exit(1);
    }
    BENCH_DNNL_CHECK(dnnl_memory_create(&to, to_md, bench_dnnl_eng, *buf));
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t r;
    BENCH_DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, from_md, bench_dnnl_eng, to_md, bench_dnnl_eng, NULL));
    BENCH_DNNL_CHECK(dnnl_primitive_create(&r, rpd));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    BENCH_DNNL_CHECK(dnnl_primitive_execute(r, bench_dnnl_str, 2, args));
    BENCH_DNNL_CHECK(dnnl_stream_wait(bench_dnnl_str));
    dnnl_primitive_destroy(r);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_memory_destroy(from);
    return to;
}

/* Runs convolution primitive conv on its four memories and waits for it. */
static inline void bench_dnnl_conv_run(dnnl_primitive_t conv, dnnl_memory_t src, dnnl_memory_t wei,
                                       dnnl_memory_t bias, dnnl_memory_t dst) {
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias},
                               {DNNL_ARG_DST, dst}};
    BENCH_DNNL_CHECK(dnnl_primitive_execute(conv, bench_dnnl_str, 4, args));
    BENCH_DNNL_CHECK(dnnl_stream_wait(bench_dnnl_str));
}

#endif
