/* Memory is a hard limit: a session refuses, before it loads anything, a
 * plan some device cannot hold, naming per device what it would need and
 * what it has; a limit just above the need is taken and the run's
 * measured peak stays within it. The figures are checked against sizes
 * worked out by hand from the graph, not against tgc's own output.
 *
 * The graph: x [1000] float32 (fed), c [1000] float32 (a weight),
 * y = Add(x, c), z = Relu(y), output z. By hand, on one cpu:
 *   weights      1000 x 4 = 4000 bytes (c)
 *   activations  y, 4000 bytes; Relu overwrites y in place (y's last
 *                reader), so z shares its buffer: 4000 bytes
 *   kernel caches and workspaces: none (Add and Relu keep nothing)
 *   need         8000 bytes
 * The feed is the caller's host memory, read in place: not counted. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMS 1000
#define WEIGHTS (ELEMS * 4)
#define NEED (WEIGHTS + ELEMS * 4)

/* The usable bytes of a limit: less the 5% margin (docs/memory.md). */
static int64_t usable(int64_t limit) { return limit - limit / 100 * 5; }

static tgc_graph *load_graph(tgc_diags *d) {
    size_t size = 64 * ELEMS + 1024, at = 0;
    char *text = malloc(size);
    at += (size_t)snprintf(text + at, size - at,
                           "format: tgc/1\nname: add_relu\ninputs:\n  - {name: x, dtype: float32, shape: [%d]}\n"
                           "outputs: [z]\ninitializers:\n  - {name: c, dtype: float32, shape: [%d], values: [",
                           ELEMS, ELEMS);
    for (int i = 0; i < ELEMS; i++) at += (size_t)snprintf(text + at, size - at, "%s%d", i ? ", " : "", i % 7 - 3);
    at += (size_t)snprintf(text + at, size - at,
                           "]}\nnodes:\n  - {name: y, op: Add, inputs: [x, c]}\n  - {name: z, op: Relu, inputs: [y]}\n");
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, at, "add_relu.yaml", NULL, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    free(text);
    return g;
}

static bool any_message_has(tgc_diags *d, const char *want) {
    for (size_t i = 0; i < tgc_diags_count(d); i++)
        if (strstr(tgc_diag_message(d, i), want) != NULL) return true;
    return false;
}

static tgc_status create(tgc_graph *g, int64_t limit, tgc_diags *d, tgc_session **s) {
    char spec[64];
    snprintf(spec, sizeof spec, "cpu0=%" PRId64, limit);
    tgc_session_options o = {.memory_limits = spec, .optimize = TGC_OPTIMIZE_NONE};
    return tgc_session_create(g, "cpu", &o, d, s);
}

/* A limit whose usable bytes are one short of the need: refused, with
 * the figures per category, and nothing allocated on any device. */
static void test_over_the_limit_is_refused(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = load_graph(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    int64_t limit = 8000; /* usable 7600 < 8000 */
    CU_ASSERT(usable(limit) < NEED);
    tgc_memory_info before = tgc_memory();
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL(create(g, limit, d, &s), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_EQUAL(tgc_diags_error_count(d), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 0), "over-memory");
    printf("\n  %s\n", tgc_diag_message(d, 0));
    char want[256];
    snprintf(want, sizeof want,
             "cpu0 [does not fit] needs %d bytes (7.8 KiB): weights %d + kernel caches 0 + activations %d", NEED,
             WEIGHTS, ELEMS * 4);
    CU_ASSERT_TRUE(any_message_has(d, want));
    CU_ASSERT_TRUE(any_message_has(d, "it has 7.8 KiB by --memory-limit (less the 5% margin: 7.4 KiB usable)"));
    CU_ASSERT_TRUE(any_message_has(d, "nothing was loaded"));
    tgc_memory_info after = tgc_memory();
    CU_ASSERT_EQUAL(after.host.bytes_in_use, before.host.bytes_in_use);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* The smallest limit whose usable bytes hold the need: the session is
 * made, runs, and the device's measured peak stays within the limit. */
static void test_just_under_the_limit_runs(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = load_graph(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    int64_t limit = NEED;
    while (usable(limit) < NEED) limit++;
    CU_ASSERT(usable(limit - 1) < NEED); /* the refusal above sits right below */
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(create(g, limit, d, &s), TGC_OK);
    int64_t dims[1] = {ELEMS};
    float *xs = calloc(ELEMS, sizeof *xs);
    tgc_tensor *x = NULL, *z = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 1, dims, xs, &x), TGC_OK);
    const char *names[] = {"x"};
    CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &z, d), TGC_OK);
    tgc_memory_figures f = tgc_session_memory(s, 0);
    printf("\n  limit %" PRId64 ", measured peak %" PRId64 "\n", limit, f.peak_bytes_in_use);
    CU_ASSERT(f.peak_bytes_in_use >= NEED); /* the weight and y were both there */
    CU_ASSERT(f.peak_bytes_in_use <= limit);
    tgc_tensor_release(z);
    tgc_tensor_release(x);
    free(xs);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Without a limit, the cpu has the host's memory: the same graph fits. */
static void test_no_limit_fits(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = load_graph(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL(tgc_session_create(g, "cpu", NULL, d, &s), TGC_OK);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* On a gpu, a MatMul [2, 1, 1, 64] x [3, 64, 64] (W a weight with a batch
 * of its own that A's batch broadcasts against: six products whose
 * operands are not one after another) runs one CLBlastSgemm per product,
 * whose temporary buffer comes from the device's allocator and is counted
 * as a workspace, bounded by hand: A, B and C each padded to 128 x 128
 * floats (CLBlast's largest tile), 3 x 128 x 128 + 32 floats = 196736
 * bytes. A limit below weights + output + that is refused with the
 * workspace named. */
static void test_gpu_gemm_workspace(void) {
    tgc_device_info info[4];
    bool has_gpu = false;
    for (int i = 0, n = tgc_devices_list(info, 4); i < n && i < 4; i++) has_gpu |= strcmp(info[i].name, "gpu0") == 0;
    if (!has_gpu) {
        printf("\n  notice: no gpu0; skipped\n");
        return;
    }
    size_t size = 8 * 3 * 64 * 64 + 1024, at = 0;
    char *text = malloc(size);
    at += (size_t)snprintf(text + at, size - at,
                           "format: tgc/1\ninputs:\n  - {name: x, dtype: float32, shape: [2, 1, 1, 64]}\noutputs: [y]\n"
                           "initializers:\n  - {name: w, dtype: float32, shape: [3, 64, 64], values: [");
    for (int i = 0; i < 3 * 64 * 64; i++) at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", i % 5);
    at += (size_t)snprintf(text + at, size - at, "]}\nnodes:\n  - {name: y, op: MatMul, inputs: [x, w]}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, at, "mm.yaml", NULL, d, &g), TGC_OK);
    free(text);
    /* weights 49152, the feed's copy 512, the output 1536, the workspace 196736: about 248 KB. */
    tgc_session_options o = {.memory_limits = "gpu0=100000", .optimize = TGC_OPTIMIZE_NONE};
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL(tgc_session_create(g, "gpu0", &o, d, &s), TGC_ERR_INVALID);
    CU_ASSERT(any_message_has(d, "workspaces 196736"));
    if (!any_message_has(d, "workspaces 196736")) tgc_diags_print(d, stderr);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A limit bounds a kernel's workspace (devices/memory_limit.h: a
 * sixteenth of the device's limit a run). A Conv of 16 -> 64 channels, 3x3,
 * pads 1, over x [1, 16, 55, 55] (SqueezeNet's fire2 expand layer) runs as
 * Winograd F(2x2, 3x3), whose whole image's transformed tiles take
 * 16 x 784 x (16 + 64) floats = 4,014,080 bytes by hand. On one thread
 * under a limit of 1,200,000 bytes (usable 1,140,000) the weight's
 * transformed filters (16 x 1152 floats, 73,728 bytes), y (64 x 55 x 55
 * floats, 774,400 bytes) and the tiles in bands of one tile row (16 x 28
 * x 80 floats, 143,360 bytes, with a few KiB of rows) fit; the whole
 * image's tiles would not. The session is made, its measured peak stays
 * within the limit, and y is an unlimited session's (within 1e-5: bands
 * multiplied by OpenBLAS round differently; bit for bit under oneDNN,
 * devices/test_cpu_fast_paths). */
static void test_limit_bounds_a_workspace(void) {
    size_t size = 8 * 64 * 16 * 9 + 1024, at = 0;
    char *text = malloc(size);
    at += (size_t)snprintf(text + at, size - at,
                           "format: tgc/1\ninputs:\n  - {name: x, dtype: float32, shape: [1, 16, 55, 55]}\n"
                           "outputs: [y]\ninitializers:\n"
                           "  - {name: w, dtype: float32, shape: [64, 16, 3, 3], values: [");
    for (int i = 0; i < 64 * 16 * 9; i++)
        at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", i % 7 - 3);
    at += (size_t)snprintf(text + at, size - at,
                           "]}\nnodes:\n  - {name: y, op: Conv, inputs: [x, w], attrs: {pads: [1, 1, 1, 1]}}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, at, "conv.yaml", NULL, d, &g), TGC_OK);
    free(text);
    const int64_t limit = 1200000;
    tgc_session_options limited = {.memory_limits = "cpu0=1200000", .threads = "cpu0=1",
                                   .optimize = TGC_OPTIMIZE_NONE};
    tgc_session_options free_run = {.threads = "cpu0=1", .optimize = TGC_OPTIMIZE_NONE};
    tgc_session *s = NULL, *whole = NULL;
    tgc_status st = tgc_session_create(g, "cpu", &limited, d, &s);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &free_run, d, &whole), TGC_OK);
    int64_t dims[4] = {1, 16, 55, 55};
    float *xs = malloc(16 * 55 * 55 * sizeof *xs);
    for (int i = 0; i < 16 * 55 * 55; i++) xs[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    tgc_tensor *x = NULL, *y = NULL, *y_whole = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 4, dims, xs, &x), TGC_OK);
    const char *names[] = {"x"};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, &x, &y, d), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(whole, 1, names, &x, &y_whole, d), TGC_OK);
    tgc_memory_figures f = tgc_session_memory(s, 0);
    printf("\n  limit %" PRId64 ", measured peak %" PRId64 "\n", limit, f.peak_bytes_in_use);
    CU_ASSERT(f.peak_bytes_in_use >= 774400 && f.peak_bytes_in_use <= limit);
    const float *got = tgc_tensor_data(y), *want = tgc_tensor_data(y_whole);
    int far = 0;
    for (int i = 0; i < 64 * 55 * 55; i++) far += fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i]));
    CU_ASSERT_EQUAL(far, 0);
    tgc_tensor_release(y);
    tgc_tensor_release(y_whole);
    tgc_tensor_release(x);
    free(xs);
    tgc_session_free(s);
    tgc_session_free(whole);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("memory_fit", {"a plan over the limit is refused with its figures", test_over_the_limit_is_refused},
              {"a plan just under the limit runs within it", test_just_under_the_limit_runs},
              {"without a limit the host's memory holds it", test_no_limit_fits},
              {"a gpu's CLBlast temporary buffer is a workspace", test_gpu_gemm_workspace},
              {"a limit bounds a convolution's workspace", test_limit_bounds_a_workspace})
