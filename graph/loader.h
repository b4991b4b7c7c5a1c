/* Shared state of the YAML loader's files (load_yaml.c walks the document,
 * load_tensor.c reads dtypes, shapes and tensor data). Private to graph/. */
#ifndef TGC_GRAPH_LOADER_H
#define TGC_GRAPH_LOADER_H

#include "graph/graph.h"

#include <yaml.h>

/* A reference written in the file, resolved once every name is known. */
typedef enum pending_kind { PENDING_INPUT, PENDING_CONTROL, PENDING_COLOCATE, PENDING_OUTPUT } pending_kind;

typedef struct pending_ref {
    pending_kind kind;
    int32_t owner; /* node id (unused for PENDING_OUTPUT) */
    int index;     /* slot in the owner's array */
    char *text;    /* the reference without a leading '^' */
    tgc_srcpos pos;
} pending_ref;

typedef struct tgc_loader {
    tgc_graph *g;
    tgc_diags *diags;
    yaml_document_t doc;
    pending_ref *refs;
    size_t n_refs, cap_refs;
    tgc_status failure; /* TGC_ERR_NOMEM or TGC_ERR_IO once one happened */
    /* `file:` paths resolve beneath g->dir: the graph's folder, or (when
     * this is set) a weights folder the user named. */
    bool weights_dir;
    /* Set when names may be missing for a reason already reported (a
     * misspelt section, a section that is not a list, an entry that is not
     * a mapping or has no name): references that do not resolve are then
     * consequences, not reported again. */
    bool names_incomplete;
    /* Subgraphs (graph/subgraph.h): the loader of the enclosing graph and
     * the node there that holds this one (NULL, -1 at the top level), and
     * the loaders of the subgraphs inside this graph, in file order, whose
     * references resolve once this graph's have. Children share the
     * parent's document and diagnostics. */
    struct tgc_loader *parent;
    int32_t owner;
    struct tgc_loader **children;
    size_t n_children, cap_children;
} tgc_loader;

/* ---- Building a graph without a YAML document ----------------------------
 * The loader's second half, shared with builders that make the IR from
 * another format (onnx/onnx_build.c): nodes are added with
 * tgc_graph_add_node, references recorded by text, and tgc_loader_finish
 * resolves them, validates and infers, as for a tgc/1 file. Such a loader
 * has a zeroed `doc`. */

/* Records reference `text` ("name", "name:k") of `kind` for slot `index` of
 * node `owner` (the graph output `index` for PENDING_OUTPUT), at `pos`, to
 * be resolved by tgc_loader_finish (in l's graph, else in the graphs around
 * it, captured). TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_loader_add_ref(tgc_loader *l, pending_kind kind, int32_t owner, int index, const char *text,
                              tgc_srcpos pos);

/* Makes the subgraph value of attribute `a` of node `id` of l's graph: a new
 * empty graph (a->graph) with its own loader *child, whose references
 * resolve after l's. TGC_ERR_INVALID (rule "over-limit", at pos) past
 * TGC_MAX_SUBGRAPH_DEPTH levels; TGC_ERR_NOMEM. */
tgc_status tgc_loader_open_subgraph(tgc_loader *l, int32_t id, tgc_attr *a, tgc_srcpos pos, tgc_loader **child);

/* Reports (rule "missing-attribute", at pos) each attribute node id's op
 * requires that the node lacks; TGC_OK when none. */
tgc_status tgc_loader_check_required_attrs(tgc_loader *l, int32_t id, tgc_srcpos pos);

/* Ends a load whose contents gave status `s`: checks the node limit,
 * resolves every reference (dangling ones reported), releases the loader
 * and its children, then validates and infers the graph when all went
 * well. Stores the graph in *out and returns TGC_OK, or frees it, stores
 * NULL and returns the first failure. */
tgc_status tgc_loader_finish(tgc_loader *l, tgc_status s, tgc_graph **out);

/* The most levels mappings and lists may nest in a tgc/1 file: about 4
 * per subgraph level (graph/subgraph.h's TGC_MAX_SUBGRAPH_DEPTH of them),
 * with room for tensor specs and attribute values. */
#define TGC_YAML_MAX_NESTING 128

/* Parses the `size` bytes of `text` event by event, and fails with an
 * error of rule "over-limit" at the first mapping or list nested deeper
 * than `limit` (TGC_ERR_INVALID), before anything is loaded. A syntax
 * error ends the check with TGC_OK (loading the document reports it);
 * TGC_ERR_NOMEM, without a message, as the loader's other allocation
 * failures. Messages name `path`. */
tgc_status tgc_yaml_check_depth(const char *text, size_t size, int limit, const char *path, tgc_diags *diags);

/* Position of a YAML node (1-based). */
tgc_srcpos tgc_loader_pos(const yaml_node_t *n);

/* Reports an error at `n` (NULL: no position) and returns TGC_ERR_INVALID. */
tgc_status tgc_loader_error(tgc_loader *l, const yaml_node_t *n, const char *rule, const char *fmt, ...)
    TGC_PRINTF(4, 5);

/* Records an out-of-memory failure; returns TGC_ERR_NOMEM. */
tgc_status tgc_loader_nomem(tgc_loader *l);

/* The scalar text of `n`, or NULL (after an error naming `what`) when `n`
 * is not a scalar. */
const char *tgc_loader_scalar(tgc_loader *l, const yaml_node_t *n, const char *what);

/* Parses a decimal integer scalar (optional sign); false if not one, or
 * if it does not fit in int64 (tgc_is_int_text tells the two apart). */
bool tgc_parse_int(const char *s, int64_t *out);

/* True when s is written as a decimal integer (optional sign, digits),
 * whatever its size. */
bool tgc_is_int_text(const char *s);

/* Parses a number scalar (integers, decimals, exponents, .inf, -.inf, .nan
 * in YAML's spellings); false if not one. */
bool tgc_parse_number(const char *s, double *out);

/* Reads a `dtype:` value of `what` (named in messages: "graph input 'x'"). */
tgc_status tgc_load_dtype(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_dtype *out);

/* Reads a `dtype:` value that may also name a sequence or an optional
 * ("seq(float32)", "optional(int64)", "optional(seq(bool))"; graph.h's
 * tgc_type_parse): graph inputs' and `out` entries' types. */
tgc_status tgc_load_type(tgc_loader *l, const yaml_node_t *n, const char *what, tgc_dtype *dtype, uint8_t *kind);

/* Reads a `shape:` list of `what`; symbols are allowed when allow_symbols,
 * else every dim must be a concrete integer >= 0. */
tgc_status tgc_load_shape(tgc_loader *l, const yaml_node_t *n, const char *what, bool allow_symbols,
                          tgc_shape *out);

/* Reads a tensor given as a mapping {dtype, shape, file | values} into a
 * new tgc_const owned by the caller (*out): an initializer's (named: its
 * `name` key is allowed and skipped) or a tensor attribute's (no `name`).
 * `what` names it in messages ("initializer 'w'"). Files resolve beneath
 * the graph's dir (support/open_beneath.h): absolute paths, '..' and links
 * out of it are errors (rule "file-outside"), as are files that are not
 * regular or are too small for the declared data. */
tgc_status tgc_load_tensor(tgc_loader *l, const yaml_node_t *map, const char *what, bool named, tgc_const **out);

/* Of the n strings cand[0..n) (NULL entries skipped), the one closest to
 * `word` when it is a plausible misspelling of it, else NULL: the same
 * letters in another case, or (when max_edits > 0) at most max_edits edits
 * and fewer than half the word's length. For "did you mean" hints. */
const char *tgc_loader_closest(const char *word, const char *const *cand, size_t n, int max_edits);

/* True when `key` is one of the NULL-terminated `allowed`; otherwise
 * reports "unknown-key" naming the allowed keys of `where` (and the closest
 * one, when the key looks like a misspelling of it). */
bool tgc_loader_check_key(tgc_loader *l, const yaml_node_t *key, const char *where,
                          const char *const *allowed);

#endif
