/* Normalisations along axes (ONNX opset 17): Hardmax-13 (a one-hot of the
 * first largest element along `axis`), LpNormalization-1 (x over its L1 or
 * L2 norm along `axis`), MeanVarianceNormalization-13 ((x - mean) / std
 * over `axes`). Each output has the input's dtype and shape; the
 * attributes are checked against the rank when it is known. */
#include "graph/ops.h"

/* Hardmax-13 and LpNormalization-1: a float input and `axis` (default -1)
 * in [-rank, rank). */
static tgc_status infer_along_axis(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    int rank = tgc_infer_input(c, 0)->shape.rank, axis;
    if (rank >= 0) {
        tgc_status st = tgc_ops_axis_attr(c, "axis", -1, rank, 0, &axis);
        if (st != TGC_OK) return st;
    }
    return tgc_ops_like_input(c, false);
}

/* LpNormalization-1: p is 1 or 2 (default 2). */
static tgc_status infer_lp_normalization(tgc_infer_ctx *c) {
    int64_t p = tgc_infer_attr_int(c, "p", 2);
    if (p != 1 && p != 2)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'p' is %lld; LpNormalization takes 1 or 2",
                              (long long)p);
    return infer_along_axis(c);
}

/* MeanVarianceNormalization-13: `axes` (default [0, 2, 3]), each in
 * [-rank, rank) and none twice. */
static tgc_status infer_mvn(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    const int64_t *a;
    size_t n;
    int64_t axes[TGC_MAX_RANK] = {0, 2, 3};
    if (!tgc_infer_attr_ints(c, "axes", &a, &n)) {
        a = axes;
        n = 3;
    }
    if (n > TGC_MAX_RANK)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'axes' has %zu entries; tgc allows at most %d",
                              n, TGC_MAX_RANK);
    for (size_t i = 0; i < n; i++) axes[i] = a[i];
    int rank = tgc_infer_input(c, 0)->shape.rank;
    if (rank >= 0) {
        tgc_status st = tgc_ops_normalize_axes(c, -1, "axes", axes, (int)n, rank);
        if (st != TGC_OK) return st;
    }
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def hardmax_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};
static const tgc_attr_def lp_attrs[] = {{"axis", TGC_ATTR_INT, false}, {"p", TGC_ATTR_INT, false}, {NULL, 0, false}};
static const tgc_attr_def mvn_attrs[] = {{"axes", TGC_ATTR_INTS, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Hardmax = {"Hardmax", 1, 1, 1, 1, hardmax_attrs, infer_along_axis};
const tgc_op_def tgc_op_LpNormalization = {"LpNormalization", 1, 1, 1, 1, lp_attrs, infer_lp_normalization};
const tgc_op_def tgc_op_MeanVarianceNormalization = {"MeanVarianceNormalization", 1, 1, 1, 1, mvn_attrs,
                                                     infer_mvn};
