"""Reference data for tgc's RNN, GRU and LSTM (tests/cli/test_rnn.sh).

Run once with Debian's python3-torch and python3-onnx (/usr/bin/python3);
its small outputs are committed, so the tests need neither.

1. PyTorch modules (nn.LSTM, nn.GRU, nn.RNN: bidirectional, batch_first,
   two layers, relu) exported by torch.onnx at opset 14; the expected
   outputs are PyTorch's own.
2. What PyTorch cannot express (sequence_lens, direction reverse, clip,
   input_forget, peepholes, other activations with alpha/beta,
   linear_before_reset 0): single-node ONNX models made with onnx.helper,
   the expected outputs from a numpy transcription of the equations in
   ONNX's operator spec (Operators.md, opset 14), independent of tgc.
"""
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def save(name, **arrays):
    for k, v in arrays.items():
        np.save(os.path.join(HERE, f"{name}_{k}.npy"), v)


# ---- 1. PyTorch -------------------------------------------------------------

class Wrap(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        y, h = self.rnn(x)
        if isinstance(h, tuple):
            return y, h[0], h[1]
        return y, h


def export_torch(name, rnn, x):
    torch.manual_seed(0)
    m = Wrap(rnn).eval()
    with torch.no_grad():
        outs = m(torch.from_numpy(x))
    names = ["y", "h", "c"][: len(outs)]
    torch.onnx.export(m, torch.from_numpy(x), os.path.join(HERE, f"{name}.onnx"), opset_version=14,
                      input_names=["x"], output_names=names)
    save(name, x=x, **{n: o.numpy() for n, o in zip(names, outs)})


torch.manual_seed(1)
export_torch("torch_lstm_bidir", torch.nn.LSTM(3, 5, bidirectional=True), rng.standard_normal((4, 2, 3), np.float32))
torch.manual_seed(2)
export_torch("torch_lstm_batch_first_2layers", torch.nn.LSTM(3, 4, num_layers=2, batch_first=True),
             rng.standard_normal((2, 5, 3), np.float32))
torch.manual_seed(3)
export_torch("torch_gru_bidir", torch.nn.GRU(3, 5, bidirectional=True), rng.standard_normal((6, 2, 3), np.float32))
torch.manual_seed(4)
export_torch("torch_rnn_relu", torch.nn.RNN(3, 4, nonlinearity="relu"), rng.standard_normal((5, 3, 3), np.float32))


# ---- 2. numpy references of ONNX's equations --------------------------------

def sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACT = {
    "Sigmoid": lambda x, a, b: sigmoid(x),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "LeakyRelu": lambda x, a, b: np.where(x < 0, a * x, x),
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "Affine": lambda x, a, b: a * x + b,
}


def run_dirs(step, x, lens, dirs, reverse_only, batch, hidden, state0):
    seq = x.shape[0]
    y = np.zeros((seq, dirs, batch, hidden), np.float64)
    finals = []
    for d in range(dirs):
        rev = reverse_only or d == 1
        st = [s[d].astype(np.float64).copy() for s in state0]
        for b in range(batch):
            s_b = [s[b].copy() for s in st]
            order = range(lens[b] - 1, -1, -1) if rev else range(lens[b])
            for t in order:
                s_b = step(d, x[t, b].astype(np.float64), s_b)
                y[t, d, b] = s_b[0]
            for s, v in zip(st, s_b):
                s[b] = v
        finals.append(st)
    return y, [np.stack([f[i] for f in finals]) for i in range(len(state0))]


def lstm_ref(x, w, r, bias, lens, h0, c0, p, acts, clip, input_forget, dirs, reverse_only):
    hidden = r.shape[2]
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)

    def step(d, xt, s):
        h, c = s
        f, g, hh = acts[3 * d: 3 * d + 3]
        wi, wo, wf, wc = np.split(w[d], 4)
        ri, ro, rf, rc = np.split(r[d], 4)
        wb = np.split(bias[d][: 4 * hidden], 4)
        rb = np.split(bias[d][4 * hidden:], 4)
        pi, po, pf = np.split(p[d], 3)
        i = f(cl(xt @ wi.T + h @ ri.T + pi * c + wb[0] + rb[0]))
        ft = 1 - i if input_forget else f(cl(xt @ wf.T + h @ rf.T + pf * c + wb[2] + rb[2]))
        ct = g(cl(xt @ wc.T + h @ rc.T + wb[3] + rb[3]))
        c = ft * c + i * ct
        o = f(cl(xt @ wo.T + h @ ro.T + po * c + wb[1] + rb[1]))
        return [o * hh(c), c]

    return run_dirs(step, x, lens, dirs, reverse_only, x.shape[1], hidden, [h0, c0])


def gru_ref(x, w, r, bias, lens, h0, acts, clip, lbr, dirs, reverse_only):
    hidden = r.shape[2]
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)

    def step(d, xt, s):
        (h,) = s
        f, g = acts[2 * d: 2 * d + 2]
        wz, wr, wh = np.split(w[d], 3)
        rz, rr, rh = np.split(r[d], 3)
        wbz, wbr, wbh = np.split(bias[d][: 3 * hidden], 3)
        rbz, rbr, rbh = np.split(bias[d][3 * hidden:], 3)
        z = f(cl(xt @ wz.T + h @ rz.T + wbz + rbz))
        rt = f(cl(xt @ wr.T + h @ rr.T + wbr + rbr))
        if lbr:
            ht = g(cl(xt @ wh.T + rt * (h @ rh.T + rbh) + wbh))
        else:
            ht = g(cl(xt @ wh.T + (rt * h) @ rh.T + rbh + wbh))
        return [(1 - z) * ht + z * h]

    return run_dirs(step, x, lens, dirs, reverse_only, x.shape[1], hidden, [h0])


def rnn_ref(x, w, r, bias, lens, h0, acts, clip, dirs, reverse_only):
    hidden = r.shape[2]
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)

    def step(d, xt, s):
        (h,) = s
        return [acts[d](cl(xt @ w[d].T + h @ r[d].T + bias[d][:hidden] + bias[d][hidden:]))]

    return run_dirs(step, x, lens, dirs, reverse_only, x.shape[1], hidden, [h0])


def bind(names, alphas, betas, defaults):
    """The activations with alpha/beta consumed in order by the functions that take them."""
    out, ia, ib = [], 0, 0
    for n in names:
        a, b = defaults.get(n, (0, 0))
        takes_a = n in ("HardSigmoid", "LeakyRelu", "ScaledTanh", "Affine")
        takes_b = n in ("HardSigmoid", "ScaledTanh", "Affine")
        if takes_a and ia < len(alphas):
            a, ia = alphas[ia], ia + 1
        if takes_b and ib < len(betas):
            b, ib = betas[ib], ib + 1
        out.append(lambda x, n=n, a=a, b=b: ACT[n](x, a, b))
    return out


DEFAULTS = {"HardSigmoid": (0.2, 0.5), "LeakyRelu": (0.01, 0), "ScaledTanh": (1, 1), "Affine": (1, 0)}


def make_model(name, op, inputs, outputs, attrs, feeds, expected):
    """One-node ONNX model; `inputs` maps input name -> array (weights become initializers)."""
    init = [numpy_helper.from_array(v, k) for k, v in inputs.items() if k not in feeds]
    graph_inputs = [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
                    for k, v in inputs.items() if k in feeds]
    node = helper.make_node(op, list(inputs.keys()), outputs, **attrs)
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, e.shape) for o, e in zip(outputs, expected)]
    model = helper.make_model(helper.make_graph([node], name, graph_inputs, outs, init),
                              opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, f"{name}.onnx"))
    save(name, **{k: inputs[k] for k in feeds}, **{o: e.astype(np.float32) for o, e in zip(outputs, expected)})


def f32(*shape):
    return (rng.standard_normal(shape) * 0.6).astype(np.float32)


# LSTM: bidirectional, sequence_lens, initial states, peepholes, clip,
# input_forget, custom activations with alpha/beta.
seq, batch, inp, hid = 5, 3, 4, 3
x, w, r, b = f32(seq, batch, inp), f32(2, 4 * hid, inp), f32(2, 4 * hid, hid), f32(2, 8 * hid)
lens = np.array([5, 2, 0], np.int32)
h0, c0, p = f32(2, batch, hid), f32(2, batch, hid), f32(2, 3 * hid)
names = ["HardSigmoid", "Tanh", "ScaledTanh", "Sigmoid", "LeakyRelu", "Tanh"]
alphas, betas = [0.3, 0.7, 0.05], [0.4, 1.3]
acts = bind(names, alphas, betas, DEFAULTS)
y, (yh, yc) = lstm_ref(x, w, r, b, lens, h0, c0, p, acts, 1.5, False, 2, False)
make_model("lstm_bidir_seqlens_peepholes", "LSTM",
           {"x": x, "w": w, "r": r, "b": b, "lens": lens, "h0": h0, "c0": c0, "p": p}, ["y", "yh", "yc"],
           dict(direction="bidirectional", hidden_size=hid, clip=1.5, activations=names,
                activation_alpha=alphas, activation_beta=betas), ["x", "lens"], [y, yh, yc])

# LSTM: reverse, input_forget, layout 1 (batch first).
x1, w1, r1, b1 = f32(seq, batch, inp), f32(1, 4 * hid, inp), f32(1, 4 * hid, hid), f32(1, 8 * hid)
lens1 = np.array([3, 5, 1], np.int32)
zero_h, zero_p = np.zeros((1, batch, hid), np.float32), np.zeros((1, 3 * hid), np.float32)
acts1 = bind(["Sigmoid", "Tanh", "Tanh"], [], [], DEFAULTS)
y1, (yh1, yc1) = lstm_ref(x1, w1, r1, b1, lens1, zero_h, zero_h, zero_p, acts1, 0, True, 1, True)
make_model("lstm_reverse_input_forget_layout1", "LSTM",
           {"x": np.ascontiguousarray(x1.transpose(1, 0, 2)), "w": w1, "r": r1, "b": b1, "lens": lens1},
           ["y", "yh", "yc"], dict(direction="reverse", hidden_size=hid, input_forget=1, layout=1), ["x", "lens"],
           [y1.transpose(2, 0, 1, 3), yh1.transpose(1, 0, 2), yc1.transpose(1, 0, 2)])

# GRU: bidirectional, linear_before_reset 0 and 1, sequence_lens, clip.
for lbr in (0, 1):
    xg, wg, rg, bg = f32(seq, batch, inp), f32(2, 3 * hid, inp), f32(2, 3 * hid, hid), f32(2, 6 * hid)
    lg, hg = np.array([4, 5, 2], np.int32), f32(2, batch, hid)
    gacts = bind(["Sigmoid", "Tanh", "HardSigmoid", "Affine"], [0.25, 0.9], [0.45, 0.1], DEFAULTS)
    yg, (yhg,) = gru_ref(xg, wg, rg, bg, lg, hg, gacts, 2.0, lbr, 2, False)
    make_model(f"gru_bidir_lbr{lbr}", "GRU", {"x": xg, "w": wg, "r": rg, "b": bg, "lens": lg, "h0": hg}, ["y", "yh"],
               dict(direction="bidirectional", hidden_size=hid, linear_before_reset=lbr, clip=2.0,
                    activations=["Sigmoid", "Tanh", "HardSigmoid", "Affine"], activation_alpha=[0.25, 0.9],
                    activation_beta=[0.45, 0.1]), ["x", "lens"], [yg, yhg])

# RNN: reverse with sequence_lens, Relu.
xr, wr, rr, br = f32(seq, batch, inp), f32(1, hid, inp), f32(1, hid, hid), f32(1, 2 * hid)
lr_, hr0 = np.array([5, 3, 4], np.int32), f32(1, batch, hid)
yr, (yhr,) = rnn_ref(xr, wr, rr, br, lr_, hr0, bind(["Relu"], [], [], DEFAULTS), 0, 1, True)
make_model("rnn_reverse_relu", "RNN", {"x": xr, "w": wr, "r": rr, "b": br, "lens": lr_, "h0": hr0}, ["y", "yh"],
           dict(direction="reverse", hidden_size=hid, activations=["Relu"]), ["x", "lens"], [yr, yhr])

# ---- 3. One batch row ----------------------------------------------------------
# At batch 1 a constant R is read from column panels of R^T (blocks of 64
# columns): hidden sizes whose gates * hidden leave a ragged last block
# (LSTM 4 * 70 = 280 = 4 * 64 + 24, GRU 3 * 48 = 144, RNN 112), two
# directions and two layers. PyTorch's GRU is linear_before_reset 1.
rng1 = np.random.default_rng(8)
torch.manual_seed(5)
export_torch("torch_lstm_batch1_bidir_2layers", torch.nn.LSTM(6, 70, num_layers=2, bidirectional=True),
             rng1.standard_normal((7, 1, 6), np.float32))
torch.manual_seed(6)
export_torch("torch_gru_batch1_bidir", torch.nn.GRU(5, 48, bidirectional=True),
             rng1.standard_normal((6, 1, 5), np.float32))
torch.manual_seed(7)
export_torch("torch_rnn_batch1", torch.nn.RNN(4, 112), rng1.standard_normal((5, 1, 4), np.float32))
print("written to", HERE)
