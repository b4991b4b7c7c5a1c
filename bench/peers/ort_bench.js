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
const ort = require('onnxruntime-node');
const { readNpy, writeNpy } = require('./npy');

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
