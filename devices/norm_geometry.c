/* BatchNormalization's and LayerNormalization's argument checks (see
 * norm_geometry.h), one copy for the cpu and gpu kernels. */
#include "devices/norm_geometry.h"

#include <string.h>

tgc_status tgc_batch_norm_geometry_read(tgc_kernel_ctx *c, int64_t *planes, int64_t *channels, int64_t *size) {
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    if (c->n_inputs < 5 || c->n_outputs < 1)
        return tgc_kernel_fail(c, "BatchNormalization takes 5 inputs (X, scale, B, input_mean, input_var)");
    if (tgc_kernel_attr_int(c, "training_mode", 0) != 0 || tgc_kernel_has_output(c, 1) || tgc_kernel_has_output(c, 2))
        return tgc_kernel_fail(c, "BatchNormalization runs in inference mode only (training_mode 0, one output)");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = TGC_OK;
    tgc_dtype t = tgc_kernel_float_type(c, x);
    for (int i = 0; st == TGC_OK && i < 5; i++) st = tgc_kernel_need_float(c, &c->inputs[i], names[i], t);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", t);
    if (st != TGC_OK) return st;
    if (x->rank < 2) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, ...]", x->rank);
    int64_t ch = x->dims[1];
    for (int i = 1; i < 5; i++)
        if (c->inputs[i].rank != 1 || c->inputs[i].dims[0] != ch)
            return tgc_kernel_fail(c, "input %s must be [C = %lld]", names[i], (long long)ch);
    if (y->rank != x->rank || memcmp(y->dims, x->dims, (size_t)x->rank * sizeof x->dims[0]) != 0)
        return tgc_kernel_fail(c, "output Y must have X's shape");
    int64_t s = 1;
    for (int i = 2; i < x->rank; i++) s *= x->dims[i];
    *planes = x->dims[0] * ch;
    *channels = ch;
    *size = s;
    return TGC_OK;
}

tgc_status tgc_layer_norm_geometry_read(tgc_kernel_ctx *c, tgc_layer_norm_geometry *g) {
    if (c->n_inputs < 2 || c->n_outputs < 1)
        return tgc_kernel_fail(c, "LayerNormalization takes X, Scale and an optional B");
    const tgc_value *x = &c->inputs[0], *sv = &c->inputs[1], *y = &c->outputs[0];
    bool has_b = tgc_kernel_has_input(c, 2), want_mean = tgc_kernel_has_output(c, 1),
         want_inv = tgc_kernel_has_output(c, 2);
    tgc_dtype t = tgc_kernel_float_type(c, x); /* Mean and InvStdDev: float32 (stash_type 1) */
    tgc_status st = tgc_kernel_need_float(c, x, "input X", t);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, sv, "input Scale", t);
    if (st == TGC_OK && has_b) st = tgc_kernel_need_float(c, &c->inputs[2], "input B", t);
    if (st == TGC_OK) st = tgc_kernel_need_float(c, y, "output Y", t);
    if (st == TGC_OK && want_mean) st = tgc_kernel_need_f32(c, &c->outputs[1], "output Mean");
    if (st == TGC_OK && want_inv) st = tgc_kernel_need_f32(c, &c->outputs[2], "output InvStdDev");
    if (st != TGC_OK) return st;
    int64_t axis = tgc_kernel_attr_int(c, "axis", -1);
    if (axis < -x->rank || axis >= x->rank)
        return tgc_kernel_fail(c, "attribute 'axis' is %lld; X has rank %d", (long long)axis, x->rank);
    int ax = (int)(axis < 0 ? axis + x->rank : axis);
    if (y->rank != x->rank || memcmp(y->dims, x->dims, (size_t)x->rank * sizeof x->dims[0]) != 0)
        return tgc_kernel_fail(c, "output Y must have X's shape");
    int64_t rows = 1, size = 1;
    for (int i = 0; i < ax; i++) rows *= x->dims[i];
    for (int i = ax; i < x->rank; i++) size *= x->dims[i];
    for (int i = 1; i <= 2; i++)
        if ((i == 1 ? want_mean : want_inv) && tgc_value_numel(&c->outputs[i]) != rows)
            return tgc_kernel_fail(c, "output %s must have %lld elements (X.shape[:axis] + [1, ...])",
                                   i == 1 ? "Mean" : "InvStdDev", (long long)rows);
    g->ax = ax;
    g->rows = rows;
    g->size = size;
    g->has_b = has_b;
    g->want_mean = want_mean;
    g->want_inv = want_inv;
    return TGC_OK;
}
