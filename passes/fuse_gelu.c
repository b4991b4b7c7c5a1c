/* GELU recognized from its decomposed form (see pass.h): starting at each
 * Erf, walk down the only readers: the scaling of x before it, the + 1
 * after it, and the two products with x and 0.5 in any of the three ways
 * exporters associate them:
 *     ((x * (1 + erf)) * 0.5)    ((1 + erf) * 0.5) * x    (x * 0.5) * (1 + erf)
 * The Gelu node takes the last product's name. */
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

/* Matches the pattern at `erf`: the nodes to remove in nodes[], the input x
 * and the last node (whose output becomes Gelu's). */
static bool match(const tgc_rewrite *rw, int32_t erf, tgc_ref *x, int32_t *nodes, int *n, int32_t *last) {
    tgc_ref t = rw->g->nodes[erf].inputs[0];
    if (t.node < 0 || t.port != 0 || tgc_pass_only_reader(rw, t) != erf) return false;
    *x = scaled_input(rw, t.node);
    if (x->node < 0 || tgc_graph_ref_info(rw->g, *x)->dtype != TGC_FLOAT32) return false;
    double one = 1.0, half = 0.5;
    tgc_ref other;
    int32_t add = tgc_pass_only_reader(rw, out0(erf));
    if (!tgc_pass_is_op(rw, add, "Add") || tgc_pass_match_either(rw, add, is_scalar_pred, &one, &other) < 0 ||
        other.node != erf)
        return false;
    int32_t mul = tgc_pass_only_reader(rw, out0(add));
    tgc_ref a_out = out0(add);
    if (!tgc_pass_is_op(rw, mul, "Mul") || tgc_pass_match_either(rw, mul, is_ref_pred, &a_out, &other) < 0)
        return false;
    *n = 0;
    nodes[(*n)++] = t.node;
    nodes[(*n)++] = erf;
    nodes[(*n)++] = add;
    nodes[(*n)++] = mul;
    int32_t y = tgc_pass_only_reader(rw, out0(mul));
    tgc_ref m_out = out0(mul), rest;
    if (other.node == x->node && other.port == x->port) { /* (x * (1 + erf)) * 0.5 */
        if (!tgc_pass_is_op(rw, y, "Mul") || tgc_pass_match_either(rw, y, is_scalar_pred, &half, &rest) < 0 ||
            rest.node != mul)
            return false;
        nodes[(*n)++] = *last = y;
        return true;
    }
    if (tgc_pass_is_scalar(rw, other, 0.5)) { /* ((1 + erf) * 0.5) * x */
        if (!tgc_pass_is_op(rw, y, "Mul") || tgc_pass_match_either(rw, y, is_ref_pred, &m_out, &rest) < 0 ||
            rest.node != x->node || rest.port != x->port)
            return false;
        nodes[(*n)++] = *last = y;
        return true;
    }
    int32_t h = other.node; /* (x * 0.5) * (1 + erf) */
    if (other.port != 0 || !tgc_pass_is_op(rw, h, "Mul") || tgc_pass_only_reader(rw, other) != mul ||
        tgc_pass_match_either(rw, h, is_scalar_pred, &half, &rest) < 0 || rest.node != x->node ||
        rest.port != x->port)
        return false;
    nodes[(*n)++] = h;
    *last = mul;
    return true;
}

tgc_status tgc_pass_fuse_gelu(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    for (int32_t i = 0; i < nn; i++) {
        int32_t erf = rw->g->topo[i];
        if (!tgc_pass_is_op(rw, erf, "Erf") || rw->g->nodes[erf].n_inputs != 1) continue;
        tgc_ref x;
        int32_t nodes[6], last;
        int n = 0;
        if (!match(rw, erf, &x, nodes, &n, &last)) continue;
        int32_t gelu;
        tgc_status s = tgc_rewrite_add_op(rw, "Gelu", last, &x, 1, 1, &gelu);
        if (s != TGC_OK) return s;
        tgc_rewrite_replace_uses(rw, out0(last), out0(gelu));
        for (int k = 0; k < n; k++) tgc_rewrite_remove(rw, nodes[k]);
        rw->edits++;
    }
    return TGC_OK;
}
