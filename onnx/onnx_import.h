/* The ONNX importer's private interfaces (the public side is the "ONNX
 * import" section of tgc.h).
 *
 * The import is three steps, one file each:
 *     onnx_proto.c    read the file, unpack the ModelProto (protobuf-c, code
 *                     generated from Debian's onnx.proto), decode tensors
 *     onnx_import.c   convert the graph into a tgc/1 document held in memory
 *                     (onnx_legacy.c: opsets before 13, Dropout, Sum); collect
 *                     every unsupported op and attribute before failing
 *     onnx_build.c    make the document into the graph IR in memory
 *                     (tgc_onnx_load_with, tgc_graph_load_with of a .onnx)
 *     onnx_write.c    or write it as YAML, weights as .npy beside it
 *                     (tgc_onnx_import, `tgc import`)
 * with onnx_names.c making ONNX names into tgc names and symbols, and
 * onnx_probe.c checking a refused model's other nodes for what only
 * inference tells (attribute values), so every problem is told at once.
 *
 * Everything the conversion makes lives in one arena released at once;
 * decoded tensors may also point into the unpacked ModelProto, which
 * outlives the document.
 *
 * Example usage (what tgc_onnx_import does):
 *     Onnx__ModelProto *m = NULL;
 *     tgc_onnx_arena arena = {0};
 *     tgc_onnx_doc doc;
 *     if (tgc_onnx_model_load(path, TGC_DEFAULT_MAX_FILE_BYTES, diags, &m) == TGC_OK &&
 *         tgc_onnx_convert(m, path, &arena, diags, &doc) == TGC_OK)
 *         st = tgc_onnx_write(&doc, yaml_path, diags);
 *     tgc_onnx_arena_release(&arena);
 *     tgc_onnx_model_free(m);
 */
#ifndef TGC_ONNX_IMPORT_H
#define TGC_ONNX_IMPORT_H

#include "tgc.h"

#include "graph/graph.h"
#include "graph/npy.h"
#include "support/strmap.h"

#include "onnx.pb-c.h"

#include <stdbool.h>

/* The opsets the importer reads as they are (MIN to MAX; forms of 13 to 18
 * that differ from tgc's op go through onnx_opset_upgrade.c); older ones go
 * through the conversions of onnx_legacy.c, those before OLDEST with a
 * warning; newer ones are refused. */
#define TGC_ONNX_OPSET_MIN 13
#define TGC_ONNX_OPSET_MAX 18
#define TGC_ONNX_OPSET_OLDEST 7

/* ---- Arena ------------------------------------------------------------------ */

/* Bump allocation in blocks from tgc_malloc; everything is released at once.
 * A zeroed struct is an empty arena. */
typedef struct tgc_onnx_arena {
    struct tgc_onnx_block *head;
    bool failed; /* an allocation failed: the conversion reports TGC_ERR_NOMEM */
} tgc_onnx_arena;

/* `size` bytes aligned for any type, zero-filled; NULL (and a->failed set)
 * when out of memory. */
void *tgc_onnx_alloc(tgc_onnx_arena *a, size_t size);

/* Copies of a string, of n bytes plus a NUL, and a printf-formatted one. */
char *tgc_onnx_strdup(tgc_onnx_arena *a, const char *s);
char *tgc_onnx_strndup(tgc_onnx_arena *a, const char *s, size_t n);
char *tgc_onnx_printf(tgc_onnx_arena *a, const char *fmt, ...) TGC_PRINTF(2, 3);

void tgc_onnx_arena_release(tgc_onnx_arena *a);

/* ---- Reading (onnx_proto.c) ------------------------------------------------ */

/* Reads and unpacks the ModelProto at `path` (protobuf-c's allocations go
 * through tgc_malloc). TGC_ERR_IO when the file cannot be read,
 * TGC_ERR_INVALID when it is not a ModelProto (a truncated file, another
 * format) or has no graph or is past max_bytes or nests its messages
 * deeper than TGC_ONNX_MAX_NESTING (rule "over-limit"),
 * TGC_ERR_NOMEM; each with a message naming the file. *out is NULL on
 * failure; release it with tgc_onnx_model_free. */
tgc_status tgc_onnx_model_load(const char *path, int64_t max_bytes, tgc_diags *diags, Onnx__ModelProto **out);
void tgc_onnx_model_free(Onnx__ModelProto *m);

/* The most levels messages may nest in a model file (the ModelProto is
 * level 0; each subgraph takes 3: node, attribute, graph), checked before
 * protobuf-c, whose unpack recurses per level, reads the file. */
#define TGC_ONNX_MAX_NESTING 100

/* How deep the submessages of the `size` bytes of a `desc` message nest
 * (0: none), walked with a stack of at most `limit` levels (clamped to
 * 1..TGC_ONNX_MAX_NESTING): limit + 1 when they nest deeper. Bytes that
 * do not parse end the walk with the depth seen so far (the unpack that
 * follows refuses them). No allocation; the bytes are only read. */
int tgc_onnx_nesting(const ProtobufCMessageDescriptor *desc, const uint8_t *bytes, size_t size, int limit);

/* tgc's dtype for an ONNX TensorProto.DataType code, or TGC_DTYPE_INVALID;
 * and the code's name in ONNX's spelling ("DOUBLE"; "code 42" goes to buf
 * for unknown codes). */
tgc_dtype tgc_onnx_dtype(int64_t code);
const char *tgc_onnx_dtype_name(int64_t code, char *buf, size_t size);

/* Decodes tensor `t` into *out: its dtype, dims and data (raw_data, the
 * typed fields, or external data read from a file relative to base_dir).
 * out->data points into `t` (little-endian raw_data) or into the arena:
 * never pass *out to tgc_npy_release. A STRING tensor's string_data gives
 * numel `char *` slots, the slots and each NUL-terminated copy in the
 * arena (a string holding a NUL byte is cut there). On failure writes the reason into
 * err and returns TGC_ERR_UNSUPPORTED (a dtype tgc lacks, rank > 8,
 * segments) or TGC_ERR_INVALID (data that does not match the dims, or t
 * NULL: a TENSOR attribute without its tensor), or
 * TGC_ERR_IO / TGC_ERR_NOMEM. */
tgc_status tgc_onnx_tensor_decode(const Onnx__TensorProto *t, const char *base_dir, tgc_onnx_arena *a, tgc_npy *out,
                                  char *err, size_t err_size);

/* The bytes of the file at `path` (tgc_malloc'd, *size of them), at most
 * the default file limit; TGC_ERR_IO or TGC_ERR_NOMEM with a message. */
tgc_status tgc_onnx_file_bytes(const char *path, tgc_diags *diags, uint8_t **bytes, size_t *size);

/* A serialized TensorProto (`size` bytes; external data beside pb_path,
 * which messages name) as a new host tensor: tgc_onnx_tensor_load's work
 * after reading the file, for TensorProtos inside other messages too. */
tgc_status tgc_onnx_tensor_from_bytes(const uint8_t *bytes, size_t size, const char *pb_path, tgc_diags *diags,
                                      tgc_tensor **out);

/* ---- Names (onnx_names.c) ---------------------------------------------------- */

/* Makes names unique in one namespace. A zeroed struct with `arena` set is
 * an empty namer; release with tgc_onnx_namer_release. */
typedef struct tgc_onnx_namer {
    tgc_strmap used;
    tgc_onnx_arena *arena;
    bool symbols; /* identifiers [A-Za-z_][A-Za-z0-9_]* instead of tgc names */
} tgc_onnx_namer;

/* `wanted` made valid (a tgc name: [A-Za-z0-9_.:/-], at most 200 bytes,
 * not ending in ':' and digits, so that "name:k" always reads as output k
 * of node "name": such a ':' becomes '_'; or an identifier for a symbol
 * namer), `fallback` when that leaves nothing, then
 * made unique with a suffix "_1", "_2", ... in order of asking: the same
 * requests in the same order give the same names. Arena string, or NULL when
 * out of memory. */
const char *tgc_onnx_name(tgc_onnx_namer *n, const char *wanted, const char *fallback);

/* True when `name` has been given out. */
bool tgc_onnx_name_used(const tgc_onnx_namer *n, const char *name);

void tgc_onnx_namer_release(tgc_onnx_namer *n);

/* ---- The document (onnx_import.c) -------------------------------------------- */

typedef struct tgc_onnx_attr {
    const char *name;
    tgc_attr_type type;
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const double *floats;
    const char *const *strings;
    size_t n;
    const tgc_npy *tensor;
    const struct tgc_onnx_doc *graph; /* TGC_ATTR_GRAPH: a subgraph, converted like the graph */
} tgc_onnx_attr;

typedef struct tgc_onnx_node {
    const char *name;
    const char *source; /* the ONNX node's name where it differs from `name` (source_name), or NULL */
    const char *op;
    const char **inputs; /* references: "name", "name:k", or "" */
    int n_inputs;
    tgc_onnx_attr *attrs;
    int n_attrs, cap_attrs;
} tgc_onnx_node;

typedef struct tgc_onnx_init {
    const char *name;
    tgc_npy value; /* data borrowed (arena or ModelProto) */
    /* The model's raw_data buffer that value.data is (tgc_malloc'd by the
     * unpack), which tgc_onnx_build may take instead of copying; or NULL. */
    ProtobufCBinaryData *raw;
} tgc_onnx_init;

typedef struct tgc_onnx_input {
    const char *name;
    const char *source; /* the ONNX name where it differs from `name` (a top-level input's), or NULL */
    tgc_dtype dtype;  /* TGC_DTYPE_INVALID: not given (a subgraph's input) */
    uint8_t kind;     /* graph.h's tgc_value_kind */
    int rank;         /* -1: no shape given (a sequence's, a subgraph input's) */
    const char **dims; /* "3" or a symbol */
} tgc_onnx_input;

/* An ONNX name and the tgc name it became, where they differ. */
typedef struct tgc_onnx_rename {
    const char *from, *to;
} tgc_onnx_rename;

typedef struct tgc_onnx_doc {
    const char *name;   /* the graph's, made a valid name */
    const char *source; /* the .onnx path */
    const char *producer;
    int64_t opset;
    tgc_onnx_input *inputs;
    int n_inputs;
    tgc_onnx_init *inits;
    int n_inits, cap_inits;
    tgc_onnx_node *nodes;
    int n_nodes, cap_nodes;
    const char **outputs;
    const char **output_sources; /* per output: its ONNX name where it differs from the reference, or NULL */
    int n_outputs;
    tgc_onnx_rename *renames;
    int n_renames, cap_renames;
} tgc_onnx_doc;

/* Converts model `m` (read from `path`) into *doc, allocating from `arena`.
 * Every problem is reported before returning: one message per unsupported
 * op type and per unsupported attribute (with the count and the first
 * nodes), per unsupported dtype, per dangling name. Returns TGC_OK,
 * TGC_ERR_UNSUPPORTED (valid ONNX that tgc cannot express), TGC_ERR_INVALID
 * (a malformed model) or TGC_ERR_NOMEM. */
tgc_status tgc_onnx_convert(const Onnx__ModelProto *m, const char *path, tgc_onnx_arena *arena, tgc_diags *diags,
                            tgc_onnx_doc *doc);

/* ---- Conversion helpers shared with onnx_legacy.c ------------------------------ */

/* The conversion of one node: what onnx_legacy.c needs to rewrite it. */
typedef struct tgc_onnx_importer tgc_onnx_importer;

typedef struct tgc_onnx_node_ctx {
    tgc_onnx_importer *im;
    const Onnx__NodeProto *n;
    tgc_onnx_node *out;     /* the node being built: inputs resolved, attrs not yet */
    bool *consumed;         /* per attribute of n: handled, not to be mapped */
    const char *node_where; /* "'sm1'" (or "#3 (output 'y')") for messages */
    int64_t opset;          /* the model's ONNX opset, for messages */
} tgc_onnx_node_ctx;

/* The attribute of n called `name`, or NULL. */
const Onnx__AttributeProto *tgc_onnx_node_attr(const Onnx__NodeProto *n, const char *name, size_t *index);

/* Attribute `name` of the node being converted, marked handled (not to be
 * mapped as a tgc attribute); NULL when the node has none. */
const Onnx__AttributeProto *tgc_onnx_consume_attr(tgc_onnx_node_ctx *c, const char *name);

/* "op 'T' (opset N): what", in the importer's arena, for a refusal's message. */
const char *tgc_onnx_node_problem(tgc_onnx_node_ctx *c, const char *what);

/* A new int64 initializer of n values (rank 1, or a scalar when scalar)
 * named after `base` + suffix; returns its reference, or NULL (nomem). */
const char *tgc_onnx_add_int64s(tgc_onnx_node_ctx *c, const char *suffix, const int64_t *v, size_t n, bool scalar);

/* A new float32 scalar initializer; its reference, or NULL. */
const char *tgc_onnx_add_float(tgc_onnx_node_ctx *c, const char *suffix, float v);

/* A new float32 1-D initializer of n values; its reference, or NULL. */
const char *tgc_onnx_add_floats(tgc_onnx_node_ctx *c, const char *suffix, const float *v, size_t n);

/* Appends an op node named after the node being converted + suffix, with
 * n_inputs inputs; returns it (attrs empty) or NULL (nomem). */
tgc_onnx_node *tgc_onnx_add_node(tgc_onnx_node_ctx *c, const char *suffix, const char *op, const char *const *inputs,
                                 int n_inputs);

/* Adds an int attribute to `node`; false when out of memory. */
bool tgc_onnx_set_int_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, int64_t v);

/* Adds a string attribute (v borrowed: arena or static) to `node`; false when out of memory. */
bool tgc_onnx_set_string_attr(tgc_onnx_importer *im, tgc_onnx_node *node, const char *name, const char *v);

/* Sets input slot i of the node being converted (growing the list with ""). */
bool tgc_onnx_set_input(tgc_onnx_node_ctx *c, int i, const char *ref);

/* Records a problem with the node: rule "unsupported-attribute" and the
 * like, grouped with the other nodes that have the same `label` ("op 'Clip':
 * ..."). Returns false. */
bool tgc_onnx_node_unsupported(tgc_onnx_node_ctx *c, const char *rule, const char *label);

/* True when the ONNX tensor `name` is read by some node or is a graph output. */
bool tgc_onnx_tensor_used(const tgc_onnx_importer *im, const char *name);

/* The initializer value behind an ONNX tensor name (initializer or
 * Constant), or NULL. */
const tgc_npy *tgc_onnx_constant_value(const tgc_onnx_importer *im, const char *name);

tgc_onnx_arena *tgc_onnx_importer_arena(tgc_onnx_importer *im);

/* The ONNX graph being converted, and the folder its external data is read from. */
const Onnx__GraphProto *tgc_onnx_importer_graph(const tgc_onnx_importer *im);
const char *tgc_onnx_importer_dir(const tgc_onnx_importer *im);

/* ---- Conversions (onnx_legacy.c) ------------------------------------------------- */

/* Rewrites the node in `c` for opset `opset` (< 13: attributes that later
 * opsets take as inputs become initializers; Softmax's 2-D coercion becomes
 * Flatten, Softmax, Reshape; legacy attributes with no effect are dropped)
 * and Dropout into Identity (inference). Marks what it handled in
 * c->consumed. May replace c->out->op. Sum becomes a chain of Adds.
 * Returns false after reporting what cannot be converted. */
bool tgc_onnx_legacy_convert(tgc_onnx_node_ctx *c, int64_t opset);

/* ---- Opset range and opset 13-18 forms (onnx_opset_upgrade.c) ------------------ */

/* Whether the model's ONNX opset (`found`: the model imports one) can be
 * read: an error in diags (rule "unsupported-opset" past
 * TGC_ONNX_OPSET_MAX, "bad-model" below 1) and false when not; a warning
 * ("old-opset") below TGC_ONNX_OPSET_OLDEST. */
bool tgc_onnx_opset_supported(tgc_diags *diags, const char *path, bool found, int64_t opset);

/* True for ONNX ops tgc has no op of its own for that
 * tgc_onnx_opset_upgrade rewrites into others (GroupNormalization,
 * CenterCropPad, Col2Im). */
bool tgc_onnx_opset_rewritten_op(const char *op);

/* Rewrites the node in `c` where its form at `opset` differs from tgc's op
 * (RoiAlign before 16, Split-18's num_outputs, GroupNormalization-18,
 * CenterCropPad-18, Col2Im-18; the
 * table at the top of onnx_opset_upgrade.c); *handled tells whether it
 * did (then nothing else converts the node). Marks the attributes it used
 * in c->consumed. Returns false after reporting what cannot be converted. */
bool tgc_onnx_opset_upgrade(tgc_onnx_node_ctx *c, int64_t opset, bool *handled);

/* ---- Sequences split and read at constant positions (onnx_sequence_split.c) --- */

/* SplitToSequence whose sequence only SequenceAt nodes read, at constant
 * positions, with a number of chunks known at import: the SplitToSequence
 * node in `c` becomes Split(x, lengths) and each SequenceAt
 * Identity(chunk) or Squeeze(chunk, [axis]) (keepdims 0 without split).
 * Other op types are left alone (true). Returns false after reporting the
 * node: unsupported (with the reason) when the pattern does not hold,
 * "bad-model" for a position outside the sequence. */
bool tgc_onnx_sequence_split_convert(tgc_onnx_node_ctx *c);

/* The names index tgc_onnx_sequence_split_convert builds once per import
 * (arena memory; its maps are freed by tgc_onnx_seq_index_release, which
 * the importer calls at its end; NULL does nothing). */
typedef struct tgc_onnx_seq_index tgc_onnx_seq_index;
tgc_onnx_seq_index **tgc_onnx_importer_seq_index(tgc_onnx_importer *im);
void tgc_onnx_seq_index_release(tgc_onnx_seq_index *x);

/* ---- The check of a refused model (onnx_probe.c) -------------------------------------- */

/* Builds `doc` (a model tgc_onnx_convert refused as unsupported, its
 * refused nodes _Unsupported) into a graph and adds the errors inference
 * gives (attribute values, dtypes, inside subgraphs too; not
 * _Unsupported's own) to diags on onnx_path, without a position. Adds
 * nothing when out of memory. */
void tgc_onnx_probe(const tgc_onnx_doc *doc, const char *onnx_path, tgc_diags *diags);

/* ---- Building the graph in memory (onnx_build.c) ------------------------------------ */

/* Makes `doc` (a converted model) into a new graph as loading what
 * tgc_onnx_write writes of it would (tgc_graph_load), without the files:
 * each initializer's data copied once; those tgc_onnx_write would put in
 * .npy files get that `file:` (unsaved: a dump with a destination folder
 * writes them there). The graph's path is doc->source, the .onnx file;
 * messages name it without a position. With take_weights, an
 * initializer's buffer in the model (tgc_onnx_init.raw) moves into the
 * graph instead (raw left empty): the model is then only to be freed.
 * Load limits as `limits` (node
 * count, ranks, tensor bytes, checked by inference). Returns TGC_OK and
 * *out (the caller's), or NULL and TGC_ERR_INVALID (what validation and
 * inference refuse; rule "bad-model" for a document no importer makes),
 * TGC_ERR_NOMEM. doc and its arena may go once this returns. */
tgc_status tgc_onnx_build(const tgc_onnx_doc *doc, const tgc_load_limits *limits, bool take_weights,
                          tgc_diags *diags, tgc_graph **out);

/* ---- Writing (onnx_write.c) --------------------------------------------------------- */

/* Whether tgc_onnx_write writes tensor v inline as `values:` (empty tensors,
 * float scalars, integer tensors of at most 64 elements, bfloat16 and
 * strings) rather than as an .npy file. */
bool tgc_onnx_written_inline(const tgc_npy *v);

/* The shortest decimal that reads back as the same float (ONNX's floats
 * are 32-bit; as_double: the same double, for float64 tensors), in YAML's
 * spelling for infinities and NaN (.inf, -.inf, .nan), into buf (40 bytes
 * are enough). */
const char *tgc_onnx_float_text(double v, bool as_double, char *buf, size_t size);

/* The double a float attribute's written decimal reads back as: what a
 * tgc/1 file of the model holds (0.1f becomes 0.1), so a model read
 * straight into memory has the attribute values of its imported file. */
double tgc_onnx_float_attr(double v);

/* The .npy path beneath the YAML's folder that tgc_onnx_write gives tensor
 * `name`: "WDIR_REL/NAME.npy", '/' and ':' in NAME as '_', made unique
 * among the names `files` gave out. An arena string (files->arena), or
 * NULL when out of memory. */
const char *tgc_onnx_weight_file(tgc_onnx_namer *files, const char *wdir_rel, const char *name);

/* Writes `doc` as a tgc/1 file at yaml_path (atomically: a temporary file
 * renamed into place) and the initializers that are not small integer
 * tensors as .npy files in a directory beside it (STEM_weights/, created if
 * needed). TGC_ERR_IO or TGC_ERR_NOMEM with a message in diags. */
tgc_status tgc_onnx_write(const tgc_onnx_doc *doc, const char *yaml_path, tgc_diags *diags);

#endif
