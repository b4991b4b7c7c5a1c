#!/usr/bin/python3
"""Models named as exporters name them, for tests/cli/test_onnx_names.sh and
python/tests/test_session.py, built with onnx.helper at opset 17:

- exporter_names.onnx: graph inputs "onnx::Flatten_0" and "input.1"
  (PyTorch), "x:0" (TensorFlow); nodes "/block/Add" and "relu node" (a
  space); graph outputs "/block/Split_output_1" (output 1 of a Split), "y:0",
  a JSON text (openWakeWord's class map) and a JSON text of 230 bytes (its
  file name is cut and hashed). The references are numpy's (Add, Split in
  halves along axis 1, Relu, Sigmoid of the sum with x:0, its negation), not
  tgc's.
- runtime_error.onnx: "input.1" of [N] floats reshaped to [2, 3] by the node
  "/head/Reshape": any N but 6 fails at run time, naming that node.

usage: /usr/bin/python3 make_models.py   (writes beside itself)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(22)

JSON = '{"1": "1_minute_timer", "2": "5_minute_timer"}'
LONG = '{' + ", ".join('"%d": "%d_minute_timer"' % (i, 5 * i) for i in range(1, 11)) + '}'
f32 = TensorProto.FLOAT
nodes = [
    helper.make_node("Add", ["onnx::Flatten_0", "input.1"], ["/block/Add_output_0"], name="/block/Add"),
    helper.make_node("Split", ["/block/Add_output_0"], ["/block/Split_output_0", "/block/Split_output_1"],
                     name="/block/Split", axis=1),
    helper.make_node("Relu", ["/block/Split_output_0"], ["y:0"], name="relu node"),
    helper.make_node("Add", ["/block/Add_output_0", "x:0"], ["sum"], name="/head/Add"),
    helper.make_node("Sigmoid", ["sum"], [JSON], name="/head/Sigmoid"),
    helper.make_node("Neg", [JSON], [LONG], name="/head/Neg"),
]
g = helper.make_graph(
    nodes, "names",
    [helper.make_tensor_value_info(n, f32, [2, 4]) for n in ("onnx::Flatten_0", "input.1", "x:0")],
    [helper.make_tensor_value_info("/block/Split_output_1", f32, [2, 2]),
     helper.make_tensor_value_info("y:0", f32, [2, 2]),
     helper.make_tensor_value_info(JSON, f32, [2, 4]), helper.make_tensor_value_info(LONG, f32, [2, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_models.py")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "exporter_names.onnx"))

a, b, x = (rng.standard_normal((2, 4)).astype(np.float32) for _ in range(3))
s = a + b
np.save(os.path.join(HERE, "a.npy"), a)
np.save(os.path.join(HERE, "b.npy"), b)
np.save(os.path.join(HERE, "x.npy"), x)
np.save(os.path.join(HERE, "split1.npy"), s[:, 2:])
np.save(os.path.join(HERE, "y.npy"), np.maximum(s[:, :2], 0))
np.save(os.path.join(HERE, "json.npy"), (1 / (1 + np.exp(-(s + x)))).astype(np.float32))
np.save(os.path.join(HERE, "long.npy"), (-1 / (1 + np.exp(-(s + x)))).astype(np.float32))

shape = helper.make_tensor("shape", TensorProto.INT64, [2], [2, 3])
g = helper.make_graph([helper.make_node("Reshape", ["input.1", "shape"], ["out"], name="/head/Reshape")], "reshape",
                      [helper.make_tensor_value_info("input.1", f32, ["N"])],
                      [helper.make_tensor_value_info("out", f32, [2, 3])], initializer=[shape])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_models.py")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "runtime_error.onnx"))
np.save(os.path.join(HERE, "four.npy"), np.arange(4, dtype=np.float32))
