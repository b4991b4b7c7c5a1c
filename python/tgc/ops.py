"""Every op of tgc's registry (ONNX opset 17) as a function, by its name in
snake case: ``Conv`` is ``tgc.ops.conv``, ``MatMul`` ``tgc.ops.mat_mul``,
``BatchNormalization`` ``tgc.ops.batch_normalization``.

Each takes the op's inputs in ONNX's order (Tensors; NumPy data, made into
tensors; None for an omitted optional input), then keywords: the op's
attributes by their ONNX names (``pads=[1, 1, 1, 1]``), ``device=`` to
choose where it runs (else TensorFlow eager's rules: the inputs' device,
integer shape arithmetic on cpu0) and ``outputs=`` for how many outputs to
make where the op has optional ones (default: the fewest, at least 1).
It returns a Tensor, or a tuple of Tensors for more than one output, left
on the device that computed them.

Examples
--------
>>> y = tgc.ops.conv(x, w, pads=[1, 1, 1, 1], device="gpu0")
>>> values, indices = tgc.ops.top_k(x, tgc.tensor(np.array([3])))
"""
import ctypes
import re

import numpy as np

from . import _eager, _function, _tensor
from ._lib import OpAttr, OpSchema, lib

_INT, _FLOAT, _STRING, _INTS, _FLOATS, _STRINGS, _TENSOR = range(7)
_TYPE_NAMES = ["int", "float", "string", "ints", "floats", "strings", "tensor"]


def snake_case(name):
    """'MatMul' -> 'mat_mul', 'LSTM' -> 'lstm', 'QLinearConv' -> 'q_linear_conv'."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def _attr(schema_type, name, value, keep):
    """An OpAttr for `value` as attribute type `schema_type`; `keep` holds
    what the struct points to until the call."""
    a = OpAttr(name=name.encode(), type=schema_type)
    if schema_type == _INT:
        a.i = int(value)
    elif schema_type == _FLOAT:
        a.f = float(value)
    elif schema_type == _STRING:
        a.s = value.encode() if isinstance(value, str) else bytes(value)
    elif schema_type == _INTS:
        v = (ctypes.c_int64 * (len(value) or 1))(*[int(x) for x in value])
        keep.append(v)
        a.ints, a.n = v, len(value)
    elif schema_type == _FLOATS:
        v = (ctypes.c_double * (len(value) or 1))(*[float(x) for x in value])
        keep.append(v)
        a.floats, a.n = v, len(value)
    elif schema_type == _STRINGS:
        v = (ctypes.c_char_p * (len(value) or 1))(*[s.encode() if isinstance(s, str) else bytes(s) for s in value])
        keep.append(v)
        a.strings, a.n = v, len(value)
    else:
        t = value if isinstance(value, _tensor.Tensor) else _tensor.tensor(np.asarray(value))
        if t.device != "host":
            t = t.to("host")
        keep.append(t)
        a.tensor = t._handle().value
    return a


def _make(schema, attr_types):
    op = schema.name
    op_bytes = op.encode()
    n_min, n_max = schema.min_outputs, schema.max_outputs
    default_outputs = n_max if n_max == n_min else (n_min if n_min > 0 else 1)

    def fn(*inputs, device=None, outputs=None, **attrs):
        keep = []
        arr = None
        if attrs:
            items = []
            for k, v in attrs.items():
                t = attr_types.get(k)
                if t is None:
                    raise TypeError("tgc.ops.%s: %s has no attribute '%s' (it takes: %s)"
                                    % (snake_case(op), op, k, ", ".join(sorted(attr_types)) or "none"))
                items.append(_attr(t, k, v, keep))
            arr = (OpAttr * len(items))(*items)
        n = default_outputs if outputs is None else int(outputs)
        trace = _function._state.trace
        if trace is not None and (not inputs or any(isinstance(x, _function.Traced) for x in inputs)):
            outs = trace.op(op_bytes, inputs, arr, n, device)  # a node of the graph tgc.function traces
            return outs[0] if n == 1 else tuple(outs)
        ins = [x if x is None or isinstance(x, _tensor.Tensor) else _tensor.tensor(x) for x in inputs]
        outs = _eager.run(op_bytes, ins, arr, device, n)
        return outs[0] if n == 1 else tuple(outs)

    lines = ["%s(*inputs, device=None, outputs=None, **attributes)" % snake_case(op), "",
             "The ONNX op %s on tgc's eager path: %s input%s%s, %s output%s." % (
                 op, schema.min_inputs if schema.max_inputs == schema.min_inputs else
                 "%d to %s" % (schema.min_inputs, "any number" if schema.max_inputs < 0 else schema.max_inputs),
                 "" if schema.max_inputs == 1 else "s", "", default_outputs if n_max == n_min else
                 "%d to %s" % (n_min, "any number" if n_max < 0 else n_max), "" if n_max == 1 else "s"), "",
             "Parameters", "----------", "*inputs : Tensor, array_like or None",
             "    The op's inputs in ONNX's order (None: an omitted optional input)."]
    for k, t in attr_types.items():
        lines += ["%s : %s, optional" % (k, _TYPE_NAMES[t]), "    The ONNX attribute."]
    lines += ["device : str, optional", "    Where to run it (\"gpu0\", \"cpu\"); else the inputs' device.",
              "outputs : int, optional", "    How many outputs to make (default %d)." % default_outputs, "",
              "Returns", "-------", "Tensor or tuple of Tensor", "", "Raises", "------", "tgc.InvalidError",
              "    Shapes, dtypes or attributes the op refuses (tgc's message names the rule).",
              "tgc.OutOfMemoryError", "    The device is full or at its limit."]
    fn.__doc__ = "\n".join(lines)
    fn.__name__ = fn.__qualname__ = snake_case(op)
    return fn


def _register():
    made = {}
    s = OpSchema()
    for i in range(lib.tgc_op_schema_count()):
        lib.tgc_op_schema_at(i, ctypes.byref(s))
        name = s.name.decode()
        if name.startswith("_"):
            continue  # tgc's own ops (_Send, _FusedElementwise, ...)
        types = {}
        for j in range(s.n_attrs):
            an, at, req = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int()
            lib.tgc_op_schema_attr(s.name, j, ctypes.byref(an), ctypes.byref(at), ctypes.byref(req))
            types[an.value.decode()] = at.value
        fn = _make(_Schema(name, s), types)
        made[fn.__name__] = fn
    globals().update(made)  # after: ops named max, min, abs... shadow the builtins here
    return list(made)


class _Schema:
    def __init__(self, name, s):
        self.name = name
        self.min_inputs, self.max_inputs = s.min_inputs, s.max_inputs
        self.min_outputs, self.max_outputs = s.min_outputs, s.max_outputs


__all__ = sorted(_register())
