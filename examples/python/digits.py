"""The digits CNN from Python: load, place, run on cpu and gpu0, compare.

    make build
    PYTHONPATH=python /usr/bin/python3 examples/python/digits.py [DEVICES]

(or with tgc installed: pip install ./python, then python3 examples/python/digits.py)
"""
import os
import sys
import time

import numpy as np

import tgc

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "digits")
devices = sys.argv[1] if len(sys.argv) > 1 else ("cpu,gpu0" if any(d["name"] == "gpu0" for d in tgc.devices())
                                                 else "cpu")

for d in tgc.devices():
    print("%-5s %-10s %s" % (d["name"], d["type"], d["description"]))

g = tgc.load(os.path.join(HERE, "cnn.yaml"))
print(g.place(devices).summary(), end="")

x = np.load(os.path.join(HERE, "test_x.npy"))          # [400, 1, 8, 8] float32
labels = np.load(os.path.join(HERE, "test_y.npy"))
session = tgc.Session(g, devices=devices)
t0 = time.perf_counter()
out = session.run({"x": x})                              # {"logits": [400, 10]}
ms = (time.perf_counter() - t0) * 1e3
ref = np.load(os.path.join(HERE, "ref_logits_cnn.npy"))  # PyTorch's
err = np.abs(out["logits"] - ref).max()
acc = (out["logits"].argmax(axis=1) == labels).mean()
print("%s: %d images in %.1f ms, accuracy %.3f, max |tgc - PyTorch| %.2g" % (devices, len(x), ms, acc, err))
for dev, m in session.memory().items():
    print("  %s: peak %d bytes, %d buffers live" % (dev, m["peak_bytes_in_use"], m["live_buffers"]))
