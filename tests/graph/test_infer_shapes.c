/* Inference of the shape-manipulating and tensor-building ops (ONNX opset
 * 17) and of the compile-time values that flow through them: Shape, Size,
 * Reshape, Flatten, Transpose, Unsqueeze, Squeeze, Expand, Gather, Concat,
 * Split, Slice, Range, ConstantOfShape, Constant and Identity. Slice and
 * Range expectations agree with numpy (a[-3:100000], np.arange(10, 0, -3)). */
#include "tests/graph/infer_fixture.h"

#include <stdint.h>

/* ---- Shape, Size ------------------------------------------------------------- */

static void test_shape(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 5");
    fx_input(&f, "s", TGC_FLOAT32, "");
    fx_input(&f, "u", TGC_FLOAT32, "?");
    const struct {
        bool has_start, has_end;
        int64_t start, end;
        const char *out, *value;
    } cases[] = {
        {false, false, 0, 0, "[3]", "[N, 3, 5]"},
        {true, false, 1, 0, "[2]", "[3, 5]"},
        {true, false, -1, 0, "[1]", "[5]"},
        {false, true, 0, -1, "[2]", "[N, 3]"},
        {true, true, 2, 1, "[0]", "[]"},         /* start past end: empty */
        {true, true, -10, 10, "[3]", "[N, 3, 5]"}, /* both clamp to [0, 3] */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%zu", i);
        int32_t n = fx_op(&f, name, "Shape", "x", 1);
        if (cases[i].has_start) fx_attr_int(&f, n, "start", cases[i].start);
        if (cases[i].has_end) fx_attr_int(&f, n, "end", cases[i].end);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_INT64, cases[i].out);
        FX_VALUE(&f, n, 0, cases[i].value);
    }
    int32_t sc = fx_op(&f, "sc", "Shape", "s", 1);
    FX_OK(&f, sc);
    FX_OUT(&f, sc, 0, TGC_INT64, "[0]");
    FX_VALUE(&f, sc, 0, "[]");
    int32_t su = fx_op(&f, "su", "Shape", "u", 1);
    FX_OK(&f, su);
    FX_OUT(&f, su, 0, TGC_INT64, "[unk__0]");
    FX_VALUE(&f, su, 0, "none");
    fx_end(&f);
}

static void test_size(void) {
    fx f = fx_begin();
    const char *const cases[][2] = {
        {"2, 3", "[6]"}, {"N, 3", "none"}, {"N, 1", "[N]"}, {"0, N", "[0]"}, {"", "[1]"}, {"?", "none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char in[16], name[16];
        snprintf(in, sizeof in, "x%zu", i);
        snprintf(name, sizeof name, "n%zu", i);
        fx_input(&f, in, TGC_UINT8, cases[i][0]);
        int32_t n = fx_op(&f, name, "Size", in, 1);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_INT64, "[]");
        FX_VALUE(&f, n, 0, cases[i][1]);
    }
    fx_end(&f);
}

/* ---- Reshape ---------------------------------------------------------------- */

static void test_reshape_zero_and_minus_one(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "2, 3, 4");
    const char *const cases[][2] = {
        {"0, -1", "[2, 12]"},      /* 0 copies dim 0; -1 = 24 / 2 */
        {"-1", "[24]"},
        {"4, -1, 2", "[4, 3, 2]"}, /* 24 / 8 */
        {"4, 6", "[4, 6]"},
        {"0, 0, 4", "[2, 3, 4]"},
        {"1, 1, 0, -1", "[1, 1, 4, 6]"}, /* index 2 copies x's dim 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sname[16], name[16];
        snprintf(sname, sizeof sname, "t%zu", i);
        snprintf(name, sizeof name, "r%zu", i);
        char len[16];
        int n_el = 1;
        for (const char *p = cases[i][0]; *p; p++) n_el += *p == ',';
        snprintf(len, sizeof len, "%d", n_el);
        fx_value(&f, sname, TGC_INT64, len, cases[i][0]);
        char inputs[32];
        snprintf(inputs, sizeof inputs, "x, %s", sname);
        int32_t r = fx_op(&f, name, "Reshape", inputs, 1);
        FX_OK(&f, r);
        FX_OUT(&f, r, 0, TGC_FLOAT32, cases[i][1]);
    }
    /* allowzero = 1: a 0 is a literal zero-sized dim. */
    fx_input(&f, "empty", TGC_FLOAT32, "0, 3");
    fx_value(&f, "z", TGC_INT64, "2", "3, 0");
    int32_t az = fx_op(&f, "az", "Reshape", "empty, z", 1);
    fx_attr_int(&f, az, "allowzero", 1);
    FX_OK(&f, az);
    FX_OUT(&f, az, 0, TGC_FLOAT32, "[3, 0]");
    fx_end(&f);
}

static void test_reshape_symbolic(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 16, 2, 2");
    fx_input(&f, "y", TGC_FLOAT32, "N, 3");
    fx_input(&f, "z", TGC_FLOAT32, "N, C, 4");
    fx_value(&f, "n_m1", TGC_INT64, "2", "N, -1");
    fx_value(&f, "z_m1", TGC_INT64, "2", "0, -1");
    fx_value(&f, "m1_64", TGC_INT64, "2", "-1, 64");
    fx_value(&f, "m1_2", TGC_INT64, "2", "-1, 2");
    fx_value(&f, "nc22", TGC_INT64, "4", "N, C, 2, 2");
    /* N * 64 elements: [N, -1] cancels N, leaving 64 / 1. */
    int32_t a = fx_op(&f, "a", "Reshape", "x, n_m1", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[N, 64]");
    int32_t b = fx_op(&f, "b", "Reshape", "x, z_m1", 1);
    FX_OK(&f, b);
    FX_OUT(&f, b, 0, TGC_FLOAT32, "[N, 64]");
    /* -1 = N * 64 / 64 = N. */
    int32_t c = fx_op(&f, "c", "Reshape", "x, m1_64", 1);
    FX_OK(&f, c);
    FX_OUT(&f, c, 0, TGC_FLOAT32, "[N, 64]");
    /* -1 = N * 3 / 2 cannot be told. */
    int32_t d = fx_op(&f, "d", "Reshape", "y, m1_2", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[unk__0, 2]");
    int32_t e = fx_op(&f, "e", "Reshape", "z, nc22", 1);
    FX_OK(&f, e);
    FX_OUT(&f, e, 0, TGC_FLOAT32, "[N, C, 2, 2]");
    fx_end(&f);
}

static void test_reshape_errors(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "2, 3, 4");
    fx_value(&f, "t5", TGC_INT64, "2", "5, -1");
    fx_value(&f, "t55", TGC_INT64, "2", "5, 5");
    fx_value(&f, "tmm", TGC_INT64, "2", "-1, -1");
    fx_value(&f, "tm2", TGC_INT64, "2", "-2, 12");
    fx_value(&f, "t0", TGC_INT64, "4", "1, 1, 1, 0");
    fx_value(&f, "t0m", TGC_INT64, "2", "0, -1");
    fx_value(&f, "t32", TGC_INT32, "2", "4, 6");
    const struct {
        const char *target, *rule, *fragment;
        int allowzero;
    } cases[] = {
        {"t5", "shape-mismatch", "cannot reshape [2, 3, 4] to [5, -1]: 24 elements do not divide by 5", 0},
        {"t55", "shape-mismatch", "cannot reshape [2, 3, 4] (24 elements) to [5, 5] (25 elements)", 0},
        {"tmm", "bad-input", "more than one -1", 0},
        {"tm2", "bad-input", "the target shape has -2 at index 0", 0},
        {"t0", "bad-input", "the target shape has 0 at index 3, but the input [2, 3, 4] has no dim there", 0},
        {"t0m", "bad-input", "with allowzero = 1 the target shape cannot hold both 0 and -1", 1},
        {"t32", "dtype-mismatch", "input 1 is int32; Reshape needs int64", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16], inputs[32];
        snprintf(name, sizeof name, "r%zu", i);
        snprintf(inputs, sizeof inputs, "x, %s", cases[i].target);
        int32_t r = fx_op(&f, name, "Reshape", inputs, 1);
        if (cases[i].allowzero) fx_attr_int(&f, r, "allowzero", 1);
        FX_FAILS(&f, r, 1, cases[i].rule, cases[i].fragment);
    }
    fx_end(&f);
}

static void test_reshape_unknown_target(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 12");
    fx_input(&f, "t3", TGC_INT64, "3");
    fx_input(&f, "tk", TGC_INT64, "K");
    fx_value(&f, "seven", TGC_INT64, "", "7");
    fx_value(&f, "one", TGC_INT64, "1", "1");
    int32_t a = fx_op(&f, "a", "Reshape", "x, t3", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[unk__0, unk__1, unk__2]");
    int32_t b = fx_op(&f, "b", "Reshape", "x, tk", 1);
    FX_OK(&f, b);
    FX_OUT(&f, b, 0, TGC_FLOAT32, "?");
    /* A value survives a reshape that keeps it 0-D or 1-D. */
    int32_t c = fx_op(&f, "c", "Reshape", "seven, one", 1);
    FX_OK(&f, c);
    FX_OUT(&f, c, 0, TGC_INT64, "[1]");
    FX_VALUE(&f, c, 0, "[7]");
    fx_end(&f);
}

/* Shape -> Gather -> Concat gives [N, -1] at compile time, and Reshape uses it. */
static void test_shape_gather_concat_reshape(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 16, 2, 2");
    fx_value(&f, "i0", TGC_INT64, "1", "0");
    fx_value(&f, "m1", TGC_INT64, "1", "-1");
    int32_t s = fx_op(&f, "s", "Shape", "x", 1);
    FX_OK(&f, s);
    FX_VALUE(&f, s, 0, "[N, 16, 2, 2]");
    int32_t g = fx_op(&f, "g", "Gather", "s, i0", 1);
    FX_OK(&f, g);
    FX_OUT(&f, g, 0, TGC_INT64, "[1]");
    FX_VALUE(&f, g, 0, "[N]");
    int32_t cat = fx_op(&f, "cat", "Concat", "g, m1", 1);
    fx_attr_int(&f, cat, "axis", 0);
    FX_OK(&f, cat);
    FX_OUT(&f, cat, 0, TGC_INT64, "[2]");
    FX_VALUE(&f, cat, 0, "[N, -1]");
    int32_t r = fx_op(&f, "r", "Reshape", "x, cat", 1);
    FX_OK(&f, r);
    FX_OUT(&f, r, 0, TGC_FLOAT32, "[N, 64]");
    fx_end(&f);
}

/* ---- Flatten, Transpose ------------------------------------------------------ */

static void test_flatten(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4, 5");
    fx_input(&f, "c", TGC_FLOAT32, "2, 3, 4, 5");
    fx_input(&f, "u", TGC_FLOAT32, "?");
    int32_t d = fx_op(&f, "d", "Flatten", "x", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[N, 60]");
    /* axis 0: [1, N * 60], and N * 60 is no single symbol. */
    int32_t a0 = fx_op(&f, "a0", "Flatten", "x", 1);
    fx_attr_int(&f, a0, "axis", 0);
    FX_OK(&f, a0);
    FX_OUT(&f, a0, 0, TGC_FLOAT32, "[1, unk__0]");
    int32_t neg = fx_op(&f, "neg", "Flatten", "x", 1);
    fx_attr_int(&f, neg, "axis", -1);
    FX_OK(&f, neg);
    FX_OUT(&f, neg, 0, TGC_FLOAT32, "[unk__1, 5]");
    int32_t c2 = fx_op(&f, "c2", "Flatten", "c", 1);
    fx_attr_int(&f, c2, "axis", -2);
    FX_OK(&f, c2);
    FX_OUT(&f, c2, 0, TGC_FLOAT32, "[6, 20]");
    int32_t c4 = fx_op(&f, "c4", "Flatten", "c", 1);
    fx_attr_int(&f, c4, "axis", 4); /* axis may equal the rank */
    FX_OK(&f, c4);
    FX_OUT(&f, c4, 0, TGC_FLOAT32, "[120, 1]");
    int32_t un = fx_op(&f, "un", "Flatten", "u", 1);
    FX_OK(&f, un);
    FX_OUT(&f, un, 0, TGC_FLOAT32, "[unk__2, unk__3]");
    int32_t bad = fx_op(&f, "bad", "Flatten", "c", 1);
    fx_attr_int(&f, bad, "axis", 5);
    FX_FAILS(&f, bad, -1, "bad-attribute", "attribute 'axis' is 5, out of range [-4, 4]");
    fx_end(&f);
}

static void test_transpose(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 5");
    fx_input(&f, "u", TGC_FLOAT32, "?");
    int32_t d = fx_op(&f, "d", "Transpose", "x", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[5, 3, N]");
    int32_t p = fx_op(&f, "p", "Transpose", "x", 1);
    fx_attr_ints(&f, p, "perm", "0, 2, 1");
    FX_OK(&f, p);
    FX_OUT(&f, p, 0, TGC_FLOAT32, "[N, 5, 3]");
    int32_t up = fx_op(&f, "up", "Transpose", "u", 1);
    fx_attr_ints(&f, up, "perm", "1, 0");
    FX_OK(&f, up);
    FX_OUT(&f, up, 0, TGC_FLOAT32, "[unk__0, unk__1]");
    int32_t dup = fx_op(&f, "dup", "Transpose", "x", 1);
    fx_attr_ints(&f, dup, "perm", "0, 0, 1");
    FX_FAILS(&f, dup, -1, "bad-attribute", "attribute 'perm' is not a permutation of the 3 axes");
    int32_t shortp = fx_op(&f, "shortp", "Transpose", "x", 1);
    fx_attr_ints(&f, shortp, "perm", "1, 0");
    FX_FAILS(&f, shortp, -1, "bad-attribute", "attribute 'perm'");
    fx_end(&f);
}

/* ---- Unsqueeze, Squeeze ------------------------------------------------------ */

static void test_unsqueeze(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "3, 4");
    fx_value(&f, "seven", TGC_INT64, "", "7");
    fx_value(&f, "ends", TGC_INT64, "2", "0, -1");
    fx_value(&f, "zero", TGC_INT64, "1", "0");
    fx_value(&f, "dup", TGC_INT64, "2", "1, -3");
    fx_value(&f, "far", TGC_INT64, "1", "3");
    fx_input(&f, "dyn", TGC_INT64, "1");
    /* Output rank 4: axes 0 and -1 (= 3) become 1. */
    int32_t a = fx_op(&f, "a", "Unsqueeze", "x, ends", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[1, 3, 4, 1]");
    int32_t v = fx_op(&f, "v", "Unsqueeze", "seven, zero", 1);
    FX_OK(&f, v);
    FX_OUT(&f, v, 0, TGC_INT64, "[1]");
    FX_VALUE(&f, v, 0, "[7]");
    int32_t u = fx_op(&f, "u", "Unsqueeze", "x, dyn", 1);
    FX_OK(&f, u);
    FX_OUT(&f, u, 0, TGC_FLOAT32, "?");
    /* Rank 4 output: -3 is axis 1, already listed. */
    int32_t d = fx_op(&f, "d", "Unsqueeze", "x, dup", 1);
    FX_FAILS(&f, d, 1, "bad-input", "input 'axes' repeats axis 1");
    int32_t r = fx_op(&f, "r", "Unsqueeze", "x, far", 1);
    FX_FAILS(&f, r, 1, "bad-input", "input 'axes' has axis 3, out of range [-3, 2] for rank 3");
    fx_end(&f);
}

static void test_squeeze(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "1, 3, 1, 5");
    fx_input(&f, "s", TGC_FLOAT32, "N, 1");
    fx_value(&f, "nv", TGC_INT64, "1", "N");
    fx_value(&f, "m2", TGC_INT64, "1", "-2");
    fx_value(&f, "one", TGC_INT64, "1", "1");
    fx_value(&f, "zero", TGC_INT64, "1", "0");
    fx_input(&f, "dyn", TGC_INT64, "1");
    int32_t a = fx_op(&f, "a", "Squeeze", "x, m2", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[1, 3, 5]");
    int32_t all = fx_op(&f, "all", "Squeeze", "x", 1);
    FX_OK(&f, all);
    FX_OUT(&f, all, 0, TGC_FLOAT32, "[3, 5]");
    int32_t bad = fx_op(&f, "bad", "Squeeze", "x, one", 1);
    FX_FAILS(&f, bad, 1, "shape-mismatch", "cannot squeeze axis 1 of [1, 3, 1, 5]: its size is 3, not 1");
    /* Without axes, which symbolic dims are 1 is unknown. */
    int32_t sym = fx_op(&f, "sym", "Squeeze", "s", 1);
    FX_OK(&f, sym);
    FX_OUT(&f, sym, 0, TGC_FLOAT32, "?");
    /* With axes, a symbol is accepted (N must be 1 at run time). */
    int32_t sa = fx_op(&f, "sa", "Squeeze", "s, zero", 1);
    FX_OK(&f, sa);
    FX_OUT(&f, sa, 0, TGC_FLOAT32, "[1]");
    int32_t v = fx_op(&f, "v", "Squeeze", "nv, zero", 1);
    FX_OK(&f, v);
    FX_OUT(&f, v, 0, TGC_INT64, "[]");
    FX_VALUE(&f, v, 0, "[N]");
    int32_t d = fx_op(&f, "d", "Squeeze", "x, dyn", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "?");
    fx_end(&f);
}

/* ---- Expand -------------------------------------------------------------------- */

static void test_expand(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "3, 1");
    fx_input(&f, "n", TGC_FLOAT32, "N, 1");
    fx_input(&f, "r", TGC_FLOAT32, "1, 4");
    fx_input(&f, "v3", TGC_FLOAT32, "3");
    fx_value(&f, "t214", TGC_INT64, "3", "2, 1, 4");
    fx_value(&f, "t15", TGC_INT64, "2", "1, 5");
    fx_value(&f, "tn4", TGC_INT64, "2", "M, 4");
    fx_value(&f, "t4", TGC_INT64, "1", "4");
    fx_value(&f, "tneg", TGC_INT64, "1", "-3");
    fx_input(&f, "dyn", TGC_INT64, "3");
    /* [3, 1] with [2, 1, 4] -> [2, 3, 4]: a 1 in the target keeps the input's dim. */
    int32_t a = fx_op(&f, "a", "Expand", "x, t214", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[2, 3, 4]");
    int32_t b = fx_op(&f, "b", "Expand", "n, t15", 1);
    FX_OK(&f, b);
    FX_OUT(&f, b, 0, TGC_FLOAT32, "[N, 5]");
    int32_t c = fx_op(&f, "c", "Expand", "r, tn4", 1);
    FX_OK(&f, c);
    FX_OUT(&f, c, 0, TGC_FLOAT32, "[M, 4]");
    /* Unknown target [t0, t1, t2] against [_, 3, 1]: 1 gives t0, 3 stays, 1 gives t2. */
    int32_t d = fx_op(&f, "d", "Expand", "x, dyn", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[unk__0, 3, unk__2]");
    int32_t bad = fx_op(&f, "bad", "Expand", "v3, t4", 1);
    FX_FAILS(&f, bad, 1, "shape-mismatch", "input 0 has shape [3] and input 1 has shape [4]");
    int32_t neg = fx_op(&f, "neg", "Expand", "v3, tneg", 1);
    FX_FAILS(&f, neg, 1, "bad-input", "the target shape has -3 at index 0");
    fx_end(&f);
}

/* ---- Gather, Concat -------------------------------------------------------------- */

static void test_gather(void) {
    fx f = fx_begin();
    fx_input(&f, "data", TGC_FLOAT32, "5, 4, 3");
    fx_input(&f, "idx", TGC_INT64, "2, 7");
    fx_input(&f, "idx32", TGC_INT32, "");
    fx_input(&f, "fidx", TGC_FLOAT32, "2");
    fx_input(&f, "sc", TGC_FLOAT32, "");
    fx_value(&f, "sv", TGC_INT64, "3", "N, 16, 2");
    fx_value(&f, "last", TGC_INT64, "", "-1");
    fx_value(&f, "two", TGC_INT64, "2", "2, 0");
    fx_value(&f, "five", TGC_INT64, "1", "5");
    /* r + q - 1 = 3 + 2 - 1: [5] + [2, 7] + [3]. */
    int32_t a = fx_op(&f, "a", "Gather", "data, idx", 1);
    fx_attr_int(&f, a, "axis", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[5, 2, 7, 3]");
    int32_t b = fx_op(&f, "b", "Gather", "data, idx32", 1);
    FX_OK(&f, b);
    FX_OUT(&f, b, 0, TGC_FLOAT32, "[4, 3]");
    int32_t c = fx_op(&f, "c", "Gather", "data, idx", 1);
    fx_attr_int(&f, c, "axis", -1);
    FX_OK(&f, c);
    FX_OUT(&f, c, 0, TGC_FLOAT32, "[5, 4, 2, 7]");
    int32_t v = fx_op(&f, "v", "Gather", "sv, last", 1);
    FX_OK(&f, v);
    FX_OUT(&f, v, 0, TGC_INT64, "[]");
    FX_VALUE(&f, v, 0, "[2]");
    int32_t v2 = fx_op(&f, "v2", "Gather", "sv, two", 1);
    FX_OK(&f, v2);
    FX_VALUE(&f, v2, 0, "[2, N]");
    int32_t oob = fx_op(&f, "oob", "Gather", "sv, five", 1);
    FX_FAILS(&f, oob, 1, "bad-input", "index 5 is out of range for axis 0 of data [3]");
    int32_t fl = fx_op(&f, "fl", "Gather", "data, fidx", 1);
    FX_FAILS(&f, fl, 1, "dtype-mismatch", "input 1 is float32; Gather needs int32 or int64");
    int32_t s = fx_op(&f, "s", "Gather", "sc, idx", 1);
    FX_FAILS(&f, s, 0, "shape-mismatch", "Gather needs data of rank >= 1");
    int32_t ax = fx_op(&f, "ax", "Gather", "data, idx", 1);
    fx_attr_int(&f, ax, "axis", 3);
    FX_FAILS(&f, ax, -1, "bad-attribute", "attribute 'axis' is 3");
    fx_end(&f);
}

static void test_concat(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "N, 3");
    fx_input(&f, "b", TGC_FLOAT32, "N, 5");
    fx_input(&f, "m", TGC_FLOAT32, "M, 3");
    fx_input(&f, "z", TGC_FLOAT32, "0, 3");
    fx_input(&f, "c23", TGC_FLOAT32, "2, 3");
    fx_input(&f, "c33", TGC_FLOAT32, "3, 3");
    fx_input(&f, "i", TGC_INT64, "N, 3");
    fx_input(&f, "r3", TGC_FLOAT32, "N, 3, 1");
    fx_input(&f, "u", TGC_FLOAT32, "?");
    const struct {
        const char *inputs;
        int64_t axis;
        const char *out;
    } ok[] = {
        {"a, b", 1, "[N, 8]"},   {"a, b", -1, "[N, 8]"}, {"a, z", 0, "[N, 3]"},
        {"c23, c33", 0, "[5, 3]"}, {"a, m", 0, "[unk__0, 3]"}, {"a, u, b", 1, "[N, unk__1]"},
        {"a", 0, "[N, 3]"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%zu", i);
        int32_t n = fx_op(&f, name, "Concat", ok[i].inputs, 1);
        fx_attr_int(&f, n, "axis", ok[i].axis);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_FLOAT32, ok[i].out);
    }
    int32_t mis = fx_op(&f, "mis", "Concat", "c23, c33", 1);
    fx_attr_int(&f, mis, "axis", 1);
    FX_FAILS(&f, mis, 1, "shape-mismatch", "input 1 has shape [3, 3] but input 0 has shape [2, 3]; they may differ only on axis 1");
    int32_t rank = fx_op(&f, "rank", "Concat", "a, r3", 1);
    fx_attr_int(&f, rank, "axis", 0);
    FX_FAILS(&f, rank, 1, "shape-mismatch", "Concat needs one rank");
    int32_t dt = fx_op(&f, "dt", "Concat", "a, i", 1);
    fx_attr_int(&f, dt, "axis", 0);
    FX_FAILS(&f, dt, 1, "dtype-mismatch", "input 1 is int64 but input 0 is float32");
    int32_t noaxis = fx_op(&f, "noaxis", "Concat", "a, b", 1);
    FX_FAILS(&f, noaxis, -1, "bad-attribute", "attribute 'axis' is required");
    fx_end(&f);
}

/* ---- Split ---------------------------------------------------------------------- */

static void test_split_even(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 6");
    int32_t s = fx_op(&f, "s", "Split", "x", 3);
    fx_attr_int(&f, s, "axis", 1);
    FX_OK(&f, s);
    for (int i = 0; i < 3; i++) FX_OUT(&f, s, i, TGC_FLOAT32, "[N, 2]");
    /* N / 2 is unknown, but both halves have the same size. */
    int32_t h = fx_op(&f, "h", "Split", "x", 2);
    FX_OK(&f, h);
    FX_OUT(&f, h, 0, TGC_FLOAT32, "[unk__0, 6]");
    FX_OUT(&f, h, 1, TGC_FLOAT32, "[unk__0, 6]");
    int32_t one = fx_op(&f, "one", "Split", "x", 1);
    FX_OK(&f, one);
    FX_OUT(&f, one, 0, TGC_FLOAT32, "[N, 6]");
    int32_t bad = fx_op(&f, "bad", "Split", "x", 4);
    fx_attr_int(&f, bad, "axis", -1);
    FX_FAILS(&f, bad, 0, "shape-mismatch", "axis 1 of input [N, 6] has size 6, which does not split evenly into 4 outputs");
    fx_end(&f);
}

static void test_split_explicit(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 6");
    fx_value(&f, "s15", TGC_INT64, "2", "1, 5");
    fx_value(&f, "s14", TGC_INT64, "2", "1, 4");
    fx_value(&f, "s123", TGC_INT64, "3", "1, 2, 3");
    fx_value(&f, "sneg", TGC_INT64, "2", "-1, 7");
    fx_input(&f, "dyn", TGC_INT64, "2");
    int32_t a = fx_op(&f, "a", "Split", "x, s15", 2);
    fx_attr_int(&f, a, "axis", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[N, 1]");
    FX_OUT(&f, a, 1, TGC_FLOAT32, "[N, 5]");
    int32_t d = fx_op(&f, "d", "Split", "x, dyn", 2);
    fx_attr_int(&f, d, "axis", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[N, unk__0]");
    FX_OUT(&f, d, 1, TGC_FLOAT32, "[N, unk__1]");
    int32_t sum = fx_op(&f, "sum", "Split", "x, s14", 2);
    fx_attr_int(&f, sum, "axis", 1);
    FX_FAILS(&f, sum, 1, "shape-mismatch", "the split sizes add up to 5 but axis 1 of input [N, 6] has 6");
    int32_t count = fx_op(&f, "count", "Split", "x, s123", 2);
    fx_attr_int(&f, count, "axis", 1);
    FX_FAILS(&f, count, 1, "bad-input", "input 1 (split) has 3 sizes but the node has 2 outputs");
    int32_t neg = fx_op(&f, "neg", "Split", "x, sneg", 2);
    fx_attr_int(&f, neg, "axis", 1);
    FX_FAILS(&f, neg, 1, "bad-input", "input 1 (split) has -1 at index 0");
    fx_end(&f);
}

/* ---- Slice ---------------------------------------------------------------------- */

/* Adds Slice node `name` over `data` with int64 inputs from value lists
 * ("" for an omitted axes or steps). */
static int32_t slice_node(fx *f, const char *name, const char *data, const char *starts, const char *ends,
                          const char *axes, const char *steps) {
    const char *lists[4] = {starts, ends, axes, steps};
    char inputs[160];
    int used = snprintf(inputs, sizeof inputs, "%s", data);
    for (int i = 0; i < 4; i++) {
        char vname[48] = "";
        if (lists[i] != NULL) {
            char len[16];
            int n = lists[i][0] ? 1 : 0;
            for (const char *p = lists[i]; *p; p++) n += *p == ',';
            snprintf(len, sizeof len, "%d", n);
            snprintf(vname, sizeof vname, "%s_in%d", name, i);
            fx_value(f, vname, TGC_INT64, len, lists[i]);
        }
        used += snprintf(inputs + used, sizeof inputs - (size_t)used, ", %s", vname);
    }
    /* Trailing omitted inputs are simply not written. */
    while (used > 2 && strcmp(inputs + used - 2, ", ") == 0) inputs[used -= 2] = '\0';
    return fx_op(f, name, "Slice", inputs, 1);
}

static void test_slice(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "10, 20");
    const struct {
        const char *starts, *ends, *axes, *steps, *out;
    } cases[] = {
        {"-3", "100000", "0", NULL, "[3, 20]"},              /* x[-3:100000] */
        {"-1", "-1000", "1", "-2", "[10, 10]"},              /* x[:, -1:-1000:-2] */
        {"1, 0", "9, 20", "0, 1", "2, 5", "[4, 4]"},         /* x[1:9:2, 0:20:5] */
        {"2", "5", NULL, NULL, "[3, 20]"},                   /* axes default to 0.. */
        {"5", "2", "0", NULL, "[0, 20]"},                    /* empty */
        {"0", "-1", "-1", NULL, "[10, 19]"},                 /* negative axis */
        {"9", "-100", "0", "-3", "[4, 20]"},                 /* x[9::-3]: 9, 6, 3, 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%zu", i);
        int32_t n = slice_node(&f, name, "x", cases[i].starts, cases[i].ends, cases[i].axes, cases[i].steps);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_FLOAT32, cases[i].out);
    }
    fx_end(&f);
}

static void test_slice_symbolic(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 8");
    fx_input(&f, "dyn", TGC_INT64, "1");
    fx_value(&f, "one", TGC_INT64, "1", "1");
    fx_value(&f, "big", TGC_INT64, "1", "9223372036854775807");
    /* The whole axis keeps N; from 1 it cannot be told; reversed whole keeps N. */
    int32_t whole = slice_node(&f, "whole", "x", "0", "9223372036854775807", "0", NULL);
    FX_OK(&f, whole);
    FX_OUT(&f, whole, 0, TGC_FLOAT32, "[N, 8]");
    int32_t from1 = slice_node(&f, "from1", "x", "1", "9223372036854775807", "0", NULL);
    FX_OK(&f, from1);
    FX_OUT(&f, from1, 0, TGC_FLOAT32, "[unk__0, 8]");
    int32_t rev = slice_node(&f, "rev", "x", "-1", "-9223372036854775807", "0", "-1");
    FX_OK(&f, rev);
    FX_OUT(&f, rev, 0, TGC_FLOAT32, "[N, 8]");
    /* Unknown starts: the sliced axis (1) is unknown, axis 0 is untouched. */
    fx_value(&f, "ax1", TGC_INT64, "1", "1");
    int32_t dyn = fx_op(&f, "dyn_slice", "Slice", "x, dyn, big, ax1", 1);
    FX_OK(&f, dyn);
    FX_OUT(&f, dyn, 0, TGC_FLOAT32, "[N, unk__1]");
    /* Unknown axes: any dim may change. */
    int32_t dax = fx_op(&f, "dax", "Slice", "x, one, big, dyn", 1);
    FX_OK(&f, dax);
    FX_OUT(&f, dax, 0, TGC_FLOAT32, "[unk__2, unk__3]");
    fx_end(&f);
}

static void test_slice_values_and_errors(void) {
    fx f = fx_begin();
    fx_value(&f, "v", TGC_INT64, "4", "N, 3, 5, 7");
    fx_input(&f, "x", TGC_FLOAT32, "10, 20");
    fx_value(&f, "s32", TGC_INT32, "1", "0");
    fx_value(&f, "e64", TGC_INT64, "1", "1");
    int32_t mid = slice_node(&f, "mid", "v", "1", "-1", NULL, NULL);
    FX_OK(&f, mid);
    FX_OUT(&f, mid, 0, TGC_INT64, "[2]");
    FX_VALUE(&f, mid, 0, "[3, 5]");
    int32_t step = slice_node(&f, "step", "v", "0", "4", "0", "2");
    FX_OK(&f, step);
    FX_VALUE(&f, step, 0, "[N, 5]");
    int32_t back = slice_node(&f, "back", "v", "-1", "-5", "0", "-1");
    FX_OK(&f, back);
    FX_VALUE(&f, back, 0, "[7, 5, 3, N]");
    int32_t zero = slice_node(&f, "zero", "x", "0", "5", "0", "0");
    FX_FAILS(&f, zero, 4, "bad-input", "input 4 (steps) has 0 at index 0");
    int32_t len = slice_node(&f, "len", "x", "0", "5, 6", NULL, NULL);
    FX_FAILS(&f, len, 2, "bad-input", "input 2 (ends) has 2 elements but input 1 (starts) has 1");
    int32_t ax = slice_node(&f, "ax", "x", "0", "5", "2", NULL);
    FX_FAILS(&f, ax, 3, "bad-input", "input 'axes' has axis 2, out of range [-2, 1] for rank 2");
    int32_t mixed = fx_op(&f, "mixed", "Slice", "x, s32, e64", 1);
    FX_FAILS(&f, mixed, 2, "dtype-mismatch", "input 2 is int64 but input 1 is int32");
    fx_end(&f);
}

/* ---- Range, ConstantOfShape, Constant ---------------------------------------------- */

static void test_range(void) {
    fx f = fx_begin();
    const struct {
        const char *start, *limit, *delta, *out, *value;
    } cases[] = {
        {"0", "10", "3", "[4]", "[0, 3, 6, 9]"},  /* ceil(10 / 3) = 4 */
        {"10", "0", "-3", "[4]", "[10, 7, 4, 1]"}, /* ceil(-10 / -3) = 4 */
        {"5", "0", "1", "[0]", "[]"},             /* max(ceil(-5), 0) */
        {"0", "1000", "1", "[1000]", "none"},      /* too long to carry */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char a[16], b[16], c[16], name[16], inputs[64];
        snprintf(a, sizeof a, "a%zu", i);
        snprintf(b, sizeof b, "b%zu", i);
        snprintf(c, sizeof c, "c%zu", i);
        snprintf(name, sizeof name, "r%zu", i);
        fx_value(&f, a, TGC_INT64, "", cases[i].start);
        fx_value(&f, b, TGC_INT64, "", cases[i].limit);
        fx_value(&f, c, TGC_INT64, "", cases[i].delta);
        snprintf(inputs, sizeof inputs, "%s, %s, %s", a, b, c);
        int32_t r = fx_op(&f, name, "Range", inputs, 1);
        FX_OK(&f, r);
        FX_OUT(&f, r, 0, TGC_INT64, cases[i].out);
        FX_VALUE(&f, r, 0, cases[i].value);
    }
    fx_input(&f, "fs", TGC_FLOAT32, "");
    fx_input(&f, "fv", TGC_FLOAT32, "2");
    fx_value(&f, "z", TGC_INT64, "", "0");
    fx_value(&f, "one", TGC_INT64, "", "1");
    int32_t fl = fx_op(&f, "fl", "Range", "fs, fs, fs", 1);
    FX_OK(&f, fl);
    FX_OUT(&f, fl, 0, TGC_FLOAT32, "[unk__0]");
    int32_t d0 = fx_op(&f, "d0", "Range", "z, one, z", 1);
    FX_FAILS(&f, d0, 2, "bad-input", "delta is 0");
    int32_t vec = fx_op(&f, "vec", "Range", "fv, fs, fs", 1);
    FX_FAILS(&f, vec, 0, "shape-mismatch", "input 0 (start) has shape [2]; it must be a scalar");
    int32_t mixed = fx_op(&f, "mixed", "Range", "z, fs, one", 1);
    FX_FAILS(&f, mixed, 1, "dtype-mismatch", "input 1 is float32 but input 0 is int64");
    fx_end(&f);
}

static void test_constant_of_shape(void) {
    fx f = fx_begin();
    fx_value(&f, "s", TGC_INT64, "2", "N, 3");
    fx_value(&f, "three", TGC_INT64, "1", "3");
    fx_value(&f, "empty", TGC_INT64, "0", "");
    fx_value(&f, "neg", TGC_INT64, "1", "-1");
    fx_input(&f, "dyn", TGC_INT64, "2");
    int32_t a = fx_op(&f, "a", "ConstantOfShape", "s", 1);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_FLOAT32, "[N, 3]");
    int32_t b = fx_op(&f, "b", "ConstantOfShape", "three", 1);
    fx_attr_tensor(&f, b, "value", TGC_INT64, "1", "5");
    FX_OK(&f, b);
    FX_OUT(&f, b, 0, TGC_INT64, "[3]");
    FX_VALUE(&f, b, 0, "[5, 5, 5]");
    int32_t sc = fx_op(&f, "sc", "ConstantOfShape", "empty", 1);
    fx_attr_tensor(&f, sc, "value", TGC_INT32, "1", "-2");
    FX_OK(&f, sc);
    FX_OUT(&f, sc, 0, TGC_INT32, "[]");
    FX_VALUE(&f, sc, 0, "[-2]");
    int32_t d = fx_op(&f, "d", "ConstantOfShape", "dyn", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[unk__0, unk__1]");
    int32_t n = fx_op(&f, "n", "ConstantOfShape", "neg", 1);
    FX_FAILS(&f, n, 0, "bad-input", "the shape has -1 at index 0");
    int32_t two = fx_op(&f, "two", "ConstantOfShape", "three", 1);
    fx_attr_tensor(&f, two, "value", TGC_FLOAT32, "2", "1, 2");
    FX_FAILS(&f, two, -1, "bad-attribute", "attribute 'value' must hold exactly one element");
    fx_end(&f);
}

static void test_constant(void) {
    fx f = fx_begin();
    int32_t t = fx_op(&f, "t", "Constant", "", 1);
    fx_attr_tensor(&f, t, "value", TGC_INT64, "2", "1, 2");
    FX_OK(&f, t);
    FX_OUT(&f, t, 0, TGC_INT64, "[2]");
    FX_VALUE(&f, t, 0, "[1, 2]");
    int32_t t32 = fx_op(&f, "t32", "Constant", "", 1);
    fx_attr_tensor(&f, t32, "value", TGC_INT32, "3", "-1, 7, 100");
    FX_OK(&f, t32);
    FX_VALUE(&f, t32, 0, "[-1, 7, 100]");
    int32_t tf = fx_op(&f, "tf", "Constant", "", 1);
    fx_attr_tensor(&f, tf, "value", TGC_FLOAT32, "2, 2", "1, 2, 3, 4");
    FX_OK(&f, tf);
    FX_OUT(&f, tf, 0, TGC_FLOAT32, "[2, 2]");
    FX_VALUE(&f, tf, 0, "none");
    int32_t vf = fx_op(&f, "vf", "Constant", "", 1);
    fx_attr_float(&f, vf, "value_float", 0.5);
    FX_OK(&f, vf);
    FX_OUT(&f, vf, 0, TGC_FLOAT32, "[]");
    int32_t vfs = fx_op(&f, "vfs", "Constant", "", 1);
    fx_attr_list(&f, vfs, "value_floats", "1.5, 2, 3", true);
    FX_OK(&f, vfs);
    FX_OUT(&f, vfs, 0, TGC_FLOAT32, "[3]");
    int32_t vi = fx_op(&f, "vi", "Constant", "", 1);
    fx_attr_int(&f, vi, "value_int", 5);
    FX_OK(&f, vi);
    FX_OUT(&f, vi, 0, TGC_INT64, "[]");
    FX_VALUE(&f, vi, 0, "[5]");
    int32_t vis = fx_op(&f, "vis", "Constant", "", 1);
    fx_attr_ints(&f, vis, "value_ints", "4, -5");
    FX_OK(&f, vis);
    FX_OUT(&f, vis, 0, TGC_INT64, "[2]");
    FX_VALUE(&f, vis, 0, "[4, -5]");
    int32_t none = fx_op(&f, "none", "Constant", "", 1);
    FX_FAILS(&f, none, -1, "bad-attribute", "Constant needs exactly one of the attributes");
    int32_t two = fx_op(&f, "two", "Constant", "", 1);
    fx_attr_int(&f, two, "value_int", 1);
    fx_attr_float(&f, two, "value_float", 1);
    FX_FAILS(&f, two, -1, "bad-attribute", "it has 2");
    int32_t str = fx_op(&f, "str", "Constant", "", 1);
    fx_attr_string(&f, str, "value_string", "hello");
    FX_FAILS(&f, str, -1, "unsupported", "attribute 'value_string': give strings as an initializer");
    fx_end(&f);
}

static void test_identity_passes_value(void) {
    fx f = fx_begin();
    fx_value(&f, "v", TGC_INT64, "2", "N, 3");
    int32_t id = fx_op(&f, "id", "Identity", "v", 1);
    FX_OK(&f, id);
    FX_OUT(&f, id, 0, TGC_INT64, "[2]");
    FX_VALUE(&f, id, 0, "[N, 3]");
    fx_end(&f);
}

TGC_TEST_MAIN("graph/infer_shapes",
              {"shape", test_shape},
              {"size", test_size},
              {"reshape_zero_and_minus_one", test_reshape_zero_and_minus_one},
              {"reshape_symbolic", test_reshape_symbolic},
              {"reshape_errors", test_reshape_errors},
              {"reshape_unknown_target", test_reshape_unknown_target},
              {"shape_gather_concat_reshape", test_shape_gather_concat_reshape},
              {"flatten", test_flatten},
              {"transpose", test_transpose},
              {"unsqueeze", test_unsqueeze},
              {"squeeze", test_squeeze},
              {"expand", test_expand},
              {"gather", test_gather},
              {"concat", test_concat},
              {"split_even", test_split_even},
              {"split_explicit", test_split_explicit},
              {"slice", test_slice},
              {"slice_symbolic", test_slice_symbolic},
              {"slice_values_and_errors", test_slice_values_and_errors},
              {"range", test_range},
              {"constant_of_shape", test_constant_of_shape},
              {"constant", test_constant},
              {"identity_passes_value", test_identity_passes_value})
