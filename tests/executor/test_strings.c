/* String tensors through sessions: Cast both ways (reference values from
 * numpy: each list below is `np.array(VALUES, dtype=T).astype(str)` or
 * `np.array(STRINGS).astype(T)`, run with /usr/bin/python3), the
 * data-moving ops on hand-made values, StringNormalizer's edge cases, the
 * errors (a string that does not parse, an op that takes no strings), and
 * ownership: the harness fails the suite if any string block outlives it,
 * and the ASan build's leak checker sees every one. */
#include "tests/harness.h"

#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Loads `yaml`, runs it on cpu with the feeds, stores the outputs (the
 * caller releases them). The status of the first failing step; its
 * messages are kept in *diags_text (may be NULL). */
static tgc_status run_yaml(const char *yaml, int n_feeds, const char *const *names, tgc_tensor *const *feeds,
                           tgc_tensor **outs, char *diags_text, size_t size) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    tgc_status st = tgc_graph_load_string(yaml, strlen(yaml), "strings.yaml", NULL, d, &g);
    if (st == TGC_OK) st = tgc_session_create(g, "cpu", NULL, d, &s);
    if (st == TGC_OK) st = tgc_session_run(s, n_feeds, names, feeds, outs, d);
    if (diags_text != NULL) {
        diags_text[0] = '\0';
        for (size_t i = 0; i < tgc_diags_count(d); i++)
            snprintf(diags_text + strlen(diags_text), size - strlen(diags_text), "%s [%s]\n", tgc_diag_message(d, i),
                     tgc_diag_rule(d, i));
    }
    if (st != TGC_OK && diags_text == NULL) tgc_diags_print(d, stderr);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
    return st;
}

static tgc_tensor *strings_tensor(int rank, const int64_t *dims, const char *const *values) {
    tgc_tensor *t = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_STRING, rank, dims, values, &t) == TGC_OK);
    return t;
}

static void assert_strings(const tgc_tensor *t, int64_t n, const char *const *want) {
    CU_ASSERT_FATAL(t != NULL && tgc_tensor_dtype(t) == TGC_STRING);
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        if (strcmp(tgc_tensor_string(t, i), want[i]) != 0)
            fprintf(stderr, "element %lld: \"%s\", expected \"%s\"\n", (long long)i, tgc_tensor_string(t, i), want[i]);
        CU_ASSERT_STRING_EQUAL(tgc_tensor_string(t, i), want[i]);
    }
}

/* ---- Cast to string ---------------------------------------------------------------- */

static const char cast_to_string_yaml[] = "format: tgc/1\nname: c\n"
                                          "inputs:\n  - {name: x, dtype: %s, shape: [%d]}\n"
                                          "outputs: [y]\n"
                                          "nodes:\n  - {name: y, op: Cast, inputs: [x], attrs: {to: 8}}\n";

static void cast_to_string(tgc_dtype dt, const void *values, int n, const char *const *want) {
    char yaml[512];
    snprintf(yaml, sizeof yaml, cast_to_string_yaml, tgc_dtype_name(dt), n);
    tgc_tensor *x = NULL, *y = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(dt, 1, (int64_t[]){n}, values, &x) == TGC_OK);
    const char *names[] = {"x"};
    CU_ASSERT_EQUAL_FATAL(run_yaml(yaml, 1, names, &x, &y, NULL, 0), TGC_OK);
    assert_strings(y, n, want);
    tgc_tensor_release(x);
    tgc_tensor_release(y);
}

static void test_cast_to_string(void) {
    /* np.array([...], dtype=np.float32).astype(str) */
    static const float f32[] = {1.0f, 0.1f, 1e10f, 1e-5f, 3e38f, 16777216.0f, 1e16f, NAN, INFINITY, -INFINITY,
                                -0.0f, 123456789.0f, 1e-7f, 0.0001f, 5e-45f};
    static const char *const f32_want[] = {"1.0", "0.1", "10000000000.0", "1e-05", "3e+38", "16777216.0",
                                           "1e+16", "nan", "inf", "-inf", "-0.0", "123456790.0", "1e-07", "1e-04",
                                           "6e-45"};
    cast_to_string(TGC_FLOAT32, f32, 15, f32_want);
    /* np.array([0.1, 1/3, 1e100, 2.5e-300, 123456789012.0]).astype(str) */
    static const double f64[] = {0.1, 1.0 / 3, 1e100, 2.5e-300, 123456789012.0};
    static const char *const f64_want[] = {"0.1", "0.3333333333333333", "1e+100", "2.5e-300", "123456789012.0"};
    cast_to_string(TGC_FLOAT64, f64, 5, f64_want);
    /* np.array([0.1, 65504, 6e-8, 1/3], dtype=np.float16).astype(str); the bits of those float16 values */
    static const uint16_t f16[] = {0x2E66, 0x7BFF, 0x0001, 0x3555};
    static const char *const f16_want[] = {"0.1", "65500.0", "6e-08", "0.3333"};
    cast_to_string(TGC_FLOAT16, f16, 4, f16_want);
    static const int8_t i8[] = {-5, 7};
    static const char *const i8_want[] = {"-5", "7"};
    cast_to_string(TGC_INT8, i8, 2, i8_want);
    static const uint64_t u64[] = {UINT64_MAX};
    static const char *const u64_want[] = {"18446744073709551615"};
    cast_to_string(TGC_UINT64, u64, 1, u64_want);
    static const uint8_t b[] = {1, 0};
    static const char *const b_want[] = {"True", "False"};
    cast_to_string(TGC_BOOL, b, 2, b_want);
}

/* ---- Cast from string --------------------------------------------------------------- */

static const char cast_from_string_yaml[] = "format: tgc/1\nname: c\n"
                                            "inputs:\n  - {name: x, dtype: string, shape: [%d]}\n"
                                            "outputs: [y]\n"
                                            "nodes:\n  - {name: y, op: Cast, inputs: [x], attrs: {to: %d}}\n";

static tgc_status cast_from_string(const char *const *values, int n, int to, tgc_tensor **y, char *err, size_t size) {
    char yaml[512];
    snprintf(yaml, sizeof yaml, cast_from_string_yaml, n, to);
    tgc_tensor *x = strings_tensor(1, (int64_t[]){n}, values);
    const char *names[] = {"x"};
    tgc_status st = run_yaml(yaml, 1, names, &x, y, err, size);
    tgc_tensor_release(x);
    return st;
}

static void test_cast_from_string(void) {
    /* np.array([' 2.5', 'NaN', '+INF', '-inf', '1e-3', '0.1']).astype(np.float32) */
    static const char *const f[] = {" 2.5", "NaN", "+INF", "-inf", "1e-3", "0.1"};
    tgc_tensor *y = NULL;
    CU_ASSERT_EQUAL_FATAL(cast_from_string(f, 6, 1, &y, NULL, 0), TGC_OK);
    const float *p = tgc_tensor_data(y);
    CU_ASSERT(p[0] == 2.5f && isnan(p[1]) && p[2] == INFINITY && p[3] == -INFINITY);
    CU_ASSERT(p[4] == 0.0010000000474974513f && p[5] == 0.10000000149011612f);
    tgc_tensor_release(y);
    /* np.array(['-7', '42', '300']).astype(np.int64) */
    static const char *const i[] = {"-7", "42", "300"};
    CU_ASSERT_EQUAL_FATAL(cast_from_string(i, 3, 7, &y, NULL, 0), TGC_OK);
    const int64_t *q = tgc_tensor_data(y);
    CU_ASSERT(q[0] == -7 && q[1] == 42 && q[2] == 300);
    tgc_tensor_release(y);
    /* bool: true/false in any case, else a number's != 0 (by hand) */
    static const char *const b[] = {"True", "false", "0", "2.5"};
    CU_ASSERT_EQUAL_FATAL(cast_from_string(b, 4, 9, &y, NULL, 0), TGC_OK);
    const uint8_t *r = tgc_tensor_data(y);
    CU_ASSERT(r[0] == 1 && r[1] == 0 && r[2] == 0 && r[3] == 1);
    tgc_tensor_release(y);
    /* a string that is no number: the kernel fails, naming node and element */
    static const char *const bad[] = {"1", "0x10"};
    char err[1024];
    y = NULL;
    CU_ASSERT_EQUAL(cast_from_string(bad, 2, 1, &y, err, sizeof err), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "node 'y' (Cast)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "element 1, \"0x10\", is not a float32 value"));
    static const char *const big[] = {"99999999999999999999"};
    CU_ASSERT_EQUAL(cast_from_string(big, 1, 7, &y, err, sizeof err), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "is not a int64 value"));
}

/* ---- The data-moving ops ------------------------------------------------------------- */

static const char moves_yaml[] =
    "format: tgc/1\nname: moves\n"
    "inputs:\n  - {name: x, dtype: string, shape: [2, 3]}\n"
    "initializers:\n"
    "  - {name: idx, dtype: int64, shape: [2], values: [2, 0]}\n"
    "  - {name: w, dtype: string, shape: [1, 3], values: [\"p\", \"\", \"q r\"]}\n"
    "  - {name: shp, dtype: int64, shape: [1], values: [9]}\n"
    "  - {name: s0, dtype: int64, shape: [1], values: [1]}\n"
    "  - {name: s1, dtype: int64, shape: [1], values: [3]}\n"
    "  - {name: eshape, dtype: int64, shape: [2], values: [2, 3]}\n"
    "  - {name: reps, dtype: int64, shape: [2], values: [1, 2]}\n"
    "  - {name: ax, dtype: int64, shape: [1], values: [0]}\n"
    "  - {name: parts, dtype: int64, shape: [2], values: [1, 2]}\n"
    "outputs: [t, g, c, r, sl, e, tl, sq, un, i, f, 'sp:0', 'sp:1']\n"
    "nodes:\n"
    "  - {name: t, op: Transpose, inputs: [x], attrs: {perm: [1, 0]}}\n"
    "  - {name: g, op: Gather, inputs: [x, idx], attrs: {axis: 1}}\n"
    "  - {name: c, op: Concat, inputs: [x, w], attrs: {axis: 0}}\n"
    "  - {name: r, op: Reshape, inputs: [c, shp]}\n"
    "  - {name: sl, op: Slice, inputs: [x, s0, s1, s0]}\n"
    "  - {name: e, op: Expand, inputs: [w, eshape]}\n"
    "  - {name: tl, op: Tile, inputs: [w, reps]}\n"
    "  - {name: sq, op: Squeeze, inputs: [w, ax]}\n"
    "  - {name: un, op: Unsqueeze, inputs: [sq, ax]}\n"
    "  - {name: i, op: Identity, inputs: [x]}\n"
    "  - {name: f, op: Flatten, inputs: [x], attrs: {axis: 0}}\n"
    "  - {name: sp, op: Split, inputs: [x, parts], attrs: {axis: 1}}\n";

static void test_moves(void) {
    static const char *const xv[] = {"a", "bb", "ccc", "d", "", "f"};
    tgc_tensor *x = strings_tensor(2, (int64_t[]){2, 3}, xv);
    tgc_tensor *o[13] = {0};
    const char *names[] = {"x"};
    CU_ASSERT_EQUAL_FATAL(run_yaml(moves_yaml, 1, names, &x, o, NULL, 0), TGC_OK);
    assert_strings(o[0], 6, (const char *const[]){"a", "d", "bb", "", "ccc", "f"});
    assert_strings(o[1], 4, (const char *const[]){"ccc", "a", "f", "d"});
    assert_strings(o[2], 9, (const char *const[]){"a", "bb", "ccc", "d", "", "f", "p", "", "q r"});
    assert_strings(o[3], 9, (const char *const[]){"a", "bb", "ccc", "d", "", "f", "p", "", "q r"});
    CU_ASSERT(tgc_tensor_rank(o[3]) == 1);
    assert_strings(o[4], 4, (const char *const[]){"bb", "ccc", "", "f"}); /* x[:, 1:3] */
    assert_strings(o[5], 6, (const char *const[]){"p", "", "q r", "p", "", "q r"});
    assert_strings(o[6], 6, (const char *const[]){"p", "", "q r", "p", "", "q r"});
    CU_ASSERT(tgc_tensor_dims(o[6])[0] == 1 && tgc_tensor_dims(o[6])[1] == 6);
    assert_strings(o[7], 3, (const char *const[]){"p", "", "q r"});
    assert_strings(o[8], 3, (const char *const[]){"p", "", "q r"});
    assert_strings(o[9], 6, xv);
    assert_strings(o[10], 6, xv);
    assert_strings(o[11], 2, (const char *const[]){"a", "d"});
    assert_strings(o[12], 4, (const char *const[]){"bb", "ccc", "", "f"});
    /* every output owns its strings: none shares a pointer with x */
    const char *const *xs = tgc_tensor_data(x), *const *is = tgc_tensor_data(o[9]);
    CU_ASSERT(xs[0] != is[0]);
    for (int k = 0; k < 13; k++) tgc_tensor_release(o[k]);
    tgc_tensor_release(x);
}

/* Each host allocation of a run failing in turn (the strings the kernels
 * copy among them): every run fails cleanly or succeeds, and nothing leaks
 * or is freed twice (the harness counts blocks; ASan sees the rest). */
static void test_moves_failing(void) {
    static const char *const xv[] = {"a", "bb", "ccc", "d", "", "f"};
    tgc_tensor *x = strings_tensor(2, (int64_t[]){2, 3}, xv);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_session *s = NULL;
    CU_ASSERT_FATAL(tgc_graph_load_string(moves_yaml, strlen(moves_yaml), "m.yaml", NULL, d, &g) == TGC_OK);
    CU_ASSERT_FATAL(tgc_session_create(g, "cpu", NULL, d, &s) == TGC_OK);
    const char *names[] = {"x"};
    int failed = 0;
    for (int64_t n = 1; n < 5000; n++) {
        tgc_tensor *o[13] = {0};
        tgc_diags *rd = tgc_diags_create();
        tgc_host_alloc_fail_nth(n);
        tgc_status st = tgc_session_run(s, 1, names, &x, o, rd);
        tgc_host_alloc_fail_nth(0);
        tgc_diags_free(rd);
        if (st == TGC_OK) {
            assert_strings(o[3], 9, (const char *const[]){"a", "bb", "ccc", "d", "", "f", "p", "", "q r"});
            for (int k = 0; k < 13; k++) tgc_tensor_release(o[k]);
            break;
        }
        failed++;
        CU_ASSERT(st == TGC_ERR_NOMEM || st == TGC_ERR_RUNTIME);
    }
    CU_ASSERT(failed > 20); /* the outputs' strings alone are more allocations than that */
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
    tgc_tensor_release(x);
}

/* An op that does not take strings refuses them at load. */
static void test_refused(void) {
    static const char yaml[] = "format: tgc/1\nname: r\n"
                               "inputs:\n  - {name: x, dtype: string, shape: [2]}\n"
                               "outputs: [y]\n"
                               "nodes:\n  - {name: y, op: Neg, inputs: [x]}\n";
    char err[1024];
    CU_ASSERT_EQUAL(run_yaml(yaml, 0, NULL, NULL, NULL, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "Neg does not take strings"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "[dtype-mismatch]"));
}

/* ---- StringNormalizer ------------------------------------------------------------------ */

static const char strnorm_yaml[] = "format: tgc/1\nname: s\n"
                                   "inputs:\n  - {name: x, dtype: string, shape: [%s]}\n"
                                   "outputs: [y]\n"
                                   "nodes:\n  - {name: y, op: StringNormalizer, inputs: [x], attrs: {%s}}\n";

static tgc_status strnorm(const char *shape, const char *attrs, int rank, const int64_t *dims,
                          const char *const *values, tgc_tensor **y, char *err, size_t size) {
    char yaml[1024];
    snprintf(yaml, sizeof yaml, strnorm_yaml, shape, attrs);
    tgc_tensor *x = strings_tensor(rank, dims, values);
    const char *names[] = {"x"};
    tgc_status st = run_yaml(yaml, 1, names, &x, y, err, size);
    tgc_tensor_release(x);
    return st;
}

static void test_strnorm(void) {
    tgc_tensor *y = NULL;
    /* [1, C], every element a stopword: one empty string, [1, 1] */
    static const char *const mon[] = {"Monday", "MONDAY"};
    CU_ASSERT_EQUAL_FATAL(strnorm("1, 2", "stopwords: [monday]", 2, (int64_t[]){1, 2}, mon, &y, NULL, 0), TGC_OK);
    CU_ASSERT(tgc_tensor_rank(y) == 2 && tgc_tensor_dims(y)[0] == 1 && tgc_tensor_dims(y)[1] == 1);
    assert_strings(y, 1, (const char *const[]){""});
    tgc_tensor_release(y);
    /* case-insensitive stopwords beyond ASCII; LOWER maps U+00C9 to U+00E9 and Greek capitals
     * (Python: 'ÉTÉ'.lower(), 'ΣΟΦΙΑ'.lower() gives 'σοφια') */
    static const char *const words[] = {"été", "Été", "ÉTÉ!", "ΣΟΦΙΑ"};
    CU_ASSERT_EQUAL_FATAL(strnorm("4", "stopwords: [ÉTÉ], case_change_action: LOWER, locale: en_US", 1,
                                  (int64_t[]){4}, words, &y, NULL, 0),
                          TGC_OK);
    assert_strings(y, 2, (const char *const[]){"été!", "σοφια"});
    tgc_tensor_release(y);
    /* case-sensitive: only the exact word goes */
    CU_ASSERT_EQUAL_FATAL(strnorm("4", "stopwords: [été], is_case_sensitive: 1, case_change_action: UPPER", 1,
                                  (int64_t[]){4}, words, &y, NULL, 0),
                          TGC_OK);
    assert_strings(y, 3, (const char *const[]){"ÉTÉ", "ÉTÉ!", "ΣΟΦΙΑ"});
    tgc_tensor_release(y);
    /* refused at load: an unknown action, a locale tgc has no rules for, rank 3 */
    char err[1024];
    CU_ASSERT_EQUAL(strnorm("4", "case_change_action: TITLE", 1, (int64_t[]){4}, words, &y, err, sizeof err),
                    TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "LOWER, UPPER or NONE"));
    CU_ASSERT_EQUAL(strnorm("4", "locale: tr_TR", 1, (int64_t[]){4}, words, &y, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "[unsupported]"));
    CU_ASSERT_EQUAL(strnorm("1, 2, 2", "locale: en_US", 3, (int64_t[]){1, 2, 2}, words, &y, err, sizeof err),
                    TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "[C] or [1, C]"));
}

/* ---- Public tensors ---------------------------------------------------------------------- */

static void test_tensor_api(void) {
    tgc_tensor *t = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_STRING, 1, (int64_t[]){3}, NULL, &t) == TGC_OK);
    assert_strings(t, 3, (const char *const[]){"", "", ""});
    CU_ASSERT_PTR_NULL(tgc_tensor_string(t, 3));
    CU_ASSERT_PTR_NULL(tgc_tensor_string(t, -1));
    tgc_tensor_release(t);
    char word[] = "mine";
    const char *values[] = {word, NULL};
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_STRING, 1, (int64_t[]){2}, values, &t) == TGC_OK);
    word[0] = 'M'; /* the tensor holds its own copy */
    assert_strings(t, 2, (const char *const[]){"mine", ""});
    tgc_tensor *f = NULL;
    CU_ASSERT_FATAL(tgc_tensor_create(TGC_FLOAT32, 0, NULL, NULL, &f) == TGC_OK);
    CU_ASSERT_PTR_NULL(tgc_tensor_string(f, 0));
    tgc_tensor_release(f);
    tgc_tensor_release(t);
}

TGC_TEST_MAIN("strings", {"cast to string", test_cast_to_string}, {"cast from string", test_cast_from_string},
              {"data-moving ops", test_moves}, {"data-moving ops, allocations failing", test_moves_failing},
              {"ops without strings refuse them", test_refused},
              {"StringNormalizer", test_strnorm}, {"tensor API", test_tensor_api})
