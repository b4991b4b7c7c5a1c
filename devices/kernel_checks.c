/* Checks and message helpers that the cpu and gpu kernels share (see
 * kernel_checks.h). */
#include "devices/kernel_checks.h"

#include "support/checked.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

tgc_status tgc_kernel_need_float(tgc_kernel_ctx *c, const tgc_value *v, const char *what, tgc_dtype t) {
    if (v->dtype == t) return TGC_OK;
    if (v->dtype == TGC_DTYPE_INVALID) return tgc_kernel_fail(c, "%s is missing", what);
    return tgc_kernel_fail(c, "%s is %s; this kernel takes %s", what, tgc_dtype_name(v->dtype), tgc_dtype_name(t));
}

tgc_status tgc_kernel_need_f32(tgc_kernel_ctx *c, const tgc_value *v, const char *what) {
    return tgc_kernel_need_float(c, v, what, TGC_FLOAT32);
}

tgc_dtype tgc_kernel_float_type(const tgc_kernel_ctx *c, const tgc_value *x) {
    if (x->dtype != TGC_FLOAT16 || c->def == NULL) return TGC_FLOAT32;
    for (int i = 0; i < TGC_KERNEL_MAX_DTYPES && c->def->dtypes[i] != TGC_DTYPE_INVALID; i++)
        if (c->def->dtypes[i] == TGC_FLOAT16) return TGC_FLOAT16;
    return TGC_FLOAT32;
}

bool tgc_kernel_has_input(const tgc_kernel_ctx *c, int i) {
    return i >= 0 && i < c->n_inputs && c->inputs[i].dtype != TGC_DTYPE_INVALID;
}

tgc_status tgc_kernel_check_tensor(tgc_kernel_ctx *c, const char *what, int i, const tgc_value *v, bool host) {
    const char *op = tgc_kernel_op_name(c);
    if (v->dtype < 0 || v->dtype >= TGC_DTYPE_COUNT || tgc_dtype_size(v->dtype) == 0)
        return tgc_kernel_fail(c, "%s: %s %d has no valid dtype", op, what, i);
    if (v->rank < 0 || v->rank > TGC_MAX_RANK)
        return tgc_kernel_fail(c, "%s: %s %d has rank %d; tgc allows 0 to %d", op, what, i, v->rank, TGC_MAX_RANK);
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d] < 0)
            return tgc_kernel_fail(c, "%s: %s %d has dim %lld at axis %d", op, what, i, (long long)v->dims[d], d);
    size_t nbytes;
    if (!tgc_checked_dims_nbytes(v->rank, v->dims, tgc_dtype_size(v->dtype), &nbytes))
        return tgc_kernel_fail(c, "%s: %s %d has more elements or bytes than fit in 2^63 - 1", op, what, i);
    if (nbytes == 0) return TGC_OK; /* an empty tensor: nothing to read or write */
    if (v->buf == NULL || v->buf->nbytes < nbytes)
        return tgc_kernel_fail(c, "%s: %s %d needs %zu bytes but its buffer holds %zu", op, what, i, nbytes,
                               v->buf == NULL ? (size_t)0 : v->buf->nbytes);
    if (host && tgc_buffer_host_ptr(v->buf) == NULL)
        return tgc_kernel_fail(c, "%s: %s %d must be in host memory; it is on %s", op, what, i,
                               v->buf->device->name);
    if (!host && (v->buf->device != c->device || v->buf->mem == NULL))
        return tgc_kernel_fail(c, "%s: %s %d must be on %s; it is on %s", op, what, i, c->device->name,
                               v->buf->device->name);
    return TGC_OK;
}

tgc_status tgc_kernel_check_tensors(tgc_kernel_ctx *c, int min_inputs, int n_outputs, uint32_t host_inputs,
                                    bool all_host) {
    const char *op = tgc_kernel_op_name(c);
    if (c->n_inputs < min_inputs)
        return tgc_kernel_fail(c, "%s: needs %d inputs, got %d", op, min_inputs, c->n_inputs);
    if (c->n_outputs < n_outputs)
        return tgc_kernel_fail(c, "%s: needs %d outputs, got %d", op, n_outputs, c->n_outputs);
    for (int i = 0; i < c->n_inputs; i++) {
        if (!tgc_kernel_has_input(c, i)) {
            if (i < min_inputs) return tgc_kernel_fail(c, "%s: input %d may not be omitted", op, i);
            continue;
        }
        bool host = all_host || tgc_kernel_mask_has(host_inputs, i);
        tgc_status st = tgc_kernel_check_tensor(c, "input", i, &c->inputs[i], host);
        if (st != TGC_OK) return st;
    }
    for (int i = 0; i < n_outputs; i++) {
        tgc_status st = tgc_kernel_check_tensor(c, "output", i, &c->outputs[i], all_host);
        if (st != TGC_OK) return st;
    }
    return TGC_OK;
}

bool tgc_kernel_has_output(const tgc_kernel_ctx *c, int i) {
    return i < c->n_outputs && c->outputs[i].buf != NULL;
}

tgc_status tgc_kernel_read_ints(tgc_kernel_ctx *c, int i, const char *what, int64_t *out, int max, int *n) {
    const tgc_value *v = &c->inputs[i];
    const char *op = tgc_kernel_op_name(c);
    *n = 0;
    if (v->dtype != TGC_INT32 && v->dtype != TGC_INT64)
        return tgc_kernel_fail(c, "%s: input %d (%s) is %s; it must be int32 or int64", op, i, what,
                               tgc_dtype_name(v->dtype));
    if (v->rank > 1) return tgc_kernel_fail(c, "%s: input %d (%s) has rank %d; it must be 1-D", op, i, what, v->rank);
    int64_t count = tgc_value_numel(v);
    if (count > max)
        return tgc_kernel_fail(c, "%s: input %d (%s) has %lld elements; at most %d are allowed", op, i, what,
                               (long long)count, max);
    const char *p = tgc_kernel_in_ptr(c, i);
    for (int64_t k = 0; k < count; k++) {
        if (v->dtype == TGC_INT32) {
            int32_t x;
            memcpy(&x, p + k * 4, 4);
            out[k] = x;
        } else {
            memcpy(&out[k], p + k * 8, 8);
        }
    }
    *n = (int)count;
    return TGC_OK;
}

tgc_status tgc_kernel_check_host(tgc_kernel_ctx *c, int min_inputs, int n_outputs) {
    return tgc_kernel_check_tensors(c, min_inputs, n_outputs, 0, true);
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

tgc_status tgc_kernel_concat_shape(tgc_kernel_ctx *c, int *axis, int64_t *dims) {
    const tgc_value *first = &c->inputs[0];
    int r = first->rank;
    if (r == 0) return tgc_kernel_fail(c, "Concat: input 0 is a scalar; inputs must have rank >= 1");
    if (tgc_node_attr(c->node, "axis") == NULL) return tgc_kernel_fail(c, "Concat: attribute 'axis' is required");
    tgc_status st = tgc_kernel_axis_attr(c, 0, r, axis);
    if (st != TGC_OK) return st;
    memcpy(dims, first->dims, sizeof(int64_t) * (size_t)r);
    dims[*axis] = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const tgc_value *in = &c->inputs[i];
        bool same = in->rank == r && in->dtype == c->outputs[0].dtype;
        for (int j = 0; same && j < r; j++) same = j == *axis || in->dims[j] == first->dims[j];
        if (!same) {
            char sa[TGC_KERNEL_DIMS_BUF], sb[TGC_KERNEL_DIMS_BUF];
            return tgc_kernel_fail(c, "Concat: input %d (%s %s) does not match input 0 (%s %s) and output 0 "
                                   "(%s) except on axis %d", i, tgc_dtype_name(in->dtype),
                                   tgc_kernel_dims_str(in->rank, in->dims, sb), tgc_dtype_name(first->dtype),
                                   tgc_kernel_dims_str(r, first->dims, sa), tgc_dtype_name(c->outputs[0].dtype),
                                   *axis);
        }
        if (!tgc_checked_add_i64(dims[*axis], in->dims[*axis], &dims[*axis]))
            return tgc_kernel_fail(c, "Concat: the result has too many elements");
    }
    return tgc_kernel_expect_dims(c, 0, r, dims);
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
