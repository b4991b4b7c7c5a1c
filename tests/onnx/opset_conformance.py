#!/usr/bin/python3
"""ONNX's backend test models converted down to older opsets, run through tgc.

Each model of libonnx-testdata (node, pytorch-converted, pytorch-operator,
simple) whose opset is above a target is converted to that opset with ONNX's
own version converter (onnx.version_converter.convert_version, Debian's
python3-onnx) and checked with onnx.checker; the models it converts are
written under OUT/opsetN/SUITE/NAME/model.onnx beside links to the original
test_data_set_* folders, and tgc-conformance runs them (--data OUT/opsetN,
cpu): the expected outputs are the original model's, so each converted model
is compared with ONNX's reference values by ONNX's rule (rtol 1e-3, atol
1e-7), not with anything tgc computed.

ONNX 1.12's converter has no downward adapter for most ops whose newer
version only widened the types, nor for Resize 13, Softmax 13, Dropout 12,
Clip 11, Pad 11, Slice 10; where it refuses a model, opset_step_down.py
converts it node by node (relabeling the nodes whose older version has the
same signature, its own steps for those six, ONNX's adapters for the rest),
and where an adapter needs an input constant (Squeeze's axes, Split's
sizes), the graph inputs that only give such values are baked in from
test_data_set_0 (leaving the data set). The converter aborts or crashes on
some models; conversions run in a worker process restarted after a crash,
and such models count as "not converted". The table says how many each
route converted and passed; --verbose lists every model not converted (with
the reason), refused or failed, and the ops that adapters converted in the
models that passed.

Prints, per target opset: models above it, converted, passed, failed,
unsupported. With --floor FILE (lines 'opsetN COUNT'), exits 1 when fewer
than COUNT converted models pass at opset N. Exits 77 (skipped) when Python's
onnx module is missing.

Example usage:
    tests/onnx/opset_conformance.py --conformance build/tgc-conformance --out build/opset-conformance
    tests/onnx/opset_conformance.py ... --targets 9 --filter node/test_resize --verbose
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")


def worker(target, out_root, mode):
    """Reads model folders from stdin, one a line; converts each to `target`
    (convert(): mode "both", "onnx" or "stepwise"), writes it under
    out_root with its data sets, and prints a JSON line {"dir": ..., "ok":
    bool, "how": "onnx"|"stepwise", "why": ..., "adapted": [...]}."""
    import onnx

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # nothing written beside the sources
    import opset_step_down

    for line in sys.stdin:
        src = line.rstrip("\n")
        if not src:
            continue
        sys.stdout.write(json.dumps({"dir": src, "start": True}) + "\n")
        sys.stdout.flush()
        res = {"dir": src, "ok": False}
        try:
            m = onnx.load(os.path.join(src, "model.onnx"))
            c, res["how"], dropped = convert(m, src, target, mode, opset_step_down)
            res["adapted"] = adapted_ops(m, target, res["how"], opset_step_down)
            suite, name = src.rstrip("/").split("/")[-2:]
            dst = os.path.join(out_root, suite, name)
            os.makedirs(dst, exist_ok=True)
            onnx.save(c, os.path.join(dst, "model.onnx"))
            for entry in sorted(os.listdir(src)):
                if not entry.startswith("test_data_set_"):
                    continue
                if not dropped:
                    os.symlink(os.path.abspath(os.path.join(src, entry)), os.path.join(dst, entry))
                    continue
                os.makedirs(os.path.join(dst, entry))
                files = sorted(os.listdir(os.path.join(src, entry)))
                fed = sorted((int(f[6:-3]) for f in files if re.match(r"input_\d+\.pb$", f)))
                for k_new, k in enumerate([k for k in fed if k not in dropped]):
                    shutil.copy(os.path.join(src, entry, "input_%d.pb" % k),
                                os.path.join(dst, entry, "input_%d.pb" % k_new))
                for f in files:
                    if f.startswith("output_"):
                        shutil.copy(os.path.join(src, entry, f), os.path.join(dst, entry, f))
            res["ok"] = True
        except Exception as e:  # the converter's assertions arrive as exceptions
            res["why"] = " ".join(str(e).split())[:200]
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


def convert(m, src, target, mode, step):
    """m converted to `target`: ONNX's converter ("onnx"), else node by node
    ("stepwise"), else node by node with the inputs that only give axes,
    sizes or pads baked in from test_data_set_0 ("stepwise, baked": those
    inputs leave the data sets). Returns (model, how, dropped input indices)."""
    import onnx
    from onnx import version_converter

    errors = []
    if mode != "stepwise":
        try:
            c = version_converter.convert_version(m, target)
            onnx.checker.check_model(c)
            return c, "onnx", []
        except Exception as e:
            errors.append(e)
    if mode == "onnx":
        raise errors[-1]
    try:
        c = step.convert_stepwise(m, target)
        onnx.checker.check_model(c, full_check=True)
        return c, "stepwise", []
    except Exception as e:
        errors.append(e)
    dropped = step.bakeable_inputs(m)
    if not dropped:
        raise errors[-1]
    inits = {t.name for t in m.graph.initializer}
    fed = [vi.name for vi in m.graph.input if vi.name not in inits]
    values = {}
    for k in dropped:
        t = onnx.TensorProto()
        with open(os.path.join(src, "test_data_set_0", "input_%d.pb" % k), "rb") as f:
            t.ParseFromString(f.read())
        values[fed[k]] = t
    if len([d for d in os.listdir(src) if d.startswith("test_data_set_")]) != 1:
        raise errors[-1]  # baked values must hold for every data set
    c = step.convert_stepwise(step.bake_inputs(m, values), target)
    onnx.checker.check_model(c, full_check=True)
    return c, "stepwise", dropped


def adapted_ops(m, target, how, step):
    """The op types converted by ONNX's adapters (for the summary)."""
    import onnx

    if how != "onnx":  # "Op*": by opset_step_down's own steps
        return sorted(step.ADAPTED) + sorted(op + "*" for op in step.CUSTOM_ADAPTED)
    return sorted({n.op_type for n in m.graph.node if n.domain in ("", "ai.onnx") and
                   onnx.defs.get_schema(n.op_type, opset_of(m)).since_version > target})


def model_opset(path):
    import onnx

    m = onnx.load(path, load_external_data=False)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


ADAPTED = {}  # folder -> the ops ONNX's adapters converted


def opset_of(m):
    return [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]


def run_worker(todo, target, out_root, mode, result):
    """Converts the folders in `todo` in one worker process ("both": ONNX's
    converter, then the stepwise one; "stepwise" alone; "onnx" alone);
    fills result[folder] = (how, why). Returns the folder it crashed on, or
    None."""
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(target), out_root, mode],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdin.write("".join(d + "\n" for d in todo))
    p.stdin.close()
    current = None
    for line in p.stdout:
        r = json.loads(line)
        if r.get("start"):
            current = r["dir"]
            continue
        result[r["dir"]] = (r.get("how") if r["ok"] else None, r.get("why"))
        if r["ok"]:
            ADAPTED[r["dir"]] = r.get("adapted", [])
        current = None
    p.wait()
    if current is None and any(d not in result for d in todo):
        raise RuntimeError("the conversion worker ended early (exit %d)" % p.returncode)
    return current


def convert_all(models, target, out_root, stepwise):
    """Converts `models` (folders) in workers restarted after crashes (a
    model ONNX's converter crashes on is tried again stepwise); returns
    {folder: (how, why)}: how is "onnx", "stepwise" or None (not
    converted, for the reason `why`)."""
    result = {}
    todo = list(models)
    crashed = []
    while todo:
        c = run_worker(todo, target, out_root, "both" if stepwise else "onnx", result)
        if c is not None:
            result[c] = (None, "the converter crashed")
            crashed.append(c)
        todo = [d for d in todo if d not in result]
    while stepwise and crashed:
        c = run_worker(crashed, target, out_root, "stepwise", result)
        if c is not None:
            result[c] = (None, "the converter crashed (ONNX's and stepwise)")
        crashed = [d for d in crashed if d != c and result.get(d, (None, "the converter crashed"))[1] ==
                   "the converter crashed"]
    return result


def run_conformance(exe, data, filters):
    """tgc-conformance on cpu over `data`; returns ({"SUITE/NAME": outcome
    line} for the models that did not pass, the whole output)."""
    cmd = [exe, "--data", data, "--devices", "cpu", "--compact", "--verbose"]
    for f in filters:
        cmd += ["--filter", f]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    bad = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(FAILED|UNSUPPORTED)\s+\[cpu\] (\S+?): (.*)", line)
        if m:
            bad[m.group(2)] = (m.group(1), m.group(3))
    if not re.search(r"^cpu: \d+ passed", r.stdout, re.M):
        raise RuntimeError("tgc-conformance gave no totals:\n" + r.stdout[-2000:])
    return bad, r.stdout


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conformance", required=True, help="the tgc-conformance executable")
    ap.add_argument("--out", required=True, help="folder for the converted models (emptied first)")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--targets", default="7,9,11,13", help="opsets to convert down to (comma-separated)")
    ap.add_argument("--filter", action="append", default=[], help="only SUITE/NAME containing this (any)")
    ap.add_argument("--floor", help="lines 'opsetN COUNT': fail when fewer pass")
    ap.add_argument("--onnx-only", action="store_true", help="ONNX's converter alone (no stepwise fallback)")
    ap.add_argument("--verbose", action="store_true", help="list each model not converted, refused or failed")
    args = ap.parse_args()
    try:
        import onnx.version_converter  # noqa: F401
    except ImportError:
        print("opset_conformance: Python's onnx module is missing (Debian's python3-onnx); skipped")
        return 77

    floors = {}
    if args.floor:
        with open(args.floor) as f:
            for line in f:
                line = line.split("#")[0].split()
                if len(line) == 2:
                    floors[line[0]] = int(line[1])

    models = []
    for suite in SUITES:
        sdir = os.path.join(args.data, suite)
        if not os.path.isdir(sdir):
            continue
        for name in sorted(os.listdir(sdir)):
            d = os.path.join(sdir, name)
            key = suite + "/" + name
            if args.filter and not any(f in key for f in args.filter):
                continue
            if os.path.isfile(os.path.join(d, "model.onnx")):
                models.append((d, model_opset(os.path.join(d, "model.onnx"))))

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    status = 0
    print("%-8s %6s %22s %22s %7s %12s" % ("target", "above", "converted onnx+step", "passed onnx+step",
                                           "failed", "unsupported"))
    for target in [int(t) for t in args.targets.split(",")]:
        out_root = os.path.join(args.out, "opset%d" % target)
        os.makedirs(out_root, exist_ok=True)
        above = [d for d, v in models if v is not None and v > target]
        conv = convert_all(above, target, out_root, not args.onnx_only)
        bad, text = run_conformance(args.conformance, out_root, args.filter)
        n = {"onnx": 0, "stepwise": 0}
        ok = {"onnx": 0, "stepwise": 0}
        failed = unsupported = 0
        for d, (how, _) in conv.items():
            if how is None:
                continue
            key = "/".join(d.rstrip("/").split("/")[-2:])
            n[how] += 1
            if key not in bad:
                ok[how] += 1
            elif bad[key][0] == "FAILED":
                failed += 1
            else:
                unsupported += 1
        passed = ok["onnx"] + ok["stepwise"]
        print("%-8s %6d %22s %22s %7d %12d" % (
            "opset%d" % target, len(above), "%d = %d + %d" % (n["onnx"] + n["stepwise"], n["onnx"], n["stepwise"]),
            "%d = %d + %d" % (passed, ok["onnx"], ok["stepwise"]), failed, unsupported))
        if args.verbose:
            for d in sorted(conv):
                how, why = conv[d]
                key = "/".join(d.rstrip("/").split("/")[-2:])
                if how is None:
                    print("  not converted  %s: %s" % (key, why))
                elif key in bad:
                    print("  %-14s %s (%s): %s" % (bad[key][0].lower(), key, how, bad[key][1]))
        if args.verbose:
            count = {}
            for d, (how, _) in conv.items():
                key = "/".join(d.rstrip("/").split("/")[-2:])
                if how is not None and key not in bad:
                    for op in ADAPTED.get(d, []):
                        count[op] = count.get(op, 0) + 1
            print("  passed with ops converted by ONNX's adapters (Op*: by opset_step_down's): " +
                  ", ".join("%s %d" % (op, n) for op, n in sorted(count.items())))
        floor = floors.get("opset%d" % target)
        if floor is not None and passed < floor:
            print("opset_conformance: opset %d: %d passed, below the floor of %d" % (target, passed, floor))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
