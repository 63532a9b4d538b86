// cli-refusals.test.mjs: the CLI on the inputs of issue 27 that the library now refuses or reports (items 1,
// 4 and 6): a vocabulary without BOS and EOS, a byte the vocabulary has no piece for, non-finite weights in
// a checkpoint; each is one line on stderr, exit status 2, nothing on stdout and the -o folder never
// created. And recall whose memory overflowed says so instead of "status": "ok".
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url);
const CLI = process.env.ATTNVIZ_CLI || new URL('build/native/attnviz', ROOT).pathname;

let tmp;
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'attnviz-refusals-')); });
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

function run(...args) {
  const p = spawnSync(CLI, args, { encoding: 'utf8' });
  return { status: p.status, stdout: p.stdout, stderr: p.stderr };
}

/** The checkpoint of the report: header (8, 8, 1, 1, 1, vocab, 8), every weight `fill` (dim 8, one layer,
 * one head: 536 floats and the embedding's 8·vocab; vocab 1 gives the report's 544). */
function smallModel(vocab, fill = 0.1) {
  const floats = 536 + 8 * vocab;
  const buf = Buffer.alloc(28 + 4 * floats);
  [8, 8, 1, 1, 1, vocab, 8].forEach((v, i) => buf.writeInt32LE(v, 4 * i));
  for (let i = 0; i < floats; i++) buf.writeFloatLE(fill, 28 + 4 * i);
  return buf;
}

/** A llama2.c tokenizer of these pieces (max_token_length 8, scores 0). */
function tokenizer(pieces) {
  const parts = [Buffer.from(Int32Array.from([8]).buffer)];
  for (const p of pieces) {
    const b = Buffer.from(p, 'utf8'), head = Buffer.alloc(8);
    head.writeInt32LE(b.length, 4);
    parts.push(head, b);
  }
  return Buffer.concat(parts);
}

const PIECES = ['<unk>', '\n<s>\n', '\n</s>\n', ' '];
// the float index of wq's entry 5 in smallModel(4): after the embedding (8·4) and rms_att (8)
const WQ5 = 8 * 4 + 8 + 5;

function write(name, bytes) {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  return p;
}

/** One line on stderr matching pattern, exit status 2, nothing on stdout. */
function refused(r, pattern) {
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n').filter((s) => s.length > 0);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^attnviz: /);
  expect(lines[0]).toMatch(pattern);
}

describe('a model the library refuses at load: exit 2, one line, nothing written', () => {
  it('a sound small model captures (the control for the cases below)', () => {
    const m = write('ok.bin', smallModel(4)), t = write('ok-tok.bin', tokenizer(PIECES));
    const dir = join(tmp, 'ok-cap');
    const r = run('capture', '--model', m, '--tokenizer', t, '--text', ' ', '-o', dir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(existsSync(join(dir, 'q.npy'))).toBe(true);
  });

  it('a vocabulary of one piece (no BOS, no EOS): the report\'s files', () => {
    const m = write('v1.bin', smallModel(1));
    expect(smallModel(1).length).toBe(28 + 4 * 544);
    const t = write('v1-tok.bin', Buffer.from('04000000000000000100000020', 'hex'));
    const dir = join(tmp, 'v1-cap');
    refused(run('capture', '--model', m, '--tokenizer', t, '--text', ' ', '-o', dir), /--model .*vocab_size is 1.*BOS/);
    expect(existsSync(dir)).toBe(false);
    refused(run('generate-text', '--model', m, '--tokenizer', t, '--text', ' ', '--steps', '4'), /--model .*vocab_size is 1.*BOS/);
  });

  it('a vocabulary of two pieces', () => {
    const m = write('v2.bin', smallModel(2)), t = write('v2-tok.bin', tokenizer(['<unk>', ' ']));
    const dir = join(tmp, 'v2-cap');
    refused(run('capture', '--model', m, '--tokenizer', t, '--text', ' ', '-o', dir), /vocab_size is 2.*BOS/);
    expect(existsSync(dir)).toBe(false);
  });

  it('a byte the vocabulary has no piece for (its id byte + 3 past the vocabulary)', () => {
    const m = write('ok.bin', smallModel(4)), t = write('ok-tok.bin', tokenizer(PIECES));
    const dir = join(tmp, 'byte-cap');
    refused(run('capture', '--model', m, '--tokenizer', t, '--text', 'b', '-o', dir), /--text: .*no byte piece for byte 0x62/);
    expect(existsSync(dir)).toBe(false);
  });

  for (const [what, value, said] of [['NaN', NaN, /\(NaN\)/], ['Inf', Infinity, /\(Inf\)/], ['-Inf', -Infinity, /\(-Inf\)/]]) {
    it(`a weight that is ${what}: the tensor, the value and the index named`, () => {
      const bytes = smallModel(4);
      bytes.writeFloatLE(value, 28 + 4 * WQ5);
      const m = write(`nf-${what}.bin`, bytes), t = write('ok-tok.bin', tokenizer(PIECES));
      const dir = join(tmp, `nf-${what}-cap`);
      const r = run('capture', '--model', m, '--tokenizer', t, '--text', ' ', '-o', dir);
      refused(r, /--model .*tensor wq holds a non-finite value/);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).toMatch(/at index 5\b/);
      expect(existsSync(dir)).toBe(false);
      refused(run('generate-text', '--model', m, '--tokenizer', t, '--text', ' ', '--steps', '3'), /tensor wq holds a non-finite value/);
    });
  }
});

describe('recall whose memory overflowed (issue 27, item 4)', () => {
  for (const [variant, scale] of [['softmax', '1.7976931348623157e308'], ['retention', '1e38']]) {
    it(`${variant} at scale ${scale}: a warning and a status that is not "ok"`, () => {
      const r = run('recall', '--variant', variant, '--pairs', '4', '--d', '4', '--seeds', '1', '--scale', scale);
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.status).not.toBe('ok');
      expect(out.status).toMatch(/exceeded|overflowed/);
      expect(r.stderr).toMatch(/^attnviz: warning: recall: /);
    });
  }
});
