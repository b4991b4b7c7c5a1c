/* The broadcasting iterator and tensor checks of the cpu elementwise and
 * reduction kernels; see broadcast.h. */
#include "devices/cpu/broadcast.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int tgc_cpu_bcast_init(tgc_cpu_bcast *it, int out_rank, const int64_t *out_dims, int n, const int *ranks,
                       const int64_t *const *dims) {
    memset(it, 0, sizeof *it);
    it->n = n;
    /* Strides over the full output rank, numpy's rules: right-aligned,
     * missing leading dims are 1, a dim of 1 against a larger one repeats. */
    int64_t st[TGC_CPU_BCAST_MAX][TGC_MAX_RANK];
    for (int k = 0; k < n; k++) {
        if (ranks[k] > out_rank || ranks[k] < 0) return k;
        int64_t s = 1;
        for (int d = out_rank - 1; d >= 0; d--) {
            int di = d - (out_rank - ranks[k]);
            int64_t in = di >= 0 ? dims[k][di] : 1;
            if (in != out_dims[d] && in != 1) return k;
            st[k][d] = in == 1 ? 0 : s;
            s *= in;
        }
    }
    /* Collapse: drop output axes of 1; merge an axis into the group before
     * it when every operand is broadcast along both or steps contiguously
     * from one into the other. */
    int r = 0;
    for (int d = 0; d < out_rank; d++) {
        if (out_dims[d] == 1) continue;
        bool merge = r > 0;
        for (int k = 0; merge && k < n; k++) {
            int64_t g = it->strides[k][r - 1];
            merge = (g == 0 && st[k][d] == 0) || (g != 0 && st[k][d] != 0 && g == st[k][d] * out_dims[d]);
        }
        if (merge) {
            it->dims[r - 1] *= out_dims[d];
            for (int k = 0; k < n; k++) it->strides[k][r - 1] = st[k][d];
        } else {
            it->dims[r] = out_dims[d];
            for (int k = 0; k < n; k++) it->strides[k][r] = st[k][d];
            r++;
        }
    }
    if (r == 0) { /* a scalar, or every dim 1: one row of one element */
        it->dims[0] = 1;
        r = 1;
    }
    it->rank = r;
    it->inner = it->dims[r - 1];
    it->rows = 1;
    for (int d = 0; d < r - 1; d++) it->rows *= it->dims[d];
    for (int k = 0; k < n; k++) it->step[k] = it->strides[k][r - 1];
    return -1;
}

void tgc_cpu_bcast_seek(tgc_cpu_bcast *it, int64_t row) {
    for (int k = 0; k < it->n; k++) it->off[k] = 0;
    for (int d = it->rank - 2; d >= 0; d--) {
        it->idx[d] = row % it->dims[d];
        row /= it->dims[d];
        for (int k = 0; k < it->n; k++) it->off[k] += it->idx[d] * it->strides[k][d];
    }
}

tgc_status tgc_cpu_bcast_values(tgc_kernel_ctx *c, tgc_cpu_bcast *it, const tgc_value *out, int n,
                                const tgc_value *const *ops) {
    int ranks[TGC_CPU_BCAST_MAX];
    const int64_t *dims[TGC_CPU_BCAST_MAX];
    for (int k = 0; k < n; k++) {
        ranks[k] = ops[k]->rank;
        dims[k] = ops[k]->dims;
    }
    int bad = tgc_cpu_bcast_init(it, out->rank, out->dims, n, ranks, dims);
    if (bad < 0) return TGC_OK;
    char a[TGC_KERNEL_DIMS_BUF], b[TGC_KERNEL_DIMS_BUF];
    return tgc_kernel_fail(c, "%s: operand %d of shape %s does not broadcast to the output shape %s",
                           c->node->op_name ? c->node->op_name : c->node->name, bad,
                           tgc_kernel_dims_str(ops[bad]->rank, ops[bad]->dims, a),
                           tgc_kernel_dims_str(out->rank, out->dims, b));
}

bool tgc_cpu_ew_overlap(const tgc_value *a, const tgc_value *b) {
    size_t na = tgc_value_nbytes(a), nb = tgc_value_nbytes(b);
    if (na == 0 || nb == 0) return false;
    uintptr_t pa = (uintptr_t)tgc_buffer_host_ptr(a->buf), pb = (uintptr_t)tgc_buffer_host_ptr(b->buf);
    return pa < pb + nb && pb < pa + na;
}

