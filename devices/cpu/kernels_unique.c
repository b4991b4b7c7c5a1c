/* Unique-11 on the cpu: the distinct elements of X (or, with `axis`, the
 * distinct slices along it, compared element by element in row-major
 * order, numpy.unique(axis=) semantics) and where they are. The positions
 * are sorted stably (index_sort.h), equal neighbours form one group whose
 * first position is the first occurrence; with sorted 0 the groups are
 * put in order of first occurrence instead (ONNX's reference). The kernel
 * sizes its four outputs (tgc_kernel_alloc_output). */
#include "devices/cpu/index_sort.h"
#include "devices/cpu/kernels_indexing.h"
#include "devices/cpu/kernels_shape.h"

#include "support/alloc.h"

#include <string.h>

/* X seen as [outer, size, inner]: the `size` slices compared. */
typedef struct slices {
    tgc_cpu_elem_cmp_fn cmp;
    const void *data;
    int64_t outer, size, inner;
} slices;

static int slice_cmp(const void *ctx, int64_t a, int64_t b) {
    const slices *s = ctx;
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t i = 0; i < s->inner; i++) {
            int r = s->cmp(s->data, (o * s->size + a) * s->inner + i, (o * s->size + b) * s->inner + i);
            if (r != 0) return r;
        }
    return 0;
}

static int first_cmp(const void *ctx, int64_t a, int64_t b) {
    const int64_t *first = ctx;
    return first[a] < first[b] ? -1 : first[a] > first[b];
}

/* Unique-11: outputs Y (X's dtype; [u], or X's shape with the axis of size
 * u), indices (int64 [u]: the first occurrence of each), inverse_indices
 * (int64 [n]: the group of each element or slice), counts (int64 [u]);
 * the node may have only the first 1-3 of them. */
tgc_status tgc_cpu_unique(tgc_kernel_ctx *c) {
    tgc_status st = tgc_kernel_check_host(c, 1, 0);
    if (st != TGC_OK) return st;
    const tgc_value *x = &c->inputs[0];
    slices s = {.cmp = tgc_cpu_elem_cmp(x->dtype),
                .data = tgc_kernel_in_ptr(c, 0),
                .outer = 1,
                .size = tgc_value_numel(x),
                .inner = 1};
    if (s.cmp == NULL) return tgc_kernel_fail(c, "Unique: input 0 is %s; no order for it", tgc_dtype_name(x->dtype));
    bool has_axis = tgc_node_attr(c->node, "axis") != NULL, sorted = tgc_kernel_attr_int(c, "sorted", 1) != 0;
    int axis = 0;
    if (has_axis) {
        if (x->rank < 1) return tgc_kernel_fail(c, "Unique: input 0 is a scalar; an axis needs rank >= 1");
        if ((st = tgc_kernel_axis_attr(c, 0, x->rank, &axis)) != TGC_OK) return st;
        s.outer = tgc_cpu_dims_product(x->dims, axis);
        s.size = x->dims[axis];
        s.inner = tgc_cpu_dims_product(x->dims + axis + 1, x->rank - axis - 1);
    }
    int64_t n = s.size;
    /* pos, tmp, group_of, first, counts, order: n each */
    int64_t *mem = tgc_malloc(6 * ((size_t)n + 1) * sizeof *mem);
    if (mem == NULL) return tgc_kernel_fail(c, "Unique: no host memory to sort %lld elements", (long long)n);
    int64_t *pos = mem, *tmp = pos + n + 1, *group_of = tmp + n + 1, *first = group_of + n + 1;
    int64_t *counts = first + n + 1, *order = counts + n + 1, u = 0;
    for (int64_t i = 0; i < n; i++) pos[i] = i;
    tgc_cpu_sort_positions(pos, tmp, n, slice_cmp, &s);
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || slice_cmp(&s, pos[i - 1], pos[i]) != 0) {
            first[u] = pos[i];
            counts[u++] = 0;
        }
        group_of[pos[i]] = u - 1;
        counts[u - 1]++;
    }
    for (int64_t g = 0; g < u; g++) order[g] = g;
    if (!sorted) tgc_cpu_sort_positions(order, tmp, u, first_cmp, first);
    int64_t *rank_of = tmp; /* the output position of each group */
    for (int64_t j = 0; j < u; j++) rank_of[order[j]] = j;
    int64_t ydims[TGC_MAX_RANK] = {u}, udims[1] = {u}, ndims[1] = {n};
    if (has_axis) {
        memcpy(ydims, x->dims, sizeof ydims);
        ydims[axis] = u;
    }
    st = tgc_kernel_alloc_output(c, 0, has_axis ? x->rank : 1, ydims);
    for (int i = 1; st == TGC_OK && i < c->n_outputs && i < 4; i++)
        st = tgc_kernel_alloc_output(c, i, 1, i == 2 ? ndims : udims);
    if (st != TGC_OK) {
        tgc_free(mem);
        return st;
    }
    size_t run = (size_t)s.inner * tgc_dtype_size(x->dtype);
    const char *src = s.data;
    char *y = tgc_kernel_out_ptr(c, 0);
    for (int64_t o = 0; run > 0 && o < s.outer; o++)
        for (int64_t j = 0; j < u; j++)
            memcpy(y + (size_t)(o * u + j) * run, src + (size_t)(o * n + first[order[j]]) * run, run);
    int64_t *out_idx = c->n_outputs > 1 ? tgc_kernel_out_ptr(c, 1) : NULL;
    int64_t *out_inv = c->n_outputs > 2 ? tgc_kernel_out_ptr(c, 2) : NULL;
    int64_t *out_cnt = c->n_outputs > 3 ? tgc_kernel_out_ptr(c, 3) : NULL;
    for (int64_t j = 0; j < u; j++) {
        if (out_idx) out_idx[j] = first[order[j]];
        if (out_cnt) out_cnt[j] = counts[order[j]];
    }
    for (int64_t i = 0; out_inv && i < n; i++) out_inv[i] = rank_of[group_of[i]];
    tgc_free(mem);
    return TGC_OK;
}
