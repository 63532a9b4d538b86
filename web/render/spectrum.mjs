// spectrum.mjs: pure helpers for the spectrum and error-curve plots: data shaping and ranks.
// Arrays in, arrays out; no DOM (the uPlot charts that draw them are in charts.mjs).
import { t } from '../i18n/i18n.mjs';

/**
 * σ/σ₁ for plotting on a log axis: values at or below the method's noise floor (and exact zeros) are
 * null (a gap), so no curve is ever drawn below what the route can resolve.
 */
export function normalisedSpectrum(sv, floor = 0, length = sv ? sv.length : 0) {
  const out = new Array(length).fill(null);
  if (!sv || !sv.length || !(sv[0] > 0)) return out;
  const s1 = sv[0];
  const cut = Math.max(floor, s1 * 1e-16);
  for (let i = 0; i < Math.min(length, sv.length); i++) out[i] = sv[i] > cut ? sv[i] / s1 : null;
  return out;
}

/**
 * Truncated-SVD error e(r) = Σ_{i>r} σᵢ² / Σσᵢ², r = 0..k (Eckart–Young). `total` is Σσᵢ² over the
 * whole spectrum (‖M‖_F²) when sv holds only the top k; otherwise the sum of sv². Entries ≤ 1e-16 → null.
 */
export function errorCurve(sv, total = null) {
  const k = sv.length;
  let tot = 0;
  if (total !== null) tot = total;
  else for (let i = 0; i < k; i++) tot += sv[i] * sv[i];
  const e = new Array(k + 1).fill(null);
  if (!(tot > 0)) return e;
  let tail = tot;
  for (let r = 0; r <= k; r++) {
    const v = Math.max(0, tail / tot);
    e[r] = v > 1e-16 ? v : null;
    if (r < k) tail -= sv[r] * sv[r];
  }
  return e;
}

/**
 * #{σᵢ > max(rel·σ₁, floor)}: the rank at a relative tolerance, never below the noise floor. `top`, when
 * given, stands for σ₁ (a top-k spectrum's upper bound of it: the count is then a lower bound).
 */
export function rankAtRelative(sv, rel, floor = 0, top = null) {
  if (!sv || !sv.length) return null;
  const tol = Math.max(rel * Math.max(sv[0], top ?? 0), floor);
  let r = 0;
  for (let i = 0; i < sv.length; i++) if (sv[i] > tol) r++;
  return r;
}

/**
 * How much of the plotted index range to keep: one past the last index where any of `series` has a
 * value, and at least `atLeast` (a mark to keep in view, such as the rank ceiling), at most the longest
 * series. A factor spectrum's trailing zeros (nulls on the plot) then take no room on the x axis.
 */
export function plotLength(series, atLeast = 0) {
  let last = -1, longest = 0;
  for (const s of series) {
    if (!s) continue;
    longest = Math.max(longest, s.length);
    for (let i = s.length - 1; i > last; i--) if (s[i] !== null && s[i] !== undefined) { last = i; break; }
  }
  return Math.min(longest, Math.max(last + 1, atLeast, Math.min(longest, 2)));
}

/**
 * Marker positions along a curve: about `count` indices where it has a value, evenly spaced by index, or with
 * `px` (index → x in pixels, increasing) evenly spaced in pixels over the curve's extent (so a log axis gets
 * them along its whole width) and none nearer than `minGap` pixels to the one kept before it: a curve
 * squeezed into a few pixels (QKᵀ's d values on an n = 1024 axis) gets one or two markers instead of a blot
 * of nine. `offset` (0..1) staggers the markers of different curves.
 */
export function markerIndices(values, count = 9, offset = 0, px = null, minGap = 0) {
  const idx = [];
  for (let i = 0; i < values.length; i++) if (values[i] !== null && values[i] !== undefined) idx.push(i);
  if (!px) {
    if (idx.length <= count) return idx;
    const step = idx.length / count;
    return Array.from({ length: count }, (_, k) => idx[Math.min(idx.length - 1, Math.floor((k + offset) * step))]);
  }
  if (!idx.length) return [];
  const xs = idx.map(px), x0 = xs[0], span = xs[xs.length - 1] - x0;
  const picked = [];
  for (let k = 0, at = 0; k < count; k++) { // the first index at or past each evenly spaced pixel
    const target = x0 + ((k + offset) / count) * span;
    while (at < idx.length - 1 && xs[at] < target) at++;
    if (picked[picked.length - 1] !== idx[at]) picked.push(idx[at]);
  }
  const kept = [];
  let last = -Infinity;
  for (const j of picked) {
    const x = px(j);
    if (kept.length && x - last < minGap) continue;
    kept.push(j);
    last = x;
  }
  return kept;
}

/** Above this n the spectrum's index runs on a log axis: the overlays hold only the top σ. */
export const LOG_X_MIN_N = 1024;

/**
 * The data of both charts (charts.mjs) for one view: `spec` the variant's spectrum ({sv, floor, fro2,
 * partial} or null), `overlays` the 'S' (QKᵀ), 'E' (exp(QKᵀ)) and 'A' (softmax) spectra that are current
 * for these inputs (others left out), `n`, and `ceiling` the rank ceiling (or null). Returns
 * {spectrum: {x, S, E, M, A, ceiling, floor}, error: {x, M, A, ceiling}}: the x axis ends where the last
 * curve does (a factor spectrum's zeros take no room); above LOG_X_MIN_N, on a log axis, e(r) from r = 1.
 */
export function chartData({ spec, overlays, n, ceiling }) {
  const s = spec?.sv ? spec : null;
  const len = Math.max(s?.sv?.length ?? 0, ...['S', 'E', 'A'].map((k) => overlays[k]?.sv.length ?? 0), 1);
  const x = Array.from({ length: len }, (_, i) => i + 1);
  const fromOv = (k) => (overlays[k] ? normalisedSpectrum(overlays[k].sv, overlays[k].floor, len) : new Array(len).fill(null));
  const M = s && s.sv.length <= n ? normalisedSpectrum(s.sv, s.floor, len) : new Array(len).fill(null);
  const curves = { S: fromOv('S'), E: fromOv('E'), M, A: fromOv('A') };
  const keep = plotLength(Object.values(curves), ceiling ? ceiling + 1 : 0);
  const cut = (a) => a.slice(0, keep);
  const spectrum = { x: cut(x), S: cut(curves.S), E: cut(curves.E), M: cut(M), A: cut(curves.A),
    ceiling, floor: s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0 };
  const eM = s ? errorCurve(s.sv, s.fro2 ?? null) : [null];
  const eA = overlays.A ? errorCurve(overlays.A.sv, overlays.A.fro2 ?? null) : [null];
  const elen = plotLength([eM, eA], ceiling ? ceiling + 1 : 0);
  const r0 = n > LOG_X_MIN_N ? 1 : 0; // a log axis starts at r = 1 (e(0) = 1 always)
  const pad = (a) => { const out = a.slice(r0, elen); while (out.length < Math.max(1, elen - r0)) out.push(null); return out; };
  const error = { x: Array.from({ length: Math.max(1, elen - r0) }, (_, i) => i + r0), M: pad(eM), A: pad(eA), ceiling };
  return { spectrum, error };
}

/**
 * The seed article's two pictures ("3.2. 有损的低秩近似") from one spectrum σ (descending, absolute):
 * sq[i] = σᵢ₊₁² and err[D] = Σ_{i>D} σᵢ², D = 0…len: the squared Frobenius error of the rank-D truncated
 * SVD, exact by Eckart–Young. Summed from the tail, so a rank-r spectrum's err[r] is exactly 0. `total`
 * (‖M‖_F²) when sv holds only the top k σ̂ (each ≤ σᵢ): err[D] = total − Σ_{i≤D} σ̂ᵢ², an upper bound.
 */
export function truncationCurves(sv, total = null) {
  const k = sv ? sv.length : 0;
  const sq = Array.from({ length: k }, (_, i) => sv[i] * sv[i]);
  const err = new Array(k + 1);
  if (total === null) {
    err[k] = 0;
    for (let D = k - 1; D >= 0; D--) err[D] = err[D + 1] + sq[D];
  } else {
    let head = 0;
    for (let D = 0; D <= k; D++) { err[D] = Math.max(0, total - head); if (D < k) head += sq[D]; }
  }
  return { sq, err };
}

/**
 * The data of the article's two charts (charts.mjs makeArticleChart) from the overlays 'S' (scale·QKᵀ)
 * and 'E' (exp(scale·QKᵀ − max), the library's overflow-free form: a factor e^{−max} on every σ), each
 * {sv, floor, partial, fro2} or null. Each curve is divided by its own ‖M‖_F², which that factor leaves
 * alone: σᵢ²/‖M‖_F² (the share of the energy along direction i; at or below the route's floor a gap on
 * the log axis) and err(D)/‖M‖_F², D = 0…len. Returns {spectrum: {x, S, E}, error: {x, S, E}, rankS},
 * cut where the last curve ends (QKᵀ's zeros past its rank take no room).
 */
export function articleChartData({ S = null, E = null }) {
  const curve = (o) => {
    if (!o?.sv?.length) return null;
    const { sq, err } = truncationCurves(o.sv, o.partial ? o.fro2 ?? null : null);
    const tot = err[0], f2 = (o.floor ?? 0) ** 2;
    if (!(tot > 0)) return null;
    return { sq: sq.map((v) => (v > f2 && v > 0 ? v / tot : null)), err: err.map((v) => v / tot) };
  };
  const s = curve(S), e = curve(E);
  const rankS = S?.sv?.length ? rankAtRelative(S.sv, 1e-16, S.floor ?? 0) : null;
  const len = Math.max(1, plotLength([s?.sq, e?.sq], rankS ? Math.min(S.sv.length, 2 * rankS) : 0));
  const pick = (c, key, i) => (c && i < c[key].length ? c[key][i] : null);
  const range = (m, f) => Array.from({ length: m }, (_, i) => f(i));
  return {
    spectrum: { x: range(len, (i) => i + 1), S: range(len, (i) => pick(s, 'sq', i)), E: range(len, (i) => pick(e, 'sq', i)) },
    error: { x: range(len + 1, (D) => D), S: range(len + 1, (D) => pick(s, 'err', D)), E: range(len + 1, (D) => pick(e, 'err', D)) },
    rankS,
  };
}

/**
 * A spectrum route's name (web/compute/engine.mjs's: 'accurate', 'fast', 'factors (r = 4)', 'top 64
 * (randomized)') in the page's language; a name it does not know stays as the engine wrote it.
 */
export function routeName(route) {
  const m = /^factors \(r = (\d+)\)$/.exec(route) ?? /^top (\d+) \(randomized\)$/.exec(route);
  if (m) return t(route.startsWith('top') ? 'chart.route.top' : 'chart.route.factors', route.startsWith('top') ? { k: m[1] } : { r: m[1] });
  return route === 'accurate' || route === 'fast' ? t(`chart.route.${route}`) : route;
}
