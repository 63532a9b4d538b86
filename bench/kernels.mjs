// kernels.mjs: every variant's matrix and linear path, WASM SIMD in node against the same C built
// natively with gcc -O3 -march=native, in one run. Prints a table of ratios and appends records to
// build/bench.json. Figures are printed, never asserted.
import { execFileSync } from 'node:child_process';
import { loadAttnviz } from '../web/attnviz.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const NATIVE = new URL('build/native/kernels_native', ROOT).pathname;
const D = 64;

const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT), simd: true });
// every variant of the registry at its defaults (docs/variant-formulas.md); knob ids for the native side are enum
// av_knob values, the registry's knob order from AV_KNOB_CAUSAL = 1
const CASES = av.variantNames.map((name) => [name, {}]);
const KNOB = Object.fromEntries(av.knobKeys.map((key, i) => [key, i + 1]));
const records = [];
console.log(`kernels: WASM SIMD (node ${process.versions.node}) vs native gcc -O3 -march=native, d = ${D}`);
console.log('variant        n     wasm ms  native ms  ratio   | linear: wasm ms  native ms  ratio');
for (const n of [256, 1024]) {
  const lab = av.lab(n, D);
  for (const [name, knobs] of CASES) {
    const variant = av.variantNames.indexOf(name);
    const flags = Object.entries(knobs).flatMap(([k, v]) => [KNOB[k], v]);
    const native = JSON.parse(execFileSync(NATIVE, [n, D, variant, ...flags].map(String), { encoding: 'utf8' }));
    lab.generate('gaussian', 1, 1);
    const k = { variant: name, ...knobs };
    const st = lab.matrix(k).status;
    if (st < 0) throw new Error(`${name}: ${lab.matrix(k).message}`);
    const wasmMs = medianMs(() => lab.matrix(k));
    let linMs = null;
    if (lab.linear(k).status >= 0) linMs = medianMs(() => lab.linear(k));
    records.push({ name: `matrix/${name}/wasm-simd`, n, d: D, ms: wasmMs, baseline: 'native gcc -O3 -march=native',
      baseline_ms: native.matrix_ms });
    if (linMs !== null && native.linear_ms !== null) {
      records.push({ name: `linear/${name}/wasm-simd`, n, d: D, ms: linMs, baseline: 'native gcc -O3 -march=native',
        baseline_ms: native.linear_ms });
    }
    const lin = linMs === null ? '' : `${linMs.toFixed(3).padStart(9)} ${native.linear_ms.toFixed(3).padStart(10)} ${(linMs / native.linear_ms).toFixed(2).padStart(6)}`;
    console.log(`${name.padEnd(12)} ${String(n).padStart(5)} ${wasmMs.toFixed(3).padStart(10)} ${native.matrix_ms.toFixed(3).padStart(10)} ${(wasmMs / native.matrix_ms).toFixed(2).padStart(6)}   | ${lin}`);
  }
  lab.free();
}
appendRecords(records);
