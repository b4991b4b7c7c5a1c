/* CPU kernels that write updates at places chosen by index tensors (ONNX
 * opset 18 forms, which include 16's and 13's): ScatterElements and
 * ScatterND. Output 0 starts as a copy of data; each update is then stored
 * or, with attribute `reduction` add / mul / max / min, combined with what
 * is there, in the order of the indices (so duplicate indices accumulate;
 * with reduction none the last one wins, which ONNX leaves undefined).
 * max and min propagate NaN (numpy's maximum / minimum, which ONNX's
 * reference uses). Every index is checked before anything is written. */
#include "devices/cpu/elem_types.h"
#include "devices/cpu/kernels_indexing.h"
#include "devices/cpu/kernels_shape.h"
#include "devices/cpu/odometer.h"

#include <string.h>

enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static tgc_status reduction_of(tgc_kernel_ctx *c, enum reduction *red) {
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *r = tgc_kernel_attr_string(c, "reduction", "none");
    for (int i = 0; i < 5; i++)
        if (strcmp(r, names[i]) == 0) {
            *red = (enum reduction)i;
            return TGC_OK;
        }
    return tgc_kernel_fail(c, "%s: attribute 'reduction' is '%s'; it must be none, add, mul, max or min",
                           tgc_kernel_op_name(c), r);
}

/* combine_<tag>(dst, src, n, red): dst[i] = red(dst[i], src[i]) for n elements. */
#define COMBINE(dt, ST, CT, tag)                                                                                       \
    static void combine_##tag(ST *dst, const ST *src, int64_t n, enum reduction red) {                                 \
        for (int64_t i = 0; i < n; i++) {                                                                              \
            CT a = tgc_cpu_ld_##tag(dst[i]), b = tgc_cpu_ld_##tag(src[i]), v;                                          \
            switch (red) {                                                                                             \
            case RED_ADD: v = tgc_cpu_add_##tag(a, b); break;                                                          \
            case RED_MUL: v = tgc_cpu_mul_##tag(a, b); break;                                                          \
            case RED_MAX: v = (a > b || tgc_cpu_isnan_##tag(a)) ? a : b; break;                                        \
            case RED_MIN: v = (a < b || tgc_cpu_isnan_##tag(a)) ? a : b; break;                                        \
            default: v = b;                                                                                            \
            }                                                                                                          \
            dst[i] = tgc_cpu_st_##tag(v);                                                                              \
        }                                                                                                              \
    }
TGC_CPU_ALL_TYPES(COMBINE)
#undef COMBINE

/* Combines n elements of dtype t from src into dst (reduction none: a copy
 * of esize bytes each, any dtype). False for a reduction on a dtype not
 * listed in elem_types.h. */
static bool combine(tgc_dtype t, void *dst, const void *src, int64_t n, enum reduction red) {
    if (red == RED_NONE) {
        memcpy(dst, src, (size_t)n * tgc_dtype_size(t));
        return true;
    }
    switch (t) {
#define CASE(dt, ST, CT, tag)                                                                                          \
    case dt: combine_##tag(dst, src, n, red); return true;
        TGC_CPU_ALL_TYPES(CASE)
#undef CASE
    default: return false;
    }
}

/* The checks both scatters share: data, indices and updates in host
 * memory, output 0 and updates of data's dtype, output 0 of data's dims. */
static tgc_status scatter_common(tgc_kernel_ctx *c, enum reduction *red) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 3);
    if (st == TGC_OK) st = tgc_cpu_need_indices(c, 1);
    if (st == TGC_OK) st = reduction_of(c, red);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *u = &c->inputs[2];
    if (u->dtype != x->dtype)
        return tgc_kernel_fail(c, "%s: updates are %s but data is %s", tgc_kernel_op_name(c), tgc_dtype_name(u->dtype),
                               tgc_dtype_name(x->dtype));
    return tgc_kernel_expect_dims(c, 0, x->rank, x->dims);
}

static tgc_status updates_dims_fail(tgc_kernel_ctx *c, int rank, const int64_t *dims) {
    char su[TGC_KERNEL_DIMS_BUF], sw[TGC_KERNEL_DIMS_BUF];
    const tgc_value *u = &c->inputs[2];
    return tgc_kernel_fail(c, "%s: updates have shape %s; they must have shape %s", tgc_kernel_op_name(c),
                           tgc_kernel_dims_str(u->rank, u->dims, su), tgc_kernel_dims_str(rank, dims, sw));
}

/* ScatterElements-18: out = data; then for each element position p of
 * indices, out[p with axis replaced by indices[p]] (op)= updates[p]. */
tgc_status tgc_cpu_scatter_elements(tgc_kernel_ctx *c) {
    enum reduction red;
    tgc_status st = scatter_common(c, &red);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1], *u = &c->inputs[2];
    int axis = 0;
    if ((st = tgc_cpu_elements_args(c, x, ind, &axis)) != TGC_OK) return st;
    if (u->rank != ind->rank || memcmp(u->dims, ind->dims, sizeof(int64_t) * (size_t)ind->rank) != 0)
        return updates_dims_fail(c, ind->rank, ind->dims);
    size_t es = tgc_dtype_size(x->dtype);
    char *dst = tgc_kernel_out_ptr(c, 0);
    tgc_cpu_copy_bytes(dst, tgc_kernel_in_ptr(c, 0), tgc_value_nbytes(x));
    int64_t n = tgc_value_numel(ind), strides[TGC_MAX_RANK], size = x->dims[axis];
    if (n == 0) return TGC_OK;
    tgc_cpu_row_major_strides(x->rank, x->dims, strides);
    int64_t step = strides[axis];
    strides[axis] = 0;
    tgc_cpu_odo o;
    tgc_cpu_odo_init(&o, ind->rank, ind->dims, strides);
    const void *ip = tgc_kernel_in_ptr(c, 1);
    const char *src = tgc_kernel_in_ptr(c, 2);
    for (int64_t k = 0; k < n; k++, tgc_cpu_odo_next(&o)) {
        int64_t v = tgc_cpu_shape_int_at(ind->dtype, ip, k);
        if (v < 0) v += size;
        if (!combine(x->dtype, dst + (size_t)(o.off + v * step) * es, src + (size_t)k * es, 1, red))
            return tgc_kernel_fail(c, "ScatterElements: no reduction for %s", tgc_dtype_name(x->dtype));
    }
    return TGC_OK;
}

/* ScatterND-18: out = data; then for each index tuple t (the last axis of
 * indices, m values), the slice out[t0, .., t(m-1), ...] (op)= updates[t],
 * updates of shape indices[:-1] + data[m:]. */
tgc_status tgc_cpu_scatter_nd(tgc_kernel_ctx *c) {
    enum reduction red;
    tgc_status st = scatter_common(c, &red);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *ind = &c->inputs[1], *u = &c->inputs[2];
    tgc_cpu_nd nd;
    if ((st = tgc_cpu_nd_args(c, x, ind, 0, &nd)) != TGC_OK) return st;
    int64_t dims[2 * TGC_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < ind->rank - 1; d++) dims[rank++] = ind->dims[d];
    for (int d = nd.m; d < x->rank; d++) dims[rank++] = x->dims[d];
    if (rank > TGC_MAX_RANK || u->rank != rank || memcmp(u->dims, dims, sizeof(int64_t) * (size_t)rank) != 0)
        return updates_dims_fail(c, rank > TGC_MAX_RANK ? TGC_MAX_RANK : rank, dims);
    size_t es = tgc_dtype_size(x->dtype);
    char *dst = tgc_kernel_out_ptr(c, 0);
    tgc_cpu_copy_bytes(dst, tgc_kernel_in_ptr(c, 0), tgc_value_nbytes(x));
    if (nd.slice == 0) return TGC_OK;
    const void *ip = tgc_kernel_in_ptr(c, 1);
    const char *src = tgc_kernel_in_ptr(c, 2);
    for (int64_t t = 0; t < nd.tuples; t++) {
        int64_t off = tgc_cpu_nd_offset(&nd, x, 0, ind->dtype, ip, t);
        if (!combine(x->dtype, dst + (size_t)off * es, src + (size_t)(t * nd.slice) * es, nd.slice, red))
            return tgc_kernel_fail(c, "ScatterND: no reduction for %s", tgc_dtype_name(x->dtype));
    }
    return TGC_OK;
}
