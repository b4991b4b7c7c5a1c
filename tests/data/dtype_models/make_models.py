"""Makes small hand-made ONNX models in float16, bfloat16 and the quantized
types, each with its inputs and the outputs the ONNX operator definitions
give, computed here in numpy and never by tgc (tests/cli/test_dtype_models.sh
runs them on the cpu and on cpu,gpu0). Run once; the outputs are committed:

    /usr/bin/python3 tests/data/dtype_models/make_models.py

Files: MODEL.onnx, MODEL.NAME.npy for each graph input NAME and
MODEL.NAME.ref.npy for each graph output NAME.

The models:
  fp16_cnn      Conv (pads 1) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm (transB)
                -> Softmax, all float16; the reference computes each op in
                float32 (float64 sums) from the float16 values and rounds to
                float16 after each op, as a float32-accumulating kernel that
                stores float16 does.
  fp16_rnn      Gather (float16 table) -> Unsqueeze -> LSTM -> Squeeze -> Gemm
                (transB) -> Softmax, all float16: the weights tgc keeps narrow.
  bf16_mlp      float32 -> Cast bfloat16 -> Mul -> Add -> MatMul -> Cast float32;
                bfloat16 emulated by rounding float32 to nearest even on the
                bit pattern after each op (numpy has no bfloat16). The input
                holds exact ties (low 16 bits 0x8000) with even and odd kept
                halves, so truncation or round-half-away differ.
  quant_linear  QuantizeLinear per axis (axis 1) to uint8 and int8, per tensor
                to uint8, with exact .5 ties (power-of-two scales) and
                saturation at both ends; DequantizeLinear per axis from uint8
                and int8, per tensor from int32.
  qlinear_matmul  QLinearMatMul uint8 x uint8 -> uint8, non-zero zero points:
                power-of-two scales (requantization ties exact) and ordinary
                scales (no value within 1e-3 of a tie), saturating both ends.
  qlinear_conv  QLinearConv uint8 x, int8 per-output-channel weights, int32 bias,
                pads 1: power-of-two scales with ties, and ordinary scales.
  dynamic_quant_matmul  DynamicQuantizeLinear -> MatMulInteger (int8 weights,
                zero point 0) -> Cast float -> Mul by x_scale * w_scale (ORT's
                dynamic-quantization pattern); a second MatMulInteger with
                uint8 weights and per-column zero points; a second
                DynamicQuantizeLinear of an all-positive input (zero point 0).
  qdq_conv      DequantizeLinear (uint8 x; int8 weights per channel; int32 bias)
                -> Conv -> QuantizeLinear uint8 (static quantization, QDQ): one
                branch with power-of-two scales (every value exact in float32,
                ties exact), one with ordinary scales (no value within 1e-3 of
                a tie, so float error cannot move a result by a step).
  int_conv_paths  ConvInteger and QLinearConv in every way the cpu sums them
                (devices/cpu/kernels_quant_conv.c): depthwise windows with
                strides, dilations, uneven pads, two filters a channel and a
                batch of 2 (uint8 and int8 x, per-channel w zero points); a
                1-D depthwise window; a 3x3 convolution of 72 taps whose
                output is cut into blocks that end mid-row (64 x 72 x 72
                outputs, 4 channels of them compared); a 7x7 depthwise window;
                a 1x1 convolution with
                per-channel w zero points (column sums); a 3-D convolution;
                int8 and uint8 outputs saturating at both ends.

Every rounding to an integer is round half to even (np.rint), then the zero
point is added and the result saturated, as the ONNX definitions say."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


# ---------------------------------------------------------------- helpers

def save_model(name, nodes, inputs, outputs, inits, feeds, refs):
    """Writes NAME.onnx, NAME.<input>.npy and NAME.<output>.ref.npy.
    inputs/outputs: (name, TensorProto type, shape); inits: TensorProtos;
    feeds/refs: name -> numpy array."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="tgc tests/data/dtype_models/make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))
    for n, _, s in inputs:
        a = feeds[n]
        assert list(a.shape) == list(s), (name, n, a.shape, s)
        np.save(os.path.join(HERE, "%s.%s.npy" % (name, n)), a)
    for n, _, s in outputs:
        a = refs[n]
        assert list(a.shape) == list(s), (name, n, a.shape, s)
        np.save(os.path.join(HERE, "%s.%s.ref.npy" % (name, n)), a)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def conv2d(x, w, pads, dtype):
    """NCHW x, OIHW w (group 1, stride 1, dilation 1), symmetric pads, the
    sums in dtype (float64 or int64). No bias."""
    x = x.astype(dtype)
    w = w.astype(dtype)
    n, c, h, wd = x.shape
    o, c2, kh, kw = w.shape
    assert c == c2
    xp = np.zeros((n, c, h + 2 * pads, wd + 2 * pads), dtype)
    xp[:, :, pads:pads + h, pads:pads + wd] = x
    oh, ow = h + 2 * pads - kh + 1, wd + 2 * pads - kw + 1
    y = np.zeros((n, o, oh, ow), dtype)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y


def saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def quantize(x_over_scale, zp, dtype):
    """ONNX QuantizeLinear after the division: saturate(rint(x / scale) + zp)."""
    return saturate(np.rint(x_over_scale) + zp, dtype)


def check_no_near_ties(v, what, margin=1e-3):
    """v: values about to be rounded (in quantized units, float64). Exact
    ties are allowed only where the caller made them exact on purpose; this
    checks the others are at least margin away from one."""
    frac = np.abs(v - np.floor(v) - 0.5)
    assert frac.min() > margin, (what, frac.min())


def ties_count(v):
    return int(np.sum(v - np.floor(v) == 0.5))


# ---------------------------------------------------------------- a. float16 CNN

def nn_ops(t, x, z, a, v):
    """The ops of fp16_nn and fp32_nn (below) on inputs x, z, a and weights
    v, each in float64 from values of dtype t and rounded to t after it (the
    activations with their producer: rounding commutes with Clip and Relu)."""
    f64 = np.float64
    r = lambda y: y.astype(np.float32).astype(t)
    c1 = conv_nd(x, v["w1"], group=8, strides=[2, 2], pads=[1, 1, 1, 1], dtype=f64) \
        + v["b1"].astype(f64).reshape(1, 8, 1, 1)
    r1 = r(np.clip(c1, 0, 6))
    c2 = conv_nd(r1, v["w2"], group=2, pads=[1, 1, 1, 1], dtype=f64) + v["b2"].astype(f64).reshape(1, 12, 1, 1)
    r2 = r(np.maximum(c2, 0))
    scale = v["s"].astype(f64) / np.sqrt(v["var"].astype(f64) + 1e-5)
    bn = r(r2.astype(f64) * scale.reshape(1, 12, 1, 1)
           + (v["bias"].astype(f64) - v["mean"].astype(f64) * scale).reshape(1, 12, 1, 1))
    bp = np.pad(bn.astype(f64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    ones = np.pad(np.ones((5, 5)), 1)
    sums = sum(bp[:, :, i:i + 5, j:j + 5] for i in range(3) for j in range(3))
    counts = sum(ones[i:i + 5, j:j + 5] for i in range(3) for j in range(3))
    ap = r(sums / counts)                                      # count_include_pad 0
    mp = ap[:, :, :4, :4].reshape(1, 12, 2, 2, 2, 2).max(axis=(3, 5))
    gap = r(bn.astype(f64).mean(axis=(2, 3), keepdims=True))
    gemm = r(0.5 * (mp.reshape(1, 48).astype(f64) @ v["gw"].astype(f64)) + 2.0 * v["gc"].astype(f64))
    zf = z.astype(f64)
    mean = zf.mean(axis=-1, keepdims=True)
    ln = r((zf - mean) / np.sqrt(((zf - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
           * v["gamma"].astype(f64) + v["beta"].astype(f64))
    mm = r(np.matmul(a.astype(f64), v["bm"].astype(f64)))
    return {"mp": mp, "gap": gap, "gemm": gemm, "ln": ln, "mm": mm}


def nn_models(rng):
    """fp16_nn: the gpu's float16 kernels (kernels/nn.cl's NN_HALF build),
    each way: a depthwise Conv (stride 2) with a Clip it takes in, a grouped
    Conv with a Relu, BatchNormalization (after the Relu, so not folded),
    AveragePool (pads, count_include_pad 0), MaxPool, GlobalAveragePool,
    Gemm (alpha 0.5, beta 2, C broadcast), LayerNormalization, and a MatMul
    whose batch broadcasts ([2, 3] against [3]: one GEMM per matrix), all
    float16. fp32_nn: the same graph and values in float32, its reference
    in float32, for `tgc run --float16` (the pass compute-in-float16) and
    for float32 itself."""
    f16 = np.float16
    v = {"w1": rng.standard_normal((8, 1, 3, 3)) * 0.5, "b1": rng.standard_normal(8) * 0.1,
         "w2": rng.standard_normal((12, 4, 3, 3)) * 0.25, "b2": rng.standard_normal(12) * 0.1,
         "s": rng.uniform(0.5, 1.5, 12), "bias": rng.standard_normal(12) * 0.1,
         "mean": rng.uniform(0, 0.5, 12), "var": rng.uniform(0.5, 2, 12),
         "gw": rng.standard_normal((48, 10)) * 0.25, "gc": rng.standard_normal((1, 10)) * 0.1,
         "gamma": rng.uniform(0.5, 1.5, 16), "beta": rng.standard_normal(16) * 0.1,
         "bm": rng.standard_normal((3, 5, 6)) * 0.5}
    v = {k: a.astype(f16) for k, a in v.items()}  # float16 values: exact in float32 too
    x = rng.uniform(-1, 1, (1, 8, 10, 10)).astype(f16)
    z = rng.uniform(-2, 2, (2, 3, 16)).astype(f16)
    a = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(f16)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], group=8, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], group=2, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("BatchNormalization", ["r2", "s", "bias", "mean", "var"], ["bn"]),
        helper.make_node("AveragePool", ["bn"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["ap"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["bn"], ["gap"]),
        helper.make_node("Flatten", ["mp"], ["flat"]),
        helper.make_node("Gemm", ["flat", "gw", "gc"], ["gemm"], alpha=0.5, beta=2.0),
        helper.make_node("LayerNormalization", ["z", "gamma", "beta"], ["ln"], axis=-1),
        helper.make_node("MatMul", ["a", "bm"], ["mm"]),
    ]
    shapes = {"mp": [1, 12, 2, 2], "gap": [1, 12, 1, 1], "gemm": [1, 10], "ln": [2, 3, 16], "mm": [2, 3, 4, 6]}
    refs = {}
    for name, t, code in (("fp16_nn", f16, TensorProto.FLOAT16), ("fp32_nn", np.float32, TensorProto.FLOAT)):
        vt = {k: a.astype(t) for k, a in v.items()}
        inits = [init(k, a) for k, a in vt.items()] + [init("lo", t(0)), init("hi", t(6))]
        feeds = {"x": x.astype(t), "z": z.astype(t), "a": a.astype(t)}
        refs[name] = nn_ops(t, feeds["x"], feeds["z"], feeds["a"], vt)
        save_model(name, nodes, [("x", code, [1, 8, 10, 10]), ("z", code, [2, 3, 16]), ("a", code, [2, 3, 4, 5])],
                   [(n, code, s) for n, s in shapes.items()], inits, feeds, refs[name])
    for n in shapes:  # how far float16 rounding after every op takes each output from float32's
        d = np.abs(refs["fp16_nn"][n].astype(np.float64) - refs["fp32_nn"][n]).max()
        print("%s: |value| <= %.3f, float16 from float32 by %.2e" % (n, np.abs(refs["fp32_nn"][n]).max(), d))


def fp16_cnn(rng):
    f16 = np.float16
    x = rng.uniform(-1, 1, (1, 3, 8, 8)).astype(f16)
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.25).astype(f16)
    b = (rng.standard_normal(4) * 0.1).astype(f16)
    gw = (rng.standard_normal((10, 64)) * 0.2).astype(f16)
    gb = (rng.standard_normal(10) * 0.1).astype(f16)

    # each op in float32 (sums in float64) from float16 values, rounded to float16
    conv = (conv2d(x, w, 1, np.float64) + b.astype(np.float64).reshape(1, 4, 1, 1)) \
        .astype(np.float32).astype(f16)
    relu = np.maximum(conv, f16(0))
    pool = relu.reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    flat = pool.reshape(1, 64)
    logits = (flat.astype(np.float64) @ gw.astype(np.float64).T + gb.astype(np.float64)) \
        .astype(np.float32).astype(f16)
    l32 = logits.astype(np.float32)
    e = np.exp(l32 - l32.max(axis=-1, keepdims=True))
    probs = (e / e.sum(axis=-1, keepdims=True)).astype(f16)

    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "gw", "gb"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    F = TensorProto.FLOAT16
    save_model("fp16_cnn", nodes, [("x", F, [1, 3, 8, 8])],
               [("conv", F, [1, 4, 8, 8]), ("logits", F, [1, 10]), ("probs", F, [1, 10])],
               [init("w", w), init("b", b), init("gw", gw), init("gb", gb)],
               {"x": x}, {"conv": conv, "logits": logits, "probs": probs})
    print("fp16_cnn: |conv| <= %.3f, |logits| <= %.3f, probs <= %.3f"
          % (np.abs(conv).max(), np.abs(logits).max(), probs.max()))


def fp16_rnn(rng):
    """Gather from a float16 embedding table -> Unsqueeze -> LSTM (float16 W,
    R, B) -> Squeeze -> Gemm (transB) -> Softmax: the weights tgc keeps in
    half precision (the table read in place, W and R by _LSTMHalfWeight, the
    Gemm's by _MatMulHalfWeight). Each op in float64 from float16 values,
    rounded to float16 after it (the LSTM as one op)."""
    f16 = np.float16
    seq, inp, hid, vocab, classes = 5, 8, 6, 20, 4
    table = (rng.standard_normal((vocab, inp)) * 0.5).astype(f16)
    w = (rng.standard_normal((1, 4 * hid, inp)) * 0.3).astype(f16)
    r = (rng.standard_normal((1, 4 * hid, hid)) * 0.3).astype(f16)
    bias = (rng.standard_normal((1, 8 * hid)) * 0.1).astype(f16)
    gw = (rng.standard_normal((classes, hid)) * 0.5).astype(f16)
    gb = (rng.standard_normal(classes) * 0.1).astype(f16)
    ids = np.array([3, 17, 0, 9, 3], dtype=np.int64)

    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    x = table[ids].astype(np.float64)                     # Gather, exact
    W, R, B = w[0].astype(np.float64), r[0].astype(np.float64), bias[0].astype(np.float64)
    h, c = np.zeros(hid), np.zeros(hid)
    for t in range(seq):                                  # ONNX LSTM, gates i, o, f, c
        g = W @ x[t] + R @ h + B[:4 * hid] + B[4 * hid:]
        i, o, f, cc = sig(g[:hid]), sig(g[hid:2 * hid]), sig(g[2 * hid:3 * hid]), np.tanh(g[3 * hid:])
        c = f * c + i * cc
        h = o * np.tanh(c)
    yh = h.astype(f16)                                    # the LSTM's Y_h, rounded once
    logits = (yh.astype(np.float64) @ gw.astype(np.float64).T + gb.astype(np.float64)) \
        .astype(np.float32).astype(f16).reshape(1, classes)
    l32 = logits.astype(np.float32)
    e = np.exp(l32 - l32.max(axis=-1, keepdims=True))
    probs = (e / e.sum(axis=-1, keepdims=True)).astype(f16)

    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["emb"]),
        helper.make_node("Unsqueeze", ["emb", "axis1"], ["x"]),
        helper.make_node("LSTM", ["x", "w", "r", "bias"], ["", "yh"], hidden_size=hid),
        helper.make_node("Squeeze", ["yh", "axis0"], ["h"]),
        helper.make_node("Gemm", ["h", "gw", "gb"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    F = TensorProto.FLOAT16
    save_model("fp16_rnn", nodes, [("ids", TensorProto.INT64, [seq])],
               [("logits", F, [1, classes]), ("probs", F, [1, classes])],
               [init("table", table), init("w", w), init("r", r), init("bias", bias), init("gw", gw),
                init("gb", gb), init("axis1", np.array([1], np.int64)), init("axis0", np.array([0], np.int64))],
               {"ids": ids}, {"logits": logits, "probs": probs})
    print("fp16_rnn: |logits| <= %.3f, probs <= %.3f" % (np.abs(logits).max(), probs.max()))


# ---------------------------------------------------------------- b. bfloat16

def bf16_round(a):
    """float32 -> the nearest bfloat16 (ties to even), as float32: on the bit
    pattern, add 0x7fff plus the kept half's lowest bit, clear the low 16."""
    u = np.asarray(a, np.float32).view(np.uint32)
    assert np.all((u & 0x7f800000) != 0x7f800000)  # no inf/nan here
    lsb = (u >> np.uint32(16)) & np.uint32(1)
    r = (u + np.uint32(0x7fff) + lsb) & np.uint32(0xffff0000)
    return r.view(np.float32)


def bf16_tensor(name, a):
    """A BFLOAT16 initializer from float32 values that are bfloat16 already."""
    a = np.asarray(a, np.float32)
    assert np.array_equal(bf16_round(a), a)
    hi = (a.view(np.uint32) >> np.uint32(16)).astype("<u2")
    return helper.make_tensor(name, TensorProto.BFLOAT16, list(a.shape), hi.tobytes(), raw=True)


def bf16_mlp(rng):
    x = rng.uniform(-2, 2, (3, 8)).astype(np.float32)
    # row 0: exact ties, kept half even (rounds down) and odd (rounds up), both signs
    u = x.view(np.uint32)
    u[0, :] = (u[0, :] & np.uint32(0xffff0000)) | np.uint32(0x8000)
    u[0, 0:4] &= np.uint32(0xfffeffff)          # even kept half
    u[0, 4:8] |= np.uint32(0x00010000)          # odd kept half
    # row 1: just below and just above a tie
    u[1, 0:4] = (u[1, 0:4] & np.uint32(0xffff0000)) | np.uint32(0x7fff)
    u[1, 4:8] = (u[1, 4:8] & np.uint32(0xffff0000)) | np.uint32(0x8001)
    x = u.view(np.float32)
    s = bf16_round(rng.uniform(0.5, 1.5, 8).astype(np.float32))
    b = bf16_round(rng.uniform(-0.5, 0.5, 8).astype(np.float32))
    w = bf16_round((rng.standard_normal((8, 5)) * 0.4).astype(np.float32))

    xb = bf16_round(x)
    assert not np.array_equal(xb, (x.view(np.uint32) & np.uint32(0xffff0000)).view(np.float32))
    m = bf16_round(xb * s)                       # exact in float32, one rounding
    a = bf16_round(m + b)                        # float32 add, then bfloat16
    y = bf16_round((a.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))

    BF, F = TensorProto.BFLOAT16, TensorProto.FLOAT
    nodes = [
        helper.make_node("Cast", ["x"], ["xb"], to=BF),
        helper.make_node("Cast", ["xb"], ["xr"], to=F),
        helper.make_node("Mul", ["xb", "s"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Cast", ["a"], ["ar"], to=F),
        helper.make_node("MatMul", ["a", "w"], ["yb"]),
        helper.make_node("Cast", ["yb"], ["y"], to=F),
    ]
    save_model("bf16_mlp", nodes, [("x", F, [3, 8])],
               [("xr", F, [3, 8]), ("ar", F, [3, 8]), ("y", F, [3, 5])],
               [bf16_tensor("s", s), bf16_tensor("b", b), bf16_tensor("w", w)],
               {"x": x}, {"xr": xb, "ar": a, "y": y})
    print("bf16_mlp: |y| <= %.3f" % np.abs(y).max())


# ---------------------------------------------------------------- c. quantized ops

def quant_linear(rng):
    # x [2,3,8], axis 1: channel 0 scale 0.5, channel 1 scale 0.1 (no ties
    # near), channel 2 scale 0.25. Row n=0 of channels 0 and 2: exact ties
    # x/scale = k + 0.5; row n=1: saturation of uint8 and int8 at both ends.
    ties = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.5], np.float32)
    x = np.zeros((2, 3, 8), np.float32)
    x[0, 0] = ties * 0.5
    x[0, 2] = (ties + np.float32(10)) * 0.25   # 7.5 .. 13.5 with the same parities
    x[1, 0] = [-200, -64.25, -64.0, -63.75, 63.5, 63.75, 64.0, 300]   # /0.5: around -128.5 .. 127.5
    x[1, 2] = [-100, -33.0, -32.125, -31.875, 31.625, 32.125, 33.0, 1e4]
    x[:, 1] = rng.uniform(-20, 20, (2, 8)).astype(np.float32)
    x[1, 1, 0], x[1, 1, 7] = -50.0, 40.0
    scale = np.array([0.5, 0.1, 0.25], np.float32)
    zp_u8 = np.array([128, 7, 3], np.uint8)
    zp_i8 = np.array([0, -9, -5], np.int8)
    t_scale = np.float32(0.25)
    t_zp = np.uint8(10)

    q = x / scale.reshape(1, 3, 1)                      # float32 division, as defined
    qa = q.astype(np.float64)
    check_no_near_ties(qa[:, 1], "quant_linear channel 1")
    assert ties_count(qa[:, [0, 2]]) >= 16
    y_u8 = quantize(qa, zp_u8.astype(np.int64).reshape(1, 3, 1), np.uint8)
    y_i8 = quantize(qa, zp_i8.astype(np.int64).reshape(1, 3, 1), np.int8)
    qt = (x / t_scale).astype(np.float64)
    y_t = quantize(qt, int(t_zp), np.uint8)
    assert (y_u8 == 0).any() and (y_u8 == 255).any() and (y_i8 == -128).any() and (y_i8 == 127).any()
    assert (y_t == 0).any() and (y_t == 255).any()

    # DequantizeLinear: (q - zp) * scale, one float32 rounding
    qu = rng.integers(0, 256, (2, 3, 8)).astype(np.uint8)
    qu[0, :, 0], qu[0, :, 1] = 0, 255
    qi = rng.integers(-128, 128, (2, 3, 8)).astype(np.int8)
    qi[0, :, 0], qi[0, :, 1] = -128, 127
    q32 = np.array([-2000000, -65537, -1, 0, 1, 3, 65536, 16777215], np.int32)
    dq_scale = np.array([0.5, 0.1, 0.03125], np.float32)
    dq_zp_u8 = np.array([128, 0, 255], np.uint8)
    dq_zp_i8 = np.array([-128, 0, 5], np.int8)
    s32 = np.float32(0.001)
    dq_u8 = ((qu.astype(np.int32) - dq_zp_u8.astype(np.int32).reshape(1, 3, 1)).astype(np.float32)
             * dq_scale.reshape(1, 3, 1)).astype(np.float32)
    dq_i8 = ((qi.astype(np.int32) - dq_zp_i8.astype(np.int32).reshape(1, 3, 1)).astype(np.float32)
             * dq_scale.reshape(1, 3, 1)).astype(np.float32)
    dq_i32 = (q32.astype(np.float32) * s32).astype(np.float32)

    F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zp_u8"], ["y_u8"], axis=1),
        helper.make_node("QuantizeLinear", ["x", "scale", "zp_i8"], ["y_i8"], axis=1),
        helper.make_node("QuantizeLinear", ["x", "t_scale", "t_zp"], ["y_t"]),
        helper.make_node("DequantizeLinear", ["qu", "dq_scale", "dq_zp_u8"], ["dq_u8"], axis=1),
        helper.make_node("DequantizeLinear", ["qi", "dq_scale", "dq_zp_i8"], ["dq_i8"], axis=1),
        helper.make_node("DequantizeLinear", ["q32", "s32"], ["dq_i32"]),
    ]
    save_model("quant_linear", nodes,
               [("x", F, [2, 3, 8]), ("qu", U8, [2, 3, 8]), ("qi", I8, [2, 3, 8]), ("q32", I32, [8])],
               [("y_u8", U8, [2, 3, 8]), ("y_i8", I8, [2, 3, 8]), ("y_t", U8, [2, 3, 8]),
                ("dq_u8", F, [2, 3, 8]), ("dq_i8", F, [2, 3, 8]), ("dq_i32", F, [8])],
               [init("scale", scale), init("zp_u8", zp_u8), init("zp_i8", zp_i8),
                init("t_scale", t_scale), init("t_zp", t_zp),
                init("dq_scale", dq_scale), init("dq_zp_u8", dq_zp_u8), init("dq_zp_i8", dq_zp_i8),
                init("s32", s32)],
               {"x": x, "qu": qu, "qi": qi, "q32": q32},
               {"y_u8": y_u8, "y_i8": y_i8, "y_t": y_t, "dq_u8": dq_u8, "dq_i8": dq_i8, "dq_i32": dq_i32})
    print("quant_linear: %d exact ties" % (ties_count(qa) + ties_count(qt)))


def qlinear_matmul(rng):
    # a [2,4,6] uint8 around a_zp = 120, b [6,5] uint8 around b_zp = 130;
    # a's rows 0 and 1 of batch 1 at 255 and 0 push the sums past both ends.
    a_zp, b_zp = np.uint8(120), np.uint8(130)
    a = (a_zp.astype(np.int64) + rng.integers(-12, 13, (2, 4, 6))).astype(np.uint8)
    a[1, 0, :] = 255
    a[1, 1, :] = 0
    b = (b_zp.astype(np.int64) + rng.integers(-12, 13, (6, 5))).astype(np.uint8)
    b[:, 0] = 255          # a column far from b_zp, so the extreme rows saturate
    acc = (a.astype(np.int64) - int(a_zp)) @ (b.astype(np.int64) - int(b_zp))

    # 1: power-of-two scales, a_scale * b_scale / y_scale = 0.25 exactly
    s1 = [np.float32(0.5), np.float32(0.125), np.float32(0.25)]
    y1_zp = np.uint8(128)
    v1 = acc * 0.25
    y1 = quantize(v1, int(y1_zp), np.uint8)
    assert ties_count(v1) >= 4, ties_count(v1)
    # 2: ordinary scales; no sum within 1e-3 of a tie
    s2 = [np.float32(0.0173), np.float32(0.0091), np.float32(0.0123)]
    y2_zp = np.uint8(100)
    v2 = acc * (np.float64(s2[0]) * np.float64(s2[1]) / np.float64(s2[2]))
    check_no_near_ties(v2, "qlinear_matmul y2")
    y2 = quantize(v2, int(y2_zp), np.uint8)
    for y in (y1, y2):
        assert (y == 0).any() and (y == 255).any()

    U8 = TensorProto.UINT8
    nodes = [
        helper.make_node("QLinearMatMul", ["a", "a_s1", "a_zp", "b", "b_s1", "b_zp", "y_s1", "y1_zp"], ["y1"]),
        helper.make_node("QLinearMatMul", ["a", "a_s2", "a_zp", "b", "b_s2", "b_zp", "y_s2", "y2_zp"], ["y2"]),
    ]
    inits = [init("a_zp", a_zp), init("b", b), init("b_zp", b_zp),
             init("a_s1", s1[0]), init("b_s1", s1[1]), init("y_s1", s1[2]), init("y1_zp", y1_zp),
             init("a_s2", s2[0]), init("b_s2", s2[1]), init("y_s2", s2[2]), init("y2_zp", y2_zp)]
    save_model("qlinear_matmul", nodes, [("a", U8, [2, 4, 6])],
               [("y1", U8, [2, 4, 5]), ("y2", U8, [2, 4, 5])], inits,
               {"a": a}, {"y1": y1, "y2": y2})
    print("qlinear_matmul: %d exact ties" % ties_count(v1))


def qlinear_conv(rng):
    # x [1,2,6,6] uint8 around x_zp = 100, a 2x2 patch at 255 and one at 0;
    # w [3,2,3,3] int8 per output channel (zero points 0), bias int32 [3].
    x_zp = np.uint8(100)
    x = (int(x_zp) + rng.integers(-4, 5, (1, 2, 6, 6))).astype(np.uint8)
    x[0, :, 0:2, 0:2] = 255
    x[0, :, 4:6, 4:6] = 0
    w = rng.integers(-3, 4, (3, 2, 3, 3)).astype(np.int8)
    w_zp = np.zeros(3, np.int8)
    bias = np.array([7, -20, 33], np.int32)
    acc = conv2d(x.astype(np.int64) - int(x_zp), w.astype(np.int64), 1, np.int64) \
        + bias.astype(np.int64).reshape(1, 3, 1, 1)

    # 1: power-of-two scales: x 2^-4, w 2^-3, 2^-4, 2^-5, y 2^-6 -> 1/2, 1/4, 1/8
    x_s1 = np.float32(0.0625)
    w_s1 = np.array([0.125, 0.0625, 0.03125], np.float32)
    y_s1 = np.float32(0.015625)
    y1_zp = np.uint8(128)
    v1 = acc * np.array([0.5, 0.25, 0.125]).reshape(1, 3, 1, 1)
    y1 = quantize(v1, int(y1_zp), np.uint8)
    assert ties_count(v1) >= 8, ties_count(v1)
    # 2: ordinary scales, no value within 1e-3 of a tie
    x_s2 = np.float32(0.0217)
    w_s2 = np.array([0.0113, 0.0171, 0.0259], np.float32)
    y_s2 = np.float32(0.00131)
    y2_zp = np.uint8(90)
    v2 = acc * (np.float64(x_s2) * w_s2.astype(np.float64) / np.float64(y_s2)).reshape(1, 3, 1, 1)
    check_no_near_ties(v2, "qlinear_conv y2")
    y2 = quantize(v2, int(y2_zp), np.uint8)
    for y in (y1, y2):
        assert (y == 0).any() and (y == 255).any()

    U8 = TensorProto.UINT8
    ins = lambda xs, ws, ys, yzp: ["x", xs, "x_zp", "w", ws, "w_zp", ys, yzp, "bias"]
    nodes = [
        helper.make_node("QLinearConv", ins("x_s1", "w_s1", "y_s1", "y1_zp"), ["y1"],
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("QLinearConv", ins("x_s2", "w_s2", "y_s2", "y2_zp"), ["y2"],
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
    ]
    inits = [init("x_zp", x_zp), init("w", w), init("w_zp", w_zp), init("bias", bias),
             init("x_s1", x_s1), init("w_s1", w_s1), init("y_s1", y_s1), init("y1_zp", y1_zp),
             init("x_s2", x_s2), init("w_s2", w_s2), init("y_s2", y_s2), init("y2_zp", y2_zp)]
    save_model("qlinear_conv", nodes, [("x", U8, [1, 2, 6, 6])],
               [("y1", U8, [1, 3, 6, 6]), ("y2", U8, [1, 3, 6, 6])], inits,
               {"x": x}, {"y1": y1, "y2": y2})
    print("qlinear_conv: %d exact ties" % ties_count(v1))


def dynamic_quantize(x):
    """ONNX DynamicQuantizeLinear, float32 as defined: scale = (max(0, max x)
    - min(0, min x)) / 255, zero point = saturate(rint(0 - min / scale)),
    y = saturate(rint(x / scale) + zero point)."""
    lo = np.minimum(np.float32(0), x.min())
    hi = np.maximum(np.float32(0), x.max())
    scale = np.float32((hi - lo) / np.float32(255))
    izp = np.float32(np.float32(0) - lo / scale)
    if izp != np.rint(izp):
        check_no_near_ties(np.array([izp], np.float64), "dynamic zero point")
    zp = np.uint8(np.clip(np.rint(izp), 0, 255))
    q = (x / scale).astype(np.float64)
    y = quantize(q, int(zp), np.uint8)
    return y, scale, zp, q


def dynamic_quant_matmul(rng):
    # x [4,8] spanning exactly [-2, 5.96875], so scale = 7.96875 / 255 = 2^-5
    # and the zero point 64 exactly; row 0 holds exact ties x = (k + .5) / 32.
    x = rng.uniform(-2, 5.96875, (4, 8)).astype(np.float32)
    x[0, :] = (np.array([-60, -31, -1, 0, 1, 2, 101, 150]) + 0.5) / 32
    x[1, 0], x[1, 1] = -2.0, 5.96875
    y, scale, zp, q = dynamic_quantize(x)
    assert scale == np.float32(0.03125) and zp == 64
    others = np.ones_like(q, bool)
    others[0, :] = False
    check_no_near_ties(q[others], "dynamic x")
    assert ties_count(q) == 8
    # x2 all positive: min is 0, zero point 0
    x2 = rng.uniform(0.25, 3.0, (2, 8)).astype(np.float32)
    y2, scale2, zp2, q2 = dynamic_quantize(x2)
    assert zp2 == 0
    check_no_near_ties(q2[q2 < 254.9], "dynamic x2")   # the max itself is exactly 255

    w = rng.integers(-127, 128, (8, 5)).astype(np.int8)
    w_zp = np.int8(0)
    w_scale = np.float32(0.0042)
    acc = (y.astype(np.int32) - int(zp)) @ (w.astype(np.int32) - int(w_zp))
    mult = np.float32(scale * w_scale)
    out = (acc.astype(np.float32) * mult).astype(np.float32)
    wu = rng.integers(0, 256, (8, 5)).astype(np.uint8)
    wu_zp = np.array([0, 1, 128, 200, 255], np.uint8)
    acc2 = (y.astype(np.int32) - int(zp)) @ (wu.astype(np.int32) - wu_zp.astype(np.int32))

    F, U8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT32
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "x_scale", "x_zp"]),
        helper.make_node("MatMulInteger", ["xq", "w", "x_zp", "w_zp"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["acc_f"], to=F),
        helper.make_node("Mul", ["x_scale", "w_scale"], ["mult"]),
        helper.make_node("Mul", ["acc_f", "mult"], ["y"]),
        helper.make_node("MatMulInteger", ["xq", "wu", "x_zp", "wu_zp"], ["acc2"]),
        helper.make_node("DynamicQuantizeLinear", ["x2"], ["x2q", "x2_scale", "x2_zp"]),
    ]
    save_model("dynamic_quant_matmul", nodes, [("x", F, [4, 8]), ("x2", F, [2, 8])],
               [("xq", U8, [4, 8]), ("x_scale", F, []), ("x_zp", U8, []), ("acc", I32, [4, 5]),
                ("y", F, [4, 5]), ("acc2", I32, [4, 5]),
                ("x2q", U8, [2, 8]), ("x2_scale", F, []), ("x2_zp", U8, [])],
               [init("w", w), init("w_zp", w_zp), init("w_scale", w_scale),
                init("wu", wu), init("wu_zp", wu_zp)],
               {"x": x, "x2": x2},
               {"xq": y, "x_scale": np.array(scale, np.float32), "x_zp": np.array(zp, np.uint8),
                "acc": acc.astype(np.int32), "y": out, "acc2": acc2.astype(np.int32),
                "x2q": y2, "x2_scale": np.array(scale2, np.float32), "x2_zp": np.array(zp2, np.uint8)})
    print("dynamic_quant_matmul: |y| <= %.3f" % np.abs(out).max())


# ---------------------------------------------------------------- d. QDQ

def qdq_conv(rng):
    # x [1,3,6,6] uint8 around 128 with a patch at 255 and one at 0, w [4,3,3,3]
    # int8 per output channel (axis 0, zero points 0), bias int32 per channel
    # with scale x_scale * w_scale.
    x = (128 + rng.integers(-6, 7, (1, 3, 6, 6))).astype(np.uint8)
    x[0, :, 0:2, 0:2] = 255
    x[0, :, 4:6, 4:6] = 0
    w = rng.integers(-4, 5, (4, 3, 3, 3)).astype(np.int8)
    bias = np.array([11, -37, 64, 0], np.int32)
    w_zp = np.zeros(4, np.int8)
    b_zp = np.zeros(4, np.int32)
    branches = {
        # 1: powers of two: every dequantized value, product and sum exact in float32
        1: dict(x_s=np.float32(0.0625), x_zp=np.uint8(128),
                w_s=np.array([0.25, 0.125, 0.0625, 0.03125], np.float32),
                y_s=np.float32(0.0625), y_zp=np.uint8(120)),
        # 2: ordinary scales (no value within 1e-3 of a tie)
        2: dict(x_s=np.float32(0.0197), x_zp=np.uint8(128),
                w_s=np.array([0.0113, 0.0089, 0.0157, 0.0061], np.float32),
                y_s=np.float32(0.0021), y_zp=np.uint8(131)),
    }
    nodes, inits, refs, outs = [], [init("w", w), init("w_zp", w_zp), init("bias", bias), init("b_zp", b_zp)], {}, []
    U8 = TensorProto.UINT8
    for k, p in branches.items():
        b_s = (p["x_s"] * p["w_s"]).astype(np.float32)
        xf = ((x.astype(np.int32) - int(p["x_zp"])).astype(np.float32) * p["x_s"]).astype(np.float32)
        wf = (w.astype(np.float32) * p["w_s"].reshape(4, 1, 1, 1)).astype(np.float32)
        bf = (bias.astype(np.float32) * b_s).astype(np.float32)
        conv = conv2d(xf, wf, 1, np.float64) + bf.astype(np.float64).reshape(1, 4, 1, 1)
        v = conv / np.float64(p["y_s"])
        if k == 1:
            assert ties_count(v) >= 8, ties_count(v)
        else:
            check_no_near_ties(v, "qdq_conv y2")
        y = quantize(v, int(p["y_zp"]), np.uint8)
        assert (y == 0).any() and (y == 255).any()
        refs["y%d" % k] = y
        outs.append(("y%d" % k, U8, [1, 4, 6, 6]))
        s = str(k)
        nodes += [
            helper.make_node("DequantizeLinear", ["x", "x_s" + s, "x_zp" + s], ["xf" + s]),
            helper.make_node("DequantizeLinear", ["w", "w_s" + s, "w_zp"], ["wf" + s], axis=0),
            helper.make_node("DequantizeLinear", ["bias", "b_s" + s, "b_zp"], ["bf" + s], axis=0),
            helper.make_node("Conv", ["xf" + s, "wf" + s, "bf" + s], ["conv" + s],
                             pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            helper.make_node("QuantizeLinear", ["conv" + s, "y_s" + s, "y_zp" + s], ["y" + s]),
        ]
        inits += [init("x_s" + s, p["x_s"]), init("x_zp" + s, p["x_zp"]), init("w_s" + s, p["w_s"]),
                  init("b_s" + s, b_s), init("y_s" + s, p["y_s"]), init("y_zp" + s, p["y_zp"])]
        print("qdq_conv y%d: %d exact ties" % (k, ties_count(v)))
    save_model("qdq_conv", nodes, [("x", U8, [1, 3, 6, 6])], outs, inits, {"x": x}, refs)


def conv_nd(x, w, group=1, strides=None, dilations=None, pads=None, dtype=np.int64):
    """ONNX Conv in dtype (int64, or float64): x [N, C, D...], w [M, C /
    group, K...], pads begins then ends; a loop over the taps, each a
    strided slice of the padded input."""
    x = x.astype(dtype)
    w = w.astype(dtype)
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    ks = w.shape[2:]
    r = len(ks)
    strides = strides or [1] * r
    dilations = dilations or [1] * r
    pads = pads or [0] * (2 * r)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[a], pads[r + a]) for a in range(r)])
    outs = [(xp.shape[2 + a] - dilations[a] * (ks[a] - 1) - 1) // strides[a] + 1 for a in range(r)]
    y = np.zeros([n, m] + outs, dtype)
    mg = m // group
    for tap in np.ndindex(*ks):
        sl = tuple(slice(tap[a] * dilations[a], tap[a] * dilations[a] + (outs[a] - 1) * strides[a] + 1, strides[a])
                   for a in range(r))
        for g in range(group):
            xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            ws = w[(slice(g * mg, (g + 1) * mg), slice(None)) + tuple(tap)]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", xs, ws)
    return y


def int_conv_paths(rng):
    U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
    x = rng.integers(0, 256, (2, 8, 23, 19)).astype(np.uint8)
    x8 = rng.integers(-128, 128, (1, 4, 30)).astype(np.int8)
    xb = rng.integers(0, 256, (1, 8, 72, 72)).astype(np.uint8)
    xp = rng.integers(0, 256, (1, 40, 9, 9)).astype(np.uint8)
    x3 = rng.integers(-128, 128, (1, 3, 5, 6, 7)).astype(np.int8)
    xc = rng.integers(0, 256, (2, 32, 11, 13)).astype(np.uint8)
    xc8 = rng.integers(-128, 128, (1, 16, 10, 9)).astype(np.int8)
    nodes, inits, refs, outs = [], [], {}, []

    def conv_integer(name, xname, xv, x_zp, w, w_zp, **attrs):
        inits.extend([init(name + "_w", w), init(name + "_xzp", x_zp), init(name + "_wzp", w_zp)])
        nodes.append(helper.make_node("ConvInteger", [xname, name + "_w", name + "_xzp", name + "_wzp"], [name],
                                      **attrs))
        wz = w_zp.astype(np.int64).reshape([-1] + [1] * (w.ndim - 1)) if w_zp.ndim else int(w_zp)
        y = conv_nd(xv.astype(np.int64) - int(x_zp), w.astype(np.int64) - wz, attrs.get("group", 1),
                    attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"))
        assert np.abs(y).max() < 2 ** 31
        refs[name] = y.astype(np.int32)
        outs.append((name, I32, list(y.shape)))

    def qlinear_conv(name, xname, xv, x_s, x_zp, w, w_s, y_s, y_zp, bias, keep=None, **attrs):
        m = w.shape[0]
        inits.extend([init(name + "_w", w), init(name + "_xs", x_s), init(name + "_xzp", x_zp),
                      init(name + "_ws", w_s), init(name + "_wzp", np.zeros(m, w.dtype)), init(name + "_ys", y_s),
                      init(name + "_yzp", y_zp), init(name + "_b", bias)])
        ins = [xname, name + "_xs", name + "_xzp", name + "_w", name + "_ws", name + "_wzp", name + "_ys",
               name + "_yzp", name + "_b"]
        acc = conv_nd(xv.astype(np.int64) - int(x_zp), w, attrs.get("group", 1), attrs.get("strides"),
                      attrs.get("dilations"), attrs.get("pads"))
        acc = acc + bias.astype(np.int64).reshape([1, m] + [1] * (acc.ndim - 2))
        mult = np.float64(x_s) * w_s.astype(np.float64) / np.float64(y_s)
        v = acc * mult.reshape([1, m] + [1] * (acc.ndim - 2))
        # power-of-two scales: the float32 multiplier and every product are
        # exact, so ties are exact ties (half to even) here and in any kernel
        assert all(np.frexp(s)[0] == 0.5 for s in [x_s, y_s] + list(w_s)), name
        y = quantize(v, int(y_zp), y_zp.dtype)
        info = np.iinfo(y_zp.dtype)
        assert (y == info.min).any() and (y == info.max).any(), (name, v.min(), v.max(), np.abs(v).mean())
        out = name
        if keep is not None:  # only some channels go out: Gather is exact
            out = name + "_some"
            inits.append(init(name + "_keep", np.array(keep, np.int64)))
            nodes.append(helper.make_node("QLinearConv", ins, [name], **attrs))
            nodes.append(helper.make_node("Gather", [name, name + "_keep"], [out], axis=1))
            y = y[:, keep]
        else:
            nodes.append(helper.make_node("QLinearConv", ins, [name], **attrs))
        refs[out] = y
        outs.append((out, U8 if y_zp.dtype == np.uint8 else I8, list(y.shape)))

    # depthwise, uint8 x and w, per-channel w zero points, strided, dilated, uneven pads
    conv_integer("dw_strided", "x", x, np.uint8(77), rng.integers(0, 256, (8, 1, 3, 3)).astype(np.uint8),
                 rng.integers(0, 256, 8).astype(np.uint8), group=8, strides=[2, 2], pads=[1, 0, 2, 1],
                 dilations=[1, 2], kernel_shape=[3, 3])
    # depthwise, two int8 filters a channel, 5x5 (25 taps)
    conv_integer("dw_mult", "x", x, np.uint8(130), rng.integers(-128, 128, (16, 1, 5, 5)).astype(np.int8),
                 np.int8(0), group=8, pads=[2, 2, 2, 2])
    # 1-D depthwise, int8 x with a negative zero point, stride 3
    conv_integer("dw_1d", "x8", x8, np.int8(-9), rng.integers(-128, 128, (4, 1, 5)).astype(np.int8),
                 np.int8(3), group=4, strides=[3], pads=[2, 1])
    # 1x1 with per-channel w zero points: 40 taps through the GEMM, with column sums
    conv_integer("pointwise_zp", "xp", xp, np.uint8(3), rng.integers(0, 256, (24, 40, 1, 1)).astype(np.uint8),
                 rng.integers(0, 256, 24).astype(np.uint8))
    # 3-D, int8 x and w
    conv_integer("conv3d", "x3", x3, np.int8(5), rng.integers(-128, 128, (4, 3, 2, 3, 2)).astype(np.int8),
                 np.int8(-2), strides=[1, 2, 1], pads=[0, 1, 1, 1, 0, 0])
    # QLinearConv depthwise, int8 weights per channel, uint8 and int8 outputs
    w_dw = rng.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)
    pow2 = lambda lo, hi, n: (2.0 ** -rng.integers(lo, hi, n)).astype(np.float32)
    qlinear_conv("q_dw", "x", x, np.float32(2 ** -4), np.uint8(118), w_dw, pow2(2, 6, 8), np.float32(2 ** -1),
                 np.uint8(121),
                 rng.integers(-3000, 3000, 8).astype(np.int32), group=8, strides=[2, 1], pads=[1, 1, 1, 1])
    qlinear_conv("q_dw_s8", "x", x, np.float32(2 ** -4), np.uint8(118), w_dw, pow2(2, 6, 8), np.float32(2 ** -1),
                 np.int8(-7),
                 rng.integers(-3000, 3000, 8).astype(np.int32), group=8, pads=[0, 1, 1, 0])
    # QLinearConv 3x3 of 8 channels (72 taps) to 64: 64 x 5184 sums, blocks of
    # 4096 positions that end mid-row
    qlinear_conv("q_big", "xb", xb, np.float32(2 ** -5), np.uint8(128),
                 rng.integers(-127, 128, (64, 8, 3, 3)).astype(np.int8), pow2(4, 8, 64), np.float32(2 ** -1),
                 np.uint8(131),
                 rng.integers(-5000, 5000, 64).astype(np.int32), keep=[0, 21, 42, 63], pads=[1, 1, 1, 1])
    # QLinearConv depthwise 7x7 (49 taps, past the few-tap im2col sums)
    qlinear_conv("q_dw7", "xb", xb, np.float32(2 ** -5), np.uint8(128),
                 rng.integers(-127, 128, (8, 1, 7, 7)).astype(np.int8), pow2(2, 5, 8), np.float32(2 ** -1),
                 np.uint8(125), rng.integers(-3000, 3000, 8).astype(np.int32), group=8, pads=[3, 3, 3, 3])
    # 16 or more input channels a group (oneDNN's NHWC convolution where it
    # is exact): zero-point padding on every side, strides, dilations, groups
    qlinear_conv("q_dense", "xc", xc, np.float32(2 ** -5), np.uint8(118),
                 rng.integers(-127, 128, (24, 32, 3, 3)).astype(np.int8), pow2(5, 9, 24), np.float32(2 ** -1),
                 np.uint8(120), rng.integers(-5000, 5000, 24).astype(np.int32), pads=[1, 0, 2, 1], strides=[2, 1],
                 dilations=[1, 2])
    qlinear_conv("q_grouped", "xc", xc, np.float32(2 ** -5), np.uint8(118),
                 rng.integers(-127, 128, (16, 16, 3, 3)).astype(np.int8), pow2(5, 9, 16), np.float32(2 ** -1),
                 np.int8(3), rng.integers(-5000, 5000, 16).astype(np.int32), group=2, pads=[1, 1, 1, 1])
    conv_integer("dense_s8", "xc8", xc8, np.int8(-9), rng.integers(-128, 128, (8, 16, 3, 3)).astype(np.int8),
                 np.int8(0), pads=[1, 1, 0, 0])
    conv_integer("dense_u8w", "xc", xc, np.uint8(3), rng.integers(0, 256, (12, 32, 2, 2)).astype(np.uint8),
                 np.uint8(128), strides=[2, 2], pads=[0, 0, 1, 1])
    feeds = {"x": x, "x8": x8, "xb": xb, "xp": xp, "x3": x3, "xc": xc, "xc8": xc8}
    ins = [(k, U8 if v.dtype == np.uint8 else I8, list(v.shape)) for k, v in feeds.items()]
    save_model("int_conv_paths", nodes, ins, outs, inits, feeds, refs)


def main():
    rng = np.random.default_rng(20240517)
    fp16_cnn(rng)
    bf16_mlp(rng)
    quant_linear(rng)
    qlinear_matmul(rng)
    qlinear_conv(rng)
    dynamic_quant_matmul(rng)
    qdq_conv(rng)
    int_conv_paths(rng)
    fp16_rnn(np.random.default_rng(20261130))  # its own stream: the models above stay as they were
    nn_models(np.random.default_rng(20261204))
    total = 0
    for f in sorted(os.listdir(HERE)):
        size = os.path.getsize(os.path.join(HERE, f))
        assert size < 100 * 1024, f
        total += size
    assert total < 1024 * 1024
    print("%d bytes in all" % total)


if __name__ == "__main__":
    main()
