/* Executor benchmarks, each beside its reference measured in the same run:
 *   1. per-node overhead: a chain of 10,000 Add nodes on 1-element tensors,
 *      against a plain loop calling the cpu's Add kernel 10,000 times on the
 *      same tensors (the executor's overhead is the difference), and the
 *      same arithmetic in a plain C loop;
 *   2. inter-op parallelism: 8 independent branches of 512x512 MatMuls with
 *      2 threads against 1 (the speed-up);
 *   3. the digits CNN's latency on cpu, gpu0 and cpu,gpu0;
 *   4. per-iteration overhead of a Loop: 10^5 iterations of a body that is
 *      one Add on a 1-element tensor, against the Add kernel alone called as
 *      often (the difference is what an iteration costs: its frame's reset,
 *      the iteration number and condition, starting the body's nodes and
 *      collecting its outputs).
 * Medians of repeated runs; these machines are noisy. */
#include "tgc.h"

#include "bench_util.h"

#include "devices/device.h"
#include "devices/kernel.h"
#include "graph/graph.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tgc_graph *load_text(const char *text, const char *dir) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, strlen(text), "bench.yaml", dir, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return g;
}

static tgc_session *open_session(const tgc_graph *g, const char *devices, const char *threads) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    /* the executor as it runs the graph as written: passes would fuse the chain */
    tgc_session_options o = {.threads = threads, .optimize = TGC_OPTIMIZE_NONE};
    if (tgc_session_create(g, devices, &o, d, &s) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return s;
}

/* Median seconds per run over `reps` runs (after one warm-up). */
static double time_runs(tgc_session *s, int n_feeds, const char **names, tgc_tensor **feeds, int reps) {
    int n_out = tgc_session_output_count(s);
    tgc_tensor *outs[8];
    double *t = calloc((size_t)reps, sizeof *t);
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now_s();
        if (tgc_session_run(s, n_feeds, names, feeds, outs, NULL) != TGC_OK) {
            fprintf(stderr, "run failed\n");
            exit(1);
        }
        if (r >= 0) t[r] = bench_now_s() - t0;
        for (int i = 0; i < n_out; i++) tgc_tensor_release(outs[i]);
    }
    double m = bench_median(t, reps);
    free(t);
    return m;
}

static double kernel_loop_node(const tgc_node *node, int n);

/* The reference for the executor's overhead: the cpu's Add kernel called n
 * times in a plain loop, as the chain runs it (1-element float32 tensors,
 * each call's output the next one's input, the graph's node a1 for its
 * attributes), with nothing between the calls. Median seconds of 15. */
static double kernel_loop(const tgc_graph *g, int n) {
    const tgc_node *node = NULL;
    for (int32_t id = 0; g != NULL && id < g->n_nodes && node == NULL; id++)
        if (strcmp(g->nodes[id].name, "a1") == 0) node = &g->nodes[id];
    return kernel_loop_node(node, n);
}

static double kernel_loop_node(const tgc_node *node, int n) {
    tgc_device *cpu = tgc_cpu_device_create(0);
    const tgc_kernel_def *k = tgc_kernel_find("Add", TGC_DEVICE_CPU, TGC_FLOAT32);
    tgc_value v[3] = {{.dtype = TGC_FLOAT32, .rank = 1, .dims = {1}}, {.dtype = TGC_FLOAT32, .rank = 1, .dims = {1}},
                      {.dtype = TGC_FLOAT32, .rank = 1, .dims = {1}}};
    for (int i = 0; i < 3; i++)
        if (cpu == NULL || k == NULL || node == NULL || tgc_buffer_alloc(cpu, sizeof(float), &v[i].buf) != TGC_OK) {
            fprintf(stderr, "kernel loop: no cpu device, Add kernel or node a1\n");
            exit(1);
        }
    *(float *)tgc_buffer_host_ptr(v[0].buf) = 1.0f;
    *(float *)tgc_buffer_host_ptr(v[2].buf) = 1.0e-4f;
    char err[256];
    double t[15];
    for (int r = 0; r < 15; r++) {
        double t0 = bench_now_s();
        for (int i = 0; i < n; i++) {
            tgc_value in[2] = {v[i & 1], v[2]}, out[1] = {v[!(i & 1)]};
            tgc_kernel_ctx c = {.node = node, .device = cpu, .inputs = in, .n_inputs = 2, .outputs = out,
                                .n_outputs = 1, .error = err, .error_size = sizeof err, .def = k};
            if (k->fn(&c) != TGC_OK) exit(1);
        }
        t[r] = bench_now_s() - t0;
    }
    for (int i = 0; i < 3; i++) tgc_buffer_release(v[i].buf);
    tgc_device_destroy(cpu);
    return bench_median(t, 15);
}

static void bench_chain(void) {
    enum { N = 10000 };
    size_t cap = (size_t)N * 80 + 4096;
    char *text = malloc(cap);
    size_t len = (size_t)snprintf(text, cap,
                                  "format: tgc/1\ninputs:\n  - {name: x, dtype: float32, shape: [1]}\noutputs: [a%d]\n"
                                  "initializers:\n  - {name: one, dtype: float32, shape: [1], values: [1.0e-4]}\nnodes:\n"
                                  "  - {name: a0, op: Add, inputs: [x, one]}\n",
                                  N - 1);
    for (int i = 1; i < N; i++) len += (size_t)snprintf(text + len, cap - len, "  - {name: a%d, op: Add, inputs: [a%d, one]}\n", i, i - 1);
    tgc_graph *g = load_text(text, ".");
    free(text);
    tgc_session *s = open_session(g, "cpu", "cpu=1");
    tgc_tensor *x;
    float one = 1;
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1}, &one, &x);
    const char *names[] = {"x"};
    double run = time_runs(s, 1, names, &x, 15);
    /* The same arithmetic as a plain loop. */
    double loop[15];
    volatile float sink = 0;
    for (int r = 0; r < 15; r++) {
        double t0 = bench_now_s();
        float v = sink + 1;
        for (int i = 0; i < N; i++) v += (float)1.0e-4;
        sink = v;
        loop[r] = bench_now_s() - t0;
    }
    double plain = bench_median(loop, 15), kernels = kernel_loop(g, N);
    printf("chain of %d Add nodes (1 element, cpu, 1 thread):\n", N);
    printf("  tgc run              %9.3f ms   %7.1f ns/node\n", run * 1e3, run / N * 1e9);
    printf("  the Add kernel alone %9.3f ms   %7.1f ns/call (a plain loop over the same kernel)\n", kernels * 1e3,
           kernels / N * 1e9);
    printf("  plain C loop         %9.3f ms   %7.1f ns/add\n", plain * 1e3, plain / N * 1e9);
    printf("  executor overhead    %9.1f ns/node (tgc run - the kernel alone; target: <= 100 ns/node)\n\n",
           (run - kernels) / N * 1e9);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
}

static void bench_wide(void) {
    char text[8192];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "format: tgc/1\ninputs:\n  - {name: x, dtype: float32, shape: [512, 512]}\noutputs: [");
    for (int b = 0; b < 8; b++) len += (size_t)snprintf(text + len, sizeof text - len, "%sm%d_2", b ? ", " : "", b);
    len += (size_t)snprintf(text + len, sizeof text - len, "]\nnodes:\n");
    for (int b = 0; b < 8; b++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "  - {name: m%d_0, op: MatMul, inputs: [x, x]}\n"
                                "  - {name: m%d_1, op: MatMul, inputs: [m%d_0, x]}\n"
                                "  - {name: m%d_2, op: MatMul, inputs: [m%d_1, x]}\n",
                                b, b, b, b, b);
    tgc_graph *g = load_text(text, ".");
    tgc_tensor *x;
    float *data = malloc(512 * 512 * sizeof *data);
    for (int i = 0; i < 512 * 512; i++) data[i] = (float)((i * 7919) % 13) * 1e-3f;
    tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){512, 512}, data, &x);
    free(data);
    const char *names[] = {"x"};
    tgc_session *one = open_session(g, "cpu", "cpu=1");
    tgc_session *two = open_session(g, "cpu", "cpu=2");
    double t1 = time_runs(one, 1, names, &x, 7), t2 = time_runs(two, 1, names, &x, 7);
    printf("8 independent branches of 3 MatMuls 512x512 (OpenBLAS set to 1 thread per call):\n");
    printf("  1 thread   %8.2f ms\n  2 threads  %8.2f ms\n  speed-up   %8.2fx   (target: >= 1.7x)\n\n", t1 * 1e3,
           t2 * 1e3, t1 / t2);
    tgc_tensor_release(x);
    tgc_session_free(one);
    tgc_session_free(two);
    tgc_graph_free(g);
}

static void bench_digits(const char *root) {
    char path[1024], dir[1024];
    snprintf(path, sizeof path, "%s/examples/digits/cnn.yaml", root);
    snprintf(dir, sizeof dir, "%s/examples/digits/test_x.npy", root);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_tensor *x = NULL;
    if (tgc_graph_load(path, d, &g) != TGC_OK || tgc_tensor_load_npy(dir, d, &x) != TGC_OK) {
        tgc_diags_print(d, stderr);
        exit(1);
    }
    tgc_diags_free(d);
    tgc_device_info info[4];
    bool gpu = tgc_devices_list(info, 4) > 1;
    const char *lists[] = {"cpu", "gpu0", "cpu,gpu0"};
    const char *names[] = {"x"};
    printf("digits CNN, batch 400 (median of 30 runs):\n");
    for (int i = 0; i < 3; i++) {
        if (i > 0 && !gpu) break;
        tgc_session *s = open_session(g, lists[i], NULL);
        if (s == NULL) continue;
        double t = time_runs(s, 1, names, &x, 30);
        printf("  %-9s %8.3f ms  (%.1f us/image)\n", lists[i], t * 1e3, t / 400 * 1e6);
        tgc_session_free(s);
    }
    tgc_tensor_release(x);
    tgc_graph_free(g);
}

/* A Loop of 10^5 iterations whose body adds 1e-4 to a 1-element carried
 * value, with 1 thread, against the Add kernel alone called as often. */
static void bench_loop(void) {
    enum { N = 100000 };
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n  - {name: m, dtype: int64, shape: []}\n"
                               "  - {name: x, dtype: float32, shape: [1]}\n"
                               "outputs: [loop]\n"
                               "initializers:\n  - {name: one, dtype: float32, shape: [1], values: [1.0e-4]}\n"
                               "nodes:\n"
                               "  - name: loop\n    op: Loop\n    inputs: [m, '', x]\n    attrs:\n      body:\n"
                               "        inputs: [{name: i}, {name: c}, {name: v}]\n        outputs: [c, a1]\n"
                               "        nodes:\n          - {name: a1, op: Add, inputs: [v, one]}\n";
    tgc_graph *g = load_text(text, ".");
    tgc_session *s = g ? open_session(g, "cpu", "cpu=1") : NULL;
    if (s == NULL) exit(1);
    tgc_tensor *feeds[2];
    float x = 1;
    int64_t m = N;
    tgc_tensor_create(TGC_INT64, 0, NULL, &m, &feeds[0]);
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1}, &x, &feeds[1]);
    const char *names[] = {"m", "x"};
    double run = time_runs(s, 2, names, feeds, 7);
    const tgc_graph *body = NULL;
    for (int a = 0; a < g->nodes[g->n_nodes - 1].n_attrs; a++)
        if (g->nodes[g->n_nodes - 1].attrs[a].graph != NULL) body = g->nodes[g->n_nodes - 1].attrs[a].graph;
    double kernels = kernel_loop(body, N);
    printf("Loop of %d iterations, body one Add (1 element, cpu, 1 thread):\n", N);
    printf("  tgc run              %9.3f ms   %7.1f ns/iteration\n", run * 1e3, run / N * 1e9);
    printf("  the Add kernel alone %9.3f ms   %7.1f ns/call\n", kernels * 1e3, kernels / N * 1e9);
    printf("  per-iteration overhead %7.1f ns (tgc run - the kernel alone: the body's 5 nodes and the loop)\n\n",
           (run - kernels) / N * 1e9);
    tgc_tensor_release(feeds[0]);
    tgc_tensor_release(feeds[1]);
    tgc_session_free(s);
    tgc_graph_free(g);
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    if (argc > 2 && strcmp(argv[2], "loop") == 0) { /* the loop alone */
        bench_loop();
        return 0;
    }
    bench_chain();
    bench_loop();
    bench_wide();
    bench_digits(root);
    return 0;
}
