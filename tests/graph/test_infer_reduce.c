/* Shape inference of the reductions added with ReduceMin ... ArgMin and of
 * the opset 18 form of every ReduceX (axes as input 1, noop_with_empty_axes),
 * as the ONNX operator specification states it. */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

static void test_reduce_axes_input_every_op(void) {
    static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                      "ReduceSumSquare"};
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4, 5");
    fx_value(&f, "a", TGC_INT64, "2", "1, -1");
    fx_value(&f, "none", TGC_INT64, "0", "");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%zu", i);
        int32_t k = fx_op(&f, name, ops[i], "x, a", 1);
        FX_OK(&f, k);
        FX_OUT(&f, k, 0, TGC_FLOAT32, "[N, 1, 4, 1]");
        snprintf(name, sizeof name, "d%zu", i);
        int32_t d = fx_op(&f, name, ops[i], "x, a", 1);
        fx_attr_int(&f, d, "keepdims", 0);
        FX_OK(&f, d);
        FX_OUT(&f, d, 0, TGC_FLOAT32, "[N, 4]");
        snprintf(name, sizeof name, "n%zu", i);
        int32_t n = fx_op(&f, name, ops[i], "x, none", 1);
        fx_attr_int(&f, n, "noop_with_empty_axes", 1);
        FX_OK(&f, n);
        FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, 3, 4, 5]");
    }
    fx_end(&f);
}

static void test_reduce_attr_axes_new_ops(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_INT32, "2, 3, 4");
    int32_t m = fx_op(&f, "m", "ReduceMin", "x", 1);
    fx_attr_ints(&f, m, "axes", "0, 2");
    FX_OK(&f, m);
    FX_OUT(&f, m, 0, TGC_INT32, "[1, 3, 1]");
    int32_t p = fx_op(&f, "p", "ReduceProd", "x", 1);
    fx_attr_int(&f, p, "keepdims", 0);
    FX_OK(&f, p);
    FX_OUT(&f, p, 0, TGC_INT32, "[]");
    fx_end(&f);
}

static void test_reduce_errors(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "2, 3");
    fx_input(&f, "b", TGC_BOOL, "2, 3");
    fx_input(&f, "u", TGC_UINT8, "2, 3");
    fx_value(&f, "a", TGC_INT64, "1", "0");
    int32_t twice = fx_op(&f, "twice", "ReduceL2", "x, a", 1);
    fx_attr_ints(&f, twice, "axes", "1");
    FX_FAILS(&f, twice, 1, "bad-input", "axes are given twice");
    int32_t bad = fx_op(&f, "bad", "ReduceLogSum", "b", 1);
    FX_FAILS(&f, bad, 0, "dtype-mismatch", "");
    int32_t u = fx_op(&f, "u8", "ReduceSumSquare", "u", 1); /* uint8: Max and Min only */
    FX_FAILS(&f, u, 0, "dtype-mismatch", "");
    int32_t um = fx_op(&f, "u8min", "ReduceMin", "u", 1);
    FX_OK(&f, um);
    fx_end(&f);
}

static void test_argmin(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    int32_t a = fx_op(&f, "a", "ArgMin", "x", 1);
    fx_attr_int(&f, a, "axis", -2);
    fx_attr_int(&f, a, "keepdims", 0);
    FX_OK(&f, a);
    FX_OUT(&f, a, 0, TGC_INT64, "[N, 4]");
    int32_t bad = fx_op(&f, "bad", "ArgMin", "x", 1);
    fx_attr_int(&f, bad, "axis", -4);
    FX_FAILS(&f, bad, -1, "bad-attribute", "attribute 'axis' is -4");
    fx_end(&f);
}

static void test_normalizations(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4, 5");
    fx_input(&f, "v", TGC_FLOAT16, "7");
    fx_input(&f, "i", TGC_INT32, "7");
    int32_t h = fx_op(&f, "h", "Hardmax", "x", 1);
    FX_OK(&f, h);
    FX_OUT(&f, h, 0, TGC_FLOAT32, "[N, 3, 4, 5]");
    int32_t hb = fx_op(&f, "hb", "Hardmax", "v", 1);
    fx_attr_int(&f, hb, "axis", 1);
    FX_FAILS(&f, hb, -1, "bad-attribute", "attribute 'axis' is 1");
    int32_t hi = fx_op(&f, "hi", "Hardmax", "i", 1);
    FX_FAILS(&f, hi, 0, "dtype-mismatch", "");
    int32_t lp = fx_op(&f, "lp", "LpNormalization", "v", 1);
    fx_attr_int(&f, lp, "p", 1);
    FX_OK(&f, lp);
    FX_OUT(&f, lp, 0, TGC_FLOAT16, "[7]");
    int32_t lp3 = fx_op(&f, "lp3", "LpNormalization", "x", 1);
    fx_attr_int(&f, lp3, "p", 3);
    FX_FAILS(&f, lp3, -1, "bad-attribute", "attribute 'p' is 3");
    int32_t m = fx_op(&f, "m", "MeanVarianceNormalization", "x", 1);
    FX_OK(&f, m);
    FX_OUT(&f, m, 0, TGC_FLOAT32, "[N, 3, 4, 5]");
    int32_t mv = fx_op(&f, "mv", "MeanVarianceNormalization", "v", 1); /* default axes [0, 2, 3], rank 1 */
    FX_FAILS(&f, mv, -1, "bad-attribute", "axes");
    fx_end(&f);
}

/* Einsum: explicit, implicit (ellipsis first, then letters used once, in
 * ASCII order), broadcast ellipsis dims, diagonals; Det: [..., M, M] -> [...]. */
static void test_einsum_det(void) {
    fx f = fx_begin();
    fx_input(&f, "a", TGC_FLOAT32, "N, 3, 4");
    fx_input(&f, "b", TGC_FLOAT32, "N, 4, 5");
    fx_input(&f, "c", TGC_FLOAT32, "1, 4, 5");
    fx_input(&f, "s", TGC_FLOAT32, "2, 6, 6");
    fx_input(&f, "i", TGC_INT32, "4, 5");
    const struct {
        const char *inputs, *eq, *out;
    } cases[] = {
        {"a, b", "bij,bjk->bik", "[N, 3, 5]"}, {"a, b", "bij,bjk", "[3, 5]"} /* implicit: b is used twice, so summed */,
        {"a, c", "...ij,...jk->...ik", "[N, 3, 5]"}, {"s", "...ii->...i", "[2, 6]"},
        {"s", "bii", "[2]"}, {"a", "ijk->", "[]"}, {"a", "ijk->kji", "[4, 3, N]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char name[16];
        snprintf(name, sizeof name, "e%zu", k);
        int32_t e = fx_op(&f, name, "Einsum", cases[k].inputs, 1);
        fx_attr_string(&f, e, "equation", cases[k].eq);
        FX_OK(&f, e);
        FX_OUT(&f, e, 0, TGC_FLOAT32, cases[k].out);
    }
    int32_t mis = fx_op(&f, "mis", "Einsum", "a, b", 1);
    fx_attr_string(&f, mis, "equation", "bij,bkj->bik");
    FX_FAILS(&f, mis, 1, "shape-mismatch", "axis 2 of input 1 has 5 elements");
    int32_t bad = fx_op(&f, "bad", "Einsum", "a", 1);
    fx_attr_string(&f, bad, "equation", "ij->i");
    FX_FAILS(&f, bad, -1, "bad-attribute", "does not fit input 0 of rank 3");
    int32_t mixed = fx_op(&f, "mixed", "Einsum", "b, i", 1);
    fx_attr_string(&f, mixed, "equation", "bjk,jk->b");
    FX_FAILS(&f, mixed, 1, "dtype-mismatch", "");
    int32_t d = fx_op(&f, "d", "Det", "s", 1);
    FX_OK(&f, d);
    FX_OUT(&f, d, 0, TGC_FLOAT32, "[2]");
    int32_t nsq = fx_op(&f, "nsq", "Det", "a", 1);
    FX_FAILS(&f, nsq, 0, "shape-mismatch", "not square");
    fx_end(&f);
}

TGC_TEST_MAIN("graph/infer_reduce",
              {"einsum_det", test_einsum_det},
              {"normalizations", test_normalizations},
              {"reduce_axes_input_every_op", test_reduce_axes_input_every_op},
              {"reduce_attr_axes_new_ops", test_reduce_attr_axes_new_ops},
              {"reduce_errors", test_reduce_errors},
              {"argmin", test_argmin})
