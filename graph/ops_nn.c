/* Neural-network ops (ONNX opset 17): Softmax, LogSoftmax, MatMul (and tgc's
 * _MatMulHalfWeight), Gemm,
 * BatchNormalization and LayerNormalization. Convolution and pooling are in
 * ops_conv.c. */
#include "graph/ops.h"

#include <string.h>

static const tgc_attr_def no_attrs[] = {{NULL, 0, false}};

#define DT_MATMUL (TGC_DT_FLOAT | TGC_DT_INT)

/* Formats a shape into buf for messages. */
#define SHAPE(c, s, buf) tgc_infer_shape_str((c), (s), (buf), sizeof(buf))

/* ---- Softmax, LogSoftmax -------------------------------------------------- */

/* Softmax-13, LogSoftmax-13: float input, axis in [-r, r) (default -1),
 * output the input's shape. */
static tgc_status infer_softmax(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    int axis;
    if (x->shape.rank >= 0) {
        tgc_status st = tgc_ops_axis_attr(c, "axis", -1, x->shape.rank, 0, &axis);
        if (st != TGC_OK) return st;
    }
    return tgc_ops_like_input(c, false);
}

static const tgc_attr_def softmax_attrs[] = {{"axis", TGC_ATTR_INT, false}, {NULL, 0, false}};

const tgc_op_def tgc_op_Softmax = {"Softmax", 1, 1, 1, 1, softmax_attrs, infer_softmax};
const tgc_op_def tgc_op_LogSoftmax = {"LogSoftmax", 1, 1, 1, 1, softmax_attrs, infer_softmax};

/* ---- MatMul, Gemm --------------------------------------------------------- */

/* MatMul-13, numpy.matmul semantics: a 1-D A is [1, K] and a 1-D B is
 * [K, 1], with the added axis dropped from the result; leading (batch) axes
 * broadcast. [B.., M, K] x [B.., K, N] -> [B.., M, N]. */
static tgc_status matmul_output(tgc_infer_ctx *c, tgc_dtype dtype) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1);
    tgc_shape out = {.rank = TGC_RANK_UNKNOWN};
    if (a->shape.rank < 0 || b->shape.rank < 0) return tgc_infer_set_output(c, 0, dtype, &out);
    int ra = a->shape.rank, rb = b->shape.rank;
    if (ra == 0 || rb == 0)
        return tgc_infer_fail(c, ra == 0 ? 0 : 1, "shape-mismatch",
                              "input %d is a scalar; MatMul needs inputs of rank >= 1", ra == 0 ? 0 : 1);
    tgc_dim ka = a->shape.dims[ra - 1], kb = b->shape.dims[rb == 1 ? 0 : rb - 2], k;
    if (!tgc_ops_dim_merge(ka, kb, &k)) {
        char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch",
                              "inner dimensions differ: %s x %s (%lld vs %lld)", SHAPE(c, &a->shape, sa),
                              SHAPE(c, &b->shape, sb), (long long)ka.v, (long long)kb.v);
    }
    tgc_shape ba = {.rank = ra > 2 ? ra - 2 : 0}, bb = {.rank = rb > 2 ? rb - 2 : 0}, batch;
    memcpy(ba.dims, a->shape.dims, (size_t)ba.rank * sizeof(tgc_dim));
    memcpy(bb.dims, b->shape.dims, (size_t)bb.rank * sizeof(tgc_dim));
    int bad = 0;
    if (!tgc_shape_broadcast(&ba, &bb, &batch, &bad, tgc_infer_fresh_dim_cb, c)) {
        char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch",
                              "batch dimensions of %s and %s do not broadcast (axis %d)",
                              SHAPE(c, &a->shape, sa), SHAPE(c, &b->shape, sb), bad);
    }
    out = batch;
    if (ra >= 2) out.dims[out.rank++] = a->shape.dims[ra - 2];
    if (rb >= 2) out.dims[out.rank++] = b->shape.dims[rb - 1];
    return tgc_infer_set_output(c, 0, dtype, &out);
}

static tgc_status infer_matmul(tgc_infer_ctx *c) {
    if (!tgc_ops_require_dtypes(c, 0, DT_MATMUL) || !tgc_infer_require_same_dtype(c, 0, 1))
        return TGC_ERR_INVALID;
    return matmul_output(c, tgc_infer_input(c, 0)->dtype);
}

const tgc_op_def tgc_op_MatMul = {"MatMul", 2, 2, 1, 1, no_attrs, infer_matmul};

/* _MatMulHalfWeight (tgc's own, made by compute-in-float32): MatMul of a
 * float32 A [.., M, K] by a float16 or bfloat16 weight B [K, N], each
 * element of B widened exactly to float32 as it is read; the result is
 * float32 [.., M, N], the MatMul of A by Cast(B, to=float). The weight
 * stays in half precision in memory. */
static tgc_status infer_matmul_half_weight(tgc_infer_ctx *c) {
    const tgc_tensor_info *b = tgc_infer_input(c, 1);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT(TGC_FLOAT32)) ||
        !tgc_ops_require_dtypes(c, 1, TGC_DT(TGC_FLOAT16) | TGC_DT(TGC_BFLOAT16)))
        return TGC_ERR_INVALID;
    if (b->shape.rank >= 0 && b->shape.rank != 2) {
        char sb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch", "input 1 has shape %s; _MatMulHalfWeight needs a weight of "
                              "rank 2", SHAPE(c, &b->shape, sb));
    }
    return matmul_output(c, TGC_FLOAT32);
}

const tgc_op_def tgc_op__MatMulHalfWeight = {"_MatMulHalfWeight", 2, 2, 1, 1, no_attrs, infer_matmul_half_weight};

/* Gemm-13: Y = alpha * A' B' + beta * C with A' = transA ? A^T : A (and so
 * for B); A' is [M, K], B' is [K, N]; C is optional and unidirectionally
 * broadcastable to [M, N]. */
static tgc_status infer_gemm(tgc_infer_ctx *c) {
    const tgc_tensor_info *a = tgc_infer_input(c, 0), *b = tgc_infer_input(c, 1),
                          *cc = tgc_infer_input(c, 2);
    if (!tgc_ops_require_dtypes(c, 0, DT_MATMUL) || !tgc_infer_require_same_dtype(c, 0, 1) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    int64_t ta = tgc_infer_attr_int(c, "transA", 0), tb = tgc_infer_attr_int(c, "transB", 0);
    const tgc_tensor_info *ab[2] = {a, b};
    tgc_dim dims[2][2]; /* [A', B'][row, col] */
    for (int i = 0; i < 2; i++) {
        const tgc_shape *s = &ab[i]->shape;
        if (s->rank >= 0 && s->rank != 2) {
            char buf[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d has shape %s; Gemm needs rank 2", i,
                                  SHAPE(c, s, buf));
        }
        bool t = (i == 0 ? ta : tb) != 0;
        for (int j = 0; j < 2; j++) dims[i][j] = s->rank < 0 ? tgc_dim_of(-1) : s->dims[t ? 1 - j : j];
    }
    /* Of an unknown-rank operand only the output dim is needed (fresh). */
    if (a->shape.rank < 0) dims[0][0] = tgc_infer_fresh_dim(c);
    if (b->shape.rank < 0) dims[1][1] = tgc_infer_fresh_dim(c);
    tgc_dim k;
    if (a->shape.rank >= 0 && b->shape.rank >= 0 && !tgc_ops_dim_merge(dims[0][1], dims[1][0], &k)) {
        char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 1, "shape-mismatch",
                              "inner dimensions differ: A %s (transA %lld) has K = %lld but B %s "
                              "(transB %lld) has K = %lld",
                              SHAPE(c, &a->shape, sa), (long long)ta, (long long)dims[0][1].v,
                              SHAPE(c, &b->shape, sb), (long long)tb, (long long)dims[1][0].v);
    }
    tgc_shape out = {.rank = 2, .dims = {dims[0][0], dims[1][1]}};
    if (cc != NULL && cc->shape.rank >= 0) {
        bool ok = cc->shape.rank <= 2;
        for (int i = 0; ok && i < cc->shape.rank; i++) {
            tgc_dim d = cc->shape.dims[cc->shape.rank - 1 - i], m;
            ok = tgc_dim_is(d, 1) || tgc_ops_dim_merge(d, out.dims[1 - i], &m);
        }
        if (!ok) {
            char sc[TGC_OPS_SHAPE_BUF], so[TGC_OPS_SHAPE_BUF];
            return tgc_infer_fail(c, 2, "shape-mismatch", "input 2 (C) has shape %s, which does not "
                                  "broadcast to the result %s", SHAPE(c, &cc->shape, sc),
                                  SHAPE(c, &out, so));
        }
    }
    return tgc_infer_set_output(c, 0, a->dtype, &out);
}

static const tgc_attr_def gemm_attrs[] = {
    {"alpha", TGC_ATTR_FLOAT, false}, {"beta", TGC_ATTR_FLOAT, false},
    {"transA", TGC_ATTR_INT, false},  {"transB", TGC_ATTR_INT, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_Gemm = {"Gemm", 2, 3, 1, 1, gemm_attrs, infer_gemm};

/* ---- Normalisation ------------------------------------------------------ */

/* BatchNormalization-15: X [N, C, ...], scale, B, mean and var all [C]; Y
 * has X's shape. With training_mode = 1 the optional outputs running_mean
 * and running_var are [C] (devices/cpu/kernels_batch_norm_train.c); in
 * inference mode (0, the default) there is only Y. */
static tgc_status infer_batch_norm(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int i = 0; i < 5; i++)
        if (!tgc_ops_require_dtypes(c, i, TGC_DT_FLOAT)) return TGC_ERR_INVALID;
    int64_t training = tgc_infer_attr_int(c, "training_mode", 0);
    if (training != 0 && training != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'training_mode' is %lld; it must be 0 or 1",
                              (long long)training);
    if (training == 0 && tgc_infer_num_outputs(c) > 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "outputs running_mean and running_var exist "
                              "only with training_mode 1");
    char sx[TGC_OPS_SHAPE_BUF], sp[TGC_OPS_SHAPE_BUF];
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; BatchNormalization needs "
                              "[N, C, ...]", SHAPE(c, &x->shape, sx));
    tgc_dim ch = x->shape.rank >= 2 ? x->shape.dims[1] : tgc_dim_of(0);
    for (int i = 1; i < 5; i++) {
        const tgc_tensor_info *p = tgc_infer_input(c, i);
        if (p->shape.rank < 0) continue;
        tgc_dim m;
        if (p->shape.rank != 1 || (x->shape.rank >= 2 && !tgc_ops_dim_merge(p->shape.dims[0], ch, &m)))
            return tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s; it must be [C] "
                                  "for X %s", i, names[i], SHAPE(c, &p->shape, sp),
                                  SHAPE(c, &x->shape, sx));
    }
    tgc_status st = tgc_ops_like_input(c, false);
    tgc_shape stats = {.rank = 1, .dims = {ch}};
    if (x->shape.rank < 0) stats = tgc_infer_input(c, 1)->shape;
    if (st == TGC_OK) st = tgc_infer_set_output(c, 1, x->dtype, &stats);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 2, x->dtype, &stats);
    return st;
}

static const tgc_attr_def batch_norm_attrs[] = {
    {"epsilon", TGC_ATTR_FLOAT, false},
    {"momentum", TGC_ATTR_FLOAT, false},
    {"training_mode", TGC_ATTR_INT, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_BatchNormalization = {"BatchNormalization", 5, 5, 1, 3, batch_norm_attrs,
                                              infer_batch_norm};

/* LayerNormalization-17: normalises over axes [axis, r); Scale and B
 * broadcast to X.shape[axis:]. Y has X's shape and type; the optional Mean
 * and InvStdDev have type stash_type (1: float32, the only one ONNX allows
 * besides bfloat16) and shape X.shape[:axis] + [1] * (r - axis). */
static tgc_status infer_layer_norm(tgc_infer_ctx *c) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (!tgc_ops_require_dtypes(c, 0, TGC_DT_FLOAT) || !tgc_infer_require_same_dtype(c, 0, 1) ||
        !tgc_infer_require_same_dtype(c, 0, 2))
        return TGC_ERR_INVALID;
    int64_t stash = tgc_infer_attr_int(c, "stash_type", 1);
    if (stash != 1)
        return tgc_infer_fail(c, -1, "bad-attribute", "attribute 'stash_type' is %lld; tgc supports "
                              "1 (float32)", (long long)stash);
    tgc_shape stats = {.rank = TGC_RANK_UNKNOWN};
    if (x->shape.rank >= 0) {
        int axis;
        tgc_status st = tgc_ops_axis_attr(c, "axis", -1, x->shape.rank, 0, &axis);
        if (st != TGC_OK) return st;
        int norm = x->shape.rank - axis;
        for (int i = 1; i <= 2; i++) {
            const tgc_tensor_info *p = tgc_infer_input(c, i);
            if (p == NULL || p->shape.rank < 0) continue;
            bool ok = p->shape.rank <= norm;
            for (int j = 0; ok && j < p->shape.rank; j++) {
                tgc_dim d = p->shape.dims[p->shape.rank - 1 - j], m;
                ok = tgc_dim_is(d, 1) || tgc_ops_dim_merge(d, x->shape.dims[x->shape.rank - 1 - j], &m);
            }
            if (!ok) {
                char sp[TGC_OPS_SHAPE_BUF], sx[TGC_OPS_SHAPE_BUF];
                return tgc_infer_fail(c, i, "shape-mismatch", "input %d (%s) has shape %s, which does "
                                      "not broadcast to the normalised axes %d.. of X %s", i,
                                      i == 1 ? "Scale" : "B", SHAPE(c, &p->shape, sp), axis,
                                      SHAPE(c, &x->shape, sx));
            }
        }
        stats = x->shape;
        for (int i = axis; i < stats.rank; i++) stats.dims[i] = tgc_dim_of(1);
    }
    tgc_status st = tgc_ops_like_input(c, false);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 1, TGC_FLOAT32, &stats);
    if (st == TGC_OK) st = tgc_infer_set_output(c, 2, TGC_FLOAT32, &stats);
    return st;
}

static const tgc_attr_def layer_norm_attrs[] = {
    {"axis", TGC_ATTR_INT, false},
    {"epsilon", TGC_ATTR_FLOAT, false},
    {"stash_type", TGC_ATTR_INT, false},
    {NULL, 0, false},
};

const tgc_op_def tgc_op_LayerNormalization = {"LayerNormalization", 2, 3, 1, 3, layer_norm_attrs,
                                              infer_layer_norm};
