// The readouts of a truncated spectrum (the top k σ by randomized iteration, web/compute/topk.mjs: the page's route
// above n = 2048, and while dragging above n = 1024): every number the snapshot, the exports and the
// screen give is the exact value, or carries its mark (`<key>_bound`: "lower" | "upper", or
// `<key>_method`), and every bound holds against the full spectrum of the same matrix (docs/readouts.md,
// "Bounds and estimates"). The real wasm module, the engine and web/io/inspect.mjs as the page runs them.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { cliReadouts, readoutKeys, errorCurve } from '../../web/io/inspect.mjs';
import { READOUT_ROWS, rowMark } from '../../web/render/readouts.mjs';
import { rankAtRelative } from '../../web/render/spectrum.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);
const names = readoutKeys(av);
// the route's own floor (1e-7·σ₁ for the top-k route): a property of the route, not an estimate of M's
const ROUTE_OWN = new Set(['noise_floor']);

/** The snapshot's readouts from a truncated spectrum (a drag at n > 1024), and the exact ones of the same M. */
function both(link) {
  const st = schema.fromHash(link).state;
  const req = schema.requestOf(st);
  const engine = new Engine(av);
  const frame = engine.frame(req, { readouts: true });
  const spec = engine.spectrum(req, true);
  expect(spec.partial, link).toBe(true);
  const snap = cliReadouts({ req, frame, plain: frame.readouts, spec, names, missing: 'missing',
    exact: av.isPlainSoftmax(req.knobs), STATUS: av.STATUS, statusString: (c) => av.statusString(c) });
  const lab = engine.lab; // M as the page computed it: the full spectrum and readouts by the library
  const exact = lab.readouts(req.knobs, { route: 'fast', tau: req.tau });
  exact.error_curve = errorCurve(Array.from(exact.singular_values));
  engine.free();
  return { snap, exact, spec };
}

/** A number against the exact one: equal when unmarked, on the right side when a bound. */
function holds(what, v, mark, ex) {
  const slack = 1e-9 * Math.max(1, Math.abs(ex));
  if (mark === 'lower') expect(v, `${what} (lower bound)`).toBeLessThanOrEqual(ex + slack);
  else if (mark === 'upper') expect(v, `${what} (upper bound)`).toBeGreaterThanOrEqual(ex - slack);
  else expect(Math.abs(v - ex), `${what} = ${v} is given as exact, the exact value is ${ex}`).toBeLessThanOrEqual(slack);
}

function expectHonest(snap, exact, label) {
  for (const key of names) {
    const v = snap[key];
    if (typeof v !== 'number' || ROUTE_OWN.has(key)) continue;
    if (typeof snap[`${key}_method`] === 'string') continue; // an estimate, said to be one
    expect(exact[key], `${label} ${key}: exact value`).not.toBe(null);
    holds(`${label} ${key}`, v, snap[`${key}_bound`], exact[key]);
  }
  for (const key of ['singular_values', 'error_curve']) {
    const arr = snap[key];
    for (let i = 0; i < arr.length; i++) holds(`${label} ${key}[${i}]`, arr[i], snap[`${key}_bound`], exact[key][i]);
  }
}

describe('a truncated spectrum\'s readouts say what they are', () => {
  for (const link of ['variant=softmax&n=1100&d=16', 'variant=softmax&n=1100&d=16&causal=1&gen=clustered',
    'variant=elu&n=1100&d=16&causal=1', 'variant=focused&n=1100&d=16&causal=1&gen=local&p=3']) {
    it(`every unmarked number is exact, every bound holds: ${link}`, () => {
      const { snap, exact } = both(link);
      expect(snap.route).toBe('topk');
      expectHonest(snap, exact, link);
      // what the route cannot give exactly is marked (the top k of about a thousand σ)
      expect(snap.sigma1_bound).toBe('lower');
      expect(snap.rank_bound).toBe('lower');
      expect(snap['rank_rel_1e-3_bound']).toBe('lower');
      expect(snap.stable_rank_bound).toBe('upper');
      expect(snap.singular_values_bound).toBe('lower');
      expect(snap.error_curve_bound).toBe('upper');
      // marks sit beside numbers only: an undefined readout has its reason instead
      for (const k of Object.keys(snap)) {
        const m = /^(.*)_(bound|method)$/.exec(k);
        if (m) expect(typeof snap[m[1]] === 'number' || Array.isArray(snap[m[1]]), k).toBe(true);
      }
    });
  }

  it('the full spectrum\'s readouts carry no marks', () => {
    const st = schema.fromHash('variant=softmax&n=200&d=16&causal=1').state;
    const req = schema.requestOf(st);
    const engine = new Engine(av);
    const frame = engine.frame(req, { readouts: true });
    const spec = engine.spectrum(req, false);
    const snap = cliReadouts({ req, frame, plain: frame.readouts, spec, names, missing: 'missing',
      exact: av.isPlainSoftmax(req.knobs), STATUS: av.STATUS, statusString: (c) => av.statusString(c) });
    engine.free();
    expect(Object.keys(snap).filter((k) => /_(bound|method)$/.test(k))).toEqual([]);
  });

  it('the screen marks the same numbers, with the reason on hover', () => {
    const { snap, spec, exact } = both('variant=softmax&n=1100&d=16&causal=1');
    const row = (id) => READOUT_ROWS.find((r) => r.id === id);
    const ctx = { n: 1100, partial: true };
    expect(row('rank').text(snap, ctx)).toMatch(/^≥ \d+ \/ 1100$/);
    expect(row('stable_rank').text(snap, ctx)).toMatch(/^≤ /);
    expect(row('error_fro_rel').text(snap, ctx)).not.toMatch(/[≤≥≈]/);
    expect(rowMark(row('stable_rank'), snap)).toMatch(/upper bound/);
    expect(rowMark(row('rank'), snap)).toMatch(/lower bound/);
    expect(rowMark(row('error_fro_rel'), snap)).toBe('');
    // the slider's rank counts against an upper bound of σ₁, so it is a lower bound too
    const rel = rankAtRelative(spec.sv, 1e-2, spec.floor, spec.sigma1Upper);
    expect(rel).toBeLessThanOrEqual(exact['rank_rel_1e-2']);
  });
});
