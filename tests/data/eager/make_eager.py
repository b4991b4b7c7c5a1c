"""Reference values for tests/executor/test_eager.c and the Python suites:
a convolution with padding and a matrix product, computed with numpy
(the convolution as explicit windows in float64). Run once with
/usr/bin/python3; the outputs are committed."""
import numpy as np

rng = np.random.default_rng(17)
x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
y = np.zeros((1, 4, 6, 6))
for o in range(4):
    for i in range(6):
        for j in range(6):
            y[0, o, i, j] = np.sum(xp[0, :, i:i + 3, j:j + 3] * w[o])
np.save("conv_x.npy", x)
np.save("conv_w.npy", w)
np.save("conv_y.npy", y.astype(np.float32))

a = rng.standard_normal((5, 7)).astype(np.float32)
b = rng.standard_normal((7, 3)).astype(np.float32)
np.save("matmul_a.npy", a)
np.save("matmul_b.npy", b)
np.save("matmul_y.npy", (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))
