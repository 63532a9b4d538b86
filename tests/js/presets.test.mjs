// The lessons' table (web/state/presets.mjs) against the real registry's schema: every preset's keys are
// schema keys with values the schema takes as they are (no clamping, no problem), every highlight names a
// readout row or a panel the page has, and a link that names a preset expands to the preset's keys with
// the link's own keys winning. The claims themselves are checked in Chromium (tests/e2e/lessons.test.mjs).
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { PRESETS, CHAPTERS, FIRST_LESSON, presetOf, stepPreset, chapterOf, expandPreset, withPreset, playValues } from '../../web/state/presets.mjs';
import { READOUT_ROWS } from '../../web/render/readouts.mjs';
import { Engine, swampedKeys } from '../../web/compute/engine.mjs';
import { VARIANT_VIEW } from '../../web/state/variants.mjs';
import { fillPrediction, LOSES_EVIDENCE } from '../../web/ui/lessons.mjs';
import { MEMORIES } from '../../web/ui/mechanisms.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);
const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');
const PANELS = [...html.matchAll(/data-hl="([^"]+)"/g)].map((m) => m[1]);

describe('the lessons table', () => {
  it('has unique names, each with a title, a caption, sources and something to highlight', () => {
    const names = PRESETS.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of ['rank-le-d', 'exp-spectrum', 'crossover', 'efficient-rows', 'focused-p', 'dwc-rank', 'linformer-s',
      'performer-m', 'performer-norm', 'taylor-order', 'explimit-N', 'hedgehog-spiky', 'sink']) expect(names).toContain(name);
    expect(names[0]).toBe(FIRST_LESSON);
    for (const p of PRESETS) {
      expect(p.name).toMatch(/^[a-zA-Z0-9-]+$/);
      expect(p.title.length).toBeGreaterThan(5);
      expect(p.caption.length).toBeGreaterThan(80);
      expect(p.sources.length).toBeGreaterThan(0); // their form and quotes: tests/js/citations.test.mjs
      expect(p.highlight.length).toBeGreaterThan(0);
    }
  });

  it("sets schema keys to values the schema takes as they are, and the variant's own knobs", () => {
    for (const p of PRESETS) {
      const { hash, preset, problem } = expandPreset(`preset=${p.name}`);
      expect([preset, problem]).toEqual([p.name, null]);
      const { state, problems } = schema.fromHash(hash);
      expect(problems, p.name).toEqual([]);
      for (const [k, v] of Object.entries(p.state)) {
        expect(schema.entryOf(k), `${p.name}: ${k}`).not.toBe(null);
        // (a list's commas stay readable in a link: compared decoded)
        expect(decodeURIComponent(schema.toHash(state).match(new RegExp(`(?:^|&)${k}=([^&]*)`))[1]), `${p.name}: ${k}`).toBe(String(v));
      }
      const knobs = schema.knobsOf(state);
      expect(knobs.variant).toBe(state.variant);
    }
  });

  it('compares on a schema key the schema takes as given, and cites a readout to compare', () => {
    const rows = READOUT_ROWS.map((r) => r.id);
    for (const p of PRESETS.filter((x) => x.compare)) {
      const { key, value, label } = p.compare;
      expect(schema.entryOf(key), `${p.name}: ${key}`).not.toBe(null);
      const { state, problems } = schema.fromHash(`${expandPreset(`preset=${p.name}`).hash}&${key}=${encodeURIComponent(String(value))}`);
      expect(problems, p.name).toEqual([]);
      expect(String(schema.toHash(state).match(new RegExp(`(?:^|&)${key}=([^&]*)`))[1]), p.name).toBe(encodeURIComponent(String(value)));
      expect(typeof label === 'string' && label.length > 0, p.name).toBe(true);
      expect(p.highlight.some((h) => rows.includes(h)), `${p.name} cites a readout`).toBe(true);
    }
  });

  it("plays a knob of the lesson's own variant, through values the schema takes, past the lesson's own value", () => {
    const played = PRESETS.filter((p) => p.play).map((p) => p.name);
    expect(played).toEqual(expect.arrayContaining(['focused-p', 'performer-m', 'decay-halflife', 'explimit-N', 'linformer-s']));
    for (const p of PRESETS.filter((x) => x.play)) {
      const { key, from, to, steps } = p.play;
      const state = schema.fromHash(expandPreset(`preset=${p.name}`).hash).state;
      const e = schema.entryOf(key);
      expect(e && (e.type === 'int' || e.type === 'float'), `${p.name}: ${key}`).toBe(true);
      expect(schema.shown(e, state), `${p.name}: ${key} is a control of ${state.variant}`).toBe(true);
      expect(Number.isInteger(steps) && steps >= 3, p.name).toBe(true);
      const values = playValues(p.play);
      expect([values[0], values.at(-1), values.length]).toEqual([from, to, steps]);
      for (const v of values) expect(schema.coerce(e, v, state).problem, `${p.name}: ${key} = ${v}`).toBe(null);
      const own = state[key];
      expect(own >= Math.min(from, to) && own <= Math.max(from, to), `${p.name}: its ${key} = ${own} is on the way`).toBe(true);
    }
  });

  it('playValues: evenly spaced, or evenly in log, to four significant digits', () => {
    expect(playValues({ from: 1, to: 2, steps: 5 })).toEqual([1, 1.25, 1.5, 1.75, 2]);
    expect(playValues({ from: 16, to: 4096, steps: 9, log: true })).toEqual([16, 32, 64, 128, 256, 512, 1024, 2048, 4096]);
    expect(playValues({ from: 0.5, to: 1, steps: 11 })).toEqual([0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1]);
  });

  it('highlights readout rows and panels that exist', () => {
    const rows = READOUT_ROWS.map((r) => r.id);
    expect(PANELS).toEqual(expect.arrayContaining(['heatmaps', 'spectrum', 'error', 'cost', 'entropy']));
    for (const p of PRESETS) for (const h of p.highlight) expect([...rows, ...PANELS, ...(p.model ? Object.keys(LOSES_EVIDENCE) : [])], `${p.name}: ${h}`).toContain(h);
  });

  it('a lesson on the real model opens the panel "what the model loses" with src=model, and cites only it', () => {
    const onModel = PRESETS.filter((p) => p.model).map((p) => p.name);
    expect(onModel).toEqual(expect.arrayContaining(['story-breaks', 'distill-recovers', 'head-sensitivity']));
    for (const p of PRESETS) {
      const cites = p.highlight.filter((h) => h in LOSES_EVIDENCE);
      if (!p.model) { expect(cites, p.name).toEqual([]); continue; }
      expect([p.state.src, p.state.loses], p.name).toEqual(['model', 1]);
      expect(cites.length, p.name).toBe(p.highlight.length);
    }
  });
});

describe('predictions ("predict, then reveal")', () => {
  const withPredict = PRESETS.filter((p) => p.predict);
  it('ask on the lessons where a guess teaches, each with choices, one answer and reveal keys the schema takes', () => {
    expect(withPredict.map((p) => p.name)).toEqual(expect.arrayContaining(['rank-le-d', 'crossover', 'performer-m', 'window-rank', 'memory-collisions']));
    for (const p of withPredict) {
      const q = p.predict;
      expect(q.question, p.name).toMatch(/\?$/);
      expect(q.choices.length, p.name).toBeGreaterThanOrEqual(2);
      expect(Number.isInteger(q.answer) && q.answer >= 0 && q.answer < q.choices.length, p.name).toBe(true);
      const pairs = Object.entries(q.reveal).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&');
      const { state, problems } = schema.fromHash(expandPreset(`preset=${p.name}&${pairs}`).hash);
      expect(problems, p.name).toEqual([]);
      for (const [k, v] of Object.entries(q.reveal)) {
        expect(String(schema.toHash(state).match(new RegExp(`(?:^|&)${k}=([^&]*)`))[1]), `${p.name}: ${k}`).toBe(encodeURIComponent(String(v)));
      }
    }
  });
  it('quote only readouts the snapshot has and keys the state has', () => {
    const readoutKeys = new Set([...READOUT_ROWS.flatMap((r) => r.keys), 'cost']);
    for (const p of withPredict) {
      for (const [, path] of p.predict.explanation.matchAll(/\{([\w.-]+)\}/g)) {
        const key = path.replace(/^before\./, '');
        if (key.startsWith('state.')) expect(schema.entryOf(key.slice(6)), `${p.name}: ${path}`).not.toBe(null);
        else if (key.startsWith('recall_')) expect(Object.keys(MEMORIES), `${p.name}: ${path}`).toContain(key.slice(7)); // the recall view's memories
        else expect(readoutKeys.has(key), `${p.name}: ${path}`).toBe(true);
      }
    }
  });
  it('fill the explanation from the numbers shown, as the readout table writes them', () => {
    const now = { readouts: { rank: 8, error_fro_rel: 0.20345 }, state: { d: '8' }, cost: 'cost at n = 256: linear path of v: 1M multiply-adds, 1 KiB; softmax\'s quadratic path: 4M multiply-adds, 1 KiB (linear is 4× cheaper)' };
    const before = { readouts: { rank: 16, error_fro_rel: 0.4051 }, state: { d: '16' } };
    expect(fillPrediction('rank {rank} at d = {state.d} (was {before.rank} at d = {before.state.d}); error {error_fro_rel} vs {before.error_fro_rel}; {cost}', now, before))
      .toBe('rank 8 at d = 8 (was 16 at d = 16); error 0.203 vs 0.405; linear is 4× cheaper');
    expect(fillPrediction('{nothing} {before.rank}', now, null)).toBe('— —');
  });
});

describe('links that name a lesson', () => {
  it("put the preset's keys first and the link's own after them, so the link's win", () => {
    const { hash, preset } = expandPreset('#preset=rank-le-d&d=32&variant=relu');
    expect(preset).toBe('rank-le-d');
    const { state, problems } = schema.fromHash(hash);
    expect(problems).toEqual([]);
    expect([state.d, state.variant, state.gen, state.n]).toEqual([32, 'relu', 'gaussian', 256]);
    // n first in fromHash: the link's n still wins over the preset's
    expect(schema.fromHash(expandPreset('preset=crossover&n=1024').hash).state.n).toBe(1024);
  });

  it('an empty link opens the first lesson; a link without a preset is left as it is', () => {
    expect(expandPreset('').preset).toBe(FIRST_LESSON);
    expect(expandPreset('#').preset).toBe(FIRST_LESSON);
    expect(expandPreset('v=1&n=64')).toEqual({ hash: 'v=1&n=64', preset: null, problem: null });
  });

  it('an unknown or malformed lesson is reported and the rest of the link used', () => {
    const x = expandPreset('preset=%3Cb%3Enope&n=64');
    expect(x.preset).toBe(null);
    expect(x.problem).toMatch(/unknown lesson "<b>nope"/);
    expect(x.hash).toBe('n=64');
    expect(expandPreset('preset=%E0%A4%A&n=64').problem).toMatch(/unknown lesson ""/);
    expect(presetOf('toString')).toBe(null);
    expect(presetOf(undefined)).toBe(null);
  });

  it('writes the lesson first in the address bar, and walks the menu in order', () => {
    expect(withPreset('v=1&n=64', 'sink')).toBe('preset=sink&v=1&n=64');
    expect(withPreset('v=1&n=64', null)).toBe('v=1&n=64');
    expect(stepPreset(PRESETS[0].name, 1)).toBe(PRESETS[1]);
    expect(stepPreset(PRESETS.at(-1).name, 1)).toBe(PRESETS[0]);
    expect(stepPreset(PRESETS[0].name, -1)).toBe(PRESETS.at(-1));
    expect(stepPreset('nope', 1)).toBe(PRESETS[0]);
  });

  it('puts every lesson in exactly one chapter, and walks the course in the chapters\' order', () => {
    const named = CHAPTERS.flatMap((c) => c.lessons);
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual(PRESETS.map((p) => p.name).sort());
    expect(PRESETS.map((p) => p.name)).toEqual(named);
    expect(PRESETS[0].name).toBe(FIRST_LESSON);
    for (const c of CHAPTERS) expect(c.title.length, c.title).toBeGreaterThan(3);
    expect(chapterOf('exp-spectrum')).toMatchObject({ index: 1, title: 'Low rank' });
    expect(chapterOf('nope')).toBe(null);
    // the delta rule comes after the collisions it fixes, and the plain recurrence before decay
    const at = (n) => named.indexOf(n);
    expect(at('memory-collisions')).toBeLessThan(at('delta-overwrite'));
    expect(at('recurrent-state')).toBeLessThan(at('decay-halflife'));
    expect(at('recurrent-state')).toBeLessThan(at('retention-signed'));
    // FLatten (focused-p) before its DWC, and the state (recurrent-state) before a lesson that measures it
    expect(at('focused-p')).toBeLessThan(at('dwc-rank'));
    expect(at('recurrent-state')).toBeLessThan(at('crossover-measured'));
  });

  it('docs/lessons.md lists the course as CHAPTERS has it', () => {
    const doc = readFileSync(new URL('../../docs/lessons.md', import.meta.url), 'utf8');
    const listed = [...doc.split('## The course')[1].split('## The lessons')[0].matchAll(/^\d+\. \*\*(.+?)\*\*: (.+)$/gm)]
      .map((m) => ({ title: m[1], lessons: [...m[2].matchAll(/`([^`]+)`/g)].map((x) => x[1]) }));
    expect(listed).toEqual(CHAPTERS);
  });
});

describe("the note when Performer's ε swamps the keys (engine.mjs)", () => {
  it('counts the keys whose features all sit below 2ε/√r', () => {
    const eps = 1e-6, r = 4, floor = eps / Math.sqrt(r);
    // key 0: every feature at the floor (swamped); key 1: one exponential term of 1.5ε; key 2: a large term
    const PhiK = Float32Array.from([floor, floor, floor, floor, floor, 2.5 * floor, floor, floor, floor, floor, 0.3, floor]);
    expect(swampedKeys(PhiK, 3, r, eps)).toEqual({ keys: 1, n: 3, fraction: 1 / 3 });
  });

  it('finds most keys swamped on large-norm inputs, none on moderate ones, and says nothing for ε = 0', async () => {
    const engine = new Engine(av);
    const req = (std, knobs) => ({ inputs: { gen: 'gaussian', seed: 1, n: 128, d: 64, std }, knobs: { variant: 'performer', causal: false, scale: 0, m: 1024, orthogonal: true, seed: 0, feature_eps: 1e-6, ...knobs }, tau: 0.1, ds: 'mean' });
    expect(engine.frame(req(1.5, {})).swamped.fraction).toBeGreaterThan(0.5);
    expect(engine.frame(req(0.5, {})).swamped).toMatchObject({ keys: 0, fraction: 0, eps: 1e-6 });
    expect(engine.frame(req(1.5, { feature_eps: -1 })).swamped).toBe(null); // ε = 0 (−1 in av_params)
    expect(engine.frame({ ...req(1.5, {}), knobs: { variant: 'elu', causal: false, scale: 0 } }).swamped).toBe(null);
    engine.lab.free();
  });
});

// Issue 30's wrong explanations: each sentence below contradicted the page's own numbers (the numbers
// themselves are checked in Chromium, tests/e2e/lessons.test.mjs); these keep the corrected wording.
describe('the explanations say what the numbers say', () => {
  const caption = (name) => presetOf(name).caption;

  it("decay: the recurrence's state keeps its size; only the semiseparable (numerical) rank drops", () => {
    expect(caption('decay-halflife')).toMatch(/state a recurrence carries keeps its size/);
    expect(caption('decay-halflife')).not.toMatch(/state a recurrence must carry[^.]*drops/);
  });

  it("elu+1's hint puts the rank cap on the unmasked matrix with n > d (rank 256 causal, no cliff at n = d = 64)", () => {
    const hint = VARIANT_VIEW.elu.hint;
    expect(hint).toMatch(/Without the causal mask/);
    expect(hint).toMatch(/n > d/);
  });

  it("Performer's hint does not promise that orthogonal features always win (iid wins at m = 256)", () => {
    expect(VARIANT_VIEW.performer.hint).not.toMatch(/orthogonal beats iid/);
    expect(VARIANT_VIEW.performer.hint).toMatch(/on average/);
  });

  it('the sink lesson shows Nyströmformer with fewer landmarks than tokens and gives the measured share', () => {
    const p = presetOf('sink');
    expect(p.state.landmarks).toBeLessThan(p.state.n); // landmarks = n is exact softmax: nothing to see
    expect(p.caption).not.toMatch(/about half/);
    expect(p.caption).toMatch(/0\.74/);
  });

  it("the delta rule's step is η everywhere (β is the logit scale)", () => {
    for (const p of PRESETS.filter((x) => x.state.variant === 'deltanet')) {
      expect(p.caption, p.name).not.toMatch(/β/);
      expect(p.caption, p.name).toMatch(/η = 1/);
    }
  });

  it('the distillation lesson says it trains and scores on the same Q, K', () => {
    expect(caption('hedgehog-distill')).toMatch(/trains and scores on the same Q and K/);
    expect(caption('hedgehog-distill')).toMatch(/fresh Q and K/); // and what a held-out draw gives (checked in Chromium)
  });
});
