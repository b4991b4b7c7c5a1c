/* The OpenCL C side of the gpu nn kernels (float32); the host side, and
 * what each kernel is for, is in devices/opencl/kernels_nn.c. GEMM itself
 * is CLBlast's: here are the kernels around it (im2col, fills, bias) and
 * the ops that are not a GEMM (direct depthwise Conv, pooling, norms).
 *
 * Every kernel takes its global size rounded up by the host and returns
 * for work-items past the end. Flat indices are long: a tensor may have
 * more than 2^31 elements; one axis never has.
 *
 * Windows (Conv, MaxPool, AveragePool) use the geometry of
 * devices/cpu/kernels_pool.c, passed by value as nn_window (ints only, so
 * host and device lay it out alike): output index o of axis a reads input
 * indices o * s[a] - pb[a] + t * d[a], t < k[a]; outside [0, in[a]) is
 * padding. Taps are visited in row-major order, as on the cpu, so sums and
 * ties come out in the same order. */

#define NN_MAX_AXES 8

typedef struct nn_window {
    int n;                 /* spatial axes */
    int in[NN_MAX_AXES];   /* input sizes */
    int out[NN_MAX_AXES];  /* output sizes */
    int k[NN_MAX_AXES];    /* kernel sizes */
    int s[NN_MAX_AXES];    /* strides */
    int d[NN_MAX_AXES];    /* dilations */
    int pb[NN_MAX_AXES];   /* pads at the beginning */
    int pe[NN_MAX_AXES];   /* pads at the end */
} nn_window;

/* Sums of many terms (LayerNorm statistics, GlobalAveragePool) in double
 * where the device has it, as the cpu kernels do; float elsewhere. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double nn_acc;
#else
typedef float nn_acc;
#endif

#define NN_GROUP 64 /* work-group size of the reducing kernels */

/* ---- Fills -------------------------------------------------------------------- */

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

/* y[j] = x[offset of j in dims, with strides] over count elements: an
 * operand broadcast (strides 0 along its broadcast axes) expanded to dims. */
typedef struct nn_expand_geom {
    int n;
    int dims[NN_MAX_AXES];
    long strides[NN_MAX_AXES];
} nn_expand_geom;

__kernel void nn_expand_f32(__global const float *x, __global float *y, nn_expand_geom g, long count) {
    long j = get_global_id(0);
    if (j >= count) return;
    long rest = j, off = 0;
    for (int a = g.n - 1; a >= 0; a--) {
        off += rest % g.dims[a] * g.strides[a];
        rest /= g.dims[a];
    }
    y[j] = x[off];
}

/* ---- Conv --------------------------------------------------------------------- */

/* Y [N, M, out] starts as the bias: y[i] = b[(i / out_size) % m]. */
__kernel void nn_bias_fill_f32(__global float *y, __global const float *b, long m, long out_size, long total) {
    long i = get_global_id(0);
    if (i < total) y[i] = b[(i / out_size) % m];
}

/* im2col (Chellapilla, Puri and Simard, 2006) for `images` images from x
 * (each [C, D1..Dn], image_stride floats apart): for image q, the matrix
 * col_q [C * KK, cols] (cols_stride = C * KK * cols floats apart), row
 * ci * KK + kk for channel ci and row-major tap kk, column j for output
 * position first + j (row-major over the output axes), padding as 0. A
 * group's rows are a contiguous block, so one col serves every group.
 * Global: [cols, images * C * KK]. */
__kernel void nn_im2col_f32(__global const float *x, __global float *col, nn_window w, long image_stride,
                            long in_size, long rows, long cols, long first) {
    long j = get_global_id(0), r = get_global_id(1);
    if (j >= cols || r >= rows) return;
    long kk_count = 1;
    for (int a = 0; a < w.n; a++) kk_count *= w.k[a];
    long q = r / rows_per_image_dummy_guard(0); /* replaced below */
}
