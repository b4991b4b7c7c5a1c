/* Constant folding. In one topological sweep, each op node is
 *   - a known value: every output a small integer tensor whose elements
 *     inference already knows (shape arithmetic over static shapes); it
 *     becomes an initializer at once, without running anything;
 *   - foldable: deterministic, no control inputs, no subgraphs (control
 *     flow is never run at compile time: a loop may not end), every input
 *     an initializer or foldable, every output of a static shape and at
 *     most MAX_FOLD_BYTES, or no larger than the initializers that only
 *     it reads (frees_as_much: a Transpose of a large weight);
 *   - or neither.
 * A sequence or an optional is folded only inside the foldable part (an
 * initializer holds a tensor): where something else reads one, its
 * producer and what is computed from it stay.
 * The foldable nodes are then computed one by one in topological order on
 * a cpu device of the fold's own, one thread, each through the steps every
 * node run takes (devices/node_exec.h: the kernels a run would use, so the
 * same results), each value released after its last reader; those whose
 * values something else reads (or that are graph outputs) become
 * initializers. Should a node fail (a constant subgraph that would fail at
 * run time too, or an op with no cpu kernel), nothing is folded: the run
 * reports it then, with the node's name. */
#include "passes/pass.h"

#include "devices/node_exec.h"
#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/string_slots.h"

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

/* Whether op node id, with outputs past MAX_FOLD_BYTES, holds no more
 * once folded than it frees: its outputs (static) take at most the bytes
 * of the initializers that only it reads, which then go (a Transpose or a
 * Reshape of a weight, a Cast to a narrower type). Folded, the work is
 * done once at session creation, not at every run. */
static bool frees_as_much(const tgc_rewrite *rw, int32_t id, const unsigned char *state, int32_t nn) {
    const tgc_node *n = &rw->g->nodes[id];
    int64_t out = 0, freed = 0;
    for (int k = 0; k < n->n_outputs; k++) {
        int64_t numel = tgc_shape_numel(&n->outputs[k].shape);
        size_t elem = tgc_dtype_size(n->outputs[k].dtype);
        if (numel < 0 || elem == 0 || n->outputs[k].dtype == TGC_STRING || numel > INT64_MAX / 4 / (int64_t)elem)
            return false;
        out += numel * (int64_t)elem;
    }
    for (int k = 0; k < n->n_inputs; k++) {
        tgc_ref r = n->inputs[k];
        if (r.node < 0 || r.node >= nn || state[r.node] != IS_CONST || tgc_rewrite_uses(rw, r) != 1) continue;
        const tgc_const *c = tgc_pass_const_of(rw, r);
        if (c != NULL && c->nbytes <= (size_t)(INT64_MAX / 4)) freed += (int64_t)c->nbytes;
    }
    return out <= freed;
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

/* Initializer c as a value on host-memory device d (*v; the caller
 * releases v->buf): its data borrowed (c outlives the fold, and no node
 * overwrites an input: nothing is forwarded), a string tensor's slots
 * copied. TGC_OK or TGC_ERR_NOMEM. */
static tgc_status const_value(tgc_device *d, const tgc_const *c, tgc_value *v) {
    v->dtype = c->dtype;
    v->rank = c->shape.rank;
    for (int i = 0; i < v->rank; i++) v->dims[i] = c->shape.dims[i].v;
    if (c->dtype != TGC_STRING && c->nbytes > 0) return tgc_buffer_borrow_host(d, c->data, c->nbytes, &v->buf);
    tgc_status s = tgc_buffer_alloc_typed(d, c->dtype, c->nbytes, &v->buf);
    if (s == TGC_OK && c->nbytes > 0)
        s = tgc_string_slots_copy(tgc_buffer_host_ptr(v->buf), c->data, c->nbytes / sizeof(char *));
    return s;
}

/* The values of an evaluation: a slot per output of every node of g (the
 * initializers fold_known added included), each with its readers still
 * to come. */
typedef struct fold_values {
    int32_t *base; /* node id -> its first slot */
    tgc_value *vals;
    int *uses;
    int *wanted_at; /* slot -> its index among the wanted values, -1 */
    int32_t n_slots;
} fold_values;

static void values_release(fold_values *fv) {
    for (int32_t i = 0; fv->vals != NULL && i < fv->n_slots; i++) tgc_buffer_release(fv->vals[i].buf);
    tgc_free(fv->base);
    tgc_free(fv->vals);
    tgc_free(fv->uses);
    tgc_free(fv->wanted_at);
}

/* Slots for g's values, their readers among the foldable nodes and the
 * wanted values counted, and the initializers those nodes read loaded on
 * d. TGC_OK or TGC_ERR_NOMEM (then values_release frees what was made). */
static tgc_status values_init(fold_values *fv, const tgc_graph *g, const unsigned char *state, int32_t nn,
                              const tgc_ref *wanted, int n_wanted, tgc_device *d) {
    if ((fv->base = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *fv->base)) == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        fv->base[id] = fv->n_slots;
        fv->n_slots += g->nodes[id].n_outputs;
    }
    fv->vals = tgc_calloc((size_t)fv->n_slots + 1, sizeof *fv->vals);
    fv->uses = tgc_calloc((size_t)fv->n_slots + 1, sizeof *fv->uses);
    fv->wanted_at = tgc_malloc(((size_t)fv->n_slots + 1) * sizeof *fv->wanted_at);
    if (fv->vals == NULL || fv->uses == NULL || fv->wanted_at == NULL) return TGC_ERR_NOMEM;
    for (int32_t i = 0; i < fv->n_slots; i++) fv->wanted_at[i] = -1;
    for (int i = 0; i < n_wanted; i++) {
        int32_t slot = fv->base[wanted[i].node] + wanted[i].port;
        fv->uses[slot]++;
        fv->wanted_at[slot] = i;
    }
    for (int32_t id = 0; id < nn; id++) {
        if (state[id] != FOLDABLE) continue;
        const tgc_node *n = &g->nodes[id];
        for (int k = 0; k < n->n_inputs; k++) {
            tgc_ref r = n->inputs[k];
            if (r.node < 0) continue;
            int32_t slot = fv->base[r.node] + r.port;
            fv->uses[slot]++;
            if (g->nodes[r.node].kind != TGC_NODE_CONST || fv->vals[slot].buf != NULL) continue;
            tgc_status s = const_value(d, g->nodes[r.node].data, &fv->vals[slot]);
            if (s != TGC_OK) return s;
        }
    }
    return TGC_OK;
}

/* Runs foldable node id of g on d, its outputs into their slots; each
 * input (and output) no one reads any more is released. TGC_OK;
 * TGC_ERR_NOMEM; TGC_ERR_UNSUPPORTED (no cpu kernel) or the run's status. */
static tgc_status run_node(const tgc_graph *g, int32_t id, tgc_device *d, fold_values *fv) {
    const tgc_node *n = &g->nodes[id];
    const tgc_kernel_def *k = tgc_kernel_for_node(g, n, d->kind);
    if (k == NULL) return TGC_ERR_UNSUPPORTED;
    tgc_value *in = tgc_malloc(((size_t)n->n_inputs + 1) * sizeof *in);
    if (in == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < n->n_inputs; i++)
        in[i] = n->inputs[i].node >= 0 ? fv->vals[fv->base[n->inputs[i].node] + n->inputs[i].port]
                                       : (tgc_value){.dtype = TGC_DTYPE_INVALID};
    char err[512]; /* the reason is not shown: a run reports it, with the node's name */
    tgc_value *out = &fv->vals[fv->base[id]];
    tgc_status s = tgc_node_exec_run(g, n, k, d, in, out, TGC_NODE_INFER_VALUES | TGC_NODE_INFER_GRAPH_KINDS, err,
                                     sizeof err);
    tgc_free(in);
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i].node < 0) continue;
        int32_t slot = fv->base[n->inputs[i].node] + n->inputs[i].port;
        if (--fv->uses[slot] > 0) continue;
        tgc_buffer_release(fv->vals[slot].buf);
        fv->vals[slot].buf = NULL;
    }
    for (int k2 = 0; s == TGC_OK && k2 < n->n_outputs; k2++)
        if (fv->uses[fv->base[id] + k2] == 0) {
            tgc_buffer_release(out[k2].buf);
            out[k2].buf = NULL;
        }
    return s;
}

/* A new initializer holding value v (a tensor in host memory), or NULL when
 * out of memory. */
static tgc_const *const_of_value(const tgc_value *v, tgc_srcpos pos) {
    tgc_shape shape = tgc_shape_of(v->rank, v->dims);
    tgc_const *c = tgc_pass_new_const(v->dtype, &shape, pos);
    if (c != NULL && c->nbytes > 0) memcpy(c->data, tgc_buffer_host_ptr(v->buf), c->nbytes);
    return c;
}

/* Node id's wanted outputs (just computed) into consts, each slot then
 * released unless a foldable node still reads it. */
static tgc_status take_wanted(const tgc_graph *g, int32_t id, fold_values *fv, tgc_const **consts) {
    for (int k = 0; k < g->nodes[id].n_outputs; k++) {
        int32_t slot = fv->base[id] + k;
        if (fv->wanted_at[slot] < 0) continue;
        const tgc_value *v = &fv->vals[slot];
        if (tgc_value_is_list(v) || v->dtype == TGC_STRING) return TGC_ERR_UNSUPPORTED; /* foldable says never */
        if ((consts[fv->wanted_at[slot]] = const_of_value(v, g->nodes[id].pos)) == NULL) return TGC_ERR_NOMEM;
        if (--fv->uses[slot] > 0) continue;
        tgc_buffer_release(fv->vals[slot].buf);
        fv->vals[slot].buf = NULL;
    }
    return TGC_OK;
}

/* The foldable nodes of g (state, over its first nn nodes) in the order
 * they run, into order[] (nn slots; *count of them used): depth first from
 * each wanted value, a node after the producers of its inputs (foldable
 * nodes have no control inputs and no subgraphs: their inputs are all they
 * depend on), so that each chain of constant nodes is computed, taken and
 * let go before the next one starts; then the foldable nodes no wanted
 * value needs, in topological order. TGC_OK or TGC_ERR_NOMEM. */
static tgc_status run_order(const tgc_graph *g, const unsigned char *state, int32_t nn, const tgc_ref *wanted,
                            int n_wanted, int32_t *order, int32_t *count) {
    typedef struct frame {
        int32_t node;
        int next_input;
    } frame;
    frame *stack = tgc_malloc(((size_t)nn + 1) * sizeof *stack);
    unsigned char *seen = tgc_calloc((size_t)nn + 1, 1);
    if (stack == NULL || seen == NULL) {
        tgc_free(stack), tgc_free(seen);
        return TGC_ERR_NOMEM;
    }
    *count = 0;
    for (int w = 0; w < n_wanted; w++) {
        if (seen[wanted[w].node]) continue;
        seen[wanted[w].node] = 1; /* wanted values come from foldable nodes */
        stack[0] = (frame){wanted[w].node, 0};
        for (int depth = 1; depth > 0;) {
            frame *f = &stack[depth - 1];
            const tgc_node *n = &g->nodes[f->node];
            if (f->next_input < n->n_inputs) {
                int32_t from = n->inputs[f->next_input++].node;
                if (from >= 0 && from < nn && state[from] == FOLDABLE && !seen[from]) {
                    seen[from] = 1; /* each node enters the stack once: depth <= nn */
                    stack[depth++] = (frame){from, 0};
                }
                continue;
            }
            order[(*count)++] = f->node;
            depth--;
        }
    }
    for (int32_t i = 0; i < nn; i++)
        if (state[g->topo[i]] == FOLDABLE && !seen[g->topo[i]]) order[(*count)++] = g->topo[i];
    tgc_free(stack);
    tgc_free(seen);
    return TGC_OK;
}

/* Computes the foldable nodes of g (state, over its first nn nodes) one
 * by one (run_order) on a cpu device of its own, one thread; consts[i]
 * (NULL on entry; the caller frees them) receives wanted[i]'s value as
 * soon as it is computed, and each value's buffer goes as soon as nothing
 * reads it: the fold holds each wanted value once, not once in its buffers
 * and once more in the initializers (a float16 model's weights cast to
 * float32 would otherwise be held twice over). TGC_OK; TGC_ERR_NOMEM;
 * another status when a node cannot run (consts then all NULL). Every
 * buffer is released before it returns. */
static tgc_status evaluate(const tgc_graph *g, const unsigned char *state, int32_t nn, const tgc_ref *wanted,
                           int n_wanted, tgc_const **consts) {
    tgc_device *cpu = tgc_backend_open_host(0);
    if (cpu == NULL) return TGC_ERR_NOMEM;
    fold_values fv = {0};
    int32_t *order = tgc_malloc(((size_t)nn + 1) * sizeof *order), count = 0;
    tgc_status s = order != NULL ? values_init(&fv, g, state, nn, wanted, n_wanted, cpu) : TGC_ERR_NOMEM;
    if (s == TGC_OK) s = run_order(g, state, nn, wanted, n_wanted, order, &count);
    for (int32_t i = 0; s == TGC_OK && i < count; i++)
        if ((s = run_node(g, order[i], cpu, &fv)) == TGC_OK) s = take_wanted(g, order[i], &fv, consts);
    tgc_free(order);
    for (int i = 0; s != TGC_OK && i < n_wanted; i++) {
        tgc_const_free(consts[i]);
        consts[i] = NULL;
    }
    values_release(&fv);
    tgc_device_destroy(cpu);
    return s;
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
    tgc_const **consts = tgc_calloc((size_t)n_wanted, sizeof *consts);
    if (consts == NULL) s = TGC_ERR_NOMEM;
    tgc_status run = s == TGC_OK ? evaluate(g, state, nn, wanted, n_wanted, consts) : s;
    if (run == TGC_ERR_NOMEM) s = run;
    for (int i = 0; s == TGC_OK && run == TGC_OK && i < n_wanted; i++) {
        tgc_ref r = wanted[i];
        char base[300];
        snprintf(base, sizeof base, "%s_out%d", g->nodes[r.node].name, r.port);
        int32_t cid;
        s = tgc_rewrite_add_const(rw, r.port == 0 ? r.node : -1, base, consts[i], &cid); /* takes consts[i] */
        consts[i] = NULL;
        if (s == TGC_OK) tgc_rewrite_replace_uses(rw, r, (tgc_ref){cid, 0, {0, 0}});
    }
    if (s == TGC_OK && run == TGC_OK)
        for (int32_t id = 0; id < nn; id++)
            if (state[id] == FOLDABLE) {
                tgc_rewrite_remove(rw, id);
                rw->edits++;
            }
    for (int i = 0; consts != NULL && i < n_wanted; i++) tgc_const_free(consts[i]);
    tgc_free(consts);
    tgc_free(wanted);
    return s;
}

/* Leaves foldable r's producer to run (state NOT_CONST) when r is a
 * sequence or an optional; true if it did. */
static bool keep_if_list(const tgc_graph *g, unsigned char *state, int32_t nn, tgc_ref r) {
    if (!is_foldable(state, nn, r) || tgc_graph_ref_info(g, r)->kind == TGC_KIND_TENSOR) return false;
    state[r.node] = NOT_CONST;
    return true;
}

/* The sequences and optionals that a node that stays (or a graph output)
 * would read from the foldable part stay computed at run time, with every
 * foldable node computed from them, until no such read is left. Returns
 * how many nodes stay foldable. */
static int32_t keep_lists(const tgc_rewrite *rw, unsigned char *state, int32_t nn) {
    const tgc_graph *g = rw->g;
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < g->n_outputs; i++) changed |= keep_if_list(g, state, nn, g->outputs[i]);
        for (int32_t id = 0; id < g->n_nodes; id++) {
            if (rw->removed[id] || is_foldable(state, nn, (tgc_ref){id, 0, {0, 0}})) continue;
            for (int k = 0; k < g->nodes[id].n_inputs; k++)
                changed |= keep_if_list(g, state, nn, g->nodes[id].inputs[k]);
        }
        for (int32_t i = 0; i < nn; i++) { /* what reads a node that stays stays too */
            int32_t id = g->topo[i];
            for (int k = 0; state[id] == FOLDABLE && k < g->nodes[id].n_inputs; k++) {
                tgc_ref r = g->nodes[id].inputs[k];
                if (r.node >= 0 && r.node < nn && state[r.node] == NOT_CONST) {
                    state[id] = NOT_CONST;
                    changed = true;
                }
            }
        }
    }
    int32_t foldable = 0;
    for (int32_t id = 0; id < nn; id++) foldable += state[id] == FOLDABLE;
    return foldable;
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
        } else if (inputs_const && (small || frees_as_much(rw, id, state, nn))) {
            state[id] = FOLDABLE;
            foldable++;
        }
    }
    if (s == TGC_OK && foldable > 0) foldable = keep_lists(rw, state, nn);
    if (s == TGC_OK && foldable > 0) s = fold_run(rw, state, nn);
    tgc_free(state);
    return s;
}
