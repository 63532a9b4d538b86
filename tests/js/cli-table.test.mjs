// cli-table.test.mjs: `attnviz table` (every layer x head x variant x readout in long format), its corpora
// (--text-file, --lines, --summary) and `readouts --all-heads` (layer and head in every object, --summary
// without the spectra, a warning once per head naming it): issue 28, "The CLI as a research tool".
// Every expected value comes from `attnviz readouts` on the same head and variant, or is computed here
// from the table's own per-text rows.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

import { writeNpy, values } from './cli-capture.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = process.env.ATTNVIZ_CLI || new URL('build/native/attnviz', ROOT).pathname;
/** How many readouts the library has (its registry: av_readout_info). */
const READOUTS = (await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) })).registry.readouts.length;
const COLUMNS = ['layer', 'head', 'variant', 'knobs', 'readout', 'value', 'reason'];

let tmp;
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'attnviz-table-')); });
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

function run(...args) {
  const p = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: p.status, stdout: p.stdout, stderr: p.stderr };
}
function ok(...args) {
  const r = run(...args);
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  return r;
}


/** RFC 4180 CSV: quoted fields with "" for a quote. */
function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else field += c;
  }
  return rows;
}
/** The CSV's rows as objects by its header. */
function csvObjects(text) {
  const [head, ...rows] = parseCsv(text);
  return { head, rows: rows.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]]))) };
}

// Model-shaped inputs: 2 layers, 2 query heads on 1 KV head, n = 12, d = 4; keys and queries positive but
// layer 1 head 1's queries, all negative, so relu's features vanish there alone and every row's
// normaliser is zero (a warning on that head only).
const L = 2, H = 2, N = 12, D = 4;
let q4, k4, v4, q2, k2, v2;
beforeAll(() => {
  const q = values(L * H * N * D, 3).map(Math.abs), k = values(L * N * D, 5).map((x) => 0.1 + Math.abs(x)), v = values(L * N * D, 9);
  for (let i = 0; i < N * D; i++) q[(1 * H + 1) * N * D + i] = -0.5 - q[(1 * H + 1) * N * D + i];
  q4 = writeNpy(join(tmp, 'q4.npy'), [L, H, N, D], q);
  k4 = writeNpy(join(tmp, 'k4.npy'), [L, 1, N, D], k);
  v4 = writeNpy(join(tmp, 'v4.npy'), [L, 1, N, D], v);
  q2 = writeNpy(join(tmp, 'q2.npy'), [N, D], values(N * D, 11));
  k2 = writeNpy(join(tmp, 'k2.npy'), [N, D], values(N * D, 13));
  v2 = writeNpy(join(tmp, 'v2.npy'), [N, D], values(N * D, 17));
});

/** The readouts object's scalar keys: what the table holds for it (no spectra, no input shape). */
function scalars(obj) {
  return Object.keys(obj).filter((k) => !['n', 'd', 'layer', 'head'].includes(k) &&
    (typeof obj[k] === 'number' || (obj[k] === null && obj[`${k}_reason`] !== undefined && !['singular_values', 'error_curve', 'singular_values_factor'].includes(k))));
}

describe('attnviz table: long format, one row per layer, head, variant and readout', () => {
  it('the columns, every head of 4-D tensors, and each value the one readouts prints for that head', () => {
    const variants = ['softmax', 'relu', 'focused', 'performer', 'nystrom'];
    const r = ok('table', '--variants', variants.join(','), '--q', q4, '--k', k4, '--v', v4);
    const { head, rows } = csvObjects(r.stdout);
    expect(head).toEqual(COLUMNS);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (const variant of variants) {
      const mine = rows.filter((x) => x.layer === String(l) && x.head === String(h) && x.variant === variant);
      const obj = JSON.parse(ok('readouts', '--variant', variant, '--layer', String(l), '--head', String(h), '--q', q4, '--k', k4, '--v', v4).stdout);
      expect(mine.map((x) => x.readout)).toEqual(scalars(obj)); // every scalar readout, in the JSON's order
      for (const x of mine) {
        if (obj[x.readout] === null) expect([x.value, x.reason]).toEqual(['', obj[`${x.readout}_reason`]]);
        else expect([Number(x.value), x.reason]).toEqual([obj[x.readout], '']); // digit for digit (%.17g both)
      }
    }
    expect(rows.length).toBeGreaterThan(L * H * variants.length * READOUTS);
  });

  it('knobs: the variant\'s own defaults resolved, or the ones given', () => {
    const rows = csvObjects(ok('table', '--variants', 'focused,performer,linformer', '--readouts', 'rank', '--q', q2, '--k', k2).stdout).rows;
    const knobs = Object.fromEntries(rows.map((x) => [x.variant, x.knobs]));
    expect(knobs.focused).toMatch(/(^|;)p=3(;|$)/);
    expect(knobs.performer).toMatch(/(^|;)m=256(;|$)/);
    expect(knobs.linformer).toMatch(/(^|;)s=12(;|$)/); // min(n, 64) at n = 12
    const given = csvObjects(ok('table', '--variants', 'focused,performer', '--p', '5', '--m', '64', '--readouts', 'rank', '--q', q2, '--k', k2).stdout).rows;
    expect(given.map((x) => x.knobs.match(/(^|;)(p|m)=\d+/)[0].replace(/^;/, ''))).toEqual(['p=5', 'm=64']);
  });

  it('variants without a causal form: empty values with the reason, not exit 2', () => {
    const r = ok('table', '--variants', 'all', '--causal', '--q', q4, '--k', k4);
    const rows = csvObjects(r.stdout).rows;
    for (const variant of ['efficient', 'linformer', 'nystrom']) {
      const mine = rows.filter((x) => x.variant === variant);
      expect(mine.length).toBe(L * H * (READOUTS + 3)); // every readout of the library and the three beside them, on every head
      for (const x of mine) expect([x.value, x.reason]).toEqual(['', `${variant} has no causal form`]);
    }
    const dwc = csvObjects(ok('table', '--variants', 'focused', '--dwc-kernel', '3', '--causal', '--readouts', 'rank', '--q', q4, '--k', k4).stdout).rows;
    expect(dwc.map((x) => [x.knobs.includes('dwc_kernel=3'), x.value, x.reason]))
      .toEqual(Array(L * H).fill([true, '', 'focused with --dwc-kernel has no causal form'])); // a knob that removes the form
    const focused = rows.filter((x) => x.variant === 'focused' && x.readout === 'row_kl_mean');
    expect(focused.length).toBe(L * H);
    for (const x of focused) expect(Number.isFinite(Number(x.value)) && x.value !== '').toBe(true);
  });

  it('2-D inputs: one row set, layer 0 and head 0', () => {
    const rows = csvObjects(ok('table', '--variants', 'softmax,elu', '--q', q2, '--k', k2, '--v', v2).stdout).rows;
    expect(new Set(rows.map((x) => `${x.layer}/${x.head}`))).toEqual(new Set(['0/0']));
    const obj = JSON.parse(ok('readouts', '--variant', 'elu', '--q', q2, '--k', k2, '--v', v2).stdout);
    expect(Number(rows.find((x) => x.variant === 'elu' && x.readout === 'row_kl_mean').value)).toBe(obj.row_kl_mean);
  });

  it('--readouts picks keys in its order; csv and jsonl hold the same rows', () => {
    const args = ['--variants', 'elu,efficient', '--causal', '--readouts', 'row_kl_mean,effective_rank', '--q', q4, '--k', k4];
    const csv = csvObjects(ok('table', ...args).stdout).rows;
    const jsonl = ok('table', ...args, '--format', 'jsonl').stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(jsonl.length).toBe(L * H * 2 * 2);
    expect(Object.keys(jsonl[0])).toEqual(COLUMNS);
    expect(jsonl.slice(0, 2).map((x) => x.readout)).toEqual(['row_kl_mean', 'effective_rank']);
    expect(jsonl.map((x) => ({ ...x, layer: String(x.layer), head: String(x.head), reason: x.reason ?? '' })))
      .toEqual(csv.map((x) => ({ ...x, value: x.value === '' ? null : Number(x.value) })));
    expect(jsonl.filter((x) => x.variant === 'efficient').every((x) => x.value === null && x.reason === 'efficient has no causal form')).toBe(true);
  });

  it('an unknown readout or variant: exit 2, one line naming it (cut short when long)', () => {
    const bad = run('table', '--variants', 'elu', '--readouts', 'rank,row_kl_meen', '--q', q2, '--k', k2);
    expect([bad.status, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toMatch(/^attnviz: --readouts row_kl_meen: not a scalar readout \(one of sigma1, rank, [^\n]*\)\n$/);
    // the list is every key the table has rows for, the ones docs/model.md names beside the library's included
    const listed = /\(one of (.*)\)/.exec(bad.stderr)[1].split(', ');
    const all = csvObjects(ok('table', '--variants', 'elu', '--q', q2, '--k', k2).stdout).rows.map((x) => x.readout);
    expect(listed).toEqual(expect.arrayContaining([...new Set(all)]));
    expect(listed).toEqual(expect.arrayContaining(['semiseparable_ceiling', 'factor_rank', 'noise_floor_factor']));
    for (const key of ['singular_values', 'variant', 'n']) { // a spectrum, a name, the input's size: no rows
      const r = run('table', '--variants', 'elu', '--readouts', key, '--q', q2, '--k', k2);
      expect([r.status, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toMatch(new RegExp(`^attnviz: --readouts ${key}: not a scalar readout \\(one of sigma1, `));
    }
    const extra = csvObjects(ok('table', '--variants', 'softmax', '--readouts', 'semiseparable_ceiling', '--q', q2, '--k', k2).stdout).rows;
    expect(extra.map((x) => x.readout)).toEqual(['semiseparable_ceiling']); // a number readouts prints beside the library's
    const long = 'x'.repeat(500);
    const v = run('table', '--variants', `elu,${long}`, '--q', q2, '--k', k2);
    expect([v.status, v.stdout]).toEqual([2, '']);
    expect(v.stderr).toMatch(/^attnviz: --variants x{40}…: unknown variant \(all, or some of softmax, [^\n]*\)\n$/);
    // the input is cut at 40 characters; the rest is the registry's list of names, which grows with it
    expect(v.stderr).not.toMatch(/x{41}/);
    expect(v.stderr.length).toBeLessThan(400);
  });
});

describe('readouts --all-heads: layer and head in every object, --summary, a warning once per head', () => {
  const common = () => ['--variant', 'relu', '--causal', '--q', q4, '--k', k4, '--v', v4];

  it('each object carries its layer and head, and equals readouts --layer --head', () => {
    const all = JSON.parse(ok('readouts', '--all-heads', ...common()).stdout);
    expect(all.readouts.length).toBe(L);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
      expect([all.readouts[l][h].layer, all.readouts[l][h].head]).toEqual([l, h]);
      expect(all.readouts[l][h]).toEqual(JSON.parse(ok('readouts', ...common(), '--layer', String(l), '--head', String(h)).stdout));
    }
  });

  it('--summary leaves out the spectra and nothing else', () => {
    const full = ok('readouts', '--all-heads', ...common()), sum = ok('readouts', '--all-heads', '--summary', ...common());
    const a = JSON.parse(full.stdout), b = JSON.parse(sum.stdout);
    const spectra = ['singular_values', 'error_curve', 'singular_values_factor'];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
      const o = b.readouts[l][h];
      for (const k of spectra) if (Array.isArray(a.readouts[l][h][k])) expect(o).not.toHaveProperty(k);
      const kept = Object.fromEntries(Object.entries(a.readouts[l][h]).filter(([k, v]) => !(spectra.includes(k) && Array.isArray(v))));
      expect(o).toEqual(kept);
    }
    expect(sum.stdout.length).toBeLessThan(full.stdout.length);
  });

  it('a warning names its layer and head, once', () => {
    const r = ok('readouts', '--all-heads', ...common());
    const lines = r.stderr.trim().split('\n');
    const all = JSON.parse(r.stdout);
    const warned = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++)
      if (all.readouts[l][h].status.some((s) => /products sum to zero or less/.test(s))) warned.push(`layer ${l} head ${h}`);
    expect(warned).toEqual(['layer 1 head 1']); // the head whose queries are all negative
    // one line for the sentence, naming every step the object's status gives it
    const status = all.readouts[1][1].status.filter((x) => /products sum to zero or less/.test(x)).map((x) => x.split(': ')[0]);
    expect(status.length).toBeGreaterThan(1);
    expect(lines).toEqual([`attnviz: warning: layer 1 head 1: ${status.join(', ')}: some row's products sum to zero or less, so its weights are zero or undefined`]);
  });

  it('table: the same warning names the head and the variant', () => {
    const r = ok('table', '--variants', 'relu,softmax', '--causal', '--q', q4, '--k', k4);
    expect(r.stderr.trim().split('\n')).toEqual([`attnviz: warning: layer 1 head 1, relu: matrix, row_entropy_hist: some row's products sum to zero or less, so its weights are zero or undefined`]);
  });

  it('table --readouts: warnings only of the steps the readouts asked for need', () => {
    const kl = ok('table', '--variants', 'relu', '--causal', '--readouts', 'row_kl_mean', '--q', q4, '--k', k4);
    expect(kl.stderr.trim().split('\n')).toEqual([`attnviz: warning: layer 1 head 1, relu: matrix: some row's products sum to zero or less, so its weights are zero or undefined`]);
    const rank = ok('table', '--variants', 'relu', '--causal', '--readouts', 'rank', '--q', q4, '--k', k4);
    expect(rank.stderr).toBe(kl.stderr); // the matrix serves every readout; row_entropy_hist none asked for
  });
});

/** A llama2.c checkpoint: dim 8, hidden 8, 1 layer, 2 heads, 2 KV heads, vocab 263, seq_len 16 (as in
 * cli-files.test.mjs). */
function tinyModel() {
  const [dim, hid, layers, vocab, seq, hs] = [8, 8, 1, 263, 16, 4];
  const floats = vocab * dim + layers * (dim + 4 * dim * dim + dim + 3 * hid * dim) + dim + seq * hs;
  const dv = new DataView(new ArrayBuffer(28 + 4 * floats));
  [dim, hid, layers, 2, 2, vocab, seq].forEach((v, i) => dv.setInt32(4 * i, v, true));
  let x = 7;
  for (let i = 0; i < floats; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    dv.setFloat32(28 + 4 * i, 0.5 + (x / 2 ** 32) * 0.3, true);
  }
  return new Uint8Array(dv.buffer);
}
/** Its tokenizer: <unk>, BOS, EOS, the 256 byte pieces, ' ', 'h', 'i', 'hi'. */
function tinyTokenizer() {
  const pieces = ['<unk>', '\n<s>\n', '\n</s>\n', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`), ' ', 'h', 'i', 'hi'];
  const parts = [Buffer.from(new Int32Array([8]).buffer)];
  pieces.forEach((p, i) => {
    const head = Buffer.alloc(8);
    head.writeFloatLE(i < 259 ? 0 : i - 259, 0);
    head.writeInt32LE(Buffer.byteLength(p), 4);
    parts.push(head, Buffer.from(p));
  });
  return Buffer.concat(parts);
}

describe('attnviz table on texts: capture and table per text, and --summary over them', () => {
  let M, T, dir, lines;
  const TEXTS = ['hi hi', 'ih hh i', 'hi', 'h i h i hi'];
  beforeAll(() => {
    M = join(tmp, 'tiny.bin');
    T = join(tmp, 'tiny-tok.bin');
    writeFileSync(M, tinyModel());
    writeFileSync(T, tinyTokenizer());
    dir = join(tmp, 'texts');
    mkdirSync(dir);
    TEXTS.forEach((t, i) => writeFileSync(join(dir, `t${i}.txt`), `${t}\n`));
    writeFileSync(join(dir, 'notes.md'), 'not a text'); // only .txt files are texts
    lines = join(tmp, 'lines.txt');
    writeFileSync(lines, `${TEXTS[0]}\n\n${TEXTS.slice(1).join('\n')}\n`); // a blank line is no text
  });
  const model = () => ['--model', M, '--tokenizer', T];
  const VARIANTS = 'softmax,focused,efficient';

  it('a folder: a text column with the file names; each row the readouts of that text\'s capture', () => {
    const { head, rows } = csvObjects(ok('table', '--variants', VARIANTS, '--causal', ...model(), '--text-file', dir).stdout);
    expect(head).toEqual(['text', ...COLUMNS]);
    expect([...new Set(rows.map((x) => x.text))]).toEqual(TEXTS.map((_, i) => `t${i}.txt`));
    const cap = join(tmp, 'cap2');
    ok('capture', ...model(), '--text', TEXTS[2], '-o', cap);
    const obj = JSON.parse(ok('readouts', '--variant', 'focused', '--causal', '--layer', '0', '--head', '1', '--q', join(cap, 'q.npy'),
      '--k', join(cap, 'k.npy'), '--v', join(cap, 'v.npy')).stdout);
    const mine = rows.filter((x) => x.text === 't2.txt' && x.variant === 'focused' && x.head === '1');
    expect(mine.map((x) => x.readout)).toEqual(scalars(obj));
    for (const x of mine) expect(x.value === '' ? null : Number(x.value)).toEqual(obj[x.readout]);
  });

  it('--lines: one text a line, named by its line number; the same rows as the folder', () => {
    const byLine = csvObjects(ok('table', '--variants', VARIANTS, '--causal', ...model(), '--text-file', lines, '--lines').stdout).rows;
    const byFile = csvObjects(ok('table', '--variants', VARIANTS, '--causal', ...model(), '--text-file', dir).stdout).rows;
    expect([...new Set(byLine.map((x) => x.text))]).toEqual(['1', '3', '4', '5']);
    const strip = (x) => { const { text, ...rest } = x; return rest; };
    expect(byLine.map(strip)).toEqual(byFile.map(strip));
  });

  it('--summary: used, nulls, mean, std (population), min and max of the per-text rows', () => {
    const rows = csvObjects(ok('table', '--variants', VARIANTS, '--causal', ...model(), '--text-file', dir).stdout).rows;
    const sum = csvObjects(ok('table', '--variants', VARIANTS, '--causal', ...model(), '--text-file', dir, '--summary').stdout);
    expect(sum.head).toEqual(['layer', 'head', 'variant', 'knobs', 'readout', 'used', 'nulls', 'mean', 'std', 'min', 'max', 'reason']);
    const groups = new Map();
    for (const x of rows) {
      const key = `${x.layer}/${x.head}/${x.variant}/${x.readout}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(x.value === '' ? null : Number(x.value));
    }
    expect(sum.rows.length).toBe(groups.size);
    let checked = 0;
    for (const s of sum.rows) {
      const vals = groups.get(`${s.layer}/${s.head}/${s.variant}/${s.readout}`), nums = vals.filter((v) => v !== null);
      expect([Number(s.used), Number(s.nulls)]).toEqual([nums.length, vals.length - nums.length]);
      if (!nums.length) {
        expect([s.mean, s.std, s.min, s.max]).toEqual(['', '', '', '']);
        expect(s.reason).toMatch(new RegExp(`^null in ${vals.length} of ${vals.length} texts, left out of the statistics: `));
        continue;
      }
      const mean = nums.reduce((a, b) => a + b, 0) / nums.length;
      const std = Math.sqrt(nums.reduce((a, b) => a + (b - mean) ** 2, 0) / nums.length);
      expect(Number(s.mean)).toBeCloseTo(mean, 12);
      expect(Number(s.std)).toBeCloseTo(std, 12);
      expect([Number(s.min), Number(s.max)]).toEqual([Math.min(...nums), Math.max(...nums)]);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
    expect(sum.rows.filter((s) => s.variant === 'efficient').every((s) => s.used === '0' && s.nulls === '4')).toBe(true);
  });

  it('--summary: knobs that follow n (linformer\'s s = min(n, 64)) joined with |, in text order', () => {
    const args = ['--variants', 'linformer', '--readouts', 'rank', ...model(), '--text-file', dir];
    const rows = csvObjects(ok('table', ...args).stdout).rows.filter((x) => x.layer === '0' && x.head === '0');
    const sum = csvObjects(ok('table', ...args, '--summary').stdout).rows.find((x) => x.layer === '0' && x.head === '0');
    const distinct = [...new Set(rows.map((x) => x.knobs))];
    expect(distinct.length).toBeGreaterThan(1); // the texts have different token counts
    expect(sum.knobs).toBe(distinct.join('|'));
  });

  it('refusals: --summary without texts, --q with --text-file, a folder without .txt files', () => {
    const a = run('table', '--variants', 'elu', '--q', q2, '--k', k2, '--summary');
    expect([a.status, a.stderr]).toEqual([2, 'attnviz: --summary: needs --text-file (it is about several texts)\n']);
    const b = run('table', '--variants', 'elu', ...model(), '--text-file', dir, '--q', q2);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/^attnviz: --q: the texts' captures are the inputs/);
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const c = run('table', '--variants', 'elu', ...model(), '--text-file', empty);
    expect([c.status, c.stdout]).toEqual([2, '']);
    expect(c.stderr).toMatch(/^attnviz: --text-file .*empty: a folder without \.txt files\n$/);
  });
  it('capture --text-file: one capture a text under -o, the bytes of capture --text, all or none', async () => {
    const { readFileSync, existsSync, readdirSync, writeFileSync: wf, mkdirSync: md } = await import('node:fs');
    const out = join(tmp, 'caps');
    ok('capture', ...model(), '--text-file', dir, '-o', out);
    expect(readdirSync(out).sort()).toEqual(['t0', 't1', 't2', 't3']); // .txt left off the names, notes.md no text
    for (const [i, t] of TEXTS.entries()) {
      const one = join(tmp, `one${i}`);
      ok('capture', ...model(), '--text', t, '-o', one);
      for (const f of ['q.npy', 'k.npy', 'v.npy', 'tokens.json'])
        expect(readFileSync(join(out, `t${i}`, f)).equals(readFileSync(join(one, f))), `t${i}/${f}`).toBe(true);
    }
    const byLine = join(tmp, 'caps-lines');
    ok('capture', ...model(), '--text-file', lines, '--lines', '-o', byLine);
    expect(readdirSync(byLine).sort()).toEqual(['1', '3', '4', '5']);
    expect(readFileSync(join(byLine, '4', 'q.npy')).equals(readFileSync(join(out, 't2', 'q.npy')))).toBe(true);
    const single = join(tmp, 'caps-one');
    ok('capture', ...model(), '--text-file', join(dir, 't1.txt'), '-o', single);
    expect(readdirSync(single)).toEqual(['t1']);
    // all or none: a text that is not UTF-8 refuses before anything is written; a target that cannot be
    // written leaves every other text's old files as they were
    const bad = join(tmp, 'bad-texts');
    md(bad);
    wf(join(bad, 'a.txt'), 'hi');
    wf(join(bad, 'b.txt'), Buffer.from([0x68, 0xff]));
    const r = run('capture', ...model(), '--text-file', bad, '-o', join(tmp, 'caps-bad'));
    expect([r.status, existsSync(join(tmp, 'caps-bad'))]).toEqual([2, false]);
    expect(r.stderr).toMatch(/^attnviz: --text-file b\.txt: not valid UTF-8\n$/);
    wf(join(out, 't0', 'q.npy'), 'old'); // t0's old file, which the failed call must leave
    wf(join(dir, 't9.txt'), 'h');
    md(join(out, 't9'));
    md(join(out, 't9', 'q.npy')); // a folder where t9's q.npy goes
    const f = run('capture', ...model(), '--text-file', dir, '-o', out);
    expect(f.status).not.toBe(0);
    expect(readFileSync(join(out, 't0', 'q.npy'), 'utf8')).toBe('old');
    expect(f.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(out, 't9', 'k.npy'))).toBe(false);
    rmSync(join(dir, 't9.txt'));
    const both = run('capture', ...model(), '--text', 'hi', '--text-file', dir, '-o', out);
    expect([both.status, both.stderr]).toEqual([2, 'attnviz: --text, --text-file and --ids: give one (a text, a file or folder of texts, or token ids)\n']);
  });
});
