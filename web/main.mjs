// main.mjs: wiring. Controls set the state and mark it dirty; one requestAnimationFrame commit
// recomputes what changed and has the panels (web/ui/panel.mjs) sync, update and draw: n ≤
// MAIN_THREAD_MAX_N the heatmaps and plain readouts here, in wasm; above it the workers
// (web/lab-workers.mjs). Latest request wins in each worker; stale results are dropped.
//
// The page starts once its own wasm module is loaded: the schema (state.mjs) is built from the module's
// registry (av.registry), so the variant list, the knob controls, their ranges and defaults, the causal
// rules, the rank ceiling and the feature dimension are the library's. The compute modules (engine.mjs
// here and in the workers) get requests (state.mjs's requestOf: inputs and knobs), never the state.
import './style.css';
import { loadAttnviz, simdSupported, VERSION } from './wasm/attnviz.mjs';
import { wasmSources } from './wasm/wasm-source.mjs';
import { buildSchema, stageDirty, listOf } from './state/state.mjs';
import { listenForHosts } from './io/messages.mjs';
import { watchHeight } from './io/auto-height.mjs';
import { Engine, MAIN_THREAD_MAX_N, FRAME_WORKER_MAX_N } from './compute/engine.mjs';
import { READOUT_ROWS, costLine } from './render/readouts.mjs';
import { uPlotReady } from './render/charts.mjs';
import { rankAtRelative } from './render/spectrum.mjs';
import { createInspector } from './io/inspect.mjs';
import { expandPreset, withPreset } from './state/presets.mjs';
import { createLabWorkers } from './lab-workers.mjs';
import { MSG } from './workers/protocol.mjs';
import { createPanels } from './ui/panel.mjs';
import { createNotices } from './ui/notices.mjs';
import { buildControls } from './ui/controls.mjs';
import { mountChrome, createDims, savedTheme, earlyLanguage } from './ui/chrome.mjs';
import { t, setLang } from './i18n/i18n.mjs';
import { mountHeatmaps } from './ui/heatmaps.mjs';
import { mountRowView } from './ui/row-view.mjs';
import { mountGateStrip } from './ui/gate-strip.mjs';
import { mountReadoutsPanel } from './ui/readout-table.mjs';
import { mountEntropy } from './ui/entropy-panel.mjs';
import { mountSpectra } from './ui/spectra.mjs';
import { mountArticleFigures } from './ui/article-figures.mjs';
import { mountSweep } from './ui/sweep-panel.mjs';
import { mountOverview } from './ui/overview.mjs';
import { mountMechanisms } from './ui/mechanisms.mjs';
import { mountModelPanel } from './ui/model-panel.mjs';
import { mountLossPanel } from './ui/loss-panel.mjs';
import { mountLessons } from './ui/lessons.mjs';
import { mountExplain } from './ui/explain-popover.mjs';
import { mountExport } from './ui/export-menu.mjs';
import { mountEmbedCode } from './ui/embed-code.mjs';
import { shownView, referenceCaption } from './state/reference-text.mjs';

const $ = (id) => document.getElementById(id);
const prefersDark = matchMedia('(prefers-color-scheme: dark)'); // live: .matches follows the system
// The size of the text drawn on canvases (the charts' axes, the histogram): the stylesheet's smallest
// text, which projector mode and the screen size set. Read again after a resize or a projector toggle.
let canvasPx = 0;

// --- the page: what every panel reads (the state, the view, the module) and may ask for ----------------
const page = {
  st: null, schema: null, av: null, engine: null, lab: null,
  view: { frame: null, readouts: null, readoutsStale: false, spec: null, overlay: {}, specStale: false, waitingFrame: false, frameJob: 0, readoutsJob: 0, localJob: 0 },
  redraw: { heat: false, spec: false, readouts: false, controls: true },
  pendingMarks: { heat: null, plain: null, spec: null },
  // measurements the benchmark and e2e tests read (window.attnviz)
  stats: { seq: 0, inputAt: new Map(), heatAt: new Map(), plainAt: new Map(), specAt: new Map(), reqSeq: new Map() },
  // the inspection API (web/io/inspect.mjs, docs/inspection.md): each part of the view is tagged with the
  // request it was computed for ({key: requestOf as JSON, drag}), so a snapshot never mixes states
  tags: { frame: null, plain: null, spec: null },
  notice: createNotices($('notice')),
  isDark: () => document.documentElement.dataset.theme === 'dark' || (document.documentElement.dataset.theme === 'auto' && prefersDark.matches),
  textPx: () => (canvasPx ||= parseFloat(getComputedStyle($('chart-spectrum')).fontSize) || 11),
  resetTextPx: () => { canvasPx = 0; },
  schedule, onChange, recompute, applyState, requestOf,
  tokenPieces: () => model?.pieces() ?? null,
  zoom: () => heat?.zoom ?? null,
  // the variant's label, formula and help for state s: a decayed or windowed softmax is not the reference
  viewOf: (s) => shownView(page.schema.variantView(s.variant), page.schema.variantRow(s.variant).class === 'exact', page.schema.knobsOf(s)),
  referenceCaption: (s) => referenceCaption(page.schema.knobsOf(s)),
};
page.dims = createDims(page);
const { view, redraw, stats, tags, pendingMarks } = page;
const panels = createPanels();
let heat = null, spectra = null, model = null, sweep = null, mech = null, overview = null, lessons = null, explain = null, loses = null;
let dirty = 'inputs';          // earliest dirty pipeline stage, or null
let release = true;            // a knob was released: ask for the accurate spectrum
let dragging = false;
let raf = 0;
let lesson = null;             // the open lesson's name (web/state/presets.mjs), or null; the link carries it as preset=
let hosts = null;              // host pages' messages (web/io/messages.mjs)
let height = null;             // height=auto: the content's height posted to the host (web/io/auto-height.mjs)
let trainedW = null;           // {W: Float32Array (d×cols), cols}: the lab's Hedgehog W, from the distillation view; never in a link

/** What the engines compute for a state: state.mjs's request, with one head of the loaded tensors as inputs,
 *  and Hedgehog's trained W (the distillation view's "use this W") while it fits the inputs' d. */
function requestOf(s) {
  const req = page.schema.requestOf(s);
  const t = model.tensors(s);
  if (t) req.inputs = { tensors: t.key, layer: s.layer, head: s.head, n: t.n, d: t.d };
  if (trainedW && req.knobs.variant === 'hedgehog' && trainedW.W.length === req.inputs.d * trainedW.cols) req.knobs.hedgehog_w = trainedW.W;
  return req;
}

const inspector = page.inspector = createInspector(() => {
  const { st, schema } = page;
  const quiet = st && !raf && !urlTimer && !spectra?.waiting() && dirty === null && !release && !dragging && !model?.busy() && !loses?.busy() && !heat?.zoom.pending &&
    page.lab.settled();
  return quiet ? { hash: schema.toHash(st), full: schema.toHash(st, { complete: true }), address: location.hash, req: requestOf(st), parts: { frame: view.frame, plain: view.readouts, spec: view.spec }, tags, av: page.av,
    tokens: page.tokenPieces()?.slice() ?? null, loses: loses?.snapshot() ?? null, model: page.st.src === 'model' ? model?.snapshot() ?? null : null } : null;
});

// --- input --------------------------------------------------------------------------------------
function onChange(name, value, phase) {
  if (phase === 'dragstart') { dragging = true; return; }
  const { schema } = page;
  if (name !== null) {
    const st = page.st;
    const { value: v, problem } = schema.coerce(schema.BY_NAME[name], value, st);
    if (problem) page.notice.show(problem);
    let next = schema.normalise({ ...st, [name]: v });
    if (name === 'variant') next = schema.withVariant(st, next);
    if (name === 'src') next = model.switchSource(st, next);
    next = model.fit(next);
    const keys = schema.changedKeys(st, next);
    page.st = next;
    const stage = schema.firstDirtyStage(keys);
    if (stage && (dirty === null || stageDirty(dirty, stage) === false)) dirty = stage;
    if (stage === null && dirty === null && phase !== 'change') return;
    if (keys.length) { stats.seq += 1; stats.inputAt.set(stats.seq, performance.now()); }
  }
  if (phase === 'change') { dragging = false; release = true; }
  redraw.controls = true;
  // above MAIN_THREAD_MAX_N the workers compute: their job goes out with the input, not at the next
  // animation frame (up to 16 ms later, when the input did not come aligned with frames, as keys do)
  if (page.st && page.st.n > MAIN_THREAD_MAX_N && dirty !== null && phase !== 'change') commitNow();
  else schedule();
}

function schedule() { if (!raf) raf = requestAnimationFrame(commit); }
function commitNow() { if (raf) { cancelAnimationFrame(raf); raf = 0; } commit(); }
/** The inputs changed under the state (a model's run, own files, a new state): recompute and redraw everything. */
function recompute() { dirty = 'inputs'; release = true; redraw.controls = true; schedule(); }

/** Replace the state (a link read, a host's message): the reader's theme stays, but an embed's is its
 *  link's or its host's (state.mjs: an embed's link carries theme=); everything is redrawn. */
function applyState(next) {
  // a link or a host sets n and d itself: only remember the generators' to return to (switchSource's
  // restore is for the picker)
  model.leaving(page.st, next);
  page.st = model.fit({ ...next, theme: themeOf(next) });
  recompute();
}

/** The theme a new state shows: an embed's own (its link's or a host's message), else the reader's. */
function themeOf(next) {
  if (next.embed) return next.theme;
  return page.st?.theme && !page.st.embed ? page.st.theme : savedTheme();
}

// --- commit: one per animation frame --------------------------------------------------------------
function commit() {
  raf = 0;
  const st = page.st, engine = page.engine;
  if (!st) return; // the module is still loading
  const stage = dirty;
  dirty = null;
  if (redraw.controls) { panels.sync(st); redraw.controls = false; }
  if (stage !== null || release) {
    spectra.retry(); // charts that did not load are tried again with each new view
    writeUrl(release);
    const compute = stage !== null && stageDirty(stage, 'readouts');
    if (compute) {
      // the workers start on the spectrum (and, above MAIN_THREAD_MAX_N, the heatmaps and readouts)
      // while this thread computes the heatmaps and readouts of a small n
      const id = page.lab.request(true, dragging);
      if (st.n <= MAIN_THREAD_MAX_N && engine) {
        try {
          view.frame = engine.frame(requestOf(st), { readouts: true });
          view.readouts = view.frame.readouts; page.lab.setStale('readoutsStale', false);
          view.waitingFrame = false; view.localJob = id;
          tags.frame = tags.plain = { key: JSON.stringify(requestOf(st)), drag: false };
          redraw.heat = true; redraw.readouts = true;
          pendingMarks.heat = pendingMarks.plain = stats.seq;
        } catch (err) { page.notice.show(`computation failed: ${err.message}`); }
      }
    } else if (release) {
      page.lab.request(false, false);
    }
    if (stage === 'display') { redraw.heat = true; redraw.spec = true; redraw.readouts = true; }
    release = false;
    hosts?.changed();
    height?.changed();
    if (!dragging) panels.update(st);
  }
  panels.draw(); // each panel draws what its redraw flag says is new (none sets a flag while drawing)
  redraw.heat = redraw.readouts = redraw.spec = false;
  // the veil only when the heatmaps on screen are for another n, or come from the slow worker
  // (a drag above FRAME_WORKER_MAX_N is followed by quick frames: no veil over them)
  const veil = !(view.waitingFrame && (!view.frame || view.frame.n !== st.n || (st.n > FRAME_WORKER_MAX_N && !dragging)));
  if ($('computing').hidden !== veil) $('computing').hidden = veil;
  const t = performance.now();
  if (pendingMarks.heat !== null) { stats.heatAt.set(pendingMarks.heat, t); pendingMarks.heat = null; }
  if (pendingMarks.plain !== null) { stats.plainAt.set(pendingMarks.plain, t); pendingMarks.plain = null; }
  // the charts' module once the first heatmaps and plain readouts are drawn (charts.mjs; above
  // MAIN_THREAD_MAX_N the readouts come from the frame worker after the heatmaps)
  if (!uPlotReady() && stats.heatAt.size && stats.plainAt.size) spectra.load();
  if (pendingMarks.spec !== null) { stats.specAt.set(pendingMarks.spec, t); pendingMarks.spec = null; }
  inspector.notify();
}

// The address bar follows the state, but not on every frame of a drag: replaceState costs
// milliseconds in Chromium, so it is written on release and otherwise once the input rests.
let urlTimer = 0;
let urlOwn = null; // the hash this page last wrote or read: any other is a navigation its hashchange has yet to bring
function writeUrl(now) {
  clearTimeout(urlTimer);
  urlTimer = 0;
  const put = () => {
    urlTimer = 0;
    const h = `#${withPreset(page.schema.toHash(page.st), lesson)}`;
    // a link followed since (a lesson's "next" clicked while its knob plays) is not written over
    if (urlOwn !== null && location.hash !== urlOwn) { inspector.notify(); return; }
    if (location.hash !== h) history.replaceState(null, '', h);
    urlOwn = location.hash;
    inspector.notify();
  };
  if (now) put(); else urlTimer = setTimeout(put, 250);
}

// A lesson's comparison (presets.mjs `compare`): the readouts of the state with one key changed, plain and
// spectral, from the same library and engine code the page's readouts come from, in the background worker
// (its spectrum takes more than a frame). A promise of {r, ctx} as the readout table's source gives them, or
// null (a loaded model's tensors, or the worker failed).
function compareReadouts(st, key, value) {
  const { schema } = page;
  let other = schema.normalise({ ...st, [key]: value });
  if (key === 'variant') other = schema.withVariant(st, other);
  if (model.tensors(other)) return Promise.resolve(null);
  return page.lab.ask(MSG.COMPARE, MSG.COMPARE_DATA, { req: page.schema.requestOf(other) }).then((m) => (m.error ? null : {
    r: m.readouts,
    ctx: { n: other.n, tau: other.tau, ceiling: null, semiCeiling: null, partial: m.partial, relTol: other.rtol,
      relRank: m.sv ? rankAtRelative(m.sv, 10 ** other.rtol, m.floor, m.sigma1Upper) : null },
  }));
}

// --- the background worker's answers and failure (sweeps, exports, a real model, the overview) ---------
// full-resolution arrays for an export, from the background worker (a lab of any n)
const exportArrays = () => page.lab.ask(MSG.EXPORT, MSG.EXPORT_DATA, { req: requestOf(page.st) });

/**
 * The background worker failed outside an answer of its own (an uncaught error, a rejection, a message that
 * could not be read): whatever it was doing is taken as failed, so that nothing waits for it for ever:
 * the model's load or run (the model panel, snapshot()), the sweep (sweep()), the overview (a question
 * asked with page.lab.ask, an export or a lesson's comparison, is answered with the failure there).
 */
function backgroundFailed(what) {
  const sentence = `the background worker failed: ${what}`;
  page.notice.show(sentence, model.busy() ? 'model' : null);
  model.backgroundFailed(what, sentence);
  sweep.failed(what);
  overview.fail(what); // tried again when next asked for
  inspector.notify();
}

// --- start ----------------------------------------------------------------------------------------
async function start() {
  earlyLanguage(); // the status line and a failure to load in the link's language
  explain = mountExplain($('explain'), {
    variantOf: () => ({ name: page.st.variant, ...page.schema.variantView(page.st.variant), source: page.schema.variantRow(page.st.variant).source }),
    rowOf: (id) => READOUT_ROWS.find((r) => r.id === id),
    ctxOf: () => ({ relTol: page.st?.rtol }),
  });
  $('glossary').addEventListener('click', (e) => { e.stopPropagation(); explain.glossary($('glossary'), { projector: !!page.st.projector }); });
  const routes = {};
  try {
    const simd = simdSupported(), src = wasmSources();
    page.av = await loadAttnviz({ simd, source: simd ? src.simd : src.scalar });
    page.schema = buildSchema(page.av.registry);
    // the workers instantiate the module this thread compiled
    page.lab = createLabWorkers(page, routes);
  } catch (err) {
    page.notice.show(t('notice.loadFailed', { message: err.message }));
    $('status').textContent = t('status.failed');
    inspector.fail(`the WebAssembly module did not load: ${err.message}`);
    return;
  }
  const { schema, av } = page;
  const opened = expandPreset(location.hash);
  const parsed = schema.fromHash(opened.hash);
  page.st = { ...parsed.state, theme: themeOf(parsed.state) };
  setLang(page.st.lang); // before the controls are built: their labels are in it (docs/i18n.md)
  lesson = opened.preset;
  if (opened.problem) parsed.problems.unshift(opened.problem);
  page.engine = new Engine(av);
  $('engine').textContent = av.simd ? 'wasm SIMD' : 'wasm scalar';
  const groups = { input: $('ctl-input'), variant: $('ctl-variant'), readout: $('ctl-readout') };
  const byGroup = (g) => schema.SCHEMA.filter((e) => e.group === g);
  const controls = Object.entries(groups).map(([g, el]) => buildControls(el, byGroup(g), page.st, onChange, schema.shown));
  $('variant-info').append(explain.button('variant', null, 'the variant'));
  // the panels, in the order they sync, update and draw (web/ui/panel.mjs, docs/adding-a-panel.md)
  panels.add(mountChrome(page, controls, { onTheme: () => spectra.redrawCharts() }));
  heat = panels.add(mountHeatmaps(page));
  panels.add(mountGateStrip($('gate-strip'), page));
  panels.add(mountRowView(page));
  sweep = panels.add(mountSweep(page));
  overview = panels.add(mountOverview($('overview'), {
    tensors: () => model.tensors(page.st), request: requestOf, worker: () => page.lab.background(),
    onChange: (k, val) => onChange(k, val, 'change'),
    // head by head, the panel "what the model loses" takes the cells' clicks: each toggles a swapped head
    open: (layer, head) => (loses?.picking() ? loses.toggle(layer, head) : applyState({ ...page.st, layer, head })),
    marked: (layer, head) => !!loses?.marked(layer, head),
    label: (s) => page.viewOf(s).label, inputsLabel: () => model.label(true),
    tokens: () => model.modelPieces(), notice: (text) => page.notice.show(text),
  }));
  mech = panels.add(mountMechanisms($('mech'), {
    schema, onChange, dark: page.isDark,
    request: () => requestOf(page.st),
    worker: () => page.lab.mechanisms(),
    useW: (W, cols) => { trainedW = { W, cols }; dirty = 'matrix'; release = true; redraw.controls = true; if (page.st.variant !== 'hedgehog') onChange('variant', 'hedgehog', 'change'); else schedule(); },
    usingW: () => !!trainedW,
    opened: (on) => { if ($('mech-open').getAttribute('aria-pressed') !== String(on)) $('mech-open').setAttribute('aria-pressed', String(on)); },
  }));
  model = panels.add(mountModelPanel(page));
  loses = panels.add(mountLossPanel($('loses'), page, {
    tensors: () => model.tensors(page.st), modelText: () => $('model-text').value, modelId: () => model.loaded(), bos: () => model.config()?.bos ?? 1,
    variantLabel: (s) => page.viewOf(s).label, worker: () => page.lab.background(),
    notice: (text) => page.notice.show(text, 'loses'), busyChanged: () => inspector.notify(),
  }));
  panels.add(mountReadoutsPanel(page, (row) => explain.button('readout', row.id, row.label)));
  panels.add(mountEntropy(page));
  spectra = panels.add(mountSpectra(page));
  panels.add(mountArticleFigures(page));
  lessons = panels.add(mountLessons($('lessons'), $('lesson'), {
    onClose: () => { lesson = null; lessons.show(null); writeUrl(true); },
    onChange, value: (k) => page.st[k], isInt: (k) => page.schema.BY_NAME[k]?.type === 'int',
    // what a prediction's explanation quotes: the settled readouts and state, and the cost line
    live: async () => {
      const s = await inspector.snapshot();
      return { ...s, readouts: { ...s.readouts, ...(await mech.recallSettled()) }, cost: costLine(page.view.frame?.cost, page.st.n, { softmax: page.view.frame?.softmaxCost, featureDim: page.view.frame?.costFeatureDim, label: page.viewOf(page.st).label }) };
    },
    compare: compareReadouts, dragging: () => dragging,
  }));
  panels.add(mountExport($('export'), {
    snapshot: () => inspector.snapshot(),
    request: () => requestOf(page.st),
    label: () => page.viewOf(page.st).label, referenceCaption: () => page.referenceCaption(page.st),
    inputsLabel: (lang) => model.label(false, lang),
    heatmap: (which) => heat.heatmap(which),
    ids: () => model.ids(),
    charts: () => spectra.exportData(),
    entropy: () => panels.get('entropy').bars(),
    sweep: () => sweep.exportData(),
    arrays: () => exportArrays(),
    notice: (text) => page.notice.show(text),
  }));
  panels.add(mountEmbedCode($('embed-code'), $('open-lab'), page));
  Object.assign(routes, panels.routes(), {
    backgroundFailed, ownTensors: () => model.own(), allTensors: () => model.all(),
    mechanisms: (m) => mech.onMessage(m), mechanismsFailed: (sentence) => { page.notice.show(sentence); mech.fail(sentence); },
  });
  lessons.show(lesson);
  $('overview').addEventListener('toggle', () => overview.update(page.st));
  // an embed's figure takes the height its controls leave (style.css reads --ctl-h)
  new ResizeObserver(([e]) => {
    document.documentElement.style.setProperty('--ctl-h', `${Math.ceil(e.borderBoxSize?.[0]?.blockSize ?? e.contentRect.height)}px`);
  }).observe(document.querySelector('.controls'));
  addEventListener('pointerup', () => { if (dragging) onChange(null, null, 'change'); });
  // theme=auto follows the system's preference as it changes: the charts are drawn again in its colours
  prefersDark.addEventListener('change', () => {
    if (page.st.theme !== 'auto') return;
    if (dirty === null) dirty = 'display';
    schedule();
  });
  addEventListener('hashchange', () => {
    urlOwn = location.hash;
    if (location.hash.slice(1) === withPreset(schema.toHash(page.st), lesson)) return;
    const ex = expandPreset(location.hash);
    const p = schema.fromHash(ex.hash);
    if (ex.problem) p.problems.unshift(ex.problem);
    if (p.problems.length) page.notice.show(p.problems.join('; '));
    lesson = ex.preset;
    lessons.show(lesson);
    // projector mode is the reader's while the page is open: a link that does not name it (a lesson
    // link, pasted or from slides) keeps it, so a lecture never drops to small text between lessons
    // and so is the language: a lesson link without lang= keeps the page in the reader's (docs/i18n.md)
    const names = (key) => location.hash.slice(1).split('&').some((kv) => kv.split('=')[0] === key);
    applyState({ ...p.state, projector: names('projector') ? p.state.projector : page.st.projector, lang: names('lang') ? p.state.lang : page.st.lang });
  });
  height = watchHeight(window, { on: () => !!page.st.embed && page.st.height === 'auto', origins: () => listOf(page.st.host) });
  hosts = listenForHosts(window, {
    snapshot: () => inspector.snapshot(),
    origins: () => listOf(page.st.host),
    // a host's partial state, merged: the current link with its keys after (fromHash reads in order)
    set(pairs) {
      const extra = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
      const p = schema.fromHash(`${schema.toHash(page.st)}&${extra}`);
      if (p.problems.length) page.notice.show(p.problems.join('; '));
      applyState(p.state);
      return p.problems;
    },
  });
  if (parsed.problems.length) page.notice.show(parsed.problems.join('; '));
  recompute();
}

window.attnviz = {
  /** The release (package.json's version) this page was built from. */
  version: VERSION,
  get state() { return { ...page.st }; },
  get stats() { return stats; },
  get view() { return view; },
  get charts() { return spectra?.charts() ?? null; },
  get ready() { return !!page.engine && !!page.lab && page.lab.ready(); },
  get idle() { return !!page.lab && !raf && !urlTimer && !spectra?.waiting() && dirty === null && page.lab.settled(); },
  /** A promise of {state, readouts, tokens} once the view for the current state has settled (docs/inspection.md). */
  snapshot: () => inspector.snapshot(),
  /** A promise of the finished sweep for the current state, or of null when it is off (docs/inspection.md). */
  sweep: () => sweep.finished(),
  /** What the mechanism views show now (docs/inspection.md): {open, stepper, scaling, recall, distill}. */
  mechanisms: () => panels.get('mechanisms')?.snapshot() ?? null,
  /** Once the state has settled and the overview shown is complete: what it shows (docs/inspection.md). */
  overview: async () => { await inspector.snapshot(); await overview.finished(); return overview.snapshot(); },
  /** Every panel's part (web/ui/panel.mjs): {name: part} for the panels with one. */
  panels: () => panels.snapshot(),
};
start();
