"""Reference values for tests/devices/test_cpu_convt.c: each case by numpy's
own functions (np.pad) or by the operator's definition written out in numpy,
independent of tgc. Run: python3 tests/data/kernels/make_convt_refs.py"""
import numpy as np
np.set_printoptions(precision=8, suppress=True, linewidth=150)
def fmt(a): return ", ".join("%.7gf" % v for v in np.asarray(a, dtype=np.float64).ravel())
# A: ConvTranspose by its definition (scatter), group 2
X = (np.arange(12, dtype=np.float32) / 4 - 1).reshape(1, 2, 2, 3)
W = (np.arange(8, dtype=np.float32) / 8 - 0.3).reshape(2, 1, 2, 2)
B = np.array([0.5, -1], np.float32)
s, d, pb, pe, op = (3, 2), (1, 2), (1, 0), (0, 1), (1, 0)
full = [s[a] * (X.shape[2 + a] - 1) + (W.shape[2 + a] - 1) * d[a] + 1 + op[a] for a in range(2)]
out = [full[a] - pb[a] - pe[a] for a in range(2)]
Y = np.zeros((1, 2, full[0], full[1]), np.float64)
for c in range(2):          # group 2: channel c feeds output c
    for i in range(2):
        for j in range(3):
            for ti in range(2):
                for tj in range(2):
                    Y[0, c, i * s[0] + ti * d[0], j * s[1] + tj * d[1]] += X[0, c, i, j] * W[c, 0, ti, tj]
Y = Y[:, :, pb[0]:pb[0] + out[0], pb[1]:pb[1] + out[1]] + B.reshape(1, 2, 1, 1)
print("convt", Y.shape); print(fmt(Y))
# B: Pad reflect past the edge: np.pad
x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
print("reflect", np.pad(x, ((0, 0), (5, 2)), "reflect").shape); print(fmt(np.pad(x, ((0, 0), (5, 2)), "reflect")))
# edge with a crop on axis 1 (axes [1], pads [-1, 2])
x2 = np.arange(12, dtype=np.float32).reshape(3, 4)
e = np.pad(x2[:, 1:], ((0, 0), (0, 2)), "edge"); print("edge", e.shape); print(fmt(e))
# C: constant int32, value -7, pads [1, 0, 0, 2] on [2, 2]
x3 = np.array([[10, 20], [30, 40]], np.int32)
c3 = np.pad(x3, ((1, 0), (0, 2)), "constant", constant_values=-7); print("const", c3.shape, c3.ravel().tolist())
# D: LpPool p 3, kernel [2, 2], strides [2, 1], pads [1, 0, 0, 1] on [1, 1, 3, 3]
x4 = (np.arange(9, dtype=np.float32) - 4).reshape(3, 3)
xp = np.pad(x4, ((1, 0), (0, 1)))
lp = np.array([[np.sum(np.abs(xp[i * 2:i * 2 + 2, j:j + 2]) ** 3) ** (1 / 3) for j in range(3)] for i in range(2)])
print("lppool", lp.shape); print(fmt(lp))
# E: GlobalLpPool p 1 and 3 on [1, 2, 5]
x5 = (np.arange(10, dtype=np.float32) / 3 - 1.5).reshape(1, 2, 5)
print("glp1", fmt(np.sum(np.abs(x5), axis=2))); print("glp3", fmt(np.sum(np.abs(x5) ** 3, axis=2) ** (1 / 3)))
# G: InstanceNormalization
x6 = np.array([[[1, 2, 4], [-1, 0, 5]]], np.float32)
m = x6.mean(axis=2, keepdims=True); v = x6.var(axis=2, keepdims=True)
y6 = np.array([2, .5]).reshape(1, 2, 1) * (x6 - m) / np.sqrt(v + 1e-5) + np.array([1, -1]).reshape(1, 2, 1)
print("inorm", fmt(y6))
# H: LRN size 3, alpha 0.3, beta 0.75, bias 1 on [1, 4, 1, 2]
x7 = np.array([1, -2, 3, 0.5, -1, 2, 4, -3], np.float32).reshape(1, 4, 1, 2)
sq = np.zeros_like(x7, dtype=np.float64)
for c in range(4):
    sq[:, c] = np.sum(x7[:, max(0, c - 1):min(4, c + 2)].astype(np.float64) ** 2, axis=1)
print("lrn", fmt(x7 / (1 + 0.3 / 3 * sq) ** 0.75))
