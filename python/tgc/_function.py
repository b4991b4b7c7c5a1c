"""tgc.function: Python traced into a graph, compiled once per input
signature, and called as one op (TensorFlow's tf.function, JAX's jit).

The first call with a new signature (each tensor argument's dtype, shape and
device; every other argument's value) runs the Python function on traced
tensors: every tgc op it calls (``tgc.ops.*``, the operators) becomes a node
of a graph built through the C API's tgc_graph_builder, each checked and
shape-inferred as it is recorded, so a mistake fails at the Python line that
made it. The graph then goes through the passes, placement and partitioning
once (tgc_function_create) and is cached under the signature; later calls
with that signature run it as one op (tgc_function_call), its outputs left on
the devices that computed them, in the caller's scope.

Python values are constants of the trace; so are concrete tensors the
function reads (captured by value when it is traced). Python control flow on
a traced value (``if x.sum():``) cannot be traced and is an error naming the
line.
"""
import ctypes
import inspect
import os
import sys
import threading
import warnings

import numpy as np

from . import _dtypes, _eager, _tensor
from ._errors import InvalidError, diags, error, raise_for, take_messages
from ._lib import BuilderValue, FunctionOptions, lib

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_OMITTED = BuilderValue(-1, 0)
_MANY_TRACES = 8  # traces of one function past which a call warns


class TracingError(InvalidError):
    """What tracing cannot do: Python control flow on a traced value, or
    reading its values (``bool``, ``float``, ``.numpy()``) while tracing."""


def _caller():
    """(file, line, column) of the innermost frame outside the tgc package:
    the user's line, and the column (1-based) of the expression it was
    running where Python says (3.11's co_positions), else 1."""
    f = sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE_DIR:
        f = f.f_back
    if f is None:
        return "<unknown>", 0, 0
    column = 1
    positions = getattr(f.f_code, "co_positions", None)
    if positions is not None:
        for i, (line, _, col, _) in enumerate(positions()):
            if i == f.f_lasti // 2:
                if line == f.f_lineno and col is not None:
                    column = col + 1
                break
    return f.f_code.co_filename, f.f_lineno, column


def _located(status, messages, fallback, cls=None):
    """tgc's error for `messages` (or `fallback`, of class `cls`) with each
    placed at the user's line."""
    path, line, column = _caller()
    for m in messages:
        m["file"], m["line"], m["column"] = path, line, column
    if not messages:
        messages = [{"file": path, "line": line, "column": column, "severity": "error", "rule": "",
                     "message": fallback}]
    return cls(status, messages, fallback) if cls is not None else error(status, messages, fallback)


def _raise_located(status):
    raise _located(status, take_messages(), "")


class TensorSpec:
    """An argument's expected dtype and shape, for ``input_signature``.

    Parameters
    ----------
    shape : sequence of int, str or None
        A size; a str names a symbolic dimension (one name, one size in a
        call); None is a symbolic dimension of its own.
    dtype : numpy dtype
    """

    def __init__(self, shape, dtype=np.float32):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return "tgc.TensorSpec(shape=%s, dtype=%s)" % (list(self.shape), self.dtype)

    def accepts(self, dtype, shape):
        return (dtype == self.dtype and len(shape) == len(self.shape) and
                all(not isinstance(d, int) or d == s for d, s in zip(self.shape, shape)))


class Traced:
    """A value inside a trace: its dtype and shape (a str for a symbolic
    dimension) are known, its values are not. Ops and operators on it add
    nodes to the graph being traced."""

    __slots__ = ("_trace", "_v", "dtype", "shape")
    _traced = True

    def __init__(self, trace, v, dtype, shape):
        self._trace, self._v, self.dtype, self.shape = trace, v, dtype, shape

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return "tgc.Traced(shape=%s, dtype=%s)" % (list(self.shape), self.dtype)

    def _refuse(self, what):
        raise _located(1, [], "%s of a traced value cannot be known while tracing tgc.function (its values exist "
                       "only when the graph runs): compute it with tgc ops, or pass it as an argument" % what,
                       TracingError)

    def __bool__(self):
        self._refuse("the truth value (Python's if, while, and, or)")

    def __float__(self):
        self._refuse("float()")

    def __int__(self):
        self._refuse("int()")

    def __index__(self):
        self._refuse("an index")

    def __iter__(self):
        self._refuse("iterating")

    def __array__(self, dtype=None):
        self._refuse("a NumPy array")

    def numpy(self):
        self._refuse(".numpy()")

    def item(self):
        self._refuse(".item()")

    def to(self, device):
        """An Identity placed on `device`, as ``Tensor.to``."""
        return self._trace.op(b"Identity", [self], None, 1, device)[0]


def _binary(op, reflected=False):
    def method(self, o):
        o = self._trace.operand(o, self)
        return self._trace.op(op, [o, self] if reflected else [self, o], None, 1, None)[0]
    return method


for _name, _op in (("add", b"Add"), ("sub", b"Sub"), ("mul", b"Mul"), ("truediv", b"Div"), ("matmul", b"MatMul")):
    setattr(Traced, "__%s__" % _name, _binary(_op))
    setattr(Traced, "__r%s__" % _name, _binary(_op, reflected=True))
for _name, _op in (("gt", b"Greater"), ("lt", b"Less"), ("ge", b"GreaterOrEqual"), ("le", b"LessOrEqual")):
    setattr(Traced, "__%s__" % _name, _binary(_op))
Traced.__neg__ = lambda self: self._trace.op(b"Neg", [self], None, 1, None)[0]
Traced.__abs__ = lambda self: self._trace.op(b"Abs", [self], None, 1, None)[0]


class _State(threading.local):
    trace = None


_state = _State()  # .trace: the trace this thread records, or None (ops.py asks on every op)


class _Trace:
    """One graph being recorded (a tgc_graph_builder)."""

    def __init__(self, name):
        h = ctypes.c_void_p()
        if lib.tgc_graph_builder_create(name.encode(), ctypes.byref(h)) != 0:
            raise MemoryError("tgc: no memory for a trace")
        self._b = h.value

    def close(self):
        if self._b:
            lib.tgc_graph_builder_free(self._b)
            self._b = None

    def _traced(self, v):
        code, rank = ctypes.c_int(), ctypes.c_int()
        dims = (ctypes.c_int64 * 8)()
        syms = (ctypes.c_char_p * 8)()
        if lib.tgc_graph_builder_value_info(self._b, v, ctypes.byref(code), ctypes.byref(rank), dims, syms) != 0:
            raise _located(1, [], "tgc: a traced value has no inferred type (a tgc bug)")
        shape = tuple(dims[i] if dims[i] >= 0 else syms[i].decode() for i in range(max(rank.value, 0)))
        dtype = _dtypes.TO_NUMPY.get(code.value, _dtypes.name(code.value))
        return Traced(self, BuilderValue(v.node, v.port), dtype, shape)

    def input(self, name, dtype, shape):
        dims = (ctypes.c_int64 * max(len(shape), 1))(*[d if isinstance(d, int) else -1 for d in shape])
        syms = (ctypes.c_char_p * max(len(shape), 1))(*[d.encode() if isinstance(d, str) else None for d in shape])
        v = BuilderValue()
        st = lib.tgc_graph_builder_input(self._b, name.encode(), _dtypes.from_numpy(dtype), len(shape), dims, syms,
                                         diags(), ctypes.byref(v))
        if st != 0:
            _raise_located(st)
        return self._traced(v)

    def constant(self, x, like=None):
        """A constant node holding x's values (a Tensor, read back if on a
        device; NumPy data; a Python number, of `like`'s dtype when given)."""
        if isinstance(x, _tensor.Tensor):
            x = x.numpy()
        elif like is not None and isinstance(x, (int, float, bool, np.generic)):
            x = np.asarray(x, dtype=like.dtype if isinstance(like.dtype, np.dtype) else np.float32)
        t = _tensor.tensor(np.asarray(x))
        v = BuilderValue()
        st = lib.tgc_graph_builder_constant(self._b, None, t, diags(), ctypes.byref(v))
        t.dispose()
        if st != 0:
            _raise_located(st)
        return self._traced(v)

    def operand(self, x, like=None):
        if isinstance(x, Traced):
            if x._trace is not self:
                raise _located(1, [], "a traced value of another tgc.function's trace is used here")
            return x
        return None if x is None else self.constant(x, like)

    def op(self, op, inputs, attrs, n_outputs, device):
        """Records op `op` (bytes) on `inputs` (Traced, concrete data or None)
        with `attrs` (a ctypes OpAttr array or None); returns its outputs."""
        ins = [self.operand(x) for x in inputs]
        arr = (BuilderValue * max(len(ins), 1))(*[x._v if x is not None else _OMITTED for x in ins])
        outs = (BuilderValue * max(n_outputs, 1))()
        st = lib.tgc_graph_builder_op(self._b, op, attrs, len(attrs) if attrs is not None else 0, arr, len(ins),
                                      n_outputs, None, device.encode() if device else None, diags(), outs)
        if st != 0:
            _raise_located(st)
        return [self._traced(outs[i]) for i in range(n_outputs)]

    def finish(self, outputs, names):
        """The graph with `outputs` (Traced values) as its outputs, a handle."""
        arr = (BuilderValue * len(outputs))(*[o._v for o in outputs])
        cn = (ctypes.c_char_p * len(outputs))(*[n.encode() for n in names])
        g = ctypes.c_void_p()
        st = lib.tgc_graph_builder_finish(self._b, arr, len(outputs), cn, diags(), ctypes.byref(g))
        if st != 0:
            _raise_located(st)
        return g.value


# ---- signatures -----------------------------------------------------------------------

def _flatten(x, leaves):
    """The structure of x with each tensor-like leaf replaced by its index in `leaves`."""
    if isinstance(x, (_tensor.Tensor, np.ndarray, Traced)):
        leaves.append(x)
        return ("leaf", len(leaves) - 1)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_flatten(e, leaves) for e in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, _flatten(x[k], leaves)) for k in sorted(x)))
    try:
        hash(x)
    except TypeError:
        raise TypeError("tgc.function: an argument of type %s is neither a tensor nor a hashable Python value"
                        % type(x).__name__)
    return ("value", type(x).__name__, x)


def _flatten_leaves(x):
    leaves = []
    _flatten(x, leaves)
    return leaves


def _leaf_key(x):
    """(dtype, shape, device) of a tensor-like argument."""
    if isinstance(x, _tensor.Tensor):
        return (x.dtype, x.shape, x.device)
    if isinstance(x, Traced):
        return (x.dtype, x.shape, None)
    a = np.asarray(x)
    return (a.dtype, a.shape, "host")


def _describe_change(old, new, names):
    """Why signature `new` is not `old`: the first difference, in words;
    names[i] is tensor argument i's input name."""
    (ostruct, oleaves), (nstruct, nleaves) = old, new
    if ostruct != nstruct:
        return "the Python arguments changed (a Python value, or the nesting of the tensors): %s -> %s" % (
            _plain(ostruct), _plain(nstruct))
    for i, (a, b) in enumerate(zip(oleaves, nleaves)):
        for what, x, y in (("dtype", a[0], b[0]), ("shape", a[1], b[1]), ("device", a[2], b[2])):
            if x != y:
                return "%s: %s %s -> %s" % ("'%s'" % names[i] if i < len(names) else "tensor argument %d" % i, what,
                                             x, y)
    return "a new signature"


def _plain(struct):
    kind = struct[0]
    if kind == "leaf":
        return "<tensor>"
    if kind == "value":
        return repr(struct[2])
    if kind == "dict":
        return "{%s}" % ", ".join("%r: %s" % (k, _plain(v)) for k, v in struct[1])
    inner = ", ".join(_plain(e) for e in struct[1])
    return "[%s]" % inner if kind == "list" else "(%s)" % inner


def _rebuild(struct, leaves):
    kind = struct[0]
    if kind == "leaf":
        return leaves[struct[1]]
    if kind == "value":
        return struct[2]
    if kind == "dict":
        return {k: _rebuild(v, leaves) for k, v in struct[1]}
    items = [_rebuild(e, leaves) for e in struct[1]]
    return items if kind == "list" else tuple(items)


# ---- concrete functions -------------------------------------------------------------------

_call = _tensor._raw.tgc_function_call  # no prototype: every argument is a C value already


class ConcreteFunction:
    """One trace of a tgc.function: its graph (``graph``, a tgc.Graph;
    ``graph.dump()`` gives tgc/1 YAML) compiled for its ``devices``;
    ``input_names``, and the ``warnings`` its compilation gave."""

    def __init__(self, graph, handle, devices, n_inputs, out_struct, n_outputs, signature):
        self.graph = graph
        self.devices = devices
        self.signature = signature
        self._h = handle
        self._n_in, self._n_out = n_inputs, n_outputs
        self._out_struct = out_struct
        self._out_type = ctypes.c_void_p * max(n_outputs, 1)
        self._in_type = ctypes.c_void_p * max(n_inputs, 1)

    def __del__(self):
        if getattr(self, "_h", None) and not _tensor._shutdown[0]:
            lib.tgc_function_free(self._h)

    def call_flat(self, leaves):
        """Runs the graph on `leaves` (Tensors or NumPy data, in trace order);
        returns its outputs in the structure the Python function returned."""
        held = [x if isinstance(x, _tensor.Tensor) else _tensor.tensor(x) for x in leaves]  # alive for the call
        return self._call_tensors(held)

    def __call__(self, *args, **kwargs):
        leaves = []
        _flatten((args, kwargs), leaves)
        return self.call_flat(leaves)

    def _call_tensors(self, args):
        """The call itself: `args` are the leaves, every one a Tensor."""
        outs = self._out_type()
        st = _call(ctypes.c_void_p(self._h), self._in_type(*args), self._n_in, outs, self._n_out,
                   ctypes.c_void_p(diags()))
        if st != 0:
            raise_for(st)
        if self._out_struct[0] == "leaf":
            return _tensor.wrap(outs[0])
        return _rebuild(self._out_struct, [_tensor.wrap(outs[i]) for i in range(self._n_out)])


class Function:
    """A Python function traced into compiled graphs (``tgc.function``).

    Attributes
    ----------
    trace_count : int
        Traces made so far (the first included).
    retraces : list of str
        Why each trace after the first was made: which part of the
        signature changed ("tensor argument 0: shape (1, 64) -> (2, 64)").
    """

    def __init__(self, fn, devices=None, input_signature=None, optimize=2, placement="rules", threads=None,
                 soft_placement=False):
        self._fn = fn
        self.__name__ = getattr(fn, "__name__", "function")
        self.__doc__ = getattr(fn, "__doc__", None)
        self._devices = devices
        self._spec = list(input_signature) if input_signature is not None else None
        from ._graph import _level, _placement
        self._opts = FunctionOptions(_level(optimize), _placement(placement), 1 if soft_placement else 0,
                                     threads.encode() if threads else None)
        self._cache = {}
        self._fast = {}  # the calls' fast path: (Tensor._signature() per argument) -> ConcreteFunction
        self._last_key = None
        self._lock = threading.Lock()
        self.trace_count = 0
        self.retraces = []

    @property
    def graph(self):
        """The graph of the latest trace (a tgc.Graph), or None before the first call."""
        c = self._cache.get(self._last_key)
        return c.graph if c is not None else None

    @property
    def concrete_functions(self):
        """The traces made so far, one per signature (list of ConcreteFunction)."""
        return list(self._cache.values())

    def _key(self, args, kwargs):
        leaves = []
        struct = _flatten((args, kwargs), leaves)
        if self._spec is not None:
            if len(leaves) != len(self._spec):
                raise InvalidError(1, [], "tgc.function %s: input_signature has %d tensors, the call %d" % (
                    self.__name__, len(self._spec), len(leaves)))
            for i, (x, spec) in enumerate(zip(leaves, self._spec)):
                dt, shape, _ = _leaf_key(x)
                if not spec.accepts(dt, shape):
                    raise InvalidError(1, [], "tgc.function %s: tensor argument %d is %s %s; input_signature "
                                       "says %r" % (self.__name__, i, dt, list(shape), spec))
            return (struct, tuple(("spec", i, _leaf_key(x)[2]) for i, x in enumerate(leaves))), leaves
        return (struct, tuple(_leaf_key(x) for x in leaves)), leaves

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (traced now if new)."""
        key, leaves = self._key(args, kwargs)
        return self._concrete(key, leaves, args, kwargs)

    def _concrete(self, key, leaves, args, kwargs):
        c = self._cache.get(key)
        if c is not None:
            return c
        with self._lock:  # one trace at a time; another thread may have made it meanwhile
            c = self._cache.get(key)
            if c is None:
                c = self._trace(key, leaves, args, kwargs)
                if self._last_key is not None:
                    self.retraces.append(_describe_change(self._last_key, key, c.input_names))
                self._cache[key] = c
                self._last_key = key
                self.trace_count += 1
                if self.trace_count == _MANY_TRACES:  # as tf.function warns: each trace compiles a graph
                    warnings.warn("tgc.function %s was traced %d times, the last because %s; an input_signature "
                                  "with symbolic dimensions traces once for every size" % (
                                      self.__name__, self.trace_count, self.retraces[-1]), stacklevel=3)
        return c

    def _input_names(self, args, kwargs, n):
        """The graph inputs' names: a parameter's name for a tensor passed
        alone (`x`), else "argK" (K: the tensor's index among the leaves)."""
        try:
            bound = inspect.signature(self._fn).bind(*args, **kwargs)
        except (TypeError, ValueError):
            return []
        names, k = [], 0
        for pname, value in bound.arguments.items():
            count = len(_flatten_leaves(value))
            if count == 1 and not isinstance(value, (list, tuple, dict)) and pname.isidentifier():
                names.append(pname)
            else:
                names += ["arg%d" % (k + j) for j in range(count)]
            k += count
        return names if len(names) == n and len(set(names)) == n else []

    def _trace(self, key, leaves, args, kwargs):
        if _state.trace is not None:
            raise TracingError(1, [], "tgc.function %s is called while another is traced: call its Python "
                               "function inside instead" % self.__name__)
        trace = _Trace(self.__name__)
        _state.trace = trace
        try:
            traced = []
            names = self._input_names(args, kwargs, len(leaves))
            for i, x in enumerate(leaves):
                dt, shape, device = _leaf_key(x)
                if self._spec is not None:
                    spec = self._spec[i]
                    shape = tuple(d if isinstance(d, (int, str)) else None for d in spec.shape)
                    shape = tuple(d if d is not None else "%s_arg%d_dim%d" % (self.__name__, i, k)
                                  for k, d in enumerate(shape))
                t = trace.input(names[i] if i < len(names) else "arg%d" % i, dt, shape)
                if isinstance(x, _tensor.Tensor) and x.size > 0 and not lib.tgc_tensor_data(x._handle()):
                    # not in host memory: placed where it lies, as TensorFlow's _Arg nodes
                    t = trace.op(b"Identity", [t], None, 1, device)[0]
                traced.append(t)
            t_args, t_kwargs = _rebuild(_flatten((args, kwargs), []), traced)
            result = self._fn(*t_args, **t_kwargs)
            outs = []
            out_struct = _flatten(result, outs)
            values = []
            for o in outs:
                v = trace.operand(o)
                if v._v.node < len(leaves) or not isinstance(o, Traced) or any(v._v.node == x._v.node for x in values):
                    v = trace.op(b"Identity", [v], None, 1, None)[0]  # an input, a constant or a repeat: a node
                values.append(v)
            if not values:
                raise InvalidError(1, [], "tgc.function %s returns no tensor" % self.__name__)
            g = trace.finish(values, ["out%d" % i for i in range(len(values))])
        finally:
            _state.trace = None
            trace.close()
        from ._graph import Graph
        graph = Graph(g, "<tgc.function %s>" % self.__name__)
        # default: the eager context's host cpu (always open) and the arguments' devices
        where = [k[2] for k in key[1] if k[2] not in (None, "host")]
        devices = self._devices or ",".join(dict.fromkeys([_eager.host_cpu()] + where))
        h = ctypes.c_void_p()
        st = lib.tgc_function_create(graph._h, devices.encode(), ctypes.byref(self._opts), diags(), ctypes.byref(h))
        if st != 0:
            raise_for(st)
        c = ConcreteFunction(graph, h.value, devices, len(leaves), out_struct, len(values), key)
        c.input_names = names or ["arg%d" % i for i in range(len(leaves))]
        c.warnings = take_messages()  # placement's (soft placement, one kind), as Session.warnings
        return c

    def __call__(self, *args, **kwargs):
        if _state.trace is not None:  # inside another trace: its ops go into that graph
            return self._fn(*args, **kwargs)
        fast = None
        if not kwargs:  # Tensors alone: their dtypes, shapes and devices are the key
            try:
                fast = tuple([a._signature() for a in args])
            except AttributeError:
                pass
            c = self._fast.get(fast)
            if c is not None:
                return c._call_tensors(args)
        key, leaves = self._key(args, kwargs)
        c = self._cache.get(key)
        if c is None:
            c = self._concrete(key, leaves, args, kwargs)
        if fast is not None:
            self._fast[fast] = c
        return c.call_flat(leaves)


def function(fn=None, *, devices=None, input_signature=None, optimize=2, placement="rules", threads=None,
             soft_placement=False):
    """Traces a Python function into a graph per input signature and runs it
    compiled, as one op (TensorFlow's tf.function).

    Use as ``@tgc.function``, ``@tgc.function(devices="cpu,gpu0")`` or
    ``f = tgc.function(py_fn, ...)``.

    Parameters
    ----------
    fn : callable
        Takes tensors (tgc.Tensor, NumPy arrays), nested in lists, tuples or
        dicts or not, and Python values; returns a tensor or such a nest of
        them. Inside, use tgc ops and operators.
    devices : str, optional
        Where the graph runs ("cpu", "cpu,gpu0"); default: cpu0 and the
        devices of the tensor arguments.
    input_signature : list of TensorSpec, optional
        One per tensor argument: the function is traced once for every call
        that fits (a str or None dimension is symbolic).
    optimize, placement, threads, soft_placement
        As tgc.Session's.

    Returns
    -------
    Function
        Calling it returns what fn returns, with Tensors in the caller's scope.

    Raises
    ------
    tgc.InvalidError
        At trace time: an op whose shapes or dtypes do not fit, located at the
        Python line that called it (TracingError for Python control flow on
        a traced value).
    """
    def make(f):
        return Function(f, devices=devices, input_signature=input_signature, optimize=optimize, placement=placement,
                        threads=threads, soft_placement=soft_placement)
    return make(fn) if fn is not None else make
