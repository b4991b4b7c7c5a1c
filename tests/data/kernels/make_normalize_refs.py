#!/usr/bin/python3
"""Writes the reference .npy files of tests/devices/test_cpu_normalize.c:
Hardmax-13, LpNormalization-1 and MeanVarianceNormalization-13 computed
by NumPy in float64 from their ONNX definitions and rounded once:

    normalize/NAME_in0.npy, normalize/NAME_out.npy

    Hardmax        one-hot of numpy.argmax along axis
    LpNormalization  x / norm, norm = sum |x| (p 1) or sqrt(sum x^2) (p 2);
                   0 where the norm is 0 (ONNX's reference)
    MVN            (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) over axes

Run with /usr/bin/python3 (NumPy):
    /usr/bin/python3 tests/data/kernels/make_normalize_refs.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261126)
F32, F16 = np.float32, np.float16


def c_order(x):
    """x in C order, keeping rank 0 (np.ascontiguousarray makes it [1])."""
    x = np.asarray(x)
    return x if x.ndim == 0 else np.ascontiguousarray(x)


def save(name, x, out):
    d = os.path.join(HERE, "normalize")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + "_in0.npy"), c_order(x))
    np.save(os.path.join(d, name + "_out.npy"), c_order(out))


def hardmax(x, axis):
    y = np.zeros_like(x)
    np.put_along_axis(y, np.expand_dims(np.argmax(x, axis=axis), axis), 1, axis=axis)
    return y


def lp(x, axis, p):
    xd = x.astype(np.float64)
    norm = np.abs(xd).sum(axis=axis, keepdims=True) if p == 1 else np.sqrt((xd * xd).sum(axis=axis, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm == 0, 0, xd / norm).astype(x.dtype)


def mvn(x, axes):
    xd = x.astype(np.float64)
    m = xd.mean(axis=axes, keepdims=True)
    s = np.sqrt(((xd - m) ** 2).mean(axis=axes, keepdims=True))
    return ((xd - m) / (s + 1e-9)).astype(x.dtype)


def main():
    x = RNG.uniform(-3, 3, size=(2, 3, 4, 5)).astype(F32)
    t = np.array([[1, 3, 3, 2], [5, 5, 5, 5], [0, -1, 7, 7]], dtype=F32)  # ties: the first wins
    save("hardmax_axis1", x, hardmax(x, 1))
    save("hardmax_ties", t, hardmax(t, -1))
    save("hardmax_f16_axis0", x.astype(F16), hardmax(x.astype(F16), 0))
    save("lp2_axis_m1", x, lp(x, -1, 2))
    save("lp1_axis2", x, lp(x, 2, 1))
    z = x.copy()
    z[0, 1, :, 0] = 0  # a zero norm along axis 2
    save("lp2_zero_norm", z, lp(z, 2, 2))
    save("lp1_f16_axis0", x.astype(F16), lp(x.astype(F16), 0, 1))
    save("mvn_default", x, mvn(x, (0, 2, 3)))
    save("mvn_axes_m1", x, mvn(x, (-1,)))
    save("mvn_axes12", x, mvn(x, (1, 2)))
    save("mvn_f16_default", x.astype(F16), mvn(x.astype(F16), (0, 2, 3)))


if __name__ == "__main__":
    main()
