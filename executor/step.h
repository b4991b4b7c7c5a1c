/* One run (a step) of a session: the state every worker thread shares.
 * Private to executor/. */
#ifndef TGC_EXECUTOR_STEP_H
#define TGC_EXECUTOR_STEP_H

#include "devices/deferred_checks.h"
#include "devices/device_events.h"
#include "executor/session.h"
#include "executor/trace.h"
#include "partition/rendezvous.h"

#include <pthread.h>

/* Inputs and outputs a node's run keeps on the stack; a node with more
 * (Concat, Max... of any arity) takes its arrays from the heap. */
#define TGC_RUN_MAX_IO 64

typedef struct tgc_step tgc_step;
typedef struct tgc_frame tgc_frame;
typedef struct tgc_part_state tgc_part_state;

/* A node to run: what a pool task carries. */
typedef struct tgc_task {
    tgc_step *step;
    tgc_part_state *ps;
    int32_t node;
} tgc_task;

/* One partition's live state in a frame. */
struct tgc_part_state {
    tgc_plan *plan;
    tgc_frame *frame;         /* the frame it runs in */
    int part;                 /* its partition in the frame's partitioning */
    tgc_value *vals;          /* slot -> value (buf NULL once released) */
    atomic_int *remaining;    /* slot -> uses still to come */
    atomic_int *pending;      /* node id -> inputs not yet available */
    tgc_task *tasks;          /* node id -> its task */
    tgc_memory_watch *watch;  /* the session's, or NULL: then nothing below is kept */
    tgc_watch_slot *wslots;   /* slot -> what the watch counts of it */
    /* Where the plan orders its nodes (tgc_plan.next_in_order, the root
     * frame only): 2 x the node id next to start, + 1 once started. */
    atomic_int cursor;
};

/* One run of a set of partitions: the step's graph (the root frame), or
 * one iteration of a subgraph (TensorFlow's frames and iterations). Every
 * node of the frame's partitions finishes exactly once per run of the
 * frame; the last one to finish ends the run: the root wakes the caller,
 * a subgraph's frame calls `done` (executor/control_flow.c), which may
 * reset the frame and run it again for the next iteration. */
struct tgc_frame {
    tgc_step *step;
    tgc_frame *parent;                /* NULL for the root */
    const tgc_partitioning *parts;    /* whose partitions run */
    tgc_plan *plans;
    tgc_part_state *ps;               /* one per partition */
    int n_parts;
    atomic_long outstanding;          /* nodes not yet finished in this run */
    /* The values its input nodes take, by feed index (the graph's inputs;
     * a subgraph's formal inputs, then its captures). A feed whose `take`
     * is set hands its buffer reference over to the input's slot (a carried
     * value, owned by the loop, so that the body may overwrite it in
     * place); the others are retained. */
    tgc_value *feeds;
    bool *take;
    void (*done)(tgc_frame *f);       /* NULL at the root */
    void *ctx;                        /* done's */
    /* The prefix of its rendezvous keys, unique in the session: the
     * step's "step17/" at the root; the parent's, then "NODE@ITERATION/"
     * (so that pairs of different steps, frames and iterations never
     * meet; partition/rendezvous.h). */
    char key[256];
    /* For messages: the control node running it and the iteration. */
    const char *node_name, *op_name;
    int64_t iteration;
};

struct tgc_step {
    tgc_session *s;
    int64_t id;               /* the step id its rendezvous keys carry (tgc_session_next_step_id) */
    tgc_part_state *parts;    /* the root frame's */
    tgc_frame root;
    tgc_rendezvous *rendezvous;
    const tgc_tensor **feeds; /* original input id -> feed */
    pthread_mutex_t lock;     /* guards done and the first error */
    pthread_cond_t done_cond;
    bool done;
    atomic_bool failed;
    tgc_status status;        /* the first error */
    char message[1024];       /* its message, with its source position */
    tgc_srcpos pos;
    char rule[32];
    tgc_trace *trace;         /* NULL unless tracing */
    /* The caller runs the root frame's last source itself rather than
     * handing it to a pool and sleeping (a step as short as the spin). */
    bool caller_runs;
    tgc_deferred_checks checks; /* its kernels' checks left for its end (devices/deferred_checks.h) */
    tgc_device_events events;   /* with a trace: its kernels' launches, for their device-side times */
    atomic_llong *watch_live; /* with the memory watch: bytes of this step's slots now, per gauge; else NULL */
    const char *fail_node;    /* test hook: the session's TGC_FAIL_NODE, the node made to fail; NULL: none */
    const char *stop_node;    /* test hook: the session's TGC_STOP_NODE, the node at which the process stops (SIGSTOP),
                               * as a machine that froze: its peers must fail, not hang (tests/distributed) */
    /* A session spanning processes (executor/step_dist.c): the step's id
     * (the same on every rank), and what this rank waits for besides its
     * own partitions: rank 0 the outputs produced elsewhere, the others
     * rank 0's word that the step ended well. */
    bool distributed;
    int rank;
    uint64_t step_id;
    int remote_left;          /* under lock */
    tgc_value *remote_out;    /* rank 0: graph output i when produced in another process */
    struct tgc_remote_wait *waits;
};

/* ---- Steps spanning processes (step_dist.c) ----------------------------------- */

/* Registers the step with the transport and asks the rendezvous for what
 * this rank waits on from others. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_step_dist_begin(tgc_step *st);

/* After the rank's own partitions finished: sends its outputs to rank 0
 * (other ranks) or the step's end to every peer (rank 0), and waits for
 * what tgc_step_dist_begin asked for. */
void tgc_step_dist_finish(tgc_step *st);

/* Unregisters the step; releases what came and was not used. */
void tgc_step_dist_end(tgc_step *st);

/* A _Send whose _Recv is in another process: pushes the value (copied to
 * host memory first when it is elsewhere) to that rank. */
void tgc_step_dist_send(tgc_step *st, tgc_part_state *ps, int32_t id, const char *key, const tgc_value *v, int task);

/* ---- Frames (step.c) ----------------------------------------------------------- */

/* Sets up frame f (zeroed but for step, parent, parts, plans, feeds, take,
 * done, ctx, key and the names) to run its partitions: part states and
 * their arrays. TGC_OK or TGC_ERR_NOMEM (then tgc_frame_release frees what
 * was made). */
tgc_status tgc_frame_init(tgc_frame *f);

/* Makes f ready for another run: every slot released, counts as at the
 * start. The previous run must have finished. */
void tgc_frame_reset(tgc_frame *f);

/* Starts a run of f: its nodes with nothing pending go to their devices'
 * pools, each _Recv asks the rendezvous. A frame with no nodes ends at
 * once (f->done runs on this thread). */
void tgc_frame_start(tgc_frame *f);

/* Releases f's slots and arrays (not f itself). */
void tgc_frame_release(tgc_frame *f);

/* The value of graph output i of the frame's graph (its partitioning's
 * fetch table), valid until the frame is reset. */
const tgc_value *tgc_frame_output(const tgc_frame *f, int i);

/* Writes where ps runs, for messages: "" at the root; " in iteration 3 of
 * Loop 'loop1'" inside (an iteration of each enclosing frame too). */
const char *tgc_frame_where(const tgc_part_state *ps, char *buf, size_t size);

/* The rendezvous key of `key` in ps's frame (its prefix added) in buf, or
 * NULL when it does not fit. */
const char *tgc_frame_key(const tgc_part_state *ps, const char *key, char *buf, size_t size);

/* Completes node `id` of ps whose work ended asynchronously (a _Recv's
 * callback, a control node's last iteration): its inputs' uses are
 * dropped, unused outputs released, its consumers counted down; a consumer
 * that became ready goes to the pool. */
void tgc_node_complete(tgc_step *st, tgc_part_state *ps, int32_t id);

/* Runs `fn(arg)` on a worker of `pool` (or, when the pool cannot take it,
 * fails the step: a task that cannot be queued is never run on the caller,
 * whose stack may be a loop's). */
void tgc_step_submit(tgc_step *st, tgc_thread_pool *pool, void (*fn)(void *), void *arg);

/* ---- Control flow (control_flow.c) --------------------------------------------------- */

/* Starts control node `id` of ps (If, Loop, Scan, SequenceMap): its
 * subgraphs run in frames of their own, iteration after iteration, and the
 * node completes (tgc_node_complete) when they end. False when it could
 * not start (the step failed, with a message): the caller completes it. */
bool tgc_control_start(tgc_step *st, tgc_part_state *ps, int32_t id);

/* Test hook: fn(ctx, node, iteration) runs after each iteration of every
 * Loop, Scan and SequenceMap of every session (on the thread that ends the
 * iteration, after its buffers went back), so a test can read the memory
 * figures at iteration k. NULL turns it off. Not for concurrent steps. */
void tgc_control_observe(void (*fn)(void *ctx, const char *node, int64_t iteration), void *ctx);

/* Records the step's first error (later ones are dropped) and aborts the
 * rendezvous so every waiting receiver fails too. Thread safe. */
void tgc_step_fail(tgc_step *st, tgc_status status, tgc_srcpos pos, const char *rule, const char *fmt, ...)
    TGC_PRINTF(5, 6);

/* As tgc_step_fail for an error that came from a peer process (its message
 * as it wrote it): nothing is sent back. */
void tgc_step_fail_from_peer(tgc_step *st, tgc_status status, const char *message);

/* Runs one kernel node: places its inputs, infers its output shapes from
 * the actual inputs, allocates (or forwards) its outputs and runs the
 * kernel. Outputs go to the partition's slots. On failure reports through
 * tgc_step_fail and returns its status. */
tgc_status tgc_node_run(tgc_step *st, tgc_part_state *ps, int32_t id);

/* The memory watch (executor/memory_report.c; each a no-op unless
 * ps->wslots): a slot the step now holds a buffer in (ps->vals[slot], set
 * before the call) is counted in its buffer's memory, and the largest
 * tensors are noted when that memory reaches a new peak; a forwarded
 * output takes over its input's count; a released slot is uncounted.
 * Thread safe; atomics, and a lock only at a new peak. */
void tgc_watch_set(tgc_step *st, tgc_part_state *ps, int32_t slot, int32_t node);
void tgc_watch_move(tgc_part_state *ps, int32_t from, int32_t to, int32_t node);
void tgc_watch_release(tgc_part_state *ps, int32_t slot);
/* As tgc_watch_set for a _Recv's slot, when the receive made a copy; a
 * buffer shared with the sender (host to host) stays the sender's. */
void tgc_watch_recv(tgc_step *st, tgc_part_state *ps, int32_t slot, int32_t node);
/* Adds `ns` nanoseconds that one of ps's nodes ran to its device's busy
 * time (the report's "measured step time"). */
void tgc_watch_time(tgc_step *st, tgc_part_state *ps, int64_t ns);
/* Notes the shapes of a step's feeds (original input id -> feed) and
 * counts the run. */
void tgc_watch_feeds(tgc_memory_watch *w, const tgc_graph *g, const tgc_tensor **feeds);

/* Writes "out of memory allocating WHAT (float32 [400, 8, 8, 8], 819200
 * bytes); cpu0 has ... bytes in use ..., limit ..." into buf: the words of
 * every out-of-memory error of a run. */
const char *tgc_oom_str(char *buf, size_t size, const char *what, const tgc_value *v, tgc_device *d);

#endif
