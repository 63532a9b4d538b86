// export.mjs: the page's exports, pure parts (no DOM): a matrix as .npy (format v1.0, as numpy writes
// it) and as CSV, the readouts and state as JSON. Issue 10, item 3 (docs/page.md, "Export").

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

/**
 * An n×n (or rows×cols) row-major matrix as CSV: one row per line, comma-separated, full precision
 * (9 significant digits for float32, which round-trip exactly; 17 for float64).
 * @param {Float32Array|Float64Array|number[]} matrix
 * @param {number} n rows
 * @param {number} [cols] columns (default n)
 */
export function csvText(matrix, n, cols = n) {
  if (matrix.length !== n * cols) throw new RangeError(`csvText: ${matrix.length} values for ${n}×${cols}`);
  const digits = matrix instanceof Float32Array ? 9 : 17;
  const num = (x) => {
    if (Number.isNaN(x)) return 'nan';
    if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
    // float32: 9 significant digits name the float exactly; String() drops trailing zeros.
    return digits === 9 ? String(Number(x.toPrecision(9))) : String(x);
  };
  const lines = [];
  for (let i = 0; i < n; i++) {
    const row = new Array(cols);
    for (let j = 0; j < cols; j++) row[j] = num(matrix[i * cols + j]);
    lines.push(row.join(','));
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
  return JSON.stringify({ state: snap.state, readouts: snap.readouts, generated_by: 'attnviz', version }, null, 2) + '\n';
}

/** The export's file name: attnviz-<variant>-n<n>-<what>.<ext>, e.g. attnviz-focused-n256-M.npy. */
export function exportName(state, what, ext) {
  const safe = (s) => String(s).replace(/[^A-Za-z0-9_.-]/g, '_');
  return `attnviz-${safe(state.variant)}-n${safe(state.n)}-${safe(what)}.${ext}`;
}

// How a knob reads in a caption, by registry key; a key not listed reads "key = value".
const CAPTION_KNOB = {
  seed: (v) => `feature seed ${v}`,
  orthogonal: (v) => (v ? 'orthogonal' : 'iid'),
  ef_shared: (v) => (v ? 'E = F' : null),
  dwc_kernel: (v) => (v ? `DWC k = ${v}` : null),
  iters: (v) => `iters = ${v === -1 ? 0 : v}`,
};
const GEN_LABEL = { gaussian: 'Gaussian', clustered: 'clustered', local: 'local', lowrank: 'low-rank', sink: 'sink' };

/**
 * One line naming the figure: the variant's label with the knobs it reads (the request's knobs, which
 * state.mjs's requestOf already limits to those), then the inputs and the global knobs, e.g.
 * "Performer FAVOR+ (m = 256, iid, feature seed 0) · Gaussian seed 1, n = 256, d = 64, std 1, scale 1/√d".
 * @param {{inputs: {gen, seed, n, d, std}, knobs: object}} request state.mjs's requestOf(state)
 * @param {string} label the variant's label (web/variants.mjs, or the registry's)
 */
export function figureCaption(request, label) {
  const { inputs, knobs } = request;
  const parts = [];
  for (const [key, v] of Object.entries(knobs)) {
    if (key === 'variant' || key === 'causal' || key === 'scale') continue;
    const f = CAPTION_KNOB[key];
    const text = f ? f(v) : `${key} = ${v}`;
    if (text) parts.push(text);
  }
  // scale in units of 1/√d, as the page's slider shows it (docs/page.md).
  const rel = Number((knobs.scale * Math.sqrt(inputs.d)).toPrecision(6));
  const scale = rel === 1 ? 'scale 1/√d' : `scale ${rel}/√d`;
  const head = parts.length ? `${label} (${parts.join(', ')})` : label;
  const gen = GEN_LABEL[inputs.gen] ?? inputs.gen;
  return `${head} · ${gen} seed ${inputs.seed}, n = ${inputs.n}, d = ${inputs.d}, std ${inputs.std}, ${scale}` +
    (knobs.causal ? ', causal' : '');
}

// The numpy body of each variant (docs/variant-formulas.md, with ε and the stabilisers of
// docs/conventions.md): it sets R, the recomputed matrix. In scope: Q, K (n×d, float64), n, d, S (the
// scale), causal, mask, norm(A, eps, clamp) (masked row normalisation), lognorm(L) (row softmax of
// logits with the mask), knob(name) (the request's knob values) and the random matrices the variant
// draws (RANDOM_FILES), loaded from their exported .npy files.
const NUMPY_BODY = {
  softmax: 'R = lognorm(S * Q @ K.T)',
  elu: 'phi = lambda X: np.where(X > 0, X + 1.0, np.exp(np.minimum(X, 0.0)))\nR = norm(phi(Q) @ phi(K).T, 1e-6)',
  relu: 'R = norm(np.maximum(Q, 0) @ np.maximum(K, 0).T, 1e-6)',
  exp: '# φ = exp(x − c): c the query\'s own max, one max over all keys (both cancel; ε = 0)\n' +
    'R = norm(np.exp(Q - Q.max(1, keepdims=True)) @ np.exp(K - K.max()).T, 0.0)',
  efficient: 'rq = np.exp(Q - Q.max(1, keepdims=True)); rq /= rq.sum(1, keepdims=True)\n' +
    'rk = np.exp(K - K.max(0, keepdims=True)); rk /= rk.sum(0, keepdims=True)\nR = rq @ rk.T',
  focused: 'p = knob("p")\ndef phi(X):\n    Y = (np.maximum(X, 0.0) + 1e-6) / np.log(2.0)\n    Yp = Y ** p\n' +
    '    return np.linalg.norm(Y, axis=1, keepdims=True) * Yp / np.linalg.norm(Yp, axis=1, keepdims=True)\n' +
    'R = norm(phi(Q) @ phi(K).T, n * 1e-6)',
  linformer: 'P = lognorm(S * Q @ (E @ K).T)   # n×s: softmax over the s projected keys (no mask)\nR = P @ F',
  performer: 'm, eps = W.shape[0], knob("feature_eps")\n' +
    'def phi(X, own_max):\n    Xs = np.sqrt(S) * X\n    U = Xs @ W.T\n    h = 0.5 * (Xs ** 2).sum(1, keepdims=True)\n' +
    '    c = U.max(1, keepdims=True) if own_max else U.max()   # per query; one max over all keys\n' +
    '    return (np.exp(U - h - c) + eps) / np.sqrt(m)\nR = norm(phi(Q, True) @ phi(K, False).T, 0.0)',
  taylor: 'from math import factorial\nX = S * Q @ K.T\nR = norm(sum(X ** r / factorial(r) for r in range(knob("order") + 1)), 0.0)',
  explimit: 'N = knob("N")\nR = norm((1.0 + S * Q @ K.T / N) ** N, 0.0)',
  hedgehog: 'U, V = Q @ np.eye(d), K @ np.eye(d)   # W: the identity (the page\'s hedgehog)\n' +
    'cq = np.abs(U).max(1, keepdims=True); ck = np.abs(V).max()\n' +
    'R = norm(np.hstack([np.exp(U - cq), np.exp(-U - cq)]) @ np.hstack([np.exp(V - ck), np.exp(-V - ck)]).T, 0.0)',
  cosformer: 'i = np.arange(1, n + 1)\nC = np.cos(np.pi * (i[:, None] - i[None, :]) / (2.0 * n))\n' +
    'R = norm((np.maximum(Q, 0) @ np.maximum(K, 0).T) * C, 0.0, clamp=1e-6)',
  nystrom: 'm, iters = knob("landmarks"), max(knob("iters"), 0)\n' +
    'g = n // m; lengths = [g] * ((g + 1) * m - n) + [g + 1] * (n - g * m)   # segment lengths\n' +
    'P = np.zeros((m, n)); starts = np.cumsum([0] + lengths[:-1])\n' +
    'for t in range(m): P[t, starts[t]:starts[t] + lengths[t]] = 1.0 / lengths[t]\n' +
    'Ql, Kl = P @ Q, P @ K\nsm = lambda X: np.exp(X - X.max(1, keepdims=True)) / np.exp(X - X.max(1, keepdims=True)).sum(1, keepdims=True)\n' +
    'Fm, A, B = sm(S * Q @ Kl.T), sm(S * Ql @ Kl.T), sm(S * Ql @ K.T)\n' +
    'Z, I = A.T / A.sum(0).max(), np.eye(m)\nfor _ in range(iters):\n    AZ = A @ Z\n' +
    '    Z = 0.25 * Z @ (13 * I - AZ @ (15 * I - AZ @ (7 * I - AZ)))\n' +
    'R = lognorm(S * Q @ K.T) if m == n else Fm @ Z @ B',
};
// focused + DWC adds the band T_ij = w[j − i + h] (h = (k − 1)/2) to the focused matrix.
const DWC_BODY = 'h = (len(w) - 1) // 2\nR = R + sum(w[t] * np.eye(n, k=t - h) for t in range(len(w)))';

/**
 * The random matrices a request's variant draws, as [python name, export name, the loader's kind]
 * (web/attnviz.mjs randomMatrix): exported beside Q, K and M so that the snippet recomputes M.
 */
export function randomFiles(request) {
  const k = request.knobs;
  if (k.variant === 'performer') return [['W', 'omega', 'omega']];
  if (k.variant === 'linformer') return [['E', 'E', 'E'], ['F', 'F', 'F']];
  if (k.dwc_kernel > 0) return [['w', 'dwc', 'dwc']];
  return [];
}

/** Whether numpySnippet recomputes this request's matrix (every variant of the registry does). */
export function snippetRecomputes(request) {
  return Object.hasOwn(NUMPY_BODY, request.knobs.variant);
}

/**
 * A short Python script that loads the exported Q, K and M (and the random matrices of randomFiles; file
 * names as exportName gives them, in the script's folder), recomputes M with numpy in float64 and prints
 * the largest |difference|. For a variant it does not know it prints the CLI commands that reproduce M.
 * @param {{state: object, request: object}} arg the page's state (URL keys) and requestOf(state)
 */
export function numpySnippet({ state, request }) {
  const { inputs, knobs } = request;
  const f = (what) => JSON.stringify(exportName(state, what, 'npy'));
  const py = (v) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : typeof v === 'number' ? String(v) : JSON.stringify(v));
  const knobDict = Object.entries(knobs).filter(([k]) => k !== 'variant').map(([k, v]) => `${JSON.stringify(k)}: ${py(v)}`).join(', ');
  const lines = [
    `# attnviz export: ${knobs.variant}, n = ${inputs.n}, d = ${inputs.d}. Recomputes M from the exported Q, K`,
    '# (and random matrices) in float64 and prints how far the exported float32 M is from it.',
    'import os, numpy as np',
    'here = os.path.dirname(os.path.abspath(__file__))',
    'load = lambda name: np.load(os.path.join(here, name)).astype(np.float64)',
    `Q, K, M = load(${f('Q')}), load(${f('K')}), load(${f('M')})`,
    `knobs = {${knobDict}}`,
    'knob = knobs.__getitem__',
    'n, d = Q.shape',
    'S, causal = knob("scale"), knob("causal")',
    'mask = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)',
    'def norm(A, eps, clamp=None):',
    '    A = np.where(mask, A, 0.0)',
    '    s = A.sum(1, keepdims=True)',
    '    return A / (np.maximum(s, clamp) if clamp is not None else s + eps)',
    'def lognorm(L):',
    '    L = np.where(mask[:, :L.shape[1]], L, -np.inf)',
    '    E = np.exp(L - L.max(1, keepdims=True))',
    '    return E / E.sum(1, keepdims=True)',
  ];
  for (const [name, what] of randomFiles(request)) lines.push(`${name} = load(${f(what)})`);
  if (snippetRecomputes(request)) {
    lines.push(NUMPY_BODY[knobs.variant]);
    if (knobs.dwc_kernel > 0) lines.push(DWC_BODY);
    lines.push('print("max |numpy - exported M| =", float(np.abs(R - M).max()))');
  } else {
    lines.push(
      `# ${knobs.variant}: not known to this script; the CLI reproduces M:`,
      `#   attnviz generate --gen ${inputs.gen} --n ${inputs.n} --d ${inputs.d} --std ${inputs.std} --seed ${inputs.seed} -o qkv`,
      `#   attnviz matrix --variant ${knobs.variant} --q qkv/q.npy --k qkv/k.npy -o m.npy`,
      'print("M:", M.shape, "row sums within", float(np.abs(M.sum(1) - 1).max()), "of 1")');
  }
  return lines.join('\n') + '\n';
}

/** Text for XML content and attribute values: & < > " ' escaped. */
export function escapeXml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

/**
 * A heatmap figure as SVG: the heatmap as an embedded PNG at its cell resolution, drawn pixelated; a
 * vector colour bar (the 256-entry colour table as 256 rects, top = the table's last colour) with tick
 * labels; the axis labels; the caption under the figure.
 * @param {{png: string, cells: number, table: Uint8Array, ticks: {value: number, text: string}[],
 *   lo: number, hi: number, title: string, caption: string, size?: number}} fig
 *   png: a data:image/png;base64 URL of the cells×cells heatmap; table: colorTable(name) (RGBA × 256)
 */
export function heatmapSvg({ png, cells, table, ticks, lo, hi, title, caption, size = 384 }) {
  if (!/^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(png)) throw new Error('heatmapSvg: png must be a base64 PNG data URL');
  const left = 48, top = 28, barX = left + size + 16, barW = 16, w = barX + barW + 64, h = top + size + 56;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="DejaVu Sans, sans-serif" font-size="12">`,
    `<rect width="${w}" height="${h}" fill="#ffffff"/>`,
    `<text x="${left}" y="18" font-weight="bold">${escapeXml(title)}</text>`,
    `<image x="${left}" y="${top}" width="${size}" height="${size}" preserveAspectRatio="none" style="image-rendering: pixelated" href="${png}" data-cells="${cells}"/>`,
    `<rect x="${left}" y="${top}" width="${size}" height="${size}" fill="none" stroke="#000000" stroke-width="0.5"/>`,
    `<text x="${left + size / 2}" y="${top + size + 16}" text-anchor="middle">key j</text>`,
    `<text transform="translate(${left - 10} ${top + size / 2}) rotate(-90)" text-anchor="middle">query i</text>`,
  ];
  const step = size / 256;
  for (let i = 0; i < 256; i++) {
    const c = 255 - i;   // top of the bar: the table's last (highest) colour
    const rgb = `rgb(${table[4 * c]},${table[4 * c + 1]},${table[4 * c + 2]})`;
    out.push(`<rect x="${barX}" y="${(top + i * step).toFixed(3)}" width="${barW}" height="${(step + 0.05).toFixed(3)}" fill="${rgb}"/>`);
  }
  for (const t of ticks) {
    if (!(hi > lo) || t.value < lo || t.value > hi) continue;
    const y = top + size * (1 - (t.value - lo) / (hi - lo));
    out.push(`<line x1="${barX + barW}" x2="${barX + barW + 4}" y1="${y.toFixed(2)}" y2="${y.toFixed(2)}" stroke="#000000"/>`,
      `<text x="${barX + barW + 6}" y="${(y + 4).toFixed(2)}">${escapeXml(t.text)}</text>`);
  }
  out.push(`<text x="${left}" y="${top + size + 40}" font-size="11">${escapeXml(caption)}</text>`, '</svg>');
  return out.join('\n') + '\n';
}
