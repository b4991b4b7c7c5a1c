#!/usr/bin/python3
"""SplitToSequence read through SequenceAt at constant positions: small ONNX
models (opset 17, built with onnx.helper) and numpy reference outputs, for
tests/cli/test_onnx_seq.sh. The references are numpy slicing written from
ONNX's definition of SplitToSequence-11 and SequenceAt-11 (chunks of `split`
lengths along axis; a scalar split s gives chunks of s, the last smaller;
no split gives chunks of 1, squeezed when keepdims=0; positions count from
the end when negative), not tgc's output.

usage: /usr/bin/python3 make_models.py   (writes beside itself)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(13)


def const(name, value):
    """A Constant node making `name` from numpy `value`."""
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name + "_value"))


def save(name, x, nodes, outputs, inits=(), refs=None):
    """Model `name`: graph input x (float32, static shape), graph outputs
    `outputs` (float32; their reference's shape, else unknown dims), refs
    {output: array} saved as NAME_OUTPUT.npy, the feed as NAME_x.npy."""
    refs = refs or {}
    shape = lambda o: list(refs[o].shape) if o in refs else ["d0", "d1"]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape(o)) for o in outputs],
                          initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))
    np.save(os.path.join(HERE, name + "_x.npy"), x)
    for o, v in refs.items():
        np.save(os.path.join(HERE, f"{name}_{o}.npy"), np.ascontiguousarray(v, dtype=np.float32))


def at(seq, pos_name, out):
    return helper.make_node("SequenceAt", [seq, pos_name], [out])


# Scalar split 2 along axis 0 of [5, 4]: chunks x[0:2], x[2:4], x[4:5];
# positions 0, 1 (int32 initializer) and -1.
x = rng.standard_normal((5, 4)).astype(np.float32)
save("scalar_split", x,
     [const("s", np.array(2, np.int64)), helper.make_node("SplitToSequence", ["x", "s"], ["seq"]),
      const("p0", np.array(0, np.int64)), const("pm1", np.array(-1, np.int64)),
      at("seq", "p0", "a"), at("seq", "p1", "b"), at("seq", "pm1", "c")],
     ["a", "b", "c"], inits=[numpy_helper.from_array(np.array(1, np.int32), "p1")],
     refs={"a": x[0:2], "b": x[2:4], "c": x[4:5]})

# 1-D split [1, 3, 2] (int32) along axis -2 of [2, 6, 3]; positions 2 and -3.
x = rng.standard_normal((2, 6, 3)).astype(np.float32)
save("list_split", x,
     [const("s", np.array([1, 3, 2], np.int32)), helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=-2),
      const("p2", np.array(2, np.int64)), const("pm3", np.array(-3, np.int64)),
      at("seq", "p2", "a"), at("seq", "pm3", "b")],
     ["a", "b"], refs={"a": x[:, 4:6], "b": x[:, 0:1]})

# No split, keepdims 0, axis -1 of [3, 4]: chunk k is x[:, k] (rank 1); positions 0, -1, 2.
x = rng.standard_normal((3, 4)).astype(np.float32)
save("unbind_keepdims0", x,
     [helper.make_node("SplitToSequence", ["x"], ["seq"], axis=-1, keepdims=0),
      const("p0", np.array(0, np.int64)), const("pm1", np.array(-1, np.int32)), const("p2", np.array(2, np.int64)),
      at("seq", "p0", "a"), at("seq", "pm1", "b"), at("seq", "p2", "c")],
     ["a", "b", "c"], refs={"a": x[:, 0], "b": x[:, 3], "c": x[:, 2]})

# No split, keepdims 1 (the default), axis 1 of [2, 3, 2]: chunk k is x[:, k:k+1]; positions 1, -3.
x = rng.standard_normal((2, 3, 2)).astype(np.float32)
save("unbind_keepdims1", x,
     [helper.make_node("SplitToSequence", ["x"], ["seq"], axis=1),
      const("p1", np.array(1, np.int64)), const("pm3", np.array(-3, np.int64)),
      at("seq", "p1", "a"), at("seq", "pm3", "b")],
     ["a", "b"], refs={"a": x[:, 1:2], "b": x[:, 0:1]})

# keepdims 0 with a split: keepdims is ignored (chunks keep the axis).
x = rng.standard_normal((4, 3)).astype(np.float32)
save("split_keepdims0_ignored", x,
     [const("s", np.array(1, np.int64)), helper.make_node("SplitToSequence", ["x", "s"], ["seq"], keepdims=0),
      const("p3", np.array(3, np.int64)), at("seq", "p3", "a")],
     ["a"], refs={"a": x[3:4]})

# A position past the sequence of 2: an import error.
x = rng.standard_normal((4, 3)).astype(np.float32)
save("position_out_of_range", x,
     [const("s", np.array([2, 2], np.int64)), helper.make_node("SplitToSequence", ["x", "s"], ["seq"]),
      const("p2", np.array(2, np.int64)), at("seq", "p2", "a")], ["a"])

# The sequence is also read by SequenceLength: still unsupported.
x = rng.standard_normal((4, 3)).astype(np.float32)
save("sequence_read_elsewhere", x,
     [helper.make_node("SplitToSequence", ["x"], ["seq"]), const("p0", np.array(0, np.int64)),
      at("seq", "p0", "a"), helper.make_node("SequenceLength", ["seq"], ["n"])], ["a"])
