/* Subgraphs: captures, copies, signatures (see subgraph.h). */
#include "graph/subgraph.h"

#include "graph/op_registry.h"
#include "graph/passes.h"
#include "support/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

tgc_graph *tgc_node_subgraph(const tgc_node *n, const char *name) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL && a->type == TGC_ATTR_GRAPH ? a->graph : NULL;
}

bool tgc_node_has_subgraphs(const tgc_node *n) {
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].type == TGC_ATTR_GRAPH && n->attrs[i].graph != NULL) return true;
    return false;
}

int32_t tgc_graph_feed_index(const tgc_graph *g, int32_t id) {
    if (id >= 0 && id < g->n_inputs_nodes) return id;
    for (int32_t j = 0; j < g->n_captures; j++)
        if (g->captures[j] == id) return g->n_inputs_nodes + j;
    return -1;
}

/* ---- captures ------------------------------------------------------------ */

static tgc_status grow_captures(tgc_graph *body) {
    if (body->n_captures < body->cap_captures) return TGC_OK;
    int32_t cap = body->cap_captures ? body->cap_captures * 2 : 4;
    int32_t *ids = tgc_realloc(body->captures, (size_t)cap * sizeof *ids);
    if (ids == NULL) return TGC_ERR_NOMEM;
    body->captures = ids;
    int32_t *inputs = tgc_realloc(body->capture_input, (size_t)cap * sizeof *inputs);
    if (inputs == NULL) return TGC_ERR_NOMEM;
    body->capture_input = inputs;
    body->cap_captures = cap;
    return TGC_OK;
}

/* The owner's input carrying `value` in: an implicit input it already has,
 * or a new one. */
static tgc_status implicit_input(tgc_node *owner, tgc_ref value, int32_t *index) {
    for (int i = tgc_node_explicit_inputs(owner); i < owner->n_inputs; i++)
        if (owner->inputs[i].node == value.node && owner->inputs[i].port == value.port) {
            *index = i;
            return TGC_OK;
        }
    tgc_ref *inputs = tgc_realloc(owner->inputs, ((size_t)owner->n_inputs + 1) * sizeof *inputs);
    if (inputs == NULL) return TGC_ERR_NOMEM;
    owner->inputs = inputs;
    owner->inputs[owner->n_inputs] = value;
    *index = owner->n_inputs++;
    owner->n_implicit++;
    return TGC_OK;
}

tgc_status tgc_subgraph_add_capture(tgc_graph *body, const char *name, tgc_graph *outer, int32_t owner,
                                    tgc_ref value, int32_t *local) {
    if (grow_captures(body) != TGC_OK) return TGC_ERR_NOMEM;
    int32_t id;
    if (tgc_graph_add_node(body, name, TGC_NODE_INPUT, &id) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_node *n = &body->nodes[id];
    n->pos = value.pos;
    if ((n->outputs = tgc_calloc(1, sizeof *n->outputs)) == NULL) return TGC_ERR_NOMEM;
    n->n_outputs = 1;
    n->outputs[0].dtype = TGC_DTYPE_INVALID;
    n->outputs[0].value_len = -1;
    n->outputs[0].shape.rank = TGC_RANK_UNKNOWN;
    int32_t index;
    if (implicit_input(&outer->nodes[owner], value, &index) != TGC_OK) return TGC_ERR_NOMEM;
    body->captures[body->n_captures] = id;
    body->capture_input[body->n_captures++] = index;
    *local = id;
    return TGC_OK;
}

/* ---- copies --------------------------------------------------------------- */

static tgc_ref *copy_refs(const tgc_ref *refs, int n) {
    tgc_ref *out = tgc_malloc(((size_t)n + 1) * sizeof *out);
    if (out != NULL && n > 0) memcpy(out, refs, (size_t)n * sizeof *out);
    return out;
}

static int32_t *copy_ids(const int32_t *ids, int32_t n) {
    int32_t *out = tgc_malloc(((size_t)n + 1) * sizeof *out);
    if (out != NULL && n > 0) memcpy(out, ids, (size_t)n * sizeof *out);
    return out;
}

tgc_graph *tgc_subgraph_clone(const tgc_graph *src) {
    tgc_graph *out = tgc_graph_create(src->path, src->dir);
    bool ok = out != NULL;
    if (ok) {
        out->format_pos = src->format_pos;
        out->limits = src->limits;
        out->depth = src->depth;
        ok = src->name == NULL || (out->name = tgc_strdup(src->name)) != NULL;
    }
    for (int32_t id = 0; ok && id < src->n_nodes; id++) {
        const tgc_node *s = &src->nodes[id];
        int32_t nid;
        if (tgc_graph_add_node(out, s->name, s->kind, &nid) != TGC_OK) {
            ok = false;
            break;
        }
        tgc_node *n = &out->nodes[nid];
        ok = tgc_node_copy_body(n, s) == TGC_OK;
        if (ok && s->n_inputs > 0) ok = (n->inputs = copy_refs(s->inputs, s->n_inputs)) != NULL;
        if (ok) n->n_inputs = s->n_inputs;
        if (ok && s->n_controls > 0) ok = (n->controls = copy_refs(s->controls, s->n_controls)) != NULL;
        if (ok) n->n_controls = s->n_controls;
        if (ok && s->n_colocate > 0) ok = (n->colocate = copy_refs(s->colocate, s->n_colocate)) != NULL;
        if (ok) n->n_colocate = s->n_colocate;
    }
    if (ok) {
        out->n_inputs_nodes = src->n_inputs_nodes;
        ok = (out->outputs = copy_refs(src->outputs, src->n_outputs)) != NULL;
        if (ok) out->n_outputs = src->n_outputs;
        if (ok) ok = tgc_graph_copy_output_sources(out, src) == TGC_OK;
    }
    if (ok && src->n_captures > 0) {
        out->captures = copy_ids(src->captures, src->n_captures);
        out->capture_input = copy_ids(src->capture_input, src->n_captures);
        ok = out->captures != NULL && out->capture_input != NULL;
        if (ok) out->n_captures = out->cap_captures = src->n_captures;
    }
    if (ok && src->topo != NULL) ok = (out->topo = copy_ids(src->topo, src->n_nodes)) != NULL;
    if (!ok) {
        tgc_graph_free(out);
        return NULL;
    }
    tgc_graph_adopt_subgraphs(out);
    return out;
}

void tgc_graph_adopt_subgraphs(tgc_graph *g) {
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_attrs; i++)
            if (n->attrs[i].type == TGC_ATTR_GRAPH && n->attrs[i].graph != NULL) {
                n->attrs[i].graph->parent = g;
                n->attrs[i].graph->depth = g->depth + 1;
            }
    }
}

/* ---- signatures ------------------------------------------------------------- */

int tgc_subgraph_node_outputs(const tgc_node *n) {
    if (n->kind != TGC_NODE_OP || n->op == NULL) return -1;
    const char *op = n->op->name;
    const tgc_graph *b;
    if (strcmp(op, "If") == 0) {
        b = tgc_node_subgraph(n, "then_branch");
        return b != NULL ? b->n_outputs : -1;
    }
    if (strcmp(op, "Loop") == 0) {
        b = tgc_node_subgraph(n, "body");
        return b != NULL && b->n_outputs >= 1 ? b->n_outputs - 1 : -1;
    }
    if (strcmp(op, "Scan") == 0 || strcmp(op, "SequenceMap") == 0) {
        b = tgc_node_subgraph(n, "body");
        return b != NULL ? b->n_outputs : -1;
    }
    return -1;
}

/* Where a message about subgraph attribute `name` of n points: the
 * attribute's key. */
static tgc_srcpos attr_pos(const tgc_node *n, const char *name) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a != NULL ? a->pos : n->pos;
}

/* Formats "node 'NAME' (OP): " then fmt into a diagnostic at pos. */
static tgc_status report(tgc_graph *g, tgc_diags *diags, const tgc_node *n, tgc_srcpos pos, const char *fmt, ...)
    TGC_PRINTF(5, 6);

static tgc_status report(tgc_graph *g, tgc_diags *diags, const tgc_node *n, tgc_srcpos pos, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tgc_diag_error(diags, g->path, pos, "subgraph-signature", "node '%s' (%s): %s", tgc_node_label(n),
                          n->op_name, msg);
}

static const char *plural(int k) { return k == 1 ? "" : "s"; }

static tgc_status check_if(tgc_graph *g, tgc_diags *diags, const tgc_node *n) {
    const tgc_graph *t = tgc_node_subgraph(n, "then_branch"), *e = tgc_node_subgraph(n, "else_branch");
    tgc_status s = TGC_OK;
    if (t == NULL || e == NULL) return TGC_OK; /* missing-attribute reports it */
    if (t->n_inputs_nodes > 0)
        s = report(g, diags, n, t->nodes[0].pos, "'then_branch' declares %d input%s; If's branches take none (they "
                   "read outer values by name)", t->n_inputs_nodes, plural(t->n_inputs_nodes));
    if (e->n_inputs_nodes > 0)
        s = report(g, diags, n, e->nodes[0].pos, "'else_branch' declares %d input%s; If's branches take none (they "
                   "read outer values by name)", e->n_inputs_nodes, plural(e->n_inputs_nodes));
    if (t->n_outputs != e->n_outputs)
        s = report(g, diags, n, attr_pos(n, "else_branch"), "'then_branch' gives %d output%s but 'else_branch' "
                   "gives %d; the branches must give the same number", t->n_outputs, plural(t->n_outputs),
                   e->n_outputs);
    return s;
}

static tgc_status check_loop(tgc_graph *g, tgc_diags *diags, const tgc_node *n) {
    const tgc_graph *b = tgc_node_subgraph(n, "body");
    int carried = tgc_node_explicit_inputs(n) - 2;
    tgc_status s = TGC_OK;
    if (carried < 0)
        return report(g, diags, n, n->pos, "a Loop lists its trip count M and its condition first (either may be "
                      "\"\"), then its carried values; it has %d input%s", tgc_node_explicit_inputs(n),
                      plural(tgc_node_explicit_inputs(n)));
    if (b == NULL) return TGC_OK; /* missing-attribute reports it */
    if (b->n_inputs_nodes != 2 + carried)
        s = report(g, diags, n, attr_pos(n, "body"), "the body takes %d input%s, but a Loop with %d carried "
                   "value%s gives it %d: (iteration_num, cond, then one per carried value)", b->n_inputs_nodes,
                   plural(b->n_inputs_nodes), carried, plural(carried), 2 + carried);
    if (b->n_outputs < 1 + carried)
        s = report(g, diags, n, attr_pos(n, "body"), "the body gives %d output%s, but a Loop with %d carried "
                   "value%s needs at least %d: (cond, then one per carried value, then the scan outputs)",
                   b->n_outputs, plural(b->n_outputs), carried, plural(carried), 1 + carried);
    return s;
}

static tgc_status check_scan(tgc_graph *g, tgc_diags *diags, const tgc_node *n) {
    const tgc_graph *b = tgc_node_subgraph(n, "body");
    const tgc_attr *m_attr = tgc_node_attr(n, "num_scan_inputs");
    int inputs = tgc_node_explicit_inputs(n);
    if (m_attr == NULL || b == NULL) return TGC_OK; /* missing-attribute reports it */
    int64_t m = m_attr->i;
    if (m < 1 || m > inputs)
        return report(g, diags, n, m_attr->pos, "num_scan_inputs is %lld, but the Scan has %d input%s: it must be "
                      "between 1 and the number of inputs", (long long)m, inputs, plural(inputs));
    int state = inputs - (int)m;
    tgc_status s = TGC_OK;
    if (b->n_inputs_nodes != inputs)
        s = report(g, diags, n, attr_pos(n, "body"), "the body takes %d input%s, but the Scan gives it %d (%d state "
                   "value%s, then %lld scan input%s)", b->n_inputs_nodes, plural(b->n_inputs_nodes), inputs, state,
                   plural(state), (long long)m, plural((int)m));
    if (b->n_outputs < state)
        s = report(g, diags, n, attr_pos(n, "body"), "the body gives %d output%s, but a Scan with %d state value%s "
                   "needs at least %d", b->n_outputs, plural(b->n_outputs), state, plural(state), state);
    int k = b->n_outputs - state;
    static const struct {
        const char *name;
        bool per_input;
    } lists[] = {{"scan_input_axes", true}, {"scan_input_directions", true}, {"scan_output_axes", false},
                 {"scan_output_directions", false}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        const tgc_attr *a = tgc_node_attr(n, lists[i].name);
        int want = lists[i].per_input ? (int)m : k;
        if (a != NULL && (int64_t)a->n != want && want >= 0)
            s = report(g, diags, n, a->pos, "'%s' lists %zu value%s but the Scan has %d scan %s%s", lists[i].name,
                       a->n, plural((int)a->n), want, lists[i].per_input ? "input" : "output", plural(want));
    }
    return s;
}

static tgc_status check_sequence_map(tgc_graph *g, tgc_diags *diags, const tgc_node *n) {
    const tgc_graph *b = tgc_node_subgraph(n, "body");
    int inputs = tgc_node_explicit_inputs(n);
    if (b == NULL || b->n_inputs_nodes == inputs) return TGC_OK;
    return report(g, diags, n, attr_pos(n, "body"), "the body takes %d input%s, but the SequenceMap gives it %d (an "
                  "element of each sequence input, each other input as it is)", b->n_inputs_nodes,
                  plural(b->n_inputs_nodes), inputs);
}

tgc_status tgc_subgraph_validate_node(tgc_graph *g, int32_t id, tgc_diags *diags) {
    tgc_node *n = &g->nodes[id];
    tgc_status s = TGC_OK;
    for (int i = 0; i < n->n_attrs; i++) {
        tgc_graph *b = n->attrs[i].type == TGC_ATTR_GRAPH ? n->attrs[i].graph : NULL;
        if (b == NULL) continue;
        b->parent = g;
        b->depth = g->depth + 1;
        tgc_status bs = tgc_graph_validate(b, diags);
        if (bs == TGC_ERR_NOMEM) return bs;
        if (bs != TGC_OK) s = bs;
    }
    if (n->op == NULL) return s;
    tgc_status cs = TGC_OK;
    if (strcmp(n->op->name, "If") == 0) cs = check_if(g, diags, n);
    else if (strcmp(n->op->name, "Loop") == 0) cs = check_loop(g, diags, n);
    else if (strcmp(n->op->name, "Scan") == 0) cs = check_scan(g, diags, n);
    else if (strcmp(n->op->name, "SequenceMap") == 0) cs = check_sequence_map(g, diags, n);
    return cs != TGC_OK ? cs : s;
}
