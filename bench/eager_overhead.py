"""The overhead of one eager op, from C, from Python and from torch: an Add
of two 1-element float32 tensors on the cpu, its result dropped (released).

Each runs in its own process (torch's intra-op threads would otherwise
compete with tgc's on a small machine), and the three take turns for
ROUNDS rounds so that load on the machine falls on all of them alike;
each round times BATCHES batches of OPS ops. Prints the median ns per op
over all batches, and the fastest batch, beside the targets: C at most
1000 ns, Python no slower than torch.

    make build
    /usr/bin/python3 bench/eager_overhead.py [BUILD_DIR]

Needs Debian's python3-numpy and python3-torch (/usr/bin/python3)."""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
ROUNDS, BATCHES, OPS = 5, 15, 10000

PY_TIMER = r"""
import json, sys, time
kind, batches, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if kind == "tgc":
    import numpy as np, tgc
    a, b = tgc.tensor(np.ones(1, np.float32)), tgc.tensor(np.ones(1, np.float32))
else:
    import torch
    torch.set_num_threads(1)
    a, b = torch.ones(1), torch.ones(1)
for _ in range(ops):  # warm: caches, the kernel cache's entry
    a + b
out = []
for _ in range(batches):
    t0 = time.perf_counter_ns()
    for _ in range(ops):
        a + b
    out.append((time.perf_counter_ns() - t0) / ops)
print(json.dumps(out))
"""


def python_batches(kind):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TGC_LIBRARY=os.path.join(BUILD, "libtgc.so.0"))
    out = subprocess.run(["/usr/bin/python3", "-c", PY_TIMER, kind, str(BATCHES), str(OPS)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def c_batches():
    out = subprocess.run([os.path.join(BUILD, "bench", "bench_eager"), str(OPS), str(BATCHES)], check=True,
                         capture_output=True, text=True).stdout
    return [float(x) for x in out.split("batches_ns")[1].split()]


def main():
    runs = {"C": [], "Python (tgc)": [], "Python (torch)": []}
    for _ in range(ROUNDS):
        runs["C"] += c_batches()
        runs["Python (tgc)"] += python_batches("tgc")
        runs["Python (torch)"] += python_batches("torch")
    med = {k: statistics.median(v) for k, v in runs.items()}
    print("one eager Add of two 1-element float32 tensors on the cpu, ns per op "
          "(%d rounds x %d batches x %d ops, processes taking turns)" % (ROUNDS, BATCHES, OPS))
    print("%-16s %10s %10s" % ("", "median", "fastest"))
    for k, v in runs.items():
        print("%-16s %10.0f %10.0f" % (k, med[k], min(v)))
    print("C: %s (target <= 1000 ns); Python: %.2fx torch's median (target <= 1)" % (
        "met" if med["C"] <= 1000 else "NOT met", med["Python (tgc)"] / med["Python (torch)"]))


if __name__ == "__main__":
    main()
