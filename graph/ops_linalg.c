/* Linear algebra (ONNX opset 17): Einsum-12 (an equation over 1 to
 * TGC_EINSUM_MAX_INPUTS inputs of one numeric dtype, graph/einsum.h) and
 * Det-11 (the determinants of [..., M, M] float matrices, shape [...]). */
#include "graph/einsum.h"
#include "graph/ops.h"

/* Einsum-12: every label's dim agrees across the axes it names (a dim of
 * 1 broadcasts, as numpy does for ellipsis dims); the output has the
 * output labels' dims. Unknown input ranks give an unknown output rank. */
static tgc_status infer_einsum(tgc_infer_ctx *c) {
    int n = tgc_infer_num_inputs(c), ranks[TGC_EINSUM_MAX_INPUTS];
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_NUMERIC)) return TGC_ERR_INVALID;
    if (n > TGC_EINSUM_MAX_INPUTS)
        return tgc_infer_fail(c, TGC_EINSUM_MAX_INPUTS, "bad-input", "%d inputs; tgc's Einsum takes at most %d", n,
                              TGC_EINSUM_MAX_INPUTS);
    bool ranks_known = true;
    for (int i = 0; i < n; i++) {
        if (i > 0 && !tgc_infer_require_same_dtype(c, 0, i)) return TGC_ERR_INVALID;
        ranks[i] = tgc_infer_input(c, i)->shape.rank;
        ranks_known = ranks_known && ranks[i] >= 0;
    }
    const char *eq = tgc_infer_attr_string(c, "equation", NULL);
    if (eq == NULL) return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'equation' is missing");
    tgc_dtype dt = tgc_infer_input(c, 0)->dtype;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (!ranks_known) return tgc_infer_set_output(c, 0, dt, &out);
    tgc_einsum e;
    char err[160];
    if (!tgc_einsum_parse(eq, n, ranks, &e, err, sizeof err))
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'equation' ('%s'): %s", eq, err);
    tgc_dim size[TGC_EINSUM_MAX_LABELS];
    bool set[TGC_EINSUM_MAX_LABELS] = {false};
    for (int i = 0; i < n; i++) {
        const tgc_shape *s = &tgc_infer_input(c, i)->shape;
        for (int a = 0; a < s->rank; a++) {
            int l = e.labels[i][a];
            tgc_dim d = s->dims[a];
            if (!set[l] || tgc_dim_is(size[l], 1)) {
                size[l] = d;
                set[l] = true;
            } else if (!tgc_dim_is(d, 1) && !tgc_ops_dim_merge(size[l], d, &size[l])) {
                return tgc_infer_fail(c, i, "shape-mismatch", "axis %d of input %d has %lld elements where its "
                                      "label has %lld", a, i, (long long)d.v, (long long)size[l].v);
            }
        }
    }
    out.rank = e.out_rank;
    for (int a = 0; a < e.out_rank; a++) out.dims[a] = set[e.out_labels[a]] ? size[e.out_labels[a]] : tgc_dim_of(1);
    return tgc_infer_set_output(c, 0, dt, &out);
}

/* Det-11: [..., M, M] -> [...]. */
static tgc_status infer_det(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    int r = x->shape.rank;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (r >= 0) {
        tgc_dim m;
        if (r < 2) return tgc_infer_fail(c, 0, "bad-input", "the input has rank %d; Det needs [..., M, M]", r);
        if (!tgc_ops_dim_merge(x->shape.dims[r - 2], x->shape.dims[r - 1], &m))
            return tgc_infer_fail(c, 0, "shape-mismatch", "the matrices are %lld x %lld, not square",
                                  (long long)x->shape.dims[r - 2].v, (long long)x->shape.dims[r - 1].v);
        out.rank = r - 2;
        for (int i = 0; i < r - 2; i++) out.dims[i] = x->shape.dims[i];
    }
    return tgc_infer_set_output(c, 0, x->dtype, &out);
}

static const tgc_attr_def einsum_attrs[] = {{"equation", TGC_ATTR_STRING, true}, {NULL, 0, false}};
static const tgc_attr_def det_attrs[] = {{NULL, 0, false}};

const tgc_op_def tgc_op_Einsum = {"Einsum", 1, -1, 1, 1, einsum_attrs, infer_einsum};
const tgc_op_def tgc_op_Det = {"Det", 1, 1, 1, 1, det_attrs, infer_det};
