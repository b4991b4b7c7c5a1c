/* _FusedConv, _FusedGemm, _FusedMatMul: Conv, Gemm or MatMul with the
 * activation that followed it, as one node (ONNX Runtime's FusedConv and
 * FusedGemm, com.microsoft), made by passes/fuse_activation.c and written
 * in --dump optimized. Each takes its base op's inputs and attributes
 * (tgc_op_def.extends) and two of its own:
 *     activation         string, required: a unary float32 row of
 *                        graph/elementwise.def ("Relu", "Clip", "Gelu",
 *                        "HardSwish", "LeakyRelu", "Sigmoid", ...)
 *     activation_params  floats, optional: the row's P0..P2 (attributes
 *                        and defaults applied; Clip's bounds); absent: 0
 * Y = activation(base(inputs)), float32; the shape is the base op's. */
#include "graph/elementwise.h"
#include "graph/ops.h"

static const tgc_attr_def fused_act_attrs[] = {
    {"activation", TGC_ATTR_STRING, true}, {"activation_params", TGC_ATTR_FLOATS, false}, {NULL, 0, false}};

const tgc_ew_row *tgc_fused_act_row(const char *name) {
    const tgc_ew_row *r = name != NULL ? tgc_ew_find(name) : NULL;
    if (r == NULL || r->arity != 1 || r->bool_out || (r->dtypes & (1u << TGC_FLOAT32)) == 0) return NULL;
    return r;
}

const tgc_ew_row *tgc_fusable_activation(const tgc_graph *g, const tgc_node *n, double p[TGC_EW_MAX_PARAMS]) {
    const tgc_ew_row *r = n->kind == TGC_NODE_OP ? tgc_fused_act_row(n->op_name) : NULL;
    if (r == NULL || n->n_outputs != 1 || n->outputs[0].dtype != TGC_FLOAT32 || n->n_inputs < 1) return NULL;
    if (tgc_ew_id(r) != TGC_EW_Clip && n->n_inputs != 1) return NULL;
    if (n->inputs[0].node < 0 || n->inputs[0].port != 0) return NULL;
    return tgc_ew_node_params(g, n, r, p) ? r : NULL; /* Clip's bounds known only at run time: no */
}

static tgc_status infer_fused_act(tgc_infer_ctx *c, const tgc_op_def *base) {
    const tgc_attr *act = tgc_infer_attr(c, "activation"), *params = tgc_infer_attr(c, "activation_params");
    if (tgc_fused_act_row(act != NULL ? act->s : NULL) == NULL)
        return tgc_infer_fail(c, -1, "bad-attribute", "activation '%s' is no unary float elementwise op",
                              act != NULL && act->s != NULL ? act->s : "");
    if (params != NULL && params->n > TGC_EW_MAX_PARAMS)
        return tgc_infer_fail(c, -1, "bad-attribute", "activation_params has %zu values (at most %d)", params->n,
                              TGC_EW_MAX_PARAMS);
    for (int i = 0; i < tgc_infer_num_inputs(c); i++)
        if (tgc_infer_input(c, i) != NULL && !tgc_infer_require_dtype(c, i, TGC_FLOAT32)) return TGC_ERR_INVALID;
    return base->infer(c);
}

static tgc_status infer_fused_conv(tgc_infer_ctx *c) { return infer_fused_act(c, &tgc_op_Conv); }
static tgc_status infer_fused_gemm(tgc_infer_ctx *c) { return infer_fused_act(c, &tgc_op_Gemm); }
static tgc_status infer_fused_matmul(tgc_infer_ctx *c) { return infer_fused_act(c, &tgc_op_MatMul); }

const tgc_op_def tgc_op__FusedConv = {"_FusedConv", 2, 3, 1, 1, fused_act_attrs, infer_fused_conv};
const tgc_op_def tgc_op__FusedGemm = {"_FusedGemm", 2, 3, 1, 1, fused_act_attrs, infer_fused_gemm};
const tgc_op_def tgc_op__FusedMatMul = {"_FusedMatMul", 2, 2, 1, 1, fused_act_attrs, infer_fused_matmul};
