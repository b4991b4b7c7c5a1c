"""Makes the bilinear Resize cases whose outputs tgc must reproduce bit for
bit: each model (a single Resize, mode linear, over the last two axes of
NCHW), its input and ONNX Runtime's output, computed by onnxruntime-node
(bench/peers/ort_bench.js). Run once; the outputs are committed.

    NODE_PATH=.../node_modules /usr/bin/python3 tests/data/resize_ort/make_refs.py

Why bit for bit: a dynamically quantized model (DynamicQuantizeLinear after
an upsampling) turns a one-ulp difference into a different integer, and the
difference grows through the network (IS-Net uint8: mask IoU 0.63 with
ORT's before, 1.0 after)."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_BENCH = os.path.join(HERE, "..", "..", "..", "bench", "peers", "ort_bench.js")

# name: (input shape, coordinate mode, scales or None, sizes or None)
CASES = {
    "half_pixel_x2": ((1, 3, 7, 9), "half_pixel", [1, 1, 2, 2], None),
    "pytorch_half_pixel_sizes": ((2, 2, 5, 6), "pytorch_half_pixel", None, [2, 2, 13, 17]),
    "align_corners_x4": ((1, 2, 4, 5), "align_corners", [1, 1, 4, 4], None),
    "asymmetric_x8": ((1, 1, 3, 3), "asymmetric", [1, 1, 8, 8], None),
    "half_pixel_down": ((1, 2, 12, 10), "half_pixel", None, [1, 2, 5, 4]),
}


def model(shape, mode, scales, sizes):
    inputs = ["x", "", "scales" if scales else "", "sizes" if sizes else ""]
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("Resize", inputs, ["y"], mode="linear", coordinate_transformation_mode=mode)
    inits = []
    if scales:
        inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [4], scales))
    if sizes:
        inits.append(helper.make_tensor("sizes", TensorProto.INT64, [4], sizes))
    out = [s * f for s, f in zip(shape, scales)] if scales else sizes
    g = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [int(d) for d in out])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def main():
    rng = np.random.default_rng(33)
    for name, (shape, mode, scales, sizes) in CASES.items():
        path = os.path.join(HERE, name + ".onnx")
        onnx.save(model(shape, mode, scales, sizes), path)
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        np.save(os.path.join(HERE, name + ".x.npy"), x)
        subprocess.run(["node", ORT_BENCH, path, "1", "0", os.path.join(HERE, name + ".ort.npy"),
                        "x=" + os.path.join(HERE, name + ".x.npy")], check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
