/* The cpu's elementwise loops for one vector ISA: included once by each of
 * devices/cpu/ew_isa_{sse2,avx2,avx512}.c, which define TGC_EW_ISA (the
 * suffix of the table it exports, devices/cpu/ew.h) and are compiled with
 * that ISA's flags (CMakeLists.txt) and -fwrapv, so that signed integer
 * arithmetic wraps around in two's complement as the rows say.
 *
 * For each dtype, devices/cpu/ew_dtype.h defines the element and vector
 * types and the expression language of graph/elementwise.def over them,
 * then includes the table, turning each row whose class has the dtype into
 * a loop ew_<Op>_<dtype>. The table is then included once more to fill
 * the exported tgc_ew_loops with pointers to those loops.
 *
 * A loop works a vector of lanes at a time; the last, partial vector is
 * loaded into a vector of ones (a harmless divisor and operand) and only
 * its real lanes are stored. */
#include "devices/cpu/ew.h"
#include "devices/cpu/simd.h"
#include "devices/cpu/vmath.h"

#include "support/half.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define EW_CAT_(a, b) a##b
#define EW_CAT(a, b) EW_CAT_(a, b)

/* Vector types beside simd.h's float32 and int32 ones. */
typedef int64_t ew_vi64 __attribute__((vector_size(TGC_VBYTES)));
typedef uint8_t ew_vu8 __attribute__((vector_size(TGC_VBYTES)));
typedef int8_t ew_vi8 __attribute__((vector_size(TGC_VBYTES)));
typedef int16_t ew_vi16 __attribute__((vector_size(TGC_VBYTES)));
typedef uint16_t ew_vu16 __attribute__((vector_size(TGC_VBYTES)));
typedef uint64_t ew_vu64 __attribute__((vector_size(TGC_VBYTES)));
typedef double ew_vf64 __attribute__((vector_size(TGC_VBYTES)));

/* float64's functions: libm's, lane by lane (correctly rounded or nearly,
 * which is what a double model's reference, numpy, gives). */
static inline ew_vf64 ew_vd_map_(ew_vf64 v, double (*fn)(double)) {
    for (int i = 0; i < (int)(TGC_VBYTES / sizeof(double)); i++) v[i] = fn(v[i]);
    return v;
}
#define ew_vd_map(v, fn) ew_vd_map_((v), fn)
static inline ew_vf64 ew_vd_pow(ew_vf64 a, ew_vf64 b) {
    for (int i = 0; i < (int)(TGC_VBYTES / sizeof(double)); i++) a[i] = pow(a[i], b[i]);
    return a;
}
/* C's fmod lane by lane: exact (ONNX Mod with fmod 1). */
static inline ew_vf64 ew_vd_fmod(ew_vf64 a, ew_vf64 b) {
    for (int i = 0; i < (int)(TGC_VBYTES / sizeof(double)); i++) a[i] = fmod(a[i], b[i]);
    return a;
}
static inline double ew_sigmoid_f64(double x) {
    return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}
/* log(1 + e^x) without overflow: x + log1p(e^-x) for positive x. */
static inline double ew_softplus_f64(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* ---- Row loops, from a dtype's macros (ew_dtype.h) ------------------------------- */

/* Loads of the inputs, full (EW_LOAD) or the first k lanes (EW_LOAD_N). */
#define EW_IN_FULL(p, i) EW_LOAD((p) + (i))
#define EW_IN_PART(p, i, k) EW_LOAD_N((p) + (i), (k))

/* y[i..] = expr over whole vectors, then the tail; STORE/STORE_N store the
 * expression's value (EW_STORE for SAME rows, EW_STORE_MASK for BOOL). */
#define EW_UNARY_LOOP(op, expr, STORE, STORE_N, YT)                                              \
    static void EW_CAT(ew_##op##_, EW_DT)(int64_t n, const void *px, void *py, const tgc_ew_params *p) { \
        const EW_T *X = px;                                                                      \
        YT *Y = py;                                                                              \
        const EW_V P0 = EW_PARAM(p, 0), P1 = EW_PARAM(p, 1), P2 = EW_PARAM(p, 2);                \
        (void)P0, (void)P1, (void)P2;                                                            \
        int64_t i = 0;                                                                           \
        for (; i + EW_N <= n; i += EW_N) {                                                       \
            const EW_V x = EW_IN_FULL(X, i);                                                     \
            STORE(Y + i, (expr));                                                                \
        }                                                                                        \
        if (i < n) {                                                                             \
            const EW_V x = EW_IN_PART(X, i, n - i);                                              \
            STORE_N(Y + i, n - i, (expr));                                                       \
        }                                                                                        \
    }

/* One pass over the row with a and b loaded by LA and LB (full vectors) and
 * LA_N and LB_N (the tail). */
#define EW_BINARY_PASS(expr, LA, LB, LA_N, LB_N, STORE, STORE_N)                                 \
    do {                                                                                         \
        int64_t i = 0;                                                                           \
        for (; i + EW_N <= n; i += EW_N) {                                                       \
            const EW_V a = LA, b = LB;                                                           \
            STORE(Y + i, (expr));                                                                \
        }                                                                                        \
        if (i < n) {                                                                             \
            const EW_V a = LA_N, b = LB_N;                                                       \
            STORE_N(Y + i, n - i, (expr));                                                       \
        }                                                                                        \
    } while (0)

#define EW_BINARY_LOOP(op, expr, STORE, STORE_N, YT)                                             \
    static void EW_CAT(ew_##op##_, EW_DT)(int64_t n, const void *pa, int64_t sa, const void *pb, int64_t sb, \
                                          void *py, const tgc_ew_params *p) {                    \
        const EW_T *A = pa, *B = pb;                                                             \
        YT *Y = py;                                                                              \
        const EW_V P0 = EW_PARAM(p, 0), P1 = EW_PARAM(p, 1), P2 = EW_PARAM(p, 2);                \
        (void)P0, (void)P1, (void)P2;                                                            \
        if (sa && sb) {                                                                          \
            EW_BINARY_PASS(expr, EW_IN_FULL(A, i), EW_IN_FULL(B, i), EW_IN_PART(A, i, n - i),     \
                           EW_IN_PART(B, i, n - i), STORE, STORE_N);                              \
        } else if (sa) {                                                                         \
            const EW_V bs = EW_LOAD_SPLAT(B);                                                    \
            EW_BINARY_PASS(expr, EW_IN_FULL(A, i), bs, EW_IN_PART(A, i, n - i), bs, STORE, STORE_N); \
        } else if (sb) {                                                                         \
            const EW_V as = EW_LOAD_SPLAT(A);                                                    \
            EW_BINARY_PASS(expr, as, EW_IN_FULL(B, i), as, EW_IN_PART(B, i, n - i), STORE, STORE_N); \
        } else {                                                                                 \
            const EW_V as = EW_LOAD_SPLAT(A), bs = EW_LOAD_SPLAT(B);                             \
            EW_BINARY_PASS(expr, as, bs, as, bs, STORE, STORE_N);                                \
        }                                                                                        \
    }

/* Stores of a BOOL row: a mask's lanes as bytes of 0 or 1 (EW_MASK_BYTES,
 * per dtype in ew_dtype.h). */
#define EW_STORE_MASK(q, m) EW_MASK_BYTES((q), (m))
#define EW_STORE_MASK_N(q, k, m)                                                                 \
    do {                                                                                         \
        uint8_t t_[TGC_VBYTES];                                                                  \
        EW_MASK_BYTES(t_, (m));                                                                  \
        memcpy((q), t_, (size_t)(k));                                                            \
    } while (0)

#define EW_OUT_LOOP_SAME(op, expr, LOOP) LOOP(op, expr, EW_STORE, EW_STORE_N, EW_T)
#define EW_OUT_LOOP_BOOL(op, expr, LOOP) LOOP(op, expr, EW_STORE_MASK, EW_STORE_MASK_N, uint8_t)

/* ---- One instantiation per dtype ------------------------------------------------ */

#define EW_DT f32
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT f16
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT i32
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT i64
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT u8
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT b8
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT f64
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT i8
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT i16
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT u16
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT u32
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT u64
#include "devices/cpu/ew_dtype.h"
#undef EW_DT
#define EW_DT bf16
#include "devices/cpu/ew_dtype.h"
#undef EW_DT

/* ---- float16 <-> float32 ---------------------------------------------------------- */

static void ew_half_to_float(int64_t n, const uint16_t *x, float *y) {
    int64_t i = 0;
    for (; i + TGC_VLANES <= n; i += TGC_VLANES) tgc_vf_store(y + i, tgc_vf_load_half(x + i));
    for (; i < n; i++) y[i] = tgc_half_to_float(x[i]);
}

static void ew_interleave2(int64_t n, const float *a, const float *b, float *y) {
    for (int64_t i = 0; i < n; i++) {
        y[2 * i] = a[i];
        y[2 * i + 1] = b[i];
    }
}

static void ew_float_to_half(int64_t n, const float *x, uint16_t *y) {
    int64_t i = 0;
    for (; i + TGC_VLANES <= n; i += TGC_VLANES) tgc_vf_store_half(y + i, tgc_vf_load(x + i));
    for (; i < n; i++) y[i] = tgc_float_to_half(x[i]);
}

/* ---- Matrix-vector products on half-precision weights ------------------------------ */

/* y[j] = sum over kk in order of x[kk] * B[kk, j], j in [0, n): B's rows ld
 * elements apart, float16 or bfloat16, each element widened exactly as it
 * is read. One running sum a column, a product then a sum, as
 * tgc_cpu_gemv_update computes with alpha 1 and beta 0 (devices/cpu/gemv.c):
 * the bits of the float32 product over the widened weight. */
#define EW_GEMV_HALF(name, load)                                                                         \
    static void name(int64_t n, int64_t k, const uint16_t *mat, int64_t ld, const float *x, float *y) {  \
        int64_t j = 0;                                                                                   \
        for (; j + 8 * TGC_VLANES <= n; j += 8 * TGC_VLANES) { /* 8 sums a step: an add's latency hidden */ \
            tgc_vf s[8] = {{0}};                                                                         \
            for (int64_t kk = 0; kk < k; kk++) {                                                         \
                const uint16_t *r = mat + kk * ld + j;                                                   \
                tgc_vf a = tgc_vf_splat(x[kk]);                                                          \
                for (int q = 0; q < 8; q++) s[q] += a * load(r + q * TGC_VLANES);                        \
            }                                                                                            \
            for (int q = 0; q < 8; q++) tgc_vf_store(y + j + q * TGC_VLANES, s[q]);                      \
        }                                                                                                \
        for (; j + TGC_VLANES <= n; j += TGC_VLANES) {                                                   \
            tgc_vf s0 = {0};                                                                             \
            for (int64_t kk = 0; kk < k; kk++) s0 += tgc_vf_splat(x[kk]) * load(mat + kk * ld + j);      \
            tgc_vf_store(y + j, s0);                                                                     \
        }                                                                                                \
        if (j < n) { /* the last columns, each row's few copied into a vector (lanes past them 0) */      \
            uint16_t part[TGC_VLANES] = {0};                                                             \
            float out[TGC_VLANES];                                                                       \
            tgc_vf s0 = {0};                                                                             \
            for (int64_t kk = 0; kk < k; kk++) {                                                         \
                memcpy(part, mat + kk * ld + j, (size_t)(n - j) * sizeof *part);                         \
                s0 += tgc_vf_splat(x[kk]) * load(part);                                                  \
            }                                                                                            \
            tgc_vf_store(out, s0);                                                                       \
            memcpy(y + j, out, (size_t)(n - j) * sizeof *out);                                           \
        }                                                                                                \
    }
EW_GEMV_HALF(ew_gemv_half_f16, tgc_vf_load_half)
EW_GEMV_HALF(ew_gemv_half_bf16, ew_load_bf16)
#undef EW_GEMV_HALF

/* The dot form, y[j] = B[j, :] . x (+ beta y[j]) for rows j < n of B [n, k]
 * (rows ld apart), as tgc_cpu_gemv_dot computes with alpha 1: 16 running
 * sums over k in steps of 16 (whatever this ISA's width: a 16-lane vector
 * is made of its vectors), added in gemv.c's fixed tree, then the tail of
 * k in order; rows read one or four a pass (TGC_GEMV_ROWS_A_PASS, on the
 * rows' bytes as they lie). The bits of the float32 product over the
 * widened B. */
typedef float ew_v16 __attribute__((vector_size(64)));

/* Macros, not functions: a function taking or returning a 64-byte vector
 * would have another ABI in the narrower ISAs' translation units. */
#define EW_V16_LOADF(p) ({ ew_v16 f_; memcpy(&f_, (p), sizeof f_); f_; })

static inline float ew_v16_sum(const ew_v16 *v) { /* ((l0 + l8) + (l4 + l12)) + ..., gemv.c's lanes_sum */
    float s8[8], s4[4];
    for (int i = 0; i < 8; i++) s8[i] = (*v)[i] + (*v)[i + 8];
    for (int i = 0; i < 4; i++) s4[i] = s8[i] + s8[i + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

#define EW_V16_LOAD(load, p)                                                                             \
    ({                                                                                                   \
        ew_v16 v_;                                                                                       \
        for (int q_ = 0; q_ < 16 / TGC_VLANES; q_++) {                                                   \
            tgc_vf part_ = load((p) + q_ * TGC_VLANES);                                                  \
            memcpy((float *)&v_ + q_ * TGC_VLANES, &part_, sizeof part_);                                \
        }                                                                                                \
        v_;                                                                                              \
    })

#define EW_GEMV_DOT_HALF(name, load, widen)                                                              \
    static void name(int64_t n, int64_t k, const uint16_t *mat, int64_t ld, const float *x, float beta,   \
                     float *y) {                                                                         \
        int per = TGC_GEMV_ROWS_A_PASS(k * (int64_t)sizeof *mat);                                         \
        for (int64_t j = 0; j < n; j += per) {                                                           \
            int rows = n - j < per ? (int)(n - j) : per;                                                 \
            ew_v16 s[4] = {{0}};                                                                         \
            int64_t kk = 0;                                                                              \
            for (; kk + 16 <= k; kk += 16) {                                                             \
                ew_v16 xv = EW_V16_LOADF(x + kk);                                                        \
                for (int q = 0; q < rows; q++) s[q] += EW_V16_LOAD(load, mat + (j + q) * ld + kk) * xv;  \
            }                                                                                            \
            for (int q = 0; q < rows; q++) {                                                             \
                const uint16_t *r = mat + (j + q) * ld;                                                  \
                float d = ew_v16_sum(&s[q]);                                                             \
                for (int64_t t = kk; t < k; t++) d += widen(r[t]) * x[t];                                \
                y[j + q] = beta == 0.0f ? 1.0f * d : 1.0f * d + beta * y[j + q];                         \
            }                                                                                            \
        }                                                                                                \
    }
EW_GEMV_DOT_HALF(ew_gemv_dot_half_f16, tgc_vf_load_half, tgc_half_to_float)
EW_GEMV_DOT_HALF(ew_gemv_dot_half_bf16, ew_load_bf16, tgc_bf16_to_float)
#undef EW_GEMV_DOT_HALF
#undef EW_V16_LOAD
#undef EW_V16_LOADF

/* ---- The table ---------------------------------------------------------------- */

/* [TGC_EW_<Op>][dtype] = ew_<Op>_<dt> where the row's class has the dtype. */
#define EW_ENTRY_BODY(op, dt, dtype) [TGC_EW_##op][dtype] = ew_##op##_##dt,
#define EW_ENTRY(op, cls, dt, dtype) EW_HAS_##cls##_##dt(EW_ENTRY_BODY(op, dt, dtype))
#define EW_ENTRIES(op, cls)                                                                      \
    EW_ENTRY(op, cls, f32, TGC_FLOAT32)                                                          \
    EW_ENTRY(op, cls, f16, TGC_FLOAT16)                                                          \
    EW_ENTRY(op, cls, i32, TGC_INT32)                                                            \
    EW_ENTRY(op, cls, i64, TGC_INT64)                                                            \
    EW_ENTRY(op, cls, u8, TGC_UINT8)                                                             \
    EW_ENTRY(op, cls, b8, TGC_BOOL)                                                              \
    EW_ENTRY(op, cls, f64, TGC_FLOAT64)                                                          \
    EW_ENTRY(op, cls, i8, TGC_INT8)                                                              \
    EW_ENTRY(op, cls, i16, TGC_INT16)                                                            \
    EW_ENTRY(op, cls, u16, TGC_UINT16)                                                           \
    EW_ENTRY(op, cls, u32, TGC_UINT32)                                                           \
    EW_ENTRY(op, cls, u64, TGC_UINT64)                                                           \
    EW_ENTRY(op, cls, bf16, TGC_BFLOAT16)

const tgc_ew_loops EW_CAT(tgc_ew_loops_, TGC_EW_ISA) = {
    .isa = TGC_ISA_NAME,
    .lanes = TGC_VLANES,
    .unary = {
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) EW_ENTRIES(op, cls)
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) EW_ENTRIES(op, cls)
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr)
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr)
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
    },
    .binary = {
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr)
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) EW_ENTRIES(op, cls)
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) EW_ENTRIES(op, cls)
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
    },
    .half_to_float = ew_half_to_float,
    .float_to_half = ew_float_to_half,
    .interleave2 = ew_interleave2,
    .gemv_half = ew_gemv_half_f16,
    .gemv_bf16 = ew_gemv_half_bf16,
    .gemv_dot_half = ew_gemv_dot_half_f16,
    .gemv_dot_bf16 = ew_gemv_dot_half_bf16,
};
