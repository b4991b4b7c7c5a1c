#!/usr/bin/python3
"""Inputs and expected outputs of if_rank.yaml and loop_rank.yaml, from
numpy following the ONNX definitions of the ops (run once; the .npy files
are committed, and the tests need no Python)."""
import os

import numpy as np

D = os.path.dirname(os.path.abspath(__file__))


def save(name, a):
    np.save(os.path.join(D, name + ".npy"), a)


x = np.array([[-1, 0, 1], [2, -3, 4]], np.float32)
bias = np.array([1, 2, 3], np.float32)
w = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
save("x", x)
for c in (True, False):
    tag = "then" if c else "else"
    save("c_" + tag, np.array(c))
    pick = x if c else x[None]
    y = np.maximum(pick + bias, 0) @ w
    e = np.exp(y - y.max(axis=-1, keepdims=True))
    save("y_" + tag, y.astype(np.float32))
    save("n_" + tag, np.array(y.ndim, np.int64))
    save("z_" + tag, np.array(y.sum(), np.float32))
    save("p_" + tag, (e / e.sum(axis=-1, keepdims=True)).astype(np.float32))
    save("f_" + tag, y.reshape(y.shape[0], -1).astype(np.float32))
    save("t_" + tag, np.ascontiguousarray(y.transpose()).astype(np.float32))
    act = np.maximum(pick + bias, 0)
    save("centered_" + tag, (act - act.mean(axis=-1, keepdims=True)).astype(np.float32))

v = np.array([1.5, -2, 4], np.float32)
save("v", v)
save("m", np.array(3, np.int64))
for c in (True, False):
    tag = "then" if c else "else"
    acc = v
    for _ in range(3):
        acc = acc if c else acc[None]
    save("loop_" + tag, acc)
    save("s_" + tag, np.array(acc.shape, np.int64))
