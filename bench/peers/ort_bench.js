// Peer benchmark, ONNX Runtime side (issue 9, item 3).
//
//   node ort_bench.js MODEL.onnx INPUT.npy N OUTPUT.npy
//
// Loads MODEL with ONNX Runtime's CPU execution provider (npm onnxruntime-node,
// which bundles libonnxruntime.so), intraOpNumThreads 2 and interOpNumThreads 1,
// feeds INPUT.npy (float32, C order) to the model's first input, runs once to
// warm up and then N times, writes the first output to OUTPUT.npy and prints
// one JSON line: median ms, peak RSS (process.resourceUsage().maxRSS, KiB).
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
  if (descr !== '<f4' || fortran !== 'False')
    throw new Error(path + ': only little-endian float32 C-order supported, got ' + descr);
  const off = hstart + hlen;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  // copy: the Buffer slice may not be 4-byte aligned
  Buffer.from(data.buffer).set(buf.subarray(off, off + 4 * n));
  return { shape, data };
}

function writeNpy(path, shape, data) {
  const shp = '(' + shape.join(', ') + (shape.length === 1 ? ',' : '') + ')';
  let header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shp + ', }';
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
  const [model, input, nStr, outPath] = process.argv.slice(2);
  if (!outPath) {
    console.error('usage: node ort_bench.js MODEL.onnx INPUT.npy N OUTPUT.npy');
    process.exit(2);
  }
  const n = parseInt(nStr, 10);
  const sess = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 2,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // ORT_ALLOW_SPINNING=0 turns off the intra-op pool's spin-wait (default: ORT's, on)
    ...(process.env.ORT_ALLOW_SPINNING !== undefined ?
      { extra: { session: { intra_op: { allow_spinning: process.env.ORT_ALLOW_SPINNING } } } } : {}),
  });
  const x = readNpy(input);
  const feeds = { [sess.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  let out = await sess.run(feeds); // warm-up
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    out = await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  const y = out[sess.outputNames[0]];
  writeNpy(outPath, y.dims, y.data);
  console.log(JSON.stringify({
    model, median_ms: median, min_ms: times[0], runs: n,
    peak_rss_mib: process.resourceUsage().maxRSS / 1024,
    ort_version: ort.env.versions ? ort.env.versions.common : null,
    allow_spinning: process.env.ORT_ALLOW_SPINNING === undefined ? 'default' : process.env.ORT_ALLOW_SPINNING,
  }));
}

main().catch(e => { console.error('ort_bench: ' + (e && e.stack || e)); process.exit(1); });
