/* ConvTranspose-11 and MaxUnpool-11 on the cpu (float32), and the table of
 * the family (tgc_cpu_kernels_convt; kernels_convt.h lists its files).
 *
 * ConvTranspose is the adjoint of Conv's im2col + GEMM: for each image and
 * group, col = W_g^T [M/g * k1..kn, C/g] x X_g [C/g, D1..Dn] by OpenBLAS,
 * then col2im scatters each row (output channel m, tap t) onto Y: input
 * position i adds to output position i * s - pad_begin + t * d where that
 * lies inside Y (devices/convt_geometry.h resolves pads, auto_pad and
 * output_shape). Y starts as the bias. col holds at most COL_BUDGET_FLOATS
 * (a block of output channels at a time); col2im runs over the output
 * channels of a block on the device's threads, each writing its own rows.
 *
 * MaxUnpool writes zeros, then X[j] at flat position I[j] of the default
 * output [N, C, (D - 1) * s + k - pads...], which lies in the leading corner
 * of Y when output_shape makes Y larger (ONNX's reference). An index out
 * of range fails the node. */
#include "devices/cpu/kernels_convt.h"

#include "devices/convt_geometry.h"
#include "devices/cpu/kernels_nn.h"
#include "support/alloc.h"
#include "support/checked.h"

#include <string.h>

/* The largest col block, in floats (32 MiB). */
#define COL_BUDGET_FLOATS ((int64_t)8 << 20)

/* ---- ConvTranspose ----------------------------------------------------------------- */

/* ceil(a / b) and floor(a / b) for b > 0 and any sign of a. */
static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* One block of col2im: rows (m - m0) * kk + t of col for m in [m0, m1). */
typedef struct col2im_block {
    const tgc_convt_geometry *g;
    const float *col; /* [(m1 - m0) * kk, in_size] */
    float *y;         /* the group's first output channel, [mg, out_size] */
    int64_t m0;
} col2im_block;

/* Adds col row `row` (tap index tap, row-major over the kernel) onto the
 * output plane yp. */
static void col2im_row(const tgc_convt_geometry *g, const float *row, int64_t tap, float *yp) {
    int n = g->n;
    int64_t t[TGC_MAX_RANK], lo[TGC_MAX_RANK], hi[TGC_MAX_RANK], off[TGC_MAX_RANK];
    for (int a = n - 1; a >= 0; a--) {
        t[a] = tap % g->kernel[a];
        tap /= g->kernel[a];
    }
    for (int a = 0; a < n; a++) {
        /* 0 <= i * s + off < out with off = t * d - pad_begin */
        int64_t s = g->strides[a];
        off[a] = t[a] * g->dilations[a] - g->pad_begin[a];
        lo[a] = ceil_div(-off[a], s);
        hi[a] = floor_div(g->out[a] - 1 - off[a], s) + 1;
        if (lo[a] < 0) lo[a] = 0;
        if (hi[a] > g->in[a]) hi[a] = g->in[a];
        if (lo[a] >= hi[a]) return;
    }
    int64_t i[TGC_MAX_RANK];
    memcpy(i, lo, sizeof i);
    int last = n - 1;
    int64_t s_last = g->strides[last];
    for (;;) {
        int64_t src = 0, dst = 0;
        for (int a = 0; a < last; a++) {
            src = src * g->in[a] + i[a];
            dst = dst * g->out[a] + i[a] * g->strides[a] + off[a];
        }
        const float *r = row + src * g->in[last];
        float *o = yp + dst * g->out[last] + off[last];
        for (int64_t k = lo[last]; k < hi[last]; k++) o[k * s_last] += r[k];
        int a = last - 1;
        for (; a >= 0; a--) {
            if (++i[a] < hi[a]) break;
            i[a] = lo[a];
        }
        if (a < 0) return;
    }
}

static void col2im_channel(void *arg, int64_t m, int slot) {
    (void)slot;
    const col2im_block *b = arg;
    const tgc_convt_geometry *g = b->g;
    float *yp = b->y + (b->m0 + m) * g->out_size;
    for (int64_t t = 0; t < g->kk_count; t++)
        col2im_row(g, b->col + (m * g->kk_count + t) * g->in_size, t, yp);
}

static tgc_status conv_transpose_f32(tgc_kernel_ctx *c) {
    tgc_convt_geometry g;
    tgc_status st = tgc_convt_read(c, &g);
    if (st != TGC_OK) return st;
    const float *x = tgc_kernel_in_ptr(c, 0), *w = tgc_kernel_in_ptr(c, 1);
    const float *bias = g.has_bias ? tgc_kernel_in_ptr(c, 2) : NULL;
    float *y = tgc_kernel_out_ptr(c, 0);
    int64_t rows = g.batch * g.m_count;
    if (rows == 0 || g.out_size == 0) return TGC_OK;
    for (int64_t r = 0; r < rows; r++) {
        float v = bias != NULL ? bias[r % g.m_count] : 0.0f, *yr = y + r * g.out_size;
        for (int64_t j = 0; j < g.out_size; j++) yr[j] = v;
    }
    int64_t per_channel; /* col floats of one output channel */
    if (g.in_size == 0 || g.mg == 0 || !tgc_checked_mul_i64(g.kk_count, g.in_size, &per_channel)) return TGC_OK;
    int64_t mb = COL_BUDGET_FLOATS / per_channel;
    if (mb < 1) mb = 1;
    if (mb > g.mg) mb = g.mg;
    size_t col_bytes;
    if (!tgc_checked_nbytes(mb * per_channel, sizeof(float), &col_bytes)) /* mb * per_channel <= max(budget, per_channel) */
        return tgc_kernel_fail(c, "ConvTranspose's column buffer would pass the address space");
    float *col = tgc_malloc(col_bytes);
    if (col == NULL) return tgc_kernel_fail(c, "out of host memory for ConvTranspose's column buffer (%zu bytes)", col_bytes);
    int64_t ld_w = g.mg * g.kk_count; /* W_g is [C/g, mg * kk] */
    for (int64_t n = 0; st == TGC_OK && n < g.batch; n++)
        for (int64_t gi = 0; st == TGC_OK && gi < g.group; gi++) {
            const float *xg = x + (n * g.channels + gi * g.cg) * g.in_size;
            const float *wg = w + gi * g.cg * ld_w;
            float *yg = y + (n * g.m_count + gi * g.mg) * g.out_size;
            for (int64_t m0 = 0; st == TGC_OK && m0 < g.mg; m0 += mb) {
                int64_t m1 = m0 + mb < g.mg ? m0 + mb : g.mg;
                if (!tgc_cpu_sgemm(c->pool, true, false, (m1 - m0) * g.kk_count, g.in_size, g.cg, 1.0f,
                                   wg + m0 * g.kk_count, ld_w, xg, g.in_size, 0.0f, col, g.in_size)) {
                    st = tgc_kernel_fail(c, "ConvTranspose: " TGC_CPU_GEMM_FAILED);
                    break;
                }
                col2im_block b = {.g = &g, .col = col, .y = yg, .m0 = m0};
                tgc_parallel_for(c->pool, m1 - m0, col2im_channel, &b);
            }
        }
    tgc_free(col);
    return st;
}

/* ---- MaxUnpool ------------------------------------------------------------------------ */

static tgc_status max_unpool_f32(tgc_kernel_ctx *c) {
    int64_t unpooled[TGC_MAX_RANK];
    tgc_status st = tgc_convt_read_unpool(c, unpooled);
    if (st != TGC_OK) return st;
    const tgc_value *xv = &c->inputs[0], *yv = &c->outputs[0];
    int rank = xv->rank;
    int64_t total = tgc_value_numel(yv), count = tgc_value_numel(xv), limit;
    if (!tgc_checked_numel(rank, unpooled, &limit)) return tgc_kernel_fail(c, "MaxUnpool's output size passes int64");
    float *y = tgc_kernel_out_ptr(c, 0);
    if (total > 0) memset(y, 0, (size_t)total * sizeof *y);
    const float *x = tgc_kernel_in_ptr(c, 0);
    const int64_t *ind = tgc_kernel_in_ptr(c, 1);
    for (int64_t j = 0; j < count; j++) {
        int64_t k = ind[j];
        if (k < 0 || k >= limit)
            return tgc_kernel_fail(c, "input I has %lld at position %lld; indices must be in [0, %lld)", (long long)k,
                                   (long long)j, (long long)limit);
        /* k as a multi-index of `unpooled`, re-flattened over Y's dims */
        int64_t off = 0, stride = 1;
        for (int a = rank - 1; a >= 0; a--) {
            off += (k % unpooled[a]) * stride;
            k /= unpooled[a];
            stride *= yv->dims[a];
        }
        y[off] = x[j];
    }
    return TGC_OK;
}

/* ---- The family ------------------------------------------------------------------------ */

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}
#define ANY_DTYPE {TGC_DTYPE_INVALID}
#define BIT(i) (1u << (i))

const tgc_kernel_def tgc_cpu_kernels_convt[] = {
    {.op = "ConvTranspose", .fn = conv_transpose_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "MaxUnpool", .fn = max_unpool_f32, .host_inputs = BIT(2), .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "Pad", .fn = tgc_cpu_pad, .host_inputs = BIT(1) | BIT(2) | BIT(3),
     .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "DepthToSpace", .fn = tgc_cpu_depth_to_space, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "SpaceToDepth", .fn = tgc_cpu_space_to_depth, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "InstanceNormalization", .fn = tgc_cpu_instance_norm_f32, .forward_input = 0,
     .dtypes = F32_ONLY},
    {.op = "LRN", .fn = tgc_cpu_lrn_f32, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "LpPool", .fn = tgc_cpu_lp_pool_f32, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "GlobalMaxPool", .fn = tgc_cpu_global_max_pool_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "GlobalLpPool", .fn = tgc_cpu_global_lp_pool_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = NULL},
};
