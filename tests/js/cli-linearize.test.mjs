// cli-linearize.test.mjs: `attnviz linearize` (issue 34), what a model loses when heads' softmax is swapped
// for a variant (docs/model.md "Swapped attention"). On a tiny checkpoint written here (so every check runs
// without the shared data): the JSON's shape, softmax swapped in changes nothing, the two paths agree, the
// head selection, the corpus means, the continuation against `generate-text`, the sensitivity entries
// against single-head runs, distillation, and the refusals. On stories260K: the shared data's facts and
// the figures docs/model.md states.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';
import { run, json } from './cli-capture.mjs';
import { STORIES, HAVE_STORIES, skipped } from './shared-data.mjs';
import { tinyFiles } from '../e2e/tiny-model.mjs';

let tmp, tiny;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'attnviz-linearize-'));
  tiny = tinyFiles(tmp);
});
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

const TEXT = 'a aa b a cab a a dab';
const lin = (...args) => json('linearize', '--model', tiny.model, '--tokenizer', tiny.tok, ...args);
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const maxDiff = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

describe('linearize on a tiny checkpoint (2 layers, 4 heads, 2 KV heads, head size 4)', () => {
  it('prints the documented keys; the means are the per-position arrays\' means', () => {
    const j = lin('--text', TEXT, '--variant', 'elu', '--steps', '4');
    expect(j.model).toEqual({ layers: 2, heads: 4, kv_heads: 2, head_size: 4, vocab: 262, seq_len: 128 });
    expect([j.variant, j.path, j.knobs]).toEqual(['elu', 'matrix', 'decay=1']);
    expect(j.swapped).toHaveLength(8);
    const t = j.texts[0], n = t.n;
    expect(j.positions).toBe(n - 1);
    for (const k of ['loss', 'loss_original', 'kl', 'agree']) expect(t.per_position[k]).toHaveLength(n - 1);
    expect(j.loss).toBeCloseTo(mean(t.per_position.loss), 12);
    expect(j.loss_original).toBeCloseTo(mean(t.per_position.loss_original), 12);
    expect(j.kl_mean).toBeCloseTo(mean(t.per_position.kl), 12);
    expect(j.top1_agreement).toBeCloseTo(mean(t.per_position.agree), 12);
    expect(j.perplexity).toBeCloseTo(Math.exp(j.loss), 10);
    expect(j.perplexity_original).toBeCloseTo(Math.exp(j.loss_original), 10);
    expect(j.kl_mean).toBeGreaterThan(1e-6); // elu+1 is not softmax (the tiny model's random heads are near uniform)
    expect(j.continuation.steps).toBe(4);
    expect(j.sensitivity).toBeUndefined();
    expect(j.distill).toBeUndefined();
  });

  it('softmax swapped in everywhere: the original\'s loss, KL 0, every argmax the same', () => {
    const j = lin('--text', TEXT, '--variant', 'softmax', '--steps', '6');
    expect(Math.abs(j.loss - j.loss_original)).toBeLessThan(1e-6);
    expect(j.kl_mean).toBeLessThan(1e-9);
    expect(j.top1_agreement).toBe(1);
    expect(j.continuation.swapped).toEqual(j.continuation.original);
    expect(j.continuation.first_difference).toBeNull();
  });

  it('the matrix and recurrent paths give the same measures', () => {
    for (const v of ['elu', 'performer', 'retention']) {
      const a = lin('--text', TEXT, '--variant', v, '--steps', '0');
      const b = lin('--text', TEXT, '--variant', v, '--steps', '0', '--path', 'recurrent');
      expect(b.path).toBe('recurrent');
      expect(Math.abs(a.loss - b.loss), v).toBeLessThan(1e-5);
      expect(maxDiff(a.texts[0].per_position.kl, b.texts[0].per_position.kl), v).toBeLessThan(1e-5);
    }
  });

  it('--layers and --heads choose the heads swapped', () => {
    const pairs = (...a) => lin('--text', TEXT, '--variant', 'elu', '--steps', '0', ...a).swapped;
    expect(pairs('--layers', '1')).toEqual([[1, 0], [1, 1], [1, 2], [1, 3]]);
    expect(pairs('--heads', '0,2')).toEqual([[0, 0], [0, 2], [1, 0], [1, 2]]);
    expect(pairs('--layers', '0', '--heads', '3')).toEqual([[0, 3]]);
    expect(pairs()).toHaveLength(8);
  });

  it('the original continuation is `generate-text`\'s', () => {
    const j = lin('--text', TEXT, '--variant', 'relu', '--steps', '12');
    const g = run('generate-text', '--model', tiny.model, '--tokenizer', tiny.tok, '--text', TEXT, '--steps', '12');
    expect(g.status).toBe(0);
    expect(j.continuation.original.ids.length).toBeGreaterThan(0);
    expect(g.stdout.endsWith(`${j.continuation.original.text}\n`)).toBe(true);
    expect(j.continuation.prompt_ids).toHaveLength(j.texts[0].n); // the text is the prompt
    expect(j.continuation.prompt_ids[0]).toBe(1); // BOS
    const other = lin('--text', TEXT, '--variant', 'relu', '--steps', '3', '--prompt', 'b a');
    expect(other.continuation.prompt_ids.length).toBeLessThan(j.continuation.prompt_ids.length);
  });

  it('a corpus: each text as alone, the means weighted by positions', () => {
    const f = join(tmp, 'corpus.txt');
    writeFileSync(f, `${TEXT}\n\nb a ab\n`);
    const j = lin('--text-file', f, '--lines', '--variant', 'elu', '--steps', '0');
    expect(j.texts.map((t) => t.name)).toEqual(['1', '3']);
    const one = lin('--text', 'b a ab', '--variant', 'elu', '--steps', '0');
    expect(j.texts[1].loss).toBe(one.loss);
    expect(j.texts[1].per_position).toEqual(one.texts[0].per_position);
    const w = j.texts.map((t) => t.n - 1);
    expect(j.positions).toBe(w[0] + w[1]);
    const wm = (k) => (j.texts[0][k] * w[0] + j.texts[1][k] * w[1]) / j.positions;
    for (const k of ['loss', 'loss_original', 'kl_mean', 'top1_agreement']) expect(j[k]).toBeCloseTo(wm(k), 12);
  });

  it('--sensitivity: each layer\'s and each head\'s entry is that swap alone', () => {
    const j = lin('--text', TEXT, '--variant', 'elu', '--steps', '0', '--sensitivity');
    expect(j.sensitivity.by_layer.map((e) => e.layer)).toEqual([0, 1]);
    expect(j.sensitivity.by_head).toHaveLength(8);
    const lay = lin('--text', TEXT, '--variant', 'elu', '--steps', '0', '--layers', '1');
    const e = j.sensitivity.by_layer[1];
    expect(e.delta_loss).toBeCloseTo(lay.loss - lay.loss_original, 9);
    expect(e.kl_mean).toBeCloseTo(lay.kl_mean, 9);
    expect(e.top1_agreement).toBeCloseTo(lay.top1_agreement, 12);
    const head = lin('--text', TEXT, '--variant', 'elu', '--steps', '0', '--layers', '0', '--heads', '2');
    const h = j.sensitivity.by_head.find((x) => x.layer === 0 && x.head === 2);
    expect(h.delta_loss).toBeCloseTo(head.loss - head.loss_original, 9);
    expect(h.kl_mean).toBeCloseTo(head.kl_mean, 9);
    // only the chosen heads are listed
    const some = lin('--text', TEXT, '--variant', 'elu', '--steps', '0', '--sensitivity', '--heads', '1');
    expect(some.sensitivity.by_layer).toHaveLength(2);
    expect(some.sensitivity.by_head.map((x) => [x.layer, x.head])).toEqual([[0, 1], [1, 1]]);
  });

  it('--distill: deterministic, the chosen heads\' W saved, the untrained ones zero', () => {
    const train = join(tmp, 'train.txt');
    writeFileSync(train, 'b ab a ba cab abba a b cc a a ba\n');
    const w1 = join(tmp, 'w1.npy'), w2 = join(tmp, 'w2.npy'), o1 = join(tmp, 'o1.json'), o2 = join(tmp, 'o2.json');
    const args = ['linearize', '--model', tiny.model, '--tokenizer', tiny.tok, '--text', TEXT, '--variant', 'hedgehog',
      '--layers', '1', '--distill', '15', '--train-file', train, '--steps', '3'];
    expect(run(...args, '--save-w', w1, '-o', o1).status).toBe(0);
    expect(run(...args, '--save-w', w2, '-o', o2).status).toBe(0);
    expect(readFileSync(o1, 'utf8')).toBe(readFileSync(o2, 'utf8'));
    expect(readFileSync(w1)).toEqual(readFileSync(w2));
    const j = JSON.parse(readFileSync(o1, 'utf8'));
    const d = j.distill;
    expect([d.steps, d.lr, d.loss_curve.length]).toEqual([15, 0.05, 16]);
    expect(d.loss_curve[15]).toBeLessThan(d.loss_curve[0]);
    expect(d.heads.map((h) => [h.layer, h.head])).toEqual([[1, 0], [1, 1], [1, 2], [1, 3]]);
    for (const h of d.heads) expect(h.train_kl_after).toBeLessThan(h.train_kl_before);
    expect(j.knobs).toContain('W=distilled');
    const W = readNpy(w1);
    expect(W.shape).toEqual([2, 4, 4, 4]);
    expect(W.data.slice(0, 64).every((x) => x === 0)).toBe(true); // layer 0: not chosen
    expect(W.data.slice(64).some((x) => x !== 0)).toBe(true);
    // the measures are of the trained heads: not those of the identity W
    const untrained = lin('--text', TEXT, '--variant', 'hedgehog', '--layers', '1', '--steps', '0');
    expect(j.loss).not.toBe(untrained.loss);
  });

  it('--distill names the held-out text and warns when an evaluated text is the training text', () => {
    const train = join(tmp, 'same.txt');
    writeFileSync(train, TEXT);
    const args = ['linearize', '--model', tiny.model, '--tokenizer', tiny.tok, '--text', TEXT, '--variant', 'hedgehog',
      '--distill', '2', '--steps', '0'];
    const same = run(...args, '--train-file', train);
    expect(same.status).toBe(0);
    expect(same.stderr).toMatch(/the evaluated text "text" is the training text: its measures are not held out/);
    expect(JSON.parse(same.stdout).distill.heldout_text).toBe('text');
    const other = join(tmp, 'other.txt');
    writeFileSync(other, 'b ab a ba cab abba\n');
    const held = run(...args, '--train-file', other);
    expect([held.status, held.stderr]).toEqual([0, '']);
  });

  it('-o writes what stdout prints', () => {
    const o = join(tmp, 'same.json');
    const r = run('linearize', '--model', tiny.model, '--tokenizer', tiny.tok, '--text', TEXT, '--variant', 'relu', '--steps', '2', '-o', o);
    expect([r.status, r.stdout]).toEqual([0, '']);
    expect(JSON.parse(readFileSync(o, 'utf8'))).toEqual(lin('--text', TEXT, '--variant', 'relu', '--steps', '2'));
  });

  it('refuses bad input with one line and exit 2, writing nothing', () => {
    const out = join(tmp, 'keep.json'), w = join(tmp, 'keep.npy');
    writeFileSync(out, 'old');
    writeFileSync(w, 'old');
    const train = join(tmp, 'train.txt');
    writeFileSync(train, 'b ab a ba\n');
    const m = ['--model', tiny.model, '--tokenizer', tiny.tok];
    const cases = [
      [[...m, '--text', TEXT, '--variant', 'linformer'], /linformer: has no causal form/],
      [[...m, '--text', TEXT, '--variant', 'nystrom'], /nystrom: has no causal form/],
      [[...m, '--text', TEXT, '--variant', 'focused', '--dwc-kernel', '3'], /--dwc-kernel: focused with it has no causal form/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--layers', '2'], /--layers 2: 2 out of range \(the model has 2 layers: 0\.\.1\)/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--heads', '0,4'], /--heads 0,4: 4 out of range \(the model has 4 heads: 0\.\.3\)/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--layers', '0,0'], /listed twice/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--no-causal'], /--no-causal: a language model is causal/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--path', 'scan'], /--path scan: not matrix or recurrent/],
      [[...m, '--text', TEXT, '--variant', 'performer', '--m', '0'], /--m 0: not a valid value/],
      [[...m, '--text', 'a', '--variant', 'linformer'], /no causal form/],
      [[...m, '--text', '', '--variant', 'elu'], /--text: no token after BOS/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--q', 'q.npy'], /--q: not an option of linearize/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--distill', '5', '--train-file', train], /--distill: elu has no weights to train/],
      [[...m, '--text', TEXT, '--variant', 'hedgehog', '--distill', '5'], /--train-file: required with --distill/],
      [[...m, '--text', TEXT, '--variant', 'hedgehog', '--train-file', train], /--train-file: only with --distill/],
      [[...m, '--text', TEXT, '--variant', 'hedgehog', '--distill', '5', '--train-file', tmp], /--train-file .*a folder/],
      [[...m, '--text', TEXT, '--variant', 'hedgehog', '--distill', 'x', '--train-file', train], /--distill x: not an integer/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--layers', '0x1'], /--layers 0x1: 0x1 is not an integer/],
      [[...m, '--text', TEXT, '--text-file', train, '--variant', 'elu'], /--text and --text-file: give one/],
      [[...m, '--variant', 'elu'], /--text or --text-file: required/],
      [['--tokenizer', tiny.tok, '--text', TEXT, '--variant', 'elu'], /--model: required/],
      [[...m, '--text', TEXT, '--variant', 'nope'], /--variant nope: unknown variant/],
      [[...m, '--text', TEXT, '--variant', 'elu', '--steps', '-1'], /--steps -1: not an integer/],
      [[...m, '--text', TEXT, '--variant', 'rwkv7'], /--variant rwkv7/],
      [[...m, '--text', 'x'.repeat(200), '--variant', 'elu'], /more than the model's seq_len/],
    ];
    for (const [args, re] of cases) {
      const r = run('linearize', ...args, '-o', out, ...(args.includes('--distill') ? ['--save-w', w] : []));
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(re);
      expect(readFileSync(out, 'utf8')).toBe('old');
      expect(readFileSync(w, 'utf8')).toBe('old');
    }
    // a training text that cannot be read: the system's failure (1), named by its flag
    const r = run('linearize', ...m, '--text', TEXT, '--variant', 'hedgehog', '--distill', '2', '--train-file', join(tmp, 'none.txt'), '-o', out);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^attnviz: --train-file .*none\.txt: cannot open/);
    expect(readFileSync(out, 'utf8')).toBe('old');
  });
});

// ----------------------------------------------------------------------------------------------------
// stories260K: the shared data's fact and the figures docs/model.md states

/** The model's own greedy story from BOS (generate-text, 200 steps): the training text, never evaluated. */
const TRAIN_STORY = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said, \"Lily, let's go to the park.\" Lily was sad and didn't know what to do. She said, \"I want to play with your ball, but I can't find it.\"\nLily was sad and didn't know what to do. She said, \"I'm sorry, Lily. I didn't know what to do.\"\nLily didn't want to help her mom, so she";

describe.skipIf(!HAVE_STORIES)('linearize on stories260K (text128)', () => {
  let text, s;
  beforeAll(() => {
    text = JSON.parse(readFileSync(join(STORIES, 'text128_tokens.json'), 'utf8')).text;
    s = (...a) => json('linearize', '--model', join(STORIES, 'stories260K.bin'), '--tokenizer', join(STORIES, 'tok512.bin'),
      '--text', text, ...a);
  });

  it('loss_original is the shared data\'s 1.0739; softmax swapped in keeps it', () => {
    const j = s('--variant', 'softmax', '--steps', '0');
    expect(j.positions).toBe(127);
    expect(Math.abs(j.loss_original - 1.0739)).toBeLessThan(1e-4);
    expect(Math.abs(j.loss - j.loss_original)).toBeLessThan(1e-6);
    expect(j.kl_mean).toBeLessThan(1e-6);
    expect(j.top1_agreement).toBe(1);
  });

  it('elu+1 everywhere breaks the story (loss 3.94 nats, top-1 agreement 0.28); one layer costs less', () => {
    const all = s('--variant', 'elu', '--steps', '16');
    expect(all.loss).toBeGreaterThan(3.9);
    expect(all.loss).toBeLessThan(4.0);
    expect(all.top1_agreement).toBeLessThan(0.3);
    expect(all.continuation.first_difference).not.toBeNull();
    const g = run('generate-text', '--model', join(STORIES, 'stories260K.bin'), '--tokenizer', join(STORIES, 'tok512.bin'),
      '--text', text, '--steps', '16');
    expect(g.stdout.endsWith(`${all.continuation.original.text}\n`)).toBe(true);
    const rec = s('--variant', 'elu', '--steps', '0', '--path', 'recurrent');
    expect(Math.abs(rec.loss - all.loss)).toBeLessThan(1e-5);
    const one = s('--variant', 'elu', '--steps', '0', '--layers', '2');
    expect(one.loss).toBeGreaterThan(one.loss_original);
    expect(one.loss).toBeLessThan(all.loss);
  });

  it('a head\'s warning (relu: a row whose products sum to 0) names the text and what it means; JSON written', () => {
    const r = run('linearize', '--model', join(STORIES, 'stories260K.bin'), '--tokenizer', join(STORIES, 'tok512.bin'),
      '--text', text, '--variant', 'relu', '--steps', '0');
    expect(r.status).toBe(0);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^attnviz: warning: --text: the swapped model: .*\(the logits stayed finite; the measures include those rows as computed\)$/)]);
    expect(JSON.parse(r.stdout).loss).toBeGreaterThan(3.9);
  });

  it('sensitivity: every head alone costs less than its whole layer (elu+1)', () => {
    const j = s('--variant', 'elu', '--steps', '0', '--sensitivity');
    expect(j.sensitivity.by_layer).toHaveLength(5);
    expect(j.sensitivity.by_head).toHaveLength(40);
    for (const l of j.sensitivity.by_layer) {
      expect(l.delta_loss).toBeGreaterThan(0.05);
      for (const h of j.sensitivity.by_head.filter((x) => x.layer === l.layer)) expect(h.delta_loss).toBeLessThan(l.delta_loss);
    }
  });

  it('hedgehog distilled on another story (40 steps): deterministic, every head\'s held-out KL below elu+1\'s', () => {
    const train = join(tmp, 'story.txt');
    writeFileSync(train, `${TRAIN_STORY}\n`);
    const a = s('--variant', 'hedgehog', '--steps', '0', '--distill', '40', '--train-file', train);
    const b = s('--variant', 'hedgehog', '--steps', '0', '--distill', '40', '--train-file', train);
    expect(b).toEqual(a);
    expect(a.distill.train_n).toBe(201);
    expect(a.distill.heads).toHaveLength(40);
    for (const h of a.distill.heads) expect(h.heldout_kl, `L${h.layer}H${h.head}`).toBeLessThan(h.heldout_kl_elu);
    const untrained = s('--variant', 'hedgehog', '--steps', '0');
    expect(a.loss).toBeLessThan(untrained.loss); // 3.07 against 5.32 nats
  });
});
if (!HAVE_STORIES) skipped('Vitest cli-linearize.test.mjs: linearize on stories260K');
