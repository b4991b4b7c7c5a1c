"""float16 peer benchmark (issue 33, item 7): tgc and ONNX Runtime on the
float16 versions of the peer models (half.py makes them from run.sh's
float32 exports), one thread each, interleaved rounds; time per run (median,
best round kept), peak RSS of the process, and each output's largest
difference from PyTorch's float32 output (export.py's reference), beside the
same for the float32 model.

    /usr/bin/python3 bench/peers/half_bench.py [MODEL...]

Environment: PEERS_DIR (default build/peers, where run.sh exported the
models), TGC (default build/tgc), ROUNDS (default 3), THREADS (default 1).
Needs node with onnxruntime-node under PEERS_DIR/node (run.sh installs it).
Target (issue 33): tgc/ORT at most 1.25 on float16 models.
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
THREADS = int(os.environ.get('THREADS', '1'))


def run(cmd, env=None):
    """Runs cmd; returns (exit status, stdout + stderr, peak RSS in MiB)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.read().decode(errors='replace')
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out, usage.ru_maxrss / 1024.0


def half_model(name, meta):
    """The float16 model and inputs (made once); returns (onnx, [NAME=FILE])."""
    src = meta['onnx']
    dst = os.path.join(PEERS, name + '.f16.onnx')
    pairs, feeds = [], []
    for inp, path in meta['inputs'].items():
        half = path.replace('.npy', '.f16.npy')
        pairs += [path, half]
        feeds.append('%s=%s' % (inp, half))
    if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(os.path.join(HERE, 'half.py')):
        subprocess.check_call(['/usr/bin/python3', os.path.join(HERE, 'half.py'), src, dst] + pairs)
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


def main(models):
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
        f16, f16_feeds = half_model(name, m)
        best = {}
        for _ in range(ROUNDS):
            for key, onnx, feeds in (('32', m['onnx'], f32_feeds), ('16', f16, f16_feeds)):
                d = os.path.join(out, '%s.half.%s.tgc' % (name, key))
                t, rss, err = tgc_time(onnx, feeds, n, d)
                prev = best.get('tgc' + key)
                if prev is None or (t is not None and (prev[0] is None or t < prev[0])):
                    best['tgc' + key] = (t, rss, err, first_npy(d))
                npy = os.path.join(out, '%s.half.%s.ort.npy' % (name, key))
                t, rss, err = ort_time(onnx, feeds, n, npy)
                prev = best.get('ort' + key)
                if prev is None or (t is not None and (prev[0] is None or t < prev[0])):
                    best['ort' + key] = (t, rss, err, npy)
        rows.append((name, best, ref))
    print('float16 models, %d thread(s), best median of %d rounds (ms); peak RSS (MiB); max |out - PyTorch float32|'
          % (THREADS, ROUNDS))
    print('%-22s %9s %9s %6s | %7s %7s | %9s %9s | %9s %9s' %
          ('model', 'tgc f16', 'ORT f16', 'ratio', 'tgc MiB', 'ORT MiB', 'tgc diff', 'ORT diff', 'tgc f32', 'ORT f32'))
    ratios = []
    for name, b, ref in rows:
        t, o = b['tgc16'], b['ort16']
        ratio = t[0] / o[0] if t[0] and o[0] else float('nan')
        if ratio == ratio:
            ratios.append(ratio)
        fmt = lambda v: '%9.2f' % v if v is not None else '%9s' % 'fail'
        print('%-22s %s %s %6.2f | %7.0f %7.0f | %9.2g %9.2g | %s %s' %
              (name, fmt(t[0]), fmt(o[0]), ratio, t[1], o[1], max_diff(t[3], ref), max_diff(o[3], ref),
               fmt(b['tgc32'][0]), fmt(b['ort32'][0])))
        for k in ('tgc16', 'ort16'):
            if b[k][2]:
                print('    %s: %s' % (k, b[k][2]))
    if ratios:
        print('geometric mean tgc/ORT (float16): %.3f over %d models' %
              (float(np.exp(np.mean(np.log(ratios)))), len(ratios)))


if __name__ == '__main__':
    main(sys.argv[1:])
