/* CPU kernels that read elements chosen by index tensors (ONNX opset 17):
 * GatherElements and GatherND. They move bytes, so every dtype by its
 * element size. Index values come from untrusted inputs: every one is
 * checked against its axis before anything is read (negative ones count
 * from the back), and one out of range is an error naming the op, the
 * index and the shape. */
#include "devices/cpu/elem_types.h"
#include "devices/cpu/kernels_indexing.h"
#include "devices/cpu/kernels_shape.h"
#include "devices/cpu/odometer.h"

#include <string.h>

tgc_status tgc_cpu_need_indices(tgc_kernel_ctx *c, int i) {
    tgc_dtype t = c->inputs[i].dtype;
    if (t == TGC_INT32 || t == TGC_INT64) return TGC_OK;
    return tgc_kernel_fail(c, "%s: input %d (indices) is %s; it must be int32 or int64", tgc_kernel_op_name(c), i,
                           tgc_dtype_name(t));
}

tgc_status tgc_cpu_index_range_fail(tgc_kernel_ctx *c, int64_t v, int64_t k, int axis, const tgc_value *data) {
    char sd[TGC_KERNEL_DIMS_BUF];
    int64_t size = data->dims[axis];
    return tgc_kernel_fail(c, "%s: index %lld (element %lld of the indices) is out of range [%lld, %lld) for "
                           "axis %d of data %s", tgc_kernel_op_name(c), (long long)v, (long long)k,
                           (long long)-size, (long long)size, axis, tgc_kernel_dims_str(data->rank, data->dims, sd));
}

tgc_status tgc_cpu_elements_args(tgc_kernel_ctx *c, const tgc_value *data, const tgc_value *ind, int *axis) {
    const char *op = tgc_kernel_op_name(c);
    char sd[TGC_KERNEL_DIMS_BUF], si[TGC_KERNEL_DIMS_BUF];
    if (data->rank < 1 || ind->rank != data->rank)
        return tgc_kernel_fail(c, "%s: indices %s and data %s must have one rank >= 1", op,
                               tgc_kernel_dims_str(ind->rank, ind->dims, si),
                               tgc_kernel_dims_str(data->rank, data->dims, sd));
    tgc_status st = tgc_kernel_axis_attr(c, 0, data->rank, axis);
    if (st != TGC_OK) return st;
    for (int d = 0; d < data->rank; d++)
        if (d != *axis && ind->dims[d] > data->dims[d])
            return tgc_kernel_fail(c, "%s: indices %s are larger than data %s on axis %d", op,
                                   tgc_kernel_dims_str(ind->rank, ind->dims, si),
                                   tgc_kernel_dims_str(data->rank, data->dims, sd), d);
    const void *ip = tgc_kernel_in_ptr(c, 1);
    int64_t size = data->dims[*axis], n = tgc_value_numel(ind);
    for (int64_t k = 0; k < n; k++) {
        int64_t v = tgc_cpu_shape_int_at(ind->dtype, ip, k);
        if (v < -size || v >= size) return tgc_cpu_index_range_fail(c, v, k, *axis, data);
    }
    return TGC_OK;
}

/* ---- GatherElements --------------------------------------------------------------- */

/* GatherElements-13: out[i0..] = data[i0.., indices[i0..] on axis, ..];
 * out has the indices' shape (tgc_cpu_elements_args states the rules). */
tgc_status tgc_cpu_gather_elements(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    if (st == TGC_OK) st = tgc_cpu_need_indices(c, 1);
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1];
    int axis = 0;
    if (st == TGC_OK) st = tgc_cpu_elements_args(c, x, ind, &axis);
    if (st == TGC_OK) st = tgc_kernel_expect_dims(c, 0, ind->rank, ind->dims);
    if (st != TGC_OK) return st;
    int64_t n = tgc_value_numel(ind), strides[TGC_MAX_RANK], size = x->dims[axis];
    if (n == 0) return TGC_OK;
    tgc_cpu_row_major_strides(x->rank, x->dims, strides);
    int64_t step = strides[axis];
    strides[axis] = 0;
    tgc_cpu_odo o;
    tgc_cpu_odo_init(&o, ind->rank, ind->dims, strides);
    size_t es = tgc_dtype_size(x->dtype);
    const char *src = tgc_kernel_in_ptr(c, 0);
    const void *ip = tgc_kernel_in_ptr(c, 1);
    char *dst = tgc_kernel_out_ptr(c, 0);
    for (int64_t k = 0; k < n; k++, tgc_cpu_odo_next(&o)) {
        int64_t v = tgc_cpu_shape_int_at(ind->dtype, ip, k);
        if (v < 0) v += size;
        tgc_cpu_copy_elem(dst + (size_t)k * es, src + (size_t)(o.off + v * step) * es, es);
    }
    return TGC_OK;
}

/* ---- GatherND ------------------------------------------------------------------ */

tgc_status tgc_cpu_nd_args(tgc_kernel_ctx *c, const tgc_value *data, const tgc_value *ind, int b, tgc_cpu_nd *nd) {
    const char *op = tgc_kernel_op_name(c);
    char sd[TGC_KERNEL_DIMS_BUF], si[TGC_KERNEL_DIMS_BUF];
    int r = data->rank, q = ind->rank;
    if (r < 1 || q < 1 || b < 0 || b >= r || b >= q)
        return tgc_kernel_fail(c, "%s: data %s and indices %s need rank >= 1 and more than batch_dims %d", op,
                               tgc_kernel_dims_str(r, data->dims, sd), tgc_kernel_dims_str(q, ind->dims, si), b);
    int64_t m = ind->dims[q - 1];
    if (m < 1 || m > r - b)
        return tgc_kernel_fail(c, "%s: indices %s name %lld axes of data %s; it must be 1..%d", op,
                               tgc_kernel_dims_str(q, ind->dims, si), (long long)m,
                               tgc_kernel_dims_str(r, data->dims, sd), r - b);
    for (int d = 0; d < b; d++)
        if (ind->dims[d] != data->dims[d])
            return tgc_kernel_fail(c, "%s: the batch dims of indices %s and data %s differ", op,
                                   tgc_kernel_dims_str(q, ind->dims, si), tgc_kernel_dims_str(r, data->dims, sd));
    nd->m = (int)m;
    nd->batches = tgc_cpu_dims_product(data->dims, b);
    nd->tuples = tgc_cpu_dims_product(ind->dims + b, q - 1 - b);
    nd->slice = tgc_cpu_dims_product(data->dims + b + m, r - b - (int)m);
    nd->block = tgc_cpu_dims_product(data->dims + b, r - b);
    int64_t strides[TGC_MAX_RANK];
    tgc_cpu_row_major_strides(r, data->dims, strides);
    for (int j = 0; j < m; j++) nd->strides[j] = strides[b + j];
    const void *ip = tgc_kernel_in_ptr(c, 1);
    int64_t n = tgc_value_numel(ind);
    for (int64_t k = 0; k < n; k++) {
        int64_t v = tgc_cpu_shape_int_at(ind->dtype, ip, k);
        int axis = b + (int)(k % m);
        if (v < -data->dims[axis] || v >= data->dims[axis]) return tgc_cpu_index_range_fail(c, v, k, axis, data);
    }
    return TGC_OK;
}

int64_t tgc_cpu_nd_offset(const tgc_cpu_nd *nd, const tgc_value *data, int b, tgc_dtype it, const void *ip,
                          int64_t t) {
    int64_t off = 0;
    for (int j = 0; j < nd->m; j++) {
        int64_t v = tgc_cpu_shape_int_at(it, ip, t * nd->m + j);
        off += (v < 0 ? v + data->dims[b + j] : v) * nd->strides[j];
    }
    return off;
}

/* GatherND-13: for batch_dims b, each index tuple (the last axis of
 * indices, m values) picks the slice data[batch, i0, .., i(m-1), ...];
 * out = indices[:-1] + data[b + m:]. */
tgc_status tgc_cpu_gather_nd(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    if (st == TGC_OK) st = tgc_cpu_need_indices(c, 1);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1];
    int64_t b64 = tgc_kernel_attr_int(c, "batch_dims", 0);
    int b = b64 < 0 || b64 > TGC_MAX_RANK ? -1 : (int)b64;
    tgc_cpu_nd nd;
    if ((st = tgc_cpu_nd_args(c, x, ind, b, &nd)) != TGC_OK) return st;
    int64_t dims[TGC_MAX_RANK];
    int rank = 0;
    if (ind->rank - 1 + x->rank - b - nd.m > TGC_MAX_RANK)
        return tgc_kernel_fail(c, "GatherND: the result would have rank %d; tgc allows at most %d",
                               ind->rank - 1 + x->rank - b - nd.m, TGC_MAX_RANK);
    for (int d = 0; d < ind->rank - 1; d++) dims[rank++] = ind->dims[d];
    for (int d = b + nd.m; d < x->rank; d++) dims[rank++] = x->dims[d];
    if ((st = tgc_kernel_expect_dims(c, 0, rank, dims)) != TGC_OK) return st;
    size_t es = tgc_dtype_size(x->dtype), run = (size_t)nd.slice * es;
    if (run == 0) return TGC_OK;
    const char *src = tgc_kernel_in_ptr(c, 0);
    const void *ip = tgc_kernel_in_ptr(c, 1);
    char *dst = tgc_kernel_out_ptr(c, 0);
    for (int64_t bi = 0; bi < nd.batches; bi++)
        for (int64_t t = 0; t < nd.tuples; t++, dst += run) {
            int64_t off = bi * nd.block + tgc_cpu_nd_offset(&nd, x, b, ind->dtype, ip, bi * nd.tuples + t);
            memcpy(dst, src + (size_t)off * es, run);
        }
    return TGC_OK;
}
