/* A 2-D convolution through oneDNN on NHWC tensors, int8 (its jit kernels
 * for VNNI cpus) or float32, made once for a node's geometry with its
 * weights reordered into the layout the primitive asked for (as ONNX
 * Runtime prepacks MLAS's convolution weights). Measured on one Zen 5 core
 * (docs/cpu-speed.md, "Static quantization"): ResNet-18's int8 3x3 layers
 * 2.1x and MobileNetV2's depthwise ones 5-15x faster than tgc's own im2col
 * and plane sums, the transposes into and out of NHWC included; float32:
 * MobileNetV2's 1x1 and depthwise layers 1.3x faster than tgc's NCHW
 * kernels (docs/cpu-speed.md, "Channels last").
 *
 * Float32: y[n, oh, ow, m] = bias[m] + the window's products, in the order
 * oneDNN's kernel sums them (not tgc's NCHW kernels' bits).
 *
 * The sums are exact: Y32[n, oh, ow, m] = sum over the window of (x - x_zp)
 * (w - 0) in int32, padding standing for x_zp (oneDNN's source zero point),
 * the weights' zero point 0 (the only one oneDNN takes: symmetric int8
 * weights, or uint8 ones centred on 128). Only where those sums cannot
 * round (tgc_dnnl_exact_int8) and oneDNN has a jit kernel.
 *
 * An image's output rows are cut into pieces, each its own primitive over
 * the input rows it reads: at least one per thread of the pool it was made
 * for, each of about PIECE_MACS multiply-adds at least and at most
 * PIECE_SUM_BYTES of sums where rows allow (finished while in the cache).
 * The pieces go over the caller's pool, each on one thread. The sums are
 * integers: any cut gives the same bits. Float32 pieces are cut from the
 * sizes alone (F32_PIECE_MACS and F32_PIECE_PIXELS at least), the same at
 * every thread count. Without oneDNN create returns NULL and callers
 * compute their own way.
 *
 * Example usage (w: int8 [M, C / group * kh * kw], zero points all 0):
 *     tgc_dnnl_conv *q = tgc_dnnl_conv_create(&g, TGC_UINT8, w, 1, NULL, 0, &bytes, &no_memory);
 *     for (i = 0; i < tgc_dnnl_conv_pieces(q); i++)      // one image
 *         tgc_dnnl_conv_run_piece(q, i, x_nhwc, x_zp, sums); // the piece's rows
 *     tgc_dnnl_conv_free(q);
 */
#ifndef TGC_DEVICES_CPU_DNNL_CONV_H
#define TGC_DEVICES_CPU_DNNL_CONV_H

#include "devices/kernel.h"
#include "devices/window.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tgc_dnnl_conv tgc_dnnl_conv;

/* QLinearConv's requantization done by oneDNN as it stores Y (its output
 * scales and destination zero point), for parameters that are session
 * constants: y = saturate(rint(float(sum + bias) * scales[m]) + y_zp), the
 * sum and bias converted to float32 and the product rounded in float32, as
 * ONNX Runtime's MLAS requantizes (tgc's float64 product can differ by one
 * step where a value lies within float32 rounding of a half). */
typedef struct tgc_dnnl_conv_requant {
    tgc_dtype y_dtype;    /* TGC_UINT8 or TGC_INT8 */
    const float *scales;  /* [M]: x_scale w_scale[m] / y_scale (read during create only) */
    int32_t y_zp;
    bool bias;            /* an int32 bias [M] comes with each run */
} tgc_dnnl_conv_requant;

/* What a float32 convolution does besides the sums (tgc_dnnl_conv_create's
 * f32_ops, bits): TGC_DNNL_CONV_BIAS takes a bias [M] with each run;
 * TGC_DNNL_CONV_SUM adds the values Y holds before the run (oneDNN's sum
 * post-op, after the bias: a residual skip already in Y, each output's sum
 * rounded and then the skip added, as Conv and then Add would). */
#define TGC_DNNL_CONV_BIAS 1u
#define TGC_DNNL_CONV_SUM 2u

/* Whether oneDNN is there to make convolutions at all (built with it, and
 * not turned off: TGC_DNNL=0). */
bool tgc_dnnl_conv_available(void);

/* Whether oneDNN could take geometry g with X of dtype x_dtype at all
 * (2-D, oneDNN on; int8: exact products, at most TGC_DNNL_IGEMM_MAX_K taps
 * an output): what the static memory plan assumes. */
bool tgc_dnnl_conv_possible(const tgc_conv_geometry *g, tgc_dtype x_dtype);

/* The bytes create would hold for g, bounded from the sizes (weights padded
 * to oneDNN's blocks of channels, 64 for int8 and 16 for float32; a
 * depthwise layer's groups to 16); 0 when not possible. */
int64_t tgc_dnnl_conv_bound(const tgc_conv_geometry *g, tgc_dtype x_dtype);

/* The bytes tgc_dnnl_conv_create(g, x_dtype, w, threads, NULL, f32_ops)
 * would report holding, exactly: oneDNN is asked for the weights' layout
 * its primitives would take (their descriptions only: no kernel is
 * generated, nothing is reordered). 0 where create would return NULL for
 * other reasons than memory; tgc_dnnl_conv_bound when out of memory. For
 * the static memory plan. */
int64_t tgc_dnnl_conv_bytes(const tgc_conv_geometry *g, tgc_dtype x_dtype, int threads, unsigned f32_ops);

/* Makes the convolution for one image of geometry g with X of dtype
 * x_dtype: TGC_UINT8 or TGC_INT8 with weights w int8, writing int32 sums
 * (requant NULL) or Y requantized, its pieces for a pool `threads` wide;
 * or TGC_FLOAT32 with w float32, requant NULL, writing Y (with what
 * f32_ops says: TGC_DNNL_CONV_BIAS, TGC_DNNL_CONV_SUM), its pieces from
 * the sizes. w is
 * [M, C / group, kh, kw] as it lies, read during the call only. NULL where
 * oneDNN declines (see tgc_dnnl_conv_possible; only reference loops for
 * it), when a size passes its int dims, or out of memory (then
 * *no_memory is true: a later call may succeed); *bytes is then 0, else
 * what it holds (weights, handles). The caller owns the result. */
tgc_dnnl_conv *tgc_dnnl_conv_create(const tgc_conv_geometry *g, tgc_dtype x_dtype, const void *w, int threads,
                                    const tgc_dnnl_conv_requant *requant, unsigned f32_ops, size_t *bytes,
                                    bool *no_memory);

/* True when q was made with a requantization (its pieces write Y's 8-bit
 * values), false when they write int32 sums. */
bool tgc_dnnl_conv_requantizes(const tgc_dnnl_conv *q);

/* oneDNN's name for the implementation q runs (its first geometry's, as
 * oneDNN's verbose mode prints it: "jit_dw:avx512_core"); owned by q. */
const char *tgc_dnnl_conv_impl(const tgc_dnnl_conv *q);

/* True when q was made for geometry g (batch aside) and X of dtype x_dtype. */
bool tgc_dnnl_conv_matches(const tgc_dnnl_conv *q, const tgc_conv_geometry *g, tgc_dtype x_dtype);

/* The pieces an image is cut into, and piece i's output rows [*r0, *r1). */
int64_t tgc_dnnl_conv_pieces(const tgc_dnnl_conv *q);

/* The most int32 sums one piece makes (its rows x OW x M). */
int64_t tgc_dnnl_conv_piece_sums(const tgc_dnnl_conv *q);
void tgc_dnnl_conv_piece_rows(const tgc_dnnl_conv *q, int64_t i, int64_t *r0, int64_t *r1);

/* Piece i of one image on the calling thread: x_nhwc is the whole image,
 * [H, W, C] of the dtype q was made for; x_zp its zero point (as stored,
 * not shifted; unused for float32); bias the [M] q was made to take
 * (int32 for a requantizing q, float32 for a float32 one; else NULL); y
 * receives the piece's rows [r1 - r0, OW, M]: int32 sums, Y's 8-bit values
 * or float32. False when oneDNN fails. */
bool tgc_dnnl_conv_run_piece(const tgc_dnnl_conv *q, int64_t i, const void *x_nhwc, int32_t x_zp, const void *bias,
                             void *y);

void tgc_dnnl_conv_free(tgc_dnnl_conv *q);

#endif
