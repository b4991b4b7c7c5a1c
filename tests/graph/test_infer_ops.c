/* Type and shape inference of the elementwise, neural-network and reduction
 * ops (ONNX opset 17), one node at a time. Expected shapes follow the ONNX
 * operator specification; derivations are noted where not obvious. The
 * shape-manipulating ops and compile-time values are in
 * test_infer_shapes.c. */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

/* ---- Registry --------------------------------------------------------------- */

static void test_registry_has_every_op(void) {
    static const char *const names[] = {
        "Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp",
        "Log", "Sqrt", "Erf", "Min", "Max", "Clip", "Softmax", "LogSoftmax", "MatMul", "Gemm", "Conv",
        "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization", "LayerNormalization",
        "Flatten", "Reshape", "Transpose", "Concat", "Split", "Shape", "Size", "Gather", "Unsqueeze",
        "Squeeze", "Slice", "Expand", "Range", "ConstantOfShape", "Cast", "Identity", "Where", "Equal",
        "Less", "Greater", "ReduceMean", "ReduceSum", "ReduceMax", "ArgMax", "Constant",
        /* rows of graph/elementwise.def since step 15 */
        "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Mish", "Gelu", "ThresholdedRelu",
        "Shrink", "Reciprocal", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
        "Atanh", "LessOrEqual", "GreaterOrEqual",
        "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "RNN", "GRU", "LSTM", "TfIdfVectorizer",
        /* convolution-family and layout ops (ops_convt.c, ops_pad.c, ops_channel_norm.c) */
        "ConvTranspose", "MaxUnpool", "Pad", "DepthToSpace", "SpaceToDepth", "InstanceNormalization", "LRN",
        "LpPool", "GlobalMaxPool", "GlobalLpPool",
        /* ops_resize.c, ops_detection.c */
        "Resize", "GridSample", "RoiAlign", "NonMaxSuppression",
        /* quantization, signal and random ops (ops_quant.c, ops_signal.c, ops_random.c) */
        "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "QLinearMatMul",
        "ConvInteger", "QLinearConv", "HannWindow", "HammingWindow", "BlackmanWindow", "DFT", "STFT",
        "MelWeightMatrix", "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
        "Multinomial", "Dropout",
        /* the reductions and friends (op-reduce) */
        "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
        "ArgMin", "Hardmax", "LpNormalization", "MeanVarianceNormalization",
        "Einsum", "Det",
        /* index and selection ops (ops_index.c, ops_arrange.c, ops_select.c) */
        "GatherElements", "ScatterElements", "ScatterND", "GatherND", "OneHot", "Tile", "Trilu", "EyeLike",
        "CumSum", "ReverseSequence", "TopK", "NonZero", "Compress", "Unique",
        /* the logic, bit, rounding and test rows */
        "And", "Or", "Xor", "Not", "BitShift", "Mod", "IsNaN", "IsInf", "Sign", "Floor", "Ceil", "Round", "PRelu",
        "Mean",
        /* graph/ops_cast.c */
        "CastLike",
        /* graph/ops_string.c */
        "StringNormalizer",
        /* graph/ops_control.c */
        "If", "Loop", "Scan",
        /* graph/ops_sequence.c */
        "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceLength", "SequenceErase",
        "ConcatFromSequence", "SplitToSequence", "SequenceMap", "Optional", "OptionalHasElement",
        "OptionalGetElement",
        /* graph/ops_bitwise.c */
        "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"};
    size_t n_names = sizeof names / sizeof names[0], count;
    const tgc_op_def *const *all = tgc_op_all(&count);
    CU_ASSERT_EQUAL(count, n_names);
    for (size_t i = 0; i < n_names; i++) {
        const tgc_op_def *op = tgc_op_find(names[i]);
        CU_ASSERT_PTR_NOT_NULL(op);
        if (op == NULL) continue;
        CU_ASSERT_STRING_EQUAL(op->name, names[i]);
        CU_ASSERT_PTR_NOT_NULL(op->infer);
        CU_ASSERT_PTR_NOT_NULL(op->attrs);
        CU_ASSERT(op->min_outputs >= 1);
    }
    for (size_t i = 0; i < count; i++) CU_ASSERT_PTR_EQUAL(tgc_op_find(all[i]->name), all[i]);
    /* tgc's own elementwise row (x * Sigmoid(x): passes/fuse_swish.c): found, not listed */
    CU_ASSERT_PTR_NOT_NULL(tgc_op_find("_Swish"));
    for (size_t i = 0; i < count; i++) CU_ASSERT(all[i]->name[0] != '_');
    CU_ASSERT_PTR_NULL(tgc_op_find("add"));
    CU_ASSERT_PTR_NULL(tgc_op_find("FastGelu"));
}

static void test_registry_attribute_schemas(void) {
    const struct {
        const char *op, *attr;
        tgc_attr_type type;
        bool required;
    } cases[] = {
        {"Conv", "auto_pad", TGC_ATTR_STRING, false},   {"Conv", "group", TGC_ATTR_INT, false},
        {"Conv", "kernel_shape", TGC_ATTR_INTS, false}, {"MaxPool", "kernel_shape", TGC_ATTR_INTS, true},
        {"MaxPool", "storage_order", TGC_ATTR_INT, false}, {"MaxPool", "dilations", TGC_ATTR_INTS, false},
        {"AveragePool", "count_include_pad", TGC_ATTR_INT, false},
        {"Cast", "to", TGC_ATTR_INT, true},             {"Concat", "axis", TGC_ATTR_INT, true},
        {"Constant", "value", TGC_ATTR_TENSOR, false},  {"Constant", "value_floats", TGC_ATTR_FLOATS, false},
        {"ConstantOfShape", "value", TGC_ATTR_TENSOR, false},
        {"Gemm", "alpha", TGC_ATTR_FLOAT, false},       {"Gemm", "transB", TGC_ATTR_INT, false},
        {"LeakyRelu", "alpha", TGC_ATTR_FLOAT, false},  {"ReduceMean", "axes", TGC_ATTR_INTS, false},
        {"ReduceMax", "axes", TGC_ATTR_INTS, false},
        {"ReduceSum", "noop_with_empty_axes", TGC_ATTR_INT, false},
        {"Shape", "start", TGC_ATTR_INT, false},        {"Shape", "end", TGC_ATTR_INT, false},
        {"Transpose", "perm", TGC_ATTR_INTS, false},    {"Reshape", "allowzero", TGC_ATTR_INT, false},
        {"ArgMax", "select_last_point_index", TGC_ATTR_INT, false},
        {"BatchNormalization", "training_mode", TGC_ATTR_INT, false},
        {"LayerNormalization", "stash_type", TGC_ATTR_INT, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tgc_attr_def *a = tgc_op_attr_def(tgc_op_find(cases[i].op), cases[i].attr);
        CU_ASSERT_PTR_NOT_NULL(a);
        if (a == NULL) continue;
        CU_ASSERT_EQUAL(a->type, cases[i].type);
        CU_ASSERT_EQUAL(a->required, cases[i].required);
    }
    /* Opset 17: these are inputs, not attributes. */
    CU_ASSERT_PTR_NULL(tgc_op_attr_def(&tgc_op_ReduceSum, "axes"));
    CU_ASSERT_PTR_NULL(tgc_op_attr_def(&tgc_op_Unsqueeze, "axes"));
    CU_ASSERT_PTR_NULL(tgc_op_attr_def(&tgc_op_Squeeze, "axes"));
    CU_ASSERT_PTR_NULL(tgc_op_attr_def(&tgc_op_Split, "split"));
    CU_ASSERT_PTR_NULL(tgc_op_attr_def(&tgc_op_Clip, "min"));
    CU_ASSERT_PTR_NULL(tgc_op_attr_def(&tgc_op_AveragePool, "dilations"));
    CU_ASSERT_EQUAL(tgc_op_Slice.min_inputs, 3);
    CU_ASSERT_EQUAL(tgc_op_Slice.max_inputs, 5);
    CU_ASSERT_EQUAL(tgc_op_Split.max_outputs, -1);
    CU_ASSERT_EQUAL(tgc_op_Concat.max_inputs, -1);
    CU_ASSERT_EQUAL(tgc_op_MaxPool.max_outputs, 2);
    CU_ASSERT_EQUAL(tgc_op_LayerNormalization.max_outputs, 3);
}

/* ---- Shapes (shape.c) -------------------------------------------------------- */

static void test_shape_helpers(void) {
    int64_t d[] = {2, 3, 4};
    tgc_shape s = tgc_shape_of(3, d), u = {.rank = TGC_RANK_UNKNOWN};
    CU_ASSERT(tgc_shape_known(&s));
    CU_ASSERT_EQUAL(tgc_shape_numel(&s), 24);
    CU_ASSERT_EQUAL(tgc_shape_numel(&(tgc_shape){.rank = 0}), 1);
    CU_ASSERT_FALSE(tgc_shape_known(&u));
    CU_ASSERT_EQUAL(tgc_shape_numel(&u), -1);
    tgc_shape sym = s;
    sym.dims[0] = tgc_dim_sym(0);
    CU_ASSERT_FALSE(tgc_shape_known(&sym));
    CU_ASSERT_EQUAL(tgc_shape_numel(&sym), -1);
    CU_ASSERT(tgc_shape_eq(&s, &s));
    CU_ASSERT_FALSE(tgc_shape_eq(&s, &sym));
    CU_ASSERT(tgc_shape_eq(&u, &u));
    int ax = -7;
    CU_ASSERT(tgc_axis_normalize(-1, 3, &ax) && ax == 2);
    CU_ASSERT(tgc_axis_normalize(-3, 3, &ax) && ax == 0);
    CU_ASSERT_FALSE(tgc_axis_normalize(3, 3, &ax));
    CU_ASSERT_FALSE(tgc_axis_normalize(-4, 3, &ax));
    CU_ASSERT_FALSE(tgc_axis_normalize(0, 0, &ax));
    /* Without a fresh-dim callback, two different symbols cannot broadcast. */
    tgc_shape a = {.rank = 1, .dims = {tgc_dim_sym(0)}}, b = {.rank = 1, .dims = {tgc_dim_sym(1)}}, out;
    int bad = -1;
    CU_ASSERT_FALSE(tgc_shape_broadcast(&a, &b, &out, &bad, NULL, NULL));
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(tgc_shape_broadcast(&a, &a, &out, &bad, NULL, NULL) && tgc_dim_eq(out.dims[0], a.dims[0]));
    CU_ASSERT(tgc_shape_broadcast(&s, &u, &out, &bad, NULL, NULL) && out.rank == TGC_RANK_UNKNOWN);
}

/* ---- Binary arithmetic ---------------------------------------------------------- */

static void test_add_broadcasts(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "N, 1, 5");
    fx_input(&f, "b", TGC_FLOAT32, "3, 1");
    fx_input(&f, "s", TGC_FLOAT32, "");
    /* Right-aligned: [N, 1, 5] with [_, 3, 1] -> [N, 3, 5]. */
    int32_t add = fx_op(&f, "add", "Add", "a, b", 1);
    FX_OK(&f, add);
    FX_OUT(&f, add, 0, TGC_FLOAT32, "[N, 3, 5]");
    FX_VALUE(&f, add, 0, "none");
    int32_t scalar = fx_op(&f, "scalar", "Mul", "s, a", 1);
    FX_OK(&f, scalar);
    FX_OUT(&f, scalar, 0, TGC_FLOAT32, "[N, 1, 5]");
    fx_end(&f);
}

static void test_add_mismatch(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "2, 3");
    fx_input(&f, "b", TGC_FLOAT32, "4, 3");
    int32_t add = fx_op(&f, "add", "Add", "a, b", 1);
    FX_FAILS(&f, add, 1, "shape-mismatch", "input 0 has shape [2, 3] and input 1 has shape [4, 3]");
    fx_end(&f);
}

static void test_add_dtype_mismatch(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "2");
    fx_input(&f, "b", TGC_INT64, "2");
    fx_input(&f, "t", TGC_BOOL, "2");
    int32_t add = fx_op(&f, "add", "Add", "a, b", 1);
    FX_FAILS(&f, add, 1, "dtype-mismatch", "input 1 is int64 but input 0 is float32; Add needs both the same");
    int32_t sub = fx_op(&f, "sub", "Sub", "t, t", 1);
    FX_FAILS(&f, sub, 0, "dtype-mismatch", "input 0 is bool; Sub needs one of float32, float16, int32, int64, uint8");
    fx_end(&f);
}

static void test_broadcast_symbols(void) {
    fx f = fx_begin();
    fx_input(&f, "n4", TGC_FLOAT32, "N, 4");
    fx_input(&f, "m4", TGC_FLOAT32, "M, 4");
    fx_input(&f, "n1", TGC_FLOAT32, "N, 1");
    fx_input(&f, "n", TGC_FLOAT32, "N");
    fx_input(&f, "seven", TGC_FLOAT32, "7");
    fx_input(&f, "unk", TGC_FLOAT32, "?");
    /* N against M: either may be 1, so the result is a fresh symbol. */
    int32_t nm = fx_op(&f, "nm", "Add", "n4, m4", 1);
    FX_OK(&f, nm);
    FX_OUT(&f, nm, 0, TGC_FLOAT32, "[unk__0, 4]");
    CU_ASSERT(f.g->symbol_fresh[fx_node(&f, nm)->outputs[0].shape.dims[0].sym]);
    int32_t nn = fx_op(&f, "nn", "Div", "n4, n1", 1);
    FX_OK(&f, nn);
    FX_OUT(&f, nn, 0, TGC_FLOAT32, "[N, 4]");
    /* A symbol against a concrete 7: the run-time check is that N is 1 or 7. */
    int32_t n7 = fx_op(&f, "n7", "Sub", "n, seven", 1);
    FX_OK(&f, n7);
    FX_OUT(&f, n7, 0, TGC_FLOAT32, "[7]");
    int32_t u = fx_op(&f, "u", "Add", "unk, seven", 1);
    FX_OK(&f, u);
    FX_OUT(&f, u, 0, TGC_FLOAT32, "?");
    fx_end(&f);
}

static void test_arith_folds_values(void) {
    fx f = fx_begin();
    fx_value(&f, "v", TGC_INT64, "2", "2, 3");
    fx_value(&f, "four", TGC_INT64, "", "4");
    fx_value(&f, "nv", TGC_INT64, "2", "N, 4");
    fx_value(&f, "one", TGC_INT64, "1", "1");
    fx_value(&f, "zero", TGC_INT64, "", "0");
    int32_t mul = fx_op(&f, "mul", "Mul", "v, four", 1);
    FX_OK(&f, mul);
    FX_OUT(&f, mul, 0, TGC_INT64, "[2]");
    FX_VALUE(&f, mul, 0, "[8, 12]");
    int32_t div = fx_op(&f, "div", "Div", "mul, four", 1);
    FX_OK(&f, div);
    FX_VALUE(&f, div, 0, "[2, 3]");
    int32_t sub = fx_op(&f, "sub", "Sub", "four, v", 1);
    FX_OK(&f, sub);
    FX_VALUE(&f, sub, 0, "[2, 1]");
    int32_t add = fx_op(&f, "add", "Add", "v, v", 1);
    FX_OK(&f, add);
    FX_VALUE(&f, add, 0, "[4, 6]");
    /* Symbols fold only through identities: N * 1 = N, N + 0 = N; N * 4 is unknown. */
    int32_t id = fx_op(&f, "id", "Mul", "nv, one", 1);
    FX_OK(&f, id);
    FX_VALUE(&f, id, 0, "[N, 4]");
    int32_t plus0 = fx_op(&f, "plus0", "Add", "zero, nv", 1);
    FX_OK(&f, plus0);
    FX_VALUE(&f, plus0, 0, "[N, 4]");
    int32_t times = fx_op(&f, "times", "Mul", "nv, four", 1);
    FX_OK(&f, times);
    FX_VALUE(&f, times, 0, "none");
    /* Division by zero leaves the value unknown (the kernel reports it). */
    int32_t by0 = fx_op(&f, "by0", "Div", "v, zero", 1);
    FX_OK(&f, by0);
    FX_VALUE(&f, by0, 0, "none");
    fx_end(&f);
}

static void test_pow(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "2, 3");
    fx_input(&f, "e", TGC_INT64, "");
    fx_input(&f, "flag", TGC_BOOL, "");
    /* Pow-15: the exponent's type is independent; the output has the base's. */
    int32_t p = fx_op(&f, "p", "Pow", "x, e", 1);
    FX_OK(&f, p);
    FX_OUT(&f, p, 0, TGC_FLOAT32, "[2, 3]");
    int32_t bad = fx_op(&f, "bad", "Pow", "x, flag", 1);
    FX_FAILS(&f, bad, 1, "dtype-mismatch", "input 1 is bool");
    fx_end(&f);
}

/* ---- Unary ops ---------------------------------------------------------------- */

static void test_unary_ops(void) {
    static const char *const ops[] = {"Neg", "Abs", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
                                      "Exp", "Log", "Sqrt", "Erf", "Identity"};
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3");
    fx_input(&f, "h", TGC_FLOAT16, "?");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%zu", i);
        int32_t n = fx_op(&f, name, ops[i], "x", 1);
        if (strcmp(ops[i], "LeakyRelu") == 0) fx_attr_float(&f, n, "alpha", 0.2);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, 3]");
        snprintf(name, sizeof name, "h%zu", i);
        n = fx_op(&f, name, ops[i], "h", 1);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_FLOAT16, "?");
    }
    fx_end(&f);
}

static void test_unary_dtypes(void) {
    fx f = fx_begin();
    fx_input(&f, "i", TGC_INT64, "4");
    fx_input(&f, "u", TGC_UINT8, "4");
    fx_input(&f, "b", TGC_BOOL, "4");
    int32_t neg = fx_op(&f, "neg", "Neg", "i", 1);
    FX_OK(&f, neg);
    FX_OUT(&f, neg, 0, TGC_INT64, "[4]");
    int32_t abs = fx_op(&f, "abs", "Abs", "u", 1);
    FX_OK(&f, abs);
    int32_t erf = fx_op(&f, "erf", "Erf", "i", 1);
    FX_OK(&f, erf);
    int32_t sqrt = fx_op(&f, "sqrt", "Sqrt", "i", 1);
    FX_FAILS(&f, sqrt, 0, "dtype-mismatch", "input 0 is int64; Sqrt needs one of float32, float16");
    int32_t negu = fx_op(&f, "negu", "Neg", "u", 1);
    FX_FAILS(&f, negu, 0, "dtype-mismatch", "input 0 is uint8; Neg needs");
    int32_t relu = fx_op(&f, "relu", "Relu", "b", 1);
    FX_FAILS(&f, relu, 0, "dtype-mismatch", "input 0 is bool");
    int32_t id = fx_op(&f, "id", "Identity", "b", 1);
    FX_OK(&f, id);
    FX_OUT(&f, id, 0, TGC_BOOL, "[4]");
    fx_end(&f);
}

/* ---- Min, Max, Clip ----------------------------------------------------------------- */

static void test_min_max(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "2, 1");
    fx_input(&f, "b", TGC_FLOAT32, "1, 4");
    fx_input(&f, "c", TGC_FLOAT32, "3, 1, 1");
    fx_input(&f, "d", TGC_FLOAT32, "5");
    fx_input(&f, "i", TGC_INT32, "1");
    /* [2, 1], [1, 4], [3, 1, 1] -> [3, 2, 4]. */
    int32_t mx = fx_op(&f, "mx", "Max", "a, b, c", 1);
    FX_OK(&f, mx);
    FX_OUT(&f, mx, 0, TGC_FLOAT32, "[3, 2, 4]");
    int32_t one = fx_op(&f, "one", "Min", "c", 1);
    FX_OK(&f, one);
    FX_OUT(&f, one, 0, TGC_FLOAT32, "[3, 1, 1]");
    int32_t bad = fx_op(&f, "bad", "Min", "a, b, d", 1);
    FX_FAILS(&f, bad, 2, "shape-mismatch", "input 2 has shape [5], which does not broadcast with [2, 4]");
    int32_t mixed = fx_op(&f, "mixed", "Max", "a, i", 1);
    FX_FAILS(&f, mixed, 1, "dtype-mismatch", "input 1 is int32 but input 0 is float32");
    fx_end(&f);
}

static void test_clip(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3");
    fx_input(&f, "lo", TGC_FLOAT32, "");
    fx_input(&f, "hi", TGC_FLOAT32, "1");
    fx_input(&f, "vec", TGC_FLOAT32, "2");
    fx_input(&f, "ilo", TGC_INT64, "");
    int32_t both = fx_op(&f, "both", "Clip", "x, lo, hi", 1);
    FX_OK(&f, both);
    FX_OUT(&f, both, 0, TGC_FLOAT32, "[N, 3]");
    int32_t max_only = fx_op(&f, "max_only", "Clip", "x, , hi", 1);
    FX_OK(&f, max_only);
    FX_OUT(&f, max_only, 0, TGC_FLOAT32, "[N, 3]");
    int32_t none = fx_op(&f, "none", "Clip", "x", 1);
    FX_OK(&f, none);
    int32_t vec = fx_op(&f, "vec_bound", "Clip", "x, vec", 1);
    FX_FAILS(&f, vec, 1, "shape-mismatch", "input 1 ('min') has shape [2]; it must be a scalar");
    int32_t ity = fx_op(&f, "ity", "Clip", "x, ilo", 1);
    FX_FAILS(&f, ity, 1, "dtype-mismatch", "input 1 is int64 but input 0 is float32");
    fx_end(&f);
}

/* ---- Comparisons, Where, Cast -------------------------------------------------- */

static void test_comparisons(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_INT64, "N, 3");
    fx_input(&f, "b", TGC_INT64, "3");
    fx_input(&f, "t", TGC_BOOL, "N, 1");
    fx_input(&f, "x", TGC_FLOAT32, "3");
    static const char *const ops[] = {"Equal", "Less", "Greater"};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "cmp%d", i);
        int32_t n = fx_op(&f, name, ops[i], "a, b", 1);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_BOOL, "[N, 3]");
    }
    int32_t eqb = fx_op(&f, "eqb", "Equal", "t, t", 1);
    FX_OK(&f, eqb);
    FX_OUT(&f, eqb, 0, TGC_BOOL, "[N, 1]");
    int32_t lessb = fx_op(&f, "lessb", "Less", "t, t", 1);
    FX_FAILS(&f, lessb, 0, "dtype-mismatch", "input 0 is bool");
    int32_t gt = fx_op(&f, "gt", "Greater", "a, x", 1);
    FX_FAILS(&f, gt, 1, "dtype-mismatch", "input 1 is float32 but input 0 is int64");
    fx_end(&f);
}

static void test_where(void) {
    fx f = fx_begin();
    fx_input(&f, "c", TGC_BOOL, "N, 1, 1");
    fx_input(&f, "x", TGC_FLOAT32, "1, 3, 1");
    fx_input(&f, "y", TGC_FLOAT32, "4");
    fx_input(&f, "yi", TGC_INT32, "4");
    fx_input(&f, "y5", TGC_FLOAT32, "5, 1, 1");
    /* Three-way: [N, 1, 1], [1, 3, 1], [4] -> [N, 3, 4]. */
    int32_t w = fx_op(&f, "w", "Where", "c, x, y", 1);
    FX_OK(&f, w);
    FX_OUT(&f, w, 0, TGC_FLOAT32, "[N, 3, 4]");
    int32_t fc = fx_op(&f, "fc", "Where", "x, x, y", 1);
    FX_FAILS(&f, fc, 0, "dtype-mismatch", "input 0 is float32; Where needs bool");
    int32_t mixed = fx_op(&f, "mixed", "Where", "c, x, yi", 1);
    FX_FAILS(&f, mixed, 2, "dtype-mismatch", "input 2 is int32 but input 1 is float32");
    /* N broadcasts with 5 (N must be 1 or 5), but 3 against 1 is fine and
     * [N, 3, 1] with [5, 1, 1] gives [5, 3, 1]. */
    int32_t w5 = fx_op(&f, "w5", "Where", "c, x, y5", 1);
    FX_OK(&f, w5);
    FX_OUT(&f, w5, 0, TGC_FLOAT32, "[5, 3, 1]");
    fx_end(&f);
}

static void test_cast(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3");
    fx_value(&f, "s", TGC_INT64, "2", "N, 3");
    fx_value(&f, "big", TGC_INT64, "1", "5000000000");
    const struct {
        int64_t to;
        tgc_dtype dt;
    } codes[] = {{1, TGC_FLOAT32}, {10, TGC_FLOAT16}, {6, TGC_INT32},
                 {7, TGC_INT64},   {2, TGC_UINT8},    {9, TGC_BOOL}};
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        int32_t n = fx_op(&f, name, "Cast", "x", 1);
        fx_attr_int(&f, n, "to", codes[i].to);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, codes[i].dt, "[N, 3]");
    }
    /* int -> int passes the value; int -> float drops it. */
    int32_t i32 = fx_op(&f, "i32", "Cast", "s", 1);
    fx_attr_int(&f, i32, "to", 6);
    FX_OK(&f, i32);
    FX_OUT(&f, i32, 0, TGC_INT32, "[2]");
    FX_VALUE(&f, i32, 0, "[N, 3]");
    int32_t fl = fx_op(&f, "fl", "Cast", "s", 1);
    fx_attr_int(&f, fl, "to", 1);
    FX_OK(&f, fl);
    FX_VALUE(&f, fl, 0, "none");
    int32_t narrow = fx_op(&f, "narrow", "Cast", "big", 1);
    fx_attr_int(&f, narrow, "to", 6);
    FX_OK(&f, narrow);
    FX_VALUE(&f, narrow, 0, "none");
    int32_t dbl = fx_op(&f, "dbl", "Cast", "x", 1);
    fx_attr_int(&f, dbl, "to", 14); /* complex64: not a tgc dtype */
    FX_FAILS(&f, dbl, -1, "bad-attribute", "attribute 'to' is 14");
    fx_end(&f);
}

/* ---- Softmax, MatMul, Gemm --------------------------------------------------------- */

static void test_softmax(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 10");
    fx_input(&f, "i", TGC_INT64, "N, 10");
    int32_t sm = fx_op(&f, "sm", "Softmax", "x", 1);
    FX_OK(&f, sm);
    FX_OUT(&f, sm, 0, TGC_FLOAT32, "[N, 10]");
    int32_t lsm = fx_op(&f, "lsm", "LogSoftmax", "x", 1);
    fx_attr_int(&f, lsm, "axis", -2);
    FX_OK(&f, lsm);
    FX_OUT(&f, lsm, 0, TGC_FLOAT32, "[N, 10]");
    int32_t bad = fx_op(&f, "bad", "Softmax", "x", 1);
    fx_attr_int(&f, bad, "axis", 2);
    FX_FAILS(&f, bad, -1, "bad-attribute", "attribute 'axis' is 2, out of range [-2, 1]");
    int32_t ints = fx_op(&f, "ints", "Softmax", "i", 1);
    FX_FAILS(&f, ints, 0, "dtype-mismatch", "input 0 is int64");
    fx_end(&f);
}

static void test_matmul(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 64");
    fx_input(&f, "w", TGC_FLOAT32, "64, 10");
    fx_input(&f, "v3", TGC_FLOAT32, "3");
    fx_input(&f, "m34", TGC_FLOAT32, "3, 4");
    fx_input(&f, "m23", TGC_FLOAT32, "2, 3");
    fx_input(&f, "b4", TGC_FLOAT32, "2, 1, 3, 4");
    fx_input(&f, "b3", TGC_FLOAT32, "5, 4, 6");
    fx_input(&f, "c3", TGC_FLOAT32, "2, 3, 4");
    fx_input(&f, "k", TGC_FLOAT32, "N, K");
    fx_input(&f, "m45", TGC_FLOAT32, "4, 5");
    const struct {
        const char *inputs, *out;
    } ok[] = {
        {"x, w", "[N, 10]"},
        {"v3, m34", "[4]"},           /* [3] -> [1, 3]; [1, 4] -> drop the 1: [4] */
        {"m23, v3", "[2]"},           /* [3] -> [3, 1]; [2, 1] -> [2] */
        {"v3, v3", "[]"},             /* dot product */
        {"b4, b3", "[2, 5, 3, 6]"},   /* batch [2, 1] with [5] -> [2, 5]; [3, 4] x [4, 6] */
        {"k, w", "[N, 10]"},          /* K against 64 is a run-time check */
        {"v3, c3", "[2, 4]"},         /* [1, 3] x [2, 3, 4] -> [2, 1, 4] -> [2, 4] */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "mm%zu", i);
        int32_t n = fx_op(&f, name, "MatMul", ok[i].inputs, 1);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_FLOAT32, ok[i].out);
    }
    int32_t inner = fx_op(&f, "inner", "MatMul", "m23, m45", 1);
    FX_FAILS(&f, inner, 1, "shape-mismatch", "inner dimensions differ: [2, 3] x [4, 5] (3 vs 4)");
    int32_t batch = fx_op(&f, "batch", "MatMul", "c3, b3", 1);
    FX_FAILS(&f, batch, 1, "shape-mismatch", "batch dimensions of [2, 3, 4] and [5, 4, 6] do not broadcast");
    fx_end(&f);
}

static void test_gemm(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "4, 3");
    fx_input(&f, "b", TGC_FLOAT32, "5, 4");
    fx_input(&f, "c5", TGC_FLOAT32, "5");
    fx_input(&f, "c31", TGC_FLOAT32, "3, 1");
    fx_input(&f, "c4", TGC_FLOAT32, "4");
    fx_input(&f, "h", TGC_FLOAT32, "N, 8");
    fx_input(&f, "w", TGC_FLOAT32, "8, 2");
    fx_input(&f, "v", TGC_FLOAT32, "8");
    /* transA: A' = [3, 4]; transB: B' = [4, 5] -> [3, 5]. */
    int32_t g = fx_op(&f, "g", "Gemm", "a, b, c5", 1);
    fx_attr_int(&f, g, "transA", 1);
    fx_attr_int(&f, g, "transB", 1);
    fx_attr_float(&f, g, "alpha", 0.5);
    FX_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[3, 5]");
    int32_t g31 = fx_op(&f, "g31", "Gemm", "a, b, c31", 1);
    fx_attr_int(&f, g31, "transA", 1);
    fx_attr_int(&f, g31, "transB", 1);
    FX_OK(&f, g31);
    int32_t plain = fx_op(&f, "plain", "Gemm", "h, w", 1);
    FX_OK(&f, plain);
    FX_OUT(&f, plain, 0, TGC_FLOAT32, "[N, 2]");
    int32_t bad_c = fx_op(&f, "bad_c", "Gemm", "a, b, c4", 1);
    fx_attr_int(&f, bad_c, "transA", 1);
    fx_attr_int(&f, bad_c, "transB", 1);
    FX_FAILS(&f, bad_c, 2, "shape-mismatch", "input 2 (C) has shape [4], which does not broadcast to the result [3, 5]");
    int32_t no_trans = fx_op(&f, "no_trans", "Gemm", "a, b", 1);
    FX_FAILS(&f, no_trans, 1, "shape-mismatch", "inner dimensions differ");
    int32_t rank1 = fx_op(&f, "rank1", "Gemm", "v, w", 1);
    FX_FAILS(&f, rank1, 0, "shape-mismatch", "input 0 has shape [8]; Gemm needs rank 2");
    fx_end(&f);
}

/* ---- Conv ---------------------------------------------------------------------- */

/* Output size per spatial axis (ONNX convPoolShapeInference):
 *   ek = (k - 1) * dilation + 1
 *   NOTSET: floor((in + pad_begin + pad_end - ek) / stride) + 1
 *   VALID:  floor((in - ek) / stride) + 1
 *   SAME_*: ceil(in / stride) */
static void test_conv_2d(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 1, 8, 8");
    fx_input(&f, "w", TGC_FLOAT32, "8, 1, 3, 3");
    fx_input(&f, "b", TGC_FLOAT32, "8");
    fx_input(&f, "b7", TGC_FLOAT32, "7");
    /* (8 + 1 + 1 - 3) / 1 + 1 = 8 */
    int32_t c = fx_op(&f, "conv", "Conv", "x, w, b", 1);
    fx_attr_ints(&f, c, "kernel_shape", "3, 3");
    fx_attr_ints(&f, c, "pads", "1, 1, 1, 1");
    FX_OK(&f, c);
    FX_OUT(&f, c, 0, TGC_FLOAT32, "[N, 8, 8, 8]");
    /* No kernel_shape, no pads: (8 - 3) / 1 + 1 = 6 */
    int32_t plain = fx_op(&f, "plain", "Conv", "x, w", 1);
    FX_OK(&f, plain);
    FX_OUT(&f, plain, 0, TGC_FLOAT32, "[N, 8, 6, 6]");
    int32_t bad_b = fx_op(&f, "bad_b", "Conv", "x, w, b7", 1);
    FX_FAILS(&f, bad_b, 2, "shape-mismatch", "B has shape [7] but W [8, 1, 3, 3] has 8 output channels");
    fx_end(&f);
}

static void test_conv_strides_dilations(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 3, 32, 32");
    fx_input(&f, "w", TGC_FLOAT32, "16, 3, 3, 3");
    /* ek = (3 - 1) * 2 + 1 = 5; (32 - 5) / 2 + 1 = 13 + 1 = 14 */
    int32_t c = fx_op(&f, "conv", "Conv", "x, w", 1);
    fx_attr_ints(&f, c, "strides", "2, 2");
    fx_attr_ints(&f, c, "dilations", "2, 2");
    fx_attr_ints(&f, c, "pads", "0, 0, 0, 0");
    FX_OK(&f, c);
    FX_OUT(&f, c, 0, TGC_FLOAT32, "[1, 16, 14, 14]");
    /* Asymmetric: H: (32 + 0 + 1 - 3) / 3 + 1 = 11; W: (32 + 2 + 0 - 3) / 1 + 1 = 32 */
    int32_t a = fx_op(&f, "asym", "Conv", "x, w", 1);
    fx_attr_ints(&f, a, "strides", "3, 1");
    fx_attr_ints(&f, a, "pads", "0, 2, 1, 0");
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[1, 16, 11, 32]");
    fx_end(&f);
}

static void test_conv_auto_pad(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 3, 7, 7");
    fx_input(&f, "w", TGC_FLOAT32, "4, 3, 3, 3");
    fx_input(&f, "xs", TGC_FLOAT32, "N, 3, H, W");
    const struct {
        const char *pad, *strides, *out;
    } cases[] = {
        {"SAME_UPPER", "2, 2", "[1, 4, 4, 4]"}, /* ceil(7 / 2) = 4 */
        {"SAME_LOWER", "2, 2", "[1, 4, 4, 4]"},
        {"SAME_UPPER", "1, 1", "[1, 4, 7, 7]"},
        {"VALID", "1, 1", "[1, 4, 5, 5]"},      /* (7 - 3) / 1 + 1 = 5 */
        {"VALID", "2, 2", "[1, 4, 3, 3]"},      /* (7 - 3) / 2 + 1 = 3 */
        {"NOTSET", "1, 1", "[1, 4, 5, 5]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%zu", i);
        int32_t c = fx_op(&f, name, "Conv", "x, w", 1);
        fx_attr_string(&f, c, "auto_pad", cases[i].pad);
        fx_attr_ints(&f, c, "strides", cases[i].strides);
        FX_OK(&f, c);
        FX_OUT(&f, c, 0, TGC_FLOAT32, cases[i].out);
    }
    /* Symbolic spatial dims: SAME with stride 1 keeps them; stride 2 cannot tell. */
    int32_t same = fx_op(&f, "same", "Conv", "xs, w", 1);
    fx_attr_string(&f, same, "auto_pad", "SAME_UPPER");
    FX_OK(&f, same);
    FX_OUT(&f, same, 0, TGC_FLOAT32, "[N, 4, H, W]");
    int32_t pad1 = fx_op(&f, "pad1", "Conv", "xs, w", 1);
    fx_attr_ints(&f, pad1, "pads", "1, 1, 1, 1");
    FX_OK(&f, pad1);
    FX_OUT(&f, pad1, 0, TGC_FLOAT32, "[N, 4, H, W]");
    int32_t s2 = fx_op(&f, "s2", "Conv", "xs, w", 1);
    fx_attr_ints(&f, s2, "strides", "2, 2");
    FX_OK(&f, s2);
    FX_OUT(&f, s2, 0, TGC_FLOAT32, "[N, 4, unk__0, unk__1]");
    int32_t bad = fx_op(&f, "bad", "Conv", "x, w", 1);
    fx_attr_string(&f, bad, "auto_pad", "SAME");
    FX_FAILS(&f, bad, -1, "bad-attribute", "attribute 'auto_pad' is 'SAME'");
    int32_t both = fx_op(&f, "both", "Conv", "x, w", 1);
    fx_attr_string(&f, both, "auto_pad", "VALID");
    fx_attr_ints(&f, both, "pads", "1, 1, 1, 1");
    FX_FAILS(&f, both, -1, "bad-attribute", "'pads' and 'auto_pad' (VALID) cannot be used together");
    fx_end(&f);
}

static void test_conv_groups_and_1d(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 8, 10, 10");
    fx_input(&f, "w", TGC_FLOAT32, "16, 2, 3, 3");
    fx_input(&f, "x1", TGC_FLOAT32, "N, 4, 100");
    fx_input(&f, "w1", TGC_FLOAT32, "6, 4, 5");
    fx_input(&f, "x3", TGC_FLOAT32, "1, 2, 5, 6, 7");
    fx_input(&f, "w3", TGC_FLOAT32, "4, 2, 3, 3, 3");
    /* group 4: C = 8 = 2 * 4; 16 output channels. */
    int32_t g = fx_op(&f, "g", "Conv", "x, w", 1);
    fx_attr_int(&f, g, "group", 4);
    FX_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[1, 16, 8, 8]");
    int32_t g3 = fx_op(&f, "g3", "Conv", "x, w", 1);
    fx_attr_int(&f, g3, "group", 3);
    FX_FAILS(&f, g3, 1, "shape-mismatch", "with group 3 takes 6");
    int32_t g0 = fx_op(&f, "g0", "Conv", "x, w", 1);
    fx_attr_int(&f, g0, "group", 0);
    FX_FAILS(&f, g0, -1, "bad-attribute", "attribute 'group' is 0");
    /* 1-D: (100 + 2 + 2 - 5) / 3 + 1 = 33 + 1 = 34 */
    int32_t c1 = fx_op(&f, "c1", "Conv", "x1, w1", 1);
    fx_attr_ints(&f, c1, "strides", "3");
    fx_attr_ints(&f, c1, "pads", "2, 2");
    FX_OK(&f, c1);
    FX_OUT(&f, c1, 0, TGC_FLOAT32, "[N, 6, 34]");
    /* 3-D: 5 - 2, 6 - 2, 7 - 2 */
    int32_t c3 = fx_op(&f, "c3", "Conv", "x3, w3", 1);
    FX_OK(&f, c3);
    FX_OUT(&f, c3, 0, TGC_FLOAT32, "[1, 4, 3, 4, 5]");
    int32_t ks = fx_op(&f, "ks", "Conv", "x1, w1", 1);
    fx_attr_ints(&f, ks, "kernel_shape", "3");
    FX_FAILS(&f, ks, -1, "bad-attribute", "attribute 'kernel_shape' gives 3 for spatial axis 0 but W has shape [6, 4, 5]");
    int32_t pads = fx_op(&f, "pads", "Conv", "x1, w1", 1);
    fx_attr_ints(&f, pads, "pads", "1, 1, 1");
    FX_FAILS(&f, pads, -1, "bad-attribute", "attribute 'pads' has 3 values; it needs 2");
    int32_t neg = fx_op(&f, "neg", "Conv", "x1, w1", 1);
    fx_attr_ints(&f, neg, "kernel_shape", "-5");
    FX_FAILS(&f, neg, -1, "bad-attribute", "attribute 'kernel_shape' has -5");
    int32_t rank = fx_op(&f, "rank", "Conv", "x1, w", 1);
    FX_FAILS(&f, rank, 1, "shape-mismatch", "X has shape [N, 4, 100] but W has shape [16, 2, 3, 3]");
    fx_end(&f);
}

static void test_conv_unknown_ranks(void) {
    fx f = fx_begin();
    fx_input(&f, "u", TGC_FLOAT32, "?");
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 8, 8");
    fx_input(&f, "w", TGC_FLOAT32, "16, 3, 3, 3");
    fx_input(&f, "b", TGC_FLOAT32, "16");
    /* W gives the rank and M; X's dims are unknown. */
    int32_t ux = fx_op(&f, "ux", "Conv", "u, w", 1);
    FX_OK(&f, ux);
    FX_OUT(&f, ux, 0, TGC_FLOAT32, "[unk__0, 16, unk__1, unk__2]");
    /* X gives the rank, B gives M; without W the kernel is unknown. */
    int32_t uw = fx_op(&f, "uw", "Conv", "x, u, b", 1);
    FX_OK(&f, uw);
    FX_OUT(&f, uw, 0, TGC_FLOAT32, "[N, 16, unk__3, unk__4]");
    /* ... unless kernel_shape says it: (8 + 2 - 3) / 1 + 1 = 8. */
    int32_t uk = fx_op(&f, "uk", "Conv", "x, u", 1);
    fx_attr_ints(&f, uk, "kernel_shape", "3, 3");
    fx_attr_ints(&f, uk, "pads", "1, 1, 1, 1");
    FX_OK(&f, uk);
    FX_OUT(&f, uk, 0, TGC_FLOAT32, "[N, unk__5, 8, 8]");
    int32_t both = fx_op(&f, "both", "Conv", "u, u", 1);
    FX_OK(&f, both);
    FX_OUT(&f, both, 0, TGC_FLOAT32, "?");
    fx_end(&f);
}

static void test_conv_too_small(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 1, 2, 2");
    fx_input(&f, "w", TGC_FLOAT32, "1, 1, 3, 3");
    int32_t c = fx_op(&f, "conv", "Conv", "x, w", 1);
    FX_FAILS(&f, c, 0, "shape-mismatch", "spatial axis 0 has size 2 (2 with padding), smaller than the kernel's extent 3");
    fx_end(&f);
}

/* The spatial output size of Conv and MaxPool over a sweep of sizes,
 * kernels, strides, dilations, pads and modes, against a count of window
 * positions: a window starts every `stride` elements of the padded input;
 * floor mode counts those that fit, ceil mode also the last partial one
 * (one that starts before the padded end minus the kernel plus a stride),
 * SAME counts starts inside the unpadded input (ceil(in / stride)). */
static void test_window_sizes_brute_force(void) {
    static const char *const modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
    int checked = 0;
    for (int in = 1; in <= 12; in++)
        for (int k = 1; k <= 4; k++)
            for (int st = 1; st <= 3; st++)
                for (int dil = 1; dil <= 2; dil++)
                    for (int pads = 0; pads < 9; pads++)
                        for (int mode = 0; mode < 4; mode++)
                            for (int ceil = 0; ceil <= 1; ceil++) {
                                int pb = pads / 3, pe = pads % 3;
                                if (mode != 0 && pads != 0) continue; /* pads go with NOTSET only */
                                if (mode >= 2 && ceil) continue;      /* see ONNX's residual rule */
                                int ek = (k - 1) * dil + 1, len = mode == 0 ? in + pb + pe : in;
                                int expect = 0;
                                if (mode >= 2) {
                                    for (int t = 0; t < in; t += st) expect++;
                                } else if (len >= ek) {
                                    for (int t = 0; ceil ? t - st < len - ek : t + ek <= len; t += st) expect++;
                                }
                                fx f = fx_begin();
                                char x[32], w[32], ks[8], strides[8], dils[8], pl[16];
                                snprintf(x, sizeof x, "N, 2, %d", in);
                                snprintf(w, sizeof w, "3, 2, %d", k);
                                snprintf(ks, sizeof ks, "%d", k);
                                snprintf(strides, sizeof strides, "%d", st);
                                snprintf(dils, sizeof dils, "%d", dil);
                                snprintf(pl, sizeof pl, "%d, %d", pb, pe);
                                fx_input(&f, "x", TGC_FLOAT32, x);
                                fx_input(&f, "w", TGC_FLOAT32, w);
                                int32_t conv = fx_op(&f, "conv", "Conv", "x, w", 1);
                                int32_t pool = fx_op(&f, "pool", "MaxPool", "x", 1);
                                for (int32_t id = conv; id <= pool; id++) {
                                    fx_attr_ints(&f, id, "strides", strides);
                                    fx_attr_ints(&f, id, "dilations", dils);
                                    if (mode == 0) fx_attr_ints(&f, id, "pads", pl);
                                    fx_attr_string(&f, id, "auto_pad", modes[mode]);
                                }
                                fx_attr_ints(&f, pool, "kernel_shape", ks);
                                fx_attr_int(&f, pool, "ceil_mode", ceil);
                                char want_conv[48], want_pool[48];
                                snprintf(want_conv, sizeof want_conv, "[N, 3, %d]", expect);
                                snprintf(want_pool, sizeof want_pool, "[N, 2, %d]", expect);
                                if (expect > 0) {
                                    if (!ceil) {
                                        FX_OK(&f, conv);
                                        FX_OUT(&f, conv, 0, TGC_FLOAT32, want_conv);
                                    }
                                    FX_OK(&f, pool);
                                    FX_OUT(&f, pool, 0, TGC_FLOAT32, want_pool);
                                } else {
                                    FX_FAILS(&f, pool, 0, "shape-mismatch", "smaller than the kernel's extent");
                                }
                                checked++;
                                fx_end(&f);
                            }
    CU_ASSERT(checked > 2000);
}

/* ---- Pools ------------------------------------------------------------------------ */

static void test_max_pool(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 1, 5, 5");
    fx_input(&f, "xs", TGC_FLOAT32, "N, C, H, W");
    /* floor((5 - 2) / 2) + 1 = 2; with ceil_mode ceil(3 / 2) + 1 = 3 */
    int32_t p = fx_op(&f, "p", "MaxPool", "x", 2);
    fx_attr_ints(&f, p, "kernel_shape", "2, 2");
    fx_attr_ints(&f, p, "strides", "2, 2");
    FX_OK(&f, p);
    FX_OUT(&f, p, 0, TGC_FLOAT32, "[1, 1, 2, 2]");
    FX_OUT(&f, p, 1, TGC_INT64, "[1, 1, 2, 2]");
    int32_t pc = fx_op(&f, "pc", "MaxPool", "x", 1);
    fx_attr_ints(&f, pc, "kernel_shape", "2, 2");
    fx_attr_ints(&f, pc, "strides", "2, 2");
    fx_attr_int(&f, pc, "ceil_mode", 1);
    FX_OK(&f, pc);
    FX_OUT(&f, pc, 0, TGC_FLOAT32, "[1, 1, 3, 3]");
    /* dilations 2: ek = 3; (5 - 3) / 1 + 1 = 3 */
    int32_t pd = fx_op(&f, "pd", "MaxPool", "x", 1);
    fx_attr_ints(&f, pd, "kernel_shape", "2, 2");
    fx_attr_ints(&f, pd, "dilations", "2, 2");
    fx_attr_int(&f, pd, "storage_order", 1);
    FX_OK(&f, pd);
    FX_OUT(&f, pd, 0, TGC_FLOAT32, "[1, 1, 3, 3]");
    /* SAME_UPPER, stride 2: ceil(5 / 2) = 3 */
    int32_t ps = fx_op(&f, "ps", "MaxPool", "x", 1);
    fx_attr_ints(&f, ps, "kernel_shape", "3, 3");
    fx_attr_ints(&f, ps, "strides", "2, 2");
    fx_attr_string(&f, ps, "auto_pad", "SAME_UPPER");
    FX_OK(&f, ps);
    FX_OUT(&f, ps, 0, TGC_FLOAT32, "[1, 1, 3, 3]");
    int32_t sym = fx_op(&f, "sym", "MaxPool", "xs", 1);
    fx_attr_ints(&f, sym, "kernel_shape", "3, 3");
    fx_attr_ints(&f, sym, "pads", "1, 1, 1, 1");
    FX_OK(&f, sym);
    FX_OUT(&f, sym, 0, TGC_FLOAT32, "[N, C, H, W]");
    int32_t nok = fx_op(&f, "nok", "MaxPool", "x", 1);
    FX_FAILS(&f, nok, -1, "bad-attribute", "attribute 'kernel_shape' is required");
    int32_t so = fx_op(&f, "so", "MaxPool", "x", 1);
    fx_attr_ints(&f, so, "kernel_shape", "2, 2");
    fx_attr_int(&f, so, "storage_order", 2);
    FX_FAILS(&f, so, -1, "bad-attribute", "attribute 'storage_order' is 2");
    int32_t k1 = fx_op(&f, "k1", "MaxPool", "x", 1);
    fx_attr_ints(&f, k1, "kernel_shape", "2");
    FX_FAILS(&f, k1, 0, "shape-mismatch", "input 0 has shape [1, 1, 5, 5] but 'kernel_shape' has 1 axes");
    fx_end(&f);
}

static void test_average_pool(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 7, 7");
    fx_input(&f, "y", TGC_FLOAT32, "1, 1, 6, 6");
    fx_input(&f, "u", TGC_UINT8, "1, 1, 6, 6");
    /* (7 + 2 - 3) / 2 + 1 = 4 */
    int32_t a = fx_op(&f, "a", "AveragePool", "x", 1);
    fx_attr_ints(&f, a, "kernel_shape", "3, 3");
    fx_attr_ints(&f, a, "strides", "2, 2");
    fx_attr_ints(&f, a, "pads", "1, 1, 1, 1");
    fx_attr_int(&f, a, "count_include_pad", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[N, 3, 4, 4]");
    /* floor((6 - 3) / 2) + 1 = 2; ceil(3 / 2) + 1 = 3 */
    int32_t fl = fx_op(&f, "fl", "AveragePool", "y", 1);
    fx_attr_ints(&f, fl, "kernel_shape", "3, 3");
    fx_attr_ints(&f, fl, "strides", "2, 2");
    FX_OK(&f, fl);
    FX_OUT(&f, fl, 0, TGC_FLOAT32, "[1, 1, 2, 2]");
    int32_t ce = fx_op(&f, "ce", "AveragePool", "y", 1);
    fx_attr_ints(&f, ce, "kernel_shape", "3, 3");
    fx_attr_ints(&f, ce, "strides", "2, 2");
    fx_attr_int(&f, ce, "ceil_mode", 1);
    FX_OK(&f, ce);
    FX_OUT(&f, ce, 0, TGC_FLOAT32, "[1, 1, 3, 3]");
    /* MaxPool takes uint8, AveragePool does not. */
    int32_t mu = fx_op(&f, "mu", "MaxPool", "u", 1);
    fx_attr_ints(&f, mu, "kernel_shape", "2, 2");
    FX_OK(&f, mu);
    FX_OUT(&f, mu, 0, TGC_UINT8, "[1, 1, 5, 5]");
    int32_t au = fx_op(&f, "au", "AveragePool", "u", 1);
    fx_attr_ints(&f, au, "kernel_shape", "2, 2");
    FX_FAILS(&f, au, 0, "dtype-mismatch", "input 0 is uint8");
    int32_t cm = fx_op(&f, "cm", "AveragePool", "y", 1);
    fx_attr_ints(&f, cm, "kernel_shape", "2, 2");
    fx_attr_int(&f, cm, "ceil_mode", 3);
    FX_FAILS(&f, cm, -1, "bad-attribute", "attribute 'ceil_mode' is 3");
    fx_end(&f);
}

static void test_global_average_pool(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 8, H, W");
    fx_input(&f, "x1", TGC_FLOAT32, "2, 8, 5");
    fx_input(&f, "v", TGC_FLOAT32, "8");
    int32_t g = fx_op(&f, "g", "GlobalAveragePool", "x", 1);
    FX_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[N, 8, 1, 1]");
    int32_t g1 = fx_op(&f, "g1", "GlobalAveragePool", "x1", 1);
    FX_OK(&f, g1);
    FX_OUT(&f, g1, 0, TGC_FLOAT32, "[2, 8, 1]");
    int32_t bad = fx_op(&f, "bad", "GlobalAveragePool", "v", 1);
    FX_FAILS(&f, bad, 0, "shape-mismatch", "input 0 has shape [8]");
    fx_end(&f);
}

/* ---- Normalisation --------------------------------------------------------------- */

static void test_batch_norm(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 8, 4, 4");
    fx_input(&f, "p", TGC_FLOAT32, "8");
    fx_input(&f, "p7", TGC_FLOAT32, "7");
    int32_t bn = fx_op(&f, "bn", "BatchNormalization", "x, p, p, p, p", 1);
    fx_attr_float(&f, bn, "epsilon", 1e-3);
    FX_OK(&f, bn);
    FX_OUT(&f, bn, 0, TGC_FLOAT32, "[N, 8, 4, 4]");
    int32_t tr = fx_op(&f, "tr", "BatchNormalization", "x, p, p, p, p", 3); /* training: running statistics */
    fx_attr_int(&f, tr, "training_mode", 1);
    FX_OK(&f, tr);
    FX_OUT(&f, tr, 0, TGC_FLOAT32, "[N, 8, 4, 4]");
    FX_OUT(&f, tr, 1, TGC_FLOAT32, "[8]");
    FX_OUT(&f, tr, 2, TGC_FLOAT32, "[8]");
    int32_t tr2 = fx_op(&f, "tr2", "BatchNormalization", "x, p, p, p, p", 1);
    fx_attr_int(&f, tr2, "training_mode", 2);
    FX_FAILS(&f, tr2, -1, "bad-attribute", "attribute 'training_mode' is 2");
    int32_t three = fx_op(&f, "three", "BatchNormalization", "x, p, p, p, p", 3);
    FX_FAILS(&f, three, -1, "bad-attribute", "running_mean and running_var exist only with training_mode 1");
    int32_t bad = fx_op(&f, "bad", "BatchNormalization", "x, p, p, p7, p", 1);
    FX_FAILS(&f, bad, 3, "shape-mismatch", "input 3 (input_mean) has shape [7]; it must be [C] for X [N, 8, 4, 4]");
    fx_end(&f);
}

static void test_layer_norm(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, T, 64");
    fx_input(&f, "s", TGC_FLOAT32, "64");
    fx_input(&f, "s2", TGC_FLOAT32, "T, 64");
    fx_input(&f, "s32", TGC_FLOAT32, "32");
    int32_t ln = fx_op(&f, "ln", "LayerNormalization", "x, s, s", 3);
    FX_OK(&f, ln);
    FX_OUT(&f, ln, 0, TGC_FLOAT32, "[N, T, 64]");
    FX_OUT(&f, ln, 1, TGC_FLOAT32, "[N, T, 1]");
    FX_OUT(&f, ln, 2, TGC_FLOAT32, "[N, T, 1]");
    int32_t ax1 = fx_op(&f, "ax1", "LayerNormalization", "x, s2", 2);
    fx_attr_int(&f, ax1, "axis", 1);
    fx_attr_float(&f, ax1, "epsilon", 1e-6);
    FX_OK(&f, ax1);
    FX_OUT(&f, ax1, 0, TGC_FLOAT32, "[N, T, 64]");
    FX_OUT(&f, ax1, 1, TGC_FLOAT32, "[N, 1, 1]");
    int32_t bad = fx_op(&f, "bad", "LayerNormalization", "x, s32", 1);
    FX_FAILS(&f, bad, 1, "shape-mismatch", "input 1 (Scale) has shape [32]");
    int32_t st = fx_op(&f, "st", "LayerNormalization", "x, s", 1);
    fx_attr_int(&f, st, "stash_type", 10);
    FX_FAILS(&f, st, -1, "bad-attribute", "attribute 'stash_type' is 10");
    int32_t ax = fx_op(&f, "ax", "LayerNormalization", "x, s", 1);
    fx_attr_int(&f, ax, "axis", 3);
    FX_FAILS(&f, ax, -1, "bad-attribute", "attribute 'axis' is 3");
    fx_end(&f);
}

/* ---- Reductions ------------------------------------------------------------------- */

static void test_reduce_attr_axes(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4, 5");
    const struct {
        const char *op, *axes;
        int keepdims;
        const char *out;
    } cases[] = {
        {"ReduceMean", "1, -1", 1, "[N, 1, 4, 1]"},
        {"ReduceMean", "1, -1", 0, "[N, 4]"},
        {"ReduceMax", NULL, 1, "[1, 1, 1, 1]"},
        {"ReduceMax", NULL, 0, "[]"},
        {"ReduceMax", "0", 0, "[3, 4, 5]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%zu", i);
        int32_t r = fx_op(&f, name, cases[i].op, "x", 1);
        if (cases[i].axes) fx_attr_ints(&f, r, "axes", cases[i].axes);
        fx_attr_int(&f, r, "keepdims", cases[i].keepdims);
        FX_OK(&f, r);
        FX_OUT(&f, r, 0, TGC_FLOAT32, cases[i].out);
    }
    int32_t bad = fx_op(&f, "bad", "ReduceMax", "x", 1);
    fx_attr_ints(&f, bad, "axes", "4");
    FX_FAILS(&f, bad, -1, "bad-attribute", "attribute 'axes' has axis 4, out of range [-4, 3]");
    int32_t dup = fx_op(&f, "dup", "ReduceMean", "x", 1);
    fx_attr_ints(&f, dup, "axes", "1, -3");
    FX_FAILS(&f, dup, -1, "bad-attribute", "attribute 'axes' repeats axis 1");
    fx_end(&f);
}

static void test_reduce_sum_axes_input(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4, 5");
    fx_value(&f, "a1", TGC_INT64, "1", "1");
    fx_value(&f, "none", TGC_INT64, "0", "");
    fx_value(&f, "a9", TGC_INT64, "1", "9");
    fx_input(&f, "dyn", TGC_INT64, "1");
    int32_t r = fx_op(&f, "r", "ReduceSum", "x, a1", 1);
    fx_attr_int(&f, r, "keepdims", 0);
    FX_OK(&f, r);
    FX_OUT(&f, r, 0, TGC_FLOAT32, "[N, 4, 5]");
    int32_t all = fx_op(&f, "all", "ReduceSum", "x", 1);
    FX_OK(&f, all);
    FX_OUT(&f, all, 0, TGC_FLOAT32, "[1, 1, 1, 1]");
    int32_t empty = fx_op(&f, "empty", "ReduceSum", "x, none", 1);
    fx_attr_int(&f, empty, "keepdims", 0);
    FX_OK(&f, empty);
    FX_OUT(&f, empty, 0, TGC_FLOAT32, "[]");
    int32_t noop = fx_op(&f, "noop", "ReduceSum", "x, none", 1);
    fx_attr_int(&f, noop, "noop_with_empty_axes", 1);
    FX_OK(&f, noop);
    FX_OUT(&f, noop, 0, TGC_FLOAT32, "[N, 3, 4, 5]");
    /* Unknown axes: each dim may or may not be reduced. */
    int32_t d1 = fx_op(&f, "d1", "ReduceSum", "x, dyn", 1);
    FX_OK(&f, d1);
    FX_OUT(&f, d1, 0, TGC_FLOAT32, "[unk__0, unk__1, unk__2, unk__3]");
    int32_t d0 = fx_op(&f, "d0", "ReduceSum", "x, dyn", 1);
    fx_attr_int(&f, d0, "keepdims", 0);
    FX_OK(&f, d0);
    FX_OUT(&f, d0, 0, TGC_FLOAT32, "?");
    int32_t bad = fx_op(&f, "bad", "ReduceSum", "x, a9", 1);
    FX_FAILS(&f, bad, 1, "bad-input", "input 'axes' has axis 9");
    fx_end(&f);
}

static void test_argmax(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    const struct {
        int64_t axis, keepdims;
        const char *out;
    } cases[] = {{1, 1, "[N, 1, 4]"}, {1, 0, "[N, 4]"}, {-1, 0, "[N, 3]"}, {0, 1, "[1, 3, 4]"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "a%zu", i);
        int32_t a = fx_op(&f, name, "ArgMax", "x", 1);
        fx_attr_int(&f, a, "axis", cases[i].axis);
        fx_attr_int(&f, a, "keepdims", cases[i].keepdims);
        fx_attr_int(&f, a, "select_last_point_index", 1);
        FX_OK(&f, a);
        FX_OUT(&f, a, 0, TGC_INT64, cases[i].out);
    }
    int32_t dflt = fx_op(&f, "dflt", "ArgMax", "x", 1);
    FX_OK(&f, dflt);
    FX_OUT(&f, dflt, 0, TGC_INT64, "[1, 3, 4]");
    int32_t bad = fx_op(&f, "bad", "ArgMax", "x", 1);
    fx_attr_int(&f, bad, "axis", 3);
    FX_FAILS(&f, bad, -1, "bad-attribute", "attribute 'axis' is 3");
    fx_end(&f);
}

/* ---- The inference context (infer_ctx.c) --------------------------------------------- */

static void test_infer_ctx_accessors(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "2");
    fx_value(&f, "v", TGC_INT64, "2", "N, 3");
    fx_value(&f, "k", TGC_INT64, "2", "4, 3");
    int32_t id = fx_op(&f, "n", "Clip", "a, , v", 2);
    fx_attr_int(&f, id, "i", 7);
    fx_attr_int(&f, id, "f_as_int", 2);
    fx_attr_float(&f, id, "f", 0.25);
    fx_attr_string(&f, id, "s", "SAME_UPPER");
    fx_attr_ints(&f, id, "l", "1, 2, 3");
    tgc_infer_ctx c = {.graph = f.g, .node = fx_node(&f, id), .diags = f.d};
    CU_ASSERT_EQUAL(tgc_infer_num_inputs(&c), 3);
    CU_ASSERT_EQUAL(tgc_infer_num_outputs(&c), 2);
    CU_ASSERT_PTR_NOT_NULL(tgc_infer_input(&c, 0));
    CU_ASSERT_PTR_NULL(tgc_infer_input(&c, 1)); /* omitted */
    CU_ASSERT_PTR_NULL(tgc_infer_input(&c, 3)); /* past the written count */
    CU_ASSERT_PTR_NULL(tgc_infer_input(&c, -1));
    CU_ASSERT_EQUAL(tgc_infer_attr_int(&c, "i", 1), 7);
    CU_ASSERT_EQUAL(tgc_infer_attr_int(&c, "missing", -3), -3);
    CU_ASSERT_DOUBLE_EQUAL(tgc_infer_attr_float(&c, "f", 1.0), 0.25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tgc_infer_attr_float(&c, "f_as_int", 1.0), 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tgc_infer_attr_float(&c, "missing", 1.5), 1.5, 1e-12);
    CU_ASSERT_STRING_EQUAL(tgc_infer_attr_string(&c, "s", "NOTSET"), "SAME_UPPER");
    CU_ASSERT_STRING_EQUAL(tgc_infer_attr_string(&c, "missing", "NOTSET"), "NOTSET");
    const int64_t *l;
    size_t n;
    CU_ASSERT(tgc_infer_attr_ints(&c, "l", &l, &n) && n == 3 && l[2] == 3);
    CU_ASSERT(!tgc_infer_attr_ints(&c, "missing", &l, &n) && n == 0 && l == NULL);
    /* Concrete values only. */
    int64_t out[4];
    int len = -1;
    CU_ASSERT_FALSE(tgc_infer_input_concrete_value(&c, 2, out, 4, &len));
    CU_ASSERT_FALSE(tgc_infer_input_concrete_value(&c, 0, out, 4, &len));
    fx_node(&f, id)->inputs[2].node = fx_find(&f, "k");
    CU_ASSERT(tgc_infer_input_concrete_value(&c, 2, out, 4, &len) && len == 2 && out[0] == 4 && out[1] == 3);
    CU_ASSERT_FALSE(tgc_infer_input_concrete_value(&c, 2, out, 1, &len)); /* too long for out */
    /* Outputs: a value sticks only to a small int tensor of matching length. */
    tgc_shape s2 = {.rank = 1, .dims = {tgc_dim_of(2)}}, m = {.rank = 2, .dims = {tgc_dim_of(1), tgc_dim_of(2)}};
    tgc_dim vals[2] = {tgc_dim_of(5), tgc_dim_of(6)};
    CU_ASSERT_EQUAL(tgc_infer_set_output(&c, 0, TGC_INT64, &s2), TGC_OK);
    CU_ASSERT_EQUAL(tgc_infer_set_value(&c, 0, 2, vals), TGC_OK);
    FX_VALUE(&f, id, 0, "[5, 6]");
    CU_ASSERT_EQUAL(tgc_infer_set_output(&c, 0, TGC_INT64, &s2), TGC_OK); /* clears the value */
    FX_VALUE(&f, id, 0, "none");
    CU_ASSERT_EQUAL(tgc_infer_set_value(&c, 0, 1, vals), TGC_OK);
    FX_VALUE(&f, id, 0, "none");
    CU_ASSERT_EQUAL(tgc_infer_set_output(&c, 1, TGC_INT64, &m), TGC_OK);
    CU_ASSERT_EQUAL(tgc_infer_set_value(&c, 1, 2, vals), TGC_OK);
    FX_VALUE(&f, id, 1, "none");
    CU_ASSERT_EQUAL(tgc_infer_set_output(&c, 1, TGC_FLOAT32, &s2), TGC_OK);
    CU_ASSERT_EQUAL(tgc_infer_set_value(&c, 1, 2, vals), TGC_OK);
    FX_VALUE(&f, id, 1, "none");
    CU_ASSERT_EQUAL(tgc_infer_set_output(&c, 2, TGC_FLOAT32, &s2), TGC_OK); /* no such output: ignored */
    /* Dtype checks report at the input's reference. */
    CU_ASSERT(tgc_infer_require_float(&c, 0));
    CU_ASSERT(tgc_infer_require_numeric(&c, 0));
    CU_ASSERT(tgc_infer_require_int(&c, 1)); /* omitted: nothing to check */
    CU_ASSERT(tgc_infer_require_dtype(&c, 2, TGC_INT64));
    CU_ASSERT_EQUAL(tgc_diags_count(f.d), 0);
    CU_ASSERT_FALSE(tgc_infer_require_int(&c, 0));
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(f.d, 0), "node 'n' (Clip): input 0 is float32; Clip needs int32 or int64");
    CU_ASSERT_EQUAL(tgc_diag_column(f.d, 0), 20);
    CU_ASSERT_FALSE(tgc_infer_require_same_dtype(&c, 0, 2));
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(f.d, 1),
                           "node 'n' (Clip): input 2 is int64 but input 0 is float32; Clip needs both the same");
    CU_ASSERT_FALSE(tgc_infer_require_dtype(&c, 0, TGC_BOOL));
    CU_ASSERT_FALSE(tgc_infer_require_float(&c, 2));
    /* An input without a position falls back to the node's. */
    fx_node(&f, id)->inputs[0].pos = (tgc_srcpos){0, 0};
    CU_ASSERT_EQUAL(tgc_infer_fail(&c, 0, "some-rule", "x %d", 1), TGC_ERR_INVALID);
    size_t last = tgc_diags_count(f.d) - 1;
    CU_ASSERT_EQUAL(tgc_diag_line(f.d, last), id + 1);
    CU_ASSERT_EQUAL(tgc_diag_column(f.d, last), 3);
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(f.d, last), "node 'n' (Clip): x 1");
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, last), "some-rule");
    /* Fresh dims are new symbols marked as made by inference. */
    tgc_dim d = tgc_infer_fresh_dim(&c), e = tgc_infer_fresh_dim_cb(&c);
    CU_ASSERT(!tgc_dim_known(d) && !tgc_dim_known(e) && d.sym != e.sym);
    CU_ASSERT(f.g->symbol_fresh[d.sym] && f.g->symbol_fresh[e.sym]);
    char buf[128];
    CU_ASSERT_STRING_EQUAL(tgc_infer_shape_str(&c, &s2, buf, sizeof buf), "[2]");
    fx_end(&f);
}

/* ---- Unknown ranks, out of memory, messages ---------------------------------------- */

static void test_unknown_rank_propagates(void) {
    fx f = fx_begin();
    fx_input(&f, "u", TGC_FLOAT32, "?");
    fx_input(&f, "w", TGC_FLOAT32, "4, 5");
    const char *const cases[][2] = {
        {"Relu", "u"}, {"MatMul", "u, w"}, {"Softmax", "u"}, {"ReduceMean", "u"}, {"ArgMax", "u"},
        {"GlobalAveragePool", "u"}, {"Transpose", "u"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%zu", i);
        int32_t n = fx_op(&f, name, cases[i][0], cases[i][1], 1);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, strcmp(cases[i][0], "ArgMax") == 0 ? TGC_INT64 : TGC_FLOAT32, "?");
    }
    /* Gemm's output is 2-D whatever its inputs. */
    int32_t g = fx_op(&f, "g", "Gemm", "u, w", 1);
    FX_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[unk__0, 5]");
    fx_end(&f);
}

static void test_out_of_memory_for_fresh_dim(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "N");
    fx_input(&f, "b", TGC_FLOAT32, "M");
    int32_t add = fx_op(&f, "add", "Add", "a, b", 1);
    tgc_host_alloc_fail_nth(1); /* the fresh symbol's first allocation */
    CU_ASSERT_EQUAL(fx_infer(&f, add), TGC_ERR_NOMEM);
    tgc_host_alloc_fail_nth(0);
    CU_ASSERT_EQUAL(tgc_diags_count(f.d), 0);
    fx_end(&f);
}

static void test_error_names_node_and_position(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "2, 3");
    fx_input(&f, "b", TGC_FLOAT32, "4, 3");
    int32_t add = fx_op(&f, "my_add", "Add", "a, b", 1);
    CU_ASSERT_EQUAL(fx_infer(&f, add), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(f.d), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_file(f.d, 0), "model.yaml");
    CU_ASSERT_EQUAL(tgc_diag_line(f.d, 0), add + 1);
    CU_ASSERT_EQUAL(tgc_diag_column(f.d, 0), 21); /* input 1's reference */
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(f.d, 0), "shape-mismatch");
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(f.d, 0),
                           "node 'my_add' (Add): input 0 has shape [2, 3] and input 1 has shape [4, 3], "
                           "which do not broadcast (2 vs 4 at output axis 0)");
    fx_end(&f);
}

TGC_TEST_MAIN("graph/infer_ops",
              {"registry_has_every_op", test_registry_has_every_op},
              {"registry_attribute_schemas", test_registry_attribute_schemas},
              {"shape_helpers", test_shape_helpers},
              {"add_broadcasts", test_add_broadcasts},
              {"add_mismatch", test_add_mismatch},
              {"add_dtype_mismatch", test_add_dtype_mismatch},
              {"broadcast_symbols", test_broadcast_symbols},
              {"arith_folds_values", test_arith_folds_values},
              {"pow", test_pow},
              {"unary_ops", test_unary_ops},
              {"unary_dtypes", test_unary_dtypes},
              {"min_max", test_min_max},
              {"clip", test_clip},
              {"comparisons", test_comparisons},
              {"where", test_where},
              {"cast", test_cast},
              {"softmax", test_softmax},
              {"matmul", test_matmul},
              {"gemm", test_gemm},
              {"conv_2d", test_conv_2d},
              {"conv_strides_dilations", test_conv_strides_dilations},
              {"conv_auto_pad", test_conv_auto_pad},
              {"conv_groups_and_1d", test_conv_groups_and_1d},
              {"conv_unknown_ranks", test_conv_unknown_ranks},
              {"conv_too_small", test_conv_too_small},
              {"window_sizes_brute_force", test_window_sizes_brute_force},
              {"max_pool", test_max_pool},
              {"average_pool", test_average_pool},
              {"global_average_pool", test_global_average_pool},
              {"batch_norm", test_batch_norm},
              {"layer_norm", test_layer_norm},
              {"reduce_attr_axes", test_reduce_attr_axes},
              {"reduce_sum_axes_input", test_reduce_sum_axes_input},
              {"argmax", test_argmax},
              {"infer_ctx_accessors", test_infer_ctx_accessors},
              {"unknown_rank_propagates", test_unknown_rank_propagates},
              {"out_of_memory_for_fresh_dim", test_out_of_memory_for_fresh_dim},
              {"error_names_node_and_position", test_error_names_node_and_position})
