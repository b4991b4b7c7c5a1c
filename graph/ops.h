/* The built-in op defs (ONNX opset 17) and the helpers their inference
 * functions share. Private to graph/: op_registry.c lists the defs, the
 * ops_*.c files define them, one file per family:
 *     ops_elementwise.c  the rows of elementwise.def (arithmetic, activations,
 *                        math, comparisons), Where, Cast, Identity
 *     ops_nn.c           Softmax, LogSoftmax, MatMul, Gemm, BatchNormalization, LayerNormalization
 *     ops_conv.c         Conv, MaxPool, AveragePool, GlobalAveragePool
 *     ops_shape.c        Shape, Size, Reshape, Flatten, Transpose, Unsqueeze, Squeeze, Expand
 *     ops_tensor.c       Gather, Concat, Split, Slice
 *     ops_const.c        Range, ConstantOfShape, Constant
 *     ops_reduce.c       ReduceMean, ReduceSum, ReduceMax, ArgMax, ReduceMin, ReduceProd,
 *                        ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMin
 *     ops_loss.c         NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
 *     ops_rnn.c          RNN, GRU, LSTM
 *     ops_tfidf.c        TfIdfVectorizer
 *     ops_convt.c        ConvTranspose, MaxUnpool (LpPool, GlobalMaxPool, GlobalLpPool: ops_conv.c)
 *     ops_pad.c          Pad, DepthToSpace, SpaceToDepth
 *     ops_channel_norm.c InstanceNormalization, LRN
 *     ops_resize.c       Resize
 *     ops_detection.c    GridSample, RoiAlign, NonMaxSuppression
 *     ops_quant.c        QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 *                        MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv
 *     ops_signal.c       HannWindow, HammingWindow, BlackmanWindow, DFT, STFT, MelWeightMatrix
 *     ops_random.c       RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
 *                        Bernoulli, Multinomial, Dropout
 *     ops_normalize.c    Hardmax, LpNormalization, MeanVarianceNormalization
 *     ops_linalg.c       Einsum, Det (einsum.c parses Einsum's equation)
 *     ops_index.c        GatherElements, ScatterElements, ScatterND, GatherND, OneHot
 *     ops_arrange.c      Tile, Trilu, EyeLike, CumSum, ReverseSequence, TopK
 *     ops_select.c       NonZero, Compress, Unique (value-dependent output sizes)
 *     ops_cast.c         CastLike
 *     ops_bitwise.c      BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18)
 *     ops_string.c       StringNormalizer (string tensors)
 *     ops_common.c       the helpers below
 *
 * Example usage (inside an infer function):
 *     tgc_shape out;
 *     tgc_status st = tgc_ops_broadcast(c, 0, 1, &a->shape, &b->shape, &out);
 *     if (st != TGC_OK) return st;
 *     return tgc_infer_set_output(c, 0, a->dtype, &out);
 */
#ifndef TGC_GRAPH_OPS_H
#define TGC_GRAPH_OPS_H

#include "graph/infer.h"

/* ---- Op defs ------------------------------------------------------------ */

/* One per row of graph/elementwise.def: tgc_op_Relu, tgc_op_Add, ... */
#define EW_UNARY(op, cls, attrs, infer, fexpr, iexpr) extern const tgc_op_def tgc_op_##op;
#define EW_BINARY(op, cls, out, infer, fexpr, iexpr) extern const tgc_op_def tgc_op_##op;
#define EW_PREDICATE(op, cls, attrs, infer, fexpr, iexpr) extern const tgc_op_def tgc_op_##op;
#define EW_BINARY_ATTRS(op, cls, out, attrs, infer, fexpr, iexpr) extern const tgc_op_def tgc_op_##op;
#include "graph/elementwise.def"
#undef EW_UNARY
#undef EW_BINARY
#undef EW_PREDICATE
#undef EW_BINARY_ATTRS
extern const tgc_op_def tgc_op_Where;

/* _FusedElementwise's rule for an input of shape x in a group of shape
 * out: the same shape, one element, or a row broadcast (x's dims, leading
 * 1s aside, are out's last dims). graph/ops_fused.c; the fusion pass uses
 * it too. */
bool tgc_fused_input_fits(const tgc_shape *x, const tgc_shape *out);
extern const tgc_op_def tgc_op_Cast, tgc_op_Identity;
extern const tgc_op_def tgc_op_If, tgc_op_Loop, tgc_op_Scan;
extern const tgc_op_def tgc_op_SequenceEmpty, tgc_op_SequenceConstruct, tgc_op_SequenceInsert, tgc_op_SequenceAt,
    tgc_op_SequenceLength, tgc_op_SequenceErase, tgc_op_ConcatFromSequence, tgc_op_SplitToSequence,
    tgc_op_SequenceMap, tgc_op_Optional, tgc_op_OptionalHasElement, tgc_op_OptionalGetElement;
extern const tgc_op_def tgc_op_CastLike;

extern const tgc_op_def tgc_op_Softmax, tgc_op_LogSoftmax, tgc_op_MatMul, tgc_op_Gemm;
extern const tgc_op_def tgc_op_BatchNormalization, tgc_op_LayerNormalization;

extern const tgc_op_def tgc_op_Conv, tgc_op_MaxPool, tgc_op_AveragePool, tgc_op_GlobalAveragePool;

extern const tgc_op_def tgc_op_Shape, tgc_op_Size, tgc_op_Reshape, tgc_op_Flatten, tgc_op_Transpose;
extern const tgc_op_def tgc_op_Unsqueeze, tgc_op_Squeeze, tgc_op_Expand;

extern const tgc_op_def tgc_op_Gather, tgc_op_Concat, tgc_op_Split, tgc_op_Slice;

extern const tgc_op_def tgc_op_Range, tgc_op_ConstantOfShape, tgc_op_Constant;

extern const tgc_op_def tgc_op_RNN, tgc_op_GRU, tgc_op_LSTM;

extern const tgc_op_def tgc_op_TfIdfVectorizer;

extern const tgc_op_def tgc_op_ReduceMean, tgc_op_ReduceSum, tgc_op_ReduceMax, tgc_op_ArgMax;
extern const tgc_op_def tgc_op_ReduceMin, tgc_op_ReduceProd, tgc_op_ReduceL1, tgc_op_ReduceL2, tgc_op_ReduceLogSum;
extern const tgc_op_def tgc_op_ReduceLogSumExp, tgc_op_ReduceSumSquare, tgc_op_ArgMin;

extern const tgc_op_def tgc_op_Hardmax, tgc_op_LpNormalization, tgc_op_MeanVarianceNormalization;

extern const tgc_op_def tgc_op_Einsum, tgc_op_Det;

extern const tgc_op_def tgc_op_NegativeLogLikelihoodLoss, tgc_op_SoftmaxCrossEntropyLoss;
extern const tgc_op_def tgc_op_ConvTranspose, tgc_op_MaxUnpool, tgc_op_Pad, tgc_op_DepthToSpace, tgc_op_SpaceToDepth;
extern const tgc_op_def tgc_op_InstanceNormalization, tgc_op_LRN, tgc_op_LpPool, tgc_op_GlobalMaxPool;
extern const tgc_op_def tgc_op_GlobalLpPool;
extern const tgc_op_def tgc_op_Resize;
extern const tgc_op_def tgc_op_GridSample, tgc_op_RoiAlign, tgc_op_NonMaxSuppression;
extern const tgc_op_def tgc_op_QuantizeLinear, tgc_op_DequantizeLinear, tgc_op_DynamicQuantizeLinear;
extern const tgc_op_def tgc_op_MatMulInteger, tgc_op_QLinearMatMul, tgc_op_ConvInteger, tgc_op_QLinearConv,
    tgc_op__QLinearConvNHWC; /* tgc's own: channels last */

extern const tgc_op_def tgc_op_HannWindow, tgc_op_HammingWindow, tgc_op_BlackmanWindow, tgc_op_DFT, tgc_op_STFT;
extern const tgc_op_def tgc_op_MelWeightMatrix;

extern const tgc_op_def tgc_op_RandomUniform, tgc_op_RandomNormal, tgc_op_RandomUniformLike;
extern const tgc_op_def tgc_op_RandomNormalLike, tgc_op_Bernoulli, tgc_op_Multinomial, tgc_op_Dropout;

extern const tgc_op_def tgc_op_GatherElements, tgc_op_ScatterElements, tgc_op_ScatterND, tgc_op_GatherND;
extern const tgc_op_def tgc_op_OneHot, tgc_op_Tile, tgc_op_Trilu, tgc_op_EyeLike, tgc_op_CumSum;
extern const tgc_op_def tgc_op_ReverseSequence, tgc_op_TopK, tgc_op_NonZero, tgc_op_Compress, tgc_op_Unique;
extern const tgc_op_def tgc_op_StringNormalizer;
extern const tgc_op_def tgc_op_BitwiseAnd, tgc_op_BitwiseOr, tgc_op_BitwiseXor, tgc_op_BitwiseNot;

/* ---- Dtype classes (bit masks of tgc_dtype) ------------------------------ */

#define TGC_DT(t) (1u << (unsigned)(t))
/* float32, float16, bfloat16, float64: ONNX's tensor(float) class. */
#define TGC_DT_FLOAT (TGC_DT(TGC_FLOAT32) | TGC_DT(TGC_FLOAT16) | TGC_DT(TGC_BFLOAT16) | TGC_DT(TGC_FLOAT64))
/* The signed integers int8, int16, int32, int64. */
#define TGC_DT_INT (TGC_DT(TGC_INT8) | TGC_DT(TGC_INT16) | TGC_DT(TGC_INT32) | TGC_DT(TGC_INT64))
/* The unsigned integers uint8, uint16, uint32, uint64. */
#define TGC_DT_UINT (TGC_DT(TGC_UINT8) | TGC_DT(TGC_UINT16) | TGC_DT(TGC_UINT32) | TGC_DT(TGC_UINT64))
#define TGC_DT_SIGNED (TGC_DT_FLOAT | TGC_DT_INT)
#define TGC_DT_NUMERIC (TGC_DT_SIGNED | TGC_DT_UINT)
#define TGC_DT_ANY (TGC_DT_NUMERIC | TGC_DT(TGC_BOOL))
/* string: host-memory char * slots; only ops that say so take it. */
#define TGC_DT_STRING TGC_DT(TGC_STRING)
/* Every dtype, string included (ONNX's "all tensor types" for ops that only move data). */
#define TGC_DT_ALL (TGC_DT_ANY | TGC_DT_STRING)

/* True when op `op` may read or write string tensors (ops_string.c lists
 * them). Inference refuses a string input or output of any other op
 * before its own rules run ("dtype-mismatch"), so no kernel that copies
 * bytes ever sees string slots (infer_graph.c). */
bool tgc_ops_take_strings(const char *op);

/* True when op takes sequences and optionals (graph/ops_sequence.c: the
 * sequence and optional ops, Identity, the control flow ops, _Send and
 * _Recv); every other op is given tensors only. */
bool tgc_ops_take_kinds(const char *op);

/* True when input i is omitted or its dtype is in `mask`; otherwise reports
 * "dtype-mismatch" listing the dtypes the op accepts and returns false. */
bool tgc_ops_require_dtypes(tgc_infer_ctx *c, int i, unsigned mask);

/* ---- Shapes --------------------------------------------------------------- */

/* Room for any shape in a message. */
#define TGC_OPS_SHAPE_BUF 256

/* Broadcasts the shapes of inputs ia and ib (numpy rules, shape.h) into
 * *out; two different symbols give a fresh dim. On a concrete mismatch
 * reports "shape-mismatch" at input ib naming both shapes and returns
 * TGC_ERR_INVALID. ia -1 says that `a` is the broadcast of the inputs before
 * ib (for ops of three or more inputs). */
tgc_status tgc_ops_broadcast(tgc_infer_ctx *c, int ia, int ib, const tgc_shape *a,
                             const tgc_shape *b, tgc_shape *out);

/* The product of n dims: concrete when all are; the single symbol when the
 * other dims multiply to 1; a fresh dim otherwise. */
tgc_dim tgc_ops_dims_product(tgc_infer_ctx *c, const tgc_dim *dims, int n);

/* Two dims that must be equal at run time: false when both are concrete and
 * differ; else *out is the more precise of the two (concrete over symbol). */
bool tgc_ops_dim_merge(tgc_dim a, tgc_dim b, tgc_dim *out);

/* Inference of a channels-last op (tgc's _QLinearConvNHWC, _MaxPoolNHWC:
 * input 0 [N, H, W, C], one output [N, OH, OW, M]) by `infer`, the NCHW
 * op's, on input 0 seen as [N, C, H, W], its output read back channels
 * last. */
tgc_status tgc_ops_infer_channels_last(tgc_infer_ctx *c, tgc_status (*infer)(tgc_infer_ctx *c));

/* Reads the int attribute `name` (default dflt) as an axis of a tensor of
 * `rank` (known) into *axis, accepting [-rank, rank + extra); reports
 * "bad-attribute" and returns TGC_ERR_INVALID when out of range. extra is 1
 * where the axis may equal the rank (Flatten). */
tgc_status tgc_ops_axis_attr(tgc_infer_ctx *c, const char *name, int64_t dflt, int rank, int extra,
                             int *axis);

/* ---- Compile-time values --------------------------------------------------- */

/* True when input i has a compile-time value (elements may be symbolic):
 * *v points at it (borrowed; may be NULL when *n is 0) and *n is its
 * length. False when the input is omitted or its value unknown. */
bool tgc_ops_input_value(const tgc_infer_ctx *c, int i, const tgc_dim **v, int *n);

/* Gives output `out` the value of input `in` when both can carry it. */
tgc_status tgc_ops_pass_value(tgc_infer_ctx *c, int in, int out);

/* Output 0 gets input 0's dtype and shape (and, with pass_value, its value). */
tgc_status tgc_ops_like_input(tgc_infer_ctx *c, bool pass_value);

/* Normalises a list of axes for `rank` in place. An axis out of
 * [-rank, rank) or repeated is reported as "bad-attribute" when the axes
 * come from attribute `what` (input_index -1), else as "bad-input" at input
 * input_index. Returns TGC_OK or TGC_ERR_INVALID. */
tgc_status tgc_ops_normalize_axes(tgc_infer_ctx *c, int input_index, const char *what,
                                  int64_t *axes, int n, int rank);

#endif
