/* One run (a step) of a session: the state every worker thread shares.
 * Private to executor/. */
#ifndef TGC_EXECUTOR_STEP_H
#define TGC_EXECUTOR_STEP_H

#include "executor/session.h"
#include "executor/trace.h"
#include "partition/rendezvous.h"

#include <pthread.h>

/* The most inputs or outputs one node may have at run time (Concat, Max...). */
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

/* Copies `v` into a new buffer on `to` (*out), through the host when
 * neither side is host memory. */
tgc_status tgc_value_copy(const tgc_value *v, tgc_device *to, tgc_buffer **out);

/* True when d's memory is host memory (the cpu devices and the host). */
static inline bool tgc_is_host_memory(const tgc_device *d) { return d->kind == TGC_DEVICE_CPU; }

#endif
