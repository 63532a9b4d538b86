// swap.mjs: the swapped forward pass (av_forward_swapped) of stories260K over 256 tokens with elu+1 in every
// head, by the matrix and the recurrent path, and with every head kept: WASM SIMD in node against the same C
// built natively (gcc -O3 -march=native), in one run, as ratios. Skipped (one line) without the shared data:
// the figure is about the real model. Printed, never asserted; records appended to build/bench.json.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const path = (p) => new URL(p, ROOT).pathname;
const N = 256;
const SHARED = process.env.ATTNVIZ_SHARED || path('../shared');
const ckpt = join(SHARED, 'data', 'stories260K', 'stories260K.bin');
if (!existsSync(ckpt)) {
  console.log(`\nswapped forward pass: skipped (${ckpt} not found; set ATTNVIZ_SHARED)`);
  process.exit(0);
}
const exe = path('build/native/swap_native');
const srcs = execFileSync('bash', ['-c', 'ls src/*.c'], { cwd: path('.'), encoding: 'utf8' }).trim().split('\n');
execFileSync('gcc', ['-O3', '-march=native', '-std=c11', '-ffp-contract=off', '-Wall', '-Wextra', '-Werror', '-Wno-unused-function',
  '-Iinclude', '-Isrc', 'bench/swap_native.c', ...srcs, '-lm', '-o', exe], { cwd: path('.'), stdio: 'inherit' });
const native = new Map(execFileSync(exe, [ckpt, String(N)], { encoding: 'utf8' }).trim().split('\n')
  .map((l) => JSON.parse(l)).map((r) => [r.name.split('/')[1], r.ms]));

const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT), simd: true });
const ex = av.exports;
const bytes = readFileSync(ckpt);
const mbuf = av.malloc(bytes.length), mp = av.malloc(256);
new Uint8Array(av.memory.buffer, mbuf, bytes.length).set(bytes);
if (ex.av_model_parse(mp, mbuf, bytes.length) !== 0) throw new Error('stories260K does not parse in wasm');
const [, , L, H, , V] = new Int32Array(av.memory.buffer, mp, 7);
const prm = av.malloc(ex.av_params_size()), heads = av.malloc(4 * L * H), ids = av.malloc(4 * N);
const logits = av.malloc(4 * N * V);
ex.av_params_default(prm, 1 /* AV_ELU */);
ex.av_params_set(prm, 1 /* AV_KNOB_CAUSAL */, 1);
new Int32Array(av.memory.buffer, heads, L * H).fill(prm);
new Int32Array(av.memory.buffer, ids, N).set(Int32Array.from({ length: N }, (_, t) => (t ? (37 * t) % V : 1)));
const records = [];
console.log(`\nswapped forward pass of stories260K over ${N} tokens (logits at every position):`);
console.log('  heads             wasm ms   native ms   wasm/native');
for (const [name, h, p] of [['elu-matrix', heads, 0], ['elu-recurrent', heads, 1], ['kept', 0, 0]]) {
  const wb = ex.av_forward_swapped_work(mp, N, h, p);
  const w = av.malloc(wb);
  const run = () => {
    const st = ex.av_forward_swapped(logits, 0, 0, 0, mp, ids, N, h, p, 0, w, wb);
    if (st !== 0) throw new Error(`av_forward_swapped returned ${st}`);
  };
  const ms = medianMs(run, { minCalls: 3, budgetMs: 400 });
  av.free(w);
  const nat = native.get(name);
  console.log(`  ${name.padEnd(16)} ${ms.toFixed(2).padStart(8)} ${nat.toFixed(2).padStart(11)} ${(ms / nat).toFixed(2).padStart(12)}×`);
  records.push({ name: `swap/${name}/wasm`, n: N, d: 8, ms, baseline: `swap/${name}/native`, baseline_ms: nat, real: true });
}
for (const p of [mbuf, mp, prm, heads, ids, logits]) av.free(p);
appendRecords(records);
