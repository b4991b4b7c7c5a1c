/* Running one kernel node of a step: its inputs from the step's slots, the
 * steps every node run shares (devices/node_exec.h: staging, inference over
 * the actual inputs, allocation, the kernel), and what only a graph step
 * does: static shapes taken from the plan, an input's buffer forwarded to
 * the output when this node is its last user, absorbed activations, the
 * memory watch and the test hooks. */
#include "executor/step.h"

#include "devices/node_exec.h"
#include "support/alloc.h"

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
 * only the run holds it (not a weight, not a feed) and the sizes match. */
static bool can_forward(tgc_part_state *ps, const tgc_node *n, int j, const tgc_value *out, const tgc_device *out_device) {
    if (j < 0 || j >= n->n_inputs || n->inputs[j].node < 0) return false;
    tgc_ref ref = n->inputs[j];
    int32_t slot = ps->plan->value_base[ref.node] + ref.port;
    int uses_here = 0;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node == ref.node && n->inputs[i].port == ref.port) uses_here++;
    const tgc_value *in = &ps->vals[slot];
    return in->buf != NULL && in->buf->device == out_device && atomic_load(&ps->remaining[slot]) == uses_here &&
           atomic_load(&in->buf->refs) == 1 &&
           in->buf->nbytes == tgc_value_nbytes(out) && in->dtype == out->dtype;
}

/* Forwards input k->forward_input's buffer to output 0 when it may
 * (*forwarded set), and allocates the other outputs. */
static tgc_status alloc_outputs(tgc_step *st, tgc_part_state *ps, const tgc_node *n, const tgc_kernel_def *k,
                                tgc_device *d, tgc_value *out, bool *forwarded) {
    if (k->forward_input >= 0 && n->n_outputs > 0 &&
        can_forward(ps, n, k->forward_input, &out[0], tgc_node_exec_output_device(k, d, 0))) {
        tgc_ref ref = n->inputs[k->forward_input];
        out[0].buf = tgc_buffer_retain(ps->vals[ps->plan->value_base[ref.node] + ref.port].buf);
        *forwarded = true;
    }
    int i = 0;
    if (tgc_node_exec_alloc(n, k, d, out, &i) != TGC_OK) {
        char what[512], which[32];
        snprintf(which, sizeof which, "output %d", i);
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
    bool forwarded = false;
    if (s == TGC_OK && !k->sizes_outputs) s = alloc_outputs(st, ps, n, k, d, out, &forwarded);
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
        } else {
            tgc_watch_set(st, ps, p->value_base[id] + i, id);
        }
    }
    return TGC_OK;
}
