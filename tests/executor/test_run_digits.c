/* The digits models end to end on the cpu device: logits against the
 * reference PyTorch computed when it trained them (examples/digits), the
 * accuracy on the held-out split, and memory: after each run only the
 * weights remain on the device, and repeated runs do not grow. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct loaded {
    tgc_diags *diags;
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x, *ref, *labels;
} loaded;

static bool load_model(loaded *m, const char *model, const char *x, const char *ref, const char *devices) {
    memset(m, 0, sizeof *m);
    m->diags = tgc_diags_create();
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path(model));
    if (tgc_graph_load(path, m->diags, &m->g) != TGC_OK) goto fail;
    if (tgc_session_create(m->g, devices, NULL, m->diags, &m->s) != TGC_OK) goto fail;
    snprintf(path, sizeof path, "%s", tgc_test_path(x));
    if (tgc_tensor_load_npy(path, m->diags, &m->x) != TGC_OK) goto fail;
    snprintf(path, sizeof path, "%s", tgc_test_path(ref));
    if (tgc_tensor_load_npy(path, m->diags, &m->ref) != TGC_OK) goto fail;
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_y.npy"));
    if (tgc_tensor_load_npy(path, m->diags, &m->labels) != TGC_OK) goto fail;
    return true;
fail:
    tgc_diags_print(m->diags, stderr);
    return false;
}

static void unload(loaded *m) {
    tgc_tensor_release(m->x);
    tgc_tensor_release(m->ref);
    tgc_tensor_release(m->labels);
    tgc_session_free(m->s);
    tgc_graph_free(m->g);
    tgc_diags_free(m->diags);
}

static double max_abs_diff(const tgc_tensor *a, const tgc_tensor *b) {
    const float *p = tgc_tensor_data(a), *q = tgc_tensor_data(b);
    double worst = 0;
    for (int64_t i = 0; i < tgc_tensor_numel(a); i++) {
        double d = fabs((double)p[i] - (double)q[i]);
        if (!(d <= worst)) worst = d;
    }
    return worst;
}

static double accuracy(const tgc_tensor *logits, const tgc_tensor *labels) {
    const float *p = tgc_tensor_data(logits);
    const int64_t *y = tgc_tensor_data(labels);
    int64_t rows = tgc_tensor_dims(logits)[0], right = 0;
    for (int64_t r = 0; r < rows; r++) {
        int best = 0;
        for (int c = 1; c < 10; c++)
            if (p[r * 10 + c] > p[r * 10 + best]) best = c;
        right += best == y[r];
    }
    return (double)right / (double)rows;
}

static void check_model(const char *model, const char *x, const char *ref, double min_accuracy, const char *devices) {
    loaded m;
    CU_ASSERT_FATAL(load_model(&m, model, x, ref, devices));
    tgc_memory_figures before = tgc_session_memory(m.s, 0);
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(tgc_session_output_count(m.s), 2);
    CU_ASSERT_STRING_EQUAL(tgc_session_output_name(m.s, 0), "logits");
    tgc_status st = tgc_session_run(m.s, 1, names, &m.x, outs, m.diags);
    tgc_diags_print(m.diags, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_EQUAL(tgc_tensor_rank(outs[0]), 2);
    CU_ASSERT_EQUAL(tgc_tensor_dims(outs[0])[0], 400);
    CU_ASSERT_EQUAL(tgc_tensor_dims(outs[0])[1], 10);
    double diff = max_abs_diff(outs[0], m.ref);
    printf("\n  %s on %s: max |logits - reference| = %.3g, accuracy %.2f%%\n", model, devices, diff,
           100 * accuracy(outs[0], m.labels));
    CU_ASSERT(diff <= 1e-4);
    CU_ASSERT(accuracy(outs[0], m.labels) >= min_accuracy);
    /* probs: each row sums to 1 */
    const float *probs = tgc_tensor_data(outs[1]);
    for (int r = 0; r < 400; r++) {
        double sum = 0;
        for (int c = 0; c < 10; c++) sum += probs[r * 10 + c];
        CU_ASSERT_DOUBLE_EQUAL(sum, 1.0, 1e-5);
    }
    /* Every intermediate buffer went back: the device holds the weights only. */
    tgc_memory_figures after = tgc_session_memory(m.s, 0);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    CU_ASSERT(after.num_allocs > before.num_allocs);
    tgc_tensor_release(outs[0]);
    tgc_tensor_release(outs[1]);
    unload(&m);
}

static void test_cnn_matches_reference(void) {
    check_model("examples/digits/cnn.yaml", "examples/digits/test_x.npy", "examples/digits/ref_logits_cnn.npy", 0.95,
                "cpu");
}

static void test_mlp_matches_reference(void) {
    check_model("examples/digits/mlp.yaml", "examples/digits/test_x_flat.npy", "examples/digits/ref_logits_mlp.npy",
                0.95, "cpu");
}

/* The same models with every node on gpu0 (PoCL where there is no GPU). */
static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

static void test_cnn_on_gpu_matches_reference(void) {
    if (!have_gpu()) return;
    check_model("examples/digits/cnn.yaml", "examples/digits/test_x.npy", "examples/digits/ref_logits_cnn.npy", 0.95,
                "gpu0");
}

static void test_mlp_on_gpu_matches_reference(void) {
    if (!have_gpu()) return;
    check_model("examples/digits/mlp.yaml", "examples/digits/test_x_flat.npy", "examples/digits/ref_logits_mlp.npy",
                0.95, "gpu0");
}

/* 200 runs in one process: live buffers and bytes flat after every run. */
static void test_repeated_runs_do_not_grow(void) {
    loaded m;
    CU_ASSERT_FATAL(load_model(&m, "examples/digits/cnn.yaml", "examples/digits/test_x.npy",
                               "examples/digits/ref_logits_cnn.npy", "cpu"));
    const char *names[] = {"x"};
    tgc_memory_figures base = tgc_session_memory(m.s, 0);
    int64_t peak = 0;
    for (int i = 0; i < 200; i++) {
        tgc_tensor *outs[2];
        CU_ASSERT_EQUAL_FATAL(tgc_session_run(m.s, 1, names, &m.x, outs, m.diags), TGC_OK);
        tgc_tensor_release(outs[0]);
        tgc_tensor_release(outs[1]);
        tgc_memory_figures now = tgc_session_memory(m.s, 0);
        CU_ASSERT_EQUAL(now.live_buffers, base.live_buffers);
        CU_ASSERT_EQUAL(now.bytes_in_use, base.bytes_in_use);
        if (i == 0) peak = now.peak_bytes_in_use;
        CU_ASSERT_EQUAL(now.peak_bytes_in_use, peak); /* same plan, same high-water mark */
    }
    unload(&m);
}

/* Feeds that break the declaration are refused with a clear message and
 * nothing leaks. */
static void test_bad_feeds_are_refused(void) {
    loaded m;
    CU_ASSERT_FATAL(load_model(&m, "examples/digits/cnn.yaml", "examples/digits/test_x_flat.npy",
                               "examples/digits/ref_logits_cnn.npy", "cpu"));
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_session_run(m.s, 1, names, &m.x, outs, d), TGC_ERR_INVALID); /* [400, 64] for [N, 1, 8, 8] */
    CU_ASSERT_PTR_NULL(outs[0]);
    CU_ASSERT_EQUAL(tgc_diags_error_count(d), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "input 'x' is declared with shape [N, 1, 8, 8]"));
    tgc_diags_free(d);
    d = tgc_diags_create();
    const char *wrong[] = {"y"};
    CU_ASSERT_EQUAL(tgc_session_run(m.s, 1, wrong, &m.x, outs, d), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "'y' is not a graph input"));
    tgc_diags_free(d);
    d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_session_run(m.s, 0, NULL, NULL, outs, d), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "input 'x' is not fed"));
    tgc_diags_free(d);
    unload(&m);
}

TGC_TEST_MAIN("digits end to end", {"cnn matches the reference", test_cnn_matches_reference},
              {"mlp matches the reference", test_mlp_matches_reference},
              {"cnn on gpu0 matches the reference", test_cnn_on_gpu_matches_reference},
              {"mlp on gpu0 matches the reference", test_mlp_on_gpu_matches_reference},
              {"repeated runs do not grow", test_repeated_runs_do_not_grow},
              {"bad feeds are refused", test_bad_feeds_are_refused})
