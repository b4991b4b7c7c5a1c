/* The sum of a float32 row in double, private to the cpu kernels (Softmax,
 * LogSoftmax and LayerNormalization).
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

#endif
