// export-menu.mjs: the header's "export" menu (docs/page.md, "Export"). Every figure as SVG (vectors:
// web/io/export.mjs draws them from the numbers on screen) and as PNG (that SVG rasterised at twice its size,
// so the two never differ), each with its colour bar or legend and a caption naming the variant, its
// knobs and the inputs; the matrix M as .npy and CSV; the readouts and the state as JSON; and one .zip
// with Q, K, V, M, the softmax A, the random matrices the variant drew, the state, and a numpy script
// that recomputes M from them. Full-resolution arrays come from the background worker (main.mjs's exportArrays), at
// any n; the figures are what the page shows (a heatmap above 384 tokens is its block means).
import {
  npyBytes, csvText, stateJson, exportName, figureCaption, heatmapSvg, heatmapsSvg, heatmapAxes, colorbarTicks, numpySnippet, chartSvg, entropySvg, zipStore, tokensJson,
} from '../io/export.mjs';
import { SERIES, seriesName } from '../render/charts.mjs';
import { sweepFigure } from '../compute/sweep.mjs';
import { said } from '../state/notice.mjs';
import { paint } from '../render/heatmap.mjs';
import { NOTHING } from './panel.mjs';
import { t, getLang } from '../i18n/i18n.mjs';
import { variantName, referenceName } from '../render/variant-name.mjs';

/** Largest n whose M is offered as CSV (4096² numbers would be about 150 MB of text). */
export const CSV_MAX_N = 1024;

/** The figures offered, by id; each is named by the catalogue's `export.fig.ID` (docs/i18n.md). */
const FIGURES = ['M', 'A', 'D', 'trio', 'spectrum', 'error', 'entropy', 'sweep'];

function el(tag, attrs = {}, text = '') {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

/** Save bytes or text as a file: a blob: link clicked (no network, works from file://). */
export function download(name, data, type) {
  const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }));
  const a = el('a', { href: url, download: name });
  a.hidden = true;
  a.addEventListener('click', (e) => e.stopPropagation()); // the open menus stay open (they close on clicks elsewhere)
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A c×c matrix through a colour table as a PNG data URL, each cell `scale` pixels (nearest neighbour). */
function cellsPng(values, rows, cols, table, lo, hi, scale = 1) {
  const small = document.createElement('canvas');
  small.width = cols; small.height = rows;
  const ctx = small.getContext('2d');
  const img = ctx.createImageData(cols, rows);
  paint(img.data, values, rows * cols, table, lo, hi);
  ctx.putImageData(img, 0, 0);
  if (scale === 1) return small.toDataURL('image/png');
  const big = document.createElement('canvas');
  big.width = cols * scale; big.height = rows * scale;
  const bctx = big.getContext('2d');
  bctx.imageSmoothingEnabled = false;
  bctx.drawImage(small, 0, 0, cols * scale, rows * scale);
  return big.toDataURL('image/png');
}

/** An SVG text rasterised at `scale`× as a PNG Blob (white background, as the SVG draws). */
export async function svgToPng(svg, scale = 2) {
  const w = Number(/width="(\d+(?:\.\d+)?)"/.exec(svg)[1]), h = Number(/height="(\d+(?:\.\d+)?)"/.exec(svg)[1]);
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    // a page whose Content-Security-Policy leaves blob: out of img-src cannot draw the SVG: say so
    await img.decode().catch(() => {
      throw new Error(t('export.pngRefused'));
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(w * scale); canvas.height = Math.round(h * scale);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error(t('export.pngFailed')))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * Build the menu into `menu` (a <details> with a <summary>). `ctx` gives what the page shows:
 *   snapshot()        a promise of the settled {state, readouts, tokens} (waits for the view)
 *   request()         the page's request (main.mjs requestOf); label() the variant's label
 *   referenceCaption() the caption of softmax A (reference-text.mjs)
 *   inputsLabel(lang) what loaded inputs are ("layer 1, head 3 of a 5-layer llama2.c model …"), or null
 *   heatmap(id)       {values, rows, cols, n, b, mode, r0, r1, c0, c1, zoomed, lo, hi, clipped, table, diverging} for
 *                     'M', 'A' or 'D' as shown (the whole matrix by blocks, or the zoom's window), or null
 *   ids()             the token ids of a model's text, or null
 *   charts()          {data: spectrum.mjs chartData, logX, floorRel, ceiling, partial (a top-k curve)} or null
 *   entropy()         render/entropy.mjs entropyBars of the current histogram, or null
 *   sweep()           {plan, points} of the finished sweep, or null
 *   arrays()          a promise of {files: [{what, data, shape}]} (Engine.exportArrays) or {error}
 *   notice(text)      say what went wrong
 * Returns {busy}: a promise of the export under way (tests wait on it), or null.
 */
export function mountExport(menu, ctx) {
  const box = el('div', { class: 'export-list', role: 'group' });
  const figs = el('table', { class: 'export-figs' });
  const cap = el('caption');
  figs.append(cap);
  const body = el('tbody');
  const rows = new Map();
  for (const id of FIGURES) {
    const tr = el('tr', { 'data-figure': id });
    const png = el('button', { type: 'button', 'data-export': `${id}.png` }, 'PNG');
    const svg = el('button', { type: 'button', 'data-export': `${id}.svg` }, 'SVG');
    const a = el('td'), b = el('td');
    a.append(png); b.append(svg);
    tr.append(el('th', { scope: 'row' }), a, b);
    body.append(tr);
    rows.set(id, tr);
  }
  figs.append(body);
  const data = el('ul', { class: 'export-data' });
  const DATA = [['M.npy', 'npy'], ['M.csv', 'csv'], ['state.json', 'json'], ['bundle.zip', 'zip']];
  for (const [id] of DATA) {
    const li = el('li');
    li.append(el('button', { type: 'button', 'data-export': id }));
    data.append(li);
  }
  const note = el('p', { class: 'note export-note', role: 'status', 'aria-live': 'polite' });
  const dataHead = el('p', { class: 'export-h' });
  box.append(figs, dataHead, data, note);
  menu.append(box);

  let wordsIn = null; // the language the menu's words are in: written again when the page's changes
  function words() {
    if (wordsIn === getLang()) return;
    wordsIn = getLang();
    box.setAttribute('aria-label', t('header.export'));
    cap.textContent = t('export.figures');
    dataHead.textContent = t('export.data');
    data.setAttribute('aria-label', t('export.data'));
    for (const [id, tr] of rows) {
      const figure = t(`export.fig.${id}`);
      tr.querySelector('th').textContent = figure;
      for (const format of ['PNG', 'SVG']) tr.querySelector(`[data-export="${id}.${format.toLowerCase()}"]`).setAttribute('aria-label', t('export.as', { figure, format }));
    }
    for (const [id, key] of DATA) box.querySelector(`[data-export="${id}"]`).textContent = t(`export.item.${key}`);
  }
  words();

  let busy = null;
  box.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-export]');
    if (!b || b.disabled) return;
    const id = b.dataset.export;
    note.textContent = t('export.preparing');
    busy = run(id).then(
      (name) => { note.textContent = name ? t('export.saved', { name }) : ''; },
      (err) => { note.textContent = ''; ctx.notice(t('export.failed', { id, message: err.message ?? err })); },
    ).finally(() => { busy = null; });
  });
  menu.addEventListener('toggle', () => { if (menu.open) sync(); });
  menu.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.open) { menu.open = false; menu.querySelector('summary').focus(); } });
  document.addEventListener('click', (e) => { if (menu.open && !menu.contains(e.target)) menu.open = false; });

  /** Offer only what exists now: the sweep when one is shown, CSV up to CSV_MAX_N. */
  function sync() {
    words();
    const st = ctx.request().inputs;
    const sw = ctx.sweep();
    rows.get('sweep').hidden = !sw;
    const csv = box.querySelector('[data-export="M.csv"]');
    csv.disabled = st.n > CSV_MAX_N;
    csv.title = csv.disabled ? t('export.csvTitle', { max: CSV_MAX_N }) : '';
  }

  async function run(id) {
    const snap = await ctx.snapshot(); // the view has settled: the figure, its numbers and the state agree
    const request = ctx.request(), label = variantName(ctx.label());
    // loaded inputs (a model's head, own files) leave n out of the link: the names take the request's
    const state = { ...snap.state, n: String(request.inputs.n) };
    // the figures' caption in the page's language; the .zip's README is data, in English
    const caption = figureCaption(request, label, ctx.inputsLabel?.() ?? null);
    const [what, ext] = id.split('.');
    if (id === 'state.json') {
      const name = exportName(state, 'readouts', 'json');
      download(name, stateJson(snap), 'application/json');
      return name;
    }
    if (id === 'M.npy' || id === 'M.csv' || id === 'bundle.zip') {
      const got = await ctx.arrays();
      if (got.error) throw new Error(got.error);
      const file = (w) => got.files.find((f) => f.what === w);
      if (id === 'M.npy') {
        const m = file('M'), name = exportName(state, 'M', 'npy');
        download(name, npyBytes(m.data, m.shape), 'application/octet-stream');
        return name;
      }
      if (id === 'M.csv') {
        const m = file('M'), name = exportName(state, 'M', 'csv');
        if (m.shape[0] > CSV_MAX_N) throw new Error(t('export.csvTooLarge', { max: CSV_MAX_N }));
        const tokens = snap.tokens?.length === m.shape[0] ? snap.tokens : null; // a labelled table when the inputs have tokens
        download(name, csvText(m.data, m.shape[0], m.shape[1], tokens), 'text/csv');
        return name;
      }
      const folder = exportName(state, 'export', 'd').replace(/\.d$/, '');
      const entries = got.files.map((f) => ({ name: `${folder}/${exportName(state, f.what, 'npy')}`, bytes: npyBytes(f.data, f.shape) }));
      const tokens = snap.tokens?.length === request.inputs.n ? snap.tokens : null;
      if (tokens) entries.push({ name: `${folder}/tokens.json`, bytes: tokensJson(tokens, ctx.ids?.() ?? null) });
      entries.push(
        { name: `${folder}/recompute.py`, bytes: numpySnippet({ state, request, tokens: !!tokens }) },
        { name: `${folder}/${exportName(state, 'readouts', 'json')}`, bytes: stateJson(snap) },
        { name: `${folder}/README.txt`, bytes: readme(figureCaption(request, ctx.label(), ctx.inputsLabel?.('en') ?? null, 'en'), got.files, location.href, !!tokens) },
      );
      const name = `${folder}.zip`;
      download(name, zipStore(entries), 'application/zip');
      return name;
    }
    const svg = figureSvg(what, caption, ext === 'png', snap.tokens);
    const name = exportName(state, what, ext);
    download(name, ext === 'svg' ? new Blob([svg], { type: 'image/svg+xml' }) : await svgToPng(svg, 2));
    return name;
  }

  /** One heatmap as heatmapsSvg draws it ({panel}), and the note on blocks or the zoom's window ({blocks}). */
  function heatPanel(what, forPng, tokens, size) {
    const h = ctx.heatmap(what);
    if (!h) throw new Error(t('export.noHeatmap'));
    // the PNG embeds the cells upscaled (at least the 2× raster's pixels a side) so that they stay sharp
    const scale = forPng ? Math.max(1, Math.ceil((2 * size) / Math.min(h.rows, h.cols))) : 1;
    const signed = what === 'D' || !!h.diverging; // M − A, and a signed M, are centred on 0
    const window = h.zoomed ? t('export.window', { r0: h.r0, r1: h.r1, c0: h.c0, c1: h.c1, n: h.n }) : '';
    const blocks = h.b > 1 ? t('export.blocks', { where: window || t('export.whole', { n: h.n }), rows: h.rows, cols: h.cols, mode: t(`option.ds.${h.mode}`) })
      : window && t('export.fullRes', { where: window });
    // the axes: the inputs' tokens where they fit, else the token indices at round steps
    const pieces = tokens?.length === h.n ? tokens : null;
    return {
      blocks,
      panel: { png: cellsPng(h.values, h.rows, h.cols, h.table, h.lo, h.hi, scale), cells: h.cols, table: h.table, lo: h.lo, hi: h.hi, size,
        ticks: colorbarTicks(h.lo, h.hi, { clipped: h.clipped, signed, size }), axes: heatmapAxes(h, pieces, size) },
    };
  }

  /** The figure `what` as SVG; forPng embeds the heatmap upscaled (no smoothing when rasterised). */
  function figureSvg(what, caption, forPng, tokens) {
    if (what === 'M' || what === 'A' || what === 'D') {
      const { panel, blocks } = heatPanel(what, forPng, tokens, 384);
      const title = { M: t('export.title.M', { label: variantName(ctx.label()) }), A: referenceName(ctx.referenceCaption?.() ?? t('heatmap.capA')), D: t('export.title.D', { label: variantName(ctx.label()) }) }[what];
      return heatmapSvg({ ...panel, title, caption: caption + blocks });
    }
    if (what === 'trio') {
      // M | A | M − A side by side, as the embed's heatmap view: each labelled as on the page, one caption
      const label = variantName(ctx.label());
      const names = { M: t('heatmap.capM', { label }), A: referenceName(ctx.referenceCaption?.() ?? t('heatmap.capA')), D: t('heatmap.capD') };
      const drawn = ['M', 'A', 'D'].map((id) => heatPanel(id, forPng, tokens, 256));
      return heatmapsSvg({ title: t('export.title.trio', { label }), caption: caption + drawn[0].blocks,
        panels: drawn.map((d, i) => ({ ...d.panel, label: names['MAD'[i]] })) });
    }
    if (what === 'spectrum' || what === 'error') {
      const c = ctx.charts();
      if (!c) throw new Error(t('export.noCharts'));
      const d = c.data[what];
      const keys = what === 'spectrum' ? ['S', 'E', 'M', 'A'] : ['M', 'A'];
      const series = SERIES.filter((s) => keys.includes(s.key) && d[s.key]?.some((v) => v !== null && v > 0))
        .map((s) => ({ label: seriesName(s), color: s.color, dash: s.dash, marker: s.marker, x: d.x, y: d[s.key] }));
      if (!series.length) throw new Error(t('export.noCurve'));
      const vlines = c.ceiling ? [{ x: c.ceiling, label: t('export.ceiling', { c: c.ceiling }) }] : [];
      if (c.partial) caption += t('export.partial');
      if (what === 'spectrum') {
        return chartSvg({ title: t('export.title.spectrum'), caption, xLabel: t(c.logX ? 'chart.axis.iLog' : 'chart.axis.i'), yLabel: t('export.axis.sLog'),
          logX: c.logX, logY: true, series, vlines, hlines: c.floorRel > 0 ? [{ y: c.floorRel, label: t('export.floor') }] : [] });
      }
      return chartSvg({ title: t('export.title.error'), caption, xLabel: t(c.logX ? 'chart.axis.rLog' : 'chart.axis.r'),
        yLabel: t('export.axis.eLog'), logX: c.logX, logY: true, series, vlines });
    }
    if (what === 'entropy') {
      const e = ctx.entropy();
      if (!e?.M) throw new Error(t('export.noHistogram'));
      return entropySvg(e, { title: t('export.title.entropy'), caption });
    }
    if (what === 'sweep') {
      const s = ctx.sweep();
      if (!s) throw new Error(t('export.noSweep'));
      return chartSvg(sweepFigure(s.plan, s.points, caption, said));
    }
    throw new Error(`unknown figure ${what}`);
  }

  sync();
  return { ...NOTHING, name: 'export', sync: () => words(), get busy() { return busy; } }; // a Panel (ui/panel.mjs): it acts when asked
}

/** README.txt of the .zip: what each file is and how to recompute M. */
function readme(caption, files, link, tokens = false) {
  const lines = [
    'attnviz export',
    '',
    caption,
    `link: ${link}`,
    '',
    'files (float32 .npy, row-major; numpy.load reads them):',
    ...files.map((f) => `  ${f.what.padEnd(6)} ${f.shape.join('×')}  ${DESCRIBE[f.what] ?? ''}`),
    '  recompute.py  recomputes M from Q, K (and the random matrices, the gates) with numpy in float64',
    '                and prints the largest difference from the exported M:  python3 recompute.py',
    '  *-readouts.json  the readouts and the link\'s keys, as window.attnviz.snapshot() gives them',
    ...(tokens ? ['  tokens.json   the token pieces of the rows and columns, {"pieces", "text"} (and "ids" for a model\'s text)'] : []),
    '',
  ];
  return lines.join('\n');
}
const DESCRIBE = {
  Q: 'queries', K: 'keys', V: 'values', M: "the variant's attention matrix (its effective n×n map)",
  A: 'softmax attention on the same Q, K, scale and mask', omega: "Performer's random features ω (m×d)",
  E: "Linformer's E (s×n)", F: "Linformer's F (s×n)", dwc: 'the depthwise-convolution kernel w (k)',
  gates: 'the log-gates g ≤ 0 the matrix was computed with ((n) or (n, d); docs/gated.md)', betas: 'the write strengths β_t (n)',
  a: "dplr's read vectors a_t (n×d)", b: "dplr's write vectors b_t (n×d)",
};
