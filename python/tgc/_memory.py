"""What is live, per device (tf.memory(), fastai's gpu_mem_get_all), and
memory traces over blocks (fastai's GPUMemTrace)."""
import ctypes

from ._lib import DeviceInfo, MemoryDelta, MemoryDevice, lib


def _row(s, skip=("device",)):
    return {k: getattr(s, k) for k, _ in s._fields_ if k not in skip}


def memory():
    """What is live now, as tf.memory() gives it.

    Returns
    -------
    dict
        ``num_tensors`` and ``num_bytes``: tensor handles alive in the process
        and their data (numel x dtype size, bytes); ``scope_depth`` and
        ``scoped_tensors``: this thread's open scopes and the tensors they
        hold; ``devices``: per device ("host", then each device eager work has
        open: "cpu0", "gpu0"), a dict of ``live_tensors``,
        ``live_tensor_bytes``, ``bytes_in_use``, ``peak_bytes_in_use``,
        ``bytes_limit`` (0: none) and ``num_allocs``, in bytes.
    """
    m = lib.tgc_memory()
    rows = (MemoryDevice * 40)()
    n = min(lib.tgc_memory_devices(rows, 40), 40)
    return {"num_tensors": m.live_tensors, "num_bytes": m.live_tensor_bytes, "scope_depth": m.scope_depth,
            "scoped_tensors": m.scoped_tensors,
            "devices": {rows[i].device.decode(): _row(rows[i]) for i in range(n)}}


class trace_memory:
    """Used and peak memory over a block, per device, as fastai's GPUMemTrace.

    Examples
    --------
    >>> with tgc.trace_memory() as m:
    ...     y = tgc.ops.relu(x.to("gpu0"))
    >>> m.deltas["gpu0"]["peak_delta"]   # bytes above the start at the peak
    >>> print(m)                          # a line per device

    ``m.report()`` gives the figures so far while the block runs; after it,
    ``m.deltas`` holds those at its end: per device, ``used_start``,
    ``used_now``, ``used_delta`` (bytes in use now - at the start), ``peak``
    (the most at once since the start), ``peak_delta`` (peak - used_start)
    and ``tensors_delta`` (live tensors now - at the start). Traces nest.
    """

    def __init__(self):
        self._h = None
        self.deltas = {}

    def __enter__(self):
        h = ctypes.c_void_p()
        if lib.tgc_memory_tracer_start(ctypes.byref(h)) != 0:
            raise MemoryError("tgc: no memory for a trace")
        self._h = h.value
        return self

    def report(self):
        """The per-device figures since the start (dict of dicts, bytes)."""
        rows = (MemoryDelta * 40)()
        n = min(lib.tgc_memory_tracer_report(self._h, rows, 40), 40)
        return {rows[i].device.decode(): _row(rows[i]) for i in range(n)}

    def __exit__(self, *exc):
        self.deltas = self.report()
        lib.tgc_memory_tracer_free(self._h)
        self._h = None
        return False

    def __del__(self):
        if self._h is not None:
            lib.tgc_memory_tracer_free(self._h)

    def __str__(self):
        d = self.deltas if self._h is None else self.report()
        return "\n".join("%-6s used %+d bytes, peaked %+d bytes, tensors %+d" % (k, v["used_delta"], v["peak_delta"],
                                                                                 v["tensors_delta"])
                         for k, v in d.items())


def devices():
    """This machine's devices, as ``tgc devices`` lists them (fastai's gpu_mem_get_all).

    Returns
    -------
    list of dict
        Per device: ``name`` ("cpu", "gpu0", ...), ``type`` (what the hardware
        is: "cpu", "gpu", "accelerator"), ``description``, ``platform``,
        ``compute_units``, ``isa``, and ``total``, ``used`` (by tgc in this
        process), ``free`` memory in bytes (-1 where the platform does not say).
    """
    rows = (DeviceInfo * 17)()
    n = lib.tgc_devices_list(rows, 17)
    out = []
    for r in rows[:n]:
        out.append({"name": r.name.decode(), "type": r.type.decode(), "description": r.description.decode(),
                    "platform": r.platform.decode(), "compute_units": r.compute_units, "isa": r.isa.decode(),
                    "total": r.total_memory, "used": r.used_memory, "free": r.free_memory})
    return out


def auto_device():
    """fastai's gpu_with_max_free_mem: the gpuN that is a GPU with the most free
    memory (its total where the platform does not say), else "cpu"."""
    gpus = [d for d in devices() if d["name"].startswith("gpu") and d["type"] == "gpu"]
    if not gpus:
        return "cpu"
    return max(gpus, key=lambda d: d["free"] if d["free"] >= 0 else d["total"])["name"]
