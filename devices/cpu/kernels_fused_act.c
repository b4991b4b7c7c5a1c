/* _FusedConv, _FusedGemm, _FusedMatMul on the cpu (graph/ops_fused_act.c):
 * the base op's kernel run with the node's activation as its fused
 * activation (tgc_kernel_ctx.fused_act), which it applies with the row's
 * own vector loop as each block is written: bitwise the two ops run one
 * after the other. Not themselves open to the executor's activation
 * fusion (one activation a node). */
#include "devices/cpu/kernels_nn.h"

static tgc_status with_activation(tgc_kernel_ctx *c, tgc_kernel_fn base) {
    tgc_fused_act act;
    tgc_status st = tgc_kernel_node_activation(c, &act);
    if (st != TGC_OK) return st;
    const tgc_fused_act *saved = c->fused_act;
    c->fused_act = &act;
    st = base(c);
    c->fused_act = saved;
    return st;
}

static tgc_status fused_conv(tgc_kernel_ctx *c) { return with_activation(c, tgc_cpu_conv_f32); }
static tgc_status fused_gemm(tgc_kernel_ctx *c) { return with_activation(c, tgc_cpu_gemm_f32); }
static tgc_status fused_matmul(tgc_kernel_ctx *c) { return with_activation(c, tgc_cpu_matmul_f32); }

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_cpu_kernels_fused_act[] = {
    {.op = "_FusedConv", .fn = fused_conv, .forward_input = -1, .dtypes = F32_ONLY,
     .choose = tgc_cpu_conv_choose,
     .footprint = tgc_cpu_conv_footprint},
    {.op = "_FusedGemm", .fn = fused_gemm, .forward_input = -1, .dtypes = F32_ONLY,
     .choose = tgc_cpu_gemm_choose,
     .footprint = tgc_cpu_gemm_footprint},
    {.op = "_FusedMatMul", .fn = fused_matmul, .forward_input = -1, .dtypes = F32_ONLY,
     .choose = tgc_cpu_matmul_choose,
     .footprint = tgc_cpu_matmul_footprint},
    {.op = NULL},
};
