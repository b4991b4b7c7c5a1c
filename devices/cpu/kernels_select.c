/* CPU kernels that select elements (ONNX opset 17): TopK (sizes from its
 * host-memory k), NonZero and Compress (sizes from the values: they call
 * tgc_kernel_alloc_output, tgc_kernel_def.sizes_outputs). */
#include "devices/cpu/elem_types.h"
#include "devices/cpu/index_sort.h"
#include "devices/cpu/kernels_indexing.h"
#include "devices/cpu/kernels_shape.h"

#include "support/alloc.h"

#include <string.h>

/* ---- TopK --------------------------------------------------------------------- */

/* One lane of TopK: elements base + i * stride (i < n) of data. */
typedef struct lane {
    tgc_cpu_elem_cmp_fn cmp;
    const void *data;
    int64_t base, stride;
    bool largest;
} lane;

/* Orders lane positions: larger first when `largest` (NaN counts as the
 * largest, numpy's order); equal elements keep their order (the merge
 * sort is stable), so the lower index comes first. */
static int lane_cmp(const void *ctx, int64_t a, int64_t b) {
    const lane *l = ctx;
    int r = l->cmp(l->data, l->base + a * l->stride, l->base + b * l->stride);
    return l->largest ? -r : r;
}

/* TopK-11: along `axis` (default -1) of X, the k (input 1, host int64,
 * 0 <= k <= the axis size) largest (largest 1, default) or smallest
 * elements: Values (X's dtype) and Indices (int64, positions along the
 * axis), each with the axis of size k, in order (sorted or not, tgc always
 * sorts); ties: the lower index first. */
tgc_status tgc_cpu_top_k(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cpu_shape_check_moves(c, 2);
    int64_t kv[1];
    int nk = 0;
    if (st == TGC_OK) st = tgc_kernel_check_host(c, 2, 2);
    if (st == TGC_OK) st = tgc_kernel_read_ints(c, 1, "K", kv, 1, &nk);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    int axis = 0;
    if (nk != 1) return tgc_kernel_fail(c, "TopK: input 1 (K) must hold one value");
    if (x->rank < 1) return tgc_kernel_fail(c, "TopK: input 0 is a scalar; it needs rank >= 1");
    if ((st = tgc_kernel_axis_attr(c, -1, x->rank, &axis)) != TGC_OK) return st;
    int64_t k = kv[0], n = x->dims[axis];
    if (k < 0 || k > n)
        return tgc_kernel_fail(c, "TopK: K is %lld; axis %d has %lld elements", (long long)k, axis, (long long)n);
    int64_t dims[TGC_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = k;
    if ((st = tgc_kernel_expect_dims(c, 0, x->rank, dims)) == TGC_OK) st = tgc_kernel_expect_dims(c, 1, x->rank, dims);
    if (st != TGC_OK) return st;
    if (c->outputs[1].dtype != TGC_INT64) return tgc_kernel_fail(c, "TopK: output 1 (Indices) must be int64");
    lane l = {.cmp = tgc_cpu_elem_cmp(x->dtype), .data = tgc_kernel_in_ptr(c, 0),
              .largest = tgc_kernel_attr_int(c, "largest", 1) != 0};
    if (l.cmp == NULL) return tgc_kernel_fail(c, "TopK: input 0 is %s; no order for it", tgc_dtype_name(x->dtype));
    int64_t outer = tgc_cpu_dims_product(x->dims, axis);
    int64_t inner = tgc_cpu_dims_product(x->dims + axis + 1, x->rank - axis - 1);
    if (k == 0 || outer == 0 || inner == 0) return TGC_OK;
    int64_t *pos = tgc_malloc(2 * (size_t)n * sizeof *pos);
    if (pos == NULL) return tgc_kernel_fail(c, "TopK: no host memory to sort %lld elements", (long long)n);
    size_t es = tgc_dtype_size(x->dtype);
    const char *src = l.data;
    char *vals = tgc_kernel_out_ptr(c, 0);
    int64_t *idx = tgc_kernel_out_ptr(c, 1);
    l.stride = inner;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            l.base = o * n * inner + i;
            for (int64_t j = 0; j < n; j++) pos[j] = j;
            tgc_cpu_sort_positions(pos, pos + n, n, lane_cmp, &l);
            for (int64_t j = 0; j < k; j++) {
                int64_t at = (o * k + j) * inner + i;
                idx[at] = pos[j];
                tgc_cpu_copy_elem(vals + (size_t)at * es, src + (size_t)(l.base + pos[j] * inner) * es, es);
            }
        }
    tgc_free(pos);
    return TGC_OK;
}

/* ---- NonZero ---------------------------------------------------------------- */

/* NonZero-13: the coordinates of the non-zero elements of X (any dtype;
 * -0.0 is zero, NaN is not) in row-major order: int64 [max(r, 1), n],
 * row d holding the coordinates on axis d (a scalar reads as [1]). */
tgc_status tgc_cpu_nonzero(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    if (!tgc_cpu_dtype_listed(x->dtype))
        return tgc_kernel_fail(c, "NonZero: input 0 is %s; no zero test for it", tgc_dtype_name(x->dtype));
    int64_t total = tgc_value_numel(x), count = 0;
    const void *p = tgc_kernel_in_ptr(c, 0);
    for (int64_t i = 0; i < total; i++) count += tgc_cpu_elem_nonzero(x->dtype, p, i);
    int r = x->rank > 0 ? x->rank : 1;
    int64_t dims[2] = {r, count};
    if ((st = tgc_kernel_alloc_output(c, 0, 2, dims)) != TGC_OK) return st;
    int64_t *out = tgc_kernel_out_ptr(c, 0), idx[TGC_MAX_RANK] = {0}, j = 0;
    for (int64_t i = 0; i < total && j < count; i++) {
        if (tgc_cpu_elem_nonzero(x->dtype, p, i)) {
            for (int d = 0; d < r; d++) out[d * count + j] = idx[d];
            j++;
        }
        for (int d = x->rank - 1; d >= 0; d--) { /* the next coordinates, row-major */
            if (++idx[d] < x->dims[d]) break;
            idx[d] = 0;
        }
    }
    return TGC_OK;
}

/* ---- Compress ----------------------------------------------------------------- */

/* Compress-11: keeps the slices along `axis` (or, without it, the
 * elements of the flattened input) whose bool condition (input 1, 1-D) is
 * true; a condition shorter than the axis drops the rest, a longer one is
 * an error. */
tgc_status tgc_cpu_compress(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 2, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0], *cond = &c->inputs[1];
    if (cond->dtype != TGC_BOOL || cond->rank != 1)
        return tgc_kernel_fail(c, "Compress: input 1 (condition) must be a 1-D bool tensor");
    if (c->outputs[0].dtype != x->dtype) return tgc_kernel_fail(c, "Compress: output 0 must have input 0's dtype");
    bool has_axis = tgc_node_attr(c->node, "axis") != NULL;
    int axis = 0;
    int64_t outer = 1, size = tgc_value_numel(x), inner = 1;
    if (has_axis) {
        if (x->rank < 1) return tgc_kernel_fail(c, "Compress: input 0 is a scalar; an axis needs rank >= 1");
        if ((st = tgc_kernel_axis_attr(c, 0, x->rank, &axis)) != TGC_OK) return st;
        outer = tgc_cpu_dims_product(x->dims, axis);
        size = x->dims[axis];
        inner = tgc_cpu_dims_product(x->dims + axis + 1, x->rank - axis - 1);
    }
    int64_t len = cond->dims[0], kept = 0;
    if (len > size)
        return tgc_kernel_fail(c, "Compress: the condition has %lld elements but the %s has %lld", (long long)len,
                               has_axis ? "axis" : "input", (long long)size);
    const uint8_t *keep = tgc_kernel_in_ptr(c, 1);
    for (int64_t i = 0; i < len; i++) kept += keep[i] != 0;
    int64_t dims[TGC_MAX_RANK] = {kept};
    int rank = 1;
    if (has_axis) {
        memcpy(dims, x->dims, sizeof dims);
        dims[axis] = kept;
        rank = x->rank;
    }
    if ((st = tgc_kernel_alloc_output(c, 0, rank, dims)) != TGC_OK) return st;
    size_t run = (size_t)inner * tgc_dtype_size(x->dtype);
    const char *src = tgc_kernel_in_ptr(c, 0);
    char *dst = tgc_kernel_out_ptr(c, 0);
    if (run == 0 || kept == 0) return TGC_OK;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < len; i++)
            if (keep[i]) {
                memcpy(dst, src + (size_t)(o * size + i) * run, run);
                dst += run;
            }
    return TGC_OK;
}
