/* The passes that run after parsing, in order (private to the library). */
#ifndef TGC_GRAPH_PASSES_H
#define TGC_GRAPH_PASSES_H

#include "graph/graph.h"

/* Checks the structure of a parsed graph whose references are resolved:
 * each node's input count against its op, output ports in range, no
 * omitted required input, no cycle (the message names the cycle). Sets each
 * op node's n_outputs (the most of: the op's minimum, the highest port
 * referenced plus one, the declared `out` entries) and allocates its
 * outputs; computes g->topo. Every problem goes to `diags`.
 * Returns TGC_OK, TGC_ERR_INVALID or TGC_ERR_NOMEM. */
tgc_status tgc_graph_validate(tgc_graph *g, tgc_diags *diags);

/* Infers every tensor's dtype, shape and (for small integer tensors) value
 * in topological order, running each op's inference function and checking
 * the result against the node's declared `out`. A node whose inputs failed
 * is skipped, so one mistake gives one message. Needs tgc_graph_validate
 * first. Returns TGC_OK, TGC_ERR_INVALID or TGC_ERR_NOMEM. */
tgc_status tgc_graph_infer(tgc_graph *g, tgc_diags *diags);

/* Infers node `id` alone (its inputs already inferred), as
 * tgc_graph_infer does for each node: for a node a later stage adds. Its
 * outputs must be allocated (n_outputs set). Returns TGC_OK,
 * TGC_ERR_INVALID (the problem in diags) or TGC_ERR_NOMEM. */
tgc_status tgc_graph_infer_node(tgc_graph *g, int32_t id, tgc_diags *diags);

#endif
