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
// page's window.attnviz.snapshot() does (docs/inspection.md). `lang` (the HTML attribute, inherited from
// an ancestor as HTML inherits it) picks the element's words: en or zh (docs/embedding.md, docs/i18n.md).
// `theme` (light, dark, auto: the host page's color-scheme) and the host's --attnviz-* properties pick its
// colours (embed.css; the charts' canvases read them: palette()).
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
import { said } from './state/notice.mjs';
import { t, tOwn, setLang, getLang, LANGS } from './i18n/i18n.mjs';
import css from './embed.css?inline';
import uplotCss from 'uplot/dist/uPlot.min.css?inline';

provideUPlot(uPlot); // inside embed.js: the element draws its charts without a second fetch

/** Attributes that are not the link's key of the same name (HTML lower-cases attribute names). */
const ATTRIBUTE_KEY = { view: 'embed', 'power-n': 'N' };
const VIEWS = ['heatmap', 'spectrum', 'readouts'];
const THEMES = ['auto', 'light', 'dark'];

/** The relative luminance (WCAG 2) of a computed colour `rgb(r, g, b)` / `rgba(…)`, 0..1 (0 when unreadable). */
function luminance(css) {
  const [r, g, b] = (String(css).match(/[\d.]+/g) ?? [0, 0, 0]).map(Number);
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
}

/** The element's language from an HTML lang value ('zh', 'zh-CN', 'zh-Hans', 'en-GB'): its primary subtag
 *  when the page speaks it, else the default (a host's lang="fr" is valid HTML, not a mistake to report). */
export function langOfTag(tag) {
  const primary = String(tag ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return LANGS.includes(primary) ? primary : LANGS[0];
}

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
    // fails every element's current request: its snapshot() settles and it says so, in its own language
    const failAll = (key, params) => { for (const c of clients.values()) c.onFailure(key, params); };
    const ready = new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        const m = e.data;
        if (m.kind === MSG.READY) { loaded = true; return resolve(); }
        if (m.kind === MSG.FATAL) return reject(new Error(m.message));
        if (m.kind === MSG.FAILED) return failAll('embed.workerFailed', { message: m.message });
        clients.get(m.client)?.onResult(m);
      };
      worker.onerror = (e) => {
        const what = String(e.message || 'unknown error').replace(/^Uncaught\s+/, '').replace(/^\w*Error:\s*/, '');
        if (loaded) failAll('embed.workerFailed', { message: what }); else reject(new Error(what));
      };
      worker.onmessageerror = () => failAll('embed.messageUnreadable');
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
  <section class="heatmaps" data-aria="embed.aria.heatmaps">
    <figure class="heat"><figcaption class="cap-M" data-text="embed.caption.M"></figcaption>
      <div class="heatbox"><canvas class="hm hm-M" role="img" data-aria="embed.aria.M"></canvas>
        <div class="cbar"><canvas class="cb-seq"></canvas><span class="t hi"></span><span class="t lo"></span></div></div></figure>
    <figure class="heat"><figcaption data-text="embed.caption.A"></figcaption>
      <div class="heatbox"><canvas class="hm hm-A" role="img" data-aria="embed.aria.A"></canvas>
        <div class="cbar"><canvas class="cb-seq"></canvas><span class="t hi"></span><span class="t lo"></span></div></div></figure>
    <figure class="heat"><figcaption data-text="embed.caption.D"></figcaption>
      <div class="heatbox"><canvas class="hm hm-D" role="img" data-aria="embed.aria.D"></canvas>
        <div class="cbar"><canvas class="cb-div"></canvas><span class="t hi"></span><span class="t lo"></span></div></div></figure>
  </section>
  <section class="spectra" data-aria="embed.aria.spectra">
    <div class="chart chart-spectrum"></div>
    <div class="chart chart-error"></div>
  </section>
  <section class="readouts" data-aria="embed.aria.readouts"><table><tbody></tbody></table><p class="cost"></p></section>
  <p class="msg" role="status" aria-live="polite"></p>
</div>`;

export class AttnViz extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: 'open' }).innerHTML = TEMPLATE;
    this.q = (sel) => this.shadowRoot.querySelector(sel);
    this.speaks = null; // the language its words are in (words()); null: none written yet (not `lang`: HTMLElement's, the attribute)
    this.view = { frame: null, spec: null, overlay: {}, job: 0, done: 0 };
    this.visible = false;
    this.dirty = true;
    this.waiters = [];
  }

  /**
   * Run `fn` with t() in this element's language. The page's modules the element reuses (controls, readout
   * table, heatmap captions, cost line) call t() in the one module-wide language, which elements of
   * different languages share: each of the element's writes is synchronous, so it sets the language for
   * the call and gives the host's back after it.
   */
  speak(fn) {
    const was = getLang();
    setLang(this.speaks ?? LANGS[0]);
    try { return fn(); } finally { setLang(was); }
  }

  /** The element's own words in its language (t() given the language: no module-wide state). */
  say(key, params = null) { return t(key, params, this.speaks ?? LANGS[0]); }

  /** Write the template's words in the element's language, if it changed: its own `lang` attribute or an
   *  ancestor's (HTML's inheritance; a host's <html lang="zh-CN"> makes its figures Chinese). */
  words() {
    const lang = langOfTag(this.closest('[lang]')?.getAttribute('lang'));
    if (lang === this.speaks) return false;
    this.speaks = lang;
    for (const el of this.shadowRoot.querySelectorAll('[data-text]')) el.textContent = this.say(el.dataset.text);
    for (const el of this.shadowRoot.querySelectorAll('[data-aria]')) el.setAttribute('aria-label', this.say(el.dataset.aria));
    return true;
  }

  /** Show a sentence of the element's own (a catalogue key) under the figure. */
  tell(key, params = null) { this.q('.msg').textContent = key ? this.say(key, params) : ''; }

  /** The link the attributes make (`v=1&key=value…`, attribute names mapped to the link's keys). */
  link() {
    const pairs = ['v=1'];
    for (const { name, value } of this.attributes) {
      // lang is HTML's (a BCP 47 tag: zh-CN), read by words(): the snapshot is the same in every language
      if (name === 'class' || name === 'style' || name === 'id' || name === 'lang' || name === 'theme' || name.startsWith('aria-') || name.startsWith('data-')) continue;
      const key = ATTRIBUTE_KEY[name] ?? name;
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    }
    return pairs.join('&');
  }

  async connectedCallback() {
    this.words();
    if (this.pool) { this.observe(); return; }
    if (!this.q('.msg').textContent) this.tell('embed.loading');
    try {
      this.pool = await getPool();
    } catch (err) {
      this.tell('embed.moduleFailed', { message: err.message });
      return;
    }
    const { schema, clients, sheet } = this.pool;
    this.shadowRoot.adoptedStyleSheets = [sheet];
    this.client = this.pool.nextClient++;
    clients.set(this.client, this);
    const entries = schema.SCHEMA.filter((e) => ['input', 'variant', 'readout'].includes(e.group));
    this.readState();
    // a control writes its attribute: the attributes are the state
    this.controls = this.speak(() => buildControls(this.q('.ctl-box'), entries, this.st, (name, value, phase) => {
      if (name === null || phase === 'input') return; // compute on release, not on every drag frame
      const e = schema.entryOf(name);
      const text = e.type === 'bool' ? (value ? '1' : '0') : String(value);
      const attr = Object.entries(ATTRIBUTE_KEY).find(([, k]) => k === name)?.[0] ?? name;
      this.setAttribute(attr, text);
    }, (e, st) => schema.shown(e, { ...st, embed: st.embed || 'heatmap' })));
    // the page's heatmap trio and readout table (web/ui/heatmaps.mjs, web/ui/readout-table.mjs), and the charts
    this.panels = createPanels();
    // mounted in the element's language too: a panel may write words as it mounts
    this.heat = this.panels.add(this.speak(() => mountHeatTrio(this.shadowRoot, {
      frame: () => this.view.frame,
      // a decayed or windowed softmax is a variant, not the reference (reference-text.mjs)
      caption: () => this.say('embed.caption.variant', { variant: this.variantLabel() }),
      missing: (f) => { if (f?.status?.matrix?.message) this.q('.msg').textContent = f.status.matrix.message; else this.tell('embed.noMatrix'); },
    })));
    this.table = this.panels.add(this.speak(() => mountReadoutTable(this.q('.readouts tbody'), {
      source: () => ({
        r: { ...(this.view.frame?.readouts ?? {}), ...(this.view.spec?.readouts ?? {}) },
        ctx: { n: this.st.n, tau: this.st.tau, ceiling: this.view.spec?.ceiling ?? null, partial: !!this.view.spec?.partial, relTol: this.st.rtol, relRank: null },
        spectrum: !!this.view.spec,
      }),
    })));
    this.panels.add({ name: 'spectra', sync() {}, update() {}, draw: () => this.drawSpectra(), snapshot: () => null, dispose: () => { this.charts?.destroy(); this.charts = null; } });
    this.observe();
    this.render();
  }

  disconnectedCallback() {
    this.themeWatch?.abort(); this.themeWatch = null;
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
      if (records.every((r) => r.attributeName === 'theme' || r.attributeName.startsWith('data-'))) { this.themeChanged(); return; }
      // a change of lang alone changes the words, not the state: redraw them, compute nothing
      if (records.every((r) => r.attributeName === 'lang' || r.attributeName.startsWith('data-'))) { if (this.words()) this.redrawWords(); return; }
      this.words(); this.readState(); this.dirty = true; this.render();
    });
    this.mo.observe(this, { attributes: true });
    this.io = new IntersectionObserver(([e]) => { this.visible = e.isIntersecting; if (this.visible) this.compute(); });
    this.io.observe(this);
    this.ro = new ResizeObserver(() => { this.charts?.destroy(); this.charts = null; this.drawSpectra(); });
    if (this.words()) this.redrawWords(); // its lang (or an ancestor's) may have changed while it was away
    this.ro.observe(this.q('.spectra'));
    this.watchTheme(); // its colours may have changed while it was away too
  }

  /** The state from the attributes; problems (bad keys or values) are shown in the element. */
  readState() {
    const { schema } = this.pool;
    const { state, problems } = schema.fromHash(this.link());
    const view = VIEWS.includes(state.embed) ? state.embed : 'heatmap';
    // the element's own problems as keys, said in its language (the schema's English sentences are said again in it)
    const own = [];
    if (state.embed && !VIEWS.includes(state.embed)) own.push(['embed.badView', { view: state.embed, views: VIEWS.join(', ') }]);
    // the element takes no messages (its page drives it through attributes): a host= restricts nothing here
    if (state.host) own.push(['embed.host']);
    own.push(...this.themeProblems());
    this.st = { ...state, embed: view, lang: this.speaks ?? LANGS[0] };
    this.ownProblems = own;
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
    if (this.problemText()) this.q('.msg').textContent = this.problemText(); else this.tell('embed.computing');
  }

  /** The problems with the attributes, in the element's language where they are its own. */
  problemText() {
    const lang = this.speaks ?? LANGS[0];
    return [...this.problems.map((p) => said(p, lang)), ...this.ownProblems.map(([key, params]) => this.say(key, params))].join(this.say('embed.join'));
  }

  /** The variant's name as the picker shows it: a softmax with a decay or a window by what it has. */
  variantLabel() {
    const { schema } = this.pool, view = schema.variantView(this.st.variant);
    const shown = this.speak(() => shownView(view, schema.variantRow(this.st.variant).class === 'exact', schema.knobsOf(this.st)));
    return shown.label !== view.label ? shown.label : tOwn(`variant.${this.st.variant}`, view.label, null, this.speaks ?? LANGS[0]);
  }

  render() {
    this.speak(() => this.controls.sync(this.st));
    this.compute();
  }

  /** Everything the element shows in words again, after its language changed (no computation). */
  redrawWords() {
    if (!this.controls) return;
    this.st = { ...this.st, lang: this.speaks };
    this.speak(() => this.controls.sync(this.st));
    if (this.view.frame) { this.heat.draw(); this.drawReadouts(); }
    this.charts?.destroy(); this.charts = null; this.drawSpectra();
    if (this.view.failed?.job === this.view.job) this.tell(...this.view.failed.said);
    else if (this.view.done === this.view.job) this.q('.msg').textContent = this.problemText();
  }

  // --- theme (docs/embedding.md, "Themes"): CSS does the element's colours; the charts' canvases ask ---------
  /** The `theme` attribute's problem, if its value is none of THEMES (then it follows the page, as auto). */
  themeProblems() {
    const v = this.getAttribute('theme');
    return v === null || THEMES.includes(v.trim().toLowerCase()) ? [] : [['embed.badTheme', { theme: v.slice(0, 40), themes: THEMES.join(', ') }]];
  }

  /** The probe embed.css colours: the outer span's transitions signal a change, the inner span is read. */
  themeProbe() {
    if (!this.probe) {
      this.probe = document.createElement('i');
      this.probe.className = 'theme-probe';
      this.probe.setAttribute('aria-hidden', 'true');
      this.probe.append(document.createElement('i'));
      this.q('.box').append(this.probe); // inside .box: it reads the colours .box (and .dark) set
    }
    return this.probe;
  }

  /** The charts' colours now ({axis, grid, mark}), as the element's CSS resolves them (cached: retheme()). */
  palette() {
    if (!this.pal) {
      const cs = getComputedStyle(this.themeProbe().firstChild);
      // the element's used color-scheme, from the system colour CanvasText (black in light, white in dark)
      const dark = luminance(cs.outlineColor) > 0.5;
      if (this.q('.box').classList.contains('dark') !== dark) this.q('.box').classList.toggle('dark', dark);
      const now = getComputedStyle(this.themeProbe().firstChild); // after .dark: its colours
      this.pal = { axis: now.color, grid: now.backgroundColor, mark: now.borderTopColor, dark };
    }
    return this.pal;
  }

  /** Follow changes of the colours: the host's color-scheme or --attnviz-* (a blog's theme toggle, the
   *  system's preference under color-scheme: light dark) reach the probe as a transition; `theme` by retheme(). */
  watchTheme() {
    this.themeWatch?.abort();
    this.themeWatch = new AbortController();
    this.themeProbe().addEventListener('transitionend', () => this.retheme(), { signal: this.themeWatch.signal });
    this.retheme();
  }

  /** The theme attribute changed: new colours, and its problem (if any) said again; nothing is computed. */
  themeChanged() {
    this.ownProblems = [...this.ownProblems.filter(([key]) => key !== 'embed.badTheme'), ...this.themeProblems()];
    if (this.view.done === this.view.job && this.view.failed?.job !== this.view.job) this.q('.msg').textContent = this.problemText();
    this.retheme();
  }

  /** The colours may have changed: read them again, and redraw the charts if they did (nothing is computed). */
  retheme() {
    const was = this.pal;
    this.pal = null;
    const now = this.palette();
    if (was && now.axis === was.axis && now.grid === was.grid && now.mark === was.mark && now.dark === was.dark) return;
    this.charts?.spectrum.redraw(); this.charts?.error.redraw();
  }

  onResult(m) {
    if (m.id !== this.view.job) return; // an older request's
    if (m.part === PART.FRAME) { this.view.frame = m; this.speak(() => this.heat.draw()); this.drawReadouts(); }
    else if (m.part === PART.SPECTRUM) { this.view.spec = m; this.drawSpectra(); this.drawReadouts(); }
    else if (m.part === PART.OVERLAY) { this.view.overlay[m.which] = m; this.drawSpectra(); }
    else if (m.part === PART.ERROR) this.onFailure('embed.computeFailed', { message: m.message });
    else if (m.part === PART.DONE && !m.dropped) {
      this.view.done = m.id;
      this.q('.msg').textContent = this.problemText();
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** The current request failed (no 'done' will come for it): say so, and settle snapshot() without its
   *  results (their reasons in English: the snapshot is the same in every language). */
  onFailure(key, params = null) {
    this.tell(key, params);
    this.view.failed = { job: this.view.job, sentence: t(key, params, LANGS[0]), said: [key, params] };
    this.view.done = this.view.job;
    for (const w of this.waiters.splice(0)) w();
  }

  drawSpectra() {
    if (this.st?.embed !== 'spectrum' || !this.pool) return;
    this.speak(() => this.drawSpectraNow());
  }

  drawSpectraNow() {
    const box = this.q('.spectra').getBoundingClientRect();
    if (box.width < 50) return;
    const logX = this.st.n > LOG_X_MIN_N;
    if (!this.charts || this.charts.logX !== logX) {
      this.charts?.destroy();
      const w = Math.floor(box.width), h = Math.max(80, Math.floor(box.height / 2) - 30);
      const opts = { width: w, height: h, colors: () => this.palette(), fontPx: 11, logX };
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
    const label = this.variantLabel();
    this.speak(() => {
      this.table.draw();
      this.q('.cost').textContent = costLine(this.view.frame?.cost, this.st.n, { softmax: this.view.frame?.softmaxCost, featureDim: this.view.frame?.costFeatureDim, label });
    });
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
