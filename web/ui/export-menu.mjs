// export-menu.mjs: the header's "export" menu (docs/page.md, "Export"). Every figure as SVG (vectors:
// web/io/export.mjs draws them from the numbers on screen) and as PNG (that SVG rasterised at twice its size,
// so the two never differ), each with its colour bar or legend and a caption naming the variant, its
// knobs and the inputs; the matrix M as .npy and CSV; the readouts and the state as JSON; and one .zip
// with Q, K, V, M, the softmax A, the random matrices the variant drew, the state, and a numpy script
// that recomputes M from them. Full-resolution arrays come from the background worker (main.mjs's exportArrays), at
// any n; the figures are what the page shows (a heatmap above 384 tokens is its block means).
import {
  npyBytes, csvText, stateJson, exportName, figureCaption, heatmapSvg, numpySnippet, chartSvg, entropySvg, zipStore, tokensJson,
} from '../io/export.mjs';
import { thinTicks, axisText } from '../state/tokens.mjs';
import { SERIES } from '../render/charts.mjs';
import { sweepFigure } from '../compute/sweep.mjs';
import { paint } from '../render/heatmap.mjs';
import { fmt, fmtSigned } from '../render/format.mjs';
import { NOTHING } from './panel.mjs';

/** Largest n whose M is offered as CSV (4096² numbers would be about 150 MB of text). */
export const CSV_MAX_N = 1024;

const FIGURES = [
  { id: 'M', label: 'heatmap of M' },
  { id: 'A', label: 'heatmap of softmax A' },
  { id: 'D', label: 'heatmap of M − A' },
  { id: 'spectrum', label: 'singular values' },
  { id: 'error', label: 'truncated-SVD error' },
  { id: 'entropy', label: 'row-entropy histogram' },
  { id: 'sweep', label: 'sweep' },
];

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
      throw new Error('the browser would not draw the figure as an image (does the page\'s Content-Security-Policy leave blob: out of img-src?); the SVG export works');
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(w * scale); canvas.height = Math.round(h * scale);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be encoded'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * Build the menu into `menu` (a <details> with a <summary>). `ctx` gives what the page shows:
 *   snapshot()        a promise of the settled {state, readouts, tokens} (waits for the view)
 *   request()         the page's request (main.mjs requestOf); label() the variant's label
 *   referenceCaption() the caption of softmax A (reference-text.mjs)
 *   inputsLabel()     what loaded inputs are ("layer 1, head 3 of a 5-layer llama2.c model …"), or null
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
  const box = el('div', { class: 'export-list', role: 'group', 'aria-label': 'export' });
  const figs = el('table', { class: 'export-figs' });
  const cap = el('caption', {}, 'figures');
  figs.append(cap);
  const body = el('tbody');
  const rows = new Map();
  for (const f of FIGURES) {
    const tr = el('tr', { 'data-figure': f.id });
    const png = el('button', { type: 'button', 'data-export': `${f.id}.png` }, 'PNG');
    const svg = el('button', { type: 'button', 'data-export': `${f.id}.svg` }, 'SVG');
    png.setAttribute('aria-label', `${f.label} as PNG`);
    svg.setAttribute('aria-label', `${f.label} as SVG`);
    const a = el('td'), b = el('td');
    a.append(png); b.append(svg);
    tr.append(el('th', { scope: 'row' }, f.label), a, b);
    body.append(tr);
    rows.set(f.id, tr);
  }
  figs.append(body);
  const data = el('ul', { class: 'export-data', 'aria-label': 'data' });
  const DATA = [
    ['M.npy', 'M as .npy (float32, n×n)'],
    ['M.csv', 'M as CSV'],
    ['state.json', 'readouts and state (.json)'],
    ['bundle.zip', 'Q, K, V, M, A and a numpy script (.zip)'],
  ];
  for (const [id, text] of DATA) {
    const li = el('li');
    li.append(el('button', { type: 'button', 'data-export': id }, text));
    data.append(li);
  }
  const note = el('p', { class: 'note export-note', role: 'status', 'aria-live': 'polite' });
  box.append(figs, el('p', { class: 'export-h' }, 'data'), data, note);
  menu.append(box);

  let busy = null;
  box.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-export]');
    if (!b || b.disabled) return;
    const id = b.dataset.export;
    note.textContent = 'preparing…';
    busy = run(id).then(
      (name) => { note.textContent = name ? `saved ${name}` : ''; },
      (err) => { note.textContent = ''; ctx.notice(`export ${id}: ${err.message ?? err}`); },
    ).finally(() => { busy = null; });
  });
  menu.addEventListener('toggle', () => { if (menu.open) sync(); });
  menu.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.open) { menu.open = false; menu.querySelector('summary').focus(); } });
  document.addEventListener('click', (e) => { if (menu.open && !menu.contains(e.target)) menu.open = false; });

  /** Offer only what exists now: the sweep when one is shown, CSV up to CSV_MAX_N. */
  function sync() {
    const st = ctx.request().inputs;
    const sw = ctx.sweep();
    rows.get('sweep').hidden = !sw;
    const csv = box.querySelector('[data-export="M.csv"]');
    csv.disabled = st.n > CSV_MAX_N;
    csv.title = csv.disabled ? `CSV up to n = ${CSV_MAX_N}; take the .npy` : '';
  }

  async function run(id) {
    const snap = await ctx.snapshot(); // the view has settled: the figure, its numbers and the state agree
    const request = ctx.request(), label = ctx.label();
    // loaded inputs (a model's head, own files) leave n out of the link: the names take the request's
    const state = { ...snap.state, n: String(request.inputs.n) };
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
        if (m.shape[0] > CSV_MAX_N) throw new Error(`CSV is offered up to n = ${CSV_MAX_N}; take the .npy`);
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
        { name: `${folder}/README.txt`, bytes: readme(caption, got.files, location.href, !!tokens) },
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

  /** The figure `what` as SVG; forPng embeds the heatmap upscaled (no smoothing when rasterised). */
  function figureSvg(what, caption, forPng, tokens) {
    if (what === 'M' || what === 'A' || what === 'D') {
      const h = ctx.heatmap(what);
      if (!h) throw new Error('the heatmap is not drawn');
      const scale = forPng ? Math.max(1, Math.ceil(768 / Math.min(h.rows, h.cols))) : 1;
      const div = what === 'D' || !!h.diverging; // M − A, and a signed M, are centred on 0
      const mid = div ? 0 : (h.lo + h.hi) / 2;
      const show = div ? fmtSigned : fmt;
      const ticks = [
        { value: h.hi, text: `${h.clipped ? '≥ ' : ''}${show(h.hi)}` },
        { value: mid, text: div ? '0' : fmt(mid) },
        { value: h.lo, text: `${h.clipped && div ? '≤ ' : ''}${fmt(h.lo)}` },
      ];
      const title = { M: `${ctx.label()}: attention matrix M`, A: ctx.referenceCaption?.() ?? 'softmax A (same Q, K, scale, mask)', D: `difference M − A (${ctx.label()})` }[what];
      const window = h.zoomed ? ` · rows ${h.r0}–${h.r1}, cols ${h.c0}–${h.c1} of n = ${h.n}` : '';
      const blocks = h.b > 1 ? `${window || ` · n = ${h.n}`} shown as ${h.rows}×${h.cols} block ${h.mode}s` : window && `${window} at full resolution`;
      // the axes' token labels, thinned as on the page (9-px labels over the figure's 384 units); token
      // indices label a zoom's axes when the inputs have no tokens
      const pieces = tokens?.length === h.n ? tokens : null;
      const axis = (from, to) => thinTicks(from, to, 384, 11).map((i) => ({ at: (i - from + 0.5) / (to - from + 1), text: pieces ? axisText(pieces[i]) : String(i) }));
      const axes = pieces || h.zoomed ? { rows: axis(h.r0, h.r1), cols: axis(h.c0, h.c1) } : null;
      return heatmapSvg({ png: cellsPng(h.values, h.rows, h.cols, h.table, h.lo, h.hi, scale), cells: h.cols, table: h.table, ticks,
        lo: h.lo, hi: h.hi, title, caption: caption + blocks, size: 384, axes });
    }
    if (what === 'spectrum' || what === 'error') {
      const c = ctx.charts();
      if (!c) throw new Error('the charts are not drawn');
      const d = c.data[what];
      const keys = what === 'spectrum' ? ['S', 'E', 'M', 'A'] : ['M', 'A'];
      const series = SERIES.filter((s) => keys.includes(s.key) && d[s.key]?.some((v) => v !== null && v > 0))
        .map((s) => ({ label: s.label.replace(/ [▲■●◆]$/, ''), color: s.color, dash: s.dash, marker: s.marker, x: d.x, y: d[s.key] }));
      if (!series.length) throw new Error('no curve to draw yet');
      const vlines = c.ceiling ? [{ x: c.ceiling, label: `rank ceiling ${c.ceiling}` }] : [];
      if (c.partial) caption += ' · top-k curves by randomized iteration: each σ̂ᵢ ≤ σᵢ, so σᵢ/σ₁ is estimated and e(r) an upper bound';
      if (what === 'spectrum') {
        return chartSvg({ title: 'singular values σᵢ/σ₁', caption, xLabel: c.logX ? 'i (log)' : 'i', yLabel: 'σᵢ/σ₁ (log)',
          logX: c.logX, logY: true, series, vlines, hlines: c.floorRel > 0 ? [{ y: c.floorRel, label: 'noise floor' }] : [] });
      }
      return chartSvg({ title: 'truncated-SVD error e(r) = Σ_{i>r} σᵢ² / Σ σᵢ²', caption, xLabel: c.logX ? 'r (kept singular values, log)' : 'r (kept singular values)',
        yLabel: 'e(r) (log)', logX: c.logX, logY: true, series, vlines });
    }
    if (what === 'entropy') {
      const e = ctx.entropy();
      if (!e?.M) throw new Error('the histogram is not drawn');
      return entropySvg(e, { title: 'row entropy: M (bars) against softmax A (dashed)', caption });
    }
    if (what === 'sweep') {
      const s = ctx.sweep();
      if (!s) throw new Error('no sweep is shown');
      return chartSvg(sweepFigure(s.plan, s.points, caption));
    }
    throw new Error(`unknown figure ${what}`);
  }

  sync();
  return { ...NOTHING, name: 'export', get busy() { return busy; } }; // a Panel (ui/panel.mjs): it acts when asked
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
    '  recompute.py  recomputes M from Q, K (and the random matrices) with numpy in float64',
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
};
