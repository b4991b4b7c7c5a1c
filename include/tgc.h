/* tgc: a multi-device graph compiler and partitioned executor.
 *
 * The public C API. Handles are opaque; every function that can fail on user
 * input returns a tgc_status and, where it takes a tgc_diags, records there
 * one message per problem found (several independent problems are all
 * reported). Nothing in the library calls abort() or exit() on bad input.
 *
 * Example usage:
 *     tgc_diags *diags = tgc_diags_create();
 *     tgc_graph *g = NULL;
 *     if (tgc_graph_load("model.yaml", diags, &g) != TGC_OK) {
 *         tgc_diags_print(diags, stderr);   // "model.yaml:12:5: error: ..."
 *     } else {
 *         tgc_graph_dump_yaml(g, stdout, diags);
 *     }
 *     tgc_graph_free(g);
 *     tgc_diags_free(diags);
 */
#ifndef TGC_H
#define TGC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TGC_VERSION_STRING "0.1.0"

/* ---- Status ------------------------------------------------------------ */

typedef enum tgc_status {
    TGC_OK = 0,
    TGC_ERR_INVALID = 1,     /* the input breaks a rule (graph file, feed, spec) */
    TGC_ERR_IO = 2,          /* a file could not be opened, read or written */
    TGC_ERR_NOMEM = 3,       /* host allocation failed */
    TGC_ERR_UNSUPPORTED = 4, /* valid, but tgc cannot do it (yet) */
    TGC_ERR_RUNTIME = 5,     /* a kernel or device failed while running */
} tgc_status;

/* Returns a static, lower-case name for `s` ("ok", "invalid input", ...). */
const char *tgc_status_name(tgc_status s);

/* ---- Data types ------------------------------------------------------- */

typedef enum tgc_dtype {
    TGC_FLOAT32 = 0,
    TGC_FLOAT16,
    TGC_INT32,
    TGC_INT64,
    TGC_UINT8,
    TGC_BOOL,
    TGC_FLOAT64,  /* IEEE double */
    TGC_INT8,
    TGC_INT16,
    TGC_UINT16,
    TGC_UINT32,
    TGC_UINT64,
    TGC_BFLOAT16, /* the upper 16 bits of a float32; computed in float32 */
    TGC_STRING,   /* UTF-8 text: each element a `char *` (NULL = ""), in host memory only */
    TGC_DTYPE_COUNT,
    TGC_DTYPE_INVALID = -1,
} tgc_dtype;

/* Every graph-format dtype name, for messages. */
#define TGC_DTYPE_NAMES \
    "float32, float16, bfloat16, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, string"

/* Returns the graph-format name ("float32", ...) of `t`, or "invalid". */
const char *tgc_dtype_name(tgc_dtype t);

/* Returns the element size of `t` in bytes (bool is one byte; string is
 * sizeof(char *), one pointer slot per element), 0 if invalid. */
size_t tgc_dtype_size(tgc_dtype t);

/* Parses a graph-format dtype name; returns TGC_DTYPE_INVALID if unknown. */
tgc_dtype tgc_dtype_from_name(const char *name);

/* ---- Diagnostics ------------------------------------------------------- */

/* A list of messages, each with a source position (file, 1-based line and
 * column; 0 when there is none), a severity and a rule: a short kebab-case
 * name of the rule broken ("unknown-op", "dangling-reference", ...) that
 * tests and tools can match on. Formatted as
 * "FILE:LINE:COL: error: MESSAGE [RULE]". */
typedef struct tgc_diags tgc_diags;

typedef enum tgc_severity { TGC_SEV_ERROR = 0, TGC_SEV_WARNING = 1, TGC_SEV_NOTE = 2 } tgc_severity;

/* Returns a new empty list owned by the caller, or NULL if out of memory. */
tgc_diags *tgc_diags_create(void);

/* Releases the list and its messages; NULL is ignored. */
void tgc_diags_free(tgc_diags *d);

/* Number of messages of any severity, and of errors only. */
size_t tgc_diags_count(const tgc_diags *d);
size_t tgc_diags_error_count(const tgc_diags *d);

/* Fields of message `i` (< tgc_diags_count). Strings are owned by the list
 * and live until it is freed; file is "" when the message has no file. */
tgc_severity tgc_diag_severity(const tgc_diags *d, size_t i);
const char *tgc_diag_file(const tgc_diags *d, size_t i);
int tgc_diag_line(const tgc_diags *d, size_t i);
int tgc_diag_column(const tgc_diags *d, size_t i);
const char *tgc_diag_rule(const tgc_diags *d, size_t i);
const char *tgc_diag_message(const tgc_diags *d, size_t i);

/* Writes every message, one per line, in the format above. */
void tgc_diags_print(const tgc_diags *d, FILE *out);

/* ---- Graphs ------------------------------------------------------------- */

/* A dataflow graph in the tgc/1 format (see docs/graph-format.md), loaded,
 * validated and shape-inferred. */
typedef struct tgc_graph tgc_graph;

/* Loads the tgc/1 YAML file at `path`: parses it, reads initializer data
 * (.npy paths are relative to the file's folder and must stay beneath it:
 * an absolute path, a `..` that climbs out, or a symlink leading out of the
 * folder is an error with rule "file-outside"; links that stay inside are
 * followed; only regular files are read, and one too small for the declared
 * dtype and shape is refused before it is read), validates every rule of
 * the format and infers each tensor's dtype and shape. On success stores a
 * new graph owned by the caller in *out and returns TGC_OK. On failure
 * stores NULL, appends every problem found to `diags` (which must not be
 * NULL) and returns TGC_ERR_INVALID (rule broken), TGC_ERR_IO (file
 * unreadable) or TGC_ERR_NOMEM. A path ending in ".onnx" is an ONNX model,
 * read straight into memory (tgc_onnx_load_with). */
tgc_status tgc_graph_load(const char *path, tgc_diags *diags, tgc_graph **out);

/* Options for tgc_graph_load_with; a zeroed struct (or NULL) gives
 * tgc_graph_load's behaviour.
 *
 * Example usage (weights shared by several graphs):
 *     tgc_graph_load_options o = {.weights_dir = "/models/shared_weights"};
 *     st = tgc_graph_load_with("net_a.yaml", &o, diags, &g);
 */
typedef struct tgc_graph_load_options {
    /* The folder `file:` paths resolve beneath instead of the graph file's
     * own, under the same rules. NULL: the graph's folder. Borrowed: read
     * during the call only. */
    const char *weights_dir;
    /* Limits on what an untrusted model may ask for; 0 takes the default
     * given. Past one, loading fails with TGC_ERR_INVALID and an error of
     * rule "over-limit" naming the limit and how to raise it. */
    int64_t max_file_bytes;   /* the model file, YAML or ONNX (2 GiB: protobuf's own limit) */
    int64_t max_nodes;        /* graph inputs, initializers and nodes together (1,000,000) */
    int max_rank;             /* dims of any tensor (8, tgc's most; a lower one is honoured) */
    int64_t max_tensor_bytes; /* one tensor's bytes, declared or inferred, a symbol counting as 1;
                                 at run time, as bound (64 GiB) */
} tgc_graph_load_options;

/* Sets opts' limits from "file=SIZE,nodes=N,rank=R,tensor=SIZE" (any of
 * them, any order; SIZE as tgc_session_options.memory_limits writes it:
 * 1000, 64MiB, 2GB). Other fields are left as they are. TGC_ERR_INVALID
 * (rule "bad-load-limits", in diags) for anything else, or a value below 1
 * (a rank above 8). */
tgc_status tgc_load_limits_parse(const char *spec, tgc_graph_load_options *opts, tgc_diags *diags);

/* tgc_graph_load with options (NULL: the defaults). A weights_dir that is not a readable folder
 * is TGC_ERR_IO (rule "io", naming it) before the graph is read. The
 * graph's dumps (tgc_graph_dump_yaml) then see `file:` paths as relative
 * to weights_dir. A path ending in ".onnx" is an ONNX model, read by
 * tgc_onnx_load_with (which may also return TGC_ERR_UNSUPPORTED). */
tgc_status tgc_graph_load_with(const char *path, const tgc_graph_load_options *opts, tgc_diags *diags,
                               tgc_graph **out);

/* As tgc_graph_load, from the `size` bytes at `text`; `name` is used as the
 * file name in messages, `base_dir` is the folder .npy paths resolve
 * beneath (NULL: the current directory). */
tgc_status tgc_graph_load_string(const char *text, size_t size, const char *name,
                                 const char *base_dir, tgc_diags *diags, tgc_graph **out);

/* Releases the graph and everything it owns; NULL is ignored. */
void tgc_graph_free(tgc_graph *g);

/* Writes the graph as a tgc/1 YAML document with every node's `out`
 * (inferred dtypes and shapes) filled in; loading the result gives the same
 * graph. Initializers keep their form: `values:` inline, `file:` paths
 * relative to `dest_dir`, the directory the document will live in, and
 * beneath it, as the loader requires: a file that lies beneath dest_dir is
 * named from there; one that does not has its data written as an .npy
 * beneath dest_dir at the path the graph gave it (e.g. weights/w.npy;
 * folders made as needed, written atomically, a file of that name
 * replaced, never written through a link). dest_dir NULL: paths stay as
 * written (the document is meant for the source file's folder). Returns
 * TGC_ERR_IO if writing fails or TGC_ERR_NOMEM, with a message in `diags`. */
tgc_status tgc_graph_dump_yaml(const tgc_graph *g, FILE *out, const char *dest_dir,
                               tgc_diags *diags);

/* Counts, for summaries: graph inputs, initializers and op nodes. */
size_t tgc_graph_node_count(const tgc_graph *g);

/* Node i (0 <= i < tgc_graph_node_count) for listings: its name, and its op
 * ("Conv") or NULL for a graph input or initializer. Both owned by the
 * graph; NULL when i is out of range. */
const char *tgc_graph_node_name(const tgc_graph *g, size_t i);
const char *tgc_graph_node_op(const tgc_graph *g, size_t i);

/* The graph's inputs (what tgc_session_run feeds), in the order the file
 * declares them: their number, and the name of input i (owned by the
 * graph; NULL when i is out of range). */
int tgc_graph_input_count(const tgc_graph *g);
const char *tgc_graph_input_name(const tgc_graph *g, int i);


/* ---- Tensors ------------------------------------------------------------ */

/* A tensor handle: dtype, concrete shape and data on one device, reference
 * counted. Handles the caller gets from a function named *_create, *_load,
 * or from tgc_session_run, tgc_eager_run and tgc_eager_copy are owned by
 * the caller: release each once with
 * tgc_tensor_release (or tgc_tensor_retain to share it). Inside a scope
 * (see Memory) the scope releases them instead, unless kept.
 *
 * Example usage:
 *     tgc_tensor *x = NULL;
 *     if (tgc_tensor_load_npy("x.npy", diags, &x) != TGC_OK) ...
 *     const int64_t *dims = tgc_tensor_dims(x);   // tgc_tensor_rank(x) of them
 *     tgc_tensor_release(x);
 */
typedef struct tgc_tensor tgc_tensor;

#define TGC_MAX_TENSOR_RANK 8

/* Creates a host tensor of `dtype` and shape dims[0..rank) (rank <= 8, dims
 * >= 0) and copies nbytes = numel * dtype size bytes from `data` (which may
 * be NULL: zero-filled). For TGC_STRING, `data` is an array of numel
 * `const char *` (NUL-terminated UTF-8; a NULL element means ""): each
 * string is copied, the caller keeps its own; NULL data gives numel empty
 * strings. TGC_ERR_INVALID for a bad shape; TGC_ERR_NOMEM. */
tgc_status tgc_tensor_create(tgc_dtype dtype, int rank, const int64_t *dims, const void *data, tgc_tensor **out);

/* Reads a .npy file into a new host tensor; problems go to diags (may be NULL). */
tgc_status tgc_tensor_load_npy(const char *path, tgc_diags *diags, tgc_tensor **out);

/* Writes the tensor as a .npy file, atomically (temporary file, then rename).
 * bfloat16, which has no NumPy dtype, is written as float32 (exactly). */
tgc_status tgc_tensor_save_npy(const tgc_tensor *t, const char *path, tgc_diags *diags);

/* Adds a reference, owned by the caller; returns t. Thread safe. */
tgc_tensor *tgc_tensor_retain(tgc_tensor *t);

/* Drops one reference (a scope's, while a scope holds t: see Memory); the
 * last one frees the handle and its data. NULL is ignored. Thread safe. */
void tgc_tensor_release(tgc_tensor *t);

tgc_dtype tgc_tensor_dtype(const tgc_tensor *t);
int tgc_tensor_rank(const tgc_tensor *t);
const int64_t *tgc_tensor_dims(const tgc_tensor *t);
int64_t tgc_tensor_numel(const tgc_tensor *t);
/* Host pointer to the data (C order), valid while the handle lives; NULL
 * when the data lives in a gpu's memory (an eager result: read it with
 * tgc_tensor_read). Tensors that tgc_session_run returns are always in
 * host memory. For a TGC_STRING
 * tensor it is an array of numel `const char *`, each NULL (meaning "") or
 * a NUL-terminated UTF-8 string owned by the tensor: read-only, never
 * freed by the caller; tgc_tensor_string reads one without the NULL case. */
const void *tgc_tensor_data(const tgc_tensor *t);

/* Element i (0 <= i < numel, C order) of a TGC_STRING tensor: a
 * NUL-terminated UTF-8 string owned by the tensor, valid while the handle
 * lives ("" for an empty element). NULL when t is not a string tensor or i
 * is out of range. */
const char *tgc_tensor_string(const tgc_tensor *t, int64_t i);

/* ---- Sequences and optionals ------------------------------------------- */

/* A handle may hold a sequence of tensors or an optional (ONNX's seq(T)
 * and optional(T): a graph input or output of such a type) instead of a
 * tensor. Its dtype is its elements'; its rank is 0 and its data NULL;
 * its elements are read one by one as handles of their own.
 *
 * Example usage:
 *     tgc_tensor *elems[2] = {a, b}, *seq = NULL;
 *     if (tgc_sequence_create(TGC_FLOAT32, 2, elems, &seq) != TGC_OK) ...  // a, b retained
 *     for (int64_t i = 0; i < tgc_tensor_list_length(seq); i++) {
 *         tgc_tensor *e = tgc_tensor_list_at(seq, i);   // caller releases
 *         ...
 *         tgc_tensor_release(e);
 *     }
 *     tgc_tensor_release(seq);
 */
typedef enum tgc_tensor_kind {
    TGC_TENSOR_PLAIN = 0,    /* a tensor */
    TGC_TENSOR_SEQUENCE = 1, /* a sequence of tensors */
    TGC_TENSOR_OPTIONAL = 2, /* an optional: none, or one tensor or sequence */
} tgc_tensor_kind;

tgc_tensor_kind tgc_tensor_kind_of(const tgc_tensor *t);

/* A new sequence of the n handles elems[0..n) (tensors in host memory, of
 * dtype `dtype`: each retained by the sequence, the caller keeps its own;
 * n may be 0). TGC_ERR_INVALID for an element of another dtype or kind;
 * TGC_ERR_NOMEM. */
tgc_status tgc_sequence_create(tgc_dtype dtype, int n, tgc_tensor *const *elems, tgc_tensor **out);

/* A new optional holding `elem` (a tensor or a sequence, retained) or, with
 * elem NULL, nothing (an optional of `dtype`). TGC_ERR_INVALID for an elem
 * of another dtype, or itself an optional; TGC_ERR_NOMEM. */
tgc_status tgc_optional_create(tgc_dtype dtype, tgc_tensor *elem, tgc_tensor **out);

/* The elements of a sequence, or of an optional (0 or 1); -1 for a tensor. */
int64_t tgc_tensor_list_length(const tgc_tensor *t);

/* Element i of a sequence or an optional, as a new handle the caller
 * releases; NULL when i is out of range, t is a tensor, or out of memory. */
tgc_tensor *tgc_tensor_list_at(const tgc_tensor *t, int64_t i);

/* Creates a host tensor of `dtype` and shape dims[0..rank) (as
 * tgc_tensor_create) over the caller's memory at `data` without copying
 * it: numel * dtype size bytes, C order, aligned to the dtype's size, that
 * must stay valid and unchanged until release(ctx) is called (once, when
 * the last reference goes; release may be NULL). tgc only reads the
 * memory. The host device's allocator figures do not count it; tgc_memory
 * counts the handle and its bytes. Not for TGC_STRING. data may be NULL
 * when numel is 0. TGC_ERR_INVALID (a bad dtype or shape, a misaligned or
 * NULL data pointer: release is not called), TGC_ERR_NOMEM (nor then). */
tgc_status tgc_tensor_create_borrowed(tgc_dtype dtype, int rank, const int64_t *dims, void *data,
                                      void (*release)(void *ctx), void *ctx, tgc_tensor **out);

/* The device whose memory holds t's data: "host" (tensors made by
 * tgc_tensor_create and friends, and session outputs), or the device an
 * eager op left it on ("cpu0", "gpu0"). Static storage of the device;
 * valid while t lives. */
const char *tgc_tensor_device(const tgc_tensor *t);

/* Copies t's data (C order) into the caller's host memory at `dst`, from
 * whatever device holds it, waiting for the device's queued work first:
 * `nbytes` must be numel * dtype size. TGC_ERR_INVALID (a size that
 * differs, or a string tensor: read those with tgc_tensor_string),
 * TGC_ERR_RUNTIME (the device's copy failed). */
tgc_status tgc_tensor_read(const tgc_tensor *t, void *dst, size_t nbytes);

/* ---- Optimization ------------------------------------------------------- */

/* How much the optimization passes (docs/passes.md) rewrite a graph before
 * placement. Each pass preserves the graph's outputs (values within
 * float32 rounding), its inputs and the names of its outputs.
 *
 * Example usage:
 *     tgc_graph *opt = NULL;
 *     tgc_optimize_report rep;
 *     if (tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "cpu", &rep, diags, &opt) == TGC_OK) {
 *         tgc_optimize_report_print(&rep, stderr);   // a line per pass
 *         ... tgc_graph_dump_yaml(opt, stdout, NULL, diags) ...
 *         tgc_graph_free(opt);                        // before g
 *     }
 */
typedef enum tgc_optimize_level {
    TGC_OPTIMIZE_DEFAULT = 0, /* the highest (TGC_OPTIMIZE_ALL) */
    TGC_OPTIMIZE_NONE,        /* `--optimize 0`: the graph as written (float16 nodes without a kernel
                               * computed in float32 all the same: compute-in-float32) */
    TGC_OPTIMIZE_BASIC,       /* `--optimize 1`: constant folding, common subexpressions, dead nodes */
    TGC_OPTIMIZE_ALL,         /* `--optimize 2`: also BatchNorm folding and op fusions */
} tgc_optimize_level;

/* What one pass did. */
typedef struct tgc_pass_summary {
    const char *name;          /* "fold-constants", ... (static) */
    int32_t nodes_before, nodes_after; /* op nodes and initializers */
    int32_t rewrites;          /* nodes it folded, merged or removed; patterns it fused (once each) */
    double ms;                 /* wall time */
} tgc_pass_summary;

#define TGC_MAX_PASSES 32 /* room for every pass of the pipeline (passes/optimize.c) */

typedef struct tgc_optimize_report {
    int n_passes;
    tgc_pass_summary passes[TGC_MAX_PASSES];
} tgc_optimize_report;

/* Runs the optimization passes of `level` over g (validated and inferred,
 * as tgc_graph_load leaves it; g is not changed) for the comma-separated
 * `devices` it will run on ("cpu", "cpu,gpu0"): fusion groups form only
 * when every one has a _FusedElementwise kernel (cpu and gpu do; NULL: not
 * known, so none form). Stores the
 * optimized graph in *out: owned by the caller (tgc_graph_free), its weights borrowed
 * from g, which must outlive it. The result is a valid graph that dumps as
 * tgc/1 and loads again. report may be NULL. TGC_OPTIMIZE_NONE runs only
 * the pass that computes in float32 the float16 and bfloat16 nodes no
 * listed device has a kernel for (without it they cannot be placed), and
 * is otherwise a plain copy. Returns TGC_OK, TGC_ERR_INVALID (a pass broke the graph: a
 * tgc bug, reported in diags) or TGC_ERR_NOMEM. */
tgc_status tgc_graph_optimize(const tgc_graph *g, tgc_optimize_level level, const char *devices,
                              tgc_optimize_report *report, tgc_diags *diags, tgc_graph **out);

/* What tgc_graph_optimize_with runs. */
typedef struct tgc_optimize_options {
    tgc_optimize_level level;
    const char *devices; /* as tgc_graph_optimize's */
    /* Nonzero: float32 nodes that a listed device other than the host has
     * a float16 kernel for compute in float16 (pass compute-in-float16,
     * docs/passes.md): weights held in float16, Casts where values meet
     * float32 nodes, the graph's inputs and outputs keeping their dtypes.
     * Results then differ from float32's by float16 rounding. */
    int float16;
} tgc_optimize_options;

/* tgc_graph_optimize with options o (o->float16 adds compute-in-float16
 * at every level); the same ownership, results and errors. */
tgc_status tgc_graph_optimize_with(const tgc_graph *g, const tgc_optimize_options *o, tgc_optimize_report *report,
                                   tgc_diags *diags, tgc_graph **out);

/* Makes g own `source`, the graph whose weights it borrows (as the result
 * of tgc_graph_optimize borrows its input's): tgc_graph_free(g) then frees
 * source too, after g. So one handle stands for both. TGC_OK, or
 * TGC_ERR_INVALID when g already owns a source. */
tgc_status tgc_graph_adopt_source(tgc_graph *g, tgc_graph *source);

/* Prints one line per pass: name, nodes before -> after, rewrites, ms. */
void tgc_optimize_report_print(const tgc_optimize_report *r, FILE *out);

/* ---- Sessions ------------------------------------------------------------ */

/* A graph compiled for a list of devices, with its weights loaded once,
 * ready to run many times.
 *
 * Example usage:
 *     tgc_session *s = NULL;
 *     if (tgc_session_create(g, "cpu", NULL, diags, &s) != TGC_OK) ...
 *     const char *names[] = {"x"};
 *     tgc_tensor *outs[2];                        // tgc_session_output_count(s)
 *     if (tgc_session_run(s, 1, names, &x, outs, diags) == TGC_OK) { ...; release outs }
 *     tgc_session_free(s);
 */
typedef struct tgc_session tgc_session;

/* How the nodes that device specs, colocation, kernels and the host-memory
 * rule leave open get their device (docs/placement.md). */
typedef enum tgc_placement_mode {
    TGC_PLACEMENT_RULES = 0, /* the first listed device of the best kind (rule 5) */
    TGC_PLACEMENT_AUTO,      /* where the whole graph runs fastest under each device's memory */
} tgc_placement_mode;

typedef struct tgc_session_options {
    /* Relax device specs that name unlisted devices (a warning each). */
    int soft_placement;
    /* Worker threads per device, "cpu0=2,gpu0=1"; unnamed devices get the
     * default: one per core for a cpu, one for a gpu (it only enqueues). */
    const char *threads;
    /* Memory limits per device, "gpu0=64MiB,cpu0=512KiB" (NULL: none). A
     * SIZE is bytes ("1000") or a number with a unit: B, KB, MB, GB, TB
     * (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); "cpu" is
     * cpu0, "gpu" gpu0. The limit holds for the bytes of buffers and for
     * the arena's regions on that device. Loading the weights or a run that
     * would pass it fails with TGC_ERR_NOMEM and a message naming the node,
     * the tensor's dtype and shape, the device and its figures; the run
     * releases everything. A malformed spec or a device not in the session:
     * TGC_ERR_INVALID from tgc_session_create. Before that, the session
     * refuses a plan that cannot fit (tgc_memory_plan_check's rule). */
    const char *memory_limits;
    /* Nonzero: watch each device's memory during runs, so that
     * tgc_session_memory_report can name the largest tensors live at each
     * device's peak (a little work per allocation; none when zero). */
    int memory_report;
    /* The optimization passes run before placement (TGC_OPTIMIZE_DEFAULT:
     * all of them). */
    tgc_optimize_level optimize;
    /* The most iterations any one Loop (or Scan, or SequenceMap) may run in
     * a step; 0: no limit. A loop whose condition never turns false is the
     * caller's to stop: past the limit the run fails with TGC_ERR_RUNTIME
     * and a message naming the loop (rule "max-iterations") instead of
     * running forever. */
    int64_t max_iterations;
    /* The most steps (tgc_session_run calls) that may run at once; 0: no
     * bound. A call past the bound waits, before it starts, until a step
     * ends: back pressure, so that K steps' tensors bound the memory a
     * session's runs hold however many threads call it. */
    int max_inflight;
    /* Devices in other processes (docs/distributed.md): a step fails when a
     * peer process sends nothing, not even the transport's heartbeat, for
     * this many seconds (it died or stopped). 0: the default, 60 s;
     * negative: wait forever. Process-wide: the last session created sets it. */
    double peer_timeout_s;
    /* TGC_PLACEMENT_AUTO: the nodes the rules leave open are split over
     * the listed devices by measured cost, each device's memory (its
     * memory_limits entry, else what it has, less a 5% margin) a hard
     * bound, for one step's latency (max_inflight 0 or 1) or a pipeline's
     * throughput (max_inflight K > 1). Node times are measured on the
     * devices once and cached on disk (docs/placement.md). */
    tgc_placement_mode placement;
    /* Nonzero: the caller gives the session leave to free the data of g's
     * initializers that it holds only in its kernels' own layouts (a
     * weight packed for oneDNN's GEMM, Winograd-transformed filters; the
     * layouts are built while the session is made), and of those the
     * optimizations left behind (a float16 weight whose Cast to float32
     * was folded, a Conv weight a folded BatchNormalization rescaled: the
     * session reads the new copies): each such constant of
     * g keeps its dtype and shape, its data becomes NULL and its
     * `released` is set, so that the process holds the weight once. g is
     * then read for its structure only (not given to another session) and
     * freed by the caller after the session. Zero: g is left as it was;
     * the devices' figures count such a weight once either way. */
    int release_weights;
    /* Nonzero: compute in float16 on the devices other than the host that
     * have the kernels (tgc_optimize_options.float16; `--float16`). */
    int float16;
} tgc_session_options;

/* Creates a session running `g` (borrowed: it must outlive the session) on
 * the comma-separated `devices` ("cpu", "gpu0", "cpu,gpu0", "cpu0,cpu1"):
 * places every node (see docs/placement.md), splits the graph into one
 * partition per device joined by _Send/_Recv pairs, starts a thread pool
 * per device and loads the weights onto the devices that read them, once.
 * opts may be NULL. Problems (an unknown device, a placement conflict, a
 * node without a kernel) go to diags: TGC_ERR_INVALID, or TGC_ERR_NOMEM.
 * Memory is a hard limit: before any device opens or weight loads, the
 * static memory plan of what the session will run (symbols unbound) is
 * checked as tgc_memory_plan_check does, against opts->memory_limits or
 * each device's memory; a device that cannot hold its need fails the
 * creation with TGC_ERR_INVALID (rule "over-memory", the figures per
 * device). Unbound symbols count weights and kernel caches only; the
 * activations are then held to the limits during runs. Sessions spanning
 * processes are not checked (docs/memory.md). */
tgc_status tgc_session_create(const tgc_graph *g, const char *devices, const tgc_session_options *opts,
                              tgc_diags *diags, tgc_session **out);

void tgc_session_free(tgc_session *s);

/* The graph's outputs: count, and the name of output i: the name the
 * model's own file gives it (an ONNX graph output's name, as written, any
 * string) where it has one, else its reference ("node" or "node:k"). The
 * string is the session's. */
int tgc_session_output_count(const tgc_session *s);
const char *tgc_session_output_name(const tgc_session *s, int i);

/* The graph's inputs, fed at run time: count, and the name of input i, the
 * model's own (an ONNX graph input's, as written) where it has one, else
 * its tgc name. tgc_session_run takes either. The string is the session's. */
int tgc_session_input_count(const tgc_session *s);
const char *tgc_session_input_name(const tgc_session *s, int i);

/* Runs the graph once (a step). feeds[i] is the value of graph input
 * names[i] (its tgc name or the model's own, as tgc_session_input_name
 * gives it: an ONNX model's inputs go by their ONNX names,
 * "onnx::Flatten_0", "input.1"); every graph input must be fed once, with
 * the declared dtype and a shape that matches the declaration (a symbol
 * binds to one value across all feeds). A name that is no input is
 * TGC_ERR_INVALID with a message listing the inputs with their dtypes and
 * shapes. On success stores tgc_session_output_count(s) new tensors, owned
 * by the caller, in outputs[]. On failure stores NULLs and returns
 * TGC_ERR_INVALID (bad feeds), TGC_ERR_RUNTIME (a kernel failed: the
 * message names the node, op and device) or TGC_ERR_NOMEM (memory limit);
 * all intermediate memory is released either way.
 *
 * Concurrent steps: many threads may call tgc_session_run on one session
 * at once. Each call is a step of its own, with its own step id (carried by
 * every rendezvous key, so _Send/_Recv pairs of different steps never
 * meet), its own tensors and its own error: a step that fails fails alone.
 * A step's outputs are bitwise those of the same call made alone (kernels
 * never split a sum differently because other steps run). Steps share the
 * session's devices, thread pools, weights and kernel caches, so the
 * partitions of different steps overlap on different devices (pipelining:
 * docs/pipelines.md). tgc_session_options.max_inflight bounds the steps
 * running at once; a call past it waits. Each thread passes its own diags
 * (a tgc_diags is not thread safe); the feeds may be shared (they are only
 * read). tgc_session_free must not overlap any call. Memory: each step
 * holds its own intermediate tensors, so K steps in flight hold up to K
 * times a single step's; all of it is released as each step ends. */
tgc_status tgc_session_run(tgc_session *s, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                           tgc_tensor **outputs, tgc_diags *diags);

/* Steps of s running now (inside tgc_session_run, past the max_inflight
 * wait) in *now and the most that ever ran at once in *peak (either may be
 * NULL). Thread safe. */
void tgc_session_steps_in_flight(tgc_session *s, int *now, int *peak);

/* Tracing (thread safe, concurrent steps included: each step's pairs have
 * flows of their own): after tgc_session_trace_start, every run records its events
 * (a track per device thread, an event per node, flow arrows from each
 * _Send to its _Recv, bytes in use per device) until
 * tgc_session_trace_write writes them as a Chrome trace JSON file (Perfetto,
 * chrome://tracing). TGC_ERR_NOMEM / TGC_ERR_IO. */
tgc_status tgc_session_trace_start(tgc_session *s);
tgc_status tgc_session_trace_write(tgc_session *s, const char *path, tgc_diags *diags);

/* Live buffers and bytes on the session's device `i` (for leak checks). */
typedef struct tgc_memory_figures {
    int64_t live_buffers;
    int64_t bytes_in_use;
    int64_t peak_bytes_in_use;
    int64_t num_allocs;
    int64_t largest_alloc_size;
} tgc_memory_figures;

int tgc_session_device_count(const tgc_session *s);
const char *tgc_session_device_name(const tgc_session *s, int i);
tgc_memory_figures tgc_session_memory(const tgc_session *s, int i);

/* Writes the session's memory report to `out`, per device: the peak bytes
 * in use (weights and the runs' tensors), bytes in use now (after a run:
 * the weights only), reserved bytes, allocations, the largest allocation,
 * fragmentation; beside them the static plan's prediction (see Memory
 * plans) for the shapes of the last run's feeds, and, when the session was
 * created with memory_report set, the largest tensors live at each
 * device's peak (node, dtype, shape, bytes) and the most bytes of tensors
 * the runs held at once. Bytes throughout. TGC_OK, or TGC_ERR_NOMEM. */
tgc_status tgc_session_memory_report(const tgc_session *s, FILE *out);


/* ---- Eager ops ----------------------------------------------------------- */

/* One op at a time on tensors, as TensorFlow's eager mode runs them: an
 * eager context holds a list of devices; tgc_eager_run runs one op by its
 * ONNX name and attributes through the same op registry, shape inference,
 * kernels and allocators as a session, and leaves the results on the
 * device that computed them (read them with tgc_tensor_read, or
 * tgc_tensor_data where that device's memory is host memory).
 *
 * The device of an op, in TensorFlow eager's order:
 *   1. `device` when the caller names one (it must be in the context and
 *      have a kernel for the op and its dtypes);
 *   2. integer shape arithmetic (every input and output int32 or int64,
 *      each output of rank <= 1, inputs in host memory) runs on cpu0;
 *   3. else the device of the first input whose data is not in host
 *      memory (a gpu), else cpu0; if that device has no kernel for the op
 *      and its dtypes, cpu0.
 * Inputs that live elsewhere are copied to the op's device for the op
 * (counted in tgc_eager_stats) and the copies freed after it; an input in
 * host memory is read in place by a cpu kernel. A context always has cpu0.
 *
 * Devices are shared by the contexts of the process (opened by the first
 * that lists one) and live while a context or a tensor needs them: a
 * tensor on gpu0 stays valid after its context is freed. Every result is
 * a new handle, held by the calling thread's innermost scope if one is
 * open (see Memory), else owned by the caller.
 *
 * A kernel cache keyed by (op, attributes, input dtypes, shapes and
 * devices, requested device) keeps what a call works out once: the
 * attributes checked against the op's schema, the device, the kernel, and
 * the output dtypes and shapes where they do not depend on input values.
 *
 * Example usage:
 *     tgc_eager *e = NULL;
 *     if (tgc_eager_create("cpu,gpu0", NULL, diags, &e) != TGC_OK) ...
 *     tgc_tensor *x, *w, *y;                          // x [1, 3, 8, 8], w [4, 3, 3, 3] on the host
 *     tgc_op_attr pads = {.name = "pads", .type = TGC_OP_ATTR_INTS, .ints = (int64_t[]){1, 1, 1, 1}, .n = 4};
 *     tgc_tensor *xw[] = {x, w};
 *     if (tgc_eager_run(e, "Conv", &pads, 1, xw, 2, "gpu0", &y, 1, diags) == TGC_OK) {
 *         float out[4 * 8 * 8];
 *         tgc_tensor_read(y, out, sizeof out);        // y lives on gpu0 until read
 *         tgc_tensor_release(y);
 *     }
 *     tgc_eager_free(e);
 */
typedef struct tgc_eager tgc_eager;

typedef struct tgc_eager_options {
    /* Worker threads of each cpu device's pool, "cpu0=2" (as
     * tgc_session_options.threads; NULL: one per core). gpus need none. */
    const char *threads;
    /* Memory limits, "gpu0=64MiB,cpu0=1GiB" (as tgc_session_options). The
     * devices are shared: a limit holds for every context on the device
     * from now on. NULL: none set. */
    const char *memory_limits;
} tgc_eager_options;

/* Creates a context over the comma-separated `devices` ("cpu",
 * "cpu,gpu0", "gpu1"; cpu0 is added when not listed), opening those no
 * other context holds. opts may be NULL. TGC_ERR_INVALID (a bad list, a
 * gpuN this machine lacks, a bad option; in diags), TGC_ERR_RUNTIME
 * (OpenCL failed), TGC_ERR_NOMEM. */
tgc_status tgc_eager_create(const char *devices, const tgc_eager_options *opts, tgc_diags *diags, tgc_eager **out);

/* Frees the context and its kernel cache; its devices close when no other
 * context and no tensor holds them. Call it when no other thread is
 * running an op on it. NULL is ignored. */
void tgc_eager_free(tgc_eager *e);

/* The context's devices, as full names ("cpu0", "gpu0"), cpu0 first. */
int tgc_eager_device_count(const tgc_eager *e);
const char *tgc_eager_device_name(const tgc_eager *e, int i);

/* An attribute of an op, for tgc_eager_run. The fields of `type` are read:
 * i (INT), f (FLOAT; an INT attribute of the schema refuses it, a FLOAT
 * attribute takes an INT), s (STRING, NUL-terminated), ints / floats /
 * strings with n elements (INTS, FLOATS, STRINGS), tensor (TENSOR: a host
 * tensor, copied). Everything is borrowed for the call. */
typedef enum tgc_op_attr_type {
    TGC_OP_ATTR_INT = 0,
    TGC_OP_ATTR_FLOAT,
    TGC_OP_ATTR_STRING,
    TGC_OP_ATTR_INTS,
    TGC_OP_ATTR_FLOATS,
    TGC_OP_ATTR_STRINGS,
    TGC_OP_ATTR_TENSOR,
} tgc_op_attr_type;

typedef struct tgc_op_attr {
    const char *name;
    tgc_op_attr_type type;
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const double *floats;
    const char *const *strings;
    size_t n;
    const tgc_tensor *tensor;
} tgc_op_attr;

/* Runs op `op` (an ONNX opset 17 name, "Conv") once: inputs[0..n_inputs)
 * (NULL: an omitted optional input) with attrs[0..n_attrs) (unset
 * attributes take the schema's defaults), on `device` ("gpu0", "cpu";
 * NULL: chosen by the rules above). The op gets n_outputs outputs (within
 * its schema's counts; 0: its least, at least 1) and stores that many new
 * tensors in outputs[]. Thread safe: several threads may run ops on one
 * context. On failure stores NULLs and returns TGC_ERR_INVALID (an unknown
 * op or attribute, a bad count, shapes or dtypes the op refuses, a device
 * not in the context or without a kernel; the message names the op and
 * the rule), TGC_ERR_NOMEM (a device full or at its limit: the message
 * gives the tensor and the device's figures) or TGC_ERR_RUNTIME (the kernel
 * failed); nothing is left allocated. */
tgc_status tgc_eager_run(tgc_eager *e, const char *op, const tgc_op_attr *attrs, int n_attrs,
                         tgc_tensor *const *inputs, int n_inputs, const char *device, tgc_tensor **outputs,
                         int n_outputs, tgc_diags *diags);

/* tgc_eager_run's shortcut for an op of one input (b NULL) or two, without
 * attributes, with one output, on the device the rules choose: returns the
 * new tensor (in the innermost scope, or the caller's), or NULL on failure
 * with the message in diags (may be NULL). One foreign call and no arrays:
 * what bindings' operators (Python's + - * / @) take. */
tgc_tensor *tgc_eager_apply(tgc_eager *e, const char *op, tgc_tensor *a, tgc_tensor *b, tgc_diags *diags);

/* A copy of t on `device` of the context ("gpu0", "cpu": cpu0, "host":
 * the host device), new, in the innermost scope or owned by the caller.
 * Counted as a copy. TGC_ERR_INVALID (a device not in the context, strings
 * to a gpu), TGC_ERR_NOMEM, TGC_ERR_RUNTIME, with a message in diags. */
tgc_status tgc_eager_copy(tgc_eager *e, const tgc_tensor *t, const char *device, tgc_tensor **out, tgc_diags *diags);

/* Waits until the work queued on the context's devices is done (gpu
 * kernels run asynchronously; tgc_tensor_read waits by itself).
 * TGC_ERR_RUNTIME when a device reports a failure. */
tgc_status tgc_eager_synchronize(tgc_eager *e);

/* What the context has done since it was created. */
typedef struct tgc_eager_stats {
    int64_t ops;           /* tgc_eager_run calls that ran */
    int64_t cache_hits;    /* calls that found their kernel cache entry */
    int64_t cache_misses;  /* calls that made one (or failed before) */
    int64_t cache_entries; /* entries held now */
    int64_t copies;        /* inputs copied to another device, and tgc_eager_copy calls */
    int64_t copy_bytes;
} tgc_eager_stats;

tgc_eager_stats tgc_eager_get_stats(const tgc_eager *e);

/* The op registry, for bindings that list ops (Python's tgc.ops). */
typedef struct tgc_op_schema {
    const char *name;            /* "Conv" (static) */
    int min_inputs, max_inputs;   /* max -1: any number */
    int min_outputs, max_outputs; /* max -1: any number */
    int n_attrs;                  /* attributes in its schema */
} tgc_op_schema;

/* The number of registered ops, and op i's schema (0 <= i < count; ops
 * named with a leading '_' are tgc's own). TGC_ERR_INVALID out of range. */
int tgc_op_schema_count(void);
tgc_status tgc_op_schema_at(int i, tgc_op_schema *out);

/* The schema of op `name`; TGC_ERR_INVALID when no op has that name. */
tgc_status tgc_op_schema_find(const char *name, tgc_op_schema *out);

/* Attribute i (< n_attrs) of op `name`: its name (static), type and
 * whether it is required. TGC_ERR_INVALID when out of range. */
tgc_status tgc_op_schema_attr(const char *name, int i, const char **attr_name, tgc_op_attr_type *type,
                              int *required);

/* ---- Building graphs in code, and running them as functions ------------- */

/* A graph built one node a call, as a tracer records a program (Python's
 * tgc.function) or a C program writes a model without a file. Each call
 * checks what it adds as the loader and an eager call would (the op, its
 * attributes against the schema, its input count, then its shape
 * inference), so the call that made a mistake fails, with the message in
 * diags. tgc_graph_builder_finish gives a graph as tgc_graph_load would:
 * validated, shape-inferred, dumped by tgc_graph_dump_yaml as a tgc/1
 * document that loads again.
 *
 * Example usage (y = Relu(x @ w) for x of [N, 4]):
 *     tgc_graph_builder *b = NULL;
 *     tgc_builder_value x, w, xw, y;
 *     tgc_graph_builder_create("mlp", &b);
 *     tgc_graph_builder_input(b, "x", TGC_FLOAT32, 2, (int64_t[]){-1, 4}, (const char *[]){"N", NULL}, diags, &x);
 *     tgc_graph_builder_constant(b, "w", w_tensor, diags, &w);      // copies w_tensor's [4, 3] floats
 *     tgc_graph_builder_op(b, "MatMul", NULL, 0, (tgc_builder_value[]){x, w}, 2, 1, NULL, NULL, diags, &xw);
 *     tgc_graph_builder_op(b, "Relu", NULL, 0, &xw, 1, 1, "y", NULL, diags, &y);
 *     tgc_graph *g = NULL;
 *     if (tgc_graph_builder_finish(b, &y, 1, NULL, diags, &g) == TGC_OK) { ... tgc_graph_free(g); }
 *     tgc_graph_builder_free(b);
 */
typedef struct tgc_graph_builder tgc_graph_builder;

/* A value of a graph being built: output `port` of the builder's node
 * `node`. {-1, 0} stands for an omitted optional input. */
typedef struct tgc_builder_value {
    int32_t node;
    int32_t port;
} tgc_builder_value;

/* A new, empty builder of a graph named `name` (NULL: "graph"; messages name
 * it as they would a file), owned by the caller (tgc_graph_builder_free).
 * TGC_ERR_NOMEM. */
tgc_status tgc_graph_builder_create(const char *name, tgc_graph_builder **out);

void tgc_graph_builder_free(tgc_graph_builder *b);

/* Adds graph input `name` (NULL: "input_K") of `dtype` and `rank` (-1:
 * unknown) dims: dims[i] >= 0 a size, dims[i] < 0 a symbol named
 * symbols[i] (symbols NULL or symbols[i] NULL: a fresh one, "unk__K"); one
 * symbol name is one size in every input a run feeds. The inputs are the
 * graph's in the order they are added. Its value in *out. TGC_ERR_INVALID
 * (a name used twice or with ':', a bad dtype or rank), TGC_ERR_NOMEM. */
tgc_status tgc_graph_builder_input(tgc_graph_builder *b, const char *name, tgc_dtype dtype, int rank,
                                   const int64_t *dims, const char *const *symbols, tgc_diags *diags,
                                   tgc_builder_value *out);

/* Adds an initializer `name` (NULL: "const_K") holding a copy of `value`,
 * a tensor in host memory (not strings; the caller keeps it). Its value in
 * *out. A dump of the finished graph into a folder (tgc_graph_dump_yaml's
 * dest_dir) writes its data there as NAME.npy; one without, inline.
 * TGC_ERR_INVALID, TGC_ERR_NOMEM. */
tgc_status tgc_graph_builder_constant(tgc_graph_builder *b, const char *name, const tgc_tensor *value,
                                      tgc_diags *diags, tgc_builder_value *out);

/* Adds a node running `op` (its ONNX name; attributes as tgc_eager_run's)
 * on inputs[0..n_inputs) (values of b; {-1, 0} an omitted optional one),
 * with n_outputs outputs (0: the op's fewest, at least 1, for which
 * `outputs` must have room), named `name`
 * (NULL: "Op_K") and asking for `device` (a device spec as the format's
 * `device:`, or NULL); stores its outputs' values in outputs[0..n_outputs).
 * The node's dtypes and shapes are inferred here: TGC_ERR_INVALID with the
 * inference's message (a dtype the op does not take, shapes that do not
 * broadcast) or the schema's (an unknown op or attribute, a missing input)
 * in diags; a node that failed inference stays in b, unread, and is left
 * out of the finished graph. TGC_ERR_NOMEM. */
tgc_status tgc_graph_builder_op(tgc_graph_builder *b, const char *op, const tgc_op_attr *attrs, int n_attrs,
                                const tgc_builder_value *inputs, int n_inputs, int n_outputs, const char *name,
                                const char *device, tgc_diags *diags, tgc_builder_value *outputs);

/* The inferred dtype and shape of value v: *rank (-1: unknown) dims in
 * dims[] (room for TGC_MAX_TENSOR_RANK), -1 for a symbolic dim whose name
 * (b's string, valid while b lives) goes to symbols[i] (symbols may be
 * NULL; NULL for a size). TGC_ERR_INVALID when v is no inferred value of b. */
tgc_status tgc_graph_builder_value_info(const tgc_graph_builder *b, tgc_builder_value v, tgc_dtype *dtype,
                                        int *rank, int64_t *dims, const char **symbols);

/* Ends the graph: its outputs are outputs[0..n_outputs), named names[i]
 * (names NULL, or an entry NULL: the node's name, "node:k" for a port past
 * 0). Nodes no output reads are left out; every input stays. The graph,
 * validated and inferred as a loaded file, goes to *out, owned by the
 * caller (tgc_graph_free). b is spent either way: only
 * tgc_graph_builder_free remains. TGC_ERR_INVALID (no outputs, a bad
 * value), TGC_ERR_NOMEM. */
tgc_status tgc_graph_builder_finish(tgc_graph_builder *b, const tgc_builder_value *outputs, int n_outputs,
                                    const char *const *names, tgc_diags *diags, tgc_graph **out);

/* A function: a graph compiled once (optimized, placed, partitioned, its
 * weights loaded) and run as one op on tensor handles, as TensorFlow runs a
 * tf.function's graph (PartitionedCall). It runs on the process's shared
 * devices, those of the eager contexts: its inputs are taken where they
 * are (an eager result on gpu0 feeds a node placed there with no copy),
 * its outputs stay on the device that computed them as an eager op's do,
 * and the devices' figures (tgc_memory_devices, the memory tracer) count
 * its weights and each call's tensors.
 *
 * Example usage:
 *     tgc_function *f = NULL;
 *     if (tgc_function_create(g, "cpu,gpu0", NULL, diags, &f) == TGC_OK) {
 *         tgc_tensor *y = NULL;
 *         if (tgc_function_call(f, &x, 1, &y, 1, diags) == TGC_OK) { ...; tgc_tensor_release(y); }
 *         tgc_function_free(f);
 *     }
 */
typedef struct tgc_function tgc_function;

typedef struct tgc_function_options {
    tgc_optimize_level optimize;   /* TGC_OPTIMIZE_DEFAULT: all passes */
    tgc_placement_mode placement;  /* as tgc_session_options.placement */
    int soft_placement;            /* as tgc_session_options */
    const char *threads;           /* worker threads per device, as tgc_session_options */
} tgc_function_options;

/* Compiles g (borrowed: it must outlive f) for the comma-separated
 * `devices` (as tgc_session_create's; no devices of other processes).
 * opts may be NULL. Errors as tgc_session_create's. */
tgc_status tgc_function_create(const tgc_graph *g, const char *devices, const tgc_function_options *opts,
                               tgc_diags *diags, tgc_function **out);

void tgc_function_free(tgc_function *f);

/* Runs f once on inputs[0..n_inputs), the graph's inputs in order (their
 * dtypes and shapes as declared, symbols bound consistently), and stores
 * n_outputs (= the graph's) new handles, owned by the caller, in outputs[]:
 * each on the device that computed it (host memory for one kept there).
 * Many threads may call one function at once (tgc_session_run's rules).
 * On failure stores NULLs: TGC_ERR_INVALID (bad inputs), TGC_ERR_RUNTIME
 * (a kernel failed, the node and device named), TGC_ERR_NOMEM; nothing of
 * the call outlives it either way. */
tgc_status tgc_function_call(tgc_function *f, tgc_tensor *const *inputs, int n_inputs, tgc_tensor **outputs,
                             int n_outputs, tgc_diags *diags);

/* ---- Devices ------------------------------------------------------------- */

/* One device as `tgc devices` shows it. Memory in bytes; -1 where the
 * platform does not report the figure. `used_memory` is what tgc has in use
 * on it in this process. */
typedef struct tgc_device_info {
    char name[16];          /* "cpu", "gpu0", ... as --devices names it */
    char description[256];  /* the hardware's own name */
    char platform[128];     /* "host", or the OpenCL platform */
    char type[16];          /* "cpu", "gpu", "accelerator": what the hardware is */
    unsigned compute_units; /* cores, or OpenCL compute units */
    char isa[16];           /* what the kernels are compiled to: the vector ISA the cpu's
                               elementwise loops use ("avx512", "avx2", "sse2"; capped by
                               TGC_CPU_ISA), or "opencl" */
    int64_t total_memory;
    int64_t used_memory;
    int64_t free_memory;
} tgc_device_info;

/* Fills out[0..max) with the cpu and then every gpuN (see tgc_cl_list for
 * which OpenCL devices serve as gpuN); returns how many there are. */
int tgc_devices_list(tgc_device_info *out, int max);

/* ---- Processes (MPI) ------------------------------------------------------ */

/* A device may belong to another process: "/task:1/cpu0" is the cpu0 of
 * MPI rank 1 (TensorFlow's /job:worker/task:1/device:CPU:0, shortened).
 * Every rank creates the same session from the same graph and device list;
 * each builds and runs only the partitions of its own devices, and the
 * _Send/_Recv pairs between ranks become MPI messages (docs/distributed.md).
 * Rank 0 gives the feeds and gets the outputs; the other ranks call
 * tgc_session_run with no feeds and get NULL outputs. Every rank runs the
 * same steps in the same order (steps are matched by their number).
 *
 * Example usage (started as mpirun -np 2 ./prog):
 *     tgc_distributed_init(diags);
 *     tgc_session_create(g, "/task:0/cpu,/task:1/cpu", NULL, diags, &s);
 *     if (tgc_distributed_rank() == 0) tgc_session_run(s, 1, names, feeds, outs, diags);
 *     else tgc_session_run(s, 0, NULL, NULL, outs, diags);
 *     tgc_session_free(s);
 *     tgc_distributed_finalize(failed);
 */

/* Starts MPI (MPI_Init_thread at MPI_THREAD_SERIALIZED) and the transport's
 * progress thread, which makes every MPI call of the process. Call once,
 * before any session, on every rank; a second call does nothing. Outside
 * mpirun it gives one process. TGC_OK, or TGC_ERR_RUNTIME (rule
 * "mpi-failed") / TGC_ERR_NOMEM. A build without MPI: TGC_OK, one process. */
tgc_status tgc_distributed_init(tgc_diags *diags);

/* This process's rank (0 before init) and the number of processes (1). */
int tgc_distributed_rank(void);
int tgc_distributed_size(void);

/* 1 when this tgc was built with MPI (TGC_MPI), else 0. */
int tgc_distributed_available(void);

/* Stops the transport. failed == 0: waits for what is being sent, then
 * MPI_Finalize (every rank must call it). failed != 0: waits up to 5 s
 * for the other ranks to fail too (so that each reports before mpirun
 * ends the job) and up to 2 s for abort messages to leave, and returns
 * without MPI_Finalize (which would wait for a peer that died); the
 * caller then exits non-zero. */
void tgc_distributed_finalize(int failed);

/* Every rank's devices (tgc_devices_list), gathered on every rank: fills
 * out[0..max) in rank order with task[i] the rank of out[i]; returns the
 * count, or -1 (message in diags) when a rank did not answer within the
 * peer timeout. Collective: every rank calls it. */
int tgc_distributed_devices(tgc_device_info *out, int *task, int max, tgc_diags *diags);

/* ---- Memory ---------------------------------------------------------------- */

/* Who releases a tensor handle, and how to see what is live.
 *
 * Scopes, in the manner of tf.tidy and dispose scopes. tgc_scope_begin opens
 * a scope on the calling thread; scopes nest, and each thread has its own
 * stack of them. Every handle created while a scope is open on the thread
 * (by tgc_tensor_create and its kin, tgc_tensor_load_npy, or as an output
 * of tgc_session_run, tgc_eager_run or tgc_eager_copy) is held by the
 * innermost one: the scope owns the
 * reference the handle was created with, and tgc_scope_end releases that
 * reference of every handle the scope still holds. A handle leaves its
 * scope, and the scope no longer releases it, by:
 *   - tgc_keep(t): the caller owns the reference (release it once, later);
 *   - tgc_scope_move_out(t): the scope enclosing t's scope holds it instead
 *     (the caller owns it when there is none), as tf.tidy hands back its
 *     result;
 *   - tgc_tensor_release(t): releasing a handle that a scope holds gives up
 *     the scope's reference early; the scope's end does not release it
 *     again.
 * A reference added by tgc_tensor_retain always belongs to the retainer and
 * outlives the scope's end (to share a handle beyond its scope, retain it
 * or keep it). So a retain and release pair made while the handle is still
 * in its scope leaves the handle out of the scope with one reference, the
 * retainer's: prefer tgc_keep there. Outside every scope, handles belong to
 * whoever created them, as in the Tensors section. Handles in a scope may
 * be released, kept or moved out from any thread; a thread that exits with
 * scopes open has them ended.
 *
 * Example usage (the classic leak, fixed: every run's outputs are released
 * at the end of the loop body, but for one result kept):
 *     tgc_tensor *last = NULL;
 *     for (int i = 0; i < 100; i++) {
 *         if (tgc_scope_begin() != TGC_OK) break;   // TGC_ERR_NOMEM: no scope
 *         tgc_tensor *outs[2];                      // logits, probs
 *         if (tgc_session_run(s, 1, names, &x, outs, diags) == TGC_OK && i == 99)
 *             last = tgc_keep(outs[0]);             // ours now: released below
 *         tgc_scope_end();                          // releases probs (and logits, unless kept)
 *     }
 *     tgc_memory_info m = tgc_memory();             // m.live_tensors: x and last
 *     tgc_tensor_release(last);
 *
 *     tgc_scope_begin();                            // nested: a helper hands back one result
 *     tgc_scope_begin();
 *     tgc_tensor *tmp, *result;
 *     tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){4}, NULL, &tmp);
 *     tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){4}, NULL, &result);
 *     tgc_scope_move_out(result);                   // the outer scope holds it now
 *     tgc_scope_end();                              // releases tmp
 *     ... use result ...
 *     tgc_scope_end();                              // releases result
 *
 *     tgc_memory_trace_start();                     // the host's peak since now
 *     ... runs ...
 *     tgc_memory_trace t;
 *     tgc_memory_trace_report(&t);                  // t.peak_bytes_in_use, t.num_allocs
 *     tgc_memory_trace_reset();                     // the next peak starts from here
 */

/* Opens a scope on the calling thread, nested in the innermost open one.
 * TGC_OK, or TGC_ERR_NOMEM: no scope was opened (do not end it). The scope
 * is the library's until the matching tgc_scope_end. */
tgc_status tgc_scope_begin(void);

/* Ends the calling thread's innermost scope: releases the reference it
 * holds of every handle still in it (handles whose other references
 * remain live on, owned by those references' holders) and frees the
 * scope. Returns the number of references released; 0 when no scope is
 * open (nothing happens). */
int64_t tgc_scope_end(void);

/* Takes `t` out of the scope that holds it, whichever thread's scope that
 * is: the caller now owns the reference the scope held and releases it
 * with tgc_tensor_release. Does nothing to a handle that no scope holds.
 * Returns t (NULL for NULL). */
tgc_tensor *tgc_keep(tgc_tensor *t);

/* Moves `t` from the scope that holds it to the scope that one is nested
 * in, which releases it when it ends; when the holding scope is the
 * outermost, as tgc_keep (the caller owns it). Does nothing to a handle
 * that no scope holds. Returns t (NULL for NULL). */
tgc_tensor *tgc_scope_move_out(tgc_tensor *t);

/* What is live, as tf.memory() gives it. */
typedef struct tgc_memory_info {
    int64_t live_tensors;      /* tensor handles alive in the process, all threads and devices */
    int64_t live_tensor_bytes; /* their data: numel x dtype size, summed over them */
    /* The host device, which holds the data of the handles made on the
     * host (tgc_tensor_create, session outputs) and, during a run, the
     * values kept in host memory (shape arithmetic; the weights a gpu
     * session reads as shapes, for the session's life). Eager results live
     * on their devices (tgc_memory_devices); sessions' own devices report
     * through tgc_session_memory. peak_bytes_in_use is since the process
     * started or the last tgc_memory_trace_reset. */
    tgc_memory_figures host;
    int scope_depth;        /* the calling thread's open scopes */
    int64_t scoped_tensors; /* the handles they hold */
} tgc_memory_info;

/* A snapshot of the figures above (a value: nothing to release). Thread
 * safe; the process-wide figures may move while other threads work. */
tgc_memory_info tgc_memory(void);

/* A device's memory, in bytes; -1 where the platform does not say. */
typedef struct tgc_device_memory_info {
    int64_t total_bytes;
    int64_t used_bytes; /* what tgc has in use there, as tgc_devices_list reports it */
    int64_t free_bytes;
} tgc_device_memory_info;

/* The memory of device `device_name` ("cpu", "cpu0", "host": the host's
 * memory; "gpu" or "gpuN"), from tgc_devices_list, in *out. TGC_OK, or
 * TGC_ERR_INVALID (all figures -1) for a malformed name or a gpuN this
 * machine does not have. */
tgc_status tgc_device_memory(const char *device_name, tgc_device_memory_info *out);

/* The memory trace of the host device: bytes used now and the peak since
 * the trace started or was last reset. One trace per process: it sees every
 * thread's allocations. */
typedef struct tgc_memory_trace {
    int64_t bytes_in_use;      /* the host device's live bytes now */
    int64_t peak_bytes_in_use; /* the most at once since start or the last reset */
    int64_t num_allocs;        /* host-device allocations since start or the last reset */
    int64_t live_buffers;      /* the host device's buffers now */
    int64_t live_tensors;      /* tensor handles now (as tgc_memory) */
} tgc_memory_trace;

/* Starts the trace (again: a reset). Thread safe. */
void tgc_memory_trace_start(void);

/* Fills *out (a value the caller owns). TGC_ERR_INVALID (all zero) before
 * the first tgc_memory_trace_start. */
tgc_status tgc_memory_trace_report(tgc_memory_trace *out);

/* Starts a new peak: peak_bytes_in_use becomes bytes_in_use now, and
 * num_allocs counts from zero. This is also the host device's own
 * high-water mark (tgc_memory's host figures). Thread safe. */
void tgc_memory_trace_reset(void);

/* One device's memory, as tf.memory() and fastai's gpu_mem_get_all give it. Bytes. */
typedef struct tgc_memory_device {
    char device[16];           /* "host", "cpu0", "gpu0" */
    int64_t live_tensors;      /* tensor handles whose data lives there */
    int64_t live_tensor_bytes; /* their numel x dtype size */
    int64_t bytes_in_use;      /* the device allocator's: tensors, and copies in flight */
    int64_t peak_bytes_in_use; /* since the device opened, or a trace began (below) */
    int64_t bytes_limit;       /* 0: none */
    int64_t num_allocs;        /* since the device opened */
} tgc_memory_device;

/* Fills out[0..max) with the host device, then every device an eager
 * context has open (cpus, then gpus, by index); returns how many there are
 * (which may be more than max). A snapshot; thread safe. Sessions' own
 * devices report through tgc_session_memory. */
int tgc_memory_devices(tgc_memory_device *out, int max);

/* A memory trace over a block of code, as fastai's GPUMemTrace: per
 * device, the bytes in use at its start and now, and the most in use at
 * once in between. Traces nest and overlap (each keeps its own peak);
 * starting one resets the devices' peak_bytes_in_use (tgc_memory_devices).
 *
 * Example usage:
 *     tgc_memory_tracer *tr = NULL;
 *     tgc_memory_tracer_start(&tr);
 *     ... eager ops, runs ...
 *     tgc_memory_delta d[8];
 *     int n = tgc_memory_tracer_report(tr, d, 8);  // d[i].used_delta, d[i].peak_delta
 *     tgc_memory_tracer_free(tr);
 */
typedef struct tgc_memory_tracer tgc_memory_tracer;

typedef struct tgc_memory_delta {
    char device[16];          /* as tgc_memory_device */
    int64_t used_start;       /* bytes in use when the trace started (0: the device opened since) */
    int64_t used_now;
    int64_t used_delta;       /* used_now - used_start */
    int64_t peak;             /* the most in use at once since the start */
    int64_t peak_delta;       /* peak - used_start: what the block needed above its start */
    int64_t tensors_delta;    /* live tensors now - at the start */
} tgc_memory_delta;

/* Starts a trace, owned by the caller (tgc_memory_tracer_free). TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_memory_tracer_start(tgc_memory_tracer **out);

/* Fills out[0..max) with a row per device, in tgc_memory_devices' order
 * (devices closed since the start are left out); returns how many there
 * are. Any number of times while the trace runs. */
int tgc_memory_tracer_report(const tgc_memory_tracer *t, tgc_memory_delta *out, int max);

/* Ends the trace; NULL is ignored. */
void tgc_memory_tracer_free(tgc_memory_tracer *t);

/* ---- Placement ------------------------------------------------------------ */

/* A device for every node of a graph, from a list of devices: explicit
 * device specs, colocation groups, kernel availability, the host-memory rule
 * for integer shape tensors, then the default (gpu before cpu). See
 * docs/placement.md for the rules and the reasons each node reports. The
 * graph goes through the passes, the placer and the partitioner exactly as
 * a session's does (one compile driver), so what is dumped is what runs.
 *
 * Example usage:
 *     tgc_placed *p = NULL;
 *     if (tgc_graph_place(g, "cpu,gpu0", NULL, diags, &p) != TGC_OK) {
 *         tgc_diags_print(diags, stderr);   // "m.yaml:31:5: error: cannot place 'loss' ..."
 *     } else {
 *         printf("%s\n", tgc_placed_device_name(p, "conv1"));   // "gpu0"
 *         tgc_placed_summary(p, stderr);
 *         tgc_placed_dump_yaml(p, stdout, NULL, diags);
 *     }
 *     tgc_placed_free(p);
 */
typedef struct tgc_placed tgc_placed;

typedef struct tgc_place_options {
    /* Nonzero: a device spec that cannot hold (unlisted device, no kernel
     * there, colocated with a conflicting spec) is relaxed to its kind, then
     * dropped, with a warning in diags, instead of being an error. */
    int soft_placement;
    /* A node whose inputs are all in host memory and at most this many
     * bytes in total stays on the host (0: the default, 4096; negative: never). */
    int64_t small_host_bytes;
    /* The passes run first, as a session runs them (TGC_OPTIMIZE_DEFAULT:
     * all); the graph placed is then the optimized one, tgc_placed_graph.
     * TGC_OPTIMIZE_NONE places the graph as given. */
    tgc_optimize_level optimize;
    /* As tgc_session_options: automatic placement, and what it weighs. */
    tgc_placement_mode placement;
    const char *memory_limits;
    const char *threads;
    int max_inflight;
    int float16; /* as tgc_session_options: float32 nodes in float16 where a gpu has the kernels */
} tgc_place_options;

/* Optimizes `g` (borrowed: it must outlive *out) as opts->optimize says
 * and places every node of the result on the devices of the
 * comma-separated `devices` ("cpu", "cpu,gpu0", "cpu0,cpu1"; cpu is cpu0,
 * gpu is gpu0; NULL: the default list, a session's), the subgraphs of If,
 * Loop and Scan too (each as a graph of its own on the same devices).
 * Placement is static: whether a gpuN exists on this machine is checked
 * when a session opens it, not here. opts may be NULL (all defaults). On
 * success stores a new placement owned by the caller in *out (soft
 * placement's relaxations are warnings in diags). On failure
 * stores NULL and returns TGC_ERR_INVALID with one message per conflict in
 * diags (bad device list, unlisted device, no kernel, colocation conflict),
 * or TGC_ERR_NOMEM. Deterministic: the same graph and list give the same
 * placement. */
tgc_status tgc_graph_place(const tgc_graph *g, const char *devices, const tgc_place_options *opts,
                           tgc_diags *diags, tgc_placed **out);

/* Releases the placement (and the optimized graph it made; not the
 * caller's); NULL is ignored. */
void tgc_placed_free(tgc_placed *p);

/* The graph placed: the optimized graph (owned by p) or, at
 * TGC_OPTIMIZE_NONE, the caller's. The lookups and dumps below name its
 * nodes: a node the passes fused or removed is not there. */
const tgc_graph *tgc_placed_graph(const tgc_placed *p);

/* The devices listed, as full names ("cpu0", "gpu0"), in list order. */
int tgc_placed_device_count(const tgc_placed *p);
const char *tgc_placed_device(const tgc_placed *p, int i);

/* The full device name ("gpu0") that node, graph input or initializer
 * `node_name` got, and the rule that decided it ("spec", "colocation",
 * "kernel", "host-memory", "small-host", "default", "soft", "consumer");
 * NULL when the graph has no such node. Static or owned by p. */
const char *tgc_placed_device_name(const tgc_placed *p, const char *node_name);
const char *tgc_placed_reason(const tgc_placed *p, const char *node_name);

/* Writes the graph as a tgc/1 document (as tgc_graph_dump_yaml) with every
 * node's `device:` set to the full name of the device it got, so loading
 * the result and placing it again on the same devices gives the same
 * placement. TGC_ERR_IO or TGC_ERR_NOMEM with a message in diags. */
tgc_status tgc_placed_dump_yaml(const tgc_placed *p, FILE *out, const char *dest_dir, tgc_diags *diags);

/* Writes {"graph": NAME, "devices": [...], "nodes": {NODE: {"device": D,
 * "reason": R}, ...}} with nodes in graph order (inputs, initializers, op
 * nodes). TGC_ERR_IO with a message in diags if writing fails. */
tgc_status tgc_placed_dump_json(const tgc_placed *p, FILE *out, tgc_diags *diags);

/* Writes a Graphviz digraph: one box per node filled with its device's
 * colour (a legend names them), data edges labelled with their tensors'
 * shapes, edges that cross devices drawn bold. TGC_ERR_IO as above. */
tgc_status tgc_placed_dump_dot(const tgc_placed *p, FILE *out, tgc_diags *diags);

/* Writes a short summary: nodes per device, and the tensors that cross
 * devices (one per tensor and destination device, as the partitioner will
 * send them): their number and bytes per step from their shapes, symbolic
 * dims counted as 1 (the summary names them). */
void tgc_placed_summary(const tgc_placed *p, FILE *out);

/* ---- Partitions ------------------------------------------------------------ */

/* A placed graph split into one standalone subgraph per device that has
 * nodes. Every edge between devices becomes a _Send on the producer's
 * device and a _Recv on the consumer's, meeting in a rendezvous under the
 * key "send_device;recv_device;tensor" (";host" appended when the receiver
 * takes the tensor in host memory: a shape argument of a GPU kernel). One
 * pair per tensor and receiving device (and memory), however many consumers
 * read it there; a control edge between devices becomes a pair carrying an
 * empty tensor. Graph inputs are fed, and outputs fetched, on the device
 * that has them.
 *
 * Example usage:
 *     tgc_partitions *parts = NULL;
 *     if (tgc_graph_partition(g, placed, diags, &parts) == TGC_OK) {
 *         tgc_partitions_summary(parts, stderr);   // pairs and bytes per device pair
 *         for (int i = 0; i < tgc_partitions_count(parts); i++)
 *             ... tgc_partitions_device(parts, i) ("cpu0") and
 *                 tgc_partitions_dump_yaml(parts, i, f, dir, diags) ...
 *     }
 *     tgc_partitions_free(parts);
 */
typedef struct tgc_partitions tgc_partitions;

/* The partitions of `placed` (made with it, by the same compile driver
 * as a session's), for the graph `g` it placed: the one given to
 * tgc_graph_place, or tgc_placed_graph's. Both are borrowed and must
 * outlive *out. On success stores a new handle owned by the caller in
 * *out; on failure stores NULL and returns TGC_ERR_INVALID (a placement of
 * another graph) or TGC_ERR_NOMEM, with a message in diags. */
tgc_status tgc_graph_partition(const tgc_graph *g, const tgc_placed *placed, tgc_diags *diags, tgc_partitions **out);

/* Releases the partitions; NULL is ignored. */
void tgc_partitions_free(tgc_partitions *p);

/* The partitions: the graph's in device-list order, then each subgraph's
 * (If's branches, a Loop's body...: placed and split as graphs of their
 * own, depth first in node order): how many, partition i's device ("cpu0",
 * "gpu0"; NULL when i is out of range), its label (the device for the
 * graph's, "loop.body@gpu0" for a subgraph's; valid until the next call)
 * and its node count (_Send and _Recv included). */
int tgc_partitions_count(const tgc_partitions *p);
const char *tgc_partitions_device(const tgc_partitions *p, int i);
const char *tgc_partitions_label(const tgc_partitions *p, int i);
size_t tgc_partitions_node_count(const tgc_partitions *p, int i);

/* The number of _Send/_Recv pairs, the subgraphs' included. */
int tgc_partitions_pair_count(const tgc_partitions *p);

/* Checks the partitions against the graph: every _Recv has exactly one
 * _Send with its key, each partition is acyclic, and the union of the
 * partitions with the pairs contracted is the graph (the same nodes and
 * edges). TGC_OK, or TGC_ERR_INVALID with one message per problem (rule
 * "bad-partition": a tgc bug), or TGC_ERR_NOMEM. */
tgc_status tgc_partitions_validate(const tgc_partitions *p, tgc_diags *diags);

/* Writes partition i as a tgc/1 document (as tgc_graph_dump_yaml, `file:`
 * paths relative to dest_dir): its nodes with `device:` set, its _Send and
 * _Recv nodes with their attributes and `out`, its share of the graph's
 * inputs and outputs (a subgraph's captures are inputs of its partitions;
 * a comment above the document says how its keys get the frame and
 * iteration at run time). The document loads again with tgc_graph_load.
 * TGC_ERR_IO or TGC_ERR_NOMEM with a message in diags. */
tgc_status tgc_partitions_dump_yaml(const tgc_partitions *p, int i, FILE *out, const char *dest_dir,
                                    tgc_diags *diags);

/* Writes every partition of the graph (nodes, inputs, outputs) and every
 * pair (key, tensor, devices, nodes, dtype, shape, bytes, host memory) as
 * one JSON document, with the traffic per device pair (subgraphs: the YAML
 * dump). TGC_ERR_IO as above. */
tgc_status tgc_partitions_dump_json(const tgc_partitions *p, FILE *out, tgc_diags *diags);

/* Writes a Graphviz digraph: one cluster per device, a dashed edge from each
 * _Send to its _Recv labelled with the tensor. TGC_ERR_IO as above. */
tgc_status tgc_partitions_dump_dot(const tgc_partitions *p, FILE *out, tgc_diags *diags);

/* Writes one line: the partitions and their node counts, the number of
 * pairs, and per (sending, receiving) device the pairs and bytes per step
 * (symbolic dims counted as 1, as the line says). */
void tgc_partitions_summary(const tgc_partitions *p, FILE *out);

/* ---- Memory plans ----------------------------------------------------------- */

/* What each device's memory will be, before a run: the graph is placed and
 * partitioned as a session would, then every tensor a run allocates gets a
 * lifetime over the executor's schedule (its producer's step to its last
 * reader's; graph outputs to the end) and, per device, an offset in one
 * arena, greedily by size as TensorFlow Lite's arena planner does (or in
 * order of first use, where that packs the arena smaller). Tensors
 * a kernel overwrites in place share a buffer, as the executor forwards
 * them. Weights are resident and counted apart. Per device:
 *   - planned peak: the arena's size (offsets aligned as the device's arena);
 *   - lower bound: the most bytes live at one step (no plan does better);
 *   - naive sum: every tensor in memory of its own.
 * Shapes are made concrete by binding symbols ("N=400"); unbound symbols
 * are taken as 1, and the plan says which.
 *
 * Example usage:
 *     tgc_memory_plan *mp = NULL;
 *     tgc_memory_plan_options o = {.bind = "N=400"};
 *     if (tgc_graph_memory_plan(g, "cpu,gpu0", &o, diags, &mp) == TGC_OK) {
 *         for (int i = 0; i < tgc_memory_plan_count(mp); i++) {
 *             tgc_memory_plan_figures f = tgc_memory_plan_get(mp, i);
 *             printf("%s: %lld bytes\n", f.device, (long long)f.planned_peak);
 *         }
 *         tgc_memory_plan_write(mp, stdout, 0, diags);   // the table
 *     }
 *     tgc_memory_plan_free(mp);
 */
typedef struct tgc_memory_plan tgc_memory_plan;

typedef struct tgc_memory_plan_options {
    int soft_placement; /* as tgc_session_options */
    const char *bind;   /* "N=400,B=2" (NULL: none bound) */
    tgc_optimize_level optimize; /* as tgc_session_options: the plan is of the graph a session runs */
    /* As tgc_session_options: the placement the session would make. */
    tgc_placement_mode placement;
    const char *memory_limits;
    const char *threads;
    int max_inflight;
    int float16; /* as tgc_session_options */
} tgc_memory_plan_options;

/* Places, partitions and plans `g` (borrowed: it must outlive *out) on the
 * comma-separated `devices` (as tgc_session_create; no device is opened).
 * opts may be NULL. On success stores a new plan owned by the caller in
 * *out. TGC_ERR_INVALID with messages in diags: a bad --bind list (rule
 * "bad-bind": an unknown symbol, a malformed value), a bad device list, a
 * placement conflict; or TGC_ERR_NOMEM. */
tgc_status tgc_graph_memory_plan(const tgc_graph *g, const char *devices, const tgc_memory_plan_options *opts,
                                 tgc_diags *diags, tgc_memory_plan **out);

/* Releases the plan; NULL is ignored. */
void tgc_memory_plan_free(tgc_memory_plan *p);

/* One memory's figures, in bytes. */
typedef struct tgc_memory_plan_figures {
    char device[16];       /* "cpu0", "gpu0"; "host": host memory (int shape values), over all partitions */
    int64_t weights_bytes; /* initializers resident there (not those a kernel cache holds instead) */
    int64_t planned_peak;  /* the arena's size */
    int64_t lower_bound;
    int64_t naive_sum;
    int32_t tensors;       /* tensors planned */
    int64_t cache_bytes;   /* kernel caches kept across runs: weights in a kernel's own layout (packed GEMM
                            * weights, column panels, transformed filters), whether or not the original goes */
} tgc_memory_plan_figures;

/* The memories: one per device that has nodes, in device-list order, then
 * "host" when anything lives in host memory (its figures are the sum over
 * the partitions, which run at once). */
int tgc_memory_plan_count(const tgc_memory_plan *p);
tgc_memory_plan_figures tgc_memory_plan_get(const tgc_memory_plan *p, int i);

/* Writes the plan: json == 0, a table (per memory: weights, planned peak,
 * lower bound, naive sum; then the largest tensors live at each device's
 * busiest step: node, dtype, shape, bytes), else one JSON document with
 * every buffer's lifetime and offset too. TGC_ERR_IO with a message in
 * diags when writing fails. */
tgc_status tgc_memory_plan_write(const tgc_memory_plan *p, FILE *out, int json, tgc_diags *diags);

/* Memory is a hard limit (docs/memory.md): checks that each device of the
 * plan can hold what it would need -- weights, the kernels' own layouts
 * of them (kernel caches), its partition's planned activation peak,
 * workspaces -- within its limit in `memory_limits` ("gpu0=64MiB,cpu=1GiB",
 * as tgc_session_options; NULL: none) or else the memory it reports
 * (tgc_device_memory; a gpuN this machine lacks is not compared; cpus
 * without a limit share the host's memory), less a 5% margin. The same
 * check tgc_session_create makes before it loads anything. TGC_OK with a
 * note (rule "memory-fits") giving each device's need by category and
 * what it has; TGC_ERR_INVALID with an error (rule "over-memory") giving
 * the same figures, and the largest tensor live at the busiest step of a
 * device over, when one cannot hold its need; TGC_ERR_INVALID (rule
 * "bad-memory-limit") for a malformed spec or a device the plan does not
 * have. Where a symbol was left unbound (taken as 1), only weights and
 * kernel caches are counted: activations would be a guess. */
tgc_status tgc_memory_plan_check(const tgc_memory_plan *p, const char *memory_limits, tgc_diags *diags);

/* ---- ONNX import ------------------------------------------------------------ */

/* ONNX models (opset 13-17; older opsets where a later op means the same,
 * see onnx/onnx_legacy.c) converted into tgc/1 graph files.
 *
 * Example usage:
 *     if (tgc_onnx_import("resnet18.onnx", "out/resnet18.yaml", diags) != TGC_OK)
 *         tgc_diags_print(diags, stderr);
 *         // "resnet18.onnx: error: unsupported op 'LSTM' (2 nodes: 'l1', 'l2') [unsupported-op]"
 *     // else out/resnet18.yaml, weights in out/resnet18_weights/NAME.npy
 */

/* Reads the ONNX model at onnx_path and writes it as a tgc/1 file at
 * yaml_out_path, with every initializer that is not a small integer tensor
 * (<= 64 elements, inline as `values:`) or a float scalar as an .npy file in
 * STEM_weights/ beside it (created if needed; STEM is the YAML's name
 * without .yaml). Names become tgc names: characters outside
 * [A-Za-z0-9_.:/-] turn into '_', and so does the ':' of a name ending in
 * ':' and digits ("x:0" -> "x_0"), clashes get "_1", "_2"... in the
 * model's order; a node is named after its first output. The ONNX names
 * of graph inputs, graph outputs and nodes are kept beside as
 * `source_name` where they differ: sessions are fed and fetched by them
 * (tgc_session_input_name, tgc_session_output_name), and messages and
 * traces name nodes by them (docs/graph-format.md). dim_params become
 * symbols, unknown dims fresh symbols; Constant nodes become initializers.
 * The written file is then loaded (tgc_graph_load) to check it.
 * Returns TGC_OK; TGC_ERR_UNSUPPORTED when the model uses what tgc lacks
 * (diags then lists every unsupported op type, attribute and dtype at once,
 * each with its count and first nodes, inside subgraphs with their node's
 * path, and the attribute values inference refuses in the model's other
 * nodes, checked through a temporary folder in $TMPDIR or /tmp; rules "unsupported-op",
 * "unsupported-attribute", "unsupported-dtype", "unsupported-opset", or the
 * loader's "unsupported"); TGC_ERR_INVALID for a file that is not a valid
 * ONNX model (rule "bad-model": truncated, dangling names) or a graph tgc's
 * loader rejects; TGC_ERR_IO; TGC_ERR_NOMEM. A model refused before writing
 * leaves no YAML file behind (it is written to a temporary name and
 * renamed); one that the loader rejects keeps it, since the loader's
 * messages point into it. */
tgc_status tgc_onnx_import(const char *onnx_path, const char *yaml_out_path, tgc_diags *diags);

/* tgc_onnx_import with options: external data resolves beneath
 * opts->weights_dir instead of the model's folder (NULL opts or field: the
 * model's folder). Either way a location that is absolute, climbs out with
 * `..` or is (or passes through) a symlink leading out of that folder is
 * refused (rule "bad-model", TGC_ERR_INVALID: ONNX's own checker requires
 * as much since CVE-2022-25882), as is a file that is not regular or holds
 * fewer bytes than offset + the tensor's size. A weights_dir that is not a
 * folder is TGC_ERR_IO. opts is borrowed for the call. */
tgc_status tgc_onnx_import_with(const char *onnx_path, const char *yaml_out_path, const tgc_graph_load_options *opts,
                                tgc_diags *diags);

/* Reads the ONNX model at onnx_path straight into a new graph (*out, the
 * caller's): the graph tgc_onnx_import's file would load as, names,
 * source_names and symbols the same, without writing or reading any file
 * but the model (and its external data): each weight is read once and
 * copied once. Initializers tgc_onnx_import would write as .npy files
 * carry that path (STEM_weights/NAME.npy, STEM the model's name without
 * .onnx) for a dump with a destination folder to write them to; a dump
 * without one writes their values inline. Messages name onnx_path, without
 * a line, and nodes by their ONNX names. opts as tgc_onnx_import_with's,
 * its limits applied to the graph as tgc_graph_load_with's. Returns
 * TGC_OK; on failure *out is NULL and the status and messages are
 * tgc_onnx_import's (TGC_ERR_UNSUPPORTED, TGC_ERR_INVALID, TGC_ERR_IO,
 * TGC_ERR_NOMEM). */
tgc_status tgc_onnx_load_with(const char *onnx_path, const tgc_graph_load_options *opts, tgc_diags *diags,
                              tgc_graph **out);

/* What tgc_onnx_list lists about a model. */
typedef enum tgc_onnx_list_kind {
    TGC_ONNX_INPUT_NAMES, /* the names tgc_onnx_import gives the graph inputs fed
                             at run time (initializers excluded), in the model's order */
    TGC_ONNX_OP_TYPES,    /* the op types the graph uses, each once, in order of first
                             use ("domain.Op" outside the ONNX domain) */
} tgc_onnx_list_kind;

/* Lists `what` of the model at onnx_path: stores the number of entries in
 * *count and a new array of new strings in *names, released with
 * tgc_onnx_names_free. Errors as tgc_onnx_import's for a file that does
 * not read as a model. */
tgc_status tgc_onnx_list(const char *onnx_path, tgc_onnx_list_kind what, tgc_diags *diags, int *count,
                         char ***names);
void tgc_onnx_names_free(char **names, int count);

/* Reads a serialized ONNX TensorProto (a .pb file, as ONNX's test data
 * stores inputs and outputs) into a new host tensor owned by the caller.
 * TGC_ERR_IO, TGC_ERR_INVALID (not a TensorProto, data not matching its
 * dims), TGC_ERR_UNSUPPORTED (a dtype tgc lacks) or TGC_ERR_NOMEM, with a
 * message in diags. */
tgc_status tgc_onnx_tensor_load(const char *pb_path, tgc_diags *diags, tgc_tensor **out);

/* The same for a value of kind `kind`: a TensorProto (TGC_TENSOR_PLAIN), a
 * SequenceProto of tensors (TGC_TENSOR_SEQUENCE) or an OptionalProto of a
 * tensor or such a sequence (TGC_TENSOR_OPTIONAL), ONNX's onnx-data.proto.
 * `dtype` is the elements' where the file cannot say (an empty sequence, an
 * empty optional). Errors as tgc_onnx_tensor_load's; TGC_ERR_UNSUPPORTED
 * for maps, sparse tensors and nested sequences. */
tgc_status tgc_onnx_value_load(const char *pb_path, tgc_tensor_kind kind, tgc_dtype dtype, tgc_diags *diags,
                               tgc_tensor **out);

#ifdef __cplusplus
}
#endif
#endif
