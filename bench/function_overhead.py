"""tgc.function from Python, against its references measured in the same run:

1. a chain of 16 small ops on [1, 64] (a GELU and a LayerNorm written out op
   by op): traced (one call) against the same Python function run eagerly
   (one call per op); target: at least 5x faster traced.
2. a self-attention block on [1, 64, 256] (4 heads, then the output
   projection, the residual and a LayerNormalization): traced against the
   same block built as an ONNX model (onnx.helper, the same weights) and run
   through tgc.Session; target: traced within 10% (at most 1.10x).

Both outputs are checked against NumPy first, at each thread count of
THREADS (default "1 2"). The two sides of each pair take turns for ROUNDS
rounds of BATCH calls, so that load on the machine falls on both alike;
prints the median microseconds a call and the ratio.

    make build
    /usr/bin/python3 bench/function_overhead.py [BUILD_DIR]

Needs Debian's python3-numpy and python3-onnx (scripts/install-deps)."""
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
os.environ.setdefault("TGC_LIBRARY", os.path.join(BUILD, "libtgc.so.0"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tgc  # noqa: E402

O = tgc.ops
ROUNDS = 9
THREADS = [int(t) for t in os.environ.get("THREADS", "1 2").split()]
rng = np.random.default_rng(3)


def gelu_layer_norm(x):
    g = x * (O.tanh((x + x * x * x * 0.044715) * 0.7978845608) + 1.0) * 0.5
    mu = O.reduce_mean(g, axes=[-1])
    d = g - mu
    var = O.reduce_mean(d * d, axes=[-1])
    return d / O.sqrt(var + 1e-5)


def numpy_gelu_layer_norm(x):
    g = x * (np.tanh((x + x ** 3 * 0.044715) * 0.7978845608) + 1) * 0.5
    d = g - g.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)


# ---- the attention block ----------------------------------------------------------------

T, D, H = 64, 256, 4
W = {k: (rng.standard_normal((D, D)) / 16).astype(np.float32) for k in ("wq", "wk", "wv", "wo")}
W.update({k: (rng.standard_normal(D) / 16).astype(np.float32) for k in ("bq", "bk", "bv", "bo")})
W["gamma"] = (1 + rng.standard_normal(D) / 8).astype(np.float32)
W["beta"] = (rng.standard_normal(D) / 8).astype(np.float32)
SPLIT = np.array([1, T, H, D // H], np.int64)
JOIN = np.array([1, T, D], np.int64)


def attention(x):
    def heads(t):
        return O.transpose(O.reshape(t, SPLIT), perm=[0, 2, 1, 3])  # [1, H, T, D/H]

    q, k, v = (heads(x @ W["w" + n] + W["b" + n]) for n in "qkv")
    s = O.softmax(q @ O.transpose(k, perm=[0, 1, 3, 2]) * (1 / np.sqrt(D // H)), axis=-1)
    o = O.reshape(O.transpose(s @ v, perm=[0, 2, 1, 3]), JOIN)
    return O.layer_normalization(o @ W["wo"] + W["bo"] + x, W["gamma"], W["beta"], axis=-1, epsilon=1e-5)


def numpy_attention(x):
    def heads(t):
        return t.reshape(SPLIT).transpose(0, 2, 1, 3)

    q, k, v = (heads(x @ W["w" + n] + W["b" + n]) for n in "qkv")
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // H)
    e = np.exp(s - s.max(-1, keepdims=True))
    o = ((e / e.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(JOIN)
    y = o @ W["wo"] + W["bo"] + x
    d = y - y.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * W["gamma"] + W["beta"]


def attention_onnx(path):
    """The same block as an ONNX model (opset 17), its weights initializers."""
    n = helper.make_node
    nodes = []
    for h in "qkv":
        nodes += [n("MatMul", ["x", "w" + h], [h + "_mm"]), n("Add", [h + "_mm", "b" + h], [h + "_lin"]),
                  n("Reshape", [h + "_lin", "split"], [h + "_4d"]),
                  n("Transpose", [h + "_4d"], [h], perm=[0, 2, 1, 3])]
    nodes += [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), n("MatMul", ["q", "kt"], ["qk"]),
              n("Mul", ["qk", "scale"], ["scores"]), n("Softmax", ["scores"], ["p"], axis=-1),
              n("MatMul", ["p", "v"], ["pv"]), n("Transpose", ["pv"], ["pvt"], perm=[0, 2, 1, 3]),
              n("Reshape", ["pvt", "join"], ["o"]), n("MatMul", ["o", "wo"], ["o_mm"]),
              n("Add", ["o_mm", "bo"], ["o_lin"]), n("Add", ["o_lin", "x"], ["res"]),
              n("LayerNormalization", ["res", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)]
    inits = [numpy_helper.from_array(v, k) for k, v in W.items()]
    inits += [numpy_helper.from_array(SPLIT, "split"), numpy_helper.from_array(JOIN, "join"),
              numpy_helper.from_array(np.array(1 / np.sqrt(D // H), np.float32), "scale")]
    graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, T, D])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, T, D])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


# ---- timing ---------------------------------------------------------------------------------

def per_call_us(fn, batch):
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t0) / batch * 1e6


def race(a, b, batch):
    """Medians (us a call) of a and b, taking turns."""
    ta, tb = [], []
    a(), b()
    for _ in range(ROUNDS):
        ta.append(per_call_us(a, batch))
        tb.append(per_call_us(b, batch))
    return statistics.median(ta), statistics.median(tb)


def measure(threads):
    """Both pairs with `threads` worker threads on the cpu (eager ops, the functions, the Session)."""
    spec = "cpu0=%d" % threads
    tgc.configure("cpu", threads=spec)
    x1 = rng.standard_normal((1, 64)).astype(np.float32)
    xt = tgc.tensor(x1)
    chain = tgc.function(gelu_layer_norm, threads=spec)
    np.testing.assert_allclose(chain(xt).numpy(), numpy_gelu_layer_norm(x1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gelu_layer_norm(xt).numpy(), numpy_gelu_layer_norm(x1), rtol=1e-4, atol=1e-5)
    eager_us, traced_us = race(lambda: gelu_layer_norm(xt), lambda: chain(xt), 300)

    xa = (rng.standard_normal((1, T, D))).astype(np.float32)
    xat = tgc.tensor(xa)
    block = tgc.function(attention, threads=spec)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "attention.onnx")
        attention_onnx(path)
        session = tgc.Session(path, devices="cpu", threads=spec)
        ref = numpy_attention(xa.astype(np.float64))
        np.testing.assert_allclose(block(xat).numpy(), ref, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(session.run({"x": xa})["y"], ref, rtol=1e-3, atol=1e-4)
        onnx_us, block_us = race(lambda: session.run({"x": xa}), lambda: block(xat).numpy(), 50)
    print("%-10d %-44s %10.1f %10.1f %7.1fx  traced >= 5x faster" % (
        threads, "16 ops on [1, 64]: eager vs traced", eager_us, traced_us, eager_us / traced_us))
    print("%-10d %-44s %10.1f %10.1f %7.2fx  traced <= 1.10x" % (
        threads, "attention [1, 64, 256]: ONNX Session vs traced", onnx_us, block_us, block_us / onnx_us))


def main():
    print("tgc.function vs its references, medians of %d interleaved rounds (us a call)" % ROUNDS)
    print("%-10s %-44s %10s %10s %8s  %s" % ("threads", "case", "reference", "traced", "ratio", "target"))
    for threads in THREADS:
        measure(threads)


if __name__ == "__main__":
    main()
