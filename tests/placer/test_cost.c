/* The cost model (placer/cost.h, docs/cost.md) against what it promises:
 * measured figures rank nodes as their work does, come back from the
 * cache unchanged, survive a corrupt or truncated cache file (rebuilt, not
 * trusted), need no device without `measure`, leave nothing behind on the
 * devices they ran on; transfers grow with their bytes (host <-> gpu0
 * measured where OpenCL offers a device); the estimate's
 * FLOPs are the hand-counted ones.
 *
 * No timing thresholds: a busy 2-core machine may slow any run by a few
 * times, so only orders of magnitude are compared (a 33 MFLOP GEMM against
 * a 16-element Relu is some 1000x apart; the test asks for 10x). Every
 * test points XDG_CACHE_HOME at a scratch folder of its own (with links to
 * the caller's OpenCL programs). */
#include "tests/harness.h"

#include "devices/device.h"
#include "graph/graph.h"
#include "graph/node_work.h"
#include "placer/cost.h"
#include "support/cpu_cache.h"
#include "support/settings.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char model_text[] =
    "format: tgc/1\n"
    "inputs:\n"
    "  - {name: a, dtype: float32, shape: [256, 256]}\n"
    "  - {name: b, dtype: float32, shape: [256, 256]}\n"
    "  - {name: s, dtype: float32, shape: [16]}\n"
    "  - {name: x, dtype: float32, shape: [1, 3, 8, 8]}\n"
    "  - {name: p, dtype: float32, shape: [2, 5]}\n"
    "  - {name: q, dtype: float32, shape: [5, 7]}\n"
    "  - {name: pt, dtype: float32, shape: [5, 2]}\n"
    "initializers:\n"
    "  - {name: w, dtype: float32, shape: [4, 3, 3, 3], values: [%s]}\n"
    "outputs: [gemm, relu, conv, mm, gt]\n"
    "nodes:\n"
    "  - {name: gemm, op: MatMul, inputs: [a, b]}\n"
    "  - {name: relu, op: Relu, inputs: [s]}\n"
    "  - {name: conv, op: Conv, inputs: [x, w], attrs: {pads: [1, 1, 1, 1]}}\n"
    "  - {name: mm, op: MatMul, inputs: [p, q]}\n"
    "  - {name: gt, op: Gemm, inputs: [pt, q], attrs: {transA: 1}}\n";

static char scratch[256];

/* A scratch cache folder, made the process's XDG_CACHE_HOME
 * (tgc_test_scratch_cache). */
static void scratch_cache(void) { CU_ASSERT_FATAL(tgc_test_scratch_cache(scratch, sizeof scratch)); }

/* The cost files in the scratch folder: how many, and the first's path. */
static int cost_files(char *first, size_t size) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tgc", scratch);
    DIR *d = opendir(dir);
    int n = 0;
    if (d == NULL) return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "cost-", 5) == 0 && strstr(e->d_name, ".tmp") == NULL) {
            if (n++ == 0 && first != NULL) snprintf(first, size, "%s/%s", dir, e->d_name);
        }
    closedir(d);
    return n;
}

static void remove_scratch(void) { tgc_test_scratch_cache_remove(scratch); }

/* model_text with its 108 weights. */
static tgc_graph *load_model(void) {
    char values[108 * 6], text[sizeof model_text + sizeof values];
    size_t len = 0;
    for (int i = 0; i < 108; i++) len += (size_t)snprintf(values + len, sizeof values - len, i ? ", %d" : "%d", i % 7);
    snprintf(text, sizeof text, model_text, values);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, strlen(text), "cost.yaml", NULL, d, &g) != TGC_OK)
        tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return g;
}

/* tgc_cost_model over `list` with pools of `threads` (tgc_cost_options). */
static tgc_cost_model *model_with(const char *list, const char *threads, bool measure) {
    tgc_diags *d = tgc_diags_create();
    tgc_placer_device devs[4];
    int n = 0;
    tgc_cost_model *m = NULL;
    tgc_cost_options o = {.threads = threads, .measure = measure};
    if (tgc_placer_parse_devices(list, devs, 4, &n, d) != TGC_OK || tgc_cost_model_create(devs, n, &o, d, &m) != TGC_OK)
        tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return m;
}

static tgc_cost_model *model_on(const char *list, bool measure) { return model_with(list, NULL, measure); }

/* A measured GEMM of 33.5 MFLOP costs far more than a Relu of 16 floats;
 * timing left nothing allocated on the device. */
static void test_gemm_ranks_above_elementwise(void) {
    scratch_cache();
    tgc_graph *g = load_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_cost_model *m = model_on("cpu", true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    bool mg = false, mr = false;
    double tg = tgc_cost_node(m, g, tgc_graph_find(g, "gemm"), 0, &mg);
    double tr = tgc_cost_node(m, g, tgc_graph_find(g, "relu"), 0, &mr);
    CU_ASSERT_TRUE(mg);
    CU_ASSERT_TRUE(mr);
    CU_ASSERT_TRUE(tr > 0);
    CU_ASSERT_TRUE(tg > 10 * tr);
    CU_ASSERT_EQUAL(tgc_cost_model_opened(m), 1);
    tgc_device *dev = tgc_cost_model_device(m, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    tgc_allocator_stats st = tgc_device_stats(dev);
    CU_ASSERT_EQUAL(st.bytes_in_use, 0);
    CU_ASSERT_EQUAL(st.live_buffers, 0);
    /* an input or initializer costs nothing */
    CU_ASSERT_EQUAL(tgc_cost_node(m, g, tgc_graph_find(g, "a"), 0, NULL), 0);
    tgc_cost_model_free(m);
    tgc_graph_free(g);
    remove_scratch();
}

/* Measured once, the figure comes back from the cache file, unchanged,
 * without opening a device. */
static void test_second_figure_from_cache(void) {
    scratch_cache();
    tgc_graph *g = load_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    int32_t conv = tgc_graph_find(g, "conv");
    tgc_cost_model *m = model_on("cpu", true);
    bool measured = false;
    double first = tgc_cost_node(m, g, conv, 0, &measured);
    CU_ASSERT_TRUE(measured);
    CU_ASSERT_TRUE(first > 0);
    tgc_cost_model_free(m); /* saves */
    char path[1024] = "";
    CU_ASSERT_EQUAL(cost_files(path, sizeof path), 1);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);

    m = model_on("cpu", true);
    measured = false;
    double again = tgc_cost_node(m, g, conv, 0, &measured);
    CU_ASSERT_TRUE(measured);
    CU_ASSERT_EQUAL(again, first); /* the same bits: %a in the file */
    CU_ASSERT_EQUAL(tgc_cost_model_opened(m), 0);
    tgc_cost_model_free(m);

    /* cpu0 and cpu1 of one width share the figures */
    m = model_on("cpu0,cpu1", false);
    CU_ASSERT_EQUAL(tgc_cost_node(m, g, conv, 1, &measured), first);
    CU_ASSERT_TRUE(measured);
    tgc_cost_model_free(m);

    /* TGC_COST_REFRESH=1: the file is not read */
    setenv("TGC_COST_REFRESH", "1", 1);
    tgc_settings_read();
    m = model_on("cpu", false);
    tgc_cost_node(m, g, conv, 0, &measured);
    CU_ASSERT_FALSE(measured);
    tgc_cost_model_free(m);
    unsetenv("TGC_COST_REFRESH");
    tgc_settings_read();
    /* ... and, nothing measured, not replaced either */
    m = model_on("cpu", false);
    CU_ASSERT_EQUAL(tgc_cost_node(m, g, conv, 0, &measured), first);
    CU_ASSERT_TRUE(measured);
    tgc_cost_model_free(m);
    tgc_graph_free(g);
    remove_scratch();
}

static void write_file(const char *path, const char *text, size_t n) {
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(text, 1, n, f);
    fclose(f);
}


/* The cost file at path with every node line's figure set: `cold` for a
 * key ending in " cold", `warm` for the others. */
static void set_figures(const char *path, const char *warm, const char *cold) {
    static char in[65536], out[65536 + 4096];
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n = fread(in, 1, sizeof in - 1, f), at = 0;
    fclose(f);
    in[n] = '\0';
    for (char *line = strtok(in, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        const char *key = strncmp(line, "node ", 5) == 0 ? strchr(line + 5, ' ') : NULL;
        if (key == NULL) at += (size_t)snprintf(out + at, sizeof out - at, "%s\n", line);
        else {
            size_t len = strlen(key);
            bool is_cold = len > 5 && strcmp(key + len - 5, " cold") == 0;
            at += (size_t)snprintf(out + at, sizeof out - at, "node %s%s\n", is_cold ? cold : warm, key);
        }
    }
    write_file(path, out, at);
}

/* A step whose reads miss the cache: the node's cold figure (its runs
 * started from emptied caches) is timed and cached under a key of its own
 * (" cold" after the warm key), and a spill of s gives warm + s x (cold -
 * warm) / the pool's width of the two cached figures (a pool's threads
 * wait on their misses at once); spill 0 is the warm figure. With figures
 * set by hand (warm 2^-10, cold 2^-8 s) on a pool of 2: spill 1 gives
 * 2^-10 + 3 x 2^-10 / 2 = 2.5 x 2^-10, spill 0.5 1.75 x 2^-10. The share of
 * reads that miss, by hand from the cache size c: none for a working set
 * of c / 4 or c / 2, 1 - (c / 2) / c = 0.5 for c, 0.75 for 2c. */
static void test_cold_figure(void) {
    scratch_cache();
    tgc_graph *g = load_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    int32_t conv = tgc_graph_find(g, "conv");
    tgc_cost_model *m = model_with("cpu", "cpu0=2", true);
    bool measured = false;
    double warm = tgc_cost_node(m, g, conv, 0, &measured);
    CU_ASSERT_TRUE(measured);
    double spilled = tgc_cost_node_spilled(m, g, conv, 0, 1, &measured);
    CU_ASSERT_TRUE(measured);
    CU_ASSERT_TRUE(spilled >= warm);
    CU_ASSERT_EQUAL(tgc_cost_node_spilled(m, g, conv, 0, 0, NULL), warm);
    tgc_cost_model_free(m); /* saves both */
    char path[1024] = "", text[65536];
    CU_ASSERT_EQUAL_FATAL(cost_files(path, sizeof path), 1);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    int64_t cache = tgc_last_level_cache_bytes();
    if (cache > 0) {
        CU_ASSERT_PTR_NOT_NULL(strstr(text, " cold\n")); /* the cold figure, cached */
        set_figures(path, "0x1p-10", "0x1p-8");
        m = model_with("cpu", "cpu0=2", false); /* from the file alone */
        CU_ASSERT_EQUAL(tgc_cost_node(m, g, conv, 0, NULL), 0x1p-10);
        CU_ASSERT_EQUAL(tgc_cost_node_spilled(m, g, conv, 0, 1, NULL), 2.5 * 0x1p-10);
        CU_ASSERT_EQUAL(tgc_cost_node_spilled(m, g, conv, 0, 0.5, NULL), 1.75 * 0x1p-10);
        tgc_cost_model_free(m);
    }
    m = model_with("cpu", "cpu0=2", false);
    double c = (double)cache;
    CU_ASSERT_EQUAL(tgc_cost_spill(m, c / 4), 0);
    CU_ASSERT_EQUAL(tgc_cost_spill(m, c / 2), 0);
    if (cache > 0) {
        CU_ASSERT_DOUBLE_EQUAL(tgc_cost_spill(m, c), 0.5, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(tgc_cost_spill(m, 2 * c), 0.75, 1e-12);
    }
    tgc_cost_model_free(m);
    tgc_graph_free(g);
    remove_scratch();
}


static char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *buf = malloc(1 << 20);
    *n = buf != NULL ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return buf;
}

/* A file cut short, one with a line changed, and one of garbage: none is
 * trusted (figures are estimates), and measuring again rebuilds it. */
static void test_corrupt_cache_rebuilt(void) {
    scratch_cache();
    tgc_graph *g = load_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    int32_t mm = tgc_graph_find(g, "mm");
    tgc_cost_model *m = model_on("cpu", true);
    bool measured = false;
    tgc_cost_node(m, g, mm, 0, &measured);
    CU_ASSERT_TRUE(measured);
    tgc_cost_model_free(m);
    char path[1024];
    CU_ASSERT_EQUAL_FATAL(cost_files(path, sizeof path), 1);
    size_t n = 0;
    char *good = read_file(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    good[n] = '\0';
    CU_ASSERT_PTR_NOT_NULL(strstr(good, "\nnode "));

    char *changed = strdup(good);
    char *node = strstr(changed, "\nnode 0x");
    CU_ASSERT_PTR_NOT_NULL_FATAL(node);
    node[6] = '-'; /* a negative time */
    const char garbage[] = "tgc-cost 1\nid \xff\xfe\nnode nan x\n\0\0\0";
    struct {
        const char *text;
        size_t n;
    } bad[] = {{good, n / 2}, {good, n - 1}, {changed, n}, {garbage, sizeof garbage - 1}, {"", 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i].text, bad[i].n);
        m = model_on("cpu", false);
        measured = true;
        tgc_cost_node(m, g, mm, 0, &measured);
        CU_ASSERT_FALSE(measured);
        CU_ASSERT_EQUAL(tgc_cost_model_opened(m), 0);
        tgc_cost_model_free(m);
        /* measuring again writes a whole file, which reads back */
        m = model_on("cpu", true);
        tgc_cost_node(m, g, mm, 0, &measured);
        CU_ASSERT_TRUE(measured);
        tgc_cost_model_free(m);
        m = model_on("cpu", false);
        measured = false;
        tgc_cost_node(m, g, mm, 0, &measured);
        CU_ASSERT_TRUE(measured);
        tgc_cost_model_free(m);
    }
    free(changed);
    free(good);
    tgc_graph_free(g);
    remove_scratch();
}

/* measure off and an empty cache: estimates, no device opened, and the
 * roofline ranks the GEMM above the Relu too. */
static void test_estimates_without_devices(void) {
    scratch_cache();
    tgc_graph *g = load_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_cost_model *m = model_on("cpu,gpu0", false); /* a gpu0 this machine may lack: never opened */
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    for (int d = 0; d < 2; d++) {
        bool mg = true, mr = true;
        double tg = tgc_cost_node(m, g, tgc_graph_find(g, "gemm"), d, &mg);
        double tr = tgc_cost_node(m, g, tgc_graph_find(g, "relu"), d, &mr);
        CU_ASSERT_FALSE(mg);
        CU_ASSERT_FALSE(mr);
        CU_ASSERT_TRUE(tg > tr && tr > 0);
    }
    CU_ASSERT_EQUAL(tgc_cost_model_opened(m), 0);
    CU_ASSERT_PTR_NULL(tgc_cost_model_device(m, 0));
    tgc_cost_model_free(m);
    CU_ASSERT_EQUAL(cost_files(NULL, 0), 0); /* nothing measured, nothing written */
    tgc_graph_free(g);
    remove_scratch();
}

/* Transfers: nothing on one device; more bytes cost more, measured or not;
 * another process's device is an estimate, larger still. */
static void test_transfers(void) {
    scratch_cache();
    const bool modes[] = {false, true};
    for (int i = 0; i < 2; i++) {
        tgc_cost_model *m = model_on("cpu0,cpu1,/task:1/cpu0", modes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(tgc_cost_transfer(m, 0, 0, 1 << 20), 0);
        double small = tgc_cost_transfer(m, 0, 1, 1024), large = tgc_cost_transfer(m, 0, 1, 64 << 20);
        CU_ASSERT_TRUE(small > 0);
        CU_ASSERT_TRUE(large > small);
        CU_ASSERT_TRUE(tgc_cost_transfer(m, 1, 0, 64 << 20) > small);
        CU_ASSERT_TRUE(tgc_cost_transfer(m, 0, 2, 64 << 20) > tgc_cost_transfer(m, 0, 2, 1024));
        tgc_cost_model_free(m);
    }
    /* measured once: the figures come from the file after that */
    tgc_cost_model *m = model_on("cpu0,cpu1", true);
    CU_ASSERT_EQUAL(tgc_cost_model_opened(m), 0);
    tgc_cost_model_free(m);
    if (tgc_test_has_opencl_device()) { /* host <-> gpu0 measured (opening gpu0), then from the file */
        for (int i = 0; i < 2; i++) {
            m = model_on("cpu,gpu0", true);
            CU_ASSERT_PTR_NOT_NULL_FATAL(m);
            CU_ASSERT_EQUAL(tgc_cost_model_opened(m), i == 0 ? 1 : 0);
            CU_ASSERT_TRUE(tgc_cost_transfer(m, 0, 1, 64 << 20) > tgc_cost_transfer(m, 0, 1, 1024));
            CU_ASSERT_TRUE(tgc_cost_transfer(m, 1, 0, 64 << 20) > tgc_cost_transfer(m, 1, 0, 1024));
            CU_ASSERT_TRUE(tgc_cost_transfer(m, 1, 0, 1024) > 0);
            tgc_cost_model_free(m);
        }
    }
    remove_scratch();
}

/* The estimate's work against hand counts. */
static void test_flops_by_hand(void) {
    tgc_graph *g = load_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    double flops, bytes;
    /* Conv: out [1,4,8,8] = 256 elements, each 3*3*3 = 27 multiply-adds */
    tgc_node_work(g, tgc_graph_find(g, "conv"), &flops, &bytes);
    CU_ASSERT_DOUBLE_EQUAL(flops, 2.0 * 256 * 27, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(bytes, 4.0 * (192 + 108 + 256), 1e-9);
    /* MatMul [2,5] x [5,7]: 14 outputs, K = 5 */
    tgc_node_work(g, tgc_graph_find(g, "mm"), &flops, &bytes);
    CU_ASSERT_DOUBLE_EQUAL(flops, 2.0 * 14 * 5, 1e-9);
    /* Gemm transA, A [5,2]: K is A's first dim, 5 */
    tgc_node_work(g, tgc_graph_find(g, "gt"), &flops, &bytes);
    CU_ASSERT_DOUBLE_EQUAL(flops, 2.0 * 14 * 5, 1e-9);
    /* MatMul 256^3 */
    tgc_node_work(g, tgc_graph_find(g, "gemm"), &flops, &bytes);
    CU_ASSERT_DOUBLE_EQUAL(flops, 2.0 * 256 * 256 * 256, 1e-9);
    tgc_graph_free(g);
}

/* A threads spec the executor would refuse is refused here too. */
static void test_bad_threads(void) {
    tgc_placer_device dev = {0, 0, 0};
    tgc_diags *d = tgc_diags_create();
    tgc_cost_model *m = NULL;
    tgc_cost_options o = {.threads = "cpu0=0"};
    CU_ASSERT_EQUAL(tgc_cost_model_create(&dev, 1, &o, d, &m), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(tgc_diags_count(d), 1);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("cost", {"gemm_ranks_above_elementwise", test_gemm_ranks_above_elementwise},
              {"second_figure_from_cache", test_second_figure_from_cache}, {"cold_figure", test_cold_figure},
              {"corrupt_cache_rebuilt", test_corrupt_cache_rebuilt},
              {"estimates_without_devices", test_estimates_without_devices}, {"transfers", test_transfers},
              {"flops_by_hand", test_flops_by_hand}, {"bad_threads", test_bad_threads})
