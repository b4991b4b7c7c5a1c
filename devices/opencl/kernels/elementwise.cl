/* OpenCL kernels of the elementwise ops (host side: kernels_elementwise.c).
 * The rows of graph/elementwise.def, pasted in below once per dtype at
 * build time (scripts/embed_cl.cmake), give, for each row and dtype of its
 * class:
 *     ew_<Op>_<t>      unary: y[i] = EXPR(x[i]), P0..P2 the row's parameters
 *                      (a predicate row: y is bool, uchar 0 or 1)
 *     ew_<Op>_<t>_c    binary, equal shapes: y[i] = EXPR(a[i], b[i]); every
 *                      binary kernel ends with P0..P2 too (EW_BINARY rows
 *                      ignore them)
 *     ew_<Op>_<t>_s    binary, one row with steps 0 or 1 (a scalar side)
 *     ew_<Op>_<t>_b    binary, broadcast: per-operand strides (0 where
 *                      broadcast) over the collapsed output dims, rank <= 8
 * and, written here, ew_where_<size>_{c,b} and ew_cast_<from>_<to>. Each
 * float32 row of float result is also a function ew_row_<Op> (below) that
 * the generated kernels of fused groups call (devices/opencl/kernels_fused_cl.c).
 * Types: f32 float, f16 half (stored; computed as float through vload_half
 * and vstore_half_rte), i32 int, i64 long, u8 uchar, b8 bool as uchar.
 * Integer arithmetic wraps (computed unsigned); comparisons write 0 or 1.
 * The math is OpenCL's built-in functions at full precision (exp, tanh,
 * erf, ...; OpenCL 1.2 bounds them at 3 to 16 ulp), never native_ ones.
 * One work-item per element; the global size may be rounded up past n.
 *
 * In place: the host may hand y input 0's buffer (and, for a same-size Cast,
 * a buffer of another type): each work-item reads its inputs before it
 * writes y[i], and reads no other work-item's y. No pointer is restrict. */

#pragma OPENCL FP_CONTRACT OFF

/* ==== The rows of graph/elementwise.def ======================================= */

float ew_sigmoid(float x) {
    float e = exp(-fabs(x)); /* never overflows */
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|), without overflow. */
float ew_softplus(float x) { return x != x ? x : fmax(x, 0.0f) + log1p(exp(-fabs(x))); }

#define EW_CAT_(a, b) a##b
#define EW_CAT(a, b) EW_CAT_(a, b)

/* The expression language (graph/elementwise.def), per work-item scalars. */
#define SEL(m, t, f) ((m) ? (t) : (f))
#define ISNAN(v) isnan(v)
#define ABS(v) fabs(v)
#define SQRT(v) sqrt(v)
#define EXP(v) exp(v)
#define EXPM1(v) expm1(v)
#define LOG(v) log(v)
#define LOG1P(v) log1p(v)
#define TANH(v) tanh(v)
#define SIGMOID(v) ew_sigmoid(v)
#define ERF(v) erf(v)
#define SOFTPLUS(v) ew_softplus(v)
#define SIN(v) sin(v)
#define COS(v) cos(v)
#define TAN(v) tan(v)
#define ASIN(v) asin(v)
#define ACOS(v) acos(v)
#define ATAN(v) atan(v)
#define SINH(v) sinh(v)
#define COSH(v) cosh(v)
#define ASINH(v) asinh(v)
#define ACOSH(v) acosh(v)
#define ATANH(v) atanh(v)
#define POW(a, b) pow((a), (b))
#define FLOOR(v) floor(v)
#define CEIL(v) ceil(v)
#define ROUND(v) rint(v) /* the default rounding: halves to even */
#define FMOD(a, b) fmod((a), (b))
/* IREM, IMOD: 0 for a zero divisor, and x % -1 is 0 (INT_MIN % -1 is
 * undefined); IMOD moves a remainder of the other sign than b by b. */
#define IREM(a, b) ((b) == 0 || ((EW_T)-1 < 0 && (b) == -1) ? 0 : (a) % (b))
#define IMOD(a, b) EW_CAT(ew_imod_, EW_DT)((a), (b))
int ew_imod_i32(int a, int b) {
    int r = b == 0 || b == -1 ? 0 : a % b;
    return r != 0 && (r ^ b) < 0 ? r + b : r;
}
long ew_imod_i64(long a, long b) {
    long r = b == 0 || b == -1 ? 0 : a % b;
    return r != 0 && (r ^ b) < 0 ? r + b : r;
}
/* Unsigned shifts: 0 from the type's width on. */
#define SHL(a, b) ((b) < 8 * sizeof(EW_T) ? (EW_T)((a) << (b)) : (EW_T)0)
#define SHR(a, b) ((b) < 8 * sizeof(EW_T) ? (EW_T)((a) >> (b)) : (EW_T)0)

/* ==== The float32 rows as functions ========================================== */

/* ew_row_<Op>(x, P0, P1, P2) for a unary row and ew_row_<Op>(a, b, P0, P1,
 * P2) for a binary row of float result: the row's float expression, the
 * same text the ew_<Op>_f32 kernels below compute, for kernels that chain
 * rows; ew_row8_<Op> the same expression over float8 lanes (SEL a
 * per-lane select, the built-in functions their vector forms). The
 * fused-group kernels (devices/opencl/kernels_fused_cl.c) compile this
 * file's text up to the end mark below, then their generated kernel. */
float8 ew_sigmoid8(float8 x) {
    float8 e = exp(-fabs(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
float8 ew_softplus8(float8 x) { return x != x ? x : fmax(x, 0.0f) + log1p(exp(-fabs(x))); }

#define EW_ROW_FN_U(op, fexpr)                                                                   \
    float ew_row_##op(float x, float P0, float P1, float P2) { return (fexpr); }
#define EW_ROW_FN_B(op, fexpr)                                                                   \
    float ew_row_##op(float a, float b, float P0, float P1, float P2) { return (fexpr); }
#define EW_ROW_FN_B_SAME(op, fexpr) EW_ROW_FN_B(op, fexpr)
#define EW_ROW_FN_B_BOOL(op, fexpr)
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) EW_HAS_##cls##_f32(EW_ROW_FN_U(op, fexpr))
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr)
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) EW_HAS_##cls##_f32(EW_ROW_FN_B_##out(op, fexpr))
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) EW_BINARY(op, cls, out, infer, fexpr, iexpr)
#include "graph/elementwise.def"
#undef EW_ROW_FN_U
#undef EW_ROW_FN_B
#define EW_ROW_FN_U(op, fexpr)                                                                   \
    float8 ew_row8_##op(float8 x, float P0, float P1, float P2) { return (fexpr); }
#define EW_ROW_FN_B(op, fexpr)                                                                   \
    float8 ew_row8_##op(float8 a, float8 b, float P0, float P1, float P2) { return (fexpr); }
#undef SIGMOID
#undef SOFTPLUS
#define SIGMOID(v) ew_sigmoid8(v)
#define SOFTPLUS(v) ew_softplus8(v)
#include "graph/elementwise.def"
#undef SIGMOID
#undef SOFTPLUS
#define SIGMOID(v) ew_sigmoid(v)
#define SOFTPLUS(v) ew_softplus(v)
#undef EW_ROW_FN_U
#undef EW_ROW_FN_B
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
/* ==== end of the row functions (tgc fused prelude) ==== */

/* ==== The kernels of each row ============================================== */

/* Element offsets of output element i in up to three operands, from the
 * collapsed dims and each operand's strides. */
void ew_offsets(long i, int rank, long8 dims, long8 s0, long8 s1, long8 s2, long *o0, long *o1, long *o2) {
    long d[8], a[8], b[8], c[8];
    vstore8(dims, 0, d);
    vstore8(s0, 0, a);
    vstore8(s1, 0, b);
    vstore8(s2, 0, c);
    long rem = i, x = 0, y = 0, z = 0;
    for (int k = rank - 1; k >= 0; k--) {
        long q = rem / d[k], j = rem - q * d[k];
        x += j * a[k];
        y += j * b[k];
        z += j * c[k];
        rem = q;
    }
    *o0 = x;
    *o1 = y;
    *o2 = z;
}

/* Kernels of one row for the dtype defined below (EW_DT, EW_T storage type,
 * EW_C computing type, EW_LD/EW_ST element access, EW_EXPR picking the
 * float or integer expression). */
#define EW_NAME(op, suffix) EW_CAT(EW_CAT(ew_##op##_, EW_DT), suffix)
#define EW_ST_SAME(y, i, v) EW_ST(y, i, v)
#define EW_ST_BOOL(y, i, v) ((y)[i] = (uchar)((v) ? 1 : 0))
#define EW_YT_SAME EW_T
#define EW_YT_BOOL uchar

#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) EW_CAT(EW_HAS_##cls##_, EW_DT)(EW_UNARY_K(op, fexpr, iexpr))
#define EW_UNARY_K(op, fexpr, iexpr)                                                             \
    __kernel void EW_NAME(op, )(__global const EW_T *X, __global EW_T *Y, long n, EW_C P0, EW_C P1, EW_C P2) { \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        EW_C x = EW_LD(X, i);                                                                    \
        EW_ST(Y, i, (EW_EXPR(fexpr, iexpr)));                                                    \
    }

#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr)                                        \
    EW_CAT(EW_HAS_##cls##_, EW_DT)(EW_PREDICATE_K(op, fexpr, iexpr))
#define EW_PREDICATE_K(op, fexpr, iexpr)                                                         \
    __kernel void EW_NAME(op, )(__global const EW_T *X, __global uchar *Y, long n, EW_C P0, EW_C P1, EW_C P2) { \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        EW_C x = EW_LD(X, i);                                                                    \
        EW_ST_BOOL(Y, i, (EW_EXPR(fexpr, iexpr)));                                               \
    }

#define EW_BINARY(op, cls, out, infer, fexpr, iexpr)                                             \
    EW_CAT(EW_HAS_##cls##_, EW_DT)(EW_BINARY_K(op, EW_EXPR(fexpr, iexpr), EW_ST_##out, EW_YT_##out))
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) EW_BINARY(op, cls, out, infer, fexpr, iexpr)
#define EW_BINARY_K(op, expr, STORE, YT)                                                         \
    __kernel void EW_NAME(op, _c)(__global const EW_T *A, __global const EW_T *B, __global YT *Y, long n, \
                                  EW_C P0, EW_C P1, EW_C P2) {                                   \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        EW_C a = EW_LD(A, i), b = EW_LD(B, i);                                                   \
        STORE(Y, i, (expr));                                                                     \
    }                                                                                            \
    __kernel void EW_NAME(op, _s)(__global const EW_T *A, long sa, __global const EW_T *B, long sb, \
                                  __global YT *Y, long n, EW_C P0, EW_C P1, EW_C P2) {           \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        EW_C a = EW_LD(A, i * sa), b = EW_LD(B, i * sb);                                         \
        STORE(Y, i, (expr));                                                                     \
    }                                                                                            \
    __kernel void EW_NAME(op, _b)(__global const EW_T *A, __global const EW_T *B, __global YT *Y, long n, \
                                  int rank, long8 dims, long8 sa, long8 sb, EW_C P0, EW_C P1, EW_C P2) { \
        long i = get_global_id(0), oa, ob, unused;                                               \
        if (i >= n) return;                                                                      \
        ew_offsets(i, rank, dims, sa, sb, sb, &oa, &ob, &unused);                                \
        EW_C a = EW_LD(A, oa), b = EW_LD(B, ob);                                                 \
        STORE(Y, i, (expr));                                                                     \
    }

/* ---- float32 and float16 ---- */
#define EW_EXPR(fexpr, iexpr) fexpr
#define EW_C float
#define EW_DT f32
#define EW_T float
#define EW_LD(p, i) ((p)[i])
#define EW_ST(p, i, v) ((p)[i] = (v))
#include "graph/elementwise.def"
#undef EW_DT
#undef EW_T
#undef EW_LD
#undef EW_ST
#define EW_DT f16
#define EW_T half
#define EW_LD(p, i) vload_half((i), (p))
#define EW_ST(p, i, v) vstore_half_rte((v), (i), (p))
#include "graph/elementwise.def"
#undef EW_DT
#undef EW_T
#undef EW_LD
#undef EW_ST
#undef EW_C
#undef EW_EXPR

/* ---- Integers and bool: arithmetic through the unsigned type (wraps) ---- */
#define EW_EXPR(fexpr, iexpr) iexpr
#define EW_LD(p, i) ((p)[i])
#define EW_ST(p, i, v) ((p)[i] = (v))
#define EW_DT i32
#define EW_T int
#define EW_C int
#define INEG(v) as_int(0u - as_uint(v))
#define IADD(a, b) as_int(as_uint(a) + as_uint(b))
#define ISUB(a, b) as_int(as_uint(a) - as_uint(b))
#define IMUL(a, b) as_int(as_uint(a) * as_uint(b))
#define IDIV(a, b) ((b) == -1 ? INEG(a) : (a) / (b))
#include "graph/elementwise.def"
#undef EW_DT
#undef EW_T
#undef EW_C
#undef INEG
#undef IADD
#undef ISUB
#undef IMUL
#undef IDIV
#define EW_DT i64
#define EW_T long
#define EW_C long
#define INEG(v) as_long((ulong)0 - as_ulong(v))
#define IADD(a, b) as_long(as_ulong(a) + as_ulong(b))
#define ISUB(a, b) as_long(as_ulong(a) - as_ulong(b))
#define IMUL(a, b) as_long(as_ulong(a) * as_ulong(b))
#define IDIV(a, b) ((b) == -1 ? INEG(a) : (a) / (b))
#include "graph/elementwise.def"
#undef EW_DT
#undef EW_T
#undef EW_C
#undef INEG
#undef IADD
#undef ISUB
#undef IMUL
#undef IDIV
#define EW_DT b8
#define EW_T uchar
#define EW_C uchar
#include "graph/elementwise.def"
#undef EW_DT
#undef EW_T
#undef EW_C
#undef EW_EXPR
#undef EW_LD
#undef EW_ST

/* ==== Pow with an integer exponent ============================================== */

/* Pow-15, a float32 base and an int32 or int64 exponent: the exponent is
 * converted to float (exact below 2^24), as pow takes it. The float-float
 * pair is the Pow row's. */
#define POW_INT_EXP(s, TB)                                                                       \
    __kernel void ew_pow_f32_##s##_c(__global const float *a, __global const TB *b, __global float *y, long n) { \
        long i = get_global_id(0);                                                               \
        if (i < n) y[i] = pow(a[i], (float)b[i]);                                                \
    }                                                                                            \
    __kernel void ew_pow_f32_##s##_s(__global const float *a, long sa, __global const TB *b, long sb, \
                                     __global float *y, long n) {                                \
        long i = get_global_id(0);                                                               \
        if (i < n) y[i] = pow(a[i * sa], (float)b[i * sb]);                                      \
    }                                                                                            \
    __kernel void ew_pow_f32_##s##_b(__global const float *a, __global const TB *b, __global float *y, long n, \
                                     int rank, long8 dims, long8 sa, long8 sb) {                 \
        long i = get_global_id(0), oa, ob, unused;                                               \
        if (i >= n) return;                                                                      \
        ew_offsets(i, rank, dims, sa, sb, sb, &oa, &ob, &unused);                                \
        y[i] = pow(a[oa], (float)b[ob]);                                                         \
    }
POW_INT_EXP(i32, int)
POW_INT_EXP(i64, long)

/* A float16 base with an int32 or int64 exponent: computed in float,
 * rounded once to float16 (nearest even). */
#define POW_F16_INT_EXP(s, TB)                                                                   \
    __kernel void ew_pow_f16_##s##_c(__global const half *a, __global const TB *b, __global half *y, long n) { \
        long i = get_global_id(0);                                                               \
        if (i < n) vstore_half_rte(pow(vload_half(i, a), (float)b[i]), i, y);                    \
    }                                                                                            \
    __kernel void ew_pow_f16_##s##_s(__global const half *a, long sa, __global const TB *b, long sb, \
                                     __global half *y, long n) {                                 \
        long i = get_global_id(0);                                                               \
        if (i < n) vstore_half_rte(pow(vload_half(i * sa, a), (float)b[i * sb]), i, y);          \
    }                                                                                            \
    __kernel void ew_pow_f16_##s##_b(__global const half *a, __global const TB *b, __global half *y, long n, \
                                     int rank, long8 dims, long8 sa, long8 sb) {                 \
        long i = get_global_id(0), oa, ob, unused;                                               \
        if (i >= n) return;                                                                      \
        ew_offsets(i, rank, dims, sa, sb, sb, &oa, &ob, &unused);                                \
        vstore_half_rte(pow(vload_half(oa, a), (float)b[ob]), i, y);                             \
    }
POW_F16_INT_EXP(i32, int)
POW_F16_INT_EXP(i64, long)

/* ==== Where ================================================================= */

/* Where-16: y = cond ? x : z, moving elements by size. */
#define WHERE(s, T)                                                                              \
    __kernel void ew_where_##s##_c(__global const uchar *cond, __global const T *x, __global const T *z, \
                                   __global T *y, long n) {                                      \
        long i = get_global_id(0);                                                               \
        if (i < n) y[i] = cond[i] ? x[i] : z[i];                                                 \
    }                                                                                            \
    __kernel void ew_where_##s##_b(__global const uchar *cond, __global const T *x, __global const T *z, \
                                   __global T *y, long n, int rank, long8 dims, long8 sc, long8 sx, long8 sz) { \
        long i = get_global_id(0), oc, ox, oz;                                                   \
        if (i >= n) return;                                                                      \
        ew_offsets(i, rank, dims, sc, sx, sz, &oc, &ox, &oz);                                    \
        y[i] = cond[oc] ? x[ox] : z[oz];                                                         \
    }

WHERE(u8, uchar)
WHERE(u16, ushort)
WHERE(u32, uint)
WHERE(u64, ulong)

/* ==== Cast ================================================================== */

/* A source element is read as a float (F: float32, float16), an integer (I:
 * int32, int64, uint8, widened to long) or a bool (B), then stored as the
 * cpu kernel stores it: float -> integer truncates toward zero, saturating,
 * NaN to 0 (uint8: through int64, then modulo 256); integer -> narrower
 * integer modulo 2^bits; anything -> bool is x != 0; -> float16 rounds to
 * nearest even (through float32 from an integer). OpenCL's saturating
 * conversions take NaN to 0, but NVIDIA's driver 580 makes it INT64_MIN
 * for long (seen on an H200): NaN is tested first. */
#define LD_F32(x, i) ((x)[i])
#define LD_F16(x, i) vload_half((i), (x))
#define LD_INT(x, i) ((long)(x)[i])
#define LD_BOOL(x, i) ((x)[i] != 0)

#define ST_F32_F(y, i, v) (y)[i] = (v)
#define ST_F32_I(y, i, v) (y)[i] = convert_float(v)
#define ST_F32_B(y, i, v) (y)[i] = (v) ? 1.0f : 0.0f
#define ST_F16_F(y, i, v) vstore_half_rte((v), (i), (y))
#define ST_F16_I(y, i, v) vstore_half_rte(convert_float(v), (i), (y))
#define ST_F16_B(y, i, v) vstore_half_rte((v) ? 1.0f : 0.0f, (i), (y))
#define ST_I32_F(y, i, v) (y)[i] = isnan(v) ? 0 : convert_int_sat_rtz(v)
#define ST_I32_I(y, i, v) (y)[i] = as_int((uint)(v))
#define ST_I32_B(y, i, v) (y)[i] = (int)(v)
#define ST_I64_F(y, i, v) (y)[i] = isnan(v) ? 0 : convert_long_sat_rtz(v)
#define ST_I64_I(y, i, v) (y)[i] = (v)
#define ST_I64_B(y, i, v) (y)[i] = (long)(v)
#define ST_U8_F(y, i, v) (y)[i] = isnan(v) ? 0 : (uchar)convert_long_sat_rtz(v)
#define ST_U8_I(y, i, v) (y)[i] = (uchar)(v)
#define ST_U8_B(y, i, v) (y)[i] = (uchar)(v)
#define ST_B8_F(y, i, v) (y)[i] = (uchar)((v) != 0)
#define ST_B8_I(y, i, v) (y)[i] = (uchar)((v) != 0)
#define ST_B8_B(y, i, v) (y)[i] = (uchar)(v)

#define CAST(s, d, S, D, LOAD, STORE)                                                            \
    __kernel void ew_cast_##s##_##d(__global const S *x, __global D *y, long n) {                \
        long i = get_global_id(0);                                                               \
        if (i < n) STORE(y, i, LOAD(x, i));                                                      \
    }

/* One source type to every other; K is the source's kind (F, I or B). */
#define CASTS_FROM(s, S, LOAD, K)                                                                \
    CAST(s, f32, S, float, LOAD, ST_F32_##K)                                                     \
    CAST(s, f16, S, half, LOAD, ST_F16_##K)                                                      \
    CAST(s, i32, S, int, LOAD, ST_I32_##K)                                                       \
    CAST(s, i64, S, long, LOAD, ST_I64_##K)                                                      \
    CAST(s, u8, S, uchar, LOAD, ST_U8_##K)                                                       \
    CAST(s, b8, S, uchar, LOAD, ST_B8_##K)

CASTS_FROM(f32, float, LD_F32, F)
CASTS_FROM(f16, half, LD_F16, F)
CASTS_FROM(i32, int, LD_INT, I)
CASTS_FROM(i64, long, LD_INT, I)
CASTS_FROM(u8, uchar, LD_INT, I)
CASTS_FROM(b8, uchar, LD_BOOL, B)
