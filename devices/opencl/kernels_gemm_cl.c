/* MatMul, Gemm and Conv on the gpu (float32 and float16), each one launch of
 * kernels/nn.cl's implicit GEMM (nn_conv_gemm_f32: local-memory tiles of
 * 64 or 32 outputs a side, bias or C, and a fused activation in its
 * epilogue), but for a MatMul whose batch broadcasts in a pattern the
 * kernel's images cannot say, which is CLBlast's (CLBlastSgemm, row-major,
 * on the device's in-order queue). Shapes, attributes and results follow
 * the cpu kernels (devices/cpu/kernels_gemm.c, kernels_conv.c):
 *
 * MatMul-13 (numpy.matmul): 1-D operands gain and lose an axis; batch axes
 * broadcast. When B has no batch of its own the batch folds into the rows
 * of one GEMM; when B's matrices lie one after another, one per output
 * matrix, and A's likewise or one for all, they are the kernel's images;
 * otherwise one CLBlast GEMM per output matrix (float16: one implicit GEMM
 * launch each), its A and B picked by offset (stride 0 along broadcast
 * axes), and the activation a launch of its own.
 *
 * Gemm-13: Y = alpha * A' B' + beta * C, A and B read as they lie (under
 * transA and transB too), C broadcast to [M, N] by its strides in the
 * epilogue; with K = 0, Y = beta * C (nn_broadcast2d_f32).
 *
 * Conv-11, one kernel launch (kernels/nn.cl), the bias and a fused
 * activation (executor/fuse.c, through tgc_cl_enqueue_act) applied as the
 * output is stored:
 *   - depthwise (group == C > 1), or a sum with no terms:
 *     nn_conv_direct_f32, one work-item per output.
 *   - otherwise nn_conv_gemm_f32, an implicit GEMM per image and group:
 *     W_g [M/group, C/group * KK] x im2col's matrix, read from the input
 *     as its tiles load (no im2col buffer, no workspace). Before, im2col
 *     into scratch, a bias fill and one CLBlast call per 256 terms of k and
 *     per image and group: a 3x3 Conv of 512 channels was 20 launches, and
 *     its activation one more.
 * CLBlast's own Sconvgemm is not used: it takes one symmetric pad per axis,
 * 2-D only, and no groups, where ONNX Conv has all three. */
#include "devices/opencl/kernels_nn.h"
#include "devices/matmul_geometry.h"
#include "devices/opencl/gemm_tiles.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/settings.h"

#include "devices/opencl/clblast_api.h"
#include <limits.h>
#include <string.h>

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
    cl_event event = NULL, *want = c->events != NULL ? &event : NULL;
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
                                          (size_t)y_off, (size_t)ldc, &queue, want, temp_buf->mem)
            : tgc_clblast.sgemm(CLBlastLayoutRowMajor, tra, trb, (size_t)m, (size_t)n, (size_t)k, alpha, a,
                                (size_t)a_off, (size_t)lda, b, (size_t)b_off, (size_t)ldb, beta, y, (size_t)y_off,
                                (size_t)ldc, &queue, want);
    tgc_cl_blas_unlock();
    tgc_cl_note_event(c, s == CLBlastSuccess ? event : NULL, "CLBlastSgemm"); /* its last kernel's */
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

/* ---- The implicit GEMM (kernels/nn.cl) ------------------------------------------ */

/* The implicit GEMM's work-group (kernels/nn.cl: NN_CG_WG items a side,
 * each NN_CG_R x NN_CG_R outputs: a tile of 64, or 32 with NN_CG_R 4). */
#define CONV_WG 8

/* nn_conv_gemm_f32's sizes and epilogue: kernels/nn.cl's nn_gemm, field
 * for field (longs, ints, floats: the same layout on both sides). Each
 * size fits an int (the caller checks). */
typedef struct tgc_cl_gemm_shape {
    cl_long c_rs, c_cs, a_img, a_off, b_off, y_off;
    cl_int channels, m_count, cg, m_group, group, in_size, out_size, kk_count;
    cl_int b_kind, a_trans, has_c;
    cl_float alpha, beta;
} tgc_cl_gemm_shape;

enum { B_IM2COL = 0, B_ROWS = 1, B_COLS = 2 }; /* nn.cl's NN_B_* */

/* The tile (outputs a side) the rule picks for images x group GEMMs of s:
 * 64, unless that leaves the device's compute units fewer than two
 * work-groups each (a 3x3 Conv of 512 channels over 7 x 7 at batch 1 is 8
 * work-groups of 64 x 64: 8 of an H200's 132 units busy), then 32. */
static int rule_tile(const tgc_kernel_ctx *c, const tgc_cl_gemm_shape *s, int64_t images) {
    int64_t groups = ((int64_t)s->out_size + 63) / 64 * (((int64_t)s->m_group + 63) / 64) * images * s->group;
    int64_t units = ((const tgc_cl_device *)c->device)->compute_units;
    return groups < 2 * units ? 32 : 64;
}

/* Grid and defines of nn_conv_gemm_f32 at `tile` (nn.cl built with
 * NN_CG_R 4 for 32). */
static const char *tile_launch(int tile, const tgc_cl_gemm_shape *s, int64_t images, size_t global[3]) {
    global[0] = (size_t)(((int64_t)s->out_size + tile - 1) / tile * CONV_WG);
    global[1] = (size_t)(((int64_t)s->m_group + tile - 1) / tile * CONV_WG);
    global[2] = (size_t)(images * s->group);
    return tile == 32 ? "#define NN_CG_R 4" : NULL;
}

/* One launch of nn_conv_gemm_f32, with c's fused activation: Y [images,
 * m_count, out_size] = alpha * A B + beta * C from x (B's source), wt (A)
 * and cm (C; a placeholder when s->has_c is 0). Its tile, 64 or 32: the
 * one TGC_GPU_GEMM_TILE forces; else the one tuning chose for the shape
 * on this device (devices/opencl/gemm_tiles.h); else, with TGC_GPU_TUNE
 * (tgc run --tune), the faster of the two on the device's clock, best of
 * three runs each (host waits, in this run only), kept for the shape;
 * else rule_tile's. */
static tgc_status conv_gemm(tgc_kernel_ctx *c, cl_mem x, cl_mem wt, cl_mem cm, cl_mem y, const tgc_cl_window *cw,
                            const tgc_cl_gemm_shape *s, int64_t images) {
    tgc_dtype dt = c->outputs[0].dtype;
    size_t local[3] = {CONV_WG, CONV_WG, 1}, global[3];
    tgc_cl_arg args[] = {TGC_CL_MEM(x), TGC_CL_MEM(wt), TGC_CL_MEM(cm), TGC_CL_MEM(y), TGC_CL_BYTES(cw, sizeof *cw),
                         TGC_CL_BYTES(s, sizeof *s)};
    tgc_cl_device *d = (tgc_cl_device *)c->device;
    const tgc_settings *set = tgc_settings_current();
    tgc_cl_tile_shape shape = {s->b_kind, s->m_group, s->out_size, (int64_t)s->cg * s->kk_count, s->kk_count,
                               images * s->group};
    int tile = set->gpu_gemm_tile == 32 || set->gpu_gemm_tile == 64 ? (int)set->gpu_gemm_tile
                                                                    : tgc_cl_tiles_get(d, &shape);
    if (tile == 0 && set->gpu_tune) {
        uint64_t best[2] = {UINT64_MAX, UINT64_MAX};
        static const int tiles[2] = {64, 32};
        for (int t = 0; t < 2; t++)
            for (int r = 0; r < 3; r++) {
                uint64_t ns;
                const char *defines = tile_launch(tiles[t], s, images, global);
                tgc_status st = tgc_cl_nn_time(c, dt, defines, "nn_conv_gemm", 3, global, local, 6, args, &ns);
                if (st != TGC_OK) return st;
                if (ns < best[t]) best[t] = ns;
            }
        if (best[0] != UINT64_MAX && best[1] != UINT64_MAX) {
            tile = best[1] < best[0] ? 32 : 64;
            tgc_cl_tiles_put(d, &shape, tile);
        }
    }
    if (tile == 0) tile = rule_tile(c, s, images);
    const char *defines = tile_launch(tile, s, images, global);
    return tgc_cl_nn_enqueue(c, dt, defines, "nn_conv_gemm", 3, global, local, 6, args);
}

/* ---- MatMul ----------------------------------------------------------------------- */

/* Whether MatMul g is one GEMM the implicit GEMM's kernel takes: B has no
 * batch of its own (A's batch folds into the rows) and the sizes fit. */
static bool one_gemm(const tgc_matmul_geometry *g) {
    return g->b_count == 1 && g->batch * g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX;
}

/* Whether MatMul g's batch is the implicit GEMM's images: B's matrices
 * one after another, one per output matrix, and A's likewise or one for
 * all; *a_img then A's offset from one to the next. */
static bool batched_gemm(const tgc_matmul_geometry *g, int64_t *a_img) {
    if (g->b_count != g->batch || g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX) return false;
    int64_t oa, ob, oy;
    tgc_matmul_geometry_offsets(g, g->batch > 1 ? 1 : 0, &oa, &ob, &oy);
    *a_img = oa;
    for (int64_t t = 0; t < g->batch; t++) {
        tgc_matmul_geometry_offsets(g, t, &oa, &ob, &oy);
        if (oa != t * *a_img || ob != t * g->k * g->n) return false;
    }
    return true;
}

/* c's fused activation applied to y's first numel values in place, where
 * the product came from CLBlast or a fill (one launch more). */
static tgc_status apply_act(tgc_kernel_ctx *c, const tgc_buffer *y, int64_t numel) {
    if (c->fused_act == NULL) return TGC_OK;
    return tgc_cl_ew_unary(c, &tgc_ew_rows[c->fused_act->row], c->fused_act->params, c->outputs[0].dtype, y, y,
                           numel);
}

/* MatMul g's output matrices one implicit GEMM launch each, A and B
 * picked by offset: the float16 path where CLBlast's SGEMM would take a
 * batch that broadcasts in a pattern the kernel's images cannot say;
 * c's activation applied by each launch. */
static tgc_status gemm_each_matrix(tgc_kernel_ctx *c, const tgc_matmul_geometry *g, cl_mem am, cl_mem bm, cl_mem ya) {
    if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX)
        return tgc_kernel_fail(c, "MatMul: [%lld, %lld] x [%lld, %lld] (at most %d a side on a gpu)",
                               (long long)g->m, (long long)g->k, (long long)g->k, (long long)g->n, INT_MAX);
    tgc_cl_window none = {.n = 1};
    tgc_status st = TGC_OK;
    for (int64_t t = 0; st == TGC_OK && t < g->batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(g, t, &oa, &ob, &oy);
        tgc_cl_gemm_shape gs = {.a_off = oa, .b_off = ob, .y_off = oy, .channels = (cl_int)g->k,
                                .m_count = (cl_int)g->m, .cg = (cl_int)g->k, .m_group = (cl_int)g->m, .group = 1,
                                .in_size = (cl_int)g->n, .out_size = (cl_int)g->n, .kk_count = 1, .b_kind = B_ROWS,
                                .alpha = 1.0f};
        st = conv_gemm(c, bm, am, am, ya, &none, &gs, 1);
    }
    return st;
}

tgc_status tgc_gpu_matmul(tgc_kernel_ctx *c) {
    tgc_matmul_geometry g;
    tgc_status st = tgc_matmul_geometry_read(c, &g);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    int64_t m = g.m, n = g.n, k = g.k, batch = g.batch;
    if (batch == 0 || m == 0 || n == 0) return TGC_OK;
    cl_mem ya = y->buf->mem;
    if (k == 0) { /* an empty sum */
        st = tgc_cl_nn_fill(c, ya, y->dtype, 0.0f, batch * m * n);
        return st == TGC_OK ? apply_act(c, y->buf, batch * m * n) : st;
    }

    cl_mem am = a->buf->mem, bm = b->buf->mem;
    if (one_gemm(&g)) {
        /* then A's batch is the output's: one GEMM of batch * m rows, A times B as it lies */
        tgc_cl_window none = {.n = 1};
        tgc_cl_gemm_shape gs = {.channels = (cl_int)k, .m_count = (cl_int)(batch * m), .cg = (cl_int)k,
                                .m_group = (cl_int)(batch * m), .group = 1, .in_size = (cl_int)n,
                                .out_size = (cl_int)n, .kk_count = 1, .b_kind = B_ROWS, .alpha = 1.0f};
        return conv_gemm(c, bm, am, am, ya, &none, &gs, 1);
    }
    int64_t a_img = 0;
    if (batched_gemm(&g, &a_img)) { /* one launch, an image per output matrix */
        tgc_cl_window none = {.n = 1};
        tgc_cl_gemm_shape gs = {.a_img = a_img, .channels = (cl_int)k, .m_count = (cl_int)m, .cg = (cl_int)k,
                                .m_group = (cl_int)m, .group = 1, .in_size = (cl_int)n, .out_size = (cl_int)n,
                                .kk_count = 1, .b_kind = B_ROWS, .alpha = 1.0f};
        return conv_gemm(c, bm, am, am, ya, &none, &gs, batch);
    }
    if (y->dtype == TGC_FLOAT16) return gemm_each_matrix(c, &g, am, bm, ya);
    for (int64_t t = 0; t < batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
        st = tgc_cl_nn_sgemm(c, false, false, m, n, k, 1.0f, am, oa, k, bm, ob, n, 0.0f, ya, oy, n);
        if (st != TGC_OK) return st;
    }
    return apply_act(c, y->buf, batch * m * n);
}

/* ---- Gemm ------------------------------------------------------------------------ */

tgc_status tgc_gpu_gemm(tgc_kernel_ctx *c) {
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
    if (!c_term && k == 0) {
        st = tgc_cl_nn_fill(c, ym, y->dtype, 0.0f, m * n);
        return st == TGC_OK ? apply_act(c, y->buf, m * n) : st;
    }
    if (k == 0) {
        float scale = beta;
        size_t global = (size_t)(m * n);
        tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[2].buf), TGC_CL_MEM(ym), TGC_CL_LONG(m), TGC_CL_LONG(n),
                             TGC_CL_LONG(cm), TGC_CL_LONG(cn), TGC_CL_FLOAT(scale)};
        st = tgc_cl_nn_enqueue_unfused(c, y->dtype, "nn_broadcast2d", 1, &global, 7, args); /* then apply_act */
        return st == TGC_OK ? apply_act(c, y->buf, m * n) : st;
    }
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return tgc_kernel_fail(c, "Gemm: [%lld, %lld] x [%lld, %lld] (at most %d a side on a gpu)", (long long)m,
                               (long long)k, (long long)k, (long long)n, INT_MAX);
    /* alpha * A' B' + beta * C in one launch: B' read as it lies ([K, N], or [N, K] with transB), A likewise */
    tgc_cl_window none = {.n = 1};
    tgc_cl_gemm_shape gs = {.c_rs = c_term ? cm : 0, .c_cs = c_term ? cn : 0, .channels = (cl_int)k,
                            .m_count = (cl_int)m, .cg = (cl_int)k, .m_group = (cl_int)m, .group = 1,
                            .in_size = (cl_int)(tb ? k : n), .out_size = (cl_int)n, .kk_count = 1,
                            .b_kind = tb ? B_COLS : B_ROWS, .a_trans = ta, .has_c = c_term, .alpha = alpha,
                            .beta = beta};
    cl_mem am = a->buf->mem;
    return conv_gemm(c, b->buf->mem, am, c_term ? c->inputs[2].buf->mem : am, ym, &none, &gs, 1);
}

/* ---- Conv -------------------------------------------------------------------------- */

tgc_status tgc_gpu_conv(tgc_kernel_ctx *c) {
    tgc_conv_geometry g;
    tgc_status st = tgc_window_read_conv(c, &g);
    tgc_cl_window cw;
    if (st == TGC_OK) st = tgc_cl_nn_window(c, &g.w, &cw);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *wt = &c->inputs[1], *y = &c->outputs[0];
    bool has_bias = g.has_bias;
    int64_t group = g.group, batch = g.batch, channels = g.channels, m_count = g.m_count, cg = g.cg;
    int64_t in_size = g.in_size, out_size = g.out_size, kk_count = g.kk_count;
    int64_t total = batch * m_count * out_size, k = cg * kk_count, m_group = m_count / group;
    if (total == 0) return TGC_OK;
    if (channels > INT_MAX || m_count > INT_MAX || k > INT_MAX)
        return tgc_kernel_fail(c, "Conv: %lld channels in, %lld out, %lld terms a sum (at most %d on a gpu)",
                               (long long)channels, (long long)m_count, (long long)k, INT_MAX);
    cl_mem xm = x->buf->mem, wm = wt->buf->mem, ym = y->buf->mem;
    cl_mem bm = has_bias ? c->inputs[2].buf->mem : wm; /* wm: a placeholder the kernel does not read */
    bool empty_sum = k == 0 || in_size == 0; /* nothing but padding to read: Y is the bias, activated */
    if (empty_sum && !has_bias && c->fused_act == NULL) return tgc_cl_nn_fill(c, ym, y->dtype, 0.0f, total);
    if (empty_sum || (group == channels && group > 1)) { /* depthwise: one work-item per output */
        size_t global = (size_t)total;
        tgc_cl_arg args[] = {TGC_CL_MEM(xm), TGC_CL_MEM(wm), TGC_CL_MEM(bm), TGC_CL_INT(has_bias),
                             TGC_CL_MEM(ym), TGC_CL_BYTES(&cw, sizeof cw), TGC_CL_LONG(channels),
                             TGC_CL_LONG(m_count), TGC_CL_LONG(empty_sum ? 0 : cg), TGC_CL_LONG(m_group),
                             TGC_CL_INT((cl_int)in_size), TGC_CL_INT((cl_int)out_size), TGC_CL_INT((cl_int)kk_count),
                             TGC_CL_LONG(total)};
        return tgc_cl_nn_enqueue(c, y->dtype, NULL, "nn_conv_direct", 1, &global, NULL, 14, args);
    }
    tgc_cl_gemm_shape gs = {.c_rs = 1, .channels = (cl_int)channels, .m_count = (cl_int)m_count, .cg = (cl_int)cg,
                            .m_group = (cl_int)m_group, .group = (cl_int)group, .in_size = (cl_int)in_size,
                            .out_size = (cl_int)out_size, .kk_count = (cl_int)kk_count,
                            .b_kind = g.pointwise ? B_ROWS : B_IM2COL, .has_c = has_bias, .alpha = 1.0f,
                            .beta = 1.0f};
    return conv_gemm(c, xm, wm, bm, ym, &cw, &gs, batch);
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
    int64_t a_img;
    if (one_gemm(&g) || batched_gemm(&g, &a_img)) return; /* the implicit GEMM: no workspace */
    if (c->n_outputs > 0 && c->outputs[0].dtype == TGC_FLOAT16) return; /* gemm_each_matrix: none either */
    out->workspace_bytes = clblast_temp_bound(g.m, g.n, g.k);
}
