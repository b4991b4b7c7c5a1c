/* Tensor-making ops (ONNX opset 17): Range, ConstantOfShape and Constant.
 * Their integer outputs carry compile-time values when small (Range over
 * known integers, a filled integer ConstantOfShape, Constant's int forms). */
#include "graph/ops.h"
#include "support/checked.h"

#include <math.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

/* ---- Range -------------------------------------------------------------------- */

/* Range-11: scalar start, limit, delta of one type T; a 1-D output of
 * max(ceil((limit - start) / delta), 0) elements, known when the three are
 * known integers (and then its value too, when small). */
static tgc_status infer_range(tgc_infer_ctx *c) {
    /* ONNX's T: float, double, int16, int32, int64 */
    const unsigned dtypes = TGC_DT(TGC_FLOAT32) | TGC_DT(TGC_FLOAT64) | TGC_DT(TGC_INT16) | TGC_DT(TGC_INT32) |
                            TGC_DT(TGC_INT64);
    static const char *const names[] = {"start", "limit", "delta"};
    int64_t v[3];
    bool known = true;
    for (int i = 0; i < 3; i++) {
        const tgc_tensor_info *in = tgc_infer_input(c, i);
        if (!tgc_ops_require_dtypes(c, i, dtypes) || !tgc_infer_require_same_dtype(c, 0, i))
            return TGC_ERR_INVALID;
        if (in->shape.rank > 0) {
            char s[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must be a "
                                  "scalar", i, names[i], SHAPE(c, &in->shape, s));
        }
        int n;
        known = known && tgc_infer_input_concrete_value(c, i, &v[i], 1, &n) && n == 1;
    }
    tgc_dtype t = tgc_infer_input(c, 0)->dtype;
    int64_t n = -1;
    if (t == TGC_FLOAT32) {
        /* ONNX: max(ceil((limit - start) / delta), 0) elements. */
        const tgc_tensor_info *s0 = tgc_infer_input(c, 0), *s1 = tgc_infer_input(c, 1), *s2 = tgc_infer_input(c, 2);
        if (s0->has_real && s1->has_real && s2->has_real) {
            if (s2->real == 0) return tgc_infer_fail(c, 2, "bad-input", "delta is 0");
            double count = ceil((s1->real - s0->real) / s2->real);
            if (count >= 0 && count < 1e12) n = (int64_t)count;
            else if (count < 0) n = 0;
        }
        known = false;
    }
    if (known) {
        if (v[2] == 0) return tgc_infer_fail(c, 2, "bad-input", "delta is 0");
        int64_t lo = v[0], hi = v[1], step = v[2], span;
        if (!tgc_checked_sub_i64(hi, lo, &span))
            return tgc_infer_fail(c, 1, "size-overflow", "limit - start (%lld - %lld) does not fit in "
                                  "int64", (long long)hi, (long long)lo);
        if (span == 0 || (span > 0) != (step > 0)) n = 0;
        else if (span == INT64_MIN && step == -1) /* the count, 2^63, does not fit */
            return tgc_infer_fail(c, 2, "size-overflow", "Range(%lld, %lld, -1) has 2^63 elements",
                                  (long long)lo, (long long)hi);
        else n = span / step + (span % step != 0);
    }
    tgc_shape out = {.rank = 1, .dims = {n >= 0 ? tgc_dim_of(n) : tgc_infer_fresh_dim(c)}};
    tgc_status st = tgc_infer_set_output(c, 0, t, &out);
    if (st != TGC_OK || n < 0 || n > TGC_MAX_VALUE_LEN) return st;
    tgc_dim value[TGC_MAX_VALUE_LEN];
    for (int64_t i = 0; i < n; i++) value[i] = tgc_dim_of(v[0] + i * v[2]);
    return tgc_infer_set_value(c, 0, (int)n, value);
}

const tgc_op_def tgc_op_Range = {"Range", 3, 3, 1, 1, no_attrs, infer_range};

/* ---- ConstantOfShape, Constant ---------------------------------------------- */

/* Element i of an integer constant, decoded from little-endian bytes. */
static bool const_int(const tgc_const *k, size_t i, int64_t *out) {
    size_t size = tgc_dtype_size(k->dtype);
    if ((k->dtype != TGC_INT32 && k->dtype != TGC_INT64) || (i + 1) * size > k->nbytes) return false;
    const unsigned char *p = (const unsigned char *)k->data + i * size;
    uint64_t u = 0;
    for (size_t b = 0; b < size; b++) u |= (uint64_t)p[b] << (8 * b);
    if (size == 4) *out = (int64_t)(int32_t)(uint32_t)u;
    else *out = (int64_t)u;
    return true;
}

/* Sets output 0's value from an integer constant's elements (n of them,
 * all equal to element 0 when `fill`). */
static tgc_status const_value(tgc_infer_ctx *c, const tgc_const *k, int64_t n, bool fill) {
    if (n < 0 || n > TGC_MAX_VALUE_LEN) return TGC_OK;
    tgc_dim value[TGC_MAX_VALUE_LEN];
    for (int64_t i = 0; i < n; i++) {
        int64_t e;
        if (!const_int(k, fill ? 0 : (size_t)i, &e)) return TGC_OK;
        value[i] = tgc_dim_of(e);
    }
    return tgc_infer_set_value(c, 0, (int)n, value);
}

/* ConstantOfShape-9: the int64 1-D input's value is the output shape
 * (symbols allowed); `value`, a one-element tensor (default float32 0),
 * gives the dtype and the fill. */
static tgc_status infer_constant_of_shape(tgc_infer_ctx *c) {
    const tgc_tensor_info *shape = tgc_infer_input(c, 0);
    if (!tgc_infer_require_dtype(c, 0, TGC_INT64)) return TGC_ERR_INVALID;
    const tgc_attr *va = tgc_infer_attr(c, "value");
    const tgc_const *k = va != NULL && va->type == TGC_ATTR_TENSOR ? va->tensor : NULL;
    if (k != NULL && tgc_shape_numel(&k->shape) != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'value' must hold exactly one element");
    tgc_dtype t = k != NULL ? k->dtype : TGC_FLOAT32;
    if (shape->shape.rank >= 0 && shape->shape.rank != 1) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; it must be 1-D",
                              SHAPE(c, &shape->shape, s));
    }
    const tgc_dim *v;
    int n;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (tgc_ops_input_value(c, 0, &v, &n)) {
        if (n > TGC_MAX_RANK)
            return tgc_infer_fail(c, 0, "bad-input", "the shape has %d dims; tgc allows at most %d", n,
                                  TGC_MAX_RANK);
        out.rank = n;
        for (int i = 0; i < n; i++) {
            if (tgc_dim_known(v[i]) && v[i].v < 0)
                return tgc_infer_fail(c, 0, "bad-input", "the shape has %lld at index %d; dims must be "
                                      ">= 0", (long long)v[i].v, i);
            out.dims[i] = v[i];
        }
    } else if (shape->shape.rank == 1 && tgc_dim_known(shape->shape.dims[0]) &&
               shape->shape.dims[0].v <= TGC_MAX_RANK) {
        out.rank = (int)shape->shape.dims[0].v;
        for (int i = 0; i < out.rank; i++) out.dims[i] = tgc_infer_fresh_dim(c);
    }
    tgc_status st = tgc_infer_set_output(c, 0, t, &out);
    if (st != TGC_OK || k == NULL || out.rank > 1) return st;
    return const_value(c, k, tgc_shape_numel(&out), true);
}

static const tgc_attr_def constant_of_shape_attrs[] = {{"value", TGC_ATTR_TENSOR, false},
                                                       {NULL, 0, false}};

const tgc_op_def tgc_op_ConstantOfShape = {"ConstantOfShape", 1, 1, 1, 1, constant_of_shape_attrs,
                                           infer_constant_of_shape};

/* Constant-13: exactly one of value (a tensor), value_float, value_floats
 * (float32), value_int, value_ints (int64) gives the output; the integer
 * forms carry their value. value_string(s) are accepted by the schema; a
 * Constant node of strings is not run (the ONNX importer turns one into a
 * string initializer, which is how a graph file gives strings). */
static tgc_status infer_constant(tgc_infer_ctx *c) {
    static const char *const forms[] = {"value",     "value_float",  "value_floats", "value_int",
                                        "value_ints", "value_string", "value_strings"};
    const tgc_attr *a = NULL;
    int which = -1, count = 0;
    for (int i = 0; i < 7; i++) {
        const tgc_attr *f = tgc_infer_attr(c, forms[i]);
        if (f == NULL) continue;
        count++;
        if (a == NULL) a = f, which = i;
    }
    if (count != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "Constant needs exactly one of the attributes "
                              "value, value_float, value_floats, value_int, value_ints; it has %d",
                              count);
    tgc_shape out = {.rank = 0};
    tgc_status st;
    switch (which) {
    case 0:
        if (a->tensor == NULL)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'value' holds no tensor");
        st = tgc_infer_set_output(c, 0, a->tensor->dtype, &a->tensor->shape);
        if (st != TGC_OK || a->tensor->shape.rank > 1) return st;
        return const_value(c, a->tensor, tgc_shape_numel(&a->tensor->shape), false);
    case 1: return tgc_infer_set_output(c, 0, TGC_FLOAT32, &out);
    case 2:
        out.rank = 1;
        out.dims[0] = tgc_dim_of((int64_t)a->n);
        return tgc_infer_set_output(c, 0, TGC_FLOAT32, &out);
    case 3: {
        tgc_dim v = tgc_dim_of(a->i);
        st = tgc_infer_set_output(c, 0, TGC_INT64, &out);
        return st == TGC_OK ? tgc_infer_set_value(c, 0, 1, &v) : st;
    }
    case 4: {
        out.rank = 1;
        out.dims[0] = tgc_dim_of((int64_t)a->n);
        st = tgc_infer_set_output(c, 0, TGC_INT64, &out);
        if (st != TGC_OK || a->n > TGC_MAX_VALUE_LEN) return st;
        tgc_dim v[TGC_MAX_VALUE_LEN];
        for (size_t i = 0; i < a->n; i++) v[i] = tgc_dim_of(a->ints[i]);
        return tgc_infer_set_value(c, 0, (int)a->n, v);
    }
    default:
        return tgc_infer_fail(c, -1, "unsupported", "attribute '%s': give strings as an initializer of "
                              "dtype string, not a Constant node", forms[which]);
    }
}

static const tgc_attr_def constant_attrs[] = {
    {"value", TGC_ATTR_TENSOR, false},       {"value_float", TGC_ATTR_FLOAT, false},
    {"value_floats", TGC_ATTR_FLOATS, false}, {"value_int", TGC_ATTR_INT, false},
    {"value_ints", TGC_ATTR_INTS, false},     {"value_string", TGC_ATTR_STRING, false},
    {"value_strings", TGC_ATTR_STRINGS, false}, {NULL, 0, false},
};

const tgc_op_def tgc_op_Constant = {"Constant", 0, 0, 1, 1, constant_attrs, infer_constant};
