/* What a node costs on a device, and what moving a tensor between two
 * devices costs: the figures automatic placement (placer/auto.c) weighs.
 * Private to the library. docs/cost.md says how each figure is made.
 *
 * A node's time is measured where it can be: its real kernel run on the
 * real device (a warm-up run, then the median of up to five), once per
 * (op, attributes, input dtypes and shapes) and device, and cached on disk
 * beside the OpenCL program cache ($XDG_CACHE_HOME/tgc/cost-*.txt, one file
 * per device, pool width and tgc version), so a second model, or a second
 * compile, takes the figure from the file. Otherwise it is estimated from
 * its work (FLOPs) and its traffic (bytes read and written) as a roofline,
 * max(flops / peak_flops, bytes / peak_bandwidth) plus the device's
 * per-node overhead, against the peaks measured on that device (a GEMM, a
 * large Add, a tiny Relu; cached too), or nominal peaks where nothing was
 * ever measured. Every node figure says which it is. Symbolic dims count
 * as 1. Copies are measured the same way (latency and bandwidth per kind
 * of pair), except between processes (MPI): an estimate.
 *
 * TGC_COST_REFRESH=1 (or tgc_cost_options.refresh) ignores what the files
 * hold: everything is measured again and the files rewritten.
 *
 * Example usage:
 *     tgc_cost_model *m = NULL;
 *     tgc_cost_options o = {.threads = "cpu0=1,cpu1=1", .measure = true};
 *     if (tgc_cost_model_create(devs, n, &o, diags, &m) == TGC_OK) {
 *         bool measured;
 *         double s = tgc_cost_node(m, g, id, 1, &measured);   // seconds on devs[1]
 *         double t = tgc_cost_transfer(m, 0, 1, 4096);         // seconds for 4 KiB devs[0] -> devs[1]
 *         tgc_cost_model_free(m);                              // new figures written to the cache
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
    /* True: the cache files' figures are not read (as TGC_COST_REFRESH=1):
     * measured again (with measure) and the files rewritten. */
    bool refresh;
} tgc_cost_options;

typedef struct tgc_cost_model tgc_cost_model;

/* A cost model over devices[0..n) (copied). opts may be NULL (estimates
 * and cached figures only, default threads). Reads each device's cache
 * file (a missing, foreign, truncated or corrupt one counts as empty);
 * with opts->measure, times the copies between the kinds of memory the
 * devices have unless the files hold them (opening those devices: some
 * ms). Devices are opened only with opts->measure, and only when a figure
 * is missing. TGC_OK; TGC_ERR_INVALID with a message ("bad-threads") for
 * a bad threads spec, or n outside 1..TGC_PLACER_MAX_DEVICES; TGC_ERR_NOMEM. */
tgc_status tgc_cost_model_create(const tgc_placer_device *devices, int n, const tgc_cost_options *opts,
                                 tgc_diags *diags, tgc_cost_model **out);

/* Writes the figures measured since the files were read, each device's
 * file replaced atomically (a temporary file renamed over it). TGC_OK
 * (also when there is no cache folder: neither XDG_CACHE_HOME nor HOME is
 * an absolute path); TGC_ERR_RUNTIME when a file could not be written
 * (the figures stay in the model). */
tgc_status tgc_cost_model_save(tgc_cost_model *m);

/* Saves (tgc_cost_model_save, its failure ignored), closes the devices it
 * opened and releases the model; NULL is ignored. */
void tgc_cost_model_free(tgc_cost_model *m);

/* How many of the model's devices it has opened so far (0 until a figure
 * had to be measured). */
int tgc_cost_model_opened(const tgc_cost_model *m);

/* Device d as the model opened it (borrowed; its allocator's figures show
 * what timing left behind: nothing), or NULL when not opened. */
struct tgc_device *tgc_cost_model_device(const tgc_cost_model *m, int d);

/* Seconds one run of op node `id` of g (validated and inferred) takes on
 * device d (an index into the model's devices), its inputs already there:
 * run-time inference, allocation of the outputs and the kernel, as a step
 * spends them. *measured (may be NULL): true when the figure is a timing
 * of the kernel on that device (now or from the cache), false for an
 * estimate (a node that cannot be keyed or run on synthetic inputs: a
 * subgraph, sequences, strings, values its kernel refuses; measure off
 * and nothing cached; another process's device). Inputs, initializers
 * and nodes without a kernel there cost 0, and so does an activation its
 * producer's kernel there would absorb (tgc_activation_absorbed). Never fails: an error while
 * timing gives the estimate. Not thread safe. */
double tgc_cost_node(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, bool *measured);

/* tgc_cost_node where a share `spill` (0..1, tgc_cost_spill) of what the
 * node reads each step is not in the cache when it runs: on a device
 * whose memory is host memory, its warm figure (inputs and weights left
 * cached by the runs before, as tgc_cost_node's) plus spill times what
 * the same runs take more with the caches emptied first and only its
 * activation inputs read back in (the "cold" figure, timed and cached as
 * a figure of its own, under the key with " cold" after it), over the
 * device's pool width (its threads wait on their misses at once). The warm
 * figure alone for spill 0, a device of other memory, or a node whose
 * cold figure cannot be had. As TVM's measurements flush the cache before
 * each run of a kernel but for its first argument (its data input), so
 * that weights come from memory as in a whole network. */
double tgc_cost_node_spilled(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, double spill, bool *measured);

/* The share (0..1) of a step's reads that miss the host's last-level cache
 * when the devices of the host hold `working_set_bytes` in all (weights,
 * kernel caches, live tensors): none while the set fits in half the cache
 * (support/cpu_cache.h; the other half holds what streams through a step
 * and is lost to conflicts), else 1 - half the cache / the set. A model
 * of this machine's measurements (docs/cost.md): on one cpu thread, ten
 * ImageNet networks' step times against the sum of their nodes' figures,
 * warm (within 25% for all but EfficientNet-B1, 28% short: 36 MB of
 * weights and tensors) and cold (up to 2.4x over on MobileNetV3-Small,
 * whose 10 MB stay cached between steps). 0 when the cache size is not
 * known. */
double tgc_cost_spill(const tgc_cost_model *m, double working_set_bytes);

/* The estimate alone for node id of g on device d (what tgc_cost_node
 * gives a node it cannot time): the roofline against d's peaks, measured
 * now when the options say measure and d's file has none. Seconds; 0 as
 * tgc_cost_node. For comparisons (bench/bench_cost.c). */
double tgc_cost_estimate(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d);

/* Seconds to move `bytes` from device `from` to device `to` (indices into
 * the model's devices): 0 for the same device; a latency plus bytes over
 * a bandwidth otherwise: host memory to host memory in one process (a
 * handoff's latency, a memcpy's bandwidth), to or from a device whose
 * memory is not host memory (its measured copies; gpu to gpu through host
 * memory, both), measured where the model measured them, nominal
 * otherwise; across processes (MPI) always a nominal estimate. */
double tgc_cost_transfer(const tgc_cost_model *m, int from, int to, int64_t bytes);

#endif
