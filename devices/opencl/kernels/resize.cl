/* Resize (float32): one work-item per output element. The host builds each
 * resized axis's sampling table (devices/resize_geometry.c: input position
 * and weight per tap, an "outside" flag per output index), so every mode
 * and coordinate transformation of the cpu kernel samples the same
 * positions here; the device sums the product of the axes' weights over
 * every combination of taps (2^k for linear on k axes). */

/* Mirrors tgc_cl_resize_geom (devices/opencl/kernels_resize.c): longs only. */
typedef struct resize_geom {
    long rank;
    long out[8];       /* Y's dims */
    long in_stride[8]; /* X's strides, in elements */
    long taps[8];      /* taps per output index; 0: the axis passes through */
    long off[8];       /* where the axis's indices (ti) and weights (tw) start */
    long flag_off[8];  /* where its outside flags (ti) start */
} resize_geom;

__kernel void resize_f32(__global const float *x, __global float *y, __global const int *ti,
                         __global const float *tw, resize_geom g, float extrapolation, long total) {
    long id = get_global_id(0);
    if (id >= total) return;
    long rem = id, base = 0;
    int axis[8];
    long row[8];
    int nr = 0;
    for (int a = (int)g.rank - 1; a >= 0; a--) {
        long j = rem % g.out[a];
        rem /= g.out[a];
        if (g.taps[a] == 0) {
            base += j * g.in_stride[a];
        } else {
            if (ti[g.flag_off[a] + j]) {
                y[id] = extrapolation;
                return;
            }
            axis[nr] = a;
            row[nr] = g.off[a] + j * g.taps[a];
            nr++;
        }
    }
    int k[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float acc = 0.0f;
    for (;;) {
        float w = 1.0f;
        long at = base;
        for (int r = 0; r < nr; r++) {
            long e = row[r] + k[r];
            w *= tw[e];
            at += (long)ti[e] * g.in_stride[axis[r]];
        }
        if (w != 0.0f) acc += w * x[at];
        int r = 0;
        for (; r < nr; r++) {
            if (++k[r] < g.taps[axis[r]]) break;
            k[r] = 0;
        }
        if (r == nr) break;
    }
    y[id] = acc;
}

/* Bilinear over the last two axes in ONNX Runtime's arithmetic (the host's
 * tables: devices/resize_geometry.h, tgc_resize_bilinear_axis): idx holds
 * i1 and i2 of the height (out_h each), then of the width (out_w each),
 * wt their weights in the same layout; the four corner products summed in
 * ORT's order, each rounded (no contraction into fma), so values equal the
 * cpu kernel's and ORT's bit for bit. */
__kernel void resize_bilinear_f32(__global const float *x, __global float *y, __global const int *idx,
                                  __global const float *wt, long in_h, long in_w, long out_h, long out_w,
                                  long total) {
#pragma OPENCL FP_CONTRACT OFF
    long id = get_global_id(0);
    if (id >= total) return;
    long q = id % out_w, r = id / out_w;
    long j = r % out_h, o = r / out_h;
    __global const float *plane = x + o * in_h * in_w;
    __global const float *r1 = plane + (long)idx[j] * in_w, *r2 = plane + (long)idx[out_h + j] * in_w;
    float dy2 = wt[j], dy1 = wt[out_h + j];
    int x1 = idx[2 * out_h + q], x2 = idx[2 * out_h + out_w + q];
    float dx2 = wt[2 * out_h + q], dx1 = wt[2 * out_h + out_w + q];
    y[id] = dx2 * dy2 * r1[x1] + dx1 * dy2 * r1[x2] + dx2 * dy1 * r2[x1] + dx1 * dy1 * r2[x2];
}
