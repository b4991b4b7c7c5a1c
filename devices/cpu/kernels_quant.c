/* Quantization kernels on the cpu (ONNX opset 17): QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
 * ConvInteger and QLinearConv, following ONNX's reference implementation
 * (onnx/reference/ops/op_*.py) step for step:
 *
 *   QuantizeLinear    y = saturate(rint(x / scale) + zp), the division in
 *                     float32 for float32 x (in double for int32 x, as numpy
 *                     promotes), rint rounding half to even
 *   DequantizeLinear  y = (x - zp) * scale, exact in double, rounded once
 *   Dynamic...Linear  scale = (max(0, max x) - min(0, min x)) / 255 (1 / 255
 *                     when both are 0), zp = rint(clip(-min / scale, 0, 255)),
 *                     y as QuantizeLinear, all in float32
 *   MatMulInteger,    (A - a_zp) x (B - b_zp) and Conv(X - x_zp, W - w_zp)
 *   ConvInteger       in integers: the operands are widened to int32 with
 *                     their zero points taken off, products summed in int64
 *                     (exact), the sum stored as int32 (wrapping as numpy's
 *                     int32 matmul does when it does not fit)
 *   QLinearMatMul,    that integer result (plus QLinearConv's int32 bias)
 *   QLinearConv       times the float32 multiplier a_scale * b_scale /
 *                     y_scale, in double, plus y_zp, rint, saturated.
 *
 * Element types: every kernel reads and writes its 8-bit operands through
 * the QUANT_TYPES list (uint8, int8), one entry per type. */
#include "devices/kernel.h"
#include "devices/kernel_checks.h"
#include "devices/matmul_geometry.h"
#include "devices/window.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <math.h>
#include <string.h>

/* X(tgc dtype, C type, min, max) for each 8-bit quantized type. */
#define QUANT_TYPES(X) X(TGC_UINT8, uint8_t, 0, 255) X(TGC_INT8, int8_t, -128, 127)

/* ---- Element access ------------------------------------------------------------ */

static bool is_q8(tgc_dtype t) {
#define IS_Q8(dt, ct, lo, hi) if (t == dt) return true;
    QUANT_TYPES(IS_Q8)
#undef IS_Q8
    return false;
}

/* The range of quantized type t, in *lo and *hi. */
static void q8_range(tgc_dtype t, int32_t *lo, int32_t *hi) {
    *lo = 0;
    *hi = 255;
#define RANGE(dt, ct, l, h) if (t == dt) { *lo = l; *hi = h; }
    QUANT_TYPES(RANGE)
#undef RANGE
}

/* Element i of a quantized or int32 tensor, widened. */
static int32_t int_at(tgc_dtype t, const void *p, int64_t i) {
#define AT(dt, ct, lo, hi) if (t == dt) return ((const ct *)p)[i];
    QUANT_TYPES(AT)
#undef AT
    return ((const int32_t *)p)[i];
}

/* Stores v, already in t's range, as element i of quantized tensor p. */
static void q8_store(tgc_dtype t, void *p, int64_t i, int32_t v) {
#define STORE(dt, ct, lo, hi) if (t == dt) ((ct *)p)[i] = (ct)v;
    QUANT_TYPES(STORE)
#undef STORE
}

/* rint(v) + zp saturated to [lo, hi]; NaN gives zp (ONNX leaves it open). */
static int32_t saturate_round(double v, int32_t zp, int32_t lo, int32_t hi) {
    double r = isnan(v) ? 0 : rint(v) + zp;
    return r < lo ? lo : r > hi ? hi : (int32_t)r;
}

/* ---- Per-tensor and per-axis parameters ------------------------------------------ */

/* A scale or zero point: element idx % count (count 1: per tensor). */
typedef struct qparam {
    const void *p;
    tgc_dtype dtype;
    int64_t count; /* 0: omitted (zero) */
} qparam;

static double qp_float(const qparam *q, int64_t idx) { return ((const float *)q->p)[q->count == 1 ? 0 : idx]; }
static int32_t qp_int(const qparam *q, int64_t idx) {
    return q->count == 0 ? 0 : int_at(q->dtype, q->p, q->count == 1 ? 0 : idx);
}

/* Reads optional input i as a parameter of `want` elements (1 also fits;
 * `want` < 0: one element only), of dtype `dtype` (TGC_DTYPE_INVALID:
 * any). Fails naming `what`. */
static tgc_status read_param(tgc_kernel_ctx *c, int i, const char *what, int64_t want, tgc_dtype dtype, qparam *q) {
    memset(q, 0, sizeof *q);
    if (!tgc_kernel_has_input(c, i)) return TGC_OK;
    const tgc_value *v = &c->inputs[i];
    int64_t n = tgc_value_numel(v);
    if (dtype != TGC_DTYPE_INVALID && v->dtype != dtype)
        return tgc_kernel_fail(c, "input %d (%s) is %s; it must be %s", i, what, tgc_dtype_name(v->dtype),
                               tgc_dtype_name(dtype));
    if (n != 1 && (want < 0 || v->rank != 1 || n != want))
        return tgc_kernel_fail(c, "input %d (%s) has %lld elements; it must be a scalar%s", i, what, (long long)n,
                               want >= 0 ? " or 1-D with one element per index of the quantized axis" : "");
    q->p = tgc_kernel_in_ptr(c, i);
    q->dtype = v->dtype;
    q->count = n;
    return TGC_OK;
}

/* x seen around `axis` (attribute, default 1) as [outer, size, inner];
 * only size and inner are needed. A per-tensor node ignores the axis. */
static tgc_status axis_geometry(tgc_kernel_ctx *c, const tgc_value *x, int64_t *size, int64_t *inner) {
    *size = 1;
    *inner = 1;
    bool per_axis = false;
    for (int i = 1; i <= 2; i++)
        per_axis = per_axis || (tgc_kernel_has_input(c, i) && tgc_value_numel(&c->inputs[i]) != 1);
    if (!per_axis) return TGC_OK;
    if (x->rank == 0) return tgc_kernel_fail(c, "a per-axis scale needs an input of rank >= 1");
    int axis;
    tgc_status st = tgc_kernel_axis_attr(c, 1, x->rank, &axis);
    if (st != TGC_OK) return st;
    *size = x->dims[axis];
    for (int i = axis + 1; i < x->rank; i++) *inner *= x->dims[i];
    return TGC_OK;
}

/* ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear ------------------------ */

static tgc_status quantize_linear(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((x->dtype != TGC_FLOAT32 && x->dtype != TGC_INT32) || !is_q8(y->dtype))
        return tgc_kernel_fail(c, "QuantizeLinear takes float32 or int32 x to an 8-bit type (x %s, y %s)",
                               tgc_dtype_name(x->dtype), tgc_dtype_name(y->dtype));
    int64_t size, inner, n = tgc_value_numel(x);
    qparam scale, zp;
    if ((st = axis_geometry(c, x, &size, &inner)) != TGC_OK) return st;
    if ((st = read_param(c, 1, "y_scale", size, TGC_FLOAT32, &scale)) != TGC_OK) return st;
    if ((st = read_param(c, 2, "y_zero_point", size, y->dtype, &zp)) != TGC_OK) return st;
    if (scale.count == 0) return tgc_kernel_fail(c, "input 1 (y_scale) is missing");
    int32_t lo, hi;
    q8_range(y->dtype, &lo, &hi);
    const void *px = tgc_kernel_in_ptr(c, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = i / inner % size;
        float s = (float)qp_float(&scale, ch);
        double q = x->dtype == TGC_FLOAT32 ? (double)(((const float *)px)[i] / s)
                                           : (double)((const int32_t *)px)[i] / (double)s;
        q8_store(y->dtype, py, i, saturate_round(q, qp_int(&zp, ch), lo, hi));
    }
    return TGC_OK;
}

static tgc_status dequantize_linear(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if ((!is_q8(x->dtype) && x->dtype != TGC_INT32) || c->outputs[0].dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "DequantizeLinear takes an 8-bit type or int32 to float32 (x %s)",
                               tgc_dtype_name(x->dtype));
    int64_t size, inner, n = tgc_value_numel(x);
    qparam scale, zp;
    if ((st = axis_geometry(c, x, &size, &inner)) != TGC_OK) return st;
    if ((st = read_param(c, 1, "x_scale", size, TGC_FLOAT32, &scale)) != TGC_OK) return st;
    if ((st = read_param(c, 2, "x_zero_point", size, x->dtype, &zp)) != TGC_OK) return st;
    if (scale.count == 0) return tgc_kernel_fail(c, "input 1 (x_scale) is missing");
    for (int64_t k = 0; x->dtype == TGC_INT32 && k < zp.count; k++)
        if (qp_int(&zp, k) != 0) return tgc_kernel_fail(c, "an int32 x needs a zero x_zero_point (ONNX)");
    const void *px = tgc_kernel_in_ptr(c, 0);
    float *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = i / inner % size;
        py[i] = (float)(((double)int_at(x->dtype, px, i) - qp_int(&zp, ch)) * qp_float(&scale, ch));
    }
    return TGC_OK;
}

static tgc_status dynamic_quantize_linear(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 3);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if (x->dtype != TGC_FLOAT32 || c->outputs[0].dtype != TGC_UINT8 || c->outputs[1].dtype != TGC_FLOAT32 ||
        c->outputs[2].dtype != TGC_UINT8)
        return tgc_kernel_fail(c, "DynamicQuantizeLinear takes float32 x to uint8 y, float32 y_scale, uint8 "
                               "y_zero_point");
    int64_t n = tgc_value_numel(x);
    const float *px = tgc_kernel_in_ptr(c, 0);
    float maxx = 0, minx = 0; /* the range always holds 0 */
    for (int64_t i = 0; i < n; i++) {
        if (px[i] > maxx) maxx = px[i];
        if (px[i] < minx) minx = px[i];
    }
    float scale = (maxx == minx ? 1.0f : maxx - minx) / 255.0f;
    float zpf = 0.0f - minx / scale;
    zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
    int32_t zp = (int32_t)rintf(zpf);
    uint8_t *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t i = 0; i < n; i++) py[i] = (uint8_t)saturate_round((double)(px[i] / scale), zp, 0, 255);
    *(float *)tgc_kernel_out_ptr(c, 1) = scale;
    *(uint8_t *)tgc_kernel_out_ptr(c, 2) = (uint8_t)zp;
    return TGC_OK;
}

/* ---- Integer GEMM ------------------------------------------------------------------- */

/* y[m x n] = a[m x k] b[k x n] (row-major int32), summed in int64 and
 * stored as int32 (two's complement wrap past int32, as numpy's int32). */
static void igemm(int64_t m, int64_t n, int64_t k, const int32_t *a, const int32_t *b, int64_t *row, int32_t *y) {
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) row[j] = 0;
        for (int64_t p = 0; p < k; p++) {
            int64_t av = a[i * k + p];
            const int32_t *bp = b + p * n;
            if (av != 0)
                for (int64_t j = 0; j < n; j++) row[j] += av * bp[j];
        }
        for (int64_t j = 0; j < n; j++) y[i * n + j] = (int32_t)(uint32_t)(uint64_t)row[j];
    }
}

/* ---- MatMulInteger, QLinearMatMul ---------------------------------------------------- */

/* A matrix operand's zero point or scale: per tensor, per row of A / per
 * column of B (1-D), or per matrix row/column with A's or B's batch dims
 * (N-D: A.shape[:-1] + [1], B.shape[:-2] + [1, N]). idx_of gives the
 * parameter index of an element. */
typedef struct matrix_param {
    qparam q;
    bool nd; /* the N-D form */
} matrix_param;

static tgc_status read_matrix_param(tgc_kernel_ctx *c, int i, const char *what, const tgc_value *m, bool rows,
                                    tgc_dtype dtype, matrix_param *mp) {
    memset(mp, 0, sizeof *mp);
    if (!tgc_kernel_has_input(c, i)) return TGC_OK;
    const tgc_value *v = &c->inputs[i];
    int64_t n = tgc_value_numel(v), rm = m->rank >= 2 ? m->dims[m->rank - 2] : 1, cm = m->dims[m->rank - 1];
    if (dtype != TGC_DTYPE_INVALID && v->dtype != dtype)
        return tgc_kernel_fail(c, "input %d (%s) is %s; it must be %s", i, what, tgc_dtype_name(v->dtype),
                               tgc_dtype_name(dtype));
    bool ok = n == 1 || (v->rank == 1 && n == (rows ? rm : (m->rank >= 2 ? cm : 1)));
    if (!ok && v->rank == m->rank && m->rank >= 2) { /* the N-D form */
        ok = true;
        for (int d = 0; d < m->rank; d++) {
            int64_t want = (rows && d == m->rank - 1) || (!rows && d == m->rank - 2) ? 1 : m->dims[d];
            ok = ok && v->dims[d] == want;
        }
        mp->nd = ok;
    }
    if (!ok)
        return tgc_kernel_fail(c, "input %d (%s) has %lld elements; it must be a scalar or give one value per %s",
                               i, what, (long long)n, rows ? "row of A" : "column of B");
    mp->q.p = tgc_kernel_in_ptr(c, i);
    mp->q.dtype = v->dtype;
    mp->q.count = n;
    return TGC_OK;
}

/* The parameter index of element e of matrix operand m (rows: A). */
static int64_t matrix_param_idx(const matrix_param *mp, const tgc_value *m, bool rows, int64_t e) {
    int64_t cols = m->dims[m->rank - 1], rm = m->rank >= 2 ? m->dims[m->rank - 2] : 1;
    if (mp->q.count <= 1) return 0;
    if (rows) return mp->nd ? e / cols : e / cols % rm;
    return mp->nd ? e / (rm * cols) * cols + e % cols : e % cols;
}

/* operand m widened into out with its zero point taken off. */
static void widen_matrix(const tgc_value *m, const void *p, const matrix_param *zp, bool rows, int32_t *out) {
    for (int64_t e = 0, n = tgc_value_numel(m); e < n; e++)
        out[e] = int_at(m->dtype, p, e) - qp_int(&zp->q, matrix_param_idx(zp, m, rows, e));
}

/* A float32 view of value v (same dims) for the geometry readers. */
static tgc_value f32_view(const tgc_value *v) {
    tgc_value f = *v;
    f.dtype = TGC_FLOAT32;
    return f;
}

/* The shared body: a and b the input positions of A and B, their zero
 * points two places later in both ops (MatMulInteger: 0, 1 and 2, 3;
 * QLinearMatMul: 0, 3 and 2, 5). Sets *y32 to Y's elements in int32
 * (tgc_malloc'd; the caller tgc_frees it) and fills the geometry. */
static tgc_status matmul_integer_body(tgc_kernel_ctx *c, int a, int b, matrix_param *azp, matrix_param *bzp,
                                      int32_t **y32, tgc_matmul_geometry *g) {
    *y32 = NULL;
    const tgc_value *va = &c->inputs[a], *vb = &c->inputs[b];
    if (!is_q8(va->dtype) || !is_q8(vb->dtype))
        return tgc_kernel_fail(c, "inputs A and B must be 8-bit quantized (A %s, B %s)", tgc_dtype_name(va->dtype),
                               tgc_dtype_name(vb->dtype));
    tgc_value views[2] = {f32_view(va), f32_view(vb)}, out = f32_view(&c->outputs[0]);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.n_inputs = 2;
    sub.outputs = &out;
    sub.n_outputs = 1;
    tgc_status st = tgc_matmul_geometry_read(&sub, g);
    if (st != TGC_OK) return st;
    if ((st = read_matrix_param(c, a + 2, "a_zero_point", va, true, va->dtype, azp)) != TGC_OK) return st;
    if ((st = read_matrix_param(c, b + 2, "b_zero_point", vb, false, vb->dtype, bzp)) != TGC_OK) return st;
    int64_t na = tgc_value_numel(va), nb = tgc_value_numel(vb), ny = tgc_value_numel(&c->outputs[0]);
    int32_t *wa = tgc_malloc(((size_t)na + 1) * sizeof(int32_t)), *wb = tgc_malloc(((size_t)nb + 1) * sizeof(int32_t));
    int32_t *y = tgc_malloc(((size_t)ny + 1) * sizeof(int32_t));
    int64_t *row = tgc_malloc(((size_t)g->n + 1) * sizeof(int64_t));
    if (wa == NULL || wb == NULL || y == NULL || row == NULL) {
        tgc_free(wa), tgc_free(wb), tgc_free(y), tgc_free(row);
        return tgc_kernel_fail(c, "out of host memory for the integer operands");
    }
    widen_matrix(va, tgc_kernel_in_ptr(c, a), azp, true, wa);
    widen_matrix(vb, tgc_kernel_in_ptr(c, b), bzp, false, wb);
    for (int64_t t = 0; t < g->batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(g, t, &oa, &ob, &oy);
        igemm(g->m, g->n, g->k, wa + oa, wb + ob, row, y + oy);
    }
    tgc_free(wa), tgc_free(wb), tgc_free(row);
    *y32 = y;
    return TGC_OK;
}

static tgc_status matmul_integer(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != TGC_INT32) return tgc_kernel_fail(c, "output Y must be int32");
    matrix_param azp, bzp;
    tgc_matmul_geometry g;
    int32_t *y;
    if ((st = matmul_integer_body(c, 0, 1, &azp, &bzp, &y, &g)) != TGC_OK) return st;
    size_t nbytes = tgc_value_nbytes(&c->outputs[0]);
    if (nbytes > 0) memcpy(tgc_kernel_out_ptr(c, 0), y, nbytes);
    tgc_free(y);
    return TGC_OK;
}

static tgc_status qlinear_matmul(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 8, 1);
    if (st != TGC_OK) return st;
    const tgc_value *va = &c->inputs[0], *vb = &c->inputs[3], *vy = &c->outputs[0];
    if (!is_q8(vy->dtype) || vy->dtype != c->inputs[7].dtype)
        return tgc_kernel_fail(c, "output y must have y_zero_point's 8-bit type");
    matrix_param as, bs, azp, bzp;
    qparam ys, yzp;
    if ((st = read_matrix_param(c, 1, "a_scale", va, true, TGC_FLOAT32, &as)) != TGC_OK ||
        (st = read_matrix_param(c, 4, "b_scale", vb, false, TGC_FLOAT32, &bs)) != TGC_OK ||
        (st = read_param(c, 6, "y_scale", -1, TGC_FLOAT32, &ys)) != TGC_OK ||
        (st = read_param(c, 7, "y_zero_point", -1, vy->dtype, &yzp)) != TGC_OK)
        return st;
    tgc_matmul_geometry g;
    int32_t *y;
    if ((st = matmul_integer_body(c, 0, 3, &azp, &bzp, &y, &g)) != TGC_OK) return st;
    int32_t lo, hi;
    q8_range(vy->dtype, &lo, &hi);
    float ysf = (float)qp_float(&ys, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    /* Y element (t, i, j) reads scale row i of A's matrix t and column j of B's. */
    for (int64_t t = 0; t < g.batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t j = 0; j < g.n; j++) {
                float sa = (float)qp_float(&as.q, matrix_param_idx(&as, va, true, oa + i * g.k));
                float sb = (float)qp_float(&bs.q, matrix_param_idx(&bs, vb, false, ob + j));
                float mult = sa * sb / ysf;
                q8_store(vy->dtype, py, oy + i * g.n + j,
                         saturate_round((double)y[oy + i * g.n + j] * mult, qp_int(&yzp, 0), lo, hi));
            }
    }
    tgc_free(y);
    return TGC_OK;
}

/* ---- ConvInteger, QLinearConv -------------------------------------------------------- */

/* Conv(X - x_zp, W - w_zp) (+ bias, int32 [M] or NULL) into y32 (int32,
 * Y's elements, room for them given by the caller). x, w, xzp_at and
 * wzp_at are the input positions of X, W and their zero points; fills the
 * geometry. */
static tgc_status conv_integer_body(tgc_kernel_ctx *c, int x, int w, int xzp_at, int wzp_at, const int32_t *bias,
                                    int32_t *y32, tgc_conv_geometry *g) {
    const tgc_value *vx = &c->inputs[x], *vw = &c->inputs[w];
    if (!is_q8(vx->dtype) || !is_q8(vw->dtype))
        return tgc_kernel_fail(c, "inputs X and W must be 8-bit quantized (X %s, W %s)", tgc_dtype_name(vx->dtype),
                               tgc_dtype_name(vw->dtype));
    tgc_value views[2] = {f32_view(vx), f32_view(vw)}, out = f32_view(&c->outputs[0]);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.n_inputs = 2;
    sub.outputs = &out;
    sub.n_outputs = 1;
    tgc_status st = tgc_window_read_conv(&sub, g);
    if (st != TGC_OK) return st;
    qparam xzp, wzp;
    if ((st = read_param(c, xzp_at, "x_zero_point", -1, vx->dtype, &xzp)) != TGC_OK ||
        (st = read_param(c, wzp_at, "w_zero_point", g->m_count, vw->dtype, &wzp)) != TGC_OK)
        return st;
    const tgc_window *win = &g->w;
    int64_t nx = tgc_value_numel(vx), nw = tgc_value_numel(vw), ck = g->cg * g->kk_count, col_n;
    if (!tgc_checked_mul_i64(ck, g->out_size, &col_n)) return tgc_kernel_fail(c, "the column buffer is too large");
    int32_t *wx = tgc_malloc(((size_t)nx + 1) * sizeof(int32_t)), *ww = tgc_malloc(((size_t)nw + 1) * sizeof(int32_t));
    int32_t *col = tgc_malloc(((size_t)col_n + 1) * sizeof(int32_t));
    int64_t *row = tgc_malloc(((size_t)g->out_size + 1) * sizeof(int64_t));
    if (wx == NULL || ww == NULL || col == NULL || row == NULL) {
        tgc_free(wx), tgc_free(ww), tgc_free(col), tgc_free(row);
        return tgc_kernel_fail(c, "out of host memory for the integer operands");
    }
    const void *px = tgc_kernel_in_ptr(c, x), *pw = tgc_kernel_in_ptr(c, w);
    int32_t z = qp_int(&xzp, 0);
    for (int64_t e = 0; e < nx; e++) wx[e] = int_at(vx->dtype, px, e) - z;
    for (int64_t e = 0; e < nw; e++) ww[e] = int_at(vw->dtype, pw, e) - qp_int(&wzp, e / (ck > 0 ? ck : 1));
    int64_t mg = g->m_count / g->group;
    int n = win->n;
    for (int64_t b = 0; b < g->batch; b++)
        for (int64_t gi = 0; gi < g->group; gi++) {
            /* im2col: row (ch, tap), column o; padding reads 0 (the zero point, taken off). */
            for (int64_t r = 0; r < ck; r++) {
                int64_t ch = r / g->kk_count, tap = r % g->kk_count, t[TGC_MAX_RANK];
                for (int a = n - 1; a >= 0; a--) t[a] = tap % win->kernel[a], tap /= win->kernel[a];
                const int32_t *plane = wx + ((b * g->channels) + gi * g->cg + ch) * g->in_size;
                for (int64_t o = 0; o < g->out_size; o++) {
                    int64_t rest = o, off = 0, mul = 1;
                    bool inside = true;
                    for (int a = n - 1; a >= 0; a--) {
                        int64_t oi = rest % win->out[a];
                        rest /= win->out[a];
                        int64_t ii = oi * win->strides[a] - win->pads[a] + t[a] * win->dilations[a];
                        inside = inside && ii >= 0 && ii < win->in[a];
                        off += ii * mul;
                        mul *= win->in[a];
                    }
                    col[r * g->out_size + o] = inside ? plane[off] : 0;
                }
            }
            int32_t *yg = y32 + (b * g->m_count + gi * mg) * g->out_size;
            igemm(mg, g->out_size, ck, ww + gi * mg * ck, col, row, yg);
            for (int64_t m = 0; bias != NULL && m < mg; m++) {
                int32_t *ym = yg + m * g->out_size;
                for (int64_t o = 0; o < g->out_size; o++) ym[o] = (int32_t)((uint32_t)ym[o] + (uint32_t)bias[gi * mg + m]);
            }
        }
    tgc_free(wx), tgc_free(ww), tgc_free(col), tgc_free(row);
    return TGC_OK;
}

static tgc_status conv_integer(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    if (c->outputs[0].dtype != TGC_INT32) return tgc_kernel_fail(c, "output y must be int32");
    tgc_conv_geometry g;
    int32_t scratch, *y = tgc_value_numel(&c->outputs[0]) > 0 ? tgc_kernel_out_ptr(c, 0) : &scratch; /* never NULL */
    return conv_integer_body(c, 0, 1, 2, 3, NULL, y, &g);
}

static tgc_status qlinear_conv(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 8, 1);
    if (st != TGC_OK) return st;
    const tgc_value *vy = &c->outputs[0];
    if (!is_q8(vy->dtype) || vy->dtype != c->inputs[7].dtype)
        return tgc_kernel_fail(c, "output y must have y_zero_point's 8-bit type");
    int64_t m_count = c->inputs[3].rank >= 1 ? c->inputs[3].dims[0] : 0;
    qparam xs, ws, ys, yzp, bias;
    if ((st = read_param(c, 1, "x_scale", -1, TGC_FLOAT32, &xs)) != TGC_OK ||
        (st = read_param(c, 4, "w_scale", m_count, TGC_FLOAT32, &ws)) != TGC_OK ||
        (st = read_param(c, 6, "y_scale", -1, TGC_FLOAT32, &ys)) != TGC_OK ||
        (st = read_param(c, 7, "y_zero_point", -1, vy->dtype, &yzp)) != TGC_OK)
        return st;
    memset(&bias, 0, sizeof bias);
    if (tgc_kernel_has_input(c, 8)) {
        const tgc_value *vb = &c->inputs[8];
        if (vb->dtype != TGC_INT32 || vb->rank != 1 || vb->dims[0] != m_count)
            return tgc_kernel_fail(c, "input 8 (B) must be int32 [M = %lld]", (long long)m_count);
    }
    int64_t ny = tgc_value_numel(vy);
    int32_t *y32 = tgc_malloc(((size_t)ny + 1) * sizeof(int32_t));
    if (y32 == NULL) return tgc_kernel_fail(c, "out of host memory for the integer result");
    tgc_conv_geometry g;
    st = conv_integer_body(c, 0, 3, 2, 5, tgc_kernel_has_input(c, 8) ? tgc_kernel_in_ptr(c, 8) : NULL, y32, &g);
    if (st != TGC_OK) {
        tgc_free(y32);
        return st;
    }
    int32_t lo, hi;
    q8_range(vy->dtype, &lo, &hi);
    float xsf = (float)qp_float(&xs, 0), ysf = (float)qp_float(&ys, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t e = 0; e < ny; e++) {
        int64_t m = e / (g.out_size > 0 ? g.out_size : 1) % (m_count > 0 ? m_count : 1);
        float mult = xsf * (float)qp_float(&ws, m) / ysf;
        q8_store(vy->dtype, py, e, saturate_round((double)y32[e] * mult, qp_int(&yzp, 0), lo, hi));
    }
    tgc_free(y32);
    return TGC_OK;
}

/* ---- The family --------------------------------------------------------------------- */

const tgc_kernel_def tgc_cpu_kernels_quant[] = {
    {.op = "QuantizeLinear", .fn = quantize_linear, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_INT32, TGC_DTYPE_INVALID}},
    {.op = "DequantizeLinear", .fn = dequantize_linear, .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_INT32, TGC_DTYPE_INVALID}},
    {.op = "DynamicQuantizeLinear", .fn = dynamic_quantize_linear, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = "MatMulInteger", .fn = matmul_integer, .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID}},
    {.op = "QLinearMatMul", .fn = qlinear_matmul, .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID}},
    {.op = "ConvInteger", .fn = conv_integer, .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID}},
    {.op = "QLinearConv", .fn = qlinear_conv, .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
