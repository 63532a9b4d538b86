// charts.mjs: the spectrum and truncated-SVD error charts (uPlot, log y axes). Each touches only the
// element it is given; update() takes the arrays shaped by spectrum.mjs.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export const SERIES = [
  { key: 'S', label: 'QKᵀ', color: '#8c8c8c', dash: [6, 3] },
  { key: 'E', label: 'exp(QKᵀ)', color: '#e69f00', dash: [] },
  { key: 'M', label: 'variant M', color: '#0072b2', dash: [] },
  { key: 'A', label: 'softmax A', color: '#cc79a7', dash: [2, 2] },
];

/**
 * The lowest noise floor (relative to σ₁) the spectrum chart draws as a dotted line: the y range
 * reaches down to a floor at or above it (the fast route's, near √ε·σ₁); a lower one (accurate and
 * factor routes) is left off the chart and only named in the note.
 */
export const FLOOR_LINE_MIN = 1e-9;

/** Whether the spectrum chart draws the noise-floor line for this floor (relative to σ₁). */
export function floorDrawn(floorRel) { return floorRel >= FLOOR_LINE_MIN && floorRel < 1; }

function themeColors(dark) {
  return { axis: dark ? '#c8ccd4' : '#333', grid: dark ? '#333a44' : '#e3e3e3', mark: dark ? '#f0e442' : '#b8860b' };
}

/** Marker lines (rank ceiling: vertical; noise floor: horizontal) drawn in uPlot's draw hook. */
function markers(getMarks, dark) {
  return {
    hooks: {
      draw: [(u) => {
        const m = getMarks();
        const ctx = u.ctx;
        const { left, top, width, height } = u.bbox;
        ctx.save();
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.strokeStyle = themeColors(dark()).mark;
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
 * The spectrum chart: σᵢ/σ₁ against i on log y, with QKᵀ, exp(QKᵀ) and M (and softmax A).
 * update({x, S, E, M, A, ceiling, floor}) redraws; resize(w, h).
 */
export function makeSpectrumChart(el, { width, height, dark }) {
  let marks = { ceiling: null, floor: 0 };
  const axis = { stroke: () => themeColors(dark()).axis, grid: { stroke: () => themeColors(dark()).grid, width: 1 }, ticks: { show: false }, font: '11px system-ui, sans-serif' };
  const opts = {
    width, height,
    legend: { show: true, live: false },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    // the y range reaches down to a noise floor the chart draws (floorDrawn), so its line is in range
    scales: { x: { time: false }, y: { distr: 3, range: (u, lo) => [Math.max(1e-12, Math.min(lo ?? 1e-8, floorDrawn(marks.floor) ? marks.floor : 1, 1) / 2), 1.5] } },
    axes: [{ ...axis, label: 'i', labelSize: 14, size: 28 }, { ...axis, label: 'σᵢ / σ₁', labelSize: 14, size: 52, space: 22, values: (u, v) => v.map((x) => x == null ? '' : x.toExponential(0).replace('e+', 'e').replace('1e0', '1')) }],
    series: [{ label: 'i' }, ...SERIES.map((s) => ({ label: s.label, stroke: s.color, width: 1.6, dash: s.dash, points: { show: false }, spanGaps: false }))],
    plugins: [markers(() => marks, dark)],
  };
  const u = new uPlot(opts, [[1], [null], [null], [null], [null]], el);
  return {
    update(data) {
      marks = { ceiling: data.ceiling ?? null, floor: data.floor ?? 0 };
      u.setData([data.x, data.S, data.E, data.M, data.A]);
    },
    resize(w, h) { u.setSize({ width: w, height: h }); },
    redraw() { u.redraw(); },
    chart: u,
  };
}

/** The truncated-SVD error chart: e(r) on log y for the variant (and softmax). */
export function makeErrorChart(el, { width, height, dark }) {
  const axis = { stroke: () => themeColors(dark()).axis, grid: { stroke: () => themeColors(dark()).grid, width: 1 }, ticks: { show: false }, font: '11px system-ui, sans-serif' };
  let marks = { ceiling: null, floor: 0 };
  const u = new uPlot({
    width, height,
    legend: { show: true, live: false },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: { x: { time: false }, y: { distr: 3, range: (u, lo) => [Math.max(1e-16, Math.min(lo ?? 1e-8, 1) / 2), 1.5] } },
    axes: [{ ...axis, label: 'r (kept singular values)', labelSize: 14, size: 28 }, { ...axis, label: 'e(r)', labelSize: 14, size: 52, space: 30, values: (u, v) => v.map((x) => x == null ? '' : x.toExponential(0).replace('e+', 'e').replace('1e0', '1')) }],
    series: [{ label: 'r' },
      { label: 'variant M', stroke: SERIES[2].color, width: 1.6, points: { show: false } },
      { label: 'softmax A', stroke: SERIES[3].color, width: 1.6, dash: [2, 2], points: { show: false } }],
    plugins: [markers(() => marks, dark)],
  }, [[0], [null], [null]], el);
  return {
    update(data) { marks = { ceiling: data.ceiling ?? null, floor: 0 }; u.setData([data.x, data.M, data.A]); },
    resize(w, h) { u.setSize({ width: w, height: h }); },
    redraw() { u.redraw(); },
    chart: u,
  };
}
