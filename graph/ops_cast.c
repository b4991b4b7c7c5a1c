/* CastLike (ONNX opset 15): Cast to the dtype of a second input.
 * Cast itself is in ops_elementwise.c. */
#include "graph/ops.h"

static const tgc_attr_def castlike_attrs[] = {{"saturate", TGC_ATTR_INT, false}, {NULL, 0, false}};

/* CastLike-15: input (any dtype, string too) and target_type (any dtype; only its dtype
 * is read); the output has input's shape and target_type's dtype. A known
 * small integer value of the input (int32 or int64) passes through when
 * the target is int64, where it is exact. 'saturate' (opset 19, float8
 * only) is accepted and changes nothing for tgc's dtypes. */
static tgc_status infer_cast_like(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *like = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_ALL) || !tgc_ops_require_dtypes(c, 1, TGC_DT_ALL))
        return TGC_ERR_INVALID;
    tgc_status st = tgc_infer_set_output(c, 0, like->dtype, &x->shape);
    const tgc_dim *v;
    int n;
    if (st != TGC_OK || like->dtype != TGC_INT64 || !tgc_ops_input_value(c, 0, &v, &n)) return st;
    return tgc_infer_set_value(c, 0, n, v);
}

const tgc_op_def tgc_op_CastLike = {"CastLike", 2, 2, 1, 1, castlike_attrs, infer_cast_like};
