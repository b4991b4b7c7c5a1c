/* The editing kit of the optimization passes (private to the library).
 *
 * A pass edits a working graph in place through these functions (replace
 * the uses of a value, remove a node, add a node or a constant), and
 * tgc_rewrite_finish rebuilds it in the IR's canonical order (inputs,
 * initializers, then op nodes topologically), drops what was removed,
 * and infers the nodes the pass added. Use counts per value are kept up to
 * date by every edit, so a pass can ask "is this the only reader?" at any
 * time. Node pointers are invalidated by tgc_rewrite_add_*: keep ids.
 *
 * Example (MatMul + Add -> Gemm, in passes/matmul_add_to_gemm.c):
 *     int32_t gemm;
 *     tgc_ref ins[3] = {a, b, bias};
 *     if (tgc_rewrite_add_op(rw, "Gemm", add_id, ins, 3, 1, &gemm) == TGC_OK) {
 *         tgc_rewrite_replace_uses(rw, (tgc_ref){add_id, 0}, (tgc_ref){gemm, 0});
 *         tgc_rewrite_remove(rw, add_id);   // the Gemm takes the Add's name
 *         tgc_rewrite_remove(rw, matmul_id);
 *     }
 */
#ifndef TGC_PASSES_REWRITE_H
#define TGC_PASSES_REWRITE_H

#include "graph/graph.h"

typedef struct tgc_rewrite {
    tgc_graph *g;       /* the working graph (owned); edited in place */
    bool *removed;      /* per node */
    bool *added;        /* per node: made by the pass, inferred at finish */
    int32_t *like;      /* per added node: whose name it takes if that node goes, or -1 */
    int32_t *value_base; /* per node: index of its output 0 in `uses` */
    int32_t *uses;      /* per value: data inputs and graph outputs reading it */
    int32_t cap_nodes, n_values, cap_values;
    int32_t next_name;  /* counter for made-up names */
    int32_t edits;      /* rewrites the pass made (it counts them: nodes folded, merged, fused) */
    /* The kinds of device the graph will run on (bit k: kind k,
     * devices/backend.h; set by the driver); 0: not known, any kind. */
    uint32_t kinds;
    bool fuse_groups;   /* every device of the run has a float32 _FusedElementwise kernel (set by the driver) */
    bool fuse_groups_half; /* ... and a float16 one (the gpu has; set by the driver) */
    bool float16;       /* tgc_optimize_options.float16 (set by the driver) */
} tgc_rewrite;

/* Starts editing g (taken over: freed by tgc_rewrite_finish or
 * tgc_rewrite_abandon). g must be validated and inferred, with topo set.
 * TGC_OK or TGC_ERR_NOMEM (g freed). */
tgc_status tgc_rewrite_begin(tgc_rewrite *rw, tgc_graph *g);

/* How many data inputs and graph outputs read value r. */
int32_t tgc_rewrite_uses(const tgc_rewrite *rw, tgc_ref r);

/* Stores in out[0..max) the ids of the live nodes with a data input reading
 * r (a node once however many of its inputs read it); returns how many
 * there are (may exceed max). O(nodes): for pattern matching around a
 * candidate, not for every node. */
int tgc_rewrite_readers(const tgc_rewrite *rw, tgc_ref r, int32_t *out, int max);

/* True when r is one of the graph's outputs. */
bool tgc_rewrite_is_output(const tgc_rewrite *rw, tgc_ref r);

/* Every data input and graph output reading `from` reads `to` instead. */
void tgc_rewrite_replace_uses(tgc_rewrite *rw, tgc_ref from, tgc_ref to);

/* Sets data input `k` of node `id` to `to` (counts kept). */
void tgc_rewrite_set_input(tgc_rewrite *rw, int32_t id, int k, tgc_ref to);

/* Removes node id: its reads of other values stop counting. Its own
 * outputs must have no readers left (replace them first). */
void tgc_rewrite_remove(tgc_rewrite *rw, int32_t id);

/* Adds an op node `op_name` (a registered op) reading inputs[0..n_inputs)
 * with n_outputs outputs, no attributes, positions and requested device
 * taken from node `like`. Its name is `like`'s when `like` is removed
 * before finish and nothing else takes it, else "<like>/<op_name>_K".
 * TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_rewrite_add_op(tgc_rewrite *rw, const char *op_name, int32_t like, const tgc_ref *inputs,
                              int n_inputs, int n_outputs, int32_t *id);

/* Node id runs after node `before` (a control edge, "^before"); the
 * order of the finished graph and of every plan keeps it. TGC_OK or
 * TGC_ERR_NOMEM. */
tgc_status tgc_rewrite_add_control(tgc_rewrite *rw, int32_t id, int32_t before);

/* Node id (one the pass added) keeps the name it was given instead of
 * taking its `like`'s: another node made like it takes that name. */
void tgc_rewrite_keep_own_name(tgc_rewrite *rw, int32_t id);

/* Adds an initializer holding `data` (taken over, whatever the result).
 * Named as tgc_rewrite_add_op names its node when like >= 0; else
 * "<base>" or "<base>_K", the first that is free. */
tgc_status tgc_rewrite_add_const(tgc_rewrite *rw, int32_t like, const char *base, tgc_const *data, int32_t *id);

/* Gives node `to` deep copies of every attribute of node `from` (to has none yet). */
tgc_status tgc_rewrite_copy_attrs(tgc_rewrite *rw, int32_t from, int32_t to);

/* Replaces single-output op node id by a copy reading inputs[0..n_inputs)
 * instead: same op, attributes (deep copies), name, position and requested
 * device; id's readers read the copy and id is removed. *copy is the new
 * node's id, whose attributes the caller may then change. TGC_OK or
 * TGC_ERR_NOMEM. */
tgc_status tgc_rewrite_replace_op(tgc_rewrite *rw, int32_t id, const tgc_ref *inputs, int n_inputs, int32_t *copy);

/* Adds (or replaces) list attribute `name` of node id with n values
 * (copied): int64_t for TGC_ATTR_INTS, double for TGC_ATTR_FLOATS, const
 * char * for TGC_ATTR_STRINGS. */
tgc_status tgc_rewrite_set_attr_list(tgc_rewrite *rw, int32_t id, const char *name, tgc_attr_type type, size_t n,
                                     const void *values);

/* Adds (or replaces) attribute `name` of node id. */
tgc_status tgc_rewrite_set_attr_int(tgc_rewrite *rw, int32_t id, const char *name, int64_t v);
tgc_status tgc_rewrite_set_attr_string(tgc_rewrite *rw, int32_t id, const char *name, const char *v);
tgc_status tgc_rewrite_set_attr_float(tgc_rewrite *rw, int32_t id, const char *name, double v);

/* Rebuilds the edited graph into *out in canonical order: removed nodes
 * dropped, ids renumbered, topo set, added nodes inferred (a failure is a
 * tgc bug, reported as such in diags). Frees the working graph and rw's
 * tables. TGC_OK, TGC_ERR_INVALID or TGC_ERR_NOMEM (*out NULL). */
tgc_status tgc_rewrite_finish(tgc_rewrite *rw, tgc_diags *diags, tgc_graph **out);

/* Frees the working graph and rw's tables without a result. */
void tgc_rewrite_abandon(tgc_rewrite *rw);

/* A fresh graph with g's path, directory, name, symbols (same indices)
 * and load limits, and no nodes. NULL if out of memory. */
tgc_graph *tgc_rewrite_empty_like(const tgc_graph *g);

/* A copy of g (node for node, same ids; weights borrowed from g, which must
 * outlive it), validated order and inferred infos included. NULL if out of
 * memory. */
tgc_graph *tgc_graph_copy(const tgc_graph *g);

#endif
