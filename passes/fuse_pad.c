/* A zero Pad folded into the Conv or AveragePool that reads it: exporters
 * write padding the op cannot express as its own attributes (PyTorch's
 * avg_pool2d with padding, TensorFlow's asymmetric SAME padding) as an
 * explicit Pad, which copies the whole tensor. Zeros added before a Conv
 * are its pads; before an AveragePool they are pads counted in the divisor
 * (count_include_pad 1). So Pad(x, pads p, mode constant, value 0) -> op
 * with pads q becomes op(x) with pads p + q on the spatial axes, when:
 *   - the Pad pads only the spatial axes (not N, C), by amounts >= 0, with
 *     mode constant and value 0 (absent, or a constant 0), its pads and
 *     axes constant;
 *   - the op is the Pad's only reader, reads it as input 0, has auto_pad
 *     NOTSET (or none) and the same requested device;
 *   - for AveragePool: its own pads are 0, or count_include_pad is 1
 *     already (pads that do not count could not be merged with pads that
 *     do).
 * ONNX Runtime's PadFusion does the same for Conv, AveragePool and MaxPool
 * (MaxPool would need value -inf; left alone). The fused node takes the
 * op's name. */
#include "passes/pass.h"
#include "support/checked.h"

#include <string.h>

/* The Pad's amounts per axis of a rank-`rank` input: begin[a], end[a];
 * false unless it pads with zeros by constant amounts >= 0. */
static bool zero_pad_amounts(const tgc_rewrite *rw, const tgc_node *pad, int rank, int64_t *begin, int64_t *end) {
    const tgc_attr *mode = tgc_node_attr(pad, "mode");
    if (mode != NULL && (mode->type != TGC_ATTR_STRING || strcmp(mode->s, "constant") != 0)) return false;
    if (pad->n_inputs < 2) return false;
    if (pad->n_inputs > 2 && pad->inputs[2].node >= 0 && !tgc_pass_is_scalar(rw, pad->inputs[2], 0.0)) return false;
    const tgc_const *p = tgc_pass_const_of(rw, pad->inputs[1]);
    if (p == NULL || p->dtype != TGC_INT64 || p->shape.rank != 1) return false;
    int64_t n = tgc_shape_numel(&p->shape);
    int axes[TGC_MAX_RANK], n_axes = rank;
    for (int a = 0; a < rank; a++) axes[a] = a;
    if (pad->n_inputs > 3 && pad->inputs[3].node >= 0) { /* opset 18's axes */
        const tgc_const *ax = tgc_pass_const_of(rw, pad->inputs[3]);
        if (ax == NULL || (ax->dtype != TGC_INT64 && ax->dtype != TGC_INT32) || ax->shape.rank != 1) return false;
        n_axes = (int)tgc_shape_numel(&ax->shape);
        if (n_axes > rank) return false;
        for (int i = 0; i < n_axes; i++) {
            int64_t v = ax->dtype == TGC_INT64 ? ((const int64_t *)ax->data)[i] : ((const int32_t *)ax->data)[i];
            if (v < 0) v += rank;
            if (v < 0 || v >= rank) return false;
            axes[i] = (int)v;
        }
    }
    if (n != 2 * n_axes) return false;
    for (int a = 0; a < rank; a++) begin[a] = end[a] = 0;
    const int64_t *v = p->data;
    for (int i = 0; i < n_axes; i++) {
        if (v[i] < 0 || v[n_axes + i] < 0 || !tgc_checked_add_i64(begin[axes[i]], v[i], &begin[axes[i]]) ||
            !tgc_checked_add_i64(end[axes[i]], v[n_axes + i], &end[axes[i]]))
            return false;
    }
    return begin[0] == 0 && end[0] == 0 && begin[1] == 0 && end[1] == 0;
}

static tgc_status fuse_one(tgc_rewrite *rw, int32_t pad_id) {
    const tgc_node *pad = &rw->g->nodes[pad_id];
    if (pad->n_outputs != 1 || pad->n_colocate > 0 || pad->inputs[0].node < 0) return TGC_OK;
    int32_t op_id = tgc_pass_only_reader(rw, (tgc_ref){pad_id, 0, {0, 0}});
    if (op_id < 0) return TGC_OK;
    const tgc_node *op = &rw->g->nodes[op_id];
    bool conv = tgc_pass_is_op(rw, op_id, "Conv"), avg = tgc_pass_is_op(rw, op_id, "AveragePool");
    if ((!conv && !avg) || op->n_inputs < 1 || op->n_inputs > 3 || op->inputs[0].node != pad_id || op->n_colocate > 0 ||
        !tgc_pass_same_device(pad, op))
        return TGC_OK;
    for (int k = 1; k < op->n_inputs; k++)
        if (op->inputs[k].node == pad_id) return TGC_OK;
    const tgc_attr *auto_pad = tgc_node_attr(op, "auto_pad");
    if (auto_pad != NULL && (auto_pad->type != TGC_ATTR_STRING || strcmp(auto_pad->s, "NOTSET") != 0)) return TGC_OK;
    const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, pad->inputs[0]);
    if (x == NULL || x->shape.rank == TGC_RANK_UNKNOWN || x->shape.rank < 3) return TGC_OK;
    int rank = x->shape.rank, n = rank - 2;
    int64_t begin[TGC_MAX_RANK], end[TGC_MAX_RANK], pads[2 * TGC_MAX_RANK] = {0};
    if (!zero_pad_amounts(rw, pad, rank, begin, end)) return TGC_OK;
    const tgc_attr *own = tgc_node_attr(op, "pads");
    bool own_zero = true;
    if (own != NULL) {
        if (own->type != TGC_ATTR_INTS || own->n != (size_t)(2 * n)) return TGC_OK;
        for (int i = 0; i < 2 * n; i++) {
            pads[i] = own->ints[i];
            own_zero &= own->ints[i] == 0;
        }
    }
    if (avg && !own_zero && tgc_pass_attr_int(op, "count_include_pad", 0) != 1) return TGC_OK;
    for (int a = 0; a < n; a++)
        if (!tgc_checked_add_i64(pads[a], begin[2 + a], &pads[a]) ||
            !tgc_checked_add_i64(pads[n + a], end[2 + a], &pads[n + a]))
            return TGC_OK; /* pads past int64: left for inference to refuse */
    tgc_ref ins[3];
    for (int k = 0; k < op->n_inputs; k++) ins[k] = op->inputs[k];
    ins[0] = pad->inputs[0];
    int32_t fused;
    tgc_status s = tgc_rewrite_replace_op(rw, op_id, ins, op->n_inputs, &fused);
    if (s == TGC_OK) s = tgc_rewrite_set_attr_list(rw, fused, "pads", TGC_ATTR_INTS, (size_t)(2 * n), pads);
    if (s == TGC_OK && avg) s = tgc_rewrite_set_attr_int(rw, fused, "count_include_pad", 1);
    if (s != TGC_OK) return s;
    tgc_rewrite_remove(rw, pad_id); /* its only reader is gone */
    rw->edits++;
    return TGC_OK;
}

tgc_status tgc_pass_fuse_pad(tgc_rewrite *rw) { return tgc_pass_each_op(rw, "Pad", fuse_one); }
