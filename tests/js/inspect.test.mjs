// web/io/inspect.mjs, the inspection API's pure parts (docs/inspection.md): the link as a state, the CLI's
// readouts built from the engine's results (here the real wasm module in node, against the loader's own
// readouts of the same matrix), the error curve as av_error_curve, and when a snapshot resolves.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { SPECTRAL_KEYS } from '../../web/compute/spectral.mjs';
import { linkState, linkAgrees, routeName, errorCurve, cliReadouts, readoutKeys, createInspector } from '../../web/io/inspect.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);
const names = readoutKeys(av);

/** The snapshot's readouts for a link, from a fresh engine as the page and its workers compute them. */
function readoutsFor(hash, drag = false) {
  const st = schema.fromHash(hash).state;
  const req = schema.requestOf(st);
  const engine = new Engine(av);
  const frame = engine.frame(req, { readouts: true });
  const spec = engine.spectrum(req, drag);
  const out = cliReadouts({ req, frame, plain: frame.readouts, spec, names, missing: 'missing',
    exact: av.isPlainSoftmax(req.knobs), STATUS: av.STATUS, statusString: (c) => av.statusString(c) });
  engine.free();
  return { st, req, out };
}

/** The loader's readouts of the same matrix (the library's av_readouts, σ by `route`). */
function loaderReadouts(req, route) {
  const { gen, n, d, std, seed } = req.inputs;
  const lab = av.lab(n, d);
  lab.generate(gen, std, seed);
  lab.matrix(req.knobs);
  const r = lab.readouts(req.knobs, { route, tau: req.tau });
  const curve = r.singular_values ? lab.errorCurve(r.singular_values) : null;
  lab.free();
  return { ...r, curve };
}

describe('the link as a state', () => {
  it('keeps the keys and values as the link carries them, decoded, in order', () => {
    expect(linkState('#v=1&gen=sink&std=0.5&x=%3Cb%3E')).toEqual({ v: '1', gen: 'sink', std: '0.5', x: '<b>' });
    expect(Object.keys(linkState('n=64&v=1'))).toEqual(['n', 'v']);
    expect(linkState('')).toEqual({});
    const full = schema.toHash(schema.defaults());
    expect(linkState(full)).toEqual(Object.fromEntries(full.split('&').map((p) => p.split('='))));
  });

  it('agrees with the address bar only when every key of the state has its value there', () => {
    const h = schema.toHash(schema.defaults());
    expect(linkAgrees(`#${h}`, h)).toBe(true);
    expect(linkAgrees(`#${h}&not_a_key=1`, h)).toBe(true); // a key the state does not have is left aside
    expect(linkAgrees('#v=1&n=64', h)).toBe(false);        // a link the page has not read yet
    expect(linkAgrees(`#${h.replace('n=256', 'n=64')}`, h)).toBe(false);
  });
});

describe("the CLI's readouts from the engine's results", () => {
  it('an n×n route: every readout as the library computes it, in the CLI order', () => {
    const { req, out } = readoutsFor('v=1&variant=focused&causal=1&n=96&d=16&gen=clustered&seed=4&tau=0.3');
    expect(out.route).toBe('accurate');
    const ref = loaderReadouts(req, 'accurate');
    expect(Object.keys(out)).toEqual(['variant', 'n', 'd', 'causal', 'route', 'singular_values', ...names.flatMap((k) => (out[k] === null ? [k, `${k}_reason`] : [k])),
      'semiseparable_ceiling', 'error_curve', 'row_entropy_hist', 'cost', 'status']);
    expect(out.semiseparable_ceiling).toBe(16); // focused: the feature dimension d
    expect(out.semiseparable_rank).toBeLessThanOrEqual(16);
    expect([out.variant, out.n, out.d, out.causal]).toEqual(['focused', 96, 16, true]);
    for (const k of names) {
      if (SPECTRAL_KEYS.includes(k)) expect(Math.abs(out[k] - ref[k]) / Math.abs(ref[k] || 1), k).toBeLessThan(1e-14);
      else expect(out[k], k).toBe(ref[k]); // the same av_readouts call: the same bits
      expect(out[`${k}_reason`], k).toBe(ref[`${k}_reason`]);
    }
    expect(out.singular_values).toEqual(Array.from(ref.singular_values));
    // av_error_curve's bits (suffix sums of power-of-two scaled squares)
    expect(out.error_curve).toEqual(Array.from(ref.curve));
    expect(out.status).toEqual([]);
    expect(out.row_entropy_hist.counts.reduce((a, b) => a + b, 0)).toBe(96);
  });

  it('softmax: the error readouts are null with the reason, and no reference step', () => {
    const { out } = readoutsFor('v=1&variant=softmax&n=64&d=16');
    for (const k of ['error_fro_rel', 'row_kl_mean', 'output_error_rel']) {
      expect(out[k]).toBe(null);
      expect(out[`${k}_reason`]).toMatch(/no softmax reference/);
    }
    expect(out.status).toEqual([]);
  });

  it('a decayed or windowed softmax: the error readouts against plain softmax, and the reference step', () => {
    for (const hash of ['v=1&variant=softmax&causal=1&decay=0.9&n=64&d=16', 'v=1&variant=softmax&causal=1&window=16&n=64&d=16']) {
      const { req, out } = readoutsFor(hash);
      const ref = loaderReadouts(req, 'fast');
      for (const k of ['error_fro_rel', 'output_error_rel']) {
        expect(out[k], `${hash} ${k}`).toBeGreaterThan(0.01); // M differs from A: not the reference itself
        expect(out[k], `${hash} ${k}`).toBe(ref[k]);
      }
      expect(out.row_kl_mean === null ? out.row_kl_mean_reason : out.row_kl_mean > 0, hash)
        .toBe(hash.includes('window') ? 'the matrix is zero where the softmax reference is positive' : true);
    }
  });

  it('the factor route: σ from the factors, with the rank r, and the drag route is the same', () => {
    const { out } = readoutsFor('v=1&variant=elu&n=64&d=16');
    expect(out.route).toBe('factors');
    expect(out.factor_rank).toBe(16);
    expect(out.rank).toBe(16);
    expect(out.singular_values.slice(16).every((x) => x === 0)).toBe(true);
  });

  it('parts that are missing give null readouts with the reason, and a failed matrix says why', () => {
    const st = schema.fromHash('v=1&variant=elu&n=64&d=16').state;
    const req = schema.requestOf(st);
    const base = { req, names, exact: false, STATUS: av.STATUS, statusString: (c) => av.statusString(c), missing: 'not computed' };
    const none = cliReadouts({ ...base, frame: null, plain: null, spec: null });
    for (const k of names) { expect(none[k]).toBe(null); expect(none[`${k}_reason`]).toBe('not computed'); }
    expect(none.singular_values).toBe(null);
    expect(none.error_curve).toBe(null);
    expect(none.cost).toBe(null);
    const failed = { status: { matrix: { status: av.STATUS.ERR_KNOB, message: 'a knob is out of range' }, ref: { status: 0 } }, cost: null };
    const bad = cliReadouts({ ...base, frame: failed, plain: {}, spec: null });
    expect(bad.sigma1_reason).toMatch(/^the matrix could not be computed: a knob/);
    expect(bad.status[0]).toBe(`matrix: ${av.statusString(av.STATUS.ERR_KNOB)}`);
  });

  it('names the routes', () => {
    expect(routeName({ route: 'accurate' })).toBe('accurate');
    expect(routeName({ route: 'fast' })).toBe('fast');
    expect(routeName({ route: 'factors (r = 16)' })).toBe('factors');
    expect(routeName({ route: 'top 32 (randomized)', partial: true })).toBe('topk');
  });
});

describe('the error curve', () => {
  it("is av_error_curve's, bit for bit, and completes a top-k spectrum with ‖M‖_F²", () => {
    const lab = av.lab(8, 4);
    for (const sv of [[3, 2, 1, 0.5, 0.25, 1e-9, 0, 0], [1e200, 1e199, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [2 ** 60, 1, 1, 1, 1, 1, 1, 1]]) {
      expect(errorCurve(sv), String(sv)).toEqual(Array.from(lab.errorCurve(Float64Array.from(sv))));
    }
    lab.free();
    expect(errorCurve([2, 1], 9)).toEqual([1, 5 / 9, 4 / 9]);
    expect(errorCurve([1, NaN])).toBe(null);
  });
});

describe('createInspector', () => {
  const reqOf = (n) => ({ inputs: { n, d: 4 }, knobs: { variant: 'x' } });
  const page = (n) => ({
    hash: `v=1&n=${n}`, address: `#v=1&n=${n}`, req: reqOf(n),
    parts: { frame: null, plain: null, spec: null },
    tags: { frame: { key: JSON.stringify(reqOf(n)) }, plain: { key: JSON.stringify(reqOf(n)) }, spec: { key: JSON.stringify(reqOf(n)), drag: false } },
    // a module with no readouts (the readouts themselves are tested above)
    av: { registry: { readouts: [] }, variant: () => ({}), isPlainSoftmax: () => false, STATUS: {}, statusString: String },
  });
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it('waits while the page is busy, then resolves for the state it is in', async () => {
    let now = null;
    const ins = createInspector(() => now);
    let got = null;
    ins.snapshot().then((s) => { got = s; });
    await tick();
    expect(got).toBe(null);
    now = page(64);
    await tick();
    expect(got).toBe(null); // nothing notified yet
    now = page(96);
    ins.notify();
    await tick();
    expect(got.state).toEqual({ v: '1', n: '96' });
    expect(got.readouts.n).toBe(96);
    expect(got.tokens).toBe(null);
  });

  it('reports the state with every key (`full`), while it waits only for the link (`hash`) in the address bar', async () => {
    const st = schema.fromHash('v=1&variant=elu&n=64').state;
    const link = schema.toHash(st);
    const ins = createInspector(() => ({ ...page(64), hash: link, address: `#${link}`, full: schema.toHash(st, { complete: true }) }));
    const s = await ins.snapshot();
    expect(s.state).toMatchObject({ src: 'synthetic', layer: '0', head: '0', variant: 'elu', n: '64' });
    expect(Object.keys(s.state).slice(0, 4)).toEqual(['v', 'src', 'layer', 'head']);
  });

  it('waits while the address bar holds a link the page has not read', async () => {
    const ins = createInspector(() => ({ ...page(64), address: '#v=1&n=128' }));
    let got = null;
    ins.snapshot().then((s) => { got = s; });
    await tick();
    expect(got).toBe(null);
  });

  it('uses no part computed for another request, nor a drag-time spectrum', async () => {
    const req = schema.requestOf(schema.fromHash('v=1&variant=elu&n=64&d=16').state);
    const p = {
      hash: 'v=1', address: '#v=1', req, av,
      parts: { frame: { cost: {}, status: {} }, plain: { row_entropy_mean: 1 }, spec: { route: 'fast', sv: [1], readouts: { sigma1: 1 } } },
      tags: { frame: { key: 'another' }, plain: { key: 'another' }, spec: { key: JSON.stringify(req), drag: true } },
    };
    const s = await createInspector(() => p).snapshot();
    expect(s.readouts.route).toBe(null);
    expect(s.readouts.singular_values).toBe(null);
    expect(s.readouts.sigma1).toBe(null);
    expect(s.readouts.row_entropy_mean).toBe(null);
    expect(s.readouts.row_entropy_mean_reason).toMatch(/did not compute it for this state/);
    expect(s.readouts.cost).toBe(null);
  });

  it('rejects when a snapshot cannot be built, and once the page has failed', async () => {
    const broken = createInspector(() => ({ ...page(64), av: null }));
    await expect(broken.snapshot()).rejects.toThrow();
    const ins = createInspector(() => null);
    const p = ins.snapshot();
    ins.fail('the WebAssembly module did not load');
    await expect(p).rejects.toThrow(/did not load/);
    await expect(ins.snapshot()).rejects.toThrow(/did not load/);
  });
});
