// main.mjs: wiring. Controls set the state and mark it dirty; one requestAnimationFrame commit
// recomputes what changed and draws: n ≤ MAIN_THREAD_MAX_N the heatmaps and plain readouts here, in
// wasm; above it the heatmaps and then the plain readouts in the frame worker (above FRAME_WORKER_MAX_N a
// drag gets quick frames and the rest on release); spectra and overlays in the spectrum worker.
// Latest request wins in each worker; stale results are dropped.
//
// The page starts once its own wasm module is loaded: the schema (state.mjs) is built from the module's
// registry (av.registry), so the variant list, the knob controls, their ranges and defaults, the causal
// rules, the rank ceiling and the feature dimension are the library's. The compute modules (engine.mjs
// here and in the workers) get requests (state.mjs's requestOf: inputs and knobs), never the state.
import './style.css';
import { loadAttnviz, simdSupported } from './attnviz.mjs';
import LabWorker from './worker.mjs?worker&inline';
import { wasmSources } from './wasm-source.mjs';
import { buildSchema, stageDirty, listOf } from './state.mjs';
import { listenForHosts } from './messages.mjs';
import { Engine, MAIN_THREAD_MAX_N, FRAME_WORKER_MAX_N, overlayKey } from './engine.mjs';
import { createResultGate, createHold } from './queue.mjs';
import { colorTable } from './render/colormap.mjs';
import { drawHeatmap, drawColorbar, sharedRange, symmetricRange } from './render/heatmap.mjs';
import { fmt, fmtSigned, fmtMs, fmtWhole } from './render/format.mjs';
import { rankAtRelative, chartData, LOG_X_MIN_N } from './render/spectrum.mjs';
import { makeSpectrumChart, makeErrorChart, floorDrawn, SERIES, loadUPlot, uPlotReady } from './render/charts.mjs';
import { READOUT_ROWS, rowReason, rowMark, rowLabel, costLine } from './render/readouts.mjs';
import { entropyBars, entropyNote, drawEntropyHistogram } from './render/entropy.mjs';
import { UNIFORM_NAME, uniformFormula } from './entropy-baseline.mjs';
import { buildControls } from './ui/controls.mjs';
import { createInspector } from './inspect.mjs';
import { typeset } from './render/tex.mjs';
import { expandPreset, withPreset } from './presets.mjs';
import { mountLessons } from './ui/lessons.mjs';
import { sweepPlan } from './sweep.mjs';
import { mountSweepPanel } from './ui/sweep-panel.mjs';
import { mountExplain } from './ui/explain-popover.mjs';
import { mountExport } from './ui/export-menu.mjs';
import { ownTensors } from './own-inputs.mjs';
import { gridOf, cellTokens, gridCellAt, spanText } from './tokens.mjs';
import { mountTokenAxes } from './ui/token-axes.mjs';
import { mountZoom } from './ui/zoom.mjs';
import { noticeText, NOTICE_MAX } from './notice.mjs';
import { mountMechanisms } from './ui/mechanisms.mjs';
import { mountOverview } from './ui/overview.mjs';

const $ = (id) => document.getElementById(id);

// --- state --------------------------------------------------------------------------------------
let av = null;                 // the page's own wasm module (web/attnviz.mjs), loaded by start()
let schema = null;             // buildSchema(av.registry)
let st = null;                 // the state, once the schema exists
let dirty = 'inputs';          // earliest dirty pipeline stage, or null
let release = true;            // a knob was released: ask for the accurate spectrum
let dragging = false;
let raf = 0;
let lesson = null;            // the open lesson's name (web/presets.mjs), or null; the link carries it as preset=
let lessons = null;           // the menu and panel (web/ui/lessons.mjs)
let hosts = null;             // host pages' messages (web/messages.mjs)
let exporter = null;          // the export menu (web/ui/export-menu.mjs)
let overview = null;          // the overview of every layer and head (web/ui/overview.mjs)
const view = { frame: null, readouts: null, readoutsStale: false, spec: null, overlay: {}, specStale: false, waitingFrame: false, frameJob: 0, readoutsJob: 0, localJob: 0 };

// Readouts behind the newest request are dimmed once nothing newer has reached the screen for
// STALE_GRACE_MS: during a drag at n = 1024 a newer result arrives every few frames (each starts the grace
// again), so the table neither flickers on every input nor costs the frame that draws the new heatmaps a
// restyle and layout of it; a longer wait (the readouts of a drag above n = 1024 come on release, a
// spectrum at n = 4096 takes seconds) is dimmed as before. The timer sets the flag itself (no clock
// comparison in the commit, so a coarse clock cannot skip the dimming).
const STALE_GRACE_MS = 150;
const stale = { readoutsStale: { timer: 0, shown: false }, specStale: { timer: 0, shown: false } };
/**
 * Set view.readoutsStale or view.specStale. `delivered`: a result for this part just reached the page
 * (flag: it is still behind the newest request): what is shown was renewed, so its grace starts again.
 */
function setStale(key, flag, delivered = false) {
  view[key] = flag;
  const s = stale[key];
  if (flag && !delivered && (s.timer || s.shown)) return; // already waiting, or already dimmed
  clearTimeout(s.timer);
  s.timer = 0;
  if (s.shown) { s.shown = false; redraw.readouts = true; }
  if (flag) s.timer = setTimeout(() => { s.timer = 0; s.shown = true; redraw.readouts = true; schedule(); }, STALE_GRACE_MS);
}
/** Whether to show view[key]'s results as stale (dimmed). */
const staleShown = (key) => view[key] && stale[key].shown;

// a real model (docs/model.md): its files are read in the sweep worker, which runs the forward pass per
// text; the capture (every layer's and head's Q, K, V) is sent to each engine, and requests name it
const modelView = { config: null, tensors: null, ids: null, pieces: null, ms: 0, busy: false, loadId: 0, runId: 0, error: null, synthetic: null };

// the reader's own Q, K, V (web/own-inputs.mjs): read on this thread, sent to every engine like a capture
const ownView = { tensors: null, names: null, seq: 0 };

/** The tensors the state's source shows: a model's capture, the reader's own, or none (the generators). */
const activeTensors = (s) => (s.src === 'model' ? modelView.tensors : s.src === 'file' ? ownView.tensors : null);
/** The token pieces of the inputs shown: a model's text, or the tokens.json beside own Q, K, V; else null. */
const tokenPieces = () => (st.src === 'model' ? (modelView.tensors ? modelView.pieces : null) : st.src === 'file' ? ownView.tensors?.pieces ?? null : null);

/** What the engines compute for a state: state.mjs's request, with one head of the loaded tensors as inputs,
 *  and Hedgehog's trained W (the distillation view's "use this W") while it fits the inputs' d. */
function requestOf(s) {
  const req = schema.requestOf(s);
  const t = activeTensors(s);
  if (t) req.inputs = { tensors: t.key, layer: s.layer, head: s.head, n: t.n, d: t.d };
  if (trainedW && req.knobs.variant === 'hedgehog' && trainedW.W.length === req.inputs.d * trainedW.cols) req.knobs.hedgehog_w = trainedW.W;
  return req;
}

// --- the mechanism views (web/ui/mechanisms.mjs, docs/mechanisms.md), in a worker of their own --------------
let mechPanel = null;
let mechWorker = null;
let trainedW = null; // {W: Float32Array (d×cols), cols}: the lab's Hedgehog W, from the distillation view; never in a link
function makeMechWorker() {
  const w = new LabWorker({ name: 'attnviz mechanisms' });
  // a failure outside a job's answer means no answer will come: the views in flight settle with it
  const failed = (message) => { showNotice(message); mechPanel.fail(message); };
  w.onmessage = ({ data: m }) => { if (m.kind === 'failed') failed(`the mechanisms worker failed: ${m.message}`); else mechPanel.onMessage(m); };
  w.onerror = (e) => failed(`the mechanisms worker failed: ${workerError(e)}`);
  w.onmessageerror = () => failed('a message from the mechanisms worker could not be read');
  w.postMessage({ kind: 'init', module: av.module, memoryMax: av.memoryMax, simd: av.simd });
  for (const t of [ownView.tensors, modelView.tensors]) if (t) w.postMessage({ kind: 'tensors', tensors: t });
  return w;
}

/** What a figure's caption says of loaded inputs: the model and its text's length, or the files; null for the
 *  generators. `all`: of every head (the overview), so no layer and head are named. */
function inputsLabel(all = false) {
  const t = activeTensors(st);
  if (!t) return null;
  const where = !all && (t.layers > 1 || t.heads > 1) ? `layer ${st.layer}, head ${st.head} of ` : '';
  if (st.src === 'model') {
    const c = modelView.config;
    return `${where}a ${c.layers}-layer llama2.c model (dim ${c.dim}) on ${t.n} tokens ("${(modelView.pieces ?? []).slice(1, 7).join('').trim()}…")`;
  }
  return `${where}${(ownView.names ?? []).join(', ')}`;
}

/** The state as the loaded tensors shape it: n and d theirs, layer and head within their ranges. */
function fitModel(s) {
  const t = activeTensors(s);
  if (!t) return s;
  // normalise again: knobs bounded by n (Linformer's s, Nyström's landmarks) follow the text's length
  return schema.normalise({ ...s, n: t.n, d: t.d, layer: Math.min(Math.max(0, s.layer), t.layers - 1), head: Math.min(Math.max(0, s.head), t.heads - 1) });
}

// measurements the benchmark and e2e tests read (window.attnviz)
const stats = { seq: 0, inputAt: new Map(), heatAt: new Map(), plainAt: new Map(), specAt: new Map(), reqSeq: new Map() };

// --- compute ------------------------------------------------------------------------------------
let engine = null;             // the page's own engine (n ≤ MAIN_THREAD_MAX_N)
const gate = createResultGate();
// the spectrum worker's job while the frame worker computes (releaseSpectrum); during a drag faster than
// the frame worker, it goes anyway every SPECTRUM_MAX_HOLD_MS, so that a spectrum still follows the drag
const SPECTRUM_MAX_HOLD_MS = 120;
const spectrumHold = createHold({ maxWaitMs: SPECTRUM_MAX_HOLD_MS });
let workers = null;            // {spectrum, frame}: see makeWorker

// the inspection API (web/inspect.mjs, docs/inspection.md): each part of the view is tagged with the
// request it was computed for ({key: requestOf as JSON, drag}), so a snapshot never mixes states
const tags = { frame: null, plain: null, spec: null };
const jobOf = new Map();       // request id → its tag (the newest 64)
const inspector = createInspector(() => {
  const quiet = st && !raf && !urlTimer && !chartsWaiting && dirty === null && !release && !dragging && !modelView.busy && !zoom?.pending &&
    Object.values(workers).every((w) => w.done >= w.posted);
  return quiet ? { hash: schema.toHash(st), full: schema.toHash(st, { complete: true }), address: location.hash, req: requestOf(st), parts: { frame: view.frame, plain: view.readouts, spec: view.spec }, tags, av,
    tokens: tokenPieces()?.slice() ?? null } : null;
});

/**
 * A worker with its state: ready, the job waiting for it to be ready, the newest id posted and done.
 * The worker's script is inlined in the page's bundle and started from a blob: URL (Vite's
 * `?worker&inline`), and it instantiates the page's already compiled module: nothing to fetch, so the
 * page works from any origin, from file:// and as one file (scripts/single.mjs).
 */
function makeWorker(name) {
  const w = { name, ready: false, failed: false, queued: null, posted: 0, done: 0 };
  w.worker = new LabWorker({ name: `attnviz ${name}` });
  w.worker.onmessage = (e) => onWorkerMessage(w, e.data);
  w.worker.onerror = (e) => workerFailed(w, `the ${name} worker failed: ${workerError(e)}`);
  w.worker.onmessageerror = () => workerFailed(w, `a message from the ${name} worker could not be read`);
  w.worker.postMessage({ kind: 'init', module: av.module, memoryMax: av.memoryMax, simd: av.simd });
  return w;
}

/**
 * A frame or spectrum worker failed outside a job's own error answer (an uncaught error, a rejection, a
 * message that could not be read): what it owes will not come, so the page stops waiting for it and a
 * snapshot settles without those results (their readouts' reasons point at the notice).
 */
function workerFailed(w, sentence) {
  showNotice(sentence);
  w.done = w.posted;
  if (w === workers?.frame) { w.failed = true; releaseSpectrum(); zoom?.abandon(); } // no answer will come: no more waiting for one
  schedule();
  inspector.notify();
}

function post(w, job) {
  w.posted = job.id;
  if (w.ready) w.worker.postMessage(job); else w.queued = job;
}

/**
 * One request (one id) to the workers for the current state. `compute`: the inputs or knobs changed;
 * otherwise a knob was released (the accurate spectrum). A newer job replaces a waiting one in a
 * worker, so what is still owed to the page (a frame, readouts) is carried over.
 */
function requestWorkers(compute, drag) {
  const id = gate.next();
  stats.reqSeq.set(id, stats.seq);
  const n = st.n;
  const here = n <= MAIN_THREAD_MAX_N;
  const frame = !here && (compute || view.waitingFrame);
  const readouts = !here && (compute || view.readoutsStale);
  if (frame) { view.waitingFrame = true; view.frameJob = id; }
  if (readouts) { setStale('readoutsStale', true); view.readoutsJob = id; }
  // the frame worker computes the heatmaps at every n above the page's and follows them with the readouts:
  // it holds M and A already, and the spectrum worker's core stays free for the spectrum. Above
  // FRAME_WORKER_MAX_N a drag gets quick frames (no n×n matrix) and the readouts wait for the release.
  const viaFrameWorker = frame;
  const quick = frame && !!drag && n > FRAME_WORKER_MAX_N;
  const readoutsByFrame = viaFrameWorker && readouts && !quick;
  const req = requestOf(st);
  jobOf.set(id, { key: JSON.stringify(req), drag: !!drag });
  if (jobOf.size > 64) jobOf.delete(jobOf.keys().next().value);
  if (viaFrameWorker) post(workers.frame, { kind: 'job', id, req, drag, frame: true, quick, readouts: readoutsByFrame, spectrum: false });
  const spectrumJob = { kind: 'job', id, req, drag, frame: false, readouts: readouts && !readoutsByFrame && !quick };
  // a full frame and its readouts have the machine's cores first (two here: the frame worker's and the
  // page's): the spectrum job waits until they arrive (releaseSpectrum), so that it does not slow them
  // (docs/performance.md, "The page at n = 1024"; no target for the spectrum at these n)
  if (viaFrameWorker && !quick && !workers.frame.failed) { spectrumHold.hold(spectrumJob); workers.spectrum.posted = id; }
  else { spectrumHold.clear(); post(workers.spectrum, spectrumJob); }
  setStale('specStale', true);
  return id;
}

/**
 * Post the spectrum job that waited for the frame worker (requestWorkers) once that worker has answered
 * request `id` or a newer one (an older job's answer, during a fast drag, does not let it go early);
 * without `id`, at once (the frame worker failed).
 */
function releaseSpectrum(id) {
  const job = spectrumHold.answered(id);
  if (job) post(workers.spectrum, job);
}

// A's cells as the frame worker last sent them: a frame without A has these (its aKey says so)
let frameA = { key: null, A: null };

/** Send a frame's M and D arrays (not A: frames share it) back to the frame worker, which fills them again. */
function recycleCells(frame) {
  if (!frame || !workers) return;
  const bufs = [];
  for (const x of [frame.M, frame.D])
    if (x instanceof Float32Array && x !== frame.A && x.byteLength > 0 && x.byteLength === x.buffer.byteLength && !bufs.includes(x.buffer)) bufs.push(x.buffer);
  if (bufs.length) workers.frame.worker.postMessage({ kind: 'recycle', buffers: bufs }, bufs);
}

function onWorkerMessage(w, m) {
  if (m.kind === 'window') { zoom.arrived(m); return; } // the zoom's window, cut from the full matrix
  // the frame worker's last answer to a job (its readouts, a frame no readouts follow, an error, a dropped
  // job) lets the spectrum job go
  if (w === workers.frame && m.id !== undefined && !(m.part === 'frame' && m.readoutsFollow)) releaseSpectrum(m.id);
  if (m.part === 'frame') {
    if (m.A !== undefined) frameA = { key: m.aKey ?? null, A: m.A };
    else m.A = frameA.key !== null && frameA.key === m.aKey ? frameA.A : null;
  }
  if (m.kind === 'ready') {
    w.ready = true;
    if (w.queued) { w.worker.postMessage(w.queued); w.queued = null; }
    return;
  }
  if (m.kind === 'fatal' && w === workers.frame) { w.failed = true; releaseSpectrum(); }
  if (m.kind === 'fatal') { showNotice(`the ${w.name} worker could not load the WebAssembly module: ${m.message}`); inspector.fail(`the ${w.name} worker failed: ${m.message}`); return; }
  if (m.kind === 'failed') { workerFailed(w, `the ${w.name} worker failed: ${m.message}`); return; }
  if (m.part === 'error') { showNotice(`computation failed: ${m.message}`); w.done = Math.max(w.done, m.id); inspector.notify(); return; }
  if (m.part === 'done') { if (!m.dropped) w.done = Math.max(w.done, m.id); inspector.notify(); return; }
  // what the page computed itself for a newer request is never replaced by a worker's older result
  if ((m.part === 'frame' || m.part === 'readouts') && m.id < view.localJob) { if (m.part === 'frame') recycleCells(m); return; }
  const part = m.part === 'overlay' ? `overlay-${m.which}` : m.part;
  const { deliver, stale } = gate.accept(m.id, part);
  if (!deliver) { if (m.part === 'frame') recycleCells(m); return; }
  const seq = stats.reqSeq.get(m.id);
  if (m.part !== 'overlay') tags[m.part === 'readouts' ? 'plain' : m.part === 'frame' ? 'frame' : 'spec'] = jobOf.get(m.id) ?? null;
  if (m.part === 'frame') {
    if (view.frame !== m) recycleCells(view.frame);
    view.frame = m; view.waitingFrame = m.id < view.frameJob || !!m.quick; // a quick frame awaits the full one
    pendingMarks.heat = seq;
    redraw.heat = true; redraw.readouts = true; // the cost line
  } else if (m.part === 'spectrum') {
    view.spec = m; setStale('specStale', stale, true);
    pendingMarks.spec = seq;
    redraw.spec = true; redraw.readouts = true;
  } else if (m.part === 'readouts') {
    view.readouts = m.readouts; setStale('readoutsStale', m.id < view.readoutsJob, true);
    pendingMarks.plain = seq;
    redraw.readouts = true;
  } else if (m.part === 'overlay') {
    view.overlay[m.which] = m;
    redraw.spec = true;
  }
  schedule();
}

const redraw = { heat: false, spec: false, readouts: false, controls: true };
const pendingMarks = { heat: null, plain: null, spec: null };

// --- input --------------------------------------------------------------------------------------
function onChange(name, value, phase) {
  if (phase === 'dragstart') { dragging = true; return; }
  if (name !== null) {
    const { value: v, problem } = schema.coerce(schema.BY_NAME[name], value, st);
    if (problem) showNotice(problem);
    let next = schema.normalise({ ...st, [name]: v });
    if (name === 'variant') next = schema.withVariant(st, next);
    if (name === 'src') next = switchSource(st, next);
    next = fitModel(next);
    const keys = schema.changedKeys(st, next);
    st = next;
    const stage = schema.firstDirtyStage(keys);
    if (stage && (dirty === null || stageDirty(dirty, stage) === false)) dirty = stage;
    if (stage === null && dirty === null && phase !== 'change') return;
    if (keys.length) { stats.seq += 1; stats.inputAt.set(stats.seq, performance.now()); }
  }
  if (phase === 'change') { dragging = false; release = true; }
  redraw.controls = true;
  // above MAIN_THREAD_MAX_N the workers compute: their job goes out with the input, not at the next
  // animation frame (up to 16 ms later, when the input did not come aligned with frames, as keys do)
  if (st && st.n > MAIN_THREAD_MAX_N && dirty !== null && phase !== 'change') commitNow();
  else schedule();
}

function schedule() { if (!raf) raf = requestAnimationFrame(commit); }
function commitNow() { if (raf) { cancelAnimationFrame(raf); raf = 0; } commit(); }

// --- commit: one per animation frame --------------------------------------------------------------
function commit() {
  raf = 0;
  if (!st) return; // the module is still loading
  const stage = dirty;
  dirty = null;
  if (redraw.controls) { syncChrome(); redraw.controls = false; }
  if (stage !== null || release) {
    chartsFailed = false; // charts that did not load are tried again with each new view (ensureCharts)
    writeUrl(release);
    const compute = stage !== null && stageDirty(stage, 'readouts');
    const small = st.n <= MAIN_THREAD_MAX_N;
    if (compute) {
      // the workers start on the spectrum (and, above MAIN_THREAD_MAX_N, the heatmaps and readouts)
      // while this thread computes the heatmaps and readouts of a small n
      const id = requestWorkers(true, dragging);
      if (small && engine) {
        try {
          view.frame = engine.frame(requestOf(st), { readouts: true });
          view.readouts = view.frame.readouts; setStale('readoutsStale', false);
          view.waitingFrame = false; view.localJob = id;
          tags.frame = tags.plain = { key: JSON.stringify(requestOf(st)), drag: false };
          redraw.heat = true; redraw.readouts = true;
          pendingMarks.heat = pendingMarks.plain = stats.seq;
        } catch (err) { showNotice(`computation failed: ${err.message}`); }
      }
    } else if (release) {
      requestWorkers(false, false);
    }
    if (stage === 'display') { redraw.heat = true; redraw.spec = true; redraw.readouts = true; }
    release = false;
    hosts?.changed();
    if (!dragging) { updateSweep(); overview.update(st); mechPanel.update(st); }
  }
  if (redraw.heat) { drawHeatmaps(); redraw.heat = false; }
  if (redraw.readouts) { drawReadouts(); redraw.readouts = false; }
  if (redraw.spec) { drawSpectra(); redraw.spec = false; }
  // the veil only when the heatmaps on screen are for another n, or come from the slow worker
  // (a drag above FRAME_WORKER_MAX_N is followed by quick frames: no veil over them)
  const veil = !(view.waitingFrame && (!view.frame || view.frame.n !== st.n || (st.n > FRAME_WORKER_MAX_N && !dragging)));
  if ($('computing').hidden !== veil) $('computing').hidden = veil;
  setStatus();
  const t = performance.now();
  if (pendingMarks.heat !== null) { stats.heatAt.set(pendingMarks.heat, t); pendingMarks.heat = null; }
  if (pendingMarks.plain !== null) { stats.plainAt.set(pendingMarks.plain, t); pendingMarks.plain = null; }
  // the charts' module once the first heatmaps and plain readouts are drawn (charts.mjs; above
  // MAIN_THREAD_MAX_N the readouts come from the frame worker after the heatmaps)
  if (!uPlotReady() && stats.heatAt.size && stats.plainAt.size) ensureCharts();
  if (pendingMarks.spec !== null) { stats.specAt.set(pendingMarks.spec, t); pendingMarks.spec = null; }
  inspector.notify();
}

// The address bar follows the state, but not on every frame of a drag: replaceState costs
// milliseconds in Chromium, so it is written on release and otherwise once the input rests.
let urlTimer = 0;
function writeUrl(now) {
  clearTimeout(urlTimer);
  urlTimer = 0;
  const put = () => { urlTimer = 0; const h = `#${withPreset(schema.toHash(st), lesson)}`; if (location.hash !== h) history.replaceState(null, '', h); inspector.notify(); };
  if (now) put(); else urlTimer = setTimeout(put, 250);
}

// --- drawing ----------------------------------------------------------------------------------------
const tables = { seq: colorTable('viridis'), seqName: 'viridis', div: colorTable('rdbu') };
/** The sequential table for the state's colour map (made again when the reader picks another). */
function seqTable() {
  if (tables.seqName !== st.cmap) {
    tables.seq = colorTable(st.cmap);
    tables.seqName = st.cmap;
    drawColorbar($('cb-M'), tables.mSigned ? tables.div : tables.seq); drawColorbar($('cb-A'), tables.seq);
  }
  return tables.seq;
}
/** Whether a heatmap's values hold a negative entry (a signed M). */
function hasNegative(values) {
  for (let i = 0; i < values.length; i++) if (values[i] < 0) return true;
  return false;
}
const SERIES_COLOR = Object.fromEntries(SERIES.map((x) => [x.key, x.color]));
let heatRanges = null;

// the grid the heatmaps show (the frame's blocks, or the zoom window): hover and the cursor read it;
// the token labels of the three heatmaps and the zoom (web/ui/token-axes.mjs, web/ui/zoom.mjs)
let shownGrid = null, tokenAxes = null, zoom = null;
function drawHeatmaps() {
  const f0 = view.frame;
  if (!f0 || !f0.M || !f0.A) return;
  // a zoom shows its window, cut from the full matrix (web/ui/zoom.mjs); until it comes, the last picture stays
  const win = st.zoom ? zoom.window(f0) : null;
  if (st.zoom && win === undefined) return;
  const g = gridOf(f0, win);
  if (!g.M || !g.A) return;
  shownGrid = g;
  const f = { M: g.M, A: g.A, D: g.D };
  // a signed M (retention, the delta rule, Linformer, Nyström, DWC) takes the diverging map centred on 0,
  // and the softmax reference A keeps its own sequential scale
  const signed = hasNegative(f.M);
  const r = signed ? symmetricRange([f.M]) : sharedRange([f.M, f.A]);
  const ra = signed ? sharedRange([f.A]) : r;
  const dr = symmetricRange([f.D]);
  heatRanges = { r, ra, dr, signed };
  const data = (values) => ({ values, rows: g.rows, cols: g.cols });
  const seq = seqTable();
  if (tables.mSigned !== signed) { tables.mSigned = signed; drawColorbar($('cb-M'), signed ? tables.div : seq); }
  $('hm-M').dataset.map = signed ? 'diverging' : 'sequential';
  const bad = drawHeatmap($('hm-M'), data(f.M), { table: signed ? tables.div : seq, lo: r.lo, hi: r.hi }).nonfinite;
  drawHeatmap($('hm-A'), data(f.A), { table: seq, lo: ra.lo, hi: ra.hi });
  drawHeatmap($('hm-D'), data(f.D), { table: tables.div, lo: dr.lo, hi: dr.hi });
  for (const [k, rg, div] of [['M', r, signed], ['A', ra, false], ['D', dr, true]]) {
    setText(`cb-${k}-hi`, `${rg.clipped ? '≥ ' : ''}${div ? fmtSigned(rg.hi) : fmt(rg.hi)}`);
    setText(`cb-${k}-mid`, div ? '0' : fmt((rg.lo + rg.hi) / 2));
    setText(`cb-${k}-lo`, `${rg.clipped && div ? '≤ ' : ''}${fmt(rg.lo)}`);
  }
  setText('cap-M', `${schema.variantView(st.variant).label}: matrix M${bad ? ` (${bad} cells Inf/NaN, magenta)` : ''}`);
  setText('ds-note', g.zoomed ? zoom.note(g) : dsNote(f0));
  tokenAxes.draw(g, tokenPieces());
  if (document.activeElement?.classList.contains('hm')) showCursor(document.activeElement); // new values under the cursor
  const note = swampNote(f0.swamped);
  if ($('swamp-note').hidden !== !note) $('swamp-note').hidden = !note;
  setText('swamp-note', note ?? '');
}

/** The note under the heatmaps: the downsampling, and what a drag's quick frame is (docs/page.md, "Large n"). */
function dsNote(f) {
  const shown = f.b > 1 ? `n = ${f.n} shown as ${f.size}×${f.size}: blocks of ${f.b}×${f.b}, block ${f.mode}` : '';
  if (f.quick === 'factors') return `${shown}, from the factors L·Rᵀ while dragging (exact); readouts on release`;
  if (f.quick === 'draft') {
    const s = f.draftStride, nth = s === 2 ? 'second' : s === 3 ? 'third' : `${s}th`;
    return `draft while dragging: the variant on every ${nth} token (${Math.ceil(f.n / s)} of ${f.n}), ` +
      'shown by blocks; the full matrix and the readouts on release';
  }
  return shown;
}

/** The note when a feature ε swamps most keys (engine.mjs's swampedKeys), or null. */
function swampNote(s) {
  if (!s || !(s.fraction > 0.5)) return null;
  return `ε = ${s.eps.toExponential(0)} swamps ${Math.round(100 * s.fraction)}% of the keys (${s.keys} of ${s.n}): each of their ` +
    'exponential terms is below ε, so every query weighs them alike. Smaller inputs (std), ' +
    'or ε = 0, change that; more features m do not.';
}

// chartsWaiting: uPlot's module is loading (ensureCharts); chartsFailed: it did not load, and is tried again
// with the next new view (commit) rather than on every frame
let charts = null, chartsWaiting = false, chartsFailed = false;
const prefersDark = matchMedia('(prefers-color-scheme: dark)'); // live: .matches follows the system
const isDark = () => document.documentElement.dataset.theme === 'dark' ||
  (document.documentElement.dataset.theme === 'auto' && prefersDark.matches);

// The size of the text drawn on canvases (the charts' axes, the histogram): the stylesheet's smallest
// text, which projector mode and the screen size set. Read again after a resize or a projector toggle.
let canvasPx = 0;
const textPx = () => (canvasPx ||= parseFloat(getComputedStyle($('chart-spectrum')).fontSize) || 11);

/** A chart's size in its box: the box less its legend (measured once drawn, else about two lines). */
function chartSize(el) {
  const b = el.getBoundingClientRect();
  const legend = el.querySelector('.u-legend')?.offsetHeight ?? Math.ceil(textPx() * 2.2);
  return { width: Math.max(200, Math.floor(b.width)), height: Math.max(80, Math.floor(b.height) - legend - 2) };
}

/**
 * The charts for the current text size and x axis (made again when either changes); false while uPlot is
 * still loading (charts.mjs), which it starts, and the spectra are drawn again once it is in.
 */
function ensureCharts() {
  if (!uPlotReady()) {
    if (!chartsWaiting && !chartsFailed) {
      chartsWaiting = true;
      loadUPlot().then(() => { chartsWaiting = false; redraw.spec = true; schedule(); }, (err) => {
        // said once; the next change of view tries again (a page left open across a redeploy finds its
        // old chunk gone until it is reloaded)
        chartsWaiting = false; chartsFailed = true;
        showNotice(`the charts did not load: ${err.message}`);
        inspector.notify();
      });
    }
    return false;
  }
  const logX = st.n > LOG_X_MIN_N;
  const key = `${textPx()}|${logX}`;
  if (charts?.key === key) return true;
  charts?.destroy();
  const se = $('chart-spectrum'), ee = $('chart-error');
  const opts = { dark: isDark, fontPx: textPx(), logX };
  const spectrum = makeSpectrumChart(se, { ...chartSize(se), ...opts });
  const error = makeErrorChart(ee, { ...chartSize(ee), ...opts });
  const ro = new ResizeObserver(() => {
    canvasPx = 0;
    if (`${textPx()}|${logX}` !== key) { redraw.spec = true; schedule(); return; } // new text size: new charts
    spectrum.resize(chartSize(se).width, chartSize(se).height);
    error.resize(chartSize(ee).width, chartSize(ee).height);
  });
  // each chart's box (the note above the charts can wrap after they are made, which takes height from them
  // and not from their column) and each legend: its height (it wraps when narrow) is the charts' to give
  for (const el of [se, ee]) { ro.observe(el); ro.observe(el.querySelector('.u-legend')); }
  charts = { spectrum, error, key, destroy() { ro.disconnect(); spectrum.destroy(); error.destroy(); } };
  return true;
}

function drawSpectra() {
  const drawn = ensureCharts();
  const s = view.spec?.sv ? view.spec : null; // a failed route has no σ (its readouts say why)
  const n = st.n;
  const ov = view.overlay;
  // an overlay is shown only for the inputs it was computed from (cached in the worker, so a drag of
  // the variant's knobs keeps it; new inputs hide it until its new spectrum arrives)
  const req = requestOf(st);
  const current = (k) => ov[k] && ov[k].key === overlayKey(req, k) && ov[k].sv.length && ov[k].sv.length <= n;
  const { ceiling } = dims();
  // the x axis ends where the last curve does, log above LOG_X_MIN_N (ensureCharts), where the
  // overlays' top σ would otherwise sit in the first pixels
  const data = chartData({ spec: s, overlays: Object.fromEntries(['S', 'E', 'A'].filter(current).map((k) => [k, ov[k]])), n, ceiling });
  if (drawn) { charts.spectrum.update(data.spectrum); charts.error.update(data.error); }
  const route = s ? `${s.route}${s.partial ? ': σ and ranks are lower bounds, stable rank an upper bound (≥, ≤)' : ''}; ${fmtMs(s.ms)} in the worker`
    : view.spec ? `no spectrum: ${view.spec.message}` : 'computing…';
  const floorRel = s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0;
  const floorText = floorRel > 0
    ? `noise floor ${floorRel.toExponential(0)}·σ₁${floorDrawn(floorRel) ? ' (dotted)' : ' (below the plot)'}`
    : 'noise floor —';
  const note = `${route}${ceiling ? ` · rank ceiling ${ceiling} (dashed)` : ''} · ${floorText}`;
  if ($('spec-note').textContent !== note) $('spec-note').textContent = note;
}

function drawReadouts() {
  const r = { ...(view.readouts ?? {}), ...(view.spec?.readouts ?? {}) };
  const s = view.spec?.sv ? view.spec : null;
  const ctx = {
    n: st.n, tau: st.tau, ceiling: dims().ceiling, semiCeiling: dims().semiCeiling, partial: !!s?.partial, relTol: st.rtol,
    relRank: s ? rankAtRelative(s.sv, 10 ** st.rtol, s.floor, s.sigma1Upper ?? null) : null,
  };
  const rows = readoutRows();
  for (const row of READOUT_ROWS) {
    const tr = rows.get(row.id);
    const l = tr.firstChild, v = tr.children[1];
    const label = rowLabel(row, ctx);
    if (l.firstChild.textContent !== label) l.firstChild.textContent = label;
    const text = row.spectral && !view.spec ? '…' : row.text(r, ctx);
    if (v.textContent !== text) v.textContent = text;
    const reason = rowReason(row, r) || rowMark(row, r, ctx); // why it is '—', or why it is a bound
    if (v.title !== reason) v.title = reason;
    // an undefined readout says why on screen, under its label (docs/readouts.md lists the reasons)
    const why = text.includes('—') ? reason : '';
    const w = l.lastChild;
    if (w.textContent !== why) w.textContent = why;
    tr.classList.toggle('stale', staleShown(row.spectral ? 'specStale' : 'readoutsStale'));
  }
  setText('cost', costLine(view.frame?.cost, st.n));
  setText('readout-state', staleShown('specStale') ? 'spectral readouts updating…' : '');
  drawEntropy(r.entropy_hist ?? null);
}

/** Set an element's text only when it differs (an unchanged write still invalidates layout). */
function setText(id, text) {
  const el = $(id);
  if (el.textContent !== text) el.textContent = text;
}

// the histogram canvas's CSS size, from a ResizeObserver (never a forced layout in a commit)
const entBox = { width: 0, height: 0, drawn: null };
function drawEntropy(hist) {
  $('ent-hist').classList.toggle('stale', staleShown('readoutsStale'));
  const dark = isDark();
  const key = entBox.drawn;
  const px = textPx();
  if (key && key.hist === hist && key.dark === dark && key.width === entBox.width && key.height === entBox.height && key.px === px) return;
  entBox.drawn = { hist, dark, width: entBox.width, height: entBox.height, px };
  setText('ent-note', entropyNote(hist));
  if (!entBox.width || !entBox.height) return;
  drawEntropyHistogram($('ent-hist'), entropyBars(hist), {
    width: entBox.width, height: entBox.height, dpr: devicePixelRatio || 1, fontPx: px,
    colors: { M: SERIES_COLOR.M, A: SERIES_COLOR.A, mark: dark ? '#f0e442' : '#b8860b', axis: dark ? '#c8ccd4' : '#333' },
  });
}

let rowCache = null;
function readoutRows() {
  if (rowCache) return rowCache;
  rowCache = new Map();
  const tbody = document.querySelector('#readout-table tbody');
  for (const row of READOUT_ROWS) {
    const tr = document.createElement('tr');
    tr.dataset.readout = row.id;
    const l = document.createElement('td'); l.className = 'l';
    const name = document.createElement('span'); name.textContent = row.label;
    const why = document.createElement('span'); why.className = 'why';
    l.append(name, explain.button('readout', row.id, row.label), why);
    const v = document.createElement('td'); v.className = 'v'; v.tabIndex = 0;
    const f = document.createElement('td'); f.className = 'f';
    typeset(f, row.tex);
    tr.append(l, v, f);
    tbody.append(tr);
    rowCache.set(row.id, tr);
  }
  return rowCache;
}

/**
 * The rank ceiling (the factors' rank bound, av_factor_rank, at most n; null where there are none) and
 * the feature dimension (av_feature_dim: {status, r, saturated}) of the state's knobs, from the library;
 * kept while the knobs and sizes stay.
 */
let dimsMemo = { key: null };
function dims() {
  const knobs = schema.knobsOf(st);
  const key = `${st.n}|${st.d}|${JSON.stringify(knobs)}`;
  if (dimsMemo.key !== key) {
    const fr = av.factorRank(knobs, st.n, st.d);
    dimsMemo = { key, ceiling: fr.r === null ? null : Math.min(fr.r, st.n), feature: av.featureDim(knobs, st.n, st.d),
      semiCeiling: av.semiseparableCeiling(knobs, st.n, st.d).r };
  }
  return dimsMemo;
}

/** The note for a feature dimension above the library's cap, or null. */
function featureNote(fd) {
  if (fd.status !== av.STATUS.ERR_FEATURE_DIM) return null;
  const r = fd.r < 1e9 ? fmtWhole(fd.r) : fd.r.toExponential(2).replace('e+', '·10^');
  return `feature dimension ${fd.saturated ? '≥ ' : ''}${r} > ${fmtWhole(av.limits.maxFeatureDim)}: ` +
    'no linear path (the matrix comes from the closed form)';
}

// --- chrome: controls, formula, notes, status ---------------------------------------------------------
let controls = null;
let shownVariant = null;
function syncChrome() {
  if (document.documentElement.dataset.theme !== st.theme) {
    document.documentElement.dataset.theme = st.theme;
    $('theme').setAttribute('aria-label', `colour theme: ${st.theme}`);
  }
  if (('projector' in document.documentElement.dataset) !== st.projector) { // presentation: style.css
    if (st.projector) document.documentElement.dataset.projector = '1'; else delete document.documentElement.dataset.projector;
    $('projector').setAttribute('aria-pressed', String(st.projector));
    canvasPx = 0;
  }
  controls.sync(st);
  sweepPanel.sync(st);
  mechPanel.sync(st);
  syncModelBox();
  // an embed (embed=VIEW, docs/embedding.md): one figure and the controls its link names (style.css)
  const embed = st.embed || null;
  if ((document.documentElement.dataset.embed ?? null) !== embed) {
    if (embed) document.documentElement.dataset.embed = embed; else delete document.documentElement.dataset.embed;
    canvasPx = 0;
  }
  const bare = !!embed && !schema.SCHEMA.some((e) => ['input', 'variant', 'readout'].includes(e.group) && schema.shown(e, st));
  if (('bare' in document.documentElement.dataset) !== bare) {
    if (bare) document.documentElement.dataset.bare = ''; else delete document.documentElement.dataset.bare;
  }
  if (shownVariant !== st.variant) {
    shownVariant = st.variant;
    const v = schema.variantView(st.variant);
    typeset($('formula'), v.tex);
    $('hint').textContent = v.hint;
  }
  const notes = [schema.causalNote(st), schema.formNote(st), featureNote(dims().feature)].filter(Boolean);
  const hide = !notes.length;
  if ($('causal-note').hidden !== hide) $('causal-note').hidden = hide;
  setText('causal-note', notes.join('. '));
}

function setStatus() {
  const f = view.frame;
  let text;
  if (!f) text = engine || workers?.spectrum.ready ? 'computing…' : 'loading the WebAssembly module…';
  else {
    const m = f.status?.matrix;
    const warn = m && m.status !== 0 ? `${m.status < 0 ? 'error' : 'note'}: ${m.message}` : null;
    text = warn ?? `n = ${f.n}: matrices ${fmtMs(f.ms.total)}${st.n > MAIN_THREAD_MAX_N ? ' (worker)' : ''}`;
  }
  if ($('status').textContent !== text) $('status').textContent = text;
}

/**
 * Say something in the notice for a while. `source` ('qkv', 'model'): a failure of the reader's files,
 * which that source's next success takes away (clearNotice), so no old failure stays beside a good load.
 */
let noticeSource = null;
function showNotice(text, source = null) {
  const el = $('notice');
  // one sentence of at most NOTICE_MAX characters, whatever the path: a longer one is cut, in full in the console
  const { text: shown, cut } = noticeText(text);
  if (cut) console.warn(`attnviz: the notice was cut to ${NOTICE_MAX} characters; in full: ${text}`);
  el.textContent = shown;   // data, never markup
  el.hidden = false;
  noticeSource = source;
  clearTimeout(showNotice.t);
  showNotice.t = setTimeout(() => { el.hidden = true; noticeSource = null; }, 8000);
}
/** A success of `source`: its failure notice, if that is the one shown, goes. */
function clearNotice(source) {
  if (noticeSource !== source) return;
  clearTimeout(showNotice.t);
  $('notice').hidden = true;
  noticeSource = null;
}

/** A worker's error event as one sentence's end: "memory access out of bounds", not "Uncaught RuntimeError: …". */
const workerError = (e) => String(e?.message || 'unknown error').replace(/^Uncaught\s+/, '').replace(/^\w*Error:\s*/, '');

// --- hover and the keyboard cursor --------------------------------------------------------------------
function onHover(e) {
  const g = shownGrid;
  if (!g) return;
  const rect = e.target.getBoundingClientRect();
  const cell = gridCellAt(g, e.clientX - rect.left, e.clientY - rect.top, rect.width, rect.height);
  if (!cell) return;
  $('hover').textContent = cellText(cell);
  hotTokens(cell);
}
/** Label the tokens of a cell (hovered, or under the keyboard cursor) on the axes, whatever the thinning. */
function hotTokens(cell) {
  const t = cell && cellTokens(shownGrid, cell);
  tokenAxes.draw(shownGrid, tokenPieces(), t ? { row: t.rows[0], col: t.cols[0] } : null);
}

/** A focused heatmap's cell cursor: arrow keys move it (Page Up/Down by 8, Home/End to the row's ends). */
const cursor = { row: 0, col: 0 };
const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-8, 0], PageDown: [8, 0] };
function onHeatKey(e) {
  const g = shownGrid;
  if (!g) return;
  if (MOVES[e.key]) {
    cursor.row = Math.min(g.rows - 1, Math.max(0, cursor.row + MOVES[e.key][0]));
    cursor.col = Math.min(g.cols - 1, Math.max(0, cursor.col + MOVES[e.key][1]));
  } else if (e.key === 'Home') cursor.col = 0;
  else if (e.key === 'End') cursor.col = g.cols - 1;
  else return;
  e.preventDefault();
  showCursor(e.target);
}
function showCursor(canvas) {
  const g = shownGrid;
  const box = canvas.nextElementSibling;
  if (!g) { box.hidden = true; return; }
  cursor.row = Math.min(cursor.row, g.rows - 1); cursor.col = Math.min(cursor.col, g.cols - 1);
  const w = canvas.clientWidth / g.cols, h = canvas.clientHeight / g.rows;
  box.style.left = `${canvas.offsetLeft + cursor.col * w}px`;   // CSSOM, allowed under the page's CSP
  box.style.top = `${canvas.offsetTop + cursor.row * h}px`;
  box.style.width = `${Math.max(2, w)}px`; box.style.height = `${Math.max(2, h)}px`;
  box.hidden = false;
  const text = cellText(cursor);
  hotTokens(cursor);
  $('hover').textContent = text;
  $('cell-say').textContent = text;
}

/**
 * What a heatmap cell holds: its row and column (or block), named by their tokens when the inputs have
 * them (“ the” … “ light” for a block: web/tokens.mjs), then M, softmax and M − A.
 */
function cellText(cell) {
  const g = shownGrid, f = view.frame;
  const k = cell.row * g.cols + cell.col;
  const t = cellTokens(g, cell), pieces = tokenPieces();
  const rows = spanText(pieces, ...t.rows), cols = spanText(pieces, ...t.cols);
  if (g.b === 1) {
    const exact = !g.zoomed && engine && st.n <= MAIN_THREAD_MAX_N && engine.lab?.n === f.n ? engine.valueAt(t.rows[0], t.cols[0]) : null;
    const m = exact ? exact.M : g.M[k], a = exact ? exact.A : g.A[k];
    return `row ${rows}, col ${cols}: M ${fmt(m, 4)} · softmax ${fmt(a, 4)} · M − A ${fmtSigned(m - a, 3)}`;
  }
  return `rows ${rows}, cols ${cols} (block ${g.mode}): M ${fmt(g.M[k], 4)} · softmax ${fmt(g.A[k], 4)} · M − A ${fmtSigned(g.D[k], 3)}`;
}

// --- sweeps: a readout against a knob, in a worker of their own (web/sweep.mjs, ui/sweep-panel.mjs) -------
let sweepPanel = null;
let sweepWorker = null;
const sweepView = { id: 0, key: null, plan: null, points: [], complete: true, ms: 0, t0: 0, error: null, waiters: [] };

/** Start the sweep the state asks for when it differs from the one shown (never during a drag). */
function updateSweep() {
  const plan = sweepPlan(schema, st);
  if (plan?.req) plan.req = requestOf(st); // a model's head, in model mode
  const key = plan ? JSON.stringify(plan) : null;
  if (key === sweepView.key) { drawSweep(); return; }
  Object.assign(sweepView, { key, plan, points: [], complete: !plan || !!plan.off, error: null });
  sweepView.id += 1; // whatever an older sweep still sends is dropped
  if (!plan || plan.off) sweepWorker?.postMessage({ kind: 'sweep-cancel' });
  else {
    sweepWorker ??= makeSweepWorker();
    sweepView.t0 = performance.now();
    sweepWorker.postMessage({ kind: 'sweep', id: sweepView.id, plan });
  }
  drawSweep();
  if (sweepView.complete) for (const w of sweepView.waiters.splice(0)) w();
}

function makeSweepWorker() {
  const w = new LabWorker({ name: 'attnviz sweep' });
  w.onmessage = ({ data: m }) => {
    if (m.kind === 'export-data') { exportJobs.get(m.id)?.(m); exportJobs.delete(m.id); return; }
    if (m.kind === 'model-loaded' || m.kind === 'model-ran') { onModelMessage(m); return; }
    if (m.kind === 'failed') { sweepWorkerFailed(m.message); return; }
    if (m.kind === 'overview-cell' || m.kind === 'overview-done') { overview.onMessage(m); return; }
    if (m.id !== sweepView.id) return; // an older sweep's
    if (m.kind === 'sweep-point') sweepView.points[m.i] = m;
    else if (m.kind === 'sweep-done') {
      sweepView.complete = m.complete || !!m.error;
      sweepView.error = m.error ?? null;
      sweepView.ms = performance.now() - sweepView.t0;
      if (sweepView.complete) for (const x of sweepView.waiters.splice(0)) x();
    }
    drawSweep();
  };
  w.onerror = (e) => sweepWorkerFailed(workerError(e));
  w.onmessageerror = () => sweepWorkerFailed('a message from it could not be read');
  w.postMessage({ kind: 'init', module: av.module, memoryMax: av.memoryMax, simd: av.simd });
  if (ownView.tensors) w.postMessage({ kind: 'tensors', tensors: ownView.tensors }); // a model's come from its own runs
  return w;
}

/**
 * The sweep worker failed outside an answer of its own (an uncaught error, a rejection, a message that
 * could not be read): whatever it was doing is taken as failed, so that nothing waits for it for ever:
 * the model's load or run (the model panel, snapshot()), the sweep (sweep()), an export, the overview.
 */
function sweepWorkerFailed(what) {
  const sentence = `the sweep worker failed: ${what}`;
  showNotice(sentence, modelView.busy ? 'model' : null);
  if (modelView.busy && !modelTimer) { // a text still waiting for its debounce is posted later and answered
    modelView.busy = false;
    modelView.error = what;
    modelStatus(sentence, true);
  }
  if (!sweepView.complete) {
    Object.assign(sweepView, { complete: true, error: what });
    sweepView.id += 1; // whatever that sweep still sends is dropped
    drawSweep();
    for (const x of sweepView.waiters.splice(0)) x();
  }
  for (const [id, done] of exportJobs) { exportJobs.delete(id); done({ kind: 'export-data', id, error: sentence }); }
  overview.fail(what); // tried again when next asked for
  inspector.notify();
}

// full-resolution arrays for an export, from the sweep worker (it holds a lab of any n)
const exportJobs = new Map();
let exportSeq = 0;
function exportArrays() {
  sweepWorker ??= makeSweepWorker();
  const id = ++exportSeq;
  return new Promise((resolve) => {
    exportJobs.set(id, resolve);
    sweepWorker.postMessage({ kind: 'export', id, req: requestOf(st) });
  });
}

function drawSweep() {
  const v = sweepView;
  if (!v.plan || v.plan.off) { sweepPanel.show(null, v.plan, null, ''); return; }
  const done = v.points.filter(Boolean).length;
  const status = v.error ? `failed: ${v.error}` : v.complete ? `${done} values in ${fmtMs(v.ms)} (in the background)` : `${done} of ${v.plan.values.length} values…`;
  sweepPanel.show(v.points, v.plan, st[v.plan.name], status);
}

/** The finished sweep of the current state: {knob, readout, seeds, values, mean, min, max}, or null when off. */
async function finishedSweep() {
  await inspector.snapshot(); // the state has settled, and with it the sweep it asks for has started
  while (!sweepView.complete) await new Promise((resolve) => sweepView.waiters.push(resolve));
  const p = sweepView.plan;
  if (!p || p.off) return null;
  const col = (k) => p.values.map((_, i) => sweepView.points[i]?.[k] ?? null);
  return { knob: p.name, readout: p.readout, seeds: p.seeds, values: p.values.slice(), mean: col('mean'), min: col('min'), max: col('max') };
}

/** Replace the state (a link read, a host's message): the reader's theme stays; everything is redrawn. */
function applyState(next) {
  // a link or a host sets n and d itself: only remember the generators' to return to (switchSource's
  // restore is for the picker)
  if (st.src === 'synthetic' && next.src !== 'synthetic') modelView.synthetic = { n: st.n, d: st.d };
  st = fitModel({ ...next, theme: st.theme });
  dirty = 'inputs'; release = true; redraw.controls = true;
  schedule();
}

// --- a real model (docs/model.md): files, text, the forward pass in the sweep worker -------------------
/**
 * Entering model mode keeps the generators' n and d to return to; leaving it gives them back (the
 * capture set n and d while it was shown).
 */
function switchSource(prev, next) {
  if (prev.src === 'synthetic' && next.src !== 'synthetic') modelView.synthetic = { n: prev.n, d: prev.d };
  if (prev.src !== 'synthetic' && next.src === 'synthetic' && modelView.synthetic) return { ...next, ...modelView.synthetic };
  return next;
}

function modelStatus(text, bad = false) {
  const el = $('model-status');
  el.textContent = text;
  el.classList.toggle('warn', bad);
}

/** The model box: shown in model mode; the text area once a model is read. The own-files box likewise. */
function syncModelBox() {
  const own = $('qkv-box'), file = st.src === 'file';
  if (own.hidden === file) own.hidden = !file;
  if (file && !ownView.tensors && !$('qkv-status').textContent) {
    $('qkv-status').textContent = 'Give Q, K and V as three .npy files (…q.npy, …k.npy, …v.npy; (n, d), or a capture\'s (layers, heads, n, d)) or one JSON file {"q", "k", "v"}. Until then the generators\' inputs are shown.';
  }
  // 2-D inputs have one layer and one head: no pickers for them (controls.sync showed them by the state)
  const t = activeTensors(st);
  if (t && t.layers === 1 && t.heads === 1) for (const k of ['layer', 'head']) document.querySelector(`[data-knob="${k}"]`).hidden = true;
  const box = $('model-box'), on = st.src === 'model';
  if (box.hidden === on) box.hidden = !on;
  const ta = $('model-text'), ready = !!modelView.config;
  if (ta.hidden === ready) ta.hidden = !ready;
  ta.disabled = !ready || !!st.lock;
  if (on && !ready && !modelView.busy && !modelView.error) {
    modelStatus('Give a llama2.c checkpoint and its tokenizer (both files at once, in any order, or drop them here). Until then the generators\' inputs are shown.');
  }
}

/** Read the files (any order: the worker tells them apart by content) and load them as the model. */
async function loadModelFiles(fileList) {
  const files = [...fileList];
  if (files.length !== 2) { showNotice(`a real model needs two files, the checkpoint and its tokenizer (${files.length} given)`, 'model'); return; }
  let buffers;
  try {
    buffers = await Promise.all(files.map((f) => f.arrayBuffer()));
  } catch (err) {
    showNotice(`the model's files could not be read: ${err.message}`, 'model');
    return;
  }
  sweepWorker ??= makeSweepWorker();
  modelView.busy = true;
  modelStatus(`reading ${files.map((f) => f.name).join(' and ')}…`);
  sweepWorker.postMessage({ kind: 'model-load', id: ++modelView.loadId, files: buffers }, buffers);
}

/** The reader's own Q, K, V files: checked here (web/own-inputs.mjs), then every engine's inputs. */
async function loadOwnFiles(fileList) {
  let files;
  try {
    files = await Promise.all([...fileList].map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
  } catch (err) {
    showNotice(`your Q, K, V: the files could not be read: ${err.message}`, 'qkv');
    return;
  }
  const got = ownTensors(files, av);
  const status = $('qkv-status');
  if (got.error) {
    // the inputs already loaded and the view stay
    showNotice(`your Q, K, V: ${got.error}`, 'qkv');
    status.textContent = noticeText(got.error).text;
    status.classList.add('warn');
    return;
  }
  clearNotice('qkv');
  if (got.notice) showNotice(`your Q, K, V: ${got.notice}`, 'qkv'); // the tensors load, without tokens
  const t = { ...got.tensors, key: `own-${++ownView.seq}` };
  ownView.tensors = t;
  ownView.names = files.map((f) => f.name);
  status.classList.remove('warn');
  status.textContent = `${ownView.names.join(', ')}: n = ${t.n}, d = ${t.d}` + (t.layers > 1 || t.heads > 1 ? `, ${t.layers} layers × ${t.heads} heads (${t.kvHeads} KV heads)` : '') + (t.pieces ? ', with tokens' : '');
  engine.setTensors(t);
  for (const w of Object.values(workers)) w.worker.postMessage({ kind: 'tensors', tensors: t });
  sweepWorker?.postMessage({ kind: 'tensors', tensors: t });
  mechWorker?.postMessage({ kind: 'tensors', tensors: t });
  if (st.src !== 'file') st = switchSource(st, { ...st, src: 'file' });
  st = fitModel(st);
  dirty = 'inputs'; release = true; redraw.controls = true;
  schedule();
}

let modelTimer = 0;
/** Run the forward pass on the text (debounced while typing). */
function runModel(delay = 0) {
  clearTimeout(modelTimer);
  modelView.busy = true;
  // the id is taken now: a result for an older text, still in flight, is dropped, and the page stays
  // busy (snapshot() waits) until this text's forward pass is in
  const id = ++modelView.runId;
  modelTimer = setTimeout(() => {
    modelTimer = 0;
    sweepWorker.postMessage({ kind: 'model-run', id, text: $('model-text').value, key: `model-${id}` });
  }, delay);
}

function onModelMessage(m) {
  if (m.id !== (m.kind === 'model-loaded' ? modelView.loadId : modelView.runId)) return; // a newer file or text is under way
  if (m.error) {
    // the current view and any model already loaded stay; the page says what was wrong
    modelView.busy = false;
    modelView.error = m.error;
    showNotice(m.kind === 'model-loaded' ? `the model's files: ${m.error}` : `the model: ${m.error}`, 'model');
    modelStatus(m.error, true);
    inspector.notify();
    return;
  }
  modelView.error = null;
  clearNotice('model');
  if (m.kind === 'model-loaded') {
    const first = !modelView.config;
    modelView.config = m.config;
    const c = m.config;
    modelStatus(`${c.layers} layers × ${c.heads} heads (${c.kvHeads} KV heads), head size ${c.headSize}, vocabulary ${c.vocab}, up to ${c.seqLen} tokens`);
    const ta = $('model-text');
    if (!ta.value) ta.value = 'Once upon a time, there was a little dog named Max. Max liked to run in the park.';
    if (first && st.src === 'model') { st = { ...st, causal: true }; redraw.controls = true; } // the model's own mask
    syncModelBox();
    runModel(0);
    return;
  }
  // model-ran: the capture becomes every engine's inputs
  const t = m.tensors;
  modelView.tensors = t;
  modelView.ids = m.ids;
  modelView.pieces = m.pieces;
  modelView.ms = m.ms;
  engine.setTensors(t);
  for (const w of Object.values(workers)) w.worker.postMessage({ kind: 'tensors', tensors: t }); // a copy each (not a job)
  mechWorker?.postMessage({ kind: 'tensors', tensors: t });
  const c = modelView.config;
  modelStatus(`${t.n} tokens · forward pass ${fmtMs(m.ms)} in the worker · ${c.layers} layers × ${c.heads} heads, head size ${c.headSize}`);
  modelView.busy = false;
  if (st.src === 'model') {
    st = fitModel(st);
    dirty = 'inputs'; release = true; redraw.controls = true;
    schedule();
  }
  inspector.notify();
}

// --- start ----------------------------------------------------------------------------------------
// The theme is the reader's (state.mjs: never in a link): kept in localStorage, 'auto' follows the system.
const THEME_KEY = 'attnviz.theme';
function savedTheme() {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return ['auto', 'light', 'dark'].includes(t) ? t : 'auto';
  } catch { return 'auto'; }
}

let explain = null; // the explanations' popover (web/ui/explain-popover.mjs)

async function start() {
  explain = mountExplain($('explain'), {
    variantOf: () => ({ name: st.variant, ...schema.variantView(st.variant), source: schema.variantRow(st.variant).source }),
    rowOf: (id) => READOUT_ROWS.find((r) => r.id === id),
  });
  $('glossary').addEventListener('click', (e) => { e.stopPropagation(); explain.glossary($('glossary')); });
  drawColorbar($('cb-M'), tables.seq); drawColorbar($('cb-A'), tables.seq); drawColorbar($('cb-D'), tables.div);
  $('share').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(location.href); $('share').textContent = 'copied'; } catch { $('share').textContent = 'see address bar'; }
    setTimeout(() => { $('share').textContent = 'copy link'; }, 1500);
  });
  try {
    const simd = simdSupported(), src = wasmSources();
    av = await loadAttnviz({ simd, source: simd ? src.simd : src.scalar });
    schema = buildSchema(av.registry);
    readoutRows(); // the table's rows are the registry's (web/render/readouts.mjs): known once it is loaded
    // the workers instantiate the module this thread compiled
    workers = { spectrum: makeWorker('spectrum'), frame: makeWorker('frame') };
  } catch (err) {
    showNotice(`could not load the WebAssembly module: ${err.message}`);
    $('status').textContent = 'the WebAssembly module did not load';
    inspector.fail(`the WebAssembly module did not load: ${err.message}`);
    return;
  }
  const opened = expandPreset(location.hash);
  const parsed = schema.fromHash(opened.hash);
  st = { ...parsed.state, theme: savedTheme() };
  lesson = opened.preset;
  if (opened.problem) parsed.problems.unshift(opened.problem);
  lessons = mountLessons($('lessons'), $('lesson'), { onClose: () => { lesson = null; lessons.show(null); writeUrl(true); } });
  lessons.show(lesson);
  engine = new Engine(av);
  $('engine').textContent = av.simd ? 'wasm SIMD' : 'wasm scalar';
  const groups = { input: $('ctl-input'), variant: $('ctl-variant'), readout: $('ctl-readout') };
  const byGroup = (g) => schema.SCHEMA.filter((e) => e.group === g);
  const parts = Object.entries(groups).map(([g, el]) => buildControls(el, byGroup(g), st, onChange, schema.shown));
  $('variant-info').append(explain.button('variant', null, 'the variant'));
  sweepPanel = mountSweepPanel($('sweep-box'), schema, onChange, { dark: isDark });
  mechPanel = mountMechanisms($('mech'), {
    schema, onChange, dark: isDark,
    request: () => requestOf(st),
    worker: () => (mechWorker ??= makeMechWorker()),
    useW: (W, cols) => { trainedW = { W, cols }; dirty = 'matrix'; release = true; redraw.controls = true; if (st.variant !== 'hedgehog') onChange('variant', 'hedgehog', 'change'); else schedule(); },
    usingW: () => !!trainedW,
    opened: (on) => { if ($('mech-open').getAttribute('aria-pressed') !== String(on)) $('mech-open').setAttribute('aria-pressed', String(on)); },
  });
  $('mech-open').addEventListener('click', () => {
    if (st.mech) { onChange('mech', '', 'change'); return; }
    onChange('mech', 'stepper', 'change');
    requestAnimationFrame(() => $('mech').scrollIntoView({ behavior: 'smooth', block: 'start' }));
  });
  // a real model: the file input, files dropped anywhere on the page, the text (docs/model.md)
  $('model-files').addEventListener('change', (e) => { if (e.target.files.length) loadModelFiles(e.target.files); });
  $('qkv-files').addEventListener('change', (e) => { if (e.target.files.length) loadOwnFiles(e.target.files); });
  overview = mountOverview($('overview'), {
    tensors: () => activeTensors(st), request: requestOf, worker: () => (sweepWorker ??= makeSweepWorker()),
    onChange: (k, val) => onChange(k, val, 'change'), open: (layer, head) => applyState({ ...st, layer, head }),
    label: (s) => schema.variantView(s.variant).label, inputsLabel: () => inputsLabel(true),
    tokens: () => (st.src === 'model' && modelView.tensors ? modelView.pieces : null), notice: (text) => showNotice(text),
  });
  $('overview').addEventListener('toggle', () => overview.update(st));
  addEventListener('dragover', (e) => { if ([...(e.dataTransfer?.types ?? [])].includes('Files')) e.preventDefault(); });
  addEventListener('drop', (e) => {
    if (!e.dataTransfer?.files?.length) return;
    e.preventDefault();
    // .npy and .json files are the reader's own Q, K, V; anything else a model's checkpoint and tokenizer
    const own = [...e.dataTransfer.files].every((f) => /\.(npy|json)$/i.test(f.name));
    if (own) { loadOwnFiles(e.dataTransfer.files); return; }
    if (st.src !== 'model') onChange('src', 'model', 'change');
    loadModelFiles(e.dataTransfer.files);
  });
  $('model-text').addEventListener('input', () => runModel(250));
  exporter = mountExport($('export'), {
    snapshot: () => inspector.snapshot(),
    request: () => requestOf(st),
    label: () => schema.variantView(st.variant).label,
    inputsLabel: () => inputsLabel(),
    heatmap(which) { // what the heatmap shows: the whole matrix by blocks, or the zoom's window
      const g = shownGrid;
      if (!g?.[which] || !heatRanges) return null;
      const rg = which === 'D' ? heatRanges.dr : which === 'A' ? heatRanges.ra : heatRanges.r;
      const div = which === 'D' || (which === 'M' && heatRanges.signed);
      return { ...g, values: g[which], lo: rg.lo, hi: rg.hi, clipped: rg.clipped, table: div ? tables.div : seqTable(), diverging: div };
    },
    ids: () => (st.src === 'model' && modelView.tensors ? modelView.ids : null),
    charts() {
      const s = view.spec?.sv ? view.spec : null;
      const req = requestOf(st), ov = view.overlay;
      const current = (k) => ov[k] && ov[k].key === overlayKey(req, k) && ov[k].sv.length && ov[k].sv.length <= st.n;
      const { ceiling } = dims();
      const data = chartData({ spec: s, overlays: Object.fromEntries(['S', 'E', 'A'].filter(current).map((k) => [k, ov[k]])), n: st.n, ceiling });
      // a curve from the top-k route: its σ̂ are lower bounds, so the figure's caption says so (export-menu.mjs)
      const partial = !!s?.partial || ['S', 'E', 'A'].some((k) => current(k) && ov[k].partial);
      return { data, logX: st.n > LOG_X_MIN_N, floorRel: s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0, ceiling, partial };
    },
    entropy: () => entropyBars(view.readouts?.entropy_hist ?? null),
    sweep: () => (sweepView.plan && !sweepView.plan.off && sweepView.points.some(Boolean) ? { plan: sweepView.plan, points: sweepView.points } : null),
    arrays: () => exportArrays(),
    notice: (text) => showNotice(text),
  });
  controls = { sync: (s) => { parts.forEach((p) => p.sync(s)); zoom.sync(s.zoom, s.n); } };
  tokenAxes = mountTokenAxes(['hm-M', 'hm-A', 'hm-D'].map((id) => $(id).parentElement));
  zoom = mountZoom($('zoom-box'), {
    set: (value) => onChange('zoom', value, 'change'),
    local: () => st.n <= MAIN_THREAD_MAX_N && !!engine,
    compute: (req, value) => engine.window(req, value),
    post: (msg) => workers.frame.worker.postMessage(msg),
    request: () => requestOf(st), state: () => st, pieces: tokenPieces, grid: () => shownGrid,
    redraw: () => { redraw.heat = true; schedule(); }, settled: () => inspector.notify(),
    canvases: ['hm-M', 'hm-A', 'hm-D'].map($),
  });
  for (const id of ['hm-M', 'hm-A', 'hm-D']) {
    const c = $(id);
    c.addEventListener('mousemove', onHover);
    c.addEventListener('keydown', onHeatKey);
    c.addEventListener('focus', () => showCursor(c));
    c.addEventListener('blur', () => { c.nextElementSibling.hidden = true; hotTokens(null); });
    c.addEventListener('mouseleave', () => hotTokens(null));
  }
  new ResizeObserver(([e]) => {
    entBox.width = Math.floor(e.contentRect.width); entBox.height = Math.floor(e.contentRect.height); canvasPx = 0;
    redraw.readouts = true; schedule();
  }).observe($('ent-hist'));
  // an embed's figure takes the height its controls leave (style.css reads --ctl-h)
  new ResizeObserver(([e]) => {
    document.documentElement.style.setProperty('--ctl-h', `${Math.ceil(e.borderBoxSize?.[0]?.blockSize ?? e.contentRect.height)}px`);
  }).observe(document.querySelector('.controls'));
  addEventListener('pointerup', () => { if (dragging) onChange(null, null, 'change'); });
  $('theme').addEventListener('click', () => {
    const order = ['auto', 'dark', 'light'];
    onChange('theme', order[(order.indexOf(st.theme) + 1) % 3], 'input');
    try { localStorage.setItem(THEME_KEY, st.theme); } catch { /* storage refused (a sandboxed frame): this page only */ }
    charts?.spectrum.redraw(); charts?.error.redraw();
  });
  $('projector').addEventListener('click', () => onChange('projector', !st.projector, 'input'));
  addEventListener('hashchange', () => {
    if (location.hash.slice(1) === withPreset(schema.toHash(st), lesson)) return;
    const ex = expandPreset(location.hash);
    const p = schema.fromHash(ex.hash);
    if (ex.problem) p.problems.unshift(ex.problem);
    if (p.problems.length) showNotice(p.problems.join('; '));
    lesson = ex.preset;
    lessons.show(lesson);
    applyState(p.state);
  });
  hosts = listenForHosts(window, {
    snapshot: () => inspector.snapshot(),
    origins: () => listOf(st.host),
    // a host's partial state, merged: the current link with its keys after (fromHash reads in order)
    set(pairs) {
      const extra = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
      const p = schema.fromHash(`${schema.toHash(st)}&${extra}`);
      if (p.problems.length) showNotice(p.problems.join('; '));
      applyState(p.state);
      return p.problems;
    },
  });
  if (parsed.problems.length) showNotice(parsed.problems.join('; '));
  dirty = 'inputs'; release = true; redraw.controls = true;
  schedule();
}

window.attnviz = {
  get state() { return { ...st }; },
  get stats() { return stats; },
  get view() { return view; },
  get charts() { return charts; },
  get ready() { return !!engine && !!workers && workers.spectrum.ready && workers.frame.ready; },
  get idle() { return !!workers && !raf && !urlTimer && !chartsWaiting && dirty === null && Object.values(workers).every((w) => w.done >= w.posted); },
  /** A promise of {state, readouts, tokens} once the view for the current state has settled (docs/inspection.md). */
  snapshot: () => inspector.snapshot(),
  /** A promise of the finished sweep for the current state, or of null when it is off (docs/inspection.md). */
  sweep: () => finishedSweep(),
  /** What the mechanism views show now (docs/inspection.md): {open, stepper, scaling, recall, distill}. */
  mechanisms: () => mechPanel?.snapshot() ?? null,
  /** Once the state has settled and the overview shown is complete: what it shows (docs/inspection.md). */
  overview: async () => { await inspector.snapshot(); await overview.finished(); return overview.snapshot(); },
};
start();
