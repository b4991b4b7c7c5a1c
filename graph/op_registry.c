/* The registry: every op def, found by name. Op defs live in graph/ops_*.c,
 * one file per family; adding an op means defining it there and listing it
 * here. */
#include "graph/op_registry.h"

#include "graph/ops.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* Each family file exports its defs; see ops.h. */
static const tgc_op_def *const all_ops[] = {
    NULL, /* placeholder so the table is never empty; skipped below */
    /* ops_elementwise.c: the rows of elementwise.def, then the rest */
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) &tgc_op_##op,
#define EW_UNARY_OWN(op, cls, attrs, infer, fexpr, iexpr) /* tgc's own: in internal_ops */
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) &tgc_op_##op,
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) &tgc_op_##op,
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) &tgc_op_##op,
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_UNARY_OWN
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

/* tgc's own ops (ops_internal.c, ops_fused.c, ops_attention.c, ops_quant.c, ops_conv.c, ops_nn.c, ops_rnn.c,
 * elementwise.def's EW_UNARY_OWN rows; names starting with '_'): found by name, but not listed by tgc_op_all, which
 * lists what users may write. */
extern const tgc_op_def tgc_op__Send, tgc_op__Recv, tgc_op__FusedElementwise, tgc_op__Attention, tgc_op__Unsupported,
    tgc_op__MaxPoolNHWC, tgc_op__ConvNHWC, tgc_op__ConvAdd, tgc_op__GlobalAveragePoolNHWC, tgc_op__Swish, tgc_op__MatMulHalfWeight,
    tgc_op__RNNHalfWeight, tgc_op__GRUHalfWeight, tgc_op__LSTMHalfWeight;
static const tgc_op_def *const internal_ops[] = {&tgc_op__Send,         &tgc_op__Recv,          &tgc_op__FusedElementwise,
                                                 &tgc_op__Attention,    &tgc_op__Unsupported,   &tgc_op__QLinearConvNHWC,
                                                 &tgc_op__MaxPoolNHWC,  &tgc_op__ConvNHWC,     &tgc_op__ConvAdd,
                                                 &tgc_op__GlobalAveragePoolNHWC, &tgc_op__Swish,
                                                 &tgc_op__MatMulHalfWeight, &tgc_op__RNNHalfWeight,
                                                 &tgc_op__GRUHalfWeight, &tgc_op__LSTMHalfWeight};

const tgc_op_def *const *tgc_op_all(size_t *count) {
    *count = sizeof all_ops / sizeof all_ops[0] - 1;
    return all_ops + 1;
}

/* Op ids and names, hashed once: an open-addressing table keyed by the
 * def's address (ids) and one keyed by its name (FNV-1a), each with room
 * for twice the ops. */
#define N_USER (sizeof all_ops / sizeof all_ops[0] - 1)
#define N_INTERNAL (sizeof internal_ops / sizeof internal_ops[0])
#define HASH_SLOTS 1024 /* a power of two, at least twice N_USER + N_INTERNAL */

static const tgc_op_def *by_id[N_USER + N_INTERNAL];
static int16_t id_slots[HASH_SLOTS];   /* id + 1; 0: empty */
static int16_t name_slots[HASH_SLOTS]; /* id + 1; 0: empty */
static pthread_once_t hash_once = PTHREAD_ONCE_INIT;

static size_t ptr_hash(const tgc_op_def *op) { return (size_t)(((uintptr_t)op >> 3) * 0x9E3779B97F4A7C15ull); }

static size_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (size_t)h;
}

static void build_hashes(void) {
    _Static_assert(2 * (N_USER + N_INTERNAL) <= HASH_SLOTS, "op hash tables too small");
    for (size_t i = 0; i < N_USER + N_INTERNAL; i++) {
        const tgc_op_def *op = i < N_USER ? all_ops[i + 1] : internal_ops[i - N_USER];
        by_id[i] = op;
        size_t h = ptr_hash(op) & (HASH_SLOTS - 1);
        while (id_slots[h] != 0) h = (h + 1) & (HASH_SLOTS - 1);
        id_slots[h] = (int16_t)(i + 1);
        h = name_hash(op->name) & (HASH_SLOTS - 1);
        while (name_slots[h] != 0) h = (h + 1) & (HASH_SLOTS - 1);
        name_slots[h] = (int16_t)(i + 1);
    }
}

int tgc_op_count(void) { return (int)(N_USER + N_INTERNAL); }

int tgc_op_id(const tgc_op_def *op) {
    if (op == NULL) return -1;
    pthread_once(&hash_once, build_hashes);
    for (size_t h = ptr_hash(op) & (HASH_SLOTS - 1); id_slots[h] != 0; h = (h + 1) & (HASH_SLOTS - 1))
        if (by_id[id_slots[h] - 1] == op) return id_slots[h] - 1;
    return -1;
}

const tgc_op_def *tgc_op_find(const char *name) {
    pthread_once(&hash_once, build_hashes);
    for (size_t h = name_hash(name) & (HASH_SLOTS - 1); name_slots[h] != 0; h = (h + 1) & (HASH_SLOTS - 1)) {
        const tgc_op_def *op = by_id[name_slots[h] - 1];
        if (strcmp(op->name, name) == 0) return op;
    }
    return NULL;
}

const tgc_attr_def *tgc_op_attr_def(const tgc_op_def *op, const char *name) {
    for (const tgc_attr_def *a = op != NULL ? op->attrs : NULL; a != NULL && a->name != NULL; a++)
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
