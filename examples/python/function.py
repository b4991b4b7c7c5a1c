"""Eager code traced into a compiled graph (tgc.function), from Python.

    PYTHONPATH=python /usr/bin/python3 examples/python/function.py

A GELU and a LayerNorm written out op by op, run eagerly (one call per op)
and as a function (traced once per input signature, then one call); the
two agree, the traced graph prints as tgc/1 YAML, a new batch size
retraces (and says why) unless the batch is declared symbolic, and a
mistake is reported at the line that made it.
"""
import time

import numpy as np

import tgc

O = tgc.ops


def gelu_layer_norm(x):
    g = x * (O.tanh((x + x * x * x * 0.044715) * 0.7978845608) + 1.0) * 0.5
    d = g - O.reduce_mean(g, axes=[-1])
    return d / O.sqrt(O.reduce_mean(d * d, axes=[-1]) + 1e-5)


def per_call_us(fn, x, n=2000):
    fn(x)
    t0 = time.perf_counter()
    for _ in range(n):
        fn(x)
    return (time.perf_counter() - t0) / n * 1e6


x = tgc.tensor(np.random.default_rng(0).standard_normal((1, 64)).astype(np.float32))
fast = tgc.function(gelu_layer_norm)
print("largest difference, traced vs eager: %.2g" % np.abs(fast(x).numpy() - gelu_layer_norm(x).numpy()).max())
print("eager %.1f us a call, traced %.1f us" % (per_call_us(gelu_layer_norm, x), per_call_us(fast, x)))

fast(np.ones((8, 64), np.float32))  # a new shape: a second trace
print("traces: %d; why the last: %s" % (fast.trace_count, fast.retraces[-1]))

any_batch = tgc.function(gelu_layer_norm, input_signature=[tgc.TensorSpec(["N", 64], np.float32)])
for n in (1, 8, 32):
    any_batch(np.ones((n, 64), np.float32))
print("symbolic N: %d trace for 3 batch sizes; its graph:" % any_batch.trace_count)
print(any_batch.graph.dump())

try:
    tgc.function(lambda t: t @ np.ones((32, 4), np.float32))(x)  # [1, 64] @ [32, 4]
except tgc.InvalidError as e:
    print("a mistake, at its line:", e)
