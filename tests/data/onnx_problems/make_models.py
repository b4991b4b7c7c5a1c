#!/usr/bin/python3
"""A model with every kind of problem the ONNX importer reports, for
tests/onnx/test_import.c's "every problem at once": ops tgc lacks at the top
level, inside an If's branches and inside a custom op's body; an attribute
tgc lacks; a dtype tgc lacks (Cast to COMPLEX64); and attribute values only
inference refuses (Pad's mode "wrap", a Resize coordinate mode that does not
exist) inside the If's branches. Built with onnx.helper at opset 17; the
model is refused, so it needs no reference data.

usage: /usr/bin/python3 make_models.py   (writes beside itself)
"""
import os

import onnx
from onnx import TensorProto as T
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
f = T.FLOAT
then_g = helper.make_graph([
    helper.make_node("Pad", ["x", "pads"], ["t1"], name="then/pad_wrap", mode="wrap"),
    helper.make_node("FooOp", ["t1"], ["t2"], name="then/foo"),
], "then", [], [helper.make_tensor_value_info("t2", f, None)])
else_g = helper.make_graph([
    helper.make_node("Resize", ["x", "", "scales"], ["e1"], name="else/resize",
                     coordinate_transformation_mode="tf_crop_and_resize_bogus"),
    helper.make_node("Cast", ["e1"], ["e2"], name="else/cast", to=T.COMPLEX64),
], "else", [], [helper.make_tensor_value_info("e2", f, None)])
body = helper.make_graph([helper.make_node("Baz", ["x"], ["q"], name="custom/baz")], "custom_body", [],
                         [helper.make_tensor_value_info("q", f, None)])
nodes = [
    helper.make_node("Bar", ["x"], ["b"], name="top/bar"),
    helper.make_node("If", ["c"], ["y"], name="top/if", then_branch=then_g, else_branch=else_g),
    helper.make_node("LeakyRelu", ["x"], ["z"], name="top/leaky", alpha=0.1, bogus=3),
    helper.make_node("Custom", ["x"], ["w"], name="top/custom", domain="com.example", body=body),
    helper.make_node("Constant", [], ["k"], name="top/not_onnx_constant", domain="com.example"),
    helper.make_node("Pad", ["x", "pads"], ["p"], name="top/pad_wrap", mode="wrap"),
    helper.make_node("Relu", ["p"], ["r"], name="top/relu_after_pad"),
]
g = helper.make_graph(
    nodes, "problems",
    [helper.make_tensor_value_info("x", f, [1, 1, 4, 4]), helper.make_tensor_value_info("c", T.BOOL, [])],
    [helper.make_tensor_value_info(o, f, None) for o in ("y", "z", "b", "w", "r", "k")],
    initializer=[helper.make_tensor("pads", T.INT64, [8], [0, 0, 1, 1, 0, 0, 1, 1]),
                 helper.make_tensor("scales", f, [4], [1, 1, 2, 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                      producer_name="make_models.py")
m.ir_version = 8
onnx.save(m, os.path.join(HERE, "every_problem.onnx"))
