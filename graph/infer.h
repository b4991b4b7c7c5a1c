/* What an op's inference function sees: its node's inputs, attributes and
 * outputs, and a way to report a problem at the node's position.
 *
 * Inputs are indexed as written; an omitted optional input ("") or one past
 * the written count reads as NULL. Attributes have already been checked
 * against the op's schema (names and types), so readers only pick defaults.
 * Errors name the node and op and are placed at the node (or at input i).
 *
 * Example usage:
 *     const tgc_tensor_info *a = tgc_infer_input(c, 0);
 *     int64_t axis = tgc_infer_attr_int(c, "axis", 1);
 *     int ax;
 *     if (!tgc_axis_normalize(axis, a->shape.rank, &ax))
 *         return tgc_infer_fail(c, -1, "bad-attribute",
 *                               "attribute 'axis' is %lld, out of range for rank %d",
 *                               (long long)axis, a->shape.rank);
 */
#ifndef TGC_GRAPH_INFER_H
#define TGC_GRAPH_INFER_H

#include "graph/op_registry.h"

struct tgc_infer_ctx {
    tgc_graph *graph;
    tgc_node *node;
    tgc_diags *diags;
    /* Set when a fresh symbol could not be made (out of memory); from then
     * on tgc_infer_set_output returns TGC_ERR_NOMEM. Zero-initialise. */
    bool nomem;
    /* Run-time use (the executor computing output shapes of concrete
     * inputs): when set, inputs are read from input_infos[i] (dtype
     * TGC_DTYPE_INVALID: omitted) and outputs written to output_infos[k]
     * instead of the graph; a dimension that would need a fresh symbol
     * sets `unresolved` instead of changing the graph. */
    const tgc_tensor_info *input_infos;
    tgc_tensor_info *output_infos;
    bool runtime;
    bool unresolved;
    /* Rank probing (graph/infer_rank.h): when set, a fresh dim is the
     * symbol probe_sym, which stands for "differs by rank", instead of a
     * new symbol in the graph. */
    bool probing;
    int32_t probe_sym;
};

/* Number of inputs as written (including omitted ones; the implicit inputs
 * of a node with subgraphs left out, though tgc_infer_input reads them). */
int tgc_infer_num_inputs(const tgc_infer_ctx *c);

/* Input i's info, or NULL when omitted or i >= the written count. */
const tgc_tensor_info *tgc_infer_input(const tgc_infer_ctx *c, int i);

/* Number of outputs of this node (fixed before inference runs). */
int tgc_infer_num_outputs(const tgc_infer_ctx *c);

/* Sets output i's dtype and shape (value cleared). Returns TGC_OK, or
 * TGC_ERR_NOMEM after a failed tgc_infer_fresh_dim, or reports
 * "size-overflow" (naming the output's and the inputs' shapes) and returns
 * TGC_ERR_INVALID when the shape's concrete dims already give an element
 * count or byte size that does not fit (tgc_shape_size_fits). An output at or past
 * tgc_infer_num_outputs (an optional output the node does not have) is
 * ignored, so ops set optional outputs without checking the count. */
tgc_status tgc_infer_set_output(tgc_infer_ctx *c, int i, tgc_dtype dtype, const tgc_shape *shape);

/* As tgc_infer_set_output (which always makes a tensor), for an output of
 * kind `kind` (graph.h's tgc_value_kind): dtype and shape are the
 * elements' for a sequence, the held value's for an optional. */
tgc_status tgc_infer_set_output_kind(tgc_infer_ctx *c, int i, int kind, tgc_dtype dtype, const tgc_shape *shape);

/* Sets output i's compile-time value (n <= TGC_MAX_VALUE_LEN elements);
 * call after tgc_infer_set_output. Does nothing (TGC_OK) unless output i is
 * int32/int64 of rank 0 or 1 with n elements (rank 0: n == 1). Returns
 * TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_infer_set_value(tgc_infer_ctx *c, int i, int n, const tgc_dim *value);

/* Attribute readers: the attribute if present (types already checked),
 * else the default. INT attributes given as FLOAT never reach here (the
 * loader rejects them); FLOAT attributes written as integers are converted. */
const tgc_attr *tgc_infer_attr(const tgc_infer_ctx *c, const char *name);
int64_t tgc_infer_attr_int(const tgc_infer_ctx *c, const char *name, int64_t dflt);
double tgc_infer_attr_float(const tgc_infer_ctx *c, const char *name, double dflt);
const char *tgc_infer_attr_string(const tgc_infer_ctx *c, const char *name, const char *dflt);
/* INTS: stores the list in *out (borrowed, owned by the node) and its length
 * in *n; returns false (leaving *out NULL, *n 0) when absent. */
bool tgc_infer_attr_ints(const tgc_infer_ctx *c, const char *name, const int64_t **out, size_t *n);

/* Reports an error at input `input_index`'s reference (or at the node when
 * -1), prefixed "node 'NAME' (OP): ", with the rule name `rule`:
 * "dtype-mismatch", "shape-mismatch" (shapes that cannot go together),
 * "bad-attribute" (an attribute's value, e.g. an axis out of range),
 * "bad-input" (an input's compile-time value, e.g. Reshape's target),
 * "size-overflow" (an element count, byte size or sum of sizes that does
 * not fit, support/checked.h),
 * "unsupported" (valid ONNX that tgc does not do). Returns TGC_ERR_INVALID
 * (or TGC_ERR_NOMEM). */
tgc_status tgc_infer_fail(tgc_infer_ctx *c, int input_index, const char *rule, const char *fmt, ...)
    TGC_PRINTF(4, 5);

/* Where graph g sits, for messages about its nodes, written into buf and
 * returned: "" for a top-level graph, else " in 'loop1' body: 'pick1'
 * then_branch" (each owning node by its model name, tgc_node_label, and the
 * attribute that holds the subgraph, outermost first). */
const char *tgc_infer_where(const tgc_graph *g, char *buf, size_t size);

/* A fresh symbolic dim (unk__K) for a dimension inference cannot tell. If
 * the symbol cannot be made (out of memory) returns a concrete 0 and the
 * graph records the failure; inference of the node then fails. */
tgc_dim tgc_infer_fresh_dim(tgc_infer_ctx *c);

/* The same, in the callback form tgc_shape_broadcast takes (ctx is c). */
tgc_dim tgc_infer_fresh_dim_cb(void *c);

/* Lists the inputs' shapes for a message ("[1, 9, 4, 4] and [6]"; the
 * first six, then a count); buf must hold at least 128 bytes. */
const char *tgc_infer_input_shapes_str(const tgc_infer_ctx *c, char *buf, size_t size);

/* Formats a shape for messages; buf must hold at least 128 bytes. */
const char *tgc_infer_shape_str(const tgc_infer_ctx *c, const tgc_shape *s, char *buf, size_t size);

/* Dtype checks on input i; each reports "dtype-mismatch" and returns false
 * when the input's dtype is not in the class. */
bool tgc_infer_require_float(tgc_infer_ctx *c, int i);   /* float32, float16, bfloat16, float64 */
bool tgc_infer_require_numeric(tgc_infer_ctx *c, int i); /* float or int, not bool */
bool tgc_infer_require_int(tgc_infer_ctx *c, int i);     /* int32, int64 */
bool tgc_infer_require_dtype(tgc_infer_ctx *c, int i, tgc_dtype t);
/* Inputs i and j must have the same dtype. */
bool tgc_infer_require_same_dtype(tgc_infer_ctx *c, int i, int j);

/* Inputs with known values: true when input i has a compile-time value
 * whose elements are all concrete and which has at most max elements;
 * copies them into out and sets *n. */
bool tgc_infer_input_concrete_value(const tgc_infer_ctx *c, int i, int64_t *out, int max, int *n);

#endif
