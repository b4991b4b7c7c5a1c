"""Reference values for tests/devices/test_resize.c: each case runs ONNX's
reference implementation of Resize-19 (onnx/reference/ops/op_resize.py of
github.com/onnx/onnx, a checkout's path in ONNX_REPO) and prints the input,
the attributes and the expected output as C constants. The installed onnx
may predate onnx.reference, so the file is loaded with its two imports
stubbed (OpRun; numpy_helper.saturate_cast, restated from numpy_helper.py).
Run: ONNX_REPO=/path/to/onnx /usr/bin/python3 tests/data/kernels/make_resize_refs.py"""
import os
import sys
import types

import numpy as np

src = open(os.path.join(os.environ["ONNX_REPO"], "onnx/reference/ops/op_resize.py")).read()
src = src.replace("from onnx.reference.op_run import OpRun", "OpRun = object").replace("import onnx\n", "")


def saturate_cast(x, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = np.round(x)
    else:
        info = np.finfo(dtype)
    return np.clip(x, info.min, info.max).astype(dtype)


ref = {"onnx": types.SimpleNamespace(numpy_helper=types.SimpleNamespace(saturate_cast=saturate_cast))}
exec(compile(src, "op_resize.py", "exec"), ref)


def run(x, roi=None, scales=None, sizes=None, axes=None, mode="nearest", coordinate_transformation_mode="half_pixel",
        nearest_mode="round_prefer_floor", cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0,
        antialias=0, keep_aspect_ratio_policy="stretch"):
    return ref["Resize"]._run(None, x, roi, scales, sizes, antialias=antialias, axes=axes,
                              coordinate_transformation_mode=coordinate_transformation_mode,
                              cubic_coeff_a=cubic_coeff_a, exclude_outside=exclude_outside,
                              extrapolation_value=extrapolation_value,
                              keep_aspect_ratio_policy=keep_aspect_ratio_policy, mode=mode,
                              nearest_mode=nearest_mode)[0]


def show(name, x, y, **kw):
    print(f"/* {name}: {kw} */")
    print(f"/*   X {list(x.shape)} = {x.flatten().tolist()} */")
    print(f"/*   Y {list(y.shape)} = */ {{{', '.join(repr(float(v)) if y.dtype.kind == 'f' else str(int(v)) for v in y.flatten())}}}")


x44 = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) ** 1.5
cases = [
    ("antialias_linear", x44, dict(scales=np.array([1, 1, 0.6, 0.6], np.float32), mode="linear", antialias=1)),
    ("antialias_cubic", x44, dict(sizes=np.array([1, 1, 3, 2], np.int64), mode="cubic", antialias=1)),
    ("not_larger_nearest", x44[:, :, :2, :], dict(sizes=np.array([7, 8], np.int64), axes=[2, 3], mode="nearest",
                                                 keep_aspect_ratio_policy="not_larger")),
    ("not_smaller_linear", x44[:, :, :2, :], dict(sizes=np.array([3, 3], np.int64), axes=[2, 3], mode="linear",
                                                  keep_aspect_ratio_policy="not_smaller")),
    ("symmetric_linear", x44[0, 0], dict(scales=np.array([1.7, 0.7], np.float32), mode="linear",
                                         coordinate_transformation_mode="half_pixel_symmetric")),
    ("uint8_linear", np.array([[0, 255, 100], [3, 77, 250]], np.uint8),
     dict(scales=np.array([1.5, 1.7], np.float32), mode="linear")),
    ("crop_axes", x44[0], dict(roi=np.array([0.1, 1.2], np.float32), sizes=np.array([5], np.int64), axes=[2],
                               mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                               extrapolation_value=-7.0)),
    ("cubic_exclude", x44[0].transpose(1, 0, 2).copy(), dict(scales=np.array([1.5, 0.75], np.float32), axes=[0, 2],
                                                             mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)),
    ("nearest_ceil_pytorch", x44[0, 0, :1, :], dict(sizes=np.array([1, 7], np.int64), mode="nearest",
                                                    nearest_mode="ceil",
                                                    coordinate_transformation_mode="pytorch_half_pixel")),
]
for name, x, kw in cases:
    y = run(x, **kw)
    show(name, x, y, **{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in kw.items()})
