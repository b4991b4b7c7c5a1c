/* What a node costs on a device, and what moving a tensor between two
 * devices costs: the figures automatic placement (placer/auto.c) weighs.
 * Private to the library.
 *
 * A node's time is measured where it can be (its real kernel run on the
 * real device, cached on disk) and otherwise estimated from its work
 * (FLOPs) and its traffic (bytes read and written) against the device's
 * peaks, as a roofline: max(flops / peak_flops, bytes / peak_bandwidth)
 * plus the device's per-node overhead. Every figure says which it is.
 * Symbolic dims count as 1.
 *
 * Example usage:
 *     tgc_cost_model *m = NULL;
 *     if (tgc_cost_model_create(devs, n, NULL, diags, &m) == TGC_OK) {
 *         bool measured;
 *         double s = tgc_cost_node(m, g, id, 1, &measured);   // seconds on devs[1]
 *         double t = tgc_cost_transfer(m, 0, 1, 4096);         // seconds for 4 KiB devs[0] -> devs[1]
 *         tgc_cost_model_free(m);
 *     }
 */
#ifndef TGC_PLACER_COST_H
#define TGC_PLACER_COST_H

#include "placer/placer.h"

typedef struct tgc_cost_options {
    /* Each device's pool width, as tgc_session_options.threads writes it
     * ("cpu0=1,cpu1=1"); NULL: each backend's default. */
    const char *threads;
    /* True: time kernels on the devices (opening them) where the cache
     * has no figure yet. False: estimates and cached figures only. */
    bool measure;
} tgc_cost_options;

typedef struct tgc_cost_model tgc_cost_model;

/* A cost model over devices[0..n) (copied). opts may be NULL (estimates
 * only, default threads). TGC_OK; TGC_ERR_INVALID with a message for a
 * bad threads spec; TGC_ERR_NOMEM. */
tgc_status tgc_cost_model_create(const tgc_placer_device *devices, int n, const tgc_cost_options *opts,
                                 tgc_diags *diags, tgc_cost_model **out);

/* Releases the model; NULL is ignored. */
void tgc_cost_model_free(tgc_cost_model *m);

/* Seconds one run of op node `id` of g (validated and inferred) takes on
 * device d (an index into the model's devices), its inputs already there.
 * *measured (may be NULL): true when the figure is a timing of the kernel
 * on that device (now or from the cache), false for an estimate. Inputs,
 * initializers and nodes without a kernel there cost 0. Not thread safe. */
double tgc_cost_node(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, bool *measured);

/* Seconds to move `bytes` from device `from` to device `to` (indices into
 * the model's devices): 0 for the same device; a latency plus bytes over
 * a bandwidth otherwise (host memory to host memory in one process, to or
 * from a gpu, across processes). */
double tgc_cost_transfer(const tgc_cost_model *m, int from, int to, int64_t bytes);

/* The work and the traffic the estimate uses for node id of g: multiply-
 * adds counted as 2 FLOPs; bytes as the inputs' and outputs' sizes. */
void tgc_cost_node_work(const tgc_graph *g, int32_t id, double *flops, double *bytes);

#endif
