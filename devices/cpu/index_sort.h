/* Sorting index arrays for the cpu selection kernels (TopK, Unique): a
 * stable merge sort of positions by a caller's comparison, and typed
 * element comparisons generated from elem_types.h. Stable means equal
 * elements keep their order, which gives TopK's rule "ties: the lower
 * index first" and Unique's "first occurrence".
 *
 * Example usage:
 *     for (int64_t i = 0; i < n; i++) idx[i] = i;
 *     tgc_cpu_sort_positions(idx, tmp, n, my_cmp, &my_ctx);
 */
#ifndef TGC_DEVICES_CPU_INDEX_SORT_H
#define TGC_DEVICES_CPU_INDEX_SORT_H

#include "tgc.h"

#include <stdint.h>

/* < 0, 0, > 0 as position a sorts before, with, after position b. */
typedef int (*tgc_cpu_cmp_fn)(const void *ctx, int64_t a, int64_t b);

/* Sorts idx[0..n) ascending by cmp, stably; tmp holds n positions of
 * scratch. O(n log n), no allocation. */
void tgc_cpu_sort_positions(int64_t *idx, int64_t *tmp, int64_t n, tgc_cpu_cmp_fn cmp, const void *ctx);

/* Compares element i with element j of a tensor of dtype t at data:
 * numeric order, NaN after every number and equal to NaN (numpy's sort),
 * -0.0 equal to 0.0. */
typedef int (*tgc_cpu_elem_cmp_fn)(const void *data, int64_t i, int64_t j);

/* The comparison for dtype t, or NULL for a dtype not in elem_types.h. */
tgc_cpu_elem_cmp_fn tgc_cpu_elem_cmp(tgc_dtype t);

#endif
