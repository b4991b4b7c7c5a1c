"""tgc.Tensor: a handle on a tensor that lives on one device, and the scopes
that release handles in bulk (tf.tidy, dispose scopes).

A Tensor holds the one reference its handle was made with. Outside every
scope the Tensor owns it: the handle goes when the Tensor is garbage
collected or disposed. Inside ``with tgc.scope():`` the scope owns it: the
scope's end disposes every Tensor made inside it that was not kept
(``tgc.keep``), whatever still refers to it, as tf.tidy does; using one
afterwards raises ``tgc.Error``.

A Tensor is a ``ctypes.c_void_p`` holding the handle itself: the C library
returns it from the operators' one call (tgc_eager_apply) and it goes back
into calls as it is, with no conversion on the way (the cost of one eager
op from Python is mostly the foreign call: bench/eager_overhead.py).
"""
import ctypes
import itertools
import threading
import weakref

import numpy as np

from . import _dtypes
from ._errors import Error, InvalidError
from ._lib import RELEASE_FN, lib
from ._lib import path as _lib_path

_release = lib.tgc_tensor_release
_shutdown = [False]
# Calls that take Tensors as they are (no prototypes: each argument is
# already a C value), for the hot paths.
_raw = ctypes.CDLL(_lib_path)
_rel = [ctypes.PyDLL(_lib_path).tgc_tensor_release]  # [0] becomes a no-op at exit (shutdown())
_rel[0].restype = None


def shutdown():
    """At exit: handles still alive go with the process (their releases would
    run while the interpreter is half gone)."""
    _shutdown[0] = True
    _rel[0] = lambda t: None


# ---- scopes ------------------------------------------------------------------------

class _Stack(threading.local):
    def __init__(self):
        self.scopes = []


_stack = _Stack()
_open_scopes = [0]  # over all threads: while 0, new tensors skip the thread-local stack
_open_lock = threading.Lock()


class scope:
    """A scope of tensors, as tf.tidy and TorchSharp's dispose scopes.

    Every Tensor made on this thread inside the ``with`` block (tgc.tensor,
    an op, ``.to``) is disposed when the block ends, unless kept with
    ``tgc.keep`` or handed out by ``tgc.tidy``. Scopes nest.

    Examples
    --------
    >>> with tgc.scope():
    ...     y = tgc.ops.relu(x) + 1      # the relu's result and y are temporaries
    ...     z = tgc.keep(y * 2)          # z survives the scope
    """

    __slots__ = ("tensors", "__weakref__")

    def __init__(self):
        self.tensors = {}

    def __enter__(self):
        st = lib.tgc_scope_begin()
        if st != 0:
            raise MemoryError("tgc: no memory for a scope")
        _stack.scopes.append(self)
        with _open_lock:
            _open_scopes[0] += 1
        return self

    def __exit__(self, *exc):
        _stack.scopes.pop()
        with _open_lock:
            _open_scopes[0] -= 1
        for ref in self.tensors.values():
            t = ref()
            if t is not None:
                t.value = None  # the scope's end releases it below
                t._scope = None
        self.tensors.clear()
        lib.tgc_scope_end()
        return False


def keep(t):
    """Takes Tensor `t` (or each Tensor of a list, tuple or dict's values) out
    of its scope: it lives on after the scope ends, until it is garbage
    collected or disposed. Returns its argument."""
    for x in _tensors_in(t):
        if x._scope is not None and x.value is not None:
            lib.tgc_keep(x)
            x._scope.tensors.pop(id(x), None)
            x._scope = None
    return t


def tidy(fn, *args, **kwargs):
    """Runs fn(*args, **kwargs) in a scope and returns its result: the Tensors
    in it (alone, or in a list, tuple or dict) move to the enclosing scope
    (or to the caller outside every scope); every other Tensor made inside
    is disposed, as tf.tidy."""
    with scope() as s:
        result = fn(*args, **kwargs)
        parent = _stack.scopes[-2] if len(_stack.scopes) > 1 else None
        for x in _tensors_in(result):
            if x._scope is s and x.value is not None:
                lib.tgc_scope_move_out(x)
                del s.tensors[id(x)]
                x._scope = parent
                if parent is not None:
                    parent.tensors[id(x)] = weakref.ref(x)
    return result


def _tensors_in(x):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, dict):
        x = x.values()
    if isinstance(x, (list, tuple, type({}.values()))):
        return [t for t in x if isinstance(t, Tensor)]
    return []


# ---- NumPy memory lent to tgc ------------------------------------------------------

_lent = {}
_lent_ids = itertools.count(1)


@RELEASE_FN
def _give_back(ctx):
    _lent.pop(ctx, None)


# ---- tensors ---------------------------------------------------------------------------

class _View:
    """Holds a reference to a handle while a NumPy view of its memory lives."""
    __slots__ = ("h",)

    def __init__(self, h):
        self.h = lib.tgc_tensor_retain(h)

    def __del__(self):
        if not _shutdown[0]:
            _release(self.h)


class Tensor(ctypes.c_void_p):
    """A tensor on one device: dtype, shape and data, made by ``tgc.tensor``,
    an op of ``tgc.ops``, an operator (``+ - * / @``, unary ``-``, ``< <= > >=``) or ``.to``.

    Attributes
    ----------
    shape : tuple of int
    dtype : numpy.dtype, or the str ``"bfloat16"`` (no NumPy dtype)
    device : str
        ``"host"`` (made from NumPy data, or read back), ``"cpu0"``, ``"gpu0"``...
    """

    _scope = None  # the Python scope holding it (instances set their own)
    _meta = None   # (tgc dtype code, shape), read once

    def _handle(self):
        if self.value is None:
            raise InvalidError(1, [], "tgc: this tensor was disposed (by dispose() or the end of its "
                               "scope); tgc.keep(t) keeps one past its scope")
        return self

    @property
    def _h(self):
        return self.value

    def __del__(self):
        _rel[0](self)  # NULL (disposed) is ignored; a no-op once the interpreter exits

    def __bool__(self):
        return bool(self.item())

    def dispose(self):
        """Releases the tensor's memory now (tf.js's dispose); using the Tensor
        afterwards raises tgc.Error. Disposing twice does nothing."""
        h = self.value
        if h is not None:
            self.value = None
            if self._scope is not None:
                self._scope.tensors.pop(id(self), None)
                self._scope = None
            _release(h)

    @property
    def disposed(self):
        """True once the tensor's memory was released."""
        return self.value is None

    def _info(self):
        m = self._meta
        if m is None:
            h = self._handle()
            rank = lib.tgc_tensor_rank(h)
            dims = lib.tgc_tensor_dims(h)
            m = self._meta = (lib.tgc_tensor_dtype(h), tuple(dims[i] for i in range(rank)))
        return m

    @property
    def shape(self):
        return self._info()[1]

    @property
    def dtype(self):
        code = self._info()[0]
        return _dtypes.TO_NUMPY.get(code, _dtypes.name(code))

    @property
    def device(self):
        return lib.tgc_tensor_device(self._handle()).decode()

    def _signature(self):
        """(dtype code, shape, device name bytes): what tgc.function's calls key on."""
        code, shape = self._meta or self._info()
        return code, shape, lib.tgc_tensor_device(self._handle())

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("len() of a 0-d tensor")
        return s[0]

    def numpy(self):
        """The tensor's values as a NumPy array (C order).

        Returns
        -------
        numpy.ndarray
            Where the tensor lives in host memory (host, cpuN), a read-only view
            of its memory: no copy (it keeps the memory alive, even past the
            tensor's scope). From a gpu, a new array read back. bfloat16 comes
            back as float32 (a copy), strings as an object array of str.
        """
        h = self._handle()
        code, shape = self._info()
        n = self.size
        if code == _dtypes.STRING:
            out = np.empty(n, dtype=object)
            for i in range(n):
                out[i] = lib.tgc_tensor_string(h, i).decode("utf-8")
            return out.reshape(shape)
        if code == _dtypes.BFLOAT16:
            raw = np.empty(shape, np.uint16)
            _read(h, raw)
            return (raw.astype(np.uint32) << 16).view(np.float32)
        dt = _dtypes.TO_NUMPY[code]
        ptr = lib.tgc_tensor_data(h)
        if not ptr or n == 0:
            out = np.empty(shape, dt)
            if n:
                _read(h, out)
            return out
        buf = (ctypes.c_char * (n * dt.itemsize)).from_address(ptr)
        buf._tgc_view = _View(h)
        out = np.frombuffer(buf, dt).reshape(shape)
        out.flags.writeable = False
        return out

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def to(self, device):
        """A copy on `device` ("cpu", "gpu0", "host"), or this tensor when it is there already.

        Raises
        ------
        tgc.InvalidError
            A device this machine lacks; strings to a gpu.
        """
        from . import _eager
        return _eager.copy_to(self, device)

    def item(self):
        """The value of a one-element tensor, as a Python number."""
        return self.numpy().reshape(-1)[0].item()

    def __repr__(self):
        if self.value is None:
            return "tgc.Tensor(disposed)"
        return "tgc.Tensor(shape=%s, dtype=%s, device=%s)" % (list(self.shape), _dtypes.name(self._info()[0]),
                                                              self.device)


def _read(h, array):
    if lib.tgc_tensor_read(h, array.ctypes.data, array.nbytes) != 0:
        raise Error(5, [], "tgc: reading the tensor back from its device failed")


def adopt(t):
    """Files new Tensor t in this thread's innermost scope, if one is open
    (the C scope holds its handle already). Returns t."""
    scopes = _stack.scopes
    if scopes:
        s = scopes[-1]
        t._scope = s
        s.tensors[id(t)] = weakref.ref(t)
    return t


def wrap(h):
    """A Tensor for a new handle `h` (an int: its one reference), in the innermost scope if one is open."""
    t = Tensor(h)
    return adopt(t) if _open_scopes[0] else t


def tensor(data, dtype=None, device=None):
    """A tensor from NumPy data (or anything ``numpy.asarray`` takes).

    Parameters
    ----------
    data : array_like
        Any shape of rank <= 8. A C-contiguous, aligned ndarray of a tgc dtype
        is not copied: the tensor reads its memory in place (as
        ``torch.from_numpy``), and keeps the array alive; do not write to the
        array while the tensor lives. Anything else is converted first.
        Strings (str arrays) become string tensors.
    dtype : numpy dtype, optional
        Converts the data first (``numpy.asarray(data, dtype)``).
    device : str, optional
        ``"gpu0"``, ``"cpu"``...: a copy there (counted by the eager context);
        None: the data stays in host memory, on ``"host"``.

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        A dtype tgc lacks (complex, datetime) or a rank above 8.
    tgc.InvalidError
        A device this machine lacks.
    """
    if isinstance(data, Tensor):
        t = data
        if dtype is not None and np.dtype(dtype) != t.dtype:
            from . import _eager
            t = _eager.cast(t, dtype)
        return t if device is None else t.to(device)
    a = np.asarray(data, dtype=dtype)
    code = _dtypes.from_numpy(a.dtype)
    if a.ndim > 8:
        raise ValueError("tgc tensors have rank 8 at most, got %d" % a.ndim)
    dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    out = Tensor()
    if code == _dtypes.STRING:
        flat = [s if isinstance(s, bytes) else str(s).encode("utf-8") for s in a.reshape(-1)]
        arr = (ctypes.c_char_p * max(len(flat), 1))(*flat)
        st = lib.tgc_tensor_create(code, a.ndim, dims, arr, ctypes.byref(out))
    else:
        if not (a.flags.c_contiguous and a.flags.aligned) or a.dtype.byteorder == ">":
            a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
        key = next(_lent_ids)
        _lent[key] = a
        st = lib.tgc_tensor_create_borrowed(code, a.ndim, dims, a.ctypes.data if a.size else None, _give_back,
                                            key, ctypes.byref(out))
        if st != 0:
            _lent.pop(key, None)
    if st != 0:
        raise InvalidError(st, [], "tgc: cannot make a tensor of %s %s" % (a.dtype, a.shape))
    t = adopt(out) if _open_scopes[0] else out
    return t if device is None else t.to(device)


# The operators' path: one foreign call, tgc_eager_apply, whose result is
# already a Tensor (its restype), on the default context; a failed call
# runs again with a diagnostics list for tgc's message (a failed op leaves
# nothing behind).
_apply = _raw.tgc_eager_apply
_apply.restype = Tensor
_ctx = [None]  # the default context as a c_void_p (set by _eager)


def _binary(op, reflected=False):
    """The operator method for binary op `op` (bytes): self op o, or o op
    self when reflected. Its body is the whole hot path: one frame, the
    globals it reads bound as locals."""
    if reflected:
        def method(self, o, _apply=_apply, _ctx=_ctx, _open=_open_scopes, Tensor=Tensor):
            if type(o) is not Tensor:
                if getattr(o, "_traced", False):
                    return NotImplemented  # a value tgc.function traces: its operator records the op
                o = _like(o, self)
            t = _apply(_ctx[0], op, o, self, None)
            if t.value is None:
                t = _failed(op, o, self)
            return adopt(t) if _open[0] else t
    else:
        def method(self, o, _apply=_apply, _ctx=_ctx, _open=_open_scopes, Tensor=Tensor):
            if type(o) is not Tensor:
                if getattr(o, "_traced", False):
                    return NotImplemented  # a value tgc.function traces: its operator records the op
                o = _like(o, self)
            t = _apply(_ctx[0], op, self, o, None)
            if t.value is None:
                t = _failed(op, self, o)
            return adopt(t) if _open[0] else t
    return method


def _unary(op):
    def method(self, _apply=_apply, _ctx=_ctx, _open=_open_scopes):
        t = _apply(_ctx[0], op, self, None, None)
        if t.value is None:
            t = _failed(op, self, None)
        return adopt(t) if _open[0] else t
    return method


for _name, _op in (("add", b"Add"), ("sub", b"Sub"), ("mul", b"Mul"), ("truediv", b"Div"), ("matmul", b"MatMul")):
    setattr(Tensor, "__%s__" % _name, _binary(_op))
    setattr(Tensor, "__r%s__" % _name, _binary(_op, reflected=True))
for _name, _op in (("gt", b"Greater"), ("lt", b"Less"), ("ge", b"GreaterOrEqual"), ("le", b"LessOrEqual")):
    setattr(Tensor, "__%s__" % _name, _binary(_op))  # 0 < x is x > 0: Python mirrors comparisons itself
Tensor.__neg__ = _unary(b"Neg")
Tensor.__abs__ = _unary(b"Abs")


def _failed(op, a, b):
    """The operator's call again, after making sure of what can be made
    sure of (the inputs live, the default context open), with a
    diagnostics list: its result, or tgc's error."""
    from . import _eager, _errors
    a._handle()
    if b is not None:
        b._handle()
    t = _apply(_eager.default_context(), op, a, b, ctypes.c_void_p(_errors.diags()))  # no prototype: a C pointer
    if t.value is None:
        _errors.raise_for(1)
    return t


def _like(x, t):
    """Python numbers as 0-d tensors of t's dtype; anything else as tgc.tensor."""
    if isinstance(x, (int, float, bool, np.generic)):
        dt = t.dtype
        return tensor(np.asarray(x, dtype=dt if isinstance(dt, np.dtype) else np.float32))
    return tensor(x)
