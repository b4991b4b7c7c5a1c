#!/usr/bin/python3
"""Writes the .npy fixtures that the malformed graphs in tests/data/bad/
point at. Each file is wrong for the graph that uses it in one way only:

    w_f32_2x3.npy    float32 [2, 3]: right for a [2, 3] float32 declaration
                     (npy_shape_mismatch.yaml declares [3, 2])
    w_i64_2x3.npy    int64 [2, 3] (npy_dtype_mismatch.yaml declares float32)
    truncated.npy    a valid float32 [4, 4] header followed by 10 of the 16
                     elements (npy_truncated.yaml)

Run with a Python that has NumPy (on the dev image: /usr/bin/python3):
    /usr/bin/python3 tests/data/bad/npy/make.py
"""
import io
import os

import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))


def main():
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 8
    np.save(os.path.join(OUT, "w_f32_2x3.npy"), w)
    np.save(os.path.join(OUT, "w_i64_2x3.npy"), np.arange(6, dtype=np.int64).reshape(2, 3))
    buf = io.BytesIO()
    np.save(buf, np.ones((4, 4), dtype=np.float32))
    whole = buf.getvalue()
    with open(os.path.join(OUT, "truncated.npy"), "wb") as f:
        f.write(whole[: len(whole) - 6 * 4])


if __name__ == "__main__":
    main()
