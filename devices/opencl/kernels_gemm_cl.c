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

#include "support/alloc.h"

#include <clblast_c.h>
#include <limits.h>
#include <string.h>

/* The largest im2col scratch buffer made at once. */
#define COL_BUDGET_BYTES ((int64_t)64 << 20)

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

tgc_status tgc_cl_nn_sgemm(tgc_kernel_ctx *c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                           cl_mem a, int64_t a_off, int64_t lda, cl_mem b, int64_t b_off, int64_t ldb, float beta,
                           cl_mem y, int64_t y_off, int64_t ldc) {
    cl_command_queue queue = tgc_cl_queue(c->device);
    tgc_cl_blas_lock();
    CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                                       tb ? CLBlastTransposeYes : CLBlastTransposeNo, (size_t)m, (size_t)n,
                                       (size_t)k, alpha, a, (size_t)a_off, (size_t)lda, b, (size_t)b_off,
                                       (size_t)ldb, beta, y, (size_t)y_off, (size_t)ldc, &queue, NULL);
    tgc_cl_blas_unlock();
    if (s == CLBlastSuccess) return TGC_OK;
    const char *name = clblast_status_name(s);
    return tgc_kernel_fail(c, "CLBlastSgemm (m %lld, n %lld, k %lld) failed: %s (%d)", (long long)m, (long long)n,
                           (long long)k, name != NULL ? name : tgc_cl_error_name((cl_int)s), (int)s);
}

/* ---- MatMul ----------------------------------------------------------------------- */

tgc_status tgc_gpu_matmul_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "MatMul takes 2 inputs and 1 output");
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    const tgc_value *y = &c->outputs[0];
    tgc_status st = tgc_cpu_need_f32(c, a, "input A");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, b, "input B");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1) return tgc_kernel_fail(c, "MatMul needs inputs of rank >= 1 (A rank %d, B rank %d)", ra, rb);

    int64_t m = ra >= 2 ? a->dims[ra - 2] : 1, k = a->dims[ra - 1];
    int64_t kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0], n = rb >= 2 ? b->dims[rb - 1] : 1;
    if (k != kb)
        return tgc_kernel_fail(c, "inner dimensions differ: A has K = %lld, B has K = %lld", (long long)k,
                               (long long)kb);
    int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = nba > nbb ? nba : nbb;
    if (y->rank != nb + (ra >= 2) + (rb >= 2) || (ra >= 2 && y->dims[nb] != m) ||
        (rb >= 2 && y->dims[y->rank - 1] != n))
        return tgc_kernel_fail(c, "output Y has rank %d, not the %d-D [batch.., M = %lld, N = %lld] "
                               "that A and B give", y->rank, nb + (ra >= 2) + (rb >= 2), (long long)m,
                               (long long)n);

    /* Matrix strides of A and B along each output batch axis (0: broadcast). */
    int64_t sa[TGC_MAX_RANK], sb[TGC_MAX_RANK], batch = 1, b_count = 1;
    int64_t step_a = m * k, step_b = k * n;
    for (int i = nb - 1; i >= 0; i--) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1, dy = y->dims[i];
        if ((da != dy && da != 1) || (db != dy && db != 1))
            return tgc_kernel_fail(c, "batch axis %d: A has %lld, B has %lld, Y has %lld; they do not "
                                   "broadcast", i, (long long)da, (long long)db, (long long)dy);
        sa[i] = da == 1 ? 0 : step_a;
        sb[i] = db == 1 ? 0 : step_b;
        step_a *= da;
        step_b *= db;
        batch *= dy;
        b_count *= db;
    }
    if (batch == 0 || m == 0 || n == 0) return TGC_OK;
    cl_mem ya = y->buf->mem;
    if (k == 0) return tgc_cl_nn_fill(c, ya, 0.0f, batch * m * n); /* an empty sum */

    cl_mem am = a->buf->mem, bm = b->buf->mem;
    if (b_count == 1) /* then A's batch is the output's: one GEMM of batch * m rows */
        return tgc_cl_nn_sgemm(c, false, false, batch * m, n, k, 1.0f, am, 0, k, bm, 0, n, 0.0f, ya, 0, n);
    for (int64_t t = 0; t < batch; t++) {
        int64_t oa = 0, ob = 0, rest = t;
        for (int i = nb - 1; i >= 0; i--) {
            int64_t idx = rest % y->dims[i];
            rest /= y->dims[i];
            oa += idx * sa[i];
            ob += idx * sb[i];
        }
        st = tgc_cl_nn_sgemm(c, false, false, m, n, k, 1.0f, am, oa, k, bm, ob, n, 0.0f, ya, t * m * n, n);
        if (st != TGC_OK) return st;
    }
    return TGC_OK;
}

/* ---- Gemm ------------------------------------------------------------------------ */

tgc_status tgc_gpu_gemm_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "Gemm takes 2 or 3 inputs and 1 output");
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1];
    const tgc_value *y = &c->outputs[0];
    bool has_c = tgc_cpu_has_input(c, 2);
    tgc_status st = tgc_cpu_need_f32(c, a, "input A");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, b, "input B");
    if (st == TGC_OK && has_c) st = tgc_cpu_need_f32(c, &c->inputs[2], "input C");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (a->rank != 2 || b->rank != 2)
        return tgc_kernel_fail(c, "Gemm needs 2-D A and B (A rank %d, B rank %d)", a->rank, b->rank);
    bool ta = tgc_kernel_attr_int(c, "transA", 0) != 0, tb = tgc_kernel_attr_int(c, "transB", 0) != 0;
    float alpha = (float)tgc_kernel_attr_float(c, "alpha", 1.0);
    float beta = (float)tgc_kernel_attr_float(c, "beta", 1.0);
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (k != kb)
        return tgc_kernel_fail(c, "inner dimensions differ: A' has K = %lld, B' has K = %lld", (long long)k,
                               (long long)kb);
    if (y->rank != 2 || y->dims[0] != m || y->dims[1] != n)
        return tgc_kernel_fail(c, "output Y must be [M = %lld, N = %lld]", (long long)m, (long long)n);

    /* C's strides over [M, N]: 0 along an axis it broadcasts (absent or 1). */
    int64_t cm = 0, cn = 0;
    if (has_c) {
        const tgc_value *cv = &c->inputs[2];
        int64_t dm = cv->rank == 2 ? cv->dims[0] : 1, dn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if (cv->rank > 2 || (dm != 1 && dm != m) || (dn != 1 && dn != n))
            return tgc_kernel_fail(c, "input C (rank %d) does not broadcast to [%lld, %lld]", cv->rank,
                                   (long long)m, (long long)n);
        cn = dn == 1 ? 0 : 1;
        cm = dm == 1 ? 0 : dn;
    }
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

tgc_status tgc_gpu_conv_f32(tgc_kernel_ctx *c) {
    if (c->n_inputs < 2 || c->n_outputs < 1) return tgc_kernel_fail(c, "Conv takes 2 or 3 inputs and 1 output");
    const tgc_value *x = &c->inputs[0], *wt = &c->inputs[1], *y = &c->outputs[0];
    bool has_bias = tgc_cpu_has_input(c, 2);
    tgc_status st = tgc_cpu_need_f32(c, x, "input X");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, wt, "input W");
    if (st == TGC_OK && has_bias) st = tgc_cpu_need_f32(c, &c->inputs[2], "input B");
    if (st == TGC_OK) st = tgc_cpu_need_f32(c, y, "output Y");
    if (st != TGC_OK) return st;
    if (x->rank < 3 || wt->rank != x->rank)
        return tgc_kernel_fail(c, "X (rank %d) must be [N, C, D1, ...] and W of the same rank (rank %d)", x->rank,
                               wt->rank);
    int64_t group = tgc_kernel_attr_int(c, "group", 1);
    int64_t batch = x->dims[0], channels = x->dims[1], m_count = wt->dims[0], cg = wt->dims[1];
    if (group < 1 || channels != cg * group || m_count % group != 0)
        return tgc_kernel_fail(c, "X has %lld channels and W is [%lld, %lld, ...] with group %lld; Conv needs "
                               "C == W[1] * group and W[0] divisible by group", (long long)channels,
                               (long long)m_count, (long long)cg, (long long)group);
    if (y->rank != x->rank || y->dims[0] != batch || y->dims[1] != m_count)
        return tgc_kernel_fail(c, "output Y must be [N = %lld, M = %lld, ...]", (long long)batch, (long long)m_count);
    size_t nk;
    const int64_t *ks = tgc_kernel_attr_ints(c, "kernel_shape", &nk);
    if (ks != NULL && (nk != (size_t)x->rank - 2 || memcmp(ks, wt->dims + 2, nk * sizeof *ks) != 0))
        return tgc_kernel_fail(c, "attribute 'kernel_shape' does not match W's spatial sizes");
    if (has_bias && (c->inputs[2].rank != 1 || c->inputs[2].dims[0] != m_count))
        return tgc_kernel_fail(c, "input B must be [M = %lld]", (long long)m_count);
    tgc_cpu_window w;
    st = tgc_cpu_window_read(c, x, y, wt->dims + 2, false, &w);
    tgc_cl_window cw;
    if (st == TGC_OK) st = tgc_cl_nn_window(c, &w, &cw);
    if (st != TGC_OK) return st;

    int64_t in_size = 1, out_size = 1, kk_count = 1;
    bool pointwise = true;
    for (int a = 0; a < w.n; a++) {
        in_size *= w.in[a];
        out_size *= w.out[a];
        kk_count *= w.kernel[a];
        pointwise = pointwise && w.kernel[a] == 1 && w.strides[a] == 1 && w.pads[a] == 0 && w.pads[w.n + a] == 0;
    }
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

    /* im2col in slabs: `images` whole images, or `rows` rows of the first
     * output axis of one image when a single image passes the budget. */
    int64_t image_floats = channels * kk_count * out_size, budget = COL_BUDGET_BYTES / (int64_t)sizeof(float);
    int64_t row_cols = out_size / w.out[0], rows = w.out[0], images = budget / image_floats;
    if (images < 1) {
        images = 1;
        rows = budget / (channels * kk_count * row_cols);
        if (rows < 1) rows = 1;
    }
    if (images > batch) images = batch;
    size_t col_bytes = (size_t)(images * channels * kk_count * rows * row_cols) * sizeof(float);
    cl_mem col = tgc_cl_scratch(c->device, col_bytes);
    if (col == NULL)
        return tgc_kernel_fail(c, "out of device memory for Conv's im2col buffer (%zu bytes)", col_bytes);
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
    tgc_cl_scratch_release(c->device, col);
    return st;
}
