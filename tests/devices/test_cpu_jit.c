/* The cpu JIT for fusion groups (devices/cpu/jit/): the row expressions
 * parse; a kernel compiled from each float row computes the bits the row's
 * own loop computes, over special values and wide random ones; fused
 * groups in a session give the same bits with the JIT, without it and
 * unfused, for 1 and 2 threads; the disk cache is used by a second process
 * and survives truncated, corrupt and foreign files by rebuilding them.
 * In a build without LLVM the JIT cases check that it reports itself off.
 * The cache lives in a scratch XDG_CACHE_HOME for the suite. */
#include "devices/cpu/ew.h"
#include "devices/cpu/jit/ew_expr.h"
#include "devices/cpu/jit/jit.h"
#include "support/settings.h"
#include "tests/harness.h"
#include "tgc.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096

static char cache_home[64];
/* XDG_CACHE_HOME as the suite found it (NULL: unset): the OpenCL device's
 * programs come from there. */
static char caller_cache_home_buf[1024];
static const char *caller_cache_home;

/* XDG_CACHE_HOME = dir, or unset for NULL, read into the settings (as a
 * session made now would: the JIT reads the last snapshot). */
static void use_cache_home(const char *dir) {
    if (dir != NULL) setenv("XDG_CACHE_HOME", dir, 1);
    else unsetenv("XDG_CACHE_HOME");
    tgc_settings_read();
}

/* ---- The expression parser --------------------------------------------------------- */

static void test_every_row_parses(void) {
    int parsed = 0;
    for (int r = 0; r < TGC_EW_COUNT; r++) {
        const tgc_ew_row *row = &tgc_ew_rows[r];
        if (row->bool_out || (row->dtypes & (1u << TGC_FLOAT32)) == 0) continue;
        tgc_ew_tree t;
        char err[200];
        bool ok = tgc_ew_tree_parse(tgc_ew_float_expr((tgc_ew_op)r), &t, err, sizeof err);
        CU_ASSERT(ok);
        if (!ok) fprintf(stderr, "\n  %s: %s\n", row->op, err);
        parsed += ok;
    }
    CU_ASSERT(parsed >= 40);
}

static void test_parse_shapes(void) {
    tgc_ew_tree t;
    char err[200];
    /* a - b - x is (a - b) - x; * binds tighter than +; SEL takes a mask */
    CU_ASSERT_FATAL(tgc_ew_tree_parse("a - b - x * 2.0f", &t, err, sizeof err));
    const tgc_ew_node *root = &t.nodes[t.root];
    CU_ASSERT_EQUAL(root->kind, TGC_EWX_SUB);
    CU_ASSERT_EQUAL(t.nodes[root->kid[0]].kind, TGC_EWX_SUB);
    CU_ASSERT_EQUAL(t.nodes[root->kid[1]].kind, TGC_EWX_MUL);
    /* identical subtrees are one node: EXP(x) twice */
    CU_ASSERT_FATAL(tgc_ew_tree_parse("EXP(x) * EXP(x)", &t, err, sizeof err));
    CU_ASSERT_EQUAL(t.nodes[t.root].kid[0], t.nodes[t.root].kid[1]);
    CU_ASSERT_FATAL(tgc_ew_tree_parse("SEL(x <= 1.5f, -x, INFINITY)", &t, err, sizeof err));
    CU_ASSERT_EQUAL(t.nodes[t.nodes[t.root].kid[0]].kind, TGC_EWX_LE);
    CU_ASSERT_EQUAL(t.nodes[t.nodes[t.root].kid[1]].kind, TGC_EWX_NEG);
    CU_ASSERT(isinf(t.nodes[t.nodes[t.root].kid[2]].value));
}

static void test_parse_errors(void) {
    static const char *const bad[] = {
        "x +",           /* no operand */
        "FOO(x)",        /* unknown function */
        "y",             /* unknown name */
        "SEL(x, x, x)",  /* a value where a mask belongs */
        "x < 1.0f",      /* a mask as the result */
        "(x < 1.0f) + x", /* a mask where a value belongs */
        "POW(x)",        /* arity */
        "x x",           /* trailing text */
        "P3",            /* no such parameter */
        "(x",            /* unclosed */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tgc_ew_tree t;
        char err[200] = "";
        CU_ASSERT(!tgc_ew_tree_parse(bad[i], &t, err, sizeof err));
        CU_ASSERT(err[0] != '\0');
    }
}

/* ---- Kernels against the row loops ---------------------------------------------------- */

static uint32_t lcg = 12345u;
static float next_uniform(void) {
    lcg = lcg * 1664525u + 1013904223u;
    return (float)(lcg >> 8) / (float)(1u << 24);
}

/* Special values first, then random ones over several scales. */
static void fill_values(float *v, int n, unsigned seed) {
    static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, 20.0f, -20.0f, 88.7f, -104.0f,
                                    1e-40f, -1e-40f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, 3.0f, 1e-7f};
    lcg = seed;
    int s = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < n; i++) {
        float u = next_uniform();
        if (i < s) v[i] = special[i];
        else if (i % 3 == 0) v[i] = (u - 0.5f) * 8.0f;
        else if (i % 3 == 1) v[i] = (u - 0.5f) * 200.0f;
        else v[i] = (u - 0.5f) * 2e-3f;
    }
}

/* Row r over x (and y) with parameters p: JIT kernel vs the row's loop, bitwise. */
static void check_row(int r, const float *p, const float *x, const float *y, bool y_scalar) {
    const tgc_ew_loops *loops = tgc_cpu_ew_loops();
    const tgc_ew_row *row = &tgc_ew_rows[r];
    tgc_jit_program prog;
    memset(&prog, 0, sizeof prog);
    prog.n_steps = 1;
    prog.n_inputs = row->arity;
    prog.steps[0] = (tgc_jit_step){.row = r, .a = 0, .b = row->arity == 2 ? 1 : -1};
    memcpy(prog.steps[0].p, p, sizeof prog.steps[0].p);
    prog.scalar[1] = y_scalar;
    char err[256];
    tgc_jit_fused_fn fn = tgc_jit_fused_kernel(&prog, loops->lanes, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(fn);
    if (fn == NULL) {
        fprintf(stderr, "\n  %s: %s\n", row->op, err);
        return;
    }
    static float want[N], got[N];
    tgc_ew_params ep;
    memset(&ep, 0, sizeof ep);
    for (int j = 0; j < 3; j++) {
        ep.f[j] = p[j];
        ep.d[j] = p[j];
        ep.i[j] = (int64_t)p[j];
    }
    if (row->arity == 1) loops->unary[r][TGC_FLOAT32](N, x, want, &ep);
    else loops->binary[r][TGC_FLOAT32](N, x, 1, y, y_scalar ? 0 : 1, want, &ep);
    /* in two calls, neither a whole number of the kernel's unrolled blocks:
     * its block loop, its one-vector tail, and a tail alone */
    int64_t nvec = N / loops->lanes, first = nvec - 3, off = first * loops->lanes;
    const float *in[2] = {x, y};
    fn(first, in, got);
    const float *in_rest[2] = {x + off, y_scalar ? y : y + off};
    fn(nvec - first, in_rest, got + off);
    int bad = -1;
    for (int i = 0; i < N && bad < 0; i++) /* a NaN's sign and payload aside (compilers order operands freely) */
        if (memcmp(&want[i], &got[i], sizeof(float)) != 0 && !(isnan(want[i]) && isnan(got[i]))) bad = i;
    CU_ASSERT_EQUAL(bad, -1);
    if (bad >= 0)
        fprintf(stderr, "\n  %s (P %g %g %g): at %d, x %a: loop %a, jit %a\n", row->op, p[0], p[1], p[2], bad,
                x[bad], want[bad], got[bad]);
}

static bool jit_or_notice(void) {
    if (tgc_jit_enabled()) return true;
    /* a build without LLVM: the JIT must say it is off and make nothing */
    tgc_jit_program prog = {.n_steps = 1, .n_inputs = 1, .steps = {{.row = TGC_EW_Relu, .a = 0, .b = -1}}};
    char err[64];
    CU_ASSERT_PTR_NULL(tgc_jit_fused_kernel(&prog, 8, err, sizeof err));
    return false;
}

static void test_rows_match_loops(void) {
    if (!jit_or_notice()) return;
    static float x[N], y[N];
    fill_values(x, N, 7);
    fill_values(y, N, 11);
    for (int i = 0; i < N; i += 7) y[i] = x[i]; /* ties for Min, Max, comparisons */
    const tgc_ew_loops *loops = tgc_cpu_ew_loops();
    int rows = 0;
    for (int r = 0; r < TGC_EW_COUNT; r++) {
        const tgc_ew_row *row = &tgc_ew_rows[r];
        if (row->bool_out || (row->dtypes & (1u << TGC_FLOAT32)) == 0) continue;
        if ((row->arity == 1 ? (void *)loops->unary[r][TGC_FLOAT32] : (void *)loops->binary[r][TGC_FLOAT32]) == NULL)
            continue;
        float defaults[3] = {row->attr_defaults[0], row->attr_defaults[1], row->attr_defaults[2]};
        if (r == TGC_EW_Clip) defaults[0] = -INFINITY, defaults[1] = INFINITY;
        if (r == TGC_EW_Mean) defaults[0] = 2.0f;
        const float other[3] = {0.7f, 1.3f, 0.0f}; /* Gelu's tanh form; Clip [0.7, 1.3] */
        check_row(r, defaults, x, y, false);
        check_row(r, other, x, y, false);
        if (row->arity == 2) check_row(r, defaults, x, y + 5, true);
        rows++;
    }
    CU_ASSERT(rows >= 40);
}

/* ---- Fused groups in a session ---------------------------------------------------------- */

static const char group_yaml[] =
    "format: tgc/1\n"
    "inputs: [{name: x, dtype: float32, shape: [3, 5, 37]}]\n"
    "outputs: [y]\n"
    "initializers:\n"
    "  - {name: c, dtype: float32, shape: [], values: [0.75]}\n"
    "  - {name: bias, dtype: float32, shape: [37], file: bias.npy}\n"
    "nodes:\n"
    "  - {name: a1, op: Mul, inputs: [x, c]}\n"
    "  - {name: a2, op: Add, inputs: [a1, bias]}\n"
    "  - {name: a3, op: Sigmoid, inputs: [a2]}\n"
    "  - {name: a4, op: Mul, inputs: [a3, x]}\n"
    "  - {name: a5, op: Gelu, inputs: [a4]}\n"
    "  - {name: a6, op: Clip, inputs: [a5, c]}\n"
    "  - {name: a7, op: Erf, inputs: [a6]}\n"
    "  - {name: y, op: Div, inputs: [a7, bias]}\n";

/* The JIT's answers so far: kernels compiled, found in memory or on disk. */
static int64_t jit_answers(void) {
    tgc_jit_stats s = tgc_jit_get_stats();
    return s.compiled + s.memory_hits + s.disk_loads;
}

/* Runs the graph on x `runs` times in one session; each run's 555 output
 * floats into out[555 * i ..], and the JIT's answers after run i into
 * answers[i] (may be NULL). */
static void run_group_times(tgc_optimize_level level, const char *threads, const float *x, float *out, int runs,
                            int64_t *answers) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    const char *dir = tgc_test_path("tests/data/jit");
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(group_yaml, strlen(group_yaml), "group.yaml", dir, d, &g), TGC_OK);
    tgc_session_options o = {0};
    o.optimize = level;
    o.threads = threads;
    tgc_session *s = NULL;
    tgc_status st = tgc_session_create(g, "cpu", &o, d, &s);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    int64_t dims[3] = {3, 5, 37};
    tgc_tensor *in = NULL, *outs[1] = {NULL};
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 3, dims, x, &in), TGC_OK);
    const char *names[] = {"x"};
    for (int i = 0; i < runs; i++) {
        st = tgc_session_run(s, 1, names, &in, outs, d);
        if (st != TGC_OK) tgc_diags_print(d, stderr);
        CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(outs[0]), 555);
        memcpy(out + 555 * i, tgc_tensor_data(outs[0]), 555 * sizeof(float));
        tgc_tensor_release(outs[0]);
        if (answers != NULL) answers[i] = jit_answers();
    }
    tgc_tensor_release(in);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

static void run_group(tgc_optimize_level level, const char *threads, const float *x, float *out) {
    run_group_times(level, threads, x, out, 1, NULL);
}

static void test_session_bits(void) {
    static float x[555], unfused[555], got[555];
    fill_values(x, 555, 3);
    for (int i = 0; i < 555; i++)
        if (!isfinite(x[i])) x[i] = 1.0f; /* keep the reference run's values finite where the graph is */
    run_group(TGC_OPTIMIZE_NONE, "cpu0=1", x, unfused);
    int64_t before = jit_answers();
    static const char *const threads[] = {"cpu0=1", "cpu0=2"};
    setenv("TGC_JIT_AFTER_US", "0", 1); /* compiled at the first run */
    for (int jit = 0; jit < 2; jit++)
        for (int t = 0; t < 2; t++) {
            setenv("TGC_JIT", jit ? "1" : "0", 1);
            run_group(TGC_OPTIMIZE_ALL, threads[t], x, got);
            CU_ASSERT(memcmp(got, unfused, sizeof got) == 0);
        }
    unsetenv("TGC_JIT");
    unsetenv("TGC_JIT_AFTER_US");
    if (tgc_jit_enabled()) /* one compile, then the process's cache */
        CU_ASSERT(jit_answers() >= before + 2);
}

/* Runs of one session from several threads at once (tgc_session_run is
 * thread-safe): each thread RACE_RUNS runs, its outputs into out. */
#define RACE_THREADS 4
#define RACE_RUNS 6
typedef struct racer {
    tgc_session *s;
    tgc_tensor *in;
    float out[RACE_RUNS][555];
    bool ok;
} racer;

static void *race(void *arg) {
    racer *r = arg;
    tgc_diags *d = tgc_diags_create();
    const char *names[] = {"x"};
    r->ok = d != NULL;
    for (int i = 0; r->ok && i < RACE_RUNS; i++) {
        tgc_tensor *y = NULL;
        r->ok = tgc_session_run(r->s, 1, names, &r->in, &y, d) == TGC_OK && tgc_tensor_numel(y) == 555;
        if (r->ok) memcpy(r->out[i], tgc_tensor_data(y), sizeof r->out[i]);
        tgc_tensor_release(y);
    }
    tgc_diags_free(d);
    return NULL;
}

/* Tiering up while runs race (ThreadSanitizer runs this suite): threads
 * cross the threshold together, one compiles, every run has the same bits. */
static void tier_up_racing(const float *x, const float *unfused) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    const char *dir = tgc_test_path("tests/data/jit");
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(group_yaml, strlen(group_yaml), "group.yaml", dir, d, &g), TGC_OK);
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_ALL, .threads = "cpu0=2"};
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, d, &s), TGC_OK);
    tgc_tensor *in = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 3, (int64_t[]){3, 5, 37}, x, &in), TGC_OK);
    static racer racers[RACE_THREADS];
    pthread_t tids[RACE_THREADS];
    int64_t before = jit_answers();
    for (int t = 0; t < RACE_THREADS; t++) {
        racers[t] = (racer){.s = s, .in = in};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tids[t], NULL, race, &racers[t]), 0);
    }
    for (int t = 0; t < RACE_THREADS; t++) pthread_join(tids[t], NULL);
    CU_ASSERT(jit_answers() <= before + 1); /* compiled at most once (a session's one group) */
    for (int t = 0; t < RACE_THREADS; t++) {
        CU_ASSERT(racers[t].ok);
        for (int i = 0; i < RACE_RUNS; i++) CU_ASSERT(memcmp(racers[t].out[i], unfused, 555 * sizeof(float)) == 0);
    }
    tgc_tensor_release(in);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Tiering up: a group runs in the interpreter until its runs have taken
 * TGC_JIT_AFTER_US, and from the next run on through the JIT, with the
 * same bits throughout. At 1 us the first run's time passes it (the JIT is
 * asked at run 2, once); at 10^9 us (1000 s) it is never asked; at 1 us
 * again, with four threads running the session at once. */
static void test_tier_up(void) {
    if (!jit_or_notice()) return;
    static float x[555], unfused[555], got[4 * 555];
    fill_values(x, 555, 4);
    for (int i = 0; i < 555; i++)
        if (!isfinite(x[i])) x[i] = 1.0f;
    run_group(TGC_OPTIMIZE_NONE, "cpu0=1", x, unfused);
    int64_t answers[4], before = jit_answers();
    setenv("TGC_JIT_AFTER_US", "1", 1);
    run_group_times(TGC_OPTIMIZE_ALL, "cpu0=1", x, got, 4, answers);
    CU_ASSERT_EQUAL(answers[0], before); /* run 1: interpreted */
    CU_ASSERT_EQUAL(answers[1], before + 1); /* run 2: compiled (or found in a cache) */
    CU_ASSERT_EQUAL(answers[3], before + 1); /* then kept */
    for (int i = 0; i < 4; i++) CU_ASSERT(memcmp(got + 555 * i, unfused, sizeof unfused) == 0);
    before = jit_answers();
    setenv("TGC_JIT_AFTER_US", "1000000000", 1);
    run_group_times(TGC_OPTIMIZE_ALL, "cpu0=2", x, got, 4, answers);
    CU_ASSERT_EQUAL(answers[3], before);
    for (int i = 0; i < 4; i++) CU_ASSERT(memcmp(got + 555 * i, unfused, sizeof unfused) == 0);
    setenv("TGC_JIT_AFTER_US", "1", 1);
    tier_up_racing(x, unfused);
    unsetenv("TGC_JIT_AFTER_US");
}

/* A group over an empty tensor runs (nothing to read or write). */
static void test_empty_group(void) {
    static const char yaml[] = "format: tgc/1\n"
                               "inputs: [{name: x, dtype: float32, shape: [0, 5]}]\n"
                               "outputs: [y]\n"
                               "initializers: [{name: c, dtype: float32, shape: [5], values: [1, 2, 3, 4, 5]}]\n"
                               "nodes:\n"
                               "  - {name: a, op: Mul, inputs: [x, c]}\n"
                               "  - {name: y, op: Tanh, inputs: [a]}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "empty.yaml", NULL, d, &g), TGC_OK);
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_ALL};
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, d, &s), TGC_OK);
    tgc_tensor *x = NULL, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){0, 5}, NULL, &x), TGC_OK);
    const char *names[] = {"x"};
    tgc_status st = tgc_session_run(s, 1, names, &x, &y, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    CU_ASSERT(y != NULL && tgc_tensor_numel(y) == 0 && tgc_tensor_rank(y) == 2);
    tgc_tensor_release(y);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* The JIT's LLVM beside the OpenCL driver's: with a kernel compiled (so
 * libLLVM-14 is loaded), gpu0 (PoCL, which brings LLVM 15) compiles a
 * program it has never seen (a fused group with a constant unique to this
 * process) and runs it. With LLVM 14 linked into the library, PoCL's
 * compiler called into it and crashed. Skipped without gpu0. */
static tgc_jit_program cache_program(float scale);

static void test_beside_opencl_compiler(void) {
    if (!jit_or_notice()) return;
    tgc_jit_program prog = cache_program(0.375f);
    char err[256];
    CU_ASSERT_PTR_NOT_NULL(tgc_jit_fused_kernel(&prog, tgc_cpu_ew_loops()->lanes, err, sizeof err));
    char yaml[1024];
    float c = 1.0f + (float)(getpid() % 100000) / 1048576.0f; /* a source PoCL's cache cannot hold */
    snprintf(yaml, sizeof yaml,
             "format: tgc/1\n"
             "inputs: [{name: x, dtype: float32, shape: [64]}]\n"
             "outputs: [y]\n"
             "initializers: [{name: c, dtype: float32, shape: [], values: [%.9g]}]\n"
             "nodes:\n"
             "  - {name: a, op: Mul, inputs: [x, c]}\n"
             "  - {name: y, op: Tanh, inputs: [a]}\n",
             (double)c);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_status st = tgc_graph_load_string(yaml, strlen(yaml), "beside.yaml", NULL, d, &g);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_ALL};
    /* The device's own programs from the caller's cache (warm after the
     * first run: PoCL takes a minute to build them all), the new group's
     * program built now whatever the cache holds. */
    use_cache_home(caller_cache_home);
    st = tgc_session_create(g, "gpu0", &o, d, &s);
    use_cache_home(cache_home);
    if (st != TGC_OK) { /* no OpenCL device */
        CU_ASSERT_FALSE(tgc_test_has_opencl_device());
        tgc_graph_free(g);
        tgc_diags_free(d);
        return;
    }
    float xv[64];
    for (int i = 0; i < 64; i++) xv[i] = (float)(i - 32) / 16.0f;
    tgc_tensor *x = NULL, *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){64}, xv, &x), TGC_OK);
    const char *names[] = {"x"};
    st = tgc_session_run(s, 1, names, &x, &y, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL(st, TGC_OK);
    if (y != NULL) {
        const float *got = tgc_tensor_data(y);
        for (int i = 0; i < 64; i++) CU_ASSERT(fabs(got[i] - tanh((double)xv[i] * c)) <= 1e-6);
    }
    tgc_tensor_release(y);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* ---- The disk cache ------------------------------------------------------------------ */

/* A program no other case compiles: x * P + 1 through Tanh, Softsign. */
static tgc_jit_program cache_program(float scale) {
    tgc_jit_program p;
    memset(&p, 0, sizeof p);
    p.n_inputs = 2;
    p.n_steps = 3;
    p.scalar[1] = true;
    p.steps[0] = (tgc_jit_step){.row = TGC_EW_Mul, .a = 0, .b = 1};
    p.steps[1] = (tgc_jit_step){.row = TGC_EW_Tanh, .a = 2, .b = -1};
    p.steps[2] = (tgc_jit_step){.row = TGC_EW_HardSigmoid, .a = 3, .b = -1, .p = {scale, 0.5f, 0.0f}};
    return p;
}

/* In a child process: compiles or loads the program, checks the kernel's
 * values against the row loops, and exits with 10 * disk_loads +
 * compiled (+ 100 when rejected files were seen), 99 on a wrong value. */
static int child_run(float scale) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tgc_jit_stats s0 = tgc_jit_get_stats(); /* the parent's, inherited */
        tgc_jit_program p = cache_program(scale);
        const tgc_ew_loops *loops = tgc_cpu_ew_loops();
        char err[256];
        tgc_jit_fused_fn fn = tgc_jit_fused_kernel(&p, loops->lanes, err, sizeof err);
        if (fn == NULL) _exit(98);
        static float x[N], t[N], want[N], got[N];
        fill_values(x, N, 5);
        float c = 0.3f;
        tgc_ew_params none = {0}, hs = {0};
        hs.f[0] = scale;
        hs.f[1] = 0.5f;
        loops->binary[TGC_EW_Mul][TGC_FLOAT32](N, x, 1, &c, 0, t, &none);
        loops->unary[TGC_EW_Tanh][TGC_FLOAT32](N, t, t, &none);
        loops->unary[TGC_EW_HardSigmoid][TGC_FLOAT32](N, t, want, &hs);
        const float *in[2] = {x, &c};
        fn(N / loops->lanes, in, got);
        if (memcmp(want, got, sizeof got) != 0) _exit(99);
        tgc_jit_stats s = tgc_jit_get_stats();
        _exit((int)(10 * (s.disk_loads - s0.disk_loads) + (s.compiled - s0.compiled) +
                    (s.disk_rejected > s0.disk_rejected ? 100 : 0)));
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

/* The one cache file in the scratch cache, into path. */
static bool cache_file(char *path, size_t size) {
    char dir[128];
    snprintf(dir, sizeof dir, "%s/tgc/jit", cache_home);
    DIR *d = opendir(dir);
    if (d == NULL) return false;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".o") != NULL && found++ == 0 && strlen(dir) + strlen(e->d_name) + 2 <= size) {
            strcpy(path, dir);
            strcat(path, "/");
            strcat(path, e->d_name);
        }
    closedir(d);
    return found == 1;
}

static void remove_cache_files(void) {
    char dir[128], path[512];
    snprintf(dir, sizeof dir, "%s/tgc/jit", cache_home);
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strlen(dir) + strlen(e->d_name) + 2 <= sizeof path) {
            strcpy(path, dir);
            strcat(path, "/");
            strcat(path, e->d_name);
            remove(path);
        }
    closedir(d);
}

static void test_disk_cache(void) {
    if (!jit_or_notice()) return;
    remove_cache_files();
    int rc = child_run(0.25f);
    CU_ASSERT_EQUAL(rc, 1); /* compiled, stored */
    if (rc != 1) fprintf(stderr, "\n  the first child: %d\n", rc);
    CU_ASSERT_EQUAL(child_run(0.25f), 10); /* a second process loads it */
    char path[256];
    CU_ASSERT_FATAL(cache_file(path, sizeof path));

    /* truncated: rebuilt and replaced, then loaded again */
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_FATAL(f != NULL);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(truncate(path, size / 2), 0);
    CU_ASSERT_EQUAL(child_run(0.25f), 101);
    CU_ASSERT_EQUAL(child_run(0.25f), 10);

    /* a byte of the object flipped: the checksum catches it */
    f = fopen(path, "r+b");
    CU_ASSERT_FATAL(f != NULL);
    fseek(f, size - 40, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, size - 40, SEEK_SET);
    fputc(ch ^ 0x5a, f);
    fclose(f);
    CU_ASSERT_EQUAL(child_run(0.25f), 101);

    /* another key's sound record under this name: not trusted */
    char mine[256];
    snprintf(mine, sizeof mine, "%s", path);
    CU_ASSERT_EQUAL(rename(mine, "/tmp/tgc_jit_test_keep.o"), 0);
    CU_ASSERT_EQUAL(child_run(0.125f), 1); /* another program's record */
    char other[256];
    CU_ASSERT_FATAL(cache_file(other, sizeof other));
    CU_ASSERT_EQUAL(rename(other, mine), 0);
    CU_ASSERT_EQUAL(child_run(0.25f), 101);
    remove("/tmp/tgc_jit_test_keep.o");

    /* garbage of any length */
    f = fopen(mine, "wb");
    CU_ASSERT_FATAL(f != NULL);
    fputs("TGCJIT01 not a record", f);
    fclose(f);
    CU_ASSERT_EQUAL(child_run(0.25f), 101);
    CU_ASSERT_EQUAL(child_run(0.25f), 10);
    remove_cache_files();
}

/* Read when a session or context is made; here, without one, by hand. */
static void test_jit_off(void) {
    setenv("TGC_JIT", "0", 1);
    tgc_settings_read();
    tgc_jit_program p = cache_program(0.5f);
    char err[64] = "x";
    CU_ASSERT_PTR_NULL(tgc_jit_fused_kernel(&p, tgc_cpu_ew_loops()->lanes, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT(!tgc_jit_enabled());
    unsetenv("TGC_JIT");
    tgc_settings_read();
}

static void test_bad_program(void) {
    if (!jit_or_notice()) return;
    tgc_jit_program p = cache_program(0.5f);
    p.steps[1].a = 7; /* a step reading a later result */
    char err[256] = "";
    CU_ASSERT_PTR_NULL(tgc_jit_fused_kernel(&p, tgc_cpu_ew_loops()->lanes, err, sizeof err));
    CU_ASSERT(strstr(err, "step 1") != NULL);
}

static void setup_cache_home(void) {
    const char *caller = getenv("XDG_CACHE_HOME");
    if (caller != NULL && strlen(caller) < sizeof caller_cache_home_buf) {
        strcpy(caller_cache_home_buf, caller);
        caller_cache_home = caller_cache_home_buf;
    }
    snprintf(cache_home, sizeof cache_home, "/tmp/tgc_jit_test_XXXXXX");
    if (mkdtemp(cache_home) == NULL) abort();
    use_cache_home(cache_home);
}

static void remove_cache_home(void) {
    char dir[128];
    remove_cache_files();
    snprintf(dir, sizeof dir, "%s/tgc/jit", cache_home);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/tgc", cache_home);
    rmdir(dir);
    rmdir(cache_home);
}

int main(void) {
    static const tgc_test_case cases[] = {
        {"every float row's expression parses", test_every_row_parses},
        {"parse: precedence, shared subtrees", test_parse_shapes},
        {"parse: errors", test_parse_errors},
        {"every row: JIT bits = loop bits", test_rows_match_loops},
        {"a session's groups: JIT = interpreter = unfused", test_session_bits},
        {"tiering up after TGC_JIT_AFTER_US of interpreted runs", test_tier_up},
        {"a group over an empty tensor", test_empty_group},
        {"the JIT beside the OpenCL driver's compiler", test_beside_opencl_compiler},
        {"disk cache: reuse, truncated, corrupt, foreign", test_disk_cache},
        {"TGC_JIT=0", test_jit_off},
        {"a bad program is refused", test_bad_program},
        {NULL, NULL},
    };
    setup_cache_home();
    int rc = tgc_test_run("cpu_jit", cases);
    remove_cache_home();
    return rc;
}
