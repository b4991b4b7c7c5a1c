/* The compile driver: the one way a graph goes down the pipeline, as far
 * as its caller needs: optimize (passes/), place (placer/), partition
 * (partition/). Sessions, control-flow bodies, memory plans, the
 * placement and partition dumps and their C API all compile through here,
 * so what is dumped or planned is what runs. Private to the library.
 *
 * Example usage:
 *     tgc_compile_options o = {.optimize = TGC_OPTIMIZE_DEFAULT, .partition = true};
 *     tgc_compiled c;
 *     if (tgc_compile(g, "cpu,gpu0", &o, diags, &c) == TGC_OK) {
 *         // c.g: the graph placed; c.placement.device[id] indexes c.devices;
 *         // c.parts: one subgraph per device, _Send/_Recv pairs between
 *         tgc_compiled_release(&c);
 *     }
 */
#ifndef TGC_PARTITION_COMPILE_H
#define TGC_PARTITION_COMPILE_H

#include "partition/partition.h"
#include "placer/placer.h"

struct tgc_compiled;

typedef struct tgc_compile_options {
    tgc_optimize_level optimize; /* TGC_OPTIMIZE_NONE: the graph as given (not copied) */
    bool float16;                /* tgc_optimize_options.float16 */
    bool soft_placement;
    int64_t small_host_bytes;    /* tgc_placer_options.small_host_bytes (0: its default) */
    bool partition;              /* false: stop after placement */
    /* Automatic placement (placer/auto.c) of what the rules leave open,
     * under each device's memory: its limit in memory_limits ("cpu0=40MiB",
     * as tgc_session_options) or what its backend reports, less the margin
     * (devices/memory_limit.h); node times from placer/cost.h over pools of
     * `threads` (as tgc_session_options.threads), measured on the devices
     * when measure_costs; for `inflight` steps at once (0 or 1: one step's
     * latency; K: a pipeline's throughput). */
    bool auto_placement;
    const char *memory_limits;
    const char *threads;
    int inflight;
    bool measure_costs;
    /* Under automatic placement, the exact static memory plan the
     * placement is held to: per device of the list, misses[d] the bytes
     * its partition needs beyond what it may hold (0: it fits). NULL: the
     * placer's estimate has the last word. */
    tgc_status (*memory_misses)(const struct tgc_compiled *c, const struct tgc_compile_options *o, int64_t *misses);
    /* Under automatic placement over devices of several kinds, no
     * candidate optimized for one kind alone (a control-flow body, or such
     * a candidate itself). */
    bool whole_list;
    /* The device list ("cpu0") whose kinds the optimizer fuses for; NULL:
     * the devices compiled over. */
    const char *optimize_for;
    /* Automatic placement's cost model over the same device list,
     * borrowed (a one-kind candidate reuses its compile's: the cost files
     * read and the devices' peaks measured once); NULL: one is made. */
    struct tgc_cost_model *cost;
} tgc_compile_options;

typedef struct tgc_compiled {
    const tgc_graph *g;   /* what was placed: `optimized`, or the caller's graph */
    tgc_graph *optimized; /* owned; NULL at TGC_OPTIMIZE_NONE */
    tgc_placer_device devices[TGC_PLACER_MAX_DEVICES];
    int n_devices;
    tgc_placement placement;
    tgc_partitioning parts; /* when partitioned: its devices are `devices` above (so do not copy a compiled) */
    bool partitioned;
} tgc_compiled;

/* Optimizes g (validated and inferred) for the device list `devices`
 * ("cpu,gpu0"; NULL: the default list, devices/backend.h) at
 * opts->optimize, places it on the listed devices and, when
 * opts->partition, partitions it, into *out (release with
 * tgc_compiled_release, also after a failure). g must outlive *out.
 * Errors: TGC_ERR_INVALID with messages in diags (a bad device list, an
 * unsatisfiable placement, a failed pass), TGC_ERR_NOMEM. */
tgc_status tgc_compile(const tgc_graph *g, const char *devices, const tgc_compile_options *opts, tgc_diags *diags,
                       tgc_compiled *out);

/* tgc_compile over a parsed device list (devices[0..n), copied): for a
 * control-flow body, placed on its graph's devices. */
tgc_status tgc_compile_on(const tgc_graph *g, const tgc_placer_device *devices, int n,
                          const tgc_compile_options *opts, tgc_diags *diags, tgc_compiled *out);

/* Sets o's automatic placement on, measured, with what a session's
 * options give it: limits, threads, steps in flight. */
/* The exact check automatic placement is held to: tgc_compile_options
 * .memory_misses over the session's static memory plan (the executor's:
 * executor/memory_plan_check.c). The figures are those a session's check
 * refuses a plan by (not for plans over several processes: all 0).
 * TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_compile_memory_misses(const struct tgc_compiled *c, const tgc_compile_options *o, int64_t *misses);

/* Sets o's automatic placement on, measured, held to the exact memory
 * plan, with what a session's options give it: limits, threads, steps in
 * flight. */
static inline void tgc_compile_options_auto(tgc_compile_options *o, const char *memory_limits, const char *threads,
                                            int inflight) {
    o->auto_placement = o->measure_costs = true;
    o->memory_misses = tgc_compile_memory_misses;
    o->memory_limits = memory_limits;
    o->threads = threads;
    o->inflight = inflight;
}

/* Releases what *c owns (the optimized graph, placement, partitions) and
 * zeroes it. NULL is ignored. */
void tgc_compiled_release(tgc_compiled *c);

/* A subgraph of a compiled graph (If's branches, a Loop's body...),
 * compiled as a graph of its own on the same devices, as a session plans
 * it: labelled after its control nodes ("loop.body",
 * "outer.body.inner.body"). */
typedef struct tgc_compiled_sub {
    const tgc_graph *g; /* the body, borrowed from its control node */
    char *label;        /* owned */
    tgc_compiled c;
} tgc_compiled_sub;

/* Compiles every subgraph of c->g's nodes, and theirs, depth first in
 * node order (at most TGC_MAX_SUBGRAPH_DEPTH deep), on c's devices with
 * opts but no passes (bodies run as their graph's passes left them), into
 * a new array *subs of *n_subs entries (release with
 * tgc_compiled_subs_release, also after a failure). Errors as
 * tgc_compile. */
tgc_status tgc_compile_subgraphs(const tgc_compiled *c, const tgc_compile_options *opts, tgc_diags *diags,
                                 tgc_compiled_sub **subs, int *n_subs);

/* Releases subs[0..n) and the array. NULL is ignored. */
void tgc_compiled_subs_release(tgc_compiled_sub *subs, int n);

#endif
