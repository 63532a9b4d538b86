// loses.test.mjs: the page's "what the model loses" in the real wasm module (web/wasm/model.mjs's swapped-pass
// wrappers, web/compute/loses.mjs, web/state/loses.mjs): on the tiny model of tests/e2e/tiny-model.mjs always,
// and on stories260K's text128 when the shared data is there: the original's loss is the data's fact
// (1.0739 nats), softmax swapped in is the original, and every number equals `attnviz linearize`'s JSON
// (the native CLI; docs/model.md "Swapped attention").
import { describe, it, expect, vi } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { SWAP_PATHS } from '../../web/wasm/model.mjs';
import { losesRun, distillHeads, allHeads, wMap, firstDifference } from '../../web/compute/loses.mjs';
import { headsValue, headsOf, toggleHead } from '../../web/state/loses.mjs';
import { tinyFiles } from '../e2e/tiny-model.mjs';
import { STORIES, HAVE_STORIES, skipped } from './shared-data.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const dir = mkdtempSync(join(tmpdir(), 'attnviz-loses-'));
const tiny = tinyFiles(dir);
const load = (m, t) => av.model(readFileSync(m), readFileSync(t)).model;
// `attnviz linearize` is the CLI's (docs/model.md); a build without it says so and those cases are skipped
const HAVE_LINEARIZE = existsSync(CLI) && /\blinearize\b/.test(String(spawnSync(CLI, ['--help']).stdout));
if (!HAVE_LINEARIZE) console.warn('SKIPPED: the CLI comparisons (build/native/attnviz has no `linearize`)');

/** `attnviz linearize` on model files, its JSON. */
function linearize(files, args) {
  const out = join(dir, `lin-${Math.random().toString(36).slice(2)}.json`);
  execFileSync(CLI, ['linearize', '--model', files.model, '--tokenizer', files.tok, ...args, '-o', out]);
  return JSON.parse(readFileSync(out, 'utf8'));
}

describe('the link key ls_heads', () => {
  it('keeps layer.head pairs, sorted and once, and names the others', () => {
    expect(headsValue('2.3, 0.1,2.3,x,1.0')).toEqual({ value: '0.1,1.0,2.3', bad: ['x'] });
    expect(headsOf('0.1,4.0,1.9', 4, 8)).toEqual([[0, 1]]);
    expect(toggleHead('0.1,1.2', 0, 1)).toBe('1.2');
    expect(toggleHead('1.2', 0, 3)).toBe('0.3,1.2');
  });
  it('finds the first difference of two continuations', () => {
    expect(firstDifference([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(firstDifference([1, 2], [1, 2, 3])).toBe(null);
    expect(firstDifference([], [])).toBe(null);
  });
});

describe('the swapped pass on the tiny model', () => {
  const model = load(tiny.model, tiny.tok);
  const c = model.config;
  const ids = model.encode('a aa a aaa a a').ids;

  it('with no head swapped, gives av_forward\'s logits and zero loss of information', () => {
    const o = model.forwardSwapped(ids, 0);
    expect(o.status).toBe(0);
    expect(o.logits.length).toBe(ids.length * c.vocab);
    const m = model.measures(o.logits, o.logits, ids);
    expect(m.kl_mean).toBe(0);
    expect(m.top1_agreement).toBe(1);
    expect(m.loss).toBe(m.loss_original);
    expect(m.perplexity).toBeCloseTo(Math.exp(m.loss), 12);
    expect(m.per_position.kl.length).toBe(ids.length - 1);
  });

  it('elu+1 in every head changes the predictions; matrix and recurrent paths agree', () => {
    const knobs = { variant: 'elu' };
    const r = losesRun(model, { ids, prompt: ids.slice(0, 3), steps: 6, knobs, swapped: allHeads(c.layers, c.heads), sensitivity: true });
    expect(r.error).toBeUndefined();
    expect(r.measures.kl_mean).toBeGreaterThan(1e-6);
    expect(r.measures.loss).not.toBe(r.measures.loss_original);
    const rec = losesRun(model, { ids, prompt: ids.slice(0, 3), steps: 6, knobs, swapped: allHeads(c.layers, c.heads), path: 'recurrent' });
    expect(Math.abs(rec.measures.loss - r.measures.loss)).toBeLessThan(1e-5);
    expect(r.sensitivity.by_layer.length).toBe(c.layers);
    expect(r.sensitivity.by_head.length).toBe(c.layers * c.heads);
    expect(r.continuation.original.ids.length).toBeLessThanOrEqual(6);
  });

  it('refuses a variant without a causal form and a head out of range, in one sentence', () => {
    const bad = losesRun(model, { ids, prompt: ids, steps: 1, knobs: { variant: 'linformer' }, swapped: [[0, 0]] });
    expect(bad.error).toMatch(/layer 0 head 0: .*causal/);
    expect(bad.error).not.toMatch(/\n/);
    const out = losesRun(model, { ids, prompt: ids, steps: 1, knobs: { variant: 'elu' }, swapped: [[c.layers, 0]] });
    expect(out.error).toMatch(/the model has layers 0\.\.1/);
  });

  it('distils every head, deterministically, and the swapped pass uses the trained W', () => {
    const run = () => {
      const g = distillHeads(model, { trainIds: model.encode('aa a a aaa aa a').ids, evalIds: ids, swapped: allHeads(c.layers, c.heads), knobs: { variant: 'hedgehog' }, steps: 15, chunk: 4 });
      const prog = [];
      let s;
      while (!(s = g.next()).done) prog.push(s.value.t);
      return { prog, r: s.value };
    };
    const a = run(), b = run();
    expect(a.prog).toEqual([4, 8, 12, 15]);
    expect(a.r.loss_curve.length).toBe(16);
    expect(a.r.loss_curve).toEqual(b.r.loss_curve);
    expect(a.r.loss_curve.at(-1)).toBeLessThan(a.r.loss_curve[0]);
    expect(a.r.heads.length).toBe(c.layers * c.heads);
    const plain = losesRun(model, { ids, prompt: ids, steps: 2, knobs: { variant: 'hedgehog' }, swapped: allHeads(c.layers, c.heads) });
    const trained = losesRun(model, { ids, prompt: ids, steps: 2, knobs: { variant: 'hedgehog' }, swapped: allHeads(c.layers, c.heads), W: wMap(a.r.W) });
    expect(trained.measures.loss).not.toBe(plain.measures.loss);
  });

  it('reuses the original\'s last continuation; a new prompt or steps recomputes it', () => {
    const own = load(tiny.model, tiny.tok); // a model of its own: nothing kept yet
    const spy = vi.spyOn(own, 'continueSwapped');
    const originals = () => spy.mock.calls.filter((a) => a[2] === 0).length;
    const run = (prompt, steps, path = 'matrix') => losesRun(own, { ids, prompt, steps, knobs: { variant: 'elu' }, swapped: allHeads(c.layers, c.heads), path });
    const a = run(ids.slice(0, 3), 6);
    expect(originals()).toBe(1);
    expect(a.continuation.original.ids.length).toBeGreaterThan(0);
    expect(run(ids.slice(0, 3), 6)).toEqual(a);
    const rec = run(Int32Array.from(ids.slice(0, 3)), 6, 'recurrent'); // every head kept: the path changes nothing
    expect(rec.continuation.original).toEqual(a.continuation.original);
    expect(originals()).toBe(1);
    const b = run(ids.slice(0, 4), 6);
    expect(originals()).toBe(2);
    const d = run(ids.slice(0, 4), 3);
    expect(originals()).toBe(3);
    // each kept or recomputed continuation is the one computed afresh
    for (const [r, prompt, steps] of [[a, ids.slice(0, 3), 6], [b, ids.slice(0, 4), 6], [d, ids.slice(0, 4), 3]])
      expect(r.continuation.original.ids).toEqual(Array.from(load(tiny.model, tiny.tok).continueSwapped(prompt, steps, 0).ids));
    expect(b.continuation.original.ids).not.toEqual(d.continuation.original.ids);
    spy.mockRestore();
  });

  it.skipIf(!HAVE_LINEARIZE)('equals `attnviz linearize` on the tiny model', () => {
    const text = 'a aa a aaa a a';
    const cli = linearize(tiny, ['--text', text, '--variant', 'elu', '--steps', '6', '--sensitivity']);
    const r = losesRun(model, { ids, prompt: ids, steps: 6, knobs: { variant: 'elu' }, swapped: allHeads(c.layers, c.heads), sensitivity: true });
    for (const k of ['loss', 'loss_original', 'perplexity', 'kl_mean', 'top1_agreement']) expect(r.measures[k], k).toBe(cli[k]);
    expect(r.continuation.swapped.ids).toEqual(cli.continuation.swapped.ids);
    expect(r.continuation.first_difference).toBe(cli.continuation.first_difference);
  });
});

describe.skipIf(!HAVE_STORIES)('stories260K, text128', () => {
  if (!HAVE_STORIES) { skipped('tests/js/loses.test.mjs'); return; }
  const files = { model: join(STORIES, 'stories260K.bin'), tok: join(STORIES, 'tok512.bin') };
  const model = load(files.model, files.tok);
  const text = JSON.parse(readFileSync(join(STORIES, 'text128_tokens.json'), 'utf8')).text;
  const ids = model.encode(text).ids;
  const every = allHeads(5, 8);

  it('the original\'s loss is the data\'s 1.0739; softmax swapped in is the original', () => {
    const r = losesRun(model, { ids, prompt: ids.slice(0, 8), steps: 8, knobs: { variant: 'softmax' }, swapped: every });
    expect(r.measures.loss_original).toBeCloseTo(1.0739, 4);
    expect(Math.abs(r.measures.loss - r.measures.loss_original)).toBeLessThan(1e-6);
    expect(r.measures.top1_agreement).toBe(1);
    expect(r.continuation.first_difference).toBe(null);
  });

  it('elu+1 everywhere breaks the text: loss up, agreement down', () => {
    const r = losesRun(model, { ids, prompt: ids.slice(0, 8), steps: 16, knobs: { variant: 'elu' }, swapped: every });
    expect(r.measures.loss).toBeGreaterThan(3);
    expect(r.measures.top1_agreement).toBeLessThan(0.5);
    expect(r.continuation.first_difference).not.toBe(null);
  });

  it.skipIf(!HAVE_LINEARIZE)('equals `attnviz linearize` (elu everywhere, one layer of performer, recurrent, the sensitivity)', () => {
    for (const [args, knobs, swapped, path] of [
      [['--variant', 'elu'], { variant: 'elu' }, every, 'matrix'],
      [['--variant', 'performer', '--layers', '1'], { variant: 'performer' }, every.filter(([l]) => l === 1), 'matrix'],
      [['--variant', 'elu', '--heads', '3', '--path', 'recurrent'], { variant: 'elu' }, every.filter(([, h]) => h === 3), 'recurrent'],
    ]) {
      const cli = linearize(files, ['--text', text, ...args, '--prompt', 'Once upon a time', '--steps', '12', '--sensitivity']);
      const r = losesRun(model, { ids, prompt: model.encode('Once upon a time').ids, steps: 12, knobs, swapped, path, sensitivity: true });
      expect(cli.swapped).toEqual(swapped);
      for (const k of ['loss', 'loss_original', 'perplexity', 'perplexity_original', 'kl_mean', 'top1_agreement']) expect(r.measures[k], `${args} ${k}`).toBe(cli[k]);
      expect(r.per_position.kl).toEqual(cli.texts[0].per_position.kl);
      expect(r.continuation.original).toMatchObject(cli.continuation.original);
      expect(r.continuation.swapped).toMatchObject(cli.continuation.swapped);
      expect(r.continuation.first_difference).toBe(cli.continuation.first_difference);
      expect(r.sensitivity.by_layer.filter((e) => swapped.some(([l]) => l === e.layer))).toEqual(cli.sensitivity.by_layer);
      expect(r.sensitivity.by_head.filter((e) => swapped.some(([l, h]) => l === e.layer && h === e.head))).toEqual(cli.sensitivity.by_head);
    }
  });

  it.skipIf(!HAVE_LINEARIZE)('distils every head as `attnviz linearize --distill` does: the same curve, W and measures', () => {
    const trainText = 'Tom had a red ball. He liked to throw it high in the sky. One day the ball fell in the pond.';
    const train = join(dir, 'train.txt');
    writeFileSync(train, trainText);
    const cli = linearize(files, ['--text', text, '--variant', 'hedgehog', '--distill', '30', '--train-file', train, '--steps', '4']);
    const g = distillHeads(model, { trainIds: model.encode(trainText).ids, evalIds: ids, swapped: every, knobs: { variant: 'hedgehog' }, steps: 30 });
    let s;
    while (!(s = g.next()).done);
    const d = s.value;
    expect(d.train_n).toBe(cli.distill.train_n);
    d.loss_curve.forEach((x, i) => expect(Math.abs(x - cli.distill.loss_curve[i]), `step ${i}`).toBeLessThan(1e-12 * Math.max(1, Math.abs(x))));
    const r = losesRun(model, { ids, prompt: ids, steps: 4, knobs: { variant: 'hedgehog' }, swapped: every, W: wMap(d.W) });
    for (const k of ['loss', 'kl_mean', 'top1_agreement']) expect(r.measures[k], k).toBe(cli[k]);
    d.heads.forEach((h, i) => {
      const ch = cli.distill.heads[i];
      expect([h.layer, h.head]).toEqual([ch.layer, ch.head]);
      for (const k of ['heldout_kl', 'heldout_kl_elu']) expect(Math.abs(h[k] - ch[k]), `${h.layer}.${h.head} ${k}`).toBeLessThan(1e-9);
    });
  });

  it('paths: the matrix and recurrent logits agree to float precision', () => {
    const prm = model.swapParams({ variant: 'elu' }, every);
    try {
      const a = model.forwardSwapped(ids, prm.ptr, SWAP_PATHS.matrix).logits, b = model.forwardSwapped(ids, prm.ptr, SWAP_PATHS.recurrent).logits;
      let worst = 0;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(a[i])));
      expect(worst).toBeLessThan(1e-4);
    } finally { prm.free(); }
  });
});
