/* RNN's, GRU's and LSTM's attributes and sizes, shared by the cpu and gpu
 * kernels (devices/cpu/kernels_rnn.c, devices/opencl/kernels_rnn_cl.c) so
 * that both accept the same nodes and fail with the same words. Reads only
 * attributes and dims (graph/ops_rnn.c gives the shapes).
 *
 * Activation functions: one per gate function per direction (RNN f; GRU f,
 * g; LSTM f, g, h), each with alpha and beta; ONNX's defaults where the
 * node gives none (the operator of that name's). The kinds' numbers are
 * also the OpenCL kernels' (devices/opencl/kernels/rnn.cl).
 *
 * Example usage:
 *     tgc_rnn_geometry g;
 *     tgc_status st = tgc_rnn_geometry_read(c, 4, &g);   // LSTM
 *     if (st != TGC_OK) return st;
 *     float v = tgc_rnn_act_apply(&g.f[d * g.functions + 0], x);
 */
#ifndef TGC_DEVICES_RNN_GEOMETRY_H
#define TGC_DEVICES_RNN_GEOMETRY_H

#include "devices/kernel.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tgc_rnn_act_kind {
    TGC_RNN_RELU = 0, TGC_RNN_TANH, TGC_RNN_SIGMOID, TGC_RNN_AFFINE, TGC_RNN_LEAKY_RELU,
    TGC_RNN_THRESHOLDED_RELU, TGC_RNN_SCALED_TANH, TGC_RNN_HARD_SIGMOID, TGC_RNN_ELU, TGC_RNN_SOFTSIGN,
    TGC_RNN_SOFTPLUS,
} tgc_rnn_act_kind;

typedef struct tgc_rnn_act {
    tgc_rnn_act_kind kind;
    float alpha, beta;
} tgc_rnn_act;

#define TGC_RNN_MAX_FUNCS 6 /* 3 functions x 2 directions */

typedef struct tgc_rnn_geometry {
    int gates;     /* G: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c) */
    int functions; /* activation functions a direction: 1, 2, 3 */
    int64_t seq, batch, input, hidden;
    int dirs;                /* 2 for bidirectional */
    bool reverse_only;       /* direction "reverse" */
    bool batch_first;        /* layout 1 */
    bool linear_before_reset, input_forget;
    float clip;              /* 0: none */
    tgc_rnn_act f[TGC_RNN_MAX_FUNCS];
} tgc_rnn_geometry;

/* Reads the node's attributes and the sizes of X (input 0), W (1) and R
 * (2) for an op of `gates` gates. Fails through tgc_kernel_fail when W or R
 * do not match X and R's hidden size, on a negative clip, or on a wrong
 * number of activation names. */
tgc_status tgc_rnn_geometry_read(tgc_kernel_ctx *c, int gates, tgc_rnn_geometry *g);

/* The activation a applied to x (float32, as ONNX defines each). */
float tgc_rnn_act_apply(const tgc_rnn_act *a, float x);

#endif
