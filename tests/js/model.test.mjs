// The real-model path of the JS loader (web/wasm/attnviz.mjs, web/wasm/model.mjs: av.model, Model.encode, pieces, forward) on the
// real wasm module: a tiny checkpoint and tokenizer written here (llama2.c's formats, docs/model.md)
// against the native CLI's `attnviz capture` (itself held to an independent numpy forward pass by
// tests/oracle/model_oracle.py); the files told apart by content in either order; hostile files with
// their reasons; and stories260K's text128 when ../shared is present.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { readNpy } from './npy.mjs';
import { STORIES, skipped } from './shared-data.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });

// dim 12, hidden 20, 2 layers, 6 heads, 3 KV heads (head size 2), vocab 270, seq_len 24
const CFG = { dim: 12, hid: 20, layers: 2, heads: 6, kv: 3, vocab: 270, seq: 24 };

/** A checkpoint with weights from a fixed LCG (RMSNorm weights near 1). */
function tinyModel(shared = true) {
  const { dim, hid, layers, heads, kv, vocab, seq } = CFG;
  const hs = dim / heads, kvd = hs * kv;
  const parts = [vocab * dim, layers * dim, layers * dim * dim, layers * kvd * dim, layers * kvd * dim, layers * dim * dim,
    layers * dim, layers * hid * dim, layers * dim * hid, layers * hid * dim, dim, seq * hs, shared ? 0 : vocab * dim];
  const floats = parts.reduce((a, b) => a + b, 0);
  const buf = new ArrayBuffer(28 + 4 * floats), dv = new DataView(buf);
  [dim, hid, layers, heads, kv, shared ? vocab : -vocab, seq].forEach((v, i) => dv.setInt32(4 * i, v, true));
  let x = 12345;
  const rnd = () => { x = (Math.imul(x, 1103515245) + 12345) >>> 0; return (x / 2 ** 32 - 0.5) * 0.8; };
  let at = 0;
  parts.forEach((len, k) => {
    const norm = k === 1 || k === 6 || k === 10;
    for (let i = 0; i < len; i++) dv.setFloat32(28 + 4 * at++, norm ? 1 + 0.1 * rnd() : rnd(), true);
  });
  return new Uint8Array(buf);
}

/** A tokenizer: <unk>, BOS, EOS, the 256 byte pieces, then a space, letters and merges. */
function tinyTokenizer() {
  const extra = [' ', 'h', 'i', ' h', 'hi', ' hi', '!', 'é', ' t', 'o', 'to'];
  const pieces = ['<unk>', '\n<s>\n', '\n</s>\n', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`), ...extra];
  const enc = new TextEncoder();
  const chunks = [new Uint8Array(new Int32Array([8]).buffer)];
  pieces.forEach((p, i) => {
    const b = enc.encode(p), head = new DataView(new ArrayBuffer(8));
    head.setFloat32(0, i < 259 ? 0 : i - 259, true);
    head.setInt32(4, b.length, true);
    chunks.push(new Uint8Array(head.buffer), b);
  });
  const out = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

describe('a tiny model, wasm against the native CLI', () => {
  for (const shared of [true, false]) {
    it(`captures the same Q, K, V and ids (${shared ? 'shared' : 'separate'} classifier)`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'attnviz-model-'));
      const mb = tinyModel(shared), tb = tinyTokenizer();
      writeFileSync(join(dir, 'm.bin'), mb);
      writeFileSync(join(dir, 't.bin'), tb);
      const text = 'hi hi! éto';
      execFileSync(CLI, ['capture', '--model', join(dir, 'm.bin'), '--tokenizer', join(dir, 't.bin'), '--text', text, '-o', join(dir, 'cap')]);
      const { status, message, model } = av.model(mb, tb);
      expect(message).toBe('ok');
      expect(status).toBe(0);
      expect(model.config).toMatchObject({ dim: 12, layers: 2, heads: 6, kvHeads: 3, vocab: 270, seqLen: 24, headSize: 2, sharedClassifier: shared });
      const enc = model.encode(text);
      const tokens = JSON.parse(readFileSync(join(dir, 'cap', 'tokens.json'), 'utf8'));
      expect([...enc.ids]).toEqual(tokens.ids);
      expect(model.pieces(enc.ids)).toEqual(tokens.pieces);
      const f = model.forward(enc.ids);
      expect(f.status).toBe(0);
      for (const [k, got] of [['q', f.Q], ['k', f.K], ['v', f.V]]) {
        const ref = readNpy(join(dir, 'cap', `${k}.npy`));
        expect(ref.data.length).toBe(got.length);
        let worst = 0;
        for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - ref.data[i]));
        expect(worst, k).toBeLessThan(1e-5);
      }
      model.free();
    });
  }

  it('tells the two files apart by content, in either order', () => {
    const mb = tinyModel(), tb = tinyTokenizer();
    const a = av.model(tb, mb);
    expect(a.status).toBe(0);
    expect(a.model.config.vocab).toBe(270);
    expect([...a.model.encode('hi').ids]).toEqual([1, 264]); // BOS, " hi"
    a.model.free();
  });

  it('says what is wrong with a broken file, and which file', () => {
    const mb = tinyModel(), tb = tinyTokenizer();
    const cut = av.model(mb.slice(0, mb.length - 3), tb);
    expect(cut.model).toBeNull();
    // the cut file's header is in form: it was the checkpoint, so its reason alone (in either order)
    expect(cut.message).toMatch(/^the checkpoint: the checkpoint is \d+ bytes; .* needs exactly \d+: truncated$/);
    expect(av.model(tb, mb.slice(0, mb.length - 3)).message).toBe(cut.message);
    const tok = av.model(mb, tb.slice(0, 100));
    expect(tok.message).toMatch(/^the tokenizer: the tokenizer ends inside piece/);
    const two = av.model(tb, tb);
    expect(two.message).toMatch(/^neither file is a llama2\.c checkpoint: neither starts with a header in form/);
    expect(av.model(mb.slice(0, 20), tb).message).toBe(two.message);
    // one short sentence each (the page's notice prefixes "the model's files: ")
    for (const m of [cut.message, tok.message, two.message]) expect(m.length, m).toBeLessThanOrEqual(180);
    const { model } = av.model(mb, tb);
    const long = model.forward(new Int32Array(25).fill(5));
    expect(long.message).toMatch(/25 tokens: the model takes 1\.\.24/);
    expect(model.forward([1, 999]).status).toBe(av.STATUS.ERR_SIZE);
    // a text no merge could fit into seq_len is refused before the quadratic merging starts
    const huge = model.encode('hi '.repeat(100000));
    expect(huge.ids).toBeNull();
    expect(huge.message).toMatch(/300000 bytes: more than the model's 24 tokens can hold/);
    model.free();
  });
});

describe.skipIf(!existsSync(STORIES))('stories260K (../shared/data/stories260K)', () => {
  it('text128 in wasm: the ids and pieces exactly, Q, K, V within 1e-4 of the captured tensors', () => {
    const meta = JSON.parse(readFileSync(join(STORIES, 'text128_tokens.json'), 'utf8'));
    const { model } = av.model(readFileSync(join(STORIES, 'tok512.bin')), readFileSync(join(STORIES, 'stories260K.bin')));
    const { ids } = model.encode(meta.text);
    expect([...ids]).toEqual(meta.ids);
    expect(model.pieces(ids)).toEqual(meta.pieces);
    const f = model.forward(ids);
    for (const [k, got] of [['q', f.Q], ['k', f.K], ['v', f.V]]) {
      const ref = readNpy(join(STORIES, `text128_${k}.npy`));
      let worst = 0;
      for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - ref.data[i]));
      expect(worst, k).toBeLessThan(1e-4);
    }
    model.free();
  });
});
if (!existsSync(STORIES)) skipped('Vitest model.test.mjs: stories260K in wasm against its captured tensors');

describe('one head of loaded tensors as the lab\'s inputs (Engine.setTensors)', () => {
  it('gives the readouts `attnviz readouts --layer L --head H` prints on the same capture', async () => {
    const { Engine } = await import('../../web/compute/engine.mjs');
    const { buildSchema } = await import('../../web/state/state.mjs');
    const { cliReadouts, readoutKeys } = await import('../../web/io/inspect.mjs');
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-model-'));
    const mb = tinyModel(), tb = tinyTokenizer();
    writeFileSync(join(dir, 'm.bin'), mb);
    writeFileSync(join(dir, 't.bin'), tb);
    const text = 'hi to hi! hi hi to';
    execFileSync(CLI, ['capture', '--model', join(dir, 'm.bin'), '--tokenizer', join(dir, 't.bin'), '--text', text, '-o', join(dir, 'cap')]);
    const { model } = av.model(mb, tb);
    const f = model.forward(model.encode(text).ids);
    const c = model.config;
    const engine = new Engine(av);
    engine.setTensors({ key: 'tiny', Q: f.Q, K: f.K, V: f.V, layers: c.layers, heads: c.heads, kvHeads: c.kvHeads, n: f.n, d: c.headSize });
    const schema = buildSchema(av.registry);
    for (const [variant, layer, head] of [['softmax', 0, 0], ['elu', 1, 3], ['performer', 1, 5]]) {
      const st = { ...schema.defaults(), variant, causal: true };
      const base = schema.requestOf(st);
      const req = { ...base, inputs: { tensors: 'tiny', layer, head, n: f.n, d: c.headSize }, knobs: { ...base.knobs, scale: 1 / Math.sqrt(c.headSize) } };
      const frame = engine.frame(req, { readouts: true });
      const spec = engine.spectrum(req, false);
      const ours = cliReadouts({ req, frame, plain: frame.readouts, spec, names: readoutKeys(av), missing: 'missing',
        exact: variant === 'softmax', STATUS: av.STATUS, statusString: (s) => av.statusString(s) });
      const cap = (k) => join(dir, 'cap', `${k}.npy`);
      const flags = variant === 'performer' ? ['--m', String(req.knobs.m)] : [];
      const cli = JSON.parse(execFileSync(CLI, ['readouts', '--variant', variant, '--causal', ...flags, '--q', cap('q'), '--k', cap('k'), '--v', cap('v'),
        '--layer', String(layer), '--head', String(head)]).toString());
      for (const key of ['error_fro_rel', 'row_entropy_mean', 'rank', 'keys_for_90', 'sparsity_tau']) {
        if (typeof cli[key] === 'number') expect(ours[key], `${variant} L${layer}H${head} ${key}`).toBeCloseTo(cli[key], 4);
        else expect(ours[key], `${variant} ${key}`).toBe(cli[key]);
      }
    }
    // a request naming other tensors, or a head they do not have, fails with a reason
    const bad = engine.frame({ ...schema.requestOf(schema.defaults()), inputs: { tensors: 'other', layer: 0, head: 0, n: f.n, d: 2 } });
    expect(bad.status.inputs.message).toMatch(/not loaded/);
    expect(bad.status.matrix.message).toMatch(/not loaded/); // nothing is computed from stale inputs
    expect(bad.M).toBeNull();
    engine.free?.();
    model.free();
  });
});
