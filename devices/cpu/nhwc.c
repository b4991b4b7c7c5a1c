/* Channels-last helpers (see nhwc.h). */
#include "devices/cpu/nhwc.h"

#include "devices/kernel_cache.h"

#include "support/alloc.h"

#include <stdatomic.h>
#include <string.h>

static const int TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

tgc_value tgc_cpu_nhwc_view(const tgc_value *v, bool to_nchw) {
    tgc_value p = *v;
    const int *perm = to_nchw ? TO_NCHW : TO_NHWC;
    for (int a = 0; a < 4 && v->rank == 4; a++) p.dims[a] = v->dims[perm[a]];
    return p;
}

/* a [n, d1, d2, d3] of elem-byte elements into b [n, d3, d1, d2] (to_nchw)
 * or into b [n, d2, d3, d1] (the reverse): a plain loop, for the fallback
 * only. */
static void transpose(const char *a, const tgc_value *av, bool to_nchw, size_t elem, char *b) {
    int64_t n = av->dims[0], d1 = av->dims[1], d2 = av->dims[2], d3 = av->dims[3];
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = 0; p < d1; p++)
            for (int64_t q = 0; q < d2; q++)
                for (int64_t r = 0; r < d3; r++) {
                    int64_t from = ((i * d1 + p) * d2 + q) * d3 + r;
                    int64_t to = to_nchw ? ((i * d3 + r) * d1 + p) * d2 + q : ((i * d2 + q) * d3 + r) * d1 + p;
                    memcpy(b + to * elem, a + from * elem, elem);
                }
}

tgc_status tgc_cpu_nhwc_fallback(tgc_kernel_ctx *c, tgc_status (*nchw)(tgc_kernel_ctx *c)) {
    enum { MAX_INPUTS = 9 };
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (c->n_inputs > MAX_INPUTS || x->rank != 4 || y->rank != 4)
        return tgc_kernel_fail(c, "x and y must be 4-D, channels last");
    size_t xn = tgc_value_nbytes(x), yn = tgc_value_nbytes(y); /* the sizes of the buffers the values have */
    char *xt = tgc_malloc(xn + 1), *yt = tgc_malloc(yn + 1);
    if (xt == NULL || yt == NULL) {
        tgc_free(xt), tgc_free(yt);
        return tgc_kernel_fail(c, "out of host memory for the NCHW copies (%zu and %zu bytes)", xn, yn);
    }
    transpose(tgc_kernel_in_ptr(c, 0), x, true, tgc_dtype_size(x->dtype), xt);
    tgc_buffer xb = {.device = x->buf->device, .mem = xt, .nbytes = xn, .borrowed = true};
    tgc_buffer yb = {.device = y->buf->device, .mem = yt, .nbytes = yn, .borrowed = true};
    atomic_init(&xb.refs, 1);
    atomic_init(&yb.refs, 1);
    tgc_value inputs[MAX_INPUTS], out = tgc_cpu_nhwc_view(y, true);
    for (int i = 0; i < c->n_inputs; i++) inputs[i] = c->inputs[i];
    inputs[0] = tgc_cpu_nhwc_view(x, true);
    inputs[0].buf = &xb;
    out.buf = &yb;
    tgc_kernel_ctx sub = *c;
    sub.inputs = inputs;
    sub.outputs = &out;
    tgc_status st = nchw(&sub);
    if (st == TGC_OK) transpose(yt, &out, false, tgc_dtype_size(y->dtype), tgc_kernel_out_ptr(c, 0));
    tgc_free(xt), tgc_free(yt);
    return st;
}

/* The node's cached convolution; dnnl NULL when oneDNN declined its
 * geometry (so the session asks once). */
typedef struct dnnl_block {
    tgc_dnnl_conv *dnnl;
} dnnl_block;

typedef struct dnnl_build_arg {
    const tgc_conv_geometry *g;
    const float *w;
    bool sum;
} dnnl_build_arg;

/* The float32 ops a convolution of geometry g does besides its sums. */
static unsigned f32_ops(const tgc_conv_geometry *g, bool sum) {
    return (g->has_bias ? TGC_DNNL_CONV_BIAS : 0u) | (sum ? TGC_DNNL_CONV_SUM : 0u);
}

static void *build_block(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const dnnl_build_arg *a = arg;
    dnnl_block *blk = tgc_malloc(sizeof *blk);
    if (blk == NULL) return NULL;
    size_t held = 0;
    bool no_memory;
    /* float32 pieces come from the sizes alone: no thread count to give */
    blk->dnnl = tgc_dnnl_conv_create(a->g, TGC_FLOAT32, a->w, 1, NULL, f32_ops(a->g, a->sum), &held, &no_memory);
    if (no_memory) { /* not a decline: the next run tries again */
        tgc_free(blk);
        return NULL;
    }
    *bytes = sizeof *blk + held;
    return blk;
}

static void release_block(void *data) {
    dnnl_block *blk = data;
    if (blk == NULL) return;
    tgc_dnnl_conv_free(blk->dnnl);
    tgc_free(blk);
}

const tgc_dnnl_conv *tgc_cpu_dnnl_conv_cached(tgc_kernel_ctx *c, const tgc_conv_geometry *g, bool sum,
                                             bool *no_memory) {
    *no_memory = false;
    if (!(c->const_inputs & 1u << 1) || c->cache == NULL) return NULL;
    dnnl_build_arg a = {g, tgc_kernel_in_ptr(c, 1), sum};
    const dnnl_block *blk = tgc_kernel_cache_get_owning(c, 1u << 1, build_block, release_block, &a);
    /* W a constant and a cache: only memory stops the build, unless another way's block is there */
    *no_memory = blk == NULL && !tgc_kernel_cache_taken(c);
    if (blk == NULL || blk->dnnl == NULL || !tgc_dnnl_conv_matches(blk->dnnl, g, TGC_FLOAT32)) return NULL;
    tgc_kernel_cache_replaces(c, 1u << 1);
    return blk->dnnl;
}

int64_t tgc_cpu_dnnl_conv_cache_bytes(const tgc_conv_geometry *g, bool sum) {
    int64_t bytes = tgc_dnnl_conv_bytes(g, TGC_FLOAT32, 1, f32_ops(g, sum));
    return bytes > 0 ? bytes + (int64_t)sizeof(dnnl_block) : 0;
}
