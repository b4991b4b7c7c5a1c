/* The registry: every op def, found by name. Op defs live in graph/ops_*.c,
 * one file per family; adding an op means defining it there and listing it
 * here. */
#include "graph/op_registry.h"

#include "graph/ops.h"

#include <string.h>

/* Each family file exports its defs; see ops.h. */
static const tgc_op_def *const all_ops[] = {
    NULL, /* placeholder so the table is never empty; skipped below */
    /* ops_elementwise.c: the rows of elementwise.def, then the rest */
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) &tgc_op_##op,
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) &tgc_op_##op,
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) &tgc_op_##op,
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) &tgc_op_##op,
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_BINARY
#undef EW_PREDICATE
#undef EW_BINARY_ATTRS
    &tgc_op_Where, &tgc_op_Cast, &tgc_op_Identity,
    /* ops_bitwise.c */
    &tgc_op_BitwiseAnd, &tgc_op_BitwiseOr, &tgc_op_BitwiseXor, &tgc_op_BitwiseNot,
    /* ops_cast.c */
    &tgc_op_CastLike,
    /* ops_nn.c */
    &tgc_op_Softmax, &tgc_op_LogSoftmax, &tgc_op_MatMul, &tgc_op_Gemm,
    &tgc_op_BatchNormalization, &tgc_op_LayerNormalization,
    /* ops_conv.c */
    &tgc_op_Conv, &tgc_op_MaxPool, &tgc_op_AveragePool, &tgc_op_GlobalAveragePool,
    /* ops_shape.c */
    &tgc_op_Shape, &tgc_op_Size, &tgc_op_Reshape, &tgc_op_Flatten, &tgc_op_Transpose,
    &tgc_op_Unsqueeze, &tgc_op_Squeeze, &tgc_op_Expand,
    /* ops_tensor.c */
    &tgc_op_Gather, &tgc_op_Concat, &tgc_op_Split, &tgc_op_Slice,
    /* ops_const.c */
    &tgc_op_Range, &tgc_op_ConstantOfShape, &tgc_op_Constant,

    &tgc_op_RNN, &tgc_op_GRU, &tgc_op_LSTM,

    &tgc_op_TfIdfVectorizer,
    /* ops_reduce.c */
    &tgc_op_ReduceMean, &tgc_op_ReduceSum, &tgc_op_ReduceMax, &tgc_op_ArgMax,
    /* ops_loss.c */
    &tgc_op_NegativeLogLikelihoodLoss, &tgc_op_SoftmaxCrossEntropyLoss,
    /* ops_convt.c, ops_pad.c, ops_channel_norm.c, and pools in ops_conv.c */
    &tgc_op_ConvTranspose, &tgc_op_MaxUnpool, &tgc_op_Pad, &tgc_op_DepthToSpace, &tgc_op_SpaceToDepth,
    &tgc_op_InstanceNormalization, &tgc_op_LRN, &tgc_op_LpPool, &tgc_op_GlobalMaxPool, &tgc_op_GlobalLpPool,
    /* ops_resize.c */
    &tgc_op_Resize,
    /* ops_detection.c */
    &tgc_op_GridSample, &tgc_op_RoiAlign, &tgc_op_NonMaxSuppression,
    /* ops_quant.c */
    &tgc_op_QuantizeLinear, &tgc_op_DequantizeLinear, &tgc_op_DynamicQuantizeLinear,
    &tgc_op_MatMulInteger, &tgc_op_QLinearMatMul, &tgc_op_ConvInteger, &tgc_op_QLinearConv,
    /* ops_signal.c */
    &tgc_op_HannWindow, &tgc_op_HammingWindow, &tgc_op_BlackmanWindow, &tgc_op_DFT, &tgc_op_STFT,
    &tgc_op_MelWeightMatrix,
    /* ops_random.c */
    &tgc_op_RandomUniform, &tgc_op_RandomNormal, &tgc_op_RandomUniformLike, &tgc_op_RandomNormalLike,
    &tgc_op_Bernoulli, &tgc_op_Multinomial, &tgc_op_Dropout,
    &tgc_op_ReduceMin, &tgc_op_ReduceProd, &tgc_op_ReduceL1, &tgc_op_ReduceL2, &tgc_op_ReduceLogSum,
    &tgc_op_ReduceLogSumExp, &tgc_op_ReduceSumSquare, &tgc_op_ArgMin,
    /* ops_normalize.c */
    &tgc_op_Hardmax, &tgc_op_LpNormalization, &tgc_op_MeanVarianceNormalization,
    /* ops_linalg.c */
    &tgc_op_Einsum, &tgc_op_Det,
    /* ops_index.c, ops_arrange.c, ops_select.c */
    &tgc_op_GatherElements, &tgc_op_ScatterElements, &tgc_op_ScatterND, &tgc_op_GatherND, &tgc_op_OneHot,
    &tgc_op_Tile, &tgc_op_Trilu, &tgc_op_EyeLike, &tgc_op_CumSum, &tgc_op_ReverseSequence, &tgc_op_TopK,
    &tgc_op_NonZero, &tgc_op_Compress, &tgc_op_Unique,
    /* ops_string.c */
    &tgc_op_StringNormalizer,
    /* ops_control.c */
    &tgc_op_If, &tgc_op_Loop, &tgc_op_Scan,
    /* ops_sequence.c */
    &tgc_op_SequenceEmpty, &tgc_op_SequenceConstruct, &tgc_op_SequenceInsert, &tgc_op_SequenceAt,
    &tgc_op_SequenceLength, &tgc_op_SequenceErase, &tgc_op_ConcatFromSequence, &tgc_op_SplitToSequence,
    &tgc_op_SequenceMap, &tgc_op_Optional, &tgc_op_OptionalHasElement, &tgc_op_OptionalGetElement,
};

/* tgc's own ops (ops_internal.c, ops_fused.c, ops_attention.c; names starting with '_'): found by name,
 * but not listed by tgc_op_all, which lists what users may write. */
extern const tgc_op_def tgc_op__Send, tgc_op__Recv, tgc_op__FusedElementwise, tgc_op__FusedConv, tgc_op__FusedGemm,
    tgc_op__FusedMatMul, tgc_op__Attention, tgc_op__Unsupported;
static const tgc_op_def *const internal_ops[] = {&tgc_op__Send,       &tgc_op__Recv,      &tgc_op__FusedElementwise,
                                                 &tgc_op__FusedConv,  &tgc_op__FusedGemm, &tgc_op__FusedMatMul,
                                                 &tgc_op__Attention,  &tgc_op__Unsupported};

const tgc_op_def *const *tgc_op_all(size_t *count) {
    *count = sizeof all_ops / sizeof all_ops[0] - 1;
    return all_ops + 1;
}

const tgc_op_def *tgc_op_find(const char *name) {
    size_t n;
    const tgc_op_def *const *ops = tgc_op_all(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i]->name, name) == 0) return ops[i];
    for (size_t i = 0; name[0] == '_' && i < sizeof internal_ops / sizeof internal_ops[0]; i++)
        if (strcmp(internal_ops[i]->name, name) == 0) return internal_ops[i];
    return NULL;
}

const tgc_op_def *tgc_op_extends(const tgc_op_def *op) {
    static const tgc_op_def *const pairs[][2] = {
        {&tgc_op__FusedConv, &tgc_op_Conv}, {&tgc_op__FusedGemm, &tgc_op_Gemm}, {&tgc_op__FusedMatMul, &tgc_op_MatMul}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i][0] == op) return pairs[i][1];
    return NULL;
}

const tgc_attr_def *tgc_op_attr_def(const tgc_op_def *op, const char *name) {
    for (; op != NULL; op = tgc_op_extends(op))
        for (const tgc_attr_def *a = op->attrs; a != NULL && a->name != NULL; a++)
            if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

const char *tgc_attr_type_name(tgc_attr_type t) {
    switch (t) {
    case TGC_ATTR_INT: return "int";
    case TGC_ATTR_FLOAT: return "float";
    case TGC_ATTR_STRING: return "string";
    case TGC_ATTR_INTS: return "ints";
    case TGC_ATTR_FLOATS: return "floats";
    case TGC_ATTR_STRINGS: return "strings";
    case TGC_ATTR_TENSOR: return "tensor";
    case TGC_ATTR_GRAPH: return "graph";
    }
    return "unknown";
}
