/* The placer: a device for every node, from the devices a run lists,
 * honouring what the graph asks for (device specs, colocation) and what the
 * kernels allow, with conflicts explained in words. Private to the library.
 * The model is TensorFlow's placer (core/common_runtime/placer.cc and
 * colocation_graph.cc): the same rules, in the same order, with errors that
 * say which constraints met and how to get out.
 *
 * Rules, in order (see docs/placement.md):
 *   1. explicit specs: full (gpu1) or partial (gpu); an unlisted device is an
 *      error unless soft placement relaxes it (to the kind, then to any);
 *   2. colocation groups: union-find over colocate_with; a group's specs
 *      merge and its members' kernel kinds intersect; a merge that cannot
 *      hold is an error and leaves the groups as they were (dry run first);
 *   3. kernel availability: a group goes only where every member has one;
 *   4. host memory: Shape and Size run on their input's device; integer
 *      shape arithmetic (int32/int64 in and out, outputs of rank <= 1) runs
 *      on the host cpu;
 *   5. default: the first listed device of the best kind (the highest
 *      backend priority, devices/backend.h: gpu, then cpu) with kernels,
 *      except that a node whose inputs are all on the host and small stays
 *      on the host.
 * Graph inputs and initializers follow their first consumer that reads
 * their data on its device; those only read as host-memory arguments stay
 * on the host cpu.
 *
 * Example usage:
 *     tgc_placer_device devs[2];
 *     int n;
 *     tgc_placement p;
 *     if (tgc_placer_parse_devices("cpu,gpu0", devs, 2, &n, diags) == TGC_OK &&
 *         tgc_placer_run(g, devs, n, NULL, diags, &p) == TGC_OK) {
 *         // p.device[id] indexes devs; p.reason[id] says which rule decided
 *         tgc_placement_release(&p);
 *     }
 */
#ifndef TGC_PLACER_PLACER_H
#define TGC_PLACER_PLACER_H

#include "devices/device.h"
#include "devices/kernel.h"
#include "graph/graph.h"

/* At most this many devices in one list (a device set is a 64-bit mask). */
#define TGC_PLACER_MAX_DEVICES 64

/* The documented default of tgc_placer_options.small_host_bytes. */
#define TGC_PLACER_SMALL_HOST_BYTES 4096

/* A device a run lists: kind, index and task (devices/backend.h). */
typedef tgc_device_id tgc_placer_device;

/* Which rule decided a node's device. */
typedef enum tgc_place_reason {
    TGC_PLACED_BY_SPEC,       /* its own device spec */
    TGC_PLACED_BY_COLOCATION, /* a spec or constraint of its colocation group */
    TGC_PLACED_BY_KERNEL,     /* the best listed kind has no kernel for it */
    TGC_PLACED_BY_HOST_RULE,  /* integer shape arithmetic on the host, Shape/Size with their input,
                                 or an initializer read only as a host-memory argument */
    TGC_PLACED_BY_SMALL_HOST, /* small inputs all on the host: not worth a transfer */
    TGC_PLACED_BY_DEFAULT,    /* the first listed device of the best kind (highest backend priority) */
    TGC_PLACED_BY_SOFT,       /* soft placement relaxed an unsatisfiable spec */
    TGC_PLACED_BY_CONSUMER,   /* a graph input or initializer: where its first consumer reads it */
    TGC_PLACED_BY_FEED,       /* a graph input whose consumer is in another process: on task 0, which
                                 reads the feeds (its host cpu) */
    TGC_PLACED_BY_AUTO,       /* automatic placement chose among the devices the rules left open */
} tgc_place_reason;

/* Returns a short name of the reason ("spec", "colocation", "kernel",
 * "host-memory", "small-host", "default", "soft", "consumer", "feed",
 * "auto"). */
const char *tgc_place_reason_name(tgc_place_reason r);

/* Node n's kernel on `kind` as tgc_kernel_for_node gives it (the
 * default); tests pass their own table to reach kernel combinations the
 * backends lack. */
typedef const tgc_kernel_def *(*tgc_placer_kernel_find_fn)(const tgc_graph *g, const tgc_node *n,
                                                           tgc_device_kind kind, void *ctx);

struct tgc_cost_model;

/* Automatic placement (placer/auto.c): where the rules leave a node a
 * choice of devices (rule 5's default), it goes where the placement as a
 * whole is fastest under the devices' memory. */
typedef struct tgc_placer_auto {
    struct tgc_cost_model *cost; /* node and transfer times (placer/cost.h); borrowed */
    /* Bytes each listed device may hold (its memory or its limit, less
     * the margin); <= 0: no bound. */
    int64_t capacity[TGC_PLACER_MAX_DEVICES];
    /* Each device's pool width (the kernels' workspaces grow with it). */
    int width[TGC_PLACER_MAX_DEVICES];
    /* Each device's workspace limit (tgc_kernel_ctx.workspace_limit, from
     * its --memory-limit: devices/memory_limit.h); 0: none. */
    int64_t workspace_limit[TGC_PLACER_MAX_DEVICES];
    /* Steps in flight: 1 optimizes one step's latency; K > 1 the
     * throughput of a pipeline (its slowest stage). */
    int inflight;
    /* Bytes a device must keep free beside each node it takes, as its
     * workspace is (charge[id * n_devices + d] for node id of the graph
     * placed and device d of the list; n_charged nodes), or NULL: what the
     * exact static plan found the estimate of d's partition short by when
     * an earlier placement put the node there (partition/compile.c). */
    const int64_t *charge;
    int32_t n_charged;
} tgc_placer_auto;

typedef struct tgc_placer_options {
    bool soft_placement;
    /* Rule 5's "small": at most this many bytes of input in total (0: the
     * documented default, 4096; negative: the rule is off). */
    int64_t small_host_bytes;
    /* NULL: tgc_kernel_for_node. */
    tgc_placer_kernel_find_fn kernel_find;
    void *kernel_find_ctx;
    /* NULL: the rules alone (rule 5's default decides). */
    const tgc_placer_auto *automatic;
} tgc_placer_options;

/* What automatic placement predicted for one device: bytes and seconds
 * of one step (symbolic dims as 1). */
typedef struct tgc_placement_forecast {
    double seconds;       /* its nodes' times, the transfers it receives included */
    double warm_seconds;  /* the same with every node's warm figure (placer/cost.h: no spill) */
    bool measured;        /* every node's time was measured (else some are estimates) */
    int64_t weights;      /* initializers its nodes read first */
    int64_t caches;       /* the kernels' own layouts of them */
    int64_t workspace;    /* the largest workspace */
    int64_t live;         /* the most bytes live at one of its steps (an estimate) */
    int64_t sent, received; /* bytes crossing to and from other devices */
} tgc_placement_forecast;

typedef struct tgc_placement {
    int32_t n_nodes;
    int32_t *device;         /* node id -> index into the device list */
    tgc_place_reason *reason;
    int32_t *group;          /* node id -> its colocation group's root node id */
    /* Automatic placement's forecast, one per listed device; NULL under
     * the rules alone. */
    tgc_placement_forecast *forecast;
    /* Automatic placement for throughput chose replicas: bit d set for
     * each listed device that runs whole steps of its own, steps taking
     * turns over them (0: none; the graph then runs as placed). Every op
     * node is placed on the fastest of them, for dumps and the forecast. */
    uint64_t replicas;
} tgc_placement;

/* Places every node of `g` (validated and inferred; inputs and initializers
 * too) on one of devices[0..n) (1 <= n <= TGC_PLACER_MAX_DEVICES, no device
 * twice). Deterministic: the same graph and list give the same placement.
 * On success fills *out (release with tgc_placement_release); soft
 * placement's relaxations are warnings in `diags`. On conflicts returns
 * TGC_ERR_INVALID with one error per independent conflict, at the node (or
 * its device spec), naming the node, its op, the chain of constraints and
 * the way out (rules "unlisted-device", "no-kernel", "placement-conflict");
 * *out is left zeroed. TGC_ERR_NOMEM when out of memory. Runs in time
 * linear in nodes plus edges (near-linear with union-find). */
tgc_status tgc_placer_run(const tgc_graph *g, const tgc_placer_device *devices, int n_devices,
                          const tgc_placer_options *opts, tgc_diags *diags, tgc_placement *out);

void tgc_placement_release(tgc_placement *p);

/* Parses a device list ("cpu,gpu0", "cpu0,cpu1"; cpu = cpu0, gpu = gpu0;
 * "/task:0/cpu,/task:1/gpu0": devices of two processes, docs/
 * distributed.md; names as tgc_device_id_parse reads them, any
 * backend's) into devices[0..*n) (at most `max`). Whether a gpuN
 * exists on this machine, or a task runs, is not checked: placement is
 * static. TGC_ERR_INVALID with a
 * "bad-device-list" message for an empty list, a name that is not a
 * device, a device listed twice or too many devices. */
tgc_status tgc_placer_parse_devices(const char *list, tgc_placer_device *devices, int max, int *n,
                                    tgc_diags *diags);

/* Writes "cpu0", "gpu1", "/task:1/cpu0" (the task written when it is not
 * 0) into buf: tgc_device_id_name. */
static inline const char *tgc_placer_device_name(tgc_placer_device d, char *buf, size_t size) {
    return tgc_device_id_name(d, buf, size);
}

/* The highest task a device of the list belongs to (0: one process). */
int tgc_placer_max_task(const tgc_placer_device *devices, int n);

#endif
