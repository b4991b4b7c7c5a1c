/* The stream (see run_stream.h): K workers, a step counter and an emit
 * turn under one lock. A worker takes step i, loads and runs it without
 * the lock, waits until steps 0..i-1 are emitted, then emits i outside the
 * lock (no other worker may emit until it passes the turn on, so output
 * stays in order while the other workers keep running steps). */
#include "tools/run_stream.h"

#include "tools/cli.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct stream_state {
    const tgc_stream *st;
    pthread_mutex_t lock;
    pthread_cond_t turn; /* emitted moved on, or stop */
    int next;            /* the next step to take */
    int emitted;         /* steps emitted: the step whose turn it is */
    bool stop;           /* a step failed: take no more, emit no more */
    int rc;              /* the failing step's exit code */
    double *latency;     /* step -> seconds in tgc_session_run */
    double start, end;
    double first_end; /* when the first step was emitted */
} stream_state;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int exit_code(tgc_status s) {
    return s == TGC_OK ? TGC_EXIT_OK : s == TGC_ERR_INVALID ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
}

/* Loads and runs step i: its exit code, the outputs in outs on success. */
static int run_step(stream_state *ss, int i, tgc_tensor **feeds, tgc_tensor **outs, tgc_diags *d) {
    const tgc_stream *st = ss->st;
    for (int k = 0; k < st->n_feeds; k++) feeds[k] = NULL;
    int rc = st->load(st->ctx, i, feeds, d);
    if (rc == TGC_EXIT_OK) {
        double t0 = now_s();
        rc = exit_code(tgc_session_run(st->session, st->n_feeds, st->names, feeds, outs, d));
        ss->latency[i] = now_s() - t0; /* this worker's own slot, read after the join */
    }
    for (int k = 0; k < st->n_feeds; k++) tgc_tensor_release(feeds[k]);
    return rc;
}

/* Waits for step i's turn; false when the stream stopped meanwhile. */
static bool wait_turn(stream_state *ss, int i) {
    pthread_mutex_lock(&ss->lock);
    while (!ss->stop && ss->emitted != i) pthread_cond_wait(&ss->turn, &ss->lock);
    bool go = !ss->stop;
    pthread_mutex_unlock(&ss->lock);
    return go;
}

static void pass_turn(stream_state *ss, int rc) {
    pthread_mutex_lock(&ss->lock);
    if (rc != TGC_EXIT_OK) {
        ss->stop = true;
        ss->rc = rc;
    } else {
        ss->emitted++;
        ss->end = now_s();
        if (ss->emitted == 1) ss->first_end = ss->end;
    }
    pthread_cond_broadcast(&ss->turn);
    pthread_mutex_unlock(&ss->lock);
}

static void *worker(void *arg) {
    stream_state *ss = arg;
    const tgc_stream *st = ss->st;
    int n_out = tgc_session_output_count(st->session);
    tgc_tensor **feeds = calloc((size_t)st->n_feeds + 1, sizeof *feeds);
    tgc_tensor **outs = calloc((size_t)n_out + 1, sizeof *outs);
    for (;;) {
        pthread_mutex_lock(&ss->lock);
        int i = ss->stop || ss->next >= st->n_steps ? -1 : ss->next++;
        pthread_mutex_unlock(&ss->lock);
        if (i < 0) break;
        tgc_diags *d = tgc_diags_create();
        int rc = feeds && outs && d ? run_step(ss, i, feeds, outs, d) : TGC_EXIT_FAILED;
        if (wait_turn(ss, i)) { /* my turn: nobody else emits until pass_turn */
            if (rc == TGC_EXIT_OK) rc = st->emit(st->ctx, i, outs);
            if (rc != TGC_EXIT_OK)
                fprintf(stderr, "tgc: error: step %d (%s) failed%s\n", i + 1, st->describe(st->ctx, i),
                        d != NULL && tgc_diags_count(d) > 0 ? ":" : "");
            tgc_diags_print(d, stderr);
            pass_turn(ss, rc);
        }
        for (int k = 0; outs != NULL && k < n_out; k++) {
            tgc_tensor_release(outs[k]);
            outs[k] = NULL;
        }
        tgc_diags_free(d);
        if (feeds == NULL || outs == NULL) break;
    }
    free(feeds);
    free(outs);
    return NULL;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int tgc_stream_run(const tgc_stream *st, tgc_stream_figures *figures) {
    *figures = (tgc_stream_figures){0};
    stream_state ss = {.st = st, .latency = calloc((size_t)st->n_steps, sizeof(double))};
    pthread_t threads[TGC_STREAM_MAX_INFLIGHT];
    int started = 0;
    if (ss.latency == NULL) return TGC_EXIT_FAILED;
    pthread_mutex_init(&ss.lock, NULL);
    pthread_cond_init(&ss.turn, NULL);
    ss.start = ss.end = now_s();
    int n = st->inflight < st->n_steps ? st->inflight : st->n_steps;
    for (; started < n; started++)
        if (pthread_create(&threads[started], NULL, worker, &ss) != 0) break;
    if (started == 0) worker(&ss); /* no thread could start: the steps run here, one at a time */
    for (int t = 0; t < started; t++) pthread_join(threads[t], NULL);
    int rc = ss.stop ? ss.rc : ss.emitted == st->n_steps ? TGC_EXIT_OK : TGC_EXIT_FAILED;
    figures->steps_done = ss.emitted;
    figures->elapsed_s = ss.end - ss.start;
    figures->warm_elapsed_s = ss.emitted > 1 ? ss.end - ss.first_end : 0;
    if (ss.emitted > 0) {
        qsort(ss.latency, (size_t)ss.emitted, sizeof *ss.latency, compare_doubles);
        figures->latency_min_s = ss.latency[0];
        figures->latency_median_s = ss.latency[ss.emitted / 2];
        figures->latency_max_s = ss.latency[ss.emitted - 1];
    }
    pthread_cond_destroy(&ss.turn);
    pthread_mutex_destroy(&ss.lock);
    free(ss.latency);
    return rc;
}
