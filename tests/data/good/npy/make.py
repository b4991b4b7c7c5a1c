#!/usr/bin/python3
"""Writes the .npy weights of tests/data/good/npy_cnn.yaml: a 3x3 conv of
one input channel into four, and a [3, 16] classifier. Values are small
and exact in float32, so any reader mistake shows.

Run with a Python that has NumPy (on the dev image: /usr/bin/python3):
    /usr/bin/python3 tests/data/good/npy/make.py
"""
import os

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))


def main():
    conv_w = (np.arange(4 * 1 * 3 * 3, dtype=np.float32).reshape(4, 1, 3, 3) - 18) / 16
    conv_b = np.array([0.5, -0.5, 0.25, 0], dtype=np.float32)
    fc_w = (np.arange(3 * 16, dtype=np.float32).reshape(3, 16) % 7 - 3) / 8
    fc_b = np.array([1, 0, -1], dtype=np.float32)
    for name, a in [("conv_w", conv_w), ("conv_b", conv_b), ("fc_w", fc_w), ("fc_b", fc_b)]:
        np.save(os.path.join(OUT, name + ".npy"), a)


if __name__ == "__main__":
    main()
