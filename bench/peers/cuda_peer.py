#!/usr/bin/env python3
"""tgc on an OpenCL GPU beside PyTorch on CUDA, same models, same inputs
(the GPU machine's check: scripts/gpu-machine-check).

  cuda_peer.py OUTDIR TGC NAME...

For each NAME of export.py: build the model (same seed as the cpu peer
benchmark), take PyTorch's cpu output as the reference, export it to ONNX
(opset 17, the TorchScript exporter where this torch still has it), time N
runs of PyTorch on CUDA (after 3 warm-ups, synchronized), then `TGC import`
and `TGC run --devices cpu,gpu0` and `--devices cpu` (N+1 runs, its median),
each output compared with the reference (CUDA_PEER_CPU=0: not the cpu).
Prints one JSON line per model and a markdown table at the end. Needs torch
with CUDA and torchvision.
"""
import json
import os
import re
import subprocess
import sys
import time

# Python puts this script's folder first on sys.path, where the peer
# benchmark's profile.py would hide the standard library's (torch imports it).
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

import numpy as np  # noqa: E402
import torch  # noqa: E402


def _load_export():
    """export.py (MODELS, build), by its path (bench/peers is off sys.path)."""
    import importlib.util
    path = os.path.join(HERE, "export.py")
    spec = importlib.util.spec_from_file_location("peers_export", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


peers = _load_export()

WALL = re.compile(r"wall time per run: ([0-9.]+) ms")


def export_onnx(m, xs, path, in_names):
    kw = dict(opset_version=17, input_names=list(in_names), output_names=["output"],
              do_constant_folding=True)
    try:
        torch.onnx.export(m, xs, path, dynamo=False, **kw)
    except TypeError:  # a torch whose export has no dynamo argument
        torch.onnx.export(m, xs, path, **kw)


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def torch_cuda_ms(m, xs, n):
    m = m.cuda()
    xs = [x.cuda() for x in xs]
    with torch.inference_mode():
        for _ in range(3):
            m(*xs)
        torch.cuda.synchronize()
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            y = m(*xs)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), y.float().cpu().numpy()


def tgc_ms(tgc, yaml, devices, feeds, n, out_dir, log, threads=None):
    """(ms per run, output 0 or None, exit status) of `tgc run` (THREADS: --threads's value, or its default)."""
    cmd = [tgc, "run", yaml, "--devices", devices, "--repeat", str(n + 1), "--output-dir", out_dir]
    if threads:
        cmd += ["--threads", threads]
    for f in feeds:
        cmd += ["--input", f]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    with open(log, "a") as f:
        f.write("$ %s\n%s%s\n" % (" ".join(cmd), p.stdout, p.stderr))
    m = WALL.search(p.stdout + p.stderr)
    out = os.path.join(out_dir, "output.npy")
    y = np.load(out) if p.returncode == 0 and os.path.exists(out) else None
    return (float(m.group(1)) if m else None), y, p.returncode


def prepare(name, outdir):
    """Model NAME of export.py built, its inputs saved as .npy and it
    exported to ONNX under OUTDIR: (model, inputs, runs, PyTorch's cpu
    output, --input NAME=FILE feeds, the .onnx path)."""
    m, xs = peers.build(name)
    in_names, n = peers.MODELS[name][2], peers.MODELS[name][3]
    with torch.no_grad():
        ref = m(*xs).numpy()
    feeds = []
    for k, x in zip(in_names, xs):
        path = os.path.join(outdir, "%s.%s.npy" % (name, k))
        np.save(path, x.numpy())
        feeds.append("%s=%s" % (k, path))
    onnx_path = os.path.join(outdir, name + ".onnx")
    export_onnx(m, xs, onnx_path, in_names)
    return m, xs, n, ref, feeds, onnx_path


def main():
    outdir, tgc, names = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(outdir, "tgc.log")
    rows = []
    for name in names:
        row = {"model": name}
        try:
            m, xs, n, ref, feeds, onnx_path = prepare(name, outdir)
            if torch.cuda.is_available():
                set_tf32(True)
                row["torch_cuda_tf32_ms"], _ = torch_cuda_ms(m, xs, n)
                set_tf32(False)
                row["torch_cuda_ms"], y = torch_cuda_ms(m, xs, n)
                row["torch_cuda_diff"] = float(np.max(np.abs(y - ref)))
            yaml = os.path.join(outdir, name + ".yaml")
            p = subprocess.run([tgc, "import", onnx_path, "-o", yaml], capture_output=True, text=True)
            if p.returncode != 0:
                row["error"] = "import: " + (p.stderr or p.stdout).strip()[:300]
            else:
                runs = (("cpu,gpu0", "tgc_gpu"), ("cpu", "tgc_cpu"))
                if os.environ.get("CUDA_PEER_CPU") == "0":  # the gpu's figures only (batch 32: the cpu is slow)
                    runs = runs[:1]
                for devices, key in runs:
                    ms, y, rc = tgc_ms(tgc, yaml, devices, feeds, n,
                                       os.path.join(outdir, "%s.%s" % (name, key)), log)
                    row[key + "_ms"], row[key + "_rc"] = ms, rc
                    if y is not None:
                        row[key + "_diff"] = float(np.max(np.abs(y - ref)))
        except Exception as e:  # one model's failure is a row, not the end
            row["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        print(json.dumps(row), flush=True)
        rows.append(row)
    print("\n| model | PyTorch CUDA ms (TF32 off) | TF32 on | tgc cpu,gpu0 ms | ratio (TF32 off) | max diff "
          "| tgc cpu ms | max diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        g, t, t32 = r.get("tgc_gpu_ms"), r.get("torch_cuda_ms"), r.get("torch_cuda_tf32_ms")
        ratio = "%.2f" % (g / t) if g and t else "-"
        print("| %s | %s | %s | %s | %s | %s | %s | %s |%s" % (
            r["model"], "%.2f" % t if t else "-", "%.2f" % t32 if t32 else "-",
            "%.2f" % g if g else "rc=%s" % r.get("tgc_gpu_rc"), ratio,
            "%.1e" % r["tgc_gpu_diff"] if "tgc_gpu_diff" in r else "-",
            "%.2f" % r["tgc_cpu_ms"] if r.get("tgc_cpu_ms") else "-",
            "%.1e" % r["tgc_cpu_diff"] if "tgc_cpu_diff" in r else "-",
            (" " + r["error"]) if "error" in r else ""))


if __name__ == "__main__":
    main()
