/* Helpers shared by the benchmarks in bench/: a monotonic clock in
 * seconds, the median of a set of run times, and a session at an
 * optimization level. Header-only (static inline)
 * so that each benchmark stays one plain program. */
#ifndef TGC_BENCH_UTIL_H
#define TGC_BENCH_UTIL_H

#include "tgc.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC: only differences between two calls mean anything. */
static inline double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* p[0..n) = values in [-1, 1) from a linear congruential sequence seeded
 * with `seed`: the same inputs every run. */
static inline void bench_fill_uniform(float *p, int64_t n, unsigned seed) {
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
}

/* qsort order for doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), n >= 1: the middle value, or the mean of the two
 * middle ones when n is even. Sorts v in place. */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A session on `devices` with `threads` ("cpu0=2", or NULL) running g at
 * optimization `level`; NULL, after printing why, when it cannot open (a
 * gpu0 that is not there). */
static inline tgc_session *bench_open_session(const tgc_graph *g, const char *devices, tgc_optimize_level level,
                                              const char *threads) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_session_options o = {.threads = threads, .optimize = level};
    if (tgc_session_create(g, devices, &o, d, &s) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return s;
}

#endif
