/* The parallel executor: every partition of a session runs at once, each on
 * its device's thread pool, sharing one rendezvous.
 *
 * The core algorithm (TensorFlow's executor, made small): every node has a
 * pending count of inputs (data and control) not yet available. Nodes at
 * zero are ready. When a node finishes, each consumer's count drops by one;
 * those reaching zero are ready: the first runs next on the same thread
 * (no queue round trip along a chain), the rest go to the device's pool.
 * A _Recv never occupies a thread: it asks the rendezvous and completes in
 * the callback. Each node finishes exactly once, whether it ran, failed or
 * was skipped after a failure, so the step always drains; the last node to
 * finish wakes the caller. Buffers follow ggml's rule: a slot's buffer is
 * released when its last use drops its count to zero. */
#include "executor/step.h"

#include "support/alloc.h"
#include "support/diag.h"
#include "support/spin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tgc_step_fail(tgc_step *st, tgc_status status, tgc_srcpos pos, const char *rule, const char *fmt, ...) {
    pthread_mutex_lock(&st->lock);
    bool first = !atomic_load(&st->failed);
    if (first) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->message, sizeof st->message, fmt, ap);
        va_end(ap);
        st->status = status;
        st->pos = pos;
        snprintf(st->rule, sizeof st->rule, "%s", rule);
        atomic_store(&st->failed, true);
    }
    pthread_mutex_unlock(&st->lock);
    if (first) tgc_rendezvous_abort(st->rendezvous, status, st->message);
}

static void release_slot(tgc_part_state *ps, int32_t slot) {
    tgc_watch_release(ps, slot);
    tgc_buffer_release(ps->vals[slot].buf);
    ps->vals[slot].buf = NULL;
}

/* The node's inputs have been read: drop one use of each; at zero the
 * buffer goes back to its device. */
static void release_inputs(tgc_part_state *ps, int32_t id) {
    const tgc_node *n = &ps->plan->g->nodes[id];
    for (int i = 0; i < n->n_inputs; i++) {
        tgc_ref r = n->inputs[i];
        if (r.node < 0) continue;
        int32_t slot = ps->plan->value_base[r.node] + r.port;
        if (atomic_fetch_sub(&ps->remaining[slot], 1) == 1) release_slot(ps, slot);
    }
}

/* New outputs that nobody reads go back at once. */
static void release_unused_outputs(tgc_part_state *ps, int32_t id) {
    const tgc_node *n = &ps->plan->g->nodes[id];
    int32_t base = ps->plan->value_base[id];
    for (int k = 0; k < n->n_outputs; k++)
        if (atomic_load(&ps->remaining[base + k]) == 0) release_slot(ps, base + k);
}

static void run_task(void *arg);

/* Marks node `id` finished: consumers' counts drop; returns the first
 * consumer that became ready (to run on this thread), or -1; the others
 * go to the pool. */
static int32_t finish(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_plan *p = ps->plan;
    int32_t next = -1;
    for (int32_t e = p->consumer_at[id]; e < p->consumer_at[id + 1]; e++) {
        int32_t c = p->consumers[e];
        if (atomic_fetch_sub(&ps->pending[c], 1) != 1) continue;
        if (next < 0) next = c;
        else if (tgc_thread_pool_submit(p->pool, run_task, &ps->tasks[c]) != TGC_OK) run_task(&ps->tasks[c]);
    }
    if (atomic_fetch_sub(&st->outstanding, 1) == 1) {
        pthread_mutex_lock(&st->lock);
        st->done = true;
        pthread_cond_signal(&st->done_cond);
        pthread_mutex_unlock(&st->lock);
    }
    return next;
}

static void feed_input(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_plan *p = ps->plan;
    const tgc_tensor *feed = st->feeds[p->feed_index[id]];
    int32_t slot = p->value_base[id];
    ps->vals[slot] = feed->v;
    if (tgc_device_host_memory(p->device)) {
        tgc_buffer_retain(feed->v.buf); /* host memory is every cpu device's memory: no copy */
        return;
    }
    ps->vals[slot].buf = NULL;
    tgc_status s = tgc_buffer_copy(feed->v.buf, tgc_value_nbytes(&feed->v), p->device, &ps->vals[slot].buf);
    const tgc_node *n = &p->g->nodes[id];
    if (s == TGC_ERR_NOMEM) {
        char what[512];
        tgc_step_fail(st, s, n->pos, "out-of-memory", "input '%s' on %s: %s", n->name, p->device->name,
                      tgc_oom_str(what, sizeof what, "a copy of the feed", &feed->v, p->device));
    } else if (s != TGC_OK) {
        tgc_step_fail(st, TGC_ERR_RUNTIME, n->pos, "copy-failed", "input '%s': cannot copy the feed to %s", n->name,
                      p->device->name);
    } else {
        tgc_watch_set(st, ps, slot, id);
    }
}

static void run_send(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_node *n = &ps->plan->g->nodes[id];
    tgc_ref r = n->inputs[0];
    const tgc_value *v = &ps->vals[ps->plan->value_base[r.node] + r.port];
    const tgc_attr *key = tgc_node_attr(n, "key");
    tgc_status s = tgc_rendezvous_send(st->rendezvous, key->s, v);
    if (s != TGC_OK && !atomic_load(&st->failed))
        tgc_step_fail(st, s, n->pos, "send-failed", "node '%s' (_Send) on %s: cannot send '%s'", n->name,
                      ps->plan->device->name, key->s);
}

/* Runs the node (unless the step has failed), then finishes it and keeps
 * going with a consumer that became ready, on this thread. */
static void run_chain(tgc_step *st, tgc_part_state *ps, int32_t id) {
    while (id >= 0) {
        const tgc_plan *p = ps->plan;
        uint64_t t0 = st->trace ? tgc_trace_now_us() : 0;
        if (!atomic_load(&st->failed)) {
            switch (p->role[id]) {
            case TGC_ROLE_INPUT: feed_input(st, ps, id); break;
            case TGC_ROLE_CONST:
                ps->vals[p->value_base[id]] = p->weights[p->value_base[id]];
                tgc_buffer_retain(ps->vals[p->value_base[id]].buf);
                break;
            case TGC_ROLE_KERNEL: tgc_node_run(st, ps, id); break;
            case TGC_ROLE_SEND: run_send(st, ps, id); break;
            case TGC_ROLE_RECV: break; /* completed by its callback, never scheduled */
            }
        }
        if (st->trace) tgc_trace_node(st->trace, p, id, t0, tgc_trace_now_us());
        release_inputs(ps, id);
        release_unused_outputs(ps, id);
        id = finish(st, ps, id);
    }
}

static void run_task(void *arg) {
    tgc_task *t = arg;
    run_chain(t->step, &t->step->parts[t->part], t->node);
}

/* The rendezvous delivers a _Recv's value (or the step's error). */
static void recv_done(void *ctx, tgc_status status, tgc_value *received) {
    tgc_task *t = ctx;
    tgc_step *st = t->step;
    tgc_part_state *ps = &st->parts[t->part];
    const tgc_node *n = &ps->plan->g->nodes[t->node];
    if (status == TGC_OK) {
        int32_t slot = ps->plan->value_base[t->node];
        ps->vals[slot] = *received;
        tgc_watch_recv(st, ps, t->part, slot, t->node);
        if (st->trace) tgc_trace_recv(st->trace, ps->plan, t->node, tgc_trace_now_us());
    } else if (status == TGC_ERR_NOMEM && !atomic_load(&st->failed)) {
        char figures[256];
        tgc_device *dst = ps->plan->on_host[t->node] ? tgc_host_device() : ps->plan->device;
        tgc_step_fail(st, status, n->pos, "out-of-memory", "node '%s' (_Recv) on %s: out of memory receiving '%s'; %s",
                      n->name, ps->plan->device->name, tgc_node_attr(n, "tensor_name")->s,
                      tgc_memory_figures_str(dst, figures, sizeof figures));
    } else if (!atomic_load(&st->failed)) {
        tgc_step_fail(st, status, n->pos, "recv-failed", "node '%s' (_Recv) on %s: %s", n->name,
                      ps->plan->device->name, tgc_status_name(status));
    }
    release_unused_outputs(ps, t->node);
    int32_t next = finish(st, ps, t->node);
    if (next >= 0) {
        /* The callback may run on another device's thread: hand the work to
         * the receiving device's pool rather than run it here. */
        if (tgc_thread_pool_submit(ps->plan->pool, run_task, &ps->tasks[next]) != TGC_OK) run_chain(st, ps, next);
    }
}

static tgc_status init_parts(tgc_step *st) {
    tgc_session *s = st->s;
    st->parts = tgc_calloc((size_t)s->parts.n_parts + 1, sizeof *st->parts);
    if (st->parts == NULL) return TGC_ERR_NOMEM;
    long total = 0;
    for (int i = 0; i < s->parts.n_parts; i++) {
        tgc_part_state *ps = &st->parts[i];
        tgc_plan *p = &s->plans[i];
        ps->plan = p;
        size_t nn = (size_t)p->g->n_nodes + 1;
        ps->vals = tgc_calloc((size_t)p->n_values + 1, sizeof *ps->vals);
        ps->remaining = tgc_malloc(((size_t)p->n_values + 1) * sizeof *ps->remaining);
        ps->pending = tgc_malloc(nn * sizeof *ps->pending);
        ps->tasks = tgc_malloc(nn * sizeof *ps->tasks);
        if (!ps->vals || !ps->remaining || !ps->pending || !ps->tasks) return TGC_ERR_NOMEM;
        if (s->watch != NULL) {
            ps->watch = s->watch;
            if ((ps->wslots = tgc_calloc((size_t)p->n_values + 1, sizeof *ps->wslots)) == NULL) return TGC_ERR_NOMEM;
            for (int32_t v = 0; v < p->n_values; v++) atomic_init(&ps->wslots[v].bytes, 0);
        }
        for (int32_t v = 0; v < p->n_values; v++) atomic_init(&ps->remaining[v], p->use_count[v]);
        for (int32_t id = 0; id < p->g->n_nodes; id++) {
            atomic_init(&ps->pending[id], p->pending[id]);
            ps->tasks[id] = (tgc_task){st, i, id};
        }
        total += p->g->n_nodes;
    }
    atomic_init(&st->outstanding, total);
    return TGC_OK;
}

static void release_parts(tgc_step *st) {
    for (int i = 0; st->parts != NULL && i < st->s->parts.n_parts; i++) {
        tgc_part_state *ps = &st->parts[i];
        for (int32_t v = 0; ps->vals != NULL && v < ps->plan->n_values; v++) release_slot(ps, v);
        tgc_free(ps->vals);
        tgc_free(ps->remaining);
        tgc_free(ps->pending);
        tgc_free(ps->tasks);
        tgc_free(ps->wslots);
    }
    tgc_free(st->parts);
}

/* Starts every node with nothing pending: sources go to their pools, each
 * _Recv asks the rendezvous. */
static void start(tgc_step *st) {
    for (int i = 0; i < st->s->parts.n_parts; i++) {
        tgc_part_state *ps = &st->parts[i];
        const tgc_plan *p = ps->plan;
        for (int32_t id = 0; id < p->g->n_nodes; id++) {
            if (p->pending[id] != 0) continue;
            if (p->role[id] == TGC_ROLE_RECV) {
                const tgc_node *n = &p->g->nodes[id];
                tgc_device *dst = p->on_host[id] ? NULL : p->device;
                if (tgc_rendezvous_recv_async(st->rendezvous, tgc_node_attr(n, "key")->s, dst, recv_done,
                                              &ps->tasks[id]) != TGC_OK) {
                    tgc_step_fail(st, TGC_ERR_NOMEM, n->pos, "recv-failed", "node '%s': cannot wait for '%s'",
                                  n->name, tgc_node_attr(n, "key")->s);
                    run_task(&ps->tasks[id]); /* finishes it (skipped) */
                }
            } else if (tgc_thread_pool_submit(p->pool, run_task, &ps->tasks[id]) != TGC_OK) {
                run_task(&ps->tasks[id]);
            }
        }
    }
}

static bool all_finished(void *arg) { return atomic_load(&((tgc_step *)arg)->outstanding) == 0; }

/* Copies a graph output into a new host tensor for the caller. */
static tgc_status fetch(tgc_step *st, int i, tgc_tensor **out, tgc_diags *diags) {
    const tgc_partition_fetch *f = &st->s->parts.outputs[i];
    tgc_part_state *ps = &st->parts[f->part];
    const tgc_value *v = &ps->vals[ps->plan->value_base[f->node] + f->port];
    size_t nbytes = tgc_value_nbytes(v);
    tgc_status s;
    if (v->dtype == TGC_STRING) /* host memory only; the new tensor gets its own copy of each string */
        s = tgc_buffer_host_ptr(v->buf) != NULL || nbytes == 0
                ? tgc_tensor_create(v->dtype, v->rank, v->dims, tgc_buffer_host_ptr(v->buf), out)
                : TGC_ERR_RUNTIME;
    else s = tgc_tensor_alloc(v->dtype, v->rank, v->dims, out); /* every byte copied below */
    if (s == TGC_OK && nbytes > 0 && v->dtype != TGC_STRING)
        s = v->buf->device->ops->copy_to_host(v->buf->device, (void *)tgc_tensor_data(*out), v->buf->mem, 0, nbytes);
    if (s != TGC_OK)
        tgc_diag_error(diags, st->s->g->path, (tgc_srcpos){0, 0}, s == TGC_ERR_NOMEM ? "out-of-memory" : "copy-failed",
                       "output '%s': %s %zu bytes to host memory", st->s->output_names[i],
                       s == TGC_ERR_NOMEM ? "out of memory allocating" : "cannot copy", nbytes);
    return s;
}

/* Waits for the devices' queues: a run returns with its work done. */
static void synchronize(tgc_step *st) {
    for (int i = 0; i < st->s->n_devices; i++) st->s->devices[i]->ops->synchronize(st->s->devices[i]);
}

tgc_status tgc_step_execute(tgc_session *s, const tgc_tensor **feeds, tgc_tensor **outputs, tgc_trace *trace,
                            tgc_diags *diags) {
    tgc_step st = {.s = s, .feeds = feeds, .trace = trace, .fail_node = getenv("TGC_FAIL_NODE")};
    pthread_mutex_init(&st.lock, NULL);
    pthread_cond_init(&st.done_cond, NULL);
    atomic_init(&st.failed, false);
    tgc_status result = tgc_rendezvous_create(&st.rendezvous);
    if (result == TGC_OK) result = init_parts(&st);
    if (result == TGC_OK && s->watch != NULL) tgc_watch_feeds(s->watch, s->g, feeds);
    if (result == TGC_OK) {
        start(&st);
        tgc_spin_until(all_finished, &st); /* a small graph is done before a futex wake-up would arrive */
        pthread_mutex_lock(&st.lock);
        while (!st.done) pthread_cond_wait(&st.done_cond, &st.lock);
        pthread_mutex_unlock(&st.lock);
        synchronize(&st);
        if (atomic_load(&st.failed)) {
            result = st.status;
            tgc_diag_error(diags, s->g->path, st.pos, st.rule, "%s", st.message);
        }
        for (int i = 0; result == TGC_OK && i < s->g->n_outputs; i++) result = fetch(&st, i, &outputs[i], diags);
    }
    if (result != TGC_OK)
        for (int i = 0; i < s->g->n_outputs; i++) {
            tgc_tensor_release(outputs[i]);
            outputs[i] = NULL;
        }
    release_parts(&st);
    tgc_rendezvous_free(st.rendezvous);
    pthread_cond_destroy(&st.done_cond);
    pthread_mutex_destroy(&st.lock);
    return result;
}
