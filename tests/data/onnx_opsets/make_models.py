#!/usr/bin/python3
"""Hand-made ONNX models in the older forms of ops (opsets 5 to 18) that
ONNX's version converter does not produce (ONNX 1.12 has no downward
adapter for Resize, Slice 10 -> 9, Clip 11 -> 10, Dropout 12 -> 11, ...),
with reference outputs computed here with numpy from each op's definition in
ONNX's changelog (never with tgc). Run once; its outputs are committed:

    node/test_NAME/model.onnx, node/test_NAME/test_data_set_0/{input,output}_K.pb
        run by tgc-conformance --data tests/data/onnx_opsets (every one must pass)
    refused/NAME.onnx
        models tgc must refuse, or import with a warning, with a clear
        message: tests/cli/test_onnx_opsets.sh checks each message

One hand conversion of a conformance model: RoiAlign-16 with
coordinate_transformation_mode output_half_pixel (test_roialign_aligned_false)
is RoiAlign-10, which has no such attribute; its expected output is the
original test's.

Usage: /usr/bin/python3 tests/data/onnx_opsets/make_models.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = "/usr/share/libonnx-testdata/data"
rng = np.random.RandomState(20261127)

F = TensorProto.FLOAT
I64 = TensorProto.INT64
BOOL = TensorProto.BOOL


def dtype_code(a):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def model(nodes, inputs, outputs, opset, inits=(), dims=None):
    """inputs/outputs: [(name, array)] (types and shapes from the arrays, or
    from dims {name: [size or symbol, ...]})."""
    dims = dims or {}
    vi = lambda n, a: helper.make_tensor_value_info(n, dtype_code(a), dims.get(n, list(a.shape)))
    g = helper.make_graph(nodes, "g", [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
                          [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_models.py")
    m.ir_version = 8 if opset >= 15 else (7 if opset >= 12 else (5 if opset >= 9 else 3))
    return m


def case(name, nodes, inputs, outputs, opset, inits=(), dims=None):
    d = os.path.join(HERE, "node", "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model(nodes, inputs, outputs, opset, inits, dims), os.path.join(d, "model.onnx"))
    for kind, lst in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(lst):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def refused(name, nodes, inputs, outputs, opset, inits=()):
    onnx.save(model(nodes, inputs, outputs, opset, inits), os.path.join(HERE, "refused", name + ".onnx"))


def f32(*shape):
    return rng.uniform(-2, 2, shape).astype(np.float32)


# ---- Resize references (per axis, separable), after ONNX's Resize definition --

def coord(mode, i, scale, in_len, out_len):
    if mode == "asymmetric":
        return i / scale
    if mode == "align_corners":
        return 0.0 if out_len == 1 else i * (in_len - 1) / (out_len - 1)
    if mode == "half_pixel":
        return (i + 0.5) / scale - 0.5
    raise ValueError(mode)


def resize_axis(x, axis, out_len, scale, mode, interp, nearest="floor"):
    in_len = x.shape[axis]
    out = []
    for i in range(out_len):
        c = coord(mode, i, scale, in_len, out_len)
        if interp == "nearest":
            if nearest == "floor":
                j = int(np.floor(c))
            elif nearest == "round_prefer_floor":
                j = int(np.ceil(c - 0.5))
            else:  # round_prefer_ceil
                j = int(np.floor(c + 0.5))
            j = min(max(j, 0), in_len - 1)
            out.append(np.take(x, j, axis=axis))
        else:
            c = min(max(c, 0.0), in_len - 1)
            j0 = int(np.floor(c))
            j1 = min(j0 + 1, in_len - 1)
            w = c - j0
            out.append(np.take(x, j0, axis=axis) * (1 - w) + np.take(x, j1, axis=axis) * w)
    return np.stack(out, axis=axis).astype(np.float32)


def resize(x, out_shape, scales, mode, interp, nearest="floor"):
    for ax in range(x.ndim):
        if out_shape[ax] != x.shape[ax] or scales[ax] != 1:
            x = resize_axis(x, ax, out_shape[ax], scales[ax], mode, interp, nearest)
    return x


def main():
    for sub in ("node", "refused"):
        shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)
    os.makedirs(os.path.join(HERE, "refused"))

    # Upsample-7: scales as an attribute, nearest (each element repeated).
    x = f32(1, 2, 2, 3)
    case("upsample7_nearest", [helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 3.0])],
         [("x", x)], [("y", x.repeat(2, axis=2).repeat(3, axis=3))], 7)
    # Upsample-9: scales as input 1, linear (asymmetric coordinates, x = y / scale).
    x = f32(1, 1, 3, 4)
    sc = np.array([1, 1, 2, 1.5], np.float32)
    case("upsample9_linear", [helper.make_node("Upsample", ["x", "scales"], ["y"], mode="linear")],
         [("x", x)], [("y", resize(x, (1, 1, 6, 6), sc, "asymmetric", "linear"))], 9, [("scales", sc)])
    # Resize-10: scales input, nearest downsampling (floor of y / scale) and linear.
    x = f32(1, 1, 4, 6)
    sc = np.array([1, 1, 0.5, 0.5], np.float32)
    case("resize10_nearest_down", [helper.make_node("Resize", ["x", "scales"], ["y"], mode="nearest")],
         [("x", x)], [("y", resize(x, (1, 1, 2, 3), sc, "asymmetric", "nearest"))], 10, [("scales", sc)])
    sc = np.array([1, 1, 1.5, 2], np.float32)
    case("resize10_linear_up", [helper.make_node("Resize", ["x", "scales"], ["y"], mode="linear")],
         [("x", x)], [("y", resize(x, (1, 1, 6, 12), sc, "asymmetric", "linear"))], 10, [("scales", sc)])
    # Resize-11: roi required (empty here), scales or sizes (scales then empty).
    x = f32(1, 1, 3, 4)
    sc = np.array([1, 1, 2, 2], np.float32)
    case("resize11_linear_align_corners",
         [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear",
                           coordinate_transformation_mode="align_corners")],
         [("x", x)], [("y", resize(x, (1, 1, 6, 8), sc, "align_corners", "linear"))], 11,
         [("roi", np.zeros(0, np.float32)), ("scales", sc)])
    sizes = np.array([1, 1, 5, 7], np.int64)
    case("resize11_nearest_sizes",
         [helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], mode="nearest",
                           coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")],
         [("x", x)], [("y", resize(x, tuple(sizes), [1, 1, 5 / 3, 7 / 4], "half_pixel", "nearest",
                                   "round_prefer_ceil"))], 11,
         [("roi", np.zeros(0, np.float32)), ("scales", np.zeros(0, np.float32)), ("sizes", sizes)])

    # Pad-2: pads and value as attributes; reflect and edge modes.
    x = f32(2, 3)
    case("pad2_constant", [helper.make_node("Pad", ["x"], ["y"], pads=[0, 2, 1, 1], value=1.5)],
         [("x", x)], [("y", np.pad(x, ((0, 1), (2, 1)), constant_values=1.5))], 7)
    case("pad2_reflect", [helper.make_node("Pad", ["x"], ["y"], pads=[1, 2, 1, 0], mode="reflect")],
         [("x", x)], [("y", np.pad(x, ((1, 1), (2, 0)), mode="reflect"))], 9)
    case("pad2_edge", [helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 2, 1], mode="edge")],
         [("x", x)], [("y", np.pad(x, ((0, 2), (1, 1)), mode="edge"))], 10)

    # Slice-1: starts, ends, axes as attributes (ends past the size, negative starts).
    x = f32(3, 4, 5)
    case("slice1_attrs", [helper.make_node("Slice", ["x"], ["y"], starts=[1, -3], ends=[1000, -1], axes=[0, 2])],
         [("x", x)], [("y", x[1:, :, -3:-1])], 9)
    case("slice1_no_axes", [helper.make_node("Slice", ["x"], ["y"], starts=[0, 1], ends=[2, 3])],
         [("x", x)], [("y", x[0:2, 1:3])], 7)

    # Split-2 (split attribute), Split-11 (even, negative axis), Split-18 (num_outputs, uneven).
    x = f32(2, 4, 7)
    case("split2_attr", [helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 3])],
         [("x", x)], [("a", x[:, :1]), ("b", x[:, 1:])], 8)
    x6 = f32(2, 6)
    case("split11_even_negative_axis", [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=-1)],
         [("x", x6)], [("a", x6[:, 0:2]), ("b", x6[:, 2:4]), ("c", x6[:, 4:6])], 11)
    case("split18_num_outputs_uneven", [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=2, num_outputs=3)],
         [("x", x)], [("a", x[:, :, 0:3]), ("b", x[:, :, 3:6]), ("c", x[:, :, 6:7])], 18)
    case("split18_num_outputs_even", [helper.make_node("Split", ["x"], ["a", "b"], axis=-1, num_outputs=2)],
         [("x", x6)], [("a", x6[:, :3]), ("b", x6[:, 3:])], 18)
    x8 = np.arange(16, dtype=np.float32).reshape(2, 8) / 4  # the axis' size a symbol: the sizes computed at run time
    case("split18_num_outputs_symbolic_dim",
         [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
         [("x", x8)], [("a", x8[:, 0:3]), ("b", x8[:, 3:6]), ("c", x8[:, 6:8])], 18,
         dims={"x": [2, "L"], "a": [2, "La"], "b": [2, "Lb"], "c": [2, "Lc"]})
    case("split18_split_input", [helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0)],
         [("x", x6)], [("a", x6[:1]), ("b", x6[1:])], 18, [("s", np.array([1, 1], np.int64))])

    # The Reduce ops' axes: attribute (before 18; ReduceSum before 13), input (ReduceSum 13, all at 18).
    x = f32(2, 3, 4)
    case("reducemean11_axes_attr", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[-1], keepdims=0)],
         [("x", x)], [("y", x.mean(axis=-1))], 11)
    case("reducesum11_axes_attr", [helper.make_node("ReduceSum", ["x"], ["y"], axes=[0, 2])],
         [("x", x)], [("y", x.sum(axis=(0, 2), keepdims=True))], 11)
    case("reducemax13_axes_attr", [helper.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0)],
         [("x", x)], [("y", x.max(axis=1))], 13)
    case("reducesum13_axes_input", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
         [("x", x)], [("y", x.sum(axis=1))], 13, [("axes", np.array([1], np.int64))])
    case("reduceprod18_axes_input", [helper.make_node("ReduceProd", ["x", "axes"], ["y"])],
         [("x", x)], [("y", x.prod(axis=(0, 2), keepdims=True))], 18, [("axes", np.array([0, -1], np.int64))])
    case("reducel2_18_noop_empty_axes", [helper.make_node("ReduceL2", ["x"], ["y"], noop_with_empty_axes=1)],
         [("x", x)], [("y", x)], 18)
    case("reducelogsumexp18_all_axes", [helper.make_node("ReduceLogSumExp", ["x"], ["y"], keepdims=0)],
         [("x", x)], [("y", np.array(np.log(np.exp(x.astype(np.float64)).sum()), np.float32))], 18)
    case("reducemin18_axes_input_graph", [helper.make_node("ReduceMin", ["x", "axes"], ["y"], keepdims=1)],
         [("x", x)], [("y", x.min(axis=2, keepdims=True))], 18, [("axes", np.array([2], np.int64))])

    # BatchNormalization: spatial 1 (opset 7) and the consumed_inputs and is_test of opset 6.
    x = f32(2, 3, 2, 2)
    s, b, mu = f32(3), f32(3), f32(3)
    var = rng.uniform(0.5, 2, 3).astype(np.float32)
    bc = lambda v: v.reshape(1, 3, 1, 1)
    y = (bc(s) * (x - bc(mu)) / np.sqrt(bc(var) + 1e-3) + bc(b)).astype(np.float32)
    bn_in = ["x", "s", "b", "mu", "var"]
    bn_w = [("s", s), ("b", b), ("mu", mu), ("var", var)]
    case("batchnorm7_spatial", [helper.make_node("BatchNormalization", bn_in, ["y"], spatial=1, epsilon=1e-3)],
         [("x", x)], [("y", y)], 7, bn_w)
    case("batchnorm9", [helper.make_node("BatchNormalization", bn_in, ["y"], epsilon=1e-3)],
         [("x", x)], [("y", y)], 9, bn_w)
    case("batchnorm9_training_outputs_unread", [helper.make_node("BatchNormalization", bn_in,
                                                                 ["y", "m", "v", "sm", "sv"], epsilon=1e-3)],
         [("x", x)], [("y", y)], 9, bn_w)
    case("batchnorm6_is_test", [helper.make_node("BatchNormalization", bn_in, ["y"], is_test=1, epsilon=1e-3,
                                                 consumed_inputs=[0, 0, 0, 1, 1])],
         [("x", x)], [("y", y)], 6, bn_w)

    # Dropout in inference: ratio attribute (7), a mask of bools (10: all true).
    x = f32(3, 4)
    case("dropout7_ratio_attr", [helper.make_node("Dropout", ["x"], ["y"], ratio=0.3)], [("x", x)], [("y", x)], 7)
    case("dropout10_mask", [helper.make_node("Dropout", ["x"], ["y", "mask"], ratio=0.5)],
         [("x", x)], [("y", x), ("mask", np.ones((3, 4), np.bool_))], 10)
    case("dropout12_ratio_input", [helper.make_node("Dropout", ["x", "r"], ["y"])],
         [("x", x)], [("y", x)], 12, [("r", np.array(0.2, np.float32))])

    # Clip-6: min and max as attributes (either may be left out).
    case("clip6_min_max", [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.75)],
         [("x", x)], [("y", np.clip(x, -0.5, 0.75))], 7)
    case("clip6_max_only", [helper.make_node("Clip", ["x"], ["y"], max=0.25)],
         [("x", x)], [("y", np.minimum(x, 0.25))], 10)

    # Squeeze and Unsqueeze with axes attributes (negative from opset 11).
    x = f32(1, 3, 1, 2)
    case("squeeze11_negative_axes", [helper.make_node("Squeeze", ["x"], ["y"], axes=[-2, 0])],
         [("x", x)], [("y", x.reshape(3, 2))], 11)
    case("squeeze7_no_axes", [helper.make_node("Squeeze", ["x"], ["y"])], [("x", x)], [("y", x.reshape(3, 2))], 7)
    x = f32(3, 2)
    case("unsqueeze11_axes_attr", [helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, -1])],
         [("x", x)], [("y", x.reshape(1, 3, 2, 1))], 11)

    # TopK-1: k as an attribute.
    x = f32(3, 5)
    idx = np.argsort(-x, axis=1, kind="stable")[:, :2]
    case("topk1_k_attr", [helper.make_node("TopK", ["x"], ["v", "i"], k=2)],
         [("x", x)], [("v", np.take_along_axis(x, idx, 1)), ("i", idx.astype(np.int64))], 9)

    # Softmax-11: coerced to 2-D at axis (not along one axis as from 13).
    x = f32(2, 3, 4)
    flat = x.reshape(2, 12).astype(np.float64)
    sm = np.exp(flat - flat.max(1, keepdims=True))
    case("logsoftmax11_axis1", [helper.make_node("LogSoftmax", ["x"], ["y"], axis=1)],
         [("x", x)], [("y", np.log(sm / sm.sum(1, keepdims=True)).reshape(2, 3, 4).astype(np.float32))], 11)

    # Scatter-9 (ScatterElements under its old name).
    data = np.zeros((3, 3), np.float32)
    ind = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    upd = f32(2, 3)
    ref = data.copy()
    for i in range(2):
        for j in range(3):
            ref[ind[i, j], j] = upd[i, j]
    case("scatter9_axis0", [helper.make_node("Scatter", ["d", "i", "u"], ["y"], axis=0)],
         [("d", data), ("i", ind), ("u", upd)], [("y", ref)], 9)

    # GroupNormalization-18: scale and bias per group.
    x = f32(2, 4, 3)
    s, b = f32(2), f32(2)
    xg = x.reshape(2, 2, 6).astype(np.float64)
    yg = (xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + 1e-4)
    y = (yg * s.reshape(1, 2, 1) + b.reshape(1, 2, 1)).reshape(2, 4, 3).astype(np.float32)
    case("groupnorm18", [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-4)],
         [("x", x)], [("y", y)], 18, [("s", s), ("b", b)])

    # CenterCropPad-18: crop or pad with zeros, centered (ONNX's reference:
    # a crop starts at floor((d - s) / 2), a pad puts floor((s - d) / 2) before).
    def center_crop_pad(x, shape, axes):
        y = x
        for a, s_ in zip(axes, shape):
            d = y.shape[a]
            if s_ < d:
                b = (d - s_) // 2
                y = np.take(y, range(b, b + s_), axis=a)
            elif s_ > d:
                b = (s_ - d) // 2
                widths = [(0, 0)] * y.ndim
                widths[a] = (b, s_ - d - b)
                y = np.pad(y, widths)
        return y
    x = f32(2, 5, 4)
    sh = np.array([2, 7], np.int64)
    case("centercroppad18_axes", [helper.make_node("CenterCropPad", ["x", "s"], ["y"], axes=[-1, 1])],
         [("x", x)], [("y", center_crop_pad(x, sh, [2, 1]))], 18, [("s", sh)])
    sh = np.array([3, 2, 5], np.int64)
    case("centercroppad18_all_axes", [helper.make_node("CenterCropPad", ["x", "s"], ["y"])],
         [("x", x), ("s", sh)], [("y", center_crop_pad(x, sh, [0, 1, 2]))], 18)

    # Col2Im-18: each block added back at its place (ONNX's definition:
    # position o * stride - pad_begin + k * dilation, outside the image skipped).
    def col2im(x, image, block, dil, pads, strides):
        n_ax = len(image)
        K = int(np.prod(block))
        N, CK, L = x.shape
        C = CK // K
        grid = [(image[i] + pads[i] + pads[n_ax + i] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1
                for i in range(n_ax)]
        assert int(np.prod(grid)) == L
        y = np.zeros((N, C) + tuple(image), np.float64)
        xb = x.reshape(N, C, K, L).astype(np.float64)
        for k, kpos in enumerate(np.ndindex(*block)):
            for l, opos in enumerate(np.ndindex(*grid)):
                pos = [opos[i] * strides[i] - pads[i] + kpos[i] * dil[i] for i in range(n_ax)]
                if all(0 <= pos[i] < image[i] for i in range(n_ax)):
                    y[(slice(None), slice(None)) + tuple(pos)] += xb[:, :, k, l]
        return y.astype(np.float32)

    def col2im_case(name, n, c, image, block, dil=None, pads=None, strides=None):
        n_ax = len(image)
        dil, strides = dil or [1] * n_ax, strides or [1] * n_ax
        pads = pads or [0] * (2 * n_ax)
        grid = [(image[i] + pads[i] + pads[n_ax + i] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1
                for i in range(n_ax)]
        x = f32(n, c * int(np.prod(block)), int(np.prod(grid)))
        attrs = {}
        if dil != [1] * n_ax:
            attrs["dilations"] = dil
        if strides != [1] * n_ax:
            attrs["strides"] = strides
        if pads != [0] * (2 * n_ax):
            attrs["pads"] = pads
        case(name, [helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)],
             [("x", x)], [("y", col2im(x, image, block, dil, pads, strides))], 18,
             [("image", np.array(image, np.int64)), ("block", np.array(block, np.int64))])

    col2im_case("col2im18", 1, 1, [5, 5], [2, 2])
    col2im_case("col2im18_dilations_pads", 2, 3, [6, 6], [2, 2], dil=[1, 5], pads=[0, 1, 0, 1])
    col2im_case("col2im18_strides_remainder", 1, 2, [6, 7], [3, 2], strides=[2, 3])
    col2im_case("col2im18_1d", 2, 1, [7], [3], strides=[2], pads=[1, 0])
    col2im_case("col2im18_3d", 1, 2, [3, 4, 5], [1, 2, 3], pads=[0, 1, 0, 0, 0, 1])

    # BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18): numpy's bitwise ops.
    brng = np.random.RandomState(18)  # a stream of its own: the other cases' data stay as they were

    def ints(dtype, *shape):  # random bits: every value of the dtype, negatives too
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return np.frombuffer(brng.bytes(n), dtype).reshape(shape).copy()
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
        for dt, sa, sb in ((np.int32, (3, 4), (4,)), (np.uint8, (2, 3), (2, 3)), (np.int64, (2, 1, 3), (4, 1)),
                           (np.int8, (5,), ()), (np.uint16, (2, 2), (2, 1)), (np.uint32, (1, 3), (2, 1)),
                           (np.int16, (3,), (3,)), (np.uint64, (2, 2), (2, 2))):
            a, b = ints(dt, *sa), ints(dt, *sb)
            case("%s18_%s" % (op.lower(), np.dtype(dt).name), [helper.make_node(op, ["a", "b"], ["y"])],
                 [("a", a), ("b", b)], [("y", fn(a, b))], 18)
    for dt in (np.int16, np.uint64, np.int8, np.uint32):
        x = ints(dt, 2, 3)
        case("bitwisenot18_%s" % np.dtype(dt).name, [helper.make_node("BitwiseNot", ["x"], ["y"])],
             [("x", x)], [("y", np.invert(x))], 18)

    # OptionalHasElement and OptionalGetElement given a plain tensor (opset 18).
    xo = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    case("optionalhaselement18_tensor", [helper.make_node("OptionalHasElement", ["x"], ["y"])],
         [("x", xo)], [("y", np.array(True))], 18)
    case("optionalgetelement18_tensor", [helper.make_node("OptionalGetElement", ["x"], ["y"])],
         [("x", xo)], [("y", xo)], 18)

    # RoiAlign-10 (output_half_pixel mapping): ONNX's test_roialign_aligned_false at opset 10.
    src = os.path.join(TESTDATA, "node", "test_roialign_aligned_false")
    if os.path.isdir(src):
        m = onnx.load(os.path.join(src, "model.onnx"))
        n = m.graph.node[0]
        keep = [a for a in n.attribute if a.name != "coordinate_transformation_mode"]
        assert len(keep) + 1 == len(n.attribute)
        del n.attribute[:]
        n.attribute.extend(keep)
        m.opset_import[0].version = 10
        onnx.checker.check_model(m)
        d = os.path.join(HERE, "node", "test_roialign10_output_half_pixel")
        shutil.copytree(os.path.join(src, "test_data_set_0"), os.path.join(d, "test_data_set_0"))
        onnx.save(m, os.path.join(d, "model.onnx"))

    # ---- Refused, or imported with a warning -------------------------------------
    x = f32(2, 3)
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    refused("opset19", relu, [("x", x)], [("y", x)], 19)
    refused("opset0", relu, [("x", x)], [("y", x)], 0)
    refused("opset5_warning", relu, [("x", x)], [("y", x)], 5)
    x4 = f32(2, 3, 2, 2)
    refused("batchnorm7_spatial0", [helper.make_node("BatchNormalization", bn_in, ["y"], spatial=0)],
            [("x", x4)], [("y", x4)], 7, bn_w)
    refused("batchnorm9_training_output_read",
            [helper.make_node("BatchNormalization", bn_in, ["y", "m", "v"])], [("x", x4)], [("y", x4), ("m", s)], 9,
            bn_w)
    refused("dropout7_mask_used", [helper.make_node("Dropout", ["x"], ["y", "mask"], ratio=0.5)],
            [("x", x)], [("y", x), ("mask", x)], 7)
    refused("split18_num_outputs_mismatch", [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=3)],
            [("x", x6)], [("a", x6), ("b", x6)], 18)
    refused("upsample7_no_scales", [helper.make_node("Upsample", ["x"], ["y"], mode="nearest")],
            [("x", x4)], [("y", x4)], 7)
    refused("tile1_tiles_axis", [helper.make_node("Tile", ["x", "t", "a"], ["y"])], [("x", x)], [("y", x)], 5,
            [("t", np.array(2, np.int64)), ("a", np.array(1, np.int64))])
    xc = f32(1, 4, 16)
    refused("col2im18_image_shape_fed", [helper.make_node("Col2Im", ["x", "image", "block"], ["y"])],
            [("x", xc), ("image", np.array([5, 5], np.int64))], [("y", xc)], 18,
            [("block", np.array([2, 2], np.int64))])
    refused("col2im18_block_too_large", [helper.make_node("Col2Im", ["x", "image", "block"], ["y"])],
            [("x", xc)], [("y", xc)], 18, [("image", np.array([5, 5], np.int64)), ("block", np.array([6, 2], np.int64))])
    # Every problem at once: three nodes, each refused for its own reason.
    refused("several_problems",
            [helper.make_node("BatchNormalization", bn_in, ["t"], spatial=0),
             helper.make_node("DeformConv", ["t", "t", "t"], ["u"]),
             helper.make_node("Dropout", ["u"], ["y", "mask"])],
            [("x", x4)], [("y", x4), ("mask", x4)], 7,
            bn_w)


if __name__ == "__main__":
    main()
