/* Elementwise throughput on the cpu (issue 20): every row of
 * graph/elementwise.def, every dtype of its class, run through the public
 * API (a tgc/1 graph from YAML text, a session on "cpu" with cpu0=T
 * threads, tgc_session_run) as a chain of 8 identical ops:
 *     unary         y1 = Op(x), y2 = Op(y1), ... y8 = Op(y7)
 *     Clip          the same, min and max scalar initializers
 *     binary        y_{k+1} = Op(y_k, c), c a second graph input of the
 *                   same shape as x (fed: host memory, no copy)
 *     comparisons   (bool output: no chain) 8 independent ops
 *                   z_k = Op(x, s_k) on the same x, s_k 8 different scalar
 *                   initializers, all 8 outputs fetched
 * on 2^16, 2^20 and 2^24 elements, with inputs in each op's domain (see
 * op_domain: the chains of Log, Acosh, Exp and Cosh still leave it after a
 * few ops, to -inf/NaN/inf; every other chain stays finite).
 *
 * Per-op time: a run has fixed costs (feeds, the output's copy into a new
 * host tensor, scheduling) that a chain of 8 would spread over its ops, so
 * each case also runs a chain of 1 and
 *     per op = (median(chain of 8) - median(chain of 1)) / 7
 * (for comparisons this includes fetching one bool output per op). Medians
 * of R runs each after one warm-up, the chains and thread counts
 * interleaved run by run. Beside it: memcpy of the same bytes (x's size)
 * from one buffer into another, split over the same number of threads (a
 * pool as the device's), and the ratio to tgc's own Relu of the same dtype,
 * size and threads (Relu is always measured first; "-" for dtypes Relu
 * lacks). The outputs at every thread count must be bitwise identical: any
 * mismatch is printed with MISMATCH and the exit status is 1.
 *
 * Usage: bench_elementwise [--ops LIST] [--dtypes LIST] [--sizes LIST]
 *            [--threads LIST] [--repeat N] [--csv] [--list] [--no-ref]
 *   LIST is comma-separated; a size <= 40 means 2^size (--sizes 16,20,24).
 *   --repeat N: runs per median (default 7; fewer, down to 3, where a
 *   case's runs would take over ~0.5 s). --csv: machine-readable rows
 *   (bench/peers/ew_chains.py). --list: each selected op and dtype's
 *   graph kind and input ranges, one line each, and exit. --no-ref: skip
 *   the Relu reference unless --ops names Relu (xRelu is then "-"). */
#include "devices/cpu/ew.h"
#include "graph/elementwise.h"
#include "support/half.h"
#include "support/parallel_for.h"
#include "support/thread_pool.h"
#include "tgc.h"

#include "bench_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define CHAIN 8
#define MAX_LIST 16
#define BUDGET_S 0.5 /* runs of one case past this cut the repeats (not below 3) */

/* ---- Options -------------------------------------------------------------- */

static const char *opt_ops, *opt_dtypes;
static int64_t sizes[MAX_LIST] = {(int64_t)1 << 16, (int64_t)1 << 20, (int64_t)1 << 24};
static int n_sizes = 3;
static int threads[MAX_LIST] = {1, 2};
static int n_threads = 2;
static int opt_repeat = 7;
static bool opt_csv, opt_list, opt_no_ref;

/* True when `name` is in the comma-separated `list` (NULL: everything). */
static bool in_list(const char *list, const char *name) {
    if (list == NULL) return true;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && strncasecmp(p, name, len) == 0) return true;
        if (e == NULL) break;
        p = e + 1;
    }
    return false;
}

static int parse_ints(const char *s, int64_t *out) {
    int n = 0;
    for (const char *p = s; *p && n < MAX_LIST;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v <= 0) return -1;
        out[n++] = v;
        if (*end == 0) break;
        if (*end != ',') return -1;
        p = end + 1;
    }
    return n;
}

static void usage(void) {
    fprintf(stderr, "usage: bench_elementwise [--ops LIST] [--dtypes LIST] [--sizes LIST] [--threads LIST]\n"
                    "                         [--repeat N] [--csv] [--list] [--no-ref]\n"
                    "  a size <= 40 means 2^size; defaults: all ops, all dtypes, 16,20,24, threads 1,2, repeat 7\n");
    exit(2);
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--csv") == 0) { opt_csv = true; continue; }
        if (strcmp(a, "--list") == 0) { opt_list = true; continue; }
        if (strcmp(a, "--no-ref") == 0) { opt_no_ref = true; continue; }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || v == NULL) usage();
        i++;
        if (strcmp(a, "--ops") == 0) {
            opt_ops = v;
        } else if (strcmp(a, "--dtypes") == 0) {
            opt_dtypes = v;
        } else if (strcmp(a, "--sizes") == 0) {
            if ((n_sizes = parse_ints(v, sizes)) <= 0) usage();
            for (int k = 0; k < n_sizes; k++)
                if (sizes[k] <= 40) sizes[k] = (int64_t)1 << sizes[k];
        } else if (strcmp(a, "--threads") == 0) {
            int64_t t[MAX_LIST];
            if ((n_threads = parse_ints(v, t)) <= 0) usage();
            for (int k = 0; k < n_threads; k++) threads[k] = (int)t[k];
        } else if (strcmp(a, "--repeat") == 0) {
            if ((opt_repeat = atoi(v)) < 1) usage();
        } else {
            usage();
        }
    }
}

/* ---- Inputs in each op's domain ------------------------------------------ */

enum kind { K_UNARY, K_CLIP, K_BINARY, K_COMPARE };
static const char *const kind_names[] = {"unary", "clip", "binary", "compare"};

typedef struct domain {
    double xlo, xhi; /* x uniform in [xlo, xhi] ... */
    bool xsign;      /* ... times a random sign */
    double clo, chi; /* binary: c likewise */
    bool csign;
    double s[CHAIN]; /* Clip: s[0] min, s[1] max; comparisons: the 8 scalars */
} domain;

static bool is_float(tgc_dtype t) { return t == TGC_FLOAT32 || t == TGC_FLOAT16; }

static enum kind kind_of(const tgc_ew_row *r) {
    if (r->bool_out) return K_COMPARE;
    if (strcmp(r->op, "Clip") == 0) return K_CLIP;
    return r->arity == 2 ? K_BINARY : K_UNARY;
}

static void op_domain(const tgc_ew_row *r, tgc_dtype dt, domain *d) {
    const char *op = r->op;
#define IS(name) (strcmp(op, name) == 0)
    memset(d, 0, sizeof *d);
    if (is_float(dt)) {
        bool h = dt == TGC_FLOAT16;
        *d = (domain){-4, 4, false, -1, 1, false, {-2, 2}};
        if (IS("Reciprocal")) d->xlo = 0.5, d->xhi = 2, d->xsign = true;
        if (IS("Sqrt")) d->xlo = 0.01, d->xhi = 100;
        if (IS("Log") || IS("Acosh")) d->xlo = h ? 10 : 1e3, d->xhi = h ? 6e4 : 1e30;
        if (IS("Exp") || IS("Tan")) d->xlo = -1, d->xhi = 1;
        if (IS("Asin") || IS("Sinh") || IS("Cosh")) d->xlo = -0.5, d->xhi = 0.5;
        if (IS("Acos")) d->xlo = 0.735, d->xhi = 0.743; /* about acos's fixed point: stays in [0, 1] */
        if (IS("Atanh")) d->xlo = -0.25, d->xhi = 0.25;
        if (IS("Mul") || IS("Div")) d->clo = 0.9, d->chi = 1.1;
        if (IS("Pow")) d->xlo = 0.5, d->xhi = 2, d->clo = 0.9, d->chi = 1.1;
        if (IS("Min") || IS("Max")) d->clo = -4, d->chi = 4;
        for (int k = 0; k < CHAIN && r->bool_out; k++) d->s[k] = -1.4 + 0.4 * k;
    } else if (dt == TGC_UINT8) {
        *d = (domain){0, 255, false, 0, 255, false, {10, 200}};
        if (IS("Mul")) d->clo = 0, d->chi = 3;
        if (IS("Div")) d->clo = 1, d->chi = 7;
        for (int k = 0; k < CHAIN && r->bool_out; k++) d->s[k] = 20 + 30 * k;
    } else if (dt == TGC_BOOL) {
        *d = (domain){0, 1, false, 0, 1, false, {0}};
        for (int k = 0; k < CHAIN; k++) d->s[k] = k & 1;
    } else { /* int32, int64 */
        *d = (domain){-1000, 1000, false, -100, 100, false, {-500, 500}};
        if (IS("Mul")) d->clo = -3, d->chi = 3;
        if (IS("Div")) d->clo = 1, d->chi = 7, d->csign = true; /* never zero */
        if (IS("Min") || IS("Max")) d->clo = -1000, d->chi = 1000;
        for (int k = 0; k < CHAIN && r->bool_out; k++) d->s[k] = -400 + 100 * k;
    }
#undef IS
}

static uint64_t rng_state;
static double rnd01(void) { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* A new tensor [n] of dt, uniform in [lo, hi] (integers: rounded), times a
 * random sign if `sign`. */
static tgc_tensor *make_input(tgc_dtype dt, int64_t n, double lo, double hi, bool sign, uint64_t seed) {
    tgc_tensor *t = NULL;
    if (tgc_tensor_create(dt, 1, &n, NULL, &t) != TGC_OK) {
        fprintf(stderr, "bench_elementwise: out of memory for an input of %lld elements\n", (long long)n);
        exit(1);
    }
    void *p = (void *)tgc_tensor_data(t);
    rng_state = seed;
    for (int64_t i = 0; i < n; i++) {
        double v = lo + (hi - lo) * rnd01();
        if (sign && rnd01() < 0.5) v = -v;
        switch (dt) {
        case TGC_FLOAT32: ((float *)p)[i] = (float)v; break;
        case TGC_FLOAT16: ((uint16_t *)p)[i] = tgc_float_to_half((float)v); break;
        case TGC_INT32: ((int32_t *)p)[i] = (int32_t)llround(v); break;
        case TGC_INT64: ((int64_t *)p)[i] = (int64_t)llround(v); break;
        case TGC_UINT8: ((uint8_t *)p)[i] = (uint8_t)llround(v); break;
        case TGC_BOOL: ((uint8_t *)p)[i] = rnd01() < 0.5; break;
        default: break;
        }
    }
    return t;
}

/* ---- Graphs ------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->len) {
            b->len += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 64;
        if ((b->p = realloc(b->p, b->cap)) == NULL) exit(1);
    }
}

static void scalar_literal(sbuf *b, tgc_dtype dt, double v) {
    if (dt == TGC_BOOL) sb_printf(b, "%s", v != 0 ? "true" : "false");
    else if (is_float(dt)) sb_printf(b, "%.9g", v);
    else sb_printf(b, "%lld", (long long)llround(v));
}

/* The tgc/1 text of a chain of `len` ops (comparisons: `len` independent
 * ones) on [n] elements. */
static char *graph_text(const tgc_ew_row *r, tgc_dtype dt, int64_t n, int len, const domain *d) {
    sbuf b = {0};
    const char *dn = tgc_dtype_name(dt);
    enum kind k = kind_of(r);
    sb_printf(&b, "format: tgc/1\nname: ew_%s_%s\ninputs:\n  - {name: x, dtype: %s, shape: [%lld]}\n", r->op, dn, dn,
              (long long)n);
    if (k == K_BINARY) sb_printf(&b, "  - {name: c, dtype: %s, shape: [%lld]}\n", dn, (long long)n);
    sb_printf(&b, "outputs: [");
    if (k == K_COMPARE)
        for (int i = 0; i < len; i++) sb_printf(&b, "%sz%d", i ? ", " : "", i);
    else
        sb_printf(&b, "y%d", len);
    sb_printf(&b, "]\n");
    if (k == K_CLIP || k == K_COMPARE) {
        sb_printf(&b, "initializers:\n");
        for (int i = 0; i < (k == K_CLIP ? 2 : len); i++) {
            sb_printf(&b, "  - {name: s%d, dtype: %s, shape: [], values: [", i, dn);
            scalar_literal(&b, dt, d->s[i]);
            sb_printf(&b, "]}\n");
        }
    }
    sb_printf(&b, "nodes:\n");
    for (int i = 0; i < len; i++) {
        char prev[16];
        snprintf(prev, sizeof prev, i == 0 ? "x" : "y%d", i);
        switch (k) {
        case K_UNARY: sb_printf(&b, "  - {name: y%d, op: %s, inputs: [%s]}\n", i + 1, r->op, prev); break;
        case K_CLIP: sb_printf(&b, "  - {name: y%d, op: Clip, inputs: [%s, s0, s1]}\n", i + 1, prev); break;
        case K_BINARY: sb_printf(&b, "  - {name: y%d, op: %s, inputs: [%s, c]}\n", i + 1, r->op, prev); break;
        case K_COMPARE: sb_printf(&b, "  - {name: z%d, op: %s, inputs: [x, s%d]}\n", i, r->op, i); break;
        }
    }
    return b.p;
}

/* ---- Timing ---------------------------------------------------------------- */

typedef struct runner {
    tgc_session *s;
    int n_feeds, n_outs;
    const char *names[2];
    tgc_tensor *feeds[2];
    tgc_tensor *outs[CHAIN];
} runner;

static tgc_diags *diags;

/* One run; seconds, or -1 on failure (the diagnostics printed). Keeps the
 * outputs in r->outs when `keep`, else releases them. */
static double run_once(runner *r, bool keep) {
    double t0 = bench_now_s();
    tgc_status st = tgc_session_run(r->s, r->n_feeds, r->names, r->feeds, r->outs, diags);
    double t = bench_now_s() - t0;
    if (st != TGC_OK) {
        tgc_diags_print(diags, stderr);
        return -1;
    }
    if (!keep)
        for (int i = 0; i < r->n_outs; i++) tgc_tensor_release(r->outs[i]), r->outs[i] = NULL;
    return t;
}

static void release_outs(runner *r) {
    for (int i = 0; i < r->n_outs; i++) tgc_tensor_release(r->outs[i]), r->outs[i] = NULL;
}

/* memcpy of `bytes` from one buffer into another, over `nt` threads (a pool
 * of nt - 1 workers and the caller, pieces of 1 MiB at most); median ns per
 * element of `esize` bytes, cached per (bytes, threads). */
typedef struct copy_job {
    char *dst;
    const char *src;
    size_t bytes, piece;
} copy_job;

static void copy_piece(void *arg, int64_t i, int slot) {
    (void)slot;
    const copy_job *j = arg;
    size_t lo = (size_t)i * j->piece, len = lo + j->piece < j->bytes ? j->piece : j->bytes - lo;
    memcpy(j->dst + lo, j->src + lo, len);
}

static double memcpy_ns(size_t bytes, size_t esize, int nt) {
    typedef struct copy_figure {
        size_t bytes;
        int nt;
        double ns;
    } copy_figure;
    static copy_figure cache[64];
    static int n_cache;
    for (int i = 0; i < n_cache; i++)
        if (cache[i].bytes == bytes && cache[i].nt == nt) return cache[i].ns * (double)esize;
    tgc_thread_pool *pool = NULL;
    if (nt > 1 && tgc_thread_pool_create(nt - 1, &pool) != TGC_OK) return NAN;
    /* Page-aligned: glibc's heap would put dst 16 bytes past a 4 KiB
     * multiple from src, and 4K aliasing then slows memcpy several-fold. */
    size_t alloc = (bytes + 4095) & ~(size_t)4095;
    char *src = aligned_alloc(4096, alloc), *dst = aligned_alloc(4096, alloc);
    if (src == NULL || dst == NULL) exit(1);
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    size_t piece = bytes / (size_t)(nt * 4) + 1;
    if (piece > ((size_t)1 << 20)) piece = (size_t)1 << 20;
    piece = (piece + 63) & ~(size_t)63;
    copy_job j = {dst, src, bytes, piece};
    int64_t n_pieces = (int64_t)((bytes + piece - 1) / piece);
    double times[31];
    int reps = bytes >= ((size_t)1 << 26) ? 9 : 31;
    tgc_parallel_for(pool, n_pieces, copy_piece, &j);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now_s();
        tgc_parallel_for(pool, n_pieces, copy_piece, &j);
        times[r] = bench_now_s() - t0;
    }
    double per_byte = bench_median(times, reps) * 1e9 / (double)bytes;
    free(src);
    free(dst);
    tgc_thread_pool_free(pool);
    if (n_cache < 64) cache[n_cache++] = (copy_figure){bytes, nt, per_byte};
    return per_byte * (double)esize;
}

/* ---- Main ----------------------------------------------------------------- */

/* Relu's ns/elem per dtype, size and thread count (the ratio column). */
static double relu_ns[TGC_DTYPE_COUNT][MAX_LIST][MAX_LIST];
static int failures, mismatches;

static void print_header(void) {
    struct utsname u;
    uname(&u);
    char model[600] = "?", load[128] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                snprintf(model, sizeof model, "%s", c ? c + 2 : line);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        fclose(f);
    }
    if ((f = fopen("/proc/loadavg", "r"))) {
        if (fgets(load, sizeof load, f)) load[strcspn(load, "\n")] = 0;
        fclose(f);
    }
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", localtime(&now));
    const char *isa_env = getenv("TGC_CPU_ISA");
    printf("# bench_elementwise %s, %s %s %s, %ld cores (%s)\n", date, u.sysname, u.release, u.machine,
           sysconf(_SC_NPROCESSORS_ONLN), model);
    printf("# load average: %s\n", load);
    printf("# ISA: %s (%d float32 lanes)%s%s\n", tgc_cpu_ew_loops()->isa, tgc_cpu_ew_loops()->lanes,
           isa_env ? ", TGC_CPU_ISA=" : "", isa_env ? isa_env : "");
    printf("# ns/elem per op = (median chain of 8 - median chain of 1) / 7 / elements; binary ops: c is a\n"
           "# fed input of x's shape; comparisons: 8 independent ops on x, each with its own scalar, each\n"
           "# output fetched; memcpy: the same bytes as x, same threads; xRelu: / Relu (same dtype, size,\n"
           "# threads); repeats %d (down to 3 where runs would pass %.1f s)\n",
           opt_repeat, BUDGET_S);
    if (opt_csv)
        printf("op,dtype,elements,threads,ns_per_elem,memcpy_ns_per_elem,ratio_relu,chain8_ms,chain1_ms,reps,"
               "bitwise\n");
    else
        printf("%-16s %-8s %9s %3s %9s %9s %7s %10s %10s %4s\n", "op", "dtype", "elements", "thr", "ns/elem",
               "memcpy", "xRelu", "chain8 ms", "chain1 ms", "reps");
    fflush(stdout);
}

static void bench_case(const tgc_ew_row *r, tgc_dtype dt, int si) {
    int64_t n = sizes[si];
    domain d;
    op_domain(r, dt, &d);
    enum kind k = kind_of(r);
    uint64_t seed = 1234 + 7919u * (uint64_t)tgc_ew_id(r) + 31u * (uint64_t)dt;
    tgc_tensor *x = make_input(dt, n, d.xlo, d.xhi, d.xsign, seed);
    tgc_tensor *c = k == K_BINARY ? make_input(dt, n, d.clo, d.chi, d.csign, seed + 1) : NULL;
    double mcs[MAX_LIST]; /* memcpy before the sessions start their pools */
    for (int ti = 0; ti < n_threads; ti++) mcs[ti] = memcpy_ns((size_t)n * tgc_dtype_size(dt), tgc_dtype_size(dt), threads[ti]);
    tgc_graph *g[2] = {NULL, NULL};
    int lens[2] = {CHAIN, 1};
    runner run[2][MAX_LIST];
    memset(run, 0, sizeof run);
    bool ok = true;
    for (int gi = 0; gi < 2 && ok; gi++) {
        char *text = graph_text(r, dt, n, lens[gi], &d);
        if (tgc_graph_load_string(text, strlen(text), "bench_elementwise", NULL, diags, &g[gi]) != TGC_OK) {
            tgc_diags_print(diags, stderr);
            fprintf(stderr, "%s", text);
            ok = false;
        }
        free(text);
        for (int ti = 0; ti < n_threads && ok; ti++) {
            char spec[32];
            snprintf(spec, sizeof spec, "cpu0=%d", threads[ti]);
            tgc_session_options o = {.threads = spec};
            runner *rn = &run[gi][ti];
            if (tgc_session_create(g[gi], "cpu", &o, diags, &rn->s) != TGC_OK) {
                tgc_diags_print(diags, stderr);
                ok = false;
                break;
            }
            rn->n_feeds = c ? 2 : 1;
            rn->names[0] = "x", rn->names[1] = "c";
            rn->feeds[0] = x, rn->feeds[1] = c;
            rn->n_outs = tgc_session_output_count(rn->s);
        }
    }
    /* Warm-up: one run of each, outputs kept for the bitwise check. */
    double est = 0;
    for (int gi = 0; gi < 2 && ok; gi++)
        for (int ti = 0; ti < n_threads && ok; ti++) {
            double t = run_once(&run[gi][ti], true);
            if (t < 0) ok = false;
            est += t;
        }
    bool same = true;
    for (int gi = 0; gi < 2 && ok; gi++)
        for (int ti = 1; ti < n_threads; ti++)
            for (int o = 0; o < run[gi][0].n_outs; o++) {
                const tgc_tensor *a = run[gi][0].outs[o], *b = run[gi][ti].outs[o];
                size_t bytes = (size_t)tgc_tensor_numel(a) * tgc_dtype_size(tgc_tensor_dtype(a));
                if (tgc_tensor_numel(a) != tgc_tensor_numel(b) ||
                    memcmp(tgc_tensor_data(a), tgc_tensor_data(b), bytes) != 0) {
                    same = false;
                    fprintf(stderr,
                            "bench_elementwise: MISMATCH: %s %s %lld elements, chain of %d, output %d: %d threads "
                            "and %d threads differ\n",
                            r->op, tgc_dtype_name(dt), (long long)n, lens[gi], o, threads[0], threads[ti]);
                }
            }
    if (!same) mismatches++;
    for (int gi = 0; gi < 2; gi++)
        for (int ti = 0; ti < n_threads; ti++) release_outs(&run[gi][ti]);

    int reps = opt_repeat;
    if (ok && est * reps > BUDGET_S) reps = (int)(BUDGET_S / est) < 3 ? 3 : (int)(BUDGET_S / est);
    double *times = calloc((size_t)(2 * n_threads * reps), sizeof *times);
    for (int rep = 0; rep < reps && ok; rep++)
        for (int ti = 0; ti < n_threads && ok; ti++)
            for (int gi = 0; gi < 2 && ok; gi++) {
                double t = run_once(&run[(gi + rep) & 1][ti], false); /* alternate which chain goes first */
                if (t < 0) ok = false;
                times[(((gi + rep) & 1) * n_threads + ti) * reps + rep] = t;
            }
    for (int ti = 0; ti < n_threads; ti++) {
        int nt = threads[ti];
        if (!ok) {
            failures++;
            printf(opt_csv ? "%s,%s,%lld,%d,,,,,,,FAILED\n" : "%-16s %-8s %9lld %3d   FAILED\n", r->op,
                   tgc_dtype_name(dt), (long long)n, nt);
            continue;
        }
        double m8 = bench_median(times + (0 * n_threads + ti) * reps, reps);
        double m1 = bench_median(times + (1 * n_threads + ti) * reps, reps);
        double ns = (m8 - m1) / (CHAIN - 1) / (double)n * 1e9;
        double mc = mcs[ti];
        if (strcmp(r->op, "Relu") == 0) relu_ns[dt][si][ti] = ns;
        double rel = relu_ns[dt][si][ti] > 0 ? ns / relu_ns[dt][si][ti] : NAN;
        char relbuf[16] = "-";
        if (!isnan(rel)) snprintf(relbuf, sizeof relbuf, "%.2f", rel);
        if (opt_csv)
            printf("%s,%s,%lld,%d,%.4f,%.4f,%s,%.4f,%.4f,%d,%s\n", r->op, tgc_dtype_name(dt), (long long)n, nt, ns,
                   mc, isnan(rel) ? "" : relbuf, m8 * 1e3, m1 * 1e3, reps, same ? "same" : "MISMATCH");
        else
            printf("%-16s %-8s %9lld %3d %9.3f %9.3f %7s %10.3f %10.3f %4d%s\n", r->op, tgc_dtype_name(dt),
                   (long long)n, nt, ns, mc, relbuf, m8 * 1e3, m1 * 1e3, reps, same ? "" : "  MISMATCH");
    }
    fflush(stdout);
    free(times);
    for (int gi = 0; gi < 2; gi++) {
        for (int ti = 0; ti < n_threads; ti++) tgc_session_free(run[gi][ti].s);
        tgc_graph_free(g[gi]);
    }
    tgc_tensor_release(x);
    tgc_tensor_release(c);
}

static void list_case(const tgc_ew_row *r, tgc_dtype dt) {
    domain d;
    op_domain(r, dt, &d);
    enum kind k = kind_of(r);
    printf("%s %s %s %.9g %.9g %d %.9g %.9g %d", r->op, tgc_dtype_name(dt), kind_names[k], d.xlo, d.xhi, d.xsign,
           d.clo, d.chi, d.csign);
    int ns = k == K_CLIP ? 2 : k == K_COMPARE ? CHAIN : 0;
    for (int i = 0; i < ns; i++) printf(" %.9g", d.s[i]);
    printf("\n");
}

/* Rows the chains here cannot set up yet: a bool output of a float input
 * (IsNaN, IsInf) and integer or word attributes (Mod's fmod, which floats
 * need as 1; BitShift's required direction). */
static bool chainable(const tgc_ew_row *r) {
    if (r->arity == 1 && r->bool_out) return false;
    for (int k = 0; k < r->n_attrs; k++)
        if (r->attr_kinds[k] != TGC_EW_ATTR_FLOAT) return false;
    return true;
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    diags = tgc_diags_create();
    if (diags == NULL) return 1;
    /* Relu first: the ratio column needs it. */
    int order[TGC_EW_COUNT], n_order = 0;
    bool relu_wanted = in_list(opt_ops, "Relu");
    if (relu_wanted || !opt_no_ref) order[n_order++] = TGC_EW_Relu;
    for (int i = 0; i < TGC_EW_COUNT; i++)
        if (i != TGC_EW_Relu && chainable(&tgc_ew_rows[i]) && in_list(opt_ops, tgc_ew_rows[i].op))
            order[n_order++] = i;
    if (!opt_list) print_header();
    int cases = 0;
    for (int oi = 0; oi < n_order; oi++) {
        const tgc_ew_row *r = &tgc_ew_rows[order[oi]];
        for (int dt = 0; dt < TGC_DTYPE_COUNT; dt++) {
            if (!(r->dtypes & (1u << dt)) || !in_list(opt_dtypes, tgc_dtype_name((tgc_dtype)dt))) continue;
            if (opt_list) {
                if (order[oi] != TGC_EW_Relu || relu_wanted) list_case(r, (tgc_dtype)dt);
                continue;
            }
            for (int si = 0; si < n_sizes; si++) bench_case(r, (tgc_dtype)dt, si);
            cases++;
        }
    }
    if (opt_list) return 0;
    if (cases == 0) fprintf(stderr, "bench_elementwise: no op and dtype selected\n");
    char load[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(load, sizeof load, f)) load[strcspn(load, "\n")] = 0;
        fclose(f);
    }
    printf("# load average at the end: %s\n", load);
    if (mismatches) printf("# MISMATCH: %d cases differ between thread counts\n", mismatches);
    if (failures) printf("# FAILED: %d runs\n", failures);
    tgc_diags_free(diags);
    return mismatches || failures ? 1 : 0;
}
