// spectral.mjs: the readouts that depend on the singular values alone, computed from σ in the compute
// layer (web/compute/engine.mjs) so that the library's av_readouts need not re-read all n² entries of M for them.
// Pure; no DOM.
import { SPECTRAL_KEYS } from '../wasm/readout-info.mjs';

/** Readouts that need the spectrum (the registry's kind "spectral"; they arrive from the worker, after the
 * heatmaps): filled when the first module loads (web/wasm/readout-info.mjs). */
export { SPECTRAL_KEYS };

/**
 * The spectral readouts of docs/readouts.md from singular values (the same definitions and order of sums
 * as the library's av_readouts, which would also re-read all n² entries of M for them). When `sv` holds
 * only the top k (partial: the randomized route, web/compute/topk.mjs), `fro2` = ‖M‖_F² completes the sums,
 * `sigma1Upper` (≥ σ₁) sets the tolerances, readouts that need every σ are null with a reason, and each
 * number that is then a bound carries `<key>_bound` ("lower" | "upper"): docs/readouts.md, "Bounds and
 * estimates", says why each is one.
 */
export function spectralReadouts(sv, floor, n, { partial = false, fro2 = null, sigma1Upper = null, reason = 'no singular values were given' } = {}) {
  const out = {};
  const undefinedAll = (reason) => { for (const k of SPECTRAL_KEYS) { out[k] = null; out[`${k}_reason`] = reason; } return out; };
  if (!sv || !sv.length) return undefinedAll(reason);
  for (let i = 0; i < sv.length; i++) if (!Number.isFinite(sv[i])) return undefinedAll('an input holds NaN or Inf');
  if (!Number.isFinite(floor)) return undefinedAll('an input holds NaN or Inf');
  if (partial && fro2 === null) throw new TypeError('spectralReadouts: a partial spectrum needs fro2 = ‖M‖_F²');
  floor = floor > 0 ? floor : 0;
  const s1 = sv[0];
  let sum2 = 0, sum1 = 0;
  for (let i = 0; i < sv.length; i++) { sum2 += sv[i] * sv[i]; sum1 += sv[i]; }
  const total2 = fro2 ?? sum2;
  // the top k are each ≤ the true σᵢ (a projection of M), so σ₁ itself is only known from below; the
  // tolerances take an upper bound of σ₁ instead, which keeps every count a lower bound (a zero M is exact)
  const bounds = partial && total2 > 0;
  const top = bounds ? Math.max(s1, sigma1Upper ?? Math.sqrt(total2)) : s1;
  const mark = (k, side) => { if (bounds && out[k] !== null) out[`${k}_bound`] = side; };
  out.sigma1 = s1;
  mark('sigma1', 'lower');
  out.noise_floor = floor;
  // its own SVD of a block of M: the caller (web/compute/engine.mjs) fills it in
  out.semiseparable_rank = null;
  out.semiseparable_rank_reason = 'the block M[h:n, 0:h] was not decomposed';
  const tol = top * n * 2 ** -23;
  out.rank_tol = tol;
  mark('rank_tol', 'upper');
  const count = (t) => { let r = 0; const c = Math.max(t, floor); for (let i = 0; i < sv.length; i++) if (sv[i] > c) r++; return r; };
  out.rank = count(tol);
  out['rank_rel_1e-3'] = count(1e-3 * top);
  out['rank_rel_1e-2'] = count(1e-2 * top);
  for (const k of ['rank', 'rank_rel_1e-3', 'rank_rel_1e-2']) mark(k, 'lower');
  let acc = 0, r99 = total2 > 0 ? null : 0; // a zero matrix needs no singular value (as readouts.c)
  for (let i = 0; total2 > 0 && i < sv.length; i++) { acc += sv[i] * sv[i]; if (acc >= 0.99 * total2) { r99 = i + 1; break; } }
  out.rank_energy_99 = r99;
  if (r99 === null) out.rank_energy_99_reason = `beyond the top ${sv.length} singular values computed`;
  mark('rank_energy_99', 'upper'); // the top r σ̂ hold at most the true top r's energy
  if (!(s1 > 0)) {
    for (const k of ['effective_rank', 'stable_rank']) { out[k] = null; out[`${k}_reason`] = 'the matrix is zero (all singular values are 0)'; }
    return out;
  }
  out.stable_rank = total2 / (s1 * s1);
  mark('stable_rank', 'upper'); // the exact ‖M‖_F² over σ̂₁² ≤ σ₁²
  if (partial) {
    out.effective_rank = null;
    out.effective_rank_reason = `needs every singular value; only the top ${sv.length} were computed at this n`;
  } else {
    let h = 0;
    for (let i = 0; i < sv.length; i++) { const p = sv[i] / sum1; if (p > 0) h -= p * Math.log(p); }
    out.effective_rank = Math.exp(h);
  }
  return out;
}

/** The marks a readout may carry beside its number: `<key>_bound` or `<key>_method` (absent when exact). */
export const MARK_SUFFIXES = ['_bound', '_method'];
