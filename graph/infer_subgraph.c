/* Inference into subgraphs: a subgraph is inferred as part of the node that
 * holds it, its formal inputs given what the node passes in, its captures
 * the node's implicit inputs. Loop-carried values whose shape changes from
 * one iteration to the next are found by inferring the body again with
 * those dims made symbols, until the carried shapes hold (a fixed point,
 * reached in at most one pass per dim). */
#include "graph/infer_subgraph.h"

#include "graph/passes.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

/* Copies every message of `from` into `to`. */
static tgc_status copy_diags(const tgc_diags *from, tgc_diags *to) {
    for (size_t i = 0; i < tgc_diags_count(from); i++) {
        tgc_srcpos pos = {tgc_diag_line(from, i), tgc_diag_column(from, i)};
        tgc_status s = tgc_diag_add(to, tgc_diag_severity(from, i), tgc_diag_file(from, i), pos,
                                    tgc_diag_rule(from, i), "%s", tgc_diag_message(from, i));
        if (s == TGC_ERR_NOMEM) return s;
    }
    return TGC_OK;
}

/* What formal input `id` of body gets: `given`, made more precise by the
 * input's declaration in the file (a declared dim replaces a symbol; a
 * declared symbol replaces a dim, saying the dim varies). A declaration
 * that contradicts `given` is reported. */
static tgc_status formal_info(tgc_infer_ctx *c, tgc_graph *body, int32_t id, const tgc_tensor_info *given,
                              tgc_tensor_info *out) {
    const tgc_node *n = &body->nodes[id];
    *out = (tgc_tensor_info){.dtype = given->dtype, .shape = given->shape, .kind = given->kind, .value_len = -1};
    if (n->n_declared == 0) return TGC_OK;
    const tgc_tensor_info *want = &n->declared[0];
    char a[256], b[256];
    if (want->dtype != TGC_DTYPE_INVALID && (want->dtype != given->dtype || want->kind != given->kind))
        return tgc_diag_error(c->diags, body->path, n->declared_pos, "dtype-mismatch",
                              "subgraph input '%s' is declared %s but node '%s' (%s) gives it %s", n->name,
                              tgc_type_str(want->dtype, want->kind, a, sizeof a), tgc_node_label(c->node),
                              c->node->op_name,
                              tgc_type_str(given->dtype, given->kind, b, sizeof b));
    if (!n->declared_has_shape[0] || want->shape.rank == TGC_RANK_UNKNOWN) return TGC_OK;
    bool ok = given->shape.rank == TGC_RANK_UNKNOWN || given->shape.rank == want->shape.rank;
    for (int d = 0; ok && given->shape.rank != TGC_RANK_UNKNOWN && d < want->shape.rank; d++) {
        tgc_dim w = want->shape.dims[d], g = given->shape.dims[d];
        if (tgc_dim_known(w) && tgc_dim_known(g) && w.v != g.v) ok = false;
    }
    if (!ok)
        return tgc_diag_error(c->diags, body->path, n->declared_pos, "shape-mismatch",
                              "subgraph input '%s' is declared with shape %s but node '%s' (%s) gives it %s", n->name,
                              tgc_shape_str(body, &want->shape, a, sizeof a), tgc_node_label(c->node),
                              c->node->op_name,
                              tgc_shape_str(body, &given->shape, b, sizeof b));
    out->shape = want->shape;
    return TGC_OK;
}

/* Gives the body's captures the node's implicit inputs (values too: a
 * captured shape is as known inside as outside). */
static tgc_status set_captures(tgc_infer_ctx *c, tgc_graph *body) {
    for (int32_t j = 0; j < body->n_captures; j++) {
        tgc_tensor_info *o = &body->nodes[body->captures[j]].outputs[0];
        const tgc_tensor_info *in = tgc_infer_input(c, body->capture_input[j]);
        tgc_info_clear_value(o);
        if (in == NULL) return TGC_ERR_INVALID; /* its producer failed: reported */
        if (tgc_info_copy(o, in, true) != TGC_OK) return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

/* Infers body once with its formal inputs set to formal[0..n); messages to diags. */
static tgc_status infer_once(tgc_infer_ctx *c, tgc_graph *body, const tgc_tensor_info *formal, int n,
                             tgc_diags *diags) {
    for (int i = 0; i < n; i++) {
        tgc_tensor_info *o = &body->nodes[i].outputs[0];
        tgc_info_clear_value(o);
        if (tgc_info_copy(o, &formal[i], false) != TGC_OK) return TGC_ERR_NOMEM;
    }
    tgc_status s = set_captures(c, body);
    if (s != TGC_OK) return s;
    return tgc_graph_infer(body, diags);
}

tgc_status tgc_subgraph_infer(tgc_infer_ctx *c, tgc_graph *body, const tgc_tensor_info *formal, int n_formal,
                              const tgc_subgraph_carried *carry, tgc_tensor_info *carried) {
    int n_carried = carry != NULL ? carry->count : 0;
    int first_carried = carry != NULL ? carry->first_input : 0;
    if (c->runtime) return TGC_ERR_INVALID; /* the executor runs subgraphs itself */
    if (c->graph->depth >= TGC_MAX_SUBGRAPH_DEPTH)
        return tgc_infer_fail(c, -1, "over-limit", "subgraphs nest deeper than %d levels", TGC_MAX_SUBGRAPH_DEPTH);
    body->parent = c->graph;
    body->depth = c->graph->depth + 1;
    if (n_formal != body->n_inputs_nodes)
        return tgc_infer_fail(c, -1, "subgraph-signature", "its subgraph takes %d inputs; the node gives it %d",
                              body->n_inputs_nodes, n_formal);
    if (body->topo == NULL && tgc_graph_validate(body, c->diags) != TGC_OK) return TGC_ERR_INVALID;
    tgc_tensor_info *infos = tgc_calloc((size_t)n_formal + 1, sizeof *infos);
    if (infos == NULL) return TGC_ERR_NOMEM;
    tgc_status s = TGC_OK;
    for (int i = 0; i < n_formal; i++) {
        tgc_status fs = formal_info(c, body, i, &formal[i], &infos[i]);
        if (fs == TGC_ERR_NOMEM || s == TGC_OK) s = fs;
    }
    /* One pass per dim that turns out to vary, and one more to confirm. */
    int passes = 1 + n_carried * TGC_MAX_RANK + 1;
    for (int pass = 0; s == TGC_OK; pass++) {
        tgc_diags *scratch = tgc_diags_create();
        if (scratch == NULL) {
            s = TGC_ERR_NOMEM;
            break;
        }
        s = infer_once(c, body, infos, n_formal, scratch);
        bool changed = false;
        for (int k = 0; s == TGC_OK && k < n_carried; k++) {
            tgc_status ks = tgc_subgraph_carry(c, body, k, carry->first_output + k, &infos[first_carried + k],
                                               &changed);
            if (ks != TGC_OK) s = ks;
        }
        if (s != TGC_OK || !changed || pass + 1 >= passes) {
            tgc_status cs = copy_diags(scratch, c->diags);
            if (cs == TGC_ERR_NOMEM) s = cs;
            if (s == TGC_OK && changed)
                s = tgc_diag_error(c->diags, body->path, c->node->pos, "internal",
                                   "node '%s' (%s): the carried shapes did not settle (a tgc bug)",
                                   tgc_node_label(c->node), c->node->op_name);
            tgc_diags_free(scratch);
            break;
        }
        tgc_diags_free(scratch);
    }
    /* What the node gives: the widened carried values, of the kind the body gives them (an optional going
     * in may come out as the value it would hold). */
    for (int k = 0; s == TGC_OK && carried != NULL && k < n_carried; k++) {
        const tgc_tensor_info *out = tgc_subgraph_output(body, carry->first_output + k);
        carried[k] = (tgc_tensor_info){.dtype = infos[first_carried + k].dtype,
                                       .kind = out != NULL ? out->kind : infos[first_carried + k].kind,
                                       .shape = infos[first_carried + k].shape, .value_len = -1};
    }
    tgc_free(infos);
    return s;
}

tgc_status tgc_subgraph_carry(tgc_infer_ctx *c, tgc_graph *body, int k, int output, tgc_tensor_info *in,
                              bool *changed) {
    char a[256], b[256];
    const tgc_tensor_info *out = tgc_subgraph_output(body, output);
    if (out == NULL) return TGC_ERR_INVALID;
    tgc_srcpos pos = body->outputs[output].pos;
    const tgc_node *n = c->node;
    /* What comes out may be the value an optional going in would hold. */
    bool kind_ok = out->kind == in->kind || out->kind == (in->kind & ~TGC_KIND_OPTIONAL);
    if (out->dtype != in->dtype || !kind_ok)
        return tgc_diag_error(c->diags, body->path, pos, "dtype-mismatch", "node '%s' (%s): carried value %d goes "
                              "into the body as %s but comes out as %s", tgc_node_label(n), n->op_name, k,
                              tgc_type_str(in->dtype, in->kind, a, sizeof a),
                              tgc_type_str(out->dtype, out->kind, b, sizeof b));
    if (in->shape.rank == TGC_RANK_UNKNOWN) return TGC_OK;
    if (out->shape.rank != in->shape.rank) {
        /* A value (or a sequence's elements) may change rank from one iteration to the next: then none is
         * known, and the executor infers each iteration's nodes from what they get (graph/infer_rank.h). */
        in->shape.rank = TGC_RANK_UNKNOWN;
        *changed = true;
        return TGC_OK;
    }
    for (int d = 0; d < in->shape.rank; d++) {
        tgc_dim x = in->shape.dims[d], y = out->shape.dims[d];
        /* A symbol going in stands for whatever the iterations make of it. */
        if (!tgc_dim_known(x) || tgc_dim_eq(x, y)) continue;
        in->shape.dims[d] = tgc_infer_fresh_dim(c);
        *changed = true;
    }
    return c->nomem ? TGC_ERR_NOMEM : TGC_OK;
}

const tgc_tensor_info *tgc_subgraph_output(const tgc_graph *body, int i) {
    if (i < 0 || i >= body->n_outputs) return NULL;
    const tgc_tensor_info *info = tgc_graph_ref_info(body, body->outputs[i]);
    return info != NULL && info->dtype != TGC_DTYPE_INVALID ? info : NULL;
}
