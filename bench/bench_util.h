/* Timing helpers shared by the benchmarks in bench/: a monotonic clock in
 * seconds and the median of a set of run times. Header-only (static inline)
 * so that each benchmark stays one plain program. */
#ifndef TGC_BENCH_UTIL_H
#define TGC_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC: only differences between two calls mean anything. */
static inline double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

#endif
