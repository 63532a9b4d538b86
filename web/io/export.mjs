// export.mjs: the page's exports, pure parts (no DOM): a matrix as .npy (format v1.0, as numpy writes
// it) and as CSV, the readouts and state as JSON. Issue 10, item 3 (docs/page.md, "Export").

import { markerIndices } from '../render/spectrum.mjs';
import { fmt, fmtSigned } from '../render/format.mjs';
import { thinTicks, axisText } from '../state/tokens.mjs';
import { VARIANT_VIEW } from '../state/variants.mjs';
import { escapeXml, wrapRuns, textUnits, SVG_FAMILY } from '../render/svg-text.mjs';
import { t } from '../i18n/i18n.mjs';
import { randomFiles } from '../compute/random-draws.mjs';
import { gateFiles } from '../compute/gate-files.mjs';

/** A variant's presentation entry (web/state/variants.mjs: its numpy body, its random matrices), or undefined. */
const viewOf = (name) => (Object.hasOwn(VARIANT_VIEW, name) ? VARIANT_VIEW[name] : undefined);

/**
 * A .npy v1.0 file: the magic "\x93NUMPY", version 1.0, a uint16 LE header length, the header dict
 * {'descr': '<f4', 'fortran_order': False, 'shape': (n, d), } padded with spaces and ended by '\n' so
 * that the data starts at a multiple of 64 bytes (numpy's own padding), then the data, little-endian,
 * C order. Float32Array → '<f4', Float64Array → '<f8'.
 * @param {Float32Array|Float64Array} data
 * @param {number[]} shape
 * @returns {Uint8Array}
 */
export function npyBytes(data, shape) {
  let descr;
  if (data instanceof Float32Array) descr = '<f4';
  else if (data instanceof Float64Array) descr = '<f8';
  else throw new TypeError('npyBytes: Float32Array or Float64Array');
  if (!Array.isArray(shape) || shape.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new RangeError('npyBytes: shape must be non-negative integers');
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw new RangeError(`npyBytes: shape (${shape}) holds ${count}, data ${data.length}`);
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const total = 10 + header.length + 1;                 // magic, version, length, header, '\n'
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  if (header.length > 65535) throw new RangeError('npyBytes: header too long for version 1.0');
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0);   // \x93NUMPY 1.0
  out[8] = header.length & 0xff;
  out[9] = header.length >> 8;
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  // The data, little-endian whatever the host's order (a DataView, not the array's own bytes).
  const view = new DataView(out.buffer, 10 + header.length);
  const w = descr === '<f4' ? 4 : 8;
  for (let i = 0; i < data.length; i++) {
    if (w === 4) view.setFloat32(4 * i, data[i], true); else view.setFloat64(8 * i, data[i], true);
  }
  return out;
}

/** A CSV field quoted (RFC 4180: in double quotes, a double quote doubled), for token pieces. */
const csvQuote = (s) => `"${String(s).replace(/"/g, '""')}"`;

/**
 * An n×n (or rows×cols) row-major matrix as CSV: one row per line, comma-separated, full precision
 * (9 significant digits for float32, which round-trip exactly; 17 for float64). With `tokens` (n pieces
 * of a square matrix), a labelled table: a first line of the column tokens after an empty corner, and each
 * row's token first, every token quoted.
 * @param {Float32Array|Float64Array|number[]} matrix
 * @param {number} n rows
 * @param {number} [cols] columns (default n)
 * @param {string[]|null} [tokens] the token pieces, or null for numbers only
 */
export function csvText(matrix, n, cols = n, tokens = null) {
  if (tokens && (tokens.length !== n || cols !== n)) throw new RangeError(`csvText: ${tokens.length} tokens for ${n}×${cols}`);
  if (matrix.length !== n * cols) throw new RangeError(`csvText: ${matrix.length} values for ${n}×${cols}`);
  const digits = matrix instanceof Float32Array ? 9 : 17;
  const num = (x) => {
    if (Number.isNaN(x)) return 'nan';
    if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
    // float32: 9 significant digits name the float exactly; String() drops trailing zeros.
    return digits === 9 ? String(Number(x.toPrecision(9))) : String(x);
  };
  const lines = tokens ? [['""', ...tokens.map(csvQuote)].join(',')] : [];
  for (let i = 0; i < n; i++) {
    const row = new Array(cols);
    for (let j = 0; j < cols; j++) row[j] = num(matrix[i * cols + j]);
    lines.push(tokens ? `${csvQuote(tokens[i])},${row.join(',')}` : row.join(','));
  }
  return lines.join('\n') + '\n';
}

/**
 * The readouts-and-state export: the URL keys (snapshot().state), the readouts (snapshot().readouts),
 * what wrote it and the link version.
 * @param {{state: object, readouts: object}} snap the page's snapshot()
 * @param {string} [version]
 */
export function stateJson(snap, version = '1') {
  // the token pieces when the inputs have them (a model's text, own inputs' tokens.json), as snapshot() gives them
  const tokens = Array.isArray(snap.tokens) ? { tokens: snap.tokens } : {};
  // a gated family's gates, as snapshot() summarises them (docs/inspection.md)
  const gates = snap.gates ? { gates: snap.gates } : {};
  return JSON.stringify({ state: snap.state, readouts: snap.readouts, ...tokens, ...gates, generated_by: 'attnviz', version }, null, 2) + '\n';
}

/** tokens.json for an export's folder: {"pieces"} (and "ids" when known), the keys `attnviz capture` writes. */
export function tokensJson(pieces, ids = null) {
  return JSON.stringify({ ...(ids && ids.length === pieces.length ? { ids: [...ids] } : {}), pieces, text: pieces.join('') }) + '\n';
}

/** The export's file name: attnviz-<variant>-n<n>-<what>.<ext>, e.g. attnviz-focused-n256-M.npy. */
export function exportName(state, what, ext) {
  const safe = (s) => String(s).replace(/[^A-Za-z0-9_.-]/g, '_');
  return `attnviz-${safe(state.variant)}-n${safe(state.n)}-${safe(what)}.${ext}`;
}

// How a knob reads in a caption, by registry key; a key not listed reads "key = value". `lang`: the
// caption's language (the page's for a figure, English for the .zip's README).
const CAPTION_KNOB = {
  seed: (v, lang) => t('export.caption.seed', { v }, lang),
  orthogonal: (v, lang) => t(v ? 'export.caption.orthogonal' : 'export.caption.iid', null, lang),
  ef_shared: (v) => (v ? 'E = F' : null),
  dwc_kernel: (v) => (v ? `DWC k = ${v}` : null),
  iters: (v) => `iters = ${v === -1 ? 0 : v}`,
  decay: (v) => (v === 1 ? null : `γ = ${v}`),
  window: (v, lang) => (v ? t('export.caption.window', { v }, lang) : null),
  beta: (v) => `η = ${v}`,
  chunk: () => null, // the chunkwise form's chunk: it changes no matrix
  // said when on (gdn's and kda's default); off (−1, or 0 for a family whose default is off) goes unsaid
  qk_l2norm: (v, lang) => (v === true || v === 1 ? t('export.caption.l2norm', null, lang) : null),
  feature_eps: (v) => `ε = ${v === 0 ? '0' : Number(v.toPrecision(3)).toExponential().replace(/\.?0*e/, 'e').replace('e+', 'e')}`,
};

/**
 * One line naming the figure: the variant's label with the knobs it reads (the request's knobs, which
 * state.mjs's requestOf already limits to those), then the inputs and the global knobs, e.g.
 * "Performer FAVOR+ (m = 256, iid, feature seed 0) · Gaussian seed 1, n = 256, d = 64, std 1, scale 1/√d".
 * @param {{inputs: {gen, seed, n, d, std}, knobs: object}} request state.mjs's requestOf(state)
 * @param {string} label the variant's label (web/state/variants.mjs, or the registry's)
 * @param {string|null} [inputsLabel] for loaded inputs (request.inputs.tensors): what they are, e.g.
 *   "layer 1, head 3 of a 5-layer llama2.c model (dim 64) on 17 tokens" (the page's words)
 * @param {string} [lang] the caption's language (default: the page's; docs/i18n.md)
 */
export function figureCaption(request, label, inputsLabel = null, lang = undefined) {
  const w = (key, params = null) => t(key, params, lang);
  const { inputs, knobs } = request;
  const parts = [];
  for (const [key, v] of Object.entries(knobs)) {
    if (key === 'variant' || key === 'causal' || key === 'scale') continue;
    const f = CAPTION_KNOB[key];
    const text = f ? f(v, lang) : `${key} = ${v}`;
    if (text) parts.push(text);
  }
  // scale in units of 1/√d, as the page's slider shows it (docs/page.md).
  const rel = Number((knobs.scale * Math.sqrt(inputs.d)).toPrecision(6));
  const scale = rel === 1 ? w('export.caption.scale1') : w('export.caption.scale', { rel });
  const head = parts.length ? w('export.caption.head', { label, knobs: parts.join(w('export.caption.knobJoin')) }) : label;
  const mask = knobs.causal ? w('export.caption.causal') : '';
  const { n, d } = inputs;
  if (inputs.tensors) return w('export.caption.loadedInputs', { head, inputs: inputsLabel ?? w('export.caption.loaded'), n, d, scale, mask });
  const gen = /^(gaussian|clustered|local|lowrank|sink)$/.test(inputs.gen) ? w(`export.gen.${inputs.gen}`) : inputs.gen;
  return w('export.caption.generated', { head, gen, seed: inputs.seed, n, d, std: inputs.std, scale, mask });
}

// focused + DWC adds the band T_ij = w[j − i + h] (h = (k − 1)/2) to the focused matrix.
const DWC_BODY = 'h = (len(w) - 1) // 2\nR = R + sum(w[t] * np.eye(n, k=t - h) for t in range(len(w)))';

/** Whether numpySnippet recomputes this request's matrix (every variant of the registry does). */
export function snippetRecomputes(request) {
  return typeof viewOf(request.knobs.variant)?.numpy === 'string';
}

/**
 * A short Python script that loads the exported Q, K and M (and the random matrices of randomFiles and the
 * gates of gateFiles; file names as exportName gives them, in the script's folder), recomputes M with numpy in float64 and prints
 * the largest |difference|. For a variant it does not know it prints the CLI commands that reproduce M.
 * @param {{state: object, request: object}} arg the page's state (URL keys) and requestOf(state)
 */
export function numpySnippet({ state, request, tokens = false }) {
  const { inputs, knobs } = request;
  const f = (what) => JSON.stringify(exportName(state, what, 'npy'));
  const py = (v) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : typeof v === 'number' ? String(v) : JSON.stringify(v));
  const knobDict = Object.entries(knobs).filter(([k]) => k !== 'variant').map(([k, v]) => `${JSON.stringify(k)}: ${py(v)}`).join(', ');
  const lines = [
    `# attnviz export: ${knobs.variant}, n = ${inputs.n}, d = ${inputs.d}. Recomputes M from the exported Q, K`,
    '# (and random matrices, gates) in float64 and prints how far the exported float32 M is from it.',
    'import os, numpy as np',
    'here = os.path.dirname(os.path.abspath(__file__))',
    'load = lambda name: np.load(os.path.join(here, name)).astype(np.float64)',
    `Q, K, M = load(${f('Q')}), load(${f('K')}), load(${f('M')})`,
    `knobs = {${knobDict}}`,
    'knob = knobs.__getitem__',
    'n, d = Q.shape',
    'S, causal = knob("scale"), knob("causal")',
    'mask = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)',
    'I_, J_ = np.indices((n, n))',
    'if knobs.get("window", 0) > 0: mask = mask & (np.abs(I_ - J_) < knob("window"))   # a sliding window',
    'g = knobs.get("decay", 1.0) if causal else 1.0   # γ^(i − j) on the allowed entries',
    'G = np.where(I_ >= J_, g ** np.maximum(I_ - J_, 0), 0.0) if causal else np.ones((n, n))',
    'def norm(A, eps, clamp=None):',
    '    A = np.where(mask, A * G, 0.0)',
    '    s = A.sum(1, keepdims=True)',
    '    return A / (np.maximum(s, clamp) if clamp is not None else s + eps)',
    'def lognorm(L):',
    '    if L.shape[1] == n and g < 1: L = L + (I_ - J_) * np.log(g)   # the forgetting softmax',
    '    L = np.where(mask[:, :L.shape[1]], L, -np.inf)',
    '    E = np.exp(L - L.max(1, keepdims=True))',
    '    return E / E.sum(1, keepdims=True)',
  ];
  for (const [name, what] of randomFiles(request)) lines.push(`${name} = load(${f(what)})`);
  // a gated family's gates, as the library read them (the constant case written out): docs/gated.md
  for (const [name, what] of gateFiles(request)) lines.push(`${name} = load(${f(what)})`);
  if (snippetRecomputes(request)) {
    lines.push(viewOf(knobs.variant).numpy);
    if (knobs.dwc_kernel > 0) lines.push(DWC_BODY);
    lines.push('print("max |numpy - exported M| =", float(np.abs(R - M).max()))');
    // the tokens.json beside the arrays names where the largest difference lies
    if (tokens) lines.push(
      'import json',
      'pieces = json.load(open(os.path.join(here, "tokens.json"), encoding="utf-8"))["pieces"]',
      'i, j = np.unravel_index(np.abs(R - M).argmax(), M.shape)',
      'print("at query", int(i), repr(pieces[i]), "and key", int(j), repr(pieces[j]))');
  } else {
    lines.push(
      `# ${knobs.variant}: not known to this script; the CLI reproduces M:`,
      `#   attnviz generate --gen ${inputs.gen} --n ${inputs.n} --d ${inputs.d} --std ${inputs.std} --seed ${inputs.seed} -o qkv`,
      `#   attnviz matrix --variant ${knobs.variant} --q qkv/q.npy --k qkv/k.npy -o m.npy`,
      'print("M:", M.shape, "row sums within", float(np.abs(M.sum(1) - 1).max()), "of 1")');
  }
  return lines.join('\n') + '\n';
}

/**
 * A caption under a figure: one <text> of <tspan> lines, wrapped to `width` (its textContent is the
 * caption itself); `extra` is the height it needs beyond one line.
 */
function captionText(x, y, text, width, px = 11) {
  // broken at spaces or between Chinese characters; a line keeps the space it was broken at
  const lines = wrapRuns(text, Math.max(24, Math.floor(width / (px * 0.58))));
  const lh = Math.round(px * 1.35);
  const spans = lines.map((l, i) => `<tspan x="${x}" dy="${i ? lh : 0}">${escapeXml(l)}</tspan>`);
  return { svg: `<text x="${x}" y="${y}" font-size="${px}" class="caption">${spans.join('')}</text>`, extra: (lines.length - 1) * lh };
}

/** Tick marks' and labels' sizes on a heatmap's axes (SVG units): index numbers, token pieces. */
const AXIS_PX = 10, TOKEN_PX = 9;

/**
 * The ticks of a heatmap's two axes over the token indices it shows (rows r0…r1, cols c0…c1): with the
 * inputs' token pieces, those pieces thinned to every k-th token so that no two 9-unit labels overlap
 * (as the page's axes); without, the indices at round steps (1, 2, 5, 10, 20, …) at most about eight a
 * side, wide enough apart for the widest number. `at` is the token's centre along the side (0…1).
 * @param {{r0: number, r1: number, c0: number, c1: number}} g the grid shown (heatmaps.mjs)
 * @param {string[]|null} pieces the n token pieces, or null
 * @param {number} size the heatmap's side in SVG units
 * @returns {{rows: {at: number, text: string, index: number}[], cols: object[], tokens: boolean}}
 */
export function heatmapAxes(g, pieces, size) {
  const axis = (from, to) => {
    const count = to - from + 1;
    // a number's width at 10 units (0.62 em a digit) and a gap; at most about eight ticks a side
    const minPx = pieces ? TOKEN_PX + 2 : Math.max(0.62 * AXIS_PX * String(to).length + 10, size / 8);
    return thinTicks(from, to, size, minPx).map((i) => ({ at: (i - from + 0.5) / count, index: i, text: pieces ? axisText(pieces[i]) : String(i) }));
  };
  return { rows: axis(g.r0, g.r1), cols: axis(g.c0, g.c1), tokens: !!pieces };
}

/**
 * The colour bar's tick labels: its two ends (the high one "≥ …" when the range is clipped to a quantile,
 * the low one "≤ …" too when the map is diverging) and round values between them, none nearer an end than
 * 20 units of a `size`-unit bar (their labels would touch). `signed`: values with their sign (+0.01), for
 * M − A and a signed M.
 * @returns {{value: number, text: string}[]} from the top down
 */
export function colorbarTicks(lo, hi, { clipped = false, signed = false, size = 384 } = {}) {
  const show = (v) => (signed ? fmtSigned(v) : fmt(v));
  const ends = [{ value: hi, text: `${clipped ? '≥ ' : ''}${show(hi)}` }, { value: lo, text: `${clipped && signed ? '≤ ' : ''}${show(lo)}` }];
  if (!(hi > lo)) return ends.slice(0, 1);
  const gap = (20 / size) * (hi - lo);
  const inner = linTicks(lo, hi, 4).filter((v) => v - lo >= gap && hi - v >= gap).reverse()
    .map((v) => ({ value: v, text: v === 0 ? '0' : show(v) }));
  return [ends[0], ...inner, ends[1]];
}

/**
 * One heatmap panel drawn from (x0, y0): an optional label above it; the heatmap as an embedded PNG at its
 * cell resolution, drawn pixelated; tick marks and labels on both axes (heatmapAxes); the axis names;
 * a vector colour bar (the 256-entry colour table as 256 rects, top = the table's last colour) with its
 * ticks (colorbarTicks). Returns {parts (SVG lines), width, height}.
 */
function heatmapPanel({ png, cells, table, ticks, lo, hi, size = 384, axes = null, label = '' }, x0, y0) {
  if (!/^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(png)) throw new Error('heatmapSvg: png must be a base64 PNG data URL');
  const f = (v) => v.toFixed(2);
  const tok = !!axes && axes.tokens !== false; // labels given without `tokens` are token pieces
  const cut = (s) => escapeXml(s.length > 12 ? `${s.slice(0, 11)}…` : s);
  // the gutters the tick labels take, left of and under the heatmap
  const rowW = !axes ? 0 : tok ? 72 : Math.ceil(Math.max(...axes.rows.map((r) => 0.62 * AXIS_PX * r.text.length), 0)) + 10;
  const colH = !axes ? 0 : tok ? 72 : AXIS_PX + 8;
  const top = y0 + (label ? 20 : 0), left = x0 + 24 + rowW;
  const barX = left + size + 16, barW = 16;
  const barTextW = Math.ceil(Math.max(0, ...ticks.map((tk) => 7.6 * textUnits(tk.text)))); // DejaVu at 12 units
  const out = [];
  if (label) out.push(`<text x="${left}" y="${y0 + 12}" class="panel">${escapeXml(label)}</text>`);
  out.push(
    `<image x="${left}" y="${top}" width="${size}" height="${size}" preserveAspectRatio="none" image-rendering="optimizeSpeed" href="${png}" data-cells="${cells}"/>`,
    `<rect x="${left}" y="${top}" width="${size}" height="${size}" fill="none" stroke="#000000" stroke-width="0.5"/>`,
    `<text x="${left + size / 2}" y="${top + size + colH + 16}" text-anchor="middle" class="axis">${escapeXml(t('export.axis.key'))}</text>`,
    `<text transform="translate(${x0 + 12} ${top + size / 2}) rotate(-90)" text-anchor="middle" class="axis">${escapeXml(t('export.axis.query'))}</text>`,
  );
  if (axes) {
    // tick marks outside the frame, then the labels: token pieces (class tok) or indices (class tick)
    const marks = [];
    for (const r of axes.rows) marks.push(`M${left - 4} ${f(top + r.at * size)}h4`);
    for (const c of axes.cols) marks.push(`M${f(left + c.at * size)} ${top + size}v4`);
    if (marks.length) out.push(`<path d="${marks.join('')}" stroke="#000000" stroke-width="0.8"/>`);
    for (const r of axes.rows) {
      out.push(tok ? `<text x="${left - 6}" y="${f(top + r.at * size + 3)}" font-size="${TOKEN_PX}" text-anchor="end" class="tok">${cut(r.text)}</text>`
        : `<text x="${left - 6}" y="${f(top + r.at * size + 3.5)}" font-size="${AXIS_PX}" text-anchor="end" class="tick">${escapeXml(r.text)}</text>`);
    }
    for (const c of axes.cols) {
      out.push(tok ? `<text transform="translate(${f(left + c.at * size + 3)} ${top + size + 6}) rotate(-90)" font-size="${TOKEN_PX}" text-anchor="end" class="tok">${cut(c.text)}</text>`
        : `<text x="${f(left + c.at * size)}" y="${top + size + 5 + AXIS_PX}" font-size="${AXIS_PX}" text-anchor="middle" class="tick">${escapeXml(c.text)}</text>`);
    }
  }
  const step = size / 256;
  for (let i = 0; i < 256; i++) {
    const c = 255 - i;   // top of the bar: the table's last (highest) colour
    const rgb = `rgb(${table[4 * c]},${table[4 * c + 1]},${table[4 * c + 2]})`;
    out.push(`<rect x="${barX}" y="${(top + i * step).toFixed(3)}" width="${barW}" height="${(step + 0.05).toFixed(3)}" fill="${rgb}"/>`);
  }
  for (const tk of ticks) {
    if (!(hi > lo) || tk.value < lo || tk.value > hi) continue;
    const y = top + size * (1 - (tk.value - lo) / (hi - lo));
    out.push(`<line x1="${barX + barW}" x2="${barX + barW + 4}" y1="${f(y)}" y2="${f(y)}" stroke="#000000"/>`,
      `<text x="${barX + barW + 6}" y="${f(y + 4)}" class="bar">${escapeXml(tk.text)}</text>`);
  }
  return { parts: out, width: barX + barW + 6 + barTextW + 8 - x0, height: top + size + colH + 22 - y0 };
}

/**
 * A heatmap figure as SVG: a title, one heatmap panel (heatmapPanel: the cells, the axes' ticks, the colour
 * bar with its values) and the caption under it.
 * @param {{png: string, cells: number, table: Uint8Array, ticks: {value: number, text: string}[],
 *   lo: number, hi: number, title: string, caption: string, size?: number, axes?: object}} fig
 *   png: a data:image/png;base64 URL of the cells×cells heatmap; table: colorTable(name) (RGBA × 256);
 *   ticks: colorbarTicks(lo, hi, …); axes: heatmapAxes(grid, pieces, size), or null for none
 */
export function heatmapSvg({ title, caption, ...panel }) {
  return heatmapsSvg({ title, caption, panels: [panel] });
}

/**
 * Heatmap panels side by side under one title, with one caption: the M | A | M − A figure (each panel
 * with its label, axes and colour bar, as the embed's heatmap view shows them).
 * @param {{title: string, caption: string, panels: object[]}} fig panels: heatmapSvg's fields and a label
 */
export function heatmapsSvg({ title, caption, panels }) {
  const x0 = 8, y0 = 28, gap = 12;
  const drawn = [];
  let x = x0;
  for (const p of panels) {
    const d = heatmapPanel(p, x, y0);
    drawn.push(d);
    x += d.width + gap;
  }
  const w = Math.ceil(Math.max(x - gap + x0, 320));
  const bottom = y0 + Math.max(...drawn.map((d) => d.height));
  const cap = captionText(x0 + 24, bottom + 14, caption, w - x0 - 32);
  const h = Math.ceil(bottom + 30 + cap.extra);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="${SVG_FAMILY}" font-size="12">`,
    `<rect width="${w}" height="${h}" fill="#ffffff"/>`,
    `<text x="${x0 + 24}" y="18" font-weight="bold" class="title">${escapeXml(title)}</text>`,
    ...drawn.flatMap((d) => d.parts),
    cap.svg, '</svg>',
  ];
  return out.join('\n') + '\n';
}

// --- charts as SVG --------------------------------------------------------------------------------

const MARKER_PATH = {
  circle: (x, y, r) => `<circle cx="${x}" cy="${y}" r="${r}"/>`,
  square: (x, y, r) => `<rect x="${(x - 0.85 * r).toFixed(2)}" y="${(y - 0.85 * r).toFixed(2)}" width="${(1.7 * r).toFixed(2)}" height="${(1.7 * r).toFixed(2)}"/>`,
  triangle: (x, y, r) => `<path d="M${x} ${(y - 1.1 * r).toFixed(2)}L${(x + r).toFixed(2)} ${(y + 0.8 * r).toFixed(2)}L${(x - r).toFixed(2)} ${(y + 0.8 * r).toFixed(2)}Z"/>`,
  diamond: (x, y, r) => `<path d="M${x} ${(y - 1.2 * r).toFixed(2)}L${(x + r).toFixed(2)} ${y}L${x} ${(y + 1.2 * r).toFixed(2)}L${(x - r).toFixed(2)} ${y}Z"/>`,
};

/** Tick values of a log axis over [lo, hi] (lo > 0): the powers of ten inside, or lo and hi when none. */
function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) out.push(10 ** e);
  if (out.length > 8) { const step = Math.ceil(out.length / 8); return out.filter((_, i) => i % step === 0); }
  return out.length ? out : [lo, hi];
}
/** About `count` round tick values over [lo, hi]. */
function linTicks(lo, hi, count = 6) {
  const span = hi - lo || 1, raw = span / count, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}
const tickText = (v, log) => (log ? (v >= 1e-2 && v <= 1e3 ? String(Number(v.toPrecision(3))) : v.toExponential(0).replace('e', 'e')) : String(Number(v.toPrecision(6))));

/** A 10-unit label's box (DejaVu Sans: about 0.6 em a Latin character), a unit of margin around it. */
function labelBox(x, y, text, anchor = 'start') {
  const w = 6 * textUnits(text);
  const x0 = anchor === 'end' ? x - w : anchor === 'middle' ? x - w / 2 : x;
  return { x0: x0 - 1, x1: x0 + w + 1, y0: y - 9, y1: y + 3 };
}
const boxesMeet = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
/** Whether the segment (ax, ay)–(bx, by) meets the box (Liang–Barsky clipping). */
function segmentMeets([ax, ay, bx, by], b) {
  let t0 = 0, t1 = 1;
  const dx = bx - ax, dy = by - ay;
  for (const [p, q] of [[-dx, ax - b.x0], [dx, b.x1 - ax], [-dy, ay - b.y0], [dy, b.y1 - ay]]) {
    if (p === 0) { if (q < 0) return false; continue; }
    const r = q / p;
    if (p < 0) { if (r > t1) return false; if (r > t0) t0 = r; } else { if (r < t0) return false; if (r < t1) t1 = r; }
  }
  return true;
}

/**
 * Where a vertical line's label goes: right of the line (or left, near the plot's right edge), at the
 * highest place inside the plot where its box meets no segment and no box; where every place meets
 * something, the one that meets the fewest. Returns {x, y, anchor, box}.
 */
function placeLabel(lineX, text, plot, segments, boxes) {
  let best = null;
  for (let y = plot.top + 12; y <= plot.bottom - 4; y += 4) {
    for (const anchor of ['start', 'end']) {
      const x = anchor === 'start' ? lineX + 4 : lineX - 4;
      const box = labelBox(x, y, text, anchor);
      if (box.x0 < plot.left + 2 || box.x1 > plot.right - 2) continue;
      const hits = segments.filter((sg) => segmentMeets(sg, box)).length + boxes.filter((b) => boxesMeet(b, box)).length;
      if (!best || hits < best.hits) best = { x, y, anchor, box, hits };
      if (hits === 0) return best;
    }
  }
  return best ?? { x: lineX + 4, y: plot.top + 12, anchor: 'start', box: labelBox(lineX + 4, plot.top + 12, text) };
}

/**
 * A line chart as SVG, the page's curves as vectors: each series in its colour, dash pattern and marker
 * shape (charts.mjs SERIES), named in a legend; log or linear axes; horizontal and vertical guide lines
 * (the noise floor, the rank ceiling); the caption under the chart. Values ≤ 0 on a log axis and nulls
 * are gaps.
 * @param {{title: string, caption: string, xLabel: string, yLabel: string, logX?: boolean, logY?: boolean,
 *   series: {label: string, color: string, dash?: number[], marker?: string, x: number[], y: (number|null)[]}[],
 *   hlines?: {y: number, label: string}[], vlines?: {x: number, label: string}[],
 *   band?: {x: number[], lo: number[], hi: number[], color: string}, width?: number, height?: number}} c
 */
export function chartSvg(c) {
  const W = c.width ?? 640, H0 = c.height ?? 400, left = 64, right = 16, top = 30, legendH = 20;
  const plotW = W - left - right, plotH = H0 - top - 76 - legendH;
  const cap = captionText(left, H0 - 8, c.caption, W - left - 8);
  const H = H0 + cap.extra;
  const ok = (v, log) => v !== null && v !== undefined && Number.isFinite(v) && (!log || v > 0);
  const xs = [], ys = [];
  for (const s of c.series) s.x.forEach((x, i) => { if (ok(x, c.logX) && ok(s.y[i], c.logY)) { xs.push(x); ys.push(s.y[i]); } });
  if (c.band) c.band.x.forEach((x, i) => { for (const v of [c.band.lo[i], c.band.hi[i]]) if (ok(x, c.logX) && ok(v, c.logY)) { xs.push(x); ys.push(v); } });
  for (const h of c.hlines ?? []) if (ok(h.y, c.logY)) ys.push(h.y);
  if (!xs.length) throw new Error('chartSvg: nothing to draw');
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (c.logY) { y0 = 10 ** Math.floor(Math.log10(y0)); y1 = 10 ** Math.ceil(Math.log10(y1)); if (y0 === y1) y1 = y0 * 10; }
  else { const pad = (y1 - y0) * 0.05 || Math.abs(y0) * 0.1 || 1; y0 -= pad; y1 += pad; }
  if (x0 === x1) { x0 = c.logX ? x0 / 2 : x0 - 1; x1 = c.logX ? x1 * 2 : x1 + 1; }
  const tx = (v) => left + plotW * (c.logX ? Math.log(v / x0) / Math.log(x1 / x0) : (v - x0) / (x1 - x0));
  const ty = (v) => top + plotH * (1 - (c.logY ? Math.log(v / y0) / Math.log(y1 / y0) : (v - y0) / (y1 - y0)));
  const f = (v) => v.toFixed(2);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="${SVG_FAMILY}" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${left}" y="18" font-weight="bold" class="title">${escapeXml(c.title)}</text>`,
    `<g stroke="#dddddd" stroke-width="1">`,
  ];
  const yt = (c.logY ? logTicks(y0, y1) : linTicks(y0, y1)).filter((v) => v >= y0 && v <= y1);
  const xt = (c.logX ? logTicks(x0, x1) : linTicks(x0, x1)).filter((v) => v >= x0 && v <= x1);
  for (const v of yt) out.push(`<line x1="${left}" x2="${left + plotW}" y1="${f(ty(v))}" y2="${f(ty(v))}"/>`);
  for (const v of xt) out.push(`<line x1="${f(tx(v))}" x2="${f(tx(v))}" y1="${top}" y2="${top + plotH}"/>`);
  out.push('</g>', `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#000000" stroke-width="0.8"/>`);
  for (const v of yt) out.push(`<text x="${left - 6}" y="${f(ty(v) + 4)}" text-anchor="end" class="tick">${escapeXml(tickText(v, c.logY))}</text>`);
  for (const v of xt) out.push(`<text x="${f(tx(v))}" y="${top + plotH + 16}" text-anchor="middle" class="tick">${escapeXml(tickText(v, c.logX))}</text>`);
  out.push(`<text x="${left + plotW / 2}" y="${top + plotH + 32}" text-anchor="middle" class="axis">${escapeXml(c.xLabel)}</text>`,
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis">${escapeXml(c.yLabel)}</text>`);
  out.push(`<clipPath id="plot"><rect x="${left}" y="${top}" width="${plotW}" height="${plotH}"/></clipPath>`, '<g clip-path="url(#plot)">');
  if (c.band) {
    const pts = [];
    c.band.x.forEach((x, i) => { if (ok(x, c.logX) && ok(c.band.hi[i], c.logY)) pts.push(`${f(tx(x))},${f(ty(c.band.hi[i]))}`); });
    for (let i = c.band.x.length - 1; i >= 0; i--) if (ok(c.band.x[i], c.logX) && ok(c.band.lo[i], c.logY)) pts.push(`${f(tx(c.band.x[i]))},${f(ty(c.band.lo[i]))}`);
    if (pts.length > 2) out.push(`<polygon points="${pts.join(' ')}" fill="${c.band.color}" fill-opacity="0.18" stroke="none"/>`);
  }
  // what a guide's label must keep off: the curves' segments and markers, the guide lines and their labels
  const segments = [], boxes = [], labels = [];
  for (const h of c.hlines ?? []) if (ok(h.y, c.logY) && h.y >= y0 && h.y <= y1) {
    const y = ty(h.y), text = escapeXml(h.label);
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${f(y)}" y2="${f(y)}" stroke="#555555" stroke-dasharray="2 3"/>`);
    segments.push([left, y, left + plotW, y]);
    labels.push(`<text x="${left + plotW - 4}" y="${f(y - 4)}" text-anchor="end" font-size="10" fill="#555555" class="guide">${text}</text>`);
    boxes.push(labelBox(left + plotW - 4, y - 4, h.label, 'end'));
  }
  const vl = (c.vlines ?? []).filter((v) => ok(v.x, c.logX) && v.x >= x0 && v.x <= x1);
  for (const v of vl) {
    out.push(`<line x1="${f(tx(v.x))}" x2="${f(tx(v.x))}" y1="${top}" y2="${top + plotH}" stroke="#555555" stroke-dasharray="6 4"/>`);
    segments.push([tx(v.x), top, tx(v.x), top + plotH]);
  }
  for (const [si, s] of c.series.entries()) {
    let d = '', pen = false, prev = null;
    const pts = [];
    s.x.forEach((x, i) => {
      if (!ok(x, c.logX) || !ok(s.y[i], c.logY)) { pen = false; return; }
      const px = tx(x), py = ty(s.y[i]);
      d += `${pen ? 'L' : 'M'}${f(px)} ${f(py)}`;
      if (pen) segments.push([prev[0], prev[1], px, py]);
      pen = true;
      prev = [px, py];
      pts.push(i);
    });
    if (!d) continue;
    const dash = s.dash?.length ? ` stroke-dasharray="${s.dash.join(' ')}"` : '';
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.6"${dash}><title>${escapeXml(s.label)}</title></path>`);
    if (s.marker && MARKER_PATH[s.marker]) {
      // as on the page's charts (spectrum.mjs's markerIndices): nine along the curve, staggered from curve to
      // curve, apart where it is squeezed
      const at = markerIndices(pts, 9, (si + 1) / (c.series.length + 1), (k) => tx(s.x[pts[k]]), 6 * 3.2);
      out.push(`<g fill="${s.color}" class="markers">`);
      for (const k of at) {
        const mx = Number(f(tx(s.x[pts[k]]))), my = Number(f(ty(s.y[pts[k]])));
        out.push(MARKER_PATH[s.marker](mx, my, 3.2));
        boxes.push({ x0: mx - 4, x1: mx + 4, y0: my - 4.5, y1: my + 4.5 });
      }
      out.push('</g>');
    }
  }
  out.push('</g>');
  // a vertical guide's label (the rank ceiling) beside its line, at the first place from the top where it
  // meets no curve, marker, guide or other label (issue 32: it sat on the markers)
  for (const v of vl) {
    const at = placeLabel(tx(v.x), v.label, { left, right: left + plotW, top, bottom: top + plotH }, segments, boxes);
    boxes.push(at.box);
    labels.push(`<text x="${f(at.x)}" y="${f(at.y)}" text-anchor="${at.anchor}" font-size="10" fill="#555555" class="guide">${escapeXml(v.label)}</text>`);
  }
  out.push(...labels);
  // the legend: a short stroke with the marker, then the label
  let lx = left;
  const ly = top + plotH + 50;
  for (const s of c.series) {
    const dash = s.dash?.length ? ` stroke-dasharray="${s.dash.join(' ')}"` : '';
    out.push(`<line x1="${lx}" x2="${lx + 28}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    if (s.marker && MARKER_PATH[s.marker]) out.push(`<g fill="${s.color}">${MARKER_PATH[s.marker](lx + 14, ly, 3.2)}</g>`);
    out.push(`<text x="${lx + 34}" y="${ly + 4}" class="legend">${escapeXml(s.label)}</text>`);
    lx += 34 + 7.2 * textUnits(s.label) + 18; // a Chinese label is wider per character
  }
  out.push(cap.svg, '</svg>');
  return out.join('\n') + '\n';
}

/**
 * The row-entropy histogram as SVG: M's bars, softmax A's outline dashed, the means as ticks under the
 * axis, the uniform baseline (entropy-baseline.mjs) dotted; entropies in nats on an axis from 0 to ln n.
 * data: render/entropy.mjs entropyBars(hist).
 */
export function entropySvg(data, { title, caption, width = 640, height: h0 = 330 }) {
  if (!data?.M) throw new Error('entropySvg: no histogram of M');
  // a row between the title and the plot holds the uniform baseline's label; a lane under the plot holds
  // the means' markers, above the tick labels (issue 32: a mean marker covered a tick label)
  const left = 64, top = 40, lane = 10, plotW = width - left - 16, plotH = h0 - top - 72, bins = data.bins;
  const cap = captionText(left, h0 - 8, caption, width - left - 8);
  const height = h0 + cap.extra;
  const max = data.max || 1, bw = plotW / bins;
  const f = (v) => v.toFixed(2);
  const y = (v) => top + plotH * (1 - v / max);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${SVG_FAMILY}" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="18" font-weight="bold" class="title">${escapeXml(title)}</text>`,
    '<g fill="#0072b2" fill-opacity="0.75">',
  ];
  for (let i = 0; i < bins; i++) if (data.M[i] > 0) out.push(`<rect x="${f(left + i * bw + 0.5)}" y="${f(y(data.M[i]))}" width="${f(bw - 1)}" height="${f(top + plotH - y(data.M[i]))}"/>`);
  out.push('</g>');
  if (data.A) {
    let d = `M${left} ${top + plotH}`;
    for (let i = 0; i < bins; i++) d += `L${f(left + i * bw)} ${f(y(data.A[i]))}L${f(left + (i + 1) * bw)} ${f(y(data.A[i]))}`;
    out.push(`<path d="${d}L${left + plotW} ${top + plotH}" fill="none" stroke="#cc79a7" stroke-width="1.8" stroke-dasharray="5 3"/>`);
  }
  out.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#000000" stroke-width="0.8"/>`);
  for (const v of [0, 0.25, 0.5, 0.75, 1]) { // in nats, as the page's axis, whose end is ln n
    out.push(`<text x="${f(left + v * plotW)}" y="${top + plotH + lane + 14}" text-anchor="middle" class="tick">${v === 0 ? '0' : fmt(v * data.top)}</text>`);
  }
  if (Number.isFinite(data.uniform)) {
    const ux = left + Math.min(1, Math.max(0, data.uniform)) * plotW;
    const text = `${t('chart.entropy.uniform')} = ${fmt(data.uniformValue)}`, half = (7.4 * textUnits(text)) / 2;
    // over its line, but inside the figure (near ln n the line is at the plot's right edge)
    const lx = Math.min(Math.max(ux, 4 + half), width - 4 - half);
    out.push(`<path d="M${f(ux)} ${top}V${top + plotH}" stroke="#b8860b" stroke-width="1.5" stroke-dasharray="2 3"/>`,
      `<text x="${f(lx)}" y="${top - 6}" text-anchor="middle" fill="#b8860b" class="guide">${escapeXml(text)}</text>`);
  }
  for (const v of [0, max / 2, max]) {
    out.push(`<text x="${left - 6}" y="${f(y(v) + 4)}" text-anchor="end" class="tick">${Number((100 * v).toPrecision(2))}%</text>`);
  }
  for (const [m, color] of [[data.meanM, '#0072b2'], [data.meanA, '#cc79a7']]) {
    if (m !== null && m !== undefined) out.push(`<path d="M${f(left + m * plotW)} ${top + plotH + 1}l-5 ${lane - 1}h10Z" fill="${color}" class="mean"/>`);
  }
  out.push(`<text x="${left + plotW / 2}" y="${top + plotH + lane + 30}" text-anchor="middle">${escapeXml(t('export.entropy.axis', { top: fmt(data.top), uniform: t('chart.entropy.uniform') }))}</text>`,
    `<text transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(t('export.entropy.share'))}</text>`,
    cap.svg, '</svg>');
  return out.join('\n') + '\n';
}

// --- a .zip of several files (stored, no compression: .npy data barely compresses) ---------------

let CRC_TABLE = null;
/** CRC-32 (IEEE 802.3, as zip and PNG use it) of bytes. */
export function crc32(bytes) {
  if (!CRC_TABLE) {
    CRC_TABLE = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[i] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A zip archive (PKWARE APPNOTE 6.3, method 0 "stored", no zip64: the whole archive under 4 GiB and
 * 65535 files) of [{name, bytes}] (names ASCII, '/' for folders). Dates are 1980-01-01: the same inputs
 * give the same bytes.
 */
export function zipStore(files) {
  const enc = new TextEncoder();
  const entries = files.map(({ name, bytes }) => {
    const data = typeof bytes === 'string' ? enc.encode(bytes) : bytes;
    return { name: enc.encode(name), data, crc: crc32(data) };
  });
  const total = entries.reduce((s, e) => s + 30 + e.name.length + e.data.length + 46 + e.name.length, 22);
  if (total > 0xffffffff || entries.length > 0xffff) throw new RangeError('zipStore: too large for a zip without zip64');
  const out = new Uint8Array(total), dv = new DataView(out.buffer);
  let at = 0;
  const u16 = (v) => { dv.setUint16(at, v, true); at += 2; }, u32 = (v) => { dv.setUint32(at, v >>> 0, true); at += 4; };
  const head = (e) => { u16(20); u16(0); u16(0); u16(0); u16(0x21); u32(e.crc); u32(e.data.length); u32(e.data.length); u16(e.name.length); u16(0); };
  for (const e of entries) {
    e.offset = at;
    u32(0x04034b50); head(e);
    out.set(e.name, at); at += e.name.length;
    out.set(e.data, at); at += e.data.length;
  }
  const cdStart = at;
  for (const e of entries) {
    u32(0x02014b50); u16(20); head(e); u16(0); u16(0); u16(0); u32(0); u32(e.offset);
    out.set(e.name, at); at += e.name.length;
  }
  const cdSize = at - cdStart;
  u32(0x06054b50); u16(0); u16(0); u16(entries.length); u16(entries.length); u32(cdSize); u32(cdStart); u16(0);
  return out;
}
