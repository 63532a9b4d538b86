// attnviz.mjs: the only code that touches the WebAssembly module.
//
// Loads build/wasm/attnviz.wasm (SIMD128) or attnviz-scalar.wasm (chosen by a feature probe) as a raw
// reactor module (emcc --no-entry -sSTANDALONE_WASM) in node, the page, a worker or a file:// page,
// and hands out typed-array views on its memory: no copies cross the boundary except where a function
// says it returns a copy. Views go stale when memory grows, so every getter derives a fresh one.
//
//   const av = await loadAttnviz({ simd: 'auto' });
//   const lab = av.lab(256, 64);
//   lab.generate('gaussian', 1.0, 42);
//   const { status } = lab.matrix({ variant: 'focused', p: 3 });
//   lab.M;                       // Float32Array view, n×n row-major
//   lab.readouts({ variant: 'focused', p: 3 });

// The standard 31-byte probe: a function using a v128 instruction validates only where SIMD exists.
const SIMD_PROBE = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10,
  1, 8, 0, 65, 0, 253, 15, 253, 98, 11);

/** @returns {boolean} true where this engine validates WebAssembly SIMD128. */
export function simdSupported() {
  try { return WebAssembly.validate(SIMD_PROBE); } catch { return false; }
}

// beside this module by default (names in variables: the build copies the files, bundlers need not)
const SIMD_FILE = './attnviz.wasm';
const SCALAR_FILE = './attnviz-scalar.wasm';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

async function bytesFrom(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  if (typeof source === 'string' && source.startsWith('AGFzbQ')) { // base64 of "\0asm"
    const bin = atob(source);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  const url = source instanceof URL ? source : new URL(source, import.meta.url);
  if (isNode && url.protocol === 'file:') {
    const fsModule = 'node:fs/promises'; // a variable, so bundlers leave this node-only branch alone
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attnviz: cannot load ${url} (HTTP ${response.status})`);
  return response.arrayBuffer();
}

/**
 * Instantiate the module.
 * @param {object} [opts]
 * @param {'auto'|boolean} [opts.simd='auto'] which build: probe, force SIMD, or force scalar
 * @param {URL|string|ArrayBuffer|Uint8Array|WebAssembly.Module} [opts.source] the module itself
 *        (overrides simd); a base64 string starting 'AGFzbQ' works for single-file pages
 * @param {URL|string} [opts.simdUrl] where the SIMD build lives (default: ./attnviz.wasm beside this file)
 * @param {URL|string} [opts.scalarUrl] where the scalar build lives (default: ./attnviz-scalar.wasm)
 */
export async function loadAttnviz(opts = {}) {
  const wantSimd = opts.simd === 'auto' || opts.simd === undefined ? simdSupported() : !!opts.simd;
  const source = opts.source ?? (wantSimd
    ? (opts.simdUrl ?? new URL(SIMD_FILE, import.meta.url))
    : (opts.scalarUrl ?? new URL(SCALAR_FILE, import.meta.url)));
  const bytes = await bytesFrom(source);
  const module = bytes instanceof WebAssembly.Module ? bytes : await WebAssembly.compile(bytes);
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== 'function') continue;
    imports[imp.module] ??= {};
    imports[imp.module][imp.name] = imp.name === 'proc_exit'
      ? (code) => { throw new Error(`attnviz: module exited with ${code}`); }
      : () => 0; // emscripten_notify_memory_growth and friends: nothing to do, views are re-derived
  }
  const instance = await WebAssembly.instantiate(module, imports);
  instance.exports._initialize?.();
  // with an explicit source the caller says which build it is (opts.simd), else the probe decided
  const usesSimd = opts.source ? opts.simd !== false && simdSupported() : wantSimd;
  return new Attnviz(instance.exports, usesSimd);
}

// ----------------------------------------------------------------------------------------------------
// knobs

const KNOBS = ['variant', 'causal', 'scale', 'p', 'dwc_kernel', 's', 'ef_kind', 'ef_shared', 'm', 'orthogonal',
  'seed', 'order', 'N', 'landmarks', 'iters']; // the order of enum av_knob
const EF_KINDS = { gaussian: 0, mean: 1 };
const ROUTES = { fast: 0, accurate: 1 };

/** Defaults the page shows (zeros mean "the library's default", resolved against n and d). */
export const DEFAULT_KNOBS = Object.freeze({
  variant: 'softmax', causal: false, scale: 0, p: 3, dwc_kernel: 0, s: 0, ef_kind: 'gaussian',
  ef_shared: false, m: 256, orthogonal: true, seed: 1, order: 2, N: 2, landmarks: 0, iters: 6,
});

class Attnviz {
  constructor(exports, simd) {
    this.exports = exports;
    this.memory = exports.memory;
    this.simd = simd;
    const names = [];
    for (let v = 0; ; v++) {
      const p = exports.av_variant_name(v);
      if (!p) break;
      names.push(this.cstring(p));
    }
    /** @type {string[]} variant names, index = enum av_variant */
    this.variantNames = names;
    const gens = [];
    for (let g = 0; ; g++) {
      const p = exports.av_generator_name(g);
      if (!p) break;
      gens.push(this.cstring(p));
    }
    /** @type {string[]} generator names, index = enum av_generator */
    this.generatorNames = gens;
  }

  /** A NUL-terminated string in wasm memory. */
  cstring(ptr) {
    const bytes = new Uint8Array(this.memory.buffer, ptr);
    let end = 0;
    while (bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(0, end));
  }

  /** One sentence for a status code. */
  statusString(code) { return this.cstring(this.exports.av_status_string(code)); }

  malloc(bytes) {
    const p = this.exports.malloc(Math.max(8, bytes));
    if (!p) throw new RangeError(`attnviz: out of wasm memory allocating ${bytes} bytes`);
    return p;
  }
  free(p) { if (p) this.exports.free(p); }
  f32(ptr, len) { return new Float32Array(this.memory.buffer, ptr, len); }
  f64(ptr, len) { return new Float64Array(this.memory.buffer, ptr, len); }
  i32(ptr, len) { return new Int32Array(this.memory.buffer, ptr, len); }

  variantId(name) {
    const id = typeof name === 'number' ? name : this.variantNames.indexOf(name);
    if (id < 0 || id >= this.variantNames.length) throw new RangeError(`attnviz: unknown variant "${name}"`);
    return id;
  }

  /** A lab: buffers for one (n, d, dv) problem in wasm memory. Call free() when done. */
  lab(n, d, dv = d) { return new Lab(this, n, d, dv); }
}

// ----------------------------------------------------------------------------------------------------
// the lab: Q, K, V, the variant's matrix M, the softmax reference A, the scores S, spectra, readouts

class Lab {
  constructor(av, n, d, dv) {
    if (!(n >= 1 && d >= 1 && dv >= 1)) throw new RangeError('attnviz: n, d and dv must be ≥ 1');
    this.av = av;
    this.n = n; this.d = d; this.dv = dv;
    this.bufs = new Map(); // name → {ptr, bytes}
    this.prm = av.malloc(av.exports.av_params_size());
    this.Qp = this.buf('Q', n * d * 4);
    this.Kp = this.buf('K', n * d * 4);
    this.Vp = this.buf('V', n * dv * 4);
  }

  /** A named buffer of at least `bytes` bytes (grown, never shrunk). Returns its pointer. */
  buf(name, bytes) {
    const b = this.bufs.get(name);
    if (b && b.bytes >= bytes) return b.ptr;
    if (b) this.av.free(b.ptr);
    const ptr = this.av.malloc(bytes);
    this.bufs.set(name, { ptr, bytes });
    return ptr;
  }
  has(name) { return this.bufs.has(name); }

  get Q() { return this.av.f32(this.Qp, this.n * this.d); }
  get K() { return this.av.f32(this.Kp, this.n * this.d); }
  get V() { return this.av.f32(this.Vp, this.n * this.dv); }
  /** The variant's matrix from the last matrix() call (n×n). */
  get M() { return this.view('M'); }
  /** The softmax reference from the last reference() call (n×n). */
  get A() { return this.view('A'); }
  /** The scores from the last scores() call (n×n). */
  get S() { return this.view('S'); }
  /** The output from the last attend()/linear() call (n×dv). */
  get O() { return this.av.f32(this.buf('O', this.n * this.dv * 4), this.n * this.dv); }
  view(name) {
    const b = this.bufs.get(name);
    return b ? this.av.f32(b.ptr, this.n * this.n) : null;
  }

  result(status) { return { status, message: this.av.statusString(status) }; }

  /** Write knobs into the wasm av_params. Unknown keys throw (URL parameters are data, not code). */
  setKnobs(knobs = {}) {
    const ex = this.av.exports;
    const k = { ...DEFAULT_KNOBS, ...knobs };
    let st = ex.av_params_default(this.prm, this.av.variantId(k.variant));
    if (st) return st;
    for (let i = 1; i < KNOBS.length; i++) {
      const key = KNOBS[i];
      let v = k[key];
      if (key === 'ef_kind') v = typeof v === 'string' ? EF_KINDS[v] : v;
      if (typeof v === 'boolean') v = v ? 1 : 0;
      if (typeof v !== 'number' || !Number.isFinite(v)) return -3; // AV_ERR_KNOB
      st = ex.av_params_set(this.prm, i, v);
      if (st) return st;
    }
    if (k.hedgehog_w) {
      const cols = k.hedgehog_cols ?? Math.round(k.hedgehog_w.length / this.d);
      const ptr = this.buf('W', this.d * cols * 4);
      this.av.f32(ptr, this.d * cols).set(k.hedgehog_w.subarray(0, this.d * cols));
      st = ex.av_params_set_hedgehog(this.prm, ptr, cols);
    }
    return st;
  }

  work(bytes) { return this.buf('work', bytes >>> 0); }

  /** Fill Q, K, V from a generator ('gaussian', 'clustered', 'local', 'lowrank', 'sink'). */
  generate(gen, std = 1, seed = 1) {
    const id = typeof gen === 'number' ? gen : this.av.generatorNames.indexOf(gen);
    if (id < 0) return this.result(-4);
    return this.result(this.av.exports.av_generate(this.Qp, this.Kp, this.Vp, this.n, this.d, id, std, seed >>> 0));
  }

  /** The variant's n×n matrix (or effective map) into M. */
  matrix(knobs) {
    const ex = this.av.exports;
    let st = this.setKnobs(knobs);
    if (st) return this.result(st);
    const bytes = ex.av_matrix_work(this.prm, this.n, this.d) >>> 0;
    const M = this.buf('M', this.n * this.n * 4);
    const w = this.work(bytes);
    st = ex.av_matrix(M, this.Qp, this.Kp, this.n, this.d, this.prm, w, bytes);
    return this.result(st);
  }

  /** Softmax on the same Q, K with the knobs' scale and causal flag, into A. */
  reference(knobs = {}) {
    const ex = this.av.exports;
    let st = this.setKnobs({ variant: 'softmax', scale: knobs.scale ?? 0, causal: !!knobs.causal });
    if (st) return this.result(st);
    const bytes = ex.av_matrix_work(this.prm, this.n, this.d) >>> 0;
    const A = this.buf('A', this.n * this.n * 4);
    const w = this.work(bytes);
    st = ex.av_matrix(A, this.Qp, this.Kp, this.n, this.d, this.prm, w, bytes);
    return this.result(st);
  }

  /** scale·QKᵀ (applyExp false) or exp(scale·QKᵀ − max) (true), into S. */
  scores(scale = 0, applyExp = false) {
    const S = this.buf('S', this.n * this.n * 4);
    return this.result(this.av.exports.av_scores(S, this.Qp, this.Kp, this.n, this.d, scale, applyExp ? 1 : 0));
  }

  /** Output O = M·V by the quadratic path (M is written too). */
  attend(knobs) {
    const ex = this.av.exports;
    let st = this.setKnobs(knobs);
    if (st) return this.result(st);
    const bytes = ex.av_attend_work(this.prm, this.n, this.d, this.dv) >>> 0;
    const M = this.buf('M', this.n * this.n * 4);
    const O = this.buf('O', this.n * this.dv * 4);
    const w = this.work(bytes);
    st = ex.av_attend(O, M, this.Qp, this.Kp, this.Vp, this.n, this.d, this.dv, this.prm, w, bytes);
    return this.result(st);
  }

  /** Output by the linear-time path (never forms n×n), into O. */
  linear(knobs) {
    const ex = this.av.exports;
    let st = this.setKnobs(knobs);
    if (st) return this.result(st);
    const bytes = ex.av_linear_work(this.prm, this.n, this.d, this.dv) >>> 0;
    const O = this.buf('O', this.n * this.dv * 4);
    const w = this.work(bytes);
    st = ex.av_linear(O, this.Qp, this.Kp, this.Vp, this.n, this.d, this.dv, this.prm, w, bytes);
    return this.result(st);
  }

  /** Feature dimension (or rank ceiling of the factors) of these knobs: {status, r}. */
  featureDim(knobs, factors = false) {
    const ex = this.av.exports;
    const st = this.setKnobs(knobs);
    if (st) return { ...this.result(st), r: null };
    const rp = this.buf('r', 8);
    const s = (factors ? ex.av_factor_rank : ex.av_feature_dim)(rp, this.prm, this.n, this.d);
    const r = this.av.i32(rp, 1)[0];
    return { ...this.result(s), r: s === 0 || s === -8 ? r : null };
  }

  /**
   * Singular values of M, A or S (descending) by the fast or accurate route.
   * @returns {{status:number, message:string, sv: Float64Array|null, floor:number|null}} sv is a copy, null
   *   when the route failed (e.g. M holds Inf after an overflow).
   */
  spectrum(which = 'M', route = 'fast') {
    const ex = this.av.exports;
    const src = this.bufs.get(which);
    if (!src) throw new Error(`attnviz: no ${which} computed yet`);
    const r = ROUTES[route] ?? route;
    const bytes = ex.av_svd_work(this.n, r) >>> 0;
    const sv = this.buf('sv', this.n * 8 + 8);
    const w = this.work(bytes);
    const st = ex.av_singular_values(sv, sv + this.n * 8, src.ptr, this.n, r, w, bytes);
    if (st < 0) return { ...this.result(st), sv: null, floor: null }; // the buffer holds an older spectrum
    const out = this.av.f64(sv, this.n + 1);
    return { ...this.result(st), sv: out.slice(0, this.n), floor: out[this.n] };
  }

  /** Exact spectrum of a low-rank variant from its factors in O(n·r²), or null where it has none. */
  factorSpectrum(knobs) {
    const ex = this.av.exports;
    const fr = this.featureDim(knobs, true);
    if (fr.status !== 0) return null;
    const r = fr.r, n = this.n;
    const L = this.buf('L', n * r * 4), R = this.buf('R', n * r * 4);
    let bytes = ex.av_factors_work(this.prm, n, this.d) >>> 0;
    let st = ex.av_factors(L, R, this.Qp, this.Kp, n, this.d, this.prm, this.work(bytes), bytes);
    if (st < 0) return null;
    bytes = ex.av_lowrank_svd_work(n, r) >>> 0;
    const sv = this.buf('svf', n * 8 + 8);
    st = ex.av_lowrank_singular_values(sv, sv + n * 8, L, R, n, r, this.work(bytes), bytes);
    if (st < 0) return null;
    const out = this.av.f64(sv, n + 1);
    return { ...this.result(st), sv: out.slice(0, n), floor: out[n], r };
  }

  /**
   * Every readout of product.md §9 for the matrix M from the last matrix() call.
   * opts.sv / opts.floor: a spectrum already computed (else the fast route runs); opts.sv = null skips
   *   the spectrum (the spectral readouts are then null with a reason);
   * opts.reference: false when A already holds the softmax reference for these knobs;
   * opts.tau: the sparsity_tau threshold; opts.route: 'fast' | 'accurate';
   * opts.of: 'A' reads the softmax reference from the last reference() call instead of M (no error
   *   readouts then: they compare with A itself).
   * @returns {object} keyed by the JSON names; undefined readouts are null with `<key>_reason`.
   */
  readouts(knobs, opts = {}) {
    const ex = this.av.exports, n = this.n, k = { ...DEFAULT_KNOBS, ...knobs };
    const of = opts.of === 'A' ? 'A' : 'M';
    if (!this.bufs.has(of)) throw new Error(`attnviz: call ${of === 'A' ? 'reference' : 'matrix'}() before readouts()`);
    let sv = opts.sv, floor = opts.floor ?? 0;
    if (sv === undefined) ({ sv, floor } = this.spectrum(of, opts.route ?? 'fast')); // null when it failed
    const isSoftmax = of === 'A' || this.av.variantId(k.variant) === 0;
    if (!isSoftmax && opts.reference !== false) this.reference(k);
    let svp = 0;
    if (sv) {
      svp = this.buf('svr', n * 8);
      this.av.f64(svp, n).set(sv);
    }
    const vals = this.buf('vals', 64 * 8), reasons = this.buf('reasons', 64 * 4);
    const bytes = ex.av_readouts_work(n, this.dv) >>> 0;
    const w = this.work(bytes);
    // reference() rewrote the params; av_readouts takes causal directly, so they need no reset
    const A = isSoftmax ? 0 : this.bufs.get('A').ptr;
    const st = ex.av_readouts(vals, reasons, this.bufs.get(of).ptr, svp, floor, A, this.Vp, n, this.dv,
      k.causal ? 1 : 0, opts.tau ?? 0, w, bytes);
    const out = { status: st, message: this.av.statusString(st) };
    const names = this.readoutNames();
    const count = names.length;
    const v = this.av.f64(vals, count), r = this.av.i32(reasons, count);
    for (let i = 0; i < count; i++) {
      const key = names[i];
      if (r[i] !== 0 || !Number.isFinite(v[i])) {
        out[key] = null;
        out[`${key}_reason`] = this.reasonString(r[i] || 7);
      } else out[key] = v[i];
    }
    out.singular_values = sv ?? null;
    out.noise_floor = sv ? floor : null;
    return out;
  }

  /** The readouts' JSON names in the library's order (decoded once). */
  readoutNames() {
    if (!this.av._readoutNames) {
      const names = [];
      for (let i = 0, p; (p = this.av.exports.av_readout_name(i)); i++) names.push(this.av.cstring(p));
      this.av._readoutNames = names;
    }
    return this.av._readoutNames;
  }
  readoutCount() { return this.readoutNames().length; }

  /** The sentence for a reason code (decoded once per code). */
  reasonString(code) {
    const cache = (this.av._reasons ??= new Map());
    if (!cache.has(code)) cache.set(code, this.av.cstring(this.av.exports.av_reason_string(code)));
    return cache.get(code);
  }

  /** Truncated-SVD error curve e(r), r = 0..n, from singular values (a copy). */
  errorCurve(sv) {
    const n = sv.length;
    const svp = this.buf('svr', n * 8), e = this.buf('curve', (n + 1) * 8);
    this.av.f64(svp, n).set(sv);
    const st = this.av.exports.av_error_curve(e, svp, n);
    return st ? null : this.av.f64(e, n + 1).slice();
  }

  /**
   * Row-entropy histogram of M or A ('M' | 'A', the last matrix()/reference() result): counts of the
   * per-row entropies (allowed entries normalised to sum 1; j ≤ i when causal) in `bins` equal-width
   * bins over [0, ln n]. Rows with a negative entry or a zero sum are left out: `left` counts them and
   * the status is AV_WARN_ZERO_ROW (1), with its sentence in `message`.
   * @returns {{status:number, message:string, counts:Int32Array|null, bins:number, top:number, left:number}}
   *          counts is a copy (null on an error status).
   */
  entropyHistogram(which = 'M', bins = 24, causal = false) {
    const src = this.bufs.get(which);
    if (!src) throw new Error(`attnviz: no ${which} computed yet`);
    const p = this.buf('hist', bins * 4);
    const st = this.av.exports.av_row_entropy_hist(p, bins, src.ptr, this.n, causal ? 1 : 0);
    const counts = st < 0 ? null : this.av.i32(p, bins).slice();
    let rows = 0;
    if (counts) for (let i = 0; i < bins; i++) rows += counts[i];
    return { ...this.result(st), counts, bins, top: Math.log(this.n), left: counts ? this.n - rows : null };
  }

  /** Cost counts {quad_madds, quad_bytes, linear_madds, linear_bytes} (linear null where none). */
  cost(knobs) {
    const st = this.setKnobs(knobs);
    if (st) return null;
    const p = this.buf('cost', 4 * 8);
    if (this.av.exports.av_cost(p, this.prm, this.n, this.d, this.dv)) return null;
    const c = this.av.f64(p, 4);
    return { quad_madds: c[0], quad_bytes: c[1], linear_madds: c[2] < 0 ? null : c[2],
      linear_bytes: c[3] < 0 ? null : c[3] };
  }

  free() {
    for (const { ptr } of this.bufs.values()) this.av.free(ptr);
    this.bufs.clear();
    this.av.free(this.prm);
    this.prm = 0;
  }
}
