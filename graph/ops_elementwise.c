/* Elementwise ops (ONNX opset 17): arithmetic with multidirectional (numpy)
 * broadcasting, unary activations, Min/Max/Clip, comparisons, Where, Cast
 * and Identity. Each output takes the broadcast shape of its inputs; the
 * arithmetic ops also fold small integer compile-time values (shape
 * arithmetic such as Mul(Gather(Shape(x), 0), 16)). */
#include "graph/elementwise.h"
#include "graph/ops.h"
#include "support/checked.h"
#include "support/half.h"

#include <math.h>
#include <string.h>

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* ---- Add, Sub, Mul, Div, Pow --------------------------------------------- */

typedef enum arith_kind { ARITH_ADD, ARITH_SUB, ARITH_MUL, ARITH_DIV } arith_kind;

/* One element of a folded value, or false when it cannot be told: symbols
 * fold only through identities (x + 0, x - 0, x * 1, x / 1, 0 + x, 1 * x);
 * overflow and division by zero leave the value unknown (Div truncates
 * toward zero, as integer division does in ONNX runtimes). */
static bool fold_element(arith_kind k, tgc_dim a, tgc_dim b, tgc_dim *out) {
    if (!tgc_dim_known(a) || !tgc_dim_known(b)) {
        bool a_id = (k == ARITH_ADD && tgc_dim_is(a, 0)) || (k == ARITH_MUL && tgc_dim_is(a, 1));
        bool b_id = ((k == ARITH_ADD || k == ARITH_SUB) && tgc_dim_is(b, 0)) ||
                    ((k == ARITH_MUL || k == ARITH_DIV) && tgc_dim_is(b, 1));
        if (b_id) *out = a;
        else if (a_id) *out = b;
        return a_id || b_id;
    }
    int64_t x = a.v, y = b.v, r;
    switch (k) {
    case ARITH_ADD:
        if (!tgc_checked_add_i64(x, y, &r)) return false;
        break;
    case ARITH_SUB:
        if (!tgc_checked_sub_i64(x, y, &r)) return false;
        break;
    case ARITH_MUL:
        if (!tgc_checked_mul_i64(x, y, &r)) return false;
        break;
    case ARITH_DIV:
        if (y == 0 || (x == INT64_MIN && y == -1)) return false;
        r = x / y;
        break;
    default: return false;
    }
    *out = tgc_dim_of(r);
    return true;
}

/* Folds the values of inputs 0 and 1 into output 0 when both are known and
 * their lengths agree (or one is a single element, broadcast). */
static tgc_status fold_values(tgc_infer_ctx *c, arith_kind k, tgc_dtype dt) {
    const tgc_dim *va, *vb;
    int na, nb;
    if (!tgc_ops_input_value(c, 0, &va, &na) || !tgc_ops_input_value(c, 1, &vb, &nb)) return TGC_OK;
    if (na != nb && na != 1 && nb != 1) return TGC_OK;
    int n = na > nb ? na : nb;
    if (na == 0 || nb == 0) n = 0;
    tgc_dim out[TGC_MAX_VALUE_LEN];
    for (int i = 0; i < n; i++) {
        if (!fold_element(k, va[na == 1 ? 0 : i], vb[nb == 1 ? 0 : i], &out[i])) return TGC_OK;
        if (dt == TGC_INT32 && tgc_dim_known(out[i]) && (out[i].v > INT32_MAX || out[i].v < INT32_MIN))
            return TGC_OK;
    }
    return tgc_infer_set_value(c, 0, n, out);
}

/* Add, Sub, Mul, Div (opset 14): T in numeric types, both inputs the same T,
 * output the broadcast shape. */
static tgc_status infer_arith(tgc_infer_ctx *c, arith_kind k) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC) || !tgc_infer_require_same_dtype(c, 0, 1))
        return TGC_ERR_INVALID;
    tgc_shape out;
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &a->shape, &b->shape, &out);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 0, a->dtype, &out);
    if (st == TGC_OK) st = fold_values(c, k, a->dtype);
    return st;
}

static tgc_status infer_add(tgc_infer_ctx *c) { return infer_arith(c, ARITH_ADD); }
static tgc_status infer_sub(tgc_infer_ctx *c) { return infer_arith(c, ARITH_SUB); }
static tgc_status infer_mul(tgc_infer_ctx *c) { return infer_arith(c, ARITH_MUL); }
static tgc_status infer_div(tgc_infer_ctx *c) { return infer_arith(c, ARITH_DIV); }


/* Pow (opset 15): base T in {int32, int64, float16, float32, float64,
 * bfloat16}, exponent T1 any numeric type independently of T; the output
 * has T. */
static tgc_status infer_pow(tgc_infer_ctx *c) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT | TGC_DT(TGC_INT32) | TGC_DT(TGC_INT64)) ||
        !tgc_ops_require_dtypes(c, 1, TGC_DT_NUMERIC))
        return TGC_ERR_INVALID;
    tgc_shape out;
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &a->shape, &b->shape, &out);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, a->dtype, &out) : st;
}

/* ---- Unary ops ------------------------------------------------------------ */

static tgc_status infer_unary(tgc_infer_ctx *c, unsigned mask) {
    if (!tgc_ops_require_dtypes(c, 0, mask)) return TGC_ERR_INVALID;
    return tgc_ops_like_input(c, false);
}

/* Type constraints per opset-17 version: Neg-13 and Relu-14 take signed
 * types, Abs-13 and Erf-13 every numeric type, the rest floats only. */
static tgc_status infer_signed(tgc_infer_ctx *c) { return infer_unary(c, TGC_DT_SIGNED); }
static tgc_status infer_numeric(tgc_infer_ctx *c) { return infer_unary(c, TGC_DT_NUMERIC); }
static tgc_status infer_float(tgc_infer_ctx *c) { return infer_unary(c, TGC_DT_FLOAT); }

static tgc_status infer_gelu(tgc_infer_ctx *c) {
    const char *a = tgc_infer_attr_string(c, "approximate", "none");
    if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'approximate' is '%s'; it must be none or tanh", a);
    return infer_unary(c, TGC_DT_FLOAT);
}

/* Identity (opset 16): any type (string too), sequences and optionals
 * too; the value passes through. */
static tgc_status infer_identity(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_ALL)) return TGC_ERR_INVALID;
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (x->kind != TGC_KIND_TENSOR) return tgc_infer_set_output_kind(c, 0, x->kind, x->dtype, &x->shape);
    return tgc_ops_like_input(c, true);
}

const tgc_op_def tgc_op_Identity = {"Identity", 1, 1, 1, 1, no_attrs, infer_identity};

/* ---- Min, Max, Clip ----------------------------------------------------------- */

/* One or more inputs of one type in `mask`, all broadcast together. */
static tgc_status infer_variadic(tgc_infer_ctx *c, unsigned mask) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, mask)) return TGC_ERR_INVALID;
    tgc_shape out = a->shape;
    for (int i = 1; i < tgc_infer_num_inputs(c); i++) {
        const tgc_tensor_info *b = tgc_infer_input(c, i);
        if (b == NULL) return tgc_infer_fail(c, i, "bad-input", "input %d may not be omitted", i);
        if (!tgc_infer_require_same_dtype(c, 0, i)) return TGC_ERR_INVALID;
        tgc_shape next;
        tgc_status st = tgc_ops_broadcast(c, i == 1 ? 0 : -1, i, &out, &b->shape, &next);
        if (st != TGC_OK) return st;
        out = next;
    }
    return tgc_infer_set_output(c, 0, a->dtype, &out);
}

/* Min, Max (opset 13): one or more inputs of one numeric type. */
static tgc_status infer_min_max(tgc_infer_ctx *c) { return infer_variadic(c, TGC_DT_NUMERIC); }

/* Clip (opset 13): min and max are optional scalar inputs of the input's
 * type; the output is the input's shape. A one-element 1-D bound is also
 * accepted, as runtimes do. */
static tgc_status infer_clip(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC)) return TGC_ERR_INVALID;
    for (int i = 1; i <= 2; i++) {
        const tgc_tensor_info *b = tgc_infer_input(c, i);
        if (b == NULL) continue;
        if (!tgc_infer_require_same_dtype(c, 0, i)) return TGC_ERR_INVALID;
        bool scalar = b->shape.rank == 0 || b->shape.rank == TGC_RANK_UNKNOWN ||
                      (b->shape.rank == 1 && !tgc_dim_known(b->shape.dims[0])) ||
                      (b->shape.rank == 1 && tgc_dim_is(b->shape.dims[0], 1));
        if (!scalar) {
            char s[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d ('%s') has shape %s; it must be a scalar",
                                  i, i == 1 ? "min" : "max", tgc_infer_shape_str(c, &b->shape, s, sizeof s));
        }
    }
    return tgc_ops_like_input(c, false);
}

/* ---- Comparisons and Where ---------------------------------------------- */

static tgc_status infer_compare(tgc_infer_ctx *c, unsigned mask) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, mask) || !tgc_infer_require_same_dtype(c, 0, 1))
        return TGC_ERR_INVALID;
    tgc_shape out;
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &a->shape, &b->shape, &out);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, TGC_BOOL, &out) : st;
}

/* Equal-13 also compares bools; Less-13 and Greater-13 numeric types only. */
static tgc_status infer_equal(tgc_infer_ctx *c) { return infer_compare(c, TGC_DT_ANY); }
static tgc_status infer_ordered(tgc_infer_ctx *c) { return infer_compare(c, TGC_DT_NUMERIC); }

/* Where (opset 16): bool condition; X and Y of one type; the output is the
 * broadcast of all three shapes. */
static tgc_status infer_where(tgc_infer_ctx *c) {
    const tgc_tensor_info *cond = tgc_infer_input(c, 0), *x = tgc_infer_input(c, 1),
                          *y = tgc_infer_input(c, 2);
    if (!tgc_infer_require_dtype(c, 0, TGC_BOOL) || !tgc_infer_require_same_dtype(c, 1, 2))
        return TGC_ERR_INVALID;
    tgc_shape cx, out;
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &cond->shape, &x->shape, &cx);
    if (st == TGC_OK) st = tgc_ops_broadcast(c, -1, 2, &cx, &y->shape, &out);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, x->dtype, &out) : st;
}

const tgc_op_def tgc_op_Where = {"Where", 3, 3, 1, 1, no_attrs, infer_where};

/* ---- Logic, bits, Mod, tests, PRelu, Mean ------------------------------------ */

/* The unsigned integer dtypes (BitShift-11's T). */
#define DT_UNSIGNED TGC_DT_UINT
/* PRelu-16's T: the floats and the 32- and 64-bit integers. */
#define DT_PRELU (TGC_DT_FLOAT | TGC_DT(TGC_INT32) | TGC_DT(TGC_INT64) | TGC_DT(TGC_UINT32) | TGC_DT(TGC_UINT64))

/* Two inputs of one dtype in `mask`, broadcast; the output has their dtype. */
static tgc_status infer_same_binary(tgc_infer_ctx *c, unsigned mask) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, mask) || !tgc_infer_require_same_dtype(c, 0, 1)) return TGC_ERR_INVALID;
    tgc_shape out;
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &a->shape, &b->shape, &out);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, a->dtype, &out) : st;
}

/* And-7, Or-7, Xor-7: two bool inputs, broadcast; a bool output. */
static tgc_status infer_logical(tgc_infer_ctx *c) { return infer_same_binary(c, TGC_DT(TGC_BOOL)); }

/* Not-1: bool in, bool out. */
static tgc_status infer_not(tgc_infer_ctx *c) { return infer_unary(c, TGC_DT(TGC_BOOL)); }

/* BitShift-11: two unsigned inputs of one dtype, broadcast; `direction`
 * (required) is "LEFT" or "RIGHT". */
static tgc_status infer_bitshift(tgc_infer_ctx *c) {
    const char *d = tgc_infer_attr_string(c, "direction", NULL);
    if (d == NULL) return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'direction' is required");
    if (strcmp(d, "LEFT") != 0 && strcmp(d, "RIGHT") != 0)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'direction' is '%s'; it must be LEFT or RIGHT", d);
    return infer_same_binary(c, DT_UNSIGNED);
}

/* Mod-13: two numeric inputs of one dtype, broadcast; fmod is 0 or 1 and
 * must be 1 for floats (the spec's rule: Python's modulo is integer-only). */
static tgc_status infer_mod(tgc_infer_ctx *c) {
    int64_t fmod = tgc_infer_attr_int(c, "fmod", 0);
    if (fmod != 0 && fmod != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'fmod' is %lld; it must be 0 or 1", (long long)fmod);
    tgc_status st = infer_same_binary(c, TGC_DT_NUMERIC);
    if (st == TGC_OK && fmod == 0 && (TGC_DT(tgc_infer_input(c, 0)->dtype) & TGC_DT_FLOAT))
        return tgc_infer_fail(c, 0, "bad-attribute", "Mod of %s inputs needs fmod = 1 (fmod = 0 is for integers)",
                              tgc_dtype_name(tgc_infer_input(c, 0)->dtype));
    return st;
}

/* IsNaN-13, IsInf-10: a float input; a bool output of its shape. */
static tgc_status infer_float_test(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    return tgc_infer_set_output(c, 0, TGC_BOOL, &tgc_infer_input(c, 0)->shape);
}

/* PRelu-16: X and slope of one dtype; slope broadcasts to X's shape
 * (unidirectionally: it has no more dims than X, and each of its trailing
 * dims is 1 or X's); the output has X's shape. */
static tgc_status infer_prelu(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *s = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, DT_PRELU) || !tgc_infer_require_same_dtype(c, 0, 1))
        return TGC_ERR_INVALID;
    const tgc_shape *xs = &x->shape, *ss = &s->shape;
    bool fits = xs->rank < 0 || ss->rank < 0 || ss->rank <= xs->rank;
    for (int i = 0; fits && xs->rank >= 0 && ss->rank >= 0 && i < ss->rank; i++) {
        tgc_dim sd = ss->dims[ss->rank - 1 - i], xd = xs->dims[xs->rank - 1 - i], m;
        fits = tgc_dim_is(sd, 1) || tgc_ops_dim_merge(sd, xd, &m);
    }
    if (!fits) {
        char a[TGC_OPS_SHAPE_BUF], b[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch", "slope of shape %s does not broadcast to X's shape %s",
                              tgc_infer_shape_str(c, ss, a, sizeof a), tgc_infer_shape_str(c, xs, b, sizeof b));
    }
    return tgc_infer_set_output(c, 0, x->dtype, xs);
}

/* Mean-13: one or more float inputs of one dtype, broadcast together. */
static tgc_status infer_mean(tgc_infer_ctx *c) { return infer_variadic(c, TGC_DT_FLOAT); }

/* ---- Cast --------------------------------------------------------------------- */

/* Cast (opset 13): output dtype from `to` (any dtype, string included),
 * same shape. An int32/int64 value passes through (int64 -> int32 only
 * when every element fits; never into a string). */
static tgc_status infer_cast(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    const tgc_attr *to = tgc_infer_attr(c, "to");
    if (to == NULL) return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'to' is required");
    tgc_dtype t = tgc_dtype_from_onnx(to->i);
    if (t == TGC_DTYPE_INVALID)
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute 'to' is %lld, not a supported type (1 float32, 2 uint8, 3 int8, "
                              "4 uint16, 5 int16, 6 int32, 7 int64, 9 bool, 10 float16, 11 float64, "
                              "12 uint32, 13 uint64, 16 bfloat16, 8 string)",
                              (long long)to->i);
    tgc_status st = tgc_infer_set_output(c, 0, t, &x->shape);
    const tgc_dim *v;
    int n;
    if (st != TGC_OK || t == TGC_STRING || !tgc_ops_input_value(c, 0, &v, &n)) return st;
    if (t == TGC_INT32)
        for (int i = 0; i < n; i++)
            if (tgc_dim_known(v[i]) && (v[i].v > INT32_MAX || v[i].v < INT32_MIN)) return TGC_OK;
    return tgc_infer_set_value(c, 0, n, v);
}

static const tgc_attr_def cast_attrs[] = {{"to", TGC_ATTR_INT, true}, {NULL, 0, false}};

const tgc_op_def tgc_op_Cast = {"Cast", 1, 1, 1, 1, cast_attrs, infer_cast};

/* ---- The rows of graph/elementwise.def -------------------------------------- */

/* Inputs each inference function's ops take: (min, max); -1 variadic. */
#define EW_ARITY_infer_signed 1, 1
#define EW_ARITY_infer_numeric 1, 1
#define EW_ARITY_infer_float 1, 1
#define EW_ARITY_infer_gelu 1, 1
#define EW_ARITY_infer_clip 1, 3
#define EW_ARITY_infer_add 2, 2
#define EW_ARITY_infer_sub 2, 2
#define EW_ARITY_infer_mul 2, 2
#define EW_ARITY_infer_div 2, 2
#define EW_ARITY_infer_pow 2, 2
#define EW_ARITY_infer_min_max 1, -1
#define EW_ARITY_infer_equal 2, 2
#define EW_ARITY_infer_ordered 2, 2
#define EW_ARITY_infer_logical 2, 2
#define EW_ARITY_infer_not 1, 1
#define EW_ARITY_infer_bitshift 2, 2
#define EW_ARITY_infer_mod 2, 2
#define EW_ARITY_infer_float_test 1, 1
#define EW_ARITY_infer_prelu 2, 2
#define EW_ARITY_infer_mean 1, -1

/* An op def per row: tgc_op_<Op>, with its float attributes. */
#define EW_ATTRS0 {{NULL, 0, false}}
#define EW_ATTRS1(n0, d0) {{#n0, TGC_ATTR_FLOAT, false}, {NULL, 0, false}}
#define EW_ATTRS2(n0, d0, n1, d1) {{#n0, TGC_ATTR_FLOAT, false}, {#n1, TGC_ATTR_FLOAT, false}, {NULL, 0, false}}
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr)                                            \
    static const tgc_attr_def op##_attrs[] = attrs;                                              \
    const tgc_op_def tgc_op_##op = {#op, EW_ARITY_##infer, 1, 1, op##_attrs, infer};
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr)                                             \
    const tgc_op_def tgc_op_##op = {#op, EW_ARITY_##infer, 1, 1, no_attrs, infer};
#define EW_INT_ATTRS1(n0, d0) {{#n0, TGC_ATTR_INT, false}, {NULL, 0, false}}
#define EW_INT_ATTRS2(n0, d0, n1, d1) {{#n0, TGC_ATTR_INT, false}, {#n1, TGC_ATTR_INT, false}, {NULL, 0, false}}
#define EW_WORD_ATTR(n0, w0, w1) {{#n0, TGC_ATTR_STRING, true}, {NULL, 0, false}}
#define EW_WORD_ATTR_OPT(n0, w0, w1) {{#n0, TGC_ATTR_STRING, false}, {NULL, 0, false}}
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr)                                        \
    static const tgc_attr_def op##_attrs[] = attrs;                                              \
    const tgc_op_def tgc_op_##op = {#op, EW_ARITY_##infer, 1, 1, op##_attrs, infer};
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr)                                \
    static const tgc_attr_def op##_attrs[] = attrs;                                              \
    const tgc_op_def tgc_op_##op = {#op, EW_ARITY_##infer, 1, 1, op##_attrs, infer};
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS
#undef EW_ATTRS0
#undef EW_ATTRS1
#undef EW_ATTRS2
#undef EW_INT_ATTRS1
#undef EW_INT_ATTRS2
#undef EW_WORD_ATTR
#undef EW_WORD_ATTR_OPT

/* The rows as data (graph/elementwise.h). */
#define EW_CLASS_F (TGC_DT_FLOAT)
#define EW_CLASS_FS (TGC_DT_SIGNED)
#define EW_CLASS_FN (TGC_DT_NUMERIC)
#define EW_CLASS_FNB (TGC_DT_ANY)
#define EW_ATTRS0 0, {NULL}, {0}, {TGC_EW_ATTR_FLOAT}, {NULL}
#define EW_ATTRS1(n0, d0) 1, {#n0}, {d0}, {TGC_EW_ATTR_FLOAT}, {NULL}
#define EW_ATTRS2(n0, d0, n1, d1) 2, {#n0, #n1}, {d0, d1}, {TGC_EW_ATTR_FLOAT}, {NULL}
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) {#op, 1, false, EW_CLASS_##cls, attrs},
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) {#op, 2, EW_OUT_##out, EW_CLASS_##cls, EW_ATTRS0},
#define EW_OUT_SAME false
#define EW_OUT_BOOL true
#define EW_CLASS_B (TGC_DT(TGC_BOOL))
#define EW_CLASS_U (DT_UNSIGNED)
#define EW_CLASS_FW (DT_PRELU)
#define EW_INT_ATTRS1(n0, d0) 1, {#n0}, {d0}, {TGC_EW_ATTR_INT}, {NULL}
#define EW_INT_ATTRS2(n0, d0, n1, d1) 2, {#n0, #n1}, {d0, d1}, {TGC_EW_ATTR_INT, TGC_EW_ATTR_INT}, {NULL}
#define EW_WORD_ATTR(n0, w0, w1) 1, {#n0}, {0}, {TGC_EW_ATTR_WORD}, {#w0, #w1}
#define EW_WORD_ATTR_OPT(n0, w0, w1) 1, {#n0}, {0}, {TGC_EW_ATTR_WORD}, {#w0, #w1}
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) {#op, 1, true, EW_CLASS_##cls, attrs},
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) {#op, 2, EW_OUT_##out, EW_CLASS_##cls, attrs},
const tgc_ew_row tgc_ew_rows[TGC_EW_COUNT] = {
#include "graph/elementwise.def"
};
#undef EW_UNARY
#undef EW_PREDICATE
#undef EW_BINARY
#undef EW_BINARY_ATTRS

const tgc_ew_row *tgc_ew_find(const char *op) {
    for (int i = 0; i < TGC_EW_COUNT; i++)
        if (strcmp(tgc_ew_rows[i].op, op) == 0) return &tgc_ew_rows[i];
    return NULL;
}

bool tgc_ew_node_params(const tgc_graph *g, const tgc_node *n, const tgc_ew_row *r, double p[TGC_EW_MAX_PARAMS]) {
    for (int k = 0; k < TGC_EW_MAX_PARAMS; k++) p[k] = 0;
    if (tgc_ew_id(r) == TGC_EW_Clip) {
        p[0] = -INFINITY;
        p[1] = INFINITY;
        for (int k = 1; k < n->n_inputs && k < 3; k++) {
            tgc_ref b = n->inputs[k];
            if (b.node < 0) continue;
            const tgc_node *c = &g->nodes[b.node];
            if (c->kind != TGC_NODE_CONST || c->data->data == NULL || tgc_shape_numel(&c->data->shape) != 1 ||
                (c->data->dtype != TGC_FLOAT32 && c->data->dtype != TGC_FLOAT16))
                return false;
            p[k - 1] = c->data->dtype == TGC_FLOAT16 ? tgc_half_to_float(*(const uint16_t *)c->data->data)
                                                     : *(const float *)c->data->data;
        }
        return true;
    }
    for (int k = 0; k < r->n_attrs; k++) {
        const tgc_attr *a = tgc_node_attr(n, r->attr_names[k]);
        if (r->attr_kinds[k] == TGC_EW_ATTR_WORD)
            p[k] = a != NULL && a->s != NULL && strcmp(a->s, r->attr_words[1]) == 0;
        else if (a != NULL && a->type == TGC_ATTR_INT)
            p[k] = r->attr_kinds[k] == TGC_EW_ATTR_INT ? (double)a->i : (double)(float)a->i;
        else if (a != NULL && a->type == TGC_ATTR_FLOAT)
            p[k] = r->attr_kinds[k] == TGC_EW_ATTR_INT ? (double)(int64_t)a->f : (double)(float)a->f;
        else
            p[k] = r->attr_defaults[k];
    }
    return true;
}
