#!/usr/bin/python3
"""Writes resnet_mini.yaml and its weights (random, seeded: the numbers are
meaningless, the shapes are the point): a small residual CNN on 32x32 RGB
images, larger than the digits CNN, for memory plans and reports. Its
lifetimes are more than a chain: two residual adds (a tensor read again
three nodes later) and an inception-style pair of branches joined by a
Concat.

Run with a Python that has NumPy (on the dev image: /usr/bin/python3):
    /usr/bin/python3 examples/resnet_mini/make_model.py [--input N]
--input N also writes x.npy, N random images (not kept in the repository).
Then, e.g.:
    tgc compile examples/resnet_mini/resnet_mini.yaml --devices cpu --dump memory --bind N=64
    tgc run examples/resnet_mini/resnet_mini.yaml --input x=examples/resnet_mini/x.npy --memory-report
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(2024)
inits = []


def weight(name, shape):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    a = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    np.save(os.path.join(HERE, "weights", name + ".npy"), a)
    inits.append("  - {name: %s, dtype: float32, shape: [%s], file: weights/%s.npy}"
                 % (name, ", ".join(str(d) for d in shape), name))
    return name


def conv(name, x, cin, cout, k):
    w = weight(name + ".w", (cout, cin, k, k))
    b = weight(name + ".b", (cout,))
    p = k // 2
    return ("  - {name: %s, op: Conv, inputs: [%s, %s, %s], attrs: {kernel_shape: [%d, %d], pads: [%d, %d, %d, %d]}}"
            % (name, x, w, b, k, k, p, p, p, p))


def main():
    os.makedirs(os.path.join(HERE, "weights"), exist_ok=True)
    nodes = [
        conv("stem", "x", 3, 16, 3),                                              # [N, 16, 32, 32]
        "  - {name: stem_relu, op: Relu, inputs: [stem]}",
        conv("b1c1", "stem_relu", 16, 16, 3),
        "  - {name: b1r1, op: Relu, inputs: [b1c1]}",
        conv("b1c2", "b1r1", 16, 16, 3),
        "  - {name: b1add, op: Add, inputs: [b1c2, stem_relu]}",                  # residual
        "  - {name: b1out, op: Relu, inputs: [b1add]}",
        "  - {name: pool1, op: MaxPool, inputs: [b1out], attrs: {kernel_shape: [2, 2], strides: [2, 2]}}",  # [N, 16, 16, 16]
        conv("br_a", "pool1", 16, 24, 1),                                         # [N, 24, 16, 16]
        "  - {name: br_a_relu, op: Relu, inputs: [br_a]}",
        conv("br_b", "pool1", 16, 24, 3),
        "  - {name: br_b_relu, op: Relu, inputs: [br_b]}",
        "  - {name: mix, op: Concat, inputs: [br_a_relu, br_b_relu], attrs: {axis: 1}}",  # [N, 48, 16, 16]
        conv("b2c1", "mix", 48, 48, 3),
        "  - {name: b2add, op: Add, inputs: [b2c1, mix]}",                        # residual
        "  - {name: b2out, op: Relu, inputs: [b2add]}",
        "  - {name: pool2, op: MaxPool, inputs: [b2out], attrs: {kernel_shape: [2, 2], strides: [2, 2]}}",  # [N, 48, 8, 8]
        conv("head", "pool2", 48, 64, 3),                                         # [N, 64, 8, 8]
        "  - {name: head_relu, op: Relu, inputs: [head]}",
        "  - {name: gap, op: GlobalAveragePool, inputs: [head_relu]}",            # [N, 64, 1, 1]
        "  - {name: feat, op: Flatten, inputs: [gap]}",                           # [N, 64]
    ]
    fc_w = weight("fc.w", (10, 64))
    fc_b = weight("fc.b", (10,))
    nodes += [
        "  - {name: logits, op: Gemm, inputs: [feat, %s, %s], attrs: {transB: 1}}" % (fc_w, fc_b),
        "  - {name: probs, op: Softmax, inputs: [logits], attrs: {axis: 1}}",
    ]
    with open(os.path.join(HERE, "resnet_mini.yaml"), "w") as f:
        f.write("format: tgc/1\nname: resnet_mini\n"
                "# A small residual CNN on 32x32 RGB images, random weights (make_model.py).\n"
                "inputs:\n  - {name: x, dtype: float32, shape: [N, 3, 32, 32]}\n"
                "outputs: [logits, probs]\ninitializers:\n")
        f.write("\n".join(inits) + "\nnodes:\n" + "\n".join(nodes) + "\n")
    if "--input" in sys.argv:
        n = int(sys.argv[sys.argv.index("--input") + 1])
        np.save(os.path.join(HERE, "x.npy"), rng.random((n, 3, 32, 32), dtype=np.float32))


if __name__ == "__main__":
    main()
