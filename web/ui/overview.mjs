// overview.mjs: the overview of every layer and head of loaded 4-D inputs (a model's capture, own files):
// a tile per head in the colour of the metric the reader picks (`ov_metric`), one colour scale for every
// tile with its legend, a reason on every '—', the text the tiles are computed on, and the overview as
// SVG, PNG and CSV. The background worker computes the heads (worker.mjs, MSG.OVERVIEW); this module asks,
// draws and exports. What it shows is data from render/overview.mjs.
import {
  OVERVIEW_METRICS, metricOf, overviewRows, overviewScale, overviewCsv, overviewSvg, cellRgb, textOn, fmtMetric,
  cellLabel, tokensText, undefinedGroups, metricName, metricUnits, reasonText,
} from '../render/overview.mjs';
import { t, getLang } from '../i18n/i18n.mjs';
import { variantName } from '../render/variant-name.mjs';
import { colorTable } from '../render/colormap.mjs';
import { exportName, figureCaption } from '../io/export.mjs';
import { download, svgToPng } from './export-menu.mjs';
import { MSG } from '../workers/protocol.mjs';
import { NOTHING } from './panel.mjs';

function el(tag, attrs = {}, text = '') {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

/**
 * Build the overview into `box` (the <details id="overview"> with its .ov-note and .ov-grid). ctx:
 *   tensors()        the loaded tensors ({key, layers, heads, n, d}) or null (the generators)
 *   request(st)      the engines' request for a state (main.mjs requestOf)
 *   worker()         the background worker (made when first needed)
 *   onChange(k, v)   set a state key; open(layer, head) shows that head in the lab
 *   label(st)        the variant's label; inputsLabel() what the inputs are (all heads); tokens() the pieces or null
 *   notice(text)     say what went wrong
 * Returns a Panel (ui/panel.mjs) with routes (the background worker's answers it takes), onMessage(m),
 * fail(what) and finished().
 */
export function mountOverview(box, ctx) {
  const grid = box.querySelector('.ov-grid'), note = box.querySelector('.ov-note');
  const head = el('div', { class: 'ov-head' });
  const pick = el('select', { id: 'k-ov_metric' });
  for (const m of OVERVIEW_METRICS) pick.append(el('option', { value: m.key }));
  const pickLabel = el('label', { for: 'k-ov_metric' });
  head.append(pickLabel, pick);
  const exports = {};
  for (const ext of ['svg', 'png', 'csv']) {
    exports[ext] = el('button', { type: 'button', 'data-ov-export': ext }, ext.toUpperCase());
    head.append(exports[ext]);
  }
  let shownLang = null;
  /** The overview's own words in the current language (again when it changes: update). */
  function words() {
    if (shownLang === getLang()) return;
    shownLang = getLang();
    for (const o of pick.options) o.textContent = metricName(metricOf(o.value));
    pickLabel.textContent = t('overview.colourBy');
    for (const [ext, b] of Object.entries(exports)) b.setAttribute('aria-label', t('overview.export', { ext: ext.toUpperCase() }));
  }
  words();
  const legend = el('div', { class: 'ov-legend', role: 'img' });
  const legendTitle = el('span', { class: 'ov-legend-title' });
  const lo = el('span', { class: 'ov-min' }), bar = el('span', { class: 'ov-bar' }), hi = el('span', { class: 'ov-max' });
  const cmapName = el('span', { class: 'ov-cmap' });
  legend.append(legendTitle, lo, bar, hi, cmapName);
  note.before(head);
  grid.after(legend);
  pick.addEventListener('change', () => ctx.onChange('ov_metric', pick.value));
  for (const [ext, b] of Object.entries(exports)) {
    b.addEventListener('click', () => {
      exportAs(ext).catch((err) => ctx.notice(t('overview.exportFailed', { message: err.message ?? err })));
    });
  }

  const v = { id: 0, key: null, cells: new Map(), done: false, error: null, layers: 0, heads: 0 };
  let st = null;
  const waiters = [];

  /** The rows, the scale and the metric of what is shown. */
  function shown() {
    const metric = metricOf(st.ov_metric);
    const rows = overviewRows(v.cells, v.layers, v.heads, metric.key);
    return { metric, rows, scale: overviewScale(rows) };
  }

  function settle() { for (const w of waiters.splice(0)) w(); }

  function draw() {
    if (!v.layers || !st) return;
    if (grid.dataset.shape !== `${v.layers}x${v.heads}`) {
      grid.dataset.shape = `${v.layers}x${v.heads}`;
      grid.style.setProperty('--ov-heads', String(v.heads));
      const tiles = [];
      for (let l = 0; l < v.layers; l++) {
        for (let h = 0; h < v.heads; h++) {
          const b = el('button', { type: 'button', class: 'ov-cell', 'data-layer': String(l), 'data-head': String(h) });
          // the name a screen reader gives: the visible text, then the whole sentence (a reason for a '—')
          b.append(el('span', { class: 'ov-cap' }), el('span', { class: 'sr-only' }));
          b.addEventListener('click', () => ctx.open(l, h));
          tiles.push(b);
        }
      }
      grid.replaceChildren(...tiles);
    }
    const { metric, rows, scale } = shown();
    const table = colorTable(st.cmap);
    const text = tokensText(ctx.tokens());
    rows.forEach((r, i) => {
      const b = grid.children[i];
      const current = r.layer === st.layer && r.head === st.head;
      b.setAttribute('aria-pressed', String(current));
      // swapped by the panel "what the model loses" (head by head): marked, and said
      const swapped = !!ctx.marked?.(r.layer, r.head);
      b.classList.toggle('ov-swapped', swapped);
      const computed = v.cells.has(`${r.layer}|${r.head}`);
      const cap = `L${r.layer}H${r.head}\n${computed ? fmtMetric(r.value) : '…'}`;
      if (b.firstChild.textContent !== cap) b.firstChild.textContent = cap;
      const rgb = cellRgb(r.value, scale, table);
      b.classList.toggle('ov-none', computed && !rgb);
      b.style.background = rgb ? `rgb(${rgb.join(',')})` : '';
      b.style.color = rgb ? textOn(rgb) : '';
      // every '—' says why, to a pointer (title) and to a screen reader (the label)
      const label = (computed ? cellLabel(r, metric, { current, text }) : t('overview.computing', { layer: r.layer, head: r.head })) + (swapped ? ` ${t('overview.swapped')}` : '');
      if (b.title !== label) { b.title = label; b.lastChild.textContent = ` ${label}`; }
      b.dataset.value = r.value === null ? '' : String(r.value);
    });
    // the legend: the metric, its units, the one scale's ends, the colour map
    const name = metricName(metric);
    legendTitle.textContent = t('overview.legendTitle', { label: name, units: metricUnits(metric) });
    lo.textContent = scale.lo === null ? '—' : fmtMetric(scale.lo);
    hi.textContent = scale.hi === null ? '—' : fmtMetric(scale.hi);
    const stops = Array.from({ length: 11 }, (_, k) => { const i = Math.round((k / 10) * 255); return `rgb(${table[4 * i]},${table[4 * i + 1]},${table[4 * i + 2]})`; });
    bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
    cmapName.textContent = st.cmap;
    const range = scale.lo === null ? t('overview.noValue') : t('overview.range', { lo: lo.textContent, hi: hi.textContent });
    legend.setAttribute('aria-label', t('overview.legend', { label: name, range, cmap: st.cmap }));
    const undef = [...undefinedGroups(rows)].filter(([reason]) => reason !== 'not computed yet');
    const without = undef.reduce((s, [, hs]) => s + hs.length, 0);
    const total = v.layers * v.heads;
    const done = `overview.done${text ? 'On' : ''}${without ? 'Without' : ''}`;
    const msg = v.error ? t('overview.failed', { error: v.error })
      : v.done ? t(done, { variant: variantName(ctx.label(st)), total, text, label: name, count: without, reasons: undef.map(([r]) => reasonText(r)).join(t('overview.reasonsJoin')) })
        : t('overview.progress', { count: v.cells.size, total });
    if (note.textContent !== msg) note.textContent = msg;
    for (const b of Object.values(exports)) b.disabled = !v.done || !!v.error;
  }

  async function exportAs(ext) {
    const { metric, rows, scale } = shown();
    const name = exportName({ variant: st.variant, n: ctx.tensors()?.n ?? st.n }, `overview-${metric.key}`, ext);
    if (ext === 'csv') { download(name, overviewCsv(rows, metric.key), 'text/csv'); return; }
    const text = tokensText(ctx.tokens());
    const svg = overviewSvg({ rows, layers: v.layers, heads: v.heads, scale, table: colorTable(st.cmap), cmap: st.cmap, metric,
      caption: `${figureCaption(ctx.request(st), variantName(ctx.label(st)), ctx.inputsLabel())}${text ? ` · ${t('overview.captionText', { text })}` : ''}` });
    download(name, ext === 'svg' ? new Blob([svg], { type: 'image/svg+xml' }) : await svgToPng(svg, 2));
  }

  /** A cell of the overview, or its end, from the background worker (an older overview's are dropped). */
  function onMessage(m) {
    if (m.id !== v.id) return;
    if (m.kind === MSG.OVERVIEW_CELL) v.cells.set(`${m.layer}|${m.head}`, m);
    else { v.done = true; v.error = m.error ?? null; }
    draw();
    if (v.done) settle();
  }

  return {
    ...NOTHING, // a Panel (ui/panel.mjs): its controls follow update, it draws as cells come
    name: 'overview',
    routes: { [MSG.OVERVIEW_CELL]: onMessage, [MSG.OVERVIEW_DONE]: onMessage }, // the background worker's answers
    /** Show the overview the state asks for (when open, for tensors with more than one head), or keep the shown one. */
    update(state) {
      st = state;
      words();
      if (pick.value !== st.ov_metric) pick.value = st.ov_metric;
      const t = ctx.tensors();
      const many = !!t && t.layers * t.heads > 1;
      if (box.hidden === many) box.hidden = !many;
      if (!many || !box.open) { settle(); return; }
      const req = ctx.request(st);
      const key = JSON.stringify({ ...req, inputs: { ...req.inputs, layer: 0, head: 0 } });
      if (key !== v.key) {
        Object.assign(v, { key, cells: new Map(), done: false, error: null, layers: t.layers, heads: t.heads });
        v.id += 1;
        ctx.worker().postMessage({ kind: MSG.OVERVIEW, id: v.id, req, layers: t.layers, heads: t.heads });
      }
      draw();
    },
    onMessage,
    /** The background worker failed: this overview is done with the failure (asked for again when next shown). */
    fail(what) {
      if (v.done || !v.key) return;
      Object.assign(v, { done: true, error: what, key: null });
      v.id += 1;
      draw();
      settle();
    },
    /** What the overview shows now: {open, done, error, metric, lo, hi, layers, heads, rows} (docs/inspection.md). */
    snapshot() {
      if (box.hidden || !box.open || !st || !v.layers) return { open: false };
      const { metric, rows, scale } = shown();
      return { open: true, done: v.done, error: v.error, metric: metric.key, lo: scale.lo, hi: scale.hi, layers: v.layers, heads: v.heads, rows };
    },
    /** A promise that resolves once the overview shown is complete (or not shown). */
    finished() {
      if (box.hidden || !box.open || v.done) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
