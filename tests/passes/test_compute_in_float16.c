/* compute-in-float16 (passes/compute_in.c), the session's float16 option:
 * float32 nodes a listed gpu has float16 kernels for compute in float16,
 * the rest stay float32 between Casts, the graph's inputs and outputs keep
 * float32, weights become float16 initializers. Checked on the rewritten
 * graph; the values of such runs against numpy are
 * tests/cli/test_dtype_models.sh's (fp32_nn with --float16). No device is
 * opened: the pass reads the kernel registry only. */
#include "graph/graph.h"
#include "tests/passes/graph_queries.h"
#include "tests/harness.h"
#include "tgc.h"

#include <string.h>

/* Conv (the gpu has float16 kernels) -> Softmax (float32 only on the gpu)
 * -> MatMul (float16 again) -> output. */
static const char yaml[] = "format: tgc/1\n"
                           "inputs: [{name: x, dtype: float32, shape: [1, 2, 2, 2]}]\n"
                           "outputs: [m]\n"
                           "initializers:\n"
                           "  - {name: W, dtype: float32, shape: [2, 2, 1, 1], values: [1, 0.5, 0.25, 2]}\n"
                           "  - {name: B, dtype: float32, shape: [2, 3], values: [1, 2, 3, 4, 5, 6]}\n"
                           "nodes:\n"
                           "  - {name: c, op: Conv, inputs: [x, W]}\n"
                           "  - {name: s, op: Softmax, inputs: [c], attrs: {axis: 1}}\n"
                           "  - {name: m, op: MatMul, inputs: [s, B]}\n";

static tgc_graph *optimized(const tgc_graph *g, const char *devices, int float16, tgc_optimize_report *rep,
                            tgc_diags *d) {
    tgc_graph *opt = NULL;
    tgc_optimize_options o = {.level = TGC_OPTIMIZE_BASIC, .devices = devices, .float16 = float16};
    tgc_status st = tgc_graph_optimize_with(g, &o, rep, d, &opt);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    return opt;
}

/* The first op node of g whose op is `op`. */
static const tgc_node *first_op(const tgc_graph *g, const char *op) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == TGC_NODE_OP && strcmp(g->nodes[i].op_name, op) == 0) return &g->nodes[i];
    return NULL;
}

static tgc_dtype input_dtype(const tgc_graph *g, const tgc_node *n, int i) {
    return tgc_graph_ref_info(g, n->inputs[i])->dtype;
}

static void test_gpu_nodes_in_float16(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f32.yaml", d);
    tgc_optimize_report rep;
    tgc_graph *opt = optimized(g, "cpu,gpu0", 1, &rep, d);
    CU_ASSERT_STRING_EQUAL(rep.passes[0].name, "compute-in-float16");
    CU_ASSERT_EQUAL(rep.passes[0].rewrites, 2); /* Conv and MatMul */
    const tgc_node *conv = first_op(opt, "Conv"), *soft = first_op(opt, "Softmax"), *mm = first_op(opt, "MatMul");
    CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(soft);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
    CU_ASSERT_EQUAL(conv->outputs[0].dtype, TGC_FLOAT16);
    CU_ASSERT_EQUAL(input_dtype(opt, conv, 0), TGC_FLOAT16);
    CU_ASSERT_EQUAL(input_dtype(opt, conv, 1), TGC_FLOAT16);
    CU_ASSERT_EQUAL(opt->nodes[conv->inputs[1].node].kind, TGC_NODE_CONST); /* the weight's Cast folded */
    CU_ASSERT_EQUAL(soft->outputs[0].dtype, TGC_FLOAT32);
    CU_ASSERT_EQUAL(mm->outputs[0].dtype, TGC_FLOAT16);
    CU_ASSERT_EQUAL(opt->nodes[mm->inputs[1].node].kind, TGC_NODE_CONST);
    CU_ASSERT_EQUAL(input_dtype(opt, mm, 1), TGC_FLOAT16);
    /* x in; Conv's out and Softmax's in; Softmax's out; m out, named as the graph's output */
    CU_ASSERT_EQUAL(count_op(opt, "Cast"), 4);
    const tgc_node *m = node_named(opt, "m");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_STRING_EQUAL(m->op_name, "Cast");
    CU_ASSERT_EQUAL(m->outputs[0].dtype, TGC_FLOAT32);
    CU_ASSERT_EQUAL(node_named(opt, "x")->outputs[0].dtype, TGC_FLOAT32);
    tgc_graph_free(opt);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Without a gpu in the list, or without the option, nothing changes. */
static void test_left_alone(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = loaded_graph(yaml, "f32.yaml", d);
    const char *lists[2] = {"cpu", "cpu,gpu0"};
    for (int k = 0; k < 2; k++) {
        tgc_optimize_report rep;
        tgc_graph *opt = optimized(g, lists[k], k == 0, &rep, d);
        CU_ASSERT_EQUAL(count_op(opt, "Cast"), 0);
        CU_ASSERT_EQUAL(first_op(opt, "Conv")->outputs[0].dtype, TGC_FLOAT32);
        CU_ASSERT_EQUAL(first_op(opt, "MatMul")->outputs[0].dtype, TGC_FLOAT32);
        /* with the option the pass runs and rewrites nothing; without it, it does not run */
        CU_ASSERT_STRING_EQUAL(rep.passes[0].name, k == 0 ? "compute-in-float16" : "compute-in-float32");
        CU_ASSERT_EQUAL(rep.passes[0].rewrites, 0);
        tgc_graph_free(opt);
    }
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("compute in float16", {"gpu nodes in float16", test_gpu_nodes_in_float16},
              {"left alone without a gpu or the option", test_left_alone})
