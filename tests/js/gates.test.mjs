// gates.test.mjs: the gated families' gates as inputs (docs/gated.md "Generated gates", docs/page.md "Gates"):
// the WebAssembly build's generators give the native bits (tests/c/check_gates.c's golden hashes), the lab puts
// them where every path reads them, the engine's matrix with gates is the native CLI's with the same gates.npy
// (and a float64 reference written from docs/gated.md), and the link carries the generator and its knobs.
import { describe, it, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { applyGates, draftGates, gatesSummary } from '../../web/compute/gates.mjs';
import { npyBytes, stateJson } from '../../web/io/export.mjs';
import { gatesPart } from '../../web/io/inspect.mjs';
import { stripColumns, stripCells, gateIndex } from '../../web/render/gate-strip.mjs';
import { readNpy } from './npy.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const BUILDS = { simd: new URL('build/wasm/attnviz.wasm', ROOT), scalar: new URL('build/wasm/attnviz-scalar.wasm', ROOT) };
const av = await loadAttnviz({ source: BUILDS.simd, simd: true });
const schema = buildSchema(av.registry);
const tmp = mkdtempSync(join(tmpdir(), 'attnviz-gates-'));

/** FNV-1a 64 over the bytes of a Float32Array (tests/c/check_gates.c's fnv). */
function fnv(x) {
  const b = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  let h = 0xcbf29ce484222325n;
  for (const byte of b) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

describe('the generators in WebAssembly give the native bits', () => {
  // tests/c/check_gates.c test_golden: the same calls, the same hashes
  const GOLDEN = [0x4430ccfab1cc3424n, 0xe3bd39b8c61149ebn, 0xfc72b04c5eb3c66dn, 0x1a8138bd0a63d0d9n, 0x111b9baddfbcb629n,
    0x17bbf58887a637e0n, 0xb0080f5707a45a7cn, 0x8c4112f159789bf3n, 0xb2d2bf03cae6edaen];
  for (const [build, source] of Object.entries(BUILDS)) {
    it(`${build}: every generator, bit for bit`, async () => {
      const m = await loadAttnviz({ source, simd: build === 'simd' });
      const n = 37, d = 13, ex = m.exports, lab = m.lab(n, d);
      expect(lab.generate('gaussian', 1, 42).status).toBe(0);
      const g = m.malloc(n * d * 4), at = m.malloc(8), D = m.malloc(n * 4);
      m.i32(at, 2).set([5, 20]);
      const got = (len) => fnv(m.f32(g, len).slice());
      const h = [];
      expect(ex.av_gates_constant(g, n, d, 0.97)).toBe(0); h.push(got(n * d));
      expect(ex.av_gates_uniform(g, n, d, 0.5, 1.0, 42)).toBe(0); h.push(got(n * d));
      expect(ex.av_gates_resets(g, n, 1, 0.99, 8, at, 2, 0.1, 42)).toBe(0); h.push(got(n));
      expect(ex.av_gates_slow(g, n, d, 0.8, 0.999, 16, 42)).toBe(0); h.push(got(n * d));
      expect(ex.av_gates_projection(g, lab.Kp, n, d, d, 42)).toBe(0); h.push(got(n * d));
      expect(ex.av_betas_uniform(g, n, 0.1, 2.0, 42)).toBe(0); h.push(got(n));
      expect(ex.av_betas_projection(g, lab.Kp, n, d, 1.0, 42)).toBe(0); h.push(got(n));
      expect(ex.av_gates_mamba2(g, D, lab.Kp, n, d, -1.0, 0.01, 42)).toBe(0); h.push(got(n), fnv(lab.K.slice()));
      expect(h).toEqual(GOLDEN);
      for (const p of [g, at, D]) m.free(p);
      lab.free();
    });
  }

  it('names the generators as the page does', () => {
    const names = [];
    for (let k = 0; ; k++) { const p = av.exports.av_gate_generator_name(k); if (!p) break; names.push(av.cstring(p)); }
    expect(names).toEqual(['constant', 'uniform', 'resets', 'slow', 'projection', 'mamba2']);
  });
});

describe('the lab reads its gates on every path', () => {
  const n = 48, d = 8;
  it('resets make simple_gla block-diagonal, on the matrix, linear, recurrent and chunkwise paths alike', () => {
    const lab = av.lab(n, d);
    lab.generate('gaussian', 1, 3);
    expect(lab.generateGates({ kind: 'resets', alpha: 0.95, period: 0, at: [10, 30], channels: 1 }).status).toBe(0);
    const knobs = { variant: 'simple_gla', causal: true };
    expect(lab.matrix(knobs).status).toBe(0);
    const M = lab.M.slice();
    let across = 0, within = 0;
    const block = (t) => (t >= 30 ? 2 : t >= 10 ? 1 : 0);
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) {
      if (block(i) !== block(j)) across = Math.max(across, Math.abs(M[i * n + j]));
      else within = Math.max(within, Math.abs(M[i * n + j]));
    }
    expect(across).toBeLessThan(1e-12 * within);
    expect(within).toBeGreaterThan(0);
    const O = new Float64Array(n * d), V = lab.V;
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let c = 0; c < d; c++) O[i * d + c] += M[i * n + j] * V[j * d + c];
    for (const path of ['linear', 'recurrent', 'chunkwise']) {
      expect(lab.path({ ...knobs, chunk: 7 }, path).status, path).toBe(0);
      const got = lab.O;
      let err = 0, top = 0;
      for (let e = 0; e < n * d; e++) { err = Math.max(err, Math.abs(got[e] - O[e])); top = Math.max(top, Math.abs(O[e])); }
      expect(err / top, path).toBeLessThan(1e-5);
    }
    lab.free();
  });

  it("the constant gate is the library's own constant case: the same matrix as the knob decay alone, bit for bit", () => {
    const lab = av.lab(n, d);
    lab.generate('gaussian', 1, 4);
    const knobs = { variant: 'gdn', causal: true, decay: 0.9, beta: 0.7 };
    expect(lab.matrix(knobs).status).toBe(0);
    const plain = lab.M.slice();
    expect(applyGates(lab, { kind: 'constant', alpha: 0.9, perChannel: false, beta: { kind: 'constant', value: 0.7 } }).status).toBe(0);
    expect(lab.gates().g).toBeNull();
    expect(lab.matrix(knobs).status).toBe(0);
    expect(lab.M.slice()).toEqual(plain);
    lab.free();
  });

  it('gla with per-channel gates against a float64 reference from docs/gated.md (M_ij = Σ_c q̃_ic k_jc Γ_ijc)', () => {
    const lab = av.lab(n, d);
    lab.generate('gaussian', 1, 5);
    expect(lab.generateGates({ kind: 'uniform', lo: 0.6, hi: 1, seed: 2, channels: d }).status).toBe(0);
    expect(lab.matrix({ variant: 'gla', causal: true }).status).toBe(0);
    const { g } = lab.gates(), Q = lab.Q, K = lab.K, M = lab.M, scale = 1 / Math.sqrt(d);
    let err = 0, top = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) {
      let m = 0;
      for (let c = 0; c < d; c++) {
        let seg = 0;
        for (let l = j + 1; l <= i; l++) seg += g[l * d + c];
        m += scale * Q[i * d + c] * K[j * d + c] * Math.exp(seg);
      }
      err = Math.max(err, Math.abs(M[i * n + j] - m)); top = Math.max(top, Math.abs(m));
    }
    expect(err / top).toBeLessThan(1e-5);
    lab.free();
  });

  it('a gate above 0 or a β outside (0, 2] is refused with one sentence, and nothing is computed', () => {
    const lab = av.lab(n, d);
    lab.generate('gaussian', 1, 6);
    const g = new Float32Array(n).fill(-0.1); g[7] = 0.5;
    expect(lab.setGates({ g, channels: 1 }).status).toBe(0);
    const r = lab.matrix({ variant: 'simple_gla', causal: true });
    expect(r.status).toBe(av.STATUS.ERR_GATES);
    expect(r.message).not.toMatch(/\n/);
    expect(lab.generateGates({ kind: 'uniform', lo: 0.5, hi: 1.5, channels: 1 }).status).toBe(av.STATUS.ERR_KNOB);
    lab.free();
  });
});

/** The CLI knows the gate inputs (src/cli: --gates, --betas) once the CLI's helper has landed them. */
const cliHasGates = existsSync(CLI) && /--gates/.test(execFileSync(CLI, ['matrix', '--help'], { encoding: 'utf8' }).toString());

describe('the engine with gates: the WebAssembly matrix is the native CLI\'s with the same gates.npy', () => {
  const cases = [
    ['gdn', '#v=1&variant=gdn&n=64&d=16&gate=resets&decay=0.97&gate_period=20&gate_at=7&beta_gen=uniform&beta_lo=0.3&beta_hi=1.5'],
    ['kda', '#v=1&variant=kda&n=48&d=8&gate=slow&gate_lo=0.7&gate_hi=0.99&gate_wave=16&beta_gen=projection&beta_hi=2'],
    ['gla', '#v=1&variant=gla&n=40&d=8&gate=projection&gate_seed=4'],
    ['simple_gla', '#v=1&variant=simple_gla&n=64&d=16&gate=mamba2&gate_A=-2&gate_dt=0.1&scale=4'],
    ['fox', '#v=1&variant=fox&n=64&d=16&gate=uniform&gate_lo=0.8&gate_hi=1'],
    ['dplr', '#v=1&variant=dplr&n=48&d=16&scale=4&gate=uniform&gate_lo=0.55&gate_hi=1&dplr_ab=rwkv7&dplr_icl=0.7'],
  ];
  for (const [name, hash] of cases) {
    it.skipIf(!cliHasGates)(name, () => {
      const st = schema.fromHash(hash).state, req = schema.requestOf(st), e = new Engine(av);
      e.ensure(req);
      expect(e.status.matrix.status).toBe(0);
      const { files } = e.exportArrays(req);
      const put = (what) => { const f = files.find((x) => x.what === what); if (!f) return null; const p = join(tmp, `${name}-${what}.npy`); writeFileSync(p, npyBytes(f.data, f.shape)); return p; };
      const args = ['matrix', '--variant', name, '--q', put('Q'), '--k', put('K'), '--gates', put('gates'), '--causal',
        '--scale', String(req.knobs.scale), '-o', join(tmp, `${name}-M.npy`)];
      if (put('betas')) args.push('--betas', join(tmp, `${name}-betas.npy`));
      if (req.gates.ab) args.push('--a', put('a'), '--b', put('b'));
      execFileSync(CLI, args);
      const M = readNpy(join(tmp, `${name}-M.npy`)).data, W = e.lab.M;
      let err = 0, top = 0;
      for (let i = 0; i < M.length; i++) { err = Math.max(err, Math.abs(M[i] - W[i])); top = Math.max(top, Math.abs(M[i])); }
      expect(err / top).toBeLessThan(2e-5);
      e.free();
    });
  }
  it.skipIf(!cliHasGates)("RWKV-7's a, b from the page's K are the CLI's preset rwkv7 (av_rwkv7_vectors in both builds)", () => {
    const st = schema.fromHash('#v=1&variant=dplr&n=40&d=16&scale=4&gate=slow&gate_lo=0.6&gate_hi=1&dplr_ab=rwkv7&dplr_icl=0.3').state;
    const req = schema.requestOf(st), e = new Engine(av);
    e.ensure(req);
    const { files } = e.exportArrays(req);
    const put = (what) => { const f = files.find((x) => x.what === what); const p = join(tmp, `rwkv7-${what}.npy`); writeFileSync(p, npyBytes(f.data, f.shape)); return p; };
    execFileSync(CLI, ['matrix', '--variant', 'rwkv7', '--q', put('Q'), '--k', put('K'), '--gates', put('gates'), '--a-icl', '0.3', '--causal', '-o', join(tmp, 'rwkv7-M.npy')]);
    const M = readNpy(join(tmp, 'rwkv7-M.npy')).data, W = e.lab.M;
    let err = 0, top = 0;
    for (let i = 0; i < M.length; i++) { err = Math.max(err, Math.abs(M[i] - W[i])); top = Math.max(top, Math.abs(M[i])); }
    expect(err / top).toBeLessThan(2e-5);
    e.free();
  });
  it('says when the CLI cannot be asked (no --gates yet): these cases are then not run', () => {
    if (!cliHasGates) console.warn('SKIPPED: the CLI has no --gates yet (src/cli); the engine-against-CLI cases did not run');
    expect(typeof cliHasGates).toBe('boolean');
  });
});

describe('the engine keeps the gates with the inputs', () => {
  it("Mamba-2's gates scale K (k = Δ·B) and so change the reference; other gates leave it", () => {
    const e = new Engine(av);
    const at = (hash) => { const req = schema.requestOf(schema.fromHash(hash).state); e.ensure(req); return { req, K: e.lab.K.slice(), A: e.lab.A.slice() }; };
    const base = at('#v=1&variant=simple_gla&n=32&d=8&gate=uniform');
    const m2 = at('#v=1&variant=simple_gla&n=32&d=8&gate=mamba2&gate_A=-1&gate_dt=0.05');
    expect(m2.K).not.toEqual(base.K);
    expect(m2.A).not.toEqual(base.A);
    const back = at('#v=1&variant=simple_gla&n=32&d=8&gate=slow');
    expect(back.K).toEqual(base.K);
    const g = e.gates(back.req);
    expect(g.kind).toBe('slow');
    expect(g.channels).toBe(1);
    e.free();
  });

  it('the frame carries the gates the strip shows, the snapshot their summary', () => {
    const e = new Engine(av);
    const req = schema.requestOf(schema.fromHash('#v=1&variant=kda&n=64&d=16&gate=resets&decay=0.99&gate_period=16&beta_gen=uniform').state);
    const f = e.frame(req);
    expect(f.status.matrix.status).toBe(0);
    expect(f.gates.resets).toEqual([16, 32, 48]);
    expect(f.gates.channels).toBe(16);
    expect(f.gates.image.rows).toBe(16);
    const part = gatesPart(f.gates);
    expect(part).toEqual({ kind: 'resets', knobs: { alpha: 0.99, period: 16, at: [], rate: 0 }, channels: 16, n: 64,
      min: -30, max: expect.closeTo(Math.log(0.99), 6), resets: [16, 32, 48],
      beta: { kind: 'uniform', knobs: { lo: 0.2, hi: 1, seed: 1 }, min: expect.any(Number), max: expect.any(Number) }, ab: null });
    expect(part.beta.min).toBeGreaterThanOrEqual(0.2);
    expect(part.beta.max).toBeLessThanOrEqual(1);
    const json = JSON.parse(stateJson({ state: {}, readouts: {}, tokens: null, gates: part }));
    expect(json.gates.resets).toEqual([16, 32, 48]);
    expect(JSON.parse(stateJson({ state: {}, readouts: {}, tokens: null, gates: null }))).not.toHaveProperty('gates');
    const plain = e.frame(schema.requestOf(schema.fromHash('#v=1&variant=elu&n=64&d=16').state));
    expect(plain.gates).toBeNull();
    e.free();
  });

  it('a draft stands a block of tokens by the sum of their log-gates', () => {
    const g = Float32Array.from({ length: 10 }, (_, t) => -0.1 * (t + 1));
    const dg = draftGates({ g, channels: 1, beta: Float32Array.from({ length: 10 }, (_, t) => t / 10), a: null, b: null }, 10, 3, 4);
    // drafted tokens 0, 3, 6, 9: token 3 stands for 1..3, 6 for 4..6, 9 for 7..9
    expect([...dg.g].map((x) => +x.toFixed(5))).toEqual([0, -0.9, -1.8, -2.7]);
    expect([...dg.beta].map((x) => +x.toFixed(5))).toEqual([0, 0.3, 0.6, 0.9]);
  });
});

describe('the gate strip draws the heatmap\'s columns', () => {
  it('the whole matrix by the frame\'s blocks, a zoom by its window\'s', () => {
    expect(stripColumns(1000, 4)).toEqual({ c0: 0, c1: 999, b: 4, cols: 250 });
    expect(stripColumns(1000, 4, { r0: 100, r1: 199, c0: 300, c1: 349 })).toEqual({ c0: 300, c1: 349, b: 1, cols: 50 });
    const g = new Float32Array(8).fill(Math.log(0.5)); g[5] = -30;
    const s = gatesSummary({ g, channels: 1, beta: null }, { kind: 'resets', alpha: 0.5 }, 8);
    expect(s.resets).toEqual([5]);
    const c = stripCells(s, stripColumns(8, 2));
    expect([...c.reset]).toEqual([0, 0, 1, 0]);
    expect(c.alpha[0]).toBeCloseTo(0.5, 6);
    expect(gateIndex(1)).toBe(255);
    expect(gateIndex(Math.exp(-30))).toBe(0);
    expect(gateIndex(0.99)).toBeGreaterThan(gateIndex(0.9));
  });
});

describe('the link carries the gates', () => {
  const { fromHash, toHash, requestOf, shown, BY_NAME } = schema;
  it('round-trips the generator and its knobs', () => {
    const hash = '#v=1&variant=gdn&gate=resets&decay=0.99&gate_period=16&gate_at=3,40&gate_rate=0.02&gate_seed=7&beta_gen=uniform&beta_lo=0.1&beta_hi=1.9&beta_seed=3';
    const { state, problems } = fromHash(hash);
    expect(problems).toEqual([]);
    const again = fromHash(`#${toHash(state)}`).state;
    expect(again).toEqual(state);
    expect(requestOf(state).gates).toEqual({ kind: 'resets', perChannel: false, alpha: 0.99, period: 16, at: [3, 40], rate: 0.02, seed: 7,
      beta: { kind: 'uniform', lo: 0.1, hi: 1.9, seed: 3 } });
    for (const kind of ['constant', 'uniform', 'slow', 'projection', 'mamba2', 'file']) {
      const st = fromHash(`#v=1&variant=kda&gate=${kind}`).state;
      expect(fromHash(`#${toHash(st)}`).state).toEqual(st);
      expect(requestOf(st).gates.kind).toBe(kind);
      expect(requestOf(st).gates.perChannel).toBe(true);
    }
  });

  it('a request reads only its generator\'s knobs, and none for a variant outside the gated families', () => {
    const a = fromHash('#v=1&variant=gla&gate=slow&gate_period=8').state, b = fromHash('#v=1&variant=gla&gate=slow&gate_period=99').state;
    expect(requestOf(a)).toEqual(requestOf(b));
    expect(requestOf(fromHash('#v=1&variant=elu&gate=resets').state).gates).toBeNull();
    expect(requestOf(fromHash('#v=1&variant=gla&gate=uniform&gate_lo=0.9&gate_hi=0.5').state).gates).toMatchObject({ lo: 0.5, hi: 0.9 });
    expect(requestOf(fromHash('#v=1&variant=gdn&gate=resets&gate_at=5,70&n=64').state).gates.at).toEqual([5]); // 70 ≥ n
  });

  it('shows the constant gate (decay) and the constant β only while the generator reads them', () => {
    const st = (h) => fromHash(h).state;
    expect(shown(BY_NAME.decay, st('#v=1&variant=gdn&gate=constant'))).toBe(true);
    expect(shown(BY_NAME.decay, st('#v=1&variant=gdn&gate=resets'))).toBe(true);
    expect(shown(BY_NAME.decay, st('#v=1&variant=gdn&gate=uniform'))).toBe(false);
    expect(shown(BY_NAME.decay, st('#v=1&variant=elu&gate=uniform&causal=1'))).toBe(true);
    expect(shown(BY_NAME.beta, st('#v=1&variant=gdn&beta_gen=uniform'))).toBe(false);
    expect(shown(BY_NAME.beta_gen, st('#v=1&variant=gla'))).toBe(false);
    expect(shown(BY_NAME.gate_period, st('#v=1&variant=gla&gate=resets'))).toBe(true);
    expect(shown(BY_NAME.gate_period, st('#v=1&variant=gla&gate=slow'))).toBe(false);
  });

  it('bad values keep the rest and say one sentence each', () => {
    const { state, problems } = fromHash('#v=1&variant=gdn&gate=sometimes&gate_at=3,x,-2&gate_rate=7&beta_gen=uniform');
    expect(state.gate).toBe('constant');
    expect(state.gate_at).toBe('3');
    expect(state.gate_rate).toBe(1);
    expect(state.beta_gen).toBe('uniform');
    expect(problems).toHaveLength(3);
    for (const p of problems) expect(p).toMatch(/^gate(_at|_rate)?: [^\n]+$/);
  });
});
