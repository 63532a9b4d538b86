// zoom-window.mjs: the zoom window (`zoom=` in a link, web/state/tokens.mjs parses it) bounded by n and
// cut from the full n×n matrices at full resolution, as the engine does it (web/compute/engine.mjs
// window). Pure: no DOM.

/** {r0, r1, c0, c1} of a zoom value, within 0..n−1, or null (no zoom, or a window outside the matrix). */
export function clampZoom(value, n) {
  const m = /^(\d+)-(\d+),(\d+)-(\d+)$/.exec(String(value ?? ''));
  if (!m || !(n >= 1)) return null;
  const [r0, r1, c0, c1] = m.slice(1).map(Number);
  if (r0 >= n || c0 >= n) return null;
  return { r0, r1: Math.min(r1, n - 1), c0, c1: Math.min(c1, n - 1) };
}

/**
 * The window z of the n×n row-major matrices M and A, at full resolution when each side has at most
 * `cap` tokens, else by blocks of b tokens (the block mean or max, `mode`) within the window. D holds
 * the blocks of the entries' differences M − A. Returns {rows, cols, b, M, A, D} (Float32Arrays of
 * rows×cols); M or A may be null, and then so is D.
 */
export function windowCells(M, A, n, z, cap = 256, mode = 'mean') {
  const h = z.r1 - z.r0 + 1, w = z.c1 - z.c0 + 1;
  const b = Math.max(1, Math.ceil(Math.max(h, w) / cap));
  const rows = Math.ceil(h / b), cols = Math.ceil(w / b);
  const cut = (X, Y) => {
    if (!X || (Y === undefined ? false : !Y)) return null;
    const out = new Float32Array(rows * cols);
    for (let bi = 0; bi < rows; bi++) {
      const i0 = z.r0 + bi * b, i1 = Math.min(z.r1 + 1, i0 + b);
      for (let bj = 0; bj < cols; bj++) {
        const j0 = z.c0 + bj * b, j1 = Math.min(z.c1 + 1, j0 + b);
        let acc = mode === 'max' ? -Infinity : 0;
        for (let i = i0; i < i1; i++) {
          const row = i * n;
          for (let j = j0; j < j1; j++) {
            const v = Y ? X[row + j] - Y[row + j] : X[row + j];
            // max: the largest entry, of M − A the largest in magnitude with its sign (av_downsample's
            // rule), a NaN kept (an overflow is never maxed away)
            if (mode !== 'max') acc += v;
            else if (v !== v) { if (acc === acc) acc = v; } else if (acc === acc && (Y ? Math.abs(v) > Math.abs(acc) || acc === -Infinity : v > acc)) acc = v;
          }
        }
        out[bi * cols + bj] = mode === 'max' ? acc : acc / ((i1 - i0) * (j1 - j0));
      }
    }
    return out;
  };
  return { rows, cols, b, M: cut(M), A: cut(A), D: M && A ? cut(M, A) : null };
}
