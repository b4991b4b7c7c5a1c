/* OpenCL kernels of the data-movement ops (host side: kernels_shape.c):
 *     lay_strided_{u8,u16,u32,u64}   Transpose, Slice, Expand: output
 *                                    element i from src[offset + sum(idx_k *
 *                                    strides_k)] (strides may be 0 or < 0)
 *     lay_gather_{u8..u64}_{i32,i64} Gather: blocks picked by index
 *     lay_fill_{u8..u64}             ConstantOfShape
 *     lay_range_f32                  Range over float32
 * Moving bytes never interprets them, so every kernel but Range is
 * instantiated per element size (uchar, ushort, uint, ulong) and serves
 * every dtype of that size. Indices are 64-bit; one work-item per output
 * element; the global size may be rounded up past n. */

#pragma OPENCL FP_CONTRACT OFF

/* The output's dims and the source strides come as long8 (rank <= 8). */
#define DEF_STRIDED(s, T)                                                                        \
    __kernel void lay_strided_##s(__global const T *src, __global T *dst, long n, int rank, long8 dims, \
                                  long8 strides, long offset) {                                  \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        long d[8], st[8];                                                                        \
        vstore8(dims, 0, d);                                                                     \
        vstore8(strides, 0, st);                                                                 \
        long rem = i, off = offset;                                                              \
        for (int k = rank - 1; k >= 0; k--) {                                                    \
            long q = rem / d[k];                                                                 \
            off += (rem - q * d[k]) * st[k];                                                     \
            rem = q;                                                                             \
        }                                                                                        \
        dst[i] = src[off];                                                                       \
    }

/* Data seen as [outer, size, inner] elements, indices as `count` values:
 * dst [outer, count, inner] takes block idx[k] (negative counts from the
 * back). An index outside [-size, size) writes 0 and sets *bad: the host
 * reads it and fails, and nothing is read out of bounds. */
#define DEF_GATHER(s, T, is, IT)                                                                 \
    __kernel void lay_gather_##s##_##is(__global const T *src, __global const IT *idx, __global T *dst, \
                                        long n, long count, long size, long inner, __global int *bad) { \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        long j = i % inner, r = i / inner;                                                       \
        long k = r % count, o = r / count;                                                       \
        long v = (long)idx[k];                                                                   \
        if (v < 0) v += size;                                                                    \
        if (v < 0 || v >= size) {                                                                \
            dst[i] = 0;                                                                          \
            *bad = 1;                                                                            \
            return;                                                                              \
        }                                                                                        \
        dst[i] = src[(o * size + v) * inner + j];                                                \
    }

#define DEF_FILL(s, T)                                                                           \
    __kernel void lay_fill_##s(__global T *dst, long n, T value) {                               \
        long i = get_global_id(0);                                                               \
        if (i < n) dst[i] = value;                                                               \
    }

#define DEF_SIZE(s, T)                                                                           \
    DEF_STRIDED(s, T)                                                                            \
    DEF_GATHER(s, T, i32, int)                                                                   \
    DEF_GATHER(s, T, i64, long)                                                                  \
    DEF_FILL(s, T)

DEF_SIZE(u8, uchar)
DEF_SIZE(u16, ushort)
DEF_SIZE(u32, uint)
DEF_SIZE(u64, ulong)

/* out[i] = start + i * delta, rounded as the cpu kernel rounds it: i to
 * float, the product, then the sum (no contraction into an fma). */
__kernel void lay_range_f32(__global float *dst, long n, float start, float delta) {
    long i = get_global_id(0);
    if (i < n) dst[i] = start + (float)i * delta;
}

/* Copies `outer` rows of `chunk` bytes between two pitched layouts (Concat
 * and Split). A kernel rather than clEnqueueCopyBufferRect, which PoCL 3.1
 * crashes in when a buffer is a sub-buffer (the arena hands those out). */
__kernel void lay_copy_rows(__global const uchar *src, long src_off, long src_pitch, __global uchar *dst,
                            long dst_off, long dst_pitch, long chunk) {
    long i = get_global_id(0), row = get_global_id(1);
    if (i < chunk) dst[dst_off + row * dst_pitch + i] = src[src_off + row * src_pitch + i];
}
