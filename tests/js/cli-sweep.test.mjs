// cli-sweep.test.mjs: `attnviz sweep` as a research tool (issue 28): several readouts in one call, every
// layer and head of a 4-D capture in one call, and a reason beside every null. Each is checked against
// the one-readout, one-head calls it stands for, never against numbers written here.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capture, run, json } from './cli-capture.mjs';


let tmp;
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'attnviz-sweep-')); });
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });


describe('sweep: several readouts in one call', () => {
  let q, k, v;
  beforeAll(() => {
    const dir = join(tmp, 'two');
    expect(run('generate', '--gen', 'clustered', '--n', '32', '--d', '6', '--seed', '3', '-o', dir).status).toBe(0);
    [q, k, v] = ['q', 'k', 'v'].map((x) => join(dir, `${x}.npy`));
  });
  const keys = ['error_fro_rel', 'row_kl_mean', 'rank', 'semiseparable_rank', 'output_error_rel'];
  const common = ['--variant', 'performer', '--causal', '--knob', 'm', '--values', '4,16,64', '--seeds', '3'];

  it('--readouts A,B,… gives, per readout, what the one-readout sweep gives; repeated --readout the same', () => {
    const multi = json('sweep', ...common, '--q', q, '--k', k, '--v', v, '--readouts', keys.join(','));
    expect(multi.readouts).toEqual(keys);
    expect(multi).toMatchObject({ variant: 'performer', knob: 'm', seeds: 3, values: [4, 16, 64] });
    expect(multi.readout).toBeUndefined();
    for (const key of keys) {
      const one = json('sweep', ...common, '--q', q, '--k', k, '--v', v, '--readout', key);
      expect(one.readout).toBe(key); // the one-readout shape stays as it was
      const { variant, knob, readout, seeds, values: vals, ...stats } = one;
      expect(multi.results[key]).toEqual(stats);
    }
    const repeated = json('sweep', ...common, '--q', q, '--k', k, '--v', v, ...keys.flatMap((x) => ['--readout', x]));
    expect(repeated).toEqual(multi);
  });

  it('--readouts all is every readout key of attnviz readouts', () => {
    const all = json('sweep', '--variant', 'focused', '--knob', 'p', '--values', '2', '--q', q, '--k', k, '--readouts', 'all');
    const r = json('readouts', '--variant', 'focused', '--p', '2', '--q', q, '--k', k);
    const scalar = Object.keys(r).filter((x) => !x.endsWith('_reason') && (typeof r[x] === 'number' || r[x] === null)
      && !['n', 'd', 'semiseparable_ceiling', 'factor_rank', 'noise_floor_factor', 'singular_values', 'error_curve',
        'singular_values_factor'].includes(x));
    expect([...all.readouts].sort()).toEqual(scalar.sort());
    for (const key of all.readouts) {
      if (r[key] === null) expect(all.results[key].mean[0]).toBeNull();
      else expect(all.results[key].mean[0], key).toBe(r[key]);
    }
  });
});

describe('sweep: a reason beside every null', () => {
  let q, k;
  beforeAll(() => {
    const dir = join(tmp, 'why');
    expect(run('generate', '--n', '24', '--d', '6', '--seed', '9', '-o', dir).status).toBe(0);
    [q, k] = ['q', 'k'].map((x) => join(dir, `${x}.npy`));
  });

  /** Every null of mean, min and max has its reason (the library's, as readouts prints it), every number none. */
  function everyNullHasItsReason(stats, readoutsAt) {
    for (let i = 0; i < stats.mean.length; i++) {
      const isNull = stats.mean[i] === null;
      expect(stats.min[i] === null).toBe(isNull);
      expect(stats.max[i] === null).toBe(isNull);
      if (isNull) {
        expect(stats.defined[i]).toBe(0);
        expect(stats.reasons[i]).toBe(readoutsAt(i));
      } else {
        expect(stats.defined[i]).toBeGreaterThan(0);
        expect(stats.reasons[i]).toBeNull();
      }
    }
  }

  it('decay 1 (plain softmax again) and no V: null, with the sentence readouts gives', () => {
    const vals = ['0.5', '0.9', '1'];
    const j = json('sweep', '--variant', 'softmax', '--causal', '--knob', 'decay', '--values', vals.join(','),
      '--q', q, '--k', k, '--readouts', 'all');
    let nulls = 0;
    for (const key of j.readouts) {
      const at = (i) => json('readouts', '--variant', 'softmax', '--causal', '--decay', vals[i], '--q', q, '--k', k)[`${key}_reason`];
      everyNullHasItsReason(j.results[key], at);
      nulls += j.results[key].mean.filter((x) => x === null).length;
    }
    expect(nulls).toBeGreaterThan(3); // the reference's three at γ = 1, output error everywhere
    expect(j.results.row_kl_mean.reasons[2]).toMatch(/^no softmax reference \(the variant is plain softmax itself/);
    expect(j.results.output_error_rel.reasons[0]).toMatch(/V/);
  });

  it('the one-readout shape carries its reasons too', () => {
    const j = json('sweep', '--variant', 'softmax', '--causal', '--knob', 'window', '--values', '4,0', '--q', q, '--k', k,
      '--readout', 'error_fro_rel');
    expect(j.mean[0]).toBeGreaterThan(0);
    expect(j.mean[1]).toBeNull();
    expect(j.reasons).toEqual([null, json('readouts', '--variant', 'softmax', '--causal', '--q', q, '--k', k).error_fro_rel_reason]);
  });
});

describe('sweep --all-heads: every layer and head of a 4-D capture', () => {
  let c;
  beforeAll(() => { c = capture(tmp, 7); });

  it('records nested [layer][head], each with its layer and head, each what the per-head call prints', () => {
    const args = ['--variant', 'focused', '--causal', '--knob', 'p', '--values', '2,4', '--readouts', 'row_kl_mean,effective_rank',
      '--q', c.q, '--k', c.k, '--v', c.v];
    const all = json('sweep', ...args, '--all-heads');
    expect(all).toMatchObject({ layers: c.L, heads: c.H, kv_heads: 2, n: 16 });
    expect(all.sweeps).toHaveLength(c.L);
    for (let l = 0; l < c.L; l++) {
      expect(all.sweeps[l]).toHaveLength(c.H);
      for (let h = 0; h < c.H; h++) {
        const one = json('sweep', ...args, '--layer', String(l), '--head', String(h));
        expect(all.sweeps[l][h]).toEqual({ layer: l, head: h, ...one });
      }
    }
    expect(all.sweeps[0][0].results.row_kl_mean.mean).not.toEqual(all.sweeps[1][3].results.row_kl_mean.mean);
  });

  it('-o writes the same object; stdout stays empty', () => {
    const file = join(tmp, 'all.json');
    const args = ['sweep', '--variant', 'softmax', '--causal', '--knob', 'window', '--values', '2,4', '--q', c.q, '--k', c.k, '--all-heads'];
    const r = run(...args, '-o', file);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(json(...args));
  });
});

describe('sweep refuses with one sentence and exit 2', () => {
  let q, k, c;
  beforeAll(() => {
    const dir = join(tmp, 'bad');
    expect(run('generate', '--n', '8', '--d', '2', '-o', dir).status).toBe(0);
    [q, k] = ['q', 'k'].map((x) => join(dir, `${x}.npy`));
    c = capture(tmp, 11);
  });

  it.each([
    [['--readouts', 'rank', '--readout', 'rank'], /^attnviz: --readouts: not with --readout/],
    [['--readouts', 'rank,nope'], /^attnviz: --readouts: readout 2 "nope" is not a key of attnviz readouts\n$/],
    [['--readouts', 'rank,'], /^attnviz: --readouts: readout 2 is empty/],
    [['--readouts', ''], /^attnviz: --readouts: an empty list/],
    [['--readouts', 'rank,rank'], /^attnviz: --readouts: rank given twice\n$/],
    [['--readout', 'rank', '--readout', 'rank'], /^attnviz: --readout: rank given twice\n$/],
    [['--readout', 'rank', '--readout', 'nope'], /^attnviz: --readout nope: unknown readout/],
    [['--all-heads'], /^attnviz: --all-heads: --q .* is not a model's \(layers, heads, n, d\) tensor\n$/],
  ])('%j', (extra, pattern) => {
    const r = run('sweep', '--variant', 'focused', '--knob', 'p', '--values', '2', '--q', q, '--k', k, ...extra);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(pattern);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('--all-heads with --layer or --head, or twice', () => {
    for (const [extra, pattern] of [[['--layer', '0'], /^attnviz: --layer: --all-heads takes every layer and head/],
      [['--all-heads'], /^attnviz: --all-heads: given twice\n$/]]) {
      const r = run('sweep', '--variant', 'focused', '--knob', 'p', '--values', '2', '--q', c.q, '--k', c.k, '--all-heads', ...extra);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(pattern);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
