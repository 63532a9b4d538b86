// colormap.mjs: 256-entry RGBA colour tables (Uint8ClampedArray, 1024 bytes) built by linear
// interpolation between published stops. Pure; no DOM.
//   viridis  perceptually uniform, colour-blind-safe sequential map (matplotlib, van der Walt & Smith),
//            stops = viridis(linspace(0, 1, 11))
//   rdbu     ColorBrewer RdBu (11 classes), colour-blind-safe diverging map: blue below 0, white at 0,
//            red above, for M − A
//   cividis  optimised for colour-vision deficiency: blue to yellow, nearly the same seen with
//            deuteranopia or protanopia (Nuñez, Anderton & Renslow 2018), stops = cividis(linspace(0, 1, 11))
//   magma    perceptually uniform, colour-blind-safe, black to pale yellow (matplotlib)
//   gray     black to white, for printing

const STOPS = {
  viridis: ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c', '#22a884', '#44bf70',
    '#7ad151', '#bddf26', '#fde725'],
  rdbu: ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7', '#f4a582',
    '#d6604d', '#b2182b', '#67001f'],
  cividis: ['#00224e', '#083370', '#35456c', '#4f576c', '#666970', '#7d7c78', '#948f78', '#aea371', '#c8b866',
    '#e5cf52', '#fee838'],
  magma: ['#000004', '#140e36', '#3b0f70', '#641a80', '#8c2981', '#b73779', '#de4968', '#f7705c', '#fe9f6d',
    '#fecf92', '#fcfdbf'],
  gray: ['#000000', '#ffffff'],
};

/** The colour drawn for NaN or ±Inf entries (overflow is shown, not hidden): magenta. */
export const NONFINITE_RGB = [255, 0, 255];

/** '#rrggbb' → [r, g, b]. */
export function hexToRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

/** A 256×RGBA table interpolated through equally spaced stops. */
export function buildTable(stops) {
  const rgb = stops.map(hexToRgb);
  const t = new Uint8ClampedArray(256 * 4);
  const segs = rgb.length - 1;
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * segs;
    const k = Math.min(segs - 1, Math.floor(x));
    const f = x - k;
    for (let c = 0; c < 3; c++) t[4 * i + c] = Math.round(rgb[k][c] + f * (rgb[k + 1][c] - rgb[k][c]));
    t[4 * i + 3] = 255;
  }
  return t;
}

const cache = new Map();
/** The named table ('viridis' | 'rdbu' | 'gray'), built once. */
export function colorTable(name) {
  if (!STOPS[name]) throw new Error(`unknown colour map ${name}`);
  if (!cache.has(name)) cache.set(name, buildTable(STOPS[name]));
  return cache.get(name);
}
export const COLORMAPS = Object.keys(STOPS);

/** Table index 0..255 of value v on [lo, hi] (clamped); -1 for NaN/Inf. */
export function colorIndex(v, lo, hi) {
  if (!Number.isFinite(v)) return -1;
  const span = hi - lo;
  const x = span > 0 ? (v - lo) / span : 0.5;
  return x <= 0 ? 0 : x >= 1 ? 255 : Math.round(x * 255);
}

/** Relative luminance (WCAG) of table entry i, for contrast checks in tests. */
export function luminance(table, i) {
  const lin = (c) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(table[4 * i]) + 0.7152 * lin(table[4 * i + 1]) + 0.0722 * lin(table[4 * i + 2]);
}
