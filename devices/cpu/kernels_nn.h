/* The cpu neural-network kernels (float32, ONNX opset 17), private to
 * devices/cpu/. One file per family, the list in kernels_nn.c:
 *     kernels_gemm.c  MatMul, Gemm, and tgc_cpu_sgemm (OpenBLAS)
 *     kernels_conv.c  Conv (im2col + GEMM, pointwise GEMM; picks the path)
 *     conv_direct.c   Conv depthwise, direct (rows in registers; conv_direct.h)
 *     conv_winograd.c Conv 3x3 stride 1 by Winograd F(2x2, 3x3)
 *                     (transforms in conv_winograd_f23.c)
 *     kernels_pool.c  MaxPool, AveragePool, GlobalAveragePool
 * Conv and pooling read their window geometry through devices/window.h.
 *     kernels_norm.c  BatchNormalization, LayerNormalization
 *
 * Example usage (inside a kernel):
 *     tgc_status st = tgc_kernel_need_f32(c, &c->inputs[0], "input X");
 *     if (st != TGC_OK) return st;   // c->error already says why
 */
#ifndef TGC_DEVICES_CPU_KERNELS_NN_H
#define TGC_DEVICES_CPU_KERNELS_NN_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "devices/window.h"

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
/* _MatMulHalfWeight (kernels_gemm.c): float32 A times a float16 or
 * bfloat16 weight B [K, N], float32 out; its chooser ("gemv on the
 * half-precision weight", "onednn packed matmul" or "sgemm on the widened
 * weight") and footprint (the widened or packed cache, which replaces B,
 * when A has more than one row; nothing when B is read in place). */
tgc_status tgc_cpu_matmul_half_weight(tgc_kernel_ctx *c);
const char *tgc_cpu_matmul_half_choose(tgc_kernel_ctx *c);
void tgc_cpu_matmul_half_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out);
/* MatMul and Gemm in float64 (kernels_gemm_f64.c, cblas_dgemm). */
tgc_status tgc_cpu_matmul_f64(tgc_kernel_ctx *c);
tgc_status tgc_cpu_gemm_f64(tgc_kernel_ctx *c);
tgc_status tgc_cpu_conv_f32(tgc_kernel_ctx *c);
/* _ConvAdd (graph/ops_conv.c) in float32: Conv's ways (tgc_cpu_conv_f32,
 * its chooser and footprint), each adding Z (input 3, Y's shape; never Y's
 * buffer) to the outputs it writes, after the bias and before the
 * absorbed activation, where they are in cache (tgc_fused_act.residual):
 * each element act((conv + b) + z), the bits of Conv, Add and the
 * activation run apart. Fails when Z is not float32 of Y's shape. */
tgc_status tgc_cpu_conv_add_f32(tgc_kernel_ctx *c);
/* The choosers (tgc_kernel_choose_fn, devices/kernel.h) of the kernels
 * above: the name each run sets in c->impl for the same shapes. Conv:
 * "winograd f(2x2,3x3)", "direct", "im2col + gemm", "pointwise gemm",
 * "bias only"; MatMul and Gemm: "onednn packed matmul" (B a session
 * constant, packed once) or "sgemm (onednn or openblas)". NULL for bad
 * arguments or an empty output. */
const char *tgc_cpu_conv_choose(tgc_kernel_ctx *c);
const char *tgc_cpu_matmul_choose(tgc_kernel_ctx *c);
const char *tgc_cpu_gemm_choose(tgc_kernel_ctx *c);
/* Their footprints (tgc_kernel_footprint_fn, devices/kernel.h): the way
 * the chooser names, and what it caches and allocates while it runs. */
void tgc_cpu_conv_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out);
void tgc_cpu_matmul_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out);
void tgc_cpu_gemm_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out);
tgc_status tgc_cpu_max_pool(tgc_kernel_ctx *c);
tgc_status tgc_cpu_average_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_global_average_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_batch_norm_f32(tgc_kernel_ctx *c);
/* training_mode = 1 (kernels_batch_norm_train.c); tgc_cpu_batch_norm_f32 hands such nodes over. */
tgc_status tgc_cpu_batch_norm_train_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_layer_norm_f32(tgc_kernel_ctx *c);

/* ---- Shared helpers ------------------------------------------------------ */

/* True when Conv geometry g suits tgc_cpu_conv_winograd: 2-D, 3x3 kernel,
 * strides and dilations 1, one group, at least 16 input and output
 * channels and 49 output tiles of 2x2 (a 13x13 output or more). */
bool tgc_cpu_conv_winograd_applies(const tgc_conv_geometry *g);

/* Conv by Winograd F(2x2, 3x3) (conv_winograd.c), for a geometry that
 * tgc_cpu_conv_winograd_applies accepts: x [N, C, H, W], w [M, C, 3, 3],
 * bias [M] (NULL: none) into y [N, M, OH, OW], all float32, through
 * c->fused_act when set. Scratch of
 * alpha^2 * (M*C + C*T + M*T) floats (alpha = 4, T output tiles) comes
 * from tgc_malloc and is freed before returning (M*C of it lives on in the
 * node's kernel cache instead when W is a weight); without it, fails through
 * tgc_kernel_fail naming the bytes. Split over c->pool. */
tgc_status tgc_cpu_conv_winograd(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                 const float *bias, float *y);

/* What tgc_cpu_conv_winograd holds for geometry g on a pool `width`
 * threads wide (devices/kernel.h): the transformed filters in the node's
 * cache when W is a weight (w_const), else in its scratch, and the
 * transforms' scratch; exact, from the sizes it allocates. Leaves *out as
 * it is when Winograd does not apply. */
void tgc_cpu_conv_winograd_footprint(const tgc_conv_geometry *g, bool w_const, int width,
                                     tgc_kernel_footprint *out);

/* True when Conv geometry g goes through tgc_cpu_conv_dnnl: 2-D, one
 * group, not 1x1, not for the direct path (few input channels), W a
 * session constant (w_const) of at most 2 MiB (or serving at least 256
 * output positions), at least 1M multiply-adds
 * an image, oneDNN there and taking g, and Winograd's GEMMs thin or a
 * small output map (see conv_dnnl.c). */
bool tgc_cpu_conv_dnnl_applies(const tgc_conv_geometry *g, bool w_const);

/* Conv through oneDNN's channels-last kernel on transposed copies
 * (conv_dnnl.c): x [N, C, H, W], W (c's input 1, [M, C, kh, kw], a
 * session constant kept in oneDNN's layout in the node's kernel cache),
 * bias [M] (NULL: none) into y [N, M, OH, OW], float32, through
 * c->fused_act when set. Where the cache has no convolution for g (oneDNN
 * declined, no cache): tgc_cpu_conv_im2col. Scratch (an image's X
 * channels last, a piece of Y's rows a slot) from tgc_malloc, freed before
 * returning; fails through tgc_kernel_fail naming the bytes, or when
 * oneDNN fails. Split over c->pool. */
tgc_status tgc_cpu_conv_dnnl(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *bias,
                             float *y);

/* What tgc_cpu_conv_dnnl holds for g on a pool `width` threads wide:
 * oneDNN's weights (exact: oneDNN asked) in place of W, and its copies. */
void tgc_cpu_conv_dnnl_footprint(const tgc_conv_geometry *g, int width, tgc_kernel_footprint *out);

/* True when Conv geometry g goes through tgc_cpu_conv_small_map: one
 * group, at most 64 output positions (7x7, 8x8) for a 1x1 window and 256
 * (14x14) for a larger one that Winograd does not take, W a session
 * constant (w_const), oneDNN there, an image's X and its receptive fields
 * within 16 MiB each (see conv_small_map.c). */
bool tgc_cpu_conv_small_map_applies(const tgc_conv_geometry *g, bool w_const);

/* Conv on a small map with the output channels across the vector lanes
 * (conv_small_map.c): per image Y^T [HW, M] = A [HW, K] W^T [K, M] by
 * oneDNN, A the image's receptive fields channels last ([HW, k1..kn C],
 * zeros for padding; a pointwise layer's X transposed), W (c's input 1,
 * [M, C, k1..kn], a session constant) laid out [M, k1..kn, C] and packed
 * once into the node's kernel cache; each piece of output channels
 * transposed into y [N, M, O1..On] with bias [M] (NULL: none), then
 * through c->fused_act; x [N, C, D1..Dn], float32. Without the cache
 * (oneDNN declined, a kernel run alone, other sizes than the cache's):
 * tgc_cpu_conv_pointwise or tgc_cpu_conv_im2col. Its scratch is oneDNN's
 * per thread (gemm_packed.c) and one image's X channels last and A
 * (tgc_malloc, freed before returning). Fails through tgc_kernel_fail
 * when oneDNN fails, tgc_kernel_fail_nomem without memory for the packed
 * weights (on the run that packs them), X or A. Split over c->pool. */
tgc_status tgc_cpu_conv_small_map(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                  const float *bias, float *y);

/* What tgc_cpu_conv_small_map holds for g: the packed W^T (a bound oneDNN
 * gives) in place of W, and one image's X channels last and A as
 * workspace. */
void tgc_cpu_conv_small_map_footprint(const tgc_conv_geometry *g, tgc_kernel_footprint *out);

/* Pointwise Conv (1x1, strides 1, no pads) as one GEMM a group on X as it
 * lies (kernels_conv.c): Y_g [M/g, HW] = W_g [M/g, C/g] x X_g [C/g, HW]
 * with the bias and c->fused_act per piece; x [N, C, H, W], w [M, C/g, 1,
 * 1], bias [M] (NULL: none) into y [N, M, H, W], float32. Fails through
 * tgc_kernel_fail when the GEMM does. Split over c->pool. */
tgc_status tgc_cpu_conv_pointwise(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                                  const float *bias, float *y);

/* Conv by im2col + GEMM (kernels_conv.c), the path for any geometry:
 * x [N, C, D1..Dn], w [M, C / group, k1..kn], bias [M] (NULL: none) into
 * y [N, M, O1..On], float32, through c->fused_act when set. The Conv
 * kernel takes it where no faster path applies; benchmarks and tests run
 * it against the others. Scratch (im2col blocks) from tgc_malloc, freed
 * before returning; fails through tgc_kernel_fail when it cannot have
 * them or a size passes BLAS's int. */
tgc_status tgc_cpu_conv_im2col(tgc_kernel_ctx *c, const tgc_conv_geometry *g, const float *x, const float *w,
                               const float *bias, float *y);

/* C[m, n] = alpha * op(A) op(B) + beta * C, row-major float32, on the
 * calling thread: by oneDNN's matmul where it takes the geometry
 * (devices/cpu/gemm_packed.h, tgc_dnnl_sgemm), else one cblas_sgemm (a
 * GEMV for one row or column). op(A) is [m, k] (A stored [k, m] when ta),
 * op(B) is [k, n]; lda, ldb, ldc are the stored row lengths. Any of m, n,
 * k may be 0: k == 0 leaves C = beta * C (0 when beta is 0, whatever C
 * held) without touching A or B. Returns false, computing nothing, when a
 * size does not fit BLAS's int, or when oneDNN failed while running (C
 * undefined). */
/* The message of a kernel whose tgc_cpu_sgemm* call returned false. */
#define TGC_CPU_GEMM_FAILED "a GEMM failed (a size past BLAS's int range, or oneDNN's matmul failed)"

bool tgc_cpu_sgemm_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                       const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/* tgc_cpu_sgemm_one's product, with a GEMM of more than a few million
 * multiply-adds cut into up to 8 blocks of C's longer side (multiples of 16
 * rows or columns) run by tgc_parallel_for over pool (NULL: one after the
 * other here). The blocks depend on the sizes alone, so the result is
 * bitwise the same with any pool (OpenBLAS's rounding does depend on how a
 * product is cut). */
bool tgc_cpu_sgemm(tgc_thread_pool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                   const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/* C[r0..r1, c0..c1) (rows ldc floats apart) through epilogue `act`, in
 * place: its residual added where it has one (C must then lie inside
 * output 0 at act->out), then its activation (row >= 0) by the row's own
 * float32 vector loop (bitwise what the unfused nodes compute): the fused
 * epilogue of the cpu Conv (and _ConvAdd), Gemm, MatMul and Add. Nothing
 * when act is NULL. */
void tgc_cpu_act_block(const tgc_fused_act *act, float *c, int64_t ldc, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1);

/* Matrix-vector products (gemv.c), float32, row-major; y unread when
 * beta is 0. The dot form: y[j * incy] = alpha * sum_k mat[j * ld + k] *
 * x[k] + beta * y[j * incy] for j < n (the rows of mat against x). The
 * update form: y[j] = alpha * sum_k x[k] * mat[k * ld + j] + beta * y[j]
 * for j < n (x times the rows of mat). Each output's bits depend on k
 * alone, not on n, the vector width or the pieces. */
void tgc_cpu_gemv_dot(int64_t n, int64_t k, float alpha, const float *mat, int64_t ld, const float *x, float beta,
                      float *y, int64_t incy);
void tgc_cpu_gemv_update(int64_t n, int64_t k, float alpha, const float *mat, int64_t ld, const float *x, float beta,
                         float *y);

/* The update form on a constant B packed once (ONNX Runtime prepacks its
 * MLAS B the same way): columns in blocks of TGC_GEMV_PANEL, the last
 * block rounded up to a multiple of 16 columns, each block's rows one
 * after another, [k][width], zeros past column n. tgc_cpu_gemv_panels_pack
 * writes B [k, n] into panels, which holds tgc_cpu_gemv_panels_floats(n,
 * k) floats (k * n rounded up to 16 columns; the caller checks the
 * product); element (kk, j) of B lies at mat[kk * ld_k + j * ld_n] (B as
 * it lies: ld_k its row stride, ld_n 1; B^T [n, k] as it lies: ld_k 1,
 * ld_n its row stride). tgc_cpu_gemv_panels computes
 * y[j] for j < n as tgc_cpu_gemv_update does, bit for bit, from
 * panels + j0 * k for the columns from j0 (a multiple of
 * TGC_GEMV_PANEL): a piece of whole blocks. */
#define TGC_GEMV_PANEL 64
/* The columns panels hold for n (0 <= n <= INT64_MAX - 15): n rounded up
 * to 16. */
static inline int64_t tgc_cpu_gemv_panels_cols(int64_t n) { return (n + 15) / 16 * 16; }
static inline int64_t tgc_cpu_gemv_panels_floats(int64_t n, int64_t k) { return tgc_cpu_gemv_panels_cols(n) * k; }
/* Whether panels of n columns hold at most n / 16 columns of padding (a
 * B held once stays within 1/16 of its bytes): any multiple of 16, and
 * from 240 columns any n; not a narrow piece of a product cut by columns
 * (2 columns would be held as 16). */
static inline bool tgc_cpu_gemv_panels_fit(int64_t n) {
    return n > 0 && n <= INT64_MAX - 15 && (tgc_cpu_gemv_panels_cols(n) - n) * 16 <= n;
}
void tgc_cpu_gemv_panels_pack(int64_t n, int64_t k, const float *mat, int64_t ld_k, int64_t ld_n, float *panels);
void tgc_cpu_gemv_panels(int64_t n, int64_t k, float alpha, const float *panels, const float *x, float beta, float *y);

/* Column panels held in a node's kernel cache: `count` matrices (1: a
 * MatMul's B; an RNN's directions) of n columns and k rows, each
 * tgc_cpu_gemv_panels_floats(n, k) floats after the one before. */
typedef struct tgc_gemv_panels {
    int64_t count, n, k;
    float p[];
} tgc_gemv_panels;

/* Node c's input `input` (a session constant, below 32) in column panels:
 * matrix i's element (kk, j) at mat[i * stride + kk * ld_k + j * ld_n],
 * packed on the first call (mat read then only) into c's kernel cache,
 * which stands in for the input from then on (tgc_kernel_cache_replaces:
 * the session lets it go). NULL without a cache, for an input that is no
 * constant, or for a block of other sizes or another way's; NULL with
 * *no_memory set when memory for the block ran out. The cache owns the
 * block. tgc_cpu_gemv_panels_cached_bytes: the block's bytes, -1 past
 * int64 (for footprints). */
const tgc_gemv_panels *tgc_cpu_gemv_panels_cached(tgc_kernel_ctx *c, int input, int64_t count, int64_t n, int64_t k,
                                                  const float *mat, int64_t ld_k, int64_t ld_n, int64_t stride,
                                                  bool *no_memory);
int64_t tgc_cpu_gemv_panels_cached_bytes(int64_t count, int64_t n, int64_t k);

/* tgc_cpu_gemv_panels over all n columns of panels, in the pieces
 * tgc_cpu_sgemm_fused gives a matrix-vector product, cut at whole blocks
 * and spread over pool (NULL: the caller's thread): the same bits at
 * every thread count. */
void tgc_cpu_gemv_panels_run(tgc_thread_pool *pool, int64_t n, int64_t k, float alpha, const float *panels,
                             const float *x, float beta, float *y);

/* C[i][j] += bias[i] for rows [r0, r1) and columns [c0, c1) of C (rows
 * ldc apart): a per-row bias added after a product, as
 * tgc_cpu_sgemm_fused adds its bias. */
void tgc_cpu_add_row_bias(float *c, int64_t ldc, const float *bias, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

/* tgc_cpu_sgemm with an epilogue, each block of C by the piece that
 * computes it, while it is in that core's cache: with bias non-NULL,
 * C = alpha * op(A) op(B) + beta * bias[i * bias_sm + j * bias_sn] (sm, sn
 * are 0 along an axis the bias is broadcast along; sn is 0 or 1; C's old
 * values unread; beta 0 reads no bias), the bias added after the product;
 * with act non-NULL, C
 * goes through that activation last. Gemm's C and Conv's bias and fused
 * activation use it. */
bool tgc_cpu_sgemm_fused(tgc_thread_pool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                         const float *bias, int64_t bias_sm, int64_t bias_sn, const tgc_fused_act *act);

#endif
