/* Activation fusion: a Relu whose only input is an output that nothing
 * else reads, made by a kernel that can apply Relu itself as it writes
 * (tgc_kernel_def.fuses_relu: the cpu Conv, Gemm and Add; float32 only),
 * is absorbed into that kernel: the producer runs with c->fused_relu and
 * the Relu node only takes over the buffer (buffer forwarding), without a
 * pass of its own over the tensor. The rewrite of ONNX Runtime's ConvActivationFusion and
 * TensorFlow grappler's remapper, done on the plan rather than the graph
 * so that placement, partitions, the memory plan and the trace still show
 * every node. TGC_NO_FUSION=1 turns it off (for comparisons). */
#include "executor/session.h"

#include <stdlib.h>
#include <string.h>

void tgc_plan_fuse_activations(tgc_plan *p) {
    const char *off = getenv("TGC_NO_FUSION");
    if (off != NULL && off[0] != '\0' && strcmp(off, "0") != 0) return;
    const tgc_graph *g = p->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        if (p->role[id] != TGC_ROLE_KERNEL || strcmp(n->op_name, "Relu") != 0 || n->n_inputs != 1) continue;
        tgc_ref from = n->inputs[0];
        if (from.node < 0 || p->role[from.node] != TGC_ROLE_KERNEL) continue;
        const tgc_kernel_def *k = p->kernel[from.node];
        if (k == NULL || !k->fuses_relu || from.port != 0 || p->fused_relu[from.node]) continue;
        if (p->use_count[p->value_base[from.node]] != 1) continue; /* another reader wants it before Relu */
        if (n->outputs[0].dtype != TGC_FLOAT32 || tgc_graph_ref_info(g, from)->dtype != TGC_FLOAT32) continue;
        p->fused_relu[from.node] = true;
        p->absorbed[id] = true;
    }
}
