// kernels.mjs: every variant's matrix and linear path, WASM SIMD in node against the same C built
// natively with gcc -O3 -march=native, in one run. Prints a table of ratios and appends records to
// build/bench.json. Figures are printed, never asserted.
// Each case runs in ATTNVIZ_ROUNDS (default 3) rounds, the native binary then WASM in each, and each side
// keeps its quietest round (the least of its medians): on a shared machine another tenant's burst only
// ever adds time, and alternating lets it land on either side rather than always on the one measured
// second.
import { execFileSync } from 'node:child_process';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const NATIVE = new URL('build/native/kernels_native', ROOT).pathname;
const D = 64;

const WASM = process.env.ATTNVIZ_WASM ? new URL(`file://${process.env.ATTNVIZ_WASM}`) : new URL('build/wasm/attnviz.wasm', ROOT);
const av = await loadAttnviz({ source: WASM, simd: true });
// every variant of the registry at its defaults (docs/variant-formulas.md); knob ids for the native side are enum
// av_knob values, the registry's knob order from AV_KNOB_CAUSAL = 1
const CASES = [...av.variantNames.map((name) => [name, {}]),
  // the recurrent families' knobs (docs/recurrent.md): decayed, forgetting, windowed, gated delta rule
  ['softmax', { causal: true, decay: 0.95 }], ['softmax', { causal: true, window: 64 }], ['elu', { causal: true, decay: 0.95 }],
  ['deltanet', { beta: 1, decay: 0.9 }],
  // the gated families with gates as data (kernels_native.c says which): one per token, or per channel
  ...['simple_gla', 'gdn', 'fox'].map((name) => [name, { gates: 1 }]),
  ...['gla', 'kda', 'dplr'].map((name) => [name, { gates: D }])];
const KNOB = Object.fromEntries(av.knobKeys.map((key, i) => [key, i + 1]));
// ATTNVIZ_ONLY=REGEX: only the variants whose name matches (a quick look at a few; make bench runs all)
const ONLY = process.env.ATTNVIZ_ONLY ? new RegExp(process.env.ATTNVIZ_ONLY) : null;
const ROUNDS = Math.max(1, Number.parseInt(process.env.ATTNVIZ_ROUNDS ?? '3', 10) || 3);
const records = [];
/** The gate arrays kernels_native.c makes for KNOB −1 (the same generators, seeds and a, b), into the lab. */
function gateArrays(lab, name, n, channels) {
  let st = lab.generateGates({ kind: 'uniform', channels, lo: 0.9, hi: 0.999, seed: 7,
    beta: { kind: 'uniform', lo: 0.2, hi: 1.5, seed: 8 } }).status;
  if (!st && name === 'dplr') {
    const { g, beta } = lab.gates(), K = lab.K, a = new Float32Array(n * D), b = new Float32Array(n * D);
    for (let t = 0; t < n; t++) {
      let ss = 0;
      for (let c = 0; c < D; c++) ss += K[t * D + c] * K[t * D + c];
      const inv = ss > 0 ? 1 / Math.sqrt(ss) : 0;
      for (let c = 0; c < D; c++) { a[t * D + c] = -K[t * D + c] * inv; b[t * D + c] = 0.5 * K[t * D + c] * inv; }
    }
    st = lab.setGates({ g, channels, beta, a, b }).status;
  }
  if (st) throw new Error(`${name}: the bench's gates were refused (${st})`);
}
/** The least of each key over rounds of {key: ms or null} (null stays null). */
const quietest = (rounds) => Object.fromEntries(Object.keys(rounds[0]).map((key) =>
  [key, rounds.some((r) => r[key] === null || r[key] === undefined) ? null : Math.min(...rounds.map((r) => r[key]))]));
console.log(`kernels: WASM SIMD (node ${process.versions.node}) vs native gcc -O3 -march=native, d = ${D}; ` +
  `each side the quietest of ${ROUNDS} alternating rounds (medians of repeated calls)`);
console.log('variant        n     wasm ms  native ms  ratio   | linear: wasm ms  native ms  ratio | chunkwise: wasm ms  native ms  ratio');
for (const n of [256, 1024]) {
  const lab = av.lab(n, D);
  for (const [name, knobs] of CASES) {
    if (ONLY && !ONLY.test(name)) continue;
    const variant = av.variantNames.indexOf(name);
    const { gates: channels, ...plain } = knobs;
    const flags = Object.entries(plain).flatMap(([k, v]) => [KNOB[k], typeof v === "boolean" ? Number(v) : v]);
    if (channels) flags.push(-1, channels);
    lab.generate('gaussian', 1, 1);
    lab.setGates(null);
    if (channels) gateArrays(lab, name, n, channels);
    const k = { variant: name, ...plain };
    const st = lab.matrix(k).status;
    if (st < 0) throw new Error(`${name}: ${lab.matrix(k).message}`);
    const hasLinear = lab.linear(k).status >= 0, hasChunkwise = lab.chunkwise(k).status >= 0;
    const nativeRounds = [], wasmRounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      nativeRounds.push(JSON.parse(execFileSync(NATIVE, [n, D, variant, ...flags].map(String), { encoding: 'utf8' })));
      wasmRounds.push({
        matrix: medianMs(() => lab.matrix(k)),
        linear: hasLinear ? medianMs(() => lab.linear(k)) : null,
        chunkwise: hasChunkwise ? medianMs(() => lab.chunkwise(k)) : null,
      });
    }
    const native = quietest(nativeRounds);
    const { matrix: wasmMs, linear: linMs, chunkwise: chunkMs } = quietest(wasmRounds);
    const label = `${name}${Object.keys(knobs).length ? JSON.stringify(knobs) : ''}`;
    records.push({ name: `matrix/${label}/wasm-simd`, n, d: D, ms: wasmMs, baseline: 'native gcc -O3 -march=native',
      baseline_ms: native.matrix_ms });
    if (linMs !== null && native.linear_ms !== null) {
      records.push({ name: `linear/${label}/wasm-simd`, n, d: D, ms: linMs, baseline: 'native gcc -O3 -march=native',
        baseline_ms: native.linear_ms });
    }
    if (chunkMs !== null && native.chunkwise_ms !== null) {
      records.push({ name: `chunkwise/${label}/wasm-simd`, n, d: D, ms: chunkMs, baseline: 'native gcc -O3 -march=native',
        baseline_ms: native.chunkwise_ms });
    }
    const col = (ms, base) => (ms === null || base === null ? ''.padEnd(27) : `${ms.toFixed(3).padStart(9)} ${base.toFixed(3).padStart(10)} ${(ms / base).toFixed(2).padStart(6)}`);
    console.log(`${label.padEnd(12)} ${String(n).padStart(5)} ${wasmMs.toFixed(3).padStart(10)} ${native.matrix_ms.toFixed(3).padStart(10)} ${(wasmMs / native.matrix_ms).toFixed(2).padStart(6)}   | ${col(linMs, native.linear_ms)} | ${col(chunkMs, native.chunkwise_ms)}`);
  }
  lab.free();
}

// the page's per-frame readouts and heatmap cells (docs/performance.md, "Readouts"): the focused matrix at
// its defaults against the softmax reference and V; the cells of M − A at the page's block size
console.log('\nreadouts (focused against softmax, dv = d)   wasm ms  native ms  ratio');
for (const n of [256, 1024]) {
  const b = Math.max(1, Math.ceil(n / 256));
  const lab = av.lab(n, D);
  lab.generate('gaussian', 1, 1);
  const k = { variant: 'focused' };
  lab.reference(k);
  lab.matrix(k);
  lab.readouts(k, { sv: null, reference: false, rows: true, summary: 'bench' });
  const rows = [
    ['av_readouts_rows', () => lab.readouts(k, { sv: null, reference: false, rows: true }), 'readouts_ms'],
    ['av_readouts_summarised', () => lab.readouts(k, { sv: null, reference: false, rows: true, summary: 'bench' }), 'summarised_ms'],
    [`av_downsample M − A, b = ${b}`, () => lab.downsample('M-A', b, 'mean'), 'downsample_ms'],
  ];
  const nativeRounds = [], wasmRounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    nativeRounds.push(JSON.parse(execFileSync(NATIVE, ['readouts', n, D, b].map(String), { encoding: 'utf8' })));
    wasmRounds.push(Object.fromEntries(rows.map(([label, fn]) => [label, medianMs(fn)])));
  }
  const native = quietest(nativeRounds), wasm = quietest(wasmRounds);
  for (const [label, , key] of rows) {
    const ms = wasm[label], base = native[key];
    records.push({ name: `readouts/${label}/wasm-simd`, n, d: D, ms, baseline: 'native gcc -O3 -march=native', baseline_ms: base });
    console.log(`${label.padEnd(30)} ${String(n).padStart(5)} ${ms.toFixed(3).padStart(10)} ${base.toFixed(3).padStart(10)} ${(ms / base).toFixed(2).padStart(6)}`);
  }
  console.log(`${'(av_reference_summary, once)'.padEnd(30)} ${String(n).padStart(5)} ${''.padStart(10)} ${native.summary_ms.toFixed(3).padStart(10)}`);
  lab.free();
}
appendRecords(records);
