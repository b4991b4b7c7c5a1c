/* Scaled dot-product attention recognized (see pass.h), starting at each
 * Softmax over the last axis whose only reader is MatMul(probs, V):
 *
 *     Softmax input  = [Add(., mask)] of a chain of Mul/Div by scalar
 *                      constants of MatMul(Q', K') (PyTorch's baddbmm
 *                      writes Mul by alpha 1; a Div by sqrt(d))
 *     Q'             = Q, through a chain of Mul/Div by scalar constants
 *                      (PyTorch 1.13's q / sqrt(d); PyTorch 2's
 *                      q * sqrt(1/sqrt(d)))
 *     K'             = K^T, the same way, where K^T is a Transpose of K
 *                      swapping the last two axes (then K is read and the
 *                      Transpose goes), or anything else (read as K^T)
 *
 * Each product may also be an Einsum of the same meaning over equal batch
 * labels (maxvit's "BGHID,BGHJD->BGHIJ" and "BGHIJ,BGHJD->BGHID").
 *
 * Every intermediate has the next node as its only reader and is no graph
 * output; all nodes ask for the same device and have no control inputs or
 * colocate_with. The scale is the product of the constants (in double,
 * rounded once). The mask must broadcast one way to the scores. The
 * _Attention takes the second MatMul's name. ONNX Runtime's
 * AttentionFusion/MultiHeadAttention, PyTorch's SDPA.
 *
 * Formed only when every device the graph may run on has an _Attention
 * kernel (the kernel registry: the cpu and the gpu have one; a device kind
 * without one would keep the unfused ops). */
#include "graph/ops_attention.h"
#include "passes/pass.h"

#include "devices/kernel.h"
#include "graph/einsum.h"

#include <math.h>
#include <string.h>

#define MAX_CHAIN 4 /* scalar Mul/Div on one path */
#define MAX_NODES (6 + 4 * MAX_CHAIN)

static tgc_ref out0(int32_t id) { return (tgc_ref){id, 0, {0, 0}}; }

static bool same(tgc_ref a, tgc_ref b) { return a.node == b.node && a.port == b.port; }

typedef struct att_match {
    tgc_ref q, k, v, mask; /* mask: node -1 when absent */
    bool kt;
    double scale;
    int32_t nodes[MAX_NODES];
    int n;
    int32_t first; /* the Softmax: the device spec all must share */
} att_match;

static const tgc_tensor_info *info(const tgc_rewrite *rw, tgc_ref r) { return tgc_graph_ref_info(rw->g, r); }

static bool is_f32(const tgc_rewrite *rw, tgc_ref r) {
    const tgc_tensor_info *i = info(rw, r);
    return i != NULL && i->dtype == TGC_FLOAT32 && i->shape.rank != TGC_RANK_UNKNOWN;
}

/* Node id joins the match if it is plain (no colocate_with, one output),
 * asks for the Softmax's device, and fits. */
static bool take(const tgc_rewrite *rw, att_match *m, int32_t id) {
    const tgc_node *n = &rw->g->nodes[id], *s = &rw->g->nodes[m->first];
    bool same_dev = (n->device == NULL && s->device == NULL) ||
                    (n->device != NULL && s->device != NULL && strcmp(n->device, s->device) == 0);
    if (!same_dev || n->n_colocate > 0 || n->n_outputs != 1 || m->n >= MAX_NODES) return false;
    m->nodes[m->n++] = id;
    return true;
}

/* The value of a float32 one-element initializer, finite and nonzero. */
static bool scalar_of(const tgc_rewrite *rw, tgc_ref r, double *v) {
    const tgc_const *c = tgc_pass_const_of(rw, r);
    if (c == NULL || c->dtype != TGC_FLOAT32 || tgc_shape_numel(&c->shape) != 1) return false;
    *v = *(const float *)c->data;
    return isfinite(*v) && *v != 0;
}

/* Walks up from r, read by node *rd, through Mul/Div by scalar constants
 * (each output keeping the other operand's shape, each the only reader's
 * input), multiplying m->scale; returns the value the chain starts from
 * and leaves in *rd the node reading it. */
static tgc_ref strip_scales(const tgc_rewrite *rw, att_match *m, tgc_ref r, int32_t *rd) {
    for (int step = 0; step < MAX_CHAIN; step++) {
        int32_t p = r.node;
        if (r.port != 0 || tgc_pass_only_reader(rw, r) != *rd) return r;
        bool mul = tgc_pass_is_op(rw, p, "Mul"), div = tgc_pass_is_op(rw, p, "Div");
        if (!mul && !div) return r;
        const tgc_node *n = &rw->g->nodes[p];
        double c;
        int k; /* the operand that is not the constant */
        if (scalar_of(rw, n->inputs[1], &c)) k = 0;
        else if (mul && scalar_of(rw, n->inputs[0], &c)) k = 1;
        else return r;
        const tgc_tensor_info *x = info(rw, n->inputs[k]), *y = info(rw, out0(p));
        if (!is_f32(rw, n->inputs[k]) || y == NULL || !tgc_shape_eq(&x->shape, &y->shape) || !take(rw, m, p)) return r;
        m->scale = div ? m->scale / c : m->scale * c;
        *rd = p;
        r = n->inputs[k];
    }
    return r;
}

/* True when node id is a Transpose swapping the last two axes alone. */
static bool swaps_last_two(const tgc_rewrite *rw, int32_t id) {
    if (!tgc_pass_is_op(rw, id, "Transpose")) return false;
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_attr *perm = tgc_node_attr(n, "perm");
    const tgc_tensor_info *x = info(rw, n->inputs[0]);
    if (perm == NULL || x == NULL || x->shape.rank < 2 || perm->n != (size_t)x->shape.rank) return false;
    int r = x->shape.rank;
    for (int d = 0; d < r - 2; d++)
        if (perm->ints[d] != d) return false;
    return perm->ints[r - 2] == r - 1 && perm->ints[r - 1] == r - 2;
}

/* Einsum forms of the two products (maxvit's "BGHID,BGHJD->BGHIJ" and
 * "BGHIJ,BGHJD->BGHID"): two terms and the output of one rank r >= 2 whose
 * first r - 2 labels are the same letters; then in the last two, with x,
 * y, z distinct and none a batch label:
 *     want 'k': xz, yz -> xy (Q K^T, K as it is) or xz, zy -> xy (K^T)
 *     want 'v': xy, yz -> xz (P V)
 * *kt tells which K form. */
static bool einsum_product(const tgc_rewrite *rw, int32_t id, char want, bool *kt) {
    if (!tgc_pass_is_op(rw, id, "Einsum")) return false;
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_attr *eq = tgc_node_attr(n, "equation");
    const tgc_tensor_info *a = tgc_graph_ref_info(rw->g, n->inputs[0]);
    const tgc_tensor_info *b = n->n_inputs == 2 ? tgc_graph_ref_info(rw->g, n->inputs[1]) : NULL;
    if (eq == NULL || eq->s == NULL || b == NULL || a->shape.rank < 2 || a->shape.rank != b->shape.rank) return false;
    tgc_einsum e;
    char err[128];
    int r = a->shape.rank;
    if (!tgc_einsum_parse(eq->s, 2, (int[]){r, r}, &e, err, sizeof err) || e.n_ellipsis > 0 || e.out_rank != r)
        return false;
    for (int d = 0; d < r - 2; d++)
        if (e.labels[0][d] != e.labels[1][d] || e.labels[0][d] != e.out_labels[d]) return false;
    int x = e.labels[0][r - 2], p = e.labels[0][r - 1], b0 = e.labels[1][r - 2], b1 = e.labels[1][r - 1];
    int o0 = e.out_labels[r - 2], o1 = e.out_labels[r - 1];
    for (int d = 0; d < r - 2; d++)
        if (e.labels[0][d] == x || e.labels[0][d] == p || e.labels[0][d] == b0 || e.labels[0][d] == b1) return false;
    if (x == p || o0 != x) return false;
    if (want == 'v') return b0 == p && b1 != x && b1 != p && o1 == b1;
    /* want 'k': p is z, the summed label; y is the output's last */
    if (o1 == x || o1 == p) return false;
    if (b0 == o1 && b1 == p) *kt = false;
    else if (b0 == p && b1 == o1) *kt = true;
    else return false;
    return true;
}

/* True when value r is the first output of a MatMul (or an Einsum Q K^T)
 * read only by node rd. */
static bool matmul_read_by(const tgc_rewrite *rw, tgc_ref r, int32_t rd) {
    bool kt;
    return r.port == 0 && (tgc_pass_is_op(rw, r.node, "MatMul") || einsum_product(rw, r.node, 'k', &kt)) &&
           tgc_pass_only_reader(rw, r) == rd;
}

/* True when x (rank >= 2) has batch dims the scores' batch dims cover
 * without a new symbol: each (aligned at the right) 1 or the scores'. */
static bool batch_covered(const tgc_shape *x, const tgc_shape *scores) {
    int nb = scores->rank - 2, xb = x->rank - 2;
    if (xb > nb) return false;
    for (int d = 0; d < xb; d++) {
        tgc_dim a = x->dims[d], s = scores->dims[nb - xb + d];
        if (!tgc_dim_is(a, 1) && !tgc_dim_eq(a, s)) return false;
    }
    return true;
}

/* Nodes are taken consumer first (removal order): the second MatMul, the
 * Softmax, the Add, the score scales, the first MatMul, the Q side, the
 * K side. */
static bool match(const tgc_rewrite *rw, int32_t softmax, att_match *m) {
    const tgc_node *s = &rw->g->nodes[softmax];
    const tgc_tensor_info *x = info(rw, s->inputs[0]);
    if (x == NULL || x->dtype != TGC_FLOAT32 || x->shape.rank < 2) return false;
    const tgc_attr *axis = tgc_node_attr(s, "axis");
    int64_t a = axis != NULL ? axis->i : -1;
    if (a != -1 && a != x->shape.rank - 1) return false;
    memset(m, 0, sizeof *m);
    m->first = softmax;
    m->scale = 1.0;
    m->mask.node = -1;
    int32_t mm2 = tgc_pass_only_reader(rw, out0(softmax));
    bool ein_kt;
    if (!(tgc_pass_is_op(rw, mm2, "MatMul") || einsum_product(rw, mm2, 'v', &ein_kt)) ||
        !same(rw->g->nodes[mm2].inputs[0], out0(softmax)) ||
        !take(rw, m, mm2) || !take(rw, m, softmax))
        return false;
    m->v = rw->g->nodes[mm2].inputs[1];
    if (!is_f32(rw, m->v) || info(rw, m->v)->shape.rank < 2) return false;

    /* the scores: [Add(., mask) of] scalar scales of MatMul(Q', K') */
    tgc_ref scores = s->inputs[0], from = {-1, 0, {0, 0}};
    int32_t rd = softmax;
    if (scores.port == 0 && tgc_pass_only_reader(rw, scores) == softmax && tgc_pass_is_op(rw, scores.node, "Add")) {
        int32_t add = scores.node;
        const tgc_node *an = &rw->g->nodes[add];
        if (!take(rw, m, add)) return false;
        int n0 = m->n;
        for (int k = 0; k < 2 && m->mask.node < 0; k++) { /* the mask: the operand not from the MatMul */
            m->n = n0;
            m->scale = 1.0;
            rd = add;
            from = strip_scales(rw, m, an->inputs[1 - k], &rd);
            if (matmul_read_by(rw, from, rd)) {
                m->mask = an->inputs[k];
                scores = an->inputs[1 - k];
            }
        }
        if (m->mask.node < 0) return false;
        const tgc_tensor_info *sum = info(rw, out0(add)), *sc = info(rw, scores);
        if (!is_f32(rw, m->mask) || !is_f32(rw, scores) || sum == NULL || !tgc_shape_eq(&sum->shape, &sc->shape) ||
            !tgc_attention_mask_fits(&info(rw, m->mask)->shape, &sc->shape))
            return false;
    } else {
        from = strip_scales(rw, m, scores, &rd);
        if (!matmul_read_by(rw, from, rd)) return false;
    }
    int32_t mm1 = from.node;
    if (!take(rw, m, mm1)) return false;
    const tgc_node *n = &rw->g->nodes[mm1];
    rd = mm1;
    m->q = strip_scales(rw, m, n->inputs[0], &rd);
    rd = mm1;
    tgc_ref kb = strip_scales(rw, m, n->inputs[1], &rd);
    m->kt = true;
    m->k = kb;
    if (einsum_product(rw, mm1, 'k', &ein_kt)) {
        m->kt = ein_kt; /* the Einsum says which; a Transpose before it stays */
    } else if (kb.port == 0 && swaps_last_two(rw, kb.node) && tgc_pass_only_reader(rw, kb) == rd &&
               take(rw, m, kb.node)) {
        m->kt = false;
        rd = kb.node;
        m->k = strip_scales(rw, m, rw->g->nodes[kb.node].inputs[0], &rd);
    }
    if (!is_f32(rw, m->q) || !is_f32(rw, m->k)) return false;
    const tgc_shape *sc = &info(rw, out0(mm1))->shape;
    const tgc_shape *qs = &info(rw, m->q)->shape, *ks = &info(rw, m->k)->shape, *vs = &info(rw, m->v)->shape;
    return qs->rank >= 2 && ks->rank >= 2 && sc->rank >= 2 && batch_covered(qs, sc) && batch_covered(ks, sc) &&
           batch_covered(vs, sc) && isfinite(m->scale) && isfinite((float)m->scale) && (float)m->scale != 0;
}

/* True when every kind of device the graph may run on (any, without a
 * list) has an _Attention kernel. */
static bool kernels_everywhere(const tgc_rewrite *rw) { return tgc_pass_kernel_everywhere(rw->kinds, "_Attention"); }

tgc_status tgc_pass_fuse_attention(tgc_rewrite *rw) {
    if (!kernels_everywhere(rw)) return TGC_OK;
    int32_t nn = rw->g->n_nodes;
    for (int32_t i = 0; i < nn; i++) {
        int32_t sm = rw->g->topo[i];
        att_match m;
        if (!tgc_pass_is_op(rw, sm, "Softmax") || !match(rw, sm, &m)) continue;
        int32_t mm2 = m.nodes[0], at;
        tgc_ref ins[4] = {m.q, m.k, m.v, m.mask};
        tgc_status s = tgc_rewrite_add_op(rw, "_Attention", mm2, ins, m.mask.node >= 0 ? 4 : 3, 1, &at);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_float(rw, at, "scale", (double)(float)m.scale);
        if (s == TGC_OK && m.kt) s = tgc_rewrite_set_attr_int(rw, at, "k_transposed", 1);
        if (s != TGC_OK) return s;
        tgc_rewrite_replace_uses(rw, out0(mm2), out0(at));
        for (int k = 0; k < m.n; k++) tgc_rewrite_remove(rw, m.nodes[k]);
        rw->edits++;
    }
    return TGC_OK;
}
