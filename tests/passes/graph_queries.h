/* What the pass tests ask of an optimized graph: how many nodes of an op
 * it has, and a node by name; and how they make one (a graph from YAML
 * text, optimized) and run one on the cpu, failing the test when that
 * fails. */
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

/* The op nodes of g whose op is `op` with n_inputs inputs (written ones,
 * omitted included). */
static inline int count_op_inputs(const tgc_graph *g, const char *op, int n_inputs) {
    int n = 0;
    for (int32_t id = 0; id < g->n_nodes; id++)
        n += g->nodes[id].kind == TGC_NODE_OP && strcmp(g->nodes[id].op_name, op) == 0 &&
             g->nodes[id].n_inputs == n_inputs;
    return n;
}

/* Node `name` of g, or NULL. */
static inline const tgc_node *node_named(const tgc_graph *g, const char *name) {
    int32_t id = tgc_graph_find(g, name);
    return id >= 0 ? &g->nodes[id] : NULL;
}

/* Runs g on the cpu with options o (NULL: the defaults) and x (dtype,
 * dims) fed as "x"; output 0 (the caller releases it), NULL after a
 * failure, which fails the test. */
static inline tgc_tensor *run_fed(const tgc_graph *g, const tgc_session_options *o, tgc_dtype dtype, int rank,
                                  const int64_t *dims, const void *x) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_tensor *feed = NULL, *y = NULL;
    const char *name = "x";
    tgc_status st = tgc_session_create(g, "cpu", o, d, &s);
    if (st == TGC_OK) st = tgc_tensor_create(dtype, rank, dims, x, &feed);
    if (st == TGC_OK) st = tgc_session_run(s, 1, &name, &feed, &y, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    tgc_tensor_release(feed);
    tgc_session_free(s);
    tgc_diags_free(d);
    return y;
}

/* Runs g unoptimized on one cpu thread with x (float32, dims) fed as "x"; output 0
 * (the caller releases it). */
static inline tgc_tensor *run_x(const tgc_graph *g, int rank, const int64_t *dims, const float *x) {
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_NONE, .threads = "cpu0=1"};
    return run_fed(g, &o, TGC_FLOAT32, rank, dims, x);
}

#endif
