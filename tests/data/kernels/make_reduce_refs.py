#!/usr/bin/python3
"""Writes the reference .npy files of tests/devices/test_cpu_reduce_ops.c:
the reductions added beside ReduceSum/Mean/Max (ReduceMin, ReduceProd,
ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMin)
and the opset 18 form of the axes (input 1) for every ReduceX. Definitions
as ONNX's reference (onnx/reference/ops/op_reduce_*.py), in NumPy:

    reduce/NAME_in0.npy [, NAME_in1.npy]   the data [and the axes input]
    reduce/NAME_out.npy                    the expected output

Attributes (axes, keepdims, ...) are repeated literally in the C tests
beside the case names. Float results are computed in float64 and rounded
to float32 once. Run with /usr/bin/python3 (NumPy):
    /usr/bin/python3 tests/data/kernels/make_reduce_refs.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261125)
F32, F16, I32, I64, U8 = np.float32, np.float16, np.int32, np.int64, np.uint8


def c_order(x):
    """x in C order, keeping rank 0 (np.ascontiguousarray makes it [1])."""
    x = np.asarray(x)
    return x if x.ndim == 0 else np.ascontiguousarray(x)


def red(name, inputs, out):
    d = os.path.join(HERE, "reduce")
    os.makedirs(d, exist_ok=True)
    for i, x in enumerate(inputs):
        np.save(os.path.join(d, "%s_in%d.npy" % (name, i)), c_order(x))
    np.save(os.path.join(d, name + "_out.npy"), c_order(out))


def axes(*a):
    return np.array(a, dtype=I64)


def main():
    x = RNG.uniform(-2.0, 2.0, size=(3, 4, 5)).astype(F32)
    xd = x.astype(np.float64)
    p = RNG.uniform(0.5, 1.5, size=(3, 4, 5)).astype(F32)  # positive: for LogSum
    pd = p.astype(np.float64)
    xi = RNG.integers(-9, 9, size=(3, 4, 5), endpoint=True).astype(I32)
    xl = RNG.integers(-9, 9, size=(3, 4, 5), endpoint=True).astype(I64)
    xu = RNG.integers(0, 255, size=(3, 4, 5), endpoint=True).astype(U8)

    # Axes as the attribute (opset 13): axes [1] kept, axes [0, 2] dropped.
    red("min_f32_axis1_keep", [x], x.min(axis=1, keepdims=True))
    red("min_i32_axes02", [xi], xi.min(axis=(0, 2)))
    red("min_u8_all", [xu], xu.min(keepdims=True))
    red("prod_f32_axis_m1", [x], xd.prod(axis=-1, keepdims=True).astype(F32))
    red("prod_i64_axes02", [xl], xl.prod(axis=(0, 2)))
    red("l1_f32_axes02", [x], np.abs(xd).sum(axis=(0, 2)).astype(F32))
    red("l1_i32_axis1_keep", [xi], np.abs(xi).sum(axis=1, keepdims=True, dtype=I32))
    red("l2_f32_axis1_keep", [x], np.sqrt((xd * xd).sum(axis=1, keepdims=True)).astype(F32))
    red("log_sum_f32_axes02", [p], np.log(pd.sum(axis=(0, 2))).astype(F32))
    red("log_sum_exp_f32_axis_m1_keep", [x], np.log(np.exp(xd).sum(axis=-1, keepdims=True)).astype(F32))
    red("sum_square_f32_all", [x], (xd * xd).sum(keepdims=True).astype(F32))
    red("sum_square_i64_axis1_keep", [xl], (xl * xl).sum(axis=1, keepdims=True))
    # float16: folded in float32, rounded once.
    h = x.astype(F16)
    red("l2_f16_axes02", [h], np.sqrt((h.astype(np.float64) ** 2).sum(axis=(0, 2))).astype(F16))
    red("min_f16_axis1_keep", [h], h.min(axis=1, keepdims=True))

    # Axes as input 1 (opset 18): axes [0, 2], keepdims 1.
    for name, fn in [("sum", lambda v: v.sum(axis=(0, 2), keepdims=True)),
                     ("mean", lambda v: v.mean(axis=(0, 2), keepdims=True)),
                     ("max", lambda v: v.max(axis=(0, 2), keepdims=True)),
                     ("min", lambda v: v.min(axis=(0, 2), keepdims=True)),
                     ("prod", lambda v: v.prod(axis=(0, 2), keepdims=True)),
                     ("l1", lambda v: np.abs(v).sum(axis=(0, 2), keepdims=True)),
                     ("l2", lambda v: np.sqrt((v * v).sum(axis=(0, 2), keepdims=True))),
                     ("log_sum", lambda v: np.log(v.sum(axis=(0, 2), keepdims=True))),
                     ("log_sum_exp", lambda v: np.log(np.exp(v).sum(axis=(0, 2), keepdims=True))),
                     ("sum_square", lambda v: (v * v).sum(axis=(0, 2), keepdims=True))]:
        red("in18_%s_f32" % name, [p, axes(0, -1)], fn(pd).astype(F32))

    # LogSumExp where exp overflows float32 and float64 (1000), and -inf rows.
    big = np.array([[1000.0, 999.0, 998.0], [-np.inf, -np.inf, -np.inf]], dtype=F32)
    m = np.array([1000.0, 0.0])
    out = np.array([1000.0 + np.log(1 + np.exp(-1.0) + np.exp(-2.0)), -np.inf], dtype=F32).reshape(2, 1)
    red("log_sum_exp_f32_large", [big], out)
    del m

    # Empty reduced axes: ONNX's identities (opset 18 spells them out).
    e = np.zeros((0, 3), dtype=F32)
    red("empty_sum", [e], np.zeros((1, 3), dtype=F32))
    red("empty_prod", [e], np.ones((1, 3), dtype=F32))
    red("empty_min", [e], np.full((1, 3), np.inf, dtype=F32))
    red("empty_l1", [e], np.zeros((1, 3), dtype=F32))
    red("empty_l2", [e], np.zeros((1, 3), dtype=F32))
    red("empty_log_sum", [e], np.full((1, 3), -np.inf, dtype=F32))
    red("empty_log_sum_exp", [e], np.full((1, 3), -np.inf, dtype=F32))
    red("empty_sum_square", [e], np.zeros((1, 3), dtype=F32))
    ei = np.zeros((0, 3), dtype=I32)
    red("empty_min_i32", [ei], np.full((1, 3), np.iinfo(I32).max, dtype=I32))
    red("empty_prod_i32", [ei], np.ones((1, 3), dtype=I32))

    # ArgMin, ties either way, NaN first.
    t = np.array([[3, 1, 1, 2], [0, 0, 5, 0], [4, 4, 4, 4]], dtype=I32)
    red("argmin_i32_ties_first", [t], t.argmin(axis=-1).astype(I64).reshape(3, 1))
    last = t.shape[1] - 1 - np.flip(t, axis=-1).argmin(axis=-1)
    red("argmin_i32_ties_last", [t], last.astype(I64).reshape(3, 1))
    xn = x.copy()
    xn[1, 2, 3] = np.nan
    red("argmin_f32_axis1_nan", [xn], xn.argmin(axis=1).astype(I64))
    red("argmin_u8_axis0", [xu], xu.argmin(axis=0).astype(I64).reshape(1, 4, 5))
    red("argmin_f16_axis2", [h], h.argmin(axis=2).astype(I64).reshape(3, 4, 1))


if __name__ == "__main__":
    main()
