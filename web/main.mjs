// main.mjs: wiring. Controls set the state and mark it dirty; one requestAnimationFrame commit
// recomputes what changed (n ≤ 1024: the heatmaps here, in wasm; above: in the worker) and draws;
// spectra always come from the worker, latest request wins.
import katex from 'katex';
import 'katex/dist/katex.min.css';
import './style.css';
import { loadAttnviz, simdSupported } from './attnviz.mjs';
import {
  SCHEMA, BY_NAME, fromHash, toHash, coerce, normalise, changedKeys, firstDirtyStage, stageDirty,
  causalNote, rankCeiling, featureDim, VARIANT_LABELS,
} from './state.mjs';
import { Engine, MAIN_THREAD_MAX_N, MAIN_READOUTS_MAX_N, overlayKey } from './engine.mjs';
import { createResultGate } from './queue.mjs';
import { colorTable } from './render/colormap.mjs';
import { drawHeatmap, drawColorbar, sharedRange, symmetricRange, cellAt } from './render/heatmap.mjs';
import { fmt, fmtSigned, fmtMs } from './render/format.mjs';
import { normalisedSpectrum, errorCurve, rankAtRelative } from './render/spectrum.mjs';
import { makeSpectrumChart, makeErrorChart } from './render/charts.mjs';
import { READOUT_ROWS, rowReason, rowLabel, costLine } from './render/readouts.mjs';
import { VARIANT_TEX, VARIANT_HINT } from './render/formulas.mjs';
import { buildControls } from './ui/controls.mjs';

const $ = (id) => document.getElementById(id);
const wasmUrl = (name) => new URL(name, location.href).href;

// --- state --------------------------------------------------------------------------------------
const parsed = fromHash(location.hash);
let st = parsed.state;
let dirty = 'inputs';          // earliest dirty pipeline stage, or null
let release = true;            // a knob was released: ask for the accurate spectrum
let dragging = false;
let raf = 0;
const view = { frame: null, frameStale: false, readouts: null, readoutsStale: false, spec: null, overlay: {}, specStale: false, waitingFrame: false, doneId: 0, frameJob: 0, readoutsJob: 0 };
const problems = [...parsed.problems];

// measurements the benchmark and e2e tests read (window.attnviz)
const stats = { seq: 0, inputAt: new Map(), heatAt: new Map(), specAt: new Map(), reqSeq: new Map(), commits: 0 };

// --- compute ------------------------------------------------------------------------------------
let engine = null;             // the page's own engine (n ≤ MAIN_THREAD_MAX_N)
let worker = null;
let workerReady = false;
const gate = createResultGate();
const queued = [];             // jobs posted before the worker was ready

function startWorker() {
  worker = new Worker(new URL('./worker.mjs', import.meta.url), { type: 'module' });
  worker.onmessage = (e) => onWorkerMessage(e.data);
  worker.onerror = (e) => showNotice(`worker failed: ${e.message ?? 'unknown error'}`);
  worker.postMessage({ kind: 'init', simd: simdSupported(), simdUrl: wasmUrl('attnviz.wasm'), scalarUrl: wasmUrl('attnviz-scalar.wasm') });
}

function requestWorker(frame, drag, readouts = false) {
  // a newer job replaces a waiting one in the worker: carry over what is still owed to the page
  frame ||= view.waitingFrame && st.n > MAIN_THREAD_MAX_N;
  readouts ||= view.readoutsStale;
  const id = gate.next();
  stats.reqSeq.set(id, stats.seq);
  const job = { kind: 'job', id, st: { ...st }, drag, frame, readouts: frame || readouts };
  if (job.readouts) view.readoutsStale = true;
  if (frame) { view.waitingFrame = true; view.frameJob = id; }
  if (frame || readouts) view.readoutsJob = id;
  if (workerReady) worker.postMessage(job); else { queued.length = 0; queued.push(job); }
  view.specStale = true;
}

function onWorkerMessage(m) {
  if (m.kind === 'ready') {
    workerReady = true;
    for (const j of queued.splice(0)) worker.postMessage(j);
    return;
  }
  if (m.kind === 'fatal') { showNotice(`the worker could not load the WebAssembly module: ${m.message}`); return; }
  if (m.part === 'error') { showNotice(`computation failed: ${m.message}`); view.doneId = Math.max(view.doneId, m.id); return; }
  if (m.part === 'done') { if (!m.dropped) view.doneId = Math.max(view.doneId, m.id); return; }
  const part = m.part === 'overlay' ? `overlay-${m.which}` : m.part;
  const { deliver, stale } = gate.accept(m.id, part);
  if (!deliver) return;
  const seq = stats.reqSeq.get(m.id);
  if (m.part === 'frame') {
    view.frame = m; view.frameStale = m.id < view.frameJob; view.waitingFrame = m.id < view.frameJob;
    pendingMarks.heat = seq;
  } else if (m.part === 'spectrum') {
    view.spec = m; view.specStale = stale;
    pendingMarks.spec = seq;
  } else if (m.part === 'readouts') {
    view.readouts = m.readouts; view.readoutsStale = m.id < view.readoutsJob;
    redraw.readouts = true; schedule();
    return;
  } else if (m.part === 'overlay') {
    view.overlay[m.which] = m;
  }
  redraw.heat ||= m.part === 'frame';
  redraw.spec = true;
  redraw.readouts = true;
  schedule();
}

const redraw = { heat: false, spec: false, readouts: false, controls: true };
const pendingMarks = { heat: null, spec: null };

// --- input --------------------------------------------------------------------------------------
function onChange(name, value, phase) {
  if (phase === 'dragstart') { dragging = true; return; }
  if (name !== null) {
    const { value: v, problem } = coerce(BY_NAME[name], value, st);
    if (problem) showNotice(problem);
    const next = normalise({ ...st, [name]: v });
    const keys = changedKeys(st, next);
    st = next;
    const stage = firstDirtyStage(keys);
    if (stage && (dirty === null || stageDirty(dirty, stage) === false)) dirty = stage;
    if (stage === null && dirty === null && phase !== 'change') return;
    if (keys.length) { stats.seq += 1; stats.inputAt.set(stats.seq, performance.now()); }
  }
  if (phase === 'change') { dragging = false; release = true; }
  redraw.controls = true;
  schedule();
}

function schedule() { if (!raf) raf = requestAnimationFrame(commit); }

// --- commit: one per animation frame --------------------------------------------------------------
function commit() {
  raf = 0;
  stats.commits++;
  const tc = performance.now();
  const lap = [];
  const stage = dirty;
  dirty = null;
  if (redraw.controls) { syncChrome(); redraw.controls = false; }
  if (stage !== null || release) {
    writeUrl(release);
    const compute = stage !== null && stageDirty(stage, 'readouts');
    const small = st.n <= MAIN_THREAD_MAX_N;
    if (compute) {
      // the worker starts on the spectrum (and, above MAIN_THREAD_MAX_N, the matrices) while this
      // thread computes the heatmaps
      requestWorker(!small, dragging, st.n > MAIN_READOUTS_MAX_N);
      if (small && engine) {
        try {
          const withReadouts = st.n <= MAIN_READOUTS_MAX_N;
          view.frame = engine.frame(st, { readouts: withReadouts });
          if (withReadouts) { view.readouts = view.frame.readouts; view.readoutsStale = false; }
          view.frameStale = false; view.waitingFrame = false;
          redraw.heat = true; redraw.readouts = true;
          pendingMarks.heat = stats.seq;
        } catch (err) { showNotice(`computation failed: ${err.message}`); }
      }
    } else if (release) {
      requestWorker(false, false);
    }
    if (stage === 'display') { redraw.heat = true; redraw.spec = true; redraw.readouts = true; }
    release = false;
  }
  lap.push(performance.now() - tc);
  if (redraw.heat) { drawHeatmaps(); redraw.heat = false; }
  lap.push(performance.now() - tc);
  if (redraw.readouts) { drawReadouts(); redraw.readouts = false; }
  lap.push(performance.now() - tc);
  if (redraw.spec) { drawSpectra(); redraw.spec = false; }
  lap.push(performance.now() - tc);
  $('computing').hidden = !(view.waitingFrame && (!view.frame || view.frame.n !== st.n || st.n > MAIN_THREAD_MAX_N));
  setStatus();
  const t = performance.now();
  stats.lastCommit = { start: tc, laps: lap, total: t - tc };
  if (pendingMarks.heat !== null) { stats.heatAt.set(pendingMarks.heat, t); pendingMarks.heat = null; }
  if (pendingMarks.spec !== null) { stats.specAt.set(pendingMarks.spec, t); pendingMarks.spec = null; }
}

// The address bar follows the state, but not on every frame of a drag: replaceState costs
// milliseconds in Chromium, so it is written on release and otherwise once the input rests.
let urlTimer = 0;
function writeUrl(now) {
  clearTimeout(urlTimer);
  urlTimer = 0;
  const put = () => { urlTimer = 0; const h = `#${toHash(st)}`; if (location.hash !== h) history.replaceState(null, '', h); };
  if (now) put(); else urlTimer = setTimeout(put, 250);
}

// --- drawing ----------------------------------------------------------------------------------------
const tables = { seq: colorTable('viridis'), div: colorTable('rdbu') };
let heatRanges = null;

function drawHeatmaps() {
  const f = view.frame;
  if (!f || !f.M || !f.A) return;
  const r = sharedRange([f.M, f.A]);
  const dr = symmetricRange([f.D]);
  heatRanges = { r, dr };
  const data = (values) => ({ values, size: f.size });
  const bad = drawHeatmap($('hm-M'), data(f.M), { table: tables.seq, lo: r.lo, hi: r.hi }).nonfinite;
  drawHeatmap($('hm-A'), data(f.A), { table: tables.seq, lo: r.lo, hi: r.hi });
  drawHeatmap($('hm-D'), data(f.D), { table: tables.div, lo: dr.lo, hi: dr.hi });
  for (const [k, rg] of [['M', r], ['A', r], ['D', dr]]) {
    $(`cb-${k}-hi`).textContent = `${rg.clipped ? '≥ ' : ''}${k === 'D' ? fmtSigned(rg.hi) : fmt(rg.hi)}`;
    $(`cb-${k}-mid`).textContent = k === 'D' ? '0' : fmt((rg.lo + rg.hi) / 2);
    $(`cb-${k}-lo`).textContent = `${rg.clipped && k === 'D' ? '≤ ' : ''}${fmt(rg.lo)}`;
  }
  $('cap-M').textContent = `${VARIANT_LABELS[st.variant]}: matrix M${bad ? ` (${bad} cells Inf/NaN, magenta)` : ''}`;
  $('ds-note').textContent = f.b > 1
    ? `n = ${f.n} shown as ${f.size}×${f.size}: blocks of ${f.b}×${f.b}, block ${f.mode}`
    : '';
}

let charts = null;
const isDark = () => document.documentElement.dataset.theme === 'dark' ||
  (document.documentElement.dataset.theme === 'auto' && matchMedia('(prefers-color-scheme: dark)').matches);

function chartSize(el) { const b = el.getBoundingClientRect(); return { width: Math.max(200, Math.floor(b.width)), height: Math.max(80, Math.floor(b.height) - 26) }; }

function ensureCharts() {
  if (charts) return;
  const se = $('chart-spectrum'), ee = $('chart-error');
  charts = {
    spectrum: makeSpectrumChart(se, { ...chartSize(se), dark: isDark }),
    error: makeErrorChart(ee, { ...chartSize(ee), dark: isDark }),
  };
  new ResizeObserver(() => {
    charts.spectrum.resize(chartSize(se).width, chartSize(se).height);
    charts.error.resize(chartSize(ee).width, chartSize(ee).height);
  }).observe(se.parentElement);
}

function drawSpectra() {
  ensureCharts();
  const s = view.spec;
  const n = st.n;
  const ov = view.overlay;
  // an overlay is shown only for the inputs it was computed from (cached in the worker, so a drag of
  // the variant's knobs keeps it; new inputs hide it until its new spectrum arrives)
  const current = (k) => ov[k] && ov[k].key === overlayKey(st, k) && ov[k].sv.length && ov[k].sv.length <= n;
  const len = Math.max(s?.sv?.length ?? 0, ...['S', 'E', 'A'].map((k) => (current(k) ? ov[k].sv.length : 0)), 1);
  const x = Array.from({ length: len }, (_, i) => i + 1);
  const fromOv = (k) => (current(k) ? normalisedSpectrum(ov[k].sv, ov[k].floor, len) : new Array(len).fill(null));
  const M = s && s.sv.length <= n ? normalisedSpectrum(s.sv, s.floor, len) : new Array(len).fill(null);
  const ceiling = rankCeiling(st);
  charts.spectrum.update({ x, S: fromOv('S'), E: fromOv('E'), M, A: fromOv('A'),
    ceiling, floor: s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0 });
  const eM = s ? errorCurve(s.sv, s.fro2 ?? null) : [null];
  const eA = current('A') ? errorCurve(ov.A.sv, ov.A.fro2 ?? null) : [null];
  const elen = Math.max(eM.length, eA.length);
  const pad = (a) => { const out = a.slice(0, elen); while (out.length < elen) out.push(null); return out; };
  charts.error.update({ x: Array.from({ length: elen }, (_, i) => i), M: pad(eM), A: pad(eA), ceiling });
  const route = s ? `${s.route}${s.partial ? ': ranks are lower bounds' : ''}; ${fmtMs(s.ms)} in the worker` : 'computing…';
  const floorRel = s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0;
  const floorText = floorRel > 0 ? `noise floor ${floorRel.toExponential(0)}·σ₁ (dotted)` : 'noise floor dotted';
  $('spec-note').textContent = `${route}${ceiling ? ` · rank ceiling ${ceiling} (dashed)` : ''} · ${floorText}`;
}

function drawReadouts() {
  const r = { ...(view.readouts ?? {}), ...(view.spec?.readouts ?? {}) };
  const s = view.spec;
  const ctx = {
    n: st.n, tau: st.tau, ceiling: rankCeiling(st), partial: !!s?.partial, relTol: st.rtol,
    relRank: s ? rankAtRelative(s.sv, 10 ** st.rtol, s.floor) : null,
  };
  const rows = readoutRows();
  for (const row of READOUT_ROWS) {
    const tr = rows.get(row.id);
    const l = tr.firstChild, v = tr.children[1];
    const label = rowLabel(row, ctx);
    if (l.textContent !== label) l.textContent = label;
    const text = row.spectral && !s ? '…' : row.text(r, ctx);
    if (v.textContent !== text) v.textContent = text;
    const reason = rowReason(row, r);
    if (v.title !== reason) v.title = reason;
    tr.classList.toggle('stale', row.spectral ? view.specStale : view.readoutsStale);
  }
  $('cost').textContent = costLine(view.frame?.cost, st.n);
  $('readout-state').textContent = view.specStale ? 'spectral readouts updating…' : '';
}

let rowCache = null;
function readoutRows() {
  if (rowCache) return rowCache;
  rowCache = new Map();
  const tbody = document.querySelector('#readout-table tbody');
  for (const row of READOUT_ROWS) {
    const tr = document.createElement('tr');
    tr.dataset.readout = row.id;
    const l = document.createElement('td'); l.className = 'l'; l.textContent = row.label;
    const v = document.createElement('td'); v.className = 'v'; v.tabIndex = 0;
    const f = document.createElement('td'); f.className = 'f';
    f.innerHTML = katex.renderToString(row.tex, { throwOnError: false, output: 'html' });
    tr.append(l, v, f);
    tbody.append(tr);
    rowCache.set(row.id, tr);
  }
  return rowCache;
}

// --- chrome: controls, formula, notes, status ---------------------------------------------------------
let controls = null;
let shownVariant = null;
function syncChrome() {
  document.documentElement.dataset.theme = st.theme;
  $('theme').setAttribute('aria-label', `colour theme: ${st.theme}`);
  controls.sync(st);
  if (shownVariant !== st.variant) {
    shownVariant = st.variant;
    $('formula').innerHTML = katex.renderToString(VARIANT_TEX[st.variant], { throwOnError: false, output: 'html' });
    $('hint').textContent = VARIANT_HINT[st.variant];
  }
  const fd = featureDim(st);
  const cn = causalNote(st);
  $('causal-note').hidden = !cn && !(fd && fd > 65536);
  $('causal-note').textContent = [cn, fd && fd > 65536 ? `feature dimension ${fd.toLocaleString('en')} > 65,536: no linear path (the matrix comes from the closed form)` : null].filter(Boolean).join('. ');
}

function setStatus() {
  const f = view.frame;
  let text;
  if (!f) text = engine || workerReady ? 'computing…' : 'loading the WebAssembly module…';
  else {
    const m = f.status?.matrix;
    const warn = m && m.status !== 0 ? `${m.status < 0 ? 'error' : 'note'}: ${m.message}` : null;
    text = warn ?? `n = ${f.n}: matrices ${fmtMs(f.ms.total)}${st.n > MAIN_THREAD_MAX_N ? ' (worker)' : ''}`;
  }
  if ($('status').textContent !== text) $('status').textContent = text;
}

function showNotice(text) {
  const el = $('notice');
  el.textContent = text;   // data, never markup
  el.hidden = false;
  clearTimeout(showNotice.t);
  showNotice.t = setTimeout(() => { el.hidden = true; }, 8000);
}

// --- hover ----------------------------------------------------------------------------------------
function onHover(e) {
  const f = view.frame;
  if (!f || !f.M) return;
  const rect = e.target.getBoundingClientRect();
  const cell = cellAt(e.clientX - rect.left, e.clientY - rect.top, rect.width, rect.height, f.size);
  if (!cell) return;
  const k = cell.row * f.size + cell.col;
  const b = f.b, n = f.n;
  let text;
  if (b === 1) {
    const exact = engine && st.n <= MAIN_THREAD_MAX_N && engine.lab?.n === n ? engine.valueAt(cell.row, cell.col) : null;
    const m = exact ? exact.M : f.M[k], a = exact ? exact.A : f.A[k];
    text = `row ${cell.row}, col ${cell.col}: M ${fmt(m, 4)} · softmax ${fmt(a, 4)} · M − A ${fmtSigned(m - a, 3)}`;
  } else {
    const r0 = cell.row * b, c0 = cell.col * b;
    text = `rows ${r0}–${Math.min(n, r0 + b) - 1}, cols ${c0}–${Math.min(n, c0 + b) - 1} (block ${f.mode}): ` +
      `M ${fmt(f.M[k], 4)} · softmax ${fmt(f.A[k], 4)} · M − A ${fmtSigned(f.D[k], 3)}`;
  }
  $('hover').textContent = text;
}

// --- start ----------------------------------------------------------------------------------------
function start() {
  const groups = { input: $('ctl-input'), variant: $('ctl-variant'), readout: $('ctl-readout') };
  const byGroup = (g) => SCHEMA.filter((e) => e.group === g);
  const parts = Object.entries(groups).map(([g, el]) => buildControls(el, byGroup(g), st, onChange));
  controls = { sync: (s) => parts.forEach((p) => p.sync(s)) };
  drawColorbar($('cb-M'), tables.seq); drawColorbar($('cb-A'), tables.seq); drawColorbar($('cb-D'), tables.div);
  for (const id of ['hm-M', 'hm-A', 'hm-D']) $(id).addEventListener('mousemove', onHover);
  addEventListener('pointerup', () => { if (dragging) onChange(null, null, 'change'); });
  $('theme').addEventListener('click', () => {
    const order = ['auto', 'dark', 'light'];
    onChange('theme', order[(order.indexOf(st.theme) + 1) % 3], 'input');
    charts?.spectrum.redraw(); charts?.error.redraw();
  });
  $('share').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(location.href); $('share').textContent = 'copied'; } catch { $('share').textContent = 'see address bar'; }
    setTimeout(() => { $('share').textContent = 'copy link'; }, 1500);
  });
  addEventListener('hashchange', () => {
    if (location.hash.slice(1) === toHash(st)) return;
    const p = fromHash(location.hash);
    if (p.problems.length) showNotice(p.problems.join('; '));
    st = p.state; dirty = 'inputs'; release = true; redraw.controls = true; schedule();
  });
  if (problems.length) showNotice(problems.join('; '));
  readoutRows();
  startWorker();
  loadAttnviz({ simd: simdSupported(), simdUrl: wasmUrl('attnviz.wasm'), scalarUrl: wasmUrl('attnviz-scalar.wasm') })
    .then((av) => {
      engine = new Engine(av);
      $('engine').textContent = av.simd ? 'wasm SIMD' : 'wasm scalar';
      dirty = 'inputs'; release = true; schedule();
    })
    .catch((err) => showNotice(`could not load the WebAssembly module: ${err.message}`));
  schedule();
}

window.attnviz = {
  get state() { return { ...st }; },
  get stats() { return stats; },
  get view() { return view; },
  get charts() { return charts; },
  get ready() { return !!engine && workerReady; },
  get latestJob() { return gate.latest; },
  get idle() { return !raf && !urlTimer && dirty === null && view.doneId === gate.latest; },
};
start();
