/* The strided views of Transpose, Slice and Expand (see strided_view.h),
 * one copy for the cpu and gpu kernels. */
#include "devices/strided_view.h"

#include "support/checked.h"

#include <stdbool.h>

void tgc_view_contiguous_strides(int rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        /* Fits for every tensor that passed inference (tgc_checked_numel). */
        if (!tgc_checked_mul_i64(s, dims[i], &s)) s = 0;
    }
}

tgc_status tgc_view_transpose(tgc_kernel_ctx *c, const tgc_value *x, int64_t *dims, int64_t *strides) {
    int r = x->rank;
    size_t np;
    const int64_t *perm_attr = tgc_kernel_attr_ints(c, "perm", &np);
    bool has = tgc_node_attr(c->node, "perm") != NULL, seen[TGC_MAX_RANK] = {false};
    if (has && np != (size_t)r)
        return tgc_kernel_fail(c, "Transpose: attribute 'perm' has %zu entries for an input of rank %d", np, r);
    int64_t in_strides[TGC_MAX_RANK];
    tgc_view_contiguous_strides(r, x->dims, in_strides);
    for (int i = 0; i < r; i++) {
        int64_t p = has ? perm_attr[i] : r - 1 - i;
        if (p < 0 || p >= r || seen[p])
            return tgc_kernel_fail(c, "Transpose: attribute 'perm' is not a permutation of 0..%d", r - 1);
        seen[p] = true;
        dims[i] = x->dims[p];
        strides[i] = in_strides[p];
    }
    return TGC_OK;
}

/* Slice-13 on one axis of size d: negative start/end count from the back
 * (+ d); then for step > 0 both clamp to [0, d], for step < 0 start clamps
 * to [0, d-1] and end to [-1, d-1]. The length is
 * max(0, ceil((end - start) / step)), taken in unsigned arithmetic so that
 * any int64 step (INT64_MIN included) is safe. An empty axis gives 0 (as
 * numpy's x[::-1]), though the clamps alone would leave start 0, end -1.
 * With a negative step, a start before the axis clamps to 0 and takes
 * element 0: the spec's rule and onnxruntime's; numpy slicing (and so the
 * ONNX reference implementation) would take nothing there. */
static int64_t slice_axis(int64_t d, int64_t step, int64_t *start_io, int64_t end) {
    int64_t start = *start_io;
    if (d == 0) return 0; /* [0, d-1] is empty: nothing to take, in either direction */
    if (start < 0) start += d;
    if (end < 0) end += d;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
    start = start < 0 ? 0 : start > hi ? hi : start;
    end = end < lo ? lo : end > hi ? hi : end;
    *start_io = start;
    uint64_t ustep = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    int64_t span = step > 0 ? end - start : start - end;
    return span > 0 ? (int64_t)(((uint64_t)span - 1) / ustep + 1) : 0;
}

tgc_status tgc_view_slice(tgc_kernel_ctx *c, const tgc_value *x, int k, const int64_t *starts, const int64_t *ends,
                          const int64_t *axes, const int64_t *steps, int64_t *dims, int64_t *strides,
                          int64_t *offset) {
    int r = x->rank;
    bool seen[TGC_MAX_RANK] = {false};
    int64_t off = 0;
    tgc_view_contiguous_strides(r, x->dims, strides);
    for (int i = 0; i < r; i++) dims[i] = x->dims[i];
    for (int i = 0; i < k; i++) {
        int64_t a = axes != NULL ? axes[i] : i, step = steps != NULL ? steps[i] : 1, start = starts[i];
        if (a < -r || a >= r)
            return tgc_kernel_fail(c, "Slice: axis %lld is out of range [%d, %d)", (long long)a, -r, r);
        if (a < 0) a += r;
        if (seen[a]) return tgc_kernel_fail(c, "Slice: axis %lld is listed twice", (long long)a);
        seen[a] = true;
        if (step == 0) return tgc_kernel_fail(c, "Slice: steps has 0 at index %d; steps must not be 0", i);
        dims[a] = slice_axis(x->dims[a], step, &start, ends[i]);
        if (dims[a] > 0) off += start * strides[a];
        if (dims[a] > 1) strides[a] *= step; /* else |step| may be huge, and unused */
    }
    *offset = off;
    return TGC_OK;
}

tgc_status tgc_view_expand(tgc_kernel_ctx *c, const tgc_value *x, const int64_t *target, int n, int *rank,
                           int64_t *dims, int64_t *strides) {
    int r = x->rank, ro = r > n ? r : n;
    int64_t in_strides[TGC_MAX_RANK];
    tgc_view_contiguous_strides(r, x->dims, in_strides);
    for (int j = 0; j < ro; j++) {
        int i = j - (ro - r), t = j - (ro - n);
        int64_t a = i >= 0 ? x->dims[i] : 1, b = t >= 0 ? target[t] : 1;
        if (b < 0 || (a != b && a != 1 && b != 1)) {
            char sx[TGC_KERNEL_DIMS_BUF], sn[TGC_KERNEL_DIMS_BUF];
            return tgc_kernel_fail(c, "Expand: cannot broadcast %s to %s", tgc_kernel_dims_str(r, x->dims, sx),
                                   tgc_kernel_dims_str(n, target, sn));
        }
        dims[j] = a == 1 ? b : a;
        strides[j] = i < 0 || a == 1 ? 0 : in_strides[i];
    }
    *rank = ro;
    return TGC_OK;
}
