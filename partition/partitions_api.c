/* The public face of partitioning (include/tgc.h, "Partitions"): a view
 * of the partitions the compile driver made for a placed graph
 * (partition/placed.h: the graph's, then each subgraph's), its
 * validation, its figures and its dumps. */
#include "partition/placed.h"

#include "support/alloc.h"
#include "support/diag.h"

#include <string.h>

struct tgc_partitions {
    const tgc_placed *placed;
    char label[512]; /* tgc_partitions_label's */
};

/* Partitioning k of the placed graph's: 0 its own, 1 + j its subgraph j's
 * (whose label is then in *label); NULL past the end. */
static const tgc_partitioning *partitioning_k(const tgc_partitions *p, int k, const char **label) {
    *label = NULL;
    if (k == 0) return &p->placed->c.parts;
    if (k < 0 || k > p->placed->n_subs) return NULL;
    *label = p->placed->subs[k - 1].label;
    return &p->placed->subs[k - 1].c.parts;
}

/* Partition i of the flattened list (the graph's, then each subgraph's):
 * its partitioning, its index there and its subgraph's label (NULL for the
 * graph's own). */
static const tgc_partitioning *partitioning_of(const tgc_partitions *p, int i, int *at, const char **label) {
    if (i < 0) return NULL;
    for (int k = 0; k <= p->placed->n_subs; k++) {
        const tgc_partitioning *pp = partitioning_k(p, k, label);
        if (i < pp->n_parts) {
            *at = i;
            return pp;
        }
        i -= pp->n_parts;
    }
    return NULL;
}

tgc_status tgc_graph_partition(const tgc_graph *g, const tgc_placed *placed, tgc_diags *diags, tgc_partitions **out) {
    *out = NULL;
    if (g == NULL || (g != placed->source && g != placed->c.g))
        return tgc_diag_error(diags, g != NULL ? g->path : NULL, (tgc_srcpos){0, 0}, "bad-placement",
                              "the placement is of another graph (give tgc_graph_partition the graph placed)");
    tgc_partitions *p = tgc_calloc(1, sizeof *p);
    if (p == NULL) return TGC_ERR_NOMEM;
    p->placed = placed;
    *out = p;
    return TGC_OK;
}

void tgc_partitions_free(tgc_partitions *p) { tgc_free(p); }

int tgc_partitions_count(const tgc_partitions *p) {
    int n = 0;
    const char *label;
    for (int k = 0; k <= p->placed->n_subs; k++) n += partitioning_k(p, k, &label)->n_parts;
    return n;
}

const char *tgc_partitions_device(const tgc_partitions *p, int i) {
    int at;
    const char *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    return pp != NULL ? pp->parts[at].device_name : NULL;
}

const char *tgc_partitions_label(const tgc_partitions *p, int i) {
    int at;
    const char *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    if (pp == NULL) return NULL;
    if (sub == NULL) return pp->parts[at].device_name;
    tgc_partitions *w = (tgc_partitions *)p; /* the label's buffer */
    snprintf(w->label, sizeof w->label, "%s@%s", sub, pp->parts[at].device_name);
    return w->label;
}

size_t tgc_partitions_node_count(const tgc_partitions *p, int i) {
    int at;
    const char *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    return pp != NULL ? (size_t)pp->parts[at].graph->n_nodes : 0;
}

int tgc_partitions_pair_count(const tgc_partitions *p) {
    int n = 0;
    const char *label;
    for (int k = 0; k <= p->placed->n_subs; k++) n += (int)partitioning_k(p, k, &label)->n_pairs;
    return n;
}

tgc_status tgc_partitions_validate(const tgc_partitions *p, tgc_diags *diags) {
    tgc_status s = tgc_partition_validate(p->placed->c.g, &p->placed->c.parts, diags);
    for (int k = 0; k < p->placed->n_subs; k++) {
        const tgc_compiled_sub *sub = &p->placed->subs[k];
        tgc_status ks = tgc_partition_validate(sub->g, &sub->c.parts, diags);
        if (ks == TGC_ERR_NOMEM || s == TGC_OK) s = ks;
    }
    return s;
}

tgc_status tgc_partitions_dump_yaml(const tgc_partitions *p, int i, FILE *out, const char *dest_dir,
                                    tgc_diags *diags) {
    int at;
    const char *sub;
    const tgc_partitioning *pp = partitioning_of(p, i, &at, &sub);
    if (pp == NULL) return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "io", "no partition %d", i);
    if (sub != NULL)
        fprintf(out, "# subgraph %s on %s. At run time each pair's key gets the step id, the frame and the\n"
                     "# iteration in front of it (TensorFlow's frame/iteration): e.g. 'step1/NODE@3/%s' in\n"
                     "# iteration 3 of step 1.\n",
                sub, pp->parts[at].device_name, pp->n_pairs > 0 ? pp->pairs[0].key : "cpu0;gpu0;x");
    return tgc_partition_dump_yaml(pp, at, out, dest_dir, diags);
}

tgc_status tgc_partitions_dump_json(const tgc_partitions *p, FILE *out, tgc_diags *diags) {
    return tgc_partition_dump_json(&p->placed->c.parts, out, diags);
}

tgc_status tgc_partitions_dump_dot(const tgc_partitions *p, FILE *out, tgc_diags *diags) {
    return tgc_partition_dump_dot(&p->placed->c.parts, out, diags);
}

void tgc_partitions_summary(const tgc_partitions *p, FILE *out) {
    tgc_partition_summary(&p->placed->c.parts, out);
    for (int k = 0; k < p->placed->n_subs; k++) {
        fprintf(out, "subgraph %s: ", p->placed->subs[k].label);
        tgc_partition_summary(&p->placed->subs[k].c.parts, out);
    }
}
