// gate-strip.mjs: the gate strip's pure parts (web/ui/gate-strip.mjs draws them under the heatmap of M): which
// tokens each column shows (the heatmap's own columns: its blocks, or the zoom's window), the per-column α, β and
// resets, the colour of a gate, and the drawing into a canvas it is given. No state, no DOM beyond that canvas.
import { colorIndex } from './colormap.mjs';

/** Gates at or below this log-gate count as a reset (docs/gated.md: −30). */
const RESET = -30;
/** The colour scale of a gate: log₁₀(−ln α) from −4 (α = 0.9999, bright) to 1 (ln α = −10, dark; a reset). */
export const GATE_DECADES = { lo: -4, hi: 1 };

/**
 * The columns the heatmap of M shows (web/state/tokens.mjs gridOf: cell j covers tokens c0 + j·b …): the whole
 * matrix by the frame's blocks of b, or a zoom window z = {c0, c1} (web/compute/zoom-window.mjs clampZoom) by
 * blocks of ⌈max(window's sides)/cap⌉ as the window is cut. {c0, c1, b, cols}.
 */
export function stripColumns(n, b, z = null, cap = 256) {
  if (!z) return { c0: 0, c1: n - 1, b, cols: Math.ceil(n / b) };
  const h = z.r1 - z.r0 + 1, w = z.c1 - z.c0 + 1, bz = Math.max(1, Math.ceil(Math.max(h, w) / cap));
  return { c0: z.c0, c1: z.c1, b: bz, cols: Math.ceil(w / bz) };
}

/** The tokens [a, b] (inclusive) of column j. */
export const columnTokens = (c, j) => [c.c0 + j * c.b, Math.min(c.c1, c.c0 + (j + 1) * c.b - 1)];

/**
 * Per column: the mean α (of its tokens' α, each the exp of the channels' mean log-gate: gatesSummary's
 * `alpha`), the mean β (or null), and whether a reset falls in it (`resets`: sorted token positions).
 * {alpha, beta, reset} (Float32Arrays and a Uint8Array of c.cols).
 */
export function stripCells(summary, c) {
  const alpha = new Float32Array(c.cols), beta = summary.beta ? new Float32Array(c.cols) : null, reset = new Uint8Array(c.cols);
  const isReset = new Set(summary.resets);
  for (let j = 0; j < c.cols; j++) {
    const [a, b] = columnTokens(c, j);
    let sa = 0, sb = 0;
    for (let t = a; t <= b; t++) {
      sa += summary.alpha[t];
      if (beta) sb += summary.beta.values[t];
      if (isReset.has(t)) reset[j] = 1;
    }
    alpha[j] = sa / (b - a + 1);
    if (beta) beta[j] = sb / (b - a + 1);
  }
  return { alpha, beta, reset };
}

/** The colour index (0..255, bright = open) of a decay factor α: log₁₀(−ln α) on GATE_DECADES, α = 1 brightest. */
export function gateIndex(alpha) {
  const g = Math.log(alpha);
  if (!(g < 0)) return 255;
  if (!(g > RESET)) return 0;
  return 255 - colorIndex(Math.log10(-g), GATE_DECADES.lo, GATE_DECADES.hi);
}

/**
 * Draw one row of cells into `ctx` at y..y+h over width w (device pixels): colour index `index(v)` of each
 * value through `table` (256 RGBA entries), cell j from x = j·w/cols.
 */
export function drawCells(ctx, values, index, table, y, h, w) {
  const cols = values.length;
  for (let j = 0; j < cols; j++) {
    const i = index(values[j]);
    ctx.fillStyle = `rgb(${table[4 * i]},${table[4 * i + 1]},${table[4 * i + 2]})`;
    const x0 = Math.floor((j * w) / cols), x1 = Math.floor(((j + 1) * w) / cols);
    ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
  }
}

/** Triangles ▼ (pointing at the strip below) over the columns with a reset, in `color`, within y..y+h. */
export function drawResetMarks(ctx, reset, y, h, w, color) {
  const cols = reset.length;
  ctx.fillStyle = color;
  for (let j = 0; j < cols; j++) {
    if (!reset[j]) continue;
    const x = ((j + 0.5) * w) / cols, half = Math.max(h * 0.6, 2);
    ctx.beginPath();
    ctx.moveTo(x - half, y); ctx.lineTo(x + half, y); ctx.lineTo(x, y + h); ctx.closePath();
    ctx.fill();
  }
}

/**
 * The per-channel image's columns for the strip's columns (engine.mjs channelImage: blocks of `tb` tokens):
 * for each strip column, the image column holding its first token. An Int32Array of c.cols.
 */
export function imageColumns(image, c) {
  const out = new Int32Array(c.cols);
  for (let j = 0; j < c.cols; j++) out[j] = Math.min(image.cols - 1, Math.floor(columnTokens(c, j)[0] / image.tb));
  return out;
}
