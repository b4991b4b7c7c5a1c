// Peer benchmark, ONNX Runtime side (issue 9, item 3).
//
//   node ort_bench.js MODEL.onnx THREADS N OUTPUT.npy NAME=INPUT.npy...
//
// Loads MODEL with ONNX Runtime's CPU execution provider (npm onnxruntime-node,
// which bundles libonnxruntime.so), intraOpNumThreads THREADS and
// interOpNumThreads 1, feeds each INPUT.npy (float32, float16, int64 or bool, C order)
// to the model's input NAME, runs once to warm up and then N times, writes the
// first output to OUTPUT.npy and prints one JSON line: median and min ms, CPU
// ms per run (user + system of the process over the N runs, over N), peak RSS
// (process.resourceUsage().maxRSS, KiB), and the session's creation and its
// first (warm-up) run in ms (N may be 0: start-up only, for startup.py).
// ORT_PROFILE=PREFIX writes ORT's own profile (every node's time in every run,
// the warm-up included) to PREFIX_DATE.json, for profile.py.
// Resolve onnxruntime-node from NODE_PATH (run.sh points it at build/peers/node).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1]
    .split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  if (fortran !== 'False') throw new Error(path + ': only C-order arrays supported');
  // .npy dtype -> ORT tensor type and the typed array that holds it
  const types = { '<f4': ['float32', Float32Array], '<f2': ['float16', Uint16Array], '<i8': ['int64', BigInt64Array],
    '|b1': ['bool', Uint8Array] };
  if (!(descr in types)) throw new Error(path + ': only float32, float16, int64 and bool supported, got ' + descr);
  const [type, Arr] = types[descr];
  const off = hstart + hlen;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Arr(n);
  // copy: the Buffer slice may not be aligned for the element type
  Buffer.from(data.buffer).set(buf.subarray(off, off + Arr.BYTES_PER_ELEMENT * n));
  return { type, shape, data };
}

function writeNpy(path, shape, data, type) {
  const shp = '(' + shape.join(', ') + (shape.length === 1 ? ',' : '') + ')';
  const descr = type === 'float16' ? '<f2' : '<f4';
  let header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ', }';
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const [model, threadsStr, nStr, outPath, ...inputs] = process.argv.slice(2);
  if (!inputs.length) {
    console.error('usage: node ort_bench.js MODEL.onnx THREADS N OUTPUT.npy NAME=INPUT.npy...');
    process.exit(2);
  }
  const n = parseInt(nStr, 10);
  const threads = parseInt(threadsStr, 10);
  const tCreate = process.hrtime.bigint();
  const sess = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // ORT_ALLOW_SPINNING=0 turns off the intra-op pool's spin-wait (default: ORT's, on)
    ...(process.env.ORT_ALLOW_SPINNING !== undefined ?
      { extra: { session: { intra_op: { allow_spinning: process.env.ORT_ALLOW_SPINNING } } } } : {}),
    ...(process.env.ORT_PROFILE ? { enableProfiling: true, profileFilePrefix: process.env.ORT_PROFILE } : {}),
  });
  const feeds = {};
  for (const arg of inputs) {
    const eq = arg.indexOf('=');
    const x = readNpy(arg.slice(eq + 1));
    feeds[arg.slice(0, eq)] = new ort.Tensor(x.type, x.data, x.shape);
  }
  const createMs = Number(process.hrtime.bigint() - tCreate) / 1e6;
  const tFirst = process.hrtime.bigint();
  let out = await sess.run(feeds); // warm-up
  const firstRunMs = Number(process.hrtime.bigint() - tFirst) / 1e6;
  const times = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    out = await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0); // user + system us of the whole process over the N runs
  times.sort((a, b) => a - b);
  const median = n === 0 ? null : n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  if (process.env.ORT_PROFILE) sess.endProfiling();
  const y = out[sess.outputNames[0]];
  writeNpy(outPath, y.dims, y.data, y.type);
  console.log(JSON.stringify({
    model, median_ms: median, min_ms: n ? times[0] : null, cpu_ms: n ? (cpu.user + cpu.system) / 1e3 / n : null,
    runs: n, threads, create_ms: createMs, first_run_ms: firstRunMs,
    peak_rss_mib: process.resourceUsage().maxRSS / 1024,
    ort_version: ort.env.versions ? ort.env.versions.common : null,
    allow_spinning: process.env.ORT_ALLOW_SPINNING === undefined ? 'default' : process.env.ORT_ALLOW_SPINNING,
  }));
}

main().catch(e => { console.error('ort_bench: ' + (e && e.stack || e)); process.exit(1); });
