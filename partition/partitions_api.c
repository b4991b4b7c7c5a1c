/* The public face of partitioning (include/tgc.h, "Partitions"): a handle
 * over tgc_partition_build for a graph placed through the public placement
 * API, its validation, its figures and its dumps. */
#include "tgc.h"

#include "graph/subgraph.h"
#include "partition/partition.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

/* A subgraph's partitioning (bodies are placed and split as graphs of
 * their own, as a session runs them). */
typedef struct sub_parts {
    const tgc_graph *g;
    const char *label; /* the placement's: "loop.body" */
    tgc_partitioning parts;
    bool built;
} sub_parts;

struct tgc_partitions {
    const tgc_graph *g;
    tgc_placer_device devs[TGC_PLACER_MAX_DEVICES];
    int n_devs;
    int32_t *device; /* node id -> index into devs */
    tgc_partitioning parts;
    bool built;
    sub_parts *subs; /* every subgraph, depth first in node order */
    int n_subs, cap_subs;
    char label[512]; /* tgc_partitions_label's */
};

/* Partitions the subgraphs of g's nodes (and theirs) as `placed` placed them. */
static tgc_status partition_subgraphs(tgc_partitions *p, const tgc_graph *g, const tgc_placed *placed,
                                      tgc_diags *diags) {
    if (g->depth >= TGC_MAX_SUBGRAPH_DEPTH) return TGC_OK; /* the loader never makes one this deep */
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int a = 0; a < n->n_attrs; a++) {
            const tgc_graph *body = n->attrs[a].type == TGC_ATTR_GRAPH ? n->attrs[a].graph : NULL;
            if (body == NULL) continue;
            const char *label = NULL;
            const tgc_placement *pl = tgc_placed_subgraph(placed, body, &label);
            if (pl == NULL)
                return tgc_diag_error(diags, g->path, n->pos, "bad-placement",
                                      "subgraph '%s' of node '%s' has no placement", n->attrs[a].name, n->name);
            if (p->n_subs == p->cap_subs) {
                int cap = p->cap_subs ? p->cap_subs * 2 : 4;
                sub_parts *grown = tgc_realloc(p->subs, (size_t)cap * sizeof *grown);
                if (grown == NULL) return TGC_ERR_NOMEM;
                p->subs = grown;
                p->cap_subs = cap;
            }
            sub_parts *sp = &p->subs[p->n_subs++];
            memset(sp, 0, sizeof *sp);
            sp->g = body;
            sp->label = label;
            tgc_status s = tgc_partition_build(body, pl, p->devs, p->n_devs, diags, &sp->parts);
            sp->built = s == TGC_OK;
            if (s == TGC_OK) s = partition_subgraphs(p, body, placed, diags);
            if (s != TGC_OK) return s;
        }
    }
    return TGC_OK;
}

/* Partition i of the flattened list (the graph's, then each subgraph's):
 * its partitioning and its index there. */
static const tgc_partitioning *partitioning_of(const tgc_partitions *p, int i, int *at, const sub_parts **sub) {
    *sub = NULL;
    if (i < 0) return NULL;
    if (i < p->parts.n_parts) {
        *at = i;
        return &p->parts;
    }
    i -= p->parts.n_parts;
    for (int k = 0; k < p->n_subs; k++) {
        if (i < p->subs[k].parts.n_parts) {
            *at = i;
            *sub = &p->subs[k];
            return &p->subs[k].parts;
        }
        i -= p->subs[k].parts.n_parts;
    }
    return NULL;
}

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
    if (s == TGC_OK) s = partition_subgraphs(p, g, placed, diags);
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
    for (int k = 0; k < p->n_subs; k++)
        if (p->subs[k].built) tgc_partitioning_release(&p->subs[k].parts);
    tgc_free(p->subs);
    tgc_free(p->device);
    tgc_free(p);
}

int tgc_partitions_count(const tgc_partitions *p) {
    int n = p->parts.n_parts;
    for (int k = 0; k < p->n_subs; k++) n += p->subs[k].parts.n_parts;
    return n;
}

const char *tgc_partitions_device(const tgc_partitions *p, int i) {
    int at;
    const sub_parts *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    return pp != NULL ? pp->parts[at].device_name : NULL;
}

const char *tgc_partitions_label(const tgc_partitions *p, int i) {
    int at;
    const sub_parts *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    if (pp == NULL) return NULL;
    if (sub == NULL) return pp->parts[at].device_name;
    tgc_partitions *w = (tgc_partitions *)p; /* the label's buffer */
    snprintf(w->label, sizeof w->label, "%s@%s", sub->label, pp->parts[at].device_name);
    return w->label;
}

size_t tgc_partitions_node_count(const tgc_partitions *p, int i) {
    int at;
    const sub_parts *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    return pp != NULL ? (size_t)pp->parts[at].graph->n_nodes : 0;
}

int tgc_partitions_pair_count(const tgc_partitions *p) {
    int n = (int)p->parts.n_pairs;
    for (int k = 0; k < p->n_subs; k++) n += (int)p->subs[k].parts.n_pairs;
    return n;
}

tgc_status tgc_partitions_validate(const tgc_partitions *p, tgc_diags *diags) {
    tgc_status s = tgc_partition_validate(p->g, &p->parts, diags);
    for (int k = 0; k < p->n_subs; k++) {
        tgc_status ks = tgc_partition_validate(p->subs[k].g, &p->subs[k].parts, diags);
        if (ks == TGC_ERR_NOMEM || s == TGC_OK) s = ks;
    }
    return s;
}

tgc_status tgc_partitions_dump_yaml(const tgc_partitions *p, int i, FILE *out, const char *dest_dir,
                                    tgc_diags *diags) {
    int at;
    const sub_parts *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    if (pp == NULL) return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "io", "no partition %d", i);
    if (sub != NULL)
        fprintf(out, "# subgraph %s on %s. At run time each pair's key gets the step id, the frame and the\n"
                     "# iteration in front of it (TensorFlow's frame/iteration): e.g. 'step1/NODE@3/%s' in\n"
                     "# iteration 3 of step 1.\n",
                sub->label, pp->parts[at].device_name, pp->n_pairs > 0 ? pp->pairs[0].key : "cpu0;gpu0;x");
    return tgc_partition_dump_yaml(pp, at, out, dest_dir, diags);
}

tgc_status tgc_partitions_dump_json(const tgc_partitions *p, FILE *out, tgc_diags *diags) {
    return tgc_partition_dump_json(&p->parts, out, diags);
}

tgc_status tgc_partitions_dump_dot(const tgc_partitions *p, FILE *out, tgc_diags *diags) {
    return tgc_partition_dump_dot(&p->parts, out, diags);
}

void tgc_partitions_summary(const tgc_partitions *p, FILE *out) {
    tgc_partition_summary(&p->parts, out);
    for (int k = 0; k < p->n_subs; k++) {
        fprintf(out, "subgraph %s: ", p->subs[k].label);
        tgc_partition_summary(&p->subs[k].parts, out);
    }
}
