/* The sum of a float32 row in double, and of its squared deviations from
 * a mean, private to the cpu kernels (Softmax, LogSoftmax,
 * LayerNormalization, InstanceNormalization, the reductions).
 *
 * Eight partial sums (scalars, so that gcc keeps them in vector registers)
 * added pairwise at the end: the loop vectorizes, and the rounding depends
 * on n alone, never on how a kernel split its rows over threads.
 *
 * Example usage:
 *     double mean = tgc_cpu_row_sum(x, n) / (double)n;
 */
#ifndef TGC_DEVICES_CPU_ROW_SUM_H
#define TGC_DEVICES_CPU_ROW_SUM_H

#include <stdint.h>

/* sum(x[0..n)), n >= 0 (0 for an empty row). */
static inline double tgc_cpu_row_sum(const float *x, int64_t n) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 += x[i];
        a1 += x[i + 1];
        a2 += x[i + 2];
        a3 += x[i + 3];
        a4 += x[i + 4];
        a5 += x[i + 5];
        a6 += x[i + 6];
        a7 += x[i + 7];
    }
    for (; i < n; i++) a0 += x[i];
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

/* sum((x[i] - mean)^2) over i < n in double, summed as tgc_cpu_row_sum
 * sums: eight partial sums added pairwise. */
static inline double tgc_cpu_row_sq_dev(const float *x, int64_t n, double mean) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        double d0 = x[i] - mean, d1 = x[i + 1] - mean, d2 = x[i + 2] - mean, d3 = x[i + 3] - mean;
        double d4 = x[i + 4] - mean, d5 = x[i + 5] - mean, d6 = x[i + 6] - mean, d7 = x[i + 7] - mean;
        a0 += d0 * d0;
        a1 += d1 * d1;
        a2 += d2 * d2;
        a3 += d3 * d3;
        a4 += d4 * d4;
        a5 += d5 * d5;
        a6 += d6 * d6;
        a7 += d7 * d7;
    }
    for (; i < n; i++) a0 += (x[i] - mean) * (x[i] - mean);
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

#endif
