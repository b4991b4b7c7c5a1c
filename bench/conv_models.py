#!/usr/bin/python3
"""The convolutional networks of issue 15 (MobileNetV2, MobileNetV3-Large,
EfficientNet-B0, ConvNeXt-T, ResNeXt-50 32x4d; DenseNet-121 and ResNet-18
added for issue 34), from torchvision 0.14 with random weights (fixed
seed, BatchNorm statistics randomised too), eval mode, batch 1 at 224x224.

  conv_models.py export OUTDIR [NAME...]   OUTDIR/NAME.onnx (opset 17, static
                                           shapes), NAME.input.npy, NAME.torch.npy
  conv_models.py shapes [NAME...]          every distinct Conv of each model, once,
                                           with how often it occurs: the rows of
                                           bench/bench_conv_families.c's table

Run with /usr/bin/python3 (Debian's python3-torch and python3-torchvision).
Then, for instance:
  build/tgc run OUTDIR/mobilenet_v2.onnx --devices cpu --threads cpu=2 \\
      --input input=OUTDIR/mobilenet_v2.input.npy --repeat 30 \\
      --compare output=OUTDIR/mobilenet_v2.torch.npy
"""
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torchvision.models as tvm

warnings.filterwarnings("ignore")
SEED = 1234
MODELS = {
    "mobilenet_v2": tvm.mobilenet_v2,
    "mobilenet_v3_large": tvm.mobilenet_v3_large,
    "efficientnet_b0": tvm.efficientnet_b0,
    "convnext_tiny": tvm.convnext_tiny,
    "resnext50_32x4d": tvm.resnext50_32x4d,
    "densenet121": tvm.densenet121,
    "resnet18": tvm.resnet18,
}


def build(name):
    torch.manual_seed(SEED)
    m = MODELS[name]().eval()
    g = torch.Generator().manual_seed(SEED + 1)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(SEED + 2))
    return m, x


def export(outdir, names):
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        m, x = build(name)
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(outdir, name + ".input.npy"), x.numpy())
        np.save(os.path.join(outdir, name + ".torch.npy"), y.numpy())
        torch.onnx.export(m, (x,), os.path.join(outdir, name + ".onnx"), opset_version=17,
                          input_names=["input"], output_names=["output"], do_constant_folding=True)
        print("exported", name, flush=True)


def shapes(names):
    for name in names:
        m, x = build(name)
        rows = {}

        def hook(mod, inp, out):
            key = (tuple(inp[0].shape[1:]), mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.groups)
            rows[key] = rows.get(key, 0) + 1

        for mod in m.modules():
            if isinstance(mod, nn.Conv2d):
                mod.register_forward_hook(hook)
        with torch.no_grad():
            m(x)
        # {model, C, H, W, M, k, stride, pad, group, count}
        for ((c, h, w), mo, k, s, p, g), n in rows.items():
            if h == 1 and w == 1:
                continue  # squeeze-and-excitation's 1x1 on one pixel: a GEMV, not a convolution
            print('    {"%s", %d, %d, %d, %d, %d, %d, %d, %d, %d},' % (name, c, h, w, mo, k[0], s[0], p[0], g, n))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3:] or list(MODELS))
    elif len(sys.argv) >= 2 and sys.argv[1] == "shapes":
        shapes(sys.argv[2:] or list(MODELS))
    else:
        sys.exit(__doc__)
