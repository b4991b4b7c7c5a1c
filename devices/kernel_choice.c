/* tgc_kernel_choice and tgc_kernel_node_footprint (devices/kernel.h): a
 * kernel's way for a node and what it holds, asked of the kernel before
 * any run, from the shapes the graph infers. The
 * context it builds carries dtypes and dims but no buffers, as the
 * chooser's contract allows. */
#include "devices/kernel.h"

#include "graph/elementwise.h"

/* Value v from a static tensor info; false when its rank or a dim is
 * unknown or symbolic. An omitted input stays TGC_DTYPE_INVALID. */
static bool static_value(const tgc_tensor_info *info, tgc_value *v) {
    *v = (tgc_value){.dtype = TGC_DTYPE_INVALID};
    if (info == NULL) return true;
    if (info->shape.rank < 0 || info->shape.rank > TGC_MAX_RANK) return false;
    v->dtype = info->dtype;
    v->rank = info->shape.rank;
    for (int d = 0; d < v->rank; d++) {
        if (!tgc_dim_known(info->shape.dims[d]) || info->shape.dims[d].v < 0) return false;
        v->dims[d] = info->shape.dims[d].v;
    }
    return true;
}

/* The values of node id's inputs and outputs (static shapes, no
 * buffers) and its session-constant mask; false when a shape is not
 * static or the node has more inputs or outputs than the mask holds. */
static bool static_io(const tgc_graph *g, int32_t id, tgc_value *in, tgc_value *out, uint32_t *const_inputs) {
    const tgc_node *n = &g->nodes[id];
    if (n->kind != TGC_NODE_OP || n->n_inputs > TGC_KERNEL_MASK_BITS || n->n_outputs > TGC_KERNEL_MASK_BITS)
        return false;
    *const_inputs = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref r = n->inputs[i];
        if (!static_value(r.node >= 0 ? tgc_graph_ref_info(g, r) : NULL, &in[i])) return false;
        if (r.node >= 0 && g->nodes[r.node].kind == TGC_NODE_CONST) *const_inputs |= 1u << i;
    }
    for (int o = 0; o < n->n_outputs; o++)
        if (!static_value(&n->outputs[o], &out[o])) return false;
    return true;
}

const char *tgc_kernel_choice(const tgc_kernel_def *def, const tgc_graph *g, int32_t id) {
    if (def == NULL || def->choose == NULL || id < 0 || id >= g->n_nodes) return NULL;
    tgc_value in[TGC_KERNEL_MASK_BITS], out[TGC_KERNEL_MASK_BITS];
    uint32_t const_inputs;
    if (!static_io(g, id, in, out, &const_inputs)) return NULL;
    const tgc_node *n = &g->nodes[id];
    char error[256];
    tgc_kernel_ctx c = {.node = n, .inputs = in, .n_inputs = n->n_inputs, .outputs = out,
                        .n_outputs = n->n_outputs, .error = error, .error_size = sizeof error,
                        .const_inputs = const_inputs, .def = def};
    return def->choose(&c);
}

tgc_kernel_footprint tgc_kernel_node_footprint(const tgc_kernel_def *def, const tgc_graph *g, int32_t id, int width,
                                               int64_t workspace_limit) {
    tgc_kernel_footprint f = {0};
    if (def == NULL || def->footprint == NULL || id < 0 || id >= g->n_nodes) return f;
    tgc_value in[TGC_KERNEL_MASK_BITS], out[TGC_KERNEL_MASK_BITS];
    uint32_t const_inputs;
    if (!static_io(g, id, in, out, &const_inputs)) return f;
    const tgc_node *n = &g->nodes[id];
    char error[256];
    tgc_kernel_ctx c = {.node = n, .inputs = in, .n_inputs = n->n_inputs, .outputs = out,
                        .n_outputs = n->n_outputs, .error = error, .error_size = sizeof error,
                        .const_inputs = const_inputs, .def = def, .workspace_limit = workspace_limit};
    def->footprint(&c, width > 0 ? width : 1, &f);
    return f;
}

bool tgc_activation_of(const tgc_graph *g, const tgc_node *n, tgc_fused_act *act) {
    const tgc_ew_row *r = n->kind == TGC_NODE_OP ? tgc_ew_find(n->op_name) : NULL;
    if (r == NULL || r->arity != 1 || r->bool_out || n->n_outputs != 1 || n->n_inputs < 1) return false;
    tgc_dtype t = n->outputs[0].dtype;
    if ((t != TGC_FLOAT32 && t != TGC_FLOAT16) || (r->dtypes & (1u << t)) == 0) return false;
    if (tgc_ew_id(r) != TGC_EW_Clip && n->n_inputs != 1) return false;
    if (n->inputs[0].node < 0 || n->inputs[0].port != 0) return false;
    double p[TGC_EW_MAX_PARAMS];
    if (!tgc_ew_node_params(g, n, r, p)) return false; /* Clip's bounds known only at run time */
    *act = (tgc_fused_act){.row = tgc_ew_id(r)}; /* no residual: a kernel's own epilogue adds one */
    for (int k = 0; k < 3; k++) act->params[k] = (float)p[k];
    return true;
}

bool tgc_activation_absorbed(const tgc_graph *g, int32_t id, const tgc_kernel_def *producer, const int32_t *readers) {
    tgc_fused_act act;
    const tgc_node *n = &g->nodes[id];
    if (!tgc_kernel_fuses_at(producer, n->outputs[0].dtype) || !tgc_activation_of(g, n, &act)) return false;
    int32_t from = n->inputs[0].node;
    return g->nodes[from].kind == TGC_NODE_OP && readers[from] == 1 &&
           tgc_graph_ref_info(g, n->inputs[0])->dtype == n->outputs[0].dtype;
}
