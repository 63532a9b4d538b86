// Sweeps (web/compute/sweep.mjs): which knobs and values a page sweep takes, its aggregation, and its numbers
// against the native CLI's `attnviz sweep` on the same inputs (the same library: means, minima and maxima
// over seeds agree to float rounding).
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { setLang, t } from '../../web/i18n/i18n.mjs';
import { sweepableEntries, sweepValues, sweepPlan, aggregate, runSweep, seeded, sweepResult, sweepFigure } from '../../web/compute/sweep.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);
const CLI = process.env.ATTNVIZ_CLI || new URL('../../build/native/attnviz', import.meta.url).pathname;
const state = (hash) => schema.fromHash(hash).state;

describe('what a sweep runs over', () => {
  it("the variant's numeric knobs, never its seed; seeds only where the variant draws random matrices", () => {
    const names = (h) => sweepableEntries(schema, state(h)).map((e) => e.name);
    expect(names('variant=performer')).toEqual(['m', 'feature_eps', 'decay']);
    expect(names('variant=focused')).toEqual(['p', 'dwc_k', 'decay']);
    expect(names('variant=elu')).toEqual(['decay']);
    expect(names('variant=deltanet')).toEqual(['decay', 'beta']); // chunk changes no matrix
    expect(seeded(schema, state('variant=performer'))).toBe(true);
    expect(seeded(schema, state('variant=taylor'))).toBe(false);
  });
  it('values: the whole range when short, a log grid within the page caps when long', () => {
    const st = state('variant=linformer&n=256');
    const e = (k) => schema.entryOf(k);
    expect(sweepValues(e('order'), st)).toEqual([1, 2, 3, 4]);
    const s = sweepValues(e('s'), st);
    expect(s[0]).toBe(1); expect(s.at(-1)).toBe(256); expect(s.length).toBeLessThanOrEqual(12);
    expect(new Set(s).size).toBe(s.length);
    const m = sweepValues(e('m'), st);
    expect(m.at(-1)).toBe(4096); expect(m.length).toBeLessThanOrEqual(12);
    expect(sweepValues(e('dwc_k'), st).every((k) => k % 2 === 1 && k <= 31)).toBe(true);
    const p = sweepValues(e('p'), st);
    expect([p[0], p.at(-1)]).toEqual([1, 10]);
  });
  it('a plan names what it computes; a knob the variant lacks is said, not run', () => {
    const plan = sweepPlan(schema, state('variant=performer&sweep=m&sweep_seeds=4&scale=2'));
    expect([plan.name, plan.knobKey, plan.readout, plan.seeds]).toEqual(['m', 'm', 'error_fro_rel', 4]);
    expect(plan.req.knobs.scale).toBeCloseTo(2 / 8);
    expect(sweepPlan(schema, state('variant=taylor&sweep=order&sweep_seeds=5')).seeds).toBe(1);
    expect(sweepPlan(schema, state('variant=elu&sweep=m')).off).toMatch(/has no knob "m"/);
    expect(sweepPlan(schema, state('variant=elu'))).toBe(null);
    const eps = sweepPlan(schema, state('variant=performer&sweep=feature_eps'));
    expect(eps.knobValues[eps.values.indexOf(0)]).toBe(-1); // a real 0, as av_params takes it
  });
  it('aggregates the defined values only', () => {
    expect(aggregate([1, 2, null, 6])).toEqual({ mean: 3, min: 1, max: 6 });
    expect(aggregate([null, NaN])).toEqual({ mean: null, min: null, max: null });
  });
});

describe('the page sweep against `attnviz sweep`', () => {
  const cases = [
    { hash: 'variant=performer&gen=gaussian&n=96&d=16&std=0.5&orthogonal=1&sweep=m&sweep_seeds=3', values: [4, 32, 256], flags: ['--orthogonal', '--seeds', '3'], readout: 'error_fro_rel' },
    { hash: 'variant=linformer&gen=clustered&n=96&d=16&ef_kind=mean&sweep=s&sweep_y=rank&sweep_seeds=1', values: [4, 16, 48], flags: ['--ef', 'mean'], readout: 'rank' },
    { hash: 'variant=focused&gen=local&n=64&d=16&sweep=p&sweep_y=row_entropy_mean', values: [1, 3, 6], flags: [], readout: 'row_entropy_mean' },
  ];
  for (const c of cases) {
    it(`${c.hash.split('&')[0]}: ${c.readout} against ${c.values.join(', ')}`, async () => {
      const st = state(c.hash);
      const base = sweepPlan(schema, st);
      const plan = { ...base, values: c.values, knobValues: c.values };
      const lab = av.lab(st.n, st.d, st.d);
      lab.generate(st.gen, st.std, st.seed);
      const points = [];
      expect(await runSweep(lab, plan, (p) => points.push(p))).toBe(true);
      lab.free();
      const dir = mkdtempSync(join(tmpdir(), 'attnviz-sweep-'));
      try {
        const gen = spawnSync(CLI, ['generate', '--gen', st.gen, '--n', String(st.n), '--d', String(st.d), '--std', String(st.std), '--seed', String(st.seed), '-o', dir]);
        expect(gen.status, String(gen.stderr)).toBe(0);
        const run = spawnSync(CLI, ['sweep', '--variant', st.variant, '--knob', base.knobKey, '--values', c.values.join(','), '--readout', c.readout,
          '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), ...c.flags], { encoding: 'utf8' });
        expect(run.status, run.stderr).toBe(0);
        const cli = JSON.parse(run.stdout);
        expect(cli.values).toEqual(c.values);
        for (let i = 0; i < c.values.length; i++) {
          for (const k of ['mean', 'min', 'max']) expect(points[i][k], `${k} at ${c.values[i]}`).toBeCloseTo(cli[k][i], 5);
        }
      } finally { rmSync(dir, { recursive: true, force: true }); }
    });
  }
});

// issue 28: a point with no number says why, in sweep() and in the exported figure, with the CLI's keys
describe('undefined points of a sweep carry their reason', () => {
  it('softmax against decay, causal: decay = 1 is plain softmax (no reference), as `attnviz sweep` says', async () => {
    const st = state('variant=softmax&n=64&d=16&causal=1&sweep=decay&sweep_y=error_fro_rel');
    const base = sweepPlan(schema, st);
    const values = [0.5, 0.9, 1];
    const plan = { ...base, values, knobValues: values };
    const lab = av.lab(st.n, st.d, st.d);
    lab.generate(st.gen, st.std, st.seed);
    const points = [];
    expect(await runSweep(lab, plan, (p) => points.push(p))).toBe(true);
    lab.free();
    const res = sweepResult(plan, points);
    expect(res.defined).toEqual([1, 1, 0]);
    expect(res.mean[2]).toBe(null);
    expect(res.reasons[0]).toBe(null);
    expect(res.reasons[2]).toMatch(/^no softmax reference/);
    // the same keys and sentences as the CLI on the same inputs
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-sweep-'));
    try {
      const gen = spawnSync(CLI, ['generate', '--gen', st.gen, '--n', String(st.n), '--d', String(st.d), '--std', String(st.std), '--seed', String(st.seed), '-o', dir]);
      expect(gen.status, String(gen.stderr)).toBe(0);
      const run = spawnSync(CLI, ['sweep', '--variant', 'softmax', '--causal', '--knob', 'decay', '--values', values.join(','), '--readout', 'error_fro_rel',
        '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy')], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      const cli = JSON.parse(run.stdout);
      expect(res.defined).toEqual(cli.defined);
      expect(res.reasons).toEqual(cli.reasons);
    } finally { rmSync(dir, { recursive: true, force: true }); }
    // the exported figure: the panel's label on the axis, and decay = 1 with its reason under the chart
    const fig = sweepFigure(plan, points, 'softmax (reference), causal');
    expect(fig.yLabel).toBe('error vs softmax');
    expect(fig.title).toMatch(/^error vs softmax against decay/);
    expect(fig.caption).toBe(`softmax (reference), causal · undefined at decay = 1: ${res.reasons[2]}`);
  });
  it('a figure whose every point is defined has the caption alone', () => {
    const plan = { name: 'm', readout: 'rank', seeds: 1, values: [1, 2] };
    const fig = sweepFigure(plan, [{ mean: 1, min: 1, max: 1, defined: 1, reason: null }, { mean: 2, min: 2, max: 2, defined: 1, reason: null }], 'cap');
    expect([fig.caption, fig.yLabel]).toEqual(['cap', 'numerical rank']);
  });
  it('a figure exported from the Chinese page speaks Chinese, its numbers and knob as they are', () => {
    const plan = { name: 'm', readout: 'rank', seeds: 3, values: [1, 2] };
    setLang('zh');
    try {
      const fig = sweepFigure(plan, [{ mean: 1, min: 1, max: 1, defined: 3, reason: null }, { mean: null, min: null, max: null, defined: 0, reason: '' }], '图注');
      expect(fig.title).toBe('数值秩随 m 的变化（3 个种子的均值与最小–最大范围）');
      expect(fig.series[0].label).toBe('数值秩（均值）');
      expect(fig.caption).toBe(`图注 · 在 m = 2 处无定义：${t('sweep.noReason')}`);
    } finally { setLang('en'); }
  });
});
