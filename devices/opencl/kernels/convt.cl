/* The OpenCL C side of the convolution-family and layout gpu kernels; the
 * host sides are devices/opencl/kernels_convt.c, and each follows the cpu
 * kernel of its op (devices/cpu/kernels_convt.c, kernels_pad.c,
 * kernels_channel.c). Each kernel checks its work-item against the end, so
 * any global size that covers the work will do; flat indices are long. */

#define CT_MAX_AXES 8
#define CT_GROUP 64 /* work-group size of the kernels that reduce a plane */

/* Sums over a plane in double where the device has it, as on the cpu. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double ct_acc;
#else
typedef float ct_acc;
#endif

/* ---- ConvTranspose ------------------------------------------------------------------- */

/* The geometry of devices/convt_geometry.h as ints (the host checks they
 * fit): input i of axis a, tap t, lands at output i * s - pb + t * d. */
typedef struct ct_geom {
    int n;
    int in[CT_MAX_AXES], out[CT_MAX_AXES], k[CT_MAX_AXES], s[CT_MAX_AXES], d[CT_MAX_AXES], pb[CT_MAX_AXES];
} ct_geom;

/* One work-item per output y[n, m, o]: the bias plus, for each tap t whose
 * o + pb - t * d is a multiple of s landing on an input i inside X, the sum
 * over the group's input channels c of x[n, c, i] * w[c, m % mg, t]. A
 * gather, so no two items write the same element. Global: [total]. */
__kernel void ct_conv_transpose_f32(__global const float *x, __global const float *w, __global const float *b,
                                    __global float *y, int has_bias, ct_geom g, int channels, int cg, int mg,
                                    int m_count, int in_size, int out_size, int kk, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    int of = (int)(idx % out_size);
    long nm = idx / out_size;
    int m = (int)(nm % m_count), gi = m / mg, mi = m % mg;
    long n = nm / m_count;
    int o[CT_MAX_AXES], t[CT_MAX_AXES];
    for (int a = g.n - 1; a >= 0; a--) {
        o[a] = of % g.out[a];
        of /= g.out[a];
        t[a] = 0;
    }
    float acc = has_bias ? b[m] : 0.0f;
    __global const float *xg = x + (n * channels + (long)gi * cg) * in_size;
    __global const float *wg = w + ((long)gi * cg * mg + mi) * kk;
    for (int tap = 0; tap < kk; tap++) {
        int off = 0;
        bool inside = true;
        for (int a = 0; a < g.n; a++) {
            int f = o[a] + g.pb[a] - t[a] * g.d[a];
            inside = inside && f >= 0 && f % g.s[a] == 0 && f / g.s[a] < g.in[a];
            off = off * g.in[a] + (inside ? f / g.s[a] : 0);
        }
        if (inside)
            for (int c = 0; c < cg; c++) acc += xg[(long)c * in_size + off] * wg[(long)c * mg * kk + tap];
        for (int a = g.n - 1; a >= 0; a--) {
            if (++t[a] < g.k[a]) break;
            t[a] = 0;
        }
    }
    y[idx] = acc;
}

/* ---- Pad, DepthToSpace, SpaceToDepth: by element size ----------------------------------- */

/* devices/pad_geometry.h's tgc_pad_geometry as longs: output index o of
 * axis a reads kept index o - begin[a], mapped by the mode outside
 * [0, kept[a]) (0 constant, 1 reflect, 2 edge), plus lo[a]. */
typedef struct ct_pad {
    long rank, mode;
    long in[CT_MAX_AXES], out[CT_MAX_AXES], lo[CT_MAX_AXES], kept[CT_MAX_AXES], begin[CT_MAX_AXES];
} ct_pad;

/* The input index output index o of axis a reads, or -1 for the constant
 * (pad_geometry.c's tgc_pad_source). */
static long ct_pad_source(const ct_pad *p, int a, long o) {
    long i = o - p->begin[a], m = p->kept[a];
    if (i < 0 || i >= m) {
        if (p->mode == 0) return -1;
        if (p->mode == 2) i = i < 0 ? 0 : m - 1;
        else if (m == 1) i = 0;
        else {
            long period = 2 * (m - 1);
            i %= period;
            if (i < 0) i += period;
            if (i >= m) i = period - i;
        }
    }
    return p->lo[a] + i;
}

/* One kernel per element type T (uchar, ushort, uint, ulong: element sizes
 * 1, 2, 4, 8). Global: [total] each. */
#define CT_MOVES(T)                                                                                                  \
    __kernel void ct_pad_##T(__global const T *x, __global T *y, T value, ct_pad p, long total) {                    \
        long idx = get_global_id(0);                                                                                 \
        if (idx >= total) return;                                                                                    \
        long rest = idx, src = 0, stride = 1;                                                                        \
        for (int a = (int)p.rank - 1; a >= 0; a--) {                                                                 \
            long i = ct_pad_source(&p, a, rest % p.out[a]);                                                          \
            rest /= p.out[a];                                                                                        \
            if (i < 0) {                                                                                             \
                y[idx] = value;                                                                                      \
                return;                                                                                              \
            }                                                                                                        \
            src += i * stride;                                                                                       \
            stride *= p.in[a];                                                                                       \
        }                                                                                                            \
        y[idx] = x[src];                                                                                             \
    }                                                                                                                \
    /* DepthToSpace [N, C, H, W] -> [N, C / b^2, H * b, W * b]: output (n, oc, oh, ow) reads input channel       \
     * (bh * b + bw) * co + oc (DCR) or (oc * b + bh) * b + bw (CRD), bh = oh % b, bw = ow % b. */                 \
    __kernel void ct_depth_to_space_##T(__global const T *x, __global T *y, long b, int crd, long co, long h,       \
                                        long w, long total) {                                                        \
        long idx = get_global_id(0);                                                                                 \
        if (idx >= total) return;                                                                                    \
        long ow = idx % (w * b), oh = idx / (w * b) % (h * b), oc = idx / (w * b * h * b) % co;                      \
        long n = idx / (w * b * h * b * co), bh = oh % b, bw = ow % b;                                               \
        long ic = crd ? (oc * b + bh) * b + bw : (bh * b + bw) * co + oc;                                            \
        y[idx] = x[((n * co * b * b + ic) * h + oh / b) * w + ow / b];                                               \
    }                                                                                                                \
    /* SpaceToDepth [N, C, H, W] -> [N, C * b^2, H / b, W / b]: y[n, (bh * b + bw) * C + c, oh, ow] =            \
     * x[n, c, oh * b + bh, ow * b + bw]. */                                                                       \
    __kernel void ct_space_to_depth_##T(__global const T *x, __global T *y, long b, long ci, long h, long w,        \
                                        long total) {                                                                \
        long idx = get_global_id(0);                                                                                 \
        if (idx >= total) return;                                                                                    \
        long ow_count = w / b, oh_count = h / b, co = ci * b * b;                                                    \
        long ow = idx % ow_count, oh = idx / ow_count % oh_count, oc = idx / (ow_count * oh_count) % co;             \
        long n = idx / (ow_count * oh_count * co), blk = oc / ci, c = oc % ci;                                       \
        y[idx] = x[((n * ci + c) * h + oh * b + blk / b) * w + ow * b + blk % b];                                    \
    }

CT_MOVES(uchar)
CT_MOVES(ushort)
CT_MOVES(uint)
CT_MOVES(ulong)

/* ---- InstanceNormalization, GlobalMaxPool: a work-group per plane ----------------------- */

/* The sum over a work-group (CT_GROUP items) of each item's v. */
static ct_acc ct_group_sum(ct_acc v, __local ct_acc *scratch) {
    int l = (int)get_local_id(0);
    scratch[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = CT_GROUP / 2; h > 0; h /= 2) {
        if (l < h) scratch[l] += scratch[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    ct_acc total = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* InstanceNormalization: plane p (> 0 elements) of channel p % channels
 * becomes scale * (x - mean) / sqrt(var + eps) + bias, the mean and the
 * biased variance summed in ct_acc. y may be x: every read of another
 * item's elements comes before the second sum's barriers, and each item
 * then writes only the elements it reads.
 * Global: [planes * CT_GROUP], local [CT_GROUP]. */
__kernel __attribute__((reqd_work_group_size(CT_GROUP, 1, 1))) void ct_instance_norm_f32(
    __global const float *x, __global float *y, __global const float *scale, __global const float *bias, float eps,
    long channels, long size) {
    __local ct_acc scratch[CT_GROUP];
    long p = get_group_id(0);
    __global const float *xp = x + p * size;
    __global float *yp = y + p * size;
    ct_acc sum = 0;
    for (long i = get_local_id(0); i < size; i += CT_GROUP) sum += xp[i];
    ct_acc mean = ct_group_sum(sum, scratch) / (ct_acc)size, sq = 0;
    for (long i = get_local_id(0); i < size; i += CT_GROUP) sq += (xp[i] - mean) * (xp[i] - mean);
    ct_acc var = ct_group_sum(sq, scratch) / (ct_acc)size;
    long c = p % channels;
    ct_acc k = scale[c] / sqrt(var + (ct_acc)eps), b = bias[c];
    for (long i = get_local_id(0); i < size; i += CT_GROUP) yp[i] = (float)((xp[i] - mean) * k + b);
}

/* GlobalMaxPool: each plane's maximum, a NaN winning (numpy.max); NaN for
 * an empty plane. Global: [planes * CT_GROUP], local [CT_GROUP]. */
__kernel __attribute__((reqd_work_group_size(CT_GROUP, 1, 1))) void ct_global_max_pool_f32(
    __global const float *x, __global float *y, long size) {
    __local float scratch[CT_GROUP];
    long p = get_group_id(0);
    int l = (int)get_local_id(0);
    __global const float *xp = x + p * size;
    float best = -INFINITY;
    for (long i = l; i < size; i += CT_GROUP) {
        float v = xp[i];
        best = v > best || isnan(v) ? v : best;
    }
    scratch[l] = best;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = CT_GROUP / 2; h > 0; h /= 2) {
        if (l < h) {
            float v = scratch[l + h];
            scratch[l] = v > scratch[l] || isnan(v) ? v : scratch[l];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) y[p] = size > 0 ? scratch[0] : NAN;
}

/* ---- LRN ---------------------------------------------------------------------------------- */

/* y = x / (bias + alpha / size * S)^beta, S the sum of x^2 over channels
 * [c - before, c + after] inside [0, channels). Global: [total]. */
__kernel void ct_lrn_f32(__global const float *x, __global float *y, float alpha, float beta, float bias, int size,
                         int before, int after, long channels, long spatial, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long s = idx % spatial, c = idx / spatial % channels, n = idx / (spatial * channels);
    long c0 = c - before < 0 ? 0 : c - before, c1 = c + after >= channels ? channels - 1 : c + after;
    ct_acc sum = 0;
    for (long k = c0; k <= c1; k++) {
        ct_acc v = x[(n * channels + k) * spatial + s];
        sum += v * v;
    }
    y[idx] = (float)(x[idx] / pow((ct_acc)bias + (ct_acc)alpha / (ct_acc)size * sum, (ct_acc)beta));
}

/* ---- LpPool, GlobalLpPool ------------------------------------------------------------------- */

/* kernels_nn.h's tgc_cl_window (nn.cl's nn_window): output o of axis a
 * reads input o * s - pb + t * d for taps t < k; outside [0, in) is
 * padding, which adds nothing. */
typedef struct ct_window {
    int n;
    int in[CT_MAX_AXES], out[CT_MAX_AXES], k[CT_MAX_AXES], s[CT_MAX_AXES];
    int d[CT_MAX_AXES], pb[CT_MAX_AXES], pe[CT_MAX_AXES];
} ct_window;

/* |v|^p for an integer p >= 1, exactly for p 1 and 2 (kernels_channel.c). */
static ct_acc ct_abs_pow(ct_acc v, int p) {
    v = fabs(v);
    return p == 1 ? v : p == 2 ? v * v : pow(v, (ct_acc)p);
}

static ct_acc ct_root(ct_acc s, int p) { return p == 1 ? s : p == 2 ? sqrt(s) : pow(s, (ct_acc)1 / (ct_acc)p); }

/* LpPool: (sum over the window's taps inside the input of |x|^p)^(1/p),
 * taps in row-major order as on the cpu. Global: [planes * out_size]. */
__kernel void ct_lp_pool_f32(__global const float *x, __global float *y, int p, ct_window w, int in_size, int out_size,
                             int kk, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long plane = idx / out_size;
    int of = (int)(idx % out_size), o[CT_MAX_AXES], t[CT_MAX_AXES];
    for (int a = w.n - 1; a >= 0; a--) {
        o[a] = of % w.out[a];
        of /= w.out[a];
        t[a] = 0;
    }
    __global const float *xp = x + plane * in_size;
    ct_acc sum = 0;
    for (int tap = 0; tap < kk; tap++) {
        int off = 0;
        bool inside = true;
        for (int a = 0; a < w.n; a++) {
            int i = o[a] * w.s[a] - w.pb[a] + t[a] * w.d[a];
            inside = inside && i >= 0 && i < w.in[a];
            off = off * w.in[a] + i;
        }
        if (inside) sum += ct_abs_pow(xp[off], p);
        for (int a = w.n - 1; a >= 0; a--) {
            if (++t[a] < w.k[a]) break;
            t[a] = 0;
        }
    }
    y[idx] = (float)ct_root(sum, p);
}

/* GlobalLpPool: each plane's (sum |x|^p)^(1/p); 0 for an empty plane.
 * Global: [planes * CT_GROUP], local [CT_GROUP]. */
__kernel __attribute__((reqd_work_group_size(CT_GROUP, 1, 1))) void ct_global_lp_pool_f32(
    __global const float *x, __global float *y, int p, long size) {
    __local ct_acc scratch[CT_GROUP];
    long plane = get_group_id(0);
    __global const float *xp = x + plane * size;
    ct_acc sum = 0;
    for (long i = get_local_id(0); i < size; i += CT_GROUP) sum += ct_abs_pow(xp[i], p);
    sum = ct_group_sum(sum, scratch);
    if (get_local_id(0) == 0) y[plane] = (float)ct_root(sum, p);
}
