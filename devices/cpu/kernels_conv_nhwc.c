/* _ConvNHWC on the cpu (graph/ops_conv.c; made by the nhwc-conv pass):
 * Conv-11 with X [N, H, W, C] and Y [N, OH, OW, M], float32, W [M, C /
 * group, kh, kw] and B [M] as Conv has them.
 *
 * Through oneDNN's NHWC convolution (dnnl_conv.h): made once per node with
 * W reordered into the primitive's layout (the node's kernel cache, in
 * place of W: weights held once), each image's output rows in pieces cut
 * from the sizes alone over the device's pool, the bias added by oneDNN
 * and a fused activation (executor/fuse.c) applied to each piece's rows
 * while they are in cache, with the row's own vector loop (the bits of an
 * unfused Relu or Clip). Where oneDNN cannot take the node (no oneDNN, a
 * W that is not a constant, input shapes other than those the cache was
 * made for): Conv on NCHW copies (nhwc.h).
 *
 * The numbers are Conv's up to the order of the sums: oneDNN adds each
 * output's products in the order of its kernel, not of tgc's NCHW
 * kernels, so the two differ in the last bits; any thread count gives the
 * same bits (the pieces do not depend on it). */
#include "devices/cpu/dnnl_conv.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/nhwc.h"
#include "devices/kernel.h"
#include "devices/window.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <stdatomic.h>

typedef struct nhwc_job {
    const tgc_conv_geometry *g;
    const tgc_dnnl_conv *dq;
    const float *x, *bias;
    float *y;
    const tgc_fused_act *act;
    int64_t image; /* the image being run */
    atomic_bool failed;
} nhwc_job;

/* Piece i of the job's image: its rows of Y, then the activation over them. */
static void nhwc_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    nhwc_job *j = arg;
    const tgc_conv_geometry *g = j->g;
    int64_t r0, r1;
    tgc_dnnl_conv_piece_rows(j->dq, i, &r0, &r1);
    int64_t count = (r1 - r0) * g->w.out[1] * g->m_count;
    float *y = j->y + (j->image * g->out_size + r0 * g->w.out[1]) * g->m_count;
    if (!tgc_dnnl_conv_run_piece(j->dq, i, j->x + j->image * g->in_size * g->channels, 0, j->bias, y)) {
        atomic_store(&j->failed, true);
        return;
    }
    tgc_cpu_act_block(j->act, y, count, 0, 1, 0, count);
}

/* Conv's geometry of c's node, read on the NCHW views of X and Y. */
static tgc_status read_geometry(tgc_kernel_ctx *c, tgc_conv_geometry *g) {
    const tgc_value *vx = &c->inputs[0], *vy = &c->outputs[0];
    if (vx->rank != 4 || vy->rank != 4) return tgc_kernel_fail(c, "x and y must be 4-D, channels last");
    tgc_value views[3], out = tgc_cpu_nhwc_view(vy, true);
    for (int i = 0; i < c->n_inputs && i < 3; i++) views[i] = c->inputs[i];
    views[0] = tgc_cpu_nhwc_view(vx, true);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.outputs = &out;
    return tgc_window_read_conv(&sub, g);
}

static tgc_status conv_nhwc(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    tgc_conv_geometry g;
    if ((st = read_geometry(c, &g)) != TGC_OK) return st;
    bool no_memory;
    const tgc_dnnl_conv *dq = tgc_cpu_dnnl_conv_cached(c, &g, &no_memory);
    if (no_memory) return tgc_kernel_fail(c, "out of host memory for oneDNN's convolution");
    bool empty = g.batch == 0 || g.out_size == 0 || g.m_count == 0;
    if (c->prepack_only || empty) return TGC_OK; /* (an empty X may have no buffer) */
    if (dq == NULL) return tgc_cpu_nhwc_fallback(c, tgc_cpu_conv_f32);
    nhwc_job j = {.g = &g, .dq = dq, .x = tgc_kernel_in_ptr(c, 0), .bias = g.has_bias ? tgc_kernel_in_ptr(c, 2) : NULL,
                  .y = tgc_kernel_out_ptr(c, 0), .act = c->fused_act};
    atomic_init(&j.failed, false);
    c->impl = "onednn conv nhwc";
    for (j.image = 0; j.image < g.batch && !atomic_load(&j.failed); j.image++)
        tgc_parallel_for(c->pool, tgc_dnnl_conv_pieces(dq), nhwc_piece, &j);
    return atomic_load(&j.failed) ? tgc_kernel_fail(c, "oneDNN's convolution failed") : TGC_OK;
}

/* What _ConvNHWC holds: oneDNN's weights (exact: oneDNN asked) in its
 * cache, standing in for W; the fallback's NCHW copies of X and Y. */
static void conv_nhwc_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_conv_geometry g;
    if (c->n_inputs < 2 || c->n_outputs < 1 || read_geometry(c, &g) != TGC_OK) return;
    if (c->const_inputs & 1u << 1) {
        out->cache_bytes = tgc_cpu_dnnl_conv_cache_bytes(&g);
        if (out->cache_bytes > 0) out->replaces_inputs = 1u << 1;
    }
    int64_t x_floats, y_floats, bytes;
    if (out->cache_bytes == 0 && /* the fallback's copies of X and Y */
        tgc_checked_mul_i64(g.batch, g.channels * g.in_size, &x_floats) &&
        tgc_checked_mul_i64(g.batch, g.m_count * g.out_size, &y_floats) &&
        tgc_checked_add_i64(x_floats, y_floats, &bytes) && tgc_checked_mul_i64(bytes, (int64_t)sizeof(float), &bytes))
        out->workspace_bytes = bytes;
}

const tgc_kernel_def tgc_cpu_kernels_conv_nhwc[] = {
    {.op = "_ConvNHWC",
     .fn = conv_nhwc,
     .forward_input = -1,
     .fuses_activation = true,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID},
     .footprint = conv_nhwc_footprint},
    {.op = NULL},
};
