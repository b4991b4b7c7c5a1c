#!/usr/bin/python3
"""Writes tests/data/passes/every_pass.yaml, a small graph that every
optimization pass rewrites (a constant subgraph, shape arithmetic over a
static shape, repeated nodes and initializers, a dead branch, MatMul + Add,
BatchNormalization after a Gemm and after a Conv), its inputs, and its
outputs computed by numpy in float64 from the ONNX definitions (the
reference for tests/cli/test_optimize.sh). Run once; outputs committed."""
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(3)


def vals(a):
    return "[" + ", ".join(repr(float(v)) for v in np.asarray(a, np.float32).ravel()) + "]"


x = rng.standard_normal((2, 4)).astype(np.float32)
img = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
W1 = rng.standard_normal((4, 3)).astype(np.float32)
b1 = rng.standard_normal(3).astype(np.float32)
ca = np.array([0.5, 2.0, -1.0], np.float32)
cb = np.array([3.0, 0.25, 2.0], np.float32)
bn1 = [rng.uniform(0.5, 2, 3), rng.standard_normal(3), rng.standard_normal(3), rng.uniform(0.1, 2, 3)]
Wc = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
Bc = rng.standard_normal(3).astype(np.float32)
bn2 = [rng.uniform(0.5, 2, 3), rng.standard_normal(3), rng.standard_normal(3), rng.uniform(0.1, 2, 3)]
bn1 = [a.astype(np.float32) for a in bn1]
bn2 = [a.astype(np.float32) for a in bn2]
EPS = 1e-5


def bn(v, p, axis_shape):
    s, b, m, var = (a.astype(np.float64).reshape(axis_shape) for a in p)
    return (v - m) / np.sqrt(var + EPS) * s + b


# y1: Relu(BN(x W1 + b1)) * (ca * cb), twice (equal branches) and summed, then reshaped by its own shape
h = x.astype(np.float64) @ W1 + b1
h = np.maximum(bn(h, bn1, (1, 3)), 0) * (ca.astype(np.float64) * cb)
y1 = (h + h).astype(np.float32)

# y2: Relu(BN(Conv(img, Wc, Bc, pad 1)))
pad = np.pad(img.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = np.zeros((1, 3, 5, 5))
for m in range(3):
    for i in range(5):
        for j in range(5):
            conv[0, m, i, j] = np.sum(pad[0, :, i:i + 3, j:j + 3] * Wc[m]) + Bc[m]
y2 = np.maximum(bn(conv, bn2, (1, 3, 1, 1)), 0).astype(np.float32)

names = ["scale", "bias", "mean", "var"]
lines = [
    "# Written by make_refs.py: a graph every optimization pass rewrites.",
    "format: tgc/1",
    "name: every_pass",
    "inputs:",
    "  - {name: x, dtype: float32, shape: [2, 4]}",
    "  - {name: img, dtype: float32, shape: [1, 2, 5, 5]}",
    "outputs: [y1, y2]",
    "initializers:",
    f"  - {{name: W1, dtype: float32, shape: [4, 3], values: {vals(W1)}}}",
    f"  - {{name: b1, dtype: float32, shape: [3], values: {vals(b1)}}}",
    f"  - {{name: ca, dtype: float32, shape: [3], values: {vals(ca)}}}",
    f"  - {{name: cb, dtype: float32, shape: [3], values: {vals(cb)}}}",
    f"  - {{name: cb_again, dtype: float32, shape: [3], values: {vals(cb)}}}",
    f"  - {{name: Wc, dtype: float32, shape: [3, 2, 3, 3], values: {vals(Wc)}}}",
    f"  - {{name: Bc, dtype: float32, shape: [3], values: {vals(Bc)}}}",
]
for tag, p in (("bn1", bn1), ("bn2", bn2)):
    for n, a in zip(names, p):
        lines.append(f"  - {{name: {tag}_{n}, dtype: float32, shape: [3], values: {vals(a)}}}")
lines += [
    "nodes:",
    "  - {name: mm, op: MatMul, inputs: [x, W1]}",
    "  - {name: lin, op: Add, inputs: [mm, b1]}",
    "  - {name: bn1, op: BatchNormalization, inputs: [lin, bn1_scale, bn1_bias, bn1_mean, bn1_var]}",
    "  - {name: r1, op: Relu, inputs: [bn1]}",
    "  - {name: k, op: Mul, inputs: [ca, cb]}",
    "  - {name: k_again, op: Mul, inputs: [ca, cb_again]}",
    "  - {name: h1, op: Mul, inputs: [r1, k]}",
    "  - {name: h2, op: Mul, inputs: [r1, k_again]}",
    "  - {name: sum, op: Add, inputs: [h1, h2]}",
    "  - {name: shp, op: Shape, inputs: [sum]}",
    "  - {name: y1, op: Reshape, inputs: [sum, shp]}",
    "  - {name: unused, op: Exp, inputs: [x]}",
    "  - {name: conv, op: Conv, inputs: [img, Wc, Bc], attrs: {pads: [1, 1, 1, 1]}}",
    "  - {name: bn2, op: BatchNormalization, inputs: [conv, bn2_scale, bn2_bias, bn2_mean, bn2_var]}",
    "  - {name: y2, op: Relu, inputs: [bn2]}",
]
with open(os.path.join(HERE, "every_pass.yaml"), "w") as f:
    f.write("\n".join(lines) + "\n")
for name, a in (("x", x), ("img", img), ("y1", y1), ("y2", y2)):
    np.save(os.path.join(HERE, f"every_pass_{name}.npy"), a)
