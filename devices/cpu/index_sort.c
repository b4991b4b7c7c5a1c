/* Stable merge sort of positions and typed element comparisons (see
 * index_sort.h). Bottom-up merging: runs of width 1, 2, 4, ... merged
 * between idx and tmp, copied back at the end when needed. */
#include "devices/cpu/index_sort.h"

#include "devices/cpu/elem_types.h"

#include <string.h>

void tgc_cpu_sort_positions(int64_t *idx, int64_t *tmp, int64_t n, tgc_cpu_cmp_fn cmp, const void *ctx) {
    int64_t *from = idx, *to = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) to[k++] = cmp(ctx, from[b], from[a]) < 0 ? from[b++] : from[a++];
            while (a < mid) to[k++] = from[a++];
            while (b < hi) to[k++] = from[b++];
        }
        int64_t *t = from;
        from = to;
        to = t;
    }
    if (from != idx) memcpy(idx, from, (size_t)n * sizeof *idx);
}

#define CMP(dt, ST, CT, tag)                                                                                           \
    static int cmp_##tag(const void *data, int64_t i, int64_t j) {                                                     \
        CT a = tgc_cpu_ld_##tag(((const ST *)data)[i]), b = tgc_cpu_ld_##tag(((const ST *)data)[j]);                   \
        bool na = tgc_cpu_isnan_##tag(a), nb = tgc_cpu_isnan_##tag(b);                                                 \
        if (na || nb) return (int)na - (int)nb;                                                                        \
        return a < b ? -1 : b < a ? 1 : 0;                                                                             \
    }
TGC_CPU_ALL_TYPES(CMP)
#undef CMP

tgc_cpu_elem_cmp_fn tgc_cpu_elem_cmp(tgc_dtype t) {
    switch (t) {
#define CASE(dt, ST, CT, tag)                                                                                          \
    case dt: return cmp_##tag;
        TGC_CPU_ALL_TYPES(CASE)
#undef CASE
    default: return NULL;
    }
}
