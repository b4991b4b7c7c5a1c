// ONNX Runtime for scripts/pretrained_check.py and examples/ocr/ocr.py's
// --backend ort: one process that keeps a session per model and answers one
// request per line on stdin with one JSON line on stdout.
//
//   node ort_runner.js        (NODE_PATH points at a folder holding onnxruntime-node)
//
// Request:  {"model": PATH, "feeds": {NAME: FILE.npy, ...}, "out_dir": DIR, "repeat": N, "threads": T}
// Answer:   {"inputs": [NAME...], "outputs": [NAME...]} for {"model": PATH, "describe": true};
//           {"outputs": {NAME: FILE.npy, ...}, "ms": [t1, ..., tN]} for a run: output i written as
//           DIR/out<i>.npy, the wall time in ms of each of N runs (after one warm-up when N > 1);
//           {"error": MESSAGE} when something fails.
// Inputs and outputs: float32, int64, int32 or bool .npy files, C order. Sessions use ORT's CPU
// execution provider, intraOpNumThreads T (default 2), interOpNumThreads 1, as bench/peers does.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require('onnxruntime-node');

const TYPES = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
                '|b1': ['bool', Uint8Array] };
const DESCR = { float32: '<f4', int64: '<i8', int32: '<i4', bool: '|b1' };

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not a .npy file');
  const hlen = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = buf[6] === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(file + ': only C-order arrays');
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  if (!(descr in TYPES)) throw new Error(file + ': dtype ' + descr + ' not handled');
  const [type, Arr] = TYPES[descr];
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Arr(n);
  Buffer.from(data.buffer).set(buf.subarray(hstart + hlen, hstart + hlen + Arr.BYTES_PER_ELEMENT * n));
  return new ort.Tensor(type, data, shape);
}

function writeNpy(file, t) {
  const descr = DESCR[t.type];
  if (descr === undefined) throw new Error('output type ' + t.type + ' not handled');
  const shp = '(' + t.dims.join(', ') + (t.dims.length === 1 ? ',' : '') + ')';
  let header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ', }';
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  const d = t.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

const sessions = new Map();
async function session(model, threads) {
  const key = model + '#' + threads;
  if (!sessions.has(key))
    sessions.set(key, await ort.InferenceSession.create(model, { executionProviders: ['cpu'],
      intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' }));
  return sessions.get(key);
}

async function handle(req) {
  const s = await session(req.model, req.threads || 2);
  if (req.describe) return { inputs: s.inputNames, outputs: s.outputNames };
  const feeds = {};
  for (const [name, file] of Object.entries(req.feeds)) feeds[name] = readNpy(file);
  const repeat = req.repeat || 1;
  if (repeat > 1) await s.run(feeds);
  const ms = [];
  let out;
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    out = await s.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  fs.mkdirSync(req.out_dir, { recursive: true });
  const outputs = {};
  for (const [i, name] of s.outputNames.entries()) {
    const file = path.join(req.out_dir, 'out' + i + '.npy');
    writeNpy(file, out[name]);
    outputs[name] = file;
  }
  return { outputs, ms };
}

const rl = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
rl.on('line', line => {
  queue = queue.then(async () => {
    let answer;
    try { answer = await handle(JSON.parse(line)); } catch (e) { answer = { error: String(e && e.message || e) }; }
    process.stdout.write(JSON.stringify(answer) + '\n');
  });
});
