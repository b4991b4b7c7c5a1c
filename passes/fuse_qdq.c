/* QDQ groups computed by the integer op ONNX defines for them (ONNX
 * Runtime's QDQ transformers: onnxruntime/core/optimizer/qdq_transformer/
 * selectors_actions, QDQ Conv and MatMul). A statically quantized model
 * (ORT's quantize_static, TensorFlow Lite's converter, PyTorch's
 * quantization export) writes each quantized op as its float form between
 * DequantizeLinear and QuantizeLinear:
 *     x_q -> DequantizeLinear -> Conv -> QuantizeLinear -> y_q
 *     w_q -> DequantizeLinear -/   /
 *     b_q -> DequantizeLinear ----/          (the bias: optional)
 * and as written it runs in float: the 8-bit values widened, a float32
 * convolution, the result narrowed again. The pass replaces such a group by
 *     QLinearConv(x_q, x_s, x_zp, w_q, w_s, w_zp, y_s, y_zp[, b_q])
 * and DQ(a) x DQ(b) -> MatMul -> Q by
 *     QLinearMatMul(a_q, a_s, a_zp, b_q, b_s, b_zp, y_s, y_zp)
 * whose products are summed in integers (oneDNN's s8 x s8 -> s32 with
 * VNNI, devices/cpu/kernels_quant.c). The group is fused when:
 *   - every scale is a float32 initializer and every zero point an
 *     initializer of its value's dtype (written: quantizers always write
 *     them); x, a and y are per tensor (one scale, one zero point); Conv's
 *     w is per tensor or per output channel (a 1-D scale of W's first dim,
 *     its DequantizeLinear's axis 0); MatMul's b per tensor or per column
 *     (a 2-D B, a 1-D scale of its columns, axis 1);
 *   - the 8-bit values are uint8 or int8 (x and y the same type);
 *   - a bias is DequantizeLinear of an int32 initializer with zero point 0
 *     (or none) and scale x_s * w_s per channel (as quantizers compute it:
 *     within a relative 1e-6), so it adds to the integer sums unchanged;
 *   - each DequantizeLinear is read by the op only, the op by the
 *     QuantizeLinear only, all with one requested device, no control edges;
 *   - a listed device kind has a kernel for the integer op at x's dtype.
 * A MaxPool between a DequantizeLinear and a QuantizeLinear of the same
 * parameters runs on the 8-bit values, the pair dropped (pool_drops_qdq).
 * The results are the integer ops' (ONNX's definitions: the int32 sum
 * times x_s w_s / y_s, rounded half to even, saturated); the float path
 * they replace can differ from them by one step where a value falls within
 * float32 rounding of a half step, as ORT's fused kernels differ from its
 * unfused ones. The fused node takes the QuantizeLinear's name. */
#include "passes/pass.h"

#include "devices/backend.h"
#include "devices/kernel.h"

#include <math.h>
#include <string.h>

static bool is_q8(tgc_dtype t) { return t == TGC_UINT8 || t == TGC_INT8; }

/* The float32 scale behind r: its values and count (a scalar: 1), or NULL
 * when r is no float32 initializer of rank 0 or 1. */
static const float *scale_of(const tgc_rewrite *rw, tgc_ref r, int64_t *n) {
    const tgc_const *c = tgc_pass_const_of(rw, r);
    if (c == NULL || c->dtype != TGC_FLOAT32 || c->shape.rank > 1 || c->data == NULL) return NULL;
    *n = tgc_shape_numel(&c->shape);
    return *n >= 1 ? c->data : NULL;
}

/* The dtype of the 8-bit value DequantizeLinear dq reads: its zero point's
 * (params_ok holds them equal), which an initializer always has, where the
 * value itself may be a node this pass just made (uninferred until the
 * graph is rebuilt: a QLinearConv fused upstream). INVALID without one. */
static tgc_dtype q8_type_of(const tgc_rewrite *rw, const tgc_node *dq) {
    const tgc_const *zp = dq->n_inputs > 2 ? tgc_pass_const_of(rw, dq->inputs[2]) : NULL;
    return zp != NULL && is_q8(zp->dtype) ? zp->dtype : TGC_DTYPE_INVALID;
}

/* A DequantizeLinear read only by `reader`: its node, else NULL. */
static const tgc_node *only_dq(const tgc_rewrite *rw, tgc_ref r, int32_t reader) {
    if (r.node < 0 || !tgc_pass_is_op(rw, r.node, "DequantizeLinear")) return NULL;
    const tgc_node *dq = &rw->g->nodes[r.node];
    if (tgc_pass_only_reader(rw, r) != reader || dq->n_inputs < 2 || dq->n_colocate > 0) return NULL;
    return dq;
}

/* The quantization parameters of DequantizeLinear dq (or QuantizeLinear):
 * true when its scale is a float32 initializer of `want` elements (1: per
 * tensor; else per `axis` of a value of that many), and its zero point an
 * initializer of the same count and of dtype `zp_type`. */
static bool params_ok(const tgc_rewrite *rw, const tgc_node *dq, tgc_dtype zp_type, int64_t want, int axis) {
    int64_t n = 0;
    if (scale_of(rw, dq->inputs[1], &n) == NULL || n != want) return false;
    const tgc_tensor_info *s = tgc_graph_ref_info(rw->g, dq->inputs[1]);
    if (want > 1) {
        const tgc_attr *a = tgc_node_attr(dq, "axis");
        const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, dq->inputs[0]);
        int64_t ax = a != NULL && a->type == TGC_ATTR_INT ? a->i : 1;
        if (x == NULL || x->shape.rank <= 0 || s->shape.rank != 1) return false;
        if (ax < 0) ax += x->shape.rank;
        if (ax != axis) return false;
    }
    if (dq->n_inputs < 3 || dq->inputs[2].node < 0) return false;
    const tgc_const *zp = tgc_pass_const_of(rw, dq->inputs[2]);
    return zp != NULL && zp->dtype == zp_type && tgc_shape_numel(&zp->shape) == want && zp->shape.rank <= 1;
}

/* A bias DequantizeLinear whose int32 values add to the integer sums as
 * they are: zero point 0 (or none), scale x_s * w_s[c] for each of the m
 * channels within a relative 1e-6. */
static bool bias_ok(const tgc_rewrite *rw, const tgc_node *db, float x_s, const float *w_s, int64_t n_w, int64_t m) {
    const tgc_const *b = tgc_pass_const_of(rw, db->inputs[0]);
    int64_t n = 0;
    const float *b_s = scale_of(rw, db->inputs[1], &n);
    if (b == NULL || b->dtype != TGC_INT32 || b_s == NULL || (n != 1 && n != m) || b->shape.rank != 1 ||
        tgc_shape_numel(&b->shape) != m)
        return false;
    if (db->n_inputs > 2 && db->inputs[2].node >= 0) {
        const tgc_const *zp = tgc_pass_const_of(rw, db->inputs[2]);
        if (zp == NULL || zp->dtype != TGC_INT32 || zp->data == NULL) return false;
        for (int64_t i = 0; i < tgc_shape_numel(&zp->shape); i++)
            if (((const int32_t *)zp->data)[i] != 0) return false;
    }
    for (int64_t c = 0; c < m; c++) {
        double want = (double)x_s * (double)w_s[n_w == 1 ? 0 : c], got = b_s[n == 1 ? 0 : c];
        if (!(fabs(got - want) <= 1e-6 * fabs(want))) return false;
    }
    return true;
}

/* A listed kind has `op`'s kernel at dtype t. */
static bool kernel_listed(const tgc_rewrite *rw, const char *op, tgc_dtype t) {
    for (int k = 0; k < tgc_backend_count(); k++)
        if ((rw->kinds == 0 || (rw->kinds & (1u << k))) && tgc_kernel_find(op, k, t) != NULL) return true;
    return false;
}

/* The fused group: the integer op's inputs, the nodes it replaces. */
typedef struct group {
    tgc_ref ins[9];
    int n_ins;
    int32_t gone[4]; /* the DequantizeLinear nodes and the float op */
    int n_gone;
} group;

/* Conv between DequantizeLinear and the QuantizeLinear: its group. */
static bool conv_group(const tgc_rewrite *rw, int32_t conv_id, const tgc_node *q, group *grp) {
    const tgc_node *conv = &rw->g->nodes[conv_id];
    if (conv->n_inputs < 2 || conv->n_inputs > 3) return false;
    const tgc_node *dx = only_dq(rw, conv->inputs[0], conv_id), *dw = only_dq(rw, conv->inputs[1], conv_id);
    const tgc_node *db = conv->n_inputs == 3 && conv->inputs[2].node >= 0 ? only_dq(rw, conv->inputs[2], conv_id)
                                                                          : NULL;
    if (dx == NULL || dw == NULL || (conv->n_inputs == 3 && conv->inputs[2].node >= 0 && db == NULL)) return false;
    tgc_dtype xt = q8_type_of(rw, dx);
    const tgc_tensor_info *y = &q->outputs[0];
    const tgc_const *w = tgc_pass_const_of(rw, dw->inputs[0]);
    if (xt == TGC_DTYPE_INVALID || y->dtype != xt || w == NULL || !is_q8(w->dtype) || w->shape.rank < 3)
        return false;
    int64_t m = w->shape.dims[0].v, n_w = 0;
    const float *w_s = scale_of(rw, dw->inputs[1], &n_w), *x_s = NULL;
    int64_t n_x = 0;
    if (w_s == NULL || (n_w != 1 && n_w != m) || !params_ok(rw, dw, w->dtype, n_w, 0) ||
        !params_ok(rw, dx, xt, 1, 1) || !params_ok(rw, q, y->dtype, 1, 1) ||
        (x_s = scale_of(rw, dx->inputs[1], &n_x)) == NULL)
        return false;
    if (db != NULL && !bias_ok(rw, db, x_s[0], w_s, n_w, m)) return false;
    tgc_ref ins[9] = {dx->inputs[0], dx->inputs[1], dx->inputs[2], dw->inputs[0], dw->inputs[1], dw->inputs[2],
                      q->inputs[1],  q->inputs[2]};
    memcpy(grp->ins, ins, sizeof ins);
    grp->n_ins = 8;
    grp->n_gone = 0;
    grp->gone[grp->n_gone++] = conv->inputs[0].node;
    grp->gone[grp->n_gone++] = conv->inputs[1].node;
    if (db != NULL) {
        grp->ins[grp->n_ins++] = db->inputs[0];
        grp->gone[grp->n_gone++] = conv->inputs[2].node;
    }
    return kernel_listed(rw, "QLinearConv", xt);
}

/* MatMul between DequantizeLinear and the QuantizeLinear: its group. */
static bool matmul_group(const tgc_rewrite *rw, int32_t mm_id, const tgc_node *q, group *grp) {
    const tgc_node *mm = &rw->g->nodes[mm_id];
    if (mm->n_inputs != 2) return false;
    const tgc_node *da = only_dq(rw, mm->inputs[0], mm_id), *db = only_dq(rw, mm->inputs[1], mm_id);
    if (da == NULL || db == NULL || da == db) return false;
    tgc_dtype at = q8_type_of(rw, da), bt = q8_type_of(rw, db);
    const tgc_tensor_info *b = tgc_graph_ref_info(rw->g, db->inputs[0]), *y = &q->outputs[0];
    if (at == TGC_DTYPE_INVALID || bt == TGC_DTYPE_INVALID || y->dtype != at) return false;
    int64_t n_b = 0;
    if (scale_of(rw, db->inputs[1], &n_b) == NULL) return false;
    if (n_b > 1 && (b == NULL || b->shape.rank != 2 || !tgc_dim_is(b->shape.dims[1], n_b))) return false;
    if (!params_ok(rw, da, at, 1, 1) || !params_ok(rw, db, bt, n_b, 1) || !params_ok(rw, q, y->dtype, 1, 1))
        return false;
    tgc_ref ins[8] = {da->inputs[0], da->inputs[1], da->inputs[2], db->inputs[0], db->inputs[1], db->inputs[2],
                      q->inputs[1],  q->inputs[2]};
    memcpy(grp->ins, ins, sizeof ins);
    grp->n_ins = 8;
    grp->n_gone = 2;
    grp->gone[0] = mm->inputs[0].node;
    grp->gone[1] = mm->inputs[1].node;
    return kernel_listed(rw, "QLinearMatMul", at);
}

/* DequantizeLinear -> MaxPool -> QuantizeLinear with the same scale and
 * zero point on both sides (per tensor, the scale positive and normal):
 * true with the pool's 8-bit input in *x when the pool may run on the
 * 8-bit values themselves (ONNX Runtime's DropQDQNodesRules). Exact: the
 * dequantization is increasing, so the maximum commutes with it, and
 * Q(DQ(v)) is v again (|v - zp| < 2^8: two float32 roundings stay far
 * from a half). A pool with Indices keeps its group. */
static bool pool_drops_qdq(const tgc_rewrite *rw, int32_t pool_id, const tgc_node *q, tgc_ref *x) {
    const tgc_node *pool = &rw->g->nodes[pool_id];
    if (pool->n_inputs != 1 || pool->n_outputs != 1) return false;
    const tgc_node *dq = only_dq(rw, pool->inputs[0], pool_id);
    tgc_dtype xt = dq != NULL ? q8_type_of(rw, dq) : TGC_DTYPE_INVALID;
    if (xt == TGC_DTYPE_INVALID || q->outputs[0].dtype != xt || !params_ok(rw, dq, xt, 1, 1) ||
        !params_ok(rw, q, xt, 1, 1) || !tgc_pass_same_device(q, dq))
        return false;
    int64_t n;
    const float *s_in = scale_of(rw, dq->inputs[1], &n), *s_out = scale_of(rw, q->inputs[1], &n);
    const tgc_const *z_in = tgc_pass_const_of(rw, dq->inputs[2]), *z_out = tgc_pass_const_of(rw, q->inputs[2]);
    if (s_in[0] != s_out[0] || !isnormal(s_in[0]) || s_in[0] < 0 || z_in->data == NULL || z_out->data == NULL ||
        memcmp(z_in->data, z_out->data, 1) != 0 || !kernel_listed(rw, "MaxPool", xt))
        return false;
    *x = dq->inputs[0];
    return true;
}

/* Q(MaxPool(DQ(x))) as MaxPool(x) where pool_drops_qdq says so. */
static tgc_status drop_qdq(tgc_rewrite *rw, int32_t q_id, int32_t pool_id, tgc_ref x) {
    int32_t dq_id = rw->g->nodes[pool_id].inputs[0].node, pool;
    tgc_status s = tgc_rewrite_add_op(rw, "MaxPool", q_id, &x, 1, 1, &pool);
    if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, pool_id, pool);
    if (s != TGC_OK) return s;
    tgc_rewrite_replace_uses(rw, (tgc_ref){q_id, 0, {0, 0}}, (tgc_ref){pool, 0, {0, 0}});
    tgc_rewrite_remove(rw, q_id); /* the pool takes its name */
    tgc_rewrite_remove(rw, pool_id);
    tgc_rewrite_remove(rw, dq_id);
    rw->edits++;
    return TGC_OK;
}

static tgc_status fuse_one(tgc_rewrite *rw, int32_t q_id) {
    const tgc_node *q = &rw->g->nodes[q_id];
    if (q->n_inputs < 3 || q->n_outputs != 1 || q->n_colocate > 0 || q->inputs[0].node < 0) return TGC_OK;
    int32_t op_id = q->inputs[0].node;
    tgc_ref pool_x;
    if (tgc_pass_is_op(rw, op_id, "MaxPool") && tgc_pass_only_reader(rw, q->inputs[0]) == q_id &&
        rw->g->nodes[op_id].n_colocate == 0 && tgc_pass_same_device(q, &rw->g->nodes[op_id]) &&
        pool_drops_qdq(rw, op_id, q, &pool_x))
        return drop_qdq(rw, q_id, op_id, pool_x);
    bool conv = tgc_pass_is_op(rw, op_id, "Conv"), mm = tgc_pass_is_op(rw, op_id, "MatMul");
    if ((!conv && !mm) || tgc_pass_only_reader(rw, q->inputs[0]) != q_id || rw->g->nodes[op_id].n_colocate > 0 ||
        !tgc_pass_same_device(q, &rw->g->nodes[op_id]))
        return TGC_OK;
    group grp;
    if (!(conv ? conv_group(rw, op_id, q, &grp) : matmul_group(rw, op_id, q, &grp))) return TGC_OK;
    for (int i = 0; i < grp.n_gone; i++)
        if (!tgc_pass_same_device(q, &rw->g->nodes[grp.gone[i]])) return TGC_OK;
    int32_t fused;
    tgc_status s = tgc_rewrite_add_op(rw, conv ? "QLinearConv" : "QLinearMatMul", q_id, grp.ins, grp.n_ins, 1, &fused);
    if (s == TGC_OK && conv) s = tgc_rewrite_copy_attrs(rw, op_id, fused);
    if (s != TGC_OK) return s;
    tgc_rewrite_replace_uses(rw, (tgc_ref){q_id, 0, {0, 0}}, (tgc_ref){fused, 0, {0, 0}});
    tgc_rewrite_remove(rw, q_id); /* the fused node takes its name */
    tgc_rewrite_remove(rw, op_id);
    for (int i = 0; i < grp.n_gone; i++) tgc_rewrite_remove(rw, grp.gone[i]);
    rw->edits++;
    return TGC_OK;
}

bool tgc_pass_has_quantize(const tgc_graph *g) {
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_OP && strcmp(g->nodes[id].op_name, "QuantizeLinear") == 0) return true;
    return false;
}

tgc_status tgc_pass_fuse_qdq(tgc_rewrite *rw) { return tgc_pass_each_op(rw, "QuantizeLinear", fuse_one); }
