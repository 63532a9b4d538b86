// charts.mjs: the spectrum and truncated-SVD error charts (uPlot, log y axes). Each touches only the
// element it is given; update() takes the arrays shaped by spectrum.mjs.
// uPlot itself is loaded on first need (loadUPlot), not with the page: its module makes an Intl object, and
// the first Intl object of a page starts ICU (40–100 ms in a fresh headless Chromium on the 2-core build
// machine), which the first view's heatmaps and readouts need not wait for (docs/performance.md, "A cold load").
import 'uplot/dist/uPlot.min.css';
import { fmt, fmtWhole } from './format.mjs';
import { markerIndices } from './spectrum.mjs';
import { CANVAS_FAMILY } from './svg-text.mjs';
import { t } from '../i18n/i18n.mjs';

let UPlot = null, loadingUPlot = null;
/** A promise of uPlot's class, imported on the first call (the same promise after; a failed import is tried again). */
export function loadUPlot() {
  loadingUPlot ??= import('uplot').then((m) => { UPlot = m.default; return UPlot; },
    (err) => { loadingUPlot = null; throw err; });
  return loadingUPlot;
}
/** uPlot's class once loadUPlot() has resolved, else null: chart makers need it (they throw without). */
export function uPlotReady() { return UPlot; }
function needUPlot() {
  if (!UPlot) throw new Error('charts.mjs: uPlot is not loaded yet (await loadUPlot())');
  return UPlot;
}

/**
 * The curves, told apart three ways, so that no one depends on colour alone (Okabe–Ito colours, safe
 * under the common colour-vision deficiencies; dash patterns; marker shapes drawn along each curve and
 * named in the legend): QKᵀ grey dashed ▲, exp(QKᵀ) orange dash-dot ■, the variant blue solid ●,
 * softmax reddish purple dotted ◆. `label` (the legend's: name and marker) is in the page's language.
 */
export const SERIES = [
  { key: 'S', name: 'QKᵀ', glyph: '▲', color: '#8c8c8c', dash: [7, 4], legendDash: 'dashed', marker: 'triangle' },
  { key: 'E', name: 'exp(QKᵀ)', glyph: '■', color: '#e69f00', dash: [9, 3, 2, 3], legendDash: 'dashed', marker: 'square' },
  { key: 'M', name: null, glyph: '●', color: '#0072b2', dash: [], legendDash: 'solid', marker: 'circle' },
  { key: 'A', name: 'softmax A', glyph: '◆', color: '#cc79a7', dash: [1.5, 3], legendDash: 'dotted', marker: 'diamond' },
].map((s) => Object.defineProperty(s, 'label', { get() { return `${seriesName(s)} ${s.glyph}`; }, enumerable: true }));

/** A curve's name without its marker, in the page's language (QKᵀ, exp(QKᵀ) and softmax A are names: the same in every language). */
export function seriesName(s) { return s.name ?? t(`chart.series.${s.key}`); }

/** Draw one marker shape of radius r (device px) centred at (x, y). */
function drawMarker(ctx, shape, x, y, r) {
  ctx.beginPath();
  if (shape === 'circle') ctx.arc(x, y, r, 0, 2 * Math.PI);
  else if (shape === 'square') ctx.rect(x - r * 0.85, y - r * 0.85, 1.7 * r, 1.7 * r);
  else if (shape === 'triangle') { ctx.moveTo(x, y - r * 1.1); ctx.lineTo(x + r, y + r * 0.8); ctx.lineTo(x - r, y + r * 0.8); ctx.closePath(); }
  else { ctx.moveTo(x, y - r * 1.2); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r * 1.2); ctx.lineTo(x - r, y); ctx.closePath(); }
  ctx.fill();
}

/** A uPlot plugin that draws each series' marker shape along its curve (series i + 1 ↔ styles[i]). */
function seriesMarkers(styles) {
  return {
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx, r = 3.2 * devicePixelRatio;
        const { left, top, width, height } = u.bbox;
        ctx.save();
        styles.forEach((s, i) => {
          const ys = u.data[i + 1];
          if (!ys || !u.series[i + 1].show) return;
          ctx.fillStyle = s.color;
          const px = (j) => u.valToPos(u.data[0][j], 'x', true);
          for (const j of markerIndices(ys, 9, (i + 1) / (styles.length + 1), px, 6 * r)) {
            const x = px(j), y = u.valToPos(ys[j], 'y', true);
            if (x >= left && x <= left + width && y >= top && y <= top + height) drawMarker(ctx, s.marker, x, y, r);
          }
        });
        ctx.restore();
      }],
    },
  };
}

/** The legend's marker for each series: its colour, and its dash as a border style. */
function legendMarkers(styles) {
  return { show: true, live: false, markers: { dash: (u, i) => (i > 0 ? styles[i - 1].legendDash : 'solid'), width: 2 } };
}

/**
 * The lowest noise floor (relative to σ₁) the spectrum chart draws as a dotted line: the y range
 * reaches down to a floor at or above it (the fast route's, near √ε·σ₁); a lower one (accurate and
 * factor routes) is left off the chart and only named in the note.
 */
export const FLOOR_LINE_MIN = 1e-9;

/** Whether the spectrum chart draws the noise-floor line for this floor (relative to σ₁). */
export function floorDrawn(floorRel) { return floorRel >= FLOOR_LINE_MIN && floorRel < 1; }

/** The multipliers a log axis may step its labelled decades by when decades are close together. */
const DECADE_STEPS = [1, 2, 3, 4, 5, 10, 20, 50, 100];

/**
 * The ticks of a log₁₀ axis from lo to hi drawn over `pixels` CSS px: labelled ticks only at powers of
 * ten, at most one per decade, and every k-th decade (10⁰ always among them) when decades are closer
 * than `minGap` px, so labels `minGap` apart never overlap; unlabelled grid lines at 2…9 × 10ᵉ where a
 * decade is at least 6·minGap long. Returns {splits, labelled: Set of the labelled values, step: k}.
 */
export function logTicks(lo, hi, pixels, minGap) {
  if (!(lo > 0) || !(hi > lo) || !(pixels > 0) || !(minGap > 0)) return { splits: [], labelled: new Set(), step: 1 };
  const perDecade = pixels / (Math.log10(hi) - Math.log10(lo));
  const step = DECADE_STEPS.find((k) => k * perDecade >= minGap) ?? Math.ceil(minGap / perDecade);
  const minor = perDecade >= 6 * minGap;
  const a = Math.floor(Math.log10(lo) + 1e-9), b = Math.floor(Math.log10(hi) + 1e-9);
  const splits = [], labelled = new Set();
  const inRange = (v) => v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9);
  for (let e = a; e <= b; e++) {
    const p = Number(`1e${e}`); // exact: 10 ** -7 is not 1e-7
    if (inRange(p) && ((e % step) + step) % step === 0) { splits.push(p); labelled.add(p); }
    if (minor) for (let m = 2; m <= 9; m++) { const v = Number(`${m}e${e}`); if (inRange(v)) splits.push(v); }
  }
  splits.sort((x, y) => x - y);
  return { splits, labelled, step };
}

const SUPERSCRIPT = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
/** A power of ten as a tick label: 1, 10⁻³ (small values), or 10, 100, 1,000 (counts). */
export function powerLabel(v, counts = false) {
  const e = Math.round(Math.log10(v));
  if (e === 0) return '1';
  if (counts && e > 0) return fmtWhole(Math.round(v));
  return `10${String(e).split('').map((ch) => SUPERSCRIPT[ch]).join('')}`;
}

/**
 * A uPlot axis on a log₁₀ scale with logTicks' ticks: `side` 'y' (vertical: labels two lines apart) or
 * 'x' (horizontal: labels about four characters wide); `counts` labels 10, 100, 1,000.
 */
function logAxis(base, fontPx, side, counts) {
  const minGap = side === 'y' ? 2.2 * fontPx : 4.5 * fontPx;
  let labelled = new Set();
  return {
    ...base,
    splits: (u, i, lo, hi) => {
      const px = side === 'y' ? u.bbox.height / devicePixelRatio : u.bbox.width / devicePixelRatio;
      const t = logTicks(lo, hi, px || (side === 'y' ? u.height : u.width), minGap);
      labelled = t.labelled;
      return t.splits;
    },
    filter: (u, splits) => splits,
    values: (u, splits) => splits.map((v) => (labelled.has(v) ? powerLabel(v, counts) : null)),
  };
}

/** Width in CSS px of a y axis's tick labels (the longest label is about six characters: 10⁻¹²). */
const yAxisSize = (fontPx) => Math.ceil(fontPx * 3.6 + 8);

/** The axis settings both charts share, for text of fontPx CSS px; `pal()`: the colours now (palette()). */
function axisBase(pal, fontPx) {
  return {
    stroke: () => pal().axis, grid: { stroke: () => pal().grid, width: 1 }, ticks: { show: false },
    font: `${fontPx}px ${CANVAS_FAMILY}`, labelFont: `bold ${fontPx}px ${CANVAS_FAMILY}`, labelSize: Math.ceil(fontPx * 1.3),
  };
}

/** The x axis: linear (uPlot's splits, labels about five characters apart) or log₁₀ from 1. */
function xAxis(base, fontPx, logX, label) {
  const size = Math.ceil(fontPx * 1.4 + 10);
  return logX ? { ...logAxis(base, fontPx, 'x', true), label, size } : { ...base, label, size, space: Math.max(50, Math.ceil(fontPx * 4.5)) };
}

/** The x scale: log₁₀ from 1 to the last x (never rounded out to whole decades), or linear. */
function xScale(logX) {
  return logX ? { time: false, distr: 3, log: 10, range: (u, lo, hi) => [1, Math.max(2, hi ?? 2)] } : { time: false };
}

/**
 * The charts' colours in a theme: axis (its text: ≥ 4.5:1 on the page's and an embed's backgrounds), grid,
 * and mark (the dashed marker lines, and text beside them: the light theme's gold is dark enough for text).
 */
export function themeColors(dark) {
  return { axis: dark ? '#c8ccd4' : '#333', grid: dark ? '#333a44' : '#e3e3e3', mark: dark ? '#f0e442' : '#8a6508' };
}

/** A chart's colours, read at each draw: `colors()` when given (an <attn-viz> element reads them from its
 *  CSS, which a host may set: docs/embedding.md), else the theme's that `dark()` names. */
function palette({ dark, colors }) {
  return colors ?? (() => themeColors(dark()));
}

/** Marker lines (rank ceiling: vertical; noise floor: horizontal) drawn in uPlot's draw hook. */
function markers(getMarks, pal) {
  return {
    hooks: {
      draw: [(u) => {
        const m = getMarks();
        const ctx = u.ctx;
        const { left, top, width, height } = u.bbox;
        ctx.save();
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.strokeStyle = pal().mark;
        ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
        if (m.ceiling) {
          const x = u.valToPos(m.ceiling, 'x', true);
          if (x >= left && x <= left + width) { ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke(); }
        }
        if (floorDrawn(m.floor)) {
          const y = u.valToPos(m.floor, 'y', true);
          ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
          if (y >= top && y <= top + height) { ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + width, y); ctx.stroke(); }
        }
        ctx.restore();
      }],
    },
  };
}

/**
 * The spectrum chart: σᵢ/σ₁ against i on log y, with QKᵀ, exp(QKᵀ) and M (and softmax A). `fontPx`: the
 * axes' text size; `logX`: i on a log axis (large n, where the overlays hold only the top σ).
 * update({x, S, E, M, A, ceiling, floor}) redraws; resize(w, h); destroy().
 */
export function makeSpectrumChart(el, { width, height, dark, colors, fontPx = 11, logX = false }) {
  const pal = palette({ dark, colors });
  let marks = { ceiling: null, floor: 0 };
  const axis = axisBase(pal, fontPx);
  const opts = {
    width, height,
    legend: legendMarkers(SERIES),
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    // the y range reaches down to a noise floor the chart draws (floorDrawn), so its line is in range
    scales: { x: xScale(logX), y: { distr: 3, range: (u, lo) => [Math.max(1e-12, Math.min(lo ?? 1e-8, floorDrawn(marks.floor) ? marks.floor : 1, 1) / 2), 1.5] } },
    axes: [xAxis(axis, fontPx, logX, t(logX ? 'chart.axis.iLog' : 'chart.axis.i')), { ...logAxis(axis, fontPx, 'y'), label: 'σᵢ / σ₁', size: yAxisSize(fontPx) }],
    series: [{ label: 'i' }, ...SERIES.map((s) => ({ label: s.label, stroke: s.color, width: 1.6, dash: s.dash, points: { show: false }, spanGaps: false }))],
    plugins: [markers(() => marks, pal), seriesMarkers(SERIES)],
  };
  const u = new (needUPlot())(opts, [[1], [null], [null], [null], [null]], el);
  return {
    update(data) {
      marks = { ceiling: data.ceiling ?? null, floor: data.floor ?? 0 };
      u.setData([data.x, data.S, data.E, data.M, data.A]);
    },
    resize(w, h) { u.setSize({ width: w, height: h }); },
    redraw() { u.redraw(); },
    destroy() { u.destroy(); },
    chart: u,
  };
}

/**
 * The truncated-SVD error chart: e(r) on log y for the variant (and softmax). With `logX`, r runs on a
 * log axis from 1 (e(0) = 1 always).
 */
export function makeErrorChart(el, { width, height, dark, colors, fontPx = 11, logX = false }) {
  const pal = palette({ dark, colors });
  const axis = axisBase(pal, fontPx);
  let marks = { ceiling: null, floor: 0 };
  const styles = [SERIES[2], SERIES[3]];
  const u = new (needUPlot())({
    width, height,
    legend: legendMarkers(styles),
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: { x: xScale(logX), y: { distr: 3, range: (u, lo) => [Math.max(1e-16, Math.min(lo ?? 1e-8, 1) / 2), 1.5] } },
    axes: [xAxis(axis, fontPx, logX, t(logX ? 'chart.axis.rLog' : 'chart.axis.r')), { ...logAxis(axis, fontPx, 'y'), label: 'e(r)', size: yAxisSize(fontPx) }],
    series: [{ label: 'r' }, ...styles.map((s) => ({ label: s.label, stroke: s.color, width: 1.6, dash: s.dash, points: { show: false } }))],
    plugins: [markers(() => marks, pal), seriesMarkers(styles)],
  }, [[logX ? 1 : 0], [null], [null]], el);
  return {
    update(data) { marks = { ceiling: data.ceiling ?? null, floor: 0 }; u.setData([data.x, data.M, data.A]); },
    resize(w, h) { u.setSize({ width: w, height: h }); },
    redraw() { u.redraw(); },
    destroy() { u.destroy(); },
    chart: u,
  };
}

/**
 * A vertical line at x = mark.at with its text (the seed article's claim turns on i = D = d: QKᵀ has d
 * singular values, so its truncation error is 0 from D = d), drawn in uPlot's draw hook.
 */
function labelledMark(getMark, pal, fontPx) {
  return {
    hooks: {
      draw: [(u) => {
        const m = getMark();
        if (!m.at) return;
        const ctx = u.ctx, { left, top, width, height } = u.bbox, dpr = devicePixelRatio;
        const x = u.valToPos(m.at, 'x', true);
        if (!(x >= left && x <= left + width)) return;
        ctx.save();
        ctx.strokeStyle = ctx.fillStyle = pal().mark;
        ctx.lineWidth = 1.5 * dpr;
        ctx.setLineDash([5 * dpr, 4 * dpr]);
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
        ctx.font = `${fontPx * dpr}px ${CANVAS_FAMILY}`;
        ctx.textBaseline = 'top';
        // beside the line, on the side with room
        const w = ctx.measureText(m.text).width;
        ctx.textAlign = x + 4 * dpr + w <= left + width ? 'left' : 'right';
        ctx.fillText(m.text, ctx.textAlign === 'left' ? x + 4 * dpr : x - 4 * dpr, top + 4 * dpr);
        ctx.restore();
      }],
    },
  };
}

/**
 * The seed article's two charts for QKᵀ and exp(QKᵀ) (spectrum.mjs articleChartData, each curve over its
 * own ‖M‖_F²): `kind` 'spectrum', σᵢ² against i on a log y axis; 'error', the squared Frobenius error of
 * the rank-D truncated SVD against D on a linear y axis from 0 (QKᵀ's falls to 0, exp's stays high).
 * update({x, S, E, mark: {at, text}}) redraws; resize(w, h); redraw(); destroy().
 */
export function makeArticleChart(el, { kind, width, height, dark, colors, fontPx = 11 }) {
  const pal = palette({ dark, colors });
  const axis = axisBase(pal, fontPx);
  const styles = [SERIES[0], SERIES[1]];
  let mark = { at: null, text: '' };
  const spectrum = kind === 'spectrum';
  const y = spectrum
    ? { ...logAxis(axis, fontPx, 'y'), label: t('figure.axis.sq'), size: yAxisSize(fontPx) }
    : { ...axis, label: '‖M − M_D‖²_F / ‖M‖²_F', size: Math.ceil(fontPx * 2.4 + 8), space: Math.ceil(fontPx * 2.2), values: (u, splits) => splits.map((v) => fmt(v, 2)) };
  const u = new (needUPlot())({
    width, height,
    legend: legendMarkers(styles),
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: {
      x: { time: false },
      y: spectrum ? { distr: 3, range: (u, lo) => [Math.max(1e-16, Math.min(lo ?? 1e-8, 1) / 2), 1.5] } : { range: () => [0, 1.02] },
    },
    axes: [xAxis(axis, fontPx, false, t(spectrum ? 'figure.axis.i' : 'figure.axis.D')), y],
    series: [{ label: spectrum ? 'i' : 'D' }, ...styles.map((s) => ({ label: s.label, stroke: s.color, width: 1.6, dash: s.dash, points: { show: false }, spanGaps: false }))],
    plugins: [labelledMark(() => mark, pal, fontPx), seriesMarkers(styles)],
  }, [[spectrum ? 1 : 0], [null], [null]], el);
  return {
    update(data) { mark = data.mark ?? { at: null, text: '' }; u.setData([data.x, data.S, data.E]); },
    resize(w, h) { u.setSize({ width: w, height: h }); },
    redraw() { u.redraw(); },
    destroy() { u.destroy(); },
    chart: u,
  };
}
