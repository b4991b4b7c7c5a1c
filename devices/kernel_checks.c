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

tgc_status tgc_kernel_expect_dims(tgc_kernel_ctx *c, int rank, const int64_t *dims) {
    const tgc_value *y = &c->outputs[0];
    bool same = y->rank == rank;
    for (int d = 0; same && d < rank; d++) same = y->dims[d] == dims[d];
    if (same) return TGC_OK;
    char a[TGC_KERNEL_DIMS_BUF], b[TGC_KERNEL_DIMS_BUF];
    return tgc_kernel_fail(c, "%s: output shape %s; the input and attributes give %s", tgc_kernel_op_name(c),
                           tgc_kernel_dims_str(y->rank, y->dims, a), tgc_kernel_dims_str(rank, dims, b));
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
