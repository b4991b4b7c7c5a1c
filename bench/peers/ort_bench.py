#!/usr/bin/env python3
"""ort_bench.js through ONNX Runtime's Python package, for a machine with
the package and no node (the GPU machine): the same arguments, environment
(ORT_PROFILE, ORT_ALLOW_SPINNING), session options and JSON line.

  ort_bench.py MODEL.onnx THREADS N OUTPUT.npy NAME=INPUT.npy...

Loads MODEL with the cpu execution provider, intra_op_num_threads THREADS,
inter_op 1, sequential, every graph optimization; feeds each INPUT.npy to
input NAME; runs once to warm up, then N times; writes the first output to
OUTPUT.npy and prints one JSON line: median and min ms, CPU ms per run
(the process's user + system over the N runs, over N), peak RSS in MiB,
the session's creation and first run in ms. ORT_PROFILE=PREFIX writes ORT's
own profile to PREFIX_DATE.json (profile.py reads it).
"""
import json
import os
import resource
import sys
import time

import numpy as np
import onnxruntime as ort


def session(model, threads, spinning=None, profile_prefix=None):
    """MODEL's cpu session as the peer benchmarks make ORT's: THREADS
    intra-op threads, inter-op 1, sequential, every graph optimization;
    SPINNING ("0"/"1") the intra-op pool's spin-wait where given, and ORT's
    profile to PROFILE_PREFIX_DATE.json where given."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if spinning is not None:
        so.add_session_config_entry("session.intra_op.allow_spinning", spinning)
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def main():
    if len(sys.argv) < 6:
        sys.exit("usage: ort_bench.py MODEL.onnx THREADS N OUTPUT.npy NAME=INPUT.npy...")
    model, threads, n, out_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    spinning, prefix = os.environ.get("ORT_ALLOW_SPINNING"), os.environ.get("ORT_PROFILE")
    t = time.perf_counter()
    sess = session(model, threads, spinning, prefix)
    feeds = {a.split("=", 1)[0]: np.load(a.split("=", 1)[1]) for a in sys.argv[5:]}
    create_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    out = sess.run(None, feeds)
    first_ms = (time.perf_counter() - t) * 1e3
    times = []
    cpu0 = os.times()
    for _ in range(n):
        t = time.perf_counter()
        out = sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    cpu1 = os.times()
    if prefix:
        sess.end_profiling()
    np.save(out_path, out[0])
    cpu = (cpu1.user - cpu0.user + cpu1.system - cpu0.system) * 1e3
    print(json.dumps({"model": model, "median_ms": float(np.median(times)) if n else None,
                      "min_ms": min(times) if n else None, "cpu_ms": cpu / n if n else None, "runs": n,
                      "threads": threads, "create_ms": create_ms, "first_run_ms": first_ms,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "ort_version": ort.__version__, "allow_spinning": spinning or "default"}))


if __name__ == "__main__":
    main()
