/* An imported document made into the graph IR in memory: what loading the
 * YAML and .npy files tgc_onnx_write makes of it would give, without
 * writing them or reading them back: a weight the model stores as raw_data
 * moves from the unpacked model into the graph, others (typed fields,
 * external data) are copied once from their decoded form.
 *
 * The document is the importer's, so it is well formed by construction
 * (valid, unique names; known ops and attributes); what is checked here is
 * what an untrusted file could still get past it: the load limits, and
 * through the loader's second half (graph/loader.h) dangling references,
 * then validation and inference. Messages name the .onnx file, without a
 * position, and the nodes by their ONNX names (tgc_node_label). */
#include "onnx/onnx_import.h"

#include "graph/loader.h"
#include "graph/op_registry.h"
#include "support/alloc.h"
#include "support/diag.h"
#include "support/string_slots.h"

#include <string.h>

static const tgc_srcpos no_pos = {0, 0};

/* Where big weights would be written (tgc_onnx_write's STEM_weights/): the
 * `file:` a dump writes each one to (tgc_const.unsaved). */
typedef struct builder {
    tgc_onnx_arena arena;
    tgc_onnx_namer files;
    const char *wdir_rel;
    bool take_weights; /* move the model's raw_data buffers into the graph */
} builder;

static tgc_status bad(tgc_loader *l, const char *fmt, const char *name) {
    return tgc_diag_error(l->diags, l->g->path, no_pos, "bad-model", fmt, name);
}

static tgc_status add_node(tgc_loader *l, const char *name, const char *source, tgc_node_kind kind, int32_t *id) {
    if (tgc_graph_find(l->g, name) >= 0) return bad(l, "the name '%s' is defined twice", name);
    if (tgc_graph_add_node(l->g, name, kind, id) != TGC_OK) return tgc_loader_nomem(l);
    tgc_node *n = &l->g->nodes[*id];
    if (source != NULL && (n->source_name = tgc_strdup(source)) == NULL) return tgc_loader_nomem(l);
    return TGC_OK;
}

/* dims as the document writes them ("3" or a symbol) into *out. */
static tgc_status build_shape(tgc_loader *l, int rank, const char *const *dims, const char *what, tgc_shape *out) {
    if (rank > TGC_MAX_RANK) return bad(l, "%s: rank above 8", what);
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        int64_t v;
        if (tgc_parse_int(dims[i], &v) && v >= 0) {
            out->dims[i] = tgc_dim_of(v);
            continue;
        }
        int32_t sym = tgc_graph_symbol(tgc_graph_root(l->g), dims[i], false);
        if (sym < 0) return tgc_loader_nomem(l);
        out->dims[i] = tgc_dim_sym(sym);
    }
    return TGC_OK;
}

static tgc_status build_input(tgc_loader *l, const tgc_onnx_input *in) {
    int32_t id;
    tgc_status s = add_node(l, in->name, in->source, TGC_NODE_INPUT, &id);
    if (s != TGC_OK) return s;
    tgc_node *n = &l->g->nodes[id];
    if ((n->outputs = tgc_calloc(1, sizeof *n->outputs)) == NULL) return tgc_loader_nomem(l);
    n->n_outputs = 1;
    tgc_tensor_info *info = &n->outputs[0];
    *info = (tgc_tensor_info){.dtype = TGC_DTYPE_INVALID, .value_len = -1};
    info->shape.rank = TGC_RANK_UNKNOWN;
    if (l->parent == NULL) { /* the importer gives a top-level input a dtype, and a tensor's a shape */
        info->dtype = in->dtype;
        info->kind = in->kind;
        return in->rank >= 0 ? build_shape(l, in->rank, in->dims, in->name, &info->shape) : TGC_OK;
    }
    /* A subgraph's input takes what its node gives; a type the model gives
     * is its declaration (as graph/load_yaml.c's load_subgraph_input). */
    if (in->dtype == TGC_DTYPE_INVALID) return TGC_OK;
    n->declared = tgc_calloc(1, sizeof *n->declared);
    n->declared_has_shape = tgc_calloc(1, sizeof *n->declared_has_shape);
    if (n->declared == NULL || n->declared_has_shape == NULL) return tgc_loader_nomem(l);
    n->n_declared = 1;
    n->declared[0] = (tgc_tensor_info){.dtype = in->dtype, .kind = in->kind, .value_len = -1};
    n->declared[0].shape.rank = TGC_RANK_UNKNOWN;
    if (in->rank < 0) return TGC_OK;
    n->declared_has_shape[0] = true;
    return build_shape(l, in->rank, in->dims, in->name, &n->declared[0].shape);
}

/* A new constant holding a copy of v (its strings too). */
static tgc_status build_const(tgc_loader *l, const tgc_npy *v, const char *what, tgc_const **out) {
    *out = NULL;
    if (v->rank > TGC_MAX_RANK) return bad(l, "%s: rank above 8", what);
    tgc_const *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return tgc_loader_nomem(l);
    c->dtype = v->dtype;
    c->shape = tgc_shape_of(v->rank, v->dims);
    c->nbytes = v->nbytes;
    tgc_status s = TGC_OK;
    if (c->nbytes > 0) {
        c->data = v->dtype == TGC_STRING ? tgc_calloc(1, c->nbytes) : tgc_malloc(c->nbytes);
        if (c->data == NULL) s = tgc_loader_nomem(l);
        else if (v->dtype == TGC_STRING)
            s = tgc_string_slots_copy(c->data, v->data, c->nbytes / sizeof(char *)) == TGC_OK ? TGC_OK
                                                                                                : tgc_loader_nomem(l);
        else
            memcpy(c->data, v->data, c->nbytes);
    }
    if (s != TGC_OK) {
        tgc_const_free(c);
        return s;
    }
    *out = c;
    return TGC_OK;
}

/* A constant for v that takes the buffer `raw` holds (v's data), leaving
 * raw empty: no copy. */
static tgc_status take_const(tgc_loader *l, const tgc_npy *v, ProtobufCBinaryData *raw, tgc_const **out) {
    if ((*out = tgc_calloc(1, sizeof **out)) == NULL) return tgc_loader_nomem(l);
    **out = (tgc_const){.dtype = v->dtype, .shape = tgc_shape_of(v->rank, v->dims), .data = raw->data,
                        .nbytes = v->nbytes};
    *raw = (ProtobufCBinaryData){0};
    return TGC_OK;
}

static tgc_status build_init(tgc_loader *l, builder *b, const tgc_onnx_init *init) {
    int32_t id;
    tgc_status s = add_node(l, init->name, NULL, TGC_NODE_CONST, &id);
    if (s != TGC_OK) return s;
    const tgc_npy *v = &init->value;
    bool take = b->take_weights && init->raw != NULL && init->raw->data == v->data && init->raw->len == v->nbytes &&
                v->dtype != TGC_STRING && v->rank <= TGC_MAX_RANK;
    s = take ? take_const(l, v, init->raw, &l->g->nodes[id].data)
             : build_const(l, v, init->name, &l->g->nodes[id].data);
    if (s != TGC_OK || tgc_onnx_written_inline(v)) return s;
    /* Where a dump with a destination folder writes it (tgc import's layout). */
    const char *file = tgc_onnx_weight_file(&b->files, b->wdir_rel, init->name);
    tgc_const *c = l->g->nodes[id].data;
    if (file == NULL || (c->file = tgc_strdup(file)) == NULL) return tgc_loader_nomem(l);
    c->unsaved = true;
    return TGC_OK;
}

static tgc_status build_contents(tgc_loader *l, builder *b, const tgc_onnx_doc *doc);

/* Attribute `a` of node id, in the type the op defines: an int the model
 * gives for a float attribute is that number, as a YAML file's would be. */
static tgc_status build_attr(tgc_loader *l, builder *b, int32_t id, const tgc_onnx_attr *a) {
    tgc_node *n = &l->g->nodes[id];
    const tgc_attr_def *def = tgc_op_attr_def(n->op, a->name);
    bool as_floats = def != NULL && ((def->type == TGC_ATTR_FLOAT && a->type == TGC_ATTR_INT) ||
                                     (def->type == TGC_ATTR_FLOATS && a->type == TGC_ATTR_INTS));
    if (def == NULL || (def->type != a->type && !as_floats))
        return tgc_diag_error(l->diags, l->g->path, no_pos, "bad-model", "node '%s' (%s): attribute '%s' %s",
                              tgc_node_label(n), n->op_name, a->name,
                              def == NULL ? "is unknown" : "has the wrong type");
    tgc_attr *t = &n->attrs[n->n_attrs++];
    t->type = def->type;
    if ((t->name = tgc_strdup(a->name)) == NULL) return tgc_loader_nomem(l);
    t->n = a->n;
    size_t count = a->n ? a->n : 1;
    switch (a->type) {
    case TGC_ATTR_INT:
        if (as_floats) t->f = (double)a->i;
        else t->i = a->i;
        return TGC_OK;
    case TGC_ATTR_FLOAT: t->f = tgc_onnx_float_attr(a->f); return TGC_OK;
    case TGC_ATTR_STRING: return (t->s = tgc_strdup(a->s)) != NULL ? TGC_OK : tgc_loader_nomem(l);
    case TGC_ATTR_INTS:
        if (as_floats) {
            if ((t->floats = tgc_malloc(count * sizeof *t->floats)) == NULL) return tgc_loader_nomem(l);
            for (size_t i = 0; i < a->n; i++) t->floats[i] = (double)a->ints[i];
            return TGC_OK;
        }
        if ((t->ints = tgc_malloc(count * sizeof *t->ints)) == NULL) return tgc_loader_nomem(l);
        if (a->n) memcpy(t->ints, a->ints, a->n * sizeof *t->ints);
        return TGC_OK;
    case TGC_ATTR_FLOATS:
        if ((t->floats = tgc_malloc(count * sizeof *t->floats)) == NULL) return tgc_loader_nomem(l);
        for (size_t i = 0; i < a->n; i++) t->floats[i] = tgc_onnx_float_attr(a->floats[i]);
        return TGC_OK;
    case TGC_ATTR_STRINGS:
        if ((t->strings = tgc_calloc(count, sizeof *t->strings)) == NULL) return tgc_loader_nomem(l);
        for (size_t i = 0; i < a->n; i++)
            if ((t->strings[i] = tgc_strdup(a->strings[i])) == NULL) return tgc_loader_nomem(l);
        return TGC_OK;
    case TGC_ATTR_TENSOR: return build_const(l, a->tensor, a->name, &t->tensor);
    case TGC_ATTR_GRAPH: {
        tgc_loader *child;
        tgc_status s = tgc_loader_open_subgraph(l, id, t, no_pos, &child);
        if (s != TGC_OK || a->graph == NULL) return s;
        s = build_contents(child, b, a->graph);
        if (child->failure != TGC_OK) l->failure = child->failure;
        return l->failure != TGC_OK ? l->failure : s;
    }
    }
    return TGC_OK;
}

static tgc_status build_node(tgc_loader *l, builder *b, const tgc_onnx_node *d) {
    int32_t id;
    tgc_status s = add_node(l, d->name, d->source, TGC_NODE_OP, &id);
    if (s != TGC_OK) return s;
    tgc_node *n = &l->g->nodes[id];
    if ((n->op_name = tgc_strdup(d->op)) == NULL) return tgc_loader_nomem(l);
    if ((n->op = tgc_op_find(d->op)) == NULL) return bad(l, "unknown op '%s'", d->op);
    n->inputs = tgc_calloc(d->n_inputs ? (size_t)d->n_inputs : 1, sizeof *n->inputs);
    n->attrs = tgc_calloc(d->n_attrs ? (size_t)d->n_attrs : 1, sizeof *n->attrs);
    if (n->inputs == NULL || n->attrs == NULL) return tgc_loader_nomem(l);
    for (int i = 0; i < d->n_inputs; i++) {
        n->inputs[n->n_inputs] = (tgc_ref){-1, 0, no_pos};
        if (d->inputs[i][0] != '\0' &&
            tgc_loader_add_ref(l, PENDING_INPUT, id, n->n_inputs, d->inputs[i], no_pos) != TGC_OK)
            return TGC_ERR_NOMEM;
        n->n_inputs++;
    }
    for (int i = 0; i < d->n_attrs; i++) {
        tgc_status as = build_attr(l, b, id, &d->attrs[i]);
        if (as == TGC_ERR_NOMEM || l->failure != TGC_OK) return TGC_ERR_NOMEM;
        if (as != TGC_OK) s = as;
    }
    tgc_status rs = tgc_loader_check_required_attrs(l, id, no_pos);
    return s != TGC_OK ? s : rs;
}

static tgc_status build_outputs(tgc_loader *l, const tgc_onnx_doc *doc) {
    tgc_graph *g = l->g;
    size_t count = doc->n_outputs ? (size_t)doc->n_outputs : 1;
    if ((g->outputs = tgc_calloc(count, sizeof *g->outputs)) == NULL) return tgc_loader_nomem(l);
    for (int i = 0; i < doc->n_outputs; i++) {
        g->outputs[g->n_outputs++] = (tgc_ref){-1, 0, no_pos};
        if (tgc_loader_add_ref(l, PENDING_OUTPUT, -1, i, doc->outputs[i], no_pos) != TGC_OK) return TGC_ERR_NOMEM;
        const char *source = doc->output_sources != NULL ? doc->output_sources[i] : NULL;
        if (source == NULL) continue;
        if (g->output_sources == NULL && (g->output_sources = tgc_calloc(count + 1, sizeof *g->output_sources)) == NULL)
            return tgc_loader_nomem(l);
        if ((g->output_sources[i] = tgc_strdup(source)) == NULL) return tgc_loader_nomem(l);
    }
    return TGC_OK;
}

/* Inputs, initializers and nodes (node ids in that order, as the loader's),
 * then the outputs of doc, into l's graph. */
static tgc_status build_contents(tgc_loader *l, builder *b, const tgc_onnx_doc *doc) {
    tgc_status s = TGC_OK;
    if (doc->name != NULL && (l->g->name = tgc_strdup(doc->name)) == NULL) return tgc_loader_nomem(l);
    for (int i = 0; i < doc->n_inputs && s != TGC_ERR_NOMEM; i++) {
        tgc_status is = build_input(l, &doc->inputs[i]);
        if (is != TGC_OK) s = is;
    }
    l->g->n_inputs_nodes = l->g->n_nodes;
    for (int i = 0; i < doc->n_inits && s != TGC_ERR_NOMEM; i++) {
        tgc_status is = build_init(l, b, &doc->inits[i]);
        if (is != TGC_OK) s = is;
    }
    for (int i = 0; i < doc->n_nodes && s != TGC_ERR_NOMEM; i++) {
        tgc_status ns = build_node(l, b, &doc->nodes[i]);
        if (ns != TGC_OK) s = ns;
    }
    if (s == TGC_ERR_NOMEM || l->failure != TGC_OK) return TGC_ERR_NOMEM;
    tgc_status os = build_outputs(l, doc);
    return os != TGC_OK ? os : s;
}

tgc_status tgc_onnx_build(const tgc_onnx_doc *doc, const tgc_load_limits *limits, bool take_weights,
                          tgc_diags *diags, tgc_graph **out) {
    *out = NULL;
    builder b = {.files = {.arena = &b.arena}, .take_weights = take_weights};
    /* model.onnx -> model_weights/, as tgc import writes model.yaml's. */
    const char *slash = strrchr(doc->source, '/');
    const char *base = slash ? slash + 1 : doc->source;
    size_t stem = strlen(base);
    if (stem > 5 && strcmp(base + stem - 5, ".onnx") == 0) stem -= 5;
    b.wdir_rel = tgc_onnx_printf(&b.arena, "%.*s_weights", (int)stem, base);
    const char *dir = slash ? tgc_onnx_printf(&b.arena, "%.*s", slash == doc->source ? 1 : (int)(slash - doc->source),
                                              doc->source)
                            : ".";
    tgc_loader l = {.diags = diags, .owner = -1};
    l.g = b.wdir_rel != NULL && dir != NULL ? tgc_graph_create(doc->source, dir) : NULL;
    tgc_status s = TGC_ERR_NOMEM;
    if (l.g != NULL) {
        l.g->limits = *limits;
        s = build_contents(&l, &b, doc);
        s = tgc_loader_finish(&l, s, out);
    }
    if (s == TGC_ERR_NOMEM) tgc_diag_error(diags, doc->source, no_pos, "out-of-memory", "out of memory");
    tgc_onnx_namer_release(&b.files);
    tgc_onnx_arena_release(&b.arena);
    return s;
}
