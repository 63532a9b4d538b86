// format.mjs: number formatting for readouts, colour bars and hover text. Pure; no DOM.
import { fmtWhole } from '../state/whole.mjs';

export { fmtWhole };

/** A number in at most `digits` significant digits; exponent form outside [1e-3, 1e5). null/NaN → '—'. */
export function fmt(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  if (x === Infinity) return '∞';
  if (x === -Infinity) return '−∞';
  if (x === 0) return '0';
  const a = Math.abs(x);
  let s;
  if (a >= 1e5 || a < 1e-3) {
    s = x.toExponential(Math.max(0, digits - 1)).replace(/\.?0+e/, 'e').replace('e+', 'e');
  } else {
    s = String(Number(x.toPrecision(digits)));
  }
  return s.replace(/^-/, '−');
}

/** A signed number: '+0.012', '−0.3', '0'. */
export function fmtSigned(x, digits = 3) {
  const s = fmt(x, digits);
  return x > 0 ? `+${s}` : s;
}

/** An integer count with an SI suffix: 4.19M, 1.07G, 950. */
export function fmtCount(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  if (x < 0) return '—';
  const units = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [u, s] of units) if (x >= u) return `${Number((x / u).toPrecision(3))}${s}`;
  return String(Math.round(x));
}

/** Bytes in binary units: 512 B, 1.5 KiB, 64 MiB. */
export function fmtBytes(x) {
  if (x === null || x === undefined || !Number.isFinite(x) || x < 0) return '—';
  const units = [[2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']];
  for (const [u, s] of units) if (x >= u) return `${Number((x / u).toPrecision(3))} ${s}`;
  return `${Math.round(x)} B`;
}

/** A fraction as a percentage: 0.583 → '58.3%'. */
export function fmtPct(x, digits = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return `${Number((100 * x).toPrecision(digits))}%`;
}

/** A ratio, as in "4× cheaper": two significant digits below 10 (1.3, 4, 9.5), whole above (32, 1,024). */
export function fmtRatio(x) {
  if (x === null || x === undefined || !Number.isFinite(x) || x <= 0) return '—';
  if (x < 9.95) return String(Number(x.toPrecision(2)));
  return fmtWhole(Math.round(x));
}

/** Milliseconds: '3.2 ms', '1.25 s'. */
export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '—';
  return ms >= 1000 ? `${Number((ms / 1000).toPrecision(3))} s` : `${Number(ms.toPrecision(ms < 10 ? 2 : 3))} ms`;
}

/** Evenly spaced tick values from lo to hi (k ≥ 2 of them, ends included). */
export function ticks(lo, hi, k = 3) {
  return Array.from({ length: k }, (_, i) => lo + ((hi - lo) * i) / (k - 1));
}
