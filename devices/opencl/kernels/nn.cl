/* The OpenCL C side of the gpu nn kernels (float32 and float16); the host sides, and
 * which op uses which kernel, are devices/opencl/kernels_gemm_cl.c (MatMul,
 * Gemm, Conv) and kernels_nn.c (the rest). MatMul's and Gemm's GEMM is
 * CLBlast's: here are the kernels around it (fills, broadcasts), Conv (an
 * implicit GEMM, and direct for depthwise) and the ops that are not a GEMM
 * (pooling, normalisation).
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

/* Storage. The file is built as it is for float32 tensors and again with
 * NN_HALF defined for float16 ones (tgc_cl_nn_enqueue): NN_T is what a
 * tensor's buffer holds; NN_LD and NN_ST read and write element i as a
 * float (vload_half and vstore_half_rte, core OpenCL C: no cl_khr_fp16
 * needed), so every kernel computes in float32 and rounds once, to
 * nearest even, as it stores, as the cpu's float16 kernels do; NN_NAME
 * gives a kernel's name its dtype (_f32 or _f16). */
#ifdef NN_HALF
#define NN_T half
#define NN_LD(p, i) vload_half((i), (p))
#define NN_ST(p, i, v) vstore_half_rte((v), (i), (p))
#define NN_NAME(base) base##_f16
#else
#define NN_T float
#define NN_LD(p, i) ((p)[i])
#define NN_ST(p, i, v) ((p)[i] = (v))
#define NN_NAME(base) base##_f32
#endif

/* ---- Fills and broadcasts -------------------------------------------------------- */

/* y[i] = v for i < n. */
__kernel void NN_NAME(nn_fill)(__global NN_T *y, float v, long n) {
    long i = get_global_id(0);
    if (i < n) NN_ST(y, i, v);
}

/* y[i, j] = scale * c[i * cm + j * cn] over [m, n]: Gemm's C broadcast to
 * the output (cm, cn are 0 along the axes C broadcasts). */
__kernel void NN_NAME(nn_broadcast2d)(__global const NN_T *c, __global NN_T *y, long m, long n, long cm, long cn,
                                      float scale) {
    long idx = get_global_id(0);
    if (idx >= m * n) return;
    long i = idx / n, j = idx % n;
    NN_ST(y, idx, scale * NN_LD(c, i * cm + j * cn));
}

/* y[j] = x[the offset of j's position in g.dims under g.strides]. */
__kernel void NN_NAME(nn_expand)(__global const NN_T *x, __global NN_T *y, nn_expand_geom g, long count) {
    long j = get_global_id(0);
    if (j >= count) return;
    long rest = j, off = 0;
    for (int a = (int)g.n - 1; a >= 0; a--) {
        off += rest % g.dims[a] * g.strides[a];
        rest /= g.dims[a];
    }
    NN_ST(y, j, NN_LD(x, off));
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

/* A fused activation (executor/fuse.c): TGC_ACT(v) is the identity here;
 * tgc_cl_enqueue_act builds this file again behind graph/elementwise.def's
 * row functions with TGC_ACT defined as the row's call, one program per
 * activation and parameters. */
#ifndef TGC_ACT
#define TGC_ACT(v) (v)
#endif

/* Conv as one implicit GEMM per (image, group): Y_g [M/group, out_size] =
 * W_g [M/group, K] x B [K, out_size] with K = C/group * KK, where B's row
 * ci * KK + kk, column p is input channel ci's value under tap kk of
 * output position p's window (0 in padding): im2col's matrix
 * (Chellapilla, Puri and Simard, 2006), read from the input as the tiles
 * are loaded instead of being written out first. MatMul and Gemm are the
 * same kernel with B a matrix as it lies ([K, N], or [N, K] for Gemm's
 * transB) and A maybe transposed. The tiling is the classic local-memory
 * SGEMM (Nugteren, "Tutorial: OpenCL SGEMM tuning for Kepler", 2014:
 * kernels 3-6): a work-group of NN_CG_WG x NN_CG_WG items computes a
 * [NN_CG_TM, NN_CG_TN] tile of Y, loading a [NN_CG_TK, NN_CG_TM] slice of
 * A and a [NN_CG_TK, NN_CG_TN] slice of B into local memory per step of
 * k; each item keeps NN_CG_R x NN_CG_R sums, rows ty + i * NN_CG_WG and
 * the NN_CG_R columns from tx * NN_CG_R as one vector (PoCL's cpu device
 * vectorizes that; across work-items it did not, and ran 2x slower). Sums
 * run in blocks of NN_CG_KBLOCK terms added onto the total, as the cpu's
 * GEMM blocks k (a long sum's rounding error grows with its length). The
 * epilogue computes alpha * sum + beta * C (C: Conv's bias, Gemm's C,
 * broadcast by its strides) and applies TGC_ACT as the tile is stored.
 * Global: [ceil(out_size / TN) * WG, ceil(M/group / TM) * WG, N * group];
 * local [WG, WG, 1]. */
#define NN_CG_WG 8
#define NN_CG_ITEMS (NN_CG_WG * NN_CG_WG)
#ifndef NN_CG_R
#define NN_CG_R 8 /* an item's columns, one vector; 4 in the build for small layers (tgc_cl_enqueue_act's defines) */
#endif
#if NN_CG_R == 8
typedef float8 nn_cg_vec;
#define NN_CG_VLOAD vload8
#define NN_CG_VSTORE vstore8
#elif NN_CG_R == 4
typedef float4 nn_cg_vec;
#define NN_CG_VLOAD vload4
#define NN_CG_VSTORE vstore4
#else
#error "NN_CG_R must be 4 or 8"
#endif
#define NN_CG_TM (NN_CG_WG * NN_CG_R)
#define NN_CG_TN (NN_CG_WG * NN_CG_R)
#define NN_CG_TK 32
#define NN_CG_KBLOCK 256
/* B's loads: NN_CG_COL_ITEMS items a column (NN_CG_ITEMS >= NN_CG_TN) */
#define NN_CG_COL_ITEMS (NN_CG_ITEMS / NN_CG_TN)

/* How B is read. */
#define NN_B_IM2COL 0 /* im2col of the input (the window) */
#define NN_B_ROWS 1   /* B [K, out_size] as it lies, row stride in_size */
#define NN_B_COLS 2   /* B' [out_size, K] as it lies (Gemm's transB), row stride in_size */

/* The implicit GEMM's sizes, by value (host: tgc_cl_gemm_shape in
 * kernels_gemm_cl.c): longs, then ints, then floats, so that host and
 * device lay it out alike. Image q, group g of Y is at
 * (q * m_count + g * m_group) * out_size; of the input (B's source) at
 * (q * channels + g * cg) * in_size; of A at q * a_img + g * m_group * K. */
typedef struct nn_gemm {
    long c_rs, c_cs; /* C's strides over Y's rows (output channels) and columns (0: broadcast) */
    long a_img;      /* A's offset from one image to the next (0: one A for all) */
    long a_off, b_off, y_off; /* where A, B's source and Y begin in their buffers */
    int channels, m_count, cg, m_group, group, in_size, out_size, kk_count;
    int b_kind;      /* NN_B_* */
    int a_trans;     /* A stored [K, M/group] (row stride m_group) */
    int has_c;       /* C is there (else 0) */
    float alpha, beta;
} nn_gemm;

/* Rows k0 + r0, k0 + r0 + NN_CG_COL_ITEMS, ... below k0 + NN_CG_TK of B's
 * column p (0 past k or out_size) into bs[r * NN_CG_TN + pp], for the
 * image and group whose input channels
 * start at xg. The window's start is found once and the taps walked as an
 * odometer (channel ci, tap t), so a column costs a few divisions per
 * tile, not per value. */
static void nn_conv_column(const int n, __global const NN_T *xg, const nn_window *w, int in_size, int out_size,
                           int kk_count, int k, int k0, int p, int pp, int r0, __local float *bs) {
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    if (p < out_size) nn_window_start(w, n, p, start);
    int ci = (k0 + r0) / kk_count, tap = (k0 + r0) % kk_count, rest = tap;
    for (int a = n - 1; a >= 0; a--) {
        t[a] = rest % w->k[a];
        rest /= w->k[a];
    }
    for (int r = r0; r < NN_CG_TK; r += NN_CG_COL_ITEMS) {
        float v = 0.0f;
        if (p < out_size && k0 + r < k) {
            int off = nn_tap_offset(w, n, start, t);
            if (off >= 0) v = NN_LD(xg, (long)ci * in_size + off);
        }
        bs[r * NN_CG_TN + pp] = v;
        for (int step = 0; step < NN_CG_COL_ITEMS; step++) {
            nn_tap_next(w, n, t);
            if (++tap == kk_count) tap = 0, ci++;
        }
    }
}

static void nn_conv_gemm(__global const NN_T *x, __global const NN_T *wt, __global const NN_T *c,
                         __global NN_T *y, const nn_window *w, const nn_gemm *s, __local float *as,
                         __local float *bs) {
    int tx = (int)get_local_id(0), ty = (int)get_local_id(1), lid = ty * NN_CG_WG + tx;
    int p0 = (int)get_group_id(0) * NN_CG_TN, m0 = (int)get_group_id(1) * NN_CG_TM;
    long z = (long)get_global_id(2), image = z / s->group;
    int g = (int)(z % s->group), k = s->cg * s->kk_count, m_group = s->m_group, out_size = s->out_size;
    int in_size = s->in_size;
    __global const NN_T *xg = x + s->b_off + (image * s->channels + (long)g * s->cg) * in_size;
    __global const NN_T *wg = wt + s->a_off + image * s->a_img + (long)g * m_group * k;
    nn_cg_vec acc[NN_CG_R], part[NN_CG_R];
    for (int i = 0; i < NN_CG_R; i++) acc[i] = part[i] = (nn_cg_vec)(0.0f);
    for (int k0 = 0; k0 < k; k0 += NN_CG_TK) {
        for (int e = lid; e < NN_CG_TK * NN_CG_TM; e += NN_CG_ITEMS) {
            int kq, mm; /* neighbours read along A's rows as it lies */
            if (s->a_trans) kq = e / NN_CG_TM, mm = e % NN_CG_TM;
            else kq = e % NN_CG_TK, mm = e / NN_CG_TK;
            int row = m0 + mm, col = k0 + kq;
            float v = 0.0f;
            if (row < m_group && col < k) v = NN_LD(wg, s->a_trans ? (long)col * m_group + row : (long)row * k + col);
            as[kq * NN_CG_TM + mm] = v;
        }
        /* B: item lid loads column lid % TN, every NN_CG_COL_ITEMS-th row from lid / TN; neighbours read
         * neighbouring positions */
        int pp = lid % NN_CG_TN, r0 = lid / NN_CG_TN, p = p0 + pp;
        if (s->b_kind == NN_B_ROWS) {
            for (int r = r0; r < NN_CG_TK; r += NN_CG_COL_ITEMS)
                bs[r * NN_CG_TN + pp] = p < out_size && k0 + r < k ? NN_LD(xg, (long)(k0 + r) * in_size + p) : 0.0f;
        } else if (s->b_kind == NN_B_COLS) {
            for (int r = r0; r < NN_CG_TK; r += NN_CG_COL_ITEMS)
                bs[r * NN_CG_TN + pp] = p < out_size && k0 + r < k ? NN_LD(xg, (long)p * in_size + k0 + r) : 0.0f;
        } else {
#define NN_CONV_COLUMN(n) nn_conv_column(n, xg, w, in_size, out_size, s->kk_count, k, k0, p, pp, r0, bs)
            NN_BY_AXES(NN_CONV_COLUMN, w->n)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kq = 0; kq < NN_CG_TK; kq++) {
            nn_cg_vec bv = NN_CG_VLOAD(0, bs + kq * NN_CG_TN + tx * NN_CG_R);
            for (int i = 0; i < NN_CG_R; i++)
                part[i] = mad((nn_cg_vec)(as[kq * NN_CG_TM + ty + i * NN_CG_WG]), bv, part[i]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((k0 + NN_CG_TK) % NN_CG_KBLOCK == 0 || k0 + NN_CG_TK >= k)
            for (int i = 0; i < NN_CG_R; i++) {
                acc[i] += part[i];
                part[i] = (nn_cg_vec)(0.0f);
            }
    }
    int pc = p0 + tx * NN_CG_R; /* the item's first column */
    for (int i = 0; i < NN_CG_R; i++) {
        int m = m0 + ty + i * NN_CG_WG;
        if (m >= m_group) continue;
        long mo = (long)g * m_group + m;
        nn_cg_vec v = acc[i], cv = (nn_cg_vec)(0.0f);
        if (s->alpha != 1.0f) v *= s->alpha;
        if (s->has_c && s->c_cs == 0) {
            cv = (nn_cg_vec)(NN_LD(c, mo * s->c_rs));
        } else if (s->has_c) {
            float cs[NN_CG_R];
            for (int j = 0; j < NN_CG_R; j++)
                cs[j] = pc + j < out_size ? NN_LD(c, mo * s->c_rs + (pc + j) * s->c_cs) : 0.0f;
            cv = NN_CG_VLOAD(0, cs);
        }
        if (s->has_c) v += s->beta == 1.0f ? cv : s->beta * cv;
        float vs[NN_CG_R];
        NN_CG_VSTORE(v, 0, vs);
        __global NN_T *yr = y + s->y_off + (image * s->m_count + mo) * out_size;
        for (int j = 0; j < NN_CG_R && pc + j < out_size; j++) NN_ST(yr, pc + j, TGC_ACT(vs[j]));
    }
}

__kernel void NN_NAME(nn_conv_gemm)(__global const NN_T *x, __global const NN_T *wt, __global const NN_T *c,
                                    __global NN_T *y, nn_window w, nn_gemm s) {
    __local float as[NN_CG_TK * NN_CG_TM], bs[NN_CG_TK * NN_CG_TN];
    /* (The switch over the number of axes is in the loads, not around this body as in the other windowed
     * kernels: PoCL 3.1's cpu device gave wrong sums now and then with the body's barriers inside its cases.) */
    nn_conv_gemm(x, wt, c, y, &w, &s, as, bs);
}

/* Direct convolution, one work-item per output (n, m, position): y = bias
 * + the sum over the group's channels and the taps, in the cpu's order
 * (channel, then row-major tap). For depthwise Conv (one input channel per
 * group), where im2col would copy KK times the input to multiply it by a
 * one-row matrix. Global: [N * M * out_size]. */
static void nn_conv_direct(const int n, __global const NN_T *x, __global const NN_T *wt, __global const NN_T *b,
                           int has_bias, __global NN_T *y, const nn_window *w, long channels, long m_count,
                           long cg, long m_group, int in_size, int out_size, int kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long m = idx / out_size % m_count, image = idx / out_size / m_count;
    long g = m / m_group;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, (int)(idx % out_size), start);
    for (int a = 0; a < n; a++) t[a] = 0;
    float acc = has_bias ? NN_LD(b, m) : 0.0f;
    for (long ci = 0; ci < cg; ci++) {
        __global const NN_T *xc = x + (image * channels + g * cg + ci) * in_size;
        __global const NN_T *wc = wt + (m * cg + ci) * kk_count;
        for (int kk = 0; kk < kk_count; kk++) { /* t wraps to zeros after the last tap */
            int off = nn_tap_offset(w, n, start, t);
            if (off >= 0) acc += NN_LD(wc, kk) * NN_LD(xc, off);
            nn_tap_next(w, n, t);
        }
    }
    NN_ST(y, idx, TGC_ACT(acc));
}

__kernel void NN_NAME(nn_conv_direct)(__global const NN_T *x, __global const NN_T *wt, __global const NN_T *b,
                                      int has_bias, __global NN_T *y, nn_window w, long channels, long m_count,
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
static void nn_max_pool(const int n, __global const NN_T *x, __global NN_T *y, __global long *indices,
                        int want_indices, int storage_order, const nn_window *w, int in_size, int out_size,
                        int kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long p = idx / out_size;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, (int)(idx % out_size), start);
    for (int a = 0; a < n; a++) t[a] = 0;
    __global const NN_T *xp = x + p * in_size;
    float best = NAN;
    int best_off = -1;
    for (int kk = 0; kk < kk_count; kk++) {
        int off = nn_tap_offset(w, n, start, t);
        nn_tap_next(w, n, t);
        if (off < 0) continue;
        float v = NN_LD(xp, off);
        if (best_off < 0 || v > best || (isnan(v) && !isnan(best))) {
            best = v;
            best_off = off;
        }
    }
    NN_ST(y, idx, best);
    if (want_indices)
        indices[idx] = best_off < 0 ? -1 : p * in_size + (storage_order ? nn_column_major(w, best_off) : best_off);
}

__kernel void NN_NAME(nn_max_pool)(__global const NN_T *x, __global NN_T *y, __global long *indices, int want_indices,
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
static void nn_average_pool(const int n, __global const NN_T *x, __global NN_T *y, int include_pad,
                            const nn_window *w, int in_size, int out_size, int kk_count, long total) {
    long idx = get_global_id(0);
    if (idx >= total) return;
    long p = idx / out_size;
    int start[NN_MAX_AXES], t[NN_MAX_AXES];
    nn_window_start(w, n, (int)(idx % out_size), start);
    for (int a = 0; a < n; a++) t[a] = 0;
    __global const NN_T *xp = x + p * in_size;
    float sum = 0.0f;
    for (int kk = 0; kk < kk_count; kk++) {
        int off = nn_tap_offset(w, n, start, t);
        nn_tap_next(w, n, t);
        if (off >= 0) sum += NN_LD(xp, off);
    }
    long count = 1;
    for (int a = 0; a < n; a++) {
        int lo = include_pad ? -w->pb[a] : 0, hi = include_pad ? w->in[a] + w->pe[a] : w->in[a], c = 0;
        for (int i = start[a], k = 0; k < w->k[a]; k++, i += w->d[a]) c += i >= lo && i < hi;
        count *= c;
    }
    NN_ST(y, idx, count > 0 ? sum / (float)count : NAN);
}

__kernel void NN_NAME(nn_average_pool)(__global const NN_T *x, __global NN_T *y, int include_pad, nn_window w,
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
__kernel __attribute__((reqd_work_group_size(NN_GROUP, 1, 1))) void NN_NAME(nn_global_average_pool)(
    __global const NN_T *x, __global NN_T *y, long size) {
    __local nn_acc scratch[NN_GROUP];
    long p = get_group_id(0);
    __global const NN_T *xp = x + p * size;
    nn_acc sum = 0;
    for (long i = get_local_id(0); i < size; i += NN_GROUP) sum += NN_LD(xp, i);
    sum = nn_group_sum(sum, scratch);
    if (get_local_id(0) == 0) NN_ST(y, p, (float)(sum / (nn_acc)size));
}

/* ---- Normalisation -------------------------------------------------------------------- */

/* BatchNormalization (inference): y = x * a + (bias - mean * a) with a =
 * scale / sqrt(var + eps), per channel (axis 1). Elementwise, so y may be
 * x. Global: [total]. */
__kernel void NN_NAME(nn_batch_norm)(__global const NN_T *x, __global NN_T *y, __global const NN_T *scale,
                                     __global const NN_T *bias, __global const NN_T *mean, __global const NN_T *var,
                                     float eps, long channels, long size, long total) {
    long i = get_global_id(0);
    if (i >= total) return;
    long c = i / size % channels;
    float a = NN_LD(scale, c) / sqrt(NN_LD(var, c) + eps);
    NN_ST(y, i, NN_LD(x, i) * a + (NN_LD(bias, c) - NN_LD(mean, c) * a));
}

/* LayerNormalization: one work-group per row of `size` (> 0) elements.
 * Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + eps) (two
 * passes, sums in nn_acc), y = (x - Mean) * InvStdDev * scale + bias;
 * scale and bias hold one value per position in a row (bias only when
 * has_bias). Global: [rows * NN_GROUP], local [NN_GROUP]. */
__kernel __attribute__((reqd_work_group_size(NN_GROUP, 1, 1))) void NN_NAME(nn_layer_norm)(
    __global const NN_T *x, __global NN_T *y, __global const NN_T *scale, __global const NN_T *bias,
    int has_bias, __global float *mean_out, int want_mean, __global float *inv_out, int want_inv, float eps,
    long size) {
    __local nn_acc scratch[NN_GROUP];
    long r = get_group_id(0);
    __global const NN_T *xr = x + r * size;
    __global NN_T *yr = y + r * size;
    nn_acc sum = 0;
    for (long i = get_local_id(0); i < size; i += NN_GROUP) sum += NN_LD(xr, i);
    nn_acc mean = nn_group_sum(sum, scratch) / (nn_acc)size;
    nn_acc sq = 0;
    for (long i = get_local_id(0); i < size; i += NN_GROUP) sq += (NN_LD(xr, i) - mean) * (NN_LD(xr, i) - mean);
    sq = nn_group_sum(sq, scratch);
    float inv = (float)(1 / sqrt(sq / (nn_acc)size + (nn_acc)eps)), mf = (float)mean;
    for (long i = get_local_id(0); i < size; i += NN_GROUP)
        NN_ST(yr, i, (NN_LD(xr, i) - mf) * inv * NN_LD(scale, i) + (has_bias ? NN_LD(bias, i) : 0.0f));
    if (get_local_id(0) == 0) {
        if (want_mean) mean_out[r] = mf;
        if (want_inv) inv_out[r] = inv;
    }
}
