/* The placed-graph handle of the public API (include/tgc.h, "Placement"):
 * a graph compiled by the compile driver, its subgraphs too. Shared by its
 * lookups and dumps (placed.c) and the partitions handle over it
 * (partitions_api.c). Private to the library. */
#ifndef TGC_PARTITION_PLACED_H
#define TGC_PARTITION_PLACED_H

#include "tgc.h"

#include "partition/compile.h"

struct tgc_placed {
    const tgc_graph *source; /* the caller's graph; c.g is the one placed (optimized, or source) */
    tgc_compiled c;          /* placed and partitioned */
    char names[TGC_PLACER_MAX_DEVICES][32]; /* c.devices' full names ("gpu0") */
    tgc_compiled_sub *subs; /* every subgraph, depth first in node order */
    int n_subs;
};

/* The placement of subgraph `body` of the placed graph (bodies are
 * placed like graphs of their own) and its label ("loop.body") in *label
 * when label is not NULL; NULL when body is none of its subgraphs. */
const tgc_placement *tgc_placed_subgraph(const tgc_placed *p, const tgc_graph *body, const char **label);

#endif
