// engine.mjs: the compute layer shared by the page (small n) and the workers. It owns one lab of
// web/wasm/attnviz.mjs and recomputes only what a request invalidates: inputs (generator, seed, n, d, std) →
// softmax reference (scale, causal) → the variant's matrix (its knobs). A request is what state.mjs's
// requestOf gives: {inputs: {gen, seed, n, d, std}, knobs (the registry's keys, as the loader takes
// them), tau, ds}; the engine never sees the page's state. No DOM, no renderer. Results are plain
// objects of typed arrays, ready to post to the page.
import { randomFiles } from './random-draws.mjs';
import { gateArrays } from './gate-files.mjs';
import { blockSize } from './downsample.mjs';
import { SPECTRAL_KEYS, spectralReadouts } from './spectral.mjs';
import { topSingularValues } from './topk.mjs';
import { uniformEntropy } from './entropy-baseline.mjs';
import { clampZoom, windowCells } from './zoom-window.mjs';
import { applyGates, draftGates, gatesInputsKey, gatesSummary } from './gates.mjs';

/**
 * Largest n whose heatmaps and plain readouts the page computes itself, in the commit of the input's
 * frame (a few milliseconds); above it the frame worker computes the heatmaps (up to
 * FRAME_WORKER_MAX_N) and the spectrum worker the readouts, so no frame holds tens of milliseconds.
 */
export const MAIN_THREAD_MAX_N = 384;
/**
 * Largest n whose full heatmaps follow a drag (the frame worker computes them at every n above
 * MAIN_THREAD_MAX_N). Above it a drag shows a quick frame (Engine.quickFrame: block means from the
 * factors, exact, or a draft) and the full matrix comes on release.
 */
export const FRAME_WORKER_MAX_N = 1024;
/** Tokens of a draft: a variant without factors is drawn, while dragging above FRAME_WORKER_MAX_N, on every s-th token. */
export const DRAFT_N = 1024;
/** Bins of the row-entropy histogram over [0, ln n]. */
const ENTROPY_BINS = 24;
/** Largest n for the full O(n³) spectrum (fast route while dragging up to FULL_DRAG_MAX_N). */
const FULL_MAX_N = 2048;
const FULL_DRAG_MAX_N = 1024;
/** Cells per heatmap side: larger n is downsampled by blocks. */
const HEATMAP_CAP = 256;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * The key of a request's inputs: Q, K, V are recomputed when it changes. Inputs are synthetic
 * {gen, seed, n, d, std}, or one head of loaded tensors {tensors: their key, layer, head, n, d}
 * (Engine.setTensors: a real model's capture, or the user's own Q, K, V).
 */
const inputsKey = (i) => (i.tensors ? `tensors|${i.tensors}|${i.layer}|${i.head}|${i.n}|${i.d}` : `${i.gen}|${i.seed}|${i.n}|${i.d}|${i.std}`);

/**
 * The key of an overlay spectrum ('S' QKᵀ, 'E' exp(QKᵀ), 'A' softmax) for a request: it depends on the
 * inputs and the scale (and the mask, for A) only, never on the variant's knobs.
 */
export function overlayKey(req, which) {
  const { knobs, inputs } = req;
  return `${inputsKey(inputs)}|${knobs.scale}|${which === 'A' ? knobs.causal : ''}|${inputs.n > FULL_DRAG_MAX_N ? 'topk' : 'full'}`;
}

/**
 * The share of keys a feature ε swamps: keys whose every exponential term is below ε, so that each of
 * their features is at most 2ε·r^{−1/2} (Performer's φ(k) = r^{−1/2}(e^{ω·k′ − ‖k′‖²/2 − c} + ε), c the
 * global key stabiliser). Such keys get nearly the same weight from every query whatever their scores.
 * PhiK: n×r, row-major. Returns {keys, n, fraction}.
 */
export function swampedKeys(PhiK, n, r, eps) {
  const lim = (2 * eps) / Math.sqrt(r);
  let keys = 0;
  for (let j = 0; j < n; j++) {
    let top = 0;
    for (let f = j * r, end = f + r; f < end; f++) if (PhiK[f] > top) top = PhiK[f];
    if (top < lim) keys += 1;
  }
  return { keys, n, fraction: n ? keys / n : 0 };
}

/** Rows of the per-channel gate image: more channels are averaged in blocks. */
const STRIP_ROWS = 64;

/**
 * The per-channel gates as an image for the strip: α = exp(g) averaged over blocks of channels (at most
 * STRIP_ROWS rows) and of tokens (at most HEATMAP_CAP columns, the heatmap's blocks): {rows, cols, cb, tb, data}
 * (rows×cols, row = channel block), or null for one gate per token.
 */
export function channelImage(g, n, channels) {
  if (!g || channels <= 1) return null;
  const tb = blockSize(n, HEATMAP_CAP), cb = Math.ceil(channels / STRIP_ROWS);
  const cols = Math.ceil(n / tb), rows = Math.ceil(channels / cb), data = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let sum = 0, count = 0;
      for (let ch = r * cb; ch < Math.min(channels, (r + 1) * cb); ch++) {
        for (let t = c * tb; t < Math.min(n, (c + 1) * tb); t++) { sum += Math.exp(g[t * channels + ch]); count += 1; }
      }
      data[r * cols + c] = sum / count;
    }
  }
  return { rows, cols, cb, tb, data };
}

export class Engine {
  /** @param {object} av the object loadAttnviz() returns */
  constructor(av) {
    this.av = av;
    this.lab = null;
    this.keys = { inputs: null, ref: null, matrix: null, gates: null };
    this.status = { inputs: null, ref: null, matrix: null, gates: null };
    this.overlay = new Map(); // 'S' | 'E' | 'A' → {key, sv, floor, partial, fro2}
    this.tensorSets = new Map(); // key → tensors (setTensors): a real model's capture, the reader's own Q, K, V
  }

  /**
   * Bring Q/K/V (always), A (need.ref) and M (need.matrix) up to date with the request. The worker's
   * spectrum by the factor route needs neither A nor M.
   */
  ensure(req, need = { ref: true, matrix: true }) {
    const { inputs: { gen, seed, n, d, std }, knobs } = req;
    if (!this.lab || this.lab.n !== n || this.lab.d !== d) {
      this.lab?.free();
      this.lab = this.av.lab(n, d, d);
      this.keys = { inputs: null, ref: null, matrix: null, gates: null };
    }
    const inKey = inputsKey(req.inputs) + gatesInputsKey(req.gates);
    if (this.keys.inputs !== inKey) {
      this.status.inputs = req.inputs.tensors ? this.loadHead(req.inputs) : this.lab.generate(gen, std, seed);
      this.keys = { inputs: inKey, ref: null, matrix: null, gates: null };
      this.overlay.clear();
    }
    if (this.status.inputs?.status < 0) { // no inputs: nothing computed from stale ones
      this.status.ref = this.status.matrix = this.status.gates = this.status.inputs;
      this.keys.ref = this.keys.matrix = null;
      return;
    }
    // the gates right after the inputs (Mamba-2's scale K, which the reference reads): the lab keeps them, and
    // every later call of a gated variant reads them (lab.applyKnobs)
    const gKey = JSON.stringify(req.gates ?? null);
    if (this.keys.gates !== gKey) {
      const own = req.inputs.tensors ? this.tensorSets.get(req.inputs.tensors)?.gates ?? null : null;
      const r = applyGates(this.lab, req.gates ?? null, own);
      this.status.gates = r.status < 0 ? { status: r.status, message: `the gates: ${r.message}` } : r;
      this.keys.gates = gKey;
      this.keys.matrix = null;
      this.gatesView = null;
    }
    const refKey = `${knobs.scale}|${knobs.causal}`;
    if (need.ref && this.keys.ref !== refKey) {
      this.status.ref = this.lab.reference(knobs);
      this.keys.ref = refKey;
    }
    const mKey = `${JSON.stringify(knobs)}|${gKey}`;
    if (need.matrix && this.keys.matrix !== mKey) {
      this.status.matrix = this.status.gates.status < 0 ? this.status.gates : this.lab.matrix(knobs);
      this.keys.matrix = mKey;
    }
  }

  /**
   * The gates of the request as the gate strip shows them and snapshot() carries them (compute/gates.mjs
   * gatesSummary), with the per-channel gates as at most STRIP_ROWS × HEATMAP_CAP block means of α: null for
   * a variant outside the gated families or gates that could not be made (the matrix's status says why).
   */
  gates(req) {
    if (!req.gates) return null;
    this.ensure(req, { ref: false, matrix: false });
    if (this.status.gates?.status < 0) return null;
    const key = `${this.keys.inputs}|${this.keys.gates}`;
    if (this.gatesView?.key !== key) {
      const sum = gatesSummary(this.lab.gates(), req.gates, this.lab.n);
      if (sum) sum.image = channelImage(sum.g, sum.n, sum.channels);
      if (sum) delete sum.g; // n×channels: the image stands for it
      this.gatesView = { key, value: sum };
    }
    return this.gatesView.value;
  }

  /**
   * Tensors that requests may name instead of a generator: {key, Q, K, V (Float32Arrays), layers, heads,
   * kvHeads, n, d}, Q (layers, heads, n, d), K and V (layers, kvHeads, n, d), row-major (2-D Q, K, V are
   * layers = heads = kvHeads = 1). A request names them by key (a key's tensors never change: new ones
   * come with a new key).
   */
  setTensors(t) {
    // a model's newest capture and the reader's own files may both be named by requests: keep the newest few
    this.tensorSets.delete(t.key);
    this.tensorSets.set(t.key, t);
    while (this.tensorSets.size > 3) this.tensorSets.delete(this.tensorSets.keys().next().value);
  }

  /** Q, K, V of one head of the loaded tensors into the lab (query head h reads KV head ⌊h·kvHeads/heads⌋). */
  loadHead({ tensors, layer, head, n, d }) {
    const t = this.tensorSets.get(tensors);
    const fail = (message) => ({ status: this.av.STATUS.ERR_SIZE, message });
    if (!t) return fail('those tensors are not loaded here');
    if (t.n !== n || t.d !== d) return fail(`the tensors are ${t.n}×${t.d}, the request ${n}×${d}`);
    if (!(layer >= 0 && layer < t.layers && head >= 0 && head < t.heads)) return fail(`layer ${layer}, head ${head}: the tensors have ${t.layers} layers of ${t.heads} heads`);
    const kvh = Math.floor((head * t.kvHeads) / t.heads), size = n * d;
    const q0 = (layer * t.heads + head) * size, k0 = (layer * t.kvHeads + kvh) * size;
    this.lab.Q.set(t.Q.subarray(q0, q0 + size));
    this.lab.K.set(t.K.subarray(k0, k0 + size));
    this.lab.V.set(t.V.subarray(k0, k0 + size));
    return { status: this.av.STATUS.OK, message: 'ok' };
  }

  /**
   * Readouts that need no spectrum (the spectral keys are left out), with the row-entropy histograms
   * of M and of the softmax A (`entropy_hist`; A's is kept while the inputs, scale and mask stay).
   */
  plainReadouts(req) {
    this.ensure(req);
    const lab = this.lab;
    if (this.status.matrix?.status < 0) return {};
    // the reference's share of the readouts (A·V, Σ a ln a) is kept while the inputs, scale and mask stay
    const r = lab.readouts(req.knobs, { sv: null, reference: false, tau: req.tau, rows: true, summary: `${this.keys.inputs}|${this.keys.ref}` });
    const out = {};
    for (const [k, v] of Object.entries(r)) {
      if (k === 'singular_values' || SPECTRAL_KEYS.some((s) => k === s || k === `${s}_reason`)) continue;
      out[k] = v;
    }
    out.entropy_hist = this.entropyHistograms(req, out.row_entropy_mean);
    return out;
  }

  /**
   * Row-entropy histograms {bins, top: ln n (the axis), uniform (the baseline, entropy-baseline.mjs),
   * M: {counts, left, status, message, mean}, A: {…}|null}: M's each time, A's cached per inputs, scale
   * and mask (its mean from the library's readouts of A).
   */
  entropyHistograms(req, meanM, bins = ENTROPY_BINS) {
    const lab = this.lab, causal = req.knobs.causal;
    // M's from the row entropies plainReadouts' readouts kept (no second pass over M), else its own pass
    const kept = lab.rowsRead?.of === 'M' && lab.rowsRead.causal === !!causal ? lab.rowEntropyHistogram(bins) : null;
    const { of: _of, causal: _causal, ...fromRows } = kept ?? {};
    const M = { ...(kept ? fromRows : lab.entropyHistogram('M', bins, causal)), mean: meanM ?? null };
    const aKey = `${this.keys.inputs}|${this.keys.ref}|${bins}`;
    if (this.aHist?.key !== aKey) {
      let A = null;
      if (this.status.ref?.status >= 0) {
        const h = lab.entropyHistogram('A', bins, causal);
        const ra = lab.readouts({ causal }, { of: 'A', sv: null, tau: req.tau });
        A = { ...h, mean: ra.row_entropy_mean };
      }
      this.aHist = { key: aKey, A };
    }
    return { bins, top: M.top, uniform: uniformEntropy(req.inputs.n, causal), M, A: this.aHist.A };
  }

  /**
   * Everything the heatmaps and the non-spectral readouts need: downsampled M, A and M − A
   * (Float32Arrays of size×size), the block size, readouts, cost, statuses. `aKey` names A's cells (the
   * same key, the same cells: the worker sends them once per key). `cells(len)`: a recycled Float32Array
   * of len cells for M or M − A to be written into, or undefined (then new ones).
   */
  frame(req, { readouts: withReadouts = true, cells = null } = {}) {
    const t0 = now();
    this.ensure(req);
    const n = req.inputs.n, ds = req.ds, b = blockSize(n, HEATMAP_CAP), size = Math.ceil(n / b);
    const mStatus = this.status.matrix;
    const ok = mStatus.status >= 0 && this.status.ref.status >= 0;
    const lab = this.lab;
    const M = ok ? lab.downsample('M', b, ds, cells?.(size * size)) : null;
    // A changes only with the inputs, scale and mask: its downsampled copy is kept between frames
    const aKey = `${this.keys.inputs}|${this.keys.ref}|${b}|${ds}`;
    if (this.aCache?.key !== aKey) this.aCache = { key: aKey, A: this.status.ref.status >= 0 ? lab.downsample('A', b, ds) : null };
    const A = this.aCache.A;
    const D = ok ? lab.downsample('M-A', b, ds, cells?.(size * size)) : null; // of the entries' differences, not of the rounded cells
    const readouts = ok && withReadouts ? this.plainReadouts(req) : null;
    const softmaxCost = this.softmaxCost(); // the cost line's other side (render/readouts.mjs costLine)
    const cost = lab.cost(req.knobs), costFeatureDim = this.uncountedFeatureDim(req.knobs, cost);
    const semiCeiling = lab.semiseparableCeiling(req.knobs).r; // the semiseparable rank's structural bound
    return {
      size, b, n, mode: ds, M, A, aKey, D, readouts, cost, costFeatureDim, softmaxCost, semiCeiling, swamped: ok ? this.swamped(req) : null,
      gates: this.gates(req),
      status: { matrix: mStatus, ref: this.status.ref, inputs: this.status.inputs },
      ms: { total: now() - t0 },
    };
  }

  /** Softmax's cost counts at the lab's n, d, dv: the quadratic path every linear path is weighed against. */
  softmaxCost() { return this.lab.cost({ variant: this.lab.av.referenceVariant }); }

  /** The feature dimension when the cost model left the linear path uncounted because it is above the
   * counting limit (av_cost_path: max_feature_dim), else null: the cost line then says why it has no number. */
  uncountedFeatureDim(knobs, cost) {
    if (!cost || cost.linear_madds != null) return null;
    const f = this.lab.featureDim(knobs), max = this.lab.av.registry.limits.max_feature_dim;
    return f.r != null && f.r > max ? f.r : null;
  }

  /**
   * The heatmaps of a drag above FRAME_WORKER_MAX_N, without the n×n matrix (docs/page.md, "Large n"):
   * M's cells are the block means of L·Rᵀ from the variant's factors (av_lowrank_block_mean, exact for
   * the mean downsample: `quick: 'factors'`), or else a draft (`quick: 'draft'`, draftCells). A's cells
   * are the full reference's when it is cached for these inputs, scale and mask, else a draft as well.
   * No readouts: they follow on release. Same shape as frame().
   */
  quickFrame(req) {
    const t0 = now();
    this.ensure(req, { ref: false, matrix: false });
    const n = req.inputs.n, ds = req.ds, b = blockSize(n, HEATMAP_CAP);
    const cost = this.lab.cost(req.knobs);
    const base = { n, mode: ds, readouts: null, softmaxCost: this.softmaxCost(), cost, costFeatureDim: this.uncountedFeatureDim(req.knobs, cost), semiCeiling: this.lab.semiseparableCeiling(req.knobs).r, swamped: null, gates: this.gates(req) };
    if (this.status.inputs?.status < 0) return { ...base, size: 0, b, M: null, A: null, D: null, quick: null, status: { matrix: this.status.inputs, ref: this.status.inputs, inputs: this.status.inputs }, ms: { total: now() - t0 } };
    let cells = null, quick = 'factors', mStatus = null;
    if (ds === 'mean') {
      const f = this.lab.factorBlockMean(req.knobs, b);
      if (f?.M) { cells = { M: f.M, size: f.size, b }; mStatus = { status: f.status, message: f.message }; }
    }
    if (!cells) {
      quick = 'draft';
      const dr = this.draftCells(req, req.knobs, b);
      mStatus = dr.status;
      cells = dr.cells;
    }
    // A: the full reference's cells when current (ensure's key), else a draft of the softmax reference
    const aKey = `${this.keys.inputs}|${req.knobs.scale}|${req.knobs.causal}|${b}|${ds}`;
    let A = null, cachedA = null;
    if (this.aCache?.key === aKey) { A = this.aCache.A; cachedA = aKey; }
    else if (cells) {
      const ref = this.draftCells(req, { variant: 'softmax', scale: req.knobs.scale, causal: req.knobs.causal }, b);
      if (ref.cells?.size === cells.size) A = ref.cells.M;
    }
    const M = cells?.M ?? null;
    let D = null;
    if (M && A && A.length === M.length) { D = new Float32Array(M.length); for (let i = 0; i < D.length; i++) D[i] = M[i] - A[i]; }
    const ok = { status: 0, message: 'ok' };
    return {
      ...base, size: cells?.size ?? 0, b: cells?.b ?? b, M, A, aKey: cachedA, D, quick, draftStride: quick === 'draft' ? this.draftStride(n) : null,
      status: { matrix: mStatus ?? ok, ref: ok, inputs: this.status.inputs }, ms: { total: now() - t0 },
    };
  }

  /** The token stride of a draft at n: every s-th token, about DRAFT_N of them. */
  draftStride(n) { return Math.max(1, Math.ceil(n / DRAFT_N)); }

  /**
   * A draft of the variant's heatmap: the variant on every s-th token (s = draftStride(n)), with its
   * positional knobs carried over in tokens of the full sequence (decay γ → γ^s, window w → ⌈w/s⌉), its
   * rows rescaled by 1/s where they sum to one (each drafted key stands for s keys), downsampled to about
   * the full frame's cells. {cells: {M, size, b}, status} or {cells: null, status} when it fails.
   */
  draftCells(req, knobs, b) {
    const n = req.inputs.n, d = req.inputs.d, s = this.draftStride(n), nd = Math.ceil(n / s);
    if (!this.draftLab || this.draftLab.n !== nd || this.draftLab.d !== d || this.draftLab.dv !== this.lab.dv) {
      this.draftLab?.free();
      this.draftLab = this.av.lab(nd, d, this.lab.dv);
      this.draftKey = null;
    }
    const dl = this.draftLab;
    if (this.draftKey !== this.keys.inputs) { // the inputs' every s-th row
      const Q = this.lab.Q, K = this.lab.K, V = this.lab.V, dQ = dl.Q, dK = dl.K, dV = dl.V, dv = this.lab.dv;
      for (let i = 0; i < nd; i++) {
        dQ.set(Q.subarray(i * s * d, (i * s + 1) * d), i * d);
        dK.set(K.subarray(i * s * d, (i * s + 1) * d), i * d);
        dV.set(V.subarray(i * s * dv, (i * s + 1) * dv), i * dv);
      }
      this.draftKey = this.keys.inputs;
      this.draftGatesKey = null;
    }
    // the draft's gates: each drafted token's log-gate sums those of the tokens it stands for (gates.mjs draftGates)
    const gKey = req.gates ? this.keys.gates : null; // (the softmax reference's draft ignores them)
    if (this.draftGatesKey !== gKey) {
      dl.setGates(gKey ? draftGates(this.lab.gates(), n, s, d) : null);
      this.draftGatesKey = gKey;
    }
    const k = { ...knobs };
    if (k.decay !== undefined && k.decay < 1) k.decay **= s;
    if (k.window > 0) k.window = Math.max(1, Math.ceil(k.window / s));
    const st = dl.matrix(k);
    if (st.status < 0) return { cells: null, status: st };
    const cls = this.av.variant(k.variant ?? 'softmax').class;
    const bd = Math.max(1, Math.round(b / s)), M = dl.downsample('M', bd, req.ds);
    if (!M) return { cells: null, status: { status: this.av.STATUS.ERR_TOO_LARGE, message: this.av.statusString(this.av.STATUS.ERR_TOO_LARGE) } };
    if (['exact', 'kernel', 'closed_form'].includes(cls) && s > 1) for (let i = 0; i < M.length; i++) M[i] /= s;
    return { cells: { M, size: Math.ceil(nd / bd), b: bd * s }, status: st };
  }

  /**
   * For a variant with a feature ε (the knob feature_eps, > 0): how many keys it swamps (swampedKeys),
   * kept while the inputs and knobs stay; else null.
   */
  swamped(req) {
    const eps = req.knobs.feature_eps;
    if (!(eps > 0)) return null;
    const key = `${this.keys.inputs}|${JSON.stringify(req.knobs)}`;
    if (this.swampMemo?.key !== key) {
      const f = this.lab.features(req.knobs);
      this.swampMemo = { key, value: f.PhiK ? { ...swampedKeys(f.PhiK, req.inputs.n, f.r, eps), eps } : null };
    }
    return this.swampMemo.value;
  }

  /**
   * Full-resolution arrays for an export (web/io/export.mjs): Q, K, V (n×d), M and the softmax A (n×n), the
   * random matrices the variant draws (random-draws.mjs randomFiles: Performer's ω, Linformer's E and F, the
   * DWC kernel) and the gates a gated family reads (gate-files.mjs gateArrays), each {what, data (a copy),
   * shape}. {files} or {error} (the library's message).
   */
  exportArrays(req) {
    this.ensure(req);
    const { n, d } = req.inputs, lab = this.lab;
    for (const part of ['inputs', 'ref', 'gates', 'matrix']) {
      const s = this.status[part];
      if (s?.status < 0) return { error: part === 'gates' ? s.message : `${part === 'ref' ? 'the softmax reference' : part === 'matrix' ? 'the matrix' : 'the inputs'}: ${s.message}` };
    }
    const files = [
      { what: 'Q', data: lab.Q.slice(), shape: [n, d] },
      { what: 'K', data: lab.K.slice(), shape: [n, d] },
      { what: 'V', data: lab.V.slice(), shape: [n, lab.dv] },
      { what: 'M', data: lab.M.slice(), shape: [n, n] },
      { what: 'A', data: lab.A.slice(), shape: [n, n] },
    ];
    // the gates the matrix was computed with (docs/gated.md): log-gates (n) or (n, channels), β (n), dplr's a, b
    const held = req.gates ? lab.gates() : null;
    if (held?.g) files.push({ what: 'gates', data: held.g, shape: held.channels > 1 ? [n, held.channels] : [n] });
    if (held?.beta) files.push({ what: 'betas', data: held.beta, shape: [n] });
    if (held?.a) files.push({ what: 'a', data: held.a, shape: [n, d] }, { what: 'b', data: held.b, shape: [n, d] });
    for (const [, what, kind] of randomFiles(req)) {
      const r = lab.randomMatrix(kind, req.knobs);
      if (!r.data) return { error: `the random matrix ${what}: ${r.message}` };
      files.push({ what, data: r.data, shape: kind === 'dwc' ? [r.cols] : [r.rows, r.cols] });
    }
    // every gate the family reads, last and in its order (gate-files.mjs): as the lab held it, or where the library
    // took its constant case (no array: g = ln decay, η = beta, a = b = 0) written out as the arrays it stands for
    const gates = gateArrays(req).map((c) => files.find((f) => f.what === c.what) ?? c);
    for (const g of gates) if (files.includes(g)) files.splice(files.indexOf(g), 1);
    files.push(...gates);
    return { files };
  }

  /**
   * One head at a glance, for the overview of every layer and head (web/ui/overview.mjs): the readouts it
   * may colour a cell by (state/overview-metrics.mjs OVERVIEW_METRICS), each null with its reason when undefined:
   * {values, reasons} or {error}.
   */
  headSummary(req) {
    this.ensure(req);
    const st = this.status.matrix;
    if (st?.status < 0) return { error: st.message };
    const n = req.inputs.n;
    const r = this.lab.readouts(req.knobs, { route: 'fast', tau: req.tau });
    const values = {}, reasons = {};
    for (const k of ['error_fro_rel', 'row_kl_mean', 'output_error_rel', 'effective_rank', 'semiseparable_rank']) {
      values[k] = r[k] ?? null;
      if (values[k] === null) reasons[k] = r[`${k}_reason`] ?? 'not computed';
    }
    // over the one uniform baseline (entropy-baseline.mjs), as the readout row "row entropy / uniform"
    values.row_entropy = r.row_entropy_mean === null ? null : r.row_entropy_mean / uniformEntropy(n, req.knobs.causal);
    if (values.row_entropy === null) reasons.row_entropy = r.row_entropy_mean_reason ?? 'not computed';
    return { values, reasons };
  }

  /**
   * The zoom window of M, A and M − A (a `zoom=` value, web/state/tokens.mjs), cut from the full n×n matrices
   * at full resolution (by blocks within the window only when a side exceeds HEATMAP_CAP tokens), never
   * from the downsampled heatmap: {zoom: {r0, r1, c0, c1}, rows, cols, b, M, A, D} or null (no window).
   */
  window(req, zoom) {
    const z = clampZoom(zoom, req.inputs.n);
    if (!z) return null;
    this.ensure(req);
    const ok = (s) => s?.status >= 0;
    const w = windowCells(ok(this.status.matrix) ? this.lab.M : null, ok(this.status.ref) ? this.lab.A : null, this.lab.n, z, HEATMAP_CAP, req.ds);
    return { zoom: z, ...w };
  }

  /**
   * Row `i` of M and of the softmax reference A for a request (the single-row view, web/ui/row-view.mjs):
   * {i, n, causal, M, A}, float32 copies of the full rows (never heatmap cells); M or A is null, with its
   * reason in `mReason`/`aReason`, when it could not be computed.
   */
  row(req, i) {
    this.ensure(req);
    const n = this.lab.n;
    if (!(Number.isInteger(i) && i >= 0 && i < n)) throw new RangeError(`row ${i} is outside 0…${n - 1}`);
    const cut = (which, st) => (st?.status >= 0 ? this.lab[which].slice(i * n, (i + 1) * n) : null);
    const M = cut('M', this.status.matrix), A = cut('A', this.status.ref);
    return { i, n, causal: !!req.knobs.causal, M, A, mReason: M ? null : this.status.matrix?.message ?? 'not computed', aReason: A ? null : this.status.ref?.message ?? 'not computed' };
  }

  /** The exact value of M and A at (row, col), when this engine holds them. */
  valueAt(row, col) {
    const lab = this.lab;
    if (!lab || row >= lab.n || col >= lab.n) return null;
    return { M: lab.M[row * lab.n + col], A: lab.A[row * lab.n + col] };
  }

  /**
   * Singular values of one matrix held in the lab ('M' | 'A' | 'S'): the factor route where the
   * variant has low-rank factors, the full route where n allows, else the top k by randomized
   * iteration. Returns {sv, floor, partial, route, fro2, sigma1Upper} (the last two for the top k only).
   */
  singularValues(which, req, drag, k = 48, topk = false) {
    const n = req.inputs.n;
    if (which === 'M') {
      const knobs = req.knobs;
      this.ensure(req, { ref: false, matrix: false });
      const fr = knobs.causal ? null : this.lab.featureDim(knobs, true);
      if (fr && fr.status === 0 && fr.r > 0 && fr.r <= Math.max(64, n / 2)) {
        const f = this.lab.factorSpectrum(knobs);
        if (f && f.status >= 0) return { sv: f.sv, floor: f.floor, partial: false, route: `factors (r = ${f.r})`, factorRank: f.r };
      }
      this.ensure(req); // no factors: the route reads M
      if (this.status.matrix.status < 0) return null;
    }
    const lab = this.lab;
    const fullOk = !topk && (drag ? n <= FULL_DRAG_MAX_N : n <= FULL_MAX_N);
    if (fullOk) {
      const route = !drag && n <= 1024 ? 'accurate' : 'fast';
      const s = lab.spectrum(which === 'E' ? 'S' : which, route);
      // a failed route (M holds Inf/NaN after an overflow) gives no σ: the readouts then say why
      return { sv: s.sv, floor: s.floor, partial: false, route, status: s.status, message: s.message };
    }
    const view = which === 'M' ? lab.M : which === 'A' ? lab.A : lab.S; // 'S' and 'E' share the S buffer
    const t = topSingularValues(view, n, drag ? Math.min(k, 24) : Math.min(k, 32), drag || n > FULL_MAX_N ? 0 : 1);
    return { sv: t.sv, floor: t.sv[0] * 1e-7, partial: true, route: `top ${t.sv.length} (randomized)`, fro2: t.fro2, sigma1Upper: t.sigma1Upper };
  }

  /**
   * The variant's spectrum and the readouts that need it. Those depend on σ alone, so they are
   * computed here from σ (web/compute/spectral.mjs, the definitions of docs/readouts.md) rather than by the
   * library's av_readouts, which would re-read all n² entries of M for the plain readouts too.
   * `ceiling`: the rank bound of the variant's factors (av_factor_rank, at most n), or null.
   */
  spectrum(req, drag) { // the factor route needs neither M nor A: they are computed only when read
    const t0 = now();
    const s = this.singularValues('M', req, drag);
    if (!s) return null;
    const n = req.inputs.n;
    const readouts = spectralReadouts(s.sv, s.floor, n, { partial: s.partial, fro2: s.fro2 ?? null,
      sigma1Upper: s.sigma1Upper ?? null, reason: s.sv ? undefined : `no spectrum: ${s.message}` });
    const fr = this.lab.featureDim(req.knobs, true);
    const ceiling = fr.r === null ? null : Math.min(fr.r, n);
    if (s.sv && !s.partial) this.semiseparable(req, drag, s, readouts);
    else if (s.sv) readouts.semiseparable_rank_reason = `not computed above n = ${FULL_MAX_N}`;
    return { ...s, readouts, ceiling, ms: now() - t0 };
  }

  /**
   * semiseparable_rank into readouts: the rank of M's block M[h:n, 0:h] (an SVD of size n/2, an eighth of
   * the full one), at the rank readout's tolerance from M's spectrum s; while dragging only up to n = 512.
   */
  semiseparable(req, drag, s, readouts) {
    const n = req.inputs.n;
    if (n < 2) { readouts.semiseparable_rank_reason = 'needs n ≥ 2'; return; }
    if (drag && n > 512) { readouts.semiseparable_rank_reason = 'computed when the drag ends'; return; }
    this.ensure(req); // the factor route leaves M uncomputed
    if (this.status.matrix?.status < 0) return;
    const r = this.lab.semiseparable(s.sv[0], s.floor, !drag && n <= 1024 ? 'accurate' : 'fast');
    if (r.rank === null) readouts.semiseparable_rank_reason = r.message;
    else { readouts.semiseparable_rank = r.rank; delete readouts.semiseparable_rank_reason; }
  }

  /** The cached overlay spectrum for this request, or null. */
  cachedOverlay(req, which) {
    const hit = this.overlay.get(which);
    return hit && hit.key === overlayKey(req, which) ? hit : null;
  }

  /** Overlay spectra (QKᵀ, exp(QKᵀ), softmax A), cached per inputs and scale. `which` one of them. */
  overlaySpectrum(req, which, drag) {
    const { knobs, inputs: { n } } = req;
    const hit = this.cachedOverlay(req, which);
    if (hit) return hit;
    const key = overlayKey(req, which);
    this.ensure(req, { ref: which === 'A', matrix: false });
    const big = n > FULL_DRAG_MAX_N;
    if (which === 'S') { // exact at every n by the factor route: σ(scale·Q·Kᵀ), rank ≤ d
      const s = this.lab.scoresSpectrum(knobs.scale);
      if (s.sv) {
        const out = { key, sv: s.sv, floor: s.floor, partial: false, route: `factors (r = ${s.r})` };
        this.overlay.set(which, out);
        return out;
      }
    }
    if (which !== 'A') this.lab.scores(knobs.scale, which === 'E');
    const s = big ? this.topk(which, n, 24, 0) : this.singularValues(which, req, drag);
    if (!s || !s.sv) return null; // the route failed (Inf/NaN in the matrix): no curve, nothing cached
    const out = { key, ...s };
    this.overlay.set(which, out);
    return out;
  }

  /** Top-k singular values by randomized iteration (topk.mjs) of a matrix held in the lab. */
  topk(which, n, k, iters) {
    const lab = this.lab;
    const view = which === 'M' ? lab.M : which === 'A' ? lab.A : lab.S;
    const t = topSingularValues(view, n, k, iters);
    return { sv: t.sv, floor: t.sv[0] * 1e-7, partial: true, route: `top ${t.sv.length} (randomized)`, fro2: t.fro2, sigma1Upper: t.sigma1Upper };
  }

  free() { this.lab?.free(); this.lab = null; this.draftLab?.free(); this.draftLab = null; }
}
