#!/usr/bin/python3
"""Writes the inputs and references of tests/cli/test_pipeline.sh (tgc run
--input-dir DIR --inflight K): one entry of an input folder a step.

    digits_in/b00.npy ... b04.npy   rows of examples/digits/test_x.npy (8 rows each, b04: 3)
    digits_ref/bNN_logits.npy       PyTorch's logits for those rows (examples/digits/ref_logits_cnn.npy)
    stages_in/a.npy ... d.npy       [4, 4] feeds of tests/data/exec/two_devices.yaml (cpu0 | cpu1)
    stages_ref/X_y.npy              its y in float64 NumPy, rounded to float32
    two_in/s1/{x,y}.npy ...         feeds of two_inputs.yaml, a folder per step
    two_ref/sN_z.npy                z = x @ w + y in NumPy

Run once with a Python that has NumPy (/usr/bin/python3); the outputs are
committed, so the tests need neither.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def save(rel, a):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, a)


def digits():
    x = np.load(os.path.join(ROOT, "examples/digits/test_x.npy"))
    ref = np.load(os.path.join(ROOT, "examples/digits/ref_logits_cnn.npy"))
    for i, rows in enumerate([8, 8, 8, 8, 3]):
        lo = i * 8
        save("digits_in/b%02d.npy" % i, x[lo:lo + rows])
        save("digits_ref/b%02d_logits.npy" % i, ref[lo:lo + rows])


def stages():
    w = np.arange(1, 17, dtype=np.float64).reshape(4, 4)  # two_devices.yaml's w
    rng = np.random.default_rng(18)
    for name in "abcd":
        x = rng.uniform(-1, 1, (4, 4)).astype(np.float32)
        xd = x.astype(np.float64)
        d = 1 / (1 + np.exp(-xd))
        y = np.tanh(xd @ w) + xd - d * d
        save("stages_in/%s.npy" % name, x)
        save("stages_ref/%s_y.npy" % name, y.astype(np.float32))


W2 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)  # two_inputs.yaml's w


def two_inputs():
    rng = np.random.default_rng(7)
    for s in ["s1", "s2", "s3"]:
        x = rng.uniform(-2, 2, (2, 2)).astype(np.float32)
        y = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
        save("two_in/%s/x.npy" % s, x)
        save("two_in/%s/y.npy" % s, y)
        z = x.astype(np.float64) @ W2.astype(np.float64) + y
        save("two_ref/%s_z.npy" % s, z.astype(np.float32))


if __name__ == "__main__":
    digits()
    stages()
    two_inputs()
