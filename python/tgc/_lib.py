"""The C library and its prototypes (ctypes, from the standard library).

Why ctypes: it comes with every Python, so the package installs offline with
nothing to compile (``pip install ./python``) and needs no headers at import;
each call costs a few hundred nanoseconds more than a C extension would, which
the eager benchmark (bench/eager_overhead.py) measures.

The library is looked for, in order: ``$TGC_LIBRARY`` (a path); a copy inside
the package (``pip install`` bundles the build tree's); the prefix written by
``cmake --install`` (``_install_paths.py``); the system's linker paths; the
build tree of a checkout (``../build`` beside ``python/``).
"""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("TGC_LIBRARY")
    if env:
        yield env
    for name in ("libtgc.so.0", "libtgc.so"):
        yield os.path.join(_HERE, name)
    try:
        from . import _install_paths  # written by cmake --install
        yield os.path.join(_install_paths.LIBDIR, "libtgc.so.0")
    except ImportError:
        pass
    found = ctypes.util.find_library("tgc")
    if found:
        yield found
    yield os.path.join(_HERE, "..", "..", "build", "libtgc.so.0")


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("tgc: libtgc not found; set TGC_LIBRARY to its path. Tried: " + "; ".join(tried))


lib, path = _load()

c_int, c_int64, c_size_t, c_double, c_char_p, c_void_p = (
    ctypes.c_int, ctypes.c_int64, ctypes.c_size_t, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p)
P = ctypes.POINTER


class MemoryFigures(ctypes.Structure):
    _fields_ = [("live_buffers", c_int64), ("bytes_in_use", c_int64), ("peak_bytes_in_use", c_int64),
                ("num_allocs", c_int64), ("largest_alloc_size", c_int64)]


class MemoryInfo(ctypes.Structure):
    _fields_ = [("live_tensors", c_int64), ("live_tensor_bytes", c_int64), ("host", MemoryFigures),
                ("scope_depth", c_int), ("scoped_tensors", c_int64)]


class MemoryDevice(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char * 16), ("live_tensors", c_int64), ("live_tensor_bytes", c_int64),
                ("bytes_in_use", c_int64), ("peak_bytes_in_use", c_int64), ("bytes_limit", c_int64),
                ("num_allocs", c_int64)]


class MemoryDelta(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char * 16), ("used_start", c_int64), ("used_now", c_int64),
                ("used_delta", c_int64), ("peak", c_int64), ("peak_delta", c_int64), ("tensors_delta", c_int64)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("description", ctypes.c_char * 256), ("platform", ctypes.c_char * 128),
                ("type", ctypes.c_char * 16), ("compute_units", ctypes.c_uint), ("isa", ctypes.c_char * 16),
                ("total_memory", c_int64), ("used_memory", c_int64), ("free_memory", c_int64)]


class OpAttr(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("type", c_int), ("i", c_int64), ("f", c_double), ("s", c_char_p),
                ("ints", P(c_int64)), ("floats", P(c_double)), ("strings", P(c_char_p)), ("n", c_size_t),
                ("tensor", c_void_p)]


class OpSchema(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("min_inputs", c_int), ("max_inputs", c_int), ("min_outputs", c_int),
                ("max_outputs", c_int), ("n_attrs", c_int)]


class EagerStats(ctypes.Structure):
    _fields_ = [("ops", c_int64), ("cache_hits", c_int64), ("cache_misses", c_int64), ("cache_entries", c_int64),
                ("copies", c_int64), ("copy_bytes", c_int64)]


class EagerOptions(ctypes.Structure):
    _fields_ = [("threads", c_char_p), ("memory_limits", c_char_p)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("soft_placement", c_int), ("threads", c_char_p), ("memory_limits", c_char_p),
                ("memory_report", c_int), ("optimize", c_int), ("max_iterations", c_int64),
                ("max_inflight", c_int), ("peer_timeout_s", ctypes.c_double), ("placement", c_int),
                ("release_weights", c_int), ("float16", c_int)]


class PlaceOptions(ctypes.Structure):
    _fields_ = [("soft_placement", c_int), ("small_host_bytes", c_int64), ("optimize", c_int), ("placement", c_int),
                ("memory_limits", c_char_p), ("threads", c_char_p), ("max_inflight", c_int), ("float16", c_int)]


RELEASE_FN = ctypes.CFUNCTYPE(None, c_void_p)


class BuilderValue(ctypes.Structure):
    _fields_ = [("node", ctypes.c_int32), ("port", ctypes.c_int32)]


class FunctionOptions(ctypes.Structure):
    _fields_ = [("optimize", c_int), ("placement", c_int), ("soft_placement", c_int), ("threads", c_char_p)]

_PROTOTYPES = {
    # name: (restype, argtypes)
    "tgc_status_name": (c_char_p, [c_int]),
    "tgc_dtype_name": (c_char_p, [c_int]),
    "tgc_dtype_size": (c_size_t, [c_int]),
    "tgc_diags_create": (c_void_p, []),
    "tgc_diags_free": (None, [c_void_p]),
    "tgc_diags_count": (c_size_t, [c_void_p]),
    "tgc_diag_severity": (c_int, [c_void_p, c_size_t]),
    "tgc_diag_file": (c_char_p, [c_void_p, c_size_t]),
    "tgc_diag_line": (c_int, [c_void_p, c_size_t]),
    "tgc_diag_column": (c_int, [c_void_p, c_size_t]),
    "tgc_diag_rule": (c_char_p, [c_void_p, c_size_t]),
    "tgc_diag_message": (c_char_p, [c_void_p, c_size_t]),
    "tgc_graph_load": (c_int, [c_char_p, c_void_p, P(c_void_p)]),
    "tgc_graph_free": (None, [c_void_p]),
    "tgc_graph_dump_yaml": (c_int, [c_void_p, c_void_p, c_char_p, c_void_p]),
    "tgc_graph_optimize": (c_int, [c_void_p, c_int, c_char_p, c_void_p, c_void_p, P(c_void_p)]),
    "tgc_graph_adopt_source": (c_int, [c_void_p, c_void_p]),
    "tgc_onnx_import": (c_int, [c_char_p, c_char_p, c_void_p]),
    "tgc_tensor_create": (c_int, [c_int, c_int, P(c_int64), c_void_p, P(c_void_p)]),
    "tgc_tensor_create_borrowed": (c_int, [c_int, c_int, P(c_int64), c_void_p, RELEASE_FN, c_void_p, P(c_void_p)]),
    "tgc_tensor_retain": (c_void_p, [c_void_p]),
    "tgc_tensor_release": (None, [c_void_p]),
    "tgc_tensor_dtype": (c_int, [c_void_p]),
    "tgc_tensor_rank": (c_int, [c_void_p]),
    "tgc_tensor_dims": (P(c_int64), [c_void_p]),
    "tgc_tensor_numel": (c_int64, [c_void_p]),
    "tgc_tensor_data": (c_void_p, [c_void_p]),
    "tgc_tensor_string": (c_char_p, [c_void_p, c_int64]),
    "tgc_tensor_device": (c_char_p, [c_void_p]),
    "tgc_tensor_read": (c_int, [c_void_p, c_void_p, c_size_t]),
    "tgc_eager_create": (c_int, [c_char_p, P(EagerOptions), c_void_p, P(c_void_p)]),
    "tgc_eager_free": (None, [c_void_p]),
    "tgc_eager_device_count": (c_int, [c_void_p]),
    "tgc_eager_device_name": (c_char_p, [c_void_p, c_int]),
    "tgc_eager_run": (c_int, [c_void_p, c_char_p, c_void_p, c_int, c_void_p, c_int, c_char_p, c_void_p, c_int,
                              c_void_p]),
    "tgc_eager_copy": (c_int, [c_void_p, c_void_p, c_char_p, P(c_void_p), c_void_p]),
    "tgc_eager_synchronize": (c_int, [c_void_p]),
    "tgc_eager_get_stats": (EagerStats, [c_void_p]),
    "tgc_op_schema_count": (c_int, []),
    "tgc_op_schema_at": (c_int, [c_int, P(OpSchema)]),
    "tgc_op_schema_attr": (c_int, [c_char_p, c_int, P(c_char_p), P(c_int), P(c_int)]),
    "tgc_scope_begin": (c_int, []),
    "tgc_scope_end": (c_int64, []),
    "tgc_keep": (c_void_p, [c_void_p]),
    "tgc_scope_move_out": (c_void_p, [c_void_p]),
    "tgc_memory": (MemoryInfo, []),
    "tgc_memory_devices": (c_int, [P(MemoryDevice), c_int]),
    "tgc_memory_tracer_start": (c_int, [P(c_void_p)]),
    "tgc_memory_tracer_report": (c_int, [c_void_p, P(MemoryDelta), c_int]),
    "tgc_memory_tracer_free": (None, [c_void_p]),
    "tgc_devices_list": (c_int, [P(DeviceInfo), c_int]),
    "tgc_graph_place": (c_int, [c_void_p, c_char_p, P(PlaceOptions), c_void_p, P(c_void_p)]),
    "tgc_placed_free": (None, [c_void_p]),
    "tgc_placed_dump_yaml": (c_int, [c_void_p, c_void_p, c_char_p, c_void_p]),
    "tgc_placed_dump_json": (c_int, [c_void_p, c_void_p, c_void_p]),
    "tgc_placed_dump_dot": (c_int, [c_void_p, c_void_p, c_void_p]),
    "tgc_placed_summary": (None, [c_void_p, c_void_p]),
    "tgc_placed_device_name": (c_char_p, [c_void_p, c_char_p]),
    "tgc_placed_reason": (c_char_p, [c_void_p, c_char_p]),
    "tgc_graph_partition": (c_int, [c_void_p, c_void_p, c_void_p, P(c_void_p)]),
    "tgc_partitions_free": (None, [c_void_p]),
    "tgc_partitions_count": (c_int, [c_void_p]),
    "tgc_partitions_device": (c_char_p, [c_void_p, c_int]),
    "tgc_partitions_pair_count": (c_int, [c_void_p]),
    "tgc_partitions_dump_yaml": (c_int, [c_void_p, c_int, c_void_p, c_char_p, c_void_p]),
    "tgc_partitions_dump_json": (c_int, [c_void_p, c_void_p, c_void_p]),
    "tgc_partitions_dump_dot": (c_int, [c_void_p, c_void_p, c_void_p]),
    "tgc_partitions_summary": (None, [c_void_p, c_void_p]),
    "tgc_session_create": (c_int, [c_void_p, c_char_p, P(SessionOptions), c_void_p, P(c_void_p)]),
    "tgc_session_free": (None, [c_void_p]),
    "tgc_session_output_count": (c_int, [c_void_p]),
    "tgc_session_output_name": (c_char_p, [c_void_p, c_int]),
    "tgc_session_input_count": (c_int, [c_void_p]),
    "tgc_session_input_name": (c_char_p, [c_void_p, c_int]),
    "tgc_session_run": (c_int, [c_void_p, c_int, P(c_char_p), P(c_void_p), P(c_void_p), c_void_p]),
    "tgc_session_device_count": (c_int, [c_void_p]),
    "tgc_session_device_name": (c_char_p, [c_void_p, c_int]),
    "tgc_session_memory": (MemoryFigures, [c_void_p, c_int]),
    "tgc_session_memory_report": (c_int, [c_void_p, c_void_p]),
    "tgc_session_steps_in_flight": (None, [c_void_p, P(c_int), P(c_int)]),
    "tgc_graph_builder_create": (c_int, [c_char_p, P(c_void_p)]),
    "tgc_graph_builder_free": (None, [c_void_p]),
    "tgc_graph_builder_input": (c_int, [c_void_p, c_char_p, c_int, c_int, P(c_int64), P(c_char_p), c_void_p,
                                        P(BuilderValue)]),
    "tgc_graph_builder_constant": (c_int, [c_void_p, c_char_p, c_void_p, c_void_p, P(BuilderValue)]),
    "tgc_graph_builder_op": (c_int, [c_void_p, c_char_p, c_void_p, c_int, P(BuilderValue), c_int, c_int, c_char_p,
                                     c_char_p, c_void_p, P(BuilderValue)]),
    "tgc_graph_builder_value_info": (c_int, [c_void_p, BuilderValue, P(c_int), P(c_int), P(c_int64), P(c_char_p)]),
    "tgc_graph_builder_finish": (c_int, [c_void_p, P(BuilderValue), c_int, P(c_char_p), c_void_p, P(c_void_p)]),
    "tgc_function_create": (c_int, [c_void_p, c_char_p, P(FunctionOptions), c_void_p, P(c_void_p)]),
    "tgc_function_free": (None, [c_void_p]),
}

for _name, (_res, _args) in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

# FILE * from the C library, for the dumps (open_memstream: glibc, POSIX.1-2008).
libc = ctypes.CDLL(None)
libc.open_memstream.restype = c_void_p
libc.open_memstream.argtypes = [P(c_void_p), P(c_size_t)]
libc.fclose.argtypes = [c_void_p]
libc.free.argtypes = [c_void_p]


def capture(write):
    """Runs write(FILE *) into memory and returns (its return value, the text written)."""
    buf, size = c_void_p(), c_size_t()
    f = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        raise MemoryError("tgc: open_memstream failed")
    try:
        rc = write(f)
    finally:
        libc.fclose(f)
    text = ctypes.string_at(buf, size.value).decode("utf-8", "replace") if buf.value else ""
    libc.free(buf)
    return rc, text
