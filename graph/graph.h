/* The graph IR shared by every stage (private to the library).
 *
 * Every producer of a value is a node: graph inputs (TGC_NODE_INPUT),
 * initializers (TGC_NODE_CONST) and op nodes (TGC_NODE_OP), so later stages
 * place, partition and schedule one kind of thing. Node ids index
 * graph->nodes; inputs come first, then initializers, then op nodes in file
 * order. Each node keeps the YAML positions of what it was written with,
 * for error messages.
 */
#ifndef TGC_GRAPH_GRAPH_H
#define TGC_GRAPH_GRAPH_H

#include "tgc.h"

#include "graph/shape.h"
#include "support/diag.h"
#include "support/strmap.h"

#include <stdbool.h>
#include <stdio.h>

struct tgc_op_def;

/* The largest integer tensor whose value inference tracks at compile time. */
#define TGC_MAX_VALUE_LEN 64

/* What a value is (ONNX's type kinds): a tensor, a sequence of tensors, or
 * an optional holding one of those or nothing. Bit 0: a sequence; bit 1:
 * optional. A tensor_info's dtype and shape describe the tensor, or the
 * sequence's elements (dims they do not share are symbols; the rank is
 * unknown when they have different ranks or none is known). */
typedef enum tgc_value_kind {
    TGC_KIND_TENSOR = 0,
    TGC_KIND_SEQUENCE = 1,
    TGC_KIND_OPTIONAL = 2,          /* optional(tensor) */
    TGC_KIND_OPTIONAL_SEQUENCE = 3, /* optional(seq(tensor)) */
} tgc_value_kind;

typedef struct tgc_tensor_info {
    tgc_dtype dtype; /* TGC_DTYPE_INVALID until inferred */
    tgc_shape shape;
    uint8_t kind; /* tgc_value_kind; 0 (a tensor) in a zeroed info */
    /* The compile-time value of a small integer tensor (rank 0 or 1, at most
     * TGC_MAX_VALUE_LEN elements), or value_len == -1 when not known.
     * Elements may be symbolic (see shape.h). */
    int value_len;
    tgc_dim *value; /* value_len elements, tgc_malloc'd, owned; NULL if none */
    /* The value of a float scalar when known (a float32 initializer, or a
     * host-memory input at run time), for ops like Range whose output shape
     * depends on it. */
    bool has_real;
    double real;
} tgc_tensor_info;

/* A type as the format writes it: "float32", "seq(float32)",
 * "optional(float32)", "optional(seq(float32))", into buf. */
const char *tgc_type_str(tgc_dtype dtype, int kind, char *buf, size_t size);

/* Parses what tgc_type_str writes: false when `text` is no type. */
bool tgc_type_parse(const char *text, tgc_dtype *dtype, uint8_t *kind);

/* Stores a copy of `n` value elements in info (replacing any value).
 * TGC_OK or TGC_ERR_NOMEM. n must be <= TGC_MAX_VALUE_LEN. */
tgc_status tgc_info_set_value(tgc_tensor_info *info, int n, const tgc_dim *value);

/* Frees info's value and marks it unknown. */
void tgc_info_clear_value(tgc_tensor_info *info);

/* Constant tensor data: an initializer's, or a tensor-valued attribute's. */
typedef struct tgc_const {
    tgc_dtype dtype;
    tgc_shape shape; /* all dims concrete */
    void *data;      /* C order, little-endian, tgc_malloc'd; NULL iff nbytes == 0. string:
                      * nbytes / sizeof(char *) slots, each NULL ("") or a tgc_malloc'd
                      * string owned by the constant (support/string_slots.h) */
    size_t nbytes;
    char *file; /* the `file:` path as written, or NULL for inline `values:` */
    tgc_srcpos pos;
    /* data belongs to another graph's constant, which outlives this one (a
     * partition borrows its source graph's weights): not freed with it. */
    bool borrowed;
    /* data exists only in memory (made by an optimization pass) although
     * `file` is set: a dump with a destination folder writes it there, at
     * `file`; a dump without one writes the values inline. */
    bool unsaved;
    /* data was freed (NULL although nbytes > 0): a session that holds the
     * values only in its kernels' own layouts let the original go
     * (tgc_session_options.release_weights). dtype and shape stay. */
    bool released;
} tgc_const;

typedef enum tgc_attr_type {
    TGC_ATTR_INT,
    TGC_ATTR_FLOAT,
    TGC_ATTR_STRING,
    TGC_ATTR_INTS,
    TGC_ATTR_FLOATS,
    TGC_ATTR_STRINGS,
    TGC_ATTR_TENSOR,
    TGC_ATTR_GRAPH, /* a subgraph: If's branches, Loop's and Scan's body (graph/subgraph.h) */
} tgc_attr_type;

typedef struct tgc_attr {
    char *name;
    tgc_attr_type type;
    tgc_srcpos pos; /* of the key */
    int64_t i;
    double f;
    char *s;
    int64_t *ints;   /* TGC_ATTR_INTS: n elements */
    double *floats;  /* TGC_ATTR_FLOATS */
    char **strings;  /* TGC_ATTR_STRINGS */
    size_t n;
    tgc_const *tensor; /* TGC_ATTR_TENSOR */
    struct tgc_graph *graph; /* TGC_ATTR_GRAPH: owned; its parent is the node's graph */
} tgc_attr;

/* A reference to output `port` of node `node`. node == -1 is an omitted
 * optional input (written ""). */
typedef struct tgc_ref {
    int32_t node;
    int32_t port;
    tgc_srcpos pos;
} tgc_ref;

typedef enum tgc_node_kind { TGC_NODE_INPUT, TGC_NODE_CONST, TGC_NODE_OP } tgc_node_kind;

typedef struct tgc_node {
    char *name;
    /* The name the model's own file gives it, where that differs from
     * `name` (an ONNX node's or graph input's name, any string: YAML key
     * `source_name`), or NULL. Messages, dumps and traces show it; feeds
     * may name a graph input by it. */
    char *source_name;
    tgc_node_kind kind;
    const struct tgc_op_def *op; /* NULL for INPUT and CONST, or an unknown op */
    char *op_name;               /* as written; NULL for INPUT and CONST */
    tgc_srcpos pos;              /* the node's mapping (or list item) */
    tgc_srcpos op_pos;

    tgc_ref *inputs; /* data inputs, in order */
    int n_inputs;
    /* The last n_implicit of `inputs` are not written in the file: the
     * outer values this node's subgraphs read by name (graph/subgraph.h).
     * 0 for every node without a subgraph attribute. */
    int n_implicit;
    tgc_ref *controls; /* control dependencies (^node); port unused */
    int n_controls;

    tgc_attr *attrs;
    int n_attrs;

    char *device; /* requested device spec as written, or NULL */
    tgc_srcpos device_pos;
    tgc_ref *colocate; /* colocate_with: node ids (port unused) */
    int n_colocate;

    int n_outputs;
    tgc_tensor_info *outputs; /* n_outputs, filled by inference */

    /* `out` as declared in the file (dtype, shape; value_len -1), or NULL. */
    tgc_tensor_info *declared;
    bool *declared_has_shape; /* per declared output: was `shape` given */
    int n_declared;
    tgc_srcpos declared_pos;

    /* INPUT: the declared dtype and shape are outputs[0]. CONST: the data. */
    tgc_const *data;
} tgc_node;

/* The limits an untrusted model is held to (tgc_graph_load_options, every
 * field resolved: no zeros). */
typedef struct tgc_load_limits {
    int64_t file_bytes, nodes, tensor_bytes;
    int rank;
} tgc_load_limits;

#define TGC_DEFAULT_MAX_FILE_BYTES (INT64_C(2) << 30)
#define TGC_DEFAULT_MAX_NODES INT64_C(1000000)
#define TGC_DEFAULT_MAX_TENSOR_BYTES (INT64_C(64) << 30)

/* opts' limits with defaults for its zeros (NULL: all defaults). */
tgc_load_limits tgc_load_limits_of(const tgc_graph_load_options *opts);

/* TGC_OK when a file of `size` bytes is within the limit, else an error
 * ("over-limit") on `path` in diags and TGC_ERR_INVALID. */
tgc_status tgc_load_limits_check_file(const tgc_load_limits *l, const char *path, int64_t size, tgc_diags *diags);

/* NULL when a tensor of `shape` and element size (symbols as 1) is within
 * the graph's limits of rank and bytes; else which limit it passes, as
 * "rank 9 is above the limit of 8 (--load-limits rank=R)", in buf. */
const char *tgc_load_limits_tensor(const tgc_graph *g, const tgc_shape *shape, size_t elem_size, char *buf,
                                   size_t size);

struct tgc_graph {
    char *path;     /* the file as given ("" for strings) */
    char *dir;      /* its directory, for relative .npy paths */
    char *name;     /* graph `name:`, or NULL */
    tgc_srcpos format_pos;

    tgc_node *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t n_inputs_nodes; /* nodes[0 .. n_inputs_nodes) are graph inputs */
    tgc_strmap names;       /* node name -> id */

    tgc_ref *outputs; /* graph outputs */
    int n_outputs;
    /* Per graph output, the name the model's own file gives it (an ONNX
     * graph output's name, `{ref: R, source_name: S}` in the file) or
     * NULL; the array itself is NULL when no output has one. */
    char **output_sources;

    char **symbols; /* symbol index -> name */
    bool *symbol_fresh; /* made by inference, not written by the user */
    int32_t n_symbols, cap_symbols;
    tgc_strmap symbol_ids;
    int32_t next_fresh; /* counter for unk__K names */

    int32_t *topo; /* n_nodes ids in a topological order (after validation) */

    tgc_load_limits limits; /* what the model may ask for (load_limits.c) */

    /* The graph whose weights this one borrows, owned (freed after this
     * one), or NULL: see tgc_graph_adopt_source. */
    tgc_graph *source;

    /* Subgraphs (graph/subgraph.h). A subgraph is the value of a node's
     * TGC_ATTR_GRAPH attribute. Its parent is the graph of that node (NULL
     * for a top-level graph); depth counts parents. A subgraph keeps no
     * symbols of its own: its dims name the top-level graph's symbols,
     * which every symbol function reaches through parent. Its nodes
     * [0, n_inputs_nodes) are its formal inputs; each outer value it reads
     * by name is a further TGC_NODE_INPUT node, a capture: captures[j] is
     * that node's id and capture_input[j] the input of the owning node
     * (one of its implicit inputs) that carries the value in. */
    tgc_graph *parent;
    int depth;
    int32_t *captures;
    int32_t *capture_input;
    int32_t n_captures, cap_captures;
};

/* Appends a zeroed node named `name` of `kind`; stores its id in *id.
 * Returns TGC_OK or TGC_ERR_NOMEM. The caller checks uniqueness first. */
tgc_status tgc_graph_add_node(tgc_graph *g, const char *name, tgc_node_kind kind, int32_t *id);

/* The top-level graph above g (g itself when it has no parent): the one
 * that holds the symbols. */
tgc_graph *tgc_graph_root(const tgc_graph *g);

/* Returns the id of the node named `name`, or -1. */
int32_t tgc_graph_find(const tgc_graph *g, const char *name);

/* TGC_OK when every initializer of g still has its data; else
 * TGC_ERR_INVALID with an error (rule "weights-released") at the first
 * one a session let go (tgc_const.released): g can no longer be compiled,
 * optimized or written out, only freed. diags may be NULL. */
tgc_status tgc_graph_check_whole(const tgc_graph *g, tgc_diags *diags);

/* Returns the index of symbol `name`, interning it if new (fresh marks a
 * symbol made by inference). -1 if out of memory. */
int32_t tgc_graph_symbol(tgc_graph *g, const char *name, bool fresh);

/* Makes a new symbol unk__K, K the smallest counter value not yet used as a
 * name in this graph. Returns its index, or -1 if out of memory. */
int32_t tgc_graph_fresh_symbol(tgc_graph *g);

/* The output info of `ref` (which must be resolved), or NULL if omitted. */
const tgc_tensor_info *tgc_graph_ref_info(const tgc_graph *g, tgc_ref ref);

/* The tgc dtype of an ONNX TensorProto.DataType code (Cast's `to`: 1
 * float32, 2 uint8, 3 int8, 4 uint16, 5 int16, 6 int32, 7 int64, 9 bool,
 * 10 float16, 11 float64, 12 uint32, 13 uint64, 16 bfloat16, 8 string), or
 * TGC_DTYPE_INVALID for a code tgc has no dtype for (complex, float8). */
tgc_dtype tgc_dtype_from_onnx(int64_t code);

/* The device to write for node `id` of g (the top-level graph or a subgraph
 * inside it), or NULL to keep what the node asks for. */
typedef const char *(*tgc_node_device_fn)(void *ctx, const tgc_graph *g, int32_t id);

/* The YAML dumper (graph/dump_yaml.c) with each node's `device:`, the
 * subgraphs' nodes too, given by device_of (may be NULL). Same contract as
 * tgc_graph_dump_yaml. */
tgc_status tgc_graph_dump_yaml_placed(const tgc_graph *g, FILE *out, const char *dest_dir, tgc_node_device_fn device_of,
                                      void *ctx, tgc_diags *diags);

/* The YAML dumper (graph/dump_yaml.c) with each node's `device:` replaced
 * by node_devices[id] (a full device name, e.g. a placement's) where that
 * is not NULL; node_devices may be NULL. Same contract as
 * tgc_graph_dump_yaml. */
tgc_status tgc_graph_dump_yaml_devices(const tgc_graph *g, FILE *out, const char *dest_dir,
                                       const char *const *node_devices, tgc_diags *diags);

/* ---- Copies (graph/graph_copy.c), for stages that build one graph from
 * another. Each returns TGC_OK or TGC_ERR_NOMEM; on failure dst holds what
 * was copied so far, for its owner to release. */

/* dst = src's dtype, shape and known float scalar; its small integer value
 * too when with_value (dst's old value is not freed). */
tgc_status tgc_info_copy(tgc_tensor_info *dst, const tgc_tensor_info *src, bool with_value);

/* A new description of constant c whose data is c's, borrowed (c must
 * outlive it: a partition or an optimized graph holds its weights once).
 * NULL if out of memory. */
tgc_const *tgc_const_borrow(const tgc_const *c);

/* A deep copy of attribute src into dst (a tensor attribute borrows its
 * data; a subgraph is cloned, its parent set by tgc_graph_adopt_subgraphs). */
tgc_status tgc_attr_copy(tgc_attr *dst, const tgc_attr *src);

/* Gives node n `count` outputs copied from src (values too). */
tgc_status tgc_node_set_outputs(tgc_node *n, const tgc_tensor_info *src, int count);

/* Copies into the fresh node dst everything of src except its name, kind,
 * inputs, controls and colocation (which refer to node ids the caller
 * maps): op, positions, requested device, attributes (subgraphs cloned:
 * call tgc_graph_adopt_subgraphs on dst's graph once it is built), how
 * many inputs are implicit, outputs, declared `out`, and constant data
 * (borrowed). */
tgc_status tgc_node_copy_body(tgc_node *dst, const tgc_node *src);

/* A constant small enough that each device reading it holds a copy
 * rather than having it sent every step: an initializer or a Constant op
 * with no inputs, controls, colocation or device spec, one tensor output
 * of known shape and at most TGC_SMALL_CONSTANT_BYTES (a Clip's bounds, a
 * Reshape's shape, a scale). The partitioner copies it into each
 * partition that reads it; the placer counts no traffic for it. */
#define TGC_SMALL_CONSTANT_BYTES 1024
bool tgc_node_is_small_constant(const tgc_node *n);

/* How messages, dumps and traces name node n: its source_name when it has
 * one, else its name. */
const char *tgc_node_label(const tgc_node *n);

/* Copies src's output_sources (src->n_outputs of them) into dst, which
 * has none yet. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_graph_copy_output_sources(tgc_graph *dst, const tgc_graph *src);

/* The name graph output i goes by: its source name, else the reference
 * text ("node" or "node:k") written into buf. */
const char *tgc_graph_output_name(const tgc_graph *g, int i, char *buf, size_t size);

/* Releases a constant and its data (unless borrowed); NULL is ignored. */
void tgc_const_free(tgc_const *c);

/* Releases an attribute's owned members (not the struct itself). */
void tgc_attr_release(tgc_attr *a);

/* Finds attribute `name` of node `n`, or NULL. */
const tgc_attr *tgc_node_attr(const tgc_node *n, const char *name);

/* Creates an empty graph for file `path` (copied). NULL if out of memory. */
tgc_graph *tgc_graph_create(const char *path, const char *dir);

/* Writes "N" or "7" for a dim into buf. */
const char *tgc_dim_str(const tgc_graph *g, tgc_dim d, char *buf, size_t size);

/* Writes a shape as "[N, 64]" ("[?]" ... for unknown rank) into buf. */
const char *tgc_shape_str(const tgc_graph *g, const tgc_shape *s, char *buf, size_t size);

#endif
