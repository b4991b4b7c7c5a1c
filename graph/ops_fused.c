/* _FusedElementwise: a group of elementwise ops run as one node, made by
 * passes/fuse_elementwise.c (and written in --dump optimized, so a file
 * may hold one). Attributes describe a straight-line program of steps, each
 * a row of graph/elementwise.def:
 *     ops       strings, one row name per step ("Mul", "Sigmoid", ...)
 *     operands  ints, two per step: an operand is an input index 0..n-1 or
 *               n + k for the result of an earlier step k; -1 for a unary
 *               row's second
 *     params    floats, three per step: the row's P0..P2, attributes and
 *               defaults already applied
 * The last step's result is the output. Every input has the output's shape
 * or one element (broadcast); all are float32. */
#include "graph/elementwise.h"
#include "graph/ops.h"

#include <string.h>

static const tgc_attr_def fused_attrs[] = {
    {"ops", TGC_ATTR_STRINGS, true}, {"operands", TGC_ATTR_INTS, true}, {"params", TGC_ATTR_FLOATS, true}, {NULL, 0, false}};

static tgc_status infer_fused(tgc_infer_ctx *c) {
    const tgc_attr *ops = tgc_infer_attr(c, "ops"), *operands = tgc_infer_attr(c, "operands");
    const tgc_attr *params = tgc_infer_attr(c, "params");
    int n_in = tgc_infer_num_inputs(c);
    size_t steps = ops != NULL ? ops->n : 0;
    if (steps == 0 || operands->n != 2 * steps || params->n != 3 * steps)
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "a fused group needs 2 operands and 3 params per step (%zu steps, %zu operands, %zu "
                              "params)", steps, operands ? operands->n : 0, params ? params->n : 0);
    for (size_t k = 0; k < steps; k++) {
        const tgc_ew_row *r = tgc_ew_find(ops->strings[k]);
        if (r == NULL || r->bool_out || (r->dtypes & (1u << TGC_FLOAT32)) == 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "step %zu: '%s' is no float elementwise row", k,
                                  ops->strings[k]);
        for (int j = 0; j < 2; j++) {
            int64_t o = operands->ints[2 * k + j];
            bool used = j < r->arity;
            if ((used && (o < 0 || o >= n_in + (int64_t)k)) || (!used && o != -1))
                return tgc_infer_fail(c, -1, "bad-attribute", "step %zu (%s): operand %d is %lld", k, r->op, j,
                                      (long long)o);
        }
    }
    /* The output: the shape of the inputs that are not one element (all
     * the same), else the highest-rank one-element input's. */
    int full = -1, widest = 0;
    for (int i = 0; i < n_in; i++) {
        if (!tgc_infer_require_dtype(c, i, TGC_FLOAT32)) return TGC_ERR_INVALID;
        const tgc_shape *x = &tgc_infer_input(c, i)->shape;
        if (tgc_shape_numel(x) != 1 && full < 0) full = i;
        if (x->rank > tgc_infer_input(c, widest)->shape.rank) widest = i;
    }
    tgc_shape out = tgc_infer_input(c, full >= 0 ? full : widest)->shape;
    for (int i = 0; i < n_in; i++) {
        const tgc_shape *x = &tgc_infer_input(c, i)->shape;
        if (tgc_shape_eq(x, &out) || (tgc_shape_numel(x) == 1 && x->rank <= out.rank)) continue;
        char a[128], b[128];
        return tgc_infer_fail(c, i, "shape-mismatch", "input %d has shape %s; the group's is %s (or one element)", i,
                              tgc_infer_shape_str(c, x, a, sizeof a), tgc_infer_shape_str(c, &out, b, sizeof b));
    }
    return tgc_infer_set_output(c, 0, TGC_FLOAT32, &out);
}

const tgc_op_def tgc_op__FusedElementwise = {"_FusedElementwise", 1, -1, 1, 1, fused_attrs, infer_fused};
