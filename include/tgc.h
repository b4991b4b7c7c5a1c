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
    TGC_DTYPE_COUNT,
    TGC_DTYPE_INVALID = -1,
} tgc_dtype;

/* Returns the graph-format name ("float32", ...) of `t`, or "invalid". */
const char *tgc_dtype_name(tgc_dtype t);

/* Returns the element size of `t` in bytes (bool is one byte), 0 if invalid. */
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
 * (.npy paths are relative to the file), validates every rule of the format
 * and infers each tensor's dtype and shape. On success stores a new graph
 * owned by the caller in *out and returns TGC_OK. On failure stores NULL,
 * appends every problem found to `diags` (which must not be NULL) and returns
 * TGC_ERR_INVALID (rule broken), TGC_ERR_IO (file unreadable) or
 * TGC_ERR_NOMEM. */
tgc_status tgc_graph_load(const char *path, tgc_diags *diags, tgc_graph **out);

/* As tgc_graph_load, from the `size` bytes at `text`; `name` is used as the
 * file name in messages, `base_dir` resolves relative .npy paths (NULL: the
 * current directory). */
tgc_status tgc_graph_load_string(const char *text, size_t size, const char *name,
                                 const char *base_dir, tgc_diags *diags, tgc_graph **out);

/* Releases the graph and everything it owns; NULL is ignored. */
void tgc_graph_free(tgc_graph *g);

/* Writes the graph as a tgc/1 YAML document with every node's `out`
 * (inferred dtypes and shapes) filled in; loading the result gives the same
 * graph. Initializers keep their form: `values:` inline, `file:` paths
 * rewritten relative to `dest_dir`, the directory the document will live in
 * (NULL: the source file's directory, so paths stay as written). Returns
 * TGC_ERR_IO if writing fails or TGC_ERR_NOMEM, with a message in `diags`. */
tgc_status tgc_graph_dump_yaml(const tgc_graph *g, FILE *out, const char *dest_dir,
                               tgc_diags *diags);

/* Counts, for summaries. */
size_t tgc_graph_node_count(const tgc_graph *g);


/* ---- Tensors ------------------------------------------------------------ */

/* A tensor handle: dtype, concrete shape and data on one device, reference
 * counted. Handles the caller gets from a function named *_create, *_load,
 * or from tgc_session_run are owned by the caller: release each once with
 * tgc_tensor_release (or tgc_tensor_retain to share it).
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
 * be NULL: zero-filled). TGC_ERR_INVALID for a bad shape; TGC_ERR_NOMEM. */
tgc_status tgc_tensor_create(tgc_dtype dtype, int rank, const int64_t *dims, const void *data, tgc_tensor **out);

/* Reads a .npy file into a new host tensor; problems go to diags (may be NULL). */
tgc_status tgc_tensor_load_npy(const char *path, tgc_diags *diags, tgc_tensor **out);

/* Writes the tensor as a .npy file, atomically (temporary file, then rename). */
tgc_status tgc_tensor_save_npy(const tgc_tensor *t, const char *path, tgc_diags *diags);

tgc_tensor *tgc_tensor_retain(tgc_tensor *t);
void tgc_tensor_release(tgc_tensor *t);

tgc_dtype tgc_tensor_dtype(const tgc_tensor *t);
int tgc_tensor_rank(const tgc_tensor *t);
const int64_t *tgc_tensor_dims(const tgc_tensor *t);
int64_t tgc_tensor_numel(const tgc_tensor *t);
/* Host pointer to the data (C order), valid while the handle lives. Tensors
 * that tgc_session_run returns are always in host memory. */
const void *tgc_tensor_data(const tgc_tensor *t);

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

typedef struct tgc_session_options {
    /* Relax device specs that name unlisted devices (a warning each). */
    int soft_placement;
    /* Worker threads per device, "cpu0=2,gpu0=1"; unnamed devices get the
     * default: one per core for a cpu, one for a gpu (it only enqueues). */
    const char *threads;
} tgc_session_options;

/* Creates a session running `g` (borrowed: it must outlive the session) on
 * the comma-separated `devices` ("cpu", "gpu0", "cpu,gpu0", "cpu0,cpu1"):
 * places every node (see docs/placement.md), splits the graph into one
 * partition per device joined by _Send/_Recv pairs, starts a thread pool
 * per device and loads the weights onto the devices that read them, once.
 * opts may be NULL. Problems (an unknown device, a placement conflict, a
 * node without a kernel) go to diags: TGC_ERR_INVALID, or TGC_ERR_NOMEM. */
tgc_status tgc_session_create(const tgc_graph *g, const char *devices, const tgc_session_options *opts,
                              tgc_diags *diags, tgc_session **out);

void tgc_session_free(tgc_session *s);

/* The graph's outputs: count, and the name of output i. */
int tgc_session_output_count(const tgc_session *s);
const char *tgc_session_output_name(const tgc_session *s, int i);

/* Runs the graph once. feeds[i] is the value of graph input names[i]; every
 * graph input must be fed once, with the declared dtype and a shape that
 * matches the declaration (a symbol binds to one value across all feeds).
 * On success stores tgc_session_output_count(s) new tensors, owned by the
 * caller, in outputs[]. On failure stores NULLs and returns TGC_ERR_INVALID
 * (bad feeds), TGC_ERR_RUNTIME (a kernel failed: the message names the node,
 * op and device) or TGC_ERR_NOMEM (memory limit); all intermediate memory is
 * released either way. */
tgc_status tgc_session_run(tgc_session *s, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                           tgc_tensor **outputs, tgc_diags *diags);

/* Tracing: after tgc_session_trace_start, every run records its events
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
    int64_t total_memory;
    int64_t used_memory;
    int64_t free_memory;
} tgc_device_info;

/* Fills out[0..max) with the cpu and then every gpuN (see tgc_cl_list for
 * which OpenCL devices serve as gpuN); returns how many there are. */
int tgc_devices_list(tgc_device_info *out, int max);

/* ---- Placement ------------------------------------------------------------ */

/* A device for every node of a graph, from a list of devices: explicit
 * device specs, colocation groups, kernel availability, the host-memory rule
 * for integer shape tensors, then the default (gpu before cpu). See
 * docs/placement.md for the rules and the reasons each node reports.
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
} tgc_place_options;

/* Places every node of `g` (borrowed: it must outlive *out) on the devices
 * of the comma-separated `devices` ("cpu", "cpu,gpu0", "cpu0,cpu1"; cpu is
 * cpu0, gpu is gpu0). Placement is static: whether a gpuN exists on this
 * machine is checked when a session opens it, not here. opts may be NULL
 * (all defaults). On success stores a new placement owned by the caller in
 * *out (soft placement's relaxations are warnings in diags). On failure
 * stores NULL and returns TGC_ERR_INVALID with one message per conflict in
 * diags (bad device list, unlisted device, no kernel, colocation conflict),
 * or TGC_ERR_NOMEM. Deterministic: the same graph and list give the same
 * placement. */
tgc_status tgc_graph_place(const tgc_graph *g, const char *devices, const tgc_place_options *opts,
                           tgc_diags *diags, tgc_placed **out);

/* Releases the placement (not its graph); NULL is ignored. */
void tgc_placed_free(tgc_placed *p);

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

#ifdef __cplusplus
}
#endif
#endif
