#!/usr/bin/python3
"""Writes the reference .npy files in tests/data/kernels/shape/ that
tests/devices/test_cpu_shape.c reads: the inputs of each case and NumPy's
answer, which the cpu kernels must reproduce bit for bit.

Each case is NAME_in*.npy (inputs, in the op's input order) and
NAME_out*.npy (outputs). Shape arguments (perm, axes, starts...) are
repeated literally in the C test beside the file names.

Run with a Python that has NumPy (on the dev image: /usr/bin/python3):
    /usr/bin/python3 tests/data/kernels/make_shape_refs.py
"""
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape")
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def save(name, array):
    # np.array, not np.ascontiguousarray: the latter makes a 0-d array 1-d.
    np.save(os.path.join(OUT, name + ".npy"), np.array(array, order="C"))


def onnx_slice(x, starts, ends, axes, steps):
    """Slice-13 through Python slicing, whose clamping rules are ONNX's."""
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[a] = slice(s, e, st)
    return x[tuple(index)]


def onnx_range(start, limit, delta, dtype):
    """Range-11 by its definition: n = max(ceil((limit - start) / delta), 0),
    out[i] = start + i * delta, computed in the output type."""
    n = max(math.ceil((limit - start) / delta), 0)
    t = np.dtype(dtype).type
    out = t(start) + np.arange(n).astype(dtype) * t(delta)
    assert np.array_equal(out, np.arange(t(start), t(limit), t(delta), dtype=dtype))
    return out.astype(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)

    # Transpose: a 3-D perm, the default (reversed axes), a 2-D matrix that
    # is not a multiple of the kernel's tile, and a 4-D int64 perm.
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * np.float32(0.5) - np.float32(3)
    save("transpose_in", x)
    save("transpose_perm201_out", np.transpose(x, (2, 0, 1)))
    save("transpose_default_out", np.transpose(x))
    m = (np.arange(70 * 33) % 251).astype(np.uint8).reshape(70, 33)
    save("transpose2d_in", m)
    save("transpose2d_out", m.T)
    y = np.arange(2 * 3 * 4 * 5, dtype=np.int64).reshape(2, 3, 4, 5) * (2**40) - 7
    save("transpose4d_in", y)
    save("transpose4d_perm1302_out", np.transpose(y, (1, 3, 0, 2)))

    # Concat of three inputs: float16 on axis 1, bool on axis -1.
    a = np.arange(8, dtype=np.float16).reshape(2, 1, 4) - np.float16(0.5)
    b = np.arange(24, dtype=np.float16).reshape(2, 3, 4) * np.float16(0.25)
    c = -np.arange(16, dtype=np.float16).reshape(2, 2, 4)
    save("concat1_in0", a)
    save("concat1_in1", b)
    save("concat1_in2", c)
    save("concat1_out", np.concatenate([a, b, c], axis=1))
    p = np.array([[[True], [False], [True]], [[False], [False], [True]]])
    q = (np.arange(12).reshape(2, 3, 2) % 3) == 0
    r = (np.arange(24).reshape(2, 3, 4) % 5) < 2
    save("concatm1_in0", p)
    save("concatm1_in1", q)
    save("concatm1_in2", r)
    save("concatm1_out", np.concatenate([p, q, r], axis=-1))

    # Split: uneven [2, 3] on axis 1 (uint8), even in three on axis 0 (int64).
    s = np.arange(20, dtype=np.uint8).reshape(2, 5, 2)
    save("split_uneven_in", s)
    for i, part in enumerate(np.split(s, [2], axis=1)):
        save("split_uneven_out%d" % i, part)
    e = np.arange(12, dtype=np.int64).reshape(6, 2) - 6
    save("split_even_in", e)
    for i, part in enumerate(np.split(e, 3, axis=0)):
        save("split_even_out%d" % i, part)

    # Gather: axis 0 with 2-D int64 indices, axis 1 with int32 indices
    # (negative ones count from the back), a scalar index, and 3-D data.
    d = np.arange(12, dtype=np.float32).reshape(3, 4) + np.float32(0.5)
    save("gather_data", d)
    i0 = np.array([[0, -1], [1, -3]], dtype=np.int64)
    save("gather_axis0_idx", i0)
    save("gather_axis0_out", np.take(d, i0, axis=0))
    i1 = np.array([-1, 0, 2], dtype=np.int32)
    save("gather_axis1_idx", i1)
    save("gather_axis1_out", np.take(d, i1, axis=1))
    save("gather_scalar_idx", np.array(-2, dtype=np.int64))
    save("gather_scalar_out", np.take(d, -2, axis=0))
    d3 = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 3 - 20
    save("gather3d_data", d3)
    i3 = np.array([[2, -2], [0, 1]], dtype=np.int64)
    save("gather3d_idx", i3)
    save("gather3d_axis1_out", np.take(d3, i3, axis=1))

    # Slice over one 3x4x5 input.
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5) - 30
    save("slice_in", x)
    # Negative start, end past the axis (INT64_MAX), axes a subset.
    save("slice_negstart_out", onnx_slice(x, [-2], [INT64_MAX], [2], [1]))
    # Step -1 over a whole axis: start -1, end INT64_MIN.
    save("slice_reverse_out", onnx_slice(x, [-1], [INT64_MIN], [1], [-1]))
    # Step 2 on two axes.
    save("slice_step2_out", onnx_slice(x, [0, 1], [3, 5], [0, 2], [2, 2]))
    # Negative axes and steps, ends clamped below the axis.
    save("slice_negaxes_out", onnx_slice(x, [4, -1], [-6, -100], [-1, 0], [-2, -1]))
    # An empty result (start after end with step 1).
    save("slice_empty_out", onnx_slice(x, [3], [1], [1], [1]))

    # Expand: [3, 1] to [2, 3, 4]; [2, 1, 4] with a shorter target [3, 1].
    v = np.array([[1.5], [-2.0], [3.25]], dtype=np.float32)
    save("expand_in", v)
    save("expand_out", np.broadcast_to(v, (2, 3, 4)))
    w = np.arange(8, dtype=np.int64).reshape(2, 1, 4)
    save("expand_short_in", w)
    save("expand_short_out", w * np.ones((3, 1), dtype=np.int64))

    # Range: float32 with an exact and an inexact count; int32 and int64
    # counting down.
    save("range_f32_out", onnx_range(-1.5, 2.0, 0.5, np.float32))
    save("range_f32_ceil_out", onnx_range(0.0, 1.0, 0.25 + 0.125, np.float32))
    save("range_i32_out", onnx_range(10, -3, -4, np.int32))
    save("range_i64_out", onnx_range(-(2**40), 2**40, 2**39 + 1, np.int64))

    # ConstantOfShape: shape [2, 3], value int64 -7.
    save("constant_of_shape_out", np.full((2, 3), -7, dtype=np.int64))

    # Shape of a 2x3x4x5 tensor with start/end.
    dims = np.array([2, 3, 4, 5], dtype=np.int64)
    save("shape_start1_endm1_out", dims[1:-1])
    save("shape_startm3_out", dims[-3:])
    save("shape_end10_out", dims[0:10])


if __name__ == "__main__":
    main()
