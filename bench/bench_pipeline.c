/* Pipelined steps: the throughput of a model in two stages, each stage on a
 * device of its own, with K = 1, 2, 4 steps in flight on one session (K
 * threads calling tgc_session_run, the session's max_inflight K), beside
 * the whole model on one device.
 *
 * The model: an MLP of 2 x LAYERS layers (MatMul WIDTH x WIDTH, Tanh) on a
 * [BATCH, WIDTH] input; the first LAYERS layers on stage A's device, the
 * rest on stage B's. With K = 1 the devices take turns (each idles while
 * the other works); with K >= 2 step i's stage B runs while step i+1's
 * stage A does, so throughput can approach the slower stage's. Each
 * configuration streams STEPS steps ROUNDS times; the table gives the
 * median steps/s (and the slowest and fastest round) and the speed-up over
 * the model on cpu0 alone, 1 thread, K = 1. Every step's output is checked
 * bitwise against the same input run alone on the same devices.
 *
 * Devices and threads: cpu0 and cpu1 are two devices over the same cores
 * (host memory shared: a pair between them passes the buffer, no copy);
 * each gets --threads DEV=1 here, so a two-stage run uses two cores at most,
 * as does cpu0 alone with 2 threads (intra-op parallelism), which the table
 * shows too. gpu0 is the OpenCL device (PoCL on a machine without a GPU:
 * its threads then share the same cores).
 *
 * Usage: build/bench/bench_pipeline [STEPS] [ROUNDS] [WIDTH] [--no-gpu]
 */
#include "bench/bench_util.h"
#include "tgc.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAYERS 4 /* per stage */
#define BATCH 32
#define N_INPUTS 8
#define MAX_K 4

static int width = 256;

/* Writes the weights as .npy files in dir and the model's YAML text in
 * yaml (stage A's nodes on dev_a, B's on dev_b). */
static bool write_model(const char *dir, const char *dev_a, const char *dev_b, char *yaml, size_t size) {
    size_t at = 0;
    at += (size_t)snprintf(yaml + at, size - at,
                           "format: tgc/1\ninputs:\n  - {name: x, dtype: float32, shape: [%d, %d]}\n"
                           "outputs: [h%d]\ninitializers:\n",
                           BATCH, width, 2 * LAYERS);
    float *w = malloc((size_t)width * width * sizeof *w);
    if (w == NULL) return false;
    for (int l = 1; l <= 2 * LAYERS; l++) {
        for (int i = 0; i < width * width; i++)
            w[i] = (float)(((i * 37 + l * 11) % 97) - 48) / (48.0f * sqrtf((float)width));
        tgc_tensor *t = NULL;
        char path[1024];
        snprintf(path, sizeof path, "%s/w%d.npy", dir, l);
        tgc_diags *d = tgc_diags_create();
        bool ok = tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){width, width}, w, &t) == TGC_OK &&
                  tgc_tensor_save_npy(t, path, d) == TGC_OK;
        tgc_diags_print(d, stderr);
        tgc_diags_free(d);
        tgc_tensor_release(t);
        if (!ok) {
            free(w);
            return false;
        }
        at += (size_t)snprintf(yaml + at, size - at,
                               "  - {name: w%d, dtype: float32, shape: [%d, %d], file: w%d.npy}\n", l, width, width, l);
    }
    free(w);
    at += (size_t)snprintf(yaml + at, size - at, "nodes:\n");
    for (int l = 1; l <= 2 * LAYERS; l++) {
        const char *dev = l <= LAYERS ? dev_a : dev_b;
        char in[16];
        snprintf(in, sizeof in, l == 1 ? "x" : "h%d", l - 1);
        at += (size_t)snprintf(yaml + at, size - at,
                               "  - {name: m%d, op: MatMul, inputs: [%s, w%d], device: %s}\n"
                               "  - {name: h%d, op: Tanh, inputs: [m%d], device: %s}\n",
                               l, in, l, dev, l, l, dev);
    }
    return at < size;
}

static tgc_graph *load_model(const char *dir, const char *dev_a, const char *dev_b) {
    static char yaml[1 << 14];
    if (!write_model(dir, dev_a, dev_b, yaml, sizeof yaml)) return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/model_%s_%s.yaml", dir, dev_a, dev_b);
    FILE *f = fopen(path, "w");
    if (f == NULL) return NULL;
    fputs(yaml, f);
    fclose(f);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load(path, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return g;
}

/* ---- streaming STEPS steps with K threads ------------------------------------ */

typedef struct stream {
    tgc_session *s;
    tgc_tensor **inputs; /* N_INPUTS */
    float **expected;    /* input -> output; NULL: record it */
    int steps;
    atomic_int next, failed, mismatched;
} stream;

static void *stream_worker(void *arg) {
    stream *st = arg;
    const char *names[] = {"x"};
    size_t bytes = (size_t)BATCH * width * sizeof(float);
    for (int i; (i = atomic_fetch_add(&st->next, 1)) < st->steps;) {
        tgc_tensor *out = NULL;
        tgc_diags *d = tgc_diags_create();
        if (tgc_session_run(st->s, 1, names, &st->inputs[i % N_INPUTS], &out, d) != TGC_OK) {
            tgc_diags_print(d, stderr);
            atomic_fetch_add(&st->failed, 1);
        } else if (memcmp(tgc_tensor_data(out), st->expected[i % N_INPUTS], bytes) != 0) {
            atomic_fetch_add(&st->mismatched, 1);
        }
        tgc_diags_free(d);
        tgc_tensor_release(out);
    }
    return NULL;
}

/* Steps per second of one round with k threads. */
static double one_round(stream *st, int k) {
    pthread_t threads[MAX_K];
    atomic_store(&st->next, 0);
    double t0 = bench_now_s();
    for (int t = 0; t < k; t++) pthread_create(&threads[t], NULL, stream_worker, st);
    for (int t = 0; t < k; t++) pthread_join(threads[t], NULL);
    return st->steps / (bench_now_s() - t0);
}

typedef struct config {
    const char *label;
    const char *dev_a, *dev_b, *devices, *threads;
} config;

/* The expected outputs of configuration c: each input run once, alone. */
static bool record_expected(const tgc_graph *g, const config *c, tgc_tensor **inputs, float **expected) {
    tgc_session *s = bench_open_session(g, c->devices, TGC_OPTIMIZE_DEFAULT, c->threads);
    bool ok = s != NULL;
    for (int i = 0; ok && i < N_INPUTS; i++) {
        const char *names[] = {"x"};
        tgc_tensor *out = NULL;
        tgc_diags *d = tgc_diags_create();
        ok = tgc_session_run(s, 1, names, &inputs[i], &out, d) == TGC_OK;
        tgc_diags_print(d, stderr);
        tgc_diags_free(d);
        if (ok) memcpy(expected[i], tgc_tensor_data(out), (size_t)BATCH * width * sizeof(float));
        tgc_tensor_release(out);
    }
    tgc_session_free(s);
    return ok;
}

/* One row of the table: a configuration at one K, its session open for
 * the whole run so that the rounds of all rows can take turns (a machine
 * whose load drifts then biases no row). */
typedef struct row {
    const config *c;
    int k;
    tgc_graph *g; /* borrowed from the configuration's first row */
    tgc_session *s;
    float *expected[N_INPUTS];
    stream st;
    double *rate; /* per round */
} row;

static bool open_row(row *r, const char *dir, const config *c, int k, tgc_graph *g, tgc_tensor **inputs, int steps,
                     int rounds) {
    *r = (row){.c = c, .k = k, .g = g};
    for (int i = 0; i < N_INPUTS; i++)
        if ((r->expected[i] = malloc((size_t)BATCH * width * sizeof(float))) == NULL) return false;
    if (!record_expected(g, c, inputs, r->expected)) return false;
    tgc_diags *d = tgc_diags_create();
    tgc_session_options o = {.threads = c->threads, .max_inflight = k};
    tgc_status st = tgc_session_create(g, c->devices, &o, d, &r->s);
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    (void)dir;
    if (st != TGC_OK) return false;
    r->st = (stream){.s = r->s, .inputs = inputs, .expected = r->expected, .steps = steps};
    r->rate = calloc((size_t)rounds, sizeof *r->rate);
    one_round(&r->st, k); /* warm-up: kernel caches, JIT, OpenCL programs */
    return r->rate != NULL;
}

static void close_row(row *r) {
    tgc_session_free(r->s);
    for (int i = 0; i < N_INPUTS; i++) free(r->expected[i]);
    free(r->rate);
}

static void print_row(row *r, int rounds, double baseline) {
    double med = bench_median(r->rate, rounds); /* sorts rate */
    int peak = 0;
    tgc_session_steps_in_flight(r->s, NULL, &peak);
    printf("%-30s %2d %9.1f   %8.1f - %-8.1f %6.2fx %5d  %s\n", r->c->label, r->k, med, r->rate[0], r->rate[rounds - 1],
           med / baseline, peak,
           atomic_load(&r->st.failed)       ? "FAILED"
           : atomic_load(&r->st.mismatched) ? "DIFFERENT"
                                            : "bitwise equal");
}

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 64, rounds = argc > 2 ? atoi(argv[2]) : 7;
    if (argc > 3) width = atoi(argv[3]);
    bool gpu = !(argc > 4 && strcmp(argv[4], "--no-gpu") == 0);
    if (steps < 1 || rounds < 1 || width < 8 || width > 4096) {
        fprintf(stderr, "usage: bench_pipeline [STEPS>=1] [ROUNDS>=1] [WIDTH 8..4096] [--no-gpu]\n");
        return 2;
    }
    char dir[] = "/tmp/tgc-bench-pipeline-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    tgc_tensor *inputs[N_INPUTS] = {0};
    float *x = malloc((size_t)BATCH * width * sizeof *x);
    for (int i = 0; i < N_INPUTS; i++) {
        for (int k = 0; k < BATCH * width; k++) x[k] = sinf((float)(i * 7 + k) * 0.013f);
        tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){BATCH, width}, x, &inputs[i]);
    }
    free(x);
    int rc = 0;
    tgc_device_info info[4];
    bool have_gpu = gpu && tgc_devices_list(info, 4) > 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    static const int k1[] = {1}, k12[] = {1, 2}, k124[] = {1, 2, 4};
    static const config configs[] = {
        {"cpu0 alone, 1 thread", "cpu0", "cpu0", "cpu0", "cpu0=1"},
        {"cpu0 alone, 2 threads", "cpu0", "cpu0", "cpu0", "cpu0=2"},
        {"cpu0 | cpu1, 1 thread each", "cpu0", "cpu1", "cpu0,cpu1", "cpu0=1,cpu1=1"},
        {"gpu0 alone", "gpu0", "gpu0", "gpu0", NULL},
        {"cpu0 (1 thread) | gpu0", "cpu0", "gpu0", "cpu0,gpu0", "cpu0=1"},
    };
    const int *ks[] = {k12, k12, k124, k1, k124};
    const int n_ks[] = {2, 2, 3, 1, 3};
    int n_configs = have_gpu ? 5 : 3;
    row rows[16];
    tgc_graph *graphs[5] = {0};
    int n_rows = 0;
    for (int c = 0; c < n_configs && rc == 0; c++) {
        if ((graphs[c] = load_model(dir, configs[c].dev_a, configs[c].dev_b)) == NULL) rc = 1;
        for (int k = 0; rc == 0 && k < n_ks[c]; k++)
            if (!open_row(&rows[n_rows++], dir, &configs[c], ks[c][k], graphs[c], inputs, steps, rounds)) rc = 1;
    }
    for (int r = 0; rc == 0 && r < rounds; r++) /* the rows take turns, round by round */
        for (int i = 0; i < n_rows; i++) rows[i].rate[r] = one_round(&rows[i].st, rows[i].k);
    if (rc == 0) {
        printf("bench_pipeline: MLP of %d layers (MatMul [%d, %d] x [%d, %d], Tanh), %d per stage; %d steps a round, "
               "median of %d rounds (the rows take turns); %ld cores\n",
               2 * LAYERS, BATCH, width, width, width, LAYERS, steps, rounds, cores);
        printf("%-30s %2s %9s   %-19s %7s %5s\n", "configuration", "K", "steps/s", "slowest - fastest", "vs 1st",
               "peak");
        double baseline = bench_median(rows[0].rate, rounds);
        for (int i = 0; i < n_rows; i++) print_row(&rows[i], rounds, baseline);
    }
    for (int i = 0; i < n_rows; i++) close_row(&rows[i]);
    for (int c = 0; c < 5; c++) tgc_graph_free(graphs[c]);
    for (int i = 0; i < N_INPUTS; i++) tgc_tensor_release(inputs[i]);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_pipeline: could not remove %s\n", dir);
    return rc;
}
