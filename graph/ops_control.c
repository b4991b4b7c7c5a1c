/* Control flow: If, Loop and Scan (ONNX opset 17), whose subgraphs are
 * inferred as part of their node (graph/infer_subgraph.h):
 *   - If's outputs merge its branches' (a dim the two agree on is kept,
 *     any other becomes a fresh symbol; branches of different ranks make
 *     the rank unknown until the If runs: graph/infer_rank.h);
 *   - Loop's and Scan's carried values keep the dims that hold across
 *     iterations and get fresh symbols for the others (a rank that changes
 *     becomes unknown);
 *   - scan outputs grow a dim: the trip count (a Loop's M when the Loop has
 *     no cond input and M is known, else a fresh symbol) or the scanned
 *     axis' length. */
#include "graph/infer_subgraph.h"
#include "graph/ops.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

/* A condition or trip count: one element of `dtype` (rank 0, or dims of 1). */
static bool require_single(tgc_infer_ctx *c, int i, tgc_dtype dtype, const char *what) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL) return true;
    char buf[TGC_OPS_SHAPE_BUF];
    if (in->dtype != dtype) {
        tgc_infer_fail(c, i, "dtype-mismatch", "%s must be %s, got %s", what, tgc_dtype_name(dtype),
                       tgc_dtype_name(in->dtype));
        return false;
    }
    for (int d = 0; d < in->shape.rank; d++)
        if (tgc_dim_known(in->shape.dims[d]) && in->shape.dims[d].v != 1) {
            tgc_infer_fail(c, i, "shape-mismatch", "%s must hold one element, got shape %s", what,
                           tgc_infer_shape_str(c, &in->shape, buf, sizeof buf));
            return false;
        }
    return true;
}

/* Subgraph attribute `name` of the node; NULL after a message when it has
 * none (the loader requires it; a graph built in C may lack it). */
static tgc_graph *subgraph(tgc_infer_ctx *c, const char *name) {
    tgc_graph *g = tgc_node_subgraph(c->node, name);
    if (g == NULL) tgc_infer_fail(c, -1, "missing-attribute", "needs the subgraph attribute '%s'", name);
    return g;
}

/* ---- If ------------------------------------------------------------------------ */

static const tgc_attr_def if_attrs[] = {
    {"then_branch", TGC_ATTR_GRAPH, true}, {"else_branch", TGC_ATTR_GRAPH, true}, {NULL, 0, false}};

static tgc_status infer_if(tgc_infer_ctx *c) {
    if (!require_single(c, 0, TGC_BOOL, "the condition")) return TGC_ERR_INVALID;
    tgc_graph *t = subgraph(c, "then_branch"), *e = t != NULL ? subgraph(c, "else_branch") : NULL;
    if (t == NULL || e == NULL) return TGC_ERR_INVALID;
    tgc_status st = tgc_subgraph_infer(c, t, NULL, 0, NULL, NULL);
    tgc_status se = tgc_subgraph_infer(c, e, NULL, 0, NULL, NULL);
    if (st == TGC_ERR_NOMEM || se == TGC_ERR_NOMEM) return TGC_ERR_NOMEM;
    if (st != TGC_OK || se != TGC_OK) return TGC_ERR_INVALID;
    for (int k = 0; k < tgc_infer_num_outputs(c); k++) {
        const tgc_tensor_info *a = tgc_subgraph_output(t, k), *b = tgc_subgraph_output(e, k);
        char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF], where[512];
        if (a == NULL || b == NULL) return TGC_ERR_INVALID;
        if (a->dtype != b->dtype || a->kind != b->kind)
            return tgc_diag_error(c->diags, e->path, e->outputs[k].pos, "dtype-mismatch", "node '%s' (If)%s: output "
                                  "%d is %s in 'then_branch' but %s in 'else_branch'", tgc_node_label(c->node),
                                  tgc_infer_where(c->graph, where, sizeof where), k,
                                  tgc_type_str(a->dtype, a->kind, sa, sizeof sa),
                                  tgc_type_str(b->dtype, b->kind, sb, sizeof sb));
        tgc_shape merged = a->shape; /* branches of different ranks: known when the If runs */
        if (a->shape.rank != b->shape.rank || b->shape.rank == TGC_RANK_UNKNOWN) merged.rank = TGC_RANK_UNKNOWN;
        for (int d = 0; d < merged.rank; d++)
            if (!tgc_dim_eq(a->shape.dims[d], b->shape.dims[d])) merged.dims[d] = tgc_infer_fresh_dim(c);
        tgc_status s = tgc_infer_set_output_kind(c, k, a->kind, a->dtype, &merged);
        if (s != TGC_OK) return s;
    }
    return TGC_OK;
}

const tgc_op_def tgc_op_If = {"If", 1, 1, 1, -1, if_attrs, infer_if};

/* ---- Loop and Scan ------------------------------------------------------------- */

/* Output k of the node: a scan output stacking `steps` per-iteration
 * values of `per` along `axis` (in [0, rank of per]). */
static tgc_status set_stacked(tgc_infer_ctx *c, int k, const tgc_tensor_info *per, tgc_dim steps, int axis) {
    char buf[TGC_OPS_SHAPE_BUF];
    if (per->kind != TGC_KIND_TENSOR)
        return tgc_infer_fail(c, -1, "dtype-mismatch", "scan output %d must be a tensor, got %s", k,
                              tgc_type_str(per->dtype, per->kind, buf, sizeof buf));
    if (per->shape.rank == TGC_RANK_UNKNOWN) {
        tgc_shape unknown = {.rank = TGC_RANK_UNKNOWN};
        return tgc_infer_set_output(c, k, per->dtype, &unknown);
    }
    if (per->shape.rank >= TGC_MAX_RANK)
        return tgc_infer_fail(c, -1, "unsupported", "scan output %d would stack values of shape %s: rank %d is above "
                              "tgc's %d", k, tgc_infer_shape_str(c, &per->shape, buf, sizeof buf),
                              per->shape.rank + 1, TGC_MAX_RANK);
    tgc_shape out = {.rank = per->shape.rank + 1};
    for (int d = 0, from = 0; d < out.rank; d++) out.dims[d] = d == axis ? steps : per->shape.dims[from++];
    return tgc_infer_set_output(c, k, per->dtype, &out);
}

static const tgc_attr_def loop_attrs[] = {{"body", TGC_ATTR_GRAPH, true}, {NULL, 0, false}};

static tgc_status infer_loop(tgc_infer_ctx *c) {
    if (!require_single(c, 0, TGC_INT64, "the trip count M") || !require_single(c, 1, TGC_BOOL, "the condition"))
        return TGC_ERR_INVALID;
    tgc_graph *body = subgraph(c, "body");
    int carried = tgc_infer_num_inputs(c) - 2;
    if (body == NULL) return TGC_ERR_INVALID;
    if (carried < 0)
        return tgc_infer_fail(c, -1, "subgraph-signature", "a Loop lists M and cond before its carried values");
    tgc_tensor_info *formal = tgc_calloc((size_t)carried + 2, sizeof *formal);
    tgc_tensor_info *final = tgc_calloc((size_t)carried + 1, sizeof *final);
    tgc_status s = formal != NULL && final != NULL ? TGC_OK : TGC_ERR_NOMEM;
    if (s == TGC_OK) {
        formal[0] = (tgc_tensor_info){.dtype = TGC_INT64, .shape = {.rank = 0}, .value_len = -1};
        formal[1] = (tgc_tensor_info){.dtype = TGC_BOOL, .shape = {.rank = 0}, .value_len = -1};
    }
    for (int k = 0; s == TGC_OK && k < carried; k++) {
        const tgc_tensor_info *v = tgc_infer_input(c, 2 + k);
        if (v == NULL) s = tgc_infer_fail(c, 2 + k, "missing-input", "carried value %d cannot be omitted", k);
        else formal[2 + k] = (tgc_tensor_info){.dtype = v->dtype, .shape = v->shape, .kind = v->kind, .value_len = -1};
    }
    tgc_subgraph_carried carry = {.first_input = 2, .first_output = 1, .count = carried};
    if (s == TGC_OK) s = tgc_subgraph_infer(c, body, formal, 2 + carried, &carry, final);
    const tgc_tensor_info *cond = s == TGC_OK ? tgc_subgraph_output(body, 0) : NULL;
    if (s == TGC_OK && (cond == NULL || cond->dtype != TGC_BOOL))
        s = tgc_diag_error(c->diags, body->path, body->outputs[0].pos, "dtype-mismatch", "node '%s' (Loop): the "
                           "body's first output (the condition) must be bool, got %s", tgc_node_label(c->node),
                           cond ? tgc_dtype_name(cond->dtype) : "nothing");
    for (int k = 0; s == TGC_OK && k < carried; k++)
        s = tgc_infer_set_output_kind(c, k, final[k].kind, final[k].dtype, &final[k].shape);
    /* Without a cond input the body's condition is ignored: M iterations exactly. */
    const tgc_tensor_info *m = tgc_infer_input(c, 0);
    bool counted = m != NULL && tgc_infer_input(c, 1) == NULL && m->value_len == 1 && tgc_dim_known(m->value[0]) &&
                   m->value[0].v >= 0;
    for (int k = carried; s == TGC_OK && k < tgc_infer_num_outputs(c); k++) {
        const tgc_tensor_info *per = tgc_subgraph_output(body, 1 + k);
        if (per == NULL) s = TGC_ERR_INVALID;
        else s = set_stacked(c, k, per, counted ? m->value[0] : tgc_infer_fresh_dim(c), 0);
    }
    tgc_free(formal);
    tgc_free(final);
    return s;
}

/* M and cond may each be omitted (""), but are listed: min_inputs 0 keeps
 * them optional, and the signature check asks for the two. */
const tgc_op_def tgc_op_Loop = {"Loop", 0, -1, 1, -1, loop_attrs, infer_loop};

static const tgc_attr_def scan_attrs[] = {{"body", TGC_ATTR_GRAPH, true},
                                          {"num_scan_inputs", TGC_ATTR_INT, true},
                                          {"scan_input_axes", TGC_ATTR_INTS, false},
                                          {"scan_input_directions", TGC_ATTR_INTS, false},
                                          {"scan_output_axes", TGC_ATTR_INTS, false},
                                          {"scan_output_directions", TGC_ATTR_INTS, false},
                                          {NULL, 0, false}};

/* Entry i of INTS attribute `name`, or 0 when absent. */
static int64_t list_entry(tgc_infer_ctx *c, const char *name, int i) {
    const int64_t *v;
    size_t n;
    return tgc_infer_attr_ints(c, name, &v, &n) && (size_t)i < n ? v[i] : 0;
}

static tgc_status infer_scan(tgc_infer_ctx *c) {
    tgc_graph *body = subgraph(c, "body");
    int64_t m64 = tgc_infer_attr_int(c, "num_scan_inputs", 1);
    int inputs = tgc_infer_num_inputs(c);
    if (body == NULL) return TGC_ERR_INVALID;
    if (m64 < 1 || m64 > inputs)
        return tgc_infer_fail(c, -1, "subgraph-signature", "num_scan_inputs is %lld, with %d inputs", (long long)m64,
                              inputs);
    int m = (int)m64, state = inputs - m;
    tgc_tensor_info *formal = tgc_calloc((size_t)inputs + 1, sizeof *formal);
    tgc_tensor_info *final = tgc_calloc((size_t)state + 1, sizeof *final);
    tgc_status s = formal != NULL && final != NULL ? TGC_OK : TGC_ERR_NOMEM;
    tgc_dim steps = tgc_dim_of(-1);
    bool have_steps = false;
    char buf[TGC_OPS_SHAPE_BUF];
    for (int i = 0; s == TGC_OK && i < inputs; i++) {
        const tgc_tensor_info *v = tgc_infer_input(c, i);
        if (v == NULL) {
            s = tgc_infer_fail(c, i, "missing-input", "input %d cannot be omitted", i);
            break;
        }
        formal[i] = (tgc_tensor_info){.dtype = v->dtype, .shape = v->shape, .kind = v->kind, .value_len = -1};
        if (i < state) continue;
        if (v->kind != TGC_KIND_TENSOR) {
            s = tgc_infer_fail(c, i, "dtype-mismatch", "scan input %d must be a tensor", i - state);
            break;
        }
        int64_t axis = list_entry(c, "scan_input_axes", i - state);
        int rank = v->shape.rank;
        if (rank < 1 || axis < -rank || axis >= rank) {
            s = tgc_infer_fail(c, i, "bad-attribute", "scan input %d has shape %s: it cannot be scanned along axis "
                               "%lld", i - state, tgc_infer_shape_str(c, &v->shape, buf, sizeof buf), (long long)axis);
            break;
        }
        int a = (int)(axis < 0 ? axis + rank : axis);
        tgc_dim len = v->shape.dims[a];
        if (have_steps && !tgc_ops_dim_merge(steps, len, &steps)) {
            s = tgc_infer_fail(c, i, "shape-mismatch", "scan input %d has %lld steps along axis %d, but an earlier "
                               "scan input has %lld", i - state, (long long)len.v, a, (long long)steps.v);
            break;
        }
        if (!have_steps) steps = len;
        have_steps = true;
        formal[i].shape.rank = rank - 1;
        for (int d = a; d < rank - 1; d++) formal[i].shape.dims[d] = v->shape.dims[d + 1];
    }
    tgc_subgraph_carried carry = {.first_input = 0, .first_output = 0, .count = state};
    if (s == TGC_OK) s = tgc_subgraph_infer(c, body, formal, inputs, &carry, final);
    for (int k = 0; s == TGC_OK && k < state; k++)
        s = tgc_infer_set_output_kind(c, k, final[k].kind, final[k].dtype, &final[k].shape);
    for (int k = state; s == TGC_OK && k < tgc_infer_num_outputs(c); k++) {
        const tgc_tensor_info *per = tgc_subgraph_output(body, k);
        if (per == NULL) {
            s = TGC_ERR_INVALID;
            break;
        }
        int64_t axis = list_entry(c, "scan_output_axes", k - state);
        int rank = per->shape.rank + 1;
        if (axis < -rank || axis >= rank) {
            s = tgc_infer_fail(c, -1, "bad-attribute", "scan output %d stacks values of shape %s: axis %lld is out "
                               "of range", k - state, tgc_infer_shape_str(c, &per->shape, buf, sizeof buf),
                               (long long)axis);
            break;
        }
        s = set_stacked(c, k, per, steps, (int)(axis < 0 ? axis + rank : axis));
    }
    tgc_free(formal);
    tgc_free(final);
    return s;
}

const tgc_op_def tgc_op_Scan = {"Scan", 1, -1, 1, -1, scan_attrs, infer_scan};
