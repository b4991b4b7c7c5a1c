/* split-heavy: a node whose weight is too large for the devices' memory
 * to be shared out is cut into pieces along its output features, each
 * piece a node of the same op over a slice of the weight, joined by a
 * Concat: Megatron-LM's column-parallel linear layer (Shoeybi et al.,
 * 2019, section 3), here so that automatic placement can put the pieces
 * on different devices. Not one of tgc_graph_optimize's passes: the
 * compile driver runs it when automatic placement finds no split of the
 * graph that fits (partition/compile.c).
 *
 * What is cut (W a constant, C / B optional):
 *   MatMul(A, W [K, N])           -> W's columns, Concat on Y's last axis
 *   _MatMulHalfWeight, the same    (W float16 or bfloat16)
 *   Gemm(A, W [K, N] or [N, K], C) -> W's columns (rows with transB), C's
 *                                    last axis when it is N long (shared
 *                                    when it broadcasts), Concat on axis 1
 *   Conv(X, W [M, C, k...], B), group 1 -> W's and B's M, Concat on axis 1
 *   _ConvNHWC, the same            -> Concat on Y's last axis (not one
 *                                    with a Z: fuse-conv-add's)
 * Each output feature is computed by the same op over the same inputs as
 * before, only fewer of them at a time. A node that asks for a device or
 * takes part in colocation is left as written. */
#include "passes/pass.h"

#include "graph/op_registry.h"
#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

#define MAX_PIECES 64
/* Pieces of wider weights are whole multiples of this many features
 * (the kernels' vector widths divide it). */
#define FEATURE_ALIGN 16

/* How one node is cut. */
typedef struct cut_rule {
    int w_axis;    /* the axis of W the features run along */
    int bias;      /* index of the bias input, -1: none */
    bool bias_row; /* the bias's last axis runs along the features (Gemm's C); else axis 0 (Conv's B) */
    int y_axis;    /* the axis of Y the pieces are joined on */
} cut_rule;

/* The rule for node id, false when it is not one split-heavy cuts. */
static bool rule_for(const tgc_rewrite *rw, int32_t id, cut_rule *r) {
    const tgc_node *n = &rw->g->nodes[id];
    if (n->n_outputs != 1 || n->n_inputs < 2 || n->outputs[0].shape.rank == TGC_RANK_UNKNOWN) return false;
    int y_rank = n->outputs[0].shape.rank;
    if ((tgc_pass_is_op(rw, id, "MatMul") || tgc_pass_is_op(rw, id, "_MatMulHalfWeight")) && y_rank >= 1)
        *r = (cut_rule){1, -1, false, y_rank - 1};
    else if (tgc_pass_is_op(rw, id, "Gemm")) *r = (cut_rule){tgc_pass_attr_int(n, "transB", 0) ? 0 : 1, 2, true, 1};
    else if (tgc_pass_is_op(rw, id, "Conv") && tgc_pass_attr_int(n, "group", 1) == 1) *r = (cut_rule){0, 2, false, 1};
    else if (tgc_pass_is_op(rw, id, "_ConvNHWC") && tgc_pass_attr_int(n, "group", 1) == 1 && n->n_inputs <= 3)
        *r = (cut_rule){0, 2, false, y_rank - 1};
    else return false;
    const tgc_const *w = tgc_pass_const_of(rw, n->inputs[1]);
    return w != NULL && w->data != NULL && w->dtype != TGC_STRING && w->shape.rank > r->w_axis &&
           (r->w_axis == 0 || w->shape.rank == 2);
}

/* A new constant holding features [from, from + count) of c along `axis`
 * (its other axes whole). NULL if out of memory. The products below stay
 * within c's own element count, which its load checked (nbytes). */
static tgc_const *slice_const(const tgc_const *c, int axis, int64_t from, int64_t count) {
    tgc_shape shape = c->shape;
    shape.dims[axis] = tgc_dim_of(count);
    tgc_const *piece = tgc_pass_new_const(c->dtype, &shape, c->pos);
    if (piece == NULL) return NULL;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= c->shape.dims[d].v;
    for (int d = axis + 1; d < c->shape.rank; d++) inner *= c->shape.dims[d].v;
    size_t elem = tgc_dtype_size(c->dtype), run = (size_t)(count * inner) * elem;
    size_t row = (size_t)(c->shape.dims[axis].v * inner) * elem;
    for (int64_t o = 0; o < outer && run > 0; o++)
        memcpy((char *)piece->data + (size_t)o * run,
               (const char *)c->data + (size_t)o * row + (size_t)(from * inner) * elem, run);
    return piece;
}

/* The bias input of a piece: the bias itself when it broadcasts over
 * the features, a slice when it runs along them; false when it does
 * neither (or is not a constant), and the node is left whole. */
static bool bias_piece(const tgc_rewrite *rw, const cut_rule *r, tgc_ref bias, int64_t features, bool *sliced,
                       int *axis) {
    const tgc_tensor_info *b = tgc_graph_ref_info(rw->g, bias);
    int rank = b->shape.rank;
    if (rank == TGC_RANK_UNKNOWN) return false;
    *axis = r->bias_row ? rank - 1 : 0;
    *sliced = rank > 0 && !tgc_dim_is(b->shape.dims[*axis], 1);
    if (!*sliced) return true;
    const tgc_const *c = tgc_pass_const_of(rw, bias);
    return c != NULL && c->data != NULL && tgc_dim_is(b->shape.dims[*axis], features);
}

/* How many features each piece takes to cut `features` into at least
 * `pieces` (the last piece may take fewer). */
static int64_t piece_features(int64_t features, int64_t pieces) {
    int64_t each = (features + pieces - 1) / pieces;
    if (features >= FEATURE_ALIGN * pieces) each = (each + FEATURE_ALIGN - 1) / FEATURE_ALIGN * FEATURE_ALIGN;
    return each;
}

/* Cuts node id (rule r) into pieces of at most piece_bytes of weight;
 * *cut set when it did. */
static tgc_status cut_node(tgc_rewrite *rw, int32_t id, const cut_rule *r, int64_t piece_bytes, bool *cut) {
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_const *w = tgc_pass_const_of(rw, n->inputs[1]);
    int64_t features = w->shape.dims[r->w_axis].v;
    if ((int64_t)w->nbytes <= piece_bytes || features < 2) return TGC_OK;
    int64_t pieces = (int64_t)w->nbytes / piece_bytes + ((int64_t)w->nbytes % piece_bytes != 0);
    if (pieces > MAX_PIECES) pieces = MAX_PIECES;
    if (pieces > features) pieces = features;
    int64_t each = piece_features(features, pieces);
    pieces = (features + each - 1) / each;
    if (pieces < 2) return TGC_OK;
    tgc_ref bias = r->bias >= 0 && n->n_inputs > r->bias ? n->inputs[r->bias] : (tgc_ref){-1, 0, {0, 0}};
    bool bias_sliced = false;
    int bias_axis = 0;
    if (bias.node >= 0 && !bias_piece(rw, r, bias, features, &bias_sliced, &bias_axis)) return TGC_OK;
    tgc_ref ins[3] = {{-1, 0, {0, 0}}, {-1, 0, {0, 0}}, {-1, 0, {0, 0}}};
    int n_ins = n->n_inputs < 3 ? n->n_inputs : 3;
    memcpy(ins, n->inputs, (size_t)n_ins * sizeof *ins);
    char *name = tgc_strdup(n->name);
    int32_t *made = tgc_malloc((size_t)pieces * sizeof *made);
    tgc_status s = name != NULL && made != NULL ? TGC_OK : TGC_ERR_NOMEM;
    for (int64_t p = 0; s == TGC_OK && p < pieces; p++) {
        int64_t from = p * each, count = features - from < each ? features - from : each;
        char base[300];
        snprintf(base, sizeof base, "%.200s/split%d_w", name, (int)p);
        tgc_ref piece_ins[3];
        memcpy(piece_ins, ins, sizeof piece_ins);
        /* rw->g may move as nodes are added: each constant is read again from its ref */
        tgc_const *wp = slice_const(tgc_pass_const_of(rw, ins[1]), r->w_axis, from, count);
        int32_t wid = -1, bid = -1, op = -1;
        s = wp != NULL ? tgc_rewrite_add_const(rw, -1, base, wp, &wid) : TGC_ERR_NOMEM;
        piece_ins[1] = (tgc_ref){wid, 0, {0, 0}};
        if (s == TGC_OK && bias_sliced) {
            snprintf(base, sizeof base, "%.200s/split%d_b", name, (int)p);
            tgc_const *bp = slice_const(tgc_pass_const_of(rw, bias), bias_axis, from, count);
            s = bp != NULL ? tgc_rewrite_add_const(rw, -1, base, bp, &bid) : TGC_ERR_NOMEM;
            piece_ins[r->bias] = (tgc_ref){bid, 0, {0, 0}};
        }
        if (s == TGC_OK) s = tgc_rewrite_add_op(rw, rw->g->nodes[id].op->name, id, piece_ins, n_ins, 1, &op);
        if (s == TGC_OK) s = tgc_rewrite_copy_attrs(rw, id, op);
        if (s == TGC_OK) tgc_rewrite_keep_own_name(rw, op);
        made[p] = op;
    }
    int32_t concat = -1;
    if (s == TGC_OK) {
        tgc_ref *parts = tgc_malloc((size_t)pieces * sizeof *parts);
        s = parts != NULL ? TGC_OK : TGC_ERR_NOMEM;
        for (int64_t p = 0; s == TGC_OK && p < pieces; p++) parts[p] = (tgc_ref){made[p], 0, {0, 0}};
        if (s == TGC_OK) s = tgc_rewrite_add_op(rw, "Concat", id, parts, (int)pieces, 1, &concat);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_int(rw, concat, "axis", r->y_axis);
        tgc_free(parts);
    }
    if (s == TGC_OK) {
        tgc_rewrite_replace_uses(rw, (tgc_ref){id, 0, {0, 0}}, (tgc_ref){concat, 0, {0, 0}});
        tgc_rewrite_remove(rw, id); /* the Concat takes its name */
        rw->edits++;
        *cut = true;
    }
    tgc_free(made);
    tgc_free(name);
    return s;
}

/* tgc_pass_cut_fn: node id cut when a rule takes it (arg: the piece bytes). */
static tgc_status cut_if_heavy(tgc_rewrite *rw, int32_t id, const bool *named, void *arg, bool *cut) {
    const tgc_node *n = &rw->g->nodes[id];
    cut_rule r;
    if (n->device != NULL || n->n_colocate > 0 || named[id] || !rule_for(rw, id, &r)) return TGC_OK;
    return cut_node(rw, id, &r, *(const int64_t *)arg, cut);
}

tgc_status tgc_graph_split_heavy(const tgc_graph *g, int64_t piece_bytes, tgc_diags *diags, tgc_graph **out,
                                 int32_t *n_cut) {
    if (piece_bytes < 1) piece_bytes = 1;
    return tgc_pass_cut_copy(g, cut_if_heavy, &piece_bytes, diags, out, n_cut);
}
