/* Quantization kernels on the cpu (ONNX opset 17): QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger and QLinearMatMul
 * (ConvInteger and QLinearConv: kernels_quant_conv.c), following ONNX's
 * reference implementation (onnx/reference/ops/op_*.py) step for step:
 *
 *   QuantizeLinear    y = saturate(rint(x / scale) + zp), the division in
 *                     float32 for float32 x (in double for int32 x, as numpy
 *                     promotes), rint rounding half to even
 *   DequantizeLinear  y = (x - zp) * scale, exact in double, rounded once
 *   Dynamic...Linear  scale = (max(0, max x) - min(0, min x)) / 255 (1 / 255
 *                     when both are 0), zp = rint(clip(-min / scale, 0, 255)),
 *                     y as QuantizeLinear, all in float32
 *   MatMulInteger     (A - a_zp) x (B - b_zp) in integers, exactly, the
 *                     int64 sum stored as int32 (wrapping as numpy's int32
 *                     matmul does when it does not fit), one of two ways:
 *                     - oneDNN's int8 matmul (s8 x s8 -> s32, VNNI), the
 *                       uint8 operands and zero points moved down by 128 (the
 *                       differences unchanged), with the zero points' terms
 *                       taken off after: A B - b_zp rowsum(A) - a_zp
 *                       colsum(B) + K a_zp b_zp (ONNX Runtime's MLAS does
 *                       the same with its own kernels);
 *                     - where oneDNN declines (no VNNI, no oneDNN, K past
 *                       2^16), OpenBLAS's dgemm over the differences held
 *                       in float64 (tgc_cpu_q8_dgemm, quant.h)
 *   QLinearMatMul     that integer result times the float32 multiplier
 *                     a_scale * b_scale / y_scale, in double, plus y_zp,
 *                     rint, saturated (tgc_cpu_q8_requantize).
 *
 * Element types: every kernel reads and writes its 8-bit operands through
 * the QUANT_TYPES list (uint8, int8), one entry per type. */
#include "devices/cpu/gemm_packed.h"
#include "devices/cpu/quant.h"
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

bool tgc_cpu_q8_is(tgc_dtype t) {
#define IS_Q8(dt, ct, lo, hi) if (t == dt) return true;
    QUANT_TYPES(IS_Q8)
#undef IS_Q8
    return false;
}

void tgc_cpu_q8_range(tgc_dtype t, int32_t *lo, int32_t *hi) {
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

double tgc_cpu_qparam_float(const tgc_cpu_qparam *q, int64_t idx) {
    return ((const float *)q->p)[q->count == 1 ? 0 : idx];
}
int32_t tgc_cpu_qparam_int(const tgc_cpu_qparam *q, int64_t idx) {
    return q->count == 0 ? 0 : int_at(q->dtype, q->p, q->count == 1 ? 0 : idx);
}

tgc_status tgc_cpu_qparam_read(tgc_kernel_ctx *c, int i, const char *what, int64_t want, tgc_dtype dtype,
                               tgc_cpu_qparam *q) {
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
 * lanes at a time into int32s, up to 64 of those then narrowed to bytes by
 * a plain loop per type (GCC packs it; it stores a vector-extension type's
 * lanes one at a time); the tail through saturate_round itself. Written
 * with selects (GCC vectorizes no float compare-and-choose loop under its
 * default -ftrapping-math); compiled for AVX-512 and AVX2 too
 * (target_clones.h). */
TGC_CPU_CLONES static void quantize_q8(const float *x, int64_t n, float scale, float zp, float lo, float hi,
                                       bool is_signed, void *y) {
    const q_vf zero = {0}, small = zero - 512.0f, big = zero + 512.0f, vlo = zero + lo, vhi = zero + hi;
    int64_t i = 0;
    while (i + 16 <= n) {
        int32_t t[64];
        int64_t len = n - i >= 64 ? 64 : (n - i) / 16 * 16;
        for (int64_t b = 0; b < len; b += 16) {
            q_vf v;
            memcpy(&v, x + i + b, sizeof v);
            v = v / scale;
            v = Q_SEL(v == v, v, zero);
            v = Q_SEL(v < small, small, v);
            v = Q_SEL(v > big, big, v);
            v = (v + 12582912.0f) - 12582912.0f + zp;
            v = Q_SEL(v < vlo, vlo, v);
            v = Q_SEL(v > vhi, vhi, v);
            q_vi q = __builtin_convertvector(v, q_vi);
            memcpy(t + b, &q, sizeof q);
        }
        if (is_signed)
            for (int64_t k = 0; k < len; k++) ((int8_t *)y)[i + k] = (int8_t)t[k];
        else
            for (int64_t k = 0; k < len; k++) ((uint8_t *)y)[i + k] = (uint8_t)t[k];
        i += len;
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

/* tgc_cpu_q8_requantize (quant.h) for one 8-bit type and a finite mult:
 * adding and taking off 1.5 * 2^52 rounds v half to even where |v| < 2^51,
 * and leaves a larger v (already whole) past the range it saturates to;
 * no NaN can arise. 8 lanes at a time into int32s, up to 64 of those then
 * narrowed to bytes by a plain loop (which GCC turns into packing stores;
 * it narrows a vector-extension type an element at a time); the tail
 * through saturate_round itself. Compiled for AVX-512 and AVX2 too. */
typedef int32_t q_vi8 __attribute__((vector_size(32)));
typedef uint32_t q_vu8 __attribute__((vector_size(32)));
typedef float q_vf8 __attribute__((vector_size(32)));

/* The requantizations' last step on 8 float64 products v (q_vd, modified):
 * rounded half to even (adding and taking off 1.5 * 2^52, exact for |v| <
 * 2^51; a larger v is whole already and saturates), zp added, clamped to
 * [vlo, vhi], stored as 8 int32s at out. */
#define Q_ROUND_STORE8(v, zp, vlo, vhi, out)                                                                         \
    do {                                                                                                             \
        (v) = ((v) + 6755399441055744.0) - 6755399441055744.0 + (zp);                                                \
        (v) = Q_SELD((v) < (vlo), (vlo), (v));                                                                       \
        (v) = Q_SELD((v) > (vhi), (vhi), (v));                                                                       \
        q_vi8 q_ = __builtin_convertvector((v), q_vi8);                                                              \
        memcpy((out), &q_, sizeof q_);                                                                               \
    } while (0)
#define REQUANTIZE(name, ct)                                                                                         \
    TGC_CPU_CLONES static void name(const int32_t *acc, int64_t n, int32_t add, double mult, double zp, double lo,   \
                                    double hi, ct *y) {                                                              \
        const q_vd zero = {0}, vlo = zero + lo, vhi = zero + hi;                                                     \
        int64_t i = 0;                                                                                               \
        while (i + 8 <= n) {                                                                                         \
            int32_t t[64];                                                                                           \
            int64_t len = n - i >= 64 ? 64 : (n - i) / 8 * 8;                                                        \
            for (int64_t b = 0; b < len; b += 8) {                                                                   \
                q_vu8 a;                                                                                             \
                memcpy(&a, acc + i + b, sizeof a);                                                                   \
                q_vd v = __builtin_convertvector((q_vi8)(a + (uint32_t)add), q_vd) * mult;                           \
                Q_ROUND_STORE8(v, zp, vlo, vhi, t + b);                                                              \
            }                                                                                                        \
            for (int64_t k = 0; k < len; k++) y[i + k] = (ct)t[k];                                                   \
            i += len;                                                                                                \
        }                                                                                                            \
        for (; i < n; i++)                                                                                           \
            y[i] = (ct)saturate_round((double)(int32_t)((uint32_t)acc[i] + (uint32_t)add) * mult, (int32_t)zp,       \
                                      (int32_t)lo, (int32_t)hi);                                                     \
    }
REQUANTIZE(requantize_u8, uint8_t)
REQUANTIZE(requantize_s8, int8_t)
#undef REQUANTIZE

/* tgc_cpu_q8_requantize_channels (quant.h) for one 8-bit type, every mult
 * finite: as REQUANTIZE, 8 channels at a time with their own add and mult
 * in float64, up to 64 int32s then narrowed to bytes by a plain loop (GCC
 * packs it; a byte stored per lane took 3x the time). Where m is a
 * multiple of 8 the rows run as one stream (8 consecutive elements are 8
 * consecutive channels of one row); else row by row, the last m % 8
 * channels of each through saturate_round.
 *
 * Where m is a multiple of 16, each block of 64 goes 16 lanes at a time in
 * float32 first, twice as many lanes, and is kept when that gives the
 * float64 result, which it provably does unless a float32 product p with
 * |p| < 512 lies within 2^-13 of a half: mult is a float32 value, so the
 * float64 product is the exact one P (24 + 31 bits), and p, two float32
 * roundings away (the sum's, the product's), is within |p| 2^-23 <= 2^-14
 * of it; p and P then round to the same integer unless a half lies
 * between them; past 512 both saturate whatever the zero point. A block
 * with such a lane (ties among them: power-of-two scales make many) is
 * done again in float64. Compiled for AVX-512 and AVX2 too. */
typedef uint32_t q_vu __attribute__((vector_size(64)));
#define REQUANTIZE_CHANNELS(name, ct)                                                                                \
    TGC_CPU_CLONES static void name(const int32_t *acc, int64_t rows, int64_t m, const int32_t *add,                 \
                                    const float *mult, double zp, double lo, double hi, ct *y) {                     \
        const q_vd zero = {0}, vlo = zero + lo, vhi = zero + hi;                                                     \
        const q_vf fzero = {0}, flo = fzero + (float)lo, fhi = fzero + (float)hi, fzp = fzero + (float)zp;         \
        const q_vi abs_bits = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,             \
                               0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,             \
                               0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};                                    \
        const q_vf cap = fzero + 512.0f;                                                                             \
        bool stream = m % 8 == 0, wide = m % 16 == 0;                                                                \
        int64_t run = stream ? rows * m : m, n_runs = stream ? 1 : rows, whole = run / 8 * 8;                        \
        for (int64_t r = 0; r < n_runs; r++, acc += run, y += run) {                                                 \
            for (int64_t i = 0; i < whole; i += 64) {                                                                \
                int32_t t[64];                                                                                       \
                int64_t len = whole - i >= 64 ? 64 : whole - i;                                                      \
                bool again = true;                                                                                   \
                if (wide) {                                                                                          \
                    q_vf worst = fzero; /* the largest distance from an integer below 512 */                 \
                    for (int64_t b = 0; b < len; b += 16) {                                                          \
                        int64_t k = (i + b) % m;                                                                     \
                        q_vu a, c;                                                                                   \
                        q_vf f;                                                                                      \
                        memcpy(&a, acc + i + b, sizeof a);                                                           \
                        memcpy(&c, add + k, sizeof c);                                                               \
                        memcpy(&f, mult + k, sizeof f);                                                              \
                        q_vf p = __builtin_convertvector((q_vi)(a + c), q_vf) * f; /* the sum rounded past 2^24 */ \
                        q_vf v = (p + 12582912.0f) - 12582912.0f;                                                    \
                        q_vf off = (q_vf)((q_vi)(p - v) & abs_bits), mag = (q_vf)((q_vi)p & abs_bits);               \
                        off = Q_SEL(mag < cap, off, fzero); /* a maximum by selects: GCC vectorizes them */   \
                        worst = Q_SEL(worst < off, off, worst);                                                      \
                        v = v + fzp;                                                                                 \
                        v = Q_SEL(v < flo, flo, v);                                                                  \
                        v = Q_SEL(v > fhi, fhi, v);                                                                  \
                        q_vi q = __builtin_convertvector(v, q_vi);                                                   \
                        memcpy(t + b, &q, sizeof q);                                                                 \
                    }                                                                                                \
                    float w[16];                                                                                     \
                    memcpy(w, &worst, sizeof w);                                                                     \
                    again = false;                                                                                   \
                    for (int l = 0; l < 16; l++) again = again || w[l] >= 0.5f - 1.0f / 8192;                       \
                }                                                                                                    \
                for (int64_t b = 0; again && b < len; b += 8) {                                                      \
                    int64_t k = (i + b) % m;                                                                         \
                    q_vu8 a, c;                                                                                      \
                    q_vf8 f;                                                                                         \
                    memcpy(&a, acc + i + b, sizeof a);                                                               \
                    memcpy(&c, add + k, sizeof c);                                                                   \
                    memcpy(&f, mult + k, sizeof f);                                                                  \
                    q_vd v = __builtin_convertvector((q_vi8)(a + c), q_vd) * __builtin_convertvector(f, q_vd);       \
                    Q_ROUND_STORE8(v, zp, vlo, vhi, t + b);                                                          \
                }                                                                                                    \
                for (int64_t b = 0; b < len; b++) y[i + b] = (ct)t[b];                                               \
            }                                                                                                        \
            for (int64_t k = whole; k < run; k++)                                                                    \
                y[k] = (ct)saturate_round((double)(int32_t)((uint32_t)acc[k] + (uint32_t)add[k]) * mult[k],          \
                                          (int32_t)zp, (int32_t)lo, (int32_t)hi);                                    \
        }                                                                                                            \
    }
REQUANTIZE_CHANNELS(requantize_channels_u8, uint8_t)
REQUANTIZE_CHANNELS(requantize_channels_s8, int8_t)
#undef REQUANTIZE_CHANNELS

void tgc_cpu_q8_requantize_channels(const int32_t *acc, int64_t rows, int64_t m, const int32_t *add,
                                    const float *mult, double zp, double lo, double hi, bool is_signed, void *y) {
    bool finite = true;
    for (int64_t k = 0; k < m; k++) finite = finite && isfinite(mult[k]);
    if (!finite) { /* NaN products give zp */
        for (int64_t i = 0; i < rows * m; i++)
            Q_STORE(is_signed, y, i,
                    saturate_round((double)(int32_t)((uint32_t)acc[i] + (uint32_t)add[i % m]) * mult[i % m],
                                   (int32_t)zp, (int32_t)lo, (int32_t)hi));
        return;
    }
    if (is_signed) requantize_channels_s8(acc, rows, m, add, mult, zp, lo, hi, y);
    else requantize_channels_u8(acc, rows, m, add, mult, zp, lo, hi, y);
}

void tgc_cpu_q8_requantize(const int32_t *acc, int64_t n, int32_t add, double mult, double zp, double lo, double hi,
                           bool is_signed, void *y) {
    if (!isfinite(mult)) { /* NaN products give zp */
        for (int64_t i = 0; i < n; i++)
            Q_STORE(is_signed, y, i,
                    saturate_round((double)(int32_t)((uint32_t)acc[i] + (uint32_t)add) * mult, (int32_t)zp,
                                   (int32_t)lo, (int32_t)hi));
        return;
    }
    if (is_signed) requantize_s8(acc, n, add, mult, zp, lo, hi, y);
    else requantize_u8(acc, n, add, mult, zp, lo, hi, y);
}

static tgc_status quantize_linear(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((x->dtype != TGC_FLOAT32 && x->dtype != TGC_INT32) || !tgc_cpu_q8_is(y->dtype))
        return tgc_kernel_fail(c, "QuantizeLinear takes float32 or int32 x to an 8-bit type (x %s, y %s)",
                               tgc_dtype_name(x->dtype), tgc_dtype_name(y->dtype));
    int64_t size, inner, n = tgc_value_numel(x);
    tgc_cpu_qparam scale, zp;
    if ((st = axis_geometry(c, x, &size, &inner)) != TGC_OK) return st;
    if ((st = tgc_cpu_qparam_read(c, 1, "y_scale", size, TGC_FLOAT32, &scale)) != TGC_OK) return st;
    if ((st = tgc_cpu_qparam_read(c, 2, "y_zero_point", size, y->dtype, &zp)) != TGC_OK) return st;
    if (scale.count == 0) return tgc_kernel_fail(c, "input 1 (y_scale) is missing");
    int32_t lo, hi;
    tgc_cpu_q8_range(y->dtype, &lo, &hi);
    const void *px = tgc_kernel_in_ptr(c, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    if (x->dtype == TGC_FLOAT32) { /* a run of `inner` elements shares a channel (per tensor: all n) */
        int64_t run = scale.count == 1 && zp.count <= 1 ? n : inner;
        for (int64_t i = 0; i < n; i += run) {
            int64_t ch = i / inner % size;
            quantize_q8((const float *)px + i, n - i < run ? n - i : run, (float)tgc_cpu_qparam_float(&scale, ch),
                        (float)tgc_cpu_qparam_int(&zp, ch), (float)lo, (float)hi, y->dtype == TGC_INT8,
                        (uint8_t *)py + i);
        }
        return TGC_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = i / inner % size;
        double q = (double)((const int32_t *)px)[i] / (double)(float)tgc_cpu_qparam_float(&scale, ch);
        q8_store(y->dtype, py, i, saturate_round(q, tgc_cpu_qparam_int(&zp, ch), lo, hi));
    }
    return TGC_OK;
}

static tgc_status dequantize_linear(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if ((!tgc_cpu_q8_is(x->dtype) && x->dtype != TGC_INT32) || c->outputs[0].dtype != TGC_FLOAT32)
        return tgc_kernel_fail(c, "DequantizeLinear takes an 8-bit type or int32 to float32 (x %s)",
                               tgc_dtype_name(x->dtype));
    int64_t size, inner, n = tgc_value_numel(x);
    tgc_cpu_qparam scale, zp;
    if ((st = axis_geometry(c, x, &size, &inner)) != TGC_OK) return st;
    if ((st = tgc_cpu_qparam_read(c, 1, "x_scale", size, TGC_FLOAT32, &scale)) != TGC_OK) return st;
    if ((st = tgc_cpu_qparam_read(c, 2, "x_zero_point", size, x->dtype, &zp)) != TGC_OK) return st;
    if (scale.count == 0) return tgc_kernel_fail(c, "input 1 (x_scale) is missing");
    for (int64_t k = 0; x->dtype == TGC_INT32 && k < zp.count; k++)
        if (tgc_cpu_qparam_int(&zp, k) != 0) return tgc_kernel_fail(c, "an int32 x needs a zero x_zero_point (ONNX)");
    const void *px = tgc_kernel_in_ptr(c, 0);
    float *py = tgc_kernel_out_ptr(c, 0);
    if (tgc_cpu_q8_is(x->dtype)) { /* a run of `inner` elements shares a channel (per tensor: all n) */
        int64_t run = scale.count == 1 && zp.count <= 1 ? n : inner;
        for (int64_t i = 0; i < n; i += run) {
            int64_t ch = i / inner % size;
            dequantize_q8((const uint8_t *)px + i, n - i < run ? n - i : run, tgc_cpu_qparam_int(&zp, ch),
                          (float)tgc_cpu_qparam_float(&scale, ch), x->dtype == TGC_INT8, py + i);
        }
        return TGC_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = i / inner % size;
        py[i] =
            (float)(((double)int_at(x->dtype, px, i) - tgc_cpu_qparam_int(&zp, ch)) * tgc_cpu_qparam_float(&scale, ch));
    }
    return TGC_OK;
}

/* *lo = min(0, min x), *hi = max(0, max x) over n float32s, NaNs left out
 * (they never compare): DynamicQuantizeLinear's range. 16 lanes of selects
 * (as quantize_q8), compiled for AVX-512 and AVX2 too. */
TGC_CPU_CLONES static void range_with_zero(const float *x, int64_t n, float *lo, float *hi) {
    q_vf vlo = {0}, vhi = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        q_vf v;
        memcpy(&v, x + i, sizeof v);
        vlo = Q_SEL(v < vlo, v, vlo);
        vhi = Q_SEL(v > vhi, v, vhi);
    }
    float l = 0, h = 0;
    for (int k = 0; k < 16; k++) {
        l = vlo[k] < l ? vlo[k] : l;
        h = vhi[k] > h ? vhi[k] : h;
    }
    for (; i < n; i++) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    *lo = l;
    *hi = h;
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
    float minx, maxx;
    range_with_zero(px, n, &minx, &maxx);
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

bool tgc_cpu_q8_dgemm(int64_t m, int64_t n, int64_t k, const double *a, const double *b, int64_t ldb, double *acc,
                  int32_t *y, int64_t ldy) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || ldb > INT_MAX) return false;
    if (m == 0 || n == 0) return true;
    if (k == 0) memset(acc, 0, (size_t)(m * n) * sizeof *acc);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a, (int)k, b, (int)ldb,
                    0.0, acc, (int)n);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) y[i * ldy + j] = tgc_cpu_wrap_int32((int64_t)acc[i * n + j]);
    return true;
}

/* ---- MatMulInteger, QLinearMatMul ---------------------------------------------------- */

/* A matrix operand's zero point or scale: per tensor, per row of A / per
 * column of B (1-D), or per matrix row/column with A's or B's batch dims
 * (N-D: A.shape[:-1] + [1], B.shape[:-2] + [1, N]). idx_of gives the
 * parameter index of an element. */
typedef struct matrix_param {
    tgc_cpu_qparam q;
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
        out[e] = (double)(int_at(m->dtype, p, e) - tgc_cpu_qparam_int(&zp->q, matrix_param_idx(zp, m, rows, e)));
}

tgc_value tgc_cpu_q8_f32_view(const tgc_value *v) {
    tgc_value f = *v;
    f.dtype = TGC_FLOAT32;
    return f;
}

/* An 8-bit operand as int8 (int8_shift) into out. */
static void to_int8(tgc_dtype t, const uint8_t *p, int64_t n, int8_t *out) {
    uint8_t bits = tgc_cpu_q8_shift(t) != 0 ? 0x80u : 0; /* u - 128: the top bit flipped */
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
    int32_t sa = tgc_cpu_q8_shift(va->dtype), sb = tgc_cpu_q8_shift(vb->dtype);
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
            b_zp[j] = tgc_cpu_qparam_int(&bzp->q, matrix_param_idx(bzp, vb, false, ob + j)) - sb;
        }
        for (int64_t p = 0; p < g->k; p++)
            for (int64_t j = 0; j < g->n; j++) col_sum[j] += b8[ob + p * g->n + j];
        for (int64_t i = 0; i < rows; i++) {
            int64_t za = tgc_cpu_qparam_int(&azp->q, matrix_param_idx(azp, va, true, oa + i * g->k)) - sa;
            int32_t *yi = y + oy + i * g->n;
            for (int64_t j = 0; j < g->n; j++)
                yi[j] =
                    tgc_cpu_wrap_int32((int64_t)yi[j] - b_zp[j] * row_sum[i] - za * col_sum[j] + g->k * za * b_zp[j]);
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
    if (!tgc_cpu_q8_is(va->dtype) || !tgc_cpu_q8_is(vb->dtype))
        return tgc_kernel_fail(c, "inputs A and B must be 8-bit quantized (A %s, B %s)", tgc_dtype_name(va->dtype),
                               tgc_dtype_name(vb->dtype));
    tgc_value views[2] = {tgc_cpu_q8_f32_view(va), tgc_cpu_q8_f32_view(vb)}, out = tgc_cpu_q8_f32_view(&c->outputs[0]);
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
        fits = tgc_cpu_q8_dgemm(g->m, g->n, g->k, wa + oa, wb + ob, g->n, acc, y + oy, g->n);
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
    if (!tgc_cpu_q8_is(vy->dtype) || vy->dtype != c->inputs[7].dtype)
        return tgc_kernel_fail(c, "output y must have y_zero_point's 8-bit type");
    matrix_param as, bs, azp, bzp;
    tgc_cpu_qparam ys, yzp;
    if ((st = read_matrix_param(c, 1, "a_scale", va, true, TGC_FLOAT32, &as)) != TGC_OK ||
        (st = read_matrix_param(c, 4, "b_scale", vb, false, TGC_FLOAT32, &bs)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 6, "y_scale", -1, TGC_FLOAT32, &ys)) != TGC_OK ||
        (st = tgc_cpu_qparam_read(c, 7, "y_zero_point", -1, vy->dtype, &yzp)) != TGC_OK)
        return st;
    tgc_matmul_geometry g;
    int32_t *y;
    if ((st = matmul_integer_body(c, 0, 3, &azp, &bzp, &y, &g)) != TGC_OK) return st;
    int32_t lo, hi;
    tgc_cpu_q8_range(vy->dtype, &lo, &hi);
    float ysf = (float)tgc_cpu_qparam_float(&ys, 0);
    void *py = tgc_kernel_out_ptr(c, 0);
    if (as.q.count <= 1 && bs.q.count <= 1) { /* one multiplier for every element */
        float mult = (float)tgc_cpu_qparam_float(&as.q, 0) * (float)tgc_cpu_qparam_float(&bs.q, 0) / ysf;
        tgc_cpu_q8_requantize(y, tgc_value_numel(vy), 0, mult, tgc_cpu_qparam_int(&yzp, 0), lo, hi,
                              vy->dtype == TGC_INT8, py);
        tgc_free(y);
        return TGC_OK;
    }
    /* Y element (t, i, j) reads scale row i of A's matrix t and column j of B's. */
    for (int64_t t = 0; t < g.batch; t++) {
        int64_t oa, ob, oy;
        tgc_matmul_geometry_offsets(&g, t, &oa, &ob, &oy);
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t j = 0; j < g.n; j++) {
                float sa = (float)tgc_cpu_qparam_float(&as.q, matrix_param_idx(&as, va, true, oa + i * g.k));
                float sb = (float)tgc_cpu_qparam_float(&bs.q, matrix_param_idx(&bs, vb, false, ob + j));
                float mult = sa * sb / ysf;
                q8_store(vy->dtype, py, oy + i * g.n + j,
                         saturate_round((double)y[oy + i * g.n + j] * mult, tgc_cpu_qparam_int(&yzp, 0), lo, hi));
            }
    }
    tgc_free(y);
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
    {.op = NULL},
};
