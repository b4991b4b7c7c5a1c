/* _ConvNHWC on the cpu (graph/ops_conv.c; made by the nhwc-conv pass):
 * Conv-11 with X [N, H, W, C] and Y [N, OH, OW, M], float32, W [M, C /
 * group, kh, kw] and B [M] as Conv has them, and an optional Z of Y's
 * shape (fuse-conv-add's residual skip) added to each piece of Y before
 * the activation.
 *
 * On AVX-512, a 1x1 layer without pads and of one group (pointwise, or
 * strided: a projection shortcut) runs on tgc's own register tiles
 * (conv_pointwise.h): Y [N HW, M] = X [N HW, C] x W^T on W packed once
 * into blocks of output channels (the node's kernel cache, in place of
 * W), the bias, Z and a Relu or Clip in the tiles' registers, any other
 * fused activation over each chunk while it is in cache. Elsewhere a
 * pointwise layer with many weights (PACKED_MIN_WEIGHT_FLOATS) is one
 * product of every image's positions on W packed once (tgc_packed_gemm,
 * the node's cache), each block of output channels copied into Y with its
 * bias, then through the activation, while in cache. Every other layer
 * goes through oneDNN's NHWC convolution (dnnl_conv.h): made once per
 * node with W reordered into the primitive's layout (the
 * node's kernel cache, in place of W: weights held once), each image's
 * output rows in pieces cut from the sizes alone over the device's pool,
 * the bias added by oneDNN and a fused activation (executor/fuse.c)
 * applied to each piece's rows while they are in cache, with the row's
 * own vector loop (the bits of an unfused Relu or Clip). Where neither can
 * take the node (no kernel cache to pack into, no oneDNN, a W that is not
 * a constant, input shapes other than those the cache was made for): Conv
 * on NCHW copies (nhwc.h).
 *
 * The numbers are Conv's up to the order of the sums: the tiles add each
 * output's products in the order of C after its bias, oneDNN in the order
 * of its kernel, tgc's NCHW kernels in theirs, so they differ in the last
 * bits; any thread count gives the same bits (the pieces do not depend on
 * it). */
#include "devices/cpu/conv_direct.h"
#include "devices/cpu/conv_pointwise.h"
#include "devices/cpu/dnnl_conv.h"
#include "devices/cpu/ew.h"
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/cpu/nhwc.h"
#include "devices/kernel.h"
#include "devices/window.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/parallel_for.h"

#include <stdatomic.h>
#include <string.h>

typedef struct nhwc_job {
    const tgc_conv_geometry *g;
    const tgc_dnnl_conv *dq;
    const float *x, *bias, *z; /* z: Y's shape, or NULL */
    float *y;
    const tgc_fused_act *act;
    int64_t image; /* the image being run */
    atomic_bool failed;
} nhwc_job;

/* Piece i of the job's image: its rows of Y (Z's rows first, where Y is
 * not Z's buffer: the primitive adds to them), then the activation over
 * them. */
static void nhwc_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    nhwc_job *j = arg;
    const tgc_conv_geometry *g = j->g;
    int64_t r0, r1;
    tgc_dnnl_conv_piece_rows(j->dq, i, &r0, &r1);
    int64_t count = (r1 - r0) * g->w.out[1] * g->m_count, at = (j->image * g->out_size + r0 * g->w.out[1]) * g->m_count;
    float *y = j->y + at;
    if (j->z != NULL && j->z != j->y) memcpy(y, j->z + at, (size_t)count * sizeof *y);
    if (!tgc_dnnl_conv_run_piece(j->dq, i, j->x + j->image * g->in_size * g->channels, 0, j->bias, y)) {
        atomic_store(&j->failed, true);
        return;
    }
    tgc_cpu_act_block(j->act, y, count, 0, 1, 0, count);
}

/* Conv's geometry of c's node, read on the NCHW views of X and Y. A
 * pointwise layer's (1x1, stride 1, no pads) is [H W, 1]: its positions
 * one column, the same bytes channels last, so that oneDNN's pieces are
 * cut by positions, not by rows of the map. A 7x7 map's 7 rows went 4
 * and 3 to two threads; its 49 positions go 25 and 24 (oneDNN's 1x1
 * kernels run over the positions as one line anyway). `tgc run --trace`,
 * node medians, 2 threads: RegNetX-800MF's 288 -> 288 on 14x14 106 ->
 * 94-95 us; MNASNet 3.18 -> 3.11 ms and 3.30 -> 3.25 a run (medians of 5
 * interleaved rounds), MobileNetV3-Small 1.22 -> 1.20. */
static tgc_status read_geometry(tgc_kernel_ctx *c, tgc_conv_geometry *g) {
    const tgc_value *vx = &c->inputs[0], *vy = &c->outputs[0];
    if (vx->rank != 4 || vy->rank != 4) return tgc_kernel_fail(c, "x and y must be 4-D, channels last");
    tgc_value views[3], out = tgc_cpu_nhwc_view(vy, true);
    for (int i = 0; i < c->n_inputs && i < 3; i++) views[i] = c->inputs[i];
    views[0] = tgc_cpu_nhwc_view(vx, true);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.outputs = &out;
    sub.n_inputs = c->n_inputs < 3 ? c->n_inputs : 3; /* Z aside */
    tgc_status st = tgc_window_read_conv(&sub, g);
    if (st == TGC_OK && g->pointwise && g->w.n == 2) { /* the positions as one column */
        g->w.in[0] = g->w.out[0] = g->in_size;
        g->w.in[1] = g->w.out[1] = 1;
    }
    return st;
}

/* Whether c's node has a Z (input 3: passes/fuse_conv_add.c). */
static bool has_z(const tgc_kernel_ctx *c) { return tgc_kernel_has_input(c, 3); }

/* Z, or NULL when the node has none. Y may be Z's buffer (forward_input). */
static const float *z_of(const tgc_kernel_ctx *c) { return has_z(c) ? tgc_kernel_in_ptr(c, 3) : NULL; }

/* Whether Z, where there is one, is float32 of exactly Y's dims (what
 * inference promised; a hand-written graph's Z is checked here too, before
 * any of it is read); fails the node otherwise. */
static tgc_status check_z(tgc_kernel_ctx *c) {
    if (!has_z(c)) return TGC_OK;
    const tgc_value *z = &c->inputs[3], *y = &c->outputs[0];
    bool same = z->dtype == TGC_FLOAT32 && z->rank == y->rank;
    for (int a = 0; same && a < y->rank; a++) same = z->dims[a] == y->dims[a];
    return same ? TGC_OK : tgc_kernel_fail(c, "input 3 (Z) must be float32 of Y's shape, as the residual it adds");
}

/* Where oneDNN cannot run the node: Conv on NCHW copies (nhwc.h); with a
 * Z, then y = act(y + Z) over all of Y, Z copied first where Y is its
 * buffer. */
static tgc_status fallback(tgc_kernel_ctx *c, const tgc_conv_geometry *g) {
    if (!has_z(c)) return tgc_cpu_nhwc_fallback(c, tgc_cpu_conv_f32);
    float *y = tgc_kernel_out_ptr(c, 0);
    const float *z = z_of(c);
    int64_t count = g->batch * g->out_size * g->m_count;
    float *copy = z == y ? tgc_malloc((size_t)count * sizeof *copy + 1) : NULL;
    if (z == y && copy == NULL) return tgc_kernel_fail(c, "out of host memory for a copy of Z (%lld floats)",
                                                      (long long)count);
    if (copy != NULL) z = memcpy(copy, z, (size_t)count * sizeof *copy);
    tgc_kernel_ctx sub = *c;
    sub.n_inputs = 3;
    sub.fused_act = NULL;
    tgc_status st = tgc_cpu_nhwc_fallback(&sub, tgc_cpu_conv_f32);
    c->impl = sub.impl;
    if (st == TGC_OK) {
        tgc_cpu_ew_loops()->binary[TGC_EW_Add][TGC_FLOAT32](count, y, 1, z, 1, y, NULL);
        tgc_cpu_act_block(c->fused_act, y, count, 0, 1, 0, count);
    }
    tgc_free(copy);
    return st;
}

/* A pointwise layer's product channels last, every image at once: Y [N
 * HW, M] = X [N HW, C] x W^T, W [M, C] as it lies. */
static tgc_gemm_shape pointwise_shape(const tgc_conv_geometry *g) {
    return (tgc_gemm_shape){.ta = false, .tb = true, .m = g->batch * g->out_size, .n = g->m_count, .k = g->cg,
                            .lda = g->cg, .ldb = g->cg, .ldc = g->m_count, .alpha = 1.0f};
}

/* A pointwise layer with at least this many weights (1.5 MiB) multiplies
 * on them packed (tgc_packed_gemm), not through oneDNN's convolution: that
 * one is cut into pieces of output rows, and each piece reads every
 * weight, from the last-level cache when they pass a core's L2; the packed
 * product is cut into pieces of output channels, each reading its own
 * block of weights once (and all of X, the smaller operand here). `tgc run
 * --trace`, node medians, 1 thread: RegNetX-800MF's 672 -> 672 on 7x7
 * (451K weights) 330-359 -> 320-326 us, and 185 -> ~160 at 2 threads (in
 * NCHW, the small-map way); ResNeXt-50's 1024 -> 2048 and 2048 -> 1024
 * on 7x7 (2M) 3.0 -> 1.7-1.8 ms; MNASNet's 320 -> 1280 on 7x7 (410K) 266
 * -> 235. Below: its 1152 -> 192 and 192 -> 1152 on 7x7 (221K) lost
 * 10-17% (117-125 -> 131-141 us), RegNetX's 288 -> 288 on 14x14 (83K)
 * 13%, and products under 4M multiply-adds ran on one thread at 2
 * (MobileNetV3-Small's 96 -> 576 on 7x7: 25 -> 38 us). */
#define PACKED_MIN_WEIGHT_FLOATS ((int64_t)384 << 10)

/* Whether c's node, of geometry g, takes the packed product: W a session
 * constant, and the layer pointwise with many weights. */
static bool packed_applies(const tgc_kernel_ctx *c, const tgc_conv_geometry *g) {
    if (!(c->const_inputs & 1u << 1) || !g->pointwise || g->group != 1 || g->batch < 1 || g->out_size < 1 ||
        g->m_count < 1 || g->cg < 1 || !tgc_packed_gemm_available() || g->batch > INT64_MAX / g->out_size)
        return false;
    tgc_gemm_shape s = pointwise_shape(g);
    return s.n * s.k >= PACKED_MIN_WEIGHT_FLOATS && tgc_packed_gemm_blocks_fit(&s);
}

/* Where each block of Y goes: tgc_packed_gemm_block_fn. */
typedef struct packed_job {
    float *y; /* [rows, M] */
    const float *bias, *z; /* z: [rows, M] or NULL */
    int64_t m_count;
    const tgc_fused_act *act;
} packed_job;

/* Block [r1 - r0, n1 - n0] into Y's rows [r0, r1) at columns [n0, n1), with their bias. */
static void packed_block(void *arg, int64_t r0, int64_t r1, int64_t n0, int64_t n1, const float *block) {
    const packed_job *j = arg;
    int64_t cols = n1 - n0;
    for (int64_t r = r0; r < r1; r++) {
        float *to = j->y + r * j->m_count + n0;
        const float *from = block + (r - r0) * cols;
        const float *z = j->z != NULL ? j->z + r * j->m_count + n0 : NULL; /* may be `to` itself */
        if (j->bias != NULL && z != NULL)
            for (int64_t k = 0; k < cols; k++) to[k] = (from[k] + j->bias[n0 + k]) + z[k];
        else if (j->bias != NULL)
            for (int64_t k = 0; k < cols; k++) to[k] = from[k] + j->bias[n0 + k];
        else if (z != NULL)
            for (int64_t k = 0; k < cols; k++) to[k] = from[k] + z[k];
        else
            memcpy(to, from, (size_t)cols * sizeof *to);
    }
    tgc_cpu_act_block(j->act, j->y, j->m_count, r0, r1, n0, n1);
}

static tgc_status conv_nhwc_packed(tgc_kernel_ctx *c, const tgc_conv_geometry *g) {
    tgc_gemm_shape s = pointwise_shape(g);
    bool no_memory;
    const tgc_packed_gemm *packed = tgc_packed_gemm_cached(c, &s, tgc_kernel_in_ptr(c, 1), &no_memory);
    if (no_memory) return tgc_kernel_fail_nomem(c, "out of host memory for _ConvNHWC's packed weights");
    if (c->prepack_only) return TGC_OK;
    if (packed == NULL) return fallback(c, g);
    packed_job j = {.y = tgc_kernel_out_ptr(c, 0), .bias = g->has_bias ? tgc_kernel_in_ptr(c, 2) : NULL,
                    .z = z_of(c), .m_count = g->m_count, .act = c->fused_act};
    c->impl = "packed gemm nhwc";
    if (!tgc_packed_gemm_run_blocks(packed, c->pool, tgc_kernel_in_ptr(c, 0), packed_block, &j))
        return tgc_kernel_fail(c, "_ConvNHWC: oneDNN's product failed");
    return TGC_OK;
}

/* Whether geometry g is a 1x1 layer at a stride over 1, without pads (a
 * residual stage's projection shortcut). */
static bool strided_1x1(const tgc_conv_geometry *g) {
    const tgc_window *w = &g->w;
    return w->n == 2 && w->kernel[0] == 1 && w->kernel[1] == 1 && w->pads[0] == 0 && w->pads[1] == 0 &&
           w->pads[2] == 0 && w->pads[3] == 0 && w->strides[0] >= 1 && w->strides[1] >= 1 &&
           (w->out[0] - 1) * w->strides[0] < w->in[0] && (w->out[1] - 1) * w->strides[1] < w->in[1];
}

/* Whether c's node, of geometry g, takes tgc's own pointwise tiles
 * (conv_pointwise.h): the running ISA has them (AVX-512), the layer is 1x1
 * without pads (at stride 1, or strided) of one group, W a session
 * constant. */
static bool own_pointwise_applies(const tgc_kernel_ctx *c, const tgc_conv_geometry *g) {
    const tgc_conv_isa *isa = tgc_cpu_conv_isa();
    return isa->pointwise != NULL && (c->const_inputs & 1u << 1) && (g->pointwise || strided_1x1(g)) &&
           g->group == 1 && g->batch >= 1 && g->out_size >= 1 && g->m_count >= 1 && g->cg >= 1 &&
           g->batch <= INT64_MAX / g->out_size && tgc_cpu_pointwise_bytes(g->m_count, g->cg, isa->lanes) > 0;
}

/* The own tiles, W packed in the node's cache; false (nothing done) where
 * the node has no cache to pack into. */
static bool conv_nhwc_own(tgc_kernel_ctx *c, const tgc_conv_geometry *g, tgc_status *st) {
    bool no_memory;
    const tgc_pointwise_weights *pw = tgc_cpu_pointwise_cached(c, g->m_count, g->cg, tgc_kernel_in_ptr(c, 1),
                                                               &no_memory);
    if (no_memory) {
        *st = tgc_kernel_fail_nomem(c, "out of host memory for _ConvNHWC's packed weights");
        return true;
    }
    if (pw == NULL) return false;
    *st = TGC_OK;
    if (c->prepack_only) return true;
    c->impl = "pointwise nhwc";
    const float *x = tgc_kernel_in_ptr(c, 0), *bias = g->has_bias ? tgc_kernel_in_ptr(c, 2) : NULL;
    float *y = tgc_kernel_out_ptr(c, 0);
    if (g->pointwise) {
        tgc_cpu_pointwise_run(c, pw, x, g->batch * g->out_size, bias, z_of(c), y);
    } else {
        const tgc_window *w = &g->w;
        tgc_pointwise_sampling s = {.batch = g->batch, .in_h = w->in[0], .in_w = w->in[1], .out_h = w->out[0],
                                    .out_w = w->out[1], .stride_h = w->strides[0], .stride_w = w->strides[1]};
        tgc_cpu_pointwise_run_strided(c, pw, x, &s, bias, z_of(c), y);
    }
    return true;
}

static tgc_status conv_nhwc(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    tgc_conv_geometry g;
    if ((st = read_geometry(c, &g)) != TGC_OK || (st = check_z(c)) != TGC_OK) return st;
    if (own_pointwise_applies(c, &g) && conv_nhwc_own(c, &g, &st)) return st;
    if (packed_applies(c, &g)) return conv_nhwc_packed(c, &g);
    bool no_memory;
    const tgc_dnnl_conv *dq = tgc_cpu_dnnl_conv_cached(c, &g, has_z(c), &no_memory);
    if (no_memory) return tgc_kernel_fail(c, "out of host memory for oneDNN's convolution");
    bool empty = g.batch == 0 || g.out_size == 0 || g.m_count == 0;
    if (c->prepack_only || empty) return TGC_OK; /* (an empty X may have no buffer) */
    if (dq == NULL) return fallback(c, &g);
    nhwc_job j = {.g = &g, .dq = dq, .x = tgc_kernel_in_ptr(c, 0), .bias = g.has_bias ? tgc_kernel_in_ptr(c, 2) : NULL,
                  .z = z_of(c), .y = tgc_kernel_out_ptr(c, 0), .act = c->fused_act};
    atomic_init(&j.failed, false);
    c->impl = "onednn conv nhwc";
    for (j.image = 0; j.image < g.batch && !atomic_load(&j.failed); j.image++)
        tgc_parallel_for(c->pool, tgc_dnnl_conv_pieces(dq), nhwc_piece, &j);
    return atomic_load(&j.failed) ? tgc_kernel_fail(c, "oneDNN's convolution failed") : TGC_OK;
}

/* What _ConvNHWC holds: W packed for the tiles, or oneDNN's weights
 * (exact: oneDNN asked), in its cache, standing in for W; the fallback's
 * NCHW copies of X and Y. */
static void conv_nhwc_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_conv_geometry g;
    if (c->n_inputs < 2 || c->n_outputs < 1 || read_geometry(c, &g) != TGC_OK) return;
    if (own_pointwise_applies(c, &g)) {
        out->cache_bytes = tgc_cpu_pointwise_bytes(g.m_count, g.cg, tgc_cpu_conv_isa()->lanes);
        out->replaces_inputs = 1u << 1;
    } else if (packed_applies(c, &g)) {
        tgc_gemm_shape s = pointwise_shape(&g);
        out->cache_bytes = tgc_packed_gemm_cached_bound(&s);
        out->replaces_inputs = 1u << 1;
        out->coarse_pieces = true; /* pieces of output channels */
    } else if (c->const_inputs & 1u << 1) {
        out->cache_bytes = tgc_cpu_dnnl_conv_cache_bytes(&g, has_z(c));
        if (out->cache_bytes > 0) out->replaces_inputs = 1u << 1;
    }
    int64_t x_floats, y_floats, bytes;
    if (out->cache_bytes == 0 && /* the fallback's copies of X and Y (and of Z, where Y may be its buffer) */
        tgc_checked_mul_i64(g.batch, g.channels * g.in_size, &x_floats) &&
        tgc_checked_mul_i64(g.batch, g.m_count * g.out_size, &y_floats) &&
        tgc_checked_add_i64(x_floats, y_floats * (has_z(c) ? 2 : 1), &bytes) &&
        tgc_checked_mul_i64(bytes, (int64_t)sizeof(float), &bytes))
        out->workspace_bytes = bytes;
}

/* tgc_kernel_choose_fn: the own pointwise tiles or oneDNN's convolution, as
 * conv_nhwc will take them (a session constant W); NULL where it cannot
 * say. */
static const char *conv_nhwc_choose(tgc_kernel_ctx *c) {
    tgc_conv_geometry g;
    if (c->n_inputs < 2 || c->n_outputs < 1 || read_geometry(c, &g) != TGC_OK || !(c->const_inputs & 1u << 1))
        return NULL;
    if (own_pointwise_applies(c, &g)) return "pointwise nhwc";
    if (packed_applies(c, &g)) return "packed gemm nhwc";
    return tgc_dnnl_conv_possible(&g, TGC_FLOAT32) ? "onednn conv nhwc" : NULL;
}

const tgc_kernel_def tgc_cpu_kernels_conv_nhwc[] = {
    {.op = "_ConvNHWC",
     .fn = conv_nhwc,
     .choose = conv_nhwc_choose,
     .forward_input = 3, /* Z's buffer: the primitive adds into it */
     .fuses_activation = true,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID},
     .footprint = conv_nhwc_footprint},
    {.op = NULL},
};
