/* OpenCL kernels of the indexing ops (host side: kernels_indexing.c):
 *     idx_gather_elements_{u8..u64}_{i32,i64}   GatherElements
 *     idx_tile_{u8..u64}                        Tile
 *     idx_trilu_{u8..u64}                       Trilu
 * Each moves bytes without reading them as numbers, so it is instantiated
 * per element size (uchar, ushort, uint, ulong) and serves every dtype of
 * that size. One work-item per output element; the global size may be
 * rounded up past n. Dims and strides come as long8 (rank <= 8). */

/* Output element i of GatherElements: its coordinates over the indices'
 * dims `dims`; the source is data at sum(coord_d * xstrides_d) with the
 * axis' coordinate replaced by idx[i] (negative counts from the back;
 * size: data's axis size). An index outside [-size, size) writes 0 and
 * sets *bad: the host reads the flag and fails, and nothing is read out of
 * bounds. */
#define DEF_GATHER_ELEMENTS(s, T, is, IT)                                                                              \
    __kernel void idx_gather_elements_##s##_##is(__global const T *src, __global const IT *idx, __global T *dst,      \
                                                 long n, int rank, int axis, long size, long8 dims, long8 xstrides,    \
                                                 __global int *bad) {                                                  \
        long i = get_global_id(0);                                                                                     \
        if (i >= n) return;                                                                                            \
        long d[8], st[8];                                                                                              \
        vstore8(dims, 0, d);                                                                                           \
        vstore8(xstrides, 0, st);                                                                                      \
        long rem = i, off = 0;                                                                                         \
        for (int k = rank - 1; k >= 0; k--) {                                                                          \
            long q = rem / d[k];                                                                                       \
            if (k != axis) off += (rem - q * d[k]) * st[k];                                                            \
            rem = q;                                                                                                   \
        }                                                                                                              \
        long v = (long)idx[i];                                                                                         \
        if (v < 0) v += size;                                                                                          \
        if (v < 0 || v >= size) {                                                                                      \
            dst[i] = 0;                                                                                                \
            *bad = 1;                                                                                                  \
            return;                                                                                                    \
        }                                                                                                              \
        dst[i] = src[off + v * st[axis]];                                                                              \
    }

/* Output element i of Tile (out dims `odims`, input dims `xdims`): the
 * input element at coordinates coord_d % xdims_d. */
#define DEF_TILE(s, T)                                                                                                 \
    __kernel void idx_tile_##s(__global const T *src, __global T *dst, long n, int rank, long8 odims, long8 xdims) {   \
        long i = get_global_id(0);                                                                                     \
        if (i >= n) return;                                                                                            \
        long od[8], xd[8];                                                                                             \
        vstore8(odims, 0, od);                                                                                         \
        vstore8(xdims, 0, xd);                                                                                         \
        long rem = i, off = 0, stride = 1;                                                                             \
        for (int k = rank - 1; k >= 0; k--) {                                                                          \
            long q = rem / od[k];                                                                                      \
            off += ((rem - q * od[k]) % xd[k]) * stride;                                                               \
            stride *= xd[k];                                                                                           \
            rem = q;                                                                                                   \
        }                                                                                                              \
        dst[i] = src[off];                                                                                             \
    }

/* Output element i of Trilu over trailing [rows, cols] matrices: kept
 * when col - row >= k (upper) or <= k (lower), else 0. k is clamped by
 * the host so that row + k cannot overflow. */
#define DEF_TRILU(s, T)                                                                                                \
    __kernel void idx_trilu_##s(__global const T *src, __global T *dst, long n, long rows, long cols, long k,         \
                                int upper) {                                                                           \
        long i = get_global_id(0);                                                                                     \
        if (i >= n) return;                                                                                            \
        long col = i % cols, row = (i / cols) % rows;                                                                  \
        bool keep = upper ? col - row >= k : col - row <= k;                                                           \
        dst[i] = keep ? src[i] : (T)0;                                                                                 \
    }

#define DEF_SIZE(s, T)                                                                                                 \
    DEF_GATHER_ELEMENTS(s, T, i32, int)                                                                                \
    DEF_GATHER_ELEMENTS(s, T, i64, long)                                                                               \
    DEF_TILE(s, T)                                                                                                     \
    DEF_TRILU(s, T)

DEF_SIZE(u8, uchar)
DEF_SIZE(u16, ushort)
DEF_SIZE(u32, uint)
DEF_SIZE(u64, ulong)
