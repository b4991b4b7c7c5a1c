/* MaxPool's register kernel, built once per vector ISA as the direct
 * convolution's are (devices/cpu/pool_isa_*.c, with the flags of
 * ew_isa_*.c: CMakeLists.txt), for pool_max_rows.c. Private to the cpu
 * device. */
#ifndef TGC_DEVICES_CPU_POOL_ISA_H
#define TGC_DEVICES_CPU_POOL_ISA_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tgc_pool_isa {
    const char *isa; /* "sse2", "avx2", "avx512": the names of devices/cpu/ew.h */
    int lanes;       /* float32 lanes of its vectors: the outputs of a block */
    /* Output rows of MaxPool at column stride 2 over kw = 2 or 3 columns,
     * in blocks of `lanes` outputs. Row i < rows: dst[i * dst_step + o]
     * for o < blocks * lanes is the maximum over the k >= 1 input rows
     * first + i * step + r * wd (r < k) and the columns 2o - pl + t
     * (t < kw) of them that lie in [0, wd). Reads, on each of those input
     * rows, the columns from -pl to 2 * lanes * (blocks - 1) - pl + 3 *
     * lanes - 1 (those outside [0, wd) count as -inf; the caller keeps
     * them inside the tensor). Returns the rows done: rows, or the first
     * row that read a NaN where it could decide an output. The rows
     * before it are, bit for bit, what MaxPool's rule gives
     * (pool_max_rule.h); that row's dst holds other values, for the
     * caller to compute again by the rule. */
    int64_t (*pairs_rows)(const float *first, int64_t step, float *dst, int64_t dst_step, int64_t rows, int64_t wd,
                          int64_t pl, int64_t kw, int64_t blocks, int64_t k);
    /* One plane xp [h, wd] into yp [oh_count, wd] at stride 1 (both
     * axes) over a kh x kw window with pads pt (top) and pl (left), pl <
     * kw, when its padded row takes nv = ceil((wd + kw - 1) / lanes) <= 4
     * vectors: reads, on each row of the plane, the nv * lanes floats from
     * column -pl (the caller keeps them inside the tensor) and writes, for
     * each row r, yp[r * wd ..] in vectors while they stay below y_room,
     * else up to wd. Returns true when yp is, bit for bit, what MaxPool's
     * rule gives over rows, then columns; false (yp holding other values)
     * when a NaN was read where it could decide an output, a window holds
     * no input row, or the row takes more than 4 vectors. */
    bool (*narrow_plane)(const float *xp, float *yp, int64_t y_room, int64_t h, int64_t wd, int64_t kh, int64_t kw,
                         int64_t pt, int64_t pl, int64_t oh_count);
} tgc_pool_isa;

/* One table per ISA (devices/cpu/pool_isa_*.c). */
extern const tgc_pool_isa tgc_pool_isa_sse2, tgc_pool_isa_avx2, tgc_pool_isa_avx512;

#endif
