/* The passes' editing kit: use counts, edits, and the canonical rebuild. */
#include "passes/rewrite.h"

#include "graph/op_registry.h"
#include "graph/passes.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

tgc_graph *tgc_rewrite_empty_like(const tgc_graph *g) {
    tgc_graph *out = tgc_graph_create(g->path, g->dir);
    if (out == NULL) return NULL;
    out->format_pos = g->format_pos;
    out->limits = g->limits;
    out->next_fresh = g->next_fresh;
    bool ok = g->name == NULL || (out->name = tgc_strdup(g->name)) != NULL;
    for (int32_t i = 0; ok && i < g->n_symbols; i++) ok = tgc_graph_symbol(out, g->symbols[i], g->symbol_fresh[i]) == i;
    if (!ok) {
        tgc_graph_free(out);
        return NULL;
    }
    return out;
}

static tgc_ref *copy_refs(const tgc_ref *refs, int n) {
    tgc_ref *out = tgc_malloc(((size_t)n + 1) * sizeof *out);
    if (out != NULL && n > 0) memcpy(out, refs, (size_t)n * sizeof *out);
    return out;
}

tgc_graph *tgc_graph_copy(const tgc_graph *g) {
    tgc_graph *out = tgc_rewrite_empty_like(g);
    bool ok = out != NULL;
    for (int32_t id = 0; ok && id < g->n_nodes; id++) {
        const tgc_node *src = &g->nodes[id];
        int32_t nid;
        ok = tgc_graph_add_node(out, src->name, src->kind, &nid) == TGC_OK;
        if (!ok) break;
        tgc_node *n = &out->nodes[nid];
        ok = tgc_node_copy_body(n, src) == TGC_OK;
        if (ok && src->n_inputs > 0) ok = (n->inputs = copy_refs(src->inputs, src->n_inputs)) != NULL;
        if (ok) n->n_inputs = src->n_inputs;
        if (ok && src->n_controls > 0) ok = (n->controls = copy_refs(src->controls, src->n_controls)) != NULL;
        if (ok) n->n_controls = src->n_controls;
        if (ok && src->n_colocate > 0) ok = (n->colocate = copy_refs(src->colocate, src->n_colocate)) != NULL;
        if (ok) n->n_colocate = src->n_colocate;
    }
    if (ok) {
        out->n_inputs_nodes = g->n_inputs_nodes;
        ok = (out->outputs = copy_refs(g->outputs, g->n_outputs)) != NULL;
        if (ok) out->n_outputs = g->n_outputs;
        if (ok) ok = tgc_graph_copy_output_sources(out, g) == TGC_OK;
    }
    if (ok && g->topo != NULL) {
        ok = (out->topo = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *out->topo)) != NULL;
        if (ok) memcpy(out->topo, g->topo, (size_t)g->n_nodes * sizeof *out->topo);
    }
    if (!ok) {
        tgc_graph_free(out);
        return NULL;
    }
    tgc_graph_adopt_subgraphs(out);
    return out;
}

/* ---- tables -------------------------------------------------------------- */

static void free_tables(tgc_rewrite *rw) {
    tgc_free(rw->removed);
    tgc_free(rw->added);
    tgc_free(rw->like);
    tgc_free(rw->value_base);
    tgc_free(rw->uses);
}

/* Room for `nodes` nodes and `values` values in rw's tables. */
static tgc_status reserve(tgc_rewrite *rw, int32_t nodes, int32_t values) {
    if (nodes > rw->cap_nodes) {
        int32_t cap = nodes + nodes / 2 + 16;
        bool *removed = tgc_realloc(rw->removed, (size_t)cap * sizeof *removed);
        if (removed != NULL) rw->removed = removed;
        bool *added = tgc_realloc(rw->added, (size_t)cap * sizeof *added);
        if (added != NULL) rw->added = added;
        int32_t *like = tgc_realloc(rw->like, (size_t)cap * sizeof *like);
        if (like != NULL) rw->like = like;
        int32_t *base = tgc_realloc(rw->value_base, (size_t)cap * sizeof *base);
        if (base != NULL) rw->value_base = base;
        if (removed == NULL || added == NULL || like == NULL || base == NULL) return TGC_ERR_NOMEM;
        for (int32_t i = rw->cap_nodes; i < cap; i++) {
            rw->removed[i] = rw->added[i] = false;
            rw->like[i] = -1;
            rw->value_base[i] = 0;
        }
        rw->cap_nodes = cap;
    }
    if (values > rw->cap_values) {
        int32_t cap = values + values / 2 + 16;
        int32_t *uses = tgc_realloc(rw->uses, (size_t)cap * sizeof *uses);
        if (uses == NULL) return TGC_ERR_NOMEM;
        memset(uses + rw->cap_values, 0, (size_t)(cap - rw->cap_values) * sizeof *uses);
        rw->uses = uses;
        rw->cap_values = cap;
    }
    return TGC_OK;
}

static int32_t *use_slot(tgc_rewrite *rw, tgc_ref r) {
    if (r.node < 0 || r.port < 0 || r.port >= rw->g->nodes[r.node].n_outputs) return NULL;
    return &rw->uses[rw->value_base[r.node] + r.port];
}

static void count_inputs(tgc_rewrite *rw, int32_t id, int32_t delta) {
    const tgc_node *n = &rw->g->nodes[id];
    for (int k = 0; k < n->n_inputs; k++) {
        int32_t *u = use_slot(rw, n->inputs[k]);
        if (u != NULL) *u += delta;
    }
}

tgc_status tgc_rewrite_begin(tgc_rewrite *rw, tgc_graph *g) {
    memset(rw, 0, sizeof *rw);
    rw->g = g;
    int32_t values = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) values += g->nodes[id].n_outputs;
    if (reserve(rw, g->n_nodes, values) != TGC_OK) {
        tgc_rewrite_abandon(rw);
        return TGC_ERR_NOMEM;
    }
    for (int32_t id = 0; id < g->n_nodes; id++) {
        rw->value_base[id] = rw->n_values;
        rw->n_values += g->nodes[id].n_outputs;
    }
    for (int32_t id = 0; id < g->n_nodes; id++) count_inputs(rw, id, 1);
    for (int i = 0; i < g->n_outputs; i++) {
        int32_t *u = use_slot(rw, g->outputs[i]);
        if (u != NULL) (*u)++;
    }
    return TGC_OK;
}

void tgc_rewrite_abandon(tgc_rewrite *rw) {
    tgc_graph_free(rw->g);
    free_tables(rw);
    memset(rw, 0, sizeof *rw);
}

/* ---- queries and edits ------------------------------------------------------ */

static bool same_ref(tgc_ref a, tgc_ref b) { return a.node == b.node && a.port == b.port; }

int32_t tgc_rewrite_uses(const tgc_rewrite *rw, tgc_ref r) {
    int32_t *u = use_slot((tgc_rewrite *)rw, r);
    return u != NULL ? *u : 0;
}

int tgc_rewrite_readers(const tgc_rewrite *rw, tgc_ref r, int32_t *out, int max) {
    int n = 0;
    for (int32_t id = 0; id < rw->g->n_nodes; id++) {
        if (rw->removed[id]) continue;
        const tgc_node *nd = &rw->g->nodes[id];
        for (int k = 0; k < nd->n_inputs; k++)
            if (same_ref(nd->inputs[k], r)) {
                if (n < max) out[n] = id;
                n++;
                break;
            }
    }
    return n;
}

bool tgc_rewrite_is_output(const tgc_rewrite *rw, tgc_ref r) {
    for (int i = 0; i < rw->g->n_outputs; i++)
        if (rw->g->outputs[i].node == r.node && rw->g->outputs[i].port == r.port) return true;
    return false;
}

void tgc_rewrite_replace_uses(tgc_rewrite *rw, tgc_ref from, tgc_ref to) {
    tgc_graph *g = rw->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (rw->removed[id]) continue;
        tgc_node *n = &g->nodes[id];
        for (int k = 0; k < n->n_inputs; k++)
            if (same_ref(n->inputs[k], from)) tgc_rewrite_set_input(rw, id, k, to);
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (same_ref(g->outputs[i], from)) {
            int32_t *u = use_slot(rw, from), *v = use_slot(rw, to);
            if (u != NULL) (*u)--;
            if (v != NULL) (*v)++;
            g->outputs[i].node = to.node;
            g->outputs[i].port = to.port;
        }
}

void tgc_rewrite_set_input(tgc_rewrite *rw, int32_t id, int k, tgc_ref to) {
    tgc_ref *in = &rw->g->nodes[id].inputs[k];
    int32_t *u = use_slot(rw, *in), *v = use_slot(rw, to);
    if (u != NULL) (*u)--;
    if (v != NULL) (*v)++;
    in->node = to.node;
    in->port = to.port;
}

void tgc_rewrite_remove(tgc_rewrite *rw, int32_t id) {
    if (rw->removed[id]) return;
    rw->removed[id] = true;
    count_inputs(rw, id, -1);
}

/* Appends a node of `kind` named after `like` or `base` (see the header). */
static tgc_status add_node(tgc_rewrite *rw, tgc_node_kind kind, int32_t like, const char *base, int n_outputs,
                           int32_t *id) {
    tgc_graph *g = rw->g;
    if (reserve(rw, g->n_nodes + 1, rw->n_values + n_outputs) != TGC_OK) return TGC_ERR_NOMEM;
    char name[512];
    const char *stem = like >= 0 ? g->nodes[like].name : base;
    snprintf(name, sizeof name, "%s", stem);
    while (like >= 0 || tgc_graph_find(g, name) >= 0) {
        snprintf(name, sizeof name, "%s_%d", stem, ++rw->next_name);
        if (tgc_graph_find(g, name) < 0) break;
    }
    tgc_status s = tgc_graph_add_node(g, name, kind, id);
    if (s != TGC_OK) return s;
    tgc_node *n = &g->nodes[*id];
    if (n_outputs > 0 && (n->outputs = tgc_calloc((size_t)n_outputs, sizeof *n->outputs)) == NULL) return TGC_ERR_NOMEM;
    n->n_outputs = n_outputs;
    for (int k = 0; k < n_outputs; k++) {
        n->outputs[k].dtype = TGC_DTYPE_INVALID;
        n->outputs[k].value_len = -1;
    }
    if (like >= 0) {
        const tgc_node *l = &g->nodes[like];
        n->pos = l->pos;
        n->op_pos = l->op_pos;
        n->device_pos = l->device_pos;
        if (l->device != NULL && kind == TGC_NODE_OP && (n->device = tgc_strdup(l->device)) == NULL)
            return TGC_ERR_NOMEM;
    }
    rw->added[*id] = true;
    rw->removed[*id] = false;
    rw->like[*id] = like;
    rw->value_base[*id] = rw->n_values;
    rw->n_values += n_outputs;
    return TGC_OK;
}

tgc_status tgc_rewrite_add_op(tgc_rewrite *rw, const char *op_name, int32_t like, const tgc_ref *inputs,
                              int n_inputs, int n_outputs, int32_t *id) {
    const tgc_op_def *op = tgc_op_find(op_name);
    if (op == NULL) return TGC_ERR_INVALID;
    tgc_status s = add_node(rw, TGC_NODE_OP, like, op_name, n_outputs, id);
    if (s != TGC_OK) return s;
    tgc_node *n = &rw->g->nodes[*id];
    n->op = op;
    if ((n->op_name = tgc_strdup(op_name)) == NULL) return TGC_ERR_NOMEM;
    if (n_inputs > 0 && (n->inputs = copy_refs(inputs, n_inputs)) == NULL) return TGC_ERR_NOMEM;
    n->n_inputs = n_inputs;
    count_inputs(rw, *id, 1);
    return TGC_OK;
}

tgc_status tgc_rewrite_add_control(tgc_rewrite *rw, int32_t id, int32_t before) {
    tgc_node *n = &rw->g->nodes[id];
    tgc_ref *controls = tgc_realloc(n->controls, (size_t)(n->n_controls + 1) * sizeof *controls);
    if (controls == NULL) return TGC_ERR_NOMEM;
    controls[n->n_controls] = (tgc_ref){before, 0, {0, 0}};
    n->controls = controls;
    n->n_controls++;
    return TGC_OK;
}

void tgc_rewrite_keep_own_name(tgc_rewrite *rw, int32_t id) {
    if (id >= 0 && id < rw->g->n_nodes && rw->added[id]) rw->like[id] = -1;
}

tgc_status tgc_rewrite_add_const(tgc_rewrite *rw, int32_t like, const char *base, tgc_const *data, int32_t *id) {
    tgc_status s = add_node(rw, TGC_NODE_CONST, like, base, 1, id);
    if (s != TGC_OK) {
        tgc_const_free(data);
        return s;
    }
    tgc_node *n = &rw->g->nodes[*id];
    n->data = data;
    n->outputs[0].dtype = data->dtype;
    n->outputs[0].shape = data->shape;
    return TGC_OK;
}

tgc_status tgc_rewrite_replace_op(tgc_rewrite *rw, int32_t id, const tgc_ref *inputs, int n_inputs, int32_t *copy) {
    tgc_status s = tgc_rewrite_add_op(rw, rw->g->nodes[id].op_name, id, inputs, n_inputs, 1, copy);
    if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, id, *copy);
    if (s != TGC_OK) return s;
    tgc_rewrite_replace_uses(rw, (tgc_ref){id, 0, {0, 0}}, (tgc_ref){*copy, 0, {0, 0}});
    tgc_rewrite_remove(rw, id);
    return TGC_OK;
}

tgc_status tgc_rewrite_copy_attrs(tgc_rewrite *rw, int32_t from, int32_t to) {
    const tgc_node *src = &rw->g->nodes[from];
    tgc_node *dst = &rw->g->nodes[to];
    if (src->n_attrs == 0) return TGC_OK;
    if ((dst->attrs = tgc_calloc((size_t)src->n_attrs, sizeof *dst->attrs)) == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < src->n_attrs; i++) {
        dst->n_attrs = i + 1;
        if (tgc_attr_copy(&dst->attrs[i], &src->attrs[i]) != TGC_OK) return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

/* The attribute `name` of node id, made empty (added if missing). */
static tgc_attr *attr_slot(tgc_rewrite *rw, int32_t id, const char *name, tgc_attr_type type) {
    tgc_node *n = &rw->g->nodes[id];
    tgc_attr *a = NULL;
    for (int i = 0; i < n->n_attrs && a == NULL; i++)
        if (strcmp(n->attrs[i].name, name) == 0) a = &n->attrs[i];
    if (a != NULL) {
        tgc_attr_release(a);
    } else {
        tgc_attr *attrs = tgc_realloc(n->attrs, ((size_t)n->n_attrs + 1) * sizeof *attrs);
        if (attrs == NULL) return NULL;
        n->attrs = attrs;
        a = &n->attrs[n->n_attrs++];
        memset(a, 0, sizeof *a);
    }
    a->type = type;
    a->pos = n->pos;
    if ((a->name = tgc_strdup(name)) == NULL) {
        n->n_attrs--; /* the slot was the last or a released one: drop it either way */
        if (a != &n->attrs[n->n_attrs]) *a = n->attrs[n->n_attrs];
        return NULL;
    }
    return a;
}

tgc_status tgc_rewrite_set_attr_list(tgc_rewrite *rw, int32_t id, const char *name, tgc_attr_type type, size_t n,
                                     const void *values) {
    tgc_attr *a = attr_slot(rw, id, name, type);
    if (a == NULL) return TGC_ERR_NOMEM;
    a->n = n;
    if (type == TGC_ATTR_INTS) {
        if ((a->ints = tgc_malloc(n * sizeof *a->ints + 1)) == NULL) return TGC_ERR_NOMEM;
        if (n > 0) memcpy(a->ints, values, n * sizeof *a->ints);
    } else if (type == TGC_ATTR_FLOATS) {
        if ((a->floats = tgc_malloc(n * sizeof *a->floats + 1)) == NULL) return TGC_ERR_NOMEM;
        if (n > 0) memcpy(a->floats, values, n * sizeof *a->floats);
    } else {
        if ((a->strings = tgc_calloc(n ? n : 1, sizeof *a->strings)) == NULL) return TGC_ERR_NOMEM;
        for (size_t i = 0; i < n; i++)
            if ((a->strings[i] = tgc_strdup(((const char *const *)values)[i])) == NULL) return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

tgc_status tgc_rewrite_set_attr_int(tgc_rewrite *rw, int32_t id, const char *name, int64_t v) {
    tgc_attr *a = attr_slot(rw, id, name, TGC_ATTR_INT);
    if (a == NULL) return TGC_ERR_NOMEM;
    a->i = v;
    return TGC_OK;
}

tgc_status tgc_rewrite_set_attr_float(tgc_rewrite *rw, int32_t id, const char *name, double v) {
    tgc_attr *a = attr_slot(rw, id, name, TGC_ATTR_FLOAT);
    if (a == NULL) return TGC_ERR_NOMEM;
    a->f = v;
    return TGC_OK;
}

tgc_status tgc_rewrite_set_attr_string(tgc_rewrite *rw, int32_t id, const char *name, const char *v) {
    tgc_attr *a = attr_slot(rw, id, name, TGC_ATTR_STRING);
    if (a == NULL) return TGC_ERR_NOMEM;
    return (a->s = tgc_strdup(v)) != NULL ? TGC_OK : TGC_ERR_NOMEM;
}

/* ---- the rebuild ------------------------------------------------------------ */

/* The surviving op nodes in a topological order (Kahn, FIFO from the lowest
 * id, so the result stays close to the file's order). */
static tgc_status order_ops(const tgc_rewrite *rw, int32_t *order, int32_t *count) {
    const tgc_graph *g = rw->g;
    int32_t nn = g->n_nodes;
    int32_t *indeg = tgc_calloc((size_t)nn + 1, sizeof *indeg);
    int32_t *first = tgc_calloc((size_t)nn + 2, sizeof *first);
    int64_t edges = 0;
    if (indeg == NULL || first == NULL) goto nomem;
    for (int32_t id = 0; id < nn; id++) {
        if (rw->removed[id]) continue;
        const tgc_node *n = &g->nodes[id];
        for (int e = 0; e < n->n_inputs + n->n_controls; e++) {
            tgc_ref r = e < n->n_inputs ? n->inputs[e] : n->controls[e - n->n_inputs];
            if (r.node < 0 || rw->removed[r.node]) continue;
            indeg[id]++;
            first[r.node + 1]++;
            edges++;
        }
    }
    for (int32_t id = 0; id < nn; id++) first[id + 1] += first[id];
    int32_t *next = tgc_malloc((size_t)(edges + 1) * sizeof *next);
    int32_t *fill = tgc_malloc(((size_t)nn + 1) * sizeof *fill);
    if (next == NULL || fill == NULL) {
        tgc_free(next);
        tgc_free(fill);
        goto nomem;
    }
    memcpy(fill, first, (size_t)nn * sizeof *fill);
    for (int32_t id = 0; id < nn; id++) {
        if (rw->removed[id]) continue;
        const tgc_node *n = &g->nodes[id];
        for (int e = 0; e < n->n_inputs + n->n_controls; e++) {
            tgc_ref r = e < n->n_inputs ? n->inputs[e] : n->controls[e - n->n_inputs];
            if (r.node >= 0 && !rw->removed[r.node]) next[fill[r.node]++] = id;
        }
    }
    int32_t head = 0, tail = 0;
    for (int32_t id = 0; id < nn; id++)
        if (!rw->removed[id] && indeg[id] == 0) order[tail++] = id;
    while (head < tail) {
        int32_t id = order[head++];
        for (int32_t e = first[id]; e < first[id + 1]; e++)
            if (--indeg[next[e]] == 0) order[tail++] = next[e];
    }
    *count = tail;
    tgc_free(next);
    tgc_free(fill);
    tgc_free(indeg);
    tgc_free(first);
    return TGC_OK;
nomem:
    tgc_free(indeg);
    tgc_free(first);
    return TGC_ERR_NOMEM;
}

/* The name node id has in the rebuilt graph: a removed node's, for the node
 * that replaced it (the first to ask), else its own. */
static const char *final_name(const tgc_rewrite *rw, int32_t id, bool *claimed) {
    int32_t like = rw->like[id];
    if (like >= 0 && rw->removed[like] && !claimed[like]) {
        claimed[like] = true;
        return rw->g->nodes[like].name;
    }
    return rw->g->nodes[id].name;
}

/* Moves node `id` of the working graph into `out` (its fields taken over),
 * as out's node *nid. */
static tgc_status move_node(tgc_rewrite *rw, tgc_graph *out, int32_t id, const char *name, int32_t *nid) {
    tgc_node *src = &rw->g->nodes[id];
    tgc_status s = tgc_graph_add_node(out, name, src->kind, nid);
    if (s != TGC_OK) return s;
    tgc_node *dst = &out->nodes[*nid];
    char *kept = dst->name;
    *dst = *src;
    dst->name = kept;
    char *old = src->name;
    memset(src, 0, sizeof *src);
    src->name = old;
    return TGC_OK;
}

static void remap(tgc_ref *refs, int *n, const int32_t *new_id, bool drop_missing) {
    int kept = 0;
    for (int i = 0; i < *n; i++) {
        tgc_ref r = refs[i];
        if (r.node >= 0) r.node = new_id[r.node];
        if (r.node < 0 && drop_missing) continue;
        refs[kept++] = r;
    }
    *n = kept;
}

tgc_status tgc_rewrite_finish(tgc_rewrite *rw, tgc_diags *diags, tgc_graph **out) {
    *out = NULL;
    tgc_graph *g = rw->g;
    int32_t nn = g->n_nodes;
    int32_t *order = tgc_malloc(((size_t)nn + 1) * sizeof *order);
    int32_t *new_id = tgc_malloc(((size_t)nn + 1) * sizeof *new_id);
    bool *claimed = tgc_calloc((size_t)nn + 1, sizeof *claimed);
    tgc_graph *ng = tgc_rewrite_empty_like(g);
    int32_t count = 0;
    tgc_status s = order != NULL && new_id != NULL && claimed != NULL && ng != NULL ? TGC_OK : TGC_ERR_NOMEM;
    if (s == TGC_OK) s = order_ops(rw, order, &count);
    for (int32_t id = 0; s == TGC_OK && id < nn; id++) new_id[id] = -1;
    /* Inputs, then initializers, then ops (the IR's order). */
    for (int pass = 0; pass < 3 && s == TGC_OK; pass++) {
        tgc_node_kind kind = pass == 0 ? TGC_NODE_INPUT : pass == 1 ? TGC_NODE_CONST : TGC_NODE_OP;
        int32_t len = pass == 2 ? count : nn;
        for (int32_t i = 0; s == TGC_OK && i < len; i++) {
            int32_t id = pass == 2 ? order[i] : i;
            if (rw->removed[id] || g->nodes[id].kind != kind) continue;
            s = move_node(rw, ng, id, final_name(rw, id, claimed), &new_id[id]);
        }
        if (pass == 0) ng->n_inputs_nodes = ng->n_nodes;
    }
    if (s == TGC_OK && count < nn) {
        int32_t alive = 0;
        for (int32_t id = 0; id < nn; id++) alive += !rw->removed[id];
        if (count < alive)
            s = tgc_diag_error(diags, g->path, (tgc_srcpos){0, 0}, "internal",
                               "an optimization pass made a cycle (a tgc bug)");
    }
    for (int32_t id = 0; s == TGC_OK && id < ng->n_nodes; id++) {
        tgc_node *n = &ng->nodes[id];
        remap(n->inputs, &n->n_inputs, new_id, false);
        remap(n->controls, &n->n_controls, new_id, true);
        remap(n->colocate, &n->n_colocate, new_id, true);
    }
    if (s == TGC_OK) {
        ng->outputs = g->outputs;
        ng->n_outputs = g->n_outputs;
        ng->output_sources = g->output_sources;
        g->outputs = NULL;
        g->output_sources = NULL;
        g->n_outputs = 0;
        remap(ng->outputs, &ng->n_outputs, new_id, false);
        s = (ng->topo = tgc_malloc(((size_t)ng->n_nodes + 1) * sizeof *ng->topo)) != NULL ? TGC_OK : TGC_ERR_NOMEM;
        for (int32_t k = 0; s == TGC_OK && k < ng->n_nodes; k++) ng->topo[k] = k;
        tgc_graph_adopt_subgraphs(ng);
    }
    /* Added nodes are inferred in the new order, which is topological (a
     * pass may add a node that reads one it added after it). */
    bool *added_new = s == TGC_OK ? tgc_calloc((size_t)ng->n_nodes + 1, sizeof *added_new) : NULL;
    if (s == TGC_OK && added_new == NULL) s = TGC_ERR_NOMEM;
    for (int32_t id = 0; s == TGC_OK && id < nn; id++)
        if (new_id[id] >= 0 && rw->added[id]) added_new[new_id[id]] = true;
    for (int32_t id = 0; s == TGC_OK && id < ng->n_nodes; id++) {
        if (!added_new[id]) continue;
        s = tgc_graph_infer_node(ng, id, diags);
        if (s == TGC_ERR_INVALID)
            tgc_diag_error(diags, g->path, ng->nodes[id].pos, "internal",
                           "node '%s' (%s) made by an optimization pass does not infer (a tgc bug)", ng->nodes[id].name,
                           ng->nodes[id].op_name);
    }
    tgc_free(added_new);
    tgc_free(order);
    tgc_free(new_id);
    tgc_free(claimed);
    tgc_rewrite_abandon(rw);
    if (s != TGC_OK) {
        tgc_graph_free(ng);
        return s;
    }
    *out = ng;
    return TGC_OK;
}
