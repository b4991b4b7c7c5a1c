/* Sessions, their per-partition plans, and tensor handles: private layout
 * (the public API is tgc.h).
 *
 * A session is compiled once: placed (placer/), split into one subgraph per
 * device (partition/), and each partition turned into a plan: a kernel per
 * node, an output slot per tensor with its number of uses, the pending
 * count of every node, its consumers, and the weights already on the
 * device. A run (step.c) executes all plans at once, one thread pool per
 * device, meeting in one rendezvous.
 */
#ifndef TGC_EXECUTOR_SESSION_H
#define TGC_EXECUTOR_SESSION_H

#include "tgc.h"

#include "devices/kernel.h"
#include "executor/concat_in_place.h"
#include "executor/memory_plan.h"
#include "support/settings.h"
#include "support/thread_pool.h"
#include "executor/trace.h"
#include "graph/graph.h"
#include "partition/compile.h"
#include "partition/partition.h"
#include "placer/placer.h"

#include <pthread.h>
#include <stdatomic.h>

#define TGC_MAX_DEVICES 16

/* A public tensor handle: a reference-counted wrapper of one value whose
 * buffer lives on the process's host device (tgc_host_device). A handle
 * created inside a scope (executor/scope.c) is linked into it. */
struct tgc_tensor {
    atomic_int refs;
    tgc_value v;
    _Atomic(struct tgc_scope *) scope;            /* the scope holding it, NULL: none */
    struct tgc_tensor *scope_prev, *scope_next; /* its list, under scope.c's lock */
};

/* tgc_session_create, on the process's shared devices when shared_devices
 * (tgc_session.shared_devices). */
tgc_status tgc_session_create_on(const tgc_graph *g, const char *devices, const tgc_session_options *opts,
                                 bool shared_devices, tgc_diags *diags, tgc_session **out);

/* Wraps `v` (taking over its buffer reference) in a new handle, refs 1. */
tgc_status tgc_tensor_wrap(const tgc_value *v, tgc_tensor **out);

/* A new handle for the list value v (a sequence or an optional, devices/
 * device.h) with its elements in host memory: the list itself when they
 * are there already, else a new list of host copies (executor/
 * tensor_list.c). TGC_ERR_NOMEM or TGC_ERR_RUNTIME (a copy failed). */
tgc_status tgc_tensor_of_list(const tgc_value *v, tgc_tensor **out);

/* A new host tensor of `dtype` and dims[rank] whose elements the caller
 * writes next: tgc_tensor_create without its copy or zero fill (a session
 * run's outputs, copied from their device). Strings start as NULL slots.
 * TGC_ERR_INVALID for a bad dtype, rank or size, TGC_ERR_NOMEM. */
tgc_status tgc_tensor_alloc(tgc_dtype dtype, int rank, const int64_t *dims, tgc_tensor **out);

/* What one node is to the executor. */
typedef enum tgc_node_role {
    TGC_ROLE_INPUT,  /* a graph input: takes its feed */
    TGC_ROLE_CONST,  /* an initializer: its weight, loaded once per session */
    TGC_ROLE_KERNEL, /* an op with a kernel */
    TGC_ROLE_SEND,   /* _Send: hands its input to the rendezvous */
    TGC_ROLE_RECV,   /* _Recv: completes from the rendezvous' callback */
    TGC_ROLE_CONTROL, /* If, Loop, Scan, SequenceMap: runs its subgraphs (control_flow.c), completes when they end */
} tgc_node_role;

typedef struct tgc_plan tgc_plan;

/* A subgraph ready to run: placed and split like the session's graph (its
 * nodes may span devices), each partition planned. Built once, when the
 * session is created; run once per iteration (executor/control_flow.c). */
typedef struct tgc_body_plan {
    const tgc_graph *g; /* the subgraph: its node's attribute, in the partition graph that holds the node */
    tgc_compiled compiled; /* placed and partitioned as the session's graph, not optimized again */
    tgc_plan *plans; /* one per partition */
} tgc_body_plan;

/* A control node's subgraphs, in attribute order (If: then_branch,
 * else_branch; the others: body). */
typedef struct tgc_control_plan {
    tgc_body_plan *bodies;
    int n_bodies;
} tgc_control_plan;

/* One partition, ready to run on its device. */
/* Which constants own the data the partitions' initializers borrow, and
 * how many partitions hold each (executor/prepack.c). */
typedef struct tgc_weight_owners tgc_weight_owners;

struct tgc_plan {
    const tgc_graph *g; /* the partition's graph (owned by the partitioning) */
    tgc_device *device;
    tgc_thread_pool *pool;         /* the device's pool (owned by the session) */
    int64_t workspace_limit;       /* its kernels' (tgc_kernel_ctx.workspace_limit); 0: none */
    tgc_node_role *role;           /* node id -> role */
    const tgc_kernel_def **kernel; /* node id -> kernel (TGC_ROLE_KERNEL) */
    bool *on_host;                 /* node id -> its outputs live in host memory (weights, host recv) */
    int32_t *value_base;           /* node id -> its first output slot */
    int32_t n_values;
    int32_t *use_count;    /* slot -> consumer inputs + graph outputs reading it */
    int32_t *pending;      /* node id -> data and control inputs (its pending count at the start) */
    int32_t *consumer_at;  /* node id -> start in `consumers` (n_nodes + 1 entries) */
    int32_t *consumers;    /* consumer node ids, one per in-edge */
    tgc_value *weights;    /* slot -> the initializer's value (TGC_ROLE_CONST) */
    int32_t *feed_index;   /* node id -> index of the original graph input, -1 */
    tgc_kernel_cache *caches; /* node id -> its kernel's cache across runs */
    uint32_t *const_inputs;   /* node id -> bit i: input i is an initializer of this plan */
    tgc_fused_act *fused_act; /* node id -> the activation its kernel applies (executor/fuse.c); row -1: none */
    bool *absorbed;           /* node id -> an activation absorbed by its producer: takes the buffer, runs nothing */
    _Atomic(const char *) *impl; /* node id -> how its kernel last ran (tgc_kernel_ctx.impl), NULL: not said */
    bool *static_shapes;      /* node id -> every input and output shape concrete at compile time: outputs
                               * take the graph's shapes, no runtime inference */
    /* node id -> an initializer every reader of which holds it in its own
     * layout (executor/prepack.c): weights[] keeps only a guard of its
     * size that faults on any read; the device does not count it. */
    bool *replaced;
    int64_t replaced_bytes; /* their bytes: held once, as kernel caches */
    tgc_control_plan *control; /* node id -> its subgraphs' plans (TGC_ROLE_CONTROL) */
    /* A step's kernel and control nodes start in node id order, the order
     * the static memory plan counts in (executor/step.c, tgc_plan_order):
     * node id -> the next such node (n_nodes: none), -1 for a node of
     * another role (it keeps no turn); NULL: every node as it becomes
     * ready. first_in_order: the first such node (n_nodes: none). */
    int32_t *next_in_order;
    int32_t first_in_order;
    /* node id -> its work (FLOPs, graph/node_work.h; 0 for a node that is
     * not a kernel's), and for a light one (a Transpose, a pool) whose one
     * reader waits for it alone, that reader's weight too: which of the
     * nodes that become ready together run side by side (executor/step.c).
     * NULL when the pool has one thread. coarse: node id -> its kernel's
     * way cuts its work into a few large pieces (tgc_kernel_footprint). */
    double *work;
    bool *coarse;
    int32_t n_feeds;           /* feeds of the graph this partition comes from (feed_index's range) */
    /* slot -> where the value lives when a Concat takes it in place
     * (executor/concat_in_place.h); NULL when no Concat does. With it,
     * the lock its wholes are made under (executor/node_run.c). */
    tgc_concat_place *places;
    pthread_mutex_t places_lock;
    /* A partition of a device in another process (docs/distributed.md):
     * nothing else of the plan is set; this process never runs it. */
    bool remote;
};

struct tgc_session {
    const tgc_graph *g;     /* what runs: compiled.g, the optimized graph or the user's */
    const tgc_settings *settings; /* the environment when the session was made (support/settings.h) */
    /* The graph optimized, placed on the listed devices (compiled.devices)
     * and partitioned (compiled.parts), by the compile driver. */
    tgc_compiled compiled;
    tgc_device *devices[TGC_MAX_DEVICES]; /* parallel to compiled.devices */
    tgc_thread_pool *pools[TGC_MAX_DEVICES];
    int n_devices;
    tgc_plan *plans; /* one per partition */
    char **output_names; /* graph output i as written: "node" or "node:k" */
    _Atomic(tgc_trace *) trace; /* NULL unless tracing; set once, by the first tgc_session_trace_start */
    tgc_memory_watch *watch; /* NULL unless opts->memory_report */
    char *threads;           /* opts->threads copied (NULL: the defaults): the report's plan sizes workspaces by it */
    char *memory_limits;     /* opts->memory_limits copied (NULL: none): the workspace limits, as threads */
    bool soft_placement;     /* opts->soft_placement: subgraphs are placed as the graph is */
    int64_t max_iterations;  /* opts->max_iterations (0: none) */
    /* A function's session (executor/function.c): its devices are the
     * process's shared ones (devices/device_registry.h), released rather
     * than destroyed, and a run's outputs stay where they were computed. */
    bool shared_devices;
    /* Devices in other processes: the list names a task above 0. Then
     * devices[i] of another task is a stand-in (a cpu device named after
     * it, holding nothing) with no pool, and its partitions are remote. */
    bool distributed;
    int rank; /* this process's task */
    uint64_t dist_id; /* distributed: its number among the process's distributed sessions (the same on every rank) */
    atomic_llong last_step_id; /* the id of the latest step started (0: none yet) */
    atomic_llong last_step_ns; /* the latest step's wall time (0: none yet): whether its caller spins (step.c) */
    /* Steps in flight: tgc_session_run may be called from many threads at
     * once, each call a step of its own (its frames, slots and rendezvous;
     * step.h). At most max_inflight run at once (0: no bound); a caller
     * past it waits on inflight_cond until a step ends: back pressure. */
    int max_inflight;
    pthread_mutex_t inflight_lock; /* guards inflight and inflight_peak */
    pthread_cond_t inflight_cond;
    int inflight, inflight_peak;
    /* While the plans are built: whose data a replaced weight frees (NULL: none). */
    tgc_weight_owners *owners;
    /* Replicas (executor/replicas.c): n_replicas > 0 makes this session a
     * front for sessions of one device each; it has no plans of its own,
     * and the public functions answer for its replicas. */
    tgc_session **replicas;
    int n_replicas;
    atomic_uint next_replica; /* where the next step's search starts: equals take turns */
};

/* Replicas (executor/replicas.c). */

/* Makes one session per device of s->compiled.placement.replicas over g,
 * each with the whole graph on that device under the rules (opts' threads
 * and memory limit of that device, max_inflight shared out, weights never
 * released: the replicas share g). TGC_ERR_INVALID / TGC_ERR_NOMEM from
 * the replica that failed; those made are freed with s. */
tgc_status tgc_session_replicas_create(tgc_session *s, const tgc_graph *g, const tgc_session_options *opts,
                                       tgc_diags *diags);

/* The replica the next step goes to: the fewest steps in flight, equals
 * taken in turn (steps one after another alternate). Thread safe. */
tgc_session *tgc_session_replica_for_step(tgc_session *s);

/* The front's devices: its replicas' devices in order. */
int tgc_session_replicas_device_count(const tgc_session *s);
const char *tgc_session_replicas_device_name(const tgc_session *s, int i);
tgc_memory_figures tgc_session_replicas_memory(const tgc_session *s, int i);

/* A line naming the replicas, then each replica's memory report. */
tgc_status tgc_session_replicas_report(const tgc_session *s, FILE *out);

/* Each replica's trace: the first's to `path`, replica r's to
 * PATH.DEVICE.json. */
tgc_status tgc_session_replicas_trace_write(tgc_session *s, const char *path, tgc_diags *diags);

/* Distributed sessions (executor/session_dist.c). */

/* Before devices open: refuses a list naming tasks this run does not have
 * (no MPI in the build, fewer processes than tasks, no device on task 0).
 * TGC_ERR_INVALID with a message. */
tgc_status tgc_session_dist_check_list(const tgc_placer_device *devs, int n, tgc_diags *diags);

/* After the session's plans are built (or its creation failed: ok false):
 * refuses control flow whose subgraphs span processes, then every rank
 * compares what it placed (a fingerprint of the graph, the device list,
 * every node's device and every pair's key) with every other's. A rank
 * whose creation failed, or placed differently, fails every rank's
 * creation with a message naming it. TGC_OK, TGC_ERR_INVALID or
 * TGC_ERR_RUNTIME (a rank did not answer within the peer timeout). */
tgc_status tgc_session_dist_agree(tgc_session *s, const char *devices, bool ok, tgc_diags *diags);

/* A new step id for s: 1, 2, 3... in the order asked, unique in the
 * session. Thread safe. */
int64_t tgc_session_next_step_id(tgc_session *s);

/* Runs one step of the session (executor/step.c) whose rendezvous keys
 * carry `step_id` (tgc_session_next_step_id, or one agreed with other
 * processes): feeds indexed by the original graph's input ids, already
 * checked; outputs as tgc_session_run. */
tgc_status tgc_step_execute(tgc_session *s, int64_t step_id, const tgc_tensor **feeds, tgc_tensor **outputs,
                            tgc_trace *trace, tgc_diags *diags);

/* Marks the activation nodes of p that their producer's kernel can apply
 * itself (executor/fuse.c): p->fused_act for the producer, p->absorbed for
 * the activation. Needs roles, kernels and use counts. tgc_plan_build_for
 * calls it unless the session's settings say TGC_NO_FUSION. */
void tgc_plan_fuse_activations(tgc_plan *p);

/* host_only[id] (for every node id of g): every reader of node id's
 * outputs takes them as a host-memory argument (a shape argument, or only
 * their dims) of its kernel (kernel: node id -> kernel, NULL for nodes
 * without one, which read nothing in host memory). True for a node nobody
 * reads. Where an initializer and a graph input live (executor/plan.c,
 * executor/memory_plan.c). */
void tgc_plan_host_reads(const tgc_graph *g, const tgc_kernel_def *const *kernel, bool *host_only);

/* Builds the plan of partition `part` of the session's partitioning
 * (weights loaded; the subgraphs of its control nodes planned too). */
tgc_status tgc_plan_build(tgc_session *s, int part, tgc_plan *out, tgc_diags *diags);

/* Sets p->next_in_order where a step's nodes of this partition should
 * start in node id order: p's pool has one thread, and the partition's
 * graph is in topological order (else nothing is set). The order is then
 * the one the static memory plan counts in, and each step's peak on the
 * device is the plan's; as ready nodes came (chains first, the rest first
 * come first served), a branchy graph's order followed which _Recv
 * arrived first (GoogLeNet's second stage over cpu0,cpu1: 12% under the
 * plan). One thread runs one node at a time either way: measured at one
 * thread on five held-out CNNs, 0.99-1.02x the time. TGC_OK or
 * TGC_ERR_NOMEM. */
tgc_status tgc_plan_order(tgc_plan *p);

/* Sets p->work and p->coarse where p's pool has more than one thread (a light node's
 * reader is weighed with it only where it comes after it in id order, as
 * in a graph in topological order). TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_plan_weigh(tgc_plan *p);

/* The same for partition `part` of `parts`, the partitioning of `source`
 * (the session's graph, or a subgraph: its feeds are its formal inputs and
 * captures, graph/subgraph.h). */
tgc_status tgc_plan_build_for(tgc_session *s, const tgc_partitioning *parts, const tgc_graph *source, int part,
                              tgc_plan *out, tgc_diags *diags);
void tgc_plan_release(tgc_plan *p);

/* Weights held once (executor/prepack.c). */

/* Marks p->replaced for each initializer of p, on a device in host
 * memory, whose every reader is a kernel node with static shapes whose
 * footprint says its cache stands in for it (tgc_kernel_footprint
 * .replaces_inputs): a candidate, loaded uncounted until
 * tgc_plan_prepack settles it. Needs roles, kernels, use counts. */
void tgc_plan_find_replaceable(tgc_plan *p);

/* The owners of s's partitions' initializers: the optimized graph's
 * constants, those of the graphs it owns as its source (a graph
 * split-heavy cut borrows from the one it was cut from: what no partition
 * reads there, a weight cut into slices, goes now) and, when `source` is
 * not NULL (the caller's leave: release_weights), the caller's graph's.
 * TGC_ERR_NOMEM. */
tgc_status tgc_weight_owners_make(tgc_session *s, tgc_graph *source, tgc_weight_owners **out);
void tgc_weight_owners_free(tgc_weight_owners *o);

/* Builds the caches of the candidates' readers now, each run once on
 * zeros in the graph's shapes (buffers the device does not count), then
 * settles each candidate: when every reader's cache replaced it
 * (tgc_kernel_cache_replaces), its weights[] slot becomes a guard and it
 * stays marked, and when it was the last partition holding that data,
 * `owners` (NULL: none) frees the data in the constant that owns it (data
 * NULL, `released` set), one weight at a time, so that the process never
 * holds all the weights twice; otherwise the candidate is unmarked and
 * borrowed counted as any weight. TGC_ERR_NOMEM ("out-of-memory" naming
 * the initializer) when the device cannot hold a weight that stays. The
 * pattern of ONNX Runtime's session state (PrepackConstantInitializedTensors:
 * a kernel's PrePack says is_packed, and an initializer all of whose
 * readers packed it is released). */
tgc_status tgc_plan_prepack(tgc_plan *p, tgc_weight_owners *owners, tgc_diags *diags);

#endif
