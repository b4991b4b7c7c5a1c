#!/usr/bin/python3
"""Writes the reference .npy files of tests/devices/test_cpu_linalg.c:
numpy.einsum and numpy.linalg.det (ONNX's reference for Einsum and Det)
computed in float64 and rounded to the tensors' dtype once:

    linalg/NAME_in0.npy, NAME_in1.npy, ...   the inputs
    linalg/NAME_out.npy                      the expected output

The equations are repeated literally in the C test beside the case names.
Run with /usr/bin/python3 (NumPy):
    /usr/bin/python3 tests/data/kernels/make_linalg_refs.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261127)
F32, F16 = np.float32, np.float16


def c_order(x):
    """x in C order, keeping rank 0 (np.ascontiguousarray makes it [1])."""
    x = np.asarray(x)
    return x if x.ndim == 0 else np.ascontiguousarray(x)


def save(name, inputs, out):
    d = os.path.join(HERE, "linalg")
    os.makedirs(d, exist_ok=True)
    for i, x in enumerate(inputs):
        np.save(os.path.join(d, "%s_in%d.npy" % (name, i)), c_order(x))
    np.save(os.path.join(d, name + "_out.npy"), c_order(out))


def r(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(F32)


def einsum(name, eq, *xs, dtype=F32):
    xs = [x.astype(dtype) for x in xs]
    out = np.einsum(eq, *[x.astype(np.float64) for x in xs])
    save(name, xs, np.asarray(out).astype(dtype))


def main():
    # The batched-GEMM lowering.
    einsum("matmul", "ij,jk->ik", r(3, 4), r(4, 5))
    einsum("batch_matmul", "bij,bjk->bik", r(2, 3, 4), r(2, 4, 5))
    einsum("matmul_implicit", "ij,jk", r(3, 4), r(4, 5))
    einsum("permuted", "kB,Bmk->mB", r(4, 2), r(2, 3, 4))  # batch B, M m, K k, out order differs
    einsum("outer", "i,j->ij", r(3), r(4))
    einsum("inner", "i,i", r(7), r(7))
    einsum("ellipsis_matmul", "...ij,...jk->...ik", r(2, 3, 4), r(2, 4, 5))
    # The general loop.
    einsum("transpose", "ijk->kji", r(2, 3, 4))
    einsum("sum_all", "ij->", r(3, 4))
    einsum("diagonal", "ii->i", r(4, 4))
    einsum("trace", "ii", r(4, 4))
    einsum("batch_diagonal", "...ii->...i", r(2, 3, 3))
    einsum("one_side_sum", "ij,jk->k", r(3, 4), r(4, 5))
    einsum("three", "ij,jk,kl->il", r(2, 3), r(3, 4), r(4, 2))
    einsum("broadcast_ellipsis", "...ij,...jk->...ik", r(2, 1, 3, 4), r(3, 4, 2))
    einsum("implicit_sorted", "ba,cb", r(3, 2), r(4, 3))  # output 'ac'
    einsum("f16_matmul", "ij,jk->ik", r(3, 4), r(4, 5), dtype=F16)
    # Integers: in the type itself, wrapping (numpy.einsum with the dtype).
    ai = RNG.integers(-9, 9, size=(3, 4), endpoint=True).astype(np.int32)
    bi = RNG.integers(-9, 9, size=(4, 5), endpoint=True).astype(np.int32)
    save("i32_matmul", [ai, bi], np.einsum("ij,jk->ik", ai, bi))
    big = np.array([2**40, 3], dtype=np.int64)
    save("i64_wrap", [big, big], np.einsum("i,i", big, big))  # 2^80 + 9 wraps to 9
    u = RNG.integers(0, 255, size=(4, 4), endpoint=True).astype(np.uint8)
    save("u8_trace", [u], np.einsum("ii", u))  # the sum wraps in uint8

    # Det: a batch of random matrices, a singular one, a permutation (sign), 1 x 1.
    a = r(2, 3, 4, 4).astype(np.float64) * 3
    save("det_batch", [a.astype(F32)], np.linalg.det(a.astype(F32).astype(np.float64)).astype(F32))
    s = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=F32)
    save("det_singular", [s], np.array(np.linalg.det(s.astype(np.float64)), dtype=F32))
    p = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0], ], dtype=F32)[[1, 0, 2]]
    save("det_permutation", [p], np.array(np.linalg.det(p.astype(np.float64)), dtype=F32))
    one = np.array([[[2.5]], [[-4.0]]], dtype=F32)
    save("det_1x1", [one], np.linalg.det(one.astype(np.float64)).astype(F32))
    h = r(3, 3, 3).astype(F16)
    save("det_f16", [h], np.linalg.det(h.astype(np.float64)).astype(F16))


if __name__ == "__main__":
    main()
