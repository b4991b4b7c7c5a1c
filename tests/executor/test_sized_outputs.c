/* Kernels that size their own outputs (tgc_kernel_def.sizes_outputs), run
 * through a session: NonZero's output dims come from the input values, so
 * the executor leaves the allocation to the kernel. The answer is numpy's;
 * the device's bytes in use return to the baseline after each run; under a
 * memory limit too small for the output the run fails cleanly, naming the
 * node, and leaks nothing. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* x float32 [3, 4] -> NonZero -> nz (int64 [2, n]); Relu first so that
 * NonZero reads an intermediate of the run, not the feed. */
static const char graph_text[] = "format: tgc/1\n"
                                 "name: nonzero\n"
                                 "inputs:\n"
                                 "  - {name: x, dtype: float32, shape: [3, 4]}\n"
                                 "outputs: [nz]\n"
                                 "nodes:\n"
                                 "  - {name: pos, op: Relu, inputs: [x]}\n"
                                 "  - {name: nz, op: NonZero, inputs: [pos]}\n";

static const float x_values[12] = {0, 1, -2, 3, 0, 0, 5, 0, -0.0f, 7, 8, 0};
/* numpy: np.array(np.nonzero(np.maximum(x, 0))) with x = x_values.reshape(3, 4):
 * [[0, 0, 1, 2, 2], [1, 3, 2, 1, 2]] */
static const int64_t expected[10] = {0, 0, 1, 2, 2, 1, 3, 2, 1, 2};

typedef struct run {
    tgc_diags *diags;
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x;
} run;

static bool open_run(run *r, const tgc_session_options *o) {
    memset(r, 0, sizeof *r);
    r->diags = tgc_diags_create();
    if (tgc_graph_load_string(graph_text, strlen(graph_text), "nonzero.yaml", NULL, r->diags, &r->g) != TGC_OK ||
        tgc_session_create(r->g, "cpu", o, r->diags, &r->s) != TGC_OK ||
        tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){3, 4}, x_values, &r->x) != TGC_OK) {
        tgc_diags_print(r->diags, stderr);
        return false;
    }
    return true;
}

static void close_run(run *r) {
    tgc_tensor_release(r->x);
    tgc_session_free(r->s);
    tgc_graph_free(r->g);
    tgc_diags_free(r->diags);
}

static tgc_status run_once(run *r, tgc_tensor **out) {
    const char *names[] = {"x"};
    return tgc_session_run(r->s, 1, names, &r->x, out, r->diags);
}

static void test_nonzero_gives_numpys_answer_and_returns_its_memory(void) {
    run r;
    CU_ASSERT_FATAL(open_run(&r, NULL));
    tgc_memory_figures before = tgc_session_memory(r.s, 0);
    for (int i = 0; i < 3; i++) {
        tgc_tensor *out = NULL;
        CU_ASSERT_EQUAL_FATAL(run_once(&r, &out), TGC_OK);
        CU_ASSERT_EQUAL(tgc_tensor_dtype(out), TGC_INT64);
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_rank(out), 2);
        CU_ASSERT_EQUAL(tgc_tensor_dims(out)[0], 2);
        CU_ASSERT_EQUAL_FATAL(tgc_tensor_dims(out)[1], 5);
        CU_ASSERT_EQUAL(memcmp(tgc_tensor_data(out), expected, sizeof expected), 0);
        tgc_tensor_release(out);
        tgc_memory_figures after = tgc_session_memory(r.s, 0);
        CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
        CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    }
    close_run(&r);
}

/* Room for Relu's output (48 bytes, 64 in the arena) but not for
 * NonZero's 80 bytes: the kernel's allocation fails, the run reports
 * out-of-memory at node 'nz' and releases everything. */
static void test_nonzero_under_a_limit_fails_cleanly(void) {
    run r;
    tgc_session_options o = {.memory_limits = "cpu0=100"};
    CU_ASSERT_FATAL(open_run(&r, &o));
    tgc_memory_figures before = tgc_session_memory(r.s, 0);
    tgc_tensor *out = (tgc_tensor *)&r; /* must be set to NULL */
    CU_ASSERT_EQUAL(run_once(&r, &out), TGC_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_error_count(r.diags), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(r.diags, 0), "out-of-memory");
    const char *msg = tgc_diag_message(r.diags, 0);
    printf("\n  %s", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "node 'nz' (NonZero) on cpu0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "80 bytes"));
    tgc_memory_figures after = tgc_session_memory(r.s, 0);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    close_run(&r);
}

TGC_TEST_MAIN("sized_outputs", {"nonzero gives numpy's answer and returns its memory",
                                test_nonzero_gives_numpys_answer_and_returns_its_memory},
              {"nonzero under a limit fails cleanly", test_nonzero_under_a_limit_fails_cleanly})
