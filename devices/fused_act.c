/* The activation of a _FusedConv, _FusedGemm or _FusedMatMul node
 * (graph/ops_fused_act.c), read once for its cpu and gpu kernels. */
#include "devices/kernel.h"
#include "graph/elementwise.h"

tgc_status tgc_kernel_node_activation(tgc_kernel_ctx *c, tgc_fused_act *act) {
    const tgc_attr *a = tgc_node_attr(c->node, "activation"), *p = tgc_node_attr(c->node, "activation_params");
    const tgc_ew_row *r = tgc_fused_act_row(a != NULL && a->type == TGC_ATTR_STRING ? a->s : NULL);
    if (r == NULL) return tgc_kernel_fail(c, "the node's activation is no unary float elementwise op");
    if (p != NULL && (p->type != TGC_ATTR_FLOATS || p->n > TGC_EW_MAX_PARAMS))
        return tgc_kernel_fail(c, "activation_params must be at most %d floats", TGC_EW_MAX_PARAMS);
    act->row = (int)tgc_ew_id(r);
    for (int k = 0; k < TGC_EW_MAX_PARAMS; k++) act->params[k] = p != NULL && (size_t)k < p->n ? (float)p->floats[k] : 0.0f;
    return TGC_OK;
}
