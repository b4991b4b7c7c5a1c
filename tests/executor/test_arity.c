/* Ops of any arity the format allows (issue: no fixed limits in disguise):
 * Concat, Max and Min with 1, 33, 64, 65 and 1000 inputs, every other one
 * an initializer, placed on cpu and on gpu0 (cpu,gpu0, the node asking for
 * the gpu), against values computed here. Positions past 32 used to index
 * 32-bit masks (undefined behaviour in C); a session, a memory plan and a
 * run now treat every position alike, and a run leaves nothing behind. */
#include "tests/harness.h"

#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS 3

/* Element j of input i: distinct, exact in float. */
static float value_of(int i, int j) { return (float)((i * 37 + j * 11) % 1009) - 500.0f; }

/* A graph with k inputs [2, COLS] named a0..a(k-1): the odd ones fed, the
 * even ones initializers; one node `y` of `op` over all of them. */
static char *graph_text(const char *op, int k, bool gpu) {
    size_t size = (size_t)k * 160 + 4096, at = 0;
    char *buf = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    at += (size_t)snprintf(buf + at, size - at, "format: tgc/1\ninputs:\n");
    for (int i = 1; i < k; i += 2)
        at += (size_t)snprintf(buf + at, size - at, "  - {name: a%d, dtype: float32, shape: [2, %d]}\n", i, COLS);
    if (k == 1) at += (size_t)snprintf(buf + at, size - at, "  - {name: unused, dtype: float32, shape: [1]}\n");
    at += (size_t)snprintf(buf + at, size - at, "outputs: [y]\ninitializers:\n");
    for (int i = 0; i < k; i += 2) {
        at += (size_t)snprintf(buf + at, size - at, "  - {name: a%d, dtype: float32, shape: [2, %d], values: [", i, COLS);
        for (int j = 0; j < 2 * COLS; j++) at += (size_t)snprintf(buf + at, size - at, "%s%g", j ? ", " : "", value_of(i, j));
        at += (size_t)snprintf(buf + at, size - at, "]}\n");
    }
    at += (size_t)snprintf(buf + at, size - at, "nodes:\n  - {name: y, op: %s, inputs: [", op);
    for (int i = 0; i < k; i++) at += (size_t)snprintf(buf + at, size - at, "%sa%d", i ? ", " : "", i);
    at += (size_t)snprintf(buf + at, size - at, "]%s%s}\n", strcmp(op, "Concat") == 0 ? ", attrs: {axis: 0}" : "",
                           gpu ? ", device: gpu0" : "");
    CU_ASSERT_FATAL(at < size);
    return buf;
}

/* Runs op over k inputs on `devices` and checks every output element. */
static void check(const char *op, int k, const char *devices) {
    bool gpu = strcmp(devices, "cpu") != 0;
    char *text = graph_text(op, k, gpu);
    tgc_diags *diags = tgc_diags_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(diags);
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_status st = tgc_graph_load_string(text, strlen(text), "arity", NULL, diags, &g);
    tgc_session_options opts = {.soft_placement = 1};
    if (st == TGC_OK) st = tgc_session_create(g, devices, &opts, diags, &s);
    if (st != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    int n_feeds = k / 2 + (k == 1);
    const char **names = calloc((size_t)n_feeds, sizeof *names);
    tgc_tensor **feeds = calloc((size_t)n_feeds, sizeof *feeds);
    char(*name_buf)[16] = calloc((size_t)n_feeds, sizeof *name_buf);
    CU_ASSERT_FATAL(names != NULL && feeds != NULL && name_buf != NULL);
    int f = 0;
    for (int i = 1; i < k; i += 2, f++) {
        float v[2 * COLS];
        for (int j = 0; j < 2 * COLS; j++) v[j] = value_of(i, j);
        snprintf(name_buf[f], sizeof name_buf[f], "a%d", i);
        names[f] = name_buf[f];
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){2, COLS}, v, &feeds[f]), TGC_OK);
    }
    if (k == 1) {
        names[0] = "unused";
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1}, (float[]){0}, &feeds[0]), TGC_OK);
    }
    tgc_tensor *y = NULL;
    st = tgc_session_run(s, n_feeds, names, feeds, &y, diags);
    if (st != TGC_OK) tgc_diags_print(diags, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    const float *got = tgc_tensor_data(y);
    int bad = 0;
    bool concat = strcmp(op, "Concat") == 0;
    for (int j = 0; j < (concat ? 2 * k : 2) * COLS; j++) {
        float want;
        if (concat) {
            want = value_of(j / (2 * COLS), j % (2 * COLS));
        } else {
            want = value_of(0, j);
            for (int i = 1; i < k; i++) {
                float v = value_of(i, j);
                want = strcmp(op, "Max") == 0 ? (v > want ? v : want) : (v < want ? v : want);
            }
        }
        if (got[j] != want && bad++ < 3)
            fprintf(stderr, "\n  %s of %d on %s: element %d is %g, want %g", op, k, devices, j, got[j], want);
    }
    CU_ASSERT_EQUAL(bad, 0);
    tgc_tensor_release(y);
    for (int i = 0; i < n_feeds; i++) tgc_tensor_release(feeds[i]);
    free(names);
    free(feeds);
    free(name_buf);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(diags);
    free(text);
}

static void test_arity(void) {
    static const char *const ops[] = {"Concat", "Max", "Min"};
    static const int counts[] = {1, 33, 64, 65, 1000};
    static const char *const devices[] = {"cpu", "cpu,gpu0"};
    bool has_gpu = false;
    tgc_device_info info[4];
    has_gpu = tgc_devices_list(info, 4) > 1;
    for (int d = 0; d < (has_gpu ? 2 : 1); d++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) check(ops[o], counts[c], devices[d]);
    if (!has_gpu) printf("\n  notice: no OpenCL device; only cpu checked\n");
}

TGC_TEST_MAIN("arity", {"Concat, Max, Min with 1 to 1000 inputs on cpu and gpu0", test_arity})
