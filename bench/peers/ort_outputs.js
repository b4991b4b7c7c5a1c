// Every output of one ONNX Runtime run, as .npy files (quantize_qdq.py's
// calibration: the float model with its activations made graph outputs).
//
//   node ort_outputs.js MODEL.onnx OUTDIR NAME=INPUT.npy...
//
// Loads MODEL with ORT's CPU execution provider (one thread), feeds each
// INPUT.npy (as ort_bench.js reads them) to input NAME, runs once and writes
// output i (sess.outputNames order) to OUTDIR/i.npy, and OUTDIR/outputs.json:
// {"OUTPUT NAME": "i.npy", ...}. Resolve onnxruntime-node from NODE_PATH.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy, writeNpy } = require('./npy');

async function main() {
  const [model, outDir, ...inputs] = process.argv.slice(2);
  if (!outDir) {
    console.error('usage: node ort_outputs.js MODEL.onnx OUTDIR NAME=INPUT.npy...');
    process.exit(2);
  }
  const sess = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const arg of inputs) {
    const eq = arg.indexOf('=');
    const x = readNpy(arg.slice(eq + 1));
    feeds[arg.slice(0, eq)] = new ort.Tensor(x.type, x.data, x.shape);
  }
  const out = await sess.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  const index = {};
  sess.outputNames.forEach((name, i) => {
    const y = out[name];
    writeNpy(path.join(outDir, i + '.npy'), y.dims, y.data, y.type);
    index[name] = i + '.npy';
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(index));
}

main().catch(e => { console.error('ort_outputs: ' + (e && e.stack || e)); process.exit(1); });
