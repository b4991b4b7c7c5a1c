/* Memory you can predict and see: the static memory plan of a partitioned
 * graph, per-device memory limits, and the executor's watch over the
 * tensors live at each device's peak. Private to the library; the public
 * face is include/tgc.h (tgc_graph_memory_plan, tgc_session_memory_report,
 * tgc_session_options.memory_limits).
 *
 * The plan (memory_plan.c) follows the executor exactly, over its schedule:
 * each partition runs its nodes in node-id order (a topological order),
 * step k being node k. Every output slot that a run allocates is a tensor
 * with a lifetime [first, last]: the step of its node to the step of its
 * last reader (graph outputs: to the last step). Slots the run does not
 * allocate are left out: initializers (resident weights, counted apart),
 * feeds on cpu devices (the caller's host buffers), values a _Recv shares
 * with its sender (host to host). When a kernel may overwrite an input
 * (forward_input) and the executor will let it (this node is the input's
 * last reader, same bytes and dtype, same memory), the output joins the
 * input's buffer, as the executor forwards it; a buffer is one or more
 * tensors, one after the other. The inputs of a Concat in place
 * (executor/concat_in_place.h) join its output's buffer, which lives from
 * the first of them made to the last reader of any. Each memory (a
 * partition's device, and host memory for the int shape values the
 * partition keeps there) then gets:
 *   - the naive sum: every tensor in a memory of its own;
 *   - the lower bound: the most bytes of buffers live at one step;
 *   - the planned peak: the size of an arena where the buffers get offsets
 *     greedily by size, as TensorFlow Lite's arena planner does
 *     (tensorflow/lite/arena_planner.cc, CreateTensorAllocationVector:
 *     buffers live for the whole run first, then by size, largest first,
 *     ties by first step; tensorflow/lite/simple_memory_arena.cc, Allocate:
 *     among the buffers already placed whose lifetimes overlap, the
 *     smallest gap that fits, else the end, offsets aligned to the arena's
 *     alignment), or, where that packs smaller, by the same rule in order
 *     of first use (the order the run allocates in: MNASNet's stem, where
 *     a smaller map between two larger ones pushed greedy by size 25% past
 *     the lower bound, packs to it).
 * Sizes need concrete shapes: symbols are bound (feeds, or --bind), the
 * others taken as 1 (the plan says which); then each op's own inference
 * function runs over the concrete shapes, as the executor does at run time.
 *
 * Example usage:
 *     tgc_memory_plan *mp = NULL;
 *     int64_t symbols[] = {400};                  // N = 400; -1: unbound (1)
 *     if (tgc_memory_plan_build(g, &parts, symbols, diags, &mp) == TGC_OK) {
 *         for (int i = 0; i < mp->n_spaces; i++)
 *             ... mp->spaces[i].name, .arena_bytes, .lower_bound, .naive_sum ...
 *         tgc_memory_plan_free(mp);
 *     }
 */
#ifndef TGC_EXECUTOR_MEMORY_PLAN_H
#define TGC_EXECUTOR_MEMORY_PLAN_H

#include "tgc.h"

#include "devices/device.h"
#include "devices/memory_limit.h"
#include "graph/graph.h"
#include "partition/compile.h"
#include "partition/partition.h"
#include "placer/placer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Host memory's alignment (tgc's allocator); a device's is its backend's
 * (devices/backend.h: the cpu's arena gives 64-byte buffers, OpenCL's 256
 * bytes, or more where the device's base address alignment asks). */
#define TGC_MEMORY_ALIGN_HOST 64

/* How many of the largest live tensors reports show. */
#define TGC_MEMORY_TOP 5

/* ---- the core: offsets and the lower bound over lifetimes ------------------ */

/* One buffer to place: bytes, live from step `first` to step `last`
 * (inclusive), and the offset the planner gives it. */
typedef struct tgc_memory_buffer {
    int64_t bytes;
    int32_t first, last;
    int64_t offset; /* set by tgc_memory_assign_offsets */
    int32_t tensor; /* the plan's first tensor of this buffer (-1 in bare tests) */
} tgc_memory_buffer;

/* Gives every buffer of b[0..n) an offset, by size or in order of first
 * use, whichever arena is smaller (by size where they tie; see above), so
 * that no two buffers live at a common step overlap; stores the arena's
 * size (the largest offset + bytes; 0 when n is 0) in *arena. `n_steps`
 * is the schedule's length (a buffer from step 0 to n_steps - 1 lives for
 * the whole run); `alignment` a power of two. O(n^2) time. TGC_OK,
 * TGC_ERR_NOMEM, or TGC_ERR_INVALID when an offset or the arena would pass
 * INT64_MAX (support/checked.h). */
tgc_status tgc_memory_assign_offsets(tgc_memory_buffer *b, int32_t n, int32_t n_steps, int64_t alignment,
                                     int64_t *arena);

/* The most bytes of buffers live at one step (no arena can be smaller), and
 * the first step where that many are (*busiest; -1 when n is 0). O(n +
 * n_steps); NOMEM-free: returns -1 when host memory is short, INT64_MAX
 * when the buffers' bytes add up past it. */
int64_t tgc_memory_lower_bound(const tgc_memory_buffer *b, int32_t n, int32_t n_steps, int32_t *busiest);

/* ---- the plan of a partitioned graph ----------------------------------------- */

/* One tensor the run allocates: an output slot of a partition's node. */
typedef struct tgc_memory_tensor {
    int32_t node; /* node id in the partition's graph (its step) */
    int32_t port;
    int32_t first, last; /* steps, inclusive */
    int64_t bytes;
    tgc_dtype dtype;
    int rank;
    int64_t dims[TGC_MAX_RANK];
    int32_t buffer; /* index into the space's buffers */
} tgc_memory_tensor;

/* One memory: a partition's device, or the host memory its int shape
 * values (host_outputs, _HostRecv) and host-side initializers live in. */
typedef struct tgc_memory_space {
    char name[32]; /* "cpu0", "gpu0", "/task:1/cpu0", "host" */
    int part;      /* the partition */
    bool host;
    int64_t alignment;
    int32_t n_steps;
    int64_t weights_bytes; /* initializers resident here (not in the arena) */
    int32_t n_weights;
    int64_t replaced_bytes; /* initializers held only in their readers' layouts (in caches_bytes, not above) */
    int64_t feeds_bytes;   /* feeds read in place (the caller's buffers; not in the arena) */
    tgc_memory_tensor *tensors;
    int32_t n_tensors;
    tgc_memory_buffer *buffers;
    int32_t n_buffers;
    int64_t naive_sum;     /* sum of the tensors' bytes */
    int64_t lower_bound;   /* the most bytes of buffers live at one step */
    int32_t busiest_step;  /* where (-1: no tensors) */
    int64_t arena_bytes;   /* the planned peak */
    /* What the kernels hold besides tensors (devices/kernel.h's
     * tgc_kernel_footprint, on a pool of `threads` threads): */
    int threads;
    int64_t workspace_limit; /* each run's (tgc_kernel_ctx.workspace_limit), from the device's memory limit; 0: none */
    int64_t caches_bytes;   /* kept across runs: weights in the kernels' own layouts */
    int64_t *workspaces;    /* per node while it runs, largest first (n_steps entries) */
    int64_t recv_bytes;     /* tensors _Recv lands here outside the sender's buffer (in the arena too) */
    /* Tensors here that a _Send's receiver reads in place (host memory to
     * host memory), bytes per step: with steps in flight the next step
     * starts before the receiver is done with them. */
    int64_t held_sends_bytes;
    /* (inflight - 1) x held_sends_bytes, counted in arena_bytes
     * (tgc_memory_plan_set_inflight): the earlier steps' sends a pipeline
     * may still hold while this device runs a step. */
    int64_t pipelined_bytes;
    /* Tensors whose rank is known only at run time (graph/infer_rank.h):
     * not planned; the device's allocator gives them memory when their node
     * runs. The first TGC_MEMORY_TOP nodes making one, for reports. */
    int32_t n_unplanned;
    int32_t unplanned[TGC_MEMORY_TOP];
} tgc_memory_space;

struct tgc_memory_plan {
    const tgc_graph *g;            /* what is planned: compiled->g, or the caller's graph */
    const tgc_partitioning *parts; /* borrowed, or compiled->parts */
    tgc_memory_space *spaces;      /* two per partition: [2i] its device, [2i+1] host */
    int n_spaces;
    int64_t *symbols;   /* g->n_symbols: the value each symbol was given */
    bool *bound;        /* given by the caller (feeds, --bind) */
    bool *defaulted;    /* unbound but needed: taken as 1 */
    int32_t n_fallback; /* op nodes whose concrete shapes came from substitution, not inference (an input
                         * of unknown rank aside) */
    /* Set when the plan compiled the graph itself (tgc_graph_memory_plan):
     * optimized as a session would run it, placed, partitioned; owned. */
    tgc_compiled *compiled;
    char *device_list;
    const char *threads; /* the session's threads option ("cpu0=2"), borrowed; NULL: each backend's default */
    const char *memory_limits; /* the session's --memory-limit ("cpu0=8MiB"), borrowed; NULL: none */
};

/* Plans every partition of `parts` (a partitioning of g; both borrowed and
 * must outlive *out). symbols[i] (g->n_symbols entries; NULL: none bound)
 * is symbol i's value, or < 0 for unbound (then 1). On success stores a new
 * plan owned by the caller in *out; TGC_ERR_NOMEM, or TGC_ERR_INVALID when
 * a concrete shape cannot be had (message in diags). */
tgc_status tgc_memory_plan_build(const tgc_graph *g, const tgc_partitioning *parts, const int64_t *symbols,
                                 tgc_diags *diags, tgc_memory_plan **out);

/* tgc_memory_plan_build for a session whose devices run pools sized by
 * `threads` under `memory_limits` (as tgc_session_options.threads and
 * .memory_limits; borrowed for the call, NULL: each backend's default
 * width, no limits), which the workspaces depend on (a limit bounds each
 * run's: devices/memory_limit.h, tgc_workspace_limit). */
tgc_status tgc_memory_plan_build_pools(const tgc_graph *g, const tgc_partitioning *parts, const int64_t *symbols,
                                       const char *threads, const char *memory_limits, tgc_diags *diags,
                                       tgc_memory_plan **out);

/* Plans mp for `inflight` steps at once (0 or 1: one at a time): each
 * space's planned peak (arena_bytes) gains its pipelined_bytes, the sends
 * of up to inflight - 1 earlier steps whose receivers still read its
 * buffers (a pipeline's first stage runs step k + 1 while the next stage
 * reads step k's tensor in place; measured: an LSTM split over two cpus at
 * --inflight 2 held 131072 bytes past its step's plan). May be called again
 * with another count. */
void tgc_memory_plan_set_inflight(tgc_memory_plan *mp, int inflight);

/* Parses "N=400,B=2" against g's symbols into symbols[0..g->n_symbols)
 * (entries not named are left as they are). TGC_ERR_INVALID ("bad-bind",
 * naming the graph's symbols) for a malformed list, an unknown symbol or a
 * negative value. */
tgc_status tgc_memory_parse_bind(const tgc_graph *g, const char *bind, int64_t *symbols, tgc_diags *diags);

/* The tensors of `sp` live at step `step`, one per buffer (a forwarded
 * buffer's newest tensor), the largest first: up to `max` indexes into
 * sp->tensors in out[]; returns how many. */
int tgc_memory_space_live_at(const tgc_memory_space *sp, int32_t step, int32_t *out, int max);

/* ---- limits ------------------------------------------------------------------- */

/* Applies "DEV=SIZE[,DEV=SIZE...]" to devices[0..n) with
 * tgc_device_set_limit ("cpu" is cpu0, "gpu" gpu0). TGC_ERR_INVALID
 * ("bad-memory-limit") for a malformed spec, a size below 1 byte, or a
 * device not among them. */
tgc_status tgc_memory_limits_apply(tgc_device *const *devices, int n, const char *spec, tgc_diags *diags);

/* Writes "cpu0 has 1024 bytes in use in 3 buffers (peak 4096, reserved
 * 1048576), limit 2048" (", no limit" when none) into buf. */
const char *tgc_memory_figures_str(tgc_device *d, char *buf, size_t size);

/* ---- the hard limit: what each device would need against what it has ---------- */

/* (The margin a plan leaves, TGC_MEMORY_MARGIN_PERCENT: devices/memory_limit.h.) */

/* One device's need under a plan, by category, and what it has. Bytes. */
typedef struct tgc_memory_need {
    char device[32];
    int part;            /* the partition */
    int64_t weights;     /* initializers resident on the device */
    int64_t caches;      /* kernels' own layouts of weights (host memory; a bound where a library sizes them) */
    int64_t activations; /* the partition's planned arena (tensors, _Recv'd ones among them) */
    int64_t workspaces;  /* the `threads` largest per-node workspaces: nodes that may run at once */
    int64_t staging;     /* of activations: tensors _Recv lands here */
    int64_t need;        /* weights + caches + activations + workspaces (INT64_MAX when past it) */
    int64_t has;         /* its --memory-limit, else the memory it reports; -1: unknown */
    bool limited;        /* has is a --memory-limit */
    bool shared;         /* has is the host's memory, which other devices of the list share */
    int64_t usable;      /* has less TGC_MEMORY_MARGIN_PERCENT; -1: unknown */
    bool partial;        /* symbols unbound: activations and workspaces not counted */
    bool fits;
} tgc_memory_need;

/* Each partition's device's need under mp (built with symbols bound or
 * not: where the plan took an unbound symbol as 1, only weights and
 * caches count, since the rest would be a guess) against what it has:
 * `memory_limits` ("DEV=SIZE,...", NULL: none) or the memory
 * tgc_device_memory reports for it. Devices in host memory without a
 * limit share the host's memory: their needs are compared together.
 * out[0..mp->parts->n_parts). TGC_ERR_INVALID ("bad-memory-limit") for a
 * malformed limit; TGC_OK otherwise. */
tgc_status tgc_memory_needs(const tgc_memory_plan *mp, const char *memory_limits, tgc_memory_need *out,
                            tgc_diags *diags);

/* Refuses a plan some device cannot hold: TGC_ERR_INVALID with one error
 * (rule "over-memory") naming, per device, what it would need by category
 * and what it has. TGC_OK when every device fits or its memory is
 * unknown; TGC_ERR_NOMEM. */
tgc_status tgc_memory_fit_check(const tgc_memory_plan *mp, const char *memory_limits, tgc_diags *diags);

/* ---- the watch: what is live at each device's peak, during runs ---------------- */

/* One of the largest tensors live when a memory reached its peak. */
typedef struct tgc_memory_top {
    const char *node; /* the node's name (owned by the session's partitions) */
    int32_t port;
    tgc_dtype dtype;
    int rank;
    int64_t dims[TGC_MAX_RANK];
    int64_t bytes;
} tgc_memory_top;

/* One memory's counters: the most bytes of output slots one step has held
 * there (each step counts its own: tgc_step.watch_live; with steps in flight
 * the memory also holds the others'), and the largest tensors at that
 * moment. */
typedef struct tgc_memory_gauge {
    atomic_llong peak;
    atomic_llong left; /* bytes steps still counted when they ended, summed: 0 unless a release was missed */
    pthread_mutex_t lock; /* guards the snapshot */
    int64_t snapshot_bytes; /* `live` when the snapshot was taken */
    tgc_memory_top top[TGC_MEMORY_TOP];
    int n_top;
    /* Nanoseconds its kernels and _Sends ran, summed over every step but
     * each session's first (which builds the kernels' caches): beside the
     * placement's forecast of a step's time in the report. */
    atomic_llong busy_ns;
    /* What the device's work took in the last step that ended, from its
     * start to its outputs fetched (with steps in flight, theirs in that
     * time too); counted: the device counts it (tgc_device_ops.activity).
     * Guarded by lock. */
    tgc_device_activity last_step;
    bool activity_counted;
} tgc_memory_gauge;

/* A session's watch (tgc_session_options.memory_report): a gauge per
 * device ([0, n_devices)) and one for host memory ([n_devices]), and the
 * feeds' shapes of the last run, which bind the static plan's symbols. */
typedef struct tgc_memory_watch {
    int n_gauges;
    tgc_memory_gauge *gauges;
    pthread_mutex_t lock; /* guards runs and the feeds' shapes */
    int64_t runs;
    int n_feeds;
    int *feed_rank;     /* per graph input (-1: never fed) */
    int64_t *feed_dims; /* TGC_MAX_RANK per graph input */
} tgc_memory_watch;

/* A watch for a session of `n_devices` devices and `n_inputs` graph
 * inputs; NULL when out of memory. */
tgc_memory_watch *tgc_memory_watch_create(int n_devices, int n_inputs);
void tgc_memory_watch_free(tgc_memory_watch *w);

/* One slot's record in a step (an array per partition while watching). */
typedef struct tgc_watch_slot {
    atomic_llong bytes; /* counted in gauge `gauge` while > 0 */
    int32_t node;
    int32_t gauge;
} tgc_watch_slot;

#endif
