"""The memory stories from Python: the classic leak (10^4 eager ops whose
results are all kept) grows the live tensors by exactly 10^4; a scope per
iteration keeps them flat and a kept tensor survives; dispose, tidy,
tgc.memory() per device, memory traces, and tgc.devices()."""
import gc

import numpy as np
import pytest

import tgc
from conftest import gpu

N = 10000


def live():
    gc.collect()
    return tgc.memory()["num_tensors"]


def test_the_leak_grows_by_exactly_the_loop():
    x, one = tgc.tensor(np.float32([1, 2, 3, 4])), tgc.tensor(np.float32(1))
    before = tgc.memory()
    results = [x + one for _ in range(N)]  # the leak: every result held
    after = tgc.memory()
    assert after["num_tensors"] - before["num_tensors"] == N
    assert after["num_bytes"] - before["num_bytes"] == N * 16
    cpu = after["devices"]["cpu0"]["live_tensors"] - before["devices"].get("cpu0", {}).get("live_tensors", 0)
    assert cpu == N
    np.testing.assert_array_equal(results[-1].numpy(), [2, 3, 4, 5])
    del results  # the fix in Python: drop them
    assert live() == before["num_tensors"]


def test_a_scope_per_iteration_stays_flat_and_keep_survives():
    x = tgc.tensor(np.float32([1, 2, 3, 4]))
    base = live()
    most, keep_me, held = 0, None, []
    for i in range(1000):
        with tgc.scope():
            a = x + 1
            b = a * 2
            held.append(b)  # still referenced, but the scope disposes it
            if i == 999:
                keep_me = tgc.keep(b)
        most = max(most, tgc.memory()["num_tensors"] - base)
    assert most == 1  # only the kept one, after the last iteration
    assert all(t.disposed for t in held[:-1]) and not keep_me.disposed
    np.testing.assert_array_equal(keep_me.numpy(), [4, 6, 8, 10])
    with pytest.raises(tgc.Error, match="disposed"):
        held[0].numpy()
    del keep_me, held, a, b  # b is the kept tensor too
    assert live() == base


def test_scopes_nest_and_tidy_hands_back_its_result():
    x = tgc.tensor(np.float32([1, 2]))
    base = live()
    with tgc.scope():
        outer = x + 1
        with tgc.scope():
            inner = x + 2
            r = tgc.tidy(lambda: (x * 3) + 0)  # x*3 is disposed, the sum moves to the inner scope
            assert tgc.memory()["scoped_tensors"] == 3
        assert inner.disposed and r.disposed and not outer.disposed
        assert tgc.memory()["scope_depth"] == 1
    assert outer.disposed and live() == base
    kept = tgc.tidy(lambda: {"y": x + 10})["y"]  # outside every scope: the caller's
    assert not kept.disposed and list(kept.numpy()) == [11, 12]


def test_dispose_frees_now():
    x = tgc.tensor(np.zeros(1024, np.float32))
    y = tgc.ops.relu(x)
    before = tgc.memory()["devices"]["cpu0"]["bytes_in_use"]
    y.dispose()
    y.dispose()  # twice: nothing
    assert tgc.memory()["devices"]["cpu0"]["bytes_in_use"] == before - 4096


def test_trace_memory_gives_used_and_peak_deltas():
    x = tgc.tensor(np.zeros(1 << 16, np.float32))
    with tgc.trace_memory() as outer:
        tmp = tgc.ops.relu(x)  # 256 KiB on cpu0, then dropped
        del tmp
        gc.collect()
        with tgc.trace_memory() as inner:
            small = tgc.ops.relu(tgc.tensor(np.zeros(4, np.float32)))
            assert inner.report()["cpu0"]["used_delta"] == 16
    assert inner.deltas["cpu0"]["peak_delta"] == 16 and inner.deltas["cpu0"]["tensors_delta"] == 1
    assert outer.deltas["cpu0"]["used_delta"] == 16
    assert outer.deltas["cpu0"]["peak_delta"] == 1 << 18  # the relu's result, before the inner trace began
    assert "cpu0   used +16 bytes, peaked +262144 bytes, tensors +1" in str(outer)
    del small


def test_memory_per_device():
    m = tgc.memory()
    assert {"num_tensors", "num_bytes", "devices", "scope_depth", "scoped_tensors"} <= set(m)
    assert "host" in m["devices"]
    assert {"live_tensors", "live_tensor_bytes", "bytes_in_use", "peak_bytes_in_use", "bytes_limit",
            "num_allocs"} <= set(m["devices"]["host"])


def test_devices_and_auto():
    ds = tgc.devices()
    assert ds[0]["name"] == "cpu" and ds[0]["total"] > 0 and ds[0]["type"] == "cpu"
    gpus = [d for d in ds if d["type"] == "gpu"]
    want = max(gpus, key=lambda d: d["free"] if d["free"] >= 0 else d["total"])["name"] if gpus else "cpu"
    assert tgc.auto_device() == want


@gpu
def test_gpu_memory_is_counted_and_given_back():
    base = tgc.memory()["devices"].get("gpu0", {}).get("live_tensors", 0)
    g = tgc.tensor(np.zeros(1000, np.float32), device="gpu0")
    m = tgc.memory()["devices"]["gpu0"]
    assert m["live_tensors"] == base + 1 and m["live_tensor_bytes"] >= 4000
    with tgc.trace_memory() as t:
        h = g + g
        del h
    assert t.deltas["gpu0"]["used_delta"] == 0 and t.deltas["gpu0"]["peak_delta"] == 4000
    del g
    assert tgc.memory()["devices"]["gpu0"]["live_tensors"] == base
