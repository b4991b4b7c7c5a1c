/* The OpenCL C side of the gpu nn kernels (float32); the host side, and
 * which op uses which kernel, is devices/opencl/kernels_nn.c. GEMM itself
 * is CLBlast's: here are the kernels around it (fills, broadcasts, bias,
 * im2col) and the ops that are not a GEMM (direct depthwise Conv, pooling,
 * normalisation).
 *
 * Each kernel takes its global size rounded up by the host and returns for
 * work-items past the end. Flat indices are long (a tensor may pass 2^31
 * elements; one axis does not).
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
 * serves every group. Global: [cols, images * channels * KK]. */
__kernel void nn_im2col_f32(__global const float *x, long x_off, __global float *col, nn_window w, long channels,
                            long in_size, long kk_count, long images, long cols, long first) {
    long j = get_global_id(0), r = get_global_id(1);
    long rows_per_image = channels * kk_count;
    if (j >= cols || r >= images * rows_per_image) return;
    long q = r / rows_per_image, row = r % rows_per_image;
    long ci = row / kk_count, kk = row % kk_count, pos = first + j;
    long off = 0;
    bool inside = true;
    /* Axis a's tap and output index, last axis fastest in both. */
    int t[NN_MAX_AXES], o[NN_MAX_AXES];
    for (int a = w.n - 1; a >= 0; a--) {
        t[a] = (int)(kk % w.k[a]);
        kk /= w.k[a];
        o[a] = (int)(pos % w.out[a]);
        pos /= w.out[a];
    }
    for (int a = 0; a < w.n; a++) {
        int i = o[a] * w.s[a] - w.pb[a] + t[a] * w.d[a];
        inside = inside && i >= 0 && i < w.in[a];
        off = off * w.in[a] + i;
    }
    col[r * cols + j] = inside ? x[x_off + (q * channels + ci) * in_size + off] : 0.0f;
}

/* Direct convolution, one work-item per output (n, m, position): y = bias
 * + the sum over the group's channels and the taps, in the cpu's order
 * (channel, then row-major tap). For depthwise Conv (one input channel per
 * group), where im2col would copy KK times the input to multiply it by a
 * one-row matrix. Global: [N * M * out_size]. */
__kernel void nn_conv_direct_f32(__global const float *x, __global const float *wt, __global const float *b,
                                 int has_bias, __global float *y, nn_window w, long channels, long m_count,
                                 long cg, long m_group, long in_size, long out_size, long kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long pos = idx % out_size, m = idx / out_size % m_count, n = idx / (out_size * m_count);
    long g = m / m_group;
    int start[NN_MAX_AXES];
    for (int a = w.n - 1; a >= 0; a--) {
        start[a] = (int)(pos % w.out[a]) * w.s[a] - w.pb[a];
        pos /= w.out[a];
    }
    float acc = has_bias ? b[m] : 0.0f;
    for (long ci = 0; ci < cg; ci++) {
        __global const float *xc = x + (n * channels + g * cg + ci) * in_size;
        __global const float *wc = wt + (m * cg + ci) * kk_count;
        for (long kk = 0; kk < kk_count; kk++) {
            long rest = kk, off = 0, stride = 1;
            bool inside = true;
            for (int a = w.n - 1; a >= 0; a--) {
                int i = start[a] + (int)(rest % w.k[a]) * w.d[a];
                rest /= w.k[a];
                inside = inside && i >= 0 && i < w.in[a];
                off += i * stride;
                stride *= w.in[a];
            }
            if (inside) acc += wc[kk] * xc[off];
        }
    }
    y[idx] = acc;
}

/* ---- Pooling ----------------------------------------------------------------------- */

/* The window of output position pos: per axis its first input index. */
static void nn_window_start(const nn_window *w, long pos, int *start) {
    for (int a = w->n - 1; a >= 0; a--) {
        start[a] = (int)(pos % w->out[a]) * w->s[a] - w->pb[a];
        pos /= w->out[a];
    }
}

/* Tap kk's row-major input offset within a plane, or -1 where it reads
 * padding (or runs past it in ceil_mode). */
static long nn_tap_offset(const nn_window *w, const int *start, long kk) {
    long off = 0, stride = 1;
    for (int a = w->n - 1; a >= 0; a--) {
        int i = start[a] + (int)(kk % w->k[a]) * w->d[a];
        kk /= w->k[a];
        if (i < 0 || i >= w->in[a]) return -1;
        off += i * stride;
        stride *= w->in[a];
    }
    return off;
}

/* Row-major spatial offset off as column-major (first axis fastest). */
static long nn_column_major(const nn_window *w, long off) {
    long col = 0, cstride = 1, idx[NN_MAX_AXES];
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
__kernel void nn_max_pool_f32(__global const float *x, __global float *y, __global long *indices, int want_indices,
                              int storage_order, nn_window w, long in_size, long out_size, long kk_count,
                              long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long p = idx / out_size;
    int start[NN_MAX_AXES];
    nn_window_start(&w, idx % out_size, start);
    __global const float *xp = x + p * in_size;
    float best = NAN;
    long best_off = -1;
    for (long kk = 0; kk < kk_count; kk++) {
        long off = nn_tap_offset(&w, start, kk);
        if (off < 0) continue;
        float v = xp[off];
        if (best_off < 0 || v > best || (isnan(v) && !isnan(best))) {
            best = v;
            best_off = off;
        }
    }
    y[idx] = best;
    if (want_indices)
        indices[idx] = best_off < 0 ? -1 : p * in_size + (storage_order ? nn_column_major(&w, best_off) : best_off);
}

/* AveragePool: the sum of the taps that read input over the count of taps
 * inside the input (count_include_pad 0) or the padded input [-pb, in +
 * pe) (1), per axis multiplied; NaN when the count is 0. Global: [planes *
 * out_size]. */
__kernel void nn_average_pool_f32(__global const float *x, __global float *y, int include_pad, nn_window w,
                                  long in_size, long out_size, long kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long p = idx / out_size;
    int start[NN_MAX_AXES];
    nn_window_start(&w, idx % out_size, start);
    __global const float *xp = x + p * in_size;
    float sum = 0.0f;
    for (long kk = 0; kk < kk_count; kk++) {
        long off = nn_tap_offset(&w, start, kk);
        if (off >= 0) sum += xp[off];
    }
    long count = 1;
    for (int a = 0; a < w.n; a++) {
        int lo = include_pad ? -w.pb[a] : 0, hi = include_pad ? w.in[a] + w.pe[a] : w.in[a], c = 0;
        for (int t = 0; t < w.k[a]; t++) {
            int i = start[a] + t * w.d[a];
            c += i >= lo && i < hi;
        }
        count *= c;
    }
    y[idx] = count > 0 ? sum / (float)count : NAN;
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
