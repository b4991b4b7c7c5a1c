#!/usr/bin/python3
"""Writes the reference inputs and outputs in tests/data/kernels/nn/ that
tests/devices/test_cpu_nn.c checks the cpu nn kernels against.

Each case is a set of files CASE.NAME.npy: the inputs under the names the
test passes them by (a, b, c, x, w, ...) and the expected outputs (y, and
indices / mean / inv_std_dev where the op has them). The attributes are
repeated by hand in the C test, next to the case's name.

References come from PyTorch (convolution and pooling) and NumPy in float64
(the rest), cast to float32. ONNX rules PyTorch does not have are applied
here explicitly: asymmetric and auto_pad padding by padding the input first
(zeros for Conv, -inf for MaxPool), Indices flattened over N and C, and
column-major Indices for storage_order 1.

Run with a Python that has NumPy and PyTorch (on the dev image: /usr/bin/python3):
    /usr/bin/python3 tests/data/kernels/make_nn_refs.py
The inputs come from a fixed seed, so the files are the same on every run.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn")
rng = np.random.default_rng(17)


def save(case, **arrays):
    for name, a in arrays.items():
        np.save(os.path.join(OUT, f"{case}.{name}.npy"), a)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def t(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


# ---- MatMul, Gemm -----------------------------------------------------------


def matmul(case, sa, sb):
    a, b = randn(*sa), randn(*sb)
    save(case, a=a, b=b, y=f32(np.matmul(a.astype(np.float64), b.astype(np.float64))))


def gemm(case, sa, sb, sc, trans_a=0, trans_b=0, alpha=1.0, beta=1.0):
    a, b = randn(*sa), randn(*sb)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    y = alpha * ((a64.T if trans_a else a64) @ (b64.T if trans_b else b64))
    arrays = dict(a=a, b=b)
    if sc is not None:
        c = randn(*sc)
        y = y + beta * c.astype(np.float64)
        arrays["c"] = c
    save(case, **arrays, y=f32(y))


# ---- Conv -------------------------------------------------------------------


def same_pads(in_sizes, kernel, strides, dilations, upper):
    """ONNX's auto_pad SAME_*: total = ek - s (ek - in % s when s does not
    divide in), the odd one at the end (UPPER) or the beginning (LOWER).
    Returns [begin..., end...]."""
    begins, ends = [], []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        ek = (k - 1) * d + 1
        total = max(0, ek - s if size % s == 0 else ek - size % s)
        small, big = total // 2, total - total // 2
        begins.append(small if upper else big)
        ends.append(big if upper else small)
    return begins + ends


def torch_pad(pads):
    """ONNX [b1, b2, .., e1, e2, ..] as F.pad's (last axis first) tuple."""
    n = len(pads) // 2
    out = []
    for i in reversed(range(n)):
        out += [pads[i], pads[n + i]]
    return out


def conv(case, sx, sw, bias=True, pads=None, strides=None, dilations=None, group=1, auto_pad=None):
    x, w = randn(*sx), randn(*sw)
    n = len(sx) - 2
    strides = strides or [1] * n
    dilations = dilations or [1] * n
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = same_pads(sx[2:], sw[2:], strides, dilations, auto_pad == "SAME_UPPER")
    pads = pads or [0] * (2 * n)
    arrays = dict(x=x, w=w)
    b = None
    if bias:
        b = randn(sw[0])
        arrays["b"] = b
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    xp = F.pad(t(x), torch_pad(pads))
    y = fn(xp, t(w), None if b is None else t(b), stride=strides, dilation=dilations, groups=group)
    save(case, **arrays, y=f32(y.numpy()))


# ---- Pools ------------------------------------------------------------------


def onnx_pool_out(size, k, s, d, pb, pe, ceil_mode):
    span = size + pb + pe - ((k - 1) * d + 1)
    return (-(-span // s) if ceil_mode else span // s) + 1


def max_pool(case, sx, kernel, strides=None, pads=None, dilations=None, ceil_mode=0, storage_order=0,
             auto_pad=None):
    x = randn(*sx)
    n = len(sx) - 2
    strides = strides or [1] * n
    dilations = dilations or [1] * n
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = same_pads(sx[2:], kernel, strides, dilations, auto_pad == "SAME_UPPER")
    pads = pads or [0] * (2 * n)
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
    symmetric = pads[:n] == pads[n:]
    if symmetric:
        y, idx = fn(t(x), kernel, strides, pads[:n], dilations, ceil_mode=bool(ceil_mode), return_indices=True)
        padded_sizes = sx[2:]
        offsets = [0] * n
    else:  # padding PyTorch cannot express: pad with -inf first (never the max)
        xp = F.pad(t(x), torch_pad(pads), value=-np.inf)
        y, idx = fn(xp, kernel, strides, 0, dilations, ceil_mode=bool(ceil_mode), return_indices=True)
        padded_sizes = list(xp.shape[2:])
        offsets = pads[:n]
    for i in range(n):
        assert y.shape[2 + i] == onnx_pool_out(sx[2 + i], kernel[i], strides[i], dilations[i], pads[i],
                                               pads[n + i], ceil_mode), "PyTorch and ONNX disagree on the shape"
    # PyTorch's index is within one (padded) plane, row-major: back to the
    # input's spatial coordinates, then flattened over N and C as ONNX does.
    pos = np.unravel_index(idx.numpy(), padded_sizes)
    pos = [p - o for p, o in zip(pos, offsets)]
    if storage_order == 0:
        spatial = np.ravel_multi_index(pos, sx[2:])
    else:
        spatial = np.ravel_multi_index(pos[::-1], sx[2:][::-1])
    plane = int(np.prod(sx[2:]))
    base = np.arange(sx[0] * sx[1]).reshape(sx[0], sx[1], *([1] * n)) * plane
    save(case, x=x, y=f32(y.numpy()), indices=(spatial + base).astype(np.int64))


def average_pool(case, sx, kernel, strides=None, pads=None, ceil_mode=0, count_include_pad=0):
    x = randn(*sx)
    n = len(sx) - 2
    strides = strides or [1] * n
    pads = pads or [0] * (2 * n)
    assert pads[:n] == pads[n:], "PyTorch pads symmetrically"
    fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
    y = fn(t(x), kernel, strides, pads[:n], ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
    for i in range(n):
        assert y.shape[2 + i] == onnx_pool_out(sx[2 + i], kernel[i], strides[i], 1, pads[i], pads[n + i],
                                               ceil_mode)
    save(case, x=x, y=f32(y.numpy()))


def global_average_pool(case, sx):
    x = randn(*sx)
    axes = tuple(range(2, len(sx)))
    save(case, x=x, y=f32(x.astype(np.float64).mean(axis=axes, keepdims=True)))


# ---- Normalisation ------------------------------------------------------------


def batch_norm(case, sx, epsilon=1e-5):
    x = randn(*sx)
    ch = sx[1]
    scale, b, mean = randn(ch), randn(ch), randn(ch)
    var = (rng.random(ch) + 0.1).astype(np.float32)
    shape = (1, ch) + (1,) * (len(sx) - 2)
    r = lambda v: v.astype(np.float64).reshape(shape)
    y = (x - r(mean)) / np.sqrt(r(var) + np.float32(epsilon)) * r(scale) + r(b)
    save(case, x=x, scale=scale, b=b, mean=mean, var=var, y=f32(y))


def layer_norm(case, sx, axis, s_scale, s_b, epsilon=1e-5):
    x = randn(*sx)
    axis = axis % len(sx)
    axes = tuple(range(axis, len(sx)))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=axes, keepdims=True) + np.float32(epsilon))
    scale = randn(*s_scale)
    y = (x64 - mean) * inv * scale
    arrays = dict(x=x, scale=scale)
    if s_b is not None:
        b = randn(*s_b)
        y = y + b
        arrays["b"] = b
    save(case, **arrays, y=f32(y), mean=f32(mean), inv_std_dev=f32(inv))


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))

    matmul("matmul_2d", (7, 13), (13, 5))
    matmul("matmul_1d_2d", (13,), (13, 5))
    matmul("matmul_2d_1d", (7, 13), (13,))
    matmul("matmul_1d_1d", (13,), (13,))
    matmul("matmul_batched", (2, 1, 3, 4), (5, 4, 6))
    matmul("matmul_folded", (2, 3, 4), (4, 6))
    matmul("matmul_a_broadcast", (3, 4), (2, 4, 6))
    matmul("matmul_1d_batched", (4,), (2, 4, 6))

    gemm("gemm_trans", (6, 4), (5, 6), (5,), trans_a=1, trans_b=1, alpha=0.5, beta=2.0)
    gemm("gemm_scalar_c", (4, 6), (6, 5), (), alpha=1.5, beta=-0.5)
    gemm("gemm_column_c", (4, 6), (6, 5), (4, 1), trans_a=0, trans_b=0, beta=0.25)
    gemm("gemm_full_c", (6, 4), (6, 5), (4, 5), trans_a=1)
    gemm("gemm_no_c", (4, 6), (5, 6), None, trans_b=1, alpha=2.0)

    conv("conv_pads_strides", (2, 3, 9, 8), (4, 3, 3, 3), pads=[1, 2, 0, 1], strides=[2, 2])
    conv("conv_dilations", (1, 2, 10, 9), (3, 2, 3, 2), pads=[2, 1, 2, 1], dilations=[2, 3])
    conv("conv_groups", (1, 4, 7, 7), (6, 2, 3, 3), pads=[1, 1, 1, 1], group=2)
    conv("conv_depthwise", (2, 3, 8, 7), (6, 1, 3, 3), pads=[1, 1, 1, 1], strides=[2, 1], group=3)
    conv("conv_depthwise_dilated", (1, 4, 9, 9), (4, 1, 3, 3), bias=False, pads=[2, 0, 1, 2], strides=[2, 2],
         dilations=[2, 2], group=4)
    conv("conv_1x1", (2, 8, 5, 6), (4, 8, 1, 1))
    conv("conv_1x1_groups", (1, 6, 4, 4), (4, 3, 1, 1), bias=False, group=2)
    conv("conv_1x1_strided", (1, 3, 5, 5), (2, 3, 1, 1), strides=[2, 2])
    # Axis 1 (stride 1, kernel 4) has an odd total pad, 3: where the odd one goes tells them apart.
    conv("conv_same_upper", (1, 2, 7, 8), (3, 2, 3, 4), strides=[2, 1], auto_pad="SAME_UPPER")
    conv("conv_same_lower", (1, 2, 7, 8), (3, 2, 3, 4), strides=[2, 1], auto_pad="SAME_LOWER")
    conv("conv_valid", (1, 2, 7, 8), (3, 2, 3, 4), bias=False, strides=[1, 2])
    conv("conv_1d", (2, 3, 11), (4, 3, 3), pads=[2, 1], strides=[2], dilations=[2])
    conv("conv_1d_depthwise", (1, 3, 10), (3, 1, 4), pads=[1, 2], group=3)
    conv("conv_3d", (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 1])

    max_pool("maxpool_ceil_pads", (2, 3, 8, 8), [3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    max_pool("maxpool_dilations", (1, 2, 9, 9), [2, 3], strides=[1, 2], pads=[1, 1, 1, 1], dilations=[2, 1])
    max_pool("maxpool_column_major", (1, 2, 6, 5), [2, 2], strides=[2, 2], ceil_mode=1, storage_order=1)
    max_pool("maxpool_same_upper", (1, 2, 7, 8), [3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    max_pool("maxpool_1d", (2, 2, 10), [3], strides=[3], ceil_mode=1)
    max_pool("maxpool_3d", (1, 2, 4, 5, 6), [2, 2, 3], strides=[2, 2, 2], pads=[0, 1, 1, 0, 1, 1])

    average_pool("avgpool_exclude_pad", (2, 3, 7, 8), [3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    average_pool("avgpool_include_pad", (2, 3, 7, 8), [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                 count_include_pad=1)
    average_pool("avgpool_ceil_include_pad", (1, 2, 8, 8), [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                 ceil_mode=1, count_include_pad=1)
    average_pool("avgpool_ceil_exclude_pad", (1, 2, 8, 8), [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                 ceil_mode=1)
    average_pool("avgpool_1d", (2, 2, 9), [4], strides=[2], pads=[1, 1])

    global_average_pool("global_avgpool_2d", (2, 3, 5, 4))
    global_average_pool("global_avgpool_1d", (2, 3, 7))
    global_average_pool("global_avgpool_3d", (1, 2, 3, 4, 5))

    batch_norm("batchnorm_4d", (2, 3, 4, 5))
    batch_norm("batchnorm_2d", (4, 3), epsilon=1e-3)

    layer_norm("layernorm_last", (2, 3, 8), -1, (8,), (8,))
    layer_norm("layernorm_axis1", (2, 3, 4, 5), 1, (4, 5), (5,))
    layer_norm("layernorm_no_bias", (3, 4, 6), -2, (1, 6), None, epsilon=1e-3)


if __name__ == "__main__":
    main()
