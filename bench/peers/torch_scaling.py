#!/usr/bin/env python3
"""Thread scaling on a machine without ONNX Runtime (issue 34, item 5: the
GPU machine's 16 cores, scripts/gpu-machine-check): tgc on the cpu beside
PyTorch on the cpu, same models, same inputs, at each thread count.

  torch_scaling.py OUTDIR TGC NAME...

For each NAME of export.py: the model built as the peer benchmarks build it
(cuda_peer.py's export to ONNX and `TGC import`), then per thread count of
THREADS (default "1 2 4 8 16", at most the machine's cores): PyTorch with
torch.set_num_threads(T) (inference mode, 3 warm-ups, the median of N
runs) and `TGC run --devices cpu --threads cpu=T` (N + 1 runs, its median),
interleaved, ROUNDS (default 2) times, the best median of each kept; tgc's
output checked against PyTorch's. Prints a JSON line per model and a
table: ms at each count, the speedup from one thread and tgc/PyTorch.
Needs torch and torchvision (scaling.py does the same beside ONNX Runtime).
"""
import json
import os
import subprocess
import sys
import time

# PyTorch's OpenMP threads would otherwise spin after each run, on the cores
# tgc's process then runs on (as run.sh: PyTorch 2 threads 2.1 ms a run of
# the transformer against 1.5 at 1, tgc's no faster at 2 than at 1).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import cuda_peer  # noqa: E402 (takes this folder off sys.path for torch's sake, then loads export.py)

import numpy as np  # noqa: E402
import torch  # noqa: E402

CORES = os.cpu_count() or 1
THREADS = [t for t in (int(v) for v in os.environ.get("THREADS", "1 2 4 8 16").split()) if t <= CORES]
ROUNDS = int(os.environ.get("ROUNDS", "2"))


def torch_cpu_ms(m, xs, n, threads):
    torch.set_num_threads(threads)
    with torch.inference_mode():
        for _ in range(3):
            m(*xs)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            m(*xs)
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def best(a, b):
    return b if a is None or (b is not None and b < a) else a


def main():
    outdir, tgc, names = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(outdir, "tgc_scaling.log")
    rows = []
    for name in names:
        row = {"model": name, "tgc": {}, "torch": {}}
        try:
            m, xs, n, ref, feeds, onnx_path = cuda_peer.prepare(name, outdir)
            yaml = os.path.join(outdir, name + ".yaml")
            p = subprocess.run([tgc, "import", onnx_path, "-o", yaml], capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("import: " + (p.stderr or p.stdout).strip()[:300])
            for _ in range(ROUNDS):
                for t in THREADS:
                    key = str(t)
                    row["torch"][key] = best(row["torch"].get(key), torch_cpu_ms(m, xs, n, t))
                    ms, y, _ = cuda_peer.tgc_ms(tgc, yaml, "cpu", feeds, n, os.path.join(outdir, "%s.t%d" % (name, t)),
                                                log, threads="cpu=%d" % t)
                    row["tgc"][key] = best(row["tgc"].get(key), ms)
                    if y is not None:
                        row["diff"] = max(row.get("diff", 0.0), float(np.max(np.abs(y - ref))))
        except Exception as e:  # one model's failure is a row, not the end
            row["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        print(json.dumps(row), flush=True)
        rows.append(row)
    head = "| model |" + "".join(" tgc %dt | PyTorch %dt |" % (t, t) for t in THREADS)
    head += "".join(" tgc 1->%d | PyTorch 1->%d |" % (t, t) for t in THREADS[1:])
    head += "".join(" ratio %dt |" % t for t in THREADS) + " max diff |"
    print("\nms per run (best median of %d rounds), speedups from one thread, ratio = tgc/PyTorch; %d cores\n"
          % (ROUNDS, CORES))
    print(head)
    print("|---|" + "---:|" * (2 * len(THREADS) + 2 * (len(THREADS) - 1) + len(THREADS) + 1))
    fmt = lambda v: "%.2f" % v if v else "-"  # noqa: E731
    for r in rows:
        tg, pt = r["tgc"], r["torch"]
        cells = [fmt(tg.get(str(t))) + " | " + fmt(pt.get(str(t))) for t in THREADS]
        one_tg, one_pt = tg.get(str(THREADS[0])), pt.get(str(THREADS[0]))
        for t in THREADS[1:]:
            cells.append(fmt(one_tg / tg[str(t)] if one_tg and tg.get(str(t)) else None) + " | " +
                         fmt(one_pt / pt[str(t)] if one_pt and pt.get(str(t)) else None))
        for t in THREADS:
            cells.append(fmt(tg[str(t)] / pt[str(t)] if tg.get(str(t)) and pt.get(str(t)) else None))
        cells.append("%.1e" % r["diff"] if "diff" in r else "-")
        print("| %s | %s |%s" % (r["model"], " | ".join(cells), (" " + r["error"]) if "error" in r else ""))


if __name__ == "__main__":
    main()
