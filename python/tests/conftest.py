"""Shared fixtures: the repository's data, and a leak check around every test.

The leak check is tgc's own counters, not the sanitizer's: Python keeps much
of its own memory to the end of the process, so LeakSanitizer cannot tell
tgc's leaks from the interpreter's. After each test (garbage collected) the
live tensor handles must be as before, and no device may hold more bytes
than its live tensors account for."""
import gc
import os

import pytest

import tgc

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def data(*parts):
    return os.path.join(ROOT, *parts)


def has_gpu():
    return any(d["name"] == "gpu0" for d in tgc.devices())


gpu = pytest.mark.skipif(not has_gpu(), reason="no gpu0 (an OpenCL device) on this machine")


@pytest.fixture(autouse=True)
def no_leaks():
    gc.collect()
    before = tgc.memory()["num_tensors"]
    yield
    gc.collect()
    m = tgc.memory()
    assert m["num_tensors"] == before, "tensor handles leaked: %d -> %d" % (before, m["num_tensors"])
    for name, d in m["devices"].items():
        if name != "host":  # host buffers also hold session weights read as shapes
            assert d["bytes_in_use"] == d["live_tensor_bytes"], "%s holds bytes no tensor accounts for: %r" % (
                name, d)
