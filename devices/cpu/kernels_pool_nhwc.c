/* _MaxPoolNHWC and _GlobalAveragePoolNHWC on the cpu (graph/ops_conv.c;
 * made by the nhwc-conv pass).
 *
 * _MaxPoolNHWC: MaxPool of x [N, H, W, C] into y [N, OH, OW, C], float32
 * or uint8, 2-D, without Indices. Each output pixel is the maximum over its
 * window's taps inside the input (padding ignored, as -inf) of their rows
 * of C channels, a vector loop over the channels; a window with no tap
 * inside gives NaN (0 for uint8), as MaxPool does. For float32 a NaN wins,
 * as numpy.maximum (MaxPool's reference). Output rows go over the pool.
 *
 * _GlobalAveragePoolNHWC: x [N, H, W, C] float32 into y [N, 1, 1, C], each
 * channel's mean: its H * W values added in order (row by row of the map,
 * a vector loop over channels), then divided by H * W. The NCHW kernel
 * adds in another order: the two agree to float32 rounding, not in every
 * bit. Blocks of channels go over the pool. */
#include "devices/kernel.h"
#include "devices/window.h"

#include "devices/cpu/target_clones.h"
#include "support/parallel_for.h"

#include <math.h>
#include <string.h>

/* Output rows a piece takes at least: about PIECE_BYTES of Y. */
#define PIECE_BYTES (INT64_C(1) << 16)

typedef struct pool_job {
    const tgc_window *w;
    int64_t n_images, channels, rows_per_piece;
    bool u8;
    const void *x;
    void *y;
} pool_job;

/* y[c] = max(y[c], x[c]), c < n: uint8, and float32 with NaN winning. */
TGC_CPU_CLONES static void max_row_u8(uint8_t *y, const uint8_t *x, int64_t n) {
    for (int64_t c = 0; c < n; c++) y[c] = x[c] > y[c] ? x[c] : y[c];
}

TGC_CPU_CLONES static void max_row_f32(float *y, const float *x, int64_t n) {
    for (int64_t c = 0; c < n; c++) y[c] = x[c] > y[c] || x[c] != x[c] ? x[c] : y[c];
}

static void pool_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const pool_job *j = arg;
    const tgc_window *w = j->w;
    int64_t oh = w->out[0], ow = w->out[1], ih = w->in[0], iw = w->in[1], ch = j->channels;
    size_t es = j->u8 ? 1 : sizeof(float), row = (size_t)ch * es;
    int64_t r0 = i * j->rows_per_piece, r1 = r0 + j->rows_per_piece;
    if (r1 > j->n_images * oh) r1 = j->n_images * oh;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / oh, oy = r % oh, ky0, ky1;
        tgc_window_taps(oy * w->strides[0] - w->pads[0], w->kernel[0], w->dilations[0], 0, ih, &ky0, &ky1);
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t kx0, kx1;
            tgc_window_taps(ox * w->strides[1] - w->pads[1], w->kernel[1], w->dilations[1], 0, iw, &kx0, &kx1);
            char *y = (char *)j->y + (size_t)((r * ow + ox) * ch) * es;
            bool first = true;
            for (int64_t ky = ky0; ky < ky1; ky++)
                for (int64_t kx = kx0; kx < kx1; kx++) {
                    int64_t iy = oy * w->strides[0] - w->pads[0] + ky * w->dilations[0];
                    int64_t ix = ox * w->strides[1] - w->pads[1] + kx * w->dilations[1];
                    const char *x = (const char *)j->x + (size_t)(((n * ih + iy) * iw + ix) * ch) * es;
                    if (first) memcpy(y, x, row);
                    else if (j->u8) max_row_u8((uint8_t *)y, (const uint8_t *)x, ch);
                    else max_row_f32((float *)y, (const float *)x, ch);
                    first = false;
                }
            if (first) { /* no tap inside the input */
                if (j->u8) memset(y, 0, row);
                else
                    for (int64_t c = 0; c < ch; c++) ((float *)y)[c] = NAN;
            }
        }
    }
}

static tgc_status max_pool_nhwc(tgc_kernel_ctx *c) {
    if (c->n_inputs != 1 || c->n_outputs != 1 || c->inputs[0].rank != 4 || c->outputs[0].rank != 4)
        return tgc_kernel_fail(c, "x and y must be 4-D, channels last (and no Indices)");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_value views[2] = {*x, *y};
    for (int a = 0; a < 4; a++) { /* [N, H, W, C] seen as [N, C, H, W] */
        static const int to_nchw[4] = {0, 3, 1, 2};
        views[0].dims[a] = x->dims[to_nchw[a]];
        views[1].dims[a] = y->dims[to_nchw[a]];
    }
    tgc_kernel_ctx sub = *c;
    sub.inputs = &views[0];
    sub.outputs = &views[1];
    tgc_window w;
    int64_t planes, in_size, out_size;
    tgc_status st = tgc_window_read_pool(&sub, &w, &planes, &in_size, &out_size, NULL);
    if (st != TGC_OK) return st;
    if (w.n != 2) return tgc_kernel_fail(c, "a channels-last pool is 2-D");
    if (tgc_value_numel(y) == 0) return TGC_OK;
    pool_job j = {.w = &w, .n_images = x->dims[0], .channels = x->dims[3], .u8 = x->dtype == TGC_UINT8,
                  .x = tgc_kernel_in_ptr(c, 0), .y = tgc_kernel_out_ptr(c, 0)};
    int64_t row_bytes = w.out[1] * j.channels * (j.u8 ? 1 : (int64_t)sizeof(float)), rows = j.n_images * w.out[0];
    j.rows_per_piece = row_bytes > 0 && PIECE_BYTES / row_bytes > 1 ? PIECE_BYTES / row_bytes : 1;
    tgc_parallel_for(c->pool, (rows + j.rows_per_piece - 1) / j.rows_per_piece, pool_piece, &j);
    return TGC_OK;
}

/* Channels a piece of the global average takes at least. */
#define GAP_PIECE_CHANNELS 64

typedef struct gap_job {
    const float *x;
    float *y;
    int64_t positions, channels, blocks; /* blocks of GAP_PIECE_CHANNELS an image */
} gap_job;

TGC_CPU_CLONES static void add_row_f32(float *y, const float *x, int64_t n) {
    for (int64_t c = 0; c < n; c++) y[c] += x[c];
}

static void gap_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const gap_job *j = arg;
    int64_t n = i / j->blocks, c0 = i % j->blocks * GAP_PIECE_CHANNELS;
    int64_t width = j->channels - c0 < GAP_PIECE_CHANNELS ? j->channels - c0 : GAP_PIECE_CHANNELS;
    float *y = j->y + n * j->channels + c0;
    const float *x = j->x + n * j->positions * j->channels + c0;
    memset(y, 0, (size_t)width * sizeof *y);
    for (int64_t p = 0; p < j->positions; p++) add_row_f32(y, x + p * j->channels, width);
    for (int64_t c = 0; c < width; c++) y[c] /= (float)j->positions;
}

static tgc_status global_average_pool_nhwc(tgc_kernel_ctx *c) {
    if (c->n_inputs != 1 || c->n_outputs != 1 || c->inputs[0].rank != 4 || c->outputs[0].rank != 4)
        return tgc_kernel_fail(c, "x and y must be 4-D, channels last");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dims[0] != x->dims[0] || y->dims[1] != 1 || y->dims[2] != 1 || y->dims[3] != x->dims[3])
        return tgc_kernel_fail(c, "y must be [N, 1, 1, C] for x [N, H, W, C]");
    gap_job j = {.x = tgc_kernel_in_ptr(c, 0), .y = tgc_kernel_out_ptr(c, 0), .positions = x->dims[1] * x->dims[2],
                 .channels = x->dims[3]};
    if (tgc_value_numel(y) == 0) return TGC_OK;
    j.blocks = (j.channels + GAP_PIECE_CHANNELS - 1) / GAP_PIECE_CHANNELS;
    tgc_parallel_for(c->pool, x->dims[0] * j.blocks, gap_piece, &j);
    return TGC_OK;
}

const tgc_kernel_def tgc_cpu_kernels_pool_nhwc[] = {
    {.op = "_GlobalAveragePoolNHWC",
     .fn = global_average_pool_nhwc,
     .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = "_MaxPoolNHWC",
     .fn = max_pool_nhwc,
     .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_UINT8, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
