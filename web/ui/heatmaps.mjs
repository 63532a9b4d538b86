// heatmaps.mjs: the heatmap trio (M, softmax A, M − A), one drawing for the page and every <attn-viz>
// element (drawTrio; the element's panel: mountHeatTrio), and the page's panel around it (mountHeatmaps): the colour bars, the caption and notes, the token axes
// (ui/token-axes.mjs), the zoom (ui/zoom.mjs), the hover and the keyboard cursor.
import { drawHeatmap, drawColorbar, sharedRange, symmetricRange } from '../render/heatmap.mjs';
import { colorTable } from '../render/colormap.mjs';
import { fmt, fmtSigned } from '../render/format.mjs';
import { gridOf, cellTokens, gridCellAt, spanText } from '../state/tokens.mjs';
import { MAIN_THREAD_MAX_N } from '../compute/engine.mjs';
import { mountTokenAxes } from './token-axes.mjs';
import { mountZoom } from './zoom.mjs';
import { NOTHING } from './panel.mjs';
import { t } from '../i18n/i18n.mjs';
import { variantName, referenceName } from '../render/variant-name.mjs';

/** Whether a heatmap's values hold a negative entry (a signed M). */
function hasNegative(values) {
  for (let i = 0; i < values.length; i++) if (values[i] < 0) return true;
  return false;
}

/**
 * Draw grid `g` ({M, A, D, rows, cols}) into the canvases [M, A, M − A] with the tables {seq, div}. A signed
 * M (retention, the delta rule, Linformer, Nyström, DWC) takes the diverging map centred on 0, and the
 * softmax reference A keeps its own sequential scale. Returns {r, ra, dr, signed, bad}: the ranges of M, A
 * and M − A, and how many cells of M are not finite.
 */
export function drawTrio([cM, cA, cD], g, tables) {
  const signed = hasNegative(g.M);
  const r = signed ? symmetricRange([g.M]) : sharedRange([g.M, g.A]);
  const ra = signed ? sharedRange([g.A]) : r;
  const dr = symmetricRange([g.D]);
  const data = (values) => ({ values, rows: g.rows, cols: g.cols });
  const bad = drawHeatmap(cM, data(g.M), { table: signed ? tables.div : tables.seq, lo: r.lo, hi: r.hi }).nonfinite;
  drawHeatmap(cA, data(g.A), { table: tables.seq, lo: ra.lo, hi: ra.hi });
  drawHeatmap(cD, data(g.D), { table: tables.div, lo: dr.lo, hi: dr.hi });
  return { r, ra, dr, signed, bad };
}

/** A colour bar's ends and middle for range `rg` (`div`: a diverging one, centred on 0). */
export const barText = (rg, div) => ({
  hi: `${rg.clipped ? '≥ ' : ''}${div ? fmtSigned(rg.hi) : fmt(rg.hi)}`,
  mid: div ? '0' : fmt((rg.lo + rg.hi) / 2),
  lo: `${rg.clipped && div ? '≤ ' : ''}${fmt(rg.lo)}`,
});

/**
 * The heatmap trio of an <attn-viz> element as a Panel: the canvases .hm-M, .hm-A, .hm-D and the three
 * .cbar in `root` (its shadow root). `frame()`: the frame to show; `caption()`: M's caption; `missing(f)`:
 * a frame without matrices came (its status says why).
 */
export function mountHeatTrio(root, { frame, caption, missing }) {
  const q = (sel) => root.querySelector(sel);
  const canvases = ['.hm-M', '.hm-A', '.hm-D'].map(q);
  const bars = [...root.querySelectorAll('.cbar')];
  const tables = { seq: colorTable('viridis'), div: colorTable('rdbu') };
  let signedShown = false;
  bars.forEach((b, i) => drawColorbar(b.querySelector('canvas'), i === 2 ? tables.div : tables.seq));
  function draw() {
    const f = frame();
    if (!f?.M || !f.A) { missing(f); return; }
    const { r, ra, dr, signed } = drawTrio(canvases, { M: f.M, A: f.A, D: f.D, rows: f.size, cols: f.size }, tables);
    if (signed !== signedShown) { signedShown = signed; drawColorbar(bars[0].querySelector('canvas'), signed ? tables.div : tables.seq); }
    [[r, signed], [ra, false], [dr, true]].forEach(([rg, div], i) => {
      const bt = barText(rg, div);
      bars[i].querySelector('.hi').textContent = bt.hi;
      bars[i].querySelector('.lo').textContent = bt.lo;
    });
    q('.cap-M').textContent = caption();
  }
  return { ...NOTHING, name: 'heatmaps', draw };
}

/**
 * The note under the heatmaps, in the page's language: the downsampling, and what a drag's quick frame is
 * (docs/page.md, "Large n").
 */
export function dsNote(f) {
  const shown = f.b > 1 ? t('heatmap.ds.blocks', { n: f.n, size: f.size, b: f.b, mode: t(`option.ds.${f.mode}`) }) : '';
  if (f.quick === 'factors') return [shown, t('heatmap.ds.factors')].filter(Boolean).join(t('heatmap.ds.join'));
  if (f.quick === 'draft') {
    const s = f.draftStride, every = s === 2 || s === 3 ? t(`heatmap.every.${s}`) : t('heatmap.every', { s });
    return t('heatmap.ds.draft', { every, kept: Math.ceil(f.n / s), n: f.n });
  }
  return shown;
}

/** The note when a feature ε swamps most keys (engine.mjs's swampedKeys), or null. */
function swampNote(s) {
  if (!s || !(s.fraction > 0.5)) return null;
  return t('heatmap.swamp', { eps: s.eps.toExponential(0), pct: Math.round(100 * s.fraction), keys: s.keys, n: s.n });
}

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-8, 0], PageDown: [8, 0] };

/**
 * The page's heatmap panel (index.html's #hm-M, #hm-A, #hm-D and their bars, #zoom-box). `page`: main.mjs's
 * context. Besides the Panel: zoom (ui/zoom.mjs), and heatmap(which) (what the export menu draws).
 */
export function mountHeatmaps(page) {
  const $ = (id) => document.getElementById(id);
  const ids = ['hm-M', 'hm-A', 'hm-D'];
  const canvases = ids.map($);
  const tables = { seq: colorTable('viridis'), seqName: 'viridis', div: colorTable('rdbu') };
  // the grid the heatmaps show (the frame's blocks, or the zoom window): hover and the cursor read it
  let shownGrid = null, ranges = null;
  const setText = (id, text) => { const el = $(id); if (el.textContent !== text) el.textContent = text; };
  drawColorbar($('cb-M'), tables.seq); drawColorbar($('cb-A'), tables.seq); drawColorbar($('cb-D'), tables.div);

  /** The sequential table for the state's colour map (made again when the reader picks another). */
  function seqTable() {
    if (tables.seqName !== page.st.cmap) {
      tables.seq = colorTable(page.st.cmap);
      tables.seqName = page.st.cmap;
      drawColorbar($('cb-M'), tables.mSigned ? tables.div : tables.seq); drawColorbar($('cb-A'), tables.seq);
    }
    return tables.seq;
  }

  const tokenAxes = mountTokenAxes(canvases.map((c) => c.parentElement));
  const zoom = mountZoom($('zoom-box'), {
    set: (value) => page.onChange('zoom', value, 'change'),
    local: () => page.st.n <= MAIN_THREAD_MAX_N && !!page.engine,
    compute: (req, value) => page.engine.window(req, value),
    post: (msg) => page.lab.postWindow(msg),
    request: () => page.requestOf(page.st), state: () => page.st, pieces: page.tokenPieces, grid: () => shownGrid,
    redraw: () => { page.redraw.heat = true; page.schedule(); }, settled: () => page.inspector.notify(),
    canvases,
  });

  function draw() {
    const f0 = page.view.frame;
    if (!f0 || !f0.M || !f0.A) return;
    const st = page.st;
    // a zoom shows its window, cut from the full matrix (web/ui/zoom.mjs); until it comes, the last picture stays
    const win = st.zoom ? zoom.window(f0) : null;
    if (st.zoom && win === undefined) return;
    const g = gridOf(f0, win);
    if (!g.M || !g.A) return;
    shownGrid = g;
    const seq = seqTable();
    const { r, ra, dr, signed, bad } = drawTrio(canvases, g, { seq, div: tables.div });
    ranges = { r, ra, dr, signed };
    if (tables.mSigned !== signed) { tables.mSigned = signed; drawColorbar($('cb-M'), signed ? tables.div : seq); }
    $('hm-M').dataset.map = signed ? 'diverging' : 'sequential';
    for (const [k, rg, div] of [['M', r, signed], ['A', ra, false], ['D', dr, true]]) {
      const bt = barText(rg, div);
      setText(`cb-${k}-hi`, bt.hi); setText(`cb-${k}-mid`, bt.mid); setText(`cb-${k}-lo`, bt.lo);
    }
    setText('cap-M', t(bad ? 'heatmap.capM.bad' : 'heatmap.capM', { label: variantName(page.viewOf(st).label), bad }));
    setText('cap-A', referenceName(page.referenceCaption(st)));
    setText('ds-note', g.zoomed ? zoom.note(g) : dsNote(f0));
    tokenAxes.draw(g, page.tokenPieces());
    if (document.activeElement?.classList.contains('hm')) showCursor(document.activeElement); // new values under the cursor
    const note = swampNote(f0.swamped);
    if ($('swamp-note').hidden !== !note) $('swamp-note').hidden = !note;
    setText('swamp-note', note ?? '');
  }

  // --- hover and the keyboard cursor ---
  /** Whether the line under the heatmaps still shows its hint (no cell hovered yet), in either language. */
  const showingHint = () => ['en', 'zh'].some((lang) => $('hover').textContent === t('hover.hint', null, lang));
  /** The shown grid's cell under a pointer event, or null. */
  function cellUnder(e) {
    const g = shownGrid;
    if (!g) return null;
    const rect = e.target.getBoundingClientRect();
    return gridCellAt(g, e.clientX - rect.left, e.clientY - rect.top, rect.width, rect.height);
  }
  function onHover(e) {
    const cell = cellUnder(e);
    if (!cell) return;
    $('hover').textContent = cellText(cell);
    hotTokens(cell);
  }
  /** Label the tokens of a cell (hovered, or under the keyboard cursor) on the axes, whatever the thinning. */
  function hotTokens(cell) {
    const tok = cell && cellTokens(shownGrid, cell);
    tokenAxes.draw(shownGrid, page.tokenPieces(), tok ? { row: tok.rows[0], col: tok.cols[0] } : null);
  }
  /** A focused heatmap's cell cursor: arrow keys move it (Page Up/Down by 8, Home/End to the row's ends). */
  const cursor = { row: 0, col: 0 };
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
    selectRow();
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
  /** Say which row the reader selected (a press, or the cursor's keys; not a focus by Tab), for the
   * single-row view (ui/row-view.mjs): the full matrix's row, a block's first. */
  function selectRow() {
    if (shownGrid) document.dispatchEvent(new CustomEvent('attnviz-row', { detail: { row: cellTokens(shownGrid, cursor).rows[0] } }));
  }
  /**
   * What a heatmap cell holds: its row and column (or block), named by their tokens when the inputs have
   * them (“ the” … “ light” for a block: web/state/tokens.mjs), then M, softmax and M − A.
   */
  function cellText(cell) {
    const g = shownGrid, f = page.view.frame, engine = page.engine;
    const k = cell.row * g.cols + cell.col;
    const tok = cellTokens(g, cell), pieces = page.tokenPieces();
    const rows = spanText(pieces, ...tok.rows), cols = spanText(pieces, ...tok.cols);
    if (g.b === 1) {
      const exact = !g.zoomed && engine && page.st.n <= MAIN_THREAD_MAX_N && engine.lab?.n === f.n ? engine.valueAt(tok.rows[0], tok.cols[0]) : null;
      const m = exact ? exact.M : g.M[k], a = exact ? exact.A : g.A[k];
      return t('hover.cell', { row: rows, col: cols, m: fmt(m, 4), a: fmt(a, 4), d: fmtSigned(m - a, 3) });
    }
    return t('hover.block', { rows, cols, mode: t(`option.ds.${g.mode}`), m: fmt(g.M[k], 4), a: fmt(g.A[k], 4), d: fmtSigned(g.D[k], 3) });
  }
  // a click or tap focuses the canvas, and focus shows the cursor's cell: put the cursor under the pointer
  // first (pointerdown comes before the focus), or the first click reports row 0, col 0
  function onPress(e) {
    const cell = cellUnder(e);
    if (!cell) return;
    cursor.row = cell.row; cursor.col = cell.col;
    if (document.activeElement === e.target) showCursor(e.target);
    selectRow();
  }
  for (const c of canvases) {
    c.addEventListener('pointerdown', onPress);
    c.addEventListener('mousemove', onHover);
    c.addEventListener('keydown', onHeatKey);
    c.addEventListener('focus', () => showCursor(c));
    c.addEventListener('blur', () => { c.nextElementSibling.hidden = true; hotTokens(null); });
    c.addEventListener('mouseleave', () => hotTokens(null));
  }

  return {
    ...NOTHING,
    name: 'heatmaps',
    sync: (st) => { zoom.sync(st.zoom, st.n); if (showingHint()) setText('hover', t('hover.hint')); },
    draw() { if (page.redraw.heat) draw(); },
    zoom,
    /** What the heatmap shows (the whole matrix by blocks, or the zoom's window), for the export menu. */
    heatmap(which) {
      const g = shownGrid;
      if (!g?.[which] || !ranges) return null;
      const rg = which === 'D' ? ranges.dr : which === 'A' ? ranges.ra : ranges.r;
      const div = which === 'D' || (which === 'M' && ranges.signed);
      return { ...g, values: g[which], lo: rg.lo, hi: rg.hi, clipped: rg.clipped, table: div ? tables.div : seqTable(), diverging: div };
    },
  };
}
