#!/usr/bin/python3
"""Writes tests/data/passes/attention/: inputs and float64 numpy references
for the _Attention kernel and the fuse-attention pass
(tests/passes/test_attention.c), and small GPT-, BERT- and
nn.MultiheadAttention models exported by PyTorch 1.13 at opset 17 (the
classes of scripts/models_check.py), imported by `tgc import`, with
PyTorch's own outputs. Run once with /usr/bin/python3 from the repository
root after building (it needs build/tgc); outputs committed.

    softmax(scale * Q K^T + mask, last axis) V, in float64 (-inf stays)
"""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attention")
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
rng = np.random.default_rng(11)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def attention(q, k, v, scale, mask=None):
    s = scale * (q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2))
    if mask is not None:
        s = s + mask.astype(np.float64)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return ((e / e.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)).astype(np.float32)


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), a)


os.makedirs(OUT, exist_ok=True)

# a: [2, 3] heads, Lq 5, Lk 7, D 4, Dv 6, a causal-style [Lq, Lk] mask with -inf, scale 0.5
q, k, v = f32(2, 3, 5, 4), f32(2, 3, 7, 4), f32(2, 3, 7, 6)
mask = np.triu(np.full((5, 7), -np.inf, np.float32), k=3)
for n, a in (("a_q", q), ("a_k", k), ("a_v", v), ("a_mask", mask)):
    save(n, a)
save("a_out", attention(q, k, v, 0.5, mask))
save("a_out_nomask", attention(q, k, v, 0.5))

# b: broadcast batch dims: Q [2, 1, 5, 4], K^T [3, 4, 7] (k_transposed), V [1, 3, 7, 6],
# a padding mask [2, 1, 1, 7] (0 or -10000), scale 0.3
q, kt, v = f32(2, 1, 5, 4), f32(3, 4, 7), f32(1, 3, 7, 6)
pad = np.zeros((2, 1, 1, 7), np.float32)
pad[0, ..., 5:] = -10000
pad[1, ..., 6:] = -10000
for n, a in (("b_q", q), ("b_kt", kt), ("b_v", v), ("b_mask", pad)):
    save(n, a)
save("b_out", attention(q, np.swapaxes(kt, -1, -2), v, 0.3, pad))

# c: two row blocks (128 rows and 22): [2] batch, Lq 150, Lk 400, D 8, Dv 8, a [2, 1, 400] mask
q, k, v = f32(2, 150, 8), f32(2, 400, 8), f32(2, 400, 8)
cm = (rng.standard_normal((2, 1, 400)) * 2).astype(np.float32)
for n, a in (("c_q", q), ("c_k", k), ("c_v", v), ("c_mask", cm)):
    save(n, a)
save("c_out", attention(q, k, v, 0.125, cm))

# The exported models: small sizes (d 16, 2 heads, 2 layers, 8 tokens, 11 words)
spec = importlib.util.spec_from_file_location("mc", os.path.join(ROOT, "scripts", "models_check.py"))
mc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mc)
torch.manual_seed(5)
T = 8
ids = torch.randint(0, 11, (1, T))
pad = torch.zeros(1, T, dtype=torch.bool)
pad[0, T - 2:] = True
models = {
    "gpt": (mc.GPT(vocab=11, d=16, heads=2, layers=2, ctx=T).eval(), (ids,), ["ids"], ["logits"]),
    "bert": (mc.BERT(vocab=11, d=16, heads=2, layers=2, ctx=T).eval(), (ids, pad), ["ids", "pad"], ["x", "pooled"]),
    "mha": (nn.MultiheadAttention(16, 2).eval(), (torch.randn(T, 1, 16),) * 3, ["q", "k", "v"], ["y", "w"]),
}
save("ids", ids.numpy())
save("pad", pad.numpy())
for name, (model, args, ins, outs) in models.items():
    path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(model, args, path, opset_version=17, input_names=ins, output_names=outs)
    ys = model(*args)  # with autograd on: BERT's layer runs its decomposed path, as exported
    if name == "mha":
        save("mha_q", args[0].numpy())
    ys = ys if isinstance(ys, tuple) else (ys,)
    for o, y in zip(outs, ys):
        save(f"{name}_{o}", y.detach().numpy())
    subprocess.run([os.path.join(ROOT, "build", "tgc"), "import", path, "-o", os.path.join(OUT, name + ".yaml")],
                   check=True)
    os.remove(path)
