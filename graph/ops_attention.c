/* _Attention: scaled dot-product attention as one node, made by
 * passes/fuse_attention.c from the decomposed form exporters write
 * (MatMul, scale, mask Add, Softmax, MatMul) and written in --dump
 * optimized, so a file may hold one:
 *     Y = softmax(scale * Q K^T + mask, last axis) V
 * Inputs (all float32):
 *     Q     [..., Lq, D]
 *     K     [..., Lk, D], or K^T [..., D, Lk] when k_transposed is 1
 *     V     [..., Lk, Dv]
 *     mask  optional, additive, broadcasting one way to the scores
 *           [..., Lq, Lk] (a causal [Lq, Lk], a padding [B, 1, 1, Lk])
 * Attributes: scale (float, required), k_transposed (int, default 0).
 * Output: [..., Lq, Dv], the batch dims (all but the last two) of Q, K
 * and V broadcast as MatMul's do (numpy.matmul). The attention of ONNX
 * Runtime's contrib MultiHeadAttention and of PyTorch's
 * scaled_dot_product_attention. */
#include "graph/ops_attention.h"

#include "graph/ops.h"

#include <string.h>

#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

bool tgc_attention_mask_fits(const tgc_shape *mask, const tgc_shape *scores) {
    if (mask->rank == TGC_RANK_UNKNOWN || scores->rank == TGC_RANK_UNKNOWN || mask->rank > scores->rank)
        return false;
    for (int d = 0; d < mask->rank; d++) {
        tgc_dim m = mask->dims[d], s = scores->dims[scores->rank - mask->rank + d];
        if (!tgc_dim_is(m, 1) && !tgc_dim_eq(m, s)) return false;
    }
    return true;
}

static const tgc_attr_def attention_attrs[] = {
    {"scale", TGC_ATTR_FLOAT, true}, {"k_transposed", TGC_ATTR_INT, false}, {NULL, 0, false}};

/* The batch dims (all but the last two) of s. */
static tgc_shape batch_of(const tgc_shape *s) {
    tgc_shape b = {.rank = s->rank - 2};
    memcpy(b.dims, s->dims, (size_t)b.rank * sizeof(tgc_dim));
    return b;
}

static tgc_status infer_attention(tgc_infer_ctx *c) {
    int n_in = tgc_infer_num_inputs(c);
    bool has_mask = n_in > 3 && tgc_infer_input(c, 3) != NULL;
    for (int i = 0; i < (has_mask ? 4 : 3); i++)
        if (!tgc_infer_require_dtype(c, i, TGC_FLOAT32)) return TGC_ERR_INVALID;
    int64_t kt = tgc_infer_attr_int(c, "k_transposed", 0);
    if (kt != 0 && kt != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'k_transposed' is %lld; 0 or 1", (long long)kt);
    const tgc_shape *q = &tgc_infer_input(c, 0)->shape, *k = &tgc_infer_input(c, 1)->shape;
    const tgc_shape *v = &tgc_infer_input(c, 2)->shape;
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (q->rank < 0 || k->rank < 0 || v->rank < 0) return tgc_infer_set_output(c, 0, TGC_FLOAT32, &out);
    const tgc_shape *in[3] = {q, k, v};
    for (int i = 0; i < 3; i++)
        if (in[i]->rank < 2)
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d has rank %d; attention needs rank >= 2", i,
                                  in[i]->rank);
    tgc_dim kd = k->dims[k->rank - (kt ? 2 : 1)], klk = k->dims[k->rank - (kt ? 1 : 2)], d, lk;
    char a[TGC_OPS_SHAPE_BUF], b[TGC_OPS_SHAPE_BUF];
    if (!tgc_ops_dim_merge(q->dims[q->rank - 1], kd, &d))
        return tgc_infer_fail(c, 1, "shape-mismatch", "Q %s and K%s %s differ in the head size", SHAPE(c, q, a),
                              kt ? "^T" : "", SHAPE(c, k, b));
    if (!tgc_ops_dim_merge(klk, v->dims[v->rank - 2], &lk))
        return tgc_infer_fail(c, 2, "shape-mismatch", "K%s %s and V %s differ in the key count", kt ? "^T" : "",
                              SHAPE(c, k, a), SHAPE(c, v, b));
    tgc_shape bq = batch_of(q), bk = batch_of(k), bv = batch_of(v), bqk, batch;
    int bad = 0;
    if (!tgc_shape_broadcast(&bq, &bk, &bqk, &bad, tgc_infer_fresh_dim_cb, c) ||
        !tgc_shape_broadcast(&bqk, &bv, &batch, &bad, tgc_infer_fresh_dim_cb, c))
        return tgc_infer_fail(c, -1, "shape-mismatch", "the batch dims of %s do not broadcast (axis %d)",
                              tgc_infer_input_shapes_str(c, a, sizeof a), bad);
    tgc_shape scores = batch;
    scores.dims[scores.rank++] = q->dims[q->rank - 2];
    scores.dims[scores.rank++] = lk;
    if (has_mask) {
        const tgc_shape *m = &tgc_infer_input(c, 3)->shape;
        if (m->rank != TGC_RANK_UNKNOWN && !tgc_attention_mask_fits(m, &scores))
            return tgc_infer_fail(c, 3, "shape-mismatch", "the mask %s does not broadcast to the scores %s",
                                  SHAPE(c, m, a), SHAPE(c, &scores, b));
    }
    out = batch;
    out.dims[out.rank++] = q->dims[q->rank - 2];
    out.dims[out.rank++] = v->dims[v->rank - 1];
    return tgc_infer_set_output(c, 0, TGC_FLOAT32, &out);
}

const tgc_op_def tgc_op__Attention = {"_Attention", 3, 4, 1, 1, attention_attrs, infer_attention};
