/* OpenCL kernels of the elementwise ops (host side: kernels_elementwise.c),
 * with the cpu kernels' semantics (devices/cpu/kernels_elementwise.c):
 *     ew_<op>_<t>_c   binary, equal shapes: y[i] = op(a[i], b[i])
 *     ew_<op>_<t>_s   binary, one row with steps 0 or 1 (a scalar side)
 *     ew_<op>_<t>_b   binary, broadcast: per-operand strides (0 where
 *                     broadcast) over the collapsed output dims, rank <= 8
 *     ew_<op>_<t>     unary (LeakyRelu's alpha as p), Clip
 *     ew_where_<size>_{c,b}, ew_cast_<from>_<to>
 * Types: f32 float, f16 half (storage only), i32 int, i64 long, u8 uchar,
 * b8 bool as uchar. Integer arithmetic wraps (computed unsigned); Min, Max
 * propagate NaN; comparisons write 0 or 1. One work-item per element; the
 * global size may be rounded up past n.
 *
 * In place: the host may hand y input 0's buffer (and, for a same-size Cast,
 * a buffer of another type): each work-item reads its inputs before it
 * writes y[i], and reads no other work-item's y. No pointer is restrict. */

#pragma OPENCL FP_CONTRACT OFF

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

/* ==== Binary ops ============================================================ */

#define ADD_F(a, b) ((a) + (b))
#define SUB_F(a, b) ((a) - (b))
#define MUL_F(a, b) ((a) * (b))
#define DIV_F(a, b) ((a) / (b))
#define ADD_I32(a, b) as_int(as_uint(a) + as_uint(b))
#define SUB_I32(a, b) as_int(as_uint(a) - as_uint(b))
#define MUL_I32(a, b) as_int(as_uint(a) * as_uint(b))
#define ADD_I64(a, b) as_long(as_ulong(a) + as_ulong(b))
#define SUB_I64(a, b) as_long(as_ulong(a) - as_ulong(b))
#define MUL_I64(a, b) as_long(as_ulong(a) * as_ulong(b))
#define MIN_F(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define MAX_F(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define MIN_I(a, b) ((b) < (a) ? (b) : (a))
#define MAX_I(a, b) ((b) > (a) ? (b) : (a))
#define EQ(a, b) ((uchar)((a) == (b)))
#define EQ_B(a, b) ((uchar)(((a) != 0) == ((b) != 0)))
#define LT(a, b) ((uchar)((a) < (b)))
#define GT(a, b) ((uchar)((a) > (b)))
/* Pow-15 with a float32 base: an integer exponent is converted to float
 * (exact below 2^24), as pow takes it. */
#define POW_F(a, b) pow((a), (float)(b))

#define BINARY(name, TA, TB, TY, OP)                                                             \
    __kernel void ew_##name##_c(__global const TA *a, __global const TB *b, __global TY *y, long n) { \
        long i = get_global_id(0);                                                               \
        if (i < n) y[i] = OP(a[i], b[i]);                                                        \
    }                                                                                            \
    __kernel void ew_##name##_s(__global const TA *a, long sa, __global const TB *b, long sb, __global TY *y, \
                                long n) {                                                        \
        long i = get_global_id(0);                                                               \
        if (i < n) y[i] = OP(a[i * sa], b[i * sb]);                                              \
    }                                                                                            \
    __kernel void ew_##name##_b(__global const TA *a, __global const TB *b, __global TY *y, long n, int rank, \
                                long8 dims, long8 sa, long8 sb) {                                \
        long i = get_global_id(0), oa, ob, unused;                                               \
        if (i >= n) return;                                                                      \
        ew_offsets(i, rank, dims, sa, sb, sb, &oa, &ob, &unused);                                \
        y[i] = OP(a[oa], b[ob]);                                                                 \
    }

BINARY(add_f32, float, float, float, ADD_F)
BINARY(sub_f32, float, float, float, SUB_F)
BINARY(mul_f32, float, float, float, MUL_F)
BINARY(div_f32, float, float, float, DIV_F)
BINARY(add_i32, int, int, int, ADD_I32)
BINARY(sub_i32, int, int, int, SUB_I32)
BINARY(mul_i32, int, int, int, MUL_I32)
BINARY(add_i64, long, long, long, ADD_I64)
BINARY(sub_i64, long, long, long, SUB_I64)
BINARY(mul_i64, long, long, long, MUL_I64)
BINARY(pow_f32_f32, float, float, float, POW_F)
BINARY(pow_f32_i32, float, int, float, POW_F)
BINARY(pow_f32_i64, float, long, float, POW_F)
BINARY(min_f32, float, float, float, MIN_F)
BINARY(max_f32, float, float, float, MAX_F)
BINARY(min_i32, int, int, int, MIN_I)
BINARY(max_i32, int, int, int, MAX_I)
BINARY(min_i64, long, long, long, MIN_I)
BINARY(max_i64, long, long, long, MAX_I)
BINARY(eq_f32, float, float, uchar, EQ)
BINARY(eq_i32, int, int, uchar, EQ)
BINARY(eq_i64, long, long, uchar, EQ)
BINARY(eq_b8, uchar, uchar, uchar, EQ_B)
BINARY(lt_f32, float, float, uchar, LT)
BINARY(lt_i32, int, int, uchar, LT)
BINARY(lt_i64, long, long, uchar, LT)
BINARY(gt_f32, float, float, uchar, GT)
BINARY(gt_i32, int, int, uchar, GT)
BINARY(gt_i64, long, long, uchar, GT)

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

/* ==== Unary ops ============================================================= */

/* Sigmoid without overflow: exp of a non-positive number only. */
float ew_sigmoid(float x) {
    if (x >= 0) return 1.0f / (1.0f + exp(-x));
    float e = exp(x);
    return e / (1.0f + e);
}

#define U_NEG_F(x, p) (-(x))
#define U_NEG_I32(x, p) as_int(0u - as_uint(x))
#define U_NEG_I64(x, p) as_long((ulong)0 - as_ulong(x))
#define U_ABS_F(x, p) fabs(x)
#define U_ABS_I32(x, p) ((x) < 0 ? U_NEG_I32(x, p) : (x))
#define U_ABS_I64(x, p) ((x) < 0 ? U_NEG_I64(x, p) : (x))
#define U_RELU(x, p) ((x) < 0 ? 0 : (x))
#define U_LEAKY(x, p) ((x) < 0 ? (p) * (x) : (x))
#define U_SIGMOID(x, p) ew_sigmoid(x)
#define U_TANH(x, p) tanh(x)
#define U_EXP(x, p) exp(x)
#define U_LOG(x, p) log(x)
#define U_SQRT(x, p) sqrt(x)
#define U_ERF(x, p) erf(x)

#define UNARY(name, T, OP)                                                                       \
    __kernel void ew_##name(__global const T *x, __global T *y, long n, float p) {               \
        long i = get_global_id(0);                                                               \
        if (i < n) y[i] = OP(x[i], p);                                                           \
    }

UNARY(neg_f32, float, U_NEG_F)
UNARY(neg_i32, int, U_NEG_I32)
UNARY(neg_i64, long, U_NEG_I64)
UNARY(abs_f32, float, U_ABS_F)
UNARY(abs_i32, int, U_ABS_I32)
UNARY(abs_i64, long, U_ABS_I64)
UNARY(relu_f32, float, U_RELU)
UNARY(relu_i32, int, U_RELU)
UNARY(relu_i64, long, U_RELU)
UNARY(leakyrelu_f32, float, U_LEAKY)
UNARY(sigmoid_f32, float, U_SIGMOID)
UNARY(tanh_f32, float, U_TANH)
UNARY(exp_f32, float, U_EXP)
UNARY(log_f32, float, U_LOG)
UNARY(sqrt_f32, float, U_SQRT)
UNARY(erf_f32, float, U_ERF)

/* Clip-13: min(max(x, lo), hi), NaN passing through. */
#define CLIP(s, T)                                                                               \
    __kernel void ew_clip_##s(__global const T *x, __global T *y, long n, T lo, T hi) {          \
        long i = get_global_id(0);                                                               \
        if (i >= n) return;                                                                      \
        T v = x[i];                                                                              \
        v = v < lo ? lo : v;                                                                     \
        y[i] = v > hi ? hi : v;                                                                  \
    }

CLIP(f32, float)
CLIP(i32, int)
CLIP(i64, long)

/* ==== Cast ================================================================== */

/* A source element is read as a float (F: float32, float16), an integer (I:
 * int32, int64, uint8, widened to long) or a bool (B), then stored as the
 * cpu kernel stores it: float -> integer truncates toward zero, saturating,
 * NaN to 0 (uint8: through int64, then modulo 256); integer -> narrower
 * integer modulo 2^bits; anything -> bool is x != 0; -> float16 rounds to
 * nearest even (through float32 from an integer). */
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
#define ST_I32_F(y, i, v) (y)[i] = convert_int_sat_rtz(v)
#define ST_I32_I(y, i, v) (y)[i] = as_int((uint)(v))
#define ST_I32_B(y, i, v) (y)[i] = (int)(v)
#define ST_I64_F(y, i, v) (y)[i] = convert_long_sat_rtz(v)
#define ST_I64_I(y, i, v) (y)[i] = (v)
#define ST_I64_B(y, i, v) (y)[i] = (long)(v)
#define ST_U8_F(y, i, v) (y)[i] = (uchar)convert_long_sat_rtz(v)
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
