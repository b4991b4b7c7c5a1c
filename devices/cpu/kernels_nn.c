/* The cpu nn kernel family: the registry's list (tgc_cpu_kernels_nn) and
 * the small checks every nn kernel uses. The kernels themselves live in
 * kernels_gemm.c, kernels_conv.c, kernels_pool.c and kernels_norm.c (see
 * kernels_nn.h). All take float32 only; only BatchNormalization, which is
 * elementwise once its per-channel factors are known, may overwrite its
 * input. */
#include "devices/cpu/kernels_nn.h"

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_cpu_kernels_nn[] = {
    {.op = "MatMul", .fn = tgc_cpu_matmul_f32, .forward_input = -1, .fuses_activation = true,
     .dtypes = F32_ONLY, .choose = tgc_cpu_matmul_choose,
     .footprint = tgc_cpu_matmul_footprint},
    {.op = "Gemm", .fn = tgc_cpu_gemm_f32, .forward_input = -1, .fuses_activation = true,
     .dtypes = F32_ONLY, .choose = tgc_cpu_gemm_choose,
     .footprint = tgc_cpu_gemm_footprint},
    {.op = "_MatMulHalfWeight", .fn = tgc_cpu_matmul_half_weight, .forward_input = -1, .fuses_activation = true,
     .dtypes = F32_ONLY, .choose = tgc_cpu_matmul_half_choose, .footprint = tgc_cpu_matmul_half_footprint},
    {.op = "MatMul", .fn = tgc_cpu_matmul_f64, .forward_input = -1,
     .dtypes = {TGC_FLOAT64, TGC_DTYPE_INVALID}},
    {.op = "Gemm", .fn = tgc_cpu_gemm_f64, .forward_input = -1,
     .dtypes = {TGC_FLOAT64, TGC_DTYPE_INVALID}},
    {.op = "Conv", .fn = tgc_cpu_conv_f32, .forward_input = -1, .fuses_activation = true,
     .dtypes = F32_ONLY, .choose = tgc_cpu_conv_choose,
     .footprint = tgc_cpu_conv_footprint},
    /* Y is written before Z is read: never Z's buffer (forward_input -1) */
    {.op = "_ConvAdd", .fn = tgc_cpu_conv_add_f32, .forward_input = -1, .fuses_activation = true,
     .dtypes = F32_ONLY, .choose = tgc_cpu_conv_choose,
     .footprint = tgc_cpu_conv_footprint},
    {.op = "MaxPool", .fn = tgc_cpu_max_pool, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_UINT8, TGC_DTYPE_INVALID}},
    {.op = "AveragePool", .fn = tgc_cpu_average_pool_f32, .forward_input = -1,
     .dtypes = F32_ONLY},
    {.op = "GlobalAveragePool", .fn = tgc_cpu_global_average_pool_f32,
     .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "BatchNormalization", .fn = tgc_cpu_batch_norm_f32,
     .forward_input = 0, .dtypes = F32_ONLY, .fuses_activation = true},
    {.op = "LayerNormalization", .fn = tgc_cpu_layer_norm_f32,
     .forward_input = -1, .dtypes = F32_ONLY},
    {.op = NULL},
};

