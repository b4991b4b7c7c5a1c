/* Placement time for generated graphs of 10^4, 10^5 and 10^6 op nodes,
 * built directly as IR (no YAML): a chain of Relu and Add nodes with
 * fan-outs (each Add reads the node before and one up to 64 back), a
 * device spec on 1 node in 100, a colocation with the previous node on 1
 * in 50, and every 500 nodes a Shape -> Gather shape computation, so
 * every rule of the placer runs. Placed on cpu,gpu0, by the rules and
 * again with automatic placement (placer/auto.c, costs from the cost
 * model's cache or its estimates: nothing measured here). Each figure is
 * the median of several runs of tgc_placer_run (graph building,
 * validation and shape inference are not timed). Targets: 10^6 nodes
 * under 1 s by the rules; 10^4 under 1 s by auto.
 *
 * Usage: bench_placer [repetitions]   (default 5) */
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/passes.h"
#include "placer/cost.h"
#include "placer/placer.h"
#include "support/alloc.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
    fprintf(stderr, "bench_placer: %s\n", what);
    exit(1);
}

/* Appends op node `name` (op, inputs) and returns its id. */
static int32_t add_op(tgc_graph *g, const char *name, const char *op, const int32_t *inputs, int n_inputs) {
    int32_t id;
    if (tgc_graph_add_node(g, name, TGC_NODE_OP, &id) != TGC_OK) die("out of memory");
    tgc_node *n = &g->nodes[id];
    n->op = tgc_op_find(op);
    n->op_name = tgc_strdup(op);
    n->inputs = tgc_calloc((size_t)n_inputs, sizeof *n->inputs);
    if (n->op == NULL || n->op_name == NULL || n->inputs == NULL) die("out of memory");
    for (int i = 0; i < n_inputs; i++) n->inputs[i] = (tgc_ref){inputs[i], 0, {0, 0}};
    n->n_inputs = n_inputs;
    return id;
}

/* A graph of about `n_ops` op nodes, validated and inferred. */
static tgc_graph *build(int32_t n_ops) {
    tgc_graph *g = tgc_graph_create("bench_placer", ".");
    if (g == NULL) die("out of memory");
    int32_t x, idx;
    if (tgc_graph_add_node(g, "x", TGC_NODE_INPUT, &x) != TGC_OK) die("out of memory");
    g->n_inputs_nodes = 1;
    tgc_node *xn = &g->nodes[x];
    xn->outputs = tgc_calloc(1, sizeof *xn->outputs);
    if (xn->outputs == NULL) die("out of memory");
    xn->n_outputs = 1;
    xn->outputs[0].dtype = TGC_FLOAT32;
    xn->outputs[0].value_len = -1;
    xn->outputs[0].shape.rank = 2;
    xn->outputs[0].shape.dims[0] = tgc_dim_sym(tgc_graph_symbol(g, "N", false));
    xn->outputs[0].shape.dims[1] = tgc_dim_of(64);
    /* The Gather index: an int64 scalar initializer. */
    if (tgc_graph_add_node(g, "idx", TGC_NODE_CONST, &idx) != TGC_OK) die("out of memory");
    tgc_node *in = &g->nodes[idx];
    in->data = tgc_calloc(1, sizeof *in->data);
    if (in->data == NULL) die("out of memory");
    in->data->dtype = TGC_INT64;
    in->data->shape.rank = 0;
    in->data->nbytes = 8;
    in->data->data = tgc_calloc(1, 8);
    if (in->data->data == NULL) die("out of memory");
    /* Its outputs[] come from validation, its dtype and shape from inference. */

    char name[32];
    int32_t prev = x;
    unsigned seed = 12345;
    for (int32_t k = 0; k < n_ops; k++) {
        seed = seed * 1664525u + 1013904223u;
        snprintf(name, sizeof name, "n%d", k);
        int32_t id;
        if (k % 500 == 499) {
            /* Shape of the chain, then integer arithmetic over it. */
            int32_t s = add_op(g, name, "Shape", &prev, 1);
            snprintf(name, sizeof name, "n%d.g", k);
            int32_t in2[2] = {s, idx};
            add_op(g, name, "Gather", in2, 2);
            continue;
        }
        if (k % 3 == 2 && k > 64) {
            int32_t back = g->n_nodes - 1 - (int32_t)(seed >> 8) % 64;
            /* A float [N, 64] node: a Relu or an Add, not the shape computation. */
            while (back > 2 && (g->nodes[back].op_name[0] == 'S' || g->nodes[back].op_name[0] == 'G')) back--;
            int32_t in2[2] = {prev, back};
            id = add_op(g, name, "Add", in2, 2);
        } else {
            id = add_op(g, name, "Relu", &prev, 1);
        }
        tgc_node *n = &g->nodes[id];
        if (k % 100 == 7) {
            n->device = tgc_strdup(k % 200 == 7 ? "cpu0" : "gpu");
            if (n->device == NULL) die("out of memory");
        }
        if (k % 50 == 11 && prev != x) {
            n->colocate = tgc_calloc(1, sizeof *n->colocate);
            if (n->colocate == NULL) die("out of memory");
            n->colocate[0] = (tgc_ref){prev, 0, {0, 0}};
            n->n_colocate = 1;
        }
        prev = id;
    }
    g->outputs = tgc_calloc(1, sizeof *g->outputs);
    if (g->outputs == NULL) die("out of memory");
    g->outputs[0] = (tgc_ref){prev, 0, {0, 0}};
    g->n_outputs = 1;
    tgc_diags *d = tgc_diags_create();
    if (tgc_graph_validate(g, d) != TGC_OK || tgc_graph_infer(g, d) != TGC_OK) {
        tgc_diags_print(d, stderr);
        die("the generated graph is invalid");
    }
    tgc_diags_free(d);
    return g;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1 || reps > 100) reps = 5;
    tgc_placer_device devs[] = {{TGC_DEVICE_CPU, 0, 0}, {TGC_DEVICE_GPU, 0, 0}};
    tgc_cost_model *cost = NULL;
    if (tgc_cost_model_create(devs, 2, NULL, NULL, &cost) != TGC_OK) die("no cost model");
    tgc_placer_auto automatic = {.cost = cost, .width = {1, 1}, .inflight = 1};
    tgc_placer_options auto_opts = {.automatic = &automatic};
    printf("%10s %10s %12s %10s %10s %12s\n", "op nodes", "nodes", "median ms", "ns/node", "on gpu0", "auto ms");
    for (int32_t n_ops = 10000; n_ops <= 1000000; n_ops *= 10) {
        tgc_graph *g = build(n_ops);
        double *t = malloc((size_t)reps * sizeof *t);
        if (t == NULL) die("out of memory");
        int64_t on_gpu = 0;
        for (int r = 0; r < reps; r++) {
            tgc_diags *d = tgc_diags_create();
            tgc_placement p;
            double t0 = bench_now_s();
            tgc_status s = tgc_placer_run(g, devs, 2, NULL, d, &p);
            t[r] = bench_now_s() - t0;
            if (s != TGC_OK) {
                tgc_diags_print(d, stderr);
                die("placement failed");
            }
            on_gpu = 0;
            for (int32_t id = 0; id < g->n_nodes; id++) on_gpu += p.device[id] == 1;
            tgc_placement_release(&p);
            tgc_diags_free(d);
        }
        double med = bench_median(t, reps);
        for (int r = 0; r < reps; r++) {
            tgc_diags *d = tgc_diags_create();
            tgc_placement p;
            double t0 = bench_now_s();
            tgc_status s = tgc_placer_run(g, devs, 2, &auto_opts, d, &p);
            t[r] = bench_now_s() - t0;
            if (s != TGC_OK) {
                tgc_diags_print(d, stderr);
                die("automatic placement failed");
            }
            tgc_placement_release(&p);
            tgc_diags_free(d);
        }
        printf("%10d %10d %12.2f %10.1f %10lld %12.2f\n", n_ops, g->n_nodes, med * 1e3, med * 1e9 / g->n_nodes,
               (long long)on_gpu, bench_median(t, reps) * 1e3);
        free(t);
        tgc_graph_free(g);
    }
    tgc_cost_model_free(cost);
    return 0;
}
