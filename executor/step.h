/* One run (a step) of a session: the state every worker thread shares.
 * Private to executor/. */
#ifndef TGC_EXECUTOR_STEP_H
#define TGC_EXECUTOR_STEP_H

#include "executor/session.h"
#include "executor/trace.h"
#include "partition/rendezvous.h"

#include <pthread.h>

/* Inputs and outputs a node's run keeps on the stack; a node with more
 * (Concat, Max... of any arity) takes its arrays from the heap. */
#define TGC_RUN_MAX_IO 64

typedef struct tgc_step tgc_step;

/* A node to run: what a pool task carries. */
typedef struct tgc_task {
    tgc_step *step;
    int part;
    int32_t node;
} tgc_task;

/* One partition's live state in the step. */
typedef struct tgc_part_state {
    tgc_plan *plan;
    tgc_value *vals;          /* slot -> value (buf NULL once released) */
    atomic_int *remaining;    /* slot -> uses still to come */
    atomic_int *pending;      /* node id -> inputs not yet available */
    tgc_task *tasks;          /* node id -> its task */
    tgc_memory_watch *watch;  /* the session's, or NULL: then nothing below is kept */
    tgc_watch_slot *wslots;   /* slot -> what the watch counts of it */
} tgc_part_state;

struct tgc_step {
    tgc_session *s;
    tgc_part_state *parts;
    tgc_rendezvous *rendezvous;
    const tgc_tensor **feeds; /* original input id -> feed */
    atomic_long outstanding;  /* nodes not yet finished, over all partitions */
    pthread_mutex_t lock;     /* guards done and the first error */
    pthread_cond_t done_cond;
    bool done;
    atomic_bool failed;
    tgc_status status;        /* the first error */
    char message[1024];       /* its message, with its source position */
    tgc_srcpos pos;
    char rule[32];
    tgc_trace *trace;         /* NULL unless tracing */
    const char *fail_node;    /* test hook: $TGC_FAIL_NODE, the node made to fail */
};

/* Records the step's first error (later ones are dropped) and aborts the
 * rendezvous so every waiting receiver fails too. Thread safe. */
void tgc_step_fail(tgc_step *st, tgc_status status, tgc_srcpos pos, const char *rule, const char *fmt, ...)
    TGC_PRINTF(5, 6);

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
void tgc_watch_recv(tgc_step *st, tgc_part_state *ps, int part, int32_t slot, int32_t node);
/* Notes the shapes of a step's feeds (original input id -> feed) and
 * counts the run. */
void tgc_watch_feeds(tgc_memory_watch *w, const tgc_graph *g, const tgc_tensor **feeds);

/* Writes "out of memory allocating WHAT (float32 [400, 8, 8, 8], 819200
 * bytes); cpu0 has ... bytes in use ..., limit ..." into buf: the words of
 * every out-of-memory error of a run. */
const char *tgc_oom_str(char *buf, size_t size, const char *what, const tgc_value *v, tgc_device *d);

#endif
