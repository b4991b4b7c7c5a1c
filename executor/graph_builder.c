/* tgc_graph_builder: graphs built in code, one node a call, each node's
 * inputs, attributes, dtypes and shapes checked as it is added (the checks
 * of an eager call, then the node's shape inference), so that a mistake
 * fails the call that made it: the tracer of tgc.function names the
 * Python line from there.
 *
 * The nodes go into a draft graph in the order they come. Finishing moves
 * them into a new graph in the order the tgc/1 loader makes (inputs, then
 * initializers, then ops) and validates and infers it as a loaded file,
 * so the result is a graph as any other: it dumps as tgc/1 YAML that
 * loads again, and sessions, functions and passes take it. */
#include "executor/eager.h"
#include "executor/session.h"
#include "graph/passes.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct tgc_graph_builder {
    tgc_graph *g;    /* the draft */
    int32_t next_id; /* for the names made: "Add_7" */
    bool spent;      /* finished (or failed to finish): its nodes are gone */
};

static tgc_status builder_error(const tgc_graph_builder *b, tgc_diags *diags, const char *rule, const char *fmt,
                                ...) TGC_PRINTF(4, 5);
static tgc_status builder_error(const tgc_graph_builder *b, tgc_diags *diags, const char *rule, const char *fmt,
                                ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tgc_diag_error(diags, b->g != NULL ? b->g->path : NULL, (tgc_srcpos){0, 0}, rule, "%s", msg);
}

tgc_status tgc_graph_builder_create(const char *name, tgc_graph_builder **out) {
    *out = NULL;
    tgc_graph_builder *b = tgc_calloc(1, sizeof *b);
    if (b == NULL) return TGC_ERR_NOMEM;
    const char *label = name != NULL && name[0] != '\0' ? name : "graph";
    b->g = tgc_graph_create(label, NULL);
    if (b->g == NULL || (b->g->name = tgc_strdup(label)) == NULL) {
        tgc_graph_builder_free(b);
        return TGC_ERR_NOMEM;
    }
    *out = b;
    return TGC_OK;
}

void tgc_graph_builder_free(tgc_graph_builder *b) {
    if (b == NULL) return;
    tgc_graph_free(b->g);
    tgc_free(b);
}

/* A usable builder, or an error. */
static tgc_status check_open(const tgc_graph_builder *b, tgc_diags *diags) {
    if (b == NULL) return TGC_ERR_INVALID;
    if (b->spent) return builder_error(b, diags, "bad-call", "the builder of graph '%s' is finished", b->g->name);
    return TGC_OK;
}

/* A new draft node named `name`, or "<prefix>_<k>" when name is NULL. */
static tgc_status add_named(tgc_graph_builder *b, const char *name, const char *prefix, tgc_node_kind kind,
                            tgc_diags *diags, int32_t *id) {
    char made[128];
    if (name == NULL || name[0] == '\0') {
        do snprintf(made, sizeof made, "%s_%d", prefix, (int)b->next_id++);
        while (tgc_graph_find(b->g, made) >= 0);
        name = made;
    } else if (tgc_graph_find(b->g, name) >= 0) {
        return builder_error(b, diags, "duplicate-name", "the name '%s' is defined twice", name);
    } else if (strchr(name, ':') != NULL || name[0] == '^') {
        return builder_error(b, diags, "bad-name", "'%s': a node's name has no ':' and does not start with '^'",
                             name);
    }
    return tgc_graph_add_node(b->g, name, kind, id);
}

/* The value `v` of the draft, or NULL. */
static const tgc_tensor_info *value_info(const tgc_graph_builder *b, tgc_builder_value v) {
    if (v.node < 0 || v.node >= b->g->n_nodes || v.port < 0 || v.port >= b->g->nodes[v.node].n_outputs) return NULL;
    return &b->g->nodes[v.node].outputs[v.port];
}

tgc_status tgc_graph_builder_input(tgc_graph_builder *b, const char *name, tgc_dtype dtype, int rank,
                                   const int64_t *dims, const char *const *symbols, tgc_diags *diags,
                                   tgc_builder_value *out) {
    tgc_status s = check_open(b, diags);
    if (s != TGC_OK) return s;
    if (tgc_dtype_size(dtype) == 0 && dtype != TGC_STRING)
        return builder_error(b, diags, "bad-dtype", "input '%s': no such dtype (%d)", name ? name : "", (int)dtype);
    if (rank < -1 || rank > TGC_MAX_RANK || (rank > 0 && dims == NULL))
        return builder_error(b, diags, "bad-shape", "input '%s': rank %d (at most %d, -1 for unknown)",
                             name ? name : "", rank, TGC_MAX_RANK);
    int32_t id;
    if ((s = add_named(b, name, "input", TGC_NODE_INPUT, diags, &id)) != TGC_OK) return s;
    tgc_node *n = &b->g->nodes[id];
    if ((n->outputs = tgc_calloc(1, sizeof *n->outputs)) == NULL) return TGC_ERR_NOMEM;
    n->n_outputs = 1;
    tgc_tensor_info *info = &n->outputs[0];
    *info = (tgc_tensor_info){.dtype = dtype, .value_len = -1};
    info->shape.rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] >= 0) {
            info->shape.dims[i] = tgc_dim_of(dims[i]);
            continue;
        }
        const char *sym = symbols != NULL ? symbols[i] : NULL;
        int32_t k = sym != NULL && sym[0] != '\0' ? tgc_graph_symbol(b->g, sym, false) : tgc_graph_fresh_symbol(b->g);
        if (k < 0) return TGC_ERR_NOMEM;
        info->shape.dims[i] = tgc_dim_sym(k);
    }
    *out = (tgc_builder_value){id, 0};
    return TGC_OK;
}

tgc_status tgc_graph_builder_constant(tgc_graph_builder *b, const char *name, const tgc_tensor *value,
                                      tgc_diags *diags, tgc_builder_value *out) {
    tgc_status s = check_open(b, diags);
    if (s != TGC_OK) return s;
    if (value == NULL || (tgc_tensor_data(value) == NULL && tgc_value_nbytes(&value->v) > 0) ||
        value->v.dtype == TGC_STRING || tgc_value_is_list(&value->v))
        return builder_error(b, diags, "bad-constant", "constant '%s': a tensor in host memory is needed, not of "
                             "strings", name ? name : "");
    int32_t id;
    if ((s = add_named(b, name, "const", TGC_NODE_CONST, diags, &id)) != TGC_OK) return s;
    tgc_node *n = &b->g->nodes[id];
    tgc_const *c = n->data = tgc_calloc(1, sizeof *c);
    if (c == NULL || (n->outputs = tgc_calloc(1, sizeof *n->outputs)) == NULL) return TGC_ERR_NOMEM;
    n->n_outputs = 1;
    c->dtype = value->v.dtype;
    c->shape = tgc_shape_of(value->v.rank, value->v.dims);
    c->nbytes = tgc_value_nbytes(&value->v);
    /* a dump into a folder writes it there as NAME.npy; one without, inline */
    size_t len = strlen(n->name) + sizeof ".npy";
    if ((c->file = tgc_malloc(len)) == NULL) return TGC_ERR_NOMEM;
    snprintf(c->file, len, "%s.npy", n->name);
    c->unsaved = true;
    if (c->nbytes > 0) {
        if ((c->data = tgc_malloc(c->nbytes)) == NULL) return TGC_ERR_NOMEM;
        memcpy(c->data, tgc_tensor_data(value), c->nbytes);
    }
    if ((s = tgc_graph_infer_node(b->g, id, diags)) != TGC_OK) return s;
    *out = (tgc_builder_value){id, 0};
    return TGC_OK;
}

tgc_status tgc_graph_builder_op(tgc_graph_builder *b, const char *op, const tgc_op_attr *attrs, int n_attrs,
                                const tgc_builder_value *inputs, int n_inputs, int n_outputs, const char *name,
                                const char *device, tgc_diags *diags, tgc_builder_value *outputs) {
    tgc_status s = check_open(b, diags);
    if (s != TGC_OK) return s;
    if (n_inputs < 0 || (n_inputs > 0 && inputs == NULL) || outputs == NULL)
        return builder_error(b, diags, "bad-call", "op %s: %d inputs at %p, outputs at %p", op ? op : "(null)",
                             n_inputs, (const void *)inputs, (void *)outputs);
    for (int i = 0; i < n_inputs; i++) {
        const tgc_tensor_info *in = inputs[i].node != -1 ? value_info(b, inputs[i]) : NULL;
        if (inputs[i].node != -1 && in == NULL)
            return builder_error(b, diags, "bad-reference", "op %s: input %d is no value of graph '%s' (node %d, "
                                 "output %d)", op ? op : "(null)", i, b->g->name, (int)inputs[i].node,
                                 (int)inputs[i].port);
        if (in != NULL && in->dtype == TGC_DTYPE_INVALID)
            return builder_error(b, diags, "bad-reference", "op %s: input %d comes from node '%s', which failed",
                                 op ? op : "(null)", i, b->g->nodes[inputs[i].node].name);
    }
    tgc_node built;
    s = tgc_eager_node_build(&built, op, attrs, n_attrs, n_inputs, n_outputs, diags);
    if (s != TGC_OK) {
        tgc_eager_node_release(&built);
        return s;
    }
    for (int i = 0; i < n_inputs; i++) built.inputs[i] = (tgc_ref){.node = inputs[i].node, .port = inputs[i].port};
    for (int i = 0; i < n_inputs; i++)
        if (built.inputs[i].node < 0 && i < built.op->min_inputs) {
            s = builder_error(b, diags, "missing-input", "op %s: input %d is required", built.op->name, i);
            tgc_eager_node_release(&built);
            return s;
        }
    int32_t id;
    if ((s = add_named(b, name, built.op->name, TGC_NODE_OP, diags, &id)) != TGC_OK) {
        tgc_eager_node_release(&built);
        return s;
    }
    tgc_node *n = &b->g->nodes[id];
    char *node_name = n->name;
    tgc_free(built.name);
    built.name = node_name;
    *n = built; /* the node takes what `built` holds */
    if (device != NULL && device[0] != '\0' && (n->device = tgc_strdup(device)) == NULL) return TGC_ERR_NOMEM;
    for (int k = 0; k < n->n_outputs; k++) n->outputs[k].shape.rank = TGC_RANK_UNKNOWN;
    if ((s = tgc_graph_infer_node(b->g, id, diags)) != TGC_OK) return s; /* the node stays, its outputs unknown */
    for (int k = 0; k < n->n_outputs; k++) outputs[k] = (tgc_builder_value){id, k};
    return TGC_OK;
}

tgc_status tgc_graph_builder_value_info(const tgc_graph_builder *b, tgc_builder_value v, tgc_dtype *dtype,
                                        int *rank, int64_t *dims, const char **symbols) {
    const tgc_tensor_info *info = b != NULL && !b->spent ? value_info(b, v) : NULL;
    if (info == NULL || info->dtype == TGC_DTYPE_INVALID) return TGC_ERR_INVALID;
    *dtype = info->dtype;
    *rank = info->shape.rank;
    for (int i = 0; i < info->shape.rank; i++) {
        tgc_dim d = info->shape.dims[i];
        dims[i] = tgc_dim_known(d) ? d.v : -1;
        if (symbols != NULL) symbols[i] = tgc_dim_known(d) ? NULL : b->g->symbols[d.sym];
    }
    return TGC_OK;
}

/* ---- finishing -------------------------------------------------------------- */

/* Moves draft node `from` into graph g as a new node of the same name and
 * kind; `map` gives its inputs' ids in g. */
static tgc_status move_node(tgc_graph *draft, int32_t from, tgc_graph *g, const int32_t *map) {
    tgc_node *src = &draft->nodes[from];
    int32_t id;
    tgc_status s = tgc_graph_add_node(g, src->name, src->kind, &id);
    if (s != TGC_OK) return s;
    tgc_node *dst = &g->nodes[id];
    char *name = dst->name;
    dst->name = NULL;
    tgc_node moved = *src;
    memset(src, 0, sizeof *src);
    src->name = moved.name; /* the draft keeps its names for the map */
    moved.name = name;
    if (moved.kind != TGC_NODE_INPUT) { /* validation makes them again */
        for (int k = 0; k < moved.n_outputs; k++) tgc_info_clear_value(&moved.outputs[k]);
        tgc_free(moved.outputs);
        moved.outputs = NULL;
        moved.n_outputs = 0;
    } else {
        for (int i = 0; i < moved.outputs[0].shape.rank; i++) { /* a symbol by its name in g */
            tgc_dim *d = &moved.outputs[0].shape.dims[i];
            if (!tgc_dim_known(*d) && (d->sym = tgc_graph_symbol(g, draft->symbols[d->sym], false)) < 0)
                s = TGC_ERR_NOMEM;
        }
    }
    for (int i = 0; i < moved.n_inputs; i++)
        if (moved.inputs[i].node >= 0) moved.inputs[i].node = map[moved.inputs[i].node];
    *dst = moved;
    return s;
}

tgc_status tgc_graph_builder_finish(tgc_graph_builder *b, const tgc_builder_value *outputs, int n_outputs,
                                    const char *const *names, tgc_diags *diags, tgc_graph **out) {
    *out = NULL;
    tgc_status s = check_open(b, diags);
    if (s != TGC_OK) return s;
    if (n_outputs < 1 || outputs == NULL)
        return builder_error(b, diags, "no-outputs", "graph '%s' needs at least one output", b->g->name);
    for (int i = 0; i < n_outputs; i++)
        if (value_info(b, outputs[i]) == NULL || outputs[i].node < 0)
            return builder_error(b, diags, "bad-reference", "output %d is no value of graph '%s'", i, b->g->name);
    tgc_graph *draft = b->g, *g = tgc_graph_create(draft->path, NULL);
    int32_t *map = tgc_calloc((size_t)draft->n_nodes + 1, sizeof *map);
    b->spent = true;
    if (g == NULL || map == NULL || (g->name = tgc_strdup(draft->name)) == NULL) s = TGC_ERR_NOMEM;
    /* Only what the outputs read goes in (a node whose inference failed, a
     * value computed and dropped), and every input: they are the graph's
     * signature. The draft is in a topological order: a node reads only
     * nodes made before it. */
    bool *used = tgc_calloc((size_t)draft->n_nodes + 1, sizeof *used);
    if (used == NULL) s = TGC_ERR_NOMEM;
    for (int i = 0; s == TGC_OK && i < n_outputs; i++) used[outputs[i].node] = true;
    for (int32_t id = draft->n_nodes - 1; s == TGC_OK && id >= 0; id--)
        for (int i = 0; used[id] && i < draft->nodes[id].n_inputs; i++)
            if (draft->nodes[id].inputs[i].node >= 0) used[draft->nodes[id].inputs[i].node] = true;
    /* the loader's order: inputs, initializers, ops (ops come after what they read) */
    static const tgc_node_kind order[] = {TGC_NODE_INPUT, TGC_NODE_CONST, TGC_NODE_OP};
    for (int k = 0; k < 3 && s == TGC_OK; k++)
        for (int32_t id = 0; id < draft->n_nodes && s == TGC_OK; id++) {
            if (draft->nodes[id].kind != order[k] || (!used[id] && order[k] != TGC_NODE_INPUT)) continue;
            map[id] = g->n_nodes;
            s = move_node(draft, id, g, map);
        }
    if (s == TGC_OK) g->n_inputs_nodes = 0;
    for (int32_t id = 0; s == TGC_OK && id < g->n_nodes && g->nodes[id].kind == TGC_NODE_INPUT; id++)
        g->n_inputs_nodes = id + 1;
    if (s == TGC_OK && (g->outputs = tgc_calloc((size_t)n_outputs, sizeof *g->outputs)) == NULL) s = TGC_ERR_NOMEM;
    if (s == TGC_OK && names != NULL && (g->output_sources = tgc_calloc((size_t)n_outputs, sizeof(char *))) == NULL)
        s = TGC_ERR_NOMEM;
    for (int i = 0; s == TGC_OK && i < n_outputs; i++) {
        g->outputs[g->n_outputs++] = (tgc_ref){.node = map[outputs[i].node], .port = outputs[i].port};
        if (names != NULL && names[i] != NULL && (g->output_sources[i] = tgc_strdup(names[i])) == NULL)
            s = TGC_ERR_NOMEM;
    }
    tgc_free(map);
    tgc_free(used);
    if (s == TGC_OK) s = tgc_graph_validate(g, diags);
    if (s == TGC_OK) s = tgc_graph_infer(g, diags);
    if (s != TGC_OK) {
        tgc_graph_free(g);
        return s;
    }
    *out = g;
    return TGC_OK;
}
