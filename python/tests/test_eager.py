"""Eager ops from Python against NumPy: operators, tgc.ops by their ONNX
names, dtypes, devices (cpu and gpu0) and their rules, the kernel cache,
NumPy memory shared both ways, and errors carrying tgc's message."""
import numpy as np
import pytest

import tgc
from conftest import data, gpu

rng = np.random.default_rng(5)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_operators_match_numpy():
    a, b = f32(3, 4), f32(4)
    x, y = tgc.tensor(a), tgc.tensor(b)
    np.testing.assert_allclose((x + y).numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose((x - y).numpy(), a - b, rtol=1e-6)
    np.testing.assert_allclose((x * y).numpy(), a * b, rtol=1e-6)
    np.testing.assert_allclose((x / y).numpy(), a / b, rtol=1e-6)
    np.testing.assert_allclose((-x).numpy(), -a)
    np.testing.assert_allclose(abs(x).numpy(), np.abs(a))
    m = f32(4, 5)
    np.testing.assert_allclose((x @ tgc.tensor(m)).numpy(), a.astype(np.float64) @ m, rtol=1e-5, atol=1e-6)


def test_python_numbers_take_the_tensors_dtype():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    x = tgc.tensor(a)
    r = (x * 3 + 1).numpy()
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, a * 3 + 1)
    np.testing.assert_allclose((2.0 / tgc.tensor(np.array([4.0, 8.0]))).numpy(), [0.5, 0.25])
    np.testing.assert_allclose((1 - tgc.tensor(np.float32([3]))).numpy(), [-2])


def test_ops_by_their_onnx_names():
    x, w = np.load(data("tests/data/eager/conv_x.npy")), np.load(data("tests/data/eager/conv_w.npy"))
    ref = np.load(data("tests/data/eager/conv_y.npy"))
    y = tgc.ops.conv(x, w, pads=[1, 1, 1, 1])
    assert y.shape == (1, 4, 6, 6) and y.dtype == np.float32 and y.device == "cpu0"
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5)
    a = f32(2, 5)
    np.testing.assert_allclose(tgc.ops.relu(a).numpy(), np.maximum(a, 0))
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(tgc.ops.softmax(a, axis=1).numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(tgc.ops.leaky_relu(a, alpha=0.5).numpy(), np.where(a > 0, a, 0.5 * a), rtol=1e-6)
    np.testing.assert_allclose(tgc.ops.reduce_sum(a, np.array([1]), keepdims=0).numpy(), a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(tgc.ops.transpose(a, perm=[1, 0]).numpy(), a.T)
    np.testing.assert_allclose(tgc.ops.mat_mul(a, a.T).numpy(), a.astype(np.float64) @ a.T, rtol=1e-5, atol=1e-6)
    top, idx = tgc.ops.top_k(np.float32([3, 1, 4, 1, 5]), np.array([2]))
    np.testing.assert_array_equal(top.numpy(), [5, 4])
    np.testing.assert_array_equal(idx.numpy(), [4, 2])
    parts = tgc.ops.split(np.arange(6, dtype=np.float32), np.array([2, 4]), outputs=2)
    np.testing.assert_array_equal(parts[1].numpy(), [2, 3, 4, 5])
    assert "pads" in tgc.ops.conv.__doc__ and "conv" in tgc.ops.__all__ and "mat_mul" in tgc.ops.__all__


def test_reshape_follows_its_shape_values():
    x = tgc.tensor(np.arange(6, dtype=np.float32))
    assert tgc.ops.reshape(x, np.array([2, 3])).shape == (2, 3)
    assert tgc.ops.reshape(x, np.array([3, 2])).shape == (3, 2)  # same key, other values


def test_dtypes_round_trip():
    for dt in (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
               np.uint32, np.uint64, np.bool_):
        a = (np.arange(6) % 2).astype(dt).reshape(3, 2)
        t = tgc.tensor(a)
        assert t.dtype == np.dtype(dt) and t.shape == (3, 2)
        np.testing.assert_array_equal(t.numpy(), a)
        np.testing.assert_array_equal(tgc.ops.identity(t).numpy(), a)
    s = tgc.tensor(np.array(["a", "bé"]))
    assert list(tgc.ops.identity(s).numpy()) == ["a", "bé"]
    b = tgc.ops.cast(np.float32([1.5, -2]), to=16)  # bfloat16
    assert b.dtype == "bfloat16"
    np.testing.assert_array_equal(b.numpy(), np.float32([1.5, -2]))
    with pytest.raises(ValueError):
        tgc.tensor(np.zeros(2, np.complex64))


def test_numpy_memory_is_shared_not_copied():
    a = np.arange(8, dtype=np.float32)
    t = tgc.tensor(a)
    assert t.device == "host"
    v = t.numpy()
    assert np.shares_memory(v, a) and not v.flags.writeable
    y = tgc.ops.relu(t)
    out = y.numpy()
    assert out.ctypes.data == y.numpy().ctypes.data  # a view of y's memory, each time
    del y
    np.testing.assert_array_equal(out, a)  # the view keeps the memory alive
    odd = np.arange(10, dtype=np.float32)[::2]  # not contiguous: copied
    np.testing.assert_array_equal(tgc.tensor(odd).numpy(), odd)
    big_endian = np.arange(3, dtype=">i4")
    np.testing.assert_array_equal(tgc.tensor(big_endian).numpy(), [0, 1, 2])


@gpu
def test_gpu_results_stay_on_the_gpu():
    a, b = f32(5, 7), f32(7, 3)
    ga = tgc.tensor(a, device="gpu0")
    assert ga.device == "gpu0"
    y = ga @ b  # the inputs' device: gpu0; b is copied there
    assert y.device == "gpu0"
    np.testing.assert_allclose(y.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5)
    back = y.to("cpu")
    assert back.device == "cpu0" and back.to("cpu") is back
    np.testing.assert_allclose(back.numpy(), y.numpy())
    x = np.load(data("tests/data/eager/conv_x.npy"))
    w = np.load(data("tests/data/eager/conv_w.npy"))
    g = tgc.ops.conv(x, w, pads=[1, 1, 1, 1], device="gpu0")
    assert g.device == "gpu0"
    np.testing.assert_allclose(g.numpy(), np.load(data("tests/data/eager/conv_y.npy")), rtol=1e-4, atol=1e-5)
    shape = tgc.ops.shape(ga)  # integer shape arithmetic: host memory
    assert shape.device != "gpu0" and list((shape + 1).numpy()) == [6, 8]


def test_kernel_cache_hits():
    tgc.configure("cpu")
    x = tgc.tensor(f32(3))
    for _ in range(5):
        x + x
    s = tgc.eager_stats()
    assert s["cache_misses"] == 1 and s["cache_hits"] == 4 and s["ops"] == 5


def test_errors_carry_tgcs_message():
    with pytest.raises(tgc.InvalidError) as e:
        tgc.tensor(f32(2)) + tgc.tensor(f32(3))
    assert "[shape-mismatch]" in str(e.value) and "Add" in str(e.value)
    assert e.value.diagnostics[0]["rule"] == "shape-mismatch"
    with pytest.raises(tgc.InvalidError, match=r"needs attribute 'axis' \[missing-attribute\]"):
        tgc.ops.concat(f32(2), f32(2))
    with pytest.raises(tgc.InvalidError, match=r"\[bad-attribute\]"):
        tgc.ops.concat(f32(2), f32(2), axis=3)
    with pytest.raises(TypeError, match="no attribute 'bogus'"):
        tgc.ops.relu(f32(2), bogus=1)
    with pytest.raises(tgc.InvalidError, match=r"\[unknown-device\]"):
        tgc.ops.relu(f32(2), device="gpu9")
    t = tgc.tensor(f32(2))
    t.dispose()
    with pytest.raises(tgc.Error, match="disposed"):
        t + t
    assert repr(t) == "tgc.Tensor(disposed)"
