"""Peer benchmark off the float32 path (issue 33, item 7): tgc and ONNX
Runtime on the float16 and the int8 versions of the peer models (half.py
and quantize.py make them from run.sh's float32 exports), one thread each,
interleaved rounds; time per run (median, best round kept), peak RSS of the
process, and each output's largest difference from PyTorch's float32 output
(export.py's reference) and from ORT's, beside the float32 model's times.

    /usr/bin/python3 bench/peers/dtype_bench.py KIND [MODEL...]

KIND: f16 (every float32 tensor made float16), u8 (ORT's quantize_dynamic:
DynamicQuantizeLinear + ConvInteger / MatMulInteger, uint8 weights with
zero points), s8 (the same with int8 symmetric weights) or qdq (ORT's
quantize_static, QDQ format: QuantizeLinear -> DequantizeLinear around each
Conv and MatMul, uint8 activations calibrated on the model's own input(s),
int8 per-channel weights, int32 bias; quantize_qdq.py; tgc's fuse-qdq pass
makes QLinearConv / QLinearMatMul of them).
Environment: PEERS_DIR (default build/peers, where run.sh exported the
models), TGC (default build/tgc), ROUNDS (default 3), THREADS (default 1).
Needs node with onnxruntime-node under PEERS_DIR/node (run.sh installs it).
Targets (issue 33): tgc/ORT at most 1.25 on float16 and on int8 models.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.environ.get('PEERS_DIR', os.path.join(ROOT, 'build', 'peers'))
TGC = os.environ.get('TGC', os.path.join(ROOT, 'build', 'tgc'))
ROUNDS = int(os.environ.get('ROUNDS', '3'))
# the first count of a list (scaling.py, which imports this module, reads THREADS as "1 2")
THREADS = int(os.environ.get('THREADS', '1').split()[0])


def run(cmd, env=None):
    """Runs cmd; returns (exit status, stdout + stderr, peak RSS in MiB)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.read().decode(errors='replace')
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out, usage.ru_maxrss / 1024.0


def variant(kind, name, meta):
    """The KIND model and its inputs (made once, again when the script that
    makes them changed); returns (onnx, [NAME=FILE])."""
    src = meta['onnx']
    dst = os.path.join(PEERS, '%s.%s.onnx' % (name, kind))
    feeds, pairs = [], []
    for inp, path in meta['inputs'].items():
        if kind == 'f16':  # float16 inputs for a float16 model
            half = path.replace('.npy', '.f16.npy')
            pairs += [path, half]
            path = half
        feeds.append('%s=%s' % (inp, path))
    script = os.path.join(HERE, {'f16': 'half.py', 'qdq': 'quantize_qdq.py'}.get(kind, 'quantize.py'))
    if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(script):
        if kind == 'f16':
            args = [src, dst] + pairs
        elif kind == 'qdq':  # calibrated on the model's own inputs
            args = [src, dst] + ['%s=%s' % kv for kv in meta['inputs'].items()]
        else:
            args = [src, dst, 'uint8' if kind == 'u8' else 'int8']
        subprocess.check_call(['/usr/bin/python3', script] + args, env=dict(os.environ, PEERS_DIR=PEERS))
    return dst, feeds


def tgc_time(onnx, feeds, n, out_dir):
    cmd = [TGC, 'run', onnx, '--devices', 'cpu', '--threads', 'cpu=%d' % THREADS, '--repeat', str(n + 1),
           '--output-dir', out_dir]
    for f in feeds:
        cmd += ['--input', f]
    rc, out, rss = run(cmd)
    m = re.search(r'wall time per run: ([0-9.]+) ms', out)
    if rc != 0 or m is None:
        return None, rss, out.strip().splitlines()[-1] if out.strip() else 'exit %d' % rc
    return float(m.group(1)), rss, None


def ort_time(onnx, feeds, n, out_npy):
    env = dict(os.environ, NODE_PATH=os.path.join(PEERS, 'node', 'node_modules'))
    rc, out, rss = run(['node', os.path.join(HERE, 'ort_bench.js'), onnx, str(THREADS), str(n), out_npy] + feeds, env)
    if rc != 0:
        return None, rss, out.strip().splitlines()[-1]
    return json.loads(out.strip().splitlines()[-1])['median_ms'], rss, None


def max_diff(path, ref):
    if path is None or not os.path.exists(path):
        return float('nan')
    return float(np.max(np.abs(np.load(path).astype(np.float64) - ref.astype(np.float64))))


def first_npy(d):
    files = sorted(f for f in os.listdir(d) if f.endswith('.npy')) if os.path.isdir(d) else []
    return os.path.join(d, files[0]) if files else None


def main(kind, models):
    if kind not in ('f16', 'u8', 's8', 'qdq'):
        sys.exit(__doc__)
    with open(os.path.join(PEERS, 'models.json')) as f:
        meta = json.load(f)
    models = models or [m for m in meta if os.path.exists(meta[m]['onnx'])]
    out = os.path.join(PEERS, 'out')
    os.makedirs(out, exist_ok=True)
    rows = []
    for name in models:
        m = meta[name]
        n = max(3, int(m['repeats']))
        ref = np.load(m['onnx'].replace('.onnx', '.torch.npy'))
        f32_feeds = ['%s=%s' % kv for kv in m['inputs'].items()]
        low, low_feeds = variant(kind, name, m)
        best = {}
        for _ in range(ROUNDS):
            for key, onnx, feeds in (('32', m['onnx'], f32_feeds), ('lo', low, low_feeds)):
                d = os.path.join(out, '%s.%s.%s.tgc' % (name, kind, key))
                t, rss, err = tgc_time(onnx, feeds, n, d)
                prev = best.get('tgc' + key)
                if prev is None or (t is not None and (prev[0] is None or t < prev[0])):
                    best['tgc' + key] = (t, rss, err, first_npy(d))
                npy = os.path.join(out, '%s.%s.%s.ort.npy' % (name, kind, key))
                t, rss, err = ort_time(onnx, feeds, n, npy)
                prev = best.get('ort' + key)
                if prev is None or (t is not None and (prev[0] is None or t < prev[0])):
                    best['ort' + key] = (t, rss, err, npy)
        rows.append((name, best, ref))
    print('%s models, %d thread(s), best median of %d rounds (ms); peak RSS (MiB); max |out - PyTorch float32| '
          'and |tgc - ORT|' % (kind, THREADS, ROUNDS))
    print('%-22s %9s %9s %6s | %7s %7s | %9s %9s %9s | %9s %9s' %
          ('model', 'tgc', 'ORT', 'ratio', 'tgc MiB', 'ORT MiB', 'tgc diff', 'ORT diff', 'tgc-ORT', 'tgc f32',
           'ORT f32'))
    ratios = []
    for name, b, ref in rows:
        t, o = b['tgclo'], b['ortlo']
        ratio = t[0] / o[0] if t[0] and o[0] else float('nan')
        if ratio == ratio:
            ratios.append(ratio)
        fmt = lambda v: '%9.2f' % v if v is not None else '%9s' % 'fail'
        tgc_ort = max_diff(t[3], np.load(o[3])) if o[3] and os.path.exists(o[3]) else float('nan')
        print('%-22s %s %s %6.2f | %7.0f %7.0f | %9.2g %9.2g %9.2g | %s %s' %
              (name, fmt(t[0]), fmt(o[0]), ratio, t[1], o[1], max_diff(t[3], ref), max_diff(o[3], ref), tgc_ort,
               fmt(b['tgc32'][0]), fmt(b['ort32'][0])))
        for k in ('tgclo', 'ortlo'):
            if b[k][2]:
                print('    %s: %s' % (k, b[k][2]))
    if ratios:
        print('geometric mean tgc/ORT (%s): %.3f over %d models' %
              (kind, float(np.exp(np.mean(np.log(ratios)))), len(ratios)))


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else '', sys.argv[2:])
