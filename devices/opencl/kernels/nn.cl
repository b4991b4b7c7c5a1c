/* The OpenCL C side of the gpu nn kernels (float32); the host sides, and
 * which op uses which kernel, are devices/opencl/kernels_gemm_cl.c (MatMul,
 * Gemm, Conv) and kernels_nn.c (the rest). GEMM itself is CLBlast's: here
 * are the kernels around it (fills, broadcasts, bias, im2col) and the ops
 * that are not a GEMM (direct depthwise Conv, pooling, normalisation).
 *
 * Each kernel checks its work-item against the end, so any global size
 * that covers the work will do. Flat indices are long (a tensor may pass
 * 2^31 elements); offsets within one spatial plane or window are int (the
 * host checks they fit).
 *
 * Windows (Conv, MaxPool, AveragePool) follow devices/cpu/kernels_pool.c,
 * passed by value as nn_window (ints only, so host and device lay it out
 * alike): output index o of axis a reads input o * s[a] - pb[a] + t * d[a]
 * for taps t < k[a]; outside [0, in[a]) is padding. Taps are visited in
 * row-major order as on the cpu, so sums and ties come out in its order. */

#define NN_MAX_AXES 8

typedef struct nn_window {
    int n;                /* spatial axes */
    int in[NN_MAX_AXES];  /* input sizes */
    int out[NN_MAX_AXES]; /* output sizes */
    int k[NN_MAX_AXES];   /* kernel sizes */
    int s[NN_MAX_AXES];   /* strides */
    int d[NN_MAX_AXES];   /* dilations */
    int pb[NN_MAX_AXES];  /* pads at the beginning */
    int pe[NN_MAX_AXES];  /* pads at the end */
} nn_window;

/* An operand broadcast to dims (stride 0 along the axes it broadcasts).
 * Longs only, for the same reason. */
typedef struct nn_expand_geom {
    long dims[NN_MAX_AXES];
    long strides[NN_MAX_AXES];
    long n;
} nn_expand_geom;

/* Sums of many terms (LayerNormalization's statistics, GlobalAveragePool)
 * are in double where the device has it, as on the cpu; float elsewhere. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double nn_acc;
#else
typedef float nn_acc;
#endif

#define NN_GROUP 64 /* work-group size of the kernels that reduce a row */

/* ---- Fills and broadcasts -------------------------------------------------------- */

/* y[i] = v for i < n. */
__kernel void nn_fill_f32(__global float *y, float v, long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = v;
}

/* y[i, j] = scale * c[i * cm + j * cn] over [m, n]: Gemm's C broadcast to
 * the output (cm, cn are 0 along the axes C broadcasts). */
__kernel void nn_broadcast2d_f32(__global const float *c, __global float *y, long m, long n, long cm, long cn,
                                 float scale) {
    long idx = get_global_id(0);
    if (idx >= m * n) return;
    long i = idx / n, j = idx % n;
    y[idx] = scale * c[i * cm + j * cn];
}

/* y[j] = x[the offset of j's position in g.dims under g.strides]. */
__kernel void nn_expand_f32(__global const float *x, __global float *y, nn_expand_geom g, long count) {
    long j = get_global_id(0);
    if (j >= count) return;
    long rest = j, off = 0;
    for (int a = (int)g.n - 1; a >= 0; a--) {
        off += rest % g.dims[a] * g.strides[a];
        rest /= g.dims[a];
    }
    y[j] = x[off];
}

/* ---- Window taps -------------------------------------------------------------------- */

/* Intra-plane sizes and offsets (in_size, out_size, taps) are ints: the
 * host checks they fit. A window's taps are walked as an odometer over
 * t[0..n), last axis fastest (row-major), with no division per tap.
 *
 * Each windowed kernel is a body taking the number of spatial axes n as a
 * parameter and a __kernel that calls it through NN_BY_AXES: with n a
 * constant 1, 2 or 3 the compiler unrolls the per-axis loops and keeps
 * start[] and t[] in registers; any other n takes the general copy. */
#define NN_BY_AXES(call, n)         \
    switch (n) {                    \
    case 1: call(1); break;         \
    case 2: call(2); break;         \
    case 3: call(3); break;         \
    default: call((n)); break;      \
    }

/* Output position pos's window: per axis the input index of tap 0. */
static void nn_window_start(const nn_window *w, const int n, int pos, int *start) {
    for (int a = n - 1; a >= 0; a--) {
        start[a] = pos % w->out[a] * w->s[a] - w->pb[a];
        pos /= w->out[a];
    }
}

/* The row-major offset within a plane of tap t of the window at start, or
 * -1 where it reads padding (or runs past it in ceil_mode). */
static int nn_tap_offset(const nn_window *w, const int n, const int *start, const int *t) {
    int off = 0;
    for (int a = 0; a < n; a++) {
        int i = start[a] + t[a] * w->d[a];
        if (i < 0 || i >= w->in[a]) return -1;
        off = off * w->in[a] + i;
    }
    return off;
}

/* Advances the tap odometer t (row-major); wraps to all zeros at the end. */
static void nn_tap_next(const nn_window *w, const int n, int *t) {
    for (int a = n - 1; a >= 0; a--) {
        if (++t[a] < w->k[a]) return;
        t[a] = 0;
    }
}

/* ---- Conv ---------------------------------------------------------------------------- */

/* Y [N, M, out_size] starts as the bias: y[i] = b[(i / out_size) % m]. */
__kernel void nn_bias_fill_f32(__global float *y, __global const float *b, long m, long out_size, long total) {
    long i = get_global_id(0);
    if (i < total) y[i] = b[(i / out_size) % m];
}

/* im2col (Chellapilla, Puri and Simard, "High Performance Convolutional
 * Neural Networks for Document Processing", 2006): for each of `images`
 * images of x (image q at x[x_off + q * channels * in_size], [C, D1..Dn]),
 * the matrix col_q [channels * KK, cols] at col[q * channels * KK * cols],
 * row ci * KK + kk for channel ci and row-major kernel tap kk, column j for
 * output position first + j (row-major over the output axes), padding as
 * zeros. Group g's rows are the block [g * C/group * KK, ...), so one col
 * serves every group. One work-item per (image, channel, position) writes
 * that position's KK taps (each a row apart; neighbouring work-items write
 * neighbouring columns). Global: [cols, planes = images * channels]. */
static void nn_im2col(const int n, __global const float *x, long x_off, __global float *col, const nn_window *w,
                      long planes, int in_size, int kk_count, int cols, int first) {
    int j = (int)get_global_id(0);
    long r = get_global_id(1); /* image q, channel ci: plane q * channels + ci of the slab */
    if (j >= cols || r >= planes) return;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, first + j, start);
    for (int a = 0; a < n; a++) t[a] = 0;
    __global const float *xp = x + x_off + r * in_size;
    __global float *dst = col + r * kk_count * cols + j;
    for (int kk = 0; kk < kk_count; kk++) {
        int off = nn_tap_offset(w, n, start, t);
        dst[(long)kk * cols] = off >= 0 ? xp[off] : 0.0f;
        nn_tap_next(w, n, t);
    }
}

__kernel void nn_im2col_f32(__global const float *x, long x_off, __global float *col, nn_window w, long planes,
                            int in_size, int kk_count, int cols, int first) {
#define NN_IM2COL(n) nn_im2col(n, x, x_off, col, &w, planes, in_size, kk_count, cols, first)
    NN_BY_AXES(NN_IM2COL, w.n)
}

/* Direct convolution, one work-item per output (n, m, position): y = bias
 * + the sum over the group's channels and the taps, in the cpu's order
 * (channel, then row-major tap). For depthwise Conv (one input channel per
 * group), where im2col would copy KK times the input to multiply it by a
 * one-row matrix. Global: [N * M * out_size]. */
static void nn_conv_direct(const int n, __global const float *x, __global const float *wt, __global const float *b,
                           int has_bias, __global float *y, const nn_window *w, long channels, long m_count,
                           long cg, long m_group, int in_size, int out_size, int kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long m = idx / out_size % m_count, image = idx / out_size / m_count;
    long g = m / m_group;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, (int)(idx % out_size), start);
    for (int a = 0; a < n; a++) t[a] = 0;
    float acc = has_bias ? b[m] : 0.0f;
    for (long ci = 0; ci < cg; ci++) {
        __global const float *xc = x + (image * channels + g * cg + ci) * in_size;
        __global const float *wc = wt + (m * cg + ci) * kk_count;
        for (int kk = 0; kk < kk_count; kk++) { /* t wraps to zeros after the last tap */
            int off = nn_tap_offset(w, n, start, t);
            if (off >= 0) acc += wc[kk] * xc[off];
            nn_tap_next(w, n, t);
        }
    }
    y[idx] = acc;
}

__kernel void nn_conv_direct_f32(__global const float *x, __global const float *wt, __global const float *b,
                                 int has_bias, __global float *y, nn_window w, long channels, long m_count,
                                 long cg, long m_group, int in_size, int out_size, int kk_count, long total) {
#define NN_CONV_DIRECT(n) \
    nn_conv_direct(n, x, wt, b, has_bias, y, &w, channels, m_count, cg, m_group, in_size, out_size, kk_count, total)
    NN_BY_AXES(NN_CONV_DIRECT, w.n)
}

/* ---- Pooling ------------------------------------------------------------------------- */

/* Row-major spatial offset off as column-major (first axis fastest). */
static int nn_column_major(const nn_window *w, int off) {
    int col = 0, cstride = 1, idx[NN_MAX_AXES];
    for (int a = w->n - 1; a >= 0; a--) {
        idx[a] = off % w->in[a];
        off /= w->in[a];
    }
    for (int a = 0; a < w->n; a++) {
        col += idx[a] * cstride;
        cstride *= w->in[a];
    }
    return col;
}

/* MaxPool: the first maximum in row-major window order over the taps that
 * read input (a NaN wins); NaN and index -1 for a window with none.
 * indices (when want_indices) are flattened over the whole input, N and C
 * included, row-major (storage_order 0) or column-major spatially (1).
 * Global: [planes * out_size]. */
static void nn_max_pool(const int n, __global const float *x, __global float *y, __global long *indices,
                        int want_indices, int storage_order, const nn_window *w, int in_size, int out_size,
                        int kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long p = idx / out_size;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, (int)(idx % out_size), start);
    for (int a = 0; a < n; a++) t[a] = 0;
    __global const float *xp = x + p * in_size;
    float best = NAN;
    int best_off = -1;
    for (int kk = 0; kk < kk_count; kk++) {
        int off = nn_tap_offset(w, n, start, t);
        nn_tap_next(w, n, t);
        if (off < 0) continue;
        float v = xp[off];
        if (best_off < 0 || v > best || (isnan(v) && !isnan(best))) {
            best = v;
            best_off = off;
        }
    }
    y[idx] = best;
    if (want_indices)
        indices[idx] = best_off < 0 ? -1 : p * in_size + (storage_order ? nn_column_major(w, best_off) : best_off);
}

__kernel void nn_max_pool_f32(__global const float *x, __global float *y, __global long *indices, int want_indices,
                              int storage_order, nn_window w, int in_size, int out_size, int kk_count,
                              long total) {
#define NN_MAX_POOL(n) \
    nn_max_pool(n, x, y, indices, want_indices, storage_order, &w, in_size, out_size, kk_count, total)
    NN_BY_AXES(NN_MAX_POOL, w.n)
}

/* AveragePool: the sum of the taps that read input over the count of taps
 * inside the input (count_include_pad 0) or the padded input [-pb, in +
 * pe) (1), per axis multiplied; NaN when the count is 0. Global: [planes *
 * out_size]. */
static void nn_average_pool(const int n, __global const float *x, __global float *y, int include_pad,
                            const nn_window *w, int in_size, int out_size, int kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long p = idx / out_size;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, (int)(idx % out_size), start);
    for (int a = 0; a < n; a++) t[a] = 0;
    __global const float *xp = x + p * in_size;
    float sum = 0.0f;
    for (int kk = 0; kk < kk_count; kk++) {
        int off = nn_tap_offset(w, n, start, t);
        nn_tap_next(w, n, t);
        if (off >= 0) sum += xp[off];
    }
    long count = 1;
    for (int a = 0; a < n; a++) {
        int lo = include_pad ? -w->pb[a] : 0, hi = include_pad ? w->in[a] + w->pe[a] : w->in[a], c = 0;
        for (int i = start[a], k = 0; k < w->k[a]; k++, i += w->d[a]) c += i >= lo && i < hi;
        count *= c;
    }
    y[idx] = count > 0 ? sum / (float)count : NAN;
}

__kernel void nn_average_pool_f32(__global const float *x, __global float *y, int include_pad, nn_window w,
                                  int in_size, int out_size, int kk_count, long total) {
#define NN_AVERAGE_POOL(n) nn_average_pool(n, x, y, include_pad, &w, in_size, out_size, kk_count, total)
    NN_BY_AXES(NN_AVERAGE_POOL, w.n)
}

/* The sum over a work-group of each item's v (NN_GROUP items). */
static nn_acc nn_group_sum(nn_acc v, __local nn_acc *scratch) {
    int l = (int)get_local_id(0);
    scratch[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = NN_GROUP / 2; h > 0; h /= 2) {
        if (l < h) scratch[l] += scratch[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    nn_acc total = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused by the next call */
    return total;
}

/* GlobalAveragePool: one work-group per plane of size (> 0) elements.
 * Global: [planes * NN_GROUP], local [NN_GROUP]. */
__kernel __attribute__((reqd_work_group_size(NN_GROUP, 1, 1))) void nn_global_average_pool_f32(
    __global const float *x, __global float *y, long size) {
    __local nn_acc scratch[NN_GROUP];
    long p = get_group_id(0);
    __global const float *xp = x + p * size;
    nn_acc sum = 0;
    for (long i = get_local_id(0); i < size; i += NN_GROUP) sum += xp[i];
    sum = nn_group_sum(sum, scratch);
    if (get_local_id(0) == 0) y[p] = (float)(sum / (nn_acc)size);
}

/* ---- Normalisation -------------------------------------------------------------------- */

/* BatchNormalization (inference): y = x * a + (bias - mean * a) with a =
 * scale / sqrt(var + eps), per channel (axis 1). Elementwise, so y may be
 * x. Global: [total]. */
__kernel void nn_batch_norm_f32(__global const float *x, __global float *y, __global const float *scale,
                                __global const float *bias, __global const float *mean, __global const float *var,
                                float eps, long channels, long size, long total) {
    long i = get_global_id(0);
    if (i >= total) return;
    long c = i / size % channels;
    float a = scale[c] / sqrt(var[c] + eps);
    y[i] = x[i] * a + (bias[c] - mean[c] * a);
}

/* LayerNormalization: one work-group per row of `size` (> 0) elements.
 * Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + eps) (two
 * passes, sums in nn_acc), y = (x - Mean) * InvStdDev * scale + bias;
 * scale and bias hold one value per position in a row (bias only when
 * has_bias). Global: [rows * NN_GROUP], local [NN_GROUP]. */
__kernel __attribute__((reqd_work_group_size(NN_GROUP, 1, 1))) void nn_layer_norm_f32(
    __global const float *x, __global float *y, __global const float *scale, __global const float *bias,
    int has_bias, __global float *mean_out, int want_mean, __global float *inv_out, int want_inv, float eps,
    long size) {
    __local nn_acc scratch[NN_GROUP];
    long r = get_group_id(0);
    __global const float *xr = x + r * size;
    __global float *yr = y + r * size;
    nn_acc sum = 0;
    for (long i = get_local_id(0); i < size; i += NN_GROUP) sum += xr[i];
    nn_acc mean = nn_group_sum(sum, scratch) / (nn_acc)size;
    nn_acc sq = 0;
    for (long i = get_local_id(0); i < size; i += NN_GROUP) sq += (xr[i] - mean) * (xr[i] - mean);
    sq = nn_group_sum(sq, scratch);
    float inv = (float)(1 / sqrt(sq / (nn_acc)size + (nn_acc)eps)), mf = (float)mean;
    for (long i = get_local_id(0); i < size; i += NN_GROUP)
        yr[i] = (xr[i] - mf) * inv * scale[i] + (has_bias ? bias[i] : 0.0f);
    if (get_local_id(0) == 0) {
        if (want_mean) mean_out[r] = mf;
        if (want_inv) inv_out[r] = inv;
    }
}
