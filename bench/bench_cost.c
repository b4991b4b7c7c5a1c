/* The cost model's figures beside what a session's steps take, node by
 * node (build/bench/bench_cost [REPO_ROOT] [DEVICE] [MODEL.yaml...]).
 *
 * For each model (by default examples/digits/cnn.yaml and
 * examples/resnet_mini/resnet_mini.yaml), on DEVICE (default cpu0) with
 * one thread:
 *   model  the cost model's figure: each node's kernel timed by the model
 *          (placer/cost.h, measure and refresh on: measured afresh, and the
 *          figures written to the user's cost cache as any model's),
 *          and how long measuring the whole model took;
 *   est    the roofline estimate against the device's measured peaks;
 *   run    the median of the node's own time over 20 traced session steps
 *          (the graph as written, no fusion: the nodes the model saw).
 * A node's symbolic dims count as 1 in both. Then the totals and the
 * median of |model/run - 1| and |est/run - 1|, and one untraced step's
 * median time beside the sum of the model's figures (on a device with a
 * queue, gpuN, a traced node's time is its enqueueing only: the step's
 * time is the comparison there). Not a test: the figures move with the
 * machine's load. */
#include "bench/bench_util.h"

#include "graph/graph.h"
#include "placer/cost.h"
#include "support/settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 20

/* A feed per graph input: its declared dtype, symbols as 1, 0.5 or 1. */
static int make_feeds(const tgc_graph *g, const char **names, tgc_tensor **feeds, int max) {
    int n = 0;
    for (int32_t i = 0; i < g->n_nodes && n < max; i++) {
        const tgc_node *nd = &g->nodes[i];
        if (nd->kind != TGC_NODE_INPUT) continue;
        const tgc_tensor_info *t = &nd->outputs[0];
        int64_t dims[TGC_MAX_RANK], count = 1;
        for (int r = 0; r < t->shape.rank; r++) count *= dims[r] = tgc_dim_known(t->shape.dims[r]) ? t->shape.dims[r].v : 1;
        size_t es = tgc_dtype_size(t->dtype);
        unsigned char *data = calloc((size_t)count + 1, es);
        for (int64_t k = 0; k < count; k++) {
            if (t->dtype == TGC_FLOAT32) ((float *)data)[k] = 0.5f;
            else if (t->dtype == TGC_INT64) ((int64_t *)data)[k] = 1;
            else if (t->dtype == TGC_INT32) ((int32_t *)data)[k] = 1;
        }
        names[n] = nd->name;
        if (tgc_tensor_create(t->dtype, t->shape.rank, dims, data, &feeds[n]) == TGC_OK) n++;
        free(data);
    }
    return n;
}

/* Median "dur" (microseconds) of the trace's events named `name`. */
static double run_us(const char *trace, const char *name) {
    char pat[300];
    snprintf(pat, sizeof pat, "\"name\":\"%s\"", name);
    double v[STEPS * 2];
    int n = 0;
    for (const char *p = strstr(trace, pat); p != NULL && n < STEPS * 2; p = strstr(p + 1, pat)) {
        const char *line = p;
        while (line > trace && line[-1] != '\n') line--;
        const char *dur = strstr(line, "\"dur\":");
        if (dur != NULL && dur < p && strstr(line, "\"ph\":\"X\"") == line + 1) v[n++] = strtod(dur + 6, NULL);
    }
    return n > 0 ? bench_median(v, n) : -1;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf != NULL) buf[fread(buf, 1, (size_t)n, f)] = '\0';
    fclose(f);
    return buf;
}

static void bench_model(const char *path, const char *device) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load(path, d, &g) != TGC_OK) {
        tgc_diags_print(d, stderr);
        tgc_diags_free(d);
        return;
    }
    tgc_placer_device dev;
    int nd = 0;
    char threads[64];
    snprintf(threads, sizeof threads, "%s=1", device);
    tgc_cost_options o = {.threads = threads, .measure = true, .refresh = true};
    tgc_cost_model *m = NULL;
    if (tgc_placer_parse_devices(device, &dev, 1, &nd, d) != TGC_OK ||
        tgc_cost_model_create(&dev, 1, &o, d, &m) != TGC_OK) {
        tgc_diags_print(d, stderr);
        tgc_diags_free(d);
        tgc_graph_free(g);
        return;
    }
    double *model = calloc((size_t)g->n_nodes, sizeof *model), *est = calloc((size_t)g->n_nodes, sizeof *est);
    bool *timed = calloc((size_t)g->n_nodes, sizeof *timed);
    for (int32_t i = 0; i < g->n_nodes && tgc_cost_estimate(m, g, i, 0) == 0; i++) { /* the peaks, before the clock */
    }
    double t0 = bench_now_s();
    for (int32_t i = 0; i < g->n_nodes; i++) model[i] = tgc_cost_node(m, g, i, 0, &timed[i]);
    double measuring = bench_now_s() - t0;
    for (int32_t i = 0; i < g->n_nodes; i++) est[i] = tgc_cost_estimate(m, g, i, 0);
    tgc_cost_model_free(m);

    /* the session: the graph as written, no fusion, one thread, traced */
    tgc_session *s = bench_open_session(g, device, TGC_OPTIMIZE_NONE, threads);
    const char *names[64];
    tgc_tensor *feeds[64], *outs[64] = {0};
    int nf = make_feeds(g, names, feeds, 64);
    char trace_path[] = "/tmp/bench_cost_trace.XXXXXX";
    int fd = mkstemp(trace_path);
    char *trace = NULL;
    double steps[STEPS], step_s = 0;
    if (s != NULL && fd >= 0) {
        close(fd);
        tgc_session_run(s, nf, names, feeds, outs, NULL); /* warm-up: packed weights, caches */
        for (int k = 0; k < g->n_outputs; k++) tgc_tensor_release(outs[k]);
        for (int step = 0; step < STEPS; step++) { /* the step's own time, untraced */
            double t = bench_now_s();
            tgc_session_run(s, nf, names, feeds, outs, NULL);
            steps[step] = bench_now_s() - t;
            for (int k = 0; k < g->n_outputs; k++) tgc_tensor_release(outs[k]);
        }
        step_s = bench_median(steps, STEPS);
        tgc_session_trace_start(s);
        for (int step = 0; step < STEPS; step++) {
            tgc_session_run(s, nf, names, feeds, outs, NULL);
            for (int k = 0; k < g->n_outputs; k++) tgc_tensor_release(outs[k]);
        }
        tgc_session_trace_write(s, trace_path, d);
        trace = slurp(trace_path);
        unlink(trace_path);
    }
    printf("\n%s on %s, 1 thread: %d nodes measured in %.1f ms\n", path, device, g->n_nodes, measuring * 1e3);
    printf("%-20s %-18s %10s %10s %10s %8s\n", "node", "op", "model us", "est us", "run us", "model/run");
    double sum_model = 0, sum_est = 0, sum_run = 0, err_m[4096], err_e[4096];
    int n_err = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const tgc_node *n = &g->nodes[i];
        if (n->kind != TGC_NODE_OP) continue;
        double run = trace != NULL ? run_us(trace, n->source_name != NULL ? n->source_name : n->name) : -1;
        printf("%-20.20s %-18.18s %10.1f%s %10.1f %10.1f %8.2f\n", n->name, n->op_name, model[i] * 1e6,
               timed[i] ? " " : "*", est[i] * 1e6, run, run > 0 ? model[i] * 1e6 / run : 0);
        sum_model += model[i];
        sum_est += est[i];
        if (run > 0) {
            sum_run += run * 1e-6;
            if (n_err < 4096) {
                err_m[n_err] = fabs(model[i] * 1e6 / run - 1);
                err_e[n_err++] = fabs(est[i] * 1e6 / run - 1);
            }
        }
    }
    printf("%-39s %10.1f  %10.1f %10.1f %8.2f\n", "total", sum_model * 1e6, sum_est * 1e6, sum_run * 1e6,
           sum_run > 0 ? sum_model / sum_run : 0);
    printf("one step: %.1f us (median of %d, untraced); the model's sum %.1f us, %.2fx\n", step_s * 1e6, STEPS,
           sum_model * 1e6, step_s > 0 ? sum_model / step_s : 0);
    if (n_err > 0)
        printf("median |model/run - 1| %.2f, |est/run - 1| %.2f  (* : not timed, the estimate)\n",
               bench_median(err_m, n_err), bench_median(err_e, n_err));
    free(trace);
    for (int k = 0; k < nf; k++) tgc_tensor_release(feeds[k]);
    tgc_session_free(s);
    free(model);
    free(est);
    free(timed);
    tgc_diags_free(d);
    tgc_graph_free(g);
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    const char *device = argc > 2 ? argv[2] : "cpu0";
    /* the figures measured afresh (refresh), into the cost cache as any model's;
     * the OpenCL program cache stays warm */
    setenv("TGC_NO_FUSION", "1", 1);
    tgc_settings_read();
    char path[1024];
    if (argc > 3) {
        for (int i = 3; i < argc; i++) bench_model(argv[i], device);
    } else {
        const char *models[] = {"examples/digits/cnn.yaml", "examples/resnet_mini/resnet_mini.yaml"};
        for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
            snprintf(path, sizeof path, "%s/%s", root, models[i]);
            bench_model(path, device);
        }
    }
    return 0;
}
