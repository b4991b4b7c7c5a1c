/* Dimensions and shapes: construction, comparison and numpy broadcasting.
 * Symbols are plain indices here; names live in the graph (graph.h). */
#include "graph/shape.h"

#include "support/checked.h"

#include <assert.h>
#include <stddef.h>

tgc_shape tgc_shape_of(int rank, const int64_t *dims) {
    assert(rank >= 0 && rank <= TGC_MAX_RANK);
    tgc_shape s = {.rank = rank};
    for (int i = 0; i < rank; i++) s.dims[i] = tgc_dim_of(dims[i]);
    return s;
}

bool tgc_shape_known(const tgc_shape *s) {
    if (s->rank < 0) return false;
    for (int i = 0; i < s->rank; i++)
        if (!tgc_dim_known(s->dims[i])) return false;
    return true;
}

int64_t tgc_shape_numel(const tgc_shape *s) {
    if (!tgc_shape_known(s)) return -1;
    int64_t dims[TGC_MAX_RANK], n;
    for (int i = 0; i < s->rank; i++) dims[i] = s->dims[i].v;
    return tgc_checked_numel(s->rank, dims, &n) ? n : -1;
}

double tgc_shape_numel_estimate(const tgc_shape *s) {
    if (s->rank == TGC_RANK_UNKNOWN) return 0;
    double n = 1;
    for (int i = 0; i < s->rank; i++) n *= tgc_dim_known(s->dims[i]) ? (double)s->dims[i].v : 1.0;
    return n;
}

bool tgc_shape_size_fits(const tgc_shape *s, size_t elem_size) {
    if (s->rank < 0) return true;
    int64_t dims[TGC_MAX_RANK];
    size_t bytes;
    for (int i = 0; i < s->rank; i++) dims[i] = tgc_dim_known(s->dims[i]) ? s->dims[i].v : 1;
    return tgc_checked_dims_nbytes(s->rank, dims, elem_size, &bytes);
}

bool tgc_shape_eq(const tgc_shape *a, const tgc_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (!tgc_dim_eq(a->dims[i], b->dims[i])) return false;
    return true;
}

bool tgc_shape_broadcast(const tgc_shape *a, const tgc_shape *b, tgc_shape *out, int *bad_axis,
                         tgc_dim (*fresh)(void *ctx), void *fresh_ctx) {
    if (a->rank < 0 || b->rank < 0) {
        out->rank = TGC_RANK_UNKNOWN;
        return true;
    }
    int rank = a->rank > b->rank ? a->rank : b->rank;
    tgc_shape r = {.rank = rank};
    for (int i = 0; i < rank; i++) {
        /* Align from the right; a missing leading axis acts as a concrete 1. */
        int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
        tgc_dim da = ia >= 0 ? a->dims[ia] : tgc_dim_of(1);
        tgc_dim db = ib >= 0 ? b->dims[ib] : tgc_dim_of(1);
        if (tgc_dim_eq(da, db) || tgc_dim_is(db, 1)) {
            r.dims[i] = da;
        } else if (tgc_dim_is(da, 1)) {
            r.dims[i] = db;
        } else if (tgc_dim_known(da) && tgc_dim_known(db)) {
            if (bad_axis != NULL) *bad_axis = i;
            return false;
        } else if (tgc_dim_known(da)) {
            r.dims[i] = da; /* the symbol must be 1 or da at run time */
        } else if (tgc_dim_known(db)) {
            r.dims[i] = db;
        } else {
            /* Two different symbols: either may be 1, so the result is neither. */
            if (fresh == NULL) {
                if (bad_axis != NULL) *bad_axis = i;
                return false;
            }
            r.dims[i] = fresh(fresh_ctx);
        }
    }
    *out = r;
    return true;
}

bool tgc_axis_normalize(int64_t axis, int rank, int *out) {
    if (rank < 0 || axis < -(int64_t)rank || axis >= rank) return false;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return true;
}
