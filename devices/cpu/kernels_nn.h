/* The cpu neural-network kernels (float32, ONNX opset 17), private to
 * devices/cpu/. One file per family, the list in kernels_nn.c:
 *     kernels_gemm.c  MatMul, Gemm, and tgc_cpu_sgemm (OpenBLAS)
 *     kernels_conv.c  Conv (im2col + GEMM, pointwise GEMM, direct depthwise)
 *     kernels_pool.c  MaxPool, AveragePool, GlobalAveragePool, and the
 *                     window geometry that Conv shares
 *     kernels_norm.c  BatchNormalization, LayerNormalization
 *
 * Example usage (inside a kernel):
 *     tgc_cpu_window w;
 *     tgc_status st = tgc_cpu_window_read(c, x, y, &w_dims[2], false, &w);
 *     if (st != TGC_OK) return st;   // c->error already says why
 *     // w.pads[i] is where axis i's windows begin before the input (-pads)
 */
#ifndef TGC_DEVICES_CPU_KERNELS_NN_H
#define TGC_DEVICES_CPU_KERNELS_NN_H

#include "devices/kernel.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- Kernels ------------------------------------------------------------- */

/* Each computes c->outputs from c->inputs as its file's comment says. The
 * executor has set the outputs' shapes and buffers; a kernel checks them
 * against the inputs and attributes, never writes outside them, and on any
 * mismatch returns TGC_ERR_RUNTIME with the reason in c->error
 * (tgc_kernel_fail). Scratch memory comes from tgc_malloc and is freed
 * before returning. Safe to run concurrently on different nodes. */

tgc_status tgc_cpu_matmul_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_gemm_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_conv_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_max_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_average_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_global_average_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_batch_norm_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_layer_norm_f32(tgc_kernel_ctx *c);

/* ---- Shared helpers ------------------------------------------------------ */

/* C[m, n] = alpha * op(A) op(B) + beta * C, row-major, through cblas_sgemm.
 * op(A) is [m, k] (A stored [k, m] when ta), op(B) is [k, n]; lda, ldb, ldc
 * are the stored row lengths. Any of m, n, k may be 0: k == 0 leaves
 * C = beta * C (0 when beta is 0, whatever C held) without touching A or B.
 * Returns false, computing nothing, when a size does not fit BLAS's int. */
bool tgc_cpu_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                   int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/* The geometry of a sliding window over the spatial axes of [N, C, D1..Dn]:
 * output index o of axis i reads input indices
 *     o * strides[i] - pads[i] + t * dilations[i],  t in [0, kernel[i]),
 * those outside [0, in[i]) being padding. */
typedef struct tgc_cpu_window {
    int n;                     /* spatial axes */
    int64_t in[TGC_MAX_RANK];  /* input sizes D1..Dn */
    int64_t out[TGC_MAX_RANK]; /* output sizes O1..On */
    int64_t kernel[TGC_MAX_RANK];
    int64_t strides[TGC_MAX_RANK];
    int64_t dilations[TGC_MAX_RANK];
    int64_t pads[2 * TGC_MAX_RANK]; /* begins, then ends (after auto_pad) */
} tgc_cpu_window;

/* Reads strides, dilations, pads and auto_pad from c->node for input x
 * [N, C, D1..Dn] and output y [N, M, O1..On] with kernel sizes kernel[0..n),
 * resolving auto_pad to explicit pads as ONNX does (SAME_UPPER puts the odd
 * pad at the end, SAME_LOWER at the beginning), and checks that y's spatial
 * sizes are the ones those give (floor, or with ceil_mode either rounding).
 * Fills *w and returns TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_cpu_window_read(tgc_kernel_ctx *c, const tgc_value *x, const tgc_value *y,
                               const int64_t *kernel, bool ceil_mode, tgc_cpu_window *w);

/* The taps t in [*lo, *hi) of a window starting at input index `start`
 * (stride and padding applied) with `k` taps `d` apart that land in
 * [begin, end). Empty when *lo == *hi. */
void tgc_cpu_window_taps(int64_t start, int64_t k, int64_t d, int64_t begin, int64_t end, int64_t *lo,
                         int64_t *hi);

/* Checks that input/output i exists with dtype float32 (present: not an
 * omitted optional); fails through tgc_kernel_fail naming `what`. */
tgc_status tgc_cpu_need_f32(tgc_kernel_ctx *c, const tgc_value *v, const char *what);

/* True when optional input i was given (not omitted, not past the end). */
bool tgc_cpu_has_input(const tgc_kernel_ctx *c, int i);

/* True when optional output i is wanted: the executor gave it a buffer
 * (an empty tensor's buffer too: it has no memory, but it exists). */
bool tgc_cpu_has_output(const tgc_kernel_ctx *c, int i);

#endif
