/* One dtype's elementwise loops, for devices/cpu/ew_loops.h: included once
 * per dtype with EW_DT set to its suffix (f32 f16 i32 i64 u8 b8 f64 i8 i16
 * u16 u32 u64 bf16). Defines
 * the types and the expression language of graph/elementwise.def for that
 * dtype, expands the rows whose class has it into loops, and undefines it
 * all again. No include guard: it is meant to be included repeatedly. */

#define EW_ID_f32 1
#define EW_ID_f16 2
#define EW_ID_i32 3
#define EW_ID_i64 4
#define EW_ID_u8 5
#define EW_ID_b8 6
#define EW_ID_f64 7
#define EW_ID_i8 8
#define EW_ID_i16 9
#define EW_ID_u16 10
#define EW_ID_u32 11
#define EW_ID_u64 12
#define EW_ID_bf16 13
#define EW_DT_ID EW_CAT(EW_ID_, EW_DT)
/* The float dtypes: their rows take FLOAT_EXPR. */
#define EW_DT_FLOAT (EW_DT_ID == 1 || EW_DT_ID == 2 || EW_DT_ID == 7 || EW_DT_ID == 13)

#if EW_DT_ID == 1 || EW_DT_ID == 2 || EW_DT_ID == 13
/* ---- float32, and float16 and bfloat16 computed in float32 --------------------- */
#define EW_V tgc_vf
#define EW_N TGC_VLANES
#define EW_PARAM(p, k) tgc_vf_splat((p) != NULL ? (p)->f[k] : 0.0f)
/* Broadcasts a float or passes a vector: -0 + v is v for every v. */
#define EW_AS_V(v) (-(tgc_vf){0} + (v))
#define SEL(m, t, f) tgc_vsel((m), EW_AS_V(t), EW_AS_V(f))
#define ISNAN(v) ((v) != (v))
#include "devices/cpu/ew_funcs_f32.h"
#if EW_DT_ID == 1
#define EW_T float
#define EW_LOAD(p) tgc_vf_load(p)
#define EW_LOAD_SPLAT(p) tgc_vf_splat(*(p))
static inline tgc_vf ew_load_part_f32(const float *p, int64_t k) {
    tgc_vf v = tgc_vf_splat(1.0f);
    memcpy(&v, p, (size_t)k * sizeof *p);
    return v;
}
#define EW_LOAD_N(p, k) ew_load_part_f32((p), (k))
#define EW_STORE(q, v) tgc_vf_store((q), (v))
#elif EW_DT_ID == 13
/* bfloat16: the upper half of a float32's bits; stores round to nearest
 * even (support/half.h's tgc_float_to_bf16, lane by lane). */
#define EW_T uint16_t
typedef uint16_t ew_vbf_bits __attribute__((vector_size(TGC_VBYTES / 2)));
static inline tgc_vf ew_load_bf16(const uint16_t *p) {
    ew_vbf_bits h;
    memcpy(&h, p, sizeof h);
    tgc_vu u = __builtin_convertvector(h, tgc_vu) << 16;
    return (tgc_vf)u;
}
static inline tgc_vf ew_load_part_bf16(const uint16_t *p, int64_t k) {
    uint16_t t[TGC_VLANES];
    for (int i = 0; i < TGC_VLANES; i++) t[i] = 0x3F80; /* 1.0 */
    memcpy(t, p, (size_t)k * sizeof *p);
    return ew_load_bf16(t);
}
static inline void ew_store_bf16(uint16_t *q, tgc_vf v) {
    tgc_vu u = (tgc_vu)v;
    tgc_vu nan = (u & 0x7fffffffu) > 0x7f800000u;
    tgc_vu r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    r = (nan & ((u >> 16) | 0x40u)) | (~nan & r);
    ew_vbf_bits h = __builtin_convertvector(r, ew_vbf_bits);
    memcpy(q, &h, sizeof h);
}
#define EW_LOAD(p) ew_load_bf16(p)
#define EW_LOAD_SPLAT(p) tgc_vf_splat(tgc_bf16_to_float(*(p)))
#define EW_LOAD_N(p, k) ew_load_part_bf16((p), (k))
#define EW_STORE(q, v) ew_store_bf16((q), (v))
#else
#define EW_T uint16_t
#define EW_LOAD(p) tgc_vf_load_half(p)
#define EW_LOAD_SPLAT(p) tgc_vf_splat(tgc_half_to_float(*(p)))
static inline tgc_vf ew_load_part_f16(const uint16_t *p, int64_t k) {
    uint16_t t[TGC_VLANES];
    for (int i = 0; i < TGC_VLANES; i++) t[i] = 0x3C00; /* 1.0 */
    memcpy(t, p, (size_t)k * sizeof *p);
    return tgc_vf_load_half(t);
}
#define EW_LOAD_N(p, k) ew_load_part_f16((p), (k))
#define EW_STORE(q, v) tgc_vf_store_half((q), (v))
#endif

#elif EW_DT_ID == 7
/* ---- float64: vector arithmetic, functions lane by lane through libm ---------- */
#define EW_T double
#define EW_V ew_vf64
#define EW_N ((int)(TGC_VBYTES / sizeof(double)))
#define EW_PARAM(p, k) ((EW_V){0} + ((p) != NULL ? (p)->d[k] : 0.0))
#define EW_AS_V(v) (-(EW_V){0} + (v))
#define SEL(m, t, f) ((EW_V)(((ew_vi64)(m) & (ew_vi64)EW_AS_V(t)) | (~(ew_vi64)(m) & (ew_vi64)EW_AS_V(f))))
#define ISNAN(v) ((v) != (v))
#define ABS(v) ew_vd_map((v), fabs)
#define SQRT(v) ew_vd_map((v), sqrt)
#define EXP(v) ew_vd_map((v), exp)
#define EXPM1(v) ew_vd_map((v), expm1)
#define LOG(v) ew_vd_map((v), log)
#define LOG1P(v) ew_vd_map((v), log1p)
#define TANH(v) ew_vd_map((v), tanh)
#define SIGMOID(v) ew_vd_map((v), ew_sigmoid_f64)
#define ERF(v) ew_vd_map((v), erf)
#define SOFTPLUS(v) ew_vd_map((v), ew_softplus_f64)
#define SIN(v) ew_vd_map((v), sin)
#define COS(v) ew_vd_map((v), cos)
#define TAN(v) ew_vd_map((v), tan)
#define ASIN(v) ew_vd_map((v), asin)
#define ACOS(v) ew_vd_map((v), acos)
#define ATAN(v) ew_vd_map((v), atan)
#define SINH(v) ew_vd_map((v), sinh)
#define COSH(v) ew_vd_map((v), cosh)
#define ASINH(v) ew_vd_map((v), asinh)
#define ACOSH(v) ew_vd_map((v), acosh)
#define ATANH(v) ew_vd_map((v), atanh)
#define POW(a, b) ew_vd_pow((a), (b))
#define FLOOR(v) ew_vd_map((v), floor)
#define CEIL(v) ew_vd_map((v), ceil)
#define ROUND(v) ew_vd_map((v), nearbyint) /* halves to even: the default rounding mode */
#define FMOD(a, b) ew_vd_fmod((a), (b))
#define EW_LOAD(p) ew_load_f64(p)
#define EW_LOAD_N(p, k) ew_load_part_f64((p), (k))
#define EW_LOAD_SPLAT(p) ((EW_V){0} + *(p))
static inline ew_vf64 ew_load_f64(const double *p) {
    ew_vf64 v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline ew_vf64 ew_load_part_f64(const double *p, int64_t k) {
    ew_vf64 v = (ew_vf64){0} + 1.0;
    memcpy(&v, p, (size_t)k * sizeof *p);
    return v;
}
#define EW_STORE(q, v)                                                                           \
    do {                                                                                         \
        ew_vf64 v_ = (v);                                                                        \
        memcpy((q), &v_, sizeof v_);                                                             \
    } while (0)

#else
/* ---- Integers and bool: wrapping arithmetic (the TU has -fwrapv) ---------------- */
#if EW_DT_ID == 3
#define EW_T int32_t
#define EW_V tgc_vi
#elif EW_DT_ID == 4
#define EW_T int64_t
#define EW_V ew_vi64
#elif EW_DT_ID == 8
#define EW_T int8_t
#define EW_V ew_vi8
#elif EW_DT_ID == 9
#define EW_T int16_t
#define EW_V ew_vi16
#elif EW_DT_ID == 10
#define EW_T uint16_t
#define EW_V ew_vu16
#elif EW_DT_ID == 11
#define EW_T uint32_t
#define EW_V tgc_vu
#elif EW_DT_ID == 12
#define EW_T uint64_t
#define EW_V ew_vu64
#else
#define EW_T uint8_t
#define EW_V ew_vu8
#endif
#define EW_N ((int)(TGC_VBYTES / sizeof(EW_T)))
#define EW_PARAM(p, k) ((EW_V){0} + (EW_T)((p) != NULL ? (p)->i[k] : 0))
#define EW_AS_V(v) ((EW_V){0} + (v))
/* A comparison's mask has the lanes' width; cast, it is all ones or zero. */
#define SEL(m, t, f) (((EW_V)(m) & EW_AS_V(t)) | (~(EW_V)(m) & EW_AS_V(f)))
#define INEG(v) (-(v))
#define IADD(a, b) ((a) + (b))
#define ISUB(a, b) ((a) - (b))
#define IMUL(a, b) ((a) * (b))
#if EW_DT_ID == 3 || EW_DT_ID == 4 || EW_DT_ID == 8 || EW_DT_ID == 9
/* x86 traps on INT_MIN / -1: divide by 1 there and negate instead. */
#define IDIV(a, b) SEL((b) == -1, -(a), (a) / SEL((b) == -1, 1, (b)))
#else
/* Unsigned: the vector types are unsigned, so / and the comparisons are. */
#define IDIV(a, b) ((a) / (b))
#endif
/* IREM, IMOD (graph/elementwise.def): the divisor is replaced by 1 where
 * it is 0 (and -1, signed: INT_MIN % -1 traps on x86; x % -1 is 0) before
 * the division, and the result by 0 where it was 0. */
#if EW_DT_ID == 3 || EW_DT_ID == 4 || EW_DT_ID == 8 || EW_DT_ID == 9
static inline EW_V EW_CAT(ew_irem_, EW_DT)(EW_V a, EW_V b) {
    return SEL(b == 0, 0, a % SEL((b == 0) | (b == -1), 1, b));
}
/* Python's: a nonzero remainder of the other sign than b moves by b. */
static inline EW_V EW_CAT(ew_imod_, EW_DT)(EW_V a, EW_V b) {
    EW_V r = EW_CAT(ew_irem_, EW_DT)(a, b);
    return SEL((r != 0) & ((r ^ b) < 0), r + b, r);
}
#define IMOD(a, b) EW_CAT(ew_imod_, EW_DT)((a), (b))
#elif EW_DT_ID == 5 || EW_DT_ID == 10 || EW_DT_ID == 11 || EW_DT_ID == 12
static inline EW_V EW_CAT(ew_irem_, EW_DT)(EW_V a, EW_V b) { return SEL(b == 0, 0, a % SEL(b == 0, 1, b)); }
#define IMOD(a, b) EW_CAT(ew_irem_, EW_DT)((a), (b)) /* unsigned: the same */
/* SHL, SHR for the unsigned types: the count masked into range for the
 * vector shift, and 0 where it was the width or more. */
#define EW_BITS ((EW_T)(8 * sizeof(EW_T)))
static inline EW_V EW_CAT(ew_shl_, EW_DT)(EW_V a, EW_V b) { return SEL(b < EW_BITS, a << (b & (EW_BITS - 1)), 0); }
static inline EW_V EW_CAT(ew_shr_, EW_DT)(EW_V a, EW_V b) { return SEL(b < EW_BITS, a >> (b & (EW_BITS - 1)), 0); }
#define SHL(a, b) EW_CAT(ew_shl_, EW_DT)((a), (b))
#define SHR(a, b) EW_CAT(ew_shr_, EW_DT)((a), (b))
#undef EW_BITS
#endif
#define IREM(a, b) EW_CAT(ew_irem_, EW_DT)((a), (b))
#define EW_LOAD(p) EW_CAT(ew_load_, EW_DT)(p)
#define EW_LOAD_N(p, k) EW_CAT(ew_load_part_, EW_DT)((p), (k))
#define EW_LOAD_SPLAT(p) ((EW_V){0} + *(p))
static inline EW_V EW_CAT(ew_load_, EW_DT)(const EW_T *p) {
    EW_V v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline EW_V EW_CAT(ew_load_part_, EW_DT)(const EW_T *p, int64_t k) {
    EW_V v = (EW_V){0} + 1;
    memcpy(&v, p, (size_t)k * sizeof *p);
    return v;
}
#define EW_STORE(q, v)                                                                           \
    do {                                                                                         \
        EW_V v_ = (v);                                                                           \
        memcpy((q), &v_, sizeof v_);                                                             \
    } while (0)
#endif

/* The tail: the first k lanes of v, through a whole vector's store. */
#define EW_STORE_N(q, k, v)                                                                      \
    do {                                                                                         \
        EW_T t_[EW_N];                                                                           \
        EW_STORE(t_, (v));                                                                       \
        memcpy((q), t_, (size_t)(k) * sizeof(EW_T));                                             \
    } while (0)

/* A BOOL row's mask as EW_N bytes of 0 or 1 at q: 32-bit lanes pack
 * (simd.h), byte lanes are bytes already, 16- and 64-bit lanes convert. */
#if EW_DT_ID == 1 || EW_DT_ID == 2 || EW_DT_ID == 3 || EW_DT_ID == 11 || EW_DT_ID == 13
#define EW_MASK_BYTES(q, m) tgc_vi_store_bool((q), (tgc_vi)(m))
#elif EW_DT_ID == 5 || EW_DT_ID == 6 || EW_DT_ID == 8
#define EW_MASK_BYTES(q, m)                                                                      \
    do {                                                                                         \
        ew_vu8 b_ = (ew_vu8)(m) & 1;                                                             \
        memcpy((q), &b_, sizeof b_);                                                             \
    } while (0)
#else
typedef int8_t EW_CAT(ew_bool_lanes_, EW_DT) __attribute__((vector_size(EW_N)));
#define EW_MASK_BYTES(q, m)                                                                      \
    do {                                                                                         \
        EW_CAT(ew_bool_lanes_, EW_DT) b_ = __builtin_convertvector((m), EW_CAT(ew_bool_lanes_, EW_DT)) & 1; \
        memcpy((q), &b_, sizeof b_);                                                             \
    } while (0)
#endif

/* ---- The rows that have this dtype ------------------------------------------------ */

#if EW_DT_FLOAT
#define EW_EXPR(fexpr, iexpr) fexpr
#else
#define EW_EXPR(fexpr, iexpr) iexpr
#endif
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)                                            \
    EW_CAT(EW_HAS_##cls##_, EW_DT)(EW_OUT_LOOP_SAME(op, EW_EXPR(fexpr, iexpr), EW_UNARY_LOOP))
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr)                                        \
    EW_CAT(EW_HAS_##cls##_, EW_DT)(EW_OUT_LOOP_BOOL(op, EW_EXPR(fexpr, iexpr), EW_UNARY_LOOP))
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr)                                             \
    EW_CAT(EW_HAS_##cls##_, EW_DT)(EW_OUT_LOOP_##out(op, EW_EXPR(fexpr, iexpr), EW_BINARY_LOOP))
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) EW_BINARY(op, cls, out, infer, fexpr, iexpr)
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
#undef EW_EXPR

#undef EW_T
#undef EW_V
#undef EW_N
#undef EW_PARAM
#undef EW_AS_V
#undef EW_LOAD
#undef EW_LOAD_N
#undef EW_LOAD_SPLAT
#undef EW_STORE
#undef EW_STORE_N
#undef EW_MASK_BYTES
#undef SEL
#undef ISNAN
#undef ABS
#undef SQRT
#undef EXP
#undef EXPM1
#undef LOG
#undef LOG1P
#undef TANH
#undef SIGMOID
#undef ERF
#undef SOFTPLUS
#undef SIN
#undef COS
#undef TAN
#undef ASIN
#undef ACOS
#undef ATAN
#undef SINH
#undef COSH
#undef ASINH
#undef ACOSH
#undef ATANH
#undef POW
#undef FLOOR
#undef CEIL
#undef ROUND
#undef FMOD
#undef IREM
#undef IMOD
#undef SHL
#undef SHR
#undef INEG
#undef IADD
#undef ISUB
#undef IMUL
#undef IDIV
#undef EW_DT_ID
#undef EW_DT_FLOAT
