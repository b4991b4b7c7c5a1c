/* The tgc/1 loader: walks a libyaml document into the graph IR, then hands
 * it to validation and inference. Every problem is reported with its
 * position; parsing goes on after an error so that independent errors in
 * one file are all reported. */
#include "graph/loader.h"

#include "devices/backend.h"

#include "graph/op_registry.h"
#include "graph/passes.h"
#include "graph/subgraph.h"
#include "support/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FOR_PAIRS(l, map, k, v)                                                                     \
    for (yaml_node_pair_t *pair_ = (map)->data.mapping.pairs.start; pair_ < (map)->data.mapping.pairs.top; \
         pair_++)                                                                                   \
        for (yaml_node_t *k = yaml_document_get_node(&(l)->doc, pair_->key),                        \
                         *v = yaml_document_get_node(&(l)->doc, pair_->value);                      \
             k != NULL; k = NULL, (void)v)

#define FOR_ITEMS(l, seq, item)                                                                     \
    for (yaml_node_item_t *it_ = (seq)->data.sequence.items.start; it_ < (seq)->data.sequence.items.top; it_++) \
        for (yaml_node_t *item = yaml_document_get_node(&(l)->doc, *it_); item != NULL; item = NULL)

static size_t seq_len(const yaml_node_t *n) {
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static bool expect_kind(tgc_loader *l, const yaml_node_t *n, yaml_node_type_t type, const char *what) {
    if (n->type == type) return true;
    const char *want = type == YAML_SEQUENCE_NODE ? "a list" : type == YAML_MAPPING_NODE ? "a mapping" : "a scalar";
    tgc_loader_error(l, n, "wrong-kind", "%s must be %s", what, want);
    return false;
}

/* A name as the format allows: [A-Za-z0-9_.:/-]+, no leading '^'. */
static bool valid_name(const char *s) {
    if (*s == '\0') return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || strchr("_.:/-", *s) != NULL)) return false;
    return true;
}

tgc_status tgc_loader_add_ref(tgc_loader *l, pending_kind kind, int32_t owner, int index, const char *text,
                              tgc_srcpos pos) {
    if (l->n_refs == l->cap_refs) {
        size_t cap = l->cap_refs ? l->cap_refs * 2 : 32;
        pending_ref *refs = tgc_realloc(l->refs, cap * sizeof *refs);
        if (refs == NULL) return tgc_loader_nomem(l);
        l->refs = refs;
        l->cap_refs = cap;
    }
    char *copy = tgc_strdup(text);
    if (copy == NULL) return tgc_loader_nomem(l);
    l->refs[l->n_refs++] = (pending_ref){kind, owner, index, copy, pos};
    return TGC_OK;
}

/* Creates a node for the `name:` scalar `n` and stores its id in *id. A
 * name with characters the format does not allow is reported, but the node
 * is still made, so that references to it resolve and the one mistake gives
 * one message; a duplicate or non-scalar name is reported and leaves *id at
 * -1. Returns TGC_OK, TGC_ERR_INVALID or TGC_ERR_NOMEM. */
static tgc_status declare_node(tgc_loader *l, const yaml_node_t *n, tgc_node_kind kind, int32_t *id) {
    *id = -1;
    const char *name = tgc_loader_scalar(l, n, "name");
    if (name == NULL) return TGC_ERR_INVALID;
    int32_t prev = tgc_graph_find(l->g, name);
    if (prev >= 0)
        return tgc_loader_error(l, n, "duplicate-name", "name '%s' is already defined at line %d", name,
                                l->g->nodes[prev].pos.line);
    tgc_status s = TGC_OK;
    if (!valid_name(name))
        s = tgc_loader_error(l, n, "bad-name", "'%s' is not a valid name (letters, digits and _.:/- only)", name);
    if (s == TGC_ERR_NOMEM || tgc_graph_add_node(l->g, name, kind, id) != TGC_OK) return tgc_loader_nomem(l);
    return s;
}

/* Writes "KIND 'NAME'" (or "a KIND" when the entry has no usable name)
 * into buf, to say in messages which entry is meant. */
static const char *describe(char *buf, size_t size, const char *kind, const yaml_node_t *name) {
    if (name != NULL && name->type == YAML_SCALAR_NODE)
        snprintf(buf, size, "%s '%.200s'", kind, (const char *)name->data.scalar.value);
    else
        snprintf(buf, size, "a %s", kind);
    return buf;
}

static const yaml_node_t *find_key(tgc_loader *l, const yaml_node_t *map, const char *key) {
    FOR_PAIRS(l, map, k, v) {
        if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0) return v;
    }
    return NULL;
}

/* Rejects a key given twice in one mapping (YAML allows it; we do not). */
static bool check_duplicate_keys(tgc_loader *l, const yaml_node_t *map) {
    bool ok = true;
    for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
        yaml_node_t *ka = yaml_document_get_node(&l->doc, a->key);
        if (ka->type != YAML_SCALAR_NODE) continue;
        for (yaml_node_pair_t *b = map->data.mapping.pairs.start; b < a; b++) {
            yaml_node_t *kb = yaml_document_get_node(&l->doc, b->key);
            if (kb->type == YAML_SCALAR_NODE &&
                strcmp((const char *)ka->data.scalar.value, (const char *)kb->data.scalar.value) == 0) {
                tgc_loader_error(l, ka, "duplicate-key", "key '%s' is given twice (first at line %d)",
                                 (const char *)ka->data.scalar.value, tgc_loader_pos(kb).line);
                ok = false;
                break;
            }
        }
    }
    return ok;
}

/* Checks every key of `map` against `allowed`; false if one is unknown. */
static bool check_keys(tgc_loader *l, const yaml_node_t *map, const char *where, const char *const *allowed) {
    bool ok = true;
    FOR_PAIRS(l, map, k, v) {
        if (!tgc_loader_check_key(l, k, where, allowed)) ok = false;
    }
    return ok;
}

static tgc_status load_contents(tgc_loader *l, const yaml_node_t *root);
static tgc_status load_subgraph(tgc_loader *l, const yaml_node_t *map, int32_t id, tgc_attr *a);
static tgc_status load_subgraph_input(tgc_loader *l, const yaml_node_t *map, tgc_node *n, const yaml_node_t *dtype,
                                      const yaml_node_t *shape, const char *where);

/* `source_name:` of an input or node: the model's own name for it, any
 * non-empty string (an ONNX name such as "onnx::Flatten_0"). */
static tgc_status load_source_name(tgc_loader *l, const yaml_node_t *v, char **out) {
    const char *text = tgc_loader_scalar(l, v, "source_name");
    if (text == NULL) return TGC_ERR_INVALID;
    if (text[0] == '\0') return tgc_loader_error(l, v, "bad-name", "a source_name may not be empty");
    tgc_free(*out);
    if ((*out = tgc_strdup(text)) == NULL) return tgc_loader_nomem(l);
    return TGC_OK;
}

/* ---- inputs -------------------------------------------------------------- */

/* Each list entry below is loaded in the same order: its keys are checked
 * (unknown and duplicate keys reported), its name is declared as soon as
 * there is one, so that a mistake elsewhere in the entry does not make
 * every reference to it dangle, and a missing key is reported only when no
 * unknown key was (a misspelt key would otherwise give two messages). */

static tgc_status load_input(tgc_loader *l, const yaml_node_t *map) {
    static const char *const keys[] = {"name", "source_name", "dtype", "shape", NULL};
    if (!expect_kind(l, map, YAML_MAPPING_NODE, "a graph input")) return TGC_ERR_INVALID;
    bool dup = !check_duplicate_keys(l, map);
    const yaml_node_t *name = find_key(l, map, "name"), *dtype = find_key(l, map, "dtype"),
                      *shape = find_key(l, map, "shape");
    char where[300];
    bool unknown = !check_keys(l, map, describe(where, sizeof where, "graph input", name), keys);
    tgc_status s = dup || unknown ? TGC_ERR_INVALID : TGC_OK;
    if (name == NULL)
        return unknown ? s : tgc_loader_error(l, map, "missing-key", "a graph input needs a 'name'");
    int32_t id;
    tgc_status ds = declare_node(l, name, TGC_NODE_INPUT, &id);
    if (ds == TGC_ERR_NOMEM) return ds;
    if (id < 0) return TGC_ERR_INVALID;
    if (ds != TGC_OK) s = ds;
    tgc_node *n = &l->g->nodes[id];
    n->pos = tgc_loader_pos(map);
    n->outputs = tgc_calloc(1, sizeof *n->outputs);
    if (n->outputs == NULL) return tgc_loader_nomem(l);
    n->n_outputs = 1;
    n->outputs[0].value_len = -1;
    n->outputs[0].dtype = TGC_DTYPE_INVALID;
    if (dup) return s;
    const yaml_node_t *source = find_key(l, map, "source_name");
    if (source != NULL) {
        tgc_status ss = load_source_name(l, source, &n->source_name);
        if (ss == TGC_ERR_NOMEM) return ss;
        if (ss != TGC_OK) s = ss;
    }
    if (l->parent != NULL) return s == TGC_OK ? load_subgraph_input(l, map, n, dtype, shape, where) : s;
    /* A sequence's or an optional's shape (its elements') may be left out: unknown. */
    bool shape_optional = false;
    if (dtype != NULL && shape == NULL && dtype->type == YAML_SCALAR_NODE) {
        tgc_dtype dt;
        uint8_t kind;
        shape_optional = tgc_type_parse((const char *)dtype->data.scalar.value, &dt, &kind) && kind != 0;
    }
    if (dtype == NULL || (shape == NULL && !shape_optional))
        return unknown ? s
                       : tgc_loader_error(l, map, "missing-key", "%s needs %s", where,
                                          dtype == NULL && shape == NULL ? "a 'dtype' and a 'shape'"
                                          : dtype == NULL                ? "a 'dtype'"
                                                                         : "a 'shape'");
    if (tgc_load_type(l, dtype, where, &n->outputs[0].dtype, &n->outputs[0].kind) != TGC_OK) s = TGC_ERR_INVALID;
    if (shape == NULL) l->g->nodes[id].outputs[0].shape.rank = TGC_RANK_UNKNOWN;
    else if (tgc_load_shape(l, shape, where, true, &l->g->nodes[id].outputs[0].shape) != TGC_OK) s = TGC_ERR_INVALID;
    return l->failure != TGC_OK ? l->failure : s;
}

/* A subgraph's input takes what the node gives it (a Loop's carried value,
 * a Scan's slice), so its dtype and shape may be left out; when given,
 * they are kept as the input's declaration (n->declared) and checked
 * against what the node gives when the subgraph is inferred. */
static tgc_status load_subgraph_input(tgc_loader *l, const yaml_node_t *map, tgc_node *n, const yaml_node_t *dtype,
                                      const yaml_node_t *shape, const char *where) {
    n->outputs[0].shape.rank = TGC_RANK_UNKNOWN;
    if (dtype == NULL && shape == NULL) return TGC_OK;
    n->declared = tgc_calloc(1, sizeof *n->declared);
    n->declared_has_shape = tgc_calloc(1, sizeof *n->declared_has_shape);
    if (n->declared == NULL || n->declared_has_shape == NULL) return tgc_loader_nomem(l);
    n->n_declared = 1;
    n->declared_pos = tgc_loader_pos(map);
    n->declared[0] = (tgc_tensor_info){.dtype = TGC_DTYPE_INVALID, .value_len = -1};
    n->declared[0].shape.rank = TGC_RANK_UNKNOWN;
    tgc_status s = TGC_OK;
    if (dtype != NULL && tgc_load_type(l, dtype, where, &n->declared[0].dtype, &n->declared[0].kind) != TGC_OK)
        s = TGC_ERR_INVALID;
    if (shape != NULL) {
        if (tgc_load_shape(l, shape, where, true, &n->declared[0].shape) != TGC_OK) s = TGC_ERR_INVALID;
        n->declared_has_shape[0] = true;
    }
    return l->failure != TGC_OK ? l->failure : s;
}

/* ---- initializers -------------------------------------------------------- */

static tgc_status load_initializer(tgc_loader *l, const yaml_node_t *map) {
    static const char *const keys[] = {"name", "dtype", "shape", "file", "values", NULL};
    if (!expect_kind(l, map, YAML_MAPPING_NODE, "an initializer")) return TGC_ERR_INVALID;
    bool dup = !check_duplicate_keys(l, map);
    const yaml_node_t *name = find_key(l, map, "name");
    if (name == NULL) /* the keys are checked here; tgc_load_tensor checks them otherwise */
        return !check_keys(l, map, "an initializer", keys)
                   ? TGC_ERR_INVALID
                   : tgc_loader_error(l, map, "missing-key", "an initializer needs a 'name'");
    int32_t id;
    tgc_status s = declare_node(l, name, TGC_NODE_CONST, &id);
    if (s == TGC_ERR_NOMEM) return s;
    if (id < 0) return TGC_ERR_INVALID;
    l->g->nodes[id].pos = tgc_loader_pos(map);
    if (dup) return TGC_ERR_INVALID;
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", l->g->nodes[id].name);
    tgc_const *c;
    tgc_status ts = tgc_load_tensor(l, map, what, true, &c);
    if (ts != TGC_OK) return ts;
    l->g->nodes[id].data = c;
    return s;
}

/* ---- attributes ---------------------------------------------------------- */

static tgc_status attr_type_error(tgc_loader *l, const yaml_node_t *v, const tgc_node *n, const char *name,
                                  tgc_attr_type type, const char *got) {
    const char *want = type == TGC_ATTR_INT      ? "an int"
                       : type == TGC_ATTR_FLOAT  ? "a number"
                       : type == TGC_ATTR_STRING ? "a string"
                       : type == TGC_ATTR_INTS   ? "a list of ints"
                       : type == TGC_ATTR_FLOATS ? "a list of numbers"
                       : type == TGC_ATTR_STRINGS ? "a list of strings"
                       : type == TGC_ATTR_GRAPH   ? "a graph (a mapping {inputs, outputs, initializers, nodes})"
                                                 : "a tensor (a mapping {dtype, shape, values})";
    return tgc_loader_error(l, v, "attribute-type", "node '%s' (%s): attribute '%s' must be %s, got %s", n->name,
                            n->op_name, name, want, got);
}

/* What a value is, for messages: 'TEXT' for a scalar, else its kind. */
static const char *value_word(const yaml_node_t *v, char *buf, size_t size) {
    if (v->type == YAML_SCALAR_NODE) snprintf(buf, size, "'%.200s'", (const char *)v->data.scalar.value);
    else snprintf(buf, size, "%s", v->type == YAML_SEQUENCE_NODE ? "a list" : "a mapping");
    return buf;
}

static bool is_quoted(const yaml_node_t *v) {
    return v->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
           v->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

static tgc_status parse_attr_scalar(tgc_loader *l, const yaml_node_t *v, const tgc_node *n, tgc_attr *a) {
    char got[300];
    value_word(v, got, sizeof got);
    if (v->type != YAML_SCALAR_NODE) return attr_type_error(l, v, n, a->name, a->type, got);
    const char *s = (const char *)v->data.scalar.value;
    switch (a->type) {
    case TGC_ATTR_INT:
        if (is_quoted(v) || !tgc_parse_int(s, &a->i)) return attr_type_error(l, v, n, a->name, a->type, got);
        return TGC_OK;
    case TGC_ATTR_FLOAT:
        if (is_quoted(v) || !tgc_parse_number(s, &a->f)) return attr_type_error(l, v, n, a->name, a->type, got);
        return TGC_OK;
    case TGC_ATTR_STRING:
        a->s = tgc_strdup(s);
        return a->s ? TGC_OK : tgc_loader_nomem(l);
    default: return attr_type_error(l, v, n, a->name, a->type, got);
    }
}

static tgc_status parse_attr_list(tgc_loader *l, const yaml_node_t *v, const tgc_node *n, tgc_attr *a) {
    char got[300];
    if (v->type != YAML_SEQUENCE_NODE) return attr_type_error(l, v, n, a->name, a->type, value_word(v, got, sizeof got));
    a->n = seq_len(v);
    size_t elem = a->type == TGC_ATTR_INTS ? sizeof(int64_t) : a->type == TGC_ATTR_FLOATS ? sizeof(double) : sizeof(char *);
    void *arr = tgc_calloc(a->n ? a->n : 1, elem);
    if (arr == NULL) return tgc_loader_nomem(l);
    if (a->type == TGC_ATTR_INTS) a->ints = arr;
    else if (a->type == TGC_ATTR_FLOATS) a->floats = arr;
    else a->strings = arr;
    size_t i = 0;
    FOR_ITEMS(l, v, item) {
        const char *s = item->type == YAML_SCALAR_NODE ? (const char *)item->data.scalar.value : NULL;
        /* Numbers are plain scalars: a quoted "3" is a string, as in a scalar attribute. */
        bool number_ok = s != NULL && (a->type == TGC_ATTR_STRINGS || !is_quoted(item));
        snprintf(got, sizeof got, "%s at position %zu", value_word(item, (char[256]){0}, 256), i);
        if (!number_ok) return attr_type_error(l, item, n, a->name, a->type, got);
        if (a->type == TGC_ATTR_INTS && !tgc_parse_int(s, &a->ints[i]))
            return attr_type_error(l, item, n, a->name, a->type, got);
        if (a->type == TGC_ATTR_FLOATS && !tgc_parse_number(s, &a->floats[i]))
            return attr_type_error(l, item, n, a->name, a->type, got);
        if (a->type == TGC_ATTR_STRINGS && (a->strings[i] = tgc_strdup(s)) == NULL) return tgc_loader_nomem(l);
        i++;
    }
    return TGC_OK;
}

/* Reports an unknown attribute of node n, listing the op's attributes. */
static tgc_status unknown_attribute(tgc_loader *l, const yaml_node_t *k, const tgc_node *n, const char *key) {
    const char *names[64];
    size_t count = 0;
    char list[512] = "";
    const tgc_attr_def *defs = n->op != NULL ? n->op->attrs : NULL;
    for (const tgc_attr_def *d = defs; d != NULL && d->name != NULL && count < 64; d++) {
        names[count++] = d->name;
        strncat(list, count > 1 ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, d->name, sizeof list - strlen(list) - 1);
    }
    const char *near = tgc_loader_closest(key, names, count, 2);
    if (count == 0)
        return tgc_loader_error(l, k, "unknown-attribute", "node '%s' (%s): unknown attribute '%s' (%s takes none)",
                                n->name, n->op_name, key, n->op_name);
    return tgc_loader_error(l, k, "unknown-attribute", "node '%s' (%s): unknown attribute '%s' (%s takes: %s)%s%s%s",
                            n->name, n->op_name, key, n->op_name, list, near ? "; did you mean '" : "",
                            near ? near : "", near ? "'?" : "");
}

/* Loads `attrs:` of node id. *complete is set false when some attribute may
 * be missing for a reason already reported (attrs not a mapping, a
 * duplicate or unknown key), so that a required one is not reported too. */
static tgc_status load_attrs(tgc_loader *l, const yaml_node_t *map, int32_t id, bool *complete) {
    *complete = false;
    if (!expect_kind(l, map, YAML_MAPPING_NODE, "attrs") || !check_duplicate_keys(l, map)) return TGC_ERR_INVALID;
    size_t count = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    tgc_attr *attrs = tgc_calloc(count ? count : 1, sizeof *attrs);
    if (attrs == NULL) return tgc_loader_nomem(l);
    l->g->nodes[id].attrs = attrs;
    tgc_node *n = &l->g->nodes[id];
    tgc_status s = TGC_OK;
    *complete = true;
    FOR_PAIRS(l, map, k, v) {
        const char *key = tgc_loader_scalar(l, k, "an attribute name");
        if (key == NULL) {
            s = TGC_ERR_INVALID;
            *complete = false;
            continue;
        }
        if (n->op == NULL) continue; /* unknown op: reported already; nothing to check against */
        const tgc_attr_def *def = tgc_op_attr_def(n->op, key);
        if (def == NULL) {
            s = unknown_attribute(l, k, n, key);
            *complete = false;
            if (s == TGC_ERR_NOMEM) return s;
            continue;
        }
        tgc_attr *a = &attrs[n->n_attrs++];
        a->type = def->type;
        a->pos = tgc_loader_pos(k);
        if ((a->name = tgc_strdup(key)) == NULL) return tgc_loader_nomem(l);
        tgc_status as;
        if (def->type == TGC_ATTR_TENSOR) {
            char what[300];
            snprintf(what, sizeof what, "attribute '%s' of node '%s'", key, n->name);
            as = v->type == YAML_MAPPING_NODE ? tgc_load_tensor(l, v, what, false, &a->tensor)
                                              : attr_type_error(l, v, n, key, def->type,
                                                                value_word(v, what, sizeof what));
        } else if (def->type == TGC_ATTR_GRAPH) {
            as = v->type == YAML_MAPPING_NODE
                     ? load_subgraph(l, v, id, a)
                     : attr_type_error(l, v, n, key, def->type, value_word(v, (char[300]){0}, 300));
        } else if (def->type == TGC_ATTR_INTS || def->type == TGC_ATTR_FLOATS || def->type == TGC_ATTR_STRINGS) {
            as = parse_attr_list(l, v, n, a);
        } else {
            as = parse_attr_scalar(l, v, n, a);
        }
        if (as == TGC_ERR_NOMEM) return as;
        if (as != TGC_OK) s = as;
    }
    return s;
}

tgc_status tgc_loader_open_subgraph(tgc_loader *l, int32_t id, tgc_attr *a, tgc_srcpos pos, tgc_loader **child) {
    *child = NULL;
    const tgc_node *n = &l->g->nodes[id];
    if (l->g->depth + 1 > TGC_MAX_SUBGRAPH_DEPTH)
        return tgc_diag_error(l->diags, l->g->path, pos, "over-limit",
                              "node '%s' (%s): attribute '%s' nests subgraphs deeper than %d levels", tgc_node_label(n),
                              n->op_name, a->name, TGC_MAX_SUBGRAPH_DEPTH);
    if (l->n_children == l->cap_children) {
        size_t cap = l->cap_children ? l->cap_children * 2 : 4;
        tgc_loader **grown = tgc_realloc(l->children, cap * sizeof *grown);
        if (grown == NULL) return tgc_loader_nomem(l);
        l->children = grown;
        l->cap_children = cap;
    }
    tgc_loader *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return tgc_loader_nomem(l);
    l->children[l->n_children++] = c;
    *c = (tgc_loader){.diags = l->diags, .doc = l->doc, .weights_dir = l->weights_dir, .parent = l, .owner = id};
    if ((c->g = tgc_graph_create(l->g->path, l->g->dir)) == NULL) return tgc_loader_nomem(l);
    c->g->parent = l->g;
    c->g->depth = l->g->depth + 1;
    c->g->limits = l->g->limits;
    c->g->format_pos = pos;
    a->graph = c->g;
    *child = c;
    return TGC_OK;
}

/* Loads the graph-valued attribute `a` of node `id` from mapping `map`
 * into a new subgraph whose references resolve later (resolve_scope). */
static tgc_status load_subgraph(tgc_loader *l, const yaml_node_t *map, int32_t id, tgc_attr *a) {
    tgc_loader *c;
    tgc_status os = tgc_loader_open_subgraph(l, id, a, tgc_loader_pos(map), &c);
    if (os != TGC_OK) return os;
    static const char *const keys[] = {"name", "inputs", "outputs", "initializers", "nodes", NULL};
    char where[400];
    snprintf(where, sizeof where, "subgraph '%s' of node '%s'", a->name, l->g->nodes[id].name);
    tgc_status s = TGC_OK;
    if (!check_duplicate_keys(c, map)) return TGC_ERR_INVALID;
    FOR_PAIRS(c, map, k, v) {
        if (tgc_loader_check_key(c, k, where, keys)) continue;
        s = TGC_ERR_INVALID;
        if (v->type == YAML_SEQUENCE_NODE) c->names_incomplete = true;
    }
    tgc_status cs = load_contents(c, map);
    if (c->failure != TGC_OK) l->failure = c->failure;
    return l->failure != TGC_OK ? l->failure : cs != TGC_OK ? cs : s;
}

tgc_status tgc_loader_check_required_attrs(tgc_loader *l, int32_t id, tgc_srcpos pos) {
    const tgc_node *n = &l->g->nodes[id];
    tgc_status s = TGC_OK;
    for (const tgc_attr_def *d = n->op != NULL ? n->op->attrs : NULL; d != NULL && d->name != NULL; d++)
        if (d->required && tgc_node_attr(n, d->name) == NULL) {
            s = tgc_diag_error(l->diags, l->g->path, pos, "missing-attribute", "node '%s' (%s) needs attribute '%s'",
                               tgc_node_label(n), n->op_name, d->name);
            if (s == TGC_ERR_NOMEM) return tgc_loader_nomem(l);
        }
    return s;
}

/* ---- nodes --------------------------------------------------------------- */

static tgc_status load_refs(tgc_loader *l, const yaml_node_t *seq, int32_t id) {
    tgc_node *n = &l->g->nodes[id];
    char what[300];
    snprintf(what, sizeof what, "inputs of node '%s'", n->name);
    if (!expect_kind(l, seq, YAML_SEQUENCE_NODE, what)) return TGC_ERR_INVALID;
    size_t count = seq_len(seq);
    n->inputs = tgc_calloc(count ? count : 1, sizeof *n->inputs);
    n->controls = tgc_calloc(count ? count : 1, sizeof *n->controls);
    if (n->inputs == NULL || n->controls == NULL) return tgc_loader_nomem(l);
    tgc_status s = TGC_OK;
    FOR_ITEMS(l, seq, item) {
        const char *text = tgc_loader_scalar(l, item, "an input reference");
        if (text == NULL) {
            s = TGC_ERR_INVALID;
            continue;
        }
        tgc_srcpos pos = tgc_loader_pos(item);
        if (text[0] == '^') {
            n->controls[n->n_controls] = (tgc_ref){-1, 0, pos};
            if (tgc_loader_add_ref(l, PENDING_CONTROL, id, n->n_controls++, text + 1, pos) != TGC_OK)
                return TGC_ERR_NOMEM;
        } else {
            if (n->n_controls > 0)
                s = tgc_loader_error(l, item, "control-order",
                                     "node '%s': data input '%s' comes after a control input; list '^' inputs last",
                                     n->name, text);
            n->inputs[n->n_inputs] = (tgc_ref){-1, 0, pos};
            if (text[0] != '\0' && tgc_loader_add_ref(l, PENDING_INPUT, id, n->n_inputs, text, pos) != TGC_OK)
                return TGC_ERR_NOMEM;
            n->n_inputs++;
        }
    }
    return s;
}

static tgc_status load_colocation(tgc_loader *l, const yaml_node_t *seq, int32_t id) {
    tgc_node *n = &l->g->nodes[id];
    char what[300];
    snprintf(what, sizeof what, "colocate_with of node '%s'", n->name);
    if (!expect_kind(l, seq, YAML_SEQUENCE_NODE, what)) return TGC_ERR_INVALID;
    size_t count = seq_len(seq);
    n->colocate = tgc_calloc(count ? count : 1, sizeof *n->colocate);
    if (n->colocate == NULL) return tgc_loader_nomem(l);
    tgc_status s = TGC_OK;
    FOR_ITEMS(l, seq, item) {
        const char *text = tgc_loader_scalar(l, item, "a colocate_with entry");
        if (text == NULL) {
            s = TGC_ERR_INVALID;
            continue;
        }
        tgc_srcpos pos = tgc_loader_pos(item);
        n->colocate[n->n_colocate] = (tgc_ref){-1, 0, pos};
        if (tgc_loader_add_ref(l, PENDING_COLOCATE, id, n->n_colocate++, text, pos) != TGC_OK) return TGC_ERR_NOMEM;
    }
    return s;
}

static tgc_status load_device(tgc_loader *l, const yaml_node_t *v, int32_t id) {
    const char *spec = tgc_loader_scalar(l, v, "device");
    if (spec == NULL) return TGC_ERR_INVALID;
    tgc_node *n = &l->g->nodes[id];
    n->device_pos = tgc_loader_pos(v);
    if (!tgc_device_spec_valid(spec)) {
        char forms[128];
        return tgc_loader_error(l, v, "bad-device-spec",
                                "node '%s': device '%s' is not a device spec (%s, each may start with /task:N/)",
                                n->name, spec, tgc_device_name_forms(forms, sizeof forms));
    }
    n->device = tgc_strdup(spec);
    return n->device ? TGC_OK : tgc_loader_nomem(l);
}

static tgc_status load_declared_outputs(tgc_loader *l, const yaml_node_t *seq, int32_t id) {
    static const char *const keys[] = {"dtype", "shape", NULL};
    tgc_node *n = &l->g->nodes[id];
    char where[300];
    snprintf(where, sizeof where, "out of node '%s'", n->name);
    if (!expect_kind(l, seq, YAML_SEQUENCE_NODE, where)) return TGC_ERR_INVALID;
    size_t count = seq_len(seq);
    n->declared_pos = tgc_loader_pos(seq);
    n->declared = tgc_calloc(count ? count : 1, sizeof *n->declared);
    n->declared_has_shape = tgc_calloc(count ? count : 1, sizeof *n->declared_has_shape);
    if (n->declared == NULL || n->declared_has_shape == NULL) return tgc_loader_nomem(l);
    tgc_status s = TGC_OK;
    FOR_ITEMS(l, seq, item) {
        int i = n->n_declared++;
        tgc_tensor_info *info = &n->declared[i];
        snprintf(where, sizeof where, "out entry %d of node '%s'", i, n->name);
        info->value_len = -1;
        info->dtype = TGC_DTYPE_INVALID;
        info->shape.rank = TGC_RANK_UNKNOWN;
        if (!expect_kind(l, item, YAML_MAPPING_NODE, where) || !check_duplicate_keys(l, item)) {
            s = TGC_ERR_INVALID;
            continue;
        }
        bool unknown = !check_keys(l, item, where, keys);
        if (unknown) s = TGC_ERR_INVALID;
        const yaml_node_t *dtype = find_key(l, item, "dtype"), *shape = find_key(l, item, "shape");
        if (dtype == NULL && !unknown) s = tgc_loader_error(l, item, "missing-key", "%s needs a 'dtype'", where);
        if (dtype != NULL && tgc_load_type(l, dtype, where, &info->dtype, &info->kind) != TGC_OK) s = TGC_ERR_INVALID;
        if (shape != NULL) {
            if (tgc_load_shape(l, shape, where, true, &info->shape) != TGC_OK) s = TGC_ERR_INVALID;
            n->declared_has_shape[i] = true;
        }
        if (l->failure != TGC_OK) return l->failure;
    }
    return s;
}

static tgc_status load_node(tgc_loader *l, const yaml_node_t *map) {
    static const char *const keys[] = {"name",   "source_name",   "op",  "inputs", "attrs",
                                       "device", "colocate_with", "out", NULL};
    if (!expect_kind(l, map, YAML_MAPPING_NODE, "a node")) return TGC_ERR_INVALID;
    bool dup = !check_duplicate_keys(l, map);
    const yaml_node_t *name = find_key(l, map, "name"), *op = find_key(l, map, "op");
    char where[300];
    bool unknown = !check_keys(l, map, describe(where, sizeof where, "node", name), keys);
    tgc_status s = dup || unknown ? TGC_ERR_INVALID : TGC_OK;
    if (name == NULL) return unknown ? s : tgc_loader_error(l, map, "missing-key", "a node needs a 'name'");
    int32_t id;
    tgc_status ds = declare_node(l, name, TGC_NODE_OP, &id);
    if (ds == TGC_ERR_NOMEM) return ds;
    if (id < 0) return TGC_ERR_INVALID;
    if (ds != TGC_OK) s = ds;
    tgc_node *n = &l->g->nodes[id];
    n->pos = tgc_loader_pos(map);
    if (dup) return s; /* which of the repeated keys is meant is unclear: load no more */
    if (op == NULL) {
        if (!unknown) s = tgc_loader_error(l, map, "missing-key", "%s needs an 'op'", where);
    } else {
        n->op_pos = tgc_loader_pos(op);
        const char *op_name = tgc_loader_scalar(l, op, "op");
        if (op_name == NULL) return TGC_ERR_INVALID;
        if ((n->op_name = tgc_strdup(op_name)) == NULL) return tgc_loader_nomem(l);
        /* tgc's own ops (_Send, _Recv) load: partition dumps contain them. */
        n->op = tgc_op_find(op_name);
        if (n->op == NULL && op_name[0] == '_') {
            s = tgc_loader_error(l, op, "unknown-op",
                                 "node '%s': unknown op '%s' (names starting with '_' are tgc's internal ops: "
                                 "_Send, _Recv)", n->name, op_name);
        } else if (n->op == NULL) {
            size_t count;
            const tgc_op_def *const *ops = tgc_op_all(&count);
            const char *names[256];
            size_t k = 0;
            for (size_t i = 0; i < count && k < 256; i++)
                if (ops[i]->name[0] != '_') names[k++] = ops[i]->name;
            /* Case only: an op name one letter from a known one is as often
             * another op (Selu, Relu) as a typo. */
            const char *near = tgc_loader_closest(op_name, names, k, 0);
            s = tgc_loader_error(l, op, "unknown-op", "node '%s': unknown op '%s'%s%s%s", n->name, op_name,
                                 near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        }
        if (s == TGC_ERR_NOMEM) return s;
    }
    bool attrs_complete = true;
    FOR_PAIRS(l, map, k, v) {
        if (k->type != YAML_SCALAR_NODE) continue;
        const char *key = (const char *)k->data.scalar.value;
        tgc_status ks = TGC_OK;
        if (strcmp(key, "inputs") == 0) ks = load_refs(l, v, id);
        else if (strcmp(key, "attrs") == 0) ks = load_attrs(l, v, id, &attrs_complete);
        else if (strcmp(key, "device") == 0) ks = load_device(l, v, id);
        else if (strcmp(key, "colocate_with") == 0) ks = load_colocation(l, v, id);
        else if (strcmp(key, "out") == 0) ks = load_declared_outputs(l, v, id);
        else if (strcmp(key, "source_name") == 0) ks = load_source_name(l, v, &l->g->nodes[id].source_name);
        if (ks == TGC_ERR_NOMEM || l->failure != TGC_OK) return TGC_ERR_NOMEM;
        if (ks != TGC_OK) s = ks;
    }
    if (l->g->nodes[id].op != NULL && attrs_complete) {
        tgc_status rs = tgc_loader_check_required_attrs(l, id, tgc_loader_pos(map));
        if (rs != TGC_OK) s = rs;
    }
    return s;
}

/* ---- graph outputs and the root ------------------------------------------ */

static tgc_status load_outputs(tgc_loader *l, const yaml_node_t *seq) {
    if (!expect_kind(l, seq, YAML_SEQUENCE_NODE, "outputs")) return TGC_ERR_INVALID;
    size_t count = seq_len(seq);
    l->g->outputs = tgc_calloc(count ? count : 1, sizeof *l->g->outputs);
    if (l->g->outputs == NULL) return tgc_loader_nomem(l);
    tgc_status s = TGC_OK;
    FOR_ITEMS(l, seq, item) {
        /* {ref: R, source_name: S}: output R, which the model's file calls S. */
        const yaml_node_t *source = NULL;
        if (item->type == YAML_MAPPING_NODE) {
            static const char *const keys[] = {"ref", "source_name", NULL};
            const yaml_node_t *ref = find_key(l, item, "ref");
            source = find_key(l, item, "source_name");
            if (!check_duplicate_keys(l, item) || !check_keys(l, item, "a graph output", keys)) {
                s = TGC_ERR_INVALID;
                continue;
            }
            if (ref == NULL) {
                s = tgc_loader_error(l, item, "missing-key", "a graph output written as a mapping needs a 'ref'");
                continue;
            }
        }
        const yaml_node_t *ref_node = item->type == YAML_MAPPING_NODE ? find_key(l, item, "ref") : item;
        const char *text = tgc_loader_scalar(l, ref_node, "an output reference");
        if (text == NULL) {
            s = TGC_ERR_INVALID;
            continue;
        }
        tgc_srcpos pos = tgc_loader_pos(ref_node);
        int i = l->g->n_outputs++;
        l->g->outputs[i] = (tgc_ref){-1, 0, pos};
        if (source != NULL) {
            if (l->g->output_sources == NULL &&
                (l->g->output_sources = tgc_calloc(count + 1, sizeof *l->g->output_sources)) == NULL)
                return tgc_loader_nomem(l);
            tgc_status ss = load_source_name(l, source, &l->g->output_sources[i]);
            if (ss == TGC_ERR_NOMEM) return ss;
            if (ss != TGC_OK) s = ss;
        }
        if (text[0] == '\0' || text[0] == '^')
            s = tgc_loader_error(l, ref_node, "bad-reference", "graph output '%s' must name a tensor", text);
        else if (tgc_loader_add_ref(l, PENDING_OUTPUT, -1, i, text, pos) != TGC_OK)
            return TGC_ERR_NOMEM;
    }
    return s;
}

typedef tgc_status (*item_loader)(tgc_loader *l, const yaml_node_t *item);

static tgc_status load_list(tgc_loader *l, const yaml_node_t *seq, const char *what, item_loader fn) {
    if (!expect_kind(l, seq, YAML_SEQUENCE_NODE, what)) return TGC_ERR_INVALID;
    tgc_status s = TGC_OK;
    FOR_ITEMS(l, seq, item) {
        /* An entry that is not a mapping, or has no usable name, defines a
         * name nobody can tell: references that dangle may be to it. */
        const yaml_node_t *name = item->type == YAML_MAPPING_NODE ? find_key(l, item, "name") : NULL;
        if (name == NULL || name->type != YAML_SCALAR_NODE) l->names_incomplete = true;
        tgc_status is = fn(l, item);
        if (is == TGC_ERR_NOMEM || l->failure != TGC_OK) return TGC_ERR_NOMEM;
        if (is != TGC_OK) s = is;
    }
    return s;
}

/* A feed or a fetch names one input or output: no two graph inputs share
 * a model name (source_name, else name), and no two graph outputs a
 * source_name. Quadratic in the inputs and outputs (few). */
static tgc_status check_source_names(tgc_loader *l) {
    const tgc_graph *g = l->g;
    tgc_status s = TGC_OK;
    for (int32_t i = 0; i < g->n_inputs_nodes; i++)
        for (int32_t j = 0; g->nodes[i].source_name != NULL && j < g->n_inputs_nodes; j++)
            if (j != i && strcmp(tgc_node_label(&g->nodes[i]), tgc_node_label(&g->nodes[j])) == 0) {
                s = tgc_diag_error(l->diags, g->path, g->nodes[i].pos, "duplicate-name",
                                   "graph inputs '%s' and '%s' both go by '%s' (a source_name)", g->nodes[j].name,
                                   g->nodes[i].name, g->nodes[i].source_name);
                break;
            }
    for (int i = 0; g->output_sources != NULL && i < g->n_outputs; i++)
        for (int j = 0; g->output_sources[i] != NULL && j < i; j++)
            if (g->output_sources[j] != NULL && strcmp(g->output_sources[i], g->output_sources[j]) == 0) {
                s = tgc_diag_error(l->diags, g->path, g->outputs[i].pos, "duplicate-name",
                                   "graph outputs %d and %d have the same source_name '%s'", j, i,
                                   g->output_sources[i]);
                break;
            }
    return s;
}

/* A graph's contents, at the top level or inside a subgraph: inputs,
 * initializers, nodes, name and outputs (keys checked by the caller). */
static tgc_status load_contents(tgc_loader *l, const yaml_node_t *root) {
    tgc_status s = TGC_OK;
    /* Inputs first, then initializers, then nodes: node ids follow that order. */
    static const struct {
        const char *key;
        item_loader fn;
    } lists[] = {{"inputs", load_input}, {"initializers", load_initializer}, {"nodes", load_node}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        const yaml_node_t *v = find_key(l, root, lists[i].key);
        tgc_status ls = v ? load_list(l, v, lists[i].key, lists[i].fn) : TGC_OK;
        if (l->failure != TGC_OK) return l->failure;
        if (v != NULL && v->type != YAML_SEQUENCE_NODE) l->names_incomplete = true;
        if (ls != TGC_OK) s = ls;
        if (i == 0) l->g->n_inputs_nodes = l->g->n_nodes;
    }
    const yaml_node_t *name = find_key(l, root, "name");
    if (name != NULL) {
        const char *text = tgc_loader_scalar(l, name, "name");
        if (text == NULL) s = TGC_ERR_INVALID;
        else if ((l->g->name = tgc_strdup(text)) == NULL) return tgc_loader_nomem(l);
    }
    const yaml_node_t *outputs = find_key(l, root, "outputs");
    if (outputs == NULL) return tgc_loader_error(l, root, "missing-key", "the graph needs 'outputs'");
    tgc_status os = load_outputs(l, outputs);
    if (os == TGC_ERR_NOMEM) return os;
    tgc_status cs = check_source_names(l);
    return os != TGC_OK ? os : cs != TGC_OK ? cs : s;
}

static tgc_status load_root(tgc_loader *l, const yaml_node_t *root) {
    static const char *const keys[] = {"format", "name", "inputs", "outputs", "initializers", "nodes", NULL};
    if (root == NULL) /* nothing but comments: point at the start of the file */
        return tgc_diag_error(l->diags, l->g->path, (tgc_srcpos){1, 1}, "not-a-graph",
                              "the file is empty: a graph file starts with 'format: tgc/1'");
    if (root->type != YAML_MAPPING_NODE)
        return tgc_loader_error(l, root, "not-a-graph", "a graph file must be a mapping that starts with 'format: tgc/1'");
    if (!check_duplicate_keys(l, root)) return TGC_ERR_INVALID;
    yaml_node_pair_t *first = root->data.mapping.pairs.start;
    yaml_node_t *k0 = first < root->data.mapping.pairs.top ? yaml_document_get_node(&l->doc, first->key) : NULL;
    if (k0 == NULL || k0->type != YAML_SCALAR_NODE || strcmp((const char *)k0->data.scalar.value, "format") != 0)
        return tgc_loader_error(l, k0 ? k0 : root, "missing-format", "the first key must be 'format: tgc/1'");
    tgc_status s = TGC_OK;
    FOR_PAIRS(l, root, k, v) {
        if (tgc_loader_check_key(l, k, "the graph", keys)) continue;
        s = TGC_ERR_INVALID;
        /* A misspelt section ("initialisers:") defines names nobody reads. */
        if (v->type == YAML_SEQUENCE_NODE) l->names_incomplete = true;
    }
    const yaml_node_t *format = find_key(l, root, "format");
    l->g->format_pos = tgc_loader_pos(format);
    const char *fmt = tgc_loader_scalar(l, format, "format");
    if (fmt == NULL) return TGC_ERR_INVALID;
    if (strcmp(fmt, "tgc/1") != 0)
        return tgc_loader_error(l, format, "bad-format", "format '%s' is not supported (this tgc reads tgc/1)", fmt);

    tgc_status cs = load_contents(l, root);
    return cs != TGC_OK ? cs : s;
}

/* ---- references ---------------------------------------------------------- */

/* Resolves "node", "node:k" (when "node:k" is not itself a name) to a ref.
 * Returns 1 when found, 0 when the text names nothing, -1 out of memory. */
static int resolve_text(const tgc_graph *g, const char *text, int32_t *node, int32_t *port) {
    *node = tgc_graph_find(g, text);
    *port = 0;
    if (*node >= 0) return 1;
    const char *colon = strrchr(text, ':');
    if (colon == NULL || colon[1] == '\0' || colon == text) return 0;
    int64_t k;
    if (!tgc_parse_int(colon + 1, &k) || colon[1] == '-' || colon[1] == '+' || k > 1000000) return 0;
    size_t len = (size_t)(colon - text);
    char small[256];
    char *prefix = len < sizeof small ? small : tgc_strndup(text, len);
    if (prefix == NULL) return -1;
    if (prefix == small) {
        memcpy(small, text, len);
        small[len] = '\0';
    }
    *node = tgc_graph_find(g, prefix);
    if (prefix != small) tgc_free(prefix);
    *port = (int32_t)k;
    return *node >= 0;
}

/* The name among the graph's nodes closest to `text` (see
 * tgc_loader_closest), or NULL. */
static const char *closest_name(tgc_loader *l, const char *text) {
    const char *best = NULL;
    for (int32_t id = 0; id < l->g->n_nodes; id++) {
        const char *cand[2] = {best, l->g->nodes[id].name};
        const char *c = tgc_loader_closest(text, cand, 2, 2);
        if (c != NULL) best = c;
    }
    return best;
}

/* resolve_text in a graph whose captures stand for outer values: "x:1"
 * never reads port 1 of the capture named x (one value), but is captured
 * itself. */
static int resolve_local(const tgc_graph *g, const char *text, int32_t *node, int32_t *port) {
    int found = resolve_text(g, text, node, port);
    if (found == 1 && *port != 0 && g->nodes[*node].kind == TGC_NODE_INPUT && *node >= g->n_inputs_nodes) return 0;
    return found;
}

/* Resolves `text`, which names nothing in l's graph, in the graphs that
 * enclose it: the outer value becomes a capture of each subgraph on the
 * way down (each owner gets an implicit input), so *node is the capture in
 * l's graph and *port 0. 1 found, 0 not, -1 out of memory. The depth of
 * the recursion is bounded by TGC_MAX_SUBGRAPH_DEPTH. */
static int resolve_outer(tgc_loader *l, const char *text, tgc_srcpos pos, int32_t *node, int32_t *port) {
    tgc_loader *up = l->parent;
    if (up == NULL) return 0;
    int32_t onode, oport;
    int found = resolve_local(up->g, text, &onode, &oport);
    if (found == 0) found = resolve_outer(up, text, pos, &onode, &oport);
    if (found <= 0) return found;
    *port = 0;
    return tgc_subgraph_add_capture(l->g, text, up->g, l->owner, (tgc_ref){onode, oport, pos}, node) == TGC_OK ? 1
                                                                                                            : -1;
}

/* True when a name may be missing from l's graph or an enclosing one for
 * a reason already reported. */
static bool names_incomplete(const tgc_loader *l) {
    for (; l != NULL; l = l->parent)
        if (l->names_incomplete) return true;
    return false;
}

static tgc_status resolve_refs(tgc_loader *l) {
    tgc_status s = TGC_OK;
    tgc_graph *g = l->g;
    for (size_t i = 0; i < l->n_refs; i++) {
        pending_ref *p = &l->refs[i];
        int32_t node, port;
        int found = resolve_local(g, p->text, &node, &port);
        if (found == 0 && (p->kind == PENDING_INPUT || p->kind == PENDING_OUTPUT))
            found = resolve_outer(l, p->text, p->pos, &node, &port);
        if (found < 0) return tgc_loader_nomem(l);
        char owner[300];
        if (p->kind == PENDING_OUTPUT) snprintf(owner, sizeof owner, "%s output", l->parent ? "subgraph" : "graph");
        else snprintf(owner, sizeof owner, "node '%s':", g->nodes[p->owner].name);
        const char *caret = p->kind == PENDING_CONTROL ? "^" : "";
        const char *role = p->kind == PENDING_COLOCATE ? " colocate_with" : "";
        if (!found) {
            if (names_incomplete(l)) { /* the reason was reported; this is a consequence */
                s = TGC_ERR_INVALID;
                continue;
            }
            const char *near = closest_name(l, p->text);
            bool data = p->kind == PENDING_INPUT || p->kind == PENDING_OUTPUT;
            s = tgc_diag_error(l->diags, g->path, p->pos, "dangling-reference", "%s%s '%s%s' names no %s%s%s%s%s",
                               owner, role, caret, p->text, data ? "input, initializer or node" : "node",
                               l->parent == NULL ? ""
                               : data            ? " of this subgraph or an enclosing graph"
                                                 : " of this subgraph (control inputs and colocate_with stay in "
                                                   "their graph)",
                               near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            if (s == TGC_ERR_NOMEM) return tgc_loader_nomem(l);
            continue;
        }
        tgc_ref ref = {node, port, p->pos};
        if ((p->kind == PENDING_CONTROL || p->kind == PENDING_COLOCATE) && port != 0) {
            s = tgc_diag_error(l->diags, g->path, p->pos, "bad-reference",
                               "%s%s '%s%s' must name a node, not one of its outputs", owner, role, caret, p->text);
            if (s == TGC_ERR_NOMEM) return tgc_loader_nomem(l);
            continue;
        }
        switch (p->kind) {
        case PENDING_INPUT: g->nodes[p->owner].inputs[p->index] = ref; break;
        case PENDING_CONTROL: g->nodes[p->owner].controls[p->index] = ref; break;
        case PENDING_COLOCATE: g->nodes[p->owner].colocate[p->index] = ref; break;
        case PENDING_OUTPUT: g->outputs[p->index] = ref; break;
        }
    }
    return s;
}

/* Resolves l's references, then its subgraphs' (a subgraph may read any
 * name of the graphs around it, wherever that name is written). */
static tgc_status resolve_scope(tgc_loader *l) {
    tgc_status s = resolve_refs(l);
    for (size_t i = 0; i < l->n_children && l->failure == TGC_OK; i++) {
        tgc_status cs = resolve_scope(l->children[i]);
        if (l->children[i]->failure != TGC_OK) l->failure = l->children[i]->failure;
        if (cs != TGC_OK && s == TGC_OK) s = cs;
    }
    return l->failure != TGC_OK ? l->failure : s;
}

/* Inputs, initializers and nodes of g and every subgraph inside it. */
static int64_t count_nodes(const tgc_graph *g) {
    int64_t count = g->n_nodes;
    for (int32_t id = 0; id < g->n_nodes; id++)
        for (int i = 0; i < g->nodes[id].n_attrs; i++)
            if (g->nodes[id].attrs[i].graph != NULL) count += count_nodes(g->nodes[id].attrs[i].graph);
    return count;
}

/* ---- entry points -------------------------------------------------------- */

static void loader_release(tgc_loader *l) {
    for (size_t i = 0; i < l->n_refs; i++) tgc_free(l->refs[i].text);
    tgc_free(l->refs);
    for (size_t i = 0; i < l->n_children; i++) {
        loader_release(l->children[i]);
        tgc_free(l->children[i]);
    }
    tgc_free(l->children);
}

static tgc_status parse_document(tgc_loader *l, const char *text, size_t size) {
    tgc_status depth = tgc_yaml_check_depth(text, size, TGC_YAML_MAX_NESTING, l->g->path, l->diags);
    if (depth != TGC_OK) return depth == TGC_ERR_NOMEM ? tgc_loader_nomem(l) : depth;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return tgc_loader_nomem(l);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    tgc_status s = TGC_OK;
    if (!yaml_parser_load(&parser, &l->doc)) {
        if (parser.error == YAML_MEMORY_ERROR) {
            s = tgc_loader_nomem(l);
        } else {
            tgc_srcpos pos = {(int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1};
            tgc_diag_error(l->diags, l->g->path, pos, "yaml-syntax", "%s%s%s",
                           parser.problem ? parser.problem : "malformed YAML", parser.context ? " " : "",
                           parser.context ? parser.context : "");
            s = TGC_ERR_INVALID;
        }
        yaml_parser_delete(&parser);
        return s;
    }
    /* One document only: a second one is an error, not silently ignored. */
    yaml_document_t extra;
    if (yaml_parser_load(&parser, &extra)) {
        if (yaml_document_get_root_node(&extra) != NULL) {
            tgc_srcpos pos = {(int)extra.start_mark.line + 1, (int)extra.start_mark.column + 1};
            s = tgc_diag_error(l->diags, l->g->path, pos, "yaml-syntax", "a graph file holds one YAML document; found a second");
        }
        yaml_document_delete(&extra);
    } else if (parser.error != YAML_NO_ERROR) {
        tgc_srcpos pos = {(int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1};
        s = tgc_diag_error(l->diags, l->g->path, pos, "yaml-syntax", "%s", parser.problem ? parser.problem : "malformed YAML");
    }
    yaml_parser_delete(&parser);
    if (s != TGC_OK) yaml_document_delete(&l->doc);
    return s;
}

/* tgc_graph_load_string, with base_dir a weights folder the user named
 * when weights_dir (for the messages), and opts' limits. */
static tgc_status load_text(const char *text, size_t size, const char *name, const char *base_dir, bool weights_dir,
                            const tgc_graph_load_options *opts, tgc_diags *diags, tgc_graph **out) {
    *out = NULL;
    tgc_loader l = {.diags = diags, .weights_dir = weights_dir, .owner = -1};
    tgc_load_limits limits = tgc_load_limits_of(opts);
    if (tgc_load_limits_check_file(&limits, name, (int64_t)size, diags) != TGC_OK) return TGC_ERR_INVALID;
    l.g = tgc_graph_create(name, base_dir);
    if (l.g == NULL) return TGC_ERR_NOMEM;
    l.g->limits = limits;
    tgc_status s = parse_document(&l, text, size);
    if (s == TGC_OK) {
        s = load_root(&l, yaml_document_get_root_node(&l.doc));
        yaml_document_delete(&l.doc);
    }
    return tgc_loader_finish(&l, s, out);
}

tgc_status tgc_loader_finish(tgc_loader *l, tgc_status s, tgc_graph **out) {
    *out = NULL;
    if (s == TGC_OK && l->failure == TGC_OK) {
        int64_t total = count_nodes(l->g);
        if (total > l->g->limits.nodes) {
            tgc_diag_add(l->diags, TGC_SEV_ERROR, l->g->path, (tgc_srcpos){0, 0}, "over-limit",
                         "the graph has %lld inputs, initializers and nodes, above the limit of %lld "
                         "(--load-limits nodes=N raises it)",
                         (long long)total, (long long)l->g->limits.nodes);
            s = TGC_ERR_INVALID;
        }
    }
    if (l->failure == TGC_OK && s != TGC_ERR_NOMEM) {
        tgc_status rs = resolve_scope(l);
        if (s == TGC_OK) s = rs;
    }
    if (l->failure != TGC_OK) s = l->failure;
    loader_release(l);
    /* Structure errors stop here; validation and inference need a whole graph. */
    if (s == TGC_OK) s = tgc_graph_validate(l->g, l->diags);
    if (s == TGC_OK) s = tgc_graph_infer(l->g, l->diags);
    tgc_diags_sort(l->diags);
    if (s != TGC_OK) {
        tgc_graph_free(l->g);
        return s;
    }
    *out = l->g;
    return TGC_OK;
}

tgc_status tgc_graph_load_string(const char *text, size_t size, const char *name, const char *base_dir,
                                 tgc_diags *diags, tgc_graph **out) {
    return load_text(text, size, name, base_dir, false, NULL, diags, out);
}

/* The whole file at path, but never more than max_bytes + 1 bytes (the
 * caller refuses a file past its limit without reading all of it). */
static tgc_status read_file(const char *path, int64_t max_bytes, char **text, size_t *size, tgc_diags *diags) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "io", "cannot open: %s", strerror(errno)),
               TGC_ERR_IO;
    size_t cap = 65536, len = 0;
    char *buf = tgc_malloc(cap);
    tgc_status s = buf ? TGC_OK : TGC_ERR_NOMEM;
    while (s == TGC_OK) {
        if (len == cap) {
            char *bigger = tgc_realloc(buf, cap * 2);
            if (bigger == NULL) {
                s = TGC_ERR_NOMEM;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0 || len > (size_t)max_bytes) {
            if (ferror(f)) {
                tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "io", "cannot read: %s", strerror(errno));
                s = TGC_ERR_IO;
            }
            break;
        }
    }
    fclose(f);
    if (s != TGC_OK) {
        tgc_free(buf);
        return s;
    }
    *text = buf;
    *size = len;
    return TGC_OK;
}

tgc_status tgc_graph_load_with(const char *path, const tgc_graph_load_options *opts, tgc_diags *diags,
                               tgc_graph **out) {
    *out = NULL;
    size_t len = strlen(path);
    if (len > 5 && strcmp(path + len - 5, ".onnx") == 0) return tgc_onnx_load_with(path, opts, diags, out);
    const char *weights_dir = opts != NULL ? opts->weights_dir : NULL;
    if (weights_dir != NULL) {
        struct stat wst;
        int e = stat(weights_dir, &wst) != 0 ? errno : S_ISDIR(wst.st_mode) ? 0 : ENOTDIR;
        if (e != 0) {
            tgc_diag_add(diags, TGC_SEV_ERROR, weights_dir, (tgc_srcpos){0, 0}, "io",
                         "the weights folder cannot be used: %s", strerror(e));
            return TGC_ERR_IO;
        }
    }
    char *text;
    size_t size;
    tgc_status s = read_file(path, tgc_load_limits_of(opts).file_bytes, &text, &size, diags);
    if (s != TGC_OK) return s;
    const char *slash = strrchr(path, '/');
    char *dir = weights_dir != NULL ? tgc_strdup(weights_dir)
                : slash         ? tgc_strndup(path, (size_t)(slash - path) + (slash == path))
                                : tgc_strdup(".");
    if (dir == NULL) {
        tgc_free(text);
        return TGC_ERR_NOMEM;
    }
    s = load_text(text, size, path, dir, weights_dir != NULL, opts, diags, out);
    tgc_free(dir);
    tgc_free(text);
    return s;
}

tgc_status tgc_graph_load(const char *path, tgc_diags *diags, tgc_graph **out) {
    return tgc_graph_load_with(path, NULL, diags, out);
}
