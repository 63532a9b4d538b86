// cli-hf.test.mjs: the CLI's --model DIR (docs/hf.md "The CLI") on tiny Hugging Face folders written here
// (tests/e2e/tiny-hf.mjs: Llama with GQA in BF16 shards, Qwen2 with biases in F16, GPT-2 in F32, each with a
// byte-level tokenizer.json). Every command that takes a model takes the folder: capture (--text with the
// folder's tokenizer, --ids, --logits), readouts --all-heads --model, table --text-file, generate-text,
// linearize; each agrees with the others where they compute the same thing, and a broken folder is refused
// with one line and nothing written. The forward pass's numbers are the numpy oracle's business
// (tests/oracle/hf_oracle.py); here, that the commands are wired to it.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';
import { run, json } from './cli-capture.mjs';
import { writeTinyHF } from '../e2e/tiny-hf.mjs';

let tmp;
const folders = {};
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'attnviz-cli-hf-'));
  for (const kind of ['llama', 'qwen2', 'gpt2']) folders[kind] = writeTinyHF(tmp, kind);
});
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

const TEXT = 'the cat sat on the mat, then the other one';
const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

describe.each(['llama', 'qwen2', 'gpt2'])('%s folder', (kind) => {
  it('capture --text uses the folder\'s tokenizer.json; --ids of the same ids gives the same tensors', () => {
    const dir = folders[kind].dir, a = join(tmp, `${kind}-text`), b = join(tmp, `${kind}-ids`);
    const r = run('capture', '--model', dir, '--text', TEXT, '-o', a);
    expect([r.status, r.stderr]).toEqual([0, '']);
    const tokens = JSON.parse(readFileSync(join(a, 'tokens.json'), 'utf8'));
    expect(tokens.text).toBe(TEXT);
    expect(tokens.pieces.join('')).toContain('cat sat on the mat');
    const r2 = run('capture', '--model', dir, '--ids', tokens.ids.join(','), '--logits', '-o', b);
    expect([r2.status, r2.stderr]).toEqual([0, '']);
    for (const f of ['q.npy', 'k.npy', 'v.npy']) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f)))).toBe(true);
    const q = readNpy(join(a, 'q.npy')), lg = readNpy(join(b, 'logits.npy')), c = folders[kind].config;
    const heads = c.num_attention_heads ?? c.n_head, layers = c.num_hidden_layers ?? c.n_layer;
    expect(q.shape.slice(0, 3)).toEqual([layers, heads, tokens.ids.length]);
    expect(lg.shape).toEqual([tokens.ids.length, c.vocab_size]);
    expect(Array.from(lg.data).every(Number.isFinite)).toBe(true);
    expect(JSON.parse(readFileSync(join(b, 'tokens.json'), 'utf8')).text).toBe(null);
  });

  it('readouts --all-heads --model DIR --text equals readouts --all-heads of the capture\'s files', () => {
    const dir = folders[kind].dir, cap = join(tmp, `${kind}-text`);
    const direct = run('readouts', '--all-heads', '--summary', '--variant', 'elu', '--causal', '--model', dir, '--text', TEXT);
    const files = run('readouts', '--all-heads', '--summary', '--variant', 'elu', '--causal', '--q', join(cap, 'q.npy'),
      '--k', join(cap, 'k.npy'), '--v', join(cap, 'v.npy'));
    expect([direct.status, direct.stderr]).toEqual([0, '']);
    expect(direct.stdout).toBe(files.stdout);
  });

  it('linearize with softmax swapped in is the original; its loss is the logits\' cross-entropy', () => {
    const dir = folders[kind].dir;
    const j = json('linearize', '--model', dir, '--text', TEXT, '--variant', 'softmax');
    expect(Math.abs(j.loss - j.loss_original)).toBeLessThan(1e-5);
    // the loss from capture --logits: mean over positions of −log softmax(logits[t])[id[t+1]]
    const cap = join(tmp, `${kind}-ids`), ids = JSON.parse(readFileSync(join(cap, 'tokens.json'), 'utf8')).ids;
    const lg = readNpy(join(cap, 'logits.npy')), V = lg.shape[1];
    let sum = 0;
    for (let t = 0; t + 1 < ids.length; t++) {
      const row = lg.data.subarray(t * V, (t + 1) * V), mx = Math.max(...row);
      const lse = mx + Math.log(row.reduce((s, x) => s + Math.exp(x - mx), 0));
      sum += lse - row[ids[t + 1]];
    }
    expect(Math.abs(j.loss_original - sum / (ids.length - 1))).toBeLessThan(1e-6);
    const e = json('linearize', '--model', dir, '--text', TEXT, '--variant', 'elu');
    expect(e.loss).not.toBe(e.loss_original);
  });

  it('table --text-file and generate-text take the folder', () => {
    const dir = folders[kind].dir, f = join(tmp, `${kind}-texts.txt`);
    writeFileSync(f, `${TEXT}\nthe other one\n`);
    const t = run('table', '--variants', 'elu,softmax', '--readouts', 'rank', '--model', dir, '--text-file', f, '--lines');
    expect([t.status, t.stderr]).toEqual([0, '']);
    const c = folders[kind].config, heads = c.num_attention_heads ?? c.n_head, layers = c.num_hidden_layers ?? c.n_layer;
    expect(t.stdout.trim().split('\n').length - 1).toBe(2 * layers * heads * 2); // texts × heads × variants × 1 readout
    const g = run('generate-text', '--model', dir, '--text', 'the cat', '--steps', '5');
    expect([g.status, g.stderr]).toEqual([0, '']);
    expect(g.stdout.startsWith('the cat')).toBe(true);
  });
});

describe('broken folders: one line, exit 2, nothing written', () => {
  const refused = (args, re) => {
    const out = join(tmp, `never-${Math.random().toString(36).slice(2)}`);
    const r = run(...args, '-o', out);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(re);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  };
  it('a truncated shard, a missing shard, a folder without config.json, an unknown architecture', () => {
    const t = writeTinyHF(join(tmp, 'trunc'), 'llama');
    const shard = readdirSync(t.dir).find((n) => n.endsWith('.safetensors'));
    truncateSync(join(t.dir, shard), statSync(join(t.dir, shard)).size - 3);
    refused(['capture', '--model', t.dir, '--text', TEXT], /^attnviz: --model .*safetensors: .*(truncated|past)/);
    const m = writeTinyHF(join(tmp, 'missing'), 'llama');
    const shards = readdirSync(m.dir).filter((n) => n.endsWith('.safetensors'));
    expect(shards.length).toBeGreaterThan(1); // the Llama folder is sharded with an index
    rmSync(join(m.dir, shards[1]));
    refused(['capture', '--model', m.dir, '--text', TEXT], /which the folder does not hold/);
    refused(['capture', '--model', tmp, '--text', TEXT], /has no config\.json/);
    const u = writeTinyHF(join(tmp, 'unknown'), 'llama');
    const cfg = JSON.parse(readFileSync(join(u.dir, 'config.json'), 'utf8'));
    writeFileSync(join(u.dir, 'config.json'), JSON.stringify({ ...cfg, architectures: ['Phi3ForCausalLM'] }));
    refused(['capture', '--model', u.dir, '--text', TEXT], /Phi3ForCausalLM is not one attnviz runs/);
  });
  it('a text longer than --max-tokens names the option', () => {
    refused(['capture', '--model', folders.llama.dir, '--max-tokens', '4', '--text', TEXT], /more than the 4 this run holds \(--max-tokens raises it\)/);
  });
});
