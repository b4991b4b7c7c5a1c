#!/usr/bin/python3
"""Writes the reference .npy files in tests/data/npy/ that tests/graph/test_npy.c
reads. Every value here is chosen by hand; the C test repeats them literally,
so a reader that decodes the wrong bytes fails there.

Run with a Python that has NumPy (on the dev image: /usr/bin/python3):
    /usr/bin/python3 tests/data/make_npy.py
The writer test compares tgc's output byte for byte with these files, so keep
them written by np.save (format 1.0) unless a name says otherwise.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")


def save(name, array):
    np.save(os.path.join(OUT, name), array)


def save_version(name, array, version):
    with open(os.path.join(OUT, name), "wb") as f:
        np.lib.format.write_array(f, array, version=version)


def main():
    os.makedirs(OUT, exist_ok=True)

    f32 = np.array([[0.5, -1.25, 3.0], [1e-3, 0.0, 1e30]], dtype=np.float32)
    save("f32_2x3.npy", f32)
    # float16 values whose bit patterns the test spells out:
    # 1.0=0x3C00 -2.5=0xC100 0.5=0x3800 65504=0x7BFF 0.0=0x0000 -0.0=0x8000
    save("f16_6.npy", np.array([1.0, -2.5, 0.5, 65504.0, 0.0, -0.0], dtype=np.float16))
    save("i32_3x4.npy", np.arange(-6, 6, dtype=np.int32).reshape(3, 4))
    save("i64_3x2.npy", np.array([[0, -1], [2**40, -2**62], [2**63 - 1, -2**63]], dtype=np.int64))
    save("u1_4x4.npy", np.arange(0, 256, 17, dtype=np.uint8).reshape(4, 4))
    save("u1_2x3x4.npy", np.arange(24, dtype=np.uint8).reshape(2, 3, 4))
    save("bool_5.npy", np.array([True, False, False, True, True]))
    save("scalar_f32.npy", np.array(3.5, dtype=np.float32))
    save("empty_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    save("f32_10.npy", np.arange(10, dtype=np.float32) * np.float32(0.25))

    # The same 2x3 float32 array in the two later format versions.
    save_version("f32_2x3_v2.npy", f32, (2, 0))
    save_version("f32_2x3_v3.npy", f32, (3, 0))

    # Files tgc must refuse.
    save("big_endian_f32.npy", np.array([1.0, 2.0, 3.0], dtype=">f4"))
    save("fortran_f32.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save("complex64.npy", np.array([1 + 2j], dtype=np.complex64))
    with open(os.path.join(OUT, "f32_2x3.npy"), "rb") as f:
        good = f.read()
    # 24 data bytes expected; keep 10 of them.
    with open(os.path.join(OUT, "truncated.npy"), "wb") as f:
        f.write(good[: len(good) - 14])
    with open(os.path.join(OUT, "bad_magic.npy"), "wb") as f:
        f.write(b"\x93NUMPX" + good[6:])


if __name__ == "__main__":
    main()
