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
 * released when its last use drops its count to zero.
 *
 * Subgraphs run the same way, in frames: a control node (If, Loop...) does
 * not occupy a thread either; it starts its subgraph's frame and completes
 * when the frame's last run ends (control_flow.c). A frame is a set of part
 * states with its own count of nodes outstanding; the step's graph is the
 * root frame. */
#include "executor/step.h"

#include "distributed/transport.h"

#include "support/alloc.h"
#include "support/clock.h"
#include "support/diag.h"
#include "support/spin.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tgc_step_fail(tgc_step *st, tgc_status status, tgc_srcpos pos, const char *rule, const char *fmt, ...) {
    pthread_mutex_lock(&st->lock);
    bool first = !atomic_load(&st->failed);
    if (first) {
        /* Across processes the message names the rank ("rank 1: node ..."). */
        int at = st->distributed ? snprintf(st->message, sizeof st->message, "rank %d: ", st->rank) : 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->message + at, sizeof st->message - (size_t)at, fmt, ap);
        va_end(ap);
        st->status = status;
        st->pos = pos;
        snprintf(st->rule, sizeof st->rule, "%s", rule);
        atomic_store(&st->failed, true);
    }
    pthread_mutex_unlock(&st->lock);
    if (first && st->distributed) tgc_dist_abort_peers(st->step_id, status, st->message);
    if (first) tgc_rendezvous_abort(st->rendezvous, status, st->message);
}

void tgc_step_fail_from_peer(tgc_step *st, tgc_status status, const char *message) {
    pthread_mutex_lock(&st->lock);
    bool first = !atomic_load(&st->failed);
    if (first) {
        snprintf(st->message, sizeof st->message, "%.900s (the step stopped on rank %d too)", message, st->rank);
        st->status = status != TGC_OK ? status : TGC_ERR_RUNTIME;
        st->pos = (tgc_srcpos){0, 0};
        snprintf(st->rule, sizeof st->rule, "peer-failed");
        atomic_store(&st->failed, true);
    }
    pthread_mutex_unlock(&st->lock);
    if (first) tgc_rendezvous_abort(st->rendezvous, st->status, st->message);
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

/* A step's tasks go to a device's queue in step order (ahead of newer
 * steps' queued tasks: tgc_thread_pool_submit_ordered) where the session
 * spans several partitions, so that a pipeline's stage finishes the older
 * step first; on one partition first come, first served, as steps in
 * flight then fill a pool's threads together (in order, one cpu of two
 * threads at --inflight 2 ran GoogLeNet 4% and ShuffleNetV2 2% slower). */
static tgc_status submit_in_order(tgc_step *st, tgc_thread_pool *pool, void (*fn)(void *), void *arg) {
    if (st->s->compiled.parts.n_parts < 2) return tgc_thread_pool_submit(pool, fn, arg);
    return tgc_thread_pool_submit_ordered(pool, fn, arg, st->id > 0 ? (uint64_t)st->id : 1);
}

void tgc_step_submit(tgc_step *st, tgc_thread_pool *pool, void (*fn)(void *), void *arg) {
    if (submit_in_order(st, pool, fn, arg) == TGC_OK) return;
    /* Never run here instead: this may be a loop's thread, many iterations deep. */
    tgc_step_fail(st, TGC_ERR_NOMEM, (tgc_srcpos){0, 0}, "out-of-memory", "no host memory to queue a task");
    fn(arg); /* the step has failed: the task only finishes its node */
}

/* The last node of f's run finished: the root wakes the caller, a
 * subgraph's frame tells its control node. */
static void frame_finished(tgc_frame *f) {
    if (f->done != NULL) {
        f->done(f);
        return;
    }
    tgc_step *st = f->step;
    pthread_mutex_lock(&st->lock);
    st->done = true;
    pthread_cond_signal(&st->done_cond);
    pthread_mutex_unlock(&st->lock);
}

static void run_chain(tgc_step *st, tgc_part_state *ps, int32_t id);

/* Node `id` of ps starts only in its turn (tgc_plan.next_in_order; the
 * root frame's partitions: a subgraph's iterations run as they come). */
static bool in_order(const tgc_part_state *ps, int32_t id) {
    const tgc_plan *p = ps->plan;
    return p->next_in_order != NULL && ps->frame->parent == NULL && p->next_in_order[id] >= 0;
}

/* Takes the right to start node `id`, which has nothing pending, when its
 * turn has come; false when it has not (the node before it in order takes
 * it when it finishes) or another thread took it. Whichever of the two
 * comes second, the node's last input or its turn, sees the other (both
 * sequentially consistent), so it starts exactly once. */
static bool claim_turn(tgc_part_state *ps, int32_t id) {
    int turn = 2 * id;
    return atomic_compare_exchange_strong(&ps->cursor, &turn, 2 * id + 1);
}

/* Node `id`, started in its turn, finished: the turn passes to the next
 * node in order, returned when it is ready and now taken, else -1. */
static int32_t pass_turn(tgc_part_state *ps, int32_t id) {
    int32_t nx = ps->plan->next_in_order[id];
    atomic_store(&ps->cursor, 2 * nx);
    return nx < ps->plan->g->n_nodes && atomic_load(&ps->pending[nx]) == 0 && claim_turn(ps, nx) ? nx : -1;
}

/* Nodes a thread runs once its chain ends, in this order (finish: a
 * fan-out one node dominates runs on one thread, a node at a time). */
#define LATER_MAX 8

typedef struct later_nodes {
    int32_t ids[LATER_MAX];
    int n, taken; /* ids[taken .. n) are still to run */
} later_nodes;

/* The next node *later holds, or -1. */
static int32_t take_later(later_nodes *later) { return later->taken < later->n ? later->ids[later->taken++] : -1; }

/* Appends node id to *later (starting the list over once all its nodes
 * were taken); false when it is full. */
static bool defer_later(later_nodes *later, int32_t id) {
    if (later->taken == later->n) later->n = later->taken = 0;
    if (later->n == LATER_MAX) return false;
    later->ids[later->n++] = id;
    return true;
}

/* Ready nodes finish keeps to decide on (the rest go to the pool). */
#define FANOUT_MAX 8

/* A node fills a pool by itself from this much work (FLOPs): two of the
 * GEMM's pieces (devices/cpu/kernels_gemm.c), a direct convolution's
 * dozens of rows. */
#define FILLS_POOL_FLOPS 16e6

/* Side by side, a fan-out is as fast as its largest node on one thread
 * plus what the others' threads take of its pieces once they are done.
 * Where one node has this many times the work of the others together and
 * cuts its work into a few large pieces (a GEMM's), a thread done with
 * the others finds at most one piece of it left (RegNetX's stage
 * entries: a 1x1 of 38M multiply-adds in 2 pieces beside a strided 1x1 of
 * 9.5M ran 400 us at 2 threads, 450 at 1), and one after another, each
 * over the whole pool, is faster (the pair 290 us). Where its pieces are
 * many (rows of a direct convolution: SqueezeNet's fire modules), side by
 * side stays faster. */
#define DOMINATES 2.0

/* Of the nodes that just became ready (ready[0..n), n >= 2), the one
 * that should run alone with the others after it on this thread, or -1
 * to run them side by side: plan.work and plan.coarse weigh them. */
static int32_t dominant(const tgc_plan *p, const int32_t *ready, int n) {
    if (p->work == NULL) return -1; /* a pool of one thread: nothing side by side */
    int top = 0;
    double total = 0;
    for (int i = 0; i < n; i++) {
        total += p->work[ready[i]];
        if (p->work[ready[i]] > p->work[ready[top]]) top = i;
    }
    double w = p->work[ready[top]];
    return w >= FILLS_POOL_FLOPS && w >= DOMINATES * (total - w) && p->coarse[ready[top]] ? top : -1;
}

/* Marks node `id` finished: consumers' counts drop; returns the first
 * consumer that became ready (to run on this thread), or -1; the others
 * go to the pool, unless one of them dominates (dominant): it is
 * returned, the others run after this thread's chain (later, when not
 * NULL and not full). A _Send that became ready runs here and now, before the
 * chain goes on: it only hands a value to the rendezvous, and another
 * device may be idle waiting for it (TensorFlow's executor runs its
 * inexpensive ready nodes inline for the same reason); queued, it would
 * wait behind this device's whole chain, a pipeline's next stage idle.
 * Where the plan orders the nodes, a ready node not yet in its turn waits
 * for it, and a node's end starts the next in order if it is ready. */
static int32_t finish(tgc_step *st, tgc_part_state *ps, int32_t id, later_nodes *later) {
    const tgc_plan *p = ps->plan;
    int32_t next = in_order(ps, id) ? pass_turn(ps, id) : -1;
    int32_t ready[FANOUT_MAX];
    int n_ready = 0;
    for (int32_t e = p->consumer_at[id]; e < p->consumer_at[id + 1]; e++) {
        int32_t c = p->consumers[e];
        if (atomic_fetch_sub(&ps->pending[c], 1) != 1) continue;
        if (p->role[c] == TGC_ROLE_SEND) run_chain(st, ps, c);
        else if (in_order(ps, c) && !claim_turn(ps, c)) continue;
        else if (next < 0 && later == NULL) next = c;
        else if (later != NULL && n_ready < FANOUT_MAX) ready[n_ready++] = c;
        else if (submit_in_order(st, p->pool, run_task, &ps->tasks[c]) != TGC_OK) run_task(&ps->tasks[c]);
    }
    if (n_ready > 0) {
        int top = n_ready > 1 && next < 0 ? dominant(p, ready, n_ready) : -1;
        int first = next < 0 ? (top >= 0 ? top : 0) : -1; /* the one this thread runs next */
        if (first >= 0) next = ready[first];
        for (int i = 0; i < n_ready; i++) {
            if (i == first) continue;
            if (top >= 0 && defer_later(later, ready[i])) continue;
            if (submit_in_order(st, p->pool, run_task, &ps->tasks[ready[i]]) != TGC_OK)
                run_task(&ps->tasks[ready[i]]);
        }
    }
    if (atomic_fetch_sub(&ps->frame->outstanding, 1) == 1) frame_finished(ps->frame);
    return next;
}

/* The frame's feed goes to the input's slot: shared where its buffer
 * already is where the partition reads it (host memory is every cpu
 * device's), handed over when the frame says so, copied otherwise. */
static void feed_input(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_plan *p = ps->plan;
    tgc_frame *f = ps->frame;
    int32_t k = p->feed_index[id];
    tgc_value *feed = &f->feeds[k];
    int32_t slot = p->value_base[id];
    ps->vals[slot] = *feed;
    tgc_device *to = p->on_host[id] ? tgc_host_device() : p->device; /* host: read as host arguments only */
    const tgc_device *at = feed->buf != NULL ? feed->buf->device : NULL;
    bool in_place = at == NULL || at == to || (tgc_device_host_memory(at) && tgc_device_host_memory(to));
    if (in_place) {
        if (f->take != NULL && f->take[k]) feed->buf = NULL; /* the slot owns it now */
        else tgc_buffer_retain(feed->buf);
        if (f->parent != NULL) tgc_watch_set(st, ps, slot, id);
        return;
    }
    ps->vals[slot].buf = NULL;
    /* the step's feeds outlive it (the caller's, until the step synchronizes its devices): queued, not waited
     * for; a frame's own (a loop's carried values) may go at once */
    size_t nbytes = tgc_value_nbytes(feed);
    tgc_status s = f->parent == NULL ? tgc_buffer_copy_in_async(feed->buf, nbytes, to, &ps->vals[slot].buf)
                                     : tgc_buffer_copy(feed->buf, nbytes, to, &ps->vals[slot].buf);
    if (s == TGC_OK && f->take != NULL && f->take[k]) { /* handed over: the copy stands for it */
        tgc_buffer_release(feed->buf);
        feed->buf = NULL;
    }
    const tgc_node *n = &p->g->nodes[id];
    char where[256];
    if (s == TGC_ERR_NOMEM) {
        char what[512];
        tgc_step_fail(st, s, n->pos, "out-of-memory", "input '%s' on %s%s: %s", n->name, to->name,
                      tgc_frame_where(ps, where, sizeof where),
                      tgc_oom_str(what, sizeof what, "a copy of the feed", feed, to));
    } else if (s != TGC_OK) {
        tgc_step_fail(st, TGC_ERR_RUNTIME, n->pos, "copy-failed", "input '%s': cannot copy the feed to %s%s", n->name,
                      to->name, tgc_frame_where(ps, where, sizeof where));
    } else {
        tgc_watch_set(st, ps, slot, id);
    }
}

const char *tgc_frame_key(const tgc_part_state *ps, const char *key, char *buf, size_t size) {
    const char *prefix = ps->frame->key;
    int n = snprintf(buf, size, "%s%s", prefix, key);
    return n >= 0 && (size_t)n < size ? buf : NULL;
}

const char *tgc_frame_where(const tgc_part_state *ps, char *buf, size_t size) {
    size_t at = 0;
    buf[0] = '\0';
    for (const tgc_frame *f = ps->frame; f != NULL && f->parent != NULL && at < size; f = f->parent)
        at += (size_t)snprintf(buf + at, size - at, "%s iteration %lld of %s '%s'", at ? "," : " in",
                               (long long)f->iteration, f->op_name, f->node_name);
    return buf;
}

static void run_send(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_node *n = &ps->plan->g->nodes[id];
    tgc_ref r = n->inputs[0];
    const tgc_value *v = &ps->vals[ps->plan->value_base[r.node] + r.port];
    char buf[1024], where[256];
    const char *key = tgc_frame_key(ps, tgc_node_attr(n, "key")->s, buf, sizeof buf);
    int task = st->distributed ? tgc_dist_task_of(tgc_node_attr(n, "recv_device")->s) : 0;
    if (key != NULL && task != st->rank) { /* its _Recv is in another process */
        tgc_step_dist_send(st, ps, id, key, v, task);
        return;
    }
    tgc_status s = key != NULL ? tgc_rendezvous_send(st->rendezvous, key, v) : TGC_ERR_INVALID;
    if (s != TGC_OK && !atomic_load(&st->failed))
        tgc_step_fail(st, s, n->pos, "send-failed", "node '%s' (_Send) on %s%s: cannot send '%s'", n->name,
                      ps->plan->device->name, tgc_frame_where(ps, where, sizeof where), key ? key : "(too long)");
}

/* Initializer `id`'s slot takes (a reference to) its weight. */
static void take_weight(tgc_part_state *ps, int32_t id) {
    int32_t slot = ps->plan->value_base[id];
    ps->vals[slot] = ps->plan->weights[slot];
    tgc_buffer_retain(ps->vals[slot].buf);
}

/* Records node `id`'s run in the trace; a _Send's flow arrow under its key
 * as it ran (step and frame in front); `split0`: this thread's
 * tgc_parallel_tally when the node started. */
static void trace_node(tgc_step *st, tgc_part_state *ps, int32_t id, uint64_t t0, tgc_parallel_tally split0) {
    const tgc_plan *p = ps->plan;
    char buf[1024];
    const char *key = p->role[id] == TGC_ROLE_SEND
                          ? tgc_frame_key(ps, tgc_node_attr(&p->g->nodes[id], "key")->s, buf, sizeof buf)
                          : NULL;
    tgc_parallel_tally now = tgc_parallel_tally_now();
    tgc_parallel_tally split = {now.splits - split0.splits, now.pieces - split0.pieces};
    tgc_trace_node(st->trace, p, id, st->id, key, t0, tgc_trace_now_us(), split);
}

/* Hands the nodes left in *later to the pool (this thread stops here). */
static void submit_later(tgc_step *st, tgc_part_state *ps, later_nodes *later) {
    for (int32_t id; (id = take_later(later)) >= 0;) tgc_step_submit(st, ps->plan->pool, run_task, &ps->tasks[id]);
}

/* Runs the node (unless the step has failed), then finishes it and keeps
 * going with a consumer that became ready, on this thread; then with the
 * nodes finish left for it (later), in the order it left them. With the
 * memory watch on, kernels' and _Sends' times after the session's first
 * step count in their device's busy time. */
static void run_chain(tgc_step *st, tgc_part_state *ps, int32_t id) {
    later_nodes later = {.n = 0, .taken = 0};
    while (id >= 0) {
        const tgc_plan *p = ps->plan;
        uint64_t t0 = st->trace ? tgc_trace_now_us() : 0;
        tgc_parallel_tally split0 = st->trace ? tgc_parallel_tally_now() : (tgc_parallel_tally){0, 0};
        bool timed = ps->wslots != NULL && st->id > 1 &&
                     (p->role[id] == TGC_ROLE_KERNEL || p->role[id] == TGC_ROLE_SEND);
        int64_t n0 = timed ? tgc_now_ns() : 0;
        if (!atomic_load(&st->failed)) {
            switch (p->role[id]) {
            case TGC_ROLE_INPUT: feed_input(st, ps, id); break;
            case TGC_ROLE_CONST: take_weight(ps, id); break;
            case TGC_ROLE_KERNEL: tgc_node_run(st, ps, id); break;
            case TGC_ROLE_SEND: run_send(st, ps, id); break;
            case TGC_ROLE_RECV: break; /* completed by its callback, never scheduled */
            case TGC_ROLE_CONTROL:
                if (tgc_control_start(st, ps, id)) { /* it completes when its subgraphs end */
                    submit_later(st, ps, &later);
                    return;
                }
                break;
            }
        }
        if (timed) tgc_watch_time(st, ps, tgc_now_ns() - n0);
        if (st->trace) trace_node(st, ps, id, t0, split0);
        release_inputs(ps, id);
        release_unused_outputs(ps, id);
        id = finish(st, ps, id, &later);
        if (id < 0) id = take_later(&later);
    }
}

static void run_task(void *arg) {
    tgc_task *t = arg;
    run_chain(t->step, t->ps, t->node);
}

void tgc_node_complete(tgc_step *st, tgc_part_state *ps, int32_t id) {
    release_inputs(ps, id);
    release_unused_outputs(ps, id);
    int32_t next = finish(st, ps, id, NULL);
    if (next >= 0) tgc_step_submit(st, ps->plan->pool, run_task, &ps->tasks[next]);
}

/* The rendezvous delivers a _Recv's value (or the step's error). */
static void recv_done(void *ctx, tgc_status status, tgc_value *received) {
    tgc_task *t = ctx;
    tgc_step *st = t->step;
    tgc_part_state *ps = t->ps;
    const tgc_node *n = &ps->plan->g->nodes[t->node];
    if (status == TGC_OK) {
        int32_t slot = ps->plan->value_base[t->node];
        ps->vals[slot] = *received;
        tgc_watch_recv(st, ps, slot, t->node);
        if (st->trace) {
            char buf[1024];
            const char *key = tgc_frame_key(ps, tgc_node_attr(n, "key")->s, buf, sizeof buf);
            tgc_trace_recv(st->trace, ps->plan, t->node, st->id, key, tgc_trace_now_us());
        }
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
    int32_t next = finish(st, ps, t->node, NULL);
    if (next >= 0) {
        /* The callback may run on another device's thread: hand the work to
         * the receiving device's pool rather than run it here. */
        if (submit_in_order(st, ps->plan->pool, run_task, &ps->tasks[next]) != TGC_OK) run_chain(st, ps, next);
    }
}

tgc_status tgc_frame_init(tgc_frame *f) {
    tgc_session *s = f->step->s;
    f->n_parts = f->parts->n_parts;
    f->ps = tgc_calloc((size_t)f->n_parts + 1, sizeof *f->ps);
    if (f->ps == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < f->n_parts; i++) {
        tgc_part_state *ps = &f->ps[i];
        tgc_plan *p = &f->plans[i];
        ps->plan = p;
        ps->frame = f;
        ps->part = i;
        if (p->remote) continue; /* another process runs it */
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
        atomic_init(&ps->cursor, p->next_in_order != NULL ? 2 * p->first_in_order : 0);
        for (int32_t id = 0; id < p->g->n_nodes; id++) {
            atomic_init(&ps->pending[id], p->pending[id]);
            ps->tasks[id] = (tgc_task){f->step, ps, id};
        }
    }
    long total = 0;
    for (int i = 0; i < f->n_parts; i++) total += f->plans[i].remote ? 0 : f->plans[i].g->n_nodes;
    atomic_init(&f->outstanding, total);
    return TGC_OK;
}

void tgc_frame_reset(tgc_frame *f) {
    long total = 0;
    for (int i = 0; i < f->n_parts; i++) {
        tgc_part_state *ps = &f->ps[i];
        const tgc_plan *p = ps->plan;
        if (p->remote) continue;
        for (int32_t v = 0; v < p->n_values; v++) {
            if (ps->vals[v].buf != NULL) release_slot(ps, v);
            atomic_store_explicit(&ps->remaining[v], p->use_count[v], memory_order_relaxed);
        }
        for (int32_t id = 0; id < p->g->n_nodes; id++)
            atomic_store_explicit(&ps->pending[id], p->pending[id], memory_order_relaxed);
        total += p->g->n_nodes;
    }
    atomic_store(&f->outstanding, total);
}

void tgc_frame_release(tgc_frame *f) {
    for (int i = 0; f->ps != NULL && i < f->n_parts; i++) {
        tgc_part_state *ps = &f->ps[i];
        for (int32_t v = 0; ps->vals != NULL && v < ps->plan->n_values; v++) release_slot(ps, v);
        tgc_free(ps->vals);
        tgc_free(ps->remaining);
        tgc_free(ps->pending);
        tgc_free(ps->tasks);
        tgc_free(ps->wslots);
    }
    tgc_free(f->ps);
    f->ps = NULL;
}

const tgc_value *tgc_frame_output(const tgc_frame *f, int i) {
    const tgc_partition_fetch *o = &f->parts->outputs[i];
    const tgc_part_state *ps = &f->ps[o->part];
    return &ps->vals[ps->plan->value_base[o->node] + o->port];
}

/* An initializer hands over its weight on the thread starting the frame,
 * and its consumers that became ready are queued (none runs here: this is
 * not the device's thread). Queued as a task each, a step's weights woke
 * the device's workers one by one and stood ahead of its first kernel. */
static void run_constant(tgc_step *st, tgc_part_state *ps, int32_t id) {
    uint64_t t0 = st->trace ? tgc_trace_now_us() : 0;
    const tgc_plan *p = ps->plan;
    take_weight(ps, id);
    if (st->trace) trace_node(st, ps, id, t0, tgc_parallel_tally_now());
    release_unused_outputs(ps, id);
    int32_t next = finish(st, ps, id, NULL);
    if (next >= 0) tgc_step_submit(st, p->pool, run_task, &ps->tasks[next]);
}

/* Starts node `id` of ps, which has nothing pending: a _Recv asks the
 * rendezvous, an initializer is handed over here, any other node goes to
 * its device's pool. */
static void start_source(tgc_step *st, tgc_part_state *ps, int32_t id) {
    const tgc_plan *p = ps->plan;
    if (p->role[id] == TGC_ROLE_CONST) {
        run_constant(st, ps, id);
        return;
    }
    if (p->role[id] != TGC_ROLE_RECV) {
        tgc_step_submit(st, p->pool, run_task, &ps->tasks[id]);
        return;
    }
    const tgc_node *n = &p->g->nodes[id];
    tgc_device *dst = p->on_host[id] ? NULL : p->device;
    char buf[1024];
    const char *key = tgc_frame_key(ps, tgc_node_attr(n, "key")->s, buf, sizeof buf);
    if (key == NULL || tgc_rendezvous_recv_async(st->rendezvous, key, dst, recv_done, &ps->tasks[id]) != TGC_OK) {
        tgc_step_fail(st, key ? TGC_ERR_NOMEM : TGC_ERR_INVALID, n->pos, "recv-failed",
                      "node '%s': cannot wait for '%s'", n->name, key ? key : "(a key too long)");
        run_task(&ps->tasks[id]); /* finishes it (skipped) */
    }
}

void tgc_frame_start(tgc_frame *f) {
    tgc_step *st = f->step;
    if (atomic_load(&f->outstanding) == 0) { /* nothing to run: done already */
        frame_finished(f);
        return;
    }
    /* Once the last source is started the frame may end on another thread,
     * and a loop's frame be reset or freed, before this call returns: the
     * sources are counted first, and nothing of the frame is read after
     * the last one (the loops test `left` before the plan). The caller of
     * a short step keeps the first source that
     * would go to a pool and runs its chain itself once the others are
     * started (TensorFlow's executor runs inexpensive nodes inline): no
     * hand-off to a worker, no wake-up to wait for. The frame cannot end
     * before that source has run. While it runs it stands in for one of
     * its device's workers (tgc_thread_pool_stand_in): its kernels keep
     * to the device's thread count instead of adding the caller to it. */
    tgc_task *mine = NULL;
    const tgc_thread_pool *mine_pool = NULL;
    long left = 0;
    for (int i = 0; i < f->n_parts; i++)
        for (int32_t id = 0; !f->ps[i].plan->remote && id < f->ps[i].plan->g->n_nodes; id++)
            left += f->ps[i].plan->pending[id] == 0;
    for (int i = 0, n_parts = f->n_parts; left > 0 && i < n_parts; i++) {
        tgc_part_state *ps = &f->ps[i];
        const tgc_plan *p = ps->plan;
        if (p->remote) continue;
        for (int32_t id = 0; left > 0 && id < p->g->n_nodes; id++) { /* left first: p may be gone */
            if (p->pending[id] != 0) continue;
            left--;
            if (in_order(ps, id) && !claim_turn(ps, id)) continue; /* started in its turn */
            bool pooled = p->role[id] != TGC_ROLE_CONST && p->role[id] != TGC_ROLE_RECV;
            if (mine == NULL && pooled && f->parent == NULL && st->caller_runs) {
                mine = &ps->tasks[id];
                mine_pool = p->pool;
            } else {
                start_source(st, ps, id);
            }
        }
    }
    if (mine != NULL) {
        tgc_thread_pool_stand_in(mine_pool);
        run_task(mine);
        tgc_thread_pool_stand_in(NULL);
    }
}

/* A handle on graph output value v where it lies (a function's outputs,
 * as an eager op's result). */
static tgc_status fetch_in_place(const tgc_value *v, tgc_tensor **out) {
    if (tgc_value_is_list(v)) return tgc_tensor_of_list(v, out);
    tgc_value kept = *v;
    if (kept.buf != NULL) tgc_buffer_retain(kept.buf);
    tgc_status s = tgc_tensor_wrap(&kept, out);
    if (s != TGC_OK) tgc_buffer_release(kept.buf);
    return s;
}

/* Outputs of at least this many bytes in host memory, made by a pool of
 * one worker (not a short step, whose caller ran its chain itself), are
 * copied into the caller's tensor by that worker, not by the caller. The caller's core reading the output left its lines there,
 * and the next run's first kernel to write that buffer, on the worker's
 * core, paid for taking them back: seven 3x3 depthwise layers with a
 * 1.6 MB output, 1 thread, first layer 243-252 -> 88-90 us, the run
 * 0.93-0.98 -> 0.73-0.77 ms (`tgc run`, libraries alternating). A pool
 * of two made the output on both cores, so either copies half from the
 * other's: there the caller's own copy was as fast (0.49-0.53 against
 * 0.50-0.52 ms), one hand-off less. Where a copy runs never changes the
 * bytes. */
#define COPY_ON_POOL_BYTES ((size_t)256 << 10)

/* One copy handed to a pool worker; the caller waits for `done`. */
typedef struct pool_copy {
    void *dst;
    const void *src;
    size_t n;
    atomic_bool done;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} pool_copy;

static void pool_copy_run(void *arg) {
    pool_copy *c = arg;
    memcpy(c->dst, c->src, c->n);
    pthread_mutex_lock(&c->lock); /* the caller may free c once done is seen: signal under the lock */
    atomic_store(&c->done, true);
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static bool pool_copy_done(void *arg) { return atomic_load(&((pool_copy *)arg)->done); }

/* Copies n bytes of host memory from src to dst on the worker of `pool`
 * when it has one (COPY_ON_POOL_BYTES and up, queued ahead of other
 * tasks; the caller spins, then sleeps, until it is done), else on the
 * calling thread (so does a worker of `pool` itself: it would wait for
 * itself). */
static void copy_on_pool(tgc_thread_pool *pool, void *dst, const void *src, size_t n) {
    if (pool == NULL || tgc_thread_pool_size(pool) != 1 || n < COPY_ON_POOL_BYTES ||
        tgc_thread_pool_worker_index(pool) >= 0) {
        memcpy(dst, src, n);
        return;
    }
    pool_copy c = {.dst = dst, .src = src, .n = n};
    atomic_init(&c.done, false);
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cond, NULL);
    if (tgc_thread_pool_submit_first(pool, pool_copy_run, &c) != TGC_OK) {
        memcpy(dst, src, n);
    } else if (!tgc_spin_until(pool_copy_done, &c)) {
        pthread_mutex_lock(&c.lock);
        while (!atomic_load(&c.done)) pthread_cond_wait(&c.cond, &c.lock);
        pthread_mutex_unlock(&c.lock);
    }
    pthread_mutex_lock(&c.lock); /* the worker has let go of c */
    pthread_mutex_unlock(&c.lock);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.lock);
}

/* The pool of the session's device d, or NULL. */
static tgc_thread_pool *pool_of(const tgc_session *s, const tgc_device *d) {
    for (int i = 0; i < s->n_devices; i++)
        if (s->devices[i] == d) return s->pools[i];
    return NULL;
}

/* Copies a graph output into a new host tensor for the caller (a
 * function's output: a handle on it where it lies). */
static tgc_status fetch(tgc_step *st, int i, tgc_tensor **out, tgc_diags *diags) {
    const tgc_value *v = st->remote_out != NULL && st->s->plans[st->s->compiled.parts.outputs[i].part].remote
                             ? &st->remote_out[i]
                             : tgc_frame_output(&st->root, i);
    size_t nbytes = tgc_value_nbytes(v);
    tgc_status s;
    if (st->s->shared_devices)
        s = fetch_in_place(v, out);
    else if (tgc_value_is_list(v))
        s = tgc_tensor_of_list(v, out);
    else if (v->dtype == TGC_STRING) /* host memory only; the new tensor gets its own copy of each string */
        s = tgc_buffer_host_ptr(v->buf) != NULL || nbytes == 0
                ? tgc_tensor_create(v->dtype, v->rank, v->dims, tgc_buffer_host_ptr(v->buf), out)
                : TGC_ERR_RUNTIME;
    else s = tgc_tensor_alloc(v->dtype, v->rank, v->dims, out); /* every byte copied below */
    bool copy = s == TGC_OK && !st->s->shared_devices && nbytes > 0 && v->dtype != TGC_STRING && !tgc_value_is_list(v);
    const void *host = copy ? tgc_buffer_host_ptr(v->buf) : NULL;
    if (host != NULL) /* host memory: copied where it was made (a short step's caller made it) */
        copy_on_pool(st->caller_runs ? NULL : pool_of(st->s, v->buf->device), (void *)tgc_tensor_data(*out), host,
                     nbytes);
    else if (copy)
        s = v->buf->device->ops->copy_to_host(v->buf->device, (void *)tgc_tensor_data(*out), v->buf->mem, 0, nbytes);
    if (s != TGC_OK)
        tgc_diag_error(diags, st->s->g->path, (tgc_srcpos){0, 0}, s == TGC_ERR_NOMEM ? "out-of-memory" : "copy-failed",
                       "output '%s': %s %zu bytes to host memory", st->s->output_names[i],
                       s == TGC_ERR_NOMEM ? "out of memory allocating" : "cannot copy", nbytes);
    return s;
}

/* Waits for the devices' queues: a run returns with its work done. */
static void synchronize(tgc_step *st) {
    for (int i = 0; i < st->s->n_devices; i++)
        if (st->s->pools[i] != NULL) st->s->devices[i]->ops->synchronize(st->s->devices[i]); /* not a stand-in */
}

/* Each device's activity so far (tgc_device_ops.activity), with the
 * memory watch on: into now[i] for device i, -1 launches where the device
 * does not count. */
static void activity_now(const tgc_session *s, tgc_device_activity *now) {
    for (int i = 0; s->watch != NULL && i < s->n_devices; i++) {
        now[i].launches = -1;
        tgc_device *d = s->devices[i];
        if (d != NULL && d->ops->activity != NULL) d->ops->activity(d, &now[i]);
    }
}

/* The step's activity per device (now less `before`) into the watch. */
static void note_activity(const tgc_session *s, const tgc_device_activity *before) {
    tgc_device_activity now[TGC_MAX_DEVICES];
    activity_now(s, now);
    for (int i = 0; s->watch != NULL && i < s->n_devices; i++) {
        if (now[i].launches < 0) continue;
        tgc_memory_gauge *gg = &s->watch->gauges[i];
        pthread_mutex_lock(&gg->lock);
        gg->last_step = (tgc_device_activity){now[i].launches - before[i].launches,
                                              now[i].host_waits - before[i].host_waits,
                                              now[i].allocations - before[i].allocations};
        gg->activity_counted = true;
        pthread_mutex_unlock(&gg->lock);
    }
}

/* The step's launches as its devices timed them, into the trace. OpenCL
 * 1.2 has no clock shared with the host: each launch's queued time on the
 * device's clock is paired with the host's clock read right after the
 * enqueue, which comes a little later; the smallest such offset of a
 * device's launches in the step converts all of them, so their order and
 * gaps stay the device's own. Call after the devices synchronized. */
static void trace_device_times(tgc_step *st) {
    tgc_device *devs[TGC_MAX_DEVICES];
    int64_t offset[TGC_MAX_DEVICES];
    int n_devs = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < st->events.count; i++) {
            const tgc_device_event *e = &st->events.items[i];
            uint64_t queued, start, end;
            if (e->device->ops->event_times == NULL ||
                !e->device->ops->event_times(e->device, e->handle, &queued, &start, &end) || end < start ||
                start < queued || queued > (uint64_t)INT64_MAX)
                continue;
            int d = 0;
            while (d < n_devs && devs[d] != e->device) d++;
            int64_t off = e->host_enqueue_ns - (int64_t)queued;
            if (pass == 0) {
                if (d == n_devs && n_devs < TGC_MAX_DEVICES) devs[n_devs] = e->device, offset[n_devs++] = off;
                else if (d < n_devs && off < offset[d]) offset[d] = off;
            } else if (d < n_devs && (int64_t)start + offset[d] >= 0) {
                uint64_t us = (uint64_t)((int64_t)start + offset[d]) / 1000u;
                tgc_trace_device(st->trace, e->device->name, e->node, e->kernel, st->id, us,
                                 us + (end - start) / 1000u);
            }
        }
}

static bool all_finished(void *arg) { return atomic_load(&((tgc_step *)arg)->root.outstanding) == 0; }

/* A step counts as short (its caller runs its first chain and spins on the
 * rest) while the session's last step
 * took at most this many spins (TGC_SPIN_US): on a machine where a futex
 * wake-up costs ~30 us, a batch-1 MLP whose step takes 60-120 us lost
 * half its time to the two wake-ups of a hand-off (1 thread: 0.17 ms a
 * step handed off, 0.08 run by the caller standing in for the worker). */
#define SHORT_STEP_SPINS 4

tgc_status tgc_step_execute(tgc_session *s, int64_t step_id, const tgc_tensor **feeds, tgc_tensor **outputs,
                            tgc_trace *trace, tgc_diags *diags) {
    /* Across processes the transport tells sessions apart too: every rank
     * creates its distributed sessions, and runs their steps, in one order. */
    tgc_step st = {.s = s, .id = step_id, .feeds = feeds, .trace = trace, .fail_node = s->settings->fail_node,
                   .stop_node = s->settings->stop_node,
                   .distributed = s->distributed, .rank = s->rank,
                   .step_id = s->distributed ? s->dist_id << 40 | (uint64_t)step_id : 0};
    pthread_mutex_init(&st.lock, NULL);
    pthread_cond_init(&st.done_cond, NULL);
    atomic_init(&st.failed, false);
    tgc_deferred_checks_init(&st.checks);
    tgc_device_events_init(&st.events);
    st.root = (tgc_frame){.step = &st, .parts = &s->compiled.parts, .plans = s->plans};
    tgc_rendezvous_step_prefix(step_id, st.root.key, sizeof st.root.key);
    tgc_status result = tgc_rendezvous_create(&st.rendezvous);
    if (result == TGC_OK) {
        st.root.feeds = tgc_calloc((size_t)s->g->n_inputs_nodes + 1, sizeof *st.root.feeds);
        if (st.root.feeds == NULL) result = TGC_ERR_NOMEM;
        /* Another process than rank 0 is fed nothing: its inputs are on task 0. */
        for (int32_t i = 0; result == TGC_OK && i < s->g->n_inputs_nodes; i++)
            if (feeds[i] != NULL) st.root.feeds[i] = feeds[i]->v;
    }
    if (result == TGC_OK && s->watch != NULL) {
        st.watch_live = tgc_malloc((size_t)s->watch->n_gauges * sizeof *st.watch_live);
        if (st.watch_live == NULL) result = TGC_ERR_NOMEM;
        for (int i = 0; result == TGC_OK && i < s->watch->n_gauges; i++) atomic_init(&st.watch_live[i], 0);
    }
    if (result == TGC_OK) result = tgc_frame_init(&st.root);
    st.parts = st.root.ps;
    if (result == TGC_OK && st.distributed) result = tgc_step_dist_begin(&st);
    if (result == TGC_OK && s->watch != NULL && st.rank == 0) tgc_watch_feeds(s->watch, s->g, feeds);
    if (result == TGC_OK) {
        /* The caller runs a short step's first chain itself, then spins for
         * the rest (a small graph is done before a futex wake-up would
         * arrive), and sleeps at once for a longer one: spinning there took
         * a core from the device's workers (MLP batch 64 at 2 threads on 2
         * cores: its first 100-200 runs at 0.37-0.41 ms in one process of
         * two, 0.22 in the other; no spin, 0.20 in every one; the batch-1
         * MLP's 0.03 ms steps 1.5x slower without it). Short: as long as
         * SHORT_STEP_SPINS spins. */
        int64_t t0 = tgc_now_ns(), last = atomic_load_explicit(&s->last_step_ns, memory_order_relaxed);
        tgc_device_activity before[TGC_MAX_DEVICES];
        activity_now(s, before);
        bool short_step = last <= (int64_t)s->settings->spin_us * 1000 * SHORT_STEP_SPINS;
        st.caller_runs = short_step && !st.distributed;
        tgc_frame_start(&st.root);
        if (short_step) tgc_spin_until(all_finished, &st);
        pthread_mutex_lock(&st.lock);
        while (!st.done) pthread_cond_wait(&st.done_cond, &st.lock);
        pthread_mutex_unlock(&st.lock);
        atomic_store_explicit(&s->last_step_ns, tgc_now_ns() - t0, memory_order_relaxed);
        if (st.distributed) tgc_step_dist_finish(&st);
        if (atomic_load(&st.failed)) {
            result = st.status;
            tgc_diag_error(diags, s->g->path, st.pos, st.rule, "%s", st.message);
        }
        for (int i = 0; result == TGC_OK && st.rank == 0 && i < s->g->n_outputs; i++)
            result = fetch(&st, i, &outputs[i], diags);
        /* after the fetches: a device whose outputs came back by a blocking
         * copy has nothing left to wait for (its queue is in order) */
        synchronize(&st);
        note_activity(s, before);
        if (st.trace != NULL) trace_device_times(&st);
        const tgc_deferred_check *bad = tgc_deferred_checks_failed(&st.checks);
        if (result == TGC_OK && bad != NULL) { /* a check the step's kernels left for its end */
            result = TGC_ERR_RUNTIME;
            tgc_diag_error(diags, s->g->path, bad->node->pos, "kernel-failed", "node '%s' (%s) on %s: %s",
                           tgc_node_label(bad->node), bad->node->op_name, bad->device, bad->reason);
        }
    }
    if (result != TGC_OK)
        for (int i = 0; i < s->g->n_outputs; i++) {
            tgc_tensor_release(outputs[i]);
            outputs[i] = NULL;
        }
    if (st.distributed) tgc_step_dist_end(&st);
    tgc_frame_release(&st.root);
    for (int i = 0; st.watch_live != NULL && i < s->watch->n_gauges; i++)
        atomic_fetch_add(&s->watch->gauges[i].left, atomic_load(&st.watch_live[i]));
    tgc_free(st.watch_live);
    tgc_free(st.root.feeds);
    tgc_rendezvous_free(st.rendezvous);
    tgc_deferred_checks_release(&st.checks); /* every read into it done: the devices synchronized */
    tgc_device_events_release(&st.events);
    pthread_cond_destroy(&st.done_cond);
    pthread_mutex_destroy(&st.lock);
    return result;
}
