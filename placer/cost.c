/* The cost model (cost.h): a node's figure is, in this order, the one
 * cached for its key on its device (cost_key.c, cost_cache.c), a timing
 * of its kernel there when the options say measure (cost_measure.c), or
 * a roofline over its FLOPs and bytes against the device's peaks: the
 * measured ones where the device's file has them (cost_peaks.c), the
 * nominal ones below where nothing was ever measured. Transfers the same
 * way: measured latency and bandwidth per pair of kinds of memory where
 * the files have them, nominal otherwise; between processes (MPI) always
 * the nominal estimate. */
#include "placer/cost_impl.h"

#include "devices/backend.h"
#include "graph/node_work.h"
#include "support/alloc.h"
#include "support/cpu_cache.h"
#include "support/diag.h"
#include "support/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nominal peaks: one AVX2/AVX-512 core (FMA, float32), its share of DRAM
 * bandwidth, and the overhead a node costs the executor; a gpu through
 * OpenCL (a mid-range discrete card) and its launch latency. */
#define CPU_CORE_FLOPS 40e9
#define CPU_CORE_BYTES 10e9
#define CPU_NODE_SECONDS 1e-6
#define GPU_FLOPS 5e12
#define GPU_BYTES 300e9
#define GPU_NODE_SECONDS 10e-6
/* Copies: host memory to host memory (a memcpy), host <-> gpu (PCIe),
 * across processes (a loopback or cluster link). */
#define HOST_COPY_BYTES 8e9
#define HOST_COPY_SECONDS 2e-6
#define GPU_COPY_BYTES 12e9
#define GPU_COPY_SECONDS 20e-6
#define TASK_COPY_BYTES 1e9
#define TASK_COPY_SECONDS 50e-6

/* What a device's figures are keyed by: tgc's version, the kind, the pool
 * width, and the hardware as the backend lists it (its description and
 * the code the kernels are compiled to); another process's device is
 * never timed from here, so it keys by its task alone. */
static void identity_of(const tgc_placer_device d, int width, char *out, size_t size) {
    const tgc_backend *b = tgc_backend_get(d.kind);
    const char *prefix = b != NULL ? b->prefix : "?";
    if (d.task != 0) {
        snprintf(out, size, "tgc %s %s width %d task %d", TGC_VERSION_STRING, prefix, width, d.task);
        return;
    }
    tgc_device_info *info = tgc_calloc(TGC_MAX_DEVICES_LISTED, sizeof *info);
    int count = info != NULL && b != NULL ? b->list(info, TGC_MAX_DEVICES_LISTED) : 0;
    int at = d.index < count ? d.index : count - 1;
    if (at > TGC_MAX_DEVICES_LISTED - 1) at = TGC_MAX_DEVICES_LISTED - 1;
    snprintf(out, size, "tgc %s %s width %d isa %s %s", TGC_VERSION_STRING, prefix, width,
             at >= 0 ? info[at].isa : "?", at >= 0 ? info[at].description : "unlisted");
    tgc_free(info);
}

tgc_status tgc_cost_model_create(const tgc_placer_device *devices, int n, const tgc_cost_options *opts,
                                 tgc_diags *diags, tgc_cost_model **out) {
    *out = NULL;
    if (n < 1 || n > TGC_PLACER_MAX_DEVICES) return TGC_ERR_INVALID;
    tgc_cost_model *m = tgc_calloc(1, sizeof *m);
    if (m == NULL) return TGC_ERR_NOMEM;
    memcpy(m->devices, devices, (size_t)n * sizeof *devices);
    m->n = n;
    m->measure = opts != NULL && opts->measure;
    bool refresh = (opts != NULL && opts->refresh) || tgc_settings_current()->cost_refresh;
    tgc_status st = TGC_OK;
    for (int i = 0; st == TGC_OK && i < n; i++) {
        char name[32];
        tgc_device_id_name(devices[i], name, sizeof name);
        m->width[i] = tgc_threads_option(name, devices[i].kind, opts != NULL ? opts->threads : NULL, diags, &st);
        char id[512];
        identity_of(devices[i], m->width[i], id, sizeof id);
        int f = 0;
        while (f < m->n_files && strcmp(m->files[f]->identity, id) != 0) f++;
        if (f == m->n_files) {
            if ((m->files[f] = tgc_cost_file_open(id, refresh)) == NULL) st = TGC_ERR_NOMEM;
            else m->n_files++;
        }
        m->file_of[i] = f;
    }
    if (st != TGC_OK) {
        tgc_cost_model_free(m);
        return st;
    }
    tgc_cost_measure_links(m);
    m->llc_bytes = tgc_last_level_cache_bytes();
    *out = m;
    return TGC_OK;
}

tgc_status tgc_cost_model_save(tgc_cost_model *m) {
    tgc_status st = TGC_OK;
    for (int f = 0; f < m->n_files; f++) {
        tgc_status s = tgc_cost_file_save(m->files[f]);
        if (st == TGC_OK) st = s;
    }
    return st;
}

void tgc_cost_model_free(tgc_cost_model *m) {
    if (m == NULL) return;
    (void)tgc_cost_model_save(m); /* a cache that cannot be written is a cache missed, no error */
    for (int f = 0; f < m->n_files; f++) tgc_cost_file_free(m->files[f]);
    for (int d = 0; d < m->n; d++) {
        tgc_thread_pool_free(m->pool[d]);
        tgc_device_release(m->dev[d]);
    }
    tgc_device_release(m->host);
    tgc_free(m->readers);
    tgc_free(m->evict);
    tgc_free(m);
}

int tgc_cost_model_opened(const tgc_cost_model *m) { return m->n_opened; }

tgc_device *tgc_cost_model_device(const tgc_cost_model *m, int d) {
    return d >= 0 && d < m->n ? m->dev[d] : NULL;
}

/* The roofline: max(flops / peak FLOP/s, bytes / peak bandwidth) plus the
 * per-node overhead, with device d's measured peaks where its file has
 * them, else the nominal ones (a host-memory device's scaled by its width). */
static double estimate(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d) {
    double flops, bytes;
    tgc_node_work(g, id, &flops, &bytes);
    const cost_peaks *pk = &m->files[m->file_of[d]]->peaks;
    bool host = tgc_kind_host_memory(m->devices[d].kind);
    double w = host ? (double)m->width[d] : 1.0;
    double peak_flops = host ? CPU_CORE_FLOPS * w : GPU_FLOPS, peak_bytes = host ? CPU_CORE_BYTES * w : GPU_BYTES;
    double overhead = host ? CPU_NODE_SECONDS : GPU_NODE_SECONDS;
    if (pk->flops > 0 && pk->bytes > 0 && pk->node_seconds > 0) {
        peak_flops = pk->flops;
        peak_bytes = pk->bytes;
        overhead = pk->node_seconds;
    }
    double t = flops / peak_flops, tb = bytes / peak_bytes;
    return (t > tb ? t : tb) + overhead;
}

/* Whether node id, on device d, is an activation its producer applies
 * as it writes (executor/fuse.c), counting on the producer being on d
 * too, as a contiguous segment mostly has it. */
static bool absorbed(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d) {
    tgc_fused_act act;
    if (!tgc_activation_of(g, &g->nodes[id], &act)) return false;
    if (m->readers_of != g) {
        tgc_free(m->readers);
        m->readers_of = NULL;
        if ((m->readers = tgc_calloc((size_t)g->n_nodes + 1, sizeof *m->readers)) == NULL) return false;
        for (int32_t i = 0; i < g->n_nodes; i++)
            for (int k = 0; k < g->nodes[i].n_inputs; k++) {
                tgc_ref r = g->nodes[i].inputs[k];
                if (r.node >= 0 && r.port == 0) m->readers[r.node]++;
            }
        for (int i = 0; i < g->n_outputs; i++)
            if (g->outputs[i].port == 0) m->readers[g->outputs[i].node]++;
        m->readers_of = g;
    }
    const tgc_node *from = &g->nodes[g->nodes[id].inputs[0].node];
    return tgc_activation_absorbed(g, id, tgc_kernel_for_node(g, from, m->devices[d].kind), m->readers);
}

/* What an activation its producer applies as it writes adds to the
 * producer's time: its own measured time `alone` less what it spends
 * there reading and writing memory (its bytes at device d's measured
 * bandwidth) and a node's overhead, neither of which it pays inside the
 * producer's pass. Relu and Clip then cost about nothing, a Swish or a
 * Sigmoid its exponentials: counted free, EfficientNet-B1's 69 Swishes
 * left its forecast on one cpu at 6.4 ms against 10.7 measured, its
 * channels-last Convs 1.46x their forecast in the model. */
static double absorbed_seconds(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, double alone) {
    double flops, bytes;
    tgc_node_work(g, id, &flops, &bytes);
    tgc_cost_measure_peaks(m, d);
    const cost_peaks *pk = &m->files[m->file_of[d]]->peaks;
    if (!(pk->bytes > 0)) return 0; /* no bandwidth to take off: free, as before */
    double rest = alone - bytes / pk->bytes - pk->node_seconds;
    return rest > 0 ? rest : 0;
}

/* Device d's figure for node id under `key` (tgc_cost_key's; its cold
 * figure's is the key with " cold" after it, room for which the caller
 * leaves): measured (cached, or timed now when m->measure), else -1. */
static double measured_seconds(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, const tgc_kernel_def *k,
                               char *key, bool cold) {
    tgc_cost_file *f = m->files[m->file_of[d]];
    size_t warm_len = strlen(key);
    if (cold) strcat(key, " cold");
    double s = tgc_cost_file_get(f, key);
    if (s < 0 && m->measure && tgc_strmap_get(&f->failed, key) < 0) {
        if (tgc_cost_time_node(m, g, id, d, k, cold, &s) != TGC_OK || tgc_cost_file_put(f, key, s) != TGC_OK) {
            s = -1;
            (void)tgc_strmap_put(&f->failed, key, 1); /* not tried again; without memory, tried again */
        }
    }
    key[warm_len] = '\0';
    return s;
}

double tgc_cost_node(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, bool *measured) {
    return tgc_cost_node_spilled(m, g, id, d, 0, measured);
}

double tgc_cost_spill(const tgc_cost_model *m, double working_set_bytes) {
    double kept = (double)m->llc_bytes / 2;
    return kept > 0 && working_set_bytes > kept ? 1 - kept / working_set_bytes : 0;
}

double tgc_cost_node_spilled(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d, double spill, bool *measured) {
    if (measured != NULL) *measured = false;
    if (g->nodes[id].kind != TGC_NODE_OP || d < 0 || d >= m->n) return 0;
    const tgc_kernel_def *k = tgc_kernel_for_node(g, &g->nodes[id], m->devices[d].kind);
    if (k == NULL) return 0;
    char key[4096];
    double s = tgc_cost_key(g, id, key, sizeof key - 8) ? measured_seconds(m, g, id, d, k, key, false) : -1;
    if (s >= 0 && spill > 0 && tgc_kind_host_memory(m->devices[d].kind)) {
        /* a pool's threads wait on their misses at once: the extra shared among them (EfficientNet-B1
         * ran 1.4 ms past its warm figures on two threads, 3.3 on one: docs/cost.md) */
        double cold = measured_seconds(m, g, id, d, k, key, true);
        if (cold > s) s += (spill < 1 ? spill : 1) * (cold - s) / (m->width[d] > 1 ? m->width[d] : 1);
    }
    if (absorbed(m, g, id, d)) { /* its work is in its producer's pass, less its traffic */
        if (measured != NULL) *measured = s >= 0;
        return s >= 0 ? absorbed_seconds(m, g, id, d, s) : 0;
    }
    if (s >= 0) {
        if (measured != NULL) *measured = true;
        return s;
    }
    tgc_cost_measure_peaks(m, d);
    return estimate(m, g, id, d);
}

double tgc_cost_estimate(tgc_cost_model *m, const tgc_graph *g, int32_t id, int d) {
    if (g->nodes[id].kind != TGC_NODE_OP || d < 0 || d >= m->n ||
        tgc_kernel_for_node(g, &g->nodes[id], m->devices[d].kind) == NULL)
        return 0;
    tgc_cost_measure_peaks(m, d);
    return estimate(m, g, id, d);
}

/* Device d's figure for `link`, else the nominal one. */
static cost_pair link_of(const tgc_cost_model *m, int d, cost_link link, cost_pair nominal) {
    cost_pair p = m->files[m->file_of[d]]->links[link];
    return p.seconds > 0 && p.bytes_per_second > 0 ? p : nominal;
}

static double over(cost_pair p, int64_t bytes) { return p.seconds + (double)bytes / p.bytes_per_second; }

double tgc_cost_transfer(const tgc_cost_model *m, int from, int to, int64_t bytes) {
    if (from == to || from < 0 || to < 0 || from >= m->n || to >= m->n) return 0;
    const tgc_placer_device a = m->devices[from], b = m->devices[to];
    if (a.task != b.task) return TASK_COPY_SECONDS + (double)bytes / TASK_COPY_BYTES; /* MPI: an estimate */
    bool ha = tgc_kind_host_memory(a.kind), hb = tgc_kind_host_memory(b.kind);
    const cost_pair host = {HOST_COPY_SECONDS, HOST_COPY_BYTES}, gpu = {GPU_COPY_SECONDS, GPU_COPY_BYTES};
    if (ha && hb) return over(link_of(m, from, COST_LINK_HOST, link_of(m, to, COST_LINK_HOST, host)), bytes);
    double t = 0;
    if (!ha) t += over(link_of(m, from, COST_LINK_FROM_DEV, gpu), bytes); /* through host memory */
    if (!hb) t += over(link_of(m, to, COST_LINK_TO_DEV, gpu), bytes);
    return t;
}
