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
import { t, tOwn, getLang } from '../i18n/i18n.mjs';
import { said } from '../state/notice.mjs';

/** The memories the recall view compares; each one's words are the catalogue's `mech.memory.ID`. */
export const MEMORIES = {
  linear: { knobs: { variant: 'retention', decay: 1 } },
  delta: { knobs: { variant: 'deltanet', decay: 1, beta: 1 } },
  decay: { knobs: { variant: 'retention', decay: 0.95 } },
  elu: { knobs: { variant: 'elu' } },
  performer: { knobs: { variant: 'performer', m: 256 } },
  softmax: { knobs: { variant: 'softmax' } },
  // the gated families (docs/gated.md): constant gates, per-channel ones drawn once, and the lab's own
  gdn: { knobs: { variant: 'gdn', decay: 0.99, beta: 1 } },
  kda: { knobs: { variant: 'kda', beta: 1 }, gates: { kind: 'uniform', lo: 0.9, hi: 1, seed: 1, perChannel: true } },
  fox: { knobs: { variant: 'fox', decay: 0.95 } },
  gates: { knobs: null }, // the lab's gated variant with its gates (memoryOf)
};
const memoryLabel = (id) => t(`mech.memory.${id}`);
const COLORS = { gdn: '#882255', kda: '#44aa99', fox: '#999933', gates: '#332288', linear: '#0072b2', delta: '#d55e00', decay: '#009e73', elu: '#e69f00', performer: '#56b4e9', softmax: '#cc79a7', quadratic: '#cc79a7', chunkwise: '#009e73' };
const VIEWS = ['stepper', 'scaling', 'recall', 'distill']; // their tabs' words: mech.tab.NAME
const SPEEDS = [1, 3, 10, 30];

/** The catalogue keys of elements' words (text or an attribute), so that a new language rewrites them (relabel). */
const WORDS = new WeakMap();
/** A word of the catalogue, as el() takes it in place of a string: written now, and again in another language. */
const K = (key, params = null) => ({ key, params });

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    const s = v?.key ? t(v.key, v.params) : v;
    if (v?.key) WORDS.set(e, { ...WORDS.get(e), [k]: v });
    if (k === 'text') e.textContent = s; else e.setAttribute(k, s);
  }
  e.append(...kids);
  return e;
}

/** Write the words of every element under `root` that el() made with K() again, in the current language. */
function relabel(root) {
  for (const e of root.querySelectorAll('*')) {
    for (const [k, v] of Object.entries(WORDS.get(e) ?? {})) {
      const s = t(v.key, v.params);
      if (k === 'text') e.textContent = s; else e.setAttribute(k, s);
    }
  }
}

/** Sentences in a row: a space after one that ends in Latin punctuation, none after a full-width one (Chinese). */
function sentences(...parts) {
  return parts.filter(Boolean).reduce((out, p) => (!out ? p : /[。；：！？）]$/.test(out) ? out + p : `${out} ${p}`), '');
}

/** The canvas font stack: the page's, then CJK faces, so that Chinese labels are drawn (docs/i18n.md). */
const CANVAS_FONTS = "system-ui, sans-serif, 'WenQuanYi Micro Hei', 'Noto Sans CJK SC'";

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

/** A gate per row on a fixed scale 0…1 (a reset at the bottom of the map, α = 1 at its top). */
function drawColumn(canvas, values, dark) {
  canvas.width = 1; canvas.height = values.length;
  const ctx = canvas.getContext('2d'), img = ctx.createImageData(1, values.length);
  paint(img.data, values, values.length, colorTable(dark ? 'magma' : 'viridis'), 0, 1);
  ctx.putImageData(img, 0, 0);
}

/** A view's note when uPlot did not load (charts.mjs): its charts come with the next draw that finds it. */
function chartsFailed(note, err) { note.textContent = t('mech.chartsFailed', { message: err.message }); }

/** The page's smallest text in CSS px (style.css's --fs-s: 18 in projector mode), for canvas labels. */
const smallPx = (box) => parseFloat(getComputedStyle(box).getPropertyValue('--fs-s')) || 12;

/**
 * A small log-log (or lin-log) uPlot chart; spec() gives {title, xlabel, ylabel, series: [{label, color, dash}]}
 * in the current language; marks: vertical lines. Its labels are drawn at the page's smallest text size, and
 * the chart is made again when that changes (projector mode) or the language does (remake); the y axis is
 * as wide as its longest tick label, so its title never covers them.
 */
function makeChart(box, spec, { xlog = true, ylog = true, marks = () => [] } = {}) {
  const width = () => Math.max(260, Math.min(520, box.clientWidth || 420));
  let px = smallPx(box), plot = null, data = [[], ...spec().series.map(() => [])];
  const font = () => `${px}px ${CANVAS_FONTS}`;
  const widest = (u, values) => { u.ctx.font = font(); return Math.max(0, ...(values ?? []).map((v) => u.ctx.measureText(v).width)) / devicePixelRatio; };
  const axis = (label) => ({ label, stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, font: font(), labelFont: `600 ${font()}`, labelSize: Math.round(px * 1.6) });
  // taller with larger text, so that the y axis's title fits beside the plot; room on the right for the
  // last tick label, centred on the plot's edge
  const height = () => Math.round(220 * Math.max(1, px / 13));
  const options = ({ title, xlabel, ylabel, series } = spec()) => ({
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
          ctx.fillStyle = m.color ?? '#888'; ctx.font = `${px * devicePixelRatio}px ${CANVAS_FONTS}`;
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
    set(d) {
      data = d;
      if (smallPx(box) !== px) { make(); return; }
      // made while its row was still filling (a table beside it), the chart may be wider than its box
      // now: it overlapped its neighbour (the distillation view at 1024 px)
      if (plot.width !== width()) plot.setSize({ width: width(), height: height() });
      plot.setData(d);
    },
    resize() { if (smallPx(box) !== px) make(); else plot.setSize({ width: width(), height: height() }); },
    /** Made again with spec()'s words: the language changed. */
    remake: make,
    get plot() { return plot; },
  };
}

const vecNorm = (x) => Math.sqrt(Array.from(x).reduce((s, v) => s + v * v, 0));
/** Row numbers as the page writes them: 0, 3, 5–7. */
function rowList(rows) {
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    let j = i;
    while (j + 1 < rows.length && rows[j + 1] === rows[j] + 1) j++;
    out.push(j > i ? `${rows[i]}–${rows[j]}` : `${rows[i]}`);
    i = j;
  }
  return out.join(', ');
}

/** The sentences under a gated family's state: the gate (a reset and which rows it cleared), β's write or dplr's
 *  read and write, the state's norm. */
function gatedWords(f) {
  const i = f.t - 1, single = f.alpha.length === 1, al = f.alpha;
  const amin = Math.min(...al), amax = Math.max(...al);
  const parts = [];
  if (f.family === 'fox') return t(f.reset ? 'mech.step.foxReset' : 'mech.step.foxGate', { i, alpha: fmt(al[0]) });
  if (f.reset) {
    const cleared = f.resetRows.length;
    // dplr reads S_{t−1} with a_t before the decay and writes it back along b_t: a reset leaves rank 1 of the past
    if (f.x) parts.push(t('mech.step.resetDplr', { i, alpha: fmt(Math.min(...f.resetRows.map((c) => al[single ? 0 : c]))) }));
    else parts.push(single || cleared === f.d ? t('mech.step.reset', { i, alpha: fmt(Math.min(...f.resetRows.map((c) => al[single ? 0 : c]))) })
      : t('mech.step.resetRows', { i, k: cleared, d: f.d, rows: rowList(f.resetRows), alpha: fmt(Math.min(...f.resetRows.map((c) => al[c]))) }));
  } else parts.push(single ? t('mech.step.gate', { i, alpha: fmt(al[0]) }) : t('mech.step.gateRows', { i, lo: fmt(amin), hi: fmt(amax) }));
  if (f.u) parts.push(t('mech.step.beta', { beta: fmt(f.beta), u: fmt(vecNorm(f.u)), v: fmt(vecNorm(f.v)) }));
  if (f.x) parts.push(t('mech.step.dplr', { x: fmt(vecNorm(f.x)), b: fmt(vecNorm(f.b)) }));
  parts.push(t('mech.step.norm', { now: fmt(f.stateNorm), prev: fmt(f.prevNorm) }));
  return sentences(...parts);
}

/** The gated stepper's numbers in mechanisms() (docs/inspection.md): new keys, absent for the other variants. */
function gatedSnapshot(f) {
  if (!f.family) return {};
  const arr = (x) => (x ? Array.from(x) : null);
  return {
    family: f.family, alpha: arr(f.alpha), beta: f.beta ?? null, reset: f.t > 0 ? f.reset : false, resetRows: f.resetRows ?? [],
    stateNorm: f.stateNorm ?? null, prevNorm: f.prevNorm ?? null, u: arr(f.u), x: arr(f.x), bias: arr(f.bias),
  };
}

/**
 * Mount the panel into `box`. env: {schema, onChange, request: () => the lab's request (state.mjs's requestOf,
 * with a model's head), worker: () => the mechanisms worker (created on first use), dark: () => bool,
 * useW(W | null, cols): make the trained W the lab's Hedgehog W}. Returns {sync(st), update(st), onMessage(m),
 * fail(message) (the worker failed: every view in flight is done with that error), snapshot(), resize()}.
 */
export function mountMechanisms(box, env) {
  let st = null, open = '', shownProjector = null, shownLang = getLang();
  const tabs = el('div', { class: 'mech-tabs', role: 'tablist', 'aria-label': K('mech.tabs') });
  const tabButtons = VIEWS.map((name) => {
    const b = el('button', { type: 'button', role: 'tab', id: `mech-tab-${name}`, 'aria-selected': 'false', 'aria-controls': `mech-${name}`, text: K(`mech.tab.${name}`) });
    b.addEventListener('click', () => env.onChange('mech', open === name ? '' : name, 'change'));
    tabs.append(b);
    return b;
  });
  const panes = Object.fromEntries(VIEWS.map((name) => [name, el('div', { class: 'mech-pane', id: `mech-${name}`, role: 'tabpanel', 'aria-labelledby': `mech-tab-${name}`, hidden: '' })]));
  const close = el('button', { type: 'button', class: 'mech-close', 'aria-label': K('mech.close'), title: K('mech.close.title'), text: '×' });
  close.addEventListener('click', () => env.onChange('mech', '', 'change'));
  box.append(el('div', { class: 'mech-head' }, el('h2', { id: 'mech-h', text: K('mech.heading') }), tabs, close), ...Object.values(panes));

  const out = { stepper: null, scaling: { points: [], done: false }, recall: { points: [], overwrite: null, done: false }, distill: { loss: [], chunk: null, done: true } };
  let seq = 0;
  const post = (msg) => { const id = ++seq; env.worker().postMessage({ ...msg, id }); return id; };

  // --- the recurrence stepper ---------------------------------------------------------------------------
  const S = {}; // its elements
  {
    const p = panes.stepper;
    S.first = el('button', { type: 'button', title: K('mech.step.first.title'), 'aria-label': K('mech.step.first'), text: '|◀' });
    S.back = el('button', { type: 'button', title: K('mech.step.back.title'), 'aria-label': K('mech.step.back'), text: '◀' });
    S.play = el('button', { type: 'button', title: K('mech.step.play.title'), 'aria-label': K('mech.step.play.aria'), 'aria-pressed': 'false', text: K('mech.step.play') });
    S.next = el('button', { type: 'button', title: K('mech.step.next.title'), 'aria-label': K('mech.step.next'), text: '▶' });
    S.speed = el('select', { 'aria-label': K('mech.step.speed') }, ...SPEEDS.map((s) => el('option', { value: String(s), text: K('mech.step.speedOption', { s }) })));
    S.speed.value = '3';
    S.range = el('input', { type: 'range', min: '0', max: '1', step: '1', 'aria-label': K('mech.step.range') });
    S.count = el('span', { class: 'mech-count', 'aria-live': 'polite' });
    S.note = el('p', { class: 'note' });
    for (const x of ['state', 'z', 'phi', 'v', 'o', 'row']) S[x] = el('canvas', { class: x === 'state' ? 'mech-grid' : 'mech-strip', role: 'img', 'aria-label': K(`mech.step.${x}.aria`) });
    S.cache = el('canvas', { class: 'mech-cache', role: 'img', 'aria-label': K('mech.step.cache.aria') });
    // the gated families (docs/mechanisms.md): the gate α_t as a column beside S's rows, k̃_t, and what was written
    S.alpha = el('canvas', { class: 'mech-alpha', role: 'img', 'aria-label': K('mech.step.alpha.aria') });
    for (const x of ['kt', 'u']) S[x] = el('canvas', { class: 'mech-strip', role: 'img', 'aria-label': K(`mech.step.${x}.aria`) });
    S.gated = el('p', { class: 'mech-gated', 'aria-live': 'polite' });
    S.bytes = el('p', { class: 'mech-bytes', 'aria-live': 'polite' });
    S.diff = el('p', { class: 'mech-diff' });
    const fig = (title, ...kids) => el('figure', { class: 'mech-fig' }, el('figcaption', { text: title }), ...kids);
    S.stateFig = fig(K('mech.step.stateFig'), S.state);
    S.stateCap = S.stateFig.querySelector('figcaption');
    S.zFig = fig(K('mech.step.zFig'), S.z);
    S.alphaFig = fig('α_t', S.alpha);
    S.ktFig = fig(K('mech.step.ktFig'), S.kt);
    S.uCap = el('figcaption', { text: K('mech.step.uFig') });
    S.uFig = el('figure', { class: 'mech-fig' }, S.uCap, S.u);
    p.append(el('div', { class: 'mech-controls' }, S.first, S.back, S.play, S.next, S.speed, S.range, S.count), S.note,
      el('div', { class: 'mech-row' }, S.stateFig, S.alphaFig,
        el('div', { class: 'mech-col' }, fig(K('mech.step.phiFig'), S.phi), S.ktFig, fig('v_t', S.v), S.uFig, S.zFig,
          fig(K('mech.step.oFig'), S.o), fig(K('mech.step.rowFig'), S.row), S.diff),
        fig(K('mech.step.cacheFig'), S.cache)), S.gated, S.bytes);
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
    WORDS.set(S.play, { text: K(playing ? 'mech.step.pause' : 'mech.step.play') });
    S.play.textContent = t(playing ? 'mech.step.pause' : 'mech.step.play');
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
    if (f.error) { S.note.textContent = t('mech.step.error', { error: said(f.error) }); S.note.classList.add('warn'); return; }
    S.note.classList.remove('warn');
    const variant = tOwn(`variant.${st.variant}`, env.schema.variantView(st.variant).label); // its name, not its link key
    const gated = f.kind === 'gated', fox = f.family === 'fox';
    S.note.textContent = fox ? t('mech.step.foxNote') : f.kind === 'cache' ? t('mech.step.cacheNote')
      : gated ? sentences(t('mech.step.gatedNote', { variant, d: f.d, dv: f.dv }), st.causal ? '' : t('mech.step.causal'))
      : sentences(t((f.z ?? []).some((x) => x !== 0) ? 'mech.step.stateNoteZ' : 'mech.step.stateNote', { variant, r: f.r, dv: f.dv }), st.causal ? '' : t('mech.step.causal'));
    S.stateFig.hidden = f.kind !== 'state' && !gated;
    const capKey = gated ? 'mech.step.stateFigGated' : 'mech.step.stateFig'; // a gated state has d rows, not r features
    WORDS.set(S.stateCap, { text: K(capKey) });
    S.stateCap.textContent = t(capKey);
    S.alphaFig.hidden = S.ktFig.hidden = !gated;
    S.uFig.hidden = !(gated && (f.u || f.x));
    S.gated.hidden = !f.family;
    S.zFig.hidden = f.kind !== 'state' || !(f.z ?? []).some((x) => x !== 0); // retention and the delta rule have no normaliser
    S.phi.parentElement.hidden = f.kind !== 'state';
    S.gated.textContent = f.family && f.t > 0 ? gatedWords(f) : '';
    S.count.textContent = t('mech.step.count', { t: f.t, n: f.n });
    if (f.t > 0) {
      if (gated) {
        drawGrid(S.state, f.S, f.d, f.dv, dark);
        // α per row: one value repeated for a scalar gate; on [0, 1] so that a reset is the map's bottom
        const al = Float64Array.from({ length: f.d }, (_, c) => f.alpha[f.alpha.length === 1 ? 0 : c]);
        drawColumn(S.alpha, al, dark);
        drawGrid(S.kt, f.kt, 1, f.d, dark);
        if (f.u || f.x) {
          drawGrid(S.u, f.u ?? f.x, 1, f.dv, dark);
          const cap = f.u ? 'mech.step.uFig' : 'mech.step.xFig';
          WORDS.set(S.uCap, { text: K(cap) });
          S.uCap.textContent = t(cap);
        }
      }
      if (f.kind === 'state') {
        drawGrid(S.state, f.S, f.r, f.dv, dark);
        drawGrid(S.z, f.z, 1, f.r, dark);
        drawGrid(S.phi, f.phiK, 1, f.r, dark);
      }
      drawGrid(S.v, f.v, 1, f.dv, dark);
      drawGrid(S.o, f.o, 1, f.dv, dark);
      drawGrid(S.row, f.row, 1, f.dv, dark);
      S.diff.textContent = t('mech.step.diff', { diff: fmt(f.diff), max: fmt(f.rowMax) });
    } else S.diff.textContent = t('mech.step.none');
    // the cache: [k | v] rows 0..t−1 in a canvas of n rows (at most 256: rows pooled)
    const rows = Math.min(f.n, 256), b = Math.ceil(f.n / rows);
    const c = S.cache, w = f.d + f.dv;
    c.width = w; c.height = rows;
    const ctx = c.getContext('2d');
    ctx.fillStyle = dark ? '#222' : '#eee'; ctx.fillRect(0, 0, w, rows);
    const used = Math.ceil((f.window > 0 ? Math.min(f.t, f.window) : f.t) / b), start = f.window > 0 ? Math.max(0, f.t - f.window) : 0;
    ctx.fillStyle = COLORS.softmax;
    if (f.bias) { // fox: entry j at the weight e^{bias_j} its bias gives it for the newest query
      for (let j = 0; j < f.t; j++) { ctx.globalAlpha = Math.max(0.04, Math.exp(f.bias[j])); ctx.fillRect(0, Math.floor(j / b), w, 1); }
      ctx.globalAlpha = 1;
    } else ctx.fillRect(0, Math.floor(start / b), w, used);
    const cache = f.cacheBytes, state = f.stateBytes;
    const words = { state: fmtBytes(state), t: f.t, cache: fmtBytes(cache), per: fmtBytes(4 * (f.d + f.dv)), window: f.window, equal: Math.round(state / (4 * (f.d + f.dv))) };
    S.bytes.textContent = state !== null ? t(f.window ? 'mech.step.bytesWindow' : 'mech.step.bytes', words)
      : t(f.window ? 'mech.step.cacheBytesWindow' : 'mech.step.cacheBytes', words);
  }

  // --- scaling ------------------------------------------------------------------------------------------
  const C = {};
  {
    const p = panes.scaling;
    C.budget = el('select', { 'aria-label': K('mech.scale.budget') }, ...['16', '64', '256'].map((m) => el('option', { value: m, text: `${m} MB` })));
    C.run = el('button', { type: 'button', text: K('mech.scale.measure') });
    C.stop = el('button', { type: 'button', text: K('mech.stop') });
    C.note = el('p', { class: 'note', 'aria-live': 'polite' });
    C.time = el('div', { class: 'mech-chart' });
    C.mem = el('div', { class: 'mech-chart' });
    p.append(el('div', { class: 'mech-controls' }, el('label', { text: K('mech.scale.budgetLabel') }), C.budget, C.run, C.stop), C.note, el('div', { class: 'mech-row' }, C.time, C.mem));
    C.budget.addEventListener('change', () => env.onChange('budget', C.budget.value, 'change'));
    C.run.addEventListener('click', () => { out.scaling.key = null; startScaling(); });
    C.stop.addEventListener('click', () => { env.worker().postMessage({ kind: MSG.MECH_CANCEL }); out.scaling.done = true; out.scaling.stopped = true; drawScaling(); });
  }
  const scalingSeries = () => [{ label: t('mech.scale.series.quadratic'), color: COLORS.quadratic, dash: [2, 3] }, { label: t('mech.scale.series.linear'), color: COLORS.linear }, { label: t('mech.scale.series.chunkwise'), color: COLORS.chunkwise, dash: [8, 3] }];
  const crossMark = () => { const c = out.scaling.crossover; return c?.n ? [{ x: c.n, label: t(c.r ? 'mech.scale.markR' : 'mech.scale.mark', { n: c.n, r: c.r }) }] : []; };
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
    timeChart ??= makeChart(C.time, () => ({ title: t('mech.scale.timeTitle'), xlabel: 'n', ylabel: 'ms', series: scalingSeries() }), { marks: crossMark });
    memChart ??= makeChart(C.mem, () => ({ title: t('mech.scale.memTitle'), xlabel: 'n', ylabel: t('mech.scale.bytes'), series: scalingSeries() }), { marks: crossMark });
    const sc = out.scaling, ns = [...new Set(sc.points.filter((p) => p.n).map((p) => p.n))].sort((a, b) => a - b);
    const col = (path, f) => ns.map((n) => { const q = sc.points.find((p) => p.n === n && p.path === path && !p.skipped); return q ? f(q) : null; });
    const paths = ['quadratic', 'linear', 'chunkwise'];
    timeChart.set([ns, ...paths.map((p) => col(p, (q) => Math.max(q.ms, 1e-3)))]);
    memChart.set([ns, ...paths.map((p) => col(p, (q) => q.bytes))]);
    const stops = sc.points.filter((p) => p.skipped === 'budget').map((p) => t('mech.scale.pathStopped', { path: t(`mech.path.${p.path}`), n: p.n, bytes: fmtBytes(p.bytes) }));
    const none = sc.points.filter((p) => p.skipped === 'none').map((p) => p.path).filter((p) => p !== 'chunkwise');
    const grown = sc.memory != null ? t('mech.scale.grown', { bytes: fmtBytes(Math.max(0, sc.memory - sc.base)) }) : '';
    // n > r is where linear attention can pay at all (O(n·r·d) against O(n²·d)); the crossover the
    // library counts lies beyond it by what the feature map and the normaliser cost (docs/mechanisms.md)
    const c = sc.crossover;
    const cross = c?.n ? t(c.r ? 'mech.scale.crossR' : 'mech.scale.cross', { n: c.n, r: c.r, ratio: c.r ? (c.n / c.r).toFixed(1) : '' }) : '';
    C.note.textContent = sentences(t(sc.done ? (sc.stopped || sc.error ? 'mech.scale.stopped' : 'mech.scale.done') : 'mech.scale.measuring'),
      t('mech.scale.budgetNote', { budget: fmtBytes(sc.budget), stops: stops.join(t('mech.scale.stopsJoin')) || t('mech.scale.nothingYet') }),
      none.length ? t('mech.scale.noPath', { paths: none.map((p) => t(`mech.path.${p}`)).join(t('mech.scale.pathsJoin')) }) : '', cross, grown, sc.error ?? '');
  }

  // --- memory collisions --------------------------------------------------------------------------------
  const R = {};
  {
    const p = panes.recall;
    R.boxes = Object.fromEntries(Object.entries(MEMORIES).map(([id, m]) => [id, el('input', { type: 'checkbox', id: `mem-${id}` })]));
    R.d = el('input', { type: 'number', min: '2', max: '512', step: '1', 'aria-label': K('mech.recall.d'), id: 'mem-d' });
    R.pairs = el('input', { type: 'number', min: '2', max: '4096', step: '1', 'aria-label': K('mech.recall.pairs'), id: 'mem-pairs' });
    R.scale = el('input', { type: 'number', min: '0.1', max: '100', step: '0.1', 'aria-label': K('mech.recall.scale'), id: 'mem-scale' });
    R.note = el('p', { class: 'note', 'aria-live': 'polite' });
    R.claim = el('p', { class: 'mech-claim' });
    R.byN = el('div', { class: 'mech-chart' });
    R.byD = el('div', { class: 'mech-chart' });
    R.over = el('table', { class: 'mech-table' });
    const checks = el('div', { class: 'mech-checks' }, ...Object.keys(MEMORIES).map((id) => el('label', { for: `mem-${id}` }, R.boxes[id], ' ', el('span', { text: K(`mech.memory.${id}`) }))));
    p.append(checks, el('div', { class: 'mech-controls' }, el('label', { for: 'mem-d', text: 'd' }), R.d, el('label', { for: 'mem-pairs', text: K('mech.recall.pairsLabel') }), R.pairs,
      el('label', { for: 'mem-scale', text: K('mech.recall.scale') }), R.scale), R.claim, R.note, el('div', { class: 'mech-row' }, R.byN, R.byD),
    el('h3', { text: K('mech.recall.overwrite') }), R.over);
    for (const [id, b] of Object.entries(R.boxes)) b.addEventListener('change', () => env.onChange('mems', Object.keys(R.boxes).filter((k) => (k === id ? b.checked : R.boxes[k].checked)).join(','), 'change'));
    R.d.addEventListener('change', () => env.onChange('mem_d', R.d.value, 'change'));
    R.pairs.addEventListener('change', () => env.onChange('pairs', R.pairs.value, 'change'));
    R.scale.addEventListener('change', () => env.onChange('mem_scale', R.scale.value, 'change'));
  }
  let byN = null, byD = null, recallIds = [];
  /** A memory as the worker takes it: {id, knobs, gates}; 'gates' is the lab's variant with its gates (null when
   *  the lab's variant is not a gated family). */
  const memoryOf = (id) => {
    if (id === 'gates') {
      const r = env.request();
      if (!r.gates) return null; // requestOf gives gates to the gated families only
      // read at the view's scale (0: 1 for the unit keys; fox as softmax, the chosen logit scale), not the lab's d^−½
      return { id, knobs: { ...r.knobs, scale: r.knobs.variant === 'fox' ? st.mem_scale : 0 }, gates: r.gates };
    }
    const scaled = id === 'softmax' || id === 'fox'; // softmax's memories read with the chosen logit scale
    return { id, knobs: scaled ? { ...MEMORIES[id].knobs, scale: st.mem_scale } : MEMORIES[id].knobs, gates: MEMORIES[id].gates };
  };
  function startRecall() {
    const all = (st.mems || '').split(',').filter((x) => MEMORIES[x]);
    const mems = all.map(memoryOf).filter(Boolean), ids = mems.map((m) => m.id);
    const key = JSON.stringify([mems, st.mem_d, st.pairs, st.mem_scale]);
    if (out.recall.key === key) return;
    const Ns = []; for (let N = 1; N < st.pairs; N *= 2) Ns.push(N); Ns.push(st.pairs);
    const ds = []; for (let d = 4; d < st.mem_d; d *= 2) ds.push(d); ds.push(st.mem_d);
    out.recall = { key, ids, Ns, ds, points: [], overwrite: null, done: false, noGates: all.includes('gates') && !ids.includes('gates') };
    recallIds = ids;
    if (!ids.length) { out.recall.done = true; drawRecall(); return; }
    out.recall.id = post({ kind: MSG.MECH_RECALL, memories: mems, Ns, d: st.mem_d, seeds: 3, N: st.pairs, ds, overwriteN: 8 });
    byN?.plot.destroy(); byD?.plot.destroy(); byN = byD = null;
    drawRecall();
  }
  function drawRecall() {
    if (!uPlotReady()) { loadUPlot().then(drawRecall, (err) => chartsFailed(R.note, err)); return; } // uPlot after the first view (charts.mjs)
    const rc = out.recall, ids = rc.ids ?? [];
    const label = (id) => (id === 'gates' ? t('mech.memory.gatesOf', { variant: tOwn(`variant.${st.variant}`, env.schema.variantView(st.variant).label) }) : memoryLabel(id));
    const series = () => [...ids.map((id) => ({ label: label(id), color: COLORS[id] })), { label: '√((N−1)/d)', color: '#888', dash: [3, 3] }];
    // N = d: where the memory-collisions lesson says a linear state's recall fails
    byN ??= makeChart(R.byN, () => ({ title: t('mech.recall.byN', { d: st.mem_d }), xlabel: t('mech.recall.pairs'), ylabel: t('mech.recall.error'), series: series() }), { ylog: false, marks: () => [{ x: st.mem_d, label: 'N = d' }] });
    byD ??= makeChart(R.byD, () => ({ title: t('mech.recall.byD', { N: st.pairs }), xlabel: 'd', ylabel: t('mech.recall.error'), series: series() }), { ylog: false });
    const pick = (axis, xs, f) => ids.map((id) => xs.map((x) => rc.points.find((p) => p.axis === axis && p.memory === id && f(p) === x)?.mean ?? null));
    byN.set([rc.Ns ?? [], ...pick('N', rc.Ns ?? [], (p) => p.N), (rc.Ns ?? []).map((N) => Math.sqrt((N - 1) / st.mem_d))]);
    byD.set([rc.ds ?? [], ...pick('d', rc.ds ?? [], (p) => p.d), (rc.ds ?? []).map((d) => Math.sqrt((st.pairs - 1) / d))]);
    const bad = rc.points.find((p) => p.status < 0);
    R.note.textContent = sentences(t('mech.recall.note', { status: t(rc.done ? (rc.error ? 'mech.recall.stopped' : 'mech.recall.done') : 'mech.recall.computing') }),
      bad ? t('mech.recall.bad', { memory: label(bad.memory), message: bad.message }) : '', rc.error ?? '',
      rc.noGates ? t('mech.recall.noGates') : '',
      // a reset's toll, honestly: the pairs before it are gone (their keys read only the later pairs' crosstalk)
      ...rc.points.filter((p) => p.forgotten && p.axis === 'N' && p.N === st.pairs).map((p) => t(p.memory === 'gates' && st.variant === 'dplr' && st.dplr_ab !== 'zero' ? 'mech.recall.forgottenDplr' : 'mech.recall.forgotten', { memory: label(p.memory), at: p.forgotten.at, before: fmt(p.forgotten.before), after: fmt(p.forgotten.after) })));
    const lin = rc.points.filter((p) => p.axis === 'N' && p.memory === 'linear'), del = rc.points.filter((p) => p.axis === 'N' && p.memory === 'delta');
    if (lin.length && del.length && rc.done) {
      const wins = lin.every((p) => { const q = del.find((x) => x.N === p.N); return q && (p.N === 1 || q.mean < p.mean); });
      R.claim.textContent = t(wins ? 'mech.recall.wins' : 'mech.recall.loses');
    } else R.claim.textContent = ids.includes('linear') && ids.includes('delta') ? '' : t('mech.recall.tick');
    R.over.replaceChildren(el('tr', {}, el('th', { text: t('mech.recall.memory') }), el('th', { text: t('mech.recall.newest') }), el('th', { text: t('mech.recall.old') })),
      ...(rc.overwrite ?? []).map((o) => el('tr', {}, el('td', { text: label(o.memory) }), el('td', { text: o.errNew == null ? o.message : fmt(o.errNew) }), el('td', { text: o.errOld == null ? '' : fmt(o.errOld) }))));
  }

  // --- Hedgehog distillation --------------------------------------------------------------------------------
  const D = {};
  {
    const p = panes.distill;
    D.steps = el('input', { type: 'number', min: '10', max: '5000', step: '10', id: 'mech-steps', 'aria-label': K('mech.distill.steps') });
    D.lr = el('input', { type: 'number', min: '0.001', max: '1', step: '0.005', id: 'mech-lr', 'aria-label': K('mech.distill.lr') });
    D.train = el('button', { type: 'button', text: K('mech.distill.train') });
    D.stop = el('button', { type: 'button', text: K('mech.stop') });
    D.reset = el('button', { type: 'button', text: K('mech.distill.reset') });
    D.use = el('button', { type: 'button', text: K('mech.distill.use'), disabled: '' });
    D.save = el('button', { type: 'button', text: 'W.npy', disabled: '' });
    D.note = el('p', { class: 'note', 'aria-live': 'polite' });
    D.loss = el('div', { class: 'mech-chart' });
    D.heat = el('canvas', { class: 'mech-grid mech-square', role: 'img', 'aria-label': K('mech.distill.heat') });
    D.table = el('table', { class: 'mech-table' });
    p.append(el('div', { class: 'mech-controls' }, el('label', { for: 'mech-steps', text: K('mech.distill.stepsLabel') }), D.steps, el('label', { for: 'mech-lr', text: K('mech.distill.lrLabel') }), D.lr, D.train, D.stop, D.reset, D.use, D.save),
      D.note, el('div', { class: 'mech-row' }, D.loss, el('figure', { class: 'mech-fig' }, el('figcaption', { text: K('mech.distill.heatFig') }), D.heat), D.table));
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
    const series = () => [{ label: t('mech.distill.series'), color: COLORS.delta }, { label: 'elu+1', color: COLORS.elu, dash: [4, 3] }, { label: 'Performer', color: COLORS.performer, dash: [2, 3] }];
    lossChart ??= makeChart(D.loss, () => ({ title: t('mech.distill.title'), xlabel: t('mech.distill.step'), ylabel: t('mech.distill.loss'), series: series() }), { xlog: false, ylog: true });
    const xs = d.loss.map((_, i) => i);
    lossChart.set([xs, d.loss, xs.map(() => cmp?.elu?.row_kl_mean ?? null), xs.map(() => cmp?.performer?.row_kl_mean ?? null)]);
    if (c?.M) { const g = new Float64Array(c.M); drawGrid(D.heat, g, c.size, c.size, env.dark()); }
    const row = (name, r) => el('tr', {}, el('td', { text: name }), el('td', { text: fmt(r?.row_kl_mean) }), el('td', { text: fmt(r?.error_fro_rel) }), el('td', { text: fmt(r?.row_entropy_mean) }));
    D.table.replaceChildren(el('tr', {}, el('th', { text: '' }), el('th', { text: t('mech.distill.kl') }), el('th', { text: t('mech.distill.err') }), el('th', { text: t('mech.distill.entropy') })),
      row(t('mech.distill.row', { t: d.t ?? 0 }), c?.readouts), row('elu+1', cmp?.elu), row('Performer', cmp?.performer), row('softmax', cmp?.softmax));
    const first = d.loss[0], last = d.lossNow ?? d.loss.at(-1);
    D.note.textContent = d.error ? t('mech.distill.stopped', { error: said(d.error) })
      : sentences(t('mech.distill.learns', { cols: d.cols ?? '…' }), first != null ? t('mech.distill.lossSoFar', { first: fmt(first), last: fmt(last), t: d.t }) : '',
        d.done ? '' : t('mech.distill.training'), d.W ? t(env.usingW() ? 'mech.distill.using' : 'mech.distill.canUse') : '');
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
      // on a phone's lesson stage the tabs scroll sideways: the chosen one is scrolled into the row
      const showTab = (b) => {
        const row = b.parentElement, r = b.getBoundingClientRect(), p = row.getBoundingClientRect();
        if (r.left < p.left) row.scrollLeft -= p.left - r.left; else if (r.right > p.right) row.scrollLeft += r.right - p.right;
      };
      st = s;
      open = s.mech;
      // every write guarded: this runs on each input of a drag, and an unchanged attribute or value
      // written again still costs style and layout work in the frame that shows the new heatmaps
      const put = (x, key, v) => { if (x[key] !== v) x[key] = v; };
      put(box, 'hidden', !open); // closed, the lab keeps to one screen
      env.opened?.(!!open);
      for (const [i, name] of VIEWS.entries()) {
        const sel = String(open === name);
        if (tabButtons[i].getAttribute('aria-selected') !== sel) {
          tabButtons[i].setAttribute('aria-selected', sel);
          if (open === name) showTab(tabButtons[i]);
        }
        put(panes[name], 'hidden', open !== name);
      }
      put(S.range, 'max', String(s.n)); put(S.range, 'value', String(s.step));
      put(C.budget, 'value', String(s.budget));
      for (const [id, b] of Object.entries(R.boxes)) put(b, 'checked', (s.mems || '').split(',').includes(id));
      // "the lab's gated variant" only where the lab's variant is gated (or it is already chosen): a phone's row less
      put(R.boxes.gates.parentElement, 'hidden', !R.boxes.gates.checked && !env.request().gates);
      put(R.d, 'value', String(s.mem_d)); put(R.pairs, 'value', String(s.pairs)); put(R.scale, 'value', String(s.mem_scale));
      put(D.steps, 'value', String(s.steps)); put(D.lr, 'value', String(s.lr));
      if (open !== 'stepper' && playing) togglePlay();
      // projector mode changes the text size: the charts draw their labels again at it (makeChart)
      if (s.projector !== shownProjector) { shownProjector = s.projector; for (const c of [timeChart, memChart, byN, byD, lossChart]) c?.resize(); }
      if (shownLang !== getLang()) { // the views' words in the new language: what el() wrote, the charts, each view's notes
        shownLang = getLang();
        relabel(box);
        for (const c of [timeChart, memChart, byN, byD, lossChart]) c?.remake();
        if (out.stepper) drawStepper();
        if (timeChart) drawScaling();
        if (byN) drawRecall();
        if (lossChart) drawDistill();
      }
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
        stepper: f && !f.error ? { t: f.t, n: f.n, kind: f.kind, r: f.r, diff: f.diff ?? null, stateBytes: f.stateBytes, cacheBytes: f.cacheBytes, status: f.status, ...gatedSnapshot(f) } : f ? { error: f.error } : null,
        scaling: { done: out.scaling.done, error: out.scaling.error ?? null, budget: out.scaling.budget ?? null, crossover: out.scaling.crossover ?? null, memoryGrowth: out.scaling.memory != null ? out.scaling.memory - out.scaling.base : null,
          points: out.scaling.points.map((p) => ({ n: p.n, path: p.path, ms: p.ms ?? null, bytes: p.bytes ?? null, skipped: p.skipped ?? null })) },
        recall: { done: out.recall.done, error: out.recall.error ?? null, points: out.recall.points.map((p) => ({ memory: p.memory, axis: p.axis, N: p.N, d: p.d, mean: p.mean, ...(p.forgotten ? { forgotten: p.forgotten } : {}) })), overwrite: out.recall.overwrite },
        distill: { done: out.distill.done, t: out.distill.t ?? 0, loss: [...out.distill.loss], lossNow: out.distill.lossNow ?? null, readouts: out.distill.chunk?.readouts ?? null, compare: out.distill.compare ?? null, error: out.distill.error ?? null, usingW: env.usingW() },
      };
    },
  };
}
