/* Activation fusion, tgc's one (no graph pass makes fused ops): a unary
 * float activation (any one-input row of graph/elementwise.def: Relu, Clip
 * with constant bounds, LeakyRelu, HardSwish, HardSigmoid, Sigmoid, Tanh,
 * Gelu, Elu...) whose only input is an output that nothing else reads,
 * made by a kernel that can apply it as it writes
 * (tgc_kernel_def.fuses_activation: the cpu Conv, Gemm, MatMul, Add and
 * BatchNormalization, float32; the gpu Conv, Gemm and MatMul, float32 and,
 * by fuses_activation_half, float16), is absorbed into that kernel: the
 * producer runs with c->fused_act and the activation node only takes over
 * the buffer (buffer forwarding), without a pass of its own over the
 * tensor. The kernels apply it with the row's own vector loop, so float32
 * values are bitwise the unfused ones (float16 ones are rounded once, after
 * the activation, instead of before and after it). The rewrite of ONNX Runtime's
 * ConvActivationFusion and TensorFlow grappler's remapper, done on the
 * plan rather than the graph so that placement, partitions, the memory
 * plan and the trace still show every node, and so that it follows the
 * kernel each device has: where a kernel cannot apply the activation, it
 * stays a node of its own. TGC_NO_FUSION=1 in the session's settings turns
 * it off (for comparisons): tgc_plan_build_for does not call this then. */
#include "executor/session.h"


void tgc_plan_fuse_activations(tgc_plan *p) {
    const tgc_graph *g = p->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        tgc_fused_act act;
        if (p->role[id] != TGC_ROLE_KERNEL || !tgc_activation_of(g, n, &act)) continue;
        tgc_ref from = n->inputs[0]; /* output 0 of its producer */
        if (p->role[from.node] != TGC_ROLE_KERNEL) continue;
        const tgc_kernel_def *k = p->kernel[from.node];
        if (!tgc_kernel_fuses_at(k, n->outputs[0].dtype) || p->fused_act[from.node].row >= 0) continue;
        if (p->use_count[p->value_base[from.node]] != 1) continue; /* another reader wants it before */
        if (tgc_graph_ref_info(g, from)->dtype != n->outputs[0].dtype) continue;
        if (p->kernel[id] == NULL) continue; /* the activation runs here too: one plan, one device */
        p->fused_act[from.node] = act;
        p->absorbed[id] = true;
    }
}
