/* Checks and message helpers that the cpu and gpu kernels share (see
 * kernel_checks.h). */
#include "devices/kernel_checks.h"

#include <inttypes.h>
#include <stdio.h>

tgc_status tgc_kernel_need_f32(tgc_kernel_ctx *c, const tgc_value *v, const char *what) {
    if (v->dtype == TGC_FLOAT32) return TGC_OK;
    if (v->dtype == TGC_DTYPE_INVALID) return tgc_kernel_fail(c, "%s is missing", what);
    return tgc_kernel_fail(c, "%s is %s; this kernel takes float32", what, tgc_dtype_name(v->dtype));
}

bool tgc_kernel_has_input(const tgc_kernel_ctx *c, int i) {
    return i < c->n_inputs && c->inputs[i].dtype != TGC_DTYPE_INVALID;
}

bool tgc_kernel_has_output(const tgc_kernel_ctx *c, int i) {
    return i < c->n_outputs && c->outputs[i].buf != NULL;
}

const char *tgc_kernel_op_name(const tgc_kernel_ctx *c) {
    return c->node->op_name != NULL ? c->node->op_name : c->node->name;
}

const char *tgc_kernel_dims_str(int rank, const int64_t *dims, char *buf) {
    size_t len = 0;
    buf[len++] = '[';
    for (int d = 0; d < rank && d < TGC_MAX_RANK; d++)
        len += (size_t)snprintf(buf + len, TGC_KERNEL_DIMS_BUF - len, "%s%" PRId64, d ? ", " : "", dims[d]);
    snprintf(buf + len, TGC_KERNEL_DIMS_BUF - len, "]");
    return buf;
}

tgc_status tgc_kernel_expect_dims(tgc_kernel_ctx *c, int o, int rank, const int64_t *dims) {
    const tgc_value *y = &c->outputs[o];
    bool same = y->rank == rank;
    for (int d = 0; same && d < rank; d++) same = y->dims[d] == dims[d];
    if (same) return TGC_OK;
    char a[TGC_KERNEL_DIMS_BUF], b[TGC_KERNEL_DIMS_BUF];
    return tgc_kernel_fail(c, "%s: output %d was given shape %s but the inputs make %s", tgc_kernel_op_name(c), o,
                           tgc_kernel_dims_str(y->rank, y->dims, a), tgc_kernel_dims_str(rank, dims, b));
}

tgc_status tgc_kernel_need_like(tgc_kernel_ctx *c, tgc_dtype dtype) {
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    if (y->dtype != dtype)
        return tgc_kernel_fail(c, "%s: output is %s, expected %s", tgc_kernel_op_name(c), tgc_dtype_name(y->dtype),
                               tgc_dtype_name(dtype));
    if (tgc_value_numel(y) != tgc_value_numel(x)) {
        char a[TGC_KERNEL_DIMS_BUF], b[TGC_KERNEL_DIMS_BUF];
        return tgc_kernel_fail(c, "%s: output shape %s differs from the input's %s", tgc_kernel_op_name(c),
                               tgc_kernel_dims_str(y->rank, y->dims, a), tgc_kernel_dims_str(x->rank, x->dims, b));
    }
    return TGC_OK;
}

tgc_status tgc_kernel_axis_attr(tgc_kernel_ctx *c, int64_t dflt, int rank, int *axis) {
    int64_t a = tgc_kernel_attr_int(c, "axis", dflt);
    if (a < -rank || a >= rank)
        return tgc_kernel_fail(c, "%s: axis %lld is out of range [%d, %d) for rank %d", tgc_kernel_op_name(c),
                               (long long)a, -rank, rank, rank);
    *axis = (int)(a < 0 ? a + rank : a);
    return TGC_OK;
}

tgc_status tgc_kernel_gather_shape(tgc_kernel_ctx *c, int *axis) {
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1];
    int r = x->rank, q = ind->rank;
    if (r == 0) return tgc_kernel_fail(c, "Gather: input 0 is a scalar; data must have rank >= 1");
    if (ind->dtype != TGC_INT32 && ind->dtype != TGC_INT64)
        return tgc_kernel_fail(c, "Gather: the indices are %s; they must be int32 or int64",
                               tgc_dtype_name(ind->dtype));
    if (r + q - 1 > TGC_MAX_RANK)
        return tgc_kernel_fail(c, "Gather: the result would have rank %d; tgc allows at most %d", r + q - 1,
                               TGC_MAX_RANK);
    tgc_status st = tgc_kernel_axis_attr(c, 0, r, axis);
    if (st != TGC_OK) return st;
    int64_t dims[TGC_MAX_RANK];
    int n = 0;
    for (int i = 0; i < *axis; i++) dims[n++] = x->dims[i];
    for (int i = 0; i < q; i++) dims[n++] = ind->dims[i];
    for (int i = *axis + 1; i < r; i++) dims[n++] = x->dims[i];
    return tgc_kernel_expect_dims(c, 0, n, dims);
}

tgc_status tgc_kernel_constant_attr(tgc_kernel_ctx *c, const tgc_attr **attr, int *which) {
    static const char *const forms[] = {"value",      "value_float",  "value_floats", "value_int",
                                        "value_ints", "value_string", "value_strings"};
    *attr = NULL;
    *which = -1;
    for (int i = 0; i < 7; i++) {
        const tgc_attr *f = tgc_node_attr(c->node, forms[i]);
        if (f == NULL) continue;
        if (*attr != NULL) return tgc_kernel_fail(c, "Constant: more than one of the value attributes is set");
        *attr = f;
        *which = i;
    }
    if (*attr == NULL) return tgc_kernel_fail(c, "Constant: none of the value attributes is set");
    return TGC_OK;
}

tgc_status tgc_kernel_fill_value(tgc_kernel_ctx *c, const void **elem, tgc_dtype *dtype) {
    static const float zero = 0.0f;
    const tgc_attr *a = tgc_node_attr(c->node, "value");
    *elem = &zero;
    *dtype = TGC_FLOAT32;
    if (a != NULL) {
        const tgc_const *k = a->type == TGC_ATTR_TENSOR ? a->tensor : NULL;
        if (k == NULL || k->dtype < 0 || k->dtype >= TGC_DTYPE_COUNT || k->nbytes != tgc_dtype_size(k->dtype) ||
            k->data == NULL)
            return tgc_kernel_fail(c, "ConstantOfShape: attribute 'value' must be a tensor of one element");
        *elem = k->data;
        *dtype = k->dtype;
    }
    if (c->outputs[0].dtype != *dtype)
        return tgc_kernel_fail(c, "ConstantOfShape: output 0 is %s but attribute 'value' is %s",
                               tgc_dtype_name(c->outputs[0].dtype), tgc_dtype_name(*dtype));
    return TGC_OK;
}
