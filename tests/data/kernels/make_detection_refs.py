"""Reference values for tests/devices/test_detection.c: each case runs ONNX's
reference implementation (onnx/reference/ops/op_grid_sample.py,
op_roi_align.py, op_non_max_suppression.py of github.com/onnx/onnx, a
checkout's path in ONNX_REPO) and prints inputs and expected outputs as C
constants. The files are loaded with their onnx imports stubbed, so an onnx
without onnx.reference will do.
Run: ONNX_REPO=/path/to/onnx /usr/bin/python3 tests/data/kernels/make_detection_refs.py"""
import os

import numpy as np


def load(name, extra=None):
    src = open(os.path.join(os.environ["ONNX_REPO"], f"onnx/reference/ops/{name}.py")).read()
    src = src.replace("from onnx.reference.op_run import OpRun", "OpRun = object")
    src = src.replace("from onnx.reference.ops.op_resize import _get_all_coords", "")
    env = dict(extra or {})
    exec(compile(src, name + ".py", "exec"), env)
    return env


def _get_all_coords(data):
    return np.array(list(np.ndindex(*data.shape)), dtype=np.int64).reshape(-1, data.ndim)


gs = load("op_grid_sample", {"_get_all_coords": _get_all_coords})["GridSample"]()
ra = load("op_roi_align")["RoiAlign"]()
ra.sampling_ratio = 0  # what _run falls back to for a falsy sampling_ratio
nms = load("op_non_max_suppression")["NonMaxSuppression"]()


def grid_sample(x, grid, mode, padding_mode, align_corners):
    gs.mode, gs.padding_mode, gs.align_corners = mode, padding_mode, align_corners  # the defaults it falls back to
    return gs._run(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


def c_list(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return "{" + ", ".join(repr(float(v)) + "f" for v in a.flatten()) + "}"
    return "{" + ", ".join(str(int(v)) for v in a.flatten()) + "}"


def show(name, **arrays):
    print(f"/* {name} */")
    for k, v in arrays.items():
        v = np.asarray(v)
        print(f"/*   {k} {list(v.shape)} */ {c_list(v)}")


rng = np.random.default_rng(7)
x = (np.arange(24, dtype=np.float32) * 0.37) ** 1.3
x5 = x.reshape(1, 1, 2, 3, 4)
grid5 = rng.uniform(-1.3, 1.3, (1, 2, 2, 2, 3)).astype(np.float32)
show("gridsample_3d_linear_zeros", X=x5, grid=grid5,
     Y=grid_sample(x5, grid5, mode="linear", padding_mode="zeros", align_corners=0)[0])
x4 = x.reshape(1, 2, 3, 4)
grid4 = np.array([[[[-1.7, 0.2], [3.2, -2.9], [0.5, 0.5]], [[1.0, -1.0], [-0.26, 0.74], [2.5, 1.5]]]], np.float32)
show("gridsample_nearest_reflection_align", X=x4, grid=grid4,
     Y=grid_sample(x4, grid4, mode="nearest", padding_mode="reflection", align_corners=1)[0])
show("gridsample_cubic_border", X=x4, grid=grid4,
     Y=grid_sample(x4, grid4, mode="cubic", padding_mode="border", align_corners=0)[0])
show("gridsample_cubic_reflection", X=x4, grid=grid4,
     Y=grid_sample(x4, grid4, mode="cubic", padding_mode="reflection", align_corners=0)[0])
xu = (np.arange(12) * 23 % 256).astype(np.uint8).reshape(1, 1, 3, 4)
yu = grid_sample(xu.astype(np.float64), grid4[:, 1:], mode="linear", padding_mode="zeros", align_corners=0)[0]
show("gridsample_uint8_linear (rounded half to even)", X=xu, grid=grid4[:, 1:], Y=np.round(yu).clip(0, 255))

xr = ((np.arange(2 * 2 * 5 * 6, dtype=np.float32) * 0.61) % 7).reshape(2, 2, 5, 6)
rois = np.array([[0.5, 1.0, 9.0, 7.5], [2.0, 0.0, 5.0, 3.0], [4.0, 4.0, 3.0, 2.0]], np.float32)
bi = np.array([1, 0, 1], np.int64)
show("roialign_max_output_half_pixel", X=xr, rois=rois, batch_indices=bi,
     Y=ra._run(xr, rois, bi, "output_half_pixel", "max", 3, 2, 2, 0.5)[0])
show("roialign_avg_adaptive", X=xr, rois=rois, batch_indices=bi,
     Y=ra._run(xr, rois, bi, "half_pixel", "avg", 2, 3, 0, 0.7)[0])

boxes = np.array([[[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0], [0.5, 0.4, 1.0, 1.0], [0.5, 10.5, 1.0, 1.0],
                   [0.5, 10.6, 1.0, 1.0], [0.5, 100.5, 1.0, 1.0]]], np.float32)
scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3], [0.1, 0.8, 0.85, 0.2, 0.7, 0.65]]], np.float32)
show("nms_center_two_classes_threshold", boxes=boxes, scores=scores,
     Y=nms._run(boxes, scores, np.array([2], np.int64), np.array([0.5], np.float32),
                np.array([0.55], np.float32), center_point_box=1)[0])
