// The data of the seed article's two figures (web/render/spectrum.mjs truncationCurves, articleChartData),
// checked from the definitions: σᵢ², and the squared Frobenius error of the rank-D truncated SVD, computed
// entry by entry from a matrix built with those singular values.
import { describe, it, expect } from 'vitest';
import { truncationCurves, articleChartData } from '../../web/render/spectrum.mjs';

/** A small seeded generator (mulberry32) and a standard normal from it (Box–Muller). */
function rng(seed) {
  let a = seed >>> 0;
  const u = () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/** k orthonormal columns of length n (Gram–Schmidt on normal vectors), as an array of columns. */
function orthonormal(n, k, normal) {
  const cols = [];
  while (cols.length < k) {
    const v = Array.from({ length: n }, normal);
    for (const c of cols) { const dot = c.reduce((s, x, i) => s + x * v[i], 0); for (let i = 0; i < n; i++) v[i] -= dot * c[i]; }
    const norm = Math.hypot(...v);
    cols.push(v.map((x) => x / norm));
  }
  return cols;
}

/** ‖M − M_D‖_F² entry by entry, M = Σ σᵢ uᵢ vᵢᵀ and M_D its first D terms. */
function truncationErrorByEntries(sv, U, V, D) {
  const n = U[0].length, m = V[0].length;
  let e = 0;
  for (let r = 0; r < n; r++) for (let c = 0; c < m; c++) {
    let rest = 0;
    for (let i = D; i < sv.length; i++) rest += sv[i] * U[i][r] * V[i][c];
    e += rest * rest;
  }
  return e;
}

describe('truncationCurves: the article\'s two curves from σ', () => {
  it('σᵢ² and err(D) = ‖M − M_D‖_F², D = 0…k, as a matrix with these σ gives them', () => {
    const normal = rng(7);
    const sv = [9, 4.5, 3, 1.25, 0.5, 0.125];
    const U = orthonormal(10, sv.length, normal), V = orthonormal(8, sv.length, normal);
    const { sq, err } = truncationCurves(sv);
    expect(sq).toEqual(sv.map((s) => s * s));
    expect(err.length).toBe(sv.length + 1);
    for (let D = 0; D <= sv.length; D++) expect(err[D]).toBeCloseTo(truncationErrorByEntries(sv, U, V, D), 9);
    expect(err[0]).toBeCloseTo(sv.reduce((s, x) => s + x * x, 0), 12); // ‖M‖_F²
  });

  it('a rank-r spectrum (zeros after r) has err(D) exactly 0 from D = r, whatever the sizes', () => {
    const sv = [1e3, 7, 0.3, 1e-5, 0, 0, 0, 0];
    const { err } = truncationCurves(sv);
    expect(err.slice(4)).toEqual([0, 0, 0, 0, 0]);
    // summed from the tail: the smallest σ² survives beside σ₁² = 1e6 (a running difference would lose it)
    expect(err[3]).toBe(1e-5 * 1e-5);
  });

  it('from the top k σ̂ only: err(D) = ‖M‖_F² − Σ_{i≤D} σ̂ᵢ², an upper bound of the true error', () => {
    const full = [5, 3, 2, 1, 0.5];
    const truth = truncationCurves(full).err;
    const top = [4.9, 2.9]; // each σ̂ᵢ ≤ σᵢ, as the randomized route gives them
    const { sq, err } = truncationCurves(top, truth[0]);
    expect(sq).toEqual([4.9 ** 2, 2.9 ** 2]);
    expect(err[0]).toBe(truth[0]);
    expect(err[1]).toBeCloseTo(truth[0] - 4.9 ** 2, 12);
    expect(err[2]).toBeCloseTo(truth[0] - 4.9 ** 2 - 2.9 ** 2, 12);
    for (let D = 0; D <= 2; D++) expect(err[D]).toBeGreaterThanOrEqual(truth[D]);
  });
});

describe('articleChartData: what the two charts draw', () => {
  const S = { sv: [6, 3, 2, 0, 0, 0, 0, 0, 0, 0], floor: 1e-9, partial: false };
  const E = { sv: [20, 5, 4, 3.5, 3, 2.5, 2, 1.5, 1, 0.5], floor: 1e-6, partial: false };

  it('each curve over its own ‖M‖_F²; σ² at or below the floor² a gap; the rank of QKᵀ', () => {
    const d = articleChartData({ S, E });
    const totS = 36 + 9 + 4, totE = E.sv.reduce((s, x) => s + x * x, 0);
    expect(d.rankS).toBe(3);
    expect(d.spectrum.x[0]).toBe(1);
    expect(d.spectrum.S.slice(0, 4)).toEqual([36 / totS, 9 / totS, 4 / totS, null]);
    expect(d.spectrum.E[0]).toBeCloseTo(400 / totE, 15);
    expect(d.error.x.slice(0, 2)).toEqual([0, 1]);
    expect(d.error.S[0]).toBe(1);
    expect(d.error.S[3]).toBe(0);
    expect(d.error.E[3]).toBeCloseTo((totE - 400 - 25 - 16) / totE, 12);
    // a scalar factor on every σ (exp(QKᵀ − max) = e^{−max}·exp(QKᵀ)) changes neither chart
    const scaled = articleChartData({ S, E: { ...E, sv: E.sv.map((s) => s * Math.exp(-30)), floor: E.floor * Math.exp(-30) } });
    for (let i = 0; i < 10; i++) expect(scaled.spectrum.E[i]).toBeCloseTo(d.spectrum.E[i], 12);
    for (let D = 0; D <= 10; D++) expect(scaled.error.E[D]).toBeCloseTo(d.error.E[D], 12);
  });

  it('the axis ends where the last curve does; a missing exp(QKᵀ) is no curve, not zeros', () => {
    const d = articleChartData({ S, E: null });
    expect(d.spectrum.x.length).toBe(6); // twice QKᵀ's rank: its ceiling in view with room past it
    expect(d.spectrum.E.every((v) => v === null)).toBe(true);
    expect(d.error.E.every((v) => v === null)).toBe(true);
    expect(d.error.x.length).toBe(7);
  });
});
