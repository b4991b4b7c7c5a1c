/* Matrix-vector products for tgc_cpu_sgemm_one's one-row and one-column
 * GEMMs (kernels_nn.h): a classifier's Gemm on one image, an LSTM's
 * recurrent product each step. They read each matrix element once, so
 * their speed is the memory's: the loops below read short rows one after
 * another and long ones 4 at a time (TGC_GEMV_ROWS_A_PASS, ew.h), 16-lane
 * partial sums in registers (dot form), or keep a block of columns' sums
 * in L1, reading the matrix row after row (update form; for a constant B,
 * from column panels packed once, each block of 64 columns one stream),
 * and are compiled for AVX-512, AVX2 and the baseline (target_clones.h). OpenBLAS's
 * sgemv ran MobileNetV2's [1, 1280] x [1280, 1000] classifier in 160-200
 * us where ONNX Runtime took 100-118 (one Zen 5 core).
 *
 * Every output's arithmetic is fixed by the sizes alone: in the dot form,
 * 16 running sums over k in steps of 16 (mul, then add: no FMA is
 * contracted in ISO C), added pairwise, then the tail of k in order; in
 * the update form, one running sum a column over k in order. The bits do
 * not depend on the vector width, on which rows or columns a piece holds,
 * or on the thread count. */
#include "devices/cpu/ew.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/target_clones.h"

#include <string.h>

typedef float v16 __attribute__((vector_size(64)));

/* Helpers as macros: a function taking or returning a 64-byte vector
 * would have a different ABI in the baseline clone. */
#define LOAD16(p) ({ v16 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define STORE16(p, v) do { v16 v_ = (v); memcpy((p), &v_, sizeof v_); } while (0)

/* The 16 lanes added pairwise: ((l0 + l8) + (l4 + l12)) + ... in a fixed
 * tree, the same at every vector width. */
static inline float lanes_sum(const v16 *v) {
    float s8[8], s4[4];
    for (int i = 0; i < 8; i++) s8[i] = (*v)[i] + (*v)[i + 8];
    for (int i = 0; i < 4; i++) s4[i] = s8[i] + s8[i + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

/* *v = s in every lane (one broadcast: a loop over the lanes compiled to
 * 16 masked ones). */
static inline void splat(v16 *v, float s) {
    typedef int32_t i16 __attribute__((vector_size(64)));
    *v = __builtin_shuffle((v16){s}, (i16){0});
}

/* alpha * dot + beta * y, y unread when beta is 0. */
static inline float scaled(float alpha, float dot, float beta, const float *y) {
    return beta == 0.0f ? alpha * dot : alpha * dot + beta * *y;
}

/* One row's dot product with x over k (the dot form's arithmetic). */
static inline float row_dot(const float *r, const float *x, int64_t k) {
    v16 s = {0};
    int64_t kk = 0;
    for (; kk + 16 <= k; kk += 16) s += LOAD16(r + kk) * LOAD16(x + kk);
    float d = lanes_sum(&s);
    for (; kk < k; kk++) d += r[kk] * x[kk];
    return d;
}

TGC_CPU_CLONES void tgc_cpu_gemv_dot(int64_t n, int64_t k, float alpha, const float *mat, int64_t ld, const float *x,
                                     float beta, float *y, int64_t incy) {
    int64_t j = 0;
    if (TGC_GEMV_ROWS_A_PASS(k * (int64_t)sizeof(float)) == 1) {
        for (; j < n; j++) y[j * incy] = scaled(alpha, row_dot(mat + j * ld, x, k), beta, y + j * incy);
        return;
    }
    for (; j + 4 <= n; j += 4) { /* four rows at once: x's vectors loaded once for them */
        const float *r0 = mat + j * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
        v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
        int64_t kk = 0;
        for (; kk + 16 <= k; kk += 16) {
            v16 xv = LOAD16(x + kk);
            s0 += LOAD16(r0 + kk) * xv;
            s1 += LOAD16(r1 + kk) * xv;
            s2 += LOAD16(r2 + kk) * xv;
            s3 += LOAD16(r3 + kk) * xv;
        }
        float d0 = lanes_sum(&s0), d1 = lanes_sum(&s1), d2 = lanes_sum(&s2), d3 = lanes_sum(&s3);
        for (; kk < k; kk++) {
            d0 += r0[kk] * x[kk];
            d1 += r1[kk] * x[kk];
            d2 += r2[kk] * x[kk];
            d3 += r3[kk] * x[kk];
        }
        float *yj = y + j * incy;
        yj[0] = scaled(alpha, d0, beta, yj);
        yj[incy] = scaled(alpha, d1, beta, yj + incy);
        yj[2 * incy] = scaled(alpha, d2, beta, yj + 2 * incy);
        yj[3 * incy] = scaled(alpha, d3, beta, yj + 3 * incy);
    }
    for (; j < n; j++) y[j * incy] = scaled(alpha, row_dot(mat + j * ld, x, k), beta, y + j * incy);
}

/* Columns the update form sums at once (16 KiB of running sums in L1). */
#define UPDATE_COLS 4096

TGC_CPU_CLONES void tgc_cpu_gemv_update(int64_t n, int64_t k, float alpha, const float *mat, int64_t ld,
                                        const float *x, float beta, float *y) {
    /* A block of columns' running sums in memory, each row of the block
     * added in turn: the matrix is read row after row, a run of up to
     * UPDATE_COLS floats at a time, which the hardware prefetchers follow.
     * (64 columns' sums in registers over every row walked the matrix
     * down its columns, 256 bytes a row a page apart: a [1, 4096] x
     * [4096, 4096] product took 14.9 ms at 1 thread, where ONNX Runtime
     * took 5.7.) */
    float sums[UPDATE_COLS] __attribute__((aligned(64)));
    for (int64_t j0 = 0; j0 < n; j0 += UPDATE_COLS) {
        int64_t w = n - j0 < UPDATE_COLS ? n - j0 : UPDATE_COLS;
        memset(sums, 0, (size_t)w * sizeof *sums);
        int64_t kk = 0;
        for (; kk + 4 <= k; kk += 4) { /* four rows a pass: the sums loaded and stored once for them */
            const float *r0 = mat + kk * ld + j0, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
            v16 a0, a1, a2, a3;
            splat(&a0, x[kk]);
            splat(&a1, x[kk + 1]);
            splat(&a2, x[kk + 2]);
            splat(&a3, x[kk + 3]);
            int64_t j = 0;
            for (; j + 16 <= w; j += 16) {
                v16 s = LOAD16(sums + j) + a0 * LOAD16(r0 + j);
                s = s + a1 * LOAD16(r1 + j);
                s = s + a2 * LOAD16(r2 + j);
                STORE16(sums + j, s + a3 * LOAD16(r3 + j));
            }
            for (; j < w; j++)
                sums[j] = (((sums[j] + x[kk] * r0[j]) + x[kk + 1] * r1[j]) + x[kk + 2] * r2[j]) + x[kk + 3] * r3[j];
        }
        for (; kk < k; kk++) {
            const float *r = mat + kk * ld + j0;
            v16 a;
            splat(&a, x[kk]);
            int64_t j = 0;
            for (; j + 16 <= w; j += 16) STORE16(sums + j, LOAD16(sums + j) + a * LOAD16(r + j));
            for (; j < w; j++) sums[j] += x[kk] * r[j];
        }
        v16 va, vb;
        splat(&va, alpha);
        splat(&vb, beta);
        float *yj = y + j0;
        int64_t j = 0;
        for (; j + 16 <= w; j += 16) {
            if (beta == 0.0f) STORE16(yj + j, va * LOAD16(sums + j));
            else STORE16(yj + j, va * LOAD16(sums + j) + vb * LOAD16(yj + j));
        }
        for (; j < w; j++) yj[j] = scaled(alpha, sums[j], beta, yj + j);
    }
}

/* The update form on B packed in column panels (kernels_nn.h): a block of
 * TGC_GEMV_PANEL columns lies [k][width] in one run, so a block is one
 * stream from first element to last and a piece of whole blocks reads
 * nothing outside its own bytes. (The update form on B as it lies reads a
 * piece's columns as runs of 1 KB a row apart: a chain of 12 products
 * [1, 1024] x [1024, 1024] took 3.85-4.0 ms at 1 thread there, against
 * ONNX Runtime's 2.43-2.60 on its prepacked B; docs/cpu-speed.md.) */

static inline int64_t panel_width(int64_t n, int64_t j0) {
    int64_t rest = n - j0;
    return rest >= TGC_GEMV_PANEL ? TGC_GEMV_PANEL : tgc_cpu_gemv_panels_cols(rest);
}

void tgc_cpu_gemv_panels_pack(int64_t n, int64_t k, const float *mat, int64_t ld_k, int64_t ld_n, float *panels) {
    for (int64_t j0 = 0; j0 < n; j0 += TGC_GEMV_PANEL) {
        int64_t w = panel_width(n, j0), real = n - j0 < w ? n - j0 : w;
        float *dst = panels + j0 * k;
        for (int64_t kk = 0; kk < k; kk++, dst += w) {
            const float *src = mat + kk * ld_k + j0 * ld_n;
            if (ld_n == 1) memcpy(dst, src, (size_t)real * sizeof *dst);
            else
                for (int64_t j = 0; j < real; j++) dst[j] = src[j * ld_n];
            memset(dst + real, 0, (size_t)(w - real) * sizeof *dst);
        }
    }
}

/* One block's sums, its columns 16 at a time: v vectors of running sums,
 * each k-th row of the block added in order (the update form's order). */
#define PANEL_SUMS(v)                                                                                              \
    do {                                                                                                           \
        for (int64_t kk = 0; kk < k; kk++) {                                                                       \
            v16 a;                                                                                                 \
            splat(&a, x[kk]);                                                                                      \
            const float *r = p + kk * (v) * 16;                                                                    \
            for (int i = 0; i < (v); i++) s[i] = s[i] + a * LOAD16(r + 16 * i);                                    \
        }                                                                                                          \
    } while (0)

TGC_CPU_CLONES void tgc_cpu_gemv_panels(int64_t n, int64_t k, float alpha, const float *panels, const float *x,
                                        float beta, float *y) {
    for (int64_t j0 = 0; j0 < n; j0 += TGC_GEMV_PANEL) {
        int64_t w = panel_width(n, j0), real = n - j0 < w ? n - j0 : w;
        const float *p = panels + j0 * k;
        v16 s[TGC_GEMV_PANEL / 16] = {{0}};
        switch (w / 16) { /* constant trip counts: the sums stay in registers */
        case 4: PANEL_SUMS(4); break;
        case 3: PANEL_SUMS(3); break;
        case 2: PANEL_SUMS(2); break;
        default: PANEL_SUMS(1); break;
        }
        float sums[TGC_GEMV_PANEL];
        memcpy(sums, s, sizeof sums);
        for (int64_t j = 0; j < real; j++) y[j0 + j] = scaled(alpha, sums[j], beta, y + j0 + j);
    }
}
