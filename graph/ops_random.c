/* Random ops (ONNX opset 17): RandomUniform, RandomNormal,
 * RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial, and Dropout
 * (whose training mode draws a mask). A `seed` attribute makes a node's
 * values the same on every run; without one they differ from run to run
 * (the generator: devices/cpu/mt19937.h). */
#include "graph/ops.h"

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* The dtype of attribute `dtype` (an ONNX type code; absent: dflt, which
 * may be TGC_DTYPE_INVALID for "the input's") in *t, which must be in
 * `allowed`. Reports "bad-attribute" otherwise. */
static tgc_status dtype_attr(tgc_infer_ctx *c, tgc_dtype dflt, unsigned allowed, tgc_dtype *t) {
    const tgc_attr *a = tgc_infer_attr(c, "dtype");
    *t = a != NULL ? tgc_dtype_from_onnx(a->i) : dflt;
    if (*t == TGC_DTYPE_INVALID || !(allowed & TGC_DT(*t)))
        return tgc_infer_fail(c, -1, "bad-attribute", "the output dtype (attribute 'dtype' %lld, or the input's) "
                              "is not one %s makes", a != NULL ? (long long)a->i : -1LL,
                              tgc_infer_input(c, 0) != NULL ? "this op" : "RandomUniform/RandomNormal");
    return TGC_OK;
}

/* RandomUniform-1, RandomNormal-1: no inputs; `shape` (required) gives the
 * output's dims, `dtype` (default 1: float32) its float type. */
static tgc_status infer_random(tgc_infer_ctx *c) {
    const int64_t *dims;
    size_t n;
    if (!tgc_infer_attr_ints(c, "shape", &dims, &n) || n > TGC_MAX_RANK)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'shape' is required, with at most %d dims",
                              TGC_MAX_RANK);
    tgc_shape out = {.rank = (int)n};
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'shape' has %lld at %zu; dims must be >= 0",
                                  (long long)dims[i], i);
        out.dims[i] = tgc_dim_of(dims[i]);
    }
    tgc_dtype t;
    tgc_status st = dtype_attr(c, TGC_FLOAT32, TGC_DT_FLOAT, &t);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, t, &out) : st;
}

/* RandomUniformLike-1, RandomNormalLike-1: the input's shape (its values
 * unread, any dtype); `dtype` defaults to the input's, which must then be
 * a float type. */
static tgc_status infer_random_like(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_dtype t;
    tgc_status st = dtype_attr(c, x->dtype, TGC_DT_FLOAT, &t);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, t, &x->shape) : st;
}

static const tgc_attr_def uniform_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"high", TGC_ATTR_FLOAT, false},  {"low", TGC_ATTR_FLOAT, false},
    {"seed", TGC_ATTR_FLOAT, false}, {"shape", TGC_ATTR_INTS, true}, {NULL, 0, false}};
static const tgc_attr_def normal_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"mean", TGC_ATTR_FLOAT, false}, {"scale", TGC_ATTR_FLOAT, false},
    {"seed", TGC_ATTR_FLOAT, false}, {"shape", TGC_ATTR_INTS, true}, {NULL, 0, false}};
/* The *Like forms: the same without `shape`. */
static const tgc_attr_def uniform_like_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"high", TGC_ATTR_FLOAT, false}, {"low", TGC_ATTR_FLOAT, false},
    {"seed", TGC_ATTR_FLOAT, false}, {NULL, 0, false}};
static const tgc_attr_def normal_like_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"mean", TGC_ATTR_FLOAT, false}, {"scale", TGC_ATTR_FLOAT, false},
    {"seed", TGC_ATTR_FLOAT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_RandomUniform = {"RandomUniform", 0, 0, 1, 1, uniform_attrs, infer_random};
const tgc_op_def tgc_op_RandomNormal = {"RandomNormal", 0, 0, 1, 1, normal_attrs, infer_random};
const tgc_op_def tgc_op_RandomUniformLike = {"RandomUniformLike", 1, 1, 1, 1, uniform_like_attrs, infer_random_like};
const tgc_op_def tgc_op_RandomNormalLike = {"RandomNormalLike", 1, 1, 1, 1, normal_like_attrs, infer_random_like};

/* Bernoulli-15: float probabilities -> 0/1 draws of the input's shape, of
 * `dtype` (default the input's; any numeric type or bool). */
static tgc_status infer_bernoulli(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    tgc_dtype t;
    tgc_status st = dtype_attr(c, x->dtype, TGC_DT_ANY, &t);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, t, &x->shape) : st;
}

static const tgc_attr_def bernoulli_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"seed", TGC_ATTR_FLOAT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Bernoulli = {"Bernoulli", 1, 1, 1, 1, bernoulli_attrs, infer_bernoulli};

/* Multinomial-7: float [batch, class_size] unnormalised log-probabilities
 * -> [batch, sample_size] class indices of `dtype` (6 int32, the default,
 * or 7 int64). */
static tgc_status infer_multinomial(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    tgc_dtype t;
    tgc_status st = dtype_attr(c, TGC_INT32, TGC_DT_INT, &t);
    if (st != TGC_OK) return st;
    int64_t samples = tgc_infer_attr_int(c, "sample_size", 1);
    if (samples < 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'sample_size' is %lld; it must be >= 1",
                              (long long)samples);
    if (x->shape.rank >= 0 && x->shape.rank != 2) {
        char s[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; it must be [batch, class_size]",
                              SHAPE(c, &x->shape, s));
    }
    tgc_shape out = {.rank = 2, .dims = {x->shape.rank == 2 ? x->shape.dims[0] : tgc_infer_fresh_dim(c),
                                         tgc_dim_of(samples)}};
    return tgc_infer_set_output(c, 0, t, &out);
}

static const tgc_attr_def multinomial_attrs[] = {
    {"dtype", TGC_ATTR_INT, false}, {"sample_size", TGC_ATTR_INT, false}, {"seed", TGC_ATTR_FLOAT, false},
    {NULL, 0, false}};

const tgc_op_def tgc_op_Multinomial = {"Multinomial", 1, 1, 1, 1, multinomial_attrs, infer_multinomial};

/* Dropout-13: data (float), optional ratio (a float scalar, default 0.5,
 * in [0, 1)) and training_mode (a bool scalar, default false) -> output of
 * data's dtype and shape and the optional bool mask of its shape. */
static tgc_status infer_dropout(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_ops_require_dtypes(c, 1, TGC_DT_FLOAT) ||
        !tgc_ops_require_dtypes(c, 2, TGC_DT(TGC_BOOL)))
        return TGC_ERR_INVALID;
    for (int i = 1; i <= 2; i++) {
        const tgc_tensor_info *p = tgc_infer_input(c, i);
        if (p != NULL && p->shape.rank > 0 && !(p->shape.rank == 1 && tgc_dim_is(p->shape.dims[0], 1))) {
            char s[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must be a scalar", i,
                                  i == 1 ? "ratio" : "training_mode", SHAPE(c, &p->shape, s));
        }
    }
    tgc_status st = tgc_ops_like_input(c, false);
    return st == TGC_OK ? tgc_infer_set_output(c, 1, TGC_BOOL, &x->shape) : st;
}

static const tgc_attr_def dropout_attrs[] = {{"seed", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Dropout = {"Dropout", 1, 3, 1, 2, dropout_attrs, infer_dropout};
