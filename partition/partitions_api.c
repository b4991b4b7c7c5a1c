/* The public face of partitioning (include/tgc.h, "Partitions"): a handle
 * over tgc_partition_build for a graph placed through the public placement
 * API, its validation, its figures and its dumps. */
#include "tgc.h"

#include "partition/partition.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

struct tgc_partitions {
    const tgc_graph *g;
    tgc_placer_device devs[TGC_PLACER_MAX_DEVICES];
    int n_devs;
    int32_t *device; /* node id -> index into devs */
    tgc_partitioning parts;
    bool built;
};

/* The placement as the partitioner reads it, from the public lookups:
 * devices by name, each node's device by its name. */
static tgc_status read_placement(tgc_partitions *p, const tgc_placed *placed, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    int n = tgc_placed_device_count(placed);
    char list[TGC_PLACER_MAX_DEVICES * 17] = "";
    for (int i = 0; i < n && i < TGC_PLACER_MAX_DEVICES; i++) {
        if (i) strcat(list, ",");
        strncat(list, tgc_placed_device(placed, i), 16);
    }
    tgc_status s = tgc_placer_parse_devices(list, p->devs, TGC_PLACER_MAX_DEVICES, &p->n_devs, diags);
    if (s != TGC_OK) return s;
    if ((p->device = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *p->device)) == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const char *dev = tgc_placed_device_name(placed, g->nodes[id].name);
        p->device[id] = -1;
        for (int i = 0; dev != NULL && i < n; i++)
            if (strcmp(dev, tgc_placed_device(placed, i)) == 0) p->device[id] = i;
        if (p->device[id] < 0)
            return tgc_diag_error(diags, g->path, g->nodes[id].pos, "bad-placement",
                                  "node '%s' has no device in the placement (a placement of another graph?)",
                                  g->nodes[id].name);
    }
    return TGC_OK;
}

tgc_status tgc_graph_partition(const tgc_graph *g, const tgc_placed *placed, tgc_diags *diags, tgc_partitions **out) {
    *out = NULL;
    tgc_partitions *p = tgc_calloc(1, sizeof *p);
    if (p == NULL) return TGC_ERR_NOMEM;
    p->g = g;
    tgc_status s = read_placement(p, placed, diags);
    if (s == TGC_OK) {
        tgc_placement pl = {.n_nodes = g->n_nodes, .device = p->device};
        s = tgc_partition_build(g, &pl, p->devs, p->n_devs, diags, &p->parts);
        p->built = s == TGC_OK;
    }
    if (s != TGC_OK) {
        tgc_partitions_free(p);
        return s;
    }
    *out = p;
    return TGC_OK;
}

void tgc_partitions_free(tgc_partitions *p) {
    if (p == NULL) return;
    if (p->built) tgc_partitioning_release(&p->parts);
    tgc_free(p->device);
    tgc_free(p);
}

int tgc_partitions_count(const tgc_partitions *p) { return p->parts.n_parts; }

const char *tgc_partitions_device(const tgc_partitions *p, int i) {
    return i >= 0 && i < p->parts.n_parts ? p->parts.parts[i].device_name : NULL;
}

size_t tgc_partitions_node_count(const tgc_partitions *p, int i) {
    return i >= 0 && i < p->parts.n_parts ? (size_t)p->parts.parts[i].graph->n_nodes : 0;
}

int tgc_partitions_pair_count(const tgc_partitions *p) { return (int)p->parts.n_pairs; }

tgc_status tgc_partitions_validate(const tgc_partitions *p, tgc_diags *diags) {
    return tgc_partition_validate(p->g, &p->parts, diags);
}

tgc_status tgc_partitions_dump_yaml(const tgc_partitions *p, int i, FILE *out, const char *dest_dir,
                                    tgc_diags *diags) {
    return tgc_partition_dump_yaml(&p->parts, i, out, dest_dir, diags);
}

tgc_status tgc_partitions_dump_json(const tgc_partitions *p, FILE *out, tgc_diags *diags) {
    return tgc_partition_dump_json(&p->parts, out, diags);
}

tgc_status tgc_partitions_dump_dot(const tgc_partitions *p, FILE *out, tgc_diags *diags) {
    return tgc_partition_dump_dot(&p->parts, out, diags);
}

void tgc_partitions_summary(const tgc_partitions *p, FILE *out) { tgc_partition_summary(&p->parts, out); }
