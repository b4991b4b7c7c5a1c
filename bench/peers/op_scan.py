"""Single operators beside ONNX Runtime (issue 34, item 4): where a kernel
falls far behind the library users already have. Each case is a model of
one operator (or a short chain) on shapes from vision and language models,
made here with onnx.helper (opset 17, random inputs, fixed seed); tgc and
ORT run it in turn for ROUNDS rounds, and the table gives each runtime's
best median (ms per run, the inputs fed every run by both) and tgc/ORT. A
case ORT cannot run, or tgc refuses, says so instead. The cases the scan
of 3 December 2026 found behind (TopK 112x, GEMV with an activation
matrix 2.6x, ReduceMean 1.5-3x, ArgMax 1.8x, InstanceNormalization and Pow
1.6-1.8x: docs/cpu-speed.md, stop 65) are among them.

    /usr/bin/python3 bench/peers/op_scan.py [CASE...]

Environment: PEERS_DIR (default build/peers: the models go to
PEERS_DIR/ops, made again when this file is newer), TGC (default
build/tgc), ROUNDS (default 3), THREADS (default 1). Needs python3-onnx and
python3-numpy, and node with onnxruntime-node under PEERS_DIR/node (run.sh
installs it). Rows at 1.2 and over are marked.
"""
import json
import os
import re
import sys

import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper as nh, save

from dtype_bench import PEERS, TGC, HERE, ROUNDS, THREADS, run

OUT = os.path.join(PEERS, 'ops')
F = T.FLOAT
I64 = T.INT64


def W(rng, *shape):
    return (rng.standard_normal(shape) * 0.05).astype(np.float32)


# name: (graph inputs {name: (shape, dtype)}, builder(rng) -> (nodes, initializers), output dtype)
def cases(rng):
    c = {}

    def add(name, inputs, build, out=F):
        c[name] = (inputs, build, out)

    def mm(name, a, b, weight=False):
        if weight:
            add(name, {'a': (a, F)}, lambda r: ([h.make_node('MatMul', ['a', 'w'], ['y'])], {'w': W(r, *b)}))
        else:
            add(name, {'a': (a, F), 'b': (b, F)}, lambda r: ([h.make_node('MatMul', ['a', 'b'], ['y'])], {}))

    mm('matmul attention qk', [12, 197, 64], [12, 64, 197])
    mm('matmul 1024 square', [1024, 1024], [1024, 1024])
    mm('matmul gemv activation', [1, 4096], [4096, 4096])
    mm('matmul gemv weight', [1, 1280], [1280, 1000], True)
    mm('matmul batch 4 weight', [4, 4096], [4096, 4096], True)
    mm('matmul 16384 deep', [64, 16384], [16384, 64])

    def conv(name, x, w, **attrs):
        add(name, {'x': (x, F)}, lambda r: ([h.make_node('Conv', ['x', 'w'], ['y'], **attrs)], {'w': W(r, *w)}))

    conv('conv 3x3 64 on 128x128', [1, 64, 128, 128], [64, 64, 3, 3], pads=[1, 1, 1, 1])
    conv('conv 1x1 128->256 on 64x64', [1, 128, 64, 64], [256, 128, 1, 1])
    conv('conv 5x5 32->64 on 64x64', [1, 32, 64, 64], [64, 32, 5, 5], pads=[2, 2, 2, 2])
    conv('conv depthwise 3x3 on 128x128', [1, 64, 128, 128], [64, 1, 3, 3], pads=[1, 1, 1, 1], group=64)
    conv('conv 7x7 stem on 512x512', [1, 3, 512, 512], [64, 3, 7, 7], pads=[3, 3, 3, 3], strides=[2, 2])
    conv('conv grouped 8 on 56x56', [1, 256, 56, 56], [256, 32, 3, 3], pads=[1, 1, 1, 1], group=8)
    conv('conv 1-D 256 over 4000', [1, 256, 4000], [256, 256, 3], pads=[1, 1])
    conv('conv 3-D 32 on 16x56x56', [1, 32, 16, 56, 56], [32, 32, 3, 3, 3], pads=[1] * 6)
    add('convtranspose 4x4 stride 2', {'x': ([1, 256, 32, 32], F)},
        lambda r: ([h.make_node('ConvTranspose', ['x', 'w'], ['y'], strides=[2, 2], pads=[1, 1, 1, 1])],
                   {'w': W(r, 256, 128, 4, 4)}))

    def unary(name, opname, shape, **attrs):
        add(name, {'x': (shape, F)}, lambda r: ([h.make_node(opname, ['x'], ['y'], **attrs)], {}))

    unary('softmax last axis 32000', 'Softmax', [64, 32000], axis=-1)
    unary('softmax axis 1 of 4-D', 'Softmax', [8, 1000, 32, 32], axis=1)
    unary('reducemean last axis', 'ReduceMean', [8192, 1024], axes=[1])
    unary('reducemean first axis', 'ReduceMean', [1024, 8192], axes=[0])
    unary('reducemean middle axis', 'ReduceMean', [32, 1024, 256], axes=[1])
    unary('reducemax middle axis', 'ReduceMax', [32, 1024, 256], axes=[1])
    unary('erf', 'Erf', [4, 1024, 1024])
    unary('sigmoid', 'Sigmoid', [4, 1024, 1024])
    unary('transpose 3-D', 'Transpose', [64, 256, 256], perm=[0, 2, 1])
    unary('transpose to NHWC', 'Transpose', [1, 256, 56, 56], perm=[0, 2, 3, 1])
    unary('maxpool 3x3 stride 2', 'MaxPool', [1, 64, 224, 224], kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1])
    unary('globalaveragepool', 'GlobalAveragePool', [8, 512, 28, 28])
    unary('depthtospace', 'DepthToSpace', [1, 256, 64, 64], blocksize=2)
    add('argmax last axis', {'x': ([4096, 1000], F)},
        lambda r: ([h.make_node('ArgMax', ['x'], ['y'], axis=1, keepdims=0)], {}), I64)
    add('topk 50 of 32000', {'x': ([256, 32000], F)},
        lambda r: ([h.make_node('TopK', ['x', 'k'], ['y', 'i'], axis=-1)], {'k': np.array([50], np.int64)}))
    add('pow square', {'x': ([4, 1024, 1024], F)},
        lambda r: ([h.make_node('Pow', ['x', 'p'], ['y'])], {'p': np.array(2.0, np.float32)}))
    add('layernormalization', {'x': ([4096, 1024], F)},
        lambda r: ([h.make_node('LayerNormalization', ['x', 's', 'b'], ['y'], axis=-1)],
                   {'s': np.ones(1024, np.float32), 'b': np.zeros(1024, np.float32)}))
    add('instancenormalization', {'x': ([1, 64, 112, 112], F)},
        lambda r: ([h.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'])],
                   {'s': r.random(64).astype(np.float32), 'b': r.random(64).astype(np.float32)}))
    add('batchnormalization', {'x': ([1, 64, 112, 112], F)},
        lambda r: ([h.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'])],
                   {k: r.random(64).astype(np.float32) + 0.5 for k in 'sbmv'}))
    add('resize linear 2x', {'x': ([1, 64, 128, 128], F)},
        lambda r: ([h.make_node('Resize', ['x', '', 's'], ['y'], mode='linear')],
                   {'s': np.array([1, 1, 2, 2], np.float32)}))
    add('gridsample bilinear', {'x': ([1, 32, 128, 128], F), 'g': ([1, 128, 128, 2], F)},
        lambda r: ([h.make_node('GridSample', ['x', 'g'], ['y'])], {}))
    add('gather embedding', {'i': ([1, 512], I64)},
        lambda r: ([h.make_node('Gather', ['e', 'i'], ['y'], axis=0)],
                   {'e': r.standard_normal((30000, 768)).astype(np.float32)}))
    add('einsum attention', {'x': ([1, 12, 197, 64], F), 'z': ([1, 12, 197, 64], F)},
        lambda r: ([h.make_node('Einsum', ['x', 'z'], ['y'], equation='bhid,bhjd->bhij')], {}))
    add('lstm batch 8', {'x': ([50, 8, 256], F)},
        lambda r: ([h.make_node('LSTM', ['x', 'w', 'r', 'b'], ['y'], hidden_size=256)],
                   {'w': W(r, 1, 1024, 256), 'r': W(r, 1, 1024, 256), 'b': W(r, 1, 2048)}))
    add('gru batch 1', {'x': ([100, 1, 128], F)},
        lambda r: ([h.make_node('GRU', ['x', 'w', 'r', 'b'], ['y'], hidden_size=256)],
                   {'w': W(r, 1, 768, 128), 'r': W(r, 1, 768, 256), 'b': W(r, 1, 1536)}))
    add('concat channels', {'x': ([1, 256, 112, 112], F)},
        lambda r: ([h.make_node('Concat', ['x', 'x'], ['y'], axis=1)], {}))
    add('where', {'x': ([4, 1024, 1024], F)},
        lambda r: ([h.make_node('Greater', ['x', 'z'], ['c']), h.make_node('Where', ['c', 'x', 'z'], ['y'])],
                   {'z': np.zeros(1, np.float32)}))
    add('cumsum', {'x': ([64, 4096, 64], F)},
        lambda r: ([h.make_node('CumSum', ['x', 'a'], ['y'])], {'a': np.array(1, np.int64)}))
    return c


def slug(name):
    return re.sub(r'[^A-Za-z0-9]+', '_', name).strip('_')


def make(name, case, rng):
    """The case's model and inputs under OUT (again when this file is newer); (onnx path, [NAME=FILE])."""
    inputs, build, out_type = case
    path = os.path.join(OUT, slug(name) + '.onnx')
    feeds = ['%s=%s' % (n, os.path.join(OUT, '%s.%s.npy' % (slug(name), n))) for n in inputs]
    nodes, inits = build(rng)
    if os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(__file__):
        return path, feeds
    graph = h.make_graph(nodes, slug(name), [h.make_tensor_value_info(n, t, s) for n, (s, t) in inputs.items()],
                         [h.make_tensor_value_info('y', out_type, None)],
                         [nh.from_array(v, k) for k, v in inits.items()])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)])
    model.ir_version = 8
    for n, (s, t) in inputs.items():
        a = rng.standard_normal(s).astype(np.float32) if t == F else rng.integers(0, 1000, s).astype(np.int64)
        np.save(os.path.join(OUT, '%s.%s.npy' % (slug(name), n)), a)
    save(model, path)
    return path, feeds


def tgc_ms(path, feeds, n):
    cmd = [TGC, 'run', path, '--devices', 'cpu', '--threads', 'cpu=%d' % THREADS, '--repeat', str(n)]
    for f in feeds:
        cmd += ['--input', f]
    rc, out, _ = run(cmd)
    m = re.search(r'wall time per run: ([0-9.]+) ms', out)
    if rc != 0 or m is None:
        return None, (out.strip().splitlines() or ['exit %d' % rc])[-1][:100]
    return float(m.group(1)), ''


def ort_ms(path, feeds, n):
    env = dict(os.environ, NODE_PATH=os.path.join(PEERS, 'node', 'node_modules'))
    scratch = os.path.join(OUT, 'ort.out.npy')
    rc, out, _ = run(['node', os.path.join(HERE, 'ort_bench.js'), path, str(THREADS), str(n), scratch] + feeds, env)
    if rc != 0:
        return None, (out.strip().splitlines() or ['exit %d' % rc])[-1][:100]
    return json.loads(out.strip().splitlines()[-1])['median_ms'], ''


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(1234)
    all_cases = cases(rng)
    names = sys.argv[1:] or list(all_cases)
    unknown = [n for n in names if n not in all_cases]
    if unknown:
        sys.exit('op_scan.py: no case %s; cases: %s' % (', '.join(unknown), ', '.join(all_cases)))
    print('%d thread%s, best median of %d rounds (ms per run); tgc %s, ONNX Runtime (npm)' %
          (THREADS, '' if THREADS == 1 else 's', ROUNDS, TGC))
    print('%-34s %9s %9s %7s' % ('case', 'tgc', 'ORT', 'tgc/ORT'))
    for name in names:
        path, feeds = make(name, all_cases[name], rng)
        first, why = tgc_ms(path, feeds, 3)
        n = max(3, min(200, int(300 / first))) if first else 3
        best = {'tgc': None, 'ort': None}
        notes = {'tgc': why, 'ort': ''}
        for r in range(ROUNDS):
            for who in (('tgc', 'ort') if r % 2 == 0 else ('ort', 'tgc')):
                ms, note = (tgc_ms if who == 'tgc' else ort_ms)(path, feeds, n)
                notes[who] = note or notes[who]
                if ms is not None and (best[who] is None or ms < best[who]):
                    best[who] = ms
        t, o = best['tgc'], best['ort']
        if t is None or o is None:
            print('%-34s %9s %9s   %s' % (name, '%.3f' % t if t else '-', '%.3f' % o if o else '-',
                                           'tgc: ' + notes['tgc'] if t is None else 'ORT: ' + notes['ort']))
            continue
        print('%-34s %9.3f %9.3f %7.2f%s' % (name, t, o, t / o, '  behind' if t / o >= 1.2 else ''), flush=True)


if __name__ == '__main__':
    main()
