/* Constant folding. In one topological sweep, each op node is
 *   - a known value: every output a small integer tensor whose elements
 *     inference already knows (shape arithmetic over static shapes); it
 *     becomes an initializer at once, without running anything;
 *   - foldable: deterministic, no control inputs, no subgraphs (a loop
 *     may not end), every input an
 *     initializer or foldable, every output of a static shape and at most
 *     MAX_FOLD_BYTES;
 *   - or neither.
 * The foldable nodes whose values something else reads (or that are graph
 * outputs) are then computed together by one run of a cpu session over the
 * foldable subgraph (the kernels a run would use: same results), and
 * become initializers. Should that run fail (a constant subgraph that would
 * fail at run time too), nothing is folded: the run reports it then, with
 * the node's name. */
#include "passes/pass.h"

#include "devices/backend.h"
#include "graph/subgraph.h"

#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

#define MAX_FOLD_BYTES ((int64_t)10 << 20)

enum { NOT_CONST, IS_CONST, FOLDABLE };

static bool small_known_value(const tgc_tensor_info *o) {
    if ((o->dtype != TGC_INT64 && o->dtype != TGC_INT32) || o->value_len < 0 || !tgc_shape_known(&o->shape) ||
        o->shape.rank > 1 || tgc_shape_numel(&o->shape) != o->value_len)
        return false;
    for (int i = 0; i < o->value_len; i++)
        if (!tgc_dim_known(o->value[i])) return false;
    return true;
}

/* Static, at most MAX_FOLD_BYTES, and plain bytes (a string tensor's
 * elements are pointers its buffer owns: never folded). */
static bool static_and_small(const tgc_tensor_info *o) {
    if (o->dtype == TGC_STRING) return false;
    int64_t numel = tgc_shape_numel(&o->shape);
    size_t elem = tgc_dtype_size(o->dtype);
    return numel >= 0 && elem > 0 && numel <= MAX_FOLD_BYTES / (int64_t)elem;
}

/* Replaces node id, whose every output is a known small integer tensor,
 * by initializers. */
static tgc_status fold_known(tgc_rewrite *rw, int32_t id) {
    int n_outputs = rw->g->nodes[id].n_outputs;
    for (int k = 0; k < n_outputs; k++) {
        const tgc_node *n = &rw->g->nodes[id];
        const tgc_tensor_info *o = &n->outputs[k];
        tgc_const *c = tgc_pass_new_const(o->dtype, &o->shape, n->pos);
        if (c == NULL) return TGC_ERR_NOMEM;
        for (int i = 0; i < o->value_len; i++) {
            if (o->dtype == TGC_INT64) ((int64_t *)c->data)[i] = o->value[i].v;
            else ((int32_t *)c->data)[i] = (int32_t)o->value[i].v;
        }
        char base[300];
        snprintf(base, sizeof base, "%s_out%d", n->name, k);
        int32_t cid;
        tgc_status s = tgc_rewrite_add_const(rw, k == 0 ? id : -1, base, c, &cid);
        if (s != TGC_OK) return s;
        tgc_rewrite_replace_uses(rw, (tgc_ref){id, k, {0, 0}}, (tgc_ref){cid, 0, {0, 0}});
    }
    tgc_rewrite_remove(rw, id);
    rw->edits++;
    return TGC_OK;
}

/* The foldable subgraph as a graph of its own: the initializers it reads,
 * its nodes, and as outputs the values in `wanted` (n_wanted of them). */
static tgc_graph *foldable_subgraph(const tgc_rewrite *rw, const unsigned char *state, int32_t nn,
                                    const tgc_ref *wanted, int n_wanted) {
    const tgc_graph *g = rw->g;
    tgc_graph *sub = tgc_rewrite_empty_like(g);
    int32_t *map = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *map);
    bool ok = sub != NULL && map != NULL;
    for (int32_t id = 0; ok && id < g->n_nodes; id++) map[id] = -1;
    /* Initializers first, then ops, as the IR orders them. */
    for (int pass = 0; pass < 2 && ok; pass++)
        for (int32_t i = 0; ok && i < nn; i++) {
            int32_t id = g->topo[i];
            if (rw->removed[id] || state[id] != FOLDABLE) continue;
            const tgc_node *n = &g->nodes[id];
            for (int k = 0; ok && k < n->n_inputs; k++) {
                int32_t in = n->inputs[k].node;
                if (in < 0 || map[in] >= 0 || g->nodes[in].kind != TGC_NODE_CONST) continue;
                if (pass != 0) continue;
                ok = tgc_graph_add_node(sub, g->nodes[in].name, TGC_NODE_CONST, &map[in]) == TGC_OK &&
                     tgc_node_copy_body(&sub->nodes[map[in]], &g->nodes[in]) == TGC_OK;
            }
            if (pass == 0 || !ok) continue;
            ok = tgc_graph_add_node(sub, n->name, TGC_NODE_OP, &map[id]) == TGC_OK;
            tgc_node *m = ok ? &sub->nodes[map[id]] : NULL;
            if (ok) ok = tgc_node_copy_body(m, n) == TGC_OK;
            if (ok && n->n_inputs > 0) ok = (m->inputs = tgc_malloc((size_t)n->n_inputs * sizeof *m->inputs)) != NULL;
            for (int k = 0; ok && k < n->n_inputs; k++) {
                m->inputs[k] = n->inputs[k];
                if (n->inputs[k].node >= 0) m->inputs[k].node = map[n->inputs[k].node];
                m->n_inputs = k + 1;
            }
            if (ok) {
                tgc_free(m->device); /* evaluated on the cpu whatever it asked for */
                m->device = NULL;
            }
        }
    if (ok) ok = (sub->outputs = tgc_malloc(((size_t)n_wanted + 1) * sizeof *sub->outputs)) != NULL;
    for (int i = 0; ok && i < n_wanted; i++) sub->outputs[sub->n_outputs++] = (tgc_ref){map[wanted[i].node], wanted[i].port, {0, 0}};
    if (ok) ok = (sub->topo = tgc_malloc(((size_t)sub->n_nodes + 1) * sizeof *sub->topo)) != NULL;
    for (int32_t k = 0; ok && k < sub->n_nodes; k++) sub->topo[k] = k;
    tgc_free(map);
    if (!ok) {
        tgc_graph_free(sub);
        return NULL;
    }
    return sub;
}

/* Runs sub once on the host's cpu, one thread; the output tensors go to
 * values[]. TGC_OK, TGC_ERR_NOMEM, or another status when the run fails
 * (values all NULL). */
static tgc_status evaluate(const tgc_graph *sub, tgc_tensor **values) {
    tgc_diags *quiet = tgc_diags_create();
    if (quiet == NULL) return TGC_ERR_NOMEM;
    char threads[32];
    snprintf(threads, sizeof threads, "%s=1", tgc_default_device_list());
    tgc_session_options opts = {.threads = threads, .optimize = TGC_OPTIMIZE_NONE};
    tgc_session *s = NULL;
    tgc_status st = tgc_session_create(sub, tgc_default_device_list(), &opts, quiet, &s);
    if (st == TGC_OK) st = tgc_session_run(s, 0, NULL, NULL, values, quiet);
    tgc_session_free(s);
    tgc_diags_free(quiet);
    return st;
}

static tgc_const *const_of_tensor(const tgc_tensor *t, tgc_srcpos pos) {
    tgc_shape shape = tgc_shape_of(tgc_tensor_rank(t), tgc_tensor_dims(t));
    tgc_const *c = tgc_pass_new_const(tgc_tensor_dtype(t), &shape, pos);
    if (c != NULL && c->nbytes > 0) memcpy(c->data, tgc_tensor_data(t), c->nbytes);
    return c;
}

typedef struct ref_list {
    tgc_ref *refs;
    int n, cap;
} ref_list;

/* Adds r to the list unless it is there. TGC_OK or TGC_ERR_NOMEM. */
static tgc_status add_once(ref_list *l, tgc_ref r) {
    for (int i = 0; i < l->n; i++)
        if (l->refs[i].node == r.node && l->refs[i].port == r.port) return TGC_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        tgc_ref *more = tgc_realloc(l->refs, (size_t)cap * sizeof *more);
        if (more == NULL) return TGC_ERR_NOMEM;
        l->refs = more;
        l->cap = cap;
    }
    l->refs[l->n++] = r;
    return TGC_OK;
}

static bool is_foldable(const unsigned char *state, int32_t nn, tgc_ref r) {
    return r.node >= 0 && r.node < nn && state[r.node] == FOLDABLE;
}

/* Computes the foldable values that others read and puts initializers in
 * their place. */
static tgc_status fold_run(tgc_rewrite *rw, const unsigned char *state, int32_t nn) {
    tgc_graph *g = rw->g;
    ref_list wanted_list = {0};
    tgc_status s = TGC_OK;
    /* A foldable value is wanted when a node that stays, or a graph output, reads it. */
    for (int i = 0; s == TGC_OK && i < g->n_outputs; i++)
        if (is_foldable(state, nn, g->outputs[i])) s = add_once(&wanted_list, g->outputs[i]);
    for (int32_t id = 0; s == TGC_OK && id < g->n_nodes; id++) {
        if (rw->removed[id] || is_foldable(state, nn, (tgc_ref){id, 0, {0, 0}})) continue;
        const tgc_node *n = &g->nodes[id];
        for (int k = 0; s == TGC_OK && k < n->n_inputs; k++)
            if (is_foldable(state, nn, n->inputs[k])) s = add_once(&wanted_list, n->inputs[k]);
    }
    tgc_ref *wanted = wanted_list.refs;
    int n_wanted = wanted_list.n;
    if (s != TGC_OK || n_wanted == 0) {
        tgc_free(wanted);
        return s;
    }
    tgc_graph *sub = foldable_subgraph(rw, state, nn, wanted, n_wanted);
    tgc_tensor **values = tgc_calloc((size_t)n_wanted, sizeof *values);
    if (sub == NULL || values == NULL) s = TGC_ERR_NOMEM;
    tgc_status run = s == TGC_OK ? evaluate(sub, values) : s;
    if (run == TGC_ERR_NOMEM) s = run;
    for (int i = 0; s == TGC_OK && run == TGC_OK && i < n_wanted; i++) {
        tgc_ref r = wanted[i];
        tgc_const *c = const_of_tensor(values[i], g->nodes[r.node].pos);
        if (c == NULL) {
            s = TGC_ERR_NOMEM;
            break;
        }
        char base[300];
        snprintf(base, sizeof base, "%s_out%d", g->nodes[r.node].name, r.port);
        int32_t cid;
        s = tgc_rewrite_add_const(rw, r.port == 0 ? r.node : -1, base, c, &cid);
        if (s == TGC_OK) tgc_rewrite_replace_uses(rw, r, (tgc_ref){cid, 0, {0, 0}});
    }
    if (s == TGC_OK && run == TGC_OK)
        for (int32_t id = 0; id < nn; id++)
            if (state[id] == FOLDABLE) {
                tgc_rewrite_remove(rw, id);
                rw->edits++;
            }
    for (int i = 0; values != NULL && i < n_wanted; i++) tgc_tensor_release(values[i]);
    tgc_free(values);
    tgc_graph_free(sub);
    tgc_free(wanted);
    return s;
}

tgc_status tgc_pass_fold_constants(tgc_rewrite *rw) {
    int32_t nn = rw->g->n_nodes;
    unsigned char *state = tgc_calloc((size_t)nn + 1, 1);
    if (state == NULL) return TGC_ERR_NOMEM;
    tgc_status s = TGC_OK;
    int32_t foldable = 0;
    for (int32_t i = 0; s == TGC_OK && i < nn; i++) {
        int32_t id = rw->g->topo[i];
        const tgc_node *n = &rw->g->nodes[id];
        if (n->kind == TGC_NODE_CONST) state[id] = IS_CONST;
        /* Control flow is never run at compile time: a loop may not end. */
        if (n->kind != TGC_NODE_OP || n->n_controls > 0 || tgc_pass_op_is_stateful(n->op_name) ||
            tgc_node_has_subgraphs(n))
            continue;
        bool known = n->n_outputs > 0, small = true, inputs_const = true;
        for (int k = 0; k < n->n_outputs; k++) {
            known &= small_known_value(&n->outputs[k]);
            small &= static_and_small(&n->outputs[k]);
        }
        for (int k = 0; k < n->n_inputs; k++) {
            int32_t in = n->inputs[k].node;
            if (in < 0) continue;
            if (in >= nn) continue; /* an initializer made by fold_known */
            inputs_const &= state[in] != NOT_CONST;
        }
        if (known) {
            s = fold_known(rw, id);
        } else if (inputs_const && small) {
            state[id] = FOLDABLE;
            foldable++;
        }
    }
    if (s == TGC_OK && foldable > 0) s = fold_run(rw, state, nn);
    tgc_free(state);
    return s;
}
