/* _FusedConv, _FusedGemm, _FusedMatMul on the gpu (graph/ops_fused_act.c):
 * the base op's gpu kernel, then the activation's elementwise kernel over
 * the output in place, enqueued behind it on the device's in-order queue
 * (one more pass over the output; the node stays one in the plan). */
#include "devices/opencl/kernels_nn.h"

#include "graph/elementwise.h"

static tgc_status with_activation(tgc_kernel_ctx *c, tgc_kernel_fn base) {
    tgc_fused_act act;
    tgc_status st = tgc_kernel_node_activation(c, &act);
    if (st == TGC_OK) st = base(c);
    if (st != TGC_OK || tgc_value_numel(&c->outputs[0]) == 0) return st;
    return tgc_cl_ew_unary_f32(c, &tgc_ew_rows[act.row], act.params, c->outputs[0].buf, c->outputs[0].buf,
                               tgc_value_numel(&c->outputs[0]));
}

static tgc_status fused_conv(tgc_kernel_ctx *c) { return with_activation(c, tgc_gpu_conv_f32); }
static tgc_status fused_gemm(tgc_kernel_ctx *c) { return with_activation(c, tgc_gpu_gemm_f32); }
static tgc_status fused_matmul(tgc_kernel_ctx *c) { return with_activation(c, tgc_gpu_matmul_f32); }

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_gpu_kernels_fused_act[] = {
    {.op = "_FusedConv", .fn = fused_conv, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "_FusedGemm", .fn = fused_gemm, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "_FusedMatMul", .fn = fused_matmul, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = NULL},
};
