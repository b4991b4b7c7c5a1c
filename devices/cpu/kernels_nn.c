/* The cpu nn kernel family: the registry's list (tgc_cpu_kernels_nn) and
 * the small checks every nn kernel uses. The kernels themselves live in
 * kernels_gemm.c, kernels_conv.c, kernels_pool.c and kernels_norm.c (see
 * kernels_nn.h). All take float32 only; only BatchNormalization, which is
 * elementwise once its per-channel factors are known, may overwrite its
 * input. */
#include "devices/cpu/kernels_nn.h"

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_cpu_kernels_nn[] = {
    {.op = "MatMul", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_matmul_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "Gemm", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_gemm_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "Conv", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_conv_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "MaxPool", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_max_pool_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "AveragePool", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_average_pool_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "GlobalAveragePool", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_global_average_pool_f32,
     .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "BatchNormalization", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_batch_norm_f32,
     .forward_input = 0, .dtypes = F32_ONLY},
    {.op = "LayerNormalization", .kind = TGC_DEVICE_CPU, .fn = tgc_cpu_layer_norm_f32,
     .forward_input = -1, .dtypes = F32_ONLY},
    {.op = NULL},
};

tgc_status tgc_cpu_need_f32(tgc_kernel_ctx *c, const tgc_value *v, const char *what) {
    if (v->dtype == TGC_FLOAT32) return TGC_OK;
    if (v->dtype == TGC_DTYPE_INVALID) return tgc_kernel_fail(c, "%s is missing", what);
    return tgc_kernel_fail(c, "%s is %s; this kernel takes float32", what, tgc_dtype_name(v->dtype));
}

bool tgc_cpu_has_input(const tgc_kernel_ctx *c, int i) {
    return i < c->n_inputs && c->inputs[i].dtype != TGC_DTYPE_INVALID;
}

bool tgc_cpu_has_output(const tgc_kernel_ctx *c, int i) {
    return i < c->n_outputs && c->outputs[i].buf != NULL;
}
