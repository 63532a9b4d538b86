// rowbars.mjs: the single-row view's drawing (web/ui/row-view.mjs): one query's weights as bars, the
// variant's row above softmax's on one scale, so a spiky row and a flat one are seen side by side. Pure
// canvas drawing; no state.
import { CANVAS_FAMILY } from './svg-text.mjs';

/**
 * The bars of one lane: for each of `cols` pixel columns the largest and smallest weight of the keys it
 * covers (n keys may be more than the pixels: a spike must never be averaged away). Keys ≥ m (masked) are
 * left out. Returns {hi, lo} (Float64Array of cols), NaN where a column holds no allowed key.
 */
export function laneColumns(row, m, cols) {
  const hi = new Float64Array(cols).fill(NaN), lo = new Float64Array(cols).fill(NaN);
  const n = row.length;
  for (let j = 0; j < m; j++) {
    const c = Math.min(cols - 1, Math.floor((j * cols) / n));
    const x = row[j];
    if (!(x <= hi[c])) hi[c] = x;  // NaN compares false: the first key sets it
    if (!(x >= lo[c])) lo[c] = x;
  }
  return { hi, lo };
}

/**
 * Draw rows `data` = {M, A (Float32Array of n or null), m (allowed keys), i (the query)} into `canvas`;
 * opts {width, height (CSS px), dpr, fontPx, colors: {M, A, axis, mark}, labels: {M, A, key0} (the lanes' names and
 * the key axis's first label, in the page's language)}. Both lanes share
 * one scale, from the smallest (or 0) to the largest weight of the two rows; the query's own key is marked.
 */
export function drawRowBars(canvas, data, opts) {
  const { width, height, dpr = 1, colors, labels } = opts;
  const W = Math.round(width * dpr), H = Math.round(height * dpr);
  if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  if (!data || width < 20 || height < 20) return;
  const fontPx = opts.fontPx ?? 11;
  ctx.font = `${fontPx}px ${CANVAS_FAMILY}`;
  const n = (data.M ?? data.A)?.length ?? 0;
  if (!n) return;
  const left = 2, right = width - 2, gap = fontPx + 6;
  const laneH = (height - fontPx - 4 - gap) / 2; // two lanes, and the key axis's labels under them
  let top = 0, bottom = 0;
  for (const r of [data.M, data.A]) if (r) for (let j = 0; j < data.m; j++) { if (r[j] > top) top = r[j]; if (r[j] < bottom) bottom = r[j]; }
  if (!(top > bottom)) top = bottom + 1;
  const cols = Math.max(1, Math.min(n, Math.floor(right - left)));
  const cw = (right - left) / cols;
  const lanes = [['M', data.M, 0], ['A', data.A, laneH + gap]];
  for (const [k, row, y0] of lanes) {
    const y = (v) => y0 + fontPx + 2 + (1 - (v - bottom) / (top - bottom)) * (laneH - fontPx - 2);
    ctx.fillStyle = colors.axis; ctx.textAlign = 'left'; ctx.textBaseline = 'top';
    ctx.fillText(labels[k], left, y0);
    ctx.strokeStyle = colors.axis; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(left, Math.round(y(0)) + 0.5); ctx.lineTo(right, Math.round(y(0)) + 0.5); ctx.stroke();
    if (!row) continue;
    const { hi, lo } = laneColumns(row, data.m, cols);
    ctx.fillStyle = colors[k];
    for (let c = 0; c < cols; c++) {
      if (Number.isNaN(hi[c])) continue;
      const a = y(Math.max(0, hi[c])), b = y(Math.min(0, lo[c]));
      ctx.fillRect(left + c * cw, a, Math.max(1, cw - (cw > 3 ? 1 : 0)), Math.max(1, b - a));
    }
  }
  // the query's own key (j = i), and where a causal mask starts
  const xOf = (j) => left + ((j + 0.5) / n) * (right - left);
  ctx.strokeStyle = colors.mark; ctx.setLineDash([3, 3]); ctx.lineWidth = 1;
  ctx.beginPath(); ctx.moveTo(Math.round(xOf(data.i)) + 0.5, fontPx + 2); ctx.lineTo(Math.round(xOf(data.i)) + 0.5, 2 * laneH + gap); ctx.stroke();
  ctx.setLineDash([]);
  ctx.fillStyle = colors.axis; ctx.textBaseline = 'bottom';
  ctx.textAlign = 'left'; ctx.fillText(labels.key0 ?? 'key 0', left, height);
  ctx.textAlign = 'right'; ctx.fillText(`${n - 1}`, right, height);
  ctx.fillStyle = colors.mark; ctx.textAlign = data.i < n / 2 ? 'left' : 'right';
  ctx.fillText(`j = i = ${data.i}`, xOf(data.i) + (data.i < n / 2 ? 4 : -4), height);
}
