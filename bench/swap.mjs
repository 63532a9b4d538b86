// swap.mjs: "what the model loses" on stories260K, WASM SIMD in node against the same C built natively
// (gcc -O3 -march=native), as ratios:
//   pass      the swapped forward pass (av_forward_swapped) over 256 tokens with elu+1 in every head, by the
//             matrix and the recurrent path, and with every head kept;
//   distill   the page's distillation of all 40 heads: the panel's training text (TRAIN_TEXT of
//             web/ui/loss-panel.mjs) through the model, then per head Hedgehog's W from the identity and 100
//             steps of av_distill (lr 0.05) in calls of 10, as web/compute/loses.mjs distillHeads runs them;
//   continue  the greedy continuations of the page (32 tokens after text128's 128): the original's
//             (av_continue_swapped, every head kept: av_forward on its KV cache), the same tokens by a whole
//             pass per token (what it cost before the cache was kept), and elu+1 in every head.
// The sides alternate in ATTNVIZ_ROUNDS rounds (default 2: native, WASM, native, WASM), each figure a median
// of calls, and each side keeps its quietest round (docs/performance.md). ATTNVIZ_SWAP=pass,distill,continue
// picks groups. Skipped (one line) without the shared data: the figures are about the real model. Printed,
// never asserted; records appended to build/bench.json.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { Model } from '../web/wasm/model.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const path = (p) => new URL(p, ROOT).pathname;
const N = 256, DISTILL_STEPS = 100, CHUNK = 10, LR = 0.05, CONT_STEPS = 32;
const ROUNDS = Math.max(1, Number.parseInt(process.env.ATTNVIZ_ROUNDS ?? '2', 10) || 2);
const GROUPS = new Set((process.env.ATTNVIZ_SWAP ?? 'pass,distill,continue').split(','));
const SHARED = process.env.ATTNVIZ_SHARED || path('../shared');
const dir = join(SHARED, 'data', 'stories260K');
const ckpt = join(dir, 'stories260K.bin');
if (!existsSync(ckpt)) {
  console.log(`\nswapped forward pass: skipped (${ckpt} not found; set ATTNVIZ_SHARED)`);
  process.exit(0);
}
const exe = path('build/native/swap_native');
const srcs = execFileSync('bash', ['-c', 'ls src/*.c'], { cwd: path('.'), encoding: 'utf8' }).trim().split('\n');
execFileSync('gcc', ['-O3', '-march=native', '-std=c11', '-ffp-contract=off', '-Wall', '-Wextra', '-Werror', '-Wno-unused-function',
  '-Iinclude', '-Isrc', 'bench/swap_native.c', ...srcs, '-lm', '-o', exe], { cwd: path('.'), stdio: 'inherit' });

const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT), simd: true });
const ex = av.exports;
const model = new Model(av, readFileSync(ckpt), readFileSync(join(dir, 'tok512.bin')));
if (model.status) throw new Error(`stories260K: ${model.message}`);
const mp = model.mp, { layers: L, heads: H, kvHeads: KVH, vocab: V, headSize: d } = model.config;
const trainText = /export const TRAIN_TEXT = '([^']*)'/.exec(readFileSync(path('web/ui/loss-panel.mjs'), 'utf8'))?.[1];
if (!trainText) throw new Error('TRAIN_TEXT not found in web/ui/loss-panel.mjs');
const trainIds = Array.from(model.encode(trainText).ids);
const prompt = JSON.parse(readFileSync(join(dir, 'text128_tokens.json'), 'utf8')).ids;
const variant = (name) => {
  const v = av.variantNames.indexOf(name);
  if (v < 0) throw new Error(`no variant ${name}`);
  return v;
};
const causalParams = (name) => {
  const p = av.malloc(ex.av_params_size());
  ex.av_params_default(p, variant(name));
  ex.av_params_set(p, 1 /* AV_KNOB_CAUSAL */, 1);
  return p;
};
const elu = causalParams('elu'), hedgehog = causalParams('hedgehog');
const allElu = av.malloc(4 * L * H);
av.i32(allElu, L * H).fill(elu);
const putIds = (ids) => { const p = av.malloc(4 * ids.length); av.i32(p, ids.length).set(ids); return p; };
const fwb = ex.av_forward_work(mp) >>> 0, fw = av.malloc(fwb);

/** The swapped pass's three cases: {name: ms}. */
function wasmPass() {
  const ids = putIds(Array.from({ length: N }, (_, t) => (t ? (37 * t) % V : 1))), logits = av.malloc(4 * N * V);
  const out = {};
  for (const [name, h, p] of [['elu-matrix', allElu, 0], ['elu-recurrent', allElu, 1], ['kept', 0, 0]]) {
    const wb = ex.av_forward_swapped_work(mp, N, h, p) >>> 0, w = av.malloc(wb);
    out[name] = medianMs(() => {
      const st = ex.av_forward_swapped(logits, 0, 0, 0, mp, ids, N, h, p, 0, w, wb);
      if (st !== 0) throw new Error(`av_forward_swapped returned ${st}`);
    }, { minCalls: 3, budgetMs: 400 });
    av.free(w);
  }
  av.free(ids); av.free(logits);
  return out;
}

/** Every head's distillation (the capture included), as swap_native.c's: {ms, loss_after}. */
function wasmDistill() {
  const n = trainIds.length, ids = putIds(trainIds);
  const Q = av.malloc(4 * L * H * n * d), K = av.malloc(4 * L * KVH * n * d);
  const hq = av.malloc(4 * n * d), hk = av.malloc(4 * n * d), W = av.malloc(8 * d * d), M = av.malloc(16 * d * d);
  const loss = av.malloc(8 * CHUNK), lp = av.malloc(8);
  const dwb = ex.av_distill_work(hedgehog, n, d, d) >>> 0, dw = av.malloc(dwb);
  let after = 0;
  const run = () => {
    if (ex.av_forward(Q, K, 0, 0, mp, ids, 0, n, fw, fwb) !== 0) throw new Error('av_forward');
    let sum = 0;
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
      const kvh = Math.floor(h / (H / KVH));
      av.f32(hq, n * d).set(av.f32(Q + 4 * (l * H + h) * n * d, n * d));
      av.f32(hk, n * d).set(av.f32(K + 4 * (l * KVH + kvh) * n * d, n * d));
      const w0 = av.f64(W, d * d);
      w0.fill(0);
      for (let i = 0; i < d; i++) w0[i * d + i] = 1;
      for (let t = 0; t < DISTILL_STEPS; t += CHUNK) {
        const k = Math.min(CHUNK, DISTILL_STEPS - t);
        if (ex.av_distill(W, M, t, loss, k, LR, d, hq, hk, n, d, hedgehog, dw, dwb) < 0) throw new Error('av_distill');
      }
      if (ex.av_distill_loss(lp, 0, W, d, hq, hk, n, d, hedgehog, dw, dwb) < 0) throw new Error('av_distill_loss');
      sum += av.f64(lp, 1)[0];
    }
    after = sum / (L * H);
  };
  const ms = medianMs(run, { minCalls: 3, budgetMs: 2000, warmup: 1, warmupMs: 0 });
  for (const p of [ids, Q, K, hq, hk, W, M, loss, lp, dw]) av.free(p);
  return { ms, loss_after: after };
}

/** The three continuations: {name: {ms, tokens}}; the rerun's tokens checked against the cached ones. */
function wasmContinue() {
  const n = prompt.length, pp = putIds(prompt), op = av.malloc(4 * (n + CONT_STEPS)), np = av.malloc(4);
  const lg = av.malloc(4 * V), out = {};
  let kept = null;
  for (const [name, h] of [['kept', 0], ['kept-rerun', 0], ['elu', allElu]]) {
    const wb = ex.av_continue_swapped_work(mp, n + CONT_STEPS, h, 0) >>> 0, w = av.malloc(wb);
    let got = 0;
    const run = name === 'kept-rerun' ? () => {
      const ids = av.i32(op, n + CONT_STEPS);
      ids.set(prompt);
      got = n;
      while (got < n + CONT_STEPS) {
        if (ex.av_forward(0, 0, 0, lg, mp, op, 0, got, fw, fwb) !== 0) throw new Error('av_forward');
        const row = av.f32(lg, V);
        let best = 0;
        for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
        if (best === 1) break;
        av.i32(op, n + CONT_STEPS)[got++] = best;
      }
    } : () => {
      const st = ex.av_continue_swapped(op, np, mp, pp, n, CONT_STEPS, h, 0, 0, w, wb);
      if (st < 0) throw new Error(`av_continue_swapped returned ${st}`);
      got = av.i32(np, 1)[0];
    };
    const ms = medianMs(run, { minCalls: 3, budgetMs: 1000, warmup: 1, warmupMs: 0 });
    const toks = Array.from(av.i32(op, got));
    if (name === 'kept') kept = toks;
    if (name === 'kept-rerun' && toks.join() !== kept.join()) throw new Error('the rerun gave other tokens');
    out[name] = { ms, tokens: got - n };
    av.free(w);
  }
  for (const p of [pp, op, np, lg]) av.free(p);
  return out;
}

const native = (args) => Object.fromEntries(execFileSync(exe, args.map(String), { encoding: 'utf8' }).trim().split('\n')
  .map((l) => JSON.parse(l)).map((r) => [r.name.split('/')[1], r]));
const least = (a, b) => (b && b.ms < a.ms ? b : a);
const keep = (best, got) => { for (const [k, v] of Object.entries(got)) best[k] = least(v, best[k]); };
const nat = {}, wasm = {};
for (let round = 0; round < ROUNDS; round++) {
  if (GROUPS.has('pass')) keep(nat, native(['pass', ckpt, N]));
  if (GROUPS.has('distill')) keep(nat, native(['distill', ckpt, DISTILL_STEPS, CHUNK, ...trainIds]));
  if (GROUPS.has('continue')) keep(nat, native(['continue', ckpt, CONT_STEPS, ...prompt]));
  if (GROUPS.has('pass')) for (const [k, ms] of Object.entries(wasmPass())) keep(wasm, { [k]: { ms } });
  if (GROUPS.has('distill')) keep(wasm, { 'distill-all': wasmDistill() });
  if (GROUPS.has('continue')) for (const [k, r] of Object.entries(wasmContinue())) keep(wasm, { [`continue-${k}`]: r });
}

const records = [];
const row = (label, key, n) => {
  const w = wasm[key], x = nat[key];
  console.log(`  ${label.padEnd(44)} ${w.ms.toFixed(2).padStart(9)} ${x.ms.toFixed(2).padStart(10)} ${(w.ms / x.ms).toFixed(2).padStart(8)}×`);
  records.push({ name: `swap/${key}/wasm`, n, d, ms: w.ms, baseline: `swap/${key}/native`, baseline_ms: x.ms, real: true });
};
console.log(`\nwhat the model loses, stories260K: WASM SIMD (node ${process.versions.node}) vs native gcc -O3 -march=native; ` +
  `each side the quietest of ${ROUNDS} alternating rounds (medians of calls)`);
console.log(`  ${''.padEnd(44)} ${'wasm ms'.padStart(9)} ${'native ms'.padStart(10)} ${'ratio'.padStart(9)}`);
if (GROUPS.has('pass')) {
  console.log(`swapped forward pass over ${N} tokens (logits at every position):`);
  for (const k of ['elu-matrix', 'elu-recurrent', 'kept']) row(`heads ${k}`, k, N);
}
if (GROUPS.has('distill')) {
  console.log(`distillation of all ${L * H} heads (Hedgehog from the identity, ${DISTILL_STEPS} steps, lr ${LR}) on the panel's ` +
    `${trainIds.length}-token training text, its capture included:`);
  row('all heads', 'distill-all', trainIds.length);
  console.log(`  mean KL after: wasm ${wasm['distill-all'].loss_after.toFixed(6)}, native ${nat['distill-all'].loss_after.toFixed(6)}`);
}
if (GROUPS.has('continue')) {
  console.log(`greedy continuation of ${CONT_STEPS} tokens after text128's ${prompt.length}:`);
  row(`original, KV cache (${wasm['continue-kept'].tokens} tokens)`, 'continue-kept', prompt.length);
  row('original, a whole pass per token (before)', 'continue-kept-rerun', prompt.length);
  row(`elu+1 in every head (${wasm['continue-elu'].tokens} tokens)`, 'continue-elu', prompt.length);
  const gain = (s) => (s['continue-kept-rerun'].ms / s['continue-kept'].ms).toFixed(1);
  console.log(`  the cache's gain on the original: wasm ${gain(wasm)}×, native ${gain(nat)}×`);
}
for (const p of [elu, hedgehog, allElu, fw]) av.free(p);
appendRecords(records);
