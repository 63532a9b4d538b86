// mechanisms-gated.test.mjs: the recurrence stepper of the gated families (lab.stepper → gatedStepper, compute/
// mechanisms.mjs stepFrame) in the real wasm module: each step's o_t against the matrix's row, the state against
// a float64 recurrence written here from docs/gated.md (not from the kernels), and what a reset and β show.
import { describe, it, expect, beforeAll } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { stepFrame } from '../../web/compute/mechanisms.mjs';

const ROOT = new URL('../../', import.meta.url);
let av;
beforeAll(async () => { av = await loadAttnviz({ simdUrl: new URL('build/wasm/attnviz.wasm', ROOT), scalarUrl: new URL('build/wasm/attnviz-scalar.wasm', ROOT) }); });

/** docs/gated.md's recurrences in float64: S_t and u_t (gdn, kda) or x_t (dplr) after each token, o_t. */
function reference(family, Q, K, V, n, d, dv, { g, ch, beta, a, b, scale, l2norm }) {
  const S = new Float64Array(d * dv), out = [];
  const nrm = (x) => { if (!l2norm) return Array.from(x); const f = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) + 1e-6); return Array.from(x, (v) => v * f); };
  for (let t = 0; t < n; t++) {
    const q = nrm(Q.subarray(t * d, (t + 1) * d)).map((v) => v * scale), k = nrm(K.subarray(t * d, (t + 1) * d));
    const v = V.subarray(t * dv, (t + 1) * dv), al = (c) => Math.exp(g[t * ch + (ch === 1 ? 0 : c)]);
    let x = null, u = null;
    if (family === 'dplr') { // x_t = S_{t−1}ᵀa_t, before the decay
      x = new Float64Array(dv);
      for (let e = 0; e < dv; e++) for (let c = 0; c < d; c++) x[e] += S[c * dv + e] * a[t * d + c];
    }
    for (let c = 0; c < d; c++) for (let e = 0; e < dv; e++) S[c * dv + e] *= al(c);
    if (family === 'gdn' || family === 'kda') {
      u = new Float64Array(dv);
      for (let e = 0; e < dv; e++) { let s = 0; for (let c = 0; c < d; c++) s += S[c * dv + e] * k[c]; u[e] = beta[t] * (v[e] - s); }
      for (let c = 0; c < d; c++) for (let e = 0; e < dv; e++) S[c * dv + e] += k[c] * u[e];
    } else {
      for (let c = 0; c < d; c++) for (let e = 0; e < dv; e++) S[c * dv + e] += k[c] * v[e] + (x ? b[t * d + c] * x[e] : 0);
    }
    const o = new Float64Array(dv);
    for (let e = 0; e < dv; e++) for (let c = 0; c < d; c++) o[e] += S[c * dv + e] * q[c];
    out.push({ S: Float64Array.from(S), u, x, o });
  }
  return out;
}

const rel = (a, b) => { let m = 0, s = 0; for (let i = 0; i < a.length; i++) { m = Math.max(m, Math.abs(a[i] - b[i])); s = Math.max(s, Math.abs(b[i])); } return m / Math.max(s, 1e-30); };

function gatedLab(n, d, dv, seed, gates) {
  const lab = av.lab(n, d, dv);
  lab.generate('gaussian', 0.8, seed);
  if (gates.kind) expect(lab.generateGates(gates).status).toBe(0);
  else expect(lab.setGates(gates).status).toBe(0);
  return lab;
}

describe('the gated stepper', () => {
  const n = 33, d = 8, dv = 8; // lab.generate fills V as n×d
  const cases = [
    ['simple_gla', { kind: 'uniform', lo: 0.7, hi: 1, seed: 4, channels: 1 }],
    ['gla', { kind: 'uniform', lo: 0.7, hi: 1, seed: 4, channels: d }],
    ['gdn', { kind: 'resets', alpha: 0.95, at: [10, 20], channels: 1, beta: { kind: 'uniform', lo: 0.2, hi: 1.5, seed: 5 } }],
    ['kda', { kind: 'uniform', lo: 0.6, hi: 1, seed: 6, channels: d, beta: { kind: 'uniform', lo: 0.2, hi: 1, seed: 7 } }],
    ['dplr', null],
  ];
  for (const [family, spec] of cases) {
    it(`${family}: every step's o_t is the matrix's row; S, u_t, x_t are docs/gated.md's recurrence`, () => {
      let lab;
      if (family === 'dplr') { // a, b of RWKV-7's kind: a = −κ̂, b = κ̂·0.5, per-channel gates
        lab = av.lab(n, d, dv);
        lab.generate('gaussian', 0.8, 9);
        const K = lab.K, a = new Float32Array(n * d), b = new Float32Array(n * d), g = new Float32Array(n * d);
        for (let t = 0; t < n; t++) {
          const r = K.subarray(t * d, (t + 1) * d), f = 1 / Math.hypot(...r);
          for (let c = 0; c < d; c++) { a[t * d + c] = -r[c] * f; b[t * d + c] = 0.5 * r[c] * f; g[t * d + c] = Math.log(0.6 + 0.4 * ((t * 7 + c * 3) % 10) / 10); }
        }
        expect(lab.setGates({ g, channels: d, a, b }).status).toBe(0);
      } else lab = gatedLab(n, d, dv, 3, spec);
      try {
        const { stepper, status } = lab.stepper({ variant: family });
        expect(status).toBeGreaterThanOrEqual(0);
        expect(stepper.kind).toBe('gated');
        const held = lab.gates();
        const ref = reference(family, lab.Q, lab.K, lab.V, n, d, dv, {
          g: held.g, ch: held.channels, beta: held.beta ?? new Float32Array(n).fill(1), a: held.a, b: held.b,
          scale: stepper.scale, l2norm: stepper.l2norm,
        });
        expect(stepper.scale).toBeCloseTo(1 / Math.sqrt(d), 12);
        expect(stepper.l2norm).toBe(family === 'gdn' || family === 'kda');
        let worst = 0;
        for (let t = 1; t <= n; t++) {
          const f = stepFrame(stepper, t);
          worst = Math.max(worst, f.diff / Math.max(1, f.rowMax));
          expect(f.S.length).toBe(d * dv);
          expect(f.stateBytes).toBe(4 * d * dv);
          expect(rel(f.S, ref[t - 1].S)).toBeLessThan(1e-6); // float32 inputs into a float64 state
          expect(rel(f.o, ref[t - 1].o)).toBeLessThan(1e-5);
          if (ref[t - 1].u) expect(rel(f.u, ref[t - 1].u)).toBeLessThan(1e-6);
          if (ref[t - 1].x && t > 1) expect(rel(f.x, ref[t - 1].x)).toBeLessThan(1e-6);
          expect(f.alpha.length).toBe(held.channels);
        }
        expect(worst).toBeLessThan(2e-5);
        // the library's own recurrent path (av_recurrent) over the same gates: the same rows
        const frames = Array.from({ length: n }, (_, t) => Float32Array.from(stepFrame(stepper, t + 1).o));
        expect(lab.recurrent({ variant: family, causal: true }).status).toBeGreaterThanOrEqual(0);
        const O = lab.O.slice();
        for (let t = 0; t < n; t++) expect(rel(frames[t], O.subarray(t * dv, (t + 1) * dv))).toBeLessThan(1e-6);
        const back = stepFrame(stepper, 5), again = stepFrame(stepper, 5);
        expect(Array.from(back.S)).toEqual(Array.from(again.S));
      } finally { lab.free(); }
    });
  }

  it('gdn at a reset token: every row cleared, u_t = β_t·v_t, the state norm drops', () => {
    const lab = gatedLab(40, 8, 8, 2, { kind: 'resets', alpha: 1, at: [24], channels: 1 });
    try {
      const { stepper } = lab.stepper({ variant: 'gdn', beta: 1 });
      const before = stepFrame(stepper, 24);
      expect(before.reset).toBe(false);
      expect(before.resetRows).toEqual([]);
      const f = stepFrame(stepper, 25); // token 24 read
      expect(f.reset).toBe(true);
      expect(f.resetRows).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(f.alpha[0]).toBeCloseTo(Math.exp(-30), 25);
      for (let e = 0; e < 8; e++) expect(f.u[e]).toBeCloseTo(f.beta * f.v[e], 6); // S′ ≈ 0: nothing to correct
      expect(f.stateNorm).toBeLessThan(0.6 * f.prevNorm);
      expect(f.diff / Math.max(1, f.rowMax)).toBeLessThan(2e-5);
    } finally { lab.free(); }
  });

  it('kda per channel: only the channels whose gate reset are cleared', () => {
    const n = 30, d = 8, g = new Float32Array(n * d).fill(Math.log(0.9));
    for (const c of [1, 4, 5]) g[12 * d + c] = -30;
    const lab = gatedLab(n, d, d, 5, { g, channels: d });
    try {
      const { stepper } = lab.stepper({ variant: 'kda' });
      const f = stepFrame(stepper, 13);
      expect(f.resetRows).toEqual([1, 4, 5]);
      // S_t = Diag(α)S_{t−1} + k̃ uᵀ: a cleared row holds only the new write, the others the decayed old state too
      for (let c = 0; c < d; c++) {
        for (let e = 0; e < d; e++) {
          const write = f.kt[c] * f.u[e];
          const kept = [1, 4, 5].includes(c) ? 0 : 0.9 * f.Sprev[c * d + e];
          expect(f.S[c * d + e]).toBeCloseTo(kept + write, 5);
        }
      }
      expect(stepFrame(stepper, 12).resetRows).toEqual([]);
    } finally { lab.free(); }
  });

  it('fox keeps a cache with each entry\'s accumulated bias, its row the matrix\'s', () => {
    const n = 20, g = new Float32Array(n);
    for (let t = 0; t < n; t++) g[t] = -0.1 * (t % 3);
    const lab = gatedLab(n, 8, 8, 7, { g, channels: 1 });
    try {
      const { stepper } = lab.stepper({ variant: 'fox' });
      expect(stepper.kind).toBe('cache');
      const f = stepFrame(stepper, 12);
      expect(f.S).toBeUndefined();
      expect(f.stateBytes).toBeNull();
      expect(f.bias.length).toBe(12);
      for (let j = 0; j < 12; j++) { let s = 0; for (let l = j + 1; l <= 11; l++) s += g[l]; expect(f.bias[j]).toBeCloseTo(s, 6); }
      expect(f.diff / Math.max(1, f.rowMax)).toBeLessThan(2e-5);
    } finally { lab.free(); }
  });
});

describe('memory collisions with the gated families', () => {
  it('gdn with a reset: the pairs written before it are forgotten (error ≈ 1), the native CLI agrees', async () => {
    const { recallPoint } = await import('../../web/compute/mechanisms.mjs');
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { npyBytes } = await import('../../web/io/export.mjs');
    const N = 32, d = 16, gates = { kind: 'resets', alpha: 0.99, period: 0, at: [20, 40] }; // 40 ≥ N: dropped
    const p = recallPoint(av, { id: 'gates', knobs: { variant: 'gdn', beta: 1 }, gates }, N, d, 3);
    expect(p.status).toBe(0);
    expect(p.forgotten.at).toBe(20);
    // nothing of their values is left: what their keys read is the later pairs' crosstalk, error ≥ 1
    expect(p.forgotten.before).toBeGreaterThan(0.95);
    expect(p.forgotten.after).toBeLessThan(0.7);
    const plain = recallPoint(av, { id: 'gdn', knobs: { variant: 'gdn', beta: 1, decay: 0.99 } }, N, d, 3);
    expect(plain.forgotten).toBeUndefined();
    expect(plain.mean).toBeLessThan(p.mean);
    // the same gates natively: attnviz recall --gates G.npy (N values: the reset at 20, 0.99 elsewhere)
    const tmp = mkdtempSync(join(tmpdir(), 'attnviz-mech-gated-'));
    const g = new Float32Array(N).fill(Math.log(0.99)); g[20] = -30;
    writeFileSync(join(tmp, 'g.npy'), npyBytes(g, [N]));
    const cli = JSON.parse(execFileSync(new URL('build/native/attnviz', ROOT).pathname,
      ['recall', '--variant', 'gdn', '--pairs', N, '--d', d, '--seeds', 3, '--beta', 1, '--gates', join(tmp, 'g.npy')].map(String), { encoding: 'utf8' }));
    expect(cli.recall_error_mean).toBeCloseTo(p.mean, 5);
  });
  it('kda with per-channel gates, gla and fox recall like the others; at N = 1 every memory is exact', async () => {
    const { recallPoint } = await import('../../web/compute/mechanisms.mjs');
    for (const m of [
      { id: 'kda', knobs: { variant: 'kda', beta: 1 }, gates: { kind: 'uniform', lo: 0.9, hi: 1, seed: 1, perChannel: true } },
      { id: 'gla', knobs: { variant: 'gla', decay: 0.95 } },
      { id: 'fox', knobs: { variant: 'fox', decay: 0.95, scale: 8 } },
    ]) {
      const one = recallPoint(av, m, 1, 16, 2);
      expect(one.status).toBe(0);
      if (m.id !== 'fox') expect(one.mean).toBeLessThan(1e-5); else expect(one.mean).toBeLessThan(1e-6);
      const many = recallPoint(av, m, 64, 16, 2);
      expect(many.mean).toBeGreaterThan(one.mean);
      expect(Number.isFinite(many.mean)).toBe(true);
    }
  });
});
