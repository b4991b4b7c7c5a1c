/* fuse-attention's effect on a whole graph: MODEL.yaml run at --optimize 0
 * and 2 (two sessions), one run of each in turn ROUNDS times so that the
 * machine's noise hits both alike; prints each median and their ratio.
 * Feeds come from .npy files. Made for PyTorch exports of GPT- and
 * BERT-style models (scripts/models_check.py's classes, imported by tgc
 * import) and bare attention graphs; docs/passes.md has its figures.
 * Run by hand:
 *     build/bench/bench_attention MODEL.yaml ROUNDS DEVICES [THREADS] NAME=FILE.npy... */
#include "tgc.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FEEDS 8
#define MAX_ROUNDS 1000

/* A session, or exit. */
static tgc_session *open_session(const tgc_graph *g, const char *devices, tgc_optimize_level level,
                                 const char *threads) {
    tgc_session *s = bench_open_session(g, devices, level, threads);
    if (s == NULL) exit(1);
    return s;
}

static double run_once(tgc_session *s, int n, const char **names, tgc_tensor **feeds) {
    tgc_tensor *outs[8] = {NULL};
    if (tgc_session_output_count(s) > 8) exit(1);
    double t0 = bench_now_s();
    if (tgc_session_run(s, n, names, feeds, outs, NULL) != TGC_OK) exit(1);
    double t = bench_now_s() - t0;
    for (int i = 0; i < 8; i++) tgc_tensor_release(outs[i]);
    return t;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_attention MODEL.yaml ROUNDS DEVICES [THREADS] NAME=FILE.npy...\n");
        return 2;
    }
    int rounds = atoi(argv[2]), first = 4;
    const char *threads = NULL;
    if (argc > 4 && strchr(argv[4], '=') != NULL && strstr(argv[4], ".npy") == NULL) threads = argv[first++];
    if (rounds < 1 || rounds > MAX_ROUNDS) return 2;
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load(argv[1], d, &g) != TGC_OK) {
        tgc_diags_print(d, stderr);
        return 1;
    }
    const char *names[MAX_FEEDS];
    tgc_tensor *feeds[MAX_FEEDS];
    int n = 0;
    static char name_buf[MAX_FEEDS][128];
    for (int i = first; i < argc && n < MAX_FEEDS; i++, n++) {
        const char *eq = strchr(argv[i], '=');
        if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof name_buf[0]) return 2;
        memcpy(name_buf[n], argv[i], (size_t)(eq - argv[i]));
        name_buf[n][eq - argv[i]] = '\0';
        names[n] = name_buf[n];
        if (tgc_tensor_load_npy(eq + 1, d, &feeds[n]) != TGC_OK) {
            tgc_diags_print(d, stderr);
            return 1;
        }
    }
    tgc_session *plain = open_session(g, argv[3], TGC_OPTIMIZE_NONE, threads);
    tgc_session *fused = open_session(g, argv[3], TGC_OPTIMIZE_ALL, threads);
    static double tp[MAX_ROUNDS], tf[MAX_ROUNDS];
    run_once(plain, n, names, feeds), run_once(fused, n, names, feeds); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        tp[r] = run_once(plain, n, names, feeds);
        tf[r] = run_once(fused, n, names, feeds);
    }
    double mp = bench_median(tp, rounds), mf = bench_median(tf, rounds);
    printf("%s on %s: --optimize 0 %.3f ms, --optimize 2 %.3f ms, %.2fx (medians of %d interleaved runs; "
           "fastest %.3f and %.3f ms)\n",
           argv[1], argv[3], mp * 1e3, mf * 1e3, mp / mf, rounds, tp[0] * 1e3, tf[0] * 1e3);
    tgc_session_free(plain);
    tgc_session_free(fused);
    for (int i = 0; i < n; i++) tgc_tensor_release(feeds[i]);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return 0;
}
