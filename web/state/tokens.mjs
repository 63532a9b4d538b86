// tokens.mjs: token labels for the heatmaps at any n (issue 28): which labels fit on an axis, the name
// of a downsampled block's tokens, a tokens.json beside the reader's own Q, K, V, and the zoom window
// (`zoom=` in a link) cut from the full matrix at full resolution. Pure: no DOM; Vitest and the page
// call it alike (tests/js/tokens.test.mjs).
import { clampZoom, windowCells } from '../compute/zoom-window.mjs';
import { t, LANGS } from '../i18n/i18n.mjs';

const en = (key, params) => t(key, params, LANGS[0]);

// the window's bounds and cells are compute's (the engine cuts them); the state and the panels read them here
export { clampZoom, windowCells };

/** A piece as an axis label: a newline as ⏎, a leading space as ␣ (else invisible), an empty piece as ·. */
export function axisText(p) {
  return String(p).replace(/\n/g, '⏎').replace(/^ /, '␣') || '·';
}

/** A piece quoted, as the hover names it: “ the” (newlines as ⏎). */
export function quoted(p) {
  return `“${String(p).replace(/\n/g, '⏎')}”`;
}

/** The steps labels may take: 1, 2, 5, 10, 20, 50, … (every k-th token, k a round number). */
function niceStep(min) {
  for (let m = 1; ; m *= 10) for (const k of [1, 2, 5]) if (k * m >= min) return k * m;
}

/**
 * The tokens to label on an axis showing tokens from..to (inclusive) over lengthPx pixels, each label
 * labelPx high across the axis: every k-th token (k the smallest of 1, 2, 5, 10, … whose labels are at
 * least labelPx apart), and always `hovered` (when in range), without the neighbours it would overlap.
 * Returns the token indices, ascending.
 */
export function thinTicks(from, to, lengthPx, labelPx, hovered = null) {
  const count = to - from + 1;
  if (!(count > 0) || !(lengthPx > 0)) return [];
  const per = lengthPx / count;                   // pixels per token
  const k = niceStep(Math.max(1, Math.ceil(labelPx / per - 1e-9)));
  const out = [];
  const h = Number.isInteger(hovered) && hovered >= from && hovered <= to ? hovered : null;
  for (let i = Math.ceil(from / k) * k; i <= to; i += k) {
    if (h !== null && i !== h && Math.abs(i - h) * per < labelPx) continue; // would overlap the hovered one
    out.push(i);
  }
  if (h !== null && !out.includes(h)) { out.push(h); out.sort((a, b) => a - b); }
  return out;
}

/** The tokens a..b by name: “ the” for one, “ the” … “ light” for several; '' without pieces. */
export function spanName(pieces, a, b) {
  if (!pieces || a < 0 || b >= pieces.length || a > b) return '';
  return a === b ? quoted(pieces[a]) : `${quoted(pieces[a])} … ${quoted(pieces[b])}`;
}

/** "i “piece”" for one token, or "a–b (“x” … “y”)" for a span; bare numbers without pieces. */
export function spanText(pieces, a, b) {
  const name = spanName(pieces, a, b);
  if (a === b) return name ? `${a} ${name}` : `${a}`;
  return name ? `${a}–${b} (${name})` : `${a}–${b}`;
}

/**
 * A tokens.json given with the reader's own Q, K, V: `{"pieces": [...]}` as `attnviz capture` writes it
 * (ids and text may be there too), or a bare list of strings. `n`: the inputs' tokens. Returns
 * {pieces} or {error: one sentence naming the file}; never quotes the file's contents. The sentence is English
 * data, written from the catalogue's template, so the notice says it in the reader's language (docs/i18n.md).
 */
export function parseTokensJson(name, bytes, n) {
  let obj;
  try {
    obj = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { error: en('notice.x.tokens.json', { name }) };
  }
  const pieces = Array.isArray(obj) ? obj : obj && typeof obj === 'object' ? obj.pieces : undefined;
  if (!Array.isArray(pieces)) return { error: en('notice.x.tokens.shape', { name }) };
  const bad = pieces.findIndex((p) => typeof p !== 'string');
  if (bad >= 0) return { error: en('notice.x.tokens.piece', { name, index: bad }) };
  if (pieces.length !== n) return { error: en('notice.x.tokens.count', { name, count: pieces.length, n }) };
  return { pieces: pieces.slice() };
}

// --- the zoom window ------------------------------------------------------------------------------------

/**
 * A zoom link value "r0-r1,c0-c1" (inclusive token ranges, rows then columns) or '' (no zoom).
 * Returns {value, problem}: the value normalised ('' when malformed, with a one-sentence problem).
 * Bounds by n are applied where the window is cut (clampZoom): a link may open before its inputs load.
 */
export function zoomValue(raw) {
  const s = String(raw ?? '').trim();
  if (s === '') return { value: '', problem: null };
  const m = /^(\d{1,5})-(\d{1,5}),(\d{1,5})-(\d{1,5})$/.exec(s.replace(/[–\s]/g, (c) => (c === '–' ? '-' : '')));
  // English data like every link problem, from its template (web/state/notice.mjs says it in the reader's language)
  if (!m) return { value: '', problem: t('notice.x.link.zoom', { value: s.slice(0, 40) }, LANGS[0]) };
  let [r0, r1, c0, c1] = m.slice(1).map(Number);
  if (r0 > r1) [r0, r1] = [r1, r0];
  if (c0 > c1) [c0, c1] = [c1, c0];
  return { value: `${r0}-${r1},${c0}-${c1}`, problem: null };
}

/** The zoom value of a window: "r0-r1,c0-c1". */
export const zoomText = (z) => `${z.r0}-${z.r1},${z.c0}-${z.c1}`;

// --- what the heatmaps show ------------------------------------------------------------------------------

/**
 * The grid the heatmaps show: a frame's whole matrix by blocks of b (engine.mjs frame), or a zoom window
 * (Engine.window). {rows, cols, b, r0, r1, c0, c1, n, M, A, D, mode, zoomed}: cell (i, j) covers tokens
 * r0 + i·b … and c0 + j·b … (clipped to r1, c1).
 */
export function gridOf(frame, win = null) {
  if (win) {
    const z = win.zoom;
    return { rows: win.rows, cols: win.cols, b: win.b, ...z, n: frame.n, M: win.M, A: win.A, D: win.D, mode: frame.mode, zoomed: true };
  }
  return { rows: frame.size, cols: frame.size, b: frame.b, r0: 0, r1: frame.n - 1, c0: 0, c1: frame.n - 1, n: frame.n,
    M: frame.M, A: frame.A, D: frame.D, mode: frame.mode, zoomed: false };
}

/** The tokens under cell {row, col} of a grid: {rows: [a, b], cols: [a, b]} (inclusive). */
export function cellTokens(g, cell) {
  const a = g.r0 + cell.row * g.b, c = g.c0 + cell.col * g.b;
  return { rows: [a, Math.min(g.r1, a + g.b - 1)], cols: [c, Math.min(g.c1, c + g.b - 1)] };
}

/** The grid cell under a pointer at (x, y) in a w×h box: {row, col} or null. */
export function gridCellAt(g, x, y, w, h) {
  if (!(x >= 0 && y >= 0 && x < w && y < h)) return null;
  return { row: Math.min(g.rows - 1, Math.floor((y / h) * g.rows)), col: Math.min(g.cols - 1, Math.floor((x / w) * g.cols)) };
}
