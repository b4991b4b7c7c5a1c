/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on the cpu, run
 * whole through the public API (load, infer, place, run), for what ONNX's
 * backend data (node/test_nllloss_*, node/test_sce_*) does not cover:
 * ignore_index with weights and a mean over a 3-D target, float16, int32
 * targets, a mean over no counted item, and the errors for targets out of
 * range. Reference values are numpy's (float64), from the script in each
 * case's comment: a direct transcription of ONNX's reference
 * implementation (onnx/reference/ops/op_negative_log_likelihood_loss.py),
 *     def nll(x, t, w=None, red='mean', ii=None):
 *         N, C = x.shape[:2]; x3 = x.reshape(N, C, -1); t2 = t.reshape(N, -1)
 *         loss = np.zeros(t2.shape); wt = np.zeros(t2.shape)
 *         for n, d in np.ndindex(*t2.shape):
 *             k = t2[n, d]
 *             if ii is not None and k == ii: continue
 *             ww = 1.0 if w is None else w[k]
 *             loss[n, d] = -x3[n, k, d] * ww; wt[n, d] = ww
 *         loss = loss.reshape(t.shape)
 *         return loss if red == 'none' else loss.sum() if red == 'sum' else loss.sum() / wt.sum()
 *     def logsoftmax(x):
 *         m = x.max(axis=1, keepdims=True)
 *         return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
 *     def xs(n): return np.array([((i * 7) % 11 - 5) / 4 for i in range(n)])
 * (xs gives quarters in [-1.25, 1.25], exact in float16 too). */
#include "tests/harness.h"

#include "support/half.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* xs(24) of the comment above: the scores every case uses. */
#define XS24                                                                                                 \
    "[-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, "                             \
    "0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, 0.5]"

/* Loads `text`, runs it on the cpu with feeds (names[i] gets feeds[i])
 * and stores its n_out outputs; returns the run's status (asserting that
 * loading and the session succeed). *diags collects the messages; the
 * caller frees it. */
static tgc_status run_fed(const char *text, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                          int n_out, tgc_tensor **out, tgc_diags **diags) {
    *diags = tgc_diags_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(*diags);
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_status st = tgc_graph_load_string(text, strlen(text), "loss", NULL, *diags, &g);
    if (st == TGC_OK) st = tgc_session_create(g, "cpu", NULL, *diags, &s);
    if (st != TGC_OK) tgc_diags_print(*diags, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_session_output_count(s), n_out);
    st = tgc_session_run(s, n_feeds, names, feeds, out, *diags);
    tgc_session_free(s);
    tgc_graph_free(g);
    return st;
}

/* run_fed without feeds. */
static tgc_status run_graph(const char *text, int n_out, tgc_tensor **out, tgc_diags **diags) {
    return run_fed(text, 0, NULL, NULL, n_out, out, diags);
}

/* Element i of a float32 or float16 tensor, as a double. */
static double elem(const tgc_tensor *t, int64_t i) {
    const void *p = tgc_tensor_data(t);
    return tgc_tensor_dtype(t) == TGC_FLOAT16 ? tgc_half_to_float(((const uint16_t *)p)[i])
                                                : ((const float *)p)[i];
}

/* Asserts t has dtype dt, the dims given and values within
 * tol * (1 + |want|) of want[0..n). */
static void expect(const tgc_tensor *t, tgc_dtype dt, int rank, const int64_t *dims, const double *want, int n,
                   double tol) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(tgc_tensor_dtype(t), dt);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_rank(t), rank);
    for (int i = 0; i < rank; i++) CU_ASSERT_EQUAL(tgc_tensor_dims(t)[i], dims[i]);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(t), n);
    for (int i = 0; i < n; i++) {
        double got = elem(t, i);
        bool ok = fabs(got - want[i]) <= tol * (1 + fabs(want[i]));
        CU_ASSERT(ok);
        if (!ok) fprintf(stderr, "\n  element %d is %.9g, want %.9g", i, got, want[i]);
    }
}

/* NLL with a weight and ignore_index 1 over X [2, 3, 2, 2] and a 3-D
 * target [2, 2, 2], mean and none:
 *     x1 = xs(24).reshape(2, 3, 2, 2); t1 = np.array([0, 1, 2, 1, 2, 0, 1, 2]).reshape(2, 2, 2)
 *     w1 = np.array([0.5, 2.0, 1.5])
 *     nll(x1, t1, w1, 'mean', 1) -> -0.11363636363636363 (the weights of ignored targets leave the denominator)
 *     nll(x1, t1, w1, 'none', 1) -> [0.625, 0, 0.375, 0, -1.125, 0.25, 0, -0.75]            */
static void test_nll_weight_ignore_index_3d_target(void) {
    const char *text =
        "format: tgc/1\n"
        "outputs: [mean, none]\n"
        "initializers:\n"
        "  - {name: x, dtype: float32, shape: [2, 3, 2, 2], values: " XS24 "}\n"
        "  - {name: t, dtype: int64, shape: [2, 2, 2], values: [0, 1, 2, 1, 2, 0, 1, 2]}\n"
        "  - {name: w, dtype: float32, shape: [3], values: [0.5, 2.0, 1.5]}\n"
        "nodes:\n"
        "  - {name: mean, op: NegativeLogLikelihoodLoss, inputs: [x, t, w], attrs: {ignore_index: 1}}\n"
        "  - {name: none, op: NegativeLogLikelihoodLoss, inputs: [x, t, w],\n"
        "     attrs: {ignore_index: 1, reduction: none}}\n";
    tgc_tensor *out[2] = {NULL, NULL};
    tgc_diags *d;
    CU_ASSERT_EQUAL(run_graph(text, 2, out, &d), TGC_OK);
    expect(out[0], TGC_FLOAT32, 0, NULL, (const double[]){-0.11363636363636363}, 1, 1e-6);
    expect(out[1], TGC_FLOAT32, 3, (const int64_t[]){2, 2, 2},
           (const double[]){0.625, 0, 0.375, 0, -1.125, 0.25, 0, -0.75}, 8, 1e-6);
    for (int i = 0; i < 2; i++) tgc_tensor_release(out[i]);
    tgc_diags_free(d);
}

/* SoftmaxCrossEntropyLoss in float16 with a weight and a negative
 * ignore_index, reduction none with log_prob, and mean:
 *     x2 = xs(24).reshape(2, 4, 3); t2 = np.array([3, -1, 0, 1, 2, -1]).reshape(2, 3)
 *     w2 = np.array([1.0, 0.25, 2.0, 0.75]); lp2 = logsoftmax(x2)
 *     nll(lp2, t2, w2, 'none', -1) -> [1.052378721065737, 0, 1.0500164040589504, 0.3250041010147376,
 *                                      3.1000328081179007, 0]
 *     nll(lp2, t2, w2, 'mean', -1) -> 1.3818580085643313
 *     lp2.ravel() -> LP2 below
 * float16 keeps 11 significant bits: tolerance 2e-3 relative. */
static void test_sce_float16_log_prob(void) {
    const char *text =
        "format: tgc/1\n"
        "outputs: [none, none:1, mean]\n"
        "initializers:\n"
        "  - {name: x, dtype: float16, shape: [2, 4, 3], values: " XS24 "}\n"
        "  - {name: t, dtype: int64, shape: [2, 3], values: [3, -1, 0, 1, 2, -1]}\n"
        "  - {name: w, dtype: float16, shape: [4], values: [1.0, 0.25, 2.0, 0.75]}\n"
        "nodes:\n"
        "  - {name: none, op: SoftmaxCrossEntropyLoss, inputs: [x, t, w],\n"
        "     attrs: {ignore_index: -1, reduction: none}}\n"
        "  - {name: mean, op: SoftmaxCrossEntropyLoss, inputs: [x, t, w], attrs: {ignore_index: -1}}\n";
    static const double lp2[24] = {
        -3.4031716280876494, -1.0500164040589504, -1.0500164040589504, -0.9031716280876495, -1.3000164040589504,
        -1.3000164040589504, -1.1531716280876494, -1.5500164040589504, -1.5500164040589504, -1.4031716280876494,
        -1.8000164040589504, -1.8000164040589504, -1.0500164040589504, -1.0500164040589504, -1.0500164040589504,
        -1.3000164040589504, -1.3000164040589504, -1.3000164040589504, -1.5500164040589504, -1.5500164040589504,
        -1.5500164040589504, -1.8000164040589504, -1.8000164040589504, -1.8000164040589504};
    tgc_tensor *out[3] = {NULL, NULL, NULL};
    tgc_diags *d;
    CU_ASSERT_EQUAL(run_graph(text, 3, out, &d), TGC_OK);
    expect(out[0], TGC_FLOAT16, 2, (const int64_t[]){2, 3},
           (const double[]){1.052378721065737, 0, 1.0500164040589504, 0.3250041010147376, 3.1000328081179007, 0},
           6, 2e-3);
    expect(out[1], TGC_FLOAT16, 3, (const int64_t[]){2, 4, 3}, lp2, 24, 2e-3);
    expect(out[2], TGC_FLOAT16, 0, NULL, (const double[]){1.3818580085643313}, 1, 2e-3);
    for (int i = 0; i < 3; i++) tgc_tensor_release(out[i]);
    tgc_diags_free(d);
}

/* SoftmaxCrossEntropyLoss over X [3, 5] with int32 targets, no weight,
 * ignore_index 0 (a valid class, so its item counts nowhere):
 *     x3 = xs(15).reshape(3, 5); t3 = np.array([4, 0, 2])
 *     nll(logsoftmax(x3), t3, None, 'sum', 0)  -> 3.1586051687892716
 *     nll(logsoftmax(x3), t3, None, 'mean', 0) -> 1.5793025843946358 (divided by 2 items, not 3)
 * and a mean where every target is ignored: 0 / 0, NaN, as numpy gives. */
static void test_sce_int32_target_ignore_index(void) {
    const char *text =
        "format: tgc/1\n"
        "outputs: [sum, mean, all_ignored]\n"
        "initializers:\n"
        "  - {name: x, dtype: float32, shape: [3, 5], values: [-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0,\n"
        "     -1.0, 0.75, -0.25, -1.25, 0.5, -0.5, 1.25]}\n"
        "  - {name: t, dtype: int32, shape: [3], values: [4, 0, 2]}\n"
        "  - {name: t0, dtype: int32, shape: [3], values: [0, 0, 0]}\n"
        "nodes:\n"
        "  - {name: sum, op: SoftmaxCrossEntropyLoss, inputs: [x, t], attrs: {ignore_index: 0, reduction: sum}}\n"
        "  - {name: mean, op: SoftmaxCrossEntropyLoss, inputs: [x, t], attrs: {ignore_index: 0}}\n"
        "  - {name: all_ignored, op: NegativeLogLikelihoodLoss, inputs: [x, t0], attrs: {ignore_index: 0}}\n";
    tgc_tensor *out[3] = {NULL, NULL, NULL};
    tgc_diags *d;
    CU_ASSERT_EQUAL(run_graph(text, 3, out, &d), TGC_OK);
    expect(out[0], TGC_FLOAT32, 0, NULL, (const double[]){3.1586051687892716}, 1, 1e-6);
    expect(out[1], TGC_FLOAT32, 0, NULL, (const double[]){1.5793025843946358}, 1, 1e-6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[2]);
    CU_ASSERT(isnan(elem(out[2], 0)));
    for (int i = 0; i < 3; i++) tgc_tensor_release(out[i]);
    tgc_diags_free(d);
}

/* Many items, so the kernel splits them into pieces over the pool (and
 * its softmax runs over blocks of columns): X [2, 3, 9000] float32 of
 * x[i] = xs(i) at flat index i, targets (5 * item) % 4 with ignore_index 3,
 * weight [0.5, 2, 1.5]:
 *     x = xs(54000).reshape(2, 3, 9000); t = ((np.arange(18000) * 5) % 4).reshape(2, 9000)
 *     nll(logsoftmax(x), t, w, 'mean', 3) -> 1.3514702550594282
 *     nll(logsoftmax(x), t, w, 'none', 3)[n, d] at (0, 0), (0, 1), (0, 8999), (1, 0), (1, 4321), (1, 8999)
 *         -> 1.013987871927655, 0.9496114563526292, 0, 0.1759759319014009, 0.9496114563526292, 0
 *     logsoftmax(x)[1, 2, 8999], [0, 1, 77] -> -2.4748057281763147, -1.2779757438553099
 *     nll(x, t, w, 'sum', 3) -> -6.375                                                          */
static void test_many_items_in_pieces(void) {
    const char *text =
        "format: tgc/1\n"
        "inputs:\n"
        "  - {name: x, dtype: float32, shape: [2, 3, 9000]}\n"
        "  - {name: t, dtype: int64, shape: [2, 9000]}\n"
        "outputs: [mean, none, none:1, nll_sum]\n"
        "initializers:\n"
        "  - {name: w, dtype: float32, shape: [3], values: [0.5, 2.0, 1.5]}\n"
        "nodes:\n"
        "  - {name: mean, op: SoftmaxCrossEntropyLoss, inputs: [x, t, w], attrs: {ignore_index: 3}}\n"
        "  - {name: none, op: SoftmaxCrossEntropyLoss, inputs: [x, t, w], attrs: {ignore_index: 3, reduction: none}}\n"
        "  - {name: nll_sum, op: NegativeLogLikelihoodLoss, inputs: [x, t, w],\n"
        "     attrs: {ignore_index: 3, reduction: sum}}\n";
    static float x[2 * 3 * 9000];
    static int64_t t[2 * 9000];
    for (int i = 0; i < 2 * 3 * 9000; i++) x[i] = (float)((i * 7) % 11 - 5) / 4;
    for (int i = 0; i < 2 * 9000; i++) t[i] = (i * 5) % 4;
    tgc_tensor *feeds[2] = {NULL, NULL}, *out[4] = {NULL, NULL, NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 3, (const int64_t[]){2, 3, 9000}, x, &feeds[0]), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_INT64, 2, (const int64_t[]){2, 9000}, t, &feeds[1]), TGC_OK);
    tgc_diags *d;
    CU_ASSERT_EQUAL(run_fed(text, 2, (const char *const[]){"x", "t"}, feeds, 4, out, &d), TGC_OK);
    expect(out[0], TGC_FLOAT32, 0, NULL, (const double[]){1.3514702550594282}, 1, 1e-6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[1]);
    CU_ASSERT_EQUAL(tgc_tensor_numel(out[1]), 2 * 9000);
    static const struct {
        int64_t at;
        double want;
    } none[] = {{0, 1.013987871927655}, {1, 0.9496114563526292}, {8999, 0}, {9000, 0.1759759319014009},
                {9000 + 4321, 0.9496114563526292}, {17999, 0}};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        CU_ASSERT_DOUBLE_EQUAL(elem(out[1], none[i].at), none[i].want, 1e-6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[2]);
    CU_ASSERT_DOUBLE_EQUAL(elem(out[2], (1 * 3 + 2) * 9000 + 8999), -2.4748057281763147, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(elem(out[2], (0 * 3 + 1) * 9000 + 77), -1.2779757438553099, 1e-6);
    expect(out[3], TGC_FLOAT32, 0, NULL, (const double[]){-6.375}, 1, 1e-6);
    for (int i = 0; i < 4; i++) tgc_tensor_release(out[i]);
    for (int i = 0; i < 2; i++) tgc_tensor_release(feeds[i]);
    tgc_diags_free(d);
}

/* True when some message in d contains every one of the fragments. */
static bool has_message(const tgc_diags *d, const char *a, const char *b, const char *c) {
    for (size_t i = 0; i < tgc_diags_count(d); i++) {
        const char *m = tgc_diag_message(d, i);
        if (strstr(m, a) != NULL && strstr(m, b) != NULL && strstr(m, c) != NULL) return true;
    }
    return false;
}

/* A target outside [0, C) that is not ignore_index fails the run with a
 * message naming the node and the target: one past the classes, and a
 * negative one (-2, with ignore_index -1), for both ops. */
static void test_target_out_of_range_fails(void) {
    static const struct {
        const char *op, *targets, *attrs, *fragment;
    } cases[] = {
        {"NegativeLogLikelihoodLoss", "[0, 3]", "{}", "target 3 at item 1"},
        {"NegativeLogLikelihoodLoss", "[-2, 1]", "{ignore_index: -1}", "target -2 at item 0"},
        {"SoftmaxCrossEntropyLoss", "[1, 3]", "{reduction: none}", "target 3 at item 1"},
        {"SoftmaxCrossEntropyLoss", "[2, -1]", "{ignore_index: 5}", "target -1 at item 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "format: tgc/1\n"
                 "outputs: [bad_loss]\n"
                 "initializers:\n"
                 "  - {name: x, dtype: float32, shape: [2, 3], values: [0, 1, 2, 3, 4, 5]}\n"
                 "  - {name: t, dtype: int64, shape: [2], values: %s}\n"
                 "nodes:\n"
                 "  - {name: bad_loss, op: %s, inputs: [x, t], attrs: %s}\n",
                 cases[i].targets, cases[i].op, cases[i].attrs);
        tgc_tensor *out = NULL;
        tgc_diags *d;
        CU_ASSERT_EQUAL(run_graph(text, 1, &out, &d), TGC_ERR_RUNTIME);
        CU_ASSERT_PTR_NULL(out);
        bool ok = has_message(d, "bad_loss", cases[i].fragment, "out of range [0, 3)");
        CU_ASSERT(ok);
        if (!ok) tgc_diags_print(d, stderr);
        tgc_diags_free(d);
    }
}

TGC_TEST_MAIN("devices/cpu_loss",
              {"nll_weight_ignore_index_3d_target", test_nll_weight_ignore_index_3d_target},
              {"sce_float16_log_prob", test_sce_float16_log_prob},
              {"sce_int32_target_ignore_index", test_sce_int32_target_ignore_index},
              {"many_items_in_pieces", test_many_items_in_pieces},
              {"target_out_of_range_fails", test_target_out_of_range_fails})
