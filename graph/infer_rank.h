/* Inference over a rank known only at run time.
 *
 * An input's rank may be unknown at compile time: an If whose branches give
 * an output different ranks, a Loop's carried value whose rank changes, a
 * subgraph input declared without a shape. An op's inference function is
 * written for known ranks; rather than teach each one about unknown ranks,
 * the node is inferred once per rank each such input could have (0 to
 * TGC_MAX_RANK), and what the ranks that are valid agree on is kept: the
 * dtypes (which no op derives from a rank), the rank when every valid rank
 * gives the same one, and each dim every valid rank gives alike. What they
 * do not agree on is unknown: a fresh symbol, or an unknown rank. At run
 * time the executor infers such a node again from its actual inputs
 * (executor/node_run.c), so the compile-time answer only has to cover
 * every rank the run could bring, which it does by construction.
 *
 * Example usage (graph/infer_graph.c):
 *     if (tgc_infer_rank_needed(ctx.graph, n)) s = tgc_infer_over_ranks(&ctx);
 *     else s = n->op->infer(&ctx);
 */
#ifndef TGC_GRAPH_INFER_RANK_H
#define TGC_GRAPH_INFER_RANK_H

#include "graph/infer.h"

/* True when node n (an op without subgraphs: If, Loop and Scan infer their
 * bodies with unknown ranks themselves) has a tensor input of unknown rank. */
bool tgc_infer_rank_needed(const tgc_graph *g, const tgc_node *n);

/* Infers c->node's outputs (into the graph) by running its op's inference
 * once per combination of ranks of its unknown-rank tensor inputs (at most
 * 9^3 combinations; with more such inputs, once per rank shared by all of
 * them, every output's rank then left unknown). Errors: when no rank is
 * valid, the op's own error at the first ranks (none 0) where it is about
 * something else than the unknown-rank inputs (Gemm's B of rank 3), else
 * at rank 1, followed at the same place by a note that says the rank is
 * known only at run time and no rank would do ("rank-unknown");
 * TGC_ERR_NOMEM. */
tgc_status tgc_infer_over_ranks(tgc_infer_ctx *c);

#endif
