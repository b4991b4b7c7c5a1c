/* Quantization ops (ONNX opset 17): QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger and
 * QLinearConv.
 *
 * The 8-bit quantized types are uint8 and int8 (DT_Q8 below). Scales are
 * float32. A scale or zero
 * point is per tensor (a scalar or one element) or per axis (1-D, one per
 * index of the quantized axis); the matrix ops take per-row zero points of
 * A and per-column ones of B, the conv ops per-output-channel ones of W.
 *
 * The output shapes of the matrix and conv ops are MatMul's and Conv's:
 * their inference functions run on a view of the node that shows them only
 * the data inputs, as float32 (matmul_like_shape, conv_like_shape). */
#include "graph/ops.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* The 8-bit quantized types. */
#define DT_Q8 (TGC_DT(TGC_UINT8) | TGC_DT(TGC_INT8))

/* Checks that input i (a scale or zero point; omitted is fine) has rank 0,
 * or rank 1 with one element or `count` elements (count < 0: any length,
 * the axis unknown). `what` names the input in messages. */
static bool check_param(tgc_infer_ctx *c, int i, const char *what, tgc_dim count) {
    const tgc_tensor_info *p = tgc_infer_input(c, i);
    if (p == NULL || p->shape.rank < 0 || p->shape.rank == 0) return true;
    tgc_dim d = p->shape.rank == 1 ? p->shape.dims[0] : tgc_dim_of(0), m;
    if (p->shape.rank == 1 && (tgc_dim_is(d, 1) || tgc_dim_is(count, -1) || tgc_ops_dim_merge(d, count, &m)))
        return true;
    char sp[TGC_OPS_SHAPE_BUF];
    tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must be a scalar or 1-D with one "
                   "element per index of the quantized axis", i, what, SHAPE(c, &p->shape, sp));
    return false;
}

/* The size of input x's `axis` attribute axis (default 1) for the
 * per-axis parameters, in *count (negative when unknown). */
static tgc_status axis_count(tgc_infer_ctx *c, const tgc_tensor_info *x, tgc_dim *count) {
    *count = tgc_dim_of(-1);
    if (x->shape.rank < 0) return TGC_OK;
    bool per_axis = false;
    for (int i = 1; i <= 2; i++) {
        const tgc_tensor_info *p = tgc_infer_input(c, i);
        per_axis = per_axis || (p != NULL && p->shape.rank == 1 && !tgc_dim_is(p->shape.dims[0], 1));
    }
    if (!per_axis) return TGC_OK; /* axis is ignored for per-tensor parameters */
    int axis;
    tgc_status st = tgc_ops_axis_attr(c, "axis", 1, x->shape.rank, 0, &axis);
    if (st == TGC_OK) *count = x->shape.dims[axis];
    return st;
}

/* ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear ------------------ */

/* QuantizeLinear-13: y = saturate(round_half_even(x / y_scale) +
 * y_zero_point); x float32 or int32, y_scale float32, y_zero_point (optional)
 * an 8-bit type that gives y's dtype (uint8 when omitted). */
static tgc_status infer_quantize(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0), *zp = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT(TGC_FLOAT32) | TGC_DT(TGC_INT32)) ||
        !tgc_infer_require_dtype(c, 1, TGC_FLOAT32) || !tgc_ops_require_dtypes(c, 2, DT_Q8))
        return TGC_ERR_INVALID;
    tgc_dim count;
    tgc_status st = axis_count(c, x, &count);
    if (st != TGC_OK) return st;
    if (!check_param(c, 1, "y_scale", count) || !check_param(c, 2, "y_zero_point", count)) return TGC_ERR_INVALID;
    return tgc_infer_set_output(c, 0, zp != NULL ? zp->dtype : TGC_UINT8, &x->shape);
}

/* DequantizeLinear-13: y = (x - x_zero_point) * x_scale in float32; x an
 * 8-bit type or int32 (then the zero point must be 0 or omitted, which the
 * kernel checks), x_zero_point of x's dtype. */
static tgc_status infer_dequantize(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, DT_Q8 | TGC_DT(TGC_INT32)) || !tgc_infer_require_dtype(c, 1, TGC_FLOAT32) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    tgc_dim count;
    tgc_status st = axis_count(c, x, &count);
    if (st != TGC_OK) return st;
    if (!check_param(c, 1, "x_scale", count) || !check_param(c, 2, "x_zero_point", count)) return TGC_ERR_INVALID;
    return tgc_infer_set_output(c, 0, TGC_FLOAT32, &x->shape);
}

static const tgc_attr_def axis_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_QuantizeLinear = {"QuantizeLinear", 2, 3, 1, 1, axis_attrs, infer_quantize};
const tgc_op_def tgc_op_DequantizeLinear = {"DequantizeLinear", 2, 3, 1, 1, axis_attrs, infer_dequantize};

/* DynamicQuantizeLinear-11: float32 x -> uint8 y of x's shape, a float32
 * scalar y_scale and a uint8 scalar y_zero_point. */
static tgc_status infer_dynamic_quantize(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_infer_require_dtype(c, 0, TGC_FLOAT32)) return TGC_ERR_INVALID;
    tgc_shape scalar = {.rank = 0};
    tgc_status st = tgc_infer_set_output(c, 0, TGC_UINT8, &x->shape);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 1, TGC_FLOAT32, &scalar);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 2, TGC_UINT8, &scalar);
    return st;
}

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

const tgc_op_def tgc_op_DynamicQuantizeLinear = {"DynamicQuantizeLinear", 1, 1, 3, 3, no_attrs,
                                                 infer_dynamic_quantize};

/* ---- Shapes borrowed from MatMul and Conv ------------------------------------- */

/* Runs `op`'s inference on the node as if its inputs were only those at
 * positions which[0..n) (-1: omitted), each seen as float32, and stores
 * the shape it gives output 0 in *out. Errors are reported at the node
 * (an input index in them is the position in `which`, mapped back). */
static tgc_status borrowed_shape(tgc_infer_ctx *c, const tgc_op_def *op, const int *which, int n, tgc_shape *out) {
    tgc_node view = *c->node;
    tgc_ref refs[3];
    tgc_tensor_info infos[3];
    for (int i = 0; i < n; i++) {
        const tgc_tensor_info *in = which[i] >= 0 ? tgc_infer_input(c, which[i]) : NULL;
        memset(&infos[i], 0, sizeof infos[i]);
        infos[i].dtype = in != NULL ? TGC_FLOAT32 : TGC_DTYPE_INVALID;
        infos[i].value_len = -1;
        if (in != NULL) infos[i].shape = in->shape;
        refs[i] = which[i] >= 0 && which[i] < c->node->n_inputs ? c->node->inputs[which[i]] : c->node->inputs[0];
    }
    view.inputs = refs;
    view.n_inputs = n;
    view.n_outputs = 1;
    tgc_tensor_info result = {.dtype = TGC_DTYPE_INVALID, .value_len = -1};
    tgc_infer_ctx sub = *c;
    sub.node = &view;
    sub.input_infos = infos;
    sub.output_infos = &result;
    tgc_status st = op->infer(&sub);
    c->nomem = sub.nomem;
    c->unresolved = sub.unresolved;
    if (st == TGC_OK) *out = result.shape;
    tgc_info_clear_value(&result);
    return st;
}

/* Checks that inputs a and b are 8-bit quantized and returns their
 * matmul shape in *out. */
static tgc_status matmul_like_shape(tgc_infer_ctx *c, int a, int b, tgc_shape *out) {
    if (!tgc_ops_require_dtypes(c, a, DT_Q8) || !tgc_ops_require_dtypes(c, b, DT_Q8)) return TGC_ERR_INVALID;
    int which[2] = {a, b};
    return borrowed_shape(c, &tgc_op_MatMul, which, 2, out);
}

/* Checks that input zp (a zero point or scale of the matrix input m; omitted
 * is fine) is a scalar, one element, or 1-D with one element per row
 * (rows: m's second-last dim, for A) or per column (m's last dim, for B);
 * an N-D one of m's rank is taken as given per matrix (checked at run
 * time). */
static bool check_matrix_param(tgc_infer_ctx *c, int zp, int m, bool rows, const char *what) {
    const tgc_tensor_info *p = tgc_infer_input(c, zp), *x = tgc_infer_input(c, m);
    if (p == NULL || p->shape.rank <= 0 || x->shape.rank < 1) return true; /* a scalar m: MatMul refuses it */
    if (p->shape.rank > 1 && p->shape.rank == x->shape.rank) return true;
    tgc_dim want = tgc_dim_of(-1), merged;
    if (rows && x->shape.rank >= 2) want = x->shape.dims[x->shape.rank - 2];
    if (!rows) want = x->shape.dims[x->shape.rank - 1];
    if (x->shape.rank == 1 && rows) want = tgc_dim_of(1);
    if (p->shape.rank == 1 && (tgc_dim_is(p->shape.dims[0], 1) || tgc_ops_dim_merge(p->shape.dims[0], want, &merged)))
        return true;
    char sp[TGC_OPS_SHAPE_BUF], sx[TGC_OPS_SHAPE_BUF];
    tgc_infer_fail(c, zp, "shape-mismatch", "input %d (%s) has shape %s; for input %d %s it must be a scalar or "
                   "have one element per %s", zp, what, SHAPE(c, &p->shape, sp), m, SHAPE(c, &x->shape, sx),
                   rows ? "row" : "column");
    return false;
}

/* ---- MatMulInteger, QLinearMatMul ---------------------------------------------- */

/* MatMulInteger-10: Y = (A - a_zero_point) x (B - b_zero_point) in int32,
 * MatMul's shapes; the zero points (optional) have A's and B's dtypes. */
static tgc_status infer_matmul_integer(tgc_infer_ctx *c) {
    tgc_shape out;
    tgc_status st = matmul_like_shape(c, 0, 1, &out);
    if (st != TGC_OK) return st;
    if (!tgc_infer_require_same_dtype(c, 0, 2) || !tgc_infer_require_same_dtype(c, 1, 3) ||
        !check_matrix_param(c, 2, 0, true, "a_zero_point") || !check_matrix_param(c, 3, 1, false, "b_zero_point"))
        return TGC_ERR_INVALID;
    return tgc_infer_set_output(c, 0, TGC_INT32, &out);
}

const tgc_op_def tgc_op_MatMulInteger = {"MatMulInteger", 2, 4, 1, 1, no_attrs, infer_matmul_integer};

/* QLinearMatMul-10: inputs a, a_scale, a_zero_point, b, b_scale,
 * b_zero_point, y_scale, y_zero_point; y has y_zero_point's dtype and
 * MatMul's shape. */
static tgc_status infer_qlinear_matmul(tgc_infer_ctx *c) {
    tgc_shape out;
    tgc_status st = matmul_like_shape(c, 0, 3, &out);
    if (st != TGC_OK) return st;
    if (!tgc_infer_require_same_dtype(c, 0, 2) || !tgc_infer_require_same_dtype(c, 3, 5) ||
        !tgc_ops_require_dtypes(c, 7, DT_Q8) || !tgc_infer_require_dtype(c, 1, TGC_FLOAT32) ||
        !tgc_infer_require_dtype(c, 4, TGC_FLOAT32) || !tgc_infer_require_dtype(c, 6, TGC_FLOAT32))
        return TGC_ERR_INVALID;
    if (!check_matrix_param(c, 1, 0, true, "a_scale") || !check_matrix_param(c, 2, 0, true, "a_zero_point") ||
        !check_matrix_param(c, 4, 3, false, "b_scale") || !check_matrix_param(c, 5, 3, false, "b_zero_point") ||
        !check_param(c, 6, "y_scale", tgc_dim_of(1)) || !check_param(c, 7, "y_zero_point", tgc_dim_of(1)))
        return TGC_ERR_INVALID;
    return tgc_infer_set_output(c, 0, tgc_infer_input(c, 7)->dtype, &out);
}

const tgc_op_def tgc_op_QLinearMatMul = {"QLinearMatMul", 8, 8, 1, 1, no_attrs, infer_qlinear_matmul};

/* ---- ConvInteger, QLinearConv ----------------------------------------------------- */

/* Checks that inputs x and w are 8-bit quantized and returns Conv's output
 * shape for them in *out. */
static tgc_status conv_like_shape(tgc_infer_ctx *c, int x, int w, tgc_shape *out) {
    if (!tgc_ops_require_dtypes(c, x, DT_Q8) || !tgc_ops_require_dtypes(c, w, DT_Q8)) return TGC_ERR_INVALID;
    int which[2] = {x, w};
    return borrowed_shape(c, &tgc_op_Conv, which, 2, out);
}

/* Output channels M of weight input w, or -1 when unknown. */
static tgc_dim out_channels(tgc_infer_ctx *c, int w) {
    const tgc_tensor_info *wt = tgc_infer_input(c, w);
    return wt->shape.rank >= 1 ? wt->shape.dims[0] : tgc_dim_of(-1);
}

/* ConvInteger-10: Y = Conv(X - x_zero_point, W - w_zero_point) in int32;
 * x_zero_point per tensor, w_zero_point per tensor or per output channel. */
static tgc_status infer_conv_integer(tgc_infer_ctx *c) {
    tgc_shape out;
    tgc_status st = conv_like_shape(c, 0, 1, &out);
    if (st != TGC_OK) return st;
    if (!tgc_infer_require_same_dtype(c, 0, 2) || !tgc_infer_require_same_dtype(c, 1, 3) ||
        !check_param(c, 2, "x_zero_point", tgc_dim_of(1)) || !check_param(c, 3, "w_zero_point", out_channels(c, 1)))
        return TGC_ERR_INVALID;
    return tgc_infer_set_output(c, 0, TGC_INT32, &out);
}

/* QLinearConv-10: inputs x, x_scale, x_zero_point, w, w_scale,
 * w_zero_point, y_scale, y_zero_point and an optional int32 bias B [M];
 * y has y_zero_point's dtype and Conv's shape. */
static tgc_status infer_qlinear_conv(tgc_infer_ctx *c) {
    tgc_shape out;
    tgc_status st = conv_like_shape(c, 0, 3, &out);
    if (st != TGC_OK) return st;
    if (!tgc_infer_require_same_dtype(c, 0, 2) || !tgc_infer_require_same_dtype(c, 3, 5) ||
        !tgc_ops_require_dtypes(c, 7, DT_Q8) || !tgc_infer_require_dtype(c, 1, TGC_FLOAT32) ||
        !tgc_infer_require_dtype(c, 4, TGC_FLOAT32) || !tgc_infer_require_dtype(c, 6, TGC_FLOAT32) ||
        !tgc_ops_require_dtypes(c, 8, TGC_DT(TGC_INT32)))
        return TGC_ERR_INVALID;
    tgc_dim m = out_channels(c, 3);
    if (!check_param(c, 1, "x_scale", tgc_dim_of(1)) || !check_param(c, 2, "x_zero_point", tgc_dim_of(1)) ||
        !check_param(c, 4, "w_scale", m) || !check_param(c, 5, "w_zero_point", m) ||
        !check_param(c, 6, "y_scale", tgc_dim_of(1)) || !check_param(c, 7, "y_zero_point", tgc_dim_of(1)))
        return TGC_ERR_INVALID;
    const tgc_tensor_info *b = tgc_infer_input(c, 8);
    tgc_dim merged;
    if (b != NULL && b->shape.rank >= 0 &&
        (b->shape.rank != 1 || (!tgc_dim_is(m, -1) && !tgc_ops_dim_merge(b->shape.dims[0], m, &merged)))) {
        char sb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 8, "shape-mismatch", "input 8 (B) has shape %s; it must be [M], one bias per "
                              "output channel", SHAPE(c, &b->shape, sb));
    }
    return tgc_infer_set_output(c, 0, tgc_infer_input(c, 7)->dtype, &out);
}

static const tgc_attr_def conv_attrs[] = {
    {"auto_pad", TGC_ATTR_STRING, false}, {"dilations", TGC_ATTR_INTS, false},
    {"group", TGC_ATTR_INT, false},       {"kernel_shape", TGC_ATTR_INTS, false},
    {"pads", TGC_ATTR_INTS, false},       {"strides", TGC_ATTR_INTS, false},
    {NULL, 0, false},
};

/* _QLinearConvNHWC (tgc's own, made by the nhwc-conv pass): QLinearConv
 * with x [N, H, W, C] and y [N, OH, OW, M] (channels last, as ONNX Runtime's
 * NhwcTransformer runs QLinearConv); W and every other input as QLinearConv
 * has them. */
static tgc_status infer_qlinear_conv_nhwc(tgc_infer_ctx *c) {
    return tgc_ops_infer_channels_last(c, infer_qlinear_conv);
}

const tgc_op_def tgc_op_ConvInteger = {"ConvInteger", 2, 4, 1, 1, conv_attrs, infer_conv_integer};
const tgc_op_def tgc_op_QLinearConv = {"QLinearConv", 8, 9, 1, 1, conv_attrs, infer_qlinear_conv};
const tgc_op_def tgc_op__QLinearConvNHWC = {"_QLinearConvNHWC", 8, 9, 1, 1, conv_attrs, infer_qlinear_conv_nhwc};
