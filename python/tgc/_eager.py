"""Eager ops from Python: the process's default eager context (a tgc_eager
over cpu0 and whichever devices tensors were asked onto), running one op by
its ONNX name, and copies between devices."""
import atexit
import ctypes
import threading

from . import _tensor
from ._errors import diags, raise_for
from ._lib import EagerOptions, OpAttr, lib

_lock = threading.Lock()
_ctx = [None]         # the default context's handle
_c_ctx = _tensor._ctx  # the same as a c_void_p, the operators' argument
_devices = []  # its devices, full names, as the opened context lists them (the host's cpu first)
_options = [None]   # EagerOptions, or None

_run = lib.tgc_eager_run


def full_name(device):
    """A kind's prefix alone is its device 0: 'cpu' -> 'cpu0', 'gpu' -> 'gpu0'; others as given."""
    return device + "0" if device.isalpha() and device != "host" else device


def _open(devices, options):
    """A new context over `devices` (full names; none: the host's cpu alone), and the devices it holds."""
    h = ctypes.c_void_p()
    st = lib.tgc_eager_create(",".join(devices).encode() if devices else None,
                              ctypes.byref(options) if options else None, diags(), ctypes.byref(h))
    if st != 0:
        raise_for(st)
    return h.value, [lib.tgc_eager_device_name(h, i).decode() for i in range(lib.tgc_eager_device_count(h))]


def host_cpu():
    """The host's cpu device ("cpu0"): the first device of every eager context, which tgc opens itself."""
    context()
    return _devices[0]


def context(device=None):
    """The default context's handle, opened (again, with `device` added) as needed."""
    ctx = _ctx[0]
    if ctx is not None and (device is None or device == "host" or full_name(device) in _devices):
        return ctx
    with _lock:
        want = list(_devices)
        if device is not None and device != "host" and full_name(device) not in want:
            want.append(full_name(device))
        if _ctx[0] is None or want != _devices:
            h, held = _open(want, _options[0])
            if _ctx[0] is not None:
                lib.tgc_eager_free(_ctx[0])
            _ctx[0] = h
            _c_ctx[0] = ctypes.c_void_p(h)
            _devices[:] = held
        return _ctx[0]


def configure(devices="cpu", threads=None, memory_limits=None):
    """Opens the default eager context afresh over `devices`.

    Parameters
    ----------
    devices : str
        Comma-separated, "cpu,gpu0" (cpu0 is always in).
    threads : str, optional
        Worker threads per cpu device, "cpu0=2" (default: one per core).
    memory_limits : str, optional
        "gpu0=64MiB,cpu=1GiB": limits of the devices, held for every context
        on them (tgc_eager_options.memory_limits).

    Raises
    ------
    tgc.InvalidError
        A malformed list, a device this machine lacks.
    """
    opts = None
    if threads is not None or memory_limits is not None:
        opts = EagerOptions(threads.encode() if threads else None, memory_limits.encode() if memory_limits else None)
    want = [full_name(d.strip()) for d in devices.split(",") if d.strip()]
    with _lock:
        h, held = _open(want, opts)
        if _ctx[0] is not None:
            lib.tgc_eager_free(_ctx[0])
        _ctx[0] = h
        _c_ctx[0] = ctypes.c_void_p(h)
        _devices[:] = held
        _options[0] = opts


def stats():
    """The default context's kernel cache and copies since it opened: a dict of
    ops, cache_hits, cache_misses, cache_entries, copies, copy_bytes."""
    s = lib.tgc_eager_get_stats(context())
    return {k: getattr(s, k) for k, _ in s._fields_}


def _close():
    _tensor.shutdown()  # handles still alive at exit go with the process
    if _ctx[0] is not None:
        lib.tgc_eager_free(_ctx[0])
        _ctx[0] = _c_ctx[0] = None


atexit.register(_close)


def default_context():
    """The default context as a c_void_p (what the operators' calls take), opened if need be."""
    if _c_ctx[0] is None:
        context()
    return _c_ctx[0]


def run(op, inputs, attrs=None, device=None, outputs=1):
    """Runs op `op` (bytes, its ONNX name) on `inputs` (Tensors or None) with
    `attrs` (a ctypes array of OpAttr, or None); returns a list of Tensors."""
    dev = device.encode() if device is not None else None
    ctx = context(device)
    handles = (ctypes.c_void_p * max(len(inputs), 1))(*[t._handle().value if t is not None else None for t in inputs])
    outs = (ctypes.c_void_p * outputs)()
    st = _run(ctx, op, attrs, len(attrs) if attrs is not None else 0, handles, len(inputs), dev, outs, outputs,
              diags())
    if st != 0:
        raise_for(st)
    return [_tensor.wrap(outs[i]) for i in range(outputs)]


def copy_to(t, device):
    """t on `device` (itself when it is there already)."""
    h = t._handle()
    if full_name(device) == lib.tgc_tensor_device(h).decode():
        return t
    ctx = context(device)
    out = _tensor.Tensor()
    st = lib.tgc_eager_copy(ctx, h, full_name(device).encode(), ctypes.byref(out), diags())
    if st != 0:
        raise_for(st)
    return _tensor.adopt(out) if _tensor._open_scopes[0] else out


def cast(t, dtype):
    from . import _dtypes
    import numpy as np
    to = _dtypes.from_numpy(np.dtype(dtype))
    attrs = (OpAttr * 1)(OpAttr(name=b"to", type=0, i=_ONNX_CODES[to]))
    return run(b"Cast", [t], attrs)[0]


# tgc dtype code -> ONNX TensorProto.DataType (Cast's `to`)
_ONNX_CODES = {0: 1, 1: 10, 2: 6, 3: 7, 4: 2, 5: 9, 6: 11, 7: 3, 8: 5, 9: 4, 10: 12, 11: 13, 12: 16, 13: 8}
