/* tgc-conformance: ONNX's backend test data (Debian's libonnx-testdata)
 * through tgc, as a user of the public API: each model.onnx is imported
 * (tgc_onnx_import, into a temporary directory), loaded, run on cpu and on
 * cpu,gpu0 (when a gpu0 exists) over every test_data_set_*, and each
 * output compared with output_K.pb by ONNX's backend test rule,
 * numpy.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-7):
 * |actual - expected| <= atol + rtol * |expected| elementwise, NaN equal to
 * NaN, dtype and shape equal (string tensors: every element equal). A model counts as
 *     passed       every output of every data set matches
 *     failed       a mismatch, a run error, or an import/load/session error
 *                  other than "unsupported"
 *     unsupported  the import refused it (an op, attribute or dtype tgc lacks)
 *     skipped      its model.onnx is larger than --max-mb
 * Models run in worker processes (--jobs) so that a crash or a model past
 * --timeout is one failure, not the end of the run. The table groups
 * node/test_<op>_* models by their op (the model's op type that the
 * directory is named after), the other suites by suite.
 *
 * Example usage:
 *     tgc-conformance                        # all suites, cpu and gpu0 if present
 *     tgc-conformance --filter node/test_conv --verbose
 *     tgc-conformance --devices cpu --floor tests/onnx/conformance_floor.txt
 *
 * On gpu0 every node carries `device: gpu` (soft placement: a node without
 * a gpu0 kernel falls back to the cpu), since placement would otherwise keep
 * these small test graphs on the host. After the table, a line per gpu
 * list says how many op nodes of the models that passed ran on the gpu and
 * which ops stayed on the cpu by kernel availability. */
#include "tgc.h"
#include "graph/graph.h"
#include "support/dtype_elem.h"
#include "tools/remove_tree.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TGC_ONNX_TESTDATA
#define TGC_ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

#define RTOL 1e-3
#define ATOL 1e-7
#define MAX_DEVICES 2
#define MAX_JOBS 16

static const char *const suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

static const char usage[] =
    "usage: tgc-conformance [--data DIR] [--devices cpu|gpu0|cpu,gpu0] [--filter TEXT]...\n"
    "                       [--jobs N] [--timeout S] [--max-mb M] [--floor FILE] [--markdown] [--compact]\n"
    "                       [--verbose]\n"
    "\n"
    "Imports and runs ONNX's backend test models, compares with their outputs\n"
    "(rtol 1e-3, atol 1e-7, as ONNX's runner) and prints a table per op and the totals.\n"
    "\n"
    "  --data DIR      the test data (default " TGC_ONNX_TESTDATA ")\n"
    "  --devices LIST  cpu, gpu0, or both (default: cpu, and gpu0 when there is one);\n"
    "                  gpu0 runs with --devices cpu,gpu0, every node asking for the gpu\n"
    "                  (soft placement: ops without a gpu0 kernel fall back to the cpu)\n"
    "  --filter TEXT   only models whose SUITE/NAME contains TEXT (repeatable: any)\n"
    "  --jobs N        models run at once, each in a worker process (default 2)\n"
    "  --timeout S     seconds per model before it counts as failed (default 30)\n"
    "  --max-mb M      skip models larger than M MiB (default 64)\n"
    "  --floor FILE    lines 'DEVICE N': exit 1 when fewer than N pass on DEVICE\n"
    "  --markdown      print the table as Markdown\n"
    "  --compact       one row for all the ops that no model imported\n"
    "  --verbose       list unsupported models with the reason, not only failures\n";

typedef enum outcome { PASSED, FAILED, UNSUPPORTED, SKIPPED, N_OUTCOMES } outcome;

typedef struct model {
    char *suite, *name, *dir;
    char *group;
    long bytes;
    bool done[MAX_DEVICES];
    outcome result[MAX_DEVICES];
    char *reason[MAX_DEVICES];
    /* Where the op nodes were placed (gpu lists): nodes on a gpu, all op
     * nodes, and the ops of those left on the cpu ("Op Op ..."). */
    int gpu_nodes[MAX_DEVICES], op_nodes[MAX_DEVICES];
    char *fell_back[MAX_DEVICES];
} model;

typedef struct options {
    const char *data;
    const char *filters[32];
    int n_filters;
    const char *floor;
    int jobs, timeout;
    double max_mb;
    bool markdown, verbose, compact;
    bool want_cpu, want_gpu;
} options;

/* The device lists a model runs on, and their column names. */
static const char *dev_lists[MAX_DEVICES];
static const char *dev_names[MAX_DEVICES];
static int n_devs;

static void *xmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (p == NULL) {
        fputs("tgc-conformance: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

static char *xstrdup(const char *s) {
    char *p = xmalloc(strlen(s) + 1);
    strcpy(p, s);
    return p;
}

static char *xprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The entries of `dir` that start with `prefix`, sorted; NULL-free array of n. */
static char **list_dir(const char *dir, const char *prefix, int *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) return NULL;
    int cap = 16;
    char **out = xmalloc((size_t)cap * sizeof *out);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap *= 2;
            char **grown = realloc(out, (size_t)cap * sizeof *out);
            if (grown == NULL) exit(2);
            out = grown;
        }
        out[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(out, (size_t)*n, sizeof *out, cmp_str);
    return out;
}

static void free_list(char **list, int n) {
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static bool file_exists(const char *path, long *bytes) {
    struct stat st;
    if (stat(path, &st) != 0) return false;
    if (bytes) *bytes = (long)st.st_size;
    return true;
}

/* ---- Grouping ------------------------------------------------------------------- */

/* Lower-case letters and digits of s, nothing else. */
static void squash(const char *s, char *out, size_t size) {
    size_t n = 0;
    for (; *s && n + 1 < size; s++)
        if (isalnum((unsigned char)*s)) out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
}

typedef struct strset {
    char **items;
    int n, cap;
} strset;

static void strset_add(strset *s, const char *v) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->items[i], v) == 0) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        char **grown = realloc(s->items, (size_t)s->cap * sizeof *grown);
        if (grown == NULL) exit(2);
        s->items = grown;
    }
    s->items[s->n++] = xstrdup(v);
}

/* The op of node/test_<op>_...: of `ops`, the one whose squashed name is the
 * longest prefix of the squashed directory name. */
static const char *op_of_test(const char *test, char *const *ops, int n_ops) {
    /* Directory names that abbreviate their op. */
    static const char *const aliases[][2] = {
        {"test_nllloss", "NegativeLogLikelihoodLoss"},
        {"test_sce", "SoftmaxCrossEntropyLoss"},
        {"test_mvn", "MeanVarianceNormalization"},
        {"test_constant_pad", "Pad"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        size_t len = strlen(aliases[i][0]);
        if (strncmp(test, aliases[i][0], len) == 0 && (test[len] == '_' || test[len] == '\0')) return aliases[i][1];
    }
    char t[256], o[256];
    squash(strncmp(test, "test_", 5) == 0 ? test + 5 : test, t, sizeof t);
    const char *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < n_ops; i++) {
        /* GreaterOrEqual's tests are test_greater_equal_*: try the name without "Or" too. */
        for (int variant = 0; variant < 2; variant++) {
            char name[256];
            snprintf(name, sizeof name, "%s", ops[i]);
            char * or = strstr(name, "Or");
            if (variant == 1 && (or == NULL || or == name || !isupper((unsigned char) or [2]))) continue;
            if (variant == 1) memmove(or, or +2, strlen(or +2) + 1);
            squash(name, o, sizeof o);
            size_t len = strlen(o);
            if (len > best_len && strncmp(t, o, len) == 0) {
                best = ops[i];
                best_len = len;
            }
        }
    }
    return best;
}

static void assign_groups(model *models, int n) {
    /* The op types of every node test, to name the expanded ones too. */
    strset all = {0};
    char ***ops = xmalloc((size_t)n * sizeof *ops);
    int *n_ops = xmalloc((size_t)n * sizeof *n_ops);
    for (int i = 0; i < n; i++) {
        if (strcmp(models[i].suite, "node") != 0) continue;
        char *path = xprintf("%s/model.onnx", models[i].dir);
        tgc_diags *d = tgc_diags_create();
        if (tgc_onnx_list(path, TGC_ONNX_OP_TYPES, d, &n_ops[i], &ops[i]) != TGC_OK) n_ops[i] = 0;
        tgc_diags_free(d);
        free(path);
        for (int k = 0; k < n_ops[i]; k++)
            strset_add(&all, ops[i][k]);
    }
    for (int i = 0; i < n; i++) {
        model *m = &models[i];
        if (strcmp(m->suite, "node") == 0) {
            const char *op = op_of_test(m->name, all.items, all.n);
            bool expanded = strstr(m->name, "_expanded") != NULL;
            if (op == NULL)
                m->group = xstrdup(n_ops[i] == 1 ? ops[i][0] : m->name);
            else
                m->group = expanded ? xprintf("%s (expanded)", op) : xstrdup(op);
        } else {
            m->group = xprintf("(%s)", m->suite);
        }
        tgc_onnx_names_free(ops[i], n_ops[i]);
    }
    free_list(all.items, all.n);
    free(ops);
    free(n_ops);
}

/* ---- One model, in a worker ------------------------------------------------------ */

static double value_at(const tgc_tensor *t, int64_t i) {
    tgc_dtype dt = tgc_tensor_dtype(t);
    return dt >= 0 && dt < TGC_DTYPE_COUNT && dt != TGC_STRING ? tgc_elem_as_double(dt, tgc_tensor_data(t), i) : NAN;
}

/* ONNX's backend test data stores bfloat16 tensors as UINT16 bits (numpy
 * has no bfloat16, onnx/backend/test/case/node/cast.py): a uint16 tensor
 * where bfloat16 is meant becomes one (the same bits), in place of *t.
 * False only when memory runs out. */
static bool as_bfloat16(tgc_tensor **t) {
    if (*t == NULL || tgc_tensor_dtype(*t) != TGC_UINT16) return true;
    tgc_tensor *b;
    if (tgc_tensor_create(TGC_BFLOAT16, tgc_tensor_rank(*t), tgc_tensor_dims(*t), tgc_tensor_data(*t), &b) != TGC_OK)
        return false;
    tgc_tensor_release(*t);
    *t = b;
    return true;
}

/* The declared dtype of graph input `name`, or TGC_DTYPE_INVALID. */
static tgc_dtype input_dtype(const tgc_graph *g, const char *name) {
    for (int32_t i = 0; i < g->n_inputs_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) return g->nodes[i].outputs[0].dtype;
    return TGC_DTYPE_INVALID;
}

/* What a value of info `t` is stored as in ONNX's test data: a tensor, a
 * SequenceProto or an OptionalProto. */
static tgc_tensor_kind kind_of_info(const tgc_tensor_info *t) {
    return t->kind & TGC_KIND_OPTIONAL ? TGC_TENSOR_OPTIONAL
           : t->kind == TGC_KIND_SEQUENCE ? TGC_TENSOR_SEQUENCE
                                          : TGC_TENSOR_PLAIN;
}

/* The declared kind and dtype of graph input `name`. */
static tgc_tensor_kind input_kind(const tgc_graph *g, const char *name, tgc_dtype *dtype) {
    for (int32_t i = 0; i < g->n_inputs_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) {
            *dtype = g->nodes[i].outputs[0].dtype;
            return kind_of_info(&g->nodes[i].outputs[0]);
        }
    *dtype = TGC_DTYPE_INVALID;
    return TGC_TENSOR_PLAIN;
}

static bool allclose(const tgc_tensor *got, const tgc_tensor *want, char *why, size_t size);

/* Sequences and optionals: the same kind, length, and each element
 * allclose (an optional holding its value compares as that value). */
static bool allclose_lists(const tgc_tensor *got, const tgc_tensor *want, char *why, size_t size) {
    tgc_tensor_kind gk = tgc_tensor_kind_of(got), wk = tgc_tensor_kind_of(want);
    if (gk == TGC_TENSOR_OPTIONAL && wk != TGC_TENSOR_OPTIONAL && tgc_tensor_list_length(got) == 1) {
        tgc_tensor *e = tgc_tensor_list_at(got, 0);
        bool ok = e != NULL && allclose(e, want, why, size);
        tgc_tensor_release(e);
        return ok;
    }
    if (wk == TGC_TENSOR_OPTIONAL && gk != TGC_TENSOR_OPTIONAL && tgc_tensor_list_length(want) == 1) {
        tgc_tensor *e = tgc_tensor_list_at(want, 0);
        bool ok = e != NULL && allclose(got, e, why, size);
        tgc_tensor_release(e);
        return ok;
    }
    if (gk != wk) {
        static const char *const words[] = {"tensor", "sequence", "optional"};
        snprintf(why, size, "a %s, expected a %s", words[gk], words[wk]);
        return false;
    }
    int64_t n = tgc_tensor_list_length(want);
    if (tgc_tensor_list_length(got) != n) {
        snprintf(why, size, "%lld elements, expected %lld", (long long)tgc_tensor_list_length(got), (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        tgc_tensor *g = tgc_tensor_list_at(got, i), *w = tgc_tensor_list_at(want, i);
        char inner[400] = "";
        bool ok = g != NULL && w != NULL && allclose(g, w, inner, sizeof inner);
        tgc_tensor_release(g);
        tgc_tensor_release(w);
        if (!ok) {
            snprintf(why, size, "element %lld: %s", (long long)i, inner);
            return false;
        }
    }
    return true;
}

static void shape_text(const tgc_tensor *t, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < tgc_tensor_rank(t) && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)tgc_tensor_dims(t)[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

/* Compares like numpy.testing.assert_allclose(got, want, rtol, atol):
 * true, or false with the reason in why. */
static bool allclose(const tgc_tensor *got, const tgc_tensor *want, char *why, size_t size) {
    if (tgc_tensor_kind_of(got) != TGC_TENSOR_PLAIN || tgc_tensor_kind_of(want) != TGC_TENSOR_PLAIN)
        return allclose_lists(got, want, why, size);
    char gs[128], ws[128];
    shape_text(got, gs, sizeof gs);
    shape_text(want, ws, sizeof ws);
    if (tgc_tensor_dtype(got) != tgc_tensor_dtype(want)) {
        snprintf(why, size, "dtype %s, expected %s", tgc_dtype_name(tgc_tensor_dtype(got)),
                 tgc_dtype_name(tgc_tensor_dtype(want)));
        return false;
    }
    if (strcmp(gs, ws) != 0) {
        snprintf(why, size, "shape %s, expected %s", gs, ws);
        return false;
    }
    if (tgc_tensor_dtype(want) == TGC_STRING) { /* strings: exact equality, element by element */
        for (int64_t i = 0; i < tgc_tensor_numel(want); i++)
            if (strcmp(tgc_tensor_string(got, i), tgc_tensor_string(want, i)) != 0) {
                snprintf(why, size, "element %lld is \"%.100s\", expected \"%.100s\"", (long long)i,
                         tgc_tensor_string(got, i), tgc_tensor_string(want, i));
                return false;
            }
        return true;
    }
    int64_t bad = 0, worst_i = -1;
    double worst = 0;
    for (int64_t i = 0; i < tgc_tensor_numel(want); i++) {
        double g = value_at(got, i), w = value_at(want, i);
        if (isnan(g) && isnan(w)) continue;
        if (isinf(w) && g == w) continue;
        double err = fabs(g - w);
        if (!(err <= ATOL + RTOL * fabs(w))) {
            bad++;
            if (!(err <= worst)) {
                worst = err;
                worst_i = i;
            }
        }
    }
    if (bad == 0) return true;
    snprintf(why, size, "%lld of %lld elements differ; worst at flat index %lld: %.7g, expected %.7g", (long long)bad,
             (long long)tgc_tensor_numel(want), (long long)worst_i, value_at(got, worst_i), value_at(want, worst_i));
    return false;
}

/* The first error message in d, one line. */
static void first_error(const tgc_diags *d, const char *stage, char *buf, size_t size) {
    snprintf(buf, size, "%s failed", stage);
    for (size_t i = 0; i < tgc_diags_count(d); i++)
        if (tgc_diag_severity(d, i) == TGC_SEV_ERROR) {
            snprintf(buf, size, "%s: %s [%s]", stage, tgc_diag_message(d, i), tgc_diag_rule(d, i));
            break;
        }
}

static void report(FILE *out, int index, int dev, outcome o, const char *reason) {
    fprintf(out, "R %d %d %d ", index, dev, (int)o);
    for (const char *p = reason; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, out);
    fputc('\n', out);
    fflush(out);
}

/* Reports where soft placement put the op nodes of g on `devices`: a line
 * "P INDEX DEV GPU_NODES OP_NODES OP..." naming each op left on the cpu
 * (kernel availability: no gpu kernel for that op or dtype). */
static void report_placement(FILE *out, int index, int dev, const tgc_graph *g, const char *devices) {
    tgc_diags *d = tgc_diags_create();
    tgc_placed *p = NULL;
    tgc_place_options po = {.soft_placement = 1, .optimize = TGC_OPTIMIZE_NONE}; /* the graph's own ops */
    if (tgc_graph_place(g, devices, &po, d, &p) == TGC_OK) {
        int on_gpu = 0, ops = 0;
        size_t n = tgc_graph_node_count(g);
        for (size_t i = 0; i < n; i++) {
            const char *op = tgc_graph_node_op(g, i), *at = tgc_placed_device_name(p, tgc_graph_node_name(g, i));
            if (op == NULL || at == NULL) continue;
            ops++;
            on_gpu += strncmp(at, "gpu", 3) == 0;
        }
        fprintf(out, "P %d %d %d %d", index, dev, on_gpu, ops);
        for (size_t i = 0; i < n; i++) {
            const char *op = tgc_graph_node_op(g, i), *at = tgc_placed_device_name(p, tgc_graph_node_name(g, i));
            if (op != NULL && at != NULL && strncmp(at, "gpu", 3) != 0) fprintf(out, " %s", op);
        }
        fputc('\n', out);
        fflush(out);
    }
    tgc_placed_free(p);
    tgc_diags_free(d);
}

/* Writes a copy of the imported graph with `device: gpu` on every node, so
 * that small test graphs run on gpu0 rather than staying on the host
 * (placement keeps a node whose inputs are small host tensors on the cpu);
 * with soft placement a node without a gpu0 kernel still falls back to the
 * cpu. The importer writes each node's `op:` as a line of its own. */
static bool write_gpu_copy(const char *yaml, const char *gpu_yaml) {
    FILE *in = fopen(yaml, "r"), *out = fopen(gpu_yaml, "w");
    bool ok = in != NULL && out != NULL;
    char line[65536];
    while (ok && fgets(line, sizeof line, in) != NULL) {
        fputs(line, out);
        if (strncmp(line, "  op: ", 6) == 0) fputs("  device: gpu\n", out);
    }
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = false;
    return ok;
}

/* Runs every data set of the model on device list `devices`; fills why. */
static outcome run_on(const model *m, const tgc_graph *g, char **names, int n_names, const char *devices, char *why,
                      size_t size) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_session_options opts = {.threads = "cpu0=1,gpu0=1", .soft_placement = strstr(devices, "gpu") != NULL};
    outcome o = PASSED;
    if (tgc_session_create(g, devices, &opts, d, &s) != TGC_OK) {
        first_error(d, "session", why, size);
        tgc_diags_free(d);
        return FAILED;
    }
    int n_sets;
    char **sets = list_dir(m->dir, "test_data_set_", &n_sets);
    int n_out = tgc_session_output_count(s);
    for (int k = 0; k < n_sets && o == PASSED; k++) {
        tgc_tensor *feeds[64] = {0};
        int n_feeds = 0;
        for (; n_feeds < n_names && n_feeds < 64; n_feeds++) {
            char *path = xprintf("%s/%s/input_%d.pb", m->dir, sets[k], n_feeds);
            bool there = file_exists(path, NULL);
            tgc_dtype dt;
            tgc_tensor_kind kind = input_kind(g, names[n_feeds], &dt);
            tgc_status st = there ? tgc_onnx_value_load(path, kind, dt, d, &feeds[n_feeds]) : TGC_OK;
            free(path);
            if (!there) break;
            if (st == TGC_OK && input_dtype(g, names[n_feeds]) == TGC_BFLOAT16 && !as_bfloat16(&feeds[n_feeds]))
                st = TGC_ERR_NOMEM;
            if (st != TGC_OK) {
                first_error(d, "input", why, size);
                o = FAILED;
                break;
            }
        }
        tgc_tensor **outs = xmalloc((size_t)(n_out + 1) * sizeof *outs);
        if (o == PASSED && tgc_session_run(s, n_feeds, (const char *const *)names, feeds, outs, d) != TGC_OK) {
            first_error(d, "run", why, size);
            o = FAILED;
        }
        for (int i = 0; o == PASSED && i < n_out; i++) {
            char *path = xprintf("%s/%s/output_%d.pb", m->dir, sets[k], i);
            tgc_tensor *want = NULL;
            if (!file_exists(path, NULL)) {
                free(path);
                continue;
            }
            const tgc_tensor_info *info = tgc_graph_ref_info(g, g->outputs[i]);
            if (tgc_onnx_value_load(path, kind_of_info(info), info->dtype, d, &want) != TGC_OK ||
                (tgc_tensor_dtype(outs[i]) == TGC_BFLOAT16 && !as_bfloat16(&want))) {
                first_error(d, "expected output", why, size);
                o = FAILED;
            } else {
                char reason[512];
                if (!allclose(outs[i], want, reason, sizeof reason)) {
                    snprintf(why, size, "%s output %d ('%s'): %s", sets[k], i, tgc_session_output_name(s, i), reason);
                    o = FAILED;
                }
            }
            tgc_tensor_release(want);
            free(path);
        }
        for (int i = 0; i < n_out; i++)
            if (outs[i] != NULL) tgc_tensor_release(outs[i]);
        free(outs);
        for (int i = 0; i < n_feeds; i++)
            tgc_tensor_release(feeds[i]);
    }
    if (n_sets == 0 && o == PASSED) {
        snprintf(why, size, "no test_data_set_*");
        o = FAILED;
    }
    free_list(sets, n_sets);
    tgc_session_free(s);
    tgc_diags_free(d);
    return o;
}

static void run_model(const model *m, int index, const char *scratch, FILE *out) {
    char why[1024] = "";
    char *dir = xprintf("%s/m%d", scratch, index);
    char *onnx = xprintf("%s/model.onnx", m->dir);
    char *yaml = xprintf("%s/model.yaml", dir);
    char *gpu_yaml = xprintf("%s/model.gpu.yaml", dir);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL, *g_gpu = NULL;
    char **names = NULL;
    int n_names = 0;
    outcome o = PASSED;
    if (mkdir(dir, 0700) != 0) {
        snprintf(why, sizeof why, "cannot create %s: %s", dir, strerror(errno));
        o = FAILED;
    } else {
        tgc_status st = tgc_onnx_import(onnx, yaml, d);
        if (st != TGC_OK) {
            first_error(d, "import", why, sizeof why);
            o = st == TGC_ERR_UNSUPPORTED ? UNSUPPORTED : FAILED;
        } else if (tgc_onnx_list(onnx, TGC_ONNX_INPUT_NAMES, d, &n_names, &names) != TGC_OK) {
            first_error(d, "input names", why, sizeof why);
            o = FAILED;
        } else if (tgc_graph_load(yaml, d, &g) != TGC_OK) {
            first_error(d, "load", why, sizeof why);
            o = FAILED;
        }
    }
    for (int k = 0; k < n_devs; k++) {
        outcome r = o;
        char dev_why[1024];
        snprintf(dev_why, sizeof dev_why, "%s", why);
        bool gpu = strstr(dev_lists[k], "gpu") != NULL;
        if (r == PASSED && gpu && g_gpu == NULL &&
            (!write_gpu_copy(yaml, gpu_yaml) || tgc_graph_load(gpu_yaml, d, &g_gpu) != TGC_OK)) {
            first_error(d, "load (gpu copy)", dev_why, sizeof dev_why);
            r = FAILED;
        }
        if (r == PASSED) r = run_on(m, gpu ? g_gpu : g, names, n_names, dev_lists[k], dev_why, sizeof dev_why);
        if (r == PASSED && gpu) report_placement(out, index, k, g_gpu, dev_lists[k]);
        report(out, index, k, r, dev_why);
    }
    tgc_graph_free(g);
    tgc_graph_free(g_gpu);
    free(gpu_yaml);
    tgc_onnx_names_free(names, n_names);
    tgc_diags_free(d);
    tgc_tool_remove_tree(dir);
    free(dir);
    free(onnx);
    free(yaml);
}

/* A worker: reads model indices, one a line, runs each, reports; "q" ends it. */
static void worker_main(const model *models, int cmd_fd, int res_fd, const char *scratch, int timeout) {
    FILE *in = fdopen(cmd_fd, "r"), *out = fdopen(res_fd, "w");
    if (in == NULL || out == NULL) _exit(2);
    char line[64];
    while (fgets(line, sizeof line, in) != NULL && line[0] != 'q') {
        int index = atoi(line);
        alarm((unsigned)timeout);
        run_model(&models[index], index, scratch, out);
        alarm(0);
        fprintf(out, "D %d\n", index);
        fflush(out);
    }
    fclose(in);
    fclose(out);
    exit(0); /* not _exit: leak checkers run at exit (the parent flushed stdio before the fork) */
}

/* ---- The parent: workers, results, the table ---------------------------------------- */

typedef struct worker {
    pid_t pid;
    int cmd_fd, res_fd;
    FILE *cmd;
    int current; /* model index in flight, or -1 */
    char buf[8192];
    size_t len;
} worker;

static worker workers[MAX_JOBS];
static int n_workers;

static void start_worker(int w, const model *models, const char *scratch, int timeout) {
    int cmd[2], res[2];
    if (pipe(cmd) != 0 || pipe(res) != 0) {
        perror("tgc-conformance: pipe");
        exit(2);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("tgc-conformance: fork");
        exit(2);
    }
    if (pid == 0) {
        for (int k = 0; k < n_workers; k++)
            if (k != w && workers[k].pid > 0) {
                close(workers[k].cmd_fd);
                close(workers[k].res_fd);
            }
        close(cmd[1]);
        close(res[0]);
        worker_main(models, cmd[0], res[1], scratch, timeout);
    }
    close(cmd[0]);
    close(res[1]);
    workers[w] = (worker){.pid = pid, .cmd_fd = cmd[1], .res_fd = res[0], .current = -1};
    workers[w].cmd = fdopen(cmd[1], "w");
}

static void record(model *models, int index, int dev, outcome o, const char *reason) {
    model *m = &models[index];
    if (dev < 0 || dev >= n_devs || m->done[dev]) return;
    m->done[dev] = true;
    m->result[dev] = o;
    m->reason[dev] = xstrdup(reason);
}

/* Handles the lines that worker w has sent; returns true when its model is done. */
static bool take_lines(worker *w, model *models) {
    bool finished = false;
    char *start = w->buf, *nl;
    while ((nl = memchr(start, '\n', w->len - (size_t)(start - w->buf))) != NULL) {
        *nl = '\0';
        int index, dev, o, used = 0;
        int on_gpu, ops;
        if (start[0] == 'R' && sscanf(start, "R %d %d %d %n", &index, &dev, &o, &used) == 3 && o >= 0 && o < N_OUTCOMES)
            record(models, index, dev, (outcome)o, start + used);
        else if (start[0] == 'P' && sscanf(start, "P %d %d %d %d %n", &index, &dev, &on_gpu, &ops, &used) == 4 &&
                 dev >= 0 && dev < n_devs && models[index].fell_back[dev] == NULL) {
            models[index].gpu_nodes[dev] = on_gpu;
            models[index].op_nodes[dev] = ops;
            models[index].fell_back[dev] = xstrdup(start + used);
        }
        else if (start[0] == 'D')
            finished = true;
        start = nl + 1;
    }
    w->len -= (size_t)(start - w->buf);
    memmove(w->buf, start, w->len);
    return finished;
}

/* A worker died with its model in flight: the model failed everywhere it had no result. */
static void worker_died(worker *w, model *models, int status, int timeout) {
    if (w->current < 0) return;
    char why[128];
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(why, sizeof why, "timeout after %d s", timeout);
    else if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "crashed: %s", strsignal(WTERMSIG(status)));
    else
        snprintf(why, sizeof why, "worker exited with status %d", WEXITSTATUS(status));
    for (int k = 0; k < n_devs; k++)
        record(models, w->current, k, FAILED, why);
    w->current = -1;
}

static void run_all(model *models, int n, const options *opt, const char *scratch) {
    int next = 0, remaining = 0;
    for (int i = 0; i < n; i++) {
        if (models[i].bytes > (long)(opt->max_mb * 1048576.0)) {
            for (int k = 0; k < n_devs; k++)
                record(models, i, k, SKIPPED, "larger than --max-mb");
        } else {
            remaining++;
        }
    }
    n_workers = opt->jobs;
    for (int w = 0; w < n_workers; w++)
        start_worker(w, models, scratch, opt->timeout);
    int reported = 0;
    while (remaining > 0) {
        for (int w = 0; w < n_workers; w++) {
            if (workers[w].current >= 0) continue;
            while (next < n && models[next].bytes > (long)(opt->max_mb * 1048576.0))
                next++;
            if (next >= n) continue;
            workers[w].current = next++;
            fprintf(workers[w].cmd, "%d\n", workers[w].current);
            fflush(workers[w].cmd);
        }
        struct pollfd fds[MAX_JOBS];
        for (int w = 0; w < n_workers; w++)
            fds[w] = (struct pollfd){.fd = workers[w].res_fd, .events = POLLIN};
        if (poll(fds, (nfds_t)n_workers, -1) < 0) {
            if (errno == EINTR) continue;
            perror("tgc-conformance: poll");
            exit(2);
        }
        for (int w = 0; w < n_workers; w++) {
            if (!(fds[w].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            worker *wk = &workers[w];
            ssize_t got = read(wk->res_fd, wk->buf + wk->len, sizeof wk->buf - 1 - wk->len);
            if (got > 0) {
                wk->len += (size_t)got;
                if (take_lines(wk, models)) {
                    wk->current = -1;
                    remaining--;
                }
            } else if (got == 0 || (got < 0 && errno != EINTR)) {
                int status = 0;
                waitpid(wk->pid, &status, 0);
                fclose(wk->cmd);
                close(wk->res_fd);
                if (wk->current >= 0) remaining--;
                worker_died(wk, models, status, opt->timeout);
                wk->pid = -1;
                start_worker(w, models, scratch, opt->timeout);
            }
        }
        int done = n - remaining;
        if (isatty(STDERR_FILENO) && done / 50 != reported / 50) fprintf(stderr, "\r%d / %d models", done, n);
        reported = done;
    }
    if (isatty(STDERR_FILENO)) fputc('\n', stderr);
    for (int w = 0; w < n_workers; w++) {
        fputs("q\n", workers[w].cmd);
        fclose(workers[w].cmd);
        close(workers[w].res_fd);
        waitpid(workers[w].pid, NULL, 0);
    }
}

/* ---- The table ---------------------------------------------------------------------- */

typedef struct group {
    const char *name;
    int cases;
    int count[MAX_DEVICES][N_OUTCOMES];
} group;

static int cmp_group(const void *a, const void *b) {
    const group *x = a, *y = b;
    bool px = x->name[0] == '(', py = y->name[0] == '(';
    if (px != py) return px - py; /* suites after the ops */
    return strcmp(x->name, y->name);
}

static void print_row(const options *opt, const char *name, int cases, int count[MAX_DEVICES][N_OUTCOMES]) {
    if (opt->markdown)
        printf("| %s | %d |", name, cases);
    else
        printf("%-44s %5d", name, cases);
    for (int k = 0; k < n_devs; k++) {
        if (opt->markdown)
            printf(" %d | %d | %d |", count[k][PASSED], count[k][FAILED], count[k][UNSUPPORTED]);
        else
            printf("   %6d %6d %6d", count[k][PASSED], count[k][FAILED], count[k][UNSUPPORTED]);
    }
    if (opt->markdown)
        printf(" %d |\n", count[0][SKIPPED]);
    else
        printf("   %6d\n", count[0][SKIPPED]);
}

static void print_table(const options *opt, model *models, int n) {
    group *groups = xmalloc((size_t)n * sizeof *groups);
    int n_groups = 0;
    int total[MAX_DEVICES][N_OUTCOMES] = {{0}};
    for (int i = 0; i < n; i++) {
        int gi = 0;
        while (gi < n_groups && strcmp(groups[gi].name, models[i].group) != 0)
            gi++;
        if (gi == n_groups) groups[n_groups++].name = models[i].group;
        groups[gi].cases++;
        for (int k = 0; k < n_devs; k++) {
            outcome o = models[i].done[k] ? models[i].result[k] : FAILED;
            groups[gi].count[k][o]++;
            total[k][o]++;
        }
    }
    qsort(groups, (size_t)n_groups, sizeof *groups, cmp_group);
    if (opt->markdown) {
        printf("| op | cases |");
        for (int k = 0; k < n_devs; k++)
            printf(" %s passed | failed | unsupported |", dev_names[k]);
        printf(" skipped |\n|---|---:|");
        for (int k = 0; k < n_devs; k++)
            printf("---:|---:|---:|");
        printf("---:|\n");
    } else {
        printf("%-44s %5s", "op", "cases");
        for (int k = 0; k < n_devs; k++)
            printf("   %6.6s %6s %6s", dev_names[k], "fail", "unsup");
        printf("   %6s\n", "skip");
    }
    group rest = {0};
    int n_rest = 0;
    for (int i = 0; i < n_groups; i++) {
        bool imported = false;
        for (int k = 0; k < n_devs; k++)
            imported |= groups[i].count[k][PASSED] + groups[i].count[k][FAILED] > 0;
        if (!opt->compact || imported || groups[i].name[0] == '(') {
            print_row(opt, groups[i].name, groups[i].cases, groups[i].count);
            continue;
        }
        n_rest++;
        rest.cases += groups[i].cases;
        for (int k = 0; k < n_devs; k++)
            for (int o = 0; o < N_OUTCOMES; o++)
                rest.count[k][o] += groups[i].count[k][o];
    }
    if (n_rest > 0) {
        char name[64];
        snprintf(name, sizeof name, "%d other ops, none imported", n_rest);
        print_row(opt, name, rest.cases, rest.count);
    }
    print_row(opt, opt->markdown ? "**total**" : "total", n, total);
    printf("\nrule: numpy.testing.assert_allclose(actual, expected, rtol=%g, atol=%g), NaN == NaN; dtype and shape "
           "equal; strings exactly\n",
           RTOL, ATOL);
    for (int k = 0; k < n_devs; k++) {
        int ran = total[k][PASSED] + total[k][FAILED];
        printf("%s: %d passed, %d failed, %d unsupported, %d skipped of %d models: %.1f%% of all, %.1f%% of those "
               "imported\n",
               dev_names[k], total[k][PASSED], total[k][FAILED], total[k][UNSUPPORTED], total[k][SKIPPED], n,
               n ? 100.0 * total[k][PASSED] / n : 0.0, ran ? 100.0 * total[k][PASSED] / ran : 0.0);
    }
    free(groups);
}

typedef struct op_count {
    char name[64];
    int nodes;
} op_count;

static int cmp_op_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    return x->nodes != y->nodes ? y->nodes - x->nodes : strcmp(x->name, y->name);
}

/* For each gpu device list: how many op nodes of the models that passed
 * there ran on the gpu, and which ops fell back to the cpu (node counts). */
static void print_placement(const model *models, int n) {
    for (int k = 0; k < n_devs; k++) {
        if (strstr(dev_lists[k], "gpu") == NULL) continue;
        long on_gpu = 0, ops = 0;
        op_count *counts = NULL;
        int n_counts = 0;
        for (int i = 0; i < n; i++) {
            if (models[i].fell_back[k] == NULL) continue;
            on_gpu += models[i].gpu_nodes[k];
            ops += models[i].op_nodes[k];
            char *list = xstrdup(models[i].fell_back[k]), *save = NULL;
            for (char *op = strtok_r(list, " ", &save); op != NULL; op = strtok_r(NULL, " ", &save)) {
                int j = 0;
                while (j < n_counts && strcmp(counts[j].name, op) != 0) j++;
                if (j == n_counts) {
                    op_count *grown = realloc(counts, (size_t)(n_counts + 1) * sizeof *counts);
                    if (grown == NULL) break;
                    counts = grown;
                    snprintf(counts[n_counts].name, sizeof counts[n_counts].name, "%s", op);
                    counts[n_counts++].nodes = 0;
                }
                counts[j].nodes++;
            }
            free(list);
        }
        qsort(counts, (size_t)n_counts, sizeof *counts, cmp_op_count);
        printf("%s: %ld of %ld op nodes of the models that passed ran on the gpu (%.1f%%)", dev_names[k], on_gpu, ops,
               ops ? 100.0 * (double)on_gpu / (double)ops : 0.0);
        printf("%s", n_counts ? "; on the cpu by kernel availability (nodes):" : "");
        for (int j = 0; j < n_counts; j++) printf(" %s %d%s", counts[j].name, counts[j].nodes, j + 1 < n_counts ? "," : "");
        printf("\n");
        free(counts);
    }
}

static void print_details(const options *opt, const model *models, int n) {
    bool header = false;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n_devs; k++) {
            outcome o = models[i].done[k] ? models[i].result[k] : FAILED;
            if (o == PASSED || o == SKIPPED || (o == UNSUPPORTED && !opt->verbose)) continue;
            if (!header) {
                printf("\n");
                header = true;
            }
            printf("%-11s [%s] %s/%s: %s\n", o == FAILED ? "FAILED" : "UNSUPPORTED", dev_names[k], models[i].suite,
                   models[i].name, models[i].reason[k] ? models[i].reason[k] : "no result");
        }
}

/* Checks the totals against the floor file: "DEVICE N" lines, '#' comments. */
static int check_floor(const char *path, const model *models, int n) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "tgc-conformance: cannot open %s: %s\n", path, strerror(errno));
        return 2;
    }
    int rc = 0;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        char dev[64];
        int want;
        if (line[0] == '#' || sscanf(line, "%63s %d", dev, &want) != 2) continue;
        for (int k = 0; k < n_devs; k++) {
            if (strcmp(dev, dev_names[k]) != 0) continue;
            int passed = 0;
            for (int i = 0; i < n; i++)
                passed += models[i].done[k] && models[i].result[k] == PASSED;
            printf("floor %s: %d passed, floor %d: %s\n", dev, passed, want, passed >= want ? "ok" : "BELOW THE FLOOR");
            if (passed < want) rc = 1;
        }
    }
    fclose(f);
    return rc;
}

/* Whether this machine has a gpu0, asked in a child so that the parent never
 * starts OpenCL (the workers are forked from it). */
static bool probe_gpu(void) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tgc_device_info info[8];
        int n = tgc_devices_list(info, 8);
        _exit(n > 1 ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int parse_args(int argc, char **argv, options *o) {
    *o = (options){
        .data = TGC_ONNX_TESTDATA, .jobs = 2, .timeout = 30, .max_mb = 64, .want_cpu = true, .want_gpu = true};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--data") == 0 || strcmp(a, "--devices") == 0 || strcmp(a, "--filter") == 0 ||
                     strcmp(a, "--jobs") == 0 || strcmp(a, "--timeout") == 0 || strcmp(a, "--max-mb") == 0 ||
                     strcmp(a, "--floor") == 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(a, "--markdown") == 0)
            o->markdown = true;
        else if (strcmp(a, "--compact") == 0)
            o->compact = true;
        else if (strcmp(a, "--verbose") == 0)
            o->verbose = true;
        else if (!takes || v == NULL) {
            fprintf(stderr, "tgc-conformance: %s '%s'\n%s", takes ? "no value for" : "unknown argument", a, usage);
            return 2;
        } else {
            i++;
            if (strcmp(a, "--data") == 0)
                o->data = v;
            else if (strcmp(a, "--floor") == 0)
                o->floor = v;
            else if (strcmp(a, "--filter") == 0 && o->n_filters < 32)
                o->filters[o->n_filters++] = v;
            else if (strcmp(a, "--jobs") == 0)
                o->jobs = atoi(v);
            else if (strcmp(a, "--timeout") == 0)
                o->timeout = atoi(v);
            else if (strcmp(a, "--max-mb") == 0)
                o->max_mb = atof(v);
            else if (strcmp(a, "--devices") == 0) {
                o->want_cpu = strstr(v, "cpu") != NULL;
                o->want_gpu = strstr(v, "gpu") != NULL;
            }
        }
    }
    if (o->jobs < 1 || o->jobs > MAX_JOBS || o->timeout < 1 || (!o->want_cpu && !o->want_gpu)) {
        fprintf(stderr, "tgc-conformance: --jobs 1..%d, --timeout >= 1, --devices cpu and/or gpu0\n", MAX_JOBS);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    options opt;
    int rc = parse_args(argc, argv, &opt);
    if (rc != 0) return rc;
    signal(SIGPIPE, SIG_IGN);

    /* The models, suite by suite, each sorted by name. */
    int cap = 2048, n = 0;
    model *models = xmalloc((size_t)cap * sizeof *models);
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        char *sdir = xprintf("%s/%s", opt.data, suites[s]);
        int n_tests;
        char **tests = list_dir(sdir, "test_", &n_tests);
        for (int t = 0; t < n_tests; t++) {
            char *dir = xprintf("%s/%s", sdir, tests[t]);
            char *onnx = xprintf("%s/model.onnx", dir);
            char *full = xprintf("%s/%s", suites[s], tests[t]);
            bool wanted = opt.n_filters == 0;
            for (int f = 0; f < opt.n_filters && !wanted; f++)
                wanted = strstr(full, opt.filters[f]) != NULL;
            long bytes = 0;
            if (wanted && file_exists(onnx, &bytes) && n < cap)
                models[n++] =
                    (model){.suite = xstrdup(suites[s]), .name = xstrdup(tests[t]), .dir = dir, .bytes = bytes};
            else
                free(dir);
            free(onnx);
            free(full);
        }
        free_list(tests, n_tests);
        free(sdir);
    }
    if (n == 0) {
        fprintf(stderr, "tgc-conformance: no models found under %s\n", opt.data);
        return 2;
    }
    if (opt.want_cpu) {
        dev_lists[n_devs] = "cpu";
        dev_names[n_devs++] = "cpu";
    }
    if (opt.want_gpu && probe_gpu()) {
        dev_lists[n_devs] = "cpu,gpu0";
        dev_names[n_devs++] = "gpu0";
    }
    if (n_devs == 0) {
        fprintf(stderr, "tgc-conformance: no gpu0 on this machine\n");
        return 2;
    }
    assign_groups(models, n);

    char scratch[] = "/tmp/tgc-conformance-XXXXXX";
    if (mkdtemp(scratch) == NULL) {
        perror("tgc-conformance: mkdtemp");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_all(models, n, &opt, scratch);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tgc_tool_remove_tree(scratch);

    print_table(&opt, models, n);
    print_placement(models, n);
    printf("%d models in %.1f s (%d jobs, timeout %d s)\n", n,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), opt.jobs, opt.timeout);
    print_details(&opt, models, n);
    if (opt.floor != NULL) rc = check_floor(opt.floor, models, n);
    for (int i = 0; i < n; i++) {
        free(models[i].suite);
        free(models[i].name);
        free(models[i].dir);
        free(models[i].group);
        for (int k = 0; k < n_devs; k++) {
            free(models[i].reason[k]);
            free(models[i].fell_back[k]);
        }
    }
    free(models);
    return rc;
}
