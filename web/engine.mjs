// engine.mjs: the compute layer shared by the page (n ≤ 1024) and the worker (spectra; matrices too
// above n = 1024). It owns one lab of web/attnviz.mjs and recomputes only what a state change
// invalidates: inputs (generator, seed, n, d, std) → softmax reference (scale, causal) → the variant's
// matrix (its knobs). No DOM. Results are plain objects of typed arrays, ready to post to the page.
import { knobsOf, rankCeiling } from './state.mjs';
import { blockSize, downsample, downsampleDiff } from './render/heatmap.mjs';
import { SPECTRAL_KEYS } from './render/readouts.mjs';
import { topSingularValues } from './topk.mjs';
import { spectralReadouts } from './render/spectrum.mjs';

/**
 * Largest n whose heatmaps and plain readouts the page computes itself, in the commit of the input's
 * frame (a few milliseconds); above it the frame worker computes the heatmaps (up to
 * FRAME_WORKER_MAX_N) and the spectrum worker the readouts, so no frame holds tens of milliseconds.
 */
export const MAIN_THREAD_MAX_N = 384;
export const MAIN_READOUTS_MAX_N = MAIN_THREAD_MAX_N;
/** Largest n whose heatmaps the frame worker computes; above it the spectrum worker does (after its spectrum). */
export const FRAME_WORKER_MAX_N = 1024;
/** Bins of the row-entropy histogram over [0, ln n]. */
export const ENTROPY_BINS = 24;
/** Largest n for the full O(n³) spectrum (fast route while dragging up to FULL_DRAG_MAX_N). */
export const FULL_MAX_N = 2048;
export const FULL_DRAG_MAX_N = 1024;
/** Cells per heatmap side: larger n is downsampled by blocks. */
export const HEATMAP_CAP = 256;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * The key of an overlay spectrum ('S' QKᵀ, 'E' exp(QKᵀ), 'A' softmax): it depends on the inputs and
 * the scale (and the mask, for A) only, never on the variant's knobs.
 */
export function overlayKey(st, which) {
  const knobs = knobsOf(st);
  const inKey = `${st.gen}|${st.seed}|${st.n}|${st.d}|${st.std}`;
  return `${inKey}|${knobs.scale}|${which === 'A' ? knobs.causal : ''}|${st.n > FULL_DRAG_MAX_N ? 'topk' : 'full'}`;
}

export class Engine {
  /** @param {object} av the object loadAttnviz() returns */
  constructor(av) {
    this.av = av;
    this.lab = null;
    this.keys = { inputs: null, ref: null, matrix: null };
    this.status = { inputs: null, ref: null, matrix: null };
    this.overlay = new Map(); // 'S' | 'E' | 'A' → {key, sv, floor, partial, fro2}
  }

  /**
   * Bring Q/K/V (always), A (need.ref) and M (need.matrix) up to date with the state; returns what
   * was recomputed. The worker's spectrum by the factor route needs neither A nor M.
   */
  ensure(st, need = { ref: true, matrix: true }) {
    const t0 = now();
    const knobs = knobsOf(st);
    const did = { inputs: false, ref: false, matrix: false };
    if (!this.lab || this.lab.n !== st.n || this.lab.d !== st.d) {
      this.lab?.free();
      this.lab = this.av.lab(st.n, st.d, st.d);
      this.keys = { inputs: null, ref: null, matrix: null };
    }
    const inKey = `${st.gen}|${st.seed}|${st.n}|${st.d}|${st.std}`;
    if (this.keys.inputs !== inKey) {
      this.status.inputs = this.lab.generate(st.gen, st.std, st.seed);
      this.keys = { inputs: inKey, ref: null, matrix: null };
      this.overlay.clear();
      did.inputs = true;
    }
    const refKey = `${knobs.scale}|${knobs.causal}`;
    if (need.ref && this.keys.ref !== refKey) {
      this.status.ref = this.lab.reference(knobs);
      this.keys.ref = refKey;
      did.ref = true;
    }
    const mKey = JSON.stringify(knobs);
    if (need.matrix && this.keys.matrix !== mKey) {
      this.status.matrix = this.lab.matrix(knobs);
      this.keys.matrix = mKey;
      did.matrix = true;
    }
    return { did, ms: now() - t0, knobs };
  }

  /**
   * Readouts that need no spectrum (the spectral keys are left out), with the row-entropy histograms
   * of M and of the softmax A (`entropy_hist`; A's is kept while the inputs, scale and mask stay).
   */
  plainReadouts(st) {
    this.ensure(st);
    const lab = this.lab, knobs = knobsOf(st);
    if (this.status.matrix?.status < 0) return {};
    const r = lab.readouts(knobs, { sv: null, reference: false, tau: st.tau });
    const out = {};
    for (const [k, v] of Object.entries(r)) {
      if (k === 'singular_values' || SPECTRAL_KEYS.some((s) => k === s || k === `${s}_reason`)) continue;
      out[k] = v;
    }
    out.entropy_hist = this.entropyHistograms(st, out.row_entropy_mean);
    return out;
  }

  /**
   * Row-entropy histograms {bins, top: ln n, M: {counts, left, status, message, mean}, A: {…}|null}:
   * M's each time, A's cached per inputs, scale and mask (its mean from the library's readouts of A).
   */
  entropyHistograms(st, meanM, bins = ENTROPY_BINS) {
    const lab = this.lab, causal = knobsOf(st).causal;
    const M = { ...lab.entropyHistogram('M', bins, causal), mean: meanM ?? null };
    const aKey = `${this.keys.inputs}|${this.keys.ref}|${bins}`;
    if (this.aHist?.key !== aKey) {
      let A = null;
      if (this.status.ref?.status >= 0) {
        const h = lab.entropyHistogram('A', bins, causal);
        const ra = lab.readouts({ variant: 'softmax', causal }, { of: 'A', sv: null, tau: st.tau });
        A = { ...h, mean: ra.row_entropy_mean };
      }
      this.aHist = { key: aKey, A };
    }
    return { bins, top: M.top, M, A: this.aHist.A };
  }

  /**
   * Everything the heatmaps and the non-spectral readouts need: downsampled M, A and M − A
   * (Float32Arrays of size×size), the block size, readouts, cost, statuses.
   */
  frame(st, { readouts: withReadouts = true } = {}) {
    const t0 = now();
    const { did } = this.ensure(st);
    const tEnsure = now();
    const n = st.n, b = blockSize(n, HEATMAP_CAP), size = Math.ceil(n / b);
    const mStatus = this.status.matrix;
    const ok = mStatus.status >= 0 && this.status.ref.status >= 0;
    const lab = this.lab;
    const M = ok ? downsample(lab.M, n, b, st.ds) : null;
    // A changes only with the inputs, scale and mask: its downsampled copy is kept between frames
    const aKey = `${this.keys.inputs}|${this.keys.ref}|${b}|${st.ds}`;
    if (this.aCache?.key !== aKey) this.aCache = { key: aKey, A: this.status.ref.status >= 0 ? downsample(lab.A, n, b, st.ds) : null };
    const A = this.aCache.A;
    const tDs = now();
    let D = null;
    if (ok && b > 1 && st.ds === 'mean') { D = new Float32Array(size * size); for (let i = 0; i < D.length; i++) D[i] = M[i] - A[i]; }
    else if (ok) D = downsampleDiff(lab.M, lab.A, n, b, st.ds);
    const tCompute = now();
    const readouts = ok && withReadouts ? this.plainReadouts(st) : null;
    const cost = lab.cost(knobsOf(st));
    return {
      size, b, n, mode: st.ds, M, A, D, readouts, cost, did,
      status: { matrix: mStatus, ref: this.status.ref, inputs: this.status.inputs },
      ms: { matrices: tCompute - t0, total: now() - t0, ensure: tEnsure - t0, ds: tDs - tEnsure, diff: tCompute - tDs },
    };
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
   * iteration. Returns {sv, floor, partial, route, fro2}.
   */
  singularValues(which, st, drag, k = 48, topk = false) {
    const n = st.n;
    if (which === 'M') {
      const knobs = knobsOf(st);
      this.ensure(st, { ref: false, matrix: false });
      const fr = knobs.causal ? null : this.lab.featureDim(knobs, true);
      if (fr && fr.status === 0 && fr.r > 0 && fr.r <= Math.max(64, n / 2)) {
        const f = this.lab.factorSpectrum(knobs);
        if (f && f.status >= 0) return { sv: f.sv, floor: f.floor, partial: false, route: `factors (r = ${f.r})` };
      }
      this.ensure(st); // no factors: the route reads M
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
    return { sv: t.sv, floor: t.sv[0] * 1e-7, partial: true, route: `top ${t.sv.length} (randomized)`, fro2: t.fro2 };
  }

  /**
   * The variant's spectrum and the readouts that need it. Those depend on σ alone, so they are
   * computed here from σ (render/spectrum.mjs, the definitions of product.md §9) rather than by the
   * library's av_readouts, which would re-read all n² entries of M for the plain readouts too.
   */
  spectrum(st, drag) { // the factor route needs neither M nor A: they are computed only when read
    const t0 = now();
    const s = this.singularValues('M', st, drag);
    if (!s) return null;
    const readouts = spectralReadouts(s.sv, s.floor, st.n, { partial: s.partial, fro2: s.fro2 ?? null,
      reason: s.sv ? undefined : `no spectrum: ${s.message}` });
    return { ...s, readouts, ceiling: rankCeiling(st), ms: now() - t0 };
  }

  /** The cache key of an overlay spectrum (see overlayKey below). */
  overlayKey(st, which) { return overlayKey(st, which); }

  /** The cached overlay spectrum for this state, or null. */
  cachedOverlay(st, which) {
    const hit = this.overlay.get(which);
    return hit && hit.key === this.overlayKey(st, which) ? hit : null;
  }

  /** Overlay spectra (QKᵀ, exp(QKᵀ), softmax A), cached per inputs and scale. `which` one of them. */
  overlaySpectrum(st, which, drag) {
    const knobs = knobsOf(st);
    const hit = this.cachedOverlay(st, which);
    if (hit) return hit;
    const key = this.overlayKey(st, which);
    this.ensure(st, { ref: which === 'A', matrix: false });
    const big = st.n > FULL_DRAG_MAX_N;
    if (which === 'S') { // exact at every n by the factor route: σ(scale·Q·Kᵀ), rank ≤ d
      const s = this.scoresSpectrum(knobs.scale);
      if (s) { const out = { key, ...s }; this.overlay.set(which, out); return out; }
    }
    if (which !== 'A') this.lab.scores(knobs.scale, which === 'E');
    const s = big ? this.topk(which, st.n, 24, 0) : this.singularValues(which, st, drag);
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
    return { sv: t.sv, floor: t.sv[0] * 1e-7, partial: true, route: `top ${t.sv.length} (randomized)`, fro2: t.fro2 };
  }

  /** Exact σ(scale·QKᵀ) in O(n·d²) by the library's low-rank route (L = scale·Q, R = K). */
  scoresSpectrum(scale) {
    const lab = this.lab, ex = this.av.exports, n = lab.n, d = lab.d;
    const L = lab.buf('Ls', n * d * 4), R = lab.buf('Rs', n * d * 4);
    const Lv = this.av.f32(L, n * d), Q = lab.Q;
    for (let i = 0; i < n * d; i++) Lv[i] = scale * Q[i];
    this.av.f32(R, n * d).set(lab.K);
    const bytes = ex.av_lowrank_svd_work(n, d) >>> 0;
    const sv = lab.buf('svs', n * 8 + 8);
    const w = lab.buf('work', bytes);
    const st = ex.av_lowrank_singular_values(sv, sv + n * 8, L, R, n, d, w, bytes);
    if (st < 0) return null;
    const out = this.av.f64(sv, n + 1);
    return { sv: out.slice(0, n), floor: out[n], partial: false, route: `factors (r = ${d})` };
  }

  free() { this.lab?.free(); this.lab = null; }
}
