"""tgc: a multi-device graph compiler and partitioned executor, from Python.

Two halves, over libtgc's C API (``include/tgc.h``):

- models: ``tgc.load`` a tgc/1 YAML or ONNX model, ``.place``/``.partition`` it
  (dumps as the command line's), run it with ``tgc.Session(model,
  devices="cpu,gpu0").run({"x": array}) -> {"y": array}``;
- eager tensors: ``tgc.tensor(array, device="gpu0")``, every op as
  ``tgc.ops.<snake_case ONNX name>``, ``+ - * / @`` on ``tgc.Tensor``, and the
  memory tools of tf.js, TorchSharp and fastai: ``tgc.memory()``, ``with
  tgc.scope():``, ``tgc.keep``, ``t.dispose()``, ``with tgc.trace_memory()``,
  ``tgc.devices()``;
- functions: ``@tgc.function`` traces Python code on tensors into a graph
  once per input signature and runs it compiled, as one op.

NumPy arrays go in and come out without a copy where the memory is the host's.
Errors raise ``tgc.Error`` subclasses carrying tgc's messages.
"""
from . import ops
from ._eager import configure
from ._eager import stats as eager_stats
from ._errors import (Error, FileError, InvalidError, OutOfMemoryError, RuntimeFailure, UnsupportedError)
from ._function import Function, TensorSpec, Traced, TracingError, function
from ._graph import Graph, Partitions, Placement, Session, load
from ._lib import path as library_path
from ._memory import auto_device, devices, memory, trace_memory
from ._tensor import Tensor, keep, scope, tensor, tidy

__version__ = "0.1.0"

__all__ = ["Error", "FileError", "Function", "Graph", "InvalidError", "OutOfMemoryError", "Partitions", "Placement",
           "RuntimeFailure", "Session", "Tensor", "TensorSpec", "Traced", "TracingError", "UnsupportedError",
           "auto_device", "configure", "devices", "eager_stats", "function", "keep", "library_path", "load", "memory",
           "ops", "scope", "tensor", "tidy", "trace_memory"]
