/* _Attention's shape rules (graph/ops_attention.c), shared by its
 * inference and by passes/fuse_attention.c, which must make only nodes
 * that inference accepts. */
#ifndef TGC_GRAPH_OPS_ATTENTION_H
#define TGC_GRAPH_OPS_ATTENTION_H

#include "graph/shape.h"

#include <stdbool.h>

/* True when an additive mask of shape `mask` broadcasts one way to the
 * scores' shape `scores` ([..., Lq, Lk]): rank at most the scores', and
 * each of its dims (aligned at the right) 1 or equal to the scores' dim.
 * False for an unknown rank. */
bool tgc_attention_mask_fits(const tgc_shape *mask, const tgc_shape *scores);

#endif
