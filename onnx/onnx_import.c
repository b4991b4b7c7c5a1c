/* The ONNX importer's core: a ModelProto's graph into a tgc/1 document.
 *
 * Pass 1 names everything. Graph inputs, then initializers, then nodes (in
 * the model's order) get tgc names; a node is named after its first output,
 * so the ONNX tensor "y" that a node produces is the tgc reference "y", and
 * its output k (k > 0) is "y:k". A table maps every ONNX tensor name to its
 * reference.
 *
 * Pass 2 converts. Inputs get dtypes and shapes (dim_param -> a symbol,
 * an unknown dim -> a fresh symbol); initializers and Constant nodes become
 * initializers; every other node becomes a node of the same op, with its
 * inputs resolved through the table and its attributes typed by the op's
 * schema in the registry (graph/op_registry.h). Models before opset 13,
 * Dropout and Sum go through onnx_legacy.c first.
 *
 * Nothing stops at the first problem: every unsupported op type, attribute
 * and dtype is collected, grouped (one message per op type, with the count
 * and the first few nodes) and reported together. */
#include "onnx/onnx_import.h"

#include "graph/op_registry.h"
#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A group of problems of one kind ("unsupported op 'LSTM'") and where. */
typedef struct problem {
    const char *rule;
    const char *label;
    const char *noun; /* "node", "input", ... */
    int count;
    const char *where[4];
} problem;

#define PROBLEM_WHERE_SHOWN 4

struct tgc_onnx_importer {
    const Onnx__GraphProto *g;
    const char *path; /* the model, for messages */
    const char *dir;  /* its directory, for external data */
    tgc_diags *diags;
    tgc_onnx_arena *arena;
    tgc_onnx_doc *doc;
    int64_t opset;

    tgc_onnx_namer names;   /* graph inputs, initializers, nodes */
    tgc_onnx_namer symbols; /* dims */
    tgc_strmap dim_params;  /* ONNX dim_param -> index in dim_symbols */
    const char **dim_symbols;
    int n_dim_symbols;

    tgc_strmap tensors; /* ONNX tensor name -> index in refs/consts */
    const char **refs;
    const tgc_npy **consts;
    int n_tensors;
    tgc_strmap used; /* ONNX tensor names that a node reads or the graph outputs */

    const char **node_names; /* per ONNX node: its tgc name */

    tgc_strmap problem_ids; /* rule + label -> index in problems */
    problem *problems;
    int n_problems, cap_problems;
    bool invalid; /* a problem that makes the model malformed, not just unsupported */
    tgc_onnx_seq_index *seq_index; /* onnx_sequence_split.c's, made on first use */
    bool no_onnx_opset;

    /* Subgraphs (If's branches, Loop's, Scan's and SequenceMap's bodies)
     * are converted by an importer of their own whose tensor table chains
     * to the enclosing one's: an ONNX name a subgraph does not define is
     * looked up outside, and its tgc reference there becomes, in the
     * tgc/1 file, an outer value the subgraph reads by name. Names,
     * symbols and problems are the top-level importer's (root), so every
     * tgc name is unique in the whole file. */
    tgc_onnx_importer *root, *parent;
    const char *scope; /* "" at the top; "'loop' body: " inside, for messages */
    int depth;
    int node_problems; /* problems recorded on this graph's own nodes (not inside their subgraphs) */
};

static const tgc_srcpos no_pos = {0, 0};

static const char *str_or_empty(const char *s) { return s ? s : ""; }

tgc_onnx_arena *tgc_onnx_importer_arena(tgc_onnx_importer *im) { return im->arena; }

const Onnx__GraphProto *tgc_onnx_importer_graph(const tgc_onnx_importer *im) { return im->g; }

const char *tgc_onnx_importer_dir(const tgc_onnx_importer *im) { return im->dir; }

tgc_onnx_seq_index **tgc_onnx_importer_seq_index(tgc_onnx_importer *im) { return &im->seq_index; }

/* Grows an arena array of `elem`-byte items to hold `need`. */
static bool grow(tgc_onnx_arena *a, void **arr, int *cap, int need, size_t elem) {
    if (need <= *cap) return true;
    int cap2 = *cap ? *cap * 2 : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *p = tgc_onnx_alloc(a, (size_t)cap2 * elem);
    if (p == NULL) return false;
    if (*cap) memcpy(p, *arr, (size_t)*cap * elem);
    *arr = p;
    *cap = cap2;
    return true;
}

/* ---- Problems ------------------------------------------------------------------ */

/* Records one instance of the problem `label` (rule `rule`) at `where`. */
static void add_problem(tgc_onnx_importer *im, const char *rule, const char *label, const char *noun,
                        const char *where) {
    im->node_problems++;
    im = im->root;
    if (strcmp(rule, "bad-model") == 0) im->invalid = true;
    char *key = tgc_onnx_printf(im->arena, "%s\x1f%s", rule, label);
    if (key == NULL) return;
    int32_t id = tgc_strmap_get(&im->problem_ids, key);
    if (id < 0) {
        if (!grow(im->arena, (void **)&im->problems, &im->cap_problems, im->n_problems + 1, sizeof(problem)) ||
            tgc_strmap_put(&im->problem_ids, key, im->n_problems) != TGC_OK) {
            im->arena->failed = true;
            return;
        }
        id = im->n_problems++;
        problem *p = &im->problems[id];
        p->rule = rule;
        p->label = tgc_onnx_strdup(im->arena, label);
        p->noun = noun;
    }
    problem *p = &im->problems[id];
    if (p->count < PROBLEM_WHERE_SHOWN) p->where[p->count] = tgc_onnx_strdup(im->arena, where);
    p->count++;
}

static void report_problems(tgc_onnx_importer *im) {
    for (int i = 0; i < im->n_problems; i++) {
        const problem *p = &im->problems[i];
        char list[1024] = "";
        size_t len = 0;
        for (int k = 0; k < p->count && k < PROBLEM_WHERE_SHOWN; k++)
            len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s", k ? ", " : "",
                                    p->where[k] ? p->where[k] : "?");
        if (p->count > PROBLEM_WHERE_SHOWN && len < sizeof list) snprintf(list + len, sizeof list - len, ", ...");
        tgc_diag_error(im->diags, im->path, no_pos, p->rule, "%s (%d %s%s: %s)", p->label, p->count, p->noun,
                       p->count == 1 ? "" : "s", list);
    }
}

/* "'name'" for a node: its ONNX name, else its first output's. */
static const char *node_where(tgc_onnx_importer *im, const Onnx__NodeProto *n, size_t index) {
    if (n->name != NULL && n->name[0] != '\0') return tgc_onnx_printf(im->arena, "%s'%s'", im->scope, n->name);
    for (size_t k = 0; k < n->n_output; k++)
        if (n->output[k] != NULL && n->output[k][0] != '\0')
            return tgc_onnx_printf(im->arena, "%s#%zu (output '%s')", im->scope, index, n->output[k]);
    return tgc_onnx_printf(im->arena, "%s#%zu", im->scope, index);
}

bool tgc_onnx_node_unsupported(tgc_onnx_node_ctx *c, const char *rule, const char *label) {
    add_problem(c->im, rule, label, "node", c->node_where);
    return false;
}

/* ---- Tensor names ---------------------------------------------------------------- */

static int32_t tensor_id(const tgc_onnx_importer *im, const char *name) { return tgc_strmap_get(&im->tensors, name); }

/* Maps ONNX tensor `name` to the tgc reference `ref`. */
static void define_tensor(tgc_onnx_importer *im, const char *name, const char *ref, const char *what) {
    if (ref == NULL) return; /* out of memory, already recorded */
    if (tensor_id(im, name) >= 0) {
        add_problem(im, "bad-model",
                    tgc_onnx_printf(im->arena, "tensor '%s' is defined more than once (ONNX graphs are SSA)", name),
                    "definition", what);
        return;
    }
    if (tgc_strmap_put(&im->tensors, name, im->n_tensors) != TGC_OK) {
        im->arena->failed = true;
        return;
    }
    im->refs[im->n_tensors] = ref;
    im->consts[im->n_tensors] = NULL;
    im->n_tensors++;
}

bool tgc_onnx_tensor_used(const tgc_onnx_importer *im, const char *name) {
    return name != NULL && name[0] != '\0' && tgc_strmap_get(&im->used, name) >= 0;
}

const tgc_npy *tgc_onnx_constant_value(const tgc_onnx_importer *im, const char *name) {
    for (; im != NULL; im = im->parent) {
        int32_t id = tensor_id(im, name);
        if (id >= 0) return im->consts[id];
    }
    return NULL;
}

/* The tgc reference of ONNX tensor `name` as im's graph reads it: its own,
 * or (a subgraph reading an outer value) an enclosing graph's; NULL when
 * no graph defines it. */
static const char *lookup_ref(const tgc_onnx_importer *im, const char *name) {
    for (; im != NULL; im = im->parent) {
        int32_t id = tensor_id(im, name);
        if (id >= 0) return im->refs[id];
    }
    return NULL;
}

/* Keeps the rename for the document's header when the name changed. */
static void note_rename(tgc_onnx_importer *im, const char *from, const char *to) {
    if (to == NULL || strcmp(from, to) == 0) return;
    tgc_onnx_doc *d = im->doc;
    if (!grow(im->arena, (void **)&d->renames, &d->cap_renames, d->n_renames + 1, sizeof *d->renames)) return;
    d->renames[d->n_renames].from = tgc_onnx_strdup(im->arena, from);
    d->renames[d->n_renames].to = to;
    d->n_renames++;
}

static bool is_initializer(const tgc_onnx_importer *im, const char *name) {
    for (size_t i = 0; i < im->g->n_initializer; i++)
        if (strcmp(str_or_empty(im->g->initializer[i]->name), name) == 0) return true;
    return false;
}

/* The graph inputs that are fed at run time: ONNX before IR 4 also lists
 * every initializer among the inputs; those stay initializers. */
static bool fed_input(const tgc_onnx_importer *im, size_t i) {
    return !is_initializer(im, str_or_empty(im->g->input[i]->name));
}

/* Marks every name that subgraph g (and the subgraphs inside it) reads as
 * used in im's graph: a value read only inside a subgraph is read all the
 * same. Names g defines itself are marked too, harmlessly. */
static void mark_used_inside(tgc_onnx_importer *im, const Onnx__GraphProto *g, int depth) {
    if (depth >= TGC_MAX_SUBGRAPH_DEPTH) return; /* refused when converted */
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_input; k++)
            if (n->input[k] != NULL && n->input[k][0] != '\0' && tgc_strmap_put(&im->used, n->input[k], 1) != TGC_OK)
                im->arena->failed = true;
        for (size_t k = 0; k < n->n_attribute; k++)
            if (n->attribute[k]->g != NULL) mark_used_inside(im, n->attribute[k]->g, depth + 1);
    }
    for (size_t i = 0; i < g->n_output; i++)
        if (tgc_strmap_put(&im->used, str_or_empty(g->output[i]->name), 1) != TGC_OK) im->arena->failed = true;
}

/* Pass 1: a tgc name for every graph input, initializer and node, and a
 * reference for every ONNX tensor name. */
static void name_everything(tgc_onnx_importer *im) {
    const Onnx__GraphProto *g = im->g;
    for (size_t i = 0; i < g->n_input; i++) {
        if (!fed_input(im, i)) continue;
        const char *onnx = str_or_empty(g->input[i]->name);
        const char *name = tgc_onnx_name(&im->root->names, onnx, "input");
        note_rename(im, onnx, name);
        define_tensor(im, onnx, name, tgc_onnx_printf(im->arena, "input '%s'", onnx));
    }
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *onnx = str_or_empty(g->initializer[i]->name);
        const char *name = tgc_onnx_name(&im->root->names, onnx, "initializer");
        note_rename(im, onnx, name);
        define_tensor(im, onnx, name, tgc_onnx_printf(im->arena, "initializer '%s'", onnx));
    }
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        const char *first = NULL;
        for (size_t k = 0; k < n->n_output && first == NULL; k++)
            if (n->output[k] != NULL && n->output[k][0] != '\0') first = n->output[k];
        const char *wanted = first ? first : n->name;
        const char *name = tgc_onnx_name(&im->root->names, wanted, str_or_empty(n->op_type)[0] ? n->op_type : "node");
        im->node_names[i] = name;
        if (wanted != NULL) note_rename(im, wanted, name);
        for (size_t k = 0; k < n->n_output; k++) {
            const char *out = n->output[k];
            if (out == NULL || out[0] == '\0' || name == NULL) continue;
            const char *ref = k == 0 ? name : tgc_onnx_printf(im->arena, "%s:%zu", name, k);
            define_tensor(im, out, ref, node_where(im, n, i));
        }
        for (size_t k = 0; k < n->n_input; k++)
            if (n->input[k] != NULL && n->input[k][0] != '\0' && tgc_strmap_put(&im->used, n->input[k], 1) != TGC_OK)
                im->arena->failed = true;
        for (size_t k = 0; k < n->n_attribute; k++)
            if (n->attribute[k]->g != NULL) mark_used_inside(im, n->attribute[k]->g, 0);
    }
    for (size_t i = 0; i < g->n_output; i++)
        if (tgc_strmap_put(&im->used, str_or_empty(g->output[i]->name), 1) != TGC_OK) im->arena->failed = true;
}

/* ---- Inputs ---------------------------------------------------------------------- */

static const char *dtype_problem_label(tgc_onnx_importer *im, int64_t code) {
    char nb[32];
    return tgc_onnx_printf(im->arena, "dtype %s is not supported (tgc has " TGC_DTYPE_NAMES ")",
                           tgc_onnx_dtype_name(code, nb, sizeof nb));
}

/* The symbol for dim_param `param` (one symbol per distinct param). */
static const char *param_symbol(tgc_onnx_importer *im, const char *param) {
    im = im->root;
    int32_t id = tgc_strmap_get(&im->dim_params, param);
    if (id >= 0) return im->dim_symbols[id];
    const char *sym = tgc_onnx_name(&im->root->symbols, param, "D");
    int cap = im->n_dim_symbols; /* grown one by one: few distinct params */
    const char **grown = tgc_onnx_alloc(im->arena, (size_t)(cap + 1) * sizeof *grown);
    if (sym == NULL || grown == NULL || tgc_strmap_put(&im->dim_params, param, im->n_dim_symbols) != TGC_OK) {
        im->arena->failed = true;
        return NULL;
    }
    if (cap) memcpy(grown, im->dim_symbols, (size_t)cap * sizeof *grown);
    grown[im->n_dim_symbols++] = sym;
    im->dim_symbols = grown;
    return sym;
}

/* The tensor type inside `t`: t itself, or a sequence's or an optional's
 * element (an optional of a sequence: two levels), with the kind they make
 * in *kind; NULL for a type tgc has no kind for (maps, sparse tensors). */
static const Onnx__TypeProto__Tensor *tensor_type_of(const Onnx__TypeProto *t, uint8_t *kind) {
    *kind = TGC_KIND_TENSOR;
    if (t != NULL && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type != NULL) {
        *kind |= TGC_KIND_OPTIONAL;
        t = t->optional_type->elem_type;
    }
    if (t != NULL && t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && t->sequence_type != NULL) {
        *kind |= TGC_KIND_SEQUENCE;
        t = t->sequence_type->elem_type;
    }
    return t != NULL && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? t->tensor_type : NULL;
}

/* Reads ONNX type `t` of the value `name` into out (dtype, kind, rank and
 * dims; rank -1 when the shape is not given, dtype TGC_DTYPE_INVALID when
 * the type is not). `required` (a top-level graph input): the type must be
 * given, and a tensor's shape too. False after reporting what tgc cannot
 * take. */
static bool convert_type(tgc_onnx_importer *im, const Onnx__TypeProto *t, tgc_onnx_input *out, const char *name,
                         const char *where, bool required) {
    *out = (tgc_onnx_input){.name = name, .dtype = TGC_DTYPE_INVALID, .rank = -1};
    if (t == NULL || t->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) {
        if (required)
            add_problem(im, "unsupported-input", "graph inputs need a type; the model gives none", "input", where);
        return !required;
    }
    const Onnx__TypeProto__Tensor *tt = tensor_type_of(t, &out->kind);
    if (tt == NULL) {
        add_problem(im, "unsupported-input",
                    "values must be tensors, sequences of tensors or optionals of those (maps and sparse tensors are "
                    "not supported)", "value", where);
        return false;
    }
    if (!tt->has_elem_type || tt->elem_type == 0) { /* an element type left open */
        if (required && out->kind == TGC_KIND_TENSOR)
            add_problem(im, "unsupported-input", "graph inputs need an element type", "input", where);
        return !(required && out->kind == TGC_KIND_TENSOR);
    }
    out->dtype = tgc_onnx_dtype(tt->elem_type);
    if (out->dtype == TGC_DTYPE_INVALID) {
        add_problem(im, "unsupported-dtype", dtype_problem_label(im, tt->elem_type), "place", where);
        return false;
    }
    if (tt->shape == NULL) {
        if (required && out->kind == TGC_KIND_TENSOR) {
            add_problem(im, "unsupported-input",
                        "graph inputs need a shape (at least their rank); the model gives none", "input", where);
            return false;
        }
        return true;
    }
    if (tt->shape->n_dim > TGC_MAX_TENSOR_RANK) {
        add_problem(im, "unsupported-input", "values of rank > 8 are not supported", "value", where);
        return false;
    }
    out->rank = (int)tt->shape->n_dim;
    out->dims = tgc_onnx_alloc(im->arena, (size_t)(out->rank + 1) * sizeof *out->dims);
    if (out->dims == NULL) return false;
    for (int k = 0; k < out->rank; k++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0) {
            out->dims[k] = tgc_onnx_printf(im->arena, "%" PRId64, d->dim_value);
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            add_problem(im, "bad-model", "a dimension is negative", "value", where);
            return false;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param != NULL &&
                   d->dim_param[0] != '\0') {
            out->dims[k] = param_symbol(im, d->dim_param);
        } else { /* unknown: a symbol of its own */
            char wanted[256];
            snprintf(wanted, sizeof wanted, "%s_dim%d", name, k);
            out->dims[k] = tgc_onnx_name(&im->root->symbols, wanted, "D");
        }
    }
    return true;
}

/* A graph input: the top level's need a type (a tensor's, a shape too); a
 * subgraph's take what their node gives them, so theirs may be missing or
 * partial (a Loop body's carried value). */
static void convert_input(tgc_onnx_importer *im, const Onnx__ValueInfoProto *v, const char *name) {
    const char *onnx = str_or_empty(v->name);
    const char *where = tgc_onnx_printf(im->arena, "%s'%s'", im->scope, onnx);
    tgc_onnx_input in;
    if (!convert_type(im, v->type, &in, name, where, im->parent == NULL)) return;
    if (im->parent == NULL && strcmp(onnx, name) != 0) in.source = tgc_onnx_strdup(im->arena, onnx);
    im->doc->inputs[im->doc->n_inputs++] = in;
}

/* ---- Initializers ------------------------------------------------------------------ */

static tgc_onnx_init *new_init(tgc_onnx_importer *im, const char *name) {
    tgc_onnx_doc *d = im->doc;
    if (!grow(im->arena, (void **)&d->inits, &d->cap_inits, d->n_inits + 1, sizeof *d->inits)) return NULL;
    tgc_onnx_init *init = &d->inits[d->n_inits++];
    init->name = name;
    return init;
}

/* Decodes `t` into a new initializer `name` standing for ONNX tensor `onnx`. */
static void add_tensor_init(tgc_onnx_importer *im, const Onnx__TensorProto *t, const char *name, const char *onnx,
                            const char *what) {
    tgc_npy v;
    char err[512] = "";
    tgc_status st = tgc_onnx_tensor_decode(t, im->dir, im->arena, &v, err, sizeof err);
    if (st == TGC_ERR_NOMEM) {
        im->arena->failed = true;
        return;
    }
    if (st == TGC_ERR_UNSUPPORTED && t->has_data_type && tgc_onnx_dtype(t->data_type) == TGC_DTYPE_INVALID) {
        add_problem(im, "unsupported-dtype", dtype_problem_label(im, t->data_type), "place", what);
        return;
    }
    if (st != TGC_OK) {
        add_problem(im, st == TGC_ERR_UNSUPPORTED ? "unsupported-tensor" : "bad-model",
                    tgc_onnx_printf(im->arena, "%s: %s", what, err), "tensor",
                    tgc_onnx_printf(im->arena, "'%s'", onnx));
        return;
    }
    tgc_onnx_init *init = new_init(im, name);
    if (init == NULL) return;
    init->value = v;
    /* The unpacked model's own buffer (t is the importer's to give away:
     * the model is freed, not read, after the graph is built). */
    if (t->has_raw_data && v.data != NULL && v.data == t->raw_data.data)
        init->raw = (ProtobufCBinaryData *)&t->raw_data;
    int32_t id = tensor_id(im, onnx);
    if (id >= 0) im->consts[id] = &init->value;
}

/* A tensor made from a Constant's scalar or list attribute. */
static bool npy_of(tgc_onnx_importer *im, tgc_npy *v, tgc_dtype dt, const void *data, size_t n, bool scalar) {
    memset(v, 0, sizeof *v);
    v->dtype = dt;
    v->rank = scalar ? 0 : 1;
    v->dims[0] = (int64_t)n;
    v->nbytes = n * tgc_dtype_size(dt);
    if (v->nbytes == 0) return true;
    v->data = tgc_onnx_alloc(im->arena, v->nbytes);
    if (v->data == NULL) return false;
    memcpy(v->data, data, v->nbytes);
    return true;
}

/* A string tensor (char * slots in the arena) from Constant's value_string
 * (one, a scalar) or value_strings (a list); a NUL byte cuts a string. */
static bool strings_npy(tgc_onnx_importer *im, tgc_npy *v, const ProtobufCBinaryData *b, size_t n, bool scalar) {
    memset(v, 0, sizeof *v);
    v->dtype = TGC_STRING;
    v->rank = scalar ? 0 : 1;
    v->dims[0] = (int64_t)n;
    v->nbytes = n * sizeof(char *);
    if (n == 0) return true;
    char **slots = tgc_onnx_alloc(im->arena, v->nbytes);
    if (slots == NULL) return false;
    for (size_t i = 0; i < n; i++)
        if ((slots[i] = tgc_onnx_strndup(im->arena, (const char *)b[i].data, b[i].len)) == NULL) return false;
    v->data = slots;
    return true;
}

/* Constant (opset 13) -> an initializer of the same name. */
static void convert_constant(tgc_onnx_importer *im, const Onnx__NodeProto *n, size_t index) {
    const char *where = node_where(im, n, index);
    const char *onnx = n->n_output > 0 ? str_or_empty(n->output[0]) : "";
    const char *name = im->node_names[index];
    if (n->n_attribute != 1) {
        add_problem(im, "bad-model", "a Constant node must have exactly one attribute", "node", where);
        return;
    }
    const Onnx__AttributeProto *a = n->attribute[0];
    const char *an = str_or_empty(a->name);
    tgc_npy v;
    bool ok = true;
    if (strcmp(an, "value") == 0 && a->t != NULL) {
        add_tensor_init(im, a->t, name, onnx, tgc_onnx_printf(im->arena, "Constant node %s", where));
        return;
    } else if (strcmp(an, "value_float") == 0) {
        float f = a->f;
        ok = npy_of(im, &v, TGC_FLOAT32, &f, 1, true);
    } else if (strcmp(an, "value_floats") == 0) {
        ok = npy_of(im, &v, TGC_FLOAT32, a->floats, a->n_floats, false);
    } else if (strcmp(an, "value_int") == 0) {
        ok = npy_of(im, &v, TGC_INT64, &a->i, 1, true);
    } else if (strcmp(an, "value_ints") == 0) {
        ok = npy_of(im, &v, TGC_INT64, a->ints, a->n_ints, false);
    } else if (strcmp(an, "value_string") == 0 || strcmp(an, "value_strings") == 0) {
        ok = strings_npy(im, &v, an[12] == '\0' ? &a->s : a->strings, an[12] == '\0' ? 1 : a->n_strings,
                         an[12] == '\0');
    } else {
        add_problem(im, "unsupported-attribute",
                    tgc_onnx_printf(im->arena, "op 'Constant': attribute '%s' is not supported", an), "node",
                    where);
        return;
    }
    if (!ok) return;
    tgc_onnx_init *init = new_init(im, name);
    if (init == NULL) return;
    init->value = v;
    int32_t id = tensor_id(im, onnx);
    if (id >= 0) im->consts[id] = &init->value;
}

/* ---- Nodes ------------------------------------------------------------------------- */

const Onnx__AttributeProto *tgc_onnx_node_attr(const Onnx__NodeProto *n, const char *name, size_t *index) {
    for (size_t i = 0; i < n->n_attribute; i++)
        if (strcmp(str_or_empty(n->attribute[i]->name), name) == 0) {
            if (index) *index = i;
            return n->attribute[i];
        }
    return NULL;
}

static tgc_onnx_node *new_node(tgc_onnx_importer *im) {
    tgc_onnx_doc *d = im->doc;
    if (d->n_nodes == d->cap_nodes) { /* capacity is reserved up front: pointers stay valid */
        im->arena->failed = true;
        return NULL;
    }
    return &d->nodes[d->n_nodes++];
}

static const char *derived_name(tgc_onnx_node_ctx *c, const char *suffix) {
    char wanted[512];
    snprintf(wanted, sizeof wanted, "%s%s", c->out->name, suffix);
    return tgc_onnx_name(&c->im->root->names, wanted, "node");
}

const char *tgc_onnx_add_int64s(tgc_onnx_node_ctx *c, const char *suffix, const int64_t *v, size_t n, bool scalar) {
    const char *name = derived_name(c, suffix);
    tgc_onnx_init *init = name ? new_init(c->im, name) : NULL;
    if (init == NULL || !npy_of(c->im, &init->value, TGC_INT64, v, n, scalar)) return NULL;
    return name;
}

const Onnx__AttributeProto *tgc_onnx_consume_attr(tgc_onnx_node_ctx *c, const char *name) {
    size_t i;
    const Onnx__AttributeProto *a = tgc_onnx_node_attr(c->n, name, &i);
    if (a != NULL) c->consumed[i] = true;
    return a;
}

const char *tgc_onnx_node_problem(tgc_onnx_node_ctx *c, const char *what) {
    return tgc_onnx_printf(tgc_onnx_importer_arena(c->im), "op '%s' (opset %" PRId64 "): %s", c->n->op_type, c->opset,
                           what);
}

const char *tgc_onnx_add_float(tgc_onnx_node_ctx *c, const char *suffix, float v) {
    const char *name = derived_name(c, suffix);
    tgc_onnx_init *init = name ? new_init(c->im, name) : NULL;
    if (init == NULL || !npy_of(c->im, &init->value, TGC_FLOAT32, &v, 1, true)) return NULL;
    return name;
}

const char *tgc_onnx_add_floats(tgc_onnx_node_ctx *c, const char *suffix, const float *v, size_t n) {
    const char *name = derived_name(c, suffix);
    tgc_onnx_init *init = name ? new_init(c->im, name) : NULL;
    if (init == NULL || !npy_of(c->im, &init->value, TGC_FLOAT32, v, n, false)) return NULL;
    return name;
}

tgc_onnx_node *tgc_onnx_add_node(tgc_onnx_node_ctx *c, const char *suffix, const char *op, const char *const *inputs,
                                 int n_inputs) {
    const char *name = derived_name(c, suffix);
    tgc_onnx_node *node = name ? new_node(c->im) : NULL;
    const char **ins = tgc_onnx_alloc(c->im->arena, (size_t)(n_inputs + 1) * sizeof *ins);
    if (node == NULL || ins == NULL) return NULL;
    for (int i = 0; i < n_inputs; i++)
        ins[i] = inputs[i];
    node->name = name;
    node->op = op;
    node->inputs = ins;
    node->n_inputs = n_inputs;
    return node;
}

static tgc_onnx_attr *new_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, tgc_attr_type type) {
    if (!grow(im->arena, (void **)&node->attrs, &node->cap_attrs, node->n_attrs + 1, sizeof *node->attrs)) return NULL;
    tgc_onnx_attr *a = &node->attrs[node->n_attrs++];
    a->name = name;
    a->type = type;
    return a;
}

bool tgc_onnx_set_int_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, int64_t v) {
    tgc_onnx_attr *a = new_attr(im, node, name, TGC_ATTR_INT);
    if (a == NULL) return false;
    a->i = v;
    return true;
}

bool tgc_onnx_set_string_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, const char *v) {
    tgc_onnx_attr *a = new_attr(im, node, name, TGC_ATTR_STRING);
    if (a == NULL) return false;
    a->s = v;
    return true;
}

bool tgc_onnx_set_input(tgc_onnx_node_ctx *c, int i, const char *ref) {
    tgc_onnx_node *out = c->out;
    if (ref == NULL) return false;
    if (i >= out->n_inputs) {
        const char **ins = tgc_onnx_alloc(c->im->arena, (size_t)(i + 2) * sizeof *ins);
        if (ins == NULL) return false;
        for (int k = 0; k <= i; k++)
            ins[k] = k < out->n_inputs ? out->inputs[k] : "";
        out->inputs = ins;
        out->n_inputs = i + 1;
    }
    out->inputs[i] = ref;
    return true;
}

static const char *onnx_attr_type_name(int t) {
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "float";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "int";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "string";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "tensor";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "graph";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "floats";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "ints";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "strings";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "tensors";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "graphs";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "sparse tensor";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "sparse tensors";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "type";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "types";
    default: return "undefined";
    }
}

/* The attribute's type; IR version 1 models leave `type` out, and the field
 * that is set tells it. */
static int attr_type_of(const Onnx__AttributeProto *a) {
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) return (int)a->type;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->tp) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* A string attribute's bytes as a C string: no NUL inside. */
static const char *attr_string(tgc_onnx_importer *im, ProtobufCBinaryData b) {
    if (b.len > 0 && memchr(b.data, '\0', b.len) != NULL) return NULL;
    return tgc_onnx_strndup(im->arena, (const char *)b.data, b.len);
}

static const tgc_onnx_doc *convert_subgraph(tgc_onnx_node_ctx *c, const Onnx__GraphProto *g, const char *attr);

/* Types ONNX attribute `a` of the node in `c` by the schema entry `d`. */
static void convert_attr(tgc_onnx_node_ctx *c, const Onnx__AttributeProto *a, const tgc_attr_def *d) {
    tgc_onnx_importer *im = c->im;
    const char *an = str_or_empty(a->name);
    int t = attr_type_of(a);
    int want;
    switch (d->type) {
    case TGC_ATTR_INT: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT; break;
    case TGC_ATTR_FLOAT: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT; break;
    case TGC_ATTR_STRING: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING; break;
    case TGC_ATTR_INTS: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS; break;
    case TGC_ATTR_FLOATS: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS; break;
    case TGC_ATTR_STRINGS: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS; break;
    case TGC_ATTR_GRAPH: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH; break;
    default: want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR; break;
    }
    /* An empty list has no field set in IR 1 models; take it as the type wanted. */
    if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED &&
        (d->type == TGC_ATTR_INTS || d->type == TGC_ATTR_FLOATS || d->type == TGC_ATTR_STRINGS))
        t = want;
    if (a->ref_attr_name != NULL && a->ref_attr_name[0] != '\0') {
        tgc_onnx_node_unsupported(
            c, "unsupported-attribute",
            tgc_onnx_printf(im->arena, "op '%s': attribute '%s' refers to a function's attribute", c->n->op_type, an));
        return;
    }
    if (t != want) {
        tgc_onnx_node_unsupported(c, "bad-model",
                                  tgc_onnx_printf(im->arena, "op '%s': attribute '%s' is of type %s, the op takes %s",
                                                  c->n->op_type, an, onnx_attr_type_name(t),
                                                  onnx_attr_type_name(want)));
        return;
    }
    tgc_onnx_attr *o = new_attr(im, c->out, d->name, d->type);
    if (o == NULL) return;
    switch (d->type) {
    case TGC_ATTR_INT: o->i = a->i; break;
    case TGC_ATTR_FLOAT: o->f = a->f; break;
    case TGC_ATTR_STRING:
        o->s = attr_string(im, a->s);
        if (o->s == NULL && !im->arena->failed)
            tgc_onnx_node_unsupported(
                c, "bad-model",
                tgc_onnx_printf(im->arena, "op '%s': attribute '%s' holds a NUL byte", c->n->op_type, an));
        break;
    case TGC_ATTR_INTS:
        o->ints = a->ints;
        o->n = a->n_ints;
        break;
    case TGC_ATTR_FLOATS: {
        double *f = tgc_onnx_alloc(im->arena, (a->n_floats + 1) * sizeof *f);
        if (f == NULL) return;
        for (size_t i = 0; i < a->n_floats; i++)
            f[i] = a->floats[i];
        o->floats = f;
        o->n = a->n_floats;
        break;
    }
    case TGC_ATTR_STRINGS: {
        const char **s = tgc_onnx_alloc(im->arena, (a->n_strings + 1) * sizeof *s);
        if (s == NULL) return;
        for (size_t i = 0; i < a->n_strings; i++)
            if ((s[i] = attr_string(im, a->strings[i])) == NULL) s[i] = "";
        o->strings = s;
        o->n = a->n_strings;
        break;
    }
    case TGC_ATTR_TENSOR: {
        tgc_npy *v = tgc_onnx_alloc(im->arena, sizeof *v);
        char err[512] = "";
        tgc_status st = v ? tgc_onnx_tensor_decode(a->t, im->dir, im->arena, v, err, sizeof err) : TGC_ERR_NOMEM;
        if (st == TGC_OK)
            o->tensor = v;
        else if (st == TGC_ERR_UNSUPPORTED && a->t->has_data_type &&
                 tgc_onnx_dtype(a->t->data_type) == TGC_DTYPE_INVALID)
            add_problem(im, "unsupported-dtype", dtype_problem_label(im, a->t->data_type), "place",
                        tgc_onnx_printf(im->arena, "%s node %s attribute '%s'", c->n->op_type, c->node_where, an));
        else if (st != TGC_ERR_NOMEM)
            tgc_onnx_node_unsupported(
                c, st == TGC_ERR_UNSUPPORTED ? "unsupported-attribute" : "bad-model",
                tgc_onnx_printf(im->arena, "op '%s': attribute '%s': %s", c->n->op_type, an, err));
        break;
    }
    case TGC_ATTR_GRAPH: o->graph = a->g != NULL ? convert_subgraph(c, a->g, an) : NULL; break;
    }
}

/* The schema entry for ONNX attribute `name` of `op`: tgc's entry of the
 * same name, or of the name tgc spells it with (ArgMax's select_last_index
 * is select_last_point_index in graph/ops_reduce.c). */
static const tgc_attr_def *schema_attr(const tgc_op_def *def, const char *name) {
    static const char *const spellings[][3] = {
        {"ArgMax", "select_last_index", "select_last_point_index"},
        {"ArgMin", "select_last_index", "select_last_point_index"},
    };
    const tgc_attr_def *d = tgc_op_attr_def(def, name);
    for (size_t i = 0; d == NULL && i < sizeof spellings / sizeof spellings[0]; i++)
        if (strcmp(def->name, spellings[i][0]) == 0 && strcmp(name, spellings[i][1]) == 0)
            d = tgc_op_attr_def(def, spellings[i][2]);
    return d;
}

static bool domain_is_onnx(const char *d) { return d == NULL || d[0] == '\0' || strcmp(d, "ai.onnx") == 0; }

/* Scan before opset 9 scans batches: its inputs (sequence_lens, states...,
 * scan inputs...) have a batch axis 0 and scan along axis 1. Without
 * sequence_lens that is one opset-9 Scan per batch element, so it becomes
 * a Scan over axis 0 of every input (no states) whose body runs the
 * original Scan on one batch element, giving its final states and scan
 * outputs, which the outer Scan stacks along axis 0 again. */
static void convert_scan8(tgc_onnx_node_ctx *c) {
    tgc_onnx_importer *im = c->im;
    tgc_onnx_arena *a = im->arena;
    const Onnx__AttributeProto *body = tgc_onnx_node_attr(c->n, "body", NULL);
    const Onnx__AttributeProto *m = tgc_onnx_node_attr(c->n, "num_scan_inputs", NULL);
    const Onnx__AttributeProto *dirs = tgc_onnx_node_attr(c->n, "directions", NULL);
    int all = c->out->n_inputs - 1;
    if (body == NULL || body->g == NULL || m == NULL || all < 1 || m->i < 1 || m->i > all) {
        tgc_onnx_node_unsupported(c, "bad-model", "op 'Scan' (opset 8): it needs body, num_scan_inputs and inputs");
        return;
    }
    if (c->out->inputs[0][0] != '\0') {
        tgc_onnx_node_unsupported(c, "unsupported-attribute", "op 'Scan' (opset 8): sequence_lens is not supported");
        return;
    }
    for (size_t i = 0; i < c->n->n_attribute; i++) {
        const char *an = str_or_empty(c->n->attribute[i]->name);
        if (strcmp(an, "body") != 0 && strcmp(an, "num_scan_inputs") != 0 && strcmp(an, "directions") != 0)
            tgc_onnx_node_unsupported(c, "unsupported-attribute",
                                      tgc_onnx_printf(a, "op 'Scan' (opset 8): attribute '%s' is not supported", an));
    }
    const tgc_onnx_doc *inner_body = convert_subgraph(c, body->g, "body");
    int outputs = (int)c->n->n_output;
    tgc_onnx_doc *outer = tgc_onnx_alloc(a, sizeof *outer);
    tgc_onnx_node *inner = tgc_onnx_alloc(a, sizeof *inner);
    const char **ins = tgc_onnx_alloc(a, (size_t)all * sizeof *ins);
    if (inner_body == NULL || outer == NULL || inner == NULL || ins == NULL) return;
    outer->inputs = tgc_onnx_alloc(a, (size_t)all * sizeof *outer->inputs);
    outer->outputs = tgc_onnx_alloc(a, (size_t)outputs * sizeof *outer->outputs);
    inner->name = tgc_onnx_name(&im->root->names, tgc_onnx_printf(a, "%s/per_batch", c->out->name), "scan");
    if (outer->inputs == NULL || outer->outputs == NULL || inner->name == NULL) return;
    for (int i = 0; i < all; i++) {
        const char *name = tgc_onnx_name(&im->root->names, tgc_onnx_printf(a, "%s/batch_in%d", c->out->name, i), "x");
        outer->inputs[i] = (tgc_onnx_input){.name = name, .dtype = TGC_DTYPE_INVALID, .rank = -1};
        ins[i] = name;
    }
    for (int k = 0; k < outputs; k++)
        outer->outputs[k] = k == 0 ? inner->name : tgc_onnx_printf(a, "%s:%d", inner->name, k);
    outer->n_inputs = all;
    outer->n_outputs = outputs;
    outer->nodes = inner;
    outer->n_nodes = outer->cap_nodes = 1;
    inner->op = "Scan";
    inner->inputs = ins;
    inner->n_inputs = all;
    tgc_onnx_attr *ib = new_attr(im, inner, "body", TGC_ATTR_GRAPH);
    if (ib != NULL) ib->graph = inner_body;
    tgc_onnx_set_int_attr(im, inner, "num_scan_inputs", m->i);
    if (dirs != NULL && dirs->n_ints > 0) {
        tgc_onnx_attr *d = new_attr(im, inner, "scan_input_directions", TGC_ATTR_INTS);
        if (d != NULL) {
            d->ints = dirs->ints;
            d->n = dirs->n_ints;
        }
    }
    /* The outer Scan: every input scanned along its batch axis. */
    for (int i = 0; i < all; i++) c->out->inputs[i] = c->out->inputs[i + 1];
    c->out->n_inputs = all;
    tgc_onnx_attr *ob = new_attr(im, c->out, "body", TGC_ATTR_GRAPH);
    if (ob != NULL) ob->graph = outer;
    tgc_onnx_set_int_attr(im, c->out, "num_scan_inputs", all);
}

/* Optional's `type` (a TypeProto) as the format's type string. */
static bool convert_optional_type(tgc_onnx_node_ctx *c) {
    size_t i;
    const Onnx__AttributeProto *a = tgc_onnx_node_attr(c->n, "type", &i);
    if (a == NULL) return true;
    c->consumed[i] = true;
    uint8_t kind;
    const Onnx__TypeProto__Tensor *tt = a->tp != NULL ? tensor_type_of(a->tp, &kind) : NULL;
    tgc_dtype dt = tt != NULL && tt->has_elem_type ? tgc_onnx_dtype(tt->elem_type) : TGC_DTYPE_INVALID;
    if (dt == TGC_DTYPE_INVALID || (kind & TGC_KIND_OPTIONAL))
        return tgc_onnx_node_unsupported(c, "unsupported-attribute",
                                         "op 'Optional': attribute 'type' is no tensor or sequence type tgc has");
    char buf[64];
    return tgc_onnx_set_string_attr(c->im, c->out, "type",
                                    tgc_onnx_strdup(c->im->arena, tgc_type_str(dt, kind, buf, sizeof buf)));
}

/* A node whose op (or its form) tgc lacks, already reported: it becomes
 * _Unsupported (graph/ops_internal.c) with its inputs, so that the graph
 * tgc_onnx_import checks a refused model with has every other node; its
 * subgraphs are converted for the problems inside them, then dropped. */
static void refuse_node(tgc_onnx_node_ctx *c, const char *op) {
    c->out->op = "_Unsupported";
    c->out->n_attrs = 0;
    tgc_onnx_set_string_attr(c->im, c->out, "op", op);
    for (size_t i = 0; i < c->n->n_attribute; i++) {
        const Onnx__AttributeProto *a = c->n->attribute[i];
        if (a->g != NULL) convert_subgraph(c, a->g, str_or_empty(a->name));
    }
}

static void convert_node_body(tgc_onnx_importer *im, const Onnx__NodeProto *n, size_t index) {
    const char *op = str_or_empty(n->op_type);
    const char *where = node_where(im, n, index);
    const char *refused = NULL; /* the op tgc lacks, as _Unsupported's `op` */
    if (!domain_is_onnx(n->domain)) {
        add_problem(im, "unsupported-op",
                    tgc_onnx_printf(im->arena, "unsupported op '%s' of domain '%s'", op, n->domain), "node", where);
        refused = tgc_onnx_printf(im->arena, "%s.%s", n->domain, op);
    } else if (im->no_onnx_opset) {
        add_problem(im, "bad-model", "an op of the ONNX domain, but the model imports no ONNX opset", "node", where);
        return;
    }
    if (refused == NULL && strcmp(op, "Constant") == 0) {
        convert_constant(im, n, index);
        return;
    }
    /* Dropout, Sum, Upsample and Scatter are rewritten (onnx_legacy.c), SplitToSequence and
     * SequenceAt where they make a Split (onnx_sequence_split.c); tgc's own ops are not ONNX's. */
    const tgc_op_def *def = op[0] != '_' && refused == NULL ? tgc_op_find(op) : NULL;
    if (refused == NULL && def == NULL && strcmp(op, "Dropout") != 0 && strcmp(op, "Sum") != 0 &&
        strcmp(op, "Upsample") != 0 && strcmp(op, "Scatter") != 0 && strcmp(op, "SplitToSequence") != 0 &&
        strcmp(op, "SequenceAt") != 0 && !tgc_onnx_opset_rewritten_op(op)) {
        add_problem(im, "unsupported-op", tgc_onnx_printf(im->arena, "unsupported op '%s'", op), "node", where);
        refused = op;
    }
    tgc_onnx_node *out = new_node(im);
    bool *consumed = tgc_onnx_alloc(im->arena, n->n_attribute + 1);
    const char **ins = tgc_onnx_alloc(im->arena, (n->n_input + 1) * sizeof *ins);
    if (out == NULL || consumed == NULL || ins == NULL) return;
    out->name = im->node_names[index];
    if (n->name != NULL && n->name[0] != '\0' && strcmp(n->name, out->name) != 0) out->source = n->name;
    out->op = def ? def->name : op;
    out->inputs = ins;
    for (size_t k = 0; k < n->n_input; k++) {
        const char *in = str_or_empty(n->input[k]);
        const char *ref = in[0] ? lookup_ref(im, in) : "";
        if (ref == NULL) {
            add_problem(
                im, "bad-model",
                tgc_onnx_printf(im->arena, "tensor '%s' is read but no input, initializer or node makes it", in),
                "node", where);
            ins[k] = "";
        } else {
            ins[k] = ref;
        }
    }
    out->n_inputs = (int)n->n_input;
    tgc_onnx_node_ctx c = {im, n, out, consumed, where, im->opset};
    if (where == NULL) return;
    if (refused != NULL) {
        refuse_node(&c, refused);
        return;
    }
    if (strcmp(op, "Scan") == 0 && im->opset < 9) {
        convert_scan8(&c);
        return;
    }
    if (!tgc_onnx_legacy_convert(&c, im->opset)) {
        refuse_node(&c, op);
        return;
    }
    def = tgc_op_find(out->op); /* the conversion may change the op */
    if (def == NULL) return;
    if (strcmp(out->op, "Optional") == 0 && !convert_optional_type(&c)) return;
    for (size_t i = 0; i < n->n_attribute; i++) {
        if (consumed[i]) continue;
        const Onnx__AttributeProto *a = n->attribute[i];
        const tgc_attr_def *d = schema_attr(def, str_or_empty(a->name));
        if (d == NULL) {
            add_problem(
                im, "unsupported-attribute",
                tgc_onnx_printf(im->arena, "op '%s': attribute '%s' is not supported", op, str_or_empty(a->name)),
                "node", where);
            continue;
        }
        convert_attr(&c, a, d);
    }
    if (strcmp(out->op, "Cast") == 0) {
        const Onnx__AttributeProto *to = tgc_onnx_node_attr(n, "to", NULL);
        if (to != NULL && attr_type_of(to) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
            tgc_onnx_dtype(to->i) == TGC_DTYPE_INVALID)
            add_problem(im, "unsupported-dtype", dtype_problem_label(im, to->i), "place",
                        tgc_onnx_printf(im->arena, "Cast node %s", where));
    }
    /* Outputs the op does not have in tgc are refused only when read. */
    for (size_t k = def->max_outputs < 0 ? n->n_output : (size_t)def->max_outputs; k < n->n_output; k++)
        if (tgc_onnx_tensor_used(im, n->output[k]))
            add_problem(im, "unsupported-output",
                        tgc_onnx_printf(im->arena, "op '%s': output %zu is not supported", op, k), "node", where);
    while (out->n_inputs > 0 && out->inputs[out->n_inputs - 1][0] == '\0')
        out->n_inputs--;
}

/* Converts node n; a node with a problem of its own (an attribute or
 * dtype tgc lacks, an input no one makes) becomes _Unsupported, as a
 * refused op does, so that the check of a refused model reports it once. */
static void convert_node(tgc_onnx_importer *im, const Onnx__NodeProto *n, size_t index) {
    int problems = im->node_problems, first = im->doc->n_nodes;
    convert_node_body(im, n, index);
    if (im->node_problems == problems || im->doc->n_nodes == first) return;
    tgc_onnx_node *out = &im->doc->nodes[first];
    if (strcmp(out->op, "_Unsupported") == 0) return;
    out->op = "_Unsupported";
    out->n_attrs = 0;
    tgc_onnx_set_string_attr(im, out, "op", str_or_empty(n->op_type));
}

/* ---- The model ------------------------------------------------------------------------ */

static int64_t onnx_opset(const Onnx__ModelProto *m, bool *found) {
    *found = false;
    int64_t v = 0;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (domain_is_onnx(o->domain)) {
            *found = true;
            v = o->has_version ? o->version : 0;
        }
    }
    return v;
}

static char *dir_of(tgc_onnx_arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) return tgc_onnx_strdup(a, ".");
    if (slash == path) return tgc_onnx_strdup(a, "/");
    return tgc_onnx_strndup(a, path, (size_t)(slash - path));
}

/* Converts im->g into im->doc: pass 1 (names) and, unless names_only,
 * pass 2 (inputs, initializers, nodes, outputs). For the top-level graph
 * and for every subgraph (convert_subgraph). */
static void convert_graph(tgc_onnx_importer *im, bool names_only) {
    tgc_onnx_arena *arena = im->arena;
    tgc_onnx_doc *doc = im->doc;
    const Onnx__GraphProto *g = im->g;
    size_t n_tensors = g->n_input + g->n_initializer + 1;
    for (size_t i = 0; i < g->n_node; i++)
        n_tensors += g->node[i]->n_output;
    im->refs = tgc_onnx_alloc(arena, n_tensors * sizeof *im->refs);
    im->consts = tgc_onnx_alloc(arena, n_tensors * sizeof *im->consts);
    im->node_names = tgc_onnx_alloc(arena, (g->n_node + 1) * sizeof *im->node_names);
    doc->inputs = tgc_onnx_alloc(arena, (g->n_input + 1) * sizeof *doc->inputs);
    /* A node gives at most thirteen (CenterCropPad: twelve shape-arithmetic
     * nodes and the Pad, onnx_opset_upgrade.c), or one per input (Sum: a
     * chain of Adds). */
    size_t cap_nodes = 1;
    for (size_t i = 0; i < g->n_node; i++)
        cap_nodes += 13 + g->node[i]->n_input;
    doc->cap_nodes = cap_nodes < INT32_MAX ? (int)cap_nodes : 0;
    doc->nodes = tgc_onnx_alloc(arena, (size_t)doc->cap_nodes * sizeof *doc->nodes);
    if (!arena->failed) name_everything(im);
    if (!arena->failed && !names_only) {
        for (size_t i = 0; i < g->n_input; i++) {
            int32_t id = tensor_id(im, str_or_empty(g->input[i]->name));
            if (fed_input(im, i) && id >= 0) convert_input(im, g->input[i], im->refs[id]);
        }
        for (size_t i = 0; i < g->n_initializer; i++) {
            const char *onnx = str_or_empty(g->initializer[i]->name);
            int32_t id = tensor_id(im, onnx);
            if (id >= 0)
                add_tensor_init(im, g->initializer[i], im->refs[id], onnx,
                                tgc_onnx_printf(arena, "%sinitializer '%s'", im->scope, onnx));
        }
        if (g->n_sparse_initializer > 0)
            add_problem(im, "unsupported-tensor", "sparse initializers are not supported", "tensor", "graph");
        for (size_t i = 0; i < g->n_node && !arena->failed; i++)
            convert_node(im, g->node[i], i);
        doc->outputs = tgc_onnx_alloc(arena, (g->n_output + 1) * sizeof *doc->outputs);
        doc->output_sources = tgc_onnx_alloc(arena, (g->n_output + 1) * sizeof *doc->output_sources);
        for (size_t i = 0; i < g->n_output && doc->outputs != NULL && doc->output_sources != NULL; i++) {
            const Onnx__ValueInfoProto *v = g->output[i];
            const char *onnx = str_or_empty(v->name);
            const char *ref = lookup_ref(im, onnx);
            if (ref == NULL) {
                add_problem(im, "bad-model", "graph output that nothing makes", "output",
                            tgc_onnx_printf(arena, "%s'%s'", im->scope, onnx));
                continue;
            }
            /* The top level's outputs keep their ONNX names: what users fetch. */
            doc->output_sources[doc->n_outputs] = im->parent == NULL && strcmp(onnx, ref) != 0 ? onnx : NULL;
            doc->outputs[doc->n_outputs++] = ref;
            tgc_onnx_input type = {0};
            convert_type(im, v->type, &type, ref, tgc_onnx_printf(arena, "%soutput '%s'", im->scope, onnx), false);
        }
        if (g->n_output == 0) add_problem(im, "bad-model", "the graph has no outputs", "graph", im->scope);
    }
    if (names_only && !arena->failed)
        for (size_t i = 0; i < g->n_input; i++) {
            int32_t id = tensor_id(im, str_or_empty(g->input[i]->name));
            if (fed_input(im, i) && id >= 0) doc->inputs[doc->n_inputs++].name = im->refs[id];
        }
}

/* Converts subgraph `g`, attribute `attr` of the node in `c`, into a new
 * document (arena memory): its own names (unique in the whole file), its
 * own tensors, and the enclosing graphs' tensors read by name. NULL when
 * out of memory or nested too deep (reported). */
static const tgc_onnx_doc *convert_subgraph(tgc_onnx_node_ctx *c, const Onnx__GraphProto *g, const char *attr) {
    tgc_onnx_importer *up = c->im;
    tgc_onnx_arena *arena = up->arena;
    if (up->depth + 1 > TGC_MAX_SUBGRAPH_DEPTH) {
        add_problem(up, "unsupported-attribute",
                    tgc_onnx_printf(arena, "subgraphs nest deeper than %d levels", TGC_MAX_SUBGRAPH_DEPTH), "node",
                    c->node_where);
        return NULL;
    }
    tgc_onnx_doc *doc = tgc_onnx_alloc(arena, sizeof *doc);
    tgc_onnx_importer *im = tgc_onnx_alloc(arena, sizeof *im);
    if (doc == NULL || im == NULL) return NULL;
    *im = (tgc_onnx_importer){.g = g, .path = up->path, .dir = up->dir, .diags = up->diags, .arena = arena,
                              .doc = doc, .opset = up->opset, .no_onnx_opset = up->no_onnx_opset, .root = up->root,
                              .parent = up, .depth = up->depth + 1};
    im->scope = tgc_onnx_printf(arena, "%s %s: ", c->node_where, attr); /* node_where starts with up->scope */
    doc->name = g->name != NULL && g->name[0] != '\0' ? tgc_onnx_name(&up->root->names, g->name, "graph") : NULL;
    doc->source = up->doc->source;
    doc->producer = up->doc->producer;
    doc->opset = up->opset;
    if (im->scope != NULL) convert_graph(im, false);
    tgc_strmap_release(&im->tensors);
    tgc_strmap_release(&im->used);
    tgc_onnx_seq_index_release(im->seq_index);
    return arena->failed ? NULL : doc;
}

static void release_importer(tgc_onnx_importer *im) {
    tgc_onnx_namer_release(&im->names);
    tgc_onnx_namer_release(&im->symbols);
    tgc_strmap_release(&im->dim_params);
    tgc_strmap_release(&im->tensors);
    tgc_strmap_release(&im->used);
    tgc_strmap_release(&im->problem_ids);
    tgc_onnx_seq_index_release(im->seq_index);
}

/* Pass 1 alone (for tgc_onnx_input_names) or both passes. External data
 * resolves beneath data_dir (NULL: the model's folder). */
static tgc_status run_import(const Onnx__ModelProto *m, const char *path, const char *data_dir, tgc_onnx_arena *arena,
                             tgc_diags *diags, tgc_onnx_doc *doc, bool names_only) {
    memset(doc, 0, sizeof *doc);
    tgc_onnx_importer im = {0};
    im.root = &im;
    im.scope = "";
    im.g = m->graph;
    im.path = path;
    im.diags = diags;
    im.arena = arena;
    im.doc = doc;
    im.names.arena = arena;
    im.symbols.arena = arena;
    im.symbols.symbols = true;
    im.dir = data_dir != NULL ? tgc_onnx_strdup(arena, data_dir) : dir_of(arena, path);
    doc->source = path;
    const char *pv = str_or_empty(m->producer_version);
    doc->producer = tgc_onnx_printf(arena, "%s%s%s", str_or_empty(m->producer_name), pv[0] ? " " : "", pv);
    tgc_onnx_namer graph_name = {.arena = arena};
    doc->name = tgc_onnx_name(&graph_name, str_or_empty(im.g->name), "model");
    tgc_onnx_namer_release(&graph_name);

    bool found;
    im.opset = onnx_opset(m, &found);
    doc->opset = im.opset;
    /* Without an ONNX opset only other domains' ops can be used (reported below). */
    im.no_onnx_opset = !found;
    if (!tgc_onnx_opset_supported(diags, path, found, im.opset))
        return found && im.opset > TGC_ONNX_OPSET_MAX ? TGC_ERR_UNSUPPORTED : TGC_ERR_INVALID;

    tgc_status st = TGC_OK;
    if (!arena->failed) convert_graph(&im, names_only);
    report_problems(&im);
    if (arena->failed) {
        tgc_diag_error(diags, path, no_pos, "out-of-memory", "out of memory importing the model");
        st = TGC_ERR_NOMEM;
    } else if (im.invalid) {
        st = TGC_ERR_INVALID;
    } else if (im.n_problems > 0) {
        st = TGC_ERR_UNSUPPORTED;
    }
    release_importer(&im);
    return st;
}

tgc_status tgc_onnx_convert(const Onnx__ModelProto *m, const char *path, tgc_onnx_arena *arena, tgc_diags *diags,
                            tgc_onnx_doc *doc) {
    return run_import(m, path, NULL, arena, diags, doc, false);
}

/* ---- Public API ------------------------------------------------------------------------ */

tgc_status tgc_onnx_import(const char *onnx_path, const char *yaml_out_path, tgc_diags *diags) {
    return tgc_onnx_import_with(onnx_path, yaml_out_path, NULL, diags);
}

/* What to do with a converted model: write it as YAML at yaml_path, or
 * build it into *graph. */
typedef struct import_sink {
    const char *yaml_path;
    const tgc_load_limits *limits;
    tgc_graph **graph;
} import_sink;

/* Reads and converts the model at onnx_path (external data beneath
 * opts->weights_dir or its folder) and hands the document to `sink`; a
 * model refused as unsupported is probed for its other problems. */
static tgc_status import_into(const char *onnx_path, const tgc_graph_load_options *opts, tgc_diags *diags,
                              const import_sink *sink) {
    const char *data_dir = opts != NULL ? opts->weights_dir : NULL;
    if (data_dir != NULL) {
        struct stat dst;
        int e = stat(data_dir, &dst) != 0 ? errno : S_ISDIR(dst.st_mode) ? 0 : ENOTDIR;
        if (e != 0) {
            tgc_diag_error(diags, data_dir, no_pos, "io", "the weights folder cannot be used: %s", strerror(e));
            return TGC_ERR_IO;
        }
    }
    Onnx__ModelProto *m = NULL;
    tgc_status st = tgc_onnx_model_load(onnx_path, tgc_load_limits_of(opts).file_bytes, diags, &m);
    if (st != TGC_OK) return st;
    tgc_onnx_arena arena = {0};
    tgc_onnx_doc doc;
    st = run_import(m, onnx_path, data_dir, &arena, diags, &doc, false);
    if (st == TGC_OK)
        st = sink->yaml_path != NULL ? tgc_onnx_write(&doc, sink->yaml_path, diags)
                                     : tgc_onnx_build(&doc, sink->limits, true, diags, sink->graph);
    else if (st == TGC_ERR_UNSUPPORTED)
        tgc_onnx_probe(&doc, onnx_path, diags);
    tgc_onnx_arena_release(&arena);
    tgc_onnx_model_free(m);
    return st;
}

/* st, or TGC_ERR_UNSUPPORTED for TGC_ERR_INVALID when a message from
 * index `from` of diags is of rule "unsupported" (inference's word for an
 * attribute value or a dtype tgc lacks). */
static tgc_status unsupported_if_said(tgc_status st, const tgc_diags *diags, size_t from) {
    if (st == TGC_ERR_INVALID)
        for (size_t i = from; i < tgc_diags_count(diags); i++)
            if (strcmp(tgc_diag_rule(diags, i), "unsupported") == 0) return TGC_ERR_UNSUPPORTED;
    return st;
}

tgc_status tgc_onnx_load_with(const char *onnx_path, const tgc_graph_load_options *opts, tgc_diags *diags,
                              tgc_graph **out) {
    *out = NULL;
    tgc_load_limits limits = tgc_load_limits_of(opts);
    size_t before = tgc_diags_count(diags);
    tgc_status st = import_into(onnx_path, opts, diags, &(import_sink){.limits = &limits, .graph = out});
    return unsupported_if_said(st, diags, before);
}

tgc_status tgc_onnx_import_with(const char *onnx_path, const char *yaml_out_path, const tgc_graph_load_options *opts,
                                tgc_diags *diags) {
    tgc_status st = import_into(onnx_path, opts, diags, &(import_sink){.yaml_path = yaml_out_path});
    if (st != TGC_OK) return st;
    /* What tgc cannot run is better told now than at the first run. */
    tgc_graph *g = NULL;
    size_t before = tgc_diags_count(diags);
    tgc_graph_load_options written = opts != NULL ? *opts : (tgc_graph_load_options){0};
    written.weights_dir = NULL; /* its weights are beside it now */
    written.max_file_bytes = 0; /* the limit was the .onnx file's */
    st = tgc_graph_load_with(yaml_out_path, &written, diags, &g);
    tgc_graph_free(g);
    return unsupported_if_said(st, diags, before);
}

/* Copies list[0..n) into a new tgc_malloc'd array of new strings. */
static tgc_status copy_list(const char *const *list, int n, int *count, char ***names) {
    char **out = tgc_calloc((size_t)n + 1, sizeof *out);
    if (out == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        if ((out[i] = tgc_strdup(list[i])) == NULL) {
            tgc_onnx_names_free(out, i);
            return TGC_ERR_NOMEM;
        }
    }
    *names = out;
    *count = n;
    return TGC_OK;
}

/* The distinct op types of m's graph, in order of first use. */
static tgc_status op_types(const Onnx__ModelProto *m, tgc_onnx_arena *arena, const char ***list, int *n) {
    const Onnx__GraphProto *g = m->graph;
    tgc_strmap seen = {0};
    *list = tgc_onnx_alloc(arena, (g->n_node + 1) * sizeof **list);
    *n = 0;
    tgc_status st = *list ? TGC_OK : TGC_ERR_NOMEM;
    for (size_t i = 0; st == TGC_OK && i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        const char *op = domain_is_onnx(node->domain)
                             ? tgc_onnx_strdup(arena, str_or_empty(node->op_type))
                             : tgc_onnx_printf(arena, "%s.%s", node->domain, str_or_empty(node->op_type));
        if (op == NULL)
            st = TGC_ERR_NOMEM;
        else if (tgc_strmap_get(&seen, op) < 0) {
            if (tgc_strmap_put(&seen, op, 1) != TGC_OK)
                st = TGC_ERR_NOMEM;
            else
                (*list)[(*n)++] = op;
        }
    }
    tgc_strmap_release(&seen);
    return st;
}

tgc_status tgc_onnx_list(const char *onnx_path, tgc_onnx_list_kind what, tgc_diags *diags, int *count, char ***names) {
    *count = 0;
    *names = NULL;
    Onnx__ModelProto *m = NULL;
    tgc_status st = tgc_onnx_model_load(onnx_path, TGC_DEFAULT_MAX_FILE_BYTES, diags, &m);
    if (st != TGC_OK) return st;
    tgc_onnx_arena arena = {0};
    if (what == TGC_ONNX_OP_TYPES) {
        const char **list;
        int n;
        st = op_types(m, &arena, &list, &n);
        if (st == TGC_OK) st = copy_list(list, n, count, names);
    } else {
        tgc_onnx_doc doc;
        st = run_import(m, onnx_path, NULL, &arena, diags, &doc, true);
        const char **list = st == TGC_OK ? tgc_onnx_alloc(&arena, ((size_t)doc.n_inputs + 1) * sizeof *list) : NULL;
        if (st == TGC_OK && list == NULL) st = TGC_ERR_NOMEM;
        for (int i = 0; st == TGC_OK && i < doc.n_inputs; i++)
            list[i] = doc.inputs[i].name;
        if (st == TGC_OK) st = copy_list(list, doc.n_inputs, count, names);
    }
    if (st == TGC_ERR_NOMEM) tgc_diag_error(diags, onnx_path, no_pos, "out-of-memory", "out of memory");
    tgc_onnx_arena_release(&arena);
    tgc_onnx_model_free(m);
    return st;
}

void tgc_onnx_names_free(char **names, int count) {
    if (names == NULL) return;
    for (int i = 0; i < count; i++)
        tgc_free(names[i]);
    tgc_free(names);
}
