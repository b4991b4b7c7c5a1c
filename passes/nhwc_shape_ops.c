/* nhwc-conv's step 2 through shape ops (passes/nhwc_conv.c runs them):
 * a channel split and a channel shuffle, so that a ShuffleNet unit
 * (torchvision's shufflenet_v2: Slice the channels in two, convolve one
 * half, Concat, shuffle) stays channels last from one unit to the next.
 * Left NCHW, each unit went out of NHWC and back in twice, 32 Transposes of
 * ShuffleNetV2's 48. Both rules move data as the NCHW nodes did: the same
 * numbers, in other places.
 *
 * - Slice(T(x, perm), starts, ends, axes, steps) = T(Slice(x, starts, ends,
 *   perm[axes], steps), perm), where every reader of T is a Slice (the two
 *   halves of a split): T goes, and each half is transposed (or cancels
 *   with the next layer's Transpose back into NHWC).
 * - A channel shuffle (ShuffleNet, Zhang et al. 2017, as exporters write
 *   it: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose [0, 2, 1, 3,
 *   4], Reshape -> [N, C, H, W]) of T(y, [0, 3, 1, 2]) is the same shuffle
 *   of y's last axis: Reshape y [N, H, W, C] -> [N, H, W, g, C/g],
 *   Transpose [0, 1, 2, 4, 3], Reshape -> [N, H, W, C], then T. */
#include "passes/nhwc_conv.h"
#include "passes/pass.h"

#include "support/checked.h"

#include <stdio.h>
#include <string.h>

/* Readers of a Transpose that slice_through looks at. */
#define MAX_SLICES 8

static tgc_ref out0(int32_t id) { return (tgc_ref){id, 0, {0, 0}}; }

/* A 1-D int64 or int32 constant's n entries into v (at most 4); false otherwise. */
static bool small_ints(const tgc_const *c, tgc_dtype dtype, int64_t *v, int64_t *n) {
    if (c == NULL || c->dtype != dtype || c->shape.rank != 1) return false;
    *n = c->shape.dims[0].v;
    if (*n < 1 || *n > 4) return false;
    for (int64_t i = 0; i < *n; i++)
        v[i] = dtype == TGC_INT64 ? ((const int64_t *)c->data)[i] : ((const int32_t *)c->data)[i];
    return true;
}

/* Adds a 1-D constant of dtype (int64 or int32) holding v[0..n), named
 * after node `like`; *id its node. TGC_OK or TGC_ERR_NOMEM. */
static tgc_status add_ints(tgc_rewrite *rw, int32_t like, const char *what, tgc_dtype dtype, const int64_t *v,
                           int64_t n, int32_t *id) {
    tgc_shape shape = tgc_shape_of(1, &n);
    tgc_const *c = tgc_pass_new_const(dtype, &shape, rw->g->nodes[like].pos);
    if (c == NULL) return TGC_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) {
        if (dtype == TGC_INT64) ((int64_t *)c->data)[i] = v[i];
        else ((int32_t *)c->data)[i] = (int32_t)v[i];
    }
    char base[300];
    snprintf(base, sizeof base, "%s_%s", rw->g->nodes[like].name, what);
    return tgc_rewrite_add_const(rw, -1, base, c, id);
}

/* True when every reader of value r is a Slice (and there is one). */
static bool read_by_slices_only(const tgc_rewrite *rw, tgc_ref r) {
    int32_t readers[MAX_SLICES];
    int n = tgc_rewrite_readers(rw, r, readers, MAX_SLICES);
    if (n < 1 || n > MAX_SLICES || tgc_rewrite_is_output(rw, r)) return false;
    for (int i = 0; i < n; i++)
        if (!tgc_pass_is_op(rw, readers[i], "Slice")) return false;
    return true;
}

tgc_status tgc_nhwc_slice_through(tgc_rewrite *rw, int32_t id, bool *moved) {
    const tgc_node *n = &rw->g->nodes[id];
    if (n->n_inputs < 3 || n->n_inputs > 5 || n->n_outputs != 1 || n->inputs[0].node < 0 ||
        tgc_rewrite_is_output(rw, out0(id)))
        return TGC_OK;
    const int64_t *perm = tgc_nhwc_perm_of(rw, n->inputs[0].node);
    const tgc_const *starts = tgc_pass_const_of(rw, n->inputs[1]);
    if (perm == NULL || starts == NULL || !read_by_slices_only(rw, n->inputs[0])) return TGC_OK;
    tgc_dtype ind = starts->dtype; /* starts, ends, axes and steps share one type */
    int64_t starts_v[4], axes[4], k, n_axes; /* starts_v: read to check the form only */
    if (!small_ints(starts, ind, starts_v, &k)) return TGC_OK;
    if (n->n_inputs > 3 && n->inputs[3].node >= 0) {
        if (!small_ints(tgc_pass_const_of(rw, n->inputs[3]), ind, axes, &n_axes) || n_axes != k) return TGC_OK;
    } else {
        for (int64_t i = 0; i < k; i++) axes[i] = i;
    }
    int64_t mapped[4];
    for (int64_t i = 0; i < k; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + 4 : axes[i];
        if (a < 0 || a > 3) return TGC_OK; /* the kernel names the error */
        mapped[i] = perm[a];
    }
    int64_t kept[4];
    memcpy(kept, perm, sizeof kept); /* node pointers move as nodes are added */
    int n_inputs = n->n_inputs > 4 ? 5 : 4; /* n moves as nodes are added */
    tgc_ref inputs[5] = {rw->g->nodes[n->inputs[0].node].inputs[0], n->inputs[1], n->inputs[2], {-1, 0, {0, 0}},
                         n->n_inputs > 4 ? n->inputs[4] : (tgc_ref){-1, 0, {0, 0}}};
    int32_t axes_id, copy, t = n->inputs[0].node;
    tgc_status st = add_ints(rw, id, "axes", ind, mapped, k, &axes_id);
    if (st != TGC_OK) return st;
    inputs[3] = out0(axes_id);
    if ((st = tgc_rewrite_replace_op(rw, id, inputs, n_inputs, &copy)) != TGC_OK ||
        (st = tgc_nhwc_transpose_after(rw, copy, kept)) != TGC_OK)
        return st;
    if (tgc_rewrite_uses(rw, out0(t)) == 0) tgc_rewrite_remove(rw, t);
    *moved = true;
    return TGC_OK;
}

/* The only node reading value r when it is op `op`, else -1. */
static int32_t only_reader_op(const tgc_rewrite *rw, tgc_ref r, const char *op) {
    int32_t reader = tgc_pass_only_reader(rw, r);
    return reader >= 0 && tgc_pass_is_op(rw, reader, op) ? reader : -1;
}

/* True when the 5-entry perm of Transpose node id is [0, 2, 1, 3, 4]. */
static bool swaps_groups(const tgc_rewrite *rw, int32_t id) {
    const tgc_attr *a = tgc_node_attr(&rw->g->nodes[id], "perm");
    static const int64_t want[5] = {0, 2, 1, 3, 4};
    return a != NULL && a->type == TGC_ATTR_INTS && a->n == 5 && memcmp(a->ints, want, sizeof want) == 0;
}

/* True when shape s has `rank` dims, each known, into d. */
static bool known_dims(const tgc_tensor_info *s, int rank, int64_t *d) {
    if (s == NULL || s->shape.rank != rank) return false;
    for (int i = 0; i < rank; i++) {
        if (!tgc_dim_known(s->shape.dims[i])) return false;
        d[i] = s->shape.dims[i].v;
    }
    return true;
}

bool tgc_nhwc_starts_shuffle(const tgc_rewrite *rw, int32_t id) {
    if (!tgc_pass_is_op(rw, id, "Reshape")) return false;
    int32_t swap = only_reader_op(rw, out0(id), "Transpose");
    return swap >= 0 && swaps_groups(rw, swap) && only_reader_op(rw, out0(swap), "Reshape") >= 0;
}

tgc_status tgc_nhwc_shuffle_through(tgc_rewrite *rw, int32_t id, bool *moved) {
    const tgc_node *r2 = &rw->g->nodes[id];
    if (r2->n_inputs < 1 || r2->n_outputs != 1 || r2->inputs[0].node < 0 || tgc_rewrite_is_output(rw, out0(id)))
        return TGC_OK;
    int32_t swap = r2->inputs[0].node;
    if (!tgc_pass_is_op(rw, swap, "Transpose") || only_reader_op(rw, out0(swap), "Reshape") != id) return TGC_OK;
    int32_t r1 = rw->g->nodes[swap].inputs[0].node;
    if (r1 < 0 || !tgc_nhwc_starts_shuffle(rw, r1)) return TGC_OK;
    tgc_ref t_out = rw->g->nodes[r1].inputs[0];
    const int64_t *perm = t_out.node >= 0 ? tgc_nhwc_perm_of(rw, t_out.node) : NULL;
    if (perm == NULL || memcmp(perm, TGC_TO_NCHW, sizeof TGC_TO_NCHW) != 0) return TGC_OK;
    int64_t split[5], joined[4], channels; /* [N, g, C/g, H, W] and [N, C, H, W], as inferred */
    if (!known_dims(tgc_graph_ref_info(rw->g, out0(r1)), 5, split) ||
        !known_dims(tgc_graph_ref_info(rw->g, out0(id)), 4, joined) || split[0] != joined[0] ||
        !tgc_checked_mul_i64(split[1], split[2], &channels) || channels != joined[1] || split[3] != joined[2] ||
        split[4] != joined[3])
        return TGC_OK;
    const int64_t split_nhwc[5] = {split[0], split[3], split[4], split[1], split[2]},
                  joined_nhwc[4] = {joined[0], joined[2], joined[3], joined[1]}, swap_last[5] = {0, 1, 2, 4, 3};
    int32_t s5, s4, a, b, c;
    tgc_status st = add_ints(rw, id, "shape_nhwc_split", TGC_INT64, split_nhwc, 5, &s5);
    if (st == TGC_OK) st = add_ints(rw, id, "shape_nhwc", TGC_INT64, joined_nhwc, 4, &s4);
    if (st == TGC_OK)
        st = tgc_rewrite_add_op(rw, "Reshape", r1, (tgc_ref[]){rw->g->nodes[t_out.node].inputs[0], out0(s5)}, 2, 1, &a);
    if (st == TGC_OK) st = tgc_nhwc_add_transpose(rw, swap, out0(a), swap_last, 5, &b);
    if (st == TGC_OK) st = tgc_rewrite_add_op(rw, "Reshape", id, (tgc_ref[]){out0(b), out0(s4)}, 2, 1, &c);
    if (st == TGC_OK) st = tgc_nhwc_replace_with_transposed(rw, id, c, TGC_TO_NCHW);
    if (st != TGC_OK) return st;
    tgc_rewrite_remove(rw, swap);
    tgc_rewrite_remove(rw, r1);
    if (tgc_rewrite_uses(rw, t_out) == 0) tgc_rewrite_remove(rw, t_out.node);
    *moved = true;
    return TGC_OK;
}
