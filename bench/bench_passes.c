/* The optimization passes, each figure beside its reference in the same run:
 *   1. a fusion group: a chain of 8 elementwise ops (Mul, Add, Sigmoid, Mul,
 *      Tanh, Sub, Abs, Exp), and one of 8 arithmetic ops (Mul, Add, Relu,
 *      Mul, Abs, Sub, LeakyRelu, Div), over 2^22 floats, fused (--optimize 2) against
 *      op by op (--optimize 0), rounds interleaved, medians, and the bytes
 *      each moves (inputs read and outputs written, per op or per group);
 *      on the cpu, then on gpu0 (the generated OpenCL kernel against the
 *      unfused gpu kernels; skipped without an OpenCL device);
 *   2. the passes' own time on the examples: tgc_graph_optimize per model,
 *      median ms, and the node counts before and after;
 *   3. the JIT: the chain unfused, fused through the interpreter
 *      (TGC_JIT=0) and fused through the JIT, interleaved; and the JIT's
 *      cost at a process's first run, cold (compiling) and with its disk
 *      cache (loading), each in a fresh process over a scratch cache, and
 *      tiered (TGC_JIT_AFTER_US's default: the interpreter first). Groups
 *      compile at their first run elsewhere in this benchmark.
 * Run by hand: build/bench/bench_passes [threads]. */
#include "tgc.h"

#include "bench_util.h"

#include "devices/cpu/jit/jit.h"
#include "support/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 22)
#define ROUNDS 15

static const char chain8[] = "format: tgc/1\n"
                             "inputs: [{name: x, dtype: float32, shape: [4194304]}]\n"
                             "outputs: [y]\n"
                             "initializers: [{name: c, dtype: float32, shape: [], values: [0.5]}]\n"
                             "nodes:\n"
                             "  - {name: a1, op: Mul, inputs: [x, c]}\n"
                             "  - {name: a2, op: Add, inputs: [a1, c]}\n"
                             "  - {name: a3, op: Sigmoid, inputs: [a2]}\n"
                             "  - {name: a4, op: Mul, inputs: [a3, x]}\n"
                             "  - {name: a5, op: Tanh, inputs: [a4]}\n"
                             "  - {name: a6, op: Sub, inputs: [a5, c]}\n"
                             "  - {name: a7, op: Abs, inputs: [a6]}\n"
                             "  - {name: y, op: Exp, inputs: [a7]}\n";

/* The same length in arithmetic only: each op costs a few instructions a
 * vector, so op by op is bound by memory traffic, and fusion removes it. */
static const char arith8[] = "format: tgc/1\n"
                             "inputs: [{name: x, dtype: float32, shape: [4194304]}]\n"
                             "outputs: [y]\n"
                             "initializers: [{name: c, dtype: float32, shape: [], values: [0.5]}]\n"
                             "nodes:\n"
                             "  - {name: a1, op: Mul, inputs: [x, c]}\n"
                             "  - {name: a2, op: Add, inputs: [a1, c]}\n"
                             "  - {name: a3, op: Relu, inputs: [a2]}\n"
                             "  - {name: a4, op: Mul, inputs: [a3, x]}\n"
                             "  - {name: a5, op: Abs, inputs: [a4]}\n"
                             "  - {name: a6, op: Sub, inputs: [a5, c]}\n"
                             "  - {name: a7, op: LeakyRelu, inputs: [a6]}\n"
                             "  - {name: y, op: Div, inputs: [a7, c]}\n";

static double run_once(tgc_session *s, tgc_tensor *x) {
    const char *names[] = {"x"};
    tgc_tensor *y = NULL;
    double t0 = bench_now_s();
    if (tgc_session_run(s, 1, names, &x, &y, NULL) != TGC_OK) exit(1);
    double t = bench_now_s() - t0;
    tgc_tensor_release(y);
    return t;
}

static void bench_chain(const char *what, const char *yaml, const char *devices, const char *threads) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(yaml, strlen(yaml), "chain.yaml", ".", d, &g) != TGC_OK) exit(1);
    tgc_diags_free(d);
    float *v = malloc((size_t)N * sizeof *v);
    for (int64_t i = 0; i < N; i++) v[i] = (float)((i * 7919) % 2001 - 1000) / 400.0f;
    tgc_tensor *x = NULL;
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){N}, v, &x);
    free(v);
    tgc_session *fused = bench_open_session(g, devices, TGC_OPTIMIZE_ALL, threads);
    tgc_session *plain = fused != NULL ? bench_open_session(g, devices, TGC_OPTIMIZE_NONE, threads) : NULL;
    if (plain == NULL) {
        printf("%s on %s: skipped (no session)\n", what, devices);
        tgc_session_free(fused);
        tgc_tensor_release(x);
        tgc_graph_free(g);
        return;
    }
    double tf[ROUNDS], tp[ROUNDS];
    run_once(fused, x), run_once(plain, x); /* warm-up */
    for (int r = 0; r < ROUNDS; r++) { /* interleaved: the machine's noise hits both */
        tf[r] = run_once(fused, x);
        tp[r] = run_once(plain, x);
    }
    double mf = bench_median(tf, ROUNDS), mp = bench_median(tp, ROUNDS);
    double mb = (double)N * 4 / (1 << 20);
    printf("%s on 2^22 floats on %s (threads %s), median of %d:\n", what, devices, threads ? threads : "-",
           ROUNDS);
    printf("  op by op   %8.2f ms   moves %6.0f MiB (each op reads its inputs, writes its output)\n", mp * 1e3,
           mb * (8 + 3 + 8)); /* 8 outputs; x read 2x, every intermediate read once, c negligible */
    printf("  fused      %8.2f ms   moves %6.0f MiB (x read once, y written once)\n", mf * 1e3, mb * 2);
    printf("  speed-up   %8.2fx\n", mp / mf);
    if (strncmp(devices, "gpu", 3) == 0) printf("  (both include copying x to the device and y back)\n");
    tgc_session_free(fused);
    tgc_session_free(plain);
    tgc_tensor_release(x);
    tgc_graph_free(g);
}

static void bench_compile(const char *path) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load(path, d, &g) != TGC_OK) {
        printf("  %-45s (not found)\n", path);
        tgc_diags_free(d);
        return;
    }
    double t[9];
    tgc_optimize_report rep = {0};
    for (int r = 0; r < 9; r++) {
        tgc_graph *opt = NULL;
        double t0 = bench_now_s();
        if (tgc_graph_optimize(g, TGC_OPTIMIZE_ALL, "cpu", &rep, d, &opt) != TGC_OK) exit(1);
        t[r] = bench_now_s() - t0;
        tgc_graph_free(opt);
    }
    int32_t before = rep.n_passes ? rep.passes[0].nodes_before : 0;
    int32_t after = rep.n_passes ? rep.passes[rep.n_passes - 1].nodes_after : 0;
    printf("  %-45s %8.3f ms  %5d -> %5d nodes\n", path, bench_median(t, 9) * 1e3, (int)before, (int)after);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

static tgc_graph *load_chain(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(chain8, strlen(chain8), "chain8.yaml", ".", d, &g) != TGC_OK) exit(1);
    tgc_diags_free(d);
    return g;
}

static tgc_tensor *chain_input(void) {
    float *v = malloc((size_t)N * sizeof *v);
    for (int64_t i = 0; i < N; i++) v[i] = (float)((i * 7919) % 2001 - 1000) / 400.0f;
    tgc_tensor *x = NULL;
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){N}, v, &x);
    free(v);
    return x;
}

/* In a child: a session's first run and a later one, and the JIT's figures. */
static void first_run_child(const char *what, const char *threads) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) {
        waitpid(pid, NULL, 0);
        return;
    }
    tgc_graph *g = load_chain();
    tgc_tensor *x = chain_input();
    tgc_session *s = bench_open_session(g, "cpu", TGC_OPTIMIZE_ALL, threads);
    double first = run_once(s, x), later[5];
    for (int r = 0; r < 5; r++) later[r] = run_once(s, x);
    tgc_jit_stats st = tgc_jit_get_stats();
    printf("  %-8s first run %7.2f ms, later %7.2f ms: +%6.2f ms (%lld compiled in %.2f ms, %lld loaded in %.2f ms)\n",
           what, first * 1e3, bench_median(later, 5) * 1e3, (first - bench_median(later, 5)) * 1e3,
           (long long)st.compiled, st.compile_seconds * 1e3, (long long)st.disk_loads, st.load_seconds * 1e3);
    fflush(stdout);
    _exit(0);
}

static void bench_jit(const char *threads) {
    if (!tgc_jit_enabled()) {
        printf("the JIT: off (a build without LLVM, or TGC_JIT=0)\n");
        return;
    }
    tgc_graph *g = load_chain();
    tgc_tensor *x = chain_input();
    tgc_session *fused = bench_open_session(g, "cpu", TGC_OPTIMIZE_ALL, threads),
                *plain = bench_open_session(g, "cpu", TGC_OPTIMIZE_NONE, threads);
    double tj[ROUNDS], ti[ROUNDS], tp[ROUNDS];
    run_once(fused, x), run_once(plain, x);
    for (int r = 0; r < ROUNDS; r++) {
        setenv("TGC_JIT", "0", 1);
        tgc_settings_read(); /* the process's settings: the running session's kernels read them */
        ti[r] = run_once(fused, x);
        unsetenv("TGC_JIT");
        tgc_settings_read();
        tj[r] = run_once(fused, x);
        tp[r] = run_once(plain, x);
    }
    double mj = bench_median(tj, ROUNDS), mi = bench_median(ti, ROUNDS), mp = bench_median(tp, ROUNDS);
    printf("the JIT, the same chain (threads %s), median of %d, rounds interleaved:\n", threads, ROUNDS);
    printf("  op by op       %8.2f ms\n", mp * 1e3);
    printf("  interpreter    %8.2f ms   %5.2fx op by op\n", mi * 1e3, mp / mi);
    printf("  JIT            %8.2f ms   %5.2fx op by op, %5.2fx the interpreter\n", mj * 1e3, mp / mj, mi / mj);
    tgc_session_free(fused);
    tgc_session_free(plain);
    tgc_tensor_release(x);
    tgc_graph_free(g);
}

/* Before anything in this process compiles the chain (children inherit
 * the process's cache). */
static void bench_jit_first_run(const char *threads) {
    if (!tgc_jit_enabled()) return;
    char home[] = "/tmp/tgc_bench_jit_XXXXXX";
    if (mkdtemp(home) == NULL) return;
    const char *old = getenv("XDG_CACHE_HOME");
    char *saved = old != NULL ? strdup(old) : NULL;
    setenv("XDG_CACHE_HOME", home, 1);
    printf("the JIT at a process's first run (the chain's one group; a fresh process each):\n");
    first_run_child("cold", threads);
    first_run_child("cached", threads);
    unsetenv("TGC_JIT_AFTER_US"); /* tiered: the interpreter until the group has run 20 ms */
    tgc_settings_read();
    first_run_child("tiered", threads);
    setenv("TGC_JIT_AFTER_US", "0", 1);
    tgc_settings_read();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", home);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", home);
    if (saved != NULL) setenv("XDG_CACHE_HOME", saved, 1);
    else unsetenv("XDG_CACHE_HOME");
    free(saved);
}

int main(int argc, char **argv) {
    char threads[32];
    snprintf(threads, sizeof threads, "cpu0=%s", argc > 1 ? argv[1] : "2");
    setenv("TGC_JIT_AFTER_US", "0", 1); /* fused groups through the JIT from their first run */
    tgc_settings_read();
    bench_jit_first_run(threads);
    static const char transcendental[] = "chain of 8 elementwise ops (3 transcendental)";
    static const char arithmetic[] = "chain of 8 arithmetic elementwise ops";
    bench_chain(transcendental, chain8, "cpu", threads);
    bench_chain(arithmetic, arith8, "cpu", threads);
    bench_chain(transcendental, chain8, "gpu0", NULL);
    bench_chain(arithmetic, arith8, "gpu0", NULL);
    printf("tgc_graph_optimize, every pass (median of 9):\n");
    bench_compile("examples/digits/mlp.yaml");
    bench_compile("examples/digits/cnn.yaml");
    bench_compile("examples/resnet_mini/resnet_mini.yaml");
    bench_compile("tests/data/passes/every_pass.yaml");
    bench_jit(threads);
    return 0;
}
