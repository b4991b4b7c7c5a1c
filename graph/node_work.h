/* A node's work, counted from its inferred shapes alone: what the
 * placer's cost estimate (placer/cost.c) and the executor's choice of
 * which ready nodes run side by side (executor/step.c) weigh nodes by. */
#ifndef TGC_GRAPH_NODE_WORK_H
#define TGC_GRAPH_NODE_WORK_H

#include "graph/graph.h"

/* The work and the traffic of node id of g: *flops, multiply-adds counted
 * as 2 FLOPs (Conv and _ConvAdd: a slice of W's first axis for each output element;
 * ConvTranspose: one for each input element; MatMul, Gemm, MatMulInteger:
 * K for each output element), about one operation an output element for
 * any other op (the passes' _ConvNHWC among them), 0 for a node that is
 * not an op;
 * *bytes, the inputs' and outputs' sizes. Unknown dims count as
 * tgc_shape_numel_estimate counts them. */
void tgc_node_work(const tgc_graph *g, int32_t id, double *flops, double *bytes);

#endif
