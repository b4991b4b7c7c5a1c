/* The steps of a session spanning processes (docs/distributed.md): what a
 * rank does besides running its own partitions.
 *
 * A _Send whose _Recv is in another process pushes its value through the
 * transport (distributed/transport.h); the receiving rank's transport puts
 * it into that step's rendezvous, where the _Recv finds it. Graph outputs
 * produced by other ranks come to rank 0 the same way, under the keys
 * "__output:I". Rank 0 has the last word: once its partitions finished and
 * every output arrived, it sends "__step_done" to every peer, and a peer's
 * step ends only then, so that every rank returns the same verdict (a
 * failure anywhere aborts the step everywhere: tgc_step_fail sends the
 * abort to every peer). */
#include "executor/step.h"

#include "distributed/transport.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdio.h>

#define STEP_DONE_KEY "__step_done"

/* One value this rank waits for from another: output `index`, or -1 for
 * rank 0's end of step. */
typedef struct tgc_remote_wait {
    tgc_step *st;
    int index;
} tgc_remote_wait;

static void peer_aborted(void *ctx, tgc_status status, const char *message) {
    tgc_step_fail_from_peer(ctx, status, message);
}

static void remote_arrived(void *ctx, tgc_status status, tgc_value *received) {
    tgc_remote_wait *w = ctx;
    tgc_step *st = w->st;
    if (status == TGC_OK && w->index >= 0) st->remote_out[w->index] = *received;
    else if (status == TGC_OK) tgc_buffer_release(received->buf);
    else if (!atomic_load(&st->failed))
        tgc_step_fail(st, status, (tgc_srcpos){0, 0}, "recv-failed", "receiving %s: %s",
                      w->index >= 0 ? "an output" : "the end of the step", tgc_status_name(status));
    pthread_mutex_lock(&st->lock);
    if (--st->remote_left == 0) pthread_cond_broadcast(&st->done_cond);
    pthread_mutex_unlock(&st->lock);
}

tgc_status tgc_step_dist_begin(tgc_step *st) {
    const tgc_session *s = st->s;
    int n_out = s->g->n_outputs;
    st->waits = tgc_calloc((size_t)n_out + 1, sizeof *st->waits);
    if (st->waits == NULL) return TGC_ERR_NOMEM;
    if (st->rank == 0 && (st->remote_out = tgc_calloc((size_t)n_out + 1, sizeof *st->remote_out)) == NULL)
        return TGC_ERR_NOMEM;
    if (tgc_dist_step_begin(st->step_id, st->rendezvous, peer_aborted, st) != TGC_OK) return TGC_ERR_NOMEM;
    /* Count first: a value already there completes at once. */
    int n = 0;
    if (st->rank == 0) {
        for (int i = 0; i < n_out; i++) n += s->plans[s->compiled.parts.outputs[i].part].remote;
    } else {
        n = 1;
    }
    st->remote_left = n;
    if (st->rank != 0) {
        st->waits[0] = (tgc_remote_wait){st, -1};
        return tgc_rendezvous_recv_async(st->rendezvous, STEP_DONE_KEY, NULL, remote_arrived, &st->waits[0]);
    }
    for (int i = 0; i < n_out; i++) {
        if (!s->plans[s->compiled.parts.outputs[i].part].remote) continue;
        char key[32];
        snprintf(key, sizeof key, "__output:%d", i);
        st->waits[i] = (tgc_remote_wait){st, i};
        tgc_status r = tgc_rendezvous_recv_async(st->rendezvous, key, NULL, remote_arrived, &st->waits[i]);
        if (r != TGC_OK) return r; /* never: keys are unique */
    }
    return TGC_OK;
}

void tgc_step_dist_send(tgc_step *st, tgc_part_state *ps, int32_t id, const char *key, const tgc_value *v, int task) {
    const tgc_node *n = ps != NULL ? &ps->plan->g->nodes[id] : NULL;
    tgc_value host = *v;
    tgc_status s = TGC_OK;
    char err[256] = "";
    bool elsewhere = v->buf != NULL && !tgc_device_host_memory(v->buf->device);
    if (elsewhere) { /* device memory: to host memory first */
        s = tgc_buffer_copy(v->buf, tgc_value_nbytes(v), tgc_host_device(), &host.buf);
        if (s != TGC_OK) snprintf(err, sizeof err, "cannot copy it to host memory (%s)", tgc_status_name(s));
    }
    if (s == TGC_OK) s = tgc_dist_send(task, st->step_id, key, &host, err, sizeof err);
    if (elsewhere) tgc_buffer_release(host.buf);
    if (s != TGC_OK && !atomic_load(&st->failed)) {
        if (n != NULL)
            tgc_step_fail(st, s, n->pos, "send-failed", "node '%s' (_Send) on %s: cannot send '%s' to rank %d: %s",
                          n->name, ps->plan->device->name, key, task, err);
        else tgc_step_fail(st, s, (tgc_srcpos){0, 0}, "send-failed", "cannot send '%s' to rank %d: %s", key, task, err);
    }
}

void tgc_step_dist_finish(tgc_step *st) {
    const tgc_session *s = st->s;
    if (st->rank != 0 && !atomic_load(&st->failed)) {
        for (int i = 0; i < s->g->n_outputs; i++) {
            const tgc_partition_fetch *o = &s->compiled.parts.outputs[i];
            if (s->plans[o->part].remote) continue;
            char key[32];
            snprintf(key, sizeof key, "__output:%d", i);
            tgc_step_dist_send(st, NULL, -1, key, tgc_frame_output(&st->root, i), 0);
        }
    }
    pthread_mutex_lock(&st->lock);
    while (st->remote_left > 0) pthread_cond_wait(&st->done_cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
    if (st->rank == 0 && !atomic_load(&st->failed)) {
        tgc_value done = {.dtype = TGC_BOOL, .rank = 1, .dims = {0}};
        tgc_status r = tgc_buffer_alloc(tgc_host_device(), 0, &done.buf);
        char err[256] = "";
        for (int peer = 1; r == TGC_OK && peer < tgc_dist_size(); peer++)
            r = tgc_dist_send(peer, st->step_id, STEP_DONE_KEY, &done, err, sizeof err);
        tgc_buffer_release(done.buf);
        if (r != TGC_OK)
            tgc_step_fail(st, r, (tgc_srcpos){0, 0}, "send-failed", "cannot end the step on the other ranks: %s", err);
    }
}

void tgc_step_dist_end(tgc_step *st) {
    tgc_dist_step_end(st->step_id);
    for (int i = 0; st->remote_out != NULL && i < st->s->g->n_outputs; i++) tgc_buffer_release(st->remote_out[i].buf);
    tgc_free(st->remote_out);
    tgc_free(st->waits);
    st->remote_out = NULL;
    st->waits = NULL;
}
