/* Type and shape inference of the index and selection ops (graph/ops_index.c,
 * ops_arrange.c, ops_select.c), one node at a time. Expected shapes follow
 * the ONNX operator specification (the formula beside each); a dim that
 * depends on input values is a fresh symbol (unk__K, numbered in order). */
#include "graph/ops.h"
#include "tests/graph/infer_fixture.h"

/* GatherND-13: out = indices[:-1] + data[batch_dims + m:], m = indices[-1]. */
static void test_gather_nd(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "B, 3, 4, 5");
    fx_input(&f, "i2", TGC_INT64, "B, 7, 2");
    fx_input(&f, "iq", TGC_INT64, "B, 7, Q");
    fx_input(&f, "i9", TGC_INT64, "B, 9");
    int32_t g = fx_op(&f, "g", "GatherND", "x, i2", 1);
    FX_OK(&f, g); /* [B, 7] + x[0 + 2:] */
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[B, 7, 4, 5]");
    g = fx_op(&f, "gb", "GatherND", "x, i2", 1);
    fx_attr_int(&f, g, "batch_dims", 1);
    FX_OK(&f, g); /* [B, 7] + x[1 + 2:] */
    FX_OUT(&f, g, 0, TGC_FLOAT32, "[B, 7, 5]");
    g = fx_op(&f, "gq", "GatherND", "x, iq", 1);
    FX_OK(&f, g); /* m unknown: the rank is too */
    FX_OUT(&f, g, 0, TGC_FLOAT32, "?");
    g = fx_op(&f, "g9", "GatherND", "x, i9", 1);
    FX_FAILS(&f, g, 1, "shape-mismatch", "name 9 axes");
    g = fx_op(&f, "gbad", "GatherND", "x, i2", 1);
    fx_attr_int(&f, g, "batch_dims", 3);
    FX_FAILS(&f, g, -1, "bad-attribute", "'batch_dims' is 3");
    fx_end(&f);
}

/* ScatterND-18: updates = indices[:-1] + data[m:]; out = data. */
static void test_scatter_nd_and_elements(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "4, 5, 6");
    fx_input(&f, "i", TGC_INT64, "3, 2");
    fx_input(&f, "u", TGC_FLOAT32, "3, 6");
    fx_input(&f, "ubad", TGC_FLOAT32, "3, 5");
    fx_input(&f, "ie", TGC_INT32, "2, 5, 6");
    fx_input(&f, "ue", TGC_FLOAT32, "2, 5, 6");
    int32_t s = fx_op(&f, "s", "ScatterND", "x, i, u", 1);
    fx_attr_string(&f, s, "reduction", "max");
    FX_OK(&f, s);
    FX_OUT(&f, s, 0, TGC_FLOAT32, "[4, 5, 6]");
    s = fx_op(&f, "sbad", "ScatterND", "x, i, ubad", 1);
    FX_FAILS(&f, s, 2, "shape-mismatch", "indices[:-1] + data[2:]");
    s = fx_op(&f, "sred", "ScatterND", "x, i, u", 1);
    fx_attr_string(&f, s, "reduction", "mean");
    FX_FAILS(&f, s, -1, "bad-attribute", "'reduction' is 'mean'");
    s = fx_op(&f, "se", "ScatterElements", "x, ie, ue", 1);
    fx_attr_int(&f, s, "axis", 0);
    fx_attr_string(&f, s, "reduction", "min");
    FX_OK(&f, s);
    FX_OUT(&f, s, 0, TGC_FLOAT32, "[4, 5, 6]");
    s = fx_op(&f, "ge", "GatherElements", "x, ie", 1);
    fx_attr_int(&f, s, "axis", -3);
    FX_OK(&f, s); /* out = indices' shape */
    FX_OUT(&f, s, 0, TGC_FLOAT32, "[2, 5, 6]");
    s = fx_op(&f, "gebad", "GatherElements", "x, i", 1);
    FX_FAILS(&f, s, 1, "shape-mismatch", "one rank");
    fx_end(&f);
}

/* OneHot-11: depth inserted into the indices' shape at axis. */
static void test_one_hot(void) {
    fx f = fx_begin();
    fx_input(&f, "i", TGC_INT64, "N, 3");
    fx_value(&f, "d", TGC_INT64, "1", "10");
    fx_input(&f, "dq", TGC_FLOAT16, "");
    fx_input(&f, "v", TGC_FLOAT32, "2");
    fx_input(&f, "v3", TGC_FLOAT32, "3");
    int32_t o = fx_op(&f, "o", "OneHot", "i, d, v", 1);
    FX_OK(&f, o); /* axis -1: [N, 3, depth] */
    FX_OUT(&f, o, 0, TGC_FLOAT32, "[N, 3, 10]");
    o = fx_op(&f, "o1", "OneHot", "i, d, v", 1);
    fx_attr_int(&f, o, "axis", -3);
    FX_OK(&f, o);
    FX_OUT(&f, o, 0, TGC_FLOAT32, "[10, N, 3]");
    o = fx_op(&f, "oq", "OneHot", "i, dq, v", 1);
    FX_OK(&f, o); /* depth not known */
    FX_OUT(&f, o, 0, TGC_FLOAT32, "[N, 3, unk__0]");
    o = fx_op(&f, "ov", "OneHot", "i, d, v3", 1);
    FX_FAILS(&f, o, 2, "shape-mismatch", "(off, on)");
    o = fx_op(&f, "oa", "OneHot", "i, d, v", 1);
    fx_attr_int(&f, o, "axis", 3);
    FX_FAILS(&f, o, -1, "bad-attribute", "'axis' is 3");
    fx_end(&f);
}

/* Tile-13: dim * repeats; TopK-11: the axis becomes k. */
static void test_tile_and_top_k(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    fx_value(&f, "r", TGC_INT64, "3", "1, 2, 0");
    fx_value(&f, "r2", TGC_INT64, "2", "1, 2");
    fx_value(&f, "rn", TGC_INT64, "3", "1, -1, 1");
    fx_input(&f, "ru", TGC_INT64, "3");
    fx_value(&f, "k", TGC_INT64, "1", "2");
    fx_value(&f, "k9", TGC_INT64, "1", "9");
    fx_input(&f, "ku", TGC_INT64, "1");
    int32_t t = fx_op(&f, "t", "Tile", "x, r", 1);
    FX_OK(&f, t);
    FX_OUT(&f, t, 0, TGC_FLOAT32, "[N, 6, 0]");
    t = fx_op(&f, "tu", "Tile", "x, ru", 1);
    FX_OK(&f, t);
    FX_OUT(&f, t, 0, TGC_FLOAT32, "[unk__0, unk__1, unk__2]");
    t = fx_op(&f, "t2", "Tile", "x, r2", 1);
    FX_FAILS(&f, t, 1, "shape-mismatch", "it must be [3]");
    t = fx_op(&f, "tn", "Tile", "x, rn", 1);
    FX_FAILS(&f, t, 1, "bad-input", "-1 at index 1");
    t = fx_op(&f, "k", "TopK", "x, k", 2);
    FX_OK(&f, t);
    FX_OUT(&f, t, 0, TGC_FLOAT32, "[N, 3, 2]");
    FX_OUT(&f, t, 1, TGC_INT64, "[N, 3, 2]");
    t = fx_op(&f, "k1", "TopK", "x, k", 2);
    fx_attr_int(&f, t, "axis", 1);
    FX_OK(&f, t);
    FX_OUT(&f, t, 0, TGC_FLOAT32, "[N, 2, 4]");
    t = fx_op(&f, "ku", "TopK", "x, ku", 2);
    FX_OK(&f, t);
    FX_OUT(&f, t, 1, TGC_INT64, "[N, 3, unk__3]");
    t = fx_op(&f, "k9", "TopK", "x, k9", 2);
    FX_FAILS(&f, t, 1, "bad-input", "K) is 9 but axis 2 of input [N, 3, 4] has only 4");
    fx_end(&f);
}

/* Same-shape ops: Trilu, CumSum, ReverseSequence; EyeLike's dtype. */
static void test_like_input_ops(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    fx_input(&f, "v", TGC_FLOAT32, "4");
    fx_input(&f, "m", TGC_INT32, "3, 4");
    fx_value(&f, "a", TGC_INT32, "", "-1");
    fx_value(&f, "a9", TGC_INT64, "", "3");
    fx_input(&f, "lens", TGC_INT64, "3");
    fx_input(&f, "u8", TGC_UINT8, "3");
    int32_t n = fx_op(&f, "t", "Trilu", "x", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, 3, 4]");
    n = fx_op(&f, "tv", "Trilu", "v", 1);
    FX_FAILS(&f, n, 0, "shape-mismatch", "rank >= 2");
    n = fx_op(&f, "c", "CumSum", "x, a", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, 3, 4]");
    n = fx_op(&f, "c9", "CumSum", "x, a9", 1);
    FX_FAILS(&f, n, 1, "bad-input", "axis) is 3");
    n = fx_op(&f, "cu", "CumSum", "u8, a", 1);
    FX_FAILS(&f, n, 0, "dtype-mismatch", "uint8");
    n = fx_op(&f, "r", "ReverseSequence", "x, lens", 1);
    FX_OK(&f, n); /* batch_axis 1: lens has x's dim 1 */
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, 3, 4]");
    n = fx_op(&f, "rb", "ReverseSequence", "x, lens", 1);
    fx_attr_int(&f, n, "batch_axis", 0);
    fx_attr_int(&f, n, "time_axis", 0);
    FX_FAILS(&f, n, -1, "bad-attribute", "0 and 1 in some order");
    n = fx_op(&f, "e", "EyeLike", "m", 1);
    fx_attr_int(&f, n, "dtype", 1); /* ONNX FLOAT */
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[3, 4]");
    n = fx_op(&f, "e0", "EyeLike", "m", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_INT32, "[3, 4]");
    n = fx_op(&f, "e3", "EyeLike", "x", 1);
    FX_FAILS(&f, n, 0, "shape-mismatch", "2-D");
    fx_end(&f);
}

/* NonZero [rank, n]; Compress [n] or the axis of size n; Unique's four
 * outputs share one n; inverse_indices has one entry per element (or slice). */
static void test_value_dependent_sizes(void) {
    fx f = fx_begin();
    fx_input(&f, "x", TGC_FLOAT32, "N, 3, 4");
    fx_input(&f, "c", TGC_BOOL, "5");
    fx_input(&f, "ci", TGC_INT64, "5");
    int32_t n = fx_op(&f, "nz", "NonZero", "x", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_INT64, "[3, unk__0]");
    n = fx_op(&f, "c", "Compress", "x, c", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[unk__1]");
    n = fx_op(&f, "c1", "Compress", "x, c", 1);
    fx_attr_int(&f, n, "axis", -2);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, unk__2, 4]");
    n = fx_op(&f, "cbad", "Compress", "x, ci", 1);
    FX_FAILS(&f, n, 1, "dtype-mismatch", "bool");
    n = fx_op(&f, "u", "Unique", "x", 4);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[unk__3]");
    FX_OUT(&f, n, 1, TGC_INT64, "[unk__3]");
    FX_OUT(&f, n, 2, TGC_INT64, "[unk__4]"); /* N * 12: a fresh dim */
    FX_OUT(&f, n, 3, TGC_INT64, "[unk__3]");
    n = fx_op(&f, "ua", "Unique", "x", 3);
    fx_attr_int(&f, n, "axis", 1);
    FX_OK(&f, n);
    FX_OUT(&f, n, 0, TGC_FLOAT32, "[N, unk__5, 4]");
    FX_OUT(&f, n, 2, TGC_INT64, "[3]");
    fx_end(&f);
}

TGC_TEST_MAIN("graph/infer_index", {"gather nd", test_gather_nd},
              {"scatter nd and elements", test_scatter_nd_and_elements}, {"one hot", test_one_hot},
              {"tile and top k", test_tile_and_top_k}, {"like input ops", test_like_input_ops},
              {"value dependent sizes", test_value_dependent_sizes})
