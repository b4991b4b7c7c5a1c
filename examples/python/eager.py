"""Eager tensors and the memory tools of the stories, from Python.

    PYTHONPATH=python /usr/bin/python3 examples/python/eager.py

A tiny MLP layer by hand with tgc.ops, on gpu0 when there is one; then the
classic leak (results kept in a loop), its fix with a scope, and a memory
trace over a block.
"""
import numpy as np

import tgc

dev = "gpu0" if any(d["name"] == "gpu0" for d in tgc.devices()) else "cpu"
rng = np.random.default_rng(0)
x = tgc.tensor(rng.standard_normal((4, 8)).astype(np.float32), device=dev)
w = tgc.tensor(rng.standard_normal((8, 3)).astype(np.float32), device=dev)
b = tgc.tensor(np.float32([0.1, 0.2, 0.3]))            # host: copied for the op

h = tgc.ops.relu(x @ w + b)                              # runs on x's device
p = tgc.ops.softmax(h, axis=1)
print("softmax on %s:" % p.device, p.shape, p.dtype)
print(p.numpy().round(3))                                # read back from the device

# The leak: a result kept per iteration, as tf.js code forgetting dispose().
start = tgc.memory()["num_tensors"]
kept = [x * 2 for _ in range(100)]
print("after 100 kept results: +%d live tensors" % (tgc.memory()["num_tensors"] - start))
del kept

# The fix: a scope per iteration; only what is kept survives.
for i in range(100):
    with tgc.scope():
        y = tgc.ops.sigmoid(x * 2 + 1)
        if i == 99:
            last = tgc.keep(y)
print("after 100 scoped iterations: +%d live tensors" % (tgc.memory()["num_tensors"] - start))

# Used and peak memory over a block, per device (fastai's GPUMemTrace).
with tgc.trace_memory() as m:
    big = tgc.ops.mat_mul(tgc.tensor(np.ones((512, 512), np.float32), device=dev),
                          tgc.tensor(np.ones((512, 512), np.float32), device=dev))
    del big
print(m)
print("kernel cache:", tgc.eager_stats())
