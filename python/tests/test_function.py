"""tgc.function against the same Python run eagerly and against NumPy:
traced once per signature (a new shape retraces, saying why; a repeated one
does not; a symbolic dimension traces once for every size), on cpu and on
cpu,gpu0; the traced graph as tgc/1 YAML that loads and runs again; errors
at the Python line that made them; threads calling one function; a call's
outputs in the caller's scope, nothing else left behind, its peak seen by
the memory tracer."""
import os
import threading

import numpy as np
import pytest

import tgc
from conftest import gpu

O = tgc.ops
rng = np.random.default_rng(11)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def gelu_layer_norm(x):
    """A GELU (tanh form) and a LayerNorm over the last axis, op by op."""
    g = x * (O.tanh((x + x * x * x * 0.044715) * 0.7978845608) + 1.0) * 0.5
    mu = O.reduce_mean(g, axes=[-1])
    d = g - mu
    var = O.reduce_mean(d * d, axes=[-1])
    return d / O.sqrt(var + 1e-5)


def numpy_gelu_layer_norm(x):
    x = x.astype(np.float64)
    g = x * (np.tanh((x + x ** 3 * 0.044715) * 0.7978845608) + 1) * 0.5
    d = g - g.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)


def test_traced_equals_eager_and_numpy():
    f = tgc.function(gelu_layer_norm)
    a = f32(2, 64)
    x = tgc.tensor(a)
    traced = f(x)
    assert isinstance(traced, tgc.Tensor) and traced.shape == (2, 64) and traced.device == "cpu0"
    np.testing.assert_allclose(traced.numpy(), numpy_gelu_layer_norm(a), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(traced.numpy(), gelu_layer_norm(x).numpy(), rtol=1e-5, atol=1e-6)
    assert f.trace_count == 1
    np.testing.assert_allclose(f(a).numpy(), traced.numpy())  # NumPy arguments too, same trace
    assert f.trace_count == 1


@gpu
def test_on_cpu_and_gpu0():
    f = tgc.function(gelu_layer_norm, devices="cpu,gpu0")
    a = f32(1, 64)
    x = tgc.tensor(a, device="gpu0")
    y = f(x)
    assert y.device == "gpu0"  # left where it was computed, as an eager op's result
    np.testing.assert_allclose(y.numpy(), numpy_gelu_layer_norm(a), rtol=1e-4, atol=1e-5)
    # the devices default to cpu0 and the arguments'
    g = tgc.function(lambda t: O.relu(t) * 2.0)
    assert g(x).device == "gpu0" and g.concrete_functions[0].devices == "cpu0,gpu0"
    np.testing.assert_allclose(g(x).numpy(), np.maximum(a, 0) * 2, rtol=1e-6)


def test_retraces_on_a_new_shape_only():
    f = tgc.function(gelu_layer_norm)
    for _ in range(3):
        f(f32(1, 64))
    assert f.trace_count == 1 and f.retraces == []
    f(f32(3, 64))
    assert f.trace_count == 2
    assert f.retraces == ["'x': shape (1, 64) -> (3, 64)"]
    f(f32(1, 64))  # the first trace again
    assert f.trace_count == 2
    f(f32(1, 64).astype(np.float64))
    assert f.retraces[-1] == "'x': dtype float32 -> float64"
    with pytest.warns(UserWarning, match="traced 8 times, the last because 'x': shape"):
        for n in range(4, 9):
            f(f32(n, 64))


def test_python_values_are_constants_of_the_trace():
    f = tgc.function(lambda x, scale, mode: x * scale if mode == "mul" else x + scale)
    a = f32(4)
    np.testing.assert_allclose(f(a, 3.0, "mul").numpy(), a * 3, rtol=1e-6)
    np.testing.assert_allclose(f(a, 3.0, "add").numpy(), a + 3, rtol=1e-6)
    assert f.trace_count == 2
    assert "'mul'" in f.retraces[0] and "'add'" in f.retraces[0]


def test_symbolic_dimension_traces_once():
    f = tgc.function(gelu_layer_norm, input_signature=[tgc.TensorSpec(["N", 64], np.float32)])
    for n in (1, 3, 7):
        a = f32(n, 64)
        np.testing.assert_allclose(f(a).numpy(), numpy_gelu_layer_norm(a), rtol=1e-5, atol=1e-5)
    assert f.trace_count == 1
    assert "shape: [N, 64]" in f.graph.dump()
    with pytest.raises(tgc.InvalidError, match="input_signature"):
        f(f32(2, 32))


def test_nests_in_and_out():
    @tgc.function
    def f(pair, scale=2.0):
        a, b = pair["a"], pair["b"]
        return {"sum": a + b, "both": (a * scale, b)}

    a, b = f32(3), f32(3)
    out = f({"a": a, "b": tgc.tensor(b)})
    np.testing.assert_allclose(out["sum"].numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(out["both"][0].numpy(), a * 2, rtol=1e-6)
    np.testing.assert_allclose(out["both"][1].numpy(), b)  # an input given back: a node of its own


def test_graph_dump_loads_and_runs(tmp_path):
    w = f32(64, 16)

    @tgc.function
    def f(x):
        return O.softmax(gelu_layer_norm(x) @ w, axis=-1)  # w: a constant of the trace

    a = f32(2, 64)
    y = f(a).numpy()
    path = os.path.join(str(tmp_path), "traced.yaml")
    with open(path, "w") as out:
        out.write(f.graph.dump())
    s = tgc.Session(tgc.load(path), devices="cpu")
    again = s.run({"x": a})  # the graph input takes the parameter's name
    np.testing.assert_allclose(again["out0"], y, rtol=1e-6)
    z = numpy_gelu_layer_norm(a) @ w
    e = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-4, atol=1e-6)


def test_op_error_names_the_python_line():
    def f(x):
        y = O.relu(x)
        return y @ np.ones((5, 3), np.float32)  # [2, 4] @ [5, 3]

    line = f.__code__.co_firstlineno + 2
    with pytest.raises(tgc.InvalidError) as e:
        tgc.function(f)(f32(2, 4))
    text = str(e.value)
    assert text.startswith("%s:%d:16: error: " % (__file__, line)), text  # column: the `y @ ...` expression
    assert "MatMul" in text


def test_python_control_flow_on_a_traced_value_is_an_error():
    def f(x):
        if O.reduce_sum(x) > 0:  # a traced value's truth is unknown while tracing
            return x
        return -x

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(tgc.TracingError) as e:
        tgc.function(f)(f32(3))
    assert str(e.value).startswith("%s:%d:12: error: the truth value" % (__file__, line)), str(e.value)


def test_threads_call_one_function():
    f = tgc.function(gelu_layer_norm)
    inputs = [f32(1 + i % 2, 64) for i in range(4)]
    want = [numpy_gelu_layer_norm(a) for a in inputs]
    wrong = []

    def run(i):
        x = tgc.tensor(inputs[i])
        for _ in range(100):
            with tgc.scope():
                if not np.allclose(f(x).numpy(), want[i], rtol=1e-5, atol=1e-5):
                    wrong.append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == [] and f.trace_count == 2


def test_outputs_in_the_callers_scope_and_nothing_left():
    f = tgc.function(gelu_layer_norm)
    x = tgc.tensor(f32(256, 64))
    f(x).dispose()  # traced and compiled: its weights are loaded
    before = tgc.memory()
    with tgc.trace_memory() as m:
        with tgc.scope():
            y = f(x)
            assert tgc.memory()["num_tensors"] == before["num_tensors"] + 1
        assert y.disposed
    after = tgc.memory()
    assert after["num_tensors"] == before["num_tensors"]
    assert after["devices"]["cpu0"]["bytes_in_use"] == before["devices"]["cpu0"]["bytes_in_use"]
    # the call's peak: at least its output and the intermediates it held at once
    assert m.deltas["cpu0"]["peak_delta"] >= 2 * 256 * 64 * 4, m.deltas
    assert m.deltas["cpu0"]["used_delta"] == 0


def test_a_function_called_inside_another_is_inlined():
    inner = tgc.function(lambda t: O.relu(t) + 1.0)

    @tgc.function
    def outer(x):
        return inner(x) * 2.0

    a = f32(5)
    np.testing.assert_allclose(outer(a).numpy(), (np.maximum(a, 0) + 1) * 2, rtol=1e-6)
    assert inner.trace_count == 0  # its ops went into outer's graph
    assert [line.split("op: ")[1] for line in outer.graph.dump().splitlines() if "op: " in line] == [
        "Relu", "Add", "Mul"]


@gpu
def test_automatic_placement_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the measured node times go there, not the user's
    f = tgc.function(gelu_layer_norm, devices="cpu,gpu0", placement="auto")
    a = f32(64, 64)
    np.testing.assert_allclose(f(a).numpy(), numpy_gelu_layer_norm(a), rtol=1e-4, atol=1e-5)
    assert f.concrete_functions[0].devices == "cpu,gpu0"
    b = f32(64, 64)
    np.testing.assert_allclose(f(tgc.tensor(b, device="gpu0")).numpy(), numpy_gelu_layer_norm(b), rtol=1e-4,
                               atol=1e-5)
    assert f.trace_count == 2  # a new device is a new signature


def test_a_float16_function_end_to_end():
    """The GELU and LayerNorm traced on float16: every value in the graph
    float16 (its Python constants take the argument's dtype), and the result
    within float16's rounding of the float64 reference and of the eager run."""
    f = tgc.function(gelu_layer_norm)
    a = f32(4, 64).astype(np.float16)
    y = f(a)
    assert y.dtype == np.float16
    assert "float32" not in f.graph.dump()
    ref = numpy_gelu_layer_norm(a)
    np.testing.assert_allclose(y.numpy().astype(np.float64), ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(y.numpy(), gelu_layer_norm(tgc.tensor(a)).numpy(), rtol=1e-2, atol=1e-2)
    assert f.trace_count == 1
    f(a.astype(np.float32))  # a new dtype: a new trace
    assert f.trace_count == 2
