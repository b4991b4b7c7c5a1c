"""Models from Python: tgc.load and Session.run against the references
committed beside the models (PyTorch's logits; ONNX's own test outputs),
on cpu and cpu,gpu0; dumps equal to the command line's; errors with the
file, line and column of the graph file."""
import os
import subprocess

import numpy as np
import pytest

import tgc
from conftest import ROOT, data, gpu

TGC = os.environ.get("TGC_BINARY", os.path.join(ROOT, "build", "tgc"))
DIGITS = data("examples", "digits")


def digits(model, devices, **kw):
    x = np.load(os.path.join(DIGITS, "test_x.npy" if model == "cnn" else "test_x_flat.npy"))
    s = tgc.Session(os.path.join(DIGITS, model + ".yaml"), devices=devices, **kw)
    out = s.run({"x": x})
    ref = np.load(os.path.join(DIGITS, "ref_logits_%s.npy" % model))
    np.testing.assert_allclose(out["logits"], ref, rtol=1e-4, atol=1e-4)
    labels = np.load(os.path.join(DIGITS, "test_y.npy"))
    assert (out["logits"].argmax(axis=1) == labels).mean() > 0.9
    return s, out


def test_mlp_on_cpu():
    s, out = digits("mlp", "cpu")
    assert s.outputs == ["logits", "probs"] and set(out) == {"logits", "probs"}
    assert not out["probs"].flags.writeable  # a view of the output's memory
    np.testing.assert_allclose(out["probs"].sum(axis=1), 1, rtol=1e-5)


@gpu
def test_cnn_on_cpu_and_gpu0():
    s, _ = digits("cnn", "cpu,gpu0")
    assert set(s.memory()) == {"cpu0", "gpu0"}
    assert "predicted peak" in s.memory_report()


@gpu
def test_float16_on_gpu0():
    """float16=True: the float32 model's gpu nodes in float16, within float16
    rounding of numpy's float32 reference (make_models.py: 6.5e-4 away),
    its outputs still float32."""
    d = ("tests", "data", "dtype_models")
    feeds = {n: np.load(data(*d, "fp32_nn.%s.npy" % n)) for n in ("x", "z", "a")}
    for float16, tol in ((False, 1e-5), (True, 2e-3)):
        s = tgc.Session(data(*d, "fp32_nn.onnx"), devices="gpu0", float16=float16)
        out = s.run(feeds)
        for n in ("mp", "gap", "gemm", "ln", "mm"):
            assert out[n].dtype == np.float32
            np.testing.assert_allclose(out[n], np.load(data(*d, "fp32_nn.%s.ref.npy" % n)), rtol=0, atol=tol)


def test_auto_devices():
    s, _ = digits("mlp", "auto")
    assert s.devices == tgc.auto_device()


def test_onnx_model():
    s = tgc.Session(data("tests", "data", "rnn", "torch_gru_bidir.onnx"))
    x = np.load(data("tests", "data", "rnn", "torch_gru_bidir_x.npy"))
    out = s.run({"x": x})
    y = np.load(data("tests", "data", "rnn", "torch_gru_bidir_y.npy"))
    np.testing.assert_allclose(out[s.outputs[0]], y, rtol=1e-4, atol=1e-5)


def cli(*args):
    return subprocess.run([TGC, *args], check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(not os.path.exists(TGC), reason="the build tree's tgc is not there")
def test_dumps_match_the_command_line():
    cnn = os.path.join(DIGITS, "cnn.yaml")
    g = tgc.load(cnn)
    assert g.dump() == cli("compile", cnn)
    p = g.place("cpu,gpu0")
    assert p.dump() == cli("compile", cnn, "--devices", "cpu,gpu0", "--dump", "placed")
    assert p.dump("json") == cli("compile", cnn, "--devices", "cpu,gpu0", "--dump", "placed", "--format", "json")
    assert p.device_of("relu1") == "gpu0" and p.reason_of("relu1") == "default"  # conv1 fused into it
    parts = g.partition("cpu,gpu0")
    assert parts.dump("json") == cli("compile", cnn, "--devices", "cpu,gpu0", "--dump", "partitioned", "--format",
                                     "json")
    assert parts.devices == ["cpu0", "gpu0"] and parts.pairs > 0
    assert "pairs" in parts.summary()


def test_load_errors_give_file_line_column():
    bad = data("tests", "data", "bad", "dtype_mismatch_add.yaml")
    with pytest.raises(tgc.InvalidError) as e:
        tgc.load(bad)
    assert str(e.value).startswith(bad + ":10:36: error: node 'y' (Add): input 1 is int64 but input 0 is float32")
    assert e.value.diagnostics[0]["line"] == 10 and e.value.diagnostics[0]["rule"] == "dtype-mismatch"
    with pytest.raises(tgc.FileError):
        tgc.load(data("no", "such.yaml"))


def test_run_errors():
    s = tgc.Session(os.path.join(DIGITS, "mlp.yaml"))
    with pytest.raises(tgc.InvalidError, match="x"):
        s.run({"x": np.zeros((4, 63), np.float32)})
    with pytest.raises(tgc.InvalidError):
        s.run({})
    small = tgc.Session(os.path.join(DIGITS, "mlp.yaml"), memory_limit="cpu=20KiB")
    with pytest.raises(tgc.OutOfMemoryError, match="cpu0"):
        small.run({"x": np.zeros((400, 64), np.float32)})
    with pytest.raises(tgc.InvalidError, match="bad-device-list"):
        tgc.Session(os.path.join(DIGITS, "mlp.yaml"), devices="tpu")


def test_onnx_names():
    """An ONNX model's inputs and outputs go by their names in the file, as in
    ONNX Runtime (tests/data/onnx_names: numpy's references)."""
    d = lambda f: data("tests", "data", "onnx_names", f)
    s = tgc.Session(d("exporter_names.onnx"))
    json_name = '{"1": "1_minute_timer", "2": "5_minute_timer"}'
    assert s.inputs == ["onnx::Flatten_0", "input.1", "x:0"]
    long_name = "{" + ", ".join('"%d": "%d_minute_timer"' % (i, 5 * i) for i in range(1, 11)) + "}"
    assert s.outputs == ["/block/Split_output_1", "y:0", json_name, long_name]
    out = s.run({"onnx::Flatten_0": np.load(d("a.npy")), "input.1": np.load(d("b.npy")), "x:0": np.load(d("x.npy"))})
    assert list(out) == s.outputs
    np.testing.assert_allclose(out["/block/Split_output_1"], np.load(d("split1.npy")), rtol=1e-6)
    np.testing.assert_allclose(out["y:0"], np.load(d("y.npy")), rtol=1e-6)
    np.testing.assert_allclose(out[json_name], np.load(d("json.npy")), rtol=1e-5)
    np.testing.assert_allclose(out[long_name], np.load(d("long.npy")), rtol=1e-5)
    with pytest.raises(tgc.InvalidError, match=r"'onnx::Flatten' is not a graph input; the inputs are "
                                               r"'onnx::Flatten_0' \(float32 \[2, 4\]\), 'input.1'"):
        s.run({"onnx::Flatten": np.load(d("a.npy"))})


def test_runs_from_many_threads():
    """Eight threads run the digits CNN on one session, two at most at once:
    each batch's logits equal (bitwise) the same batch run alone, which
    match PyTorch's; the bound held."""
    from concurrent.futures import ThreadPoolExecutor
    x = np.load(os.path.join(DIGITS, "test_x.npy"))
    ref = np.load(os.path.join(DIGITS, "ref_logits_cnn.npy"))
    batches = [(lo, lo + 1 + lo % 13) for lo in range(0, 320, 20)]
    s = tgc.Session(os.path.join(DIGITS, "cnn.yaml"), devices="cpu0,cpu1", max_inflight=2)
    alone = [s.run({"x": x[lo:hi]})["logits"].copy() for lo, hi in batches]
    for (lo, hi), a in zip(batches, alone):
        np.testing.assert_allclose(a, ref[lo:hi], rtol=1e-4, atol=1e-4)
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda i: s.run({"x": x[batches[i % 16][0]:batches[i % 16][1]]})["logits"].copy(),
                            range(64)))
    for i, g in enumerate(got):
        assert np.array_equal(g, alone[i % 16])
    now, peak = s.steps_in_flight()
    assert now == 0 and 1 <= peak <= 2



def test_auto_placement_splits_by_memory(tmp_path):
    # Four [64, 64] float32 weights, 65536 bytes: no device of 40000 bytes (38000 usable)
    # holds them, two do; placement "auto" splits them and the output stays numpy's.
    rng = np.random.default_rng(3)
    ws = [rng.integers(-8, 8, size=(64, 64)).astype(np.float32) / 8 for _ in range(4)]
    lines = ["format: tgc/1", "name: chain", "inputs: [{name: y0, dtype: float32, shape: [1, 64]}]",
             "outputs: [y4]", "initializers:"]
    lines += ["  - {name: w%d, dtype: float32, shape: [64, 64], values: [%s]}" % (i + 1, ", ".join(map(str, w.ravel())))
              for i, w in enumerate(ws)]
    lines += ["nodes:"] + ["  - {name: y%d, op: MatMul, inputs: [y%d, w%d]}" % (i + 1, i, i + 1) for i in range(4)]
    path = tmp_path / "chain.yaml"
    path.write_text("\n".join(lines) + "\n")
    limits, threads = "cpu0=40000,cpu1=40000", "cpu0=1,cpu1=1"
    x = rng.standard_normal((1, 64)).astype(np.float32)
    s = tgc.Session(str(path), devices="cpu0,cpu1", placement="auto", memory_limit=limits, threads=threads)
    ref = x.astype(np.float64)  # in double: a float32 product's own rounding would be part of the reference
    for w in ws:
        ref = ref @ w.astype(np.float64)
    # four float32 products of 64 terms, summed in an order of the kernel's choosing: a few units of 2^-24
    # times the largest partial sums (about max |ref|) for every term
    np.testing.assert_allclose(s.run({"y0": x})["y4"], ref, rtol=0, atol=4 * 64 * 2.0 ** -24 * np.abs(ref).max())
    p = tgc.load(str(path)).place("cpu0,cpu1", placement="auto", memory_limit=limits, threads=threads)
    assert {p.device_of("y%d" % i) for i in range(1, 5)} == {"cpu0", "cpu1"}
    assert {p.reason_of("y%d" % i) for i in range(1, 5)} == {"auto"}
    with pytest.raises(tgc.InvalidError):  # one device cannot hold them
        tgc.Session(str(path), devices="cpu0", placement="auto", memory_limit="cpu0=40000")
    with pytest.raises(ValueError):
        tgc.load(str(path)).place("cpu0,cpu1", placement="fastest")
