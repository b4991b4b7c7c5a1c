/* The cpu elementwise kernels, ONNX opset 17 semantics:
 *     every row of graph/elementwise.def (arithmetic, activations, math,
 *                  Min/Max/Mean (variadic), Clip, comparisons, logic,
 *                  BitShift, Mod, IsNaN/IsInf, rounding, PRelu), through the
 *                  vector loops generated from it (devices/cpu/ew.h)
 *     Pow          also an integer base or exponent (exact through double)
 *     Where        any dtype, moved by element size
 *     Cast         all pairs of tgc's dtypes (string: string_cast.c); CastLike (Cast to input 1's dtype)
 *     Identity     any dtype
 * and tgc_cpu_kernels_elementwise[], the list the registry reads.
 *
 * Binary and ternary ops walk the broadcast output a row at a time
 * (broadcast.h), so equal shapes and a scalar operand are single tight
 * rows. Every loop is cut into pieces of EW_PIECE_ELEMS output elements
 * over the device's pool; pieces depend on the sizes alone and each
 * element is computed alone, so no split changes a bit.
 *
 * In place: every kernel here but Mean's declares forward_input = 0, so the executor
 * may hand output 0 the buffer of input 0 (when it has the output's size,
 * hence input 0's shape). Every loop reads element i (a generated loop: its
 * whole vector) before it writes it.
 *
 * Integer arithmetic wraps around in two's complement, as ONNX runtimes do
 * in practice (the spec says nothing of overflow); C's undefined signed
 * overflow is avoided by computing in unsigned types (here) or with
 * -fwrapv (the generated loops). */
#include "devices/cpu/broadcast.h"
#include "devices/cpu/string_cast.h"
#include "devices/cpu/ew.h"
#include "devices/cpu/kernels_nn.h"

#include "support/alloc.h"
#include "support/checked.h"
#include "support/dtype_elem.h"

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

static bool valid_dtype(tgc_dtype t) { return t >= 0 && t < TGC_DTYPE_COUNT; }

static tgc_status no_kernel(tgc_kernel_ctx *c, tgc_dtype dtype) {
    return tgc_kernel_fail(c, "%s: the cpu has no kernel for %s", tgc_kernel_op_name(c), tgc_dtype_name(dtype));
}

/* True when some element of the integer tensor v (any dtype) is zero
 * (want_negative false) or negative (true). Floats are never flagged. */
static bool int_tensor_has(const tgc_value *v, bool want_negative) {
    if (tgc_dtype_is_float(v->dtype) || (want_negative && !tgc_dtype_is_signed_int(v->dtype))) return false;
    int64_t n = tgc_value_numel(v);
    const void *p = data_of(v);
    for (int64_t i = 0; i < n; i++) {
        int64_t x = tgc_elem_as_int64(v->dtype, p, i);
        if (want_negative ? x < 0 : x == 0) return true;
    }
    return false;
}

/* Pow-15: the output has the base's type (float16, float32, float64,
 * bfloat16, int32, int64); the exponent may be any numeric type. A float
 * base with an exponent of its own dtype is the Pow row's; any other
 * exponent goes through pow in double (exact up to 2^53, as ONNX Runtime's
 * std::pow), rounded once to the base's dtype. An integer base with an
 * integer exponent multiplies (wrapping); negative integer exponents are
 * refused before the loop runs, as numpy.power refuses them in ONNX's
 * reference implementation. An integer base with a float exponent computes
 * in double and truncates toward zero. */
static inline int64_t ipow(int64_t a, int64_t b) {
    uint64_t r = 1, x = (uint64_t)a;
    for (; b > 0; b >>= 1, x *= x)
        if (b & 1) r *= x;
    return (int64_t)r;
}

/* ==== Pieces over the pool ================================================== */

/* The least work worth a piece of its own in an elementwise loop, in output
 * elements (several microseconds for the arithmetic ops: a hand-off to a
 * waiting worker costs about one). Pieces are fixed runs of the output, so
 * the split depends on the sizes alone (each element is computed alone
 * anyway, so no split changes a bit). A multiple of every vector's lanes. */
#define EW_PIECE_ELEMS ((int64_t)32768)

/* The pieces an elementwise loop over n output elements is cut into. */
static int64_t ew_pieces(int64_t n) { return (n + EW_PIECE_ELEMS - 1) / EW_PIECE_ELEMS; }

/* A binary row loop: a generated one, or one of Pow's mixed-dtype loops. */
typedef void (*row2_fn)(int64_t n, const void *a, int64_t sa, const void *b, int64_t sb, void *y,
                        const tgc_ew_params *p);

/* One binary loop over a broadcast output, cut into pieces. */
typedef struct binary_job {
    const tgc_cpu_bcast *it; /* the walk, at row 0; each piece seeks its own copy */
    const char *pa, *pb;
    char *py;
    size_t ea, eb, ey;
    row2_fn fn;
    const tgc_ew_params *params; /* the row's P0..P2; NULL: none */
    int64_t numel;
    const tgc_fused_act *act; /* a fused activation (float32 output), applied to each piece */
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
              j->pb + (size_t)(it.off[1] + col * it.step[1]) * j->eb, it.step[1], j->py + (size_t)at * j->ey,
              j->params);
        at += len;
        col = 0;
        if (at < hi) tgc_cpu_bcast_next(&it);
    }
    if (j->act != NULL) tgc_cpu_act_block(j->act, (float *)(void *)j->py, 0, 0, 1, lo, hi);
}

/* Output elements [piece * EW_PIECE_ELEMS, ...) when neither operand needs
 * the broadcast walk: each has the output's shape (step 1) or is one
 * element (step 0). */
static void flat_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const binary_job *j = arg;
    int64_t lo = piece * EW_PIECE_ELEMS, hi = lo + EW_PIECE_ELEMS < j->numel ? lo + EW_PIECE_ELEMS : j->numel;
    int64_t sa = j->it->step[0], sb = j->it->step[1];
    j->fn(hi - lo, j->pa + (size_t)(lo * sa) * j->ea, sa, j->pb + (size_t)(lo * sb) * j->eb, sb,
          j->py + (size_t)lo * j->ey, j->params);
    if (j->act != NULL) tgc_cpu_act_block(j->act, (float *)(void *)j->py, 0, 0, 1, lo, hi);
}

/* How x is read for output y without the broadcast walk: 1 when it has
 * y's shape (leading dims of 1 aside), 0 when it is one element of rank at
 * most y's, -1 otherwise (the walk decides, and reports a bad shape). */
static int flat_step(const tgc_value *x, const tgc_value *y) {
    if (x->rank > y->rank) return -1;
    bool same = true, one = true;
    for (int d = 0; d < y->rank; d++) {
        int di = d - (y->rank - x->rank);
        int64_t xd = di >= 0 ? x->dims[di] : 1;
        same &= xd == y->dims[d];
        one &= xd == 1;
    }
    return same ? 1 : one ? 0 : -1;
}

/* y = fn(a, b) over the broadcast output y (all checked by the caller),
 * with parameters params (NULL: none), split over c->pool. Pieces write disjoint parts of y, and an output that
 * overlaps an input is input 0's own buffer (forwarding needs the output's
 * size), element for element, so a piece reads only what it writes. */
static tgc_status run_binary(tgc_kernel_ctx *c, const tgc_value *a, const tgc_value *b, const tgc_value *y,
                             row2_fn fn, const tgc_ew_params *params) {
    int64_t numel = tgc_value_numel(y);
    if (numel == 0) return TGC_OK;
    tgc_cpu_bcast it;
    int sa = flat_step(a, y), sb = flat_step(b, y);
    bool flat = sa >= 0 && sb >= 0; /* the common cases, without setting up a walk */
    if (flat) {
        it.step[0] = sa;
        it.step[1] = sb;
    } else {
        const tgc_value *ops[2] = {a, b};
        tgc_status st = tgc_cpu_bcast_values(c, &it, y, 2, ops);
        if (st != TGC_OK) return st;
    }
    binary_job j = {.it = &it, .pa = data_of(a), .pb = data_of(b), .py = tgc_buffer_host_ptr(y->buf),
                    .ea = tgc_dtype_size(a->dtype), .eb = tgc_dtype_size(b->dtype), .ey = tgc_dtype_size(y->dtype),
                    .fn = fn, .params = params, .numel = numel, .act = y->dtype == TGC_FLOAT32 ? c->fused_act : NULL};
    tgc_parallel_for(c->pool, ew_pieces(numel), flat ? flat_piece : binary_piece, &j);
    return TGC_OK;
}

/* One unary loop cut into pieces of EW_PIECE_ELEMS elements. */
typedef struct unary_job {
    tgc_ew_unary_fn fn;
    const char *x;
    char *y;
    size_t ex, ey;
    int64_t numel;
    const tgc_ew_params *params;
} unary_job;

static void unary_piece(void *arg, int64_t piece, int slot) {
    (void)slot;
    const unary_job *j = arg;
    int64_t lo = piece * EW_PIECE_ELEMS, hi = lo + EW_PIECE_ELEMS < j->numel ? lo + EW_PIECE_ELEMS : j->numel;
    j->fn(hi - lo, j->x + (size_t)lo * j->ex, j->y + (size_t)lo * j->ey, j->params);
}

/* y = fn(x) elementwise, split over c->pool (x and y are the same buffer
 * or disjoint, so pieces are independent). */
static void run_unary(tgc_kernel_ctx *c, const tgc_value *x, const tgc_value *y, tgc_ew_unary_fn fn,
                      const tgc_ew_params *params) {
    unary_job j = {.fn = fn, .x = data_of(x), .y = tgc_buffer_host_ptr(y->buf), .ex = tgc_dtype_size(x->dtype),
                   .ey = tgc_dtype_size(y->dtype), .numel = tgc_value_numel(y), .params = params};
    tgc_parallel_for(c->pool, ew_pieces(j.numel), unary_piece, &j);
}

/* The fused epilogue over C[r0..r1, c0..c1): the residual added by the
 * Add row's float32 loop, then the activation by its row's, a row of C
 * at a time through both while it is in cache (rows that follow each
 * other in memory, ldc their width, as one: a call a block). */
void tgc_cpu_act_block(const tgc_fused_act *act, float *c, int64_t ldc, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1) {
    if (act == NULL) return;
    const tgc_ew_loops *loops = tgc_cpu_ew_loops();
    tgc_ew_binary_fn add = act->residual != NULL ? loops->binary[TGC_EW_Add][TGC_FLOAT32] : NULL;
    tgc_ew_unary_fn fn = act->row >= 0 ? loops->unary[act->row][TGC_FLOAT32] : NULL;
    tgc_ew_params p;
    memset(&p, 0, sizeof p);
    for (int k = 0; k < 3; k++) {
        p.f[k] = act->params[k];
        p.d[k] = act->params[k];
        p.i[k] = tgc_ew_param_int(act->params[k]); /* float rows read f */
    }
    if (c1 - c0 == ldc && r1 - r0 > 1) {
        c += r0 * ldc;
        c1 = c0 + (r1 - r0) * ldc;
        r0 = 0, r1 = 1;
    }
    for (int64_t r = r0; r < r1; r++) {
        float *y = c + r * ldc + c0;
        if (add != NULL) add(c1 - c0, y, 1, act->residual + (y - act->out), 1, y, &p);
        if (fn != NULL) fn(c1 - c0, y, y, &p);
    }
}

/* ==== The rows of graph/elementwise.def ========================================== */

static tgc_status run_unary_row(tgc_kernel_ctx *c, const tgc_ew_row *r) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, r->bool_out ? TGC_BOOL : x->dtype)) != TGC_OK) return st;
    tgc_ew_unary_fn fn = valid_dtype(x->dtype) ? tgc_cpu_ew_loops()->unary[tgc_ew_id(r)][x->dtype] : NULL;
    if (fn == NULL) return no_kernel(c, x->dtype);
    tgc_ew_params p;
    if ((st = tgc_ew_read_params(c, r, &p)) == TGC_OK && tgc_value_numel(y) > 0) run_unary(c, x, y, fn, &p);
    return st;
}

static tgc_status k_pow(tgc_kernel_ctx *c);

/* A binary row: two inputs of one dtype, or Min/Max/Mean's one or more
 * (folded pairwise: y = op(x0, x1), then y = op(y, xk); Min and Max are
 * idempotent, so this stays right when a later input is input 0's tensor
 * again and its buffer is the output's; Mean is never forwarded one, and
 * divides at the last pass).
 * Integer Div refuses a zero divisor first. */
static tgc_status run_binary_row(tgc_kernel_ctx *c, const tgc_ew_row *r) {
    tgc_ew_op id = tgc_ew_id(r);
    bool variadic = id == TGC_EW_Min || id == TGC_EW_Max || id == TGC_EW_Mean;
    if (id == TGC_EW_Pow && (c->n_inputs != 2 || c->inputs[0].dtype != c->inputs[1].dtype ||
                             !(r->dtypes & (1u << c->inputs[0].dtype))))
        return k_pow(c); /* an integer base or exponent */
    tgc_status st = tgc_kernel_check_host(c, variadic && c->n_inputs >= 1 ? c->n_inputs : 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_ew_check_binary_dtypes(c, r)) != TGC_OK) return st;
    tgc_ew_binary_fn fn = valid_dtype(a->dtype) ? tgc_cpu_ew_loops()->binary[id][a->dtype] : NULL;
    if (fn == NULL) return no_kernel(c, a->dtype);
    if (c->n_inputs == 1) { /* Min, Max or Mean of one input */
        if ((st = tgc_kernel_need_like(c, y->dtype)) != TGC_OK) return st;
        copy_value(&c->outputs[0], a);
        return TGC_OK;
    }
    if (id == TGC_EW_Div && !tgc_dtype_is_float(a->dtype) && int_tensor_has(&c->inputs[1], false))
        return tgc_kernel_fail(c, "division by zero in Div (%s)", tgc_dtype_name(a->dtype));
    tgc_ew_params p;
    if ((st = tgc_ew_read_params(c, r, &p)) != TGC_OK) return st;
    for (int k = 1; k < c->n_inputs && st == TGC_OK; k++) {
        if (id == TGC_EW_Mean && k == c->n_inputs - 1) p.f[0] = (float)c->n_inputs, p.d[0] = c->n_inputs;
        st = run_binary(c, k == 1 ? a : y, &c->inputs[k], y, fn, &p);
    }
    return st;
}

/* A kernel per row: k_ew_<Op>. */
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)                                            \
    static tgc_status k_ew_##op(tgc_kernel_ctx *c) { return run_unary_row(c, &tgc_ew_rows[TGC_EW_##op]); }
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr)                                             \
    static tgc_status k_ew_##op(tgc_kernel_ctx *c) { return run_binary_row(c, &tgc_ew_rows[TGC_EW_##op]); }
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) EW_BINARY(op, cls, out, infer, fexpr, iexpr)
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_BINARY
#undef EW_PREDICATE
#undef EW_BINARY_ATTRS

/* ==== Where ================================================================= */

/* y[i] = c[i*sc] ? x[i*sx] : z[i*sz], by element size (Where moves values
 * without reading them). */
typedef void (*row3_fn)(int64_t n, const uint8_t *c, int64_t sc, const void *x, int64_t sx, const void *z,
                        int64_t sz, void *y);

/* Branch-free: the condition byte becomes a mask of T's width (all ones
 * or zero) that blends x and z, which the compiler turns into vector
 * compare-and-blend. T is an unsigned type of the element's size. */
#define ROW3_BODY(T, R)                                                                          \
    const uint8_t *R cond = pc;                                                                  \
    const T *R x = px;                                                                           \
    const T *R z = pz;                                                                           \
    T *R y = py;                                                                                 \
    if (sc && sx && sz)                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                        \
            T m = (T)((T)0 - (T)(cond[i] != 0));                                                 \
            y[i] = (T)((x[i] & m) | (z[i] & (T)~m));                                             \
        }                                                                                        \
    else                                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                        \
            T m = (T)((T)0 - (T)(cond[i * sc] != 0));                                            \
            y[i] = (T)((x[i * sx] & m) | (z[i * sz] & (T)~m));                                   \
        }

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

/* ==== Cast and Identity ===================================================== */

/* Cast-13 between all of tgc's dtypes. A source is read as a double (the
 * floats: exact) or as an integer of its own C type (bool as 0 or 1), then
 * stored:
 *   float -> int32/int64/uint64  truncated toward zero, as C converts (out
 *                         of range saturates and NaN gives 0: undefined in
 *                         C, unspecified in ONNX);
 *   float -> int8/int16/uint8/uint16/uint32  truncated to int64, then
 *                         modulo 2^bits (what numpy's astype gives in
 *                         ONNX's reference on x86);
 *   int -> narrower int   modulo 2^bits (two's complement), as numpy;
 *   int -> float          rounded to nearest even by C's conversion;
 *   any -> bool           x != 0 (NaN is true); bool -> any: 0 or 1;
 *   -> float16, bfloat16  rounded once to nearest even (support/half.h):
 *                         a double goes to float rounding to odd first, so
 *                         the second rounding cannot double-round (Boldo and
 *                         Melquiond, "Emulation of FMA and correctly rounded
 *                         sums: proved algorithms using rounding to odd",
 *                         2008); float32 <-> float16 goes through the ISA's
 *                         vector conversion, F16C, where it has one
 *                         (devices/cpu/ew.h).
 * Loops run backwards when the output widens and overlaps the input (a
 * forwarded buffer), so no element is overwritten before it is read. */
typedef void (*cast_fn)(int64_t n, const void *x, void *y, bool backwards);

/* d rounded to a float with round-to-odd: truncated toward zero, and the
 * last bit set when that was inexact. NaN and infinities pass. */
static inline float f64_to_f32_odd(double d) {
    float f = (float)d;
    if (d != d || (double)f == d) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u |= 1u;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint64_t d2u64(double v) {
    if (v != v) return 0;
    if (v >= 18446744073709551616.0) return UINT64_MAX;
    if (v < 0) return (uint64_t)d2i64(v); /* wraps, as the narrower types */
    return (uint64_t)v;
}

#define LD_F32(v) ((double)(v))
#define LD_F16(v) ((double)tgc_half_to_float(v))
#define LD_BF16(v) ((double)tgc_bf16_to_float(v))
#define LD_F64(v) (v)
#define LD_INT(v) (v)
#define LD_BOOL(v) ((v) != 0)

/* Stores by destination: _F from a double, _N from an integer. */
#define ST_f32_F(v) ((float)(v))
#define ST_f32_N(v) ((float)(v))
#define ST_f64_F(v) (v)
#define ST_f64_N(v) ((double)(v))
#define ST_f16_F(v) tgc_float_to_half(f64_to_f32_odd(v))
#define ST_f16_N(v) tgc_float_to_half(f64_to_f32_odd((double)(v)))
#define ST_bf16_F(v) tgc_float_to_bf16(f64_to_f32_odd(v))
#define ST_bf16_N(v) tgc_float_to_bf16(f64_to_f32_odd((double)(v)))
#define ST_i32_F(v) d2i32(v)
#define ST_i64_F(v) d2i64(v)
#define ST_u64_F(v) d2u64(v)
#define ST_i8_F(v) ((int8_t)(uint8_t)(uint64_t)d2i64(v))
#define ST_i16_F(v) ((int16_t)(uint16_t)(uint64_t)d2i64(v))
#define ST_u8_F(v) ((uint8_t)(uint64_t)d2i64(v))
#define ST_u16_F(v) ((uint16_t)(uint64_t)d2i64(v))
#define ST_u32_F(v) ((uint32_t)(uint64_t)d2i64(v))
#define ST_i8_N(v) ((int8_t)(uint8_t)(uint64_t)(v))
#define ST_i16_N(v) ((int16_t)(uint16_t)(uint64_t)(v))
#define ST_i32_N(v) ((int32_t)(uint32_t)(uint64_t)(v))
#define ST_i64_N(v) ((int64_t)(uint64_t)(v))
#define ST_u8_N(v) ((uint8_t)(uint64_t)(v))
#define ST_u16_N(v) ((uint16_t)(uint64_t)(v))
#define ST_u32_N(v) ((uint32_t)(uint64_t)(v))
#define ST_u64_N(v) ((uint64_t)(v))
#define ST_b8_F(v) ((uint8_t)((v) != 0))
#define ST_b8_N(v) ((uint8_t)((v) != 0))

#define DEF_CAST(name, S, D, LOAD, STORE)                                                        \
    static void name(int64_t n, const void *px, void *py, bool backwards) {                     \
        const S *x = px;                                                                         \
        D *y = py;                                                                               \
        if (backwards)                                                                           \
            for (int64_t i = n; i-- > 0;) y[i] = STORE(LOAD(x[i]));                              \
        else                                                                                     \
            for (int64_t i = 0; i < n; i++) y[i] = STORE(LOAD(x[i]));                            \
    }

/* Every dtype: (suffix, tgc_dtype, C type, load, kind: F float, N integer).
 * Adding a dtype to Cast is one line in each list (the same line twice:
 * the preprocessor cannot nest a list inside itself). */
#define CAST_SOURCES(X, ...)                                                                     \
    X(f32, TGC_FLOAT32, float, LD_F32, F, __VA_ARGS__)                                           \
    X(f16, TGC_FLOAT16, uint16_t, LD_F16, F, __VA_ARGS__)                                        \
    X(bf16, TGC_BFLOAT16, uint16_t, LD_BF16, F, __VA_ARGS__)                                     \
    X(f64, TGC_FLOAT64, double, LD_F64, F, __VA_ARGS__)                                          \
    X(i8, TGC_INT8, int8_t, LD_INT, N, __VA_ARGS__)                                              \
    X(i16, TGC_INT16, int16_t, LD_INT, N, __VA_ARGS__)                                           \
    X(i32, TGC_INT32, int32_t, LD_INT, N, __VA_ARGS__)                                           \
    X(i64, TGC_INT64, int64_t, LD_INT, N, __VA_ARGS__)                                           \
    X(u8, TGC_UINT8, uint8_t, LD_INT, N, __VA_ARGS__)                                            \
    X(u16, TGC_UINT16, uint16_t, LD_INT, N, __VA_ARGS__)                                         \
    X(u32, TGC_UINT32, uint32_t, LD_INT, N, __VA_ARGS__)                                         \
    X(u64, TGC_UINT64, uint64_t, LD_INT, N, __VA_ARGS__)                                         \
    X(b8, TGC_BOOL, uint8_t, LD_BOOL, N, __VA_ARGS__)
#define CAST_DESTS(X, ...)                                                                       \
    X(f32, TGC_FLOAT32, float, LD_F32, F, __VA_ARGS__)                                           \
    X(f16, TGC_FLOAT16, uint16_t, LD_F16, F, __VA_ARGS__)                                        \
    X(bf16, TGC_BFLOAT16, uint16_t, LD_BF16, F, __VA_ARGS__)                                     \
    X(f64, TGC_FLOAT64, double, LD_F64, F, __VA_ARGS__)                                          \
    X(i8, TGC_INT8, int8_t, LD_INT, N, __VA_ARGS__)                                              \
    X(i16, TGC_INT16, int16_t, LD_INT, N, __VA_ARGS__)                                           \
    X(i32, TGC_INT32, int32_t, LD_INT, N, __VA_ARGS__)                                           \
    X(i64, TGC_INT64, int64_t, LD_INT, N, __VA_ARGS__)                                           \
    X(u8, TGC_UINT8, uint8_t, LD_INT, N, __VA_ARGS__)                                            \
    X(u16, TGC_UINT16, uint16_t, LD_INT, N, __VA_ARGS__)                                         \
    X(u32, TGC_UINT32, uint32_t, LD_INT, N, __VA_ARGS__)                                         \
    X(u64, TGC_UINT64, uint64_t, LD_INT, N, __VA_ARGS__)                                         \
    X(b8, TGC_BOOL, uint8_t, LD_BOOL, N, __VA_ARGS__)

/* cast_<s>_<d> for every pair (the diagonal is never called: it copies). */
#define CAST_TO(d, dt, D, dload, dk, s, S, LOAD, K) DEF_CAST(cast_##s##_##d, S, D, LOAD, ST_##d##_##K)
#define CAST_FROM(s, st, S, LOAD, K, unused) CAST_DESTS(CAST_TO, s, S, LOAD, K)
CAST_SOURCES(CAST_FROM, 0)

/* [source][destination]. */
#define CAST_ENTRY(d, dt, D, dload, dk, s, st) [st][dt] = cast_##s##_##d,
#define CAST_ROW(s, st, S, LOAD, K, unused) CAST_DESTS(CAST_ENTRY, s, st)
static const cast_fn cast_fns[TGC_DTYPE_COUNT][TGC_DTYPE_COUNT] = {CAST_SOURCES(CAST_ROW, 0)};

bool tgc_cpu_cast_elements(tgc_dtype from, const void *x, tgc_dtype to, void *y, int64_t n) {
    if (!valid_dtype(from) || !valid_dtype(to) || n < 0 || from == TGC_STRING || to == TGC_STRING) return false;
    if (from == to) {
        if (n > 0) memcpy(y, x, (size_t)n * tgc_dtype_size(to));
        return true;
    }
    const tgc_ew_loops *l = tgc_cpu_ew_loops(); /* x and y do not overlap: the vector conversions */
    if (from == TGC_FLOAT16 && to == TGC_FLOAT32) l->half_to_float(n, x, y);
    else if (from == TGC_FLOAT32 && to == TGC_FLOAT16) l->float_to_half(n, x, y);
    else cast_fns[from][to](n, x, y, false);
    return true;
}

float *tgc_cpu_widened_copy(tgc_dtype from, const void *x, int64_t n) {
    size_t bytes;
    if (n < 0 || !tgc_checked_nbytes(n, sizeof(float), &bytes)) return NULL;
    float *out = tgc_malloc(bytes > 0 ? bytes : 1);
    if (out != NULL && !tgc_cpu_cast_elements(from, x, TGC_FLOAT32, out, n)) {
        tgc_free(out);
        out = NULL;
    }
    return out;
}

/* y = x converted to y's dtype `dt` (checked by the caller). */
static tgc_status run_cast(tgc_kernel_ctx *c, tgc_dtype dt) {
    tgc_status st;
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if ((st = tgc_kernel_need_like(c, dt)) != TGC_OK) return st;
    if (x->dtype == TGC_STRING || dt == TGC_STRING) return tgc_cpu_cast_strings(c, dt); /* string_cast.h */
    if (!valid_dtype(x->dtype) || !valid_dtype(dt) || cast_fns[x->dtype][dt] == NULL) return no_kernel(c, x->dtype);
    int64_t n = tgc_value_numel(y);
    if (n == 0) return TGC_OK;
    if (x->dtype == dt) {
        copy_value(&c->outputs[0], x);
        return TGC_OK;
    }
    bool overlap = tgc_cpu_ew_overlap(x, y), backwards = overlap && tgc_dtype_size(dt) > tgc_dtype_size(x->dtype);
    const tgc_ew_loops *l = tgc_cpu_ew_loops();
    if (!overlap && x->dtype == TGC_FLOAT16 && dt == TGC_FLOAT32) l->half_to_float(n, data_of(x), tgc_buffer_host_ptr(y->buf));
    else if (!overlap && x->dtype == TGC_FLOAT32 && dt == TGC_FLOAT16) l->float_to_half(n, data_of(x), tgc_buffer_host_ptr(y->buf));
    else cast_fns[x->dtype][dt](n, data_of(x), tgc_buffer_host_ptr(y->buf), backwards);
    return TGC_OK;
}

static tgc_status k_cast(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    int64_t to = tgc_kernel_attr_int(c, "to", -1);
    tgc_dtype dt = tgc_dtype_from_onnx(to);
    if (dt == TGC_DTYPE_INVALID)
        return tgc_kernel_fail(c, "Cast: 'to' is %lld, not a supported type", (long long)to);
    return run_cast(c, dt);
}

/* CastLike-15: Cast to input 1's dtype (its values are not read). */
static tgc_status k_cast_like(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    return run_cast(c, c->inputs[1].dtype);
}

/* ==== Pow with a mixed base and exponent =================================== */

/* y[i] = base a[i * sa] to the power b[i * sb], reading element i before
 * writing it (y may be a). BK is the base's kind: F (a float, through
 * double) or I (an integer); EK the exponent's, F or N. */
#define POW_FF(a, b) pow((a), (b))
#define POW_FN(a, b) pow((a), (double)(b))
#define POW_IF(a, b) d2i64(pow((double)(a), (b)))
#define POW_IN(a, b) ipow((int64_t)(a), (int64_t)(b))
#define POW_BASE_KIND_F F
#define POW_BASE_KIND_N I
#define DEF_POW_LOOP(bn, BT, bload, BK, bstore, en, ET, eload, EK)                               \
    static void pow_##bn##_##en##_loop(int64_t n, const void *pa, int64_t sa, const void *pb, int64_t sb, \
                                       void *py, const tgc_ew_params *p) {                      \
        const BT *a = pa;                                                                        \
        const ET *b = pb;                                                                        \
        BT *y = py;                                                                              \
        (void)p;                                                                                 \
        for (int64_t i = 0; i < n; i++) y[i] = bstore(POW_##BK##EK(bload(a[i * sa]), eload(b[i * sb]))); \
    }

/* Bases: (suffix, tgc_dtype, C type, load, kind, store). */
#define POW_ST_F32(v) ((float)(v))
#define POW_ST_F64(v) (v)
#define POW_ST_F16(v) tgc_float_to_half(f64_to_f32_odd(v))
#define POW_ST_BF16(v) tgc_float_to_bf16(f64_to_f32_odd(v))
#define POW_ST_I32(v) ((int32_t)(uint32_t)(uint64_t)(v))
#define POW_ST_I64(v) ((int64_t)(v))
#define POW_BASES(X, ...)                                                                        \
    X(f32, TGC_FLOAT32, float, LD_F32, F, POW_ST_F32, __VA_ARGS__)                               \
    X(f16, TGC_FLOAT16, uint16_t, LD_F16, F, POW_ST_F16, __VA_ARGS__)                            \
    X(bf16, TGC_BFLOAT16, uint16_t, LD_BF16, F, POW_ST_BF16, __VA_ARGS__)                        \
    X(f64, TGC_FLOAT64, double, LD_F64, F, POW_ST_F64, __VA_ARGS__)                              \
    X(i32, TGC_INT32, int32_t, LD_INT, I, POW_ST_I32, __VA_ARGS__)                               \
    X(i64, TGC_INT64, int64_t, LD_INT, I, POW_ST_I64, __VA_ARGS__)
#define POW_BODY(en, et, ET, eload, EK, bn, BT, bload, BK, bstore)                               \
    DEF_POW_LOOP(bn, BT, bload, BK, bstore, en, ET, eload, EK)
#define POW_FROM_BASE(bn, bt, BT, bload, BK, bstore, unused) CAST_DESTS(POW_BODY, bn, BT, bload, BK, bstore)
POW_BASES(POW_FROM_BASE, 0)

/* By base dtype, then exponent dtype (bool exponents are not ONNX's:
 * refused by inference; a float base with its own dtype is the row's). */
#define POW_ENTRY(en, et, ET, eload, EK, bn, bt) [bt][et] = pow_##bn##_##en##_loop,
#define POW_ROW(bn, bt, BT, bload, BK, bstore, unused) CAST_DESTS(POW_ENTRY, bn, bt)
static const row2_fn pow_loops[TGC_DTYPE_COUNT][TGC_DTYPE_COUNT] = {POW_BASES(POW_ROW, 0)};

static tgc_status k_pow(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 1);
    if (st != TGC_OK) return st;
    const tgc_value *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
    if (y->dtype != a->dtype)
        return tgc_kernel_fail(c, "Pow: output is %s, expected the base's %s", tgc_dtype_name(y->dtype),
                               tgc_dtype_name(a->dtype));
    row2_fn loop = valid_dtype(a->dtype) && valid_dtype(b->dtype) ? pow_loops[a->dtype][b->dtype] : NULL;
    if (loop == NULL)
        return tgc_kernel_fail(c, "Pow: the cpu has no kernel for a %s base with a %s exponent",
                               tgc_dtype_name(a->dtype), tgc_dtype_name(b->dtype));
    if (!tgc_dtype_is_float(a->dtype) && int_tensor_has(b, true))
        return tgc_kernel_fail(c, "Pow: negative exponent for an integer (%s) base", tgc_dtype_name(a->dtype));
    return run_binary(c, a, b, y, loop, NULL);
}

/* Identity-16: any dtype; nothing to do when the buffer was forwarded. */
static tgc_status k_identity(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 1);
    if (st != TGC_OK) return st;
    if ((st = tgc_kernel_need_like(c, c->inputs[0].dtype)) != TGC_OK) return st;
    if (c->inputs[0].dtype == TGC_STRING) /* each string copied: slots are never shared */
        return tgc_cpu_copy_strings(c, tgc_buffer_host_ptr(c->outputs[0].buf), data_of(&c->inputs[0]),
                                    (size_t)tgc_value_numel(&c->inputs[0]));
    copy_value(&c->outputs[0], &c->inputs[0]);
    return TGC_OK;
}

/* ==== The list ============================================================== */

#define DTYPES(...) {__VA_ARGS__, TGC_DTYPE_INVALID}
#define DT_FLOATS TGC_FLOAT32, TGC_FLOAT16, TGC_BFLOAT16, TGC_FLOAT64
#define DT_SINTS TGC_INT8, TGC_INT16, TGC_INT32, TGC_INT64
#define DT_UINTS TGC_UINT8, TGC_UINT16, TGC_UINT32, TGC_UINT64
#define DT_CLASS_F DTYPES(DT_FLOATS)
#define DT_CLASS_FS DTYPES(DT_FLOATS, DT_SINTS)
#define DT_CLASS_FN DTYPES(DT_FLOATS, DT_SINTS, DT_UINTS)
#define DT_CLASS_FNB DTYPES(DT_FLOATS, DT_SINTS, DT_UINTS, TGC_BOOL)
#define DT_ALL DTYPES(DT_FLOATS, DT_SINTS, DT_UINTS, TGC_BOOL, TGC_STRING) /* Cast, CastLike: string_cast.h */
#define DT_CLASS_B DTYPES(TGC_BOOL)
#define DT_CLASS_U DTYPES(DT_UINTS)
#define DT_CLASS_FW DTYPES(DT_FLOATS, TGC_INT32, TGC_INT64, TGC_UINT32, TGC_UINT64)
/* A row's kernel: Clip's bounds are host-memory inputs; Add absorbs a Relu. */
#define EW_ROW_KERNEL(name, cls)                                                                 \
    {.op = #name, .fn = k_ew_##name, .forward_input = 0, .dtypes = DT_CLASS_##cls, \
     .host_inputs = TGC_EW_##name == TGC_EW_Clip ? (1u << 1) | (1u << 2) : 0,                    \
     .fuses_activation = TGC_EW_##name == TGC_EW_Add},
#define EW(name, f, dt) {.op = name, .fn = f, .forward_input = 0, .dtypes = dt}

const tgc_kernel_def tgc_cpu_kernels_elementwise[] = {
#define EW_UNARY(name, cls, attrs, infer, fexpr, iexpr) EW_ROW_KERNEL(name, cls)
#define EW_BINARY(name, cls, out, infer, fexpr, iexpr) EW_ROW_KERNEL(name, cls)
#define EW_PREDICATE(name, cls, attrs, infer, fexpr, iexpr) EW_ROW_KERNEL(name, cls)
/* Mean's later passes read inputs that may be input 0's tensor again, which
 * forwarding would have overwritten: it never runs in place. */
#define EW_BINARY_ATTRS(name, cls, out, attrs, infer, fexpr, iexpr)                              \
    {.op = #name, .fn = k_ew_##name, .dtypes = DT_CLASS_##cls,            \
     .forward_input = TGC_EW_##name == TGC_EW_Mean ? -1 : 0},
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_BINARY
#undef EW_PREDICATE
#undef EW_BINARY_ATTRS
    EW("Pow", k_pow, DTYPES(TGC_INT32, TGC_INT64)), /* an integer base */
    EW("Where", k_where, DTYPES(TGC_BOOL)),
    EW("Cast", k_cast, DT_ALL),
    EW("Identity", k_identity, DTYPES(TGC_DTYPE_INVALID)),
    EW("CastLike", k_cast_like, DT_ALL),
    {.op = NULL},
};
