"""Graphs, placements, partitions and sessions: the compile-and-run half of
the C API, as tgc compile and tgc run use it."""
import ctypes
import os

from . import _memory, _tensor
from ._errors import diags, raise_for, take_messages
from ._lib import PlaceOptions, SessionOptions, capture, lib

_LEVELS = {0: 1, 1: 2, 2: 3}  # --optimize N -> tgc_optimize_level
_PLACEMENTS = {"rules": 0, "auto": 1}  # --placement -> tgc_placement_mode


def _placement(placement):
    if placement not in _PLACEMENTS:
        raise ValueError("placement is 'rules' or 'auto', not %r" % (placement,))
    return _PLACEMENTS[placement]


def _level(optimize):
    if optimize not in _LEVELS:
        raise ValueError("optimize takes 0, 1 or 2 (as --optimize), not %r" % (optimize,))
    return _LEVELS[optimize]


def _dump(write):
    """Runs a dump writing to a FILE *; returns its text, or raises tgc's error."""
    d = diags()
    st, text = capture(lambda f: write(f, d))
    if st != 0:
        raise_for(st)
    return text


class Graph:
    """A tgc/1 graph, loaded, validated and shape-inferred (``tgc.load``).

    Attributes
    ----------
    path : str
        The file it came from.
    warnings : list of dict
        Warnings the last call on it gave (soft placement's relaxations).
    """

    def __init__(self, handle, path):
        self._h = handle
        self.path = path
        self.warnings = []

    def __del__(self):
        if getattr(self, "_h", None) and not _tensor._shutdown[0]:
            lib.tgc_graph_free(self._h)

    def dump(self, dest_dir=None):
        """The graph as tgc/1 YAML with every node's inferred ``out``, as ``tgc
        compile --dump shapes`` writes it (str)."""
        return _dump(lambda f, d: lib.tgc_graph_dump_yaml(self._h, f, dest_dir.encode() if dest_dir else None, d))

    def optimize(self, optimize=2, devices=None):
        """The graph after the optimization passes (``--optimize``), a new Graph."""
        out = ctypes.c_void_p()
        st = lib.tgc_graph_optimize(self._h, _level(optimize), devices.encode() if devices else None, None, diags(),
                                    ctypes.byref(out))
        if st != 0:
            raise_for(st)
        g = Graph(out.value, self.path)
        g._source = self  # its weights are borrowed from this graph
        return g

    def place(self, devices, soft_placement=False, optimize=2, placement="rules", memory_limit=None, threads=None,
              max_inflight=0):
        """A device for every node, as ``tgc compile --devices LIST --dump placed``.

        Parameters
        ----------
        devices : str
            Comma-separated: "cpu", "cpu,gpu0", "cpu0,cpu1".
        soft_placement : bool
            Relax device specs that cannot hold (warnings in ``.warnings``).
        optimize : {0, 1, 2}
            The passes run first, as the command line does (2: all).
        placement : {"rules", "auto"}
            "auto": the nodes the rules leave open go where the graph runs
            fastest under each device's memory (``memory_limit``, else what
            it has), for pools of ``threads`` and ``max_inflight`` steps at
            once, as ``Session(placement="auto")`` would place them.

        Returns
        -------
        Placement

        Raises
        ------
        tgc.InvalidError
            A bad device list; a placement conflict (the message names the nodes).
        """
        out = ctypes.c_void_p()
        opts = PlaceOptions(1 if soft_placement else 0, 0, _level(optimize), _placement(placement),
                            memory_limit.encode() if memory_limit else None, threads.encode() if threads else None,
                            int(max_inflight))
        st = lib.tgc_graph_place(self._h, devices.encode(), ctypes.byref(opts), diags(), ctypes.byref(out))
        if st != 0:
            raise_for(st)
        p = Placement(out.value, self)
        p.warnings = take_messages()
        return p

    def partition(self, devices, soft_placement=False, optimize=2, placement="rules", memory_limit=None):
        """One subgraph per device, joined by _Send/_Recv pairs, as ``tgc compile
        --dump partitioned`` (the placement first, as ``place``). Returns Partitions."""
        return self.place(devices, soft_placement, optimize, placement, memory_limit).partition()


class Placement:
    """A placed graph (``Graph.place``): ``device_of(node)``, ``reason_of(node)``,
    ``dump(format)`` as the command line's, ``summary()``."""

    def __init__(self, handle, graph):
        self._h = handle
        self.graph = graph
        self.warnings = []

    def __del__(self):
        if getattr(self, "_h", None) and not _tensor._shutdown[0]:
            lib.tgc_placed_free(self._h)

    def device_of(self, node):
        """The full device name ("gpu0") node `node` got; KeyError for no such node."""
        r = lib.tgc_placed_device_name(self._h, node.encode())
        if r is None:
            raise KeyError(node)
        return r.decode()

    def reason_of(self, node):
        """The rule that decided it: "spec", "colocation", "kernel", "host-memory", ..."""
        r = lib.tgc_placed_reason(self._h, node.encode())
        if r is None:
            raise KeyError(node)
        return r.decode()

    def dump(self, format="yaml", dest_dir=None):
        """The placement as ``--dump placed --format FORMAT`` writes it: "yaml" (a
        tgc/1 graph with ``device:`` on every node), "json" or "dot" (str)."""
        if format == "yaml":
            return _dump(lambda f, d: lib.tgc_placed_dump_yaml(self._h, f, dest_dir.encode() if dest_dir else None, d))
        if format == "json":
            return _dump(lambda f, d: lib.tgc_placed_dump_json(self._h, f, d))
        if format == "dot":
            return _dump(lambda f, d: lib.tgc_placed_dump_dot(self._h, f, d))
        raise ValueError("format is yaml, json or dot, not %r" % (format,))

    def summary(self):
        """Nodes per device and the tensors crossing devices (str), as the command line prints it."""
        return capture(lambda f: lib.tgc_placed_summary(self._h, f))[1]

    def partition(self):
        """Partitions of this placement."""
        out = ctypes.c_void_p()
        st = lib.tgc_graph_partition(self.graph._h, self._h, diags(), ctypes.byref(out))
        if st != 0:
            raise_for(st)
        return Partitions(out.value, self)


class Partitions:
    """A graph split into one subgraph per device (``Placement.partition``).

    Attributes
    ----------
    devices : list of str
        The partitions' devices, in device-list order.
    pairs : int
        The _Send/_Recv pairs.
    """

    def __init__(self, handle, placement):
        self._h = handle
        self.placement = placement
        self.devices = [lib.tgc_partitions_device(handle, i).decode() for i in range(lib.tgc_partitions_count(handle))]
        self.pairs = lib.tgc_partitions_pair_count(handle)

    def __del__(self):
        if getattr(self, "_h", None) and not _tensor._shutdown[0]:
            lib.tgc_partitions_free(self._h)

    def dump(self, format="yaml", dest_dir=None):
        """As ``--dump partitioned --format FORMAT``: "yaml" gives a dict of
        device -> tgc/1 document; "json" and "dot" one str."""
        if format == "yaml":
            return {dev: _dump(lambda f, d, i=i: lib.tgc_partitions_dump_yaml(
                self._h, i, f, dest_dir.encode() if dest_dir else None, d)) for i, dev in enumerate(self.devices)}
        if format == "json":
            return _dump(lambda f, d: lib.tgc_partitions_dump_json(self._h, f, d))
        if format == "dot":
            return _dump(lambda f, d: lib.tgc_partitions_dump_dot(self._h, f, d))
        raise ValueError("format is yaml, json or dot, not %r" % (format,))

    def summary(self):
        """The partitions, their pairs and bytes per device pair (str)."""
        return capture(lambda f: lib.tgc_partitions_summary(self._h, f))[1]


def load(path):
    """Loads a model: a tgc/1 YAML file or an ONNX model (by its ``.onnx``
    suffix, read straight into memory: the graph ``tgc import`` would
    write, with its names; no file is written).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Graph

    Raises
    ------
    tgc.InvalidError
        The file breaks a rule of the format; the message gives every problem
        as FILE:LINE:COL: error: MESSAGE [RULE] (FILE: error: ... for an
        ONNX model, naming its nodes as the model does).
    tgc.FileError
        It cannot be read.
    tgc.UnsupportedError
        An ONNX model using what tgc lacks (every op, attribute and dtype at once).
    """
    path = os.fspath(path)
    out = ctypes.c_void_p()
    st = lib.tgc_graph_load(path.encode(), diags(), ctypes.byref(out))
    if st != 0:
        raise_for(st)
    return Graph(out.value, path)


class Session:
    """A model compiled for a list of devices, its weights loaded once, ready
    to run many times (ONNX Runtime's InferenceSession).

    Parameters
    ----------
    model : str, os.PathLike or Graph
        A tgc/1 YAML file, an ONNX model, or a loaded Graph. A model given
        by its path is the session's alone: a weight a kernel keeps in its
        own layout (packed for oneDNN, Winograd-transformed) is then held
        once, its original let go, and ``Session.graph`` can no longer be
        placed or written out. A Graph given is left whole.
    devices : str
        Comma-separated ("cpu", "cpu,gpu0", "cpu0,cpu1"), or "auto": the GPU
        with the most free memory, else the cpu (tgc.devices()).
    memory_limit : str, optional
        Per device, "gpu0=64MiB,cpu=512KiB" (as ``--memory-limit``): a run
        that would pass it raises tgc.OutOfMemoryError naming the node.
    threads : str, optional
        Worker threads per device, "cpu0=2" (default: one per core on a cpu).
    soft_placement : bool
        Relax device specs that cannot hold.
    optimize : {0, 1, 2}
        The optimization passes (2: all).
    memory_report : bool
        Watch the runs so that ``memory_report()`` names the largest tensors
        live at each device's peak.
    max_inflight : int
        The most runs (steps) that may run at once when several threads call
        ``run`` on this session (0: no bound); a run past it waits until one
        ends. Each run is a step of its own, its outputs bitwise those of a
        lone run (docs/pipelines.md); ``run`` releases the GIL while it runs.
    float16 : bool
        Compute in float16 what a listed gpu has float16 kernels for (as
        ``--float16``): weights held in float16, inputs and outputs keeping
        their dtypes, results within float16 rounding of float32's.

    Attributes
    ----------
    inputs, outputs : list of str
        The graph's input and output names, in order: an ONNX model's are its
        ONNX names as written in the file ("onnx::Flatten_0", "input.1").

    Examples
    --------
    >>> s = tgc.Session("examples/digits/cnn.yaml", devices="cpu,gpu0")
    >>> s.run({"x": x})["logits"].shape
    (400, 10)
    """

    def __init__(self, model, devices="cpu", memory_limit=None, threads=None, soft_placement=False, optimize=2,
                 memory_report=False, max_inflight=0, placement="rules", float16=False):
        self._h = None
        # A graph loaded here is the session's alone: it may let go of the
        # weights its kernels hold in their own layouts (held once).
        own = not isinstance(model, Graph)
        self.graph = load(model) if own else model
        self.devices = _memory.auto_device() if devices == "auto" else devices
        opts = SessionOptions(1 if soft_placement else 0, threads.encode() if threads else None,
                              memory_limit.encode() if memory_limit else None, 1 if memory_report else 0,
                              _level(optimize), 0, int(max_inflight), 0.0, _placement(placement), 1 if own else 0,
                              1 if float16 else 0)
        out = ctypes.c_void_p()
        st = lib.tgc_session_create(self.graph._h, self.devices.encode(), ctypes.byref(opts), diags(),
                                    ctypes.byref(out))
        if st != 0:
            raise_for(st)
        self._h = out.value
        self.warnings = take_messages()
        # An ONNX model's inputs and outputs go by their ONNX names, as written
        # in the file ("onnx::Flatten_0", "input.1"), as in ONNX Runtime.
        self.inputs = [lib.tgc_session_input_name(self._h, i).decode()
                       for i in range(lib.tgc_session_input_count(self._h))]
        self.outputs = [lib.tgc_session_output_name(self._h, i).decode()
                        for i in range(lib.tgc_session_output_count(self._h))]

    def __del__(self):
        if getattr(self, "_h", None) and not _tensor._shutdown[0]:
            lib.tgc_session_free(self._h)

    def run(self, feeds):
        """Runs the model once.

        Parameters
        ----------
        feeds : dict of str to array_like
            Every graph input by name (``inputs``: an ONNX model's by its ONNX
            names, as written in the file; tgc's names of them work too), with
            its declared dtype and a shape that matches its declaration
            (symbols bind across feeds). NumPy arrays are read in place, not
            copied.

        Returns
        -------
        dict of str to numpy.ndarray
            Every graph output by name (``outputs``: an ONNX model's by its
            ONNX names): read-only arrays over the outputs' host memory (no
            copy).

        Raises
        ------
        tgc.InvalidError
            A missing, unknown or mistyped feed (the message names it).
        tgc.OutOfMemoryError
            A memory limit reached (the message names the node and device).
        tgc.RuntimeFailure
            A kernel failed (the message names the node, op and device).
        """
        names = list(feeds)
        tensors = [v if isinstance(v, _tensor.Tensor) else _tensor.tensor(v) for v in feeds.values()]
        n = len(names)
        c_names = (ctypes.c_char_p * max(n, 1))(*[k.encode() for k in names])
        c_feeds = (ctypes.c_void_p * max(n, 1))(*[t._handle().value for t in tensors])
        outs = (ctypes.c_void_p * max(len(self.outputs), 1))()
        st = lib.tgc_session_run(self._h, n, c_names, c_feeds, outs, diags())
        if st != 0:
            raise_for(st)
        result = {}
        for i, name in enumerate(self.outputs):
            t = _tensor.wrap(outs[i])
            result[name] = t.numpy()  # the view holds its own reference
            t.dispose()
        return result

    def memory(self):
        """Per device of the session, a dict of live_buffers, bytes_in_use,
        peak_bytes_in_use, num_allocs, largest_alloc_size (bytes)."""
        out = {}
        for i in range(lib.tgc_session_device_count(self._h)):
            f = lib.tgc_session_memory(self._h, i)
            out[lib.tgc_session_device_name(self._h, i).decode()] = {k: getattr(f, k) for k, _ in f._fields_}
        return out

    def steps_in_flight(self):
        """(now, peak): the runs of this session running now, and the most
        that ever ran at once (int, int)."""
        now, peak = ctypes.c_int(), ctypes.c_int()
        lib.tgc_session_steps_in_flight(self._h, ctypes.byref(now), ctypes.byref(peak))
        return now.value, peak.value

    def memory_report(self):
        """The memory report ``tgc run --memory-report`` prints (str)."""
        return capture(lambda f: lib.tgc_session_memory_report(self._h, f))[1]
