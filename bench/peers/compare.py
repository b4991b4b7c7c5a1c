#!/usr/bin/python3
"""Peer benchmark tables from run.sh's logs.

  compare.py PEERS_DIR [MODEL...]

Reads PEERS_DIR/logs/MODEL.tT.* for every thread count T that run.sh ran (tgc
run logs at --optimize 2 and 0 + their rusage, ort_bench.js JSON,
export.py bench JSON), the outputs under PEERS_DIR/out and the PyTorch
reference PEERS_DIR/MODEL.torch.npy; prints per thread count (plain and
Markdown, each with a geometric-mean row) the table of medians, the same
ratios from each peer's fastest run, and at 1 thread from CPU time per run;
then, with two thread counts, each peer's speed-up from the fewer threads to
the more (thread scaling), and which models tgc does not have the least
peak RSS on; writes PEERS_DIR/results.json. With several rounds, the lowest
median (and fastest run, least CPU time) of each peer is kept and the
highest peak RSS.
Targets (issue 15): tgc/ORT at most 1.1 on every model (`*` marks a model
above it) and a geometric mean of at most 0.9, at each thread count; the
least peak RSS of the three on every model.

An output is WRONG when its max |output - PyTorch's| passes 1e-3 times
max(1, max |PyTorch's output|): 1e-3 absolute where outputs are at most 1 (the
bar of issue 9), relative to the output's scale above (ResNet-50's logits
reach 200, the GPT decoder's 400). Exit status 1 when a peer failed or an
output is wrong.
"""
import glob
import json
import math
import os
import re
import sys

import numpy as np

TARGET = 1.1
TARGET_GEOMEAN = 0.9
TOLERANCE = 1e-3
# CPU time per run is kept only from N runs that took this much CPU in all:
# below it, the interpreters' own work (node, Python) and the noise of
# tgc's difference of two processes outweigh the model's
MIN_CPU_MS = 100.0


def timed(text):
    """run.sh's rusage figures: peak RSS (KiB), user and system CPU (s), or None."""
    try:
        return [float(v) for v in (text or "").strip().splitlines()[-1].split()][:3] or None
    except (IndexError, ValueError):
        return None


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def last_lines(text, n=6):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def maxdiff(a_path, ref):
    if ref is None or not os.path.exists(a_path):
        return None
    a = np.load(a_path)
    if a.shape != ref.shape:
        return "shape %s vs %s" % (a.shape, ref.shape)
    return float(np.max(np.abs(a.astype(np.float64) - ref.astype(np.float64))))


def thread_counts(d, models):
    """The thread counts run.sh ran for MODELS, most first."""
    ts = set()
    for m in models:
        for p in glob.glob(os.path.join(d, "logs", glob.escape(m) + ".t*.uptime")):
            ts.add(int(p.rsplit(".", 2)[-2][1:]))
    return sorted(ts, reverse=True)


def tgc_result(r, d, m, t, k, rounds, ref):
    """tgc's figures at one --optimize level (K: "tgc" = 2, "tgc0" = 0) into R."""
    L = os.path.join(d, "logs", "%s.t%d.%s" % (m, t, k))
    meds, mins, cpus, rss = [], [], [], []
    for i in rounds:
        log = read("%s.%d.log" % (L, i))
        if log is None:
            continue
        rc = (read("%s.%d.rc" % (L, i)) or "").strip()
        mt = re.search(r"wall time per run: ([0-9.]+) ms", log)
        if rc != "0" or not mt:
            r["errors"].append("%s run (rc %s): `%s`: %s" % (
                k, rc, (read("%s.%d.cmd" % (L, i)) or "?").strip(), last_lines(log)))
            continue
        meds.append(float(mt.group(1)))
        mn = re.search(r"min ([0-9.]+) ms", log)
        if mn:
            mins.append(float(mn.group(1)))
        s, one = (timed(read("%s.%d.%s" % (L, i, f))) for f in ("rss", "rss1"))
        if s:
            rss.append(s[0] / 1024.0)
        runs = re.search(r"median of ([0-9]+)", log)
        if s and one and runs and int(runs.group(1)) > 1:  # less the 1-run process, over N
            total = ((s[1] + s[2]) - (one[1] + one[2])) * 1e3
            if total >= MIN_CPU_MS:
                cpus.append(total / (int(runs.group(1)) - 1))
    if meds:
        r[k + "_ms"] = min(meds)
        r[k + "_ms_all"] = meds
    if mins:
        r[k + "_min"] = min(mins)
    if cpus:
        r[k + "_cpu"] = min(cpus)
    if rss:
        r[k + "_rss"] = max(rss)
    outs = sorted(glob.glob(os.path.join(d, "out", "%s.t%d.%s" % (m, t, k), "*.npy")))
    if outs:
        r[k + "_diff"] = maxdiff(outs[0], ref)


def model_result(d, m, t):
    L = os.path.join(d, "logs", m)
    r = {"model": m, "threads": t, "errors": []}
    ref_path = os.path.join(d, m + ".torch.npy")
    ref = np.load(ref_path) if os.path.exists(ref_path) else None
    if ref is not None:
        r["ref_max"] = float(np.max(np.abs(ref)))
    rounds = sorted(int(p.rsplit(".", 2)[-2]) for p in glob.glob("%s.t%d.ort.*.json" % (L, t)))
    r["rounds"] = len(rounds)
    r["load"] = [re.search(r"load average: (.*)", l).group(1)
                 for l in (read("%s.t%d.uptime" % (L, t)) or "").splitlines() if "load average" in l]

    # tgc at --optimize 2 and 0
    if (read(L + ".import.rc") or "").strip() != "0":
        r["errors"].append("tgc import: `%s`: %s" % ((read(L + ".import.cmd") or "?").strip(),
                                                   last_lines(read(L + ".import.log"), 20)))
    else:
        for k in ("tgc", "tgc0"):
            tgc_result(r, d, m, t, k, rounds, ref)

    # ORT, PyTorch
    # ORT: default spin-wait ("ort") and spinning off ("ortns"); keep the faster
    for peer, files in (("ort", ("ort", "ortns")), ("torch", ("torch",))):
        meds, mins, cpus, rss = [], [], [], []
        for i in rounds:
            for f in files:
                txt = read("%s.t%d.%s.%d.json" % (L, t, f, i))
                if txt is None:
                    continue
                try:
                    j = json.loads(txt.strip().splitlines()[-1])
                    meds.append(j["median_ms"])
                    if "min_ms" in j:
                        mins.append(j["min_ms"])
                    if "cpu_ms" in j and j["cpu_ms"] * j["runs"] >= MIN_CPU_MS:
                        cpus.append(j["cpu_ms"])
                    rss.append(j["peak_rss_mib"])
                    r.setdefault(f + "_ms_all", []).append(j["median_ms"])
                except (IndexError, ValueError, KeyError):
                    r["errors"].append("%s: %s" % (f, last_lines(read("%s.t%d.%s.%d.err" % (L, t, f, i)))))
        if meds:
            r[peer + "_ms"] = min(meds)
            r[peer + "_rss"] = max(rss)
        if mins:
            r[peer + "_min"] = min(mins)
        if cpus:
            r[peer + "_cpu"] = min(cpus)
    diffs = [maxdiff(os.path.join(d, "out", "%s.t%d.%s.npy" % (m, t, f)), ref) for f in ("ort", "ortns")]
    diffs = [x for x in diffs if x is not None]
    r["ort_diff"] = max(diffs, key=lambda x: x if isinstance(x, float) else math.inf) if diffs else None
    # ratios of the medians, and of the fastest runs
    for sfx in ("ms", "min", "cpu"):
        tail = "" if sfx == "ms" else "_" + sfx
        tgc = r.get("tgc_" + sfx)
        if tgc and r.get("ort_" + sfx):
            r["tgc_over_ort" + tail] = tgc / r["ort_" + sfx]
        if tgc and r.get("torch_" + sfx):
            r["tgc_over_torch" + tail] = tgc / r["torch_" + sfx]
        if tgc and r.get("tgc0_" + sfx):
            r["o0_over_o2" + tail] = r["tgc0_" + sfx] / tgc
    return r


def fmt(v, spec):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return format(v, spec)


def threads(t):
    return "%d thread%s" % (t, "s" if t > 1 else "")


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


COLS = [("model", "model", "s"), ("tgc ms", "tgc_ms", ".3f"), ("tgc O0 ms", "tgc0_ms", ".3f"),
        ("O2 speed-up", "o0_over_o2", ".2f"), ("ORT ms", "ort_ms", ".3f"), ("PyTorch ms", "torch_ms", ".3f"),
        ("tgc/ORT", "tgc_over_ort", ".2f"), ("tgc/PyTorch", "tgc_over_torch", ".2f"),
        ("tgc MiB", "tgc_rss", ".0f"), ("ORT MiB", "ort_rss", ".0f"), ("PyTorch MiB", "torch_rss", ".0f"),
        ("diff tgc-PT", "tgc_diff", ".2e"), ("diff O0-PT", "tgc0_diff", ".2e"), ("diff ORT-PT", "ort_diff", ".2e")]
RATIOS = ("o0_over_o2", "tgc_over_ort", "tgc_over_torch")
# The same from each peer's fastest run over all rounds: on a loaded machine
# the least disturbed run, where a median can be half waiting
MIN_COLS = [("model", "model", "s"), ("tgc min", "tgc_min", ".3f"), ("tgc O0 min", "tgc0_min", ".3f"),
            ("O2 speed-up", "o0_over_o2_min", ".2f"), ("ORT min", "ort_min", ".3f"),
            ("PyTorch min", "torch_min", ".3f"), ("tgc/ORT", "tgc_over_ort_min", ".2f"),
            ("tgc/PyTorch", "tgc_over_torch_min", ".2f")]


# The same from CPU time per run (user + system, the process's threads
# together, least over the rounds). With 1 thread it does not grow with the
# machine's load as wall time does; with more it counts spin-waiting too.
CPU_COLS = [(h.replace("min", "CPU"), k.replace("_min", "_cpu"), s) for h, k, s in MIN_COLS]


def table(res, cols, title, note):
    """Prints RES as COLS (plain and Markdown) with a geometric-mean row;
    returns the geometric means of the ratio columns."""
    ratios = [k for _, k, _ in cols if k.startswith(RATIOS)]
    ort = next(k for k in ratios if k.startswith("tgc_over_ort"))
    rows = [[fmt(r.get(k), s) for _, k, s in cols] for r in res]
    for r, row in zip(res, rows):
        q = r.get(ort)
        if q is not None and q > TARGET:
            row[[k for _, k, _ in cols].index(ort)] += " *"
    # Geometric means of the ratios, over the models that have them
    g = {k: geomean([r.get(k) for r in res]) for k in ratios}
    n = {k: sum(1 for r in res if r.get(k)) for k in ratios}
    geo = ["geomean (%d models)" % n[ort]] + [""] * (len(cols) - 1)
    for i, (_, k, s) in enumerate(cols):
        if k in ratios:
            geo[i] = fmt(g[k], s) + ("" if n[k] == n[ort] else " (%d)" % n[k])
    heads = [c[0] for c in cols]
    w = [max(len(h), len(geo[i]), *(len(row[i]) for row in rows)) for i, h in enumerate(heads)]
    print(title + ":")
    print("  ".join(h.ljust(w[i]) for i, h in enumerate(heads)))
    for row in rows + [geo]:
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(row)))
    print(note)
    print()
    print("| " + " | ".join(heads) + " |")
    print("|" + "|".join("---" for _ in heads) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("| " + " | ".join("**%s**" % c if c else "" for c in geo) + " |")
    print()
    return g


def tables(res, t):
    g = table(res, COLS, threads(t),
              "(* = tgc/ORT above the 1.1 target; medians in ms, %s each; tgc = --optimize 2,"
              " O2 speed-up = tgc O0 ms / tgc ms; peak RSS of each process; diff = max |output - PyTorch output|)"
              % threads(t))
    g.update(table(res, MIN_COLS, "%s, fastest run" % threads(t),
                   "(the fastest run of each peer over all rounds, ms; ratios of those)"))
    if t == 1:
        g.update(table(res, CPU_COLS, "%s, CPU time" % threads(t),
                       "(CPU ms per run, user + system, least over the rounds; ratios of those; '-' where the"
                       " N runs took under %.0f ms of CPU in all, too little to measure)" % MIN_CPU_MS))
    for r in res:
        print("%s medians per round (%s): tgc %s; tgc O0 %s; ORT spin %s; ORT no-spin %s; PyTorch %s" % (
            r["model"], threads(t), *(" ".join("%.3f" % v for v in r.get(k, [])) or "-"
                             for k in ("tgc_ms_all", "tgc0_ms_all", "ort_ms_all", "ortns_ms_all", "torch_ms_all"))))
    for r in res:
        if r["load"]:
            print("load average before %s (%s): %s" % (r["model"], threads(t), "; ".join(r["load"])))
    print()
    return g


def scaling(results):
    """With two thread counts: each peer's speed-up from the fewer threads to
    the more (median over median), per model, with a geometric-mean row."""
    lo, hi = min(results), max(results)
    cols = [("model", "model", "s")] + [("%s x%d/x%d" % (name, hi, lo), k, ".2f")
                                         for name, k in (("tgc", "tgc"), ("ORT", "ort"), ("PyTorch", "torch"))]
    rows, speedups = [], {k: [] for _, k, _ in cols[1:]}
    for a, b in zip(results[lo], results[hi]):
        row = [a["model"]]
        for _, k, spec in cols[1:]:
            v = a.get(k + "_ms") / b[k + "_ms"] if a.get(k + "_ms") and b.get(k + "_ms") else None
            speedups[k].append(v)
            row.append(fmt(v, spec))
        rows.append(row)
    geo = ["geomean"] + [fmt(geomean(speedups[k]), ".2f") for _, k, _ in cols[1:]]
    heads = [c[0] for c in cols]
    print("Thread scaling, %d -> %d threads (median ms at %d / median ms at %d; %d would be perfect):" % (
        lo, hi, lo, hi, hi // lo))
    print()
    print("| " + " | ".join(heads) + " |")
    print("|" + "|".join("---" for _ in heads) + "|")
    for row in rows + [["**%s**" % c for c in geo]]:
        print("| " + " | ".join(row) + " |")
    print()


def memory_check(results):
    """Names the models where tgc's peak RSS is not the least of the three."""
    for t, res in sorted(results.items()):
        over = ["%s (tgc %.0f, ORT %.0f, PyTorch %.0f MiB)" % (r["model"], r["tgc_rss"], r.get("ort_rss", 0),
                                                               r.get("torch_rss", 0))
                for r in res if r.get("tgc_rss") and
                any(r.get(k) and r[k] <= r["tgc_rss"] for k in ("ort_rss", "torch_rss"))]
        print("peak RSS, %s: tgc the least of the three on %d of %d models%s" % (
            threads(t), sum(1 for r in res if r.get("tgc_rss")) - len(over), sum(1 for r in res if r.get("tgc_rss")),
            "; not on " + ", ".join(over) if over else ""))
    print()


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "build/peers"
    models = sys.argv[2:]
    if not models:  # every model exported, in export order
        with open(os.path.join(d, "models.json")) as f:
            models = [m for m in json.load(f) if not m.startswith("_")]
    results, geo = {}, {}
    for t in thread_counts(d, models):
        results[t] = [model_result(d, m, t) for m in models]
        geo[t] = tables(results[t], t)
    if len(results) >= 2:
        scaling(results)
    memory_check(results)
    machine = read(os.path.join(d, "logs", "machine.txt"))
    if machine:
        print("machine:\n  " + "\n  ".join(machine.strip().splitlines()))
    bad = False
    for t, res in results.items():
        for r in res:
            for e in r["errors"]:
                bad = True
                print("ERROR %s (%s): %s" % (r["model"], threads(t), e))
            bar = TOLERANCE * max(1.0, r.get("ref_max", 1.0))
            for k, what in (("tgc_diff", "tgc"), ("tgc0_diff", "tgc --optimize 0"), ("ort_diff", "ORT")):
                v = r.get(k)
                if isinstance(v, str) or (isinstance(v, float) and not v <= bar):
                    bad = True
                    print("WRONG %s (%s): %s max abs diff vs PyTorch %s > %.3g" % (
                        r["model"], threads(t), what, v if isinstance(v, str) else "%.3g" % v, bar))
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"machine": machine, "target_tgc_over_ort": TARGET, "tolerance": TOLERANCE,
                   "geomean": {str(t): g for t, g in geo.items()},
                   "models": {str(t): res for t, res in results.items()}}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
