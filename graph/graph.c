/* Graph IR: creation, node and symbol tables, release. */
#include "graph/graph.h"

#include "support/alloc.h"
#include "support/diag.h"
#include "support/string_slots.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

tgc_graph *tgc_graph_create(const char *path, const char *dir) {
    tgc_graph *g = tgc_calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->path = tgc_strdup(path ? path : "");
    g->dir = tgc_strdup(dir ? dir : ".");
    if (g->path == NULL || g->dir == NULL) {
        tgc_graph_free(g);
        return NULL;
    }
    g->limits = tgc_load_limits_of(NULL);
    return g;
}

const char *tgc_type_str(tgc_dtype dtype, int kind, char *buf, size_t size) {
    const char *d = tgc_dtype_name(dtype);
    switch (kind) {
    case TGC_KIND_SEQUENCE: snprintf(buf, size, "seq(%s)", d); break;
    case TGC_KIND_OPTIONAL: snprintf(buf, size, "optional(%s)", d); break;
    case TGC_KIND_OPTIONAL_SEQUENCE: snprintf(buf, size, "optional(seq(%s))", d); break;
    default: snprintf(buf, size, "%s", d); break;
    }
    return buf;
}

/* Strips "word(" ... ")" from [*s, *end): true when it was there. */
static bool unwrap(const char **s, const char **end, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(*end - *s) < n + 2 || strncmp(*s, word, n) != 0 || (*s)[n] != '(' || (*end)[-1] != ')')
        return false;
    *s += n + 1;
    *end -= 1;
    return true;
}

bool tgc_type_parse(const char *text, tgc_dtype *dtype, uint8_t *kind) {
    const char *s = text, *end = text + strlen(text);
    uint8_t k = TGC_KIND_TENSOR;
    if (unwrap(&s, &end, "optional")) k |= TGC_KIND_OPTIONAL;
    if (unwrap(&s, &end, "seq")) k |= TGC_KIND_SEQUENCE;
    char name[32];
    size_t len = (size_t)(end - s);
    if (len >= sizeof name) return false;
    memcpy(name, s, len);
    name[len] = '\0';
    *dtype = tgc_dtype_from_name(name);
    *kind = k;
    return *dtype != TGC_DTYPE_INVALID;
}

tgc_status tgc_info_set_value(tgc_tensor_info *info, int n, const tgc_dim *value) {
    tgc_dim *copy = tgc_malloc((size_t)n * sizeof *copy);
    if (copy == NULL) return TGC_ERR_NOMEM;
    if (n > 0) memcpy(copy, value, (size_t)n * sizeof *copy);
    tgc_free(info->value);
    info->value = copy;
    info->value_len = n;
    return TGC_OK;
}

void tgc_info_clear_value(tgc_tensor_info *info) {
    tgc_free(info->value);
    info->value = NULL;
    info->value_len = -1;
}

void tgc_const_free(tgc_const *c) {
    if (c == NULL) return;
    if (!c->borrowed && c->dtype == TGC_STRING) tgc_string_slots_free(c->data, c->nbytes / sizeof(char *));
    if (!c->borrowed) tgc_free(c->data);
    tgc_free(c->file);
    tgc_free(c);
}

void tgc_attr_release(tgc_attr *a) {
    tgc_free(a->name);
    tgc_free(a->s);
    tgc_free(a->ints);
    tgc_free(a->floats);
    if (a->strings != NULL)
        for (size_t i = 0; i < a->n; i++) tgc_free(a->strings[i]);
    tgc_free(a->strings);
    tgc_const_free(a->tensor);
    tgc_graph_free(a->graph);
    memset(a, 0, sizeof *a);
}

static void release_node(tgc_node *n) {
    tgc_free(n->name);
    tgc_free(n->source_name);
    tgc_free(n->op_name);
    tgc_free(n->inputs);
    tgc_free(n->controls);
    for (int i = 0; i < n->n_attrs; i++) tgc_attr_release(&n->attrs[i]);
    tgc_free(n->attrs);
    tgc_free(n->device);
    tgc_free(n->colocate);
    if (n->outputs != NULL)
        for (int i = 0; i < n->n_outputs; i++) tgc_free(n->outputs[i].value);
    tgc_free(n->outputs);
    if (n->declared != NULL)
        for (int i = 0; i < n->n_declared; i++) tgc_free(n->declared[i].value);
    tgc_free(n->declared);
    tgc_free(n->declared_has_shape);
    tgc_const_free(n->data);
}

void tgc_graph_free(tgc_graph *g) {
    if (g == NULL) return;
    for (int32_t i = 0; i < g->n_nodes; i++) release_node(&g->nodes[i]);
    tgc_free(g->nodes);
    tgc_strmap_release(&g->names);
    tgc_free(g->outputs);
    if (g->output_sources != NULL)
        for (int i = 0; i < g->n_outputs; i++) tgc_free(g->output_sources[i]);
    tgc_free(g->output_sources);
    for (int32_t i = 0; i < g->n_symbols; i++) tgc_free(g->symbols[i]);
    tgc_free(g->symbols);
    tgc_free(g->symbol_fresh);
    tgc_strmap_release(&g->symbol_ids);
    tgc_free(g->topo);
    tgc_free(g->path);
    tgc_free(g->dir);
    tgc_free(g->name);
    tgc_free(g->captures);
    tgc_free(g->capture_input);
    tgc_graph *source = g->source;
    tgc_free(g);
    tgc_graph_free(source);
}

tgc_status tgc_graph_adopt_source(tgc_graph *g, tgc_graph *source) {
    if (g->source != NULL) return TGC_ERR_INVALID;
    g->source = source;
    return TGC_OK;
}

tgc_status tgc_graph_add_node(tgc_graph *g, const char *name, tgc_node_kind kind, int32_t *id) {
    if (g->n_nodes == g->cap_nodes) {
        int32_t cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
        tgc_node *nodes = tgc_realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (nodes == NULL) return TGC_ERR_NOMEM;
        g->nodes = nodes;
        g->cap_nodes = cap;
    }
    tgc_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = tgc_strdup(name);
    if (n->name == NULL) return TGC_ERR_NOMEM;
    n->kind = kind;
    /* The first node of a name wins the map; validation reports duplicates. */
    if (tgc_graph_find(g, name) < 0 && tgc_strmap_put(&g->names, name, g->n_nodes) != TGC_OK) {
        tgc_free(n->name);
        return TGC_ERR_NOMEM;
    }
    *id = g->n_nodes++;
    return TGC_OK;
}

int32_t tgc_graph_find(const tgc_graph *g, const char *name) { return tgc_strmap_get(&g->names, name); }

tgc_status tgc_graph_check_whole(const tgc_graph *g, tgc_diags *diags) {
    for (int32_t id = 0; g != NULL && id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        if (n->kind != TGC_NODE_CONST || n->data == NULL || !n->data->released) continue;
        return diags != NULL ? tgc_diag_error(diags, g->path, n->pos, "weights-released",
                                              "initializer '%s' was let go by a session that holds it only in a "
                                              "kernel's layout (release_weights): load the model again to use it",
                                              n->name)
                             : TGC_ERR_INVALID;
    }
    return TGC_OK;
}

tgc_graph *tgc_graph_root(const tgc_graph *g) {
    while (g->parent != NULL) g = g->parent;
    return (tgc_graph *)g;
}

int32_t tgc_graph_symbol(tgc_graph *g, const char *name, bool fresh) {
    g = tgc_graph_root(g);
    int32_t id = tgc_strmap_get(&g->symbol_ids, name);
    if (id >= 0) return id;
    if (g->n_symbols == g->cap_symbols) {
        int32_t cap = g->cap_symbols ? g->cap_symbols * 2 : 8;
        char **symbols = tgc_realloc(g->symbols, (size_t)cap * sizeof *symbols);
        if (symbols == NULL) return -1;
        g->symbols = symbols;
        bool *flags = tgc_realloc(g->symbol_fresh, (size_t)cap * sizeof *flags);
        if (flags == NULL) return -1;
        g->symbol_fresh = flags;
        g->cap_symbols = cap;
    }
    char *copy = tgc_strdup(name);
    if (copy == NULL) return -1;
    if (tgc_strmap_put(&g->symbol_ids, name, g->n_symbols) != TGC_OK) {
        tgc_free(copy);
        return -1;
    }
    g->symbols[g->n_symbols] = copy;
    g->symbol_fresh[g->n_symbols] = fresh;
    return g->n_symbols++;
}

int32_t tgc_graph_fresh_symbol(tgc_graph *g) {
    g = tgc_graph_root(g);
    char name[32];
    do snprintf(name, sizeof name, "unk__%" PRId32, g->next_fresh++);
    while (tgc_strmap_get(&g->symbol_ids, name) >= 0);
    return tgc_graph_symbol(g, name, true);
}

const tgc_tensor_info *tgc_graph_ref_info(const tgc_graph *g, tgc_ref ref) {
    if (ref.node < 0) return NULL;
    const tgc_node *n = &g->nodes[ref.node];
    if (ref.port >= n->n_outputs || n->outputs == NULL) return NULL;
    return &n->outputs[ref.port];
}

const tgc_attr *tgc_node_attr(const tgc_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

const char *tgc_dim_str(const tgc_graph *g, tgc_dim d, char *buf, size_t size) {
    if (g != NULL) g = tgc_graph_root(g);
    if (tgc_dim_known(d))
        snprintf(buf, size, "%" PRId64, d.v);
    else if (g != NULL && d.sym >= 0 && d.sym < g->n_symbols)
        snprintf(buf, size, "%s", g->symbols[d.sym]);
    else
        snprintf(buf, size, "?");
    return buf;
}

const char *tgc_shape_str(const tgc_graph *g, const tgc_shape *s, char *buf, size_t size) {
    if (size == 0) return buf;
    if (s->rank == TGC_RANK_UNKNOWN) {
        snprintf(buf, size, "[unknown rank]");
        return buf;
    }
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < s->rank && used < size; i++) {
        char dim[64];
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                                 tgc_dim_str(g, s->dims[i], dim, sizeof dim));
    }
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

size_t tgc_graph_node_count(const tgc_graph *g) { return g ? (size_t)g->n_nodes : 0; }

const char *tgc_graph_node_name(const tgc_graph *g, size_t i) {
    return g != NULL && i < (size_t)g->n_nodes ? g->nodes[i].name : NULL;
}

const char *tgc_graph_node_op(const tgc_graph *g, size_t i) {
    return g != NULL && i < (size_t)g->n_nodes && g->nodes[i].kind == TGC_NODE_OP ? g->nodes[i].op_name : NULL;
}

int tgc_graph_input_count(const tgc_graph *g) { return g ? (int)g->n_inputs_nodes : 0; }

const char *tgc_graph_input_name(const tgc_graph *g, int i) {
    return g != NULL && i >= 0 && i < g->n_inputs_nodes ? g->nodes[i].name : NULL;
}

tgc_dtype tgc_dtype_from_onnx(int64_t code) {
    switch (code) {
    case 1: return TGC_FLOAT32;
    case 10: return TGC_FLOAT16;
    case 6: return TGC_INT32;
    case 7: return TGC_INT64;
    case 2: return TGC_UINT8;
    case 9: return TGC_BOOL;
    case 11: return TGC_FLOAT64;
    case 3: return TGC_INT8;
    case 5: return TGC_INT16;
    case 4: return TGC_UINT16;
    case 12: return TGC_UINT32;
    case 13: return TGC_UINT64;
    case 16: return TGC_BFLOAT16;
    case 8: return TGC_STRING;
    default: return TGC_DTYPE_INVALID;
    }
}

bool tgc_node_is_small_constant(const tgc_node *n) {
    bool constant = n->kind == TGC_NODE_CONST ||
                    (n->kind == TGC_NODE_OP && n->op_name != NULL && strcmp(n->op_name, "Constant") == 0);
    if (!constant || n->n_inputs != 0 || n->n_controls != 0 || n->n_colocate != 0 || n->device != NULL ||
        n->n_outputs != 1 || n->outputs[0].kind != TGC_KIND_TENSOR || n->outputs[0].dtype == TGC_STRING)
        return false;
    int64_t numel = tgc_shape_numel(&n->outputs[0].shape);
    size_t elem = tgc_dtype_size(n->outputs[0].dtype);
    return numel >= 0 && elem > 0 && numel <= TGC_SMALL_CONSTANT_BYTES / (int64_t)elem;
}
