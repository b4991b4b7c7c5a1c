/* Subgraphs in the tgc/1 format (graph/subgraph.h): outer values read by
 * name become captures and implicit inputs; If, Loop and Scan infer into
 * their subgraphs (carried dims that change become symbols, scan outputs
 * grow a dim, If merges its branches); copies are deep; dumps round-trip.
 * Expected shapes are worked out by hand from ONNX's definitions of the
 * ops. */
#include "tests/harness.h"

#include "graph/graph.h"
#include "graph/subgraph.h"
#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tgc_graph *load_text(const char *text) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load_string(text, strlen(text), "model.yaml", ".", d, &g);
    if (s != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL(s, TGC_OK);
    return g;
}

static tgc_graph *load_file(const char *rel) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load(tgc_test_path(rel), d, &g);
    if (s != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL(s, TGC_OK);
    return g;
}

static const tgc_node *node(const tgc_graph *g, const char *name) {
    int32_t id = tgc_graph_find(g, name);
    CU_ASSERT_FATAL(id >= 0);
    return &g->nodes[id];
}

/* Output k of `name` in g has dtype `dtype` and shape `shape` as printed. */
static void check_out(const tgc_graph *g, const char *name, int k, tgc_dtype dtype, const char *shape) {
    const tgc_node *n = node(g, name);
    CU_ASSERT_FATAL(k < n->n_outputs);
    char buf[256];
    tgc_shape_str(g, &n->outputs[k].shape, buf, sizeof buf);
    if (n->outputs[k].dtype != dtype || strcmp(buf, shape) != 0)
        fprintf(stderr, "\n%s:%d is %s %s, want %s %s\n", name, k, tgc_dtype_name(n->outputs[k].dtype), buf,
                tgc_dtype_name(dtype), shape);
    CU_ASSERT_EQUAL(n->outputs[k].dtype, dtype);
    CU_ASSERT_STRING_EQUAL(buf, shape);
}

/* True when dim d of output k of `name` is a symbol made by inference. */
static bool fresh_dim(const tgc_graph *g, const char *name, int k, int d) {
    tgc_dim dim = node(g, name)->outputs[k].shape.dims[d];
    return !tgc_dim_known(dim) && tgc_graph_root(g)->symbol_fresh[dim.sym]; /* a subgraph's are its root's */
}

/* The capture of `body` named `name`: the outer value it stands for. */
static tgc_ref capture_value(const tgc_node *owner, const tgc_graph *body, const char *name) {
    int32_t id = tgc_graph_find(body, name);
    CU_ASSERT_FATAL(id >= body->n_inputs_nodes);
    int32_t j = tgc_graph_feed_index(body, id) - body->n_inputs_nodes;
    CU_ASSERT_FATAL(j >= 0 && j < body->n_captures);
    return owner->inputs[body->capture_input[j]];
}

/* control_flow.yaml's captures: x in count's body; halves:1 and four in
 * pick's then_branch (four for the Loop inside it), halves:1 shared with
 * else_branch; the inner Loop's body reads halves:1 through the branch's
 * capture. */
static void test_captures_are_implicit_inputs(void) {
    tgc_graph *g = load_file("tests/data/good/control_flow.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const tgc_node *count = node(g, "count");
    const tgc_graph *body = tgc_node_subgraph(count, "body");
    CU_ASSERT_EQUAL(count->n_inputs, 4);
    CU_ASSERT_EQUAL(count->n_implicit, 1);
    CU_ASSERT_EQUAL(tgc_node_explicit_inputs(count), 3);
    CU_ASSERT_EQUAL(body->n_inputs_nodes, 3);
    CU_ASSERT_EQUAL(body->n_captures, 1);
    CU_ASSERT_EQUAL(capture_value(count, body, "x").node, tgc_graph_find(g, "x"));
    CU_ASSERT_PTR_EQUAL(body->parent, g);
    CU_ASSERT_EQUAL(body->depth, 1);

    const tgc_node *pick = node(g, "pick");
    const tgc_graph *then = tgc_node_subgraph(pick, "then_branch"), *els = tgc_node_subgraph(pick, "else_branch");
    CU_ASSERT_EQUAL(pick->n_implicit, 2);
    CU_ASSERT_EQUAL(then->n_captures, 2);
    CU_ASSERT_EQUAL(els->n_captures, 1);
    tgc_ref h = capture_value(pick, then, "halves:1");
    CU_ASSERT_EQUAL(h.node, tgc_graph_find(g, "halves"));
    CU_ASSERT_EQUAL(h.port, 1);
    tgc_ref h2 = capture_value(pick, els, "halves:1");
    CU_ASSERT(h2.node == h.node && h2.port == 1);
    CU_ASSERT_EQUAL(capture_value(pick, then, "four").node, tgc_graph_find(g, "four"));
    const tgc_node *inner = node(then, "inner");
    const tgc_graph *inner_body = tgc_node_subgraph(inner, "body");
    CU_ASSERT_EQUAL(inner_body->depth, 2);
    tgc_ref through = capture_value(inner, inner_body, "halves:1");
    CU_ASSERT_EQUAL(through.node, tgc_graph_find(then, "halves:1")); /* the branch's capture */
    CU_ASSERT_EQUAL(through.port, 0);
    tgc_graph_free(g);
}

/* count: M = 4 and no cond, so its scan output stacks 4 rows of x ([4] each);
 * its carried value starts as [0] and grows by one each iteration, so it
 * leaves as a fresh symbol. while: int64 scalar throughout. scan: a [4] sum
 * carried over N rows, its scan output stacked on axis 1: [4, N]. pick: both
 * branches give [N, 2]. */
static void test_inference_into_subgraphs(void) {
    tgc_graph *g = load_file("tests/data/good/control_flow.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT(fresh_dim(g, "count", 0, 0));
    check_out(g, "count", 1, TGC_FLOAT32, "[4, 4]");
    const tgc_graph *body = tgc_node_subgraph(node(g, "count"), "body");
    tgc_dim acc = body->nodes[tgc_graph_find(body, "acc")].outputs[0].shape.dims[0];
    CU_ASSERT(tgc_dim_eq(acc, node(g, "count")->outputs[0].shape.dims[0]));
    check_out(body, "row", 0, TGC_FLOAT32, "[4]");
    check_out(g, "while", 0, TGC_INT64, "[]");
    check_out(g, "scan", 0, TGC_FLOAT32, "[4]");
    check_out(g, "scan", 1, TGC_FLOAT32, "[4, N]");
    check_out(g, "pick", 0, TGC_FLOAT32, "[N, 2]");
    tgc_graph_free(g);
}

/* If merges its branches: [2, 3] and [2, 5] give [2, fresh]; a Loop with a
 * cond input runs an unknown number of times, so its scan output's first
 * dim is fresh; a Scan over axis 1 of [3, 7] runs 7 steps. */
static void test_merges_and_trip_counts(void) {
    tgc_graph *g = load_text("format: tgc/1\n"
                             "inputs:\n"
                             "  - {name: c, dtype: bool, shape: []}\n"
                             "  - {name: a, dtype: float32, shape: [2, 3]}\n"
                             "  - {name: b, dtype: float32, shape: [2, 5]}\n"
                             "  - {name: m, dtype: int64, shape: []}\n"
                             "  - {name: xs, dtype: float32, shape: [3, 7]}\n"
                             "outputs: [pick, loop, scan]\n"
                             "nodes:\n"
                             "  - name: pick\n"
                             "    op: If\n"
                             "    inputs: [c]\n"
                             "    attrs:\n"
                             "      then_branch: {outputs: [a]}\n"
                             "      else_branch: {outputs: [b]}\n"
                             "  - name: loop\n"
                             "    op: Loop\n"
                             "    inputs: [m, c]\n"
                             "    attrs:\n"
                             "      body:\n"
                             "        inputs: [{name: i}, {name: go}]\n"
                             "        outputs: [go, a]\n"
                             "  - name: scan\n"
                             "    op: Scan\n"
                             "    inputs: [xs]\n"
                             "    attrs:\n"
                             "      num_scan_inputs: 1\n"
                             "      scan_input_axes: [-1]\n"
                             "      body:\n"
                             "        inputs: [{name: col}]\n"
                             "        outputs: [twice]\n"
                             "        nodes:\n"
                             "          - {name: twice, op: Add, inputs: [col, col]}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const tgc_shape *p = &node(g, "pick")->outputs[0].shape;
    CU_ASSERT_EQUAL(p->rank, 2);
    CU_ASSERT(tgc_dim_is(p->dims[0], 2));
    CU_ASSERT(fresh_dim(g, "pick", 0, 1));
    CU_ASSERT(fresh_dim(g, "loop", 0, 0));
    CU_ASSERT(tgc_dim_is(node(g, "loop")->outputs[0].shape.dims[1], 2));
    check_out(g, "scan", 0, TGC_FLOAT32, "[7, 3]");
    tgc_graph_free(g);
}

/* Carried shapes through two levels: the inner Loop grows its carried
 * value by one element an iteration (Concat), so inside the outer body it
 * gives a fresh-symbol length; the outer Loop carries that, so its own
 * carried value is a symbol too. A Scan state whose shape an If in the body
 * keeps ([2]) stays [2]. An If inside a Loop body whose branches give [1]
 * and [2] makes the carried value, which starts [1], a symbol. */
static void test_carried_shapes_nest(void) {
    tgc_graph *g = load_text("format: tgc/1\n"
                             "inputs:\n"
                             "  - {name: c, dtype: bool, shape: []}\n"
                             "outputs: [outer, widen]\n"
                             "initializers:\n"
                             "  - {name: two, dtype: int64, shape: [], values: [2]}\n"
                             "  - {name: empty, dtype: float32, shape: [0], values: []}\n"
                             "  - {name: one, dtype: float32, shape: [1], values: [1]}\n"
                             "nodes:\n"
                             "  - name: outer\n"
                             "    op: Loop\n"
                             "    inputs: [two, '', empty]\n"
                             "    attrs:\n"
                             "      body:\n"
                             "        inputs: [{name: i}, {name: k}, {name: acc}]\n"
                             "        outputs: [k, inner]\n"
                             "        nodes:\n"
                             "          - name: inner\n"
                             "            op: Loop\n"
                             "            inputs: [two, '', acc]\n"
                             "            attrs:\n"
                             "              body:\n"
                             "                inputs: [{name: j}, {name: k2}, {name: a}]\n"
                             "                outputs: [k2, grown]\n"
                             "                nodes:\n"
                             "                  - {name: grown, op: Concat, inputs: [a, one], attrs: {axis: 0}}\n"
                             "  - name: widen\n"
                             "    op: Loop\n"
                             "    inputs: [two, '', one]\n"
                             "    attrs:\n"
                             "      body:\n"
                             "        inputs: [{name: i}, {name: k}, {name: v}]\n"
                             "        outputs: [k, pick]\n"
                             "        nodes:\n"
                             "          - {name: both, op: Concat, inputs: [v, v], attrs: {axis: 0}}\n"
                             "          - name: pick\n"
                             "            op: If\n"
                             "            inputs: [c]\n"
                             "            attrs:\n"
                             "              then_branch: {outputs: [one]}\n"
                             "              else_branch: {outputs: [both]}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT(fresh_dim(g, "outer", 0, 0));
    const tgc_graph *body = tgc_node_subgraph(node(g, "outer"), "body");
    CU_ASSERT(fresh_dim(body, "inner", 0, 0));
    CU_ASSERT(fresh_dim(g, "widen", 0, 0));
    tgc_graph_free(g);
}

/* A copy is deep: its subgraphs are its own (their parent the copy), and
 * it dumps as the original does. */
static char *dump(const tgc_graph *g) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_graph_dump_yaml(g, f, NULL, d), TGC_OK);
    tgc_diags_free(d);
    fclose(f);
    return text;
}

static void test_clone_is_deep(void) {
    tgc_graph *g = load_file("tests/data/good/control_flow.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    char *before = dump(g);
    tgc_graph *opt = NULL;
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_graph_optimize(g, TGC_OPTIMIZE_NONE, NULL, NULL, d, &opt), TGC_OK);
    tgc_diags_free(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(opt);
    const tgc_graph *b = tgc_node_subgraph(node(opt, "count"), "body");
    CU_ASSERT_PTR_NOT_EQUAL(b, tgc_node_subgraph(node(g, "count"), "body"));
    CU_ASSERT_PTR_EQUAL(b->parent, opt);
    CU_ASSERT_EQUAL(tgc_graph_adopt_source(opt, g), TGC_OK); /* the weights stay g's */
    char *after = dump(opt);
    CU_ASSERT_STRING_EQUAL(before, after);
    free(before);
    free(after);
    tgc_graph_free(opt);
}

/* A name used in a subgraph is first its own: a body node named like an
 * outer one shadows it, and "x:1" never reads port 1 of a capture named x. */
static void test_scopes(void) {
    tgc_graph *g = load_text("format: tgc/1\n"
                             "inputs:\n"
                             "  - {name: c, dtype: bool, shape: []}\n"
                             "  - {name: x, dtype: float32, shape: [4]}\n"
                             "initializers:\n"
                             "  - {name: parts, dtype: int64, shape: [2], values: [1, 3]}\n"
                             "outputs: [pick, pick:1]\n"
                             "nodes:\n"
                             "  - {name: s, op: Split, inputs: [x, parts]}\n"
                             "  - name: pick\n"
                             "    op: If\n"
                             "    inputs: [c]\n"
                             "    attrs:\n"
                             "      then_branch:\n"
                             "        outputs: [s, 's:1']\n"
                             "      else_branch:\n"
                             "        outputs: [x, x]\n"
                             "        nodes:\n"
                             "          - {name: x, op: Neg, inputs: ['s:1']}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const tgc_node *pick = node(g, "pick");
    const tgc_graph *t = tgc_node_subgraph(pick, "then_branch"), *e = tgc_node_subgraph(pick, "else_branch");
    CU_ASSERT_EQUAL(t->n_captures, 2);
    CU_ASSERT_EQUAL(capture_value(pick, t, "s").port, 0);
    CU_ASSERT_EQUAL(capture_value(pick, t, "s:1").port, 1);
    CU_ASSERT_EQUAL(e->n_captures, 1); /* s:1 only: x is the branch's own */
    check_out(e, "x", 0, TGC_FLOAT32, "[3]");
    /* then gives s [1] and s:1 [3]; else its own x [3] twice: output 0
     * merges [1] with [3], output 1 [3] with [3]. */
    CU_ASSERT(fresh_dim(g, "pick", 0, 0));
    check_out(g, "pick", 1, TGC_FLOAT32, "[3]");
    tgc_graph_free(g);
}

/* Out of memory at every allocation of loading a graph with subgraphs
 * (loader, captures, validation, inference, dump): a clean status, never a
 * crash or a leak. */
static void test_load_survives_every_allocation_failure(void) {
    const char *path = tgc_test_path("tests/data/good/control_flow.yaml");
    int64_t before = tgc_host_alloc_stats_get().num_allocs;
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load(path, d, &g), TGC_OK);
    tgc_graph_free(g);
    tgc_diags_free(d);
    int64_t total = tgc_host_alloc_stats_get().num_allocs - before;
    CU_ASSERT(total > 100);
    for (int64_t n = 1; n <= total; n++) {
        tgc_host_alloc_fail_nth(n + 1);
        d = tgc_diags_create();
        g = NULL;
        tgc_status s = tgc_graph_load(path, d, &g);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(s == TGC_ERR_NOMEM || s == TGC_ERR_INVALID || s == TGC_OK);
        if (s != TGC_OK) CU_ASSERT_PTR_NULL(g);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

TGC_TEST_MAIN("subgraphs", {"captures are implicit inputs", test_captures_are_implicit_inputs},
              {"inference into subgraphs", test_inference_into_subgraphs},
              {"merges and trip counts", test_merges_and_trip_counts}, {"a copy is deep", test_clone_is_deep},
              {"carried shapes nest", test_carried_shapes_nest},
              {"scopes", test_scopes},
              {"load survives every allocation failure", test_load_survives_every_allocation_failure})
