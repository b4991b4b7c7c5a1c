/* Helpers shared by the op families' inference functions (see ops.h):
 * dtype classes, broadcasting with messages, symbolic products, axes and
 * compile-time values. */
#include "graph/ops.h"
#include "support/checked.h"

#include <stdio.h>
#include <string.h>

bool tgc_ops_require_dtypes(tgc_infer_ctx *c, int i, unsigned mask) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || (in->dtype >= 0 && in->dtype < TGC_DTYPE_COUNT && (mask & TGC_DT(in->dtype))))
        return true;
    char list[128] = "";
    size_t len = 0;
    for (int t = 0; t < TGC_DTYPE_COUNT; t++) {
        if (!(mask & TGC_DT(t))) continue;
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                tgc_dtype_name((tgc_dtype)t));
        if (len >= sizeof list) break;
    }
    tgc_infer_fail(c, i, "dtype-mismatch", "input %d is %s; %s needs %s%s", i,
                   tgc_dtype_name(in->dtype), c->node->op->name,
                   strchr(list, ',') ? "one of " : "", list);
    return false;
}

tgc_status tgc_ops_broadcast(tgc_infer_ctx *c, int ia, int ib, const tgc_shape *a,
                             const tgc_shape *b, tgc_shape *out) {
    int bad = 0;
    if (tgc_shape_broadcast(a, b, out, &bad, tgc_infer_fresh_dim_cb, c)) return TGC_OK;
    char sa[TGC_OPS_SHAPE_BUF], sb[TGC_OPS_SHAPE_BUF];
    int rank = a->rank > b->rank ? a->rank : b->rank;
    long long da = (long long)a->dims[bad - (rank - a->rank)].v;
    long long db = (long long)b->dims[bad - (rank - b->rank)].v;
    tgc_infer_shape_str(c, a, sa, sizeof sa);
    tgc_infer_shape_str(c, b, sb, sizeof sb);
    if (ia < 0)
        return tgc_infer_fail(c, ib, "shape-mismatch",
                              "input %d has shape %s, which does not broadcast with %s, the "
                              "broadcast of the inputs before it (%lld vs %lld at output axis %d)",
                              ib, sb, sa, db, da, bad);
    return tgc_infer_fail(c, ib, "shape-mismatch",
                          "input %d has shape %s and input %d has shape %s, which do not "
                          "broadcast (%lld vs %lld at output axis %d)",
                          ia, sa, ib, sb, da, db, bad);
}

tgc_dim tgc_ops_dims_product(tgc_infer_ctx *c, const tgc_dim *dims, int n) {
    int64_t prod = 1;
    int n_sym = 0;
    tgc_dim sym = tgc_dim_of(1);
    for (int i = 0; i < n; i++) {
        if (tgc_dim_known(dims[i])) {
            int64_t d = dims[i].v;
            if (d == 0) return tgc_dim_of(0); /* zero elements, whatever the symbols */
            if (d < 0 || !tgc_checked_mul_i64(prod, d, &prod)) return tgc_infer_fresh_dim(c);
        } else {
            n_sym++;
            sym = dims[i];
        }
    }
    if (n_sym == 0) return tgc_dim_of(prod);
    if (n_sym == 1 && prod == 1) return sym;
    return tgc_infer_fresh_dim(c);
}

bool tgc_ops_dim_merge(tgc_dim a, tgc_dim b, tgc_dim *out) {
    if (tgc_dim_known(a) && tgc_dim_known(b) && a.v != b.v) return false;
    *out = tgc_dim_known(a) ? a : b;
    return true;
}

tgc_status tgc_ops_axis_attr(tgc_infer_ctx *c, const char *name, int64_t dflt, int rank, int extra,
                             int *axis) {
    int64_t a = tgc_infer_attr_int(c, name, dflt);
    int64_t hi = (int64_t)rank + extra;
    if (a < -(int64_t)rank || a >= hi)
        return tgc_infer_fail(c, -1, "bad-attribute",
                              "attribute '%s' is %lld, out of range [%d, %lld] for input rank %d",
                              name, (long long)a, -rank, (long long)hi - 1, rank);
    *axis = (int)(a < 0 ? a + rank : a);
    return TGC_OK;
}

bool tgc_ops_input_value(const tgc_infer_ctx *c, int i, const tgc_dim **v, int *n) {
    const tgc_tensor_info *in = tgc_infer_input(c, i);
    if (in == NULL || in->value_len < 0) {
        *v = NULL;
        *n = -1;
        return false;
    }
    *v = in->value;
    *n = in->value_len;
    return true;
}

tgc_status tgc_ops_pass_value(tgc_infer_ctx *c, int in, int out) {
    const tgc_dim *v;
    int n;
    if (!tgc_ops_input_value(c, in, &v, &n)) return TGC_OK;
    return tgc_infer_set_value(c, out, n, v);
}

tgc_status tgc_ops_like_input(tgc_infer_ctx *c, bool pass_value) {
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    tgc_status st = tgc_infer_set_output(c, 0, x->dtype, &x->shape);
    if (st != TGC_OK || !pass_value) return st;
    return tgc_ops_pass_value(c, 0, 0);
}

tgc_status tgc_ops_normalize_axes(tgc_infer_ctx *c, int input_index, const char *what,
                                  int64_t *axes, int n, int rank) {
    bool seen[TGC_MAX_RANK + 1] = {false};
    const char *rule = input_index < 0 ? "bad-attribute" : "bad-input";
    const char *kind = input_index < 0 ? "attribute" : "input";
    for (int k = 0; k < n; k++) {
        int ax;
        if (!tgc_axis_normalize(axes[k], rank, &ax))
            return tgc_infer_fail(c, input_index, rule,
                                  "%s '%s' has axis %lld, out of range [%d, %d] for rank %d", kind,
                                  what, (long long)axes[k], -rank, rank - 1, rank);
        if (seen[ax])
            return tgc_infer_fail(c, input_index, rule, "%s '%s' repeats axis %d", kind, what, ax);
        seen[ax] = true;
        axes[k] = ax;
    }
    return TGC_OK;
}

tgc_status tgc_ops_infer_channels_last(tgc_infer_ctx *c, tgc_status (*infer)(tgc_infer_ctx *c)) {
    enum { MAX_INPUTS = 9 };
    const tgc_tensor_info *x = tgc_infer_input(c, 0);
    if (x == NULL || x->shape.rank != 4 || c->node->n_inputs > MAX_INPUTS || c->node->n_outputs != 1) {
        char sb[TGC_OPS_SHAPE_BUF];
        return tgc_infer_fail(c, 0, "shape-mismatch", "input 0 has shape %s; it must be [N, H, W, C]",
                              x != NULL ? tgc_infer_shape_str(c, &x->shape, sb, sizeof sb) : "(omitted)");
    }
    tgc_tensor_info infos[MAX_INPUTS], result = {.dtype = TGC_DTYPE_INVALID, .value_len = -1};
    for (int i = 0; i < c->node->n_inputs; i++) {
        const tgc_tensor_info *in = tgc_infer_input(c, i);
        if (in != NULL) infos[i] = *in;
        else infos[i] = (tgc_tensor_info){.dtype = TGC_DTYPE_INVALID};
        infos[i].value = NULL; /* shapes and dtypes only: nothing here is freed */
        infos[i].value_len = -1;
    }
    static const int to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
    for (int a = 0; a < 4; a++) infos[0].shape.dims[a] = x->shape.dims[to_nchw[a]];
    tgc_infer_ctx sub = *c;
    sub.input_infos = infos;
    sub.output_infos = &result;
    tgc_status st = infer(&sub);
    c->nomem = sub.nomem;
    c->unresolved = sub.unresolved;
    if (st != TGC_OK) return st;
    tgc_shape out = result.shape;
    for (int a = 0; a < 4 && out.rank == 4; a++) out.dims[a] = result.shape.dims[to_nhwc[a]];
    tgc_dtype dtype = result.dtype;
    tgc_info_clear_value(&result);
    return tgc_infer_set_output(c, 0, dtype, &out);
}
