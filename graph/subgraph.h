/* Subgraphs: the graphs that If, Loop and Scan carry as attributes
 * (then_branch, else_branch, body). Private to the library.
 *
 * A subgraph is a tgc_graph whose parent is the graph of the node that
 * holds it. It reads outer values by name, as ONNX does: the loader turns
 * each such name into a capture (an input node of the subgraph, listed in
 * captures[]) and gives the owning node an implicit input carrying the
 * outer value in (ONNX Runtime's implicit inputs, TensorFlow's Enter). So
 * every stage that follows edges (ordering, liveness, placement,
 * partitioning) sees the outer value used by the node, and a subgraph is a
 * standalone graph whose feeds are its formal inputs, then its captures.
 *
 * Signatures (ONNX opset 17; N carried values, K scan outputs):
 *   If(cond; then_branch, else_branch): branches take no inputs and give
 *     the same number of outputs, the If's outputs.
 *   Loop(M, cond, v_initial[N]; body): body(iteration_num, cond, v[N]) ->
 *     (cond, v[N], scan[K]); the Loop gives v_final[N], scan[K] stacked.
 *   Scan(state[N], scan_in[M]; body, num_scan_inputs M): body(state[N],
 *     scan_elem[M]) -> (state[N], scan_elem_out[K]); gives state_final[N],
 *     scan_out[K] stacked.
 *
 * Example usage:
 *     const tgc_graph *body = tgc_node_subgraph(n, "body");
 *     for (int32_t j = 0; j < body->n_captures; j++)
 *         outer value of capture j = n->inputs[body->capture_input[j]];
 */
#ifndef TGC_GRAPH_SUBGRAPH_H
#define TGC_GRAPH_SUBGRAPH_H

#include "graph/graph.h"

/* How deep subgraphs may nest (a body inside a body...): a model file is
 * untrusted input, and each stage walks subgraphs recursively. */
#define TGC_MAX_SUBGRAPH_DEPTH 16

/* Inputs of n written in the file (its implicit inputs left out). */
static inline int tgc_node_explicit_inputs(const tgc_node *n) { return n->n_inputs - n->n_implicit; }

/* The subgraph attribute `name` of n, or NULL. */
tgc_graph *tgc_node_subgraph(const tgc_node *n, const char *name);

/* True when n has at least one subgraph attribute. */
bool tgc_node_has_subgraphs(const tgc_node *n);

/* The number of feeds of g: its formal inputs, then its captures. Feed
 * i < n_inputs_nodes is node i; feed n_inputs_nodes + j is captures[j]. */
static inline int32_t tgc_graph_feed_count(const tgc_graph *g) { return g->n_inputs_nodes + g->n_captures; }

/* The node id of feed i of g (see tgc_graph_feed_count). */
static inline int32_t tgc_graph_feed_node(const tgc_graph *g, int32_t i) {
    return i < g->n_inputs_nodes ? i : g->captures[i - g->n_inputs_nodes];
}

/* The feed index of node id in g, or -1 when it is not an input or capture. */
int32_t tgc_graph_feed_index(const tgc_graph *g, int32_t id);

/* Makes `body` (a subgraph of `outer`, held by outer's node `owner`) read
 * the outer value `value` under the name `name`: a new capture node in
 * body named `name` (one TGC_NODE_INPUT output, not yet inferred), and an
 * implicit input of the owner carrying `value` (shared with an earlier
 * capture of the same value by another of the owner's subgraphs). Stores
 * the capture's node id in *local. The caller checks that body has no
 * node of that name. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_subgraph_add_capture(tgc_graph *body, const char *name, tgc_graph *outer, int32_t owner,
                                    tgc_ref value, int32_t *local);

/* A deep copy of subgraph src (nodes, attributes and nested subgraphs,
 * captures, order; constant data borrowed, as tgc_node_copy_body does). Its
 * parent is NULL until tgc_graph_adopt_subgraphs runs on the graph that
 * holds it. NULL if out of memory. */
tgc_graph *tgc_subgraph_clone(const tgc_graph *src);

/* Makes g the parent of every subgraph its nodes hold (and sets their
 * depth): for stages that build a graph from copies of another's nodes. */
void tgc_graph_adopt_subgraphs(tgc_graph *g);

/* The outputs n has by its subgraphs' signatures (If: a branch's output
 * count; Loop: body outputs - 1; Scan: body outputs), or -1 when n has no
 * subgraph or the count cannot be told (a signature error reported later). */
int tgc_subgraph_node_outputs(const tgc_node *n);

/* Checks the signature of node `id`'s subgraphs (see the top of this
 * file) and validates each subgraph (tgc_graph_validate, recursively),
 * reporting every problem in diags, each at its position inside the
 * subgraph (rule "subgraph-signature" for signatures). TGC_OK,
 * TGC_ERR_INVALID or TGC_ERR_NOMEM. */
tgc_status tgc_subgraph_validate_node(tgc_graph *g, int32_t id, tgc_diags *diags);

#endif
