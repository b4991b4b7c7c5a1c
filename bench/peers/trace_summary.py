#!/usr/bin/env python3
"""Where a traced run's time went (issue 35, item 5): reads a `tgc run
--trace FILE` JSON and prints, per step after the first (the first builds
kernels and caches), each device's host time (its nodes as the executor
timed them) and, for a device that records device-side times (a "NAME
(device)" track: OpenCL profiling events), its kernels' time on the
device's own clock, then the kernels that took most of it.

  trace_summary.py TRACE.json [TOP]
"""
import collections
import json
import statistics
import sys


def main():
    path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    tracks = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    per = collections.defaultdict(lambda: collections.defaultdict(float))  # track -> step -> us
    launches = collections.defaultdict(lambda: collections.Counter())    # track -> step -> launches
    kernels = collections.defaultdict(lambda: collections.Counter())     # track -> kernel -> us
    for e in events:
        if e.get("ph") != "X" or e["pid"] not in tracks:
            continue
        track, step = tracks[e["pid"]], e["args"].get("step", 0)
        per[track][step] += e["dur"]
        launches[track][step] += 1
        if track.endswith(" (device)") and step != min(per[track]):
            kernels[track][(e["args"].get("kernel") or e["name"])] += e["dur"]
    for track in sorted(per):
        steps = sorted(per[track])[1:] or sorted(per[track])
        ms = statistics.median(per[track][s] for s in steps) / 1e3
        n = statistics.median(launches[track][s] for s in steps)
        what = "kernels on the device's clock" if track.endswith(" (device)") else "nodes on the host"
        print("%-16s %10.3f ms a step (%s; %d events a step; median of %d steps)" % (track, ms, what, n, len(steps)))
        total = sum(kernels[track].values())
        for name, us in kernels[track].most_common(top):
            print("    %-40s %5.1f%%" % (name, 100.0 * us / total if total else 0.0))


if __name__ == "__main__":
    main()
