"""int8 versions of the peer models (issue 33, item 7), quantized as ONNX
Runtime's quantize_dynamic writes them (onnxruntime/python/tools/
quantization, its ConvInteger and MatMulInteger operators): each float32
Conv and MatMul with a constant weight becomes

    x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zp)
    ConvInteger(x_q, W_q, x_zp, W_zp) or MatMulInteger(x_q, W_q, x_zp, W_zp)  (int32)
    -> Cast(to=float) -> Mul(x_scale * W_scale) [-> Add(bias) for Conv]

with W quantized per tensor: uint8 asymmetric (zero point from the range,
as ORT's QUInt8) or int8 symmetric (zero point 0, ORT's QInt8 default).

    /usr/bin/python3 bench/peers/quantize.py MODEL.onnx OUT.onnx [uint8|int8]
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize_weight(w, kind):
    """(w_q, scale, zero point) per tensor, rounding half to even."""
    lo, hi = min(0.0, float(w.min())), max(0.0, float(w.max()))
    if kind == 'uint8':
        scale = (hi - lo) / 255.0 or 1.0
        zp = int(np.clip(np.rint(-lo / scale), 0, 255))
        q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
        return q, np.float32(scale), np.uint8(zp)
    scale = max(abs(lo), abs(hi)) / 127.0 or 1.0
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, np.float32(scale), np.int8(0)


def rebuild(g, nodes, new_inits):
    """g's nodes replaced by `nodes` and `new_inits` added; initializers
    nothing reads any more dropped, value_info cleared (shapes changed)."""
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    del g.value_info[:]


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    kind = argv[2] if len(argv) == 3 else 'uint8'
    model = onnx.load(argv[0])
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, new_inits, count = [], [], 0
    for n in g.node:
        w_name = n.input[1] if len(n.input) > 1 else None
        if n.op_type not in ('Conv', 'MatMul') or w_name not in inits or inits[w_name].data_type != TensorProto.FLOAT:
            nodes.append(n)
            continue
        count += 1
        p = '%s_q%d' % (n.name or n.op_type, count)
        w = numpy_helper.to_array(inits[w_name])
        wq, ws, wz = quantize_weight(w, kind)
        new_inits += [numpy_helper.from_array(wq, p + '_W'), numpy_helper.from_array(np.array(ws), p + '_Ws'),
                      numpy_helper.from_array(np.array(wz), p + '_Wz')]
        nodes.append(helper.make_node('DynamicQuantizeLinear', [n.input[0]], [p + '_x', p + '_xs', p + '_xz']))
        op = 'ConvInteger' if n.op_type == 'Conv' else 'MatMulInteger'
        integer = helper.make_node(op, [p + '_x', p + '_W', p + '_xz', p + '_Wz'], [p + '_i32'])
        if op == 'ConvInteger':
            integer.attribute.extend(a for a in n.attribute)
        nodes.append(integer)
        nodes.append(helper.make_node('Cast', [p + '_i32'], [p + '_f'], to=TensorProto.FLOAT))
        nodes.append(helper.make_node('Mul', [p + '_xs', p + '_Ws'], [p + '_s']))
        has_bias = n.op_type == 'Conv' and len(n.input) > 2 and n.input[2]
        scaled = p + '_scaled' if has_bias else n.output[0]
        nodes.append(helper.make_node('Mul', [p + '_f', p + '_s'], [scaled]))
        if has_bias:  # the bias [M] added over [N, M, ...]: reshaped to [M, 1, ...]
            rank = len(w.shape)
            b = numpy_helper.to_array(inits[n.input[2]]).reshape([-1] + [1] * (rank - 2))
            new_inits.append(numpy_helper.from_array(b.astype(np.float32), p + '_B'))
            nodes.append(helper.make_node('Add', [scaled, p + '_B'], [n.output[0]]))
    rebuild(g, nodes, new_inits)
    if not any(o.domain in ('', 'ai.onnx') and o.version >= 11 for o in model.opset_import):
        sys.exit('quantize.py: needs opset 11 or later (DynamicQuantizeLinear)')
    onnx.save(model, argv[1])
    print('%s: %d of %s quantized (%s weights)' % (argv[1], count, 'Conv/MatMul', kind))


if __name__ == '__main__':
    main(sys.argv[1:])
