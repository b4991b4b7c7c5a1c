/* MatMul, Gemm and Conv on the gpu (float32): the GEMMs are CLBlast's
 * (CLBlastSgemm, row-major, on the device's in-order queue, no event), the
 * rest is devices/opencl/kernels/nn.cl. Shapes, attributes and results
 * follow the cpu kernels (devices/cpu/kernels_gemm.c, kernels_conv.c):
 *
 * MatMul-13 (numpy.matmul): 1-D operands gain and lose an axis; batch axes
 * broadcast. When B has no batch of its own the batch folds into the rows
 * of one GEMM; otherwise one GEMM per output matrix, its A and B picked by
 * offset (stride 0 along broadcast axes). CLBlastSgemmBatched would make
 * that one launch, but it is a second CLBlast program to compile on first
 * use; the loop keeps to one.
 *
 * Gemm-13: Y = alpha * A' B' + beta * C: C (optional, broadcast to [M, N])
 * is copied into Y by nn_broadcast2d_f32, then SGEMM with beta; without C,
 * beta 0 (CLBlast then ignores Y's old contents).
 *
 * Conv-11: Y starts as the bias (nn_bias_fill_f32) and the products add
 * onto it (beta 1). Three paths, as on the cpu:
 *   - pointwise (kernel 1, stride 1, no pads): one SGEMM per image and
 *     group on the input as it lies.
 *   - depthwise (group == C > 1): nn_conv_direct_f32, one work-item per
 *     output; im2col would copy KK times the input for a 1-row GEMM.
 *   - otherwise im2col (Chellapilla, Puri and Simard, "High Performance
 *     Convolutional Neural Networks for Document Processing", 2006):
 *     nn_im2col_f32 unrolls every channel's receptive fields for a slab of
 *     images into a scratch buffer (tgc_cl_scratch) [C * KK, out] per
 *     image, and each image and group is one SGEMM, W_g [M/g, C/g * KK] x
 *     col_g. The slab is as many images as fit COL_BUDGET_BYTES; when one
 *     image alone passes it, rows of the first output axis at a time.
 * CLBlast's own Sconvgemm is not used: it takes one symmetric pad per axis,
 * 2-D only, and no groups, where ONNX Conv has all three. */
#include "devices/opencl/kernels_nn.h"
#include "devices/matmul_geometry.h"

#include "support/alloc.h"
#include "support/checked.h"

#include "devices/opencl/clblast_api.h"
#include <limits.h>
#include <string.h>

/* The largest im2col scratch buffer made at once. */
#define COL_BUDGET_BYTES ((int64_t)64 << 20)

/* The longest run of k one CLBlastSgemm call sums (see tgc_cl_nn_sgemm). */
#define SGEMM_K_BLOCK ((int64_t)256)

/* ---- SGEMM through CLBlast ------------------------------------------------------ */

/* The name of a CLBlast status code that is not an OpenCL one. */
static const char *clblast_status_name(CLBlastStatusCode s) {
    switch (s) {
#define NAME(e) \
    case e: return #e;
        NAME(CLBlastNotImplemented) NAME(CLBlastInvalidMatrixA) NAME(CLBlastInvalidMatrixB)
        NAME(CLBlastInvalidMatrixC) NAME(CLBlastInvalidDimension) NAME(CLBlastInvalidLeadDimA)
        NAME(CLBlastInvalidLeadDimB) NAME(CLBlastInvalidLeadDimC) NAME(CLBlastInsufficientMemoryA)
        NAME(CLBlastInsufficientMemoryB) NAME(CLBlastInsufficientMemoryC) NAME(CLBlastInsufficientMemoryTemp)
        NAME(CLBlastInvalidBatchCount) NAME(CLBlastInvalidLocalMemUsage) NAME(CLBlastDatabaseError)
        NAME(CLBlastUnknownError) NAME(CLBlastUnexpectedError)
#undef NAME
    default: return NULL;
    }
}

/* The bytes of CLBlast's temporary buffer for the SGEMM call whose shape
 * arguments are key (CLBlastSGemmTempBufferSize, through the device's
 * cache); 0 where CLBlast cannot say. Under tgc_cl_blas_lock. */
static size_t temp_bytes(tgc_cl_device *d, const size_t key[11], cl_command_queue *queue) {
    uint64_t h = 1469598103934665603u; /* FNV-1a over the arguments */
    for (int i = 0; i < 11; i++) h = (h ^ key[i]) * 1099511628211u;
    tgc_cl_temp_size *e = &d->temp_sizes[h % TGC_CL_TEMP_SIZES];
    if (e->set && memcmp(e->key, key, sizeof e->key) == 0) return e->bytes;
    size_t bytes = 0;
    if (tgc_clblast.sgemm_temp_size(CLBlastLayoutRowMajor, (CLBlastTranspose)key[0], (CLBlastTranspose)key[1], key[2],
                                    key[3], key[4], key[5], key[6], key[7], key[8], key[9], key[10], queue,
                                    &bytes) != CLBlastSuccess)
        bytes = 0;
    memcpy(e->key, key, sizeof e->key);
    e->bytes = bytes;
    e->set = true;
    return bytes;
}

/* One CLBlastSgemm call: C = alpha * op(A) op(B) + beta * C over the whole k. */
static tgc_status sgemm_call(tgc_kernel_ctx *c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                             cl_mem a, int64_t a_off, int64_t lda, cl_mem b, int64_t b_off, int64_t ldb, float beta,
                             cl_mem y, int64_t y_off, int64_t ldc) {
    cl_command_queue queue = tgc_cl_queue(c->device);
    char err[600];
    if (!tgc_clblast_open(err, sizeof err)) return tgc_kernel_fail(c, "%s", err);
    CLBlastTranspose tra = ta ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose trb = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
    /* The call's temporary buffer (its padded copies) from the device's arena, within its limit; with a
     * CLBlast before 1.5 (no GemmTempBufferSize), CLBlast allocates it itself each call, not seen here. */
    const size_t key[11] = {(size_t)tra, (size_t)trb, (size_t)m, (size_t)n, (size_t)k, (size_t)a_off, (size_t)lda,
                            (size_t)b_off, (size_t)ldb, (size_t)y_off, (size_t)ldc};
    tgc_buffer *temp_buf = NULL;
    tgc_cl_blas_lock();
    size_t temp = tgc_clblast.sgemm_temp_size != NULL ? temp_bytes((tgc_cl_device *)c->device, key, &queue) : 0;
    if (temp > 0 && (temp_buf = tgc_cl_scratch(c->device, temp)) == NULL) {
        tgc_cl_blas_unlock();
        return tgc_kernel_fail_nomem(c, "out of device memory for CLBlast's temporary buffer (%zu bytes)", temp);
    }
    CLBlastStatusCode s =
        temp_buf != NULL
            ? tgc_clblast.sgemm_with_temp(CLBlastLayoutRowMajor, tra, trb, (size_t)m, (size_t)n, (size_t)k, alpha, a,
                                          (size_t)a_off, (size_t)lda, b, (size_t)b_off, (size_t)ldb, beta, y,
                                          (size_t)y_off, (size_t)ldc, &queue, NULL, temp_buf->mem)
            : tgc_clblast.sgemm(CLBlastLayoutRowMajor, tra, trb, (size_t)m, (size_t)n, (size_t)k, alpha, a,
                                (size_t)a_off, (size_t)lda, b, (size_t)b_off, (size_t)ldb, beta, y, (size_t)y_off,
                                (size_t)ldc, &queue, NULL);
    tgc_cl_blas_unlock();
    tgc_cl_scratch_release(temp_buf); /* later users of the memory come after the call on the queue */
    tgc_cl_count_launches(c->device, 1);
    if (s == CLBlastSuccess) return TGC_OK;
    const char *name = clblast_status_name(s);
    return tgc_kernel_fail(c, "CLBlastSgemm (m %lld, n %lld, k %lld) failed: %s (%d)", (long long)m, (long long)n,
                           (long long)k, name != NULL ? name : tgc_cl_error_name((cl_int)s), (int)s);
}

tgc_status tgc_cl_nn_sgemm(tgc_kernel_ctx *c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                           cl_mem a, int64_t a_off, int64_t lda, cl_mem b, int64_t b_off, int64_t ldb, float beta,
                           cl_mem y, int64_t y_off, int64_t ldc) {
    tgc_status st = TGC_OK;
    for (int64_t k0 = 0; st == TGC_OK && k0 < k; k0 += SGEMM_K_BLOCK) {
        int64_t kb = k - k0 < SGEMM_K_BLOCK ? k - k0 : SGEMM_K_BLOCK;
        st = sgemm_call(c, ta, tb, m, n, kb, alpha, a, a_off + (ta ? k0 * lda : k0), lda, b,
                        b_off + (tb ? k0 : k0 * ldb), ldb, k0 == 0 ? beta : 1.0f, y, y_off, ldc);
    }
    return st;
}

/* ---- MatMul ----------------------------------------------------------------------- */

tgc_status tgc_gpu_matmul_f32(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_status st = tgc_matmul_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    int64_t m = g.m, n = g.n, k = g.k, batch = g.batch;
    if (batch == 0 || m == 0 || n == 0) return TGC_OK;
    cl_mem ya = y->buf->mem;
    if (k == 0) return tgc_cl_nn_fill(c, ya, 0.0f, batch * m * n); /* an empty sum */

    cl_mem am = a->buf->mem, bm = b->buf->mem;
    if (g.b_count == 1) /* then A's batch is the output's: one GEMM of batch * m rows */
        return tgc_cl_nn_sgemm(c, false, false, batch * m, n, k, 1.0f, am, 0, k, bm, 0, n, 0.0f, ya, 0, n);
    for (int64_t t = 0; t < batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
        st = tgc_cl_nn_sgemm(c, false, false, m, n, k, 1.0f, am, oa, k, bm, ob, n, 0.0f, ya, oy, n);
        if (st != TGC_OK) return st;
    }
    return TGC_OK;
}

/* ---- Gemm ------------------------------------------------------------------------ */

tgc_status tgc_gpu_gemm_f32(tgc_kernel_ctx *c) {
    tgc_gemm_geometry g;
    tgc_status st = tgc_gemm_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    bool has_c = g.has_c, ta = g.ta, tb = g.tb;
    float alpha = g.alpha, beta = g.beta;
    int64_t m = g.m, n = g.n, k = g.k, cm = g.cm, cn = g.cn;
    if (m == 0 || n == 0) return TGC_OK;

    cl_mem ym = y->buf->mem;
    /* With k == 0 the product is empty: Y = beta * C (0 when beta is 0, as BLAS). */
    bool c_term = has_c && beta != 0.0f;
    if (!c_term && k == 0) return tgc_cl_nn_fill(c, ym, 0.0f, m * n);
    if (c_term) {
        float scale = k == 0 ? beta : 1.0f;
        size_t global = (size_t)(m * n);
        tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[2].buf), TGC_CL_MEM(ym), TGC_CL_LONG(m), TGC_CL_LONG(n),
                             TGC_CL_LONG(cm), TGC_CL_LONG(cn), TGC_CL_FLOAT(scale)};
        st = tgc_cl_enqueue(c, "nn_broadcast2d_f32", 1, &global, NULL, 7, args);
        if (st != TGC_OK || k == 0) return st;
    }
    return tgc_cl_nn_sgemm(c, ta, tb, m, n, k, alpha, a->buf->mem, 0, a->dims[1], b->buf->mem, 0, b->dims[1],
                           c_term ? beta : 0.0f, ym, 0, n);
}

/* ---- Conv -------------------------------------------------------------------------- */

/* im2col in slabs: `images` whole images, or `rows` rows of the first
 * output axis of one image when a single image passes COL_BUDGET_BYTES;
 * the slab's buffer is *col_bytes. False when a size does not fit. */
static bool col_slab(const tgc_conv_geometry *g, int64_t *images, int64_t *rows, size_t *col_bytes) {
    int64_t budget = COL_BUDGET_BYTES / (int64_t)sizeof(float);
    int64_t row_cols = g->out_size / g->w.out[0], row_floats, image_floats, col_floats;
    *rows = g->w.out[0];
    if (!tgc_checked_mul_i64(g->channels, g->kk_count, &row_floats) ||
        !tgc_checked_mul_i64(row_floats, row_cols, &row_floats) ||
        !tgc_checked_mul_i64(row_floats, *rows, &image_floats) || image_floats < 1)
        return false;
    *images = budget / image_floats;
    if (*images < 1) {
        *images = 1;
        *rows = budget / row_floats;
        if (*rows < 1) *rows = 1;
    }
    if (*images > g->batch) *images = g->batch;
    return tgc_checked_mul_i64(*images * *rows, row_floats, &col_floats) && /* images * rows <= budget */
           tgc_checked_nbytes(col_floats, sizeof(float), col_bytes);
}

tgc_status tgc_gpu_conv_f32(tgc_kernel_ctx *c) {
    tgc_conv_geometry g;
    tgc_status st = tgc_window_read_conv(c, &g);
    tgc_cl_window cw;
    if (st == TGC_OK) st = tgc_cl_nn_window(c, &g.w, &cw);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *wt = &c->inputs[1], *y = &c->outputs[0];
    const tgc_window w = g.w;
    bool has_bias = g.has_bias, pointwise = g.pointwise;
    int64_t group = g.group, batch = g.batch, channels = g.channels, m_count = g.m_count, cg = g.cg;
    int64_t in_size = g.in_size, out_size = g.out_size, kk_count = g.kk_count;
    int64_t total = batch * m_count * out_size;
    if (total == 0) return TGC_OK;
    cl_mem xm = x->buf->mem, wm = wt->buf->mem, ym = y->buf->mem;
    cl_mem bm = has_bias ? c->inputs[2].buf->mem : wm; /* wm: a placeholder the kernel does not read */
    int64_t k = cg * kk_count, m_group = m_count / group;

    if (k > 0 && in_size > 0 && group == channels && group > 1) { /* depthwise: y written whole, bias included */
        size_t global = (size_t)total;
        tgc_cl_arg args[] = {TGC_CL_MEM(xm), TGC_CL_MEM(wm), TGC_CL_MEM(bm), TGC_CL_INT(has_bias),
                             TGC_CL_MEM(ym), TGC_CL_BYTES(&cw, sizeof cw), TGC_CL_LONG(channels),
                             TGC_CL_LONG(m_count), TGC_CL_LONG(cg), TGC_CL_LONG(m_group), TGC_CL_INT((cl_int)in_size),
                             TGC_CL_INT((cl_int)out_size), TGC_CL_INT((cl_int)kk_count), TGC_CL_LONG(total)};
        return tgc_cl_enqueue(c, "nn_conv_direct_f32", 1, &global, NULL, 14, args);
    }

    /* Y starts as the bias; the products accumulate onto it. */
    if (has_bias) {
        size_t global = (size_t)total;
        tgc_cl_arg args[] = {TGC_CL_MEM(ym), TGC_CL_MEM(bm), TGC_CL_LONG(m_count), TGC_CL_LONG(out_size),
                             TGC_CL_LONG(total)};
        st = tgc_cl_enqueue(c, "nn_bias_fill_f32", 1, &global, NULL, 5, args);
    } else {
        st = tgc_cl_nn_fill(c, ym, 0.0f, total);
    }
    if (st != TGC_OK || k == 0 || in_size == 0 || m_group == 0) return st; /* nothing but padding to read */

    if (pointwise) {
        for (int64_t n = 0; st == TGC_OK && n < batch; n++)
            for (int64_t g = 0; st == TGC_OK && g < group; g++)
                st = tgc_cl_nn_sgemm(c, false, false, m_group, out_size, cg, 1.0f, wm, g * m_group * cg, cg, xm,
                                     (n * channels + g * cg) * in_size, in_size, 1.0f, ym,
                                     (n * m_count + g * m_group) * out_size, out_size);
        return st;
    }

    int64_t row_cols = out_size / w.out[0], images, rows;
    size_t col_bytes;
    if (!col_slab(&g, &images, &rows, &col_bytes)) return tgc_kernel_fail(c, "Conv: the im2col sizes do not fit");
    tgc_buffer *col_buf = tgc_cl_scratch(c->device, col_bytes);
    if (col_buf == NULL)
        return tgc_kernel_fail_nomem(c, "out of device memory for Conv's im2col buffer (%zu bytes)", col_bytes);
    cl_mem col = col_buf->mem;
    for (int64_t n0 = 0; st == TGC_OK && n0 < batch; n0 += images) {
        int64_t ni = batch - n0 < images ? batch - n0 : images;
        for (int64_t o0 = 0; st == TGC_OK && o0 < w.out[0]; o0 += rows) {
            int64_t o1 = o0 + rows < w.out[0] ? o0 + rows : w.out[0], cols = (o1 - o0) * row_cols;
            size_t global[2] = {(size_t)cols, (size_t)(ni * channels)};
            tgc_cl_arg args[] = {TGC_CL_MEM(xm), TGC_CL_LONG(n0 * channels * in_size), TGC_CL_MEM(col),
                                 TGC_CL_BYTES(&cw, sizeof cw), TGC_CL_LONG(ni * channels),
                                 TGC_CL_INT((cl_int)in_size), TGC_CL_INT((cl_int)kk_count),
                                 TGC_CL_INT((cl_int)cols), TGC_CL_INT((cl_int)(o0 * row_cols))};
            st = tgc_cl_enqueue(c, "nn_im2col_f32", 2, global, NULL, 9, args);
            for (int64_t q = 0; st == TGC_OK && q < ni; q++)
                for (int64_t g = 0; st == TGC_OK && g < group; g++)
                    st = tgc_cl_nn_sgemm(c, false, false, m_group, cols, k, 1.0f, wm, g * m_group * k, k, col,
                                         (q * channels * kk_count + g * k) * cols, cols, 1.0f, ym,
                                         ((n0 + q) * m_count + g * m_group) * out_size + o0 * row_cols, out_size);
        }
    }
    tgc_cl_scratch_release(col_buf);
    return st;
}

/* ---- footprints ------------------------------------------------------------------ */

/* CLBlast's indirect GEMM copies A, B and C into one temporary buffer
 * padded to its tiles (Xgemm's ComputeTempSize: a_one_i * a_two_i + b +
 * c, each dim ceiled to MWG, NWG or KWG) and allocates it itself, outside
 * the device's allocator, for the length of the call. A bound for one
 * call (k at most SGEMM_K_BLOCK): every dim ceiled to 128, the largest
 * tile of CLBlast's database, plus room to align the offsets; in bytes. */
#define CLBLAST_TILE_BOUND 128
static int64_t pad_tile(int64_t v) { return (v + CLBLAST_TILE_BOUND - 1) / CLBLAST_TILE_BOUND * CLBLAST_TILE_BOUND; }

static int64_t clblast_temp_bound(int64_t m, int64_t n, int64_t k) {
    if (k > SGEMM_K_BLOCK) k = SGEMM_K_BLOCK;
    double m_i = (double)pad_tile(m), n_i = (double)pad_tile(n), k_i = (double)pad_tile(k);
    double floats = m_i * k_i + k_i * n_i + m_i * n_i + 2 * 16;
    return floats * 4 < 0x1p62 ? (int64_t)(floats * 4) : INT64_C(1) << 62;
}

void tgc_gpu_matmul_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_matmul_geometry g;
    if (tgc_matmul_geometry_read(c, &g) != TGC_OK || g.batch == 0 || g.m == 0 || g.n == 0 || g.k == 0) return;
    out->workspace_bytes = clblast_temp_bound(g.b_count == 1 ? g.batch * g.m : g.m, g.n, g.k);
}

void tgc_gpu_gemm_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_gemm_geometry g;
    if (tgc_gemm_geometry_read(c, &g) != TGC_OK || g.m == 0 || g.n == 0 || g.k == 0) return;
    out->workspace_bytes = clblast_temp_bound(g.m, g.n, g.k);
}

void tgc_gpu_conv_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    tgc_conv_geometry g;
    if (tgc_window_read_conv(c, &g) != TGC_OK || g.batch * g.m_count * g.out_size == 0 || g.in_size == 0) return;
    int64_t k = g.cg * g.kk_count, m_group = g.m_count / g.group;
    if (k == 0 || m_group == 0 || (g.group == g.channels && g.group > 1)) return; /* depthwise: direct, no GEMM */
    if (g.pointwise) {
        out->workspace_bytes = clblast_temp_bound(m_group, g.out_size, g.cg);
        return;
    }
    int64_t images, rows;
    size_t col_bytes;
    if (!col_slab(&g, &images, &rows, &col_bytes)) return;
    int64_t cols = rows * (g.out_size / g.w.out[0]);
    out->workspace_bytes = (int64_t)col_bytes + clblast_temp_bound(m_group, cols, k);
}
