/* The cpu kernels of the convolution-family and layout ops added in
 * kernels_convt.c (ConvTranspose, MaxUnpool, and the family's table
 * tgc_cpu_kernels_convt), kernels_pad.c (Pad, DepthToSpace, SpaceToDepth)
 * and kernels_channel.c (InstanceNormalization, LRN, LpPool,
 * GlobalMaxPool, GlobalLpPool). Private to devices/cpu/.
 *
 * Each computes c->outputs from c->inputs as its file's comment says,
 * checks its arguments first (the same checks as the gpu kernel of the op,
 * through devices/window.h and devices/convt_geometry.h) and fails through
 * tgc_kernel_fail, never writing outside its outputs. Scratch comes from
 * tgc_malloc and is freed before returning.
 *
 * Example usage (the family's table, in kernels_convt.c):
 *     {.op = "Pad", .fn = tgc_cpu_pad, .host_inputs = 0xE, .forward_input = -1},
 */
#ifndef TGC_DEVICES_CPU_KERNELS_CONVT_H
#define TGC_DEVICES_CPU_KERNELS_CONVT_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

tgc_status tgc_cpu_pad(tgc_kernel_ctx *c);
tgc_status tgc_cpu_depth_to_space(tgc_kernel_ctx *c);
tgc_status tgc_cpu_space_to_depth(tgc_kernel_ctx *c);
tgc_status tgc_cpu_instance_norm_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_lrn_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_lp_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_global_max_pool_f32(tgc_kernel_ctx *c);
tgc_status tgc_cpu_global_lp_pool_f32(tgc_kernel_ctx *c);

#endif
