#!/usr/bin/python3
"""Peer benchmark, PyTorch side (issue 9, item 3; issue 15, item 1).

  export.py export OUTDIR [NAME...]  build the models (all but the held-out ones, or the
                                     NAMEs, `held-out` standing for those; fixed seed,
                                     eval mode), write OUTDIR/NAME.onnx (opset 17),
                                     OUTDIR/NAME.INPUT.npy per input, OUTDIR/NAME.torch.npy
                                     and update OUTDIR/models.json (input files, repeats)
  export.py bench OUTDIR NAME N T    rebuild model NAME from the same seed in a fresh
                                     process, time N runs with torch.set_num_threads(T)
                                     and print one JSON line: median and min ms, CPU ms
                                     per run, peak RSS, max diff from NAME.torch.npy

Run with /usr/bin/python3 (Debian's python3-torch and python3-torchvision).
The GPT, BERT and LSTM models are scripts/models_check.py's classes, at
benchmark sizes. The bench runs in its own process so its peak RSS is the
model's alone, not the exporter's.
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
    # torch.set_num_threads sets OpenMP's threads, not those of the OpenBLAS
    # (pthreads) that Debian's torch calls for matrix products: without this
    # a 1-thread PyTorch ran its GEMMs on every core (CPU time per run 4x
    # its wall time on the batch-64 MLP)
    if len(sys.argv) == 6:
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = sys.argv[5]

import numpy as np
import torch
import torch.nn as nn
import torchvision
import torchvision.models as tvm
import torchvision.models.segmentation as tvs

# The sequence models (and their docstrings) live in scripts/models_check.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from models_check import BERT, GPT, Recurrent, calibrate_batchnorm  # noqa: E402

SEED = 1234

# name -> (builder, inputs(generator) -> tuple of tensors, input names, repeats).
# Repeats: runs per round at 2 threads, about 1-2 s of tgc's time each.
MODELS = {}


def model(name, inputs, repeats, names=("input",)):
    def deco(fn):
        MODELS[name] = (fn, inputs, tuple(names), repeats)
        return fn
    return deco


def randn(*shape):
    """One float32 input of SHAPE, standard normal."""
    return lambda g: (torch.randn(*shape, generator=g),)


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


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


class OneOutput(nn.Module):
    """The one tensor the benchmark compares: output KEY of a model that
    returns several (a tuple index, or a dict key for torchvision's
    segmentation models)."""

    def __init__(self, m, key):
        super().__init__()
        self.m, self.key = m, key

    def forward(self, *xs):
        return self.m(*xs)[self.key]


def vision(builder):
    """A torchvision model with random weights (torchvision's own
    initialisation under the seed) and randomised BatchNorm statistics."""
    return lambda: _randomize_bn(builder())


model("mlp_b1", randn(1, 784), 200)(mlp)
model("mlp_b64", randn(64, 784), 100)(mlp)
model("resnet18", randn(1, 3, 224, 224), 20)(vision(tvm.resnet18))
model("resnet50", randn(1, 3, 224, 224), 10)(vision(tvm.resnet50))


@model("transformer", randn(1, 128, 256), 50)
def transformer():
    return nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                      dropout=0.0, batch_first=True)


# The CNN families users run on a cpu (torchvision 0.14, 1000 classes, their
# reference input sizes).
model("mobilenet_v2", randn(1, 3, 224, 224), 100)(vision(tvm.mobilenet_v2))
model("mobilenet_v3_large", randn(1, 3, 224, 224), 100)(vision(tvm.mobilenet_v3_large))
model("efficientnet_b0", randn(1, 3, 224, 224), 50)(vision(tvm.efficientnet_b0))
model("resnext50_32x4d", randn(1, 3, 224, 224), 10)(vision(tvm.resnext50_32x4d))
model("convnext_tiny", randn(1, 3, 224, 224), 10)(vision(tvm.convnext_tiny))
model("densenet121", randn(1, 3, 224, 224), 20)(vision(tvm.densenet121))


@model("inception_v3", randn(1, 3, 299, 299), 10)
def inception_v3():
    # Randomised statistics do not hold Inception's activations: with its
    # truncated-normal weights they grow layer by layer to ~1e13 at the logits,
    # where no float32 difference means anything. Its BatchNorms get statistics
    # from random batches instead (models_check.py's calibrate_batchnorm).
    m = tvm.inception_v3(aux_logits=False, init_weights=True)
    calibrate_batchnorm(m, (torch.empty(1, 3, 299, 299),))
    return m


@model("vit_b_16", randn(1, 3, 224, 224), 5)
def vit_b_16():
    # torchvision zeroes the classifier head, which would make every output 0.
    m = tvm.vit_b_16()
    nn.init.normal_(m.heads.head.weight, std=0.02)
    return m


model("swin_t", randn(1, 3, 224, 224), 10)(vision(tvm.swin_t))
# Segmentation: DeepLabV3 on MobileNetV3-Large (21 classes), at 320x320 where
# torchvision's reference is 520: the same graph, a third of the work.
model("deeplabv3_mobilenet_v3", randn(1, 3, 320, 320), 10)(
    vision(lambda: OneOutput(tvs.deeplabv3_mobilenet_v3_large(weights_backbone=None), "out")))

# Sequence models: 128 tokens from an 8192-word vocabulary, d=512, 8 heads,
# 6 layers; the BERT encoder's last 16 positions are padding.
VOCAB, CTX = 8192, 128


def token_ids(g):
    return torch.randint(0, VOCAB, (1, CTX), generator=g)


model("gpt_decoder", lambda g: (token_ids(g),), 10, names=("input_ids",))(
    lambda: GPT(vocab=VOCAB, d=512, heads=8, layers=6, ctx=CTX))
model("bert_encoder", lambda g: (token_ids(g), (torch.arange(CTX) >= CTX - 16).unsqueeze(0)), 10,
      names=("input_ids", "pad_mask"))(
    lambda: OneOutput(BERT(vocab=VOCAB, d=512, heads=8, layers=6, ctx=CTX), 0))
# LSTM: 2 layers, 512 inputs and hidden units, 64 steps, a 10-class head on the last step.
model("lstm", randn(1, 64, 512), 50)(lambda: Recurrent(nn.LSTM, 512, 512, 2, False, 10))


# Batch 16 (issue 15, item 5): three CNNs and the encoder, as a server
# batching requests would run them. Same weights and seeds as batch 1.
BATCH = 16
model("resnet50_b16", randn(BATCH, 3, 224, 224), 2)(vision(tvm.resnet50))
model("mobilenet_v2_b16", randn(BATCH, 3, 224, 224), 5)(vision(tvm.mobilenet_v2))
model("efficientnet_b0_b16", randn(BATCH, 3, 224, 224), 3)(vision(tvm.efficientnet_b0))


def batched_encoder(name, batch, repeats):
    """The encoder at `batch` sequences (the last 16 tokens of each padding)."""
    model(name,
          lambda g: (torch.randint(0, VOCAB, (batch, CTX), generator=g),
                     (torch.arange(CTX) >= CTX - 16).unsqueeze(0).expand(batch, CTX)), repeats,
          names=("input_ids", "pad_mask"))(lambda: OneOutput(BERT(vocab=VOCAB, d=512, heads=8, layers=6, ctx=CTX), 0))


batched_encoder("bert_encoder_b16", BATCH, 2)


# Batch 32 (issue 35: the GPU machine's check, beside PyTorch CUDA at batch 32).
# Exported only by name (not in the default set: too slow for this machine's cpu).
GPU_BATCH = 32
GPU_BATCHED = ["resnet50_b32", "mobilenet_v2_b32", "convnext_tiny_b32", "bert_encoder_b32"]
model("resnet50_b32", randn(GPU_BATCH, 3, 224, 224), 3)(vision(tvm.resnet50))
model("mobilenet_v2_b32", randn(GPU_BATCH, 3, 224, 224), 5)(vision(tvm.mobilenet_v2))
model("convnext_tiny_b32", randn(GPU_BATCH, 3, 224, 224), 3)(vision(tvm.convnext_tiny))
batched_encoder("bert_encoder_b32", GPU_BATCH, 3)


# Held out (issue 34: "on models you have never seen"): ten torchvision
# families the kernels were not tuned on when they were added (2026-11-30),
# batch 1 at 224x224. Exported only by name or with `held-out` (not in the
# default set): once tuned on, they are no longer held out.
HELD_OUT = ["mnasnet1_0", "shufflenet_v2_x1_0", "squeezenet1_1", "regnet_y_400mf", "regnet_x_800mf", "googlenet",
            "mobilenet_v3_small", "resnet34", "efficientnet_b1", "alexnet"]
for _name, _repeats in zip(HELD_OUT, (100, 100, 100, 100, 50, 30, 200, 20, 40, 30)):
    _builder = (lambda: tvm.googlenet(aux_logits=False, init_weights=True)) if _name == "googlenet" else \
        getattr(tvm, _name)
    model(_name, randn(1, 3, 224, 224), _repeats)(vision(_builder))


def build(name):
    """Model NAME in eval mode and its inputs, the same on every call."""
    fn, inputs, _, _ = MODELS[name]
    torch.manual_seed(SEED)
    m = fn().eval()
    g = torch.Generator().manual_seed(SEED + 2)
    return m, inputs(g)


def export(outdir, names):
    outdir = os.path.abspath(outdir)  # models.json's paths work from any folder
    os.makedirs(outdir, exist_ok=True)
    meta_path = os.path.join(outdir, "models.json")
    try:  # other models exported earlier stay listed
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        meta = {}
    for name in names:
        m, xs = build(name)
        in_names = MODELS[name][2]
        with torch.no_grad():
            y = m(*xs)
        files = {}
        for n, x in zip(in_names, xs):
            files[n] = os.path.join(outdir, "%s.%s.npy" % (name, n))
            np.save(files[n], x.numpy())
        np.save(os.path.join(outdir, name + ".torch.npy"), y.numpy().astype(np.float32))
        path = os.path.join(outdir, name + ".onnx")
        # Export with grad enabled so TransformerEncoderLayer and
        # MultiheadAttention take their decomposed paths (the fused fast
        # paths have no ONNX symbolic).
        torch.onnx.export(m, xs, path, opset_version=17,
                          input_names=list(in_names), output_names=["output"],
                          do_constant_folding=True)
        meta[name] = {"onnx": path, "inputs": files, "output": "output",
                      "shapes": [list(x.shape) for x in xs], "out_shape": list(y.shape),
                      "repeats": MODELS[name][3]}
        print("exported %-22s %s -> %s" % (name, " ".join(str(tuple(x.shape)) for x in xs), tuple(y.shape)),
              flush=True)
    meta["_info"] = {"torch": torch.__version__, "torchvision": torchvision.__version__, "seed": SEED, "opset": 17}
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(meta_path + ".tmp", meta_path)


def bench(outdir, name, n, threads):
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    m, _ = build(name)
    xs = [torch.from_numpy(np.load(os.path.join(outdir, "%s.%s.npy" % (name, k)))) for k in MODELS[name][2]]
    ref = np.load(os.path.join(outdir, name + ".torch.npy"))
    times = []
    with torch.inference_mode():
        y = m(*xs)  # warm-up
        cpu0 = time.process_time()  # the process's CPU time, all its threads
        for _ in range(n):
            t0 = time.perf_counter()
            y = m(*xs)
            times.append((time.perf_counter() - t0) * 1e3)
        cpu = (time.process_time() - cpu0) * 1e3 / n
    diff = float(np.max(np.abs(y.numpy() - ref)))
    np.save(os.path.join(outdir, "out", "%s.t%d.torch.npy" % (name, threads)), y.numpy())
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"model": name, "median_ms": float(np.median(times)), "min_ms": min(times), "cpu_ms": cpu,
                      "runs": n, "peak_rss_mib": rss_kib / 1024.0, "self_diff": diff,
                      "threads": torch.get_num_threads(),
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        names = [n for a in sys.argv[3:] for n in (HELD_OUT if a == "held-out" else [a])]
        unknown = [n for n in names if n not in MODELS]
        if unknown:
            sys.exit("export.py: unknown model(s) %s; known: %s" % (" ".join(unknown), " ".join(MODELS)))
        export(sys.argv[2], names or [n for n in MODELS if n not in HELD_OUT and n not in GPU_BATCHED])
    elif len(sys.argv) == 6 and sys.argv[1] == "bench":
        bench(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)
