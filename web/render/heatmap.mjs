// heatmap.mjs: pure heatmap helpers and draw functions. One canvas pixel per (block of) cell(s)
// through a 256-entry colour table; the canvas is scaled by CSS with `image-rendering: pixelated`.
// Matrices are flat row-major Float32Arrays (downsampled by web/compute/downsample.mjs in the compute layer).
// Draw functions touch only the canvas they are given.
import { NONFINITE_RGB } from './colormap.mjs';

/** The k-th smallest of a[0..len) (0-based), reordering a in place: Hoare's selection, expected O(len). */
export function selectKth(a, len, k) {
  let lo = 0, hi = len - 1;
  while (hi > lo) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) { const t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (k <= j) hi = j; else if (k >= i) lo = i; else break;
  }
  return a[k];
}

const quantileBuf = { buf: new Float32Array(8192 + 16) };
/** The q-quantile (0..1) of the finite values of one or more arrays, from at most 8,192 evenly strided samples. */
export function quantile(arrays, q, absolute = false) {
  const total = arrays.reduce((s, a) => s + a.length, 0);
  const stride = Math.max(1, Math.ceil(total / 8192));
  const need = Math.ceil(total / stride) + arrays.length;
  if (quantileBuf.buf.length < need) quantileBuf.buf = new Float32Array(need);
  const buf = quantileBuf.buf;
  let k = 0;
  for (const a of arrays) {
    for (let i = 0; i < a.length; i += stride) {
      const v = absolute ? Math.abs(a[i]) : a[i];
      if (v - v === 0) buf[k++] = v; // finite
    }
  }
  if (!k) return 0;
  return selectKth(buf, k, Math.min(k - 1, Math.max(0, Math.round(q * (k - 1)))));
}

/**
 * Colour range shared by M and A: [0, hi] with hi the 99.5% quantile of both (so one bright
 * entry does not wash out the rest) and `clipped` when the true max exceeds it.
 * For the difference: symmetric [−h, h].
 */
export function sharedRange(arrays) {
  let mx = -Infinity, mn = Infinity;
  for (const a of arrays) for (let i = 0; i < a.length; i++) { const v = a[i]; if (v > mx) mx = v; if (v < mn) mn = v; }
  if (!Number.isFinite(mx)) return { lo: 0, hi: 1, clipped: false };
  let hi = quantile(arrays, 0.995);
  if (!(hi > 0)) hi = mx > 0 ? mx : 1;
  const lo = Math.min(0, mn);
  return { lo, hi, clipped: mx > hi * (1 + 1e-6) };
}
export function symmetricRange(arrays) {
  let h = quantile(arrays, 0.995, true);
  let mx = 0;
  for (const a of arrays) for (let i = 0; i < a.length; i++) { const v = Math.abs(a[i]); if (v > mx) mx = v; }
  if (!(h > 0)) h = mx > 0 ? mx : 1e-12;
  return { lo: -h, hi: h, clipped: mx > h * (1 + 1e-6) };
}

const packed = new WeakMap();
const NONFINITE_PACKED = new Uint32Array(new Uint8ClampedArray([...NONFINITE_RGB, 255]).buffer)[0];
/** The table as 256 packed RGBA words in platform byte order (built once per table). */
function packTable(table) {
  let p = packed.get(table);
  if (!p) { p = new Uint32Array(new Uint8ClampedArray(table).buffer); packed.set(table, p); }
  return p;
}

/** Fill an RGBA pixel buffer (count×4 bytes) from values through the table. Returns the count of NaN/Inf. */
export function paint(pixels, values, count, table, lo, hi) {
  const out = new Uint32Array(pixels.buffer, pixels.byteOffset, count);
  const words = packTable(table);
  const span = hi - lo;
  const k = span > 0 ? 255 / span : 0;
  let bad = 0;
  if (!(span > 0)) {
    for (let i = 0; i < count; i++) {
      const v = values[i];
      if (v - v !== 0) { out[i] = NONFINITE_PACKED; bad++; } else out[i] = words[128]; // NaN or ±Inf
    }
    return bad;
  }
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v - v !== 0) { out[i] = NONFINITE_PACKED; bad++; continue; } // NaN or ±Inf
    let t = (v - lo) * k;
    t = t < 0 ? 0 : t > 255 ? 255 : t;
    out[i] = words[(t + 0.5) | 0]; // round half up, as Math.round
  }
  return bad;
}

const surfaces = new WeakMap(); // canvas → {ctx, img}: one ImageData per canvas and size, reused
function surface(canvas, w, h) {
  let sf = surfaces.get(canvas);
  if (!sf || sf.img.width !== w || sf.img.height !== h || canvas.width !== w || canvas.height !== h) {
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    const ctx = sf?.ctx ?? canvas.getContext('2d', { alpha: false });
    sf = { ctx, img: ctx.createImageData(w, h) };
    surfaces.set(canvas, sf);
  }
  return sf;
}

/**
 * Draw a c×c matrix (or a rows×cols zoom window) into a canvas (resized only when its shape changes): one
 * pass of packed RGBA words into a reused ImageData, one putImageData.
 * data {values: Float32Array, size: c} or {values, rows, cols}; opts {table, lo, hi}. Returns {nonfinite}.
 */
export function drawHeatmap(canvas, data, opts) {
  const rows = data.rows ?? data.size, cols = data.cols ?? data.size;
  const { ctx, img } = surface(canvas, cols, rows);
  const nonfinite = paint(img.data, data.values, rows * cols, opts.table, opts.lo, opts.hi);
  ctx.putImageData(img, 0, 0);
  return { nonfinite };
}

/** Draw a colour bar (low at the bottom) into a canvas 1 pixel wide and 256 high. */
export function drawColorbar(canvas, table) {
  if (canvas.width !== 1 || canvas.height !== 256) { canvas.width = 1; canvas.height = 256; }
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(1, 256);
  for (let i = 0; i < 256; i++) img.data.set(table.subarray(4 * (255 - i), 4 * (255 - i) + 4), 4 * i);
  ctx.putImageData(img, 0, 0);
}

/** The matrix cell under a pointer at (x, y) CSS pixels in a box of w×h showing n×n: {row, col} or null. */
export function cellAt(x, y, w, h, n) {
  if (x < 0 || y < 0 || x >= w || y >= h) return null;
  return { row: Math.min(n - 1, Math.floor((y / h) * n)), col: Math.min(n - 1, Math.floor((x / w) * n)) };
}
