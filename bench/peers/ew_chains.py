#!/usr/bin/python3
"""Elementwise chains, tgc beside ONNX Runtime (issue 20). Run through
bench/peers/ew_chains.sh, which installs what is missing.

    ew_chains.py [--quick] [--ops LIST] [--sizes LIST] [--threads LIST] [--repeat N]

For every float32 row of graph/elementwise.def (the list and each op's
input ranges come from `bench_elementwise --list`, so both runtimes run the
same chains on the same ranges): writes two ONNX models (opset 17; Mish 18)
over a symbolic length N, a chain of 8 identical ops and a chain of 1
(binary ops: y_{k+1} = Op(y_k, c), c a second input of x's shape;
comparisons: 8 independent Op(x, s_k), s_k 8 different scalar
initializers, all outputs fetched), then per op, alternating in one run:
    tgc   build/bench/bench_elementwise --ops OP --dtypes float32 --csv
          (the same graphs built through tgc's C API, in process)
    ORT   node ort_ew.js (onnxruntime-node, CPU EP, intraOpNumThreads T,
          sequential; allow_spinning 1 and 0, the faster kept)
at each size and thread count. Per-op time, both runtimes alike:
    (median chain of 8 - median chain of 1) / 7
which removes every fixed cost of a run (copying feeds in and outputs out
of node for ORT, the output's copy into a host tensor for tgc,
scheduling); it is divided by the elements for ns/elem. Prints the table,
the ops where tgc is slower than ORT, and those over 1.5x tgc's own Relu
at the largest size; everything raw goes to OUT/results.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "bench", "peers")
QUICK_OPS = ["Relu", "Abs", "Add", "Mul", "Sigmoid", "Tanh", "Exp", "Erf", "Less"]


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def parse_list(bench, ops):
    """bench_elementwise --list: op dtype kind xlo xhi xsign clo chi csign [s...]"""
    cmd = [bench, "--list", "--dtypes", "float32"] + (["--ops", ",".join(ops)] if ops else [])
    rows = []
    for line in subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        rows.append({"op": f[0], "kind": f[2], "x": [float(f[3]), float(f[4]), int(f[5])],
                     "c": [float(f[6]), float(f[7]), int(f[8])], "s": [float(v) for v in f[9:]]})
    return rows


def make_model(row, length, path):
    op, kind = row["op"], row["kind"]
    F = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", F, ["N"])]
    inits, nodes, outputs = [], [], []
    if kind == "binary":
        inputs.append(helper.make_tensor_value_info("c", F, ["N"]))
    if kind in ("clip", "compare"):
        for i, v in enumerate(row["s"][: 2 if kind == "clip" else length]):
            inits.append(helper.make_tensor("s%d" % i, F, [], [v]))
    prev = "x"
    for i in range(length):
        if kind == "compare":
            out = "z%d" % i
            nodes.append(helper.make_node(op, ["x", "s%d" % i], [out], name=out))
            outputs.append(helper.make_tensor_value_info(out, TensorProto.BOOL, ["N"]))
            continue
        out = "y%d" % (i + 1)
        ins = {"unary": [prev], "clip": [prev, "s0", "s1"], "binary": [prev, "c"]}[kind]
        nodes.append(helper.make_node(op, ins, [out], name=out))
        prev = out
    if kind != "compare":
        outputs.append(helper.make_tensor_value_info(prev, F, ["N"]))
    graph = helper.make_graph(nodes, "ew_%s_%d" % (op, length), inputs, outputs, inits)
    opset = 18 if op == "Mish" else 17
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if opset <= 17:  # this onnx (Debian 1.12) knows opset 17, not Mish-18
        onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a few ops at 2^20 only")
    ap.add_argument("--ops")
    ap.add_argument("--sizes", default=None, help="default 16,20,24 (exponents of 2, or counts)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "peers", "ew"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "bench_elementwise"))
    a = ap.parse_args()
    sizes = [int(s) for s in (a.sizes or ("20" if a.quick else "16,20,24")).split(",")]
    sizes = [1 << s if s <= 40 else s for s in sizes]
    threads = [int(t) for t in a.threads.split(",")]
    ops = a.ops.split(",") if a.ops else (QUICK_OPS if a.quick else None)
    os.makedirs(os.path.join(a.out, "models"), exist_ok=True)
    rows = parse_list(a.bench, ops)
    if not rows:
        sys.exit("ew_chains: no float32 op selected")

    started = time.strftime("%Y-%m-%d %H:%M:%S")
    load_start = load()
    results = []  # one dict per (op, n, threads)
    for row in rows:
        op = row["op"]
        m8 = os.path.join(a.out, "models", "%s_8.onnx" % op)
        m1 = os.path.join(a.out, "models", "%s_1.onnx" % op)
        make_model(row, 8, m8)
        make_model(row, 1, m1)
        print("[%s] tgc, then onnxruntime (load %s)" % (op, load()), file=sys.stderr, flush=True)
        # tgc
        cmd = [a.bench, "--ops", op, "--dtypes", "float32", "--sizes", ",".join(map(str, sizes)),
               "--threads", ",".join(map(str, threads)), "--repeat", str(a.repeat), "--csv", "--no-ref"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        tgc = {}
        for line in p.stdout.splitlines():
            if line.startswith("#") or line.startswith("op,"):
                continue
            f = line.split(",")
            if f[0] != op:
                continue
            key = (int(f[2]), int(f[3]))
            if f[-1] == "FAILED":
                tgc[key] = {"failed": True}
                continue
            tgc[key] = {"ns": float(f[4]), "memcpy": float(f[5]), "chain8_ms": float(f[7]),
                        "chain1_ms": float(f[8]), "reps": int(f[9]), "bitwise": f[10]}
        if p.returncode != 0:
            print("ew_chains: bench_elementwise %s: exit %d\n%s" % (op, p.returncode, p.stderr), file=sys.stderr)
        # ORT
        spec = {"op": op, "model8": m8, "model1": m1, "kind": row["kind"], "x": row["x"], "c": row["c"],
                "sizes": sizes, "threads": threads, "spins": ["1", "0"], "repeat": a.repeat, "budget_s": 1.0}
        spec_path = os.path.join(a.out, "%s.spec.json" % op)
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        p = subprocess.run(["node", os.path.join(HERE, "ort_ew.js"), spec_path], capture_output=True, text=True)
        ort = {}
        version = None
        for line in p.stdout.splitlines():
            r = json.loads(line)
            version = r.get("ort_version") or version
            ns = (r["chain8_ms"] - r["chain1_ms"]) / 7 / r["n"] * 1e6
            key = (r["n"], r["threads"])
            r["ns"] = ns
            ort.setdefault(key, {})[r["spin"]] = r
        if p.returncode != 0:
            print("ew_chains: ort_ew.js %s: exit %d\n%s" % (op, p.returncode, p.stderr.strip()[-2000:]),
                  file=sys.stderr)
        for n in sizes:
            for t in threads:
                res = {"op": op, "n": n, "threads": t, "tgc": tgc.get((n, t)), "ort": ort.get((n, t), {})}
                spins = res["ort"]
                res["ort_best"] = min(spins, key=lambda s: spins[s]["ns"]) if spins else None
                results.append(res)
                # as it goes (stderr), so an interrupted run still shows what it measured
                o = spins.get(res["ort_best"]) if spins else None
                tg = res["tgc"]
                print("  %-16s %9d %dt  tgc %s  ORT %s" % (
                    op, n, t, "FAILED" if not tg or tg.get("failed") else "%.3f" % tg["ns"],
                    "n/a" if not o else "%.3f (spin %s)" % (o["ns"], res["ort_best"])), file=sys.stderr, flush=True)
    load_end = load()

    # Relu of tgc at each (n, threads), for the ratio column
    relu = {(r["n"], r["threads"]): r["tgc"]["ns"] for r in results
            if r["op"] == "Relu" and r["tgc"] and not r["tgc"].get("failed")}
    lines = []
    lines.append("ew_chains %s .. %s, load average %s at the start, %s at the end; ONNX Runtime %s (npm), "
                 "tgc ISA %s" % (started, time.strftime("%H:%M:%S"), load_start, load_end, version,
                                 isa(a.bench)))
    lines.append("ns/elem per op = (median chain of 8 - median chain of 1) / 7 / elements, the same for both "
                 "(tgc: bench_elementwise in process; ORT: ort_ew.js, the faster of allow_spinning 1/0: spin)")
    hdr = "%-16s %9s %3s %10s %10s %5s %8s %10s %7s" % ("op", "elements", "thr", "tgc ns/el", "ORT ns/el",
                                                         "spin", "tgc/ORT", "memcpy", "xRelu")
    lines.append("repeats: up to %d per chain (fewer, not below 3, past 0.5 s tgc / 1 s ORT per case); "
                 "tgc/ORT 'noise': ORT's per-op figure came out <= 0 (its fixed cost's spread exceeds 7 ops)"
                 % a.repeat)
    lines.append(hdr)
    slower, over_relu, mism = [], [], []
    for r in results:
        t = r["tgc"]
        o = r["ort"].get(r["ort_best"]) if r["ort_best"] else None
        tn = "FAILED" if not t or t.get("failed") else "%.3f" % t["ns"]
        on = "n/a" if not o else "%.3f" % o["ns"]
        ratio = rel = "-"
        if t and not t.get("failed") and o:
            ratio = "%.2f" % (t["ns"] / o["ns"]) if o["ns"] > 0 else "noise"  # ORT's chain of 8 not above its chain of 1
            if o["ns"] > 0 and t["ns"] > o["ns"]:
                slower.append("%s@%d/%dt (%s)" % (r["op"], r["n"], r["threads"], ratio))
        rr = relu.get((r["n"], r["threads"]))
        if t and not t.get("failed") and rr:
            rel = "%.2f" % (t["ns"] / rr)
            if r["n"] == max(sizes) and t["ns"] > 1.5 * rr:
                over_relu.append("%s@%dt (%s)" % (r["op"], r["threads"], rel))
        if t and t.get("bitwise") == "MISMATCH":
            mism.append("%s@%d" % (r["op"], r["n"]))
        mc = "%.3f" % t["memcpy"] if t and not t.get("failed") else "-"
        lines.append("%-16s %9d %3d %10s %10s %5s %8s %10s %7s" % (r["op"], r["n"], r["threads"], tn, on,
                                                                  r["ort_best"] or "-", ratio, mc, rel))
    lines.append("tgc slower than ORT (%d): %s" % (len(slower), ", ".join(slower) or "none"))
    lines.append("tgc over 1.5x its Relu at %d elements (%d): %s" % (max(sizes), len(over_relu),
                                                                      ", ".join(over_relu) or "none"))
    if mism:
        lines.append("MISMATCH between thread counts: " + ", ".join(mism))
    print("\n".join(lines))
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"started": started, "load_start": load_start, "load_end": load_end, "ort_version": version,
                   "results": [dict(r, ort={k: v for k, v in r["ort"].items()}) for r in results]}, f, indent=1)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 1 if mism else 0


def isa(bench):
    p = subprocess.run([bench, "--ops", "Relu", "--sizes", "10", "--threads", "1", "--dtypes", "float32",
                        "--repeat", "1"], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("# ISA:"):
            return line[len("# ISA: "):]
    return "?"


if __name__ == "__main__":
    sys.exit(main())
