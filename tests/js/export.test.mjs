// The page's exports (web/io/export.mjs): .npy bytes read back by the tests' reader and by the native CLI,
// CSV parsing back to the same floats, the JSON export's shape, the file names.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { readNpy } from './npy.mjs';
import { npyBytes, csvText, stateJson, exportName, numpySnippet, snippetRecomputes } from '../../web/io/export.mjs';
import { randomFiles } from '../../web/compute/random-draws.mjs';
import { gateFiles, gateArrays, VARIANT_GATES } from '../../web/compute/gate-files.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { Engine } from '../../web/compute/engine.mjs';

const CLI = 'build/native/attnviz';

describe('npyBytes', () => {
  it('writes a v1.0 header padded to 64 bytes that round-trips float32 and float64', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-export-'));
    const f32 = Float32Array.from({ length: 12 }, (_, i) => Math.fround(Math.sin(i) * 1e-3 * (i + 1)));
    const f64 = Float64Array.from({ length: 6 }, (_, i) => Math.PI ** i);
    const b32 = npyBytes(f32, [3, 4]);
    const b64 = npyBytes(f64, [6]);
    for (const b of [b32, b64]) {
      expect(b[6]).toBe(1);
      const hlen = b[8] | (b[9] << 8);
      expect((10 + hlen) % 64).toBe(0);
      expect(b[10 + hlen - 1]).toBe(10);
    }
    writeFileSync(join(dir, 'a.npy'), b32);
    writeFileSync(join(dir, 'b.npy'), b64);
    const a = readNpy(join(dir, 'a.npy'));
    expect(a.shape).toEqual([3, 4]);
    expect([...a.data]).toEqual([...f32]);
    const c = readNpy(join(dir, 'b.npy'));
    expect(c.shape).toEqual([6]);
    expect([...c.data]).toEqual([...f64]);
  });
  it('rejects a shape that does not match the data', () => {
    expect(() => npyBytes(new Float32Array(5), [2, 3])).toThrow(RangeError);
    expect(() => npyBytes([1, 2], [2])).toThrow(TypeError);
  });
  it.skipIf(!existsSync(CLI))('is read by the library: attnviz readouts takes re-written generate output', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-export-'));
    execFileSync(CLI, ['generate', '--gen', 'gaussian', '--n', '32', '--d', '8', '--seed', '3', '-o', dir]);
    const args = (q, k) => ['readouts', '--variant', 'softmax', '--q', q, '--k', k];
    const ref = JSON.parse(execFileSync(CLI, args(join(dir, 'q.npy'), join(dir, 'k.npy'))).toString());
    for (const name of ['q', 'k']) {
      const { shape, data } = readNpy(join(dir, `${name}.npy`));
      writeFileSync(join(dir, `${name}2.npy`), npyBytes(data, shape));
    }
    const got = JSON.parse(execFileSync(CLI, args(join(dir, 'q2.npy'), join(dir, 'k2.npy'))).toString());
    expect(got).toEqual(ref);
    // Byte for byte the library's own writer's output, header included.
    expect(Buffer.from(readFileSync(join(dir, 'q2.npy'))).equals(readFileSync(join(dir, 'q.npy')))).toBe(true);
  });
});

describe('csvText', () => {
  it('parses back to the same float32 values, one row per line', () => {
    const n = 5;
    const m = Float32Array.from({ length: n * n }, (_, i) => Math.fround(Math.exp(-i) / 7 - (i % 3 ? 0 : 1e-9)));
    m[3] = 0; m[7] = -0.125;
    const text = csvText(m, n);
    const rows = text.trimEnd().split('\n');
    expect(rows.length).toBe(n);
    const back = Float32Array.from(rows.flatMap((r) => r.split(',').map(Number)));
    expect([...back]).toEqual([...m]);
  });
  it('keeps float64 exactly', () => {
    const m = Float64Array.from([1 / 3, 2 / 3, 1e-300, -Math.E]);
    expect(csvText(m, 2).trimEnd().split(/[\n,]/).map(Number)).toEqual([...m]);
  });
});

describe('stateJson and exportName', () => {
  it('holds the state, the readouts, who wrote it and the version', () => {
    const snap = { state: { variant: 'elu', n: 64 }, readouts: { rank: 8 } };
    expect(JSON.parse(stateJson(snap))).toEqual({ state: snap.state, readouts: snap.readouts, generated_by: 'attnviz', version: '1' });
    expect(exportName(snap.state, 'M', 'npy')).toBe('attnviz-elu-n64-M.npy');
  });
});

describe('figureCaption', () => {
  it('names the variant, the knobs it reads, the inputs and the scale in units of 1/√d', async () => {
    const { figureCaption } = await import('../../web/io/export.mjs');
    const inputs = { gen: 'gaussian', seed: 1, n: 256, d: 64, std: 1 };
    const perf = { inputs, knobs: { variant: 'performer', causal: false, scale: 1 / 8, m: 256, orthogonal: true, seed: 0 } };
    expect(figureCaption(perf, 'Performer FAVOR+')).toBe(
      'Performer FAVOR+ (m = 256, orthogonal, feature seed 0) · Gaussian seed 1, n = 256, d = 64, std 1, scale 1/√d');
    const foc = { inputs: { ...inputs, gen: 'local' }, knobs: { variant: 'focused', causal: true, scale: 0.25, p: 3, dwc_kernel: 0 } };
    expect(figureCaption(foc, 'focused (FLatten)')).toBe(
      'focused (FLatten) (p = 3) · local seed 1, n = 256, d = 64, std 1, scale 2/√d, causal');
    // a gated family: its η and γ, the chunk unsaid, qk_l2norm said when on
    const gdn = { inputs: { ...inputs, n: 64, d: 16 }, knobs: { variant: 'gdn', causal: true, scale: 0.25, beta: 1, decay: 0.9, chunk: 64, qk_l2norm: true } };
    expect(figureCaption(gdn, 'Gated DeltaNet')).toBe(
      'Gated DeltaNet (η = 1, γ = 0.9, q, k L2-normalised) · Gaussian seed 1, n = 64, d = 16, std 1, scale 1/√d, causal');
    expect(figureCaption({ ...gdn, knobs: { ...gdn.knobs, qk_l2norm: -1 } }, 'Gated DeltaNet')).toMatch(/^Gated DeltaNet \(η = 1, γ = 0\.9\) · /);
  });
});

// The numpy snippet, run by Debian's python3 with numpy on the CLI's Q, K and M.
const hasNumpy = (() => {
  try { execFileSync('/usr/bin/python3', ['-c', 'import numpy']); return true; } catch { return false; }
})();
if (!hasNumpy) console.log('SKIPPED: numpy snippet tests: /usr/bin/python3 has no numpy (apt-get install python3-numpy)');

// the real registry, read when the tests are collected: one numpy case per variant follows from it
const REGISTRY = (await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) })).registry;

let loaded = null;
/** The page's engine on the real wasm module, with the page's schema (built once). */
async function pageEngine() {
  if (!loaded) {
    const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
    loaded = { av, schema: buildSchema(av.registry), engine: new Engine(av) };
  }
  return loaded;
}

describe.skipIf(!hasNumpy)('numpySnippet with the page engine', () => {
  // Every variant, as the page exports it: the engine's full-resolution arrays (web/compute/engine.mjs
  // exportArrays, the real wasm module) written as .npy, and the snippet run by numpy. Random
  // matrices (Performer's ω, Linformer's E and F, the DWC kernel) come out of the library itself.
  // every registry variant at its defaults (a new variant needs no edit here), then knob settings
  const cases = [
    ...REGISTRY.variants.map((v) => [v.name, {}]),
    ['softmax', { causal: true }], ['elu', { causal: true }], ['exp', { causal: true }],
    ['focused', { p: 3.5 }], ['focused', { dwc: true, dwc_k: 5, rseed: 3 }],
    ['linformer', { s: 12 }], ['linformer', { s: 12, ef_shared: true }], ['linformer', { s: 10, ef_kind: 'mean' }],
    ['performer', { m: 48, rseed: 2 }], ['performer', { m: 40, orthogonal: true, causal: true, feature_eps: 1e-4 }],
    ['taylor', { order: 3 }], ['explimit', { N: 4, causal: true }], ['cosformer', { causal: true }],
    ['nystrom', { landmarks: 8, iters: 6 }], ['nystrom', { landmarks: 48 }],
    ['softmax', { causal: true, decay: 0.9 }], ['softmax', { window: 5 }], ['softmax', { causal: true, window: 8, decay: 0.95 }],
    ['elu', { causal: true, decay: 0.9 }], ['taylor', { order: 2, causal: true, decay: 0.8 }],
    ['retention', { decay: 0.7 }], ['deltanet', { beta: 1, decay: 0.9 }],
    // the gated families with a constant gate (exported as the arrays it stands for) and qk_l2norm both ways
    ['simple_gla', { decay: 0.9 }], ['gla', { decay: 0.8, qk_l2norm: true }], ['gdn', { decay: 0.95, beta: 1.5 }],
    // (unnormalised keys at d = 8 make 1 − η‖k‖² < −1: M grows like its powers, so a small η keeps the absolute test fair)
    ['gdn', { decay: 0.9, qk_l2norm: false, beta: 0.1 }], ['kda', { decay: 0.9, beta: 0.25 }], ['dplr', { decay: 0.85 }],
    ['fox', { decay: 0.9 }], ['fox', { decay: 0.95, qk_l2norm: true }],
    // lolcats: a window of 1 (one softmax term a row) and one past n (causal softmax); the preamble's window mask is not its
    ['lolcats', { window: 1 }], ['lolcats', { window: 3 }], ['lolcats', { window: 500 }],
    // gates from the page's generators (web/state/gates.mjs): resets (g = −30), per channel, η per token, Mamba-2's Δ
    ['simple_gla', { gate: 'resets', decay: 0.99, gate_period: 16 }], ['gla', { gate: 'resets', gate_at: '10,30', decay: 0.95 }],
    ['gdn', { gate: 'resets', decay: 0.99, gate_period: 12, beta_gen: 'uniform' }],
    ['kda', { gate: 'resets', gate_rate: 0.1, decay: 0.97, beta: 1 }], ['dplr', { gate: 'resets', gate_period: 16 }],
    ['fox', { gate: 'resets', gate_period: 12 }], ['gla', { gate: 'projection' }], ['simple_gla', { gate: 'mamba2' }],
    ['kda', { gate: 'slow', beta_gen: 'projection' }], ['gdn', { decay: 0.95, beta_gen: 'uniform' }],
  ];
  let av, schema, engine;
  for (const [variant, knobs] of cases) {
    it(`recomputes ${variant} ${JSON.stringify(knobs)} within 1e-4 of the exported M`, async () => {
      ({ av, schema, engine } = await pageEngine());
      // the variant's own defaults as the picker gives them (gdn's qk_l2norm on), then the case's knobs
      const base = schema.defaults();
      const state = { ...schema.withVariant(base, { ...base, variant }), gen: 'clustered', n: 48, d: 8, seed: 5, ...knobs };
      const request = schema.requestOf(state);
      expect(snippetRecomputes(request)).toBe(true);
      const got = engine.exportArrays(request);
      expect(got.error).toBeUndefined();
      const dir = mkdtempSync(join(tmpdir(), 'attnviz-snippet-'));
      for (const { what, data, shape } of got.files) writeFileSync(join(dir, exportName(state, what, 'npy')), npyBytes(data, shape));
      expect(got.files.map((f) => f.what)).toEqual(['Q', 'K', 'V', 'M', 'A', ...randomFiles(request).map(([, w]) => w), ...gateFiles(request).map(([, w]) => w)]);
      writeFileSync(join(dir, 'snippet.py'), numpySnippet({ state, request }));
      const out = execFileSync('/usr/bin/python3', [join(dir, 'snippet.py')]).toString();
      const diff = Number(/max \|numpy - exported M\| = (\S+)/.exec(out)[1]);
      expect(diff).toBeLessThan(1e-4);
      expect(diff).toBeGreaterThanOrEqual(0);
      // a reset asked for is in the exported gates (g = −30), so the script was checked across one
      if (knobs.gate === 'resets') expect(Math.min(...got.files.find((f) => f.what === 'gates').data)).toBe(-30);
    });
  }
  it('recomputes dplr with the reader\'s own a, b (RWKV-7\'s construction) and per-channel gates with resets', async () => {
    ({ av, schema, engine } = await pageEngine());
    const n = 40, d = 8, base = schema.defaults();
    const state = { ...schema.withVariant(base, { ...base, variant: 'dplr' }), gen: 'gaussian', n, d, seed: 2, gate: 'file', dplr_ab: 'file' };
    const request = schema.requestOf(state);
    // Q, K, V from the generator, then as the reader's own tensors with gates.npy, a.npy and b.npy beside them
    const lab = av.lab(n, d);
    expect(lab.generate('gaussian', 1, 2).status).toBe(0);
    const Q = lab.Q.slice(), K = lab.K.slice(), V = lab.V.slice();
    lab.free();
    const g = Float32Array.from({ length: n * d }, (_, i) => (Math.floor(i / d) % 13 === 7 ? -30 : Math.log(0.9 + 0.01 * (i % d))));
    const a = new Float32Array(n * d), b = new Float32Array(n * d);
    for (let t = 0; t < n; t++) { // a = −κ̂, b = κ̂ ⊙ a_icl with κ̂ = k/‖k‖, a_icl = 0.5
      let s = 0;
      for (let c = 0; c < d; c++) s += K[t * d + c] ** 2;
      for (let c = 0; c < d; c++) { const kh = K[t * d + c] / Math.sqrt(s); a[t * d + c] = -kh; b[t * d + c] = 0.5 * kh; }
    }
    engine.setTensors({ key: 'own-dplr', Q, K, V, layers: 1, heads: 1, kvHeads: 1, n, d, gates: { g, channels: d, beta: null, a, b } });
    request.inputs = { ...request.inputs, tensors: 'own-dplr', layer: 0, head: 0 };
    const got = engine.exportArrays(request);
    expect(got.error).toBeUndefined();
    expect(got.files.map((f) => [f.what, f.shape])).toEqual(expect.arrayContaining([['gates', [n, d]], ['a', [n, d]], ['b', [n, d]]]));
    expect([...got.files.find((f) => f.what === 'a').data]).toEqual([...a]);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-snippet-'));
    for (const { what, data, shape } of got.files) writeFileSync(join(dir, exportName(state, what, 'npy')), npyBytes(data, shape));
    writeFileSync(join(dir, 'snippet.py'), numpySnippet({ state, request }));
    const diff = Number(/max \|numpy - exported M\| = (\S+)/.exec(execFileSync('/usr/bin/python3', [join(dir, 'snippet.py')]).toString())[1]);
    expect(diff).toBeLessThan(1e-4);
    // the low-rank term is there: with a = b = 0 (GLA) the same script is far from this M
    writeFileSync(join(dir, exportName(state, 'a', 'npy')), npyBytes(new Float32Array(n * d), [n, d]));
    const gla = Number(/= (\S+)/.exec(execFileSync('/usr/bin/python3', [join(dir, 'snippet.py')]).toString())[1]);
    expect(gla).toBeGreaterThan(1e-3);
  });
  it('a snippet fed the wrong M says so (the check can fail)', async () => {
    ({ av, schema, engine } = await pageEngine());
    const state = { ...schema.defaults(), gen: 'gaussian', n: 32, d: 8, seed: 1, variant: 'performer', m: 16 };
    const request = schema.requestOf(state);
    const got = engine.exportArrays(request);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-snippet-'));
    for (const { what, data, shape } of got.files) {
      // ω of another seed: the recomputed M is not the exported one
      const bytes = what === 'omega' ? npyBytes(data.map((x) => -x * 1.5), shape) : npyBytes(data, shape);
      writeFileSync(join(dir, exportName(state, what, 'npy')), bytes);
    }
    writeFileSync(join(dir, 'snippet.py'), numpySnippet({ state, request }));
    const out = execFileSync('/usr/bin/python3', [join(dir, 'snippet.py')]).toString();
    expect(Number(/= (\S+)/.exec(out)[1])).toBeGreaterThan(1e-3);
  });
  it('a gated snippet fed other gates says so (it reads gates.npy)', async () => {
    ({ av, schema, engine } = await pageEngine());
    const base = schema.defaults();
    const state = { ...schema.withVariant(base, { ...base, variant: 'gdn' }), gen: 'gaussian', n: 32, d: 8, seed: 1, decay: 0.9 };
    const request = schema.requestOf(state);
    const got = engine.exportArrays(request);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-snippet-'));
    for (const { what, data, shape } of got.files) {
      // a reset at token 16 that the matrix never saw
      const bytes = what === 'gates' ? npyBytes(data.map((x, i) => (i === 16 ? -30 : x)), shape) : npyBytes(data, shape);
      writeFileSync(join(dir, exportName(state, what, 'npy')), bytes);
    }
    writeFileSync(join(dir, 'snippet.py'), numpySnippet({ state, request }));
    const out = execFileSync('/usr/bin/python3', [join(dir, 'snippet.py')]).toString();
    expect(Number(/= (\S+)/.exec(out)[1])).toBeGreaterThan(1e-3);
  });
});

describe('gateArrays', () => {
  const request = (variant, knobs = {}) => ({ inputs: { n: 5, d: 3 }, knobs: { variant, decay: 0.5, beta: 0.75, ...knobs } });
  it('writes the constant case out as the arrays it stands for, in the shape the family reads', () => {
    const shapes = (v) => gateArrays(request(v)).map((f) => [f.what, f.shape]);
    expect(shapes('simple_gla')).toEqual([['gates', [5]]]);
    expect(shapes('gla')).toEqual([['gates', [5, 3]]]);
    expect(shapes('gdn')).toEqual([['gates', [5]], ['betas', [5]]]);
    expect(shapes('kda')).toEqual([['gates', [5, 3]], ['betas', [5]]]);
    expect(shapes('dplr')).toEqual([['gates', [5, 3]], ['a', [5, 3]], ['b', [5, 3]]]);
    expect(shapes('fox')).toEqual([['gates', [5]]]);
    expect(gateArrays(request('softmax'))).toEqual([]);
    const [g, b] = gateArrays(request('gdn'));
    expect([...g.data]).toEqual(Array(5).fill(Math.fround(Math.log(0.5))));
    expect([...b.data]).toEqual(Array(5).fill(0.75));
    expect([...gateArrays(request('dplr'))[1].data]).toEqual(Array(15).fill(0));
    expect(Object.keys(VARIANT_GATES)).toEqual(['simple_gla', 'gla', 'gdn', 'kda', 'dplr', 'fox']);
  });
  it('copies the arrays the page gave, a per-token gate of a per-channel family as (n), and refuses a wrong length', () => {
    const gates = Float32Array.of(0, -0.1, -30, -0.2, 0);
    const [g] = gateArrays(request('kda'), { g: gates, channels: 1 });
    expect(g.shape).toEqual([5]);
    expect([...g.data]).toEqual([...gates]);
    expect(g.data).not.toBe(gates);
    const per = gateArrays(request('gla'), { g: new Float32Array(15).fill(-0.5), channels: 3 });
    const gdn = gateArrays(request('gdn'), { g: gates, channels: 1, beta: Float32Array.of(1, 2, 0.5, 0.5, 0.1) });
    expect([...gdn[1].data]).toEqual([1, 2, 0.5, 0.5, Math.fround(0.1)]);
    expect(per[0].shape).toEqual([5, 3]);
    expect(() => gateArrays(request('gdn'), { g: new Float32Array(4) })).toThrow(/gates holds 4 values, not 5×1/);
  });
});

describe('heatmapSvg', () => {
  it('is balanced XML with escaped text and a colour bar whose top is the colour map top', async () => {
    const { heatmapSvg } = await import('../../web/io/export.mjs');
    const { colorTable } = await import('../../web/render/colormap.mjs');
    const table = colorTable('viridis');
    const svg = heatmapSvg({ png: 'data:image/png;base64,iVBORw0KGgo=', cells: 4, table, lo: 0, hi: 1,
      ticks: [{ value: 0, text: '0' }, { value: 1, text: '1 <&> "x"' }], title: 'M & A', caption: 'a <b> caption' });
    expect(svg).toContain('1 &lt;&amp;&gt; &quot;x&quot;');
    expect(svg).toContain('a &lt;b&gt; caption');
    expect(svg).not.toMatch(/<b>/);
    // Tags balance: every open tag closes in order (a small well-formedness check, no attributes with '>').
    const stack = [];
    for (const m of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
      if (m[1]) expect(stack.pop()).toBe(m[2]); else if (!m[3]) stack.push(m[2]);
    }
    expect(stack).toEqual([]);
    const first = /<rect x="\d+" y="[\d.]+" width="16"[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"/.exec(svg);
    expect(first.slice(1).map(Number)).toEqual([...table.subarray(1020, 1023)]);
  });
});

describe('chartSvg, entropySvg, wrapLines', () => {
  it('draws each series as a path with its dash, breaks it at nulls and non-positive values on a log axis, and labels the legend', async () => {
    const { chartSvg } = await import('../../web/io/export.mjs');
    const svg = chartSvg({
      title: 't & <u>', caption: 'a caption', xLabel: 'i', yLabel: 'σ', logY: true,
      series: [
        { label: 'variant M', color: '#0072b2', dash: [], marker: 'circle', x: [1, 2, 3, 4, 5], y: [1, 0.1, null, 0.01, 0] },
        { label: 'softmax A', color: '#cc79a7', dash: [1.5, 3], marker: 'diamond', x: [1, 2, 3], y: [1, 0.5, 0.2] },
      ],
      hlines: [{ y: 1e-3, label: 'noise floor' }], vlines: [{ x: 4, label: 'rank ceiling 4' }],
    });
    const paths = [...svg.matchAll(/<path d="([^"]+)" fill="none" stroke="(#[0-9a-f]+)"[^>]*>/g)];
    expect(paths.map((p) => p[2])).toEqual(['#0072b2', '#cc79a7']);
    expect(paths[0][1].match(/M/g).length).toBe(2);        // the null breaks the first curve; 0 is dropped
    expect(paths[0][1].match(/L/g).length).toBe(1);
    expect(svg).toMatch(/stroke-dasharray="1.5 3"/);
    expect(svg).toContain('t &amp; &lt;u&gt;');
    expect(svg).toContain('>noise floor<');
    expect(svg).toContain('>rank ceiling 4<');
    expect(svg).toMatch(/>0\.001<|>1e-3</);                // a decade tick of the log axis
    expect(() => chartSvg({ title: '', caption: '', xLabel: '', yLabel: '', logY: true, series: [{ label: 'x', color: '#000', x: [1], y: [0] }] }))
      .toThrow(/nothing to draw/);
  });
  it('wraps a long caption into lines whose text is the caption', async () => {
    const { entropySvg } = await import('../../web/io/export.mjs');
    const { wrapLines } = await import('../../web/render/svg-text.mjs');
    expect(wrapLines('a bb ccc dddd eeeee', 8)).toEqual(['a bb ccc', 'dddd', 'eeeee']);
    expect(wrapLines('', 8)).toEqual(['']);
    const caption = 'Performer FAVOR+ (m = 256, orthogonal, feature seed 0, ε = 1e-6) · Gaussian seed 1, n = 256, d = 64, std 1, scale 1/√d';
    const svg = entropySvg({ bins: 4, top: Math.log(8), M: [0.1, 0.2, 0.3, 0.4], A: [0.4, 0.3, 0.2, 0.1], max: 0.4, meanM: 0.6, meanA: 0.4 },
      { title: 'h', caption, width: 400 });
    const spans = [...svg.matchAll(/<tspan[^>]*>([^<]*)<\/tspan>/g)].map((m) => m[1]);
    expect(spans.length).toBeGreaterThan(1);
    expect(spans.join('')).toBe(caption);
    expect(svg.match(/<rect x=/g).length).toBe(4 + 1);       // four bars and the frame
    const h = Number(/height="(\d+)"/.exec(svg)[1]);
    expect(h).toBeGreaterThan(320);                          // the figure grows with its caption
  });
});

describe('zipStore', () => {
  it('writes a stored zip that Python reads back, CRC-checked, byte for byte', async () => {
    const { zipStore, crc32 } = await import('../../web/io/export.mjs');
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926); // the CRC-32 check value
    const bin = Uint8Array.from({ length: 3000 }, (_, i) => (i * 7919) & 0xff);
    const zip = zipStore([{ name: 'x/a.txt', bytes: 'hello\n' }, { name: 'x/b.bin', bytes: bin }]);
    expect(zipStore([{ name: 'x/a.txt', bytes: 'hello\n' }, { name: 'x/b.bin', bytes: bin }])).toEqual(zip); // deterministic
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-zip-'));
    writeFileSync(join(dir, 't.zip'), zip);
    const out = execFileSync('/usr/bin/python3', ['-c', `
import sys, zipfile, hashlib
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
print(z.namelist(), z.read("x/a.txt"), hashlib.sha256(z.read("x/b.bin")).hexdigest())`, join(dir, 't.zip')]).toString();
    const { createHash } = await import('node:crypto');
    expect(out).toContain("['x/a.txt', 'x/b.bin'] b'hello\\n'");
    expect(out.trim().endsWith(createHash('sha256').update(bin).digest('hex'))).toBe(true);
  });
});
