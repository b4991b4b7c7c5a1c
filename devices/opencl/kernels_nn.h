/* The gpu (OpenCL) nn kernels, float32 and float16 (stored as half,
 * computed in float32: kernels/nn.cl's NN_HALF build), private to devices/opencl/. Their
 * OpenCL C is devices/opencl/kernels/nn.cl; the host sides are
 *     kernels_gemm_cl.c  MatMul, Gemm and Conv: CLBlast's SGEMM, with
 *                        im2col for Conv (and a direct depthwise kernel)
 *     kernels_nn.c       MaxPool, AveragePool, GlobalAveragePool,
 *                        BatchNormalization, LayerNormalization, the
 *                        registry's list (tgc_gpu_kernels_nn), and the
 *                        helpers below.
 * Each checks its inputs and attributes as the cpu kernel of the same op
 * does (devices/cpu/kernels_*.c; both read windows through
 * devices/window.h), so the two agree on what is accepted and on the
 * results.
 *
 * Example usage (inside a gpu kernel):
 *     tgc_status st = tgc_cl_nn_sgemm(c, false, false, m, n, k, 1.0f, a->buf->mem, 0, k,
 *                                     b->buf->mem, 0, n, 0.0f, y->buf->mem, 0, n);
 *     if (st != TGC_OK) return st;    // c->error names CLBlast's status code
 */
#ifndef TGC_DEVICES_OPENCL_KERNELS_NN_H
#define TGC_DEVICES_OPENCL_KERNELS_NN_H

#include "devices/kernel_checks.h"
#include "devices/opencl/opencl.h"
#include "graph/elementwise.h"
#include "devices/window.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- Kernels ------------------------------------------------------------- */

tgc_status tgc_gpu_matmul(tgc_kernel_ctx *c);
tgc_status tgc_gpu_gemm(tgc_kernel_ctx *c);
tgc_status tgc_gpu_conv(tgc_kernel_ctx *c);

/* tgc_kernel_footprint_fn of MatMul: a workspace (no kernel caches on the
 * gpu yet): a bound of CLBlast's temporary buffer for the largest SGEMM
 * call of a batched MatMul (from the device's allocator), in bytes. Gemm,
 * Conv and a MatMul that is one GEMM (the implicit GEMM) need none. */
void tgc_gpu_matmul_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out);

/* ---- Shared helpers ------------------------------------------------------ */

/* A cl_mem (a buffer's mem, or a scratch buffer) as a kernel argument. */
#define TGC_CL_MEM(m) ((tgc_cl_arg){sizeof(cl_mem), &(m)})

/* nn.cl's nn_window: the window geometry of tgc_window as OpenCL ints.
 * Passed by value; ints only, so host and device lay it out alike. */
#define TGC_CL_NN_MAX_AXES 8
typedef struct tgc_cl_window {
    cl_int n;
    cl_int in[TGC_CL_NN_MAX_AXES], out[TGC_CL_NN_MAX_AXES], k[TGC_CL_NN_MAX_AXES], s[TGC_CL_NN_MAX_AXES];
    cl_int d[TGC_CL_NN_MAX_AXES], pb[TGC_CL_NN_MAX_AXES], pe[TGC_CL_NN_MAX_AXES];
} tgc_cl_window;

/* Converts *w; fails through tgc_kernel_fail if an axis size passes
 * INT_MAX / 2, or a plane's positions or a window's taps pass INT_MAX. */
tgc_status tgc_cl_nn_window(tgc_kernel_ctx *c, const tgc_window *w, tgc_cl_window *out);

/* y[0..numel) = row r (a unary row of graph/elementwise.def) of
 * x[0..numel), both of dtype t (float32 or float16), with parameters
 * P0..P2, through the row's OpenCL kernel
 * (devices/opencl/kernels_elementwise.c); x may be y (each element is read
 * before it is written). A row without a gpu kernel at t fails through
 * tgc_kernel_fail. */
tgc_status tgc_cl_ew_unary(tgc_kernel_ctx *c, const tgc_ew_row *r, const float params[TGC_EW_MAX_PARAMS], tgc_dtype t,
                           const tgc_buffer *x, const tgc_buffer *y, int64_t numel);

/* C[m, n] = alpha * op(A) op(B) + beta * C through CLBlastSgemm on c's
 * device queue, row-major, offsets and leading dimensions in floats (as
 * tgc_cpu_sgemm, plus offsets). m, n, k must be > 0 (callers handle empty
 * products). With beta 0, C's old contents (NaN included) are not read.
 * k is summed in blocks of 256, one CLBlast call each adding onto C (as
 * OpenBLAS's K blocking does on the cpu): CLBlast's kernel sums the whole
 * k in one register, and on PoCL that alone gave 2.5x the cpu's rounding
 * error (RMS against float64 of a [256, 1728] x [1728, 256] product:
 * 3.1e-5 whole, 1.2e-5 in blocks of 256, cpu 1.3e-5, PyTorch 1.3e-5).
 * Does not wait. A CLBlast failure is reported through tgc_kernel_fail
 * naming the status code. */
tgc_status tgc_cl_nn_sgemm(tgc_kernel_ctx *c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                           cl_mem a, int64_t a_off, int64_t lda, cl_mem b, int64_t b_off, int64_t ldb, float beta,
                           cl_mem y, int64_t y_off, int64_t ldc);

/* y[0, n) = v, y of dtype t (float32, or float16: v rounded to nearest
 * even). n == 0 does nothing. */
tgc_status tgc_cl_nn_fill(tgc_kernel_ctx *c, cl_mem y, tgc_dtype t, float v, int64_t n);

/* Enqueues kernels/nn.cl's kernel `base` ("nn_max_pool") for tensors of
 * dtype t as tgc_cl_enqueue_act does (c's fused activation compiled in):
 * base_f32 for float32, from the plain build or the one with `defines`
 * (lines of "#define NAME VALUE"; NULL: none); base_f16 for float16, from
 * the build with NN_HALF defined too (values stored as half, computed in
 * float32, rounded once as they are stored). Any other t fails the node
 * through tgc_kernel_fail. */
tgc_status tgc_cl_nn_enqueue(tgc_kernel_ctx *c, tgc_dtype t, const char *defines, const char *base, cl_uint work_dim,
                             const size_t *global, const size_t *local, int n_args, const tgc_cl_arg *args);

/* tgc_cl_nn_enqueue of the plain build's kernel (no defines), without c's
 * fused activation even when c has one (a fill or broadcast the caller
 * activates after); no local size. */
tgc_status tgc_cl_nn_enqueue_unfused(tgc_kernel_ctx *c, tgc_dtype t, const char *base, cl_uint work_dim,
                                     const size_t *global, int n_args, const tgc_cl_arg *args);

/* Times one launch of what tgc_cl_nn_enqueue would enqueue, as
 * tgc_cl_time_act does (a host wait; for tuning). */
tgc_status tgc_cl_nn_time(tgc_kernel_ctx *c, tgc_dtype t, const char *defines, const char *base, cl_uint work_dim,
                          const size_t *global, const size_t *local, int n_args, const tgc_cl_arg *args,
                          uint64_t *ns);

#endif
