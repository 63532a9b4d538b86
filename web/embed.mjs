// embed.mjs: the <attn-viz> custom element, built as build/web/embed.js (vite.config.mjs). A host page
// loads it with one module script, from this origin or another that serves the files with CORS headers
// (docs/embedding.md), and writes
//
//   <attn-viz variant="focused" p="3" view="heatmap" controls="p"></attn-viz>
//
// Attributes are the link's keys (docs/page.md; `view` is the link's `embed`, and the key N, which HTML
// would lower-case onto n, is the attribute `power-n`). Each element renders into an open shadow root,
// with no inner iframe: one figure (view = heatmap, spectrum or readouts) and the controls `controls`
// names; a control sets its attribute, so the attributes always say what is shown. Every element on a
// page shares one WebAssembly module (loaded from beside embed.js); each has a worker of its own
// (web/workers/embed-worker.mjs, started from a blob: URL so a host on another origin works), so one
// element's long job never delays another's; an element off screen computes nothing until it is scrolled
// into view. `element.snapshot()` resolves to {state, readouts, tokens, gates} as the
// page's window.attnviz.snapshot() does (docs/inspection.md). `lang` (the HTML attribute, inherited from
// an ancestor as HTML inherits it) picks the element's words: en or zh (docs/embedding.md, docs/i18n.md).
// `theme` (light, dark, auto: the host page's color-scheme) and the host's --attnviz-* properties pick its
// colours (embed.css; the charts' canvases read them: palette()).
import { loadAttnviz, simdSupported } from './wasm/attnviz.mjs';
import EmbedWorker from './workers/embed-worker.mjs?worker&inline';
import { buildSchema, listOf } from './state/state.mjs';
import { buildControls } from './ui/controls.mjs';
import { chartData, LOG_X_MIN_N } from './render/spectrum.mjs';
import { makeSpectrumChart, makeErrorChart, loadUPlot, uPlotReady } from './render/charts.mjs';
import { costLine } from './render/readouts.mjs';
import { mountReadoutTable } from './ui/readout-table.mjs';
import { mountHeatTrio } from './ui/heatmaps.mjs';
import { createPanels } from './ui/panel.mjs';
import { cliReadouts, readoutKeys, linkState, gatesPart } from './io/inspect.mjs';
import { overlayKey } from './compute/engine.mjs';
import { MSG, PART } from './workers/protocol.mjs';
import { openHash } from './io/embed-code.mjs';
import { shownView } from './state/reference-text.mjs';
import { said } from './state/notice.mjs';
import { watchViolations, cspCause, cspCauseWithin, trustedWorker } from './embed-csp.mjs';
import { t, tOwn, setLang, getLang, LANGS } from './i18n/i18n.mjs';
import css from './embed.css?inline';
import uplotCss from 'uplot/dist/uPlot.min.css?inline';

// what the host page's Content-Security-Policy blocks, from the moment embed.js runs: a failure to load
// names the directive (embed-csp.mjs) rather than saying "Failed to fetch"
const violations = watchViolations(globalThis.document);
const CSP_WAIT_MS = 500; // a bound: in Chromium 156 the event came a few tasks after the rejection

/** Where embed.js was loaded from: the lab is beside it (its index.html), as the WebAssembly is. */
const HERE = import.meta.url;

/** Attributes that are not the link's key of the same name (HTML lower-cases attribute names). */
const ATTRIBUTE_KEY = { view: 'embed', 'power-n': 'N' };
const VIEWS = ['heatmap', 'spectrum', 'readouts'];
/** HTML's own attributes, which any element may carry: a host's title, role or tabindex is not a link key
 *  (it was said under the figure as an unknown parameter). lang is read by words(). */
const HTML_ATTRIBUTES = new Set(['accesskey', 'autocapitalize', 'autofocus', 'class', 'contenteditable', 'dir', 'draggable',
  'enterkeyhint', 'exportparts', 'hidden', 'id', 'inert', 'inputmode', 'is', 'itemid', 'itemprop', 'itemref', 'itemscope',
  'itemtype', 'lang', 'loading', 'nonce', 'part', 'popover', 'role', 'slot', 'spellcheck', 'style', 'tabindex', 'title',
  'translate', 'writingsuggestions']);
/** Whether an attribute is the host page's (HTML's, ARIA's, data-*, an event handler's), not a link key. */
export function hostAttribute(name) {
  return HTML_ATTRIBUTES.has(name) || /^(aria|data)-/.test(name) || /^on[a-z]/.test(name);
}
/** The element's messages that only say it is on its way (embed.css floats them over the figure). */
const BUSY = ['embed.loading', 'embed.computing'];

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

// --- the page-wide part: one module, one stylesheet; a worker per element --------------------------------
let pool = null;

/** The shared module and schema (loaded once, by the first element). */
function getPool() {
  pool ??= (async () => {
    const simd = simdSupported();
    // two literal new URL(…, import.meta.url): the form a bundler follows, so an app that bundles embed.js
    // carries both wasm builds along (docs/package.md); @vite-ignore: in this repository's own build the
    // files are not beside web/embed.mjs but copied beside embed.js (web.mk), so it keeps the form as it is
    const source = simd ? new URL(/* @vite-ignore */ './attnviz.wasm', import.meta.url)
      : new URL(/* @vite-ignore */ './attnviz-scalar.wasm', import.meta.url);
    const av = await loadAttnviz({ simd, source });
    const schema = buildSchema(av.registry);
    return { av, schema };
  })();
  return pool;
}

/**
 * A worker of the element's own (issue 32: with one shared worker, a heatmap's 40 ms update waited 4.9 s
 * behind another element's n = 2048). It instantiates the module this page compiled once (no fetch, no
 * compile); each costs its own memory (docs/embedding.md). `el` gets its answers, and its failures in the
 * element's language: a failure after the module loaded fails the element's current request.
 */
function startWorker({ av }, el) {
  const worker = trustedWorker(() => new EmbedWorker({ name: 'attnviz embed' }));
  let loaded = false;
  // a worker whose module did not load answers nothing: it ends, and the element's next request starts another
  const unloaded = (message) => {
    worker.terminate();
    if (el.worker === worker) el.worker = null;
    el.onFailure('embed.moduleFailed', { message });
  };
  worker.onmessage = (e) => {
    const m = e.data;
    if (m.kind === MSG.READY) { loaded = true; return; }
    if (m.kind === MSG.FATAL) return unloaded(m.message);
    if (m.kind === MSG.FAILED) return el.onFailure('embed.workerFailed', { message: m.message });
    el.onResult(m);
  };
  worker.onerror = (e) => {
    const what = String(e.message || 'unknown error').replace(/^Uncaught\s+/, '').replace(/^\w*Error:\s*/, '');
    if (loaded) el.onFailure('embed.workerFailed', { message: what }); else unloaded(what);
  };
  worker.onmessageerror = () => el.onFailure('embed.messageUnreadable');
  worker.postMessage({ kind: MSG.INIT, module: av.module, memoryMax: av.memoryMax, simd: av.simd });
  return worker;
}

/** The element's stylesheet, made once and adopted by each element as it is constructed: the element has
 *  its final layout before the module loads (adopted after it, the template showed unstyled, then
 *  collapsed: a cumulative layout shift of 0.955 on a host page). */
let sheet = null;
function styleSheet() {
  if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(`${uplotCss}\n${css}`); }
  return sheet;
}

// --- the element ----------------------------------------------------------------------------------------
/** An element `tag.class.class` with attributes and children (the template is built without HTML strings:
 *  a host page that requires Trusted Types refuses innerHTML, docs/embedding.md). */
function h(tagClasses, attrs = {}, ...children) {
  const [tag, ...classes] = tagClasses.split('.');
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(' ');
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  el.append(...children);
  return el;
}

/** The element's shadow DOM before anything is computed: a heatmap trio, the charts, the readouts, a line. */
function template() {
  const heat = (which, bar, caption, aria, captionClass = {}) => h('figure.heat', {},
    h('figcaption', { 'data-text': caption, ...captionClass }),
    h('div.heatbox', {}, h(`canvas.hm.hm-${which}`, { role: 'img', 'data-aria': aria }),
      h('div.cbar', {}, h(`canvas.${bar}`), h('span.t.hi'), h('span.t.lo'))));
  return h('div.box', { part: 'box' },
    h('div.ctl-box', { part: 'controls' }),
    h('section.heatmaps', { 'data-aria': 'embed.aria.heatmaps' },
      heat('M', 'cb-seq', 'embed.caption.M', 'embed.aria.M', { class: 'cap-M' }),
      heat('A', 'cb-seq', 'embed.caption.A', 'embed.aria.A'),
      heat('D', 'cb-div', 'embed.caption.D', 'embed.aria.D')),
    h('section.spectra', { 'data-aria': 'embed.aria.spectra' }, h('div.chart.chart-spectrum'), h('div.chart.chart-error')),
    h('section.readouts', { 'data-aria': 'embed.aria.readouts' }, h('table', {}, h('tbody')), h('p.cost')),
    h('p.msg', { role: 'status', 'aria-live': 'polite' }),
    h('a.open', { part: 'open', target: '_blank', rel: 'noopener', 'data-text': 'embed.open' }));
}

export class AttnViz extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: 'open' }).append(template());
    this.shadowRoot.adoptedStyleSheets = [styleSheet()];
    this.q = (sel) => this.shadowRoot.querySelector(sel);
    this.speaks = null; // the language its words are in (words()); null: none written yet (not `lang`: HTMLElement's, the attribute)
    this.view = { frame: null, spec: null, overlay: {}, job: 0, done: 0, frames: 0 }; // frames: heatmaps drawn
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
  tell(key, params = null) { this.note(key ? this.say(key, params) : '', BUSY.includes(key)); }

  /** Write the line under the figure; a passing state (`busy`: loading, computing) floats over the figure
   *  instead (embed.css), so that its coming and going never moves the host's text. */
  note(text, busy = false) {
    const msg = this.q('.msg');
    msg.textContent = text;
    msg.classList.toggle('busy', busy);
  }

  /** The link the attributes make (`v=1&key=value…`, attribute names mapped to the link's keys). */
  link() {
    const pairs = ['v=1'];
    for (const { name, value } of this.attributes) {
      // lang is HTML's (a BCP 47 tag: zh-CN), read by words(): the snapshot is the same in every language
      // theme: the element's colours (themeChanged); lab: where "open in attnviz" leads (labBase); not link keys here
      if (hostAttribute(name) || name === 'theme' || name === 'lab') continue;
      const key = ATTRIBUTE_KEY[name] ?? name;
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    }
    return pairs.join('&');
  }

  async connectedCallback() {
    // a figure, named by the host's aria-label or title; a role the host gave stays (an attribute, not
    // ElementInternals.role, so that every accessibility tool sees it)
    if (!this.hasAttribute('role')) this.setAttribute('role', 'figure');
    this.words();
    if (this.controls) { this.observe(); return; } // mounted before: back from a move
    if (this.loading) return; // its first connection is still loading the module: that one mounts it
    this.reserve();
    this.watchTheme(); // a dark host's colours from the first paint, whether or not the module loads
    if (!this.q('.msg').textContent) this.tell('embed.loading');
    this.loading = true;
    try {
      this.pool = await getPool();
    } catch (err) {
      // Chromium rejects a blocked fetch before it reports the violation: give its event a moment to come
      this.tell(...(await cspCauseWithin(violations, import.meta.url, CSP_WAIT_MS) ?? ['embed.moduleFailed', { message: err.message }]));
      return;
    } finally { this.loading = false; }
    // removed while it loaded: mounted when it is connected again (connectedCallback, above)
    if (!this.isConnected) return;
    const { schema } = this.pool;
    const entries = schema.SCHEMA.filter((e) => ['input', 'variant', 'readout'].includes(e.group));
    this.readState();
    this.q('.ctl-box').replaceChildren(); // the rows reserve() held
    // a control writes its attribute: the attributes are the state
    this.controls = this.speak(() => buildControls(this.q('.ctl-box'), entries, this.st, (name, value, phase) => {
      // a slider's 'input' too: the figure follows a drag (latest wins in its worker, so no queue builds up)
      if (name === null) return;
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
      missing: (f) => { if (f?.status?.matrix?.message) this.note(f.status.matrix.message); else this.tell('embed.noMatrix'); },
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

  /**
   * Before the module loads, hold the room the element will take (docs/embedding.md, "No layout shift"):
   * its view shown and a row for each control its `controls` names (the real rows replace them); the
   * figures' heights follow the element's width alone (embed.css).
   */
  reserve() {
    const view = this.getAttribute('view');
    if (!this.dataset.view) this.dataset.view = VIEWS.includes(view) ? view : 'heatmap';
    if (!this.controls) {
      const names = new Set(listOf(this.getAttribute('controls')).map((k) => k.trim()).filter(Boolean));
      if (names.has('dwc')) names.add('dwc_k'); // a toggle's slider goes with its checkbox
      this.q('.ctl-box').replaceChildren(...[...names].map(() => Object.assign(document.createElement('div'), { className: 'ctl reserved' })));
    }
  }

  disconnectedCallback() {
    this.themeWatch?.abort(); this.themeWatch = null;
    this.mo?.disconnect(); this.io?.disconnect(); this.ro?.disconnect();
    this.mo = this.io = this.ro = null;
    clearTimeout(this.parkTimer);
    // a removed element ends its worker (and frees its memory); one moved elsewhere comes back through
    // connectedCallback, and a new worker starts with its next computation
    queueMicrotask(() => {
      if (this.isConnected) return;
      this.worker?.terminate();
      this.worker = null;
      if (this.view.done !== this.view.job) this.dirty = true; // its unfinished job is asked for again on its return
    });
  }

  observe() {
    this.mo?.disconnect(); this.io?.disconnect(); this.ro?.disconnect(); // observed once, however often connected
    // the element's own data-view (below) is not state: a change of it alone is not read again
    this.mo = new MutationObserver((records) => {
      // (nor is a host's own attribute: a title, a class, aria-*)
      const host = (r) => r.attributeName !== 'lang' && hostAttribute(r.attributeName);
      if (records.every(host)) return;
      if (records.every((r) => r.attributeName === 'theme' || host(r))) { this.themeChanged(); return; }
      // a change of lang alone changes the words, not the state: redraw them, compute nothing
      if (records.every((r) => hostAttribute(r.attributeName))) { if (this.words()) this.redrawWords(); return; }
      // state with words or colours in the same batch (lang and p set together): all of them
      const words = this.words();
      this.readState(); this.dirty = true;
      if (words) this.redrawWords();
      this.render();
      if (records.some((r) => r.attributeName === 'theme')) this.themeChanged();
    });
    this.mo.observe(this, { attributes: true });
    this.io = new IntersectionObserver(([e]) => { this.visible = e.isIntersecting; if (this.visible) this.compute(); this.parkLater(); });
    this.io.observe(this);
    // a change of size may also be a return from display: none, which saw no theme's transition: read the colours again
    this.ro = new ResizeObserver(() => { this.retheme(); this.charts?.destroy(); this.charts = null; this.drawSpectra(); });
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
    this.openLink();
  }

  /** "open in attnviz": the full lab (beside embed.js) at the element's state, its language included. */
  /** Where the full lab is: the host's `lab` attribute (an app that bundles the element has no lab beside
   *  it: docs/package.md), else beside embed.js. Only an http(s) address, resolved against the page. */
  labBase() {
    try {
      const url = new URL(this.getAttribute('lab') ?? '', document.baseURI);
      if (this.hasAttribute('lab') && /^https?:$/.test(url.protocol)) return url.href.replace(/#.*$/, '');
    } catch { /* not an address: beside embed.js */ }
    return new URL('./', HERE).href;
  }

  openLink() {
    const a = this.q('.open');
    const href = `${this.labBase()}#${openHash(this.pool.schema, this.st)}`;
    if (a.getAttribute('href') !== href) a.setAttribute('href', href);
    a.title = this.say('embed.open.title');
  }

  /**
   * An element off screen with nothing to compute ends its worker after AttnViz.parkMs (its memory back to
   * the page: a figure at n = 2048 holds about 60 MB); its view stays drawn, and its next computation
   * starts a worker again. A long post then holds workers only for the figures read lately.
   */
  parkLater() {
    clearTimeout(this.parkTimer);
    if (this.visible || !this.worker) return;
    this.parkTimer = setTimeout(() => {
      if (this.visible || this.view.done !== this.view.job || this.waiters.length) return this.parkLater();
      this.worker.terminate();
      this.worker = null;
    }, AttnViz.parkMs);
  }

  /** Ask the worker for the current state (only while on screen; latest wins per element). */
  compute(force = false) {
    if (!(this.visible || force) || !this.dirty || !this.pool) return;
    this.dirty = false;
    const req = this.pool.schema.requestOf(this.st);
    const key = JSON.stringify([req, this.st.embed]);
    // the same request again (a slider's 'change' after its last 'input'; an attribute set to its value):
    // the job asked for, or done, already answers it
    if (key === this.view.ask && this.view.failed?.job !== this.view.job && this.worker) return;
    this.view.ask = key;
    this.view.job += 1;
    this.view.req = req;
    this.view.key = JSON.stringify(req);
    try {
      this.worker ??= startWorker(this.pool, this);
    } catch (err) { // a host's Trusted Types or worker-src refusing the worker: said, never uncaught
      this.onFailure('embed.workerFailed', { message: err.message });
      return;
    }
    this.worker.postMessage({ kind: MSG.JOB, id: this.view.job, req, overlays: this.st.embed === 'spectrum' });
    if (this.problemText()) this.note(this.problemText()); else this.tell('embed.computing');
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
    this.openLink();
    this.speak(() => this.controls.sync(this.st));
    if (this.view.frame) { this.heat.draw(); this.drawReadouts(); }
    this.charts?.destroy(); this.charts = null; this.drawSpectra();
    if (this.view.failed?.job === this.view.job) this.tell(...this.view.failed.said);
    else if (this.view.done === this.view.job) this.note(this.problemText());
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
    // an older request's answer is dropped, but for a frame newer than the one shown: while a slider is
    // dragged the requests outrun the worker, and the heatmaps follow with the frames it finishes
    if (m.id !== this.view.job && !(m.part === PART.FRAME && m.id > (this.view.frame?.id ?? 0))) return;
    if (m.part === PART.FRAME) { this.view.frame = m; this.view.frames += 1; this.speak(() => this.heat.draw()); this.drawReadouts(); }
    else if (m.part === PART.SPECTRUM) { this.view.spec = m; this.drawSpectra(); this.drawReadouts(); }
    else if (m.part === PART.OVERLAY) { this.view.overlay[m.which] = m; this.drawSpectra(); }
    else if (m.part === PART.ERROR) this.onFailure('embed.computeFailed', { message: m.message });
    else if (m.part === PART.DONE && !m.dropped) {
      this.view.done = m.id;
      if (!this.visible) this.parkLater();
      this.note(this.problemText());
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** A failure to load or start, said as the host page's Content-Security-Policy when one of its directives
   *  blocked the element (the wasm's fetch, its compilation, the worker): [key, params] to tell. */
  blame(key, params) {
    return (key === 'embed.moduleFailed' || key === 'embed.workerFailed') && cspCause(violations.seen, import.meta.url) || [key, params];
  }

  /** The current request failed (no 'done' will come for it): say so, and settle snapshot() without its
   *  results (their reasons in English: the snapshot is the same in every language). */
  onFailure(key, params = null) {
    const blamed = this.blame(key, params);
    this.tell(...blamed);
    const failed = this.view.failed = { job: this.view.job, sentence: t(...blamed, LANGS[0]), said: blamed };
    this.view.done = this.view.job;
    for (const w of this.waiters.splice(0)) w();
    // a violation's event can come after the failure it caused: name the directive when it does
    if (blamed[0] === key && (key === 'embed.moduleFailed' || key === 'embed.workerFailed')) {
      cspCauseWithin(violations, import.meta.url, CSP_WAIT_MS).then((cause) => {
        if (!cause || this.view.failed !== failed) return;
        Object.assign(failed, { sentence: t(...cause, LANGS[0]), said: cause });
        this.tell(...cause);
      });
    }
  }

  drawSpectra() {
    if (this.st?.embed !== 'spectrum' || !this.pool) return;
    // uPlot (its own chunk, 22 KB gzip) is fetched by the first spectrum on the page, never for a heatmap
    if (!uPlotReady()) { loadUPlot().then(() => this.drawSpectra(), (err) => this.tell('embed.chartsFailed', { message: err.message })); return; }
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
      // uPlot lays its legend out a moment later (a microtask): fit then, before the frame is painted
      requestAnimationFrame(() => this.fitCharts());
    }
    const req = this.view.req;
    const ov = this.view.overlay;
    const current = Object.fromEntries(['S', 'E', 'A'].filter((k) => ov[k] && req && ov[k].key === overlayKey(req, k) && ov[k].sv.length <= this.st.n).map((k) => [k, ov[k]]));
    const spec = this.view.spec;
    const data = chartData({ spec: spec?.sv ? spec : null, overlays: current, n: this.st.n, ceiling: spec?.ceiling ?? null });
    this.charts.spectrum.update(data.spectrum);
    this.charts.error.update(data.error);
  }

  /** Each chart with its legend fits its half of the box: a legend that wraps (a phone, Chinese names)
   *  takes its lines from the plot, not from below the box, where they were cut off. */
  fitCharts() {
    if (!this.charts) return;
    const w = Math.floor(this.q('.spectra').getBoundingClientRect().width);
    for (const [chart, sel] of [[this.charts.spectrum, '.chart-spectrum'], [this.charts.error, '.chart-error']]) {
      const el = this.q(sel), legend = el.querySelector('.u-legend');
      // the legend's extent, its cells included (an inline legend's cells stand a few px below its rows)
      const bottom = legend ? Math.max(...[legend, ...legend.querySelectorAll('*')].map((x) => x.getBoundingClientRect().bottom)) : 0;
      const h = Math.max(60, Math.floor(el.getBoundingClientRect().height - (legend ? bottom - legend.getBoundingClientRect().top : 0)));
      if (chart.chart.height !== h || chart.chart.width !== w) chart.resize(w, h);
    }
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
      // asked for off screen: computed now, without marking it visible (it parks its worker as before)
      if (this.dirty) {
        this.compute(true);
        if (!this.dirty && this.view.done === this.view.job) continue; // the same request as the one answered
      }
      await new Promise((resolve) => this.waiters.push(resolve));
    }
    if (this.st.embed === 'spectrum') await loadUPlot().catch(() => {}); // its charts drawn, or their failure said
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
    const gates = this.view.req.gates ? gatesPart(frame?.gates ?? null) : null;
    return { state: linkState(schema.toHash(this.st, { complete: true })), readouts, tokens: null, gates };
  }
}

/** How long an idle element off screen keeps its worker (ms). */
AttnViz.parkMs = 30_000;

if (!customElements.get('attn-viz')) customElements.define('attn-viz', AttnViz);
