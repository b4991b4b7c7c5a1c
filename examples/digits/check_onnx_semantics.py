#!/usr/bin/python3
"""Independent check of the digits example: no torch, numpy (+ PyYAML to read the graphs).

Reads mlp.yaml and cnn.yaml, loads every initializer (checking the .npy
dtype/shape against the declaration), evaluates the nodes with small numpy
implementations of the ONNX opset-17 ops they use, and compares the logits
with the torch reference logits (max abs diff must be < 1e-4). Prints the
test accuracy of each graph. Exit status 0 on success, 1 on any mismatch.

    /usr/bin/python3 examples/digits/check_onnx_semantics.py
"""
import os
import sys

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = 1e-4
DTYPES = {"float32": np.float32, "float16": np.float16, "int32": np.int32,
          "int64": np.int64, "uint8": np.uint8, "bool": np.bool_}


# ---- ONNX ops (opset 17), only the attributes these graphs can use ----------

def op_conv(x, w, b=None, kernel_shape=None, pads=None, strides=None,
            dilations=None, group=1, auto_pad="NOTSET"):
    assert auto_pad == "NOTSET" and group == 1
    n, c, h, wd = x.shape
    m, cw, kh, kw = w.shape
    assert cw == c
    if kernel_shape is not None:
        assert list(kernel_shape) == [kh, kw]
    pads = pads or [0, 0, 0, 0]            # [top, left, bottom, right]
    strides = strides or [1, 1]
    dilations = dilations or [1, 1]
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    # im2col: cols[n, c, i, j, oh, ow]
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilations[0], j * dilations[1]
            cols[:, :, i, j] = xp[:, :, r0:r0 + strides[0] * oh:strides[0],
                                  c0:c0 + strides[1] * ow:strides[1]]
    y = np.einsum("ncijhw,mcij->nmhw", cols, w)
    if b is not None:
        y = y + b.reshape(1, m, 1, 1)
    return y


def op_maxpool(x, kernel_shape, pads=None, strides=None, dilations=None,
               ceil_mode=0, storage_order=0, auto_pad="NOTSET"):
    assert auto_pad == "NOTSET" and ceil_mode == 0 and dilations in (None, [1, 1])
    kh, kw = kernel_shape
    pads = pads or [0, 0, 0, 0]
    strides = strides or [1, 1]
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                constant_values=-np.inf)
    oh = (h + pads[0] + pads[2] - kh) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - kw) // strides[1] + 1
    y = np.full((n, c, oh, ow), -np.inf, dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            y = np.maximum(y, xp[:, :, i:i + strides[0] * oh:strides[0],
                                 j:j + strides[1] * ow:strides[1]])
    return y


def op_gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    a = a.T if transA else a
    b = b.T if transB else b
    y = alpha * (a @ b)
    if c is not None:
        y = y + beta * c                  # unidirectional broadcast
    return y


def op_relu(x):
    return np.maximum(x, 0)


def op_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def op_shape(x, start=0, end=None):
    return np.array(x.shape[start:end], dtype=np.int64)


def op_gather(data, indices, axis=0):
    return np.take(data, indices, axis=axis)


def op_unsqueeze(data, axes):
    out_rank = data.ndim + len(axes)
    axes = sorted(int(a) % out_rank for a in axes)
    shape = list(data.shape)
    for a in axes:
        shape.insert(a, 1)
    return data.reshape(shape)


def op_concat(*xs, axis):
    return np.concatenate(xs, axis=axis)


def op_reshape(data, shape, allowzero=0):
    shape = [int(s) for s in shape]
    if not allowzero:
        shape = [data.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    assert shape.count(-1) <= 1
    return data.reshape(shape)


OPS = {"Conv": op_conv, "MaxPool": op_maxpool, "Gemm": op_gemm, "Relu": op_relu,
       "Softmax": op_softmax, "Shape": op_shape, "Gather": op_gather,
       "Unsqueeze": op_unsqueeze, "Concat": op_concat, "Reshape": op_reshape}


# ---- graph evaluation --------------------------------------------------------

def load_initializer(spec):
    dtype = DTYPES[spec["dtype"]]
    shape = tuple(spec["shape"])
    if "file" in spec:
        a = np.load(os.path.join(HERE, spec["file"]))
        assert a.dtype == dtype and a.shape == shape, \
            f"{spec['name']}: npy is {a.dtype}{a.shape}, declared {spec['dtype']}{list(shape)}"
    else:
        a = np.array(spec["values"], dtype=dtype).reshape(shape)
    return a


def run_graph(path, feeds, compute_dtype=np.float64):
    with open(path) as f:
        g = yaml.safe_load(f)
    assert next(iter(g)) == "format" and g["format"] == "tgc/1"
    env = {}
    for inp in g["inputs"]:
        x = feeds[inp["name"]]
        assert x.dtype == DTYPES[inp["dtype"]] and x.ndim == len(inp["shape"])
        for d, s in zip(x.shape, inp["shape"]):
            assert isinstance(s, str) or d == s
        env[inp["name"]] = x.astype(compute_dtype) if x.dtype.kind == "f" else x
    for spec in g["initializers"]:
        a = load_initializer(spec)
        env[spec["name"]] = a.astype(compute_dtype) if a.dtype.kind == "f" else a
    pending = list(g["nodes"])
    while pending:                         # evaluate in dependency order
        progressed = False
        for node in list(pending):
            ins = [r.split(":")[0] if r.endswith(":0") else r for r in node["inputs"]]
            if all(r in env for r in ins if r):
                args = [env[r] if r else None for r in ins]
                env[node["name"]] = OPS[node["op"]](*args, **(node.get("attrs") or {}))
                pending.remove(node)
                progressed = True
        assert progressed, f"{path}: unresolved inputs in {[n['name'] for n in pending]}"
    return [env[o.split(":")[0] if o.endswith(":0") else o] for o in g["outputs"]], g


def check(yaml_name, x, ref, y):
    (logits, probs), g = run_graph(os.path.join(HERE, yaml_name), {"x": x})
    diff = float(np.abs(logits - ref.astype(np.float64)).max())
    assert np.allclose(probs.sum(axis=1), 1.0)
    agree = float((probs.argmax(1) == ref.argmax(1)).mean())
    acc = float((logits.argmax(1) == y).mean())
    ok = diff < TOL and agree == 1.0
    print(f"{yaml_name}: {len(g['nodes'])} nodes, logits {list(logits.shape)}, "
          f"max |logits - ref| = {diff:.3g}, test accuracy {acc * 100:.2f}% "
          f"({int(round(acc * len(y)))}/{len(y)}) {'OK' if ok else 'FAIL'}")
    return ok


def main():
    y = np.load(os.path.join(HERE, "test_y.npy"))
    assert y.dtype == np.int64 and y.shape == (400,)
    ok = check("mlp.yaml", np.load(os.path.join(HERE, "test_x_flat.npy")),
               np.load(os.path.join(HERE, "ref_logits_mlp.npy")), y)
    ok &= check("cnn.yaml", np.load(os.path.join(HERE, "test_x.npy")),
                np.load(os.path.join(HERE, "ref_logits_cnn.npy")), y)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
