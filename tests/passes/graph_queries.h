/* What the pass tests ask of an optimized graph: how many nodes of an op
 * it has, and a node by name. */
#ifndef TGC_TESTS_PASSES_GRAPH_QUERIES_H
#define TGC_TESTS_PASSES_GRAPH_QUERIES_H

#include "graph/graph.h"

#include <string.h>

/* The op nodes of g whose op is `op`. */
static inline int count_op(const tgc_graph *g, const char *op) {
    int n = 0;
    for (int32_t id = 0; id < g->n_nodes; id++)
        n += g->nodes[id].kind == TGC_NODE_OP && strcmp(g->nodes[id].op_name, op) == 0;
    return n;
}

/* Node `name` of g, or NULL. */
static inline const tgc_node *node_named(const tgc_graph *g, const char *name) {
    int32_t id = tgc_graph_find(g, name);
    return id >= 0 ? &g->nodes[id] : NULL;
}

#endif
