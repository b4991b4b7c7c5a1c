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
 *   ConvInteger       in integers, exactly, the int64 sum stored as int32
 *                     (wrapping as numpy's int32 matmul does when it does
 *                     not fit), one of two ways:
 *                     - oneDNN's int8 matmul (s8 x s8 -> s32, VNNI), the
 *                       uint8 operands and zero points moved down by 128 (the
 *                       differences unchanged), with the zero points' terms
 *                       taken off after: A B - b_zp rowsum(A) - a_zp
 *                       colsum(B) + K a_zp b_zp (ONNX Runtime's MLAS does
 *                       the same with its own kernels);
 *                     - where oneDNN declines (no VNNI, no oneDNN, K past
 *                       2^16), OpenBLAS's dgemm over the differences held
 *                       in float64: every product (< 2^16) and partial sum
 *                       (< K 2^16, below 2^53 for any K memory can hold) is
 *                       an integer float64 holds exactly, whatever the
 *                       order of the sums
 *   QLinearMatMul,    that integer result (plus QLinearConv's int32 bias)
 *   QLinearConv       times the float32 multiplier a_scale * b_scale /
 *                     y_scale, in double, plus y_zp, rint, saturated.
 *
 * Element types: every kernel reads and writes its 8-bit operands through
 * the QUANT_TYPES list (uint8, int8), one entry per type. */
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/target_clones.h"
#include "devices/kernel.h"
#include "devices/kernel_cache.h"
#include "devices/kernel_checks.h"
#include "devices/matmul_geometry.h"
#include "devices/window.h"

#include "support/alloc.h"
#include "support/checked.h"

#include <cblas.h>
#include <limits.h>
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

/* 16 float32 lanes and 16 int32 lanes (GCC's vector extensions: one
 * AVX-512 register, two AVX2 ones, four SSE2 ones), and 8 float64 lanes. */
typedef float q_vf __attribute__((vector_size(64)));
typedef int32_t q_vi __attribute__((vector_size(64)));
typedef double q_vd __attribute__((vector_size(64)));
typedef int64_t q_vl __attribute__((vector_size(64)));

/* Lane by lane, m ? a : b (m: -1 or 0 per lane, as comparisons give); a
 * macro: a function returning a 64-byte vector changes the ABI by ISA. */
#define Q_SEL(m, a, b) ((q_vf)(((q_vi)(a) & (m)) | ((q_vi)(b) & ~(m))))
#define Q_SELD(m, a, b) ((q_vd)(((q_vl)(a) & (m)) | ((q_vl)(b) & ~(m))))

/* Stores the 8-bit value of lane k of q (already in range) as element i. */
#define Q_STORE(is_signed, y, i, v) \
    ((is_signed) ? (void)(((int8_t *)(y))[i] = (int8_t)(v)) : (void)(((uint8_t *)(y))[i] = (uint8_t)(v)))

/* y[i] = saturate(rint(x[i] / scale) + zp) to [lo, hi] (uint8's or int8's
 * range; int8 stores when is_signed), i < n, zp a whole number in range:
 * QuantizeLinear as saturate_round computes it, the division in float32.
 * NaN gives the zero point; |v| kept within 512 (it saturates either way)
 * so that adding and taking off 1.5 * 2^23 rounds it half to even. 16
 * lanes at a time (the tail through saturate_round itself), written with
 * selects (GCC vectorizes no float compare-and-choose loop under its
 * default -ftrapping-math); compiled for AVX-512 and AVX2 too
 * (target_clones.h). */
TGC_CPU_CLONES static void quantize_q8(const float *x, int64_t n, float scale, float zp, float lo, float hi,
                                       bool is_signed, void *y) {
    const q_vf zero = {0}, small = zero - 512.0f, big = zero + 512.0f, vlo = zero + lo, vhi = zero + hi;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        q_vf v;
        memcpy(&v, x + i, sizeof v);
        v = v / scale;
        v = Q_SEL(v == v, v, zero);
        v = Q_SEL(v < small, small, v);
        v = Q_SEL(v > big, big, v);
        v = (v + 12582912.0f) - 12582912.0f + zp;
        v = Q_SEL(v < vlo, vlo, v);
        v = Q_SEL(v > vhi, vhi, v);
        q_vi q = __builtin_convertvector(v, q_vi);
        for (int k = 0; k < 16; k++) Q_STORE(is_signed, y, i + k, q[k]);
    }
    for (; i < n; i++) Q_STORE(is_signed, y, i, saturate_round(x[i] / scale, (int32_t)zp, (int32_t)lo, (int32_t)hi));
}

/* y[i] = (x[i] - zp) * scale for n 8-bit x (int8 when is_signed): the
 * difference is exact in float32, so the float32 product is the exactly
 * rounded one DequantizeLinear's double arithmetic gives. Compiled for
 * AVX-512 and AVX2 too. */
TGC_CPU_CLONES static void dequantize_q8(const void *x, int64_t n, int32_t zp, float scale, bool is_signed, float *y) {
    if (is_signed)
        for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)((const int8_t *)x)[i] - zp) * scale;
    else
        for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)((const uint8_t *)x)[i] - zp) * scale;
}

/* y[i] = saturate(rint(acc[i] * mult) + zp) to [lo, hi], the product in
 * float64 (QLinearConv's and QLinearMatMul's requantization, as
 * saturate_round computes it): NaN gives zp, |v| kept within 2^20 (it
 * saturates either way) so that adding and taking off 1.5 * 2^52 rounds
 * half to even. 8 lanes at a time (the tail through saturate_round
 * itself), one loop per 8-bit type so that the stores vectorize too;
 * compiled for AVX-512 and AVX2 too. */
typedef int32_t q_vi8 __attribute__((vector_size(32)));
#define REQUANTIZE(name, ct)                                                                                       \
    TGC_CPU_CLONES static void name(const int32_t *acc, int64_t n, double mult, double zp, double lo, double hi,   \
                                    ct *y) {                                                                       \
        const q_vd zero = {0}, small = zero - 1048576.0, big = zero + 1048576.0, vlo = zero + lo, vhi = zero + hi; \
        int64_t i = 0;                                                                                             \
        for (; i + 8 <= n; i += 8) {                                                                               \
            q_vi8 a;                                                                                               \
            memcpy(&a, acc + i, sizeof a);                                                                         \
            q_vd v = __builtin_convertvector(a, q_vd) * mult;                                                      \
            v = Q_SELD(v == v, v, zero);                                                                           \
            v = Q_SELD(v < small, small, v);                                                                       \
            v = Q_SELD(v > big, big, v);                                                                           \
            v = (v + 6755399441055744.0) - 6755399441055744.0 + zp;                                                \
            v = Q_SELD(v < vlo, vlo, v);                                                                           \
            v = Q_SELD(v > vhi, vhi, v);                                                                           \
            q_vi8 q = __builtin_convertvector(v, q_vi8);                                                           \
            for (int k = 0; k < 8; k++) y[i + k] = (ct)q[k];                                                       \
        }                                                                                                          \
        for (; i < n; i++) y[i] = (ct)saturate_round((double)acc[i] * mult, (int32_t)zp, (int32_t)lo, (int32_t)hi); \
    }
REQUANTIZE(requantize_u8, uint8_t)
REQUANTIZE(requantize_s8, int8_t)
#undef REQUANTIZE

static void requantize_q8(const int32_t *acc, int64_t n, double mult, double zp, double lo, double hi, bool is_signed,
                          void *y) {
    if (is_signed) requantize_s8(acc, n, mult, zp, lo, hi, y);
    else requantize_u8(acc, n, mult, zp, lo, hi, y);
}

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
    if (x->dtype == TGC_FLOAT32) { /* a run of `inner` elements shares a channel (per tensor: all n) */
        int64_t run = scale.count == 1 && zp.count <= 1 ? n : inner;
        for (int64_t i = 0; i < n; i += run) {
            int64_t ch = i / inner % size;
            quantize_q8((const float *)px + i, n - i < run ? n - i : run, (float)qp_float(&scale, ch),
                        (float)qp_int(&zp, ch), (float)lo, (float)hi, y->dtype == TGC_INT8,
                        (uint8_t *)py + i);
        }
        return TGC_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = i / inner % size;
        double q = (double)((const int32_t *)px)[i] / (double)(float)qp_float(&scale, ch);
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
    if (is_q8(x->dtype)) { /* a run of `inner` elements shares a channel (per tensor: all n) */
        int64_t run = scale.count == 1 && zp.count <= 1 ? n : inner;
        for (int64_t i = 0; i < n; i += run) {
            int64_t ch = i / inner % size;
            dequantize_q8((const uint8_t *)px + i, n - i < run ? n - i : run, qp_int(&zp, ch),
                          (float)qp_float(&scale, ch), x->dtype == TGC_INT8, py + i);
        }
        return TGC_OK;
    }
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
    /* The range, which always holds 0 (NaNs never compare), in 8 lanes. */
    float hi[8] = {0}, lo[8] = {0}, maxx = 0, minx = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            hi[k] = px[i + k] > hi[k] ? px[i + k] : hi[k];
            lo[k] = px[i + k] < lo[k] ? px[i + k] : lo[k];
        }
    for (; i < n; i++) {
        maxx = px[i] > maxx ? px[i] : maxx;
        minx = px[i] < minx ? px[i] : minx;
    }
    for (int k = 0; k < 8; k++) {
        maxx = hi[k] > maxx ? hi[k] : maxx;
        minx = lo[k] < minx ? lo[k] : minx;
    }
    float scale = (maxx == minx ? 1.0f : maxx - minx) / 255.0f;
    float zpf = 0.0f - minx / scale;
    zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
    float zp = rintf(zpf);
    quantize_q8(px, n, scale, zp, 0.0f, 255.0f, false, tgc_kernel_out_ptr(c, 0));
    *(float *)tgc_kernel_out_ptr(c, 1) = scale;
    *(uint8_t *)tgc_kernel_out_ptr(c, 2) = (uint8_t)zp;
    return TGC_OK;
}

/* ---- Integer GEMM ------------------------------------------------------------------- */

/* How far an 8-bit type's values move to be int8 (uint8: down by 128). The
 * differences x - zp, all the integer sums need, stay as they were. */
static int32_t int8_shift(tgc_dtype t) { return t == TGC_UINT8 ? 128 : 0; }

/* The integer sum's int64 value stored as int32, wrapping as numpy's int32. */
static int32_t wrap_int32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* y[m x n] (int32, row stride ldy) = a[m x k] b[k x n] (row-major float64
 * holding integers of at most 9 bits; rows of a and b at strides k and
 * ldb), exactly (see the top of the file), through `acc` (m x n float64
 * scratch). The integer sum is wrapped to int32 as numpy's int32 does.
 * False when a size passes BLAS's int range. */
static bool igemm(int64_t m, int64_t n, int64_t k, const double *a, const double *b, int64_t ldb, double *acc,
                  int32_t *y, int64_t ldy) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || ldb > INT_MAX) return false;
    if (m == 0 || n == 0) return true;
    if (k == 0) memset(acc, 0, (size_t)(m * n) * sizeof *acc);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a, (int)k, b, (int)ldb,
                    0.0, acc, (int)n);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) y[i * ldy + j] = wrap_int32((int64_t)acc[i * n + j]);
    return true;
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

/* operand m with its zero point taken off, into out (exact integers). */
static void widen_matrix(const tgc_value *m, const void *p, const matrix_param *zp, bool rows, double *out) {
    for (int64_t e = 0, n = tgc_value_numel(m); e < n; e++)
        out[e] = (double)(int_at(m->dtype, p, e) - qp_int(&zp->q, matrix_param_idx(zp, m, rows, e)));
}

/* A float32 view of value v (same dims) for the geometry readers. */
static tgc_value f32_view(const tgc_value *v) {
    tgc_value f = *v;
    f.dtype = TGC_FLOAT32;
    return f;
}

/* An 8-bit operand as int8 (int8_shift) into out. */
static void to_int8(tgc_dtype t, const uint8_t *p, int64_t n, int8_t *out) {
    uint8_t bits = int8_shift(t) != 0 ? 0x80u : 0; /* u - 128: the top bit flipped */
    for (int64_t e = 0; e < n; e++) out[e] = (int8_t)(p[e] ^ bits);
}

/* Y (int32, its elements) = (A - a_zp)(B - b_zp) through oneDNN's exact
 * int8 product: per matrix, Y = A B - b_zp rowsum(A) - a_zp colsum(B) +
 * K a_zp b_zp, the operands and zero points shifted to int8 (the
 * differences unchanged). 1 when done, 0 when oneDNN declines (nothing
 * written), -1 on failure. */
static int matmul_int8(const tgc_value *va, const tgc_value *vb, const uint8_t *pa, const uint8_t *pb,
                       const matrix_param *azp, const matrix_param *bzp, const tgc_matmul_geometry *g, int32_t *y) {
    if (g->k > TGC_DNNL_IGEMM_MAX_K || g->batch < 1 || g->m < 1 || g->n < 1 || g->k < 1) return 0;
    int64_t na = tgc_value_numel(va), nb = tgc_value_numel(vb);
    /* One B for every matrix of a whole A: one product of all A's rows. */
    bool one = g->b_count == 1 && na == g->batch * g->m * g->k;
    int64_t rows = one ? g->batch * g->m : g->m, mats = one ? 1 : g->batch;
    int8_t *a8 = tgc_malloc((size_t)na + 1), *b8 = tgc_malloc((size_t)nb + 1);
    int64_t *row_sum = tgc_malloc(((size_t)rows + 1) * sizeof(int64_t));
    int64_t *col_sum = tgc_malloc(((size_t)g->n + 1) * sizeof(int64_t));
    int32_t *b_zp = tgc_malloc(((size_t)g->n + 1) * sizeof(int32_t));
    int done = a8 != NULL && b8 != NULL && row_sum != NULL && col_sum != NULL && b_zp != NULL ? 1 : -1;
    if (done > 0) {
        to_int8(va->dtype, pa, na, a8);
        to_int8(vb->dtype, pb, nb, b8);
    }
    int32_t sa = int8_shift(va->dtype), sb = int8_shift(vb->dtype);
    for (int64_t t = 0; done > 0 && t < mats; t++) {
        int64_t oa = 0, ob = 0, oy = 0;
        if (!one) tgc_matmul_geometry_offsets(g, t, &oa, &ob, &oy);
        done = tgc_dnnl_igemm(rows, g->n, g->k, a8 + oa, g->k, b8 + ob, g->n, y + oy, g->n);
        if (done <= 0) break;
        for (int64_t i = 0; i < rows; i++) {
            int64_t sum = 0;
            for (int64_t p = 0; p < g->k; p++) sum += a8[oa + i * g->k + p];
            row_sum[i] = sum;
        }
        for (int64_t j = 0; j < g->n; j++) {
            col_sum[j] = 0;
            b_zp[j] = qp_int(&bzp->q, matrix_param_idx(bzp, vb, false, ob + j)) - sb;
        }
        for (int64_t p = 0; p < g->k; p++)
            for (int64_t j = 0; j < g->n; j++) col_sum[j] += b8[ob + p * g->n + j];
        for (int64_t i = 0; i < rows; i++) {
            int64_t za = qp_int(&azp->q, matrix_param_idx(azp, va, true, oa + i * g->k)) - sa;
            int32_t *yi = y + oy + i * g->n;
            for (int64_t j = 0; j < g->n; j++)
                yi[j] = wrap_int32((int64_t)yi[j] - b_zp[j] * row_sum[i] - za * col_sum[j] + g->k * za * b_zp[j]);
        }
    }
    tgc_free(a8), tgc_free(b8), tgc_free(row_sum), tgc_free(col_sum), tgc_free(b_zp);
    return done;
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
    int32_t *y8 = tgc_malloc(((size_t)ny + 1) * sizeof(int32_t));
    if (y8 == NULL) return tgc_kernel_fail(c, "out of host memory for the integer operands");
    int done = matmul_int8(va, vb, tgc_kernel_in_ptr(c, a), tgc_kernel_in_ptr(c, b), azp, bzp, g, y8);
    if (done != 0) {
        if (done < 0) {
            tgc_free(y8);
            return tgc_kernel_fail(c, "the integer product failed (oneDNN, or out of host memory)");
        }
        *y32 = y8;
        return TGC_OK;
    }
    tgc_free(y8);
    double *wa = tgc_malloc(((size_t)na + 1) * sizeof(double)), *wb = tgc_malloc(((size_t)nb + 1) * sizeof(double));
    double *acc = tgc_malloc(((size_t)(ny > 0 ? g->m * g->n : 0) + 1) * sizeof(double)); /* m n <= ny */
    int32_t *y = tgc_malloc(((size_t)ny + 1) * sizeof(int32_t));
    if (wa == NULL || wb == NULL || y == NULL || acc == NULL) {
        tgc_free(wa), tgc_free(wb), tgc_free(y), tgc_free(acc);
        return tgc_kernel_fail(c, "out of host memory for the integer operands");
    }
    widen_matrix(va, tgc_kernel_in_ptr(c, a), azp, true, wa);
    widen_matrix(vb, tgc_kernel_in_ptr(c, b), bzp, false, wb);
    bool fits = true;
    for (int64_t t = 0; fits && t < g->batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(g, t, &oa, &ob, &oy);
        fits = igemm(g->m, g->n, g->k, wa + oa, wb + ob, g->n, acc, y + oy, g->n);
    }
    tgc_free(wa), tgc_free(wb), tgc_free(acc);
    if (!fits) {
        tgc_free(y);
        return tgc_kernel_fail(c, "a matrix dimension passes the BLAS int range");
    }
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
    if (as.q.count <= 1 && bs.q.count <= 1) { /* one multiplier for every element */
        float mult = (float)qp_float(&as.q, 0) * (float)qp_float(&bs.q, 0) / ysf;
        requantize_q8(y, tgc_value_numel(vy), mult, qp_int(&yzp, 0), lo, hi, vy->dtype == TGC_INT8, py);
        tgc_free(y);
        return TGC_OK;
    }
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

/* The most float64s one block of im2col columns holds (8 MiB). */
#define COL_BLOCK_ELEMS (INT64_C(1) << 20)

/* One im2col row: for tap `tap` of window w (row-major over the kernel's
 * axes) and output positions o0 .. o0 + n - 1, the input element each
 * reads from `plane` (one channel of X, bytes) as int8 (a uint8 byte with
 * its top bit flipped when `flip`: u - 128), `pad` where the tap lands in
 * padding. The positions go a line (the last axis) at a time: one division
 * per line, none per element, and no bounds checks inside a line. */
static void im2col_row(const tgc_window *w, int64_t tap, const uint8_t *plane, bool flip, int8_t pad, int64_t o0,
                       int64_t n, int8_t *out) {
    int rank = w->n, last = rank - 1;
    int64_t t[TGC_MAX_RANK] = {0};
    for (int a = last; a >= 0; a--) t[a] = tap % w->kernel[a], tap /= w->kernel[a];
    int64_t line = w->out[last], s = w->strides[last], start = t[last] * w->dilations[last] - w->pads[last];
    /* The output positions along a line whose tap lands inside: [first, last_in]. */
    int64_t first = start >= 0 ? 0 : (-start + s - 1) / s;
    int64_t last_in = w->in[last] - 1 - start < 0 ? -1 : (w->in[last] - 1 - start) / s;
    for (int64_t done = 0; done < n;) {
        int64_t o = o0 + done, j0 = o % line, len = line - j0 < n - done ? line - j0 : n - done;
        /* the line's outer coordinates: inside the input, and where it starts */
        int64_t rest = o / line, off = 0, mul = w->in[last];
        bool inside = true;
        for (int a = last - 1; a >= 0; a--) {
            int64_t ii = (rest % w->out[a]) * w->strides[a] - w->pads[a] + t[a] * w->dilations[a];
            rest /= w->out[a];
            inside = inside && ii >= 0 && ii < w->in[a];
            off += ii * mul;
            mul *= w->in[a];
        }
        int8_t *dst = out + done;
        int64_t lo = first - j0 > 0 ? first - j0 : 0, hi = last_in - j0 + 1 < len ? last_in - j0 + 1 : len;
        if (!inside || hi <= lo) {
            memset(dst, (uint8_t)pad, (size_t)len);
        } else {
            memset(dst, (uint8_t)pad, (size_t)lo);
            const uint8_t *src = plane + off + (j0 + lo) * s + start;
            int64_t count = hi - lo;
            uint8_t *d = (uint8_t *)dst + lo, bits = flip ? 0x80u : 0;
            if (s == 1)
                for (int64_t j = 0; j < count; j++) d[j] = src[j] ^ bits;
            else
                for (int64_t j = 0; j < count; j++) d[j] = src[j * s] ^ bits;
            memset(dst + hi, (uint8_t)pad, (size_t)(len - hi));
        }
        done += len;
    }
}

/* sum[j] += row[j], j < n (the columns' sums). Compiled for AVX-512 and
 * AVX2 too (target_clones.h). */
TGC_CPU_CLONES static void add_row(const int8_t *row, int64_t n, int64_t *sum) {
    for (int64_t j = 0; j < n; j++) sum[j] += row[j];
}

/* Conv's integer operands: W and a block of X's im2col columns as int8
 * (int8_shift), with what the products need besides: per output channel
 * its W zero point (shifted) and the sum of its row, per column its sum. */
typedef struct int8_conv {
    const int8_t *w;
    const int32_t *w_zp;
    const int64_t *w_sum;
    void *own_weights; /* the block w, w_zp and w_sum lie in when no cache holds it */
    int8_t *col;
    int64_t *col_sum;
    int8_t x_zp;
    double *w_wide, *col_wide; /* the float64 path's operands, made when it first runs */
    int64_t w_wide_n, col_wide_n;
} int8_conv;

static void int8_conv_free(int8_conv *q) {
    tgc_free(q->own_weights), tgc_free(q->col), tgc_free(q->col_sum);
    tgc_free(q->w_wide), tgc_free(q->col_wide);
}

/* W as int8_conv wants it, in one block: per output channel the sum of its
 * row (int64) and its shifted zero point (int32), then the shifted
 * weights [M, ck] (int8). Kept in the node's kernel cache when W and its
 * zero point are session constants (built on the first run). */
typedef struct conv_weights_arg {
    tgc_dtype dtype;
    const uint8_t *w;
    const qparam *zp;
    int64_t m, ck;
} conv_weights_arg;

static void *build_conv_weights(const tgc_kernel_ctx *c, void *arg, size_t *bytes) {
    (void)c;
    const conv_weights_arg *a = arg;
    size_t head = (size_t)a->m * (sizeof(int64_t) + sizeof(int32_t)), nw;
    if (!tgc_checked_mul_size((size_t)a->m, (size_t)a->ck, &nw) || nw > SIZE_MAX - head - 1) return NULL;
    uint8_t *block = tgc_malloc(head + nw + 1);
    if (block == NULL) return NULL;
    int64_t *sum = (int64_t *)block;
    int32_t *zp = (int32_t *)(block + (size_t)a->m * sizeof(int64_t));
    int8_t *w = (int8_t *)(block + head);
    int32_t shift = int8_shift(a->dtype);
    for (int64_t m = 0; m < a->m; m++) {
        zp[m] = qp_int(a->zp, m) - shift;
        int64_t total = 0;
        for (int64_t r = m * a->ck; r < (m + 1) * a->ck; r++) { /* uint8 u - 128: u's bits with the top flipped */
            w[r] = (int8_t)(shift != 0 ? a->w[r] ^ 0x80u : a->w[r]);
            total += w[r];
        }
        sum[m] = total;
    }
    *bytes = head + nw + 1;
    return block;
}

/* y[j] = sum over r < taps of (col[r * n + j] - x_zp) (w[r] - w_zp), in
 * int32 (exact for taps <= DIRECT_MAX_TAPS), j < n. Compiled for AVX-512
 * and AVX2 too (target_clones.h): the loop is the whole of a depthwise
 * layer. */
TGC_CPU_CLONES static void sum_taps(const int8_t *w, int32_t w_zp, const int8_t *col, int32_t x_zp, int64_t taps,
                                    int64_t n, int32_t *y) {
    memset(y, 0, (size_t)n * sizeof *y);
    for (int64_t r = 0; r < taps; r++) {
        int32_t wd = w[r] - w_zp;
        const int8_t *xr = col + r * n;
        for (int64_t j = 0; j < n; j++) y[j] += (xr[j] - x_zp) * wd;
    }
}

/* Windows of at most this many taps (a 3x3 or 5x5 depthwise Conv's, whose
 * products oneDNN would make one tiny call per channel for) are summed by
 * conv_block itself: each difference product is below 2^16, so 32 of them
 * sum exactly in int32. */
#define DIRECT_MAX_TAPS 32

/* One block's Y[mg, cb] (row stride ldy) from W's rows w0.. and the block's
 * columns: directly for few taps (DIRECT_MAX_TAPS), else oneDNN's exact int8 product with the zero points' terms taken
 * off, Y = W X - x_zp rowsum(W) - w_zp colsum(X) + K w_zp x_zp, or the
 * float64 sum of the differences when oneDNN declines (*use_dnnl then
 * false for the rest). False when a sum fails. */
static bool conv_block(int8_conv *q, int64_t w0, int64_t mg, int64_t cb, int64_t ck, int32_t *y, int64_t ldy,
                       bool *use_dnnl) {
    if (ck <= DIRECT_MAX_TAPS) { /* a depthwise window: too small a product to hand off */
        for (int64_t m = 0; m < mg; m++)
            sum_taps(q->w + (w0 + m) * ck, q->w_zp[w0 + m], q->col, q->x_zp, ck, cb, y + m * ldy);
        return true;
    }
    int done = *use_dnnl ? tgc_dnnl_igemm(mg, cb, ck, q->w + w0 * ck, ck, q->col, cb, y, ldy) : 0;
    if (done < 0) return false;
    if (done > 0) {
        for (int64_t m = 0; m < mg; m++) {
            int64_t zw = q->w_zp[w0 + m], base = ck * zw * q->x_zp - (int64_t)q->x_zp * q->w_sum[w0 + m];
            int32_t *ym = y + m * ldy;
            for (int64_t j = 0; j < cb; j++) ym[j] = wrap_int32((int64_t)ym[j] + base - zw * q->col_sum[j]);
        }
        return true;
    }
    *use_dnnl = false;
    if (q->w_wide == NULL) q->w_wide = tgc_malloc(((size_t)q->w_wide_n + 1) * sizeof(double));
    if (q->col_wide == NULL) q->col_wide = tgc_malloc(((size_t)q->col_wide_n + 1) * sizeof(double));
    if (q->w_wide == NULL || q->col_wide == NULL) return false;
    for (int64_t m = 0; m < mg; m++)
        for (int64_t r = 0; r < ck; r++) q->w_wide[m * ck + r] = (double)(q->w[(w0 + m) * ck + r] - q->w_zp[w0 + m]);
    for (int64_t e = 0; e < ck * cb; e++) q->col_wide[e] = (double)(q->col[e] - q->x_zp);
    return igemm(mg, cb, ck, q->w_wide, q->col_wide, cb, q->col_wide + ck * cb, y, ldy);
}

/* Conv's geometry for an integer Conv with X and W at input positions x
 * and w (read from dims, as Conv's; the dtypes are the caller's to check). */
static tgc_status read_int_conv(tgc_kernel_ctx *c, int x, int w, tgc_conv_geometry *g) {
    tgc_value views[2] = {f32_view(&c->inputs[x]), f32_view(&c->inputs[w])}, out = f32_view(&c->outputs[0]);
    tgc_kernel_ctx sub = *c;
    sub.inputs = views;
    sub.n_inputs = 2;
    sub.outputs = &out;
    sub.n_outputs = 1;
    return tgc_window_read_conv(&sub, g);
}

/* The columns of one im2col block: all of them, or as many as keep the
 * block within COL_BLOCK_ELEMS int8s (at least 16). */
static int64_t column_block(const tgc_conv_geometry *g) {
    int64_t ck = g->cg * g->kk_count, cols = g->out_size < 1 ? 1 : g->out_size;
    if (ck > 0 && cols > COL_BLOCK_ELEMS / ck) cols = COL_BLOCK_ELEMS / ck > 16 ? COL_BLOCK_ELEMS / ck : 16;
    return cols;
}

/* What conv_integer_body holds for the static memory plan: W as int8 with
 * its rows' sums and zero points in the node's cache when W is a constant
 * (build_conv_weights), and an im2col block with its column sums while it
 * runs (the float64 path's operands, only where oneDNN declines, are not
 * counted). X and W at input positions x and w. */
static void conv_integer_footprint_at(tgc_kernel_ctx *c, int x, int w, tgc_kernel_footprint *out) {
    tgc_conv_geometry g;
    if (c->n_inputs <= w || c->n_outputs < 1 || read_int_conv(c, x, w, &g) != TGC_OK) return;
    int64_t ck = g.cg * g.kk_count, cols = column_block(&g), col_n, nw;
    if (!tgc_checked_mul_i64(ck, cols, &col_n) || !tgc_checked_mul_i64(g.m_count, ck, &nw)) return;
    out->workspace_bytes = col_n + cols * (int64_t)sizeof(int64_t);
    if (c->const_inputs & 1u << w)
        out->cache_bytes = g.m_count * (int64_t)(sizeof(int64_t) + sizeof(int32_t)) + nw + 1;
}

static void conv_integer_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width; /* one thread runs it */
    conv_integer_footprint_at(c, 0, 1, out);
}

static void qlinear_conv_footprint(tgc_kernel_ctx *c, int width, tgc_kernel_footprint *out) {
    (void)width;
    conv_integer_footprint_at(c, 0, 3, out);
}

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
    tgc_status st = read_int_conv(c, x, w, g);
    if (st != TGC_OK) return st;
    qparam xzp, wzp;
    if ((st = read_param(c, xzp_at, "x_zero_point", -1, vx->dtype, &xzp)) != TGC_OK ||
        (st = read_param(c, wzp_at, "w_zero_point", g->m_count, vw->dtype, &wzp)) != TGC_OK)
        return st;
    const tgc_window *win = &g->w;
    int64_t ck = g->cg * g->kk_count, cols = column_block(g), mg = g->m_count / g->group;
    int64_t col_n, acc_n;
    if (!tgc_checked_mul_i64(ck, cols, &col_n) || !tgc_checked_mul_i64(mg, cols, &acc_n))
        return tgc_kernel_fail(c, "the column buffer is too large");
    int8_conv q = {
        .col = tgc_malloc((size_t)col_n + 1),
        .col_sum = tgc_malloc(((size_t)cols + 1) * sizeof(int64_t)),
        .w_wide_n = mg * ck,
        .col_wide_n = col_n + acc_n, /* the columns, then the sums */
    };
    conv_weights_arg wa = {vw->dtype, tgc_kernel_in_ptr(c, w), &wzp, g->m_count, ck};
    uint32_t weights_in = 1u << w | (tgc_kernel_has_input(c, wzp_at) ? 1u << wzp_at : 0);
    const uint8_t *block = tgc_kernel_cache_get(c, weights_in, build_conv_weights, &wa);
    size_t block_bytes;
    if (block == NULL) block = q.own_weights = build_conv_weights(c, &wa, &block_bytes);
    if (q.col == NULL || q.col_sum == NULL || block == NULL) {
        int8_conv_free(&q);
        return tgc_kernel_fail(c, "out of host memory for the integer operands");
    }
    q.w_sum = (const int64_t *)block;
    q.w_zp = (const int32_t *)(block + (size_t)g->m_count * sizeof(int64_t));
    q.w = (const int8_t *)(block + (size_t)g->m_count * (sizeof(int64_t) + sizeof(int32_t)));
    const uint8_t *px = tgc_kernel_in_ptr(c, x);
    int32_t sx = int8_shift(vx->dtype);
    q.x_zp = (int8_t)(qp_int(&xzp, 0) - sx); /* padding reads the zero point: a zero difference */
    bool ok = true, use_dnnl = true;
    for (int64_t b = 0; ok && b < g->batch; b++)
        for (int64_t gi = 0; ok && gi < g->group; gi++)
            for (int64_t o0 = 0; ok && o0 < g->out_size; o0 += cols) {
                int64_t cb = g->out_size - o0 < cols ? g->out_size - o0 : cols;
                bool sums = ck > DIRECT_MAX_TAPS; /* summed directly, a few taps need no column sums */
                if (sums) memset(q.col_sum, 0, (size_t)cb * sizeof(int64_t));
                for (int64_t r = 0; r < ck; r++) {
                    const uint8_t *plane = px + ((b * g->channels) + gi * g->cg + r / g->kk_count) * g->in_size;
                    int8_t *row = q.col + r * cb;
                    im2col_row(win, r % g->kk_count, plane, sx != 0, q.x_zp, o0, cb, row);
                    if (sums) add_row(row, cb, q.col_sum);
                }
                int32_t *yg = y32 + (b * g->m_count + gi * mg) * g->out_size + o0;
                ok = conv_block(&q, gi * mg, mg, cb, ck, yg, g->out_size, &use_dnnl);
                for (int64_t m = 0; bias != NULL && m < mg; m++) {
                    int32_t *ym = yg + m * g->out_size;
                    for (int64_t j = 0; j < cb; j++) ym[j] = (int32_t)((uint32_t)ym[j] + (uint32_t)bias[gi * mg + m]);
                }
            }
    int8_conv_free(&q);
    return ok ? TGC_OK
              : tgc_kernel_fail(c, "the integer product failed (out of host memory, a size past BLAS's int range, "
                                   "or oneDNN)");
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
    uint8_t *py = tgc_kernel_out_ptr(c, 0);
    for (int64_t e = 0; g.out_size > 0 && e < ny; e += g.out_size) { /* a plane of one output channel at a time */
        int64_t m = e / g.out_size % (m_count > 0 ? m_count : 1);
        float mult = xsf * (float)qp_float(&ws, m) / ysf;
        requantize_q8(y32 + e, g.out_size, mult, qp_int(&yzp, 0), lo, hi, vy->dtype == TGC_INT8, py + e);
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
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID}, .footprint = conv_integer_footprint},
    {.op = "QLinearConv", .fn = qlinear_conv, .forward_input = -1,
     .dtypes = {TGC_UINT8, TGC_INT8, TGC_DTYPE_INVALID}, .footprint = qlinear_conv_footprint},
    {.op = NULL},
};
