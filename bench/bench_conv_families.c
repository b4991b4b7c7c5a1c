/* Conv on the cpu over the layers of seven convolutional networks (issue 15;
 * DenseNet-121 and ResNet-18 for issue 34, SqueezeNet 1.1's 55x55 layers,
 * RegNetX-800MF's first stages, and "stems": the first layers of the
 * held-out models and of ConvNeXt and ViT):
 * every distinct Conv of MobileNetV2, MobileNetV3-Large, EfficientNet-B0,
 * ConvNeXt-T and ResNeXt-50 32x4d at batch 1 and 224x224 (the table below,
 * from `bench/conv_models.py shapes`; squeeze-and-excitation's 1x1 on one
 * pixel left out), float32 NCHW, random values. Per layer and thread count:
 *
 *   old   tgc's kernel before the direct path: depthwise by the scalar loop
 *         kernels_conv.c had (copied below: a pass over Y per tap), 1x1 by
 *         one GEMM on X, 3x3 by Winograd where it applies, the rest
 *         (grouped included) by im2col + GEMM;
 *   new   tgc's Conv kernel as a session runs it (kernels_conv.c picks the path);
 *   direct tgc's direct method (conv_direct.c) on every layer, chosen or not,
 *         to show where it would win;
 *   dnnl  oneDNN 2.6's convolution (built with Debian's libdnnl-dev, found
 *         by CMake), on tgc's NCHW tensors with its weights reordered once
 *         (not timed): what a kernel provider for tgc would run;
 *   dnnl* the same with every tensor in the layout oneDNN prefers (nChw8c
 *         or nChw16c), the reorders not timed: its best case, had the whole
 *         network been in that layout.
 *
 * The variants run in turn, one run each, for `reps` rounds (interleaved, so
 * the machine's load falls on all alike); each figure is the median, in ms.
 * Threads: tgc with a pool of T - 1 workers beside the caller (as a session
 * splits a kernel), OpenBLAS on one; oneDNN with omp_set_num_threads(T).
 * Each model's total is the sum over its layers of median x occurrences.
 * Every variant's output is checked against `new` (max |diff| printed when
 * past 1e-3 of the output's largest value).
 *
 * oneDNN's OpenMP threads spin between runs by default and take the core
 * from tgc's workers on a small machine: the program restarts itself with
 * OMP_WAIT_POLICY=PASSIVE unless that is set.
 *
 * With --cold MB, MB megabytes are written before each timed run (not
 * timed), so that the layer's tensors and weights come from memory, as in
 * a model whose other layers passed through the caches since (the
 * default, 0, times layers whose tensors stay in cache from run to run).
 *
 * Usage: bench_conv_families [--reps N] [--threads 1,2] [--models NAME,...]
 *                            [--kind depthwise|grouped|dense|all] [--variants old,new,direct,dnnl,dnnl*]
 *                            [--hw 7,14,...] [--cold MB]
 *        (defaults: 11, 1,2, all models, all kinds, all variants, all input sizes, 0) */
#include "devices/cpu/conv_direct.h"
#include "devices/cpu/kernels_nn.h"
#include "devices/device.h"
#include "devices/window.h"
#include "support/parallel_for.h"

#include "bench_util.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TGC_BENCH_DNNL
#include "bench_dnnl.h"
#endif

typedef struct layer {
    const char *model;
    int64_t c, h, w, m, k, stride, pad, group, count;
} layer;

/* bench/conv_models.py shapes: {model, C, H, W, M, k, stride, pad, group, occurrences}. */
static const layer layers[] = {
    {"mobilenet_v2", 3, 224, 224, 32, 3, 2, 1, 1, 1},
    {"mobilenet_v2", 32, 112, 112, 32, 3, 1, 1, 32, 1},
    {"mobilenet_v2", 32, 112, 112, 16, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 16, 112, 112, 96, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 96, 112, 112, 96, 3, 2, 1, 96, 1},
    {"mobilenet_v2", 96, 56, 56, 24, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 24, 56, 56, 144, 1, 1, 0, 1, 2},
    {"mobilenet_v2", 144, 56, 56, 144, 3, 1, 1, 144, 1},
    {"mobilenet_v2", 144, 56, 56, 24, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 144, 56, 56, 144, 3, 2, 1, 144, 1},
    {"mobilenet_v2", 144, 28, 28, 32, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 32, 28, 28, 192, 1, 1, 0, 1, 3},
    {"mobilenet_v2", 192, 28, 28, 192, 3, 1, 1, 192, 2},
    {"mobilenet_v2", 192, 28, 28, 32, 1, 1, 0, 1, 2},
    {"mobilenet_v2", 192, 28, 28, 192, 3, 2, 1, 192, 1},
    {"mobilenet_v2", 192, 14, 14, 64, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 64, 14, 14, 384, 1, 1, 0, 1, 4},
    {"mobilenet_v2", 384, 14, 14, 384, 3, 1, 1, 384, 4},
    {"mobilenet_v2", 384, 14, 14, 64, 1, 1, 0, 1, 3},
    {"mobilenet_v2", 384, 14, 14, 96, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 96, 14, 14, 576, 1, 1, 0, 1, 3},
    {"mobilenet_v2", 576, 14, 14, 576, 3, 1, 1, 576, 2},
    {"mobilenet_v2", 576, 14, 14, 96, 1, 1, 0, 1, 2},
    {"mobilenet_v2", 576, 14, 14, 576, 3, 2, 1, 576, 1},
    {"mobilenet_v2", 576, 7, 7, 160, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 160, 7, 7, 960, 1, 1, 0, 1, 3},
    {"mobilenet_v2", 960, 7, 7, 960, 3, 1, 1, 960, 3},
    {"mobilenet_v2", 960, 7, 7, 160, 1, 1, 0, 1, 2},
    {"mobilenet_v2", 960, 7, 7, 320, 1, 1, 0, 1, 1},
    {"mobilenet_v2", 320, 7, 7, 1280, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 3, 224, 224, 16, 3, 2, 1, 1, 1},
    {"mobilenet_v3_large", 16, 112, 112, 16, 3, 1, 1, 16, 1},
    {"mobilenet_v3_large", 16, 112, 112, 16, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 16, 112, 112, 64, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 64, 112, 112, 64, 3, 2, 1, 64, 1},
    {"mobilenet_v3_large", 64, 56, 56, 24, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 24, 56, 56, 72, 1, 1, 0, 1, 2},
    {"mobilenet_v3_large", 72, 56, 56, 72, 3, 1, 1, 72, 1},
    {"mobilenet_v3_large", 72, 56, 56, 24, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 72, 56, 56, 72, 5, 2, 2, 72, 1},
    {"mobilenet_v3_large", 72, 28, 28, 40, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 40, 28, 28, 120, 1, 1, 0, 1, 2},
    {"mobilenet_v3_large", 120, 28, 28, 120, 5, 1, 2, 120, 2},
    {"mobilenet_v3_large", 120, 28, 28, 40, 1, 1, 0, 1, 2},
    {"mobilenet_v3_large", 40, 28, 28, 240, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 240, 28, 28, 240, 3, 2, 1, 240, 1},
    {"mobilenet_v3_large", 240, 14, 14, 80, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 80, 14, 14, 200, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 200, 14, 14, 200, 3, 1, 1, 200, 1},
    {"mobilenet_v3_large", 200, 14, 14, 80, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 80, 14, 14, 184, 1, 1, 0, 1, 2},
    {"mobilenet_v3_large", 184, 14, 14, 184, 3, 1, 1, 184, 2},
    {"mobilenet_v3_large", 184, 14, 14, 80, 1, 1, 0, 1, 2},
    {"mobilenet_v3_large", 80, 14, 14, 480, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 480, 14, 14, 480, 3, 1, 1, 480, 1},
    {"mobilenet_v3_large", 480, 14, 14, 112, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 112, 14, 14, 672, 1, 1, 0, 1, 2},
    {"mobilenet_v3_large", 672, 14, 14, 672, 3, 1, 1, 672, 1},
    {"mobilenet_v3_large", 672, 14, 14, 112, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 672, 14, 14, 672, 5, 2, 2, 672, 1},
    {"mobilenet_v3_large", 672, 7, 7, 160, 1, 1, 0, 1, 1},
    {"mobilenet_v3_large", 160, 7, 7, 960, 1, 1, 0, 1, 3},
    {"mobilenet_v3_large", 960, 7, 7, 960, 5, 1, 2, 960, 2},
    {"mobilenet_v3_large", 960, 7, 7, 160, 1, 1, 0, 1, 2},
    {"efficientnet_b0", 3, 224, 224, 32, 3, 2, 1, 1, 1},
    {"efficientnet_b0", 32, 112, 112, 32, 3, 1, 1, 32, 1},
    {"efficientnet_b0", 32, 112, 112, 16, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 16, 112, 112, 96, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 96, 112, 112, 96, 3, 2, 1, 96, 1},
    {"efficientnet_b0", 96, 56, 56, 24, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 24, 56, 56, 144, 1, 1, 0, 1, 2},
    {"efficientnet_b0", 144, 56, 56, 144, 3, 1, 1, 144, 1},
    {"efficientnet_b0", 144, 56, 56, 24, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 144, 56, 56, 144, 5, 2, 2, 144, 1},
    {"efficientnet_b0", 144, 28, 28, 40, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 40, 28, 28, 240, 1, 1, 0, 1, 2},
    {"efficientnet_b0", 240, 28, 28, 240, 5, 1, 2, 240, 1},
    {"efficientnet_b0", 240, 28, 28, 40, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 240, 28, 28, 240, 3, 2, 1, 240, 1},
    {"efficientnet_b0", 240, 14, 14, 80, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 80, 14, 14, 480, 1, 1, 0, 1, 3},
    {"efficientnet_b0", 480, 14, 14, 480, 3, 1, 1, 480, 2},
    {"efficientnet_b0", 480, 14, 14, 80, 1, 1, 0, 1, 2},
    {"efficientnet_b0", 480, 14, 14, 480, 5, 1, 2, 480, 1},
    {"efficientnet_b0", 480, 14, 14, 112, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 112, 14, 14, 672, 1, 1, 0, 1, 3},
    {"efficientnet_b0", 672, 14, 14, 672, 5, 1, 2, 672, 2},
    {"efficientnet_b0", 672, 14, 14, 112, 1, 1, 0, 1, 2},
    {"efficientnet_b0", 672, 14, 14, 672, 5, 2, 2, 672, 1},
    {"efficientnet_b0", 672, 7, 7, 192, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 192, 7, 7, 1152, 1, 1, 0, 1, 4},
    {"efficientnet_b0", 1152, 7, 7, 1152, 5, 1, 2, 1152, 3},
    {"efficientnet_b0", 1152, 7, 7, 192, 1, 1, 0, 1, 3},
    {"efficientnet_b0", 1152, 7, 7, 1152, 3, 1, 1, 1152, 1},
    {"efficientnet_b0", 1152, 7, 7, 320, 1, 1, 0, 1, 1},
    {"efficientnet_b0", 320, 7, 7, 1280, 1, 1, 0, 1, 1},
    {"convnext_tiny", 3, 224, 224, 96, 4, 4, 0, 1, 1},
    {"convnext_tiny", 96, 56, 56, 96, 7, 1, 3, 96, 3},
    {"convnext_tiny", 96, 56, 56, 192, 2, 2, 0, 1, 1},
    {"convnext_tiny", 192, 28, 28, 192, 7, 1, 3, 192, 3},
    {"convnext_tiny", 192, 28, 28, 384, 2, 2, 0, 1, 1},
    {"convnext_tiny", 384, 14, 14, 384, 7, 1, 3, 384, 9},
    {"convnext_tiny", 384, 14, 14, 768, 2, 2, 0, 1, 1},
    {"convnext_tiny", 768, 7, 7, 768, 7, 1, 3, 768, 3},
    {"resnext50_32x4d", 3, 224, 224, 64, 7, 2, 3, 1, 1},
    {"resnext50_32x4d", 64, 56, 56, 128, 1, 1, 0, 1, 1},
    {"resnext50_32x4d", 128, 56, 56, 128, 3, 1, 1, 32, 3},
    {"resnext50_32x4d", 128, 56, 56, 256, 1, 1, 0, 1, 3},
    {"resnext50_32x4d", 64, 56, 56, 256, 1, 1, 0, 1, 1},
    {"resnext50_32x4d", 256, 56, 56, 128, 1, 1, 0, 1, 2},
    {"resnext50_32x4d", 256, 56, 56, 256, 1, 1, 0, 1, 1},
    {"resnext50_32x4d", 256, 56, 56, 256, 3, 2, 1, 32, 1},
    {"resnext50_32x4d", 256, 28, 28, 512, 1, 1, 0, 1, 4},
    {"resnext50_32x4d", 256, 56, 56, 512, 1, 2, 0, 1, 1},
    {"resnext50_32x4d", 512, 28, 28, 256, 1, 1, 0, 1, 3},
    {"resnext50_32x4d", 256, 28, 28, 256, 3, 1, 1, 32, 3},
    {"resnext50_32x4d", 512, 28, 28, 512, 1, 1, 0, 1, 1},
    {"resnext50_32x4d", 512, 28, 28, 512, 3, 2, 1, 32, 1},
    {"resnext50_32x4d", 512, 14, 14, 1024, 1, 1, 0, 1, 6},
    {"resnext50_32x4d", 512, 28, 28, 1024, 1, 2, 0, 1, 1},
    {"resnext50_32x4d", 1024, 14, 14, 512, 1, 1, 0, 1, 5},
    {"resnext50_32x4d", 512, 14, 14, 512, 3, 1, 1, 32, 5},
    {"resnext50_32x4d", 1024, 14, 14, 1024, 1, 1, 0, 1, 1},
    {"resnext50_32x4d", 1024, 14, 14, 1024, 3, 2, 1, 32, 1},
    {"resnext50_32x4d", 1024, 7, 7, 2048, 1, 1, 0, 1, 3},
    {"resnext50_32x4d", 1024, 14, 14, 2048, 1, 2, 0, 1, 1},
    {"resnext50_32x4d", 2048, 7, 7, 1024, 1, 1, 0, 1, 2},
    {"resnext50_32x4d", 1024, 7, 7, 1024, 3, 1, 1, 32, 2},
    {"densenet121", 3, 224, 224, 64, 7, 2, 3, 1, 1},
    {"densenet121", 64, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 128, 56, 56, 32, 3, 1, 1, 1, 6},
    {"densenet121", 96, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 128, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 160, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 192, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 224, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 256, 56, 56, 128, 1, 1, 0, 1, 1},
    {"densenet121", 128, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 128, 28, 28, 32, 3, 1, 1, 1, 12},
    {"densenet121", 160, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 192, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 224, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 256, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 288, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 320, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 352, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 384, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 416, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 448, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 480, 28, 28, 128, 1, 1, 0, 1, 1},
    {"densenet121", 512, 28, 28, 256, 1, 1, 0, 1, 1},
    {"densenet121", 256, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 128, 14, 14, 32, 3, 1, 1, 1, 24},
    {"densenet121", 288, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 320, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 352, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 384, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 416, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 448, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 480, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 512, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 544, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 576, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 608, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 640, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 672, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 704, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 736, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 768, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 800, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 832, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 864, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 896, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 928, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 960, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 992, 14, 14, 128, 1, 1, 0, 1, 1},
    {"densenet121", 1024, 14, 14, 512, 1, 1, 0, 1, 1},
    {"densenet121", 512, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 128, 7, 7, 32, 3, 1, 1, 1, 16},
    {"densenet121", 544, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 576, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 608, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 640, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 672, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 704, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 736, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 768, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 800, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 832, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 864, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 896, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 928, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 960, 7, 7, 128, 1, 1, 0, 1, 1},
    {"densenet121", 992, 7, 7, 128, 1, 1, 0, 1, 1},
    {"resnet18", 3, 224, 224, 64, 7, 2, 3, 1, 1},
    {"resnet18", 64, 56, 56, 64, 3, 1, 1, 1, 4},
    {"resnet18", 64, 56, 56, 128, 3, 2, 1, 1, 1},
    {"resnet18", 128, 28, 28, 128, 3, 1, 1, 1, 3},
    {"resnet18", 64, 56, 56, 128, 1, 2, 0, 1, 1},
    {"resnet18", 128, 28, 28, 256, 3, 2, 1, 1, 1},
    {"resnet18", 256, 14, 14, 256, 3, 1, 1, 1, 3},
    {"resnet18", 128, 28, 28, 256, 1, 2, 0, 1, 1},
    {"resnet18", 256, 14, 14, 512, 3, 2, 1, 1, 1},
    {"resnet18", 512, 7, 7, 512, 3, 1, 1, 1, 3},
    {"resnet18", 256, 14, 14, 512, 1, 2, 0, 1, 1},
    {"squeezenet1_1", 3, 224, 224, 64, 3, 2, 0, 1, 1},
    {"squeezenet1_1", 64, 55, 55, 16, 1, 1, 0, 1, 1},
    {"squeezenet1_1", 16, 55, 55, 64, 1, 1, 0, 1, 2},
    {"squeezenet1_1", 16, 55, 55, 64, 3, 1, 1, 1, 2},
    {"squeezenet1_1", 128, 55, 55, 16, 1, 1, 0, 1, 1},
    /* RegNetX-800MF's first stages, on maps too large to go channels last */
    {"regnet_x_800mf", 32, 112, 112, 64, 1, 1, 0, 1, 1},
    {"regnet_x_800mf", 64, 112, 112, 64, 3, 2, 1, 4, 1},
    {"regnet_x_800mf", 32, 112, 112, 64, 1, 2, 0, 1, 1},
    {"regnet_x_800mf", 64, 56, 56, 128, 1, 1, 0, 1, 1},
    {"regnet_x_800mf", 128, 56, 56, 128, 3, 2, 1, 8, 1},
    /* the first layers of the held-out models (RGB in, large strides) */
    {"stems", 3, 224, 224, 64, 11, 4, 2, 1, 1}, /* AlexNet */
    {"stems", 3, 224, 224, 64, 3, 2, 0, 1, 1},  /* SqueezeNet 1.1 */
    {"stems", 3, 224, 224, 32, 3, 2, 1, 1, 1},  /* MNASNet, MobileNetV2, EfficientNet */
    {"stems", 3, 224, 224, 64, 7, 2, 3, 1, 1},  /* ResNet, GoogLeNet */
    {"stems", 3, 224, 224, 96, 4, 4, 0, 1, 1},  /* ConvNeXt, Swin */
    {"stems", 3, 224, 224, 768, 16, 16, 0, 1, 1}, /* ViT-B/16 */
    {"stems", 3, 224, 224, 64, 7, 3, 3, 1, 1},  /* stride 3 (no model here has one) */
    {"stems", 3, 224, 224, 32, 3, 3, 1, 1, 1},
};
enum { N_LAYERS = sizeof layers / sizeof layers[0] };

static int64_t out_dim(const layer *l, int64_t in) { return (in + 2 * l->pad - l->k) / l->stride + 1; }

static const char *kind_of(const layer *l) {
    return l->group == l->c && l->group > 1 ? "depthwise" : l->group > 1 ? "grouped" : "dense";
}

/* A float32 buffer of shape dims[0..rank) on `dev`, values in [-1, 1). */
static tgc_value tensor(tgc_device *dev, int rank, const int64_t *dims, unsigned seed) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = rank};
    memcpy(v.dims, dims, (size_t)rank * sizeof *dims);
    if (tgc_buffer_alloc(dev, tgc_value_nbytes(&v), &v.buf) != TGC_OK) {
        fprintf(stderr, "bench_conv_families: out of memory\n");
        exit(1);
    }
    bench_fill_uniform(tgc_buffer_host_ptr(v.buf), tgc_value_numel(&v), seed);
    return v;
}

/* ---- tgc's old depthwise kernel (kernels_conv.c before conv_direct.c) ------------ */

static void old_valid_range(int64_t off, int64_t s, int64_t in, int64_t l0, int64_t l1, int64_t *lo, int64_t *hi) {
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s, h = in - off <= 0 ? 0 : (in - off + s - 1) / s;
    if (l < l0) l = l0;
    if (l > l1) l = l1;
    if (h > l1) h = l1;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* The old loop, verbatim but for the names: y holds the bias; one pass over
 * each output plane per tap. */
static void old_depthwise(const float *restrict x, const float *restrict wt, float *restrict y, int64_t batch,
                          int64_t channels, int64_t m_count, const tgc_window *w) {
    bool two = w->n == 2;
    int64_t h = two ? w->in[0] : 1, wd = w->in[two], kh = two ? w->kernel[0] : 1, kw = w->kernel[two];
    int64_t sh = two ? w->strides[0] : 1, sw = w->strides[two], dh = two ? w->dilations[0] : 1;
    int64_t dw = w->dilations[two], ph = two ? w->pads[0] : 0, pw = w->pads[two ? 1 : 0];
    int64_t oh_count = two ? w->out[0] : 1, ow_count = w->out[two], per_group = m_count / channels;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t m = 0; m < m_count; m++) {
            const float *xp = x + (n * channels + m / per_group) * h * wd;
            const float *wp = wt + m * kh * kw;
            float *yp = y + (n * m_count + m) * oh_count * ow_count;
            for (int64_t i = 0; i < kh; i++) {
                for (int64_t j = 0; j < kw; j++) {
                    float v = wp[i * kw + j];
                    int64_t off = j * dw - pw, lo, hi;
                    old_valid_range(off, sw, wd, 0, ow_count, &lo, &hi);
                    for (int64_t oh = 0; oh < oh_count; oh++) {
                        int64_t ih = oh * sh - ph + i * dh;
                        if (ih < 0 || ih >= h) continue;
                        const float *restrict row = xp + ih * wd;
                        float *restrict out = yp + oh * ow_count;
                        if (sw == 1)
                            for (int64_t ow = lo; ow < hi; ow++) out[ow] += v * row[ow + off];
                        else
                            for (int64_t ow = lo; ow < hi; ow++) out[ow] += v * row[ow * sw + off];
                    }
                }
            }
        }
    }
}

/* ---- One layer's runs ------------------------------------------------------------ */

typedef struct conv_case {
    tgc_value in[3], out[1];
    int64_t pads[4], strides[2];
    tgc_attr attrs[3];
    tgc_node node;
    char err[256];
    tgc_kernel_ctx ctx;
    tgc_kernel_cache cache; /* W and B constants, as in a session: `new` keeps its prepared weights */
    tgc_conv_geometry g;
} conv_case;

static void case_init(conv_case *cc, tgc_device *dev, const layer *l, tgc_thread_pool *pool) {
    memset(cc, 0, sizeof *cc);
    int64_t xd[4] = {1, l->c, l->h, l->w}, wd[4] = {l->m, l->c / l->group, l->k, l->k}, bd[1] = {l->m};
    int64_t yd[4] = {1, l->m, out_dim(l, l->h), out_dim(l, l->w)};
    cc->in[0] = tensor(dev, 4, xd, 1);
    cc->in[1] = tensor(dev, 4, wd, 5);
    cc->in[2] = tensor(dev, 1, bd, 6);
    cc->out[0] = tensor(dev, 4, yd, 7);
    for (int i = 0; i < 4; i++) cc->pads[i] = l->pad;
    cc->strides[0] = cc->strides[1] = l->stride;
    cc->attrs[0] = (tgc_attr){.name = (char *)"pads", .type = TGC_ATTR_INTS, .ints = cc->pads, .n = 4};
    cc->attrs[1] = (tgc_attr){.name = (char *)"group", .type = TGC_ATTR_INT, .i = l->group};
    cc->attrs[2] = (tgc_attr){.name = (char *)"strides", .type = TGC_ATTR_INTS, .ints = cc->strides, .n = 2};
    cc->node = (tgc_node){.name = (char *)"conv", .kind = TGC_NODE_OP, .op_name = (char *)"Conv",
                          .attrs = cc->attrs, .n_attrs = 3, .n_outputs = 1};
    cc->ctx = (tgc_kernel_ctx){.node = &cc->node, .device = dev, .inputs = cc->in, .n_inputs = 3,
                               .outputs = cc->out, .n_outputs = 1, .error = cc->err,
                               .error_size = sizeof cc->err, .pool = pool, .cache = &cc->cache,
                               .const_inputs = 1u << 1 | 1u << 2};
    tgc_kernel_cache_init(&cc->cache);
    if (tgc_window_read_conv(&cc->ctx, &cc->g) != TGC_OK) {
        fprintf(stderr, "bench_conv_families: %s\n", cc->err);
        exit(1);
    }
}

static void case_free(conv_case *cc) {
    tgc_kernel_cache_clear(&cc->cache);
    for (int i = 0; i < 3; i++) tgc_buffer_release(cc->in[i].buf);
    tgc_buffer_release(cc->out[0].buf);
}

static float *y_of(conv_case *cc) { return tgc_buffer_host_ptr(cc->out[0].buf); }

/* tgc's old path for the layer. */
static void run_old(conv_case *cc) {
    const tgc_conv_geometry *g = &cc->g;
    const float *x = tgc_buffer_host_ptr(cc->in[0].buf), *w = tgc_buffer_host_ptr(cc->in[1].buf);
    const float *b = tgc_buffer_host_ptr(cc->in[2].buf);
    float *y = y_of(cc);
    if (g->group == g->channels && g->group > 1) {
        for (int64_t m = 0; m < g->m_count; m++)
            for (int64_t i = 0; i < g->out_size; i++) y[m * g->out_size + i] = b[m];
        old_depthwise(x, w, y, g->batch, g->channels, g->m_count, &g->w);
    } else if (tgc_cpu_conv_winograd_applies(g)) {
        tgc_cpu_conv_winograd(&cc->ctx, g, x, w, b, y);
    } else if (g->pointwise) { /* kernels_conv.c's pointwise path: one GEMM a group on X as it lies */
        int64_t mg = g->m_count / g->group;
        for (int64_t gi = 0; gi < g->group; gi++)
            tgc_cpu_sgemm_fused(cc->ctx.pool, false, false, mg, g->out_size, g->cg, 1.0f, w + gi * mg * g->cg, g->cg,
                                x + gi * g->cg * g->in_size, g->in_size, 1.0f, y + gi * mg * g->out_size,
                                g->out_size, b + gi * mg, 1, 0, NULL);
    } else {
        tgc_cpu_conv_im2col(&cc->ctx, g, x, w, b, y);
    }
}

/* tgc's direct method (conv_direct.c) whatever the kernel would pick. */
static void run_direct(conv_case *cc) {
    const float *x = tgc_buffer_host_ptr(cc->in[0].buf), *w = tgc_buffer_host_ptr(cc->in[1].buf);
    const float *b = tgc_buffer_host_ptr(cc->in[2].buf);
    if (tgc_cpu_conv_direct(&cc->ctx, &cc->g, x, w, b, y_of(cc)) != TGC_OK) {
        fprintf(stderr, "bench_conv_families: %s\n", cc->err);
        exit(1);
    }
}

static void run_new(conv_case *cc) {
    if (tgc_cpu_conv_f32(&cc->ctx) != TGC_OK) {
        fprintf(stderr, "bench_conv_families: %s\n", cc->err);
        exit(1);
    }
}

/* ---- oneDNN -------------------------------------------------------------------------- */

#ifdef TGC_BENCH_DNNL
/* One oneDNN convolution of the layer: its primitive, its memories (the
 * weights reordered into the primitive's format; with `blocked`, src and
 * dst as well), and its implementation's name. */
typedef struct dnnl_case {
    dnnl_primitive_t conv;
    dnnl_memory_t src, wei, bias, dst, dst_user;
    dnnl_primitive_t dst_back; /* blocked: dst -> NCHW, for the check (not timed) */
    const char *impl;
    void *bufs[3];
} dnnl_case;

static void dnnl_init(dnnl_case *d, conv_case *cc, const layer *l, bool blocked) {
    memset(d, 0, sizeof *d);
    int64_t oh = out_dim(l, l->h), ow = out_dim(l, l->w), g = l->group;
    dnnl_dims_t sd = {1, l->c, l->h, l->w}, dd = {1, l->m, oh, ow}, bd = {l->m};
    dnnl_dims_t wd5 = {g, l->m / g, l->c / g, l->k, l->k}, wd4 = {l->m, l->c, l->k, l->k};
    dnnl_dims_t st = {l->stride, l->stride}, dil = {0, 0}, pad = {l->pad, l->pad};
    dnnl_memory_desc_t src_u, dst_u, wei_u, bias_md, src_any, dst_any, wei_any;
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&src_u, 4, sd, dnnl_f32, dnnl_nchw));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dst_u, 4, dd, dnnl_f32, dnnl_nchw));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_x));
    if (g > 1) {
        BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wei_u, 5, wd5, dnnl_f32, dnnl_goihw));
        BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wei_any, 5, wd5, dnnl_f32, dnnl_format_tag_any));
    } else {
        BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wei_u, 4, wd4, dnnl_f32, dnnl_oihw));
        BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wei_any, 4, wd4, dnnl_f32, dnnl_format_tag_any));
    }
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_f32, dnnl_format_tag_any));
    BENCH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_f32, dnnl_format_tag_any));
    dnnl_convolution_desc_t cd;
    BENCH_DNNL_CHECK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                          blocked ? &src_any : &src_u, &wei_any, &bias_md,
                                                          blocked ? &dst_any : &dst_u, st, dil, pad, pad));
    dnnl_primitive_desc_t pd;
    BENCH_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, bench_dnnl_eng, NULL));
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    d->impl = impl != NULL ? strdup(impl) : "?";
    const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *wei_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    d->wei = bench_dnnl_reordered(&wei_u, tgc_buffer_host_ptr(cc->in[1].buf), wei_md, &d->bufs[0]);
    BENCH_DNNL_CHECK(dnnl_memory_create(&d->bias, &bias_md, bench_dnnl_eng, tgc_buffer_host_ptr(cc->in[2].buf)));
    BENCH_DNNL_CHECK(dnnl_memory_create(&d->dst_user, &dst_u, bench_dnnl_eng, y_of(cc)));
    if (blocked) {
        d->src = bench_dnnl_reordered(&src_u, tgc_buffer_host_ptr(cc->in[0].buf), src_md, &d->bufs[1]);
        d->bufs[2] = aligned_alloc(64, (dnnl_memory_desc_get_size(dst_md) + 63) / 64 * 64);
        BENCH_DNNL_CHECK(dnnl_memory_create(&d->dst, dst_md, bench_dnnl_eng, d->bufs[2]));
        dnnl_primitive_desc_t rpd;
        BENCH_DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, dst_md, bench_dnnl_eng, &dst_u, bench_dnnl_eng, NULL));
        BENCH_DNNL_CHECK(dnnl_primitive_create(&d->dst_back, rpd));
        dnnl_primitive_desc_destroy(rpd);
    } else {
        BENCH_DNNL_CHECK(dnnl_memory_create(&d->src, &src_u, bench_dnnl_eng, tgc_buffer_host_ptr(cc->in[0].buf)));
        BENCH_DNNL_CHECK(dnnl_memory_create(&d->dst, &dst_u, bench_dnnl_eng, y_of(cc)));
    }
    BENCH_DNNL_CHECK(dnnl_primitive_create(&d->conv, pd));
    dnnl_primitive_desc_destroy(pd);
}

static void dnnl_run(dnnl_case *d) { bench_dnnl_conv_run(d->conv, d->src, d->wei, d->bias, d->dst); }

/* Brings a blocked dst back to y (NCHW), for the check. */
static void dnnl_to_user(dnnl_case *d) {
    if (d->dst_back == NULL) return;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, d->dst}, {DNNL_ARG_TO, d->dst_user}};
    BENCH_DNNL_CHECK(dnnl_primitive_execute(d->dst_back, bench_dnnl_str, 2, args));
    BENCH_DNNL_CHECK(dnnl_stream_wait(bench_dnnl_str));
}

static void dnnl_free(dnnl_case *d) {
    dnnl_primitive_destroy(d->conv);
    if (d->dst_back != NULL) dnnl_primitive_destroy(d->dst_back);
    dnnl_memory_destroy(d->src);
    dnnl_memory_destroy(d->wei);
    dnnl_memory_destroy(d->bias);
    dnnl_memory_destroy(d->dst);
    dnnl_memory_destroy(d->dst_user);
    for (int i = 0; i < 3; i++) free(d->bufs[i]);
    free((void *)d->impl);
}
#endif

/* ---- The table ----------------------------------------------------------------------- */

enum { V_OLD, V_NEW, V_DIRECT, V_DNNL, V_DNNL_BLOCKED, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {"old", "new", "direct", "dnnl", "dnnl*"};

static bool in_list(const char *list, const char *name) {
    if (list == NULL) return true;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

/* max |a - ref| over n, relative to max |ref|. */
static double rel_diff(const float *a, const float *ref, int64_t n) {
    double worst = 0.0, top = 1e-30;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - ref[i]);
        if (d > worst) worst = d;
        if (fabs(ref[i]) > top) top = fabs(ref[i]);
    }
    return worst / top;
}

enum { N_KINDS = 3 };
static const char *const kind_names[N_KINDS] = {"depthwise", "grouped", "dense"};

static int kind_index(const layer *l) {
    for (int k = 0; k < N_KINDS; k++)
        if (strcmp(kind_of(l), kind_names[k]) == 0) return k;
    return N_KINDS - 1;
}

/* A model's sums of median x occurrences, each kind of layer and all. */
static void print_totals(const char *model, double totals[N_KINDS][N_VARIANTS]) {
    for (int k = 0; k <= N_KINDS; k++) {
        double sum[N_VARIANTS] = {0};
        for (int v = 0; v < N_VARIANTS; v++)
            for (int q = 0; q < N_KINDS; q++)
                if (k == N_KINDS || q == k) sum[v] += totals[q][v];
        if (sum[V_OLD] + sum[V_NEW] + sum[V_DIRECT] + sum[V_DNNL] == 0.0) continue;
        printf("%-18s %-9s total ms:", model, k < N_KINDS ? kind_names[k] : "all");
        for (int v = 0; v < N_VARIANTS; v++) printf("  %s %.3f", variant_names[v], sum[v]);
        printf("\n");
    }
}

/* A median in ms, or "-" for a variant not run. */
static void print_ms(double ms) {
    if (ms > 0.0) printf(" %8.3f", ms);
    else printf(" %8s", "-");
}

static void print_ratio(double a, double b) {
    if (a > 0.0 && b > 0.0) printf(" %7.2f", a / b);
    else printf(" %7s", "-");
}

int main(int argc, char **argv) {
    int reps = 11, cold_mb = 0;
    const char *models = NULL, *kind = "all", *thread_list = "1,2", *variant_list = NULL, *hw_list = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--models") == 0) models = argv[i + 1];
        else if (strcmp(argv[i], "--kind") == 0) kind = argv[i + 1];
        else if (strcmp(argv[i], "--threads") == 0) thread_list = argv[i + 1];
        else if (strcmp(argv[i], "--variants") == 0) variant_list = argv[i + 1];
        else if (strcmp(argv[i], "--hw") == 0) hw_list = argv[i + 1];
        else if (strcmp(argv[i], "--cold") == 0) cold_mb = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_conv_families [--reps N] [--threads 1,2] [--models LIST] [--kind K] "
                            "[--variants LIST] [--hw LIST] [--cold MB]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000) reps = 11;
#ifdef TGC_BENCH_DNNL
    bench_dnnl_start(argv);
#endif
    tgc_device *dev = tgc_cpu_device_create(0);
    double *times = malloc((size_t)reps * N_VARIANTS * sizeof *times);
    size_t cold_bytes = cold_mb > 0 && cold_mb <= 4096 ? (size_t)cold_mb << 20 : 0;
    unsigned char *cold = cold_bytes > 0 ? malloc(cold_bytes) : NULL;
    if (dev == NULL || times == NULL) return 1;
    openblas_set_num_threads(1);
    bool have_dnnl = false;
#ifdef TGC_BENCH_DNNL
    have_dnnl = true;
#endif
    printf("Conv float32, batch 1, median ms of %d interleaved runs; old: tgc before the direct path, new: now;\n"
           "dnnl: oneDNN on NCHW, dnnl*: oneDNN in its own layout (reorders not timed)%s\n",
           reps, have_dnnl ? "" : " (not built: no libdnnl-dev)");
    for (const char *t = thread_list; *t != '\0';) {
        int threads = atoi(t);
        tgc_thread_pool *pool = NULL;
        if (threads > 1 && tgc_thread_pool_create(threads - 1, &pool) != TGC_OK) return 1;
#ifdef TGC_BENCH_DNNL
        omp_set_num_threads(threads);
#endif
        printf("\n== %d thread%s ==\n%-18s %-9s %5s %4s %4s %3s %2s %4s %3s %8s %8s %8s %8s %8s %7s %7s  %s\n",
               threads, threads > 1 ? "s" : "", "model", "kind", "C", "HW", "M", "k", "s", "g", "x", "old", "new",
               "direct", "dnnl", "dnnl*", "old/new", "dnnl/new", "oneDNN impl (nchw | blocked)");
        const char *model = NULL;
        double totals[N_KINDS][N_VARIANTS] = {{0}};
        for (int li = 0; li <= N_LAYERS; li++) {
            const layer *l = li < N_LAYERS ? &layers[li] : NULL;
            if (model != NULL && (l == NULL || strcmp(l->model, model) != 0)) {
                print_totals(model, totals);
                memset(totals, 0, sizeof totals);
            }
            model = l != NULL ? l->model : NULL;
            char hw[24];
            snprintf(hw, sizeof hw, "%lld", (long long)(l != NULL ? l->h : 0));
            if (l == NULL || !in_list(models, l->model) || !in_list(hw_list, hw) ||
                !(strcmp(kind, "all") == 0 || strcmp(kind, kind_of(l)) == 0))
                continue;
            conv_case cc;
            case_init(&cc, dev, l, pool);
            int64_t ny = tgc_value_numel(&cc.out[0]);
            float *ref = malloc((size_t)ny * sizeof *ref), *got = malloc((size_t)ny * sizeof *got);
            if (ref == NULL || got == NULL) return 1;
            run_new(&cc);
            memcpy(ref, y_of(&cc), (size_t)ny * sizeof *ref);
            double diffs[N_VARIANTS] = {0}, med[N_VARIANTS] = {0};
            run_old(&cc);
            diffs[V_OLD] = rel_diff(y_of(&cc), ref, ny);
            run_direct(&cc);
            diffs[V_DIRECT] = rel_diff(y_of(&cc), ref, ny);
            const char *impl[2] = {"-", "-"};
            int variants = 3;
#ifdef TGC_BENCH_DNNL
            dnnl_case dn[2];
            for (int b = 0; b < 2; b++) {
                dnnl_init(&dn[b], &cc, l, b == 1);
                dnnl_run(&dn[b]);
                dnnl_to_user(&dn[b]);
                diffs[V_DNNL + b] = rel_diff(y_of(&cc), ref, ny);
                impl[b] = dn[b].impl;
            }
            variants = N_VARIANTS;
#endif
            for (int r = 0; r < reps; r++)
                for (int v = 0; v < variants; v++) {
                    if (!in_list(variant_list, variant_names[v])) continue;
                    if (cold != NULL) memset(cold, r + v, cold_bytes);
                    double t0 = bench_now_s();
                    if (v == V_OLD) run_old(&cc);
                    else if (v == V_NEW) run_new(&cc);
                    else if (v == V_DIRECT) run_direct(&cc);
#ifdef TGC_BENCH_DNNL
                    else dnnl_run(&dn[v - V_DNNL]);
#endif
                    times[v * reps + r] = bench_now_s() - t0;
                }
            for (int v = 0; v < variants; v++) {
                if (!in_list(variant_list, variant_names[v])) continue;
                med[v] = bench_median(times + v * reps, reps) * 1e3;
                totals[kind_index(l)][v] += med[v] * (double)l->count;
            }
            printf("%-18s %-9s %5lld %4lld %4lld %3lld %2lld %4lld %3lld", l->model, kind_of(l), (long long)l->c,
                   (long long)l->h, (long long)l->m, (long long)l->k, (long long)l->stride, (long long)l->group,
                   (long long)l->count);
            for (int v = 0; v < N_VARIANTS; v++) print_ms(med[v]);
            print_ratio(med[V_OLD], med[V_NEW]);
            print_ratio(med[V_DNNL], med[V_NEW]);
            printf("  %s | %s", impl[0], impl[1]);
            for (int v = 0; v < variants; v++)
                if (diffs[v] > 1e-3) printf("  [%s differs: %.2g]", variant_names[v], diffs[v]);
            printf("\n");
            fflush(stdout);
#ifdef TGC_BENCH_DNNL
            dnnl_free(&dn[0]);
            dnnl_free(&dn[1]);
#endif
            (void)got;
            free(ref);
            free(got);
            case_free(&cc);
        }
        tgc_thread_pool_free(pool);
        while (*t != '\0' && *t != ',') t++;
        if (*t == ',') t++;
    }
#ifdef TGC_BENCH_DNNL
    bench_dnnl_stop();
#endif
    free(times);
    free(cold);
    return 0;
}
