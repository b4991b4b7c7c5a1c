/* Partitioning time and rendezvous round trip.
 *
 * 1. tgc_partition_build on generated graphs of 10^4, 10^5 and 10^6 nodes
 *    over cpu0, cpu1 and gpu0: a chain of Add nodes, each reading its
 *    predecessor and one node up to 64 back, built directly in the IR with
 *    a placement array made by hand, in three spreads: thirds (a pipeline:
 *    cpu0, cpu1, gpu0 each take a third of the chain; a few pairs), runs of
 *    1000 nodes per device in turn (about 3% of the edges cross), and every
 *    node on the next device (every edge crosses: the worst case, most
 *    pairs). Median of a few builds, with the validator's time beside it,
 *    and for scale the time the IR itself takes to build the source graph
 *    (tgc_graph_add_node and the same allocations a node), the floor for
 *    a pass that makes a standalone copy of every node. Wall time, and the
 *    thread's CPU time (what the pass costs when other processes share the
 *    cores). Target: 10^6 nodes in under 1 s.
 * 2. The rendezvous round trip on the host: send then recv_async of one
 *    key (value there first), and recv_async then send (receiver first),
 *    median ns per round trip over batches of 1000 keys.
 *
 * Usage: bench_partition [max_nodes]   (default 1000000) */
#include "graph/op_registry.h"
#include "partition/partition.h"
#include "partition/rendezvous.h"
#include "support/alloc.h"

#include "bench_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* This thread's CPU time: what the pass costs when other processes share the cores. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "bench_partition: %s\n", what);
    exit(1);
}

/* x (float32 [N, 64]) then n - 1 Add nodes: node i reads i-1 and i-1-k
 * (k < 64, pseudo-random). Ids are a topological order. */
static tgc_graph *chain(int32_t n) {
    tgc_graph *g = tgc_graph_create("bench.yaml", ".");
    if (g == NULL) die("out of memory");
    const tgc_op_def *add = tgc_op_find("Add");
    int32_t sym = tgc_graph_symbol(g, "N", false);
    tgc_tensor_info info = {.dtype = TGC_FLOAT32, .shape = {.rank = 2, .dims = {tgc_dim_sym(sym), tgc_dim_of(64)}},
                            .value_len = -1};
    unsigned seed = 12345;
    char name[32];
    for (int32_t i = 0; i < n; i++) {
        int32_t id;
        snprintf(name, sizeof name, i == 0 ? "x" : "n%" PRId32, i);
        if (tgc_graph_add_node(g, name, i == 0 ? TGC_NODE_INPUT : TGC_NODE_OP, &id) != TGC_OK) die("out of memory");
        tgc_node *nd = &g->nodes[id];
        nd->outputs = tgc_malloc(sizeof *nd->outputs);
        if (nd->outputs == NULL) die("out of memory");
        nd->outputs[0] = info;
        nd->n_outputs = 1;
        if (i == 0) continue;
        seed = seed * 1664525u + 1013904223u;
        int32_t back = (int32_t)((seed >> 16) % 64u);
        int32_t other = i - 1 - back < 0 ? 0 : i - 1 - back;
        nd->op = add;
        nd->op_name = tgc_strdup("Add");
        nd->inputs = tgc_malloc(2 * sizeof *nd->inputs);
        if (nd->op_name == NULL || nd->inputs == NULL) die("out of memory");
        nd->inputs[0] = (tgc_ref){i - 1, 0, {0, 0}};
        nd->inputs[1] = (tgc_ref){other, 0, {0, 0}};
        nd->n_inputs = 2;
    }
    g->n_inputs_nodes = 1;
    g->outputs = tgc_malloc(sizeof *g->outputs);
    g->topo = tgc_malloc((size_t)n * sizeof *g->topo);
    if (g->outputs == NULL || g->topo == NULL) die("out of memory");
    g->outputs[0] = (tgc_ref){n - 1, 0, {0, 0}};
    g->n_outputs = 1;
    for (int32_t i = 0; i < n; i++) g->topo[i] = i;
    return g;
}

/* run 0: thirds. */
static void bench_build(int32_t n, int run, const char *spread) {
    static const tgc_placer_device devs[] = {{TGC_DEVICE_CPU, 0, 0}, {TGC_DEVICE_CPU, 1, 0}, {TGC_DEVICE_GPU, 0, 0}};
    tgc_graph *g = chain(n);
    int32_t *device = tgc_malloc((size_t)n * sizeof *device);
    if (device == NULL) die("out of memory");
    for (int32_t i = 0; i < n; i++) device[i] = run > 0 ? (i / run) % 3 : (int32_t)((int64_t)i * 3 / n);
    tgc_placement p = {.n_nodes = n, .device = device};
    int reps = n >= 1000000 ? 3 : n >= 100000 ? 5 : 11;
    double build[11], build_cpu[11], check[11], release[11];
    int32_t pairs = 0, nodes = 0;
    for (int r = 0; r < reps; r++) {
        tgc_diags *d = tgc_diags_create();
        tgc_partitioning parts;
        double c0 = cpu_s(), t0 = bench_now_s();
        if (tgc_partition_build(g, &p, devs, 3, d, &parts) != TGC_OK) die("partitioning failed");
        double t1 = bench_now_s();
        build_cpu[r] = cpu_s() - c0;
        if (tgc_partition_validate(g, &parts, d) != TGC_OK) die("validation failed");
        double t2 = bench_now_s();
        pairs = parts.n_pairs;
        nodes = 0;
        for (int i = 0; i < parts.n_parts; i++) nodes += parts.parts[i].graph->n_nodes;
        tgc_partitioning_release(&parts);
        double t3 = bench_now_s();
        build[r] = t1 - t0;
        check[r] = t2 - t1;
        release[r] = t3 - t2;
        tgc_diags_free(d);
    }
    double b = bench_median(build, reps);
    printf("%9" PRId32 " nodes  %-13s %8" PRId32 " pairs %9" PRId32 " nodes out   build %7.1f ms (%5.0f ns/node,"
           " cpu %7.1f ms)   validate %7.1f ms   release %7.1f ms\n",
           n, spread, pairs, nodes, b * 1e3, b * 1e9 / n, bench_median(build_cpu, reps) * 1e3, bench_median(check, reps) * 1e3,
           bench_median(release, reps) * 1e3);
    tgc_free(device);
    tgc_graph_free(g);
}

/* ---- rendezvous ------------------------------------------------------------ */

static void release_value(void *ctx, tgc_status status, tgc_value *v) {
    (void)ctx;
    if (status == TGC_OK) tgc_buffer_release(v->buf);
}

#define BATCH 1000
#define BATCHES 101

static void bench_rendezvous(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0);
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = 1, .dims = {16}};
    if (cpu0 == NULL || tgc_buffer_alloc(cpu0, 64, &v.buf) != TGC_OK) die("out of memory");
    static char keys[BATCH][48];
    for (int i = 0; i < BATCH; i++) snprintf(keys[i], sizeof keys[i], "cpu0;cpu1;layer%d/conv:0", i);
    for (int order = 0; order < 2; order++) {
        double per[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            tgc_rendezvous *r;
            if (tgc_rendezvous_create(&r) != TGC_OK) die("out of memory");
            double t0 = bench_now_s();
            for (int i = 0; i < BATCH; i++) {
                if (order == 0) {
                    tgc_rendezvous_send(r, keys[i], &v);
                    tgc_rendezvous_recv_async(r, keys[i], NULL, release_value, NULL);
                } else {
                    tgc_rendezvous_recv_async(r, keys[i], NULL, release_value, NULL);
                    tgc_rendezvous_send(r, keys[i], &v);
                }
            }
            per[b] = (bench_now_s() - t0) * 1e9 / BATCH;
            tgc_rendezvous_free(r);
        }
        printf("rendezvous round trip on the host, %s: median %.0f ns (batches of %d keys, %d batches)\n",
               order == 0 ? "send then recv_async" : "recv_async then send", bench_median(per, BATCHES), BATCH, BATCHES);
    }
    tgc_buffer_release(v.buf);
    tgc_device_destroy(cpu0);
}

int main(int argc, char **argv) {
    int64_t max_nodes = argc > 1 ? atoll(argv[1]) : 1000000;
    if (max_nodes < 10000) max_nodes = 10000;
    printf("tgc_partition_build over cpu0, cpu1, gpu0 (Add chains, 2 inputs a node; median)\n");
    for (int64_t n = 10000; n <= max_nodes; n *= 10) {
        double c0 = cpu_s(), t0 = bench_now_s();
        tgc_graph *g = chain((int32_t)n);
        double t1 = bench_now_s(), c1 = cpu_s();
        tgc_graph_free(g);
        printf("%9" PRId64 " nodes  (the source graph itself: built in %.1f ms, %.0f ns/node, cpu %.1f ms)\n", n,
               (t1 - t0) * 1e3, (t1 - t0) * 1e9 / (double)n, (c1 - c0) * 1e3);
        bench_build((int32_t)n, 0, "thirds");
        bench_build((int32_t)n, 1000, "runs of 1000");
        bench_build((int32_t)n, 1, "alternating");
    }
    bench_rendezvous();
    return 0;
}
