"""Thread scaling beside ONNX Runtime (issue 34, item 5): each peer model
run by tgc and by ORT at every thread count of THREADS, interleaved rounds,
the best median of each; per model the time at each count, the speedup
from one thread to each count, and tgc/ORT at each count, both as the
ratio of the best medians and paired: the median over rounds of the ratio
of the two runs made back to back in a round (which goes first alternates
from round to round). This machine slows by up to a third for seconds at
a time; a slow spell takes one runtime's run and not the other's less
often than it takes one runtime's best median, so the paired ratio moves
less between runs (ROUNDS 5 or more). Then the geometric means per model
family and over all.

    /usr/bin/python3 bench/peers/scaling.py [MODEL...]

MODEL names peer models of PEERS_DIR/models.json (export.py's; default:
every one exported). Environment: PEERS_DIR (default build/peers), TGC
(default build/tgc), THREADS (default "1 2"; on a bigger machine "1 2 4 8
16": scripts/gpu-machine-check runs that), ROUNDS (default 3),
REPEAT_SCALE (default 1: export.py's runs per round, scaled). Needs node
with onnxruntime-node under PEERS_DIR/node (run.sh installs it). ORT runs
with its default intra-op spinning and, above one thread, without it
(session.intra_op.allow_spinning=0); the faster counts, as in run.sh.
Before and after (and between rounds, its first figure), the cost of
reading data the other core has just written
(build/bench/bench_core_to_core, 1 MiB): a virtual machine's vCPUs may
share caches one hour and not the next, and its scaling changes with
it, and the multiply-adds both CPUs do at once against one alone (near
1.0 where the host runs both vCPUs on one core: then no runtime gains
from a second thread, and the 2-thread figures say little), and the
bytes both read at once from memory (64 MiB buffers, past the caches)
against one alone (near 1.0 where one core already takes all the
bandwidth the host gives: then a kernel streaming from memory, such as
a large matrix-vector product, gains nothing from a second thread).
Targets (issue 34): tgc/ORT at most 1.0 as a geometric mean and at most
1.15 on every model at 2 threads; at most 0.95 as a geometric mean at 1.
"""
import json
import math
import os
import re
import sys

from dtype_bench import PEERS, TGC, HERE, run

THREADS = [int(t) for t in os.environ.get('THREADS', '1 2').split()]
ROUNDS = int(os.environ.get('ROUNDS', '3'))
REPEAT_SCALE = float(os.environ.get('REPEAT_SCALE', '1'))

# The family each peer model belongs to (export.py's names).
FAMILIES = {
    'mlp': 'MLP', 'lstm': 'recurrent', 'gpt': 'transformer', 'bert': 'transformer', 'transformer': 'transformer',
    'vit': 'transformer', 'swin': 'transformer', 'mobilenet': 'mobile CNN', 'efficientnet': 'mobile CNN',
    'mnasnet': 'mobile CNN', 'shufflenet': 'mobile CNN', 'squeezenet': 'mobile CNN', 'deeplab': 'mobile CNN',
}


def family(name):
    for prefix, fam in FAMILIES.items():
        if name.startswith(prefix):
            return fam
    return 'CNN'


def tgc_ms(meta, threads, n):
    cmd = [TGC, 'run', meta['onnx'], '--devices', 'cpu', '--threads', 'cpu=%d' % threads, '--repeat', str(n + 1)]
    for kv in meta['inputs'].items():
        cmd += ['--input', '%s=%s' % kv]
    rc, out, _ = run(cmd)
    m = re.search(r'wall time per run: ([0-9.]+) ms', out)
    return float(m.group(1)) if rc == 0 and m else None


def ort_ms(meta, threads, n, spin):
    env = dict(os.environ, NODE_PATH=os.path.join(PEERS, 'node', 'node_modules'))
    if not spin:
        env['ORT_ALLOW_SPINNING'] = '0'
    feeds = ['%s=%s' % kv for kv in meta['inputs'].items()]
    scratch = os.path.join(PEERS, 'out', 'scaling.ort.npy')
    rc, out, _ = run(['node', os.path.join(HERE, 'ort_bench.js'), meta['onnx'], str(threads), str(n), scratch] + feeds,
                     env)
    if rc != 0:
        return None
    return json.loads(out.strip().splitlines()[-1])['median_ms']


def core_to_core():
    """bench_core_to_core's lines for 1 MiB (a read after a write, a write
    after a read: own us, other us, ratio), what two CPUs compute at once
    against one, and what they read at once from memory (64 MiB each)
    against one, or a note why not; and the read's ratio (None when the
    probe failed)."""
    probe = os.path.join(os.path.dirname(TGC), 'bench', 'bench_core_to_core')
    if not os.path.exists(probe):
        return 'no %s' % probe, None
    rc, out, _ = run([probe])
    lines = [l.split() for l in out.splitlines() if l.split()[:1] == ['1024']]  # the read's row, then the write's
    fma = re.search(r'multiply-adds .* alone: ([0-9.]+)x', out)
    dram = re.search(r'buffer of 65536 KiB .* alone: ([0-9.]+)x \(([0-9.]+) GB/s', out)
    if rc != 0 or len(lines) < 2 or not fma or not dram:
        return 'probe failed', None
    read, write = lines[0], lines[1]
    return ('read of 1 MiB the other core wrote: %s us, own core %s us (%sx); a write of it after the other '
            'core read it: %s us, after its own read %s us (%sx); 2 CPUs compute %sx one and read %sx one '
            'from memory (%s GB/s alone)') % (
        read[2], read[1], read[3], write[2], write[1], write[3], fma.group(1), dram.group(1),
        dram.group(2)), float(read[3])


def best(a, b):
    return b if a is None or (b is not None and b < a) else a


def median(xs):
    xs = sorted(x for x in xs if x == x)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2 if xs else float('nan')


def geomean(xs):
    xs = [x for x in xs if x and x == x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def main(models):
    with open(os.path.join(PEERS, 'models.json')) as f:
        meta = json.load(f)
    # (export.py keeps notes under keys starting with '_', such as '_info')
    models = models or [m for m in meta if not m.startswith('_') and os.path.exists(meta[m]['onnx'])]
    os.makedirs(os.path.join(PEERS, 'out'), exist_ok=True)
    probe_before, _ = core_to_core()
    states = []  # the probe's read ratio before each round (near 1: the fast state)
    times = {}  # (model, runtime, threads) -> best median ms
    paired = {}  # (model, threads) -> [tgc/ORT of each round, from runs back to back]
    for r in range(ROUNDS):
        if r > 0:
            states.append(core_to_core()[1])
        for name in models:
            n = max(3, int(meta[name]['repeats'] * REPEAT_SCALE))
            for t in THREADS:
                # ORT first in odd rounds: neither runtime always follows the other
                got = {}
                for rt in (('tgc', 'ort') if r % 2 == 0 else ('ort', 'tgc')):
                    if rt == 'tgc':
                        got[rt] = tgc_ms(meta[name], t, n)
                    else:
                        got[rt] = ort_ms(meta[name], t, n, True)
                        if t > 1:
                            got[rt] = best(got[rt], ort_ms(meta[name], t, n, False))
                for rt, ms in got.items():
                    times[(name, rt, t)] = best(times.get((name, rt, t)), ms)
                if got['tgc'] and got['ort']:
                    paired.setdefault((name, t), []).append(got['tgc'] / got['ort'])
    head = '%-22s %-12s' % ('model', 'family')
    for t in THREADS:
        head += ' %8s %8s' % ('tgc %dt' % t, 'ORT %dt' % t)
    for t in THREADS[1:]:
        head += ' %9s %9s' % ('tgc 1->%d' % t, 'ORT 1->%d' % t)
    for t in THREADS:
        head += ' %8s' % ('ratio %d' % t)
    for t in THREADS:
        head += ' %9s' % ('paired %d' % t)
    print('ms per run, best median of %d interleaved rounds; speedups from 1 thread; ratio = tgc/ORT of the best '
          'medians; paired = the median over rounds of tgc/ORT from runs back to back (steadier where the '
          'machine slows for seconds at a time)' % ROUNDS)
    print('before: %s; after: %s' % (probe_before, core_to_core()[0]))
    if states:
        print('between rounds, a read of the other core\'s writes against an own read: %s' %
              ', '.join('%.2fx' % x if x else '-' for x in states))
    print(head)
    ratios = {}  # (family or 'all', threads) -> [ratio]
    for name in models:
        fam = family(name)
        line = '%-22s %-12s' % (name, fam)
        for t in THREADS:
            line += ' %8s %8s' % tuple('%.2f' % v if v else 'fail'
                                       for v in (times[(name, 'tgc', t)], times[(name, 'ort', t)]))
        for t in THREADS[1:]:
            for rt in ('tgc', 'ort'):
                one, many = times[(name, rt, THREADS[0])], times[(name, rt, t)]
                line += ' %9s' % ('%.2f' % (one / many) if one and many else '-')
        for t in THREADS:
            tg, o = times[(name, 'tgc', t)], times[(name, 'ort', t)]
            r = tg / o if tg and o else float('nan')
            line += ' %8.2f' % r
            for k in (fam, 'all'):
                ratios.setdefault((k, t), []).append(r)
        for t in THREADS:
            p = median(paired.get((name, t), []))
            line += ' %9.2f' % p
            for k in (fam, 'all'):
                ratios.setdefault((k, 'paired', t), []).append(p)
        print(line)
    print()
    print('%-22s %s   %s' % ('geometric mean tgc/ORT', ' '.join('%8s' % ('%dt' % t) for t in THREADS),
                             ' '.join('%9s' % ('paired %dt' % t) for t in THREADS)))
    for k in sorted({k[0] for k in ratios}, key=lambda k: (k == 'all', k)):
        print('%-22s %s   %s' % (k, ' '.join('%8.2f' % geomean(ratios[(k, t)]) for t in THREADS),
                                 ' '.join('%9.2f' % geomean(ratios[(k, 'paired', t)]) for t in THREADS)))


if __name__ == '__main__':
    main(sys.argv[1:])
