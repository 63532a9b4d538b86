// embed.mjs: the <attn-viz> custom element, built as build/web/embed.js (vite.embed.mjs). A host page
// loads it with one module script, from this origin or another that serves the files with CORS headers
// (docs/embedding.md), and writes
//
//   <attn-viz variant="focused" p="3" view="heatmap" controls="p"></attn-viz>
//
// Attributes are the link's keys (docs/page.md; `view` is the link's `embed`, and the key N, which HTML
// would lower-case onto n, is the attribute `power-n`). Each element renders into an open shadow root,
// with no inner iframe: one figure (view = heatmap, spectrum or readouts) and the controls `controls`
// names; a control sets its attribute, so the attributes always say what is shown. Every element on a
// page shares one WebAssembly module (loaded from beside embed.js) and one worker (web/workers/embed-worker.mjs,
// started from a blob: URL so a host on another origin works); an element off screen computes nothing
// until it is scrolled into view. `element.snapshot()` resolves to {state, readouts, tokens} as the
// page's window.attnviz.snapshot() does (docs/inspection.md).
import { loadAttnviz, simdSupported } from './wasm/attnviz.mjs';
import EmbedWorker from './workers/embed-worker.mjs?worker&inline';
import { buildSchema } from './state/state.mjs';
import { buildControls } from './ui/controls.mjs';
import { chartData, LOG_X_MIN_N } from './render/spectrum.mjs';
import uPlot from 'uplot';
import { makeSpectrumChart, makeErrorChart, provideUPlot } from './render/charts.mjs';
import { costLine } from './render/readouts.mjs';
import { mountReadoutTable } from './ui/readout-table.mjs';
import { mountHeatTrio } from './ui/heatmaps.mjs';
import { createPanels } from './ui/panel.mjs';
import { cliReadouts, readoutKeys, linkState } from './io/inspect.mjs';
import { overlayKey } from './compute/engine.mjs';
import { MSG, PART } from './workers/protocol.mjs';
import { shownView } from './state/reference-text.mjs';
import css from './embed.css?inline';
import uplotCss from 'uplot/dist/uPlot.min.css?inline';

provideUPlot(uPlot); // inside embed.js: the element draws its charts without a second fetch

/** Attributes that are not the link's key of the same name (HTML lower-cases attribute names). */
const ATTRIBUTE_KEY = { view: 'embed', 'power-n': 'N' };
const VIEWS = ['heatmap', 'spectrum', 'readouts'];

// --- the page-wide part: one module, one worker, one stylesheet -----------------------------------------
let pool = null;

/** The shared module, schema and worker (loaded once, by the first element). */
function getPool() {
  pool ??= (async () => {
    const simd = simdSupported();
    const av = await loadAttnviz({ simd, source: new URL(simd ? 'attnviz.wasm' : 'attnviz-scalar.wasm', import.meta.url) });
    const schema = buildSchema(av.registry);
    const worker = new EmbedWorker({ name: 'attnviz embeds' });
    const clients = new Map();
    let loaded = false;
    // a failure after the module loaded (an uncaught error, a rejection, a message that could not be read)
    // fails every element's current request: its snapshot() settles and it says so
    const failAll = (sentence) => { for (const c of clients.values()) c.onFailure(sentence); };
    const ready = new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        const m = e.data;
        if (m.kind === MSG.READY) { loaded = true; return resolve(); }
        if (m.kind === MSG.FATAL) return reject(new Error(m.message));
        if (m.kind === MSG.FAILED) return failAll(`the worker failed: ${m.message}`);
        clients.get(m.client)?.onResult(m);
      };
      worker.onerror = (e) => {
        const what = String(e.message || 'unknown error').replace(/^Uncaught\s+/, '').replace(/^\w*Error:\s*/, '');
        if (loaded) failAll(`the worker failed: ${what}`); else reject(new Error(what));
      };
      worker.onmessageerror = () => failAll('a message from the worker could not be read');
    });
    worker.postMessage({ kind: MSG.INIT, module: av.module, memoryMax: av.memoryMax, simd: av.simd });
    await ready;
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(`${uplotCss}\n${css}`);
    return { av, schema, worker, clients, sheet, nextClient: 1 };
  })();
  return pool;
}

// --- the element ----------------------------------------------------------------------------------------
const TEMPLATE = `
<div class="box" part="box">
  <div class="ctl-box" part="controls"></div>
  <section class="heatmaps" aria-label="attention matrices">
    <figure class="heat"><figcaption class="cap-M">variant matrix M</figcaption>
      <div class="heatbox"><canvas class="hm hm-M" role="img" aria-label="heatmap of the variant's attention matrix"></canvas>
        <div class="cbar"><canvas class="cb-seq"></canvas><span class="t hi"></span><span class="t lo"></span></div></div></figure>
    <figure class="heat"><figcaption>softmax A</figcaption>
      <div class="heatbox"><canvas class="hm hm-A" role="img" aria-label="heatmap of the softmax attention matrix"></canvas>
        <div class="cbar"><canvas class="cb-seq"></canvas><span class="t hi"></span><span class="t lo"></span></div></div></figure>
    <figure class="heat"><figcaption>M − A</figcaption>
      <div class="heatbox"><canvas class="hm hm-D" role="img" aria-label="heatmap of the difference between the variant and softmax"></canvas>
        <div class="cbar"><canvas class="cb-div"></canvas><span class="t hi"></span><span class="t lo"></span></div></div></figure>
  </section>
  <section class="spectra" aria-label="spectrum">
    <div class="chart chart-spectrum"></div>
    <div class="chart chart-error"></div>
  </section>
  <section class="readouts" aria-label="readouts"><table><tbody></tbody></table><p class="cost"></p></section>
  <p class="msg" role="status" aria-live="polite">loading…</p>
</div>`;

export class AttnViz extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: 'open' }).innerHTML = TEMPLATE;
    this.q = (sel) => this.shadowRoot.querySelector(sel);
    this.view = { frame: null, spec: null, overlay: {}, job: 0, done: 0 };
    this.visible = false;
    this.dirty = true;
    this.waiters = [];
  }

  /** The link the attributes make (`v=1&key=value…`, attribute names mapped to the link's keys). */
  link() {
    const pairs = ['v=1'];
    for (const { name, value } of this.attributes) {
      if (name === 'class' || name === 'style' || name === 'id' || name.startsWith('aria-') || name.startsWith('data-')) continue;
      const key = ATTRIBUTE_KEY[name] ?? name;
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    }
    return pairs.join('&');
  }

  async connectedCallback() {
    if (this.pool) { this.observe(); return; }
    try {
      this.pool = await getPool();
    } catch (err) {
      this.q('.msg').textContent = `attn-viz: the WebAssembly module did not load: ${err.message}`;
      return;
    }
    const { schema, clients, sheet } = this.pool;
    this.shadowRoot.adoptedStyleSheets = [sheet];
    this.client = this.pool.nextClient++;
    clients.set(this.client, this);
    const entries = schema.SCHEMA.filter((e) => ['input', 'variant', 'readout'].includes(e.group));
    this.readState();
    // a control writes its attribute: the attributes are the state
    this.controls = buildControls(this.q('.ctl-box'), entries, this.st, (name, value, phase) => {
      if (name === null || phase === 'input') return; // compute on release, not on every drag frame
      const e = schema.entryOf(name);
      const text = e.type === 'bool' ? (value ? '1' : '0') : String(value);
      const attr = Object.entries(ATTRIBUTE_KEY).find(([, k]) => k === name)?.[0] ?? name;
      this.setAttribute(attr, text);
    }, (e, st) => schema.shown(e, { ...st, embed: st.embed || 'heatmap' }));
    // the page's heatmap trio and readout table (web/ui/heatmaps.mjs, web/ui/readout-table.mjs), and the charts
    this.panels = createPanels();
    this.heat = this.panels.add(mountHeatTrio(this.shadowRoot, {
      frame: () => this.view.frame,
      // a decayed or windowed softmax is a variant, not the reference (reference-text.mjs)
      caption: () => `${shownView(schema.variantView(this.st.variant), schema.variantRow(this.st.variant).class === 'exact', schema.knobsOf(this.st)).label}: M`,
      missing: (f) => { this.q('.msg').textContent = f?.status?.matrix?.message ?? 'no matrix'; },
    }));
    this.table = this.panels.add(mountReadoutTable(this.q('.readouts tbody'), {
      source: () => ({
        r: { ...(this.view.frame?.readouts ?? {}), ...(this.view.spec?.readouts ?? {}) },
        ctx: { n: this.st.n, tau: this.st.tau, ceiling: this.view.spec?.ceiling ?? null, partial: !!this.view.spec?.partial, relTol: this.st.rtol, relRank: null },
        spectrum: !!this.view.spec,
      }),
    }));
    this.panels.add({ name: 'spectra', sync() {}, update() {}, draw: () => this.drawSpectra(), snapshot: () => null, dispose: () => { this.charts?.destroy(); this.charts = null; } });
    this.observe();
    this.render();
  }

  disconnectedCallback() {
    this.mo?.disconnect(); this.io?.disconnect(); this.ro?.disconnect();
    this.mo = this.io = this.ro = null;
    // a removed element frees its engine; one moved elsewhere comes back through connectedCallback
    queueMicrotask(() => {
      if (this.isConnected || !this.pool) return;
      this.pool.worker.postMessage({ kind: MSG.DROP, client: this.client });
      this.pool.clients.delete(this.client);
      this.pool = null;
    });
  }

  observe() {
    if (!this.pool.clients.has(this.client)) this.pool.clients.set(this.client, this);
    // the element's own data-view (below) is not state: a change of it alone is not read again
    this.mo = new MutationObserver((records) => {
      if (records.every((r) => r.attributeName.startsWith('data-'))) return;
      this.readState(); this.dirty = true; this.render();
    });
    this.mo.observe(this, { attributes: true });
    this.io = new IntersectionObserver(([e]) => { this.visible = e.isIntersecting; if (this.visible) this.compute(); });
    this.io.observe(this);
    this.ro = new ResizeObserver(() => { this.charts?.destroy(); this.charts = null; this.drawSpectra(); });
    this.ro.observe(this.q('.spectra'));
  }

  /** The state from the attributes; problems (bad keys or values) are shown in the element. */
  readState() {
    const { schema } = this.pool;
    const { state, problems } = schema.fromHash(this.link());
    const view = VIEWS.includes(state.embed) ? state.embed : 'heatmap';
    if (state.embed && !VIEWS.includes(state.embed)) problems.push(`view "${state.embed}" is not one of ${VIEWS.join(', ')} here: showing the heatmap`);
    // the element takes no messages (its page drives it through attributes): a host= restricts nothing here
    if (state.host) problems.push('host: the <attn-viz> element answers no messages (host= is for the iframe embed)');
    this.st = { ...state, embed: view };
    this.problems = problems;
    if (this.dataset.view !== view) this.dataset.view = view; // style.css: :host([data-view=…])
  }

  /** Ask the worker for the current state (only while on screen; latest wins per element). */
  compute() {
    if (!this.visible || !this.dirty || !this.pool) return;
    this.dirty = false;
    const req = this.pool.schema.requestOf(this.st);
    this.view.job += 1;
    this.view.req = req;
    this.view.key = JSON.stringify(req);
    this.pool.worker.postMessage({ kind: MSG.JOB, client: this.client, id: this.view.job, req, overlays: this.st.embed === 'spectrum' });
    this.q('.msg').textContent = this.problems.join('; ') || 'computing…';
  }

  render() {
    this.controls.sync(this.st);
    this.compute();
  }

  onResult(m) {
    if (m.id !== this.view.job) return; // an older request's
    if (m.part === PART.FRAME) { this.view.frame = m; this.heat.draw(); this.drawReadouts(); }
    else if (m.part === PART.SPECTRUM) { this.view.spec = m; this.drawSpectra(); this.drawReadouts(); }
    else if (m.part === PART.OVERLAY) { this.view.overlay[m.which] = m; this.drawSpectra(); }
    else if (m.part === PART.ERROR) this.onFailure(`computation failed: ${m.message}`);
    else if (m.part === PART.DONE && !m.dropped) {
      this.view.done = m.id;
      this.q('.msg').textContent = this.problems.join('; ');
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** The current request failed (no 'done' will come for it): say so, and settle snapshot() without its results. */
  onFailure(sentence) {
    this.q('.msg').textContent = sentence;
    this.view.failed = { job: this.view.job, sentence };
    this.view.done = this.view.job;
    for (const w of this.waiters.splice(0)) w();
  }

  drawSpectra() {
    if (this.st?.embed !== 'spectrum' || !this.pool) return;
    const box = this.q('.spectra').getBoundingClientRect();
    if (box.width < 50) return;
    const logX = this.st.n > LOG_X_MIN_N;
    if (!this.charts || this.charts.logX !== logX) {
      this.charts?.destroy();
      const w = Math.floor(box.width), h = Math.max(80, Math.floor(box.height / 2) - 30);
      const opts = { width: w, height: h, dark: () => false, fontPx: 11, logX };
      const spectrum = makeSpectrumChart(this.q('.chart-spectrum'), opts);
      const error = makeErrorChart(this.q('.chart-error'), opts);
      this.charts = { logX, spectrum, error, destroy() { spectrum.destroy(); error.destroy(); } };
    }
    const req = this.view.req;
    const ov = this.view.overlay;
    const current = Object.fromEntries(['S', 'E', 'A'].filter((k) => ov[k] && req && ov[k].key === overlayKey(req, k) && ov[k].sv.length <= this.st.n).map((k) => [k, ov[k]]));
    const spec = this.view.spec;
    const data = chartData({ spec: spec?.sv ? spec : null, overlays: current, n: this.st.n, ceiling: spec?.ceiling ?? null });
    this.charts.spectrum.update(data.spectrum);
    this.charts.error.update(data.error);
  }

  drawReadouts() {
    this.table.draw();
    const { schema } = this.pool, label = shownView(schema.variantView(this.st.variant), schema.variantRow(this.st.variant).class === 'exact', schema.knobsOf(this.st)).label;
    this.q('.cost').textContent = costLine(this.view.frame?.cost, this.st.n, { softmax: this.view.frame?.softmaxCost, featureDim: this.view.frame?.costFeatureDim, label });
  }

  /**
   * A promise of {state, readouts, tokens} once this element shows its current state (docs/inspection.md);
   * when its computation failed, the readouts it did not get are null, their reasons naming the failure.
   */
  async snapshot() {
    await getPool();
    for (;;) {
      const key = this.view.key;
      if (!this.dirty && this.view.done === this.view.job && key === JSON.stringify(this.pool.schema.requestOf(this.st))) break;
      if (this.dirty) { this.visible = true; this.compute(); }
      await new Promise((resolve) => this.waiters.push(resolve));
    }
    const { av, schema } = this.pool;
    // only this request's results: a failed one leaves an older request's frame or spectrum in view
    const job = this.view.job;
    const frame = this.view.frame?.id === job ? this.view.frame : null;
    const spec = this.view.spec?.id === job ? this.view.spec : null;
    const failed = this.view.failed?.job === job ? this.view.failed.sentence : null;
    const readouts = cliReadouts({
      req: this.view.req, frame, plain: frame?.readouts ?? null, spec,
      names: readoutKeys(av), exact: av.isPlainSoftmax(this.view.req.knobs), STATUS: av.STATUS,
      statusString: (c) => av.statusString(c), missing: failed ? `not computed (${failed})` : 'not computed',
    });
    return { state: linkState(schema.toHash(this.st, { complete: true })), readouts, tokens: null };
  }
}

if (!customElements.get('attn-viz')) customElements.define('attn-viz', AttnViz);
