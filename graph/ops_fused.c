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
 * The last step's result is the output, of input 0's shape. Every other
 * input has that shape, one element, or is a row broadcast over its
 * leading dims (tgc_fused_input_fits); all are float32, or all float16
 * (the output then too). */
#include "graph/elementwise.h"
#include "graph/ops.h"

#include <string.h>

bool tgc_fused_input_fits(const tgc_shape *x, const tgc_shape *out) {
    if (x->rank == TGC_RANK_UNKNOWN || out->rank == TGC_RANK_UNKNOWN) return false;
    if (tgc_shape_eq(x, out)) return true;
    if (x->rank > out->rank) return false;
    int lead = 0; /* x's leading 1s */
    while (lead < x->rank && tgc_dim_is(x->dims[lead], 1)) lead++;
    if (lead == x->rank) return true; /* one element */
    for (int d = lead; d < x->rank; d++)
        if (!tgc_dim_eq(x->dims[d], out->dims[out->rank - x->rank + d])) return false;
    return true;
}

static const tgc_attr_def fused_attrs[] = {
    {"ops", TGC_ATTR_STRINGS, true}, {"operands", TGC_ATTR_INTS, true}, {"params", TGC_ATTR_FLOATS, true}, {NULL, 0, false}};

static tgc_status infer_fused(tgc_infer_ctx *c) {
    const tgc_attr *ops = tgc_infer_attr(c, "ops"), *operands = tgc_infer_attr(c, "operands");
    const tgc_attr *params = tgc_infer_attr(c, "params");
    int n_in = tgc_infer_num_inputs(c);
    size_t steps = ops != NULL ? ops->n : 0;
    if (steps > TGC_FUSED_MAX_STEPS || n_in > TGC_FUSED_MAX_INPUTS)
        return tgc_infer_fail(c, -1, "bad-attribute", "a fused group of %zu steps and %d inputs (at most %d and %d)",
                              steps, n_in, TGC_FUSED_MAX_STEPS, TGC_FUSED_MAX_INPUTS);
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
    /* The output has input 0's shape; every other input that shape, one
     * element, or a row broadcast of it (its dims, leading 1s aside, the
     * output's last dims: a bias [C] of [N, T, C]). */
    tgc_shape out = tgc_infer_input(c, 0)->shape;
    tgc_dtype t = tgc_infer_input(c, 0)->dtype == TGC_FLOAT16 ? TGC_FLOAT16 : TGC_FLOAT32;
    for (size_t k = 0; t == TGC_FLOAT16 && k < steps; k++)
        if ((tgc_ew_find(ops->strings[k])->dtypes & (1u << TGC_FLOAT16)) == 0)
            return tgc_infer_fail(c, -1, "bad-attribute", "step %zu: '%s' has no float16 form", k, ops->strings[k]);
    for (int i = 0; i < n_in; i++) {
        if (!tgc_infer_require_dtype(c, i, t)) return TGC_ERR_INVALID;
        const tgc_shape *x = &tgc_infer_input(c, i)->shape;
        if (tgc_fused_input_fits(x, &out)) continue;
        char a[128], b[128];
        return tgc_infer_fail(c, i, "shape-mismatch",
                              "input %d has shape %s; the group's is %s (or one element, or a row of it)", i,
                              tgc_infer_shape_str(c, x, a, sizeof a), tgc_infer_shape_str(c, &out, b, sizeof b));
    }
    return tgc_infer_set_output(c, 0, t, &out);
}

const tgc_op_def tgc_op__FusedElementwise = {"_FusedElementwise", 1, -1, 1, 1, fused_attrs, infer_fused};
