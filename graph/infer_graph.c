/* The inference driver: visits nodes in topological order, gives each op's
 * inference function its inputs, and checks the result against what the
 * file declared in `out`. */
#include "graph/passes.h"

#include "graph/infer.h"
#include "graph/infer_rank.h"
#include "graph/ops.h"
#include "support/alloc.h"

#include <string.h>

/* Initializers: dtype and shape from the declaration; small integer tensors
 * also carry their values, so shape arithmetic over them folds. */
static tgc_status infer_const(tgc_node *n) {
    const tgc_const *c = n->data;
    tgc_tensor_info *info = &n->outputs[0];
    info->dtype = c->dtype;
    info->shape = c->shape;
    info->value_len = -1;
    int64_t numel = tgc_shape_numel(&c->shape);
    if (c->dtype == TGC_FLOAT32 && numel == 1) {
        float f;
        memcpy(&f, c->data, sizeof f);
        info->has_real = true;
        info->real = f;
    }
    if ((c->dtype != TGC_INT64 && c->dtype != TGC_INT32) || c->shape.rank > 1 || numel > TGC_MAX_VALUE_LEN)
        return TGC_OK;
    tgc_dim value[TGC_MAX_VALUE_LEN];
    for (int64_t i = 0; i < numel; i++)
        value[i] = tgc_dim_of(c->dtype == TGC_INT64 ? ((const int64_t *)c->data)[i] : ((const int32_t *)c->data)[i]);
    return tgc_info_set_value(info, (int)numel, value);
}

static void replace_symbol(tgc_node *n, int32_t sym, tgc_dim with) {
    for (int k = 0; k < n->n_outputs; k++) {
        tgc_tensor_info *o = &n->outputs[k];
        for (int d = 0; d < o->shape.rank; d++)
            if (o->shape.dims[d].sym == sym) o->shape.dims[d] = with;
        for (int i = 0; i < o->value_len; i++)
            if (o->value[i].sym == sym) o->value[i] = with;
    }
}

/* Compares output k with its declaration. A dimension inference could not
 * tell (a symbol it made while inferring this node, index >= first_new)
 * takes the declared value; anything else must agree exactly. */
static tgc_status check_declared(tgc_graph *g, tgc_node *n, int k, int32_t first_new, tgc_diags *diags) {
    const tgc_tensor_info *want = &n->declared[k];
    tgc_tensor_info *got = &n->outputs[k];
    char a[256], b[256];
    if (want->dtype != got->dtype || want->kind != got->kind)
        return tgc_diag_error(diags, g->path, n->declared_pos, "out-mismatch",
                              "node '%s' (%s): output %d is declared %s but inference gives %s", tgc_node_label(n),
                              n->op_name, k,
                              tgc_type_str(want->dtype, want->kind, a, sizeof a),
                              tgc_type_str(got->dtype, got->kind, b, sizeof b));
    if (!n->declared_has_shape[k]) return TGC_OK;
    if (got->shape.rank == TGC_RANK_UNKNOWN) {
        got->shape = want->shape;
        return TGC_OK;
    }
    bool ok = want->shape.rank == got->shape.rank;
    for (int d = 0; ok && d < got->shape.rank; d++) {
        tgc_dim w = want->shape.dims[d], v = got->shape.dims[d];
        if (tgc_dim_eq(w, v)) continue;
        if (v.sym >= first_new) replace_symbol(n, v.sym, w);
        else ok = false;
    }
    if (!ok)
        return tgc_diag_error(diags, g->path, n->declared_pos, "out-mismatch",
                              "node '%s' (%s): output %d is declared with shape %s but inference gives %s",
                              tgc_node_label(n),
                              n->op_name, k, tgc_shape_str(g, &want->shape, a, sizeof a),
                              tgc_shape_str(g, &got->shape, b, sizeof b));
    return TGC_OK;
}

static bool inputs_inferred(const tgc_graph *g, const tgc_node *n) {
    for (int i = 0; i < n->n_inputs; i++) {
        const tgc_tensor_info *info = tgc_graph_ref_info(g, n->inputs[i]);
        if (n->inputs[i].node >= 0 && (info == NULL || info->dtype == TGC_DTYPE_INVALID)) return false;
    }
    return true;
}

static void reset_outputs(tgc_node *n) {
    for (int k = 0; k < n->n_outputs; k++) {
        tgc_info_clear_value(&n->outputs[k]);
        n->outputs[k].dtype = TGC_DTYPE_INVALID;
        n->outputs[k].shape.rank = TGC_RANK_UNKNOWN;
    }
}

/* Refuses an output whose concrete dims already give an element count or
 * bytes that cannot fit (a graph input, an initializer, or an op's output
 * after its declaration filled in what inference could not tell). */
static tgc_status check_sizes(tgc_graph *g, tgc_node *n, tgc_diags *diags) {
    for (int k = 0; k < n->n_outputs; k++) {
        const tgc_tensor_info *o = &n->outputs[k];
        size_t elem = tgc_dtype_size(o->dtype);
        char s[256], why[160];
        const char *what = n->kind == TGC_NODE_INPUT ? "graph input" : n->kind == TGC_NODE_CONST ? "initializer" : "node";
        if (tgc_shape_size_fits(&o->shape, elem > 0 ? elem : 1)) {
            const char *over = tgc_load_limits_tensor(g, &o->shape, elem > 0 ? elem : 1, why, sizeof why);
            if (over == NULL) continue;
            return tgc_diag_error(diags, g->path, n->pos, "over-limit", "%s '%s': output %d has shape %s (%s): %s",
                                  what, n->name, k, tgc_shape_str(g, &o->shape, s, sizeof s),
                                  tgc_dtype_name(o->dtype), over);
        }
        return tgc_diag_error(diags, g->path, n->pos, "size-overflow",
                              "%s '%s': output %d has shape %s (%s), whose element count or size in bytes does "
                              "not fit in 2^63 - 1", what, n->name, k, tgc_shape_str(g, &o->shape, s, sizeof s),
                              tgc_dtype_name(o->dtype));
    }
    return TGC_OK;
}

/* A string input or output of an op that does not take strings
 * (graph/ops.h, tgc_ops_take_strings): index of the first (outputs after
 * inputs, counted from n_inputs), or -1. */
static int string_misuse(const tgc_graph *g, const tgc_node *n, bool outputs) {
    if (tgc_ops_take_strings(n->op_name)) return -1;
    for (int i = 0; !outputs && i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0 && tgc_graph_ref_info(g, n->inputs[i])->dtype == TGC_STRING) return i;
    for (int k = 0; outputs && k < n->n_outputs; k++)
        if (n->outputs[k].dtype == TGC_STRING) return n->n_inputs + k;
    return -1;
}

/* A sequence or optional input of an op that takes tensors only
 * (graph/ops.h, tgc_ops_take_kinds): its index, or -1. */
static int kind_misuse(const tgc_graph *g, const tgc_node *n) {
    if (tgc_ops_take_kinds(n->op_name)) return -1;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0 && tgc_graph_ref_info(g, n->inputs[i])->kind != TGC_KIND_TENSOR) return i;
    return -1;
}

static tgc_status infer_op(tgc_graph *g, tgc_node *n, tgc_diags *diags) {
    if (!inputs_inferred(g, n)) return TGC_ERR_INVALID; /* an input's error was reported */
    int32_t first_new = tgc_graph_root(g)->n_symbols;
    tgc_infer_ctx ctx = {.graph = g, .node = n, .diags = diags};
    int bad = kind_misuse(g, n);
    if (bad >= 0) {
        const tgc_tensor_info *in = tgc_graph_ref_info(g, n->inputs[bad]);
        char t[64];
        return tgc_infer_fail(&ctx, bad, "dtype-mismatch", "input %d is a %s; %s takes tensors", bad,
                              tgc_type_str(in->dtype, in->kind, t, sizeof t), n->op_name);
    }
    bad = string_misuse(g, n, false);
    if (bad >= 0)
        return tgc_infer_fail(&ctx, bad, "dtype-mismatch", "input %d is a string tensor; %s does not take strings "
                              "in tgc", bad, n->op_name);
    tgc_status s = tgc_infer_rank_needed(g, n) ? tgc_infer_over_ranks(&ctx) : n->op->infer(&ctx);
    if (s == TGC_OK && (bad = string_misuse(g, n, true)) >= 0)
        s = tgc_infer_fail(&ctx, -1, "dtype-mismatch", "output %d would be a string tensor; %s does not make "
                           "strings in tgc", bad - n->n_inputs, n->op_name);
    for (int k = 0; s == TGC_OK && k < n->n_outputs; k++)
        if (n->outputs[k].dtype == TGC_DTYPE_INVALID)
            s = tgc_diag_error(diags, g->path, n->pos, "internal",
                               "node '%s' (%s): inference left output %d unset (a tgc bug)", tgc_node_label(n),
                               n->op_name, k);
    for (int k = 0; s == TGC_OK && k < n->n_declared && k < n->n_outputs; k++)
        s = check_declared(g, n, k, first_new, diags);
    if (s == TGC_OK) s = check_sizes(g, n, diags);
    if (s != TGC_OK) reset_outputs(n);
    return s;
}

tgc_status tgc_graph_infer(tgc_graph *g, tgc_diags *diags) {
    tgc_status result = TGC_OK;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        tgc_status s = tgc_graph_infer_node(g, g->topo[i], diags);
        if (s == TGC_ERR_NOMEM) return s;
        if (s != TGC_OK) result = s;
    }
    return result;
}

tgc_status tgc_graph_infer_node(tgc_graph *g, int32_t id, tgc_diags *diags) {
    tgc_node *n = &g->nodes[id];
    tgc_status s = TGC_OK;
    if (n->kind == TGC_NODE_CONST) s = infer_const(n);
    else if (n->kind == TGC_NODE_OP) s = infer_op(g, n, diags);
    if (s == TGC_OK && n->kind != TGC_NODE_OP && (s = check_sizes(g, n, diags)) != TGC_OK) reset_outputs(n);
    return s;
}
