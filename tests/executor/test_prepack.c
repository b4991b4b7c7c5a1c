/* Weights held once: a weight that a kernel keeps in its own layout is
 * laid out while the session is made, and the original goes when nothing
 * else reads it (executor/prepack.c). Figures are counted by hand from the
 * graph; outputs are checked against plain loops written here.
 *
 * The graph, on one cpu:
 *   y = MatMul(x [8, 256], W [256, 256])   oneDNN packs W: W replaced
 *   z = MatMul(y, V [256, 256])            packs V too, but
 *   r = Relu(V)                            reads V as it is: V stays
 *   c = Conv(img [1, 32, 14, 14], K [32, 32, 3, 3], pads 1)
 *                                          the filters in the way's own
 *                                          layout (oneDNN's, or Winograd's
 *                                          without it): K replaced
 * By hand: W and V are 262144 bytes each, K 36864. With oneDNN, the cpu
 * holds V alone (262144) and 299008 bytes of weights are replaced;
 * without it, W and V stay and K alone (36864) is replaced. Integer
 * convolutions (test_int8_weights_read_in_place): a uint8 W is replaced
 * by its shifted copy, an int8 W is read where it lies. A weight the
 * optimizations left behind (a folded Cast's float16 source) goes when the
 * session is made (test_weights_left_behind_go). */
#include "tests/harness.h"

#include "tgc.h"

#include "devices/cpu/gemm_packed.h"
#include "graph/graph.h"
#include "support/alloc.h"

#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
#define ROWS 8
#define CH 32
#define HW 14
#define MAT_BYTES (N * N * 4)
#define K_BYTES (CH * CH * 9 * 4)

static float x_at(int i) { return (float)(i % 5 - 2); }
static float w_at(int i) { return (float)(i * 7 % 5 - 2); }
static float v_at(int i) { return (float)(i * 3 % 7 - 3); }
static float k_at(int i) { return (float)(i % 3 - 1); }
static float img_at(int i) { return (float)(i % 4) - 1.5f; }

static size_t put_values(char *text, size_t at, size_t size, int count, float (*at_fn)(int)) {
    for (int i = 0; i < count; i++) at += (size_t)snprintf(text + at, size - at, "%s%g", i ? "," : "", at_fn(i));
    return at;
}

static tgc_graph *load_graph(tgc_diags *d) {
    size_t size = (size_t)(2 * N * N + CH * CH * 9) * 8 + 4096, at = 0;
    char *text = malloc(size);
    at += (size_t)snprintf(text + at, size - at,
                           "format: tgc/1\nname: prepack\ninputs:\n"
                           "  - {name: x, dtype: float32, shape: [%d, %d]}\n"
                           "  - {name: img, dtype: float32, shape: [1, %d, %d, %d]}\n"
                           "outputs: [z, r, c]\ninitializers:\n"
                           "  - {name: W, dtype: float32, shape: [%d, %d], values: [",
                           ROWS, N, CH, HW, HW, N, N);
    at = put_values(text, at, size, N * N, w_at);
    at += (size_t)snprintf(text + at, size - at, "]}\n  - {name: V, dtype: float32, shape: [%d, %d], values: [", N, N);
    at = put_values(text, at, size, N * N, v_at);
    at += (size_t)snprintf(text + at, size - at,
                           "]}\n  - {name: K, dtype: float32, shape: [%d, %d, 3, 3], values: [", CH, CH);
    at = put_values(text, at, size, CH * CH * 9, k_at);
    at += (size_t)snprintf(text + at, size - at,
                           "]}\nnodes:\n  - {name: y, op: MatMul, inputs: [x, W]}\n"
                           "  - {name: z, op: MatMul, inputs: [y, V]}\n  - {name: r, op: Relu, inputs: [V]}\n"
                           "  - {name: c, op: Conv, inputs: [img, K], attrs: {pads: [1, 1, 1, 1]}}\n");
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, at, "prepack.yaml", NULL, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    free(text);
    return g;
}

/* z = (x W) V and c = Conv(img, K) by plain loops. */
static void reference(float *z, float *c) {
    static float y[ROWS * N];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += (double)x_at(i * N + k) * w_at(k * N + j);
            y[i * N + j] = (float)s;
        }
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += (double)y[i * N + k] * v_at(k * N + j);
            z[i * N + j] = (float)s;
        }
    for (int m = 0; m < CH; m++)
        for (int oy = 0; oy < HW; oy++)
            for (int ox = 0; ox < HW; ox++) {
                double s = 0;
                for (int ch = 0; ch < CH; ch++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = oy + ky - 1, ix = ox + kx - 1;
                            if (iy < 0 || iy >= HW || ix < 0 || ix >= HW) continue;
                            s += (double)img_at((ch * HW + iy) * HW + ix) * k_at(((m * CH + ch) * 3 + ky) * 3 + kx);
                        }
                c[(m * HW + oy) * HW + ox] = (float)s;
            }
}

typedef struct run_result {
    int64_t in_use_after_create;
    int64_t replaced; /* the report's "weights replaced", 0 when absent */
    bool peak_predicted; /* the report's predicted peak equals the measured one */
    bool caches_predicted; /* and its predicted kernel caches the measured ones */
    float z[ROWS * N], c[CH * HW * HW];
} run_result;

/* The report line `name` 's first number, -1 when absent. */
static int64_t report_figure(const char *report, const char *name) {
    const char *p = strstr(report, name);
    return p != NULL ? strtoll(p + strlen(name), NULL, 10) : -1;
}

/* Makes a session over g (release: the leave to free g's replaced data),
 * runs it twice, and reads its figures and outputs into *r. */
static void run_session(tgc_graph *g, bool release, run_result *r) {
    tgc_diags *d = tgc_diags_create();
    /* one thread: the nodes run in the schedule the plan assumes (with a pool, independent nodes can finish
     * in another order under load, and the peak differ from the plan by a tensor) */
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_NONE, .memory_report = 1, .release_weights = release,
                             .threads = "cpu0=1"};
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, d, &s), TGC_OK);
    r->in_use_after_create = tgc_session_memory(s, 0).bytes_in_use;
    static float xs[ROWS * N], imgs[CH * HW * HW];
    for (int i = 0; i < ROWS * N; i++) xs[i] = x_at(i);
    for (int i = 0; i < CH * HW * HW; i++) imgs[i] = img_at(i);
    int64_t xd[2] = {ROWS, N}, id[4] = {1, CH, HW, HW};
    tgc_tensor *in[2] = {NULL, NULL}, *out[3] = {NULL, NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, xd, xs, &in[0]), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 4, id, imgs, &in[1]), TGC_OK);
    const char *names[] = {"x", "img"};
    for (int step = 0; step < 2; step++) {
        for (int i = 0; i < 3; i++) tgc_tensor_release(out[i]), out[i] = NULL;
        CU_ASSERT_EQUAL(tgc_session_run(s, 2, names, in, out, d), TGC_OK);
    }
    if (out[0] != NULL) memcpy(r->z, tgc_tensor_data(out[0]), sizeof r->z);
    if (out[2] != NULL) memcpy(r->c, tgc_tensor_data(out[2]), sizeof r->c);
    /* r = Relu(V) read V itself */
    const float *rv = out[1] != NULL ? tgc_tensor_data(out[1]) : NULL;
    for (int i = 0; rv != NULL && i < N * N; i++)
        if (rv[i] != fmaxf(v_at(i), 0.0f)) {
            CU_FAIL("Relu(V) differs from V's values");
            break;
        }
    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len);
    CU_ASSERT_EQUAL(tgc_session_memory_report(s, f), TGC_OK);
    fclose(f);
    r->replaced = report_figure(report, "weights replaced");
    if (r->replaced < 0) r->replaced = 0;
    r->peak_predicted = report_figure(report, "predicted peak") == report_figure(report, "peak bytes in use");
    if (!r->peak_predicted) fputs(report, stderr); /* what differed */
    const char *need = strstr(report, "predicted need");
    r->caches_predicted = need != NULL && report_figure(need, "kernel caches") == report_figure(report, "\n  kernel caches");
    free(report);
    for (int i = 0; i < 3; i++) tgc_tensor_release(out[i]);
    tgc_tensor_release(in[0]);
    tgc_tensor_release(in[1]);
    tgc_session_free(s);
    tgc_diags_free(d);
}

static bool close_to(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++)
        if (fabsf(got[i] - want[i]) > tol * (1.0f + fabsf(want[i]))) {
            printf("\n  element %d: %g, want %g\n", i, got[i], want[i]);
            return false;
        }
    return true;
}

/* The cpu holds the weights no kernel replaced, the report says what was
 * replaced, its prediction is the measurement, the outputs are right, and
 * with leave the graph's replaced data is freed while V's stays. */
static void test_replaced_weights_are_held_once(void) {
    static float z_ref[ROWS * N], c_ref[CH * HW * HW];
    reference(z_ref, c_ref);
    bool packs = tgc_packed_gemm_available();
    int64_t held = packs ? MAT_BYTES : 2 * MAT_BYTES, replaced = packs ? MAT_BYTES + K_BYTES : K_BYTES;
    printf("\n  oneDNN %s: expecting %" PRId64 " bytes held, %" PRId64 " replaced\n", packs ? "on" : "off", held,
           replaced);

    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = load_graph(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
    static run_result r;
    run_session(g, true, &r);
    CU_ASSERT_EQUAL(r.in_use_after_create, held);
    CU_ASSERT_EQUAL(r.replaced, replaced);
    CU_ASSERT_TRUE(r.peak_predicted);
    CU_ASSERT_TRUE(r.caches_predicted);
    CU_ASSERT_TRUE(close_to(r.z, z_ref, ROWS * N, 0.0f)); /* integers below 2^24: exact */
    CU_ASSERT_TRUE(close_to(r.c, c_ref, CH * HW * HW, 1e-5f)); /* the way's sums round */
    const tgc_const *w = g->nodes[tgc_graph_find(g, "W")].data, *v = g->nodes[tgc_graph_find(g, "V")].data,
                    *k = g->nodes[tgc_graph_find(g, "K")].data;
    CU_ASSERT_EQUAL(w->released, packs);
    CU_ASSERT_EQUAL(w->data == NULL, packs);
    CU_ASSERT_TRUE(k->released && k->data == NULL);
    CU_ASSERT_TRUE(!v->released && v->data != NULL);
    /* Freed and released: the host holds what it held before, less the data let go. */
    tgc_host_alloc_stats after = tgc_host_alloc_stats_get();
    printf("  host bytes: %" PRId64 " before the session, %" PRId64 " after it\n", before.live_bytes,
           after.live_bytes);
    CU_ASSERT_EQUAL(after.live_bytes, before.live_bytes - (packs ? MAT_BYTES : 0) - K_BYTES);
    /* g is now only to be freed: another session over it is refused by name. */
    tgc_session *again = NULL;
    CU_ASSERT_EQUAL(tgc_session_create(g, "cpu", NULL, d, &again), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(again);
    CU_ASSERT(tgc_diags_count(d) > 0 && strcmp(tgc_diag_rule(d, tgc_diags_count(d) - 1), "weights-released") == 0);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* TGC_NO_PREPACK=1: the originals stay beside the layouts, the graph is
 * left whole, and the outputs are bitwise those of a prepacked session. */
static void test_without_prepack_the_weights_stay(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = load_graph(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    static run_result packed, plain;
    run_session(g, false, &packed);
    CU_ASSERT_FALSE(g->nodes[tgc_graph_find(g, "W")].data->released); /* no leave: g untouched */
    CU_ASSERT_PTR_NOT_NULL(g->nodes[tgc_graph_find(g, "K")].data->data);
    setenv("TGC_NO_PREPACK", "1", 1);
    run_session(g, true, &plain);
    unsetenv("TGC_NO_PREPACK");
    CU_ASSERT_EQUAL(plain.in_use_after_create, 2 * MAT_BYTES + K_BYTES);
    CU_ASSERT_EQUAL(plain.replaced, 0);
    CU_ASSERT_TRUE(plain.peak_predicted);
    CU_ASSERT_FALSE(g->nodes[tgc_graph_find(g, "K")].data->released);
    CU_ASSERT_EQUAL(memcmp(plain.z, packed.z, sizeof plain.z), 0);
    CU_ASSERT_EQUAL(memcmp(plain.c, packed.c, sizeof plain.c), 0);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Integer convolutions: a uint8 W is shifted to int8 (u - 128) into the
 * node's cache and replaced; an int8 W needs no shift and is read where it
 * lies, so it stays and nothing copies it. Two ConvInteger nodes over the
 * same x [1, 16, 6, 6] with W [8, 16, 3, 3] (1152 bytes each): by hand the
 * cpu holds the int8 W alone, and 1152 bytes are replaced. */
#define QC 16
#define QM 8
#define QHW 6
#define QOUT (QHW - 2)
#define QW_COUNT (QM * QC * 9)

static int qx_at(int i) { return i * 37 % 256; }
static int qw8_at(int i) { return i * 13 % 255 - 127; }
static int qwu_at(int i) { return i * 29 % 256; }

static void test_int8_weights_read_in_place(void) {
    size_t size = (size_t)QW_COUNT * 2 * 8 + 4096, at = 0;
    char *text = malloc(size);
    at += (size_t)snprintf(text + at, size - at,
                           "format: tgc/1\nname: qprepack\ninputs:\n"
                           "  - {name: x, dtype: uint8, shape: [1, %d, %d, %d]}\noutputs: [a, b]\ninitializers:\n"
                           "  - {name: W8, dtype: int8, shape: [%d, %d, 3, 3], values: [",
                           QC, QHW, QHW, QM, QC);
    for (int i = 0; i < QW_COUNT; i++) at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", qw8_at(i));
    at += (size_t)snprintf(text + at, size - at, "]}\n  - {name: WU, dtype: uint8, shape: [%d, %d, 3, 3], values: [",
                           QM, QC);
    for (int i = 0; i < QW_COUNT; i++) at += (size_t)snprintf(text + at, size - at, "%s%d", i ? "," : "", qwu_at(i));
    at += (size_t)snprintf(text + at, size - at,
                           "]}\nnodes:\n  - {name: a, op: ConvInteger, inputs: [x, W8]}\n"
                           "  - {name: b, op: ConvInteger, inputs: [x, WU]}\n");
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, at, "qprepack.yaml", NULL, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_session_options o = {.optimize = TGC_OPTIMIZE_NONE, .memory_report = 1};
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, d, &s), TGC_OK);
    CU_ASSERT_EQUAL(tgc_session_memory(s, 0).bytes_in_use, QW_COUNT); /* W8 alone */
    static uint8_t xs[QC * QHW * QHW];
    for (int i = 0; i < QC * QHW * QHW; i++) xs[i] = (uint8_t)qx_at(i);
    int64_t xd[4] = {1, QC, QHW, QHW};
    tgc_tensor *in = NULL, *out[2] = {NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_UINT8, 4, xd, xs, &in), TGC_OK);
    const char *names[] = {"x"};
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, &in, out, d), TGC_OK);
    int bad = 0;
    for (int which = 0; which < 2; which++) {
        const int32_t *y = tgc_tensor_data(out[which]);
        for (int m = 0; m < QM; m++)
            for (int oy = 0; oy < QOUT; oy++)
                for (int ox = 0; ox < QOUT; ox++) {
                    int64_t sum = 0;
                    for (int ch = 0; ch < QC; ch++)
                        for (int k = 0; k < 9; k++) {
                            int wi = (m * QC + ch) * 9 + k, xi = (ch * QHW + oy + k / 3) * QHW + ox + k % 3;
                            sum += (int64_t)qx_at(xi) * (which == 0 ? qw8_at(wi) : qwu_at(wi));
                        }
                    bad += y[(m * QOUT + oy) * QOUT + ox] != sum;
                }
    }
    CU_ASSERT_EQUAL(bad, 0);
    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len);
    CU_ASSERT_EQUAL(tgc_session_memory_report(s, f), TGC_OK);
    fclose(f);
    CU_ASSERT_EQUAL(report_figure(report, "weights replaced"), QW_COUNT); /* WU */
    free(report);
    tgc_tensor_release(out[0]), tgc_tensor_release(out[1]), tgc_tensor_release(in);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* With the leave (release_weights), a weight of the caller's graph that
 * the optimizations left behind goes when the session is made: a float16
 * W whose Cast to float32 was folded (the session reads the folded
 * float32 copy; the float16 one would be held for nothing). y = x W with x
 * = [[1, 2], [3, 4]] and W = [[0.5, 0.25], [2, -1]] (exact in float16):
 * [[4.5, -1.75], [9.5, -3.25]]. Without the leave the graph is untouched. */
static void test_weights_left_behind_go(void) {
    const char *yaml = "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [2, 2]}]\noutputs: [y]\n"
                       "initializers:\n  - {name: W16, dtype: float16, shape: [2, 2], values: [0.5, 0.25, 2, -1]}\n"
                       "nodes:\n  - {name: W, op: Cast, inputs: [W16], attrs: {to: 1}}\n"
                       "  - {name: y, op: MatMul, inputs: [x, W]}\n";
    for (int release = 0; release < 2; release++) {
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "left.yaml", NULL, d, &g), TGC_OK);
        tgc_session_options o = {.release_weights = release};
        tgc_session *s = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, d, &s), TGC_OK);
        const tgc_const *w16 = g->nodes[tgc_graph_find(g, "W16")].data;
        CU_ASSERT_EQUAL(w16->released, release == 1);
        CU_ASSERT_EQUAL(w16->data == NULL, release == 1);
        tgc_tensor *in = NULL, *out = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4}, &in), TGC_OK);
        CU_ASSERT_EQUAL(tgc_session_run(s, 1, (const char *[]){"x"}, &in, &out, d), TGC_OK);
        const float *y = out != NULL ? tgc_tensor_data(out) : NULL;
        CU_ASSERT(y != NULL && y[0] == 4.5f && y[1] == -1.75f && y[2] == 9.5f && y[3] == -3.25f);
        tgc_tensor_release(out), tgc_tensor_release(in);
        tgc_session_free(s);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

TGC_TEST_MAIN("prepack", {"replaced weights are held once", test_replaced_weights_are_held_once},
              {"int8 weights are read in place", test_int8_weights_read_in_place},
              {"weights the optimizations left behind go", test_weights_left_behind_go},
              {"without prepacking the weights stay", test_without_prepack_the_weights_stay})
