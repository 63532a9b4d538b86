// token-axes.mjs: the token labels along the three heatmaps' axes (rows on the left, columns below), the
// same on M, A and M − A so that the three keep one size and one set of axes. Shown when the inputs have
// tokens (a model's text, a tokens.json beside own Q, K, V), and with a zoom (token indices otherwise);
// thinned to every k-th token so that no two labels overlap, and always the hovered token
// (web/state/tokens.mjs thinTicks). Labels are spans placed by CSSOM (allowed under the page's CSP).
import { thinTicks, axisText } from '../state/tokens.mjs';

/**
 * @param {HTMLElement[]} boxes the heatmaps' .heatbox elements (each holds its canvas.hm)
 * @returns {{draw(grid: object|null, pieces: string[]|null, hovered?: {row: number, col: number}|null): void}}
 */
export function mountTokenAxes(boxes) {
  const axes = boxes.map((box) => {
    const get = (cls) => {
      let el = box.querySelector(`:scope > .${cls}`);
      if (!el) { el = document.createElement('div'); el.className = cls; el.setAttribute('aria-hidden', 'true'); el.hidden = true; box.prepend(el); }
      return el;
    };
    return { box, canvas: box.querySelector('canvas.hm'), rows: get('tok-rows'), cols: get('tok-cols') };
  });
  let lastKey = null, lastPieces = null, piecesId = 0;

  function place(el, ticks, from, count, lengthPx, labelPx, pieces, hot, along) {
    const per = lengthPx / count;
    el.replaceChildren(...ticks.map((i) => {
      const s = document.createElement('span');
      s.textContent = pieces ? axisText(pieces[i]) : String(i);
      s.dataset.token = String(i);
      if (i === hot) s.className = 'hot';
      s.style[along] = `${((i - from + 0.5) * per - labelPx / 2).toFixed(1)}px`;
      return s;
    }));
  }

  let last = null; // the last draw's arguments: a resize (projector mode, the window) places the labels again
  new ResizeObserver(() => { if (last) api.draw(...last); }).observe(axes[0].canvas);
  const api = {
    draw(grid, pieces, hovered = null) {
      last = [grid, pieces, hovered];
      const on = !!grid && (!!pieces || grid.zoomed) && (!pieces || pieces.length === grid.n);
      const root = document.documentElement;
      if (root.hasAttribute('data-tokens') !== on) root.toggleAttribute('data-tokens', on);
      for (const a of axes) if (a.rows.hidden !== !on) a.rows.hidden = a.cols.hidden = !on;
      if (!on) { lastKey = null; return; }
      if (pieces !== lastPieces) { lastPieces = pieces; piecesId += 1; }
      // one size for the three (the stylesheet gives each the same gutters): measured once, on M
      const H = axes[0].canvas.clientHeight, W = axes[0].canvas.clientWidth;
      const key = `${piecesId}|${grid.r0}-${grid.r1},${grid.c0}-${grid.c1}|${H}x${W}|${hovered?.row ?? ''},${hovered?.col ?? ''}`;
      if (key === lastKey) return;
      lastKey = key;
      const fontPx = parseFloat(getComputedStyle(axes[0].rows).fontSize) || 11;
      const labelPx = Math.ceil(fontPx * 1.2) + 1; // the line box (line-height 1.2 in style.css) and a pixel between labels
      const rowTicks = thinTicks(grid.r0, grid.r1, H, labelPx, hovered?.row ?? null);
      const colTicks = thinTicks(grid.c0, grid.c1, W, labelPx, hovered?.col ?? null);
      for (const a of axes) {
        place(a.rows, rowTicks, grid.r0, grid.r1 - grid.r0 + 1, H, labelPx, pieces, hovered?.row, 'top');
        place(a.cols, colTicks, grid.c0, grid.c1 - grid.c0 + 1, W, labelPx, pieces, hovered?.col, 'left');
      }
    },
  };
  return api;
}
