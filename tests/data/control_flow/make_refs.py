#!/usr/bin/python3
"""Reference outputs of tests/data/good/control_flow.yaml, computed with
numpy from ONNX's definitions of Loop, Scan, If and Split (not from tgc):
run once, the outputs committed beside this script; tests/cli/
test_control_flow.sh compares tgc's run with them."""
import numpy as np

x = np.arange(16, dtype=np.float32).reshape(4, 4)
np.save("x.npy", x)
np.save("flag_true.npy", np.array(True))
np.save("flag_false.npy", np.array(False))

# count: Loop M=4, no cond; carried acc starts empty and gains a 1 each
# iteration; scan output: row i of x.
acc = np.zeros(0, np.float32)
rows = []
for i in range(4):
    acc = np.concatenate([acc, np.ones(1, np.float32)])
    rows.append(x[i])
np.save("count.npy", acc)
np.save("count_1.npy", np.stack(rows))

# while: v starts at 1 and doubles while the doubled value is below 100.
v = np.int64(1)
while True:
    v = v + v
    if not v < 100:
        break
np.save("while.npy", np.array(v, np.int64))

# scan: state zeros(4), over the rows of x; each step state + row, the scan
# output stacked along axis 1.
s = np.zeros(4, np.float32)
outs = []
for r in x:
    s = s + r
    outs.append(s)
np.save("scan.npy", s)
np.save("scan_1.npy", np.stack(outs, axis=1))

# pick: then: h := halves:1, four times h * halves:1; else: -halves:1.
halves1 = x[:, 2:4]
h = halves1.copy()
for k in range(4):
    h = h * halves1
np.save("pick_then.npy", h)
np.save("pick_else.npy", -halves1)
