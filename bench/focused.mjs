// focused.mjs: the focused matrix alone, WASM SIMD in node against the same C built natively, at whole and
// fractional p (the map's tiny entries make subnormal products in the float gemm; docs/performance.md).
//   node bench/focused.mjs [NATIVE_BINARY [WASM_FILE]]   (defaults: build/native/kernels_native, build/wasm/attnviz.wasm)
// Alternating rounds (ATTNVIZ_ROUNDS, default 5), each side its quietest median. Figures are printed, never asserted.
import { execFileSync } from 'node:child_process';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const NATIVE = process.argv[2] ?? new URL('build/native/kernels_native', ROOT).pathname;
const WASM = new URL(`file://${process.argv[3] ?? new URL('build/wasm/attnviz.wasm', ROOT).pathname}`);
const av = await loadAttnviz({ source: WASM, simd: true });
const ROUNDS = Math.max(1, Number.parseInt(process.env.ATTNVIZ_ROUNDS ?? '5', 10) || 5);
const KNOB = Object.fromEntries(av.knobKeys.map((key, i) => [key, i + 1]));
const D = 64, variant = av.variantNames.indexOf('focused');
console.log('focused matrix, gaussian std 1, d = 64      wasm ms  native ms');
for (const n of [256, 1024]) {
  const lab = av.lab(n, D);
  lab.generate('gaussian', 1, 1);
  for (const p of [3, 3.1, 4, 6.5]) {
    let w = Infinity, nat = Infinity;
    for (let r = 0; r < ROUNDS; r++) {
      nat = Math.min(nat, JSON.parse(execFileSync(NATIVE, [n, D, variant, KNOB.p, p].map(String), { encoding: 'utf8' })).matrix_ms);
      w = Math.min(w, medianMs(() => lab.matrix({ variant: 'focused', p })));
    }
    console.log(`n ${String(n).padStart(5)}  p ${String(p).padEnd(4)} ${w.toFixed(3).padStart(22)} ${nat.toFixed(3).padStart(10)}`);
  }
  lab.free();
}
