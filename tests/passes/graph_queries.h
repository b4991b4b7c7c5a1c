/* What the pass tests ask of an optimized graph: how many nodes of an op
 * it has, and a node by name; and how they make one (a graph from YAML
 * text, optimized), failing the test when that fails. */
#ifndef TGC_TESTS_PASSES_GRAPH_QUERIES_H
#define TGC_TESTS_PASSES_GRAPH_QUERIES_H

#include "graph/graph.h"
#include "tests/harness.h"
#include "tgc.h"

#include <stdio.h>
#include <string.h>

/* The graph `yaml` describes (its messages printed when it does not load). */
static inline tgc_graph *loaded_graph(const char *yaml, const char *name, tgc_diags *d) {
    tgc_graph *g = NULL;
    tgc_status st = tgc_graph_load_string(yaml, strlen(yaml), name, NULL, d, &g);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return g;
}

/* g optimized at `level` for `devices` (the caller frees it). */
static inline tgc_graph *optimized_graph(const tgc_graph *g, tgc_optimize_level level, const char *devices,
                                         tgc_diags *d) {
    tgc_graph *opt = NULL;
    tgc_status st = tgc_graph_optimize(g, level, devices, NULL, d, &opt);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return opt;
}

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
