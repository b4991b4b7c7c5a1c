/* GELU recognized from its decomposed forms (see pass.h): starting at each
 * Erf (or Tanh), walk up to x through the scaling before it (for tanh:
 * sqrt(2/pi) (x + 0.044715 Pow(x, 3)), GPT-2's "gelu_new") and down the
 * only readers: the + 1 after it, and the two products with x and 0.5 in
 * any of the three ways exporters associate them:
 *     ((x * (1 + f)) * 0.5)    ((1 + f) * 0.5) * x    (x * 0.5) * (1 + f)
 * The Gelu node (approximate "tanh" for the second form) takes the last
 * product's name. */
#include "passes/pass.h"

#include <string.h>

#define SQRT2 1.4142135623730951

static bool is_scalar_pred(const tgc_rewrite *rw, tgc_ref r, void *want) {
    return tgc_pass_is_scalar(rw, r, *(const double *)want);
}

static bool is_ref_pred(const tgc_rewrite *rw, tgc_ref r, void *want) {
    (void)rw;
    const tgc_ref *w = want;
    return r.node == w->node && r.port == w->port;
}

static tgc_ref out0(int32_t id) { return (tgc_ref){id, 0, {0, 0}}; }

/* x when node s computes x / sqrt 2 (or x * (1 / sqrt 2)); node -1 else. */
static tgc_ref scaled_input(const tgc_rewrite *rw, int32_t s) {
    tgc_ref x = {-1, 0, {0, 0}};
    double inv = 1.0 / SQRT2;
    if (tgc_pass_is_op(rw, s, "Div") && rw->g->nodes[s].n_inputs == 2 &&
        tgc_pass_is_scalar(rw, rw->g->nodes[s].inputs[1], SQRT2))
        x = rw->g->nodes[s].inputs[0];
    else if (!tgc_pass_is_op(rw, s, "Mul") || tgc_pass_match_either(rw, s, is_scalar_pred, &inv, &x) < 0)
        x.node = -1;
    return x;
}

/* The erf form's head at node `erf`: Erf(x / sqrt 2); its nodes go to
 * nodes[] (the scaling first); x in *x. */
static bool erf_head(const tgc_rewrite *rw, int32_t erf, tgc_ref *x, int32_t *nodes, int *n) {
    tgc_ref t = rw->g->nodes[erf].inputs[0];
    if (t.node < 0 || t.port != 0 || tgc_pass_only_reader(rw, t) != erf) return false;
    *x = scaled_input(rw, t.node);
    if (x->node < 0) return false;
    nodes[(*n)++] = t.node;
    nodes[(*n)++] = erf;
    return true;
}

/* True when node id computes x^3: Pow(x, 3), or x * (x * x) as PyTorch
 * writes it (the inner square, read only there, in *square). */
static bool is_cube(const tgc_rewrite *rw, int32_t id, tgc_ref x, int32_t *square) {
    const tgc_node *n = &rw->g->nodes[id];
    double three = 3.0;
    if (tgc_pass_is_op(rw, id, "Pow")) return is_ref_pred(rw, n->inputs[0], &x) && tgc_pass_is_scalar(rw, n->inputs[1], three);
    tgc_ref sq;
    if (!tgc_pass_is_op(rw, id, "Mul") || tgc_pass_match_either(rw, id, is_ref_pred, &x, &sq) < 0) return false;
    const tgc_node *q = &rw->g->nodes[sq.node >= 0 ? sq.node : id];
    if (sq.node < 0 || sq.port != 0 || tgc_pass_only_reader(rw, sq) != id || !tgc_pass_is_op(rw, sq.node, "Mul") ||
        !is_ref_pred(rw, q->inputs[0], &x) || !is_ref_pred(rw, q->inputs[1], &x))
        return false;
    *square = sq.node;
    return true;
}

/* The tanh form's head at node `tanh`: Tanh(sqrt(2/pi) (x + 0.044715 x^3)),
 * x^3 as Pow(x, 3) or x * (x * x), the products and the sum in either
 * operand order. */
static bool tanh_head(const tgc_rewrite *rw, int32_t tanh, tgc_ref *x, int32_t *nodes, int *n) {
    double k = 0.7978845608028654, c = 0.044715;
    tgc_ref in = rw->g->nodes[tanh].inputs[0], sum, cube;
    int32_t scale = in.node;
    if (in.port != 0 || tgc_pass_only_reader(rw, in) != tanh || !tgc_pass_is_op(rw, scale, "Mul") ||
        tgc_pass_match_either(rw, scale, is_scalar_pred, &k, &sum) < 0)
        return false;
    int32_t add = sum.node;
    if (sum.port != 0 || tgc_pass_only_reader(rw, sum) != scale || !tgc_pass_is_op(rw, add, "Add")) return false;
    for (int side = 0; side < 2; side++) {
        tgc_ref cand = rw->g->nodes[add].inputs[side], m = rw->g->nodes[add].inputs[1 - side];
        int32_t mul = m.node;
        if (m.port != 0 || tgc_pass_only_reader(rw, m) != add || !tgc_pass_is_op(rw, mul, "Mul") ||
            tgc_pass_match_either(rw, mul, is_scalar_pred, &c, &cube) < 0)
            continue;
        int32_t pow = cube.node, square = -1;
        if (cube.port != 0 || tgc_pass_only_reader(rw, cube) != mul || !is_cube(rw, pow, cand, &square)) continue;
        *x = cand;
        int32_t chain[] = {pow, mul, add, scale, tanh, square};
        for (int i = 0; i < 5 + (square >= 0); i++) nodes[(*n)++] = chain[i];
        return true;
    }
    return false;
}

/* The tail shared by both forms after `inner` (the Erf or the Tanh):
 * + 1, then the products with x and 0.5 in any of the three associations;
 * the last node in *last. */
static bool tail(const tgc_rewrite *rw, int32_t inner, tgc_ref x, int32_t *nodes, int *n, int32_t *last) {
    if (tgc_graph_ref_info(rw->g, x)->dtype != TGC_FLOAT32) return false;
    double one = 1.0, half = 0.5;
    tgc_ref other;
    int32_t add = tgc_pass_only_reader(rw, out0(inner));
    if (!tgc_pass_is_op(rw, add, "Add") || tgc_pass_match_either(rw, add, is_scalar_pred, &one, &other) < 0 ||
        other.node != inner)
        return false;
    int32_t mul = tgc_pass_only_reader(rw, out0(add));
    tgc_ref a_out = out0(add);
    if (!tgc_pass_is_op(rw, mul, "Mul") || tgc_pass_match_either(rw, mul, is_ref_pred, &a_out, &other) < 0)
        return false;
    nodes[(*n)++] = add;
    nodes[(*n)++] = mul;
    int32_t y = tgc_pass_only_reader(rw, out0(mul));
    tgc_ref m_out = out0(mul), rest;
    if (other.node == x.node && other.port == x.port) { /* (x * (1 + f)) * 0.5 */
        if (!tgc_pass_is_op(rw, y, "Mul") || tgc_pass_match_either(rw, y, is_scalar_pred, &half, &rest) < 0 ||
            rest.node != mul)
            return false;
        nodes[(*n)++] = *last = y;
        return true;
    }
    if (tgc_pass_is_scalar(rw, other, 0.5)) { /* ((1 + f) * 0.5) * x */
        if (!tgc_pass_is_op(rw, y, "Mul") || tgc_pass_match_either(rw, y, is_ref_pred, &m_out, &rest) < 0 ||
            rest.node != x.node || rest.port != x.port)
            return false;
        nodes[(*n)++] = *last = y;
        return true;
    }
    int32_t h = other.node; /* (x * 0.5) * (1 + f) */
    if (other.port != 0 || !tgc_pass_is_op(rw, h, "Mul") || tgc_pass_only_reader(rw, other) != mul ||
        tgc_pass_match_either(rw, h, is_scalar_pred, &half, &rest) < 0 || rest.node != x.node ||
        rest.port != x.port)
        return false;
    nodes[(*n)++] = h;
    *last = mul;
    return true;
}

tgc_status tgc_pass_fuse_gelu(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    for (int32_t i = 0; i < nn; i++) {
        int32_t inner = rw->g->topo[i];
        bool erf = tgc_pass_is_op(rw, inner, "Erf"), tanh = tgc_pass_is_op(rw, inner, "Tanh");
        if ((!erf && !tanh) || rw->g->nodes[inner].n_inputs != 1) continue;
        tgc_ref x;
        int32_t nodes[16], last;
        int n = 0;
        bool head = erf ? erf_head(rw, inner, &x, nodes, &n) : tanh_head(rw, inner, &x, nodes, &n);
        if (!head || !tail(rw, inner, x, nodes, &n, &last)) continue;
        int32_t gelu;
        tgc_status s = tgc_rewrite_add_op(rw, "Gelu", last, &x, 1, 1, &gelu);
        if (s == TGC_OK && tanh) s = tgc_rewrite_set_attr_string(rw, gelu, "approximate", "tanh");
        if (s != TGC_OK) return s;
        tgc_rewrite_replace_uses(rw, out0(last), out0(gelu));
        for (int k = 0; k < n; k++) tgc_rewrite_remove(rw, nodes[k]);
        rw->edits++;
    }
    return TGC_OK;
}
