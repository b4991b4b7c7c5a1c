#!/usr/bin/python3
"""Writes the reference .npy files that tests/devices/test_cpu_elementwise.c
and tests/devices/test_cpu_reduce.c read: the inputs of each case and
NumPy's answer, which the cpu kernels must reproduce.

    elementwise/NAME_in0.npy, NAME_in1.npy, ...   the op's inputs, in order
    elementwise/NAME_out.npy                      the expected output
    reduce/NAME_in*.npy, reduce/NAME_out.npy      the same for reductions

Attributes (alpha, axes, keepdims, ...) are repeated literally in the C
tests beside the case names. Inputs come from one seeded generator, so the
files are the same on every run. Transcendental functions are computed in
float64 and rounded to float32 once (the tests allow a few ulps); +, -, *, /
in float32 itself, as C computes them (the tests allow the same tolerance).
Integer semantics follow ONNX as tgc implements it: Div truncates toward
zero, overflow wraps around.

Run with a Python that has NumPy (on the dev image: /usr/bin/python3):
    /usr/bin/python3 tests/data/kernels/make_elementwise_refs.py
"""
import math
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20240917)
F32, F16, I32, I64, U8, B = np.float32, np.float16, np.int32, np.int64, np.uint8, np.bool_


def c_order(x):
    """x in C order, keeping rank 0 (np.ascontiguousarray makes it [1])."""
    x = np.asarray(x)
    return x if x.ndim == 0 else np.ascontiguousarray(x)


def save_case(folder, name, inputs, out):
    d = os.path.join(HERE, folder)
    os.makedirs(d, exist_ok=True)
    for i, x in enumerate(inputs):
        np.save(os.path.join(d, "%s_in%d.npy" % (name, i)), c_order(x))
    np.save(os.path.join(d, name + "_out.npy"), c_order(out))


def ew(name, inputs, out):
    save_case("elementwise", name, inputs, out)


def red(name, inputs, out):
    save_case("reduce", name, inputs, out)


def randf(*shape, lo=-3.0, hi=3.0):
    return RNG.uniform(lo, hi, size=shape).astype(F32)


def randi(dtype, *shape, lo=-50, hi=50):
    return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def f64(fn, x):
    """fn over x in float64, rounded to float32 once."""
    return fn(x.astype(np.float64)).astype(F32)


def trunc_div(a, b):
    """Integer division truncating toward zero, exact for int64."""
    q = np.abs(a.astype(object)) // np.abs(b.astype(object))
    sign = np.sign(a.astype(object)) * np.sign(b.astype(object))
    return np.array(q * sign, dtype=object).astype(np.result_type(a, b))


def wrap(dtype, values):
    """Python ints wrapped to dtype's width (two's complement)."""
    bits = np.dtype(dtype).itemsize * 8
    mod = [(int(v) % (1 << bits)) for v in np.ravel(values)]
    signed = np.issubdtype(dtype, np.signedinteger)
    out = [v - (1 << bits) if signed and v >= (1 << (bits - 1)) else v for v in mod]
    return np.array(out, dtype=dtype).reshape(np.shape(values))


def arith(a, b, op):
    """a op b in the inputs' integer type with wrap-around, via Python ints."""
    av = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)).astype(object)
    bv = np.broadcast_to(b, av.shape).astype(object)
    return wrap(a.dtype, op(av, bv))


def elementwise():
    # ---- Binary float32 arithmetic: equal shapes (odd sizes), broadcasting
    # [3,1,5] + [4,5], a scalar on either side, an inner broadcast [2,1,4,1]
    # with [3,1,5], a [1]-shaped operand, and an empty [0,3] with [3].
    a, b = randf(7, 13), randf(7, 13)
    ew("add_f32_same", [a, b], a + b)
    ew("sub_f32_same", [a, b], a - b)
    ew("mul_f32_same", [a, b], a * b)
    bd = np.where(np.abs(b) < 0.25, F32(0.5), b).astype(F32)
    ew("div_f32_same", [a, bd], a / bd)
    a, b = randf(3, 1, 5), randf(4, 5)
    ew("add_f32_bcast", [a, b], a + b)
    ew("sub_f32_bcast", [a, b], a - b)
    ew("mul_f32_bcast", [a, b], a * b)
    ew("div_f32_bcast", [a, b + F32(4)], a / (b + F32(4)))
    a, s = randf(7, 13), np.array(2.5, dtype=F32)
    ew("add_f32_scalar", [a, s], a + s)
    ew("sub_f32_scalar_left", [s, a], s - a)
    ew("div_f32_scalar", [a, s], a / s)
    a, b = randf(2, 1, 4, 1), randf(3, 1, 5)
    ew("mul_f32_inner", [a, b], a * b)
    a, b = randf(5, 3), randf(1)
    ew("add_f32_one", [a, b], a + b)
    a, b = randf(0, 3), randf(3)
    ew("add_f32_empty", [a, b], a + b)
    a, m = randf(6), randf(4, 6)
    ew("add_f32_vec_matrix", [a, m], a + m)

    # ---- Integer arithmetic: wrap-around, truncating division.
    i32max = np.iinfo(I32).max
    a = np.array([[i32max, -5, 7, -7], [i32max - 1, 0, -i32max - 1, 3]], dtype=I32)
    b = np.array([10, 3, -2, 2], dtype=I32)
    ew("add_i32_wrap", [a, b], arith(a, b, lambda x, y: x + y))
    ew("mul_i32_wrap", [a, b], arith(a, b, lambda x, y: x * y))
    ew("div_i32", [a, b], trunc_div(a, np.broadcast_to(b, a.shape)))
    a, b = randi(I64, 3, 1, 5, lo=-10**12, hi=10**12), randi(I64, 4, 5, lo=-10**6, hi=10**6)
    b[b == 0] = 7
    ew("sub_i64_bcast", [a, b], arith(a, b, lambda x, y: x - y))
    ew("div_i64_bcast", [a, b], trunc_div(np.broadcast_to(a, (3, 4, 5)), np.broadcast_to(b, (3, 4, 5))))
    i64min = np.iinfo(I64).min
    a = np.array([i64min, i64min, -7, 7, -8, 8], dtype=I64)
    b = np.array([-1, 1, 2, -2, 3, -3], dtype=I64)
    ew("div_i64_edge", [a, b], np.array([i64min, i64min, -3, -3, -2, -2], dtype=I64))
    a, b = randi(U8, 5, 7, lo=0, hi=255), randi(U8, 7, lo=0, hi=255)
    ew("add_u8_wrap", [a, b], arith(a, b, lambda x, y: x + y))
    ew("sub_u8_wrap", [a, b], arith(a, b, lambda x, y: x - y))
    bd = np.maximum(b, 1).astype(U8)
    ew("div_u8", [a, bd], (a // bd).astype(U8))

    # ---- Pow: float ** float, float ** int (negative base), int ** int.
    a, b = randf(5, 6, lo=0.1, hi=4.0), randf(6, lo=-2.0, hi=3.0)
    ew("pow_f32", [a, b], f64(lambda x: np.power(x, b.astype(np.float64)), a))
    a = randf(4, 5, lo=-3.0, hi=3.0)
    e = np.array([0, 1, 2, 3, -1], dtype=I64)
    ew("pow_f32_i64exp", [a, e], f64(lambda x: np.power(x, e.astype(np.float64)), a))
    a = np.array([[2, -3, 5, 0, 1, -1], [7, 10, -2, 3, 4, 2]], dtype=I64)
    e = np.array([3, 3, 0, 5, 7, 63], dtype=I64)
    ew("pow_i64", [a, e], arith(a, e, lambda x, y: x ** y))
    a = np.array([3, -2, 5, 46341], dtype=I32)
    e = np.array([2, 3, 4, 2], dtype=I32)
    ew("pow_i32_wrap", [a, e], arith(a, e, lambda x, y: x ** y))

    # ---- Unary ops.
    x = randf(7, 13, lo=-5.0, hi=5.0)
    ew("neg_f32", [x], -x)
    ew("abs_f32", [x], np.abs(x))
    ew("relu_f32", [x], np.maximum(x, F32(0)))
    ew("leakyrelu_f32_default", [x], np.where(x < 0, F32(0.01) * x, x).astype(F32))
    ew("leakyrelu_f32_alpha", [x], np.where(x < 0, F32(0.2) * x, x).astype(F32))
    ew("tanh_f32", [x], f64(np.tanh, x))
    ew("exp_f32", [x], f64(np.exp, x))
    ew("erf_f32", [x], f64(np.vectorize(math.erf), x))
    xs = np.concatenate([x.ravel(), np.array([-100, -30, -1e-3, 0, 1e-3, 30, 100], dtype=F32)])
    ew("sigmoid_f32", [xs], f64(lambda v: 1.0 / (1.0 + np.exp(-v)), xs))
    xp = randf(7, 13, lo=1e-3, hi=50.0)
    ew("log_f32", [xp], f64(np.log, xp))
    ew("sqrt_f32", [xp], f64(np.sqrt, xp))
    e = randf(0, 3)
    ew("exp_f32_empty", [e], np.exp(e))
    xi = np.array([[-7, 0, 5], [np.iinfo(I32).min, np.iinfo(I32).max, -1]], dtype=I32)
    ew("neg_i32", [xi], wrap(I32, [-int(v) for v in xi.ravel()]).reshape(xi.shape))
    ew("relu_i32", [xi], np.maximum(xi, 0).astype(I32))
    xl = randi(I64, 4, 9, lo=-10**15, hi=10**15)
    ew("abs_i64", [xl], np.abs(xl))

    # ---- Min, Max (variadic, broadcasting), Clip.
    a, b, c = randf(3, 1), randf(4), randf(2, 1, 1)
    ew("max_f32_3", [a, b, c], np.maximum(np.maximum(a, b), c))
    ew("min_f32_3", [a, b, c], np.minimum(np.minimum(a, b), c))
    x = randf(3, 5)
    ew("max_f32_1", [x], x)
    a, b = randi(I64, 5, 4), randi(I64, 4)
    ew("min_i64_2", [a, b], np.minimum(a, b))
    a, b = randi(U8, 6, 6, lo=0, hi=255), randi(U8, 6, 1, lo=0, hi=255)
    ew("max_u8_2", [a, b], np.maximum(a, b))
    x = randf(7, 13, lo=-4.0, hi=4.0)
    lo, hi = np.array(-1.5, dtype=F32), np.array(2.0, dtype=F32)
    ew("clip_f32", [x, lo, hi], np.clip(x, lo, hi))
    ew("clip_f32_min", [x, lo], np.maximum(x, lo))
    ew("clip_f32_max", [x, hi], np.minimum(x, hi))  # lo omitted in the test
    ew("clip_f32_none", [x], x)
    ew("clip_f32_crossed", [x, hi, lo], np.clip(x, hi, lo))  # min > max: all max
    xi = randi(I32, 4, 6, lo=-100, hi=100)
    ew("clip_i32", [xi, np.array([-20], dtype=I32), np.array([30], dtype=I32)], np.clip(xi, -20, 30))

    # ---- Comparisons and Where.
    a = randi(I32, 7, 13, lo=-3, hi=3).astype(F32)
    b = randi(I32, 13, lo=-3, hi=3).astype(F32)
    ew("equal_f32", [a, b], np.equal(a, b))
    ew("less_f32", [a, b], np.less(a, b))
    ew("greater_f32", [a, b], np.greater(a, b))
    a, b = randi(I64, 3, 1, 5, lo=-2, hi=2), randi(I64, 4, 5, lo=-2, hi=2)
    ew("equal_i64_bcast", [a, b], np.equal(a, b))
    ew("greater_i64_bcast", [a, b], np.greater(a, b))
    a, b = randi(I32, 6, lo=-2, hi=2), np.array(0, dtype=I32)
    ew("less_i32_scalar", [a, b], np.less(a, b))
    p, q = RNG.integers(0, 2, size=(4, 5)).astype(B), RNG.integers(0, 2, size=(5,)).astype(B)
    ew("equal_bool", [p, q], np.equal(p, q))
    a, b = randi(U8, 9, lo=0, hi=3), randi(U8, 9, lo=0, hi=3)
    ew("less_u8", [a, b], np.less(a, b))
    cond = RNG.integers(0, 2, size=(3, 1, 5)).astype(B)
    x, y = randf(4, 5), np.array(-9.0, dtype=F32)
    ew("where_f32", [cond, x, y], np.where(cond, x, y))
    x, y = randi(I64, 1, 4, 1), randi(I64, 5)
    ew("where_i64", [cond, x, y], np.where(cond, x, y))
    x, y = randf(3, 4, 5).astype(F16), randf(4, 5).astype(F16)
    ew("where_f16", [cond, x, y], np.where(cond, x, y))
    c2 = RNG.integers(0, 2, size=(7, 13)).astype(B)
    x, y = randi(U8, 7, 13, lo=0, hi=255), randi(U8, 7, 13, lo=0, hi=255)
    ew("where_u8_same", [c2, x, y], np.where(c2, x, y))

    # ---- Cast: every pair. Sources chosen so numpy's answer is defined
    # (no NaN or out-of-range float -> int, no negative float -> uint8).
    src = {
        "f32": np.array([-2.7, -1.5, -0.5, -0.0, 0.0, 0.3, 0.5, 1.5, 2.5, 100.9, 1e-8,
                         65519.0, 65520.0, 1.00048828125, 3e9, -3e9], dtype=F32),
        "f16": np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.5, 2.5, 1000.0, 65504.0, -65504.0,
                         6e-8], dtype=F16),
        "i32": np.array([np.iinfo(I32).min, -70000, -1, 0, 1, 255, 256, 2049, 70000,
                         np.iinfo(I32).max], dtype=I32),
        "i64": np.array([np.iinfo(I64).min, -2**40, -1, 0, 1, 2049, 2**31, 2**40 + 3,
                         np.iinfo(I64).max], dtype=I64),
        "u8": np.array([0, 1, 127, 128, 200, 255], dtype=U8),
        "b8": np.array([True, False, True, True, False]),
    }
    # Float -> uint8: only values numpy converts defined.
    src_u8 = {
        "f32": np.array([0.0, 0.3, 1.5, 2.5, 127.9, 200.5, 255.0], dtype=F32),
        "f16": np.array([0.0, 0.5, 1.5, 2.5, 128.0, 255.0], dtype=F16),
    }
    # Float -> int32/int64: drop values outside int32 (tested separately).
    in_i32 = {
        "f32": src["f32"][np.abs(src["f32"].astype(np.float64)) < 2**31],
        "f16": src["f16"],
    }
    dtypes = {"f32": F32, "f16": F16, "i32": I32, "i64": I64, "u8": U8, "b8": B}
    for s, sdt in dtypes.items():
        for d, ddt in dtypes.items():
            x = src[s]
            if s in ("f32", "f16") and d == "u8":
                x = src_u8[s]
            elif s in ("f32", "f16") and d in ("i32", "i64"):
                x = in_i32[s]
            with np.errstate(over="ignore", invalid="ignore"):
                if d == "b8":
                    y = x != 0
                elif s in ("i32", "i64", "u8") and d in ("i32", "i64", "u8"):
                    y = wrap(ddt, [int(v) for v in x])
                else:
                    y = x.astype(ddt)
            ew("cast_%s_%s" % (s, d), [x], y)
    # Saturation (undefined in C and unspecified in ONNX; tgc clamps).
    x = np.array([3e9, -3e9, 1e30, -1e30, np.inf, -np.inf, np.nan], dtype=F32)
    ew("cast_f32_i32_sat", [x], np.array([2**31 - 1, -2**31, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0], dtype=I32))

    ew("identity_f16", [src["f16"]], src["f16"])
    x = randi(I64, 3, 4)
    ew("identity_i64", [x], x)


def reductions():
    x = randf(3, 4, 5)
    red("sum_f32_axis1_keep", [x, np.array([1], dtype=I64)], x.sum(axis=1, keepdims=True))
    red("sum_f32_axes_m1_0", [x, np.array([-1, 0], dtype=I64)], x.sum(axis=(2, 0)))
    red("sum_f32_all", [x], x.sum(keepdims=True))
    red("sum_f32_noop", [x, np.zeros(0, dtype=I64)], x)
    xi = randi(I32, 5, 7, lo=-10**6, hi=10**6)
    red("sum_i32_axis0", [xi, np.array([0], dtype=I64)], xi.sum(axis=0, keepdims=True, dtype=I32))
    xl = randi(I64, 2, 3, 4, lo=-10**12, hi=10**12)
    red("sum_i64_axis2", [xl, np.array([2], dtype=I64)], xl.sum(axis=2, dtype=I64))
    e = randf(0, 3)
    red("sum_f32_empty", [e, np.array([0], dtype=I64)], e.sum(axis=0, keepdims=True))

    red("mean_f32_axes02_keep", [x], x.mean(axis=(0, 2), keepdims=True))
    red("mean_f32_axis_m2", [x], x.mean(axis=-2))
    red("mean_f32_all", [x], np.array(x.astype(np.float64).mean(), dtype=F32))
    # Integer means: summed in the type, divided truncating toward zero
    # (numpy.mean with dtype=the input's, as ONNX's reference calls it).
    red("mean_i32_axis1", [xi], np.mean(xi, axis=1, keepdims=True, dtype=I32))
    red("mean_i64_all", [xl], np.mean(xl, keepdims=True, dtype=I64))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice"
        red("mean_f32_empty", [e], e.mean(axis=0, keepdims=True))

    red("max_f32_axis1", [x], x.max(axis=1))
    red("max_f32_axes01_keep", [x], x.max(axis=(0, 1), keepdims=True))
    red("max_i64_axis_m1", [xl], xl.max(axis=-1, keepdims=True))
    xu = randi(U8, 6, 7, lo=0, hi=255)
    red("max_u8_all", [xu], np.array(xu.max(), dtype=U8).reshape(1, 1))
    red("max_f32_empty", [e], np.full((1, 3), -np.inf, dtype=F32))

    m = randf(7, 13)
    red("argmax_f32_axis1", [m], m.argmax(axis=1).astype(I64).reshape(7, 1))
    red("argmax_f32_axis0", [m], m.argmax(axis=0).astype(I64))
    t = np.array([[1, 5, 5, 2, 5], [3, 3, 3, 3, 3], [-4, -2, -9, -2, -3]], dtype=I32)
    red("argmax_i32_ties_first", [t], t.argmax(axis=-1).astype(I64).reshape(3, 1))
    last = t.shape[1] - 1 - np.flip(t, axis=-1).argmax(axis=-1)
    red("argmax_i32_ties_last", [t], last.astype(I64).reshape(3, 1))
    t0 = np.array([[2, 7, 7], [2, 1, 7], [0, 7, 3]], dtype=I64)
    last0 = t0.shape[0] - 1 - np.flip(t0, axis=0).argmax(axis=0)
    red("argmax_i64_axis0_last", [t0], last0.astype(I64))
    xl3 = randi(I64, 2, 5, 3, lo=-4, hi=4)
    red("argmax_i64_axis1", [xl3], xl3.argmax(axis=1).astype(I64).reshape(2, 1, 3))

    def softmax(v, axis):
        v = v.astype(np.float64)
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return (e / e.sum(axis=axis, keepdims=True)).astype(F32)

    def log_softmax(v, axis):
        v = v.astype(np.float64)
        s = v - v.max(axis=axis, keepdims=True)
        return (s - np.log(np.exp(s).sum(axis=axis, keepdims=True))).astype(F32)

    s = randf(4, 5, 6, lo=-4.0, hi=4.0)
    for axis, tag in ((0, "0"), (1, "1"), (-1, "m1")):
        red("softmax_axis" + tag, [s], softmax(s, axis))
        red("logsoftmax_axis" + tag, [s], log_softmax(s, axis))
    big = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, 0.0], [80.0, 90.0, 100.0]], dtype=F32)
    red("softmax_large", [big], softmax(big, -1))
    red("logsoftmax_large", [big], log_softmax(big, -1))
    wide = randf(3, 300, 2)
    red("softmax_wide_axis0", [wide], softmax(wide, 0))
    w2 = randf(2, 3, 300)
    red("softmax_axis1_inner300", [w2], softmax(w2, 1))


def main():
    elementwise()
    reductions()


if __name__ == "__main__":
    main()
