// model.mjs: the forward pass of a stories260K-shaped model (dim 64, hidden 172, 5 layers, 8 heads, 4
// KV heads, vocab 512, seq_len 512) over 128 and 512 tokens, WASM SIMD in node (the loader's
// Model.forward, as the page runs it) against the same C built natively (gcc -O3 -march=native), in one
// run. The real checkpoint (../shared/data/stories260K) when present, else one of the same shape with
// seeded weights (the time does not depend on the values). Figures printed, never asserted; records
// appended to build/bench.json.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const path = (p) => new URL(p, ROOT).pathname;
const SIZES = [128, 512];
const SHARED = process.env.ATTNVIZ_SHARED || path('../shared');
const REAL = join(SHARED, 'data', 'stories260K');

/** A stories260K-shaped checkpoint with seeded weights, and a 512-piece tokenizer of byte pieces. */
function syntheticFiles() {
  const [dim, hid, L, H, KV, V, S] = [64, 172, 5, 8, 4, 512, 512];
  const kvd = (dim / H) * KV;
  const floats = V * dim + L * dim + L * dim * dim * 2 + L * kvd * dim * 2 + L * dim + 3 * L * hid * dim + dim + S * (dim / H);
  const buf = new ArrayBuffer(28 + 4 * floats), dv = new DataView(buf);
  [dim, hid, L, H, KV, V, S].forEach((v, i) => dv.setInt32(4 * i, v, true));
  let x = 1;
  for (let i = 0; i < floats; i++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; dv.setFloat32(28 + 4 * i, (x / 2 ** 32 - 0.5) * 0.2, true); }
  const enc = new TextEncoder(), parts = [new Uint8Array(new Int32Array([8]).buffer)];
  for (let i = 0; i < V; i++) {
    const p = enc.encode(i < 3 ? ['<unk>', '\n<s>\n', '\n</s>\n'][i] : i < 259 ? `<0x${(i - 3).toString(16).padStart(2, '0').toUpperCase()}>` : `p${i}`);
    const h = new DataView(new ArrayBuffer(8));
    h.setInt32(4, p.length, true);
    parts.push(new Uint8Array(h.buffer), p);
  }
  const tok = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) { tok.set(p, at); at += p.length; }
  return { model: new Uint8Array(buf), tok };
}

const real = existsSync(join(REAL, 'stories260K.bin'));
const files = real ? { model: readFileSync(join(REAL, 'stories260K.bin')), tok: readFileSync(join(REAL, 'tok512.bin')) } : syntheticFiles();
mkdirSync(path('build/native'), { recursive: true });
const ckpt = real ? join(REAL, 'stories260K.bin') : path('build/native/bench-model.bin');
if (!real) writeFileSync(ckpt, files.model);

const exe = path('build/native/model_native');
const srcs = execFileSync('bash', ['-c', 'ls src/*.c'], { cwd: path('.'), encoding: 'utf8' }).trim().split('\n');
execFileSync('gcc', ['-O3', '-march=native', '-std=c11', '-ffp-contract=off', '-Wall', '-Wextra', '-Werror', '-Wno-unused-function',
  '-Iinclude', '-Isrc', 'bench/model_native.c', ...srcs, '-lm', '-o', exe], { cwd: path('.'), stdio: 'inherit' });
const native = new Map(execFileSync(exe, [ckpt, ...SIZES.map(String)], { encoding: 'utf8' }).trim().split('\n')
  .map((l) => JSON.parse(l)).map((r) => [r.n, r.ms]));

const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT), simd: true });
const { model, message } = av.model(files.model, files.tok);
if (!model) throw new Error(message);
const records = [];
console.log(`\nforward pass of ${real ? 'stories260K' : 'a stories260K-shaped model (seeded weights; ../shared absent)'}, capturing Q, K, V:`);
console.log('  n      wasm ms   native ms   wasm/native');
for (const n of SIZES) {
  const ids = Int32Array.from({ length: n }, (_, t) => (t ? (37 * t) % 512 : 1));
  const ms = medianMs(() => model.forward(ids), { minCalls: 3, budgetMs: 400 });
  const nat = native.get(n);
  console.log(`  ${String(n).padEnd(6)} ${ms.toFixed(2).padStart(8)} ${nat.toFixed(2).padStart(11)} ${(ms / nat).toFixed(2).padStart(12)}×`);
  records.push({ name: 'model/forward/wasm', n, d: 8, ms, baseline: 'model/forward/native', baseline_ms: nat, real });
}
model.free();
appendRecords(records);
