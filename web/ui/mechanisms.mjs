// mechanisms.mjs (ui): the mechanism views (docs/mechanisms.md) under the lab: the recurrence stepper,
// scaling measured in this browser, memory collisions, and Hedgehog learning to mimic softmax. Every number
// comes from the mechanisms worker (web/workers/worker.mjs, web/compute/mechanisms.mjs); this module only asks and draws.
// The state keys it reads (web/state/state.mjs): mech (the open view), step, budget, pairs, mem_d, mems,
// mem_scale, steps, lr. It never blocks input: each view keeps only its newest request in flight.
import { loadUPlot, uPlotReady } from '../render/charts.mjs';
import { colorTable } from '../render/colormap.mjs';
import { paint } from '../render/heatmap.mjs';
import { fmt, fmtBytes, fmtMs } from '../render/format.mjs';
import { npyBytes } from '../io/export.mjs';
import { MSG } from '../workers/protocol.mjs';
import { NOTHING } from './panel.mjs';

export const MEMORIES = {
  linear: { label: 'linear state (retention, γ = 1)', knobs: { variant: 'retention', decay: 1 } },
  delta: { label: 'delta rule (η = 1)', knobs: { variant: 'deltanet', decay: 1, beta: 1 } },
  decay: { label: 'decayed state (γ = 0.95)', knobs: { variant: 'retention', decay: 0.95 } },
  elu: { label: 'elu+1 kernel', knobs: { variant: 'elu' } },
  performer: { label: 'Performer (m = 256)', knobs: { variant: 'performer', m: 256 } },
  softmax: { label: 'softmax over the stored pairs', knobs: { variant: 'softmax' } },
};
const COLORS = { linear: '#0072b2', delta: '#d55e00', decay: '#009e73', elu: '#e69f00', performer: '#56b4e9', softmax: '#cc79a7', quadratic: '#cc79a7', chunkwise: '#009e73' };
const VIEWS = [['stepper', 'recurrence'], ['scaling', 'cost as n grows'], ['recall', 'memory collisions'], ['distill', 'Hedgehog distillation']];
const SPEEDS = [1, 3, 10, 30];

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  e.append(...kids);
  return e;
}

/** A rows×cols heatmap of values on `canvas` (CSS size set by the stylesheet); signed values take the
 *  diverging map centred on 0. Rows above 256 are max-abs pooled so that spikes stay visible. */
function drawGrid(canvas, values, rows, cols, dark) {
  let r = rows, v = values;
  if (rows > 256) {
    const b = Math.ceil(rows / 256);
    r = Math.ceil(rows / b);
    v = new Float64Array(r * cols);
    for (let i = 0; i < rows; i++)
      for (let c = 0; c < cols; c++) {
        const k = ((i / b) | 0) * cols + c, x = values[i * cols + c];
        if (Math.abs(x) > Math.abs(v[k])) v[k] = x;
      }
  }
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < r * cols; i++) { lo = Math.min(lo, v[i]); hi = Math.max(hi, v[i]); }
  const signed = lo < 0;
  if (signed) { const m = Math.max(-lo, hi) || 1; lo = -m; hi = m; } else if (!(hi > lo)) hi = lo + 1;
  canvas.width = cols; canvas.height = r;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(cols, r);
  paint(img.data, v, r * cols, colorTable(signed ? 'rdbu' : dark ? 'magma' : 'viridis'), lo, hi);
  ctx.putImageData(img, 0, 0);
  return { lo, hi };
}

/** A view's note when uPlot did not load (charts.mjs): its charts come with the next draw that finds it. */
function chartsFailed(note, err) { note.textContent = `The charts did not load (${err.message}); they are tried again on the next update.`; }

/** The page's smallest text in CSS px (style.css's --fs-s: 18 in projector mode), for canvas labels. */
const smallPx = (box) => parseFloat(getComputedStyle(box).getPropertyValue('--fs-s')) || 12;

/**
 * A small log-log (or lin-log) uPlot chart; series [{label, color, dash}]; marks: vertical lines. Its
 * labels are drawn at the page's smallest text size, and the chart is made again when that changes
 * (projector mode); the y axis is as wide as its longest tick label, so its title never covers them.
 */
function makeChart(box, { title, xlabel, ylabel, series, xlog = true, ylog = true, marks = () => [] }) {
  const width = () => Math.max(260, Math.min(520, box.clientWidth || 420));
  let px = smallPx(box), plot = null, data = [[], ...series.map(() => [])];
  const font = () => `${px}px system-ui, sans-serif`;
  const widest = (u, values) => { u.ctx.font = font(); return Math.max(0, ...(values ?? []).map((v) => u.ctx.measureText(v).width)) / devicePixelRatio; };
  const axis = (label) => ({ label, stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, font: font(), labelFont: `600 ${font()}`, labelSize: Math.round(px * 1.6) });
  // taller with larger text, so that the y axis's title fits beside the plot; room on the right for the
  // last tick label, centred on the plot's edge
  const height = () => Math.round(220 * Math.max(1, px / 13));
  const options = () => ({
    title, width: width(), height: height(), padding: [Math.round(px), Math.round(px * 2.5), null, null],
    scales: { x: { time: false, distr: xlog ? 3 : 1 }, y: { distr: ylog ? 3 : 1 } },
    axes: [{ ...axis(xlabel), size: Math.round(px * 2.6) },
      { ...axis(ylabel), size: (u, values) => Math.ceil(widest(u, values) + 22) }],
    series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: s.dash ?? [], spanGaps: true, points: { show: true, size: 5 } }))],
    legend: { show: true, live: false },
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        for (const m of marks()) {
          const x = u.valToPos(m.x, 'x', true);
          if (!(x >= u.bbox.left && x <= u.bbox.left + u.bbox.width)) continue;
          ctx.strokeStyle = m.color ?? '#888'; ctx.setLineDash([4, 3]); ctx.lineWidth = devicePixelRatio;
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
          ctx.fillStyle = m.color ?? '#888'; ctx.font = `${px * devicePixelRatio}px system-ui, sans-serif`;
          ctx.textAlign = 'left'; ctx.textBaseline = 'alphabetic'; // not the axes' last settings
          ctx.fillText(m.label, x + 4 * devicePixelRatio, u.bbox.top + (px + 1) * devicePixelRatio);
        }
        ctx.restore();
      }],
    },
  });
  const make = () => { plot?.destroy(); px = smallPx(box); plot = new (uPlotReady())(options(), data, box); };
  make();
  return {
    set(d) { data = d; if (smallPx(box) !== px) make(); else plot.setData(d); },
    resize() { if (smallPx(box) !== px) make(); else plot.setSize({ width: width(), height: height() }); },
    get plot() { return plot; },
  };
}

/**
 * Mount the panel into `box`. env: {schema, onChange, request: () => the lab's request (state.mjs's requestOf,
 * with a model's head), worker: () => the mechanisms worker (created on first use), dark: () => bool,
 * useW(W | null, cols): make the trained W the lab's Hedgehog W}. Returns {sync(st), update(st), onMessage(m),
 * fail(message) (the worker failed: every view in flight is done with that error), snapshot(), resize()}.
 */
export function mountMechanisms(box, env) {
  let st = null, open = '', shownProjector = null;
  const tabs = el('div', { class: 'mech-tabs', role: 'tablist', 'aria-label': 'mechanism views' });
  const tabButtons = VIEWS.map(([name, label]) => {
    const b = el('button', { type: 'button', role: 'tab', id: `mech-tab-${name}`, 'aria-selected': 'false', 'aria-controls': `mech-${name}`, text: label });
    b.addEventListener('click', () => env.onChange('mech', open === name ? '' : name, 'change'));
    tabs.append(b);
    return b;
  });
  const panes = Object.fromEntries(VIEWS.map(([name]) => [name, el('div', { class: 'mech-pane', id: `mech-${name}`, role: 'tabpanel', 'aria-labelledby': `mech-tab-${name}`, hidden: '' })]));
  const close = el('button', { type: 'button', class: 'mech-close', 'aria-label': 'close the mechanism views', title: 'close (the lab fits one screen again)', text: '×' });
  close.addEventListener('click', () => env.onChange('mech', '', 'change'));
  box.append(el('div', { class: 'mech-head' }, el('h2', { id: 'mech-h', text: 'mechanisms' }), tabs, close), ...Object.values(panes));

  const out = { stepper: null, scaling: { points: [], done: false }, recall: { points: [], overwrite: null, done: false }, distill: { loss: [], chunk: null, done: true } };
  let seq = 0;
  const post = (msg) => { const id = ++seq; env.worker().postMessage({ ...msg, id }); return id; };

  // --- the recurrence stepper ---------------------------------------------------------------------------
  const S = {}; // its elements
  {
    const p = panes.stepper;
    S.first = el('button', { type: 'button', title: 'back to the start (Home)', 'aria-label': 'back to the start', text: '|◀' });
    S.back = el('button', { type: 'button', title: 'one token back (←)', 'aria-label': 'one token back', text: '◀' });
    S.play = el('button', { type: 'button', title: 'play (space)', 'aria-label': 'play', 'aria-pressed': 'false', text: '▶ play' });
    S.next = el('button', { type: 'button', title: 'one token on (→)', 'aria-label': 'one token on', text: '▶' });
    S.speed = el('select', { 'aria-label': 'tokens per second' }, ...SPEEDS.map((s) => el('option', { value: String(s), text: `${s} tok/s` })));
    S.speed.value = '3';
    S.range = el('input', { type: 'range', min: '0', max: '1', step: '1', 'aria-label': 'tokens read' });
    S.count = el('span', { class: 'mech-count', 'aria-live': 'polite' });
    S.note = el('p', { class: 'note' });
    S.state = el('canvas', { class: 'mech-grid', role: 'img', 'aria-label': 'the state S, r rows by dv columns' });
    S.z = el('canvas', { class: 'mech-strip', role: 'img', 'aria-label': 'the normaliser state z' });
    S.phi = el('canvas', { class: 'mech-strip', role: 'img', 'aria-label': 'the features of the newest key' });
    S.v = el('canvas', { class: 'mech-strip', role: 'img', 'aria-label': 'the newest value' });
    S.o = el('canvas', { class: 'mech-strip', role: 'img', 'aria-label': 'the output row by the recurrence' });
    S.row = el('canvas', { class: 'mech-strip', role: 'img', 'aria-label': 'the masked matrix row times V' });
    S.cache = el('canvas', { class: 'mech-cache', role: 'img', 'aria-label': 'softmax key/value cache, one row per token read' });
    S.bytes = el('p', { class: 'mech-bytes', 'aria-live': 'polite' });
    S.diff = el('p', { class: 'mech-diff' });
    const fig = (title, ...kids) => el('figure', { class: 'mech-fig' }, el('figcaption', { text: title }), ...kids);
    S.stateFig = fig('state S_t (r × dv): the same size at every token', S.state);
    S.zFig = fig('z_t (r): the normaliser\'s state', S.z);
    p.append(el('div', { class: 'mech-controls' }, S.first, S.back, S.play, S.next, S.speed, S.range, S.count), S.note,
      el('div', { class: 'mech-row' }, S.stateFig,
        el('div', { class: 'mech-col' }, fig('φ(k_t): the newest key\'s features', S.phi), fig('v_t', S.v), S.zFig,
          fig('o_t by the recurrence', S.o), fig('row t of the masked matrix · V', S.row), S.diff),
        fig('softmax\'s key/value cache: [k | v] rows, one per token read', S.cache)), S.bytes);
    S.first.addEventListener('click', () => setStep(0));
    S.back.addEventListener('click', () => setStep(st.step - 1));
    S.next.addEventListener('click', () => setStep(st.step + 1));
    S.play.addEventListener('click', () => togglePlay());
    S.range.addEventListener('input', () => setStep(Number(S.range.value)));
    p.tabIndex = 0;
    p.addEventListener('keydown', (e) => {
      if (e.target.tagName === 'SELECT' || e.target.tagName === 'INPUT') return;
      const k = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
      if (k) { setStep(st.step + k); e.preventDefault(); }
      else if (e.key === 'Home') { setStep(0); e.preventDefault(); }
      else if (e.key === 'End') { setStep(st.n); e.preventDefault(); }
      else if (e.key === ' ') { togglePlay(); e.preventDefault(); }
    });
  }
  let playing = 0, stepWanted = null, stepBusy = false, stepKey = null;
  function setStep(t) { env.onChange('step', Math.max(0, Math.min(st.n, t)), 'change'); }
  function togglePlay() {
    if (playing) { clearInterval(playing); playing = 0; }
    else {
      if (st.step >= st.n) setStep(0);
      playing = setInterval(() => { if (!stepBusy) { if (st.step >= st.n) togglePlay(); else setStep(st.step + 1); } }, 1000 / Number(S.speed.value));
    }
    S.play.setAttribute('aria-pressed', String(!!playing));
    S.play.textContent = playing ? '❚❚ pause' : '▶ play';
  }
  S.speed.addEventListener('change', () => { if (playing) { togglePlay(); togglePlay(); } });
  function requestStep() {
    const req = env.request();
    req.knobs = { ...req.knobs, causal: true };
    const key = JSON.stringify([req, st.step]);
    if (key === stepKey) return;
    stepWanted = { req, t: st.step, key };
    if (!stepBusy) sendStep();
  }
  function sendStep() {
    if (!stepWanted) return;
    stepBusy = true;
    const w = stepWanted; stepWanted = null;
    stepKey = w.key;
    post({ kind: MSG.MECH_STEP, req: w.req, t: w.t });
  }
  function drawStepper() {
    const f = out.stepper, dark = env.dark();
    if (!f) return;
    if (f.error) { S.note.textContent = `The stepper cannot run this variant: ${f.error}`; S.note.classList.add('warn'); return; }
    S.note.classList.remove('warn');
    const variant = st.variant;
    S.note.textContent = f.kind === 'cache'
      ? 'Softmax has no state of constant size: to produce o_t it keeps every key and value read so far (its cache), and its cost per token grows with t.'
      : `${variant}: the recurrent form reads one token at a time into a state of r = ${f.r} features × dv = ${f.dv}${(f.z ?? []).some((x) => x !== 0) ? ' (+ z, the normaliser\'s)' : ''}. ${st.causal ? '' : 'The stepper runs the causal form (the mask is on here). '}`;
    S.stateFig.hidden = f.kind !== 'state';
    S.zFig.hidden = f.kind !== 'state' || !(f.z ?? []).some((x) => x !== 0); // retention and the delta rule have no normaliser
    S.phi.parentElement.hidden = f.kind !== 'state';
    S.count.textContent = `t = ${f.t} of ${f.n}`;
    if (f.t > 0) {
      if (f.kind === 'state') {
        drawGrid(S.state, f.S, f.r, f.dv, dark);
        drawGrid(S.z, f.z, 1, f.r, dark);
        drawGrid(S.phi, f.phiK, 1, f.r, dark);
      }
      drawGrid(S.v, f.v, 1, f.dv, dark);
      drawGrid(S.o, f.o, 1, f.dv, dark);
      drawGrid(S.row, f.row, 1, f.dv, dark);
      S.diff.textContent = `max |o_t − (M·V)_t| = ${fmt(f.diff)} (of entries up to ${fmt(f.rowMax)}): the same row, to float rounding`;
    } else S.diff.textContent = 'No token read yet: step on.';
    // the cache: [k | v] rows 0..t−1 in a canvas of n rows (at most 256: rows pooled)
    const rows = Math.min(f.n, 256), b = Math.ceil(f.n / rows);
    const c = S.cache, w = f.d + f.dv;
    c.width = w; c.height = rows;
    const ctx = c.getContext('2d');
    ctx.fillStyle = dark ? '#222' : '#eee'; ctx.fillRect(0, 0, w, rows);
    const used = Math.ceil((f.window > 0 ? Math.min(f.t, f.window) : f.t) / b), start = f.window > 0 ? Math.max(0, f.t - f.window) : 0;
    ctx.fillStyle = COLORS.softmax;
    ctx.fillRect(0, Math.floor(start / b), w, used);
    const cache = f.cacheBytes, state = f.stateBytes;
    S.bytes.textContent = state !== null
      ? `state: ${fmtBytes(state)} at every token · softmax's cache after ${f.t} tokens: ${fmtBytes(cache)} (+${fmtBytes(4 * (f.d + f.dv))} per token${f.window ? `, at most ${f.window} tokens` : ''}); they are equal at t = ${Math.round(state / (4 * (f.d + f.dv)))}`
      : `softmax's cache after ${f.t} tokens: ${fmtBytes(cache)} (+${fmtBytes(4 * (f.d + f.dv))} per token${f.window ? `, at most ${f.window} tokens: a window` : ''})`;
  }

  // --- scaling ------------------------------------------------------------------------------------------
  const C = {};
  {
    const p = panes.scaling;
    C.budget = el('select', { 'aria-label': 'memory budget' }, ...['16', '64', '256'].map((m) => el('option', { value: m, text: `${m} MB` })));
    C.run = el('button', { type: 'button', text: 'measure' });
    C.stop = el('button', { type: 'button', text: 'stop' });
    C.note = el('p', { class: 'note', 'aria-live': 'polite' });
    C.time = el('div', { class: 'mech-chart' });
    C.mem = el('div', { class: 'mech-chart' });
    p.append(el('div', { class: 'mech-controls' }, el('label', { text: 'memory budget per measurement' }), C.budget, C.run, C.stop), C.note, el('div', { class: 'mech-row' }, C.time, C.mem));
    C.budget.addEventListener('change', () => env.onChange('budget', C.budget.value, 'change'));
    C.run.addEventListener('click', () => { out.scaling.key = null; startScaling(); });
    C.stop.addEventListener('click', () => { env.worker().postMessage({ kind: MSG.MECH_CANCEL }); out.scaling.done = true; out.scaling.stopped = true; drawScaling(); });
  }
  const scalingSeries = [{ label: 'softmax, quadratic (forms n×n)', color: COLORS.quadratic, dash: [2, 3] }, { label: 'linear path', color: COLORS.linear }, { label: 'chunkwise path', color: COLORS.chunkwise, dash: [8, 3] }];
  const crossMark = () => (out.scaling.crossover?.n ? [{ x: out.scaling.crossover.n, label: `ops cross: n ≈ ${out.scaling.crossover.n}${out.scaling.crossover.r ? ` (r = ${out.scaling.crossover.r})` : ''}` }] : []);
  let timeChart = null, memChart = null;
  function startScaling() {
    const req = env.request();
    const key = JSON.stringify([req.knobs, req.inputs.d, st.budget]);
    if (out.scaling.key === key) return;
    out.scaling = { key, points: [], done: false, crossover: null, budget: Number(st.budget) * 2 ** 20, id: 0 };
    out.scaling.id = post({ kind: MSG.MECH_SCALING, knobs: req.knobs, d: req.inputs.d, budget: out.scaling.budget });
    drawScaling();
  }
  function drawScaling() {
    if (!uPlotReady()) { loadUPlot().then(drawScaling, (err) => chartsFailed(C.note, err)); return; } // uPlot after the first view (charts.mjs)
    timeChart ??= makeChart(C.time, { title: 'time per call (this browser, median)', xlabel: 'n', ylabel: 'ms', series: scalingSeries, marks: crossMark });
    memChart ??= makeChart(C.mem, { title: 'memory per call (inputs, output, workspace)', xlabel: 'n', ylabel: 'bytes', series: scalingSeries, marks: crossMark });
    const sc = out.scaling, ns = [...new Set(sc.points.filter((p) => p.n).map((p) => p.n))].sort((a, b) => a - b);
    const col = (path, f) => ns.map((n) => { const q = sc.points.find((p) => p.n === n && p.path === path && !p.skipped); return q ? f(q) : null; });
    const paths = ['quadratic', 'linear', 'chunkwise'];
    timeChart.set([ns, ...paths.map((p) => col(p, (q) => Math.max(q.ms, 1e-3)))]);
    memChart.set([ns, ...paths.map((p) => col(p, (q) => q.bytes))]);
    const stops = sc.points.filter((p) => p.skipped === 'budget').map((p) => `the ${p.path} path stopped before n = ${p.n} (it would take ${fmtBytes(p.bytes)})`);
    const none = sc.points.filter((p) => p.skipped === 'none').map((p) => p.path).filter((p) => p !== 'chunkwise');
    const grown = sc.memory != null ? ` The worker's memory grew by ${fmtBytes(Math.max(0, sc.memory - sc.base))}.` : '';
    const cross = sc.crossover?.n ? ` By operation counts the linear path is cheaper than softmax's quadratic path from n ≈ ${sc.crossover.n}${sc.crossover.r ? ` (its feature dimension r = ${sc.crossover.r}: it pays only when n > r)` : ''}.` : '';
    C.note.textContent = `${sc.done ? (sc.stopped || sc.error ? 'Stopped.' : 'Done.') : 'Measuring in the worker, n = 64, 128, …'} Budget ${fmtBytes(sc.budget)} per measurement, never exceeded: ${stops.join('; ') || 'nothing reached it yet'}.${none.length ? ` No ${none.join(', ')} path for this variant.` : ''}${cross}${grown}${sc.error ? ` ${sc.error}` : ''}`;
  }

  // --- memory collisions --------------------------------------------------------------------------------
  const R = {};
  {
    const p = panes.recall;
    R.boxes = Object.fromEntries(Object.entries(MEMORIES).map(([id, m]) => [id, el('input', { type: 'checkbox', id: `mem-${id}` })]));
    R.d = el('input', { type: 'number', min: '2', max: '512', step: '1', 'aria-label': 'key dimension d', id: 'mem-d' });
    R.pairs = el('input', { type: 'number', min: '2', max: '4096', step: '1', 'aria-label': 'pairs N', id: 'mem-pairs' });
    R.scale = el('input', { type: 'number', min: '0.1', max: '100', step: '0.1', 'aria-label': 'softmax scale', id: 'mem-scale' });
    R.note = el('p', { class: 'note', 'aria-live': 'polite' });
    R.claim = el('p', { class: 'mech-claim' });
    R.byN = el('div', { class: 'mech-chart' });
    R.byD = el('div', { class: 'mech-chart' });
    R.over = el('table', { class: 'mech-table' });
    const checks = el('div', { class: 'mech-checks' }, ...Object.entries(MEMORIES).map(([id, m]) => el('label', { for: `mem-${id}` }, R.boxes[id], ` ${m.label}`)));
    p.append(checks, el('div', { class: 'mech-controls' }, el('label', { for: 'mem-d', text: 'd' }), R.d, el('label', { for: 'mem-pairs', text: 'up to N pairs' }), R.pairs,
      el('label', { for: 'mem-scale', text: 'softmax scale' }), R.scale), R.claim, R.note, el('div', { class: 'mech-row' }, R.byN, R.byD),
    el('h3', { text: 'one key written twice: k → v, later k → v′' }), R.over);
    for (const [id, b] of Object.entries(R.boxes)) b.addEventListener('change', () => env.onChange('mems', Object.keys(R.boxes).filter((k) => (k === id ? b.checked : R.boxes[k].checked)).join(','), 'change'));
    R.d.addEventListener('change', () => env.onChange('mem_d', R.d.value, 'change'));
    R.pairs.addEventListener('change', () => env.onChange('pairs', R.pairs.value, 'change'));
    R.scale.addEventListener('change', () => env.onChange('mem_scale', R.scale.value, 'change'));
  }
  let byN = null, byD = null, recallIds = [];
  const memoryKnobs = (id) => (id === 'softmax' ? { ...MEMORIES.softmax.knobs, scale: st.mem_scale } : MEMORIES[id].knobs);
  function startRecall() {
    const ids = (st.mems || '').split(',').filter((x) => MEMORIES[x]);
    const key = JSON.stringify([ids, st.mem_d, st.pairs, st.mem_scale]);
    if (out.recall.key === key) return;
    const Ns = []; for (let N = 1; N < st.pairs; N *= 2) Ns.push(N); Ns.push(st.pairs);
    const ds = []; for (let d = 4; d < st.mem_d; d *= 2) ds.push(d); ds.push(st.mem_d);
    out.recall = { key, ids, Ns, ds, points: [], overwrite: null, done: false };
    recallIds = ids;
    if (!ids.length) { out.recall.done = true; drawRecall(); return; }
    out.recall.id = post({ kind: MSG.MECH_RECALL, memories: ids.map((id) => ({ id, knobs: memoryKnobs(id) })), Ns, d: st.mem_d, seeds: 3, N: st.pairs, ds, overwriteN: 8 });
    byN?.plot.destroy(); byD?.plot.destroy(); byN = byD = null;
    drawRecall();
  }
  function drawRecall() {
    if (!uPlotReady()) { loadUPlot().then(drawRecall, (err) => chartsFailed(R.note, err)); return; } // uPlot after the first view (charts.mjs)
    const rc = out.recall, ids = rc.ids ?? [];
    const series = [...ids.map((id) => ({ label: MEMORIES[id].label, color: COLORS[id] })), { label: '√((N−1)/d)', color: '#888', dash: [3, 3] }];
    // N = d: where the memory-collisions lesson says a linear state's recall fails
    byN ??= makeChart(R.byN, { title: `recall error against N (d = ${st.mem_d})`, xlabel: 'pairs N', ylabel: 'mean ‖o − v‖/‖v‖', series, ylog: false, marks: () => [{ x: st.mem_d, label: 'N = d' }] });
    byD ??= makeChart(R.byD, { title: `recall error against d (N = ${st.pairs})`, xlabel: 'd', ylabel: 'mean ‖o − v‖/‖v‖', series, ylog: false });
    const pick = (axis, xs, f) => ids.map((id) => xs.map((x) => rc.points.find((p) => p.axis === axis && p.memory === id && f(p) === x)?.mean ?? null));
    byN.set([rc.Ns ?? [], ...pick('N', rc.Ns ?? [], (p) => p.N), (rc.Ns ?? []).map((N) => Math.sqrt((N - 1) / st.mem_d))]);
    byD.set([rc.ds ?? [], ...pick('d', rc.ds ?? [], (p) => p.d), (rc.ds ?? []).map((d) => Math.sqrt((st.pairs - 1) / d))]);
    const bad = rc.points.find((p) => p.status < 0);
    R.note.textContent = `${rc.done ? (rc.error ? 'Stopped' : 'Done') : 'Computing in the worker'}: N keys (random unit vectors in R^d) and values N(0, I) written in order, every key read back from the final memory; 3 draws per point.${bad ? ` ${bad.memory}: ${bad.message}` : ''}${rc.error ? ` ${rc.error}` : ''}`;
    const lin = rc.points.filter((p) => p.axis === 'N' && p.memory === 'linear'), del = rc.points.filter((p) => p.axis === 'N' && p.memory === 'delta');
    if (lin.length && del.length && rc.done) {
      const wins = lin.every((p) => { const q = del.find((x) => x.N === p.N); return q && (p.N === 1 || q.mean < p.mean); });
      R.claim.textContent = wins ? `The delta rule (η = 1) beats the linear state at every N here: it overwrites a key's value instead of adding to it.` : 'The delta rule does not beat the linear state at every N here.';
    } else R.claim.textContent = ids.includes('linear') && ids.includes('delta') ? '' : 'Tick the linear state and the delta rule to compare them.';
    R.over.replaceChildren(el('tr', {}, el('th', { text: 'memory' }), el('th', { text: 'error against v′ (newest)' }), el('th', { text: 'error against v (old)' })),
      ...(rc.overwrite ?? []).map((o) => el('tr', {}, el('td', { text: MEMORIES[o.memory].label }), el('td', { text: o.errNew == null ? o.message : fmt(o.errNew) }), el('td', { text: o.errOld == null ? '' : fmt(o.errOld) }))));
  }

  // --- Hedgehog distillation --------------------------------------------------------------------------------
  const D = {};
  {
    const p = panes.distill;
    D.steps = el('input', { type: 'number', min: '10', max: '5000', step: '10', id: 'mech-steps', 'aria-label': 'training steps' });
    D.lr = el('input', { type: 'number', min: '0.001', max: '1', step: '0.005', id: 'mech-lr', 'aria-label': 'learning rate' });
    D.train = el('button', { type: 'button', text: 'train' });
    D.stop = el('button', { type: 'button', text: 'stop' });
    D.reset = el('button', { type: 'button', text: 'reset W = I' });
    D.use = el('button', { type: 'button', text: 'use this W in the lab', disabled: '' });
    D.save = el('button', { type: 'button', text: 'W.npy', disabled: '' });
    D.note = el('p', { class: 'note', 'aria-live': 'polite' });
    D.loss = el('div', { class: 'mech-chart' });
    D.heat = el('canvas', { class: 'mech-grid mech-square', role: 'img', 'aria-label': 'the Hedgehog attention matrix as it learns' });
    D.table = el('table', { class: 'mech-table' });
    p.append(el('div', { class: 'mech-controls' }, el('label', { for: 'mech-steps', text: 'steps' }), D.steps, el('label', { for: 'mech-lr', text: 'Adam lr' }), D.lr, D.train, D.stop, D.reset, D.use, D.save),
      D.note, el('div', { class: 'mech-row' }, D.loss, el('figure', { class: 'mech-fig' }, el('figcaption', { text: 'Hedgehog matrix H (live)' }), D.heat), D.table));
    D.steps.addEventListener('change', () => env.onChange('steps', D.steps.value, 'change'));
    D.lr.addEventListener('change', () => env.onChange('lr', D.lr.value, 'change'));
    D.train.addEventListener('click', () => train(false));
    D.reset.addEventListener('click', () => train(true, 0));
    D.stop.addEventListener('click', () => { env.worker().postMessage({ kind: MSG.MECH_CANCEL }); });
    D.use.addEventListener('click', () => { const d = out.distill; if (d.W) env.useW(d.W, d.cols); drawDistill(); });
    D.save.addEventListener('click', () => {
      const d = out.distill;
      if (!d.W) return;
      const a = el('a', { download: 'hedgehog_W.npy', href: URL.createObjectURL(new Blob([npyBytes(d.W, [d.W.length / d.cols, d.cols])], { type: 'application/octet-stream' })) });
      document.body.append(a); a.click(); a.remove();
    });
  }
  let lossChart = null;
  function train(reset, steps = st.steps) {
    const req = env.request();
    out.distill.done = false;
    if (reset) Object.assign(out.distill, { loss: [], chunk: null, W: null, t: 0 });
    out.distill.id = post({ kind: MSG.MECH_DISTILL, req, steps, lr: st.lr, reset });
    drawDistill();
  }
  function drawDistill() {
    if (!uPlotReady()) { loadUPlot().then(drawDistill, (err) => chartsFailed(D.note, err)); return; } // uPlot after the first view (charts.mjs)
    const d = out.distill, c = d.chunk;
    const cmp = d.compare;
    const series = [{ label: 'Hedgehog: mean KL(softmax ‖ H)', color: COLORS.delta }, { label: 'elu+1', color: COLORS.elu, dash: [4, 3] }, { label: 'Performer', color: COLORS.performer, dash: [2, 3] }];
    lossChart ??= makeChart(D.loss, { title: 'loss while training (Adam)', xlabel: 'step', ylabel: 'mean row KL', series, xlog: false, ylog: true });
    const xs = d.loss.map((_, i) => i);
    lossChart.set([xs, d.loss, xs.map(() => cmp?.elu?.row_kl_mean ?? null), xs.map(() => cmp?.performer?.row_kl_mean ?? null)]);
    if (c?.M) { const g = new Float64Array(c.M); drawGrid(D.heat, g, c.size, c.size, env.dark()); }
    const row = (name, r) => el('tr', {}, el('td', { text: name }), el('td', { text: fmt(r?.row_kl_mean) }), el('td', { text: fmt(r?.error_fro_rel) }), el('td', { text: fmt(r?.row_entropy_mean) }));
    D.table.replaceChildren(el('tr', {}, el('th', { text: '' }), el('th', { text: 'KL to softmax' }), el('th', { text: 'error vs softmax' }), el('th', { text: 'row entropy' })),
      row(`Hedgehog, step ${d.t ?? 0}`, c?.readouts), row('elu+1', cmp?.elu), row('Performer', cmp?.performer), row('softmax', cmp?.softmax));
    const first = d.loss[0], last = d.lossNow ?? d.loss.at(-1);
    const useNote = env.usingW() ? ' The lab\'s Hedgehog now uses this W (a link cannot carry it: save W.npy and load it with --hedgehog-w).' : ' "use this W in the lab" makes it the Hedgehog variant\'s W above (a link cannot carry it).';
    D.note.textContent = d.error ? `Training stopped: ${d.error}`
      : `W (d × ${d.cols ?? '…'}) learns by Adam on the mean row KL between softmax (this scale and mask) and Hedgehog's attention, in the worker.${first != null ? ` Loss ${fmt(first)} → ${fmt(last)} after ${d.t} steps.` : ''}${d.done ? '' : ' Training…'}${d.W ? useNote : ''}`;
    D.use.disabled = !d.W; D.save.disabled = !d.W;
  }

  function onMessage(m) {
    if (m.kind === MSG.MECH_FRAME) {
      stepBusy = false;
      out.stepper = m.error ? { error: m.error } : m.frame;
      if (open === 'stepper') drawStepper();
      sendStep();
      return;
    }
    if (m.kind === MSG.MECH_POINT && m.view === 'scaling' && m.id === out.scaling.id) {
      if (m.point.crossover) { out.scaling.crossover = m.point.crossover; out.scaling.base = m.point.base; } else { out.scaling.points.push(m.point); out.scaling.memory = m.point.memory; }
      drawScaling();
    } else if (m.kind === MSG.MECH_POINT && m.view === 'recall' && m.id === out.recall.id) {
      out.recall.points.push(m.point); drawRecall();
    } else if (m.kind === MSG.MECH_DISTILL && m.id === out.distill.id) {
      const c = m.chunk;
      if (c.compare) { out.distill.compare = c.compare; out.distill.cols = c.cols; }
      out.distill.loss.push(...c.loss);
      Object.assign(out.distill, { chunk: c, t: c.t, lossNow: c.lossNow });
      drawDistill();
    } else if (m.kind === MSG.MECH_DONE) {
      if (m.view === 'scaling' && m.id === out.scaling.id) { Object.assign(out.scaling, { done: true, error: m.error, memory: m.memory ?? out.scaling.memory }); drawScaling(); }
      if (m.view === 'recall' && m.id === out.recall.id) { Object.assign(out.recall, { done: true, error: m.error, overwrite: m.overwrite ?? null }); drawRecall(); }
      if (m.view === 'distill' && m.id === out.distill.id) { Object.assign(out.distill, { done: true, error: m.error ?? null, W: m.W ?? out.distill.W, cols: m.cols ?? out.distill.cols, t: m.t ?? out.distill.t }); drawDistill(); }
    }
  }

  /**
   * The worker failed outside any job's answer (an uncaught error, an unreadable message, a rejection): no
   * answer will come for what is in flight, so each such view is done, with `message` as its error.
   */
  function fail(message) {
    if (stepBusy) { stepBusy = false; stepWanted = null; stepKey = null; out.stepper = { error: message }; if (open === 'stepper') drawStepper(); }
    if (!out.scaling.done && out.scaling.id) { Object.assign(out.scaling, { done: true, error: message }); if (open === 'scaling') drawScaling(); }
    if (!out.recall.done) { Object.assign(out.recall, { done: true, error: message }); if (open === 'recall') drawRecall(); }
    if (!out.distill.done) { Object.assign(out.distill, { done: true, error: message }); if (open === 'distill') drawDistill(); }
  }

  return {
    ...NOTHING, // a Panel (ui/panel.mjs): it draws as its worker's answers come
    name: 'mechanisms',
    /**
     * With the recall view open, once it has finished for the current state: each memory's mean error at
     * N = pairs, as `recall_<memory>` (what a lesson's prediction quotes); {} otherwise, or after 60 s.
     */
    async recallSettled() {
      for (const t0 = performance.now(); st?.mech === 'recall' && performance.now() - t0 < 60000;) {
        const rc = out.recall;
        const at = rc?.done ? rc.points.filter((p) => p.axis === 'N' && p.N === Number(st.pairs) && p.d === Number(st.mem_d)) : [];
        if (at.length) return Object.fromEntries(at.map((p) => [`recall_${p.memory}`, p.mean]));
        await new Promise((res) => setTimeout(res, 100));
      }
      return {};
    },
    /** Controls from the state (no computation). */
    sync(s) {
      st = s;
      open = s.mech;
      // every write guarded: this runs on each input of a drag, and an unchanged attribute or value
      // written again still costs style and layout work in the frame that shows the new heatmaps
      const put = (x, key, v) => { if (x[key] !== v) x[key] = v; };
      put(box, 'hidden', !open); // closed, the lab keeps to one screen
      env.opened?.(!!open);
      for (const [i, [name]] of VIEWS.entries()) {
        const sel = String(open === name);
        if (tabButtons[i].getAttribute('aria-selected') !== sel) tabButtons[i].setAttribute('aria-selected', sel);
        put(panes[name], 'hidden', open !== name);
      }
      put(S.range, 'max', String(s.n)); put(S.range, 'value', String(s.step));
      put(C.budget, 'value', String(s.budget));
      for (const [id, b] of Object.entries(R.boxes)) put(b, 'checked', (s.mems || '').split(',').includes(id));
      put(R.d, 'value', String(s.mem_d)); put(R.pairs, 'value', String(s.pairs)); put(R.scale, 'value', String(s.mem_scale));
      put(D.steps, 'value', String(s.steps)); put(D.lr, 'value', String(s.lr));
      if (open !== 'stepper' && playing) togglePlay();
      // projector mode changes the text size: the charts draw their labels again at it (makeChart)
      if (s.projector !== shownProjector) { shownProjector = s.projector; for (const c of [timeChart, memChart, byN, byD, lossChart]) c?.resize(); }
    },
    /** Start what the open view needs for this state (never during a drag: the caller waits for the release). */
    update(s) {
      st = s;
      if (open === 'stepper') requestStep();
      else if (open === 'scaling') startScaling();
      else if (open === 'recall') startRecall();
      else if (open === 'distill') { // a new head, scale or mask: train afresh (the same ones: keep what was learnt)
        const r = env.request(), key = JSON.stringify([r.inputs, r.knobs.scale, r.knobs.causal]);
        if (out.distill.key !== key) { out.distill.key = key; train(true); }
      }
    },
    onMessage,
    fail,
    resize() { for (const c of [timeChart, memChart, byN, byD, lossChart]) c?.resize(); },
    /** What the views show, for tests and host pages (docs/inspection.md, window.attnviz.mechanisms()). */
    snapshot() {
      const f = out.stepper;
      return {
        open,
        stepper: f && !f.error ? { t: f.t, n: f.n, kind: f.kind, r: f.r, diff: f.diff ?? null, stateBytes: f.stateBytes, cacheBytes: f.cacheBytes, status: f.status } : f ? { error: f.error } : null,
        scaling: { done: out.scaling.done, error: out.scaling.error ?? null, budget: out.scaling.budget ?? null, crossover: out.scaling.crossover ?? null, memoryGrowth: out.scaling.memory != null ? out.scaling.memory - out.scaling.base : null,
          points: out.scaling.points.map((p) => ({ n: p.n, path: p.path, ms: p.ms ?? null, bytes: p.bytes ?? null, skipped: p.skipped ?? null })) },
        recall: { done: out.recall.done, error: out.recall.error ?? null, points: out.recall.points.map((p) => ({ memory: p.memory, axis: p.axis, N: p.N, d: p.d, mean: p.mean })), overwrite: out.recall.overwrite },
        distill: { done: out.distill.done, t: out.distill.t ?? 0, loss: [...out.distill.loss], lossNow: out.distill.lossNow ?? null, readouts: out.distill.chunk?.readouts ?? null, compare: out.distill.compare ?? null, error: out.distill.error ?? null, usingW: env.usingW() },
      };
    },
  };
}
