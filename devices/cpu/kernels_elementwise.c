/* The cpu elementwise kernels, ONNX opset 17 semantics:
 *     arithmetic   Add Sub Mul Div (float32 int32 int64 uint8), Pow
 *     unary        Neg Abs Relu LeakyRelu Sigmoid Tanh Exp Log Sqrt Erf
 *     selection    Min Max (variadic; float16 too), Clip, Where
 *     comparison   Equal Less Greater (bool output)
 *     conversion   Cast (all pairs of float32 float16 int32 int64 uint8
 *                  bool), Identity (any dtype)
 * and tgc_cpu_kernels_elementwise[], the list the registry reads.
 *
 * Each (op, dtype) is one row loop, instantiated from a macro; binary and
 * ternary ops walk the broadcast output a row at a time (broadcast.h), so
 * equal shapes and a scalar operand are single tight rows.
 *
 * In place: every kernel here declares forward_input = 0, so the executor
 * may hand output 0 the buffer of input 0 (when it has the output's size,
 * hence input 0's shape). Every loop reads element i before it writes
 * element i, and the restrict-qualified (vectorizable) instantiation of a
 * loop only runs when no output byte overlaps an input byte; otherwise its
 * plain twin does.
 *
 * Integer arithmetic wraps around in two's complement, as ONNX runtimes do
 * in practice (the spec says nothing of overflow); C's undefined signed
 * overflow is avoided by computing in unsigned types. */
#include "devices/cpu/broadcast.h"
#include "devices/cpu/kernels_nn.h"

#include "support/half.h"

#include <math.h>
#include <string.h>

/* Saturating double -> integer conversion truncating toward zero (what C
 * does in range); NaN gives 0. Out of range is undefined in C and unspecified
 * in ONNX; saturating keeps it defined. */
static inline int64_t d2i64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

static inline int32_t d2i32(double v) {
    if (v != v) return 0;
    if (v >= 2147483648.0) return INT32_MAX;
    if (v <= -2147483649.0) return INT32_MIN;
    return (int32_t)v;
}

static const void *data_of(const tgc_value *v) { return tgc_buffer_host_ptr(v->buf); }

/* Copies src's bytes into dst unless they are the same memory (forwarded). */
static void copy_value(tgc_value *dst, const tgc_value *src) {
    size_t n = tgc_value_nbytes(src);
    void *d = tgc_buffer_host_ptr(dst->buf);
    const void *s = data_of(src);
    if (n > 0 && d != s) memmove(d, s, n);
}

static tgc_status no_kernel(tgc_kernel_ctx *c, tgc_dtype dtype) {
    return tgc_kernel_fail(c, "%s: the cpu has no kernel for %s", tgc_kernel_op_name(c), tgc_dtype_name(dtype));
}

/* ==== Scalar operations ===================================================== */

/* Signed integers: wrap around through the unsigned type U. Div truncates
 * toward zero (-7 / 2 == -3), as the ONNX Div spec states for integers
 * (clarified in onnx/onnx#7585 and #8461: -11 / 3 == -3) and ONNX Runtime
 * does; INT_MIN / -1 wraps to INT_MIN. The divisor was checked for zeros
 * before any loop runs. */
#define SIGNED_OPS(s, T, U)                                                                 \
    static inline T add_##s(T a, T b) { return (T)((U)a + (U)b); }                          \
    static inline T sub_##s(T a, T b) { return (T)((U)a - (U)b); }                          \
    static inline T mul_##s(T a, T b) { return (T)((U)a * (U)b); }                          \
    static inline T neg_##s(T a) { return (T)((U)0 - (U)a); }                               \
    static inline T div_##s(T a, T b) { return b == -1 ? neg_##s(a) : (T)(a / b); }         \
    static inline T abs_##s(T a) { return a < 0 ? neg_##s(a) : a; }                        \
    static inline T min_##s(T a, T b) { return b < a ? b : a; }                             \
    static inline T max_##s(T a, T b) { return b > a ? b : a; }                             \
    static inline uint8_t eq_##s(T a, T b) { return a == b; }                               \
    static inline uint8_t lt_##s(T a, T b) { return a < b; }                                \
    static inline uint8_t gt_##s(T a, T b) { return a > b; }
SIGNED_OPS(i32, int32_t, uint32_t)
SIGNED_OPS(i64, int64_t, uint64_t)

static inline uint8_t add_u8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
static inline uint8_t sub_u8(uint8_t a, uint8_t b) { return (uint8_t)(a - b); }
static inline uint8_t mul_u8(uint8_t a, uint8_t b) { return (uint8_t)(a * b); }
static inline uint8_t div_u8(uint8_t a, uint8_t b) { return (uint8_t)(a / b); }
static inline uint8_t min_u8(uint8_t a, uint8_t b) { return b < a ? b : a; }
static inline uint8_t max_u8(uint8_t a, uint8_t b) { return b > a ? b : a; }
static inline uint8_t eq_u8(uint8_t a, uint8_t b) { return a == b; }
static inline uint8_t lt_u8(uint8_t a, uint8_t b) { return a < b; }
static inline uint8_t gt_u8(uint8_t a, uint8_t b) { return a > b; }
static inline uint8_t eq_b8(uint8_t a, uint8_t b) { return (a != 0) == (b != 0); }

/* float32: IEEE arithmetic (x / 0 is inf or NaN, not an error). Min and
 * Max propagate NaN, as numpy.minimum/maximum do in ONNX's reference
 * implementation. */
static inline float add_f32(float a, float b) { return a + b; }
static inline float sub_f32(float a, float b) { return a - b; }
static inline float mul_f32(float a, float b) { return a * b; }
static inline float div_f32(float a, float b) { return a / b; }
static inline float min_f32(float a, float b) { return (a < b || a != a) ? a : b; }
static inline float max_f32(float a, float b) { return (a > b || a != a) ? a : b; }
static inline uint8_t eq_f32(float a, float b) { return a == b; }
static inline uint8_t lt_f32(float a, float b) { return a < b; }
static inline uint8_t gt_f32(float a, float b) { return a > b; }

/* float16 (binary16 bits): Min and Max compare as floats (the conversion is
 * exact) and return one input's bits unchanged, so nothing rounds; NaN
 * propagates as for float32. */
static inline uint16_t min_f16(uint16_t a, uint16_t b) {
    float fa = tgc_half_to_float(a), fb = tgc_half_to_float(b);
    return (fa < fb || fa != fa) ? a : b;
}
static inline uint16_t max_f16(uint16_t a, uint16_t b) {
    float fa = tgc_half_to_float(a), fb = tgc_half_to_float(b);
    return (fa > fb || fa != fa) ? a : b;
}

/* Pow-15: the output has the base's type; the exponent may be any numeric
 * type. A float base goes through powf, or pow in double for an integer
 * exponent (exact up to 2^53, as ONNX Runtime's std::pow). An integer base
 * with an integer exponent multiplies (wrapping); negative integer exponents
 * are refused before the loop runs, as numpy.power refuses them in ONNX's
 * reference implementation. An integer base with a float exponent computes
 * in double and truncates toward zero. */
static inline float pow_f32_f32(float a, float b) { return powf(a, b); }
static inline float pow_f32_int(float a, int64_t b) { return (float)pow((double)a, (double)b); }
static inline int64_t ipow(int64_t a, int64_t b) {
    uint64_t r = 1, x = (uint64_t)a;
    for (; b > 0; b >>= 1, x *= x)
        if (b & 1) r *= x;
    return (int64_t)r;
}
static inline int32_t pow_i32_int(int32_t a, int64_t b) { return (int32_t)(uint32_t)(uint64_t)ipow(a, b); }
static inline int64_t pow_i64_int(int64_t a, int64_t b) { return ipow(a, b); }
static inline int32_t pow_i32_f32(int32_t a, float b) { return d2i32(pow((double)a, (double)b)); }
static inline int64_t pow_i64_f32(int64_t a, float b) { return d2i64(pow((double)a, (double)b)); }

/* ==== Binary row loops ====================================================== */

/* y[i] = OP(a[i * sa], b[i * sb]) for i < n; sa and sb are 0 or 1 (a row of
 * the broadcasting iterator). */
typedef void (*row2_fn)(int64_t n, const void *a, int64_t sa, const void *b, int64_t sb, void *y);

typedef struct loop2 {
    row2_fn fast;  /* restrict-qualified: output disjoint from the inputs */
    row2_fn alias; /* the same loop, correct when y is a or b */
} loop2;

#define ROW2_BODY(TA, TB, TY, OP, R)                                                         \
    const TA *R a = pa;                                                                      \
    const TB *R b = pb;                                                                      \
    TY *R y = py;                                                                            \
    if (sa && sb) {                                                                          \
        for (int64_t i = 0; i < n; i++) y[i] = OP(a[i], b[i]);                               \
    } else if (sa) {                                                                         \
        const TB bv = b[0];                                                                  \
        for (int64_t i = 0; i < n; i++) y[i] = OP(a[i], bv);                                 \
    } else if (sb) {                                                                         \
        const TA av = a[0];                                                                  \
        for (int64_t i = 0; i < n; i++) y[i] = OP(av, b[i]);                                 \
    } else {                                                                                 \
        const TY v = OP(a[0], b[0]);                                                         \
        for (int64_t i = 0; i < n; i++) y[i] = v;                                            \
    }

#define DEF_LOOP2(name, TA, TB, TY, OP)                                                          \
    static void name##_fast(int64_t n, const void *pa, int64_t sa, const void *pb, int64_t sb, void *py) { \
        ROW2_BODY(TA, TB, TY, OP, restrict)                                                      \
    }                                                                                            \
    static void name##_alias(int64_t n, const void *pa, int64_t sa, const void *pb, int64_t sb, void *py) { \
        ROW2_BODY(TA, TB, TY, OP, )                                                              \
    }                                                                                            \
    static const loop2 name = {name##_fast, name##_alias};

/* The four arithmetic ops, Min, Max and the comparisons for one dtype. */
#define DEF_ARITH_LOOPS(s, T)                                                                    \
    DEF_LOOP2(add_##s##_loop, T, T, T, add_##s)                                                  \
    DEF_LOOP2(sub_##s##_loop, T, T, T, sub_##s)                                                  \
    DEF_LOOP2(mul_##s##_loop, T, T, T, mul_##s)                                                  \
    DEF_LOOP2(div_##s##_loop, T, T, T, div_##s)                                                  \
    DEF_LOOP2(min_##s##_loop, T, T, T, min_##s)                                                  \
    DEF_LOOP2(max_##s##_loop, T, T, T, max_##s)                                                  \
    DEF_LOOP2(eq_##s##_loop, T, T, uint8_t, eq_##s)                                              \
    DEF_LOOP2(lt_##s##_loop, T, T, uint8_t, lt_##s)                                              \
    DEF_LOOP2(gt_##s##_loop, T, T, uint8_t, gt_##s)
DEF_ARITH_LOOPS(f32, float)
DEF_ARITH_LOOPS(i32, int32_t)
DEF_ARITH_LOOPS(i64, int64_t)
DEF_ARITH_LOOPS(u8, uint8_t)
DEF_LOOP2(eq_b8_loop, uint8_t, uint8_t, uint8_t, eq_b8)
DEF_LOOP2(min_f16_loop, uint16_t, uint16_t, uint16_t, min_f16)
DEF_LOOP2(max_f16_loop, uint16_t, uint16_t, uint16_t, max_f16)

DEF_LOOP2(pow_f32_f32_loop, float, float, float, pow_f32_f32)
DEF_LOOP2(pow_f32_i32_loop, float, int32_t, float, pow_f32_int)
DEF_LOOP2(pow_f32_i64_loop, float, int64_t, float, pow_f32_int)
DEF_LOOP2(pow_f32_u8_loop, float, uint8_t, float, pow_f32_int)
DEF_LOOP2(pow_i32_f32_loop, int32_t, float, int32_t, pow_i32_f32)
DEF_LOOP2(pow_i32_i32_loop, int32_t, int32_t, int32_t, pow_i32_int)
DEF_LOOP2(pow_i32_i64_loop, int32_t, int64_t, int32_t, pow_i32_int)
DEF_LOOP2(pow_i32_u8_loop, int32_t, uint8_t, int32_t, pow_i32_int)
DEF_LOOP2(pow_i64_f32_loop, int64_t, float, int64_t, pow_i64_f32)
DEF_LOOP2(pow_i64_i32_loop, int64_t, int32_t, int64_t, pow_i64_int)
DEF_LOOP2(pow_i64_i64_loop, int64_t, int64_t, int64_t, pow_i64_int)
DEF_LOOP2(pow_i64_u8_loop, int64_t, uint8_t, int64_t, pow_i64_int)

/* Loops indexed by input dtype; NULL: not handled. */
typedef const loop2 *loop2_table[TGC_DTYPE_COUNT];

#define ARITH_TABLE(name, op)                                                                    \
    static const loop2_table name = {[TGC_FLOAT32] = &op##_f32_loop, [TGC_INT32] = &op##_i32_loop, \
                                     [TGC_INT64] = &op##_i64_loop, [TGC_UINT8] = &op##_u8_loop};
ARITH_TABLE(add_loops, add)
ARITH_TABLE(sub_loops, sub)
ARITH_TABLE(mul_loops, mul)
ARITH_TABLE(div_loops, div)
static const loop2_table min_loops = {[TGC_FLOAT32] = &min_f32_loop, [TGC_FLOAT16] = &min_f16_loop,
                                      [TGC_INT32] = &min_i32_loop, [TGC_INT64] = &min_i64_loop,
                                      [TGC_UINT8] = &min_u8_loop};
static const loop2_table max_loops = {[TGC_FLOAT32] = &max_f32_loop, [TGC_FLOAT16] = &max_f16_loop,
                                      [TGC_INT32] = &max_i32_loop, [TGC_INT64] = &max_i64_loop,
                                      [TGC_UINT8] = &max_u8_loop};
ARITH_TABLE(less_loops, lt)
ARITH_TABLE(greater_loops, gt)
static const loop2_table equal_loops = {[TGC_FLOAT32] = &eq_f32_loop, [TGC_INT32] = &eq_i32_loop,
                                        [TGC_INT64] = &eq_i64_loop, [TGC_UINT8] = &eq_u8_loop,
                                        [TGC_BOOL] = &eq_b8_loop};
/* By base dtype, then exponent dtype. */
static const loop2_table pow_loops[TGC_DTYPE_COUNT] = {
    [TGC_FLOAT32] = {[TGC_FLOAT32] = &pow_f32_f32_loop, [TGC_INT32] = &pow_f32_i32_loop,
                     [TGC_INT64] = &pow_f32_i64_loop, [TGC_UINT8] = &pow_f32_u8_loop},
    [TGC_INT32] = {[TGC_FLOAT32] = &pow_i32_f32_loop, [TGC_INT32] = &pow_i32_i32_loop,
                   [TGC_INT64] = &pow_i32_i64_loop, [TGC_UINT8] = &pow_i32_u8_loop},
    [TGC_INT64] = {[TGC_FLOAT32] = &pow_i64_f32_loop, [TGC_INT32] = &pow_i64_i32_loop,
                   [TGC_INT64] = &pow_i64_i64_loop, [TGC_UINT8] = &pow_i64_u8_loop},
};

static const loop2 *loop_for(const loop2_table t, tgc_dtype dtype) {
    return dtype >= 0 && dtype < TGC_DTYPE_COUNT ? t[dtype] : NULL;
}

/* The least work worth a piece of its own in an elementwise loop, in output
 * elements (several microseconds for the arithmetic ops: a hand-off to a
 * waiting worker costs about one). Pieces are fixed runs of the output, so
 * the split depends on the sizes alone (each element is computed alone
 * anyway, so no split changes a bit). */
#define EW_PIECE_ELEMS ((int64_t)32768)

/* The pieces an elementwise loop over n output elements is cut into. */
static int64_t ew_pieces(int64_t n) { return (n + EW_PIECE_ELEMS - 1) / EW_PIECE_ELEMS; }

/* One binary loop over a broadcast output, cut into pieces. */
typedef struct binary_job {
    const tgc_cpu_bcast *it; /* the walk, at row 0; each piece seeks its own copy */
    const char *pa, *pb;
    char *py;
    size_t ea, eb, ey;
    row2_fn fn;
    int64_t numel;
    bool relu; /* a fused Relu (float32 output), applied to each piece */
} binary_job;

/* Output elements [piece * EW_PIECE_ELEMS, ...): the rows they cover, the
 * first and last possibly in part. */
static void binary_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const binary_job *j = arg;
    int64_t lo = piece * EW_PIECE_ELEMS, hi = lo + EW_PIECE_ELEMS < j->numel ? lo + EW_PIECE_ELEMS : j->numel;
    tgc_cpu_bcast it = *j->it;
    int64_t inner = it.inner, col = lo % inner;
    tgc_cpu_bcast_seek(&it, lo / inner);
    for (int64_t at = lo; at < hi;) {
        int64_t len = inner - col < hi - at ? inner - col : hi - at;
        j->fn(len, j->pa + (size_t)(it.off[0] + col * it.step[0]) * j->ea, it.step[0],
              j->pb + (size_t)(it.off[1] + col * it.step[1]) * j->eb, it.step[1], j->py + (size_t)at * j->ey);
        at += len;
        col = 0;
        if (at < hi) tgc_cpu_bcast_next(&it);
    }
    if (j->relu) tgc_cpu_relu_block((float *)(void *)j->py, 0, 0, 1, lo, hi);
}

/* y = loop(a, b) over the broadcast output y (all checked by the caller),
 * split over c->pool. Pieces write disjoint parts of y, and an output that
 * overlaps an input is input 0's own buffer (forwarding needs the output's
 * size), element for element, so a piece reads only what it writes. */
static tgc_status run_binary(tgc_kernel_ctx *c, const tgc_value *a, const tgc_value *b, const tgc_value *y,
                             const loop2 *loop) {
    int64_t numel = tgc_value_numel(y);
    if (numel == 0) return TGC_OK;
    tgc_cpu_bcast it;
    const tgc_value *ops[2] = {a, b};
    tgc_status st = tgc_cpu_bcast_values(c, &it, y, 2, ops);
    if (st != TGC_OK) return st;
    binary_job j = {.it = &it, .pa = data_of(a), .pb = data_of(b), .py = tgc_buffer_host_ptr(y->buf),
                    .ea = tgc_dtype_size(a->dtype), .eb = tgc_dtype_size(b->dtype), .ey = tgc_dtype_size(y->dtype),
                    .fn = tgc_cpu_ew_overlap(y, a) || tgc_cpu_ew_overlap(y, b) ? loop->alias : loop->fast,
                    .numel = numel, .relu = c->fused_relu && y->dtype == TGC_FLOAT32};
    tgc_parallel_for(c->pool, ew_pieces(numel), binary_piece, &j);
    return TGC_OK;
}

/* A two-input op whose inputs share one dtype; the output has `out_dtype`
 * (TGC_DTYPE_INVALID: the inputs'). */
static tgc_status binary(tgc_kernel_ctx *c, const loop2_table loops, tgc_dtype out_dtype) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    tgc_dtype want = out_dtype == TGC_DTYPE_INVALID ? a->dtype : out_dtype;
    if (b->dtype != a->dtype || y->dtype != want)
        return tgc_kernel_fail(c, "%s: dtypes %s, %s -> %s; expected two %s inputs and a %s output", tgc_kernel_op_name(c),
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(a->dtype), tgc_dtype_name(want));
    const loop2 *loop = loop_for(loops, a->dtype);
    if (loop == NULL) return no_kernel(c, a->dtype);
    return run_binary(c, a, b, y, loop);
}

static tgc_status k_add(tgc_kernel_ctx *c) { return binary(c, add_loops, TGC_DTYPE_INVALID); }
static tgc_status k_sub(tgc_kernel_ctx *c) { return binary(c, sub_loops, TGC_DTYPE_INVALID); }
static tgc_status k_mul(tgc_kernel_ctx *c) { return binary(c, mul_loops, TGC_DTYPE_INVALID); }
static tgc_status k_equal(tgc_kernel_ctx *c) { return binary(c, equal_loops, TGC_BOOL); }
static tgc_status k_less(tgc_kernel_ctx *c) { return binary(c, less_loops, TGC_BOOL); }
static tgc_status k_greater(tgc_kernel_ctx *c) { return binary(c, greater_loops, TGC_BOOL); }

/* True when some element of the integer tensor v (any dtype) is zero
 * (want_negative false) or negative (true). Floats are never flagged. */
static bool int_tensor_has(const tgc_value *v, bool want_negative) {
    int64_t n = tgc_value_numel(v);
    const void *p = data_of(v);
    for (int64_t i = 0; i < n; i++) {
        int64_t x;
        switch (v->dtype) {
        case TGC_INT32: x = ((const int32_t *)p)[i]; break;
        case TGC_INT64: x = ((const int64_t *)p)[i]; break;
        case TGC_UINT8: x = ((const uint8_t *)p)[i]; break;
        default: return false;
        }
        if (want_negative ? x < 0 : x == 0) return true;
    }
    return false;
}

/* Div-14: integer division by zero is an error here (undefined in C, and
 * the ONNX spec gives it no value); float division follows IEEE. */
static tgc_status k_div(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    if (c->inputs[1].dtype == c->inputs[0].dtype && int_tensor_has(&c->inputs[1], false))
        return tgc_kernel_fail(c, "division by zero in Div (%s)", tgc_dtype_name(c->inputs[0].dtype));
    return binary(c, div_loops, TGC_DTYPE_INVALID);
}

static tgc_status k_pow(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    if (y->dtype != a->dtype)
        return tgc_kernel_fail(c, "Pow: output is %s, expected the base's %s", tgc_dtype_name(y->dtype),
                               tgc_dtype_name(a->dtype));
    const loop2 *loop = NULL;
    if (a->dtype >= 0 && a->dtype < TGC_DTYPE_COUNT) loop = loop_for(pow_loops[a->dtype], b->dtype);
    if (loop == NULL)
        return tgc_kernel_fail(c, "Pow: the cpu has no kernel for a %s base with a %s exponent",
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype));
    if (a->dtype != TGC_FLOAT32 && int_tensor_has(b, true))
        return tgc_kernel_fail(c, "Pow: negative exponent for an integer (%s) base", tgc_dtype_name(a->dtype));
    return run_binary(c, a, b, y, loop);
}

/* Min-13, Max-13: any number of inputs of one dtype, all broadcast to the
 * output: y = op(x0, x1), then y = op(y, xk). Min and Max are idempotent, so
 * this stays right even when a later input is input 0's tensor again and
 * its buffer is the output's. */
static tgc_status variadic(tgc_kernel_ctx *c, const loop2_table loops) {
    tgc_status st = tgc_kernel_check_host(c, c->n_inputs > 1 ? c->n_inputs : 1, 1);
    if (st != TGC_OK) return st;
    tgc_value *y = &c->outputs[0];
    for (int k = 0; k < c->n_inputs; k++)
        if (c->inputs[k].dtype != y->dtype)
            return tgc_kernel_fail(c, "%s: input %d is %s, the output %s", tgc_kernel_op_name(c), k,
                                   tgc_dtype_name(c->inputs[k].dtype), tgc_dtype_name(y->dtype));
    const loop2 *loop = loop_for(loops, y->dtype);
    if (loop == NULL) return no_kernel(c, y->dtype);
    if (c->n_inputs == 1) {
        if ((st = tgc_kernel_need_like(c, y->dtype)) != TGC_OK) return st;
        copy_value(y, &c->inputs[0]);
        return TGC_OK;
    }
    st = run_binary(c, &c->inputs[0], &c->inputs[1], y, loop);
    for (int k = 2; k < c->n_inputs && st == TGC_OK; k++) st = run_binary(c, y, &c->inputs[k], y, loop);
    return st;
}

static tgc_status k_min(tgc_kernel_ctx *c) { return variadic(c, min_loops); }
static tgc_status k_max(tgc_kernel_ctx *c) { return variadic(c, max_loops); }

/* ==== Where ================================================================= */

/* y[i] = c[i*sc] ? x[i*sx] : z[i*sz], by element size (Where moves values
 * without reading them). */
typedef void (*row3_fn)(int64_t n, const uint8_t *c, int64_t sc, const void *x, int64_t sx, const void *z,
                        int64_t sz, void *y);

#define ROW3_BODY(T, R)                                                                          \
    const uint8_t *R cond = pc;                                                                  \
    const T *R x = px;                                                                           \
    const T *R z = pz;                                                                           \
    T *R y = py;                                                                                 \
    if (sc && sx && sz)                                                                          \
        for (int64_t i = 0; i < n; i++) y[i] = cond[i] ? x[i] : z[i];                            \
    else                                                                                         \
        for (int64_t i = 0; i < n; i++) y[i] = cond[i * sc] ? x[i * sx] : z[i * sz];

#define DEF_WHERE(name, T)                                                                       \
    static void name##_fast(int64_t n, const uint8_t *pc, int64_t sc, const void *px, int64_t sx, \
                            const void *pz, int64_t sz, void *py) {                              \
        ROW3_BODY(T, restrict)                                                                   \
    }                                                                                            \
    static void name##_alias(int64_t n, const uint8_t *pc, int64_t sc, const void *px, int64_t sx, \
                             const void *pz, int64_t sz, void *py) {                             \
        ROW3_BODY(T, )                                                                           \
    }
DEF_WHERE(where8, uint8_t)
DEF_WHERE(where16, uint16_t)
DEF_WHERE(where32, uint32_t)
DEF_WHERE(where64, uint64_t)

/* Where-16: bool condition, X and Y of one (any) dtype, all three broadcast. */
static tgc_status k_where(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 3, 1);
    if (st != TGC_OK) return st;
    const tgc_value *cv = &c->inputs[0], *x = &c->inputs[1], *z = &c->inputs[2], *y = &c->outputs[0];
    if (cv->dtype != TGC_BOOL || x->dtype != z->dtype || y->dtype != x->dtype)
        return tgc_kernel_fail(c, "Where: dtypes %s, %s, %s -> %s; expected bool, T, T -> T",
                               tgc_dtype_name(cv->dtype), tgc_dtype_name(x->dtype), tgc_dtype_name(z->dtype),
                               tgc_dtype_name(y->dtype));
    if (tgc_value_numel(y) == 0) return TGC_OK;
    tgc_cpu_bcast it;
    const tgc_value *ops[3] = {cv, x, z};
    if ((st = tgc_cpu_bcast_values(c, &it, y, 3, ops)) != TGC_OK) return st;
    bool alias = tgc_cpu_ew_overlap(y, cv) || tgc_cpu_ew_overlap(y, x) || tgc_cpu_ew_overlap(y, z);
    row3_fn fn;
    switch (tgc_dtype_size(y->dtype)) {
    case 1: fn = alias ? where8_alias : where8_fast; break;
    case 2: fn = alias ? where16_alias : where16_fast; break;
    case 4: fn = alias ? where32_alias : where32_fast; break;
    case 8: fn = alias ? where64_alias : where64_fast; break;
    default: return no_kernel(c, y->dtype);
    }
    size_t e = tgc_dtype_size(y->dtype);
    const uint8_t *pc = data_of(cv);
    const char *px = data_of(x), *pz = data_of(z);
    char *py = tgc_buffer_host_ptr(y->buf);
    for (int64_t r = 0; r < it.rows; r++, tgc_cpu_bcast_next(&it))
        fn(it.inner, pc + it.off[0], it.step[0], px + (size_t)it.off[1] * e, it.step[1],
           pz + (size_t)it.off[2] * e, it.step[2], py + (size_t)(r * it.inner) * e);
    return TGC_OK;
}

/* ==== Unary ops ============================================================= */

/* y[i] = OP(x[i], alpha) for i < n (alpha: LeakyRelu's; ignored by others). */
typedef void (*row1_fn)(int64_t n, const void *x, void *y, float alpha);

typedef struct loop1 {
    row1_fn fast, alias;
} loop1;

#define DEF_LOOP1(name, TX, TY, OP)                                                              \
    static void name##_fast(int64_t n, const void *px, void *py, float alpha) {                  \
        const TX *restrict x = px;                                                               \
        TY *restrict y = py;                                                                     \
        (void)alpha;                                                                             \
        for (int64_t i = 0; i < n; i++) y[i] = OP(x[i], alpha);                                  \
    }                                                                                            \
    static void name##_alias(int64_t n, const void *px, void *py, float alpha) {                 \
        const TX *x = px;                                                                        \
        TY *y = py;                                                                              \
        (void)alpha;                                                                             \
        for (int64_t i = 0; i < n; i++) y[i] = OP(x[i], alpha);                                  \
    }                                                                                            \
    static const loop1 name = {name##_fast, name##_alias};

/* Sigmoid without overflow: exp of a non-positive number only. */
static inline float sigmoid_f32(float x) {
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

/* The scalar ops as OP(x, alpha). Relu-14 is max(0, x) and LeakyRelu-16
 * alpha * x for x < 0: NaN passes through both, as in numpy. */
#define U_NEG_F32(x, p) (-(x))
#define U_ABS_F32(x, p) fabsf(x)
#define U_RELU(x, p) ((x) < 0 ? 0 : (x))
#define U_LEAKY(x, p) ((x) < 0 ? (p) * (x) : (x))
#define U_SIGMOID(x, p) sigmoid_f32(x)
#define U_TANH(x, p) tanhf(x)
#define U_EXP(x, p) expf(x)
#define U_LOG(x, p) logf(x)
#define U_SQRT(x, p) sqrtf(x)
#define U_ERF(x, p) erff(x)
#define U_NEG_I32(x, p) neg_i32(x)
#define U_NEG_I64(x, p) neg_i64(x)
#define U_ABS_I32(x, p) abs_i32(x)
#define U_ABS_I64(x, p) abs_i64(x)
#define U_SELF(x, p) (x)

DEF_LOOP1(neg_f32_loop, float, float, U_NEG_F32)
DEF_LOOP1(neg_i32_loop, int32_t, int32_t, U_NEG_I32)
DEF_LOOP1(neg_i64_loop, int64_t, int64_t, U_NEG_I64)
DEF_LOOP1(abs_f32_loop, float, float, U_ABS_F32)
DEF_LOOP1(abs_i32_loop, int32_t, int32_t, U_ABS_I32)
DEF_LOOP1(abs_i64_loop, int64_t, int64_t, U_ABS_I64)
DEF_LOOP1(abs_u8_loop, uint8_t, uint8_t, U_SELF)
DEF_LOOP1(relu_f32_loop, float, float, U_RELU)
DEF_LOOP1(relu_i32_loop, int32_t, int32_t, U_RELU)
DEF_LOOP1(relu_i64_loop, int64_t, int64_t, U_RELU)
DEF_LOOP1(leaky_f32_loop, float, float, U_LEAKY)
DEF_LOOP1(sigmoid_f32_loop, float, float, U_SIGMOID)
DEF_LOOP1(tanh_f32_loop, float, float, U_TANH)
DEF_LOOP1(exp_f32_loop, float, float, U_EXP)
DEF_LOOP1(log_f32_loop, float, float, U_LOG)
DEF_LOOP1(sqrt_f32_loop, float, float, U_SQRT)
DEF_LOOP1(erf_f32_loop, float, float, U_ERF)

typedef const loop1 *loop1_table[TGC_DTYPE_COUNT];

static const loop1_table neg_loops = {[TGC_FLOAT32] = &neg_f32_loop, [TGC_INT32] = &neg_i32_loop,
                                      [TGC_INT64] = &neg_i64_loop};
static const loop1_table abs_loops = {[TGC_FLOAT32] = &abs_f32_loop, [TGC_INT32] = &abs_i32_loop,
                                      [TGC_INT64] = &abs_i64_loop, [TGC_UINT8] = &abs_u8_loop};
static const loop1_table relu_loops = {[TGC_FLOAT32] = &relu_f32_loop, [TGC_INT32] = &relu_i32_loop,
                                       [TGC_INT64] = &relu_i64_loop};
static const loop1_table leaky_loops = {[TGC_FLOAT32] = &leaky_f32_loop};
static const loop1_table sigmoid_loops = {[TGC_FLOAT32] = &sigmoid_f32_loop};
static const loop1_table tanh_loops = {[TGC_FLOAT32] = &tanh_f32_loop};
static const loop1_table exp_loops = {[TGC_FLOAT32] = &exp_f32_loop};
static const loop1_table log_loops = {[TGC_FLOAT32] = &log_f32_loop};
static const loop1_table sqrt_loops = {[TGC_FLOAT32] = &sqrt_f32_loop};
static const loop1_table erf_loops = {[TGC_FLOAT32] = &erf_f32_loop};

/* One unary loop cut into pieces of EW_PIECE_ELEMS elements. */
typedef struct unary_job {
    row1_fn fn;
    const char *x;
    char *y;
    size_t ex, ey;
    int64_t numel;
    float alpha;
} unary_job;

static void unary_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const unary_job *j = arg;
    int64_t lo = piece * EW_PIECE_ELEMS, hi = lo + EW_PIECE_ELEMS < j->numel ? lo + EW_PIECE_ELEMS : j->numel;
    j->fn(hi - lo, j->x + (size_t)lo * j->ex, j->y + (size_t)lo * j->ey, j->alpha);
}

/* y = loop(x) elementwise, split over c->pool (x and y are the same buffer
 * or disjoint, so pieces are independent). */
static tgc_status unary(tgc_kernel_ctx *c, const loop1_table loops, float alpha) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, x->dtype)) != TGC_OK) return st;
    const loop1 *loop = x->dtype >= 0 && x->dtype < TGC_DTYPE_COUNT ? loops[x->dtype] : NULL;
    if (loop == NULL) return no_kernel(c, x->dtype);
    unary_job j = {.fn = tgc_cpu_ew_overlap(x, y) ? loop->alias : loop->fast, .x = data_of(x),
                   .y = tgc_buffer_host_ptr(y->buf), .ex = tgc_dtype_size(x->dtype), .ey = tgc_dtype_size(y->dtype),
                   .numel = tgc_value_numel(y), .alpha = alpha};
    tgc_parallel_for(c->pool, ew_pieces(j.numel), unary_piece, &j);
    return TGC_OK;
}

/* A float attribute, also accepted when written as an integer. */
static float attr_float(const tgc_kernel_ctx *c, const char *name, float dflt) {
    const tgc_attr *a = tgc_node_attr(c->node, name);
    if (a != NULL && a->type == TGC_ATTR_INT) return (float)a->i;
    return (float)tgc_kernel_attr_float(c, name, dflt);
}

static tgc_status k_neg(tgc_kernel_ctx *c) { return unary(c, neg_loops, 0); }
static tgc_status k_abs(tgc_kernel_ctx *c) { return unary(c, abs_loops, 0); }
static tgc_status k_relu(tgc_kernel_ctx *c) { return unary(c, relu_loops, 0); }
static tgc_status k_leaky_relu(tgc_kernel_ctx *c) {
    return unary(c, leaky_loops, attr_float(c, "alpha", 0.01f)); /* LeakyRelu-16: alpha defaults to 0.01 */
}
static tgc_status k_sigmoid(tgc_kernel_ctx *c) { return unary(c, sigmoid_loops, 0); }
static tgc_status k_tanh(tgc_kernel_ctx *c) { return unary(c, tanh_loops, 0); }
static tgc_status k_exp(tgc_kernel_ctx *c) { return unary(c, exp_loops, 0); }
static tgc_status k_log(tgc_kernel_ctx *c) { return unary(c, log_loops, 0); }
static tgc_status k_sqrt(tgc_kernel_ctx *c) { return unary(c, sqrt_loops, 0); }
static tgc_status k_erf(tgc_kernel_ctx *c) { return unary(c, erf_loops, 0); }

/* ==== Clip ================================================================== */

/* Clip-13: y = min(max(x, lo), hi), lo and hi optional scalar inputs
 * (default: the type's lowest and highest). As numpy.clip in ONNX's
 * reference implementation: lo > hi gives hi everywhere, NaN passes. */
#define DEF_CLIP(s, T)                                                                           \
    static void clip_##s(int64_t n, const void *px, void *py, const void *plo, const void *phi, T lo0, \
                         T hi0) {                                                                \
        const T lo = plo ? *(const T *)plo : lo0, hi = phi ? *(const T *)phi : hi0;              \
        const T *x = px;                                                                         \
        T *y = py;                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                        \
            T v = x[i];                                                                          \
            v = v < lo ? lo : v;                                                                 \
            y[i] = v > hi ? hi : v;                                                              \
        }                                                                                        \
    }
DEF_CLIP(f32, float)
DEF_CLIP(i32, int32_t)
DEF_CLIP(i64, int64_t)
DEF_CLIP(u8, uint8_t)

static tgc_status k_clip(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, x->dtype)) != TGC_OK) return st;
    const void *bound[2] = {NULL, NULL};
    for (int i = 1; i <= 2; i++) {
        if (!tgc_kernel_has_input(c, i)) continue;
        const tgc_value *b = &c->inputs[i];
        if (b->dtype != x->dtype || tgc_value_numel(b) != 1)
            return tgc_kernel_fail(c, "Clip: input %d ('%s') must be one %s element; it is %s with %lld",
                                   i, i == 1 ? "min" : "max", tgc_dtype_name(x->dtype),
                                   tgc_dtype_name(b->dtype), (long long)tgc_value_numel(b));
        bound[i - 1] = data_of(b);
    }
    int64_t n = tgc_value_numel(y);
    const void *px = data_of(x);
    void *py = tgc_buffer_host_ptr(y->buf);
    if (n == 0) return TGC_OK;
    switch (x->dtype) {
    case TGC_FLOAT32: clip_f32(n, px, py, bound[0], bound[1], -INFINITY, INFINITY); break;
    case TGC_INT32: clip_i32(n, px, py, bound[0], bound[1], INT32_MIN, INT32_MAX); break;
    case TGC_INT64: clip_i64(n, px, py, bound[0], bound[1], INT64_MIN, INT64_MAX); break;
    case TGC_UINT8: clip_u8(n, px, py, bound[0], bound[1], 0, UINT8_MAX); break;
    default: return no_kernel(c, x->dtype);
    }
    return TGC_OK;
}

/* ==== Cast and Identity ===================================================== */

/* Cast-13 between tgc's dtypes. A source is read as a float (float32,
 * float16), an integer (int32, int64, uint8, widened to int64) or a bool;
 * then stored:
 *   float -> int32/int64  truncated toward zero, as C converts (out of range
 *                         saturates and NaN gives 0: undefined in C);
 *   float -> uint8        truncated to int64, then modulo 256 (what numpy's
 *                         astype gives in ONNX's reference on x86);
 *   int -> narrower int   modulo 2^bits (two's complement), as numpy;
 *   any -> bool           x != 0 (NaN is true); bool -> any: 0 or 1;
 *   -> float16            rounded to nearest even (support/half.h).
 * Loops run backwards when the output widens and overlaps the input (a
 * forwarded buffer), so no element is overwritten before it is read. */
typedef void (*cast_fn)(int64_t n, const void *x, void *y, bool backwards);

#define LD_F32(v) (v)
#define LD_F16(v) tgc_half_to_float(v)
#define LD_INT(v) ((int64_t)(v))
#define LD_BOOL(v) ((v) != 0)

#define ST_F32_F(v) (v)
#define ST_F32_I(v) ((float)(v))
#define ST_F32_B(v) ((v) ? 1.0f : 0.0f)
#define ST_F16_F(v) tgc_float_to_half(v)
#define ST_F16_I(v) tgc_float_to_half((float)(v))
#define ST_F16_B(v) ((uint16_t)((v) ? 0x3C00 : 0))
#define ST_I32_F(v) d2i32(v)
#define ST_I32_I(v) ((int32_t)(uint32_t)(v))
#define ST_I32_B(v) ((int32_t)(v))
#define ST_I64_F(v) d2i64(v)
#define ST_I64_I(v) (v)
#define ST_I64_B(v) ((int64_t)(v))
#define ST_U8_F(v) ((uint8_t)d2i64(v))
#define ST_U8_I(v) ((uint8_t)(v))
#define ST_U8_B(v) ((uint8_t)(v))
#define ST_B8_F(v) ((uint8_t)((v) != 0))
#define ST_B8_I(v) ((uint8_t)((v) != 0))
#define ST_B8_B(v) ((uint8_t)(v))

#define DEF_CAST(name, S, D, LOAD, STORE)                                                        \
    static void name(int64_t n, const void *px, void *py, bool backwards) {                     \
        const S *x = px;                                                                         \
        D *y = py;                                                                               \
        if (backwards)                                                                           \
            for (int64_t i = n; i-- > 0;) y[i] = STORE(LOAD(x[i]));                              \
        else                                                                                     \
            for (int64_t i = 0; i < n; i++) y[i] = STORE(LOAD(x[i]));                            \
    }

/* One source dtype to every other; K is the source's kind (F, I or B). */
#define DEF_CASTS_FROM(s, S, LOAD, K)                                                            \
    DEF_CAST(cast_##s##_f32, S, float, LOAD, ST_F32_##K)                                         \
    DEF_CAST(cast_##s##_f16, S, uint16_t, LOAD, ST_F16_##K)                                      \
    DEF_CAST(cast_##s##_i32, S, int32_t, LOAD, ST_I32_##K)                                       \
    DEF_CAST(cast_##s##_i64, S, int64_t, LOAD, ST_I64_##K)                                       \
    DEF_CAST(cast_##s##_u8, S, uint8_t, LOAD, ST_U8_##K)                                         \
    DEF_CAST(cast_##s##_b8, S, uint8_t, LOAD, ST_B8_##K)
DEF_CASTS_FROM(f32, float, LD_F32, F)
DEF_CASTS_FROM(f16, uint16_t, LD_F16, F)
DEF_CASTS_FROM(i32, int32_t, LD_INT, I)
DEF_CASTS_FROM(i64, int64_t, LD_INT, I)
DEF_CASTS_FROM(u8, uint8_t, LD_INT, I)
DEF_CASTS_FROM(b8, uint8_t, LD_BOOL, B)

/* [source][destination], in tgc_dtype order; the diagonal copies bytes. */
#define CAST_ROW(s)                                                                              \
    {cast_##s##_f32, cast_##s##_f16, cast_##s##_i32, cast_##s##_i64, cast_##s##_u8, cast_##s##_b8}
static const cast_fn cast_fns[TGC_DTYPE_COUNT][TGC_DTYPE_COUNT] = {
    [TGC_FLOAT32] = CAST_ROW(f32), [TGC_FLOAT16] = CAST_ROW(f16), [TGC_INT32] = CAST_ROW(i32),
    [TGC_INT64] = CAST_ROW(i64),   [TGC_UINT8] = CAST_ROW(u8),    [TGC_BOOL] = CAST_ROW(b8),
};

static tgc_status k_cast(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    int64_t to = tgc_kernel_attr_int(c, "to", -1);
    tgc_dtype dt = tgc_dtype_from_onnx(to);
    if (dt == TGC_DTYPE_INVALID)
        return tgc_kernel_fail(c, "Cast: 'to' is %lld, not a supported type", (long long)to);
    if ((st = tgc_kernel_need_like(c, dt)) != TGC_OK) return st;
    if (x->dtype < 0 || x->dtype >= TGC_DTYPE_COUNT) return no_kernel(c, x->dtype);
    int64_t n = tgc_value_numel(y);
    if (n == 0) return TGC_OK;
    if (x->dtype == dt) {
        copy_value(&c->outputs[0], x);
        return TGC_OK;
    }
    bool backwards = tgc_cpu_ew_overlap(x, y) && tgc_dtype_size(dt) > tgc_dtype_size(x->dtype);
    cast_fns[x->dtype][dt](n, data_of(x), tgc_buffer_host_ptr(y->buf), backwards);
    return TGC_OK;
}

/* Identity-16: any dtype; nothing to do when the buffer was forwarded. */
static tgc_status k_identity(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    if ((st = tgc_kernel_need_like(c, c->inputs[0].dtype)) != TGC_OK) return st;
    copy_value(&c->outputs[0], &c->inputs[0]);
    return TGC_OK;
}

/* ==== The list ============================================================== */

#define DTYPES(...) {__VA_ARGS__, TGC_DTYPE_INVALID}
#define DT_ARITH DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8)
#define DT_SIGNED DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64)
#define DT_F32 DTYPES(TGC_FLOAT32)
#define DT_ALL DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_INT32, TGC_INT64, TGC_UINT8, TGC_BOOL)
#define EW(name, f, dt) {.op = name, .kind = TGC_DEVICE_CPU, .fn = f, .forward_input = 0, .dtypes = dt}

const tgc_kernel_def tgc_cpu_kernels_elementwise[] = {
    {.op = "Add", .kind = TGC_DEVICE_CPU, .fn = k_add, .forward_input = 0, .dtypes = DT_ARITH, .fuses_relu = true},
    EW("Sub", k_sub, DT_ARITH),
    EW("Mul", k_mul, DT_ARITH),
    EW("Div", k_div, DT_ARITH),
    EW("Pow", k_pow, DT_SIGNED),
    EW("Neg", k_neg, DT_SIGNED),
    EW("Abs", k_abs, DT_ARITH),
    EW("Relu", k_relu, DT_SIGNED),
    EW("LeakyRelu", k_leaky_relu, DT_F32),
    EW("Sigmoid", k_sigmoid, DT_F32),
    EW("Tanh", k_tanh, DT_F32),
    EW("Exp", k_exp, DT_F32),
    EW("Log", k_log, DT_F32),
    EW("Sqrt", k_sqrt, DT_F32),
    EW("Erf", k_erf, DT_F32),
    EW("Min", k_min, DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_INT32, TGC_INT64, TGC_UINT8)),
    EW("Max", k_max, DTYPES(TGC_FLOAT32, TGC_FLOAT16, TGC_INT32, TGC_INT64, TGC_UINT8)),
    {.op = "Clip", .kind = TGC_DEVICE_CPU, .fn = k_clip, .host_inputs = (1u << 1) | (1u << 2),
     .forward_input = 0, .dtypes = DT_ARITH},
    EW("Where", k_where, DTYPES(TGC_BOOL)),
    EW("Equal", k_equal, DTYPES(TGC_FLOAT32, TGC_INT32, TGC_INT64, TGC_UINT8, TGC_BOOL)),
    EW("Less", k_less, DT_ARITH),
    EW("Greater", k_greater, DT_ARITH),
    EW("Cast", k_cast, DT_ALL),
    EW("Identity", k_identity, DTYPES(TGC_DTYPE_INVALID)),
    {.op = NULL},
};
