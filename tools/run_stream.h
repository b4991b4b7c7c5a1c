/* Streaming many steps through one session, K at a time, results in order:
 * the engine of `tgc run --inflight K` and `--input-dir DIR`.
 *
 * K worker threads each take the next step number, load its feeds, run it
 * (tgc_session_run: steps on one session run at once, and a model split
 * over devices overlaps its stages: step i's second partition runs while
 * step i+1's first does), then wait for their turn and hand the outputs to
 * `emit` in step order. A worker holds one step at a time, so at most K
 * steps' feeds and outputs are alive: back pressure on the reading too.
 * The first step (in order) that fails stops the stream: the steps before
 * it are emitted, none after.
 *
 * Example usage:
 *     tgc_stream st = {.session = s, .n_steps = 100, .inflight = 4, .n_feeds = 1, .names = names,
 *                      .load = load_step, .emit = print_step, .ctx = &files};
 *     int rc = tgc_stream_run(&st, &figures);
 */
#ifndef TGC_TOOLS_RUN_STREAM_H
#define TGC_TOOLS_RUN_STREAM_H

#include "tgc.h"

#define TGC_STREAM_MAX_INFLIGHT 256

typedef struct tgc_stream {
    tgc_session *session;
    int n_steps;  /* >= 1 */
    int inflight; /* worker threads, 1..TGC_STREAM_MAX_INFLIGHT */
    int n_feeds;  /* the graph inputs each step feeds, named by names[] */
    const char *const *names;
    /* Fills feeds[0..n_feeds) with new tensors for step `step` (the caller
     * of load releases them); a problem goes to diags. Returns an exit code
     * (tools/cli.h). Called from the workers, several at once. */
    int (*load)(void *ctx, int step, tgc_tensor **feeds, tgc_diags *diags);
    /* Takes step `step`'s outputs (borrowed), in step order, one call at a
     * time. Returns an exit code; not TGC_EXIT_OK stops the stream. */
    int (*emit)(void *ctx, int step, tgc_tensor **outputs);
    /* Names step `step` in messages ("input 'b.npy'"). */
    const char *(*describe)(void *ctx, int step);
    void *ctx;
} tgc_stream;

/* What a stream measured: seconds from its start to its last step's end,
 * and each step's latency (its tgc_session_run call), sorted. */
typedef struct tgc_stream_figures {
    int steps_done; /* emitted */
    double elapsed_s;
    /* From the first step's emission to the last's: the steps after the
     * first (which builds the kernels' caches) ran in it; 0 for one step. */
    double warm_elapsed_s;
    double latency_median_s, latency_min_s, latency_max_s;
} tgc_stream_figures;

/* Runs the stream; returns TGC_EXIT_OK when every step ran and was
 * emitted, else the first failure's exit code (its messages printed to
 * stderr, after a line naming the step). *figures is filled either way. */
int tgc_stream_run(const tgc_stream *st, tgc_stream_figures *figures);

#endif
