// Elementwise chains, ONNX Runtime side (issue 20; bench/peers/ew_chains.py drives it).
//
//   node ort_ew.js SPEC.json
//
// SPEC: {"op", "model8", "model1", "kind": "unary"|"clip"|"binary"|"compare",
//        "x": [lo, hi, sign], "c": [lo, hi, sign] (binary), "sizes": [n...],
//        "threads": [t...], "spins": ["1", "0"], "repeat": R, "budget_s": B}
// model8 is the chain of 8 (comparisons: 8 independent ops), model1 the
// chain of 1, both over a symbolic length N, float32. Inputs are drawn here
// from the same ranges bench_elementwise uses (x uniform in [lo, hi], times a
// random sign if `sign`; c likewise, a fed input of x's shape). For each
// thread count and spin setting (session.intra_op.allow_spinning) it opens
// both models (CPU EP, intraOpNumThreads t, interOpNumThreads 1, sequential,
// all graph optimisations) and, per size, runs each once to warm up and then
// R times, the two chains alternating run by run (R drops, not below 3, where
// a size's runs would pass budget_s). Outputs go into pre-allocated tensors.
// One JSON line per (size, threads, spin): median ms of each chain.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function median(v) {
  const s = [...v].sort((a, b) => a - b), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// splitmix64 in BigInt is slow for 2^24 values: a 32-bit xorshift does.
function filler(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

function input(n, [lo, hi, sign], seed) {
  const r = filler(seed), a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let v = lo + (hi - lo) * r();
    if (sign && r() < 0.5) v = -v;
    a[i] = v;
  }
  return a;
}

async function timeRun(sess, feeds, fetches) {
  const t0 = process.hrtime.bigint();
  await sess.run(feeds, fetches);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const budgetMs = (spec.budget_s || 0.5) * 1e3;
  for (const t of spec.threads) {
    for (const spin of spec.spins) {
      const opts = {
        executionProviders: ['cpu'], intraOpNumThreads: t, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: 'all',
        extra: { session: { intra_op: { allow_spinning: spin } } },
      };
      const s8 = await ort.InferenceSession.create(spec.model8, opts);
      const s1 = await ort.InferenceSession.create(spec.model1, opts);
      for (const n of spec.sizes) {
        const feeds = { x: new ort.Tensor('float32', input(n, spec.x, 1234), [n]) };
        if (spec.kind === 'binary') feeds.c = new ort.Tensor('float32', input(n, spec.c, 4321), [n]);
        // Outputs pre-allocated (fetches), so no run allocates an output
        // buffer in node (less GC noise); comparisons' outputs are bool.
        const fetches = sess => Object.fromEntries(sess.outputNames.map(name => [name,
          spec.kind === 'compare' ? new ort.Tensor('bool', new Uint8Array(n), [n])
                                  : new ort.Tensor('float32', new Float32Array(n), [n])]));
        const f8 = fetches(s8), f1 = fetches(s1);
        const est = (await timeRun(s8, feeds, f8)) + (await timeRun(s1, feeds, f1));
        let reps = spec.repeat;
        if (est * reps > budgetMs) reps = Math.max(3, Math.floor(budgetMs / est));
        const t8 = [], t1 = [];
        for (let r = 0; r < reps; r++) {
          if (r & 1) { t1.push(await timeRun(s1, feeds, f1)); t8.push(await timeRun(s8, feeds, f8)); }
          else { t8.push(await timeRun(s8, feeds, f8)); t1.push(await timeRun(s1, feeds, f1)); }
        }
        console.log(JSON.stringify({ op: spec.op, n, threads: t, spin,
          chain8_ms: median(t8), chain1_ms: median(t1), reps,
          ort_version: ort.env.versions ? ort.env.versions.common : null }));
      }
      if (s8.release) await s8.release();
      if (s1.release) await s1.release();
    }
  }
}

main().catch(e => { console.error('ort_ew: ' + (e && e.stack || e)); process.exit(1); });
