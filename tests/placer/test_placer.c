/* The placer against its rules (docs/placement.md).
 *
 * Every graph in tests/data/placer/ says, in comment lines, how to place it
 * and what must come out:
 *     # devices: cpu,gpu0               the --devices list
 *     # options: soft                   soft placement on
 *     # expect: LINE:COL RULE TEXT      an error (all of them, in order)
 *     # warn: LINE:COL RULE TEXT        a warning (all of them, in order)
 *     # place: NODE DEVICE [REASON]     where a node goes, and why
 * TEXT must occur in the message. A graph with `expect` lines must fail
 * with exactly those errors; any other must place, with exactly its `warn`
 * lines, its YAML dump must place again to the same devices, and placing
 * twice gives the same result.
 *
 * Beyond the files: the digits CNN on cpu,gpu0 (shape arithmetic on the
 * cpu, convolutions on gpu0), device lists, the dumps and the summary,
 * conflicts between kernels (through a kernel table of the test's own), a
 * property test on random graphs checked by brute force, and every
 * allocation failing in turn. */
#include "tests/harness.h"

#include "graph/graph.h"
#include "placer/placer.h"
#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The placer's rules are tested on graphs as written: no passes first. */
static const tgc_place_options as_given = {.optimize = TGC_OPTIMIZE_NONE};

#define MAX_LINES 32

typedef struct message {
    int line, col;
    char rule[64];
    char text[512];
} message;

typedef struct placement_want {
    char node[64], device[16], reason[32];
} placement_want;

typedef struct directives {
    char devices[128];
    bool soft;
    message errors[MAX_LINES], warnings[MAX_LINES];
    int n_errors, n_warnings;
    placement_want places[MAX_LINES];
    int n_places;
} directives;

static bool read_message(const char *p, message *m) {
    int used = 0;
    if (sscanf(p, "%d:%d %63s %n", &m->line, &m->col, m->rule, &used) < 3) return false;
    snprintf(m->text, sizeof m->text, "%.511s", p + used);
    m->text[strcspn(m->text, "\n")] = '\0';
    return true;
}

static bool read_directives(const char *path, directives *d) {
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "r");
    if (f == NULL) return false;
    char line[1024];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "# devices: ", 11) == 0) {
            snprintf(d->devices, sizeof d->devices, "%.127s", line + 11);
            d->devices[strcspn(d->devices, "\n")] = '\0';
        } else if (strncmp(line, "# options: soft", 15) == 0) {
            d->soft = true;
        } else if (strncmp(line, "# expect: ", 10) == 0 && d->n_errors < MAX_LINES) {
            if (read_message(line + 10, &d->errors[d->n_errors])) d->n_errors++;
        } else if (strncmp(line, "# warn: ", 8) == 0 && d->n_warnings < MAX_LINES) {
            if (read_message(line + 8, &d->warnings[d->n_warnings])) d->n_warnings++;
        } else if (strncmp(line, "# place: ", 9) == 0 && d->n_places < MAX_LINES) {
            placement_want *w = &d->places[d->n_places];
            if (sscanf(line + 9, "%63s %15s %31s", w->node, w->device, w->reason) >= 2) d->n_places++;
        }
    }
    fclose(f);
    return d->devices[0] != '\0';
}

/* Do the messages of severity `sev` in `got` match `want` exactly, in order? */
static bool same_messages(const tgc_diags *got, tgc_severity sev, const message *want, int n_want, const char *path) {
    int k = 0;
    for (size_t i = 0; i < tgc_diags_count(got); i++) {
        if (tgc_diag_severity(got, i) != sev) continue;
        if (k == n_want) return false;
        const message *m = &want[k++];
        if (tgc_diag_line(got, i) != m->line || tgc_diag_column(got, i) != m->col ||
            strcmp(tgc_diag_rule(got, i), m->rule) != 0 || strstr(tgc_diag_message(got, i), m->text) == NULL ||
            strcmp(tgc_diag_file(got, i), path) != 0)
            return false;
    }
    return k == n_want;
}

static void show_mismatch(const char *name, const char *what, const message *want, int n, const tgc_diags *got) {
    fprintf(stderr, "\n%s: expected %s\n", name, what);
    for (int k = 0; k < n; k++)
        fprintf(stderr, "  %d:%d %s %s\n", want[k].line, want[k].col, want[k].rule, want[k].text);
    fprintf(stderr, "got\n");
    tgc_diags_print(got, stderr);
}

/* Places g again from its own YAML dump and checks every node lands on the
 * same device, with no warning even if the first placement was soft. */
static bool round_trip(const tgc_graph *g, const tgc_placed *p, const char *devices, const char *dir) {
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (mem == NULL) return false;
    tgc_diags *d = tgc_diags_create();
    bool ok = tgc_placed_dump_yaml(p, mem, NULL, d) == TGC_OK;
    fclose(mem);
    tgc_graph *g2 = NULL;
    tgc_placed *p2 = NULL;
    ok = ok && tgc_graph_load_string(text, size, "dump.yaml", dir, d, &g2) == TGC_OK;
    ok = ok && tgc_graph_place(g2, devices, &as_given, d, &p2) == TGC_OK && tgc_diags_count(d) == 0;
    for (int32_t id = 0; ok && id < g->n_nodes; id++) {
        const char *name = g->nodes[id].name;
        const char *a = tgc_placed_device_name(p, name), *b = tgc_placed_device_name(p2, name);
        ok = a != NULL && b != NULL && strcmp(a, b) == 0;
        if (!ok) fprintf(stderr, "\nround trip: '%s' on %s, then on %s\n", name, a ? a : "?", b ? b : "?");
    }
    if (!ok) tgc_diags_print(d, stderr);
    tgc_placed_free(p2);
    tgc_graph_free(g2);
    tgc_diags_free(d);
    free(text);
    return ok;
}

static bool same_placement(const tgc_graph *g, const tgc_placed *a, const tgc_placed *b) {
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const char *name = g->nodes[id].name;
        if (strcmp(tgc_placed_device_name(a, name), tgc_placed_device_name(b, name)) != 0 ||
            strcmp(tgc_placed_reason(a, name), tgc_placed_reason(b, name)) != 0)
            return false;
    }
    return true;
}

static void check_graph(const char *dir, const char *name, int *files, int *errors_checked, int *places_checked) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    directives want;
    CU_ASSERT_FATAL(read_directives(path, &want));
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load(path, d, &g), TGC_OK);
    tgc_place_options opts = {.soft_placement = want.soft, .optimize = TGC_OPTIMIZE_NONE};
    tgc_placed *p = NULL;
    tgc_status s = tgc_graph_place(g, want.devices, &opts, d, &p);
    if (want.n_errors > 0) {
        CU_ASSERT_EQUAL(s, TGC_ERR_INVALID);
        CU_ASSERT_PTR_NULL(p);
        bool same = same_messages(d, TGC_SEV_ERROR, want.errors, want.n_errors, path);
        if (!same) show_mismatch(name, "errors", want.errors, want.n_errors, d);
        CU_ASSERT(same);
        *errors_checked += want.n_errors;
    } else {
        if (s != TGC_OK) tgc_diags_print(d, stderr);
        CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
        bool same = same_messages(d, TGC_SEV_WARNING, want.warnings, want.n_warnings, path);
        if (!same) show_mismatch(name, "warnings", want.warnings, want.n_warnings, d);
        CU_ASSERT(same);
        for (int i = 0; i < want.n_places; i++) {
            const placement_want *w = &want.places[i];
            const char *dev = tgc_placed_device_name(p, w->node), *why = tgc_placed_reason(p, w->node);
            bool ok = dev != NULL && strcmp(dev, w->device) == 0 &&
                      (w->reason[0] == '\0' || strcmp(why, w->reason) == 0);
            if (!ok)
                fprintf(stderr, "\n%s: '%s' expected on %s (%s), got %s (%s)\n", name, w->node, w->device, w->reason,
                        dev ? dev : "no such node", why ? why : "-");
            CU_ASSERT(ok);
            (*places_checked)++;
        }
        tgc_diags *d2 = tgc_diags_create();
        tgc_placed *again = NULL;
        CU_ASSERT_EQUAL(tgc_graph_place(g, want.devices, &opts, d2, &again), TGC_OK);
        CU_ASSERT(again != NULL && same_placement(g, p, again));
        tgc_placed_free(again);
        tgc_diags_free(d2);
        CU_ASSERT(round_trip(g, p, want.devices, dir));
    }
    tgc_placed_free(p);
    tgc_graph_free(g);
    tgc_diags_free(d);
    (*files)++;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_every_placer_graph(void) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tgc_test_path("tests/data/placer"));
    DIR *dp = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
    char *names[256];
    int count = 0;
    struct dirent *ent;
    while ((ent = readdir(dp)) != NULL && count < 256) {
        size_t len = strlen(ent->d_name);
        if (len > 5 && strcmp(ent->d_name + len - 5, ".yaml") == 0) names[count++] = strdup(ent->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)count, sizeof names[0], compare_names);
    int files = 0, errors = 0, places = 0;
    for (int i = 0; i < count; i++) {
        check_graph(dir, names[i], &files, &errors, &places);
        free(names[i]);
    }
    printf("\n  %d placer graphs: %d errors and %d placements checked\n", files, errors, places);
    CU_ASSERT(files >= 25);
}

/* The graphs above lean on what the kernel registry holds; if it changes,
 * these say which graph to rewrite rather than failing mysteriously. */
static void test_kernel_premises(void) {
    /* cpu-only: Add on uint8 (cpu_only_op, coloc_*, dry_run, spec_no_kernel, ...) */
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find("Add", TGC_DEVICE_CPU, TGC_UINT8));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Add", TGC_DEVICE_GPU, TGC_UINT8));
    /* nowhere: Softmax on float16 (no_kernel_anywhere*, no_kernel_and_unlisted) */
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Softmax", TGC_DEVICE_CPU, TGC_FLOAT16));
    CU_ASSERT_PTR_NULL(tgc_kernel_find("Softmax", TGC_DEVICE_GPU, TGC_FLOAT16));
    /* both: the float ops and the integer shape ops (host-memory gpu kernels) */
    static const char *const both[] = {"Relu", "Sigmoid", "MatMul", "Conv", "Reshape"};
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(both[i], TGC_DEVICE_CPU, TGC_FLOAT32));
        CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(both[i], TGC_DEVICE_GPU, TGC_FLOAT32));
    }
    static const char *const ints[] = {"Gather", "Unsqueeze", "Concat", "Add", "Mul"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(ints[i], TGC_DEVICE_CPU, TGC_INT64));
        CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(ints[i], TGC_DEVICE_GPU, TGC_INT64));
    }
    const tgc_kernel_def *reshape = tgc_kernel_find("Reshape", TGC_DEVICE_GPU, TGC_FLOAT32);
    CU_ASSERT(reshape != NULL && (reshape->host_inputs & 2u)); /* initializer_host.yaml */
    const tgc_kernel_def *unsq = tgc_kernel_find("Unsqueeze", TGC_DEVICE_CPU, TGC_INT64);
    CU_ASSERT(unsq != NULL && (unsq->host_inputs & 2u)); /* host_shape_chain.yaml: axes */
    const tgc_kernel_def *shape = tgc_kernel_find("Shape", TGC_DEVICE_GPU, TGC_FLOAT32);
    CU_ASSERT(shape != NULL && (shape->host_outputs & 1u) && (shape->metadata_inputs & 1u));
}

/* ---- The digits CNN ----------------------------------------------------------- */

static tgc_graph *load(const char *rel) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load(tgc_test_path(rel), d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return g;
}

static char *summary_of(const tgc_placed *p) {
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (mem == NULL) return NULL;
    tgc_placed_summary(p, mem);
    fclose(mem);
    return text;
}

static void test_digits_cnn_on_cpu_and_gpu(void) {
    tgc_graph *g = load("examples/digits/cnn.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_diags *d = tgc_diags_create();
    tgc_placed *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu,gpu0", &as_given, d, &p), TGC_OK);
    CU_ASSERT_EQUAL(tgc_diags_count(d), 0);
    /* The data path on the gpu... */
    static const char *const gpu[] = {"conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flat",
                                      "fc1",   "relu3", "logits", "probs", "x",     "conv1.w", "fc2.b"};
    for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
        CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, gpu[i]), "gpu0");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "conv1"), "default");
    /* ...Shape where its input is, reading only its dims... */
    CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, "feat_shape"), "gpu0");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "feat_shape"), "host-memory");
    /* ...and the shape arithmetic, with its constants, on the host cpu. */
    static const char *const cpu[] = {"batch", "batch1", "flat_shape", "zero", "axes0", "minus1"};
    for (size_t i = 0; i < sizeof cpu / sizeof cpu[0]; i++)
        CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, cpu[i]), "cpu0");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "batch"), "host-memory");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "flat_shape"), "host-memory");
    /* Crossing: feat_shape (int64 [4], 32 bytes) to the cpu, flat_shape
     * (int64 [2], 16 bytes) back: two tensors, 48 bytes, no symbol. */
    char *s = summary_of(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "cpu0        6 nodes (3 ops, 3 inputs and initializers)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "gpu0       21 nodes (12 ops, 9 inputs and initializers)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "crossing devices: 2 tensors, 48 bytes per step\n"));
    free(s);
    tgc_placed_free(p);

    /* On one cpu, or two virtual ones, everything is on cpu0. */
    static const char *const lists[] = {"cpu", "cpu0,cpu1"};
    for (size_t l = 0; l < 2; l++) {
        CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, lists[l], &as_given, d, &p), TGC_OK);
        for (int32_t id = 0; id < g->n_nodes; id++)
            CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, g->nodes[id].name), "cpu0");
        s = summary_of(p);
        CU_ASSERT(s != NULL && strstr(s, "crossing devices: 0 tensors, 0 bytes per step\n") != NULL);
        free(s);
        tgc_placed_free(p);
    }
    tgc_diags_free(d);
    tgc_graph_free(g);
}

/* ---- Device lists ------------------------------------------------------------------- */

static void test_device_lists(void) {
    static const struct {
        const char *list;
        int n;
        const char *names[4];
    } good[] = {
        {"cpu", 1, {"cpu0"}},
        {"cpu,gpu0", 2, {"cpu0", "gpu0"}},
        {"gpu,cpu1", 2, {"gpu0", "cpu1"}},
        {"cpu0,cpu1", 2, {"cpu0", "cpu1"}},
        {"gpu12,cpu", 2, {"gpu12", "cpu0"}}, /* static: gpu12 need not exist here */
        {"/task:0/cpu,/task:1/cpu", 2, {"cpu0", "/task:1/cpu0"}}, /* task 0 is written without its task */
        {"cpu,/task:12/gpu3,/task:1/cpu1", 3, {"cpu0", "/task:12/gpu3", "/task:1/cpu1"}},
    };
    tgc_graph *g = load("tests/data/placer/default_gpu_first.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        tgc_diags *d = tgc_diags_create();
        tgc_placed *p = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, good[i].list, &as_given, d, &p), TGC_OK);
        CU_ASSERT_EQUAL(tgc_placed_device_count(p), good[i].n);
        for (int k = 0; k < good[i].n; k++) CU_ASSERT_STRING_EQUAL(tgc_placed_device(p, k), good[i].names[k]);
        CU_ASSERT_PTR_NULL(tgc_placed_device(p, good[i].n));
        CU_ASSERT_PTR_NULL(tgc_placed_device_name(p, "no-such-node"));
        tgc_placed_free(p);
        tgc_diags_free(d);
    }
    static const struct {
        const char *list, *text;
    } bad[] = {
        {"", "empty device list"},
        {"tpu0", "'tpu0' in device list 'tpu0' is not a device name"},
        {"cpu,", "'' in device list 'cpu,' is not a device name"},
        {"gpu01", "'gpu01' in device list"},
        {"cpu,cpu0", "device cpu0 is listed twice in 'cpu,cpu0' (cpu is cpu0, gpu is gpu0"},
        {"cpu,/task:0/cpu0", "device cpu0 is listed twice"},
        {"/task:1/cpu,/task:1/cpu0", "device /task:1/cpu0 is listed twice"},
        {"/task:01/cpu", "is not a device name"},
        {"/task:1/", "is not a device name"},
        {"/task:/cpu", "is not a device name"},
        {"/task:1cpu", "is not a device name"},
        {"/task:123456/cpu", "is not a device name"},
        {"gpu0,gpu", "device gpu0 is listed twice"},
        {"cpu gpu0", "is not a device name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tgc_diags *d = tgc_diags_create();
        tgc_placed *p = (tgc_placed *)1;
        CU_ASSERT_EQUAL(tgc_graph_place(g, bad[i].list, &as_given, d, &p), TGC_ERR_INVALID);
        CU_ASSERT_PTR_NULL(p);
        CU_ASSERT_EQUAL_FATAL(tgc_diags_error_count(d), 1);
        CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 0), "bad-device-list");
        bool has = strstr(tgc_diag_message(d, 0), bad[i].text) != NULL;
        if (!has) fprintf(stderr, "\n'%s': %s\n", bad[i].list, tgc_diag_message(d, 0));
        CU_ASSERT(has);
        tgc_diags_free(d);
    }
    /* 65 devices: more than a placement can take. */
    char many[1024] = "cpu0";
    for (int i = 0; i < 64; i++) snprintf(many + strlen(many), sizeof many - strlen(many), ",gpu%d", i);
    tgc_diags *d = tgc_diags_create();
    tgc_placed *p = NULL;
    CU_ASSERT_EQUAL(tgc_graph_place(g, many, &as_given, d, &p), TGC_ERR_INVALID);
    CU_ASSERT(tgc_diags_count(d) == 1 && strstr(tgc_diag_message(d, 0), "more than 64 devices") != NULL);
    tgc_diags_free(d);
    tgc_graph_free(g);
}

/* ---- Dumps ------------------------------------------------------------------------------ */

static const char cross_graph[] = "format: tgc/1\n"
                                  "name: cross\n"
                                  "inputs:\n"
                                  "  - {name: x, dtype: float32, shape: [N, 16]}\n"
                                  "outputs: [b, c]\n"
                                  "nodes:\n"
                                  "  - {name: a, op: Relu, inputs: [x], device: cpu0}\n"
                                  "  - {name: b, op: Relu, inputs: [a]}\n"
                                  "  - {name: c, op: Sigmoid, inputs: [a, ^b]}\n";

static char *dump_to_text(const tgc_placed *p, int format) {
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (mem == NULL) return NULL;
    tgc_diags *d = tgc_diags_create();
    tgc_status s = format == 0 ? tgc_placed_dump_json(p, mem, d) : tgc_placed_dump_dot(p, mem, d);
    fclose(mem);
    tgc_diags_free(d);
    if (s != TGC_OK) {
        free(text);
        return NULL;
    }
    return text;
}

static void test_dumps_and_summary(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(cross_graph, sizeof cross_graph - 1, "cross.yaml", NULL, d, &g),
                          TGC_OK);
    tgc_placed *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu,gpu0", &as_given, d, &p), TGC_OK);
    /* x, a on cpu0; b and c on gpu0 (N makes them large). */
    char *json = dump_to_text(p, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    static const char want_json[] = "{\n"
                                    "  \"graph\": \"cross\",\n"
                                    "  \"devices\": [\"cpu0\", \"gpu0\"],\n"
                                    "  \"nodes\": {\n"
                                    "    \"x\": {\"device\": \"cpu0\", \"reason\": \"consumer\"},\n"
                                    "    \"a\": {\"device\": \"cpu0\", \"reason\": \"spec\"},\n"
                                    "    \"b\": {\"device\": \"gpu0\", \"reason\": \"default\"},\n"
                                    "    \"c\": {\"device\": \"gpu0\", \"reason\": \"default\"}\n"
                                    "  }\n"
                                    "}\n";
    CU_ASSERT_STRING_EQUAL(json, want_json);
    free(json);
    char *dot = dump_to_text(p, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dot);
    CU_ASSERT(strncmp(dot, "digraph \"cross\" {", 17) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"legend 0\" [label=\"cpu0\", fillcolor=\"#8ecae6\"]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"legend 1\" [label=\"gpu0\", fillcolor=\"#ffb703\"]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"a\" [label=\"a\\nRelu\\ncpu0 (spec)\", fillcolor=\"#8ecae6\"]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"b\" [label=\"b\\nRelu\\ngpu0 (default)\", fillcolor=\"#ffb703\"]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"x\" -> \"a\" [label=\"[N, 16]\"];"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"a\" -> \"b\" [label=\"[N, 16]\", penwidth=2.5, color=\"#d62828\"];"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"b\" -> \"c\" [style=dashed];"));
    CU_ASSERT(strcmp(dot + strlen(dot) - 2, "}\n") == 0);
    free(dot);
    /* a's [N, 16] float32 output goes to gpu0 once, though b and c both
     * read it: one tensor, 16 * 4 bytes with N as 1. The control edge
     * b -> c stays on gpu0. */
    char *s = summary_of(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "placement on 2 devices:\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "  cpu0        2 nodes (1 ops, 1 inputs and initializers)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "  gpu0        2 nodes (2 ops, 0 inputs and initializers)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "  crossing devices: 1 tensor, 64 bytes per step (counting N as 1)\n"));
    free(s);
    tgc_placed_free(p);
    /* One tensor read on two other devices is sent twice (cpu1 and gpu0):
     * two tensors, 128 bytes; the control edge b -> c crosses too. */
    tgc_graph_free(g);
    static const char two_dest[] = "format: tgc/1\n"
                                   "inputs:\n"
                                   "  - {name: x, dtype: float32, shape: [N, 16]}\n"
                                   "outputs: [b, c]\n"
                                   "nodes:\n"
                                   "  - {name: a, op: Relu, inputs: [x], device: cpu0}\n"
                                   "  - {name: b, op: Relu, inputs: [a], device: cpu1}\n"
                                   "  - {name: c, op: Relu, inputs: [a, ^b], device: gpu0}\n";
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(two_dest, sizeof two_dest - 1, "two.yaml", NULL, d, &g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu0,cpu1,gpu0", &as_given, d, &p), TGC_OK);
    s = summary_of(p);
    CU_ASSERT(s != NULL &&
              strstr(s, "crossing devices: 2 tensors, 128 bytes per step (counting N as 1); 1 control edge\n") != NULL);
    free(s);
    tgc_placed_free(p);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* ---- Kernels the registry lacks: the test's own table ----------------------------------- */

/* Identity: float32 everywhere, uint8 on cpus only, int32 on gpus only,
 * bool nowhere. */
static const tgc_kernel_def fake_cpu = {.op = "Identity", .forward_input = -1};
static const tgc_kernel_def fake_gpu = {.op = "Identity", .forward_input = -1};

static const tgc_kernel_def *fake_find_dtype(tgc_device_kind kind, tgc_dtype dt) {
    bool cpu = dt == TGC_FLOAT32 || dt == TGC_UINT8, gpu = dt == TGC_FLOAT32 || dt == TGC_INT32;
    if (kind == TGC_DEVICE_CPU) return cpu ? &fake_cpu : NULL;
    return gpu ? &fake_gpu : NULL;
}

static const tgc_kernel_def *fake_find(const tgc_graph *g, const tgc_node *n, tgc_device_kind kind, void *ctx) {
    (void)ctx;
    return fake_find_dtype(kind, tgc_kernel_node_dtype(g, n));
}

static const char fake_inputs[] = "format: tgc/1\n"
                                  "inputs:\n"
                                  "  - {name: xf, dtype: float32, shape: [N, 4]}\n"
                                  "  - {name: xu, dtype: uint8, shape: [N, 4]}\n"
                                  "  - {name: xi, dtype: int32, shape: [N, 4]}\n"
                                  "  - {name: xb, dtype: bool, shape: [N, 4]}\n";

static void test_kernel_conflicts(void) {
    static const char text[] = "format: tgc/1\n"                                                    /* 1 */
                               "inputs:\n"                                                          /* 2 */
                               "  - {name: xf, dtype: float32, shape: [N, 4]}\n"                    /* 3 */
                               "  - {name: xu, dtype: uint8, shape: [N, 4]}\n"                      /* 4 */
                               "  - {name: xi, dtype: int32, shape: [N, 4]}\n"                      /* 5 */
                               "outputs: [q, s]\n"                                                  /* 6 */
                               "nodes:\n"                                                           /* 7 */
                               "  - {name: p, op: Identity, inputs: [xu]}\n"                        /* 8 */
                               "  - {name: q, op: Identity, inputs: [xi], colocate_with: [p]}\n"    /* 9 */
                               "  - {name: r, op: Identity, inputs: [xf], colocate_with: [q]}\n"    /* 10 */
                               "  - {name: s, op: Identity, inputs: [xu], colocate_with: [r]}\n";   /* 11 */
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, sizeof text - 1, "k.yaml", NULL, d, &g), TGC_OK);
    tgc_placer_device devs[] = {{TGC_DEVICE_CPU, 0, 0}, {TGC_DEVICE_GPU, 0, 0}};
    tgc_placer_options opts = {.kernel_find = fake_find};
    tgc_placement pl;
    CU_ASSERT_EQUAL(tgc_placer_run(g, devs, 2, &opts, d, &pl), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(pl.device);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_count(d), 2);
    /* q (gpu only) meets p (cpu only); r joins q; s (cpu only) meets q's
     * group through r. Soft placement would not help: no mention of it. */
    CU_ASSERT_EQUAL(tgc_diag_line(d, 0), 9);
    CU_ASSERT_EQUAL(tgc_diag_column(d, 0), 5);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 0), "placement-conflict");
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(d, 0),
                           "cannot place 'q' (op Identity) on any one device: Identity has no cpu kernel for int32, "
                           "but it is colocated with 'p' (line 8), whose op Identity has no gpu kernel for uint8; "
                           "remove the colocation");
    CU_ASSERT_EQUAL(tgc_diag_line(d, 1), 11);
    CU_ASSERT_STRING_EQUAL(tgc_diag_message(d, 1),
                           "cannot place 's' (op Identity) on any one device: Identity has no gpu kernel for uint8, "
                           "but it is colocated with 'q' (line 9, via 'r'), whose op Identity has no cpu kernel for "
                           "int32; remove the colocation");
    /* Soft placement relaxes specs, never kernels: the same two errors. */
    tgc_diags *d2 = tgc_diags_create();
    opts.soft_placement = true;
    CU_ASSERT_EQUAL(tgc_placer_run(g, devs, 2, &opts, d2, &pl), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_diags_error_count(d2), 2);
    tgc_diags_free(d2);
    tgc_diags_free(d);
    tgc_graph_free(g);
}

/* ---- The property test -------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

#define MAX_OPS 6

typedef struct random_graph {
    int n_ops;
    int dtype_of[MAX_OPS]; /* index into the four inputs: float32, uint8, int32, bool */
    const char *spec[MAX_OPS];
    int colocate[MAX_OPS][2], n_colocate[MAX_OPS];
    tgc_placer_device devs[4];
    int n_devs;
    bool soft;
} random_graph;

static const char *const spec_choices[] = {"cpu", "gpu", "cpu0", "cpu1", "gpu0", "gpu1"};

static void make_random(random_graph *r, char *text, size_t size) {
    memset(r, 0, sizeof *r);
    r->n_ops = 1 + (int)rnd(MAX_OPS);
    size_t used = (size_t)snprintf(text, size, "%soutputs: [n0]\nnodes:\n", fake_inputs);
    static const char *const inputs[] = {"xf", "xu", "xi", "xb"};
    for (int k = 0; k < r->n_ops; k++) {
        /* An input of one of the four dtypes (bool rarely), or an earlier op. */
        int src = k > 0 && rnd(2) ? (int)rnd((uint32_t)k) : -1;
        r->dtype_of[k] = src >= 0 ? r->dtype_of[src] : (rnd(20) == 0 ? 3 : (int)rnd(3));
        char input[16];
        if (src >= 0) snprintf(input, sizeof input, "n%d", src);
        else snprintf(input, sizeof input, "%s", inputs[r->dtype_of[k]]);
        used += (size_t)snprintf(text + used, size - used, "  - {name: n%d, op: Identity, inputs: [%s]", k, input);
        if (rnd(100) < 35) {
            r->spec[k] = spec_choices[rnd(6)];
            used += (size_t)snprintf(text + used, size - used, ", device: %s", r->spec[k]);
        }
        if (r->n_ops > 1 && rnd(100) < 40) {
            int m = 1 + (int)rnd(2);
            used += (size_t)snprintf(text + used, size - used, ", colocate_with: [");
            for (int j = 0; j < m; j++) {
                int t = (int)rnd((uint32_t)r->n_ops);
                if (t == k) t = (t + 1) % r->n_ops;
                r->colocate[k][r->n_colocate[k]++] = t;
                used += (size_t)snprintf(text + used, size - used, "%sn%d", j ? ", " : "", t);
            }
            used += (size_t)snprintf(text + used, size - used, "]");
        }
        used += (size_t)snprintf(text + used, size - used, "}\n");
    }
    /* A random non-empty subset of cpu0, cpu1, gpu0, gpu1, in random order. */
    static const tgc_placer_device all[] = {
        {TGC_DEVICE_CPU, 0, 0}, {TGC_DEVICE_CPU, 1, 0}, {TGC_DEVICE_GPU, 0, 0}, {TGC_DEVICE_GPU, 1, 0}};
    int order[4] = {0, 1, 2, 3};
    for (int i = 3; i > 0; i--) {
        int j = (int)rnd((uint32_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    r->n_devs = 1 + (int)rnd(4);
    for (int i = 0; i < r->n_devs; i++) r->devs[i] = all[order[i]];
    r->soft = rnd(100) < 30;
}

static bool has_kernel(int dtype_index, tgc_device_kind kind) {
    static const tgc_dtype dts[] = {TGC_FLOAT32, TGC_UINT8, TGC_INT32, TGC_BOOL};
    return fake_find_dtype(kind, dts[dtype_index]) != NULL;
}

static bool spec_allows(const char *spec, tgc_placer_device d) {
    if (spec == NULL) return true;
    tgc_device_kind kind = spec[0] == 'g' ? TGC_DEVICE_GPU : TGC_DEVICE_CPU;
    if (d.kind != kind) return false;
    return spec[3] == '\0' || d.index == spec[3] - '0';
}

/* Does assignment a (op k -> device index) meet every hard constraint:
 * kernels, colocation, and (unless soft) the specs? */
static bool satisfies(const random_graph *r, const int *a, bool with_specs) {
    for (int k = 0; k < r->n_ops; k++) {
        tgc_placer_device d = r->devs[a[k]];
        if (!has_kernel(r->dtype_of[k], d.kind)) return false;
        if (with_specs && !spec_allows(r->spec[k], d)) return false;
        for (int j = 0; j < r->n_colocate[k]; j++)
            if (a[r->colocate[k][j]] != a[k]) return false;
    }
    return true;
}

/* Brute force over every assignment of the ops to the listed devices. */
static bool some_assignment(const random_graph *r, bool with_specs) {
    int a[MAX_OPS] = {0};
    for (;;) {
        if (satisfies(r, a, with_specs)) return true;
        int k = 0;
        while (k < r->n_ops && ++a[k] == r->n_devs) a[k++] = 0;
        if (k == r->n_ops) return false;
    }
}

static void test_random_graphs_against_brute_force(void) {
    int placed = 0, refused = 0, relaxed = 0;
    for (int iter = 0; iter < 600; iter++) {
        random_graph r;
        char text[4096];
        make_random(&r, text, sizeof text);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, strlen(text), "random.yaml", NULL, d, &g), TGC_OK);
        tgc_placer_options opts = {.soft_placement = r.soft, .kernel_find = fake_find};
        tgc_placement pl;
        tgc_status s = tgc_placer_run(g, r.devs, r.n_devs, &opts, d, &pl);
        bool possible = some_assignment(&r, !r.soft);
        if (s == TGC_OK) {
            /* Op n_k is node id 4 + k (four inputs first). */
            int a[MAX_OPS];
            int unmet = 0;
            for (int k = 0; k < r.n_ops; k++) {
                a[k] = pl.device[4 + k];
                unmet += !spec_allows(r.spec[k], r.devs[a[k]]);
            }
            bool ok = satisfies(&r, a, !r.soft);
            /* Soft placement warns once per spec it did not honour, strict never. */
            ok = ok && tgc_diags_count(d) == (size_t)unmet && (r.soft || unmet == 0);
            for (int32_t id = 0; id < g->n_nodes; id++) ok = ok && pl.device[id] >= 0 && pl.device[id] < r.n_devs;
            /* Deterministic. */
            tgc_placement again;
            tgc_diags *d2 = tgc_diags_create();
            ok = ok && tgc_placer_run(g, r.devs, r.n_devs, &opts, d2, &again) == TGC_OK &&
                 memcmp(again.device, pl.device, (size_t)g->n_nodes * sizeof *pl.device) == 0 &&
                 memcmp(again.reason, pl.reason, (size_t)g->n_nodes * sizeof *pl.reason) == 0;
            tgc_placement_release(&again);
            tgc_diags_free(d2);
            if (!ok || !possible) {
                fprintf(stderr, "\nplaced, but wrongly (possible: %d, soft: %d):\n%s", possible, r.soft, text);
                tgc_diags_print(d, stderr);
            }
            CU_ASSERT(ok && possible);
            placed++;
            relaxed += unmet > 0;
            tgc_placement_release(&pl);
        } else {
            bool ok = s == TGC_ERR_INVALID && tgc_diags_error_count(d) >= 1 && !possible;
            for (size_t i = 0; ok && i < tgc_diags_count(d); i++) {
                const char *rule = tgc_diag_rule(d, i);
                ok = strcmp(rule, "unlisted-device") == 0 || strcmp(rule, "no-kernel") == 0 ||
                     strcmp(rule, "placement-conflict") == 0;
                ok = ok && strstr(tgc_diag_message(d, i), "cannot place 'n") != NULL && tgc_diag_line(d, i) > 0;
            }
            if (!ok) {
                fprintf(stderr, "\nrefused, but a placement exists (soft: %d):\n%s", r.soft, text);
                tgc_diags_print(d, stderr);
            }
            CU_ASSERT(ok);
            refused++;
        }
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
    printf("\n  600 random graphs: %d placed (%d with relaxed specs), %d refused\n", placed, relaxed, refused);
    /* Both outcomes must be exercised for the test to mean anything. */
    CU_ASSERT(placed > 100 && refused > 100 && relaxed > 10);
}

/* ---- Out of memory ------------------------------------------------------------------------ */

static void place_survives_every_allocation_failure(const char *rel, const char *devices, tgc_status want) {
    tgc_graph *g = load(rel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_diags *d = tgc_diags_create();
    tgc_placed *p = NULL;
    int64_t before = tgc_host_alloc_stats_get().num_allocs;
    CU_ASSERT_EQUAL(tgc_graph_place(g, devices, &as_given, d, &p), want);
    int64_t total = tgc_host_alloc_stats_get().num_allocs - before;
    tgc_placed_free(p);
    tgc_diags_free(d);
    CU_ASSERT(total > 20);
    for (int64_t n = 1; n <= total; n++) {
        d = tgc_diags_create();
        tgc_host_alloc_fail_nth(n);
        tgc_status s = tgc_graph_place(g, devices, &as_given, d, &p);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(s == TGC_ERR_NOMEM || s == want);
        CU_ASSERT((s == TGC_OK) == (p != NULL));
        tgc_placed_free(p);
        tgc_diags_free(d);
    }
    tgc_graph_free(g);
}

static void test_place_survives_every_allocation_failure(void) {
    place_survives_every_allocation_failure("examples/digits/cnn.yaml", "cpu,gpu0", TGC_OK);
    place_survives_every_allocation_failure("tests/data/placer/multiple_conflicts.yaml", "cpu,gpu0", TGC_ERR_INVALID);
    place_survives_every_allocation_failure("tests/data/placer/coloc_conflict_chain.yaml", "cpu,gpu0",
                                            TGC_ERR_INVALID);
}

static void test_reason_names(void) {
    static const char *const want[] = {"spec",    "colocation", "kernel", "host-memory",
                                       "small-host", "default", "soft",   "consumer"};
    for (int r = TGC_PLACED_BY_SPEC; r <= TGC_PLACED_BY_CONSUMER; r++)
        CU_ASSERT_STRING_EQUAL(tgc_place_reason_name((tgc_place_reason)r), want[r]);
}

/* tgc_graph_place compiles as a session does: by default the passes run
 * first (a BatchNormalization after a Conv is folded into it: one Conv
 * named as the BatchNormalization, here bn), and the handle names the
 * optimized graph's nodes; TGC_OPTIMIZE_NONE places the graph as written.
 * Partitions accept the graph given or the one placed, and no other. */
static void test_placement_runs_the_passes(void) {
    static const char text[] = "format: tgc/1\n"
                               "name: conv_bn\n"
                               "inputs: [{name: x, dtype: float32, shape: [1, 1, 4, 4]}]\n"
                               "initializers:\n"
                               "  - {name: w, dtype: float32, shape: [1, 1, 1, 1], values: [2]}\n"
                               "  - {name: s, dtype: float32, shape: [1], values: [1]}\n"
                               "  - {name: b, dtype: float32, shape: [1], values: [0]}\n"
                               "  - {name: m, dtype: float32, shape: [1], values: [0]}\n"
                               "  - {name: v, dtype: float32, shape: [1], values: [1]}\n"
                               "nodes:\n"
                               "  - {name: conv, op: Conv, inputs: [x, w]}\n"
                               "  - {name: bn, op: BatchNormalization, inputs: [conv, s, b, m, v]}\n"
                               "outputs: [bn]\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL, *other = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, sizeof text - 1, "conv_bn.yaml", NULL, d, &g), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, sizeof text - 1, "conv_bn.yaml", NULL, d, &other), TGC_OK);
    tgc_placed *opt = NULL, *raw = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu", NULL, d, &opt), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu", &as_given, d, &raw), TGC_OK);
    CU_ASSERT_PTR_NOT_EQUAL(tgc_placed_graph(opt), g);
    CU_ASSERT_PTR_EQUAL(tgc_placed_graph(raw), g);
    CU_ASSERT_PTR_NULL(tgc_placed_device_name(opt, "conv")); /* folded away */
    CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(opt, "bn"), "cpu0");
    int32_t bn = tgc_graph_find(tgc_placed_graph(opt), "bn");
    CU_ASSERT_FATAL(bn >= 0);
    CU_ASSERT_STRING_EQUAL(tgc_placed_graph(opt)->nodes[bn].op_name, "Conv");
    CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(raw, "conv"), "cpu0");
    tgc_partitions *parts = NULL;
    CU_ASSERT_EQUAL(tgc_graph_partition(g, opt, d, &parts), TGC_OK);
    CU_ASSERT_EQUAL(tgc_partitions_count(parts), 1);
    CU_ASSERT_EQUAL(tgc_partitions_validate(parts, d), TGC_OK);
    tgc_partitions_free(parts);
    CU_ASSERT_EQUAL(tgc_graph_partition(tgc_placed_graph(opt), opt, d, &parts), TGC_OK);
    tgc_partitions_free(parts);
    parts = NULL;
    CU_ASSERT_EQUAL(tgc_graph_partition(other, opt, d, &parts), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(parts);
    CU_ASSERT(tgc_diags_count(d) == 1 && strstr(tgc_diag_message(d, 0), "another graph") != NULL);
    tgc_placed_free(opt);
    tgc_placed_free(raw);
    tgc_graph_free(g);
    tgc_graph_free(other);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("placer", {"kernel premises of the test graphs", test_kernel_premises},
              {"every placer graph places or fails as it says", test_every_placer_graph},
              {"digits cnn: shape arithmetic on cpu, convolutions on gpu0", test_digits_cnn_on_cpu_and_gpu},
              {"device lists", test_device_lists}, {"dumps and summary", test_dumps_and_summary},
              {"conflicts between kernels", test_kernel_conflicts},
              {"random graphs against brute force", test_random_graphs_against_brute_force},
              {"placement survives every allocation failure", test_place_survives_every_allocation_failure},
              {"reason names", test_reason_names},
              {"placement runs the passes, as a session's", test_placement_runs_the_passes})
