/* Sessions whose devices span processes (docs/distributed.md): the checks
 * before the devices open, and the agreement between ranks after the plans
 * are built. Every rank loads the graph and places it itself; placement is
 * deterministic, so ranks that read the same graph with the same device
 * list place it identically. One that does not (another file, another
 * list, another version of tgc) is caught here, at start, not as a step
 * that waits forever for a key no rank sends. */
#include "executor/session.h"

#include "distributed/transport.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

tgc_status tgc_session_dist_check_list(const tgc_placer_device *devs, int n, tgc_diags *diags) {
    int max_task = tgc_placer_max_task(devs, n);
    bool task0 = false;
    for (int i = 0; i < n; i++) task0 |= devs[i].task == 0;
    if (!tgc_distributed_available())
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "no-mpi",
                              "the device list names /task:%d, a device of another process, but this tgc was "
                              "built without MPI (install libopenmpi-dev and build with -DTGC_MPI=ON)",
                              max_task);
    if (max_task >= tgc_dist_size())
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "too-few-processes",
                              "the device list names /task:%d but %d process%s run%s: start tgc with "
                              "mpirun -np %d (or more)",
                              max_task, tgc_dist_size(), tgc_dist_size() == 1 ? "" : "es",
                              tgc_dist_size() == 1 ? "s" : "", max_task + 1);
    if (!task0)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                              "the device list names no device of task 0, which reads the feeds and writes the "
                              "outputs: add one (e.g. /task:0/cpu)");
    return TGC_OK;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s, strlen(s) + 1); }

/* What a rank placed: the device list, every node's name, op and device,
 * every pair's key and dtype. */
static uint64_t fingerprint(const tgc_session *s) {
    uint64_t h = 1469598103934665603ull;
    h = fnv_str(h, TGC_VERSION_STRING);
    for (int i = 0; i < s->n_devices; i++) {
        char name[32];
        h = fnv_str(h, tgc_placer_device_name(s->compiled.devices[i], name, sizeof name));
    }
    const tgc_graph *g = s->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        h = fnv_str(h, g->nodes[id].name);
        h = fnv_str(h, g->nodes[id].op_name ? g->nodes[id].op_name : "");
        h = fnv(h, &s->compiled.placement.device[id], sizeof s->compiled.placement.device[id]);
    }
    for (int32_t i = 0; i < s->compiled.parts.n_pairs; i++) {
        h = fnv_str(h, s->compiled.parts.pairs[i].key);
        h = fnv(h, &s->compiled.parts.pairs[i].dtype, sizeof s->compiled.parts.pairs[i].dtype);
    }
    return h;
}

/* One rank's word, exchanged with every other. */
typedef struct agreement {
    int32_t ok; /* its session was created */
    int32_t n_nodes;
    uint64_t fingerprint;
    char devices[256]; /* its device list as given */
    char graph[256];   /* its graph's file */
} agreement;

tgc_status tgc_session_dist_agree(tgc_session *s, const char *devices, bool ok, tgc_diags *diags) {
    int size = tgc_dist_size(), rank = tgc_dist_rank();
    if (size == 1) return TGC_OK;
    agreement mine = {.ok = ok, .n_nodes = s->g->n_nodes, .fingerprint = ok ? fingerprint(s) : 0};
    snprintf(mine.devices, sizeof mine.devices, "%s", devices);
    snprintf(mine.graph, sizeof mine.graph, "%s", s->g->path ? s->g->path : "(in memory)");
    agreement *all = tgc_calloc((size_t)size, sizeof *all);
    if (all == NULL) return TGC_ERR_NOMEM;
    char err[300] = "";
    double timeout = tgc_dist_peer_timeout() > 0 ? tgc_dist_peer_timeout() : 1e9;
    tgc_status st = tgc_dist_allgather(&mine, sizeof mine, all, timeout, err, sizeof err);
    if (st != TGC_OK) {
        tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "ranks-disagree",
                       "rank %d: the ranks could not compare their placements: %s", rank, err);
        tgc_free(all);
        return st;
    }
    for (int r = 0; st == TGC_OK && r < size; r++) {
        if (r == rank) continue;
        if (!all[r].ok) {
            if (ok)
                st = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "peer-failed",
                                    "rank %d: rank %d could not create its session (its message says why)", rank, r);
            else st = TGC_ERR_INVALID;
        } else if (ok && all[r].fingerprint != mine.fingerprint) {
            st = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "placement-mismatch",
                                "rank %d: rank %d placed the graph differently (%" PRId32 " nodes of '%s' on '%s') "
                                "from this rank (%" PRId32 " nodes of '%s' on '%s'): every rank must load the same "
                                "graph with the same --devices",
                                rank, r, all[r].n_nodes, all[r].graph, all[r].devices, mine.n_nodes, mine.graph,
                                mine.devices);
        }
    }
    tgc_free(all);
    return st;
}
