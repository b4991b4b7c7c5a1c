"""float16 versions of the peer models (issue 33, item 7): every float32
tensor of an exported ONNX model made float16, as half-precision models are
shipped (onnxconverter-common's convert_float_to_float16 with keep_io_types
off): initializers and Constant values rounded to nearest even, the graph's
float32 inputs, outputs and value_info declared float16, Cast(to=float)
turned into Cast(to=float16); subgraphs too. The inputs are rounded alike.

    /usr/bin/python3 bench/peers/half.py MODEL.onnx OUT.onnx [IN.npy OUT.npy]...
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper, TensorProto

FLOAT, HALF = TensorProto.FLOAT, TensorProto.FLOAT16


def halve_tensor(t):
    if t.data_type == FLOAT:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))


def halve_graph(g):
    for t in g.initializer:
        halve_tensor(t)
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == FLOAT:
            v.type.tensor_type.elem_type = HALF
    for n in g.node:
        for a in n.attribute:
            if n.op_type == 'Cast' and a.name == 'to' and a.i == FLOAT:
                a.i = HALF
            if a.type == onnx.AttributeProto.TENSOR:
                halve_tensor(a.t)
            if a.type == onnx.AttributeProto.GRAPH:
                halve_graph(a.g)


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    model = onnx.load(argv[0])
    halve_graph(model.graph)
    onnx.save(model, argv[1])
    for src, dst in zip(argv[2::2], argv[3::2]):
        x = np.load(src)
        np.save(dst, x.astype(np.float16) if x.dtype == np.float32 else x)


if __name__ == '__main__':
    main(sys.argv[1:])
