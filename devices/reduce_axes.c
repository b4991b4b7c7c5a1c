/* Axis arguments of the reduction kernels (see reduce_axes.h): one copy of
 * the checks for the cpu and gpu, so that both fail with the same words. */
#include "devices/reduce_axes.h"

#include "support/checked.h"

tgc_status tgc_reduce_norm_axis(tgc_kernel_ctx *c, const char *op, const char *what, int64_t a, int rank, int *out) {
    if (a < -rank || a >= rank)
        return tgc_kernel_fail(c, "%s: %s %lld is out of range for rank %d (accepted: [%d, %d])", op, what,
                               (long long)a, rank, -rank, rank - 1);
    *out = (int)(a < 0 ? a + rank : a);
    return TGC_OK;
}

tgc_status tgc_reduce_axes_read(tgc_kernel_ctx *c, const char *op, const int64_t *axes, size_t n_axes, int rank,
                                const int64_t *dims, bool *reduced, int64_t *out, int *out_rank) {
    for (int d = 0; d < rank; d++) reduced[d] = n_axes == 0;
    for (size_t i = 0; i < n_axes; i++) {
        int a;
        tgc_status st = tgc_reduce_norm_axis(c, op, "axis", axes[i], rank, &a);
        if (st != TGC_OK) return st;
        if (reduced[a]) return tgc_kernel_fail(c, "%s: axis %d is listed twice", op, a);
        reduced[a] = true;
    }
    bool keepdims = tgc_kernel_attr_int(c, "keepdims", 1) != 0;
    int n = 0;
    for (int d = 0; d < rank; d++)
        if (!reduced[d] || keepdims) out[n++] = reduced[d] ? 1 : dims[d];
    *out_rank = n;
    return TGC_OK;
}

tgc_status tgc_reduce_argmax_read(tgc_kernel_ctx *c, const char *op, int rank, const int64_t *dims, int *axis,
                                  int64_t *outer, int64_t *n, int64_t *inner, bool *last) {
    const tgc_value *y = &c->outputs[0];
    if (y->dtype != TGC_INT64)
        return tgc_kernel_fail(c, "%s: output is %s, expected int64", op, tgc_dtype_name(y->dtype));
    if (rank == 0) return tgc_kernel_fail(c, "%s: the input is a scalar; it needs rank >= 1", op);
    int a;
    tgc_status st = tgc_reduce_norm_axis(c, op, "axis", tgc_kernel_attr_int(c, "axis", 0), rank, &a);
    if (st != TGC_OK) return st;
    bool keepdims = tgc_kernel_attr_int(c, "keepdims", 1) != 0;
    *last = tgc_kernel_attr_int(c, "select_last_point_index", 0) != 0;
    int64_t out[TGC_MAX_RANK], o = 1, i = 1;
    int out_rank = 0;
    for (int d = 0; d < rank; d++) {
        if ((d < a && !tgc_checked_mul_i64(o, dims[d], &o)) || (d > a && !tgc_checked_mul_i64(i, dims[d], &i)))
            return tgc_kernel_fail(c, "%s: the input's sizes do not fit in int64", op);
        if (d != a) out[out_rank++] = dims[d];
        else if (keepdims) out[out_rank++] = 1;
    }
    if ((st = tgc_kernel_expect_dims(c, 0, out_rank, out)) != TGC_OK) return st;
    if (o * i != 0 && dims[a] == 0)
        return tgc_kernel_fail(c, "%s: axis %d is empty: there is no element to pick", op, a);
    *axis = a;
    *outer = o;
    *n = dims[a];
    *inner = i;
    return TGC_OK;
}
