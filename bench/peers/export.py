#!/usr/bin/python3
"""Peer benchmark, PyTorch side (issue 9, item 3).

  export.py export OUTDIR            build every model (fixed seed, eval mode),
                                     write OUTDIR/NAME.onnx (opset 17),
                                     OUTDIR/NAME.input.npy, OUTDIR/NAME.torch.npy
                                     and OUTDIR/models.json (input/output names, repeats)
  export.py bench OUTDIR NAME N      rebuild model NAME from the same seed in a fresh
                                     process, check it reproduces NAME.torch.npy, time
                                     N runs with torch.set_num_threads(2) and print one
                                     JSON line: median ms, peak RSS, max diff

Run with /usr/bin/python3 (Debian's python3-torch; python3-torchvision if
installed, else the plain-torch ResNets below, which have the same layout).
The bench runs in its own process so its peak RSS is the model's alone, not the
exporter's.
"""
import json
import os
import resource
import sys
import time

# GNU OpenMP's default active spin-wait makes PyTorch 10-20x slower when the
# 2 cores are shared with other work (measured here: ResNet-18 780-1400 ms
# spinning vs ~65 ms passive, load average ~8). Wait passively unless told
# otherwise; must be set before libgomp loads (with torch).
if len(sys.argv) > 1 and sys.argv[1] == "bench":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
import torch.nn as nn

SEED = 1234
THREADS = 2

# name -> (builder, input shape, repeats)
MODELS = {}


def model(name, shape, repeats):
    def deco(fn):
        MODELS[name] = (fn, shape, repeats)
        return fn
    return deco


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


model("mlp_b1", (1, 784), 200)(mlp)
model("mlp_b64", (64, 784), 100)(mlp)


# Plain-torch ResNets (torchvision layout) for when python3-torchvision is absent.
class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, c, stride=1, down=None):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.downsample = down

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + idt)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, c, stride=1, down=None):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.conv3 = nn.Conv2d(c, c * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(c * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = down

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + idt)


class ResNet(nn.Module):
    def __init__(self, block, layers, classes=1000):
        super().__init__()
        self.cin = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(block, 64, layers[0], 1)
        self.layer2 = self._layer(block, 128, layers[1], 2)
        self.layer3 = self._layer(block, 256, layers[2], 2)
        self.layer4 = self._layer(block, 512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512 * block.expansion, classes)

    def _layer(self, block, c, n, stride):
        down = None
        if stride != 1 or self.cin != c * block.expansion:
            down = nn.Sequential(nn.Conv2d(self.cin, c * block.expansion, 1, stride, bias=False),
                                 nn.BatchNorm2d(c * block.expansion))
        blocks = [block(self.cin, c, stride, down)]
        self.cin = c * block.expansion
        blocks += [block(self.cin, c) for _ in range(1, n)]
        return nn.Sequential(*blocks)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _randomize_bn(m):
    # Random weights everywhere: give BatchNorm non-trivial running stats too,
    # so the folded/unfolded BN path is actually exercised.
    g = torch.Generator().manual_seed(SEED + 1)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            mod.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            mod.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return m


def resnet(depth):
    try:
        import torchvision.models as tvm
        m = tvm.resnet18() if depth == 18 else tvm.resnet50()
    except ImportError:
        m = ResNet(BasicBlock, [2, 2, 2, 2]) if depth == 18 else ResNet(Bottleneck, [3, 4, 6, 3])
    return _randomize_bn(m)


model("resnet18", (1, 3, 224, 224), 20)(lambda: resnet(18))
model("resnet50", (1, 3, 224, 224), 10)(lambda: resnet(50))


@model("transformer", (1, 128, 256), 50)
def transformer():
    return nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                      dropout=0.0, batch_first=True)


def build(name):
    fn, shape, _ = MODELS[name]
    torch.manual_seed(SEED)
    m = fn().eval()
    g = torch.Generator().manual_seed(SEED + 2)
    x = torch.randn(*shape, generator=g)
    return m, x


def export(outdir):
    os.makedirs(outdir, exist_ok=True)
    meta = {}
    try:
        import torchvision  # noqa: F401
        resnet_src = "torchvision " + torchvision.__version__
    except ImportError:
        resnet_src = "plain torch (bench/peers/export.py)"
    for name in MODELS:
        m, x = build(name)
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(outdir, name + ".input.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(outdir, name + ".torch.npy"), y.numpy().astype(np.float32))
        path = os.path.join(outdir, name + ".onnx")
        # Export with grad enabled so TransformerEncoderLayer takes its
        # decomposed path (the fused fast path has no ONNX symbolic).
        torch.onnx.export(m, (x,), path, opset_version=17,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
        meta[name] = {"onnx": path, "input": "input", "output": "output",
                      "shape": list(x.shape), "out_shape": list(y.shape),
                      "repeats": MODELS[name][2]}
        print("exported %-12s %s -> %s" % (name, tuple(x.shape), tuple(y.shape)), flush=True)
    meta["_info"] = {"torch": torch.__version__, "resnet": resnet_src, "seed": SEED,
                     "opset": 17}
    with open(os.path.join(outdir, "models.json"), "w") as f:
        json.dump(meta, f, indent=1)


def bench(outdir, name, n):
    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(1)
    m, _ = build(name)
    x = torch.from_numpy(np.load(os.path.join(outdir, name + ".input.npy")))
    ref = np.load(os.path.join(outdir, name + ".torch.npy"))
    times = []
    with torch.inference_mode():
        y = m(x)  # warm-up
        for _ in range(n):
            t0 = time.perf_counter()
            y = m(x)
            times.append((time.perf_counter() - t0) * 1e3)
    diff = float(np.max(np.abs(y.numpy() - ref)))
    np.save(os.path.join(outdir, name + ".torch_bench.npy"), y.numpy())
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"model": name, "median_ms": float(np.median(times)), "runs": n,
                      "peak_rss_mib": rss_kib / 1024.0, "self_diff": diff,
                      "threads": torch.get_num_threads(),
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "bench":
        bench(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
