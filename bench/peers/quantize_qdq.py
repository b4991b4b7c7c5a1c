"""Statically quantized (QDQ) versions of the peer models, written as ONNX
Runtime's quantize_static writes them with QuantFormat.QDQ, activations
QUInt8 (asymmetric), weights QInt8 (symmetric, per channel), MinMax
calibration (onnxruntime/python/tools/quantization: qdq_quantizer.py,
calibrate.py, quant_utils.py); passes/fuse_qdq.c computes the groups in
integers.

    /usr/bin/python3 bench/peers/quantize_qdq.py [--shared-dq] MODEL.onnx OUT.onnx CALIB_INPUT.npy...

CALIB_INPUT: one .npy per graph input, in the graph's order (or NAME=FILE).
Calibration: one run of the float model through ONNX Runtime (node,
ort_outputs.js) with each activation that a Conv or a MatMul reads or
writes made a graph output; its range [min(0, min), max(0, max)] gives
scale = (max - min) / 255 and zero point round(-min / scale) in [0, 255]
(uint8). The model written:
  - each Conv with a float32 initializer weight W [M, C/g, k...]:
        x -> QuantizeLinear(x_s, x_zp uint8) -> DequantizeLinear -> Conv
        W as int8, per output channel: s_c = max|W_c| / 127, round(W_c / s_c)
          in [-127, 127], zero point 0 -> DequantizeLinear(axis 0)
        bias b as int32 round(b_c / (x_s s_c)) -> DequantizeLinear(scale
          x_s s_c as float32, zero point int32 0, axis 0)
        Conv -> QuantizeLinear(y_s, y_zp uint8) -> DequantizeLinear -> readers
    A Conv read only by a Relu, or by a Clip with min 0 (its max at most 6:
    the calibrated max is within it), loses that activation: the Conv's
    output is quantized with the activation's range (min 0), and the uint8
    saturation clips (ORT's QDQRemovableActivation).
  - each MatMul whose B is a float32 2-D initializer [K, N]: the same, B
    int8 per column (N scales, DequantizeLinear axis 1); no bias.
  - everything else stays float32 and reads the DequantizeLinear outputs;
    Gemm is left as it is (float32 weights, float input, no Q/DQ).
A tensor has one QuantizeLinear; each Conv / MatMul reading it gets a
DequantizeLinear of its own and the other readers share one (what ORT's
EnsureUniqueDQForNodeUnit makes of quantize_static's output at session
start; fuse_qdq.c wants a DequantizeLinear read by its op only).
--shared-dq writes one DequantizeLinear per tensor for all its readers
(quantize_static's default, DedicatedQDQPair False).
Environment: NODE_PATH (default PEERS_DIR/node/node_modules, PEERS_DIR
default the model's folder). Needs opset 13 or later (per-axis
DequantizeLinear).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

from quantize import rebuild  # noqa: E402  (bench/peers/quantize.py)

HERE = os.path.dirname(os.path.abspath(__file__))


def constants(g):
    """name -> numpy value of the initializers and Constant nodes."""
    vals = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == 'Constant' and n.attribute and n.attribute[0].name == 'value':
            vals[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    return vals


def calibrate(model, names, feeds):
    """{name: (min, max)} of each tensor in names, from one ORT run."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for name in names:
        if name not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(name))
    peers = os.environ.get('PEERS_DIR')
    env = dict(os.environ)
    if 'NODE_PATH' not in env:
        env['NODE_PATH'] = os.path.join(peers, 'node', 'node_modules') if peers else ''
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'calib.onnx')
        onnx.save(m, path)
        subprocess.check_call(['node', os.path.join(HERE, 'ort_outputs.js'), path, tmp] + feeds, env=env)
        with open(os.path.join(tmp, 'outputs.json')) as f:
            index = json.load(f)
        ranges = {}
        for name in names:
            v = np.load(os.path.join(tmp, index[name]))
            ranges[name] = (float(v.min()), float(v.max()))
    return ranges


def act_params(lo, hi):
    """uint8 asymmetric (scale, zero point) of the range [lo, hi] with 0 in it."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0)
    if not scale > np.finfo(np.float32).tiny:
        return np.float32(1.0), np.uint8(0)
    zp = np.uint8(np.clip(np.rint(-lo / float(scale)), 0, 255))
    return scale, zp


def weight_params(w, axis):
    """int8 symmetric per-`axis` quantization of w: (w_q, scales float32 [n])."""
    other = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.max(np.abs(w.astype(np.float64)), axis=other)
    scale = (amax / 127.0).astype(np.float32)
    scale[~(scale > np.finfo(np.float32).tiny)] = 1.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w.astype(np.float64) / scale.astype(np.float64).reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def main(argv):
    shared = '--shared-dq' in argv
    argv = [a for a in argv if a != '--shared-dq']
    if len(argv) < 3:
        sys.exit(__doc__)
    src, dst, calib = argv[0], argv[1], argv[2:]
    model = onnx.load(src)
    if not any(o.domain in ('', 'ai.onnx') and o.version >= 13 for o in model.opset_import):
        sys.exit('quantize_qdq.py: needs opset 13 or later (DequantizeLinear with axis)')
    g = model.graph
    consts = constants(g)
    init_names = {t.name for t in g.initializer}
    inputs = [i.name for i in g.input if i.name not in init_names]
    feeds = [c if '=' in c else '%s=%s' % (inputs[k], c) for k, c in enumerate(calib)]
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    graph_outs = {o.name for o in g.output}

    # the ops quantized, the activations removed after a Conv
    targets, removed = [], set()
    out_of = {}  # the tensor quantized for a target's output
    for n in g.node:
        w = consts.get(n.input[1]) if len(n.input) > 1 and n.input[1] in init_names else None
        if w is None or w.dtype != np.float32:
            continue
        if n.op_type == 'Conv' and w.ndim >= 3 or n.op_type == 'MatMul' and w.ndim == 2:
            targets.append(n)
            y = n.output[0]
            rd = readers.get(y, [])
            if n.op_type == 'Conv' and len(rd) == 1 and y not in graph_outs:
                a = rd[0]
                lo = consts.get(a.input[1]) if a.op_type == 'Clip' and len(a.input) > 1 and a.input[1] else None
                if a.op_type == 'Clip' and len(a.input) < 2:  # opset < 11: attributes
                    lo = next((np.float32(t.f) for t in a.attribute if t.name == 'min'), None)
                if a.op_type == 'Relu' or (a.op_type == 'Clip' and lo is not None and float(lo) == 0.0):
                    removed.add(id(a))
                    y = a.output[0]
            out_of[id(n)] = y
    quantized = []  # activations, in order of first sight
    for n in targets:
        for t in (n.input[0], out_of[id(n)]):
            if t not in quantized:
                quantized.append(t)
    ranges = calibrate(model, quantized, feeds)
    qparams = {t: act_params(*ranges[t]) for t in quantized}

    new_inits, nodes = [], []
    target_ids = {id(n) for n in targets}

    def init(arr, name):
        new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def q_node(t):
        s, z = qparams[t]
        nodes.append(helper.make_node('QuantizeLinear', [t, init(s, t + '_scale'), init(z, t + '_zero_point')],
                                      [t + '_quantized'], name=t + '_QuantizeLinear'))

    dq_made = {}  # (tensor, reader key) -> DequantizeLinear output

    def dq_of(t, key):
        """The DequantizeLinear output of quantized t for a reader (key None: shared)."""
        key = None if shared else key
        if (t, key) not in dq_made:
            out = t + '_DequantizeLinear_Output' + ('' if key is None else '_%d' % len(dq_made))
            nodes.append(helper.make_node('DequantizeLinear', [t + '_quantized', t + '_scale', t + '_zero_point'],
                                          [out], name=out[:-len('_Output')] if key is None else out + '_node'))
            dq_made[(t, key)] = out
        return dq_made[(t, key)]

    for t in quantized:  # graph inputs quantized first
        if t in inputs:
            q_node(t)
    count = 0
    for n in g.node:
        if id(n) in removed:
            continue
        if n.op_type == 'Constant' and all(o not in readers or all(id(r) in removed for r in readers[o])
                                           for o in n.output):
            continue  # a removed Clip's bounds
        x = n.input[0] if n.input else None
        for k, i in enumerate(n.input):
            if i in qparams and not (id(n) in target_ids and k > 0):
                n.input[k] = dq_of(i, id(n) if id(n) in target_ids else None)
        if id(n) in target_ids:
            count += 1
            p = (n.name or n.op_type + str(count)).strip('/').replace('/', '_')
            w = consts[n.input[1]]
            axis = 0 if n.op_type == 'Conv' else 1
            wq, ws = weight_params(w, axis)
            w_name = init(wq, p + '_W_quantized')
            nodes.append(helper.make_node('DequantizeLinear', [w_name, init(ws, p + '_W_scale'),
                                                               init(np.zeros(ws.shape, np.int8), p + '_W_zero_point')],
                                          [p + '_W_dequantized'], name=p + '_W_DequantizeLinear', axis=axis))
            n.input[1] = p + '_W_dequantized'
            if n.op_type == 'Conv' and len(n.input) > 2 and n.input[2]:
                b = consts[n.input[2]].astype(np.float64)
                x_s = qparams[x][0]
                bs = (np.float32(x_s) * ws).astype(np.float32)
                bq = np.rint(b / bs.astype(np.float64)).astype(np.int32)
                nodes.append(helper.make_node('DequantizeLinear',
                                              [init(bq, p + '_B_quantized'), init(bs, p + '_B_scale'),
                                               init(np.zeros(bs.shape, np.int32), p + '_B_zero_point')],
                                              [p + '_B_dequantized'], name=p + '_B_DequantizeLinear', axis=0))
                n.input[2] = p + '_B_dequantized'
            n.output[0] = out_of[id(n)]
        nodes.append(n)
        for o in n.output:
            if o in qparams:
                q_node(o)
    rebuild(g, nodes, new_inits)
    onnx.checker.check_model(model)
    onnx.save(model, dst)
    print('%s: %d Conv/MatMul quantized (QDQ, uint8 activations, int8 per-channel weights), %d activations '
          'folded into their Conv, %s DequantizeLinear' % (dst, count, len(removed), 'shared' if shared else
                                                            'per-reader'))


if __name__ == '__main__':
    main(sys.argv[1:])
