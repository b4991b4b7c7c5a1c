#!/usr/bin/python3
"""Where tgc's time goes on a peer-benchmark model, op by op, beside ONNX Runtime.

  profile.py [--threads T] [--optimize O] [--repeat N] [--top K] [--no-ort] MODEL...

For each MODEL of run.sh (exported and imported into PEERS_DIR, default
build/peers, by a run of run.sh), runs

  tgc run MODEL.yaml --devices cpu --threads cpu=T --optimize O --repeat N+1 --trace FILE.json
  node ort_bench.js MODEL.onnx T N ...      with ORT_PROFILE (ORT's own profiler)

and prints, in Markdown, the model's time per run split by kind of node:
the op with what decides its kernel (a convolution's kernel size, depthwise
or grouped, stride, dilation; a matrix product's right operand: weights, as
MatMul or Gemm, or activations; a fused elementwise group's ops), the node count, tgc's ms per run and share,
the GFLOP/s of the convolutions, matrix products and attention (nominal:
every multiply-add of the op's definition, taps over padding included), and
ORT's ms for the same kind; then tgc's slowest nodes. tgc's node times come from
the trace (one event per node and run) and ORT's from its profile (one per
kernel and run); each node's time is its median over the runs after the
first (the first, cold run is dropped), and a kind's time is the sum of
its nodes'. The kinds are found from the tensors' shapes alone (both
runtimes record them; a convolution's dilation, which they do not show,
from tgc's attributes, for ORT from tgc's node of the same name), so ORT's
fused and relaid-out nodes (FusedConv, NCHWc Conv) land in the same rows as tgc's; what either runtime fused into
a node (an activation, ORT's Add into a Conv) is counted in that node.
tgc's node input shapes come from `tgc compile --dump optimized`. A line
gives the speedup the kernels' pieces (the trace's `pieces`, cut from the
sizes alone) allow at 2 to 16 threads over the node times measured.
With ORT, both also run once untraced and unprofiled, and a line gives
those walls and how much each tool's node sum exceeds its own: ORT's
profiler slows its nodes more than tgc's trace slows tgc's (SqueezeNet at
1 thread: 1.33x against 1.09x), so the per-kind tgc/ORT column leans
toward tgc by about their quotient.

OpenBLAS runs its own choice of kernels, as in run.sh (KEEP_OPENBLAS_ENV=1
keeps the environment's OPENBLAS_CORETYPE). Everything is written under
PEERS_DIR/profile/. Needs /usr/bin/python3 with
numpy and yaml (Debian's python3-yaml), node with onnxruntime-node (run.sh
installs it) or, where node is missing, ONNX Runtime's Python package
(ort_bench.py).
"""
import argparse
import collections
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PEERS_DIR = os.environ.get("PEERS_DIR", os.path.join(ROOT, "build", "peers"))
# OpenBLAS's own kernels, as run.sh runs the peers (see there)
if os.environ.get("KEEP_OPENBLAS_ENV") != "1":
    for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(v, None)
TGC = os.environ.get("TGC", os.path.join(ROOT, "build", "tgc"))


def ort_command():
    """How ORT is run: node with onnxruntime-node (ort_bench.js), or, on a
    machine without node (the GPU machine), ORT's Python package through
    ort_bench.py, which takes the same arguments and prints the same line."""
    if shutil.which("node") and os.path.isdir(os.path.join(PEERS_DIR, "node", "node_modules")):
        return ["node", os.path.join(HERE, "ort_bench.js")]
    return [sys.executable, os.path.join(HERE, "ort_bench.py")]

# Ops whose kernel is a convolution, a matrix product or attention, by their
# names in tgc's graph and in ORT's profile (its fused ops included).
CONV = {"Conv", "_ConvAdd", "_FusedConv", "FusedConv"}  # _ConvAdd: Conv with its residual Add
MATMUL = {"MatMul", "FusedMatMul", "_FusedMatMul"}
GEMM = {"Gemm", "FusedGemm", "_FusedGemm"}
ATTENTION = {"_Attention"}
# ORT's names for the same ops (its NCHWc layout runs Resize as Upsample)
ORT_ALIASES = {"Upsample": "Resize"}


def kind_and_flops(op, ins, out, attrs):
    """(kind, FLOPs) of one node from its op, input shapes INS (lists, None
    where unknown), output shape OUT and attributes ATTRS (tgc's; {} for ORT).
    FLOPs are counted for convolutions, matrix products and attention only
    (a multiply-add is 2), else 0."""
    x = ins[0] if ins else None
    w = ins[1] if len(ins) > 1 else None
    if op == "_ConvNHWC" and x and out and len(x) == 4 and len(out) == 4:  # channels last: read as NCHW
        op, x, out = "Conv", [x[0], x[3], x[1], x[2]], [out[0], out[3], out[1], out[2]]
    if op in CONV and x and w and out and len(w) == 4 and len(x) == 4:
        groups = max(1, x[1] // w[1])
        stride = max(1, round(x[2] / out[2])) if out[2] else 1
        k = "Conv %dx%d" % (w[2], w[3])
        if w[1] == 1 and groups > 1:
            k += " depthwise"
        elif groups > 1:
            k += " groups=%d" % groups
        if stride > 1:
            k += " stride %d" % stride
        if max(attrs.get("dilations") or [1]) > 1:
            k += " dilation %d" % max(attrs["dilations"])
        return k, 2.0 * np.prod(out) * w[1] * w[2] * w[3]
    if op in CONV:
        return "Conv", 0.0
    # A product with a 2-D right operand (a layer's weights) is one kind
    # whether it is a MatMul or a Gemm (ORT makes MatMul + Add a Gemm where
    # tgc keeps the MatMul and fuses the Add elsewhere)
    if op in MATMUL and x and w and out:
        if len(w) == 2:
            return "MatMul/Gemm x weights", 2.0 * np.prod(out) * x[-1]
        return "MatMul x activations", 2.0 * np.prod(out) * x[-1]
    if op in GEMM and x and out:
        return "MatMul/Gemm x weights", 2.0 * np.prod(out) * (np.prod(x) / out[0])
    if op in ATTENTION and len(ins) >= 2 and ins[1] and out:
        keys = ins[1][-1] if attrs.get("k_transposed") else ins[1][-2]
        return op, 4.0 * np.prod(out) * keys
    if op == "_FusedElementwise":
        return "_FusedElementwise [%s]" % "+".join(attrs.get("ops", [])), 0.0
    return op, 0.0


def shape_of(s):
    """An ORT profile's shape entry ({"float": [1, 3, 224, 224]}) as a list."""
    return next(iter(s.values())) if isinstance(s, dict) and s else None


def medians_after_first(events):
    """name -> median duration (us) over each name's events but its first."""
    by = collections.defaultdict(list)
    for ts, name, dur in sorted(events):
        by[name].append(dur)
    return {n: float(np.median(d[1:] if len(d) > 1 else d)) for n, d in by.items()}


def tgc_profile(m, threads, optimize, repeat, prof, conv_kinds):
    """tgc's nodes: {name: (kind, flops, out shape, median us)} and its wall ms
    per run; adds each convolution's kind to CONV_KINDS[signature]."""
    yml = os.path.join(PEERS_DIR, m + ".yaml")
    opt = os.path.join(prof, "%s.O%d.yaml" % (m, optimize))
    subprocess.run([TGC, "compile", yml, "--dump", "optimized", "--optimize", str(optimize), "-o", opt],
                   check=True, capture_output=True)
    with open(opt) as f:
        g = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    shapes = {t["name"]: t.get("shape") for t in g.get("inputs", []) + g.get("initializers", [])}
    for n in g["nodes"]:
        for k, o in enumerate(n.get("out") or []):
            shapes["%s:%d" % (n["name"], k)] = o.get("shape")
            if k == 0:
                shapes[n["name"]] = o.get("shape")
    meta = json.load(open(os.path.join(PEERS_DIR, "models.json")))[m]
    trace = os.path.join(prof, "%s.t%d.O%d.trace.json" % (m, threads, optimize))
    cmd = [TGC, "run", yml, "--devices", "cpu", "--threads", "cpu=%d" % threads, "--optimize", str(optimize),
           "--repeat", str(repeat + 1), "--trace", trace]
    for name, path in meta["inputs"].items():
        cmd += ["--input", "%s=%s" % (name, path)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("`%s` failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-2000:]))
    wall = float(re.search(r"wall time per run: ([0-9.]+) ms", p.stdout).group(1))
    ev = json.load(open(trace))["traceEvents"]
    med = medians_after_first([(e["ts"], e["name"], e["dur"]) for e in ev
                               if e.get("ph") == "X" and e.get("cat") not in ("input", "const")])
    # pieces a split: the node's pieces over its tgc_parallel_for calls
    split = {e["name"]: e["args"].get("pieces", 1) / e["args"].get("splits", 1)
             for e in ev if e.get("ph") == "X" and "args" in e}
    nodes, pieces = {}, {}
    for n in g["nodes"]:
        # the trace names a node as the model does (its source_name) where the optimizer renamed it
        label = n.get("source_name", n["name"])
        if label not in med:
            continue
        pieces[n["name"]] = split.get(label, 1)
        ins = [shapes.get(i) for i in n.get("inputs", []) if i and not i.startswith("^")]
        out = (n.get("out") or [{}])[0].get("shape")
        kind, flops = kind_and_flops(n["op"], ins, out, n.get("attrs") or {})
        nodes[n["name"]] = (kind, flops, out, med[label])
        if n["op"] in CONV and len(ins) > 1 and ins[0] and ins[1] and out:
            conv_kinds[signature(ins[0], ins[1], out)].add(kind)
    return nodes, wall, " ".join(cmd), pieces


def piece_bound(nodes, pieces, threads):
    """The speedup the pieces allow at THREADS threads over the node times
    measured: a node of p pieces a split (equal pieces, no hand-off cost)
    takes at least ceil(p / THREADS) of them in a row, its time times
    ceil(p / THREADS) / p; a node that did not split counts whole."""
    total = bound = 0.0
    for name, v in nodes.items():
        p = max(pieces.get(name, 1), 1.0)
        total += v[3]
        bound += v[3] * math.ceil(p / threads) / p
    return total / bound if bound > 0 else 1.0


def plain_walls(m, threads, optimize, repeat):
    """tgc's median ms per run untraced and ORT's unprofiled, one run each
    (ORT's None when node or its package fails)."""
    meta = json.load(open(os.path.join(PEERS_DIR, "models.json")))[m]
    cmd = [TGC, "run", os.path.join(PEERS_DIR, m + ".yaml"), "--devices", "cpu", "--threads", "cpu=%d" % threads,
           "--optimize", str(optimize), "--repeat", str(repeat + 1)]
    for name, path in meta["inputs"].items():
        cmd += ["--input", "%s=%s" % (name, path)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    found = re.search(r"wall time per run: ([0-9.]+) ms", p.stdout)
    tgc = float(found.group(1)) if p.returncode == 0 and found else None
    env = dict(os.environ, NODE_PATH=os.path.join(PEERS_DIR, "node", "node_modules"))
    env.pop("ORT_PROFILE", None)
    p = subprocess.run(ort_command() + [meta["onnx"], str(threads), str(repeat),
                        os.path.join(PEERS_DIR, "profile", m + ".ort.npy")] +
                       ["%s=%s" % kv for kv in meta["inputs"].items()], capture_output=True, text=True, env=env)
    ort = json.loads(p.stdout.strip().splitlines()[-1])["median_ms"] if p.returncode == 0 and p.stdout.strip() else None
    return tgc, ort


def signature(x, w, y):
    """A convolution as its input, weight and output shapes."""
    return tuple(x), tuple(w), tuple(y)


def ort_profile(m, threads, repeat, prof, tgc_kinds, conv_kinds):
    """ORT's nodes as tgc_profile's, and its median ms per run (profiler on);
    TGC_KINDS: tgc's node name -> kind; CONV_KINDS: tgc_profile's."""
    meta = json.load(open(os.path.join(PEERS_DIR, "models.json")))[m]
    prefix = os.path.join(prof, "%s.t%d.ort" % (m, threads))
    for old in glob.glob(glob.escape(prefix) + "_*.json"):
        os.remove(old)
    env = dict(os.environ, ORT_PROFILE=prefix, NODE_PATH=os.path.join(PEERS_DIR, "node", "node_modules"))
    cmd = ort_command() + [meta["onnx"], str(threads), str(repeat),
           os.path.join(prof, m + ".ort.npy")] + ["%s=%s" % kv for kv in meta["inputs"].items()]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError("`%s` failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-2000:]))
    wall = json.loads(p.stdout.strip().splitlines()[-1])["median_ms"]
    ev = json.load(open(sorted(glob.glob(glob.escape(prefix) + "_*.json"))[-1]))
    ev = [e for e in ev if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    med = medians_after_first([(e["ts"], e["name"], e["dur"]) for e in ev])
    nodes = {}
    for e in ev:
        name = e["name"]
        if name in nodes:
            continue
        a = e.get("args", {})
        op = a.get("op_name", "?")
        ins = [shape_of(s) for s in a.get("input_type_shape", [])]
        outs = [shape_of(s) for s in a.get("output_type_shape", [])]
        kind, flops = kind_and_flops(ORT_ALIASES.get(op, op), ins, outs[0] if outs else None, {})
        # What shapes cannot tell (a convolution's dilation): from tgc's node
        # of the same name (ORT's names are the ONNX node's + a suffix), else
        # from tgc's convolutions of the same shapes when they agree
        same = tgc_kinds.get(re.sub(r"(_nchwc)?_kernel_time$", "", name), "")
        alike = conv_kinds.get(signature(ins[0], ins[1], outs[0])) if kind.startswith("Conv ") else None
        if kind.startswith("Conv ") and same.startswith(kind):
            kind = same
        elif alike and len(alike) == 1 and next(iter(alike)).startswith(kind):
            kind = next(iter(alike))
        nodes[name] = (kind, flops, outs[0] if outs else None, med[name])
    return nodes, wall


def by_kind(nodes):
    """kind -> [node count, us per run, FLOPs per run]."""
    agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for kind, flops, _, us in nodes.values():
        a = agg[kind]
        a[0] += 1
        a[1] += us
        a[2] += flops
    return agg


def report(m, threads, optimize, repeat, top, with_ort):
    prof = os.path.join(PEERS_DIR, "profile")
    os.makedirs(prof, exist_ok=True)
    conv_kinds = collections.defaultdict(set)
    nodes, wall, cmd, pieces = tgc_profile(m, threads, optimize, repeat, prof, conv_kinds)
    ort, ort_wall = ort_profile(m, threads, repeat, prof, {n: v[0] for n, v in nodes.items()}, conv_kinds) \
        if with_ort else ({}, None)
    tk, ok = by_kind(nodes), by_kind(ort)
    total = sum(a[1] for a in tk.values())
    ort_total = sum(a[1] for a in ok.values())
    print("### %s, %d thread%s, --optimize %d" % (m, threads, "s" if threads > 1 else "", optimize))
    print()
    print("tgc %.2f ms per run (median of %d, trace on; its nodes' times add up to %.2f ms)%s. `%s`" % (
        wall, repeat + 1, total / 1e3,
        "; ORT %.2f ms (profiler on; nodes %.2f ms): tgc/ORT %.2f per run, %.2f in the nodes" % (
            ort_wall, ort_total / 1e3, wall / ort_wall, total / ort_total)
        if with_ort else "", cmd.replace(ROOT + "/", "")))
    print()
    print("The kernels' pieces (the trace's `pieces`, the same at every thread count) allow at most %s over "
          "these node times (p pieces a split take ceil(p / T) in a row)" % ", ".join(
              "%.1fx at %d threads" % (piece_bound(nodes, pieces, t), t) for t in (2, 4, 8, 16)))
    print()
    if with_ort:
        # ORT's profiler slows ORT's nodes more than tgc's trace slows tgc's
        # (SqueezeNet: 7.18 ms of profiled nodes, 5.40 unprofiled): the
        # per-kind ratios lean by the quotient of the two shares below
        plain_tgc, plain_ort = plain_walls(m, threads, optimize, repeat)
        if plain_tgc and plain_ort:
            print("Untraced and unprofiled, one run each: tgc %.2f ms, ORT %.2f ms, tgc/ORT %.2f; the nodes' sums "
                  "over those: tgc's trace %.2fx, ORT's profiler %.2fx" % (
                      plain_tgc, plain_ort, plain_tgc / plain_ort, total / 1e3 / plain_tgc,
                      ort_total / 1e3 / plain_ort))
            print()
    heads = ["kind", "nodes", "tgc ms", "share", "tgc GFLOP/s"]
    if with_ort:
        heads += ["ORT nodes", "ORT ms", "ORT GFLOP/s", "tgc/ORT"]
    print("| " + " | ".join(heads) + " |")
    print("|" + "|".join("---" for _ in heads) + "|")
    # tgc's kinds by its time, then the kinds only ORT has by ORT's; the TOP
    # first and any other that takes 1% of either runtime's time are shown
    kinds = sorted(set(tk) | set(ok), key=lambda k: (-tk.get(k, [0, 0])[1], -ok.get(k, [0, 0])[1]))
    shown = [k for i, k in enumerate(kinds) if i < top or tk.get(k, [0, 0])[1] >= 0.01 * total or
             ok.get(k, [0, 0])[1] >= 0.01 * ort_total]
    rest = [k for k in kinds if k not in shown]
    for k in shown + (["(other %d kinds)" % len(rest)] if rest else []):
        if k in tk or k in ok:
            t, o = tk.get(k), ok.get(k)
        else:  # the rows past TOP, summed
            t = [sum(tk[r][i] for r in rest if r in tk) for i in range(3)]
            o = [sum(ok[r][i] for r in rest if r in ok) for i in range(3)]
        row = [k, str(t[0]) if t else "0", "%.3f" % (t[1] / 1e3) if t else "-",
               "%.1f%%" % (100 * t[1] / total) if t and total else "-",
               "%.1f" % (t[2] / t[1] / 1e3) if t and t[2] and t[1] else ""]
        if with_ort:
            row += [str(o[0]) if o else "0", "%.3f" % (o[1] / 1e3) if o else "-",
                    "%.1f" % (o[2] / o[1] / 1e3) if o and o[2] and o[1] else "",
                    "%.2f" % (t[1] / o[1]) if t and o and o[1] else ""]
        print("| " + " | ".join(row) + " |")
    print()
    print("tgc's slowest nodes:")
    print()
    print("| node | kind | output | ms | share |")
    print("|---|---|---|---|---|")
    for name, (kind, _, out, us) in sorted(nodes.items(), key=lambda kv: -kv[1][3])[:8]:
        print("| `%s` | %s | %s | %.3f | %.1f%% |" % (name, kind, out, us / 1e3, 100 * us / total))
    print()
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--optimize", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--no-ort", action="store_true")
    a = ap.parse_args()
    for m in a.models:
        report(m, a.threads, a.optimize, a.repeat, a.top, not a.no_ort)


if __name__ == "__main__":
    main()
