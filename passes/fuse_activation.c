/* Conv, Gemm or MatMul + activation -> one node: a float32 Conv, Gemm or
 * MatMul whose only reader is a unary float activation (any one-input row
 * of graph/elementwise.def: Relu, Clip with constant bounds, HardSwish,
 * LeakyRelu, Sigmoid, Tanh, Gelu, ...) becomes _FusedConv, _FusedGemm or
 * _FusedMatMul (graph/ops_fused_act.c): the base op's inputs and
 * attributes, plus the activation and its parameters, named as the
 * activation (ONNX Runtime's ConvActivationFusion and FusedGemm). Both
 * nodes must ask for the same device, neither have control inputs or be
 * tied by colocation. The cpu kernels apply the activation as each block
 * of the output is written; the gpu runs it right after, in place. */
#include "passes/pass.h"

#include "graph/elementwise.h"

#include <string.h>

static const char *fused_name(const char *op) {
    if (strcmp(op, "Conv") == 0) return "_FusedConv";
    if (strcmp(op, "Gemm") == 0) return "_FusedGemm";
    if (strcmp(op, "MatMul") == 0) return "_FusedMatMul";
    return NULL;
}

/* The producer of activation node `act` when the pair can fuse, else -1;
 * the activation's row and parameters in *row and p. */
static int32_t fusable_pair(const tgc_rewrite *rw, int32_t act, const tgc_ew_row **row, double p[TGC_EW_MAX_PARAMS]) {
    const tgc_node *a = &rw->g->nodes[act];
    if (rw->removed[act] || a->n_controls > 0 || a->n_colocate > 0) return -1;
    if ((*row = tgc_fusable_activation(rw->g, a, p)) == NULL) return -1;
    tgc_ref in = a->inputs[0];
    if (rw->removed[in.node]) return -1;
    const tgc_node *m = &rw->g->nodes[in.node];
    if (m->kind != TGC_NODE_OP || fused_name(m->op_name) == NULL || m->n_controls > 0 || m->n_colocate > 0 ||
        m->n_outputs != 1 || m->outputs[0].dtype != TGC_FLOAT32 || !tgc_pass_same_device(a, m))
        return -1;
    if (tgc_pass_only_reader(rw, in) != act) return -1;
    return in.node;
}

tgc_status tgc_pass_fuse_activation(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    tgc_status s = TGC_OK;
    for (int32_t i = 0; s == TGC_OK && i < nn; i++) {
        int32_t act = rw->g->topo[i];
        const tgc_ew_row *row;
        double p[TGC_EW_MAX_PARAMS];
        int32_t base = fusable_pair(rw, act, &row, p);
        if (base < 0) continue;
        const tgc_node *m = &rw->g->nodes[base];
        tgc_ref ins[3];
        int n_in = m->n_inputs;
        memcpy(ins, m->inputs, (size_t)n_in * sizeof ins[0]);
        int32_t fused;
        s = tgc_rewrite_add_op(rw, fused_name(m->op_name), act, ins, n_in, 1, &fused);
        if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, base, fused);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_string(rw, fused, "activation", row->op);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_list(rw, fused, "activation_params", TGC_ATTR_FLOATS, 3, p);
        if (s != TGC_OK) break;
        tgc_rewrite_replace_uses(rw, (tgc_ref){act, 0, {0, 0}}, (tgc_ref){fused, 0, {0, 0}});
        tgc_rewrite_remove(rw, act);
        tgc_rewrite_remove(rw, base);
        rw->edits++;
    }
    return s;
}
