/* The bitwise ops of ONNX opset 18: BitwiseAnd, BitwiseOr, BitwiseXor (two
 * integer inputs of one dtype, numpy broadcasting, the output of their dtype
 * and the broadcast shape) and BitwiseNot (one integer input, the same dtype
 * and shape). T is every signed and unsigned integer dtype; the kernels work
 * on the bits, two's complement for the signed ones (devices/cpu/kernels_bitwise.c). */
#include "graph/ops.h"

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

#define DT_BITWISE (TGC_DT_INT | TGC_DT_UINT)

static tgc_status infer_bitwise_binary(tgc_infer_ctx *c) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, DT_BITWISE) || !tgc_infer_require_same_dtype(c, 0, 1))
        return TGC_ERR_INVALID;
    tgc_shape out;
    tgc_status st = tgc_ops_broadcast(c, 0, 1, &a->shape, &b->shape, &out);
    return st == TGC_OK ? tgc_infer_set_output(c, 0, a->dtype, &out) : st;
}

static tgc_status infer_bitwise_not(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, DT_BITWISE)) return TGC_ERR_INVALID;
    return tgc_ops_like_input(c, false);
}

const tgc_op_def tgc_op_BitwiseAnd = {"BitwiseAnd", 2, 2, 1, 1, no_attrs, infer_bitwise_binary};
const tgc_op_def tgc_op_BitwiseOr = {"BitwiseOr", 2, 2, 1, 1, no_attrs, infer_bitwise_binary};
const tgc_op_def tgc_op_BitwiseXor = {"BitwiseXor", 2, 2, 1, 1, no_attrs, infer_bitwise_binary};
const tgc_op_def tgc_op_BitwiseNot = {"BitwiseNot", 1, 1, 1, 1, no_attrs, infer_bitwise_not};
