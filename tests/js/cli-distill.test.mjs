// cli-distill.test.mjs: `attnviz distill` as a research tool (issue 28): train on one set of inputs and
// report the metrics on held-out ones (--holdout), and every head of a 4-D capture in one call with a
// table of results (--all-heads). Every number is checked against `attnviz readouts` of the written W on
// the same inputs, or against the one-head call it stands for.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';
import { capture, values, writeNpy, run, json } from './cli-capture.mjs';

const METRICS = ['row_kl_mean', 'error_fro_rel', 'row_entropy_mean', 'output_error_rel'];

let tmp;
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'attnviz-distill-')); });
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });


/** The metrics `attnviz readouts --variant hedgehog` prints for these inputs and W (or the identity). */
function readoutsOf(inputs, w, extra = []) {
  const r = json('readouts', '--variant', 'hedgehog', '--causal', ...(w ? ['--hedgehog-w', w] : []), ...inputs, ...extra);
  const out = {};
  for (const key of METRICS) {
    out[key] = r[key];
    if (r[key] === null) out[`${key}_reason`] = r[`${key}_reason`];
  }
  return out;
}

describe('distill --holdout: train on one text, the metrics on another', () => {
  let train, held;
  beforeAll(() => {
    for (const [name, seed, n] of [['train', 1, 40], ['held', 2, 33]])
      expect(run('generate', '--gen', 'clustered', '--n', String(n), '--d', '6', '--seed', String(seed), '-o', join(tmp, name)).status).toBe(0);
    train = ['q', 'k', 'v'].map((x) => join(tmp, 'train', `${x}.npy`));
    held = ['q', 'k', 'v'].map((x) => join(tmp, 'held', `${x}.npy`));
  });

  it('train and held-out metrics, before and after, are readouts of the starting W and of W.npy on each', () => {
    const w = join(tmp, 'W.npy');
    const j = json('distill', '--q', train[0], '--k', train[1], '--v', train[2], '--causal', '--steps', '40',
      '--holdout', ...held, '-o', w);
    const trainIn = ['--q', train[0], '--k', train[1], '--v', train[2]];
    const heldIn = ['--q', held[0], '--k', held[1], '--v', held[2]];
    expect(j.train).toEqual({ n: 40, before: readoutsOf(trainIn), after: readoutsOf(trainIn, w) });
    expect(j.holdout).toEqual({ n: 33, before: readoutsOf(heldIn), after: readoutsOf(heldIn, w) });
    expect(j.kl_rise).toBe(j.holdout.after.row_kl_mean / j.train.after.row_kl_mean - 1);
    // training lowered the training KL, and the held-out numbers are another text's
    expect(j.train.after.row_kl_mean).toBeLessThan(j.train.before.row_kl_mean / 2);
    expect(j.holdout.after.row_kl_mean).not.toBe(j.train.after.row_kl_mean);
    expect(j.loss_start).toBeCloseTo(j.train.before.row_kl_mean, 5); // the loss is the same KL, in float64
  });

  it('--hedgehog-w W0: "before" is W0 on both sets, never the identity on the held-out one', () => {
    const w0 = writeNpy(join(tmp, 'W0.npy'), [6, 5], values(30, 77, 0.8));
    const w = join(tmp, 'W3.npy');
    const j = json('distill', '--q', train[0], '--k', train[1], '--causal', '--steps', '5', '--hedgehog-w', w0,
      '--holdout', held[0], held[1], '-o', w);
    expect(readNpy(w).shape).toEqual([6, 5]);
    expect(j.train.before).toEqual(readoutsOf(['--q', train[0], '--k', train[1]], w0));
    expect(j.holdout.before).toEqual(readoutsOf(['--q', held[0], '--k', held[1]], w0));
    expect(j.holdout.after).toEqual(readoutsOf(['--q', held[0], '--k', held[1]], w));
  });

  it('without V the output error is null with the library\'s reason; without --holdout no held-out keys', () => {
    const w = join(tmp, 'W2.npy');
    const j = json('distill', '--q', train[0], '--k', train[1], '--causal', '--steps', '3', '--holdout', held[0], held[1], '-o', w);
    expect(j.holdout.after.output_error_rel).toBeNull();
    expect(j.holdout.after.output_error_rel_reason).toBe(readoutsOf(['--q', held[0], '--k', held[1]], w).output_error_rel_reason);
    const plain = json('distill', '--q', train[0], '--k', train[1], '--causal', '--steps', '3', '-o', w);
    expect(plain.holdout).toBeUndefined();
    expect(plain.kl_rise).toBeUndefined();
    expect(plain.train.after).toEqual(readoutsOf(['--q', train[0], '--k', train[1]], w));
  });
});

describe('distill --all-heads: every head in one call, with a table', () => {
  let c, h;
  beforeAll(() => {
    c = capture(tmp, 3, { L: 2, H: 2, KVH: 1, n: 14, d: 4 });
    h = capture(tmp, 5, { L: 2, H: 2, KVH: 1, n: 11, d: 4 });
  });
  const STEPS = '15';
  const args = () => ['distill', '--q', c.q, '--k', c.k, '--v', c.v, '--causal', '--steps', STEPS, '--holdout', h.q, h.k, h.v];

  it('one row per head, each what the one-head call gives; W.npy is (layers, heads, d, cols), W[l, h] that head\'s', () => {
    const wall = join(tmp, 'Wall.npy');
    const t = json(...args(), '--all-heads', '-o', wall);
    expect(t).toMatchObject({ steps: 15, layers: 2, heads: 2, n: 14, n_holdout: 11, d: 4, causal: true });
    expect(t.table.map((r) => [r.layer, r.head])).toEqual([[0, 0], [0, 1], [1, 0], [1, 1]]);
    const W = readNpy(wall);
    expect(W.shape).toEqual([2, 2, 4, 4]);
    for (const row of t.table) {
      const w1 = join(tmp, `W${row.layer}${row.head}.npy`);
      const one = json(...args(), '--layer', String(row.layer), '--head', String(row.head), '-o', w1);
      expect(row).toEqual({
        layer: row.layer, head: row.head,
        train_kl_before: one.train.before.row_kl_mean, train_kl_after: one.train.after.row_kl_mean,
        holdout_kl_before: one.holdout.before.row_kl_mean, holdout_kl_after: one.holdout.after.row_kl_mean,
        kl_rise: one.kl_rise, steps_taken: one.steps_taken, loss_start: one.loss_start, loss_end: one.loss_end,
        status: one.status,
      });
      const i = row.layer * 2 + row.head;
      expect(Array.from(W.data.slice(i * 16, i * 16 + 16))).toEqual(Array.from(readNpy(w1).data));
      // and the held-out KL is the readout of that slice on the held-out head
      const slice = writeNpy(join(tmp, 'slice.npy'), [4, 4], W.data.slice(i * 16, i * 16 + 16));
      expect(readoutsOf(['--q', h.q, '--k', h.k, '--layer', String(row.layer), '--head', String(row.head)], slice).row_kl_mean)
        .toBe(row.holdout_kl_after);
    }
  });

  it('seeded and deterministic: two runs give the same bytes', () => {
    const [w1, w2] = [join(tmp, 'd1.npy'), join(tmp, 'd2.npy')];
    const a = run(...args(), '--all-heads', '-o', w1), b = run(...args(), '--all-heads', '-o', w2);
    expect(a.stdout).toBe(b.stdout);
    expect(readFileSync(w1).equals(readFileSync(w2))).toBe(true);
  });

  it('--format csv: the same table; without --holdout the held-out cells are empty and say why', () => {
    const t = json(...args(), '--all-heads', '-o', join(tmp, 'c.npy'));
    const r = run(...args(), '--all-heads', '--format', 'csv', '-o', join(tmp, 'c.npy'));
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('layer,head,train_kl_before,train_kl_after,holdout_kl_before,holdout_kl_after,kl_rise,steps_taken,loss_start,loss_end,status,reasons');
    expect(lines).toHaveLength(5);
    for (const [i, line] of lines.slice(1).entries()) {
      const cells = line.split(',');
      const row = t.table[i];
      expect(cells.slice(0, 10).map(Number)).toEqual([row.layer, row.head, row.train_kl_before, row.train_kl_after,
        row.holdout_kl_before, row.holdout_kl_after, row.kl_rise, row.steps_taken, row.loss_start, row.loss_end]);
      expect(cells.slice(10)).toEqual(['ok', '']); // RFC 4180: quoted only when needed, as the table's fields
    }
    const no = json('distill', '--q', c.q, '--k', c.k, '--causal', '--steps', '2', '--all-heads', '-o', join(tmp, 'c.npy'));
    for (const row of no.table) {
      for (const key of ['holdout_kl_before', 'holdout_kl_after', 'kl_rise']) {
        expect(row[key]).toBeNull();
        expect(row[`${key}_reason`]).toBe('no held-out inputs (--holdout)');
      }
      for (const [key, v] of Object.entries(row)) if (v === null) expect(row[`${key}_reason`], key).toMatch(/\w/);
    }
  });
});

describe('distill: a reason beside every null', () => {
  it('a target that overflows (--scale 1e300): each null of the one-head JSON and of the table says why', () => {
    const c = capture(tmp, 31, { L: 1, H: 2, KVH: 1, n: 9, d: 4 });
    const base = ['distill', '--q', c.q, '--k', c.k, '--steps', '2', '--scale', '1e300', '--holdout', c.q, c.k];
    const one = json(...base, '--layer', '0', '--head', '1', '-o', join(tmp, 'o1.npy'));
    const nullsOf = (o, path = '') => Object.entries(o).flatMap(([k, v]) => (v === null ? [[o, k, path + k]]
      : v && typeof v === 'object' && !Array.isArray(v) ? nullsOf(v, `${path + k}.`) : []));
    const nulls = nullsOf(one);
    expect(nulls.map((x) => x[2])).toEqual(expect.arrayContaining(['loss_start', 'loss_end', 'kl_elu', 'train.after.row_kl_mean', 'kl_rise']));
    for (const [o, k, path] of nulls) expect(o[`${k}_reason`], path).toMatch(/\w/);
    expect(one.loss_start_reason).toBe(one.status);
    const t = json(...base, '--all-heads', '-o', join(tmp, 'o2.npy'));
    for (const row of t.table) {
      const rowNulls = Object.keys(row).filter((k) => row[k] === null);
      expect(rowNulls).toEqual(expect.arrayContaining(['train_kl_before', 'loss_start']));
      for (const k of rowNulls) expect(row[`${k}_reason`], k).toMatch(/\w/);
    }
    const csv = run(...base, '--all-heads', '--format', 'csv', '-o', join(tmp, 'o2.npy'));
    const header = csv.stdout.split('\n')[0].split(',');
    for (const line of csv.stdout.trim().split('\n').slice(1)) {
      const cells = [];
      for (let rest = line; ;) { // the cells: quoted ones hold commas
        const m = /^("[^"]*"|[^,]*)(,?)/.exec(rest);
        cells.push(m[1]);
        if (!m[2]) break;
        rest = rest.slice(m[0].length);
      }
      expect(cells).toHaveLength(header.length);
      const reasons = cells[cells.length - 1];
      for (const [i, cell] of cells.entries())
        if (cell === '') expect(reasons, header[i]).toContain(`${header[i]}: `);
    }
  });
});

describe('distill refuses with one sentence and exit 2, writing nothing', () => {
  let c, h, q2;
  beforeAll(() => {
    c = capture(tmp, 21, { L: 1, H: 2, KVH: 1, n: 8, d: 4 });
    h = capture(tmp, 22, { L: 2, H: 2, KVH: 1, n: 8, d: 4 });
    expect(run('generate', '--n', '8', '--d', '4', '-o', join(tmp, 'g2')).status).toBe(0);
    expect(run('generate', '--n', '8', '--d', '3', '-o', join(tmp, 'g3')).status).toBe(0);
    q2 = (x, dd = 'g2') => join(tmp, dd, `${x}.npy`);
  });

  it.each([
    ['--holdout with one file', (x) => [...x.two, '--holdout', x.q2('q')], /^attnviz: --holdout: needs Q2\.npy K2\.npy \[V2\.npy\]/],
    ['--holdout twice', (x) => [...x.two, '--holdout', x.q2('q'), x.q2('k'), '--holdout', x.q2('q'), x.q2('k')], /^attnviz: --holdout: given twice\n$/],
    ['--holdout 4-D for 2-D', (x) => [...x.two, '--holdout', x.h.q, x.h.k], /^attnviz: --holdout .*: 4-D, but --q is 2-D/],
    ['--holdout of another head size', (x) => [...x.two, '--holdout', x.q2('q', 'g3'), x.q2('k', 'g3')], /^attnviz: --holdout .*: head size 3, but --q's is 4 \(W is d x cols\)\n$/],
    ['--holdout of other layers', (x) => [...x.four, '--all-heads', '--holdout', x.h.q, x.h.k], /^attnviz: --holdout .*: 2 layers and 2 heads, but --q has 1 and 2\n$/],
    ['--all-heads on 2-D', (x) => [...x.two, '--all-heads'], /^attnviz: --all-heads: --q .* is not a model's \(layers, heads, n, d\) tensor\n$/],
    ['--all-heads with --layer', (x) => [...x.four, '--all-heads', '--layer', '0'], /^attnviz: --layer: --all-heads takes every layer and head; drop --layer\n$/],
    ['--format without --all-heads', (x) => [...x.two, '--format', 'csv'], /^attnviz: --format: the table's format, with --all-heads only\n$/],
    ['--format xml', (x) => [...x.four, '--all-heads', '--format', 'xml'], /^attnviz: --format xml: not json or csv\n$/],
  ])('%s', (_, make, pattern) => {
    const w = join(tmp, 'never.npy');
    const x = { two: ['--q', q2('q'), '--k', q2('k')], four: ['--q', c.q, '--k', c.k], h, q2 };
    const r = run('distill', '--causal', '--steps', '2', '-o', w, ...make(x));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(pattern);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(w)).toBe(false);
  });
});
