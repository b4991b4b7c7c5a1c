"""Start-up beside ONNX Runtime (issue 33, item 4): how long `tgc run
MODEL.onnx` takes from process start to its first output (the whole
process: start, load, session, one run, exit), against ONNX Runtime's
session creation plus its first run in a process already started (ORT's
own figures, as its users see them: the issue's target), and ORT's whole
process (node, loading onnxruntime-node, the same). Interleaved rounds;
medians and the tgc/ORT ratio per model, peak RSS of each process.

    /usr/bin/python3 bench/peers/startup.py [MODEL...]

MODEL names peer models of PEERS_DIR/models.json (export.py's; default:
all), or KIND variants dtype_bench.py made (resnet18.f16, resnet18.u8).
Environment: PEERS_DIR (default build/peers), TGC (default build/tgc),
ROUNDS (default 5), THREADS (default 1). Needs node with onnxruntime-node
under PEERS_DIR/node (run.sh installs it). Target (issue 33): tgc/ORT at
most 1.0.
"""
import json
import os
import statistics
import sys
import tempfile
import time

from dtype_bench import PEERS, ROUNDS, THREADS, TGC, HERE, run

ROUNDS = int(os.environ.get('ROUNDS', '5'))


def feeds_of(meta, kind):
    """NAME=FILE feeds of a model's inputs (float16 ones for an f16 variant)."""
    out = []
    for name, path in meta['inputs'].items():
        out.append('%s=%s' % (name, path.replace('.npy', '.f16.npy') if kind == 'f16' else path))
    return out


def timed(cmd, env=None):
    """(wall seconds, exit status, output, peak RSS MiB) of running cmd."""
    t0 = time.perf_counter()
    rc, out, rss = run(cmd, env)
    return time.perf_counter() - t0, rc, out, rss


def main():
    models = json.load(open(os.path.join(PEERS, 'models.json')))
    names = sys.argv[1:] or list(models)
    node_env = dict(os.environ, NODE_PATH=os.path.join(PEERS, 'node', 'node_modules'))
    scratch = tempfile.mkdtemp(prefix='tgc-startup-')
    print('%-22s %10s %12s %10s %8s %10s %10s' % ('model', 'tgc ms', 'ORT cr+1 ms', 'ORT proc', 'tgc/ORT',
                                                  'tgc MiB', 'ORT MiB'))
    ratios = []
    for name in names:
        base, _, kind = name.partition('.')
        meta = models[base]
        onnx = meta['onnx'] if not kind else os.path.join(PEERS, '%s.%s.onnx' % (base, kind))
        feeds = feeds_of(meta, kind)
        tgc_cmd = [TGC, 'run', onnx, '--devices', 'cpu', '--threads', 'cpu=%d' % THREADS]
        for f in feeds:
            tgc_cmd += ['--input', f]
        ort_cmd = ['node', os.path.join(HERE, 'ort_bench.js'), onnx, str(THREADS), '0',
                   os.path.join(scratch, 'out.npy')] + feeds
        tgc_ms, ort_ms, ort_proc, tgc_rss, ort_rss = [], [], [], [], []
        for _ in range(ROUNDS):
            wall, rc, out, rss = timed(tgc_cmd)
            if rc != 0:
                sys.exit('tgc failed on %s:\n%s' % (name, out))
            tgc_ms.append(wall * 1e3)
            tgc_rss.append(rss)
            wall, rc, out, rss = timed(ort_cmd, node_env)
            if rc != 0:
                sys.exit('ORT failed on %s:\n%s' % (name, out))
            figures = json.loads(out.strip().splitlines()[-1])
            ort_ms.append(figures['create_ms'] + figures['first_run_ms'])
            ort_proc.append(wall * 1e3)
            ort_rss.append(rss)
        t, o = statistics.median(tgc_ms), statistics.median(ort_ms)
        ratios.append(t / o)
        print('%-22s %10.0f %12.0f %10.0f %8.2f %10.0f %10.0f' % (name, t, o, statistics.median(ort_proc), t / o,
                                                                  max(tgc_rss), max(ort_rss)))
    print('geometric mean tgc/ORT: %.2f (%d rounds, %d thread%s)' % (
        statistics.geometric_mean(ratios), ROUNDS, THREADS, '' if THREADS == 1 else 's'))


if __name__ == '__main__':
    main()
