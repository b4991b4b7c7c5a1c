/* LayerNormalization recognized from its decomposed form (see pass.h),
 * starting at each ReduceMean over the last axis: its only reader
 * subtracts it from x; the difference d has two readers, its square (Pow
 * with 2, or d * d) and the final division; the square is averaged the
 * same way, eps added, the root taken, d divided by it, then optionally
 * scaled by a [C] initializer and shifted by another. The
 * LayerNormalization takes the last node's name. */
#include "passes/pass.h"

#include <string.h>

static tgc_ref out0(int32_t id) { return (tgc_ref){id, 0, {0, 0}}; }

static bool same(tgc_ref a, tgc_ref b) { return a.node == b.node && a.port == b.port; }

/* True when node id is a ReduceMean over the last axis of its input, keeping dims. */
static bool mean_over_last(const tgc_rewrite *rw, int32_t id) {
    if (!tgc_pass_is_op(rw, id, "ReduceMean")) return false;
    const tgc_node *n = &rw->g->nodes[id];
    const tgc_tensor_info *x = tgc_graph_ref_info(rw->g, n->inputs[0]);
    const tgc_attr *keep = tgc_node_attr(n, "keepdims");
    if (x == NULL || x->shape.rank < 1 || (keep != NULL && keep->i != 1)) return false;
    const int64_t *axes = NULL;
    int64_t n_axes = 0;
    const tgc_attr *a = tgc_node_attr(n, "axes");
    if (a != NULL && a->type == TGC_ATTR_INTS) {
        axes = a->ints;
        n_axes = (int64_t)a->n;
    } else if (n->n_inputs > 1) {
        const tgc_const *c = tgc_pass_const_of(rw, n->inputs[1]);
        if (c == NULL || c->dtype != TGC_INT64) return false;
        axes = c->data;
        n_axes = tgc_shape_numel(&c->shape);
    }
    return n_axes == 1 && (axes[0] == -1 || axes[0] == x->shape.rank - 1);
}

/* A float32 initializer of shape [c] read by binary node id, the other input being `from`. */
static const tgc_const *vector_operand(const tgc_rewrite *rw, int32_t id, tgc_ref from, int64_t c, tgc_ref *ref) {
    const tgc_node *n = &rw->g->nodes[id];
    if (n->n_inputs != 2) return NULL;
    for (int k = 0; k < 2; k++) {
        if (!same(n->inputs[1 - k], from)) continue;
        const tgc_const *v = tgc_pass_const_of(rw, n->inputs[k]);
        if (v != NULL && v->dtype == TGC_FLOAT32 && v->shape.rank == 1 && v->shape.dims[0].v == c) {
            *ref = n->inputs[k];
            return v;
        }
    }
    return NULL;
}

static bool any_scalar(const tgc_rewrite *rw, tgc_ref r, void *ctx) {
    const tgc_const *c = tgc_pass_const_of(rw, r);
    if (c == NULL || c->dtype != TGC_FLOAT32 || tgc_shape_numel(&c->shape) != 1) return false;
    *(double *)ctx = *(const float *)c->data;
    return true;
}

typedef struct ln_match {
    tgc_ref x, gamma, beta; /* gamma, beta: node -1 when absent */
    double eps;
    int32_t nodes[10];
    int n;
    int32_t last;
} ln_match;

static bool match(const tgc_rewrite *rw, int32_t m1, ln_match *m) {
    const tgc_node *mean = &rw->g->nodes[m1];
    m->x = mean->inputs[0];
    const tgc_tensor_info *xi = tgc_graph_ref_info(rw->g, m->x);
    if (xi->dtype != TGC_FLOAT32 || xi->shape.rank < 1 || !tgc_dim_known(xi->shape.dims[xi->shape.rank - 1]))
        return false; /* a scalar, or a rank known only at run time */
    int64_t c = xi->shape.dims[xi->shape.rank - 1].v;
    m->n = 0;
    m->nodes[m->n++] = m1;
    int32_t sub = tgc_pass_only_reader(rw, out0(m1));
    if (!tgc_pass_is_op(rw, sub, "Sub") || !same(rw->g->nodes[sub].inputs[0], m->x) ||
        !same(rw->g->nodes[sub].inputs[1], out0(m1)))
        return false;
    m->nodes[m->n++] = sub;
    int32_t readers[3];
    int nr = tgc_rewrite_readers(rw, out0(sub), readers, 3);
    if (nr != 2 || tgc_rewrite_is_output(rw, out0(sub))) return false;
    for (int pick = 0; pick < 2; pick++) {
        int32_t sq = readers[pick], div = readers[1 - pick];
        const tgc_node *s = &rw->g->nodes[sq];
        bool square = (tgc_pass_is_op(rw, sq, "Pow") && same(s->inputs[0], out0(sub)) &&
                       tgc_pass_is_scalar(rw, s->inputs[1], 2.0)) ||
                      (tgc_pass_is_op(rw, sq, "Mul") && same(s->inputs[0], out0(sub)) && same(s->inputs[1], out0(sub)));
        if (!square || !tgc_pass_is_op(rw, div, "Div") || !same(rw->g->nodes[div].inputs[0], out0(sub))) continue;
        int32_t m2 = tgc_pass_only_reader(rw, out0(sq));
        if (!mean_over_last(rw, m2)) return false;
        int32_t add = tgc_pass_only_reader(rw, out0(m2));
        tgc_ref other;
        if (!tgc_pass_is_op(rw, add, "Add") || tgc_pass_match_either(rw, add, any_scalar, &m->eps, &other) < 0 ||
            other.node != m2)
            return false;
        int32_t root = tgc_pass_only_reader(rw, out0(add));
        if (!tgc_pass_is_op(rw, root, "Sqrt") || tgc_pass_only_reader(rw, out0(root)) != div ||
            !same(rw->g->nodes[div].inputs[1], out0(root)) || m->eps <= 0)
            return false;
        int32_t chain[] = {sq, m2, add, root, div};
        for (int k = 0; k < 5; k++) m->nodes[m->n++] = chain[k];
        m->last = div;
        m->gamma.node = m->beta.node = -1;
        int32_t g = tgc_pass_only_reader(rw, out0(div));
        if (tgc_pass_is_op(rw, g, "Mul") && vector_operand(rw, g, out0(div), c, &m->gamma) != NULL)
            m->nodes[m->n++] = m->last = g;
        int32_t b = tgc_pass_only_reader(rw, out0(m->last));
        if (tgc_pass_is_op(rw, b, "Add") && vector_operand(rw, b, out0(m->last), c, &m->beta) != NULL)
            m->nodes[m->n++] = m->last = b;
        return true;
    }
    return false;
}

tgc_status tgc_pass_fuse_layer_norm(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    for (int32_t i = 0; i < nn; i++) {
        int32_t m1 = rw->g->topo[i];
        ln_match m;
        if (!mean_over_last(rw, m1) || !match(rw, m1, &m)) continue;
        tgc_status s = TGC_OK;
        if (m.gamma.node < 0) { /* LayerNormalization needs a scale: ones */
            const tgc_tensor_info *xi = tgc_graph_ref_info(rw->g, m.x);
            tgc_shape shape = tgc_shape_of(1, &xi->shape.dims[xi->shape.rank - 1].v);
            tgc_const *ones = tgc_pass_new_const(TGC_FLOAT32, &shape, rw->g->nodes[m1].pos);
            if (ones == NULL) return TGC_ERR_NOMEM;
            for (int64_t k = 0; k < shape.dims[0].v; k++) ((float *)ones->data)[k] = 1.0f;
            char base[300];
            snprintf(base, sizeof base, "%s_ones", rw->g->nodes[m.last].name);
            int32_t id;
            if ((s = tgc_rewrite_add_const(rw, -1, base, ones, &id)) != TGC_OK) return s;
            m.gamma = out0(id);
        }
        tgc_ref ins[3] = {m.x, m.gamma, m.beta};
        int32_t ln;
        s = tgc_rewrite_add_op(rw, "LayerNormalization", m.last, ins, m.beta.node >= 0 ? 3 : 2, 1, &ln);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_int(rw, ln, "axis", -1);
        if (s == TGC_OK) s = tgc_rewrite_set_attr_float(rw, ln, "epsilon", m.eps);
        if (s != TGC_OK) return s;
        tgc_rewrite_replace_uses(rw, out0(m.last), out0(ln));
        for (int k = 0; k < m.n; k++) tgc_rewrite_remove(rw, m.nodes[k]);
        rw->edits++;
    }
    return TGC_OK;
}
