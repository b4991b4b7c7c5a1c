#!/usr/bin/env python3
"""Thread scaling on a wider machine (issue 34, item 5: the GPU machine's
16 cores, scripts/gpu-machine-check): tgc on the cpu beside ONNX Runtime
(its Python package, where the machine has it) and PyTorch on the cpu, same
models, same inputs, at each thread count. scaling.py does the same at 1 and
2 threads here, with ORT from npm.

  wide_scaling.py OUTDIR TGC NAME...

For each NAME of export.py (`held-out` stands for its held-out ten): the
model built as the peer benchmarks build it (cuda_peer.py's export to ONNX
and `TGC import`), then per thread count of THREADS (default "1 2 4 8 16",
at most the machine's cores), interleaved, ROUNDS (default 2) times, the
best median of each kept:
  - PyTorch, torch.set_num_threads(T), inference mode: 3 warm-ups, the
    median of N runs;
  - ONNX Runtime, a session with intra_op_num_threads T, inter_op 1,
    sequential, every graph optimization (as ort_bench.js): 3 warm-ups, the
    median of N runs;
  - `TGC run --devices cpu --threads cpu=T`: N + 1 runs, its median.
N is export.py's repeats for the model times REPEAT_SCALE (default 1, at
least 3). Outputs are checked against PyTorch's (the largest difference per
engine). Each model is listed in OUTDIR/models.json, as export.py lists
it, for profile.py. No model is started after DEADLINE_S seconds (default: none), so
that a caller's time limit still leaves the table. Prints a JSON line per
model, then a table per engine pair: ms at each count, the speedup from one
thread, and tgc/ORT (tgc/PyTorch where ORT is missing) with geometric means.
Needs torch and torchvision; onnxruntime is optional.
"""
import json
import math
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


def _load_ort_bench():
    """ort_bench.py (its session options, shared), by its path (this folder
    is off sys.path); None where onnxruntime is missing."""
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("ort_bench", os.path.join(cuda_peer.HERE, "ort_bench.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except ImportError:
        return None


ort_bench = _load_ort_bench()

CORES = os.cpu_count() or 1
THREADS = [t for t in (int(v) for v in os.environ.get("THREADS", "1 2 4 8 16").split()) if t <= CORES]
ROUNDS = int(os.environ.get("ROUNDS", "2"))
REPEAT_SCALE = float(os.environ.get("REPEAT_SCALE", "1"))
DEADLINE_S = float(os.environ.get("DEADLINE_S", "inf"))


def median_ms(fn, n):
    """The median of N timed calls of FN after 3 untimed ones, in ms."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def torch_cpu_ms(m, xs, n, threads):
    torch.set_num_threads(threads)
    with torch.inference_mode():
        return median_ms(lambda: m(*xs), n)


def ort_ms(onnx_path, feeds, n, threads):
    """(ms, output 0) of ONNX Runtime's cpu session at THREADS intra-op threads."""
    sess = ort_bench.session(onnx_path, threads)
    ms = median_ms(lambda: sess.run(None, feeds), n)
    y = sess.run(None, feeds)[0]
    del sess  # its pool's threads go before the next engine runs
    return ms, y


def best(a, b):
    return b if a is None or (b is not None and b < a) else a


def list_model(outdir, name, onnx_path, feeds):
    """OUTDIR/models.json as export.py writes it, with NAME's ONNX file and
    inputs added, so that profile.py (PEERS_DIR=OUTDIR) finds the model."""
    path = os.path.join(outdir, "models.json")
    try:
        with open(path) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        meta = {}
    meta[name] = {"onnx": onnx_path, "inputs": dict(f.split("=", 1) for f in feeds), "output": "output"}
    with open(path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(path + ".tmp", path)


def measure(tgc, name, outdir, log):
    row = {"model": name, "tgc": {}, "ort": {}, "torch": {}, "diff": {}}
    m, xs, n, ref, feeds, onnx_path = cuda_peer.prepare(name, outdir)
    n = max(3, int(round(n * REPEAT_SCALE)))
    yaml = os.path.join(outdir, name + ".yaml")
    p = subprocess.run([tgc, "import", onnx_path, "-o", yaml], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("import: " + (p.stderr or p.stdout).strip()[:300])
    ort_feeds = {f.split("=", 1)[0]: np.load(f.split("=", 1)[1]) for f in feeds}
    list_model(outdir, name, onnx_path, feeds)

    def keep_diff(engine, y):
        if y is not None:
            d = float(np.max(np.abs(np.asarray(y, dtype=np.float64) - ref)))
            row["diff"][engine] = max(row["diff"].get(engine, 0.0), d)

    for _ in range(ROUNDS):
        for t in THREADS:
            key = str(t)
            row["torch"][key] = best(row["torch"].get(key), torch_cpu_ms(m, xs, n, t))
            if ort_bench is not None:
                ms, y = ort_ms(onnx_path, ort_feeds, n, t)
                row["ort"][key] = best(row["ort"].get(key), ms)
                keep_diff("ort", y)
            ms, y, _ = cuda_peer.tgc_ms(tgc, yaml, "cpu", feeds, n, os.path.join(outdir, "%s.t%d" % (name, t)),
                                        log, threads="cpu=%d" % t)
            row["tgc"][key] = best(row["tgc"].get(key), ms)
            keep_diff("tgc", y)
    return row


def fmt(v):
    return "%.2f" % v if v else "-"


def table(rows, peer, label):
    """tgc beside PEER ('ort' or 'torch'): ms, speedups from one thread, tgc/PEER, geometric means."""
    print("\n### tgc beside %s: ms per run (best median of %d rounds), speedup from %d thread(s), tgc/%s; "
          "%d cores\n" % (label, ROUNDS, THREADS[0], label, CORES))
    head = "| model |" + "".join(" tgc %dt | %s %dt |" % (t, label, t) for t in THREADS)
    head += "".join(" tgc %d->%d | %s %d->%d |" % (THREADS[0], t, label, THREADS[0], t) for t in THREADS[1:])
    head += "".join(" tgc/%s %dt |" % (label, t) for t in THREADS) + " max diff tgc | max diff %s |" % label
    print(head)
    print("|---|" + "---:|" * (2 * len(THREADS) + 2 * (len(THREADS) - 1) + len(THREADS) + 2))
    logs = {t: [] for t in THREADS}
    for r in rows:
        tg, pe = r["tgc"], r[peer]
        cells = [fmt(tg.get(str(t))) + " | " + fmt(pe.get(str(t))) for t in THREADS]
        one_tg, one_pe = tg.get(str(THREADS[0])), pe.get(str(THREADS[0]))
        for t in THREADS[1:]:
            cells.append(fmt(one_tg / tg[str(t)] if one_tg and tg.get(str(t)) else None) + " | " +
                         fmt(one_pe / pe[str(t)] if one_pe and pe.get(str(t)) else None))
        for t in THREADS:
            a, b = tg.get(str(t)), pe.get(str(t))
            cells.append(fmt(a / b if a and b else None))
            if a and b:
                logs[t].append(math.log(a / b))
        for engine in ("tgc", peer):
            cells.append("%.1e" % r["diff"][engine] if engine in r["diff"] else "-")
        print("| %s | %s |%s" % (r["model"], " | ".join(cells), (" " + r["error"]) if "error" in r else ""))
    print("\ngeometric mean tgc/%s: %s" % (label, ", ".join(
        "%dt %s (%d models)" % (t, fmt(math.exp(sum(v) / len(v))) if v else "-", len(v)) for t, v in logs.items())))


def main():
    outdir, tgc = os.path.abspath(sys.argv[1]), sys.argv[2]
    names = [n for a in sys.argv[3:] for n in (cuda_peer.peers.HELD_OUT if a == "held-out" else [a])]
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(outdir, "tgc_scaling.log")
    start = time.monotonic()
    rows = []
    for name in names:
        if time.monotonic() - start > DEADLINE_S:
            print("wide_scaling.py: %s not started, past DEADLINE_S=%g s" % (name, DEADLINE_S), flush=True)
            continue
        try:
            row = measure(tgc, name, outdir, log)
        except Exception as e:  # one model's failure is a row, not the end
            row = {"model": name, "tgc": {}, "ort": {}, "torch": {}, "diff": {},
                   "error": "%s: %s" % (type(e).__name__, str(e)[:300])}
        print(json.dumps(row), flush=True)
        rows.append(row)
    if ort_bench is not None:
        print("\nONNX Runtime %s" % ort_bench.ort.__version__)
        table(rows, "ort", "ORT")
    table(rows, "torch", "PyTorch")


if __name__ == "__main__":
    main()
