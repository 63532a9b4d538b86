// entropy.mjs: the row-entropy histogram (docs/readouts.md: each row's entropy, its mean and histogram,
// against the uniform baseline): the variant's M as filled bars, the softmax A as a dashed outline, each
// mean as a vertical line, the baseline (the mean entropy of uniform rows, entropy-baseline.mjs) dotted, on
// an axis from 0 to ln n (the most any row can have). Pure shaping plus one draw function that touches
// only the canvas it is given.
import { fmt } from './format.mjs';
import { CANVAS_FAMILY } from './svg-text.mjs';
import { t } from '../i18n/i18n.mjs';

/**
 * Shape the engine's histograms ({bins, top, uniform, M: {counts, left, mean, status}, A: {…} | null})
 * for drawing: per-bin fractions of the rows counted, the tallest fraction, and the means and the
 * baseline as fractions of the axis, ln n (null where undefined). A histogram with no counts (an error
 * status) gives null fractions.
 */
export function entropyBars(hist) {
  if (!hist || !(hist.bins > 0)) return null;
  const frac = (h) => {
    if (!h || !h.counts) return null;
    let total = 0;
    for (let i = 0; i < h.counts.length; i++) total += h.counts[i];
    if (!total) return null;
    return Float64Array.from(h.counts, (c) => c / total);
  };
  const M = frac(hist.M), A = frac(hist.A);
  let max = 0;
  for (const f of [M, A]) if (f) for (let i = 0; i < f.length; i++) max = Math.max(max, f[i]);
  const at = (h) => (h && Number.isFinite(h.mean) && hist.top > 0 ? h.mean / hist.top : null);
  const uniform = Number.isFinite(hist.uniform) && hist.top > 0 ? hist.uniform / hist.top : null;
  return { bins: hist.bins, top: hist.top, M, A, max, meanM: at(hist.M), meanA: at(hist.A), uniform, uniformValue: hist.uniform ?? null };
}

/**
 * The line above the histogram, in the page's language: both means against the uniform baseline, and rows
 * left out (with the reason).
 */
export function entropyNote(hist) {
  if (!hist) return '';
  const parts = [];
  parts.push(hist.A ? t('chart.entropy.meanA', { m: fmt(hist.M?.mean), a: fmt(hist.A.mean) }) : t('chart.entropy.mean', { m: fmt(hist.M?.mean) }));
  parts.push(t('chart.entropy.baseline', { uniform: t('chart.entropy.uniform'), u: fmt(hist.uniform), top: fmt(hist.top) }));
  if (hist.M && !hist.M.counts) parts.push(t('chart.entropy.failedM', { message: hist.M.message }));
  else if (hist.M?.left > 0) parts.push(t('chart.entropy.left', { left: hist.M.left }));
  return parts.join(t('chart.sep'));
}

/**
 * Draw the histogram. data: entropyBars(); opts {width, height (CSS px), dpr, colors: {M, A, mark,
 * axis}, fontPx (the labels' size, 11 by default)}. The canvas is sized to width·dpr × height·dpr; the
 * x axis runs from 0 to ln n.
 */
export function drawEntropyHistogram(canvas, data, opts) {
  const { width, height, dpr = 1, colors } = opts;
  const W = Math.round(width * dpr), H = Math.round(height * dpr);
  if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const fontPx = opts.fontPx ?? 11;
  const font = `${fontPx}px ${CANVAS_FAMILY}`;
  const left = 4, right = width - 4, top = fontPx + 1, bottom = height - fontPx - 3;
  const x = (t) => left + t * (right - left);
  const y = (f) => bottom - (data && data.max > 0 ? f / data.max : 0) * (bottom - top);
  ctx.font = font;
  ctx.textBaseline = 'alphabetic';
  // axis: 0 … ln n
  ctx.strokeStyle = colors.axis; ctx.fillStyle = colors.axis; ctx.lineWidth = 1;
  ctx.beginPath(); ctx.moveTo(left, bottom + 0.5); ctx.lineTo(right, bottom + 0.5); ctx.stroke();
  ctx.textAlign = 'left'; ctx.fillText('0', left, height - 2);
  ctx.textAlign = 'center'; ctx.fillText(t('chart.entropy.axis'), (left + right) / 2, height - 2);
  if (!data) return;
  ctx.textAlign = 'right'; ctx.fillText(`ln n = ${fmt(data.top)}`, right, height - 2); // the axis's end
  if (data.max > 0) { ctx.textAlign = 'left'; ctx.fillText(t('chart.entropy.rows', { pct: fmt(100 * data.max, 2) }), left, top - 2); }
  const bw = (right - left) / data.bins;
  if (data.M) {
    ctx.fillStyle = colors.M; ctx.globalAlpha = 0.75;
    for (let i = 0; i < data.bins; i++) {
      if (!data.M[i]) continue;
      const yt = y(data.M[i]);
      ctx.fillRect(x(i / data.bins) + 0.5, yt, bw - 1, bottom - yt);
    }
    ctx.globalAlpha = 1;
  }
  if (data.A) { // a stepped outline over the bars
    ctx.strokeStyle = colors.A; ctx.lineWidth = 1.5; ctx.setLineDash([3, 2]);
    ctx.beginPath(); ctx.moveTo(left, bottom);
    for (let i = 0; i < data.bins; i++) { const yy = y(data.A[i]); ctx.lineTo(x(i / data.bins), yy); ctx.lineTo(x((i + 1) / data.bins), yy); }
    ctx.lineTo(right, bottom); ctx.stroke();
    ctx.setLineDash([]);
  }
  const vline = (t, color, dash, width = 1.5) => {
    if (t === null || !Number.isFinite(t)) return;
    const xx = Math.round(x(Math.min(1, Math.max(0, t)))) + 0.5;
    ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dash);
    ctx.beginPath(); ctx.moveTo(xx, top); ctx.lineTo(xx, bottom); ctx.stroke();
    ctx.setLineDash([]);
  };
  vline(data.uniform, colors.mark, [2, 3]); // the baseline: the mean entropy of uniform rows
  if (data.uniform !== null && Number.isFinite(data.uniform)) {
    ctx.fillStyle = colors.mark; ctx.textAlign = 'right';
    ctx.fillText(t('chart.entropy.uniform'), x(Math.min(1, Math.max(0, data.uniform))) - 3, top + fontPx);
  }
  vline(data.meanA, colors.A, [3, 2], 2);
  vline(data.meanM, colors.M, [], 2);
}
