#!/usr/bin/python3
"""Peer benchmark table from run.sh's logs.

  compare.py PEERS_DIR [MODEL...]

Reads PEERS_DIR/logs/MODEL.* (tgc run log + /usr/bin/time RSS, ort_bench.js
JSON, export.py bench JSON), the outputs under PEERS_DIR/out and the PyTorch
reference PEERS_DIR/MODEL.torch.npy; prints one table (plain and Markdown),
writes PEERS_DIR/results.json. With several rounds, the lowest median of each
peer is kept and the highest peak RSS. Target: tgc within 1.25x of ORT.
"""
import glob
import json
import os
import re
import sys

import numpy as np

TARGET = 1.25


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


def model_result(d, m):
    L = os.path.join(d, "logs", m)
    r = {"model": m, "errors": []}
    ref_path = os.path.join(d, m + ".torch.npy")
    ref = np.load(ref_path) if os.path.exists(ref_path) else None
    rounds = sorted(int(p.rsplit(".", 2)[-2]) for p in glob.glob(L + ".ort.*.json"))
    r["rounds"] = len(rounds)
    r["load"] = [re.search(r"load average: (.*)", l).group(1)
                 for l in (read(L + ".uptime") or "").splitlines() if "load average" in l]

    # tgc
    if (read(L + ".import.rc") or "").strip() != "0":
        r["errors"].append("tgc import: " + last_lines(read(L + ".import.log"), 20))
    else:
        meds, rss = [], []
        for k in rounds:
            log = read("%s.tgc.%d.log" % (L, k)) or ""
            rc = (read("%s.tgc.%d.rc" % (L, k)) or "").strip()
            mt = re.search(r"wall time per run: ([0-9.]+) ms", log)
            if rc != "0" or not mt:
                r["errors"].append("tgc run (rc %s): %s" % (rc, last_lines(log)))
                continue
            meds.append(float(mt.group(1)))
            s = (read("%s.tgc.%d.rss" % (L, k)) or "").strip().splitlines()
            if s and s[-1].isdigit():
                rss.append(int(s[-1]) / 1024.0)
        if meds:
            r["tgc_ms"] = min(meds)
            r["tgc_ms_all"] = meds
        if rss:
            r["tgc_rss"] = max(rss)
        outs = sorted(glob.glob(os.path.join(d, "out", m + ".tgc", "*.npy")))
        if outs:
            r["tgc_diff"] = maxdiff(outs[0], ref)

    # ORT, PyTorch
    # ORT: default spin-wait ("ort") and spinning off ("ortns"); keep the faster
    for peer, files in (("ort", ("ort", "ortns")), ("torch", ("torch",))):
        meds, rss = [], []
        for k in rounds:
            for f in files:
                txt = read("%s.%s.%d.json" % (L, f, k))
                if txt is None:
                    continue
                try:
                    j = json.loads(txt.strip().splitlines()[-1])
                    meds.append(j["median_ms"])
                    rss.append(j["peak_rss_mib"])
                    r.setdefault(f + "_ms_all", []).append(j["median_ms"])
                except (IndexError, ValueError, KeyError):
                    r["errors"].append("%s: %s" % (f, last_lines(read("%s.%s.%d.err" % (L, f, k)))))
        if meds:
            r[peer + "_ms"] = min(meds)
            r[peer + "_rss"] = max(rss)
    r["ort_diff"] = maxdiff(os.path.join(d, "out", m + ".ort.npy"), ref)
    ns = maxdiff(os.path.join(d, "out", m + ".ortns.npy"), ref)
    if isinstance(ns, float) and isinstance(r["ort_diff"], float):
        r["ort_diff"] = max(ns, r["ort_diff"])
    if r.get("tgc_ms") and r.get("ort_ms"):
        r["tgc_over_ort"] = r["tgc_ms"] / r["ort_ms"]
    if r.get("tgc_ms") and r.get("torch_ms"):
        r["tgc_over_torch"] = r["tgc_ms"] / r["torch_ms"]
    return r


def fmt(v, spec):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return format(v, spec)


COLS = [("model", "model", "s"), ("tgc ms", "tgc_ms", ".3f"), ("ORT ms", "ort_ms", ".3f"),
        ("PyTorch ms", "torch_ms", ".3f"), ("tgc/ORT", "tgc_over_ort", ".2f"),
        ("tgc/PyTorch", "tgc_over_torch", ".2f"), ("tgc MiB", "tgc_rss", ".0f"),
        ("ORT MiB", "ort_rss", ".0f"), ("PyTorch MiB", "torch_rss", ".0f"),
        ("diff tgc-PT", "tgc_diff", ".2e"), ("diff ORT-PT", "ort_diff", ".2e")]


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "build/peers"
    models = sys.argv[2:] or ["mlp_b1", "mlp_b64", "resnet18", "resnet50", "transformer"]
    res = [model_result(d, m) for m in models]
    rows = [[fmt(r.get(k), s) for _, k, s in COLS] for r in res]
    for r, row in zip(res, rows):
        q = r.get("tgc_over_ort")
        if q is not None and q > TARGET:
            row[4] += " *"
    heads = [c[0] for c in COLS]
    w = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w[i]) for i, h in enumerate(heads)))
    for row in rows:
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(row)))
    print("(* = tgc slower than the 1.25x-of-ORT target; medians in ms, 2 threads each;"
          " peak RSS of each process; diff = max |output - PyTorch output|)")
    print()
    print("| " + " | ".join(heads) + " |")
    print("|" + "|".join("---" for _ in heads) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    for r in res:
        print("%s medians per round: tgc %s; ORT spin %s; ORT no-spin %s; PyTorch %s" % (
            r["model"], *(" ".join("%.3f" % v for v in r.get(k, [])) or "-"
                          for k in ("tgc_ms_all", "ort_ms_all", "ortns_ms_all", "torch_ms_all"))))
    for r in res:
        if r["load"]:
            print("load average before %s: %s" % (r["model"], "; ".join(r["load"])))
    machine = read(os.path.join(d, "logs", "machine.txt"))
    if machine:
        print("machine:\n  " + "\n  ".join(machine.strip().splitlines()))
    bad = False
    for r in res:
        for e in r["errors"]:
            bad = True
            print("ERROR %s: %s" % (r["model"], e))
        if isinstance(r.get("tgc_diff"), float) and r["tgc_diff"] > 1e-3:
            print("WRONG %s: tgc max abs diff vs PyTorch %.3g > 1e-3" % (r["model"], r["tgc_diff"]))
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"machine": machine, "target_tgc_over_ort": TARGET, "models": res}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
