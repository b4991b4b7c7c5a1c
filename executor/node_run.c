/* Running one kernel node of a step: its inputs from the step's slots, the
 * steps every node run shares (devices/node_exec.h: staging, inference over
 * the actual inputs, allocation, the kernel), and what only a graph step
 * does: static shapes taken from the plan, an input's buffer forwarded to
 * the output when this node is its last user, absorbed activations, the
 * memory watch and the test hooks. */
#include "executor/step.h"

#include "devices/node_exec.h"
#include "executor/concat_in_place.h"
#include "support/alloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>

/* The outputs' dtypes and shapes as the graph has them, for a node whose
 * shapes are all static (tgc_plan.static_shapes), after checking that its
 * inputs have theirs; false (nothing set) where one differs, and runtime
 * inference decides. */
static bool static_outputs(const tgc_graph *g, const tgc_node *n, const tgc_value *in, tgc_value *out) {
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i].node < 0) { /* omitted: nothing fed */
            if (in[i].dtype != TGC_DTYPE_INVALID) return false;
            continue;
        }
        const tgc_tensor_info *info = tgc_graph_ref_info(g, n->inputs[i]);
        if (in[i].dtype != info->dtype || in[i].rank != info->shape.rank) return false;
        for (int d = 0; d < in[i].rank; d++)
            if (in[i].dims[d] != info->shape.dims[d].v) return false;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        out[k].dtype = n->outputs[k].dtype;
        out[k].rank = n->outputs[k].shape.rank;
        for (int d = 0; d < out[k].rank; d++) out[k].dims[d] = n->outputs[k].shape.dims[d].v;
    }
    return true;
}

/* Output 0 may take input j's buffer when this node is its last user and
 * only the run holds it (not a weight, not a feed, not a part of another
 * buffer unless `view_ok`) and the sizes match. */
static bool can_forward(tgc_part_state *ps, const tgc_node *n, int j, const tgc_value *out,
                        const tgc_device *out_device, bool view_ok) {
    if (j < 0 || j >= n->n_inputs || n->inputs[j].node < 0) return false;
    tgc_ref ref = n->inputs[j];
    int32_t slot = ps->plan->value_base[ref.node] + ref.port;
    int uses_here = 0;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node == ref.node && n->inputs[i].port == ref.port) uses_here++;
    const tgc_value *in = &ps->vals[slot];
    return in->buf != NULL && in->buf->device == out_device && atomic_load(&ps->remaining[slot]) == uses_here &&
           atomic_load(&in->buf->refs) == 1 && (view_ok || !tgc_buffer_is_concat_view(in->buf)) &&
           in->buf->nbytes == tgc_value_nbytes(out) && in->dtype == out->dtype;
}

/* The whole buffer of in-place Concat output slot w (concat_in_place.h):
 * made by the first writer of a part to ask (a view of its own whole
 * when w is a part of a later Concat, else a new buffer), kept in w's
 * slot, counted by the memory watch from then on. Call with the plan's
 * places_lock. */
static tgc_status whole_buffer_locked(tgc_step *st, tgc_part_state *ps, int32_t w, tgc_buffer **out) {
    const tgc_concat_place *pl = &ps->plan->places[w];
    tgc_buffer *b = ps->vals[w].buf;
    tgc_status s = TGC_OK;
    if (b == NULL && pl->into >= 0) {
        tgc_buffer *outer;
        s = whole_buffer_locked(st, ps, pl->into, &outer);
        if (s == TGC_OK) s = tgc_concat_view(outer, pl->offset, pl->bytes, &b);
    } else if (b == NULL) {
        s = tgc_buffer_alloc(ps->plan->device, (size_t)pl->bytes, &b);
    } else {
        *out = b;
        return TGC_OK;
    }
    if (s != TGC_OK) return s;
    const tgc_tensor_info *info = &ps->plan->g->nodes[pl->node].outputs[0]; /* known dims (the memory report's) */
    tgc_value *v = &ps->vals[w];
    v->buf = b;
    v->dtype = info->dtype;
    v->rank = info->shape.rank;
    for (int d = 0; d < v->rank; d++) v->dims[d] = info->shape.dims[d].v;
    tgc_watch_set(st, ps, w, pl->node);
    *out = b;
    return TGC_OK;
}

/* whole_buffer_locked under the lock, so that two writers of one Concat
 * running at once never both allocate its whole (the loser's, freed at
 * once, still raised the device's peak by a whole). */
static tgc_status whole_buffer(tgc_step *st, tgc_part_state *ps, int32_t w, tgc_buffer **out) {
    pthread_mutex_lock(&ps->plan->places_lock);
    tgc_status s = whole_buffer_locked(st, ps, w, out);
    pthread_mutex_unlock(&ps->plan->places_lock);
    return s;
}

/* Outputs of n that lie in an in-place Concat's buffer: the Concat takes
 * the whole from its slot (*took_whole), a part's writer gets a view of
 * its place, or takes over its forwarded input where that already lies
 * there (*forwarded); where it lies there but cannot be taken over, the
 * output gets a buffer of its own (never the memory it reads). An output
 * whose shape is not the plan's gets its own buffer too. */
static tgc_status place_outputs(tgc_step *st, tgc_part_state *ps, int32_t id, const tgc_kernel_def *k,
                                tgc_device *d, tgc_value *out, bool *forwarded, bool *took_whole) {
    const tgc_node *n = &ps->plan->g->nodes[id];
    int32_t base = ps->plan->value_base[id];
    for (int i = 0; i < n->n_outputs; i++) {
        int32_t v = base + i;
        const tgc_concat_place *pl = &ps->plan->places[v];
        if (!pl->whole && pl->into < 0) continue;
        if (tgc_value_nbytes(&out[i]) != (size_t)pl->bytes) {
            if (pl->whole) { /* its writers' parts keep it alive as long as they need it */
                tgc_watch_release(ps, v);
                tgc_buffer_release(ps->vals[v].buf);
                ps->vals[v].buf = NULL;
            }
            continue;
        }
        tgc_buffer *whole;
        tgc_status s = whole_buffer(st, ps, pl->whole ? v : pl->into, &whole);
        if (s != TGC_OK) return s;
        if (pl->whole) { /* the slot's reference moves to the output */
            out[i].buf = whole;
            ps->vals[v].buf = NULL;
            *took_whole = true;
            continue;
        }
        const void *at = (const char *)whole->mem + pl->offset;
        int fi = k->forward_input;
        if (i == 0 && fi >= 0 && fi < n->n_inputs && n->inputs[fi].node >= 0) {
            tgc_buffer *fb = ps->vals[ps->plan->value_base[n->inputs[fi].node] + n->inputs[fi].port].buf;
            if (fb != NULL && fb->mem == at) { /* a Relu over its Conv's place: take it over, or own memory */
                if (can_forward(ps, n, fi, &out[0], tgc_node_exec_output_device(k, d, 0), true)) {
                    out[0].buf = tgc_buffer_retain(fb);
                    *forwarded = true;
                }
                continue;
            }
        }
        if ((s = tgc_concat_view(whole, pl->offset, pl->bytes, &out[i].buf)) != TGC_OK) return s;
    }
    return TGC_OK;
}

/* Forwards input k->forward_input's buffer to output 0 when it may
 * (*forwarded set), and allocates the other outputs. */
static tgc_status alloc_outputs(tgc_step *st, tgc_part_state *ps, int32_t id, const tgc_kernel_def *k,
                                tgc_device *d, tgc_value *out, bool *forwarded, bool *took_whole) {
    const tgc_node *n = &ps->plan->g->nodes[id];
    tgc_status s = ps->plan->places != NULL ? place_outputs(st, ps, id, k, d, out, forwarded, took_whole) : TGC_OK;
    if (s == TGC_OK && out[0].buf == NULL && k->forward_input >= 0 && n->n_outputs > 0 &&
        can_forward(ps, n, k->forward_input, &out[0], tgc_node_exec_output_device(k, d, 0), false)) {
        tgc_ref ref = n->inputs[k->forward_input];
        out[0].buf = tgc_buffer_retain(ps->vals[ps->plan->value_base[ref.node] + ref.port].buf);
        *forwarded = true;
    }
    int i = 0;
    if (s != TGC_OK || tgc_node_exec_alloc(n, k, d, out, &i) != TGC_OK) {
        char what[512], which[64];
        snprintf(which, sizeof which, s != TGC_OK ? "its Concat's buffer for output %d" : "output %d", i);
        tgc_oom_str(what, sizeof what, which, &out[i], tgc_node_exec_output_device(k, d, i));
        char where[256];
        tgc_step_fail(st, TGC_ERR_NOMEM, n->pos, "out-of-memory", "node '%s' (%s) on %s%s: %s",
                      tgc_node_label(n), n->op_name, d->name, tgc_frame_where(ps, where, sizeof where), what);
        return TGC_ERR_NOMEM;
    }
    return TGC_OK;
}

/* Reports a node's failure: the node, its op, its device and the cause. */
static tgc_status node_fail(tgc_step *st, tgc_part_state *ps, const tgc_node *n, const tgc_device *d,
                            tgc_status status, const char *rule, const char *what) {
    char where[256];
    tgc_step_fail(st, status, n->pos, rule, "node '%s' (%s) on %s%s: %s", tgc_node_label(n), n->op_name, d->name,
                  tgc_frame_where(ps, where, sizeof where), what);
    return status;
}

/* An absorbed activation whose input buffer could not be taken over: its
 * producer already applied it, so the values are copied as they are (a
 * cpu kernel: host memory). */
static tgc_status copy_applied(tgc_kernel_ctx *c) {
    size_t bytes = tgc_value_nbytes(&c->outputs[0]);
    if (bytes > 0) memcpy(tgc_kernel_out_ptr(c, 0), tgc_kernel_in_ptr(c, 0), bytes);
    return TGC_OK;
}

/* Test hook: TGC_FAIL_NODE=name (read once per step) makes that node's
 * kernel fail, to prove a failing step drains, wakes waiting receivers and
 * leaks nothing. */
static bool injected_failure(const tgc_step *st, const tgc_node *n) {
    return st->fail_node != NULL && strcmp(st->fail_node, n->name) == 0;
}

tgc_status tgc_node_run(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_plan *p = ps->plan;
    const tgc_node *n = &p->g->nodes[id];
    const tgc_kernel_def *k = p->kernel[id];
    tgc_device *d = p->device;
    tgc_value in_small[TGC_RUN_MAX_IO], out_small[TGC_RUN_MAX_IO];
    tgc_buffer *staged_small[TGC_RUN_MAX_IO];
    tgc_value *in = in_small, *out = out_small;
    tgc_buffer **staged = staged_small;
    void *heap = NULL;
    if (n->n_inputs > TGC_RUN_MAX_IO || n->n_outputs > TGC_RUN_MAX_IO) { /* any arity: from the heap */
        size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
        heap = tgc_malloc((ni + no) * sizeof *in + ni * sizeof *staged);
        if (heap == NULL)
            return node_fail(st, ps, n, d, TGC_ERR_NOMEM, "out-of-memory", "no host memory for its inputs");
        in = heap;
        out = in + ni;
        staged = (tgc_buffer **)(void *)(out + no);
    }
    memset(staged, 0, sizeof staged[0] * (size_t)n->n_inputs);
    memset(in, 0, sizeof in[0] * (size_t)n->n_inputs);
    memset(out, 0, sizeof out[0] * (size_t)n->n_outputs);
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref ref = n->inputs[i];
        if (ref.node >= 0) in[i] = ps->vals[p->value_base[ref.node] + ref.port];
        else in[i].dtype = TGC_DTYPE_INVALID;
    }
    char err[512];
    err[0] = '\0';
    int failed = 0;
    /* A step stages host-memory arguments on the host device, also for a
     * kernel on a cpu (an eager op keeps them on its cpu). */
    tgc_status s = tgc_node_exec_stage(n, k, d, NULL, in, staged, &failed);
    if (s == TGC_ERR_NOMEM) {
        char which[48];
        snprintf(which, sizeof which, "a copy of input %d", failed);
        node_fail(st, ps, n, d, s, "out-of-memory",
                  tgc_oom_str(err, sizeof err, which, &in[failed],
                              tgc_node_exec_input_device(k, d, NULL, failed)));
    } else if (s != TGC_OK) {
        snprintf(err, sizeof err, "cannot move an input to %s", d->name);
        node_fail(st, ps, n, d, s, "copy-failed", err);
    }
    if (s == TGC_OK && n->n_inputs == 1 && tgc_value_is_list(&in[0]) && strcmp(n->op_name, "Identity") == 0) {
        out[0] = in[0]; /* a sequence or an optional passes through: lists are never written */
        tgc_buffer_retain(out[0].buf);
        ps->vals[p->value_base[id]] = out[0];
        tgc_free(heap);
        tgc_watch_set(st, ps, p->value_base[id], id);
        return TGC_OK;
    }
    if (s == TGC_OK && !(p->static_shapes[id] && static_outputs(p->g, n, in, out))) {
        unsigned flags = TGC_NODE_INFER_VALUES | TGC_NODE_INFER_GRAPH_KINDS |
                         (k->sizes_outputs ? TGC_NODE_INFER_KERNEL_SIZES : 0u);
        s = tgc_node_exec_infer(p->g, n, in, out, flags, NULL, NULL, err, sizeof err);
        if (s != TGC_OK && s != TGC_ERR_NOMEM) s = TGC_ERR_RUNTIME;
        if (s != TGC_OK) node_fail(st, ps, n, d, s, "runtime-shape", err);
    }
    bool forwarded = false, took_whole = false;
    if (s == TGC_OK && !k->sizes_outputs) s = alloc_outputs(st, ps, id, k, d, out, &forwarded, &took_whole);
    if (s == TGC_OK) {
        tgc_kernel_ctx ctx = {.node = n, .device = d, .inputs = in, .n_inputs = n->n_inputs, .outputs = out,
                              .n_outputs = n->n_outputs, .error = err, .error_size = sizeof err,
                              .pool = p->pool, .cache = &p->caches[id], .const_inputs = p->const_inputs[id],
                              .fused_act = p->fused_act[id].row >= 0 ? &p->fused_act[id] : NULL, .def = k,
                              .workspace_limit = p->workspace_limit, .checks = &st->checks,
                              .events = st->trace != NULL ? &st->events : NULL};
        if (st->stop_node != NULL && strcmp(st->stop_node, n->name) == 0) raise(SIGSTOP); /* test hook */
        if (injected_failure(st, n)) s = tgc_kernel_fail(&ctx, "failure injected by TGC_FAIL_NODE");
        else if (p->absorbed[id] && forwarded) s = TGC_OK; /* its producer applied it in place */
        else if (p->absorbed[id]) s = copy_applied(&ctx); /* applied already: never twice */
        else s = tgc_node_exec_kernel(&ctx);
        if (ctx.impl != NULL) atomic_store_explicit(&p->impl[id], ctx.impl, memory_order_relaxed);
        if (s != TGC_OK)
            node_fail(st, ps, n, d, s, s == TGC_ERR_NOMEM ? "out-of-memory" : "kernel-failed",
                      err[0] ? err : tgc_status_name(s));
    }
    for (int i = 0; i < n->n_inputs; i++) tgc_buffer_release(staged[i]);
    if (s != TGC_OK) {
        for (int i = 0; i < n->n_outputs; i++) tgc_buffer_release(out[i].buf);
        tgc_free(heap);
        return s;
    }
    for (int i = 0; i < n->n_outputs; i++) ps->vals[p->value_base[id] + i] = out[i];
    tgc_free(heap);
    for (int i = 0; ps->wslots != NULL && i < n->n_outputs; i++) {
        if (i == 0 && forwarded) {
            tgc_ref from = n->inputs[k->forward_input];
            tgc_watch_move(ps, p->value_base[from.node] + from.port, p->value_base[id], id);
        } else if (!(i == 0 && took_whole)) { /* a Concat's whole is counted since it was made */
            tgc_watch_set(st, ps, p->value_base[id] + i, id);
        }
    }
    return TGC_OK;
}
