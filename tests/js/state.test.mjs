// The state schema, built from the real wasm module's registry: defaults, URL hash round trip (v=1), bad
// input reported and clamped, dirty stages, the one translation of the state into knobs.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema, stageDirty, applies, missingPresentation } from '../../web/state/state.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const {
  SCHEMA, defaults, withVariant, toHash, fromHash, coerce, BY_NAME, normalise, changedKeys, firstDirtyStage, knobsOf,
  requestOf, causalNote, VARIANTS, knobEntry, variantRow,
} = buildSchema(av.registry);
const { STATUS } = av;
/** The library's rank ceiling of the factors (min with n) and feature dimension, for a state. */
const ceiling = (st) => { const r = av.factorRank(knobsOf(st), st.n, st.d).r; return r === null ? null : Math.min(r, st.n); };

describe('state schema', () => {
  it('has a default inside its range for every entry', () => {
    const st = defaults();
    for (const e of SCHEMA) {
      expect(st[e.name], e.name).toBe(e.default);
      if (e.type === 'int' || e.type === 'float') {
        expect(e.default).toBeGreaterThanOrEqual(e.min);
        expect(e.default).toBeLessThanOrEqual(typeof e.max === 'function' ? e.max(st) : e.max);
      }
      if (e.type === 'enum') expect(e.options).toContain(e.default);
    }
  });

  it('round-trips the default state and a changed one through the hash, with v=1 first', () => {
    const d = defaults();
    expect(toHash(d).startsWith('v=1&')).toBe(true);
    expect(fromHash(`#${toHash(d)}`)).toEqual({ state: d, problems: [] });
    const st = { ...d, variant: 'linformer', n: 512, s: 37, causal: true, std: 0.75, scale: 1.35, ef_kind: 'mean',
      ef_shared: true, seed: 4294967295, rseed: 9, tau: 0.23, rtol: -5.5, ds: 'max', p: 6.3, dwc: true };
    const back = fromHash(toHash(st));
    expect(back.problems).toEqual([]);
    expect(back.state).toEqual(st);
    expect(toHash(back.state)).toBe(toHash(st));
  });

  it('writes src, layer, head and zoom only when asked for every key (the snapshot\'s state), and reads both forms alike', () => {
    const d = defaults();
    // a link leaves them out at their default: links written before them stay as they were
    expect(toHash(d)).not.toMatch(/(^|&)(src|layer|head|zoom)=/);
    const all = toHash(d, { complete: true });
    expect(all).toMatch(/^v=1&src=synthetic&layer=0&head=0&/);
    expect(all.replace(/&src=synthetic&layer=0&head=0/, '').replace('&zoom=&', '&')).toBe(toHash(d));
    expect(fromHash(all)).toEqual({ state: d, problems: [] });
    // the generators' keys still go under src=model (they mean nothing there), the picked head stays
    const model = { ...d, src: 'model', layer: 2, head: 0 };
    expect(toHash(model, { complete: true })).toMatch(/^v=1&src=model&layer=2&head=0&scale=/);
    expect(toHash(model, { complete: true })).not.toMatch(/(^|&)(gen|seed|n|d|std)=/);
  });

  it('carries projector mode as a display key, off by default', () => {
    expect(defaults().projector).toBe(false);
    expect(BY_NAME.projector).toMatchObject({ type: 'bool', stage: 'display', group: 'view' });
    expect(fromHash('#v=1&projector=1')).toEqual({ state: { ...defaults(), projector: true }, problems: [] });
    expect(toHash({ ...defaults(), projector: true })).toMatch(/&projector=1(&|$)/);
    expect(firstDirtyStage(['projector'])).toBe('display');
  });

  it('round-trips every variant of the registry', () => {
    expect(VARIANTS).toEqual(av.variantNames);
    for (const v of VARIANTS) {
      const st = { ...defaults(), variant: v };
      expect(fromHash(toHash(st)).state.variant).toBe(v);
    }
  });

  it('reports unknown parameters, bad values and other versions, keeping the rest', () => {
    const { state, problems } = fromHash('#v=2&n=128&bogus=1&p=abc&variant=<img src=x>&causal=maybe&m=99999');
    expect(state.n).toBe(128);
    expect(state.p).toBe(3);
    expect(state.variant).toBe('focused');
    expect(state.causal).toBe(false);
    expect(state.m).toBe(65536); // the registry's range of m
    expect(problems.some((p) => p.includes('version'))).toBe(true);
    expect(problems.some((p) => p.includes('unknown parameter "bogus"'))).toBe(true);
    expect(problems.some((p) => p.startsWith('p:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('variant:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('m:') && p.includes('65536'))).toBe(true);
    expect(problems.length).toBe(6);
  });

  it('reads n before the bounds that depend on it, in any order', () => {
    const { state, problems } = fromHash('s=300&landmarks=500&n=384');
    expect(problems).toEqual(['landmarks: 500 is outside 1…384, using 384']);
    expect(state.s).toBe(300);
    expect(state.landmarks).toBe(384);
  });

  it('clamps s and landmarks when n shrinks', () => {
    const st = normalise({ ...defaults(), s: 200, landmarks: 200, n: 64 });
    expect(st.s).toBe(64);
    expect(st.landmarks).toBe(64);
  });

  it('coerces types: ints round, odd kernel sizes, bools from 0/1', () => {
    const d = defaults();
    expect(coerce(BY_NAME.n, '300.6', d).value).toBe(301);
    expect(coerce(BY_NAME.dwc_k, 4, d).value).toBe(5);
    expect(coerce(BY_NAME.causal, '1', d).value).toBe(true);
    expect(coerce(BY_NAME.causal, 0, d).value).toBe(false);
    expect(coerce(BY_NAME.std, '', d).problem).toMatch(/not a number/);
    expect(coerce(BY_NAME.n, 9, d)).toEqual({ value: 16, problem: 'n: 9 is outside 16…4096, using 16' });
  });

  it('marks the earliest dirty stage', () => {
    const a = defaults();
    expect(changedKeys(a, { ...a, p: 4 })).toEqual(['p']);
    expect(firstDirtyStage(['p'])).toBe('matrix');
    expect(firstDirtyStage(['p', 'seed'])).toBe('inputs');
    expect(firstDirtyStage(['scale'])).toBe('reference');
    expect(firstDirtyStage(['rtol'])).toBe('display');
    expect(firstDirtyStage([])).toBe(null);
    expect(stageDirty('matrix', 'readouts')).toBe(true);
    expect(stageDirty('matrix', 'inputs')).toBe(false);
    expect(stageDirty(null, 'display')).toBe(false);
  });

  it('maps the state to the loader knobs', () => {
    const st = { ...defaults(), variant: 'focused', d: 64, scale: 2, dwc: true, dwc_k: 7, causal: true };
    const k = knobsOf(st);
    expect(k.scale).toBeCloseTo(2 / 8, 15);
    expect(k.dwc_kernel).toBe(7);
    expect(k.causal).toBe(false); // focused + DWC has no causal form
    expect(causalNote(st)).toMatch(/no causal form/);
    expect(knobsOf({ ...st, dwc: false }).dwc_kernel).toBe(0);
    expect(knobsOf({ ...st, dwc: false }).causal).toBe(true);
    expect(knobsOf({ ...defaults(), variant: 'nystrom', iters: 0 }).iters).toBe(-1);
  });

  it('takes rank ceilings and feature dimensions from the library', () => {
    const d = defaults();
    expect(ceiling({ ...d, variant: 'linformer', s: 40 })).toBe(40);
    expect(ceiling({ ...d, variant: 'elu' })).toBe(64);
    expect(ceiling({ ...d, variant: 'elu', causal: true })).toBe(null);
    expect(ceiling({ ...d, variant: 'softmax' })).toBe(null);
    expect(ceiling({ ...d, variant: 'focused', dwc: true })).toBe(null);
    expect(ceiling({ ...d, variant: 'performer', m: 1024 })).toBe(256); // at most n
    const fd = (st) => av.featureDim(knobsOf(st), st.n, st.d);
    expect(fd({ ...d, variant: 'taylor', d: 16, order: 2 })).toMatchObject({ status: 0, r: 1 + 16 + 256 });
    expect(fd({ ...d, variant: 'explimit', d: 64, N: 3 })).toMatchObject({ status: STATUS.ERR_FEATURE_DIM, r: 65 ** 3, saturated: false });
    expect(fd({ ...d, variant: 'explimit', d: 256, N: 64 })).toMatchObject({ status: STATUS.ERR_FEATURE_DIM, saturated: true });
    expect(fd({ ...d, variant: 'softmax' }).r).toBe(null);
  });

  it('shows a knob only for its variant', () => {
    const st = { ...defaults(), variant: 'linformer' };
    expect(applies(BY_NAME.s, st)).toBe(true);
    expect(applies(BY_NAME.p, st)).toBe(false);
    expect(applies(BY_NAME.n, st)).toBe(true);
    expect(applies(BY_NAME.dwc_k, { ...st, variant: 'focused', dwc: false })).toBe(false);
    expect(applies(BY_NAME.dwc_k, { ...st, variant: 'focused', dwc: true })).toBe(true);
  });
});

describe('the schema follows the registry', () => {
  it('every variant and knob of the registry has its presentation (web/state/variants.mjs)', () => {
    expect(missingPresentation(av.registry)).toEqual([]);
    for (const v of VARIANTS) expect(variantRow(v)).toBe(av.variant(v));
  });

  it('every registry knob has an entry, shown for the variants that read it', () => {
    for (const k of av.registry.knobs) {
      const e = knobEntry(k.key);
      expect(e, k.key).not.toBe(null);
      expect(e.type, k.key).toBe({ real: 'float', int: 'int', bool: 'bool', enum: 'enum' }[k.type]);
      if (k.type === 'enum') expect(e.options).toEqual(k.options);
      const readers = av.registry.variants.filter((v) => v.knobs.includes(k.key)).map((v) => v.name);
      if (readers.length) expect(e.variants, k.key).toEqual(readers);
      for (const v of VARIANTS) {
        if (e.when) continue; // shown once its toggle is on
        expect(applies(e, { ...defaults(), variant: v }), `${k.key} for ${v}`).toBe(!e.variants || readers.includes(v));
      }
    }
  });

  it("the page's defaults are the library's: the same matrix, bit for bit, for every variant", () => {
    const n = 24, d = 8;
    const lab = av.lab(n, d);
    expect(lab.generate('clustered', 1, 3).status).toBe(0);
    for (const v of VARIANTS) {
      const st = normalise(withVariant(defaults(), { ...defaults(), n, d, variant: v })); // as the picker does
      expect(lab.matrix(knobsOf(st)).status, v).toBeGreaterThanOrEqual(0);
      const page = lab.M.slice();
      expect(lab.matrix({ variant: v }).status, v).toBeGreaterThanOrEqual(0);
      expect(Buffer.from(page.buffer).equals(Buffer.from(lab.M.slice().buffer)), v).toBe(true);
    }
    lab.free();
  });

  it("the page's range of every numeric knob is the library's: its ends accepted, one step past refused", () => {
    for (const v of av.registry.variants) {
      for (const key of v.knobs) {
        const k = av.registry.knobs.find((x) => x.key === key), e = knobEntry(key);
        if (e.type !== 'int' && e.type !== 'float') continue;
        const st = { ...defaults(), variant: v.name, ...(e.toggle ? { [e.toggle]: true } : {}) };
        const hi = typeof e.max === 'function' ? e.max(st) : e.max;
        for (const x of [e.min, hi]) {
          expect(av.checkKnobs(knobsOf({ ...st, [e.name]: x }), st.n, st.d).status, `${v.name} ${key} = ${x}`).toBe(0);
        }
        const step = e.type === 'int' ? (e.odd ? 2 : 1) : e.step;
        const top = knobsOf({ ...st, [e.name]: hi })[key] + step;
        if (top < 2 ** 32) { // beyond, a uint32 knob cannot hold the value to refuse it
          expect(av.checkKnobs({ ...knobsOf(st), [key]: top }, st.n, st.d), `${v.name} ${key} = ${top}`)
            .toMatchObject({ status: STATUS.ERR_KNOB, knob: key });
        }
        if (k.lo > 0 && e.min - step !== 0) { // 0 is a default, or "off"
          expect(av.checkKnobs({ ...knobsOf(st), [key]: e.min - step }, st.n, st.d), `${v.name} ${key} = ${e.min - step}`)
            .toMatchObject({ status: STATUS.ERR_KNOB, knob: key });
        }
      }
    }
  });

  it('causal rules come from the registry: a variant without a causal form, or a knob that removes it', () => {
    for (const v of av.registry.variants) {
      const st = { ...defaults(), variant: v.name, causal: true };
      expect(knobsOf(st).causal, v.name).toBe(v.causal);
      expect(causalNote(st) === null, v.name).toBe(v.causal);
      expect(av.checkKnobs(knobsOf(st), st.n, st.d).status, v.name).toBe(0);
      for (const key of v.knobs) {
        if (!av.registry.knobs.find((k) => k.key === key).no_causal) continue;
        const e = knobEntry(key);
        const on = { ...st, ...(e.toggle ? { [e.toggle]: true } : {}), [e.name]: e.min };
        expect(knobsOf(on).causal, `${v.name} ${key}`).toBe(false);
        expect(causalNote(on), `${v.name} ${key}`).toMatch(/no causal form/);
        expect(av.checkKnobs({ ...knobsOf(on), causal: true }, st.n, st.d)).toMatchObject({ status: STATUS.ERR_NO_CAUSAL, knob: key });
      }
    }
  });

  it("leaves the reader's theme out of links, and takes an old link's theme silently without applying it", () => {
    const dark = { ...defaults(), theme: 'dark' };
    expect(toHash(dark)).not.toMatch(/theme/);
    expect(toHash(dark)).toBe(toHash(defaults()));
    const old = fromHash('#v=1&theme=dark&n=64');
    expect(old.problems).toEqual([]);
    expect(old.state.theme).toBe('auto');
    expect(old.state.n).toBe(64);
  });

  it("an embed's link carries and obeys theme= (the host's), never in the snapshot's complete link", () => {
    const emb = fromHash('#v=1&theme=dark&n=64&embed=heatmap'); // the order does not matter: embed= after theme=
    expect(emb.problems).toEqual([]);
    expect(emb.state.theme).toBe('dark');
    expect(toHash(emb.state)).toMatch(/&theme=dark(&|$)/);
    expect(fromHash(toHash(emb.state)).state.theme).toBe('dark');
    expect(toHash(emb.state, { complete: true })).not.toMatch(/theme/); // the snapshot is the same in every theme
    expect(toHash({ ...emb.state, theme: 'auto' })).not.toMatch(/theme/); // the default is left out
    const bad = fromHash('#v=1&embed=spectrum&theme=purple');
    expect(bad.state.theme).toBe('auto');
    expect(bad.problems).toEqual(['theme: "purple" is not one of auto, light, dark']);
    // a later value wins, as for every other key (an attnviz:set appends its keys to the link)
    expect(fromHash('#v=1&embed=spectrum&theme=dark&theme=light').state.theme).toBe('light');
  });

  it('keeps every URL key of earlier pages, so old links keep working', () => {
    const OLD = ['gen', 'seed', 'n', 'd', 'std', 'scale', 'causal', 'variant', 'p', 'dwc', 'dwc_k', 's', 'ef_kind',
      'ef_shared', 'm', 'orthogonal', 'rseed', 'order', 'N', 'landmarks', 'iters', 'tau', 'rtol', 'ds', 'theme'];
    for (const k of OLD) expect(BY_NAME[k], k).toBeDefined();
    const perf = fromHash('#v=1&variant=performer&m=64&orthogonal=1&rseed=7&scale=1.5&n=128&d=32');
    expect(perf.problems).toEqual([]);
    expect(knobsOf(perf.state)).toEqual({ variant: 'performer', causal: false, scale: 1.5 / Math.sqrt(32), m: 64, orthogonal: true, seed: 7,
      feature_eps: 1e-6, decay: 1 }); // knobs added since: an old link gets their defaults
    expect(knobsOf(fromHash('#v=1&variant=focused&dwc=1&dwc_k=7&n=64').state).dwc_kernel).toBe(7);
    expect(knobsOf(fromHash('#v=1&variant=focused&dwc=0&dwc_k=7').state).dwc_kernel).toBe(0);
    expect(knobsOf(fromHash('#v=1&variant=nystrom&iters=0').state).iters).toBe(-1);
  });

  it('the compute modules get the inputs, the knobs and the readout settings, never the state', () => {
    const st = { ...defaults(), variant: 'linformer', s: 20, tau: 0.2, ds: 'max', theme: 'dark', rtol: -5 };
    expect(requestOf(st)).toEqual({
      inputs: { gen: st.gen, seed: st.seed, n: st.n, d: st.d, std: st.std },
      knobs: { variant: 'linformer', causal: false, scale: 1 / 8, s: 20, ef_kind: 'gaussian', ef_shared: false, seed: 0 },
      tau: 0.2, ds: 'max', gates: null,
    });
  });
});

describe('links are data', () => {
  it('a malformed escape in a key or a value is reported, never thrown', () => {
    for (const hash of ['#%=1', '#%E0%A4%A=3', '#n=%E0%A4%A', '#v=1&%ZZ&p=4']) {
      let out;
      expect(() => { out = fromHash(hash); }, hash).not.toThrow();
      expect(out.problems.join(' '), hash).toMatch(/malformed escape/);
    }
    const { state } = fromHash('#v=1&%ZZ&p=4&variant=focused');
    expect(state.p).toBe(4); // the rest of the link still applies
  });
});

describe('link keys are looked up as own schema entries only', () => {
  const PROTO = ['toString', 'valueOf', 'constructor', 'hasOwnProperty', '__proto__', 'isPrototypeOf',
    'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__'];
  const names = SCHEMA.map((e) => e.name).sort();

  it('names of Object.prototype members are unknown keys, never state', () => {
    for (const k of PROTO) {
      const { state, problems } = fromHash(`#v=1&${encodeURIComponent(k)}=1&n=128`);
      expect(problems, k).toEqual([`unknown parameter "${k}" ignored`]);
      expect(Object.keys(state).sort(), k).toEqual(names);
      expect(Object.hasOwn(state, k), k).toBe(false);
      expect(Object.getPrototypeOf(state), k).toBe(Object.prototype);
      expect(state.n, k).toBe(128);
      expect(toHash(state), k).toBe(toHash({ ...defaults(), n: 128 }));
    }
  });

  it('schema lookups by a user-given name see own entries only', () => {
    expect(firstDirtyStage(['toString', 'constructor', '__proto__'])).toBe(null);
    expect(firstDirtyStage(['valueOf', 'p'])).toBe('matrix');
    for (const k of PROTO) expect(BY_NAME[k], k).toBeUndefined();
  });

  it('thousands of unknown keys give one short notice that names a few and counts the rest', () => {
    const keys = Array.from({ length: 12485 }, (_, i) => `k${i}`);
    const { state, problems } = fromHash(`#n=64&${keys.map((k) => `${k}=1`).join('&')}&k3=2`);
    expect(state.n).toBe(64);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toBe('12,485 unknown parameters ignored: "k0", "k1", "k2", "k3", "k4", … and 12,480 more');
    const two = fromHash('#a=1&b=2&a=3').problems;
    expect(two).toEqual(['2 unknown parameters ignored: "a", "b"']);
  });

  it('the notice stays short whatever the link repeats, and is plain text', () => {
    const bad = Array.from({ length: 5000 }, () => 'p=abc').join('&');
    const esc = Array.from({ length: 5000 }, () => '%ZZ').join('&');
    const { problems } = fromHash(`#${bad}&${esc}&<img src=x onerror=alert(1)>=1`);
    const notice = problems.join('; ');
    expect(notice.length).toBeLessThan(1000);
    expect(notice).toMatch(/… and 9,9\d\d more problems/);
    const html = fromHash('#<b>x</b>=1').problems.join('; ');
    expect(html).toBe('unknown parameter "<b>x</b>" ignored'); // data as typed: the page sets textContent
  });
});

describe('variants with their own defaults and causal rules', () => {
  it("a knob at the old variant's default takes the new one's; one the reader set stays", () => {
    const st = defaults();
    expect(st.decay).toBe(1);
    const ret = withVariant(st, { ...st, variant: 'retention' });
    expect(ret.decay).toBe(1 - 2 ** -5);
    expect(withVariant(ret, { ...ret, variant: 'elu' }).decay).toBe(1);
    const set = { ...ret, decay: 0.9 };
    expect(withVariant(set, { ...set, variant: 'elu' }).decay).toBe(0.9);
    // a link that leaves decay out gets its variant's default; one that gives it keeps it
    expect(fromHash('#v=1&variant=retention').state.decay).toBe(1 - 2 ** -5);
    expect(fromHash('#v=1&variant=retention&decay=0.5').state.decay).toBe(0.5);
    expect(toHash(ret)).toMatch(/&decay=0\.96875(&|$)/);
  });

  it('retention and the delta rule are shown causal; a decay switches causal on, DWC overrides it', () => {
    const st = { ...defaults(), causal: false };
    for (const v of ['retention', 'deltanet']) {
      const s = withVariant(st, { ...st, variant: v });
      expect(knobsOf(s).causal, v).toBe(true);
      expect(causalNote(s), v).toMatch(/only causal/);
    }
    const elu = { ...st, variant: 'elu', decay: 0.9 };
    expect(knobsOf(elu)).toMatchObject({ causal: true, decay: 0.9 });
    expect(causalNote(elu)).toMatch(/needs the causal mask: shown causal/);
    const dwc = { ...st, variant: 'focused', decay: 0.9, dwc: true, dwc_k: 5 };
    expect(knobsOf(dwc)).toMatchObject({ causal: false, decay: 1, dwc_kernel: 5 });
    expect(causalNote(dwc)).toMatch(/not applied/);
    for (const s of [elu, dwc]) expect(av.checkKnobs(knobsOf(s), s.n, s.d).status).toBe(0);
  });

  it('qk_l2norm is a checkbox, on for gdn and kda and off for the others, whose off is a real off (−1)', () => {
    const st = defaults();
    const on = (v) => withVariant(st, { ...st, variant: v }).qk_l2norm;
    expect(['simple_gla', 'gla', 'gdn', 'kda', 'dplr', 'fox'].map(on)).toEqual([false, false, true, true, false, false]);
    const gdn = withVariant(st, { ...st, variant: 'gdn' });
    expect(knobsOf(gdn).qk_l2norm).toBe(true);
    // unticked: −1 in av_params (0 would be gdn's default, on), and it stays off across gdn → kda
    const off = { ...gdn, qk_l2norm: false };
    expect(knobsOf(off).qk_l2norm).toBe(-1);
    expect(withVariant(off, { ...off, variant: 'kda' }).qk_l2norm).toBe(false);
    expect(knobsOf({ ...withVariant(st, { ...st, variant: 'gla' }), qk_l2norm: true }).qk_l2norm).toBe(true);
    expect(fromHash('#v=1&variant=gdn&qk_l2norm=0').state.qk_l2norm).toBe(false);
    expect(fromHash('#v=1&variant=kda').state.qk_l2norm).toBe(true);
    // the library sees the difference: unticked, gdn's matrix is not its default's (on), but it is the matrix of −1
    const lab = av.lab(24, 8);
    expect(lab.generate('clustered', 1, 3).status).toBe(0);
    const M = (k) => { expect(lab.matrix(k).status).toBeGreaterThanOrEqual(0); return Buffer.from(lab.M.slice().buffer); };
    const page = { ...off, n: 24, d: 8 };
    expect(M(knobsOf(page)).equals(M({ variant: 'gdn' }))).toBe(false);
    expect(M(knobsOf(page)).equals(M({ variant: 'gdn', qk_l2norm: -1 }))).toBe(true);
    lab.free();
  });
});

describe('what a softmax with a decay or a window is as a recurrence', () => {
  it('says the forgetting softmax keeps a fading cache, a window a cache of W tokens', () => {
    const { formNote } = buildSchema(av.registry);
    const st = { ...defaults(), variant: 'softmax', causal: true };
    expect(formNote(st)).toBeNull();
    expect(formNote({ ...st, decay: 0.9 })).toMatch(/no constant-size state/);
    expect(formNote({ ...st, window: 8 })).toMatch(/last 8 tokens/);
    expect(formNote({ ...st, variant: 'elu', decay: 0.9 })).toBe('decay γ = 0.9: a key\'s weight halves every 6.58 tokens');
    expect(formNote({ ...st, variant: 'elu' })).toBeNull();
  });
});

describe("the loader's readouts and the semiseparable rank", () => {
  it('computes it with a spectrum, and skips its block SVD when asked', () => {
    const lab = av.lab(40, 6);
    expect(lab.generate('gaussian', 1, 2).status).toBe(0);
    const k = { variant: 'retention' };
    expect(lab.matrix(k).status).toBe(0);
    expect(lab.readouts(k, { route: 'fast' }).semiseparable_rank).toBe(6);
    const skipped = lab.readouts(k, { route: 'fast', semiseparable: false });
    expect(skipped.semiseparable_rank).toBeNull();
    expect(skipped.semiseparable_rank_reason).toMatch(/block's singular values were not computed/);
    lab.free();
  });
});
