/* The float32 functions of graph/elementwise.def's expression language,
 * by name, over tgc_vf vectors (devices/cpu/vmath.h, simd.h): included by
 * devices/cpu/ew_dtype.h for the float32, float16 and bfloat16 loops, and
 * by devices/cpu/jit/bitcode/jit_funcs.c for the JIT's copy of the same
 * code (so both compute the same bits). No include guard: ew_dtype.h
 * undefines the names after each dtype, and includes this again. */
#define ABS(v) tgc_vabs(v)
#define SQRT(v) tgc_vsqrt(v)
#define EXP(v) tgc_vexp(v)
#define EXPM1(v) tgc_vexpm1(v)
#define LOG(v) tgc_vlog(v)
#define LOG1P(v) tgc_vlog1p(v)
#define TANH(v) tgc_vtanh(v)
#define SIGMOID(v) tgc_vsigmoid(v)
#define ERF(v) tgc_verf(v)
#define SOFTPLUS(v) tgc_vsoftplus(v)
#define SIN(v) tgc_vsin(v)
#define COS(v) tgc_vcos(v)
#define TAN(v) tgc_vtan(v)
#define ASIN(v) tgc_vasin(v)
#define ACOS(v) tgc_vacos(v)
#define ATAN(v) tgc_vatan(v)
#define SINH(v) tgc_vsinh(v)
#define COSH(v) tgc_vcosh(v)
#define ASINH(v) tgc_vasinh(v)
#define ACOSH(v) tgc_vacosh(v)
#define ATANH(v) tgc_vatanh(v)
#define POW(a, b) tgc_vpow((a), (b))
#define FLOOR(v) tgc_vfloor(v)
#define CEIL(v) tgc_vceil(v)
#define ROUND(v) tgc_vrint(v)
#define FMOD(a, b) tgc_vfmod((a), (b))

/* One function as void NAME(float *v, const float *w): v = F(v[, w]) on
 * one vector of TGC_VLANES floats in memory, no alignment needed (the
 * JIT's calls, devices/cpu/jit/llvm_emit.c, which the optimizer inlines). */
#define EW_VEC_FN_DEFINE(linkage, fname, name)                                                  \
    linkage void fname(float *v, const float *w) {                                              \
        tgc_vf x = tgc_vf_load(v), y = tgc_vf_load(w != NULL ? w : v);                          \
        (void)y;                                                                                \
        tgc_vf_store(v, EW_FN_CALL_##name(x, y));                                               \
    }
#define EW_FN_CALL_EXP(x, y) EXP(x)
#define EW_FN_CALL_EXPM1(x, y) EXPM1(x)
#define EW_FN_CALL_LOG(x, y) LOG(x)
#define EW_FN_CALL_LOG1P(x, y) LOG1P(x)
#define EW_FN_CALL_TANH(x, y) TANH(x)
#define EW_FN_CALL_SIGMOID(x, y) SIGMOID(x)
#define EW_FN_CALL_ERF(x, y) ERF(x)
#define EW_FN_CALL_SOFTPLUS(x, y) SOFTPLUS(x)
#define EW_FN_CALL_SIN(x, y) SIN(x)
#define EW_FN_CALL_COS(x, y) COS(x)
#define EW_FN_CALL_TAN(x, y) TAN(x)
#define EW_FN_CALL_ASIN(x, y) ASIN(x)
#define EW_FN_CALL_ACOS(x, y) ACOS(x)
#define EW_FN_CALL_ATAN(x, y) ATAN(x)
#define EW_FN_CALL_SINH(x, y) SINH(x)
#define EW_FN_CALL_COSH(x, y) COSH(x)
#define EW_FN_CALL_ASINH(x, y) ASINH(x)
#define EW_FN_CALL_ACOSH(x, y) ACOSH(x)
#define EW_FN_CALL_ATANH(x, y) ATANH(x)
#define EW_FN_CALL_SQRT(x, y) SQRT(x)
#define EW_FN_CALL_FLOOR(x, y) FLOOR(x)
#define EW_FN_CALL_CEIL(x, y) CEIL(x)
#define EW_FN_CALL_ROUND(x, y) ROUND(x)
#define EW_FN_CALL_POW(x, y) POW(x, y)
#define EW_FN_CALL_FMOD(x, y) FMOD(x, y)
